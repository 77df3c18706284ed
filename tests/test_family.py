"""The registry of mechanism families (ldpkit.family): declarations, look-ups, discovery, context.

* every builtin family is declared once, in its own module, with the names, papers, classes and
  report kinds the rest of the kit reads; each class a report file may name is some family's;
* registration refuses a taken name or alias and a conflicting codec, ``replace=True`` replaces,
  and a family's codec leaves with the last family that declares it;
* the order of :func:`~ldpkit.family.families` is ``(order, name)``, whatever the order of registration;
* discovery imports a module of the package that registers a family (and only such a module)
  although nothing imports it;
* :meth:`~ldpkit.family.Family.member` passes only the context a family declares;
  :func:`~ldpkit.family.context_of` states what a promise holds.
"""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import run_process
import ldpkit
from ldpkit import GRR, OUE, ChannelOracle, UnaryEncoding, contracts
from ldpkit.family import (
    CONTEXT_KEYS,
    Family,
    context_of,
    families,
    family_of,
    get_family,
    register_family,
    unregister_family,
)
from ldpkit.reports import ReportCodec, registered_codecs

BUILTIN = {
    "GRR": ("wang2017locally", "ldpkit.grr"), "RAPPOR": ("erlingsson2014rappor", "ldpkit.unary"),
    "OUE": ("wang2017locally", "ldpkit.unary"), "UE": ("wang2017locally", "ldpkit.unary"),
    "OLH": ("wang2017locally", "ldpkit.olh"), "HR": ("acharya2019hadamard", "ldpkit.hadamard"),
    "FHR": ("zhao2022fldp", "ldpkit.hadamard"), "uRR": ("murakami2019utility", "ldpkit.urr"),
    "IPRR": ("li2023ipldp", "ldpkit.iprr"), "IDUE-opt0": ("gu2020idldp", "ldpkit.idue.mechanism"),
    "IDUE-opt1": ("gu2020idldp", "ldpkit.idue.mechanism"), "IDUE-opt2": ("gu2020idldp", "ldpkit.idue.mechanism"),
    "LIP-kary": ("jiang2018lip", "ldpkit.lip.kary"), "LIP-binary": ("jiang2018lip", "ldpkit.lip.binary_optimal"),
    "OUE-PS": ("wang2018locally", "ldpkit.idue.itemsets"), "RAPPOR-PS": ("wang2018locally", "ldpkit.idue.itemsets"),
    "IDUE-PS": ("gu2020idldp", "ldpkit.idue.itemsets"), "Channel": ("kairouz2016discrete", "ldpkit.channel_oracle"),
    "SHE": ("wang2017locally", "ldpkit.histogram"), "THE": ("wang2017locally", "ldpkit.histogram"),
    "HM": ("cormode2021frequency", "ldpkit.hadamard_mechanism"), "uRAP": ("murakami2019utility", "ldpkit.urap"),
    "SS": ("ye2018optimal", "ldpkit.subset"), "ID-SS": ("ye2018optimal", "ldpkit.subset"),
    "BLH": ("wang2017locally", "ldpkit.blh"), "FLH": ("cormode2021frequency", "ldpkit.flh"),
    "CMS": ("apple2017learning", "ldpkit.sketch"), "HCMS": ("apple2017learning", "ldpkit.sketch"),
}


def test_every_builtin_family_is_declared_once_in_its_module() -> None:
    fams = {f.name: f for f in families()}
    assert set(BUILTIN) <= set(fams)
    for name, (paper, module) in BUILTIN.items():
        fam = fams[name]
        assert fam.paper == paper, name
        assert fam.examples.__module__ == module, (name, fam.examples.__module__)  # declared beside its class
        assert all(type(m) is fam.mechanism for m in fam.examples()), name
        assert fam.budget == (name not in ("UE", "Channel")), name
        assert (fam.audit is None) == bool(fam.audit_skip), name  # audited, or the reason it is not
    # calibration sees the budget families in the order the synthesis tables have always shown
    assert [f.name for f in families(budget=True)] == [
        "GRR", "RAPPOR", "OUE", "SHE", "THE", "OLH", "BLH", "FLH", "CMS", "HCMS", "SS", "HR", "HM", "FHR", "uRR", "uRAP",
        "IPRR", "IDUE-opt0", "IDUE-opt1", "IDUE-opt2", "ID-SS", "LIP-kary", "LIP-binary", "OUE-PS", "RAPPOR-PS", "IDUE-PS"]
    assert [f.name for f in families(inputs="itemsets")] == ["OUE-PS", "RAPPOR-PS", "IDUE-PS"]
    assert get_family("KRR").name == "GRR" and get_family("SUE").name == "RAPPOR" and get_family("IDUE").name == "IDUE-opt0"


