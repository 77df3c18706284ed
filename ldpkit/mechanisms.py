"""The registry of every mechanism family, with small instances for the contract tests.

Each family adds **one line** here (or one :func:`register_mechanism` call from its own
module, or from a test file): a name, the paper that defines it, and a function returning a
few small configured instances whose channels can be enumerated.  The contract test
(``tests/test_contract.py``) runs the checks of :mod:`ldpkit.testing` on every instance of
every registered family, and the synthesis chapter tabulates them under every notion, so a
new family is covered by both as soon as it is registered.

Examples
--------
>>> from ldpkit.mechanisms import get_mechanism, registered_mechanisms
>>> get_mechanism("GRR").paper
'wang2017locally'
>>> "IDUE" in [spec.name for spec in registered_mechanisms()]
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Optional

from ._registry import Registry

__all__ = [
    "BudgetSweep",
    "MechanismSpec",
    "get_mechanism",
    "register_mechanism",
    "registered_mechanisms",
    "unregister_mechanism",
]

InputKind = Literal["items", "itemsets"]

#: the report families (one reported item, bit vectors, hashed pairs, position pairs, binary, item sets)
ReportFamily = Literal["item", "unary", "hashed", "pair", "binary", "itemsets"]


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
        The report family (provenance checks pair sweeps of the same family).
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
    >>> from ldpkit.mechanisms import get_mechanism
    >>> sweep = get_mechanism("GRR").budget_sweeps()[0]
    >>> sweep.name, sweep.lo, sweep.hi, sweep.build(2.0)
    ('GRR', 1e-06, 700.0, GRR(d=4, epsilon=2))
    """

    name: str
    build: Callable[[float], Any]
    lo: float
    hi: float
    reports: ReportFamily
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


@dataclass(frozen=True)
class MechanismSpec:
    """One registered mechanism family.

    Attributes
    ----------
    name
        Unique name (``"GRR"``, ``"IDUE"``, ...).
    paper
        Bibtex key of the paper that defines it.
    examples
        Function returning small configured instances (domains small enough to enumerate the
        channel exactly, epsilons on both sides of 1).
    inputs
        ``"items"`` (a :class:`~ldpkit.base.FrequencyOracle` over single items) or
        ``"itemsets"`` (Padding-and-Sampling style mechanisms whose channel rows are the
        subsets of a small domain, see :func:`ldpkit.sets.all_itemsets`).
    description
        One line for tables.
    sweeps
        Function returning the family's :class:`BudgetSweep` rows (the family as a function of its
        budget), which the robustness tests run at every budget from 1e-300 to 1e300.

    Examples
    --------
    >>> from ldpkit.mechanisms import get_mechanism
    >>> spec = get_mechanism("uRR")
    >>> spec.paper, spec.inputs, spec.description
    ('murakami2019utility', 'items', 'utility-optimised randomised response')
    >>> spec.examples()[0]
    URR(d=5, uldp_epsilon=1, d_s=2)
    """

    name: str
    paper: str
    examples: Callable[[], Sequence[Any]]
    inputs: InputKind = "items"
    description: str = ""
    sweeps: Optional[Callable[[], Sequence[BudgetSweep]]] = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"mechanism name must be a non-empty string, got {self.name!r}")
        if not callable(self.examples):
            raise ValueError(f"examples of {self.name!r} must be a callable returning instances")
        if self.inputs not in ("items", "itemsets"):
            raise ValueError(f"inputs of {self.name!r} must be 'items' or 'itemsets', got {self.inputs!r}")
        if self.sweeps is not None and not callable(self.sweeps):
            raise ValueError(f"sweeps of {self.name!r} must be a callable returning BudgetSweep rows")

    def budget_sweeps(self) -> tuple[BudgetSweep, ...]:
        """The family's :class:`BudgetSweep` rows (empty when it states none)."""
        return () if self.sweeps is None else tuple(self.sweeps())


_REGISTRY: Registry[MechanismSpec] = Registry("mechanism")


def register_mechanism(spec: MechanismSpec) -> MechanismSpec:
    """Add a family to the registry (an existing name is an error); returns ``spec``."""
    if not isinstance(spec, MechanismSpec):
        raise ValueError(f"expected a MechanismSpec, got {spec!r}")
    return _REGISTRY.add(spec.name, spec)


def unregister_mechanism(name: str) -> None:
    """Remove a family (tests that register their own mechanism clean up with this)."""
    _REGISTRY.remove(name)


def get_mechanism(name: str) -> MechanismSpec:
    """The registered family called ``name``; an unknown name lists the close matches."""
    return _REGISTRY.get(name)


def registered_mechanisms() -> tuple[MechanismSpec, ...]:
    """Every registered family, in registration order."""
    return _REGISTRY.values()


