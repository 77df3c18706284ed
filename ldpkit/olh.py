"""Optimised local hashing (OLH) with a real seeded hash family.

OLH (Wang et al., USENIX Security 2017, :cite:`wang2017locally`) lets every user hash the
item into a small range ``{0, ..., g-1}`` with a freshly drawn hash function, and then run
generalised randomised response over the ``g`` buckets.  The server counts, for each item
``i``, the users whose reported bucket equals the hash of ``i`` under that user's function.
Derived in the Foundations chapter (eq. :eq:`eq-olh`, :prf:ref:`thm-olh-support` and
:prf:ref:`thm-pure-variance`).

The hash family
---------------
Each user draws a uniform 64-bit ``seed``.  Two SplitMix64 outputs of the stream started at
``seed`` give a multiplier ``a`` (forced odd) and an offset ``b``; item ``x`` is first mixed
into a 64-bit key ``k(x)`` by the same SplitMix64 finaliser (with a fixed salt).  Then

``h_s(x) = (((a * k(x) + b) mod 2**64) >> 32) * g >> 32``,

that is, Dietzfelbinger's multiply-add-shift to 32 bits
(:cite:`dietzfelbinger1996universal`), followed by Lemire's multiply-shift reduction of
a 32-bit value to ``[0, g)``.  All arithmetic is wrapping ``uint64`` numpy arithmetic.

*Marginal uniformity.*  The finaliser of SplitMix64 is a bijection of 64-bit words, so for a
uniform seed the offset ``b`` is exactly uniform; hence ``a * k(x) + b`` is uniform modulo
``2**64`` whatever ``a`` is, its top 32 bits ``z`` are uniform on ``[0, 2**32)``, and the
reduction sends ``floor(2**32 / g)`` or ``ceil(2**32 / g)`` values of ``z`` to each bucket.
So ``P(h_s(i) = v) = 1/g`` up to an absolute error below ``2**-32`` (a relative error below
``g / 2**32``).  :data:`MAX_G` bounds ``g`` so that this error stays below ``2**-12``
relative.

*Support probabilities.*  A user holding ``i`` reports ``h_s(i)`` with probability
``p' = e^eps / (e^eps + g - 1)``, so ``p_support = p'``.  A user holding ``x != i`` supports
``i`` with probability ``q' + (p' - q') P(h_s(i) = h_s(x))`` where ``q' = (1 - p')/(g - 1)``;
this equals ``1/g`` exactly when the collision probability of two distinct keys is ``1/g``.
Distinct items have distinct keys (the mixer is a bijection); the two 32-bit values differ
by the top bits of ``a (k(x) - k(i))`` plus a carry, which for a random odd multiplier is
close to uniform (universality of multiply-shift: the 32-bit values coincide with
probability of order ``2**-31``).  Hence the buckets collide with probability ``1/g`` up to
terms of order ``2**-31``.  This part is a heuristic, not a proof -- ``a`` and ``b`` are
derived from one 64-bit seed -- so the tests check marginal uniformity, pairwise collision
rates and the joint law of two hashed items empirically over many seeds.  The estimator
uses ``q_support = q* = 1/g``.

Accounting
----------
:meth:`OLH.channel` is exact over every hash outcome: a :class:`~ldpkit.hashing.HashedChannel`
whose hash is every function ``[d] -> [g]`` and whose output is the set of items a report
supports (a sufficient statistic of ``(seed, bucket)``).  Every notion's value is the supremum
over hash outcomes, by the closed forms of :mod:`ldpkit.hashing` (Field chapter,
:ref:`field-hashing`); for LIP the worst outcome puts the least likely item alone in a bucket and
every other item in one other bucket.  Treating every function as possible bounds the kit's 64-bit
family from above, and equals it where the family produces every function (the tests check it
does at small ``d``).  A fixed pool of seeds (:meth:`OLH.pool_channel`) only gives a lower bound
on the prior-dependent notions, and is kept for the sampling tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, cast

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike, as_generator
from ._sampling import chunk_rows
from ._validation import (
    EPS_MAX,
    EPS_MIN,
    MAX_USERS,
    ArgumentTypeError,
    check_domain_size,
    check_epsilon,
    check_integer_array,
    check_items,
    check_positive_int,
    describe,
)
from .base import SupportOracle
from .channels import ExplicitChannel, rr_probabilities
from .family import BudgetSweep, Family, domain_sweep, register_family, uniform_loss_inverse
from .hashing import HashedChannel, support_masks
from .reports import Provenance, ReportCodec, check_report_field, check_report_source, check_source

__all__ = ["HashedReports", "OLH", "check_hashed_reports", "hash_items", "hash_range", "seed_parameters", "item_keys",
           "bucket_bounds", "MAX_G"]

#: largest hash range; keeps the deviation of the hash from uniform below ``2**-12`` relative
MAX_G = 1 << 20

#: largest number of cells ``d * n_seeds * g`` that :meth:`OLH.pool_channel` will materialise
MAX_CHANNEL_CELLS = 1 << 24

#: cells per block in :meth:`OLH.aggregate`: 2**20 uint64 cells (8 MB) stay closer to the CPU
#: caches than the library-wide 2**24, which measured about 1.7x faster
AGGREGATE_CHUNK_CELLS = 1 << 20

#: most users :meth:`OLH.simulate` accepts (it runs the per-user path, about 1 GB per 1e8 users)
MAX_SIMULATED_USERS = 10**8

#: name and version of the hash family (part of the reports' provenance)
HASH_FAMILY = "splitmix64-multiply-add-shift/1"

#: fixed entropy of the default seeds of :meth:`OLH.pool_channel` (the sampling tests' pool)
CHANNEL_SEED_ENTROPY = 20170816

_GAMMA = np.uint64(0x9E3779B97F4A7C15)  # SplitMix64 increment (golden ratio)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_KEY_SALT = np.uint64(0xD1B54A32D192ED03)  # separates item keys from seed-derived words
_ONE = np.uint64(1)
_S27, _S30, _S31, _S32 = (np.uint64(k) for k in (27, 30, 31, 32))


@dataclass(frozen=True, eq=False)
class HashedReports:
    """OLH reports: user ``u`` sent the hash seed ``seeds[u]`` and the bucket ``values[u]``.

    Attributes
    ----------
    seeds
        ``uint64`` array of per-user hash seeds.
    values
        ``int64`` array of reported buckets in ``[0, g)``.
    g
        Size of the hash range the reports were produced with.

    Examples
    --------
    >>> from ldpkit import OLH
    >>> reports = OLH(10, 1.0).perturb([1, 2, 3, 3], rng=0)
    >>> len(reports), str(reports.seeds.dtype), reports.g
    (4, 'uint64', 4)
    >>> bool(((reports.values >= 0) & (reports.values < reports.g)).all())
    True
    """

    seeds: np.ndarray
    values: np.ndarray
    g: int
    #: the mechanism configuration that made these reports (``None`` when built by hand)
    source: Optional[Provenance] = None

    def __post_init__(self) -> None:
        check_report_field(self.g, "HashedReports g")
        check_report_source(self.source, "HashedReports")

    def __len__(self) -> int:
        return int(self.seeds.shape[0])

    def row(self, i: int) -> tuple[int, int]:
        """User ``i``'s report ``(seed, bucket)``."""
        return int(self.seeds[i]), int(self.values[i])


