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

Each report type has a :class:`ReportCodec`, the way report files (:mod:`ldpkit.reportio`) store
it.  The codec is declared beside the report container: the single-item codec here, the unary,
hashed and pair codecs in :mod:`ldpkit.unary`, :mod:`ldpkit.olh` and :mod:`ldpkit.hadamard`, each
registered by the family that introduces it (:class:`ldpkit.family.Family`, ``codec``).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ._registry import Registry
from ._validation import ArgumentTypeError, describe

__all__ = [
    "BLOCK_REPORTS",
    "ItemReports",
    "Provenance",
    "ReportCodec",
    "array_digest",
    "check_report_field",
    "check_report_source",
    "check_reports",
    "check_source",
    "codec_for",
    "register_report_codec",
    "registered_codecs",
    "report_row",
    "source_of",
    "unregister_report_codec",
    "with_source",
]

#: reports per block written by :func:`ldpkit.reportio.save_reports` (about 125 MB for OUE at d = 1000)
BLOCK_REPORTS = 1_000_000


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


def check_report_source(source: Any, owner: str) -> None:
    """Refuse a ``source`` field of a report container that is neither a :class:`Provenance` nor ``None``.

    Examples
    --------
    >>> from ldpkit.reports import check_report_source
    >>> check_report_source(None, "PairReports")
    >>> check_report_source("OUE", "PairReports")
    Traceback (most recent call last):
    ...
    ldpkit._validation.ArgumentTypeError: PairReports source must be a Provenance or None, got 'OUE'
    """
    if source is not None and not isinstance(source, Provenance):
        raise ArgumentTypeError(f"{owner} source must be a Provenance or None, got {describe(source)}")


def check_report_field(value: Any, name: str, *, power_of_two: bool = False) -> int:
    """An integer field ``>= 2`` of a report container (a hash range, a Hadamard order), as ``int``.

    ``name`` names the container and the field (``"HashedReports g"``).  A value that is not an
    integer raises :class:`~ldpkit.ArgumentTypeError`, one below 2 (or, with ``power_of_two``, not a
    power of two) :class:`ValueError`.

    Examples
    --------
    >>> from ldpkit.reports import check_report_field
    >>> check_report_field(8, "PairReports K", power_of_two=True)
    8
    >>> check_report_field(6, "PairReports K", power_of_two=True)
    Traceback (most recent call last):
    ...
    ValueError: PairReports K must be a power of two >= 2, got 6
    """
    what = "a power of two" if power_of_two else "an integer"
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ArgumentTypeError(f"{name} must be {what} >= 2, got {describe(value)}")
    k = int(value)
    if k < 2 or (power_of_two and k & (k - 1)):
        raise ValueError(f"{name} must be {what} >= 2, got {describe(value)}")
    return k


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


def check_reports(reports: Any, kind: type, expected: Provenance, **sizes: int) -> None:
    """Refuse reports of another mechanism (:func:`check_source`), of another type than ``kind``, or of other sizes.

    ``sizes`` are the container's size fields and the values the aggregating mechanism uses
    (``K=8``); the first that differs is named.

    Examples
    --------
    >>> from ldpkit import FHR
    >>> from ldpkit.reports import check_reports
    >>> fhr = FHR(6, 1.0)
    >>> check_reports(fhr.perturb([0, 1], rng=0), type(fhr.perturb([0], rng=0)), fhr.provenance, K=8)
    >>> check_reports([0, 1], type(fhr.perturb([0], rng=0)), fhr.provenance, K=8)
    Traceback (most recent call last):
    ...
    ldpkit._validation.ArgumentTypeError: reports must be PairReports, got list
    """
    check_source(reports, expected)
    if not isinstance(reports, kind):
        raise ArgumentTypeError(f"reports must be {kind.__name__}, got {type(reports).__name__}")
    for name, want in sizes.items():
        got = getattr(reports, name)
        if got != want:
            raise ValueError(f"reports were made with {name}={got}, this oracle uses {name}={want}")


def with_source(reports: Any, source: Provenance | None) -> Any:
    """The same reports stamped with another provenance (used by wrappers such as Padding-and-Sampling)."""
    if isinstance(reports, np.ndarray):
        return ItemReports(np.asarray(reports), source)
    if dataclasses.is_dataclass(reports) and any(f.name == "source" for f in dataclasses.fields(reports)):
        return dataclasses.replace(reports, source=source)  # type: ignore[type-var]
    return reports


