"""Budget assignment: exact level sizes, random placement, IDUE level structure, IPLDP levels and Table 2."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpkit.budgets import (
    IPLDP_EXPERIMENTS,
    IPLDPAssignment,
    apportion,
    ipldp_levels,
    level_structure,
    random_levels,
)

Z = 5.0


# --------------------------------------------------------------------------- apportion


@pytest.mark.parametrize(
    "m, shares, sizes",
    [
        (100, (0.05, 0.05, 0.9), [5, 5, 90]),
        (1000, (0.05, 0.05, 0.9), [50, 50, 900]),
        (7, (1 / 3, 1 / 3, 1 / 3), [3, 2, 2]),  # equal remainders: lower index first
        (10, (0.15, 0.15, 0.7), [2, 1, 7]),  # 1.5, 1.5, 7 -> one spare item, to level 0
        (100, (0.29, 0.71), [29, 71]),  # 0.29 * 100 = 28.999999999999996 in floating point
        (3, (0.0, 1.0), [0, 3]),
        (9, (0.05, 0.05, 0.9), [1, 0, 8]),  # floors 0, 0, 8; remainders 0.45, 0.45, 0.1: tie -> level 0
    ],
)
def test_apportion_examples(m: int, shares: tuple[float, ...], sizes: list[int]) -> None:
    assert apportion(m, shares).tolist() == sizes


@settings(max_examples=50, deadline=None)
@given(
    m=st.integers(1, 5000),
    raw=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6).filter(lambda r: sum(r) > 0.01),
)
def test_apportion_properties(m: int, raw: list[float]) -> None:
    shares = np.array(raw) / sum(raw)
    sizes = apportion(m, shares)
    assert sizes.sum() == m
    assert np.all(sizes >= 0)
    assert np.all(np.abs(sizes - shares * m) < 1 + 1e-9)
    assert np.all(sizes[shares * m >= 1] >= 1)


# --------------------------------------------------------------------------- random_levels


def test_random_levels_exact_sizes_default_setting() -> None:
    eps = 1.0
    budgets = (eps, 1.2 * eps, 2 * eps)
    b = random_levels(100, budgets, (0.05, 0.05, 0.9), rng=1)
    assert b.shape == (100,) and b.dtype == float
    assert [(b == v).sum() for v in budgets] == [5, 5, 90]
    _, level_budgets, sizes = level_structure(b)
    assert level_budgets.tolist() == list(budgets)
    assert sizes.tolist() == [5, 5, 90]


def test_random_levels_reproducible_and_seed_dependent() -> None:
    args = (50, (0.5, 1.0), (0.4, 0.6))
    assert np.array_equal(random_levels(*args, rng=3), random_levels(*args, rng=3))
    assert not np.array_equal(random_levels(*args, rng=3), random_levels(*args, rng=4))


def test_random_levels_placement_is_uniform() -> None:
    # Every item is at level 0 with probability share_0 = 0.25 under a uniform permutation.
    m, reps = 20, 4000
    gen = np.random.default_rng(5)
    hits = np.zeros(m)
    for _ in range(reps):
        hits += random_levels(m, (1.0, 3.0), (0.25, 0.75), rng=gen) == 1.0
    p = 0.25
    assert np.all(np.abs(hits - reps * p) < Z * math.sqrt(reps * p * (1 - p)))
    assert hits.sum() == reps * 5  # exactly 5 of 20 every time


def test_random_levels_iid_shares() -> None:
    m = 200_000
    b = random_levels(m, (1.0, 1.2, 2.0), (0.05, 0.05, 0.9), rng=7, exact=False)
    counts = np.array([(b == v).sum() for v in (1.0, 1.2, 2.0)])
    p = np.array([0.05, 0.05, 0.9])
    assert np.all(np.abs(counts - m * p) < Z * np.sqrt(m * p * (1 - p)))
    assert counts.tolist() != [10_000, 10_000, 180_000]  # i.i.d., not exact


@settings(max_examples=40, deadline=None)
@given(
    m=st.integers(1, 300),
    raw=st.lists(st.floats(0.01, 1.0), min_size=1, max_size=4),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_levels_properties(m: int, raw: list[float], seed: int) -> None:
    shares = np.array(raw) / sum(raw)
    budgets = np.arange(1, shares.size + 1) * 0.5
    b = random_levels(m, budgets, shares, rng=seed)
    _, level_budgets, sizes = level_structure(b)
    expected = apportion(m, shares)
    assert sizes.sum() == m
    assert dict(zip(level_budgets.tolist(), sizes.tolist())) == {
        float(v): int(s) for v, s in zip(budgets, expected) if s > 0
    }


# --------------------------------------------------------------------------- level_structure


def test_level_structure_example() -> None:
    levels, level_budgets, sizes = level_structure([2.0, 1.0, 2.0, 1.2, 1.0, 2.0])
    assert level_budgets.tolist() == [1.0, 1.2, 2.0]
    assert sizes.tolist() == [2, 1, 3]
    assert levels.tolist() == [2, 0, 2, 1, 0, 2]
    assert levels.dtype == np.int64 and sizes.dtype == np.int64


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([0.1, 0.5, 1.0, 1.2, 2.0, 7.5]), min_size=1, max_size=60))
def test_level_structure_round_trip(values: list[float]) -> None:
    levels, level_budgets, sizes = level_structure(values)
    assert np.array_equal(level_budgets[levels], np.array(values))
    assert np.all(np.diff(level_budgets) > 0)
    assert sizes.sum() == len(values)
    assert np.array_equal(np.bincount(levels, minlength=level_budgets.size), sizes)


# --------------------------------------------------------------------------- IPLDP


def test_ipldp_paper_example_exactly() -> None:
    # D = {A..F} with counts 6..1, eps in [0.1, 0.3], LC = 3, NR = 0.5:
    # D_N = {A, B, C}; D gets 0.3, E 0.2, F 0.1.
    a = ipldp_levels([6, 5, 4, 3, 2, 1], nr=0.5, lc=3, eps_min=0.1, eps_max=0.3)
    assert isinstance(a, IPLDPAssignment)
    assert a.nonsensitive.tolist() == [0, 1, 2]
    assert a.sensitive.tolist() == [False, False, False, True, True, True]
    assert a.sensitive_items.tolist() == [3, 4, 5]
    assert np.all(np.isinf(a.epsilons[:3]))
    assert a.epsilons[3:] == pytest.approx([0.3, 0.2, 0.1], rel=1e-15)
    assert a.level_budgets == pytest.approx([0.1, 0.2, 0.3], rel=1e-15)
    assert a.levels.tolist() == [-1, -1, -1, 2, 1, 0]
    assert a.level_sizes.tolist() == [1, 1, 1]


def test_ipldp_example_in_shuffled_item_order() -> None:
    counts = np.array([2, 6, 1, 4, 3, 5])  # E, A, F, C, D, B
    a = ipldp_levels(counts, 0.5, 3, 0.1, 0.3)
    assert a.nonsensitive.tolist() == [1, 3, 5]
    assert a.epsilons[[4, 0, 2]] == pytest.approx([0.3, 0.2, 0.1], rel=1e-15)
    assert a.order.tolist() == [1, 5, 3, 4, 0, 2]


def test_ipldp_groups_larger_first_and_ties_by_index() -> None:
    # |D_S| = 10, LC = 4: groups of 3, 3, 2, 2 from the largest counts down
    counts = np.arange(20, 0, -1)
    a = ipldp_levels(counts, 0.5, 4, 0.1, 1.0)
    assert a.level_sizes.tolist() == [2, 2, 3, 3]  # eps_min level ... eps_max level
    assert a.level_budgets == pytest.approx([0.1, 0.4, 0.7, 1.0])
    assert a.epsilons[10:13] == pytest.approx([1.0] * 3)
    assert a.epsilons[18:] == pytest.approx([0.1] * 2)
    tied = ipldp_levels([5, 5, 5, 5], 0.5, 2, 1.0, 2.0)
    assert tied.nonsensitive.tolist() == [0, 1]
    assert tied.epsilons[2:].tolist() == [2.0, 1.0]


def test_ipldp_single_level_is_eps_min() -> None:
    a = ipldp_levels([9, 8, 7, 6], 0.25, 1, 0.5, 4.0)
    assert a.level_budgets.tolist() == [0.5]
    assert a.epsilons[1:].tolist() == [0.5, 0.5, 0.5]


def test_ipldp_nr_rounding_floor_with_float_slack() -> None:
    counts20 = np.arange(20, 0, -1)
    # 0.7 * 20 = 14.000000000000002 and 0.29 * 100 = 28.999999999999996 in floating point
    assert ipldp_levels(counts20, 0.7, 4, 0.1, 10.0).nonsensitive.size == 14
    assert ipldp_levels(np.arange(100, 0, -1), 0.29, 4, 0.1, 10.0).nonsensitive.size == 29
    # off the grid: floor, never more non-sensitive items than NR * |D|
    assert ipldp_levels(counts20, 0.84, 4, 0.1, 10.0).nonsensitive.size == 16
    assert ipldp_levels([3, 2, 1], 0.5, 1, 0.1, 1.0).nonsensitive.size == 1


def test_ipldp_zipf_nr_sweep_stops_at_0_8() -> None:
    counts20 = np.arange(20, 0, -1)
    for nr in np.round(np.arange(0.0, 0.81, 0.1), 1):
        a = ipldp_levels(counts20, float(nr), 4, 0.1, 10.0)
        assert a.sensitive.sum() == 20 - round(nr * 20)
    with pytest.raises(ValueError, match=r"lc=4 exceeds .*\|D_S\|=2"):
        ipldp_levels(counts20, 0.9, 4, 0.1, 10.0)


def test_ipldp_experiments_table_2() -> None:
    assert [e.number for e in IPLDP_EXPERIMENTS] == [1, 2, 3, 4, 5]
    assert all(e.lc == 4 for e in IPLDP_EXPERIMENTS)
    assert [(e.eps_min, e.eps_max) for e in IPLDP_EXPERIMENTS] == [
        (0.1, 1.0), (1.0, 10.0), (0.1, 10.0), (0.1, 10.0), (0.1, 10.0)
    ]
    assert IPLDP_EXPERIMENTS[3].nr("Zipf") == (0.0, 0.8)
    assert IPLDP_EXPERIMENTS[3].nr("Kosarak") == (0.1, 0.9)
    assert IPLDP_EXPERIMENTS[4].nr("Zipf") == 0.0 and IPLDP_EXPERIMENTS[4].compared_with == ("IDUE",)
    with pytest.raises(ValueError, match="dataset must be .* got 'Retail'"):
        IPLDP_EXPERIMENTS[0].nr("Retail")
    # every NR of the table is feasible on its dataset's domain (Zipf 20 items, Kosarak 100)
    for e in IPLDP_EXPERIMENTS:
        for dataset, d in (("Zipf", 20), ("Kosarak", 100)):
            value = e.nr(dataset)
            for nr in value if isinstance(value, tuple) else (value,):
                a = ipldp_levels(np.arange(d, 0, -1), nr, e.lc, e.eps_min, e.eps_max)
                assert a.level_budgets[0] == e.eps_min and a.level_budgets[-1] == pytest.approx(e.eps_max)
                assert np.all(a.level_sizes >= 1)


@settings(max_examples=50, deadline=None)
@given(
    counts=st.lists(st.integers(0, 30), min_size=1, max_size=40).filter(lambda c: sum(c) > 0),
    nr=st.floats(0.0, 1.0),
    lc=st.integers(1, 6),
    eps=st.tuples(st.floats(0.01, 5.0), st.floats(0.01, 5.0)),
)
def test_ipldp_properties(counts: list[int], nr: float, lc: int, eps: tuple[float, float]) -> None:
    eps_min, eps_max = sorted(eps)
    c = np.array(counts)
    d = c.size
    n_ns = math.floor(nr * d + 1e-9)
    if lc > d - n_ns:
        with pytest.raises(ValueError, match=f"lc={lc} exceeds"):
            ipldp_levels(c, nr, lc, eps_min, eps_max)
        return
    a = ipldp_levels(c, nr, lc, eps_min, eps_max)
    ns, s = ~a.sensitive, a.sensitive
    assert ns.sum() == n_ns == a.nonsensitive.size
    assert np.array_equal(np.flatnonzero(ns), a.nonsensitive)
    # non-sensitive items are exactly the top counts
    if ns.any() and s.any():
        assert c[ns].min() >= c[s].max()
    assert np.all(np.isinf(a.epsilons[ns])) and np.all(a.levels[ns] == -1)
    eps_s = a.epsilons[s]
    assert np.all(np.isfinite(eps_s))
    assert np.all((eps_s >= eps_min * (1 - 1e-12)) & (eps_s <= eps_max * (1 + 1e-12)))
    # budgets non-increasing as counts decrease, along the ranking
    ranked = a.order[a.sensitive[a.order]]
    assert np.all(np.diff(a.epsilons[ranked]) <= 0)
    assert np.all(np.diff(c[a.order]) <= 0)
    # level sizes differ by at most one, the larger ones at the high-budget end, none empty
    assert a.level_sizes.sum() == s.sum()
    assert a.level_sizes.max() - a.level_sizes.min() <= 1
    assert np.all(np.diff(a.level_sizes) >= 0) and np.all(a.level_sizes >= 1)
    assert a.level_budgets[0] == eps_min
    if lc > 1:
        assert np.allclose(np.diff(a.level_budgets), (eps_max - eps_min) / (lc - 1))


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: random_levels(0, (1.0,), (1.0,)), "m must be .* got 0"),
        (lambda: random_levels(10, (1.0, -1.0), (0.5, 0.5)), "budgets must be finite positive .* got -1.0"),
        (lambda: random_levels(10, (1.0, float("inf")), (0.5, 0.5)), "budgets must be .* got inf"),
        (lambda: random_levels(10, (), ()), "budgets must be a non-empty"),
        (lambda: random_levels(10, (1.0, 2.0), (0.5, 0.6)), "shares must sum to 1"),
        (lambda: random_levels(10, (1.0, 2.0), (1.0,)), "shares has length 1, expected 2"),
        (lambda: random_levels(10, (1.0, 2.0), (1.5, -0.5)), "shares must lie in .* got 1.5"),
        (lambda: random_levels(10, (1.0,), (1.0,), exact="yes"), "exact must be .* got 'yes'"),
        (lambda: apportion(5, (0.3, 0.3)), "shares must sum to 1"),
        (lambda: level_structure([]), "budgets_per_item must be a non-empty"),
        (lambda: level_structure([1.0, 0.0]), "budgets_per_item must be finite positive .* got 0.0"),
        (lambda: ipldp_levels([3, 2, 1], 1.5, 1, 0.1, 1.0), "nr must be .* got 1.5"),
        (lambda: ipldp_levels([3, 2, 1], 0.0, 0, 0.1, 1.0), "lc must be .* got 0"),
        (lambda: ipldp_levels([3, 2, 1], 0.0, 4, 0.1, 1.0), r"lc=4 exceeds .*\|D_S\|=3"),
        (lambda: ipldp_levels([3, 2, 1], 1.0, 1, 0.1, 1.0), r"lc=1 exceeds .*\|D_S\|=0"),
        (lambda: ipldp_levels([3, 2, 1], 0.0, 2, 1.0, 0.5), "eps_min=1.0 must not exceed eps_max=0.5"),
        (lambda: ipldp_levels([3, 2, 1], 0.0, 2, 0.0, 0.5), "eps_min must be .* got 0.0"),
        (lambda: ipldp_levels([3, -2, 1], 0.0, 2, 0.1, 0.5), "counts must be non-negative .* got -2"),
        (lambda: ipldp_levels([0, 0], 0.0, 1, 0.1, 0.5), "counts sum to zero"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_value(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()
