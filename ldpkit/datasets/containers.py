"""Common containers returned by every dataset loader, parser and synthetic generator.

Two shapes of data occur in the papers: *single-item* data (each user holds one item) and
*item-set* data (each user holds a set of distinct items).  Both record where the data came from
(``source``, and ``files``: the real files read with their sha256) and what they are
(``origin``):

``"real"``
    parsed from the real file(s);
``"prefix"``
    a stand-in rebuilt from a real prefix of the file (Kosarak: its first 36,682 sessions);
``"stand-in"``
    a synthetic stand-in calibrated to the published statistics of a file that is missing;
``"synthetic"``
    one of the papers' own synthetic datasets, generated as the paper specifies.

:attr:`~ldpkit.datasets.SingleItemData.label` is the string every table caption and figure title
must use (``"Kosarak"``, ``"Kosarak (prefix stand-in)"``, ``"Kosarak (stand-in)"``), so a stand-in
can never be reported as the real dataset, and :meth:`~ldpkit.datasets.SingleItemData.identity`
the record that provenance sidecars and ``ldpkit check`` compare.  Documented on the Datasets page
of the book.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import numpy as np

from .._rng import RNGLike, as_generator
from ..sets import ItemSets

__all__ = ["DataIdentity", "ItemSetData", "ORIGINS", "Origin", "SingleItemData", "label_for"]

#: what a dataset is: the real file, a stand-in rebuilt from a real prefix of it, a synthetic
#: stand-in, or the paper's own synthetic data (module docstring)
Origin = Literal["real", "prefix", "stand-in", "synthetic"]
#: every origin, in the order of the module docstring
ORIGINS: tuple[str, ...] = get_args(Origin)
#: origins that are stand-ins for a real dataset
STANDIN_ORIGINS = ("prefix", "stand-in")
_SUFFIX = {"real": "", "synthetic": "", "prefix": " (prefix stand-in)", "stand-in": " (stand-in)"}


def label_for(name: str, origin: str) -> str:
    """The label of dataset ``name`` with ``origin``: the name, plus what kind of stand-in it is.

    Examples
    --------
    >>> from ldpkit.datasets import label_for
    >>> label_for("Kosarak", "real"), label_for("Kosarak", "prefix"), label_for("Kosarak", "stand-in")
    ('Kosarak', 'Kosarak (prefix stand-in)', 'Kosarak (stand-in)')
    """
    if origin not in _SUFFIX:
        raise ValueError(f"origin must be one of {', '.join(map(repr, ORIGINS))}, got {origin!r}")
    return name + _SUFFIX[origin]


@dataclass(frozen=True)
class DataIdentity:
    """Exactly what data a run used: written to provenance sidecars and compared by ``ldpkit check``.

    Attributes
    ----------
    name
        Dataset name (``"Kosarak"``).
    label
        The label outputs used (:func:`label_for`, or an experiment's own qualifier on top).
    origin
        ``"real"``, ``"prefix"``, ``"stand-in"`` or ``"synthetic"`` (module docstring).
    n, m
        Users and items.
    files
        ``(file name, sha256)`` of every real file read (the prefix for ``"prefix"``; empty for
        stand-ins and synthetic data).
    source
        The data's ``source``: the file names with their checksums, or the generator, its
        parameters and its seed.
    content_sha256
        sha256 of the data themselves (item indices, set offsets and vocabulary in a canonical
        byte form): equal identities mean the same users holding the same items.

    Examples
    --------
    >>> from ldpkit.datasets import synthetic
    >>> ident = synthetic.uniform_items(n=100, m=5, rng=1).identity()
    >>> ident.origin, ident.n, ident.m, len(ident.content_sha256)
    ('synthetic', 100, 5, 64)
    >>> ident == type(ident).from_dict(ident.as_dict())
    True
    """

    name: str
    label: str
    origin: str
    n: int
    m: int
    files: tuple[tuple[str, str], ...]
    source: str
    content_sha256: str

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``files`` as a list of ``{"name", "sha256"}``)."""
        return {"name": self.name, "label": self.label, "origin": self.origin, "n": self.n, "m": self.m,
                "files": [{"name": f, "sha256": h} for f, h in self.files], "source": self.source,
                "content_sha256": self.content_sha256}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DataIdentity:
        """Inverse of :meth:`as_dict`."""
        return cls(name=str(data["name"]), label=str(data["label"]), origin=str(data["origin"]), n=int(data["n"]),
                   m=int(data["m"]), files=tuple((str(f["name"]), str(f["sha256"])) for f in data["files"]),
                   source=str(data["source"]), content_sha256=str(data["content_sha256"]))

    def describe(self) -> str:
        """One line: label, origin and the checksums or the generator."""
        if self.files:
            what = ", ".join(f"{name} sha256 {digest[:12]}" for name, digest in self.files)
        else:
            what = self.source
        return f"{self.label} [{self.origin}: {what}]"


def _content_digest(*arrays: np.ndarray, vocabulary: np.ndarray) -> str:
    digest = hashlib.sha256()
    for arr in arrays:
        data = np.ascontiguousarray(arr, dtype="<i8")
        digest.update(str(data.size).encode() + b":")
        digest.update(data.tobytes())
    vocab = np.asarray(vocabulary)
    if vocab.dtype.kind in "iu":
        digest.update(b"vocab-int:" + np.ascontiguousarray(vocab, dtype="<i8").tobytes())
    else:
        digest.update(b"vocab-str:" + "\x00".join(map(str, vocab.tolist())).encode("utf-8"))
    return digest.hexdigest()


def _check_origin(data: Any) -> None:
    """Resolve ``origin`` from ``is_standin`` when not given, else check that the two agree."""
    origin = data.origin
    if origin is None:
        object.__setattr__(data, "origin", "stand-in" if data.is_standin else "real")
        return
    if origin not in ORIGINS:
        raise ValueError(f"origin must be one of {', '.join(map(repr, ORIGINS))}, got {origin!r}")
    if data.is_standin and origin not in STANDIN_ORIGINS:
        raise ValueError(f"is_standin=True contradicts origin={origin!r}")
    object.__setattr__(data, "is_standin", origin in STANDIN_ORIGINS)


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
        True when the data is a stand-in for an unavailable real file (``origin`` is
        ``"prefix"`` or ``"stand-in"``).
    notes
        Everything the parser or generator did that a reader must know (skipped lines with counts,
        filters applied).  Never empty for a stand-in.
    origin
        ``"real"``, ``"prefix"``, ``"stand-in"`` or ``"synthetic"`` (module docstring); ``None``
        on construction means ``"stand-in"`` if ``is_standin`` else ``"real"``.
    files
        ``(file name, sha256)`` of the real files the data were read from (set by the loaders).

    Examples
    --------
    >>> from ldpkit.datasets import synthetic
    >>> data = synthetic.uniform_items(n=1_000, m=10, rng=0)
    >>> data.n, data.m, data.label, data.is_standin, data.origin
    (1000, 10, 'Uniform', False, 'synthetic')
    >>> int(data.counts().sum())
    1000
    """

    items: np.ndarray
    vocabulary: np.ndarray
    name: str
    source: str
    is_standin: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)
    origin: str | None = None
    files: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        _check_origin(self)

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
        """Name for captions and titles (:func:`label_for`): stand-ins say which kind they are."""
        return label_for(self.name, str(self.origin))

    def identity(self) -> DataIdentity:
        """What these data are, exactly (:class:`DataIdentity`), for provenance and checks."""
        return DataIdentity(self.name, self.label, str(self.origin), self.n, self.m, self.files, self.source,
                            _content_digest(self.items, vocabulary=self.vocabulary))

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
    >>> from ldpkit.sets import as_itemsets
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
    origin: str | None = None
    files: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        _check_origin(self)

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
        """Name for captions and titles (:func:`label_for`): stand-ins say which kind they are."""
        return label_for(self.name, str(self.origin))

    def identity(self) -> DataIdentity:
        """What these data are, exactly (:class:`DataIdentity`), for provenance and checks."""
        return DataIdentity(self.name, self.label, str(self.origin), self.n, self.m, self.files, self.source,
                            _content_digest(self.sets.indices, self.sets.offsets, vocabulary=self.vocabulary))

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
            origin=self.origin,
            files=self.files,
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
