"""Items by label: a :class:`Domain` maps the labels of a user's data (strings) to item indices.

Every mechanism in ldpkit works on item indices ``0 .. d-1``.  Real data come as labels
(product codes, words, place identifiers).  A :class:`Domain` is the fixed, ordered list of
labels a collection is configured with: it encodes labels to indices before perturbation,
decodes estimates back to labels, and is saved with the reports and the aggregator's state, so
an estimate never loses the meaning of its rows.  A label outside the domain is refused by
name: silently dropping or remapping it would bias every estimate.

Labels are text that travels (files, tables, other people's spreadsheets), so a label is checked
and normalised once, here (``ldpkit._validation.check_label``): it is stored in Unicode normal
form NFC, so that the two spellings of ``"é"`` (one code point, or ``e`` and a combining accent)
are one label, and it holds no control, zero-width or line-break character and no whitespace at
either end.  :meth:`Domain.encode` reads labels in either spelling.

Derived and used in the tutorial chapter (:ref:`sec-tutorial-domain`).

Examples
--------
>>> from ldpkit.domain import Domain
>>> dom = Domain(["apple", "bread", "milk"])
>>> dom.encode(["milk", "apple", "milk"]).tolist(), len(dom)
([2, 0, 2], 3)
>>> dom.decode([1, 2])
['bread', 'milk']
>>> Domain.from_values(["b", "a", "b", "c", "b", "a"], order="frequency").labels
('b', 'a', 'c')
>>> Domain.from_json(dom.to_json()) == dom
True
>>> dom.vector({"apple": 0.5, "bread": 1.0, "milk": float("inf")}, "budget").tolist()
[0.5, 1.0, inf]

Per-label data come from files in three simple forms, read here (the command line's
``--domain``, ``--sensitive``, ``--budgets``, ``--prior`` and ``--matrix`` read them):
:func:`read_labels` (one label a line), :func:`read_values` (``label,number`` lines) and
:func:`read_matrix` (a table with a header line of labels, one number per pair of labels);
:meth:`Domain.vector` and :meth:`Domain.matrix` put their numbers in item order, refusing a
label outside the domain and a label of the domain without a number.
"""

from __future__ import annotations

import csv
import math
import numbers
import os
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from ._validation import ArgumentTypeError, check_domain_limit, check_domain_size, check_items, check_label

__all__ = ["Domain", "read_labels", "read_matrix", "read_values"]

#: how :meth:`Domain.from_values` orders the labels it finds
LabelOrder = Literal["sorted", "frequency", "first"]


