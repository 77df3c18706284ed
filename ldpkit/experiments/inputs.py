"""The data an experiment runs on: loaded by the one data policy, and identified exactly.

Every experiment of every paper family loads its real datasets through :func:`load_auto`,
which is :func:`ldpkit.datasets.load` with ``source="auto"`` (the data policy of
:mod:`ldpkit.datasets.loaders`: a valid local real file; else a download where one exists and
downloads are allowed; else the labelled stand-in, rebuilt from a real prefix when one is held).
The stand-in is reported by its label and by :attr:`~ldpkit.experiments.ExperimentData.inputs`
instead of a :class:`~ldpkit.datasets.StandInWarning`.

:func:`identity` gives the :class:`~ldpkit.datasets.DataIdentity` of the data as loaded (before
any subsample or reduction an experiment applies, which its configuration and code determine):
provenance sidecars record it and ``ldpkit check`` compares it with the reference run's.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from typing import Any

from .. import datasets as _datasets
from ..datasets.containers import DataIdentity, ItemSetData, SingleItemData

__all__ = ["identity", "load_auto", "load_or_sample"]

Data = SingleItemData | ItemSetData


def load_auto(key: str, *, rng: int = 0, **options: Any) -> Data:
    """Dataset ``key`` by the data policy (``source="auto"``), without the stand-in warning.

    Parameters
    ----------
    key
        A key of :data:`ldpkit.datasets.DATASETS`.
    rng
        Seed of the stand-in (unused for real data).
    **options
        The loader's options (``lowercase``, ``clean``, ``unit``).

    Raises
    ------
    ldpkit.datasets.ChecksumMismatchError, ldpkit.datasets.DatasetFormatError
        A real file is present but damaged.
    ldpkit.datasets.MissingReaderError
        A real file is present but needs an optional reader that is not installed.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", _datasets.StandInWarning)  # the label and the inputs report it
        return _datasets.load(key, source="auto", rng=rng, **options)


def load_or_sample(key: str, *, rng: int = 0) -> tuple[Data, str]:
    """For experiments that build their own stand-in from a real sample: ``(data, origin)``.

    Follows the data policy, except where the policy would give a stand-in rebuilt from a real
    sample of the file (the Kosarak prefix): then the sample itself is returned, so that the
    experiment can apply its own reduction to the real sessions.  ``origin`` is what the
    experiment's data are: ``"real"`` (``data`` is the real dataset), ``"prefix"`` (``data`` is
    the real sample, e.g. the Kosarak prefix) or ``"stand-in"`` (``data`` is the synthetic
    stand-in of ``key``).
    """
    info = _datasets.describe(key)
    if info.resample_from is not None and _datasets.plan(key).origin == "prefix":
        return load_auto(info.resample_from), "prefix"
    data = load_auto(key, rng=rng)
    if data.origin == "prefix" and info.resample_from is not None:  # a download was tried and failed
        return load_auto(info.resample_from), "prefix"
    return data, str(data.origin)


@functools.lru_cache(maxsize=16)
def _identity(data: Data) -> DataIdentity:
    return data.identity()


def identity(data: Data, label: str | None = None) -> DataIdentity:
    """The :class:`~ldpkit.datasets.DataIdentity` of ``data`` (cached per object), relabelled if asked.

    ``label`` replaces the data's own label where an experiment shows the data under a name of
    its own (e.g. ``"Gowalla (held-out location)"``).
    """
    ident = _identity(data)
    return ident if label is None else dataclasses.replace(ident, label=label)
