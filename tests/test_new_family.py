"""A new mechanism family added from outside ldpkit touches only what CONTRIBUTING says: one declaration.

The k-subset mechanism (Wang et al. 2016; Ye and Barg 2018) reports a set of ``k`` items: a set
containing the user's item has probability ``e^eps / Z`` and any other set ``1 / Z``, with
``Z = C(d-1, k-1) e^eps + C(d-1, k)``.  It is written here against the documented interface
only: its channel kind with one closed form for the accountant, the mechanism itself, and one
:class:`~ldpkit.family.Family` registration (its examples, its budget sweep, the family as a
function of its budget, and the codec of its report type).  With no edit to ldpkit it then
passes the mechanism contract (report files and batch aggregation included), the mutation test
(a perturbed copy fails ``verify`` and the sampling check), the abstract closed-form test, and
it appears in the registry, the privacy profile, the budget sweeps, calibration (with its
tightness certificate) and report files, which a fresh process reads once it imports the
family's module (written to a temporary directory by :func:`family_module`).
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run_process
from ldpkit import contracts
from ldpkit.calibration import calibrate, calibrate_all
from ldpkit.family import families, family_of, get_family, register_family, unregister_family
from ldpkit.reportio import open_reports, registered_codecs, save_reports
from ldpkit.testing import check_contract, check_sampling_matches_channel
from test_contract import mutants
from test_notions import assert_closed_form_matches_enumeration, closed_form_cases

# ------------------------------------------------------------------------------ the family's module
# Everything from here to the end of ksubset_family() is what the family's own module holds: it is
# also written out as a module (family_module) that a fresh process imports.
import itertools
import math
from dataclasses import dataclass
from math import comb
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike

from ldpkit import accountant
from ldpkit._rng import RNGLike, as_generator
from ldpkit._validation import EPS_MAX, EPS_MIN, check_epsilon, check_items
from ldpkit.accountant import Witness
from ldpkit.base import SupportOracle
from ldpkit.channels import Channel, ExplicitChannel
from ldpkit.family import BudgetSweep, Family
from ldpkit.reports import Provenance, ReportCodec, check_source


# ------------------------------------------------------------------------------ 1. the channel kind
class KSubsetChannel(Channel):
    """The law of the k-subset mechanism: outputs are the ``C(d, k)`` sets in lexicographic order."""

    kind = "k-subset"

    def __init__(self, d: int, k: int, epsilon: float) -> None:
        self.d, self.k, self.eps = d, k, epsilon

    @property
    def n_inputs(self) -> int:
        return self.d

    @property
    def n_outputs(self) -> int:
        return comb(self.d, self.k)

    def to_explicit(self) -> ExplicitChannel:
        sets = list(itertools.combinations(range(self.d), self.k))
        z = comb(self.d - 1, self.k - 1) * math.exp(self.eps) + comb(self.d - 1, self.k)
        m = np.array([[(math.exp(self.eps) if x in s else 1.0) / z for s in sets] for x in range(self.d)])
        return ExplicitChannel(m)


@accountant.register_closed_form("ldp", KSubsetChannel)
def _ksubset_ldp(ch: KSubsetChannel) -> Witness:
    """A set holding x but not x' has ratio e^eps; it exists when 1 <= k < d."""
    return Witness(ch.eps, (0, 1), None)


# ------------------------------------------------------------------------------ 2. the mechanism
@dataclass(frozen=True)
class SubsetReports:
    """k-subset reports: row ``u`` of ``sets`` holds user ``u``'s ``k`` items, ascending."""

    sets: np.ndarray
    k: int
    source: Optional[Provenance] = None

    def __len__(self) -> int:
        return int(self.sets.shape[0])

    def row(self, i: int) -> tuple[int, ...]:
        return tuple(int(v) for v in self.sets[i])


