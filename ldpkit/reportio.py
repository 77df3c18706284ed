"""Reports as files: save, load, stream and concatenate any mechanism's reports, with their provenance.

A collection writes reports where they arrive and estimates later, elsewhere, perhaps from many
files.  A report file therefore carries everything the estimate needs and everything a check
needs: the mechanism that made the reports (its class and the arguments that rebuild it, see
:meth:`~ldpkit.base.FrequencyOracle.arguments`), its :class:`~ldpkit.reports.Provenance`, the
:class:`~ldpkit.domain.Domain` of labels if there is one, a free description of the data, and
the reports themselves.  Loading rebuilds the mechanism and refuses the file if the rebuilt
mechanism's provenance differs from the stored one (another ldpkit, another solver output), so
an estimate is never computed with a mechanism other than the one that made the reports.

Two encodings (the format, every field, the limits and the trust model are documented in the
tutorial chapter, :ref:`sec-tutorial-files`):

* **binary** (any suffix but ``.csv``; ``.ldpr`` by convention): the bytes ``LDPKREPS``, the
  format version, a JSON header with its CRC-32, then blocks of reports, each with its row count
  and the storage type of each column under one CRC-32 with its bytes, then an end record with
  the totals.  A file is read block by block in bounded memory (:meth:`ReportFile.batches`),
  integer columns are stored in the narrowest unsigned type that holds the block (two bytes per
  GRR report at ``d = 1000``), and a truncated file (no end record, a short block) or a corrupted
  one (a checksum that fails, totals that disagree) is refused with the file's name and what is
  wrong.  Files of the previous version (1, whose block records were outside the checksum) are
  read too, with the same whitelist of storage types.
* **CSV** (suffix ``.csv``), the plain interoperable form: a first line
  ``# ldpkit-reports <header JSON>``, a line of column names, one report per line (unary reports
  as a string of ``d`` zeros and ones), and a last line ``# end {"n": ...}``.  ``pandas.read_csv(path,
  comment="#")`` reads the reports.

**A file is input from outside.**  Every field is decoded by one validating decoder with a
schema and limits, inside one error boundary: whatever the bytes, opening or reading a file
either succeeds or raises :class:`ReportFileError` (a ``ValueError``) naming the file and the
field.  JSON is read without duplicate keys, non-finite numbers or integers beyond 64 bits, at
most 32 levels deep; a stored array names one of the storage types the writer uses and holds
exactly its bytes; a requested domain is at most ``LDPKIT_MAX_DOMAIN`` items
and a header at most ``LDPKIT_MAX_HEADER_BYTES`` bytes (both checked before
anything is allocated); no optimiser runs while a mechanism is rebuilt (a file stores solved
probabilities).  The CRC-32 checksums detect accidents (a flipped bit, a cut file), not
tampering: anyone can write a file that passes them.

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
import contextlib
import hashlib
import json
import math
import os
import re
import secrets
import struct
import zlib
from collections.abc import Iterator, Sequence
from typing import IO, Any, Optional

import numpy as np

from . import __version__
from ._validation import (
    MAX_USERS,
    ArgumentTypeError,
    check_domain_limit,
    check_text_line,
    max_domain,
    max_header_bytes,
    solving_refused,
)
from .domain import Domain
from .family import families, family_of, load_module
from .mechanism import Mechanism
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
    "READABLE_VERSIONS",
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
    "atomic_write",
    "decode_json",
    "decode_provenance",
    "FieldError",
    "object_fields",
    "check_format_version",
    "read_boundary",
    "MAX_JSON_DEPTH",
]

#: version of the report file format this ldpkit writes
FORMAT_VERSION = 2
#: the versions this ldpkit reads, 2 and 1 (block records outside the checksum; read with the same
#: whitelist of storage types, so a damaged record fails the block's checksum or the whitelist)
READABLE_VERSIONS = (1, 2)

_MAGIC = b"LDPKREPS"
_BLOCK = {1: b"BLK1", 2: b"BLK2"}
_END = b"END1"
_END_SIZE = 4 + 8 + 8 + 4  # tag, total reports, number of blocks, CRC-32 of the header
_CSV_HEAD = "# ldpkit-reports "
_CSV_END = "# end "
#: largest block record (``{"n": ..., "dtypes": [...]}``), in bytes
_MAX_RECORD = 1024
#: deepest nesting of JSON arrays and objects in a header or a state
MAX_JSON_DEPTH = 32
#: the header's fields: required ones, then optional ones (``None`` when absent)
_HEADER_REQUIRED = ("format", "version", "kind", "meta", "columns")
_HEADER_OPTIONAL = ("mechanism", "provenance", "domain", "data", "written_by")
#: storage types a stored array may name (what :func:`encode_value` writes: little-endian or one byte)
_ARRAY_DTYPES = frozenset({"|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8"})
#: storage types of a narrowed integer column (:func:`_narrow`), besides the column's own
_NARROW_DTYPES = ("|u1", "<u2", "<u4")
#: one CSV field: integers separated by single spaces (ASCII digits only: no ``1_0``, no other scripts' digits)
_CSV_FIELD = re.compile(r"-?[0-9]+(?: -?[0-9]+)*", re.ASCII)
_FINGERPRINT = "reports-sha256:"


class ReportFileError(ValueError):
    """A report file that cannot be read as what it claims: truncated, corrupted, or of another configuration."""


class FieldError(ValueError):
    """A field of a file that fails its schema or a limit: ``field`` names it (``header.meta``, ``state.n``, ...).

    Raised by the decoder's parts (:func:`decode_json`, :func:`object_fields`, ``decode_value``)
    and turned by :func:`read_boundary` into a :class:`ReportFileError` naming the file.
    """

    def __init__(self, field: str, why: str) -> None:
        super().__init__(f"{field}: {why}")
        self.field = field


@contextlib.contextmanager
def read_boundary(path: str, field: str = "") -> Iterator[None]:
    """The one error boundary of reading: any failure inside becomes a :class:`ReportFileError` naming ``path``.

    A ``ValueError`` keeps its message (prefixed with the path and ``field``); anything else (a
    ``KeyError``, ``TypeError``, ``RecursionError``, ``OverflowError``, ... of a file no schema
    foresaw) is named by its type.  ``OSError`` (the disk) passes unchanged.
    """
    try:
        yield
    except (ReportFileError, OSError):
        raise
    except RecursionError as exc:
        raise ReportFileError(f"{path}: {field + ': ' if field else ''}nested too deeply to read") from exc
    except ValueError as exc:
        text = " ".join(str(exc).split()) or type(exc).__name__
        prefix = f"{path}: " if not text.startswith(f"{path}:") else ""
        where = f"{field}: " if field and not isinstance(exc, FieldError) else ""
        raise ReportFileError(f"{prefix}{where}{text}") from exc
    except Exception as exc:  # the boundary: no other exception leaves a reader
        text = " ".join(str(exc).split())
        raise ReportFileError(f"{path}: {field + ': ' if field else ''}unreadable "
                              f"({type(exc).__name__}{': ' + text if text else ''})") from exc


# ============================================================================ JSON, validated
def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > 19 or not -(2**63) < int(text) < 2**63:
        raise ValueError(f"the integer {text[:24]}{'...' if len(text) > 24 else ''} is beyond 64 bits")
    return int(text)


def _json_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:24]} is beyond double precision")
    return value


def _json_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (a non-finite value is stored as {{\"$float\": ...}})")


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key[:40]!r} appears twice in one object")
        out[key] = value
    return out


def _depth_ok(value: Any, field: str) -> None:
    """Refuse JSON nested deeper than :data:`MAX_JSON_DEPTH` (iteratively: no recursion on hostile input)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            if depth > MAX_JSON_DEPTH:
                raise FieldError(field, f"nested more than {MAX_JSON_DEPTH} levels deep")
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))


