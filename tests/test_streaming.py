"""Tests for ldpkit.streaming: chunk-size invariance, agreement with the per-user path, validation, memory.

Every registered single-item mechanism runs through the streaming path; small blocks
(``BLOCK``) keep the tests fast, and one test uses the default :data:`BLOCK_USERS`.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ldpkit import GRR, OLH, OUE, ArgumentTypeError
from ldpkit.family import families
from ldpkit.streaming import BLOCK_USERS, block_generator, stream_estimate, stream_support
from ldpkit.testing import assert_unbiased

BLOCK = 50
N = 2 * 1000 + 17  # not a multiple of BLOCK nor of any chunk size below: every path carries a remainder


def _instances() -> list[tuple[str, Any]]:
    out = []
    for fam in families():
        if fam.inputs != "items":
            continue
        for k, mech in enumerate(fam.examples()):
            out.append((f"{fam.name}-{k}", mech))
    return out


INSTANCES = _instances()
IDS = [name for name, _ in INSTANCES]
ITEMSET_MECHS = [(fam.name, fam.examples()[0]) for fam in families(inputs="itemsets")]


def _items(d: int, n: int = N, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, d, size=n)


def _chunked(items: np.ndarray, size: int) -> list[np.ndarray]:
    return [items[i : i + size] for i in range(0, items.size, size)]


def _memmap(items: np.ndarray, path: Path) -> np.memmap:
    mm = np.memmap(path, dtype=np.int32, mode="w+", shape=items.shape)
    mm[:] = items
    mm.flush()
    del mm
    return np.memmap(path, dtype=np.int32, mode="r", shape=items.shape)


def test_every_single_item_family_is_covered() -> None:
    """The registry's single-item families all appear (a new family is picked up automatically)."""
    names = {name.rsplit("-", 1)[0] for name in IDS}
    assert {"GRR", "OUE", "RAPPOR", "UE", "OLH", "HR", "FHR", "uRR", "IPRR", "IDUE-opt0", "IDUE-opt1", "IDUE-opt2",
            "LIP-kary", "LIP-binary", "Channel"} <= names


# ---------------------------------------------------------------------------- (1) chunk-size invariance
@pytest.mark.parametrize("mech", [m for _, m in INSTANCES], ids=IDS)
def test_support_does_not_depend_on_chunking(mech: Any, tmp_path: Path) -> None:
    """Chunk sizes 1, 7, 1000, BLOCK + 3, one array, a generator and a memmap give identical counts."""
    items = _items(mech.d)
    ref, n = stream_support(mech, items, rng=11, block_users=BLOCK)
    assert n == N and ref.dtype == np.int64
    for size in (1, 7, 1000, BLOCK + 3):
        got, n2 = stream_support(mech, _chunked(items, size), rng=11, block_users=BLOCK)
        assert n2 == N
        np.testing.assert_array_equal(got, ref, err_msg=f"chunk size {size}")
    got, _ = stream_support(mech, (c for c in _chunked(items, 333)), rng=11, block_users=BLOCK)
    np.testing.assert_array_equal(got, ref, err_msg="generator of chunks")
    got, _ = stream_support(mech, _memmap(items, tmp_path / "items.i32"), rng=11, block_users=BLOCK)
    np.testing.assert_array_equal(got, ref, err_msg="memmap")
    # with uneven chunks, some empty, mixed integer dtypes
    rng = np.random.default_rng(1)
    cuts = np.sort(rng.integers(0, N, size=40))
    uneven = [c.astype(dt) for c, dt in zip(np.split(items, cuts), [np.int8, np.uint16, np.int64, np.uint64] * 11)]
    got, _ = stream_support(mech, uneven, rng=11, block_users=BLOCK)
    np.testing.assert_array_equal(got, ref, err_msg="uneven chunks")


