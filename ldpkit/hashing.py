"""Hashed reports: the channel of a mixture over hash outcomes, and its exact accounting.

A hashed oracle (OLH, BLH, FLH, Apple's CMS and HCMS) maps the user's item into one of ``m``
*cells* with a hash function ``h``, public and independent of the item, and randomises the cell
with a *base* channel over the cells.  The report is ``(h, y)``.  Two kinds of hash:

* a fresh hash per user (OLH, BLH): the kit's 64-bit seeded family, accounted as every function
  ``[d] -> [m]`` (``hashes=None``);
* a public pool of ``k`` hash functions, one drawn per user (FLH, CMS, HCMS): exactly those
  functions (``hashes`` the ``k x d`` table of cells).

Every base used here is a *support* channel: an output ``y`` of the base names a set of cells
``T(y)``, and ``P(y | c) = w(y) alpha`` when ``c`` is in ``T(y)`` and ``w(y) beta`` otherwise
(randomised response over the cells, ``"grr"``; one bit per cell, ``"unary"``; one Hadamard
coefficient, ``"hadamard"``).  So given ``h`` the report's likelihood depends on the item only
through whether the item lies in ``S = h^-1(T(y))``, the set of items the report *supports*:

``P(report | x) = w(report) (alpha if x in S else beta)``.

The support set is therefore a sufficient statistic of the report, and :class:`HashedChannel`
takes it as the output: ``2**d`` outputs, the subsets of the items as bit masks.  Every notion
of the accountant depends only on the ratio ``r = alpha / beta``, on which support sets the hash
outcomes can produce, and (mutual information only) on their weights.  The closed forms
registered here (Field chapter, :ref:`field-hashing`) give, without enumerating anything:

* the pairwise log-ratio: ``log r`` for every pair of items some hash outcome separates, 0
  otherwise (:prf:ref:`thm-hashed-pairwise`), hence LDP, ID-LDP, MinID-LDP, context-aware LDP;
* LIP under a prior ``pi``: ``max(log r - log(1 + (r-1) lo), log(1 + (r-1) hi))``, ``lo`` the
  smallest prior mass of a non-empty support set and ``hi`` the largest of a support set that
  misses some item (:prf:ref:`thm-hashed-lip`); for every function ``[d] -> [m]`` this is
  ``log(1 + (r-1)(1 - pi_min))``, the worst grouping being the rarest item alone;
* ULDP and FLDP: every output is possible under every input, so ULDP is LDP and FLDP has
  shared fraction 1 (:prf:ref:`thm-hashed-pairwise`);
* the mutual information of a pool of hash functions: the average over the pool of the base's
  mutual information under the prior pushed onto the cells (:prf:ref:`thm-hashed-mip`).

The families with a pool share their estimator (:class:`PooledHashOracle`): the probability that a
report supports item ``i`` depends on whether the user's hash sends ``i`` and the user's item to the
same cell, so with a finite pool it depends on the pair, and the unbiased estimator inverts the
pool's ``d x d`` support matrix (:prf:ref:`thm-pooled-estimator`); the estimator of the papers and
of the peer libraries assumes every pair collides with probability ``1/m`` and is biased by the
pool's actual collisions.

The supremum over outcomes is the notion's value: a notion defined by a worst output is the
worst over hash outcomes of its value given the outcome; mutual information is an average over
outputs, so over hash outcomes too.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Optional, cast, get_args

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike, as_generator
from ._sampling import chunk_rows
from ._validation import (ArgumentTypeError, check_counts, check_items, check_positive_int, check_probability,
                          check_real_counts, describe)
from .accountant import FLDPParameters, ULDPResult, Witness, matrix_pair_blocks, register_closed_form
from .accountant import uldp_every_output_protected
from .base import FrequencyOracle, ReportT, check_support
from .channels import Channel, ExplicitChannel

__all__ = [
    "BASES",
    "HashedChannel",
    "MAX_SUPPORT_BITS",
    "Base",
    "PooledHashOracle",
    "pool_chunk",
    "hadamard_signs",
    "support_masks",
    "walsh_hadamard",
]

#: the base channels over the cells
Base = Literal["grr", "unary", "hadamard"]
BASES: tuple[str, ...] = get_args(Base)

#: largest ``d`` whose reports map to a support set held in one ``int64`` bit mask
MAX_SUPPORT_BITS = 62

#: largest ``d * 2**d`` that :meth:`HashedChannel.to_explicit` materialises
MAX_EXPLICIT_CELLS = 1 << 22


def walsh_hadamard(a: np.ndarray) -> np.ndarray:
    """``a @ H_m`` along the last axis (``m`` a power of two): ``out[..., l] = sum_c a[..., c] (-1)^popcount(c & l)``.

    Examples
    --------
    >>> walsh_hadamard(np.array([1.0, 0.0, 0.0, 0.0])).tolist()   # row 0 of H_4
    [1.0, 1.0, 1.0, 1.0]
    >>> walsh_hadamard(np.array([0.0, 1.0, 0.0, 0.0])).tolist()   # row 1
    [1.0, -1.0, 1.0, -1.0]
    """
    out = np.array(a, dtype=float, copy=True)
    m = out.shape[-1]
    if m & (m - 1):
        raise ValueError(f"the Walsh-Hadamard transform needs a power-of-two length, got {m}")
    lead = out.shape[:-1]
    h = 1
    while h < m:
        blocks = out.reshape(*lead, m // (2 * h), 2, h)
        out = np.stack((blocks[..., 0, :] + blocks[..., 1, :], blocks[..., 0, :] - blocks[..., 1, :]),
                       axis=-2).reshape(*lead, m)
        h *= 2
    return out


def hadamard_signs(cells: ArrayLike, coords: ArrayLike) -> np.ndarray:
    """``H_m[c, l] = (-1)^popcount(c & l)`` elementwise (arrays broadcast), as ``int64`` in ``{-1, +1}``.

    Examples
    --------
    >>> hadamard_signs([0, 1, 3], 3).tolist()
    [1, -1, 1]
    """
    c = np.asarray(cells, dtype=np.int64)
    l_ = np.asarray(coords, dtype=np.int64)
    return cast("np.ndarray", 1 - 2 * (np.bitwise_count(c & l_) & 1).astype(np.int64))


def support_masks(member: np.ndarray) -> np.ndarray:
    """Bit masks ``sum_i member[..., i] 2**i`` of boolean rows over ``d <= 62`` items (``int64``).

    Examples
    --------
    >>> support_masks(np.array([[True, False, True], [False, False, False]])).tolist()
    [5, 0]
    """
    d = member.shape[-1]
    if d > MAX_SUPPORT_BITS:
        raise ValueError(f"a support set over d={d} items does not fit a 64-bit mask "
                         f"(at most MAX_SUPPORT_BITS={MAX_SUPPORT_BITS} items)")
    weights = np.left_shift(np.int64(1), np.arange(d, dtype=np.int64))
    out: np.ndarray = member.astype(np.int64) @ weights
    return out


def _popcount(masks: np.ndarray) -> np.ndarray:
    return cast("np.ndarray", np.bitwise_count(masks).astype(np.int64))


@dataclass(frozen=True, eq=False)
class HashedChannel(Channel):
    """The exact channel of a hashed oracle, with the set of items a report supports as its output.

    The user's item ``x`` is sent to cell ``h(x)`` by a hash ``h``, uniform over the hash outcomes
    (every function ``[d] -> [m]`` when ``hashes`` is ``None``; else the rows of ``hashes``), and
    the cell is randomised by the base channel:

    * ``"grr"``: randomised response over the ``m`` cells, the own cell kept with probability ``p``
      and every other reported with ``q`` (``p + (m - 1) q = 1``); the report supports the items
      hashed to the reported cell;
    * ``"unary"``: one bit per cell, 1 with probability ``p`` for the own cell and ``q`` for the
      others, independently; the report supports the items whose cell's bit is 1 (CMS);
    * ``"hadamard"``: a uniform coefficient ``l`` and the sign ``H_m[h(x), l]``, kept with
      probability ``p`` and flipped with ``q = 1 - p``; the report supports the items ``i`` with
      ``H_m[h(i), l]`` equal to the reported sign (HCMS).

    Output ``b`` (a bit mask over the items) has ``P(b | x) = W(b) (alpha if x in b else beta)``:
    the likelihood of a report depends on the item only through its support set, so this channel
    has every privacy quantity of the report ``(h, y)`` itself (Field chapter,
    :prf:ref:`def-hashed-channel`).  The accountant's closed forms for this kind are registered
    by this module (:mod:`ldpkit.hashing`); :meth:`to_explicit` enumerates the ``2**d`` outputs
    for small ``d``.

    Parameters
    ----------
    d
        Number of items.
    base
        ``"grr"``, ``"unary"`` or ``"hadamard"``.
    cells
        Number of cells ``m >= 2`` (a power of two for ``"hadamard"``).
    p, q
        The base's two probabilities, ``0 < q < p <= 1`` (``p < 1`` for ``"unary"``).
    hashes
        ``None``: every function ``[d] -> [m]`` equally likely (a fresh hash per user, ``"grr"``
        only); else a ``k x d`` integer table, row ``j`` the cells of the items under pool hash ``j``.

    Examples
    --------
    >>> import math
    >>> from ldpkit import accountant
    >>> from ldpkit.hashing import HashedChannel
    >>> e = math.e
    >>> ch = HashedChannel(4, "grr", 4, e / (e + 3), 1 / (e + 3))   # OLH(4, 1) with every hash function
    >>> ch.n_outputs, round(accountant.ldp_epsilon(ch), 12)
    (16, 1.0)
    >>> prior = [0.4, 0.3, 0.2, 0.1]
    >>> round(accountant.lip_epsilon(ch, prior), 6) == round(math.log(1 + (e - 1) * 0.9), 6)
    True
    """

    d: int
    base: str
    cells: int
    p: float
    q: float
    hashes: Optional[np.ndarray] = None

    kind: ClassVar[str] = "hashed"

    def __post_init__(self) -> None:
        d = check_positive_int(self.d, "d")
        if not isinstance(self.base, str) or self.base not in BASES:
            raise ValueError(f"base must be one of {BASES}, got {describe(self.base)}")
        m = check_positive_int(self.cells, "cells", minimum=2)
        if self.base == "hadamard" and m & (m - 1):
            raise ValueError(f"a Hadamard base needs a power-of-two number of cells, got cells={m}")
        p = check_probability(self.p, "p")
        q = check_probability(self.q, "q")
        if not (0.0 < q < p and (p < 1.0 or self.base != "unary")):
            raise ValueError(f"the base's probabilities must satisfy 0 < q < p <= 1 (p < 1 for a unary base), "
                             f"got p={p!r}, q={q!r}")
        if self.base == "grr" and abs(p + (m - 1) * q - 1.0) > 1e-9:
            raise ValueError(f"randomised response over {m} cells needs p + (m - 1) q = 1, got p={p!r}, q={q!r}")
        if self.base == "hadamard" and abs(p + q - 1.0) > 1e-9:
            raise ValueError(f"a Hadamard base needs p + q = 1, got p={p!r}, q={q!r}")
        table = self.hashes
        if table is None:
            if self.base != "grr":
                raise ValueError(f"every hash function [d] -> [m] (hashes=None) is supported for the 'grr' base only, "
                                 f"got base={self.base!r}")
        else:
            arr = np.asarray(table)
            if arr.ndim != 2 or arr.shape[1] != d or arr.shape[0] == 0:
                raise ValueError(f"hashes must be a k x d table of cells with d={d}, got shape {arr.shape}")
            if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
                raise ArgumentTypeError(f"hashes must hold integer cells, got dtype {arr.dtype}")
            if arr.min() < 0 or arr.max() >= m:
                raise ValueError(f"hashes must hold cells in [0, {m}), got {int(arr.min() if arr.min() < 0 else arr.max())}")
            table = np.ascontiguousarray(arr, dtype=np.int64)
            table.setflags(write=False)
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "cells", m)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "hashes", table)

    # ------------------------------------------------------------------ the channel
    @property
    def n_inputs(self) -> int:
        return self.d

    @property
    def n_outputs(self) -> int:
        """``2**d``: the subsets of the items a report can support (a Python int, never enumerated unless asked)."""
        return 1 << self.d

    @property
    def ideal(self) -> bool:
        """Whether the hash is every function ``[d] -> [m]`` (a fresh hash per user) rather than a pool."""
        return self.hashes is None

    @property
    def levels(self) -> tuple[float, float]:
        """``(alpha, beta)``: the report's likelihood factor when it supports the item, and when not."""
        if self.base == "unary":
            return self.p / self.q, (1.0 - self.p) / (1.0 - self.q)
        return self.p, self.q

    @property
    def log_ratio(self) -> float:
        """``log r = log alpha / beta``: the privacy loss of a report that supports one item and not another."""
        if self.base == "unary":
            return math.log(self.p) - math.log(self.q) + math.log1p(-self.q) - math.log1p(-self.p)
        return math.log(self.p) - math.log(self.q)

    def support_weights(self) -> np.ndarray:
        """``W(b)`` for every bit mask ``b`` (``2**d`` values): ``P(b | x) = W(b) (alpha if x in b else beta)``.

        Every function: ``W(b) = m^(1 - |b|) (1 - 1/m)^(d - |b|)``.  A pool: the pool's support sets
        with weight ``1/k`` each, times the base's weight of the output that names them.
        """
        d, m = self.d, self.cells
        if d > MAX_SUPPORT_BITS or d * (1 << d) > MAX_EXPLICIT_CELLS:
            raise ValueError(f"enumerating the 2**{d} support sets needs d * 2**d <= {MAX_EXPLICIT_CELLS} cells")
        masks = np.arange(1 << d, dtype=np.int64)
        if self.hashes is None:
            size = _popcount(masks).astype(float)
            return np.exp((1.0 - size) * math.log(m) + (d - size) * math.log1p(-1.0 / m))
        W = np.zeros(1 << d)
        table = self.hashes
        k = table.shape[0]
        if self.base == "grr":
            member = table[:, None, :] == np.arange(m)[None, :, None]  # (k, m, d)
            np.add.at(W, support_masks(member).ravel(), 1.0 / k)
        elif self.base == "hadamard":
            for row in table:
                signs = hadamard_signs(row[None, :], np.arange(m)[:, None])  # (l, d)
                np.add.at(W, support_masks(signs > 0), 1.0 / (k * m))
                np.add.at(W, support_masks(signs < 0), 1.0 / (k * m))
        else:
            for row in table:
                occupied, group = np.unique(row, return_inverse=True)
                n_occ = occupied.size
                groups = support_masks(group.reshape(-1)[None, :] == np.arange(n_occ)[:, None])  # (n_occ,)
                chosen = (np.arange(1 << n_occ)[:, None] >> np.arange(n_occ)[None, :]) & 1  # (2**n_occ, n_occ)
                union = chosen @ groups
                ones = chosen.sum(axis=1)
                np.add.at(W, union, self.q**ones * (1.0 - self.q) ** (n_occ - ones) / k)
        return W

    def to_explicit(self, max_cells: int = MAX_EXPLICIT_CELLS) -> ExplicitChannel:
        """The ``d x 2**d`` matrix over support sets (only for ``d * 2**d <= max_cells``)."""
        d = self.d
        if d > MAX_SUPPORT_BITS or d * (1 << d) > max_cells:
            raise ValueError(f"the hashed channel has d * 2**d = {d} * 2**{d} cells, above max_cells={max_cells}")
        W = self.support_weights()
        alpha, beta = self.levels
        inside = (np.arange(1 << d, dtype=np.int64)[None, :] >> np.arange(d)[:, None]) & 1
        return ExplicitChannel(W[None, :] * np.where(inside == 1, alpha, beta))

    # ------------------------------------------------------------------ what the closed forms read
    def separated(self) -> np.ndarray:
        """``(d, d)`` booleans: some hash outcome sends items ``x`` and ``x'`` to different cells."""
        d = self.d
        if self.hashes is None:
            return ~np.eye(d, dtype=bool)
        _, group = np.unique(self.hashes.T, axis=0, return_inverse=True)  # items with equal columns collide always
        group = np.asarray(group).reshape(-1)
        return cast("np.ndarray", group[:, None] != group[None, :])

    def support_extremes(self, prior: np.ndarray) -> tuple[Optional[tuple[float, int]], Optional[tuple[float, int]]]:
        """The extreme prior masses of the support sets the hash outcomes produce, each with a witness item.

        ``lo = (mass, x)``: the smallest mass of a non-empty support set, ``x`` in it; ``hi = (mass,
        x)``: the largest mass of a support set that misses some item, ``x`` outside it.  ``None``
        when no such set exists.  Sets are non-empty and proper by their items, not by their mass.
        """
        d, m = self.d, self.cells
        prior = np.asarray(prior, dtype=float)
        total = float(prior.sum())
        if self.hashes is None:
            x = int(np.argmin(prior))
            return (float(prior[x]), x), (total - float(prior[x]), x)
        table = self.hashes
        k = table.shape[0]
        if self.base == "grr":
            flat = (np.arange(k)[:, None] * m + table).ravel()
            mass = np.bincount(flat, weights=np.broadcast_to(prior, table.shape).ravel(), minlength=k * m)
            count = np.bincount(flat, minlength=k * m)
            lo = _extreme(mass, count > 0, np.argmin)
            hi = _extreme(mass, count < d, np.argmax)
            lo_out = None if lo is None else (lo[0], _item_in(table[lo[1] // m], lo[1] % m, True))
            hi_out = None if hi is None else (hi[0], _item_in(table[hi[1] // m], hi[1] % m, False))
            return lo_out, hi_out
        if self.base == "unary":  # supports: unions of the occupied cells' groups
            flat = (np.arange(k)[:, None] * m + table).ravel()
            mass = np.bincount(flat, weights=np.broadcast_to(prior, table.shape).ravel(), minlength=k * m)
            count = np.bincount(flat, minlength=k * m).reshape(k, m)
            group_mass = np.where(count > 0, mass.reshape(k, m), np.inf)
            j = int(np.argmin(group_mass.min(axis=1)))
            c = int(np.argmin(group_mass[j]))
            lo_out = (float(group_mass[j, c]), _item_in(table[j], c, True))
            several = (count > 0).sum(axis=1) >= 2
            if not several.any():  # only the empty set and every item: nothing proper and non-empty
                return lo_out, (0.0, 0)
            smallest = np.where(several, group_mass.min(axis=1), np.inf)
            j = int(np.argmin(smallest))
            c = int(np.argmin(group_mass[j]))
            return lo_out, (total - float(group_mass[j, c]), _item_in(table[j], c, True))
        # hadamard: the items on one side of coefficient l, for every l and sign
        cell_mass = np.zeros((k, m))
        cell_count = np.zeros((k, m))
        rows = np.broadcast_to(np.arange(k)[:, None], table.shape)
        np.add.at(cell_mass, (rows, table), np.broadcast_to(prior, table.shape))
        np.add.at(cell_count, (rows, table), 1.0)
        tm, tc = walsh_hadamard(cell_mass), walsh_hadamard(cell_count)
        side_mass = np.stack([(total + tm) / 2, (total - tm) / 2], axis=-1).ravel()  # (k, l, sign)
        side_count = np.rint(np.stack([(d + tc) / 2, (d - tc) / 2], axis=-1)).ravel()
        lo = _extreme(side_mass, side_count > 0, np.argmin)
        hi = _extreme(side_mass, side_count < d, np.argmax)

        def witness(index: int, inside: bool) -> int:
            j, rest = divmod(index, 2 * m)
            l_, s = divmod(rest, 2)
            on_side = hadamard_signs(table[j], l_) == (1 if s == 0 else -1)
            return int(np.flatnonzero(on_side if inside else ~on_side)[0])

        return (None if lo is None else (lo[0], witness(lo[1], True)),
                None if hi is None else (hi[0], witness(hi[1], False)))


def _extreme(values: np.ndarray, allowed: np.ndarray, pick: Any) -> Optional[tuple[float, int]]:
    if not allowed.any():
        return None
    fill = np.inf if pick is np.argmin else -np.inf
    i = int(pick(np.where(allowed, values, fill)))
    return float(values[i]), i


def _item_in(row: np.ndarray, cell: int, inside: bool) -> int:
    """An item hashed to ``cell`` (``inside``) or elsewhere under the hash ``row``."""
    hits = np.flatnonzero((row == cell) == inside)
    return int(hits[0]) if hits.size else 0


# ---------------------------------------------------------------------------- the closed forms
def _pairwise(ch: HashedChannel) -> np.ndarray:
    """``log r`` on every separated pair, 0 elsewhere (:prf:ref:`thm-hashed-pairwise`)."""
    out: np.ndarray = np.where(ch.separated(), ch.log_ratio, 0.0)
    np.fill_diagonal(out, 0.0)
    return out


@register_closed_form("pairwise", HashedChannel)
def _pairwise_hashed(ch: HashedChannel) -> np.ndarray:
    """A report supporting ``x`` and not ``x'`` has ratio ``alpha / beta``; none has more (:prf:ref:`thm-hashed-pairwise`)."""
    return _pairwise(ch)


def _worst_pair(ch: HashedChannel) -> tuple[float, tuple[int, int]]:
    sep = ch.separated()
    np.fill_diagonal(sep, False)
    if not sep.any():
        return 0.0, (0, 1)
    x, xp = (int(i) for i in np.argwhere(sep)[0])
    return ch.log_ratio, (x, xp)


@register_closed_form("ldp", HashedChannel)
def _ldp_hashed(ch: HashedChannel) -> Witness:
    """``log r`` when some hash outcome separates two items (:prf:ref:`thm-hashed-pairwise`)."""
    if ch.n_inputs < 2:
        return Witness(0.0, (), None)
    value, pair = _worst_pair(ch)
    return Witness(value, pair, None)


_Block = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@register_closed_form("id-ldp", HashedChannel)
def _idldp_hashed(ch: HashedChannel, e: np.ndarray, rule: Any) -> Iterator[_Block]:
    """Every ordered pair from the closed-form pairwise matrix, in blocks of rows (entries off the pairs ``-inf``)."""
    return matrix_pair_blocks(_pairwise(ch), e, rule)


@register_closed_form("lip", HashedChannel)
def _lip_hashed(ch: HashedChannel, prior: np.ndarray) -> Witness:
    """``max(log r - log(1 + (r-1) lo), log(1 + (r-1) hi))`` over the producible support sets (:prf:ref:`thm-hashed-lip`).

    A report supporting ``b`` has ``P(b | x) / P(b) = r / (1 + (r - 1) pi(b))`` for ``x`` in ``b``
    and ``1 / (1 + (r - 1) pi(b))`` otherwise; the first is largest at the lightest non-empty
    support set, the second smallest at the heaviest one that misses an item.
    """
    lo, hi = ch.support_extremes(prior)
    log_r = ch.log_ratio
    rm1 = math.expm1(log_r)
    best, item = 0.0, 0
    if lo is not None:
        value = log_r - math.log1p(rm1 * lo[0])
        if value > best:
            best, item = value, lo[1]
    if hi is not None:
        value = math.log1p(rm1 * hi[0])
        if value > best:
            best, item = value, hi[1]
    return Witness(float(best), (int(item),), None)


def _grr_information(mass: np.ndarray, p: float, q: float) -> np.ndarray:
    """``sum_v [M_v p log(p / P_v) + (1 - M_v) q log(q / P_v)]``, ``P_v = q + (p - q) M_v``, along the last axis."""
    total = mass.sum(axis=-1, keepdims=True)
    pv = q + (p - q) * mass
    terms = mass * p * (math.log(p) - np.log(pv)) + (total - mass) * q * (math.log(q) - np.log(pv))
    out: np.ndarray = terms.sum(axis=-1)
    return out


@register_closed_form("mip", HashedChannel)
def _mip_hashed(ch: HashedChannel, prior: np.ndarray) -> float | Any:
    """A pool: the average over its hash functions of the base's mutual information under the pushed prior.

    Randomised response over the cells with bucket masses ``M_v``:
    ``sum_v [M_v p log(p / P_v) + (1 - M_v) q log(q / P_v)]``, ``P_v = q + (p - q) M_v``; the
    Hadamard base the same over the ``2m`` (coefficient, sign) outputs, each of weight ``1/m``.
    Every function ``[d] -> [m]`` and the unary base are enumerated (:prf:ref:`thm-hashed-mip`).
    """
    if ch.hashes is None or ch.base == "unary":
        return NotImplemented
    table = ch.hashes
    k, m = table.shape[0], ch.cells
    mass = np.zeros((k, m))
    np.add.at(mass, (np.broadcast_to(np.arange(k)[:, None], table.shape), table), np.broadcast_to(prior, table.shape))
    if ch.base == "grr":
        per_hash = _grr_information(mass, ch.p, ch.q)
    else:
        total = mass.sum(axis=1, keepdims=True)
        tm = walsh_hadamard(mass)
        sides = np.stack([(total + tm) / 2, (total - tm) / 2], axis=-1)  # (k, l, sign)
        per_hash = _grr_information(sides, ch.p, ch.q).sum(axis=1) / m
    return float(max(0.0, per_hash.mean()))


@register_closed_form("uldp", HashedChannel)
def _uldp_hashed(ch: HashedChannel, sens_mask: np.ndarray, eps: float, protected: Any) -> ULDPResult | Any:
    """Every output is possible under every input, so none is invertible and ULDP is LDP (:prf:ref:`thm-hashed-pairwise`)."""
    if protected is not None:
        return NotImplemented
    value, pair = _worst_pair(ch) if ch.n_inputs >= 2 else (0.0, (0, 1))
    return uldp_every_output_protected(value, pair, eps)


@register_closed_form("fldp", HashedChannel)
def _fldp_hashed(ch: HashedChannel) -> FLDPParameters:
    """Every output is shared by every pair of inputs: fraction 1, and the LDP log-ratio (:prf:ref:`thm-hashed-pairwise`)."""
    value, pair = _worst_pair(ch)
    return FLDPParameters(1.0, (0, 1), value, pair, 1.0)


# ---------------------------------------------------------------------------- a pool of hash functions
#: cells per block of the pool's ``k x d x d`` reductions (collision and second-moment matrices)
POOL_CHUNK_CELLS = 1 << 22


class PooledHashOracle(FrequencyOracle[ReportT]):
    """A hashed oracle with a public pool of ``k`` hash functions (FLH, CMS, HCMS): exact estimator and variance.

    A user holding ``x`` draws ``J`` uniform in the pool and reports through the base channel
    applied to cell ``h_J(x)``.  The report *supports* item ``i`` (counted by ``aggregate``)
    with probability ``hit`` when ``h_J(i) = h_J(x)`` and ``miss`` otherwise, so
    ``E[C] = miss n + (hit - miss) K c`` with ``K[i, x]`` the share of the pool that sends ``i``
    and ``x`` to one cell (``K[i, i] = 1``) and ``n`` the number of users.  Writing
    ``K = K~ + J/m`` (``J`` all ones), the unbiased estimator is
    ``c_hat = K~^-1 [(C - miss n) / (hit - miss) - n/m]`` with an exact variance (Field chapter,
    :prf:ref:`thm-pooled-estimator`).  When every pair collides at rate ``1/m``, ``K~ = (1 - 1/m) I``
    and it is the papers' estimator, :meth:`ideal_estimate_from_support`; a finite pool's
    collisions make that one biased.

    A subclass sets :attr:`base` and :attr:`cells_arg`, calls ``_init_pool`` and implements sampling and
    aggregation.  Support counts of different items are correlated through the shared hash, so
    :meth:`~ldpkit.base.FrequencyOracle.simulate` runs the per-user path
    (:attr:`aggregate_simulation_exact` is ``False``).
    """

    aggregate_simulation_exact = False

    #: the base channel over the cells, ``"grr"``, ``"unary"`` or ``"hadamard"``
    base: str
    #: the pool, where ``pool[j, i]`` is the cell of item ``i`` under hash function ``j`` (read-only)
    pool: np.ndarray
    #: number of hash functions in the pool
    k: int
    #: number of cells ``m``
    cells: int
    #: support probability when the item shares the user's cell, and when it does not
    hit: float
    miss: float
    #: the constructor's name for the number of cells, ``"g"`` (FLH's buckets) or ``"m"`` (the sketches' cells)
    cells_arg: ClassVar[str]

    def _init_pool(self, pool: np.ndarray, cells: int, p: float, q: float) -> None:
        """Set the pool (``k x d`` cells) and the base's probabilities; refuse a pool that cannot tell items apart."""
        table = np.ascontiguousarray(pool, dtype=np.int64)
        table.setflags(write=False)
        k = table.shape[0]
        _, group, counts = np.unique(table.T, axis=0, return_inverse=True, return_counts=True)
        group = np.asarray(group).reshape(-1)
        if np.any(counts > 1):
            twins = np.flatnonzero(group == group[np.flatnonzero(counts[group] > 1)[0]])[:2]
            raise ValueError(f"every hash function of the pool sends items {int(twins[0])} and {int(twins[1])} to "
                             f"one cell: no estimator can tell them apart; take a larger pool (k={k})")
        if k * (cells - 1) < self.d:
            raise ValueError(f"a pool of k={k} hash functions into m={cells} cells tells at most k (m - 1) = "
                             f"{k * (cells - 1)} items apart, fewer than d={self.d}; take a larger pool")
        self.pool = table
        self.k = k
        self.cells = cells
        self._p, self._q = p, q
        self.hit, self.miss = (p, 0.5) if self.base == "hadamard" else (p, q)
        self._inverse: Optional[np.ndarray] = None

    def channel(self) -> HashedChannel:
        """Exact channel over the pool's hash functions, outputs the supported item sets (:prf:ref:`def-hashed-channel`)."""
        return HashedChannel(self.d, self.base, self.cells, self._p, self._q, self.pool)

    def __repr__(self) -> str:
        cells = f"{self.cells_arg}={getattr(self, self.cells_arg)}"
        return f"{type(self).__name__}(d={self.d}, epsilon={self.epsilon:.6g}, k={self.k}, {cells})"

    def arguments(self) -> dict[str, Any]:
        """``d``, ``epsilon``, ``k`` and the number of cells, under the name :attr:`cells_arg` gives it."""
        return {"d": self.d, "epsilon": self.epsilon, "k": self.k, self.cells_arg: getattr(self, self.cells_arg)}

    def n_reports(self, reports: Any) -> int:
        return len(reports)

    def _draw_hashes(self, items: ArrayLike, rng: RNGLike) -> tuple[np.ndarray, np.random.Generator, np.ndarray]:
        """The checked items, the generator, and each user's hash function: an index uniform in the pool."""
        items = check_items(items, self.d)
        gen = as_generator(rng)
        return items, gen, gen.integers(0, self.k, size=items.size)

    # ------------------------------------------------------------------ the support matrix
    def _blocks(self) -> Iterator[np.ndarray]:
        step = max(1, POOL_CHUNK_CELLS // (self.d * self.d))
        for start in range(0, self.k, step):
            yield self.pool[start : start + step]

    def collisions(self) -> np.ndarray:
        """``K[i, x]``: the share of the pool's hash functions that send items ``i`` and ``x`` to one cell."""
        out = np.zeros((self.d, self.d))
        for block in self._blocks():
            out += (block[:, :, None] == block[:, None, :]).sum(axis=0)
        return out / self.k

    def _solver(self) -> np.ndarray:
        """``K~^-1`` with ``K~ = K - J/m`` (computed once)."""
        if self._inverse is None:
            centred = self.collisions() - 1.0 / self.cells
            cond = np.linalg.cond(centred)
            if not np.isfinite(cond) or cond > 1e12:
                raise ValueError(f"the pool's collision matrix is singular (condition number {cond:.3g}): its hash "
                                 f"functions do not tell the {self.d} items apart; take a larger pool (k={self.k})")
            self._inverse = np.linalg.inv(centred)
        return self._inverse

    # ------------------------------------------------------------------ estimation
    def estimate_from_support(self, support: ArrayLike, n: int) -> np.ndarray:
        """``K~^-1 [(C - miss n) / (hit - miss) - n/m]``: unbiased for the pool's own collisions (:prf:ref:`thm-pooled-estimator`)."""
        c = check_support(support, self.d, n)
        rhs = (c.astype(float) - self.miss * n) / (self.hit - self.miss) - n / self.cells
        out: np.ndarray = self._solver() @ rhs
        return out

    def ideal_estimate_from_support(self, support: ArrayLike, n: int) -> np.ndarray:
        """The papers' (and the peers') estimator: ``(C - n q*) / (hit - q*)`` with ``q* = miss + (hit - miss)/m``.

        Unbiased if every pair of items collided with probability ``1/m``; with a finite pool its
        bias on item ``i`` is ``sum_x c_x (K[i, x] - 1/m) / (1 - 1/m)`` over ``x != i``
        (:prf:ref:`thm-pooled-estimator`).
        """
        c = check_support(support, self.d, n)
        q_star = self.miss + (self.hit - self.miss) / self.cells
        return (c.astype(float) - n * q_star) / (self.hit - q_star)

    def second_moments(self, counts: ArrayLike) -> np.ndarray:
        """``M[i, l] = sum_x c_x E[Z_i Z_l | x]`` with ``Z`` a report's support indicators (real counts allowed)."""
        c = check_real_counts(counts, self.d)
        n = float(c.sum())
        m, p, q = self.cells, self._p, self._q
        out = np.zeros((self.d, self.d))
        for block in self._blocks():
            b = block.shape[0]
            flat = (np.arange(b)[:, None] * m + block).ravel()
            totals = np.bincount(flat, weights=np.broadcast_to(c, block.shape).ravel(), minlength=b * m).reshape(b, m)
            T = np.take_along_axis(totals, block, axis=1)  # (b, d): users whose item shares item i's cell
            same = block[:, :, None] == block[:, None, :]
            if self.base == "grr":
                out += (same * (p * T + q * (n - T))[:, :, None]).sum(axis=0)
            elif self.base == "unary":
                Ti, Tl = T[:, :, None], T[:, None, :]
                apart = p * q * (Ti + Tl) + q * q * (n - Ti - Tl)
                out += np.where(same, (p * T + q * (n - T))[:, :, None], apart).sum(axis=0)
            else:
                delta = p - 0.5
                out += 0.5 * (0.5 * n + delta * T[:, :, None] + 0.5 * n * same + delta * T[:, None, :]).sum(axis=0)
        return out / self.k

    def variance_at(self, counts: ArrayLike) -> np.ndarray:
        """Exact variance at real-valued counts (:prf:ref:`thm-pooled-estimator`).

        With ``G = K~^-1 / (hit - miss)``, ``u = K~^-1 1`` and ``s = miss / (hit - miss) + 1/m``:
        ``Var_i = (G M G^T)_ii - c_i (1 + 2 s u_i) - s^2 n u_i^2``, ``M`` the :meth:`second_moments`.
        """
        c = check_real_counts(counts, self.d)
        inv = self._solver()
        G = inv / (self.hit - self.miss)
        u = inv.sum(axis=1)
        s = self.miss / (self.hit - self.miss) + 1.0 / self.cells
        M = self.second_moments(c)
        out: np.ndarray = np.einsum("ij,jk,ik->i", G, M, G) - c * (1.0 + 2.0 * s * u) - s * s * c.sum() * u * u
        return cast("np.ndarray", np.maximum(out, 0.0))

    def variance(self, counts: ArrayLike) -> np.ndarray:
        """Exact variance of every count estimate (:meth:`variance_at` at integer counts)."""
        return self.variance_at(check_counts(counts, self.d).astype(float))

    def _simulate_support(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        items = np.repeat(np.arange(self.d), counts)
        out: np.ndarray = self.aggregate(self.perturb(items, rng))
        return out


def pool_chunk(n: int, d: int) -> int:
    """Reports per block when a pooled family expands each report over the ``d`` items."""
    return chunk_rows(n, d, POOL_CHUNK_CELLS)
