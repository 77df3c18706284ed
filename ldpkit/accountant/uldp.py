"""Utility-optimised LDP (ULDP; Murakami and Kawamoto, USENIX Security 2019, Definition 2).

Bibtex ``murakami2019utility``.  Inputs are split into sensitive ``X_S`` and non-sensitive
``X_N``; outputs into *protected* ``Y_P`` and *invertible* ``Y_I``.  A channel is
``(X_S, Y_P, eps)``-ULDP when

1. every invertible output ``y`` is produced by exactly one input, and that input is
   non-sensitive: ``Q(y|x) > 0`` for one ``x`` in ``X_N`` and ``Q(y|x') = 0`` for every
   ``x' != x``;
2. every protected output satisfies the LDP ratio bound over *all* pairs of inputs:
   ``Q(y|x) <= e^eps Q(y|x')``.

When ``Y_P`` is not given, the accountant takes the smallest admissible one: an output is
invertible exactly when a single input produces it and that input is non-sensitive (any other
output would break condition 1), and protected otherwise.  Moving an output from ``Y_I`` to
``Y_P`` can only add constraints, so this choice decides whether *some* ``Y_P`` works.
IPLDP chapter, :prf:ref:`def-uldp`, where uRR is derived (:eq:`eq-urr`, :prf:ref:`thm-urr-uldp`).
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from .._validation import ArgumentTypeError, check_positive_real, describe
from ..channels import ExplicitChannel, UnaryChannel
from ._core import ChannelLike, CheckResult, ClosedForms, Notion, Witness, as_channel, closed_forms
from ._core import register_closed_form, register_notion, within
from .idldp import constant_pair_blocks
from .ipldp import sensitive_indices
from .ldp import ldp_epsilon

__all__ = ["ULDP", "ULDPResult", "check_uldp", "uldp_epsilon", "uldp_every_output_protected",
           "register_constant_pair_forms"]

_ULDP: ClosedForms["ULDPResult"] = closed_forms("uldp", "ULDP")


@dataclass(frozen=True, kw_only=True)
class ULDPResult(CheckResult):
    """Outcome of :func:`check_uldp`.

    Attributes
    ----------
    epsilon
        The budget checked on the protected outputs.
    uldp_epsilon
        The largest log-ratio ``log Q(y|x)/Q(y|x')`` over protected outputs and all pairs
        (the smallest budget condition 2 allows); ``0`` when no output is protected.
    protected
        Indices of the protected outputs used; ``None`` means every output (structured
        channels whose outputs are too many to list, all of them protected).
    invertibility_violations
        Up to 20 outputs of ``Y_I`` that break condition 1.
    n_invertibility_violations
        Their total number.

    Examples
    --------
    >>> from ldpkit import URR, accountant
    >>> res = accountant.check_uldp(URR(4, 1.0, sensitive=[0, 1]), 1.0, sensitive=[0, 1])
    >>> res.satisfied, res.protected, round(res.uldp_epsilon, 6)
    (True, (0, 1), 1.0)
    """

    notion = "uldp"

    epsilon: float
    uldp_epsilon: float
    protected: tuple[int, ...] | None
    invertibility_violations: tuple[int, ...]
    n_invertibility_violations: int

    @property
    def worst_pair(self) -> tuple[int, ...]:
        """Inputs ``(x, x')`` attaining :attr:`uldp_epsilon` at :attr:`~CheckResult.worst_output`."""
        return self.worst_inputs


def _protected_mask(protected: ArrayLike, n_out: int) -> np.ndarray | None:
    if protected is None:
        return None
    arr = np.asarray(protected)
    if arr.dtype == bool:
        if arr.ndim != 1 or arr.size != n_out:
            raise ValueError(f"protected mask has shape {arr.shape}, expected ({n_out},)")
        return arr.copy()
    if arr.ndim != 1 or not (arr.size == 0 or np.issubdtype(arr.dtype, np.integer)):
        raise ArgumentTypeError(
            f"protected must be a boolean mask or a list of output indices, got {describe(protected)}"
        )
    if arr.size and (arr.min() < 0 or arr.max() >= n_out):
        bad = arr[(arr < 0) | (arr >= n_out)][0]
        raise ValueError(f"protected contains output {int(bad)}, outside 0..{n_out - 1}")
    mask = np.zeros(n_out, dtype=bool)
    mask[arr] = True
    return mask


@_ULDP.register(ExplicitChannel)
def _uldp_explicit(ch: ExplicitChannel, sens_mask: np.ndarray, eps: float, protected: ArrayLike) -> ULDPResult:
    m = ch.matrix
    producers = m > 0
    n_prod = producers.sum(axis=0)
    sole = np.argmax(producers, axis=0)  # the producer when there is exactly one
    invertible_ok = (n_prod == 1) & ~sens_mask[sole]
    prot = _protected_mask(protected, m.shape[1])
    if prot is None:
        prot = ~invertible_ok
    bad_inv = np.flatnonzero(~prot & ~invertible_ok & (n_prod > 0))
    # outputs no input produces are harmless in either set
    cols = m[:, prot]
    if cols.shape[1]:
        hi = cols.max(axis=0)
        lo = cols.min(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            L = np.where(hi > 0, np.log(hi) - np.log(lo), 0.0)
        k = int(np.argmax(L))
        value = float(L[k])
        y = int(np.flatnonzero(prot)[k])
        pair: tuple[int, ...] = (int(np.argmax(m[:, y])), int(np.argmin(m[:, y])))
    else:
        value, y, pair = 0.0, None, ()
    return ULDPResult(
        satisfied=bool(within(value, eps)) and bad_inv.size == 0,
        slack=eps - value,
        worst_inputs=pair,
        worst_output=y,
        epsilon=eps,
        uldp_epsilon=value,
        protected=tuple(int(j) for j in np.flatnonzero(prot)),
        invertibility_violations=tuple(int(j) for j in bad_inv[:20]),
        n_invertibility_violations=int(bad_inv.size),
    )


@_ULDP.register(UnaryChannel)
def _uldp_unary(ch: UnaryChannel, sens_mask: np.ndarray, eps: float, protected: ArrayLike) -> ULDPResult | Any:
    """Unary channels whose bits are all random (``0 < a, b < 1``), with ``Y_P`` left to the accountant.

    Every output then has positive probability under every input, so no output can be
    invertible: the smallest admissible ``Y_P`` is every output and ULDP is LDP on all of
    them, whatever the sensitive set.  Other unary channels return ``NotImplemented``
    (enumerated when small).
    """
    a, b = ch.a, ch.b
    if protected is not None or not np.all((a > 0) & (a < 1) & (b > 0) & (b < 1)):
        return NotImplemented
    return uldp_every_output_protected(ldp_epsilon(ch), (), eps)


def uldp_every_output_protected(value: float, worst_inputs: tuple[int, ...], eps: float) -> ULDPResult:
    """The ULDP result of a channel none of whose outputs is invertible: every output is protected.

    For the closed forms of channels whose every output has positive probability under every
    input (``protected=None``): ULDP is then LDP on all outputs, so the result is the channel's
    LDP value ``value``, attained at ``worst_inputs``, against the budget ``eps``.

    Examples
    --------
    >>> from ldpkit.accountant import uldp_every_output_protected
    >>> res = uldp_every_output_protected(1.0, (0, 1), 1.5)
    >>> res.satisfied, res.slack, res.protected
    (True, 0.5, None)
    """
    return ULDPResult(
        satisfied=bool(within(value, eps)),
        slack=eps - value,
        worst_inputs=worst_inputs,
        worst_output=None,
        epsilon=eps,
        uldp_epsilon=value,
        protected=None,
        invertibility_violations=(),
        n_invertibility_violations=0,
    )


def check_uldp(
    ch: ChannelLike, epsilon: float, *, sensitive: ArrayLike, protected: Optional[ArrayLike] = None
) -> ULDPResult:
    """Check ``(X_S, Y_P, eps)``-ULDP (see the module docstring for the definition).

    Parameters
    ----------
    ch
        Channel or mechanism.
    epsilon
        Budget of the protected outputs.
    sensitive
        Sensitive inputs ``X_S``: boolean mask of length ``n_inputs`` or distinct indices.
    protected
        Protected outputs ``Y_P``: boolean mask of length ``n_outputs``, index list, or
        ``None`` for the smallest admissible set.

    Examples
    --------
    >>> import ldpkit
    >>> urr = ldpkit.URR(5, 1.0, sensitive=[0, 1])
    >>> ldpkit.accountant.check_uldp(urr, 1.0, sensitive=[0, 1]).satisfied
    True
    >>> ldpkit.accountant.check_ldp(urr, 1.0).satisfied   # non-sensitive outputs reveal the input
    False
    """
    ch = as_channel(ch)
    eps = check_positive_real(epsilon, "epsilon")
    return _ULDP.compute(ch, _sensitive_mask(ch, sensitive), eps, protected)


def _sensitive_mask(ch: ChannelLike, sensitive: ArrayLike) -> np.ndarray:
    d = as_channel(ch).n_inputs
    mask = np.zeros(d, dtype=bool)
    mask[sensitive_indices(sensitive, d)] = True
    return mask


def uldp_epsilon(ch: ChannelLike, sensitive: ArrayLike, protected: Optional[ArrayLike] = None) -> float:
    """Smallest ``eps`` with ``(X_S, Y_P, eps)``-ULDP; ``inf`` when condition 1 fails for the given ``Y_P``.

    With ``protected=None`` the accountant takes the smallest admissible ``Y_P`` (condition 1
    then holds), so the value is the largest log-ratio over the protected outputs.

    IPLDP chapter, :prf:ref:`def-uldp`.

    Examples
    --------
    >>> from ldpkit import GRR, URR, accountant
    >>> round(accountant.uldp_epsilon(URR(4, 1.0, sensitive=[0, 1]), sensitive=[0, 1]), 6)
    1.0
    >>> round(accountant.uldp_epsilon(GRR(3, 1.0), sensitive=[0]), 6)   # no output can be invertible
    1.0
    """
    ch = as_channel(ch)
    res: ULDPResult = _ULDP.compute(ch, _sensitive_mask(ch, sensitive), 1.0, protected)
    return float("inf") if res.n_invertibility_violations else float(res.uldp_epsilon)


ULDP: Notion[ULDPResult] = register_notion(
    Notion("uldp", check_uldp, uldp_epsilon, context=("sensitive",), optional=("protected",), display="ULDP",
           order=60, label="def-uldp", description="utility-optimised LDP (Murakami and Kawamoto, def-uldp)")
)


def register_constant_pair_forms(
    kind: type, value: Callable[[Any], float], uldp_applies: Callable[[Any], bool] = lambda ch: True
) -> None:
    """Register the LDP, pairwise, ID-LDP and ULDP closed forms of a channel kind whose every pair is alike.

    For channels of class ``kind`` on which every ordered pair of distinct inputs has the same
    largest log-ratio ``value(ch)`` and every output is possible under every input (so, for
    ULDP, every output is protected and ULDP is LDP).  The LDP witness is the pair ``(0, 1)``;
    ``uldp_applies(ch)`` false (for example a deterministic channel) leaves ULDP to enumeration.

    Examples
    --------
    >>> from ldpkit import accountant
    >>> from ldpkit.hadamard_mechanism import HM      # its channel's forms are registered this way
    >>> accountant.pairwise_log_ratio(HM(3, 1.0).channel()).round(12).tolist()
    [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]
    """

    @register_closed_form("ldp", kind)
    def _ldp(ch: Any) -> Witness:
        return Witness(value(ch), (0, 1), None) if ch.n_inputs >= 2 else Witness(0.0, (), None)

    @register_closed_form("pairwise", kind)
    def _pairwise(ch: Any) -> np.ndarray:
        out = np.full((ch.n_inputs, ch.n_inputs), value(ch))
        np.fill_diagonal(out, 0.0)
        return out

    @register_closed_form("id-ldp", kind)
    def _idldp(ch: Any, e: np.ndarray, rule: Any) -> Any:
        return constant_pair_blocks(ch.n_inputs, value(ch), e, rule)

    @register_closed_form("uldp", kind)
    def _uldp(ch: Any, sens_mask: np.ndarray, eps: float, protected: Any) -> Any:
        if protected is not None or not uldp_applies(ch):
            return NotImplemented
        return uldp_every_output_protected(value(ch), (0, 1), eps)
