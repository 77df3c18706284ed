"""The audits of each notion: LDP, the pairwise matrix, IPLDP per output, LIP with a prior.

Auditing chapter, :ref:`sec-audit`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Literal, Optional, Union, cast

import numpy as np
from numpy.typing import ArrayLike

from .._rng import RNGLike, as_generator
from .._validation import MAX_USERS, check_distribution, check_positive_int, check_real, describe
from .. import accountant
from ..accountant import enumerate_channel
from ..channels import Channel, ExplicitChannel
from .bounds import AuditBound, ItemAudit, PairwiseAudit, cp_bounds_of_counts, cp_lower, cp_upper, log_ratio
from .samplers import Sampler, check_sampler, sample_histograms

__all__ = ["EventKind", "audit_ipldp", "audit_ldp", "audit_lip", "audit_pairwise"]

#: how events are chosen, from the exact channel or on a first half of the samples
EventKind = Literal["white", "black"]

#: relative tolerance under which two values count as equal (ties of the worst pair, input or event).
#: Values equal in exact arithmetic (the symmetric items of a mechanism) differ in their last bits
#: by the order of the floating-point operations, which depends on the machine (SIMD paths of
#: ``exp``/``log``, the BLAS kernels and their thread count): every discrete choice of the audits
#: therefore treats values within this tolerance as tied and resolves the tie by index (the first
#: pair, input or output), so the choice, hence the bound, is the same on every machine.
TIE_TOL = 1e-9

#: black-box events, where outputs are ranked by their empirical log-ratio minus z standard errors, for each z
RANK_Z = (0.0, 1.0, 2.0)

#: black-box selection, the candidates counted per pair when scoring them on the first half
SELECT_CANDIDATES = 256


# ============================================================================ arguments
def _check_common(sampler: Any, n: Any, alpha: Any, events: Any) -> tuple[Sampler, int, float, EventKind]:
    sampler = check_sampler(sampler)
    n = check_positive_int(n, "n", maximum=MAX_USERS)
    alpha = check_real(alpha, "alpha", 0.0, 1.0, low_open=True, high_open=True)
    if events not in ("white", "black"):
        raise ValueError(f"events must be 'white' or 'black', got {events!r}")
    if events == "black" and n < 2:
        raise ValueError(f"black-box events split the samples in halves: n must be at least 2, got {n}")
    kind: EventKind = "white" if events == "white" else "black"
    return sampler, n, alpha, kind


def _white_matrix(sampler: Sampler, channel: Optional[Union[Channel, ArrayLike]]) -> np.ndarray:
    if channel is None:
        channel = getattr(sampler, "channel", None)
        if channel is None:
            raise ValueError(f"white-box events need the exact channel: {sampler!r} has none, "
                             "pass channel= or use events='black'")
    ch = channel if isinstance(channel, Channel) else ExplicitChannel(np.asarray(channel, dtype=float))
    m = enumerate_channel(ch, "white-box audit").matrix
    if m.shape[0] != sampler.n_inputs or (sampler.n_outputs is not None and m.shape[1] != sampler.n_outputs):
        raise ValueError(f"channel is {m.shape[0]} x {m.shape[1]}, the sampler has {sampler.n_inputs} inputs "
                         f"and {sampler.n_outputs} outputs")
    return m


def _check_pairs(pairs: Optional[Iterable[Sequence[int]]], d: int) -> list[tuple[int, int]]:
    if pairs is None:
        return [(x, xp) for x in range(d) for xp in range(d) if x != xp]
    out = []
    for pair in pairs:
        if len(pair) != 2:
            raise ValueError(f"pairs must hold ordered pairs (x, x'), got {pair!r}")
        x, xp = (check_positive_int(v, "pair entry", minimum=0) for v in pair)
        if x >= d or xp >= d:
            raise ValueError(f"pair {tuple(pair)!r} is out of range for {d} inputs")
        if x == xp:
            raise ValueError(f"pair {tuple(pair)!r} repeats its input: an ordered pair of distinct inputs is needed")
        out.append((x, xp))
    if not out:
        raise ValueError("pairs is empty")
    return out


def _method(events: str, k: int) -> str:
    how = "white-box events (exact channel)" if events == "white" else "black-box events (chosen on a first half)"
    return f"{how}; Clopper-Pearson, Bonferroni over {k} one-sided intervals"


# ============================================================================ tie-aware choices
def _tol(value: float, relative: bool) -> float:
    """The tie tolerance at ``value``: ``TIE_TOL * |value|`` (``relative``) or ``TIE_TOL * max(1, |value|)``."""
    return TIE_TOL * (abs(value) if relative else max(1.0, abs(value)))


def _first_max(values: ArrayLike, relative: bool = False) -> int:
    """Flat index of the first entry tied with the largest (within :data:`TIE_TOL`); NaN entries are ignored.

    ``relative`` scales the tolerance by the largest value itself (probabilities, where tiny
    values differ from each other); otherwise by ``max(1, |largest|)`` (log-ratios, which may
    be near 0).  An infinite largest value ties only with itself.

    Examples
    --------
    >>> _first_max([0.3, 1.0 - 1e-16, 1.0, 0.2])      # equal in exact arithmetic: the first one
    1
    >>> _first_max([0.5, 0.5 + 1e-6])
    1
    """
    v = np.asarray(values, dtype=float).ravel()
    finite = v[~np.isnan(v)]
    if finite.size == 0:
        raise ValueError("no value to choose from (every entry is NaN)")
    top = float(finite.max())
    if not math.isfinite(top):
        return int(np.flatnonzero(v == top)[0])
    return int(np.flatnonzero(v >= top - _tol(top, relative))[0])


def _first_min(values: ArrayLike, relative: bool = False) -> int:
    """Flat index of the first entry tied with the smallest (:func:`_first_max` of the negated values).

    >>> _first_min([0.2, 0.1 + 1e-17, 0.1])
    1
    """
    return _first_max(-np.asarray(values, dtype=float), relative)


def _above(values: np.ndarray, level: float) -> np.ndarray:
    """``values > level`` where values tied with ``level`` (within :data:`TIE_TOL`) count as equal, not above.

    >>> _above(np.array([1.0, 2.0 - 1e-15, 3.0]), 2.0).tolist()
    [False, False, True]
    """
    return values > level + _tol(level, False)


# ============================================================================ events
def _white_events(P: np.ndarray, x: int, xp: int) -> list[np.ndarray]:
    """Events of pair ``(x, x')`` from the exact channel: the outputs of worst ratio, and those above the median."""
    px, pxp = P[x], P[xp]
    prod = px > 0
    with np.errstate(divide="ignore"):
        lr = np.where(prod, np.log(np.where(prod, px, 1.0)) - np.log(pxp), -np.inf)
    top = float(lr.max())
    if not prod.any():
        return []
    first = prod & (lr >= top - _tol(top, False)) if math.isfinite(top) else prod & (pxp == 0)
    out = [first]
    upper = prod & _above(lr, float(np.median(lr[prod])))
    if upper.any() and not np.array_equal(upper, first):
        out.append(upper)
    return out


def _grid(m: int) -> np.ndarray:
    """Prefix sizes 1, ~1.4, 2, ... up to ``m`` (geometric, distinct)."""
    return np.unique(np.round(np.geomspace(1, m, max(2, int(2 * math.log2(max(m, 2))) + 1))).astype(np.int64))


def _black_event(hx: np.ndarray, hxp: np.ndarray, n: int, miss: float) -> tuple[np.ndarray, float]:
    """On selection counts, the event of largest bound among singletons and top-m sets by empirical ratio."""
    cand = np.flatnonzero(hx > 0)
    if cand.size == 0:
        return np.zeros(hx.size, dtype=bool), -math.inf
    a, b = hx[cand] + 0.5, hxp[cand] + 0.5
    mask = np.zeros(hx.size, dtype=bool)
    best, best_set = -math.inf, cand[:1]
    # orderings by the empirical log-ratio, raw and penalised by z of its standard error (rare
    # outputs have noisy ratios that would otherwise crowd the top of the order)
    for z in RANK_Z:
        order = cand[np.argsort(-(np.log(a / b) - z * np.sqrt(1 / a + 1 / b)), kind="stable")]
        single = order[: min(64, order.size)]
        s_val = log_ratio(*cp_bounds_of_counts(hx[single], hxp[single], n, miss))
        sizes = _grid(order.size)
        cx, cxp = np.cumsum(hx[order])[sizes - 1], np.cumsum(hxp[order])[sizes - 1]
        p_val = log_ratio(*cp_bounds_of_counts(cx, cxp, n, miss))
        if s_val.max() > best:
            best, best_set = float(s_val.max()), single[int(np.argmax(s_val))][None]
        if p_val.max() > best:
            best, best_set = float(p_val.max()), order[: sizes[int(np.argmax(p_val))]]
    mask[best_set] = True
    return mask, best


def _bound(notion: str, lo: float, hi: float, alpha: float, pair: tuple[int, ...], event: np.ndarray,
           n: int, events: str, k: int) -> AuditBound:
    value = float(log_ratio(np.array(lo), np.array(hi)))
    return AuditBound(notion, max(0.0, value), 1.0 - alpha, pair, tuple(int(i) for i in np.flatnonzero(event)), n,
                      _method(events, k), k)


# ============================================================================ pairwise and LDP
def audit_pairwise(
    sampler: Sampler,
    n: int,
    *,
    events: EventKind = "white",
    alpha: float = 0.05,
    pairs: Optional[Iterable[Sequence[int]]] = None,
    rng: RNGLike = None,
    channel: Optional[Union[Channel, ArrayLike]] = None,
) -> PairwiseAudit:
    """Lower bounds on every ordered pair's log-ratio ``max_S log P(S|x)/P(S|x')``, jointly at confidence ``1 - alpha``.

    For each ordered pair ``(x, x')`` and event ``S``, ``n`` samples of each input give one-sided
    Clopper-Pearson bounds ``p_lo(x, S)`` and ``p_hi(x', S)`` and the bound
    ``log(p_lo / p_hi) <= log P(S|x)/P(S|x') <= L[x, x']``.  With ``K`` intervals in all (two per
    (pair, event) examined), each misses with chance ``alpha / K`` (Bonferroni), so every bound
    of the matrix holds at once with probability at least ``1 - alpha``; compare it with a budget
    matrix by :func:`violates` (LDP, ID-LDP, MinID-LDP, context-aware LDP).

    Parameters
    ----------
    sampler
        A :class:`Sampler`.
    n
        Samples per input (white-box: all of them bound; black-box: ``n // 2`` choose the event,
        the rest bound it).
    events
        ``"white"``: for each pair, the outputs attaining the exact worst ratio and those whose
        ratio exceeds its median (from ``channel`` or the sampler's own channel).  ``"black"``:
        for each pair, the event of largest bound on the first half among the singletons and the
        top-``m`` sets by empirical ratio; one event per pair is bounded on the second half.
    alpha
        Family-wise miss probability, in ``(0, 1)``.
    pairs
        Ordered pairs of distinct inputs to examine (default: all).
    rng
        Seed or generator.
    channel
        Exact channel for white-box events (default: ``sampler.channel``).

    Examples
    --------
    >>> from ldpkit import GRR
    >>> from ldpkit.audit import audit_pairwise, from_mechanism, violates
    >>> res = audit_pairwise(from_mechanism(GRR(3, 1.0)), 100_000, rng=0)
    >>> bool(violates(res, [[0, 1, 1], [1, 0, 1], [1, 1, 0]]).any()), bool(violates(res, [[0, .5, .5]] * 3).any())
    (False, True)
    """
    return _audit_pairs(sampler, n, events, alpha, pairs, rng, channel, one=False)


def _audit_pairs(
    sampler: Sampler,
    n: int,
    events: EventKind,
    alpha: float,
    pairs: Optional[Iterable[Sequence[int]]],
    rng: RNGLike,
    channel: Optional[Union[Channel, ArrayLike]],
    one: bool,
) -> PairwiseAudit:
    """:func:`audit_pairwise`; with ``one`` (black-box LDP), only the best (pair, event) of the selection half is bounded."""
    sampler, n, alpha, events = _check_common(sampler, n, alpha, events)
    d = sampler.n_inputs
    plist = _check_pairs(pairs, d)
    P = _white_matrix(sampler, channel) if events == "white" else None
    inputs = sorted({v for p in plist for v in p})
    row = {x: i for i, x in enumerate(inputs)}
    gen = as_generator(rng)
    chosen: list[tuple[tuple[int, int], np.ndarray]] = []
    if P is not None:
        for x, xp in plist:
            chosen += [((x, xp), e) for e in _white_events(P, x, xp)]
        k = max(2, 2 * len(chosen))
        H, n_test = sample_histograms(sampler, inputs, n, gen), n
    else:
        n_sel, n_test = n // 2, n - n // 2
        S = sample_histograms(sampler, inputs, n_sel, gen)
        H = sample_histograms(sampler, inputs, n_test, gen)
        width = max(S.shape[1], H.shape[1])
        S = np.pad(S, ((0, 0), (0, width - S.shape[1])))
        H = np.pad(H, ((0, 0), (0, width - H.shape[1])))
        k = 2 if one else 2 * len(plist)
        # the selection scores each candidate as if it were one of SELECT_CANDIDATES per pair, so
        # that a rare event with a lucky count does not win over a frequent one
        sel_miss = alpha / (2 * len(plist) * SELECT_CANDIDATES)
        picks = [((x, xp), *_black_event(S[row[x]], S[row[xp]], n_sel, sel_miss)) for x, xp in plist]
        if one:
            picks = [max(picks, key=lambda t: t[2])]
        chosen = [(p, e) for p, e, _ in picks]
    miss = alpha / k
    values = np.full((d, d), np.nan)
    np.fill_diagonal(values, 0.0)
    bounds = []
    for (x, xp), ev in chosen:
        lo = float(cp_lower(H[row[x], : ev.size][ev].sum(), n_test, miss))
        hi = float(cp_upper(H[row[xp], : ev.size][ev].sum(), n_test, miss))
        b = _bound("pairwise", lo, hi, alpha, (x, xp), ev, n, events, k)
        bounds.append(b)
        values[x, xp] = np.fmax(values[x, xp], b.value)
    if not bounds:
        raise ValueError("no event to examine: every examined input has an all-zero row")
    return PairwiseAudit(values, tuple(bounds), 1.0 - alpha, n, _method(events, k))


def audit_ldp(
    sampler: Sampler,
    n: int,
    *,
    events: EventKind = "white",
    alpha: float = 0.05,
    pairs: Optional[Iterable[Sequence[int]]] = None,
    rng: RNGLike = None,
    channel: Optional[Union[Channel, ArrayLike]] = None,
) -> AuditBound:
    """A lower bound on the LDP epsilon ``max_{x, x', S} log P(S|x)/P(S|x')``, at confidence ``1 - alpha``.

    White-box (default): by default the one pair the exact channel says is worst, with its events
    (the fewer intervals, the smaller the correction).  Black-box: every pair (or ``pairs``) is
    scored on the first half of the samples and only the best (pair, event) is bounded on the
    second half (two intervals).  Same parameters and confidence statement as
    :func:`audit_pairwise`.

    Examples
    --------
    >>> from ldpkit import OUE
    >>> from ldpkit.audit import audit_ldp, from_mechanism
    >>> b = audit_ldp(from_mechanism(OUE(4, 1.0)), 100_000, events="black", rng=1)
    >>> 0.8 < b.value <= 1.0, b.n_intervals
    (True, 2)
    """
    sampler, n, alpha, events = _check_common(sampler, n, alpha, events)
    if events == "white" and pairs is None:
        lr = accountant.pairwise_log_ratio(ExplicitChannel(_white_matrix(sampler, channel)))
        np.fill_diagonal(lr, -np.inf)
        x, xp = np.unravel_index(_first_max(lr), lr.shape)  # pairs tied in exact arithmetic: the first
        pairs = [(int(x), int(xp))]
    res = _audit_pairs(sampler, n, events, alpha, pairs, rng, channel, one=events == "black")
    best = res.best
    return AuditBound("ldp", best.value, best.confidence, best.pair, best.event, n, best.method, best.n_intervals)


# ============================================================================ IPLDP
def audit_ipldp(
    sampler: Sampler,
    budgets: ArrayLike,
    n: int,
    *,
    events: EventKind = "white",
    alpha: float = 0.05,
    rng: RNGLike = None,
    channel: Optional[Union[Channel, ArrayLike]] = None,
) -> ItemAudit:
    """Lower bounds on IPLDP's level of each sensitive output ``j``: ``L_j = max_{x, x'} log Q(j|x)/Q(j|x')``.

    Outputs are items (output index ``j`` is item ``j``; for :func:`from_function` pass
    ``outputs=range(d)``).  ``budgets`` has one entry per item, ``inf`` marking a non-sensitive
    item (as :class:`~ldpkit.iprr.IPRR` takes them); the sensitive outputs are audited, so
    ULDP (one budget on the sensitive outputs) is audited the same way.  For each sensitive
    output one pair is chosen (white-box: the exact column's largest and smallest entries;
    black-box: the largest Clopper-Pearson lower and smallest upper bound on a first half) and
    bounded with two one-sided intervals; the Bonferroni correction counts all of them, so every
    entry holds at once with probability at least ``1 - alpha``.  Compare with the budgets by
    :func:`violates`.  IPLDP's structural condition (a non-sensitive output reveals its input)
    is audited on every sample drawn: a non-sensitive output ``j`` seen from an input ``x != j``
    is a witness, listed in ``ItemAudit.structural`` (certain, not statistical).

    Examples
    --------
    >>> import math
    >>> from ldpkit import IPRR
    >>> from ldpkit.audit import audit_ipldp, from_mechanism, violates
    >>> budgets = [0.5, 1.0, math.inf]
    >>> res = audit_ipldp(from_mechanism(IPRR(budgets)), budgets, 200_000, rng=0)
    >>> [round(float(v), 1) for v in res.values[:2]], bool(violates(res, budgets).any())
    ([0.5, 1.0], False)
    """
    sampler, n, alpha, events = _check_common(sampler, n, alpha, events)
    d = sampler.n_inputs
    eps = np.asarray(budgets, dtype=float)
    if eps.shape != (d,) or np.any(np.isnan(eps)) or np.any(eps <= 0):
        raise ValueError(
            f"budgets must hold {d} positive budgets (inf for a non-sensitive item), got {describe(budgets)}")
    sens = np.flatnonzero(np.isfinite(eps))
    if sens.size == 0:
        raise ValueError("budgets mark every item non-sensitive (inf): no output to audit")
    if sampler.n_outputs is not None and sampler.n_outputs != d:
        raise ValueError(f"IPLDP needs item outputs: the sampler has {sampler.n_outputs} outputs for {d} inputs")
    P = _white_matrix(sampler, channel) if events == "white" else None
    gen = as_generator(rng)
    k = 2 * sens.size
    miss = alpha / k
    def items(h: np.ndarray) -> np.ndarray:
        if h.shape[1] > d:
            raise ValueError(f"IPLDP needs item outputs: the sampler returned output index {h.shape[1] - 1} >= d={d}")
        return np.pad(h, ((0, 0), (0, d - h.shape[1])))

    if P is not None:
        H, n_test = items(sample_histograms(sampler, range(d), n, gen)), n
        picks = [(_first_max(P[:, j], relative=True), _first_min(P[:, j], relative=True)) for j in sens]
        seen = H
    else:
        n_test = n - n // 2
        S = items(sample_histograms(sampler, range(d), n // 2, gen))
        H = items(sample_histograms(sampler, range(d), n_test, gen))
        picks = [(int(np.argmax(cp_lower(S[:, j], n // 2, miss))), int(np.argmin(cp_upper(S[:, j], n // 2, miss))))
                 for j in sens]
        seen = S + H
    nonsens = np.flatnonzero(~np.isfinite(eps))
    structural = tuple((int(x), int(j), int(seen[x, j])) for j in nonsens for x in range(d)
                       if x != j and seen[x, j] > 0)
    values = np.full(d, np.nan)
    bounds = []
    for j, (x, xp) in zip(sens, picks):
        ev = np.zeros(d, dtype=bool)
        ev[j] = True
        b = _bound("ipldp", float(cp_lower(H[x, j], n_test, miss)), float(cp_upper(H[xp, j], n_test, miss)),
                   alpha, (x, xp), ev, n, events, k)
        bounds.append(b)
        values[j] = b.value
    return ItemAudit(values, tuple(bounds), 1.0 - alpha, n, _method(events, k), structural)


# ============================================================================ LIP
def _mix(prior: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``prior @ rows``, summed input by input in a fixed order.

    A BLAS product rounds differently with the machine and its thread count, and these sums
    feed the LIP audits' choices (ordering, best candidate): summed this way, equal columns give
    equal sums on every machine.
    """
    out = prior[0] * rows[0]
    for i in range(1, prior.size):
        out = out + prior[i] * rows[i]
    return cast("np.ndarray", out)


def _lip_values(
    H: np.ndarray, n: int, prior: np.ndarray, masks: np.ndarray, miss: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per input and event (rows of ``masks``): ``log p_lo(S|x)/P_hi(S)`` and ``log P_lo(S)/p_hi(S|x)``."""
    c = H @ masks.T.astype(np.int64)  # inputs x events
    lo, hi = cp_lower(c, n, miss), cp_upper(c, n, miss)
    p_lo, p_hi = _mix(prior, lo), _mix(prior, hi)
    return log_ratio(lo, p_hi[None, :]), log_ratio(p_lo[None, :], hi)


def audit_lip(
    sampler: Sampler,
    prior: ArrayLike,
    n: int,
    *,
    events: EventKind = "white",
    alpha: float = 0.05,
    rng: RNGLike = None,
    channel: Optional[Union[Channel, ArrayLike]] = None,
) -> AuditBound:
    """A lower bound on the LIP epsilon ``max_{x, y} |log P(y|x)/P(y)|`` under ``prior``, at confidence ``1 - alpha``.

    For an event ``S``, per-input bounds ``p_lo(S|z) <= P(S|z) <= p_hi(S|z)`` (two one-sided
    Clopper-Pearson intervals for every input ``z``) give ``P_lo(S) = sum_z prior_z p_lo(S|z) <=
    P(S) <= P_hi(S)`` when all of them hold (union bound); then both ``log p_lo(S|x)/P_hi(S)``
    and ``log P_lo(S)/p_hi(S|x)`` are at most ``log`` of a ratio ``P(S|x)/P(S)`` or its inverse,
    which the LIP epsilon bounds.  With ``m`` events, ``K = 2 d m`` intervals each miss with
    chance ``alpha / K``.  White-box: the exact worst input and direction, with its tie set and
    its above- (below-) median set (``m <= 2``); black-box: the best (input, direction, top-m set)
    on a first half, bounded on the second (``m = 1``).

    Examples
    --------
    >>> from ldpkit import GRR, accountant
    >>> from ldpkit.audit import audit_lip, from_mechanism
    >>> prior = [0.5, 0.3, 0.2]
    >>> b = audit_lip(from_mechanism(GRR(3, 1.0)), prior, 200_000, rng=0)
    >>> b.value <= accountant.lip_epsilon(GRR(3, 1.0), prior), round(b.value, 2)
    (True, 0.69)
    """
    sampler, n, alpha, events = _check_common(sampler, n, alpha, events)
    d = sampler.n_inputs
    p = check_distribution(prior, d)
    gen = as_generator(rng)
    if events == "white":
        P = _white_matrix(sampler, channel)
        py = _mix(p, P)
        with np.errstate(divide="ignore", invalid="ignore"):
            R = np.where(P > 0, np.log(P) - np.log(py)[None, :], np.where(py > 0, -np.inf, np.nan))
        absR = np.nan_to_num(np.abs(R), nan=-1.0)
        xi, yi = np.unravel_index(_first_max(absR), absR.shape)
        x, up = int(xi), bool(R[xi, yi] > 0)
        r = R[x] if up else -R[x]
        r = np.where(np.isnan(r), -np.inf, r)
        top = float(r.max())
        ties = r >= top - _tol(top, False) if math.isfinite(top) else r == top
        fin = np.isfinite(r)
        masks = [ties] + ([_above(r, float(np.median(r[fin])))] if fin.any() else [])
        masks = [m for i, m in enumerate(masks) if m.any() and not any(np.array_equal(m, o) for o in masks[:i])]
        k = 2 * d * len(masks)
        H, n_test = sample_histograms(sampler, range(d), n, gen), n
        dirs = [up] * len(masks)
    else:
        n_sel, n_test = n // 2, n - n // 2
        S = sample_histograms(sampler, range(d), n_sel, gen)
        H = sample_histograms(sampler, range(d), n_test, gen)
        width = max(S.shape[1], H.shape[1])
        S, H = np.pad(S, ((0, 0), (0, width - S.shape[1]))), np.pad(H, ((0, 0), (0, width - H.shape[1])))
        k = 2 * d
        py = _mix(p, S + 0.5)
        best: tuple[float, int, bool, np.ndarray] = (-math.inf, 0, True, np.zeros(width, dtype=bool))
        for xx in range(d):
            for direction in (True, False):
                ratio = (S[xx] + 0.5) / py if direction else py / (S[xx] + 0.5)
                order = np.argsort(-ratio, kind="stable")
                cand = np.zeros((0, width), dtype=bool)
                for m in _grid(width):
                    row_mask = np.zeros(width, dtype=bool)
                    row_mask[order[:m]] = True
                    cand = np.vstack([cand, row_mask])
                u, dn = _lip_values(S, n_sel, p, cand, alpha / k)
                vals = (u if direction else dn)[xx]
                i = int(np.argmax(vals))
                if vals[i] > best[0]:
                    best = (float(vals[i]), xx, direction, cand[i])
        _, x, up, mask = best
        masks, dirs = [mask], [up]
    miss = alpha / k
    result: Optional[AuditBound] = None
    for mask, direction in zip(masks, dirs):
        u, dn = _lip_values(H, n_test, p, mask[None, :], miss)
        val = float((u if direction else dn)[x, 0])
        b = AuditBound("lip", max(0.0, val), 1.0 - alpha, (int(x),), tuple(int(i) for i in np.flatnonzero(mask)), n,
                       _method(events, k), k)
        if result is None or b.value > result.value:
            result = b
    assert result is not None
    return result