# ============================================================================ report codecs
@dataclass(frozen=True)
class ReportCodec:
    """How one report type is written to and read from files.

    Attributes
    ----------
    kind
        Name stored in files (``"item"``, ``"unary"``, ...).
    type
        The report class.
    columns
        ``(name, dtype, narrow)`` of each column: its canonical numpy type, and whether integer
        values may be stored in the narrowest unsigned type that holds them.
    meta
        ``reports -> dict`` of the scalars besides the columns (``d``, ``g``, ``K``).
    to_columns
        ``reports -> tuple of arrays`` (first axis: reports), in the order of ``columns``.
    build
        ``(columns, meta, source) -> reports``.
    csv_format, csv_parse
        Optional conversions of a column to and from CSV text (default: integers as text, a
        row of a 2-d column as integers separated by spaces).
    widths
        ``meta -> width of each column``: ``None`` for a 1-d column (one value per report), an
        integer ``w`` for a 2-d column of ``w`` values per report (default: every column 1-d).
    """

    kind: str
    type: type
    columns: tuple[tuple[str, str, bool], ...]
    meta: Callable[[Any], dict[str, Any]]
    to_columns: Callable[[Any], tuple[np.ndarray, ...]]
    build: Callable[[tuple[np.ndarray, ...], dict[str, Any], Optional[Provenance]], Any]
    csv_format: Optional[Callable[[np.ndarray, dict[str, Any]], list[str]]] = None
    csv_parse: Optional[Callable[[list[str], dict[str, Any]], np.ndarray]] = None
    widths: Optional[Callable[[dict[str, Any]], tuple[Optional[int], ...]]] = None

    def column_widths(self, meta: dict[str, Any]) -> tuple[Optional[int], ...]:
        """Width of each column for reports with ``meta`` (``None``: one value per report)."""
        return (None,) * len(self.columns) if self.widths is None else tuple(self.widths(meta))

    def csv_rows(self, meta: dict[str, Any]) -> int:
        """Reports per CSV batch: about 16 MB of text (8 characters per stored byte), at most
        :data:`~ldpkit.reports.BLOCK_REPORTS`."""
        row_bytes = sum(np.dtype(dtype).itemsize * (1 if w is None else int(w))
                        for (_, dtype, _), w in zip(self.columns, self.column_widths(meta)))
        return max(1, min(BLOCK_REPORTS, 2**24 // (8 * row_bytes)))


_CODECS: Registry[ReportCodec] = Registry("report codec")


def register_report_codec(codec: ReportCodec) -> ReportCodec:
    """Add a report type (an existing kind is an error); returns ``codec``.

    A family that introduces a report type declares its codec instead
    (:class:`ldpkit.family.Family`, ``codec``), which registers it with the family.
    """
    if not isinstance(codec, ReportCodec):
        raise ArgumentTypeError(f"expected a ReportCodec, got {codec!r}")
    return _CODECS.add(codec.kind, codec)


def unregister_report_codec(kind: str) -> None:
    """Remove a report type (tests that register their own clean up with this)."""
    _CODECS.remove(kind)


def registered_codecs() -> tuple[ReportCodec, ...]:
    """Every registered report type, in registration order."""
    return _CODECS.values()


def codec_for(reports: Any) -> ReportCodec:
    """The codec of a report container (the most specific registered type it is an instance of).

    A plain 1-d integer array counts as single-item reports built by hand (``item``).

    Examples
    --------
    >>> import ldpkit
    >>> from ldpkit.reports import codec_for
    >>> codec_for(ldpkit.OUE(3, 1.0).perturb([0, 1, 2], rng=0)).kind
    'unary'
    """
    codecs = registered_codecs()
    for codec in codecs:
        if type(reports) is codec.type:
            return codec
    for codec in codecs:
        if isinstance(reports, codec.type):
            return codec
    if isinstance(reports, np.ndarray) and reports.ndim == 1 and reports.dtype.kind in "iu":
        return _CODECS.get("item")  # hand-built single-item reports: a plain integer array
    kinds = ", ".join(c.type.__name__ for c in codecs)
    raise ArgumentTypeError(f"no report file format for {type(reports).__name__} (known: {kinds})")


# the codec of single-item reports (ItemReports)
ITEM_CODEC = register_report_codec(ReportCodec(
    "item", ItemReports, (("report", "<i8", True),), lambda r: {},
    lambda r: (np.asarray(r).view(np.ndarray).astype(np.int64, copy=False).reshape(-1),),
    lambda cols, meta, src: ItemReports(cols[0], src)))
