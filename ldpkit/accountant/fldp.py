"""FLDP: flexible LDP (Zhao et al., ICASSP 2022; bibtex ``zhao2022fldp``), as reconstructed.

The extracted text of the paper lost every formula; :func:`~ldpkit.accountant.fldp_parameters` states the
pairwise reading implemented here and the sentences it rests on.  The FLDP chapter
(:prf:ref:`def-fldp`) confirms it as the reading the paper's Theorem 2 uses, and states the
input-side (group) reading beside it, reported here as ``hiding_fraction``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_positive_real, check_probability
from ..channels import ExplicitChannel, HadamardChannel, UnaryChannel
from ._core import ChannelLike, MAX_ENUM_CELLS, CheckResult, ClosedForms, Notion
from ._core import as_channel, closed_forms, register_notion, require_pairs, standard_parameters, within
from .ldp import hadamard_log_ratio, top2_max_sum

__all__ = ["FLDP", "FLDPParameters", "FLDPResult", "check_fldp", "fldp_epsilon", "fldp_parameters"]


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

    Examples
    --------
    >>> from ldpkit import GRR, accountant
    >>> params = accountant.fldp_parameters(GRR(3, 1.0))
    >>> params.shared_fraction, round(params.epsilon, 6)     # every output is shared
    (1.0, 1.0)
    """

    shared_fraction: float
    fraction_pair: tuple[int, int]
    epsilon: float
    ratio_pair: tuple[int, int]
    hiding_fraction: float | None


@dataclass(frozen=True, kw_only=True)
class FLDPResult(CheckResult):
    """Outcome of :func:`check_fldp`: both FLDP conditions and the channel's parameters.

    ``slack`` is ``epsilon - parameters.epsilon`` (log-ratio units) when the shared-output
    condition holds, and the fraction deficit ``shared_fraction - alpha`` (negative)
    otherwise; ``worst_inputs`` is the pair of the failing (or, if none fails, the ratio)
    condition.

    Examples
    --------
    >>> from ldpkit import GRR, accountant
    >>> res = accountant.check_fldp(GRR(3, 1.0), alpha=0.5, epsilon=1.0)
    >>> res.satisfied, res.fraction_ok, res.ratio_ok
    (True, True, True)
    """

    notion = "fldp"

    alpha: float
    epsilon: float
    fraction_ok: bool
    ratio_ok: bool
    parameters: FLDPParameters


_FLDP: ClosedForms[FLDPParameters] = closed_forms("fldp", "FLDP")


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


@_FLDP.register(ExplicitChannel)
def _fldp_explicit_channel(ch: ExplicitChannel) -> FLDPParameters:
    return _fldp_explicit(ch.matrix)


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


@_FLDP.register(UnaryChannel)
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
    eps, rx, rxp = top2_max_sum(up, down)
    hiding = None
    if ch.n_inputs * ch.n_outputs <= MAX_ENUM_CELLS:
        hiding = _fldp_explicit(ch.to_explicit().matrix).hiding_fraction
    if eps <= 0.0:
        eps, rx, rxp = 0.0, 0, 1
    return FLDPParameters(frac, (fx, fxp), float(eps), (rx, rxp), hiding)


@_FLDP.register(HadamardChannel)
def _fldp_hadamard(ch: HadamardChannel) -> FLDPParameters | object:
    """FLDP parameters of the Hadamard channels without enumerating their outputs (``0 < p, q``).

    For two distinct rows each sign pattern of ``(H[r, k], H[r', k])`` occurs at ``K/4``
    positions.  HR: every position is an output of every item, so the fraction is 1 and the
    ratio ``|log p/q|``.  FHR: ``|R_x| = K^2/2`` ordered pairs ``(a, z)`` with ``a, z`` on
    opposite sides of row ``x``; those also on opposite sides of row ``x'`` number
    ``4 (K/4)^2 = K^2/4``, so the fraction is ``1/2`` for every pair; among them, ``a`` on the
    ``+1`` side of ``x`` and the ``-1`` side of ``x'`` gives the ratio ``p/q``, the reverse
    ``q/p``.  The hiding fraction of FHR: output ``(a, z)`` is produced by the rows with
    ``H[r, a XOR z] = -1``, counted for every ``w = a XOR z`` by one Walsh-Hadamard transform
    of the indicator of rows ``1..d``.  FLDP chapter, :prf:ref:`thm-fhr-fldp`.
    """
    if min(ch.p, ch.q) <= 0.0:
        return NotImplemented
    eps = hadamard_log_ratio(ch)
    if not ch.paired:
        return FLDPParameters(1.0, (0, 1), eps, (0, 1), 1.0)
    producers = (ch.d - ch.column_sums()[1:]) // 2  # rows with H[r, w] = -1, for w = 1..K-1
    return FLDPParameters(0.5, (0, 1), eps, (0, 1), float(producers.min() / ch.d))


