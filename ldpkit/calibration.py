"""Calibration: the most accurate member of a mechanism family that keeps a privacy promise.

Papers compare mechanisms that each satisfy a different notion.  To compare them at one promise
(a :class:`~ldpkit.contracts.Contract`), each family is *calibrated* to it: among the family's
members (GRR at every budget, IPRR at every multiple of the promise's per-item budgets, IDUE at
the promise's budgets, ...) the one with the smallest error that keeps the promise.  Every family
registered here is indexed by one budget parameter ``t`` along which its error falls and its
privacy loss grows, so that member is the one with the largest ``t`` the accountant accepts:

* where the family has its own optimiser for the promise (IDUE for ID-LDP and MinID-LDP, the
  LIP optima for LIP), the optimiser's member (``method="own optimiser"``);
* otherwise the largest accepted ``t`` (``method="largest accepted budget"``): in closed form
  where the family declares the inverse of its tightest budget under the promise's notion
  (:attr:`~ldpkit.family.Family.inverse`: GRR, RAPPOR, OUE, OLH and HR under the pairwise
  notions, FLDP and ULDP; uRR, IPRR and IDUE at one budget likewise, uRR and IPRR under IPLDP
  too), else found from the accountant alone: a first guess from the contract's scale (exact for
  families whose loss is linear in ``t``), then secant steps on the scale inside a bracket that
  ends at a relative width of ``1e-10``.

Every result carries a :class:`TightnessCertificate`: the member's declared guarantees verify
(:func:`~ldpkit.accountant.verify`), it keeps the promise, and the member at ``t (1 + 1e-6)``
breaks it.  A family none of whose members keeps the promise (FHR under eps-LDP: an output
rules an input out at every budget) is reported with the reason, as is a family that does not
take the promise's inputs (Padding-and-Sampling takes item sets).

The families are those of the family registry indexed by a budget
(:func:`ldpkit.family.families` with ``budget=True``): each declares its member at a budget
(:attr:`~ldpkit.family.Family.at_budget`), where the search starts, its range and, optionally,
its own optimiser, its closed-form inverse and why it cannot take a promise.  A member is built
once per process: every search, certificate and later calibration that needs the member at the
same ``t`` and context shares it.  Every such family is calibrated by the same
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
import threading
from collections import OrderedDict
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
from .mechanism import Mechanism

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

#: relative width at which the search stops (well below :data:`LOOSEN`)
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
    mechanism: Optional[Mechanism]
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
        variance_at = getattr(self.kept(), "variance_at", None)
        if variance_at is None:
            raise ValueError(f"{self.family.name} states no variance at counts of items (its users hold item sets)")
        return float(np.sum(variance_at(counts)))

    def kept(self) -> Mechanism:
        """The member that keeps the promise; a ValueError saying why when none does.

        Examples
        --------
        >>> from ldpkit import contracts
        >>> from ldpkit.calibration import calibrate
        >>> calibrate("GRR", contracts.ldp(3, 1.0)).kept()
        GRR(d=3, epsilon=1)
        """
        if self.mechanism is None:
            raise ValueError(f"{self.family.name} has no member keeping {self.contract.name}: {self.reason}")
        return self.mechanism

    def certificate(self) -> TightnessCertificate:
        """The :class:`TightnessCertificate` of the member (computed now, exactly)."""
        if self.mechanism is None or self.parameter is None:
            raise ValueError(f"{self.family.name} has no member keeping {self.contract.name}: {self.reason}")
        res = self.contract.check(self.mechanism)
        loosened = self.parameter * (1.0 + LOOSEN)
        bad = self.contract.check(_member(self.family, self.contract.d, loosened, context_of(self.contract)))
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

#: most members remembered across calibrations, and most items over all of them (least recently used go first)
_MEMO_MEMBERS = 256
_MEMO_ITEMS = 2_000_000
_MEMO: OrderedDict[tuple[Any, ...], tuple[Family, Any, dict[str, Any], int]] = OrderedDict()
_MEMO_LOCK = threading.Lock()


def _fingerprint(value: Any) -> Any:
    """A hashable stand-in for one context value (arrays by their bytes, functions by identity)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float, np.integer, np.floating)):
        return ("number", float(value))
    if callable(value):
        return ("function", id(value))
    arr = np.asarray(value)
    if arr.dtype == object:
        return ("object", id(value))
    return ("array", arr.dtype.str, arr.shape, arr.tobytes())


