"""The evaluation protocol of the LIP paper (``jiang2018lip``, Sec. I and V), rerun.

Every user ``i`` holds a bit ``X_i`` with prior ``P1_i`` and reports it through binary
randomised response with flips ``q0 = P(Y=1|X=0)``, ``q1 = P(Y=0|X=1)`` (the paper's
convention, :class:`ldpkit.lip.BinaryRR`); the aggregator estimates ``S = sum_i X_i``.  The
paper's models (:data:`MODELS`):

* ``"LDP"``: context-free LDP, symmetric randomised response ``q = 1/(e^eps + 1)`` with the
  prior-free unbiased estimator (the paper's eqs. 24-25);
* ``"Opt-LDP"``: the eps-LDP channel minimising the MMSE (the paper's Proposition 3,
  ``q0 = q1 = 1/(e^eps + 1)``) with the posterior-mean estimator;
* ``"Opt-LIP"`` and ``"Opt-LIP eps/2"``: the eps-LIP (eps/2-LIP) optimum under each user's prior
  with the posterior mean, :func:`ldpkit.experiments.lip_paper.corrected_theorem2` in closed form
  (Theorem 2 where it is feasible, repaired where it is not);
* ``"Sym-LIP eps/2"``: the eps/2-LIP symmetric optimum, Proposition 4's ``q``.

:func:`flips` gives every model's ``(q0, q1)`` vectorised over priors and budgets (budget 0
included: no information, MSE ``P1 P0``); the book checks them point by point against the
vertex-enumeration optimisers of :mod:`ldpkit.lip`.  :func:`paper_curves` evaluates the paper's
printed closed forms (Theorem 2 / Corollary 1 eq. 21, Proposition 4 eq. 23) with the feasibility
of the printed point.  Exact MSEs: :func:`bayes_mse` (inputs drawn from the priors, the paper's
quantity) and :func:`conditional_mse` (inputs fixed, as in a real dataset).  Simulation:
:func:`simulate_squared_errors` draws reports (and inputs, if not fixed) and returns the squared
errors of the estimate.  LIP experiments chapter, :ref:`lip-experiments`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from .._rng import RNGLike, as_generator
from .._validation import check_positive_int, check_probabilities, real_array

__all__ = [
    "MODELS",
    "PAPER_MODELS",
    "bayes_mse",
    "conditional_mse",
    "exact_curves",
    "flips",
    "paper_curves",
    "simulate_squared_errors",
    "squared_error_moments",
    "unbiased_ldp_optimum",
]

#: the names of the paper's five models
MODELS = ("LDP", "Opt-LDP", "Opt-LIP", "Opt-LIP eps/2", "Sym-LIP eps/2")
#: the paper's printed closed forms, Theorem 2 (Corollary 1) at eps and eps/2 and Proposition 4 at eps/2
PAPER_MODELS = ("Opt-LIP (Thm 2)", "Opt-LIP eps/2 (Thm 2)", "Sym-LIP eps/2 (eq. 23)")
_FACTOR = {"LDP": 1.0, "Opt-LDP": 1.0, "Opt-LIP": 1.0, "Opt-LIP eps/2": 0.5, "Sym-LIP eps/2": 0.5,
           "Opt-LIP (Thm 2)": 1.0, "Opt-LIP eps/2 (Thm 2)": 0.5, "Sym-LIP eps/2 (eq. 23)": 0.5}
#: chunk size (users x trials) of the simulation
_CHUNK = 2_000_000


def _grid(epsilons: Any) -> np.ndarray:
    eps = np.atleast_1d(real_array(epsilons, "epsilons"))
    if eps.ndim != 1 or eps.size == 0 or not np.all(np.isfinite(eps)) or np.any(eps < 0) or np.any(eps > 300):
        raise ValueError(f"epsilons must be a non-empty 1-d grid of budgets in [0, 300], got {epsilons!r}")
    return eps


def _priors(priors: Any) -> np.ndarray:
    p = np.atleast_1d(check_probabilities(priors, "priors"))
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"priors must be a non-empty 1-d array, got shape {p.shape}")
    if np.any((p <= 0) | (p >= 1)):
        raise ValueError("priors must lie strictly inside (0, 1)")
    return p


def _model(name: str, allowed: Sequence[str] = MODELS) -> str:
    if name not in allowed:
        raise ValueError(f"unknown model {name!r}; choose from {tuple(allowed)}")
    return name


def flips(model: str, priors: ArrayLike, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """``(q0, q1)`` of ``model`` for every prior at budget ``epsilon`` (the model halves it if eps/2).

    ``"LDP"`` and ``"Opt-LDP"`` use ``q0 = q1 = 1/(e^eps + 1)``; ``"Opt-LIP"`` is
    :func:`ldpkit.experiments.lip_paper.corrected_theorem2` vectorised (with ``c = 1/(1 + e^eps)``: Theorem 2's
    ``(P1 e^-eps, P0 e^-eps)`` on ``[c, 1 - c]``, ``q1 = c``, ``q0 = (1 - P1 e^eps)/(P0 (1 + e^eps))``
    below ``c`` and the mirror above ``1 - c``); ``"Sym-LIP eps/2"`` is Proposition 4's ``q``.
    """
    _model(model)
    p = _priors(priors)
    eps = float(_grid([epsilon])[0]) * _FACTOR[model]
    e = math.exp(eps)
    if model in ("LDP", "Opt-LDP"):
        q = np.full(p.size, 1.0 / (e + 1.0))
        return q, q.copy()
    if model == "Sym-LIP eps/2":
        q = np.where(p <= 0.5, (1 - p) / (e - 2 * p + 1), p / (e + 2 * p - 1))
        return q, q.copy()
    c = 1.0 / (1.0 + e)
    q0 = np.where(p < c, (1 - p * e) / ((1 - p) * (1 + e)), np.where(p > 1 - c, c, p / e))
    q1 = np.where(p < c, c, np.where(p > 1 - c, (1 - (1 - p) * e) / (p * (1 + e)), (1 - p) / e))
    return q0, q1


def _per_user_mmse(q0: np.ndarray, q1: np.ndarray, p: np.ndarray) -> np.ndarray:
    lam0 = (1 - p) * (1 - q0) + p * q1
    den = lam0 * (1 - lam0)
    pp = p * (1 - p)
    with np.errstate(divide="ignore", invalid="ignore"):
        info = np.where(den > 0, pp * (1 - q0 - q1) ** 2 / np.where(den > 0, den, 1.0), 0.0)
    return cast("np.ndarray", pp * (1 - info))


def bayes_mse(model: str, priors: ArrayLike, epsilon: float) -> float:
    """Exact ``E[(S_hat - S)^2]`` of ``model`` when every ``X_i`` is drawn from its prior (the paper's MSE).

    MMSE models: ``sum_i E[Var(X_i | Y_i)]`` (the paper's Proposition 2); ``"LDP"``: the unbiased
    estimator's ``N q(1 - q)/(1 - 2q)^2`` (eq. 25; infinite at eps = 0).
    """
    p = _priors(priors)
    q0, q1 = flips(model, p, epsilon)
    if model == "LDP":
        q = float(q0[0])
        return math.inf if abs(1 - 2 * q) < 1e-15 else p.size * q * (1 - q) / (1 - 2 * q) ** 2
    return float(np.sum(_per_user_mmse(q0, q1, p)))


def _posteriors(q0: np.ndarray, q1: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``E[X | Y = 0]`` and ``E[X | Y = 1]`` per user."""
    lam0 = (1 - p) * (1 - q0) + p * q1
    lam1 = 1 - lam0
    with np.errstate(divide="ignore", invalid="ignore"):
        post0 = np.where(lam0 > 0, p * q1 / np.where(lam0 > 0, lam0, 1.0), p)
        post1 = np.where(lam1 > 0, p * (1 - q1) / np.where(lam1 > 0, lam1, 1.0), p)
    return post0, post1


def _estimate_terms(model: str, q0: np.ndarray, q1: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A user's term of the estimate after reporting 0 and after reporting 1: the unbiased
    estimator's under ``"LDP"``, else the posterior means (:func:`_posteriors`)."""
    if model == "LDP":
        return -q0 / (1 - q0 - q1), (1 - q0) / (1 - q0 - q1)
    return _posteriors(q0, q1, p)


def conditional_mse(model: str, priors: ArrayLike, x: ArrayLike, epsilon: float) -> float:
    """Exact ``E[(S_hat - S)^2 | X = x]``: the inputs fixed (a real dataset), only the reports random.

    Per user the estimate's contribution ``g(Y_i)`` has mean ``m_i`` and variance
    ``f_i (1 - f_i) (g(1) - g(0))^2`` (``f_i`` the flip probability of ``x_i``); the MSE is
    ``(sum_i m_i - x_i)^2 + sum_i Var``.  For ``"LDP"`` ``g`` is the unbiased estimator's term and the
    bias vanishes.
    """
    p = _priors(priors)
    xs = np.asarray(x)
    if xs.shape != p.shape or not np.all((xs == 0) | (xs == 1)):
        raise ValueError("x must be a 0/1 array of the same length as priors")
    q0, q1 = flips(model, p, epsilon)
    f = np.where(xs == 1, q1, q0)
    if model == "LDP" and abs(1 - q0[0] - q1[0]) < 1e-15:
        return math.inf
    g0, g1 = _estimate_terms(model, q0, q1, p)
    keep = np.where(xs == 1, g1, g0)
    other = np.where(xs == 1, g0, g1)
    mean = (1 - f) * keep + f * other
    var = f * (1 - f) * (g1 - g0) ** 2
    return float((np.sum(mean) - np.sum(xs)) ** 2 + np.sum(var))


def simulate_squared_errors(
    model: str, priors: ArrayLike, epsilon: float, trials: int, rng: RNGLike = None, x: ArrayLike | None = None
) -> np.ndarray:
    """Squared errors ``(S_hat - S)^2`` of ``trials`` independent runs of ``model``.

    With ``x`` the inputs are fixed (estimates :func:`conditional_mse`); without, every trial draws
    ``X_i`` from its prior (estimates :func:`bayes_mse`).  Without ``x`` reports are drawn per user
    (``Y_i = X_i`` flipped with probability ``q0`` or ``q1``), in chunks of at most two million
    user-reports; with ``x`` the users sharing a prior and an input are exchangeable, and the
    number of flips among them is drawn as one binomial (the same law of the error, far faster).
    """
    p = _priors(priors)
    trials = check_positive_int(trials, "trials", maximum=10**7)
    gen = as_generator(rng)
    q0, q1 = flips(model, p, epsilon)
    g0, g1 = _estimate_terms(model, q0, q1, p)
    fixed = None if x is None else np.asarray(x).astype(np.int8)
    if fixed is not None and fixed.shape != p.shape:
        raise ValueError("x must have the length of priors")
    out = np.empty(trials)
    if fixed is not None:
        # users with the same prior and input are exchangeable: the number of flips among the n_g of
        # group g is Binomial(n_g, f_g), and the error is sum_g n_g (keep_g - x_g) + K_g (other_g - keep_g)
        _, first, size = np.unique(np.stack([p, fixed]), axis=1, return_index=True, return_counts=True)
        xs_g = fixed[first].astype(bool)
        f_g = np.where(xs_g, q1[first], q0[first])
        keep_g = np.where(xs_g, g1[first], g0[first])
        other_g = np.where(xs_g, g0[first], g1[first])
        base = float(np.sum(size * (keep_g - xs_g)))
        per = max(1, _CHUNK // size.size)
        for start in range(0, trials, per):
            t = min(per, trials - start)
            k = gen.binomial(size[None, :], f_g[None, :], size=(t, size.size))
            out[start:start + t] = (base + k @ (other_g - keep_g)) ** 2
        return out
    per = max(1, _CHUNK // p.size)
    for start in range(0, trials, per):
        t = min(per, trials - start)
        xs = gen.random((t, p.size)) < p
        flip = gen.random((t, p.size)) < np.where(xs, q1, q0)
        y = xs ^ flip
        est = np.where(y, g1, g0).sum(axis=1)
        out[start:start + t] = (est - xs.sum(axis=1)) ** 2
    return out


def squared_error_moments(
    model: str, priors: ArrayLike, epsilon: float, x: ArrayLike | None = None
) -> tuple[float, float]:
    """Exact mean and variance of one squared error ``(S_hat - S)^2`` (the tolerance of the simulations).

    The error is a sum of independent per-user terms ``D_i = g_i(Y_i) - X_i`` with at most four
    values (two with ``x`` fixed).  Their cumulants add: with ``mu``, ``k2``, ``k3``, ``k4`` the
    sums of the per-user mean and second to fourth cumulants, ``E[E^2] = k2 + mu^2`` and
    ``E[E^4] = k4 + 3 k2^2 + 4 mu k3 + 6 mu^2 k2 + mu^4``; the variance is
    ``E[E^4] - E[E^2]^2``.  The mean equals :func:`bayes_mse` (``x`` None) or
    :func:`conditional_mse`.
    """
    p = _priors(priors)
    q0, q1 = flips(model, p, epsilon)
    g0, g1 = _estimate_terms(model, q0, q1, p)
    if x is None:
        w = np.stack([(1 - p) * (1 - q0), (1 - p) * q0, p * q1, p * (1 - q1)], axis=1)
        v = np.stack([g0, g1, g0 - 1, g1 - 1], axis=1)
    else:
        xs = np.asarray(x).astype(float)
        if xs.shape != p.shape:
            raise ValueError("x must have the length of priors")
        f = np.where(xs == 1, q1, q0)
        keep = np.where(xs == 1, g1, g0) - xs
        other = np.where(xs == 1, g0, g1) - xs
        w = np.stack([1 - f, f], axis=1)
        v = np.stack([keep, other], axis=1)
    m = np.sum(w * v, axis=1)
    c = v - m[:, None]
    m2, m3, m4 = (np.sum(w * c**k, axis=1) for k in (2, 3, 4))
    mu, k2, k3, k4 = float(m.sum()), float(m2.sum()), float(m3.sum()), float(np.sum(m4 - 3 * m2**2))
    second = k2 + mu**2
    fourth = k4 + 3 * k2**2 + 4 * mu * k3 + 6 * mu**2 * k2 + mu**4
    return second, max(0.0, fourth - second**2)


def exact_curves(priors: ArrayLike, epsilons: Iterable[float], models: Sequence[str] = MODELS) -> Any:
    """Exact Bayes MSE of every model at every budget: columns ``epsilon``, ``model``, ``mse``, ``rmse``.

    ``rmse`` is the paper's y axis, ``sqrt(MSE / N)`` (``N`` the number of priors).
    """
    import pandas as pd

    p = _priors(priors)
    eps = _grid(list(epsilons))
    rows = []
    for name in models:
        _model(name)
        for e in eps:
            mse = bayes_mse(name, p, float(e))
            rows.append({"epsilon": float(e), "model": name, "mse": mse, "rmse": math.sqrt(mse / p.size)})
    return pd.DataFrame(rows)


def paper_curves(priors: ArrayLike, epsilons: Iterable[float]) -> Any:
    """The paper's printed closed forms summed over users with ``priors``, and the printed points' feasibility.

    ``"Opt-LIP (Thm 2)"`` and ``"Opt-LIP eps/2 (Thm 2)"``: Theorem 2 / Corollary 1 (eq. 21),
    ``P1 P0 (2 e^-eps - e^-2eps)`` per user; the point ``(P1 e^-eps, P0 e^-eps)`` is eps-LIP exactly
    when ``1/(1 + e^eps) <= P1 <= e^eps/(1 + e^eps)``.  ``"Sym-LIP eps/2 (eq. 23)"``: eq. 23 as printed
    (its ``q`` is feasible).  Columns ``epsilon``, ``model``, ``mse``, ``rmse`` (``sqrt(mse / N)``,
    NaN where the printed MSE is negative), ``feasible`` (every user's point) and
    ``infeasible_share`` (share of users whose printed point violates LIP).
    """
    import pandas as pd

    p = _priors(priors)
    rows = []
    for name in PAPER_MODELS:
        for e in _grid(list(epsilons)):
            ex = math.exp(float(e) * _FACTOR[name])
            if name.startswith("Opt-LIP"):
                ie = 1.0 / ex
                per = p * (1 - p) * (2 * ie - ie * ie)
                c = 1.0 / (1.0 + ex)
                bad = (p < c * (1 - 1e-12)) | (p > (1 - c) * (1 + 1e-12))
            else:
                per = p * (1 - p) - p * (1 - p) * (2 * ex - ex * p - 2 * p + 1) ** 2 / (ex * ex - 2 * ex * p + ex)
                bad = np.zeros(p.size, dtype=bool)
            total = float(per.sum())
            rows.append({"epsilon": float(e), "model": name, "mse": total,
                         "rmse": math.sqrt(total / p.size) if total >= 0 else math.nan,
                         "feasible": bool(not bad.any()), "infeasible_share": float(bad.mean())})
    return pd.DataFrame(rows)


def unbiased_ldp_optimum(prior: float, epsilon: float, grid: int = 401) -> tuple[float, float, float]:
    """``(q0, q1, mse)`` minimising one user's *unbiased*-estimator MSE under eps-LDP, for inputs from ``prior``.

    The MSE is ``[P1 q1 (1 - q1) + P0 q0 (1 - q0)] / (1 - q0 - q1)^2``; not concave, so it is
    minimised over a ``grid x grid`` lattice of the LDP polygon (``q0 + q1 < 1``), the polygon's
    vertex ``q0 = q1 = 1/(e^eps + 1)`` and SLSQP runs started from both; the best is returned.
    """
    from scipy.optimize import minimize

    p = float(_priors([prior])[0])
    e = math.exp(float(_grid([epsilon])[0]))
    grid = check_positive_int(grid, "grid", minimum=11, maximum=5001)

    def f(q: np.ndarray) -> Any:
        a, b = q[..., 0], q[..., 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            return (p * b * (1 - b) + (1 - p) * a * (1 - a)) / (1 - a - b) ** 2

    def ok(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return ((1 - a <= e * b * (1 + 1e-12)) & (b <= e * (1 - a) * (1 + 1e-12)) & (a <= e * (1 - b) * (1 + 1e-12))
                & (1 - b <= e * a * (1 + 1e-12)) & (a + b < 1 - 1e-9))

    t = np.linspace(0.0, 1.0, grid)
    A, B = np.meshgrid(t, t, indexing="ij")
    val = np.where(ok(A, B), f(np.stack([A, B], axis=-1)), np.inf)
    i = np.unravel_index(int(np.argmin(val)), val.shape)
    vertex = np.full(2, 1.0 / (e + 1.0))  # the polygon's vertex with q0 + q1 < 1 (symmetric RR)
    cands = [np.array([A[i], B[i]]), vertex]
    cons = [{"type": "ineq", "fun": lambda q: e * q[1] - (1 - q[0])},
            {"type": "ineq", "fun": lambda q: e * (1 - q[0]) - q[1]},
            {"type": "ineq", "fun": lambda q: e * (1 - q[1]) - q[0]},
            {"type": "ineq", "fun": lambda q: e * q[0] - (1 - q[1])}]
    for start in list(cands):
        res = minimize(lambda q: float(f(q)), start, method="SLSQP", bounds=[(0, 1), (0, 1)], constraints=cons,
                       options={"ftol": 1e-14, "maxiter": 500})
        if res.success and ok(np.array(res.x[0]), np.array(res.x[1])):
            cands.append(np.asarray(res.x))
    best = min(cands, key=lambda q: float(f(q)))
    return float(best[0]), float(best[1]), float(f(best))
