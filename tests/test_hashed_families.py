"""The hashed families BLH, FLH, CMS and HCMS: estimators, exact variances, peers, aggregation.

The contract, mutation, round-trip, calibration and robustness tests run on every registered
example (tests/test_contract.py and the others); this file checks what is particular to each:

* the estimator's variance against the expression derived with sympy (a pool of every hash
  function, where every pair of items collides at rate ``1/m``), and against simulation on the
  default pool with a tolerance from the variance, with power against a named mistake;
* the pooled estimator is unbiased for a small pool, where the papers' estimator is biased;
* estimates equal to the peer library's (pure-ldp 1.2.0) on the same reports: the peer's server is
  given the kit's hash functions (its FLH server takes a hash matrix, its CMS server a list of hash
  functions) and fed the kit's reports, and returns the papers' estimator;
* aggregation against a brute-force count of the supports.
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import numpy as np
import pytest
import sympy as sp

from ldpkit import OLH, OUE, accountant
from ldpkit.blh import BLH
from ldpkit.channels import UnaryChannel
from ldpkit.flh import FLH
from ldpkit.hashing import PooledHashOracle, hadamard_signs
from ldpkit.sketch import CMS, HCMS
from ldpkit.testing import Z, assert_unbiased, variance_ratio_interval


# ============================================================================ BLH
def test_blh_is_olh_with_two_buckets() -> None:
    blh, olh = BLH(7, 1.3), OLH(7, 1.3, g=2)
    assert blh.g == 2 and blh.p_prime == olh.p_prime and float(blh.q_support[0]) == 0.5
    np.testing.assert_array_equal(blh.variance(np.arange(7)), olh.variance(np.arange(7)))
    assert blh.provenance != olh.provenance     # reports of one are refused by the other
    reports = blh.perturb(np.arange(7), rng=0)
    with pytest.raises(ValueError, match="aggregated by"):
        olh.aggregate(reports)
    assert repr(blh) == "BLH(d=7, epsilon=1.3)" and BLH(**blh.arguments()) == blh


def test_blh_with_a_fresh_hash_is_a_unary_encoding_in_law() -> None:
    """Its support set is a vector of independent bits: the own item's 1 w.p. p', every other w.p. 1/2."""
    blh = BLH(5, 0.8)
    ours = blh.channel().to_explicit().matrix
    unary = UnaryChannel(np.full(5, blh.p_prime), np.full(5, 0.5)).to_explicit().matrix  # bit 0 most significant
    masks = [int("".join(map(str, bits[::-1])), 2) for bits in itertools.product((0, 1), repeat=5)]
    np.testing.assert_allclose(ours[:, masks], unary, rtol=1e-12)


# ============================================================================ the pooled estimator
def every_function_pool(mech: PooledHashOracle[Any]) -> PooledHashOracle[Any]:
    """The same mechanism with a pool of every function [d] -> [m]: every pair collides at rate 1/m."""
    pool = np.array(list(itertools.product(range(mech.cells), repeat=mech.d)))
    mech._init_pool(pool, mech.cells, mech._p, mech._q)
    return mech


def sympy_variance(base: str) -> sp.Expr:
    """Var of the estimator when every pair collides at rate 1/m, derived from the support probabilities."""
    e, m, c, n = sp.symbols("e m c n", positive=True)   # e = e^eps (e^(eps/2) for CMS)
    if base == "grr":
        hit, miss = e / (e + m - 1), 1 / (e + m - 1)
    elif base == "unary":
        hit, miss = e / (1 + e), 1 / (1 + e)
    else:
        hit, miss = e / (1 + e), sp.Rational(1, 2)
    q_star = miss + (hit - miss) / m          # a non-holder's report supports the item
    if base == "grr":
        assert sp.simplify(q_star - 1 / m) == 0  # FLH: q* = 1/g, OLH's
    # the support count is a sum of independent Bernoullis: c of them hit, n - c of them q*
    var_c = c * hit * (1 - hit) + (n - c) * q_star * (1 - q_star)
    return sp.simplify(var_c / (hit - q_star) ** 2)


CASES = [("FLH", lambda: FLH(3, 1.0, k=8, g=3), "grr", lambda m: math.e),
         ("CMS", lambda: CMS(3, 1.0, k=8, m=4), "unary", lambda m: math.exp(0.5)),
         ("HCMS", lambda: HCMS(3, 1.0, k=8, m=4), "hadamard", lambda m: math.e)]


@pytest.mark.parametrize("name, make, base, e_of", CASES, ids=[c[0] for c in CASES])
def test_exact_variance_is_the_sympy_expression_when_collisions_are_uniform(name: str, make: Any, base: str,
                                                                           e_of: Any) -> None:
    mech = every_function_pool(make())
    counts = np.array([7, 2, 0])
    expr = sympy_variance(base)
    e, m, c, n = sp.symbols("e m c n", positive=True)
    f = sp.lambdify((e, m, c, n), expr)
    want = np.array([f(e_of(mech.cells), mech.cells, ci, counts.sum()) for ci in counts], dtype=float)
    np.testing.assert_allclose(mech.variance(counts), want, rtol=1e-10)
    # the estimator is then the papers' one
    support = np.array([5, 3, 4])
    np.testing.assert_allclose(mech.estimate_from_support(support, 9), mech.ideal_estimate_from_support(support, 9),
                               rtol=1e-10, atol=1e-9)
    # power: forgetting that a non-holder's item collides with the user's (q* = miss) gives another value
    wrong = (counts * mech.hit * (1 - mech.hit) + (9 - counts) * mech.miss * (1 - mech.miss)) / (mech.hit - mech.miss) ** 2
    assert np.all(np.abs(wrong / want - 1) > 0.05)


POOLS = [("FLH", lambda: FLH(5, 1.0, k=12)), ("CMS", lambda: CMS(5, 1.0, k=12, m=4)),
         ("HCMS", lambda: HCMS(5, 1.0, k=12, m=4))]
COUNTS = np.array([400, 250, 200, 100, 50])
REPEATS = 600


@pytest.mark.parametrize("name, make", POOLS, ids=[p[0] for p in POOLS])
def test_the_pooled_estimator_is_unbiased_with_its_exact_variance(name: str, make: Any) -> None:
    """Simulation on a small pool: unbiased, the variance within its chi-square band; the papers' estimator is not."""
    mech = make()
    var = mech.variance(COUNTS)
    gen = np.random.default_rng(2024)
    exact, ideal = [], []
    for _ in range(REPEATS):
        reports = mech.perturb(np.repeat(np.arange(mech.d), COUNTS), gen)
        support, n = mech.aggregate(reports), int(COUNTS.sum())
        exact.append(mech.estimate_from_support(support, n))
        ideal.append(mech.ideal_estimate_from_support(support, n))
    exact_arr, ideal_arr = np.array(exact), np.array(ideal)
    assert_unbiased(exact_arr, COUNTS, var)
    lo, hi = variance_ratio_interval(REPEATS, 1e-4 / mech.d)
    ratio = exact_arr.var(axis=0, ddof=1) / var
    assert np.all((lo < ratio) & (ratio < hi)), ratio
    # the papers' estimator has the bias of the pool's collisions, which the simulation sees
    K = mech.collisions()
    bias = ((K - 1 / mech.cells) * COUNTS[None, :]).sum(axis=1) - (1 - 1 / mech.cells) * COUNTS
    bias = bias / (1 - 1 / mech.cells)
    np.testing.assert_allclose(ideal_arr.mean(axis=0) - COUNTS, bias, atol=Z * float(np.sqrt(var.max() / REPEATS)) * 2)
    assert np.max(np.abs(bias) / np.sqrt(var / REPEATS)) > 2 * Z    # detectably biased at this size


