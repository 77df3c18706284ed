"""One place where every stochastic function normalises its ``rng`` argument."""

from __future__ import annotations

import numbers
from typing import TypeAlias, Union

import numpy as np

from ._validation import ArgumentTypeError, describe

#: what every ``rng`` argument accepts: a Generator (used as is), a SeedSequence, a seed, or None
RNGLike: TypeAlias = Union[np.random.Generator, np.random.SeedSequence, int, None]

__all__ = ["RNGLike", "as_generator"]


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
        if int(rng) < 0:
            raise ValueError(f"{name} must be a non-negative integer seed, got {rng!r}")
        return np.random.default_rng(int(rng))
    raise ArgumentTypeError(
        f"{name} must be a numpy Generator, SeedSequence, non-negative int or None, got {describe(rng)} ({type(rng).__name__})"
    )
