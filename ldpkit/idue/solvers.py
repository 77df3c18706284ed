"""The three IDUE optimisation models (Gu et al., Sec. V-D): opt0, opt1 and opt2.

ID-LDP chapter, :ref:`sec-idldp-models`, :prf:ref:`prop-idue-convexity` and :prf:ref:`thm-opt0-gp`.
Every solver validates its input before any computation, and every returned solution is
feasibility-checked (:func:`ldpkit.idue.problem.verify_solution`) and KKT-certified
(``ldpkit._solvers``).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from .._solvers import (
    KKT_RTOL,
    MARGIN,
    MAX_REPAIR,
    cvx_solve,
    kkt_multipliers,
    kkt_point,
    newton_active_set,
    polish_linear,
    single_threaded,
)
from .._rng import RNGLike, as_generator
from .._validation import ArgumentTypeError, check_positive_int, describe
from ..accountant import PairRule
from .problem import (
    AGREEMENT_RTOL,
    MODELS,
    IDUESolution,
    IDUESolverError,
    Model,
    SameLevelPairs,
    ab_from_uv,
    make_solution,
    opt0_objective_uv,
    problem_setup,
    uv_from_ab,
    worst_case_mse,
)

__all__ = ["MAX_STARTS", "solve", "solve_opt0", "solve_opt1", "solve_opt2"]

#: most random starts :func:`solve_opt0` accepts (each is a local solve; the default is at most 8)
MAX_STARTS = 1_000


# ============================================================================ opt1
def _f1(tau: np.ndarray, m: np.ndarray) -> float:
    return float(np.sum(m * np.exp(tau) / np.expm1(tau) ** 2))


@single_threaded
def solve_opt1(
    level_budgets: ArrayLike,
    level_sizes: ArrayLike,
    r: PairRule = "min",
    same_level_pairs: SameLevelPairs = "paper",
    *,
    pair_sizes: Any = None,
) -> IDUESolution:
    """opt1 (RAPPOR structure): ``a_i = e^{tau_i}/(e^{tau_i}+1)``, ``b_i = 1 - a_i``.

    Minimises ``sum_i m_i e^{tau_i}/(e^{tau_i}-1)^2`` subject to ``tau_i + tau_j <= r_ij``
    for every constrained ordered pair (both orders bind ``tau_i + tau_j``), ``tau > 0``.

    Convexity (ID-LDP chapter, :prf:ref:`prop-idue-convexity`): ``e^tau/(e^tau-1)^2 =
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
    e, m, R, mask = problem_setup(level_budgets, level_sizes, r, same_level_pairs, pair_sizes)
    both = mask | mask.T
    C = np.minimum(np.where(mask, R, np.inf), np.where(mask.T, R.T, np.inf))
    I, J = np.nonzero(np.triu(both))
    closed = _opt1_own_bounds(m, C, both, I, J)
    if closed is not None:
        tau, info = closed
        diag = {"solver": "closed form (every level at its own bound)", "status": "optimal", **info,
                "certificate": "each tau_i at its largest feasible value, the objective decreasing in each"}
    else:
        tau0, status = _opt1_conic(m, C[I, J], I, J)
        tau, info = _opt1_polish(tau0, m, C[I, J], I, J)
        diag = {
            "solver": "cvxpy/CLARABEL (geometric-program form in s = log(e^tau - 1)) + SLSQP polish",
            "status": status,
            **info,
            "certificate": "convex problem; KKT verified in tau-coordinates by NNLS",
        }
    a = np.exp(tau) / (np.exp(tau) + 1)
    b = 1 / (np.exp(tau) + 1)
    return make_solution("opt1", e, m, a, b, _f1(tau, m), r, R, mask, same_level_pairs, diag)


def _opt1_own_bounds(
    m: np.ndarray, C: np.ndarray, both: np.ndarray, I: np.ndarray, J: np.ndarray
) -> tuple[np.ndarray, dict[str, Any]] | None:
    """opt1's optimum when every level sits at its own bound: ``tau_i = C_ii / 2`` (less the solvers' margin).

    Every level with its same-level pair has ``2 tau_i <= C_ii``; the objective decreases in every
    ``tau_i``; so when the point ``tau_i = C_ii / 2`` meets every pair (the ``"average"`` and
    ``"max"`` rules: ``(eps_i + eps_j) / 2 <= r_ij``), no feasible point does better and it is the
    optimum (ID-LDP chapter, :prf:ref:`prop-idue-convexity`).  The KKT conditions hold with the
    multiplier ``-f_i'(tau_i) / 2 >= 0`` on each same-level pair and 0 elsewhere; their residual
    is computed (``diagnostics['kkt_residual']``).  ``None`` when a level lacks its same-level pair
    or the point breaks a pair (the ``"min"`` rule with distinct budgets).
    """
    if not np.all(np.diag(both)):
        return None
    tau = np.diag(C) / 2.0 - MARGIN  # every constraint kept by a margin, as a repaired solver point is
    if not (np.all(tau > 0) and np.all(tau[I] + tau[J] <= C[I, J] - MARGIN)):
        return None
    E = np.exp(tau)
    grad = -m * E * (E + 1) / np.expm1(tau) ** 3  # of e^tau / (e^tau - 1)^2, negative
    lam = -grad / 2.0  # on the (i, i) rows, whose coefficient of tau_i is 2
    scale = float(np.max(np.abs(grad)))
    residual = float(np.max(np.abs(grad + 2.0 * lam))) / scale
    slack = C[I, J] - (tau[I] + tau[J])
    return tau, {"point": "own bounds", "kkt_residual": residual, "min_slack": float(slack.min()),
                 "multipliers_min": float(lam.min())}


