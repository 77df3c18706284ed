"""Tests for ldpkit.olh: hash family, exact channel accounting (every hash function; the seed pool of the
sampling tests), fresh-seed sampling, the papers' variance, bad inputs.

The generic checks (sampling law against the channel, declared guarantee, unbiasedness with
the declared variance, aggregate simulation against the per-user path, bad items and counts)
run on every registered OLH instance in ``tests/test_contract.py``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ldpkit import accountant
from ldpkit.hashing import HashedChannel
from ldpkit.olh import MAX_G, OLH, HashedReports, bucket_bounds, hash_items, item_keys, seed_parameters

# ---------------------------------------------------------------------------- construction


def test_default_g_is_capped_at_max_g() -> None:
    """From eps of about 13.9 on the default g stays at MAX_G (any g gives eps-LDP)."""
    assert OLH(5, 20.0).g == MAX_G and OLH(5, 700.0).g == MAX_G
    assert OLH(5, 13.0).g == round(math.exp(13.0) + 1)


@pytest.mark.parametrize(("eps", "g"), [(0.1, 2), (0.5, 3), (1.0, 4), (2.0, 8), (3.0, 21)])
def test_default_g(eps: float, g: int) -> None:
    o = OLH(10, eps)
    assert o.g == g
    # GRR over the g hash values: p'/q' = e^eps and the g values' probabilities sum to 1
    assert o.p_prime / o.q_prime == pytest.approx(math.exp(eps), rel=1e-12)
    assert o.p_prime + (g - 1) * o.q_prime == pytest.approx(1.0, abs=1e-15)
    # support: the own value is kept w.p. p'; another user's hash collides w.p. 1/g
    np.testing.assert_array_equal(o.p_support, o.p_prime)
    np.testing.assert_allclose(o.q_support, 1 / g, rtol=1e-15)
    assert o.epsilon == eps
    assert not o.aggregate_simulation_exact


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"d": 1, "epsilon": 1.0}, "d must be"),
        ({"d": 5, "epsilon": 0.0}, "epsilon"),
        ({"d": 5, "epsilon": math.inf}, "epsilon"),
        ({"d": 5, "epsilon": 1.0, "g": 1}, "g must be"),
        ({"d": 5, "epsilon": 1.0, "g": 2.5}, "g must be"),
        ({"d": 5, "epsilon": 1.0, "g": True}, "g must be"),
        ({"d": 5, "epsilon": 1.0, "g": MAX_G + 1}, "MAX_G"),
    ],
)
def test_bad_construction(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        OLH(**kwargs)


# ---------------------------------------------------------------------------- hash family


def test_seed_parameters_and_keys() -> None:
    seeds = np.arange(1000, dtype=np.uint64)
    a, b = seed_parameters(seeds)
    assert a.dtype == np.uint64 and b.dtype == np.uint64
    assert np.all(a & np.uint64(1) == 1), "multipliers must be odd"
    assert np.unique(b).size == seeds.size  # the finaliser is a bijection
    keys = item_keys(np.arange(5000))
    assert np.unique(keys).size == 5000, "distinct items need distinct keys"
    with pytest.raises(ValueError, match="non-negative"):
        item_keys(np.array([0, -3]))
    with pytest.raises(ValueError, match="dtype"):
        item_keys(np.array([0.5]))
    with pytest.raises(ValueError, match="g must be"):
        hash_items(np.array([1], dtype=np.uint64), np.array([0]), 1)
    # python-int reference of the SplitMix64 first output for seed 0
    assert int(a[0]) == 0xE220A8397B1DCDAF | 1


def test_hash_matches_python_reference() -> None:
    mask = (1 << 64) - 1

    def mix(z: int) -> int:
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    gamma = 0x9E3779B97F4A7C15
    rng = np.random.default_rng(3)
    seeds = rng.integers(0, 2**64, size=50, dtype=np.uint64)
    items = rng.integers(0, 10**6, size=50)
    for g in (2, 7, 1000):
        got = hash_items(seeds, items, g)
        for s, x, h in zip(seeds.tolist(), items.tolist(), got.tolist()):
            a = mix((s + gamma) & mask) | 1
            b = mix((s + 2 * gamma) & mask)
            k = mix(((x ^ 0xD1B54A32D192ED03) + gamma) & mask)
            z = ((a * k + b) & mask) >> 32
            assert h == (z * g) >> 32


@settings(max_examples=40, deadline=None)
@given(st.integers(2, MAX_G))
def test_bucket_sizes_are_floor_or_ceil(g: int) -> None:
    """Exact marginal: each bucket gets floor or ceil of 2**32 / g of the 32-bit values."""
    lo, hi = bucket_bounds(np.arange(g), g)
    sizes = (hi - lo).astype(np.int64)
    assert lo[0] == 0 and int(hi[-1]) == 2**32
    np.testing.assert_array_equal(lo[1:], hi[:-1])
    assert set(np.unique(sizes)) <= {2**32 // g, -(-(2**32) // g)}
    # hence |P(h = v) - 1/g| < 2**-32 for a uniform 32-bit value
    assert np.max(np.abs(sizes / 2**32 - 1 / g)) < 2**-32


def test_reduction_boundaries() -> None:
    g = 7
    lo, hi = bucket_bounds(np.arange(g), g)
    for v in range(g):
        assert (int(lo[v]) * g) >> 32 == v
        assert ((int(hi[v]) - 1) * g) >> 32 == v
        if v:
            assert ((int(lo[v]) - 1) * g) >> 32 == v - 1


@pytest.mark.parametrize("g", [2, 5, 1000])
def test_hash_marginal_uniform(g: int) -> None:
    """Chi-square goodness of fit of h_s(i) over many seeds, for several items."""
    rng = np.random.default_rng(11)
    n = 1 << 18
    seeds = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    for item in (0, 1, 2, 12345):
        h = hash_items(seeds, np.full(n, item), g)
        counts = np.bincount(h, minlength=g)
        assert counts.size == g
        _, pval = stats.chisquare(counts)
        assert pval > 1e-6, f"item {item}: p-value {pval}"


@pytest.mark.parametrize("g", [2, 3, 8])
def test_hash_pairwise_joint_uniform(g: int) -> None:
    """(h_s(i), h_s(j)) is uniform on g x g cells: collisions happen w.p. 1/g, which is q*."""
    rng = np.random.default_rng(12)
    n = 1 << 18
    seeds = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    for i, j in [(0, 1), (1, 2), (5, 900), (0, 2**20)]:
        hi = hash_items(seeds, np.full(n, i), g)
        hj = hash_items(seeds, np.full(n, j), g)
        joint = np.bincount(hi * g + hj, minlength=g * g)
        _, pval = stats.chisquare(joint)
        assert pval > 1e-6, f"pair {(i, j)}: p-value {pval}"
        coll = float(np.mean(hi == hj))
        assert abs(coll - 1 / g) < 5 * math.sqrt((1 / g) * (1 - 1 / g) / n)


# ---------------------------------------------------------------------------- accounting


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("g", [None, 2, 5])
def test_channel_is_exact_over_every_hash_function(eps: float, g: int | None) -> None:
    """The channel is the hashed kind over every function [d] -> [g]; its outputs are the supported item sets."""
    o = OLH(5, eps, g)
    ch = o.channel()
    assert isinstance(ch, HashedChannel) and ch.ideal and ch.n_outputs == 2**5
    assert (ch.p, ch.q, ch.cells) == (o.p_prime, o.q_prime, o.g)
    ex = ch.to_explicit()
    np.testing.assert_allclose(ex.matrix.sum(axis=1), 1.0, atol=1e-12)
    lr = accountant.pairwise_log_ratio(ch)
    assert np.all(lr <= eps + 1e-9)
    assert accountant.ldp_epsilon(ch) == pytest.approx(eps, abs=1e-9)
    assert accountant.ldp_epsilon(ex) == pytest.approx(eps, abs=1e-9)


def test_the_support_channel_is_the_mixture_over_every_hash_function() -> None:
    """Enumerate every h: [d] -> [g] and every bucket: the law of the supported set is the channel's row."""
    o = OLH(4, 0.8, g=3)
    d, g = o.d, o.g
    want = np.zeros((d, 2**d))
    funcs = list(itertools.product(range(g), repeat=d))
    for h in funcs:
        for v in range(g):
            mask = sum(1 << i for i in range(d) if h[i] == v)
            for x in range(d):
                want[x, mask] += (o.p_prime if h[x] == v else o.q_prime) / len(funcs)
    np.testing.assert_allclose(o.channel().to_explicit().matrix, want, rtol=1e-12, atol=1e-15)


