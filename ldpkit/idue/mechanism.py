"""The IDUE mechanism (Gu et al., Sec. V): a unary encoding with one ``(a, b)`` per privacy level.

ID-LDP chapter, :prf:ref:`alg-idue` and eqs. :eq:`eq-idue-estimator` and :eq:`eq-idue-variance`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from .. import accountant
from .._validation import ArgumentTypeError, check_budget_vector, check_domain_size, real_array
from ..accountant import Guarantee, PairRule
from ..family import (BudgetSweep, Family, budget_range_limits, budget_range_refusal, finite_budgets, per_item_budgets,
                      register_family, uniform_loss_inverse)
from ..unary import UnaryEncoding
from .problem import IDUE_EPS_MAX, IDUE_EPS_MIN, MODELS, IDUESolution, Model, SameLevelPairs, check_pairs_flag
from .solvers import solve

if TYPE_CHECKING:
    from ..contracts import Contract

__all__ = ["IDUE", "item_budgets"]


def item_budgets(budgets: ArrayLike, minimum: int = 2) -> np.ndarray:
    """Validated per-item budget vector (length ``>= minimum``, finite, positive)."""
    arr = real_array(budgets, "budgets")
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
    """Input-Discriminative Unary Encoding (Gu et al., Sec. V) as a :class:`~ldpkit.unary.UnaryEncoding`.

    Items with equal budget form a level; every item of level ``i`` uses ``(a_i, b_i)`` of the
    chosen model.  Perturbation, aggregation, the estimator ``(C_i - n b_i)/(a_i - b_i)``
    (eq. 6) and its variance (eq. 7) are inherited (ID-LDP chapter, :prf:ref:`alg-idue` and
    eqs. :eq:`eq-idue-estimator` and :eq:`eq-idue-variance`).

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
        (checked exactly with :func:`ldpkit.accountant.check_idldp`).

    Examples
    --------
    >>> from ldpkit import IDUE
    >>> idue = IDUE([1.0, 1.0, 2.0, 2.0, 2.0], model="opt1")   # two privacy levels
    >>> idue.levels.tolist(), idue.level_budgets.tolist()
    ([0, 0, 1, 1, 1], [1.0, 2.0])
    >>> [round(float(a), 4) for a in idue.a]
    [0.6145, 0.6145, 0.6304, 0.6304, 0.6304]
    >>> [g.notion for g in idue.guarantees()]
    ['minid-ldp']
    """

    def __init__(
        self,
        budgets: ArrayLike,
        model: Model | IDUESolution = "opt0",
        r: Optional[PairRule] = None,
        same_level_pairs: SameLevelPairs = "paper",
    ) -> None:
        eps = item_budgets(budgets)
        check_pairs_flag(same_level_pairs)
        level_budgets, sizes = np.unique(eps, return_counts=True)
        if isinstance(model, IDUESolution):
            sol = model
            if r is not None and not (isinstance(r, str) and r == sol.r) and r is not sol.r:
                raise ValueError(f"r={r!r} differs from the solution's pair rule {sol.r!r}")
            levels = _match_levels(eps, sol.level_budgets, "item budget")
        elif isinstance(model, str) and model in MODELS:
            sol = solve(model, level_budgets, sizes, "min" if r is None else r, same_level_pairs)
            levels = np.searchsorted(sol.level_budgets, eps)
        elif isinstance(model, str):
            raise ValueError(f"model must be one of {MODELS} or an IDUESolution, got {model!r}")
        else:
            raise ArgumentTypeError(f"model must be one of {MODELS} or an IDUESolution, got {model!r}")
        super().__init__(sol.a[levels], sol.b[levels])
        self.solution = sol
        self.budgets = eps
        self.levels = levels
        check = accountant.check_idldp(self.channel(), eps, r=sol.r, method="classes")
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

    def arguments(self) -> dict[str, Any]:
        """The per-item budgets and the solution in use (:meth:`~ldpkit.idue.IDUESolution.record`), not solved again on loading."""
        return {"budgets": self.budgets.copy(), "model": self.solution.record()}

    @classmethod
    def from_arguments(cls, arguments: dict[str, Any]) -> IDUE:
        """Rebuild from :meth:`arguments` (the stored solution's feasibility is checked again)."""
        args = dict(arguments)
        if isinstance(args.get("model"), dict):
            args["model"] = IDUESolution.from_record(args["model"])
        return cls(**args)

    def guarantees(self) -> list[Guarantee]:
        """E-ID-LDP for the per-item budgets with the solution's pair rule (MinID-LDP for ``min``)."""
        r = self.solution.r
        if isinstance(r, str) and r == "min":
            return [Guarantee("minid-ldp", budgets=self.budgets.copy())]
        return [Guarantee("id-ldp", budgets=self.budgets.copy(), r=r)]


# ---------------------------------------------------------------------------- the families: one per model
def _at_budget(model: Model) -> Any:
    def at_budget(d: int, t: float, budgets: Any = None, rule: PairRule = "min") -> IDUE:
        """IDUE of this model at ``t`` times the per-item ``budgets`` (``inf`` read as the largest finite one)."""
        return IDUE(t * per_item_budgets("IDUE", d, budgets), model=model, r=rule)

    return at_budget


def _optimiser(c: Contract) -> Optional[float]:
    """IDUE solves for ID-LDP (any rule) and MinID-LDP at the promise's budgets: ``t = 1``."""
    return 1.0 if c.guarantee.notion in ("id-ldp", "minid-ldp") else None


def _inverse(c: Contract) -> Optional[float]:
    """Under a promise with one budget ``eps`` for every item (LDP, FLDP, ULDP), ``t = 1``: one solve at ``eps``.

    IDUE then has one level, and its programme at ``t eps`` ends with its constraint
    ``u + v <= t eps`` binding (opt0's objective does not increase in ``u`` or ``v``, ID-LDP
    chapter, :prf:ref:`lem-opt0-monotone`; opt1's falls in ``tau`` and opt2's rises in ``b``,
    :ref:`sec-idldp-models`), so every two items are told apart by exactly ``t eps``
    (:prf:ref:`thm-idue-ratio`, up to the solver's margin of about ``1e-12``) and
    :func:`~ldpkit.family.uniform_loss_inverse` applies: LDP at one budget is MinID-LDP with every
    budget equal (Synthesis chapter, :prf:ref:`prop-pairwise-special-cases`).  ``None`` when the
    promise's budgets differ (ID-LDP and MinID-LDP are the optimiser's) or under LIP.
    """
    e = finite_budgets(c.budget_vector())
    if not np.all(e == e[0]):
        return None
    t = uniform_loss_inverse(c)
    return None if t is None else t / float(e[0])


def _applies(c: Contract) -> Optional[str]:
    return budget_range_refusal(c, IDUE_EPS_MIN, IDUE_EPS_MAX, "IDUE's solver")


def _limits(c: Contract) -> tuple[float, float]:
    """``t`` such that ``t`` times the promise's budgets stays in the solver's range."""
    return budget_range_limits(c, IDUE_EPS_MIN, IDUE_EPS_MAX)


def _examples(model: Model) -> Any:
    def examples() -> tuple[IDUE, ...]:
        budgets = [0.5, 0.5, 1.0, 2.0] if model != "opt2" else [1.0, 1.5, 1.5, 3.0]
        return (IDUE(budgets, model=model),)

    return examples


def _sweeps(model: Model) -> Any:
    def sweeps() -> tuple[BudgetSweep, ...]:
        return (BudgetSweep(f"IDUE-{model}", lambda e: IDUE([e, e, 1.0], model=model), IDUE_EPS_MIN, IDUE_EPS_MAX,
                            "unary", eps_arg="budget", scalar_budget=False, cheap=model != "opt0"),)

    return sweeps


_DESCRIPTIONS = {"opt0": "the worst-case total error minimised", "opt1": "RAPPOR-structured bits",
                 "opt2": "OUE-structured bits"}
_AUDIT_SKIP = "IDUE's models are audited through IDUE-opt1, with the same budgets"
for _order, _model in enumerate(MODELS):
    register_family(Family(
        f"IDUE-{_model}", "gu2020idldp", IDUE, _examples(_model),
        f"input-discriminative unary encoding, model {_model}: {_DESCRIPTIONS[_model]}", reports="unary",
        sweeps=_sweeps(_model), at_budget=_at_budget(_model), parameter="multiple of the promise's per-item budgets",
        context=("budgets", "rule"), limits=_limits, initial=lambda c: 1.0, optimiser=_optimiser, inverse=_inverse,
        applies=_applies,
        aliases=("IDUE",) if _model == "opt0" else (),
        audit="IDUE-opt1 with budgets (eps/2, eps, eps, eps)" if _model == "opt1" else None,
        audit_skip="" if _model == "opt1" else _AUDIT_SKIP, order=90 + _order))
