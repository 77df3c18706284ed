"""How ``ldpkit check`` compares a rerun of an experiment with its stored reference.

Each registered :class:`~ldpkit.experiments.Experiment` carries a
:class:`~ldpkit.experiments.Comparison` (documented there); the
comparison itself is :mod:`ldpkit.experiments.check`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["EXACT", "Comparison"]


@dataclass(frozen=True)
class Comparison:
    """How ``ldpkit check`` compares a rerun of one experiment with its reference (:mod:`ldpkit.experiments.check`).

    Attributes
    ----------
    keys
        Columns (after :func:`~ldpkit.experiments.flat_frame` and resetting a named
        index) that name a setting; rows are matched on them.  Empty: rows are matched in order.
    repeat
        Column numbering the independent repeats of a setting; every other column is then a
        Monte Carlo value averaged over it, unless listed in ``exact``.
    exact
        With ``repeat``: columns whose value is the same in every repeat (compared exactly).
    se
        Value column -> the column holding the standard error of that value where it is a
        simulated mean (rows where the standard error is missing are exact values).
    simulated_se
        Columns of ``se`` that are themselves estimated by the simulation (a standard deviation
        over its trials, not an exact formula): they serve as the standard error of their column
        and are not compared themselves, since another random stream estimates them anew.  The
        other ``se`` columns are exact values, compared as such.
    ignore
        Column -> why it is not compared.
    rtol
        Relative tolerance of exact floating-point values.

    Examples
    --------
    >>> spec = Comparison(keys=("eps", "mechanism"), repeat="repeat", exact=("mse_theory",))
    >>> spec.repeat, spec.rtol
    ('repeat', 1e-06)
    """

    keys: tuple[str, ...] = ()
    repeat: str | None = None
    exact: tuple[str, ...] = ()
    se: Mapping[str, str] = field(default_factory=dict)
    ignore: Mapping[str, str] = field(default_factory=dict)
    rtol: float = 1e-6
    simulated_se: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("keys", "exact", "simulated_se"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{name} must be a tuple of column names, got {value!r}")
            object.__setattr__(self, name, tuple(value))
        object.__setattr__(self, "se", MappingProxyType(dict(self.se)))
        object.__setattr__(self, "ignore", MappingProxyType(dict(self.ignore)))
        stray = [c for c in self.simulated_se if c not in self.se.values()]
        if stray:
            raise ValueError(f"simulated_se names columns that are no standard error of se: {stray}")
        if not (isinstance(self.rtol, float) and 0 <= self.rtol < 1):
            raise ValueError(f"rtol must be a float in [0, 1), got {self.rtol!r}")


#: The comparison of an experiment that declares none (every value exact, rows in order).
EXACT = Comparison()
