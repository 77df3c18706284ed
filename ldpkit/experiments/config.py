"""One validated configuration object for experiment runs, and the seeded user subsample.

Every experiment of :mod:`ldpkit.experiments` takes a :class:`RunConfig` instead of a repeated
block of ``repeats=..., rng=..., progress=...`` keywords.  A configuration says *how* an
experiment is run (how many repeats, which seed for the mechanisms' randomness, which fraction of
each dataset's users, whether to show a progress bar, how many parallel workers); *what* is run
(datasets, budgets, grids) belongs to the experiment itself.  :meth:`~ldpkit.experiments.RunConfig.map` runs the
independent points of a sweep, in parallel through joblib when asked, with one random stream per
point, so that the numbers do not depend on the number of workers.

:func:`~ldpkit.experiments.subsample` implements ``scale < 1``: a seeded uniform subset of the
users of a dataset, kept in their original order.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, overload

import numpy as np

from .._rng import as_generator, as_seed_sequence, child_seeds, keyed_seed
from .._validation import ArgumentTypeError
from ..datasets.containers import ItemSetData, SingleItemData
from ..sets import ItemSets

__all__ = ["RunConfig", "check_mechanism_names", "check_run_config", "subsample"]


#: most repeats a run accepts (the papers use 10; a sweep beyond this would run for days)
MAX_REPEATS = 100_000
#: joblib backends a run may name (``None`` leaves the choice to joblib: loky unless configured)
BACKENDS = ("loky", "threading", "dask")

_Point = TypeVar("_Point")
_Result = TypeVar("_Result")


@dataclass(frozen=True)
class RunConfig:
    """How an experiment is run: repeats, seed, data scale, progress display and parallel workers.

    Parameters
    ----------
    repeats
        Independent repeats of every setting (an integer ``>= 1``; the papers use 10).
    seed
        Non-negative integer seeding the randomness of the run (budget-level draws, perturbation,
        padding samples), or ``None`` for fresh OS entropy (results are then not reproducible).
    scale
        Fraction in ``(0, 1]`` of the users (records) of each dataset the experiment uses;
        ``1.0`` uses every user.  Applied to the data before the protocol runs, see
        :func:`~ldpkit.experiments.subsample`.
    progress
        ``True`` or ``False`` to show or hide a tqdm progress bar on stderr; ``None`` shows it
        only when stderr is a terminal.
    jobs
        Parallel workers for the independent points of a sweep (:meth:`map`): ``1`` runs them
        one after another in this process, an integer ``>= 2`` runs that many at a time and
        ``-1`` uses every core (joblib's convention; for ``"dask"`` every worker of the cluster).
    backend
        The joblib backend when ``jobs != 1``: ``None`` (joblib's active backend, ``"loky"``
        processes unless a :func:`joblib.parallel_config` block says otherwise), ``"loky"``,
        ``"threading"`` or ``"dask"``.  ``"dask"`` sends the points to the cluster of the active
        :class:`distributed.Client` (install the ``cluster`` extra, ``pip install
        'ldpkit[cluster]'``, and create the client before the run), whatever ``jobs`` is.

    Notes
    -----
    Seeding rule.  The points of a sweep draw from separate streams: point ``i`` of
    :meth:`map` uses ``numpy.random.default_rng(child_i)``, ``child_i`` the ``i``-th child
    spawned from ``numpy.random.SeedSequence(seed)`` (``ldpkit._rng.child_seeds``, the rule
    that keys the streamed blocks of :mod:`ldpkit.streaming` too).  A point's numbers therefore
    depend on the seed and its position in the sweep only, not on ``jobs``, ``backend`` or
    which worker ran it: a run gives the same results on one core, on many and on a cluster.
    A sweep whose points are indexed by something registrable (a mechanism family, a promise)
    names its points instead (``map(..., keys=...)``): point ``i`` then uses
    ``ldpkit._rng.keyed_seed(seed, *key_i)``, a child named by a digest of its key, so that its
    numbers do not move when another family is registered; every other sweep (over budgets,
    ratios, sizes) keeps the numbered children.
    To make them the same to the last bit, every point runs with one BLAS/OpenMP thread
    (threadpoolctl), and the numerical solvers (IDUE's, the k-ary LIP programme) run on one
    thread wherever they are called and end at their exact KKT point: a multi-threaded BLAS
    rounds its sums differently with the number of threads.  Workers on other machines agree
    to the last bit when they run the same libraries on the same instruction set, and to about
    the last digit otherwise (no choice the kit makes depends on that digit).

    Raises
    ------
    ValueError
        On construction, naming the argument and the value, for a non-integer or non-positive
        ``repeats``, a negative or non-integer ``seed``, a ``scale`` outside ``(0, 1]``, a
        ``progress`` that is not ``True``, ``False`` or ``None``, a ``jobs`` that is neither
        ``-1`` nor an integer ``>= 1`` and a ``backend`` other than ``None``, ``"loky"``,
        ``"threading"`` and ``"dask"``.

    Examples
    --------
    >>> config = RunConfig(repeats=2, seed=7, scale=0.5)
    >>> config.replace(seed=8)
    RunConfig(repeats=2, seed=8, scale=0.5, progress=None, jobs=1, backend=None)
    >>> int(config.generator().integers(100)) == int(RunConfig(seed=7).generator().integers(100))
    True
    >>> RunConfig(scale=1.5)
    Traceback (most recent call last):
    ...
    ValueError: scale must be a fraction in (0, 1], got 1.5
    >>> RunConfig(jobs=0)
    Traceback (most recent call last):
    ...
    ValueError: jobs must be -1 (every core) or an integer >= 1, got 0
    """

    repeats: int = 10
    seed: int | None = None
    scale: float = 1.0
    progress: bool | None = None
    jobs: int = 1
    backend: str | None = None

    def __post_init__(self) -> None:
        repeats = self.repeats
        if isinstance(repeats, bool) or not isinstance(repeats, numbers.Integral):
            raise ArgumentTypeError(f"repeats must be an integer >= 1, got {repeats!r}")
        if not 1 <= int(repeats) <= MAX_REPEATS:
            raise ValueError(f"repeats must be an integer in [1, {MAX_REPEATS}], got {repeats!r}")
        seed = self.seed
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
            raise ArgumentTypeError(f"seed must be a non-negative integer or None, got {seed!r}")
        if seed is not None and int(seed) < 0:
            raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
        scale = self.scale
        if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
            raise ArgumentTypeError(f"scale must be a fraction in (0, 1], got {scale!r}")
        if not (0.0 < scale <= 1.0 and math.isfinite(float(scale))):  # compared before float(): no OverflowError
            raise ValueError(f"scale must be a fraction in (0, 1], got {scale!r}")
        if self.progress is not None and not isinstance(self.progress, bool):
            raise ArgumentTypeError(f"progress must be True, False or None, got {self.progress!r}")
        jobs = self.jobs
        if isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral):
            raise ArgumentTypeError(f"jobs must be -1 (every core) or an integer >= 1, got {jobs!r}")
        if int(jobs) != -1 and int(jobs) < 1:
            raise ValueError(f"jobs must be -1 (every core) or an integer >= 1, got {jobs!r}")
        if self.backend is not None and self.backend not in BACKENDS:
            error = ValueError if isinstance(self.backend, str) else ArgumentTypeError
            raise error(f"backend must be None or one of {BACKENDS}, got {self.backend!r}")
        # normalise numpy scalars to Python numbers (the dataclass is frozen)
        object.__setattr__(self, "repeats", int(repeats))
        object.__setattr__(self, "seed", None if seed is None else int(seed))
        object.__setattr__(self, "scale", float(scale))
        object.__setattr__(self, "jobs", int(jobs))

    def generator(self) -> np.random.Generator:
        """A fresh :class:`numpy.random.Generator` seeded with ``seed`` (OS entropy if ``None``).

        Each call returns a new generator in the same initial state, so two calls with the same
        seed give the same stream.
        """
        return as_generator(self.seed)

    def replace(self, **changes: Any) -> RunConfig:
        """A copy with ``changes`` applied, validated like a new configuration."""
        return dataclasses.replace(self, **changes)

    def show_progress(self) -> bool:
        """Whether to draw a progress bar: ``progress``, or for ``None`` whether stderr is a terminal."""
        if self.progress is None:
            return bool(sys.stderr.isatty())
        return self.progress

    def track(self, iterable: Iterable[Any], total: int, desc: str) -> Iterable[Any]:
        """``iterable`` behind a tqdm progress bar when ``show_progress()``, else unchanged."""
        if not self.show_progress():
            return iterable
        from tqdm import tqdm

        return tqdm(iterable, total=total, desc=desc)

    def map(
        self, fn: Callable[[_Point, np.random.Generator], _Result], points: Iterable[_Point], desc: str,
        *, keys: Sequence[Any] | None = None,
    ) -> list[_Result]:
        """``[fn(point, generator_i) for each point]``, the points run in parallel when ``jobs != 1``.

        Point ``i`` gets its own generator, seeded by child ``i`` of
        ``numpy.random.SeedSequence(seed)`` (the seeding rule of the class docstring), or with
        ``keys`` by the child named by ``keys[i]``, so the results, returned in the order of
        ``points``, are the same for any ``jobs`` and ``backend``.  ``fn`` must draw its randomness
        from that generator only; it runs in another process (pickled with cloudpickle, closures
        included) for ``"loky"`` and ``"dask"``, so objects it mutates, such as a memo, are not
        shared between points.  The progress bar (:meth:`track`, label ``desc``) advances as the
        points finish.

        Parameters
        ----------
        fn
            ``fn(point, generator) -> result`` for one point of the sweep.
        points
            The independent points of the sweep.
        desc
            Label of the progress bar.
        keys
            ``None`` (point ``i`` draws from child ``i``), or one distinct key per point, a tuple
            of strings, integers and floats (or one such value): point ``i`` then draws from
            ``ldpkit._rng.keyed_seed(seed, *keys[i])``, whatever the other points are.  Used
            where the points are indexed by something registrable (a family, a promise).

        Raises
        ------
        ValueError
            ``keys`` not one per point, or two points with the same key.
        ImportError
            For ``backend="dask"`` without dask.distributed installed.
        RuntimeError
            For ``backend="dask"`` without an active :class:`distributed.Client`.

        Examples
        --------
        >>> def draw(point, gen):
        ...     return point, int(gen.integers(1000))
        >>> config = RunConfig(seed=3, progress=False)
        >>> one = config.map(draw, ["a", "b", "c"], "letters")
        >>> [point for point, _ in one]
        ['a', 'b', 'c']
        >>> one == config.replace(jobs=2, backend="threading").map(draw, ["a", "b", "c"], "letters")
        True
        >>> one[:2] == config.map(draw, ["a", "b"], "letters")  # a point's stream is its position's
        True
        >>> named = config.map(draw, ["a", "b"], "letters", keys=[("a",), ("b",)])
        >>> named[1] == config.map(draw, ["b"], "letters", keys=[("b",)])[0]  # ... or its key's
        True
        """
        from threadpoolctl import threadpool_limits

        items = list(points)
        seeds = child_seeds(self.seed, len(items)) if keys is None else self._keyed_seeds(keys, len(items))
        with threadpool_limits(limits=1):  # here and in _run_point: see the class docstring's notes
            if self.jobs == 1 and self.backend != "dask":
                results: Iterator[_Result] = (fn(point, as_generator(seed)) for point, seed in zip(items, seeds))
            else:
                results = self._parallel(fn, items, seeds)
            return list(self.track(results, len(items), desc))

    def _keyed_seeds(self, keys: Sequence[Any], n: int) -> list[np.random.SeedSequence]:
        """The seed of each point of :meth:`map` from its key (checked: one distinct key per point)."""
        if isinstance(keys, (str, bytes)) or not isinstance(keys, Sequence):
            raise ArgumentTypeError(f"keys must be a sequence with one key per point, got {type(keys).__name__}")
        parts = [tuple(k) if isinstance(k, tuple) else (k,) for k in keys]
        if len(parts) != n:
            raise ValueError(f"keys must hold one key per point: {len(parts)} keys for {n} points")
        if len(set(parts)) != len(parts):
            twice = next(k for k in parts if parts.count(k) > 1)
            raise ValueError(f"keys must be distinct (two points would share one stream): {twice!r} appears twice")
        root = as_seed_sequence(self.seed)
        return [keyed_seed(root, *k) for k in parts]

    def _parallel(
        self, fn: Callable[[_Point, np.random.Generator], _Result], items: Sequence[_Point],
        seeds: Sequence[np.random.SeedSequence],
    ) -> Iterator[_Result]:
        """The results of :meth:`map` through joblib, in order, as they finish."""
        import joblib

        if self.backend == "dask":
            _require_dask_client()
        if self.backend is None:
            parallel = joblib.Parallel(n_jobs=self.jobs, return_as="generator")
        else:
            with joblib.parallel_config(backend=self.backend):  # also registers joblib's "dask" backend
                parallel = joblib.Parallel(n_jobs=self.jobs, return_as="generator")
        return iter(parallel(joblib.delayed(_run_point)(fn, point, seed) for point, seed in zip(items, seeds)))

    def offset_seed(self, offset: int) -> RunConfig:
        """This configuration with ``seed + offset`` (``None`` stays ``None``).

        Experiments that run the protocol once per dataset seed the ``i``-th run with
        ``seed + i``, so the runs use independent streams.
        """
        if self.seed is None:
            return self
        return self.replace(seed=self.seed + int(offset))


def _run_point(
    fn: Callable[[_Point, np.random.Generator], _Result], point: _Point, seed: np.random.SeedSequence
) -> _Result:
    """One point of :meth:`RunConfig.map` on a worker: one BLAS thread, the generator built from its seed."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return fn(point, as_generator(seed))


def _require_dask_client() -> None:
    """Raise a clear error unless dask.distributed is installed and a client is active."""
    try:
        from distributed import get_client
    except ImportError as exc:
        raise ImportError(
            "backend='dask' needs dask.distributed: install it with pip install 'ldpkit[cluster]'"
        ) from exc
    try:
        get_client()
    except ValueError:
        raise RuntimeError(
            "backend='dask' needs an active distributed.Client: create one before the run, e.g. "
            "`with distributed.Client('SCHEDULER:8786'): ...` (or distributed.LocalCluster() on this machine)"
        ) from None


def _subsample_size(n: int, scale: float) -> int:
    return max(1, min(n, round(scale * n)))


@overload
def subsample(data: SingleItemData, scale: float, rng: Any) -> SingleItemData: ...
@overload
def subsample(data: ItemSetData, scale: float, rng: Any) -> ItemSetData: ...


def subsample(data: SingleItemData | ItemSetData, scale: float, rng: Any) -> SingleItemData | ItemSetData:
    """Keep a seeded uniform subset of ``round(scale * n)`` users (at least one) of ``data``.

    The users are drawn without replacement by ``rng`` (anything :func:`ldpkit.as_generator`
    accepts) and kept in their original order; the item domain (``m``, the vocabulary) is
    unchanged, so items may end up with a zero count.  With ``scale == 1`` the data are returned
    unchanged and ``rng`` is not used.  The result records the subsample in ``notes`` and keeps
    ``name`` and ``is_standin`` (so its ``label`` still names a stand-in).

    Parameters
    ----------
    data
        :class:`~ldpkit.datasets.SingleItemData` or :class:`~ldpkit.datasets.ItemSetData`.
    scale
        Fraction in ``(0, 1]`` of the users to keep.
    rng
        Seed or generator of the subsample.

    Examples
    --------
    >>> from ldpkit.datasets import synthetic
    >>> data = synthetic.uniform_items(n=1_000, m=10, rng=1)
    >>> small = subsample(data, 0.1, rng=2)
    >>> small.n, small.m, small.label
    (100, 10, 'Uniform')
    """
    if not isinstance(data, (SingleItemData, ItemSetData)):
        raise ValueError(f"data must be SingleItemData or ItemSetData, got {type(data).__name__}")
    RunConfig(scale=scale)  # validates scale with the same message
    scale = float(scale)
    if scale == 1.0:
        return data
    gen = as_generator(rng)
    n = data.n
    keep = np.sort(gen.choice(n, size=_subsample_size(n, scale), replace=False))
    note = f"subsample: {keep.size:,} of {n:,} users kept (scale = {scale:g}), uniformly without replacement"
    if isinstance(data, SingleItemData):
        return dataclasses.replace(data, items=data.items[keep], notes=(*data.notes, note))
    sets = data.sets
    starts, sizes = sets.offsets[:-1][keep], sets.sizes[keep]
    offsets = np.zeros(keep.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    positions = np.repeat(starts - offsets[:-1], sizes) + np.arange(int(offsets[-1]), dtype=np.int64)
    indices = sets.indices[positions].astype(np.int64, copy=False)
    return dataclasses.replace(data, sets=ItemSets(indices, offsets, sets.d), notes=(*data.notes, note))


def check_run_config(config: RunConfig | None) -> RunConfig:
    """The configuration of a run on data already selected: ``None`` means the default.

    Runners that take datasets as arguments refuse ``scale != 1`` (the caller selects users
    with :func:`subsample` first, so that every mechanism of a run sees the same users).
    """
    if config is None:
        return RunConfig()
    if not isinstance(config, RunConfig):
        raise ValueError(f"config must be a RunConfig, got {type(config).__name__}")
    if config.scale != 1.0:
        raise ValueError(
            f"config.scale = {config.scale!r} selects users of a dataset: subsample the data first "
            "(ldpkit.experiments.subsample) and pass config.replace(scale=1.0)"
        )
    return config


def check_mechanism_names(names: Any, allowed: tuple[str, ...]) -> tuple[str, ...]:
    """A non-empty sequence of mechanism names, each one of ``allowed``."""
    if isinstance(names, str):
        raise ValueError(f"mechanisms must be a sequence of names, got the string {names!r}")
    out = tuple(names)
    if not out:
        raise ValueError("at least one mechanism is needed")
    for name in out:
        if name not in allowed:
            raise ValueError(f"unknown mechanism {name!r}; choose from {allowed}")
    return out
