"""Subset selection (SS) and its input-discriminative form (ID-SS): reports that are sets of ``k`` items.

Subset selection (Wang et al. 2016, :cite:`wang2016mutual`; Ye and Barg 2018,
:cite:`ye2018optimal`) lets a user holding item ``x`` report a set ``S`` of ``k`` items: a set
containing ``x`` has probability proportional to ``e^eps``, any other set probability
proportional to 1 (:prf:ref:`def-field-ss`).  Equivalently, ``x`` is put in the set with
probability ``p = k e^eps / (k e^eps + d - k)`` and the rest of the set is a uniform choice of
``k - 1`` (or ``k``) of the other ``d - 1`` items.  The channel is eps-LDP exactly
(:prf:ref:`thm-field-ss-privacy`), the support-count estimator is a pure protocol's
(:prf:ref:`thm-field-ss-variance`), and the ``k`` minimising its total variance is one of the
two integers around ``d / (e^eps + 1)`` (:prf:ref:`thm-field-ss-size`).

ID-SS (:prf:ref:`def-field-idss`) gives each input its own inclusion weight ``e^{t_x}``
(``t_x >= 0``): ``x`` enters the set with probability ``p_x = k e^{t_x} / (k e^{t_x} + d - k)``.
Its pairwise privacy loss is separable, ``L(x, x') = a_x - b_x'`` with
``a_x = log p_x`` and ``b_x = log((1 - p_x) k / (d - k))``
(:prf:ref:`thm-field-idss-privacy`), so MinID-LDP and ID-LDP are checked in ``O(d)`` per
class of items, and its unbiased estimator and exact variance have closed forms
(:prf:ref:`thm-field-idss-variance`).  :func:`optimal_idss` chooses ``k`` and the weights for a
promise of per-item budgets.  Field chapter, :ref:`sec-field-ss` and :ref:`sec-field-idss`.

Reports are :class:`SubsetReports`: one bit-packed ``d``-bit mask per user with exactly ``k``
bits set (``ceil(d / 8)`` bytes per user; an ``(n, k)`` integer array costs ``2k`` bytes or more
per user, more than the mask whenever ``k > d / 16``).  The set carries no order: a report that
lists the kept item first (multi-freq-ldpy 0.2.5) leaks it, the set does not.

The channel kind :class:`SubsetChannel` registers closed forms with the accountant for LDP, the
pairwise loss matrix (and so context-aware LDP), ID-LDP and MinID-LDP, ULDP, LIP, FLDP and
(when the prior has few distinct values) MIP; IPLDP is defined only for ``k = 1`` or
``k = d - 1`` (the only square channels) and is computed by enumeration, as is everything at
small ``d``.

Examples
--------
>>> from ldpkit import accountant
>>> from ldpkit.subset import SubsetSelection
>>> ss = SubsetSelection(10, 1.0)
>>> ss.k, round(float(ss.p_support[0]), 4), round(float(ss.q_support[0]), 4)
(3, 0.5381, 0.2735)
>>> round(accountant.ldp_epsilon(ss), 12)
1.0
>>> reports = ss.perturb([0, 3, 3, 9], rng=0)
>>> [len(reports.row(u)) for u in range(len(reports))]
[3, 3, 3, 3]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Optional, TYPE_CHECKING, cast

import numpy as np
from numpy.typing import ArrayLike

from . import accountant
from ._rng import RNGLike, as_generator
from ._sampling import chunk_rows, packed_column_counts
from ._validation import (
    EPS_MAX,
    EPS_MIN,
    MAX_USERS,
    ArgumentTypeError,
    check_budget_vector,
    check_counts,
    check_domain_size,
    check_epsilon,
    check_items,
    check_positive_int,
    check_real_counts,
    describe,
    real_array,
)
from .accountant import Guarantee, Witness
from .base import FrequencyOracle, SupportOracle, check_support
from .channels import Channel, ExplicitChannel
from .family import BudgetSweep, Family, budget_range_limits, budget_range_refusal, per_item_budgets, register_family
from .reports import Provenance, ReportCodec, array_digest, check_report_source, check_source

if TYPE_CHECKING:  # pragma: no cover
    from .contracts import Contract

__all__ = [
    "IDSS",
    "IDSS_EPS_MAX",
    "IDSS_EPS_MIN",
    "IDSubsetSelection",
    "SS",
    "SUBSET_CODEC",
    "SubsetChannel",
    "SubsetReports",
    "SubsetSelection",
    "idss_per_user_variance",
    "optimal_idss",
    "optimal_subset_size",
    "subset_rank",
    "subset_total_variance",
]

#: largest ``d * C(d, k)`` that :meth:`SubsetChannel.to_explicit` materialises
MAX_EXPLICIT_CELLS = 1 << 22

#: most users :meth:`~ldpkit.base.FrequencyOracle.simulate` expands (it runs the per-user path)
MAX_SIMULATED_USERS = 10**8

#: the budgets :class:`IDSubsetSelection` solves for (its optimiser is tested on this range)
IDSS_EPS_MIN, IDSS_EPS_MAX = 0.01, 20.0

#: the pair rules ID-SS takes (positively homogeneous, so calibration scales them)
PairRuleName = Literal["min", "average", "max"]
_RULES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {"min": np.minimum, "max": np.maximum, "average": lambda a, b: (np.asarray(a) + np.asarray(b)) / 2.0}

#: states of the mutual-information recursion above which the accountant enumerates instead
_MIP_STATES = 1 << 20


# ---------------------------------------------------------------------------- sizes and variances
def _log_comb(n: int, r: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(r + 1) - math.lgamma(n - r + 1)


def _ss_probabilities(d: int, k: int, epsilon: float) -> tuple[float, float]:
    """``(p, q)`` of SS: ``P(i in S | x = i)`` and ``P(i in S | x != i)``, from the stable form of ``p``."""
    rho = (d - k) / k
    p = 1.0 / (1.0 + rho * math.exp(-epsilon))
    return p, (k - p) / (d - 1)


def subset_total_variance(d: int, k: int, epsilon: float) -> float:
    """Per-user total variance ``sum_i Var[c_hat_i] / n`` of SS with subset size ``k``, at any counts.

    ``[p (1 - p) + (d - 1) q (1 - q)] / (p - q)^2``: the same for every count vector of ``n`` users,
    because it depends on the counts through their total only (Field chapter,
    :prf:ref:`thm-field-ss-variance`).

    Examples
    --------
    >>> from ldpkit.subset import subset_total_variance
    >>> [round(subset_total_variance(10, k, 1.0), 3) for k in (2, 3)]
    [30.057, 29.104]
    """
    d = check_domain_size(d)
    k = check_positive_int(k, "k", 1, d - 1)
    eps = check_epsilon(epsilon)
    p, q = _ss_probabilities(d, k, eps)
    return float((p * (1 - p) + (d - 1) * q * (1 - q)) / (p - q) ** 2)


def optimal_subset_size(d: int, epsilon: float) -> int:
    """The subset size ``k`` minimising SS's total variance: the better of the integers around ``d / (e^eps + 1)``.

    The total variance, as a function of a real ``k``, has its one minimum at
    ``k* = d / (e^eps + 1)`` (Field chapter, :prf:ref:`thm-field-ss-size`), so the best integer is
    ``floor(k*)`` or ``ceil(k*)`` (within ``[1, d - 1]``); a tie goes to the smaller.  This can
    differ from rounding ``k*`` (multi-freq-ldpy 0.2.5), which picks the worse neighbour when the
    variance rises faster on one side.

    Examples
    --------
    >>> from ldpkit.subset import optimal_subset_size
    >>> optimal_subset_size(10, 1.0), optimal_subset_size(100, 1.0), optimal_subset_size(10, 10.0)
    (3, 27, 1)
    """
    d = check_domain_size(d)
    eps = check_epsilon(epsilon)
    star = d / (math.exp(eps) + 1.0) if eps < 700 else 0.0
    candidates = sorted({min(max(1, c), d - 1) for c in (math.floor(star), math.ceil(star))})
    return min(candidates, key=lambda c: (subset_total_variance(d, c, eps), c))


def subset_rank(sets: ArrayLike, d: int) -> np.ndarray:
    """Lexicographic rank of each row of ascending items among ``itertools.combinations(range(d), k)``.

    ``rank = C(d, k) - 1 - sum_j C(d - 1 - s_j, k - j)`` for the ascending items ``s_0 < ... < s_{k-1}``
    (the combinatorial number system read from the end); only for ``C(d, k) < 2**62``.

    Examples
    --------
    >>> from ldpkit.subset import subset_rank
    >>> subset_rank([[0, 1], [0, 3], [2, 3]], 4).tolist()   # (0,1) (0,2) (0,3) (1,2) (1,3) (2,3)
    [0, 2, 5]
    """
    arr = np.asarray(sets)
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise ValueError(f"sets must be a 2-d array of ascending items, got shape {arr.shape}")
    k = arr.shape[1]
    total = math.comb(d, k)
    if total >= 1 << 62:
        raise ValueError(f"the C({d}, {k}) = {total} outputs do not fit in int64 indices")
    table = np.array([[math.comb(a, b) for b in range(k + 1)] for a in range(d + 1)], dtype=np.int64)
    rank = np.full(arr.shape[0], total - 1, dtype=np.int64)
    for j in range(k):
        rank -= table[d - 1 - arr[:, j], k - j]
    return rank


# ---------------------------------------------------------------------------- the channel kind
@dataclass(frozen=True)
class SubsetChannel(Channel):
    """The law of a subset-selection report: outputs are the ``C(d, k)`` sets of ``k`` items.

    Input ``x`` enters the set with probability ``p_x = k e^{t_x} / (k e^{t_x} + d - k)``; the
    rest of the set is uniform among the other items.  So a set containing ``x`` has probability
    ``p_x / C(d-1, k-1)`` and any other ``(1 - p_x) / C(d-1, k)``.  SS has ``t_x = eps`` for every
    ``x``; ID-SS one ``t_x`` per input.  Outputs are indexed in the lexicographic order of
    ``itertools.combinations`` (:func:`subset_rank`).

    The accountant uses closed forms in ``a_x = log p_x`` and ``b_x = log((1 - p_x) / rho)``,
    ``rho = (d - k) / k`` (both relative to ``1 / C(d-1, k-1)``), computed without forming
    ``1 - p_x``: ``a = -log1p(rho e^{-t})`` and ``b = a - t``.

    Parameters
    ----------
    d
        Items (``>= 2``).
    k
        Subset size, ``1 <= k <= d - 1``.
    log_weights
        ``t_x >= 0`` per input (finite).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit.subset import SubsetChannel
    >>> ch = SubsetChannel(4, 2, np.full(4, 1.0))
    >>> ch.n_outputs, ch.to_explicit().matrix.shape
    (6, (4, 6))
    """

    d: int
    k: int
    log_weights: np.ndarray

    kind: ClassVar[str] = "subset"

    def __post_init__(self) -> None:
        d = check_domain_size(self.d)
        k = check_positive_int(self.k, "k", 1, d - 1)
        t = real_array(self.log_weights, "log_weights")
        if t.shape != (d,):
            raise ValueError(f"log_weights must hold one weight per item ({d}), got shape {t.shape}")
        bad = ~np.isfinite(t) | (t < 0)
        if np.any(bad):
            raise ValueError(f"log_weights must be finite and >= 0, got {describe(t[bad][0].item())} "
                             f"at item {int(np.flatnonzero(bad)[0])}")
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "log_weights", t.astype(float))

    @property
    def n_inputs(self) -> int:
        return self.d

    @property
    def n_outputs(self) -> int:
        """``C(d, k)`` (a Python int, never enumerated unless asked)."""
        return math.comb(self.d, self.k)

    @property
    def rho(self) -> float:
        """``(d - k) / k = C(d-1, k) / C(d-1, k-1)``."""
        return (self.d - self.k) / self.k

    @property
    def log_in(self) -> np.ndarray:
        """``a_x = log p_x``: the log-probability of a set holding ``x``, times ``C(d-1, k-1)``."""
        return cast("np.ndarray", -np.log1p(self.rho * np.exp(-self.log_weights)))

    @property
    def log_out(self) -> np.ndarray:
        """``b_x = a_x - t_x``: the log-probability of a set without ``x``, times ``C(d-1, k-1)``."""
        return cast("np.ndarray", self.log_in - self.log_weights)

    @property
    def keep(self) -> np.ndarray:
        """``p_x``, the probability that input ``x`` is in its set."""
        return cast("np.ndarray", np.exp(self.log_in))

    def to_explicit(self, max_cells: int = MAX_EXPLICIT_CELLS) -> ExplicitChannel:
        """The ``d x C(d, k)`` matrix (only for ``d * C(d, k) <= max_cells``)."""
        cells = self.d * self.n_outputs
        if cells > max_cells:
            raise ValueError(f"the subset channel has d * C(d, k) = {cells} cells, above max_cells={max_cells}")
        sets = np.array(list(itertools.combinations(range(self.d), self.k)), dtype=np.int64)
        member = np.zeros((self.d, sets.shape[0]), dtype=bool)
        member[sets.T, np.arange(sets.shape[0])[None, :]] = True
        log_c = _log_comb(self.d - 1, self.k - 1)
        log_m = np.where(member, self.log_in[:, None], self.log_out[:, None]) - log_c
        if float(log_m.min()) < math.log(np.finfo(float).tiny):
            raise ValueError(
                f"enumerating the subset channel underflows double precision: a probability e^{float(log_m.min()):.4g} "
                f"is below the smallest normal double ({np.finfo(float).tiny:.3g})")
        m = np.exp(log_m)
        m /= m.sum(axis=1, keepdims=True)  # rows sum to 1 up to rounding of the exponentials
        return ExplicitChannel(m, output_labels=tuple(map(tuple, sets.tolist())))


# ---------------------------------------------------------------------------- closed forms
def _separable_loss(ch: SubsetChannel) -> tuple[np.ndarray, np.ndarray]:
    """``(u, v)`` with ``L(x, x') = u_x + v_x'`` for ``x != x'``: ``u = a``, ``v = -b`` (:prf:ref:`thm-field-idss-privacy`).

    The worst output for the pair is a set holding ``x`` but not ``x'``, which exists for every
    ``1 <= k <= d - 1``; the other three patterns have smaller ratios when every ``t >= 0``.
    """
    return ch.log_in, -ch.log_out


@accountant.register_closed_form("pairwise", SubsetChannel)
def _pairwise_subset(ch: SubsetChannel) -> np.ndarray:
    u, v = _separable_loss(ch)
    out: np.ndarray = u[:, None] + v[None, :]
    np.fill_diagonal(out, 0.0)
    return out


@accountant.register_closed_form("ldp", SubsetChannel)
def _ldp_subset(ch: SubsetChannel) -> Witness:
    """``max_{x != x'} a_x - b_x'``: ``eps`` exactly for SS (:prf:ref:`thm-field-ss-privacy`)."""
    u, v = _separable_loss(ch)
    value, x, xp = accountant.top2_max_sum(u, v)
    return Witness(max(0.0, value), (x, xp), None)


@accountant.register_closed_form("id-ldp", SubsetChannel)
def _idldp_subset(ch: SubsetChannel, e: np.ndarray, rule: Any) -> Iterator[tuple[np.ndarray, ...]]:
    """Blocks of ordered pairs on classes of equal ``(a, b, eps)``: ``L`` and the rule depend on the classes only.

    One pair per pair of classes, plus one within-class pair for each class of two or more
    items (``L = -inf`` marks an entry that stands for no pair), as for unary encodings.
    """
    u, v = _separable_loss(ch)
    return accountant.separable_pair_blocks(u, v, e, rule)


@accountant.register_closed_form("uldp", SubsetChannel)
def _uldp_subset(ch: SubsetChannel, sens_mask: np.ndarray, eps: float, protected: Any) -> Any:
    """Every set is possible under every input, so none is invertible: ULDP is LDP on every output.

    Only with ``Y_P`` left to the accountant (``protected=None``); otherwise ``NotImplemented``.
    """
    if protected is not None:
        return NotImplemented
    value, pair, _ = _ldp_subset(ch)
    return accountant.uldp_every_output_protected(value, tuple(pair), eps)


@accountant.register_closed_form("fldp", SubsetChannel)
def _fldp_subset(ch: SubsetChannel) -> accountant.FLDPParameters:
    """Every input can produce every set: the shared fraction and the hiding fraction are 1, the ratio LDP's."""
    value, pair, _ = _ldp_subset(ch)
    if value <= 0.0:
        pair = (0, 1)
    return accountant.FLDPParameters(1.0, (0, 1), float(value), (int(pair[0]), int(pair[1])), 1.0)


def _sum_of_extremes(g: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """For every ``x``: the sum of the ``m`` smallest and of the ``m`` largest ``g`` among the items other than ``x``."""
    d = g.size
    if m == 0:
        zero = np.zeros(d)
        return zero, zero
    order = np.argsort(g, kind="stable")
    rank = np.empty(d, dtype=np.int64)
    rank[order] = np.arange(d)
    srt = g[order]
    low = np.concatenate([[0.0], np.cumsum(srt)])  # low[j]: the j smallest
    high = np.concatenate([[0.0], np.cumsum(srt[::-1])])  # high[j]: the j largest
    small = np.where(rank < m, low[min(m + 1, d)] - g, low[m])
    large = np.where(rank >= d - m, high[min(m + 1, d)] - g, high[m])
    return small, large


@accountant.register_closed_form("lip", SubsetChannel)
def _lip_subset(ch: SubsetChannel, prior: np.ndarray) -> Witness:
    """``max_x max_S |log P(S | x) / P(S)|`` in ``O(d log d)`` (:prf:ref:`thm-field-ss-privacy`).

    ``C(d-1, k-1) P(S) = B + G(S)`` with ``B = sum_z pi_z e^{b_z}`` and
    ``G(S) = sum_{z in S} g_z``, ``g_z = pi_z (e^{a_z} - e^{b_z}) >= 0``; the ratio is
    ``e^{a_x} / (B + G(S))`` for ``x in S`` and ``e^{b_x} / (B + G(S))`` otherwise, so its extremes
    take the ``k - 1`` (or ``k``) smallest or largest ``g`` among the other items.
    """
    a, b = ch.log_in, ch.log_out
    g = prior * (np.exp(a) - np.exp(b))
    base = float(prior @ np.exp(b))
    small1, large1 = _sum_of_extremes(g, ch.k - 1)
    small0, large0 = _sum_of_extremes(g, ch.k)
    terms = np.stack([a - np.log(base + g + small1), a - np.log(base + g + large1),
                      b - np.log(base + small0), b - np.log(base + large0)])
    worst = np.abs(terms).max(axis=0)
    x = int(np.argmax(worst))
    return Witness(float(worst[x]), (x,), None)


@accountant.register_closed_form("mip", SubsetChannel)
def _mip_subset(ch: SubsetChannel, prior: np.ndarray) -> Any:
    """``I(X; Y)`` summed over the classes of items with equal ``g_z`` (see :func:`_lip_subset`).

    ``I = -(1/C(d-1,k-1)) sum_S (B + G(S)) log(B + G(S)) + sum_x pi_x (p_x a_x + (1 - p_x) b_x)``:
    the sets are grouped by how many items of each class they hold.  ``NotImplemented`` (the
    accountant then enumerates small channels) when the grouping has more than ``2**20`` states.
    """
    a, b = ch.log_in, ch.log_out
    g = prior * (np.exp(a) - np.exp(b))
    base = float(prior @ np.exp(b))
    values, sizes = np.unique(g, return_counts=True)
    k = ch.k
    states = 1
    for n_j in sizes:
        states *= int(min(n_j, k)) + 1
        if states > _MIP_STATES:
            return NotImplemented
    # (items chosen, G, log multiplicity) over the classes seen so far
    chosen = np.zeros(1, dtype=np.int64)
    total = np.zeros(1)
    logw = np.zeros(1)
    for value, n_j in zip(values, sizes):
        c = np.arange(int(min(n_j, k)) + 1)
        lc = np.array([_log_comb(int(n_j), int(j)) for j in c])
        chosen = (chosen[:, None] + c[None, :]).reshape(-1)
        total = (total[:, None] + c[None, :] * value).reshape(-1)
        logw = (logw[:, None] + lc[None, :]).reshape(-1)
        keep = chosen <= k
        chosen, total, logw = chosen[keep], total[keep], logw[keep]
    full = chosen == k
    mass = base + total[full]
    scale = k / ch.d  # the mean of B + G(S) over the sets: it keeps the two sums of the same size
    weight = np.exp(logw[full] - _log_comb(ch.d - 1, k - 1))
    h_out = -float(np.sum(weight * mass * np.log(mass / scale)))
    p = np.exp(a)
    h_in = float(prior @ (p * (a - math.log(scale)) + (1 - p) * (b - math.log(scale))))
    return max(0.0, h_out + h_in)


# ---------------------------------------------------------------------------- reports
def _popcount_rows(bits: np.ndarray) -> np.ndarray:
    return np.bitwise_count(bits).sum(axis=1, dtype=np.int64) if bits.size else np.zeros(bits.shape[0], np.int64)


@dataclass(frozen=True)
class SubsetReports:
    """Subset-selection reports: ``bits[u]`` is user ``u``'s set as a packed ``d``-bit mask (``np.packbits`` order).

    Every row has exactly ``k`` bits set (checked when the container is made).

    Examples
    --------
    >>> from ldpkit.subset import SubsetSelection
    >>> reports = SubsetSelection(10, 1.0).perturb([0, 1, 2], rng=1)
    >>> len(reports), reports.bits.shape, reports.to_sets().shape
    (3, (3, 2), (3, 3))
    """

    bits: np.ndarray
    d: int
    k: int
    #: the mechanism configuration that made these reports (``None`` when built by hand)
    source: Optional[Provenance] = None

    def __post_init__(self) -> None:
        for name in ("d", "k"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < 1:
                raise ArgumentTypeError(f"SubsetReports {name} must be a positive integer, got {describe(value)}")
        d, k = int(self.d), int(self.k)
        if k >= d:
            raise ValueError(f"SubsetReports k must be below d={d}, got {k}")
        bits = self.bits
        if not isinstance(bits, np.ndarray) or bits.dtype != np.uint8:
            dtype = getattr(bits, "dtype", type(bits).__name__)
            raise ArgumentTypeError(f"SubsetReports bits must be a 2-d uint8 array (np.packbits), got {dtype}")
        width = (d + 7) // 8
        if bits.ndim != 2 or bits.shape[1] != width:
            raise ValueError(f"SubsetReports bits must have shape (n, {width}) for d={d}, got {bits.shape}")
        pad = 8 * width - d
        if pad and bits.shape[0] and np.any(bits[:, -1] & np.uint8((1 << pad) - 1)):
            user = int(np.flatnonzero(bits[:, -1] & np.uint8((1 << pad) - 1))[0])
            raise ValueError(f"SubsetReports: user {user} has bits set beyond item d-1={d - 1}")
        sizes = _popcount_rows(bits)
        wrong = np.flatnonzero(sizes != k)
        if wrong.size:
            raise ValueError(f"SubsetReports: user {int(wrong[0])} reports {int(sizes[wrong[0]])} items, not k={k}")
        check_report_source(self.source, "SubsetReports")

    def __len__(self) -> int:
        return int(self.bits.shape[0])

    def row(self, i: int) -> tuple[int, ...]:
        """User ``i``'s set, ascending."""
        return tuple(int(v) for v in np.flatnonzero(np.unpackbits(self.bits[i], count=self.d)))

    def to_sets(self) -> np.ndarray:
        """Every user's set as an ``(n, k)`` array of ascending items."""
        dense = np.unpackbits(self.bits, axis=1, count=self.d).astype(bool)
        return np.nonzero(dense)[1].reshape(len(self), self.k).astype(np.int64)

    @classmethod
    def from_sets(cls, sets: ArrayLike, d: int, source: Optional[Provenance] = None) -> SubsetReports:
        """Reports from an ``(n, k)`` array of distinct items per row (any order)."""
        d = check_domain_size(d)
        arr = np.asarray(sets)
        if arr.ndim != 2 or arr.shape[0] == 0 or not 1 <= arr.shape[1] < d:
            raise ValueError(f"sets must be an (n, k) array with n >= 1 and 1 <= k < d={d}, got shape {arr.shape}")
        items = check_items(arr.reshape(-1), d, "sets").reshape(arr.shape)
        dense = np.zeros((arr.shape[0], d), dtype=bool)
        dense[np.arange(arr.shape[0])[:, None], items] = True
        return cls(np.packbits(dense, axis=1), d, int(arr.shape[1]), source)


def _sets_to_text(bits: np.ndarray, meta: dict[str, Any]) -> list[str]:
    d = int(meta["d"])
    dense = np.unpackbits(bits, axis=1, count=d).astype(bool)
    return [" ".join(str(int(i)) for i in np.flatnonzero(row)) for row in dense]


def _text_to_sets(text: list[str], meta: dict[str, Any]) -> np.ndarray:
    d, k = int(meta["d"]), int(meta["k"])
    rows = []
    for i, t in enumerate(text):
        parts = t.split()
        try:
            items = sorted({int(p) for p in parts})
        except ValueError:
            raise ValueError(f"report {i} is {t[:40]!r}, not {k} distinct item indices") from None
        if len(parts) != k or len(items) != k or items[0] < 0 or items[-1] >= d:
            raise ValueError(f"report {i} is {t[:40]!r}, not {k} distinct item indices in 0..{d - 1}")
        rows.append(items)
    dense = np.zeros((len(rows), d), dtype=bool)
    if rows:
        dense[np.arange(len(rows))[:, None], np.array(rows)] = True
    return np.packbits(dense, axis=1)


#: the codec of subset reports, one packed bit row per user (in CSV, the set's items separated by spaces)
SUBSET_CODEC = ReportCodec(
    "subset", SubsetReports, (("bits", "|u1", False),), lambda r: {"d": int(r.d), "k": int(r.k)},
    lambda r: (r.bits,), lambda cols, meta, src: SubsetReports(cols[0], int(meta["d"]), int(meta["k"]), src),
    _sets_to_text, _text_to_sets, lambda meta: ((int(meta["d"]) + 7) // 8,))


# ---------------------------------------------------------------------------- sampling
def _draw_sets(gen: np.random.Generator, x: np.ndarray, keep: np.ndarray, d: int, k: int) -> np.ndarray:
    """Packed masks of one set per user: ``x`` kept where ``keep``, the rest uniform among the other ``d - 1`` items.

    Floyd's algorithm, vectorised over users: to choose ``m`` of ``N = d - 1`` values, for
    ``j = N - m, ..., N - 1`` draw ``t`` uniform in ``[0, j]`` and take ``t``, or ``j`` when ``t``
    is taken already; each step is one draw per active user (users needing ``k - 1`` others start
    one step later), and the chosen items are bits of the packed masks.  When the others are
    more than half of the ``d - 1`` items, their complement is chosen instead.  Value ``v``
    among the others is item ``v + [v >= x]``.
    """
    n = x.size
    N = d - 1
    width = (d + 7) // 8
    need = np.where(keep, k - 1, k)
    complement = 2 * k > N + 1
    size = N - need if complement else need
    packed = np.zeros((n, width), dtype=np.uint8)
    flat = packed.reshape(-1)
    base = np.arange(n, dtype=np.int64) * width
    smallest = int(size.min())
    for j in range(N - int(size.max()), N):
        if j >= N - smallest:  # every user takes part from here on
            xa, rows = x, base
        else:
            act = np.flatnonzero(size >= N - j)
            xa, rows = x[act], base[act]
        t = gen.integers(0, j + 1, size=xa.size)
        t += t >= xa
        taken = (flat[rows + (t >> 3)] & (_TOP >> (t & 7).astype(np.uint8))) != 0
        item = np.where(taken, j + (j >= xa), t)
        flat[rows + (item >> 3)] |= _TOP >> (item & 7).astype(np.uint8)
    own = base + (x >> 3)
    bit = _TOP >> (x & 7).astype(np.uint8)
    if complement:
        np.bitwise_not(packed, out=packed)
        pad = 8 * width - d
        if pad:
            packed[:, -1] &= np.uint8((0xFF << pad) & 0xFF)
        flat[own] &= ~bit  # the complement of the others holds x: take it out
    flat[own] |= np.where(keep, bit, np.uint8(0))
    return packed


#: the first bit of a byte in np.packbits order
_TOP = np.uint8(0x80)


class _SubsetSampling:
    """Sampling, aggregation and report handling shared by SS and ID-SS (a mixin over a frequency oracle)."""

    d: int
    k: int
    #: ``p_x``: the probability that a user holding ``x`` keeps it in the set
    keep: np.ndarray
    provenance: Provenance
    aggregate_simulation_exact = False

    def perturb(self, items: ArrayLike, rng: RNGLike = None) -> SubsetReports:
        """One set per user: keep the item with probability ``p_x``, fill up uniformly (vectorised, in chunks)."""
        x = check_items(items, self.d)
        gen = as_generator(rng)
        n = x.size
        out = np.empty((n, (self.d + 7) // 8), dtype=np.uint8)
        step = chunk_rows(n, out.shape[1])  # about 16 MB of packed masks per chunk
        for start in range(0, n, step):
            xs = x[start:start + step]
            kept = gen.random(xs.size) < self.keep[xs]
            out[start:start + step] = _draw_sets(gen, xs, kept, self.d, self.k)
        return SubsetReports(out, self.d, self.k, self.provenance)

    def _check_reports(self, reports: Any) -> SubsetReports:
        if isinstance(reports, SubsetReports):
            check_source(reports, self.provenance)  # a mechanism configured otherwise is named first
        if not isinstance(reports, SubsetReports) or reports.d != self.d or reports.k != self.k:
            got = (f"SubsetReports over d={reports.d} with k={reports.k}" if isinstance(reports, SubsetReports)
                   else type(reports).__name__)
            raise ValueError(f"reports must be SubsetReports over d={self.d} items with k={self.k}, got {got}")
        if len(reports) == 0:
            raise ValueError("reports is empty: at least one user is needed")
        return reports

    def aggregate(self, reports: SubsetReports) -> np.ndarray:
        """Support counts: how many reported sets hold each item (a byte histogram per column of the masks)."""
        reports = self._check_reports(reports)
        return packed_column_counts(reports.bits, self.d)

    def n_reports(self, reports: SubsetReports) -> int:
        return len(reports)

    def output_index(self, reports: SubsetReports) -> np.ndarray:
        """The lexicographic rank of each reported set (the columns of ``channel().to_explicit()``)."""
        reports = self._check_reports(reports)
        return subset_rank(reports.to_sets(), self.d)

    def _simulate_support(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # the support counts of different items are dependent (every set has k items) and no exact
        # aggregate sampler is known: expand the counts into users and run the per-user path
        n = int(counts.sum())
        if n > MAX_SIMULATED_USERS:
            raise ValueError(f"counts sum to {n} users; subset selection simulates user by user, so at most "
                             f"MAX_SIMULATED_USERS={MAX_SIMULATED_USERS} users")
        return np.asarray(self.aggregate(self.perturb(np.repeat(np.arange(self.d), counts), rng)))


# ---------------------------------------------------------------------------- SS
class SubsetSelection(_SubsetSampling, SupportOracle[SubsetReports]):
    """Subset selection over ``d`` items: report ``k`` items, the sets holding yours ``e^eps`` times as likely.

    A pure protocol: item ``i`` is in the report with probability ``p = k e^eps / (k e^eps + d - k)``
    when the user holds it and ``q = k ((k - 1) e^eps + d - k) / ((d - 1)(k e^eps + d - k))``
    otherwise, so the estimator and its exact variance are those of
    :class:`~ldpkit.base.SupportOracle` (Field chapter, :prf:ref:`def-field-ss`,
    :prf:ref:`thm-field-ss-privacy`, :prf:ref:`thm-field-ss-variance`).

    Parameters
    ----------
    d
        Items (``>= 2``).
    epsilon
        LDP budget.
    k
        Subset size in ``[1, d - 1]``; default :func:`optimal_subset_size`, the best for the
        total variance (which does not depend on the counts).

    Examples
    --------
    >>> from ldpkit.subset import SubsetSelection
    >>> ss = SubsetSelection(10, 1.0)
    >>> ss, SubsetSelection(10, 1.0, k=2).k
    (SubsetSelection(d=10, epsilon=1, k=3), 2)
    >>> [round(float(v), 1) for v in ss.variance([50, 30, 20, 0, 0, 0, 0, 0, 0, 0])]
    [319.5, 305.3, 298.2, 283.9, 283.9, 283.9, 283.9, 283.9, 283.9, 283.9]
    """

    def __init__(self, d: int, epsilon: float, k: Optional[int] = None) -> None:
        d = check_domain_size(d)
        eps = check_epsilon(epsilon)
        k_val = optimal_subset_size(d, eps) if k is None else check_positive_int(k, "k", 1, d - 1)
        super().__init__(d)
        self.epsilon = eps
        self.k = k_val
        p, q = _ss_probabilities(d, k_val, eps)
        self.keep = np.full(d, p)
        self.p_support = np.full(d, p)
        self.q_support = np.full(d, q)
        self._channel = SubsetChannel(d, k_val, np.full(d, eps))

    def __repr__(self) -> str:
        return f"SubsetSelection(d={self.d}, epsilon={self.epsilon:.6g}, k={self.k})"

    def channel(self) -> SubsetChannel:
        return self._channel

    def report_parameters(self) -> dict[str, Any]:
        """``d``, ``epsilon`` and ``k``."""
        return {"d": self.d, "epsilon": self.epsilon, "k": self.k}

    def arguments(self) -> dict[str, Any]:
        """``d``, ``epsilon`` and ``k``."""
        return {"d": self.d, "epsilon": self.epsilon, "k": self.k}


#: the name the literature uses (Wang et al. 2016 call it the k-subset mechanism)
SS = SubsetSelection


# ---------------------------------------------------------------------------- ID-SS: variance
def _idss_parts(p: np.ndarray, d: int, k: int) -> dict[str, np.ndarray]:
    """The per-input quantities of the ID-SS variance (:prf:ref:`thm-field-idss-variance`)."""
    q = (k - p) / (d - 1)
    delta = p - q
    inv = 1.0 / delta
    w = inv / inv.sum()
    cov_x = p * (k - 1) / (d - 1) - p * q  # Cov(Y_x, Y_j), j != x
    pair = (p * (k - 1) * (k - 2) + (1 - p) * k * (k - 1)) / ((d - 1) * (d - 2)) if d > 2 else np.zeros_like(p)
    rho_o = pair - q * q  # Cov(Y_i, Y_j), i != j, both != x
    gamma = q * (1 - q) - rho_o
    kappa = p * (1 - p) - 2 * cov_x + rho_o - gamma
    return {"delta": delta, "w": w, "gamma": gamma, "kappa": kappa}


def idss_per_user_variance(p: ArrayLike, d: int, k: int, counts: Optional[ArrayLike] = None) -> np.ndarray:
    """``Var[c_hat_i]`` of ID-SS at real-valued ``counts`` (default: one user per item), for keep probabilities ``p``.

    ``Var[c_hat_i] = [A + c_i (1 - 2 w_i) kappa_i + (1 - 2 w_i + |w|^2) G] / delta_i^2`` with
    ``A = sum_x c_x w_x^2 kappa_x`` and ``G = sum_x c_x gamma_x`` (Field chapter,
    :prf:ref:`thm-field-idss-variance`): linear in the counts.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit.subset import SubsetSelection, idss_per_user_variance
    >>> ss = SubsetSelection(10, 1.0)
    >>> bool(np.allclose(idss_per_user_variance(ss.keep, 10, 3), ss.variance(np.ones(10, dtype=int))))
    True
    """
    pv = real_array(p, "p")
    c = np.ones(pv.size) if counts is None else check_real_counts(counts, pv.size)
    parts = _idss_parts(pv, d, k)
    delta, w, gamma, kappa = parts["delta"], parts["w"], parts["gamma"], parts["kappa"]
    A = float(c @ (w * w * kappa))
    G = float(c @ gamma)
    W2 = float(w @ w)
    out: np.ndarray = (A + c * (1 - 2 * w) * kappa + (1 - 2 * w + W2) * G) / delta**2
    return out


# ---------------------------------------------------------------------------- ID-SS: the optimiser
def _level_loss(t: np.ndarray, rho: float) -> np.ndarray:
    """``L[a, b] = a_a - b_b`` between levels with log-weights ``t`` (diagonal: ``t_a``)."""
    a = -np.log1p(rho * np.exp(-t))
    b = a - t
    return cast("np.ndarray", a[:, None] - b[None, :])


def _level_variance(t: np.ndarray, sizes: np.ndarray, d: int, k: int) -> float:
    """Total variance per user at uniform counts of the ID-SS member with level log-weights ``t``."""
    rho = (d - k) / k
    p = np.repeat(1.0 / (1.0 + rho * np.exp(-t)), sizes)
    return float(idss_per_user_variance(p, d, k).sum() / d)


def _constraint_ratio(t: np.ndarray, allowed: np.ndarray, pairs: np.ndarray, rho: float) -> float:
    return float(np.max(_level_loss(t, rho)[pairs] / allowed[pairs]))


def _snap(t: np.ndarray, allowed: np.ndarray, pairs: np.ndarray, rho: float) -> np.ndarray:
    """``s t`` with the largest ``s`` whose worst ratio is at most 1 (every loss grows with ``s``): the boundary."""
    lo, hi = 0.0, 1.0
    while _constraint_ratio(hi * t, allowed, pairs, rho) <= 1.0:
        lo, hi = hi, hi * 2.0
        if hi > 1e6:
            return lo * t
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _constraint_ratio(mid * t, allowed, pairs, rho) <= 1.0:
            lo = mid
        else:
            hi = mid
    return lo * t


def _candidate_sizes(d: int, e_lo: float, e_hi: float) -> list[int]:
    """Subset sizes to try: all for small ``d``, else those between the best SS sizes at the extreme budgets."""
    if d <= 64:
        return list(range(1, d))
    a, b = optimal_subset_size(d, e_hi), optimal_subset_size(d, e_lo)
    return list(range(max(1, a - 2), min(d - 1, b + 2) + 1))


def optimal_idss(budgets: ArrayLike, r: PairRuleName = "min") -> tuple[int, np.ndarray]:
    """``(k, log_weights)`` of the ID-SS member with the smallest total variance at uniform counts under ``E``-ID-LDP.

    Items with equal budgets share a weight (a level).  For every candidate ``k`` the level
    weights are optimised by SLSQP from the SS member at the smallest budget (feasible), subject
    to ``L(a, b) <= r(eps_a, eps_b)`` for every pair of levels (within a level of two or more
    items ``L = t_a``), then moved out along the ray ``s t`` to the boundary (the largest ``s``
    the promise allows), so that some pair is tight; the best ``k`` wins.  One level is SS at
    that budget with :func:`optimal_subset_size`.  Field chapter, :ref:`sec-field-idss`.

    Examples
    --------
    >>> from ldpkit.subset import optimal_idss
    >>> k, t = optimal_idss([1.0, 1.0, 1.0] + [2.0] * 7)
    >>> k, [round(float(v), 3) for v in t[[0, 9]]]
    (3, [0.862, 1.12])
    """
    from scipy.optimize import minimize

    e = check_budget_vector(budgets, len(np.atleast_1d(np.asarray(budgets))))
    if e.size < 2:
        raise ValueError(f"ID-SS needs at least two items, got {e.size} budgets")
    if not isinstance(r, str) or r not in _RULES:
        raise ValueError(f"r must be 'min', 'average' or 'max', got {describe(r)}")
    lo, hi = float(e.min()), float(e.max())
    if lo < IDSS_EPS_MIN or hi > IDSS_EPS_MAX:
        bad = lo if lo < IDSS_EPS_MIN else hi
        raise ValueError(f"budget {bad!r} is outside the supported range [{IDSS_EPS_MIN:g}, {IDSS_EPS_MAX:g}] "
                         "of ID-SS's optimiser")
    d = e.size
    levels, index, sizes = np.unique(e, return_inverse=True, return_counts=True)
    index = np.asarray(index).reshape(-1)
    if levels.size == 1:
        return optimal_subset_size(d, lo), np.full(d, lo)
    allowed = np.asarray(_RULES[r](levels[:, None], levels[None, :]), dtype=float)
    pairs = ~np.eye(levels.size, dtype=bool) | (np.diag(sizes >= 2))
    best: tuple[float, int, np.ndarray] | None = None
    for k in _candidate_sizes(d, lo, hi):
        rho = (d - k) / k
        start = np.full(levels.size, lo)
        scale = _level_variance(start, sizes, d, k)

        def objective(t: np.ndarray, k: int = k, scale: float = scale) -> float:
            return _level_variance(np.maximum(t, lo * 1e-3), sizes, d, k) / scale

        def margin(t: np.ndarray, rho: float = rho) -> np.ndarray:
            return cast("np.ndarray", (allowed[pairs] - _level_loss(np.maximum(t, lo * 1e-3), rho)[pairs]) / allowed[pairs])

        res = minimize(objective, start, method="SLSQP", bounds=[(lo * 1e-3, hi)] * levels.size,
                       constraints=[{"type": "ineq", "fun": margin}], options={"ftol": 1e-13, "maxiter": 500})
        t = np.maximum(np.asarray(res.x, dtype=float), lo * 1e-3)
        if not np.all(np.isfinite(t)) or _constraint_ratio(t, allowed, pairs, rho) > 1.0 + 1e-6:
            t = start  # the solver wandered off: keep the feasible start
        t = _snap(t, allowed, pairs, rho)
        value = _level_variance(t, sizes, d, k)
        if best is None or value < best[0] * (1 - 1e-12):
            best = (value, k, t)
    assert best is not None
    return best[1], best[2][index]


# ---------------------------------------------------------------------------- ID-SS
class IDSubsetSelection(_SubsetSampling, FrequencyOracle[SubsetReports]):
    """Input-discriminative subset selection: each input its own inclusion weight ``e^{t_x}``.

    A user holding ``x`` keeps ``x`` in the reported ``k``-set with probability
    ``p_x = k e^{t_x} / (k e^{t_x} + d - k)`` and fills the set uniformly (Field chapter,
    :prf:ref:`def-field-idss`).  The pairwise loss is ``L(x, x') = a_x - b_x'``
    (:prf:ref:`thm-field-idss-privacy`); the estimator ``c_hat_i = (C_i - T) / delta_i`` with
    ``delta_i = p_i - q_i``, ``q_i = (k - p_i) / (d - 1)`` and
    ``T = (sum_j C_j / delta_j - n) / sum_j (1 / delta_j)`` is unbiased, the only unbiased
    estimator linear in the support counts, with the exact variance of
    :func:`idss_per_user_variance` (:prf:ref:`thm-field-idss-variance`).

    Parameters
    ----------
    budgets
        Per-item budgets ``eps_x`` in ``[IDSS_EPS_MIN, IDSS_EPS_MAX]``; the mechanism declares
        ``E``-ID-LDP with rule ``r`` (MinID-LDP for ``"min"``).
    r
        Pair rule ``"min"``, ``"average"`` or ``"max"``.
    k, log_weights
        The member; default :func:`optimal_idss` for the budgets and the rule.  Given, they are
        used as they are (the declared guarantee is still the budgets', which
        :func:`~ldpkit.accountant.verify` checks).

    Examples
    --------
    >>> from ldpkit import accountant
    >>> from ldpkit.subset import IDSubsetSelection
    >>> idss = IDSubsetSelection([1.0, 1.0, 1.0] + [2.0] * 7)
    >>> idss.k, bool(accountant.verify(idss)), round(accountant.minidldp_scale(idss, idss.budgets), 9)
    (3, True, 1.0)
    >>> round(float(idss.variance_at([1.0] * 10).sum()) / 10, 2)   # per user, uniform counts (SS: 29.10)
    27.8
    """

    def __init__(self, budgets: ArrayLike, r: PairRuleName = "min", k: Optional[int] = None,
                 log_weights: Optional[ArrayLike] = None) -> None:
        arr = real_array(budgets, "budgets")
        if arr.ndim != 1 or arr.size < 2:
            raise ValueError(f"budgets must be a 1-d vector of at least two budgets, got shape {arr.shape}")
        e = check_budget_vector(arr, arr.size)
        bad = (e < IDSS_EPS_MIN) | (e > IDSS_EPS_MAX)
        if np.any(bad):
            raise ValueError(f"budgets={describe(float(e[bad][0]))} at item {int(np.flatnonzero(bad)[0])} is outside "
                             f"the supported range [{IDSS_EPS_MIN:g}, {IDSS_EPS_MAX:g}] of ID-SS's optimiser")
        if not isinstance(r, str):
            raise ArgumentTypeError(f"r must be 'min', 'average' or 'max', got {describe(r)}")
        if r not in _RULES:
            raise ValueError(f"r must be 'min', 'average' or 'max', got {describe(r)}")
        d = e.size
        if (k is None) != (log_weights is None):
            raise ValueError("give both k and log_weights, or neither (then they are optimised)")
        if k is None:
            k_val, t = optimal_idss(e, r)
        else:
            k_val = check_positive_int(k, "k", 1, d - 1)
            t = real_array(log_weights, "log_weights")
            if t.shape == (d,) and np.any(t <= 0):
                raise ValueError(f"log_weights must be positive (a weight of 1 makes the item unestimable), got "
                                 f"{describe(float(t[t <= 0][0]))} at item {int(np.flatnonzero(t <= 0)[0])}")
        super().__init__(d)
        self._channel = SubsetChannel(d, k_val, t)
        self.budgets = e
        self.r: PairRuleName = r
        self.k = k_val
        self.log_weights = self._channel.log_weights
        self.keep = self._channel.keep
        self._parts = _idss_parts(self.keep, d, k_val)

    def __repr__(self) -> str:
        return f"IDSubsetSelection(d={self.d}, budgets={self.budgets.min():g}..{self.budgets.max():g}, r={self.r!r}, k={self.k})"

    def channel(self) -> SubsetChannel:
        return self._channel

    def guarantees(self) -> list[Guarantee]:
        """E-ID-LDP for the budgets with the rule ``r`` (MinID-LDP for ``"min"``)."""
        if self.r == "min":
            return [Guarantee("minid-ldp", budgets=self.budgets.copy())]
        return [Guarantee("id-ldp", budgets=self.budgets.copy(), r=self.r)]

    def report_parameters(self) -> dict[str, Any]:
        """``d``, ``k`` and a fingerprint of the log-weights."""
        return {"d": self.d, "k": self.k, "log_weights": array_digest(self.log_weights)}

    def arguments(self) -> dict[str, Any]:
        """The budgets, the rule, and the member in use (not optimised again on loading)."""
        return {"budgets": self.budgets.copy(), "r": self.r, "k": self.k, "log_weights": self.log_weights.copy()}

    @property
    def delta(self) -> np.ndarray:
        """``delta_i = p_i - q_i``, the divisor of the estimator."""
        return self._parts["delta"]

    def estimate_from_support(self, support: ArrayLike, n: int) -> np.ndarray:
        c = check_support(support, self.d, n).astype(float)
        inv = 1.0 / self.delta
        shift = (float(c @ inv) - n) / float(inv.sum())
        out: np.ndarray = (c - shift) * inv
        return out

    def variance(self, counts: ArrayLike) -> np.ndarray:
        return idss_per_user_variance(self.keep, self.d, self.k, check_counts(counts, self.d).astype(float))

    def variance_at(self, counts: ArrayLike) -> np.ndarray:
        """The variance formula at real-valued counts (it is linear in them)."""
        return idss_per_user_variance(self.keep, self.d, self.k, check_real_counts(counts, self.d))


#: the family's name
IDSS = IDSubsetSelection


# ---------------------------------------------------------------------------- the families
def _ss_examples() -> tuple[SubsetSelection, ...]:
    return (SubsetSelection(5, 1.0), SubsetSelection(6, 0.5, k=3), SubsetSelection(4, 2.0, k=3))


def _ss_sweeps() -> tuple[BudgetSweep, ...]:
    return (BudgetSweep("SS", lambda e: SubsetSelection(5, e), EPS_MIN, EPS_MAX, "subset",
                        variants=(("SS(d=6)", lambda: SubsetSelection(6, 1.0)),
                                  ("SS(k=3)", lambda: SubsetSelection(5, 1.0, k=3)))),
            BudgetSweep("SS(k=2)", lambda e: SubsetSelection(5, e, k=2), EPS_MIN, EPS_MAX, "subset"))


def _idss_at_budget(d: int, t: float, budgets: Any = None, rule: Any = "min") -> IDSubsetSelection:
    """ID-SS optimised for ``t`` times the per-item ``budgets`` (``inf`` read as the largest finite one)."""
    return IDSubsetSelection(t * per_item_budgets("ID-SS", d, budgets), r=rule)


def _idss_optimiser(c: Contract) -> Optional[float]:
    """ID-SS solves for ID-LDP with a built-in rule and for MinID-LDP at the promise's budgets: ``t = 1``."""
    if c.guarantee.notion == "minid-ldp":
        return 1.0
    if c.guarantee.notion == "id-ldp" and isinstance(c.params.get("r", "min"), str):
        return 1.0
    return None


def _idss_applies(c: Contract) -> Optional[str]:
    rule = c.params.get("r", "min")
    if not isinstance(rule, str) or rule not in _RULES:
        return "ID-SS takes the pair rules 'min', 'average' and 'max'"
    return budget_range_refusal(c, IDSS_EPS_MIN, IDSS_EPS_MAX, "ID-SS's optimiser")


def _idss_limits(c: Contract) -> tuple[float, float]:
    """``t`` such that ``t`` times the promise's budgets stays in the optimiser's range."""
    return budget_range_limits(c, IDSS_EPS_MIN, IDSS_EPS_MAX)


def _idss_examples() -> tuple[IDSubsetSelection, ...]:
    return (IDSubsetSelection([0.5, 1.0, 1.0, 2.0]), IDSubsetSelection([1.0, 1.0, 2.0, 2.0, 2.0], r="average"))


def _idss_sweeps() -> tuple[BudgetSweep, ...]:
    return (BudgetSweep("ID-SS", lambda e: IDSubsetSelection([e, e, 1.0]), IDSS_EPS_MIN, IDSS_EPS_MAX, "subset",
                        eps_arg="budgets", scalar_budget=False),)


register_family(Family(
    "SS", "ye2018optimal", SubsetSelection, _ss_examples, "subset selection (k-subset mechanism)", reports="subset",
    codec=SUBSET_CODEC, sweeps=_ss_sweeps, at_budget=lambda d, t: SubsetSelection(d, t), hi=50.0,
    aliases=("SubsetSelection",), audit="SS(d, eps)", order=45))
register_family(Family(
    "ID-SS", "ye2018optimal", IDSubsetSelection, _idss_examples,
    "input-discriminative subset selection (per-item inclusion weights; the Field chapter's)", reports="subset",
    sweeps=_idss_sweeps, at_budget=_idss_at_budget, parameter="multiple of the promise's per-item budgets",
    context=("budgets", "rule"), limits=_idss_limits, initial=lambda c: 1.0, optimiser=_idss_optimiser,
    applies=_idss_applies, audit_skip="input-discriminative: audited through SS, its member at equal budgets",
    order=95))
