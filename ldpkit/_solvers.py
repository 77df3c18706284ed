"""Solver plumbing shared by the optimisation-based mechanisms (IDUE now, the LIP optima next).

* :func:`cvx_solve` -- a cvxpy problem with fallbacks (CLARABEL at several objective scales,
  then SCS), accepting the first optimal or optimal-inaccurate status; accuracy is judged
  afterwards, never by the status;
* :func:`kkt_multipliers` -- non-negative multipliers and the relative residual of the KKT
  stationarity condition, by NNLS on a row- and column-scaled system;
* :func:`certify_candidates` and :func:`polish_linear` -- repair candidate points to strict
  feasibility, KKT-check them and return the best certified one;
* :func:`require_feasible` -- the feasibility check every solver runs before it returns;
* :func:`single_threaded` -- every solver runs with one BLAS/OpenMP thread, so that its result
  does not depend on the machine's thread count (a multi-threaded BLAS rounds its sums
  differently with the number of threads, and the solvers' paths follow those last bits);
* :func:`newton_kkt` -- Newton's method on the KKT conditions of an identified active set: the
  solvers' last step, which takes their point to the exact KKT point (to rounding), so that
  points that differ in their last digits (other machines, other solver paths) agree to far
  below any tolerance of the kit.

For a convex problem, a feasible point that passes the KKT check is a certified global optimum
up to the reported residual.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar, cast

import numpy as np

from ._validation import check_solving_allowed

__all__ = [
    "ConvexProblem",
    "KKT_RTOL",
    "MARGIN",
    "MAX_REPAIR",
    "SolverError",
    "certify_candidates",
    "cvx_solve",
    "finish_at_kkt_point",
    "kkt_multipliers",
    "kkt_point",
    "newton_active_set",
    "newton_kkt",
    "polish_linear",
    "require_feasible",
    "single_threaded",
]

_F = TypeVar("_F", bound=Callable[..., Any])
_LOCAL = threading.local()

#: margin (in the constraint's units) left below every constraint after a feasibility repair
MARGIN = 1e-12

#: largest repair applied to a solver's output before it is called inaccurate
MAX_REPAIR = 1e-6

#: relative KKT stationarity residual above which a convex solve is called inaccurate
KKT_RTOL = 1e-5


class SolverError(ValueError):
    """A solver failed, returned an infeasible point, or its certificate did not check out."""


def single_threaded(fn: _F) -> _F:
    """Run ``fn`` with one BLAS/OpenMP thread (threadpoolctl); nested calls pay for the limit once.

    The numerical solvers' paths (interior point, SLSQP, NNLS, least squares) follow the last
    bits of BLAS sums, which a multi-threaded BLAS rounds differently with its number of threads:
    without the limit, an IDUE optimum moved in its ninth digit between ``OMP_NUM_THREADS=1`` and
    the default, and between ``--jobs 1`` and ``--jobs 2`` (worker processes run one thread).

    Every solver is wrapped, so this is also where a region that must not optimise (opening a
    report file: :func:`ldpkit._validation.solving_refused`) refuses one, before any work.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        check_solving_allowed(getattr(fn, "__qualname__", "a solver"))
        if getattr(_LOCAL, "depth", 0):
            return fn(*args, **kwargs)
        from threadpoolctl import threadpool_limits

        _LOCAL.depth = 1
        try:
            with threadpool_limits(limits=1):
                return fn(*args, **kwargs)
        finally:
            _LOCAL.depth = 0

    return cast(_F, wrapper)


def require_feasible(
    excess: np.ndarray, limit: float, what: str, describe: Callable[[int], str], error: type[Exception] = SolverError
) -> float:
    """Raise ``error`` unless every constraint excess is at most ``limit``; return ``-max(excess)``.

    ``excess`` holds ``g_k(x)`` for constraints ``g_k(x) <= 0`` (``-inf`` for constraints that
    do not apply); ``describe(k)`` names constraint ``k`` (flat index) in the message.
    """
    excess = np.asarray(excess, dtype=float)
    worst = float(np.max(excess)) if excess.size else -math.inf
    if not worst <= limit:  # also catches NaN
        k = int(np.nanargmax(excess)) if np.any(~np.isnan(excess)) else 0
        raise error(f"{what}: infeasible result, {describe(k)}")
    return -worst


