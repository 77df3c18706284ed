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

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["MechanismSpec", "get_mechanism", "register_mechanism", "registered_mechanisms", "unregister_mechanism"]

InputKind = Literal["items", "itemsets"]


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
        subsets of a small domain, see :func:`ldpkit.padding.all_itemsets`).
    description
        One line for tables.

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

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"mechanism name must be a non-empty string, got {self.name!r}")
        if not callable(self.examples):
            raise ValueError(f"examples of {self.name!r} must be a callable returning instances")
        if self.inputs not in ("items", "itemsets"):
            raise ValueError(f"inputs of {self.name!r} must be 'items' or 'itemsets', got {self.inputs!r}")


_REGISTRY: dict[str, MechanismSpec] = {}


def register_mechanism(spec: MechanismSpec) -> MechanismSpec:
    """Add a family to the registry (an existing name is an error); returns ``spec``."""
    if not isinstance(spec, MechanismSpec):
        raise ValueError(f"expected a MechanismSpec, got {spec!r}")
    if spec.name in _REGISTRY:
        raise ValueError(f"mechanism {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def unregister_mechanism(name: str) -> None:
    """Remove a family (tests that register their own mechanism clean up with this)."""
    get_mechanism(name)
    del _REGISTRY[name]


def get_mechanism(name: str) -> MechanismSpec:
    """The registered family called ``name``; an unknown name lists the close matches."""
    if isinstance(name, str) and name in _REGISTRY:
        return _REGISTRY[name]
    close = difflib.get_close_matches(str(name), list(_REGISTRY), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else f"; registered: {', '.join(_REGISTRY)}"
    raise ValueError(f"unknown mechanism {name!r}{hint}")


def registered_mechanisms() -> tuple[MechanismSpec, ...]:
    """Every registered family, in registration order."""
    return tuple(_REGISTRY.values())


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

    return (UnaryEncoding([0.6, 0.7, 0.55, 0.9], [0.3, 0.2, 0.45, 0.05]),)


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
    from .lip import BinaryRR, optimal_kary_lip, optimal_ldp, optimal_lip

    return (BinaryRR(0.1, 0.3, prior=0.2), optimal_lip(0.05, 2.0).mechanism(), optimal_ldp(0.5, 0.5).mechanism(),
            optimal_kary_lip([0.5, 0.3, 0.2], 1.0).oracle())


def _channel() -> Sequence[Any]:
    from .channel_oracle import ChannelOracle

    return (
        ChannelOracle([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.3, 0.2, 0.5]]),
        ChannelOracle([[0.6, 0.1, 0.2, 0.1], [0.1, 0.6, 0.1, 0.2], [0.2, 0.2, 0.3, 0.3]]),
    )


register_mechanism(MechanismSpec("GRR", "wang2017locally", _grr, description="generalised randomised response"))
register_mechanism(MechanismSpec("RAPPOR", "erlingsson2014rappor", _rappor, description="basic (symmetric) unary encoding"))
register_mechanism(MechanismSpec("OUE", "wang2017locally", _oue, description="optimised unary encoding"))
register_mechanism(MechanismSpec("UE", "wang2017locally", _unary, description="unary encoding with per-item bits"))
register_mechanism(MechanismSpec("OLH", "wang2017locally", _olh, description="optimised local hashing"))
register_mechanism(MechanismSpec("HR", "acharya2019hadamard", _hr, description="Hadamard Response (basic, K outputs)"))
register_mechanism(MechanismSpec("FHR", "zhao2022fldp", _fhr, description="flexible Hadamard response (FLDP)"))
register_mechanism(MechanismSpec("uRR", "murakami2019utility", _urr, description="utility-optimised randomised response"))
register_mechanism(MechanismSpec("IPRR", "li2023ipldp", _iprr, description="item-oriented personalised randomised response"))
register_mechanism(MechanismSpec("IDUE", "gu2020idldp", _idue, description="input-discriminative unary encoding"))
register_mechanism(MechanismSpec("PS", "wang2018locally", _padding, "itemsets", "Padding-and-Sampling around an LDP oracle"))
register_mechanism(MechanismSpec("IDUE-PS", "gu2020idldp", _idue_ps, "itemsets", "IDUE inside Padding-and-Sampling"))
register_mechanism(MechanismSpec("LIP", "jiang2018lip", _lip,
                                 description="binary randomised response and optimal k-ary LIP channels"))
register_mechanism(MechanismSpec("Channel", "kairouz2016discrete", _channel, description="any explicit finite channel"))
