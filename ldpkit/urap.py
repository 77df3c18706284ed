"""Utility-optimised RAPPOR (uRAP) for utility-optimised LDP (ULDP), beside uRR.

Murakami and Kawamoto (USENIX Security 2019, :cite:`murakami2019utility`) give two mechanisms for
ULDP: uRR (:mod:`ldpkit.urr`) and uRAP, the unary-encoding counterpart.  The domain splits into
sensitive items ``X_S`` (``d_S >= 1``) and non-sensitive items ``X_N``; the report is ``d`` bits,
independent given the input, bit ``i`` set with probability ``a_i`` when the user holds ``i`` and
``b_i`` otherwise:

* a sensitive item's bit is perturbed as in a unary encoding with ratio ``e^eps``: ``a = theta``,
  ``b = phi = theta / (theta + (1 - theta) e^eps)`` (``theta = 1/2`` gives OUE's bits,
  ``theta = e^(eps/2) / (1 + e^(eps/2))`` basic RAPPOR's);
* a non-sensitive item's bit is never set unless the user holds the item (``b = 0``), and then
  with probability ``a = theta (1 - e^-eps)``, the largest value ULDP allows.

Derived in the Field chapter (:prf:ref:`def-field-urap` and :prf:ref:`thm-field-urap-uldp`; ULDP is
:prf:ref:`def-uldp`): an output with a non-sensitive bit set is produced only by the holder of that
item (an invertible output); on the other outputs every ratio is at most ``e^eps``, with equality
between a sensitive item and any other item.  uRAP is a pure protocol with per-item supports
``(a_i, b_i)``, so the estimator and its variance are the pure ones (Foundations chapter,
:prf:ref:`thm-pure-variance`); a non-sensitive item's variance is ``c_i (1 - a_i) / a_i``.

Its channel is a unary channel with deterministic bits (:class:`URAPChannel`); the accountant's
closed forms of this module give its ULDP value (the protected outputs are those with every
non-sensitive bit clear) and its LIP value (infinite as soon as one item is non-sensitive) without
enumerating the ``2**d`` outputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from ._validation import EPS_MAX, EPS_MIN, check_domain_size, check_epsilon, check_sensitive_mask
from ._validation import check_real
from .accountant import REL_TOL, Guarantee, ULDPResult, Witness, closed_forms, register_closed_form, top2_max_sum
from .accountant import unary_loss_terms
from .channels import UnaryChannel
from .family import BudgetSweep, Family, register_family
from .unary import UNARY_CODEC, UnaryEncoding

__all__ = ["URAP", "URAPChannel", "urap_bits"]


def urap_bits(epsilon: float, theta: float = 0.5) -> tuple[float, float, float]:
    """``(theta, phi, a_N)``: a sensitive bit's ``a`` and ``b`` and a non-sensitive bit's ``a``.

    ``phi = theta / (theta + (1 - theta) e^eps)`` and ``a_N = theta (1 - e^-eps)`` (Field chapter,
    :prf:ref:`def-field-urap`), written with ``e^-eps`` so that no term overflows.

    Examples
    --------
    >>> from ldpkit.urap import urap_bits
    >>> [round(v, 4) for v in urap_bits(1.0)]          # OUE's bits, and the non-sensitive one
    [0.5, 0.2689, 0.3161]
    """
    eps = check_epsilon(epsilon)
    th = check_real(theta, "theta", 0.0, 1.0, low_open=True, high_open=True)
    tail = math.exp(-eps)
    phi = th * tail / (th * tail + 1.0 - th)
    return th, phi, -th * math.expm1(-eps)


@dataclass(frozen=True)
class URAPChannel(UnaryChannel):
    """A unary channel some of whose bits are never set by a non-holder (``b_i = 0``): uRAP's.

    The same law as :class:`~ldpkit.channels.UnaryChannel` (every closed form of that kind applies);
    this kind adds the ULDP and LIP closed forms for the deterministic bits (module docstring).

    Examples
    --------
    >>> from ldpkit import accountant
    >>> from ldpkit.urap import URAP
    >>> ch = URAP(5, 1.0, sensitive=[0, 1]).channel()
    >>> ch.kind, round(accountant.uldp_epsilon(ch, sensitive=[0, 1]), 9), accountant.ldp_epsilon(ch)
    ('urap', 1.0, inf)
    """

    kind: ClassVar[str] = "urap"


def _random_bits(ch: URAPChannel) -> bool:
    """Whether every ``a`` lies in ``(0, 1)`` and every ``b`` in ``[0, 1)`` (the closed forms' domain)."""
    return bool(np.all((ch.a > 0) & (ch.a < 1) & (ch.b >= 0) & (ch.b < 1)))


@register_closed_form("uldp", URAPChannel)
def _uldp_urap(ch: URAPChannel, sens_mask: np.ndarray, eps: float, protected: Any) -> Any:
    """ULDP with the smallest admissible protected set (Field chapter, :prf:ref:`thm-field-urap-uldp`).

    ``Z = {i : b_i = 0}``.  An output with exactly one bit ``k`` of ``Z`` set is produced by input
    ``k`` alone: invertible when ``k`` is non-sensitive, otherwise it must be protected and its
    ratio is infinite.  An output with two bits of ``Z`` set is impossible.  On the outputs with no
    bit of ``Z`` set, ``log P(y|x) / P(y|x') = U[x] + V[x']`` with the unary terms for the other
    bits and ``U = log(1 - a)``, ``V = -log(1 - a)`` for the bits of ``Z``.
    """
    if protected is not None or not _random_bits(ch):
        return NotImplemented
    zero = ch.b == 0
    if not zero.any():
        return closed_forms("uldp").lookup(UnaryChannel)(ch, sens_mask, eps, protected)  # type: ignore[misc]
    d = ch.n_inputs
    bad = np.flatnonzero(zero & sens_mask)
    if bad.size:  # a sensitive item that only its holder reports: an output no other input produces
        k = int(bad[0])
        value, pair = math.inf, (k, (k + 1) % d)
    else:
        u, v = unary_loss_terms(ch)
        keep = np.log1p(-ch.a)
        u = np.where(zero, keep, u)
        v = np.where(zero, -keep, v)
        value, x, xp = top2_max_sum(u, v)
        value, pair = max(0.0, value), (x, xp)
    return ULDPResult(
        satisfied=bool(value <= eps + REL_TOL * max(1.0, abs(eps))),
        slack=eps - value,
        worst_inputs=pair,
        worst_output=None,
        epsilon=eps,
        uldp_epsilon=float(value),
        protected=None,
        invertibility_violations=(),
        n_invertibility_violations=0,
    )


@register_closed_form("lip", URAPChannel)
def _lip_urap(ch: URAPChannel, prior: np.ndarray) -> Any:
    """LIP is infinite once some bit has ``b_k = 0`` (Field chapter, :prf:ref:`thm-field-urap-uldp`).

    The output with bit ``k`` alone set among those bits is impossible under every ``x != k``
    while ``P(y) > 0`` (or, for ``prior[k] = 0``, possible under ``k`` while ``P(y) = 0``).
    """
    if not _random_bits(ch):
        return NotImplemented
    zero = np.flatnonzero(ch.b == 0)
    if zero.size == 0:
        return closed_forms("lip").lookup(UnaryChannel)(ch, prior)  # type: ignore[misc]
    k = int(zero[0])
    x = k if prior[k] == 0 else (k + 1) % ch.n_inputs
    return Witness(math.inf, (x,), None)


class URAP(UnaryEncoding):
    """Utility-optimised RAPPOR over ``d`` items (module docstring).

    Parameters
    ----------
    d
        Domain size (``>= 2``).
    uldp_epsilon
        ULDP budget (finite, positive): the ratio bound on the protected outputs.
    sensitive
        Boolean mask of length ``d`` or a list of distinct sensitive items (at least one).
    theta
        Probability that a sensitive item's bit stays set for its holder, in ``(0, 1)``; the
        default ``1/2`` is OUE's (the least variance for a rare sensitive item).

    Notes
    -----
    ``epsilon`` is the standard-LDP budget declared: ``inf`` as soon as an item is non-sensitive
    (its set bit reveals the input), the ULDP budget when every item is sensitive (the sensitive
    block alone: OUE at ``theta = 1/2``).

    Examples
    --------
    >>> from ldpkit import accountant
    >>> from ldpkit.urap import URAP
    >>> urap = URAP(5, 1.0, sensitive=[0, 1])
    >>> urap.epsilon, [round(float(a), 4) for a in urap.a], [round(float(b), 4) for b in urap.b]
    (inf, [0.5, 0.5, 0.3161, 0.3161, 0.3161], [0.2689, 0.2689, 0.0, 0.0, 0.0])
    >>> bool(accountant.verify(urap)), [g.notion for g in urap.guarantees()]
    (True, ['uldp'])
    >>> [round(float(v), 1) for v in urap.variance([50, 30, 15, 4, 1])]
    [418.3, 398.3, 32.5, 8.7, 2.2]
    """

    def __init__(self, d: int, uldp_epsilon: float, sensitive: ArrayLike, theta: float = 0.5) -> None:
        d = check_domain_size(d)
        eps = check_epsilon(uldp_epsilon, "uldp_epsilon")
        mask = check_sensitive_mask(sensitive, d)
        th, phi, a_n = urap_bits(eps, theta)
        a = np.where(mask, th, a_n)
        b = np.where(mask, phi, 0.0)
        super().__init__(a, b, epsilon=eps if bool(mask.all()) else None)
        #: the ULDP budget (ratio bound on the protected outputs)
        self.uldp_epsilon = eps
        #: boolean mask of the sensitive items
        self.sensitive = mask
        #: indices of the sensitive items (ascending)
        self.sensitive_items = np.flatnonzero(mask)
        self.d_s = int(mask.sum())
        #: a sensitive bit's probability of staying set for its holder
        self.theta = th
        self._channel = URAPChannel(a, b)

    def __repr__(self) -> str:
        return f"URAP(d={self.d}, uldp_epsilon={self.uldp_epsilon:.6g}, d_s={self.d_s}, theta={self.theta:.6g})"

    def channel(self) -> URAPChannel:
        """The unary channel with ``b = 0`` on the non-sensitive items (:class:`URAPChannel`)."""
        assert isinstance(self._channel, URAPChannel)  # built so by the constructor
        return self._channel

    def guarantees(self) -> list[Guarantee]:
        """``(X_S, eps)``-ULDP; LDP at the same budget too when every item is sensitive."""
        out = [Guarantee("uldp", epsilon=self.uldp_epsilon, sensitive=self.sensitive_items.copy())]
        return out + (super().guarantees() if math.isfinite(self.epsilon) else [])

    def report_parameters(self) -> dict[str, Any]:
        """``d``, the ULDP budget, the sensitive set and ``theta``."""
        return {"d": self.d, "epsilon": self.uldp_epsilon,
                "sensitive": tuple(int(i) for i in self.sensitive_items), "theta": self.theta}

    def arguments(self) -> dict[str, Any]:
        """``d``, ``uldp_epsilon``, the sensitive items and ``theta``."""
        return {"d": self.d, "uldp_epsilon": self.uldp_epsilon, "sensitive": self.sensitive_items.copy(),
                "theta": self.theta}


# ---------------------------------------------------------------------------- the family
def _examples() -> tuple[URAP, ...]:
    return (URAP(5, 1.0, [0, 2]), URAP(4, 0.5, [1, 2, 3], theta=0.7), URAP(3, 2.0, [0, 1, 2]))


def _sweeps() -> tuple[BudgetSweep, ...]:
    return (BudgetSweep("URAP", lambda e: URAP(4, e, [0, 1]), EPS_MIN, EPS_MAX, "unary", eps_arg="uldp_epsilon",
                        variants=(("URAP(sensitive=[0, 2])", lambda: URAP(4, 1.0, [0, 2])),)),)


def _at_budget(d: int, t: float, sensitive: Any = None) -> URAP:
    """uRAP at ``t`` for the sensitive items given, else for every item (uRAP is then OUE)."""
    return URAP(d, t, np.arange(d) if sensitive is None else sensitive)


register_family(Family(
    "uRAP", "murakami2019utility", URAP, _examples, "utility-optimised RAPPOR", reports="unary", codec=UNARY_CODEC,
    sweeps=_sweeps, at_budget=_at_budget, parameter="epsilon on the protected outputs", context=("sensitive",),
    hi=50.0, audit_skip="no finite LDP epsilon (a non-sensitive bit reveals its input); audited per output", order=75))