class Domain:
    """An ordered, duplicate-free list of item labels (strings); item ``i`` is ``labels[i]``.

    Parameters
    ----------
    labels
        The labels, in item order.  Each is a non-empty string without control, zero-width or
        line-break characters and without whitespace at either end; it is stored in Unicode
        normal form NFC (``ldpkit._validation.check_label``).

    Raises
    ------
    ValueError
        Fewer than two labels, a repeated label (two spellings of one text included), an empty
        one, or one with a character or whitespace a label may not hold (named).
    ArgumentTypeError
        A label that is not a string.

    Examples
    --------
    >>> from ldpkit.domain import Domain
    >>> Domain(["caf\u00e9", "tea"]).encode(["cafe\u0301"]).tolist()   # the other spelling of the same label
    [0]
    >>> Domain(["caf\u00e9", "cafe\u0301"])
    Traceback (most recent call last):
    ...
    ValueError: labels 0 and 1 are one label, 'café', spelled two ways (Unicode NFC and NFD)
    """

    __slots__ = ("_index", "labels")

    labels: tuple[str, ...]
    _index: dict[str, int]

    def __init__(self, labels: Iterable[str]) -> None:
        if isinstance(labels, (str, bytes)):
            raise ArgumentTypeError(f"labels must be a sequence of strings, not one string {labels!r}")
        given = tuple(labels)
        labs = tuple(check_label(lab, f"label {pos}") for pos, lab in enumerate(given))
        if len(labs) < 2:
            raise ValueError(f"a domain needs at least 2 labels, got {len(labs)}")
        index: dict[str, int] = {}
        for pos, lab in enumerate(labs):
            if lab in index:
                first = index[lab]
                if given[first] != given[pos]:
                    raise ValueError(f"labels {first} and {pos} are one label, {lab!r}, spelled two ways (Unicode NFC "
                                     "and NFD)")
                raise ValueError(f"label {lab!r} appears twice (items {first} and {pos})")
            index[lab] = pos
        object.__setattr__(self, "labels", labs)
        object.__setattr__(self, "_index", index)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Domain is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled as its labels (and checked again when unpickled): to worker processes and Dask workers
        return (type(self), (self.labels,))

    @classmethod
    def from_values(cls, values: Iterable[Any], order: LabelOrder = "frequency") -> Domain:
        """The domain of the distinct labels in ``values`` (each converted with ``str``).

        ``order`` is ``"frequency"`` (most frequent first, ties in first-seen order), ``"sorted"``
        or ``"first"`` (first-seen order).  Building the domain from the data themselves is a
        convenience for dry runs: a deployed collection fixes its domain before seeing any data.
        """
        if order not in ("sorted", "frequency", "first"):
            raise ValueError(f"order must be 'sorted', 'frequency' or 'first', got {order!r}")

        def text(pos: int, v: Any) -> str:
            if v is None or (isinstance(v, float) and math.isnan(v)):
                raise ValueError(f"value {pos} is {v!r}, a missing value, not a label")
            return v if isinstance(v, str) else str(v)

        counts = Counter(text(pos, v) for pos, v in enumerate(values))
        labs = list(counts)  # first-seen order (Counter keeps insertion order)
        if order == "sorted":
            labs.sort()
        elif order == "frequency":
            labs.sort(key=lambda lab: -counts[lab])  # stable: ties stay in first-seen order
        return cls(labs)

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def d(self) -> int:
        """Number of items."""
        return len(self.labels)

    def __contains__(self, label: object) -> bool:
        if label in self._index:
            return True
        return isinstance(label, str) and not label.isascii() and unicodedata.normalize("NFC", label) in self._index

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Domain):
            return NotImplemented
        return self.labels == other.labels

    def __hash__(self) -> int:
        return hash(self.labels)

    def __repr__(self) -> str:
        shown = ", ".join(repr(lab) for lab in self.labels[:4])
        more = f", ... ({len(self)} labels)" if len(self) > 4 else ""
        return f"Domain([{shown}{more}])"

    def encode(self, labels: Iterable[Any]) -> np.ndarray:
        """Item index of each label (``int64``); any label outside the domain is refused by name.

        Raises
        ------
        ValueError
            Naming the first unknown labels and how many rows hold one.
        """
        if isinstance(labels, (str, bytes)):
            raise ArgumentTypeError(f"labels must be a sequence of labels, not one string {labels!r}; use [{labels!r}]")
        index = self._index
        values = labels if isinstance(labels, Sequence) or isinstance(labels, np.ndarray) else list(labels)
        out = np.empty(len(values), dtype=np.int64)
        unknown: Counter[str] = Counter()
        for pos, lab in enumerate(values):
            key = lab if isinstance(lab, str) else str(lab)
            got = index.get(key)
            if got is None and not key.isascii():  # the other Unicode spelling of a label
                got = index.get(unicodedata.normalize("NFC", key))
            if got is None:
                unknown[key] += 1
                out[pos] = -1
            else:
                out[pos] = got
        if unknown:
            names = ", ".join(repr(k) for k in list(unknown)[:5])
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            raise ValueError(
                f"{sum(unknown.values())} value(s) are not labels of the domain ({len(self)} labels): {names}{more}"
            )
        return out

    def decode(self, items: ArrayLike) -> list[str]:
        """The label of each item index."""
        idx = check_items(np.atleast_1d(np.asarray(items)), len(self), "items")
        return [self.labels[int(i)] for i in idx]

    def _shown(self, labels: Sequence[str], limit: int = 5) -> str:
        more = f" and {len(labels) - limit} more" if len(labels) > limit else ""
        return ", ".join(repr(lab) for lab in labels[:limit]) + more

    def vector(self, values: float | Mapping[str, float], what: str = "value") -> np.ndarray:
        """One number per item, in item order, from a ``label -> number`` mapping (or one number for every item).

        Parameters
        ----------
        values
            A number per label (such as :func:`read_values` gives), or one number for every item.
        what
            What the numbers are (``"budget"``, ``"probability"``), for the messages.

        Raises
        ------
        ValueError
            A label outside the domain, or a label of the domain without a number (both named).

        Examples
        --------
        >>> from ldpkit.domain import Domain
        >>> dom = Domain(["apple", "bread", "milk"])
        >>> dom.vector({"milk": 2.0, "apple": 0.5, "bread": 1.0}, "budget").tolist()
        [0.5, 1.0, 2.0]
        >>> dom.vector(1.5).tolist()
        [1.5, 1.5, 1.5]
        >>> dom.vector({"apple": 0.5}, "budget")
        Traceback (most recent call last):
        ...
        ValueError: no budget for 2 label(s) of the domain: 'bread', 'milk'; every label needs one
        """
        if not isinstance(what, str):
            raise ArgumentTypeError(f"what must be a string, got {type(what).__name__} {what!r}")
        if isinstance(values, numbers.Real) and not isinstance(values, bool):
            return np.full(len(self), float(values))
        if not isinstance(values, Mapping):
            raise ArgumentTypeError(f"values must be a number or a mapping from labels to numbers, "
                                    f"got {type(values).__name__}")
        unknown = [lab for lab in values if lab not in self._index]
        if unknown:
            raise ValueError(f"{len(unknown)} {what} label(s) are not labels of the domain ({len(self)} labels): "
                             f"{self._shown(unknown)}")
        out = np.full(len(self), np.nan)
        for lab, value in values.items():
            out[self._index[lab]] = _number(value, f"the {what} of {lab!r}")
        missing = [self.labels[i] for i in range(len(self)) if math.isnan(out[i])]
        if missing:
            raise ValueError(f"no {what} for {len(missing)} label(s) of the domain: {self._shown(missing)}; "
                             "every label needs one")
        return out

    def matrix(self, values: Mapping[str, Mapping[str, float]], what: str = "value") -> np.ndarray:
        """A ``d x d`` array, rows and columns in item order, from ``row label -> column label -> number``.

        Every ordered pair of distinct labels needs a number; the diagonal may be left out (it
        is 0 then), as :func:`read_matrix` leaves out empty cells.

        Raises
        ------
        ValueError
            A label outside the domain, or a pair of labels of the domain without a number (named).

        Examples
        --------
        >>> from ldpkit.domain import Domain
        >>> dom = Domain(["a", "b"])
        >>> dom.matrix({"b": {"a": 2.0}, "a": {"b": 1.0}}).tolist()
        [[0.0, 1.0], [2.0, 0.0]]
        """
        if not isinstance(values, Mapping) or not all(isinstance(row, Mapping) for row in values.values()):
            raise ArgumentTypeError(f"values must map row labels to mappings from column labels to numbers, "
                                    f"got {type(values).__name__}")
        labels = list(dict.fromkeys([*values, *(col for row in values.values() for col in row)]))
        unknown = [lab for lab in labels if lab not in self._index]
        if unknown:
            raise ValueError(f"{len(unknown)} {what} label(s) are not labels of the domain ({len(self)} labels): "
                             f"{self._shown(unknown)}")
        out = np.full((len(self), len(self)), np.nan)
        np.fill_diagonal(out, 0.0)
        for row, cells in values.items():
            for col, value in cells.items():
                out[self._index[row], self._index[col]] = _number(value, f"the {what} of ({row!r}, {col!r})")
        missing = [(self.labels[int(x)], self.labels[int(y)]) for x, y in np.argwhere(np.isnan(out))]
        if missing:
            shown = ", ".join(f"({x!r}, {y!r})" for x, y in missing[:3]) + (" ..." if len(missing) > 3 else "")
            raise ValueError(f"no {what} for {len(missing)} pair(s) of labels of the domain: {shown}; every "
                             "ordered pair of distinct labels needs one")
        return out

    def to_json(self) -> dict[str, Any]:
        """``{"labels": [...]}``, what report files and aggregator states store."""
        return {"labels": list(self.labels)}

    @classmethod
    def from_json(cls, data: Any) -> Domain:
        """Inverse of :meth:`to_json` (validated; at most ``LDPKIT_MAX_DOMAIN`` labels)."""
        if not isinstance(data, dict) or not isinstance(data.get("labels"), list):
            raise ValueError(f"a stored domain must be an object with a 'labels' list, got {type(data).__name__}")
        check_domain_limit(len(data["labels"]), "a stored domain")
        return cls(data["labels"])

    @classmethod
    def integers(cls, d: int) -> Domain:
        """The domain whose labels are ``"0" .. "d-1"`` (for data that are already indices).

        ``d`` is an integer from 2 to the domain limit (``LDPKIT_MAX_DOMAIN``):
        a float, a string or a size that could not be afforded is refused before any label is made.
        """
        d = check_domain_size(d, "d")
        check_domain_limit(d, "Domain.integers")
        return cls(str(i) for i in range(d))