def _opt1_conic(m: np.ndarray, cap: np.ndarray, I: np.ndarray, J: np.ndarray) -> tuple[np.ndarray, str]:
    """Solve opt1 as a geometric program in ``s = log(e^tau - 1)`` (``T_I + T_J <= cap``).

    Returns the conic point ``tau = softplus(s)`` and the solver status.
    """
    import cvxpy as cp

    t = m.size
    s = cp.Variable(t)
    T = cp.Variable(t)
    cons = [T >= cp.logistic(s), T[I] + T[J] <= cap]
    scale = cp.Parameter(nonneg=True)
    obj = cp.Minimize(scale * cp.sum(cp.multiply(m, cp.exp(-2 * s) + cp.exp(-s))))
    prob = cp.Problem(obj, cons)
    f_ldp = _f1(np.full(t, float(cap.min()) / 2), m)  # feasible LDP point tau = min(r)/2
    status = cvx_solve(prob, scale, (1.0 / m.sum(), 1.0 / f_ldp, 1.0), "opt1", IDUESolverError)
    return np.logaddexp(0.0, np.asarray(s.value, dtype=float)), status


def _opt1_polish(
    tau0: np.ndarray, m: np.ndarray, cap: np.ndarray, I: np.ndarray, J: np.ndarray
) -> tuple[np.ndarray, dict[str, Any]]:
    """SLSQP polish of the conic ``tau`` under ``tau_I + tau_J <= cap`` (``polish_linear``)."""
    t = m.size
    A = np.zeros((I.size, t))
    np.add.at(A, (np.arange(I.size), I), 1.0)
    np.add.at(A, (np.arange(I.size), J), 1.0)
    ex_grad = lambda x: -m * np.exp(x) * (np.exp(x) + 1) / np.expm1(x) ** 3

    def shrink(x: np.ndarray, deficit: float) -> np.ndarray:  # keeps the RAPPOR structure
        return x - (deficit + 2 * MARGIN) / 2

    def hess(x: np.ndarray) -> np.ndarray:  # of e^tau/(e^tau - 1)^2: e^tau (e^2tau + 4 e^tau + 1)/(e^tau - 1)^4
        E = np.exp(x)
        return np.diag(m * E * (E**2 + 4 * E + 1) / np.expm1(x) ** 4)

    return polish_linear(
        "opt1", tau0, lambda x: _f1(x, m), ex_grad, A, cap, (0.0, np.inf), shrink, error=IDUESolverError, hess=hess
    )


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


@single_threaded
def solve_opt2(
    level_budgets: ArrayLike,
    level_sizes: ArrayLike,
    r: PairRule = "min",
    same_level_pairs: SameLevelPairs = "paper",
    *,
    pair_sizes: Any = None,
) -> IDUESolution:
    """opt2 (OUE structure): ``a_i = 1/2``, minimise ``sum_i m_i b_i(1-b_i)/(1/2-b_i)^2``.

    Constraints: ``e^{r_ij} b_i + b_j >= 1`` for every constrained ordered pair (the ratio
    ``a_i(1-b_j)/(b_i(1-a_j)) = (1-b_j)/b_i`` when ``a = 1/2``) and ``0 < b_i < 1/2``.

    Convexity (ID-LDP chapter, :prf:ref:`prop-idue-convexity`): with ``d = 1/2 - b``,
    ``b(1-b)/d^2 = 1/(4 d^2) - 1``, whose second derivative in ``b`` is ``3/(2 d^4) > 0``;
    the DCP form is ``m_i (0.25 * power(0.5 - b_i, -2) - 1)`` with linear constraints.  KKT
    conditions are verified by NNLS on the active constraints.

    Parameters and exceptions as in :func:`solve_opt1`.
    """
    e, m, R, mask = problem_setup(level_budgets, level_sizes, r, same_level_pairs, pair_sizes)
    t = e.size
    I, J = np.nonzero(mask)
    ER = np.exp(R[I, J])
    b0, status = _opt2_conic(m, R[I, J], ER, I, J)
    b, info = _opt2_polish(b0, m, ER, I, J)
    a = np.full(t, 0.5)
    diag = {
        "solver": "cvxpy/CLARABEL (DCP form 0.25*power(0.5-b,-2) - 1) + SLSQP polish",
        "status": status,
        **info,
        "certificate": "convex problem; KKT verified by NNLS",
    }
    return make_solution("opt2", e, m, a, b, _f2(b, m), r, R, mask, same_level_pairs, diag)


def _opt2_conic(m: np.ndarray, rIJ: np.ndarray, ER: np.ndarray, I: np.ndarray, J: np.ndarray) -> tuple[np.ndarray, str]:
    """Solve opt2 in its DCP form (``e^r_IJ b_I + b_J >= 1``, ``ER = e^rIJ``); the conic ``b`` and the status."""
    import cvxpy as cp

    t = m.size
    bvar = cp.Variable(t)
    cons = [cp.multiply(ER, bvar[I]) + bvar[J] >= 1, bvar >= 0]
    scale = cp.Parameter(nonneg=True)
    obj = cp.Minimize(scale * cp.sum(cp.multiply(m, 0.25 * cp.power(0.5 - bvar, -2) - 1)))
    prob = cp.Problem(obj, cons)
    f_ldp = _f2(np.full(t, 1.0 / (math.exp(float(rIJ.min())) + 1)), m)  # OUE point at min(r)
    status = cvx_solve(prob, scale, (1.0 / m.sum(), 1.0 / f_ldp, 1.0), "opt2", IDUESolverError)
    return np.asarray(bvar.value, dtype=float).copy(), status


