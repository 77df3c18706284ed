"""The closed-form MLE of item-report pure protocols (GRR, uRR, IPRR) against EM and brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpkit import GRR, IPRR, URR
from ldpkit.base import item_report_mle
from ldpkit.postprocess import em_estimate


def _loglik(m: np.ndarray, f: np.ndarray, p: np.ndarray, q: np.ndarray) -> float:
    probs = q + (p - q) * f
    pos = m > 0
    return float(np.sum(m[pos] * np.log(probs[pos])))


def _mechanisms(rng: np.random.Generator) -> list:
    d = int(rng.integers(2, 9))
    e = rng.uniform(0.1, 3.0, size=d)
    if d > 2:
        e[rng.choice(d, size=int(rng.integers(0, d - 1)), replace=False)] = math.inf
    k = int(rng.integers(1, d + 1))
    return [GRR(d, float(rng.uniform(0.1, 4))), URR(d, float(rng.uniform(0.1, 4)), sensitive=list(range(k))), IPRR(e)]


@pytest.mark.parametrize("seed", range(25))
def test_mle_is_a_distribution_at_least_as_likely_as_em_and_kkt(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for mech in _mechanisms(rng):
        d = mech.d
        f_true = rng.dirichlet(np.full(d, 0.5))
        counts = rng.multinomial(int(rng.integers(5, 2000)), f_true)
        m = mech.simulate_support(counts, rng=rng)
        f = mech.mle(m)
        assert f.shape == (d,) and np.all(f >= 0) and f.sum() == pytest.approx(1.0)
        p, q = mech.p_support, mech.q_support
        em = em_estimate(mech.channel(), m, tol=1e-12, max_iter=200000).frequencies
        assert _loglik(m, f, p, q) >= _loglik(m, em, p, q) - 1e-7 * max(1.0, m.sum())
        # KKT: gradient equal on the support, not larger off it
        grad = (p - q) * m / np.maximum(q + (p - q) * f, 1e-300)
        lam = grad[f > 1e-12].max()
        assert np.allclose(grad[f > 1e-12], lam, rtol=1e-7)
        assert np.all(grad[f <= 1e-12] <= lam * (1 + 1e-7))


def test_mle_equals_empirical_estimate_when_that_is_a_distribution() -> None:
    grr = GRR(4, 2.0)
    n = 10_000
    support = np.array([4000, 3000, 2000, 1000])
    f_emp = grr.estimate_from_support(support, n) / n
    assert np.all(f_emp > 0)
    assert np.allclose(grr.mle(support), f_emp, rtol=1e-12)


@pytest.mark.parametrize(
    "counts, p, q, match",
    [
        ([0, 0, 0], 0.5, 0.25, "sum to zero"),
        ([1, 2, 3], 0.25, 0.5, "p > q"),
        ([1, 2, 3], 0.5, 0.5, "differ"),
        ([1, -2, 3], 0.5, 0.25, "output_counts"),
    ],
)
def test_bad_inputs(counts: list, p: float, q: float, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        item_report_mle(counts, p, q)
