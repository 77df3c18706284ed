"""Accuracy metrics used in the experiments of the four papers, each with its normalisation.

The papers use the same names for different quantities, so every function here states its
formula, its scale (counts or frequencies) and which paper and figure uses it.  Definitions and
the reconciliation between papers: Estimation chapter, :ref:`sec-metrics` (each docstring names
the definition of its metric).

Summary (``c`` true counts, ``c_hat`` estimated counts, ``n`` users, ``f = c / n``):

* ``mse(normalisation="per_user")``: ``sum_i (c_hat_i - c_i)^2 / n`` -- ID-LDP Sec. VII
  preamble, "Evaluation Metrics" (Figs. 2, 3, 5); IPLDP Sec. 7.1 eq. (25) (Figs. 2-4).
* ``mse(normalisation="sum")``: ``sum_i (c_hat_i - c_i)^2`` -- its expectation is ID-LDP's
  theoretical total MSE ``sum_i Var[c_hat_i]`` (Sec. III-A; eq. (7) in Sec. V-C; Table I).
* ``l2_loss`` / ``l1_loss``: ``sum_x (p_hat_x - p_x)^2`` and ``sum_x |p_hat_x - p_x|`` on
  frequencies -- IPLDP Sec. 3.4 and Theorems 3-6 (theory).
* ``relative_error_topk(aggregate="mean")``: ``(1/k) sum_{i in T(k)} |c_hat_i - c_i| / c_i``
  -- ID-LDP Sec. VII preamble (Figs. 3-8).
* ``relative_error_topk(aggregate="median")``: median of the same ratios -- FLDP eq. (15),
  Fig. 4 (reconstructed: the formula was lost).
* ``relative_error_sum``: ``sum_x |f_x - f_hat_x| / f_x`` over *all* items -- IPLDP eq. (25)
  (Figs. 2-4).
* ``topk_precision``: ``|T_hat(k) & T(k)| / k`` -- ID-LDP Sec. VII-B (Fig. 6).
* ``squared_error_topk``: ``(1/k) sum_{i in T(k)} (f_hat_i - f_i)^2`` -- FLDP eq. (16),
  Fig. 3 (reconstructed).
* ``topk_kl_divergence``: ``KL(true || estimate)`` on the true top-k, renormalised -- FLDP
  eqs. (13)-(14), Fig. 2 (reconstructed).
* ``ncr``: rank-weighted recall of the true top-k -- FLDP Sec. 6.1 d) (Fig. 5).
* ``root_average_mse``: ``sqrt(E / N)`` -- LIP Sec. V (Figs. 5-8).

Top-k sets and ranks use one deterministic tie-break everywhere: order by value, largest
first, and among equal values the smaller item index first (:func:`top_k_items`).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Literal, cast

import numpy as np
from numpy.typing import ArrayLike

from ._validation import ArgumentTypeError, check_distribution, check_positive_real, check_real, describe, real_array

__all__ = [
    "top_k_items",
    "mse",
    "l1_loss",
    "l2_loss",
    "relative_error_topk",
    "relative_error_sum",
    "topk_precision",
    "squared_error_topk",
    "kl_divergence",
    "topk_kl_divergence",
    "ncr",
    "root_average_mse",
]


# --------------------------------------------------------------------------- validation
def _check_vector(values: ArrayLike, name: str, nonnegative: bool = False) -> np.ndarray:
    raw = np.asarray(values)
    if raw.dtype != object and (
        raw.dtype == bool or not (np.issubdtype(raw.dtype, np.integer) or np.issubdtype(raw.dtype, np.floating))
    ):
        raise ArgumentTypeError(f"{name} must be a numeric vector, got dtype {raw.dtype}")
    # object arrays of real numbers are accepted; integers beyond 2**53 would be rounded: refused
    arr = real_array(raw, name, exact=True)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d vector, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    bad = ~np.isfinite(arr)
    if np.any(bad):
        raise ValueError(f"{name} must be finite, got {arr[bad][0].item()!r} at item {int(np.flatnonzero(bad)[0])}")
    if nonnegative and np.any(arr < 0):
        i = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"{name} must be non-negative, got {arr[i].item()!r} at item {i}")
    return arr


def _check_pair(
    true: ArrayLike, est: ArrayLike, true_name: str = "true", est_name: str = "est"
) -> tuple[np.ndarray, np.ndarray]:
    """Validate a (truth, estimate) pair: 1-d, same length, non-empty, finite, truth >= 0."""
    t = _check_vector(true, true_name, nonnegative=True)
    e = _check_vector(est, est_name)
    if t.size != e.size:
        raise ValueError(f"{true_name} has length {t.size} but {est_name} has length {e.size}")
    return t, e


def _check_k(k: Any, d: int) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ArgumentTypeError(f"k must be an integer in 1..{d}, got {describe(k)}")
    if not 1 <= int(k) <= d:
        raise ValueError(f"k must be an integer in 1..{d}, got {describe(k)}")
    return int(k)


def _check_choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be one of {choices}, got {describe(value)}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {describe(value)}")
    return value


# --------------------------------------------------------------------------- overflow-free sums
# Inputs are finite, but a difference, a square or a sum of them can exceed the double range
# (about 1.8e308) although the metric itself is representable.  Each helper first computes the
# plain formula (so results on ordinary inputs are unchanged); only when that overflowed does it
# rescale by the largest magnitude, and a metric that truly exceeds the range is a ValueError.
def _finite(value: float, what: str) -> float:
    if not math.isfinite(value):
        raise ValueError(f"{what} exceeds the double-precision range (about 1.8e308) for these inputs")
    return value


def _safe_sum(values: np.ndarray, what: str, divisor: float = 1.0) -> float:
    """``sum(values) / divisor`` without spurious overflow (``values`` finite)."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = float(np.sum(values)) / divisor
    if math.isfinite(out):
        return out
    scale = float(np.max(np.abs(values)))
    with np.errstate(over="ignore", invalid="ignore"):
        return _finite(float(np.sum(values / scale)) * (scale / divisor), what)


