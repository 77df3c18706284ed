"""Streaming per-user path: perturb and aggregate item chunks in ``O(d)`` memory.

:func:`stream_support` runs the client side (:meth:`~ldpkit.base.FrequencyOracle.perturb`) and
the server side (:meth:`~ldpkit.base.FrequencyOracle.aggregate`) of a single-item frequency
oracle over items that arrive in chunks -- any iterable of 1-d integer arrays, or one array
(an :class:`numpy.memmap` too, which is read one block at a time and never loaded whole) --
and keeps only the running aggregate, so ``n = 10**8`` users fit on one machine.

**Blocks and seeds.** Users are processed in fixed blocks of ``block_users`` (default
:data:`BLOCK_USERS`) consecutive users, whatever the chunking: a chunk's tail is carried over
to the next chunk.  Block ``b`` is perturbed with its own generator,
``default_rng(SeedSequence(entropy, spawn_key=spawn_key + (b,)))`` (:func:`block_generator`),
keyed from the run's seed.  Hence for a given seed the result is bit-identical for every
chunking of the same items (one item at a time, uneven chunks, one array, a memory map); it
does depend on ``block_users``, which is part of the keying.

**The ``rng`` argument.** A non-negative integer seed or a :class:`numpy.random.SeedSequence`
(its entropy and spawn key are used); ``None`` draws fresh OS entropy (not reproducible).  A
:class:`numpy.random.Generator` is refused before any work: its stream cannot be re-keyed per
block, and drawing a seed from it would make the result depend on the generator's hidden state
in a way no caller could reproduce from the arguments; pass ``seed = int(gen.integers(2**63))``
explicitly if that is what is wanted.

**What is accumulated.** Whatever :meth:`~ldpkit.base.FrequencyOracle.aggregate` returns, as
long as it is an integer vector of the same shape for every block: support counts of length
``d`` for pure protocols (GRR, unary encodings, OLH, HR, uRR, IPRR, IDUE), net supports for
FHR, output counts of length ``k`` for :class:`~ldpkit.channel_oracle.ChannelOracle` (and the
LIP oracles).  Each of these is a sum over users, so the sum of the per-block aggregates is the
aggregate of all users (the tests check this for every registered mechanism), and
:meth:`~ldpkit.base.FrequencyOracle.estimate_from_support` applies to the total.  Totals are
int64 and the number of users is limited to ``2**53`` (ldpkit's supported range), so no count
can wrap.

Item-set mechanisms (Padding-and-Sampling, IDUE-PS) are not frequency oracles over single items
and are refused.

Examples
--------
>>> import numpy as np
>>> from ldpkit import GRR
>>> from ldpkit.streaming import stream_estimate, stream_support
>>> grr = GRR(4, epsilon=2.0)
>>> items = np.repeat(np.arange(4), [400, 300, 200, 100])
>>> chunks = np.array_split(items, 7)                       # any chunking ...
>>> support, n = stream_support(grr, chunks, rng=5, block_users=256)
>>> same, _ = stream_support(grr, items, rng=5, block_users=256)
>>> bool(np.array_equal(support, same)), n                  # ... gives the same counts
(True, 1000)
>>> est = stream_estimate(grr, iter(chunks), rng=5, block_users=256)
>>> est.shape, round(float(est.sum()))
((4,), 1000)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ._rng import RNGLike, as_seed_sequence, child_seed
from ._validation import MAX_USERS, ArgumentTypeError, check_positive_int, describe
from .base import FrequencyOracle

__all__ = ["BLOCK_USERS", "block_generator", "stream_estimate", "stream_support"]

#: the number of users in a block, the unit of perturbation and of seed keying
BLOCK_USERS = 65_536


def _root_seed(rng: RNGLike) -> np.random.SeedSequence:
    """The run's root :class:`~numpy.random.SeedSequence` (validated; a Generator is refused)."""
    if isinstance(rng, np.random.Generator):
        raise ArgumentTypeError(
            "rng must be a non-negative int seed, a SeedSequence or None for streaming, got a numpy Generator: "
            "each block is keyed from the seed so that the result does not depend on the chunking, and a "
            "Generator cannot be re-keyed; pass seed=int(gen.integers(2**63)) to derive one from it"
        )
    return as_seed_sequence(rng)


def block_generator(rng: int | np.random.SeedSequence, block: int) -> np.random.Generator:
    """The generator that perturbs block ``block`` of a streamed run seeded with ``rng``.

    ``default_rng(SeedSequence(entropy, spawn_key=spawn_key + (block,)))``, with the entropy and
    spawn key of ``rng`` (an int seed is ``SeedSequence(seed)``).  Exposed so that a run can be
    reproduced block by block.

    Examples
    --------
    >>> from ldpkit.streaming import block_generator
    >>> a = block_generator(7, 0).integers(10**9)
    >>> b = block_generator(7, 1).integers(10**9)
    >>> bool(a == block_generator(7, 0).integers(10**9)), bool(a != b)
    (True, True)
    """
    if rng is None:
        raise ValueError("block_generator needs a seed or SeedSequence (None would not be reproducible)")
    root = _root_seed(rng)
    block = check_positive_int(block, "block", minimum=0)
    return _generator(root, block)


