"""Utility-optimised randomised response (uRR) for utility-optimised LDP (ULDP).

Murakami and Kawamoto (USENIX Security 2019, :cite:`murakami2019utility`) split the domain
into sensitive items ``X_S`` (``d_S = |X_S| >= 1``) and non-sensitive items ``X_N``.  ULDP asks
for the LDP ratio bound only on *protected* outputs and lets the other outputs reveal a
non-sensitive input.  Derived in the IPLDP chapter (:prf:ref:`def-uldp`, :eq:`eq-urr` and
:prf:ref:`thm-urr-uldp`); the estimator is the pure-protocol one
(Foundations chapter, :prf:ref:`thm-pure-variance`).

With ``D = d_S + e^eps - 1`` the channel is

* sensitive input ``x``: output ``x`` w.p. ``c1 = e^eps / D``, each other sensitive item
  w.p. ``c2 = 1 / D``, never a non-sensitive item;
* non-sensitive input ``x``: output ``x`` w.p. ``c3 = (e^eps - 1) / D``, each sensitive item
  w.p. ``c2``, never another non-sensitive item.

Checks from first principles (also done by enumeration in the tests):

* rows sum to one: ``c1 + (d_S - 1) c2 = (e^eps + d_S - 1) / D = 1`` and
  ``c3 + d_S c2 = (e^eps - 1 + d_S) / D = 1``;
* the protected outputs are the sensitive items; each has probability ``c1`` or ``c2``
  under every input, so the ratio is at most ``c1 / c2 = e^eps`` (attained by the pair
  "input = y" versus any other input);
* a non-sensitive output ``y`` has probability ``c3 > 0`` under input ``y`` and 0 under every
  other input: it reveals the input (the invertible outputs of ULDP), so the standard LDP
  epsilon of the channel is infinite whenever a non-sensitive item exists.

uRR is a pure protocol with per-item supports: sensitive items ``(p_i, q_i) = (c1, c2)``
(every input other than ``i`` outputs ``i`` w.p. ``c2``), non-sensitive items ``(c3, 0)``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike, as_generator
from ._validation import EPS_MAX, EPS_MIN, check_domain_size, check_epsilon, check_items, check_sensitive_mask
from .accountant import Guarantee
from .base import ItemReportOracle
from .channels import ExplicitChannel
from .family import BudgetSweep, Family, register_family, uniform_loss_inverse
from .reports import ItemReports

if TYPE_CHECKING:
    from .contracts import Contract

__all__ = ["URR", "MAX_EXPLICIT_D"]

#: largest domain for which :meth:`URR.channel` builds the dense ``d x d`` matrix
MAX_EXPLICIT_D = 4096


class URR(ItemReportOracle):
    """Utility-optimised randomised response over ``d`` items.

    Parameters
    ----------
    d
        Domain size (``>= 2``).
    uldp_epsilon
        ULDP budget for the sensitive items (finite, positive).
    sensitive
        Boolean mask of length ``d`` or a list of distinct sensitive item indices; at least
        one item must be sensitive, the others are non-sensitive.

    Notes
    -----
    ``epsilon`` is the *standard* LDP budget the mechanism declares: ``math.inf`` (none) as
    soon as one item is non-sensitive (its output reveals the input), and the ULDP budget when
    every item is sensitive (uRR is then GRR).  The ULDP budget is :attr:`uldp_epsilon`.

    Examples
    --------
    >>> from ldpkit import URR
    >>> urr = URR(5, 1.0, sensitive=[0, 1])
    >>> urr.epsilon, urr.uldp_epsilon          # non-sensitive outputs reveal the input
    (inf, 1.0)
    >>> round(urr.c1, 4), round(urr.c2, 4), round(urr.c3, 4)
    (0.7311, 0.2689, 0.4621)
    >>> [g.notion for g in urr.guarantees()]
    ['uldp']
    """

    def __init__(self, d: int, uldp_epsilon: float, sensitive: ArrayLike) -> None:
        d = check_domain_size(d)
        eps = check_epsilon(uldp_epsilon, "uldp_epsilon")
        mask = check_sensitive_mask(sensitive, d)
        super().__init__(d)
        #: the ULDP budget (ratio bound ``e^eps`` on the sensitive, protected outputs)
        self.uldp_epsilon = eps
        #: the standard-LDP budget declared, the ULDP budget when every item is sensitive (else none)
        self.epsilon = eps if bool(mask.all()) else math.inf
        #: boolean mask of the sensitive items
        self.sensitive = mask
        #: indices of the sensitive items (ascending)
        self.sensitive_items = np.flatnonzero(mask)
        self.d_s = int(mask.sum())
        # e^eps / (d_S + e^eps - 1) and friends, written with e^-eps (no overflow)
        tail = math.exp(-eps)
        self.c1 = min(1.0, 1.0 / (1.0 + (self.d_s - 1) * tail))  # d_S = 1 gives exactly 1; avoid 1 + ulp
        self.c2 = tail * self.c1
        self.c3 = -math.expm1(-eps) * self.c1
        self.p_support = np.where(mask, self.c1, self.c3)
        self.q_support = np.where(mask, self.c2, 0.0)

    def __repr__(self) -> str:
        return f"URR(d={self.d}, uldp_epsilon={self.uldp_epsilon:.6g}, d_s={self.d_s})"

    def report_parameters(self) -> dict[str, Any]:
        """``d``, the ULDP budget and the sensitive set."""
        return {"d": self.d, "epsilon": self.uldp_epsilon, "sensitive": tuple(int(i) for i in self.sensitive_items)}

    def arguments(self) -> dict[str, Any]:
        """``d``, ``uldp_epsilon`` and the sensitive items."""
        return {"d": self.d, "uldp_epsilon": self.uldp_epsilon, "sensitive": self.sensitive_items.copy()}

    def guarantees(self) -> list[Guarantee]:
        """``(X_S, eps)``-ULDP with the sensitive items as protected outputs; LDP too when ``X_S = X``."""
        out = [Guarantee("uldp", epsilon=self.uldp_epsilon, sensitive=self.sensitive_items.copy())]
        return out + super().guarantees()

    def channel(self) -> ExplicitChannel:
        """The ``d x d`` matrix ``P[x, y]`` (outputs are items, in index order)."""
        if self.d > MAX_EXPLICIT_D:
            raise ValueError(f"URR channel matrix for d={self.d} exceeds MAX_EXPLICIT_D={MAX_EXPLICIT_D}")
        m = np.zeros((self.d, self.d))
        m[:, self.sensitive] = self.c2
        diag = np.where(self.sensitive, self.c1, self.c3)
        m[np.arange(self.d), np.arange(self.d)] = diag
        return ExplicitChannel(m)

    def perturb(self, items: ArrayLike, rng: RNGLike = None) -> ItemReports:
        """Return one reported item per user (int64 :class:`~ldpkit.reports.ItemReports`).

        Sampled as: keep the input with probability ``lam = c1 - c2`` (sensitive input) or
        ``c3`` (non-sensitive input), otherwise report a uniform sensitive item (possibly the
        input itself).  A sensitive input is then reported w.p. ``lam + (1 - lam)/d_S = c1``
        and every other sensitive item w.p. ``(1 - lam)/d_S = c2``; a non-sensitive input is
        reported w.p. ``c3`` and each sensitive item w.p. ``(1 - c3)/d_S = c2``.
        """
        items = check_items(items, self.d)
        gen = as_generator(rng)
        keep_prob = np.where(self.sensitive[items], self.c1 - self.c2, self.c3)
        keep = gen.random(items.size) < keep_prob
        other = self.sensitive_items[gen.integers(0, self.d_s, size=items.size)]
        return ItemReports(np.where(keep, items, other), self.provenance)

    def _simulate_support(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # Same decomposition as perturb: kept reports are independent binomials per input
        # item (lam for sensitive inputs, c3 for non-sensitive ones); every other report is
        # an independent uniform sensitive item, so together they are one multinomial over
        # the sensitive block.  Exact joint law in O(d).
        keep_prob = np.where(self.sensitive, self.c1 - self.c2, self.c3)
        kept = rng.binomial(counts, keep_prob)
        rest = int(counts.sum() - kept.sum())
        out = kept.astype(np.int64)
        out[self.sensitive_items] += rng.multinomial(rest, np.full(self.d_s, 1.0 / self.d_s))
        return out


# ---------------------------------------------------------------------------- the family
def _examples() -> tuple[URR, ...]:
    return (URR(5, 1.0, [0, 2]), URR(4, 0.5, [1, 2, 3]), URR(3, 2.0, [0, 1, 2]))


def _sweeps() -> tuple[BudgetSweep, ...]:
    return (BudgetSweep("URR", lambda e: URR(4, e, [0, 1]), EPS_MIN, EPS_MAX, "item", eps_arg="uldp_epsilon",
                        variants=(("URR(sensitive=[0, 2])", lambda: URR(4, 1.0, [0, 2])),)),)


def _at_budget(d: int, t: float, sensitive: Any = None) -> URR:
    """uRR at ``t`` for the sensitive items given, else for every item (uRR is then GRR)."""
    return URR(d, t, np.arange(d) if sensitive is None else sensitive)


def _inverse(c: Contract) -> Optional[float]:
    """The largest ``t`` keeping the promise, in closed form (IPLDP chapter).

    Without sensitive items uRR covers every item and is GRR
    (:func:`~ldpkit.family.uniform_loss_inverse`).  On the promise's sensitive items ``S``:
    uRR at ``t`` is ``(S, S, t)``-ULDP tightly (:prf:ref:`thm-urr-uldp`), so under ``(S, eps)``-ULDP
    ``t = eps``; it is IPRR with the budget ``t`` on every item of ``S``, whose column ``x`` has
    the largest ratio ``e^t`` and whose other columns are invertible (:prf:ref:`thm-iprr-ipldp`),
    so under ``(S, E)``-IPLDP ``t = min_{x in S} eps_x``.
    """
    if c.sensitive is None:
        return uniform_loss_inverse(c)
    notion = c.guarantee.notion
    if notion == "uldp" and c.params.get("protected") is None:
        return float(c.params["epsilon"])
    if notion == "ipldp":
        e = c.budget_vector()
        return float(e[np.isfinite(e)].min())
    return None


register_family(Family(
    "uRR", "murakami2019utility", URR, _examples, "utility-optimised randomised response", sweeps=_sweeps,
    at_budget=_at_budget, parameter="epsilon on the protected outputs", context=("sensitive",), hi=50.0,
    audit_skip="no finite LDP epsilon (a non-sensitive output reveals its input); audited per output", order=70,
    inverse=_inverse))
