"""The arules Groceries CSV: one basket of comma-separated item names per line.

Part of :mod:`ldpkit.datasets.parsers`, which documents the rules every parser follows.
"""

from __future__ import annotations

import csv
import re
from typing import Literal

import numpy as np

from ..containers import ItemSetData
from .errors import DatasetFormatError, csv_format_error
from .reading import PathLike, start_parse, decode_utf8, read_lines, source_label
from .records import dedupe_note, first_occurrence, itemsets_from_pairs, string_records

__all__ = ["read_groceries"]

#: C0 control characters other than tab (and DEL): never part of an item name
_CONTROL_CHAR = re.compile("[\x00-\x08\x0a-\x1f\x7f]")


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
    p, name, notes = start_parse(path, name, truncated, blank)
    fname = p.name
    text = decode_utf8(read_lines(p, truncated, notes), fname)
    lines = text.split("\n")
    lines.pop()  # the empty string after the final newline
    users, labels, n, blanks = _baskets(lines, fname)
    vocab, idx, user = string_records(users, labels, blanks, fname, blank, notes, "no basket found")
    keep = first_occurrence(user, idx, vocab.size)
    n_rep = int(keep.size - np.count_nonzero(keep))
    if n_rep:
        notes.append(dedupe_note(n_rep, "item name(s) within a basket"))
    sets = itemsets_from_pairs(user[keep], idx[keep], n, vocab.size)
    return ItemSetData(sets=sets, vocabulary=vocab, name=name, source=source_label(p), notes=tuple(notes))


def _baskets(lines: list[str], fname: str) -> tuple[list[int], list[str], int, list[int]]:
    """(basket of each item name, the names, the number of baskets, the 1-based numbers of the blank lines)."""
    users: list[int] = []
    labels: list[str] = []
    blanks: list[int] = []
    n = 0
    for k, line in enumerate(lines, start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            blanks.append(k)
            continue
        names = _basket_names(line, k, fname)
        users.extend([n] * len(names))
        labels.extend(names)
        n += 1
    return users, labels, n, blanks


def _basket_names(line: str, k: int, fname: str) -> list[str]:
    """The item names of the basket on (1-based) line ``k``, stripped; each must be non-empty text."""
    control = _CONTROL_CHAR.search(line)
    if control is not None:
        raise DatasetFormatError(
            fname, f"control character {control.group()!r} in a basket (a damaged byte; item names are text)",
            line=k)
    try:
        row = next(csv.reader((line,), strict=True))
    except csv.Error as exc:
        raise csv_format_error(fname, exc, "a quoted item name opened on this line is not closed on it", k) from None
    names = [f.strip() for f in row]
    if any(not f for f in names):
        raise DatasetFormatError(fname, f"empty item name in basket {row!r}", line=k)
    return names