# ---------------------------------------------------------------------------- the families
# Each builder imports lazily: the registry is importable without building anything (IDUE
# instances solve an optimisation problem).
def _grr() -> Sequence[Any]:
    from .grr import GRR

    return (GRR(2, 0.5), GRR(5, 1.0), GRR(4, 3.0))


def _rappor() -> Sequence[Any]:
    from .unary import RAPPOR

    return (RAPPOR(3, 0.5), RAPPOR(4, 2.0))


def _oue() -> Sequence[Any]:
    from .unary import OUE

    return (OUE(3, 0.5), OUE(4, 2.0))


def _unary() -> Sequence[Any]:
    from .unary import UnaryEncoding

    # a stated budget above the channel's tight value 3.8712...: verify checks the claim
    return (UnaryEncoding([0.6, 0.7, 0.55, 0.9], [0.3, 0.2, 0.45, 0.05], epsilon=3.9),)


def _olh() -> Sequence[Any]:
    from .olh import OLH

    return (OLH(5, 1.0), OLH(4, 0.5, g=3))


def _hr() -> Sequence[Any]:
    from .hadamard import HR

    return (HR(3, 0.5), HR(5, 1.0), HR(4, 3.0))


def _fhr() -> Sequence[Any]:
    from .hadamard import FHR

    return (FHR(3, 0.5), FHR(5, 1.0), FHR(4, 3.0))


def _urr() -> Sequence[Any]:
    from .urr import URR

    return (URR(5, 1.0, [0, 2]), URR(4, 0.5, [1, 2, 3]), URR(3, 2.0, [0, 1, 2]))


def _iprr() -> Sequence[Any]:
    from .iprr import IPRR

    inf = float("inf")
    return (IPRR([0.1, 0.5, 1.0, inf, inf]), IPRR([0.5, 2.0, 2.0, 4.0]), IPRR([1.0, inf]))


def _idue() -> Sequence[Any]:
    from .idue import IDUE

    budgets = [0.5, 0.5, 1.0, 2.0]
    return (IDUE(budgets, model="opt0"), IDUE(budgets, model="opt1"), IDUE([1.0, 1.5, 1.5, 3.0], model="opt2"))


def _padding() -> Sequence[Any]:
    from .idue import oue_ps, rappor_ps

    return (oue_ps(3, 1.0, 2), rappor_ps(2, 0.5, 1))


def _idue_ps() -> Sequence[Any]:
    from .idue import idue_ps

    return (idue_ps([0.5, 1.0, 1.0], 2), idue_ps([1.0, 2.0], 1, model="opt1"))


def _lip() -> Sequence[Any]:
    import math

    from .lip import BinaryRR, optimal_kary_lip, optimal_ldp, optimal_lip

    # budgets stated by hand: log 7 = log(0.7 / 0.1), the largest ratio of a column (tight), and a
    # LIP budget above the tight 1.1575 under the prior
    return (BinaryRR(0.1, 0.3, prior=0.2, epsilon=math.log(7), lip_epsilon=1.2), optimal_lip(0.05, 2.0).mechanism(), optimal_ldp(0.5, 0.5).mechanism(),
            optimal_kary_lip([0.5, 0.3, 0.2], 1.0).oracle())


def _channel() -> Sequence[Any]:
    import math

    from .channel_oracle import ChannelOracle

    # each declares a budget stated by hand (log 2.5 and log 6, the largest ratios in a column)
    return (
        ChannelOracle([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.3, 0.2, 0.5]], epsilon=math.log(2.5)),
        ChannelOracle([[0.6, 0.1, 0.2, 0.1], [0.1, 0.6, 0.1, 0.2], [0.2, 0.2, 0.3, 0.3]], epsilon=math.log(6)),
    )


# ---------------------------------------------------------------------------- budget sweeps
# Each family as a function of its budget (the robustness tests build it at every budget).
def _grr_matrix(d: int, eps: float) -> Any:
    """GRR's channel matrix written with e^-eps (no overflow), for the explicit-channel sweep."""
    import numpy as np

    tail = math.exp(-eps)
    p = 1.0 / (1.0 + (d - 1) * tail)
    m = np.full((d, d), tail * p)
    np.fill_diagonal(m, p)
    return m


def _ue_at(eps: float) -> Any:
    """A general unary encoding whose tight budget is ``eps``, declaring it.

    OUE's bits on items 0 and 2 (their pair attains ``eps``); item 1's ``b`` lies half-way to 1/2,
    which only lowers the pairs it takes part in.
    """
    import numpy as np

    from .unary import UnaryEncoding

    tail = math.exp(-eps)
    b = tail / (1.0 + tail)
    return UnaryEncoding(np.full(3, 0.5), np.array([b, (b + 0.5) / 2, b]), epsilon=eps)


