"""Channels: enumeration, closed forms and their agreement."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpkit import ExplicitChannel, UnaryChannel
from ldpkit import accountant


def test_explicit_channel_pairwise_by_hand() -> None:
    ch = ExplicitChannel(np.array([[0.5, 0.5, 0.0], [0.25, 0.25, 0.5]]))
    L = accountant.pairwise_log_ratio(ch)
    assert L[0, 0] == 0 and L[1, 1] == 0
    assert L[0, 1] == pytest.approx(math.log(2))  # outputs 0,1: 0.5/0.25
    assert L[1, 0] == math.inf  # output 2 impossible under input 0
    assert accountant.ldp_epsilon(ch) == math.inf


def test_explicit_channel_validation() -> None:
    with pytest.raises(ValueError, match="row 1 sums to"):
        ExplicitChannel(np.array([[0.5, 0.5], [0.5, 0.6]]))
    with pytest.raises(ValueError, match="1.1"):
        ExplicitChannel(np.array([[1.1, -0.1]]))
    with pytest.raises(ValueError, match="2-d"):
        ExplicitChannel(np.array([1.0]))


def test_unary_validation() -> None:
    with pytest.raises(ValueError, match="equal length"):
        UnaryChannel(np.array([0.5, 0.5]), np.array([0.2]))
    with pytest.raises(ValueError, match="1.2"):
        UnaryChannel(np.array([1.2]), np.array([0.2]))


probs = st.floats(min_value=0.02, max_value=0.98)


@given(st.integers(min_value=2, max_value=6).flatmap(lambda d: st.tuples(st.lists(probs, min_size=d, max_size=d), st.lists(probs, min_size=d, max_size=d))))
@settings(max_examples=40, deadline=None)
def test_unary_closed_form_matches_enumeration(ab: tuple[list[float], list[float]]) -> None:
    a, b = map(np.array, ab)
    ch = UnaryChannel(a, b)
    enum = accountant.pairwise_log_ratio(ch.to_explicit())
    closed = accountant.pairwise_log_ratio(ch)
    assert np.allclose(enum, closed, atol=1e-9)
    assert accountant.ldp_epsilon(ch) == pytest.approx(float(enum.max()), abs=1e-9)


def test_unary_with_deterministic_bits() -> None:
    # a bit that is always 1 for its own item and never otherwise: unbounded loss.
    ch = UnaryChannel(np.array([1.0, 0.5, 0.5]), np.array([0.0, 0.2, 0.2]))
    assert accountant.ldp_epsilon(ch) == math.inf
    assert accountant.ldp_epsilon(ch.to_explicit()) == math.inf


def test_unary_enumeration_size_guard() -> None:
    with pytest.raises(ValueError, match="too large"):
        UnaryChannel(np.full(20, 0.5), np.full(20, 0.2)).to_explicit()


# ---------------------------------------------------------------------------- channel algebra
def test_product_channel_rows_and_composition_bound() -> None:
    from ldpkit.channels import product_channel, random_channel

    a = random_channel(3, 2, rng=1)
    b = random_channel(3, 4, rng=2)
    p = product_channel(a, b)
    assert p.matrix.shape == (3, 8)
    np.testing.assert_allclose(p.matrix[1].reshape(2, 4), np.outer(a.matrix[1], b.matrix[1]))
    # the loss of a product is at most the sum of the losses, pair by pair
    assert np.all(accountant.pairwise_log_ratio(p) <= accountant.pairwise_log_ratio(a) + accountant.pairwise_log_ratio(b) + 1e-12)
    with pytest.raises(ValueError, match="inputs"):
        product_channel(a, random_channel(2, 2, rng=3))
    with pytest.raises(ValueError, match="at least one"):
        product_channel()


def test_random_channel_and_mixing() -> None:
    from ldpkit.channels import mix_with_uniform, random_channel

    ch = random_channel(4, 5, rng=7)
    assert np.all(ch.matrix > 0)
    np.testing.assert_array_equal(ch.matrix, random_channel(4, 5, rng=7).matrix)
    losses = [accountant.pairwise_log_ratio(mix_with_uniform(ch, t)) for t in np.linspace(0, 1, 11)]
    for before, after in zip(losses, losses[1:]):
        assert np.all(after <= before + 1e-12)
    assert np.max(losses[-1]) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="theta"):
        mix_with_uniform(ch, 1.5)
    with pytest.raises(ValueError, match="concentration"):
        random_channel(2, 2, rng=1, concentration=0.0)
