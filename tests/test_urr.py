"""Tests for ldpkit.urr: channel by enumeration, ULDP, exact variance by independent routes, bad inputs.

The generic checks (sampling law against the channel, declared guarantee, unbiasedness with
the declared variance, aggregate simulation against the per-user path, bad items and counts)
run on every registered uRR instance in ``tests/test_contract.py``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpkit.channel_oracle import ChannelOracle
from ldpkit.grr import GRR
from ldpkit.urr import URR
from ldpkit import accountant


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
    assert accountant.ldp_epsilon(u.channel()) == math.inf
    assert u.epsilon == math.inf
    assert u.uldp_epsilon == eps


def test_all_sensitive_is_grr() -> None:
    u = URR(5, 1.3, np.ones(5, bool))
    np.testing.assert_allclose(u.channel().matrix, GRR(5, 1.3).channel().matrix)
    assert u.epsilon == 1.3
    assert accountant.ldp_epsilon(u.channel()) == pytest.approx(1.3)


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
    """The defining properties of (c1, c2, c3), which determine them uniquely."""
    for d, eps, sensitive in ((7, 1.0, [0, 1, 2]), (5, 0.3, [4]), (6, 3.0, [0, 1, 2, 3, 4, 5])):
        u = URR(d, eps, sensitive)
        d_s = len(sensitive)
        assert u.c1 / u.c2 == pytest.approx(math.exp(eps), rel=1e-12)  # the ULDP ratio, tight
        assert u.c1 + (d_s - 1) * u.c2 == pytest.approx(1.0, abs=1e-15)  # sensitive rows sum to 1
        assert u.c3 + d_s * u.c2 == pytest.approx(1.0, abs=1e-15)  # non-sensitive rows sum to 1
        mask = np.isin(np.arange(d), sensitive)
        np.testing.assert_array_equal(u.p_support, np.where(mask, u.c1, u.c3))
        np.testing.assert_array_equal(u.q_support, np.where(mask, u.c2, 0.0))


# ---------------------------------------------------------------------------- reports


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
def test_variance_equals_the_channel_covariance(eps: float) -> None:
    """Exact variance from the channel matrix alone: ``A diag(Q^T c) A^T - diag(c)``, ``A = Q^{-T}``."""
    u = URR(8, eps, SENSITIVE)
    np.testing.assert_allclose(u.variance(COUNTS), ChannelOracle(u.channel()).variance(COUNTS), rtol=1e-9, atol=1e-9)
    # non-sensitive item: C_i = Binomial(c_i, c3) exactly, so Var[C_i / c3] = c_i (1 - c3) / c3
    ns = ~u.sensitive
    np.testing.assert_allclose(u.variance(COUNTS)[ns], COUNTS[ns] * (1 - u.c3) / u.c3, rtol=1e-12)


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_estimator_law_by_exact_enumeration(eps: float) -> None:
    """Four users, every report vector: the exact mean is the true count, the exact variance the declared one."""
    u = URR(4, eps, [0, 1])
    items = np.array([0, 0, 1, 3])  # item 2 (non-sensitive) is held by nobody
    counts = np.bincount(items, minlength=4)
    m = u.channel().matrix
    mean = np.zeros(4)
    second = np.zeros(4)
    total = 0.0
    for reports in itertools.product(range(4), repeat=items.size):
        prob = float(np.prod(m[items, list(reports)]))
        if prob == 0.0:
            continue
        est = u.estimate(np.array(reports))
        total += prob
        mean += prob * est
        second += prob * est**2
    assert total == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(mean, counts, atol=1e-12)
    np.testing.assert_allclose(second - mean**2, u.variance(counts), rtol=1e-10, atol=1e-12)


def test_unheld_non_sensitive_item_is_estimated_exactly_zero() -> None:
    """A non-sensitive item nobody holds is never reported: estimate and variance exactly 0.

    (The contract's populations give every item a holder, so this case is checked here.)
    """
    u = URR(8, 1.0, SENSITIVE)
    var = u.variance(COUNTS)
    zero = var == 0
    assert np.array_equal(zero, ~u.sensitive & (COUNTS == 0)) and zero.any()
    assert np.all(var[~zero] > 0)
    sim = u.simulate(COUNTS, rng=99, trials=200)
    rng = np.random.default_rng(31)
    items = np.repeat(np.arange(8), COUNTS)
    per_user = np.array([u.estimate_items(items, rng) for _ in range(50)])
    assert np.all(sim[:, zero] == 0) and np.all(per_user[:, zero] == 0)
    # the support counts of every trial add up to n (one report per user), and a
    # non-sensitive item is reported only by its own holders
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


def test_simulate_counts_of_wrong_length_and_repr() -> None:
    u = URR(4, 1.0, [0])
    with pytest.raises(ValueError, match="length 3"):
        u.simulate([1, 2, 3])
    assert "uldp_epsilon=1" in repr(u)
