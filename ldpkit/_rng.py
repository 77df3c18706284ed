"""One place where every stochastic function normalises its ``rng`` argument and derives child seeds.

:func:`as_generator` turns an ``rng`` argument into a :class:`numpy.random.Generator`;
:func:`as_seed_sequence` turns a seed into its :class:`numpy.random.SeedSequence`; and
:func:`child_seed` / :func:`child_seeds` derive the independent child streams of a run, by the
one rule ``SeedSequence(entropy, spawn_key=spawn_key + (i,))`` (what ``SeedSequence.spawn``
gives), which the streamed blocks (:mod:`ldpkit.streaming`) and the points of a sweep
(:meth:`ldpkit.experiments.RunConfig.map`) both use.
"""

from __future__ import annotations

import numbers
from typing import TypeAlias, Union

import numpy as np

from ._validation import ArgumentTypeError, describe

#: what every ``rng`` argument accepts: a Generator (used as is), a SeedSequence, a seed, or None
RNGLike: TypeAlias = Union[np.random.Generator, np.random.SeedSequence, int, None]

__all__ = ["RNGLike", "as_generator", "as_seed_sequence", "child_seed", "child_seeds"]


def as_generator(rng: RNGLike = None, name: str = "rng") -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``rng``.

    Parameters
    ----------
    rng
        ``None`` (fresh OS entropy: results are *not* reproducible), a non-negative
        integer seed, a :class:`numpy.random.SeedSequence`, or an existing
        :class:`numpy.random.Generator` (returned unchanged, so its state advances).

    Raises
    ------
    ArgumentTypeError
        For anything else, in particular the legacy ``RandomState``: ldpkit never
        touches numpy's global random state (a ``TypeError`` and a ``ValueError``).
    ValueError
        For a negative seed.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        return np.random.default_rng(_seed(rng, name))
    raise ArgumentTypeError(
        f"{name} must be a numpy Generator, SeedSequence, non-negative int or None, got {describe(rng)} ({type(rng).__name__})"
    )


def as_seed_sequence(rng: int | np.random.SeedSequence | None, name: str = "rng") -> np.random.SeedSequence:
    """Return the :class:`numpy.random.SeedSequence` of a seed argument.

    Parameters
    ----------
    rng
        A non-negative integer seed (``SeedSequence(seed)``), a
        :class:`numpy.random.SeedSequence` (returned unchanged), or ``None`` (fresh OS entropy:
        results are *not* reproducible).

    Raises
    ------
    ArgumentTypeError
        For anything else, a :class:`numpy.random.Generator` included: a generator's stream
        cannot be turned back into a seed (a ``TypeError`` and a ``ValueError``).
    ValueError
        For a negative seed.

    Examples
    --------
    >>> from ldpkit._rng import as_seed_sequence
    >>> as_seed_sequence(7).entropy
    7
    """
    if rng is None:
        return np.random.SeedSequence()
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        return np.random.SeedSequence(_seed(rng, name))
    raise ArgumentTypeError(
        f"{name} must be a SeedSequence, non-negative int or None, got {describe(rng)} ({type(rng).__name__})"
    )


def child_seed(root: np.random.SeedSequence, index: int) -> np.random.SeedSequence:
    """Child ``index`` of ``root``: ``SeedSequence(entropy, spawn_key=spawn_key + (index,))``.

    The same sequence as the ``index``-th child of ``root.spawn`` on a root that has not
    spawned before, but computed directly and without advancing ``root``, so child ``index``
    can be derived on its own (a streamed run's block, a sweep's point).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit._rng import child_seed
    >>> child_seed(np.random.SeedSequence(7), 2).spawn_key
    (2,)
    """
    return np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + (index,), pool_size=root.pool_size)


def child_seeds(rng: int | np.random.SeedSequence | None, n: int) -> list[np.random.SeedSequence]:
    """The first ``n`` children (:func:`child_seed`) of the seed ``rng`` (:func:`as_seed_sequence`).

    Equal to ``SeedSequence(seed).spawn(n)`` for an integer seed.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit._rng import child_seeds
    >>> [c.spawn_key for c in child_seeds(7, 3)]
    [(0,), (1,), (2,)]
    >>> [c.generate_state(2).tolist() for c in child_seeds(7, 2)] == [
    ...     c.generate_state(2).tolist() for c in np.random.SeedSequence(7).spawn(2)]
    True
    """
    root = as_seed_sequence(rng)
    return [child_seed(root, i) for i in range(n)]


def _seed(rng: numbers.Integral, name: str) -> int:
    """An integer seed as an ``int``, refused when negative."""
    if int(rng) < 0:
        raise ValueError(f"{name} must be a non-negative integer seed, got {rng!r}")
    return int(rng)