def test_each_family_states_its_own_sweeps() -> None:
    """The budget sweeps the robustness tests run, each stated by the family it builds."""
    sweeps = {f.name: [s.name for s in f.budget_sweeps()] for f in families() if f.name in BUILTIN}
    assert sweeps == {
        "GRR": ["GRR"], "RAPPOR": ["RAPPOR"], "OUE": ["OUE"], "UE": ["UnaryEncoding"], "OLH": ["OLH", "OLH(g=3)"],
        "HR": ["HR"], "FHR": ["FHR"], "uRR": ["URR"], "IPRR": ["IPRR"], "IDUE-opt0": ["IDUE-opt0"],
        "IDUE-opt1": ["IDUE-opt1"], "IDUE-opt2": ["IDUE-opt2"], "LIP-kary": [], "LIP-binary": ["BinaryRR-LIP"],
        "OUE-PS": ["OUE-PS"], "RAPPOR-PS": ["RAPPOR-PS"], "IDUE-PS": ["IDUE-PS"], "Channel": ["ChannelOracle"],
        "SHE": ["SHE"], "THE": ["THE"], "HM": ["HM"], "uRAP": ["URAP"],
        "SS": ["SS", "SS(k=2)"], "ID-SS": ["ID-SS"],
        "BLH": ["BLH"], "FLH": ["FLH"], "CMS": ["CMS"], "HCMS": ["HCMS"]}


def test_every_family_states_the_report_kind_of_its_members() -> None:
    kinds = {c.kind for c in registered_codecs()}
    for fam in families():
        assert fam.reports in kinds, fam.name
        assert fam.codec is None or fam.codec in registered_codecs(), fam.name
    assert {c.kind for f in families() if f.codec is not None for c in [f.codec]} == {
        "unary", "hashed", "pair", "histogram", "coefficient", "subset", "sketch", "hadamard-sketch"}


def test_family_of_is_the_family_declaring_the_exact_class() -> None:
    assert family_of(GRR(3, 1.0)).name == "GRR" and family_of(OUE(3, 1.0)).name == "OUE"
    assert family_of(UnaryEncoding([0.6, 0.7], [0.2, 0.3])).name == "UE"  # OUE is a subclass: not its family
    # a class several families declare: the general one, then the first in order
    assert family_of(ChannelOracle([[0.6, 0.4], [0.4, 0.6]])).name == "Channel"
    assert family_of(get_family("IDUE-opt2").examples()[0]).name == "IDUE-opt0"

    class Sub(GRR):
        pass

    assert family_of(Sub(3, 1.0)) is None and family_of("GRR") is None


def _family(name: str, **kwargs: Any) -> Family:
    return Family(name, "none", GRR, lambda: (GRR(3, 1.0),), at_budget=lambda d, t: GRR(d, t), **kwargs)


def test_registration_refuses_taken_names_and_replace_replaces() -> None:
    with pytest.raises(ValueError, match="'GRR' is already registered"):
        register_family(_family("GRR"))
    with pytest.raises(ValueError, match="'KRR' of family 'GRR2' is already an alias of family 'GRR'"):
        register_family(_family("GRR2", aliases=("KRR",)))
    with pytest.raises(ValueError, match="'OUE' of family 'GRR3' is already a family"):
        register_family(_family("GRR3", aliases=("OUE",)))
    first = register_family(_family("t-family", aliases=("t-alias",)))
    try:
        assert get_family("t-alias") is first
        second = register_family(_family("t-family", description="again"), replace=True)
        assert get_family("t-family") is second
        with pytest.raises(ValueError, match="unknown mechanism family 't-alias'"):
            get_family("t-alias")  # the replaced family's aliases went with it
    finally:
        unregister_family("t-family")
    with pytest.raises(ValueError, match="unknown mechanism family 't-family'"):
        get_family("t-family")
    with pytest.raises(TypeError, match="needs a Family"):
        register_family("GRR")  # type: ignore[arg-type]


def test_the_order_of_families_does_not_depend_on_registration() -> None:
    names = ["t-b", "t-a", "t-c"]
    for name, order in zip(names, (5, 5, 1)):
        register_family(_family(name, order=order))
    try:
        listed = [f.name for f in families() if f.name.startswith("t-")]
        assert listed == ["t-c", "t-a", "t-b"]
    finally:
        for name in names:
            unregister_family(name)


class TinyReports(np.ndarray):
    """Reports of a report type of its own, for the codec tests."""


def _codec() -> ReportCodec:
    return ReportCodec("t-kind", TinyReports, (("report", "<i8", True),), lambda r: {},
                       lambda r: (np.asarray(r),), lambda cols, meta, src: cols[0].view(TinyReports))


def test_a_codec_is_registered_with_its_family_and_leaves_with_the_last() -> None:
    codec = _codec()
    register_family(_family("t-one", reports="t-kind", codec=codec))
    register_family(_family("t-two", reports="t-kind", codec=codec))
    try:
        assert codec in registered_codecs()
        with pytest.raises(ValueError, match="other than the registered one"):
            register_family(_family("t-three", reports="t-kind", codec=_codec()))
        unregister_family("t-one")
        assert codec in registered_codecs()  # t-two still declares it
    finally:
        unregister_family("t-two")
    assert codec not in registered_codecs()
    with pytest.raises(ValueError, match="introduces the 't-kind' codec but states reports='item'"):
        _family("t-four", codec=codec)


