"""Items by label: a :class:`Domain` maps the labels of a user's data (strings) to item indices.

Every mechanism in ldpkit works on item indices ``0 .. d-1``.  Real data come as labels
(product codes, words, place identifiers).  A :class:`Domain` is the fixed, ordered list of
labels a collection is configured with: it encodes labels to indices before perturbation,
decodes estimates back to labels, and is saved with the reports and the aggregator's state, so
an estimate never loses the meaning of its rows.  A label outside the domain is refused by
name: silently dropping or remapping it would bias every estimate.

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
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from ._validation import ArgumentTypeError, check_items

__all__ = ["Domain"]

#: how :meth:`Domain.from_values` orders the labels it finds
LabelOrder = Literal["sorted", "frequency", "first"]


class Domain:
    """An ordered, duplicate-free list of item labels (strings); item ``i`` is ``labels[i]``.

    Parameters
    ----------
    labels
        The labels, in item order.  Each must be a non-empty string without line breaks
        (a report file stores them one per line of its header).

    Raises
    ------
    ValueError
        Fewer than two labels, a repeated label, or an empty one.
    ArgumentTypeError
        A label that is not a string.
    """

    __slots__ = ("_index", "labels")

    labels: tuple[str, ...]
    _index: dict[str, int]

    def __init__(self, labels: Iterable[str]) -> None:
        if isinstance(labels, (str, bytes)):
            raise ArgumentTypeError(f"labels must be a sequence of strings, not one string {labels!r}")
        labs = tuple(labels)
        for pos, lab in enumerate(labs):
            if not isinstance(lab, str):
                raise ArgumentTypeError(f"label {pos} must be a string, got {type(lab).__name__} {lab!r}")
            if not lab or "\n" in lab or "\r" in lab:
                raise ValueError(f"label {pos} must be a non-empty string without line breaks, got {lab!r}")
        if len(labs) < 2:
            raise ValueError(f"a domain needs at least 2 labels, got {len(labs)}")
        index: dict[str, int] = {}
        for pos, lab in enumerate(labs):
            if lab in index:
                raise ValueError(f"label {lab!r} appears twice (items {index[lab]} and {pos})")
            index[lab] = pos
        object.__setattr__(self, "labels", labs)
        object.__setattr__(self, "_index", index)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Domain is immutable")

    @classmethod
    def from_values(cls, values: Iterable[Any], order: LabelOrder = "frequency") -> Domain:
        """The domain of the distinct labels in ``values`` (each converted with ``str``).

        ``order`` is ``"frequency"`` (most frequent first, ties in first-seen order), ``"sorted"``
        or ``"first"`` (first-seen order).  Building the domain from the data themselves is a
        convenience for dry runs: a deployed collection fixes its domain before seeing any data.
        """
        if order not in ("sorted", "frequency", "first"):
            raise ValueError(f"order must be 'sorted', 'frequency' or 'first', got {order!r}")
        counts = Counter(str(v) for v in values)
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
        return label in self._index

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

    def to_json(self) -> dict[str, Any]:
        """``{"labels": [...]}``, what report files and aggregator states store."""
        return {"labels": list(self.labels)}

    @classmethod
    def from_json(cls, data: Any) -> Domain:
        """Inverse of :meth:`to_json` (validated)."""
        if not isinstance(data, dict) or not isinstance(data.get("labels"), list):
            raise ValueError(f"a stored domain must be an object with a 'labels' list, got {type(data).__name__}")
        return cls(data["labels"])

    @classmethod
    def integers(cls, d: int) -> Domain:
        """The domain whose labels are ``"0" .. "d-1"`` (for data that are already indices)."""
        return cls(str(i) for i in range(int(d)))