def _sweeps_grr() -> Sequence[BudgetSweep]:
    from ._validation import EPS_MAX, EPS_MIN
    from .grr import GRR

    return (BudgetSweep("GRR", lambda e: GRR(4, e), EPS_MIN, EPS_MAX, "item", variants=(("GRR(d=5)", lambda: GRR(5, 1.0)),)),)


def _sweeps_rappor() -> Sequence[BudgetSweep]:
    from ._validation import EPS_MIN
    from .unary import RAPPOR, RAPPOR_EPS_MAX

    return (BudgetSweep("RAPPOR", lambda e: RAPPOR(4, e), EPS_MIN, RAPPOR_EPS_MAX, "unary"),)


def _sweeps_oue() -> Sequence[BudgetSweep]:
    from ._validation import EPS_MAX, EPS_MIN
    from .unary import OUE

    return (BudgetSweep("OUE", lambda e: OUE(4, e), EPS_MIN, EPS_MAX, "unary", variants=(("OUE(d=5)", lambda: OUE(5, 1.0)),)),)


def _sweeps_ue() -> Sequence[BudgetSweep]:
    from ._validation import EPS_MAX, EPS_MIN

    return (BudgetSweep("UnaryEncoding", _ue_at, EPS_MIN, EPS_MAX, "unary", scalar_budget=False),)


def _sweeps_olh() -> Sequence[BudgetSweep]:
    from ._validation import EPS_MAX, EPS_MIN
    from .olh import OLH

    # OLH channels grow with g = round(e^eps + 1) up to 2**24 cells (eps >= 13.9): verified up to 5 and at hi
    return (BudgetSweep("OLH", lambda e: OLH(4, e), EPS_MIN, EPS_MAX, "hashed", verify_max=5.0, cheap=False,
                        variants=(("OLH(d=5)", lambda: OLH(5, 1.0)),)),
            BudgetSweep("OLH(g=3)", lambda e: OLH(4, e, g=3), EPS_MIN, EPS_MAX, "hashed"))


def _sweeps_hr() -> Sequence[BudgetSweep]:
    from ._validation import EPS_MAX, EPS_MIN
    from .hadamard import HR

    return (BudgetSweep("HR", lambda e: HR(4, e), EPS_MIN, EPS_MAX, "item", variants=(("HR(d=5)", lambda: HR(5, 1.0)),)),)


def _sweeps_fhr() -> Sequence[BudgetSweep]:
    from ._validation import EPS_MAX, EPS_MIN
    from .hadamard import FHR

    # FHR reports are (plus, minus) position pairs: a report family of their own
    return (BudgetSweep("FHR", lambda e: FHR(4, e), EPS_MIN, EPS_MAX, "pair", eps_arg="fldp_epsilon",
                        variants=(("FHR(d=5)", lambda: FHR(5, 1.0)),)),)


def _sweeps_urr() -> Sequence[BudgetSweep]:
    from ._validation import EPS_MAX, EPS_MIN
    from .urr import URR

    return (BudgetSweep("URR", lambda e: URR(4, e, [0, 1]), EPS_MIN, EPS_MAX, "item", eps_arg="uldp_epsilon",
                        variants=(("URR(sensitive=[0, 2])", lambda: URR(4, 1.0, [0, 2])),)),)


def _sweeps_iprr() -> Sequence[BudgetSweep]:
    from ._validation import EPS_MAX, EPS_MIN
    from .iprr import IPRR

    return (BudgetSweep("IPRR", lambda e: IPRR([e, e, math.inf]), EPS_MIN, EPS_MAX, "item", eps_arg="budgets",
                        scalar_budget=False, variants=(("IPRR([1, 2, inf])", lambda: IPRR([1.0, 2.0, math.inf])),)),)


def _sweeps_idue() -> Sequence[BudgetSweep]:
    from .idue import IDUE, IDUE_EPS_MAX, IDUE_EPS_MIN

    return (
        BudgetSweep("IDUE-opt0", lambda e: IDUE([e, e, 1.0], model="opt0"), IDUE_EPS_MIN, IDUE_EPS_MAX, "unary",
                    eps_arg="budget", scalar_budget=False, cheap=False),
        BudgetSweep("IDUE-opt1", lambda e: IDUE([e, e, 1.0], model="opt1"), IDUE_EPS_MIN, IDUE_EPS_MAX, "unary",
                    eps_arg="budget", scalar_budget=False),
        BudgetSweep("IDUE-opt2", lambda e: IDUE([e, e, 1.0], model="opt2"), IDUE_EPS_MIN, IDUE_EPS_MAX, "unary",
                    eps_arg="budget", scalar_budget=False),
    )


