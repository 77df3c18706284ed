"""FIMI repository ``.dat`` files (Retail, Kosarak, ...): one transaction of integer item ids per line.

Part of :mod:`ldpkit.datasets.parsers`, which documents the rules every parser follows.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..containers import ItemSetData
from .errors import DatasetFormatError
from .reading import PathLike, start_parse, read_lines, source_label
from .records import dedupe_note, first_occurrence, handle_blank, itemsets_from_pairs, reindex_ints, tokenize_ints

__all__ = ["read_fimi"]


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
    p, name, notes = start_parse(path, name, truncated, blank)
    fname = p.name
    buf = read_lines(p, truncated, notes)
    values, line_of, n_lines = tokenize_ints(buf, fname)
    kept_lines = handle_blank(line_of, n_lines, fname, blank, notes)
    if kept_lines.size == 0:
        raise DatasetFormatError(fname, "no transaction found")
    # renumber lines to transactions 0..n-1 (blank lines skipped)
    rank = np.full(n_lines, -1, dtype=np.int64)
    rank[kept_lines] = np.arange(kept_lines.size)
    user = rank[line_of]
    vocab, idx = reindex_ints(values)
    keep = first_occurrence(user, idx, vocab.size)
    n_rep = int(keep.size - np.count_nonzero(keep))
    if n_rep:
        first_line = int(line_of[np.argmin(keep)]) + 1
        notes.append(dedupe_note(n_rep, f"item(s) within a transaction (first at line {first_line})"))
        user, idx = user[keep], idx[keep]
    sets = itemsets_from_pairs(user, idx, kept_lines.size, vocab.size)
    return ItemSetData(sets=sets, vocabulary=vocab, name=name, source=source_label(p), notes=tuple(notes))
