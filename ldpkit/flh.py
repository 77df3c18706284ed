"""Fast local hashing (FLH): local hashing with a fixed public pool of hash functions.

Cormode, Maddock and Maple (VLDB 2021, :cite:`cormode2021frequency`) replace OLH's fresh hash per
user by a pool of ``k`` hash functions fixed in advance: each user draws one of them uniformly,
hashes the item into ``g`` buckets and runs randomised response over the buckets, as OLH does.
The server precomputes the ``k x d`` table of hashes once and aggregates in ``O(n + k d)``
instead of OLH's ``O(n d)``.  The kit's pool is the kit's own hash family
(:func:`ldpkit.olh.hash_items`) at seeds ``0, ..., k - 1``; a report is an OLH report whose seed
is one of them (:class:`~ldpkit.olh.HashedReports`).

Exactness.  The pool is all the hash outcomes FLH can produce, so its channel
(:class:`~ldpkit.hashing.HashedChannel` over the pool) is exact, notion by notion, with no
sampling of hashes (Field chapter, :ref:`field-hashing`).  The estimator of the papers and of
pure-ldp (``(C - n/g) / (p' - 1/g)``) assumes every pair of items collides with probability
``1/g``; with a finite pool the collision rate is the pool's own, and that estimator is biased.
The kit inverts the pool's support matrix instead (:class:`~ldpkit.hashing.PooledHashOracle`,
:prf:ref:`thm-pooled-estimator`), which is unbiased with an exact variance; the papers' estimator
is :meth:`~ldpkit.hashing.PooledHashOracle.ideal_estimate_from_support`.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike
from ._validation import EPS_MAX, EPS_MIN, check_domain_size, check_epsilon, check_positive_int
from .channels import rr_probabilities
from .family import BudgetSweep, Family, register_family
from .hashing import PooledHashOracle, pool_chunk, support_masks
from .olh import HASH_FAMILY, HASHED_CODEC, HashedReports, check_hashed_reports, hash_items, hash_range

__all__ = ["DEFAULT_POOL", "FLH"]

#: default number of hash functions in the pool
DEFAULT_POOL = 1024

#: largest pool
MAX_POOL = 1 << 20

#: largest ``k * d``: the pool's table of hashes is held in memory
MAX_TABLE = 1 << 27

#: largest ``k * g`` counted in a dense table by :meth:`FLH.aggregate` (beyond it, by sorting)
DENSE_COUNTS = 1 << 24


class FLH(PooledHashOracle[HashedReports]):
    """Fast local hashing over ``d`` items: a public pool of ``k`` hash functions into ``g`` buckets.

    A user draws ``j`` uniform in ``0, ..., k - 1``, hashes the item with the kit's hash at seed
    ``j`` and reports ``(j, GRR_g(h_j(x)))``, keeping the bucket with probability
    ``p' = e^eps / (e^eps + g - 1)``; the report is an OLH report whose seed is ``j``.  The server
    counts, for every item, the reports whose bucket is the item's under the report's hash, from
    the pool's precomputed ``k x d`` table.  Estimates: the exact unbiased estimator of the pool
    (:class:`~ldpkit.hashing.PooledHashOracle`); Field chapter, :ref:`field-hashing`.

    Parameters
    ----------
    d
        Domain size (``>= 2``).
    epsilon
        LDP budget.
    k
        Number of hash functions in the pool (default :data:`DEFAULT_POOL`).
    g
        Number of buckets; default OLH's, ``round(e^eps + 1)`` capped at :data:`~ldpkit.olh.MAX_G`.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit import accountant
    >>> from ldpkit.flh import FLH
    >>> flh = FLH(10, 1.0)
    >>> flh.g, flh.k, round(accountant.ldp_epsilon(flh), 6)
    (4, 1024, 1.0)
    >>> reports = flh.perturb(np.repeat(np.arange(10), 100), rng=0)
    >>> bool(reports.seeds.max() < flh.k)               # every seed is one of the pool's
    True
    >>> flh.estimate(reports).shape
    (10,)
    """

    base = "grr"
    cells_arg = "g"

    def __init__(self, d: int, epsilon: float, k: int = DEFAULT_POOL, g: Optional[int] = None) -> None:
        d = check_domain_size(d)
        eps = check_epsilon(epsilon)
        k = check_positive_int(k, "k", maximum=MAX_POOL)
        g_val = hash_range(eps, g)
        if k * d > MAX_TABLE:
            raise ValueError(f"the pool's table of k * d = {k * d} hashes is too large (at most MAX_TABLE={MAX_TABLE})")
        super().__init__(d)
        self.epsilon = eps
        self.g = g_val
        #: keep probability of the randomised response over the buckets (``q_prime``: each other bucket)
        self.p_prime, self.q_prime = rr_probabilities(eps, g_val)
        self._init_pool(hash_items(np.arange(k, dtype=np.uint64)[:, None], np.arange(d)[None, :], g_val), g_val,
                        self.p_prime, self.q_prime)

    def report_parameters(self) -> dict[str, Any]:
        """``d``, ``epsilon``, ``k``, ``g`` and the hash family."""
        return {"d": self.d, "epsilon": self.epsilon, "k": self.k, "g": self.g, "hash": HASH_FAMILY}

    # ------------------------------------------------------------------ sampling
    def perturb(self, items: ArrayLike, rng: RNGLike = None) -> HashedReports:
        """Draw a pool index per user, hash the item with it, randomised response over the ``g`` buckets."""
        items, gen, j = self._draw_hashes(items, rng)
        n = items.size
        h = self.pool[j, items]
        keep = gen.random(n) < self.p_prime
        other = gen.integers(0, self.g - 1, size=n)
        other += other >= h
        return HashedReports(j.astype(np.uint64), np.where(keep, h, other), self.g, self.provenance)

    def _check_reports(self, reports: Any) -> HashedReports:
        reports = check_hashed_reports(reports, self.g, self.provenance)
        seeds = np.asarray(reports.seeds)
        if int(seeds.max()) >= self.k:
            raise ValueError(f"reports.seeds must be indices of the pool, in [0, {self.k}), got {int(seeds.max())}")
        return reports

    def aggregate(self, reports: HashedReports) -> np.ndarray:
        """Support counts ``C_i = sum_j T[j, h_j(i)]`` with ``T[j, v]`` the reports of hash ``j`` and bucket ``v``."""
        reports = self._check_reports(reports)
        flat = reports.seeds.astype(np.int64) * self.g + np.asarray(reports.values, dtype=np.int64)
        keys = np.arange(self.k, dtype=np.int64)[:, None] * self.g + self.pool  # (k, d): hash j, item i's bucket
        if self.k * self.g <= DENSE_COUNTS:
            table = np.bincount(flat, minlength=self.k * self.g)
            hits = table[keys]
        else:  # g too large for a dense table: count each (hash, bucket) key by binary search
            flat.sort()
            hits = np.searchsorted(flat, keys, side="right") - np.searchsorted(flat, keys, side="left")
        out: np.ndarray = hits.sum(axis=0)
        return out

    def output_index(self, reports: HashedReports) -> np.ndarray:
        """The set of items each report supports, as a bit mask (the column of the channel's outputs; ``d <= 62``)."""
        reports = self._check_reports(reports)
        n = len(reports)
        rows = reports.seeds.astype(np.int64)
        values = np.asarray(reports.values, dtype=np.int64)
        out = np.empty(n, dtype=np.int64)
        step = pool_chunk(n, self.d)
        for start in range(0, n, step):
            sl = slice(start, start + step)
            out[sl] = support_masks(self.pool[rows[sl]] == values[sl, None])
        return out


# ---------------------------------------------------------------------------- the family
def _examples() -> tuple[FLH, ...]:
    return (FLH(5, 1.0, k=64), FLH(4, 0.5, k=16, g=3))


def _sweeps() -> tuple[BudgetSweep, ...]:
    return (BudgetSweep("FLH", lambda e: FLH(4, e, k=64), EPS_MIN, EPS_MAX, "hashed",
                        variants=(("FLH(k=32)", lambda: FLH(4, 1.0, k=32)),)),)


def _at_budget(d: int, t: float, g: Optional[int] = None) -> FLH:
    return FLH(d, t, g=g)


register_family(Family(
    "FLH", "cormode2021frequency", FLH, _examples, "fast local hashing (a public pool of hash functions)",
    reports="hashed", codec=HASHED_CODEC, sweeps=_sweeps, at_budget=_at_budget, context=("g",), hi=50.0,
    audit="FLH(d, eps)", order=42))