def decode_json(raw: bytes | str, field: str) -> Any:
    """Strict JSON: UTF-8, no duplicate keys, no NaN or infinities, integers within 64 bits, at most
    :data:`MAX_JSON_DEPTH` levels deep; a :class:`FieldError` naming ``field`` otherwise.

    Examples
    --------
    >>> from ldpkit.reportio import decode_json
    >>> decode_json(b'{"n": 3}', "state")
    {'n': 3}
    >>> decode_json(b'{"n": 3, "n": 4}', "state")
    Traceback (most recent call last):
    ...
    ldpkit.reportio.FieldError: state: not valid JSON (the key 'n' appears twice in one object)
    """
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FieldError(field, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    else:
        text = raw
    try:
        value = json.loads(text, parse_int=_json_int, parse_float=_json_float, parse_constant=_json_constant,
                           object_pairs_hook=_json_object)
    except RecursionError:
        raise FieldError(field, f"nested more than {MAX_JSON_DEPTH} levels deep") from None
    except ValueError as exc:
        raise FieldError(field, f"not valid JSON ({' '.join(str(exc).split())})") from None
    _depth_ok(value, field)
    return value


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


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


def decode_value(value: Any, field: str = "value") -> Any:
    """Inverse of :func:`encode_value`, validating every tag against its schema.

    Tags: ``$float`` (``"inf"``, ``"-inf"`` or ``"nan"``), ``$array`` (exactly ``dtype`` from the
    storage types :func:`encode_value` writes, ``shape`` and ``data``: the base64 of exactly
    ``prod(shape)`` values, at most ``LDPKIT_MAX_DOMAIN`` of them), ``$tuple`` (a
    list), ``$provenance`` (``mechanism`` and ``params``, distinct names) and ``$mechanism`` (a
    record of :func:`mechanism_config`, rebuilt by :func:`build_mechanism`).  A plain object's
    keys never start with ``$``.

    Raises
    ------
    ValueError
        Naming ``field`` (the path to the value) and what is wrong.
    """
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FieldError(field, f"{value!r} is not a finite number")
        return value
    if isinstance(value, list):
        return [decode_value(v, f"{field}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, dict):
        raise FieldError(field, f"a value of type {type(value).__name__} cannot be stored")
    bad_keys = [k for k in value if not isinstance(k, str)]
    if bad_keys:
        raise FieldError(field, f"the key {bad_keys[0]!r} is not a string")
    tags = [k for k in value if k.startswith("$")]
    if not tags:
        return {k: decode_value(v, f"{field}.{k}") for k, v in value.items()}
    if len(value) != 1:
        raise FieldError(field, f"a tagged value has one key, got {sorted(value)[:5]}")
    tag, body = next(iter(value.items()))
    where = f"{field}.{tag}"
    if tag == "$float":
        if body not in ("inf", "-inf", "nan"):
            raise FieldError(where, "must be 'inf', '-inf' or 'nan' (finite numbers are stored as numbers), "
                                    f"got {_short(body)}")
        return float(body)
    if tag == "$array":
        return _decode_array(body, where)
    if tag == "$tuple":
        if not isinstance(body, list):
            raise FieldError(where, f"must be a list, got {_short(body)}")
        return tuple(decode_value(v, f"{where}[{i}]") for i, v in enumerate(body))
    if tag == "$provenance":
        return _decode_provenance(body, where)
    if tag == "$mechanism":
        return build_mechanism(body, field=where)
    raise FieldError(field, f"unknown tag {tag[:40]!r} (known: $float, $array, $tuple, $provenance, $mechanism)")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def object_fields(body: Any, required: Sequence[str], optional: Sequence[str], field: str) -> dict[str, Any]:
    """``body`` itself when it is an object holding every ``required`` key and no key outside ``required`` and
    ``optional``; a :class:`FieldError` naming ``field`` otherwise."""
    if not isinstance(body, dict):
        raise FieldError(field, f"must be an object, got {type(body).__name__} {_short(body)}")
    missing = [k for k in required if k not in body]
    if missing:
        raise FieldError(field, f"has no {', '.join(repr(k) for k in missing)}")
    unknown = [k for k in body if k not in required and k not in optional]
    if unknown:
        raise FieldError(field, f"unknown field {unknown[0][:40]!r} (this ldpkit {__version__} knows "
                          f"{', '.join([*required, *optional])})")
    return body


def check_format_version(version: Any, newest: int, invalid: str, newer: str) -> int:
    """``version`` when it is a whole number from 1 to ``newest``; a :class:`ReportFileError` otherwise.

    The check of a file's format version (a report file's, an aggregator state's).  ``invalid``
    is the message when ``version`` is not a whole number ``>= 1``; ``newer`` begins the message
    when it is above ``newest``, which goes on "newer than this ldpkit reads (newest); upgrade
    ldpkit".

    Examples
    --------
    >>> from ldpkit.reportio import check_format_version
    >>> check_format_version(1, 2, "f: no such version", "f: version 1,")
    1
    >>> check_format_version(3, 2, "f: no such version", "f: version 3,")
    Traceback (most recent call last):
    ...
    ldpkit.reportio.ReportFileError: f: version 3, newer than this ldpkit reads (2); upgrade ldpkit
    """
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ReportFileError(invalid)
    if version > newest:
        raise ReportFileError(f"{newer} newer than this ldpkit reads ({newest}); upgrade ldpkit")
    return version


def _decode_array(body: Any, field: str) -> np.ndarray:
    spec = object_fields(body, ("dtype", "shape", "data"), (), field)
    dtype, shape, data = spec["dtype"], spec["shape"], spec["data"]
    if not isinstance(dtype, str) or dtype not in _ARRAY_DTYPES:
        raise FieldError(f"{field}.dtype", f"must be one of {', '.join(sorted(_ARRAY_DTYPES))}, got {_short(dtype)}")
    if (not isinstance(shape, list) or len(shape) > 8
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)):
        raise FieldError(f"{field}.shape", f"must be a list of at most 8 non-negative integers, got {_short(shape)}")
    count = math.prod(shape)
    limit = max_domain()
    if count > limit:
        raise FieldError(f"{field}.shape", f"{shape} holds {count:,} values, above the limit of {limit:,} "
                                           "(LDPKIT_MAX_DOMAIN)")
    dt = np.dtype(dtype)
    nbytes = count * dt.itemsize
    if not isinstance(data, str) or len(data) != 4 * ((nbytes + 2) // 3):
        got = f"{len(data)} characters" if isinstance(data, str) else type(data).__name__
        raise FieldError(f"{field}.data", f"must be the base64 text of {nbytes} bytes ({4 * ((nbytes + 2) // 3)} "
                                    f"characters), got {got}")
    raw = base64.b64decode(data, validate=True)
    if len(raw) != nbytes:
        raise FieldError(f"{field}.data", f"holds {len(raw)} bytes, the shape and dtype need {nbytes}")
    arr = np.frombuffer(raw, dtype=dt).reshape(shape)
    if dt.kind == "b" and raw.translate(None, b"\x00\x01"):
        raise FieldError(f"{field}.data", "a boolean array holds bytes other than 0 and 1")
    return arr.astype(dt.newbyteorder("="))


def decode_provenance(value: Any, field: str) -> Provenance:
    """A stored ``{"$provenance": ...}`` record as a :class:`~ldpkit.reports.Provenance`; a :class:`FieldError` naming
    ``field`` for anything else."""
    out = decode_value(value, field)
    if not isinstance(out, Provenance):
        raise FieldError(field, f"must be a $provenance record, got {_short(value)}")
    return out


def _decode_provenance(body: Any, field: str) -> Provenance:
    spec = object_fields(body, ("mechanism", "params"), (), field)
    name, params = spec["mechanism"], spec["params"]
    if not isinstance(name, str) or not name or len(name) > 200:
        raise FieldError(f"{field}.mechanism", f"must be a class name, got {_short(name)}")
    if not isinstance(params, list):
        raise FieldError(f"{field}.params", f"must be a list of [name, value] pairs, got {_short(params)}")
    out, seen = [], set()
    for i, pair in enumerate(params):
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
            raise FieldError(f"{field}.params[{i}]", f"must be a [name, value] pair, got {_short(pair)}")
        if pair[0] in seen:
            raise FieldError(f"{field}.params[{i}]", f"the parameter {pair[0][:40]!r} is given twice")
        seen.add(pair[0])
        out.append((pair[0], decode_value(pair[1], f"{field}.params[{i}]")))
    return Provenance(name, tuple(out))


#: the integer arguments that size what a mechanism allocates: its items ``d``, a padding length ``ell`` (the
#: padded domain is ``d + ell``) and a hash range ``g``
_SIZE_ARGUMENTS = ("d", "ell", "g")


def _requested_domain(arguments: Any, field: str) -> None:
    """Refuse a stored mechanism whose arguments ask for more than ``LDPKIT_MAX_DOMAIN``.

    The kit names its sizes alike everywhere: the number of items ``d``
    (:attr:`~ldpkit.base.FrequencyOracle.d`), a padding length ``ell`` and a hash range ``g``.
    Each integer of these names at any depth of the arguments, and ``d + ell`` within one
    object (Padding-and-Sampling's padded domain), is checked before anything is built; a
    mechanism built from arrays is bounded by the arrays' limit and checked again once built.
    """
    stack = [(arguments, field)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, dict):
            sizes = {k: v for k, v in item.items()
                     if k in _SIZE_ARGUMENTS and isinstance(v, int) and not isinstance(v, bool)}
            for key, value in sizes.items():
                check_domain_limit(value, f"{where}.{key}")
            if "d" in sizes and "ell" in sizes:
                check_domain_limit(sizes["d"] + sizes["ell"], f"{where}.d + {where}.ell")
            stack.extend((v, f"{where}.{k}") for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(item))


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


def mechanism_config(mechanism: Mechanism) -> dict[str, Any]:
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


#: why no optimiser runs while a stored mechanism is rebuilt
_NO_SOLVE = ("a stored mechanism is rebuilt from its stored probabilities, never solved again (a file that names a "
             "model instead of its solution is refused)")


def _config_fields(config: Any, field: str) -> tuple[str, Optional[str], dict[str, Any]]:
    """The class key, family name and raw arguments of a stored mechanism record, their types checked."""
    if not isinstance(config, dict) or not {"class", "arguments"} <= set(config):
        raise FieldError(field, "a stored mechanism must be an object with 'class' and 'arguments', got "
                                f"{_short(config)}")
    object_fields(config, ("class", "arguments"), ("family", "provenance"), field)
    key, family, arguments = config["class"], config.get("family"), config["arguments"]
    if not isinstance(key, str) or not key or len(key) > 300:
        raise FieldError(f"{field}.class", f"must be a class name, got {_short(key)}")
    if family is not None and (not isinstance(family, str) or len(family) > 200):
        raise FieldError(f"{field}.family", f"must be a family name, got {_short(family)}")
    if not isinstance(arguments, dict):
        raise FieldError(f"{field}.arguments", f"must be an object, got {_short(arguments)}")
    return key, family, arguments


def build_mechanism(config: Any, *, field: str = "mechanism") -> Mechanism:
    """Rebuild a mechanism from :func:`mechanism_config`, checking that it has the stored provenance.

    Only the classes of registered families (:func:`ldpkit.family.families`) are built: a file
    cannot name arbitrary code, and no module named by a file is imported.  A family defined
    outside ldpkit is readable once the module that registers it is imported.  Every field is
    validated first (``decode_value``), the requested domain is at most
    ``LDPKIT_MAX_DOMAIN`` items, and no optimiser runs while the mechanism is
    built (``ldpkit._validation.solving_refused``).

    Raises
    ------
    ValueError
        An unknown class, a field that fails its schema or a limit, arguments the constructor
        refuses, or a rebuilt mechanism whose provenance differs from the stored one (naming what
        differs).
    """
    key, family, raw_args = _config_fields(config, field)
    _requested_domain(raw_args, f"{field}.arguments")
    cls: Any = _readable_classes(key).get(key)
    if cls is None:
        why = (f"its family {family!r} is not registered in this process: import the module that registers it"
               if isinstance(family, str) else f"no family registered with this ldpkit {__version__} declares it")
        raise FieldError(field, f"unknown mechanism class {key!r} ({why})")
    if family is not None and family not in [f.name for f in families(discover=False) if f.mechanism is cls]:
        declared = [f.name for f in families(discover=False) if f.mechanism is cls]
        raise FieldError(f"{field}.family", f"{family!r} does not declare the class {key} (its families: "
                                      f"{', '.join(declared) or 'none'})")
    args = decode_value(raw_args, f"{field}.arguments")
    want = None if config.get("provenance") is None else decode_provenance(config["provenance"], f"{field}.provenance")
    try:
        with solving_refused(_NO_SOLVE):
            mech = cls.from_arguments(args)
    except Exception as exc:  # a constructor's refusal, whatever its type: the stored arguments are wrong
        text = " ".join(str(exc).split()) or type(exc).__name__
        raise FieldError(field, f"cannot rebuild {key} from its stored arguments: {text}") from exc
    d = getattr(mech, "d", None)
    if isinstance(d, (int, np.integer)):
        check_domain_limit(int(d), f"{field} ({key})")
    if want is not None and mech.provenance != want:
        diff = "; ".join(mech.provenance.differences(want))
        raise FieldError(field, f"rebuilding {key} gave {mech.provenance.describe()}, but the reports were made by "
                          f"{want.describe()} ({diff}); pass the mechanism that made them")
    return mech

# ============================================================================ report codecs
def registered_codecs() -> tuple[ReportCodec, ...]:
    """Every registered report type (those of every registered family included)."""
    families()  # the first look-up imports every module that registers a family, and so its codec
    return _all_codecs()


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
    for t in _NARROW_DTYPES:
        if hi <= np.iinfo(np.dtype(t)).max:
            return col.astype(t)
    return col


def _config(mechanism: Optional[Mechanism]) -> Optional[dict[str, Any]]:
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


def _new_temporary(path: str) -> tuple[str, int]:
    """A new file beside ``path`` with a name no other process uses (``.NAME.RANDOM.partial``), open for writing.

    Created with ``O_EXCL``, so it is this process's own file: only such a file is ever deleted
    after a failure.  Its permissions are those of a new file (the umask applies).
    """
    folder, name = os.path.split(os.path.abspath(path))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
    while True:
        tmp = os.path.join(folder, f".{name}.{secrets.token_hex(6)}.partial")
        try:
            return tmp, os.open(tmp, flags, 0o666)
        except FileExistsError:  # pragma: no cover - 48 random bits collided
            continue


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], *, binary: bool = False) -> Iterator[IO[Any]]:
    """Write ``path`` through a new temporary file in its folder, renamed over it once complete.

    The file appears complete or not at all; a failure inside removes the temporary file (and
    nothing else: a file this process did not create is never deleted).  Text is UTF-8 with
    ``\\n`` line ends.

    Examples
    --------
    >>> import os, tempfile
    >>> from ldpkit.reportio import atomic_write
    >>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> with atomic_write(path) as fh:
    ...     _ = fh.write("complete\\n")
    >>> os.listdir(os.path.dirname(path)), os.path.getsize(path)
    (['out.txt'], 9)
    """
    target = os.fspath(path)
    tmp, fd = _new_temporary(target)
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="\n")) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


