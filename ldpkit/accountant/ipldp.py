"""IPLDP: item-oriented personalised LDP (Li, Zhu, Zhang, Xie, Definition 3).

Bibtex ``li2023ipldp`` and ``li2023ipldppreprint``; IPLDP chapter, :prf:ref:`def-ipldp`, which
settles the reading of the garbled condition (4) implemented here.  The channel is square
(output ``j`` means "reported item ``j``"); sensitive outputs carry a ratio bound, non-sensitive
outputs must reveal their own input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_budget_vector, check_items, real_array
from ..channels import Channel, ExplicitChannel
from ._core import ChannelLike, CheckResult, ClosedForms, Notion
from ._core import as_channel, closed_forms, register_notion, require_pairs, within

__all__ = ["IPLDP", "IPLDPResult", "check_ipldp", "ipldp_scale", "sensitive_indices"]

_IPLDP: ClosedForms["IPLDPResult"] = closed_forms("ipldp", "IPLDP")


@dataclass(frozen=True, kw_only=True)
class IPLDPResult(CheckResult):
    """Outcome of an IPLDP check (Li et al., Definition 3).

    Attributes
    ----------
    satisfied
        Both conditions of the definition hold (condition 1 up to :data:`REL_TOL`).
    worst_output
        The sensitive output ``x_i`` with the largest ``L_i - eps_i``, where
        ``L_i = max_{x, x'} log Q(x_i|x) / Q(x_i|x')``.
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
    scale
        ``max_i L_i / eps_i`` over the sensitive outputs: the smallest factor of the budgets
        that condition 1 allows (see :func:`ipldp_scale`).

    Examples
    --------
    >>> from ldpkit import GRR, URR, accountant
    >>> accountant.check_ipldp(URR(4, 1.0, sensitive=[0, 1]), [1.0, 1.0], sensitive=[0, 1]).satisfied
    True
    >>> res = accountant.check_ipldp(GRR(4, 1.0), [1.0, 1.0], sensitive=[0, 1])
    >>> res.satisfied, res.n_structural_violations     # GRR's non-sensitive outputs hide the input
    (False, 6)
    """

    notion = "ipldp"

    worst_log_ratio: float
    allowed: float
    structural_violations: tuple[tuple[int, int], ...]
    n_structural_violations: int
    scale: float = 0.0

    @property
    def worst_pair(self) -> tuple[int, ...]:
        """The inputs ``(x, x')`` attaining ``L_i`` at :attr:`worst_output`."""
        return self.worst_inputs


def sensitive_indices(sensitive: ArrayLike, d: int) -> np.ndarray:
    """Sorted-as-given indices of the sensitive items from a boolean mask or an index list."""
    arr = np.asarray(sensitive)
    if arr.dtype == bool:
        if arr.ndim != 1 or arr.size != d:
            raise ValueError(f"sensitive mask has shape {arr.shape}, expected ({d},)")
        idx = np.flatnonzero(arr)
        if idx.size == 0:
            raise ValueError("sensitive mask selects no item: IPLDP needs at least one sensitive item")
        return idx
    if arr.ndim == 1 and arr.size == 0:
        raise ValueError("sensitive is empty: at least one sensitive item is needed")
    idx = check_items(arr, d, "sensitive", strict=True)
    uniq, counts = np.unique(idx, return_counts=True)
    if np.any(counts > 1):
        raise ValueError(f"sensitive lists item {int(uniq[counts > 1][0])} more than once")
    return idx


def check_ipldp(ch: ChannelLike, budgets: ArrayLike, *, sensitive: ArrayLike) -> IPLDPResult:
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
        of non-sensitive items are then ignored; they must be positive, ``inf`` marking an
        item without a budget as in :class:`~ldpkit.iprr.IPRR`).
    sensitive
        Boolean mask of length ``d`` or a sequence of distinct sensitive item indices.

    Notes
    -----
    IPLDP chapter, :prf:ref:`def-ipldp`.  Cost ``O(d^2)`` (column-wise max/min).
    """
    channel, sens, eps = _arguments(ch, budgets, sensitive)
    return _IPLDP.compute(channel, sens, eps)


def _arguments(obj: ChannelLike, budgets: ArrayLike, sensitive: ArrayLike) -> tuple[Channel, np.ndarray, np.ndarray]:
    """The channel (square), the sensitive indices and their finite budgets, validated."""
    ch = as_channel(obj)
    d = require_pairs(ch)
    if ch.n_outputs != d:
        raise ValueError(
            f"IPLDP needs the output domain to equal the input domain: a square channel "
            f"(inputs, outputs) = ({d}, {ch.n_outputs}) is needed, got a {type(ch).__name__} of kind {ch.kind!r}"
        )
    sens = sensitive_indices(sensitive, d)
    arr = real_array(budgets, "budgets")
    if arr.ndim == 1 and arr.size == d:
        eps_all = check_budget_vector(arr, d, allow_inf=True)
        eps = check_budget_vector(eps_all[sens], sens.size, "budgets of the sensitive items")
    elif arr.ndim == 1 and arr.size == sens.size:
        eps = check_budget_vector(arr, sens.size)
    else:
        raise ValueError(
            f"budgets has length {arr.size if arr.ndim == 1 else arr.shape}, expected {sens.size} "
            f"(one per sensitive item) or the domain size {d}"
        )
    return ch, sens, eps


def ipldp_scale(ch: ChannelLike, budgets: ArrayLike, *, sensitive: ArrayLike) -> float:
    """Smallest ``s`` such that the channel is ``(D_S, s E)``-IPLDP; ``inf`` when condition 2 fails.

    Condition 1 is homogeneous in the budgets, so ``s = max_i L_i / eps_i`` over the sensitive
    outputs (``L_i`` as in :func:`check_ipldp`); condition 2 does not involve the budgets, and
    when it fails no scale helps.  The channel is ``(D_S, E)``-IPLDP exactly when ``s <= 1``.

    IPLDP chapter, :prf:ref:`def-ipldp`.

    Examples
    --------
    >>> from ldpkit import IPRR, accountant
    >>> round(accountant.ipldp_scale(IPRR([0.5, 1.0, 2.0]), [0.5, 1.0, 2.0], sensitive=[0, 1, 2]), 9)
    1.0
    """
    res = check_ipldp(ch, budgets, sensitive=sensitive)
    if res.n_structural_violations:
        return float("inf")
    return float(res.scale)


@_IPLDP.register(ExplicitChannel)
def _ipldp_explicit(ch: ExplicitChannel, sens: np.ndarray, eps: np.ndarray) -> IPLDPResult:
    m = ch.matrix
    d = m.shape[0]
    # condition 1, column by column: max over (x, x') = log max_x Q - log min_x Q
    cols = m[:, sens]
    hi = cols.max(axis=0)
    lo = cols.min(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        L = np.where(hi > 0, np.log(hi) - np.log(lo), 0.0)  # lo = 0 < hi gives +inf
    margin = L - eps
    k = int(np.argmax(margin))
    ok1 = bool(np.all(within(L, eps)))
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
        worst_inputs=(x_hi, x_lo),
        worst_log_ratio=float(L[k]),
        allowed=float(eps[k]),
        slack=float(eps[k] - L[k]),
        structural_violations=cells,
        n_structural_violations=n_bad,
        scale=float(np.max(L / eps)) if L.size else 0.0,
    )


def _ipldp_parameters(d: int, params: dict[str, Any]) -> dict[str, Any]:
    """An IPLDP promise on ``d`` items.

    ``budgets`` of length ``d``, ``inf`` marking a non-sensitive item (the sensitive items are
    then those with a finite budget when ``sensitive`` is not stated), or one finite budget per
    item of ``sensitive`` in its order.
    """
    out = dict(params)
    if "sensitive" in out:
        out["sensitive"] = sensitive_indices(out["sensitive"], d)
    if "budgets" in out:
        arr = real_array(out["budgets"], "budgets")
        sens = out.get("sensitive")
        if sens is not None and arr.ndim == 1 and arr.size == sens.size != d:
            out["budgets"] = check_budget_vector(arr, sens.size)
        else:
            e = check_budget_vector(arr, d, allow_inf=True)
            if sens is None:
                sens = np.flatnonzero(np.isfinite(e))
                if sens.size == 0:
                    raise ValueError("an IPLDP promise needs at least one sensitive item (a finite budget)")
                out["sensitive"] = sens
            check_budget_vector(e[sens], sens.size, "budgets of the sensitive items")
            out["budgets"] = e
    return out


def _ipldp_at_budget(d: int, epsilon: float, *, sensitive: Any = None, **facts: Any) -> dict[str, Any] | None:
    """IPLDP at one budget: ``epsilon`` on the sensitive items, ``inf`` (no budget) on the others."""
    if sensitive is None:
        return None
    budgets = np.full(d, np.inf)
    budgets[list(sensitive)] = float(epsilon)
    return {"budgets": budgets, "sensitive": list(sensitive)}


IPLDP: Notion[IPLDPResult] = register_notion(
    Notion("ipldp", check_ipldp, ipldp_scale, budget="budgets", context=("sensitive",), display="IPLDP", order=50,
           label="def-ipldp", applies=lambda ch: ch.n_outputs == ch.n_inputs,
           description="item-oriented personalised LDP (Li et al., def-ipldp)",
           validate=_ipldp_parameters, at_budget=_ipldp_at_budget)
)