def test_pooled_families_refuse_a_pool_that_cannot_tell_items_apart() -> None:
    with pytest.raises(ValueError, match="tell"):
        FLH(40, 1.0, k=1, g=4)
    with pytest.raises(ValueError, match="to one cell|tell"):
        CMS(6, 1.0, k=1, m=2)


# ============================================================================ aggregation
def supports(mech: Any, reports: Any) -> np.ndarray:
    """Brute force: which items each report supports."""
    if isinstance(mech, FLH):
        return mech.pool[reports.seeds.astype(np.int64)] == reports.values[:, None]
    if isinstance(mech, CMS):
        bits = np.unpackbits(reports.bits, axis=1, count=mech.m)
        return np.take_along_axis(bits, mech.pool[reports.rows], axis=1) == 1
    sign = 2 * reports.plus.astype(np.int64) - 1
    return hadamard_signs(mech.pool[reports.rows], reports.coords[:, None]) == sign[:, None]


@pytest.mark.parametrize("mech", [FLH(9, 1.0, k=50), FLH(6, 2.0, k=30, g=5), CMS(9, 1.0, k=40, m=5),
                                  CMS(7, 0.5, k=20, m=16), HCMS(9, 1.0, k=40, m=8), HCMS(5, 3.0, k=10, m=16)], ids=repr)
def test_aggregate_equals_brute_force(mech: Any) -> None:
    gen = np.random.default_rng(1)
    reports = mech.perturb(gen.integers(0, mech.d, size=3000), gen)
    sup = supports(mech, reports)
    np.testing.assert_array_equal(mech.aggregate(reports), sup.sum(axis=0))
    masks = mech.output_index(reports)
    np.testing.assert_array_equal((masks[:, None] >> np.arange(mech.d)) & 1, sup.astype(int))