class ReportWriter:
    """Write reports to a file batch by batch (bounded memory); the file appears complete or not at all.

    Batches must come from ``mechanism`` (their provenance is checked); the file is written under
    a temporary name of its own in the same folder and renamed when :meth:`close` writes its end
    record, so a crashed collection leaves no file that looks complete, two writers never share a
    temporary file, and a failed writer deletes only the temporary file it created.  Use as a
    context manager.

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
        could not rebuild it; :func:`mechanism_config`), or ``data`` is not one line of text.
    """

    def __init__(self, path: str | os.PathLike[str], mechanism: Mechanism, *, domain: Optional[Domain] = None,
                 data: Optional[str] = None) -> None:
        if not hasattr(mechanism, "provenance"):
            raise ArgumentTypeError(f"mechanism must be an ldpkit mechanism, got {type(mechanism).__name__}")
        if domain is not None and not isinstance(domain, Domain):
            raise ArgumentTypeError(f"domain must be a Domain, got {type(domain).__name__}")
        if domain is not None and len(domain) != mechanism.d:
            raise ValueError(f"the domain has {len(domain)} labels but the mechanism {mechanism.d} items")
        if data is not None:
            check_text_line(data, "data")
        # refused now, before anything is written, if no registered family declares the mechanism's class
        self._config = _config(mechanism)
        self.path = os.fspath(path)
        self.csv = self.path.lower().endswith(".csv")
        self.mechanism = mechanism
        self.domain = domain
        self.data = data
        self.n = 0
        self.blocks = 0
        self._tmp: Optional[str] = None
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
        head = _header(codec, meta, self._config, self.mechanism.provenance, self.domain, self.data)
        text = _dumps(head)
        self._tmp, fd = _new_temporary(self.path)
        self._codec, self._meta = codec, meta
        if self.csv:
            self._fh = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
            self._fh.write(_CSV_HEAD + text + "\n")
            self._fh.write(",".join(name for name, _, _ in codec.columns) + "\n")
        else:
            raw = text.encode()
            self._header_crc = zlib.crc32(raw)
            self._fh = os.fdopen(fd, "wb")
            self._fh.write(_MAGIC + struct.pack("<II", FORMAT_VERSION, len(raw)) + raw + struct.pack("<I", self._header_crc))

    def _write_block(self, cols: tuple[np.ndarray, ...]) -> None:
        stored = [(_narrow(c) if narrow else c.astype(dtype, copy=False))
                  for c, (_, dtype, narrow) in zip(cols, self._codec.columns)]  # type: ignore[union-attr]
        payload = [memoryview(np.ascontiguousarray(c)).cast("B") for c in stored]  # type: ignore[arg-type]  # no copy
        record = _dumps({"n": int(cols[0].shape[0]), "dtypes": [c.dtype.str for c in stored]}).encode()
        head = _BLOCK[FORMAT_VERSION] + struct.pack("<I", len(record))
        crc = zlib.crc32(record, zlib.crc32(head))  # version 2: the record is under the block's checksum
        for p in payload:
            crc = zlib.crc32(p, crc)
        self._fh.write(head + record + struct.pack("<I", crc))
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
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        self._fh = None
        assert self._tmp is not None
        os.replace(self._tmp, self.path)
        self._tmp = None

    def abort(self) -> None:
        """Discard the partial file (only the temporary file this writer created)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if self._tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self._tmp)
            self._tmp = None


def save_reports(path: str | os.PathLike[str], reports: Any, mechanism: Mechanism, *, domain: Optional[Domain] = None,
                 data: Optional[str] = None) -> None:
    """Write ``reports`` of ``mechanism`` to ``path`` (``.csv``: the CSV form; otherwise binary).

    Reports stamped by another mechanism are refused (naming what differs); hand-built reports
    are stored with ``mechanism``'s provenance.  See :class:`ReportWriter` for the parameters.
    """
    with ReportWriter(path, mechanism, domain=domain, data=data) as w:
        w.write(reports)


# ============================================================================ reading
class _Content:
    """The fingerprint of a file's content: its report kind and scalars, the provenance and every report.

    What duplicate detection compares (:attr:`ReportFile.fingerprint`): the same reports of the
    same mechanism have one fingerprint whatever the encoding (binary or CSV, line ends, storage
    types, block sizes) and whatever the data line or the domain's labels say.  Each column is
    hashed on its own in its canonical little-endian type, so a split into blocks changes nothing.
    """

    def __init__(self, codec: ReportCodec, meta: dict[str, Any], source: Optional[Provenance]) -> None:
        self._head = _dumps({"kind": codec.kind, "meta": meta, "provenance": encode_value(source)})
        self._types = [np.dtype(dtype).newbyteorder("<") for _, dtype, _ in codec.columns]
        self._columns = [hashlib.sha256() for _ in codec.columns]
        self.n = 0

    def update(self, cols: Sequence[np.ndarray]) -> None:
        for h, col, dt in zip(self._columns, cols, self._types):
            h.update(memoryview(np.ascontiguousarray(col.astype(dt, copy=False))).cast("B"))  # type: ignore[arg-type]
        self.n += int(cols[0].shape[0])

    def hexdigest(self) -> str:
        total = hashlib.sha256(self._head.encode() + struct.pack("<Q", self.n))
        for h in self._columns:
            total.update(h.digest())
        return _FINGERPRINT + total.hexdigest()


def _codec_named(kind: Any, field: str, family: Any = None) -> ReportCodec:
    if not isinstance(kind, str):
        raise FieldError(field, f"must be a report kind, got {_short(kind)}")
    for codecs in (_all_codecs, registered_codecs):  # those registered so far, then after discovery
        for codec in codecs():
            if codec.kind == kind:
                return codec
    why = (f"its mechanism's family {family!r} is not registered in this process: import the module that registers it"
           if isinstance(family, str) and family not in [f.name for f in families()]
           else f"this ldpkit reads {[c.kind for c in registered_codecs()]}")
    raise FieldError(field, f"unknown report kind {kind[:40]!r} ({why})")


def _allowed_dtypes(codec: ReportCodec) -> list[tuple[str, ...]]:
    """The storage types a block may name for each column: the column's own, and the narrowed ones if it narrows."""
    out = []
    for _, dtype, narrow in codec.columns:
        own = np.dtype(dtype).newbyteorder("<").str
        out.append(tuple(dict.fromkeys((own, *(_NARROW_DTYPES if narrow else ())))))
    return out