def test_default_block_size_invariance(tmp_path: Path) -> None:
    """At the default BLOCK_USERS: chunks of 1000, BLOCK_USERS + 3, one array and a memmap agree."""
    grr = GRR(20, 1.0)
    items = _items(20, n=2 * BLOCK_USERS + 5, seed=3)
    ref, n = stream_support(grr, items, rng=2)
    assert n == items.size
    for size in (1000, BLOCK_USERS + 3):
        np.testing.assert_array_equal(stream_support(grr, _chunked(items, size), rng=2)[0], ref)
    np.testing.assert_array_equal(stream_support(grr, _memmap(items, tmp_path / "m.i32"), rng=2)[0], ref)


def test_seed_forms() -> None:
    """An int seed and SeedSequence(seed) are the same run; other seeds and None differ; a spawned child works."""
    oue = OUE(8, 1.0)
    items = _items(8, n=500)
    a = stream_support(oue, items, rng=4, block_users=64)[0]
    np.testing.assert_array_equal(a, stream_support(oue, items, rng=np.random.SeedSequence(4), block_users=64)[0])
    assert not np.array_equal(a, stream_support(oue, items, rng=5, block_users=64)[0])
    fresh = [stream_support(oue, items, block_users=64)[0] for _ in range(2)]  # rng=None: fresh entropy
    assert not np.array_equal(*fresh)
    child = np.random.SeedSequence(4).spawn(1)[0]
    c1 = stream_support(oue, items, rng=child, block_users=64)[0]
    np.testing.assert_array_equal(c1, stream_support(oue, items, rng=np.random.SeedSequence(4).spawn(1)[0],
                                                     block_users=64)[0])
    assert not np.array_equal(a, c1)


# ---------------------------------------------------------------------------- (2) agreement with the per-user path
@pytest.mark.parametrize("mech", [m for _, m in INSTANCES], ids=IDS)
def test_support_is_sum_of_block_aggregates(mech: Any) -> None:
    """The streamed total equals the per-block aggregates of the ordinary path, computed by hand.

    And summing per-block aggregates equals aggregating all reports at once (the additivity
    the streaming path relies on, checked for this mechanism's ``aggregate``), and the
    estimate equals ``estimate_from_support`` of the ordinary path.  Has power against a
    dropped or duplicated remainder, a block keyed with the wrong generator, and an aggregate
    that is not a sum over users (a dropped tail changes ``n`` and the counts).
    """
    items = _items(mech.d)
    support, n = stream_support(mech, _chunked(items, 7), rng=9, block_users=BLOCK)
    blocks = _chunked(items, BLOCK)
    reports = [mech.perturb(b, rng=block_generator(9, k)) for k, b in enumerate(blocks)]
    by_hand = sum(np.asarray(mech.aggregate(r), dtype=np.int64) for r in reports)
    assert n == sum(mech.n_reports(r) for r in reports) == N
    np.testing.assert_array_equal(support, by_hand)
    # additivity: one report object for the whole population, same draws (one block of N users)
    whole = mech.perturb(items, rng=block_generator(9, 0))
    one_block, n1 = stream_support(mech, _chunked(items, 100), rng=9, block_users=N)
    np.testing.assert_array_equal(one_block, mech.aggregate(whole))
    assert n1 == mech.n_reports(whole)
    np.testing.assert_array_equal(stream_estimate(mech, items, rng=9, block_users=N), mech.estimate(whole))
    np.testing.assert_array_equal(stream_estimate(mech, items, rng=9, block_users=BLOCK),
                                  mech.estimate_from_support(by_hand, N))


@pytest.mark.parametrize("mech", [GRR(3, 1.0), OUE(3, 1.0), OLH(3, 1.0)], ids=["GRR", "OUE", "OLH"])
def test_streamed_estimate_is_unbiased(mech: Any) -> None:
    """Mean of 300 seeded streamed estimates is within 5 standard errors ``sqrt(Var / 300)`` of the truth.

    300 shuffled users in blocks of 64 (a final block of 44) and chunks of 37: dropping the
    carried remainder would remove about 22 holders of item 0 (44 * 150/300), shifting its mean
    by about 15 standard errors (GRR; more for OUE and OLH), so that mistake fails with near
    certainty; so does an estimator given the wrong ``n``.
    """
    counts = np.array([150, 100, 50])
    items = np.repeat(np.arange(3), counts)
    np.random.default_rng(0).shuffle(items)
    est = np.stack([stream_estimate(mech, _chunked(items, 37), rng=1000 + s, block_users=64) for s in range(300)])
    assert_unbiased(est, counts, mech.variance(counts))