def _safe_sum_squares(t: np.ndarray, e: np.ndarray, what: str, divisor: float = 1.0) -> float:
    """``sum((e - t)**2) / divisor`` without spurious overflow (``t`` and ``e`` finite)."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = float(np.sum((e - t) ** 2)) / divisor
    if math.isfinite(out):
        return out
    half = e / 2 - t / 2  # the difference itself may overflow; its half cannot
    scale = float(np.max(np.abs(half)))
    with np.errstate(over="ignore", invalid="ignore"):
        return _finite(float(np.sum((half / scale) ** 2)) * 4.0 * scale * (scale / divisor), what)


# --------------------------------------------------------------------------- ranking
def top_k_items(values: ArrayLike, k: int) -> np.ndarray:
    """Indices of the ``k`` largest entries of ``values``, in rank order.

    Ties are broken deterministically by item index: among equal values the smaller index
    ranks higher.  Every top-k metric in this module uses this rule, for the true and the
    estimated ranking alike (Estimation chapter, :prf:ref:`def-topk-ties`).

    Parameters
    ----------
    values
        1-d finite vector (counts, frequencies or estimates; negative values allowed).
    k
        Integer in ``1..len(values)``.
    """
    v = _check_vector(values, "values")
    k = _check_k(k, v.size)
    return np.argsort(-v, kind="stable")[:k]


def _ranked(values: np.ndarray, k: int) -> np.ndarray:
    return np.argsort(-values, kind="stable")[:k]


# --------------------------------------------------------------------------- squared errors
def mse(
    true_counts: ArrayLike,
    est_counts: ArrayLike,
    *,
    normalisation: Literal["per_user", "sum", "mean"] = "per_user",
    n: float | None = None,
) -> float:
    """Total squared error of one estimate of the count vector, in a stated normalisation.

    ``normalisation``:

    ``"per_user"`` (default)
        ``sum_i (c_hat_i - c_i)^2 / n``: the squared count error summed over *all* items and
        divided by the number of users.  Equals ``n * l2_loss(f, f_hat)`` for single-item data.
        ID-LDP (Gu et al., ``gu2020idldp``) Sec. VII (preamble, "Evaluation Metrics"), plotted in
        Figs. 2, 3 and 5 (one run; ID-LDP averages 10 repeats).  IPLDP (Li et al.,
        ``li2023ipldp``) Sec. 7.1 "Metrics", eq. (25), Figs. 2-4 (:math:`f_x` there is the true
        *count*; averaged over 100 repeats).
    ``"sum"``
        ``sum_i (c_hat_i - c_i)^2``: its expectation is the "total MSE" ``sum_i Var[c_hat_i]``
        of ID-LDP's theory (Sec. III-A; eq. (7) in Sec. V-C; Table I), i.e. :meth:`ldpkit.base.FrequencyOracle.mse`.
    ``"mean"``
        ``sum_i (c_hat_i - c_i)^2 / d``, the per-item average (not used by the four papers;
        offered because "MSE" is often read this way).

    Averaging over repeated runs is left to the caller.  Estimation chapter,
    :prf:ref:`def-metric-mse`.

    Parameters
    ----------
    true_counts, est_counts
        True and estimated counts, same length.
    normalisation
        See above.
    n
        Number of users for ``"per_user"``; defaults to ``sum(true_counts)``, which is right
        for single-item data only (pass it for set-valued data such as IDUE-PS, where the
        counts sum to more than ``n``).
    """
    t, e = _check_pair(true_counts, est_counts, "true_counts", "est_counts")
    norm = _check_choice(normalisation, "normalisation", ("per_user", "sum", "mean"))
    if norm == "sum":
        return _safe_sum_squares(t, e, "mse")
    if norm == "mean":
        return _safe_sum_squares(t, e, "mse", t.size)
    if n is None:
        with np.errstate(over="ignore"):
            users = float(t.sum())
        if users <= 0:
            raise ValueError(f"true_counts sum to {users!r}; pass n explicitly for normalisation='per_user'")
        if not math.isfinite(users):  # the counts sum beyond the double range: divide in two steps
            top = float(t.max())
            return _safe_sum_squares(t, e, "mse", top) / float(np.sum(t / top))
    else:
        users = check_positive_real(n, "n")
    return _safe_sum_squares(t, e, "mse", users)


def l2_loss(p: ArrayLike, p_hat: ArrayLike) -> float:
    """``l2(p, p_hat) = sum_x (p_hat_x - p_x)^2`` on the frequency (probability) scale.

    The squared Euclidean distance, *not* its square root.  IPLDP (``li2023ipldp``) Sec. 3.4
    (definition), Theorems 3-6 (expected loss of the empirical estimator).  Estimation
    chapter, :prf:ref:`def-metric-lp`.
    """
    t, e = _check_pair(p, p_hat, "p", "p_hat")
    return _safe_sum_squares(t, e, "l2_loss")


def l1_loss(p: ArrayLike, p_hat: ArrayLike) -> float:
    """``l1(p, p_hat) = sum_x |p_hat_x - p_x|`` on the frequency scale (twice the total variation
    distance when both are distributions).  IPLDP (``li2023ipldp``) Sec. 3.4, Theorems 3-6.
    Estimation chapter, :prf:ref:`def-metric-lp`.
    """
    t, e = _check_pair(p, p_hat, "p", "p_hat")
    with np.errstate(over="ignore", invalid="ignore"):
        diff = np.abs(e - t)
    if not np.all(np.isfinite(diff)):  # |e - t| beyond the range: so is their sum
        raise ValueError("l1_loss exceeds the double-precision range (about 1.8e308) for these inputs")
    return _safe_sum(diff, "l1_loss")


def squared_error_topk(
    true: ArrayLike,
    est: ArrayLike,
    k: int,
    *,
    reduction: Literal["mean", "sum"] = "mean",
    candidates: Literal["true", "estimated"] = "true",
) -> float:
    """Squared error restricted to top-k items: ``(1/k) sum_{i in T} (f_hat_i - f_i)^2``.

    FLDP (Zhao et al., ``zhao2022fldp``) Sec. 6.1 c), eq. (16), Fig. 3 (top 20/50/100, on
    frequencies).  The formula was lost from the FLDP text; it cites Wang et al.
    ``wang2018locally``, whose squared-error metric averages over the evaluated items, so the
    default is the mean over the true top-k (``reduction="sum"`` drops the ``1/k``).
    Pass frequencies to match FLDP (the metric scales quadratically).  Estimation chapter,
    :prf:ref:`def-metric-se`.

    Parameters
    ----------
    true, est
        True and estimated values (same scale).
    k
        Number of items evaluated, ``1..d``.
    reduction
        ``"mean"`` (default) or ``"sum"`` over the ``k`` items.
    candidates
        ``"true"``: the true top-k ``T(k)``; ``"estimated"``: the estimated top-k.
    """
    t, e = _check_pair(true, est)
    k = _check_k(k, t.size)
    red = _check_choice(reduction, "reduction", ("mean", "sum"))
    cand = _check_choice(candidates, "candidates", ("true", "estimated"))
    idx = _ranked(t if cand == "true" else e, k)
    return _safe_sum_squares(t[idx], e[idx], "squared_error_topk", float(k) if red == "mean" else 1.0)


# --------------------------------------------------------------------------- relative errors
def _relative_errors(t: np.ndarray, e: np.ndarray, idx: np.ndarray, zero_truth: str) -> np.ndarray:
    tv = t[idx]
    zero = tv == 0
    if np.any(zero):
        if zero_truth == "raise":
            item = int(idx[np.flatnonzero(zero)[0]])
            raise ValueError(f"true value of item {item} is 0: its relative error is undefined (use zero_truth='skip')")
        idx, tv = idx[~zero], tv[~zero]
        if idx.size == 0:
            raise ValueError("every evaluated item has true value 0: relative error undefined")
    with np.errstate(over="ignore", invalid="ignore"):
        rel = np.abs(e[idx] - tv) / tv
        redo = ~np.isfinite(rel)
        rel[redo] = np.abs(e[idx][redo] / tv[redo] - 1.0)  # e - t overflowed; the ratio may not
    if not np.all(np.isfinite(rel)):
        item = int(idx[np.flatnonzero(~np.isfinite(rel))[0]])
        raise ValueError(
            f"relative error of item {item} exceeds the double-precision range (true value {t[item]!r}, "
            f"estimate {e[item]!r})"
        )
    return cast("np.ndarray", rel)


def relative_error_topk(
    true: ArrayLike,
    est: ArrayLike,
    k: int,
    *,
    aggregate: Literal["mean", "median"] = "mean",
    candidates: Literal["true", "estimated"] = "true",
    zero_truth: Literal["raise", "skip"] = "raise",
) -> float:
    """Relative error ``|est_i - true_i| / true_i`` over top-k items, averaged or median.

    ``aggregate="mean"`` over the true top-k (the defaults) is ID-LDP's
    ``RE(k) = (1/k) sum_{i in T(k)} |c_hat_i - c_i| / c_i`` (``gu2020idldp`` Sec. VII preamble,
    Figs. 3-8; k = 20, 50 or 100 depending on the figure).

    ``aggregate="median"`` is our reconstruction of FLDP's RE (``zhao2022fldp`` Sec. 6.1 b),
    eq. (15), Fig. 4; formula lost from the text): FLDP cites PrivBasis (Li et al., VLDB
    2012), whose relative error is the *median* of the per-item ratios over the evaluated
    top-k set.  Whether FLDP evaluates the true or the estimated top-k is not recoverable;
    ``candidates`` selects it.  The two definitions differ (mean vs median), hence both.

    The metric is scale-free: counts or frequencies give the same value.  Estimation chapter,
    :prf:ref:`def-metric-re`.

    Parameters
    ----------
    true, est
        True and estimated values, same length and scale.
    k
        ``1..d``.
    aggregate
        ``"mean"`` or ``"median"``.
    candidates
        ``"true"`` (``T(k)``) or ``"estimated"`` (top-k of ``est``).
    zero_truth
        An evaluated item with true value 0 has no relative error: ``"raise"`` (default)
        or ``"skip"`` it (the aggregate is then over fewer than ``k`` items).
    """
    t, e = _check_pair(true, est)
    k = _check_k(k, t.size)
    agg = _check_choice(aggregate, "aggregate", ("mean", "median"))
    cand = _check_choice(candidates, "candidates", ("true", "estimated"))
    zt = _check_choice(zero_truth, "zero_truth", ("raise", "skip"))
    rel = _relative_errors(t, e, _ranked(t if cand == "true" else e, k), zt)
    if agg == "median":
        return float(np.median(rel))
    return _safe_sum(rel, "relative_error_topk", float(rel.size))


def relative_error_sum(true: ArrayLike, est: ArrayLike, *, zero_truth: Literal["raise", "skip"] = "raise") -> float:
    """IPLDP's RE: ``sum_x |f_x - f_hat_x| / f_x``, *summed* over every item of the domain.

    ``li2023ipldp`` Sec. 7.1 "Metrics", eq. (25) (Figs. 2-4), same in the 2023 preprint
    ``li2023ipldppreprint`` Sec. 7.1.2.  Unlike ID-LDP's RE it is neither restricted to the
    top-k nor divided by the number of items, so it grows with ``|D|``; it is undefined when
    an item has true count 0 (``zero_truth``).  Scale-free.  Estimation chapter,
    :prf:ref:`def-metric-re`.
    """
    t, e = _check_pair(true, est)
    zt = _check_choice(zero_truth, "zero_truth", ("raise", "skip"))
    return _safe_sum(_relative_errors(t, e, np.arange(t.size), zt), "relative_error_sum")


# --------------------------------------------------------------------------- top-k identification
def topk_precision(true: ArrayLike, est: ArrayLike, k: int) -> float:
    """Precision of top-k identification: ``|T_hat(k) & T(k)| / k``.

    ``T_hat(k)`` is the top-k of the estimates, ``T(k)`` the true top-k (ties by item index,
    :func:`top_k_items`).  Both sets have ``k`` elements, so precision equals recall here.
    ID-LDP (``gu2020idldp``) Sec. VII-B, Fig. 6.  Estimation chapter,
    :prf:ref:`def-metric-precision`.
    """
    t, e = _check_pair(true, est)
    k = _check_k(k, t.size)
    hits = np.intersect1d(_ranked(t, k), _ranked(e, k), assume_unique=True).size
    return hits / k


def ncr(true: ArrayLike, est: ArrayLike, k: int) -> float:
    """Normalised cumulative rank (NCR) of the estimated top-k.

    The item of true rank ``r`` (``r = 1`` the most frequent) scores ``k - r + 1`` when
    ``r <= k`` and 0 otherwise; NCR is the total score of the items in the estimated top-k
    divided by the largest possible total ``k (k + 1) / 2`` (achieved when the estimated
    top-k equals the true top-k, in any order).  So ``NCR`` is in ``[0, 1]``, rewards finding
    the most frequent items more than the borderline ones, and ignores the order within the
    returned set.

    FLDP (``zhao2022fldp``) Sec. 6.1 d), Fig. 5, cites Wang et al. (heavy hitters, 2017)
    and ``wang2018locally``; the FLDP formula was lost, this follows its prose (score k for the
    top item down to 1 for the k-th, 0 for the rest, normalised by the maximum score).
    Ties in either ranking are broken by item index.  Estimation chapter,
    :prf:ref:`def-metric-ncr`.
    """
    t, e = _check_pair(true, est)
    k = _check_k(k, t.size)
    score = np.zeros(t.size)
    score[_ranked(t, k)] = np.arange(k, 0, -1, dtype=float)
    return float(score[_ranked(e, k)].sum() / (k * (k + 1) / 2))


# --------------------------------------------------------------------------- divergences
def kl_divergence(p: ArrayLike, q: ArrayLike, *, smoothing: float | None = None) -> float:
    """Kullback-Leibler divergence ``KL(p || q) = sum_x p_x log(p_x / q_x)`` in nats.

    ``p`` is the reference (true) distribution and ``q`` the estimate.  Terms with
    ``p_x = 0`` are 0 (the convention ``0 log 0 = 0``).  A ``q_x = 0`` where ``p_x > 0``
    makes the divergence infinite: by default that raises :class:`ValueError` naming the
    item; with ``smoothing = s > 0``, ``q`` is first replaced by ``(q + s) / (1 + d s)``
    (additive smoothing, which keeps it a distribution).  Estimation chapter,
    :prf:ref:`def-metric-kl`.

    Parameters
    ----------
    p, q
        Probability vectors of the same length (entries in [0, 1] summing to 1).
    smoothing
        ``None`` (default, raise on an infinite divergence) or a finite positive ``s``.
    """
    pv = check_distribution(p, name="p")
    qv = check_distribution(q, pv.size, name="q")
    if smoothing is not None:
        s = check_positive_real(smoothing, "smoothing")
        if math.isfinite(pv.size * s):
            qv = (qv + s) / (1.0 + pv.size * s)
        else:  # d * s overflows: the same ratio divided through by s
            qv = (qv / s + 1.0) / (1.0 / s + pv.size)
    support = pv > 0
    bad = support & (qv <= 0)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"q[{i}] = 0 while p[{i}] = {pv[i].item()!r} > 0: KL divergence is infinite (pass smoothing)")
    # non-negative by Gibbs' inequality; equal vectors can round to -1e-17
    return max(0.0, float(np.sum(pv[support] * (np.log(pv[support]) - np.log(qv[support])))))


def topk_kl_divergence(true: ArrayLike, est: ArrayLike, k: int, *, smoothing: float | None = None) -> float:
    """KL divergence between the true and the estimated distribution on the true top-k items.

    Our reconstruction of FLDP's KLD (``zhao2022fldp`` Sec. 6.1 a), eqs. (13)-(14), Fig. 2,
    top 20/50/100; the formulas were lost from the text).  Restrict both vectors to the true
    top-k items ``T(k)``, clip the estimates at 0, renormalise each to sum to 1, and return
    ``KL(true || est)`` (:func:`kl_divergence`; the true distribution is the reference, the
    usual direction for evaluating an estimator).  Zeros in the estimate on an item with
    positive truth raise unless ``smoothing`` is given; an estimate that is non-positive on
    all of ``T(k)`` always raises.  Scale-free in both arguments.  Estimation chapter,
    :prf:ref:`def-metric-kl`.
    """
    t, e = _check_pair(true, est)
    k = _check_k(k, t.size)
    idx = _ranked(t, k)
    tv = t[idx]
    ev = np.clip(e[idx], 0.0, None)
    if tv.max() <= 0:
        raise ValueError(f"true values sum to 0 on the top-{k} items: no reference distribution")
    if ev.max() <= 0:
        raise ValueError(f"estimates are all <= 0 on the true top-{k} items: no estimated distribution")
    with np.errstate(over="ignore"):
        # a sum beyond the double range: normalise by the largest entry first
        tv = tv if math.isfinite(float(tv.sum())) else tv / tv.max()
        ev = ev if math.isfinite(float(ev.sum())) else ev / ev.max()
    return kl_divergence(tv / tv.sum(), ev / ev.sum(), smoothing=smoothing)


# --------------------------------------------------------------------------- LIP
def root_average_mse(total_mse: float, n: int) -> float:
    """``sqrt(E / N)``: LIP's "square root average MSE" of an aggregate sum.

    ``E = E[(S - S_hat)^2]`` is the mean squared error of the estimate of the sum
    ``S = sum_i X_i`` over ``N`` users (computed exactly or averaged over runs).  Jiang et
    al. (``jiang2018lip``) Sec. V (first paragraph) and the y-axes of Figs. 5-8 (Fig. 7
    caption).  Estimation chapter, :prf:ref:`def-metric-lip`.
    """
    e = check_real(total_mse, "total_mse", 0.0)
    users = check_positive_real(n, "n")
    ratio = e / users
    if math.isfinite(ratio) and (ratio > 0 or e == 0):
        return math.sqrt(ratio)
    # E / N overflowed or underflowed: take the square roots first
    return _finite(math.sqrt(e) / math.sqrt(users), "root_average_mse")
