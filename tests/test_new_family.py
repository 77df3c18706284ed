"""A new mechanism family added from a test file touches only what the README says.

The k-subset mechanism (Wang et al. 2016; Ye and Barg 2018) reports a set of ``k`` items: a set
containing the user's item has probability ``e^eps / Z`` and any other set ``1 / Z``, with
``Z = C(d-1, k-1) e^eps + C(d-1, k)``.  It is written here against the documented interface
only: its channel kind with one closed form for the accountant, the mechanism itself, the codec
of its report type (for report files), and one registration.  With no edit to ldpkit it then
passes the mechanism contract (report files and batch aggregation included), the mutation test
(a perturbed copy fails ``verify`` and the sampling check), the abstract closed-form test, and
it appears in the privacy profile and the registry.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Optional
from math import comb

import numpy as np
import pytest
from numpy.typing import ArrayLike

from ldpkit import accountant
from ldpkit._rng import RNGLike, as_generator
from ldpkit._validation import check_items
from ldpkit.accountant import Witness
from ldpkit.base import SupportOracle
from ldpkit.channels import Channel, ExplicitChannel
from ldpkit.mechanisms import MechanismSpec, register_mechanism, unregister_mechanism
from ldpkit.reportio import ReportCodec, register_report_codec, unregister_report_codec
from ldpkit.reports import Provenance, check_source
from ldpkit.testing import check_contract, check_sampling_matches_channel
from test_contract import mutants
from test_notions import assert_closed_form_matches_enumeration, closed_form_cases


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
        self.k, self.epsilon = k, float(epsilon)
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


# ------------------------------------------------------------------------------ 3. one registration
@pytest.fixture
def ksubset_family() -> Iterator[MechanismSpec]:
    # its report type: one codec, so report files and batch aggregation cover it too
    register_report_codec(ReportCodec(
        "k-subset", SubsetReports, (("sets", "<i8", True),), lambda r: {"k": r.k},
        lambda r: (r.sets,), lambda cols, meta, src: SubsetReports(cols[0], int(meta["k"]), src),
        widths=lambda meta: (int(meta["k"]),)))
    spec = register_mechanism(MechanismSpec("k-subset", "wang2016mutual", lambda: (KSubset(4, 2, 1.0), KSubset(5, 2, 0.5)),
                                            description="k-subset mechanism, defined in a test"))
    yield spec
    unregister_mechanism("k-subset")
    unregister_report_codec("k-subset")


def test_a_new_family_passes_every_check_with_no_change_to_ldpkit(ksubset_family: MechanismSpec) -> None:
    for index, mech in enumerate(ksubset_family.examples()):
        # the contract: sampling against the channel, guarantees, simulation, bad input
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