def test_the_kits_hash_produces_every_function_at_small_d() -> None:
    """Every function [4] -> [3] occurs among 20,000 fresh seeds, about as often as under a uniform hash."""
    seeds = np.random.default_rng(8).integers(0, 2**64, size=20_000, dtype=np.uint64)
    h = hash_items(seeds[:, None], np.arange(4)[None, :], 3)
    counts = np.bincount(h @ (3 ** np.arange(4)), minlength=81)
    assert counts.min() > 0
    assert stats.chisquare(counts).pvalue > 1e-6


@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
@pytest.mark.parametrize("g", [None, 2, 5])
def test_pool_channel_epsilon_by_enumeration(eps: float, g: int | None) -> None:
    o = OLH(5, eps, g)
    ch = o.pool_channel()
    assert ch.matrix.shape == (5, 64 * o.g)
    np.testing.assert_allclose(ch.matrix.sum(axis=1), 1.0, atol=1e-12)
    lr = accountant.pairwise_log_ratio(ch)
    assert np.all(lr <= eps + 1e-9)
    assert accountant.ldp_epsilon(ch) == pytest.approx(eps, abs=1e-9)


def test_pool_channel_entries_follow_the_hash() -> None:
    o = OLH(4, 1.5, g=3)
    seeds = np.array([1, 2**63 + 5, 77], dtype=np.uint64)
    ch = o.pool_channel(seeds=seeds)
    m = ch.matrix.reshape(4, 3, 3)
    for x in range(4):
        for si, s in enumerate(seeds):
            h = int(hash_items(np.array([s]), np.array([x]), 3)[0])
            for v in range(3):
                want = (o.p_prime if v == h else o.q_prime) / 3
                assert m[x, si, v] == pytest.approx(want)
    assert ch.output_labels[0] == (1, 0)
    # a pair that collides on every chosen seed has ratio 0 for that pair, never above eps
    one = o.pool_channel(seeds=[5])
    assert accountant.ldp_epsilon(one) <= 1.5 + 1e-12


