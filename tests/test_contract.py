"""The mechanism contract, run on every instance of every registered mechanism family.

One test per (family, instance): sampling agrees with accounting (chi-square per input at a
family-wise false-alarm rate of 1e-6), the channel meets the declared guarantees exactly,
aggregate-level simulation agrees with the per-user path, the estimator is unbiased with the
declared variance, and bad input is rejected (:func:`ldpkit.testing.check_contract`).

The second half shows that the checks have power: mechanisms with a plausible mistake fail
them, and a mechanism defined only in this file (its own channel kind, its own guarantees)
passes the contract, ``accountant.verify`` and the registry with no change to ldpkit.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

from conftest import EstimatesByInner
import ldpkit
from ldpkit import accountant
from ldpkit._validation import check_items
from ldpkit.accountant import Guarantee
from ldpkit.base import FrequencyOracle
from ldpkit.channels import Channel, ExplicitChannel
from ldpkit.family import Family, families, get_family, register_family, unregister_family
from ldpkit.testing import (
    CONTRACT_ALPHA,
    check_contract,
    check_sampling_matches_channel,
    check_simulation_matches_per_user,
    chi_square_noncentrality,
)

CASES = [(fam.name, i) for fam in families() for i in range(len(fam.examples()))]


@pytest.mark.parametrize("name, index", CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_registered_mechanism_meets_the_contract(name: str, index: int) -> None:
    fam = get_family(name)
    mech = fam.examples()[index]
    report = check_contract(mech, fam.inputs, rng=1000 + index)
    assert report.rows_checked >= 2 and report.guarantees


def test_every_family_is_registered() -> None:
    names = {fam.name for fam in families()}
    assert {"GRR", "RAPPOR", "OUE", "UE", "OLH", "HR", "FHR", "uRR", "IPRR", "IDUE-opt0", "IDUE-opt1", "IDUE-opt2",
            "OUE-PS", "RAPPOR-PS", "IDUE-PS", "LIP-kary", "LIP-binary", "Channel"} <= names
    with pytest.raises(ValueError, match="did you mean GRR"):
        get_family("GRRR")


# ------------------------------------------------------------------------------ mutations
#: the stated size of a mutation: this share of one input's output law moves onto one output
MUTATION_SHARE = 0.05


def with_channel(mech: Any, channel: ExplicitChannel) -> Any:
    """A copy of ``mech`` that declares the same guarantees (however it derives them) but whose channel is ``channel``."""
    cls = type(mech)
    mutant_cls = type(f"Perturbed{cls.__name__}", (cls,), {"channel": lambda self: channel})
    mutant = copy.copy(mech)
    mutant.__class__ = mutant_cls
    return mutant


def mutants(mech: Any) -> Any:
    """Every copy whose channel has ``MUTATION_SHARE`` of one row's mass moved onto one output.

    Largest moves first: moving onto an unlikely output changes the law by a total variation of
    nearly ``MUTATION_SHARE``, which the sampling check detects at its sample size.
    """
    m = accountant.enumerate_channel(mech.channel(), "mutation").matrix
    for flat in np.argsort(m, axis=None, kind="stable"):
        x, y = (int(i) for i in np.unravel_index(flat, m.shape))
        row = (1 - MUTATION_SHARE) * m[x]
        row[y] += MUTATION_SHARE
        moved = m.copy()
        moved[x] = row
        yield x, y, with_channel(mech, ExplicitChannel(moved))


@pytest.mark.parametrize("name, index", CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_a_perturbed_copy_fails_verify_and_the_sampling_contract(name: str, index: int) -> None:
    """The checks are not tautologies: for every registered instance, some perturbation of the stated
    size makes ``verify`` fail (the declared guarantees come from the constructor's budget, not from
    the channel), and the sampler, left unchanged, then disagrees with the channel."""
    mech = get_family(name).examples()[index]
    assert accountant.verify(mech)
    failing = next(((x, y, mut) for x, y, mut in mutants(mech) if not accountant.verify(mut)), None)
    assert failing is not None, f"no {MUTATION_SHARE} perturbation of {mech!r} breaks its declared guarantees"
    x, y, mutant = failing
    # the smallest move that breaks a guarantee can be a small change of the law (0.015 for the
    # binary LIP channels); the power of the check on row x at n draws, from the noncentral
    # chi-square of the sampler's true row against the perturbed one, sizes n
    n = 200_000
    declared = mutant.channel().to_explicit().matrix
    true_row = accountant.enumerate_channel(mech.channel(), "power").matrix[x]
    k = int(np.count_nonzero(declared[x] > 0))
    crit = stats.chi2.isf(CONTRACT_ALPHA / declared.shape[0], max(k - 1, 1))
    power = stats.ncx2.sf(crit, max(k - 1, 1), chi_square_noncentrality(declared[x], true_row, n))
    assert power > 0.999, (mech, x, y, power)
    with pytest.raises(AssertionError, match=f"input {x}"):
        check_sampling_matches_channel(mutant, samples_per_input=n, rng=index)


# ------------------------------------------------------------------------------ power
class SwappedGRR(ldpkit.GRR):
    """GRR that keeps the true item with probability q instead of p (channel left as declared)."""

    def perturb(self, items: Any, rng: Any = None) -> np.ndarray:
        items = np.asarray(items, dtype=np.int64)
        gen = ldpkit.as_generator(rng)
        keep = gen.random(items.size) < self.q
        other = gen.integers(0, self.d - 1, size=items.size)
        other += other >= items
        return np.where(keep, items, other)


class HalfBudgetOUE(ldpkit.OUE):
    """OUE that samples its bits with the probabilities of eps/2 while declaring eps."""

    def perturb(self, items: Any, rng: Any = None) -> Any:
        return ldpkit.OUE(self.d, self.epsilon / 2).perturb(items, rng)


@pytest.mark.parametrize(
    "mutant, correct",
    [(SwappedGRR(4, 0.5), ldpkit.GRR(4, 0.5)), (HalfBudgetOUE(3, 0.5), ldpkit.OUE(3, 0.5))],
    ids=["grr-p-q-swapped", "oue-half-budget"],
)
def test_sampling_check_has_power_against_named_mistakes(mutant: Any, correct: Any) -> None:
    """Power from the noncentral chi-square at the contract's sample size, then the check itself."""
    n = 20_000
    declared = correct.channel().to_explicit().matrix
    # the law the mutant really samples, estimated from a large independent sample
    rows = []
    for x in range(declared.shape[0]):
        out = mutant.sample_outputs(x, 200_000, rng=x)
        rows.append(np.bincount(out, minlength=declared.shape[1]) / out.size)
    actual = np.array(rows)
    k = declared.shape[1]
    level = CONTRACT_ALPHA / declared.shape[0]
    crit = stats.chi2.isf(level, k - 1)
    power = max(stats.ncx2.sf(crit, k - 1, chi_square_noncentrality(declared[x], actual[x], n)) for x in range(len(rows)))
    assert power > 0.999, power
    with pytest.raises(AssertionError, match="chi-square"):
        check_sampling_matches_channel(mutant, n, rng=5)
    check_sampling_matches_channel(correct, n, rng=5)