class KSubset(SupportOracle[SubsetReports]):
    """The k-subset mechanism as a pure protocol: a report supports the items of its set."""

    def __init__(self, d: int, k: int, epsilon: float) -> None:
        super().__init__(d)
        self.k, self.epsilon = k, check_epsilon(epsilon)
        e = math.exp(epsilon)
        z = comb(d - 1, k - 1) * e + comb(d - 1, k)
        self.p_include = comb(d - 1, k - 1) * e / z  # P(x in S | x)
        self.p_support = np.full(d, self.p_include)
        self.q_support = np.full(d, (comb(d - 2, k - 2) * e + comb(d - 2, k - 1)) / z if k >= 2 else comb(d - 2, k - 1) / z)
        self._index = {s: i for i, s in enumerate(itertools.combinations(range(d), k))}

    def __repr__(self) -> str:
        return f"KSubset(d={self.d}, k={self.k}, epsilon={self.epsilon:g})"

    def channel(self) -> KSubsetChannel:
        return KSubsetChannel(self.d, self.k, self.epsilon)

    def report_parameters(self) -> dict[str, object]:
        return {"d": self.d, "k": self.k, "epsilon": self.epsilon}

    def arguments(self) -> dict[str, object]:  # report files rebuild it from these
        return {"d": self.d, "k": self.k, "epsilon": self.epsilon}

    def perturb(self, items: ArrayLike, rng: RNGLike = None) -> SubsetReports:
        x = check_items(items, self.d)
        gen = as_generator(rng)
        keep = gen.random(x.size) < self.p_include
        # a uniform order of the other items: the first k - 1 (with x) or k (without x)
        others = np.argsort(gen.random((x.size, self.d)) + (np.arange(self.d)[None, :] == x[:, None]), axis=1)[:, : self.d - 1]
        with_x = np.column_stack([x, others[:, : self.k - 1]])
        without_x = others[:, : self.k]
        return SubsetReports(np.sort(np.where(keep[:, None], with_x, without_x), axis=1), self.k, self.provenance)

    def aggregate(self, reports: SubsetReports) -> np.ndarray:
        check_source(reports, self.provenance)
        return np.bincount(reports.sets.ravel(), minlength=self.d)

    def n_reports(self, reports: SubsetReports) -> int:
        return len(reports)

    def output_index(self, reports: SubsetReports) -> np.ndarray:
        return np.array([self._index[tuple(int(i) for i in row)] for row in reports.sets], dtype=np.int64)

    aggregate_simulation_exact = False

    def _simulate_support(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.aggregate(self.perturb(np.repeat(np.arange(self.d), counts), rng))


# ------------------------------------------------------------------------------ 3. one declaration
def ksubset_declaration() -> Family:
    """The k-subset family: examples, its sweep, the family at a budget (k = 2), and its report type's codec."""
    codec = ReportCodec(
        "k-subset", SubsetReports, (("sets", "<i8", True),), lambda r: {"k": r.k},
        lambda r: (r.sets,), lambda cols, meta, src: SubsetReports(cols[0], int(meta["k"]), src),
        widths=lambda meta: (int(meta["k"]),))
    return Family(
        "k-subset", "wang2016mutual", KSubset, lambda: (KSubset(4, 2, 1.0), KSubset(5, 2, 0.5)),
        "k-subset mechanism, defined outside ldpkit", reports="k-subset", codec=codec,
        sweeps=lambda: (BudgetSweep("k-subset", lambda e: KSubset(4, 2, e), EPS_MIN, EPS_MAX, "k-subset"),),
        at_budget=lambda d, t: KSubset(d, 2, t))


# ------------------------------------------------------------------------------ the tests
#: the module a user would write: the definitions above and one registration
def family_module() -> str:
    """The source of the k-subset family's module: this file's definitions and one ``register_family`` call."""
    here = inspect.getsource(sys.modules[__name__])
    start = here.index("import itertools\n")
    end = here.index("# ------------------------------------------------------------------------------ the tests")
    head = '"""The k-subset family (written by tests/test_new_family.py)."""\n\nfrom __future__ import annotations\n\n'
    tail = "\nfrom ldpkit.family import register_family\n\nregister_family(ksubset_declaration())\n"
    return head + here[start:end] + tail


@pytest.fixture
def ksubset_family() -> Iterator[Family]:
    fam = register_family(ksubset_declaration())
    yield fam
    unregister_family("k-subset")


def test_a_new_family_passes_every_check_with_no_change_to_ldpkit(ksubset_family: Family) -> None:
    for index, mech in enumerate(ksubset_family.examples()):
        # the contract: sampling against the channel, guarantees, simulation, bad input, report files
        report = check_contract(mech, rng=11 + index)
        assert report.guarantees == (f"Guarantee('ldp', epsilon={mech.epsilon!r})",)
        # the mutation test of the registry: a perturbed copy fails verify and the sampling check
        x, _, mutant = next((x, y, m) for x, y, m in mutants(mech) if not accountant.verify(m))
        with pytest.raises(AssertionError, match=f"input {x}"):
            check_sampling_matches_channel(mutant, samples_per_input=200_000, rng=index)
        # the privacy profile sees it under every notion
        prof = accountant.privacy_profile(mech, sensitive=[0], prior=np.full(mech.d, 1 / mech.d))
        assert prof.ldp_epsilon == pytest.approx(mech.epsilon) and prof.uldp_epsilon == pytest.approx(mech.epsilon)
    # its closed form is in the abstract closed-form test the moment it is registered
    cases = closed_form_cases((accountant.LDP,))
    mine = [c for c in cases if c[1] == "KSubsetChannel"]
    assert len(mine) == 2
    for mech in ksubset_family.examples():
        assert_closed_form_matches_enumeration(accountant.LDP, mech.channel())


def test_it_appears_in_the_registry_the_sweeps_and_calibration(ksubset_family: Family) -> None:
    # the registry, and so the contract tests' cases (tests/test_contract.py builds them this way)
    assert get_family("k-subset") is ksubset_family and ksubset_family in families(budget=True)
    assert ("k-subset", 1) in [(f.name, i) for f in families() for i in range(len(f.examples()))]
    assert family_of(KSubset(4, 2, 1.0)) is ksubset_family
    # the budget sweeps (tests/test_robustness.py reads them this way): built in range, refused outside
    sweep = next(s for f in families() for s in f.budget_sweeps() if s.name == "k-subset")
    assert sweep.build(sweep.lo).epsilon == sweep.lo and sweep.build(sweep.hi).epsilon == sweep.hi
    for outside in (sweep.lo / 2, sweep.hi * 2):
        with pytest.raises(ValueError, match=sweep.refusal_regex()):
            sweep.build(outside)
    # calibration: the member at the promise's budget, with its tightness certificate
    promise = contracts.ldp(5, 1.5)
    cal = calibrate("k-subset", promise)
    assert cal.family is ksubset_family and cal.method == "largest accepted budget"
    assert cal.parameter == pytest.approx(1.5, rel=1e-9) and cal.certificate().holds
    assert calibrate_all(promise)["k-subset"].parameter == cal.parameter


def test_its_report_files_round_trip_and_need_the_family(ksubset_family: Family, tmp_path: Path) -> None:
    mech = KSubset(5, 2, 1.0)
    reports = mech.perturb(np.arange(5).repeat(3), rng=2)
    assert "k-subset" in [c.kind for c in registered_codecs()]  # declared with the family
    save_reports(tmp_path / "ksubset.csv", reports, mech)
    back = open_reports(tmp_path / "ksubset.csv")  # the file alone rebuilds the mechanism
    assert type(back.mechanism) is KSubset and back.mechanism.provenance == mech.provenance
    assert np.array_equal(back.read().sets, reports.sets) and back.header["mechanism"]["family"] == "k-subset"
    unregister_family("k-subset")
    try:
        assert "k-subset" not in [c.kind for c in registered_codecs()]  # the codec went with its family
        with pytest.raises(ValueError, match=r"KSubset mechanism: no registered family declares its class"):
            save_reports(tmp_path / "refused.ldpr", reports, mech)
        assert not any(p.name.startswith("refused") for p in tmp_path.iterdir())
    finally:
        register_family(ksubset_family)


_WRITE = """
import sys
import numpy as np
import ksubset_family as ks
from ldpkit.reportio import save_reports
mech = ks.KSubset(5, 2, 1.0)
save_reports(sys.argv[1], mech.perturb(np.arange(5).repeat(4), rng=3), mech, data="written by a fresh process")
"""
_READ = """
import sys
{imports}
from ldpkit.reportio import open_reports
f = open_reports(sys.argv[1])
print(repr(f.mechanism), f.data, f.read().sets.tolist())
"""


def test_a_fresh_process_reads_the_files_of_a_family_defined_in_a_module(tmp_path: Path) -> None:
    """One module with one registration: a process that imports it writes and reads; one that does not is told to."""
    (tmp_path / "ksubset_family.py").write_text(family_module())
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])
    path = str(tmp_path / "ksubset.ldpr")

    def run(code: str) -> subprocess.CompletedProcess[str]:
        return run_process([sys.executable, "-c", code, path], capture_output=True, text=True, env=env, cwd=tmp_path)

    written = run(_WRITE)
    assert written.returncode == 0, written.stderr
    read = run(_READ.format(imports="import ksubset_family"))
    assert read.returncode == 0, read.stderr
    sets = KSubset(5, 2, 1.0).perturb(np.arange(5).repeat(4), rng=3).sets.tolist()  # the same seed here
    assert read.stdout.strip() == f"KSubset(d=5, k=2, epsilon=1) written by a fresh process {sets}"
    refused = run(_READ.format(imports=""))
    assert refused.returncode != 0
    assert "family 'k-subset' is not registered in this process: import the module that registers it" in refused.stderr