def kkt_multipliers(grad_obj: np.ndarray, grads: np.ndarray) -> tuple[np.ndarray, float]:
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


def cvx_solve(
    problem: Any, scale: Any, scales: Sequence[float], what: str, error: type[Exception] = SolverError
) -> str:
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
    raise error(f"{what}: no solver succeeded ({'; '.join(log)})")


class ConvexProblem(NamedTuple):
    """A convex problem ``min fun(x)`` s.t. ``g(x) <= 0`` as the certificates see it.

    ``cons_val`` is ``g`` and ``cons_jac`` its Jacobian; ``scale`` gives each constraint's units
    (activity is ``-g <= 1e-6 * scale``); ``repair(x, deficit)`` moves a point towards feasibility;
    ``domain_ok`` says whether a point is inside the objective's domain; ``error`` is raised when
    no point can be certified.
    """

    fun: Callable[[np.ndarray], float]
    grad_obj: Callable[[np.ndarray], np.ndarray]
    cons_val: Callable[[np.ndarray], np.ndarray]
    cons_jac: Callable[[np.ndarray], np.ndarray]
    scale: np.ndarray
    repair: Callable[[np.ndarray, float], np.ndarray]
    domain_ok: Callable[[np.ndarray], bool]
    error: type[Exception] = SolverError


def certify_candidates(
    what: str, candidates: Sequence[tuple[str, np.ndarray | None]], problem: ConvexProblem
) -> tuple[np.ndarray, dict[str, Any]]:
    """Repair, KKT-check and pick the best of several candidate solutions of a convex problem.

    Problem: ``min fun(x)`` s.t. ``g(x) <= 0`` (``cons_val``; :class:`ConvexProblem`).  Each candidate is moved by
    ``repair(x, deficit)`` until every ``g_k <= -margin`` (raising if that needs more than
    ``1e-6``), its KKT conditions are checked by NNLS on the constraints with
    ``-g <= 1e-6 * scale`` (``grad f + J_A^T lam = 0``, ``lam >= 0``), and the feasible
    candidate with the lowest objective among those passing is returned.  For a convex
    problem, passing the KKT check certifies global optimality up to the reported
    ``kkt_residual`` and ``complementarity`` (``sum lam_k * slack_k``, an upper bound on the
    optimality gap from the linearised constraints).
    """
    fun, grad_obj, cons_val, cons_jac, scale, repair, domain_ok, error = problem
    results = []
    for name, x in candidates:
        if x is None or not np.all(np.isfinite(x)) or not domain_ok(x):
            continue
        moved = 0.0
        for _ in range(8):
            deficit = float(np.max(cons_val(x)))
            if deficit <= -MARGIN:
                break
            x = repair(x, deficit)
            moved += deficit + 2 * MARGIN
        if moved > MAX_REPAIR or not domain_ok(x) or float(np.max(cons_val(x))) > 0:
            continue
        slack = -cons_val(x)
        act = slack <= 1e-6 * scale
        lam, resid = kkt_multipliers(grad_obj(x), cons_jac(x)[act])
        val = fun(x)
        results.append((resid <= KKT_RTOL, val, name, x, moved, resid, int(act.sum()), float(lam @ slack[act])))
    if not results:
        raise error(f"{what}: no solver output could be made feasible by a repair of at most {MAX_REPAIR}")
    passing = [rr for rr in results if rr[0]]
    if not passing:
        best_resid = min(rr[5] for rr in results)
        raise error(f"{what}: KKT residual {best_resid:.3g} > {KKT_RTOL} for every candidate (inaccurate)")
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


