"""Input-Discriminative Unary Encoding (IDUE) and its item-set extension IDUE-PS.

Gu, Li, Xiong and Cao (ICDE 2020, :cite:`gu2020idldp`) perturb bit ``k`` of the one-hot
encoding with probability ``a_k`` (own bit) or ``b_k`` (other bits), choosing one pair
``(a_i, b_i)`` per *privacy level* ``i = 1..t`` (budget ``eps_i``, ``m_i`` items).  The pair
budget of levels ``i, j`` is ``r_ij = r(eps_i, eps_j)`` (``min`` for MinID-LDP).  For distinct
items of levels ``i`` and ``j`` the tight privacy loss is
``log[a_i (1 - b_j) / (b_i (1 - a_j))]`` (ID-LDP chapter, label ``eq-idue-constraint``).

Three optimisation models choose ``(a, b)`` (ID-LDP chapter, label ``sec-idldp-models``):

* ``opt0`` -- worst-case total MSE per user,
  ``f = sum_i m_i b_i(1-b_i)/(a_i-b_i)^2 + max_i (1-a_i-b_i)/(a_i-b_i)``, under every pair
  constraint.  The paper calls it non-convex, which is true in ``(a, b)``; but with
  ``Z = e^u - 1`` and ``Y = e^v - 1``, where ``u = log(a/b)`` and ``v = log((1-b)/(1-a))``,
  one finds ``b(1-b)/(a-b)^2 = 1/Z + 1/(ZY)``,
  ``(1-a-b)/(a-b) = 1/Y - 1/Z`` and the constraints ``(1+Z_i)(1+Y_j) <= e^{r_ij}``.  Writing
  the max as ``max_i F_i`` with
  ``F_i = sum_{k != i} m_k (1/Z_k + 1/(Z_k Y_k)) + (m_i - 1)/Z_i + m_i/(Z_i Y_i) + 1/Y_i``
  (a posynomial because ``m_i >= 1``) makes opt0 a *geometric program*: convex in
  ``(log Z, log Y)``, so every KKT point is the global optimum (ID-LDP chapter, label
  ``thm-opt0-gp``).  :func:`solve_opt0` solves that convex form with cvxpy, verifies its KKT
  conditions, and cross-checks with a multistart local solver in the log-ratio coordinates
  ``(u, v)`` and, for ``t <= 3``, a branch-and-bound interval search.
* ``opt1`` -- RAPPOR structure ``a_i = 1 - b_i = e^{tau_i}/(e^{tau_i}+1)``.
* ``opt2`` -- OUE structure ``a_i = 1/2``.

Both are convex and are solved by cvxpy with a KKT check.  IDUE-PS (:func:`idue_ps`) runs IDUE
inside Padding-and-Sampling (:mod:`ldpkit.padding`) with the ``ell`` dummy items at the level
of a chosen budget ``eps*``; item sets get the budget of eq. (15) (:func:`itemset_budget`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import accountant
from ._validation import check_budget_vector, check_domain_size, check_epsilon, check_positive_int
from .accountant import PairRule, _apply_rule, _resolve_rule
from .padding import PaddingSampling, all_itemsets, as_itemsets
from .unary import OUE, RAPPOR, UnaryEncoding

__all__ = [
    "IDUE",
    "IDUEPS",
    "MODELS",
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

#: the optimisation models of Sec. V-D
MODELS = ("opt0", "opt1", "opt2")

#: a returned solution may exceed a pair constraint by this relative factor at most
FEASIBILITY_RTOL = 1e-9

#: margin (in log-ratio) left below every constraint after the feasibility repair
_MARGIN = 1e-12

#: largest repair (log-ratio units) applied to a solver's output before it is called inaccurate
_MAX_REPAIR = 1e-6

#: relative KKT stationarity residual above which a convex solve is called inaccurate
KKT_RTOL = 1e-5

#: relative objective disagreement between the opt0 methods that raises IDUESolverError
AGREEMENT_RTOL = 1e-6


class IDUESolverError(ValueError):
    """A solver failed, returned an infeasible point, or its certificate did not check out."""


# ============================================================================ validation
def _check_level_budgets(level_budgets: Any) -> np.ndarray:
    arr = np.asarray(level_budgets, dtype=float) if not isinstance(level_budgets, np.ndarray) else level_budgets
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"level_budgets must be a non-empty 1-d array, got shape {np.shape(level_budgets)}")
    arr = check_budget_vector(arr, arr.size, "level_budgets")
    if np.unique(arr).size != arr.size:
        raise ValueError(f"level_budgets must be distinct (one entry per privacy level), got {arr.tolist()!r}"[:200])
    return arr


def _check_level_sizes(level_sizes: Any, t: int) -> np.ndarray:
    arr = np.asarray(level_sizes)
    if arr.ndim != 1:
        raise ValueError(f"level_sizes must be a 1-d array of positive integers, got shape {arr.shape}")
    if arr.size != t:
        raise ValueError(f"level_sizes has length {arr.size}, expected {t} (one per level budget)")
    out = np.empty(t, dtype=np.int64)
    for k, s in enumerate(arr.tolist()):
        if isinstance(s, float) and s.is_integer():
            s = int(s)
        out[k] = check_positive_int(s, f"level_sizes[{k}]")
    return out


def _check_pairs_flag(flag: Any) -> str:
    if flag not in ("paper", "needed"):
        raise ValueError(f"same_level_pairs must be 'paper' or 'needed', got {flag!r}")
    return flag


def pair_budget_matrix(level_budgets: Any, r: PairRule = "min") -> np.ndarray:
    """The ``t x t`` matrix ``R[i, j] = r(eps_i, eps_j)`` of pair budgets.

    ``r`` is ``"min"`` (MinID-LDP), ``"average"``, ``"max"`` or a vectorised callable
    (as in :func:`ldpkit.accountant.check_id_ldp`); ``inf`` entries mean "unconstrained".
    Every finite entry must be positive (a zero pair budget cannot be met by IDUE).

    ID-LDP chapter, label ``def-idldp``.
    """
    e = _check_level_budgets(level_budgets)
    _, rule = _resolve_rule(r)
    R = np.array(_apply_rule(rule, e[:, None], e[None, :]), dtype=float)
    zero = R <= 0
    if np.any(zero):
        i, j = np.argwhere(zero)[0]
        raise ValueError(f"pair budget r(eps_{i}, eps_{j}) = {R[i, j]!r} must be positive")
    return R


def _constraint_mask(R: np.ndarray, pair_sizes: np.ndarray, same_level_pairs: str) -> np.ndarray:
    """Which ordered level pairs ``(i, j)`` carry the constraint ``u_i + v_j <= R[i, j]``."""
    mask = np.isfinite(R)
    if same_level_pairs == "needed":
        single = np.flatnonzero(pair_sizes == 1)
        mask[single, single] = False
    rows, cols = mask.any(axis=1), mask.any(axis=0)
    if not (rows.all() and cols.all()):
        k = int(np.flatnonzero(~(rows & cols))[0])
        raise ValueError(
            f"level {k} is in no privacy constraint (its pair budgets are all infinite or dropped), "
            "so the optimisation is unbounded"
        )
    return mask


# ============================================================================ formulas
def variance_terms(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per-item coefficients of eq. (7): ``Var[c_hat_i] = n * g_i + c_i * h_i``.

    ``g = b(1-b)/(a-b)^2`` and ``h = (1-a-b)/(a-b)`` (ID-LDP chapter, label
    ``eq-idue-variance``).
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return b * (1 - b) / (a - b) ** 2, (1 - a - b) / (a - b)


def worst_case_mse(a: Any, b: Any, level_sizes: Any) -> float:
    """Objective of opt0: ``sum_i m_i g_i + max_i h_i`` (total MSE per user, worst data).

    Equals ``max_c sum_k Var[c_hat_k] / n`` over count vectors with ``sum c = n``
    (ID-LDP chapter, label ``eq-opt0``).
    """
    g, h = variance_terms(a, b)
    m = np.asarray(level_sizes, dtype=float)
    return float(np.sum(m * g) + np.max(h))


def _log_ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``L[i, j] = log[a_i (1-b_j) / (b_i (1-a_j))]`` for all ordered level pairs."""
    u = np.log(a) - np.log(b)
    v = np.log1p(-b) - np.log1p(-a)
    return u[:, None] + v[None, :]


