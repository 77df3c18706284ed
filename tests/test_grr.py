"""GRR: tight channel, the papers' variance formula, simulation specifics, bad budgets.

The generic checks (sampling law against the channel, declared guarantee, unbiasedness with
the declared variance, aggregate simulation against the per-user path, bad items and counts)
run on every registered GRR instance in ``tests/test_contract.py``; GRR through the generic
channel oracle is compared with this class in ``tests/test_channel_oracle.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpkit import GRR
from ldpkit import accountant

COUNTS = np.array([3000, 1500, 800, 400, 200, 100, 0, 0])


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("d", [2, 3, 8])
def test_channel_is_tight_at_declared_epsilon(d: int, eps: float) -> None:
    """Equality, not only the bound the contract checks: p / q = e^eps is used in full."""
    grr = GRR(d, eps)
    ch = grr.channel()
    assert np.allclose(ch.matrix.sum(axis=1), 1.0)
    assert accountant.ldp_epsilon(ch) == pytest.approx(eps, rel=1e-12)
    assert grr.p / grr.q == pytest.approx(math.exp(eps))


def test_variance_closed_form_of_the_papers() -> None:
    """Wang et al.'s form ``n q(1-q)/(p-q)^2 + c (1-p-q)/(p-q)``.

    The implementation computes ``[c p(1-p) + (n-c) q(1-q)] / (p-q)^2`` (per-user Bernoulli
    sums); the channel-matrix route is in ``tests/test_channel_oracle.py``.
    """
    grr = GRR(8, 1.3)
    n, p, q = COUNTS.sum(), grr.p, grr.q
    paper = n * q * (1 - q) / (p - q) ** 2 + COUNTS * (1 - p - q) / (p - q)
    assert np.allclose(grr.variance(COUNTS), paper)


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


def test_aggregate_rejects_reports_outside_the_domain() -> None:
    grr = GRR(4, 1.0)
    with pytest.raises(ValueError, match="item 9"):
        grr.aggregate(np.array([9]))
    with pytest.raises(ValueError, match="item -1"):
        grr.aggregate(np.array([0, -1]))


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
        assert accountant.ldp_epsilon(grr.channel()) == pytest.approx(eps, rel=1e-9)
