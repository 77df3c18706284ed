"""One place where every stochastic function normalises its ``rng`` argument and derives child seeds.

:func:`as_generator` turns an ``rng`` argument into a :class:`numpy.random.Generator`;
:func:`as_seed_sequence` turns a seed into its :class:`numpy.random.SeedSequence`; and
:func:`child_seed` / :func:`child_seeds` derive the independent child streams of a run, by the
one rule ``SeedSequence(entropy, spawn_key=spawn_key + (i,))`` (what ``SeedSequence.spawn``
gives), which the streamed blocks (:mod:`ldpkit.streaming`) and the points of a sweep
(:meth:`ldpkit.experiments.RunConfig.map`) both use.

A stream indexed by something a user can register (a mechanism family, a promise) is not numbered
by its position, which would move when another family is registered, but named:
:func:`keyed_seed` derives it by the same rule with the child's number replaced by a SHA-256
digest of the key's text, ``SeedSequence(entropy, spawn_key=spawn_key + digest_words(key))``, so
that the stream of ``("GRR", 1.0)`` is the same whatever else is registered (and never Python's
per-process salted ``hash``).
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
from typing import TypeAlias, Union

import numpy as np

from ._validation import ArgumentTypeError, describe

#: what every ``rng`` argument accepts: a Generator (used as is), a SeedSequence, a seed, or None
RNGLike: TypeAlias = Union[np.random.Generator, np.random.SeedSequence, int, None]

__all__ = ["RNGLike", "as_generator", "as_seed_sequence", "child_seed", "child_seeds", "keyed_seed"]


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


def _key_text(key: tuple[object, ...]) -> str:
    """The canonical text of a key: a JSON list of its parts (strings, integers, floats as ``repr`` gives them)."""
    parts: list[object] = []
    for part in key:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, numbers.Integral) and not isinstance(part, bool):
            parts.append(int(part))
        elif isinstance(part, numbers.Real) and not isinstance(part, bool):
            value = float(part)
            parts.append(value if math.isfinite(value) else repr(value))  # inf/nan as text, valid JSON
        else:
            raise ArgumentTypeError(f"a seed key part must be a string, an integer or a float, "
                                    f"got {describe(part)} ({type(part).__name__})")
    return json.dumps(parts, ensure_ascii=True, separators=(",", ":"))


def keyed_seed(rng: int | np.random.SeedSequence | None, *key: object) -> np.random.SeedSequence:
    """The child of the seed ``rng`` named by ``key``: the stream of one family, promise or setting.

    ``SeedSequence(entropy, spawn_key=spawn_key + words)``, ``words`` the eight 32-bit words of
    the SHA-256 digest of the key's text (a JSON list of its parts; an integer and the float of
    the same value are different keys).  Like :func:`child_seed` the root is not advanced, but the
    child depends on the key alone, not on a position: adding a family to a sweep leaves every
    other family's stream unchanged.  Keys differ from the numbered children (eight words, not one).

    Parameters
    ----------
    rng
        The run's seed (:func:`as_seed_sequence`: a non-negative integer, a SeedSequence, or
        ``None`` for fresh entropy).
    *key
        At least one part: strings, integers or floats (``("synthesis-comparison", "GRR", "LDP")``).

    Raises
    ------
    ArgumentTypeError
        A key part of another type (its text would not be stable across runs).
    ValueError
        No key part.

    Examples
    --------
    >>> from ldpkit._rng import keyed_seed
    >>> a = keyed_seed(7, "GRR", 1.0)
    >>> len(a.spawn_key), a.entropy
    (8, 7)
    >>> a.generate_state(2).tolist() == keyed_seed(7, "GRR", 1.0).generate_state(2).tolist()
    True
    >>> a.spawn_key == keyed_seed(7, "GRR", 1).spawn_key
    False
    """
    if not key:
        raise ValueError("keyed_seed needs at least one key part")
    root = as_seed_sequence(rng)
    digest = hashlib.sha256(_key_text(key).encode("ascii")).digest()
    words = tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, len(digest), 4))
    return np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + words, pool_size=root.pool_size)


def _seed(rng: numbers.Integral, name: str) -> int:
    """An integer seed as an ``int``, refused when negative."""
    if int(rng) < 0:
        raise ValueError(f"{name} must be a non-negative integer seed, got {rng!r}")
    return int(rng)
