"""Generalised randomised response (GRR, also k-RR).

Derived in the Foundations chapter (eq. :eq:`eq-grr` and :prf:ref:`thm-pure-variance`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike, as_generator
from ._validation import check_domain_size, check_epsilon, check_items
from .base import ItemReportOracle
from .channels import ExplicitChannel, rr_probabilities
from .family import BudgetSweep, Family, domain_sweep, register_family, uniform_loss_inverse
from .reports import ItemReports

__all__ = ["GRR", "KRR"]

#: largest domain for which :meth:`GRR.channel` builds the dense ``d x d`` matrix
MAX_EXPLICIT_D = 4096


class GRR(ItemReportOracle):
    """Generalised randomised response over ``d`` items.

    Each user reports the true item with probability ``p = e^eps / (e^eps + d - 1)`` and
    each other item with probability ``q = 1 / (e^eps + d - 1)``.

    Parameters
    ----------
    d
        Domain size (``>= 2``).
    epsilon
        LDP budget, finite and positive.

    Examples
    --------
    >>> from ldpkit import GRR, accountant
    >>> grr = GRR(4, epsilon=1.0)
    >>> round(grr.p, 4), round(grr.q, 4)              # e^eps / (e^eps + 3), 1 / (e^eps + 3)
    (0.4754, 0.1749)
    >>> reports = grr.perturb([0, 1, 2, 3], rng=0)    # one reported item per user
    >>> reports.shape, str(reports.dtype)
    ((4,), 'int64')
    >>> round(accountant.ldp_epsilon(grr.channel()), 6)
    1.0
    """

    def __init__(self, d: int, epsilon: float) -> None:
        d = check_domain_size(d)
        eps = check_epsilon(epsilon)
        super().__init__(d)
        self.epsilon = eps
        self.p, self.q = rr_probabilities(eps, d)
        self.p_support = np.full(d, self.p)
        self.q_support = np.full(d, self.q)

    def arguments(self) -> dict[str, Any]:
        """``d`` and ``epsilon``."""
        return {"d": self.d, "epsilon": self.epsilon}

    def channel(self) -> ExplicitChannel:
        """The ``d x d`` matrix with ``p`` on the diagonal and ``q`` elsewhere."""
        if self.d > MAX_EXPLICIT_D:
            raise ValueError(f"GRR channel matrix for d={self.d} exceeds MAX_EXPLICIT_D={MAX_EXPLICIT_D}")
        m = np.full((self.d, self.d), self.q)
        np.fill_diagonal(m, self.p)
        return ExplicitChannel(m)

    def perturb(self, items: ArrayLike, rng: RNGLike = None) -> ItemReports:
        """Return one reported item per user (int64 :class:`~ldpkit.reports.ItemReports`)."""
        items = check_items(items, self.d)
        gen = as_generator(rng)
        keep = gen.random(items.size) < self.p
        other = gen.integers(0, self.d - 1, size=items.size)
        other += other >= items  # uniform over the d-1 items different from the input
        return ItemReports(np.where(keep, items, other), self.provenance)

    def _simulate_support(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # Report x with probability lam = p - q, else a uniform item of all d (x included):
        # P(x) = lam + (1 - lam)/d = p and P(y != x) = (1 - lam)/d = q. The kept reports are
        # independent binomials and the rest one multinomial: exact and O(d).
        lam = self.p - self.q
        kept = rng.binomial(counts, lam)
        rest = int(counts.sum() - kept.sum())
        return kept + rng.multinomial(rest, np.full(self.d, 1.0 / self.d))


#: k-ary randomised response: the name the LDP literature (and other libraries) give GRR; the same
#: class, so its reports and provenance say ``GRR``
KRR = GRR


# ---------------------------------------------------------------------------- the family
def _examples() -> tuple[GRR, ...]:
    return (GRR(2, 0.5), GRR(5, 1.0), GRR(4, 3.0))


def _sweeps() -> tuple[BudgetSweep, ...]:
    return (domain_sweep(GRR, "item"),)


register_family(Family(
    "GRR", "wang2017locally", GRR, _examples, "generalised randomised response", sweeps=_sweeps,
    at_budget=lambda d, t: GRR(d, t), hi=50.0, aliases=("KRR",), audit="GRR(d, eps)", order=10,
    inverse=uniform_loss_inverse))
