"""Standard local differential privacy: the tight epsilon of a channel.

``eps(Q) = max_{x, x', y} log Q(y|x) / Q(y|x')`` (``inf`` if unbounded); Foundations chapter,
:prf:ref:`def-ldp`.  Explicit channels are scanned output by output in ``O(d * n_outputs)``;
unary channels use the separable closed form of the Foundations chapter
(:prf:ref:`thm-ue-pairwise`), never enumerating their ``2**d`` outputs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_positive_real
from ..channels import ExplicitChannel, HadamardChannel, UnaryChannel
from ._core import ChannelLike, CheckResult, ClosedForms, Notion
from ._core import Witness, as_channel, closed_forms, register_notion, within

__all__ = [
    "LDP",
    "LDPResult",
    "check_ldp",
    "hadamard_log_ratio",
    "ldp_epsilon",
    "log_ratio",
    "pairwise_log_ratio",
    "top2_max_sum",
    "unary_loss_terms",
]


@dataclass(frozen=True, kw_only=True)
class LDPResult(CheckResult):
    """Outcome of :func:`check_ldp`.

    Attributes
    ----------
    epsilon
        The budget checked.
    ldp_epsilon
        The channel's tight epsilon.

    Examples
    --------
    >>> from ldpkit import OUE, accountant
    >>> res = accountant.check_ldp(OUE(4, 1.0), 0.5)
    >>> res.satisfied, round(res.ldp_epsilon, 6), res.worst_pair
    (False, 1.0, (0, 1))
    """

    notion = "ldp"

    epsilon: float
    ldp_epsilon: float

    @property
    def worst_pair(self) -> tuple[int, ...]:
        """Inputs ``(x, x')`` attaining :attr:`ldp_epsilon`."""
        return self.worst_inputs


def top2_max_sum(f: np.ndarray, g: np.ndarray) -> tuple[float, int, int]:
    """``max_{i != j} f[i] + g[j]`` and its argmax (values may be ``-inf``; never ``+inf``-``inf``).

    Only the two largest entries of each vector can attain the maximum, so this is ``O(d)``.
    """
    oi = np.argsort(-f, kind="stable")[:2]
    oj = np.argsort(-g, kind="stable")[:2]
    best = (-math.inf, int(oi[0]), int(oj[0]) if oj[0] != oi[0] else int(oj[-1]))
    for i in oi:
        for j in oj:
            if i != j and f[i] + g[j] > best[0]:
                best = (float(f[i] + g[j]), int(i), int(j))
    return best


def log_ratio(num: ArrayLike, den: ArrayLike) -> np.ndarray:
    """``log(num/den)`` elementwise with the conventions ``0/anything -> -inf`` and ``positive/0 -> +inf``."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    out = np.full(num.shape, -np.inf)
    pos = num > 0
    out[pos & (den <= 0)] = np.inf
    ok = pos & (den > 0)
    out[ok] = np.log(num[ok]) - np.log(den[ok])
    return out


def unary_loss_terms(ch: UnaryChannel) -> tuple[np.ndarray, np.ndarray]:
    """``(u, v)`` with ``L[x, x'] = u[x] + v[x']`` for ``x != x'`` on a unary channel.

    Only bits ``x`` and ``x'`` have different laws under the two inputs, so the worst output
    maximises each of those bits separately:
    ``u[x] = log max(a_x/b_x, (1-a_x)/(1-b_x))`` and ``v[x'] = log max(b_x'/a_x', (1-b_x')/(1-a_x'))``
    (Foundations chapter, :prf:ref:`thm-ue-pairwise`).
    """
    a, b = ch.a, ch.b
    u = np.maximum(log_ratio(a, b), log_ratio(1 - a, 1 - b))
    v = np.maximum(log_ratio(b, a), log_ratio(1 - b, 1 - a))
    return u, v


def hadamard_log_ratio(ch: HadamardChannel) -> float:
    """``|log p - log q|`` of a Hadamard channel (``inf`` when exactly one of them is 0): its two kinds of output."""
    if ch.p == ch.q:
        return 0.0
    if min(ch.p, ch.q) == 0.0:
        return math.inf
    return abs(math.log(ch.p) - math.log(ch.q))


# ---------------------------------------------------------------------------- the pairwise loss matrix
_PAIRWISE: ClosedForms[np.ndarray] = closed_forms("pairwise", "pairwise log-ratio")


@_PAIRWISE.register(ExplicitChannel)
def _pairwise_explicit(ch: ExplicitChannel) -> np.ndarray:
    m = ch.matrix
    with np.errstate(divide="ignore"):
        logm = np.log(m)
    d = m.shape[0]
    out = np.empty((d, d))
    for x in range(d):
        support = m[x] > 0
        diff = logm[x, support][None, :] - logm[:, support]
        out[x] = diff.max(axis=1)
    np.fill_diagonal(out, 0.0)
    return out


@_PAIRWISE.register(UnaryChannel)
def _pairwise_unary(ch: UnaryChannel) -> np.ndarray:
    u, v = unary_loss_terms(ch)
    out: np.ndarray = u[:, None] + v[None, :]
    np.fill_diagonal(out, 0.0)
    return out


@_PAIRWISE.register(HadamardChannel)
def _pairwise_hadamard(ch: HadamardChannel) -> np.ndarray:
    """HR: any two rows differ at ``K/4`` positions in each direction, so every pair has loss
    ``|log p/q|``; FHR: some output of ``x`` has both positions on one side of row ``x' + 1``
    (impossible under ``x'``), so every pair has loss ``inf``."""
    value = math.inf if ch.paired else hadamard_log_ratio(ch)
    out = np.full((ch.d, ch.d), value)
    np.fill_diagonal(out, 0.0)
    return out


def pairwise_log_ratio(ch: ChannelLike) -> np.ndarray:
    """``(d, d)`` matrix ``L[x, x'] = max_y log P(y|x) / P(y|x')`` (``inf`` where unbounded, 0 on the diagonal).

    Outputs impossible under ``x`` are ignored for the pair ``(x, x')``; an output possible
    under ``x`` but impossible under ``x'`` makes the entry ``inf``.  Explicit channels are
    enumerated; unary and Hadamard channels use their closed forms (Foundations chapter,
    :prf:ref:`thm-ue-pairwise`); other kinds are enumerated when small enough.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit.accountant import pairwise_log_ratio
    >>> from ldpkit.channels import ExplicitChannel
    >>> pairwise_log_ratio(ExplicitChannel(np.array([[0.75, 0.25], [0.25, 0.75]]))).round(6).tolist()
    [[0.0, 1.098612], [1.098612, 0.0]]
    """
    return _PAIRWISE.compute(as_channel(ch))


# ---------------------------------------------------------------------------- LDP
_LDP: ClosedForms[Witness] = closed_forms("ldp", "LDP")


@_LDP.register(ExplicitChannel)
def _ldp_explicit(ch: ExplicitChannel) -> Witness:
    """``max_y [log max_x P(y|x) - log min_x P(y|x)]`` over producible outputs, with its witness."""
    m = ch.matrix
    hi = m.max(axis=0)
    lo = m.min(axis=0)
    used = hi > 0
    if not np.any(used) or m.shape[0] < 2:
        return Witness(0.0, (), None)
    with np.errstate(divide="ignore"):
        gap = np.where(used, np.log(np.where(used, hi, 1.0)) - np.log(lo), -np.inf)
    y = int(np.argmax(gap))
    value = float(gap[y])
    if value <= 0.0:
        return Witness(0.0, (0, 1), y)
    return Witness(value, (int(np.argmax(m[:, y])), int(np.argmin(m[:, y]))), y)


@_LDP.register(UnaryChannel)
def _ldp_unary(ch: UnaryChannel) -> Witness:
    """``max_{x != x'} u[x] + v[x']`` (Foundations chapter, :prf:ref:`thm-ue-pairwise`)."""
    u, v = unary_loss_terms(ch)
    if u.size < 2:
        return Witness(0.0, (), None)
    value, x, xp = top2_max_sum(u, v)
    return Witness(max(0.0, value), (x, xp), None)


@_LDP.register(HadamardChannel)
def _ldp_hadamard(ch: HadamardChannel) -> Witness:
    """HR: ``|log p/q|``; FHR: ``inf`` (every pair has the loss of :func:`pairwise_log_ratio`)."""
    if ch.n_inputs < 2:
        return Witness(0.0, (), None)
    return Witness(math.inf if ch.paired else hadamard_log_ratio(ch), (0, 1), None)


def ldp_epsilon(ch: ChannelLike) -> float:
    """Tight standard LDP epsilon: ``max_{x, x', y} log P(y|x) / P(y|x')`` (``inf`` if unbounded).

    Explicit channels: ``max_y [log max_x P(y|x) - log min_x P(y|x)]`` over outputs that
    some input can produce, an ``O(d * n_outputs)`` scan.  Unary channels: the closed form
    ``max_{x != x'} u[x] + v[x']`` (Foundations chapter, :prf:ref:`thm-ue-pairwise`).  Other
    channel kinds use their registered closed form, or exact enumeration when small.

    Foundations chapter, :prf:ref:`def-ldp`.

    Examples
    --------
    >>> import ldpkit
    >>> round(ldpkit.accountant.ldp_epsilon(ldpkit.OUE(8, 1.5)), 12)
    1.5
    """
    return float(Witness(*_LDP.compute(as_channel(ch))).value)


def check_ldp(ch: ChannelLike, epsilon: float) -> LDPResult:
    """Check eps-LDP: every ratio ``P(y|x) / P(y|x') <= e^eps`` (up to the relative tolerance).

    Foundations chapter, :prf:ref:`def-ldp`.
    """
    ch = as_channel(ch)
    eps = check_positive_real(epsilon, "epsilon")
    value, pair, y = Witness(*_LDP.compute(ch))
    return LDPResult(
        satisfied=bool(within(value, eps)),
        slack=eps - value,
        worst_inputs=tuple(pair),
        worst_output=y,
        epsilon=eps,
        ldp_epsilon=float(value),
    )


def _ldp_pairwise(d: int, params: Mapping[str, Any]) -> np.ndarray:
    """eps-LDP is context-aware LDP with the constant matrix ``eps`` (:prf:ref:`prop-pairwise-special-cases`)."""
    from .context_aware import pairwise_budgets

    return pairwise_budgets(d, epsilon=params["epsilon"])


LDP: Notion[LDPResult] = register_notion(
    Notion("ldp", check_ldp, ldp_epsilon, display="LDP", order=10, label="def-ldp",
           description="standard LDP (Foundations, def-ldp)", pairwise=_ldp_pairwise, fits_by_mixing=True)
)
