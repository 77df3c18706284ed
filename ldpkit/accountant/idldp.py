"""ID-LDP and MinID-LDP (Gu et al., ICDE 2020, Definitions 2-3; bibtex ``gu2020idldp``).

A channel satisfies E-ID-LDP with pair rule ``r`` when ``P(y|x) <= exp(r(eps_x, eps_x')) P(y|x')``
for every pair of inputs and every output (ID-LDP chapter, :prf:ref:`def-idldp` and
:prf:ref:`def-minidldp`).  The check reduces blocks of ordered pairs: explicit channels by
enumerating outputs, unary channels by a closed form on classes of items with equal
``(u, v, eps)`` (cost ``O(K^2)`` for ``K`` classes), other kinds by their registered closed
form or by enumeration.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union

import numpy as np
from numpy.typing import ArrayLike

from .._validation import ArgumentTypeError, check_budget_vector, check_positive_real, describe, real_array
from ..channels import Channel, ExplicitChannel, UnaryChannel, mix_with_uniform
from ._core import ChannelLike, CheckResult, ClosedForms, Notion, as_channel
from ._core import closed_forms, enumerate_channel, register_notion, require_pairs, standard_parameters, within
from .ldp import pairwise_log_ratio, unary_loss_terms

__all__ = [
    "BuiltinPairRule",
    "IDLDP",
    "MINIDLDP",
    "PairRule",
    "IDLDPResult",
    "PAIR_RULES",
    "apply_pair_rule",
    "check_idldp",
    "check_minidldp",
    "constant_pair_blocks",
    "fit_to_budgets",
    "idldp_scale",
    "matrix_pair_blocks",
    "minidldp_scale",
    "resolve_pair_rule",
    "separable_pair_blocks",
]

#: the name of a built-in pair rule (each is positively homogeneous)
BuiltinPairRule = Literal["min", "average", "max"]

#: a pair rule: a built-in name or a vectorised callable ``r(e1, e2)``
PairRule = Union[BuiltinPairRule, Callable[[np.ndarray, np.ndarray], Any]]

#: a vectorised pair rule ``r(e1, e2)`` as the blocked reductions call it
RuleFunction = Callable[[np.ndarray, np.ndarray], Any]

#: the built-in pair rules (all positively homogeneous)
PAIR_RULES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "min": np.minimum,
    "max": np.maximum,
    "average": lambda e1, e2: (np.asarray(e1) + np.asarray(e2)) / 2.0,
}

# number of (class) pairs processed at once by the blocked pairwise reductions
_BLOCK_ELEMENTS = 1 << 21

Block = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]

#: the ID-LDP computations per channel kind, each yielding blocks ``(L, A, X, X', Y)`` of ordered pairs
_IDLDP: ClosedForms[Iterator[Block]] = closed_forms("id-ldp", "ID-LDP")


def resolve_pair_rule(r: PairRule) -> tuple[str, Callable[[np.ndarray, np.ndarray], Any]]:
    """``(name, function)`` of a pair rule: ``"min"``, ``"average"``, ``"max"`` or a callable."""
    if isinstance(r, str):
        if r in PAIR_RULES:
            return r, PAIR_RULES[r]
        raise ValueError(f"unknown pair rule r={r!r}; expected 'min', 'average', 'max' or a callable r(e1, e2)")
    if callable(r):
        return getattr(r, "__name__", "custom"), r
    raise ArgumentTypeError(f"pair rule r must be 'min', 'average', 'max' or a callable, got {describe(r)}")


def apply_pair_rule(func: Callable[[np.ndarray, np.ndarray], Any], e1: np.ndarray, e2: np.ndarray) -> np.ndarray:
    """Evaluate a vectorised pair rule and check its output (non-negative, not NaN)."""
    shape = np.broadcast_shapes(np.shape(e1), np.shape(e2))
    try:
        out = real_array(func(e1, e2), "pair rule r's output")
    except ValueError as err:
        raise ValueError(f"pair rule r must return real budgets: {err}") from None
    try:
        out = np.broadcast_to(out, shape)
    except ValueError:
        raise ValueError(f"pair rule r returned shape {out.shape}, expected {shape} (r must be vectorised)") from None
    bad = np.isnan(out) | (out < 0)
    if np.any(bad):
        raise ValueError(f"pair rule r must return non-negative budgets, got {out[bad].flat[0]!r}")
    return out


@dataclass(frozen=True, kw_only=True)
class IDLDPResult(CheckResult):
    """Outcome of an ID-LDP check.

    Attributes
    ----------
    satisfied
        Whether every ordered pair ``x != x'`` has ``L(x, x') <= r(eps_x, eps_x')`` (up to
        :data:`~ldpkit.accountant.REL_TOL`).
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

    Examples
    --------
    >>> from ldpkit import GRR, accountant
    >>> res = accountant.check_idldp(GRR(3, 1.0), [0.5, 2.0, 2.0], r="min")
    >>> res.satisfied, res.rule, res.worst_pair, round(res.worst_log_ratio, 6), res.allowed
    (False, 'min', (0, 1), 1.0, 0.5)
    """

    notion = "id-ldp"

    worst_log_ratio: float
    allowed: float
    rule: str

    @property
    def worst_pair(self) -> tuple[int, ...]:
        """The ordered pair ``(x, x')`` maximising ``L(x, x') - r(eps_x, eps_x')`` (the tightest constraint)."""
        return self.worst_inputs


# ---------------------------------------------------------------------------- pair blocks
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


def _row_blocks(
    d: int, e: np.ndarray, rule: RuleFunction, rows_fn: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
) -> Iterator[Block]:
    step = max(1, _BLOCK_ELEMENTS // d)
    for start in range(0, d, step):
        rows = np.arange(start, min(d, start + step))
        L, Y = rows_fn(rows)
        L[np.arange(rows.size), rows] = -np.inf
        A = apply_pair_rule(rule, e[rows][:, None], e[None, :])
        X = np.broadcast_to(rows[:, None], L.shape)
        XP = np.broadcast_to(np.arange(d)[None, :], L.shape)
        yield L, A, X, XP, Y


def _no_output(rows: np.ndarray, d: int) -> np.ndarray:
    return np.full((rows.size, d), -1, dtype=np.int64)


def matrix_pair_blocks(full: np.ndarray, e: np.ndarray, rule: RuleFunction) -> Iterator[Block]:
    """ID-LDP blocks ``(L, A, X, X', Y)`` of every ordered pair from a ``d x d`` log-ratio matrix ``full``.

    For the closed forms of channel kinds whose pairwise log-ratios are known in full (no worst
    output is named, ``Y = -1``).  ``A`` is the pair rule ``r(e_x, e_x')``; the diagonal has ``L = -inf``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit.accountant import matrix_pair_blocks
    >>> full = np.array([[0.0, 1.0], [2.0, 0.0]])
    >>> L, A, X, XP, Y = next(matrix_pair_blocks(full, np.array([1.0, 3.0]), np.minimum))
    >>> L.tolist(), A.tolist()
    ([[-inf, 1.0], [2.0, -inf]], [[1.0, 1.0], [1.0, 3.0]])
    """
    d = full.shape[0]
    return _row_blocks(d, e, rule, lambda rows: (full[rows].copy(), _no_output(rows, d)))


def constant_pair_blocks(d: int, value: float, e: np.ndarray, rule: RuleFunction) -> Iterator[Block]:
    """ID-LDP blocks of a channel on ``d`` inputs whose every ordered pair has the log-ratio ``value``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit.accountant import constant_pair_blocks
    >>> L, A, X, XP, Y = next(constant_pair_blocks(2, 0.5, np.array([1.0, 3.0]), np.minimum))
    >>> L.tolist(), Y.tolist()
    ([[-inf, 0.5], [0.5, -inf]], [[-1, -1], [-1, -1]])
    """
    return _row_blocks(d, e, rule, lambda rows: (np.full((rows.size, d), value), _no_output(rows, d)))


@_IDLDP.register(ExplicitChannel)
def _explicit_blocks(ch: ExplicitChannel, e: np.ndarray, rule: RuleFunction) -> Iterator[Block]:
    """Every ordered pair, by enumeration of the outputs."""
    return _row_blocks(ch.n_inputs, e, rule, lambda rows: _explicit_pair_rows(ch.matrix, rows))


def _dense_blocks(ch: Channel, e: np.ndarray, rule: RuleFunction) -> Iterator[Block]:
    """Every ordered pair, from the channel's full ``d x d`` log-ratio matrix."""
    return matrix_pair_blocks(pairwise_log_ratio(ch), e, rule)


def separable_pair_blocks(u: np.ndarray, v: np.ndarray, e: np.ndarray, rule: RuleFunction) -> Iterator[Block]:
    """ID-LDP blocks of a channel with ``L(x, x') = u[x] + v[x']`` for ``x != x'``, on classes of equal ``(u, v, eps)``.

    ``L`` and the rule depend on the classes only, so one pair stands for each pair of classes,
    plus one within-class pair for each class of two or more items; an entry that stands for no
    pair has ``L = -inf``.  Cost ``O(K^2)`` for ``K`` classes.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit.accountant import separable_pair_blocks
    >>> u, v = np.array([1.0, 1.0, 2.0]), np.array([0.0, 0.0, -1.0])
    >>> L, A, X, XP, Y = next(separable_pair_blocks(u, v, np.ones(3), np.minimum))
    >>> L.tolist(), X[:, 0].tolist(), XP.diagonal().tolist()
    ([[1.0, 0.0], [2.0, -inf]], [0, 2], [1, -1])
    """
    d = u.size
    keys = np.column_stack([u, v, e])
    uniq, first, inverse, counts = np.unique(keys, axis=0, return_index=True, return_inverse=True, return_counts=True)
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
        A = apply_pair_rule(rule, E[rows][:, None], E[None, :])
        X = np.broadcast_to(first[rows][:, None], L.shape).copy()
        XP = np.broadcast_to(first[None, :], L.shape).copy()
        diag = (np.arange(rows.size), rows)
        XP[diag] = second[rows]
        L[diag] = np.where(counts[rows] >= 2, L[diag], -np.inf)
        yield L, A, X, XP, np.full(L.shape, -1, dtype=np.int64)


@_IDLDP.register(UnaryChannel)
def _unary_class_blocks(ch: UnaryChannel, e: np.ndarray, rule: RuleFunction) -> Iterator[Block]:
    """Unary closed form on classes of equal ``(u, v, eps)``: one pair per class pair.

    ``L(x, x') = u[x] + v[x']`` for ``x != x'`` (Foundations chapter,
    :prf:ref:`thm-ue-pairwise`), so :func:`separable_pair_blocks` applies.
    """
    u, v = unary_loss_terms(ch)
    return separable_pair_blocks(u, v, e, rule)


Method = Literal["auto", "dense", "classes"]


def _blocks(ch: Channel, e: np.ndarray, rule: RuleFunction, method: Method) -> Iterator[Block]:
    if not isinstance(method, str) or method not in ("auto", "dense", "classes"):
        raise ValueError(f"unknown method={method!r}; expected 'auto', 'dense' or 'classes'")
    if method == "dense":
        return _dense_blocks(ch, e, rule)
    if method == "classes":
        if not isinstance(ch, UnaryChannel):
            raise ValueError(f"method='classes' needs a UnaryChannel, got {type(ch).__name__}")
        return _unary_class_blocks(ch, e, rule)
    return _IDLDP.compute(ch, e, rule)


def check_idldp(ch: ChannelLike, budgets: ArrayLike, *, r: PairRule = "min", method: Method = "auto") -> IDLDPResult:
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
        ``"auto"`` (the closed form registered for the channel's kind: enumeration for
        explicit channels, equivalence classes for unary ones; enumeration of
        ``to_explicit()`` for a small channel of any other kind), ``"dense"`` (reduce the
        full ``d x d`` matrix of :func:`~ldpkit.accountant.pairwise_log_ratio`) or
        ``"classes"`` (unary only: group items with equal ``(u, v, eps)``, then check one
        pair per class pair plus one within-class pair per class of two or more items; exact because
        ``L`` and ``r`` only depend on the classes, cost ``O(K^2)`` for ``K`` classes instead
        of ``O(d^2)``).

    Returns
    -------
    IDLDPResult

    Notes
    -----
    ID-LDP chapter, :prf:ref:`def-idldp` and :prf:ref:`def-minidldp`.  The comparison uses the
    tolerance :data:`~ldpkit.accountant.REL_TOL`.

    Examples
    --------
    >>> import ldpkit
    >>> res = ldpkit.accountant.check_idldp(ldpkit.GRR(3, 1.0), [1.0, 2.0, 2.0], r="min")
    >>> res.satisfied, round(res.slack, 12)
    (True, 0.0)
    """
    ch = as_channel(ch)
    d = require_pairs(ch)
    e = check_budget_vector(budgets, d)
    name, rule = resolve_pair_rule(r)
    ok, (_, x, xp, lval, aval, y) = _worst_pair(_blocks(ch, e, rule, method))
    return IDLDPResult(
        satisfied=bool(ok),
        worst_inputs=(x, xp),
        worst_log_ratio=lval,
        allowed=aval,
        slack=(math.inf if math.isinf(aval) and aval > 0 else aval - lval),
        worst_output=(None if y < 0 else y),
        rule=name,
    )


def _worst_pair(blocks: Iterator[Block]) -> tuple[bool, tuple[float, int, int, float, float, int]]:
    """Whether every pair holds, and the tightest one: ``(margin, x, x', L, A, y)`` (``y = -1``: unknown)."""
    best = (-math.inf, 0, 1, 0.0, 0.0, -1)  # margin, x, x', L, A, y
    ok = True
    found = False
    for L, A, X, XP, Y in blocks:
        valid = L > -np.inf
        if not np.any(valid):
            continue
        with np.errstate(invalid="ignore"):
            margin = np.where(np.isposinf(A), -np.inf, L - A)
        margin = np.where(valid, margin, -np.inf)
        ok = ok and bool(np.all(within(L[valid], A[valid])))
        # the worst pair among valid ones (margin may be -inf for unconstrained pairs)
        masked = np.where(valid, margin, np.nan)
        if not np.any(~np.isnan(masked)):  # pragma: no cover - valid is non-empty here
            continue
        i, j = np.unravel_index(int(np.nanargmax(masked)), L.shape)
        if not found or margin[i, j] > best[0]:
            best = (float(margin[i, j]), int(X[i, j]), int(XP[i, j]), float(L[i, j]), float(A[i, j]), int(Y[i, j]))
            found = True
    return ok, best


def check_minidldp(ch: ChannelLike, budgets: ArrayLike, *, r: Literal["min"] = "min") -> IDLDPResult:
    """E-MinID-LDP (Gu et al., Definition 3): :func:`check_idldp` with the pair rule ``min``.

    ``r`` is accepted only as ``"min"`` (so that a guarantee may state it explicitly).
    """
    if not (isinstance(r, str) and r == "min"):
        raise ValueError(f"MinID-LDP uses the pair rule 'min', got r={describe(r)}; use 'id-ldp' for other rules")
    return check_idldp(ch, budgets, r="min")


def idldp_scale(ch: ChannelLike, budgets: ArrayLike, *, r: BuiltinPairRule = "min", method: Method = "auto") -> float:
    """Smallest ``s >= 0`` such that the channel satisfies ``(s * E)``-ID-LDP with rule ``r``.

    For the built-in rules (positively homogeneous: ``r(s e1, s e2) = s r(e1, e2)``) this is
    ``max_{x != x'} L(x, x') / r(eps_x, eps_x')``; ``inf`` if some ``L`` is unbounded.
    With ``r="min"`` the channel is E-MinID-LDP exactly when ``idldp_scale <= 1``.
    An entry ``inf`` in ``budgets`` marks an item without a budget (a non-sensitive item of
    IPRR): a pair whose rule value is ``inf`` is unconstrained, so under ``"min"`` only pairs
    of two such items are free.

    ID-LDP chapter, :prf:ref:`def-minidldp`.
    """
    ch = as_channel(ch)
    d = require_pairs(ch)
    e = check_budget_vector(budgets, d, allow_inf=True)
    if not isinstance(r, str):
        raise ArgumentTypeError(
            f"idldp_scale needs a homogeneous built-in rule 'min', 'average' or 'max', got r={describe(r)}"
        )
    if r not in PAIR_RULES:
        raise ValueError(f"idldp_scale needs a homogeneous built-in rule 'min', 'average' or 'max', got r={describe(r)}")
    best = 0.0
    for L, A, _X, _XP, _Y in _blocks(ch, e, PAIR_RULES[r], method):
        valid = (L > -np.inf) & np.isfinite(A)
        if np.any(valid):
            best = max(best, float(np.max(L[valid] / A[valid])))
    return best


def fit_to_budgets(
    ch: ChannelLike, budgets: ArrayLike, r: BuiltinPairRule = "min", tol: float = 1e-12
) -> tuple[ExplicitChannel, float]:
    """Mix a channel with the uniform one just enough to satisfy ``E``-ID-LDP with rule ``r``.

    Returns ``(channel, theta)`` with the smallest ``theta`` in ``[0, 1]`` (up to ``tol``) such
    that ``(1 - theta) P + theta U`` satisfies the budgets (:func:`idldp_scale` ``<= 1``).  The
    privacy loss of every pair is non-increasing in ``theta``
    (:func:`ldpkit.channels.mix_with_uniform`), so bisection finds it, and the result is tight:
    some pair sits at its budget unless ``theta = 0``.  The book uses it to draw random
    mechanisms that satisfy MinID-LDP exactly (ID-LDP chapter, :prf:ref:`lem-minid-ldp`).
    """
    ch = enumerate_channel(as_channel(ch), "fit_to_budgets")
    e = check_budget_vector(budgets, ch.n_inputs)
    tol = check_positive_real(tol, "tol")
    if not isinstance(r, str):
        raise ArgumentTypeError(f"fit_to_budgets needs a built-in rule 'min', 'average' or 'max', got r={describe(r)}")
    if r not in PAIR_RULES:
        raise ValueError(f"fit_to_budgets needs a built-in rule 'min', 'average' or 'max', got r={describe(r)}")
    if idldp_scale(ch, e, r=r) <= 1.0:
        return ch, 0.0
    lo, hi = 0.0, 1.0
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):  # tol below the float resolution at this theta: done
            break
        if idldp_scale(mix_with_uniform(ch, mid), e, r=r) <= 1.0:
            hi = mid
        else:
            lo = mid
    return mix_with_uniform(ch, hi), hi


def minidldp_scale(ch: ChannelLike, budgets: ArrayLike, *, r: Literal["min"] = "min") -> float:
    """Smallest ``s`` such that the channel is ``(s * E)``-MinID-LDP: :func:`idldp_scale` with the rule ``min``.

    ``r`` is accepted only as ``"min"``, as in :func:`check_minidldp`.  ID-LDP chapter,
    :prf:ref:`def-minidldp`.
    """
    if not (isinstance(r, str) and r == "min"):
        raise ValueError(f"MinID-LDP uses the pair rule 'min', got r={describe(r)}; use 'id-ldp' for other rules")
    return idldp_scale(ch, budgets, r="min")


def _idldp_parameters(d: int, params: dict[str, Any]) -> dict[str, Any]:
    """An ID-LDP promise: finite positive budgets for the ``d`` items, a known pair rule, a known method."""
    out = standard_parameters(d, params)
    if "r" in out:
        resolve_pair_rule(out["r"])
    if "method" in out and out["method"] not in ("auto", "dense", "classes"):
        raise ValueError(f"unknown method={describe(out['method'])}; expected 'auto', 'dense' or 'classes'")
    return out


def _minidldp_parameters(d: int, params: dict[str, Any]) -> dict[str, Any]:
    """A MinID-LDP promise: at least 2 items, finite positive budgets, the rule ``min`` if stated."""
    if d < 2:
        raise ValueError(f"a MinID-LDP promise needs at least 2 items, got {d}")
    out = standard_parameters(d, params)
    if "r" in out and not (isinstance(out["r"], str) and out["r"] == "min"):
        raise ValueError(f"MinID-LDP uses the pair rule 'min', got r={describe(out['r'])}; use 'id-ldp' for other rules")
    return out


def _idldp_pairwise(d: int, params: Mapping[str, Any]) -> np.ndarray:
    """E-ID-LDP with rule ``r`` is context-aware LDP with ``M[x, x'] = r(eps_x, eps_x')`` (:prf:ref:`prop-pairwise-special-cases`)."""
    from .context_aware import pairwise_budgets

    return pairwise_budgets(d, budgets=params["budgets"], r=params.get("r", "min"))


def _idldp_at_budget(d: int, epsilon: float, **facts: Any) -> dict[str, Any]:
    """ID-LDP at one budget is stated with the ``average`` rule (with ``min`` it is MinID-LDP)."""
    return {"budgets": np.full(d, float(epsilon)), "r": "average"}


IDLDP: Notion[IDLDPResult] = register_notion(
    Notion("id-ldp", check_idldp, idldp_scale, budget="budgets", optional=("r", "method"), display="ID-LDP",
           order=40, profile=False, label="def-idldp", description="ID-LDP with a pair rule (Gu et al., def-idldp)",
           validate=_idldp_parameters, at_budget=_idldp_at_budget, pairwise=_idldp_pairwise, fits_by_mixing=True)
)
MINIDLDP: Notion[IDLDPResult] = register_notion(
    Notion("minid-ldp", check_minidldp, minidldp_scale, budget="budgets", optional=("r",), display="MinID-LDP",
           order=30, label="def-minidldp", forms="id-ldp", description="MinID-LDP (Gu et al., def-minidldp)",
           validate=_minidldp_parameters, pairwise=_idldp_pairwise, fits_by_mixing=True)
)
