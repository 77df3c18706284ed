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

A family is one :func:`register_family` call (a name, ``build(contract, t)``, the start
``initial(contract)``, the budget range, and optionally ``own(contract)`` and
``applies(contract)``); every registered family is calibrated by the same code and tested by the
same certificate test.  Synthesis chapter, :ref:`sec-synthesis-calibration`.

Examples
--------
>>> from ldpkit import contracts
>>> from ldpkit.calibration import calibrate
>>> cal = calibrate("GRR", contracts.minidldp([0.5, 1.0, 2.0, 2.0]))
>>> cal.satisfiable, round(cal.parameter, 9), cal.method
(True, 0.5, 'largest accepted budget')
>>> cal.certificate().holds
True
>>> calibrate("FHR", contracts.ldp(4, 1.0)).reason
'no member keeps the promise: the ldp check fails at every budget tried, the tightest value being unbounded (an output of one input is impossible under another)'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Optional

import numpy as np
from numpy.typing import ArrayLike

from . import accountant
from ._registry import Registry
from ._validation import EPS_MAX, EPS_MIN, ArgumentTypeError, describe
from .contracts import Contract

__all__ = [
    "LOOSEN",
    "Calibration",
    "CalibrationFamily",
    "TightnessCertificate",
    "calibrate",
    "calibrate_all",
    "families",
    "get_family",
    "register_family",
    "unregister_family",
]

#: the relative step of the tightness certificate: the member at ``t (1 + LOOSEN)`` must break the promise
LOOSEN = 1e-6

#: relative width at which the bisection stops (well below :data:`LOOSEN`)
_BISECT_RTOL = 1e-10


@dataclass(frozen=True)
class CalibrationFamily:
    """A mechanism family indexed by one budget parameter, as calibration sees it.

    Attributes
    ----------
    name
        Name in tables (``"GRR"``, ``"IDUE-opt1"``, ...).
    build
        ``build(contract, t) -> mechanism``: the member at parameter ``t`` for the promise's domain
        (and, for families with per-item budgets, the promise's budget vector times ``t``).
    parameter
        What ``t`` is, in words (``"epsilon"``, ``"multiple of the promise's budgets"``).
    initial
        ``initial(contract) -> t``: where the search starts.
    lo, hi
        The range of ``t`` where ``build`` succeeds.
    own
        ``own(contract) -> t`` or ``None``: the family's own optimiser for this promise (the
        member is ``build(contract, t)``), or ``None`` when it has none for it.
    applies
        ``applies(contract) -> reason`` or ``None``: why the family cannot take the promise at all
        (its inputs, its domain size), or ``None`` when it can.
    limits
        ``limits(contract) -> (lo, hi)``: the range of ``t`` for this promise when it depends on
        the promise (IDUE's solver takes budgets in a fixed range, so ``t`` times the promise's
        budgets must stay in it); default ``(lo, hi)``.
    paper
        Bibtex key of the paper that defines the family.
    """

    name: str
    build: Callable[[Contract, float], Any] = field(repr=False)
    parameter: str
    initial: Callable[[Contract], float] = field(repr=False)
    lo: float = EPS_MIN
    hi: float = EPS_MAX
    own: Optional[Callable[[Contract], Optional[float]]] = field(default=None, repr=False)
    applies: Optional[Callable[[Contract], Optional[str]]] = field(default=None, repr=False)
    limits: Optional[Callable[[Contract], tuple[float, float]]] = field(default=None, repr=False)
    paper: str = ""

    def range_for(self, contract: Contract) -> tuple[float, float]:
        """The range of ``t`` for this promise."""
        return (self.lo, self.hi) if self.limits is None else self.limits(contract)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a calibration family needs a non-empty name, got {describe(self.name)}")
        for attr in ("build", "initial"):
            if not callable(getattr(self, attr)):
                raise ValueError(f"{attr} of family {self.name!r} must be callable")
        if not (0 < self.lo < self.hi):
            raise ValueError(f"family {self.name!r} needs 0 < lo < hi, got lo={self.lo!r}, hi={self.hi!r}")


_FAMILIES: Registry[CalibrationFamily] = Registry("calibration family")


def register_family(family: CalibrationFamily) -> CalibrationFamily:
    """Add a family to the calibration registry (an existing name is an error); returns it."""
    if not isinstance(family, CalibrationFamily):
        raise ArgumentTypeError(f"expected a CalibrationFamily, got {describe(family)}")
    return _FAMILIES.add(family.name, family)


def unregister_family(name: str) -> None:
    """Remove a family (tests that register their own clean up with this)."""
    _FAMILIES.remove(name)


def families() -> tuple[CalibrationFamily, ...]:
    """Every registered calibration family, in registration order."""
    return _FAMILIES.values()


