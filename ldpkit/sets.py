"""Users' item sets: the compressed container every item-set mechanism and dataset shares.

Each user holds a *set* of distinct items of ``{0, ..., d-1}`` (possibly empty).
:class:`ItemSets` stores all users' sets in compressed (CSR) form; :func:`as_itemsets` validates
users' sets given in any of the accepted forms (:class:`ItemSetsLike`) and returns them as
:class:`ItemSets`; :func:`all_itemsets` enumerates every subset of a small domain, the rows of an
item-set channel (Padding-and-Sampling, :mod:`ldpkit.padding`).

Item indices must be integers: an array of another dtype is refused even when its values are
whole numbers (``[1.0, 2.0]``), since a float item index is almost always a bug upstream (an
average, a division, or a column read with the wrong type).
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Sequence, Set
from dataclasses import dataclass
from typing import Union

import numpy as np
from numpy.typing import ArrayLike

from ._validation import ArgumentTypeError, check_domain_size, describe

__all__ = ["ItemSets", "ItemSetsLike", "all_itemsets", "as_itemsets"]

#: largest real domain for which :func:`all_itemsets` (and so
#: :meth:`~ldpkit.padding.PaddingSampling.channel`) enumerates all item sets
MAX_ENUMERATED_D = 10


def _is_integer_array(arr: np.ndarray) -> bool:
    """An array of a (non-boolean) integer dtype."""
    return arr.dtype != bool and np.issubdtype(arr.dtype, np.integer)


@dataclass(frozen=True, eq=False)
class ItemSets:
    """Users' item sets in compressed (CSR) form.

    User ``u`` holds ``indices[offsets[u]:offsets[u+1]]`` (distinct items of ``range(d)``).
    Build it with :func:`as_itemsets`, which validates; for many users, constructing
    ``ItemSets(indices, offsets, d)`` directly from int64 arrays skips the per-user
    conversion of Python lists (validation stays vectorised).  Construction itself only checks
    that ``indices`` and ``offsets`` are integer arrays.

    Attributes
    ----------
    indices
        int64 array: the items of every user, one user after the other.
    offsets
        int64 array of length ``n + 1``: user ``u``'s items are ``indices[offsets[u]:offsets[u+1]]``.
    d
        Number of items of the domain.

    Examples
    --------
    >>> from ldpkit.sets import as_itemsets
    >>> sets = as_itemsets([[0, 2], [1], [], [0, 1, 3]], d=4)
    >>> len(sets), sets.sizes.tolist(), sets.true_counts().tolist()
    (4, [2, 1, 0, 3], [2, 2, 1, 1])
    >>> sets.indices.tolist(), sets.offsets.tolist()
    ([0, 2, 1, 0, 1, 3], [0, 2, 3, 3, 6])
    """

    indices: np.ndarray
    offsets: np.ndarray
    d: int

    def __post_init__(self) -> None:
        for name in ("indices", "offsets"):
            value = getattr(self, name)
            if not isinstance(value, np.ndarray):
                raise ArgumentTypeError(f"ItemSets {name} must be an integer array, got {type(value).__name__}")
            if not _is_integer_array(value):
                raise ArgumentTypeError(f"ItemSets {name} must be an integer array, got dtype {value.dtype}")

    def __len__(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def sizes(self) -> np.ndarray:
        """``|v_u|`` for every user."""
        return np.diff(self.offsets)

    @property
    def users(self) -> np.ndarray:
        """Owner of each entry of :attr:`indices`."""
        return np.repeat(np.arange(len(self)), self.sizes)

    def true_counts(self) -> np.ndarray:
        """Number of users holding each item (length ``d``)."""
        return np.bincount(self.indices, minlength=self.d)

    def to_lists(self) -> list[list[int]]:
        """Back to a list of Python lists (for small inputs and tests)."""
        return [self.indices[a:b].tolist() for a, b in zip(self.offsets[:-1], self.offsets[1:])]


#: users' item sets as every item-set function accepts them (an :class:`ItemSets`, one entry per
#: user as a list, 1-d array or Python set of distinct items, or a 2-d array with one row per user)
ItemSetsLike = Union[ItemSets, Sequence[Union[ArrayLike, Set[int]]], np.ndarray]


def _validate_csr(indices: np.ndarray, offsets: np.ndarray, d: int) -> None:
    """Check CSR arrays (integer dtypes, see :class:`ItemSets`): offsets from 0 to ``indices.size``, items in
    ``range(d)`` and distinct within each user."""
    n = offsets.size - 1
    if n < 1:
        raise ValueError("itemsets is empty: at least one user is needed")
    if offsets[0] != 0 or np.any(np.diff(offsets) < 0) or offsets[-1] != indices.size:
        raise ValueError(f"itemsets offsets must start at 0, not decrease and end at {indices.size}")
    if indices.size:
        lo, hi = int(indices.min()), int(indices.max())
        if lo < 0 or hi >= d:
            bad = lo if lo < 0 else hi
            user = int(np.searchsorted(offsets, int(np.flatnonzero(indices == bad)[0]), side="right") - 1)
            raise ValueError(f"itemsets: user {user} holds item {bad}, outside the domain 0..{d - 1}")
        users = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
        key = np.sort(users * np.int64(d) + indices)
        dup = np.flatnonzero(np.diff(key) == 0)
        if dup.size:
            k = int(key[dup[0]])
            raise ValueError(f"itemsets: user {k // d} holds item {k % d} more than once")


def _user_items(u: int, v: ArrayLike | Set[int], d: int) -> np.ndarray:
    """User ``u``'s item set as a 1-d int64 array, its items checked to be integers in ``range(d)``.

    Items must be integers: values of any other dtype (floats, even whole ones, booleans, strings)
    raise :class:`~ldpkit.ArgumentTypeError`.  Python integers too large for int64 are range-checked
    as given, before a cast could wrap them.
    """
    arr = np.asarray(sorted(v) if isinstance(v, (set, frozenset)) else v)
    if arr.ndim != 1:
        raise ValueError(f"itemsets: user {u} has an item set of shape {arr.shape}, expected 1-d")
    if not arr.size:
        return arr.astype(np.int64)  # an empty set ([] is a float64 array)
    if arr.dtype == object:
        values = arr.tolist()
        bad = [x for x in values if isinstance(x, bool) or not isinstance(x, numbers.Integral)]
        if bad:
            raise ArgumentTypeError(f"itemsets: user {u} must hold integer items, got {describe(bad[0])}")
        arr = np.array([int(x) for x in values], dtype=object)  # Python ints of any size
    elif not _is_integer_array(arr):
        raise ArgumentTypeError(
            f"itemsets: user {u} must hold integer items, got {describe(arr[0])} (dtype {arr.dtype})"
        )
    if arr.dtype != np.int64:
        # range check on the values as given, before a cast to int64 could wrap or overflow them
        lo, hi = arr.min(), arr.max()
        if lo < 0 or hi >= d:
            bad_item = lo if lo < 0 else hi
            raise ValueError(f"itemsets: user {u} holds item {describe(bad_item)}, outside the domain 0..{d - 1}")
    return arr.astype(np.int64, copy=False)


def as_itemsets(itemsets: ItemSetsLike, d: int) -> ItemSets:
    """Validate users' item sets and return them as :class:`ItemSets`.

    Parameters
    ----------
    itemsets
        An :class:`ItemSets` over ``d`` items, or a non-empty sequence (one entry per user)
        of 1-d integer arrays, lists or Python sets.  Items must be integers (an array of another
        dtype is refused even when its values are whole numbers), lie in ``range(d)`` and be
        distinct within each set; empty sets are allowed (an empty set is a user who holds
        nothing: see :mod:`ldpkit.padding`).
    d
        Number of real items.

    Examples
    --------
    >>> from ldpkit.sets import as_itemsets
    >>> as_itemsets([[2, 0], [], {3, 1}], 4).to_lists()
    [[2, 0], [], [1, 3]]
    >>> from ldpkit import ArgumentTypeError
    >>> try:
    ...     as_itemsets([[1.0, 2.0]], 4)          # whole numbers, but not integers
    ... except ArgumentTypeError as err:
    ...     print(err)
    itemsets: user 0 must hold integer items, got 1.0 (dtype float64)
    """
    if isinstance(itemsets, ItemSets):
        if itemsets.d != d:
            raise ValueError(f"itemsets are over d={itemsets.d} items, expected d={d}")
        _validate_csr(itemsets.indices, itemsets.offsets, d)
        return itemsets
    if isinstance(itemsets, np.ndarray) and itemsets.dtype != object:
        if itemsets.ndim != 2:
            raise ValueError(f"itemsets must be a sequence of item sets, got an array of shape {itemsets.shape}")
        itemsets = list(itemsets)
    if not isinstance(itemsets, Sequence) and not isinstance(itemsets, np.ndarray):
        raise ArgumentTypeError(f"itemsets must be a sequence of item sets, got {type(itemsets).__name__}")
    if len(itemsets) == 0:
        raise ValueError("itemsets is empty: at least one user is needed")
    parts = [_user_items(u, v, d) for u, v in enumerate(itemsets)]
    sizes = np.fromiter((p.size for p in parts), dtype=np.int64, count=len(parts))
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    indices = np.concatenate(parts) if offsets[-1] else np.zeros(0, dtype=np.int64)
    _validate_csr(indices, offsets, d)
    return ItemSets(indices, offsets, d)


def all_itemsets(d: int) -> list[list[int]]:
    """Every subset of ``range(d)``, the empty set first, by size then lexicographically.

    For exact enumeration of item-set channels (``d <= MAX_ENUMERATED_D``).
    """
    d = check_domain_size(d, minimum=1)
    if d > MAX_ENUMERATED_D:
        raise ValueError(f"enumerating all 2**{d} item sets needs d <= MAX_ENUMERATED_D={MAX_ENUMERATED_D}")
    return [list(c) for r in range(d + 1) for c in itertools.combinations(range(d), r)]
