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
* **The paper's closed forms** (Theorem 2, Corollary 1, Propositions 3 and 4) are implemented
  separately (``paper_*``) so that the book can compare them with the true optima
  (:func:`compare_with_paper`).  Theorem 2 and Corollary 1 are right on
  ``[1/(1 + e^eps), e^eps/(1 + e^eps)]`` and infeasible (they violate LIP) outside it;
  :func:`corrected_theorem2` is the true optimum for every prior.  Proposition 3 is right.
  Proposition 4's optimal ``q`` is right but its printed minimum MSE (eq. 23) is not (it is even
  negative).
* **k-ary LIP** (beyond the paper): :func:`optimal_kary_lip` finds the eps-LIP channel minimising
  the Bayes risk of the posterior-mean estimate of the one-hot input, exactly, by a linear
  programme over the vertices of the set of admissible posterior-to-prior ratio vectors, with a
  dual certificate valid for every LIP channel with any number of outputs.  LIP chapter (:prf:ref:`thm-lip-kary-lp`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike, as_generator
from ._solvers import SolverError
from ._validation import (
    MAX_USERS,
    ArgumentTypeError,
    check_distribution,
    check_epsilon,
    check_items,
    check_positive_int,
    check_positive_real,
    check_probabilities,
    check_probability,
    describe,
)
from .accountant import Guarantee, check_ldp, check_lip, ldp_epsilon, lip_epsilon
from .channel_oracle import ChannelOracle
from .channels import ExplicitChannel, UnaryChannel
from .reports import check_source

__all__ = [
    "MAX_BINARY_EPS",
    "MAX_KARY_EPS",
    "MAX_KARY_K",
    "OBJECTIVES",
    "BinaryOptimum",
    "BinaryRR",
    "KaryOptimum",
    "LocalOptimum",
    "PaperClosedForm",
    "bayes_risk",
    "compare_kary",
    "compare_with_paper",
    "corrected_theorem2",
    "optimal_kary_ldp",
    "optimal_kary_lip",
    "optimal_ldp",
    "optimal_lip",
    "optimal_lip_global",
    "optimal_lip_local",
    "optimal_symmetric_lip",
    "paper_corollary1",
    "paper_proposition3",
    "paper_proposition4",
    "paper_theorem2",
    "per_user_mse",
]

#: the Bayes-risk objectives of :func:`optimal_kary_lip` and :func:`bayes_risk`
OBJECTIVES = ("mse", "map")

#: largest k of :func:`optimal_kary_lip` (``k 2^(k-1)`` candidate ratio vectors)
MAX_KARY_K = 12

#: the largest budget of the k-ary optimisers; beyond it the ratio vectors span more than e^{2 * 30}
#: and the linear programme loses its accuracy in double precision
MAX_KARY_EPS = 30.0

#: the largest budget of the binary optimisers; their optimal flip probabilities are about e^-eps, and
#: beyond 300 the vertex computation meets products near the bottom of double precision
MAX_BINARY_EPS = 300.0

_BINARY_EPS_WHY = ("the optimal flip probabilities are about e^-eps, and beyond it the vertex computation "
                   "works with products near the bottom of double precision")


# ============================================================================ per-user MSE
def _mse(q0: ArrayLike, q1: ArrayLike, p: ArrayLike) -> np.ndarray:
    """``E[Var(X | Y)]`` for flips ``(q0, q1)`` and prior ``p`` (vectorised, unvalidated)."""
    q0, q1, p = np.broadcast_arrays(
        np.asarray(q0, dtype=float), np.asarray(q1, dtype=float), np.asarray(p, dtype=float)
    )
    lam0 = (1 - p) * (1 - q0) + p * q1
    lam1 = (1 - p) * q0 + p * (1 - q1)
    den = lam0 * lam1
    pp = p * (1 - p)
    with np.errstate(divide="ignore", invalid="ignore"):
        info = np.where(den > 0, pp * (1 - q0 - q1) ** 2 / np.where(den > 0, den, 1.0), 0.0)
    return pp * (1 - info)


def per_user_mse(q0: ArrayLike, q1: ArrayLike, prior: ArrayLike) -> np.ndarray:
    """Exact MSE ``E[(X - E[X|Y])^2]`` of one user's posterior mean, vectorised (the paper's eq. 16).

    With ``lambda_0 = (1-P1)(1-q0) + P1 q1`` and ``lambda_1 = 1 - lambda_0``::

        E = P1 P0 [1 - P1 P0 (1 - q0 - q1)^2 / (lambda_0 lambda_1)]

    (``P1 P0`` when ``lambda_0 lambda_1 = 0``: the report is constant).  Concave in ``(q0, q1)``.
    LIP chapter (:eq:`eq-lip-mmse`).

    Examples
    --------
    >>> from ldpkit.lip import per_user_mse
    >>> float(per_user_mse(0.0, 0.0, 0.3))                 # no noise: no error
    0.0
    >>> round(float(per_user_mse(0.25, 0.25, 0.5)), 4)     # randomised response, eps = log 3
    0.1875
    """
    a = check_probabilities(q0, "q0")
    b = check_probabilities(q1, "q1")
    p = check_probabilities(prior, "prior")
    try:
        return _mse(a, b, p)
    except ValueError as err:
        raise ValueError(f"q0, q1 and prior do not broadcast together: {err}") from None


def _binary_prior(prior: Any, name: str = "prior") -> float:
    """A prior ``P1`` strictly inside (0, 1)."""
    return check_probability(prior, name, open_interval=True)


# ============================================================================ BinaryRR
class BinaryRR(ChannelOracle):
    """Binary randomised response with flip probabilities ``q0 = P(Y=1|X=0)``, ``q1 = P(Y=0|X=1)``.

    The paper's convention (Jiang, Li, Tandon, eq. 14).  As a frequency oracle over the items
    ``{0, 1}`` it estimates the counts ``(n - S, S)`` without bias through its channel
    (:class:`~ldpkit.channel_oracle.ChannelOracle`); with priors it also gives the posterior-mean
    (MMSE) estimate of ``S`` and its exact MSE.

    Parameters
    ----------
    q0, q1
        Flip probabilities in ``[0, 1]`` with ``q0 + q1 != 1`` (otherwise ``Y`` is independent of ``X``).
    prior
        Optional global prior ``P1`` in ``(0, 1)``: the mechanism then also declares LIP under
        the prior ``[1 - P1, P1]``, and :meth:`mmse_estimate` uses it by default.
    lip_epsilon
        The declared LIP budget (needs ``prior``); default the channel's tight LIP epsilon.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit import accountant
    >>> from ldpkit.lip import BinaryRR
    >>> rr = BinaryRR(0.1, 0.3, prior=0.2)
    >>> rr.channel().matrix.tolist()                       # rows x = 0, 1; columns y = 0, 1
    [[0.9, 0.1], [0.3, 0.7]]
    >>> [g.notion for g in rr.guarantees()], accountant.verify(rr).satisfied
    (['ldp', 'lip'], True)
    >>> round(rr.epsilon, 4)                               # max |log ratio| = log(0.7 / 0.1)
    1.9459
    >>> round(rr.mmse(n=100), 3)                           # exact MSE of the posterior mean
    10.629
    >>> round(rr.unbiased_mse(n=100), 3)                   # the prior-free unbiased estimator
    31.667
    >>> reports = rr.perturb(np.array([0] * 80 + [1] * 20), rng=1)
    >>> round(rr.mmse_estimate(reports), 2), round(rr.unbiased_estimate(reports), 2)
    (18.88, 16.67)
    """

    def __init__(self, q0: float, q1: float, *, prior: float | None = None, lip_epsilon: float | None = None) -> None:
        a = check_probability(q0, "q0")
        b = check_probability(q1, "q1")
        if abs(1.0 - a - b) <= 1e-12:
            raise ValueError(
                f"q0 + q1 must differ from 1 (then Y is independent of X), got q0={describe(q0)}, q1={describe(q1)}"
            )
        p = None if prior is None else _binary_prior(prior)
        if lip_epsilon is not None and p is None:
            raise ValueError("lip_epsilon is a budget under a prior: give prior too")
        declared = None if lip_epsilon is None else check_positive_real(lip_epsilon, "lip_epsilon")
        ch = ExplicitChannel(np.array([[1.0 - a, a], [b, 1.0 - b]]))
        eps = ldp_epsilon(ch)
        guarantees = [Guarantee("ldp", epsilon=eps)] if math.isfinite(eps) and eps > 0 else []
        if p is not None:
            lip = declared if declared is not None else _lip_eps_of(ch, p)
            if math.isfinite(lip) and lip > 0:
                guarantees.append(Guarantee("lip", prior=np.array([1.0 - p, p]), epsilon=lip))
        super().__init__(ch, epsilon=eps, guarantees=guarantees)
        self.q0 = a
        self.q1 = b
        self.prior = p

    @classmethod
    def symmetric(cls, q: float, *, prior: float | None = None, lip_epsilon: float | None = None) -> BinaryRR:
        """The symmetric model ``q0 = q1 = q`` (the paper's Fig. 4(c)).

        Examples
        --------
        >>> from ldpkit.lip import BinaryRR
        >>> BinaryRR.symmetric(0.25)
        BinaryRR(q0=0.25, q1=0.25)
        """
        a = check_probability(q, "q")
        return cls(a, a, prior=prior, lip_epsilon=lip_epsilon)

    def __repr__(self) -> str:
        tail = "" if self.prior is None else f", prior={self.prior:.6g}"
        return f"BinaryRR(q0={self.q0:.6g}, q1={self.q1:.6g}{tail})"

    # ------------------------------------------------------------------ priors and reports
    def _priors(self, priors: ArrayLike | None, n: int | None) -> np.ndarray:
        """Per-user priors: an array of length ``n``, a scalar broadcast to ``n``, or the global prior."""
        if priors is None:
            if self.prior is None:
                raise ValueError("no priors given and the mechanism has no global prior")
            priors = self.prior
        arr = check_probabilities(priors, "priors")
        if arr.ndim == 0:
            if n is None:
                raise ValueError("a scalar (global) prior needs the number of users n")
            return np.full(check_positive_int(n, "n", maximum=MAX_USERS), float(arr))
        if arr.ndim != 1:
            raise ValueError(f"priors must be a scalar or a 1-d array (one per user), got shape {arr.shape}")
        if n is not None and arr.size != n:
            raise ValueError(f"priors has length {arr.size}, but there are n={n} users")
        return arr

    def _reports(self, reports: Any) -> np.ndarray:
        check_source(reports, self.provenance)
        return check_items(reports, 2, "reports")

    # ------------------------------------------------------------------ MMSE estimation
    def posterior_mean(self, reports: Any, priors: ArrayLike | None = None) -> np.ndarray:
        """``E[X_i | Y_i]`` for every user (the paper's eq. 15); ``priors`` scalar, per user, or the global prior.

        LIP chapter (:eq:`eq-lip-mmse`).
        """
        y = self._reports(reports)
        p = self._priors(priors, y.size)
        lam0 = (1 - p) * (1 - self.q0) + p * self.q1
        lam1 = 1.0 - lam0
        with np.errstate(divide="ignore", invalid="ignore"):
            post1 = np.where(lam1 > 0, p * (1 - self.q1) / np.where(lam1 > 0, lam1, 1.0), p)
            post0 = np.where(lam0 > 0, p * self.q1 / np.where(lam0 > 0, lam0, 1.0), p)
        return np.where(y == 1, post1, post0)

    def mmse_estimate(self, reports: Any, priors: ArrayLike | None = None) -> float:
        """The MMSE estimate ``sum_i E[X_i | Y_i]`` of ``S`` (the paper's eq. 10).

        LIP chapter (:eq:`eq-lip-mmse`).
        """
        return float(np.sum(self.posterior_mean(reports, priors)))

    def mmse(self, priors: ArrayLike | None = None, n: int | None = None) -> float:
        """Exact MSE ``E[(S_hat - S)^2] = sum_i E[Var(X_i | Y_i)]`` of :meth:`mmse_estimate`.

        Expectation over the inputs (drawn from the priors) and the reports.  LIP chapter (:eq:`eq-lip-mmse`).
        """
        p = self._priors(priors, n)
        return float(np.sum(_mse(np.full(p.size, self.q0), np.full(p.size, self.q1), p)))

    # ------------------------------------------------------------------ prior-free baseline
    def unbiased_estimate(self, reports: Any) -> float:
        """The prior-free unbiased estimate ``(sum_i Y_i - n q0) / (1 - q0 - q1)`` of ``S`` (the paper's eq. 24).

        Equal to ``estimate(reports)[1]``.  LIP chapter (:eq:`eq-lip-unbiased`).
        """
        y = self._reports(reports)
        return float((y.sum() - y.size * self.q0) / (1.0 - self.q0 - self.q1))

    def unbiased_variance(self, count: int, n: int) -> float:
        """Exact ``Var`` of :meth:`unbiased_estimate` when ``count`` of the ``n`` users hold 1.

        ``[count q1 (1 - q1) + (n - count) q0 (1 - q0)] / (1 - q0 - q1)^2`` (the paper's eq. 25 when
        ``q0 = q1``).  LIP chapter (:eq:`eq-lip-unbiased`).
        """
        n = check_positive_int(n, "n", maximum=MAX_USERS)
        c = check_positive_int(count, "count", minimum=0, maximum=n)
        return (c * self.q1 * (1 - self.q1) + (n - c) * self.q0 * (1 - self.q0)) / (1.0 - self.q0 - self.q1) ** 2

    def unbiased_mse(self, priors: ArrayLike | None = None, n: int | None = None) -> float:
        """Exact ``E[(S_tilde - S)^2]`` of the unbiased estimator when the inputs follow the priors.

        ``sum_i [P1_i q1 (1 - q1) + (1 - P1_i) q0 (1 - q0)] / (1 - q0 - q1)^2``.  LIP chapter (:eq:`eq-lip-unbiased`).
        """
        p = self._priors(priors, n)
        num = p * self.q1 * (1 - self.q1) + (1 - p) * self.q0 * (1 - self.q0)
        return float(np.sum(num) / (1.0 - self.q0 - self.q1) ** 2)

    def sample_errors(
        self, priors: ArrayLike | None = None, n: int | None = None, trials: int = 1, rng: RNGLike = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Errors ``S_hat - S`` of the MMSE and of the unbiased estimator over ``trials`` populations.

        Each trial draws every ``X_i`` from its prior, perturbs it with ``perturb`` and
        estimates; returns two arrays of length ``trials``.
        """
        p = self._priors(priors, n)
        trials = check_positive_int(trials, "trials", maximum=MAX_USERS)
        if trials * p.size > 50_000_000:
            raise ValueError(f"trials * users = {trials * p.size} exceeds 50,000,000")
        gen = as_generator(rng)
        x = (gen.random((trials, p.size)) < p[None, :]).astype(np.int64)
        y = np.asarray(self.perturb(x.reshape(-1), gen)).reshape(trials, p.size)
        s = x.sum(axis=1).astype(float)
        post = np.stack([self.posterior_mean(np.zeros(p.size, dtype=np.int64), p),
                         self.posterior_mean(np.ones(p.size, dtype=np.int64), p)])  # E[X_i | Y_i = y]
        mm = np.where(y == 1, post[1][None, :], post[0][None, :]).sum(axis=1)
        ub = (y.sum(axis=1) - p.size * self.q0) / (1.0 - self.q0 - self.q1)
        return mm - s, ub - s


def _lip_eps_of(ch: ExplicitChannel, p: float) -> float:
    """Tight LIP epsilon of a binary channel under the prior ``[1 - p, p]`` (accountant)."""
    return lip_epsilon(ch, np.array([1.0 - p, p]))


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
        return BinaryRR(self.q0, self.q1, prior=self.prior)


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
        return box & np.all(ok, axis=1)
    lam = (1 - p) * P[:, 0, :] + p * P[:, 1, :]  # P(Y = y)
    ok = (P <= hi * lam[:, None, :]) & (P >= lo * lam[:, None, :])
    return box & np.all(ok, axis=(1, 2))


def _info(pts: np.ndarray, p: float) -> np.ndarray:
    """``P1 P0 (1 - q0 - q1)^2 / (lambda_0 lambda_1)``: the MSE is ``P1 P0 (1 - info)``; maximised at the optimum."""
    q0, q1 = pts[:, 0], pts[:, 1]
    lam0 = (1 - p) * (1 - q0) + p * q1
    den = lam0 * (1 - lam0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, p * (1 - p) * (1 - q0 - q1) ** 2 / np.where(den > 0, den, 1.0), 0.0)


def _solve_binary(prior: Any, epsilon: Any, notion: str, symmetric: bool) -> BinaryOptimum:
    p = _binary_prior(prior)
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
    res = check_lip(ch, [1 - p, p], eps) if notion == "lip" else check_ldp(ch, eps)
    if not res.satisfied:  # pragma: no cover - guarded by the ratio-form filter
        raise SolverError(f"optimal {notion} vertex ({q0!r}, {q1!r}) violates {notion} by {-res.slack!r}")
    # active constraints: those binding up to a relative 1e-9 of their terms
    q = np.array([q0, q1])
    scale = np.abs(h) + np.abs(G) @ np.abs(q)
    active = tuple(names[k] for k in np.flatnonzero(h - G @ q <= 1e-9 * np.maximum(scale, 1e-300)))
    return BinaryOptimum(notion, symmetric, p, eps, q0, q1, float(_mse(q0, q1, p)), tuple(active), tuple(alternatives))


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


# ============================================================================ the paper's closed forms
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
        The true per-user MSE of the printed point (:func:`per_user_mse`).
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
        lip = check_lip(ch, [1 - p, p], eps)
        ok, achieved = lip.satisfied, lip.lip_epsilon
    else:
        ldp = check_ldp(ch, eps)
        ok, achieved = ldp.satisfied, ldp.ldp_epsilon
    return PaperClosedForm(claim, p, eps, q0, q1, printed, float(_mse(q0, q1, p)), bool(ok), float(achieved))


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
    >>> from ldpkit.lip import paper_theorem2
    >>> cf = paper_theorem2(0.01, 1.0)
    >>> cf.feasible, round(cf.achieved_epsilon, 3)
    (False, 4.152)
    """
    p = _binary_prior(prior)
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

    Derived from the vertex enumeration of :func:`optimal_lip` (the tests check it against it over
    priors 0.001..0.999).  LIP chapter (:prf:ref:`thm-lip-opt`).

    Examples
    --------
    >>> from ldpkit.lip import corrected_theorem2, optimal_lip
    >>> cf, opt = corrected_theorem2(0.01, 1.0), optimal_lip(0.01, 1.0)
    >>> cf.feasible, abs(cf.mse_printed - opt.mse) < 1e-15, abs(cf.q0 - opt.q0) < 1e-12
    (True, True, True)
    """
    p = _binary_prior(prior)
    eps = check_epsilon(epsilon)
    e, ie = math.exp(eps), math.exp(-eps)
    c = 1.0 / (1.0 + e)
    if p < c:
        q0, q1 = (1 - p * e) / ((1 - p) * (1 + e)), c
        mse = p * (1 - p) - p * p * (e - 1) ** 2 * ie
    elif p > 1 - c:
        q0, q1 = c, (1 - (1 - p) * e) / (p * (1 + e))
        mse = p * (1 - p) - (1 - p) ** 2 * (e - 1) ** 2 * ie
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
    p = _binary_prior(prior)
    eps = check_epsilon(epsilon)
    e = math.exp(eps)
    q = 1.0 / (e + 1.0)
    printed = p * (1 - p) - (p * (1 - p) * (1 - e)) ** 2 / ((1 - p + p * e) * (e - p * e + p))
    return _closed_form("Proposition 3", p, eps, q, q, printed, "ldp")


def paper_proposition4(prior: float, epsilon: float) -> PaperClosedForm:
    """Proposition 4 (symmetric model) as printed: ``q = (1 - P1)/(e^eps - 2 P1 + 1)`` for ``P1 <= 1/2``,
    ``q = P1/(e^eps + 2 P1 - 1)`` otherwise (the ``q <= 1/2`` branch), and the printed eq. (23).

    LIP chapter (:prf:ref:`prop-lip-sym`).
    """
    p = _binary_prior(prior)
    eps = check_epsilon(epsilon)
    e = math.exp(eps)
    q = (1 - p) / (e - 2 * p + 1) if p <= 0.5 else p / (e + 2 * p - 1)
    printed = p * (1 - p) - p * (1 - p) * (2 * e - e * p - 2 * p + 1) ** 2 / (e * e - 2 * e * p + e)
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
    >>> from ldpkit.lip import compare_with_paper
    >>> rows = compare_with_paper([0.01, 0.5], [1.0])
    >>> [(r["claim"], r["prior"], r["feasible"]) for r in rows if r["claim"] == "Theorem 2"]
    [('Theorem 2', 0.01, False), ('Theorem 2', 0.5, True)]
    """
    ps = check_probabilities(priors, "priors").reshape(-1)
    es = np.asarray(epsilons, dtype=float).reshape(-1)
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


# ============================================================================ k-ary LIP
def _objective_name(objective: Any) -> str:
    if objective not in OBJECTIVES:
        if not isinstance(objective, str):
            raise ArgumentTypeError(f"objective must be 'mse' or 'map', got {describe(objective)}")
        raise ValueError(f"objective must be 'mse' or 'map', got {describe(objective)}")
    return str(objective)


def _gain(R: np.ndarray, prior: np.ndarray, objective: str) -> np.ndarray:
    """Per unit of ``P(y)``: ``sum_x P(x|y)^2`` ("mse") or ``max_x P(x|y)`` ("map"), for ratio rows ``R``."""
    post = R * prior[None, :]
    return np.sum(post**2, axis=1) if objective == "mse" else np.max(post, axis=1)


def bayes_risk(channel: Any, prior: ArrayLike, objective: str = "mse") -> float:
    """Bayes risk of the posterior-based estimate of the input, for any finite channel.

    ``"mse"``: ``E||e_X - E[e_X | Y]||^2 = 1 - E[sum_x P(x|Y)^2]``, the MSE of one user's posterior-mean
    contribution to the histogram (summed over items), so ``n`` users' histogram MSE is ``n`` times
    this; for ``k = 2`` it is twice :func:`per_user_mse`.  ``"map"``: the error probability
    ``1 - E[max_x P(x|Y)]`` of the MAP guess.  Both are concave in the channel.  LIP chapter
    (:prf:ref:`thm-lip-kary-lp`).

    Examples
    --------
    >>> from ldpkit.lip import bayes_risk
    >>> round(bayes_risk([[0.75, 0.25], [0.25, 0.75]], [0.5, 0.5]), 4)    # 2 * 0.1875
    0.375
    """
    obj = _objective_name(objective)
    ch = channel if isinstance(channel, ExplicitChannel) else None
    if ch is None:
        from .accountant import as_channel, enumerate_channel

        try:
            c = as_channel(channel)
        except ValueError:
            c = ExplicitChannel(check_probabilities(channel, "channel"))
        ch = enumerate_channel(c, "Bayes risk")
    m = ch.matrix
    pi = check_distribution(prior, m.shape[0])
    py = pi @ m
    used = py > 0
    R = (m[:, used] / py[used][None, :]).T
    return float(1.0 - np.sum(py[used] * _gain(R, pi, obj)))


def _lip_ratio_vertices(pi: np.ndarray, eps: float) -> np.ndarray:
    """Vertices of ``{r in [e^-eps, e^eps]^k : pi . r = 1}``: ``k - 1`` coordinates at a bound, one solved for."""
    k = pi.size
    lo, hi = math.exp(-eps), math.exp(eps)
    pats = np.array(list(itertools.product((lo, hi), repeat=k - 1)))
    out = []
    for j in range(k):
        others = np.delete(np.arange(k), j)
        rj = (1.0 - pats @ pi[others]) / pi[j]
        ok = (rj >= lo * (1 - 1e-12)) & (rj <= hi * (1 + 1e-12))
        V = np.empty((int(ok.sum()), k))
        V[:, others] = pats[ok]
        V[:, j] = np.clip(rj[ok], lo, hi)
        out.append(V)
    V = np.unique(np.round(np.concatenate(out), 13), axis=0)
    return V


def _ldp_ratio_vertices(pi: np.ndarray, eps: float) -> np.ndarray:
    """Extreme rays of the eps-LDP column cone (entries in ``{1, e^eps}``), normalised to ``pi . r = 1``."""
    k = pi.size
    e = math.exp(eps)
    pats = np.array(list(itertools.product((1.0, e), repeat=k)))[:-1]  # drop all-e^eps (same ray as all-ones)
    return pats / (pats @ pi)[:, None]


@dataclass(frozen=True, eq=False)
class KaryOptimum:
    """An optimal k-ary channel under eps-LIP (or eps-LDP) for one prior, with its certificate.

    Attributes
    ----------
    notion
        ``"lip"`` or ``"ldp"``.
    prior, epsilon, objective
        The problem.
    channel
        The optimal channel, ``k`` inputs by at most ``k`` outputs (only outputs that are used).
    risk
        Its Bayes risk (:func:`bayes_risk`).
    lower_bound
        The dual bound: every eps-LIP (eps-LDP) channel with *any* number of outputs has risk at
        least this.  ``risk - lower_bound`` is the certified optimality gap.
    certificate
        ``duality_gap``, ``dual_infeasibility`` (largest violation of the dual constraints over
        every candidate vertex), ``n_vertices`` and, when a local search ran, ``local_search_best``
        (best risk of the multi-start SLSQP on the full ``k x k`` channel) and ``local_search_gap``.
    """

    notion: str
    prior: np.ndarray
    epsilon: float
    objective: str
    channel: ExplicitChannel
    risk: float
    lower_bound: float
    certificate: dict[str, Any] = field(compare=False)

    @property
    def full_rank(self) -> bool:
        """Whether the channel has ``k`` outputs of rank ``k`` (needed by the unbiased estimator)."""
        m = self.channel.matrix
        return m.shape[1] == m.shape[0] and int(np.linalg.matrix_rank(m)) == m.shape[0]

    def guarantees(self) -> list[Guarantee]:
        """eps-LIP under the prior and the channel's tight LDP epsilon (``notion="lip"``), or eps-LDP."""
        if self.notion == "lip":
            out = [Guarantee("lip", prior=self.prior, epsilon=self.epsilon)]
            ldp = ldp_epsilon(self.channel)
            return out + [Guarantee("ldp", epsilon=ldp)] if math.isfinite(ldp) and ldp > 0 else out
        return [Guarantee("ldp", epsilon=self.epsilon)]

    def oracle(self) -> ChannelOracle:
        """A :class:`~ldpkit.channel_oracle.ChannelOracle` on the optimal channel (unbiased estimation,
        exact covariance, aggregate simulation, EM), declaring :meth:`guarantees`.

        Raises ``ValueError`` when the optimum uses fewer than ``k`` outputs (no unbiased estimator
        exists; the posterior mean :meth:`posterior_mean_counts` still does).
        """
        if not self.full_rank:
            m = self.channel.matrix
            raise ValueError(
                f"the optimal channel has {m.shape[1]} outputs of rank {int(np.linalg.matrix_rank(m))} "
                f"< k={m.shape[0]}: "
                "no unbiased estimator of the counts exists; use posterior_mean_counts"
            )
        return ChannelOracle(self.channel, guarantees=self.guarantees())

    def posterior_mean_counts(self, output_counts: ArrayLike) -> np.ndarray:
        """``sum_users E[e_X | Y]`` from the output counts: the estimate whose MSE is ``n * risk`` ("mse").

        LIP chapter (:prf:ref:`thm-lip-kary-lp`).
        """
        from ._validation import check_counts

        m = self.channel.matrix
        y = check_counts(output_counts, m.shape[1], "output counts")
        py = self.prior @ m
        post = (self.prior[:, None] * m) / np.where(py > 0, py, 1.0)[None, :]
        return post @ y.astype(float)


def _check_kary(prior: Any, epsilon: Any) -> tuple[np.ndarray, float]:
    pi = check_distribution(prior)
    if pi.size < 2 or pi.size > MAX_KARY_K:
        raise ValueError(f"prior must have between 2 and {MAX_KARY_K} entries, got {pi.size}")
    if np.any(pi <= 0):
        raise ValueError(f"prior must have full support (every entry > 0), got {describe(float(pi.min()))}")
    eps = check_epsilon(epsilon, high=MAX_KARY_EPS, high_why="the linear programme over ratio vectors in "
                        "[e^-eps, e^eps] loses double-precision accuracy")
    return pi, eps


def _kary_lp(pi: np.ndarray, eps: float, objective: str, notion: str, local_starts: int, rng: RNGLike) -> KaryOptimum:
    from scipy.optimize import linprog

    k = pi.size
    V = _lip_ratio_vertices(pi, eps) if notion == "lip" else _ldp_ratio_vertices(pi, eps)
    g = _gain(V, pi, objective)
    # max g . w  s.t.  sum_j w_j V_j = 1 (each row of the channel sums to one), w >= 0
    res = linprog(-g, A_eq=V.T, b_eq=np.ones(k), bounds=(0, None), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:  # pragma: no cover - the LP is feasible (uniform channel) and bounded
        raise SolverError(f"k-ary {notion} LP failed: {res.message}")
    w = np.asarray(res.x)
    dual = -np.asarray(res.eqlin.marginals)  # for the max problem: g_j <= V_j . dual
    upper = float(dual.sum())
    dual_infeas = float(max(0.0, np.max(g - V @ dual)))
    support = np.flatnonzero(w > 1e-12 * max(1.0, float(w.max())))
    Vs = V[support]
    # re-solve the equalities on the support exactly (least squares: the support is a basis)
    ws, *_ = np.linalg.lstsq(Vs.T, np.ones(k), rcond=None)
    if np.any(ws <= 0):  # pragma: no cover - a basis of a feasible LP has positive weights
        ws = w[support]
    # outputs in the order of the input each favours most (then by how much): GRR-like layout
    order = np.lexsort((-Vs.max(axis=1), np.argmax(Vs * pi[None, :], axis=1)))
    Vs, ws, support = Vs[order], ws[order], support[order]
    Q = (Vs * ws[:, None]).T  # Q[x, j] = w_j r_j(x)
    Q = Q / Q.sum(axis=1, keepdims=True)
    ch = ExplicitChannel(Q)
    risk = bayes_risk(ch, pi, objective)
    lower = 1.0 - upper - dual_infeas * 1.0
    res_check = check_lip(ch, pi, eps) if notion == "lip" else check_ldp(ch, eps)
    if not res_check.satisfied:
        raise SolverError(f"k-ary {notion} optimum violates {notion} by {-res_check.slack!r}")
    cert: dict[str, Any] = {
        "duality_gap": float(abs((1.0 - float(g @ w)) - (1.0 - upper))),
        "dual_infeasibility": dual_infeas,
        "n_vertices": int(V.shape[0]),
        "n_outputs": int(support.size),
    }
    if local_starts:
        best = _local_search(pi, eps, objective, notion, local_starts, rng)
        cert["local_search_best"] = best
        cert["local_search_gap"] = best - risk
        if best < lower - 1e-7:
            raise SolverError(f"local search found risk {best!r} below the certified bound {lower!r}")
    return KaryOptimum(notion, pi, eps, objective, ch, risk, lower, cert)


def _local_search(pi: np.ndarray, eps: float, objective: str, notion: str, starts: int, rng: RNGLike) -> float:
    """Multi-start SLSQP on the full ``k x k`` channel (an independent method; local, so only an upper bound)."""
    from scipy.optimize import minimize

    k = pi.size
    e, ie = math.exp(eps), math.exp(-eps)
    gen = as_generator(rng)
    rows = []  # linear inequalities A vec(Q) <= 0
    for x in range(k):
        for y in range(k):
            if notion == "lip":
                a = np.zeros((k, k))
                a[:, y] -= e * pi
                a[x, y] += 1.0
                rows.append(a.ravel())
                b = np.zeros((k, k))
                b[:, y] += ie * pi
                b[x, y] -= 1.0
                rows.append(b.ravel())
            else:
                for x2 in range(k):
                    if x2 != x:
                        a = np.zeros((k, k))
                        a[x, y] = 1.0
                        a[x2, y] = -e
                        rows.append(a.ravel())
    A = np.array(rows)
    Aeq = np.kron(np.eye(k), np.ones(k))

    def risk(v: np.ndarray) -> float:
        Q = v.reshape(k, k)
        py = np.maximum(pi @ Q, 1e-300)
        joint = pi[:, None] * Q
        if objective == "mse":
            return float(1.0 - np.sum(joint**2 / py[None, :]))
        return float(1.0 - np.sum(joint.max(axis=0)))

    def grad(v: np.ndarray) -> np.ndarray:
        Q = v.reshape(k, k)
        py = np.maximum(pi @ Q, 1e-300)
        joint = pi[:, None] * Q
        if objective == "mse":
            s = np.sum(joint**2, axis=0) / py**2
            return (-(2 * pi[:, None] * joint / py[None, :]) + pi[:, None] * s[None, :]).ravel()
        G = np.zeros((k, k))
        G[np.argmax(joint, axis=0), np.arange(k)] = -pi[np.argmax(joint, axis=0)]
        return G.ravel()

    best = math.inf
    for _ in range(starts):
        t = gen.uniform(0.05, 0.95)
        Q0 = (1 - t) / k + t * gen.dirichlet(np.full(k, 0.5), size=k)
        with np.errstate(all="ignore"):
            out = minimize(risk, Q0.ravel(), jac=grad, method="SLSQP", bounds=[(0.0, 1.0)] * (k * k),
                           constraints=[{"type": "ineq", "fun": lambda v: -A @ v, "jac": lambda v: -A},
                                        {"type": "eq", "fun": lambda v: Aeq @ v - 1.0, "jac": lambda v: Aeq}],
                           options={"maxiter": 500, "ftol": 1e-14})
        v = np.clip(np.asarray(out.x), 0.0, 1.0)
        Q = v.reshape(k, k)
        Q = Q / Q.sum(axis=1, keepdims=True)
        ch = ExplicitChannel(Q)
        ok = check_lip(ch, pi, eps).satisfied if notion == "lip" else check_ldp(ch, eps).satisfied
        if ok:
            best = min(best, bayes_risk(ch, pi, objective))
    return best


def optimal_kary_lip(
    prior: ArrayLike, epsilon: float, objective: str = "mse", *, local_starts: int = 0, rng: RNGLike = 0
) -> KaryOptimum:
    """The eps-LIP channel over ``k`` inputs minimising the Bayes risk under ``prior``, exactly.

    **Objective** (:func:`bayes_risk`): ``"mse"`` minimises ``E||e_X - E[e_X|Y]||^2`` (per user, the
    MSE of the posterior-mean histogram estimate); ``"map"`` the MAP error probability.

    **Method.**  Write each output's column as ``P(y|x) = P(y) r_y(x)``: eps-LIP says exactly that
    ``r_y`` lies in ``R = {r in [e^-eps, e^eps]^k : pi . r = 1}`` (the second condition is
    ``P(y) = sum_x pi_x P(y|x)``), rows summing to one say ``sum_y P(y) r_y = 1``, and the utility is
    ``sum_y P(y) g(r_y)`` with ``g`` convex.  Splitting an output whose ``r_y`` is a convex
    combination of vertices of ``R`` into one output per vertex keeps eps-LIP and cannot increase the
    risk, so the optimum over *all* channels (any number of outputs) is the linear programme
    ``max sum_j w_j g(v_j)`` s.t. ``sum_j w_j v_j = 1``, ``w >= 0`` over the vertices ``v_j`` of ``R``
    (``k - 1`` coordinates at ``e^+-eps``).  A basic solution uses at most ``k`` outputs.  The dual
    ``z`` with ``g(v_j) <= v_j . z`` for all ``j`` bounds the utility of every eps-LIP channel by
    ``sum(z)`` (``g`` convex, ``r_y`` in ``conv(V)``): that is the returned ``lower_bound`` on the risk.
    With ``local_starts > 0`` a multi-start SLSQP on the full ``k x k`` channel runs as an
    independent check (it must not beat the bound).  The result is checked by
    :func:`ldpkit.accountant.check_lip` before it is returned.  LIP chapter (:prf:ref:`thm-lip-kary-lp`).

    Examples
    --------
    >>> from ldpkit.lip import optimal_kary_lip
    >>> opt = optimal_kary_lip([0.5, 0.3, 0.2], 1.0)
    >>> round(opt.risk, 4), opt.risk - opt.lower_bound < 1e-9
    (0.4132, True)
    >>> opt.oracle().guarantees()[0].notion
    'lip'
    """
    pi, eps = _check_kary(prior, epsilon)
    obj = _objective_name(objective)
    starts = check_positive_int(local_starts, "local_starts", minimum=0, maximum=1000)
    return _kary_lp(pi, eps, obj, "lip", starts, rng)


def optimal_kary_ldp(
    prior: ArrayLike, epsilon: float, objective: str = "mse", *, local_starts: int = 0, rng: RNGLike = 0
) -> KaryOptimum:
    """The eps-LDP channel minimising the same Bayes risk (the LDP baseline of :func:`optimal_kary_lip`).

    Same linear programme with the extreme rays of the eps-LDP column cone (entries in
    ``{1, e^eps}``, Kairouz et al.'s staircase patterns) normalised to ``pi . r = 1``.  LIP chapter
    (:prf:ref:`thm-lip-kary-lp`).
    """
    pi, eps = _check_kary(prior, epsilon)
    obj = _objective_name(objective)
    starts = check_positive_int(local_starts, "local_starts", minimum=0, maximum=1000)
    return _kary_lp(pi, eps, obj, "ldp", starts, rng)


def _grr_channel(k: int, eps: float) -> ExplicitChannel:
    tail = math.exp(-eps)
    p = 1.0 / (1.0 + (k - 1) * tail)
    m = np.full((k, k), tail * p)
    np.fill_diagonal(m, p)
    return ExplicitChannel(m)


def _oue_channel(k: int, eps: float) -> UnaryChannel:
    return UnaryChannel(np.full(k, 0.5), np.full(k, 1.0 / (math.exp(eps) + 1.0)))


def _calibrate_to_lip(build: Any, pi: np.ndarray, eps: float) -> float:
    """Largest LDP budget ``e'`` in ``[eps, 2 eps]`` whose channel is eps-LIP under ``pi`` (bisection).

    eps-LDP implies eps-LIP and eps-LIP implies 2eps-LDP (Theorem 1), which brackets ``e'``.
    """
    lo, hi = eps, 2 * eps
    if lip_epsilon(build(hi), pi) <= eps:
        return hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if lip_epsilon(build(mid), pi) <= eps:
            lo = mid
        else:
            hi = mid
    return lo


def compare_kary(prior: ArrayLike, epsilon: float, objective: str = "mse") -> dict[str, dict[str, float]]:
    """Bayes risk of the LIP-optimal channel against GRR, OUE and the LDP-optimal channel, at one prior and eps.

    Rows: ``"LIP-optimal"``, ``"LDP-optimal"``, ``"GRR"`` and ``"OUE"`` at eps-LDP (hence eps-LIP),
    and ``"GRR (LIP-calibrated)"``, ``"OUE (LIP-calibrated)"``: the largest LDP budget at which they
    are still eps-LIP under the prior.  Each row gives ``risk``, the channel's tight
    ``lip_epsilon`` under the prior and its ``ldp_epsilon``.  LIP chapter (:prf:ref:`thm-lip-kary-lp`).

    Examples
    --------
    >>> from ldpkit.lip import compare_kary
    >>> table = compare_kary([0.7, 0.2, 0.1], 1.0)
    >>> min(table, key=lambda name: table[name]["risk"])
    'LIP-optimal'
    """
    pi, eps = _check_kary(prior, epsilon)
    obj = _objective_name(objective)
    k = pi.size
    chans: dict[str, Any] = {
        "LIP-optimal": _kary_lp(pi, eps, obj, "lip", 0, None).channel,
        "LDP-optimal": _kary_lp(pi, eps, obj, "ldp", 0, None).channel,
        "GRR": _grr_channel(k, eps),
        "OUE": _oue_channel(k, eps),
        "GRR (LIP-calibrated)": _grr_channel(k, _calibrate_to_lip(lambda e: _grr_channel(k, e), pi, eps)),
        "OUE (LIP-calibrated)": _oue_channel(k, _calibrate_to_lip(lambda e: _oue_channel(k, e), pi, eps)),
    }
    out = {}
    for name, ch in chans.items():
        out[name] = {
            "risk": bayes_risk(ch if isinstance(ch, ExplicitChannel) else ch.to_explicit(), pi, obj),
            "lip_epsilon": lip_epsilon(ch, pi),
            "ldp_epsilon": ldp_epsilon(ch),
        }
    return out