def get_family(name: str) -> CalibrationFamily:
    """The registered family called ``name``; an unknown name lists the close matches."""
    return _FAMILIES.get(name)


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
        The family's name.
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

    family: str
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
            raise ValueError(f"{self.family} has no member keeping {self.contract.name}: {self.reason}")
        return float(np.sum(self.mechanism.variance_at(counts)))

    def certificate(self) -> TightnessCertificate:
        """The :class:`TightnessCertificate` of the member (computed now, exactly)."""
        if self.mechanism is None or self.parameter is None:
            raise ValueError(f"{self.family} has no member keeping {self.contract.name}: {self.reason}")
        fam = get_family(self.family)
        res = self.contract.check(self.mechanism)
        loosened = self.parameter * (1.0 + LOOSEN)
        bad = self.contract.check(fam.build(self.contract, loosened))
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
            return f"Calibration({self.family} under {self.contract.name}: none, {self.reason})"
        return f"Calibration({self.family} under {self.contract.name}: t={self.parameter:.12g}, {self.method})"


def _callable_rule(contract: Contract) -> bool:
    return "r" in contract.params and not isinstance(contract.params["r"], str)


#: the search accepts a member whose scale is at most ``1 + _SEARCH_TOL`` (far inside the accountant's tolerance,
#: so that the calibrated member sits at the promise's boundary and not at the tolerance's)
_SEARCH_TOL = 1e-12


def _keeps(fam: CalibrationFamily, contract: Contract, t: float) -> bool:
    mech = fam.build(contract, t)
    if _callable_rule(contract):
        return contract.satisfied(mech)
    return contract.scale(mech) <= 1.0 + _SEARCH_TOL


def _scale(fam: CalibrationFamily, contract: Contract, t: float) -> float:
    mech = fam.build(contract, t)
    if _callable_rule(contract):  # no scale, only the verdict: the bisection does the work
        return 0.5 if contract.satisfied(mech) else 2.0
    return contract.scale(mech)


def _none(fam: CalibrationFamily, contract: Contract, reason: str) -> Calibration:
    return Calibration(fam.name, contract, None, None, "none", reason)


def _why(res: accountant.CheckResult, value: float) -> str:
    """What makes the promise unreachable, from the check's own fields."""
    if getattr(res, "n_structural_violations", 0):
        return " (an output of a non-sensitive item is produced by other items too)"
    if getattr(res, "n_invertibility_violations", 0):
        return " (an output produced by a single input reveals a sensitive item)"
    if math.isinf(value):
        return " (an output of one input is impossible under another)"
    return ""


def _infeasible_reason(fam: CalibrationFamily, contract: Contract, t: float) -> str:
    mech = fam.build(contract, t)
    res = contract.check(mech)
    value = math.nan if _callable_rule(contract) else contract.scale(mech)
    tightest = "unbounded" if math.isinf(value) else f"{value:.6g} times the promise" if math.isfinite(value) else "not a scale"
    return (f"no member keeps the promise: the {res.notion} check fails at every budget tried, "
            f"the tightest value being {tightest}{_why(res, value)}")


def calibrate(family: str | CalibrationFamily, contract: Contract) -> Calibration:
    """Calibrate a family to a promise: the member with the largest accepted budget parameter.

    Parameters
    ----------
    family
        A registered family's name or a :class:`CalibrationFamily`.
    contract
        The promise (:mod:`ldpkit.contracts`).

    Returns
    -------
    Calibration
        The member (with :meth:`Calibration.certificate`), or the reason there is none.

    Notes
    -----
    Synthesis chapter, :ref:`sec-synthesis-calibration`.  The search assumes the promise's scale
    grows with ``t`` (true of every registered family); the certificate checks the result.
    """
    fam = family if isinstance(family, CalibrationFamily) else get_family(family)
    if not isinstance(contract, Contract):
        raise ArgumentTypeError(f"calibrate needs a Contract (ldpkit.contracts), got {describe(contract)}")
    if fam.applies is not None:
        reason = fam.applies(contract)
        if reason:
            return _none(fam, contract, reason)
    if fam.own is not None:
        t_own = fam.own(contract)
        if t_own is not None:
            return Calibration(fam.name, contract, fam.build(contract, t_own), float(t_own), "own optimiser")
    try:
        return _search(fam, contract)
    except accountant.AccountingError as err:  # a channel too large to enumerate, with no closed form
        return _none(fam, contract, f"the accountant cannot compute the promise for this channel: {err}")