def _generator(root: np.random.SeedSequence, block: int) -> np.random.Generator:
    return np.random.default_rng(child_seed(root, block))


def _check_mechanism(mech: Any) -> FrequencyOracle[Any]:
    if not isinstance(mech, FrequencyOracle):
        kind = type(mech).__name__
        hint = (" (item-set mechanisms such as Padding-and-Sampling and IDUE-PS take sets of items per user "
                "and are not supported)") if hasattr(mech, "ell") else ""
        raise ArgumentTypeError(f"mech must be a single-item FrequencyOracle, got {kind}{hint}")
    return mech


def _check_chunk(chunk: Any, index: int, start: int, d: int) -> np.ndarray:
    """Chunk ``index`` (users ``start, ...``) as a 1-d int64 array of items in ``range(d)``."""
    where = f"chunk {index} (users from {start})"
    if isinstance(chunk, (str, bytes)) or not hasattr(chunk, "__len__") and not isinstance(chunk, np.ndarray):
        raise ArgumentTypeError(f"{where} must be a 1-d array of integer items, got {describe(chunk)}")
    arr = np.asarray(chunk)
    if arr.ndim != 1:
        raise ValueError(f"{where} must be a 1-d array of integer items, got shape {arr.shape}")
    if arr.size == 0:
        return np.empty(0, dtype=np.int64)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ArgumentTypeError(f"{where} must hold integer items, got dtype {arr.dtype}")
    bad = (arr < 0) | (arr >= d)
    if np.any(bad):
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{where} contains item {arr[k].item()} at position {k} (user {start + k}), outside the domain 0..{d - 1}"
        )
    return arr.astype(np.int64, copy=False)


def _pieces(chunks: Any, block_users: int) -> tuple[Iterator[Any], int | None]:
    """The raw chunks to iterate, and the number of users when known in advance."""
    if isinstance(chunks, np.ndarray):
        if chunks.ndim != 1:
            raise ValueError(f"chunks: an array of items must be 1-d, got shape {chunks.shape}")
        if chunks.dtype == bool or not np.issubdtype(chunks.dtype, np.integer):
            raise ArgumentTypeError(f"chunks must hold integer items, got dtype {chunks.dtype}")
        n = int(chunks.shape[0])
        # slices of a memmap are views: only the block being processed is read into memory
        return (chunks[i : i + block_users] for i in range(0, n, block_users)), n
    if isinstance(chunks, (str, bytes)) or not isinstance(chunks, Iterable):
        raise ArgumentTypeError(
            f"chunks must be an iterable of 1-d integer arrays or one array, got {describe(chunks)}"
        )
    return iter(chunks), None


def stream_support(
    mech: FrequencyOracle[Any],
    chunks: Iterable[Any] | np.ndarray,
    rng: int | np.random.SeedSequence | None = None,
    progress: bool = False,
    *,
    block_users: int = BLOCK_USERS,
) -> tuple[np.ndarray, int]:
    """Perturb and aggregate streamed items block by block; return ``(support, n)``.

    Parameters
    ----------
    mech
        A single-item frequency oracle (any registered family with ``inputs="items"``).
    chunks
        An iterable of 1-d integer arrays (lists, generators, ...), or one 1-d integer array
        or :class:`numpy.memmap`, which is sliced into blocks without being loaded.
    rng
        A non-negative int seed, a :class:`numpy.random.SeedSequence`, or ``None`` (fresh
        entropy).  A :class:`numpy.random.Generator` is refused (module docstring).
    progress
        Show a tqdm progress bar on stderr (total known for an array, unknown for an iterator).
    block_users
        Users per block (default :data:`BLOCK_USERS`); memory is ``O(d + block_users)``.
        The result depends on it, never on the chunking.

    Returns
    -------
    support : numpy.ndarray
        Sum of the per-block :meth:`~ldpkit.base.FrequencyOracle.aggregate` vectors (int64).
    n : int
        Number of users.

    Raises
    ------
    ValueError
        A bad argument (checked before any work), an item outside ``0..d-1`` (naming the chunk,
        the position in it and the user; raised when that chunk arrives, before any of its
        users is perturbed; for a single array, chunk ``k`` is its ``k``-th slice of
        ``block_users`` items), no items at all, or more than ``2**53`` users.
    ArgumentTypeError
        A non-integer chunk, a Generator ``rng``, or a ``mech`` that is not a single-item oracle.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit import OUE
    >>> from ldpkit.streaming import stream_support
    >>> oue = OUE(5, epsilon=1.0)
    >>> chunks = (np.full(300, k % 5) for k in range(10))     # a generator of chunks
    >>> support, n = stream_support(oue, chunks, rng=1, block_users=1000)
    >>> support.shape, n
    ((5,), 3000)
    """
    mech = _check_mechanism(mech)
    if not isinstance(progress, bool):
        raise ArgumentTypeError(f"progress must be True or False, got {describe(progress)}")
    block_users = check_positive_int(block_users, "block_users", maximum=2**31)
    root = _root_seed(rng)
    pieces, total = _pieces(chunks, block_users)
    if total is not None and total > MAX_USERS:
        raise ValueError(f"chunks hold {total} users, above the supported {MAX_USERS} (2**53)")

    from tqdm import tqdm

    bar = tqdm(total=total, unit="users", unit_scale=True, disable=not progress, leave=False)
    acc: np.ndarray | None = None
    n = 0
    try:
        for block, items in enumerate(_blocks(pieces, block_users, mech.d)):
            if n + items.size > MAX_USERS:
                raise ValueError(f"more than the supported {MAX_USERS} (2**53) users")
            acc = _accumulate(acc, _block_aggregate(mech, items, root, block), mech, block)
            n += items.size
            bar.update(items.size)
    finally:
        bar.close()
    if acc is None:
        raise ValueError("chunks hold no items: at least one user is needed")
    return acc, n


