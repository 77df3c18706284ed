"""Reading a dataset file strictly: paths and arguments, optional readers, decompression, line ends.

Every check here raises a ``DatasetFormatError`` naming the file and where the problem sits.
Part of :mod:`ldpkit.datasets.parsers`, which documents the rules every parser follows.
"""

from __future__ import annotations

import bz2
import hashlib
import lzma
import os
import re
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from .errors import DatasetFormatError, MissingFileError

__all__ = [
    "PathLike",
    "check_choice",
    "check_line_endings",
    "check_name",
    "check_path",
    "cut_truncated",
    "decode_utf8",
    "decompress",
    "line_number",
    "needs_reader",
    "read_data",
    "read_lines",
    "reader_installed",
    "sha256_of",
    "source_label",
]

PathLike = str | os.PathLike[str]


def needs_reader(path: PathLike) -> str | None:
    """The optional package needed to read ``path`` (``"pyreadr"`` for R data files), or ``None``."""
    name = Path(path).name.lower()
    return "pyreadr" if name.endswith((".rda", ".rdata", ".rda.gz", ".rdata.gz")) else None


def reader_installed(package: str) -> bool:
    """True when the optional reader ``package`` can be imported (without importing it)."""
    import importlib.util

    return importlib.util.find_spec(package) is not None


# --------------------------------------------------------------------------------------------
# paths, arguments and the source label
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


def source_label(path: PathLike) -> str:
    return f"{Path(path).name} (sha256 {sha256_of(path)[:12]})"


def check_choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    return name


def start_parse(path: Any, name: Any, truncated: Any, blank: Any) -> tuple[Path, str, list[str]]:
    """The checks every line-oriented parser makes before it reads a byte.

    Returns the checked path, the checked dataset name and an empty list of notes; raises for a
    missing or irregular path, an empty name, or a ``truncated`` or ``blank`` mode that is not one
    of ``("error", "drop")`` and ``("error", "skip")``.
    """
    p = check_path(path)
    checked = check_name(name)
    check_choice(truncated, "truncated", ("error", "drop"))
    check_choice(blank, "blank", ("error", "skip"))
    return p, checked, []


def check_path(path: Any, what: str = "path", *, directory_ok: bool = False) -> Path:
    """``path`` as a Path after checking that it is an existing regular file (or directory if allowed)."""
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"{what} must be a file path (str or os.PathLike), got {type(path).__name__}")
    p = Path(path)
    given = os.fspath(path)
    if not p.exists():
        if p.is_symlink():
            raise DatasetFormatError(str(given), f"{what} is a broken symbolic link")
        raise MissingFileError(str(given), f"{what} {str(given)!r} does not exist")
    if p.is_dir():
        if directory_ok:
            return p
        raise DatasetFormatError(str(given), f"{what} is a directory, but a data file is expected")
    if not p.is_file():
        raise DatasetFormatError(str(given), f"{what} is not a regular file (a device, socket or pipe)")
    return p


# --------------------------------------------------------------------------------------------
# strict decompression and line-level checks
# --------------------------------------------------------------------------------------------

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


def decompress(raw: bytes, fname: str, *, keep: bool = True) -> bytes:
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


def read_data(path: Path) -> bytes:
    """The file's content, decompressed when it is compressed (see :func:`decompress`); never empty."""
    raw = path.read_bytes()
    if not raw:
        raise DatasetFormatError(path.name, "file is empty")
    data = decompress(raw, path.name)
    if not data:
        raise DatasetFormatError(path.name, "file is empty (after decompression)")
    return data


def check_line_endings(buf: bytes, fname: str, member: str | None = None) -> None:
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
            line=line_number(buf, pos),
        )


def cut_truncated(buf: bytes, fname: str, truncated: str, notes: list[str], hint: bool = True) -> bytes:
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


def read_lines(p: Path, truncated: str, notes: list[str], *, hint: bool = True) -> bytes:
    """Read, decompress, check the line endings and handle a truncated last line (see the module)."""
    buf = read_data(p)
    check_line_endings(buf, p.name)
    return cut_truncated(buf, p.name, truncated, notes, hint)


def line_number(buf: bytes, pos: int) -> int:
    return buf.count(b"\n", 0, pos) + 1


def decode_utf8(buf: bytes, fname: str) -> str:
    try:
        return buf.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetFormatError(fname, f"invalid UTF-8 ({exc.reason})", line=line_number(buf, exc.start)) from None
