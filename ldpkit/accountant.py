"""Exact privacy accounting for the notions of the four companion papers.

Every function takes a channel (:class:`~ldpkit.channels.ExplicitChannel` or
:class:`~ldpkit.channels.UnaryChannel`) or a mechanism exposing ``.channel()``.

* Explicit channels are accounted **exactly, by enumeration** of every output.
* Unary channels use **closed forms** that never enumerate the ``2**d`` outputs and, for
  the pairwise notions, never form the ``d x d`` matrix; the tests check every closed form
  against enumeration (:meth:`UnaryChannel.to_explicit`) on small domains.

Notions covered (each with the chapter and label that derive it in the book):

* standard LDP -- :func:`ldp_epsilon` (Foundations chapter, label ``def-ldp``);
* ID-LDP / MinID-LDP (Gu et al., Definitions 2-3, Lemma 1; bibtex ``gu2020idldp``) --
  :func:`check_id_ldp`, :func:`id_ldp_scale` (ID-LDP chapter, labels ``def-idldp``,
  ``def-minidldp``, ``lem-minid-ldp``);
* IPLDP (Li et al., Definition 3; bibtex ``li2023ipldp``, bibtex ``li2023ipldppreprint``) --
  :func:`check_ipldp` (IPLDP chapter, label ``def-ipldp``);
* LIP and MIP (Jiang, Li, Tandon, Definitions 2-3, Proposition 1, Theorem 1;
  bibtex ``jiang2018lip``) -- :func:`lip_epsilon`, :func:`check_lip`,
  :func:`mutual_information`, :func:`check_mip` (LIP chapter, labels ``def-lip``,
  ``def-mip``, ``prop-lip-mip``, ``thm-lip-ldp``);
* FLDP (Zhao et al.; bibtex ``zhao2022fldp``) -- :func:`fldp_parameters`, :func:`check_fldp`
  (FLDP chapter, label ``def-fldp``; the definition is *reconstructed*, see
  :func:`fldp_parameters`).

Tolerance
---------
Every ``check_*`` compares a computed log-ratio ``L`` with an allowed value ``A`` as
``L <= A + REL_TOL * max(1, |A|)`` with ``REL_TOL = 1e-9``.  Mechanisms calibrated to hit
their budget exactly (GRR, RAPPOR, OUE, IPRR, ...) produce ``L = A`` up to a few ulps of
rounding, and must be reported as satisfying it; a genuine violation of relative size
``1e-9`` or more is reported as a violation.  The reported ``slack`` is the raw
``A - L`` (no tolerance applied), so it can be ``-1e-16`` for a satisfied check.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Union

import numpy as np

from ._validation import check_budget_vector, check_distribution, check_epsilon, check_items, check_probability
from .channels import Channel, ExplicitChannel, UnaryChannel, mix_with_uniform

__all__ = [
    "REL_TOL",
    "as_channel",
    "ldp_epsilon",
    "IDLDPResult",
    "check_id_ldp",
    "id_ldp_scale",
    "fit_to_budgets",
    "IPLDPResult",
    "check_ipldp",
    "LIPResult",
    "lip_epsilon",
    "check_lip",
    "MIPResult",
    "mutual_information",
    "check_mip",
    "FLDPParameters",
    "FLDPResult",
    "fldp_parameters",
    "check_fldp",
]

#: relative tolerance of every ``check_*`` function (see the module docstring)
REL_TOL = 1e-9

#: largest unary domain that the accountant enumerates when no closed form exists
MAX_ENUM_BITS = 16

# number of (class) pairs processed at once by the blocked pairwise reductions
_BLOCK_ELEMENTS = 1 << 21

PairRule = Union[str, Callable[[np.ndarray, np.ndarray], Any]]

_RULES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "min": np.minimum,
    "max": np.maximum,
    "average": lambda e1, e2: (np.asarray(e1) + np.asarray(e2)) / 2.0,
}


# ---------------------------------------------------------------------------- helpers
def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _tol(allowed: np.ndarray | float) -> np.ndarray:
    """Absolute slack granted to a comparison against ``allowed`` (``inf`` stays ``inf``)."""
    return REL_TOL * np.maximum(1.0, np.abs(allowed))


def _within(value: np.ndarray | float, allowed: np.ndarray | float) -> np.ndarray:
    """``value <= allowed`` up to the relative tolerance :data:`REL_TOL`."""
    return np.asarray(value) <= np.asarray(allowed) + _tol(allowed)


def as_channel(obj: Any) -> Channel:
    """Return the channel of ``obj``: a :class:`Channel` itself, or ``obj.channel()``.

    Raises
    ------
    ValueError
        If ``obj`` is neither a channel nor an object whose ``channel()`` returns one.
    """
    if isinstance(obj, Channel):
        return obj
    method = getattr(obj, "channel", None)
    if callable(method):
        ch = method()
        if isinstance(ch, Channel):
            return ch
        raise ValueError(f"{type(obj).__name__}.channel() returned {type(ch).__name__}, not a Channel")
    raise ValueError(f"expected a Channel or a mechanism with .channel(), got {_describe(obj)}")


def _require_pairs(ch: Channel) -> int:
    d = ch.n_inputs
    if d < 2:
        raise ValueError(f"a pairwise privacy check needs at least 2 inputs, the channel has {d}")
    return d


def _resolve_rule(r: PairRule) -> tuple[str, Callable[[np.ndarray, np.ndarray], Any]]:
    if isinstance(r, str):
        if r in _RULES:
            return r, _RULES[r]
        raise ValueError(f"unknown pair rule r={r!r}; expected 'min', 'average', 'max' or a callable r(e1, e2)")
    if callable(r):
        return getattr(r, "__name__", "custom"), r
    raise ValueError(f"pair rule r must be 'min', 'average', 'max' or a callable, got {_describe(r)}")


def _apply_rule(func: Callable[[np.ndarray, np.ndarray], Any], e1: np.ndarray, e2: np.ndarray) -> np.ndarray:
    """Evaluate a vectorised pair rule and check its output (non-negative, not NaN)."""
    shape = np.broadcast_shapes(np.shape(e1), np.shape(e2))
    out = np.asarray(func(e1, e2), dtype=float)
    try:
        out = np.broadcast_to(out, shape)
    except ValueError:
        raise ValueError(f"pair rule r returned shape {out.shape}, expected {shape} (r must be vectorised)") from None
    bad = np.isnan(out) | (out < 0)
    if np.any(bad):
        raise ValueError(f"pair rule r must return non-negative budgets, got {out[bad].flat[0]!r}")
    return out


# ------------------------------------------------------------------------------- LDP
def ldp_epsilon(ch: Any) -> float:
    """Tight standard LDP epsilon: ``max_{x, x', y} log P(y|x) / P(y|x')`` (``inf`` if unbounded).

    Explicit channels: ``max_y [log max_x P(y|x) - log min_x P(y|x)]`` over outputs that
    some input can produce, an ``O(d * n_outputs)`` scan.  Unary channels: the closed form
    ``max_{x != x'} u[x] + v[x']`` (Foundations chapter, label ``thm-ue-pairwise``).

    Foundations chapter, label ``def-ldp``.
    """
    ch = as_channel(ch)
    if isinstance(ch, ExplicitChannel):
        m = ch.matrix
        hi = m.max(axis=0)
        lo = m.min(axis=0)
        used = hi > 0
        if not np.any(used) or m.shape[0] < 2:
            return 0.0
        if np.any(lo[used] == 0):
            return math.inf
        return float(max(0.0, np.max(np.log(hi[used]) - np.log(lo[used]))))
    return float(ch.ldp_epsilon())


# --------------------------------------------------------------------------- ID-LDP
@dataclass(frozen=True)
class IDLDPResult:
    """Outcome of an ID-LDP check.

    Attributes
    ----------
    satisfied
        Whether every ordered pair ``x != x'`` has ``L(x, x') <= r(eps_x, eps_x')`` (up to
        :data:`REL_TOL`).
    worst_pair
        The ordered pair ``(x, x')`` maximising ``L(x, x') - r(eps_x, eps_x')``.
    worst_log_ratio
        ``L`` at the worst pair: ``max_y log P(y|x) / P(y|x')``.
    allowed
        ``r(eps_x, eps_x')`` at the worst pair.
    slack
        ``allowed - worst_log_ratio`` = ``min_{x != x'} [r(eps_x, eps_x') - L(x, x')]``;
        negative means violated (beyond rounding).
    worst_output
        For explicit channels, the output index ``y`` attaining ``worst_log_ratio``;
        ``None`` for the closed forms.
    rule
        Name of the pair rule ``r``.
    """

    satisfied: bool
    worst_pair: tuple[int, int]
    worst_log_ratio: float
    allowed: float
    slack: float
    worst_output: int | None
    rule: str


def _explicit_pair_rows(m: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the given input rows: ``L[x, x'] = max_y log m[x,y]/m[x',y]`` and the argmax ``y``."""
    with np.errstate(divide="ignore"):
        logm = np.log(m)
    d = m.shape[0]
    L = np.empty((rows.size, d))
    Y = np.empty((rows.size, d), dtype=np.int64)
    for k, x in enumerate(rows):
        support = np.flatnonzero(m[x] > 0)
        diff = logm[x, support][None, :] - logm[:, support]  # finite - (-inf) = +inf, never NaN
        j = np.argmax(diff, axis=1)
        L[k] = diff[np.arange(d), j]
        Y[k] = support[j]
    return L, Y


def _pair_blocks(ch: Channel, e: np.ndarray, rule: Callable, method: str) -> Iterator[tuple[np.ndarray, ...]]:
    """Yield blocks ``(L, A, X, XP, Y)`` covering every ordered pair ``x != x'`` (or a class representative).

    ``L`` log-ratios, ``A`` allowed values, ``X``/``XP`` the (representative) inputs and ``Y``
    the worst outputs (``-1`` where unknown).  Entries that stand for no pair have ``L = -inf``.
    """
    d = ch.n_inputs
    if method == "explicit":
        m = ch.matrix  # type: ignore[attr-defined]
        step = max(1, _BLOCK_ELEMENTS // d)
        for start in range(0, d, step):
            rows = np.arange(start, min(d, start + step))
            L, Y = _explicit_pair_rows(m, rows)
            L[np.arange(rows.size), rows] = -np.inf
            A = _apply_rule(rule, e[rows][:, None], e[None, :])
            X = np.broadcast_to(rows[:, None], L.shape)
            XP = np.broadcast_to(np.arange(d)[None, :], L.shape)
            yield L, A, X, XP, Y
    elif method == "dense":
        full = ch.pairwise_log_ratio()
        step = max(1, _BLOCK_ELEMENTS // d)
        for start in range(0, d, step):
            rows = np.arange(start, min(d, start + step))
            L = full[rows].copy()
            L[np.arange(rows.size), rows] = -np.inf
            A = _apply_rule(rule, e[rows][:, None], e[None, :])
            X = np.broadcast_to(rows[:, None], L.shape)
            XP = np.broadcast_to(np.arange(d)[None, :], L.shape)
            yield L, A, X, XP, np.full(L.shape, -1, dtype=np.int64)
    else:  # "classes": unary closed form on classes of equal (u, v, budget)
        u, v = ch.separable_log_ratio()  # type: ignore[attr-defined]
        keys = np.column_stack([u, v, e])
        uniq, first, inverse, counts = np.unique(
            keys, axis=0, return_index=True, return_inverse=True, return_counts=True
        )
        inverse = np.asarray(inverse).reshape(-1)
        order = np.argsort(inverse, kind="stable")
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        second = np.where(counts >= 2, order[np.minimum(starts + 1, d - 1)], -1)
        U, V, E = uniq[:, 0], uniq[:, 1], uniq[:, 2]
        K = uniq.shape[0]
        step = max(1, _BLOCK_ELEMENTS // K)
        for start in range(0, K, step):
            rows = np.arange(start, min(K, start + step))
            L = U[rows][:, None] + V[None, :]
            A = _apply_rule(rule, E[rows][:, None], E[None, :])
            X = np.broadcast_to(first[rows][:, None], L.shape).copy()
            XP = np.broadcast_to(first[None, :], L.shape).copy()
            diag = (np.arange(rows.size), rows)
            XP[diag] = second[rows]
            L[diag] = np.where(counts[rows] >= 2, L[diag], -np.inf)
            yield L, A, X, XP, np.full(L.shape, -1, dtype=np.int64)


def _choose_method(ch: Channel, method: str) -> str:
    if method not in ("auto", "dense", "classes"):
        raise ValueError(f"unknown method={method!r}; expected 'auto', 'dense' or 'classes'")
    if method == "auto":
        return "explicit" if isinstance(ch, ExplicitChannel) else "classes"
    if method == "classes" and not isinstance(ch, UnaryChannel):
        raise ValueError(f"method='classes' needs a UnaryChannel, got {type(ch).__name__}")
    return method


def check_id_ldp(ch: Any, budgets: Any, r: PairRule = "min", method: str = "auto") -> IDLDPResult:
    """Check E-ID-LDP (Gu et al., Definition 2) for the budget vector ``E = budgets``.

    A channel satisfies E-ID-LDP with pair rule ``r`` when for every pair of inputs
    ``x, x'`` and every output ``y``::

        P(y | x) <= exp(r(eps_x, eps_x')) * P(y | x').

    ``r="min"`` is MinID-LDP (Definition 3); ``"average"`` is the arithmetic mean and
    ``"max"`` the maximum of the two budgets; a callable must be vectorised over numpy
    arrays and return non-negative values (``inf`` means the pair is unconstrained).
    Pairs with ``x = x'`` are trivially satisfied and skipped.

    Parameters
    ----------
    ch
        Channel or mechanism.
    budgets
        Per-input budgets ``eps_x`` (length ``n_inputs``, finite, positive).
    r
        Pair rule: ``"min"``, ``"average"``, ``"max"`` or a callable ``r(e1, e2)``.
    method
        ``"auto"`` (enumeration for explicit channels; equivalence classes for unary
        channels), ``"dense"`` (reduce the full ``d x d`` matrix of
        :meth:`Channel.pairwise_log_ratio`) or ``"classes"`` (unary only: group items with
        equal ``(u, v, eps)``, then check one pair per class pair plus one within-class pair
        per class of size >= 2; exact because ``L`` and ``r`` only depend on the classes,
        cost ``O(K^2)`` for ``K`` classes instead of ``O(d^2)``).

    Returns
    -------
    IDLDPResult

    Notes
    -----
    ID-LDP chapter, labels ``def-idldp`` and ``def-minidldp``.  The comparison uses the
    tolerance :data:`REL_TOL` (see the module docstring).
    """
    ch = as_channel(ch)
    d = _require_pairs(ch)
    e = check_budget_vector(budgets, d)
    name, rule = _resolve_rule(r)
    how = _choose_method(ch, method)

    best = (-math.inf, 0, 1, 0.0, 0.0, -1)  # margin, x, x', L, A, y
    ok = True
    found = False
    for L, A, X, XP, Y in _pair_blocks(ch, e, rule, how):
        valid = L > -np.inf
        if not np.any(valid):
            continue
        with np.errstate(invalid="ignore"):
            margin = np.where(np.isposinf(A), -np.inf, L - A)
        margin = np.where(valid, margin, -np.inf)
        ok = ok and bool(np.all(_within(L[valid], A[valid])))
        # the worst pair among valid ones (margin may be -inf for unconstrained pairs)
        masked = np.where(valid, margin, np.nan)
        k = int(np.nanargmax(masked)) if np.any(~np.isnan(masked)) else None
        if k is None:
            continue
        i, j = np.unravel_index(k, L.shape)
        if not found or margin[i, j] > best[0]:
            best = (float(margin[i, j]), int(X[i, j]), int(XP[i, j]), float(L[i, j]), float(A[i, j]), int(Y[i, j]))
            found = True
    _, x, xp, lval, aval, y = best
    return IDLDPResult(
        satisfied=bool(ok),
        worst_pair=(x, xp),
        worst_log_ratio=lval,
        allowed=aval,
        slack=(math.inf if math.isinf(aval) and aval > 0 else aval - lval),
        worst_output=(None if y < 0 else y),
        rule=name,
    )


def id_ldp_scale(ch: Any, budgets: Any, r: str = "min") -> float:
    """Smallest ``s >= 0`` such that the channel satisfies ``(s * E)``-ID-LDP with rule ``r``.

    For the built-in rules (positively homogeneous: ``r(s e1, s e2) = s r(e1, e2)``) this is
    ``max_{x != x'} L(x, x') / r(eps_x, eps_x')``; ``inf`` if some ``L`` is unbounded.
    With ``r="min"`` the channel is E-MinID-LDP exactly when ``id_ldp_scale <= 1``.

    ID-LDP chapter, label ``def-minidldp``.
    """
    ch = as_channel(ch)
    d = _require_pairs(ch)
    e = check_budget_vector(budgets, d)
    if not isinstance(r, str) or r not in _RULES:
        raise ValueError(
            f"id_ldp_scale needs a homogeneous built-in rule 'min', 'average' or 'max', got r={_describe(r)}"
        )
    rule = _RULES[r]
    how = _choose_method(ch, "auto")
    best = 0.0
    for L, A, _X, _XP, _Y in _pair_blocks(ch, e, rule, how):
        valid = L > -np.inf
        if np.any(valid):
            best = max(best, float(np.max(L[valid] / A[valid])))
    return best


def fit_to_budgets(ch: Any, budgets: Any, r: str = "min", tol: float = 1e-12) -> tuple[ExplicitChannel, float]:
    """Mix a channel with the uniform one just enough to satisfy ``E``-ID-LDP with rule ``r``.

    Returns ``(channel, theta)`` with the smallest ``theta`` in ``[0, 1]`` (up to ``tol``) such
    that ``(1 - theta) P + theta U`` satisfies the budgets (:func:`id_ldp_scale` ``<= 1``).  The
    privacy loss of every pair is non-increasing in ``theta``
    (:func:`ldpkit.channels.mix_with_uniform`), so bisection finds it, and the result is tight:
    some pair sits at its budget unless ``theta = 0``.  The book uses it to draw random
    mechanisms that satisfy MinID-LDP exactly (ID-LDP chapter, label ``lem-minid-ldp``).
    """
    ch = as_channel(ch).to_explicit()
    e = check_budget_vector(budgets, ch.n_inputs)
    if id_ldp_scale(ch, e, r) <= 1.0:
        return ch, 0.0
    lo, hi = 0.0, 1.0
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if id_ldp_scale(mix_with_uniform(ch, mid), e, r) <= 1.0:
            hi = mid
        else:
            lo = mid
    return mix_with_uniform(ch, hi), hi


# ---------------------------------------------------------------------------- IPLDP
@dataclass(frozen=True)
class IPLDPResult:
    """Outcome of an IPLDP check (Li et al., Definition 3).

    Attributes
    ----------
    satisfied
        Both conditions of the definition hold (condition 1 up to :data:`REL_TOL`).
    worst_output
        The sensitive output ``x_i`` with the largest ``L_i - eps_i``, where
        ``L_i = max_{x, x'} log Q(x_i|x) / Q(x_i|x')``.
    worst_pair
        The inputs ``(x, x')`` attaining ``L_i`` at ``worst_output``.
    worst_log_ratio
        ``L_i`` at ``worst_output``.
    allowed
        ``eps_i`` of ``worst_output``.
    slack
        ``allowed - worst_log_ratio`` (negative: condition 1 violated).
    structural_violations
        Up to 20 ``(input, output)`` cells breaking condition 2: ``Q(j|x) > 0`` for a
        non-sensitive output ``j`` and an input ``x != j``, or ``Q(j|j) = 0``
        (reported as ``(j, j)``).
    n_structural_violations
        Total number of such cells.
    """

    satisfied: bool
    worst_output: int
    worst_pair: tuple[int, int]
    worst_log_ratio: float
    allowed: float
    slack: float
    structural_violations: tuple[tuple[int, int], ...]
    n_structural_violations: int


def _sensitive_indices(sensitive: Any, d: int) -> np.ndarray:
    arr = np.asarray(sensitive)
    if arr.dtype == bool:
        if arr.ndim != 1 or arr.size != d:
            raise ValueError(f"sensitive mask has shape {arr.shape}, expected ({d},)")
        idx = np.flatnonzero(arr)
        if idx.size == 0:
            raise ValueError("sensitive mask selects no item: IPLDP needs at least one sensitive item")
        return idx
    idx = check_items(arr, d, "sensitive")
    uniq, counts = np.unique(idx, return_counts=True)
    if np.any(counts > 1):
        raise ValueError(f"sensitive lists item {int(uniq[counts > 1][0])} more than once")
    return idx


def check_ipldp(ch: Any, budgets: Any, sensitive: Any) -> IPLDPResult:
    """Check ``(D_S, E)``-IPLDP, Definition 3 of Li et al. (both versions of the paper).

    The input and output domains coincide (``Q(y|x)`` is a square matrix, output ``j``
    means "reported item ``j``").  With sensitive items ``D_S`` carrying budgets
    ``eps_i`` and non-sensitive items ``D_N = D \\ D_S``, a channel is IPLDP when

    1. (eq. 3) for every sensitive *output* ``x_i`` and every pair of inputs ``x, x'`` in
       the whole domain ``D`` (sensitive or not):
       ``exp(-eps_i) <= Q(x_i|x) / Q(x_i|x') <= exp(eps_i)``;
       the budget is attached to the reported item, not to the true one.  Outputs that
       no input can produce are unconstrained (``0/0``);
    2. (eq. 4) every non-sensitive output ``j`` is produced only by the input ``j`` itself
       and by it with positive probability: ``Q(j|j) > 0`` and ``Q(j|x) = 0`` for
       ``x != j``.  Equivalently, a non-sensitive input is reported either as itself or as
       some sensitive item, and a reported non-sensitive item reveals the input (as in
       ULDP).  Non-sensitive outputs carry no ratio constraint.

    Both versions of the paper print condition 2 in a garbled form ("``Q(x|x') > 0`` and
    ``Q(x|x') = 0`` for any ``x != x'``", literally contradictory); the reading above is
    the one consistent with their explanatory sentence after the definition and with the
    mechanism of their Definition 5 (IPRR with non-sensitive items), and it is the one
    used here.

    Parameters
    ----------
    ch
        Square explicit channel (or a mechanism whose channel is one).
    budgets
        Budgets of the sensitive items: either length ``|D_S|`` (in the order of
        ``sensitive``; ascending index order for a boolean mask) or length ``d`` (entries
        of non-sensitive items are then ignored but must still be finite and positive).
    sensitive
        Boolean mask of length ``d`` or a sequence of distinct sensitive item indices.

    Notes
    -----
    IPLDP chapter, label ``def-ipldp``.  Cost ``O(d^2)`` (column-wise max/min).
    """
    ch = as_channel(ch)
    if not isinstance(ch, ExplicitChannel):
        raise ValueError(f"IPLDP needs the output domain to equal the input domain; got a {type(ch).__name__}")
    d = _require_pairs(ch)
    m = ch.matrix
    if m.shape[1] != d:
        raise ValueError(f"IPLDP needs a square channel (outputs = items), got shape {m.shape}")
    sens = _sensitive_indices(sensitive, d)
    arr = np.asarray(budgets, dtype=float)
    if arr.ndim == 1 and arr.size == d:
        eps_all = check_budget_vector(arr, d)
        eps = eps_all[sens]
    elif arr.ndim == 1 and arr.size == sens.size:
        eps = check_budget_vector(arr, sens.size)
    else:
        raise ValueError(
            f"budgets has length {arr.size if arr.ndim == 1 else arr.shape}, expected {sens.size} "
            f"(one per sensitive item) or the domain size {d}"
        )

    # condition 1, column by column: max over (x, x') = log max_x Q - log min_x Q
    cols = m[:, sens]
    hi = cols.max(axis=0)
    lo = cols.min(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        L = np.where(hi > 0, np.log(hi) - np.log(lo), 0.0)  # lo = 0 < hi gives +inf
    margin = L - eps
    k = int(np.argmax(margin))
    ok1 = bool(np.all(_within(L, eps)))
    x_hi = int(np.argmax(cols[:, k]))
    x_lo = int(np.argmin(cols[:, k]))

    # condition 2
    nonsens = np.setdiff1d(np.arange(d), sens)
    sub = m[:, nonsens] > 0
    sub[nonsens, np.arange(nonsens.size)] = m[nonsens, nonsens] == 0  # diagonal: violation if zero
    bad_x, bad_j = np.nonzero(sub)
    cells = tuple((int(x), int(nonsens[j])) for x, j in zip(bad_x[:20], bad_j[:20]))
    n_bad = int(bad_x.size)

    return IPLDPResult(
        satisfied=ok1 and n_bad == 0,
        worst_output=int(sens[k]),
        worst_pair=(x_hi, x_lo),
        worst_log_ratio=float(L[k]),
        allowed=float(eps[k]),
        slack=float(eps[k] - L[k]),
        structural_violations=cells,
        n_structural_violations=n_bad,
    )


# ------------------------------------------------------------------------- LIP / MIP
@dataclass(frozen=True)
class LIPResult:
    """Outcome of an LIP check (Jiang, Li, Tandon, Definition 3).

    Attributes
    ----------
    satisfied
        ``lip_epsilon <= epsilon`` (up to :data:`REL_TOL`).
    epsilon
        The budget checked.
    lip_epsilon
        The smallest budget the channel satisfies under this prior.
    worst_input, worst_output
        The ``(x, y)`` attaining ``lip_epsilon`` (``worst_output`` is ``None`` for the
        unary closed form).
    slack
        ``epsilon - lip_epsilon``.
    """

    satisfied: bool
    epsilon: float
    lip_epsilon: float
    worst_input: int
    worst_output: int | None
    slack: float


def _unary_open(ch: Channel) -> bool:
    return isinstance(ch, UnaryChannel) and bool(
        np.all((ch.a > 0) & (ch.a < 1) & (ch.b > 0) & (ch.b < 1))
    )


def _enumerable(ch: Channel, what: str) -> ExplicitChannel:
    if isinstance(ch, ExplicitChannel):
        return ch
    if isinstance(ch, UnaryChannel):
        if ch.n_inputs > MAX_ENUM_BITS:
            raise ValueError(
                f"{what} of this unary channel needs all 2**{ch.n_inputs} outputs; "
                f"enumeration is limited to d <= MAX_ENUM_BITS={MAX_ENUM_BITS}"
            )
        return ch.to_explicit(max_bits=MAX_ENUM_BITS)
    return ch.to_explicit()


def _lip_explicit(m: np.ndarray, prior: np.ndarray) -> tuple[float, int, int]:
    py = prior @ m
    with np.errstate(divide="ignore", invalid="ignore"):
        R = np.log(m) - np.log(py)[None, :]
    R = np.where((m == 0) & (py[None, :] == 0), 0.0, R)  # 0/0: this (x, y) never co-occurs nor is possible
    absR = np.abs(R)
    k = int(np.argmax(absR))
    x, y = np.unravel_index(k, absR.shape)
    return float(absR[x, y]), int(x), int(y)


def _lip_unary(ch: UnaryChannel, prior: np.ndarray) -> tuple[float, int]:
    a, b = ch.a, ch.b
    rho1 = a / b
    rho0 = (1 - a) / (1 - b)
    lo = np.minimum(rho0, rho1)
    hi = np.maximum(rho0, rho1)
    s_lo = float(prior @ lo)
    s_hi = float(prior @ hi)
    best = np.zeros(a.size)
    for rho in (rho0, rho1):
        # P(y|x)/P(y) = rho_x(y_x) / sum_z prior_z rho_z(y_z); the other bits of y are free
        up = rho / (prior * rho + np.maximum(s_lo - prior * lo, 0.0))
        down = rho / (prior * rho + np.maximum(s_hi - prior * hi, 0.0))
        best = np.maximum(best, np.maximum(np.log(up), -np.log(down)))
    x = int(np.argmax(best))
    return float(best[x]), x


def _validated_prior(ch: Channel, prior: Any) -> np.ndarray:
    return check_distribution(prior, ch.n_inputs)


def lip_epsilon(ch: Any, prior: Any) -> float:
    """Smallest ``eps`` for which the channel is eps-LIP under ``prior``.

    Definition 3 of Jiang, Li, Tandon bounds the prior-to-posterior ratio,
    ``exp(-eps) <= P(X=x) / P(X=x | Y=y) <= exp(eps)``, for all ``x`` and ``y``; by Bayes'
    rule this is ``exp(-eps) <= P(y|x) / P(y) <= exp(eps)`` with
    ``P(y) = sum_x prior[x] P(y|x)`` (their eq. 5).  Hence::

        lip_epsilon = max_{x, y} |log P(y|x) - log P(y)|.

    Conventions where the paper's ratio is undefined:

    * outputs with ``P(y) = 0`` that no input can produce are skipped (``0/0``);
    * the Bayes form is imposed for *every* input, including those with zero prior (for
      which the posterior form is ``0/0``).  Then a zero-prior input that can produce an
      output no supported input produces, or that cannot produce an output that others
      produce, makes ``lip_epsilon`` infinite.  With this convention Theorem 1
      (eps-LIP implies 2eps-LDP) holds for every prior; restricted to the prior's support
      it would fail for zero-prior inputs.  For a prior with full support both readings
      coincide with "all ``x`` and all ``y`` with ``P(y) > 0``".

    Unary channels with all ``a, b`` in ``(0, 1)`` use a closed form: given bit ``y_x``,
    the ratio is extremal when every other bit minimises (or maximises)
    ``rho_z(y_z) = P_a(y_z)/P_b(y_z)``, so ``O(d)`` work; other unary channels are
    enumerated (``d <= MAX_ENUM_BITS``).

    LIP chapter, label ``def-lip``.
    """
    ch = as_channel(ch)
    p = _validated_prior(ch, prior)
    if _unary_open(ch):
        return _lip_unary(ch, p)[0]  # type: ignore[arg-type]
    return _lip_explicit(_enumerable(ch, "LIP").matrix, p)[0]


def check_lip(ch: Any, prior: Any, epsilon: float) -> LIPResult:
    """Check eps-LIP under ``prior`` (see :func:`lip_epsilon` for the definition used).

    LIP chapter, label ``def-lip``.
    """
    ch = as_channel(ch)
    p = _validated_prior(ch, prior)
    eps = check_epsilon(epsilon)
    if _unary_open(ch):
        value, x = _lip_unary(ch, p)  # type: ignore[arg-type]
        y: int | None = None
    else:
        value, x, y = _lip_explicit(_enumerable(ch, "LIP").matrix, p)
    return LIPResult(
        satisfied=bool(_within(value, eps)),
        epsilon=eps,
        lip_epsilon=value,
        worst_input=x,
        worst_output=y,
        slack=eps - value,
    )


@dataclass(frozen=True)
class MIPResult:
    """Outcome of an MIP check: ``I(X;Y) <= epsilon`` in nats (Definition 2 of Jiang et al.)."""

    satisfied: bool
    mutual_information: float
    epsilon: float
    slack: float


def _check_base(base: Any) -> float:
    if base is None:
        return 1.0
    if isinstance(base, bool) or not isinstance(base, numbers.Real) or not math.isfinite(float(base)):
        raise ValueError(f"base must be a finite real > 0 and != 1 (or None for nats), got {_describe(base)}")
    if float(base) <= 0 or float(base) == 1.0:
        raise ValueError(f"base must be a finite real > 0 and != 1 (or None for nats), got {_describe(base)}")
    return math.log(float(base))


def mutual_information(ch: Any, prior: Any, base: float | None = None) -> float:
    """``I(X;Y) = sum_{x,y} prior[x] P(y|x) log(P(y|x) / P(y))`` with ``0 log 0 = 0``.

    In nats by default (``base=None``); ``base=2`` gives bits.  Proposition 1 of Jiang et
    al. (eps-LIP implies ``I(X;Y) <= eps``) holds in nats only: its proof bounds every
    ``log`` term by ``eps``, and ``eps`` is a natural-log quantity (``exp(eps)`` in the
    LIP definition).  Unary channels are enumerated (``d <= MAX_ENUM_BITS``).

    LIP chapter, label ``def-mip``.
    """
    ch = as_channel(ch)
    p = _validated_prior(ch, prior)
    scale = _check_base(base)
    m = _enumerable(ch, "mutual information").matrix
    py = p @ m
    joint = p[:, None] * m
    pos = joint > 0
    terms = joint[pos] * (np.log(m[pos]) - np.log(np.broadcast_to(py[None, :], m.shape)[pos]))
    return float(max(0.0, terms.sum()) / scale)


def check_mip(ch: Any, prior: Any, epsilon: float) -> MIPResult:
    """Check eps-MIP: ``I(X;Y) <= eps`` with ``I`` in nats (Definition 2 of Jiang et al.).

    LIP chapter, label ``def-mip``.
    """
    ch = as_channel(ch)
    p = _validated_prior(ch, prior)
    eps = check_epsilon(epsilon)
    value = mutual_information(ch, p)
    return MIPResult(satisfied=bool(_within(value, eps)), mutual_information=value, epsilon=eps, slack=eps - value)


# ----------------------------------------------------------------------------- FLDP
@dataclass(frozen=True)
class FLDPParameters:
    """The two quantities of the reconstructed FLDP definition (see :func:`fldp_parameters`).

    Attributes
    ----------
    shared_fraction
        ``alpha* = min_{x != x'} |R_x cap R_x'| / |R_x|``, ``R_x = {y : P(y|x) > 0}``.
    fraction_pair
        The ordered pair ``(x, x')`` attaining ``shared_fraction``.
    epsilon
        ``eps* = max_{x, x'} max_{y in R_x cap R_x'} log P(y|x) / P(y|x')`` (``>= 0``;
        ``0`` if no two inputs share an output).
    ratio_pair
        The ordered pair attaining ``epsilon``.
    hiding_fraction
        Diagnostic for the alternative, input-side reading of the paper's prose:
        ``min_y |{x : P(y|x) > 0}| / d`` over producible outputs.  ``None`` for large
        unary channels (it would need enumeration).
    """

    shared_fraction: float
    fraction_pair: tuple[int, int]
    epsilon: float
    ratio_pair: tuple[int, int]
    hiding_fraction: float | None


@dataclass(frozen=True)
class FLDPResult:
    """Outcome of :func:`check_fldp`: both FLDP conditions and the channel's parameters."""

    satisfied: bool
    alpha: float
    epsilon: float
    fraction_ok: bool
    ratio_ok: bool
    parameters: FLDPParameters


def _top2_max_sum(f: np.ndarray, g: np.ndarray) -> tuple[float, int, int]:
    """``max_{i != j} f[i] + g[j]`` (values may be ``-inf``; never ``+inf`` here)."""
    oi = np.argsort(-f, kind="stable")[:2]
    oj = np.argsort(-g, kind="stable")[:2]
    best = (-math.inf, int(oi[0]), int(oj[0]) if oj[0] != oi[0] else int(oj[-1]))
    for i in oi:
        for j in oj:
            if i != j and f[i] + g[j] > best[0]:
                best = (float(f[i] + g[j]), int(i), int(j))
    return best


def _bottom2_min_prod(f: np.ndarray, g: np.ndarray) -> tuple[float, int, int]:
    """``min_{i != j} f[i] * g[j]`` for non-negative ``f``, ``g``."""
    oi = np.argsort(f, kind="stable")[:2]
    oj = np.argsort(g, kind="stable")[:2]
    best = (math.inf, 0, 1)
    for i in oi:
        for j in oj:
            if i != j and f[i] * g[j] < best[0]:
                best = (float(f[i] * g[j]), int(i), int(j))
    return best


def _bit_support(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks ``(can be 0, can be 1)`` of a Bernoulli(p) bit."""
    return p < 1, p > 0


def _fldp_explicit(m: np.ndarray) -> FLDPParameters:
    d = m.shape[0]
    supp = m > 0
    size = supp.sum(axis=1).astype(float)
    inter = supp.astype(np.int64) @ supp.T.astype(np.int64)
    frac = inter / size[:, None]
    np.fill_diagonal(frac, np.inf)
    k = int(np.argmin(frac))
    fx, fxp = np.unravel_index(k, frac.shape)
    with np.errstate(divide="ignore"):
        logm = np.log(m)
    eps_best, rx, rxp = 0.0, 0, 1
    for x in range(d):
        shared = supp[x][None, :] & supp  # (d, n): outputs shared by x and each x'
        diff = np.where(shared, logm[x][None, :] - np.where(shared, logm, 0.0), -np.inf)
        diff[x] = -np.inf
        row = diff.max(axis=1)
        j = int(np.argmax(row))
        if row[j] > eps_best:
            eps_best, rx, rxp = float(row[j]), x, j
    producers = supp.sum(axis=0)
    used = producers > 0
    hiding = float(producers[used].min() / d)
    return FLDPParameters(float(frac[fx, fxp]), (int(fx), int(fxp)), eps_best, (rx, rxp), hiding)


def _fldp_unary(ch: UnaryChannel) -> FLDPParameters:
    a, b = ch.a, ch.b
    a0, a1 = _bit_support(a)
    b0, b1 = _bit_support(b)
    s0, s1 = a0 & b0, a1 & b1  # values bit i can take under both laws
    shared = s0.astype(int) + s1.astype(int)
    # fraction for (x, x') = shared[x] * shared[x'] / (|S(a_x)| * |S(b_x')|): the other bits cancel
    g = shared / (a0.astype(int) + a1.astype(int))
    h = shared / (b0.astype(int) + b1.astype(int))
    frac, fx, fxp = _bottom2_min_prod(g, h)
    # log-ratio on shared outputs: bit x contributes max over shared values of log P_a/P_b,
    # bit x' the reverse; -inf when no value is shared (then the pair shares no output)
    with np.errstate(divide="ignore", invalid="ignore"):
        r1 = np.where(s1, np.log(np.where(s1, a, 1.0)) - np.log(np.where(s1, b, 1.0)), -np.inf)
        r0 = np.where(s0, np.log(np.where(s0, 1 - a, 1.0)) - np.log(np.where(s0, 1 - b, 1.0)), -np.inf)
    up = np.maximum(r1, r0)
    down = np.maximum(np.where(s1, -r1, -np.inf), np.where(s0, -r0, -np.inf))
    eps, rx, rxp = _top2_max_sum(up, down)
    hiding = None
    if ch.n_inputs <= MAX_ENUM_BITS:
        hiding = _fldp_explicit(ch.to_explicit(max_bits=MAX_ENUM_BITS).matrix).hiding_fraction
    if eps <= 0.0:
        eps, rx, rxp = 0.0, 0, 1
    return FLDPParameters(frac, (fx, fxp), float(eps), (rx, rxp), hiding)


def fldp_parameters(ch: Any) -> FLDPParameters:
    """Shared-output fraction and shared-output log-ratio of a channel (reconstructed FLDP).

    The extracted text of Zhao et al. lost every formula, so the definition is rebuilt
    from the prose.  Write ``R_x = {y : P(y|x) > 0}`` for the range of input ``x``.
    **Reconstruction** (FLDP chapter, label ``def-fldp``): a mechanism satisfies
    ``(alpha, eps)``-FLDP when, for every ordered pair of distinct inputs ``x, x'``,

    1. *shared outputs*: ``|R_x cap R_x'| >= alpha * |R_x|`` -- every input shares at least
       a fraction ``alpha`` of its possible outputs with every other input (counted in
       outputs, as their FHR proof counts them); over both orders this is
       ``|R_x cap R_x'| >= alpha * max(|R_x|, |R_x'|)``;
    2. *ratio on shared outputs*: ``P(y|x) <= exp(eps) * P(y|x')`` for every
       ``y in R_x cap R_x'``; outputs outside the intersection are unconstrained (they
       reveal that the input is not ``x'``).

    Evidence from the prose: LDP forces ``R_x = R_x'`` and FLDP only needs the ranges to
    intersect (Sec. 3.2, Motivation); Lemma 1 says eps-LDP is the case ``alpha = 1``
    (then ``R_x = R_x'`` and condition 2 covers every output); the FHR proof (Theorem 2)
    counts the outputs of each item, finds that two items share half of them and bounds
    the ratio on the shared ones by the randomised-response ratio, concluding
    ``alpha = 0.5``.  The prose also describes FLDP as hiding each input in a *group* of
    inputs of size ``alpha * |D|`` (partitioning the domain into groups and running LDP in
    each); that input-side reading is reported as ``hiding_fraction`` but not used by
    :func:`check_fldp`.  Under the pairwise reading, a partition into two or more groups
    has ``shared_fraction = 0``.

    Explicit channels are enumerated (``O(d^2 n_outputs)``).  Unary channels use a closed
    form: only bits ``x`` and ``x'`` have different laws, so the fraction factorises as
    ``g[x] h[x']`` and the log-ratio as ``u'[x] + v'[x']`` with per-bit terms over the
    values both laws can take.
    """
    ch = as_channel(ch)
    _require_pairs(ch)
    if isinstance(ch, ExplicitChannel):
        return _fldp_explicit(ch.matrix)
    if isinstance(ch, UnaryChannel):
        return _fldp_unary(ch)
    return _fldp_explicit(ch.to_explicit().matrix)


def check_fldp(ch: Any, alpha: float, epsilon: float) -> FLDPResult:
    """Check ``(alpha, eps)``-FLDP as reconstructed in :func:`fldp_parameters`.

    Satisfied when ``shared_fraction >= alpha`` (exact count comparison, with a ``1e-12``
    allowance for the division) and ``epsilon* <= eps`` (up to :data:`REL_TOL`).

    FLDP chapter, label ``def-fldp``.
    """
    ch = as_channel(ch)
    a = check_probability(alpha, "alpha")
    if a == 0.0:
        raise ValueError(f"alpha must be a probability in (0, 1], got {alpha!r}")
    eps = check_epsilon(epsilon)
    params = fldp_parameters(ch)
    fraction_ok = params.shared_fraction >= a - 1e-12
    ratio_ok = bool(_within(params.epsilon, eps))
    return FLDPResult(
        satisfied=bool(fraction_ok and ratio_ok),
        alpha=a,
        epsilon=eps,
        fraction_ok=bool(fraction_ok),
        ratio_ok=ratio_ok,
        parameters=params,
    )
