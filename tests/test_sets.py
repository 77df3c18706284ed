"""Tests for ldpkit.sets, users' item sets: item indices must be integers, in the container and in as_itemsets.

The round trip of the accepted forms, the range, duplicate and shape checks, and the CSR checks run
in ``tests/test_padding.py`` (through Padding-and-Sampling); this file checks the integer rule:
a float (or boolean, or string) item index is refused by type, even when its value is a whole
number, with an :class:`ldpkit.ArgumentTypeError` naming the argument and the value as given.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ldpkit
from ldpkit import ArgumentTypeError
from ldpkit.padding import PaddingSampling
from ldpkit.sets import MAX_ENUMERATED_D, ItemSets, all_itemsets, as_itemsets
from ldpkit.unary import OUE


@pytest.mark.parametrize(
    ("itemsets", "given"),
    [
        ([[1.0]], "1.0"),                                   # a whole number, but a float
        ([[0, 1], [2.0, 3.0]], "2.0"),
        ([[2.5]], "2.5"),
        ([np.array([0, 1], dtype=np.float32)], "0.0"),
        (np.array([[0.0, 1.0], [2.0, 3.0]]), "0.0"),        # a 2-d float array, one row per user
        ([[True, False]], "True"),
        ([np.array(["1"])], "'1'"),
        ([np.array([1, 2.0], dtype=object)], "2.0"),       # Python objects: the first that is no integer
        ([[10**30, 1.5]], "1.5"),
    ],
)
def test_non_integer_items_are_refused_by_type(itemsets: Any, given: str) -> None:
    with pytest.raises(ArgumentTypeError, match="itemsets: user [01] must hold integer items") as info:
        as_itemsets(itemsets, 4)
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
    assert given in str(info.value)


def test_every_item_set_entry_point_refuses_float_items() -> None:
    ps = PaddingSampling(lambda k: OUE(k, 1.0), 4, 2)
    for call in (lambda: ps.sample([[0, 1], [2.0]], rng=0), lambda: ps.variance([[1.0]]),
                 lambda: ps.channel([[0.0]]), lambda: ldpkit.as_itemsets([[3.0]], 4)):
        with pytest.raises(ArgumentTypeError, match=r"itemsets: user \d must hold integer items, got \d\.0"):
            call()


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16, np.uint64, np.int64])
def test_integer_dtypes_are_accepted(dtype: Any) -> None:
    sets = as_itemsets([np.array([3, 0], dtype=dtype), np.array([], dtype=dtype)], 4)
    assert sets.to_lists() == [[3, 0], []]
    assert sets.indices.dtype == np.int64 and sets.offsets.dtype == np.int64
    # a Python int beyond int64 is still an integer: refused by range, naming it as given
    with pytest.raises(ValueError, match="item 1180591620717411303424, outside") as info:
        as_itemsets([[2**70]], 4)
    assert not isinstance(info.value, TypeError)


@pytest.mark.parametrize(
    ("indices", "offsets", "name", "given"),
    [
        (np.array([0.0, 1.0]), np.array([0, 2]), "indices", "dtype float64"),
        (np.array([0, 1]), np.array([0.0, 2.0]), "offsets", "dtype float64"),
        (np.array([True]), np.array([0, 1]), "indices", "dtype bool"),
        ([0, 1], np.array([0, 2]), "indices", "list"),
    ],
)
def test_the_container_refuses_non_integer_arrays(indices: Any, offsets: Any, name: str, given: str) -> None:
    with pytest.raises(ArgumentTypeError, match=f"ItemSets {name} must be an integer array, got {given}"):
        ItemSets(indices, offsets, 4)


def test_integer_arrays_of_any_width_build_the_container() -> None:
    sets = ItemSets(np.array([2, 0, 1], dtype=np.int32), np.array([0, 2, 3], dtype=np.uint32), 3)
    assert as_itemsets(sets, 3) is sets
    assert sets.true_counts().tolist() == [1, 1, 1]


def test_all_itemsets_order_and_limit() -> None:
    assert all_itemsets(2) == [[], [0], [1], [0, 1]]
    assert len(all_itemsets(MAX_ENUMERATED_D)) == 2**MAX_ENUMERATED_D
    with pytest.raises(ValueError, match="MAX_ENUMERATED_D"):
        all_itemsets(MAX_ENUMERATED_D + 1)


def test_the_old_import_paths_still_work() -> None:
    from ldpkit import padding

    assert ldpkit.ItemSets is ItemSets and ldpkit.as_itemsets is as_itemsets
    assert padding.ItemSets is ItemSets and padding.all_itemsets is all_itemsets