def _member(fam: Family, d: int, t: float, context: dict[str, Any]) -> Mechanism:
    """``fam.member(d, t, **context)``, remembered: the family's member at ``t`` is built once per process.

    Every member is a function of the family, ``d``, ``t`` and the context the family reads, so a
    member built by one calibration (a step of its search, a certificate's loosened member) serves
    every later one that needs it.  The family object and the context values are kept with the
    member, so that their identities (functions are remembered by identity) stay valid.
    """
    passed = {k: v for k, v in context.items() if k in fam.context and v is not None}
    key = (id(fam), int(d), float(t), tuple(sorted((k, _fingerprint(v)) for k, v in passed.items())))
    with _MEMO_LOCK:
        hit = _MEMO.get(key)
        if hit is not None:
            _MEMO.move_to_end(key)
            return hit[1]
    member = fam.member(d, t, **context)
    with _MEMO_LOCK:
        _MEMO[key] = (fam, member, passed, int(d))
        items = sum(entry[3] for entry in _MEMO.values())
        while len(_MEMO) > 1 and (len(_MEMO) > _MEMO_MEMBERS or items > _MEMO_ITEMS):
            items -= _MEMO.popitem(last=False)[1][3]
    return member


class _Run:
    """One calibration of a family to a promise: its members (remembered, :func:`_member`) and their scales."""

    def __init__(self, fam: Family, contract: Contract) -> None:
        self.fam = fam
        self.contract = contract
        self.context = context_of(contract)
        self.scales: dict[float, float] = {}

    def member(self, t: float) -> Mechanism:
        return _member(self.fam, self.contract.d, t, self.context)

    def scale(self, t: float) -> float:
        """The promise's scale at the member (with a function as pair rule, 0.5 when it keeps the promise, else 2)."""
        if t not in self.scales:
            mech = self.member(t)
            if _callable_rule(self.contract):  # no scale, only the verdict: the search bisects
                self.scales[t] = 0.5 if self.contract.satisfied(mech) else 2.0
            else:
                self.scales[t] = float(self.contract.scale(mech))
        return self.scales[t]

    def keeps(self, t: float) -> bool:
        return self.scale(t) <= 1.0 + _SEARCH_TOL

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
    Synthesis chapter, :ref:`sec-synthesis-calibration`.  In order: the family's reason not to take
    the promise (:attr:`~ldpkit.family.Family.applies`), its own optimiser
    (:attr:`~ldpkit.family.Family.optimiser`, one member built), its closed-form inverse
    (:attr:`~ldpkit.family.Family.inverse`, one member built, no accounting), else the search
    with the accountant.  The search assumes the promise's scale grows with ``t`` (true of every
    registered family); the certificate checks the result.  Members are built once per process
    (every step of every search, and the certificates, share them).
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
    if fam.inverse is not None:
        t_inv = fam.inverse(contract)
        t_lo, t_hi = fam.range_for(contract)
        if t_inv is not None and float(t_inv) >= t_lo:  # below the range: the search says why no member keeps it
            return run.found(min(float(t_inv), t_hi), "largest accepted budget")
    try:
        return _search(run)
    except accountant.AccountingError as err:  # a channel too large to enumerate, with no closed form
        return run.none(f"the accountant cannot compute the promise for this channel: {err}")


#: every step moves at least this far in ``log t`` from the point it starts at, so that a step from
#: the boundary's estimate crosses it and closes the bracket (``hi / lo - 1 <= _BISECT_RTOL``)
_PUSH = 0.4 * math.log1p(_BISECT_RTOL)
#: a step without a bracket moves ``log t`` by at most this much (after the first, from the scale)
_REACH = math.log(4.0)
#: the search gives up after this many members (far more than a bisection of the whole range needs)
_MAX_STEPS = 400