# ---------------------------------------------------------------------------- per-label data from files
def _number(value: Any, what: str) -> float:
    """A value as a float that is not NaN (``inf`` allowed)."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        out = math.nan
    if math.isnan(out):
        raise ValueError(f"{what} must be a number (inf allowed), got {value!r}")
    return out


def _file(path: Any, what: str) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentTypeError(f"{what} must be a file name, got {type(path).__name__} {path!r}")
    return os.fspath(path)


def read_labels(path: str | os.PathLike[str]) -> list[str]:
    """The labels of a UTF-8 text file, one a line, in file order (trailing blank lines dropped).

    The form of a domain file (item ``i`` is line ``i + 1``: ``Domain(read_labels(path))``) and
    of a list of sensitive items.  Nothing else is checked here: :class:`Domain` refuses a
    repeated or empty label.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ldpkit.domain import Domain, read_labels
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "labels.txt"
    >>> _ = path.write_text("apple\\nbread\\nmilk\\n\\n", encoding="utf-8")
    >>> read_labels(path), Domain(read_labels(path))
    (['apple', 'bread', 'milk'], Domain(['apple', 'bread', 'milk']))
    """
    with open(_file(path, "path"), encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _rows(path: str) -> Iterable[tuple[int, list[str]]]:
    """``(line number, fields)`` of the CSV file's non-blank lines."""
    with open(path, newline="", encoding="utf-8") as fh:
        for line_no, row in enumerate(csv.reader(fh), start=1):
            if row and "".join(row).strip():
                yield line_no, row


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_values(path: str | os.PathLike[str], what: str = "value") -> dict[str, float]:
    """The ``label,number`` lines of a UTF-8 CSV file, as ``{label: number}`` in file order.

    The form of per-item budgets (``inf`` for an item without one) and of a prior: one line per
    label, its label, a comma, its number (a label holding a comma is quoted, as CSV does).
    Blank lines are skipped, and a first line whose first field is ``label`` and whose second
    is not a number is a header (``label,budget``).  Pass the result to :meth:`Domain.vector`
    for one number per item.

    Parameters
    ----------
    path
        The file.
    what
        What the numbers are (``"budget"``, ``"probability"``), for the messages.

    Raises
    ------
    ValueError
        Naming the file and the line: a line without exactly two fields, a number that is not
        one (NaN included), a label given twice, or no ``label,number`` line at all.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ldpkit.domain import Domain, read_values
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "budgets.csv"
    >>> _ = path.write_text("label,budget\\nmilk,1\\napple,0.5\\nbread,inf\\n", encoding="utf-8")
    >>> read_values(path, "budget")
    {'milk': 1.0, 'apple': 0.5, 'bread': inf}
    >>> Domain(["apple", "bread", "milk"]).vector(read_values(path, "budget"), "budget").tolist()
    [0.5, inf, 1.0]
    """
    name = _file(path, "path")
    out: dict[str, float] = {}
    for line_no, row in _rows(name):
        if line_no == 1 and len(row) == 2 and row[0].strip().lower() == "label" and not _is_number(row[1].strip()):
            continue
        if len(row) != 2:
            raise ValueError(f"{name}: line {line_no} has {len(row)} fields; each line is label,{what}")
        label, value = row[0], row[1].strip()
        number = float(value) if _is_number(value) else math.nan
        if math.isnan(number):
            raise ValueError(f"{name}: line {line_no}: the {what} {value!r} is not a number (inf allowed)")
        if label in out:
            raise ValueError(f"{name}: line {line_no}: the label {label!r} is given twice")
        out[label] = number
    if not out:
        raise ValueError(f"{name}: no label,{what} lines")
    return out