def test_pool_channel_bad_inputs() -> None:
    o = OLH(5, 1.0)
    with pytest.raises(ValueError, match="n_seeds"):
        o.pool_channel(n_seeds=0)
    with pytest.raises(ValueError, match="seeds"):
        o.pool_channel(seeds=[-1, 3])
    with pytest.raises(ValueError, match="seeds"):
        o.pool_channel(seeds=[])
    with pytest.raises(ValueError, match="seeds"):
        o.pool_channel(seeds=[2**64])
    with pytest.raises(ValueError, match="seeds"):
        o.pool_channel(seeds=[1.5])
    with pytest.raises(ValueError, match="MAX_CHANNEL_CELLS"):
        OLH(1000, 1.0).pool_channel(n_seeds=10**4)


def test_pool_sampling_matches_the_pool_channel() -> None:
    o = OLH(4, 1.0, g=3)
    ch = o.pool_channel(n_seeds=8)
    for x in (0, 3):
        out = o.sample_pool_outputs(x, 40_000, rng=x, n_seeds=8)
        counts = np.bincount(out, minlength=ch.n_outputs)
        assert stats.chisquare(counts, 40_000 * ch.matrix[x]).pvalue > 1e-4


def test_sampling_draws_fresh_seeds_and_maps_reports_to_support_sets() -> None:
    o = OLH(6, 1.0)
    reports = o.perturb(np.full(1000, 2), rng=4)
    assert np.unique(reports.seeds).size == 1000   # a fresh seed per user, not a pool
    masks = o.output_index(reports)
    h = hash_items(reports.seeds[:, None], np.arange(6)[None, :], o.g)
    np.testing.assert_array_equal((masks[:, None] >> np.arange(6)) & 1, (h == reports.values[:, None]).astype(int))
    with pytest.raises(ValueError, match="62"):
        OLH(63, 1.0).output_index(OLH(63, 1.0).perturb([0], rng=0))


# ---------------------------------------------------------------------------- sampling


