"""IDUE-PS for item sets (Gu et al., Algorithm 2, eq. (15), Lemma 2 and Theorem 4).

ID-LDP chapter, eq. :eq:`eq-itemset-budget` and :prf:ref:`thm-idue-ps`.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any, Optional, TYPE_CHECKING, Union, cast

import numpy as np
from numpy.typing import ArrayLike

from .. import accountant
from .._validation import EPS_MAX, EPS_MIN, MAX_USERS, ArgumentTypeError, check_epsilon, check_positive_int
from ..accountant import Guarantee, PairRule
from ..family import BudgetSweep, Family, register_family
from ..padding import PaddingSampling
from ..sets import ItemSetsLike, all_itemsets, as_itemsets
from ..unary import OUE, RAPPOR, RAPPOR_EPS_MAX, RAPPOR_HIGH_WHY, UnaryEncoding, UnaryReports
from .mechanism import IDUE, item_budgets
from .problem import IDUE_EPS_MAX, IDUE_EPS_MIN, MODELS, IDUESolution, Model, SameLevelPairs, check_pairs_flag
from .solvers import solve

if TYPE_CHECKING:
    from ..contracts import Contract

__all__ = ["IDUEPS", "check_itemset_id_ldp", "idue_ps", "itemset_budget", "lemma2_log_bounds", "oue_ps", "rappor_ps"]


def _check_dummy_budget(dummy_budget: Any, eps: np.ndarray) -> float:
    if dummy_budget is None:
        return float(eps.min())
    val = check_epsilon(dummy_budget, "dummy_budget")
    if not np.any(np.abs(eps - val) <= 1e-12 * max(1.0, abs(val))):
        raise ValueError(f"dummy_budget {val!r} must be one of the item budgets (Theorem 4)")
    return float(eps[np.argmin(np.abs(eps - val))])


def itemset_budget(
    itemset: Union[ArrayLike, Set[int]], budgets: ArrayLike, ell: int, dummy_budget: float | None = None
) -> float:
    """Budget of an item set, eq. (15): ``ln[eta mean_{i in x} e^{eps_i} + (1 - eta) e^{eps*}]``.

    ``eta = |x| / max(|x|, ell)`` is the probability that Padding-and-Sampling reports a real
    item; the empty set gets ``eps*`` (the dummies' budget, default the smallest budget).
    Computed with a weighted log-sum-exp (ID-LDP chapter, eq. :eq:`eq-itemset-budget`).
    """
    from scipy.special import logsumexp

    eps = item_budgets(budgets, minimum=1)
    ell = check_positive_int(ell, "ell", maximum=MAX_USERS)
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
    ps: PaddingSampling[Any], budgets: ArrayLike, dummy_budget: float | None = None, r: PairRule = "min"
) -> accountant.IDLDPResult:
    """Theorem 4 by exact enumeration: every item set against every other, every output.

    The channel of ``ps`` over all ``2**d`` item sets (:func:`ldpkit.sets.all_itemsets`, so
    ``d <= MAX_ENUMERATED_D`` and a unary inner oracle small enough to enumerate) is checked
    with :func:`ldpkit.accountant.check_idldp` against the item-set budgets of eq. (15)
    (:func:`itemset_budget`).  Works for any Padding-and-Sampling mechanism, not only solver
    outputs (ID-LDP chapter, :prf:ref:`thm-idue-ps`).
    """
    eps = item_budgets(budgets, minimum=1)
    if eps.size != ps.d:
        raise ValueError(f"budgets has {eps.size} entries, expected one per real item ({ps.d})")
    sets = all_itemsets(ps.d)
    set_budgets = [itemset_budget(x, eps, ps.ell, dummy_budget) for x in sets]
    return accountant.check_idldp(ps.channel(sets), set_budgets, r=r)


def lemma2_log_bounds(ps: PaddingSampling[Any], itemsets: ItemSetsLike) -> np.ndarray:
    """Log of the Lemma 2 bound, eq. (13): ``log(sum_k w_xk alpha_k / sum_k w_x'k beta_k)``.

    ``w_xk`` is the probability that set ``x`` samples padded item ``k``, ``alpha = a/b`` and
    ``beta = (1-a)/(1-b)`` of the unary inner oracle.  Returns the matrix over ordered pairs of
    ``itemsets`` (ID-LDP chapter, :prf:ref:`thm-idue-ps`).
    """
    inner = ps.inner
    if not isinstance(inner, UnaryEncoding):
        raise ValueError(f"Lemma 2 needs a unary-encoding inner oracle, got {type(inner).__name__}")
    w = ps.sampling_probabilities(itemsets)
    alpha, beta = inner.a / inner.b, (1 - inner.a) / (1 - inner.b)
    return cast("np.ndarray", np.log(w @ alpha)[:, None] - np.log(w @ beta)[None, :])


class IDUEPS(PaddingSampling[UnaryReports]):
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

    Examples
    --------
    >>> from ldpkit import accountant, idue_ps
    >>> ps = idue_ps([0.5, 1.0, 1.0], ell=2, model="opt1")
    >>> ps.inner.d, ps.dummy_budget                  # 3 real items + 2 dummies at eps* = min
    (5, 0.5)
    >>> ps.itemset_budgets([[0], [1, 2], []]).round(4).tolist()
    [0.5, 1.0, 0.5]
    >>> accountant.verify(ps).satisfied              # Theorem 4, by enumeration of all item sets
    True
    """

    solution: IDUESolution
    budgets: np.ndarray
    dummy_budget: float

    def __repr__(self) -> str:
        return f"IDUEPS(d={self.d}, ell={self.ell}, levels={self.solution.t}, model={self.solution.model!r})"

    def arguments(self) -> dict[str, Any]:
        """The real items' budgets, ``ell``, the dummy budget and the solution (:meth:`~ldpkit.idue.IDUESolution.record`)."""
        return {"budgets": self.budgets.copy(), "ell": self.ell, "dummy_budget": self.dummy_budget,
                "model": self.solution.record()}

    @classmethod
    def from_arguments(cls, arguments: dict[str, Any]) -> IDUEPS:
        """Rebuild with :func:`idue_ps` from :meth:`arguments` (the stored solution, not solved again)."""
        args = dict(arguments)
        sol = IDUESolution.from_record(args.pop("model"))
        return idue_ps(model=sol, r=sol.r, **args)

    def guarantees(self) -> list[Guarantee]:
        """Theorem 4: MinID-LDP over every item set with the budgets of eq. (15).

        The channel has one row per subset of the real items (:func:`~ldpkit.sets.all_itemsets`,
        the empty set first), so this is stated only for ``d <= MAX_ENUMERATED_D``; the
        padded single-item IDUE itself is checked at construction for any ``d``.
        """
        sets = all_itemsets(self.d)
        return [Guarantee("minid-ldp", budgets=self.itemset_budgets(sets))]

    def itemset_budgets(self, itemsets: ItemSetsLike) -> np.ndarray:
        """Eq. (15) for every user's item set."""
        sets = as_itemsets(itemsets, self.d)
        return np.array([itemset_budget(s, self.budgets, self.ell, self.dummy_budget) for s in sets.to_lists()])


def idue_ps(
    budgets: ArrayLike,
    ell: int,
    model: Model | IDUESolution = "opt0",
    r: PairRule = "min",
    dummy_budget: float | None = None,
    same_level_pairs: SameLevelPairs = "paper",
) -> IDUEPS:
    """IDUE-PS for item-set input (Gu et al., Algorithm 2 and Theorem 4).

    The ``ell`` dummy items get ``eps* = dummy_budget`` (default ``min(budgets)``; it must be
    one of the budgets) and that level's ``(a, b)``.  The solution is computed on the real
    items' levels: adding dummies to an existing level leaves the set of level pairs, hence
    the constraints, unchanged, and the objective counts real items only -- with one exception
    handled here: under ``same_level_pairs="needed"`` a level holding one real item loses its
    ``(i, i)`` constraint, but once the dummies join it that pair is between distinct items,
    so the dummies are counted when deciding which same-level pairs are needed.

    Theorem 4 (ID-LDP chapter, :prf:ref:`thm-idue-ps`): if the padded single-item IDUE over the
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
    eps = item_budgets(budgets, minimum=1)
    ell = check_positive_int(ell, "ell", maximum=MAX_USERS)
    star = _check_dummy_budget(dummy_budget, eps)
    check_pairs_flag(same_level_pairs)
    level_budgets, sizes = np.unique(eps, return_counts=True)
    if isinstance(model, IDUESolution):
        sol = model
    elif isinstance(model, str) and model in MODELS:
        pair_sizes = sizes.copy()
        pair_sizes[int(np.searchsorted(level_budgets, star))] += ell
        sol = solve(model, level_budgets, sizes, r, same_level_pairs, pair_sizes=pair_sizes)
    elif isinstance(model, str):
        raise ValueError(f"model must be one of {MODELS} or an IDUESolution, got {model!r}")
    else:
        raise ArgumentTypeError(f"model must be one of {MODELS} or an IDUESolution, got {model!r}")
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


def rappor_ps(m: int, epsilon: float, ell: int) -> PaddingSampling[Any]:
    """RAPPOR-PS baseline: Padding-and-Sampling around basic RAPPOR at LDP budget ``epsilon`` (at most 30)."""
    m = check_positive_int(m, "m", maximum=MAX_USERS)
    eps = check_epsilon(epsilon, high=RAPPOR_EPS_MAX, high_why=RAPPOR_HIGH_WHY)
    ell = check_positive_int(ell, "ell", maximum=MAX_USERS)
    return PaddingSampling(lambda k: RAPPOR(k, eps), m, ell)


def oue_ps(m: int, epsilon: float, ell: int) -> PaddingSampling[Any]:
    """OUE-PS baseline: Padding-and-Sampling around OUE at LDP budget ``epsilon``."""
    m = check_positive_int(m, "m", maximum=MAX_USERS)
    eps = check_epsilon(epsilon)
    ell = check_positive_int(ell, "ell", maximum=MAX_USERS)
    return PaddingSampling(lambda k: OUE(k, eps), m, ell)


# ---------------------------------------------------------------------------- the families
def _oue_ps_examples() -> tuple[PaddingSampling[Any], ...]:
    return (oue_ps(3, 1.0, 2),)


def _rappor_ps_examples() -> tuple[PaddingSampling[Any], ...]:
    return (rappor_ps(2, 0.5, 1),)


def _idue_ps_examples() -> tuple[IDUEPS, ...]:
    return (idue_ps([0.5, 1.0, 1.0], 2), idue_ps([1.0, 2.0], 1, model="opt1"))


def _oue_ps_sweeps() -> tuple[BudgetSweep, ...]:
    # 5 padded bits: enumerating the channel multiplies 4 factors b ~ e^-eps, below 2.2e-308 from eps ~ 177
    return (BudgetSweep("OUE-PS", lambda e: oue_ps(3, e, 2), EPS_MIN, EPS_MAX, "itemsets", accounting_max=700.0 / 4,
                        variants=(("OUE-PS(ell=1)", lambda: oue_ps(3, 1.0, 1)),
                                  ("PS(OUE over 5, d=2, ell=3)",
                                   lambda: PaddingSampling(lambda k: OUE(k, 1.0), 2, 3)))),)


def _rappor_ps_sweeps() -> tuple[BudgetSweep, ...]:
    return (BudgetSweep("RAPPOR-PS", lambda e: rappor_ps(3, e, 2), EPS_MIN, RAPPOR_EPS_MAX, "itemsets"),)


def _idue_ps_sweeps() -> tuple[BudgetSweep, ...]:
    # the second item's budget is above 1, so that budgets 1 and 2 give different optima: with [e, 1.0] the pair
    # budget min(e, 1) = 1 for every e >= 1 and the members at 1 and 2 are one mechanism (the provenance
    # tests need two configurations)
    return (BudgetSweep("IDUE-PS", lambda e: idue_ps([e, 3.0], 1, model="opt1"), IDUE_EPS_MIN, IDUE_EPS_MAX, "itemsets",
                        eps_arg="budget", scalar_budget=False),)


def _itemsets(c: Contract) -> Optional[str]:
    return "Padding-and-Sampling takes item sets; the promise is stated on single items"


def _not_on_items(d: int, t: float) -> Any:  # pragma: no cover - calibration refuses item promises first
    raise ValueError("Padding-and-Sampling takes item sets")


_PS_SKIP = "item-set inputs: the audits take items as inputs"
for _name, _paper, _examples, _sweeps, _what, _order in (
        ("OUE-PS", "wang2018locally", _oue_ps_examples, _oue_ps_sweeps, "Padding-and-Sampling around OUE", 110),
        ("RAPPOR-PS", "wang2018locally", _rappor_ps_examples, _rappor_ps_sweeps,
         "Padding-and-Sampling around basic RAPPOR", 111)):
    register_family(Family(
        _name, _paper, PaddingSampling, _examples, _what, inputs="itemsets", reports="unary", sweeps=_sweeps,
        at_budget=_not_on_items, initial=lambda c: 1.0, applies=_itemsets, audit_skip=_PS_SKIP, order=_order))
register_family(Family(
    "IDUE-PS", "gu2020idldp", IDUEPS, _idue_ps_examples, "IDUE inside Padding-and-Sampling", inputs="itemsets",
    reports="unary", sweeps=_idue_ps_sweeps, at_budget=_not_on_items, initial=lambda c: 1.0, applies=_itemsets,
    audit_skip=_PS_SKIP, order=112))