def _opt2_polish(
    b0: np.ndarray, m: np.ndarray, ER: np.ndarray, I: np.ndarray, J: np.ndarray
) -> tuple[np.ndarray, dict[str, Any]]:
    """The best of the conic ``b0`` and its SLSQP, log-coordinate, rescaled and Newton refinements.

    The candidates are certified and compared by ``polish_linear``.
    """
    t = m.size
    A = np.zeros((I.size, t))
    rows = np.arange(I.size)
    np.add.at(A, (rows, I), -ER)
    np.add.at(A, (rows, J), -1.0)

    def grow(x: np.ndarray, deficit: float) -> np.ndarray:  # keeps a = 1/2: raise every b
        return x + (deficit + 2 * MARGIN) / 2

    def tighten(x: np.ndarray | None) -> np.ndarray | None:
        """Scale ``b`` so that the tightest constraint ``e^r b_i + b_j >= 1`` holds with equality.

        The objective increases with every ``b``, so an optimum has a tight constraint; at large
        budgets (``b`` near ``e^-eps``) the conic point is accurate only to about 1e-5 relative
        in ``b``, which this rescaling removes along the ray through it.
        """
        if x is None or not np.all(np.isfinite(x)) or np.any(x <= 0):
            return None
        return x / float(np.min(ER * x[I] + x[J]))

    log_polished = _opt2_log_polish(b0, m, I, J, ER)
    c2 = -np.ones(I.size)

    def grad2(x: np.ndarray) -> np.ndarray:
        return m * 0.5 / (0.5 - x) ** 3

    def hess2(x: np.ndarray) -> np.ndarray:
        return np.diag(1.5 * m / (0.5 - x) ** 4)

    newton = [(f"newton:{name}", newton_active_set(x, grad2, hess2, A, c2))
              for name, x in (("conic", b0), ("slsqp-log", log_polished))]
    return polish_linear(
        "opt2", b0, lambda x: _f2(x, m), lambda x: m * 0.5 / (0.5 - x) ** 3,
        A, -np.ones(I.size), (0.0, 0.5), grow,
        extra=[("slsqp-log", log_polished), ("conic-tight", tighten(b0)), ("slsqp-log-tight", tighten(log_polished)),
               *newton],
        error=IDUESolverError, hess=hess2,
    )


# ============================================================================ opt0
def _opt0_convex(m: np.ndarray, R: np.ndarray, mask: np.ndarray) -> tuple[list[Any], str]:
    """Solve opt0 as a geometric program in ``s = log Z``, ``w = log Y``.

    Returns the candidates ``[(name, u, v), ...]`` (conic point and its SLSQP polish) and
    the solver status.
    """
    sv, wv, status = _opt0_conic(m, R, mask)
    ps, pw = _opt0_polish(sv, wv, m, R, mask)
    cands = [
        ("conic", np.logaddexp(0.0, sv), np.logaddexp(0.0, wv)),
        ("conic+polish", np.logaddexp(0.0, ps), np.logaddexp(0.0, pw)),
    ]
    return cands, status


def _opt0_conic(m: np.ndarray, R: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, str]:
    """The conic solver's point ``(s, w)`` of opt0's geometric program (``s = log Z``, ``w = log Y``) and its status."""
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
    f_ldp = float(opt0_objective_uv(np.full(t, tau0), np.full(t, tau0), m))
    scale = cp.Parameter(nonneg=True)
    prob = cp.Problem(cp.Minimize(scale * z), cons)
    status = cvx_solve(prob, scale, (1.0 / m.sum(), 1.0 / f_ldp, 1.0), "opt0", IDUESolverError)
    return np.asarray(s.value, dtype=float), np.asarray(w.value, dtype=float), status


