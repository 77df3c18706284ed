"""A privacy promise as data: a *contract* one can calibrate any mechanism family to.

A :class:`Contract` is a :class:`~ldpkit.accountant.Guarantee` (a notion and its parameters)
for a domain of ``d`` items, with a name for tables and what calibration needs from it: whether a
mechanism satisfies it (:meth:`Contract.satisfied`, exactly, through the accountant), by how much
(:meth:`Contract.scale`: the smallest factor of the contract's budgets the mechanism satisfies,
at most 1 when it satisfies the contract), the per-item budgets a family with one budget per
item is built from (:meth:`Contract.budget_vector`) and, for the pairwise notions, the matrix of
pairwise budgets of context-aware LDP (:meth:`Contract.pairwise_matrix`).

One constructor per notion: :func:`ldp`, :func:`idldp` (a pair rule ``min``, ``average``,
``max`` or a callable), :func:`minidldp`, :func:`ipldp`, :func:`uldp`, :func:`fldp`, :func:`lip`
and :func:`context_aware`.  Each validates its arguments before anything is computed.
Synthesis chapter, :ref:`sec-synthesis-contracts`.

Examples
--------
>>> from ldpkit import GRR, contracts
>>> c = contracts.minidldp([0.5, 1.0, 2.0, 2.0])
>>> c.name, c.satisfied(GRR(4, 0.5)), round(c.scale(GRR(4, 1.0)), 6)
('MinID-LDP', True, 2.0)
>>> contracts.uldp(4, 1.0, sensitive=[0, 1]).budget_vector().tolist()
[1.0, 1.0, inf, inf]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from . import accountant
from ._validation import check_budget_vector, check_distribution, check_positive_int, check_positive_real, check_probability
from .accountant import CheckResult, Guarantee, Notion, get_notion
from .accountant.ipldp import sensitive_indices

__all__ = [
    "Contract",
    "context_aware",
    "fldp",
    "idldp",
    "ipldp",
    "ldp",
    "lip",
    "minidldp",
    "uldp",
]


@dataclass(frozen=True, eq=False)
class Contract:
    """A privacy promise for a domain of ``d`` items: a notion with its parameters.

    Build one with the module's constructors (:func:`ldp`, :func:`minidldp`, ...), which validate
    the parameters.

    Attributes
    ----------
    name
        Short name for tables (``"LDP"``, ``"MinID-LDP"``, ``"ULDP"``, ...).
    guarantee
        The promise as a :class:`~ldpkit.accountant.Guarantee`.
    d
        Domain size.
    """

    name: str
    guarantee: Guarantee
    d: int

    # ------------------------------------------------------------------ what the promise is
    @property
    def notion(self) -> Notion[CheckResult]:
        """The registered notion of the promise."""
        return get_notion(self.guarantee.notion)

    @property
    def params(self) -> dict[str, Any]:
        """The guarantee's parameters."""
        return dict(self.guarantee.params)

    @property
    def sensitive(self) -> Optional[np.ndarray]:
        """The sensitive items, for IPLDP those with a finite budget and for ULDP as given; ``None`` for the other notions."""
        p = self.guarantee.params
        if "sensitive" in p:
            return sensitive_indices(p["sensitive"], self.d)
        return None

    @property
    def prior(self) -> Optional[np.ndarray]:
        """The prior of a LIP promise, else ``None``."""
        p = self.guarantee.params.get("prior")
        return None if p is None else np.asarray(p, dtype=float)

    def budget_vector(self) -> np.ndarray:
        """One budget per item, the form a family with per-item budgets (IPRR, IDUE) is built from.

        LDP, FLDP, LIP: ``eps`` for every item; ID-LDP, MinID-LDP, IPLDP: the budgets (``inf`` for a
        non-sensitive item of IPLDP); ULDP: ``eps`` on the sensitive items and ``inf`` elsewhere;
        context-aware: the smallest budget of any pair the item is part of.
        """
        p = self.guarantee.params
        if "budgets" in p:
            return np.asarray(p["budgets"], dtype=float).copy()
        if "matrix" in p:
            m = np.asarray(p["matrix"], dtype=float).copy()
            np.fill_diagonal(m, np.inf)
            return np.minimum(m.min(axis=1), m.min(axis=0))
        eps = float(p["epsilon"])
        if self.guarantee.notion == "uldp":
            out = np.full(self.d, np.inf)
            out[self.sensitive] = eps
            return out
        return np.full(self.d, eps)

    def pairwise_matrix(self) -> Optional[np.ndarray]:
        """The context-aware matrix of a pairwise promise (LDP, ID-LDP with a built-in rule, MinID-LDP, context-aware), else ``None``.

        Synthesis chapter, :prf:ref:`prop-pairwise-special-cases`.
        """
        p = self.guarantee.params
        notion = self.guarantee.notion
        if notion == "ldp":
            return accountant.pairwise_budgets(self.d, epsilon=p["epsilon"])
        if notion in ("id-ldp", "minid-ldp"):
            return accountant.pairwise_budgets(self.d, budgets=p["budgets"], r=p.get("r", "min"))
        if notion == "context-aware":
            return np.asarray(p["matrix"], dtype=float).copy()
        return None

    # ------------------------------------------------------------------ a mechanism against it
    def check(self, mech: Any) -> CheckResult:
        """The accountant's typed check of the promise against a mechanism or channel."""
        return self.guarantee.check(mech)

    def satisfied(self, mech: Any) -> bool:
        """Whether the mechanism keeps the promise (exactly, up to the accountant's relative tolerance)."""
        return bool(self.check(mech).satisfied)

    def scale(self, mech: Any) -> float:
        """Smallest ``s`` such that the mechanism keeps the promise with every budget multiplied by ``s``.

        At most 1 (up to rounding) exactly when the mechanism keeps the promise; ``inf`` when no
        multiple of the budgets is kept (an output that rules an input out, for one).  For a
        notion with one budget it is the tightest budget over the promised one; for the
        per-item and pairwise notions, the notion's own scale.  An ID-LDP promise with a
        callable pair rule has no scale (the rule need not be homogeneous): ``ValueError``.
        """
        notion = self.notion
        p = self.guarantee.params
        if notion.scale:
            if "r" in p and not isinstance(p["r"], str):
                raise ValueError("an ID-LDP promise with a callable pair rule has no scale; use satisfied()")
            context = {k: v for k, v in p.items() if k in notion.tightest_needs or k in notion.optional}
            return float(notion.tightest(mech, **context))
        context = {k: v for k, v in p.items() if k in notion.tightest_needs}
        return float(notion.tightest(mech, **context)) / float(p[notion.budget])

    def __repr__(self) -> str:
        return f"Contract({self.name}: {self.guarantee!r}, d={self.d})"


