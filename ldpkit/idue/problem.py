"""The IDUE optimisation problem: budgets and pair constraints, objectives, the solution record.

Shared by the solvers (:mod:`ldpkit.idue.solvers`) and the mechanism
(:mod:`ldpkit.idue.mechanism`); ID-LDP chapter, :prf:ref:`def-idldp`, eqs. :eq:`eq-idue-variance`
and :eq:`eq-opt0`, and :prf:ref:`thm-opt0-gp`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

import numpy as np
from numpy.typing import ArrayLike

from .._solvers import SolverError, require_feasible
from .._validation import MAX_USERS, ArgumentTypeError, check_budget_vector, check_positive_int, describe, real_array
from ..accountant import PairRule, apply_pair_rule, resolve_pair_rule

__all__ = [
    "AGREEMENT_RTOL",
    "FEASIBILITY_RTOL",
    "IDUE_EPS_MAX",
    "IDUE_EPS_MIN",
    "MODELS",
    "Model",
    "SameLevelPairs",
    "IDUESolution",
    "IDUESolverError",
    "ab_from_log_ratios",
    "ab_from_uv",
    "check_level_budgets",
    "check_level_sizes",
    "check_pairs_flag",
    "constraint_mask",
    "log_ratio_matrix",
    "make_solution",
    "opt0_objective_uv",
    "pair_budget_matrix",
    "problem_setup",
    "uv_from_ab",
    "variance_terms",
    "verify_solution",
    "worst_case_mse",
]

#: the name of an optimisation model of Sec. V-D
Model = Literal["opt0", "opt1", "opt2"]

#: the optimisation models of Sec. V-D
MODELS: tuple[Model, ...] = get_args(Model)

#: which same-level pairs carry a constraint (every one, as in the paper, or only the real ones)
SameLevelPairs = Literal["paper", "needed"]

#: a returned solution may exceed a pair constraint by this relative factor at most
FEASIBILITY_RTOL = 1e-9

#: smallest level budget the IDUE solvers accept (see :func:`check_level_budgets`)
IDUE_EPS_MIN = 0.05

#: largest level budget the IDUE solvers accept (see :func:`check_level_budgets`)
IDUE_EPS_MAX = 10.0

#: relative objective disagreement between the opt0 methods that raises IDUESolverError
AGREEMENT_RTOL = 1e-6


class IDUESolverError(SolverError):
    """A solver failed, returned an infeasible point, or its certificate did not check out.

    Examples
    --------
    >>> from ldpkit.idue import IDUESolverError, solve_opt1
    >>> issubclass(IDUESolverError, ValueError)      # one except clause catches bad input too
    True
    >>> try:
    ...     solution = solve_opt1([1.0, 2.0], [2, 3])
    ... except IDUESolverError as err:               # a failed solve or certificate
    ...     print(f"no certified solution: {err}")
    """


def check_level_budgets(level_budgets: ArrayLike) -> np.ndarray:
    """Distinct level budgets, each in the solvers' supported range ``[IDUE_EPS_MIN, IDUE_EPS_MAX]``."""
    arr = np.asarray(level_budgets) if not isinstance(level_budgets, np.ndarray) else level_budgets
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"level_budgets must be a non-empty 1-d array, got shape {np.shape(level_budgets)}")
    arr = check_budget_vector(arr, arr.size, "level_budgets")
    out = (arr < IDUE_EPS_MIN) | (arr > IDUE_EPS_MAX)
    if np.any(out):
        bad = float(arr[out][0])
        raise ValueError(
            f"level budget {bad!r} is outside the supported range [{IDUE_EPS_MIN:g}, {IDUE_EPS_MAX:g}] of the IDUE "
            "solvers: there every model is solved and KKT-certified on the tested level structures; outside it "
            "the conic solutions lose the accuracy the certificate needs (probabilities near e^-eps or near 1/2)"
        )
    if np.unique(arr).size != arr.size:
        raise ValueError(f"level_budgets must be distinct (one entry per privacy level), got {arr.tolist()!r}"[:200])
    return arr


