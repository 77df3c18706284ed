"""Context-aware LDP: one budget per ordered pair of inputs (Acharya, Bonawitz, Kairouz, Ramage, Sun, ICML 2020).

Bibtex ``acharya2020context``.  A channel is ``M``-context-aware private for a matrix of pairwise
budgets ``M`` when ``P(y|x) <= exp(M[x, x']) P(y|x')`` for every ordered pair ``x != x'`` and
every output ``y``; ``M[x, x'] = inf`` leaves the pair unconstrained and the diagonal is ignored.
Its tightest parameter is the channel's pairwise log-ratio matrix
(:func:`~ldpkit.accountant.pairwise_log_ratio`), and every pairwise notion is a special case:
eps-LDP is the constant matrix ``eps``, E-ID-LDP with pair rule ``r`` is
``M[x, x'] = r(eps_x, eps_x')`` and MinID-LDP its ``min`` case
(:func:`~ldpkit.accountant.pairwise_budgets`).
Synthesis chapter, :prf:ref:`def-context-aware` and :prf:ref:`prop-pairwise-special-cases`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_budget_vector, check_positive_int, check_positive_real, real_array
from ._core import ChannelLike, CheckResult, Notion, as_channel, register_notion, require_pairs, within
from .idldp import PairRule, apply_pair_rule, resolve_pair_rule
from .ldp import pairwise_log_ratio

__all__ = [
    "CONTEXT_AWARE",
    "ContextAwareResult",
    "check_budget_matrix",
    "check_context_aware",
    "context_aware_scale",
    "pairwise_budgets",
]


@dataclass(frozen=True, kw_only=True)
class ContextAwareResult(CheckResult):
    """Outcome of :func:`check_context_aware`.

    Attributes
    ----------
    worst_log_ratio
        ``L[x, x']`` at the tightest pair (the one maximising ``L - M``).
    allowed
        ``M[x, x']`` at that pair.
    scale
        ``max L / M`` over the constrained pairs (see :func:`context_aware_scale`).

    Examples
    --------
    >>> from ldpkit import GRR, accountant
    >>> M = accountant.pairwise_budgets(3, budgets=[0.5, 2.0, 2.0], r="min")
    >>> res = accountant.check_context_aware(GRR(3, 1.0), M)
    >>> res.satisfied, res.worst_pair, round(res.slack, 6)
    (False, (0, 1), -0.5)
    """

    notion = "context-aware"

    worst_log_ratio: float
    allowed: float
    scale: float

    @property
    def worst_pair(self) -> tuple[int, ...]:
        """The ordered pair ``(x, x')`` with the smallest ``M[x, x'] - L[x, x']``."""
        return self.worst_inputs


def check_budget_matrix(matrix: ArrayLike, d: int, name: str = "matrix") -> np.ndarray:
    """A ``d x d`` matrix of pairwise budgets: off-diagonal entries positive or ``inf``; the diagonal is set to 0.

    Examples
    --------
    >>> from ldpkit.accountant import check_budget_matrix
    >>> check_budget_matrix([[0, 1.0], [2.0, 0]], 2).tolist()
    [[0.0, 1.0], [2.0, 0.0]]
    """
    d = check_positive_int(d, "d")
    arr = real_array(matrix, name)
    if arr.shape != (d, d):
        raise ValueError(f"{name} must be a {d} x {d} matrix of pairwise budgets, got shape {arr.shape}")
    off = ~np.eye(d, dtype=bool)
    bad = off & ~((arr > 0) & ~np.isnan(arr))
    if np.any(bad):
        x, xp = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} must hold positive budgets or inf off the diagonal, got {arr[x, xp]!r} at pair ({x}, {xp})")
    out = arr.copy()
    np.fill_diagonal(out, 0.0)
    return out


def pairwise_budgets(
    d: int, *, epsilon: Optional[float] = None, budgets: Optional[ArrayLike] = None, r: PairRule = "min"
) -> np.ndarray:
    """The context-aware matrix of eps-LDP (``epsilon``) or of E-ID-LDP with pair rule ``r`` (``budgets``).

    ``M[x, x'] = eps`` for LDP; ``M[x, x'] = r(eps_x, eps_x')`` for ID-LDP (``r="min"``: MinID-LDP).
    A budget ``inf`` (an item without a budget) is allowed; the diagonal is 0.
    Synthesis chapter, :prf:ref:`prop-pairwise-special-cases`.

    Examples
    --------
    >>> from ldpkit.accountant import pairwise_budgets
    >>> pairwise_budgets(3, budgets=[1.0, 2.0, 4.0], r="average").tolist()
    [[0.0, 1.5, 2.5], [1.5, 0.0, 3.0], [2.5, 3.0, 0.0]]
    >>> pairwise_budgets(2, epsilon=0.5).tolist()
    [[0.0, 0.5], [0.5, 0.0]]
    """
    d = check_positive_int(d, "d")
    if (epsilon is None) == (budgets is None):
        raise ValueError("pairwise_budgets needs exactly one of epsilon (LDP) or budgets (ID-LDP)")
    if epsilon is not None:
        out = np.full((d, d), check_positive_real(epsilon, "epsilon"))
    else:
        e = check_budget_vector(budgets, d, allow_inf=True)
        _, rule = resolve_pair_rule(r)
        out = np.array(apply_pair_rule(rule, e[:, None], e[None, :]), dtype=float)
    np.fill_diagonal(out, 0.0)
    return out


def _pairs(ch: ChannelLike, matrix: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(L, M, mask)``: the channel's pairwise log-ratios, the validated budgets, the off-diagonal pairs."""
    channel = as_channel(ch)
    d = require_pairs(channel)
    M = check_budget_matrix(matrix, d)
    L = pairwise_log_ratio(channel)
    return L, M, ~np.eye(d, dtype=bool)


def context_aware_scale(ch: ChannelLike, matrix: ArrayLike) -> float:
    """Smallest ``s >= 0`` such that the channel is ``(s M)``-context-aware private: ``max L / M`` over constrained pairs.

    ``inf`` when some constrained pair has an unbounded log-ratio.  The channel satisfies ``M``
    exactly when the scale is at most 1.  Synthesis chapter, :prf:ref:`def-context-aware`.

    Examples
    --------
    >>> from ldpkit import GRR, accountant
    >>> M = accountant.pairwise_budgets(3, budgets=[0.5, 2.0, 2.0], r="min")
    >>> round(accountant.context_aware_scale(GRR(3, 1.0), M), 6)
    2.0
    """
    L, M, off = _pairs(ch, matrix)
    constrained = off & np.isfinite(M)
    if not np.any(constrained):
        return 0.0
    return float(max(0.0, np.max(L[constrained] / M[constrained])))


def check_context_aware(ch: ChannelLike, matrix: ArrayLike) -> ContextAwareResult:
    """Check ``M``-context-aware privacy: ``L[x, x'] <= M[x, x']`` for every ordered pair (relative tolerance).

    Synthesis chapter, :prf:ref:`def-context-aware`.
    """
    L, M, off = _pairs(ch, matrix)
    constrained = off & np.isfinite(M)
    if not np.any(constrained):
        return ContextAwareResult(satisfied=True, slack=math.inf, worst_inputs=(0, 1), worst_output=None,
                                  worst_log_ratio=float(L[0, 1]), allowed=math.inf, scale=0.0)
    with np.errstate(invalid="ignore"):
        margin = np.where(constrained, M - L, np.inf)
    x, xp = (int(i) for i in np.unravel_index(int(np.argmin(margin)), margin.shape))
    ok = bool(np.all(within(L[constrained], M[constrained])))
    return ContextAwareResult(
        satisfied=ok,
        slack=float(M[x, xp] - L[x, xp]),
        worst_inputs=(x, xp),
        worst_output=None,
        worst_log_ratio=float(L[x, xp]),
        allowed=float(M[x, xp]),
        scale=float(max(0.0, np.max(L[constrained] / M[constrained]))),
    )


def _context_aware_pairwise(d: int, params: Mapping[str, Any]) -> np.ndarray:
    return check_budget_matrix(params["matrix"], d).copy()


CONTEXT_AWARE: Notion[ContextAwareResult] = register_notion(
    Notion("context-aware", check_context_aware, context_aware_scale, budget="matrix", display="CA-LDP", order=20,
           label="def-context-aware", forms="pairwise",
           description="context-aware LDP, one budget per ordered pair (Acharya et al., def-context-aware)",
           pairwise=_context_aware_pairwise, fits_by_mixing=True)
)