@pytest.mark.parametrize("field, value, match", [
    ("name", "", "non-empty name"),
    ("mechanism", GRR(3, 1.0), "the class of its members"),
    ("examples", [GRR(3, 1.0)], "callable returning instances"),
    ("inputs", "sets", "'items' or 'itemsets'"),
    ("at_budget", 3, "at_budget of family 'x' must be callable"),
    ("context", ("budget",), "context of family 'x' must be a tuple of"),
    ("lo", 0.0, "0 < lo < hi"),
    ("aliases", "X", "tuple of non-empty strings"),
    ("order", True, "order of family 'x' must be an integer"),
])
def test_a_bad_declaration_is_refused_by_field(field: str, value: Any, match: str) -> None:
    args: dict[str, Any] = {"name": "x", "paper": "none", "mechanism": GRR, "examples": lambda: ()}
    args[field] = value
    with pytest.raises(ValueError, match=match):
        Family(**args)


def test_member_passes_only_the_declared_context() -> None:
    urr = get_family("uRR")
    full = context_of(contracts.uldp(4, 1.0, sensitive=[1]))
    assert urr.member(4, 1.0, **full, prior=[0.25] * 4, g=3).sensitive_items.tolist() == [1]
    assert urr.member(4, 1.0, sensitive=None).sensitive_items.tolist() == [0, 1, 2, 3]  # None: the default
    with pytest.raises(ValueError, match="unknown context key 'priors'"):
        urr.member(4, 1.0, priors=[0.25] * 4)
    with pytest.raises(ValueError, match="'UE' is not indexed by a budget"):
        get_family("UE").member(3, 1.0)
    with pytest.raises(ValueError, match="IPRR is built from per-item budgets"):
        get_family("IPRR").member(3, 1.0)
    assert get_family("OLH").member(4, 1.0, g=3).g == 3


def test_context_of_states_what_the_promise_holds() -> None:
    e = [0.5, 1.0, 2.0]
    assert set(context_of(contracts.ldp(3, 1.0))) == {"budgets"}
    avg = context_of(contracts.idldp(e, "average"))
    assert avg["rule"] == "average" and avg["budgets"].tolist() == e
    assert context_of(contracts.lip(1.0, [0.5, 0.3, 0.2]))["prior"].tolist() == [0.5, 0.3, 0.2]
    assert context_of(contracts.fldp(3, 1.0, 0.25))["alpha"] == 0.25
    assert context_of(contracts.ipldp([0.5, np.inf, 1.0]))["sensitive"].tolist() == [0, 2]
    assert set().union(*(context_of(c) for c in (contracts.idldp(e, "average"), contracts.lip(1.0, [0.5, 0.5]),
                                                contracts.fldp(3, 1.0, 0.25), contracts.uldp(3, 1.0, [0])))) \
        <= set(CONTEXT_KEYS)
    with pytest.raises(TypeError, match="Contract"):
        context_of({"epsilon": 1.0})  # type: ignore[arg-type]


_DISCOVER = """
import sys
import ldpkit
ldpkit.__path__.append(sys.argv[1])
from ldpkit.family import families
names = [f.name for f in families()]
print("t-discovered" in names, "t-in-subpackage" in names, "ldpkit.t_mentions" in sys.modules)
"""


def test_discovery_imports_the_modules_that_register_a_family(tmp_path: Path) -> None:
    """A module of the package that nobody imports is found by the first look-up; one that only
    mentions the call in its documentation is not imported."""
    declare = textwrap.dedent("""
        from ldpkit import GRR
        from ldpkit.family import Family, register_family

        register_family(Family({name!r}, "none", GRR, lambda: (GRR(3, 1.0),)))
    """)
    (tmp_path / "t_family.py").write_text(declare.format(name="t-discovered"))
    (tmp_path / "t_package").mkdir()
    (tmp_path / "t_package" / "__init__.py").write_text("")
    (tmp_path / "t_package" / "declared.py").write_text(declare.format(name="t-in-subpackage"))
    (tmp_path / "t_mentions.py").write_text('"""Example:\n\n>>> register_family(...)\n"""\n')
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    out = run_process([sys.executable, "-c", _DISCOVER, str(tmp_path)], capture_output=True, text=True, env=env,
                      check=True).stdout
    assert out.split() == ["True", "True", "False"]


def test_discovery_has_imported_every_module_that_registers() -> None:
    families()
    package = Path(ldpkit.__file__).parent
    for path in package.rglob("*.py"):
        if "register_family(" in path.read_text() and path.name != "family.py":
            lines = [line for line in path.read_text().splitlines() if line.lstrip().startswith("register_family(")]
            if lines:
                module = ".".join(("ldpkit", *path.relative_to(package).with_suffix("").parts))
                assert module in sys.modules, module