def check_level_sizes(level_sizes: ArrayLike, t: int) -> np.ndarray:
    arr = np.asarray(level_sizes)
    if arr.ndim != 1:
        raise ValueError(f"level_sizes must be a 1-d array of positive integers, got shape {arr.shape}")
    if arr.size != t:
        raise ValueError(f"level_sizes has length {arr.size}, expected {t} (one per level budget)")
    out = np.empty(t, dtype=np.int64)
    for k, s in enumerate(arr.tolist()):
        if isinstance(s, float) and s.is_integer():
            s = int(s)
        out[k] = check_positive_int(s, f"level_sizes[{k}]", maximum=MAX_USERS)
    return out


def check_pairs_flag(flag: Any) -> SameLevelPairs:
    if not isinstance(flag, str):
        raise ArgumentTypeError(f"same_level_pairs must be 'paper' or 'needed', got {describe(flag)}")
    if flag not in ("paper", "needed"):
        raise ValueError(f"same_level_pairs must be 'paper' or 'needed', got {flag!r}")
    return "paper" if flag == "paper" else "needed"


def pair_budget_matrix(level_budgets: ArrayLike, r: PairRule = "min") -> np.ndarray:
    """The ``t x t`` matrix ``R[i, j] = r(eps_i, eps_j)`` of pair budgets.

    ``r`` is ``"min"`` (MinID-LDP), ``"average"``, ``"max"`` or a vectorised callable
    (as in :func:`ldpkit.accountant.check_idldp`); ``inf`` entries mean "unconstrained".
    Every finite entry must be positive (a zero pair budget cannot be met by IDUE).

    ID-LDP chapter, :prf:ref:`def-idldp`.
    """
    e = check_level_budgets(level_budgets)
    _, rule = resolve_pair_rule(r)
    R = np.array(apply_pair_rule(rule, e[:, None], e[None, :]), dtype=float)
    zero = R <= 0
    if np.any(zero):
        i, j = np.argwhere(zero)[0]
        raise ValueError(f"pair budget r(eps_{i}, eps_{j}) = {R[i, j]!r} must be positive")
    return R


def constraint_mask(R: np.ndarray, pair_sizes: np.ndarray, same_level_pairs: SameLevelPairs) -> np.ndarray:
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
    return cast("np.ndarray", mask)