# ---------------------------------------------------------------------------- (3) validation
def test_bad_item_in_later_chunk_names_the_chunk() -> None:
    grr = GRR(5, 1.0)
    chunks = [np.arange(5), np.array([1, 2]), np.array([0, 4, 7, 1])]
    with pytest.raises(ValueError, match=r"chunk 2 \(users from 7\) contains item 7 at position 2 \(user 9\)"):
        stream_support(grr, chunks, rng=0)
    with pytest.raises(ValueError, match=r"chunk 1 .* contains item -1 at position 0"):
        stream_support(grr, [np.arange(5), np.array([-1])], rng=0)
    big = np.array([0, 2**63], dtype=np.uint64)
    with pytest.raises(ValueError, match="contains item 9223372036854775808 at position 1"):
        stream_support(grr, [big], rng=0)


def test_bad_item_raises_before_its_chunk_is_perturbed() -> None:
    """The blocks before the bad chunk run (it is a stream), the bad chunk itself never reaches perturb."""
    seen: list[int] = []

    class Spy(GRR):
        def perturb(self, items: Any, rng: Any = None) -> Any:
            seen.append(int(np.asarray(items).size))
            return super().perturb(items, rng)

    with pytest.raises(ValueError, match="chunk 1"):
        stream_support(Spy(3, 1.0), [np.zeros(10, dtype=int), np.array([0, 5])], rng=0, block_users=4)
    assert seen == [4, 4]  # two whole blocks of chunk 0; the carried 2 users are not perturbed


@pytest.mark.parametrize(
    "chunk", [np.array([0.0, 1.0]), np.array([True, False]), np.array(["0", "1"]), "01", 3],
    ids=["float", "bool", "str-array", "str", "int"],
)
def test_non_integer_chunks_refused(chunk: Any) -> None:
    with pytest.raises(ArgumentTypeError, match="chunk 1"):
        stream_support(GRR(3, 1.0), [np.array([0, 1]), chunk], rng=0)


def test_bad_arrays_and_iterables_refused() -> None:
    grr = GRR(3, 1.0)
    with pytest.raises(ArgumentTypeError, match="integer items, got dtype float64"):
        stream_support(grr, np.zeros(4), rng=0)
    with pytest.raises(ValueError, match=r"must be 1-d, got shape \(2, 2\)"):
        stream_support(grr, np.zeros((2, 2), dtype=int), rng=0)
    with pytest.raises(ValueError, match=r"chunk 0 .* got shape \(2, 2\)"):
        stream_support(grr, [np.zeros((2, 2), dtype=int)], rng=0)
    with pytest.raises(ArgumentTypeError, match="chunks must be an iterable"):
        stream_support(grr, 5, rng=0)
    with pytest.raises(ValueError, match="no items"):
        stream_support(grr, [np.array([], dtype=int)], rng=0)
    with pytest.raises(ValueError, match="no items"):
        stream_support(grr, iter([]), rng=0)


def test_generator_rng_refused_before_any_work() -> None:
    """A Generator cannot be re-keyed per block: refused (before the iterator is touched), with the workaround."""
    touched = []

    def chunks() -> Any:
        touched.append(1)
        yield np.array([0, 1])

    with pytest.raises(ValueError, match=r"Generator cannot be re-keyed; pass seed=int\(gen.integers"):
        stream_support(GRR(3, 1.0), chunks(), rng=np.random.default_rng(0))
    assert touched == []
    with pytest.raises(ArgumentTypeError):
        stream_support(GRR(3, 1.0), [np.array([0])], rng=np.random.default_rng(0))