class MisdeclaredGRR(ldpkit.GRR):
    """GRR that declares half its budget."""

    def guarantees(self) -> list[Guarantee]:
        return [Guarantee("ldp", epsilon=self.epsilon / 2)]


def test_guarantee_check_rejects_an_overstated_guarantee() -> None:
    report = accountant.verify(MisdeclaredGRR(3, 1.0))
    assert not report.satisfied
    (_, result), = list(report)
    assert result.slack == pytest.approx(-0.5)
    with pytest.raises(AssertionError, match="violates"):
        check_contract(MisdeclaredGRR(3, 1.0))


class BiasedSimulationGRR(ldpkit.GRR):
    """GRR whose aggregate simulator ignores who holds what (every count drawn from n users at q)."""

    def _simulate_support(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        n = int(counts.sum())
        return rng.multinomial(n, np.full(self.d, 1.0 / self.d))


def test_simulation_check_rejects_a_simulator_that_ignores_the_counts() -> None:
    check_contract(ldpkit.GRR(3, 1.0), samples_per_input=2_000)
    with pytest.raises(AssertionError, match="bias"):
        check_simulation_matches_per_user(BiasedSimulationGRR(3, 1.0), rng=4)


# ---------------------------------------------------- a family defined only in this file
class ShiftChannel(Channel):
    """Report ``x + Z mod d`` with ``P(Z = 0) = e^eps / (e^eps + d - 1)``: a channel kind of its own."""

    kind = "cyclic-shift"

    def __init__(self, d: int, epsilon: float) -> None:
        self._d = d
        self.p0 = math.exp(epsilon) / (math.exp(epsilon) + d - 1)

    @property
    def n_inputs(self) -> int:
        return self._d

    @property
    def n_outputs(self) -> int:
        return self._d

    def to_explicit(self) -> ExplicitChannel:
        d = self._d
        shift = np.full(d, (1 - self.p0) / (d - 1))
        shift[0] = self.p0
        return ExplicitChannel(np.array([np.roll(shift, x) for x in range(d)]))


class CyclicShift(EstimatesByInner, FrequencyOracle):
    """A frequency oracle written against the documented interface only."""

    def __init__(self, d: int, epsilon: float) -> None:
        super().__init__(d)
        self.epsilon = epsilon
        self._ch = ShiftChannel(d, epsilon)
        self._inner = ldpkit.ChannelOracle(self._ch)  # estimation through the explicit matrix

    def channel(self) -> Channel:
        return self._ch

    def guarantees(self) -> list[Guarantee]:
        # under the uniform prior P(y) = 1/d, so the LIP budget is the larger |log d P(y|x)|,
        # stated from the constructor's parameters (never read off the channel)
        p0 = self._ch.p0
        lip = max(abs(math.log(self.d * p0)), abs(math.log(self.d * (1 - p0) / (self.d - 1))))
        uniform = np.full(self.d, 1.0 / self.d)
        return [Guarantee("ldp", epsilon=self.epsilon), Guarantee("lip", prior=uniform, epsilon=lip)]

    def perturb(self, items: Any, rng: Any = None) -> np.ndarray:
        items = check_items(items, self.d)
        gen = ldpkit.as_generator(rng)
        z = np.where(gen.random(items.size) < self._ch.p0, 0, gen.integers(1, self.d, size=items.size))
        return (items + z) % self.d

    def aggregate(self, reports: Any) -> np.ndarray:
        # the inner oracle checks provenance against its own: hand it the bare array
        return self._inner.aggregate(np.asarray(reports))

    def n_reports(self, reports: Any) -> int:
        return int(np.asarray(reports).size)

    def output_index(self, reports: Any) -> np.ndarray:
        return np.asarray(reports, dtype=np.int64)


@pytest.fixture
def shift_family() -> Any:
    fam = register_family(Family("CyclicShift", "none", CyclicShift,
                                 lambda: (CyclicShift(4, 0.7), CyclicShift(5, 2.0))))
    yield fam
    unregister_family("CyclicShift")


def test_a_family_defined_in_a_test_file_passes_everything(shift_family: Family) -> None:
    assert get_family("CyclicShift") is shift_family and shift_family in families()
    for mech in shift_family.examples():
        report = accountant.verify(mech)
        assert report.satisfied and [g.notion for g, _ in report] == ["ldp", "lip"]
        # its channel kind has no closed form: the accountant enumerates it
        assert accountant.ldp_epsilon(mech) == pytest.approx(mech.epsilon, rel=1e-12)
        assert accountant.check_idldp(mech, np.full(mech.d, mech.epsilon)).satisfied
        check_contract(mech, rng=3)


def test_an_unenumerable_kind_without_closed_form_is_refused_by_name() -> None:
    class Huge(ShiftChannel):
        kind = "huge-shift"

    with pytest.raises(accountant.AccountingError, match=r"'huge-shift'.*5,000 inputs and 5,000 outputs"):
        accountant.ldp_epsilon(Huge(5_000, 1.0))


def test_a_closed_form_registered_from_outside_is_used() -> None:
    class Fast(ShiftChannel):
        kind = "fast-shift"

    calls = []

    @accountant.register_closed_form("ldp", Fast)
    def _fast(ch: Fast) -> tuple[float, tuple[int, ...], int | None]:
        calls.append(ch)
        return math.log(ch.p0 * (ch.n_inputs - 1) / (1 - ch.p0)), (0, 1), 0

    big = Fast(5_000, 1.5)
    assert accountant.ldp_epsilon(big) == pytest.approx(1.5)
    assert accountant.check_ldp(big, 1.5).satisfied and len(calls) == 2
