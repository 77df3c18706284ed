"""Clopper-Pearson bounds on event probabilities and the typed results of an audit.

Auditing chapter, :ref:`sec-audit-bounds`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union, cast

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_real, describe, real_array

__all__ = ["AuditBound", "ItemAudit", "PairwiseAudit", "cp_lower", "cp_upper", "log_ratio", "violates"]


def _successes(k: ArrayLike, n: ArrayLike, miss: float) -> tuple[np.ndarray, np.ndarray, float]:
    """``k`` successes out of ``n`` trials (broadcast, as floats) and ``miss``, checked before any work.

    ``k`` and ``n`` hold whole numbers (integer-valued floats too) with ``n >= 1`` and
    ``0 <= k <= n``; ``miss`` is a probability in ``(0, 1)``.
    """
    m = check_real(miss, "miss", 0.0, 1.0, low_open=True, high_open=True)
    ka, na = real_array(k, "k"), real_array(n, "n")
    try:
        kb, nb = np.broadcast_arrays(ka, na)
    except ValueError:
        raise ValueError(f"k and n must broadcast to one shape, got {ka.shape} and {na.shape}") from None
    for name, arr in (("k", kb), ("n", nb)):
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if np.any(bad):
            raise ValueError(f"{name} must hold whole numbers of trials, got {describe(arr[bad].flat[0])}")
    if np.any(nb < 1):
        raise ValueError(f"n must be at least 1 trial, got {describe(nb[nb < 1].flat[0])}")
    out = (kb < 0) | (kb > nb)
    if np.any(out):
        raise ValueError(f"k must lie in [0, n]: got k={describe(kb[out].flat[0])} with n={describe(nb[out].flat[0])}")
    return kb, nb, m


def cp_lower(k: ArrayLike, n: ArrayLike, miss: float) -> np.ndarray:
    """One-sided Clopper-Pearson lower bound: ``P(p < bound) <= miss`` for ``k`` successes out of ``n``.

    ``Beta(miss; k, n - k + 1)`` quantile, 0 when ``k = 0``.  ``k`` and ``n`` are whole numbers
    (broadcast together) with ``n >= 1`` and ``0 <= k <= n``, and ``miss`` lies in ``(0, 1)``;
    anything else is refused (``ValueError``) before any work.

    Examples
    --------
    >>> from ldpkit.audit import cp_lower
    >>> [round(float(v), 4) for v in cp_lower([0, 50, 100], 100, 0.025)]
    [0.0, 0.3983, 0.9638]
    >>> cp_lower(101, 100, 0.025)
    Traceback (most recent call last):
    ...
    ValueError: k must lie in [0, n]: got k=101.0 with n=100.0
    """
    return _lower_checked(*_successes(k, n, miss))


def _beta_quantile(q: float, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``scipy.stats.beta.ppf(q, a, b)`` for valid arguments, without its per-call argument handling.

    SciPy's beta distribution computes its quantile with the ufunc ``scipy.special._ufuncs._beta_ppf``
    (and, for valid arguments, returns exactly its value); where a SciPy lacks that ufunc, the
    public ``stats.beta.ppf`` is called instead, so the values are the distribution's either way.
    """
    try:
        from scipy.special._ufuncs import _beta_ppf
    except ImportError:  # another SciPy: the public, slower path
        from scipy import stats

        return cast("np.ndarray", stats.beta.ppf(q, a, b))
    return cast("np.ndarray", _beta_ppf(q, a, b))


def _lower_checked(k: np.ndarray, n: np.ndarray, miss: float) -> np.ndarray:
    """:func:`cp_lower` on arguments already checked: float arrays of one shape, ``0 <= k <= n``, ``n >= 1``."""
    out = np.zeros(k.shape)
    pos = k > 0
    out[pos] = _beta_quantile(miss, k[pos], n[pos] - k[pos] + 1)
    return out