# ============================================================================ formulas
def variance_terms(a: ArrayLike, b: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Per-item coefficients of eq. (7): ``Var[c_hat_i] = n * g_i + c_i * h_i``.

    ``g = b(1-b)/(a-b)^2`` and ``h = (1-a-b)/(a-b)`` (ID-LDP chapter, eq.
    :eq:`eq-idue-variance`).  ``a`` and ``b`` are probabilities of broadcastable shapes with
    ``a != b`` everywhere (the estimator divides by ``a - b``).
    """
    a = _check_probability_array(a, "a")
    b = _check_probability_array(b, "b")
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        raise ValueError(f"a and b must have broadcastable shapes, got {a.shape} and {b.shape}") from None
    same = a == b
    if np.any(same):
        k = tuple(int(i) for i in np.argwhere(same)[0])
        raise ValueError(f"a and b must differ (the estimator divides by a - b); equal at index {k}: {float(a[k])!r}")
    return b * (1 - b) / (a - b) ** 2, (1 - a - b) / (a - b)


def _check_probability_array(values: ArrayLike, name: str) -> np.ndarray:
    """Real entries in [0, 1], of any shape."""
    arr = real_array(values, name)
    bad = ~np.isfinite(arr) | (arr < 0) | (arr > 1)
    if np.any(bad):
        raise ValueError(f"{name} must lie in [0, 1], got {describe(arr[bad][0].item())}")
    return arr


def worst_case_mse(a: ArrayLike, b: ArrayLike, level_sizes: ArrayLike) -> float:
    """Objective of opt0: ``sum_i m_i g_i + max_i h_i`` (total MSE per user, worst data).

    Equals ``max_c sum_k Var[c_hat_k] / n`` over count vectors with ``sum c = n``
    (ID-LDP chapter, eq. :eq:`eq-opt0`).
    """
    g, h = variance_terms(a, b)
    m = real_array(level_sizes, "level_sizes")
    bad = ~np.isfinite(m) | (m < 0)
    if np.any(bad):
        raise ValueError(f"level_sizes must be finite and non-negative, got {describe(m[bad][0].item())}")
    return float(np.sum(m * g) + np.max(h))


def log_ratio_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``L[i, j] = log[a_i (1-b_j) / (b_i (1-a_j))]`` for all ordered level pairs."""
    u = np.log(a) - np.log(b)
    v = np.log1p(-b) - np.log1p(-a)
    return cast("np.ndarray", u[:, None] + v[None, :])


def ab_from_uv(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Invert ``u = log(a/b)``, ``v = log((1-b)/(1-a))`` (both positive)."""
    Z, Y = np.expm1(u), np.expm1(v)
    D = Z + Y + Z * Y
    return (1 + Z) * Y / D, Y / D


def ab_from_log_ratios(u: ArrayLike, v: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Per-bit ``(a, b)`` from the log-ratios ``u = log(a/b)`` and ``v = log((1-b)/(1-a))``.

    The pair loss of items ``i, j`` is ``u_i + v_j`` (ID-LDP chapter, :prf:ref:`thm-opt0-gp`),
    so mechanisms with prescribed losses are easiest to build in these coordinates.  Both must
    be positive and finite (that is ``0 < b < a < 1``) and of equal shape.
    """
    u_arr, v_arr = real_array(u, "u"), real_array(v, "v")
    if u_arr.shape != v_arr.shape:
        raise ValueError(f"u and v must have the same shape, got {u_arr.shape} and {v_arr.shape}")
    for name, arr in (("u", u_arr), ("v", v_arr)):
        if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            raise ValueError(f"{name} must be positive and finite, got {arr!r}")
    with np.errstate(over="ignore", invalid="ignore"):
        a, b = ab_from_uv(u_arr, v_arr)
    redo = ~(np.isfinite(a) & np.isfinite(b))
    if np.any(redo):  # e^u - 1 or a product of them overflowed: the same formulas in e^-u and e^-v
        a, b = np.array(a, dtype=float), np.array(b, dtype=float)
        uu, vv = u_arr[redo], v_arr[redo]
        a[redo] = -np.expm1(-vv) / -np.expm1(-(uu + vv))
        b[redo] = np.exp(-uu) * a[redo]
    bad = ~((b > 0) & (b < a) & (a < 1))
    if np.any(bad):
        k = int(np.flatnonzero(bad.reshape(-1))[0])
        raise ValueError(
            f"u={describe(u_arr.reshape(-1)[k])}, v={describe(v_arr.reshape(-1)[k])} give probabilities "
            f"a={describe(a.reshape(-1)[k])}, b={describe(b.reshape(-1)[k])} that double precision cannot separate "
            "(0 < b < a < 1 fails)"
        )
    return a, b


def uv_from_ab(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.log(a) - np.log(b), np.log1p(-b) - np.log1p(-a)


def opt0_objective_uv(u: np.ndarray, v: np.ndarray, m: np.ndarray) -> np.ndarray:
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

    Examples
    --------
    >>> from ldpkit.idue import solve_opt1
    >>> sol = solve_opt1([1.0, 2.0], [2, 3])        # level budgets and level sizes
    >>> sol.model, sol.t, sol.r, [round(float(a), 4) for a in sol.a]
    ('opt1', 2, 'min', [0.6145, 0.6304])
    >>> sol.log_ratio().round(4).tolist()            # within the pair budgets min(eps_i, eps_j)
    [[0.9325, 1.0], [1.0, 1.0675]]
    """

    model: Model
    level_budgets: np.ndarray
    level_sizes: np.ndarray
    a: np.ndarray
    b: np.ndarray
    objective: float
    worst_case_mse_per_user: float
    r: Any
    pair_budgets: np.ndarray
    same_level_pairs: SameLevelPairs = "paper"
    diagnostics: dict[str, Any] = field(default_factory=dict)

    @property
    def t(self) -> int:
        """Number of privacy levels."""
        return int(self.level_budgets.size)

    def log_ratio(self) -> np.ndarray:
        """``L[i, j] = log[a_i (1-b_j)/(b_i (1-a_j))]``, the tight loss of items at levels i, j."""
        return log_ratio_matrix(self.a, self.b)

    def variance_coefficients(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-level ``(g, h)`` with ``Var[c_hat] = n g + c h`` (eq. 7)."""
        return variance_terms(self.a, self.b)

    def record(self) -> dict[str, Any]:
        """The solution as plain data (what report files store); :meth:`from_record` inverts it.

        The solver's diagnostics are not kept.  A pair rule given as a function cannot be stored
        (``NotImplementedError``).
        """
        if not isinstance(self.r, str):
            raise NotImplementedError(f"an IDUE solution with a pair rule given as a function ({self.r!r}) cannot be stored")
        return {"model": self.model, "level_budgets": self.level_budgets.copy(), "level_sizes": self.level_sizes.copy(),
                "a": self.a.copy(), "b": self.b.copy(), "objective": float(self.objective),
                "worst_case_mse_per_user": float(self.worst_case_mse_per_user), "r": self.r,
                "pair_budgets": self.pair_budgets.copy(), "same_level_pairs": self.same_level_pairs}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> IDUESolution:
        """Rebuild a solution stored by :meth:`record` (its feasibility is checked again by :class:`~ldpkit.idue.IDUE`)."""
        fields = dict(record)
        for key in ("level_budgets", "level_sizes", "a", "b", "pair_budgets"):
            fields[key] = np.asarray(fields[key])
        return cls(**fields, diagnostics={"restored": True})


def verify_solution(a: np.ndarray, b: np.ndarray, R: np.ndarray, mask: np.ndarray, what: str) -> float:
    """Check ``0 < b < a < 1`` and every constrained ratio; return the worst log-slack.

    Raises :class:`IDUESolverError` when a pair exceeds its budget by more than the relative
    factor :data:`~ldpkit.idue.FEASIBILITY_RTOL`; every solver calls this before it returns.
    """
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise IDUESolverError(f"{what}: non-finite probabilities a={a!r}, b={b!r}")
    if not (np.all(b > 0) and np.all(b < a) and np.all(a < 1)):
        raise IDUESolverError(f"{what}: probabilities violate 0 < b < a < 1: a={a.tolist()}, b={b.tolist()}")
    L = log_ratio_matrix(a, b)
    excess = np.where(mask, L - R, -np.inf)

    def describe(k: int) -> str:
        i, j = np.unravel_index(k, excess.shape)
        return f"pair ({i}, {j}) has ratio {math.exp(L[i, j])!r} > e^r = {math.exp(R[i, j])!r}"

    return require_feasible(excess, math.log1p(FEASIBILITY_RTOL), what, describe, IDUESolverError)


def problem_setup(
    level_budgets: ArrayLike, level_sizes: ArrayLike, r: PairRule, same_level_pairs: SameLevelPairs, pair_sizes: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    e = check_level_budgets(level_budgets)
    m = check_level_sizes(level_sizes, e.size)
    flag = check_pairs_flag(same_level_pairs)
    ps = m if pair_sizes is None else check_level_sizes(pair_sizes, e.size)
    R = pair_budget_matrix(e, r)
    mask = constraint_mask(R, ps, flag)
    return e, m, R, mask


def make_solution(
    model: Model, e: np.ndarray, m: np.ndarray, a: np.ndarray, b: np.ndarray, objective: float,
    r: PairRule, R: np.ndarray, mask: np.ndarray, flag: SameLevelPairs, diagnostics: dict[str, Any],
) -> IDUESolution:
    slack = verify_solution(a, b, R, mask, model)
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
