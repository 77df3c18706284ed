"""The audits' discrete choices do not depend on the last bits of floating-point values.

Values that are equal in exact arithmetic (the log-ratios of the symmetric items of IDUE, the
equal entries of a randomised-response column) come out of a machine with their last bits
decided by the order of its floating-point operations (SIMD ``exp``/``log``, BLAS kernels and
thread counts).  Every choice an audit makes from such values (the worst pair, the input of
largest and smallest probability, the outputs above the median) treats them as tied and
resolves the tie by index, so the bounds are the same on every machine.  Here the machine's
rounding is imitated by a relative perturbation of ``1e-12`` of the exact channel the events are
chosen from (``channel=``; the samples are the same), far below any real difference: a bound
must not move (before the tie-aware choices, IDUE-opt1's white-box LDP bound moved from 0 to
0.12 at 100 samples, see issue 33).
"""

from __future__ import annotations

import numpy as np
import pytest

from ldpkit import GRR, IDUE, IPRR
from ldpkit.audit import (
    audit_ipldp,
    audit_ldp,
    audit_lip,
    audit_pairwise,
    from_channel,
    from_mechanism,
    sample_histograms,
)

#: the imitated rounding: a relative perturbation of every probability
NOISE = 1e-12
SIZES = (100, 1_000, 10_000)


def _claimed(matrix: np.ndarray, seed: int) -> np.ndarray:
    """``matrix`` with every entry moved by a relative ``NOISE`` at most (the rounding of another machine)."""
    return matrix * (1 + NOISE * np.random.default_rng(seed).uniform(-1, 1, matrix.shape))


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
def test_the_worst_pair_of_tied_items_is_chosen_by_index(eps: float) -> None:
    # IDUE-opt1 with budgets (eps/2, eps, eps, eps): items 1, 2, 3 tie, so do the pairs among them
    mech = IDUE([eps / 2, eps, eps, eps], model="opt1")
    sampler = from_mechanism(mech)
    matrix = sampler.channel.matrix

    def bounds(seed: int | None) -> list[float]:
        claimed = matrix if seed is None else _claimed(matrix, seed)
        return [audit_ldp(sampler, n, events="white", rng=5, channel=claimed).value for n in SIZES]

    reference = bounds(None)
    assert [bounds(seed) for seed in range(4)] == [reference] * 4
    assert audit_ldp(from_mechanism(mech), 100, events="white", rng=5).pair == (1, 2)  # the first tied pair


def test_the_inputs_of_an_ipldp_output_are_chosen_by_index() -> None:
    # IPRR's column j holds the same value for every input x != j
    budgets = [0.5, 1.0, 1.0, 2.0]
    matrix = IPRR(budgets).channel().to_explicit().matrix
    ref = audit_ipldp(from_channel(matrix), budgets, 1_000, rng=3)
    for seed in range(4):
        res = audit_ipldp(from_channel(matrix), budgets, 1_000, rng=3, channel=_claimed(matrix, seed))
        assert [b.pair for b in res.bounds] == [b.pair for b in ref.bounds]
        np.testing.assert_array_equal(res.values, ref.values)


def test_the_lip_input_and_events_are_chosen_by_index() -> None:
    matrix = GRR(4, 1.0).channel().to_explicit().matrix
    prior = [0.25] * 4  # every input and output ties
    ref = audit_lip(from_channel(matrix), prior, 2_000, rng=4)
    for seed in range(4):
        b = audit_lip(from_channel(matrix), prior, 2_000, rng=4, channel=_claimed(matrix, seed))
        assert (b.value, b.pair, b.event) == (ref.value, ref.pair, ref.event)


def test_outputs_tied_with_the_median_are_not_above_it() -> None:
    # GRR's ratios over its outputs: one at e^eps, the rest tied with the median (1) or below it
    matrix = GRR(5, 1.0).channel().to_explicit().matrix
    ref = audit_pairwise(from_channel(matrix), 1_000, rng=6)
    for seed in range(4):
        res = audit_pairwise(from_channel(matrix), 1_000, rng=6, channel=_claimed(matrix, seed))
        assert [b.event for b in res.bounds] == [b.event for b in ref.bounds]
        np.testing.assert_array_equal(res.values, ref.values)


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
def test_unary_samples_do_not_depend_on_the_last_bit_of_a_probability(eps: float) -> None:
    # the packed Bernoulli sampler's CDF must end at exactly 1 whatever the rounding of its total:
    # IDUE-opt1's b at eps = 4 one ulp apart (two machines' exp) made the last cell ambiguous on one
    # machine only, and every later draw differed
    from ldpkit.unary import UnaryEncoding

    mech = IDUE([eps / 2, eps, eps, eps], model="opt1")
    ref = sample_histograms(from_mechanism(UnaryEncoding(mech.a, mech.b)), range(4), 100_000, rng=3)
    for i in range(4):
        for toward in (0.0, 1.0):
            b = mech.b.copy()
            b[i] = np.nextafter(b[i], toward)
            hist = sample_histograms(from_mechanism(UnaryEncoding(mech.a, b)), range(4), 100_000, rng=3)
            np.testing.assert_array_equal(hist, ref)


def test_channel_histograms_do_not_depend_on_the_last_bit_of_an_entry() -> None:
    # a row with equal entries (GRR's, a mutant's): numpy's multinomial met the conditional
    # probability 1/2 plus or minus an ulp and switched algorithm, so one ulp changed the histogram
    matrix = GRR(5, 1.0).channel().to_explicit().matrix
    ref = [from_channel(matrix).counts(x, 1_000_000, np.random.default_rng(x)) for x in range(5)]
    for j in range(5):
        for toward in (0.0, 1.0):
            moved = matrix.copy()
            moved[:, j] = np.nextafter(moved[:, j], toward)
            assert all(np.array_equal(from_channel(moved).counts(x, 1_000_000, np.random.default_rng(x)), ref[x])
                       for x in range(5)), (j, toward)