def _search(fam: CalibrationFamily, contract: Contract) -> Calibration:
    """The family's own optimiser, else the largest accepted parameter (see :func:`calibrate`)."""
    t_lo, t_hi = fam.range_for(contract)
    t = min(max(float(fam.initial(contract)), t_lo), t_hi)
    channel = accountant.as_channel(fam.build(contract, t))
    if not contract.notion.applies_to(channel):
        return _none(fam, contract, f"{contract.name} is not defined for {fam.name}'s channel "
                                    f"({channel.n_inputs} inputs, {channel.n_outputs} outputs: not the items themselves)")
    s = _scale(fam, contract, t)
    probe = t
    while not math.isfinite(s) and probe > t_lo:  # an unbounded loss may vanish at smaller budgets
        probe = max(t_lo, probe * 1e-3)
        s = _scale(fam, contract, probe)
    if not math.isfinite(s):
        return _none(fam, contract, _infeasible_reason(fam, contract, t))
    guess = min(max(probe / s if s > 0 else t_hi, t_lo), t_hi)
    # bracket [lo, hi]: lo keeps the promise, hi breaks it; the first step (1e-7) is above the
    # accountant's tolerance and below the certificate's LOOSEN
    if _keeps(fam, contract, guess):
        lo, hi = guess, min(guess * (1 + 1e-7), t_hi)
        while hi < t_hi and _keeps(fam, contract, hi):
            lo, hi = hi, min(hi * 2.0, t_hi)
        if hi >= t_hi and _keeps(fam, contract, t_hi):
            return Calibration(fam.name, contract, fam.build(contract, t_hi), t_hi, "largest accepted budget")
    else:
        hi, lo = guess, max(guess * (1 - 1e-7), t_lo)
        while lo > t_lo and not _keeps(fam, contract, lo):
            hi, lo = lo, max(lo / 2.0, t_lo)
        if not _keeps(fam, contract, lo):
            return _none(fam, contract, _infeasible_reason(fam, contract, lo))
    while hi / lo - 1.0 > _BISECT_RTOL:
        mid = math.sqrt(lo * hi)
        if mid <= lo or mid >= hi:
            break
        if _keeps(fam, contract, mid):
            lo = mid
        else:
            hi = mid
    return Calibration(fam.name, contract, fam.build(contract, lo), lo, "largest accepted budget")


def calibrate_all(contract: Contract, names: Optional[Sequence[str]] = None) -> dict[str, Calibration]:
    """:func:`calibrate` every registered family (or those named) to one promise."""
    chosen = [f.name for f in families()] if names is None else list(names)
    return {name: calibrate(name, contract) for name in chosen}


# ---------------------------------------------------------------------------- the families
def _smallest_budget(contract: Contract) -> float:
    e = contract.budget_vector()
    finite = e[np.isfinite(e)]
    return float(finite.min()) if finite.size else 1.0


def _item_family(name: str, factory: Callable[[int, float], Any], paper: str, hi: float = EPS_MAX) -> CalibrationFamily:
    return CalibrationFamily(name, lambda c, t: factory(c.d, t), "epsilon", _smallest_budget, hi=hi, paper=paper)


def _grr(d: int, t: float) -> Any:
    from .grr import GRR

    return GRR(d, t)


def _rappor(d: int, t: float) -> Any:
    from .unary import RAPPOR

    return RAPPOR(d, t)


def _oue(d: int, t: float) -> Any:
    from .unary import OUE

    return OUE(d, t)


def _olh(d: int, t: float) -> Any:
    from .olh import OLH

    return OLH(d, t)


def _hr(d: int, t: float) -> Any:
    from .hadamard import HR

    return HR(d, t)


def _fhr(d: int, t: float) -> Any:
    from .hadamard import FHR

    return FHR(d, t)


def _urr_sensitive(c: Contract) -> np.ndarray:
    """uRR's sensitive items: the promise's, else every item (uRR is then GRR)."""
    s = c.sensitive
    return np.arange(c.d) if s is None else s


def _urr(c: Contract, t: float) -> Any:
    from .urr import URR

    return URR(c.d, t, _urr_sensitive(c))


def _iprr(c: Contract, t: float) -> Any:
    from .iprr import IPRR

    return IPRR(t * c.budget_vector())


def _finite_budgets(c: Contract) -> np.ndarray:
    """The promise's per-item budgets with ``inf`` (no budget) replaced by the largest finite one (IDUE needs finite budgets)."""
    e = c.budget_vector()
    finite = e[np.isfinite(e)]
    return np.where(np.isfinite(e), e, finite.max() if finite.size else 1.0)


def _idue_rule(c: Contract) -> Any:
    return c.params.get("r", "min") if c.guarantee.notion in ("id-ldp", "minid-ldp") else "min"


def _idue(model: Literal["opt0", "opt1", "opt2"]) -> Callable[[Contract, float], Any]:
    def build(c: Contract, t: float) -> Any:
        from .idue import IDUE

        return IDUE(t * _finite_budgets(c), model=model, r=_idue_rule(c))

    return build