def fldp_parameters(ch: ChannelLike) -> FLDPParameters:
    """Shared-output fraction and shared-output log-ratio of a channel (reconstructed FLDP).

    The extracted text of Zhao et al. lost every formula, so the definition is rebuilt
    from the prose.  Write ``R_x = {y : P(y|x) > 0}`` for the range of input ``x``.
    **Reconstruction** (FLDP chapter, :prf:ref:`def-fldp`): a mechanism satisfies
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
    require_pairs(ch)
    return _FLDP.compute(ch)


def _check_alpha(alpha: float) -> float:
    a = check_probability(alpha, "alpha")
    if a == 0.0:
        raise ValueError(f"alpha must be a probability in (0, 1], got {alpha!r}")
    return a


def fldp_epsilon(ch: ChannelLike, alpha: float) -> float:
    """Smallest ``eps`` with ``(alpha, eps)``-FLDP (reconstruction of :func:`fldp_parameters`); ``inf`` if the ranges share too little.

    The shared-output condition does not involve ``eps``: when ``shared_fraction < alpha`` no
    ``eps`` helps.  FLDP chapter, :prf:ref:`def-fldp`.

    Examples
    --------
    >>> from ldpkit import FHR, accountant
    >>> round(accountant.fldp_epsilon(FHR(5, fldp_epsilon=1.0), alpha=0.5), 6), accountant.fldp_epsilon(FHR(5, fldp_epsilon=1.0), alpha=0.6)
    (1.0, inf)
    """
    a = _check_alpha(alpha)
    params = fldp_parameters(ch)
    return float(params.epsilon) if params.shared_fraction >= a - 1e-12 else math.inf


def check_fldp(ch: ChannelLike, epsilon: float, *, alpha: float) -> FLDPResult:
    """Check ``(alpha, eps)``-FLDP as reconstructed in :func:`fldp_parameters`.

    Satisfied when ``shared_fraction >= alpha`` (exact count comparison, with a ``1e-12``
    allowance for the division) and ``epsilon* <= eps`` (up to :data:`REL_TOL`).

    FLDP chapter, :prf:ref:`def-fldp`.
    """
    ch = as_channel(ch)
    a = _check_alpha(alpha)
    eps = check_positive_real(epsilon, "epsilon")
    params = fldp_parameters(ch)
    fraction_ok = params.shared_fraction >= a - 1e-12
    ratio_ok = bool(within(params.epsilon, eps))
    if fraction_ok:
        slack, witness = eps - params.epsilon, params.ratio_pair
    else:
        slack, witness = params.shared_fraction - a, params.fraction_pair
    return FLDPResult(
        satisfied=bool(fraction_ok and ratio_ok),
        slack=float(slack),
        worst_inputs=tuple(witness),
        alpha=a,
        epsilon=eps,
        fraction_ok=bool(fraction_ok),
        ratio_ok=ratio_ok,
        parameters=params,
    )


def _fldp_parameters(d: int, params: dict[str, Any]) -> dict[str, Any]:
    """An FLDP promise: a finite positive budget and a shared-output fraction ``alpha`` in ``(0, 1]``."""
    out = standard_parameters(d, params)
    if "alpha" in out:
        out["alpha"] = _check_alpha(out["alpha"])
    return out


def _fldp_at_budget(d: int, epsilon: float, *, alpha: float | None = None, **facts: Any) -> dict[str, Any] | None:
    """FLDP at one budget, at the shared-output fraction ``alpha`` of the setting."""
    return None if alpha is None else {"epsilon": float(epsilon), "alpha": alpha}


FLDP: Notion[FLDPResult] = register_notion(
    Notion("fldp", check_fldp, fldp_epsilon, context=("alpha",), display="FLDP", order=70, label="def-fldp",
           description="flexible LDP, pairwise reconstruction (Zhao et al., def-fldp)",
           validate=_fldp_parameters, at_budget=_fldp_at_budget)
)
