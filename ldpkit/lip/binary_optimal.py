"""Optimal binary randomised response under LIP (and LDP) for one prior, exactly, by vertex enumeration.

For a fixed prior, every LIP constraint ``e^-eps <= P(y|x) / P(y) <= e^eps`` is *linear* in
``(q0, q1)`` (``P(y)`` is linear in them), so the feasible set is a polygon; the MSE of the
posterior mean (:func:`~ldpkit.lip.per_user_mse`) is *concave* in ``(q0, q1)``.  A concave function
attains its minimum over a polygon at a vertex, so enumerating the vertices (every intersection of
two constraint lines that satisfies all constraints) gives the exact global optimum.  The same
holds under LDP and in the symmetric model (an interval).  Every optimum is checked by the
accountant before it is returned.  LIP chapter (:prf:ref:`thm-lip-vertex`); part of
:mod:`ldpkit.lip`, where every name is documented.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Optional, TYPE_CHECKING, cast

import numpy as np
from numpy.typing import ArrayLike

from .._solvers import SolverError
from .._validation import EPS_MIN, check_epsilon, check_probabilities, check_probability, describe
from ..accountant import check_ldp, check_lip
from ..channels import ExplicitChannel
from ..family import BudgetSweep, Family, register_family
from .binary import BinaryRR, per_user_mse

if TYPE_CHECKING:
    from ..contracts import Contract

__all__ = [
    "MAX_BINARY_EPS",
    "BinaryOptimum",
    "LocalOptimum",
    "optimal_ldp",
    "optimal_lip",
    "optimal_lip_global",
    "optimal_lip_local",
    "optimal_symmetric_lip",
]

#: the largest budget of the binary optimisers; their optimal flip probabilities are about :math:`e^{-\varepsilon}`, and
#: beyond 300 the vertex computation meets products near the bottom of double precision
MAX_BINARY_EPS = 300.0

_BINARY_EPS_WHY = ("the optimal flip probabilities are about e^-eps, and beyond it the vertex computation "
                   "works with products near the bottom of double precision")


# ============================================================================ optimal binary mechanisms
@dataclass(frozen=True)
class BinaryOptimum:
    """A globally optimal binary randomised response for one prior and one budget.

    Attributes
    ----------
    notion
        ``"lip"`` or ``"ldp"`` (the constraints imposed).
    symmetric
        Whether ``q0 = q1`` was imposed.
    prior, epsilon
        The prior ``P1`` and the budget.
    q0, q1
        The optimal flip probabilities (of the optima, the one with ``q0 + q1 <= 1``: no swapping).
    mse
        The per-user MSE ``E[Var(X | Y)]`` at the optimum.
    active
        The constraints that hold with equality there.
    alternatives
        Every optimal vertex ``(q0, q1)`` (at least the mirror ``(1 - q0, 1 - q1)``).

    Examples
    --------
    >>> from ldpkit.lip import optimal_lip
    >>> opt = optimal_lip(0.3, 1.0)
    >>> round(opt.q0, 4), round(opt.q1, 4), round(opt.mse, 4)     # Theorem 2's point: 0.3 is central
    (0.1104, 0.2575, 0.1261)
    >>> opt.active
    ('P(Y=1|X=0) >= e^-eps P(Y=1)', 'P(Y=0|X=1) >= e^-eps P(Y=0)')
    """

    notion: str
    symmetric: bool
    prior: float
    epsilon: float
    q0: float
    q1: float
    mse: float
    active: tuple[str, ...]
    alternatives: tuple[tuple[float, float], ...] = field(default=(), compare=False)

    def mechanism(self) -> BinaryRR:
        """The optimal :class:`BinaryRR`, declaring the budget it was built for (LIP under the prior, or LDP)."""
        if self.notion == "lip":
            return BinaryRR(self.q0, self.q1, prior=self.prior, lip_epsilon=self.epsilon)
        return BinaryRR(self.q0, self.q1, prior=self.prior, epsilon=self.epsilon)


def _binary_constraints(p: float, eps: float, notion: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Rows ``G q <= h`` in ``q = (q0, q1)`` (every LIP or LDP constraint, and the box), with names."""
    e, ie = math.exp(eps), math.exp(-eps)
    # affine forms (constant, gradient) of P(y|x) and P(y)
    cond = {
        (0, 0): (1.0, (-1.0, 0.0)), (0, 1): (0.0, (1.0, 0.0)), (1, 0): (0.0, (0.0, 1.0)), (1, 1): (1.0, (0.0, -1.0))
    }
    marg = {0: (1 - p, (-(1 - p), p)), 1: (p, (1 - p, -p))}
    G, h, names = [], [], []

    def add(c0: float, g: tuple[float, float], name: str) -> None:  # c0 + g . q <= 0
        G.append(g)
        h.append(-c0)
        names.append(name)

    for (x, y), (c, g) in cond.items():
        if notion == "lip":
            mc, mg = marg[y]
            add(c - e * mc, (g[0] - e * mg[0], g[1] - e * mg[1]), f"P(Y={y}|X={x}) <= e^eps P(Y={y})")
            add(ie * mc - c, (ie * mg[0] - g[0], ie * mg[1] - g[1]), f"P(Y={y}|X={x}) >= e^-eps P(Y={y})")
        else:
            c2, g2 = cond[(1 - x, y)]
            add(c - e * c2, (g[0] - e * g2[0], g[1] - e * g2[1]), f"P(Y={y}|X={x}) <= e^eps P(Y={y}|X={1 - x})")
    for j, qn in enumerate(("q0", "q1")):
        unit = (1.0, 0.0) if j == 0 else (0.0, 1.0)
        add(0.0, (-unit[0], -unit[1]), f"{qn} >= 0")
        add(-1.0, unit, f"{qn} <= 1")
    G_arr, h_arr = np.array(G), np.array(h)
    # each row divided by its largest coefficient (e^eps can be 1e304: its products would overflow)
    scale = np.maximum(np.abs(G_arr).max(axis=1), np.abs(h_arr))
    return G_arr / scale[:, None], h_arr / scale, names


