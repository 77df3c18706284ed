"""Mechanism families: one declaration per family, read by every part of the kit.

A :class:`Family` states everything the kit needs to know about a family of mechanisms: its name
and paper, the class of its members, a few small instances whose channels can be enumerated
(the contract tests run on them), its budget sweeps (the robustness tests), the family as a
function of its budget (calibration: :func:`ldpkit.calibration.calibrate`), the report type its
members produce (report files), and the names it is also known by.  A family is declared once,
by one :func:`register_family` call in the module that defines it; every consumer then reads
this registry.

**Discovery.**  The first look-up (:func:`families`, :func:`get_family`, :func:`family_of`,
:func:`unregister_family`) imports every module of ``ldpkit`` that registers a family: each
top-level module, and each top-level file of a subpackage, with a line that starts with a call
``register_family(`` is imported.  A new family inside the kit is therefore one module with one
registration and no other edit; a family defined outside the kit (a user's module, a test file)
is registered by importing the module that declares it.  Registration order never matters:
:func:`families` lists the families by ``(order, name)``.

**The family as a function of its budget.**  :attr:`Family.at_budget` builds the member at
budget parameter ``t`` on ``d`` items, ``at_budget(d, t, **context)``; the context keys it
reads are declared in :attr:`Family.context` (a closed set, :data:`CONTEXT_KEYS`) and
:meth:`Family.member` passes it those keys only.  :func:`context_of` gives the context a
promise (a :class:`~ldpkit.contracts.Contract`) states.

Examples
--------
>>> from ldpkit import contracts
>>> from ldpkit.family import context_of, families, family_of, get_family
>>> grr = get_family("GRR")
>>> grr.paper, grr.mechanism.__name__, get_family("KRR") is grr
('wang2017locally', 'GRR', True)
>>> grr.member(4, 1.0)
GRR(d=4, epsilon=1)
>>> iprr = get_family("IPRR")
>>> iprr.context, iprr.member(3, 2.0, **context_of(contracts.minidldp([0.5, 1.0, 1.0])))
(('budgets',), IPRR(d=3, sensitive=3, budgets=1..2))
>>> family_of(grr.member(4, 1.0)).name
'GRR'
>>> [f.name for f in families(inputs="itemsets")]
['OUE-PS', 'RAPPOR-PS', 'IDUE-PS']
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import os
import pkgutil
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Optional, get_args

import numpy as np

from ._registry import Registry
from ._validation import EPS_MAX, EPS_MIN, ArgumentTypeError, describe
from .contracts import Contract
from .mechanism import Mechanism
from .reports import ReportCodec, register_report_codec, registered_codecs, unregister_report_codec

__all__ = [
    "CONTEXT_KEYS",
    "BudgetSweep",
    "ContextKey",
    "Family",
    "budget_range_limits",
    "budget_range_refusal",
    "context_of",
    "domain_sweep",
    "families",
    "family_of",
    "finite_budgets",
    "get_family",
    "load_module",
    "pair_budget_minima",
    "per_item_budgets",
    "register_family",
    "smallest_budget",
    "uniform_loss_inverse",
    "unregister_family",
]

#: the context a family's ``at_budget`` may read: the promise's per-item budgets, its sensitive
#: items, its prior, its pair rule (ID-LDP), its FLDP ``alpha``, and OLH's hash range ``g``
ContextKey = Literal["budgets", "sensitive", "prior", "rule", "alpha", "g"]
#: every :data:`ContextKey`, in the order above
CONTEXT_KEYS: tuple[str, ...] = get_args(ContextKey)

#: how a family refuses a budget outside its stated range (``{lo}``, ``{hi}`` filled in)
_RANGE_REFUSAL = r"supported range \[{lo:g}, {hi:g}\]"


@dataclass(frozen=True)
class BudgetSweep:
    """A family as a function of its budget: what the robustness sweeps build at every budget.

    ``[lo, hi]`` is where construction must succeed.  With ``budget_range`` the family states that
    range: every budget outside it must be refused with a message naming the range
    (``refusal``); otherwise outside ``[lo, hi]`` the family may refuse (message matching
    ``refusal``) or work.

    Attributes
    ----------
    name
        Label of the sweep (a family may have several: OLH with a fixed hash range, each IDUE model).
    build
        ``eps -> mechanism``.
    lo, hi
        The supported budget range.
    reports
        The report family (provenance checks pair sweeps of the same family): ``"item"``, ``"unary"``,
        ``"hashed"``, ``"pair"``, ``"binary"``, ``"itemsets"``, or a new family's own.
    budget_range, refusal
        Whether the family states its range, and the refusal message pattern (``{lo}`` and ``{hi}``
        stand for the range; empty means the message that states the supported range).
    eps_arg
        The argument a bad budget's message names.
    scalar_budget
        ``build`` passes ``eps`` to the constructor unchanged (so wrong types reach ldpkit as given).
    variants
        Other configurations ``(label, factory)``, for the provenance pairs.
    accounting_max
        Above it, enumerating the channel underflows double precision (the accountant refuses).
    verify_max
        The sweeps verify guarantees up to here and at ``hi`` (accounting cost).
    cheap
        Cheap enough for the property-based tests.

    Examples
    --------
    >>> from ldpkit.family import get_family
    >>> sweep = get_family("GRR").budget_sweeps()[0]
    >>> sweep.name, sweep.lo, sweep.hi, sweep.build(2.0)
    ('GRR', 1e-06, 700.0, GRR(d=4, epsilon=2))
    """

    name: str
    build: Callable[[float], Any]
    lo: float
    hi: float
    reports: str
    budget_range: bool = True
    refusal: str = ""
    eps_arg: str = "epsilon"
    scalar_budget: bool = True
    variants: tuple[tuple[str, Callable[[], Any]], ...] = ()
    accounting_max: float = math.inf
    verify_max: float = math.inf
    cheap: bool = True

    def refusal_regex(self) -> str:
        """The refusal pattern with the range filled in (by default, the message naming the supported range)."""
        pattern = self.refusal or _RANGE_REFUSAL
        return pattern.format(lo=self.lo, hi=self.hi)

    def __repr__(self) -> str:  # short test ids
        return self.name


def domain_sweep(mechanism: Callable[..., Any], reports: str, eps_arg: str = "epsilon") -> BudgetSweep:
    """The budget sweep of a family built as ``mechanism(d, eps)``: ``d = 4`` over the kit's budget range.

    Named after the class, with the variant ``d = 5`` at budget 1 for the provenance pairs; ``eps_arg``
    names the budget argument (as :class:`BudgetSweep`).

    Examples
    --------
    >>> from ldpkit.family import domain_sweep
    >>> from ldpkit.grr import GRR
    >>> sweep = domain_sweep(GRR, "item")
    >>> sweep.name, sweep.build(2.0), [(label, make()) for label, make in sweep.variants]
    ('GRR', GRR(d=4, epsilon=2), [('GRR(d=5)', GRR(d=5, epsilon=1))])
    """
    name = getattr(mechanism, "__name__", str(mechanism))
    return BudgetSweep(name, lambda e: mechanism(4, e), EPS_MIN, EPS_MAX, reports, eps_arg=eps_arg,
                       variants=((f"{name}(d=5)", lambda: mechanism(5, 1.0)),))


def smallest_budget(contract: Contract) -> float:
    """The smallest finite per-item budget of a promise (1 when it states none): where calibration starts by default.

    Examples
    --------
    >>> from ldpkit import contracts
    >>> from ldpkit.family import smallest_budget
    >>> smallest_budget(contracts.ipldp([0.5, 2.0, float("inf")]))
    0.5
    """
    e = contract.budget_vector()
    finite = e[np.isfinite(e)]
    return float(finite.min()) if finite.size else 1.0


def finite_budgets(budgets: Any) -> np.ndarray:
    """Per-item budgets with ``inf`` (no budget) read as the largest finite one (every budget 1 when none is finite).

    What the families that need finite budgets (IDUE, ID-SS) build and calibrate from.

    Examples
    --------
    >>> from ldpkit.family import finite_budgets
    >>> finite_budgets([0.5, float("inf"), 2.0]).tolist()
    [0.5, 2.0, 2.0]
    """
    e = np.asarray(budgets, dtype=float)
    finite = e[np.isfinite(e)]
    return np.where(np.isfinite(e), e, finite.max() if finite.size else 1.0)


def per_item_budgets(name: str, d: int, budgets: Any) -> np.ndarray:
    """The ``budgets`` an ``at_budget`` of family ``name`` is given, one per item, through :func:`finite_budgets`.

    Raises
    ------
    ValueError
        When ``budgets`` is ``None`` or does not hold ``d`` budgets.

    Examples
    --------
    >>> from ldpkit.family import per_item_budgets
    >>> per_item_budgets("IDUE", 3, [1.0, float("inf"), 2.0]).tolist()
    [1.0, 2.0, 2.0]
    >>> per_item_budgets("IDUE", 3, None)
    Traceback (most recent call last):
    ...
    ValueError: IDUE is built from per-item budgets: pass budgets (one per item)
    """
    if budgets is None:
        raise ValueError(f"{name} is built from per-item budgets: pass budgets (one per item)")
    e = finite_budgets(budgets)
    if e.shape != (d,):
        raise ValueError(f"budgets must hold one budget per item ({d}), got shape {e.shape}")
    return e


def budget_range_refusal(contract: Contract, lo: float, hi: float, solver: str) -> Optional[str]:
    """Why a family whose ``solver`` takes per-item budgets in ``[lo, hi]`` does not apply to a promise, or ``None``.

    The promise's budgets are read as in :func:`finite_budgets` (a family's ``applies`` hook).

    Examples
    --------
    >>> from ldpkit import contracts
    >>> from ldpkit.family import budget_range_refusal
    >>> budget_range_refusal(contracts.ipldp([0.5, 2.0, float("inf")]), 0.1, 10.0, "IDUE's solver") is None
    True
    >>> budget_range_refusal(contracts.ipldp([0.5, 20.0]), 0.1, 10.0, "IDUE's solver")
    "IDUE's solver takes budgets in [0.1, 10]"
    """
    e = finite_budgets(contract.budget_vector())
    if e.min() < lo or e.max() > hi:
        return f"{solver} takes budgets in [{lo:g}, {hi:g}]"
    return None


def budget_range_limits(contract: Contract, lo: float, hi: float) -> tuple[float, float]:
    """The factors ``t`` such that ``t`` times the promise's budgets stays in ``[lo, hi]`` (a family's ``limits`` hook).

    The promise's budgets are read as in :func:`finite_budgets`.

    Examples
    --------
    >>> from ldpkit import contracts
    >>> from ldpkit.family import budget_range_limits
    >>> budget_range_limits(contracts.ipldp([0.5, 2.0, float("inf")]), 0.1, 10.0)
    (0.2, 5.0)
    """
    e = finite_budgets(contract.budget_vector())
    return lo / float(e.min()), hi / float(e.max())


#: the promise's parameters that hold one datum per item (``ldpkit.accountant.SHARED_PARAMETERS``)
_ITEM_DATA = ("budgets", "sensitive", "prior", "matrix")


def pair_budget_minima(contract: Contract) -> Optional[np.ndarray]:
    """For each item ``x``, the smallest budget a pairwise promise gives an ordered pair ``(x, x')``, ``x' != x``.

    A pairwise promise (LDP, ID-LDP and MinID-LDP with a named pair rule, context-aware LDP) is
    context-aware LDP with a matrix ``M`` (Synthesis chapter, :prf:ref:`prop-pairwise-special-cases`);
    this is ``min_{x' != x} M[x, x']``, computed without the ``d x d`` matrix when the budgets
    come per item (over the distinct budgets only).  ``None`` for a promise that is not pairwise,
    for an ID-LDP promise whose pair rule is a function (its verdict, not a scale, decides), and
    for a domain of one item.  What the inverses of :attr:`Family.inverse` read.

    Examples
    --------
    >>> from ldpkit import contracts
    >>> from ldpkit.family import pair_budget_minima
    >>> pair_budget_minima(contracts.minidldp([0.5, 1.0, 2.0, 2.0])).tolist()
    [0.5, 0.5, 0.5, 0.5]
    >>> pair_budget_minima(contracts.idldp([0.5, 1.0, 2.0, 2.0], "average")).tolist()
    [0.75, 0.75, 1.25, 1.25]
    >>> pair_budget_minima(contracts.uldp(3, 1.0, [0])) is None
    True
    """
    if not isinstance(contract, Contract):
        raise ArgumentTypeError(f"pair_budget_minima needs a Contract (ldpkit.contracts), got {describe(contract)}")
    notion, params, d = contract.notion, contract.params, contract.d
    if notion.pairwise is None or d < 2 or ("r" in params and not isinstance(params["r"], str)):
        return None
    data = [k for k in _ITEM_DATA if k in params]
    if not data:  # no parameter names an item: every pair has the same budget
        pair = np.asarray(notion.pairwise(2, params), dtype=float)
        return np.full(d, min(float(pair[0, 1]), float(pair[1, 0])))
    if data == ["budgets"]:
        e = np.asarray(params["budgets"], dtype=float)
        levels, where, counts = np.unique(e, return_inverse=True, return_counts=True)
        k = levels.size
        # every level twice, so that the pair budget of two items of one level is an off-diagonal entry
        M = np.asarray(notion.pairwise(2 * k, {**params, "budgets": np.repeat(levels, 2)}), dtype=float)
        rows = M[0::2].copy()  # row 2a: an item of level a against every copy
        rows[np.arange(k), 2 * np.arange(k)] = np.inf  # the item itself
        rows[np.arange(k), 2 * np.arange(k) + 1] = np.where(counts >= 2, rows[np.arange(k), 2 * np.arange(k) + 1],
                                                             np.inf)  # another item of its level, if there is one
        return rows.min(axis=1)[where.reshape(-1)]
    if data == ["matrix"]:
        M = np.array(notion.pairwise(d, params), dtype=float)
        np.fill_diagonal(M, np.inf)
        return M.min(axis=1)
    return None


def uniform_loss_inverse(contract: Contract) -> Optional[float]:
    """The largest ``t`` that a channel telling every two distinct inputs apart by exactly ``t`` may have under a promise.

    The inverse (:attr:`Family.inverse`) of every family whose member at ``t`` has the pairwise
    log-ratio ``log max_y P(y | x) / P(y | x') = t`` for every ordered pair ``x != x'``, every
    output being possible under every input: GRR (Foundations chapter, :eq:`eq-grr`), RAPPOR
    and OUE (:prf:ref:`thm-ue-pairwise`), OLH (:prf:ref:`thm-olh-support`), HR
    (:prf:ref:`thm-hr-support`).  Under a pairwise promise the member keeps it exactly when ``t``
    is at most every pair's budget, so ``t`` is the smallest of :func:`pair_budget_minima`
    (:prf:ref:`prop-pairwise-special-cases`).  Under ``(alpha, eps)``-FLDP the member shares every
    output (``alpha* = 1``) and its ratio bound is its LDP level ``t`` (:prf:ref:`lem-fldp-ldp`):
    ``t = eps``.  Under ``(X_S, eps)``-ULDP no output is produced by one input only, so every
    output must be protected, which is ``eps``-LDP (:prf:ref:`def-uldp`): ``t = eps`` (when the
    promise names no protected outputs).  ``None`` under the other notions.

    Examples
    --------
    >>> from ldpkit import contracts
    >>> from ldpkit.family import uniform_loss_inverse
    >>> uniform_loss_inverse(contracts.idldp([0.5, 1.0, 2.0, 2.0], "average"))
    0.75
    >>> uniform_loss_inverse(contracts.fldp(4, 1.0, 0.5)), uniform_loss_inverse(contracts.lip(1.0, [0.5, 0.5]))
    (1.0, None)
    """
    minima = pair_budget_minima(contract)
    if minima is not None:
        return float(minima.min())
    notion, params = contract.guarantee.notion, contract.params
    if notion == "fldp" or (notion == "uldp" and params.get("protected") is None):
        return float(params["epsilon"])
    return None


def _optional_callable(value: Any, what: str, name: str) -> None:
    if value is not None and not callable(value):
        raise ArgumentTypeError(f"{what} of family {name!r} must be callable or None, got {describe(value)}")


@dataclass(frozen=True)
class Family:
    """One mechanism family, declared once (:func:`register_family`) and read by every consumer.

    Attributes
    ----------
    name
        Unique name used in every table (``"GRR"``, ``"IDUE-opt0"``, ``"LIP-kary"``).
    paper
        BibTeX key of the paper that defines the family.
    mechanism
        The class of its members: report files rebuild a member through it, and
        :func:`family_of` finds a member's family by it (its exact class).
    examples
        ``() -> instances``: small configured members whose channels can be enumerated (domains
        of a few items, budgets on both sides of 1); the contract tests run on each.
    description
        One line for tables.
    inputs
        ``"items"`` (a frequency oracle over single items) or ``"itemsets"`` (a mechanism whose
        channel rows are the subsets of a small domain, see :func:`ldpkit.sets.all_itemsets`).
    reports
        The report kind its members produce (the ``kind`` of a :class:`~ldpkit.reports.ReportCodec`).
    codec
        The codec of a report type this family introduces (registered with the family), or ``None``.
    sweeps
        ``() -> BudgetSweep rows``: the family as a function of its budget, for the robustness
        tests (from 1e-300 to 1e300), or ``None``.
    at_budget
        ``at_budget(d, t, **context) -> member``: the member at budget parameter ``t`` on ``d``
        items, reading the context keys of :attr:`context`; ``None`` for a family that is not
        indexed by a budget (a general container such as :class:`~ldpkit.unary.UnaryEncoding`).
    parameter
        What ``t`` is, in words.
    context
        The context keys ``at_budget`` reads (from :data:`CONTEXT_KEYS`); :meth:`member` passes
        only these.
    lo, hi
        The range of ``t`` where ``at_budget`` succeeds.
    limits
        ``limits(contract) -> (lo, hi)``: the range of ``t`` for a promise, when it depends on
        the promise (IDUE's solver takes budgets in a fixed range); default ``(lo, hi)``.
    initial
        ``initial(contract) -> t``: where calibration's search starts; default the smallest
        finite budget of the promise (:func:`smallest_budget`).
    optimiser
        ``optimiser(contract) -> t`` or ``None``: the family's own optimiser for a promise (the
        member is ``member`` at that ``t``), ``None`` when it has none for that promise.
    inverse
        ``inverse(contract) -> t`` or ``None``: the largest ``t`` whose member keeps the promise,
        in closed form (the family's tightest budget under the promise's notion, inverted where
        the book derives the family's privacy), or ``None`` when the family has no closed form
        for that promise.  Calibration then builds the member at ``t`` without a search (a ``t``
        above the family's range gives the member at the top of the range); without one it
        searches with the accountant.  The tightness certificate still checks the member, and
        the kit's tests compare every declared inverse with the search under every kind of
        promise it answers.  :func:`uniform_loss_inverse` is the inverse of every family whose
        members tell every two inputs apart by exactly ``t``.
    applies
        ``applies(contract) -> reason`` or ``None``: why the family cannot take a promise at all
        (its inputs, its domain size), ``None`` when it can.
    aliases
        Other names :func:`get_family` accepts (``"KRR"``, ``"SUE"``).
    audit
        How the LDP audits use ``t``, in words, or ``None`` when the family is not in them.
    audit_skip
        Why the family is not audited, when ``audit`` is ``None``.
    order
        Display order in tables (ties by name); never affects a result.

    Examples
    --------
    >>> from ldpkit.family import get_family
    >>> fam = get_family("uRR")
    >>> fam.paper, fam.inputs, fam.description, fam.context
    ('murakami2019utility', 'items', 'utility-optimised randomised response', ('sensitive',))
    >>> fam.examples()[0]
    URR(d=5, uldp_epsilon=1, d_s=2)
    >>> fam.member(4, 1.0, sensitive=[0, 1], prior=[0.25] * 4)  # prior is not read by uRR
    URR(d=4, uldp_epsilon=1, d_s=2)
    """

    name: str
    paper: str
    mechanism: type
    examples: Callable[[], Sequence[Any]]
    description: str = ""
    inputs: Literal["items", "itemsets"] = "items"
    reports: str = "item"
    codec: Optional[ReportCodec] = None
    sweeps: Optional[Callable[[], Sequence[BudgetSweep]]] = None
    at_budget: Optional[Callable[..., Mechanism]] = None
    parameter: str = "epsilon"
    context: tuple[str, ...] = ()
    lo: float = EPS_MIN
    hi: float = EPS_MAX
    limits: Optional[Callable[[Contract], tuple[float, float]]] = None
    initial: Optional[Callable[[Contract], float]] = None
    optimiser: Optional[Callable[[Contract], Optional[float]]] = None
    applies: Optional[Callable[[Contract], Optional[str]]] = None
    aliases: tuple[str, ...] = ()
    audit: Optional[str] = None
    audit_skip: str = ""
    order: int = 1000
    inverse: Optional[Callable[[Contract], Optional[float]]] = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ArgumentTypeError(f"a family needs a non-empty name, got {describe(self.name)}")
        what = f"of family {self.name!r}"
        if not isinstance(self.paper, str):
            raise ArgumentTypeError(f"paper {what} must be a BibTeX key (a string), got {describe(self.paper)}")
        if not isinstance(self.mechanism, type):
            raise ArgumentTypeError(f"mechanism {what} must be the class of its members, "
                                    f"got {describe(self.mechanism)}")
        if not callable(self.examples):
            raise ArgumentTypeError(f"examples {what} must be a callable returning instances")
        if self.inputs not in ("items", "itemsets"):
            raise ValueError(f"inputs {what} must be 'items' or 'itemsets', got {self.inputs!r}")
        if not isinstance(self.reports, str) or not self.reports:
            raise ArgumentTypeError(f"reports {what} must be a report kind (a string), got {describe(self.reports)}")
        if self.codec is not None and not isinstance(self.codec, ReportCodec):
            raise ArgumentTypeError(f"codec {what} must be a ReportCodec or None, got {describe(self.codec)}")
        if self.codec is not None and self.codec.kind != self.reports:
            raise ValueError(f"family {self.name!r} introduces the {self.codec.kind!r} codec but states "
                             f"reports={self.reports!r}")
        for attr in ("sweeps", "at_budget", "limits", "initial", "optimiser", "inverse", "applies"):
            _optional_callable(getattr(self, attr), attr, self.name)
        if not isinstance(self.context, tuple) or any(k not in CONTEXT_KEYS for k in self.context):
            raise ValueError(f"context {what} must be a tuple of {CONTEXT_KEYS}, got {self.context!r}")
        lo, hi = self.lo, self.hi
        if not isinstance(lo, (int, float)) or not isinstance(hi, (int, float)) or not (0 < lo < hi):
            raise ValueError(f"family {self.name!r} needs 0 < lo < hi, got lo={lo!r}, hi={hi!r}")
        if not isinstance(self.aliases, tuple) or not all(isinstance(a, str) and a for a in self.aliases):
            raise ArgumentTypeError(f"aliases {what} must be a tuple of non-empty strings, got {self.aliases!r}")
        if self.audit is not None and not isinstance(self.audit, str):
            raise ArgumentTypeError(f"audit {what} must be a string or None, got {describe(self.audit)}")
        if isinstance(self.order, bool) or not isinstance(self.order, int):
            raise ArgumentTypeError(f"order {what} must be an integer, got {describe(self.order)}")

    # ------------------------------------------------------------------ the family at a budget
    @property
    def budget(self) -> bool:
        """Whether the family is indexed by a budget (it has :attr:`at_budget`)."""
        return self.at_budget is not None

    def member(self, d: int, t: float, **context: Any) -> Mechanism:
        """The member at budget parameter ``t`` on ``d`` items.

        ``context`` may hold any of :data:`CONTEXT_KEYS` (for instance :func:`context_of` a
        promise); only the keys in :attr:`context` are passed to :attr:`at_budget`, and a key
        given as ``None`` is not passed (the family's default applies).

        Raises
        ------
        ValueError
            A family without ``at_budget``, or a context key outside :data:`CONTEXT_KEYS`.
        """
        if self.at_budget is None:
            raise ValueError(f"family {self.name!r} is not indexed by a budget (it declares no at_budget)")
        unknown = [k for k in context if k not in CONTEXT_KEYS]
        if unknown:
            raise ValueError(f"unknown context key {unknown[0]!r} for family {self.name!r}; "
                             f"the keys are {CONTEXT_KEYS}")
        kwargs = {k: v for k, v in context.items() if k in self.context and v is not None}
        return self.at_budget(d, t, **kwargs)

    def range_for(self, contract: Contract) -> tuple[float, float]:
        """The range of ``t`` for a promise (:attr:`limits`, default ``(lo, hi)``)."""
        return (self.lo, self.hi) if self.limits is None else self.limits(contract)

    def initial_for(self, contract: Contract) -> float:
        """Where calibration's search starts for a promise (:attr:`initial`, default :func:`smallest_budget`)."""
        return smallest_budget(contract) if self.initial is None else float(self.initial(contract))

    def budget_sweeps(self) -> tuple[BudgetSweep, ...]:
        """The family's :class:`BudgetSweep` rows (empty when it states none)."""
        return () if self.sweeps is None else tuple(self.sweeps())

    def __repr__(self) -> str:
        return f"Family({self.name!r}, paper={self.paper!r}, mechanism={self.mechanism.__name__})"


# ---------------------------------------------------------------------------- the registry
_FAMILIES: Registry[Family] = Registry("mechanism family")
#: alias -> family name
_ALIASES: dict[str, str] = {}
#: report kind -> names of the registered families that declare its codec
_CODEC_OWNERS: dict[str, list[str]] = {}
_DISCOVERED = False
_DISCOVERING = False
#: a module registers a family when a line of its source starts with this call
_REGISTERS = re.compile(r"^[ \t]*(?:[A-Za-z_][\w.]*\.)?register_family\(", re.MULTILINE)


def _registers(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return _REGISTERS.search(fh.read()) is not None
    except OSError:  # pragma: no cover - a file listed by pkgutil vanished
        return False


def _discover() -> None:
    """Import every module of ldpkit that registers a family (once; see the module's docstring)."""
    global _DISCOVERED, _DISCOVERING
    if _DISCOVERED or _DISCOVERING:
        return
    _DISCOVERING = True
    try:
        package = sys.modules[__name__.rpartition(".")[0]]
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            where = getattr(info.module_finder, "path", None)
            if where is None or info.name == "family":  # pragma: no cover - ldpkit is a plain directory
                continue
            base = f"{package.__name__}.{info.name}"
            if info.ispkg:
                folder = os.path.join(where, info.name)
                for file in sorted(os.listdir(folder)):
                    if file.endswith(".py") and _registers(os.path.join(folder, file)):
                        importlib.import_module(base if file == "__init__.py" else f"{base}.{file[:-3]}")
            elif _registers(os.path.join(where, f"{info.name}.py")):
                importlib.import_module(base)
        _DISCOVERED = True
    finally:
        _DISCOVERING = False


def load_module(name: str) -> bool:
    """Import the kit's module ``name`` (``"ldpkit.grr"``) if it registers a family; whether it does.

    One family's module, without the discovery of every other (a report file names the class it
    rebuilds, so reading a GRR file does not import IDUE's solvers).  Nothing outside ``ldpkit``,
    and no module of it that registers no family, is ever imported.

    Examples
    --------
    >>> from ldpkit.family import load_module
    >>> load_module("ldpkit.grr"), load_module("ldpkit.metrics"), load_module("os")
    (True, False, False)
    """
    package = sys.modules[__name__.rpartition(".")[0]]
    parts = name.split(".") if isinstance(name, str) else []
    if len(parts) < 2 or parts[0] != package.__name__ or not all(p.isidentifier() for p in parts):
        return False
    base = ".".join(parts[:2])
    spec = importlib.util.find_spec(base)
    if spec is None:
        return False
    if spec.submodule_search_locations:  # a subpackage: the files that register, as discovery imports them
        folder = next(iter(spec.submodule_search_locations))
        files = sorted(f for f in os.listdir(folder) if f.endswith(".py") and _registers(os.path.join(folder, f)))
        for file in files:
            importlib.import_module(base if file == "__init__.py" else f"{base}.{file[:-3]}")
        return bool(files)
    if spec.origin is None or not _registers(spec.origin):
        return False
    importlib.import_module(base)
    return True


def register_family(family: Family, *, replace: bool = False) -> Family:
    """Add a family to the registry; returns it.

    Its name and aliases must be new (``replace=True`` replaces the family of the same name).
    A :attr:`Family.codec` is registered with it, unless a codec of that kind is registered
    already (the same codec, declared by another family of that report type).

    Raises
    ------
    ValueError
        A name or alias already taken, or a codec that conflicts with a registered one.

    Examples
    --------
    >>> from ldpkit import GRR
    >>> from ldpkit.family import Family, get_family, register_family, unregister_family
    >>> half = Family("GRR-half", "none", GRR, lambda: (GRR(3, 0.5),), at_budget=lambda d, t: GRR(d, t / 2))
    >>> fam = register_family(half)
    >>> get_family("GRR-half").member(3, 2.0)
    GRR(d=3, epsilon=1)
    >>> unregister_family("GRR-half")
    """
    if not isinstance(family, Family):
        raise ArgumentTypeError(f"register_family needs a Family, got {describe(family)}")
    if not isinstance(replace, bool):
        raise ArgumentTypeError(f"replace must be True or False, got {describe(replace)}")
    previous = _FAMILIES.get(family.name) if family.name in _FAMILIES else None
    if previous is not None and not replace:
        raise ValueError(f"mechanism family {family.name!r} is already registered (pass replace=True to replace it)")
    taken = {**{f.name: f.name for f in _FAMILIES.values()}, **_ALIASES}
    for alias in (family.name, *family.aliases):
        owner = taken.get(alias)
        if owner is not None and owner != family.name:
            what = "a family" if alias == owner else f"an alias of family {owner!r}"
            raise ValueError(f"{alias!r} of family {family.name!r} is already {what}")
    codec = family.codec
    if codec is not None:
        known = _codec(codec.kind)
        ours = previous is not None and previous.codec is not None and previous.codec.kind == codec.kind
        if known is not None and known != codec and not (ours and _CODEC_OWNERS.get(codec.kind) == [family.name]):
            raise ValueError(f"family {family.name!r} declares a {codec.kind!r} codec other than the registered one")
    if previous is not None:
        _drop(previous)
    if codec is not None:
        if _codec(codec.kind) is None:
            register_report_codec(codec)
        _CODEC_OWNERS.setdefault(codec.kind, []).append(family.name)
    _FAMILIES.add(family.name, family)
    for alias in family.aliases:
        _ALIASES[alias] = family.name
    return family


def _codec(kind: str) -> Optional[ReportCodec]:
    return next((c for c in registered_codecs() if c.kind == kind), None)


def _drop(family: Family) -> None:
    _FAMILIES.remove(family.name)
    for alias in family.aliases:
        _ALIASES.pop(alias, None)
    if family.codec is not None:
        owners = _CODEC_OWNERS.get(family.codec.kind, [])
        if family.name in owners:
            owners.remove(family.name)
            if not owners:  # the last family declaring it: the codec goes with it
                del _CODEC_OWNERS[family.codec.kind]
                if _codec(family.codec.kind) is not None:
                    unregister_report_codec(family.codec.kind)


def unregister_family(name: str) -> None:
    """Remove a family, its aliases and the codec it introduced if no other family declares it.

    Tests that register their own family clean up with this.
    """
    _drop(get_family(name))


def get_family(name: str) -> Family:
    """The registered family called ``name`` (or with that alias); an unknown name lists the close matches.

    Examples
    --------
    >>> from ldpkit.family import get_family
    >>> get_family("SUE").name
    'RAPPOR'
    >>> get_family("GRRR")
    Traceback (most recent call last):
    ...
    ValueError: unknown mechanism family 'GRRR'; did you mean GRR, uRR, KRR?
    """
    _discover()
    if isinstance(name, str) and name in _ALIASES:
        return _FAMILIES.get(_ALIASES[name])
    if isinstance(name, str) and name not in _FAMILIES:
        import difflib

        close = difflib.get_close_matches(name, [*(f.name for f in _FAMILIES.values()), *_ALIASES], n=3, cutoff=0.5)
        if close:
            raise ValueError(f"unknown mechanism family {name!r}; did you mean {', '.join(close)}?")
    return _FAMILIES.get(name)


def families(*, inputs: Optional[str] = None, budget: Optional[bool] = None,
             discover: bool = True) -> tuple[Family, ...]:
    """The registered families, by ``(order, name)``.

    Parameters
    ----------
    inputs
        ``"items"`` or ``"itemsets"``: only the families taking those inputs.
    budget
        ``True``: only the families indexed by a budget (with :attr:`Family.at_budget`);
        ``False``: only the others.
    discover
        ``False``: the families registered so far, without importing the kit's other family modules
        (what :func:`~ldpkit.family.load_module` and a reader of one stored class need).

    Examples
    --------
    >>> from ldpkit.family import families
    >>> [f.name for f in families(budget=False)]
    ['UE', 'Channel']
    """
    if inputs is not None and inputs not in ("items", "itemsets"):
        raise ValueError(f"inputs must be 'items', 'itemsets' or None, got {inputs!r}")
    if budget is not None and not isinstance(budget, bool):
        raise ArgumentTypeError(f"budget must be True, False or None, got {describe(budget)}")
    if not isinstance(discover, bool):
        raise ArgumentTypeError(f"discover must be True or False, got {describe(discover)}")
    if discover:
        _discover()
    out = sorted(_FAMILIES.values(), key=lambda f: (f.order, f.name))
    return tuple(f for f in out if (inputs is None or f.inputs == inputs) and (budget is None or f.budget == budget))


def family_of(mechanism: object) -> Optional[Family]:
    """The registered family whose :attr:`Family.mechanism` is the exact class of ``mechanism``, else ``None``.

    Several families may declare one class (the three IDUE models all build
    :class:`~ldpkit.idue.IDUE`; :class:`~ldpkit.channel_oracle.ChannelOracle` is both the explicit
    channels' class and the k-ary LIP optimum's): a family that is not indexed by a budget (the
    general container) is then preferred, then the first by ``(order, name)``.  It is the family
    that makes the class readable from report files.

    Examples
    --------
    >>> from ldpkit import OUE, UnaryEncoding
    >>> from ldpkit.family import family_of
    >>> family_of(OUE(4, 1.0)).name, family_of(UnaryEncoding([0.6, 0.7], [0.2, 0.3])).name
    ('OUE', 'UE')
    >>> family_of(object()) is None
    True
    """
    # the families registered so far first: a class's module registers its families when it is imported
    matches = ([f for f in families(discover=False) if f.mechanism is type(mechanism)]
               or [f for f in families() if f.mechanism is type(mechanism)])
    general = [f for f in matches if not f.budget]
    chosen = general or matches
    return chosen[0] if chosen else None


def context_of(contract: Contract) -> dict[str, Any]:
    """The context a promise states, for :meth:`Family.member`.

    ``budgets`` (always: :meth:`~ldpkit.contracts.Contract.budget_vector`), ``sensitive`` and
    ``prior`` when the promise has them, ``rule`` (the pair rule of an ID-LDP promise) and
    ``alpha`` (FLDP) when it states them.

    Examples
    --------
    >>> from ldpkit import contracts
    >>> from ldpkit.family import context_of
    >>> ctx = context_of(contracts.uldp(3, 1.0, sensitive=[0]))
    >>> sorted(ctx), ctx["budgets"].tolist(), ctx["sensitive"].tolist()
    (['budgets', 'sensitive'], [1.0, inf, inf], [0])
    """
    if not isinstance(contract, Contract):
        raise ArgumentTypeError(f"context_of needs a Contract (ldpkit.contracts), got {describe(contract)}")
    out: dict[str, Any] = {"budgets": contract.budget_vector()}
    if contract.sensitive is not None:
        out["sensitive"] = contract.sensitive
    if contract.prior is not None:
        out["prior"] = contract.prior
    params = contract.params
    if "r" in params:
        out["rule"] = params["r"]
    if "alpha" in params:
        out["alpha"] = float(params["alpha"])
    return out
