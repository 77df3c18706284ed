"""ChannelOracle: the frequency oracle of any explicit channel.

Checked against the mechanisms whose estimators are derived by hand (GRR, uRR: same estimates
and variances to rounding), against a seeded Monte Carlo of its own aggregate simulator (the
whole covariance matrix, with a tolerance derived from the covariance itself), on a
non-square channel (pseudo-inverse estimator), on EM/MLE, on sampling support and on bad
input.  The generic contract (sampling law, guarantees, simulation vs per-user) runs on two
registered instances in ``tests/test_contract.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from ldpkit import accountant

from ldpkit import GRR, URR, ChannelOracle
from ldpkit.testing import Z, assert_unbiased, assert_variance

#: a 3-input, 5-output channel (k > d): the estimator uses the Moore-Penrose left inverse
NON_SQUARE = np.array(
    [
        [0.40, 0.10, 0.20, 0.05, 0.25],
        [0.10, 0.45, 0.10, 0.25, 0.10],
        [0.15, 0.15, 0.40, 0.20, 0.10],
    ]
)


def _counts(d: int, n: int = 1_000) -> np.ndarray:
    """Skewed counts over ``d`` items, the last item held by nobody."""
    w = 1.0 / np.arange(1, d + 1)
    w[-1] = 0.0
    c = np.floor(n * w / w.sum()).astype(np.int64)
    c[0] += n - c.sum()
    return c


# ------------------------------------------------------------------ same estimator as GRR and uRR
MECHANISMS = [
    *(GRR(d, eps) for d in (2, 5, 8) for eps in (0.4, 1.0, 3.0)),
    URR(6, 0.5, [0, 3]),
    URR(6, 2.0, [0, 3]),
    URR(5, 0.3, [4]),
    URR(4, 1.5, [0, 1, 2, 3]),  # every item sensitive: GRR
    URR(7, 4.0, [1, 2, 3, 4, 5]),
]


@pytest.mark.parametrize("mech", MECHANISMS, ids=repr)
def test_same_estimates_and_variances_as_the_hand_derived_classes(mech: Any) -> None:
    """For a square invertible channel the left inverse is unique: same estimator exactly.

    GRR and uRR derive ``(C - n q)/(p - q)`` and ``[c p(1-p) + (n-c) q(1-q)]/(p-q)^2`` by
    hand; the oracle computes ``A Y`` and ``sum_y A_iy^2 mu_y - c_i`` from the matrix alone.
    """
    oracle = ChannelOracle(mech.channel())
    counts = _counts(mech.d)
    n = int(counts.sum())
    np.testing.assert_allclose(oracle.left_inverse @ oracle.matrix.T, np.eye(mech.d), atol=1e-12)
    # same reports, same estimates (several report vectors)
    items = np.repeat(np.arange(mech.d), counts)
    for seed in range(3):
        reports = mech.perturb(items, rng=seed)
        # the reports carry GRR's provenance, which the channel oracle refuses; the same items as a
        # plain array are exactly what the channel describes
        with pytest.raises(ValueError, match="reports were made by"):
            oracle.estimate(reports)
        plain = np.asarray(reports)
        np.testing.assert_allclose(oracle.estimate(plain), mech.estimate(reports), rtol=1e-9, atol=1e-9 * n)
    # same exact variances, including the zero variance of an unheld non-sensitive uRR item
    np.testing.assert_allclose(oracle.variance(counts), mech.variance(counts), rtol=1e-9, atol=1e-9 * n)
    np.testing.assert_allclose(np.diag(oracle.covariance(counts)), oracle.variance(counts), rtol=1e-12, atol=1e-9)
    # the tight epsilon by enumeration is the hand-derived class's declared one (inf for uRR with
    # non-sensitive items); the channel oracle declares what it is told, and verify checks it
    assert accountant.ldp_epsilon(oracle) == pytest.approx(mech.epsilon, rel=1e-12)
    assert oracle.epsilon == math.inf and oracle.guarantees() == []
    if math.isfinite(mech.epsilon):
        assert accountant.verify(ChannelOracle(mech.channel(), epsilon=mech.epsilon))
        assert not accountant.verify(ChannelOracle(mech.channel(), epsilon=mech.epsilon * (1 - 1e-6)))


def test_square_channel_estimates_always_sum_to_n() -> None:
    """``Q 1 = 1`` makes ``1^T A = 1^T`` for ``A = Q^{-T}``: the covariance rows sum to zero."""
    oracle = ChannelOracle(URR(6, 1.0, [0, 3]).channel())
    counts = _counts(6)
    np.testing.assert_allclose(oracle.covariance(counts).sum(axis=1), 0.0, atol=1e-8)
    est = oracle.simulate(counts, rng=0, trials=20)
    np.testing.assert_allclose(est.sum(axis=1), counts.sum(), rtol=1e-12)


# ------------------------------------------------------------------ covariance by Monte Carlo
def _covariance_mismatch(samples: np.ndarray, cov: np.ndarray, z: float = Z) -> np.ndarray:
    """Entries where the sample covariance of ``R`` draws is more than ``z`` sd from ``cov``.

    For near-normal draws the sample covariance ``s_ij`` has variance
    ``(S_ii S_jj + S_ij^2) / (R - 1)`` (Wishart), computed here from the *claimed* ``cov``.
    """
    r = samples.shape[0]
    emp = np.cov(samples, rowvar=False)
    sd = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / (r - 1))
    return np.abs(emp - cov) > z * sd


@pytest.mark.parametrize(
    "matrix",
    [URR(5, 1.0, [0, 2]).channel().matrix, NON_SQUARE],
    ids=["urr-square", "non-square"],
)
def test_covariance_matches_a_seeded_monte_carlo(matrix: np.ndarray) -> None:
    oracle = ChannelOracle(matrix)
    d = oracle.d
    counts = np.array([400, 250, 150, 120, 80][:d])
    samples = oracle.simulate(counts, rng=12, trials=4_000)
    cov = oracle.covariance(counts)
    assert not _covariance_mismatch(samples, cov).any(), np.cov(samples, rowvar=False) - cov
    assert_unbiased(samples, counts, np.diag(cov))
    # Stated alternative: dropping the "- diag(c)" term (A diag(mu) A^T alone, the covariance
    # if the output counts were independent Poisson) is rejected by the same check: the shift
    # c_i exceeds 2 Z sd on some diagonal entry, so the rejection is near-certain.
    wrong = cov + np.diag(counts.astype(float))
    sd_diag = np.sqrt(2 * np.diag(wrong) ** 2 / (samples.shape[0] - 1))
    assert np.any(counts > 2 * Z * sd_diag)
    assert _covariance_mismatch(samples, wrong).any()


# ------------------------------------------------------------------ non-square channel
def test_non_square_channel_is_unbiased() -> None:
    oracle = ChannelOracle(NON_SQUARE)
    assert oracle.left_inverse.shape == (3, 5)
    np.testing.assert_allclose(oracle.left_inverse @ NON_SQUARE.T, np.eye(3), atol=1e-12)
    counts = np.array([600, 300, 100])
    r = 3_000
    var = oracle.variance(counts)
    # power: a bias above 2 Z sqrt(Var / R) on an item is rejected with probability > 0.98;
    # here that is under 1% of n for every item
    assert np.all(2 * Z * np.sqrt(var / r) < 0.01 * counts.sum())
    sim = oracle.simulate(counts, rng=21, trials=r)
    assert_unbiased(sim, counts, var)
    assert_variance(sim, var)
    # the per-user path gives the same law
    users = np.repeat(np.arange(3), counts)
    gen = np.random.default_rng(22)
    per = np.stack([oracle.estimate(oracle.perturb(users, gen)) for _ in range(300)])
    assert_unbiased(per, counts, var)


def test_rank_deficient_channel_is_refused() -> None:
    # row 1 equals row 0: inputs 0 and 1 cannot be told apart, no unbiased estimator exists
    with pytest.raises(ValueError, match="rank 2 < 3"):
        ChannelOracle([[0.5, 0.3, 0.2], [0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])
    # a row that is a mixture of two others
    with pytest.raises(ValueError, match="rank 2 < 3"):
        ChannelOracle([[0.6, 0.4, 0.0], [0.0, 0.4, 0.6], [0.3, 0.4, 0.3]])
    # fewer outputs than inputs
    with pytest.raises(ValueError, match="rank 2 < 3"):
        ChannelOracle([[0.9, 0.1], [0.5, 0.5], [0.1, 0.9]])


# ------------------------------------------------------------------ maximum likelihood
def test_mle_is_a_probability_vector_at_least_as_accurate_as_the_unbiased_estimate() -> None:
    """Small budget and unheld items: the unbiased estimate goes negative, the MLE cannot."""
    oracle = ChannelOracle(GRR(6, 0.5).channel())
    counts = np.array([200, 100, 50, 0, 0, 150])
    n = int(counts.sum())
    reports = oracle.perturb(np.repeat(np.arange(6), counts), rng=2)
    unbiased = oracle.estimate(reports)
    assert unbiased.min() < 0  # the case is not trivial
    res = oracle.mle(oracle.aggregate(reports))
    assert res.converged and res.n == n
    freq = res.frequencies
    assert np.all(freq >= 0) and freq.sum() == pytest.approx(1.0, abs=1e-12)
    mle = oracle.estimate_mle(reports)
    np.testing.assert_allclose(mle, n * freq, rtol=1e-12)
    loss_mle, loss_unbiased = float(np.sum((mle - counts) ** 2)), float(np.sum((unbiased - counts) ** 2))
    assert loss_mle <= loss_unbiased, (loss_mle, loss_unbiased)


def test_mle_equals_the_unbiased_estimate_inside_the_simplex() -> None:
    """An interior unbiased estimate of a square channel fits the output counts exactly: it is the MLE."""
    oracle = ChannelOracle(GRR(4, 2.0).channel())
    counts = np.array([4_000, 3_000, 2_000, 1_000])
    reports = oracle.perturb(np.repeat(np.arange(4), counts), rng=3)
    unbiased = oracle.estimate(reports)
    assert unbiased.min() > 0
    mle = oracle.estimate_mle(reports, tol=1e-15, max_iter=100_000)
    np.testing.assert_allclose(mle, unbiased, rtol=1e-5)


# ------------------------------------------------------------------ sampling support
ZEROS = np.array(
    [
        [0.0, 0.5, 0.0, 0.3, 0.2, 0.0],
        [0.0, 0.0, 0.6, 0.0, 0.4, 0.0],
        [0.1, 0.0, 0.0, 0.9, 0.0, 0.0],
    ]
)


class _FixedUniform(np.random.Generator):
    """A Generator whose ``random`` returns one fixed value (to probe the inverse CDF's edges)."""

    def __init__(self, value: float) -> None:
        super().__init__(np.random.PCG64(0))
        self.value = value

    def random(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        return np.full(size, self.value)


def test_perturb_never_returns_a_zero_probability_output() -> None:
    """Leading, inner and trailing zero columns (column 5 is impossible for every input)."""
    oracle = ChannelOracle(ZEROS)
    for x in range(3):
        out = oracle.perturb(np.full(100_000, x), rng=x)
        assert np.all(ZEROS[x, out] > 0), np.unique(out[ZEROS[x, out] == 0])
        # every possible output does occur
        assert set(np.unique(out)) == set(np.flatnonzero(ZEROS[x]))
    # the smallest uniform (exactly 0) skips leading zero columns
    np.testing.assert_array_equal(oracle.perturb([0, 1, 2], rng=_FixedUniform(0.0)), [1, 2, 0])


def test_largest_uniform_never_selects_a_trailing_zero_column() -> None:
    # ten entries of 0.1 sum to 0.9999999999999999 in floating point, below the largest
    # value 1 - 2^-53 that Generator.random can return
    row = [0.1] * 10 + [0.0]
    oracle = ChannelOracle([row, [0.0] * 10 + [1.0]])
    out = oracle.perturb([0], rng=_FixedUniform(1.0 - 2.0**-53))
    assert oracle.matrix[0, out[0]] > 0, f"output {out[0]} has probability 0"


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "matrix, match",
    [
        ([[0.5, 0.4], [0.5, 0.5]], "row 0 sums to"),
        ([[1.2, -0.2], [0.5, 0.5]], "channel matrix"),
        ([[math.nan, 1.0], [0.5, 0.5]], "channel matrix"),
        ([0.5, 0.5], "2-d|at least 2 inputs"),
        ([[0.5, 0.5]], "at least 2 inputs"),
    ],
    ids=["row-sum", "negative", "nan", "1-d", "one-input"],
)
def test_bad_matrix(matrix: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ChannelOracle(matrix)


def test_bad_counts_reports_and_support() -> None:
    oracle = ChannelOracle(NON_SQUARE)  # d = 3 inputs, k = 5 outputs
    for method in (oracle.variance, oracle.covariance, oracle.simulate):
        with pytest.raises(ValueError, match="length"):
            method([1, 2])
        with pytest.raises(ValueError, match="length"):
            method([1, 2, 3, 4, 5])
    # reports are output indices 0..k-1
    for bad in ([0, 5], [-1, 0], [0.5]):
        with pytest.raises(ValueError):
            oracle.aggregate(bad)
        with pytest.raises(ValueError):
            oracle.estimate(bad)
    # output counts: shape k, and they must add up to n
    with pytest.raises(ValueError, match="shape"):
        oracle.estimate_from_support(np.array([1, 2, 3]), 6)
    with pytest.raises(ValueError, match="sum to"):
        oracle.estimate_from_support(np.array([1, 2, 3, 0, 0]), 7)
    with pytest.raises(ValueError, match="length"):
        oracle.mle([1, 2, 3])