def _binary_feasible(pts: np.ndarray, p: float, eps: float, notion: str) -> np.ndarray:
    """Every ratio of the notion within ``e^+-eps`` up to a relative ``1e-10``.

    In ratio form, so that tiny probabilities (about ``e^-eps``) are judged relative to their size.
    """
    q0, q1 = pts[:, 0], pts[:, 1]
    P = np.stack([1 - q0, q0, q1, 1 - q1], axis=1).reshape(-1, 2, 2)  # P[:, x, y]
    hi, lo = math.exp(eps) * (1 + 1e-10), math.exp(-eps) * (1 - 1e-10)
    box = np.all((pts >= 0) & (pts <= 1), axis=1)
    if notion == "ldp":
        ok = (P[:, 0, :] <= hi * P[:, 1, :]) & (P[:, 1, :] <= hi * P[:, 0, :])
        return cast("np.ndarray", box & np.all(ok, axis=1))
    lam = (1 - p) * P[:, 0, :] + p * P[:, 1, :]  # P(Y = y)
    ok = (P <= hi * lam[:, None, :]) & (P >= lo * lam[:, None, :])
    return cast("np.ndarray", box & np.all(ok, axis=(1, 2)))


def _info(pts: np.ndarray, p: float) -> np.ndarray:
    """``P1 P0 (1 - q0 - q1)^2 / (lambda_0 lambda_1)``: the MSE is ``P1 P0 (1 - info)``; maximised at the optimum."""
    q0, q1 = pts[:, 0], pts[:, 1]
    lam0 = (1 - p) * (1 - q0) + p * q1
    den = lam0 * (1 - lam0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, p * (1 - p) * (1 - q0 - q1) ** 2 / np.where(den > 0, den, 1.0), 0.0)


