"""LIP mechanisms (Jiang, Li, Tandon, CNS 2018): binary randomised response, MMSE estimation, optimal channels.

Bibtex ``jiang2018lip``.  Each user ``i`` holds a private bit ``X_i`` with prior
``P1_i = P(X_i = 1)`` (one *local* prior per user, or one *global* prior shared by all) and
reports a bit ``Y_i`` through binary randomised response.  **Convention** (the paper's eq. 14):
``q0 = P(Y = 1 | X = 0)`` and ``q1 = P(Y = 0 | X = 1)`` are the two *flip* probabilities, so the
channel is ``[[1 - q0, q0], [q1, 1 - q1]]``; the symmetric model has ``q0 = q1 = q``.  The
aggregator estimates ``S = sum_i X_i``.

* **MMSE estimation.**  The posterior mean ``S_hat = sum_i E[X_i | Y_i]`` is the MMSE estimator
  (eq. 10) and its exact MSE is ``sum_i E[Var(X_i | Y_i)]`` (Proposition 2), per user
  ``P1 P0 [1 - P1 P0 (1 - q0 - q1)^2 / (lambda_0 lambda_1)]`` with ``lambda_y = P(Y = y)`` (eq. 16
  rewritten).  The prior-free baseline is the unbiased ``(sum Y - n q0) / (1 - q0 - q1)``.
  LIP chapter (:eq:`eq-lip-mmse` and :eq:`eq-lip-unbiased`).
* **Optimal binary mechanisms.**  For a fixed prior, every LIP constraint
  ``e^-eps <= P(y|x) / P(y) <= e^eps`` is *linear* in ``(q0, q1)`` (``P(y)`` is linear in them), so the
  feasible set is a polygon; the MSE is *concave* in ``(q0, q1)`` (``P1 P0`` minus a sum of
  quadratic-over-linear terms).  A concave function attains its minimum over a polygon at a
  vertex, so enumerating the vertices (every intersection of two constraint lines that satisfies
  all constraints) gives the exact global optimum.  The same holds under LDP and in the
  symmetric model (an interval).  The optimisers accept budgets in ``[1e-6, 300]``
  (:data:`MAX_BINARY_EPS`).  LIP chapter (:prf:ref:`thm-lip-vertex`).
* **The paper's closed forms** (Theorem 2, Corollary 1, Propositions 3 and 4) are not part of the
  kit: they live beside the LIP experiments, in :mod:`ldpkit.experiments.lip_paper`, which compares
  them with the true optima computed here
  (:func:`~ldpkit.experiments.lip_paper.compare_with_paper`).  Theorem 2 and Corollary 1 are right
  on ``[1/(1 + e^eps), e^eps/(1 + e^eps)]`` and infeasible (they violate LIP) outside it;
  :func:`~ldpkit.experiments.lip_paper.corrected_theorem2` is the true optimum for every prior, in
  closed form.  Proposition 3 is right.  Proposition 4's optimal ``q`` is right but its printed
  minimum MSE (eq. 23) is not (it is even negative).
* **k-ary LIP** (beyond the paper): :func:`optimal_kary_lip` finds the eps-LIP channel minimising
  the Bayes risk of the posterior-mean estimate of the one-hot input, exactly, by a linear
  programme over the vertices of the set of admissible posterior-to-prior ratio vectors, with a
  dual certificate valid for every LIP channel with any number of outputs.  LIP chapter (:prf:ref:`thm-lip-kary-lp`).

One module per part, every name importable from ``ldpkit.lip``: ``ldpkit.lip.binary`` (the
per-user MSE and :class:`BinaryRR` with its estimators), ``ldpkit.lip.binary_optimal`` (the
optimal binary mechanisms) and ``ldpkit.lip.kary`` (the k-ary optimum and its comparison with
GRR, OUE and the LDP optimum).
"""

from __future__ import annotations

from .binary import BinaryRR, per_user_mse
from .binary_optimal import (
    MAX_BINARY_EPS,
    BinaryOptimum,
    LocalOptimum,
    optimal_ldp,
    optimal_lip,
    optimal_lip_global,
    optimal_lip_local,
    optimal_symmetric_lip,
)
from .kary import (
    MAX_KARY_EPS,
    MAX_KARY_K,
    OBJECTIVES,
    KaryOptimum,
    bayes_risk,
    compare_kary,
    optimal_kary_ldp,
    optimal_kary_lip,
)

__all__ = [
    "MAX_BINARY_EPS",
    "MAX_KARY_EPS",
    "MAX_KARY_K",
    "OBJECTIVES",
    "BinaryOptimum",
    "BinaryRR",
    "KaryOptimum",
    "LocalOptimum",
    "bayes_risk",
    "compare_kary",
    "optimal_kary_ldp",
    "optimal_kary_lip",
    "optimal_ldp",
    "optimal_lip",
    "optimal_lip_global",
    "optimal_lip_local",
    "optimal_symmetric_lip",
    "per_user_mse",
]