def cp_bounds_of_counts(kx: np.ndarray, kxp: np.ndarray, n: int, miss: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cp_lower` of ``kx`` and :func:`cp_upper` of ``kxp`` out of ``n``, for counts the caller has checked.

    The audits' inner loop: ``kx`` and ``kxp`` are non-negative integer counts of one shape, at
    most ``n``, taken from histograms of ``n`` samples, so the checks of the public functions
    (which would dominate its time) are skipped; the values are theirs exactly.
    """
    k1, k2 = np.asarray(kx, dtype=float), np.asarray(kxp, dtype=float)
    n1, n2 = np.full(k1.shape, float(n)), np.full(k2.shape, float(n))
    return _lower_checked(k1, n1, miss), 1.0 - _lower_checked(n2 - k2, n2, miss)


def cp_upper(k: ArrayLike, n: ArrayLike, miss: float) -> np.ndarray:
    """One-sided Clopper-Pearson upper bound: ``P(p > bound) <= miss``.

    ``Beta(1 - miss; k + 1, n - k)`` quantile, 1 when ``k = n``.  The same checks as :func:`cp_lower`.

    Examples
    --------
    >>> from ldpkit.audit import cp_upper
    >>> [round(float(v), 4) for v in cp_upper([0, 50, 100], 100, 0.025)]
    [0.0362, 0.6017, 1.0]
    """
    k, n, miss = _successes(k, n, miss)
    # the upper bound on p is one minus the lower bound on 1 - p, from the n - k failures
    return 1.0 - _lower_checked(n - k, n, miss)


def log_ratio(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``log(lo) - log(hi)`` elementwise, ``-inf`` where ``lo`` is 0 (a bound on a log-ratio from two probability bounds)."""
    with np.errstate(divide="ignore"):
        return cast("np.ndarray", np.log(lo) - np.log(hi))


# ============================================================================ results
@dataclass(frozen=True)
class AuditBound:
    """A lower bound on one notion's parameter, holding with probability at least ``confidence``.

    Attributes
    ----------
    notion
        ``"ldp"``, ``"pairwise"``, ``"ipldp"`` or ``"lip"``.
    value
        The lower bound (log scale, clipped at 0).
    confidence
        ``1 - alpha``, family-wise over every interval the audit computed.
    pair
        The inputs that attain it: ``(x, x')`` for a ratio ``P(S|x) / P(S|x')``, ``(x,)`` for LIP.
    event
        The output indices forming the event ``S``.
    n_samples
        Samples drawn per input (both halves, for black-box events).
    method
        How the events were chosen and how many one-sided intervals the correction counts.
    n_intervals
        The number ``K`` of one-sided intervals, each at miss rate ``alpha / K``.
    """

    notion: str
    value: float
    confidence: float
    pair: tuple[int, ...]
    event: tuple[int, ...]
    n_samples: int
    method: str
    n_intervals: int = 2


@dataclass(frozen=True)
class PairwiseAudit:
    """Lower bounds on the pairwise log-ratios ``L[x, x'] = max_S log P(S|x)/P(S|x')``, all holding jointly.

    ``values`` is ``d x d``: the bound of each ordered pair examined, 0 on the diagonal, ``nan``
    for pairs not examined; ``bounds`` lists the :class:`AuditBound` of every pair examined.
    """

    values: np.ndarray
    bounds: tuple[AuditBound, ...]
    confidence: float
    n_samples: int
    method: str

    @property
    def best(self) -> AuditBound:
        """The largest pairwise bound, a lower bound on the LDP epsilon at the same confidence."""
        return max(self.bounds, key=lambda b: b.value)


@dataclass(frozen=True)
class ItemAudit:
    """Lower bounds on IPLDP's per-output levels ``L_j = max_{x, x'} log Q(j|x)/Q(j|x')``, all holding jointly.

    ``values`` has one entry per item (``nan`` for outputs not audited: non-sensitive ones).
    ``structural`` lists the witnesses against IPLDP's structural condition (a non-sensitive
    output ``j`` must reveal its input): ``(x, j, count)`` for every input ``x != j`` whose
    samples included output ``j``, ``count`` times.  One such sample is proof, not a statistical
    bound: the channel then has ``Q(j|x) > 0``.  (The other half of the condition, ``Q(j|j) > 0``,
    cannot be refuted by finitely many samples and is not audited.)
    """

    values: np.ndarray
    bounds: tuple[AuditBound, ...]
    confidence: float
    n_samples: int
    method: str
    structural: tuple[tuple[int, int, int], ...] = ()

    @property
    def structural_violated(self) -> bool:
        """Whether some sample showed a non-sensitive output coming from another input (a certain violation)."""
        return bool(self.structural)


def violates(bounds: Union[PairwiseAudit, ItemAudit, ArrayLike], budgets: ArrayLike) -> np.ndarray:
    """Where a lower bound exceeds its budget (elementwise; ``nan`` bounds never violate).

    With a :class:`PairwiseAudit` and a budget matrix (:func:`ldpkit.accountant.pairwise_budgets`)
    this checks LDP, ID-LDP, MinID-LDP or context-aware LDP pair by pair; with an
    :class:`ItemAudit` and per-item budgets it checks IPLDP's condition on sensitive outputs.
    A ``True`` entry is a violation at the audit's confidence.

    Examples
    --------
    >>> from ldpkit.audit import violates
    >>> violates([[0.0, 1.2], [0.4, 0.0]], [[0.0, 1.0], [1.0, 0.0]]).tolist()
    [[False, True], [False, False]]
    """
    vals = np.asarray(bounds.values if isinstance(bounds, (PairwiseAudit, ItemAudit)) else bounds, dtype=float)
    budget = np.asarray(budgets, dtype=float)
    if vals.shape != budget.shape:
        raise ValueError(f"budgets has shape {budget.shape}, the bounds have shape {vals.shape}")
    with np.errstate(invalid="ignore"):
        return np.asarray(np.nan_to_num(vals, nan=-np.inf) > budget)


