"""Binary local hashing (BLH): local hashing into two buckets.

Wang et al. (USENIX Security 2017, :cite:`wang2017locally`) present BLH as the case ``g = 2`` of
local hashing (the random-projection protocol of Bassily and Smith, :cite:`bassily2015local`, in
their framework); Cormode, Maddock and Maple (VLDB 2021, :cite:`cormode2021frequency`) compare it
under that name.  It is OLH's scheme with ``g`` fixed at 2 rather than ``round(e^eps + 1)``: one
mechanism at each budget, but a different *family* of mechanisms along the budget, so it is
registered as a family of its own (calibration takes the best member of each family, and BLH's
members are not OLH's).  Everything but the hash range is :class:`~ldpkit.olh.OLH`'s, including
the report type and its codec.

With a fresh hash per user BLH is, in law, a unary encoding: the set of items a report supports is
a vector of ``d`` bits, the own item's bit 1 with probability ``p' = e^eps / (e^eps + 1)`` and every
other bit 1 with probability ``1/2``, independently (Field chapter, :prf:ref:`thm-blh-unary`).
"""

from __future__ import annotations

from typing import Any

from .family import BudgetSweep, Family, domain_sweep, register_family
from .olh import HASHED_CODEC, OLH

__all__ = ["BLH"]


class BLH(OLH):
    """Binary local hashing over ``d`` items: :class:`~ldpkit.olh.OLH` with ``g = 2``.

    Each user draws a 64-bit seed, hashes the item to one of two buckets and reports
    ``(seed, bucket)``, keeping the bucket with probability ``p' = e^eps / (e^eps + 1)``.  The
    estimator's support probabilities are ``p* = p'`` and ``q* = 1/2`` (Foundations chapter,
    :prf:ref:`thm-olh-support`); the channel is exact over every hash function (Field chapter,
    :ref:`field-hashing`).

    Parameters
    ----------
    d
        Domain size (``>= 2``).
    epsilon
        LDP budget.

    Examples
    --------
    >>> from ldpkit import accountant
    >>> from ldpkit.blh import BLH
    >>> blh = BLH(10, 1.0)
    >>> blh, blh.g, round(blh.p_prime, 4), float(blh.q_support[0])
    (BLH(d=10, epsilon=1), 2, 0.7311, 0.5)
    >>> round(accountant.ldp_epsilon(blh), 6)
    1.0
    """

    def __init__(self, d: int, epsilon: float) -> None:
        super().__init__(d, epsilon, g=2)

    def __repr__(self) -> str:
        return f"BLH(d={self.d}, epsilon={self.epsilon:.6g})"

    def arguments(self) -> dict[str, Any]:
        """``d`` and ``epsilon``."""
        return {"d": self.d, "epsilon": self.epsilon}


def _examples() -> tuple[BLH, ...]:
    return (BLH(5, 1.0), BLH(4, 2.5))


def _sweeps() -> tuple[BudgetSweep, ...]:
    return (domain_sweep(BLH, "hashed"),)


register_family(Family(
    "BLH", "wang2017locally", BLH, _examples, "binary local hashing (local hashing into two buckets)",
    reports="hashed", codec=HASHED_CODEC, sweeps=_sweeps, at_budget=lambda d, t: BLH(d, t), hi=50.0,
    audit="BLH(d, eps)", order=41))
