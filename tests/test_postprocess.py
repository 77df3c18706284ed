"""Tests for ldpkit.postprocess: clip, Norm-Sub (exact simplex projection) and EM/MLE."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpkit import GRR, RAPPOR, ExplicitChannel
from ldpkit.postprocess import (
    EMConvergenceError,
    EMConvergenceWarning,
    EMResult,
    clip,
    em_estimate,
    norm_sub,
)

# --------------------------------------------------------------------------- helpers


def brute_force_projection(x: np.ndarray, total: float) -> np.ndarray:
    """Euclidean projection onto {y >= 0, sum y = total} by trying every support set.

    For a support S the closest point of the simplex face is x_S - delta with
    delta = (sum x_S - total)/|S|; the projection is the feasible candidate closest to x.
    """
    d = x.size
    best, best_dist = None, math.inf
    for r in range(1, d + 1):
        for support in itertools.combinations(range(d), r):
            s = list(support)
            delta = (x[s].sum() - total) / r
            y = np.zeros(d)
            y[s] = x[s] - delta
            if np.all(y >= -1e-12):
                dist = float(np.sum((x - y) ** 2))
                if dist < best_dist:
                    best, best_dist = y, dist
    return best


def sample_outputs(P: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Exact draw of the output counts: each input's users report independently via P[x]."""
    out = np.zeros(P.shape[1], dtype=np.int64)
    for x, c in enumerate(counts):
        out += rng.multinomial(int(c), P[x])
    return out


def random_channel(rng: np.random.Generator, d: int, k: int) -> np.ndarray:
    P = rng.random((d, k)) + 0.05
    return P / P.sum(axis=1, keepdims=True)


