"""Apple's count-mean sketch (CMS) and its Hadamard variant (HCMS).

Apple's Differential Privacy Team (2017, :cite:`apple2017learning`) collect frequencies with a
public pool of ``k`` hash functions into ``m`` cells.  A user draws one hash function ``j`` and
hashes the item to cell ``c = h_j(x)``;

* **CMS** reports ``j`` and the ``m`` bits of the one-hot vector of ``c``, each flipped with
  probability ``1 / (1 + e^(eps/2))``: a symmetric unary encoding of the cell (RAPPOR's), so the
  cell's bit is 1 with probability ``a = e^(eps/2) / (1 + e^(eps/2))`` and every other bit with
  ``b = 1 - a``;
* **HCMS** reports ``j``, a uniform coefficient ``l`` of the Hadamard transform and the sign
  ``H_m[c, l]``, kept with probability ``p = e^eps / (1 + e^eps)``: one bit per user.

Both are hashed oracles with a pool (:class:`~ldpkit.hashing.PooledHashOracle`): a CMS report
supports item ``i`` when the bit of ``h_j(i)`` is 1, an HCMS report when ``H_m[h_j(i), l]`` equals
its sign.  Their channels are exact over the pool (:class:`~ldpkit.hashing.HashedChannel`), and
the estimator inverts the pool's support matrix, unbiased whatever the pool's collisions; Apple's
estimator ``m/(m - 1) (mean_j M[j, h_j(i)] - n/m)`` (pure-ldp's) assumes every pair of items
collides with probability ``1/m``, and is :meth:`~ldpkit.hashing.PooledHashOracle.ideal_estimate_from_support`
(Field chapter, :ref:`field-hashing`, :prf:ref:`thm-pooled-estimator`).  The pool is the kit's
hash (:func:`ldpkit.olh.hash_items`) at seeds ``0, ..., k - 1``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike
from ._sampling import PackedBernoulli, chunk_rows
from ._validation import EPS_MAX, EPS_MIN, ArgumentTypeError, check_domain_size, check_epsilon, check_positive_int
from .family import BudgetSweep, Family, register_family
from .hashing import PooledHashOracle, hadamard_signs, pool_chunk, support_masks, walsh_hadamard
from .olh import HASH_FAMILY, hash_items
from .reports import Provenance, ReportCodec, check_report_field, check_report_source, check_source

__all__ = ["CMS", "CMS_EPS_MAX", "HCMS", "HadamardSketchReports", "SketchReports"]

#: default number of hash functions in the pool
DEFAULT_POOL = 256

#: largest pool, and largest ``k * d`` (the pool's table of hashes is held in memory)
MAX_POOL = 1 << 20
MAX_TABLE = 1 << 27

#: largest number of cells (a CMS report holds ``m`` bits)
MAX_CELLS = 1 << 16

#: CMS's largest budget, as RAPPOR's (``ldpkit.unary.RAPPOR_EPS_MAX``): its bits are RAPPOR's
CMS_EPS_MAX = 30.0
_CMS_HIGH_WHY = (
    "above it 1 - a = 1/(1 + e^(eps/2)) is below 3e-7, and storing a next to 1 in double precision "
    "shifts the channel's log-ratio by more than the accountant's relative tolerance of 1e-9"
)


def _default_cells(d: int) -> int:
    """The smallest power of two at least ``d`` (at least 2): about one cell per item."""
    return max(2, 1 << (int(d) - 1).bit_length())


def _pool(d: int, k: Any, m: Any, power_of_two: bool) -> tuple[int, int, np.ndarray]:
    k = check_positive_int(k, "k", maximum=MAX_POOL)
    m = _default_cells(d) if m is None else check_positive_int(m, "m", minimum=2, maximum=MAX_CELLS)
    if power_of_two and m & (m - 1):
        raise ValueError(f"HCMS needs a power-of-two number of cells m (a Hadamard transform), got m={m}")
    if k * d > MAX_TABLE:
        raise ValueError(f"the pool's table of k * d = {k * d} hashes is too large (at most MAX_TABLE={MAX_TABLE})")
    return k, m, hash_items(np.arange(k, dtype=np.uint64)[:, None], np.arange(d)[None, :], m)


def _check_rows(rows: Any, n_ref: Optional[int], name: str) -> np.ndarray:
    arr = np.asarray(rows)
    if arr.ndim != 1 or arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ArgumentTypeError(f"{name} must be a 1-d integer array, got {arr.dtype} of shape {arr.shape}")
    if n_ref is not None and arr.shape[0] != n_ref:
        raise ValueError(f"{name} has {arr.shape[0]} entries, expected {n_ref}")
    return arr


# ---------------------------------------------------------------------------- report types
@dataclass(frozen=True, eq=False)
class SketchReports:
    """CMS reports: user ``u`` sent hash index ``rows[u]`` and the ``m`` bits ``bits[u]`` (``np.packbits`` order).

    Examples
    --------
    >>> from ldpkit.sketch import CMS
    >>> reports = CMS(10, 1.0).perturb([1, 2, 3], rng=0)
    >>> len(reports), reports.m, reports.bits.shape
    (3, 16, (3, 2))
    """

    rows: np.ndarray
    bits: np.ndarray
    m: int
    #: the mechanism configuration that made these reports (``None`` when built by hand)
    source: Optional[Provenance] = None

    def __post_init__(self) -> None:
        check_report_field(self.m, "SketchReports m")
        bits = self.bits
        if not isinstance(bits, np.ndarray) or bits.dtype != np.uint8 or bits.ndim != 2:
            raise ArgumentTypeError(f"SketchReports bits must be a 2-d uint8 array (np.packbits), got "
                                    f"{getattr(bits, 'dtype', type(bits).__name__)} of shape {getattr(bits, 'shape', None)}")
        if bits.shape[1] != (int(self.m) + 7) // 8:
            raise ValueError(f"SketchReports bits have {bits.shape[1]} bytes per user, expected {(int(self.m) + 7) // 8}")
        _check_rows(self.rows, bits.shape[0], "SketchReports rows")
        check_report_source(self.source, "SketchReports")

    def __len__(self) -> int:
        return int(self.bits.shape[0])

    def row(self, i: int) -> tuple[int, np.ndarray]:
        """User ``i``'s report ``(hash index, bits)`` with the bits unpacked (0/1 of length ``m``)."""
        return int(self.rows[i]), np.unpackbits(self.bits[i], count=int(self.m)).astype(np.int64)


