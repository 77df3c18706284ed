"""Reports as files: save, load, stream and concatenate any mechanism's reports, with their provenance.

A collection writes reports where they arrive and estimates later, elsewhere, perhaps from many
files.  A report file therefore carries everything the estimate needs and everything a check
needs: the mechanism that made the reports (its class and the arguments that rebuild it, see
:meth:`~ldpkit.base.FrequencyOracle.arguments`), its :class:`~ldpkit.reports.Provenance`, the
:class:`~ldpkit.domain.Domain` of labels if there is one, a free description of the data, and
the reports themselves.  Loading rebuilds the mechanism and refuses the file if the rebuilt
mechanism's provenance differs from the stored one (another ldpkit, another solver output), so
an estimate is never computed with a mechanism other than the one that made the reports.

Two encodings (the format is documented in the tutorial chapter, :ref:`sec-tutorial-files`):

* **binary** (any suffix but ``.csv``; ``.ldpr`` by convention): the bytes ``LDPKREPS``, the
  format version, a JSON header with its CRC-32, then blocks of reports, each with its row count,
  the storage type of each column and a CRC-32 of its bytes, then an end record with the totals.
  A file is read block by block in bounded memory (:meth:`ReportFile.batches`), integer columns
  are stored in the narrowest unsigned type that holds the block (two bytes per GRR report at
  ``d = 1000``), and a truncated file (no end record, a short block) or a corrupted one (a
  checksum that fails, totals that disagree) is refused with the file's name and what is wrong.
* **CSV** (suffix ``.csv``), the plain interoperable form: a first line
  ``# ldpkit-reports <header JSON>``, a line of column names, one report per line (unary reports
  as a string of ``d`` zeros and ones), and a last line ``# end {"n": ...}``.  ``pandas.read_csv(path,
  comment="#")`` reads the reports.

The report types are registered codecs (:class:`~ldpkit.reports.ReportCodec`): ``item``
(:class:`~ldpkit.reports.ItemReports`), ``unary`` (:class:`~ldpkit.unary.UnaryReports`), ``hashed``
(:class:`~ldpkit.olh.HashedReports`) and ``pair`` (:class:`~ldpkit.hadamard.PairReports`).  A family
that introduces a report type declares its codec (:class:`ldpkit.family.Family`, ``codec``).  A
file stores the mechanism's class and family, and only the classes of registered families are
rebuilt; saving a mechanism whose class no registered family declares is refused, so that what
is written can be read.  Every registered family's round trip is checked by the contract test.

Examples
--------
>>> import os, tempfile
>>> import numpy as np
>>> from ldpkit import OUE
>>> from ldpkit.reportio import concat_reports, load_reports, open_reports, save_reports
>>> oue = OUE(5, 1.0)
>>> reports = oue.perturb(np.repeat(np.arange(5), 20), rng=1)
>>> path = os.path.join(tempfile.mkdtemp(), "day1.ldpr")
>>> save_reports(path, reports, oue, data="five items, 20 users each (doctest)")
>>> back = load_reports(path)
>>> bool(np.array_equal(back.bits, reports.bits)), back.source == oue.provenance
(True, True)
>>> f = open_reports(path)
>>> f.mechanism == oue, f.n, f.data
(True, 100, 'five items, 20 users each (doctest)')
>>> len(concat_reports([reports, back]))
200
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import struct
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from . import __version__
from ._validation import ArgumentTypeError
from .domain import Domain
from .family import families, family_of, load_module
from .reports import (
    BLOCK_REPORTS,
    Provenance,
    ReportCodec,
    codec_for,
    register_report_codec,
    source_of,
    unregister_report_codec,
)
from .reports import registered_codecs as _all_codecs

__all__ = [
    "BLOCK_REPORTS",
    "FORMAT_VERSION",
    "ReportCodec",
    "ReportFile",
    "ReportFileError",
    "ReportWriter",
    "build_mechanism",
    "codec_for",
    "concat_reports",
    "load_reports",
    "mechanism_config",
    "open_reports",
    "register_report_codec",
    "registered_codecs",
    "unregister_report_codec",
    "save_reports",
]

#: version of the report file format this ldpkit writes (it reads every version up to this one)
FORMAT_VERSION = 1

_MAGIC = b"LDPKREPS"
_BLOCK = b"BLK1"
_END = b"END1"
_END_SIZE = 4 + 8 + 8 + 4  # tag, total reports, number of blocks, CRC-32 of the header
_CSV_HEAD = "# ldpkit-reports "
_CSV_END = "# end "


class ReportFileError(ValueError):
    """A report file that cannot be read as what it claims: truncated, corrupted, or of another configuration."""


# ============================================================================ values as JSON
def encode_value(value: Any) -> Any:
    """Exact JSON form of a mechanism argument or provenance value (arrays as base64 bytes)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else {"$float": repr(v)}
    if isinstance(value, np.ndarray):
        arr = np.ascontiguousarray(value)
        if arr.dtype.kind not in "biuf":
            raise ArgumentTypeError(f"cannot store an array of dtype {arr.dtype}")
        le = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
        return {"$array": {"dtype": le.dtype.str, "shape": list(arr.shape), "data": base64.b64encode(le.tobytes()).decode()}}
    if isinstance(value, tuple):
        return {"$tuple": [encode_value(v) for v in value]}
    if isinstance(value, list):
        return [encode_value(v) for v in value]
    if isinstance(value, Provenance):
        return {"$provenance": {"mechanism": value.mechanism, "params": [[k, encode_value(v)] for k, v in value.params]}}
    if isinstance(value, dict):
        bad = [k for k in value if not isinstance(k, str) or k.startswith("$")]
        if bad:
            raise ArgumentTypeError(f"cannot store a dict key {bad[0]!r} (keys are strings not starting with '$')")
        return {k: encode_value(v) for k, v in value.items()}
    if callable(getattr(value, "arguments", None)) and hasattr(value, "provenance"):
        return {"$mechanism": mechanism_config(value)}
    raise ArgumentTypeError(f"cannot store a value of type {type(value).__name__}: {value!r}")


