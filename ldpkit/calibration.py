"""Calibration: the most accurate member of a mechanism family that keeps a privacy promise.

Papers compare mechanisms that each satisfy a different notion.  To compare them at one promise
(a :class:`~ldpkit.contracts.Contract`), each family is *calibrated* to it: among the family's
members (GRR at every budget, IPRR at every multiple of the promise's per-item budgets, IDUE at
the promise's budgets, ...) the one with the smallest error that keeps the promise.  Every family
registered here is indexed by one budget parameter ``t`` along which its error falls and its
privacy loss grows, so that member is the one with the largest ``t`` the accountant accepts:

* where the family has its own optimiser for the promise (IDUE for ID-LDP and MinID-LDP, the
  LIP optima for LIP), the optimiser's member (``method="own optimiser"``);
* otherwise the largest accepted ``t``, found from the accountant alone: a first guess from the
  contract's scale (exact for families whose loss is linear in ``t``), then bisection to a
  relative ``1e-10`` (``method="largest accepted budget"``).

Every result carries a :class:`TightnessCertificate`: the member's declared guarantees verify
(:func:`~ldpkit.accountant.verify`), it keeps the promise, and the member at ``t (1 + 1e-6)``
breaks it.  A family none of whose members keeps the promise (FHR under eps-LDP: an output
rules an input out at every budget) is reported with the reason, as is a family that does not
take the promise's inputs (Padding-and-Sampling takes item sets).

The families are those of the family registry indexed by a budget
(:func:`ldpkit.family.families` with ``budget=True``): each declares its member at a budget
(:attr:`~ldpkit.family.Family.at_budget`), where the search starts, its range and, optionally,
its own optimiser and why it cannot take a promise.  Every such family is calibrated by the same
code and tested by the same certificate test; :func:`best` picks the most accurate of them.
Synthesis chapter, :ref:`sec-synthesis-calibration`.

Examples
--------
>>> from ldpkit import contracts
>>> from ldpkit.calibration import best, calibrate
>>> cal = calibrate("GRR", contracts.minidldp([0.5, 1.0, 2.0, 2.0]))
>>> cal.satisfiable, round(cal.parameter, 9), cal.method
(True, 0.5, 'largest accepted budget')
>>> cal.certificate().holds
True
>>> best(contracts.ldp(4, 1.0)).family.name
'GRR'
>>> calibrate("FHR", contracts.ldp(4, 1.0)).reason
'no member keeps the promise: the ldp check fails at every budget tried, the tightest value being unbounded (an output of one input is impossible under another)'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Union

import numpy as np
from numpy.typing import ArrayLike

from . import accountant
from ._validation import ArgumentTypeError, describe
from .contracts import Contract
from .family import Family, context_of
from .family import families as _all_families
from .family import get_family as _get_family

__all__ = [
    "LOOSEN",
    "Calibration",
    "TightnessCertificate",
    "best",
    "calibrate",
    "calibrate_all",
    "families",
    "get_family",
]

#: the relative step of the tightness certificate: the member at ``t (1 + LOOSEN)`` must break the promise
LOOSEN = 1e-6

#: relative width at which the bisection stops (well below :data:`LOOSEN`)
_BISECT_RTOL = 1e-10

#: two exact total variances within this relative distance are a tie (:func:`best`)
_TIE_RTOL = 1e-9


def families() -> tuple[Family, ...]:
    """Every family calibration can calibrate: :func:`ldpkit.family.families` with ``budget=True``.

    Kept for existing callers; :mod:`ldpkit.family` is the registry.
    """
    return _all_families(budget=True)


def get_family(name: str) -> Family:
    """The registered family called ``name`` (:func:`ldpkit.family.get_family`), kept for existing callers."""
    return _get_family(name)


@dataclass(frozen=True)
class TightnessCertificate:
    """Evidence that a calibrated member is the largest one the promise allows.

    Attributes
    ----------
    verified
        The member's own declared guarantees hold (:func:`~ldpkit.accountant.verify`).
    keeps
        The member keeps the promise (the accountant's exact check).
    slack
        The check's slack at the member.
    loosened
        The parameter ``t (1 + LOOSEN)`` of the loosened member.
    loosened_breaks
        The loosened member breaks the promise.
    loosened_slack
        The check's slack at the loosened member (negative).
    """

    verified: bool
    keeps: bool
    slack: float
    loosened: float
    loosened_breaks: bool
    loosened_slack: float

    @property
    def holds(self) -> bool:
        """All three conditions hold."""
        return self.verified and self.keeps and self.loosened_breaks


@dataclass(frozen=True, eq=False)
class Calibration:
    """The result of :func:`calibrate`: the member, its parameter, how it was found, or why there is none.

    Attributes
    ----------
    family
        The family (a :class:`~ldpkit.family.Family`, registered or not).
    contract
        The promise.
    mechanism
        The calibrated member (``None`` when no member keeps the promise).
    parameter
        Its parameter ``t`` (``None`` when none).
    method
        ``"own optimiser"``, ``"largest accepted budget"``, or ``"none"``.
    reason
        Why no member keeps the promise (``None`` when one does).
    """

    family: Family
    contract: Contract
    mechanism: Any
    parameter: Optional[float]
    method: str
    reason: Optional[str] = None

    @property
    def satisfiable(self) -> bool:
        """Whether some member keeps the promise."""
        return self.mechanism is not None

    def total_variance(self, counts: ArrayLike) -> float:
        """Exact total variance ``sum_x Var[c_hat_x]`` of the member's unbiased count estimates for true ``counts``.

        ``counts`` may be real-valued, such as the uniform ``n / d`` for any ``n`` and ``d``: the variance
        is linear in the counts (:meth:`~ldpkit.base.FrequencyOracle.variance_at`), and at integer counts
        it is the member's :meth:`~ldpkit.base.FrequencyOracle.variance`.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpkit import contracts
        >>> from ldpkit.calibration import calibrate
        >>> cal = calibrate("GRR", contracts.ldp(3, 1.0))
        >>> round(cal.total_variance(np.full(3, 10 / 3)), 4)   # 10 users at uniform counts
        43.6009
        """
        if self.mechanism is None:
            raise ValueError(f"{self.family.name} has no member keeping {self.contract.name}: {self.reason}")
        return float(np.sum(self.mechanism.variance_at(counts)))

    def certificate(self) -> TightnessCertificate:
        """The :class:`TightnessCertificate` of the member (computed now, exactly)."""
        if self.mechanism is None or self.parameter is None:
            raise ValueError(f"{self.family.name} has no member keeping {self.contract.name}: {self.reason}")
        res = self.contract.check(self.mechanism)
        loosened = self.parameter * (1.0 + LOOSEN)
        bad = self.contract.check(self.family.member(self.contract.d, loosened, **context_of(self.contract)))
        return TightnessCertificate(
            verified=bool(accountant.verify(self.mechanism).satisfied),
            keeps=bool(res.satisfied),
            slack=float(res.slack),
            loosened=loosened,
            loosened_breaks=not bad.satisfied,
            loosened_slack=float(bad.slack),
        )

    def __repr__(self) -> str:
        if self.mechanism is None:
            return f"Calibration({self.family.name} under {self.contract.name}: none, {self.reason})"
        return f"Calibration({self.family.name} under {self.contract.name}: t={self.parameter:.12g}, {self.method})"


def _callable_rule(contract: Contract) -> bool:
    return "r" in contract.params and not isinstance(contract.params["r"], str)


#: the search accepts a member whose scale is at most ``1 + _SEARCH_TOL`` (far inside the accountant's tolerance,
#: so that the calibrated member sits at the promise's boundary and not at the tolerance's)
_SEARCH_TOL = 1e-12


class _Run:
    """One calibration of a family to a promise: its members, each built once (by ``t``)."""

    def __init__(self, fam: Family, contract: Contract) -> None:
        self.fam = fam
        self.contract = contract
        self.context = context_of(contract)
        self.members: dict[float, Any] = {}

    def member(self, t: float) -> Any:
        if t not in self.members:
            self.members[t] = self.fam.member(self.contract.d, t, **self.context)
        return self.members[t]

    def keeps(self, t: float) -> bool:
        mech = self.member(t)
        if _callable_rule(self.contract):
            return self.contract.satisfied(mech)
        return self.contract.scale(mech) <= 1.0 + _SEARCH_TOL

    def scale(self, t: float) -> float:
        mech = self.member(t)
        if _callable_rule(self.contract):  # no scale, only the verdict: the bisection does the work
            return 0.5 if self.contract.satisfied(mech) else 2.0
        return self.contract.scale(mech)

    def found(self, t: float, method: str) -> Calibration:
        return Calibration(self.fam, self.contract, self.member(t), float(t), method)

    def none(self, reason: str) -> Calibration:
        return Calibration(self.fam, self.contract, None, None, "none", reason)

    def infeasible(self, t: float) -> Calibration:
        mech = self.member(t)
        res = self.contract.check(mech)
        value = math.nan if _callable_rule(self.contract) else self.contract.scale(mech)
        tightest = ("unbounded" if math.isinf(value) else f"{value:.6g} times the promise" if math.isfinite(value)
                    else "not a scale")
        return self.none(f"no member keeps the promise: the {res.notion} check fails at every budget tried, "
                         f"the tightest value being {tightest}{_why(res, value)}")


def _why(res: accountant.CheckResult, value: float) -> str:
    """What makes the promise unreachable, from the check's own fields."""
    if getattr(res, "n_structural_violations", 0):
        return " (an output of a non-sensitive item is produced by other items too)"
    if getattr(res, "n_invertibility_violations", 0):
        return " (an output produced by a single input reveals a sensitive item)"
    if math.isinf(value):
        return " (an output of one input is impossible under another)"
    return ""


def _resolve(family: Union[str, Family]) -> Family:
    fam = family if isinstance(family, Family) else _get_family(family) if isinstance(family, str) else None
    if fam is None:
        raise ArgumentTypeError(f"family must be a registered family's name or a Family, got {describe(family)}")
    if fam.at_budget is None:
        raise ValueError(f"family {fam.name!r} is not indexed by a budget (it declares no at_budget): "
                         "there is nothing to calibrate")
    return fam


def calibrate(family: Union[str, Family], contract: Contract) -> Calibration:
    """Calibrate a family to a promise: the member with the largest accepted budget parameter.

    Parameters
    ----------
    family
        A registered family's name (or alias) or a :class:`~ldpkit.family.Family` (registered or
        not) with :attr:`~ldpkit.family.Family.at_budget`.
    contract
        The promise (:mod:`ldpkit.contracts`).

    Returns
    -------
    Calibration
        The member (with :meth:`Calibration.certificate`), or the reason there is none.

    Notes
    -----
    Synthesis chapter, :ref:`sec-synthesis-calibration`.  The search assumes the promise's scale
    grows with ``t`` (true of every registered family); the certificate checks the result.  No
    member is built twice, and a family whose own optimiser answers the promise builds one.
    """
    fam = _resolve(family)
    if not isinstance(contract, Contract):
        raise ArgumentTypeError(f"calibrate needs a Contract (ldpkit.contracts), got {describe(contract)}")
    run = _Run(fam, contract)
    if fam.applies is not None:
        reason = fam.applies(contract)
        if reason:
            return run.none(reason)
    if fam.optimiser is not None:
        t_own = fam.optimiser(contract)
        if t_own is not None:
            return run.found(float(t_own), "own optimiser")
    try:
        return _search(run)
    except accountant.AccountingError as err:  # a channel too large to enumerate, with no closed form
        return run.none(f"the accountant cannot compute the promise for this channel: {err}")


def _search(run: _Run) -> Calibration:
    """The largest accepted parameter (see :func:`calibrate`)."""
    fam, contract = run.fam, run.contract
    t_lo, t_hi = fam.range_for(contract)
    t = min(max(fam.initial_for(contract), t_lo), t_hi)
    channel = accountant.as_channel(run.member(t))
    if not contract.notion.applies_to(channel):
        return run.none(f"{contract.name} is not defined for {fam.name}'s channel "
                        f"({channel.n_inputs} inputs, {channel.n_outputs} outputs: not the items themselves)")
    s = run.scale(t)
    probe = t
    while not math.isfinite(s) and probe > t_lo:  # an unbounded loss may vanish at smaller budgets
        probe = max(t_lo, probe * 1e-3)
        s = run.scale(probe)
    if not math.isfinite(s):
        return run.infeasible(t)
    guess = min(max(probe / s if s > 0 else t_hi, t_lo), t_hi)
    # bracket [lo, hi]: lo keeps the promise, hi breaks it; the first step (1e-7) is above the
    # accountant's tolerance and below the certificate's LOOSEN
    if run.keeps(guess):
        lo, hi = guess, min(guess * (1 + 1e-7), t_hi)
        while hi < t_hi and run.keeps(hi):
            lo, hi = hi, min(hi * 2.0, t_hi)
        if hi >= t_hi and run.keeps(t_hi):
            return run.found(t_hi, "largest accepted budget")
    else:
        hi, lo = guess, max(guess * (1 - 1e-7), t_lo)
        while lo > t_lo and not run.keeps(lo):
            hi, lo = lo, max(lo / 2.0, t_lo)
        if not run.keeps(lo):
            return run.infeasible(lo)
    while hi / lo - 1.0 > _BISECT_RTOL:
        mid = math.sqrt(lo * hi)
        if mid <= lo or mid >= hi:
            break
        if run.keeps(mid):
            lo = mid
        else:
            hi = mid
    return run.found(lo, "largest accepted budget")


def calibrate_all(contract: Contract, names: Optional[Sequence[str]] = None) -> dict[str, Calibration]:
    """:func:`calibrate` every family indexed by a budget (or those named) to one promise, in display order."""
    chosen = [f.name for f in families()] if names is None else list(names)
    return {name: calibrate(name, contract) for name in chosen}


def best(contract: Contract, counts: Optional[ArrayLike] = None,
         families: Optional[Sequence[Union[str, Family]]] = None) -> Calibration:
    """The calibrated member with the smallest exact total variance among families that keep the promise.

    Parameters
    ----------
    contract
        The promise.
    counts
        True counts at which total variances are compared (default: uniform counts, one user per
        item; the ranking at uniform counts does not depend on the number of users).
    families
        The families to compare (names or :class:`~ldpkit.family.Family` objects), default every
        family indexed by a budget in display order.  Variances within a relative ``1e-9`` are a
        tie, won by the first family of this order.

    Raises
    ------
    ValueError
        When no family keeps the promise (with the first reasons).

    Examples
    --------
    >>> from ldpkit import contracts
    >>> from ldpkit.calibration import best
    >>> promise = contracts.minidldp([0.5, 0.5] + [2.0] * 10)  # two sensitive items among twelve
    >>> best(promise, families=["GRR", "OUE", "IDUE-opt0"]).family.name
    'IDUE-opt0'
    """
    if not isinstance(contract, Contract):
        raise ArgumentTypeError(f"best needs a Contract (ldpkit.contracts), got {describe(contract)}")
    if counts is None:
        values = np.ones(contract.d)
    else:
        values = np.asarray(counts, dtype=float)
        if values.shape != (contract.d,) or not np.all(np.isfinite(values)) or np.any(values < 0):
            raise ValueError(f"counts must be {contract.d} finite non-negative numbers, got {describe(counts)}")
    chosen = [_resolve(f) for f in (_all_families(budget=True) if families is None else families)]
    if not chosen:
        raise ValueError("families must name at least one family")
    cals = [calibrate(f, contract) for f in chosen]
    kept = [(cal, cal.total_variance(values)) for cal in cals if cal.satisfiable]
    if not kept:
        reasons = "; ".join(f"{cal.family.name}: {cal.reason}" for cal in cals[:3])
        raise ValueError(f"no family keeps {contract.name}: {reasons}")
    smallest = min(v for _, v in kept)
    return next(cal for cal, v in kept if v <= smallest * (1 + _TIE_RTOL))