def hash_range(epsilon: float, g: Optional[int] = None) -> int:
    """The number of buckets of a local-hashing oracle at budget ``epsilon``: ``g``, checked, or OLH's default.

    The default ``max(2, round(e^eps + 1))`` is the variance-optimal integer choice, capped at
    :data:`MAX_G` (from ``eps`` of about 13.9 on); a given ``g`` must lie in ``[2, MAX_G]``.

    Examples
    --------
    >>> from ldpkit.olh import hash_range
    >>> hash_range(1.0), hash_range(1.0, 8)
    (4, 8)
    """
    if g is None:
        # round(e^eps + 1), capped at MAX_G (reached at eps = log(MAX_G - 1.5), about 13.9)
        return MAX_G if epsilon >= math.log(MAX_G - 1.5) else max(2, int(round(math.exp(epsilon) + 1)))
    g_val = check_positive_int(g, "g", 2)
    if g_val > MAX_G:
        raise ValueError(f"g must be at most MAX_G={MAX_G}, got {g_val}")
    return g_val


def check_hashed_reports(reports: Any, g: int, provenance: Provenance) -> HashedReports:
    """Check ``reports`` are :class:`HashedReports` over ``g`` buckets made by the mechanism ``provenance`` names.

    The checks every hashed oracle's aggregation runs before any work (OLH, FLH): the type, the
    hash range, the provenance, then the seeds (a 1-d ``uint64`` array) and the buckets (integers
    in ``[0, g)``, one per seed).

    Examples
    --------
    >>> from ldpkit import OLH
    >>> from ldpkit.olh import check_hashed_reports
    >>> olh = OLH(10, 1.0)
    >>> len(check_hashed_reports(olh.perturb([1, 2, 3], rng=0), olh.g, olh.provenance))
    3
    """
    if not isinstance(reports, HashedReports):
        raise ArgumentTypeError(f"reports must be HashedReports, got {type(reports).__name__}")
    if reports.g != g:
        raise ValueError(f"reports were made with g={reports.g}, this oracle uses g={g}")
    check_source(reports, provenance)
    seeds, values = np.asarray(reports.seeds), np.asarray(reports.values)
    if seeds.dtype != np.uint64 or seeds.ndim != 1:
        raise ArgumentTypeError(f"reports.seeds must be a 1-d uint64 array, got {seeds.dtype} of shape {seeds.shape}")
    if values.shape != seeds.shape:
        raise ValueError(f"reports.values has shape {values.shape}, expected {seeds.shape}")
    if seeds.size == 0:
        raise ValueError("reports is empty: at least one user is needed")
    if values.dtype == bool or not np.issubdtype(values.dtype, np.integer):
        raise ArgumentTypeError(f"reports.values must be an integer array, got dtype {values.dtype}")
    if values.min() < 0 or values.max() >= g:
        bad = values[(values < 0) | (values >= g)]
        raise ValueError(f"reports.values must be integers in [0, {g}), got {describe(bad[0])}")
    return reports


