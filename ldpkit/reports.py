"""Report provenance: every report container records the mechanism configuration that made it.

A server that aggregates reports with a differently configured mechanism gets silently biased
estimates (RAPPOR's estimator on OUE reports, another epsilon, another ``d``, ``ell`` or hash
family).  So ``perturb`` stamps its reports with the mechanism's :class:`Provenance` (its class
and the parameters its reports depend on), and ``aggregate`` refuses reports whose provenance
differs, saying what differs.  Reports built by hand carry no provenance; they are validated
(shape, dtype, range) and accepted.

Single-item reports (GRR, uRR, :class:`~ldpkit.channel_oracle.ChannelOracle`) are
:class:`ItemReports`, a numpy integer array that carries its provenance; unary and hashed
reports keep theirs in a ``source`` field.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validation import describe

__all__ = ["ItemReports", "Provenance", "array_digest", "check_source", "report_row", "source_of", "with_source"]


def array_digest(values: Any) -> str:
    """A short, exact fingerprint of an array of parameters (dtype, shape and bytes)."""
    arr = np.ascontiguousarray(np.asarray(values))
    h = hashlib.sha256(str((arr.dtype.str, arr.shape)).encode() + arr.tobytes()).hexdigest()[:16]
    return f"<{arr.size} values, sha256 {h}>"


@dataclass(frozen=True)
class Provenance:
    """The mechanism configuration that produced a batch of reports.

    Attributes
    ----------
    mechanism
        The mechanism's class name.
    params
        ``(name, value)`` pairs of every parameter the reports' meaning depends on (arrays are
        given by :func:`array_digest`).

    Examples
    --------
    >>> import ldpkit
    >>> ldpkit.OUE(10, 1.0).provenance.describe()
    'OUE(d=10, epsilon=1.0)'
    >>> ldpkit.UnaryEncoding([0.6, 0.7], [0.2, 0.3]).provenance.describe()  # doctest: +ELLIPSIS
    'UnaryEncoding(d=2, a=<2 values, sha256 ...>, b=<2 values, sha256 ...>)'
    """

    mechanism: str
    params: tuple[tuple[str, Any], ...]

    def describe(self) -> str:
        """``Mechanism(name=value, ...)``."""
        inner = ", ".join(f"{k}={_show(v)}" for k, v in self.params)
        return f"{self.mechanism}({inner})"

    def differences(self, other: Provenance) -> list[str]:
        """What differs between two provenances, one phrase per difference."""
        out = []
        if self.mechanism != other.mechanism:
            out.append(f"mechanism {self.mechanism} != {other.mechanism}")
        mine, theirs = dict(self.params), dict(other.params)
        for key in list(mine) + [k for k in theirs if k not in mine]:
            a, b = mine.get(key, "<absent>"), theirs.get(key, "<absent>")
            if a != b:
                out.append(f"{key} {_show(a)} != {_show(b)}")
        return out


def _show(value: Any) -> str:
    if isinstance(value, Provenance):
        return value.describe()
    if isinstance(value, float):
        return repr(value)
    return value if isinstance(value, str) else describe(value)


class ItemReports(np.ndarray):
    """Single-item reports: an int64 array of reported items (or output indices) with a provenance.

    Behaves as a numpy array everywhere; ``source`` is the :class:`Provenance` of the
    mechanism that made it (``None`` for arrays built by hand), and slices keep it.

    Examples
    --------
    >>> import ldpkit
    >>> reports = ldpkit.GRR(4, 1.0).perturb([0, 1, 2, 3], rng=0)
    >>> reports.source.describe(), len(reports)
    ('GRR(d=4, epsilon=1.0)', 4)
    """

    source: Provenance | None

    def __new__(cls, values: Any, source: Provenance | None = None) -> ItemReports:
        obj = np.asarray(values).view(cls)
        obj.source = source
        return obj

    def __array_finalize__(self, obj: Any) -> None:
        self.source = getattr(obj, "source", None)

    def __reduce__(self) -> Any:  # keep the provenance through pickling
        base = super().__reduce__()
        return (base[0], base[1], (*base[2], self.source))

    def __setstate__(self, state: Any) -> None:
        super().__setstate__(state[:-1])
        self.source = state[-1]


def report_row(reports: Any, i: int) -> Any:
    """Report ``i`` of a container as a plain value: an ``int`` for single-item reports, else the container's ``row(i)``."""
    if isinstance(reports, np.ndarray):
        return int(reports[i])
    return reports.row(i)


def source_of(reports: Any) -> Provenance | None:
    """The provenance a report container carries (``None`` for hand-built reports)."""
    src = getattr(reports, "source", None)
    return src if isinstance(src, Provenance) else None


def check_source(reports: Any, expected: Provenance) -> None:
    """Refuse reports made by a differently configured mechanism (hand-built reports pass).

    Raises
    ------
    ValueError
        Naming both configurations and every parameter that differs.
    """
    src = source_of(reports)
    if src is not None and src != expected:
        diff = "; ".join(src.differences(expected))
        raise ValueError(
            f"reports were made by {src.describe()} but are aggregated by {expected.describe()} ({diff}): "
            "their estimate would be biased"
        )


def with_source(reports: Any, source: Provenance | None) -> Any:
    """The same reports stamped with another provenance (used by wrappers such as Padding-and-Sampling)."""
    if isinstance(reports, np.ndarray):
        return ItemReports(np.asarray(reports), source)
    if dataclasses.is_dataclass(reports) and any(f.name == "source" for f in dataclasses.fields(reports)):
        return dataclasses.replace(reports, source=source)  # type: ignore[type-var]
    return reports