def _solve_binary(prior: Any, epsilon: Any, notion: str, symmetric: bool) -> BinaryOptimum:
    p = check_probability(prior, "prior", open_interval=True)
    eps = check_epsilon(epsilon, high=MAX_BINARY_EPS, high_why=_BINARY_EPS_WHY)
    G, h, names = _binary_constraints(p, eps, notion)
    cands: list[tuple[float, float]] = []
    if symmetric:
        g1 = G.sum(axis=1)  # q0 = q1 = t
        for k in range(g1.size):
            if g1[k] != 0.0:
                t = h[k] / g1[k]
                cands.append((t, t))
    else:
        for i, j in itertools.combinations(range(h.size), 2):
            # Cramer's rule: products of the (possibly tiny, ~e^-eps) coefficients keep their relative accuracy
            det = G[i, 0] * G[j, 1] - G[i, 1] * G[j, 0]
            if det != 0.0 and abs(det) > 1e-300:
                cands.append(((h[i] * G[j, 1] - h[j] * G[i, 1]) / det, (G[i, 0] * h[j] - G[j, 0] * h[i]) / det))
    pts = np.array(cands, dtype=float)
    pts = pts[np.all(np.isfinite(pts), axis=1)]
    pts = np.where(np.abs(pts) < 1e-300, 0.0, pts)
    pts = np.where(np.abs(pts - 1.0) < 1e-16, 1.0, pts)
    pts = pts[_binary_feasible(pts, p, eps, notion)]
    if pts.size == 0:  # pragma: no cover - the vertices of a non-empty polygon include feasible ones
        raise SolverError(f"no feasible vertex for prior={p!r}, epsilon={eps!r}")
    info = _info(pts, p)
    best_info = float(info.max())
    opt = pts[info >= best_info * (1 - 1e-10)]
    # canonical order: no swapping (q0 + q1 <= 1) first, then the smaller q0; duplicates merged
    opt = opt[np.lexsort((opt[:, 0], opt.sum(axis=1) > 1.0))]
    alternatives: list[tuple[float, float]] = []
    for a, b in opt:
        if not any(abs(a - c) <= 1e-12 * max(a, c, 1e-300) and abs(b - d) <= 1e-12 * max(b, d, 1e-300)
                   for c, d in alternatives):
            alternatives.append((float(a), float(b)))
    q0, q1 = alternatives[0]
    # the chosen vertex must satisfy every constraint of the notion, by the accountant
    ch = ExplicitChannel(np.array([[1 - q0, q0], [q1, 1 - q1]]))
    res = check_lip(ch, eps, prior=[1 - p, p]) if notion == "lip" else check_ldp(ch, eps)
    if not res.satisfied:  # pragma: no cover - guarded by the ratio-form filter
        raise SolverError(f"optimal {notion} vertex ({q0!r}, {q1!r}) violates {notion} by {-res.slack!r}")
    # active constraints: those binding up to a relative 1e-9 of their terms
    q = np.array([q0, q1])
    scale = np.abs(h) + np.abs(G) @ np.abs(q)
    active = tuple(names[k] for k in np.flatnonzero(h - G @ q <= 1e-9 * np.maximum(scale, 1e-300)))
    mse = float(per_user_mse(q0, q1, p))
    return BinaryOptimum(notion, symmetric, p, eps, q0, q1, mse, tuple(active), tuple(alternatives))


def optimal_lip(prior: float, epsilon: float) -> BinaryOptimum:
    """The eps-LIP binary randomised response minimising one user's MSE (the paper's problem 18), exactly.

    Global optimum by vertex enumeration (module docstring): every LIP constraint is linear in
    ``(q0, q1)`` for a fixed prior and the MSE is concave.  The result is checked against every
    LIP constraint by :func:`ldpkit.accountant.check_lip` before it is returned.  LIP chapter
    (:prf:ref:`thm-lip-vertex`).

    Examples
    --------
    >>> from ldpkit.lip import optimal_lip
    >>> opt = optimal_lip(0.01, 1.0)          # Theorem 2 claims q0 = 0.0037, q1 = 0.3642: infeasible
    >>> round(opt.q0, 4), round(opt.q1, 4), round(opt.mse, 6)
    (0.2643, 0.2689, 0.009791)
    >>> [round(v, 12) for v in opt.alternatives[1]] == [round(1 - opt.q0, 12), round(1 - opt.q1, 12)]   # mirror
    True
    """
    return _solve_binary(prior, epsilon, "lip", symmetric=False)


def optimal_lip_global(prior: float, epsilon: float) -> BinaryOptimum:
    """The global-prior model (the paper's Corollary 1 setting): every user shares ``prior``.

    The MSE decomposes per user (Proposition 2) and every user solves the same problem, so this
    is :func:`optimal_lip` at ``prior``; the total MSE of ``n`` users is ``n * mse``.
    LIP chapter (:prf:ref:`thm-lip-vertex`).
    """
    return optimal_lip(prior, epsilon)


@dataclass(frozen=True, eq=False)
class LocalOptimum:
    """Per-user optima under local priors: arrays of ``q0``, ``q1`` and per-user MSE, and their total.

    Examples
    --------
    >>> from ldpkit.lip import optimal_lip_local
    >>> res = optimal_lip_local([0.1, 0.5, 0.1], 1.0)
    >>> res.q0.round(4).tolist(), round(res.total_mse, 4)
    ([0.2176, 0.1839, 0.2176], 0.3084)
    """

    priors: np.ndarray
    epsilon: float
    q0: np.ndarray
    q1: np.ndarray
    mse: np.ndarray
    total_mse: float

    def mechanisms(self) -> list[BinaryRR]:
        """One :class:`BinaryRR` per user, each declaring eps-LIP under its own prior."""
        return [
            BinaryRR(float(a), float(b), prior=float(p), lip_epsilon=self.epsilon)
            for a, b, p in zip(self.q0, self.q1, self.priors)
        ]