def _mix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser (a bijection of 64-bit words), applied elementwise to ``uint64``."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> _S30)) * _MIX1
        z = (z ^ (z >> _S27)) * _MIX2
    return cast("np.ndarray", z ^ (z >> _S31))


def _as_seeds(seeds: ArrayLike, name: str = "seeds") -> np.ndarray:
    """Validate an array of hash seeds and return it as non-empty 1-d ``uint64``."""
    arr = np.asarray(seeds)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d array of 64-bit seeds, got shape {arr.shape}")
    if arr.dtype == np.uint64:
        return arr
    return check_integer_array(arr, name, 0, 2**64, what="64-bit seeds", dtype=np.uint64)


def seed_parameters(seeds: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Multiplier ``a`` (odd) and offset ``b`` of the hash functions with the given seeds.

    ``a`` and ``b`` are the first two outputs of a SplitMix64 generator whose state starts at
    the seed: ``a = mix(seed + gamma) | 1`` and ``b = mix(seed + 2 gamma)``.
    """
    s = _as_seeds(seeds)
    with np.errstate(over="ignore"):
        a = _mix64(s + _GAMMA) | _ONE
        b = _mix64(s + _GAMMA + _GAMMA)
    return a, b


def item_keys(items: ArrayLike) -> np.ndarray:
    """64-bit keys of item indices: the SplitMix64 finaliser of ``item ^ salt`` (distinct items give distinct keys)."""
    arr = np.asarray(items)
    if arr.dtype != np.uint64:
        if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"items must be non-negative integers, got dtype {arr.dtype}")
        if arr.size and arr.min() < 0:
            raise ValueError(f"items must be non-negative integers, got {arr.min()!r}")
    with np.errstate(over="ignore"):
        return _mix64((arr.astype(np.uint64) ^ _KEY_SALT) + _GAMMA)


def hash_items(seeds: ArrayLike, items: ArrayLike, g: int) -> np.ndarray:
    """``h_{seeds[u]}(items[u])`` elementwise (arrays broadcast), as ``int64`` in ``[0, g)``.

    ``h_s(x) = ((((a k(x) + b) mod 2**64) >> 32) * g) >> 32`` with ``(a, b)`` from
    :func:`seed_parameters` and ``k`` from :func:`item_keys`.
    """
    g = check_positive_int(g, "g", 2)
    if g > MAX_G:
        raise ValueError(f"g must be at most MAX_G={MAX_G}, got {g}")
    s = np.asarray(seeds)
    a, b = seed_parameters(s.reshape(-1))
    a = a.reshape(s.shape)
    b = b.reshape(s.shape)
    k = item_keys(items)
    with np.errstate(over="ignore"):
        z = (a * k + b) >> _S32
        return cast("np.ndarray", ((z * np.uint64(g)) >> _S32).astype(np.int64))


def bucket_bounds(values: np.ndarray, g: int) -> tuple[np.ndarray, np.ndarray]:
    """Range ``[lo, hi)`` of 32-bit ``z`` that the reduction ``z * g >> 32`` sends to bucket ``values``.

    ``lo_v = ceil(v 2**32 / g)``: the smallest ``z`` with ``z g >= v 2**32``.
    """
    v = np.asarray(values).astype(np.uint64)
    gg = np.uint64(g)
    lo = ((v << _S32) + gg - _ONE) // gg
    hi = (((v + _ONE) << _S32) + gg - _ONE) // gg
    return lo, hi


class OLH(SupportOracle[HashedReports]):
    """Optimised local hashing over ``d`` items with hash range ``g``.

    Each user draws a 64-bit seed, hashes the item to ``h_s(x)`` in ``[0, g)`` and reports
    ``(seed, GRR_g(h_s(x)))``, where ``GRR_g`` keeps the bucket with probability
    ``p' = e^eps / (e^eps + g - 1)`` and otherwise reports one of the other ``g - 1`` buckets
    uniformly.  Item ``i`` is *supported* by a report when ``h_s(i)`` equals the reported
    bucket: ``p_support = p'`` and ``q_support = 1/g`` (module docstring; Foundations
    chapter, :prf:ref:`thm-olh-support`).  The estimator and its per-item variance come from
    :class:`~ldpkit.base.SupportOracle`; the variance is exact for each item marginally
    because the support indicators of one item are independent across users.

    :attr:`aggregate_simulation_exact` is ``False``: support counts of different items are
    correlated through the shared hash of each user, so there is no cheap exact sampler of
    the joint support vector from the counts.  ``_simulate_support`` therefore expands
    the counts into users (``np.repeat``) and runs :meth:`perturb` and :meth:`aggregate`.

    Parameters
    ----------
    d
        Domain size (``>= 2``).
    epsilon
        LDP budget, finite and positive.
    g
        Hash range; default ``max(2, round(e^eps + 1))``, the variance-optimal integer choice,
        capped at :data:`MAX_G` (from ``eps`` of about 13.9 on; any ``g`` gives eps-LDP, and the
        variance lost to the cap is below ``2**-19`` relative).

    Examples
    --------
    >>> from ldpkit import OLH, accountant
    >>> olh = OLH(10, 1.0)
    >>> olh.g, round(olh.p_prime, 4), float(olh.q_support[0])    # g = round(e^eps + 1)
    (4, 0.4754, 0.25)
    >>> round(accountant.ldp_epsilon(olh), 6)                    # exact over every hash function
    1.0
    >>> olh.channel().n_outputs                                  # outputs: the supported item sets
    1024
    """

    aggregate_simulation_exact = False

    def __init__(self, d: int, epsilon: float, g: int | None = None) -> None:
        d = check_domain_size(d)
        eps = check_epsilon(epsilon)
        g_val = hash_range(eps, g)
        super().__init__(d)
        self.epsilon = eps
        self.g = g_val
        #: keep probability of the GRR over the buckets (``q_prime``: probability of each other bucket)
        self.p_prime, self.q_prime = rr_probabilities(eps, g_val)
        self.p_support = np.full(d, self.p_prime)
        self.q_support = np.full(d, 1.0 / g_val)
        self._keys = item_keys(np.arange(d))

    def __repr__(self) -> str:
        return f"OLH(d={self.d}, epsilon={self.epsilon:.6g}, g={self.g})"

    def report_parameters(self) -> dict[str, Any]:
        """``d``, ``epsilon``, ``g`` and the hash family."""
        return {"d": self.d, "epsilon": self.epsilon, "g": self.g, "hash": HASH_FAMILY}

    def arguments(self) -> dict[str, Any]:
        """``d``, ``epsilon`` and ``g``."""
        return {"d": self.d, "epsilon": self.epsilon, "g": self.g}

    # ------------------------------------------------------------------ accounting
    def channel(self) -> HashedChannel:
        """Exact channel over every hash outcome: randomised response over the ``g`` buckets after every function ``[d] -> [g]``.

        Its output is the set of items a report supports (``2**d`` outputs, as bit masks): given
        the seed, ``P((s, v) | x)`` is ``p'`` times the seed's probability when ``h_s(x) = v`` and
        ``q'`` times it otherwise, so the likelihood depends on the item only through the support
        set ``{i : h_s(i) = v}``, and the channel over support sets has every privacy quantity of
        the channel over ``(seed, bucket)``.  The accountant's closed forms (:mod:`ldpkit.hashing`)
        take the supremum over hash outcomes (Field chapter, :prf:ref:`thm-hashed-lip`).
        """
        return HashedChannel(self.d, "grr", self.g, self.p_prime, self.q_prime)

    @staticmethod
    def channel_seeds(n_seeds: int = 64) -> np.ndarray:
        """The default hash seeds of :meth:`pool_channel`: ``n_seeds`` draws from ``SeedSequence(CHANNEL_SEED_ENTROPY)``."""
        n_seeds = check_positive_int(n_seeds, "n_seeds", maximum=MAX_USERS)
        gen = np.random.default_rng(np.random.SeedSequence(CHANNEL_SEED_ENTROPY))
        return gen.integers(0, 2**64, size=n_seeds, dtype=np.uint64)

    @property
    def default_channel_seeds(self) -> int:
        """Number of seeds :meth:`pool_channel` uses by default: 64, or fewer when ``d * 64 * g`` cells would not fit."""
        return max(1, min(64, MAX_CHANNEL_CELLS // (self.d * self.g)))

    def pool_channel(self, seeds: Optional[ArrayLike] = None, n_seeds: Optional[int] = None) -> ExplicitChannel:
        """The channel restricted to a finite pool of hash seeds (for the sampling tests, not for accounting).

        Outputs are the pairs ``(seed, value)``; output ``(s, v)`` of input ``x`` has
        probability ``(1/n_seeds) * (p' if v == h_s(x) else q')``.  Since the seed is drawn
        independently of the input, a ratio ``P(s, v | x) / P(s, v | x')`` is decided seed by
        seed, so the pool gives the exact pairwise loss as soon as one seed separates the pair.
        A prior-dependent notion (LIP, MIP) depends on which groupings of the items the seeds
        produce, and a pool of 64 misses the rare ones: its LIP value is only a lower bound, and
        OLH calibrated on it broke its LIP promise on some fresh seeds (Field chapter,
        :ref:`field-hashing`).  :meth:`channel` is the exact one.

        Parameters
        ----------
        seeds
            Explicit hash seeds (integers in ``[0, 2**64)``); default: ``n_seeds`` seeds
            drawn from ``SeedSequence(CHANNEL_SEED_ENTROPY)``.
        n_seeds
            Number of default seeds (ignored when ``seeds`` is given); default
            :attr:`default_channel_seeds`.
        """
        if seeds is None:
            seeds_arr = self.channel_seeds(self.default_channel_seeds if n_seeds is None else n_seeds)
        else:
            seeds_arr = _as_seeds(seeds)
        m = seeds_arr.size
        cells = self.d * m * self.g
        if cells > MAX_CHANNEL_CELLS:
            raise ValueError(
                f"OLH pool channel would have d * n_seeds * g = {cells} cells, above MAX_CHANNEL_CELLS={MAX_CHANNEL_CELLS}"
            )
        h = hash_items(seeds_arr[None, :], np.arange(self.d)[:, None], self.g)  # (d, m)
        mat = np.full((self.d, m, self.g), self.q_prime / m)
        rows, cols = np.meshgrid(np.arange(self.d), np.arange(m), indexing="ij")
        mat[rows, cols, h] = self.p_prime / m
        labels = tuple((int(s), v) for s in seeds_arr for v in range(self.g))
        return ExplicitChannel(mat.reshape(self.d, m * self.g), output_labels=labels)

    # ------------------------------------------------------------------ sampling
    def perturb(self, items: ArrayLike, rng: RNGLike = None) -> HashedReports:
        """Draw a seed per user, hash the item, and apply GRR over the ``g`` buckets."""
        items = check_items(items, self.d)
        gen = as_generator(rng)
        seeds = gen.integers(0, 2**64, size=items.size, dtype=np.uint64)
        return self._perturb_with_seeds(items, seeds, gen)

    def _perturb_with_seeds(self, items: np.ndarray, seeds: np.ndarray, gen: np.random.Generator) -> HashedReports:
        """Hash each item with its user's seed, then GRR over the ``g`` buckets (the client's randomness)."""
        n = items.size
        h = hash_items(seeds, items, self.g)
        keep = gen.random(n) < self.p_prime
        other = gen.integers(0, self.g - 1, size=n)
        other += other >= h  # uniform over the g - 1 buckets other than h
        return HashedReports(seeds, np.where(keep, h, other), self.g, self.provenance)

    def output_index(self, reports: HashedReports) -> np.ndarray:
        """The set of items each report supports, as a bit mask: its column in :meth:`channel`.

        Report ``(s, v)`` supports ``{i : h_s(i) = v}``; every item is hashed with the report's own
        seed, so :meth:`~ldpkit.base.FrequencyOracle.sample_outputs` runs the mechanism with fresh
        seeds, as :meth:`perturb` draws them (the black-box audits sample it so).  Needs ``d <= 62``.
        """
        reports = self._check_reports(reports)
        if self.d > 62:
            raise ValueError(f"output_index maps a report to the set of items it supports, a 62-bit mask at most; "
                             f"d={self.d} is too large")
        out = np.empty(len(reports), dtype=np.int64)
        step = chunk_rows(len(reports), self.d, AGGREGATE_CHUNK_CELLS)
        items = np.arange(self.d)[None, :]
        for start in range(0, len(reports), step):
            sl = slice(start, start + step)
            h = hash_items(reports.seeds[sl, None], items, self.g)
            out[sl] = support_masks(h == reports.values[sl, None])
        return out

    def sample_pool_outputs(self, x: int, size: int, rng: RNGLike = None, n_seeds: Optional[int] = None) -> np.ndarray:
        """``size`` outputs of input ``x`` with seeds drawn uniformly from :meth:`channel_seeds` (columns of :meth:`pool_channel`).

        Output ``(s, v)`` has column ``index(s) * g + v`` in :meth:`pool_channel`, so this runs the
        client's hashing and randomised response exactly as :meth:`perturb` does, restricted to
        the pool's seeds (the seed itself is independent of the input).
        """
        x = check_items([x], self.d, "x")[0]
        size = check_positive_int(size, "size", maximum=MAX_USERS)
        gen = as_generator(rng)
        pool = self.channel_seeds(self.default_channel_seeds if n_seeds is None else n_seeds)
        which = gen.integers(0, pool.size, size=size)
        reports = self._perturb_with_seeds(np.full(size, x, dtype=np.int64), pool[which], gen)
        return cast("np.ndarray", which.astype(np.int64) * self.g + reports.values)

    def _check_reports(self, reports: Any) -> HashedReports:
        return check_hashed_reports(reports, self.g, self.provenance)

    def aggregate(self, reports: HashedReports) -> np.ndarray:
        """Support counts ``C_i = #{u : h_{s_u}(i) = y_u}`` for every item.

        Works on blocks of users x all items (about ``2**20`` cells per block, bounded memory).  Instead of
        hashing every cell, each report's bucket ``y`` is turned into the interval
        ``[lo_y, hi_y)`` of 32-bit values that reduce to ``y``; then
        ``h_s(i) = y  <=>  (a k_i + b - lo_y 2**32) mod 2**64 < (hi_y - lo_y) 2**32``,
        one multiply, one add and one comparison per cell.
        """
        reports = self._check_reports(reports)
        n = len(reports)
        a, b = seed_parameters(reports.seeds)
        lo, hi = bucket_bounds(reports.values, self.g)
        with np.errstate(over="ignore"):
            shift = b - (lo << _S32)  # wraps modulo 2**64
        width = (hi - lo) << _S32  # < 2**64 because hi - lo <= ceil(2**32 / 2)
        keys = self._keys[None, :]
        total = np.zeros(self.d, dtype=np.int64)
        step = chunk_rows(n, self.d, AGGREGATE_CHUNK_CELLS)
        with np.errstate(over="ignore"):
            for start in range(0, n, step):
                sl = slice(start, start + step)
                cell = a[sl, None] * keys
                cell += shift[sl, None]
                total += np.count_nonzero(cell < width[sl, None], axis=0)
        return total

    def n_reports(self, reports: HashedReports) -> int:
        return len(reports)

    def _simulate_support(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # Not exact-from-aggregates: expand the counts into users and run the per-user path.
        n = int(counts.sum())
        if n > MAX_SIMULATED_USERS:
            raise ValueError(
                f"counts sum to {n} users; OLH simulates user by user (support counts of different items "
                f"are correlated through each user's hash), so at most MAX_SIMULATED_USERS={MAX_SIMULATED_USERS} users"
            )
        items = np.repeat(np.arange(self.d), counts)
        return self.aggregate(self.perturb(items, rng))


# ---------------------------------------------------------------------------- report files and the family
# the codec of hashed reports: each user's seed and reported bucket, with the hash range g
HASHED_CODEC = ReportCodec(
    "hashed", HashedReports, (("seed", "<u8", False), ("value", "<i8", True)), lambda r: {"g": int(r.g)},
    lambda r: (np.asarray(r.seeds, dtype=np.uint64), np.asarray(r.values, dtype=np.int64)),
    lambda cols, meta, src: HashedReports(cols[0], cols[1], int(meta["g"]), src))


def _examples() -> tuple[OLH, ...]:
    return (OLH(5, 1.0), OLH(4, 0.5, g=3))


def _sweeps() -> tuple[BudgetSweep, ...]:
    # the channel's closed forms do not grow with g = round(e^eps + 1): verified at every budget
    return (domain_sweep(OLH, "hashed"),
            BudgetSweep("OLH(g=3)", lambda e: OLH(4, e, g=3), EPS_MIN, EPS_MAX, "hashed"))


def _at_budget(d: int, t: float, g: Optional[int] = None) -> OLH:
    return OLH(d, t, g)


register_family(Family(
    "OLH", "wang2017locally", OLH, _examples, "optimised local hashing", reports="hashed", codec=HASHED_CODEC,
    sweeps=_sweeps, at_budget=_at_budget, context=("g",), hi=50.0, audit="OLH(d, eps)", order=40,
    inverse=uniform_loss_inverse))
