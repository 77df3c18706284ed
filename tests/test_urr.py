"""Tests for ldpkit.urr: channel by enumeration, ULDP, estimator, exact simulation, bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ldpkit.grr import GRR
from ldpkit.urr import URR
from stats_helpers import assert_same_distribution, assert_unbiased


def _explicit_channel(d: int, eps: float, mask: np.ndarray) -> np.ndarray:
    """Independent loop implementation of the uRR channel, straight from the definition."""
    d_s = int(mask.sum())
    e = math.exp(eps)
    den = d_s + e - 1
    m = np.zeros((d, d))
    for x in range(d):
        for y in range(d):
            if mask[x]:
                m[x, y] = (e / den if y == x else 1 / den) if mask[y] else 0.0
            else:
                m[x, y] = (e - 1) / den if y == x else (1 / den if mask[y] else 0.0)
    return m


# ---------------------------------------------------------------------------- channel


@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
@pytest.mark.parametrize("sensitive", [[0], [0, 3], [1, 2, 4]])
def test_channel_by_enumeration(eps: float, sensitive: list[int]) -> None:
    d = 6
    u = URR(d, eps, sensitive)
    mask = np.zeros(d, bool)
    mask[sensitive] = True
    m = u.channel().matrix
    np.testing.assert_allclose(m, _explicit_channel(d, eps, mask), rtol=1e-14, atol=0)
    np.testing.assert_allclose(m.sum(axis=1), 1.0, atol=1e-12)
    # ULDP: on the protected (sensitive) outputs, every ratio is <= e^eps, with equality
    prot = m[:, mask]
    ratio = prot[:, None, :] / prot[None, :, :]
    assert np.max(np.log(ratio)) == pytest.approx(eps, abs=1e-12)
    assert np.all(np.log(ratio) <= eps + 1e-12)
    # invertible outputs: a non-sensitive output y is produced only by input y
    for y in np.flatnonzero(~mask):
        col = m[:, y]
        assert col[y] > 0 and np.count_nonzero(col) == 1
    # no standard LDP guarantee
    assert u.channel().ldp_epsilon() == math.inf
    assert u.epsilon == math.inf
    assert u.uldp_epsilon == eps


def test_all_sensitive_is_grr() -> None:
    u = URR(5, 1.3, np.ones(5, bool))
    np.testing.assert_allclose(u.channel().matrix, GRR(5, 1.3).channel().matrix)
    assert u.epsilon == 1.3
    assert u.channel().ldp_epsilon() == pytest.approx(1.3)


@settings(max_examples=40, deadline=None)
@given(
    d=st.integers(2, 12),
    eps=st.floats(0.05, 6.0),
    data=st.data(),
)
def test_pure_protocol_supports(d: int, eps: float, data: st.DataObject) -> None:
    """(p_i, q_i) read off the channel: p_i = P(i|i); q_i = P(i|x) is the same for all x != i."""
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=d, max_size=d).filter(any)))
    u = URR(d, eps, mask)
    m = u.channel().matrix
    np.testing.assert_allclose(np.diag(m), u.p_support, rtol=1e-12)
    for i in range(d):
        others = np.delete(m[:, i], i)
        np.testing.assert_allclose(others, u.q_support[i], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(m.sum(axis=1), 1.0, atol=1e-12)
    prot = m[:, mask]
    assert np.max(prot) / np.min(prot) <= math.exp(eps) * (1 + 1e-12)


def test_support_constants() -> None:
    u = URR(7, 1.0, [0, 1, 2])
    e = math.e
    den = 3 + e - 1
    assert (u.c1, u.c2, u.c3) == pytest.approx((e / den, 1 / den, (e - 1) / den))
    np.testing.assert_allclose(u.p_support, [e / den] * 3 + [(e - 1) / den] * 4)
    np.testing.assert_allclose(u.q_support, [1 / den] * 3 + [0.0] * 4)


# ---------------------------------------------------------------------------- sampling


def test_perturb_matches_channel_rows() -> None:
    d, n = 6, 30000
    u = URR(d, 1.0, [0, 2, 5])
    m = u.channel().matrix
    rng = np.random.default_rng(7)
    for x in range(d):
        rep = u.perturb(np.full(n, x), rng)
        counts = np.bincount(rep, minlength=d)
        support = m[x] > 0
        assert np.all(counts[~support] == 0)
        _, pval = stats.chisquare(counts[support], n * m[x, support])
        assert pval > 1e-6, (x, counts)


def test_aggregate_and_n_reports() -> None:
    u = URR(4, 1.0, [1])
    assert np.array_equal(u.aggregate([0, 1, 1, 3]), [1, 2, 0, 1])
    assert u.n_reports(np.array([0, 1, 1])) == 3
    with pytest.raises(ValueError, match="outside the domain"):
        u.aggregate([0, 4])


# ---------------------------------------------------------------------------- estimator


COUNTS = np.array([300, 120, 60, 0, 500, 20, 0, 0])
SENSITIVE = [0, 1, 3, 6]


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_unbiased_and_variance_monte_carlo(eps: float) -> None:
    u = URR(8, eps, SENSITIVE)
    r_trials = 4000
    est = u.simulate(COUNTS, rng=99, trials=r_trials)
    var = u.variance(COUNTS)
    # a non-sensitive item nobody holds is never reported: its estimate is exactly 0
    zero = var == 0
    assert np.array_equal(zero, ~u.sensitive & (COUNTS == 0)) and zero.any()
    assert np.all(est[:, zero] == 0)
    est, var, truth = est[:, ~zero], var[~zero], COUNTS[~zero]
    assert_unbiased(est, truth, var)
    ratio = est.var(axis=0, ddof=1) / var
    tol = 5 * math.sqrt(2 / (r_trials - 1))
    assert np.all(np.abs(ratio - 1) < tol), ratio


def test_variance_formula() -> None:
    u = URR(8, 1.0, SENSITIVE)
    n = COUNTS.sum()
    p, q = u.p_support, u.q_support
    want = (COUNTS * p * (1 - p) + (n - COUNTS) * q * (1 - q)) / (p - q) ** 2
    np.testing.assert_allclose(u.variance(COUNTS), want)
    # non-sensitive items: q = 0, variance c (1 - c3) / c3
    ns = ~u.sensitive
    np.testing.assert_allclose(u.variance(COUNTS)[ns], COUNTS[ns] * (1 - u.c3) / u.c3)


def test_simulate_agrees_with_per_user() -> None:
    u = URR(8, 1.0, SENSITIVE)
    r_trials = 800
    rng = np.random.default_rng(31)
    items = np.repeat(np.arange(8), COUNTS)
    per_user = np.array([u.estimate_items(items, rng) for _ in range(r_trials)])
    sim = u.simulate(COUNTS, rng=32, trials=r_trials)
    var = u.variance(COUNTS)
    zero = var == 0
    assert np.all(per_user[:, zero] == 0) and np.all(sim[:, zero] == 0)
    per_user, sim, var = per_user[:, ~zero], sim[:, ~zero], var[~zero]
    assert_same_distribution(per_user, sim, var)
    tol = 5 * math.sqrt(2 / (r_trials - 1))
    for sample in (per_user, sim):
        assert np.all(np.abs(sample.var(axis=0, ddof=1) / var - 1) < tol)
    # the support counts of every trial add up to n (one report per user)
    sup = u._simulate_support(COUNTS, np.random.default_rng(0))
    assert sup.sum() == COUNTS.sum()
    assert np.all(sup[~u.sensitive] <= COUNTS[~u.sensitive])


# ---------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((1, 1.0, [0]), "d must be"),
        ((5, -1.0, [0]), "epsilon"),
        ((5, 1.0, []), "at least one sensitive"),
        ((5, 1.0, np.zeros(5, bool)), "at least one sensitive"),
        ((5, 1.0, np.ones(4, bool)), "length 4"),
        ((5, 1.0, [0, 5]), "outside the domain"),
        ((5, 1.0, [1, 1]), "more than once"),
        ((5, 1.0, [[0, 1]]), "1-d"),
        ((5, 1.0, [0.5]), "integer"),
    ],
)
def test_bad_construction(args: tuple, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        URR(*args)


def test_bad_counts_and_items() -> None:
    u = URR(4, 1.0, [0])
    with pytest.raises(ValueError, match="length 3"):
        u.simulate([1, 2, 3])
    with pytest.raises(ValueError, match="non-negative"):
        u.variance([1, -2, 3, 0])
    with pytest.raises(ValueError, match="outside the domain"):
        u.perturb([0, 9])
    assert "uldp_epsilon=1" in repr(u)