def optimal_lip_local(priors: ArrayLike, epsilon: float) -> LocalOptimum:
    """The general model: local priors, one optimum per user (the MSE decomposes, Proposition 2).

    Each distinct prior is solved once by :func:`optimal_lip`.  LIP chapter (:prf:ref:`thm-lip-vertex`).
    """
    arr = check_probabilities(priors, "priors")
    if arr.ndim != 1:
        raise ValueError(f"priors must be a 1-d array (one per user), got shape {arr.shape}")
    bad = (arr <= 0) | (arr >= 1)
    if np.any(bad):
        raise ValueError(f"priors must lie in (0, 1), got {describe(arr[bad][0].item())}")
    eps = check_epsilon(epsilon, high=MAX_BINARY_EPS, high_why=_BINARY_EPS_WHY)
    uniq, inv = np.unique(arr, return_inverse=True)
    sols = [optimal_lip(float(u), eps) for u in uniq]
    q0 = np.array([s.q0 for s in sols])[inv]
    q1 = np.array([s.q1 for s in sols])[inv]
    mse = np.array([s.mse for s in sols])[inv]
    return LocalOptimum(arr, eps, q0, q1, mse, float(mse.sum()))


def optimal_symmetric_lip(prior: float, epsilon: float) -> BinaryOptimum:
    """The eps-LIP symmetric randomised response (``q0 = q1 = q``) minimising one user's MSE, exactly.

    The LIP constraints are linear in ``q`` (an interval) and the MSE concave in ``q``, so the
    optimum is an end of the feasible interval.  LIP chapter (:prf:ref:`thm-lip-vertex`).

    Examples
    --------
    >>> from ldpkit.lip import optimal_symmetric_lip
    >>> opt = optimal_symmetric_lip(0.5, 1.0)        # uniform prior: q = e^-eps / 2, Theorem 2's point
    >>> round(opt.q0, 4), opt.q0 == opt.q1
    (0.1839, True)
    """
    return _solve_binary(prior, epsilon, "lip", symmetric=True)


def optimal_ldp(prior: float, epsilon: float) -> BinaryOptimum:
    """Opt-LDP: the eps-LDP binary randomised response minimising one user's MMSE, exactly.

    Same vertex enumeration under the four LDP constraints (prior-free), the MSE still that of
    the posterior mean under ``prior``.  LIP chapter (:prf:ref:`thm-lip-vertex`).

    Examples
    --------
    >>> from ldpkit.lip import optimal_ldp
    >>> opt = optimal_ldp(0.1, 1.0)
    >>> round(opt.q0, 4), round(opt.q1, 4)          # symmetric RR, 1 / (e^eps + 1)
    (0.2689, 0.2689)
    """
    return _solve_binary(prior, epsilon, "ldp", symmetric=False)


# ============================================================================ the family
def _examples() -> tuple[BinaryRR, ...]:
    # budgets stated by hand: log 7 = log(0.7 / 0.1), the largest ratio of a column (tight), and a
    # LIP budget above the tight 1.1575 under the prior
    return (BinaryRR(0.1, 0.3, prior=0.2, epsilon=math.log(7), lip_epsilon=1.2), optimal_lip(0.05, 2.0).mechanism(),
            optimal_ldp(0.5, 0.5).mechanism())


def _sweeps() -> tuple[BudgetSweep, ...]:
    # binary randomised response: items {0, 1}, a report family of its own
    return (BudgetSweep("BinaryRR-LIP", lambda e: optimal_lip(0.2, e).mechanism(), EPS_MIN, MAX_BINARY_EPS, "binary",
                        variants=(("BinaryRR(q0=0.1, q1=0.3)", lambda: BinaryRR(0.1, 0.3)),)),)


def _at_budget(d: int, t: float, prior: Any = None) -> BinaryRR:
    """The binary LIP optimum at ``t`` under ``prior`` (uniform if none) on two items."""
    if d != 2:
        raise ValueError(f"binary randomised response takes two items, got d={d}")
    return optimal_lip(0.5 if prior is None else float(np.asarray(prior, dtype=float)[1]), t).mechanism()


def _optimiser(c: Contract) -> Optional[float]:
    """Under a LIP promise the optimum at the promise's budget is the family's own answer."""
    return float(c.params["epsilon"]) if c.guarantee.notion == "lip" else None


def _applies(c: Contract) -> Optional[str]:
    if c.d != 2:
        return f"binary randomised response takes two items, the promise has {c.d}"
    return None


register_family(Family(
    "LIP-binary", "jiang2018lip", BinaryRR, _examples, "binary randomised response, the LIP optimum under a prior",
    reports="item", sweeps=_sweeps, at_budget=_at_budget, parameter="LIP epsilon under the promise's prior (uniform if none)", context=("prior",),
    hi=30.0, optimiser=_optimiser, applies=_applies,
    audit_skip="binary randomised response: two items, the audits take four", order=101))