def _search(run: _Run) -> Calibration:
    """The largest accepted parameter (see :func:`calibrate`).

    A first member, then the member at the first guess ``t / scale`` (exact for a family whose
    loss is linear in ``t``); then secant steps on ``log scale`` against ``log t`` through the last
    two members, kept inside the bracket ``[lo, hi]`` (``lo`` keeps the promise, ``hi`` breaks it)
    and replaced by a bisection of the bracket whenever they do not halve it every two steps, until
    ``hi / lo - 1 <= 1e-10``.  The result is ``lo``, which keeps the promise.  Every step moves at
    least ``0.4e-10`` relative, so that once the secant has found the boundary one more member
    closes the bracket: the search ends where the bisection did (to its ``1e-10``) with a handful of
    members instead of dozens.
    """
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
    if _callable_rule(contract):  # a verdict without a scale: nothing to interpolate
        return _bisect(run, probe, s, t_lo, t_hi)
    trail: list[tuple[float, float]] = []  # (log t, g) of every member in order; g <= 0 exactly when it keeps
    lo: Optional[tuple[float, float, float]] = None  # (log t, g, t) of the largest member known to keep
    hi: Optional[tuple[float, float, float]] = None  # ... and of the smallest known to break it
    widths: list[float] = []

    def visit(tt: float) -> None:
        nonlocal lo, hi
        x, sc = math.log(tt), run.scale(tt)
        kept = sc <= 1.0 + _SEARCH_TOL
        g = _excess(sc, kept)
        trail.append((x, g))
        if kept and (hi is None or x < hi[0]) and (lo is None or x > lo[0]):
            lo = (x, g, tt)
        elif not kept and (lo is None or x > lo[0]) and (hi is None or x < hi[0]):
            hi = (x, g, tt)

    visit(probe)
    first = True
    for _ in range(_MAX_STEPS):
        if lo is not None and hi is not None:
            if hi[2] / lo[2] - 1.0 <= _BISECT_RTOL:
                break
            width = hi[0] - lo[0]
            widths.append(width)
            x = _secant(trail)
            if x is None or not lo[0] < x < hi[0] or (len(widths) >= 3 and width > 0.5 * widths[-3]):
                x = 0.5 * (lo[0] + hi[0])
            tt = math.exp(min(max(x, lo[0] + _PUSH), hi[0] - _PUSH))
            if not lo[2] < tt < hi[2]:  # below rounding: the bracket cannot narrow further
                break
            visit(tt)
            continue
        up = hi is None  # every member so far keeps the promise: look above, else below
        here = lo if up else hi
        assert here is not None
        step = _model_step(trail, here[:2])
        if not first:
            step = max(-_REACH, min(_REACH, step))
        first = False
        tt = math.exp(here[0] + (max(step, _PUSH) if up else min(step, -_PUSH)))
        if up and tt >= t_hi:
            if run.keeps(t_hi):
                return run.found(t_hi, "largest accepted budget")
            visit(t_hi)
        elif not up and tt <= t_lo:
            if not run.keeps(t_lo):
                return run.infeasible(t_lo)
            visit(t_lo)
        else:
            visit(tt)
    if lo is None:
        return run.infeasible(hi[2] if hi is not None else probe)
    return run.found(lo[2], "largest accepted budget")


def _bisect(run: _Run, probe: float, s: float, t_lo: float, t_hi: float) -> Calibration:
    """The search by bisection alone, for a promise that gives a verdict and no scale (a pair rule given as a function).

    From the guess ``probe / s``, a bracket whose first step (``1e-7``) is above the accountant's
    tolerance and below the certificate's :data:`LOOSEN`, then doubling, then bisection to
    ``hi / lo - 1 <= 1e-10``.
    """
    guess = min(max(probe / s if s > 0 else t_hi, t_lo), t_hi)
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


def _excess(scale: float, kept: bool) -> float:
    """``log`` of the scale (the boundary is at 0), with the sign of the verdict (``<= 0``: keeps)."""
    if scale <= 0.0:
        return -math.inf
    g = math.log(scale)
    if kept:
        return min(g, 0.0)
    return g if g > 0.0 else math.ulp(0.0)


def _secant(trail: list[tuple[float, float]]) -> Optional[float]:
    """Where the line through the last two members' ``(log t, g)`` crosses zero, if it does."""
    if len(trail) < 2:
        return None
    (x1, g1), (x2, g2) = trail[-2], trail[-1]
    if not (math.isfinite(g1) and math.isfinite(g2)) or g1 == g2 or x1 == x2:
        return None
    x = x2 - g2 * (x2 - x1) / (g2 - g1)
    return x if math.isfinite(x) else None


def _model_step(trail: list[tuple[float, float]], here: tuple[float, float]) -> float:
    """The step in ``log t`` from ``here`` to the boundary: the secant's slope when it is positive, else slope 1."""
    x, g = here
    if not math.isfinite(g):
        return -math.log(2.0) if g > 0 else math.log(2.0)
    slope = 1.0
    if len(trail) >= 2:
        (x1, g1), (x2, g2) = trail[-2], trail[-1]
        if math.isfinite(g1) and math.isfinite(g2) and x1 != x2 and (g2 - g1) / (x2 - x1) > 0:
            slope = (g2 - g1) / (x2 - x1)
    return -g / slope


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
