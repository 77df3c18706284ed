"""Tests for ldpkit.padding: sampling law, channel mixture, bias, variance, simulation, bad inputs.

The generic checks on item sets of at most ``ell`` items (sampling law of the whole
mechanism against its channel, declared guarantee, unbiasedness with the declared variance,
aggregate simulation against the per-user path, bad input) run on every registered
Padding-and-Sampling instance in ``tests/test_contract.py``; this file checks the pieces
(padding and sampling, the mixture channel, the variance decomposition) and the overflow
case ``|v| > ell``, which the contract does not draw.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from conftest import EstimatesByInner
from ldpkit.base import FrequencyOracle
from ldpkit.grr import GRR
from ldpkit.olh import OLH
from ldpkit.padding import PaddingSampling
from ldpkit.sets import ItemSets, as_itemsets
from ldpkit.testing import assert_same_distribution, assert_unbiased, assert_variance
from ldpkit.unary import OUE
from ldpkit.urr import URR
from ldpkit import accountant


def _random_sets(rng: np.random.Generator, n: int, d: int, max_size: int) -> list[np.ndarray]:
    sizes = rng.integers(0, max_size + 1, size=n)
    return [rng.choice(d, size=s, replace=False) for s in sizes]


def _sampling_row(v: list[int], d: int, ell: int) -> np.ndarray:
    """Independent reference: enumerate every padding choice and every sampled position."""
    row = np.zeros(d + ell)
    if len(v) >= ell:
        for x in v:  # keeping a random ell-subset then sampling one: each item 1/|v|
            row[x] += 1 / len(v)
        return row
    pads = list(itertools.combinations(range(d, d + ell), ell - len(v)))
    for pad in pads:
        padded = list(v) + list(pad)
        for x in padded:
            row[x] += 1 / (len(pads) * ell)
    return row


# ---------------------------------------------------------------------------- item sets


def test_as_itemsets_roundtrip_and_empty_sets() -> None:
    sets = as_itemsets([[2, 0], [], np.array([1]), [3], {3, 1}], 4)
    assert isinstance(sets, ItemSets) and len(sets) == 5
    assert sets.to_lists() == [[2, 0], [], [1], [3], [1, 3]]
    sets = as_itemsets(sets.to_lists()[:4], 4)
    np.testing.assert_array_equal(sets.sizes, [2, 0, 1, 1])
    np.testing.assert_array_equal(sets.true_counts(), [1, 1, 1, 1])
    assert as_itemsets(sets, 4) is sets
    # an empty set always samples a dummy item
    ps = PaddingSampling(lambda k: GRR(k, 1.0), 4, 3)
    s = ps.sample([[]] * 1000, rng=1)
    assert np.all((s >= 4) & (s < 7))


@pytest.mark.parametrize(
    ("itemsets", "match"),
    [
        ([], "empty"),
        ([[0, 1], [1, 5]], "user 1 holds item 5"),
        ([[0, -1]], "item -1"),
        ([[0, 2, 0]], "more than once"),
        ([[[0, 1]]], "shape"),
        ([[0.5]], "integer"),
        ([[True]], "integer"),
        (np.zeros((2, 2, 2), dtype=int), "shape"),
        (7, "sequence"),
    ],
)
def test_bad_itemsets(itemsets: Any, match: str) -> None:
    ps = PaddingSampling(lambda k: GRR(k, 1.0), 4, 2)
    with pytest.raises(ValueError, match=match):
        ps.sample(itemsets, rng=0)


def test_bad_csr_and_domain() -> None:
    with pytest.raises(ValueError, match="d=3"):
        as_itemsets(ItemSets(np.array([0]), np.array([0, 1]), 3), 4)
    with pytest.raises(ValueError, match="offsets"):
        as_itemsets(ItemSets(np.array([0, 1]), np.array([0, 1]), 4), 4)


def test_bad_construction() -> None:
    with pytest.raises(ValueError, match="callable"):
        PaddingSampling(GRR(5, 1.0), 3, 2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ell must be"):
        PaddingSampling(lambda k: GRR(k, 1.0), 3, 0)
    with pytest.raises(ValueError, match="d must be"):
        PaddingSampling(lambda k: GRR(k, 1.0), 0, 2)
    with pytest.raises(ValueError, match="expected 5"):
        PaddingSampling(lambda k: GRR(k + 1, 1.0), 3, 2)
    with pytest.raises(ValueError, match="FrequencyOracle"):
        PaddingSampling(lambda k: "not an oracle", 3, 2)  # type: ignore[arg-type, return-value]
    with pytest.raises(ValueError, match="trials"):
        PaddingSampling(lambda k: GRR(k, 1.0), 3, 2).simulate([[0]], trials=0)


# ---------------------------------------------------------------------------- sampling law


@settings(max_examples=40, deadline=None)
@given(
    d=st.integers(1, 6),
    ell=st.integers(1, 4),
    data=st.data(),
)
def test_sampling_probabilities_match_enumeration(d: int, ell: int, data: st.DataObject) -> None:
    sets = data.draw(
        st.lists(st.lists(st.integers(0, d - 1), unique=True, max_size=d), min_size=1, max_size=6)
    )
    ps = PaddingSampling(lambda k: GRR(k, 1.0), d, ell)
    w = ps.sampling_probabilities(sets)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-12)
    for u, v in enumerate(sets):
        np.testing.assert_allclose(w[u], _sampling_row(v, d, ell), atol=1e-12)
    exp = ps.expected_counts(sets)
    true = as_itemsets(sets, d).true_counts()
    assert np.all(exp <= true + 1e-9)
    if all(len(v) <= ell for v in sets):
        np.testing.assert_allclose(exp, true, atol=1e-9)
    else:
        want = true - np.array([sum(1 - ell / len(v) for v in sets if i in v and len(v) > ell) for i in range(d)])
        np.testing.assert_allclose(exp, want, atol=1e-9)


def test_sample_matches_probabilities() -> None:
    d, ell, reps = 5, 3, 20000
    base = [[0], [1, 2, 3, 4], [], [2, 4]]
    ps = PaddingSampling(lambda k: GRR(k, 1.0), d, ell)
    w = ps.sampling_probabilities(base)
    rng = np.random.default_rng(4)
    sampled = ps.sample(base * reps, rng).reshape(reps, len(base))
    for u in range(len(base)):
        counts = np.bincount(sampled[:, u], minlength=d + ell)
        support = w[u] > 0
        assert np.all(counts[~support] == 0)
        _, pval = stats.chisquare(counts[support], reps * w[u, support])
        assert pval > 1e-6, (u, counts)


def test_sampled_counts_moments() -> None:
    """Sampled counts: total n per trial, mean and variance from the sampling probabilities."""
    d, ell, reps = 5, 3, 4000
    base = [[0], [1, 2, 3, 4], [], [2, 4], [0, 1, 2, 3, 4]]
    ps = PaddingSampling(lambda k: GRR(k, 1.0), d, ell)
    w = ps.sampling_probabilities(base)
    counts = ps.sampled_counts(base, rng=11, trials=reps)
    assert counts.shape == (reps, d + ell)
    assert np.all(counts.sum(axis=1) == len(base))
    mean, var = w.sum(axis=0), (w * (1 - w)).sum(axis=0)
    z = np.abs(counts.mean(axis=0) - mean) / np.sqrt(var / reps)
    assert np.all(z < 5), z
    assert ps.sampled_counts(base, rng=3).shape == (d + ell,)
    np.testing.assert_array_equal(ps.sampled_counts(base, rng=3), ps.sampled_counts(base, rng=3))
    with pytest.raises(ValueError, match="trials"):
        ps.sampled_counts(base, rng=3, trials=0)


# ---------------------------------------------------------------------------- accounting


@pytest.mark.parametrize(
    "factory",
    [lambda k: GRR(k, 1.0), lambda k: OUE(k, 1.0), lambda k: OLH(k, 1.0, g=3)],
    ids=["grr", "oue", "olh"],
)
@pytest.mark.parametrize("ell", [1, 2, 4])
def test_channel_is_mixture_of_inner_rows(factory: Any, ell: int) -> None:
    d = 3
    ps = PaddingSampling(factory, d, ell)
    ch = ps.channel()
    inner = ps.inner.channel().to_explicit().matrix
    all_sets = [list(c) for r in range(d + 1) for c in itertools.combinations(range(d), r)]
    assert ch.n_inputs == len(all_sets) == 2**d
    for row, v in zip(ch.matrix, all_sets):
        np.testing.assert_allclose(row, _sampling_row(v, d, ell) @ inner, atol=1e-14)
    np.testing.assert_allclose(ch.matrix.sum(axis=1), 1.0, atol=1e-12)
    assert accountant.ldp_epsilon(ch) <= accountant.ldp_epsilon(ps.inner.channel()) + 1e-12
    assert ps.epsilon == 1.0


def test_channel_reaches_inner_epsilon_for_full_sets() -> None:
    """With OUE and |v| >= ell, disjoint full sets reach e^eps (the bound can be tight)."""
    ps = PaddingSampling(lambda k: OUE(k, 1.0), 4, 2)
    ch = ps.channel([[0, 1], [2, 3]])
    assert accountant.ldp_epsilon(ch) == pytest.approx(1.0)


def test_channel_limits() -> None:
    with pytest.raises(ValueError, match="MAX_ENUMERATED_D"):
        PaddingSampling(lambda k: GRR(k, 1.0), 11, 2).channel()
    with pytest.raises(ValueError, match="too large"):
        PaddingSampling(lambda k: OUE(k, 1.0), 10, 8).channel([[0]])


# ---------------------------------------------------------------------------- estimator


def _mixture_variance(ps: PaddingSampling, sets: Any) -> np.ndarray:
    """Independent exact variance for a pure inner oracle: per-user support probabilities.

    User u supports real item i with probability P_ui = pi_ui p_i + (1 - pi_ui) q_i, users are
    independent and the estimate is ell (C_i - n q_i)/(p_i - q_i), so
    Var = ell^2 sum_u P_ui (1 - P_ui) / (p_i - q_i)^2.
    """
    w = ps.sampling_probabilities(sets)[:, : ps.d]
    p, q = ps.inner.p_support[: ps.d], ps.inner.q_support[: ps.d]
    prob = w * p + (1 - w) * q
    return ps.ell**2 * np.sum(prob * (1 - prob), axis=0) / (p - q) ** 2


@pytest.mark.parametrize(
    "factory",
    [lambda k: GRR(k, 2.0), lambda k: OUE(k, 0.7), lambda k: URR(k, 1.0, [0, 1, k - 1])],
    ids=["grr", "oue", "urr"],
)
@pytest.mark.parametrize("ell", [1, 3])
def test_variance_equals_per_user_mixture(factory: Any, ell: int) -> None:
    rng = np.random.default_rng(8)
    sets = _random_sets(rng, 300, 6, 5)
    ps = PaddingSampling(factory, 6, ell)
    np.testing.assert_allclose(ps.variance(sets), _mixture_variance(ps, sets), rtol=1e-10)


class _OpaqueGRR(EstimatesByInner, FrequencyOracle):
    """GRR behind the generic FrequencyOracle interface (not a SupportOracle)."""

    def __init__(self, d: int, eps: float) -> None:
        super().__init__(d)
        self._inner = GRR(d, eps)

    @property
    def epsilon(self) -> float:
        return self._inner.epsilon

    def channel(self):  # type: ignore[no-untyped-def]
        return self._inner.channel()

    def perturb(self, items: Any, rng: Any = None) -> Any:
        return self._inner.perturb(items, rng)

    def aggregate(self, reports: Any) -> np.ndarray:
        return self._inner.aggregate(reports)

    def n_reports(self, reports: Any) -> int:
        return self._inner.n_reports(reports)


def test_generic_inner_variance_path() -> None:
    rng = np.random.default_rng(9)
    sets = _random_sets(rng, 200, 5, 4)
    pure = PaddingSampling(lambda k: GRR(k, 1.5), 5, 2)
    opaque = PaddingSampling(lambda k: _OpaqueGRR(k, 1.5), 5, 2)
    np.testing.assert_allclose(opaque.variance(sets), pure.variance(sets), rtol=1e-10)


def test_bias_when_sets_overflow() -> None:
    """|v| > ell: the estimator is unbiased for expected_counts, below the true counts."""
    rng = np.random.default_rng(12)
    d, ell, r_trials = 6, 2, 3000
    sets = _random_sets(rng, 1000, d, 6)
    sets = [v for v in sets if v.size]  # keep sets of size 1..6, many above ell
    ps = PaddingSampling(lambda k: GRR(k, 4.0), d, ell)
    truth = as_itemsets(sets, d).true_counts()
    expected = ps.expected_counts(sets)
    formula = np.array([sum(min(1.0, ell / v.size) for v in sets if i in v) for i in range(d)])
    np.testing.assert_allclose(expected, formula)
    est = ps.simulate(sets, rng=13, trials=r_trials)
    var = ps.variance(sets)
    assert_unbiased(est, expected, var)
    # the bias is real: the true counts are far outside the Monte Carlo error
    se = np.sqrt(var / r_trials)
    assert np.all(truth - est.mean(axis=0) > 10 * se)
    bias = expected - truth
    assert ps.mse(sets) == pytest.approx(float(np.sum(var) + np.sum(bias**2)))


def test_variance_sampling_term_monte_carlo() -> None:
    """Large epsilon: the sampling term Var(S_i) dominates and must be matched."""
    rng = np.random.default_rng(14)
    d, ell, r_trials = 6, 3, 6000
    sets = _random_sets(rng, 400, d, 5)
    ps = PaddingSampling(lambda k: GRR(k, 9.0), d, ell)
    var = ps.variance(sets)
    _, var_s = ps._sampled_moments(as_itemsets(sets, d))
    assert np.all(ell**2 * var_s[:d] > 0.9 * var), "sampling term should dominate here"
    est = ps.simulate(sets, rng=15, trials=r_trials)
    assert_unbiased(est, ps.expected_counts(sets), var)
    assert_variance(est, var)
    # dropping the sampling term would be rejected by this check on every item
    inner_only = var - ell**2 * var_s[:d]
    for i in range(d):
        with pytest.raises(AssertionError, match="variance ratio"):
            assert_variance(est[:, [i]], inner_only[[i]])


@pytest.mark.parametrize(
    "factory",
    [lambda k: OUE(k, 1.0), lambda k: OLH(k, 1.0)],
    ids=["oue", "olh"],
)
def test_simulate_agrees_with_per_user_when_sets_overflow(factory: Any) -> None:
    """Sets of up to 5 items with ell = 3 (biased case) and an OLH inner oracle: not in the contract."""
    rng = np.random.default_rng(16)
    d, ell, r_trials = 6, 3, 400
    sets = _random_sets(rng, 500, d, 5)
    ps = PaddingSampling(factory, d, ell)
    var = ps.variance(sets)
    gen = np.random.default_rng(17)
    per_user = np.array([ps.estimate_itemsets(sets, gen) for _ in range(r_trials)])
    sim = ps.simulate(sets, rng=18, trials=r_trials)
    assert_same_distribution(per_user, sim, var)
    for sample in (per_user, sim):
        assert_unbiased(sample, ps.expected_counts(sets), var)
        assert_variance(sample, var)


def test_per_user_path_shapes() -> None:
    ps = PaddingSampling(lambda k: OUE(k, 1.0), 5, 2)
    sets = [[0, 1], [2], [], [4, 3, 1]]
    reports = ps.perturb(sets, rng=0)
    assert len(reports) == 4
    assert ps.aggregate(reports).shape == (7,)
    assert ps.estimate(reports).shape == (5,)
    assert ps.simulate(sets, rng=0).shape == (5,)
    assert ps.simulate(sets, rng=0, trials=3).shape == (3, 5)
    assert "ell=2" in repr(ps)