@pytest.mark.parametrize(
    "rng", [-1, 1.5, "seed", True, np.random.RandomState(0)], ids=["neg", "float", "str", "bool", "legacy"]
)
def test_bad_rng_refused(rng: Any) -> None:
    with pytest.raises(ValueError, match="rng"):
        stream_support(GRR(3, 1.0), [np.array([0, 1])], rng=rng)


@pytest.mark.parametrize("name,mech", ITEMSET_MECHS, ids=[n for n, _ in ITEMSET_MECHS])
def test_itemset_mechanisms_refused(name: str, mech: Any) -> None:
    with pytest.raises(ArgumentTypeError, match="item-set mechanisms .* not supported"):
        stream_support(mech, [np.array([0, 1])], rng=0)


def test_other_bad_arguments() -> None:
    with pytest.raises(ArgumentTypeError, match="mech must be a single-item FrequencyOracle, got str"):
        stream_support("GRR", [np.array([0])], rng=0)  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match="progress"):
        stream_support(GRR(3, 1.0), [np.array([0])], rng=0, progress=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="block_users"):
        stream_support(GRR(3, 1.0), [np.array([0])], rng=0, block_users=0)
    with pytest.raises(ValueError, match="block_generator needs a seed"):
        block_generator(None, 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="block"):
        block_generator(0, -1)


def test_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    """progress=True draws a tqdm bar on stderr (with the total for an array), without changing the result."""
    grr = GRR(4, 1.0)
    items = _items(4, n=300)
    quiet = stream_support(grr, items, rng=1, block_users=64)[0]
    assert capsys.readouterr().err == ""
    np.testing.assert_array_equal(stream_support(grr, items, rng=1, progress=True, block_users=64)[0], quiet)
    err = capsys.readouterr().err
    assert "/300 " in err and "users/s" in err
    np.testing.assert_array_equal(stream_support(grr, iter(_chunked(items, 50)), rng=1, progress=True,
                                                 block_users=64)[0], quiet)
    err = capsys.readouterr().err
    assert "users" in err and "/300" not in err  # an iterator's length is unknown


# ---------------------------------------------------------------------------- (4) memory
@pytest.mark.parametrize("mech", [GRR(50, 1.0), OUE(50, 1.0)], ids=["GRR", "OUE"])
def test_memory_does_not_grow_with_n(mech: Any, tmp_path: Path) -> None:
    """2,000,000 items from a memmap: peak Python allocation stays below 40 (BLOCK_USERS * 8 + d * 8) bytes.

    That is 21 MB (measured: GRR 2.4 MB, OUE at d = 50 8 MB, whose per-block reports and
    draws hold BLOCK_USERS * d bits and bytes).  The ordinary path on the whole array peaks
    at 50 MB (GRR) and 67 MB (OUE), so an implementation that loads the memmap or keeps every
    block's reports exceeds the bound; and the peak at n = 2,000,000 is within 2 MB of the
    peak at n = 500,000 (not proportional to n).
    """
    n = 2_000_000
    path = tmp_path / "items.i32"
    mm = np.memmap(path, dtype=np.int32, mode="w+", shape=(n,))
    for i in range(0, n, 250_000):
        mm[i : i + 250_000] = np.random.default_rng(i).integers(0, mech.d, size=min(250_000, n - i))
    mm.flush()
    del mm
    peaks = []
    for m in (n // 4, n):
        items = np.memmap(path, dtype=np.int32, mode="r", shape=(m,))
        tracemalloc.start()
        support, got = stream_support(mech, items, rng=0)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert got == m and support.shape == (mech.d,)
    bound = 40 * (BLOCK_USERS * 8 + mech.d * 8)
    assert max(peaks) < bound, f"peaks {peaks} bytes, bound {bound}"
    assert abs(peaks[1] - peaks[0]) < 2_000_000, f"peak grows with n: {peaks}"