def _opt0_repair(u: np.ndarray, v: np.ndarray, R: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Lower every ``u`` and ``v`` equally until all constraints hold with a margin."""
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(v))):
        return None
    moved = 0.0
    for _ in range(5):
        worst = float(np.max(np.where(mask, u[:, None] + v[None, :] - R, -np.inf)))
        if worst <= -MARGIN:
            break
        step = (worst + 2 * MARGIN) / 2
        u, v = u - step, v - step
        moved += 2 * step
    if moved > MAX_REPAIR or np.any(u <= 0) or np.any(v <= 0):
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


def _opt0kkt_multipliers(u: np.ndarray, v: np.ndarray, m: np.ndarray, R: np.ndarray, mask: np.ndarray) -> dict[str, Any]:
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
    lam, resid = kkt_multipliers(grad_obj, np.array(rows))
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
    t = m.size
    I, J = np.nonzero(mask)
    rIJ = R[I, J]
    n_c = I.size
    A = np.zeros((n_c, 2 * t + 1))
    np.add.at(A, (np.arange(n_c), I), 1.0)
    np.add.at(A, (np.arange(n_c), t + J), 1.0)
    return [_opt0_local_run(m, I, J, rIJ, A, a0, b0) for a0, b0 in starts]


def _opt0_local_run(
    m: np.ndarray, I: np.ndarray, J: np.ndarray, rIJ: np.ndarray, A: np.ndarray, a0: np.ndarray, b0: np.ndarray,
) -> tuple[float, np.ndarray, np.ndarray, bool]:
    """One start of :func:`_opt0_multistart`: SLSQP in ``(u, v, zeta)`` from ``(a0, b0)``, then a repair."""
    from scipy.optimize import minimize

    t = m.size
    u0, v0 = uv_from_ab(np.asarray(a0, dtype=float), np.asarray(b0, dtype=float))
    f_start = float(opt0_objective_uv(u0, v0, m))
    fun, jac, cons, cons_jac = _opt0_uv_problem(m, rIJ, A, 1.0 / f_start)
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
        if worst > -MARGIN:
            step = (worst + 2 * MARGIN) / 2
            u, v = u - step, v - step
        if np.all(u > 0) and np.all(v > 0) and worst <= 1e-6:
            val = float(opt0_objective_uv(u, v, m))
        else:
            ok = False
    a, b = ab_from_uv(u, v) if ok else (np.asarray(a0), np.asarray(b0))
    return val, a, b, ok


def _opt0_uv_problem(m: np.ndarray, rIJ: np.ndarray, A: np.ndarray, sc: float) -> tuple[Any, Any, Any, Any]:
    """Objective (scaled by ``sc``), constraints and their Jacobians of the ``(u, v, zeta)`` form of opt0.

    ``A`` (``(n_c, 2t + 1)``) holds the pair constraints ``u_i + v_j <= r_ij`` (``rIJ``).
    """
    t = m.size
    n_c = rIJ.size

    def parts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        u, v = x[:t], x[t : 2 * t]
        Z, Y = np.expm1(u), np.expm1(v)
        return u, v, Z, Y

    def fun(x: np.ndarray) -> float:
        _, _, Z, Y = parts(x)
        return sc * float(np.sum(m * (1 + 1 / Y) / Z) + x[-1])

    def jac(x: np.ndarray) -> np.ndarray:
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

    return fun, jac, cons, cons_jac


def _opt0_bnb(
    m: np.ndarray, R: np.ndarray, mask: np.ndarray, rel_gap: float = 1e-4, max_boxes: int = 400_000,
    max_iter: int = 60,
) -> dict[str, Any]:
    """Branch and bound over the reduced variables ``v`` with a rigorous interval lower bound.

    The opt0 objective ``f(u, v)`` is non-increasing in every ``u_i`` and ``v_i`` (ID-LDP
    chapter, :prf:ref:`lem-opt0-monotone`), so at an optimum ``u_i = min_j (r_ij - v_j)``.  On
    a box ``[lo, hi]`` of ``v``, ``u(v) <= u(lo)`` and ``v <= hi``, hence
    ``f(u(v), v) >= f(u(lo), hi)``: a valid lower bound.  Boxes whose bound exceeds the
    incumbent by the relative gap are discarded; the rest are bisected in every coordinate.
    """
    t = m.size
    Rm = np.where(mask, R, np.inf)
    cap = np.min(Rm, axis=0)  # u_i > 0 needs v_j < r_ij for every constrained (i, j)

    def u_of(v: np.ndarray) -> np.ndarray:
        return cast("np.ndarray", np.min(Rm[None, :, :] - v[:, None, :], axis=2))

    corners = np.array(np.meshgrid(*[[0.0, 1.0]] * t, indexing="ij")).reshape(t, -1).T
    lo = np.zeros((1, t))
    hi = cap[None, :].copy()
    best, best_v = math.inf, None
    pruned_lb = math.inf
    it = 0
    for it in range(max_iter):
        mid = (lo + hi) / 2
        ub = opt0_objective_uv(u_of(mid), mid, m)
        k = int(np.argmin(ub))
        if ub[k] < best:
            best, best_v = float(ub[k]), mid[k].copy()
        with np.errstate(invalid="ignore"):
            lb = opt0_objective_uv(u_of(lo), hi, m)  # inf when the whole box has some u_i <= 0
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


#: above this many levels opt0 first tries the programme of its tied levels (:func:`_opt0_merged`)
MERGE_LEVELS = 30

#: two levels are tied when the conic point's ``u`` and ``v`` of both agree to this (relative) distance
TIE_RTOL = 1e-7

#: the merged optimum is accepted when its KKT residual in the whole programme is at most this
MERGED_KKT_RTOL = 1e-9


def _tied_levels(u: np.ndarray, v: np.ndarray) -> list[np.ndarray]:
    """The levels grouped by equal ``(u, v)`` (within :data:`TIE_RTOL`), each group in level order, groups by first level."""
    t = u.size
    order = np.lexsort((v, u))
    groups: list[list[int]] = []
    for k in order:
        last = groups[-1][-1] if groups else None
        if last is not None and all(abs(x[k] - x[last]) <= TIE_RTOL * max(1.0, abs(x[k])) for x in (u, v)):
            groups[-1].append(int(k))
        else:
            groups.append([int(k)])
    out = [np.array(sorted(g), dtype=np.int64) for g in groups]
    out.sort(key=lambda g: int(g[0]))
    assert sum(g.size for g in out) == t
    return out


def _merge_levels(
    groups: list[np.ndarray], e: np.ndarray, m: np.ndarray, R: np.ndarray, mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The programme of the groups of levels as single levels: sizes summed, each pair budget the smallest of its block.

    Every point of the merged programme, each group's ``(u, v)`` copied to its levels, is a point
    of the whole programme with the same objective (``F_i`` depends on level ``i``'s own ``u``,
    ``v`` and on the sum of ``m_k g_k``), and it keeps every pair constraint exactly when it keeps
    the smallest budget of each block: the merged programme is the whole one restricted to tied levels.
    """
    k = len(groups)
    R2 = np.full((k, k), np.inf)
    mask2 = np.zeros((k, k), dtype=bool)
    for a, P in enumerate(groups):
        for b, Q in enumerate(groups):
            sub = mask[np.ix_(P, Q)]
            if sub.any():
                mask2[a, b] = True
                R2[a, b] = float(R[np.ix_(P, Q)][sub].min())
    e2 = np.array([float(e[P].min()) for P in groups])
    m2 = np.array([int(m[P].sum()) for P in groups], dtype=np.int64)
    return e2, m2, R2, mask2


def _opt0_merged(
    e: np.ndarray, m: np.ndarray, R: np.ndarray, mask: np.ndarray, r: PairRule, same_level_pairs: SameLevelPairs,
    n_starts: int | None, bnb_max_levels: int, gen: np.random.Generator,
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """opt0 with many levels through the programme of its tied levels, or ``None`` when that does not certify.

    With many levels the optimum ties most of them: under MinID-LDP every level above a few of the
    smallest budgets binds against those only and takes one ``(u, v)``, so that ``t^2`` pair
    constraints hold a few thousand binding ones, all dependent, which the polish and the KKT
    point handle slowly.  The conic point of the whole programme shows the ties
    (:func:`_tied_levels`); the programme of the tied levels (:func:`_merge_levels`, a restriction
    of the whole one) is solved and certified like any (:func:`solve_opt0`'s methods, without the
    opt1 and opt2 starts, whose programmes are the rule's), and its optimum, copied to the levels,
    is accepted when it passes the KKT check *of the whole programme* with a residual of at most
    :data:`MERGED_KKT_RTOL` (far below :data:`~ldpkit._solvers.KKT_RTOL`: the merged optimum is an
    exact KKT point, so a right guess of the ties leaves only rounding) and no candidate beats it.
    A convex programme's KKT point is its optimum, so the guess needs no proof: a wrong one fails
    the check and ``None`` sends the caller to the whole programme.
    """
    t = e.size
    sv, wv, status = _opt0_conic(m, R, mask)
    u_c, v_c = np.logaddexp(0.0, sv), np.logaddexp(0.0, wv)
    groups = _tied_levels(u_c, v_c)
    if len(groups) == t:
        return None
    e2, m2, R2, mask2 = _merge_levels(groups, e, m, R, mask)
    k = len(groups)
    starts2, bnb2, gen2 = _check_opt0_options(k, n_starts, bnb_max_levels, gen)
    try:
        best2, diag = _opt0_solve(e2, m2, R2, mask2, r, same_level_pairs, None, starts2, bnb2, gen2,
                                  structured_starts=False)
    except IDUESolverError:
        return None
    where = np.empty(t, dtype=np.int64)
    for a, P in enumerate(groups):
        where[P] = a
    table = _opt0_candidate_table([("merged", best2["u"][where], best2["v"][where]), ("conic", u_c, v_c)], m, R, mask)
    row = next((rr for rr in table if rr["name"] == "merged"), None)
    if row is None or not row["kkt_residual"] <= MERGED_KKT_RTOL:
        return None
    if any(rr["objective"] < row["objective"] * (1 - AGREEMENT_RTOL) for rr in table):
        return None
    diag = {**diag, "kkt_residual": row["kkt_residual"], "n_active_max_terms": row["n_active_max_terms"],
            "n_active_pairs": row["n_active_pairs"], "max_term_multipliers": row["max_term_multipliers"],
            "repair": row["repair"],
            "merged_levels": {"levels": t, "merged": k, "groups": [g.tolist() for g in groups],
                              "conic_status": status,
                              "whole": {rr["name"]: {"objective": rr["objective"], "kkt_residual": rr["kkt_residual"]}
                                        for rr in table}}}
    return row, diag


def _opt0_solve(
    e: np.ndarray, m: np.ndarray, R: np.ndarray, mask: np.ndarray, r: PairRule, same_level_pairs: SameLevelPairs,
    pair_sizes: Any, n_starts: int, bnb_max_levels: int, gen: np.random.Generator, structured_starts: bool = True,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The certified optimum of opt0 under the pairs of ``mask`` (see :func:`solve_opt0`) and its diagnostics.

    ``structured_starts=False`` leaves out the opt1 and opt2 starts (a programme whose pair budgets
    ``R`` are not the rule's, as that of merged levels).
    """
    t = e.size
    conv, status = _opt0_convex(m, R, mask)
    cands: list[tuple[str, np.ndarray, np.ndarray]] = list(conv)
    starts = _opt0_starts(conv[0], e, m, R, mask, r, same_level_pairs, pair_sizes, n_starts, gen, structured_starts)
    cands += _opt0_multistart_candidates(m, R, mask, starts)
    bnb = None
    if t <= bnb_max_levels:
        bnb, bnb_cand = _opt0_bnb_candidate(m, R, mask)
        cands += bnb_cand
    table = _opt0_candidate_table(cands, m, R, mask)
    best, n_agree = _opt0_choose(table, status)
    best, table = _opt0_at_kkt_point(best, table, m, R, mask)
    f_best = best["objective"]
    diag = _opt0_diagnostics(best, table, status, starts, n_agree, bnb)
    _opt0_confirm(f_best, n_agree, bnb, t <= bnb_max_levels)
    if bnb is not None:
        diag["bnb"] = bnb
        _opt0_check_bracket(f_best, bnb)
    return best, diag


@single_threaded
def solve_opt0(
    level_budgets: ArrayLike,
    level_sizes: ArrayLike,
    r: PairRule = "min",
    same_level_pairs: SameLevelPairs = "paper",
    *,
    pair_sizes: Any = None,
    n_starts: int | None = None,
    bnb_max_levels: int = 3,
    seed: RNGLike = 0,
) -> IDUESolution:
    """opt0: minimise the worst-case MSE per user under every pair constraint (global optimum).

    Problem (8): ``min f = sum_i m_i b_i(1-b_i)/(a_i-b_i)^2 + max_i (1-a_i-b_i)/(a_i-b_i)``
    s.t. ``a_i(1-b_j)/(b_i(1-a_j)) <= e^{r_ij}`` and ``0 < b_i < a_i < 1``.

    Method and certificate (ID-LDP chapter, :prf:ref:`thm-opt0-gp`).  The change of variables
    ``Z = e^u - 1``, ``Y = e^v - 1`` with ``u = log(a/b)``, ``v = log((1-b)/(1-a))``
    (so ``b = Y/(Z + Y + ZY)``, ``a = (1+Z) Y/(Z + Y + ZY)``) is a bijection of ``{0 < b < a < 1}``
    onto ``{Z, Y > 0}`` and turns (8) into the geometric program
    ``min max_i F_i(Z, Y)`` s.t. ``(1+Z_i)(1+Y_j) <= e^{r_ij}``, with ``F_i = sum_{k != i} m_k
    (1/Z_k + 1/(Z_k Y_k)) + (m_i - 1)/Z_i + m_i/(Z_i Y_i) + 1/Y_i`` (the objective with the max
    at level ``i``), which is convex in ``(log Z, log Y)``.  Hence:

    1. **primary**: cvxpy (CLARABEL) solves the convex form, then SLSQP polishes it (the
       conic point is only accurate to about the square root of the solver tolerance);
    2. **multistart**: SLSQP in the log-ratio coordinates ``(u, v)`` (linear constraints,
       non-convex objective) from ``n_starts`` seeded random feasible points plus the opt1
       and opt2 solutions.  ``(a, b) -> (u, v) -> (log Z, log Y)`` are diffeomorphisms, so
       every local minimum of the paper's problem is global and all converged starts should
       agree (``diagnostics['multistart']['n_agree']``; for ``t <= bnb_max_levels`` at least
       one must, unless the interval bracket of step 3 closes within ``1e-3`` of the optimum);
    3. **interval search** (``t <= bnb_max_levels``): branch and bound over the reduced
       variables ``v`` with the monotone lower bound of ``_opt0_bnb``, a rigorous bracket
       ``[lower_bound, upper_bound]`` on the global minimum.

    Every candidate point is repaired to strict feasibility and its KKT conditions in the
    convex coordinates are checked by NNLS (per-coordinate relative residual at most
    ``KKT_RTOL``); a passing point is a certified global optimum.  The best certified point is
    returned (``diagnostics['chosen']``, ``diagnostics['candidates']``).
    :class:`IDUESolverError` is raised if no candidate passes, if any feasible point beats it
    by more than ``AGREEMENT_RTOL`` (relative), if neither a multistart run nor the interval
    bracket confirms it (``t <= bnb_max_levels``), or if the interval bracket does not contain it.

    With more than ``MERGE_LEVELS`` (30) levels, the optimum usually ties most levels (under
    MinID-LDP every level above a few of the smallest budgets binds only against those and takes
    one ``(u, v)``), and the ``t^2`` pair constraints then hold thousands of binding ones, all
    dependent.  The conic point of the whole programme shows the ties; the programme of the tied
    levels, a restriction of the whole one with as many levels as distinct ``(u, v)``, is solved
    and certified as above (without the opt1/opt2 starts), and its optimum is returned when it
    passes the KKT check of the whole programme with a residual at most ``MERGED_KKT_RTOL``
    (``1e-9``; ``diagnostics['merged_levels']``); otherwise the whole programme is solved.  The
    programme's size thus grows with the number of distinct ``(u, v)`` at the optimum, not with
    the items or the levels (MinID-LDP with 120 distinct budgets: about a dozen).

    Parameters
    ----------
    level_budgets, level_sizes, r, same_level_pairs, pair_sizes
        As in :func:`solve_opt1`.
    n_starts
        Random starts of the multistart solver (default 8 for ``t <= 10``, 2 for
        ``t <= 30``, 0 beyond, counting merged levels; the opt1/opt2 starts are always added
        when ``t <= 30``).
    bnb_max_levels
        Largest ``t`` for which the branch and bound runs (its cost grows like ``2^t``).
    seed
        Seed of the random starts.
    """
    e, m, R, mask = problem_setup(level_budgets, level_sizes, r, same_level_pairs, pair_sizes)
    t = e.size
    starts_given = n_starts
    n_starts, bnb_max_levels, gen = _check_opt0_options(t, n_starts, bnb_max_levels, seed)
    merged = _opt0_merged(e, m, R, mask, r, same_level_pairs, starts_given, bnb_max_levels, gen) if t > MERGE_LEVELS else None
    if merged is not None:
        best, diag = merged
    else:
        best, diag = _opt0_solve(e, m, R, mask, r, same_level_pairs, pair_sizes, n_starts, bnb_max_levels, gen)
    a, b = ab_from_uv(best["u"], best["v"])
    return make_solution("opt0", e, m, a, b, worst_case_mse(a, b, m), r, R, mask, same_level_pairs, diag)


def _opt0_uv_derivatives(
    u: np.ndarray, v: np.ndarray, m: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The opt0 terms in ``(u, v)`` and their derivatives.

    ``F_i = G + 1/Y_i - 1/Z_i`` with ``G = sum_k m_k (1 + 1/Y_k)/Z_k``, ``Z = e^u - 1``,
    ``Y = e^v - 1``.  With ``B = 1/Z`` (``B' = -(Z+1)/Z^2``, ``B'' = (Z+1)(Z+2)/Z^3``) and
    ``C = 1/Y`` (likewise in ``v``): returns ``F``, ``B``, ``B'``, ``B''``, ``C``, ``C'``, ``C''``.
    """
    Z, Y = np.expm1(u), np.expm1(v)
    B, C = 1 / Z, 1 / Y
    B1, C1 = -(Z + 1) / Z**2, -(Y + 1) / Y**2
    B2, C2 = (Z + 1) * (Z + 2) / Z**3, (Y + 1) * (Y + 2) / Y**3
    G = float(np.sum(m * (1 + C) * B))
    return G + C - B, B, B1, B2, C, C1, C2


def _opt0_at_kkt_point(
    best: dict[str, Any], table: list[dict[str, Any]], m: np.ndarray, R: np.ndarray, mask: np.ndarray
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The certified optimum ``best`` taken to the exact KKT point of its active set, when that is no worse.

    The candidates' objectives agree to rounding while their points differ in the ninth digit
    (the objective is flat along the optimal face), so which candidate wins is an accident of
    rounding that differs between machines and thread counts.  Newton's method on the KKT
    conditions of ``min z`` s.t. ``F_i(u, v) <= z``, ``u_i + v_j <= r_ij`` (``ldpkit._solvers.kkt_point``)
    takes the winner to the optimum itself, the same point whichever candidate won; it is
    repaired, KKT-checked and compared like every candidate, and kept (row ``"newton"``) unless
    it fails or is worse.
    """
    t = m.size
    I, J = np.nonzero(mask)
    rIJ = R[I, J]
    n_c = I.size

    def cons_val(x: np.ndarray) -> np.ndarray:
        F = _opt0_uv_derivatives(x[:t], x[t : 2 * t], m)[0]
        return np.concatenate([F - x[-1], x[I] + x[t + J] - rIJ])

    def cons_jac(x: np.ndarray) -> np.ndarray:
        _, B, B1, _, C, C1, _ = _opt0_uv_derivatives(x[:t], x[t : 2 * t], m)
        out = np.zeros((t + n_c, 2 * t + 1))
        k = np.arange(t)
        out[:t, :t] = m * (1 + C) * B1  # dG/du_k, in every row
        out[:t, t : 2 * t] = m * C1 * B  # dG/dv_k
        out[k, k] -= B1
        out[k, t + k] += C1
        out[:t, -1] = -1.0
        rows = t + np.arange(n_c)
        out[rows, I] += 1.0
        out[rows, t + J] += 1.0
        return out

    def hess_lagrangian(x: np.ndarray, lam: np.ndarray) -> np.ndarray:
        _, B, B1, B2, C, C1, C2 = _opt0_uv_derivatives(x[:t], x[t : 2 * t], m)
        mu = lam[:t]
        k = np.arange(t)
        H = np.zeros((2 * t + 1, 2 * t + 1))
        H[k, k] = mu.sum() * m * (1 + C) * B2 - mu * B2
        H[t + k, t + k] = mu.sum() * m * C2 * B + mu * C2
        H[k, t + k] = H[t + k, k] = mu.sum() * m * C1 * B1
        return H

    grad = np.zeros(2 * t + 1)
    grad[-1] = 1.0
    z0 = float(np.max(_opt0_uv_derivatives(best["u"], best["v"], m)[0]))
    x0 = np.concatenate([best["u"], best["v"], [z0]])
    scale = np.concatenate([np.full(t, max(1.0, abs(z0))), np.maximum(1.0, np.abs(rIJ))])
    with np.errstate(all="ignore"):
        try:
            xn = kkt_point(x0, lambda x: grad, hess_lagrangian, cons_val, cons_jac, scale)
        except np.linalg.LinAlgError:  # a step that is not finite: the certified point stays
            xn = None
    if xn is None:
        return best, table
    row = _opt0_candidate_table([("newton", xn[:t], xn[t : 2 * t])], m, R, mask)
    if not row or not row[0]["kkt_residual"] <= KKT_RTOL or not row[0]["objective"] <= best["objective"] * (1 + 1e-9):
        return best, table
    return row[0], [*table, row[0]]


def _check_opt0_options(
    t: int, n_starts: int | None, bnb_max_levels: int, seed: RNGLike
) -> tuple[int, int, np.random.Generator]:
    """Validate :func:`solve_opt0`'s options (before any solving); ``n_starts`` defaults by ``t``."""
    if n_starts is None:
        n_starts = 8 if t <= 10 else (2 if t <= 30 else 0)
    elif isinstance(n_starts, bool) or not isinstance(n_starts, numbers.Integral):
        raise ArgumentTypeError(f"n_starts must be a non-negative integer, got {describe(n_starts)}")
    elif not 0 <= n_starts <= MAX_STARTS:
        raise ValueError(f"n_starts must be an integer in [0, {MAX_STARTS}], got {n_starts!r}")
    bnb_max_levels = check_positive_int(bnb_max_levels, "bnb_max_levels", minimum=0)
    gen = as_generator(seed, "seed")
    return n_starts, bnb_max_levels, gen


def _opt0_starts(
    conic: tuple[str, np.ndarray, np.ndarray], e: np.ndarray, m: np.ndarray, R: np.ndarray, mask: np.ndarray,
    r: PairRule, same_level_pairs: SameLevelPairs, pair_sizes: Any, n_starts: int, gen: np.random.Generator,
    structured: bool = True,
) -> list[tuple[str, tuple[np.ndarray, np.ndarray]]]:
    """The named starts ``(a, b)`` of the multistart.

    The conic point, the opt1 and opt2 solutions (``t <= 30``, when ``structured``) and
    ``n_starts`` random feasible points drawn by ``gen``.
    """
    t = e.size
    starts: list[tuple[str, tuple[np.ndarray, np.ndarray]]] = []
    u_c, v_c = conic[1], conic[2]
    if np.all(np.isfinite(u_c)) and np.all(u_c > 0) and np.all(np.isfinite(v_c)) and np.all(v_c > 0):
        starts.append(("conic+slsqp(u,v)", ab_from_uv(u_c, v_c)))
    if t <= 30 and structured:
        for name, model_solver in (("opt1", solve_opt1), ("opt2", solve_opt2)):
            try:
                sol = model_solver(e, m, r, same_level_pairs, pair_sizes=pair_sizes)
                starts.append((f"start:{name}", (sol.a, sol.b)))
            except IDUESolverError:  # pragma: no cover - the structured models are robust
                pass
    Rm = np.where(mask, R, np.inf)
    cap = np.min(Rm, axis=0)
    for k in range(n_starts):
        v0 = cap * gen.uniform(0.1, 0.9, size=t)
        u0 = np.min(Rm - v0[None, :], axis=1) * gen.uniform(0.3, 0.95, size=t)
        starts.append((f"start:random{k}", ab_from_uv(u0, v0)))
    return starts


def _opt0_multistart_candidates(
    m: np.ndarray, R: np.ndarray, mask: np.ndarray, starts: list[tuple[str, tuple[np.ndarray, np.ndarray]]],
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The converged multistart runs as candidates ``(name, u, v)``."""
    cands: list[tuple[str, np.ndarray, np.ndarray]] = []
    if starts:
        results = _opt0_multistart(m, R, mask, [st for _, st in starts])
        for (name, _), (val, ra, rb, ok) in zip(starts, results):
            if ok and math.isfinite(val):
                cands.append((name, *uv_from_ab(ra, rb)))
    return cands


def _opt0_bnb_candidate(
    m: np.ndarray, R: np.ndarray, mask: np.ndarray
) -> tuple[dict[str, Any], list[tuple[str, np.ndarray, np.ndarray]]]:
    """The interval branch and bound (small ``t``): its report and its best point as a candidate (if any)."""
    t = m.size
    bnb = _opt0_bnb(m, R, mask, rel_gap=1e-4 if t <= 2 else 1e-3)
    best_v = bnb.pop("best_v")
    if best_v is not None and math.isfinite(bnb["upper_bound"]):
        Rm = np.where(mask, R, np.inf)
        return bnb, [("bnb", np.min(Rm - best_v[None, :], axis=1), best_v)]
    return bnb, []


def _opt0_candidate_table(
    cands: list[tuple[str, np.ndarray, np.ndarray]], m: np.ndarray, R: np.ndarray, mask: np.ndarray
) -> list[dict[str, Any]]:
    """Repair, evaluate and KKT-check every candidate in the convex coordinates (unrepairable ones are dropped)."""
    table = []
    for name, cu, cv in cands:
        fixed = _opt0_repair(cu, cv, R, mask)
        if fixed is None:
            continue
        uu, vv, moved = fixed
        kkt = _opt0kkt_multipliers(uu, vv, m, R, mask)
        table.append({"name": name, "objective": float(opt0_objective_uv(uu, vv, m)), "u": uu, "v": vv, "repair": moved, **kkt})
    return table


def _opt0_choose(table: list[dict[str, Any]], status: str) -> tuple[dict[str, Any], int]:
    """The best KKT-certified row and how many multistart runs agree with it; raise if none passes or one beats it."""
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
    return best, n_agree


def _opt0_diagnostics(
    best: dict[str, Any], table: list[dict[str, Any]], status: str, starts: list[tuple[str, tuple[np.ndarray, np.ndarray]]],
    n_agree: int, bnb: dict[str, Any] | None,
) -> dict[str, Any]:
    """``IDUESolution.diagnostics`` of opt0 (without the ``bnb`` report, added by the caller)."""
    return {
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


def _opt0_confirm(f_best: float, n_agree: int, bnb: dict[str, Any] | None, small: bool) -> None:
    """An independent confirmation for small ``t``, or raise.

    A multistart run reaching the optimum, or the branch-and-bound bracket closing on it from
    below (the multistart is poorly scaled at small budgets, where the bracket still closes).
    """
    bracket_ok = bnb is not None and bnb["lower_bound"] >= f_best * (1 - 1e-3)
    if small and n_agree == 0 and not bracket_ok:
        raise IDUESolverError(f"opt0: no independent multistart run reached the certified optimum {f_best!r}")


def _opt0_check_bracket(f_best: float, bnb: dict[str, Any]) -> None:
    """Raise unless the branch-and-bound bracket contains the certified optimum ``f_best``."""
    if bnb["lower_bound"] > f_best * (1 + 1e-9):
        raise IDUESolverError(f"opt0: interval lower bound {bnb['lower_bound']!r} exceeds the optimum {f_best!r}")
    if bnb["upper_bound"] < f_best * (1 - AGREEMENT_RTOL):
        raise IDUESolverError(f"opt0: grid search found {bnb['upper_bound']!r} below the optimum {f_best!r}")


_SOLVERS = {"opt0": solve_opt0, "opt1": solve_opt1, "opt2": solve_opt2}


@single_threaded
def solve(
    model: Model,
    level_budgets: ArrayLike,
    level_sizes: ArrayLike,
    r: PairRule = "min",
    same_level_pairs: SameLevelPairs = "paper",
    **kwargs: Any,
) -> IDUESolution:
    """Dispatch to :func:`solve_opt0`, :func:`solve_opt1` or :func:`solve_opt2` by name."""
    if not isinstance(model, str):
        raise ArgumentTypeError(f"model must be one of {MODELS}, got {describe(model)}")
    if model not in _SOLVERS:
        raise ValueError(f"unknown model {model!r}; expected one of {MODELS}")
    return _SOLVERS[model](level_budgets, level_sizes, r, same_level_pairs, **kwargs)
