"""GRR: exact channel, unbiasedness, exact variance, aggregate-level simulation, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpkit import GRR
from stats_helpers import assert_same_distribution, assert_unbiased, assert_variance

COUNTS = np.array([3000, 1500, 800, 400, 200, 100, 0, 0])


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("d", [2, 3, 8])
def test_channel_satisfies_declared_epsilon_exactly(d: int, eps: float) -> None:
    grr = GRR(d, eps)
    ch = grr.channel()
    assert np.allclose(ch.matrix.sum(axis=1), 1.0)
    assert ch.ldp_epsilon() == pytest.approx(eps, rel=1e-12)
    assert grr.p / grr.q == pytest.approx(math.exp(eps))


def test_perturb_distribution_per_input() -> None:
    grr = GRR(5, 1.0)
    rng = np.random.default_rng(11)
    n = 200_000
    reports = grr.perturb(np.full(n, 2), rng)
    freq = np.bincount(reports, minlength=5) / n
    expected = grr.channel().matrix[2]
    tol = 5 * np.sqrt(expected * (1 - expected) / n)
    assert np.all(np.abs(freq - expected) < tol)


def _per_user(grr: GRR, counts: np.ndarray, reps: int, seed: int) -> np.ndarray:
    items = np.repeat(np.arange(grr.d), counts)
    rng = np.random.default_rng(seed)
    return np.stack([grr.estimate_items(items, rng) for _ in range(reps)])


def test_unbiased_and_exact_variance_per_user() -> None:
    grr = GRR(8, 1.0)
    est = _per_user(grr, COUNTS, 400, 1)
    var = grr.variance(COUNTS)
    assert_unbiased(est, COUNTS, var)
    assert_variance(est, var)


def test_variance_closed_form_of_the_papers() -> None:
    grr = GRR(8, 1.3)
    n, p, q = COUNTS.sum(), grr.p, grr.q
    paper = n * q * (1 - q) / (p - q) ** 2 + COUNTS * (1 - p - q) / (p - q)
    assert np.allclose(grr.variance(COUNTS), paper)


def test_aggregate_simulation_matches_per_user() -> None:
    grr = GRR(8, 1.0)
    sim = grr.simulate(COUNTS, rng=5, trials=2000)
    per = _per_user(grr, COUNTS, 400, 6)
    var = grr.variance(COUNTS)
    assert_unbiased(sim, COUNTS, var)
    assert_variance(sim, var)
    assert_same_distribution(sim, per, var)


def test_simulation_is_reproducible_and_shaped() -> None:
    grr = GRR(8, 1.0)
    assert np.array_equal(grr.simulate(COUNTS, rng=3), grr.simulate(COUNTS, rng=3))
    assert grr.simulate(COUNTS, rng=3).shape == (8,)
    assert grr.simulate(COUNTS, rng=3, trials=4).shape == (4, 8)


def test_large_domain_simulation_is_cheap() -> None:
    grr = GRR(40_000, 2.0)
    counts = np.random.default_rng(0).multinomial(1_000_000, np.full(40_000, 1 / 40_000))
    est = grr.simulate(counts, rng=1)
    # total of unbiased estimates is n exactly up to float error: sum(C) = n
    assert est.sum() == pytest.approx(1_000_000, rel=1e-9)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"d": 5, "epsilon": 0}, "epsilon"),
        ({"d": 5, "epsilon": -1}, "epsilon"),
        ({"d": 5, "epsilon": math.inf}, "epsilon"),
        ({"d": 5, "epsilon": math.nan}, "epsilon"),
        ({"d": 1, "epsilon": 1.0}, "d must be"),
    ],
)
def test_bad_construction(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        GRR(**kwargs)


def test_bad_items_and_counts() -> None:
    grr = GRR(4, 1.0)
    with pytest.raises(ValueError, match="item 4"):
        grr.perturb([0, 4])
    with pytest.raises(ValueError, match="empty"):
        grr.perturb([])
    with pytest.raises(ValueError, match="length 3"):
        grr.variance([1, 2, 3])
    with pytest.raises(ValueError, match="sum to zero"):
        grr.simulate([0, 0, 0, 0])
    with pytest.raises(ValueError, match="item 9"):
        grr.aggregate(np.array([9]))


@given(
    d=st.integers(min_value=2, max_value=30),
    eps=st.floats(min_value=0.05, max_value=8.0),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
@settings(max_examples=40, deadline=None)
def test_properties(d: int, eps: float, seed: int) -> None:
    grr = GRR(d, eps)
    rng = np.random.default_rng(seed)
    items = rng.integers(0, d, size=50)
    reports = grr.perturb(items, rng)
    assert reports.shape == items.shape and reports.min() >= 0 and reports.max() < d
    # estimates sum to n: sum_i (C_i - n q)/(p - q) = (n - d n q)/(p - q) = n since p + (d-1) q = 1
    assert grr.estimate(reports).sum() == pytest.approx(50, rel=1e-9, abs=1e-6)
    if d <= 12:
        assert grr.channel().ldp_epsilon() == pytest.approx(eps, rel=1e-9)