def _blocks(pieces: Iterator[Any], block_users: int, d: int) -> Iterator[np.ndarray]:
    """Cut the chunks into consecutive blocks of ``block_users`` users (the last one may be shorter).

    A chunk is checked (:func:`_check_chunk`) when it arrives, before any of its users is
    yielded.  A whole block inside a chunk is yielded as a view; a block spanning chunks is
    assembled in one buffer, which is reused: each block must be consumed before the next one
    is asked for.
    """
    buf = np.empty(block_users, dtype=np.int64)
    fill = 0
    done = 0  # users of the blocks already consumed
    for index, chunk in enumerate(pieces):
        arr = _check_chunk(chunk, index, done + fill, d)
        pos = 0
        while pos < arr.size:
            if fill == 0 and arr.size - pos >= block_users:  # a whole block: no copy
                yield arr[pos : pos + block_users]
                done += block_users
                pos += block_users
                continue
            take = min(block_users - fill, arr.size - pos)
            buf[fill : fill + take] = arr[pos : pos + take]
            fill += take
            pos += take
            if fill == block_users:
                yield buf
                done += block_users
                fill = 0
    if fill:
        yield buf[:fill]


def _block_aggregate(mech: FrequencyOracle[Any], items: np.ndarray, root: np.random.SeedSequence, block: int) -> np.ndarray:
    """The aggregate of block ``block``'s users, perturbed with the block's own generator."""
    agg = np.asarray(mech.aggregate(mech.perturb(items, rng=_generator(root, block))))
    if agg.dtype == bool or not np.issubdtype(agg.dtype, np.integer):
        raise ValueError(f"{type(mech).__name__}.aggregate returned dtype {agg.dtype}, not integer counts")
    return agg


def _accumulate(acc: np.ndarray | None, agg: np.ndarray, mech: FrequencyOracle[Any], block: int) -> np.ndarray:
    """The running int64 total ``acc`` plus block ``block``'s aggregate (a new total for the first block)."""
    if acc is None:
        acc = np.zeros(agg.shape, dtype=np.int64)
    elif agg.shape != acc.shape:
        raise ValueError(
            f"{type(mech).__name__}.aggregate returned shape {agg.shape} for block {block}, "
            f"but {acc.shape} before: its aggregates cannot be summed"
        )
    acc += agg.astype(np.int64, copy=False)
    return acc


def stream_estimate(
    mech: FrequencyOracle[Any],
    chunks: Iterable[Any] | np.ndarray,
    rng: int | np.random.SeedSequence | None = None,
    progress: bool = False,
    *,
    block_users: int = BLOCK_USERS,
) -> np.ndarray:
    """Unbiased count estimates of streamed items: ``mech.estimate_from_support(*stream_support(...))``.

    Arguments as in :func:`stream_support`.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit import OLH
    >>> from ldpkit.streaming import stream_estimate
    >>> olh = OLH(6, epsilon=2.0)
    >>> items = np.arange(6).repeat(500)
    >>> est = stream_estimate(olh, np.array_split(items, 4), rng=3, block_users=512)
    >>> est.shape
    (6,)
    """
    support, n = stream_support(mech, chunks, rng, progress, block_users=block_users)
    return mech.estimate_from_support(support, n)