def decode_value(value: Any) -> Any:
    """Inverse of :func:`_encode`."""
    if isinstance(value, list):
        return [decode_value(v) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        (tag, body), = value.items()
        if tag == "$float":
            return float(body)
        if tag == "$array":
            raw = base64.b64decode(body["data"])
            return np.frombuffer(raw, dtype=np.dtype(body["dtype"])).reshape(body["shape"]).astype(
                np.dtype(body["dtype"]).newbyteorder("="))
        if tag == "$tuple":
            return tuple(decode_value(v) for v in body)
        if tag == "$provenance":
            return Provenance(body["mechanism"], tuple((k, decode_value(v)) for k, v in body["params"]))
        if tag == "$mechanism":
            return build_mechanism(body)
    return {k: decode_value(v) for k, v in value.items()}


# ============================================================================ mechanisms as data
def _class_key(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _readable_classes(key: Optional[str] = None) -> dict[str, type]:
    """Class key -> class, for the class of every registered family (what a file may name).

    With ``key`` (a stored ``module.Class`` name) only the kit's module it names is imported first
    (:func:`ldpkit.family.load_module`: only a module that registers a family), so that rebuilding a
    GRR does not import IDUE's solvers; without it, or when that module does not declare the class,
    every family module is discovered.
    """
    if key is not None and load_module(key.rpartition(".")[0]):
        found = {_class_key(f.mechanism): f.mechanism for f in families(discover=False)}
        if key in found:
            return found
    return {_class_key(f.mechanism): f.mechanism for f in families()}


def mechanism_config(mechanism: Any) -> dict[str, Any]:
    """The JSON-ready record that rebuilds ``mechanism``: its class, its family, arguments and provenance.

    Raises
    ------
    NotImplementedError
        When the family does not state its arguments (:meth:`~ldpkit.base.FrequencyOracle.arguments`).
    ValueError
        When no registered family declares the mechanism's class (:func:`ldpkit.family.register_family`):
        a reader could not rebuild it, so it is refused before anything is written.

    Examples
    --------
    >>> from ldpkit import GRR
    >>> from ldpkit.reportio import build_mechanism, mechanism_config
    >>> cfg = mechanism_config(GRR(4, 1.0))
    >>> cfg["class"], cfg["family"], cfg["arguments"]
    ('ldpkit.grr.GRR', 'GRR', {'d': 4, 'epsilon': 1.0})
    >>> build_mechanism(cfg)
    GRR(d=4, epsilon=1)
    """
    args = mechanism.arguments()
    family = family_of(mechanism)
    if family is None:
        raise ValueError(f"cannot store a {_class_key(type(mechanism))} mechanism: no registered family declares its "
                         "class, so a reader could not rebuild it; register its family "
                         "(ldpkit.family.register_family) in the module that defines it")
    return {"class": _class_key(type(mechanism)), "family": family.name, "arguments": encode_value(args),
            "provenance": encode_value(mechanism.provenance)}


def build_mechanism(config: Any) -> Any:
    """Rebuild a mechanism from :func:`mechanism_config`, checking that it has the stored provenance.

    Only the classes of registered families (:func:`ldpkit.family.families`) are built: a file
    cannot name arbitrary code, and no module named by a file is imported.  A family defined
    outside ldpkit is readable once the module that registers it is imported.

    Raises
    ------
    ValueError
        An unknown class, arguments the constructor refuses, or a rebuilt mechanism whose
        provenance differs from the stored one (naming what differs).
    """
    if not isinstance(config, dict) or not {"class", "arguments"} <= set(config):
        raise ValueError(f"a stored mechanism must be an object with 'class' and 'arguments', got {config!r}")
    cls: Any = _readable_classes(str(config["class"])).get(config["class"])
    if cls is None:
        family = config.get("family")
        why = (f"its family {family!r} is not registered in this process: import the module that registers it"
               if isinstance(family, str) else f"no family registered with this ldpkit {__version__} declares it")
        raise ValueError(f"unknown mechanism class {config['class']!r} ({why})")
    args = decode_value(config["arguments"])
    try:
        mech = cls.from_arguments(args)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"cannot rebuild {config['class']} from its stored arguments: {exc}") from exc
    stored = config.get("provenance")
    if stored is not None:
        want = decode_value(stored)
        if mech.provenance != want:
            diff = "; ".join(mech.provenance.differences(want))
            raise ValueError(
                f"rebuilding {config['class']} gave {mech.provenance.describe()}, but the reports were made by "
                f"{want.describe()} ({diff}); pass the mechanism that made them"
            )
    return mech


# ============================================================================ report codecs
def registered_codecs() -> tuple[ReportCodec, ...]:
    """Every registered report type (those of every registered family included)."""
    families()  # the first look-up imports every module that registers a family, and so its codec
    return _all_codecs()


def _codec_named(kind: Any, path: str, family: Any = None) -> ReportCodec:
    for codecs in (_all_codecs, registered_codecs):  # those registered so far, then after discovery
        for codec in codecs():
            if codec.kind == kind:
                return codec
    why = (f"its mechanism's family {family!r} is not registered in this process: import the module that registers it"
           if isinstance(family, str) and family not in [f.name for f in families()]
           else f"this ldpkit reads {[c.kind for c in registered_codecs()]}")
    raise ReportFileError(f"{path}: unknown report kind {kind!r} ({why})")


# ============================================================================ concatenation
def concat_reports(batches: Sequence[Any]) -> Any:
    """One report container holding every batch, in order; batches of another configuration are refused.

    All batches must be of one report type with the same ``d``/``g``/``K`` and the same
    provenance (hand-built batches, without one, concatenate only with each other).

    Raises
    ------
    ValueError
        Naming the first batch that differs from the first and what differs.
    """
    batches = list(batches)
    if not batches:
        raise ValueError("nothing to concatenate: no batches given")
    codec = codec_for(batches[0])
    meta, src = codec.meta(batches[0]), source_of(batches[0])
    for pos, batch in enumerate(batches[1:], start=1):
        other = codec_for(batch)
        if other is not codec:
            raise ValueError(f"batch {pos} holds {other.kind} reports, batch 0 {codec.kind} reports")
        if codec.meta(batch) != meta:
            raise ValueError(f"batch {pos} has {codec.meta(batch)}, batch 0 {meta}")
        _check_same_source(source_of(batch), src, f"batch {pos}", "batch 0")
    cols = [codec.to_columns(b) for b in batches]
    joined = tuple(np.concatenate([c[j] for c in cols]) for j in range(len(codec.columns)))
    return codec.build(joined, meta, src)


def _check_same_source(got: Optional[Provenance], want: Optional[Provenance], what: str, against: str) -> None:
    if got == want:
        return
    if got is None or want is None:
        made = "was built by hand (no provenance)"
        raise ValueError(
            f"{what} {made if got is None else 'was made by ' + got.describe()} but {against} "
            f"{made if want is None else 'was made by ' + want.describe()}"
        )
    diff = "; ".join(got.differences(want))
    raise ValueError(f"{what} was made by {got.describe()} but {against} by {want.describe()} ({diff})")


# ============================================================================ writing
def _narrow(col: np.ndarray) -> np.ndarray:
    """Integer column in the narrowest unsigned type that holds it (little-endian), if non-negative."""
    if col.size == 0 or col.dtype.kind not in "iu":
        return col
    lo, hi = int(col.min()), int(col.max())
    if lo < 0:
        return col
    for t in ("|u1", "<u2", "<u4"):
        if hi <= np.iinfo(np.dtype(t)).max:
            return col.astype(t)
    return col


def _config(mechanism: Any) -> Optional[dict[str, Any]]:
    """:func:`mechanism_config`, or ``None`` for a family that does not state its arguments."""
    try:
        return None if mechanism is None else mechanism_config(mechanism)
    except NotImplementedError:
        return None


def _header(codec: ReportCodec, meta: dict[str, Any], config: Optional[dict[str, Any]], source: Optional[Provenance],
            domain: Optional[Domain], data: Optional[str]) -> dict[str, Any]:
    return {
        "format": "ldpkit-reports", "version": FORMAT_VERSION, "kind": codec.kind, "meta": meta,
        "columns": [[name, dtype] for name, dtype, _ in codec.columns],
        "mechanism": config, "provenance": encode_value(source),
        "domain": None if domain is None else domain.to_json(), "data": data, "written_by": f"ldpkit {__version__}",
    }


class ReportWriter:
    """Write reports to a file batch by batch (bounded memory); the file appears complete or not at all.

    Batches must come from ``mechanism`` (their provenance is checked); the file is written under
    a temporary name and renamed when :meth:`close` writes its end record, so a crashed
    collection leaves no file that looks complete.  Use as a context manager.

    Parameters
    ----------
    path
        Destination; ``.csv`` writes the CSV form, anything else the binary form.
    mechanism
        The mechanism that made the reports (its arguments are stored so the file alone
        suffices to estimate).
    domain
        Labels of the items, stored with the reports.
    data
        One line saying what data the reports come from (shown by every output made from them).

    Raises
    ------
    ValueError
        At once, when no registered family declares the mechanism's class (so that a reader
        could not rebuild it; :func:`mechanism_config`).
    """

    def __init__(self, path: str | os.PathLike[str], mechanism: Any, *, domain: Optional[Domain] = None,
                 data: Optional[str] = None) -> None:
        if not hasattr(mechanism, "provenance"):
            raise ArgumentTypeError(f"mechanism must be an ldpkit mechanism, got {type(mechanism).__name__}")
        if domain is not None and not isinstance(domain, Domain):
            raise ArgumentTypeError(f"domain must be a Domain, got {type(domain).__name__}")
        if domain is not None and len(domain) != mechanism.d:
            raise ValueError(f"the domain has {len(domain)} labels but the mechanism {mechanism.d} items")
        if data is not None and (not isinstance(data, str) or "\n" in data):
            raise ArgumentTypeError(f"data must be one line of text, got {data!r}")
        # refused now, before anything is written, if no registered family declares the mechanism's class
        self._config = _config(mechanism)
        self.path = os.fspath(path)
        self.csv = self.path.lower().endswith(".csv")
        self.mechanism = mechanism
        self.domain = domain
        self.data = data
        self.n = 0
        self.blocks = 0
        self._tmp = self.path + ".partial"
        self._fh: Any = None
        self._codec: Optional[ReportCodec] = None
        self._meta: dict[str, Any] = {}
        self._header_crc = 0

    def __enter__(self) -> ReportWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def write(self, reports: Any) -> None:
        """Append one batch (any length; stored as blocks of at most :data:`~ldpkit.reports.BLOCK_REPORTS` reports)."""
        codec = codec_for(reports)
        src = source_of(reports)
        want = self.mechanism.provenance
        if src is not None and src != want:
            _check_same_source(src, want, "these reports", "the writer's mechanism")
        if self._codec is None:
            self._open(codec, codec.meta(reports))
        elif codec is not self._codec or codec.meta(reports) != self._meta:
            raise ValueError(f"{self.path}: batch of {codec.kind} reports {codec.meta(reports)} after "
                             f"{self._codec.kind} reports {self._meta}")
        cols = codec.to_columns(reports)
        n = int(cols[0].shape[0])
        step = min(codec.csv_rows(self._meta), BLOCK_REPORTS) if self.csv else BLOCK_REPORTS
        for start in range(0, n, step):
            part = tuple(c[start:start + step] for c in cols)
            if self.csv:
                self._write_csv_rows(part)
            else:
                self._write_block(part)
            self.n += int(part[0].shape[0])

    def _open(self, codec: ReportCodec, meta: dict[str, Any]) -> None:
        self._codec, self._meta = codec, meta
        head = _header(codec, meta, self._config, self.mechanism.provenance, self.domain, self.data)
        text = json.dumps(head, separators=(",", ":"), allow_nan=False)
        if self.csv:
            self._fh = open(self._tmp, "w", encoding="utf-8", newline="\n")
            self._fh.write(_CSV_HEAD + text + "\n")
            self._fh.write(",".join(name for name, _, _ in codec.columns) + "\n")
        else:
            raw = text.encode()
            self._header_crc = zlib.crc32(raw)
            self._fh = open(self._tmp, "wb")
            self._fh.write(_MAGIC + struct.pack("<II", FORMAT_VERSION, len(raw)) + raw + struct.pack("<I", self._header_crc))

    def _write_block(self, cols: tuple[np.ndarray, ...]) -> None:
        stored = [(_narrow(c) if narrow else c.astype(dtype, copy=False))
                  for c, (_, dtype, narrow) in zip(cols, self._codec.columns)]  # type: ignore[union-attr]
        payload = [memoryview(np.ascontiguousarray(c)).cast("B") for c in stored]  # type: ignore[arg-type]  # no copy
        crc = 0
        for p in payload:
            crc = zlib.crc32(p, crc)
        meta = json.dumps({"n": int(cols[0].shape[0]), "dtypes": [c.dtype.str for c in stored]}).encode()
        self._fh.write(_BLOCK + struct.pack("<I", len(meta)) + meta + struct.pack("<I", crc))
        for p in payload:
            self._fh.write(p)
        self.blocks += 1

    def _write_csv_rows(self, cols: tuple[np.ndarray, ...]) -> None:
        codec = self._codec
        assert codec is not None
        widths = codec.column_widths(self._meta)
        texts = [codec.csv_format(c, self._meta) if codec.csv_format else
                 (c.astype(str).tolist() if w is None else [" ".join(map(str, row)) for row in c.tolist()])
                 for c, w in zip(cols, widths)]
        self._fh.write("".join(",".join(row) + "\n" for row in zip(*texts)))
        self.blocks += 1

    def close(self) -> None:
        """Write the end record and move the file to its name (an empty writer writes nothing)."""
        if self._fh is None:
            if self._codec is None:
                raise ValueError(f"{self.path}: no reports were written")
            return
        if self.csv:
            self._fh.write(_CSV_END + json.dumps({"n": self.n}) + "\n")
        else:
            self._fh.write(_END + struct.pack("<QQI", self.n, self.blocks, self._header_crc))
        self._fh.close()
        self._fh = None
        os.replace(self._tmp, self.path)

    def abort(self) -> None:
        """Discard the partial file."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if os.path.exists(self._tmp):
            os.remove(self._tmp)


def save_reports(path: str | os.PathLike[str], reports: Any, mechanism: Any, *, domain: Optional[Domain] = None,
                 data: Optional[str] = None) -> None:
    """Write ``reports`` of ``mechanism`` to ``path`` (``.csv``: the CSV form; otherwise binary).

    Reports stamped by another mechanism are refused (naming what differs); hand-built reports
    are stored with ``mechanism``'s provenance.  See :class:`ReportWriter` for the parameters.
    """
    with ReportWriter(path, mechanism, domain=domain, data=data) as w:
        w.write(reports)


# ============================================================================ reading
class ReportFile:
    """An opened report file: its header, the rebuilt mechanism, and its reports block by block.

    Opening reads the header and the end record only (so a truncated file is refused at once);
    :meth:`batches` then reads one block at a time, checking each block's checksum.

    Parameters
    ----------
    path
        The file.
    mechanism
        The mechanism to read the reports with; by default the one stored in the file is rebuilt.
        Either way its provenance must equal the file's.

    Attributes
    ----------
    header
        The stored header (format, kind, meta, mechanism, provenance, domain, data, writer).
    mechanism
        The mechanism the reports belong to.
    source
        The provenance the reports carry.
    domain
        The :class:`~ldpkit.domain.Domain` of labels, or ``None``.
    data
        The stored description of the data, or ``None``.
    n
        Number of reports.
    """

    def __init__(self, path: str | os.PathLike[str], mechanism: Any = None) -> None:
        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"{self.path}: no such report file")
        self.csv = self.path.lower().endswith(".csv")
        self.header, self._data_start, self.n, self._blocks = (self._open_csv() if self.csv else self._open_binary())
        #: a digest of the header and of every report, set once :meth:`batches` has read the whole file
        self.fingerprint: Optional[str] = None
        h = self.header
        stored = h.get("mechanism")
        self.codec = _codec_named(h.get("kind"), self.path, stored.get("family") if isinstance(stored, dict) else None)
        self.meta: dict[str, Any] = dict(h.get("meta") or {})
        try:
            self.source: Optional[Provenance] = decode_value(h.get("provenance"))
            self.domain: Optional[Domain] = None if h.get("domain") is None else Domain.from_json(h["domain"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ReportFileError(f"{self.path}: corrupted header ({exc})") from exc
        self.data: Optional[str] = h.get("data")
        if mechanism is None:
            if h.get("mechanism") is None:
                raise ReportFileError(f"{self.path}: the file does not store its mechanism; pass mechanism=")
            try:
                mechanism = build_mechanism(h["mechanism"])
            except ValueError as exc:
                raise ReportFileError(f"{self.path}: {exc}") from exc
        elif self.source is not None and mechanism.provenance != self.source:
            diff = "; ".join(self.source.differences(mechanism.provenance))
            raise ReportFileError(f"{self.path}: reports were made by {self.source.describe()}, not by "
                                  f"{mechanism.provenance.describe()} ({diff})")
        self.mechanism = mechanism
        if self.domain is not None and len(self.domain) != mechanism.d:
            raise ReportFileError(f"{self.path}: the domain has {len(self.domain)} labels but the mechanism {mechanism.d} items")

    # ---------------------------------------------------------------- binary
    def _open_binary(self) -> tuple[dict[str, Any], int, int, int]:
        size = os.path.getsize(self.path)
        with open(self.path, "rb") as fh:
            start = fh.read(16)
            if start[:8] != _MAGIC:
                raise ReportFileError(f"{self.path}: not an ldpkit report file (it does not start with {_MAGIC!r})")
            if len(start) < 16:
                raise ReportFileError(f"{self.path}: truncated inside its header ({size} bytes)")
            version, hlen = struct.unpack("<II", start[8:16])
            if version < 1:
                raise ReportFileError(f"{self.path}: corrupted: format version {version} does not exist")
            if version > FORMAT_VERSION:
                raise ReportFileError(f"{self.path}: format version {version}, newer than this ldpkit reads "
                                      f"({FORMAT_VERSION}); upgrade ldpkit")
            raw = fh.read(hlen)
            crc = fh.read(4)
            if len(raw) < hlen or len(crc) < 4:
                raise ReportFileError(f"{self.path}: truncated inside its header ({size} bytes)")
            if zlib.crc32(raw) != struct.unpack("<I", crc)[0]:
                raise ReportFileError(f"{self.path}: corrupted header (checksum fails)")
            try:
                header = json.loads(raw)
            except ValueError as exc:  # pragma: no cover - the checksum passed
                raise ReportFileError(f"{self.path}: corrupted header ({exc})") from exc
            data_start = 16 + hlen + 4
            if size < data_start + _END_SIZE:
                raise ReportFileError(f"{self.path}: truncated: no end record (the writer did not finish)")
            fh.seek(size - _END_SIZE)
            end = fh.read(_END_SIZE)
        if end[:4] != _END:
            raise ReportFileError(f"{self.path}: truncated: no end record (the writer did not finish, "
                                  "or the file was cut)")
        n, blocks, hcrc = struct.unpack("<QQI", end[4:])
        if hcrc != zlib.crc32(raw):
            raise ReportFileError(f"{self.path}: corrupted: the end record belongs to another header")
        return header, data_start, int(n), int(blocks)

    def _binary_batches(self) -> Iterator[Any]:
        codec = self.codec
        widths = codec.column_widths(self.meta)
        size = os.path.getsize(self.path)
        seen = 0
        digest = hashlib.sha256(json.dumps(self.header, sort_keys=True).encode())
        with open(self.path, "rb") as fh:
            fh.seek(self._data_start)
            for block in range(self._blocks):
                tag = fh.read(4)
                if tag != _BLOCK:
                    raise ReportFileError(f"{self.path}: corrupted: block {block} does not start with a block tag")
                (mlen,) = struct.unpack("<I", fh.read(4))
                try:
                    bmeta = json.loads(fh.read(mlen))
                    (crc,) = struct.unpack("<I", fh.read(4))
                    rows = int(bmeta["n"])
                    dtypes = [np.dtype(t) for t in bmeta["dtypes"]]
                except (ValueError, KeyError, TypeError, struct.error) as exc:
                    raise ReportFileError(f"{self.path}: corrupted: block {block} has an unreadable record ({exc})") from exc
                if len(dtypes) != len(codec.columns) or rows < 0:
                    raise ReportFileError(f"{self.path}: corrupted: block {block} describes {len(dtypes)} columns")
                cols = []
                got_crc = 0
                for (name, dtype, _), width, dt in zip(codec.columns, widths, dtypes):
                    per_row = 1 if width is None else int(width)
                    count = rows * per_row
                    nbytes = count * dt.itemsize
                    if fh.tell() + nbytes > size - _END_SIZE:
                        raise ReportFileError(f"{self.path}: truncated inside block {block} (reports {seen} on)")
                    buf = bytearray(nbytes)  # writable: the array below needs no copy
                    fh.readinto(buf)
                    got_crc = zlib.crc32(buf, got_crc)
                    arr = np.frombuffer(buf, dtype=dt).astype(np.dtype(dtype).newbyteorder("="), copy=False)
                    cols.append(arr if width is None else arr.reshape((rows, per_row)))
                    del buf, arr
                if got_crc != crc:
                    raise ReportFileError(f"{self.path}: corrupted: block {block} (reports {seen} to {seen + rows - 1}) "
                                          "fails its checksum")
                seen += rows
                digest.update(struct.pack("<QI", rows, crc))
                built = self._build(tuple(cols), block)
                cols.clear()  # hold one block at a time
                yield built
                del built
            if fh.tell() != size - _END_SIZE:
                raise ReportFileError(f"{self.path}: corrupted: {size - _END_SIZE - fh.tell()} stray bytes after the last block")
        if seen != self.n:
            raise ReportFileError(f"{self.path}: corrupted: blocks hold {seen} reports, the end record says {self.n}")
        self.fingerprint = digest.hexdigest()

    # ---------------------------------------------------------------- CSV
    def _open_csv(self) -> tuple[dict[str, Any], int, int, int]:
        with open(self.path, "rb") as fh:
            first = fh.readline().decode("utf-8", "replace")
            if not first.startswith(_CSV_HEAD):
                raise ReportFileError(f"{self.path}: not an ldpkit reports CSV (its first line does not start "
                                      f"with {_CSV_HEAD.strip()!r})")
            try:
                header = json.loads(first[len(_CSV_HEAD):])
            except ValueError as exc:
                raise ReportFileError(f"{self.path}: corrupted header line ({exc})") from exc
            if not isinstance(header, dict):
                raise ReportFileError(f"{self.path}: corrupted header line (not an object)")
            version = header.get("version")
            if isinstance(version, bool) or not isinstance(version, int) or version < 1:
                raise ReportFileError(f"{self.path}: corrupted header line (format version {version!r})")
            if version > FORMAT_VERSION:
                raise ReportFileError(f"{self.path}: format version {header.get('version')}, newer than this ldpkit "
                                      f"reads ({FORMAT_VERSION}); upgrade ldpkit")
            start = fh.tell()
            size = os.path.getsize(self.path)
            fh.seek(max(start, size - 4096))
            tail = fh.read().decode("utf-8", "replace").rstrip("\n").rsplit("\n", 1)[-1]
        if not tail.startswith(_CSV_END):
            raise ReportFileError(f"{self.path}: truncated: its last line is not the end record "
                                  f"'{_CSV_END.strip()} {{...}}' (the writer did not finish, or the file was cut)")
        try:
            n = int(json.loads(tail[len(_CSV_END):])["n"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ReportFileError(f"{self.path}: corrupted end record {tail!r}") from exc
        return header, start, n, -1

    def _csv_batches(self, rows_per_batch: int) -> Iterator[Any]:
        codec = self.codec
        names = [name for name, _, _ in codec.columns]
        seen = 0
        line_no = 2
        digest = hashlib.sha256(json.dumps(self.header, sort_keys=True).encode())
        with open(self.path, encoding="utf-8", newline="") as fh:
            fh.readline()
            got = fh.readline().rstrip("\r\n")
            if got.split(",") != names:
                raise ReportFileError(f"{self.path}: line 2 names the columns {got!r}, expected {','.join(names)!r}")
            batch: list[list[str]] = []
            first = last = 0  # file lines of the batch's first and last report
            ended = False
            for line in fh:
                line_no += 1
                if line.startswith("#"):
                    if line.startswith(_CSV_END):
                        ended = True
                        break
                    continue
                fields = line.rstrip("\r\n").split(",")
                if len(fields) != len(names):
                    raise ReportFileError(f"{self.path}: line {line_no} has {len(fields)} fields, expected {len(names)}")
                if not batch:
                    first = line_no
                last = line_no
                batch.append(fields)
                digest.update(line.encode())
                if len(batch) == rows_per_batch:
                    yield self._csv_build(batch, first, last)
                    seen += len(batch)
                    batch = []
            if batch:
                yield self._csv_build(batch, first, last)
                seen += len(batch)
        if not ended or seen != self.n:
            raise ReportFileError(f"{self.path}: corrupted: {seen} reports read, the end record says {self.n}")
        self.fingerprint = digest.hexdigest()

    def _csv_build(self, rows: list[list[str]], first_line: int, last_line: int) -> Any:
        codec = self.codec
        cols = []
        widths = codec.column_widths(self.meta)
        for j, ((name, dtype, _), width) in enumerate(zip(codec.columns, widths)):
            text = [r[j] for r in rows]
            native = np.dtype(dtype).newbyteorder("=")
            try:
                if codec.csv_parse is not None:
                    cols.append(codec.csv_parse(text, self.meta))
                elif width is None:
                    cols.append(np.array([int(t) for t in text], dtype=native))
                else:
                    values = [[int(v) for v in t.split()] for t in text]
                    bad = next((i for i, v in enumerate(values) if len(v) != width), None)
                    if bad is not None:
                        raise ValueError(f"report {bad} holds {len(values[bad])} values, expected {width}")
                    cols.append(np.array(values, dtype=native).reshape(len(values), width))
            except (ValueError, OverflowError) as exc:
                raise ReportFileError(f"{self.path}: column {name!r} of lines {first_line}-{last_line} "
                                      f"is not valid: {exc}") from exc
        return self._build(tuple(cols), f"lines {first_line}-{last_line}")

    # ---------------------------------------------------------------- shared
    def _build(self, cols: tuple[np.ndarray, ...], where: Any) -> Any:
        try:
            return self.codec.build(cols, self.meta, self.source)
        except (ValueError, TypeError) as exc:
            raise ReportFileError(f"{self.path}: corrupted reports in {'block ' + str(where) if isinstance(where, int) else where}: {exc}") from exc

    def batches(self, rows_per_batch: Optional[int] = None) -> Iterator[Any]:
        """The reports, one container per stored block (binary) or per ``rows_per_batch`` lines (CSV;
        default about 16 MB of text, :meth:`~ldpkit.reports.ReportCodec.csv_rows`)."""
        if self.csv:
            rows = self.codec.csv_rows(self.meta) if rows_per_batch is None else int(rows_per_batch)
            if rows < 1:
                raise ValueError(f"rows_per_batch must be at least 1, got {rows_per_batch!r}")
            return self._csv_batches(rows)
        return self._binary_batches()

    def read(self) -> Any:
        """All reports in one container (for files that fit in memory)."""
        parts = list(self.batches())
        if not parts:
            widths = self.codec.column_widths(self.meta)
            return self.codec.build(tuple(np.empty((0,) if w is None else (0, w), dtype=np.dtype(s[1]).newbyteorder("="))
                                          for s, w in zip(self.codec.columns, widths)), self.meta, self.source)
        return parts[0] if len(parts) == 1 else concat_reports(parts)

    def __repr__(self) -> str:
        what = self.source.describe() if self.source is not None else type(self.mechanism).__name__
        return f"ReportFile({os.path.basename(self.path)!r}: {self.n} {self.codec.kind} reports of {what})"


def open_reports(path: str | os.PathLike[str], mechanism: Any = None) -> ReportFile:
    """Open a report file (header and end record checked; reports read on demand). See :class:`ReportFile`."""
    return ReportFile(path, mechanism)


def load_reports(path: str | os.PathLike[str], mechanism: Any = None) -> Any:
    """All reports of a file, stamped with their provenance (``open_reports(path, mechanism).read()``)."""
    return ReportFile(path, mechanism).read()