def polish_linear(
    what: str,
    x0: np.ndarray,
    fun: Callable[[np.ndarray], float],
    grad: Callable[[np.ndarray], np.ndarray],
    A: np.ndarray,
    c: np.ndarray,
    bounds: tuple[float, float],
    repair: Callable[[np.ndarray, float], np.ndarray],
    extra: Sequence[tuple[str, np.ndarray | None]] = (),
    error: type[Exception] = SolverError,
    hess: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Polish (SLSQP from the conic point), :func:`certify_candidates` for ``A x <= c``, then the KKT point.

    The conic solver's point ``x0`` is accurate to about the square root of its tolerance
    (the objective is flat to second order along the active face), hence the polish.  The
    candidates' objectives then agree to rounding while their points differ in the ninth
    digit, so the best of them is an accident of rounding; with ``hess`` (the objective's
    Hessian) the chosen point is taken to the exact KKT point of its active set
    (:func:`kkt_point`), certified again and kept when it is no worse (``diagnostics['point']``
    starts with ``"newton"``): the same point, to rounding, whichever candidate won.
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
    problem = ConvexProblem(fun, grad, lambda x: A @ x - c, lambda x: A, scale, repair, domain_ok, error)
    x, info = certify_candidates(what, cands, problem)
    if hess is None:
        return x, info
    xn = kkt_point(x, grad, lambda x, lam: hess(x), problem.cons_val, problem.cons_jac, scale)
    return finish_at_kkt_point(what, x, info, xn, problem)


def finish_at_kkt_point(
    what: str, x: np.ndarray, info: dict[str, Any], xn: np.ndarray | None, problem: ConvexProblem
) -> tuple[np.ndarray, dict[str, Any]]:
    """The KKT point ``xn`` of the certified point ``x``, certified in turn, when it is no worse; else ``x``.

    ``diagnostics['kkt_point']`` says which: ``"newton"``, or why the certified point was kept.
    """
    if xn is None:
        return x, {**info, "kkt_point": "kept: Newton on the active set did not settle"}
    try:
        xr, info_n = certify_candidates(what, [("newton", xn)], problem)
    except problem.error:
        return x, {**info, "kkt_point": "kept: the Newton point failed its certificate"}
    f, fn = problem.fun(x), problem.fun(xr)
    if not fn <= f + 1e-9 * abs(f):
        return x, {**info, "kkt_point": f"kept: the Newton point is worse ({fn!r} > {f!r})"}
    candidates = {**info["candidates"], **info_n["candidates"]}
    return xr, {**info_n, "candidates": candidates, "point": f"newton from {info['point']}", "kkt_point": "newton"}


def newton_active_set(
    x0: np.ndarray | None,
    grad: Callable[[np.ndarray], np.ndarray],
    hess: Callable[[np.ndarray], np.ndarray],
    A: np.ndarray,
    c: np.ndarray,
    rel_slack: float = 1e-3,
    iters: int = 30,
) -> np.ndarray | None:
    """Refine a near-optimal point of ``min f(x)`` s.t. ``A x <= c`` by Newton's method on its active set.

    The constraints within ``rel_slack`` (relative to ``|c| + |A| |x|``) of binding at ``x0`` are
    taken as equalities and the KKT system ``[H A_S^T; A_S 0] [dx; lam] = [-grad; c_S - A_S x]``
    is solved (least squares when ``A_S`` is rank deficient) until the step stalls.  A conic
    solver's point is accurate to about the square root of its tolerance; when some variables
    are tiny (probabilities near ``e^-eps``) that is not enough for the KKT certificate, and
    this step recovers full accuracy.  Returns ``None`` when it fails; the caller certifies the
    result like any other candidate.
    """
    if x0 is None or not np.all(np.isfinite(x0)):
        return None
    x = np.asarray(x0, dtype=float).copy()
    size = np.abs(c) + np.abs(A) @ np.abs(x)
    active = (c - A @ x) <= rel_slack * np.where(size > 0, size, 1.0)
    if not np.any(active):
        return None
    As, cs = A[active], c[active]
    n, k = x.size, int(active.sum())
    for _ in range(iters):
        K = np.zeros((n + k, n + k))
        K[:n, :n] = hess(x)
        K[:n, n:] = As.T
        K[n:, :n] = As
        rhs = np.concatenate([-grad(x), cs - As @ x])
        with np.errstate(all="ignore"):
            step = np.linalg.lstsq(K, rhs, rcond=None)[0][:n]
        if not np.all(np.isfinite(step)):
            return None
        x = x + step
        if np.max(np.abs(step) / np.maximum(np.abs(x), 1e-300)) < 1e-13:
            break
    return x if np.all(np.isfinite(x)) else None



def newton_kkt(
    x0: np.ndarray,
    grad: Callable[[np.ndarray], np.ndarray],
    hess_lagrangian: Callable[[np.ndarray, np.ndarray], np.ndarray],
    cons_val: Callable[[np.ndarray], np.ndarray],
    cons_jac: Callable[[np.ndarray], np.ndarray],
    active: np.ndarray,
    iters: int = 50,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Newton's method on the KKT conditions of ``min f(x)`` s.t. ``g_k(x) = 0`` for the ``active`` constraints.

    Solves ``grad f(x) + J_A(x)^T lam = 0``, ``g_A(x) = 0`` in ``(x, lam)`` from ``x0`` (the
    multipliers start at their least-squares values there), with the Hessian of the Lagrangian
    ``hess_lagrangian(x, lam)`` (``lam`` over every constraint, zero off the active set).  The
    steps are least-squares solutions, so degenerate active sets (more constraints than needed,
    dependent rows) leave the multipliers undetermined but not the point.  Iterates until the
    step is at rounding level (two steps are taken after it falls below ``1e-12`` relative): a
    fixed point whatever the start within its basin, so starts that differ in their last digits
    (other machines, other solver paths) end at the same point to rounding.  Returns
    ``(x, lam)``, or ``None`` when a step is not finite or the iteration does not converge.
    """
    x = np.asarray(x0, dtype=float).copy()
    act = np.flatnonzero(active)
    n, k = x.size, act.size
    if not np.all(np.isfinite(x)):
        return None
    with np.errstate(all="ignore"):
        J = cons_jac(x)[act]
        lam_a = np.linalg.lstsq(J.T, -grad(x), rcond=None)[0] if k else np.zeros(0)
        m = cons_val(x).size
        polish = 2
        for _ in range(iters):
            g, J = cons_val(x)[act], cons_jac(x)[act]
            lam = np.zeros(m)
            lam[act] = lam_a
            K = np.zeros((n + k, n + k))
            K[:n, :n] = hess_lagrangian(x, lam)
            K[:n, n:] = J.T
            K[n:, :n] = J
            rhs = np.concatenate([-(grad(x) + J.T @ lam_a), -g])
            step = np.linalg.lstsq(K, rhs, rcond=None)[0]
            if not np.all(np.isfinite(step)):
                return None
            x, lam_a = x + step[:n], lam_a + step[n:]
            if np.max(np.abs(step[:n]) / np.maximum(np.abs(x), 1e-300)) <= 1e-12:
                polish -= 1  # converged: two more steps take the point to rounding (quadratic convergence)
            if polish < 0:
                lam = np.zeros(m)
                lam[act] = lam_a
                return x, lam
    return None


def kkt_point(
    x0: np.ndarray,
    grad: Callable[[np.ndarray], np.ndarray],
    hess_lagrangian: Callable[[np.ndarray, np.ndarray], np.ndarray],
    cons_val: Callable[[np.ndarray], np.ndarray],
    cons_jac: Callable[[np.ndarray], np.ndarray],
    scale: np.ndarray,
    rel_slack: float = 1e-7,
) -> np.ndarray | None:
    """The KKT point near a solver's point ``x0``: its active set, then :func:`newton_kkt`.

    The constraints within ``rel_slack * scale`` of binding at ``x0`` form the active set (a
    solver's point is accurate to far better than ``rel_slack``, and an inactive constraint's
    slack is far larger); a constraint whose multiplier comes out negative is dropped and one
    that the Newton point violates is added, a few times at most.  ``None`` when that does not
    settle or Newton fails: the caller then keeps its certified point.
    """
    slack = -cons_val(x0)
    active = slack <= rel_slack * scale
    for _ in range(4):
        out = newton_kkt(x0, grad, hess_lagrangian, cons_val, cons_jac, active)
        if out is None:
            return None
        x, lam = out
        lam_scale = max(1.0, float(np.max(np.abs(lam))))
        negative = active & (lam < -1e-8 * lam_scale)
        violated = ~active & (cons_val(x) > 1e-12 * scale)
        if not negative.any() and not violated.any():
            return x
        if negative.any():
            active = active & ~(lam == lam[negative].min())
        active = active | violated
    return None
