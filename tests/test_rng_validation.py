"""The rng normaliser and the shared validators."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpkit import as_generator
from ldpkit import _validation as v


def test_seed_gives_reproducible_stream() -> None:
    assert np.array_equal(as_generator(7).random(5), as_generator(7).random(5))
    assert not np.array_equal(as_generator(7).random(5), as_generator(8).random(5))


def test_generator_passes_through_and_advances() -> None:
    gen = np.random.default_rng(1)
    assert as_generator(gen) is gen
    first = gen.random()
    assert as_generator(gen).random() != first


def test_seed_sequence_accepted() -> None:
    ss = np.random.SeedSequence(3)
    assert as_generator(ss).random() == np.random.default_rng(np.random.SeedSequence(3)).random()


@pytest.mark.parametrize("bad", [np.random.RandomState(0), "seed", 1.5, True])
def test_rng_rejects_other_types(bad: object) -> None:
    with pytest.raises(TypeError):
        as_generator(bad)


def test_negative_seed_rejected() -> None:
    with pytest.raises(ValueError, match="-3"):
        as_generator(-3)


@pytest.mark.parametrize("eps", [0, -1.0, math.inf, -math.inf, math.nan, "1", None, True])
def test_bad_epsilon(eps: object) -> None:
    with pytest.raises(ValueError, match="epsilon"):
        v.check_epsilon(eps)


@given(st.floats(min_value=1e-6, max_value=50))
@settings(max_examples=40, deadline=None)
def test_good_epsilon(eps: float) -> None:
    assert v.check_epsilon(eps) == eps


def test_items_outside_domain_named() -> None:
    with pytest.raises(ValueError, match="item 5, outside the domain 0..4"):
        v.check_items([0, 5, 1], 5)
    with pytest.raises(ValueError, match="item -1"):
        v.check_items([0, -1], 5)
    with pytest.raises(ValueError, match="empty"):
        v.check_items([], 5)
    with pytest.raises(ValueError, match="integer"):
        v.check_items([0.5, 1], 5)
    with pytest.raises(ValueError, match="shape"):
        v.check_items([[0, 1]], 5)
    assert v.check_items(np.array([1.0, 2.0]), 5).dtype == np.int64


def test_counts_validation() -> None:
    with pytest.raises(ValueError, match="length 3, expected the domain size 4"):
        v.check_counts([1, 2, 3], 4)
    with pytest.raises(ValueError, match="-1"):
        v.check_counts([1, -1, 3], 3)
    with pytest.raises(ValueError, match="sum to zero"):
        v.check_counts([0, 0], 2)
    with pytest.raises(ValueError, match="empty"):
        v.check_counts([], None)


def test_probability_and_distribution() -> None:
    with pytest.raises(ValueError, match="1.5"):
        v.check_probability(1.5)
    with pytest.raises(ValueError, match="-0.1"):
        v.check_probabilities([0.2, -0.1])
    with pytest.raises(ValueError, match="sum to 1, sums to 0.9"):
        v.check_distribution([0.5, 0.4])
    with pytest.raises(ValueError, match="length 2, expected 3"):
        v.check_distribution([0.5, 0.5], 3)
    assert v.check_distribution([0.25] * 4, 4).sum() == 1.0


def test_budget_vector() -> None:
    with pytest.raises(ValueError, match="length 2, expected the domain size 3"):
        v.check_budget_vector([1.0, 2.0], 3)
    with pytest.raises(ValueError, match="item 1"):
        v.check_budget_vector([1.0, 0.0, 2.0], 3)
    with pytest.raises(ValueError, match="inf"):
        v.check_budget_vector([1.0, math.inf], 2)


def test_domain_size() -> None:
    with pytest.raises(ValueError, match="d must be an integer >= 2, got 1"):
        v.check_domain_size(1)
    with pytest.raises(ValueError, match="2.0"):
        v.check_domain_size(2.0)