@dataclass(frozen=True, eq=False)
class HadamardSketchReports:
    """HCMS reports: user ``u`` sent hash index ``rows[u]``, coefficient ``coords[u]`` and sign ``+1`` if ``plus[u]``.

    Examples
    --------
    >>> from ldpkit.sketch import HCMS
    >>> reports = HCMS(10, 1.0).perturb([1, 2, 3], rng=0)
    >>> len(reports), reports.m, sorted(set(reports.plus.tolist())) <= [0, 1]
    (3, 16, True)
    """

    rows: np.ndarray
    coords: np.ndarray
    plus: np.ndarray
    m: int
    #: the mechanism configuration that made these reports (``None`` when built by hand)
    source: Optional[Provenance] = None

    def __post_init__(self) -> None:
        check_report_field(self.m, "HadamardSketchReports m")
        rows = _check_rows(self.rows, None, "HadamardSketchReports rows")
        _check_rows(self.coords, rows.shape[0], "HadamardSketchReports coords")
        _check_rows(self.plus, rows.shape[0], "HadamardSketchReports plus")
        check_report_source(self.source, "HadamardSketchReports")

    def __len__(self) -> int:
        return int(np.asarray(self.rows).shape[0])

    def row(self, i: int) -> tuple[int, int, int]:
        """User ``i``'s report ``(hash index, coefficient, sign)`` with the sign in ``{-1, +1}``."""
        return int(self.rows[i]), int(self.coords[i]), 1 if int(self.plus[i]) else -1