def test_perturb_shapes_and_grr_rate() -> None:
    o = OLH(50, 1.0)
    rng = np.random.default_rng(5)
    n = 40000
    items = rng.integers(0, 50, size=n)
    r = o.perturb(items, rng)
    assert isinstance(r, HashedReports) and len(r) == n == o.n_reports(r)
    assert r.seeds.dtype == np.uint64 and r.values.min() >= 0 and r.values.max() < o.g
    kept = np.mean(r.values == hash_items(r.seeds, items, o.g))
    assert abs(kept - o.p_prime) < 5 * math.sqrt(o.p_prime * (1 - o.p_prime) / n)
    # the non-kept values are uniform over the other g - 1 buckets
    off = (r.values - hash_items(r.seeds, items, o.g)) % o.g
    counts = np.bincount(off[off > 0], minlength=o.g)[1:]
    assert stats.chisquare(counts).pvalue > 1e-6


@settings(max_examples=30, deadline=None)
@given(
    d=st.integers(2, 40),
    g=st.integers(2, 50),
    n=st.integers(1, 300),
    seed=st.integers(0, 2**32 - 1),
)
def test_aggregate_equals_brute_force(d: int, g: int, n: int, seed: int) -> None:
    o = OLH(d, 1.0, g)
    rng = np.random.default_rng(seed)
    r = o.perturb(rng.integers(0, d, size=n), rng)
    brute = (hash_items(r.seeds[:, None], np.arange(d)[None, :], g) == r.values[:, None]).sum(axis=0)
    np.testing.assert_array_equal(o.aggregate(r), brute)


def test_aggregate_bad_reports() -> None:
    o = OLH(5, 1.0)
    good = o.perturb([0, 1, 2], 0)
    with pytest.raises(ValueError, match="HashedReports"):
        o.aggregate(np.array([0, 1]))
    with pytest.raises(ValueError, match="g="):
        OLH(5, 1.0, g=7).aggregate(good)
    with pytest.raises(ValueError, match="values"):
        o.aggregate(HashedReports(good.seeds, np.array([0, 1, o.g]), o.g))
    with pytest.raises(ValueError, match="values"):
        o.aggregate(HashedReports(good.seeds, np.array([0, 1]), o.g))
    with pytest.raises(ValueError, match="empty"):
        o.aggregate(HashedReports(np.zeros(0, np.uint64), np.zeros(0, np.int64), o.g))
    with pytest.raises(ValueError, match="uint64"):
        o.aggregate(HashedReports(good.seeds.astype(np.int64), good.values, o.g))


def test_simulate_is_the_per_user_path() -> None:
    o = OLH(6, 1.0)
    counts = np.array([5, 0, 3, 10, 1, 2])
    sim = o.simulate(counts, rng=42)
    per_user = o.estimate(o.perturb(np.repeat(np.arange(6), counts), np.random.default_rng(42)))
    np.testing.assert_array_equal(sim, per_user)


# ---------------------------------------------------------------------------- estimator


def test_variance_formula_of_the_paper() -> None:
    """Wang et al.'s form ``n q*(1-q*)/(p*-q*)^2 + c (1-p*-q*)/(p*-q*)`` with ``p* = p'``, ``q* = 1/g``.

    The implementation computes ``[c p(1-p) + (n-c) q(1-q)] / (p-q)^2``.
    """
    for g in (None, 2, 7):
        o = OLH(4, 1.0, g)
        c = np.array([10, 20, 0, 70])
        p, q = o.p_prime, 1 / o.g
        paper = 100 * q * (1 - q) / (p - q) ** 2 + c * (1 - p - q) / (p - q)
        np.testing.assert_allclose(o.variance(c), paper, rtol=1e-12)


def test_variance_at_the_optimal_g_is_the_papers_headline() -> None:
    """With ``g = e^eps + 1`` an item nobody holds has ``Var = n 4 e^eps / (e^eps - 1)^2``.

    ``eps = ln 3`` makes the optimal ``g = 4`` an integer (the default), so the headline holds
    exactly: ``4 * 3 / 2^2 = 3`` per user.
    """
    o = OLH(5, math.log(3.0))
    assert o.g == 4
    c = np.array([400, 300, 200, 100, 0])
    e = math.exp(o.epsilon)
    assert o.variance(c)[4] == pytest.approx(1000 * 4 * e / (e - 1) ** 2, rel=1e-12)
    assert o.variance(c)[4] == pytest.approx(3000.0, rel=1e-12)