# ---------------------------------------------------------------------------- constructors
def ldp(d: int, epsilon: float) -> Contract:
    """eps-LDP on ``d`` items (Foundations chapter, :prf:ref:`def-ldp`).

    Examples
    --------
    >>> from ldpkit import contracts
    >>> contracts.ldp(3, 1.0)
    Contract(LDP: Guarantee('ldp', epsilon=1.0), d=3)
    """
    d = check_positive_int(d, "d")
    return Contract("LDP", Guarantee("ldp", epsilon=check_positive_real(epsilon, "epsilon")), d)


def idldp(budgets: ArrayLike, r: accountant.PairRule = "average") -> Contract:
    """E-ID-LDP with pair rule ``r`` (ID-LDP chapter, :prf:ref:`def-idldp`); ``r="min"`` is :func:`minidldp`."""
    e = check_budget_vector(budgets, np.size(budgets))
    name, _ = accountant.resolve_pair_rule(r)
    if name == "min":
        return minidldp(e)
    return Contract(f"ID-LDP ({name})", Guarantee("id-ldp", budgets=e, r=r), int(e.size))


def minidldp(budgets: ArrayLike) -> Contract:
    """E-MinID-LDP (ID-LDP chapter, :prf:ref:`def-minidldp`)."""
    e = check_budget_vector(budgets, np.size(budgets))
    if e.size < 2:
        raise ValueError(f"a MinID-LDP promise needs at least 2 items, got {e.size}")
    return Contract("MinID-LDP", Guarantee("minid-ldp", budgets=e), int(e.size))


def ipldp(budgets: ArrayLike) -> Contract:
    """(D_S, E)-IPLDP: ``budgets`` finite on the sensitive items, ``inf`` on the others (IPLDP chapter, :prf:ref:`def-ipldp`)."""
    e = check_budget_vector(budgets, np.size(budgets), allow_inf=True)
    sens = np.flatnonzero(np.isfinite(e))
    if sens.size == 0:
        raise ValueError("an IPLDP promise needs at least one sensitive item (a finite budget)")
    return Contract("IPLDP", Guarantee("ipldp", budgets=e, sensitive=sens), int(e.size))


def uldp(d: int, epsilon: float, sensitive: ArrayLike) -> Contract:
    """(X_S, eps)-ULDP for the sensitive items ``sensitive`` (IPLDP chapter, :prf:ref:`def-uldp`)."""
    d = check_positive_int(d, "d")
    eps = check_positive_real(epsilon, "epsilon")
    sens = sensitive_indices(sensitive, d)
    if sens.size == 0:
        raise ValueError("a ULDP promise needs at least one sensitive item")
    return Contract("ULDP", Guarantee("uldp", epsilon=eps, sensitive=np.sort(sens)), d)


def fldp(d: int, epsilon: float, alpha: float) -> Contract:
    """(eps, alpha)-FLDP as reconstructed (FLDP chapter, :prf:ref:`def-fldp`)."""
    d = check_positive_int(d, "d")
    eps = check_positive_real(epsilon, "epsilon")
    a = check_probability(alpha, "alpha")
    return Contract("FLDP", Guarantee("fldp", epsilon=eps, alpha=a), d)


def lip(epsilon: float, prior: ArrayLike) -> Contract:
    """eps-LIP under a prior over the ``d = len(prior)`` items (LIP chapter, :prf:ref:`def-lip`)."""
    eps = check_positive_real(epsilon, "epsilon")
    pi = check_distribution(prior, np.size(prior), "prior")
    if np.any(pi <= 0):
        raise ValueError(f"a LIP promise needs a prior with full support, got 0 at item {int(np.flatnonzero(pi <= 0)[0])}")
    return Contract("LIP", Guarantee("lip", epsilon=eps, prior=pi), int(pi.size))


def context_aware(matrix: ArrayLike) -> Contract:
    """Context-aware LDP with one budget per ordered pair (Synthesis chapter, :prf:ref:`def-context-aware`)."""
    arr = np.asarray(matrix, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"matrix must be a d x d matrix of pairwise budgets, got {arr.ndim} dimension(s)")
    m = accountant.check_budget_matrix(matrix, arr.shape[0])
    return Contract("CA-LDP", Guarantee("context-aware", matrix=m), int(m.shape[0]))

