"""Standard local differential privacy: the tight epsilon of a channel.

``eps(Q) = max_{x, x', y} log Q(y|x) / Q(y|x')`` (``inf`` if unbounded); Foundations chapter,
:prf:ref:`def-ldp`.  Explicit channels are scanned output by output in ``O(d * n_outputs)``;
unary channels use the separable closed form of the Foundations chapter
(:prf:ref:`thm-ue-pairwise`), never enumerating their ``2**d`` outputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import check_positive_real
from ..channels import ExplicitChannel, HadamardChannel, UnaryChannel
from ._core import ChannelLike, CheckResult, Notion, as_channel, dispatch, register_closed_form, register_notion, within

__all__ = ["LDPResult", "check_ldp", "ldp_epsilon", "top2_max_sum"]


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


@register_closed_form("ldp", ExplicitChannel)
def _ldp_explicit(ch: ExplicitChannel) -> tuple[float, tuple[int, ...], int | None]:
    """``max_y [log max_x P(y|x) - log min_x P(y|x)]`` over producible outputs, with its witness."""
    m = ch.matrix
    hi = m.max(axis=0)
    lo = m.min(axis=0)
    used = hi > 0
    if not np.any(used) or m.shape[0] < 2:
        return 0.0, (), None
    with np.errstate(divide="ignore"):
        gap = np.where(used, np.log(np.where(used, hi, 1.0)) - np.log(lo), -np.inf)
    y = int(np.argmax(gap))
    value = float(gap[y])
    if value <= 0.0:
        return 0.0, (0, 1), y
    return value, (int(np.argmax(m[:, y])), int(np.argmin(m[:, y]))), y


@register_closed_form("ldp", UnaryChannel)
def _ldp_unary(ch: UnaryChannel) -> tuple[float, tuple[int, ...], int | None]:
    """``max_{x != x'} u[x] + v[x']`` (Foundations chapter, :prf:ref:`thm-ue-pairwise`)."""
    u, v = ch.separable_log_ratio()
    if u.size < 2:
        return 0.0, (), None
    value, x, xp = top2_max_sum(u, v)
    return max(0.0, value), (x, xp), None


@register_closed_form("ldp", HadamardChannel)
def _ldp_hadamard(ch: HadamardChannel) -> tuple[float, tuple[int, ...], int | None]:
    """HR: ``|log p/q|`` (every two rows differ in both directions); FHR: ``inf`` (outputs one row cannot produce).

    Closed form of :meth:`~ldpkit.channels.HadamardChannel.pairwise_log_ratio`; agrees with
    enumeration for small ``K`` (``tests/test_hadamard.py``).
    """
    if ch.n_inputs < 2:
        return 0.0, (), None
    return ch.ldp_epsilon(), (0, 1), None


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
    ch = as_channel(ch)
    return float(dispatch("ldp", ch, what="LDP")[0])


def check_ldp(ch: ChannelLike, epsilon: float) -> LDPResult:
    """Check eps-LDP: every ratio ``P(y|x) / P(y|x') <= e^eps`` (up to the relative tolerance).

    Foundations chapter, :prf:ref:`def-ldp`.
    """
    ch = as_channel(ch)
    eps = check_positive_real(epsilon, "epsilon")
    value, pair, y = dispatch("ldp", ch, what="LDP")
    return LDPResult(
        satisfied=bool(within(value, eps)),
        slack=eps - value,
        worst_inputs=tuple(pair),
        worst_output=y,
        epsilon=eps,
        ldp_epsilon=float(value),
    )


register_notion(Notion("ldp", check_ldp, required=("epsilon",), description="standard LDP (Foundations, def-ldp)"))
