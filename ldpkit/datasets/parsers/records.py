"""From parsed records to the containers: integer tokens, blank lines, re-indexing, repeats, CSR item sets.

Part of :mod:`ldpkit.datasets.parsers`, which documents the rules every parser follows.
"""

from __future__ import annotations

import re

import numpy as np

from ...sets import ItemSets
from .errors import DatasetFormatError
from .reading import line_number

__all__ = [
    "dedupe_note",
    "first_occurrence",
    "handle_blank",
    "itemsets_from_pairs",
    "sets_of_distinct_pairs",
    "reindex_ints",
    "reindex_strings",
    "report_blank_lines",
    "string_records",
    "tokenize_ints",
]

#: longest accepted integer token (keeps every id well inside int64)
_MAX_DIGITS = 18


def _token_at(buf: bytes, pos: int) -> str:
    lo = max(buf.rfind(c, 0, pos) for c in (b" ", b"\t", b"\r", b"\n")) + 1
    hi = len(buf)
    for c in (b" ", b"\t", b"\r", b"\n"):
        k = buf.find(c, pos)
        if k != -1:
            hi = min(hi, k)
    tok = buf[lo:hi].decode("latin-1")
    return tok if len(tok) <= 40 else tok[:37] + "..."


def first_occurrence(group: np.ndarray, item: np.ndarray, m: int) -> np.ndarray:
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


def itemsets_from_pairs(group: np.ndarray, item: np.ndarray, n_groups: int, m: int) -> ItemSets:
    """CSR item sets from (group, item) pairs already sorted by group (order within group kept)."""
    counts = np.bincount(group, minlength=n_groups)
    offsets = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return ItemSets(item.astype(np.int64, copy=False), offsets, int(m))


def reindex_ints(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def reindex_strings(labels: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Map string labels to ``0..m-1`` by sorted label; return (vocabulary, indices)."""
    vocab = sorted(set(labels))
    index = {w: k for k, w in enumerate(vocab)}
    idx = np.fromiter((index[w] for w in labels), dtype=np.int64, count=len(labels))
    return np.array(vocab, dtype=object if not vocab else str), idx


def tokenize_ints(buf: bytes, fname: str) -> tuple[np.ndarray, np.ndarray, int]:
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
        raise DatasetFormatError(fname, what, line=line_number(buf, pos))
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
            fname, f"item id {_token_at(buf, pos)!r} has more than {_MAX_DIGITS} digits", line=line_number(buf, pos)
        )
    # np.fromstring's text mode is C-speed; the buffer holds only digits and whitespace here
    values = np.fromstring(buf[starts[0] : ends[-1]], dtype=np.int64, sep=" ")
    if values.size != starts.size:  # pragma: no cover - defensive, cannot happen after the checks
        raise DatasetFormatError(fname, f"internal tokenizer mismatch ({values.size} != {starts.size})")
    line_of = np.searchsorted(np.flatnonzero(newline), starts)
    return values, line_of.astype(np.int64), n_lines


def report_blank_lines(count: int, first: int, fname: str, blank: str, notes: list[str]) -> None:
    """``count`` blank lines, the first at 1-based line ``first``: raise (``blank="error"``) or note them."""
    if not count:
        return
    if blank == "error":
        raise DatasetFormatError(
            fname,
            f"blank line ({count} blank line(s) in the file; pass blank='skip' to skip them)",
            line=first,
        )
    notes.append(f"skipped {count} blank line(s) (first at line {first})")


def string_records(users: list[int], labels: list[str], blanks: list[int], fname: str, blank: str,
                   notes: list[str], none_found: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Records read line by line (the user and the item label of each, the 1-based numbers of the
    blank lines) as ``(vocabulary, item index of each record, user of each record)``.

    Blank lines are raised or noted as ``blank`` says (:func:`report_blank_lines`); no record at
    all raises with the message ``none_found``.
    """
    report_blank_lines(len(blanks), blanks[0] if blanks else 0, fname, blank, notes)
    if not users:
        raise DatasetFormatError(fname, none_found)
    vocab, idx = reindex_strings(labels)
    return vocab, idx, np.asarray(users, dtype=np.int64)


def handle_blank(line_of: np.ndarray, n_lines: int, fname: str, blank: str, notes: list[str]) -> np.ndarray:
    """Return the 0-based numbers of the non-blank lines; raise or note blank ones."""
    per_line = np.bincount(line_of, minlength=n_lines)
    blank_lines = np.flatnonzero(per_line == 0)
    if blank_lines.size:
        report_blank_lines(int(blank_lines.size), int(blank_lines[0]) + 1, fname, blank, notes)
    return np.flatnonzero(per_line > 0)


def dedupe_note(n_dropped: int, what: str) -> str:
    return f"dropped {n_dropped} repeated {what}"


def sets_of_distinct_pairs(group: np.ndarray, item: np.ndarray, n_groups: int, m: int) -> tuple[ItemSets, int]:
    """Item sets from unsorted ``(group, item)`` pairs, each pair kept once; and how many repeats were merged.

    The first occurrence of every pair is kept (:func:`first_occurrence`), the pairs are sorted by
    group (stable, so each set keeps the input order of its items) and packed by
    :func:`itemsets_from_pairs`.
    """
    keep = first_occurrence(group, item, m)
    n_repeated = int(keep.size - np.count_nonzero(keep))
    group, item = group[keep], item[keep]
    order = np.argsort(group, kind="stable")
    return itemsets_from_pairs(group[order], item[order], n_groups, m), n_repeated
