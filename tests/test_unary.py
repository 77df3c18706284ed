"""Unary encodings (RAPPOR, OUE, general): closed forms, bit sampling, packing, variance formula.

The generic checks (joint law of the bits against the channel, declared guarantee,
unbiasedness with the declared variance, aggregate simulation against the per-user path, bad
items and counts) run on every registered RAPPOR, OUE and general unary instance in
``tests/test_contract.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpkit import OUE, RAPPOR, UnaryEncoding, UnaryReports
from ldpkit._sampling import bernoulli_matrix
from ldpkit import accountant

COUNTS = np.array([2500, 1200, 700, 300, 200, 80, 20, 0])


@pytest.mark.parametrize("cls", [RAPPOR, OUE])
@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
def test_channel_enumeration_gives_declared_epsilon(cls: type, eps: float) -> None:
    mech = cls(6, eps)
    enum = mech.channel().to_explicit()
    assert accountant.ldp_epsilon(enum) == pytest.approx(eps, rel=1e-9)
    assert accountant.ldp_epsilon(mech.channel()) == pytest.approx(eps, rel=1e-9)


def test_parameters() -> None:
    """The defining properties, not the implementation's expressions.

    RAPPOR is symmetric (``b = 1 - a``) and spends ``eps / 2`` on each of the two bits that
    differ between two inputs; OUE keeps the own bit at ``a = 1/2`` and spends the whole budget
    on ``a (1 - b) / (b (1 - a)) = e^eps``.
    """
    for eps in (0.3, 1.7, 4.0):
        r, o = RAPPOR(5, eps), OUE(5, eps)
        assert np.all(r.a == r.a[0]) and np.all(r.b == r.b[0]) and np.all(o.a == o.a[0]) and np.all(o.b == o.b[0])
        assert r.b[0] == pytest.approx(1 - r.a[0], abs=1e-15)
        assert math.log(r.a[0] / r.b[0]) == pytest.approx(eps / 2, rel=1e-12)
        assert o.a[0] == 0.5
        assert math.log(o.a[0] * (1 - o.b[0]) / (o.b[0] * (1 - o.a[0]))) == pytest.approx(eps, rel=1e-12)


def test_bernoulli_matrix_exact_probabilities() -> None:
    # probabilities straddling byte thresholds, including 0 and 1 exactly
    p = np.array([0.0, 1.0, 1 / 256, 0.5, 0.2689414213699951, 0.999, 0.00123])
    rng = np.random.default_rng(4)
    rows = 400_000
    freq = bernoulli_matrix(rng, rows, p).mean(axis=0)
    assert freq[0] == 0.0 and freq[1] == 1.0
    tol = 5 * np.sqrt(p * (1 - p) / rows)
    assert np.all(np.abs(freq - p) <= tol + 1e-12)


def test_bits_are_packed_and_independent_of_chunking() -> None:
    mech = OUE(13, 1.0)
    items = np.arange(13).repeat(3)
    rep = mech.perturb(items, rng=1)
    assert isinstance(rep, UnaryReports) and rep.bits.dtype == np.uint8 and rep.bits.shape == (39, 2)
    dense = rep.to_dense()
    assert dense.shape == (39, 13)
    assert np.array_equal(mech.aggregate(rep), dense.sum(axis=0))


def test_variance_formula_of_the_papers() -> None:
    """Wang et al.'s form; the implementation computes ``[c p(1-p) + (n-c) q(1-q)] / (p-q)^2``."""
    mech = OUE(8, 0.8)
    n, p, q = COUNTS.sum(), mech.a[0], mech.b[0]
    paper = n * q * (1 - q) / (p - q) ** 2 + COUNTS * (1 - p - q) / (p - q)
    assert np.allclose(mech.variance(COUNTS), paper)


def test_oue_beats_rappor_in_total_variance() -> None:
    for eps in (0.5, 1.0, 2.0, 4.0):
        assert OUE(100, eps).mse(np.full(100, 10)) < RAPPOR(100, eps).mse(np.full(100, 10))


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="differ"):
        UnaryEncoding([0.5, 0.3], [0.5, 0.2])
    with pytest.raises(ValueError, match="1.5"):
        UnaryEncoding([1.5, 0.3], [0.5, 0.2])
    with pytest.raises(ValueError, match="equal length"):
        UnaryEncoding([0.5, 0.3], [0.2])
    with pytest.raises(ValueError, match="epsilon"):
        OUE(4, 0.0)
    with pytest.raises(ValueError, match="UnaryReports over d=4"):
        OUE(4, 1.0).aggregate(OUE(5, 1.0).perturb([0], rng=0))


@given(
    d=st.integers(min_value=2, max_value=5),
    a=st.floats(min_value=0.05, max_value=0.95),
    b=st.floats(min_value=0.05, max_value=0.95),
)
@settings(max_examples=40, deadline=None)
def test_general_unary_declared_epsilon_is_checked_not_copied(d: int, a: float, b: float) -> None:
    if abs(a - b) < 1e-3:
        return
    tight = abs(math.log(a * (1 - b) / ((1 - a) * b)))
    assert accountant.ldp_epsilon(UnaryEncoding(np.full(d, a), np.full(d, b)).channel().to_explicit()) == pytest.approx(
        tight, abs=1e-9)
    # the declared budget is the constructor's: verify accepts the tight value and refuses a smaller one
    assert UnaryEncoding(np.full(d, a), np.full(d, b), epsilon=tight).epsilon == tight
    assert accountant.verify(UnaryEncoding(np.full(d, a), np.full(d, b), epsilon=tight))
    assert not accountant.verify(UnaryEncoding(np.full(d, a), np.full(d, b), epsilon=tight * (1 - 1e-6)))
    assert UnaryEncoding(np.full(d, a), np.full(d, b)).guarantees() == []  # no budget given, none declared


def test_packed_sampler_marginals_and_independence() -> None:
    from ldpkit._sampling import MAX_TABLES, PackedBernoulli

    p = np.array([0.0, 1.0, 1 / 256, 0.5, 0.2689414213699951, 0.999, 0.00123, 0.3, 0.7, 0.01, 1e-5, 0.45])
    sampler = PackedBernoulli(p)
    assert sampler.supported and sampler.n_groups == 2
    rows = 400_000
    dense = np.unpackbits(sampler.sample(np.random.default_rng(8), rows), axis=1, count=p.size).astype(bool)
    freq = dense.mean(axis=0)
    assert freq[0] == 0.0 and freq[1] == 1.0
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / rows) + 1e-12)
    # bits inside one byte are independent: joint frequency of columns 3 and 7 is p3 * p7
    joint = float(np.mean(dense[:, 3] & dense[:, 7]))
    pj = p[3] * p[7]
    assert abs(joint - pj) < 5 * np.sqrt(pj * (1 - pj) / rows)
    many = PackedBernoulli(np.linspace(0.01, 0.99, 8 * (MAX_TABLES + 1)))
    assert not many.supported


def test_unary_fallback_path_for_many_distinct_probabilities() -> None:
    d = 8 * 70
    b = np.linspace(0.05, 0.6, d)
    mech = UnaryEncoding(np.full(d, 0.9), b)
    n = 20_000
    dense = mech.perturb(np.zeros(n, dtype=int), rng=3).to_dense()
    expected = b.copy()
    expected[0] = 0.9
    tol = 5 * np.sqrt(expected * (1 - expected) / n)
    assert np.all(np.abs(dense.mean(axis=0) - expected) < tol)
