"""Tests for ldpkit.metrics: hand-computed values, invariances, tie-breaking and validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpkit import GRR
from ldpkit.metrics import (
    kl_divergence,
    l1_loss,
    l2_loss,
    mse,
    ncr,
    relative_error_sum,
    relative_error_topk,
    root_average_mse,
    squared_error_topk,
    top_k_items,
    topk_kl_divergence,
    topk_precision,
)

TRUE = np.array([10, 40, 30, 20])
EST = np.array([12, 35, 33, 15])  # errors +2, -5, +3, -5
N = 100


# --------------------------------------------------------------------------- hand-computed values


def test_mse_normalisations_by_hand():
    assert mse(TRUE, EST) == pytest.approx(63 / 100)  # 4 + 25 + 9 + 25 = 63, divided by n
    assert mse(TRUE, EST, normalisation="per_user", n=50) == pytest.approx(63 / 50)
    assert mse(TRUE, EST, normalisation="sum") == pytest.approx(63)
    assert mse(TRUE, EST, normalisation="mean") == pytest.approx(63 / 4)


def test_mse_per_user_is_n_times_frequency_l2():
    assert mse(TRUE, EST) == pytest.approx(N * l2_loss(TRUE / N, EST / N))


def test_l1_l2_by_hand():
    p, p_hat = TRUE / N, EST / N
    assert l2_loss(p, p_hat) == pytest.approx(0.02**2 + 0.05**2 + 0.03**2 + 0.05**2)
    assert l1_loss(p, p_hat) == pytest.approx(0.15)


def test_relative_errors_by_hand():
    # true top-3: items 1 (40), 2 (30), 3 (20); ratios 5/40, 3/30, 5/20
    ratios = [0.125, 0.1, 0.25]
    assert relative_error_topk(TRUE, EST, 3) == pytest.approx(np.mean(ratios))
    assert relative_error_topk(TRUE, EST, 3, aggregate="median") == pytest.approx(0.125)
    assert relative_error_topk(TRUE, EST, 1) == pytest.approx(0.125)
    # IPLDP eq. (25): summed over all items, item 0 contributes 2/10
    assert relative_error_sum(TRUE, EST) == pytest.approx(0.2 + 0.125 + 0.1 + 0.25)


def test_relative_error_estimated_candidates():
    est = np.array([50, 35, 5, 15])  # estimated top-2: items 0 and 1
    assert relative_error_topk(TRUE, est, 2, candidates="estimated") == pytest.approx((40 / 10 + 5 / 40) / 2)
    assert relative_error_topk(TRUE, est, 2, candidates="true") == pytest.approx((5 / 40 + 25 / 30) / 2)


def test_squared_error_topk_by_hand():
    f, f_hat = TRUE / N, EST / N
    assert squared_error_topk(f, f_hat, 3) == pytest.approx((0.05**2 + 0.03**2 + 0.05**2) / 3)
    assert squared_error_topk(f, f_hat, 3, reduction="sum") == pytest.approx(0.0059)
    est = np.array([50, 35, 5, 15])  # estimated top-2 = items 0, 1
    assert squared_error_topk(TRUE, est, 2, candidates="estimated") == pytest.approx((40**2 + 5**2) / 2)


def test_precision_and_ncr_by_hand():
    est = np.array([25, 35, 33, 15])  # estimated top-3 = {1, 2, 0}; true top-3 = {1, 2, 3}
    assert topk_precision(TRUE, est, 3) == pytest.approx(2 / 3)
    # scores by true rank: item 1 -> 3, item 2 -> 2, item 3 -> 1, item 0 -> 0
    assert ncr(TRUE, est, 3) == pytest.approx((3 + 2 + 0) / 6)
    assert ncr(TRUE, EST, 3) == pytest.approx(1.0)
    # missing the top item costs more than missing the k-th
    miss_top = np.array([25, 0, 33, 15])  # returns {0, 2, 3}: scores 0 + 2 + 1
    miss_last = np.array([25, 35, 33, 0])  # returns {0, 1, 2}: scores 0 + 3 + 2
    assert ncr(TRUE, miss_top, 3) == pytest.approx(3 / 6)
    assert ncr(TRUE, miss_last, 3) == pytest.approx(5 / 6)
    assert topk_precision(TRUE, miss_top, 3) == topk_precision(TRUE, miss_last, 3)


def test_kl_by_hand():
    assert kl_divergence([0.5, 0.5], [0.25, 0.75]) == pytest.approx(0.5 * math.log(4 / 3))
    assert kl_divergence([1.0, 0.0], [0.5, 0.5]) == pytest.approx(math.log(2))  # 0 log 0 = 0
    # smoothing: q -> (q + s)/(1 + d s) = (0.25, 0.75) for s = 0.5
    assert kl_divergence([1.0, 0.0], [0.0, 1.0], smoothing=0.5) == pytest.approx(math.log(4))
    # direction: KL(p||q) != KL(q||p)
    assert kl_divergence([0.25, 0.75], [0.5, 0.5]) != pytest.approx(kl_divergence([0.5, 0.5], [0.25, 0.75]))


def test_topk_kl_by_hand():
    # true top-2 = items 1, 2: p = (40, 30)/70, q = (35, 33)/68
    p = np.array([40, 30]) / 70
    q = np.array([35, 33]) / 68
    assert topk_kl_divergence(TRUE, EST, 2) == pytest.approx(float(np.sum(p * np.log(p / q))))
    # negative estimates are clipped before renormalising: q = (35, 0) -> infinite without smoothing
    with pytest.raises(ValueError, match=r"q\[1\] = 0"):
        topk_kl_divergence(TRUE, [12, 35, -3, 15], 2)
    assert topk_kl_divergence(TRUE, [12, 35, -3, 15], 2, smoothing=0.01) > 0


def test_root_average_mse_by_hand():
    assert root_average_mse(400, 100) == pytest.approx(2.0)
    assert root_average_mse(0, 7) == 0.0


# --------------------------------------------------------------------------- ties


def test_top_k_ties_broken_by_item_index():
    np.testing.assert_array_equal(top_k_items([5, 5, 5, 1], 2), [0, 1])
    np.testing.assert_array_equal(top_k_items([1, 5, 3, 5], 3), [1, 3, 2])
    np.testing.assert_array_equal(top_k_items([-1, -1, 0], 1), [2])


def test_ties_in_metrics_are_deterministic():
    true = np.array([5, 5, 5, 1])  # true top-2 = {0, 1} by index
    assert topk_precision(true, [1, 1, 1, 1], 2) == 1.0  # estimated top-2 = {0, 1}
    assert topk_precision(true, [0, 0, 1, 1], 2) == 0.0  # estimated top-2 = {2, 3}
    assert ncr(true, [0, 1, 1, 0], 2) == pytest.approx(1 / 3)  # returns {1, 2}: item 1 scores 1
    assert relative_error_topk(true, [5, 5, 0, 0], 2) == 0.0  # item 2 not evaluated


# --------------------------------------------------------------------------- properties


def _distinct_pair(draw, d):
    perm = draw(st.permutations(list(range(1, d + 1))))
    true = np.array(perm, dtype=float) * 3.0
    noise = np.array(draw(st.lists(st.integers(-5, 5), min_size=d, max_size=d)), dtype=float)
    est = true + noise + np.arange(d) * 1e-3  # distinct, so no ties in either ranking
    return true, est


@st.composite
def instances(draw):
    d = draw(st.integers(2, 8))
    true, est = _distinct_pair(draw, d)
    k = draw(st.integers(1, d))
    return true, est, k


@settings(max_examples=40, deadline=None)
@given(instances(), st.integers(0, 2**32 - 1))
def test_permutation_invariance(inst, seed):
    true, est, k = inst
    perm = np.random.default_rng(seed).permutation(true.size)
    t2, e2 = true[perm], est[perm]
    for f in (topk_precision, ncr, relative_error_topk, squared_error_topk):
        assert f(t2, e2, k) == pytest.approx(f(true, est, k))
    assert mse(t2, e2) == pytest.approx(mse(true, est))
    assert relative_error_sum(t2, e2) == pytest.approx(relative_error_sum(true, est))
    assert l1_loss(t2, e2) == pytest.approx(l1_loss(true, est))


@settings(max_examples=40, deadline=None)
@given(instances(), st.floats(0.01, 100))
def test_scaling_behaviour(inst, c):
    true, est, k = inst
    # scale-free metrics
    assert topk_precision(c * true, c * est, k) == topk_precision(true, est, k)
    assert ncr(c * true, c * est, k) == pytest.approx(ncr(true, est, k))
    assert relative_error_topk(c * true, c * est, k) == pytest.approx(relative_error_topk(true, est, k))
    assert relative_error_sum(c * true, c * est) == pytest.approx(relative_error_sum(true, est))
    if np.all(est[top_k_items(true, k)] > 0):
        assert topk_kl_divergence(c * true, c * est, k) == pytest.approx(topk_kl_divergence(true, est, k), abs=1e-12)
    # quadratic ones
    assert mse(c * true, c * est, normalisation="sum") == pytest.approx(c**2 * mse(true, est, normalisation="sum"))
    assert l2_loss(c * true, c * est) == pytest.approx(c**2 * l2_loss(true, est))
    assert squared_error_topk(c * true, c * est, k) == pytest.approx(c**2 * squared_error_topk(true, est, k))


@settings(max_examples=40, deadline=None)
@given(instances())
def test_ranking_metrics_depend_only_on_order(inst):
    true, est, k = inst
    mono = np.exp(est / 10)  # strictly increasing transform of the estimates
    assert topk_precision(true, mono, k) == topk_precision(true, est, k)
    assert ncr(true, mono, k) == ncr(true, est, k)


@settings(max_examples=40, deadline=None)
@given(instances())
def test_ranges_and_perfect_estimates(inst):
    true, est, k = inst
    assert 0 <= ncr(true, est, k) <= 1
    assert 0 <= topk_precision(true, est, k) <= 1
    assert (ncr(true, est, k) == 1) == (topk_precision(true, est, k) == 1)
    assert l1_loss(true, est) <= math.sqrt(true.size * l2_loss(true, est)) + 1e-9  # Cauchy-Schwarz
    assert ncr(true, true, k) == 1 and topk_precision(true, true, k) == 1
    assert relative_error_topk(true, true, k) == 0 and mse(true, true) == 0
    assert topk_kl_divergence(true, true, k) == pytest.approx(0, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6).flatmap(lambda d: st.tuples(*[st.floats(0.01, 1)] * (2 * d))))
def test_kl_nonnegative_and_zero_iff_equal(vals):
    d = len(vals) // 2
    p = np.array(vals[:d]) / sum(vals[:d])
    q = np.array(vals[d:]) / sum(vals[d:])
    assert kl_divergence(p, q) >= -1e-12
    assert kl_divergence(p, p) == pytest.approx(0, abs=1e-12)


def test_relative_error_topk_matches_idldp_formula():
    rng = np.random.default_rng(8)
    true = rng.integers(1, 1000, size=30).astype(float)
    est = true + rng.normal(0, 50, size=30)
    k = 10
    T = np.argsort(-true, kind="stable")[:k]
    expected = np.sum(np.abs(est[T] - true[T]) / true[T]) / k
    assert relative_error_topk(true, est, k) == pytest.approx(expected)


def test_mse_sum_matches_oracle_variance_on_average():
    # E[sum_i (c_hat_i - c_i)^2] = sum_i Var[c_hat_i] for the unbiased GRR estimator.
    g = GRR(6, 1.0)
    counts = np.array([400, 250, 150, 100, 60, 40])
    sims = g.simulate(counts, rng=31, trials=3000)
    per_trial = np.array([mse(counts, s, normalisation="sum") for s in sims])
    sd_mean = per_trial.std(ddof=1) / math.sqrt(per_trial.size)
    assert abs(per_trial.mean() - g.mse(counts)) < 5 * sd_mean
    per_user = np.mean([mse(counts, s) for s in sims])
    assert per_user == pytest.approx(per_trial.mean() / counts.sum())


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: mse([1, 2], [1, 2, 3]), "true_counts has length 2 but est_counts has length 3"),
        (lambda: mse([], []), "true_counts is empty"),
        (lambda: mse([1, np.nan], [1, 2]), "true_counts must be finite, got nan"),
        (lambda: mse([1, 2], [1, np.inf]), "est_counts must be finite, got inf"),
        (lambda: mse([1, -2], [1, 2]), "true_counts must be non-negative, got -2.0"),
        (lambda: mse([[1, 2]], [[1, 2]]), "1-d vector"),
        (lambda: mse(["a"], ["b"]), "numeric"),
        (lambda: mse([1, 2], [1, 2], normalisation="avg"), "normalisation must be one of .* got 'avg'"),
        (lambda: mse([1, 2], [1, 2], n=0), "n must be a finite positive real number, got 0"),
        (lambda: mse([0, 0], [1, 2]), "pass n explicitly"),
        (lambda: l2_loss([0.5, 0.5], [1.0]), "p has length 2 but p_hat has length 1"),
        (lambda: l1_loss([0.5, np.nan], [0.5, 0.5]), "p must be finite"),
        (lambda: topk_precision([1, 2, 3], [1, 2, 3], 0), "k must be an integer in 1..3, got 0"),
        (lambda: topk_precision([1, 2, 3], [1, 2, 3], 4), "got 4"),
        (lambda: ncr([1, 2, 3], [1, 2, 3], 1.5), "got 1.5"),
        (lambda: ncr([1, 2, 3], [1, 2, 3], True), "got True"),
        (lambda: top_k_items([1, 2], 3), "k must be an integer in 1..2"),
        (lambda: relative_error_topk([1, 2], [1, 2], 1, aggregate="max"), "aggregate .* got 'max'"),
        (lambda: relative_error_topk([1, 2], [1, 2], 1, candidates="x"), "candidates .* got 'x'"),
        (lambda: relative_error_topk([1, 2], [1, 2], 1, zero_truth="nan"), "zero_truth .* got 'nan'"),
        (lambda: relative_error_topk([0, 0, 5], [1, 1, 5], 2), "item 0 is 0"),  # T(2) = {2, 0}
        (lambda: relative_error_sum([3, 0, 5], [1, 1, 5]), "item 1 is 0"),
        (
            lambda: relative_error_topk([0, 0, 5], [1, 1, 0], 2, zero_truth="skip", candidates="estimated"),
            "every evaluated item",
        ),
        (lambda: squared_error_topk([1, 2], [1, 2], 1, reduction="median"), "reduction .* got 'median'"),
        (lambda: kl_divergence([0.5, 0.6], [0.5, 0.5]), "p must sum to 1"),
        (lambda: kl_divergence([0.5, 0.5], [1.5, -0.5]), "q must lie in"),
        (lambda: kl_divergence([0.5, 0.5], [1.0]), "q has length 1"),
        (lambda: kl_divergence([0.5, 0.5], [1.0, 0.0]), r"q\[1\] = 0 while p\[1\] = 0.5"),
        (lambda: kl_divergence([0.5, 0.5], [0.5, 0.5], smoothing=-1), "smoothing must be .* got -1"),
        (lambda: topk_kl_divergence([1, 2], [-1, -2], 2), "estimates are all <= 0"),
        (lambda: topk_kl_divergence([0, 0], [1, 2], 2), "true values sum to 0"),
        (lambda: root_average_mse(-1.0, 10), "total_mse must be .* got -1.0"),
        (lambda: root_average_mse(1.0, 0), "n must be .* got 0"),
    ],
)
def test_bad_inputs_raise_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_zero_truth_skip():
    # item 0 has true count 0: skipped, the mean is over the remaining evaluated items
    assert relative_error_topk([0, 10, 20], [3, 12, 20], 3, zero_truth="skip") == pytest.approx(0.2 / 2)
    assert relative_error_sum([0, 10, 20], [3, 12, 20], zero_truth="skip") == pytest.approx(0.2)