def _sweeps_padding() -> Sequence[BudgetSweep]:
    from ._validation import EPS_MAX, EPS_MIN
    from .idue import oue_ps, rappor_ps
    from .padding import PaddingSampling
    from .unary import OUE, RAPPOR_EPS_MAX

    # 5 padded bits: enumerating the channel multiplies 4 factors b ~ e^-eps, below 2.2e-308 from eps ~ 177
    return (BudgetSweep("OUE-PS", lambda e: oue_ps(3, e, 2), EPS_MIN, EPS_MAX, "itemsets", accounting_max=700.0 / 4,
                        variants=(("OUE-PS(ell=1)", lambda: oue_ps(3, 1.0, 1)),
                                  ("PS(OUE over 5, d=2, ell=3)", lambda: PaddingSampling(lambda k: OUE(k, 1.0), 2, 3)))),
            BudgetSweep("RAPPOR-PS", lambda e: rappor_ps(3, e, 2), EPS_MIN, RAPPOR_EPS_MAX, "itemsets"))


def _sweeps_idue_ps() -> Sequence[BudgetSweep]:
    from .idue import IDUE_EPS_MAX, IDUE_EPS_MIN, idue_ps

    return (BudgetSweep("IDUE-PS", lambda e: idue_ps([e, 1.0], 1, model="opt1"), IDUE_EPS_MIN, IDUE_EPS_MAX, "itemsets",
                        eps_arg="budget", scalar_budget=False),)


def _sweeps_lip() -> Sequence[BudgetSweep]:
    from ._validation import EPS_MIN
    from .lip import MAX_BINARY_EPS, BinaryRR, optimal_lip

    # binary randomised response: items {0, 1}, a report family of its own
    return (BudgetSweep("BinaryRR-LIP", lambda e: optimal_lip(0.2, e).mechanism(), EPS_MIN, MAX_BINARY_EPS, "binary",
                        variants=(("BinaryRR(q0=0.1, q1=0.3)", lambda: BinaryRR(0.1, 0.3)),)),)


def _sweeps_channel() -> Sequence[BudgetSweep]:
    from ._validation import EPS_MAX, EPS_MIN
    from .channel_oracle import ChannelOracle

    # beyond EPS_MAX the matrix is the identity (e^-eps underflows): it then states no budget
    return (BudgetSweep("ChannelOracle",
                        lambda e: ChannelOracle(_grr_matrix(3, e), epsilon=e if e <= EPS_MAX else math.inf),
                        EPS_MIN, EPS_MAX, "item", budget_range=False, refusal=r"rank 1 < 3 inputs"),)


register_mechanism(MechanismSpec("GRR", "wang2017locally", _grr, description="generalised randomised response",
                                 sweeps=_sweeps_grr))
register_mechanism(MechanismSpec("RAPPOR", "erlingsson2014rappor", _rappor, description="basic (symmetric) unary encoding",
                                 sweeps=_sweeps_rappor))
register_mechanism(MechanismSpec("OUE", "wang2017locally", _oue, description="optimised unary encoding", sweeps=_sweeps_oue))
register_mechanism(MechanismSpec("UE", "wang2017locally", _unary, description="unary encoding with per-item bits",
                                 sweeps=_sweeps_ue))
register_mechanism(MechanismSpec("OLH", "wang2017locally", _olh, description="optimised local hashing", sweeps=_sweeps_olh))
register_mechanism(MechanismSpec("HR", "acharya2019hadamard", _hr, description="Hadamard Response (basic, K outputs)",
                                 sweeps=_sweeps_hr))
register_mechanism(MechanismSpec("FHR", "zhao2022fldp", _fhr, description="flexible Hadamard response (FLDP)",
                                 sweeps=_sweeps_fhr))
register_mechanism(MechanismSpec("uRR", "murakami2019utility", _urr, description="utility-optimised randomised response",
                                 sweeps=_sweeps_urr))
register_mechanism(MechanismSpec("IPRR", "li2023ipldp", _iprr, description="item-oriented personalised randomised response",
                                 sweeps=_sweeps_iprr))
register_mechanism(MechanismSpec("IDUE", "gu2020idldp", _idue, description="input-discriminative unary encoding",
                                 sweeps=_sweeps_idue))
register_mechanism(MechanismSpec("PS", "wang2018locally", _padding, "itemsets", "Padding-and-Sampling around an LDP oracle",
                                 sweeps=_sweeps_padding))
register_mechanism(MechanismSpec("IDUE-PS", "gu2020idldp", _idue_ps, "itemsets", "IDUE inside Padding-and-Sampling",
                                 sweeps=_sweeps_idue_ps))
register_mechanism(MechanismSpec("LIP", "jiang2018lip", _lip,
                                 description="binary randomised response and optimal k-ary LIP channels", sweeps=_sweeps_lip))
register_mechanism(MechanismSpec("Channel", "kairouz2016discrete", _channel, description="any explicit finite channel",
                                 sweeps=_sweeps_channel))