class ReportFile:
    """An opened report file: its header, the rebuilt mechanism, and its reports block by block.

    Opening reads the header and the end record only (so a truncated file is refused at once);
    :meth:`batches` then reads one block at a time, checking each block's checksum.  Every field
    is validated by its schema and limits (module documentation); any failure, while opening or
    reading, is a :class:`ReportFileError` naming the file and the field.

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
    version
        The file's format version (:data:`READABLE_VERSIONS`).
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

    def __init__(self, path: str | os.PathLike[str], mechanism: Optional[Mechanism] = None) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise ArgumentTypeError(f"path must be a file name, got {type(path).__name__}")
        if mechanism is not None and not hasattr(mechanism, "provenance"):
            raise ArgumentTypeError(f"mechanism must be an ldpkit mechanism, got {type(mechanism).__name__}")
        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"{self.path}: no such report file")
        self.csv = self.path.lower().endswith(".csv")
        #: ``None`` until :meth:`batches` has read the whole file; then the digest of its content (report kind,
        #: provenance and every report, not its bytes), which :class:`~ldpkit.aggregation.Aggregator` compares
        #: to count the same reports once, whatever their encoding, line ends or data line
        self.fingerprint: Optional[str] = None
        #: for a version-1 file once read, the digest of its bytes that version-1 states recorded; else ``None``
        self.legacy_fingerprint: Optional[str] = None
        with read_boundary(self.path):
            self._open(mechanism)

    def _open(self, mechanism: Optional[Mechanism]) -> None:
        self.header, self._data_start, self.n, self._blocks, self.version = (
            self._open_csv() if self.csv else self._open_binary())
        h = self.header
        stored = h["mechanism"]
        self.codec = _codec_named(h["kind"], "header.kind", stored.get("family") if isinstance(stored, dict) else None)
        self.meta = self._check_meta(h["meta"])
        want = [[name, dtype] for name, dtype, _ in self.codec.columns]
        if h["columns"] != want:
            raise FieldError("header.columns", f"{_short(h['columns'])} are not the columns of {self.codec.kind} "
                                               f"reports ({want})")
        self._dtypes = _allowed_dtypes(self.codec)
        self.data: Optional[str] = None if h["data"] is None else check_text_line(h["data"], "header.data")
        if h["written_by"] is not None:
            check_text_line(h["written_by"], "header.written_by", 200)
        self.source: Optional[Provenance] = (None if h["provenance"] is None
                                             else decode_provenance(h["provenance"], "header.provenance"))
        self.domain: Optional[Domain] = self._check_domain(h["domain"])
        if mechanism is None:
            if stored is None:
                raise ReportFileError(f"{self.path}: the file does not store its mechanism; pass mechanism=")
            mechanism = build_mechanism(stored, field="header.mechanism")
        elif stored is not None:  # not built, but checked as if it were: no field escapes its schema
            _requested_domain(_config_fields(stored, "header.mechanism")[2], "header.mechanism.arguments")
        if self.source is not None and mechanism.provenance != self.source:
            diff = "; ".join(self.source.differences(mechanism.provenance))
            raise ReportFileError(f"{self.path}: reports were made by {self.source.describe()}, not by "
                                  f"{mechanism.provenance.describe()} ({diff})")
        self.mechanism = mechanism
        if self.domain is not None and len(self.domain) != mechanism.d:
            raise ReportFileError(f"{self.path}: the domain has {len(self.domain)} labels but the mechanism "
                                  f"{mechanism.d} items")

    def _check_header(self, header: Any, version: int) -> dict[str, Any]:
        """The header object with every field present (optional ones as ``None``), its format and version checked."""
        h = object_fields(header, _HEADER_REQUIRED, _HEADER_OPTIONAL, "header")
        if h["format"] != "ldpkit-reports":
            raise FieldError("header.format", f"must be 'ldpkit-reports', got {_short(h['format'])}")
        if not isinstance(h["version"], int) or isinstance(h["version"], bool) or h["version"] != version:
            raise FieldError("header.version", f"{_short(h['version'])} is not the file's format version {version}")
        return {k: h.get(k) for k in (*_HEADER_REQUIRED, *_HEADER_OPTIONAL)}

    def _check_meta(self, meta: Any) -> dict[str, Any]:
        if not isinstance(meta, dict) or not all(
                isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_USERS for v in meta.values()):
            raise FieldError("header.meta", f"must be an object of non-negative integers, got {_short(meta)}")
        try:
            widths = self.codec.column_widths(meta)
        except Exception as exc:
            raise FieldError("header.meta", f"{_short(meta)} does not describe {self.codec.kind} reports "
                                      f"({type(exc).__name__}: {exc})") from None
        if len(widths) != len(self.codec.columns) or not all(
                w is None or (isinstance(w, int) and 1 <= w <= 2**31) for w in widths):
            raise FieldError("header.meta", f"{_short(meta)} gives the column widths {_short(widths)}")
        self._widths = widths
        return dict(meta)

    def _check_domain(self, stored: Any) -> Optional[Domain]:
        if stored is None:
            return None
        labels = object_fields(stored, ("labels",), (), "header.domain")["labels"]
        if not isinstance(labels, list):
            raise FieldError("header.domain.labels", f"must be a list of labels, got {_short(labels)}")
        check_domain_limit(len(labels), "header.domain")
        try:
            return Domain.from_json(stored)
        except ValueError as exc:
            raise FieldError("header.domain", " ".join(str(exc).split())) from None

    # ---------------------------------------------------------------- binary
    def _open_binary(self) -> tuple[dict[str, Any], int, int, int, int]:
        size = os.path.getsize(self.path)
        with open(self.path, "rb") as fh:
            start = fh.read(16)
            if start[:8] != _MAGIC:
                raise ReportFileError(f"{self.path}: not an ldpkit report file (it does not start with {_MAGIC!r})")
            if len(start) < 16:
                raise ReportFileError(f"{self.path}: truncated inside its header ({size} bytes)")
            version, hlen = struct.unpack("<II", start[8:16])
            invalid = f"{self.path}: corrupted: format version {version} does not exist"
            check_format_version(version, FORMAT_VERSION, invalid, f"{self.path}: format version {version},")
            if 16 + hlen + 4 > size:
                raise ReportFileError(f"{self.path}: truncated inside its header ({size} bytes)")
            limit = max_header_bytes()
            if hlen > limit:
                raise ReportFileError(f"{self.path}: header: {hlen:,} bytes, above the limit of {limit:,} "
                                      "(LDPKIT_MAX_HEADER_BYTES)")
            raw = fh.read(hlen)
            crc = fh.read(4)
            if zlib.crc32(raw) != struct.unpack("<I", crc)[0]:
                raise ReportFileError(f"{self.path}: corrupted header (checksum fails)")
            header = self._check_header(decode_json(raw, "header"), version)
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
        if n > MAX_USERS:
            raise ReportFileError(f"{self.path}: corrupted: the end record says {n} reports, above {MAX_USERS} (2**53)")
        return header, data_start, int(n), int(blocks), int(version)

    def _binary_batches(self) -> Iterator[Any]:
        with read_boundary(self.path):
            yield from self._binary_blocks()

    def _binary_blocks(self) -> Iterator[Any]:
        codec, widths, version = self.codec, self._widths, self.version
        tag = _BLOCK[version]
        size = os.path.getsize(self.path)
        seen = 0
        content = _Content(codec, self.meta, self.source)
        legacy = hashlib.sha256(json.dumps(self.header, sort_keys=True).encode()) if version == 1 else None
        with open(self.path, "rb") as fh:
            fh.seek(self._data_start)
            for block in range(self._blocks):
                head = fh.read(8)
                if len(head) < 8 or head[:4] != tag:
                    raise ReportFileError(f"{self.path}: corrupted: block {block} does not start with a block tag")
                (mlen,) = struct.unpack("<I", head[4:8])
                if mlen > _MAX_RECORD or fh.tell() + mlen + 4 > size - _END_SIZE:
                    raise ReportFileError(f"{self.path}: corrupted: block {block} has an unreadable record "
                                          f"({mlen:,} bytes)")
                record = fh.read(mlen)
                (crc,) = struct.unpack("<I", fh.read(4))
                rows, dtypes = self._check_record(record, block)
                got_crc = zlib.crc32(record, zlib.crc32(head)) if version >= 2 else 0
                cols = []
                for (_, dtype, _), width, dt in zip(codec.columns, widths, dtypes):
                    per_row = 1 if width is None else int(width)
                    nbytes = rows * per_row * dt.itemsize
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
                content.update(cols)
                if legacy is not None:
                    legacy.update(struct.pack("<QI", rows, crc))
                built = self._build(tuple(cols), block)
                cols.clear()  # hold one block at a time
                yield built
                del built
            if fh.tell() != size - _END_SIZE:
                raise ReportFileError(f"{self.path}: corrupted: {size - _END_SIZE - fh.tell()} stray bytes after the last block")
        if seen != self.n:
            raise ReportFileError(f"{self.path}: corrupted: blocks hold {seen} reports, the end record says {self.n}")
        self.fingerprint = content.hexdigest()
        self.legacy_fingerprint = None if legacy is None else legacy.hexdigest()

    def _check_record(self, raw: bytes, block: int) -> tuple[int, list[np.dtype[Any]]]:
        """A block record: ``{"n": rows, "dtypes": [...]}`` with each column's storage type one the writer uses."""
        field = f"block {block} record"
        try:
            record = object_fields(decode_json(raw, field), ("n", "dtypes"), (), field)
        except FieldError as exc:
            raise ReportFileError(f"{self.path}: corrupted: block {block} has an unreadable record ({exc})") from None
        rows, dtypes = record["n"], record["dtypes"]
        if not isinstance(rows, int) or isinstance(rows, bool) or not 0 <= rows <= MAX_USERS:
            raise ReportFileError(f"{self.path}: corrupted: block {block} has an unreadable record (n={_short(rows)})")
        if not isinstance(dtypes, list) or len(dtypes) != len(self.codec.columns):
            raise ReportFileError(f"{self.path}: corrupted: block {block} describes {_short(dtypes)}, not "
                                  f"{len(self.codec.columns)} column types")
        out = []
        for (name, _, _), given, allowed in zip(self.codec.columns, dtypes, self._dtypes):
            if given not in allowed:
                raise ReportFileError(f"{self.path}: corrupted: block {block} stores column {name!r} as "
                                      f"{_short(given)}; the writer uses {', '.join(allowed)}")
            out.append(np.dtype(given))
        return rows, out

    # ---------------------------------------------------------------- CSV
    def _open_csv(self) -> tuple[dict[str, Any], int, int, int, int]:
        limit = max_header_bytes()
        with open(self.path, "rb") as fh:
            first_raw = fh.readline(limit + len(_CSV_HEAD) + 2)
            if not first_raw.startswith(_CSV_HEAD.encode()):
                raise ReportFileError(f"{self.path}: not an ldpkit reports CSV (its first line does not start "
                                      f"with {_CSV_HEAD.strip()!r})")
            if not first_raw.endswith(b"\n"):
                if len(first_raw) > limit:
                    raise ReportFileError(f"{self.path}: header line: more than {limit:,} bytes "
                                          "(LDPKIT_MAX_HEADER_BYTES)")
                raise ReportFileError(f"{self.path}: truncated: its header line does not end")
            try:
                header = decode_json(first_raw[len(_CSV_HEAD):].rstrip(b"\r\n"), "header line")
            except FieldError as exc:
                raise ReportFileError(f"{self.path}: corrupted header line ({exc})") from None
            if not isinstance(header, dict):
                raise ReportFileError(f"{self.path}: corrupted header line (not an object)")
            given = header.get("version")
            invalid = f"{self.path}: corrupted header line (format version {_short(given)})"
            version = check_format_version(given, FORMAT_VERSION, invalid, f"{self.path}: format version {given},")
            header = self._check_header(header, version)
            start = fh.tell()
            size = os.path.getsize(self.path)
            fh.seek(max(start, size - 4096))
            tail = fh.read().decode("utf-8", "replace").rstrip("\r\n").rsplit("\n", 1)[-1].rstrip("\r")
        if not tail.startswith(_CSV_END):
            raise ReportFileError(f"{self.path}: truncated: its last line is not the end record "
                                  f"'{_CSV_END.strip()} {{...}}' (the writer did not finish, or the file was cut)")
        try:
            end = object_fields(decode_json(tail[len(_CSV_END):], "end record"), ("n",), (), "end record")
        except FieldError as exc:
            raise ReportFileError(f"{self.path}: corrupted end record {_short(tail)} ({exc})") from None
        n = end["n"]
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_USERS:
            raise ReportFileError(f"{self.path}: corrupted end record {_short(tail)}")
        return header, start, n, -1, int(version)

    def _line_limit(self) -> int:
        """The longest line a report of this file can take (values of at most 21 characters; unary: 8 per byte)."""
        return 64 + sum(21 * 8 * (1 if w is None else int(w)) for w in self._widths)

    def _csv_batches(self, rows_per_batch: int) -> Iterator[Any]:
        with read_boundary(self.path):
            yield from self._csv_rows(rows_per_batch)

    def _csv_rows(self, rows_per_batch: int) -> Iterator[Any]:
        codec = self.codec
        names = [name for name, _, _ in codec.columns]
        seen = 0
        line_no = 2
        limit = self._line_limit()
        content = _Content(codec, self.meta, self.source)
        legacy = hashlib.sha256(json.dumps(self.header, sort_keys=True).encode()) if self.version == 1 else None
        with open(self.path, encoding="utf-8", newline="") as fh:
            fh.seek(self._data_start)
            got = fh.readline(limit).rstrip("\r\n")
            if got.split(",") != names:
                raise ReportFileError(f"{self.path}: line 2 names the columns {_short(got)}, expected "
                                      f"{','.join(names)!r}")
            batch: list[list[str]] = []
            first = last = 0  # file lines of the batch's first and last report
            ended = False
            while True:
                line = fh.readline(limit)
                if not line:
                    break
                line_no += 1
                if not line.endswith("\n") and len(line) >= limit:
                    raise ReportFileError(f"{self.path}: line {line_no} is longer than any report line can be "
                                          f"({limit:,} characters)")
                if line.startswith("#"):
                    if not line.startswith(_CSV_END):
                        raise ReportFileError(f"{self.path}: line {line_no} is a comment line among the reports (only "
                                              "the first and the last line of a reports CSV start with '#')")
                    if fh.read(1):
                        raise ReportFileError(f"{self.path}: corrupted: more lines after the end record on line "
                                              f"{line_no} (two files joined together?)")
                    ended = True
                    break
                fields = line.rstrip("\r\n").split(",")
                if len(fields) != len(names):
                    raise ReportFileError(f"{self.path}: line {line_no} has {len(fields)} fields, expected {len(names)}")
                if not batch:
                    first = line_no
                last = line_no
                batch.append(fields)
                if legacy is not None:
                    legacy.update(line.encode())
                if len(batch) == rows_per_batch:
                    yield self._csv_build(batch, first, last, content)
                    seen += len(batch)
                    batch = []
            if batch:
                yield self._csv_build(batch, first, last, content)
                seen += len(batch)
        if not ended or seen != self.n:
            raise ReportFileError(f"{self.path}: corrupted: {seen} reports read, the end record says {self.n}")
        self.fingerprint = content.hexdigest()
        self.legacy_fingerprint = None if legacy is None else legacy.hexdigest()

    def _csv_build(self, rows: list[list[str]], first_line: int, last_line: int, content: _Content) -> Any:
        codec = self.codec
        cols = []
        for j, ((name, dtype, _), width) in enumerate(zip(codec.columns, self._widths)):
            text = [r[j] for r in rows]
            native = np.dtype(dtype).newbyteorder("=")
            try:
                if not _CSV_FIELD.fullmatch(" ".join(text)):
                    wrong = next(i for i, t in enumerate(text) if not _CSV_FIELD.fullmatch(t))
                    raise ValueError(f"line {first_line + wrong} holds {_short(text[wrong])}, not integers written "
                                     "in ASCII digits")
                if codec.csv_parse is not None:
                    cols.append(codec.csv_parse(text, self.meta))
                elif width is None:
                    cols.append(np.array([int(t) for t in text], dtype=native))
                else:
                    values = [[int(v) for v in t.split(" ")] for t in text]
                    bad = next((i for i, v in enumerate(values) if len(v) != width), None)
                    if bad is not None:
                        raise ValueError(f"report {bad} holds {len(values[bad])} values, expected {width}")
                    cols.append(np.array(values, dtype=native).reshape(len(values), width))
            except (ValueError, OverflowError) as exc:
                raise ReportFileError(f"{self.path}: column {name!r} of lines {first_line}-{last_line} "
                                      f"is not valid: {exc}") from exc
        content.update(cols)
        return self._build(tuple(cols), f"lines {first_line}-{last_line}")

    # ---------------------------------------------------------------- shared
    def _build(self, cols: tuple[np.ndarray, ...], where: Any) -> Any:
        try:
            return self.codec.build(cols, self.meta, self.source)
        except Exception as exc:
            raise ReportFileError(f"{self.path}: corrupted reports in {'block ' + str(where) if isinstance(where, int) else where}: {exc}") from exc

    def batches(self, rows_per_batch: Optional[int] = None) -> Iterator[Any]:
        """The reports, one container per stored block (binary) or per ``rows_per_batch`` lines (CSV;
        default about 16 MB of text, :meth:`~ldpkit.reports.ReportCodec.csv_rows`)."""
        if self.csv:
            if rows_per_batch is not None and (isinstance(rows_per_batch, bool) or not isinstance(rows_per_batch, int)):
                raise ArgumentTypeError(f"rows_per_batch must be an integer, got {rows_per_batch!r}")
            rows = self.codec.csv_rows(self.meta) if rows_per_batch is None else int(rows_per_batch)
            if rows < 1:
                raise ValueError(f"rows_per_batch must be at least 1, got {rows_per_batch!r}")
            return self._csv_batches(rows)
        return self._binary_batches()

    def read(self) -> Any:
        """All reports in one container (for files that fit in memory)."""
        parts = list(self.batches())
        with read_boundary(self.path):
            if not parts:
                empty = tuple(np.empty((0,) if w is None else (0, w), dtype=np.dtype(s[1]).newbyteorder("="))
                              for s, w in zip(self.codec.columns, self._widths))
                return self.codec.build(empty, self.meta, self.source)
            return parts[0] if len(parts) == 1 else concat_reports(parts)

    def __repr__(self) -> str:
        what = self.source.describe() if self.source is not None else type(self.mechanism).__name__
        return f"ReportFile({os.path.basename(self.path)!r}: {self.n} {self.codec.kind} reports of {what})"


def open_reports(path: str | os.PathLike[str], mechanism: Optional[Mechanism] = None) -> ReportFile:
    """Open a report file (header and end record checked; reports read on demand). See :class:`ReportFile`."""
    return ReportFile(path, mechanism)


def load_reports(path: str | os.PathLike[str], mechanism: Optional[Mechanism] = None) -> Any:
    """All reports of a file, stamped with their provenance (``open_reports(path, mechanism).read()``)."""
    return ReportFile(path, mechanism).read()
