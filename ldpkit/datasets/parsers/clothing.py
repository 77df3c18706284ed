"""Rent the Runway "clothing fit" JSON lines (the ID-LDP paper's "Clothing").

Part of :mod:`ldpkit.datasets.parsers`, which documents the rules every parser follows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from ..containers import ItemSetData
from .errors import DatasetFormatError
from .reading import (
    PathLike,
    check_line_endings,
    start_parse,
    decode_utf8,
    read_data,
    source_label,
)
from .records import sets_of_distinct_pairs, string_records

__all__ = ["read_clothing"]


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
    p, name, notes = start_parse(path, name, truncated, blank)
    fname = p.name
    lines = _json_lines(p, truncated, notes)
    users, items, n_users, blanks = _records(lines, fname)
    vocab, idx, user = string_records(users, items, blanks, fname, blank, notes, "no record found")
    sets, n_rep = sets_of_distinct_pairs(user, idx, n_users, vocab.size)
    if n_rep:
        notes.append(f"merged {n_rep} repeated (user, item) record(s) of {user.size} records")
    return ItemSetData(sets=sets, vocabulary=vocab, name=name, source=source_label(p), notes=tuple(notes))


def _json_lines(p: Path, truncated: str, notes: list[str]) -> list[str]:
    """The file's lines, after the line-end and UTF-8 checks; a last line without a newline is kept
    when it is a complete JSON object, else it is a truncated line (raised, or dropped with a note)."""
    fname = p.name
    data = read_data(p)
    check_line_endings(data, fname)
    text = decode_utf8(data, fname)
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
    return lines


def _records(lines: list[str], fname: str) -> tuple[list[int], list[str], int, list[int]]:
    """Parse one JSON record per line: (user of each record, numbered by first appearance; its item;
    the number of users; the 1-based numbers of the blank lines)."""
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
    return users, items, len(user_index), blanks