def _ab_from_uv(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Invert ``u = log(a/b)``, ``v = log((1-b)/(1-a))`` (both positive)."""
    Z, Y = np.expm1(u), np.expm1(v)
    D = Z + Y + Z * Y
    return (1 + Z) * Y / D, Y / D


def ab_from_log_ratios(u: Any, v: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per-bit ``(a, b)`` from the log-ratios ``u = log(a/b)`` and ``v = log((1-b)/(1-a))``.

    The pair loss of items ``i, j`` is ``u_i + v_j`` (ID-LDP chapter, label ``thm-opt0-gp``),
    so mechanisms with prescribed losses are easiest to build in these coordinates.  Both must
    be positive and finite (that is ``0 < b < a < 1``) and of equal shape.
    """
    u_arr, v_arr = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    if u_arr.shape != v_arr.shape:
        raise ValueError(f"u and v must have the same shape, got {u_arr.shape} and {v_arr.shape}")
    for name, arr in (("u", u_arr), ("v", v_arr)):
        if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            raise ValueError(f"{name} must be positive and finite, got {arr!r}")
    return _ab_from_uv(u_arr, v_arr)


def _uv_from_ab(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.log(a) - np.log(b), np.log1p(-b) - np.log1p(-a)


def _f0_uv(u: np.ndarray, v: np.ndarray, m: np.ndarray) -> np.ndarray:
    """opt0 objective in ``(u, v)`` (last axis = levels); ``inf`` outside ``u, v > 0``."""
    Z, Y = np.expm1(u), np.expm1(v)
    bad = np.any(Z <= 0, axis=-1) | np.any(Y <= 0, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = (1.0 + 1.0 / Y) / Z
        h = 1.0 / Y - 1.0 / Z
        out = np.sum(m * g, axis=-1) + np.max(h, axis=-1)
    return np.where(bad, np.inf, out)


# ============================================================================ solution record
@dataclass(frozen=True, eq=False)
class IDUESolution:
    """Perturbation probabilities of IDUE for ``t`` privacy levels.

    Attributes
    ----------
    model
        ``"opt0"``, ``"opt1"`` or ``"opt2"``.
    level_budgets, level_sizes
        ``eps_i`` and ``m_i`` (the sizes the objective was weighted with).
    a, b
        Per-level probabilities of reporting 1 for the own bit (``a``) and other bits (``b``).
    objective
        The model's own objective at the solution (opt0: worst-case MSE per user; opt1:
        ``sum m_i e^tau/(e^tau-1)^2``; opt2: ``sum m_i b(1-b)/(1/2-b)^2``).
    worst_case_mse_per_user
        :func:`worst_case_mse` at the solution, whatever the model (comparable across models).
    r
        The pair rule the constraints were built with (``"min"``, ``"average"``, ... or callable).
    pair_budgets
        ``R[i, j] = r(eps_i, eps_j)`` with ``inf`` for every pair that was not constrained.
    same_level_pairs
        ``"paper"`` (every ``(i, i)`` pair constrained) or ``"needed"`` (``(i, i)`` dropped for
        levels holding a single item).
    diagnostics
        Solver name and status, KKT residuals and, for opt0, the cross-checks.
    """

    model: str
    level_budgets: np.ndarray
    level_sizes: np.ndarray
    a: np.ndarray
    b: np.ndarray
    objective: float
    worst_case_mse_per_user: float
    r: Any
    pair_budgets: np.ndarray
    same_level_pairs: str = "paper"
    diagnostics: dict = field(default_factory=dict)

    @property
    def t(self) -> int:
        """Number of privacy levels."""
        return int(self.level_budgets.size)

    def log_ratio(self) -> np.ndarray:
        """``L[i, j] = log[a_i (1-b_j)/(b_i (1-a_j))]``, the tight loss of items at levels i, j."""
        return _log_ratio(self.a, self.b)

    def variance_coefficients(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-level ``(g, h)`` with ``Var[c_hat] = n g + c h`` (eq. 7)."""
        return variance_terms(self.a, self.b)


def _verify(a: np.ndarray, b: np.ndarray, R: np.ndarray, mask: np.ndarray, what: str) -> float:
    """Check ``0 < b < a < 1`` and every constrained ratio; return the worst log-slack."""
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise IDUESolverError(f"{what}: non-finite probabilities a={a!r}, b={b!r}")
    if not (np.all(b > 0) and np.all(b < a) and np.all(a < 1)):
        raise IDUESolverError(f"{what}: probabilities violate 0 < b < a < 1: a={a.tolist()}, b={b.tolist()}")
    L = _log_ratio(a, b)
    excess = np.where(mask, L - R, -np.inf)
    worst = float(np.max(excess))
    if worst > math.log1p(FEASIBILITY_RTOL):
        i, j = np.unravel_index(int(np.argmax(excess)), excess.shape)
        raise IDUESolverError(
            f"{what}: pair ({i}, {j}) has ratio {math.exp(L[i, j])!r} > e^r = {math.exp(R[i, j])!r}"
        )
    return -worst


def _kkt(grad_obj: np.ndarray, grads: np.ndarray) -> tuple[np.ndarray, float]:
    """Non-negative multipliers for the stationarity condition ``grad_obj + grads.T @ lam = 0``.

    Each coordinate's equation is first divided by the largest magnitude among its terms
    (``|grad_obj_k|`` and ``|grads[:, k]|``), so that variables living on very different
    scales (``e^{-s}`` factors in opt0, ``b`` near ``1/2`` in opt2) count equally; then NNLS.
    Returns the multipliers (for the unscaled system) and the largest per-coordinate residual
    relative to the size of that coordinate's terms (``0`` = exact stationarity).
    """
    from scipy.optimize import nnls

    if grads.shape[0] == 0:
        return np.zeros(0), float(np.max(np.abs(grad_obj)) > 0)
    G = grads.T  # (n, k)
    row = np.maximum(np.abs(grad_obj), np.max(np.abs(G), axis=1))
    row = np.where(row > 0, row, 1.0)
    col = np.max(np.abs(G / row[:, None]), axis=0)
    col = np.where(col > 0, col, 1.0)
    A = G / row[:, None] / col[None, :]
    y = -grad_obj / row
    mu, _ = nnls(A, y, maxiter=50 * A.shape[1] + 100)
    lam = mu / col
    resid = grad_obj + G @ lam
    size = np.abs(grad_obj) + np.abs(G) @ lam
    size = np.where(size > 0, size, 1.0)
    return lam, float(np.max(np.abs(resid) / size))


def _problem_setup(
    level_budgets: Any, level_sizes: Any, r: PairRule, same_level_pairs: str, pair_sizes: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    e = _check_level_budgets(level_budgets)
    m = _check_level_sizes(level_sizes, e.size)
    flag = _check_pairs_flag(same_level_pairs)
    ps = m if pair_sizes is None else _check_level_sizes(pair_sizes, e.size)
    R = pair_budget_matrix(e, r)
    mask = _constraint_mask(R, ps, flag)
    return e, m, R, mask


def _make_solution(
    model: str, e: np.ndarray, m: np.ndarray, a: np.ndarray, b: np.ndarray, objective: float,
    r: PairRule, R: np.ndarray, mask: np.ndarray, flag: str, diagnostics: dict,
) -> IDUESolution:
    slack = _verify(a, b, R, mask, model)
    diagnostics = dict(diagnostics)
    diagnostics["min_log_slack"] = slack
    diagnostics["n_constraints"] = int(mask.sum())
    return IDUESolution(
        model=model,
        level_budgets=e.copy(),
        level_sizes=m.copy(),
        a=a,
        b=b,
        objective=float(objective),
        worst_case_mse_per_user=worst_case_mse(a, b, m),
        r=r,
        pair_budgets=np.where(mask, R, np.inf),
        same_level_pairs=flag,
        diagnostics=diagnostics,
    )


def _cvx_solve(problem: Any, scale: Any, scales: Sequence[float], what: str) -> str:
    """Solve a cvxpy problem whose objective is multiplied by the parameter ``scale``.

    CLARABEL is tried with each objective scale in turn (interior-point exponential-cone
    solves are sensitive to the objective's magnitude), then SCS.  The first ``optimal`` or
    ``optimal_inaccurate`` status is accepted: accuracy is judged afterwards by the polish
    and the KKT check, not by the status.
    """
    import warnings

    import cvxpy as cp

    attempts = [(cp.CLARABEL, sc) for sc in scales] + [(cp.SCS, scales[0])]
    log = []
    for solver, sc in attempts:
        scale.value = float(sc)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if solver == cp.SCS:
                    problem.solve(solver=solver, eps=1e-8, max_iters=20_000)
                else:
                    problem.solve(solver=solver)
        except cp.error.SolverError:
            log.append(f"{solver}@{sc:.3g}: failed")
            continue
        status = str(problem.status)
        log.append(f"{solver}@{sc:.3g}: {status}")
        if status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            return "; ".join(log)
    raise IDUESolverError(f"{what}: no solver succeeded ({'; '.join(log)})")


def _finish(
    what: str,
    candidates: list[tuple[str, np.ndarray]],
    fun: Callable[[np.ndarray], float],
    grad_obj: Callable[[np.ndarray], np.ndarray],
    cons_val: Callable[[np.ndarray], np.ndarray],
    cons_jac: Callable[[np.ndarray], np.ndarray],
    scale: np.ndarray,
    repair: Callable[[np.ndarray, float], np.ndarray],
    domain_ok: Callable[[np.ndarray], bool],
) -> tuple[np.ndarray, dict]:
    """Repair, KKT-check and pick the best of several candidate solutions of a convex problem.

    Problem: ``min fun(x)`` s.t. ``g(x) <= 0`` (``cons_val``).  Each candidate is moved by
    ``repair(x, deficit)`` until every ``g_k <= -margin`` (raising if that needs more than
    ``1e-6``), its KKT conditions are checked by NNLS on the constraints with
    ``-g <= 1e-6 * scale`` (``grad f + J_A^T lam = 0``, ``lam >= 0``), and the feasible
    candidate with the lowest objective among those passing is returned.  For a convex
    problem, passing the KKT check certifies global optimality up to the reported
    ``kkt_residual`` and ``complementarity`` (``sum lam_k * slack_k``, an upper bound on the
    optimality gap from the linearised constraints).
    """
    results = []
    for name, x in candidates:
        if x is None or not np.all(np.isfinite(x)) or not domain_ok(x):
            continue
        moved = 0.0
        for _ in range(8):
            deficit = float(np.max(cons_val(x)))
            if deficit <= -_MARGIN:
                break
            x = repair(x, deficit)
            moved += deficit + 2 * _MARGIN
        if moved > _MAX_REPAIR or not domain_ok(x) or float(np.max(cons_val(x))) > 0:
            continue
        slack = -cons_val(x)
        act = slack <= 1e-6 * scale
        lam, resid = _kkt(grad_obj(x), cons_jac(x)[act])
        val = fun(x)
        results.append((resid <= KKT_RTOL, val, name, x, moved, resid, int(act.sum()), float(lam @ slack[act])))
    if not results:
        raise IDUESolverError(f"{what}: no solver output could be made feasible by a repair of at most {_MAX_REPAIR}")
    passing = [rr for rr in results if rr[0]]
    if not passing:
        best_resid = min(rr[5] for rr in results)
        raise IDUESolverError(f"{what}: KKT residual {best_resid:.3g} > {KKT_RTOL} for every candidate (inaccurate)")
    _, val, name, x, moved, resid, n_act, comp = min(passing, key=lambda rr: rr[1])
    info = {
        "kkt_residual": resid,
        "complementarity": comp,
        "n_active": n_act,
        "repair": moved,
        "point": name,
        "candidates": {rr[2]: {"objective": rr[1], "kkt_residual": rr[5]} for rr in results},
    }
    return x, info


def _finish_linear(
    what: str,
    x0: np.ndarray,
    fun: Callable[[np.ndarray], float],
    grad: Callable[[np.ndarray], np.ndarray],
    A: np.ndarray,
    c: np.ndarray,
    bounds: tuple[float, float],
    repair: Callable[[np.ndarray, float], np.ndarray],
    extra: Sequence[tuple[str, np.ndarray | None]] = (),
) -> tuple[np.ndarray, dict]:
    """Polish (SLSQP from the conic point) then :func:`_finish` for ``A x <= c``.

    The conic solver's point ``x0`` is accurate to about the square root of its tolerance
    (the objective is flat to second order along the active face), hence the polish.
    """
    from scipy.optimize import minimize

    lo, hi = bounds
    scale = np.maximum(1.0, np.abs(c))

    def domain_ok(x: np.ndarray) -> bool:
        return bool(np.all(x > lo) and np.all(x < hi))

    # SLSQP on the constraints that matter: nearly active at x0, plus the three tightest
    # constraints of every variable (so that no variable becomes unconstrained and escapes);
    # the rest are re-checked by _finish
    slack0 = c - A @ x0
    keep = slack0 <= 0.05 * scale
    for k in range(x0.size):
        rows = np.flatnonzero(A[:, k] != 0)
        keep[rows[np.argsort(slack0[rows])[:3]]] = True
    An, cn = A[keep], c[keep]
    f0 = abs(fun(x0)) or 1.0
    with np.errstate(all="ignore"):
        res = minimize(
            lambda x: fun(x) / f0, x0, jac=lambda x: grad(x) / f0, method="SLSQP",
            bounds=[(lo, hi)] * x0.size,
            constraints=[{"type": "ineq", "fun": lambda x: cn - An @ x, "jac": lambda x: -An}],
            options={"maxiter": 300, "ftol": 1e-15},
        )
    cands = [("conic", x0), ("slsqp", np.asarray(res.x, dtype=float)), *extra]
    return _finish(what, cands, fun, grad, lambda x: A @ x - c, lambda x: A, scale, repair, domain_ok)


# ============================================================================ opt1
def _f1(tau: np.ndarray, m: np.ndarray) -> float:
    return float(np.sum(m * np.exp(tau) / np.expm1(tau) ** 2))


def solve_opt1(
    level_budgets: Any,
    level_sizes: Any,
    r: PairRule = "min",
    same_level_pairs: str = "paper",
    *,
    pair_sizes: Any = None,
) -> IDUESolution:
    """opt1 (RAPPOR structure): ``a_i = e^{tau_i}/(e^{tau_i}+1)``, ``b_i = 1 - a_i``.

    Minimises ``sum_i m_i e^{tau_i}/(e^{tau_i}-1)^2`` subject to ``tau_i + tau_j <= r_ij``
    for every constrained ordered pair (both orders bind ``tau_i + tau_j``), ``tau > 0``.

    Convexity (ID-LDP chapter, label ``prop-idue-convexity``): ``e^tau/(e^tau-1)^2 =
    1/(4 sinh^2(tau/2))`` has second derivative ``(2 sinh^2(tau/2) + 3)/(8 sinh^4(tau/2)) > 0``,
    so the objective is separable, convex and decreasing, and the constraints are linear.
    That form is not DCP; cvxpy solves the equivalent problem in ``s = log(e^tau - 1)``
    (``tau = softplus(s)``): objective ``sum m_i (e^{-2 s_i} + e^{-s_i})`` (convex) and
    ``T_i >= logistic(s_i)``, ``T_i + T_j <= r_ij`` (convex; exact because the objective
    decreases in every ``s_i``).  This is the geometric program of ``Z = e^tau - 1``.  The
    KKT conditions of the original ``tau`` problem are then verified by non-negative least
    squares on the active constraints (``diagnostics['kkt_residual']``).

    Parameters
    ----------
    level_budgets
        Distinct budgets ``eps_i`` of the ``t`` levels.
    level_sizes
        Items per level ``m_i >= 1``.
    r
        Pair rule (see :func:`pair_budget_matrix`).
    same_level_pairs
        ``"paper"`` constrains every ``(i, i)``; ``"needed"`` drops it for levels of one item.
    pair_sizes
        Sizes used only to decide which same-level pairs exist (IDUE-PS counts its dummies);
        default ``level_sizes``.

    Raises
    ------
    ValueError
        Bad input (before any computation).
    IDUESolverError
        Solver failure, infeasible or inaccurate output, or a failed KKT check.
    """
    import cvxpy as cp

    e, m, R, mask = _problem_setup(level_budgets, level_sizes, r, same_level_pairs, pair_sizes)
    t = e.size
    both = mask | mask.T
    C = np.minimum(np.where(mask, R, np.inf), np.where(mask.T, R.T, np.inf))
    I, J = np.nonzero(np.triu(both))
    s = cp.Variable(t)
    T = cp.Variable(t)
    cons = [T >= cp.logistic(s), T[I] + T[J] <= C[I, J]]
    scale = cp.Parameter(nonneg=True)
    obj = cp.Minimize(scale * cp.sum(cp.multiply(m, cp.exp(-2 * s) + cp.exp(-s))))
    prob = cp.Problem(obj, cons)
    f_ldp = _f1(np.full(t, float(C[I, J].min()) / 2), m)  # feasible LDP point tau = min(r)/2
    status = _cvx_solve(prob, scale, (1.0 / m.sum(), 1.0 / f_ldp, 1.0), "opt1")
    tau0 = np.logaddexp(0.0, np.asarray(s.value, dtype=float))
    A = np.zeros((I.size, t))
    np.add.at(A, (np.arange(I.size), I), 1.0)
    np.add.at(A, (np.arange(I.size), J), 1.0)
    ex_grad = lambda x: -m * np.exp(x) * (np.exp(x) + 1) / np.expm1(x) ** 3

    def shrink(x: np.ndarray, deficit: float) -> np.ndarray:  # keeps the RAPPOR structure
        return x - (deficit + 2 * _MARGIN) / 2

    tau, info = _finish_linear(
        "opt1", tau0, lambda x: _f1(x, m), ex_grad, A, C[I, J], (0.0, np.inf), shrink
    )
    a = np.exp(tau) / (np.exp(tau) + 1)
    b = 1 / (np.exp(tau) + 1)
    diag = {
        "solver": "cvxpy/CLARABEL (geometric-program form in s = log(e^tau - 1)) + SLSQP polish",
        "status": status,
        **info,
        "certificate": "convex problem; KKT verified in tau-coordinates by NNLS",
    }
    return _make_solution("opt1", e, m, a, b, _f1(tau, m), r, R, mask, same_level_pairs, diag)


# ============================================================================ opt2
def _f2(b: np.ndarray, m: np.ndarray) -> float:
    return float(np.sum(m * b * (1 - b) / (0.5 - b) ** 2))


def _opt2_log_polish(b0: np.ndarray, m: np.ndarray, I: np.ndarray, J: np.ndarray, ER: np.ndarray) -> np.ndarray | None:
    """SLSQP polish of opt2 in ``y = -log(1/2 - b)``, where it is a geometric program.

    With ``D = 1/2 - b = e^{-y}``: objective ``sum m (e^{2y}/4 - 1)`` and constraints
    ``e^r e^{-y_i} + e^{-y_j} <= (e^r - 1)/2``, both convex in ``y``; far better conditioned
    than ``b`` when some ``b`` is close to ``1/2``.
    """
    from scipy.optimize import minimize

    if not np.all((b0 > 0) & (b0 < 0.5)):
        return None
    y0 = -np.log(0.5 - b0)
    cap = (ER - 1) / 2
    slack0 = cap - ER * np.exp(-y0[I]) - np.exp(-y0[J])
    keep = slack0 <= 0.05 * np.maximum(1.0, cap)
    for k in range(b0.size):
        rows = np.flatnonzero((I == k) | (J == k))
        keep[rows[np.argsort(slack0[rows])[:3]]] = True
    In, Jn, En, Cn = I[keep], J[keep], ER[keep], cap[keep]
    t = b0.size
    f0 = float(np.sum(m * (np.exp(2 * y0) / 4 - 1))) or 1.0

    def cons_jac(y: np.ndarray) -> np.ndarray:
        out = np.zeros((In.size, t))
        rows = np.arange(In.size)
        np.add.at(out, (rows, In), En * np.exp(-y[In]))
        np.add.at(out, (rows, Jn), np.exp(-y[Jn]))
        return out

    with np.errstate(all="ignore"):
        res = minimize(
            lambda y: float(np.sum(m * (np.exp(2 * y) / 4 - 1))) / f0, y0,
            jac=lambda y: m * np.exp(2 * y) / 2 / f0, method="SLSQP",
            constraints=[{"type": "ineq", "fun": lambda y: Cn - En * np.exp(-y[In]) - np.exp(-y[Jn]), "jac": cons_jac}],
            options={"maxiter": 300, "ftol": 1e-15},
        )
    y = np.asarray(res.x, dtype=float)
    return 0.5 - np.exp(-y) if np.all(np.isfinite(y)) else None


def solve_opt2(
    level_budgets: Any,
    level_sizes: Any,
    r: PairRule = "min",
    same_level_pairs: str = "paper",
    *,
    pair_sizes: Any = None,
) -> IDUESolution:
    """opt2 (OUE structure): ``a_i = 1/2``, minimise ``sum_i m_i b_i(1-b_i)/(1/2-b_i)^2``.

    Constraints: ``e^{r_ij} b_i + b_j >= 1`` for every constrained ordered pair (the ratio
    ``a_i(1-b_j)/(b_i(1-a_j)) = (1-b_j)/b_i`` when ``a = 1/2``) and ``0 < b_i < 1/2``.

    Convexity (ID-LDP chapter, label ``prop-idue-convexity``): with ``d = 1/2 - b``,
    ``b(1-b)/d^2 = 1/(4 d^2) - 1``, whose second derivative in ``b`` is ``3/(2 d^4) > 0``;
    the DCP form is ``m_i (0.25 * power(0.5 - b_i, -2) - 1)`` with linear constraints.  KKT
    conditions are verified by NNLS on the active constraints.

    Parameters and exceptions as in :func:`solve_opt1`.
    """
    import cvxpy as cp

    e, m, R, mask = _problem_setup(level_budgets, level_sizes, r, same_level_pairs, pair_sizes)
    t = e.size
    I, J = np.nonzero(mask)
    ER = np.exp(R[I, J])
    bvar = cp.Variable(t)
    cons = [cp.multiply(ER, bvar[I]) + bvar[J] >= 1, bvar >= 0]
    scale = cp.Parameter(nonneg=True)
    obj = cp.Minimize(scale * cp.sum(cp.multiply(m, 0.25 * cp.power(0.5 - bvar, -2) - 1)))
    prob = cp.Problem(obj, cons)
    f_ldp = _f2(np.full(t, 1.0 / (math.exp(float(R[I, J].min())) + 1)), m)  # OUE point at min(r)
    status = _cvx_solve(prob, scale, (1.0 / m.sum(), 1.0 / f_ldp, 1.0), "opt2")
    b0 = np.asarray(bvar.value, dtype=float).copy()
    A = np.zeros((I.size, t))
    rows = np.arange(I.size)
    np.add.at(A, (rows, I), -ER)
    np.add.at(A, (rows, J), -1.0)

    def grow(x: np.ndarray, deficit: float) -> np.ndarray:  # keeps a = 1/2: raise every b
        return x + (deficit + 2 * _MARGIN) / 2

    b, info = _finish_linear(
        "opt2", b0, lambda x: _f2(x, m), lambda x: m * 0.5 / (0.5 - x) ** 3,
        A, -np.ones(I.size), (0.0, 0.5), grow,
        extra=[("slsqp-log", _opt2_log_polish(b0, m, I, J, ER))],
    )
    a = np.full(t, 0.5)
    diag = {
        "solver": "cvxpy/CLARABEL (DCP form 0.25*power(0.5-b,-2) - 1) + SLSQP polish",
        "status": status,
        **info,
        "certificate": "convex problem; KKT verified by NNLS",
    }
    return _make_solution("opt2", e, m, a, b, _f2(b, m), r, R, mask, same_level_pairs, diag)


# ============================================================================ opt0
def _opt0_convex(m: np.ndarray, R: np.ndarray, mask: np.ndarray) -> tuple[list, str]:
    """Solve opt0 as a geometric program in ``s = log Z``, ``w = log Y``.

    Returns the candidates ``[(name, u, v), ...]`` (conic point and its SLSQP polish) and
    the solver status.
    """
    import cvxpy as cp

    t = m.size
    I, J = np.nonzero(mask)
    s, w = cp.Variable(t), cp.Variable(t)
    U, V = cp.Variable(t), cp.Variable(t)
    gam, phi, z = cp.Variable(t), cp.Variable(t), cp.Variable()
    cons = [
        U >= cp.logistic(s),
        V >= cp.logistic(w),
        U[I] + V[J] <= R[I, J],
        # gam_k >= m_k g_k, g = 1/Z + 1/(Z Y)
        gam >= cp.multiply(m, cp.exp(-s) + cp.exp(-s - w)),
        # phi_i >= m_i g_i + h_i = (m_i - 1)/Z_i + m_i/(Z_i Y_i) + 1/Y_i
        phi >= cp.multiply(m - 1, cp.exp(-s)) + cp.multiply(m, cp.exp(-s - w)) + cp.exp(-w),
        z >= cp.sum(gam) - gam + phi,
    ]
    tau0 = float(R[I, J].min()) / 2  # RAPPOR at min(r) is feasible
    f_ldp = float(_f0_uv(np.full(t, tau0), np.full(t, tau0), m))
    scale = cp.Parameter(nonneg=True)
    prob = cp.Problem(cp.Minimize(scale * z), cons)
    status = _cvx_solve(prob, scale, (1.0 / m.sum(), 1.0 / f_ldp, 1.0), "opt0")
    sv, wv = np.asarray(s.value, dtype=float), np.asarray(w.value, dtype=float)
    ps, pw = _opt0_polish(sv, wv, m, R, mask)
    cands = [
        ("conic", np.logaddexp(0.0, sv), np.logaddexp(0.0, wv)),
        ("conic+polish", np.logaddexp(0.0, ps), np.logaddexp(0.0, pw)),
    ]
    return cands, status


def _opt0_repair(u: np.ndarray, v: np.ndarray, R: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Lower every ``u`` and ``v`` equally until all constraints hold with a margin."""
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(v))):
        return None
    moved = 0.0
    for _ in range(5):
        worst = float(np.max(np.where(mask, u[:, None] + v[None, :] - R, -np.inf)))
        if worst <= -_MARGIN:
            break
        step = (worst + 2 * _MARGIN) / 2
        u, v = u - step, v - step
        moved += 2 * step
    if moved > _MAX_REPAIR or np.any(u <= 0) or np.any(v <= 0):
        return None
    return u, v, moved


def _opt0_terms(s: np.ndarray, w: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``F_i(s, w)`` (the opt0 objective with the max at level ``i``) and its ``(t, 2t)`` Jacobian."""
    t = m.size
    es, ew = np.exp(-s), np.exp(-w)
    esw = es * ew
    gk = m * (es + esw)
    F = gk.sum() - gk + (m - 1) * es + m * esw + ew
    jac = np.empty((t, 2 * t))
    jac[:, :t] = -m * (es + esw)
    jac[:, t:] = -m * esw
    k = np.arange(t)
    jac[k, k] = -(m - 1) * es - m * esw
    jac[k, t + k] = -m * esw - ew
    return F, jac


def _opt0_polish(s: np.ndarray, w: np.ndarray, m: np.ndarray, R: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SLSQP polish of the convex form ``min z`` s.t. ``F_i(s, w) <= z`` near the conic solution.

    Only the nearly active constraints (and the three tightest on each variable) are passed
    on; feasibility for all of them is re-checked by the caller.  The conic solver's variables are accurate to about
    the square root of its tolerance (the objective is flat to second order along the active
    manifold); the polish restores full accuracy so the KKT check is meaningful.
    """
    from scipy.optimize import minimize

    t = m.size
    I, J = np.nonzero(mask)
    sp_s, sp_w = np.logaddexp(0.0, s), np.logaddexp(0.0, w)
    slack0 = R[I, J] - sp_s[I] - sp_w[J]
    near = slack0 <= 0.05 * np.maximum(1.0, np.abs(R[I, J]))
    for k in range(t):  # the three tightest constraints on every u_k and every v_k
        for rows in (np.flatnonzero(I == k), np.flatnonzero(J == k)):
            near[rows[np.argsort(slack0[rows])[:3]]] = True
    I, J = I[near], J[near]
    rIJ = R[I, J]
    n_c = I.size

    def cons(x: np.ndarray) -> np.ndarray:
        ss, ww, z = x[:t], x[t : 2 * t], x[-1]
        F, _ = _opt0_terms(ss, ww, m)
        return np.concatenate([z - F, rIJ - np.logaddexp(0.0, ss[I]) - np.logaddexp(0.0, ww[J])])

    def cons_jac(x: np.ndarray) -> np.ndarray:
        ss, ww = x[:t], x[t : 2 * t]
        _, jF = _opt0_terms(ss, ww, m)
        out = np.zeros((t + n_c, 2 * t + 1))
        out[:t, : 2 * t] = -jF
        out[:t, -1] = 1.0
        rows = t + np.arange(n_c)
        np.add.at(out, (rows, I), -1.0 / (1.0 + np.exp(-ss[I])))
        np.add.at(out, (rows, t + J), -1.0 / (1.0 + np.exp(-ww[J])))
        return out

    F0, _ = _opt0_terms(s, w, m)
    f0 = float(F0.max())
    x0 = np.concatenate([s, w, [f0]])
    grad = np.zeros(2 * t + 1)
    grad[-1] = 1.0 / f0
    with np.errstate(all="ignore"):
        res = minimize(
            lambda x: float(x[-1]) / f0, x0, jac=lambda x: grad, method="SLSQP",
            constraints=[{"type": "ineq", "fun": cons, "jac": cons_jac}],
            options={"maxiter": 200, "ftol": 1e-15},
        )
    x = np.asarray(res.x, dtype=float)
    if not np.all(np.isfinite(x)):
        return s, w
    return x[:t], x[t : 2 * t]


def _opt0_kkt(u: np.ndarray, v: np.ndarray, m: np.ndarray, R: np.ndarray, mask: np.ndarray) -> dict:
    """KKT check of the convex form ``min z`` s.t. ``F_i(s, w) <= z``, ``softplus(s_i)+softplus(w_j) <= r_ij``."""
    t = m.size
    Zs, Ys = np.expm1(u), np.expm1(v)
    F, jF = _opt0_terms(np.log(Zs), np.log(Ys), m)
    z = float(F.max())
    rows = []
    act_F = np.flatnonzero(z - F <= 1e-7 * max(1.0, abs(z)))
    for i in act_F:
        rows.append(np.concatenate([jF[i], [-1.0]]))
    I, J = np.nonzero(mask)
    slack = R[I, J] - (u[I] + v[J])
    act = slack <= 1e-6 * np.maximum(1.0, np.abs(R[I, J]))
    sig_s, sig_w = Zs / (1 + Zs), Ys / (1 + Ys)  # d softplus / ds = sigmoid(s)
    for i, j in zip(I[act], J[act]):
        row = np.zeros(2 * t + 1)
        row[i] += sig_s[i]
        row[t + j] += sig_w[j]
        rows.append(row)
    grad_obj = np.zeros(2 * t + 1)
    grad_obj[-1] = 1.0
    lam, resid = _kkt(grad_obj, np.array(rows))
    return {
        "kkt_residual": resid,
        "n_active_max_terms": int(act_F.size),
        "n_active_pairs": int(act.sum()),
        "max_term_multipliers": lam[: act_F.size].tolist(),
    }


def _opt0_multistart(
    m: np.ndarray, R: np.ndarray, mask: np.ndarray, starts: list[tuple[np.ndarray, np.ndarray]],
) -> list[tuple[float, np.ndarray, np.ndarray, bool]]:
    """Local SLSQP from several starts in the log-ratio coordinates ``(u, v)``.

    ``u = log(a/b)``, ``v = log((1-b)/(1-a))`` make every privacy constraint linear,
    ``u_i + v_j <= r_ij``, but the objective ``sum_i m_i/((e^u_i - 1)(1 - e^-v_i)) + zeta``
    with ``zeta >= 1/(e^v_i - 1) - 1/(e^u_i - 1)`` is not convex there (the second term is
    concave in ``u_i``), so this is an independent local method, not the convex form.
    Returns ``(objective, a, b, success)`` per start; the objective is ``inf`` for a start
    whose end point could not be made feasible by a repair of at most ``1e-6``.
    """
    from scipy.optimize import minimize

    t = m.size
    I, J = np.nonzero(mask)
    rIJ = R[I, J]
    n_c = I.size
    A = np.zeros((n_c, 2 * t + 1))
    np.add.at(A, (np.arange(n_c), I), 1.0)
    np.add.at(A, (np.arange(n_c), t + J), 1.0)

    def parts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        u, v = x[:t], x[t : 2 * t]
        Z, Y = np.expm1(u), np.expm1(v)
        return u, v, Z, Y

    out = []
    for a0, b0 in starts:
        u0, v0 = _uv_from_ab(np.asarray(a0, dtype=float), np.asarray(b0, dtype=float))
        f_start = float(_f0_uv(u0, v0, m))
        sc = 1.0 / f_start

        def fun(x: np.ndarray, sc: float = sc) -> float:
            _, _, Z, Y = parts(x)
            return sc * float(np.sum(m * (1 + 1 / Y) / Z) + x[-1])

        def jac(x: np.ndarray, sc: float = sc) -> np.ndarray:
            u, v, Z, Y = parts(x)
            g = np.empty(2 * t + 1)
            g[:t] = -m * (1 + 1 / Y) * np.exp(u) / Z**2
            g[t : 2 * t] = -m * np.exp(v) / (Z * Y**2)
            g[-1] = 1.0
            return sc * g

        def cons(x: np.ndarray) -> np.ndarray:
            _, _, Z, Y = parts(x)
            return np.concatenate([rIJ - A[:, : 2 * t] @ x[: 2 * t], x[-1] - (1 / Y - 1 / Z)])

        def cons_jac(x: np.ndarray) -> np.ndarray:
            u, v, Z, Y = parts(x)
            Jm = np.zeros((n_c + t, 2 * t + 1))
            Jm[:n_c] = -A
            k = np.arange(t)
            Jm[n_c + k, k] = -np.exp(u) / Z**2  # -(d/du)(-1/Z)
            Jm[n_c + k, t + k] = np.exp(v) / Y**2
            Jm[n_c + k, -1] = 1.0
            return Jm

        x0 = np.concatenate([u0, v0, [float(np.max(1 / np.expm1(v0) - 1 / np.expm1(u0)))]])
        bounds = [(1e-8, None)] * (2 * t) + [(None, None)]
        with np.errstate(all="ignore"):
            res = minimize(
                fun, x0, jac=jac, method="SLSQP", bounds=bounds,
                constraints=[{"type": "ineq", "fun": cons, "jac": cons_jac}],
                options={"maxiter": 500, "ftol": 1e-14},
            )
        x = np.asarray(res.x, dtype=float)
        u, v = x[:t], x[t : 2 * t]
        ok = bool(res.success) and bool(np.all(np.isfinite(x)))
        val = math.inf
        if ok:
            worst = float(np.max(rIJ * 0 + (u[I] + v[J] - rIJ)))
            if worst > -_MARGIN:
                step = (worst + 2 * _MARGIN) / 2
                u, v = u - step, v - step
            if np.all(u > 0) and np.all(v > 0) and worst <= 1e-6:
                val = float(_f0_uv(u, v, m))
            else:
                ok = False
        a, b = _ab_from_uv(u, v) if ok else (np.asarray(a0), np.asarray(b0))
        out.append((val, a, b, ok))
    return out


def _opt0_bnb(
    m: np.ndarray, R: np.ndarray, mask: np.ndarray, rel_gap: float = 1e-4, max_boxes: int = 400_000,
    max_iter: int = 60,
) -> dict:
    """Branch and bound over the reduced variables ``v`` with a rigorous interval lower bound.

    The opt0 objective ``f(u, v)`` is non-increasing in every ``u_i`` and ``v_i`` (ID-LDP
    chapter, label ``lem-opt0-monotone``), so at an optimum ``u_i = min_j (r_ij - v_j)``.  On
    a box ``[lo, hi]`` of ``v``, ``u(v) <= u(lo)`` and ``v <= hi``, hence
    ``f(u(v), v) >= f(u(lo), hi)``: a valid lower bound.  Boxes whose bound exceeds the
    incumbent by the relative gap are discarded; the rest are bisected in every coordinate.
    """
    t = m.size
    Rm = np.where(mask, R, np.inf)
    cap = np.min(Rm, axis=0)  # u_i > 0 needs v_j < r_ij for every constrained (i, j)

    def u_of(v: np.ndarray) -> np.ndarray:
        return np.min(Rm[None, :, :] - v[:, None, :], axis=2)

    corners = np.array(np.meshgrid(*[[0.0, 1.0]] * t, indexing="ij")).reshape(t, -1).T
    lo = np.zeros((1, t))
    hi = cap[None, :].copy()
    best, best_v = math.inf, None
    pruned_lb = math.inf
    it = 0
    for it in range(max_iter):
        mid = (lo + hi) / 2
        ub = _f0_uv(u_of(mid), mid, m)
        k = int(np.argmin(ub))
        if ub[k] < best:
            best, best_v = float(ub[k]), mid[k].copy()
        with np.errstate(invalid="ignore"):
            lb = _f0_uv(u_of(lo), hi, m)  # inf when the whole box has some u_i <= 0
        keep = lb <= best * (1 - rel_gap)
        if np.any(~keep):
            pruned_lb = min(pruned_lb, float(np.min(lb[~keep])))
        lo, hi, lb = lo[keep], hi[keep], lb[keep]
        if lo.shape[0] == 0 or lo.shape[0] * corners.shape[0] > max_boxes:
            break
        half = (hi - lo) / 2
        lo = (lo[:, None, :] + corners[None] * half[:, None, :]).reshape(-1, t)
        hi = lo + np.repeat(half, corners.shape[0], axis=0)
    lower = min(pruned_lb, float(lb.min()) if lo.shape[0] else math.inf, best)
    return {
        "lower_bound": lower,
        "upper_bound": best,
        "best_v": best_v,
        "gap": (best - lower) / best,
        "iterations": it + 1,
        "open_boxes": int(lo.shape[0]),
    }


def solve_opt0(
    level_budgets: Any,
    level_sizes: Any,
    r: PairRule = "min",
    same_level_pairs: str = "paper",
    *,
    pair_sizes: Any = None,
    n_starts: int | None = None,
    bnb_max_levels: int = 3,
    seed: int = 0,
) -> IDUESolution:
    """opt0: minimise the worst-case MSE per user under every pair constraint (global optimum).

    Problem (8): ``min f = sum_i m_i b_i(1-b_i)/(a_i-b_i)^2 + max_i (1-a_i-b_i)/(a_i-b_i)``
    s.t. ``a_i(1-b_j)/(b_i(1-a_j)) <= e^{r_ij}`` and ``0 < b_i < a_i < 1``.

    Method and certificate (ID-LDP chapter, label ``thm-opt0-gp``).  The change of variables
    ``Z = e^u - 1``, ``Y = e^v - 1`` with ``u = log(a/b)``, ``v = log((1-b)/(1-a))``
    (so ``b = Y/(Z + Y + ZY)``, ``a = (1+Z) Y/(Z + Y + ZY)``) is a bijection of ``{0 < b < a < 1}``
    onto ``{Z, Y > 0}`` and turns (8) into the geometric program
    ``min max_i F_i(Z, Y)`` s.t. ``(1+Z_i)(1+Y_j) <= e^{r_ij}`` (see the module docstring),
    which is convex in ``(log Z, log Y)``.  Hence:

    1. **primary**: cvxpy (CLARABEL) solves the convex form, then SLSQP polishes it (the
       conic point is only accurate to about the square root of the solver tolerance);
    2. **multistart**: SLSQP in the log-ratio coordinates ``(u, v)`` (linear constraints,
       non-convex objective) from ``n_starts`` seeded random feasible points plus the opt1
       and opt2 solutions.  ``(a, b) -> (u, v) -> (log Z, log Y)`` are diffeomorphisms, so
       every local minimum of the paper's problem is global and all converged starts should
       agree (``diagnostics['multistart']['n_agree']``; for ``t <= bnb_max_levels`` at least
       one must);
    3. **interval search** (``t <= bnb_max_levels``): branch and bound over the reduced
       variables ``v`` with the monotone lower bound of ``_opt0_bnb``, a rigorous bracket
       ``[lower_bound, upper_bound]`` on the global minimum.

    Every candidate point is repaired to strict feasibility and its KKT conditions in the
    convex coordinates are checked by NNLS (per-coordinate relative residual at most
    ``KKT_RTOL``); a passing point is a certified global optimum.  The best certified point is
    returned (``diagnostics['chosen']``, ``diagnostics['candidates']``).
    :class:`IDUESolverError` is raised if no candidate passes, if any feasible point beats it
    by more than ``AGREEMENT_RTOL`` (relative), if no independent multistart run agrees
    (``t <= bnb_max_levels``), or if the interval bracket does not contain it.

    Parameters
    ----------
    level_budgets, level_sizes, r, same_level_pairs, pair_sizes
        As in :func:`solve_opt1`.
    n_starts
        Random starts of the multistart solver (default 8 for ``t <= 10``, 2 for
        ``t <= 30``, 0 beyond; the opt1/opt2 starts are always added when ``t <= 30``).
    bnb_max_levels
        Largest ``t`` for which the branch and bound runs (its cost grows like ``2^t``).
    seed
        Seed of the random starts.
    """
    e, m, R, mask = _problem_setup(level_budgets, level_sizes, r, same_level_pairs, pair_sizes)
    t = e.size
    if n_starts is None:
        n_starts = 8 if t <= 10 else (2 if t <= 30 else 0)
    elif isinstance(n_starts, bool) or not isinstance(n_starts, numbers.Integral) or n_starts < 0:
        raise ValueError(f"n_starts must be a non-negative integer, got {n_starts!r}")
    bnb_max_levels = check_positive_int(bnb_max_levels, "bnb_max_levels", minimum=0)

    conv, status = _opt0_convex(m, R, mask)
    cands: list[tuple[str, np.ndarray, np.ndarray]] = list(conv)

    # ---- multistart in the log-ratio coordinates (u, v)
    starts: list[tuple[str, tuple[np.ndarray, np.ndarray]]] = []
    u_c, v_c = conv[0][1], conv[0][2]
    if np.all(np.isfinite(u_c)) and np.all(u_c > 0) and np.all(np.isfinite(v_c)) and np.all(v_c > 0):
        starts.append(("conic+slsqp(u,v)", _ab_from_uv(u_c, v_c)))
    if t <= 30:
        for name, model_solver in (("opt1", solve_opt1), ("opt2", solve_opt2)):
            try:
                sol = model_solver(e, m, r, same_level_pairs, pair_sizes=pair_sizes)
                starts.append((f"start:{name}", (sol.a, sol.b)))
            except IDUESolverError:  # pragma: no cover - the structured models are robust
                pass
    gen = np.random.default_rng(seed)
    Rm = np.where(mask, R, np.inf)
    cap = np.min(Rm, axis=0)
    for k in range(n_starts):
        v0 = cap * gen.uniform(0.1, 0.9, size=t)
        u0 = np.min(Rm - v0[None, :], axis=1) * gen.uniform(0.3, 0.95, size=t)
        starts.append((f"start:random{k}", _ab_from_uv(u0, v0)))
    ms_names: list[str] = []
    if starts:
        results = _opt0_multistart(m, R, mask, [st for _, st in starts])
        for (name, _), (val, ra, rb, ok) in zip(starts, results):
            if ok and math.isfinite(val):
                cands.append((name, *_uv_from_ab(ra, rb)))
                ms_names.append(name)

    # ---- interval branch and bound for small t
    bnb = None
    if t <= bnb_max_levels:
        bnb = _opt0_bnb(m, R, mask, rel_gap=1e-4 if t <= 2 else 1e-3)
        best_v = bnb.pop("best_v")
        if best_v is not None and math.isfinite(bnb["upper_bound"]):
            cands.append(("bnb", np.min(Rm - best_v[None, :], axis=1), best_v))

    # ---- repair, evaluate and KKT-check every candidate in the convex coordinates
    table = []
    for name, cu, cv in cands:
        fixed = _opt0_repair(cu, cv, R, mask)
        if fixed is None:
            continue
        uu, vv, moved = fixed
        kkt = _opt0_kkt(uu, vv, m, R, mask)
        table.append({"name": name, "objective": float(_f0_uv(uu, vv, m)), "u": uu, "v": vv, "repair": moved, **kkt})
    certified = [row for row in table if row["kkt_residual"] <= KKT_RTOL]
    if not certified:
        best_res = min((row["kkt_residual"] for row in table), default=math.inf)
        raise IDUESolverError(f"opt0: no candidate passed the KKT check (best residual {best_res:.3g}; solver {status})")
    best = min(certified, key=lambda row: row["objective"])
    f_best = best["objective"]
    lowest = min(row["objective"] for row in table)
    if lowest < f_best * (1 - AGREEMENT_RTOL):
        raise IDUESolverError(f"opt0: a feasible point ({lowest!r}) beats the KKT-certified optimum ({f_best!r})")
    random_like = [row for row in table if row["name"].startswith("start:")]
    n_agree = sum(row["objective"] <= f_best * (1 + 1e-5) for row in random_like)
    diag: dict[str, Any] = {
        "solver": "cvxpy/CLARABEL (geometric program in log Z, log Y) + SLSQP polish",
        "status": status,
        "chosen": best["name"],
        "kkt_residual": best["kkt_residual"],
        "n_active_max_terms": best["n_active_max_terms"],
        "n_active_pairs": best["n_active_pairs"],
        "max_term_multipliers": best["max_term_multipliers"],
        "repair": best["repair"],
        "candidates": {row["name"]: {"objective": row["objective"], "kkt_residual": row["kkt_residual"]} for row in table},
        "multistart": {"n_starts": sum(nm.startswith("start:") for nm, _ in starts), "n_agree": int(n_agree)},
        "certificate": (
            "opt0 is a geometric program in Z = e^u - 1, Y = e^v - 1 (convex in log coordinates); "
            "KKT verified by NNLS; cross-checked by multistart SLSQP in (u, v)"
            + (" and branch-and-bound interval bounds" if bnb is not None else "")
        ),
    }
    if t <= bnb_max_levels and n_agree == 0:
        raise IDUESolverError(f"opt0: no independent multistart run reached the certified optimum {f_best!r}")
    if bnb is not None:
        diag["bnb"] = bnb
        if bnb["lower_bound"] > f_best * (1 + 1e-9):
            raise IDUESolverError(f"opt0: interval lower bound {bnb['lower_bound']!r} exceeds the optimum {f_best!r}")
        if bnb["upper_bound"] < f_best * (1 - AGREEMENT_RTOL):
            raise IDUESolverError(f"opt0: grid search found {bnb['upper_bound']!r} below the optimum {f_best!r}")
    a, b = _ab_from_uv(best["u"], best["v"])
    return _make_solution("opt0", e, m, a, b, worst_case_mse(a, b, m), r, R, mask, same_level_pairs, diag)


_SOLVERS = {"opt0": solve_opt0, "opt1": solve_opt1, "opt2": solve_opt2}


def solve(
    model: str,
    level_budgets: Any,
    level_sizes: Any,
    r: PairRule = "min",
    same_level_pairs: str = "paper",
    **kwargs: Any,
) -> IDUESolution:
    """Dispatch to :func:`solve_opt0`, :func:`solve_opt1` or :func:`solve_opt2` by name."""
    if model not in _SOLVERS:
        raise ValueError(f"unknown model {model!r}; expected one of {MODELS}")
    return _SOLVERS[model](level_budgets, level_sizes, r, same_level_pairs, **kwargs)


# ============================================================================ mechanism
def _item_budgets(budgets: Any, minimum: int = 2) -> np.ndarray:
    arr = np.asarray(budgets, dtype=float) if not isinstance(budgets, np.ndarray) else budgets
    if arr.ndim != 1:
        raise ValueError(f"budgets must be a 1-d vector of per-item budgets, got shape {np.shape(budgets)}")
    check_domain_size(arr.size, "len(budgets)", minimum=minimum)
    return check_budget_vector(arr, arr.size)


def _match_levels(values: np.ndarray, level_budgets: np.ndarray, what: str) -> np.ndarray:
    """Index of each value in ``level_budgets`` (relative tolerance 1e-12), or ValueError."""
    idx = np.searchsorted(level_budgets, values)
    out = np.empty(values.size, dtype=np.int64)
    for k, (x, j) in enumerate(zip(values, idx)):
        for cand in (j - 1, j):
            if 0 <= cand < level_budgets.size and abs(level_budgets[cand] - x) <= 1e-12 * max(1.0, abs(x)):
                out[k] = cand
                break
        else:
            raise ValueError(f"{what} {x!r} is not one of the solution's level budgets {level_budgets.tolist()}")
    return out


class IDUE(UnaryEncoding):
    """Input-Discriminative Unary Encoding (Gu et al., Sec. V) as a :class:`UnaryEncoding`.

    Items with equal budget form a level; every item of level ``i`` uses ``(a_i, b_i)`` of the
    chosen model.  Perturbation, aggregation, the estimator ``(C_i - n b_i)/(a_i - b_i)``
    (eq. 6) and its variance (eq. 7) are inherited (ID-LDP chapter, labels ``alg-idue``,
    ``eq-idue-estimator``, ``eq-idue-variance``).

    Parameters
    ----------
    budgets
        Per-item budgets ``eps_x`` (length ``d >= 2``, finite, positive).
    model
        ``"opt0"`` (default), ``"opt1"``, ``"opt2"``, or a precomputed :class:`IDUESolution`
        whose level budgets include every item budget.
    r
        Pair rule for solving (default ``"min"``); must be left ``None`` or equal the rule of
        a given solution.
    same_level_pairs
        Passed to the solver (ignored for a given solution).

    Attributes
    ----------
    solution
        The :class:`IDUESolution` in use.
    budgets
        Per-item budgets.
    levels
        Per-item level index into ``solution.level_budgets``.

    Raises
    ------
    ValueError
        Bad input, or a given solution whose channel violates E-ID-LDP for ``budgets``
        (checked exactly with :func:`ldpkit.accountant.check_id_ldp`).
    """

    def __init__(
        self,
        budgets: Any,
        model: str | IDUESolution = "opt0",
        r: PairRule | None = None,
        same_level_pairs: str = "paper",
    ) -> None:
        eps = _item_budgets(budgets)
        _check_pairs_flag(same_level_pairs)
        level_budgets, sizes = np.unique(eps, return_counts=True)
        if isinstance(model, IDUESolution):
            sol = model
            if r is not None and not (isinstance(r, str) and r == sol.r) and r is not sol.r:
                raise ValueError(f"r={r!r} differs from the solution's pair rule {sol.r!r}")
            levels = _match_levels(eps, sol.level_budgets, "item budget")
        elif isinstance(model, str) and model in MODELS:
            sol = solve(model, level_budgets, sizes, "min" if r is None else r, same_level_pairs)
            levels = np.searchsorted(sol.level_budgets, eps)
        else:
            raise ValueError(f"model must be one of {MODELS} or an IDUESolution, got {model!r}")
        super().__init__(sol.a[levels], sol.b[levels])
        self.solution = sol
        self.budgets = eps
        self.levels = levels
        check = accountant.check_id_ldp(self.channel(), eps, r=sol.r, method="classes")
        if not check.satisfied:
            raise ValueError(
                f"the solution violates ID-LDP for these budgets: pair {check.worst_pair} has log-ratio "
                f"{check.worst_log_ratio!r} > {check.allowed!r}"
            )

    @property
    def level_budgets(self) -> np.ndarray:
        """The solution's level budgets (``levels`` indexes into it)."""
        return self.solution.level_budgets

    def __repr__(self) -> str:
        return f"IDUE(d={self.d}, levels={self.solution.t}, model={self.solution.model!r})"


# ============================================================================ item sets
def _check_dummy_budget(dummy_budget: Any, eps: np.ndarray) -> float:
    if dummy_budget is None:
        return float(eps.min())
    val = check_epsilon(dummy_budget, "dummy_budget")
    if not np.any(np.abs(eps - val) <= 1e-12 * max(1.0, abs(val))):
        raise ValueError(f"dummy_budget {val!r} must be one of the item budgets (Theorem 4)")
    return float(eps[np.argmin(np.abs(eps - val))])


def itemset_budget(itemset: Any, budgets: Any, ell: int, dummy_budget: float | None = None) -> float:
    """Budget of an item set, eq. (15): ``ln[eta mean_{i in x} e^{eps_i} + (1 - eta) e^{eps*}]``.

    ``eta = |x| / max(|x|, ell)`` is the probability that Padding-and-Sampling reports a real
    item; the empty set gets ``eps*`` (the dummies' budget, default the smallest budget).
    Computed with a weighted log-sum-exp (ID-LDP chapter, label ``eq-itemset-budget``).
    """
    from scipy.special import logsumexp

    eps = _item_budgets(budgets, minimum=1)
    ell = check_positive_int(ell, "ell")
    star = _check_dummy_budget(dummy_budget, eps)
    sets = as_itemsets([itemset], eps.size)
    x = sets.indices
    k = x.size
    if k == 0:
        return star
    eta = k / max(k, ell)
    vals = np.concatenate([eps[x], [star]])
    w = np.concatenate([np.full(k, eta / k), [1.0 - eta]])
    return float(logsumexp(vals, b=w))


def check_itemset_id_ldp(
    ps: PaddingSampling, budgets: Any, dummy_budget: float | None = None, r: PairRule = "min"
) -> accountant.IDLDPResult:
    """Theorem 4 by exact enumeration: every item set against every other, every output.

    The channel of ``ps`` over all ``2**d`` item sets (:func:`ldpkit.padding.all_itemsets`, so
    ``d <= MAX_ENUMERATED_D`` and a unary inner oracle small enough to enumerate) is checked
    with :func:`ldpkit.accountant.check_id_ldp` against the item-set budgets of eq. (15)
    (:func:`itemset_budget`).  Works for any Padding-and-Sampling mechanism, not only solver
    outputs (ID-LDP chapter, label ``thm-idue-ps``).
    """
    eps = _item_budgets(budgets, minimum=1)
    if eps.size != ps.d:
        raise ValueError(f"budgets has {eps.size} entries, expected one per real item ({ps.d})")
    sets = all_itemsets(ps.d)
    set_budgets = [itemset_budget(x, eps, ps.ell, dummy_budget) for x in sets]
    return accountant.check_id_ldp(ps.channel(sets), set_budgets, r=r)


def lemma2_log_bounds(ps: PaddingSampling, itemsets: Any) -> np.ndarray:
    """Log of the Lemma 2 bound, eq. (13): ``log(sum_k w_xk alpha_k / sum_k w_x'k beta_k)``.

    ``w_xk`` is the probability that set ``x`` samples padded item ``k``, ``alpha = a/b`` and
    ``beta = (1-a)/(1-b)`` of the unary inner oracle.  Returns the matrix over ordered pairs of
    ``itemsets`` (ID-LDP chapter, label ``thm-idue-ps``).
    """
    inner = ps.inner
    if not isinstance(inner, UnaryEncoding):
        raise ValueError(f"Lemma 2 needs a unary-encoding inner oracle, got {type(inner).__name__}")
    w = ps.sampling_probabilities(itemsets)
    alpha, beta = inner.a / inner.b, (1 - inner.a) / (1 - inner.b)
    return np.log(w @ alpha)[:, None] - np.log(w @ beta)[None, :]


class IDUEPS(PaddingSampling):
    """IDUE-PS (Algorithm 2): Padding-and-Sampling around IDUE over ``m + ell`` items.

    Dummy items ``m .. m+ell-1`` take the level (and ``(a, b)``) of ``dummy_budget``.
    Build it with :func:`idue_ps`.

    Attributes
    ----------
    solution
        The IDUE solution (levels of the real items).
    budgets
        Real items' budgets (length ``m``).
    dummy_budget
        ``eps*``.
    """

    solution: IDUESolution
    budgets: np.ndarray
    dummy_budget: float

    def itemset_budgets(self, itemsets: Any) -> np.ndarray:
        """Eq. (15) for every user's item set."""
        sets = as_itemsets(itemsets, self.d)
        return np.array([itemset_budget(s, self.budgets, self.ell, self.dummy_budget) for s in sets.to_lists()])


def idue_ps(
    budgets: Any,
    ell: int,
    model: str | IDUESolution = "opt0",
    r: PairRule = "min",
    dummy_budget: float | None = None,
    same_level_pairs: str = "paper",
) -> IDUEPS:
    """IDUE-PS for item-set input (Gu et al., Algorithm 2 and Theorem 4).

    The ``ell`` dummy items get ``eps* = dummy_budget`` (default ``min(budgets)``; it must be
    one of the budgets) and that level's ``(a, b)``.  The solution is computed on the real
    items' levels: adding dummies to an existing level leaves the set of level pairs, hence
    the constraints, unchanged, and the objective counts real items only -- with one exception
    handled here: under ``same_level_pairs="needed"`` a level holding one real item loses its
    ``(i, i)`` constraint, but once the dummies join it that pair is between distinct items,
    so the dummies are counted when deciding which same-level pairs are needed.

    Theorem 4 (ID-LDP chapter, label ``thm-idue-ps``): if the padded single-item IDUE over the
    ``m + ell`` items satisfies MinID-LDP (distinct pairs), then IDUE-PS satisfies MinID-LDP
    for item sets with the budgets of :func:`itemset_budget`.  The constructor checks the
    padded IDUE exactly with the accountant.

    Parameters
    ----------
    budgets
        Real items' budgets (length ``m >= 1``).
    ell
        Padding length.
    model
        ``"opt0"``, ``"opt1"``, ``"opt2"`` or an :class:`IDUESolution` covering the budgets.
    r
        Pair rule for solving (Theorem 4 is stated for ``"min"``).
    dummy_budget
        ``eps*``.
    same_level_pairs
        As in :func:`solve_opt0`.
    """
    eps = _item_budgets(budgets, minimum=1)
    ell = check_positive_int(ell, "ell")
    star = _check_dummy_budget(dummy_budget, eps)
    _check_pairs_flag(same_level_pairs)
    level_budgets, sizes = np.unique(eps, return_counts=True)
    if isinstance(model, IDUESolution):
        sol = model
    elif isinstance(model, str) and model in MODELS:
        pair_sizes = sizes.copy()
        pair_sizes[int(np.searchsorted(level_budgets, star))] += ell
        sol = solve(model, level_budgets, sizes, r, same_level_pairs, pair_sizes=pair_sizes)
    else:
        raise ValueError(f"model must be one of {MODELS} or an IDUESolution, got {model!r}")
    padded = np.concatenate([eps, np.full(ell, star)])
    m = eps.size

    def factory(k: int) -> IDUE:
        if k != m + ell:  # pragma: no cover - PaddingSampling always asks for m + ell
            raise ValueError(f"IDUE-PS expects {m + ell} padded items, got {k}")
        return IDUE(padded, model=sol)

    ps = IDUEPS(factory, m, ell)
    ps.solution = sol
    ps.budgets = eps
    ps.dummy_budget = star
    return ps


def rappor_ps(m: int, epsilon: float, ell: int) -> PaddingSampling:
    """RAPPOR-PS baseline: Padding-and-Sampling around basic RAPPOR at LDP budget ``epsilon``."""
    m = check_positive_int(m, "m")
    eps = check_epsilon(epsilon)
    ell = check_positive_int(ell, "ell")
    return PaddingSampling(lambda k: RAPPOR(k, eps), m, ell)


def oue_ps(m: int, epsilon: float, ell: int) -> PaddingSampling:
    """OUE-PS baseline: Padding-and-Sampling around OUE at LDP budget ``epsilon``."""
    m = check_positive_int(m, "m")
    eps = check_epsilon(epsilon)
    ell = check_positive_int(ell, "ell")
    return PaddingSampling(lambda k: OUE(k, eps), m, ell)


# ============================================================================ toy example
@dataclass(frozen=True, eq=False)
class ToyExample:
    """The survey of Sec. IV-A / Table I: HIV at ``ln 4``, four other conditions at ``ln 6``.

    Attributes
    ----------
    budgets
        Per-item budgets (5 items).
    names
        Item names.
    paper_table
        Table I as printed (rounded): per mechanism, ``flip`` = ``1 - a`` and ``b`` for
        ``(i = 1, i = 2..5)``, variance coefficients ``var_n`` (of ``n``) and ``var_c`` (of
        ``c_i``), and the total variance range in units of ``n``.
    """

    budgets: np.ndarray
    names: tuple[str, ...]
    paper_table: dict

    def rows(self, models: Sequence[str] = MODELS, r: PairRule = "min") -> list[dict]:
        """Recompute Table I: RAPPOR and OUE at ``min`` budget, then IDUE for each model.

        Each row gives ``flip`` (``1 - a``), ``b``, ``var_n`` (``g``), ``var_c`` (``h``) for
        item 1 and items 2-5, and ``total = (min, max)`` of ``sum_i Var/n`` over data
        distributions (``sum_i m_i g_i + min_i h_i`` to ``... + max_i h_i``).
        """
        eps_min = float(self.budgets.min())
        mechs: list[tuple[str, UnaryEncoding]] = [("RAPPOR", RAPPOR(5, eps_min)), ("OUE", OUE(5, eps_min))]
        for model in models:
            mechs.append((f"IDUE-{model}", IDUE(self.budgets, model=model, r=r)))
        out = []
        for name, mech in mechs:
            a, b = mech.a[[0, 1]], mech.b[[0, 1]]
            g, h = variance_terms(a, b)
            base = float(g[0] + 4 * g[1])
            out.append({
                "mechanism": name,
                "flip": (1 - a).tolist(),
                "b": b.tolist(),
                "var_n": g.tolist(),
                "var_c": h.tolist(),
                "total": (base + float(h.min()), base + float(h.max())),
            })
        return out


def toy_example() -> ToyExample:
    """The paper's Table I setup (5 items; ``eps_1 = ln 4``, ``eps_2..5 = ln 6``).

    ID-LDP chapter, label ``sec-idldp-table1``.
    """
    budgets = np.array([math.log(4.0)] + [math.log(6.0)] * 4)
    paper = {
        "RAPPOR": {"flip": (0.33, 0.33), "b": (0.33, 0.33), "var_n": (2.0, 2.0), "var_c": (0.0, 0.0), "total": (10.0, 10.0)},
        "OUE": {"flip": (0.5, 0.5), "b": (0.2, 0.2), "var_n": (1.78, 1.78), "var_c": (1.0, 1.0), "total": (9.9, 9.9)},
        "IDUE": {"flip": (0.41, 0.33), "b": (0.33, 0.28), "var_n": (3.27, 1.32), "var_c": (0.31, 0.13), "total": (8.68, 8.86)},
    }
    names = ("HIV", "anemia", "headache", "stomachache", "toothache")
    return ToyExample(budgets=budgets, names=names, paper_table=paper)