def read_matrix(path: str | os.PathLike[str], what: str = "value") -> dict[str, dict[str, float]]:
    """A table of numbers by pairs of labels from a UTF-8 CSV file: ``{row label: {column label: number}}``.

    The form of a matrix of pairwise budgets (context-aware LDP: the budget of the pair ``(x,
    x')`` is in row ``x``, column ``x'``): a header line with an empty first field (or any
    text) and then the column labels, and one line per row label with its label and then one
    number per column (``inf`` allowed).  An empty cell is left out (the diagonal, whose value
    no notion reads, may be empty).  Blank lines are skipped.  Pass the result to
    :meth:`Domain.matrix` for the ``d x d`` array in item order.

    Raises
    ------
    ValueError
        Naming the file and the line: a repeated or empty column label, a line whose number of
        fields is not the header's, a cell that is not a number, a row label given twice, or no
        row at all.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ldpkit.domain import Domain, read_matrix
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "pairs.csv"
    >>> _ = path.write_text(",a,b\\na,,1\\nb,2,\\n", encoding="utf-8")
    >>> read_matrix(path, "budget")
    {'a': {'b': 1.0}, 'b': {'a': 2.0}}
    >>> Domain(["b", "a"]).matrix(read_matrix(path, "budget")).tolist()
    [[0.0, 2.0], [1.0, 0.0]]
    """
    name = _file(path, "path")
    rows = iter(_rows(name))
    first = next(rows, None)
    if first is None:
        raise ValueError(f"{name}: empty; the first line is a header: an empty field, then the column labels")
    header_no, header = first
    columns = header[1:]
    if not columns or any(not c for c in columns) or len(set(columns)) != len(columns):
        raise ValueError(f"{name}: line {header_no}: the header must be an empty field followed by distinct, "
                         f"non-empty column labels, got {header!r}")
    out: dict[str, dict[str, float]] = {}
    for line_no, row in rows:
        if len(row) != len(header):
            raise ValueError(f"{name}: line {line_no} has {len(row)} fields; the header has {len(header)} (a label, "
                             f"then one {what} per column)")
        label = row[0]
        if label in out:
            raise ValueError(f"{name}: line {line_no}: the row label {label!r} is given twice")
        cells: dict[str, float] = {}
        for column, text in zip(columns, row[1:]):
            if not text.strip():
                continue
            number = float(text) if _is_number(text.strip()) else math.nan
            if math.isnan(number):
                raise ValueError(f"{name}: line {line_no}: the {what} {text.strip()!r} in column {column!r} is not a "
                                 "number (inf allowed; leave a cell empty to leave it out)")
            cells[column] = number
        out[label] = cells
    if not out:
        raise ValueError(f"{name}: no rows under the header")
    return out
