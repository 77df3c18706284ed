"""Promises of any registered notion: ``contracts.promise`` and ``contracts.parse`` (the grammar the command line uses).

* Every registered notion can be stated from text, its own parameters written in the text and
  the shared data given by the caller; the cases are built from the registry, so a notion
  registered later is covered with no edit here.
* The builtin constructors are ``promise`` with their arguments spelled out (same guarantees,
  same names).
* Every refusal is one line naming what is wrong, and a missing datum names where the caller
  reads it from (the command line's flag).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ldpkit import GRR, OUE, URR, accountant, contracts
from ldpkit.accountant import SHARED_PARAMETERS

D = 4
#: a value of every shared datum on D items
DATA: dict[str, Any] = {
    "budgets": np.array([0.5, 1.0, 2.0, 2.0]),
    "sensitive": np.array([0, 1]),
    "prior": np.array([0.1, 0.2, 0.3, 0.4]),
    "matrix": accountant.pairwise_budgets(D, budgets=[0.5, 1.0, 2.0, 2.0], r="average"),
}


def _text_of(value: Any) -> str:
    return repr(float(value)) if isinstance(value, (int, float, np.floating)) else str(value)


def spec_of(notion: accountant.Notion[Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """``(text, data, params)`` of a promise of ``notion``: its parameters as it states itself at one budget."""
    stated = notion.stated_at(D, 1.0, sensitive=list(DATA["sensitive"]), prior=DATA["prior"], alpha=0.5)
    assert stated is not None
    in_text = {k: v for k, v in stated.params.items() if k not in SHARED_PARAMETERS}
    data = {k: DATA[k] for k in stated.params if k in SHARED_PARAMETERS}
    if notion.name == "ipldp":  # its budgets are stated with inf off the sensitive items
        data = {"budgets": np.where(np.isin(np.arange(D), DATA["sensitive"]), DATA["budgets"], np.inf)}
    text = notion.name + (":" + ",".join(f"{k}={_text_of(v)}" for k, v in in_text.items()) if in_text else "")
    return text, data, {**in_text, **data}


@pytest.mark.parametrize("name", accountant.notions())
def test_every_registered_notion_is_parsed_from_text(name: str) -> None:
    notion = accountant.get_notion(name)
    text, data, params = spec_of(notion)
    parsed = contracts.parse(text, d=D, **data)
    built = contracts.promise(name, D, **params)
    assert parsed.guarantee == built.guarantee and parsed.name == built.name and parsed.d == D
    # the display name, any case, hyphens or underscores, names it too
    assert contracts.parse(notion.display.upper().replace("-", "_") + text[len(name):], d=D, **data).guarantee == \
        built.guarantee
    # it is a working promise: checked exactly on a mechanism
    assert isinstance(parsed.satisfied(GRR(D, 1.0)), bool)


def test_the_examples_of_the_grammar() -> None:
    assert contracts.parse("ldp:epsilon=1", d=3).guarantee == contracts.ldp(3, 1.0).guarantee
    assert contracts.parse("LDP: eps = 1", d=3).guarantee == contracts.ldp(3, 1.0).guarantee
    assert contracts.parse("fldp:epsilon=1,alpha=0.5", d=3).guarantee == contracts.fldp(3, 1.0, 0.5).guarantee
    e = DATA["budgets"]
    assert contracts.parse("minid-ldp", budgets=e).guarantee == contracts.minidldp(e).guarantee
    assert contracts.parse("minidldp", budgets=e).name == "MinID-LDP"
    assert contracts.parse("lip:epsilon=1", prior=DATA["prior"]).guarantee == contracts.lip(1.0, DATA["prior"]).guarantee
    avg = contracts.parse("id-ldp:rule=average", budgets=e)
    assert avg.guarantee == contracts.idldp(e, "average").guarantee and avg.name == "ID-LDP (average)"
    assert contracts.parse("context-aware", matrix=DATA["matrix"]).guarantee == \
        contracts.context_aware(DATA["matrix"]).guarantee
    ipldp = contracts.parse("ipldp", budgets=[1.0, np.inf, 2.0])
    assert ipldp.guarantee == contracts.ipldp([1.0, np.inf, 2.0]).guarantee and ipldp.sensitive.tolist() == [0, 2]
    assert contracts.parse("uldp:epsilon=1", d=5, sensitive=[1, 0]).guarantee == contracts.uldp(5, 1.0, [0, 1]).guarantee


def test_the_builtin_constructors_are_promise() -> None:
    e = DATA["budgets"]
    assert contracts.ldp(3, 1.0).name == "LDP"
    assert contracts.minidldp(e).name == "MinID-LDP" and contracts.idldp(e, "min").name == "MinID-LDP"
    assert contracts.idldp(e, "max").name == "ID-LDP (max)"
    assert contracts.ipldp([1.0, np.inf]).name == "IPLDP"
    assert contracts.uldp(3, 1.0, [0]).name == "ULDP" and contracts.fldp(3, 1.0, 0.5).name == "FLDP"
    assert contracts.lip(1.0, [0.5, 0.5]).name == "LIP" and contracts.context_aware(DATA["matrix"]).name == "CA-LDP"
    # parameters in the order the notion declares them, whatever the order given
    assert list(contracts.promise("fldp", 3, alpha=0.5, epsilon=1.0).guarantee.params) == ["epsilon", "alpha"]


def test_scale_uses_the_promise_s_optional_parameters() -> None:
    """A MIP promise in bits: the scale compares bits with bits (it used to compare nats with bits)."""
    prior = np.full(3, 1 / 3)
    c = contracts.promise("mip", 3, epsilon=0.1, prior=prior, base=2)
    bits = accountant.mutual_information(GRR(3, 1.0), prior, base=2)
    assert c.scale(GRR(3, 1.0)) == pytest.approx(bits / 0.1, rel=1e-12)
    assert c.satisfied(GRR(3, 1.0)) == (c.scale(GRR(3, 1.0)) <= 1)
    uldp = contracts.promise("uldp", 4, epsilon=1.0, sensitive=[0, 1], protected=[0, 1])
    assert uldp.scale(URR(4, 1.0, sensitive=[0, 1])) == pytest.approx(1.0)


CLI_HINTS = {"budgets": "the CLI's --budgets FILE", "sensitive": "the CLI's --sensitive FILE",
             "prior": "the CLI's --prior FILE", "matrix": "the CLI's --matrix FILE"}


@pytest.mark.parametrize(
    "spec, data, message",
    [
        ("minid-ldp", {}, "minid-ldp needs budgets (the CLI's --budgets FILE)"),
        ("ipldp", {"d": 4}, "ipldp needs budgets (the CLI's --budgets FILE)"),
        ("lip:epsilon=1", {"d": 4}, "lip needs prior (the CLI's --prior FILE)"),
        ("uldp:epsilon=1", {}, "uldp needs sensitive (the CLI's --sensitive FILE)"),
        ("context-aware", {}, "context-aware needs matrix (the CLI's --matrix FILE)"),
        ("ldp", {"d": 4}, "ldp needs epsilon, as in ldp:epsilon=VALUE"),
        ("fldp:epsilon=1", {"d": 4}, "fldp needs alpha, as in fldp:alpha=VALUE"),
        ("ldp:epsilon=1", {}, "ldp: the domain size d is needed (no data gives it)"),
        ("ldp:epsilon=1", {"budgets": [1.0, 2.0]}, "ldp takes no budgets (it takes epsilon in its text)"),
        ("minid-ldp:epsilon=1", {"budgets": [1.0, 2.0]},
         "minid-ldp takes r in its text and budgets from the caller; got epsilon"),
        ("minid-ldp:budgets=1", {}, "minid-ldp: budgets is not written in the text; it comes from the caller "
                                    "(the CLI's --budgets FILE)"),
        ("ldp:delta=0.1", {"d": 4}, "ldp takes epsilon in its text; got delta"),
        ("ldp:epsilon", {"d": 4}, "ldp: 'epsilon' is not PARAM=VALUE"),
        ("ldp:epsilon=1,eps=2", {"d": 4}, "ldp: epsilon is given twice"),
        ("ldp:epsilon=-1", {"d": 4}, "epsilon must be a finite positive real number, got -1.0"),
        ("ldp:epsilon=one", {"d": 4}, "epsilon must be a finite positive real number, got 'one'"),
        ("fldp:epsilon=1,alpha=1.5", {"d": 4}, "alpha must be a probability in [0, 1], got 1.5"),
        ("id-ldp:rule=median", {"budgets": [1.0, 2.0]}, "unknown pair rule r='median'"),
        ("minid-ldp", {"budgets": [1.0]}, "a MinID-LDP promise needs at least 2 items, got 1"),
        ("ipldp", {"budgets": [np.inf, np.inf]}, "an IPLDP promise needs at least one sensitive item"),
        ("lip:epsilon=1", {"prior": [0.5, 0.5, 0.0]}, "a LIP promise needs a prior with full support, got 0 at item 2"),
        ("ldpp:epsilon=1", {"d": 4}, "unknown notion 'ldpp'; known notions: ldp, "),
        (":epsilon=1", {"d": 4}, "':epsilon=1' names no notion; write NOTION[:PARAM=VALUE,...], as in ldp:epsilon=1"),
    ],
)
def test_every_refusal_is_one_line_naming_what_is_wrong(spec: str, data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as err:
        contracts.parse(spec, hints=CLI_HINTS, **data)
    text = str(err.value)
    assert "\n" not in text and text.startswith(message), text


def test_promise_refuses_unknown_and_missing_parameters() -> None:
    with pytest.raises(ValueError, match="fldp takes epsilon, alpha; got delta"):
        contracts.promise("fldp", 3, epsilon=1.0, alpha=0.5, delta=0.1)
    with pytest.raises(ValueError, match="^uldp needs sensitive$"):
        contracts.promise("uldp", 3, epsilon=1.0)
    with pytest.raises(ValueError, match="did you mean ldp"):
        contracts.promise("ldpp", 3, epsilon=1.0)
    with pytest.raises(ValueError, match="d must be"):
        contracts.promise("ldp", 0, epsilon=1.0)
    with pytest.raises(TypeError, match="text must be a string"):
        contracts.parse(1.0)  # type: ignore[arg-type]
    # the default hint names the keyword argument
    with pytest.raises(ValueError, match=r"^minid-ldp needs budgets \(give budgets=\)$"):
        contracts.parse("minid-ldp")
    assert contracts.parse("ldp:epsilon=1", d=4).satisfied(OUE(4, 1.0))
