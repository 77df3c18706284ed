"""Synthetic datasets: exact probabilities vs empirical frequencies, provenance, reproducibility, bad input."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats

from ldpkit.datasets.containers import SingleItemData
from ldpkit.datasets.synthetic import (
    fldp_zipf_items,
    power_law_items,
    power_law_probabilities,
    truncated_zipf_probabilities,
    uniform_items,
    zipf_counts,
    zipf_items,
    zipf_probabilities,
)

Z = 5.0


def assert_frequencies(counts: np.ndarray, probs: np.ndarray) -> None:
    """Every cell within 5 multinomial standard deviations, and a chi-square test at 1e-6."""
    n = int(counts.sum())
    expected = n * probs
    sd = np.sqrt(n * probs * (1 - probs))
    bad = np.abs(counts - expected) > Z * sd + 1e-12
    assert not np.any(bad), f"cells {np.flatnonzero(bad)[:5]}: {counts[bad][:5]} vs {expected[bad][:5]}"
    # chi-square over cells with expected count >= 5, the rest pooled
    big = expected >= 5
    obs = np.append(counts[big], counts[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    exp = exp * obs.sum() / exp.sum()
    assert stats.chisquare(obs, exp).pvalue > 1e-6


# --------------------------------------------------------------------------- power law


def test_power_law_probabilities_closed_form_alpha_2() -> None:
    m = 100
    k = np.arange(1, m + 1)
    expected = (1 / k - 1 / (k + 1)) / (1 - 1 / (m + 1))
    assert np.allclose(power_law_probabilities(m, 2.0), expected, rtol=1e-12, atol=0)
    assert power_law_probabilities(m, 2.0)[0] == pytest.approx(0.505, rel=1e-12)


@pytest.mark.parametrize("alpha", [0.5, 1.0, 2.0, 3.5])
def test_power_law_probabilities_match_integrated_density(alpha: float) -> None:
    m = 12

    def density(x: float) -> float:
        return x ** (-alpha)

    total = integrate.quad(density, 1, m + 1)[0]
    expected = np.array([integrate.quad(density, k, k + 1)[0] for k in range(1, m + 1)]) / total
    assert np.allclose(power_law_probabilities(m, alpha), expected, rtol=1e-9, atol=0)


@pytest.mark.parametrize("alpha, seed", [(2.0, 1), (1.0, 2), (0.5, 3), (3.0, 4)])
def test_power_law_items_empirical_frequencies(alpha: float, seed: int) -> None:
    data = power_law_items(100_000, 100, alpha, rng=seed)
    assert data.n == 100_000 and data.m == 100
    assert data.items.dtype == np.int64
    assert data.items.min() >= 0 and data.items.max() <= 99
    assert_frequencies(data.counts(), power_law_probabilities(100, alpha))


def test_power_law_reading_differs_from_discrete_zipf() -> None:
    # The chosen reading (floored continuous law) puts 0.505 on the top item; a Zipf law
    # truncated at m would put 0.609 there.  The sample must tell them apart.
    data = power_law_items(100_000, 100, 2.0, rng=5)
    top = data.counts()[0] / data.n
    assert abs(top - 0.505) < Z * math.sqrt(0.505 * 0.495 / data.n)
    assert abs(top - zipf_probabilities(100, 2.0)[0]) > 0.09


def test_power_law_metadata() -> None:
    data = power_law_items(1000, 10, 2.0, rng=7)
    assert isinstance(data, SingleItemData)
    assert data.name == "Power-law" and data.label == "Power-law"
    assert data.is_standin is False
    assert np.array_equal(data.vocabulary, np.arange(1, 11))
    assert "power_law_items(n=1000, m=10, alpha=2.0)" in data.source
    assert "rng=7" in data.source and "entropy=7" in data.source
    assert data.notes and "floored" in data.notes[0]


@settings(max_examples=40, deadline=None)
@given(m=st.integers(2, 400), alpha=st.floats(0.05, 20.0))
def test_power_law_probabilities_properties(m: int, alpha: float) -> None:
    p = power_law_probabilities(m, alpha)
    assert p.shape == (m,)
    assert np.all(p >= 0) and math.isclose(p.sum(), 1.0, rel_tol=1e-12)
    assert np.all(np.diff(p) <= 1e-15)
    k = np.arange(1, m + 1, dtype=float)
    if 0.2 < alpha < 8 and abs(alpha - 1) > 1e-3:
        t = 1 - alpha
        naive = (k**t - (k + 1) ** t) / (1 - (m + 1) ** t)
        assert np.allclose(p, naive, rtol=1e-8, atol=1e-300)


# --------------------------------------------------------------------------- uniform


def test_uniform_items_frequencies_and_metadata() -> None:
    data = uniform_items(100_000, 1_000, rng=11)
    assert data.n == 100_000 and data.m == 1_000
    assert data.name == "Uniform" and data.is_standin is False
    assert np.array_equal(data.vocabulary, np.arange(1, 1001))
    assert_frequencies(data.counts(), np.full(1000, 1e-3))
    assert "uniform_items(n=100000, m=1000)" in data.source


# --------------------------------------------------------------------------- IPLDP Zipf


def test_truncated_zipf_probabilities_are_conditional_zipf() -> None:
    m, alpha = 20, 2.0
    k = np.arange(1, m + 1)
    conditional = stats.zipf.pmf(k, alpha) / stats.zipf.cdf(m, alpha)
    assert np.allclose(truncated_zipf_probabilities(m, alpha), conditional, rtol=1e-10, atol=0)


@pytest.mark.parametrize("m, alpha, seed", [(20, 2.0, 21), (3, 1.1, 22), (50, 1.5, 23)])
def test_zipf_items_exact_rejection(m: int, alpha: float, seed: int) -> None:
    # (3, 1.1) accepts only about 17% of numpy's draws, so several batches are needed
    data = zipf_items(60_000, m, alpha, rng=seed)
    assert data.n == 60_000 and data.m == m
    assert data.items.min() >= 0 and data.items.max() <= m - 1
    assert_frequencies(data.counts(), truncated_zipf_probabilities(m, alpha))
    assert data.name == "Zipf" and data.is_standin is False
    assert np.array_equal(data.vocabulary, np.arange(1, m + 1))


def test_zipf_items_is_numpy_zipf_filtered() -> None:
    # The kept draws are exactly numpy's draws <= m, in order (first batch suffices here).
    data = zipf_items(1000, 20, 2.0, rng=31)
    raw = np.random.default_rng(31).zipf(2.0, size=5000)
    assert np.array_equal(data.items + 1, raw[raw <= 20][:1000])


def test_zipf_items_reproducible() -> None:
    a = zipf_items(5000, 20, 2.0, rng=3)
    b = zipf_items(5000, 20, 2.0, rng=np.random.SeedSequence(3))
    c = zipf_items(5000, 20, 2.0, rng=4)
    assert np.array_equal(a.items, b.items)
    assert not np.array_equal(a.items, c.items)
    gen = np.random.default_rng(9)
    first, second = zipf_items(500, 20, 2.0, rng=gen), zipf_items(500, 20, 2.0, rng=gen)
    assert not np.array_equal(first.items, second.items)  # a Generator's state advances
    assert "may have advanced" in first.source


def test_rng_none_source_allows_replay() -> None:
    data = uniform_items(2000, 50, rng=None)
    match = re.search(r"entropy=(\d+)", data.source)
    assert match is not None
    replay = uniform_items(2000, 50, rng=np.random.SeedSequence(int(match.group(1))))
    assert np.array_equal(data.items, replay.items)


# --------------------------------------------------------------------------- FLDP Zipf


def test_fldp_zipf_items_default_size_and_vocabulary() -> None:
    data = fldp_zipf_items(rng=41)
    assert data.n == 593_358
    raw = np.random.default_rng(41).zipf(2.0, size=593_358)
    assert np.array_equal(data.vocabulary, np.unique(raw))
    assert np.array_equal(data.vocabulary[data.items], raw)
    assert np.all(np.diff(data.vocabulary) > 0)
    assert np.all(data.counts() > 0)  # every vocabulary entry was drawn
    assert data.name == "Zipf (FLDP)" and data.is_standin is False
    assert "a=2.0" in data.source


def test_fldp_zipf_items_frequencies_of_small_values() -> None:
    a = 1.7
    data = fldp_zipf_items(200_000, a=a, rng=42)
    values = data.vocabulary[data.items]
    k = np.arange(1, 16)
    probs = k ** (-a) / special.zeta(a, 1)
    counts = np.array([(values == v).sum() for v in k])
    n = data.n
    assert np.all(np.abs(counts - n * probs) < Z * np.sqrt(n * probs * (1 - probs)))


def test_fldp_zipf_items_tail_drop_and_merge() -> None:
    raw = np.random.default_rng(43).zipf(2.0, size=100_000)
    above = int((raw > 50).sum())
    assert above > 0
    dropped = fldp_zipf_items(100_000, 2.0, max_items=50, tail="drop", rng=43)
    assert dropped.n == 100_000 - above
    assert dropped.vocabulary.max() <= 50
    assert any(f"{above} of 100000" in note and "dropped" in note for note in dropped.notes)
    merged = fldp_zipf_items(100_000, 2.0, max_items=50, tail="merge", rng=43)
    assert merged.n == 100_000
    assert merged.vocabulary[-1] == 51
    assert merged.counts()[-1] == above
    assert any(f"{above} of 100000" in note and "merged" in note for note in merged.notes)
    assert np.array_equal(merged.vocabulary[merged.items], np.minimum(raw, 51))


# --------------------------------------------------------------------------- zipf_counts


def test_zipf_counts_identical_to_books_original_helper() -> None:
    def book_zipf_counts(d: int, n: int, s: float, rng: np.random.Generator) -> np.ndarray:
        w = 1.0 / np.arange(1, d + 1) ** s
        return rng.multinomial(n, w / w.sum())

    for d, n, s in [(100, 10_000, 1.1), (50, 20_000, 0.5), (1000, 5_000, 1.5)]:
        ours = zipf_counts(d, n, s, np.random.default_rng(d))
        theirs = book_zipf_counts(d, n, s, np.random.default_rng(d))
        assert np.array_equal(ours, theirs)
        assert ours.dtype == np.int64 and ours.sum() == n


def test_zipf_counts_frequencies() -> None:
    counts = zipf_counts(30, 200_000, 1.2, rng=51)
    assert_frequencies(counts, zipf_probabilities(30, 1.2))


def test_zipf_probabilities_values() -> None:
    assert np.allclose(zipf_probabilities(4, 0.0), 0.25)
    p = zipf_probabilities(3, 1.0)
    assert np.allclose(p, np.array([1, 1 / 2, 1 / 3]) / (11 / 6))


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: power_law_items(0, 10), "n must be"),
        (lambda: power_law_items(10, 1), "m must be"),
        (lambda: power_law_items(10, 10, 0.0), "alpha must be .* got 0.0"),
        (lambda: power_law_items(10, 10, float("nan")), "alpha must be .* got nan"),
        (lambda: power_law_items(True, 10), "n must be .* got True"),
        (lambda: power_law_probabilities(10, -1.0), "alpha must be .* got -1.0"),
        (lambda: uniform_items(10, 1.5), "m must be .* got 1.5"),
        (lambda: uniform_items(-3, 10), "n must be .* got -3"),
        (lambda: zipf_items(10, 20, 1.0), "alpha must be .* > 1.* got 1.0"),
        (lambda: zipf_items(10, 20, float("inf")), "alpha must be .* got inf"),
        (lambda: zipf_items(10, 1, 2.0), "m must be .* got 1"),
        (lambda: truncated_zipf_probabilities(20, 0.5), "alpha must be .* got 0.5"),
        (lambda: fldp_zipf_items(10, a=1.0), "a must be .* got 1.0"),
        (lambda: fldp_zipf_items(10, a="2"), "a must be .* got '2'"),
        (lambda: fldp_zipf_items(10, max_items=0), "max_items must be .* got 0"),
        (lambda: fldp_zipf_items(10, tail="clip"), "tail must be .* got 'clip'"),
        (lambda: zipf_counts(10, 0, 1.0), "n must be .* got 0"),
        (lambda: zipf_counts(1, 10, 1.0), "d must be .* got 1"),
        (lambda: zipf_counts(10, 10, -0.5), "s must be .* got -0.5"),
        (lambda: zipf_probabilities(10, float("nan")), "s must be .* got nan"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_value(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_bad_rng_type_raises_type_error() -> None:
    with pytest.raises(TypeError):
        uniform_items(10, 10, rng="seed")
