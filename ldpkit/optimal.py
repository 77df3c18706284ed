"""The best possible accuracy under a promise: a lower bound on the total variance of unbiased count estimates.

The synthesis chapter ranks the kit's families under each promise; this module says how far the
best of them is from the best any mechanism could do.  For a promise (a
:class:`~ldpkit.contracts.Contract`) and true counts ``c`` of ``n`` users,
:func:`best_possible` returns a number ``B`` such that

    ``sum_i Var[c_hat_i] >= B``

for **every channel with finitely many outputs that keeps the promise** (any number of outputs,
any structure) and **every estimator that is a sum over users of a function of each user's
report and is unbiased for every count vector** (every estimator of the kit and of the peer
libraries before clipping is of this form).  Field chapter, :ref:`sec-field-bound`.

How.  For a channel ``Q`` with columns ``q_y`` (``q_y[x] = P(y | x)``) and ``f = c / n``, the
smallest total variance of such an estimator is ``n (tr F^{-1} - 1)`` with
``F = sum_y q_y q_y^T / (f . q_y)`` (a weighted least-norm problem,
:prf:ref:`thm-field-bound-linear`).  For the promises whose constraints on a column are a
polyhedral cone (every pairwise notion: LDP, MinID-LDP, ID-LDP, context-aware LDP; ULDP; LIP
under its prior; the items-as-outputs relaxation of IPLDP), splitting a column into extreme rays
of the cone keeps the promise and never decreases ``F``, so the optimum uses one output per
extreme ray, with a weight: ``F`` is then linear in the weights and the minimum of
``tr F^{-1}`` is a convex problem (:prf:ref:`thm-field-bound-rays`).  It is solved with cvxpy,
and the value returned is a **certified** lower bound from a dual-feasible point (a linear
programme in the dual variables given the primal solution), never the solver's objective.

Under LDP at uniform counts the bound has a closed form: it is SS's total variance with the best
subset size (:prf:ref:`thm-field-bound-ldp`); Ye and Barg (:cite:`ye2018optimal`,
:cite:`ye2017asymptotically`) prove the same scheme order-optimal, and asymptotically optimal,
for the minimax risk of any estimator.  FLDP (as reconstructed) bounds nothing: a channel that
keeps ``(alpha, eps)``-FLDP for ``alpha < 1`` can make the variance as small as wished
(:prf:ref:`thm-field-bound-fldp`), so the bound is 0.  MIP and notions registered later have no
bound here.

Examples
--------
>>> import numpy as np
>>> from ldpkit import contracts
>>> from ldpkit.optimal import best_possible
>>> from ldpkit.subset import subset_total_variance
>>> b = best_possible(contracts.ldp(6, 1.0))             # uniform counts, one user per item
>>> round(b.per_user(), 6), round(subset_total_variance(6, 2, 1.0), 6)
(14.875275, 14.875275)
>>> b = best_possible(contracts.minidldp([1.0, 1.0, 2.0, 2.0, 2.0]))
>>> round(b.per_user(), 4), b.method[:41]
(8.1713, 'convex programme over the 24 extreme rays')
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional, TYPE_CHECKING, Union, cast

import numpy as np
from numpy.typing import ArrayLike

from ._solvers import single_threaded
from ._validation import ArgumentTypeError, describe, real_array
from .contracts import Contract

if TYPE_CHECKING:  # pragma: no cover
    from .family import Family

__all__ = [
    "MAX_RAYS",
    "BestPossible",
    "best_possible",
    "cone_rays",
    "ldp_uniform_bound",
    "ratios_to_best",
    "ray_bound",
]

#: most extreme rays :func:`ray_bound` takes (the convex programme has one weight per ray)
MAX_RAYS = 1 << 15

#: most candidate points the vertex enumeration of a pairwise cone examines
MAX_CANDIDATES = 2_000_000

#: what every bound of :func:`best_possible` bounds (the class of channels and estimators)
CLASS = ("the total variance sum_i Var[c_hat_i] at these counts of every estimator that is a sum over users "
         "of a function of the user's report and is unbiased for every count vector, over every channel with "
         "finitely many outputs that keeps the promise")


@dataclass(frozen=True)
class BestPossible:
    """A lower bound on the total variance of unbiased count estimates under a promise (see the module docstring).

    Attributes
    ----------
    value
        The bound on ``sum_i Var[c_hat_i]`` at the counts (counts scale); ``nan`` when no bound is known.
    bounds
        What it bounds: the class of channels and estimators, in words.
    method
        How it was computed.
    attained
        The total variance of the best channel found with its best linear unbiased estimator
        (``>= value``; their gap is the solver's accuracy), or ``nan``.
    n
        The number of users of the counts.
    weights
        The optimal channel found: ``(ray, weight)`` pairs of its outputs with weight above
        ``1e-9`` of the largest (empty when none was computed).
    """

    value: float
    bounds: str
    method: str
    attained: float = math.nan
    n: float = 1.0
    weights: tuple[tuple[tuple[float, ...], float], ...] = field(default=(), repr=False)

    @property
    def known(self) -> bool:
        """Whether a bound was computed (``value`` is not ``nan``)."""
        return not math.isnan(self.value)

    def per_user(self) -> float:
        """``value / n``: the bound for one user (the bound is linear in the counts at a fixed distribution)."""
        return self.value / self.n

    def ratio(self, total_variance: float) -> float:
        """``total_variance / value`` (``inf`` for a bound of 0, ``nan`` when none is known)."""
        if not self.known:
            return math.nan
        return math.inf if self.value <= 0 else float(total_variance) / self.value


# ---------------------------------------------------------------------------- the convex programme
def _gram(rays: np.ndarray, f: np.ndarray) -> np.ndarray:
    """``G_j = r_j r_j^T / (f . r_j)`` flattened: shape ``(d * d, J)``."""
    w = rays @ f
    outer = rays[:, :, None] * rays[:, None, :] / w[:, None, None]
    return cast("np.ndarray", outer.reshape(rays.shape[0], -1).T)


@single_threaded
def ray_bound(rays: ArrayLike, f: ArrayLike) -> tuple[float, float, np.ndarray]:
    """``min tr(F(mu)^{-1})`` over ``mu >= 0`` with ``sum_j mu_j r_j = 1``: ``(certified lower bound, value at mu, mu)``.

    ``F(mu) = sum_j mu_j r_j r_j^T / (f . r_j)``.  The lower bound is ``2 tr(W^{1/2}) - 1 . lam`` at
    ``W = F(mu)^{-2}`` and the smallest ``lam`` with ``r_j . lam >= r_j^T W r_j / (f . r_j)`` for every
    ray (a linear programme), which bounds the minimum from below whatever ``mu`` the solver
    returned (:prf:ref:`thm-field-bound-rays`).

    Examples
    --------
    >>> import itertools, math
    >>> import numpy as np
    >>> from ldpkit.optimal import ray_bound
    >>> rays = np.array([r for r in itertools.product([1.0, math.e], repeat=3) if len(set(r)) == 2])
    >>> low, value, mu = ray_bound(rays, np.full(3, 1 / 3))
    >>> round(low - 1, 6), round(value - 1, 6)    # per user; GRR at eps = 1 on three items: 4.360088
    (4.360088, 4.360088)
    """
    import cvxpy as cp
    from scipy.optimize import linprog

    from ._solvers import cvx_solve

    R = real_array(rays, "rays")
    fv = real_array(f, "f")
    if R.ndim != 2 or fv.shape != (R.shape[1],):
        raise ValueError(f"rays must be (J, d) and f of length d, got shapes {R.shape} and {fv.shape}")
    if R.shape[0] > MAX_RAYS:
        raise ValueError(f"{R.shape[0]} rays exceed MAX_RAYS={MAX_RAYS}")
    if np.any(R < 0) or np.any(R.sum(axis=1) <= 0) or np.any(fv <= 0):
        raise ValueError("rays must be non-negative and non-zero, and f positive")
    d = R.shape[1]
    R = R / R.max(axis=1, keepdims=True)  # each ray up to scale: the largest entry 1
    gram = _gram(R, fv)
    mu = cp.Variable(R.shape[0], nonneg=True)
    F = cp.reshape(gram @ mu, (d, d), order="F")
    F = (F + F.T) / 2
    scale = cp.Parameter(nonneg=True, value=1.0)
    problem = cp.Problem(cp.Minimize(scale * cp.matrix_frac(np.eye(d), F)), [R.T @ mu == 1])
    try:  # tight tolerances first: the certificate below, not the status, judges the result
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12,
                          tol_ktratio=1e-10, max_iter=500)
        solved = mu.value is not None
    except cp.error.SolverError:
        solved = False
    if not solved:
        cvx_solve(problem, scale, (1.0, 1e-2, 1e2), "the best-possible bound")
    m = np.maximum(np.asarray(mu.value, dtype=float).reshape(-1), 0.0)
    Fm = (gram @ m).reshape(d, d)
    Fm = (Fm + Fm.T) / 2
    inv = np.linalg.inv(Fm)
    value = float(np.trace(inv))
    W = inv @ inv
    W = (W + W.T) / 2
    need = np.einsum("jx,xy,jy->j", R, W, R) / (R @ fv)
    lp = linprog(np.ones(d), A_ub=-R, b_ub=-need, bounds=[(None, None)] * d, method="highs")
    if not lp.success:  # pragma: no cover - the LP is feasible and bounded for any positive rays
        raise ValueError(f"the dual certificate's linear programme failed: {lp.message}")
    lam = np.asarray(lp.x, dtype=float)
    short = float(np.max((need - R @ lam) / R.sum(axis=1)))
    if short > 0:  # make the dual point feasible exactly (the LP's tolerance)
        lam = lam + short
    eig = np.linalg.eigvalsh(W)
    lower = float(2 * np.sum(np.sqrt(np.maximum(eig, 0.0))) - lam.sum())
    return min(lower, value), value, m


# ---------------------------------------------------------------------------- extreme rays
def _closure(M: np.ndarray) -> np.ndarray:
    """Shortest paths (Floyd-Warshall): the tightest pairwise budgets the matrix implies."""
    out = np.array(M, dtype=float)
    np.fill_diagonal(out, 0.0)
    for k in range(out.shape[0]):
        out = np.minimum(out, out[:, [k]] + out[[k], :])
    return out


def _lattice_step(values: np.ndarray) -> Optional[float]:
    """The largest ``h`` with every value an integer multiple of it (rationals of denominator up to 64), else ``None``."""
    fracs = []
    for v in values:
        fr = Fraction(float(v)).limit_denominator(64)
        if abs(float(fr) - float(v)) > 1e-12 * max(1.0, abs(float(v))):
            return None
        fracs.append(fr)
    num = 0
    den = 1
    for fr in fracs:
        den = den * fr.denominator // math.gcd(den, fr.denominator)
    for fr in fracs:
        num = math.gcd(num, int(fr * den))
    return num / den if num else None


def _exchangeable(M: np.ndarray) -> list[list[int]]:
    """Classes of items whose swap leaves the budget matrix unchanged (swaps generate the symmetry)."""
    d = M.shape[0]
    parent = list(range(d))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for x in range(d):
        for y in range(x + 1, d):
            if root(x) == root(y):
                continue
            p = np.arange(d)
            p[[x, y]] = [y, x]
            if np.array_equal(M[np.ix_(p, p)], M):
                parent[root(y)] = root(x)
    groups: dict[int, list[int]] = {}
    for i in range(d):
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


def _multiset_permutations(values: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every distinct ordering of a multiset (ascending input)."""
    counts: dict[int, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    keys = sorted(counts)
    n = len(values)
    out: list[int] = []

    def rec() -> Iterator[tuple[int, ...]]:
        if len(out) == n:
            yield tuple(out)
            return
        for key in keys:
            if counts[key]:
                counts[key] -= 1
                out.append(key)
                yield from rec()
                out.pop()
                counts[key] += 1

    return rec()


def pairwise_rays(matrix: ArrayLike) -> np.ndarray:
    """Extreme rays of ``{v >= 0 : v_x <= e^{M[x, x']} v_x'}``: ``exp(u)`` at the vertices ``u`` of the polytrope.

    In ``u = log v`` the cone is the polyhedron ``u_x - u_x' <= M[x, x']`` modulo a common shift;
    a point is a vertex exactly when the graph of its tight constraints connects every item.
    With the matrix's shortest-path closure ``M*``, vertices normalised to ``min u = 0`` lie in
    ``[0, max M*]`` on the lattice of the budgets' common step; one representative per orbit of
    the matrix's symmetry (items whose swap leaves ``M`` unchanged) is tested, then expanded.
    Raises ``ValueError`` when a budget is infinite, the budgets have no common step with a
    denominator up to 64, or the candidates exceed :data:`MAX_CANDIDATES`.

    Examples
    --------
    >>> from ldpkit.optimal import pairwise_rays
    >>> pairwise_rays([[0, 1.0, 1.0], [1.0, 0, 1.0], [1.0, 1.0, 0]]).shape   # LDP on 3 items: 2**3 - 2
    (6, 3)
    """
    M = real_array(matrix, "matrix").copy()
    if M.ndim != 2 or M.shape[0] != M.shape[1] or M.shape[0] < 2:
        raise ValueError(f"matrix must be a square matrix of at least two items, got shape {M.shape}")
    d = M.shape[0]
    np.fill_diagonal(M, 0.0)
    off = ~np.eye(d, dtype=bool)
    if not np.all(np.isfinite(M[off])) or np.any(M[off] <= 0):
        raise ValueError("every pairwise budget must be finite and positive for the bound's vertex enumeration")
    Mc = _closure(M)
    h = _lattice_step(Mc[off])
    if h is None:
        raise ValueError("the pairwise budgets have no common step (rationals of denominator up to 64)")
    Z = np.rint(Mc / h).astype(np.int64)
    top = int(Z[off].max())
    groups = _exchangeable(Mc)
    n_candidates = 1
    for g in groups:
        n_candidates *= math.comb(top + len(g), len(g))
        if n_candidates > MAX_CANDIDATES:
            raise ValueError(f"more than MAX_CANDIDATES={MAX_CANDIDATES} candidate vertices")
    order = [i for g in groups for i in g]
    per_group = [np.array(list(itertools.combinations_with_replacement(range(top + 1), len(g))), dtype=np.int64)
                 for g in groups]
    grids = np.meshgrid(*[np.arange(len(t)) for t in per_group], indexing="ij")
    pts = np.concatenate([t[idx.reshape(-1)] for t, idx in zip(per_group, grids)], axis=1)  # columns in `order`
    Zo = Z[np.ix_(order, order)]
    pts = pts[pts.min(axis=1) == 0]
    diff = pts[:, :, None] - pts[:, None, :]
    ok = np.all(diff <= Zo[None, :, :], axis=(1, 2))
    pts, diff = pts[ok], diff[ok]
    tight = (diff == Zo[None]) | (np.swapaxes(diff, 1, 2) == Zo.T[None])
    reach = (tight | np.eye(d, dtype=bool)[None]).astype(np.float64)
    for _ in range(int(math.ceil(math.log2(d))) + 1):
        reach = np.minimum(1.0, reach @ reach)
    pts = pts[reach[:, 0, :].min(axis=1) > 0]
    rays = []
    bounds = np.cumsum([0] + [len(g) for g in groups])
    for p in pts:
        parts = [list(_multiset_permutations(sorted(p[a:b].tolist()))) for a, b in zip(bounds[:-1], bounds[1:])]
        for combo in itertools.product(*parts):
            u = np.empty(d)
            u[order] = np.concatenate([np.asarray(c, dtype=float) for c in combo]) * h
            rays.append(np.exp(u))
            if len(rays) > MAX_RAYS:
                raise ValueError(f"more than MAX_RAYS={MAX_RAYS} extreme rays")
    return np.array(rays)


def lip_rays(epsilon: float, prior: ArrayLike) -> np.ndarray:
    """Extreme rays of the LIP cone ``{v >= 0 : e^-eps pi.v <= v_x <= e^eps pi.v}``.

    Vertices of the box ``[e^-eps, e^eps]^d`` cut by ``pi . v = 1``: every coordinate at a bound
    but at most one.  ``d 2^(d-1)`` candidates (``d <= 16``).
    """
    pi = real_array(prior, "prior")
    d = pi.size
    if d > 16 or np.any(pi <= 0):
        raise ValueError("lip_rays needs a prior with full support on at most 16 items")
    lo, hi = math.exp(-epsilon), math.exp(epsilon)
    out = []
    corners = np.array(list(itertools.product((lo, hi), repeat=d - 1)))
    for j in range(d):
        others = np.delete(np.arange(d), j)
        vj = (1.0 - corners @ pi[others]) / pi[j]
        keep = (vj >= lo * (1 - 1e-12)) & (vj <= hi * (1 + 1e-12))
        v = np.empty((int(keep.sum()), d))
        v[:, others] = corners[keep]
        v[:, j] = np.clip(vj[keep], lo, hi)
        out.append(v)
    rays = np.concatenate(out)
    _, first = np.unique(np.round(np.log(rays) / epsilon, 9), axis=0, return_index=True)
    return rays[np.sort(first)]


def ldp_rays(d: int, epsilon: float) -> np.ndarray:
    """The ``2^d - 2`` extreme rays of the LDP cone: ``{1, e^eps}^d`` minus the constant vectors."""
    e = math.exp(epsilon)
    return np.array([r for r in itertools.product((1.0, e), repeat=d) if 1.0 in r and e in r])


def cone_rays(contract: Contract) -> tuple[np.ndarray, str]:
    """The extreme rays of the cone the promise restricts each output column to, with what the bound then bounds.

    Pairwise promises: ``pairwise_rays`` of the promise's context-aware matrix.  ULDP: the LDP
    rays and the unit vectors of the non-sensitive items (an invertible output).  IPLDP: its
    sensitive outputs' columns lie in the LDP cone of their budget and its non-sensitive outputs'
    in the unit vectors, so the rays of ULDP at the largest sensitive budget bound a class that
    contains every IPLDP channel (the bound is over that larger class).  LIP: ``lip_rays``.

    Raises ``ValueError`` for a promise no cone describes (FLDP, MIP, later notions).
    """
    name = contract.guarantee.notion
    p = contract.params
    d = contract.d
    matrix = contract.pairwise_matrix()
    if matrix is not None:
        return pairwise_rays(matrix), CLASS
    if name in ("uldp", "ipldp"):
        e = contract.budget_vector()
        eps = float(e[np.isfinite(e)].max())
        sens = np.zeros(d, dtype=bool)
        sens[np.asarray(contract.sensitive, dtype=np.int64)] = True
        if d > 15:
            raise ValueError("the LDP cone of more than 15 items has more than MAX_RAYS extreme rays")
        rays = np.concatenate([ldp_rays(d, eps), np.eye(d)[~sens]])
        what = CLASS
        if name == "ipldp":
            what = (CLASS.replace("that keeps the promise", "whose outputs are of two kinds: columns within the LDP "
                                  f"cone at the largest sensitive budget ({eps:g}) or produced by one non-sensitive "
                                  "item only (a class that holds every IPLDP channel, so the bound holds for IPLDP)"))
        return rays, what
    if name == "lip" and contract.prior is not None:
        return lip_rays(float(p["epsilon"]), contract.prior), CLASS
    raise ValueError(f"no cone describes a {contract.name} promise")


# ---------------------------------------------------------------------------- closed forms and witnesses
def ldp_uniform_bound(d: int, epsilon: float) -> float:
    """The bound under eps-LDP at uniform counts, per user: SS's total variance with the best subset size.

    At uniform counts ``F`` has the eigenvalue ``d`` on the constant vector and one eigenvalue
    ``A`` on its complement, ``A`` linear in the weights of the rays grouped by their number of
    high entries, so the optimum is one group: SS with that subset size
    (:prf:ref:`thm-field-bound-ldp`).

    Examples
    --------
    >>> from ldpkit.optimal import ldp_uniform_bound
    >>> round(ldp_uniform_bound(10, 1.0), 4)
    29.1041
    """
    from .subset import optimal_subset_size, subset_total_variance

    return subset_total_variance(d, optimal_subset_size(d, epsilon), epsilon)


def _fldp_witness(contract: Contract, n: float) -> BestPossible:
    """FLDP with ``alpha < 1``: every user reveals the item with probability ``1 - delta``; the bound is 0."""
    alpha = float(contract.params["alpha"])
    return BestPossible(
        0.0, CLASS,
        f"infimum, not attained: the channel that reports its input exactly with probability 1 - delta and "
        f"otherwise one of m = ceil(alpha / (1 - alpha)) = {math.ceil(alpha / (1 - alpha) - 1e-12)} outputs shared by "
        "every input (with equal probabilities) keeps (alpha, eps)-FLDP for every eps, and its unbiased estimator "
        "has total variance n delta / (1 - delta), which tends to 0 with delta (thm-field-bound-fldp)",
        n=n)


# ---------------------------------------------------------------------------- the entry point
def _counts(contract: Contract, counts: Optional[ArrayLike]) -> np.ndarray:
    if counts is None:
        return np.ones(contract.d)
    c = real_array(counts, "counts")
    if c.shape != (contract.d,):
        raise ValueError(f"counts must hold one count per item ({contract.d}), got shape {c.shape}")
    if not np.all(np.isfinite(c)) or np.any(c <= 0):
        raise ValueError("counts must be finite and positive (every item held: a zero count makes an output "
                         f"that reveals the item carry infinite information), got {describe(c)}")
    return c


def best_possible(contract: Contract, counts: Optional[ArrayLike] = None) -> BestPossible:
    """The smallest total variance of unbiased count estimates any mechanism keeping the promise can have at ``counts``.

    Parameters
    ----------
    contract
        The promise.
    counts
        True counts (real, positive; default one user per item).  The bound is ``n`` times a
        function of the distribution ``counts / n``.

    Returns
    -------
    BestPossible
        The bound (``value``, counts scale), what it bounds and how it was computed: exactly
        (certified) for the promises a cone describes (LDP, MinID-LDP, ID-LDP with a built-in
        rule, context-aware LDP, ULDP, LIP; IPLDP over a class containing it), 0 for FLDP with
        ``alpha < 1`` (an infimum), ``nan`` for the others.  Field chapter, :ref:`sec-field-bound`.
    """
    if not isinstance(contract, Contract):
        raise ArgumentTypeError(f"best_possible needs a Contract (ldpkit.contracts), got {describe(contract)}")
    c = _counts(contract, counts)
    n = float(c.sum())
    f = c / n
    name = contract.guarantee.notion
    if name == "fldp" and float(contract.params["alpha"]) < 1.0:
        return _fldp_witness(contract, n)
    if name == "fldp":  # alpha = 1: FLDP is LDP
        from .contracts import ldp

        contract = ldp(contract.d, float(contract.params["epsilon"]))
    uniform = bool(np.all(c == c[0]))
    if name == "ldp" and uniform:
        value = n * ldp_uniform_bound(contract.d, float(contract.params["epsilon"]))
        return BestPossible(value, CLASS, "closed form at uniform counts: SS with the best subset size is optimal "
                            "(thm-field-bound-ldp)", attained=value, n=n)
    try:
        rays, what = cone_rays(contract)
    except ValueError as err:
        return BestPossible(math.nan, CLASS, f"no bound known: {err}", n=n)
    lower, value, mu = ray_bound(rays, f)
    keep = mu > 1e-9 * mu.max()
    scaled = rays / rays.max(axis=1, keepdims=True)
    weights = tuple((tuple(float(v) for v in r), float(m)) for r, m in zip(scaled[keep], mu[keep]))
    method = (f"convex programme over the {rays.shape[0]} extreme rays of the promise's cone "
              "(thm-field-bound-rays), certified by a dual-feasible point")
    return BestPossible(n * (lower - 1.0), what, method, attained=n * (value - 1.0), n=n, weights=weights)


def ratios_to_best(contract: Contract, counts: Optional[ArrayLike] = None,
                   families: Optional[Sequence[Union[str, Family]]] = None) -> dict[str, float]:
    """Each family's calibrated total variance at ``counts`` over :func:`best_possible`'s bound (``nan``: no member).

    Families default to every family indexed by a budget (:func:`ldpkit.calibration.calibrate`).

    Examples
    --------
    >>> from ldpkit import contracts
    >>> from ldpkit.optimal import ratios_to_best
    >>> r = ratios_to_best(contracts.ldp(6, 1.0), families=["GRR", "SS"])
    >>> round(r["SS"], 6), r["GRR"] > 1
    (1.0, True)
    """
    from .calibration import calibrate
    from .family import families as all_families

    c = _counts(contract, counts)
    bound = best_possible(contract, c)
    chosen = list(all_families(budget=True)) if families is None else list(families)
    out: dict[str, float] = {}
    for fam in chosen:
        cal = calibrate(fam, contract)
        name = cal.family.name
        out[name] = bound.ratio(cal.total_variance(c)) if cal.satisfiable else math.nan
    return out
