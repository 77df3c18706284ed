"""k-ary LIP (beyond the paper): the eps-LIP channel minimising the Bayes risk under a prior, exactly.

:func:`optimal_kary_lip` solves a linear programme over the vertices of the set of admissible
posterior-to-prior ratio vectors and returns a :class:`KaryOptimum` with a dual certificate valid
for every LIP channel with any number of outputs; :func:`optimal_kary_ldp` is the LDP baseline,
:func:`bayes_risk` the objective for any finite channel, and :func:`compare_kary` compares the
optimum with GRR, OUE and the LDP optimum.  LIP chapter (:prf:ref:`thm-lip-kary-lp`); part of
:mod:`ldpkit.lip`, where every name is documented.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Optional, TYPE_CHECKING, cast

import numpy as np
from numpy.typing import ArrayLike

from .._rng import RNGLike, as_generator
from .._solvers import SolverError, single_threaded
from .._validation import (
    ArgumentTypeError,
    check_distribution,
    check_epsilon,
    check_positive_int,
    check_probabilities,
    describe,
)
from ..accountant import Guarantee, check_ldp, check_lip, ldp_epsilon, lip_epsilon
from ..channel_oracle import ChannelOracle
from ..channels import ExplicitChannel, UnaryChannel, rr_matrix
from ..family import Family, register_family

if TYPE_CHECKING:
    from ..contracts import Contract

__all__ = [
    "MAX_KARY_EPS",
    "MAX_KARY_K",
    "OBJECTIVES",
    "KaryOptimum",
    "bayes_risk",
    "compare_kary",
    "optimal_kary_ldp",
    "optimal_kary_lip",
]

#: the Bayes-risk objectives of :func:`optimal_kary_lip` and :func:`bayes_risk`
OBJECTIVES = ("mse", "map")

#: largest k of :func:`optimal_kary_lip` (``k 2^(k-1)`` candidate ratio vectors)
MAX_KARY_K = 12

#: the largest budget of the k-ary optimisers; beyond it the ratio vectors span more than :math:`e^{60}`
#: and the linear programme loses its accuracy in double precision
MAX_KARY_EPS = 30.0


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
    return cast("np.ndarray", np.sum(post**2, axis=1) if objective == "mse" else np.max(post, axis=1))


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
        from ..accountant import as_channel, enumerate_channel

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
        rj = (1.0 - (pats * pi[others]).sum(axis=1)) / pi[j]  # summed in numpy's fixed order, not by BLAS
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
    return cast("np.ndarray", pats / (pats @ pi)[:, None])


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
        """The budget the optimum was built for: eps-LIP under the prior (``notion="lip"``), or eps-LDP."""
        if self.notion == "lip":
            return [Guarantee("lip", prior=self.prior, epsilon=self.epsilon)]
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
        from .._validation import check_counts

        m = self.channel.matrix
        y = check_counts(output_counts, m.shape[1], "output counts")
        py = self.prior @ m
        post = (self.prior[:, None] * m) / np.where(py > 0, py, 1.0)[None, :]
        return cast("np.ndarray", post @ y.astype(float))


def _check_kary(prior: Any, epsilon: Any) -> tuple[np.ndarray, float]:
    pi = check_distribution(prior)
    if pi.size < 2 or pi.size > MAX_KARY_K:
        raise ValueError(f"prior must have between 2 and {MAX_KARY_K} entries, got {pi.size}")
    if np.any(pi <= 0):
        raise ValueError(f"prior must have full support (every entry > 0), got {describe(float(pi.min()))}")
    eps = check_epsilon(epsilon, high=MAX_KARY_EPS, high_why="the linear programme over ratio vectors in "
                        "[e^-eps, e^eps] loses double-precision accuracy")
    return pi, eps


def _tied_ranks(values: np.ndarray, rtol: float = 1e-9) -> np.ndarray:
    """Dense ranks of ``values`` in increasing order, values within ``rtol`` of the previous one sharing its rank.

    >>> _tied_ranks(np.array([3.0, 1.0, 1.0 + 1e-15, 2.0])).tolist()
    [2, 0, 0, 1]
    """
    order = np.argsort(values, kind="stable")
    v = values[order]
    new = np.abs(np.diff(v)) > rtol * np.maximum(1.0, np.abs(v[1:]))
    ranks = np.empty(values.size, dtype=np.int64)
    ranks[order] = np.concatenate([[0], np.cumsum(new)]) if values.size else []
    return ranks


#: seed of the fixed generic weights that choose one optimum of the k-ary LP when there are several
TIE_BREAK_SEED = 20240624
#: how many fixed generic weightings are tried for an optimum with ``k`` outputs of rank ``k``
TIE_BREAK_TRIES = 32


def _canonical_optimum(V: np.ndarray, g: np.ndarray, w: np.ndarray, dual: np.ndarray) -> np.ndarray:
    """One optimal solution of the k-ary LP chosen by a fixed rule, the same on every machine.

    At some priors and budgets the LP has many optimal solutions (channels of equal risk);
    which one a simplex solver returns then depends on the last bits of its input, so on the
    machine.  The optimal face is ``{w >= 0 : sum_j w_j V_j = 1, w_j = 0 where V_j . dual > g_j}``
    (complementary slackness with the dual optimum, whichever the solver returned).  On it this
    returns the minimiser of fixed generic weights (seeded by ``TIE_BREAK_SEED + i``, in the
    order of the vertices, which ``np.unique`` sorts), a single vertex: the first, over
    ``i < TIE_BREAK_TRIES``, with ``k`` outputs of rank ``k`` (an unbiased estimator needs them),
    else the one of ``i = 0``.  ``w`` itself when the face is that one point.
    """
    from scipy.optimize import linprog

    k = V.shape[1]
    reduced = V @ dual - g
    face = np.flatnonzero(reduced <= 1e-9 * max(1.0, float(np.max(np.abs(g)))))
    if face.size <= k and np.linalg.matrix_rank(V[face]) == face.size:
        return w  # the optimum is unique
    first = None
    for i in range(TIE_BREAK_TRIES):
        weights = np.asarray(as_generator(TIE_BREAK_SEED + i).uniform(1.0, 2.0, size=V.shape[0]))[face]
        res = linprog(weights, A_eq=V[face].T, b_eq=np.ones(k), bounds=(0, None), method="highs",
                      options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
        if res.status != 0:  # pragma: no cover - the face holds the LP's own optimum
            continue
        out = np.zeros_like(w)
        out[face] = np.asarray(res.x)
        support = np.flatnonzero(out > 1e-12 * max(1.0, float(out.max())))
        if support.size == k and np.linalg.matrix_rank(V[support]) == k:
            return out
        first = out if first is None else first
    return w if first is None else first


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
    w = _canonical_optimum(V, g, w, dual)
    support = np.flatnonzero(w > 1e-12 * max(1.0, float(w.max())))
    Vs = V[support]
    # re-solve the equalities on the support exactly (least squares: the support is a basis)
    ws, *_ = np.linalg.lstsq(Vs.T, np.ones(k), rcond=None)
    if np.any(ws <= 0):  # pragma: no cover - a basis of a feasible LP has positive weights
        ws = w[support]
    # outputs in the order of the input each favours most (then by how much): GRR-like layout; values
    # equal to a relative 1e-9 are tied (their last bits depend on the machine) and keep the vertex order
    joint = Vs * pi[None, :]
    favoured = np.argmax(joint >= joint.max(axis=1, keepdims=True) * (1 - 1e-9), axis=1)
    order = np.lexsort((_tied_ranks(-Vs.max(axis=1)), favoured))
    Vs, ws, support = Vs[order], ws[order], support[order]
    Q = (Vs * ws[:, None]).T  # Q[x, j] = w_j r_j(x)
    Q = Q / Q.sum(axis=1, keepdims=True)
    ch = ExplicitChannel(Q)
    risk = bayes_risk(ch, pi, objective)
    lower = 1.0 - upper - dual_infeas * 1.0
    res_check = check_lip(ch, eps, prior=pi) if notion == "lip" else check_ldp(ch, eps)
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
            return cast("np.ndarray", (-(2 * pi[:, None] * joint / py[None, :]) + pi[:, None] * s[None, :]).ravel())
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
        ok = check_lip(ch, eps, prior=pi).satisfied if notion == "lip" else check_ldp(ch, eps).satisfied
        if ok:
            best = min(best, bayes_risk(ch, pi, objective))
    return best


@single_threaded
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
    :func:`ldpkit.accountant.check_lip` before it is returned.  Where several channels are optimal
    (often: the LP is degenerate at small budgets and for the ``"map"`` objective), one is chosen
    by a fixed rule, and the outputs are ordered with ties resolved by the vertices' order, so
    the returned channel is the same on every machine.  LIP chapter (:prf:ref:`thm-lip-kary-lp`).

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


@single_threaded
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
    return ExplicitChannel(rr_matrix(eps, k))


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


# ============================================================================ the family
def _examples() -> tuple[ChannelOracle, ...]:
    return (optimal_kary_lip([0.5, 0.3, 0.2], 1.0).oracle(),)


def _at_budget(d: int, t: float, prior: Any = None) -> ChannelOracle:
    """The k-ary LIP optimum at ``t`` under ``prior`` (uniform if none)."""
    return optimal_kary_lip(np.full(d, 1.0 / d) if prior is None else prior, t).oracle()


def _optimiser(c: Contract) -> Optional[float]:
    """Under a LIP promise the optimum at the promise's budget is the family's own answer."""
    return float(c.params["epsilon"]) if c.guarantee.notion == "lip" else None


def _applies(c: Contract) -> Optional[str]:
    if c.d > MAX_KARY_K:
        return f"the k-ary LIP programme is solved for at most {MAX_KARY_K} items, the promise has {c.d}"
    return None


register_family(Family(
    "LIP-kary", "jiang2018lip", ChannelOracle, _examples, "optimal k-ary LIP channel under a prior",
    at_budget=_at_budget, parameter="LIP epsilon under the promise's prior (uniform if none)", context=("prior",),
    hi=30.0, optimiser=_optimiser, applies=_applies,
    audit="k-ary LIP optimum at eps under the prior (0.4, 0.3, 0.2, 0.1)", order=100))
