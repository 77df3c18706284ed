"""Input-Discriminative Unary Encoding (IDUE) and its item-set extension IDUE-PS.

Gu, Li, Xiong and Cao (ICDE 2020, :cite:`gu2020idldp`) perturb bit ``k`` of the one-hot
encoding with probability ``a_k`` (own bit) or ``b_k`` (other bits), choosing one pair
``(a_i, b_i)`` per *privacy level* ``i = 1..t`` (budget ``eps_i``, ``m_i`` items).  The pair
budget of levels ``i, j`` is ``r_ij = r(eps_i, eps_j)`` (``min`` for MinID-LDP).  For distinct
items of levels ``i`` and ``j`` the tight privacy loss is
``log[a_i (1 - b_j) / (b_i (1 - a_j))]`` (ID-LDP chapter, eq. :eq:`eq-idue-constraint`).

Three optimisation models choose ``(a, b)`` (ID-LDP chapter, :ref:`sec-idldp-models`):

* ``opt0`` -- worst-case total MSE per user,
  ``f = sum_i m_i b_i(1-b_i)/(a_i-b_i)^2 + max_i (1-a_i-b_i)/(a_i-b_i)``, under every pair
  constraint.  The paper calls it non-convex, which is true in ``(a, b)``; but with
  ``Z = e^u - 1`` and ``Y = e^v - 1``, where ``u = log(a/b)`` and ``v = log((1-b)/(1-a))``,
  one finds ``b(1-b)/(a-b)^2 = 1/Z + 1/(ZY)``,
  ``(1-a-b)/(a-b) = 1/Y - 1/Z`` and the constraints ``(1+Z_i)(1+Y_j) <= e^{r_ij}``.  Writing
  the max as ``max_i F_i`` with
  ``F_i = sum_{k != i} m_k (1/Z_k + 1/(Z_k Y_k)) + (m_i - 1)/Z_i + m_i/(Z_i Y_i) + 1/Y_i``
  (a posynomial because ``m_i >= 1``) makes opt0 a *geometric program*: convex in
  ``(log Z, log Y)``, so every KKT point is the global optimum (ID-LDP chapter,
  :prf:ref:`thm-opt0-gp`).  :func:`solve_opt0` solves that convex form with cvxpy, verifies its KKT
  conditions, and cross-checks with a multistart local solver in the log-ratio coordinates
  ``(u, v)`` and, for ``t <= 3``, a branch-and-bound interval search.
* ``opt1`` -- RAPPOR structure ``a_i = 1 - b_i = e^{tau_i}/(e^{tau_i}+1)``.
* ``opt2`` -- OUE structure ``a_i = 1/2``.

Both are convex and are solved by cvxpy with a KKT check.  IDUE-PS (:func:`idue_ps`) runs IDUE
inside Padding-and-Sampling (:mod:`ldpkit.padding`) with the ``ell`` dummy items at the level
of a chosen budget ``eps*``; item sets get the budget of eq. (15) (:func:`itemset_budget`).

Package layout: :mod:`~ldpkit.idue.problem` (budgets, constraints, objectives, the solution
record), :mod:`~ldpkit.idue.solvers` (opt0, opt1, opt2), :mod:`~ldpkit.idue.mechanism` (the
:class:`IDUE` oracle), :mod:`~ldpkit.idue.itemsets` (IDUE-PS and Theorem 4) and
:mod:`~ldpkit.idue.toy` (the paper's Table I example).
"""

from __future__ import annotations

from .itemsets import IDUEPS, check_itemset_id_ldp, idue_ps, itemset_budget, lemma2_log_bounds, oue_ps, rappor_ps
from .mechanism import IDUE
from .problem import (
    AGREEMENT_RTOL,
    FEASIBILITY_RTOL,
    IDUE_EPS_MAX,
    IDUE_EPS_MIN,
    MODELS,
    IDUESolution,
    IDUESolverError,
    ab_from_log_ratios,
    pair_budget_matrix,
    variance_terms,
    worst_case_mse,
)
from .solvers import solve, solve_opt0, solve_opt1, solve_opt2
from .toy import ToyExample, toy_example

__all__ = [
    "IDUE",
    "IDUEPS",
    "MODELS",
    "AGREEMENT_RTOL",
    "FEASIBILITY_RTOL",
    "IDUE_EPS_MAX",
    "IDUE_EPS_MIN",
    "IDUESolution",
    "IDUESolverError",
    "ToyExample",
    "ab_from_log_ratios",
    "check_itemset_id_ldp",
    "idue_ps",
    "itemset_budget",
    "lemma2_log_bounds",
    "oue_ps",
    "pair_budget_matrix",
    "rappor_ps",
    "solve",
    "solve_opt0",
    "solve_opt1",
    "solve_opt2",
    "toy_example",
    "variance_terms",
    "worst_case_mse",
]