SKETCH_CODEC = ReportCodec(
    "sketch", SketchReports, (("row", "<i8", True), ("bits", "|u1", False)), lambda r: {"m": int(r.m)},
    lambda r: (np.asarray(r.rows, dtype=np.int64), r.bits),
    lambda cols, meta, src: SketchReports(cols[0], cols[1], int(meta["m"]), src),
    widths=lambda meta: (None, (int(meta["m"]) + 7) // 8))

HADAMARD_SKETCH_CODEC = ReportCodec(
    "hadamard-sketch", HadamardSketchReports, (("row", "<i8", True), ("coord", "<i8", True), ("plus", "|u1", False)),
    lambda r: {"m": int(r.m)},
    lambda r: (np.asarray(r.rows, dtype=np.int64), np.asarray(r.coords, dtype=np.int64),
               np.asarray(r.plus, dtype=np.uint8)),
    lambda cols, meta, src: HadamardSketchReports(cols[0], cols[1], cols[2], int(meta["m"]), src))


#: the report type of a sketch
_Reports = TypeVar("_Reports", SketchReports, HadamardSketchReports)


def _check_sketch_reports(reports: Any, kind: type[_Reports], oracle: CMS | HCMS) -> _Reports:
    """The checks both sketches make of reports first: their type, their source, their ``m`` and at least one user."""
    if not isinstance(reports, kind):
        raise ArgumentTypeError(f"reports must be {kind.__name__}, got {type(reports).__name__}")
    check_source(reports, oracle.provenance)
    if int(reports.m) != oracle.m:
        raise ValueError(f"reports were made with m={reports.m}, this oracle uses m={oracle.m}")
    if len(reports) == 0:
        raise ValueError("reports is empty: at least one user is needed")
    return reports


# ---------------------------------------------------------------------------- CMS
class CMS(PooledHashOracle[SketchReports]):
    """Apple's count-mean sketch over ``d`` items: a pool of ``k`` hash functions into ``m`` cells, one bit per cell.

    A user draws ``j``, hashes the item to ``c = h_j(x)`` and sends ``j`` with ``m`` independent
    bits, the bit of ``c`` equal to 1 with probability ``a = e^(eps/2) / (1 + e^(eps/2))`` and every
    other with ``b = 1 - a``: eps-LDP whatever the hash (Field chapter, :ref:`field-hashing`).  The
    report supports the items whose cell's bit is 1; estimates are the pool's exact unbiased ones.

    Parameters
    ----------
    d
        Domain size (``>= 2``).
    epsilon
        LDP budget, in ``[1e-6, 30]`` (:data:`CMS_EPS_MAX`).
    k
        Number of hash functions (default 256).
    m
        Number of cells (default: the smallest power of two at least ``d``).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit import accountant
    >>> from ldpkit.sketch import CMS
    >>> cms = CMS(10, 1.0)
    >>> cms.k, cms.m, round(accountant.ldp_epsilon(cms), 6)
    (256, 16, 1.0)
    >>> cms.estimate(cms.perturb(np.repeat(np.arange(10), 50), rng=0)).shape
    (10,)
    """

    base = "unary"
    cells_arg = "m"

    def __init__(self, d: int, epsilon: float, k: int = DEFAULT_POOL, m: Optional[int] = None) -> None:
        d = check_domain_size(d)
        eps = check_epsilon(epsilon, high=CMS_EPS_MAX, high_why=_CMS_HIGH_WHY)
        k, m, pool = _pool(d, k, m, power_of_two=False)
        super().__init__(d)
        self.epsilon = eps
        self.m = m
        #: probability that the own cell's bit is 1 (``b = 1 - a`` for every other bit)
        self.a = 1.0 / (1.0 + math.exp(-eps / 2))
        self.b = 1.0 / (1.0 + math.exp(eps / 2))
        self._init_pool(pool, m, self.a, self.b)
        self._sampler: Optional[PackedBernoulli] = None

    def report_parameters(self) -> dict[str, Any]:
        """``d``, ``epsilon``, ``k``, ``m`` and the hash family."""
        return {"d": self.d, "epsilon": self.epsilon, "k": self.k, "m": self.m, "hash": HASH_FAMILY}

    def perturb(self, items: ArrayLike, rng: RNGLike = None) -> SketchReports:
        """Draw a hash per user and the ``m`` bits of its cell (exact Bernoulli sampling, bit-packed)."""
        items, gen, rows = self._draw_hashes(items, rng)
        n = items.size
        packed = np.empty((n, (self.m + 7) // 8), dtype=np.uint8)
        if self._sampler is None:
            self._sampler = PackedBernoulli(np.full(self.m, self.b))
        step = chunk_rows(n, self.m)
        for start in range(0, n, step):
            c = self.pool[rows[start : start + step], items[start : start + step]]
            block = self._sampler.sample(gen, c.size)
            mask = (np.uint8(0x80) >> (c & 7).astype(np.uint8)).astype(np.uint8)
            own = gen.random(c.size) < self.a
            at = (np.arange(c.size), c >> 3)
            block[at] = (block[at] & ~mask) | np.where(own, mask, np.uint8(0))
            packed[start : start + step] = block
        return SketchReports(rows, packed, self.m, self.provenance)

    def _check_reports(self, reports: Any) -> SketchReports:
        reports = _check_sketch_reports(reports, SketchReports, self)
        rows = np.asarray(reports.rows)
        if rows.min() < 0 or rows.max() >= self.k:
            raise ValueError(f"reports.rows must be indices of the pool, in [0, {self.k}), got "
                             f"{int(rows.min() if rows.min() < 0 else rows.max())}")
        pad = 8 * reports.bits.shape[1] - self.m
        if pad and np.any(reports.bits[:, -1] & np.uint8((1 << pad) - 1)):
            raise ValueError(f"SketchReports: a user has bits set beyond cell m-1={self.m - 1}")
        return reports

    def aggregate(self, reports: SketchReports) -> np.ndarray:
        """Support counts ``C_i = sum_j B[j, h_j(i)]``, ``B[j, c]`` the number of reports of hash ``j`` with bit ``c`` set."""
        reports = self._check_reports(reports)
        n = len(reports)
        rows = np.asarray(reports.rows, dtype=np.int64)
        sums = np.zeros((self.k, self.m), dtype=np.int64)
        step = chunk_rows(n, self.m)
        for start in range(0, n, step):
            r = rows[start : start + step]
            order = np.argsort(r, kind="stable")
            bits = np.unpackbits(reports.bits[start : start + step][order], axis=1, count=self.m).astype(np.int64)
            keys, first = np.unique(r[order], return_index=True)
            sums[keys] += np.add.reduceat(bits, first, axis=0)
        out: np.ndarray = np.take_along_axis(sums, self.pool, axis=1).sum(axis=0)
        return out

    def output_index(self, reports: SketchReports) -> np.ndarray:
        """The set of items each report supports (bit of the item's cell set), as a bit mask (``d <= 62``)."""
        reports = self._check_reports(reports)
        n = len(reports)
        rows = np.asarray(reports.rows, dtype=np.int64)
        out = np.empty(n, dtype=np.int64)
        step = pool_chunk(n, max(self.d, self.m))
        for start in range(0, n, step):
            sl = slice(start, start + step)
            bits = np.unpackbits(reports.bits[sl], axis=1, count=self.m).astype(bool)
            cells = self.pool[rows[sl]]
            out[sl] = support_masks(np.take_along_axis(bits, cells, axis=1))
        return out


# ---------------------------------------------------------------------------- HCMS
class HCMS(PooledHashOracle[HadamardSketchReports]):
    """Apple's Hadamard count-mean sketch over ``d`` items: one Hadamard coefficient of the hashed cell, one bit.

    A user draws ``j`` and a coefficient ``l`` uniformly, hashes the item to ``c = h_j(x)`` and sends
    ``(j, l, s)`` with ``s = H_m[c, l]`` kept with probability ``p = e^eps / (1 + e^eps)`` and flipped
    otherwise: eps-LDP.  The report supports item ``i`` when ``H_m[h_j(i), l] = s``, with probability
    ``p`` when ``i`` shares the user's cell and ``1/2`` otherwise (Field chapter, :ref:`field-hashing`).

    Parameters
    ----------
    d
        Domain size (``>= 2``).
    epsilon
        LDP budget.
    k
        Number of hash functions (default 256).
    m
        Number of cells, a power of two (default: the smallest power of two at least ``d``).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit import accountant
    >>> from ldpkit.sketch import HCMS
    >>> hcms = HCMS(10, 1.0)
    >>> hcms.m, round(accountant.ldp_epsilon(hcms), 6)
    (16, 1.0)
    >>> hcms.estimate(hcms.perturb(np.repeat(np.arange(10), 50), rng=0)).shape
    (10,)
    """

    base = "hadamard"
    cells_arg = "m"

    def __init__(self, d: int, epsilon: float, k: int = DEFAULT_POOL, m: Optional[int] = None) -> None:
        d = check_domain_size(d)
        eps = check_epsilon(epsilon)
        k, m, pool = _pool(d, k, m, power_of_two=True)
        super().__init__(d)
        self.epsilon = eps
        self.m = m
        #: probability of sending the true sign (``q = 1 - p``, stored exactly)
        self.p = 1.0 / (1.0 + math.exp(-eps))
        self.q = 1.0 / (1.0 + math.exp(eps))
        self._init_pool(pool, m, self.p, self.q)

    def report_parameters(self) -> dict[str, Any]:
        """``d``, ``epsilon``, ``k``, ``m`` and the hash family."""
        return {"d": self.d, "epsilon": self.epsilon, "k": self.k, "m": self.m, "hash": HASH_FAMILY}

    def perturb(self, items: ArrayLike, rng: RNGLike = None) -> HadamardSketchReports:
        """Draw a hash and a coefficient per user; send the coefficient's sign, kept with probability ``p``."""
        items, gen, rows = self._draw_hashes(items, rng)
        n = items.size
        coords = gen.integers(0, self.m, size=n)
        sign = hadamard_signs(self.pool[rows, items], coords)
        keep = gen.random(n) < self.p
        plus = np.where(keep, sign, -sign) > 0
        return HadamardSketchReports(rows, coords, plus.astype(np.uint8), self.m, self.provenance)

    def _check_reports(self, reports: Any) -> HadamardSketchReports:
        reports = _check_sketch_reports(reports, HadamardSketchReports, self)
        for name, values, hi in (("rows", reports.rows, self.k), ("coords", reports.coords, self.m),
                                 ("plus", reports.plus, 2)):
            arr = np.asarray(values)
            if arr.min() < 0 or arr.max() >= hi:
                raise ValueError(f"reports.{name} must be integers in [0, {hi}), got "
                                 f"{int(arr.min() if arr.min() < 0 else arr.max())}")
        return reports

    def aggregate(self, reports: HadamardSketchReports) -> np.ndarray:
        """Support counts ``C_i = n/2 + (1/2) sum_j (H S_j)[h_j(i)]``, ``S_j[l]`` the sum of the signs of hash ``j``, coefficient ``l``."""
        reports = self._check_reports(reports)
        n = len(reports)
        signs = 2.0 * np.asarray(reports.plus, dtype=np.int64) - 1.0
        flat = np.asarray(reports.rows, dtype=np.int64) * self.m + np.asarray(reports.coords, dtype=np.int64)
        S = np.bincount(flat, weights=signs, minlength=self.k * self.m).reshape(self.k, self.m)
        F = walsh_hadamard(S)  # F[j, c] = sum_l S[j, l] H[c, l] (H is symmetric)
        total = np.take_along_axis(F, self.pool, axis=1).sum(axis=0)
        return cast("np.ndarray", np.rint((n + total) / 2.0).astype(np.int64))

    def output_index(self, reports: HadamardSketchReports) -> np.ndarray:
        """The set of items each report supports (``H_m[h_j(i), l]`` equal to the sign), as a bit mask (``d <= 62``)."""
        reports = self._check_reports(reports)
        n = len(reports)
        rows = np.asarray(reports.rows, dtype=np.int64)
        coords = np.asarray(reports.coords, dtype=np.int64)
        sign = 2 * np.asarray(reports.plus, dtype=np.int64) - 1
        out = np.empty(n, dtype=np.int64)
        step = pool_chunk(n, self.d)
        for start in range(0, n, step):
            sl = slice(start, start + step)
            out[sl] = support_masks(hadamard_signs(self.pool[rows[sl]], coords[sl, None]) == sign[sl, None])
        return out


# ---------------------------------------------------------------------------- the families
def _cms_examples() -> tuple[CMS, ...]:
    return (CMS(5, 1.0, k=32, m=4), CMS(4, 2.0, k=16, m=3))


def _hcms_examples() -> tuple[HCMS, ...]:
    return (HCMS(5, 1.0, k=32, m=4), HCMS(4, 0.5, k=16, m=8))


def _cms_sweeps() -> tuple[BudgetSweep, ...]:
    return (BudgetSweep("CMS", lambda e: CMS(4, e, k=32), EPS_MIN, CMS_EPS_MAX, "sketch",
                        variants=(("CMS(m=8)", lambda: CMS(4, 1.0, k=32, m=8)),)),)


def _hcms_sweeps() -> tuple[BudgetSweep, ...]:
    return (BudgetSweep("HCMS", lambda e: HCMS(4, e, k=32), EPS_MIN, EPS_MAX, "hadamard-sketch",
                        variants=(("HCMS(m=8)", lambda: HCMS(4, 1.0, k=32, m=8)),)),)


register_family(Family(
    "CMS", "apple2017learning", CMS, _cms_examples, "Apple's count-mean sketch (a pool of hashes, one bit per cell)",
    reports="sketch", codec=SKETCH_CODEC, sweeps=_cms_sweeps, at_budget=lambda d, t: CMS(d, t), hi=CMS_EPS_MAX,
    audit="CMS(d, eps)", order=43))
register_family(Family(
    "HCMS", "apple2017learning", HCMS, _hcms_examples, "Apple's Hadamard count-mean sketch (one Hadamard coefficient)",
    reports="hadamard-sketch", codec=HADAMARD_SKETCH_CODEC, sweeps=_hcms_sweeps, at_budget=lambda d, t: HCMS(d, t),
    hi=50.0, audit="HCMS(d, eps)", order=44))