def _idue_own(c: Contract) -> Optional[float]:
    """IDUE solves for ID-LDP (any rule) and MinID-LDP at the promise's budgets: ``t = 1``."""
    return 1.0 if c.guarantee.notion in ("id-ldp", "minid-ldp") else None


def _idue_applies(c: Contract) -> Optional[str]:
    from .idue import IDUE_EPS_MAX, IDUE_EPS_MIN

    e = _finite_budgets(c)
    if e.min() < IDUE_EPS_MIN or e.max() > IDUE_EPS_MAX:
        return f"IDUE's solver takes budgets in [{IDUE_EPS_MIN:g}, {IDUE_EPS_MAX:g}]"
    return None


def _idue_limits(c: Contract) -> tuple[float, float]:
    """``t`` such that ``t`` times the promise's budgets stays in the solver's range."""
    from .idue import IDUE_EPS_MAX, IDUE_EPS_MIN

    e = _finite_budgets(c)
    return IDUE_EPS_MIN / float(e.min()), IDUE_EPS_MAX / float(e.max())


def _prior(c: Contract) -> np.ndarray:
    """The promise's prior, else the uniform one."""
    p = c.prior
    return np.full(c.d, 1.0 / c.d) if p is None else p


def _lip_kary(c: Contract, t: float) -> Any:
    from .lip import optimal_kary_lip

    return optimal_kary_lip(_prior(c), t).oracle()


def _lip_own(c: Contract) -> Optional[float]:
    return float(c.params["epsilon"]) if c.guarantee.notion == "lip" else None


def _lip_kary_applies(c: Contract) -> Optional[str]:
    from .lip import MAX_KARY_K

    if c.d > MAX_KARY_K:
        return f"the k-ary LIP programme is solved for k <= {MAX_KARY_K} items, the promise has {c.d}"
    return None


def _lip_binary(c: Contract, t: float) -> Any:
    from .lip import optimal_lip

    return optimal_lip(float(_prior(c)[1]), t).mechanism()


def _lip_binary_applies(c: Contract) -> Optional[str]:
    if c.d != 2:
        return f"binary randomised response takes two items, the promise has {c.d}"
    return None


def _itemsets(c: Contract) -> Optional[str]:
    return "Padding-and-Sampling takes item sets; the promise is stated on single items"


def _ps_build(c: Contract, t: float) -> Any:  # pragma: no cover - never built for an item promise
    raise ValueError("Padding-and-Sampling takes item sets")


for _name, _factory, _paper in (("GRR", _grr, "wang2017locally"), ("RAPPOR", _rappor, "erlingsson2014rappor"),
                                ("OUE", _oue, "wang2017locally"), ("OLH", _olh, "wang2017locally"),
                                ("HR", _hr, "acharya2019hadamard"), ("FHR", _fhr, "zhao2022fldp")):
    register_family(_item_family(_name, _factory, _paper, hi=30.0 if _name == "RAPPOR" else 50.0))
register_family(CalibrationFamily("uRR", _urr, "epsilon on the protected outputs", _smallest_budget, hi=50.0,
                                  paper="murakami2019utility"))
register_family(CalibrationFamily("IPRR", _iprr, "multiple of the promise's per-item budgets", lambda c: 1.0,
                                  hi=50.0, paper="li2023ipldp"))
_MODELS: tuple[Literal["opt0", "opt1", "opt2"], ...] = ("opt0", "opt1", "opt2")
for _model in _MODELS:
    register_family(CalibrationFamily(f"IDUE-{_model}", _idue(_model), "multiple of the promise's per-item budgets",
                                      lambda c: 1.0, own=_idue_own, applies=_idue_applies, limits=_idue_limits,
                                      paper="gu2020idldp"))
register_family(CalibrationFamily("LIP-kary", _lip_kary, "LIP epsilon under the promise's prior (uniform if none)",
                                  lambda c: _smallest_budget(c), hi=30.0, own=_lip_own, applies=_lip_kary_applies,
                                  paper="jiang2018lip"))
register_family(CalibrationFamily("LIP-binary", _lip_binary, "LIP epsilon under the promise's prior (uniform if none)",
                                  lambda c: _smallest_budget(c), hi=30.0, own=_lip_own, applies=_lip_binary_applies,
                                  paper="jiang2018lip"))
for _name in ("OUE-PS", "RAPPOR-PS", "IDUE-PS"):
    register_family(CalibrationFamily(_name, _ps_build, "epsilon", lambda c: 1.0, applies=_itemsets,
                                      paper="gu2020idldp" if _name == "IDUE-PS" else "wang2018locally"))
