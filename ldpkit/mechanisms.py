"""Former view of the family registry, kept until its last callers move to :mod:`ldpkit.family`.

The registry of mechanism families is :mod:`ldpkit.family`; this module declares no family.
:func:`registered_mechanisms` lists the registered families under the names they were grouped
under before each IDUE model, each Padding-and-Sampling baseline and each LIP optimum became a
family of its own (``IDUE``, ``PS``, ``LIP``); every other family keeps its name, and a family
registered later appears under its own name.

Examples
--------
>>> from ldpkit.mechanisms import get_mechanism, registered_mechanisms
>>> get_mechanism("GRR").paper
'wang2017locally'
>>> [f.name for f in get_mechanism("IDUE").families]
['IDUE-opt0', 'IDUE-opt1', 'IDUE-opt2']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._registry import Registry
from .family import BudgetSweep, Family, families

__all__ = ["BudgetSweep", "FormerFamily", "get_mechanism", "registered_mechanisms"]

#: the former group of the families that were split (every other family is its own group)
_FORMER_GROUP = {"IDUE-opt0": "IDUE", "IDUE-opt1": "IDUE", "IDUE-opt2": "IDUE", "OUE-PS": "PS", "RAPPOR-PS": "PS",
                 "LIP-kary": "LIP", "LIP-binary": "LIP"}


@dataclass(frozen=True)
class FormerFamily:
    """Registered families under one former name: the union of their examples and sweeps.

    Attributes
    ----------
    name
        The former name (``"IDUE"``, ``"PS"``, ``"LIP"``, or the family's own name).
    families
        The registered families it groups, in display order.
    """

    name: str
    families: tuple[Family, ...]

    @property
    def paper(self) -> str:
        """BibTeX key of the first family's paper."""
        return self.families[0].paper

    @property
    def inputs(self) -> str:
        """``"items"`` or ``"itemsets"`` (shared by the grouped families)."""
        return self.families[0].inputs

    @property
    def description(self) -> str:
        """The first family's description."""
        return self.families[0].description

    def examples(self) -> Sequence[Any]:
        """Every grouped family's examples."""
        return tuple(m for f in self.families for m in f.examples())

    def budget_sweeps(self) -> tuple[BudgetSweep, ...]:
        """Every grouped family's sweeps."""
        return tuple(s for f in self.families for s in f.budget_sweeps())


def registered_mechanisms() -> tuple[FormerFamily, ...]:
    """Every registered family under its former name, in display order (use :func:`ldpkit.family.families`)."""
    groups: dict[str, list[Family]] = {}
    for fam in families():
        groups.setdefault(_FORMER_GROUP.get(fam.name, fam.name), []).append(fam)
    return tuple(FormerFamily(name, tuple(members)) for name, members in groups.items())


def get_mechanism(name: str) -> FormerFamily:
    """The registered families under the former name ``name`` (use :func:`ldpkit.family.get_family`)."""
    reg: Registry[FormerFamily] = Registry("mechanism")
    for group in registered_mechanisms():
        reg.add(group.name, group)
    return reg.get(name)