def random_channels_and_counts(seed: int, cases: int, ds: tuple[int, int], ks: tuple[int, int],
                               counts: tuple[int, int]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``cases`` random channels ``P`` (``d`` in ``range(*ds)`` inputs, ``k`` in ``range(*ks)`` outputs), each
    with output counts ``m`` in ``range(*counts)``, all drawn from one generator seeded by ``seed``."""
    rng = np.random.default_rng(seed)
    for _ in range(cases):
        d, k = int(rng.integers(*ds)), int(rng.integers(*ks))
        P = random_channel(rng, d, k)
        yield P, rng.integers(*counts, size=k)


finite = st.floats(min_value=-50, max_value=50, allow_nan=False, allow_infinity=False)
vectors = st.lists(finite, min_size=1, max_size=7).map(np.array)
totals = st.floats(min_value=0.01, max_value=100, allow_nan=False)


# --------------------------------------------------------------------------- clip


def test_clip_hand_example():
    np.testing.assert_array_equal(clip([-2.0, 0.5, 7.0]), [0.0, 0.5, 7.0])
    np.testing.assert_array_equal(clip([-2.0, 0.5, 7.0], n=5), [0.0, 0.5, 5.0])
    np.testing.assert_array_equal(clip([[-1, 3], [4, -5]], n=3), [[0, 3], [3, 0]])


def test_clip_does_not_modify_input():
    x = np.array([-1.0, 2.0])
    clip(x)
    assert x[0] == -1.0


@pytest.mark.parametrize(
    "est, n, match",
    [
        ([1.0, np.nan], None, "est must be finite"),
        ([], None, "est is empty"),
        (np.zeros((2, 2, 2)), None, "shape"),
        (["a"], None, "numeric"),
        ([1.0], 0, "n must be a finite positive"),
        ([1.0], -3.0, "-3.0"),
        ([1.0], math.inf, "inf"),
    ],
)
def test_clip_rejects_bad_input(est, n, match):
    with pytest.raises(ValueError, match=match):
        clip(est, n)


# --------------------------------------------------------------------------- Norm-Sub


def test_norm_sub_hand_example():
    # sorted 3, 2, 0.5, -1: rho = 2 (2 - (5-4)/2 = 1.5 > 0, 0.5 - (5.5-4)/3 = 0 not > 0), delta = 0.5
    np.testing.assert_allclose(norm_sub([3.0, -1.0, 2.0, 0.5], 4.0), [2.5, 0.0, 1.5, 0.0])
    # already consistent: unchanged
    np.testing.assert_allclose(norm_sub([1.0, 2.0, 3.0], 6.0), [1.0, 2.0, 3.0])
    # single coordinate: always the total
    np.testing.assert_allclose(norm_sub([-7.0], 3.0), [3.0])


def test_norm_sub_lifts_when_positive_part_is_short():
    # positives sum to 1 < total 4: delta < 0 and the projection raises every entry above delta
    out = norm_sub([1.0, -0.5, -10.0], 4.0)
    np.testing.assert_allclose(out, [2.75, 1.25, 0.0])  # delta = (0.5 - 4)/2
    np.testing.assert_allclose(out, brute_force_projection(np.array([1.0, -0.5, -10.0]), 4.0))


@settings(max_examples=50, deadline=None)
@given(vectors, totals)
def test_norm_sub_is_the_simplex_projection(x, total):
    out = norm_sub(x, total)
    assert out.shape == x.shape
    assert np.all(out >= 0)
    assert math.isclose(out.sum(), total, rel_tol=1e-9, abs_tol=1e-9)
    np.testing.assert_allclose(out, brute_force_projection(x, total), atol=1e-8)
    # thresholding form: one delta for every coordinate
    pos = out > 0
    delta = (x - out)[pos]
    assert np.ptp(delta) < 1e-8
    assert np.all(x[~pos] <= delta[0] + 1e-8)


@settings(max_examples=40, deadline=None)
@given(vectors, totals, finite)
def test_norm_sub_invariances(x, total, shift):
    out = norm_sub(x, total)
    np.testing.assert_allclose(norm_sub(x + shift, total), out, atol=1e-8)  # translation
    np.testing.assert_allclose(norm_sub(out, total), out, atol=1e-8)  # idempotent
    perm = np.random.default_rng(0).permutation(x.size)
    np.testing.assert_allclose(norm_sub(x[perm], total), out[perm], atol=1e-8)  # equivariant


@settings(max_examples=30, deadline=None)
@given(vectors, totals, st.integers(0, 2**32 - 1))
def test_norm_sub_is_closest_point(x, total, seed):
    out = norm_sub(x, total)
    others = np.random.default_rng(seed).dirichlet(np.ones(x.size), size=20) * total
    assert np.all(np.sum((others - x) ** 2, axis=1) >= np.sum((out - x) ** 2) - 1e-9)


def test_norm_sub_matches_cvxpy():
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(20240611)
    for _ in range(5):
        d = int(rng.integers(2, 9))
        x = rng.normal(0, 3, size=d)
        total = float(rng.uniform(0.5, 5))
        y = cp.Variable(d)
        cp.Problem(cp.Minimize(cp.sum_squares(y - x)), [y >= 0, cp.sum(y) == total]).solve()
        np.testing.assert_allclose(norm_sub(x, total), y.value, atol=1e-5)


def test_norm_sub_rows_are_independent():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6, 5))
    out = norm_sub(X, 2.0)
    for row, res in zip(X, out):
        np.testing.assert_allclose(res, norm_sub(row, 2.0))


def test_norm_sub_on_grr_estimates_keeps_total_and_helps():
    g = GRR(20, 0.5)
    counts = np.zeros(20, dtype=int)
    counts[:4] = [4000, 2500, 1500, 1000]
    sims = g.simulate(counts, rng=11, trials=200)
    ns = norm_sub(sims, counts.sum())
    np.testing.assert_allclose(ns.sum(axis=1), counts.sum(), rtol=1e-12)
    # projecting onto a convex set containing the truth never increases the l2 error
    assert np.all(np.sum((ns - counts) ** 2, axis=1) <= np.sum((sims - counts) ** 2, axis=1) + 1e-6)


@pytest.mark.parametrize(
    "est, total, match",
    [
        ([1.0, 2.0], 0.0, "total must be a finite positive"),
        ([1.0, 2.0], -1, "-1"),
        ([1.0, 2.0], float("nan"), "nan"),
        ([1.0, 2.0], True, "True"),
        ([1.0, np.inf], 1.0, "est must be finite"),
        ([], 1.0, "est is empty"),
        (np.zeros((1, 1, 1)), 1.0, "shape"),
    ],
)
def test_norm_sub_rejects_bad_input(est, total, match):
    with pytest.raises(ValueError, match=match):
        norm_sub(est, total)


# --------------------------------------------------------------------------- EM: basic behaviour


def test_em_binary_rr_closed_form():
    # Binary RR with keep probability p: the MLE of pi_1 is clip((m_1/n - (1-p)) / (2p - 1), 0, 1).
    p = 0.75
    P = np.array([[p, 1 - p], [1 - p, p]])
    for m, expected in [((600, 400), (0.7, 0.3)), ((300, 700), (0.1, 0.9)), ((100, 900), (0.0, 1.0))]:
        r = em_estimate(P, m, tol=1e-15, max_iter=100_000)
        assert isinstance(r, EMResult) and r.converged
        np.testing.assert_allclose(r.frequencies, expected, atol=1e-6)
        np.testing.assert_allclose(r.counts, np.array(expected) * 1000, atol=1e-3)
        assert r.n == 1000
        q = r.frequencies @ P
        assert math.isclose(r.log_likelihood, float(np.dot(m, np.log(q))), rel_tol=1e-12)


def test_em_accepts_channel_objects_and_matrices():
    g = GRR(3, 1.0)
    m = np.array([50, 30, 20])
    a = em_estimate(g.channel(), m, tol=1e-14)
    b = em_estimate(g.channel().matrix, m, tol=1e-14)
    np.testing.assert_allclose(a.frequencies, b.frequencies)
    # a structured UnaryChannel is enumerated through to_explicit()
    ue = RAPPOR(3, 1.0).channel()
    mu = np.arange(1, 9)
    np.testing.assert_allclose(
        em_estimate(ue, mu).frequencies, em_estimate(ue.to_explicit(), mu).frequencies
    )


def test_em_equals_unbiased_estimate_inside_simplex():
    # Invertible square channel: if (P^T)^{-1} m/n is a distribution, it attains q = m/n, the
    # unrestricted multinomial MLE, so it is the MLE and EM must reach it.
    g = GRR(3, 1.2)
    P = g.channel().matrix
    counts = np.array([5000, 3000, 2000])
    m = sample_outputs(P, counts, np.random.default_rng(7))
    unbiased = np.linalg.solve(P.T, m / m.sum())
    assert np.all(unbiased > 0)
    r = em_estimate(P, m, tol=1e-15, max_iter=100_000)
    assert r.converged
    np.testing.assert_allclose(r.frequencies, unbiased, atol=1e-7)
    # ... and it coincides with the package's unbiased count estimator
    np.testing.assert_allclose(r.counts, g.estimate_from_support(m, int(m.sum())), rtol=1e-6)


def test_em_log_likelihood_is_non_decreasing():
    for P, m in random_channels_and_counts(99, 10, ds=(2, 6), ks=(2, 9), counts=(0, 50)):
        m[0] += 1
        with warnings.catch_warnings():  # slow (even non-identifiable) channels may hit max_iter
            warnings.simplefilter("ignore", EMConvergenceWarning)
            r = em_estimate(P, m, tol=1e-13, max_iter=3000, history=True)
        h = r.history
        assert h.shape == (r.iterations + 1,)
        assert h[-1] == r.log_likelihood
        assert np.all(np.diff(h) >= -1e-10 * np.abs(h[:-1]))
        assert h[-1] > h[0] or np.isclose(h[-1], h[0])


def test_em_kkt_conditions_at_the_mle():
    # Gradient of L(pi) = sum_y m_y log (P^T pi)_y is g_x = sum_y m_y P[x,y] / q_y. On the
    # simplex, KKT with multiplier n: g_x = n where pi_x > 0 and g_x <= n where pi_x = 0.
    g = GRR(4, 1.0)
    P = g.channel().matrix
    q_true = np.array([0.5, 0.3, 0.2, 0.0]) @ P
    m = np.round(q_true * 10_000).astype(int)
    m[3] -= 60  # pushes the unbiased estimate of item 3 below zero: boundary MLE
    assert np.linalg.solve(P.T, m / m.sum())[3] < 0
    r = em_estimate(P, m, tol=1e-15, max_iter=100_000)
    assert r.converged
    grad = P @ (m / (r.frequencies @ P)) / m.sum()
    support = r.frequencies > 1e-6
    assert not support[3] and support[:3].all()
    np.testing.assert_allclose(grad[support], 1.0, atol=1e-8)
    assert np.all(grad[~support] <= 1.0 + 1e-8)
    # concavity + KKT => global maximum: no random feasible point does better
    rng = np.random.default_rng(5)
    for pi in rng.dirichlet(np.ones(4), size=200):
        assert float(np.dot(m, np.log(pi @ P))) <= r.log_likelihood + 1e-8


def test_em_kkt_on_random_channels():
    for P, m in random_channels_and_counts(2024, 8, ds=(2, 5), ks=(3, 7), counts=(1, 100)):
        r = em_estimate(P, m, tol=1e-15, max_iter=200_000)
        grad = P @ (m / (r.frequencies @ P)) / m.sum()
        support = r.frequencies > 1e-5
        np.testing.assert_allclose(grad[support], 1.0, atol=1e-5)
        assert np.all(grad[~support] <= 1.0 + 1e-5)


# --------------------------------------------------------------------------- EM: consistency


def test_em_grr_recovers_truth_as_n_grows():
    # Interior truth: with probability -> 1 the MLE equals the unbiased estimator, whose
    # exact sd is sqrt(Var[c_hat_x]) / n; allow 5 sd per coordinate.
    g = GRR(5, 1.0)
    P = g.channel().matrix
    pi = np.array([0.35, 0.25, 0.2, 0.12, 0.08])
    rng = np.random.default_rng(12345)
    errors = []
    for n in (2_000, 20_000, 200_000, 2_000_000):
        counts = np.round(pi * n).astype(int)
        freq = counts / counts.sum()
        sd = np.sqrt(g.variance(counts)) / counts.sum()
        r = em_estimate(P, sample_outputs(P, counts, rng), tol=1e-13, max_iter=100_000)
        assert r.converged
        err = np.abs(r.frequencies - freq)
        assert np.all(err < 5 * sd + 1e-6), (n, err, sd)
        errors.append(err.max())
    assert errors[-1] < errors[0] / 5  # sd shrinks by sqrt(1000) ~ 32 between the extremes


def _fisher_sd(P: np.ndarray, pi: np.ndarray, n: int) -> np.ndarray:
    """Asymptotic sd of the MLE of pi (interior) from the multinomial Fisher information.

    Free parameters pi_0..pi_{d-2}, pi_{d-1} = 1 - sum: dq/dtheta_j = P[j] - P[d-1].
    I = n J^T diag(1/q) J; Cov(pi_free) = I^{-1}; Var(pi_{d-1}) = 1^T Cov 1.
    """
    q = pi @ P
    J = (P[:-1] - P[-1]).T
    cov = np.linalg.inv(n * J.T @ (J / q[:, None]))
    var = np.append(np.diag(cov), cov.sum())
    return np.sqrt(var)


def test_em_rappor_explicit_channel_recovers_truth():
    ch = RAPPOR(3, 1.0).channel().to_explicit()  # 3 inputs, 8 outputs: not square
    P = ch.matrix
    pi = np.array([0.5, 0.3, 0.2])
    rng = np.random.default_rng(777)
    for n in (5_000, 50_000, 500_000):
        counts = np.round(pi * n).astype(int)
        m = sample_outputs(P, counts, rng)
        r = em_estimate(ch, m, tol=1e-13, max_iter=100_000)
        assert r.converged
        sd = _fisher_sd(P, counts / counts.sum(), int(counts.sum()))
        assert np.all(np.abs(r.frequencies - counts / counts.sum()) < 5 * sd), (n, r.frequencies, sd)


# --------------------------------------------------------------------------- EM: convergence reporting


def test_em_warns_when_not_converged():
    g = GRR(4, 0.5)
    m = np.array([400, 300, 200, 100])
    with pytest.warns(EMConvergenceWarning, match="max_iter=2"):
        r = em_estimate(g.channel(), m, tol=1e-15, max_iter=2)
    assert not r.converged and r.iterations == 2


def test_em_strict_raises_when_not_converged():
    g = GRR(4, 0.5)
    with pytest.raises(EMConvergenceError, match="did not converge"):
        em_estimate(g.channel(), [400, 300, 200, 100], tol=1e-15, max_iter=2, strict=True)


def test_em_converged_run_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = em_estimate(GRR(3, 2.0).channel(), [60, 25, 15])
    assert r.converged and r.history is None


def test_em_init_is_used():
    P = GRR(3, 1.0).channel().matrix
    r = em_estimate(P, [5, 3, 2], max_iter=1, init=[0.2, 0.3, 0.5], tol=1e9)
    expected = np.array([0.2, 0.3, 0.5]) * (P @ (np.array([0.5, 0.3, 0.2]) / (np.array([0.2, 0.3, 0.5]) @ P)))
    np.testing.assert_allclose(r.frequencies, expected / expected.sum())


# --------------------------------------------------------------------------- EM: validation


@pytest.mark.parametrize(
    "channel, counts, kwargs, match",
    [
        (np.eye(2), [1, 2, 3], {}, "output_counts has length 3"),
        (np.eye(2), [1, -2], {}, "non-negative integers, got -2"),
        (np.eye(2), [1.5, 2], {}, "integer counts, got 1.5"),
        (np.eye(2), [0, 0], {}, "sum to zero"),
        (np.eye(2), [[1, 2]], {}, "shape"),
        ([[0.5, 0.6], [0.5, 0.5]], [1, 2], {}, "row 0 sums to"),
        ([[1.2, -0.2], [0.5, 0.5]], [1, 2], {}, "must lie in"),
        (np.eye(2), [1, 2], {"tol": 0.0}, "tol must be"),
        (np.eye(2), [1, 2], {"tol": float("nan")}, "tol must be"),
        (np.eye(2), [1, 2], {"max_iter": 0}, "max_iter must be"),
        (np.eye(2), [1, 2], {"init": [1.0, 0.0]}, "init must be strictly positive"),
        (np.eye(2), [1, 2], {"init": [0.2, 0.3, 0.5]}, "init has length 3"),
        (np.eye(2), [1, 2], {"init": [0.2, 0.2]}, "init must sum to 1"),
        (np.eye(2), [1, 2], {"strict": "yes"}, "strict must be a bool"),
        (np.eye(2), [1, 2], {"history": 1}, "history must be a bool"),
        ([[0.5, 0.5, 0.0], [0.2, 0.8, 0.0]], [1, 2, 3], {}, r"output_counts\[2\] = 3"),
    ],
)
def test_em_rejects_bad_input(channel, counts, kwargs, match):
    with pytest.raises(ValueError, match=match):
        em_estimate(channel, counts, **kwargs)


def test_em_ignores_unobserved_impossible_outputs():
    P = np.array([[0.5, 0.5, 0.0], [0.2, 0.8, 0.0]])
    r = em_estimate(ExplicitChannel(P), [3, 7, 0], tol=1e-15, max_iter=100_000)
    # q_0 = 0.3 -> pi_0 = (0.3 - 0.2) / 0.3; a log-likelihood tolerance tol gives parameter
    # accuracy of order sqrt(tol), hence the looser atol
    np.testing.assert_allclose(r.frequencies, [1 / 3, 2 / 3], atol=1e-6)
