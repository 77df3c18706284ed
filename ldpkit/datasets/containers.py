"""Common containers returned by every dataset loader, parser and synthetic generator.

Two shapes of data occur in the papers: *single-item* data (each user holds one item) and
*item-set* data (each user holds a set of distinct items).  Both record where the data came from
(``source``) and whether it is a synthetic stand-in for a real file that was not available
(``is_standin``).  :attr:`~ldpkit.datasets.SingleItemData.label` is the string every table caption and
figure title must use, so a stand-in can never be reported as the real dataset.  Documented on the
Datasets page of the book.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._rng import RNGLike, as_generator
from ..padding import ItemSets

__all__ = ["SingleItemData", "ItemSetData"]


def _label(name: str, is_standin: bool) -> str:
    return f"{name} (stand-in)" if is_standin else name


@dataclass(frozen=True, eq=False)
class SingleItemData:
    """Single-item data: user ``u`` holds item ``items[u]`` of ``range(m)``.

    Attributes
    ----------
    items
        int64 array of length ``n``.
    vocabulary
        Array of length ``m``: ``vocabulary[k]`` is the original label of item ``k`` (an id from
        the file, a word, a stock code, ...).
    name
        Short dataset name (``"Retail"``, ``"Brown"``, ...).
    source
        Where the data came from: a file name with its sha256, or the generator and its parameters.
    is_standin
        True when the data is a synthetic stand-in for an unavailable real file.
    notes
        Everything the parser or generator did that a reader must know (skipped lines with counts,
        filters applied).  Never empty for a stand-in.

    Examples
    --------
    >>> from ldpkit.datasets import synthetic
    >>> data = synthetic.uniform_items(n=1_000, m=10, rng=0)
    >>> data.n, data.m, data.label, data.is_standin
    (1000, 10, 'Uniform', False)
    >>> int(data.counts().sum())
    1000
    """

    items: np.ndarray
    vocabulary: np.ndarray
    name: str
    source: str
    is_standin: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def n(self) -> int:
        """Number of users."""
        return int(self.items.size)

    @property
    def m(self) -> int:
        """Number of items in the domain."""
        return int(self.vocabulary.size)

    @property
    def label(self) -> str:
        """Name for captions and titles; ends in ``(stand-in)`` for stand-ins."""
        return _label(self.name, self.is_standin)

    def counts(self) -> np.ndarray:
        """Number of users holding each item (length ``m``)."""
        return np.bincount(self.items, minlength=self.m)

    def summary(self) -> dict[str, Any]:
        """n, m, top-item share and provenance, as a flat dict (for tables)."""
        c = self.counts()
        return {
            "dataset": self.label,
            "kind": "single item",
            "n": self.n,
            "m": self.m,
            "records": self.n,
            "mean size": 1.0,
            "max size": 1,
            "top-item share": float(c.max() / self.n),
            "source": self.source,
        }


@dataclass(frozen=True, eq=False)
class ItemSetData:
    """Item-set data: user ``u`` holds the distinct items ``sets.indices[offsets[u]:offsets[u+1]]``.

    Items keep the order in which they first appear in the user's record, so
    :meth:`first_items` reproduces the "first item of each user" reduction of the ID-LDP paper.
    Other attributes as in :class:`SingleItemData`.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit.datasets import ItemSetData
    >>> from ldpkit.padding import as_itemsets
    >>> data = ItemSetData(sets=as_itemsets([[2, 0], [1], [0, 1, 3]], 4),
    ...                    vocabulary=np.array(["bread", "milk", "eggs", "tea"]), name="Toy", source="doctest")
    >>> data.n, data.m, data.n_records, data.counts().tolist()
    (3, 4, 6, [2, 2, 1, 1])
    >>> data.first_items().items.tolist()          # the first item of each user's record
    [2, 1, 0]
    """

    sets: ItemSets
    vocabulary: np.ndarray
    name: str
    source: str
    is_standin: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def n(self) -> int:
        """Number of users (transactions)."""
        return len(self.sets)

    @property
    def m(self) -> int:
        """Number of items in the domain."""
        return int(self.vocabulary.size)

    @property
    def sizes(self) -> np.ndarray:
        """Set size of every user."""
        return self.sets.sizes

    @property
    def n_records(self) -> int:
        """Total number of (user, item) pairs."""
        return int(self.sets.indices.size)

    @property
    def label(self) -> str:
        """Name for captions and titles; ends in ``(stand-in)`` for stand-ins."""
        return _label(self.name, self.is_standin)

    def counts(self) -> np.ndarray:
        """Number of users holding each item (length ``m``)."""
        return np.bincount(self.sets.indices, minlength=self.m)

    def _single(self, items: np.ndarray, how: str) -> SingleItemData:
        return SingleItemData(
            items=items,
            vocabulary=self.vocabulary,
            name=self.name,
            source=self.source,
            is_standin=self.is_standin,
            notes=(*self.notes, how),
        )

    def first_items(self) -> SingleItemData:
        """Single-item data made of each user's first item; users with an empty set are dropped."""
        sizes = self.sizes
        keep = sizes > 0
        items = self.sets.indices[self.sets.offsets[:-1][keep]]
        dropped = int((~keep).sum())
        how = "single item = first item of each user" + (f"; {dropped} empty users dropped" if dropped else "")
        return self._single(items.astype(np.int64), how)

    def random_items(self, rng: RNGLike = None) -> SingleItemData:
        """Single-item data made of one uniformly chosen item per user (empty users dropped)."""
        gen = as_generator(rng)
        sizes = self.sizes
        keep = np.flatnonzero(sizes > 0)
        pick = self.sets.offsets[keep] + np.floor(gen.random(keep.size) * sizes[keep]).astype(np.int64)
        dropped = int(sizes.size - keep.size)
        how = "single item = one uniformly random item of each user" + (
            f"; {dropped} empty users dropped" if dropped else ""
        )
        return self._single(self.sets.indices[pick].astype(np.int64), how)

    def summary(self) -> dict[str, Any]:
        """n, m, records, mean and max set size, top-item share and provenance (for tables)."""
        c = self.counts()
        sizes = self.sizes
        return {
            "dataset": self.label,
            "kind": "item sets",
            "n": self.n,
            "m": self.m,
            "records": self.n_records,
            "mean size": float(sizes.mean()),
            "max size": int(sizes.max()) if sizes.size else 0,
            "top-item share": float(c.max() / self.n),
            "source": self.source,
        }