def test_flh_aggregates_by_sorting_when_its_table_would_be_large() -> None:
    big = FLH(6, 16.0, k=32)   # g = round(e^16 + 1): k * g above the dense table's limit
    assert big.k * big.g > 1 << 24
    reports = big.perturb(np.arange(6).repeat(50), rng=3)
    np.testing.assert_array_equal(big.aggregate(reports), supports(big, reports).sum(axis=0))


# ============================================================================ peers: the same reports
pure_ldp = pytest.importorskip("pure_ldp")


def _quiet(call: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


def test_flh_estimates_equal_pure_ldps_on_the_same_reports() -> None:
    from pure_ldp.frequency_oracles.local_hashing import FastLHServer

    mech = FLH(12, 1.0, k=40)
    reports = mech.perturb(np.random.default_rng(5).integers(0, 12, size=3000), rng=6)
    server = _quiet(lambda: FastLHServer(mech.epsilon, mech.d, mech.k, g=mech.g, use_olh=False,
                                         hash_matrix=mech.pool.astype(float)))
    for seed, value in zip(reports.seeds.tolist(), reports.values.tolist()):
        server.aggregate((value, int(seed)))
    theirs = _quiet(lambda: np.array([server.estimate(i + 1) for i in range(mech.d)]))   # pure-ldp items are 1-based
    support = mech.aggregate(reports)
    np.testing.assert_array_equal(server.aggregated_data, support)
    np.testing.assert_allclose(theirs, mech.ideal_estimate_from_support(support, len(reports)), rtol=1e-9, atol=1e-9)


def test_pure_ldps_cms_server_cannot_be_built_with_numpy_2() -> None:
    """pure-ldp 1.2.0 builds CMSServer with ``d = None``, and its base class calls ``np.zeros(None)``
    (``pure_ldp/core/_freq_oracle_server.py``, line 18), which numpy 2 refuses."""
    from pure_ldp.frequency_oracles.apple_cms import CMSServer

    if int(np.__version__.split(".")[0]) < 2:
        pytest.skip("numpy 1 accepted np.zeros(None)")
    with pytest.raises(TypeError, match="None as shape"):
        CMSServer(1.0, 4, 16)


@pytest.mark.parametrize("hadamard", [False, True], ids=["CMS", "HCMS"])
def test_cms_and_hcms_estimates_equal_pure_ldps_on_the_same_reports(hadamard: bool,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from pure_ldp.core import FreqOracleServer
    from pure_ldp.frequency_oracles.apple_cms import CMSServer

    base_init = FreqOracleServer.__init__

    def init(self: Any, epsilon: float, d: Any, index_mapper: Any = None) -> None:   # the peer's d=None, as 0
        base_init(self, epsilon, 0 if d is None else d, index_mapper)

    monkeypatch.setattr(FreqOracleServer, "__init__", init)
    mech = HCMS(12, 1.0, k=30, m=16) if hadamard else CMS(12, 1.0, k=30, m=16)
    reports = mech.perturb(np.random.default_rng(7).integers(0, 12, size=2000), rng=8)
    server = CMSServer(mech.epsilon, mech.k, mech.m, is_hadamard=hadamard)
    server.hash_funcs = [lambda data, j=j: int(mech.pool[j, int(data)]) for j in range(mech.k)]  # the kit's hashes
    if hadamard:
        for j, l_, plus in zip(reports.rows.tolist(), reports.coords.tolist(), reports.plus.tolist()):
            server.aggregate((1 if plus else -1, j, l_))
    else:
        bits = np.unpackbits(reports.bits, axis=1, count=mech.m).astype(np.int64)
        for j, row in zip(reports.rows.tolist(), bits):
            server.aggregate((2 * row - 1, j))
    theirs = _quiet(lambda: np.array([server.estimate(i) for i in range(mech.d)]))
    ours = mech.ideal_estimate_from_support(mech.aggregate(reports), len(reports))
    np.testing.assert_allclose(theirs, ours, rtol=1e-9, atol=1e-7)


def test_exact_privacy_of_the_pools() -> None:
    """A pool is all the hash outcomes its family produces: pairwise loss log r where some hash separates."""
    for mech in (FLH(6, 1.0, k=20), CMS(6, 1.0, k=20, m=4), HCMS(6, 1.0, k=20, m=8)):
        assert accountant.ldp_epsilon(mech) == pytest.approx(1.0, rel=1e-12)
        assert accountant.verify(mech).satisfied
    # CMS's bits are RAPPOR's: at one budget its LIP under every function would equal OUE's
    prior = np.array([0.5, 0.3, 0.15, 0.05])
    assert accountant.lip_epsilon(CMS(4, 1.0, k=200, m=4), prior) <= accountant.lip_epsilon(OUE(4, 1.0), prior) + 1e-12
