"""The LIP paper's own closed forms (Jiang, Li, Tandon, CNS 2018), as printed, against the kit's exact optima.

Bibtex ``jiang2018lip``.  Theorem 2, Corollary 1 and Propositions 3 and 4 are evaluated as printed
(``paper_*``), each point checked by the accountant, so that the book can compare them with the
true optima of :mod:`ldpkit.lip` (:func:`compare_with_paper`).  Theorem 2 and Corollary 1 are right
on ``[1/(1 + e^eps), e^eps/(1 + e^eps)]`` and infeasible (they violate LIP) outside it;
:func:`corrected_theorem2` is the true optimum for every prior, in closed form.  Proposition 3 is
right.  Proposition 4's optimal ``q`` is right but its printed minimum MSE (eq. 23) is not (it is
even negative).  The kit's mechanisms never use these formulas: they live here, beside the LIP
experiments (:mod:`ldpkit.experiments.lip`), for the comparison.  LIP chapter
(:prf:ref:`thm-lip-opt`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_epsilon, check_probabilities, check_probability, real_array
from ..accountant import check_ldp, check_lip
from ..channels import ExplicitChannel
from ..lip import optimal_ldp, optimal_lip, optimal_lip_global, optimal_symmetric_lip, per_user_mse

__all__ = [
    "PaperClosedForm",
    "compare_with_paper",
    "corrected_theorem2",
    "paper_corollary1",
    "paper_proposition3",
    "paper_proposition4",
    "paper_theorem2",
]


@dataclass(frozen=True)
class PaperClosedForm:
    """A closed form as printed in the paper, evaluated honestly.

    Attributes
    ----------
    claim
        ``"Theorem 2"``, ``"Corollary 1"``, ``"Proposition 3"`` or ``"Proposition 4"``.
    q0, q1
        The printed optimum (the branch with ``q0 + q1 <= 1``).
    mse_printed
        The printed minimum MSE per user.
    mse_at_point
        The true per-user MSE of the printed point (:func:`~ldpkit.lip.per_user_mse`).
    feasible
        Whether the printed point satisfies the claimed notion (by the accountant).
    achieved_epsilon
        The tight LIP (or LDP, for Proposition 3) epsilon of the printed point.
    """

    claim: str
    prior: float
    epsilon: float
    q0: float
    q1: float
    mse_printed: float
    mse_at_point: float
    feasible: bool
    achieved_epsilon: float


def _closed_form(
    claim: str, p: float, eps: float, q0: float, q1: float, printed: float, notion: str
) -> PaperClosedForm:
    ch = ExplicitChannel(np.array([[1 - q0, q0], [q1, 1 - q1]]))
    if notion == "lip":
        lip = check_lip(ch, eps, prior=[1 - p, p])
        ok, achieved = lip.satisfied, lip.lip_epsilon
    else:
        ldp = check_ldp(ch, eps)
        ok, achieved = ldp.satisfied, ldp.ldp_epsilon
    return PaperClosedForm(claim, p, eps, q0, q1, printed, float(per_user_mse(q0, q1, p)), bool(ok), float(achieved))


def paper_theorem2(prior: float, epsilon: float) -> PaperClosedForm:
    """Theorem 2 as printed: ``q0 = P1 e^-eps``, ``q1 = (1 - P1) e^-eps``, MSE ``P1 P0 (2 e^-eps - e^-2eps)``.

    The printed point has ``P(Y=1) = P1``, and ``P(Y=1|X=1) / P(Y=1) = (1 - P0 e^-eps) / P1``, which
    exceeds ``e^eps`` exactly when ``P1 < 1 / (1 + e^eps)`` (symmetrically for ``P0``): outside
    ``[1/(1 + e^eps), e^eps/(1 + e^eps)]`` the point violates eps-LIP and its MSE is below the true
    optimum.  The proof states ``F_2 >= e^-eps`` and ``F_3 >= e^-eps`` in its feasible region (32) but
    Steps 3-4 use only ``F_1 <= e^eps`` and ``F_4 <= e^eps``; the printed point violates ``F_2 >= e^-eps``
    for small ``P1`` and ``F_3 >= e^-eps`` for large ``P1``.  :func:`corrected_theorem2` gives the true
    optimum.  LIP chapter (:prf:ref:`thm-lip-opt`).

    Examples
    --------
    >>> from ldpkit.experiments.lip_paper import paper_theorem2
    >>> cf = paper_theorem2(0.01, 1.0)
    >>> cf.feasible, round(cf.achieved_epsilon, 3)
    (False, 4.152)
    """
    p = check_probability(prior, "prior", open_interval=True)
    eps = check_epsilon(epsilon)
    ie = math.exp(-eps)
    return _closed_form("Theorem 2", p, eps, p * ie, (1 - p) * ie, p * (1 - p) * (2 * ie - ie * ie), "lip")


def corrected_theorem2(prior: float, epsilon: float) -> PaperClosedForm:
    """The true optimum of the paper's problem (18) in closed form: Theorem 2 on its valid range, repaired outside.

    With ``c = 1 / (1 + e^eps)``:

    * ``c <= P1 <= 1 - c``: Theorem 2, ``(q0, q1) = (P1 e^-eps, P0 e^-eps)``, MSE ``P1 P0 (2 e^-eps - e^-2eps)``;
    * ``P1 < c``: ``q1 = c`` and ``q0 = (1 - P1 e^eps) / (P0 (1 + e^eps))`` (active: ``P(Y=0|X=1) = e^-eps P(Y=0)``
      and ``P(Y=1|X=1) = e^eps P(Y=1)``), MSE ``P1 P0 - P1^2 (e^eps - 1)^2 e^-eps``;
    * ``P1 > 1 - c``: the mirror image (swap the roles of 0 and 1).

    Derived from the vertex enumeration of :func:`~ldpkit.lip.optimal_lip` (the tests check it against it over
    priors 0.001..0.999).  LIP chapter (:prf:ref:`thm-lip-opt`).

    Examples
    --------
    >>> from ldpkit.experiments.lip_paper import corrected_theorem2
    >>> from ldpkit.lip import optimal_lip
    >>> cf, opt = corrected_theorem2(0.01, 1.0), optimal_lip(0.01, 1.0)
    >>> cf.feasible, abs(cf.mse_printed - opt.mse) < 1e-15, abs(cf.q0 - opt.q0) < 1e-12
    (True, True, True)
    """
    p = check_probability(prior, "prior", open_interval=True)
    eps = check_epsilon(epsilon)
    e, ie = math.exp(eps), math.exp(-eps)
    c = 1.0 / (1.0 + e)
    if p < c:
        q0, q1 = (1 - p * e) / ((1 - p) * (1 + e)), c
        # p^2 (e - 1)^2 / e written as two factors that do not overflow up to eps = 700
        mse = p * (1 - p) - (p * math.expm1(eps)) * (p * -math.expm1(-eps))
    elif p > 1 - c:
        q0, q1 = c, (1 - (1 - p) * e) / (p * (1 + e))
        mse = p * (1 - p) - ((1 - p) * math.expm1(eps)) * ((1 - p) * -math.expm1(-eps))
    else:
        q0, q1, mse = p * ie, (1 - p) * ie, p * (1 - p) * (2 * ie - ie * ie)
    return _closed_form("Theorem 2 (corrected)", p, eps, q0, q1, mse, "lip")


def paper_corollary1(prior: float, epsilon: float) -> PaperClosedForm:
    """Corollary 1 (global prior) as printed: Theorem 2 at the shared prior (same formulas, same failure).

    LIP chapter (:prf:ref:`thm-lip-opt`).
    """
    cf = paper_theorem2(prior, epsilon)
    return PaperClosedForm("Corollary 1", cf.prior, cf.epsilon, cf.q0, cf.q1, cf.mse_printed, cf.mse_at_point,
                           cf.feasible, cf.achieved_epsilon)


def paper_proposition3(prior: float, epsilon: float) -> PaperClosedForm:
    """Proposition 3 (Opt-LDP) as printed: ``q0 = q1 = 1 / (e^eps + 1)`` and its eq. (20).

    The printed LDP ratios ``R_1 .. R_4`` contain typos (``R_2 = q1/(1 - q1)``, ``R_4 = R_1``); the
    constraints used here are the four ratios of Definition 1.  LIP chapter (:prf:ref:`prop-lip-ldp-opt`).
    """
    p = check_probability(prior, "prior", open_interval=True)
    eps = check_epsilon(epsilon)
    e, ie = math.exp(eps), math.exp(-eps)
    q = 1.0 / (e + 1.0)
    # the printed p(1-p) - (p(1-p)(1-e))^2 / ((1-p+pe)(e-pe+p)), simplified exactly (numerator
    # and denominator over e^2): no overflow up to eps = 700 and no cancellation
    printed = p * (1 - p) * ie / ((p + (1 - p) * ie) * ((1 - p) + p * ie))
    return _closed_form("Proposition 3", p, eps, q, q, printed, "ldp")


def paper_proposition4(prior: float, epsilon: float) -> PaperClosedForm:
    """Proposition 4 (symmetric model) as printed: ``q = (1 - P1)/(e^eps - 2 P1 + 1)`` for ``P1 <= 1/2``,
    ``q = P1/(e^eps + 2 P1 - 1)`` otherwise (the ``q <= 1/2`` branch), and the printed eq. (23).

    LIP chapter (:prf:ref:`prop-lip-sym`).
    """
    p = check_probability(prior, "prior", open_interval=True)
    eps = check_epsilon(epsilon)
    e, ie = math.exp(eps), math.exp(-eps)
    q = (1 - p) / (e - 2 * p + 1) if p <= 0.5 else p / (e + 2 * p - 1)
    # the printed eq. (23) with numerator and denominator over e^2 (no overflow up to eps = 700)
    printed = p * (1 - p) - p * (1 - p) * ((2 - p) + (1 - 2 * p) * ie) ** 2 / (1 + (1 - 2 * p) * ie)
    return _closed_form("Proposition 4", p, eps, q, q, printed, "lip")


_PAPER = {
    "Theorem 2": (paper_theorem2, optimal_lip),
    "Theorem 2 (corrected)": (corrected_theorem2, optimal_lip),
    "Corollary 1": (paper_corollary1, optimal_lip_global),
    "Proposition 3": (paper_proposition3, optimal_ldp),
    "Proposition 4": (paper_proposition4, optimal_symmetric_lip),
}


def compare_with_paper(priors: ArrayLike, epsilons: ArrayLike) -> list[dict[str, Any]]:
    """One row per (claim, prior, epsilon): the paper's closed form against the true global optimum.

    Claims: Theorem 2, its corrected form (:func:`corrected_theorem2`), Corollary 1, Propositions 3 and 4.

    ``mse_gap`` is ``mse_printed - mse_opt`` (negative: the paper promises less than is
    achievable); ``q_gap`` is the largest coordinate distance from the printed point to the
    nearest optimal vertex (the optima come in mirror pairs).  LIP chapter (:prf:ref:`thm-lip-opt`).

    Examples
    --------
    >>> from ldpkit.experiments.lip_paper import compare_with_paper
    >>> rows = compare_with_paper([0.01, 0.5], [1.0])
    >>> [(r["claim"], r["prior"], r["feasible"]) for r in rows if r["claim"] == "Theorem 2"]
    [('Theorem 2', 0.01, False), ('Theorem 2', 0.5, True)]
    """
    ps = check_probabilities(priors, "priors").reshape(-1)
    es = real_array(epsilons, "epsilons").reshape(-1)
    rows = []
    for claim, (paper, solver) in _PAPER.items():
        for p in ps:
            for e in es:
                cf = paper(float(p), float(e))
                opt = solver(float(p), float(e))
                alts = np.array(opt.alternatives)
                q_gap = float(np.min(np.max(np.abs(alts - np.array([cf.q0, cf.q1])), axis=1)))
                rows.append({
                    "claim": claim, "prior": float(p), "epsilon": float(e),
                    "q0_paper": cf.q0, "q1_paper": cf.q1, "q0_opt": opt.q0, "q1_opt": opt.q1,
                    "mse_printed": cf.mse_printed, "mse_at_paper_point": cf.mse_at_point, "mse_opt": opt.mse,
                    "mse_gap": cf.mse_printed - opt.mse, "q_gap": q_gap, "feasible": cf.feasible,
                    "achieved_epsilon": cf.achieved_epsilon, "active": opt.active,
                })
    return rows
