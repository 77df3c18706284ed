"""Input validation shared by every module.

Every public entry point validates its arguments with these helpers *before* doing any
work, and every failure is a :class:`ValueError` whose message names the offending value.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

__all__ = [
    "check_epsilon",
    "check_positive_real",
    "check_domain_size",
    "check_items",
    "check_counts",
    "check_probability",
    "check_probabilities",
    "check_distribution",
    "check_budget_vector",
    "check_positive_int",
]

_ATOL = 1e-9


def describe(value: Any) -> str:
    """Short repr of a user-supplied value for error messages (numpy scalars as Python scalars)."""
    if isinstance(value, np.generic):
        value = value.item()
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_positive_real(value: Any, name: str) -> float:
    """Return ``value`` as a float; raise unless it is a finite positive real number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a finite positive real number, got {describe(value)}")
    out = float(value)
    if not math.isfinite(out) or out <= 0.0:
        raise ValueError(f"{name} must be a finite positive real number, got {describe(value)}")
    return out


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Return a privacy budget as a float; raise unless it is a finite positive real number."""
    return check_positive_real(epsilon, name)


def check_positive_int(value: Any, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int; raise unless it is an integer ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {describe(value)}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {describe(value)}")
    return int(value)


def check_domain_size(d: Any, name: str = "d", minimum: int = 2) -> int:
    """Return the domain size; an LDP frequency oracle needs at least two items."""
    return check_positive_int(d, name, minimum)


def check_items(items: Any, d: int, name: str = "items") -> np.ndarray:
    """Return ``items`` as a non-empty 1-d int64 array with every entry in ``range(d)``."""
    arr = np.asarray(items)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array of item indices, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: at least one user is needed")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"{name} must hold integer item indices, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            bad = arr[~(np.isfinite(arr) & (arr == np.round(arr)))][0]
            raise ValueError(f"{name} must hold integer item indices, got {describe(bad.item())}")
    arr = arr.astype(np.int64, copy=False)
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or hi >= d:
        bad = lo if lo < 0 else hi
        raise ValueError(f"{name} contains item {bad}, outside the domain 0..{d - 1}")
    return arr


def check_counts(counts: Any, d: int | None = None, name: str = "counts") -> np.ndarray:
    """Return a 1-d int64 array of non-negative counts (of length ``d`` if given), not all zero."""
    arr = np.asarray(counts)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array of counts, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if d is not None and arr.size != d:
        raise ValueError(f"{name} has length {arr.size}, expected the domain size {d}")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"{name} must be numeric counts, got dtype {arr.dtype}")
    if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)) or np.any(arr < 0):
        bad = arr[~(np.isfinite(arr) & (arr == np.round(arr)) & (arr >= 0))][0]
        raise ValueError(f"{name} must be non-negative integers, got {describe(bad.item())}")
    arr = arr.astype(np.int64, copy=False)
    if arr.sum() == 0:
        raise ValueError(f"{name} sum to zero: at least one user is needed")
    return arr


def check_probability(p: Any, name: str = "p", open_interval: bool = False) -> float:
    """Return ``p`` as a float in [0, 1] (or (0, 1) when ``open_interval``)."""
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not math.isfinite(float(p)):
        raise ValueError(f"{name} must be a probability in [0, 1], got {describe(p)}")
    value = float(p)
    if open_interval and not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be a probability in (0, 1), got {describe(p)}")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {describe(p)}")
    return value


def check_probabilities(p: Any, name: str = "probabilities", shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Return a float array whose entries all lie in [0, 1]."""
    arr = np.asarray(p, dtype=float)
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} has shape {arr.shape}, expected {shape}")
    bad = ~np.isfinite(arr) | (arr < 0) | (arr > 1)
    if np.any(bad):
        raise ValueError(f"{name} must lie in [0, 1], got {describe(arr[bad][0].item())}")
    return arr


def check_distribution(prior: Any, d: int | None = None, name: str = "prior") -> np.ndarray:
    """Return a probability vector: entries in [0, 1] summing to 1 (length ``d`` if given)."""
    arr = check_probabilities(prior, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d probability vector, got shape {arr.shape}")
    if d is not None and arr.size != d:
        raise ValueError(f"{name} has length {arr.size}, expected {d}")
    total = float(arr.sum())
    if abs(total - 1.0) > 1e-8:
        raise ValueError(f"{name} must sum to 1, sums to {total!r}")
    return arr


def check_budget_vector(budgets: Any, d: int, name: str = "budgets") -> np.ndarray:
    """Return a per-item privacy budget vector of length ``d`` with finite positive entries."""
    arr = np.asarray(budgets, dtype=float) if not isinstance(budgets, np.ndarray) else budgets.astype(float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d vector of budgets, got shape {arr.shape}")
    if arr.size != d:
        raise ValueError(f"{name} has length {arr.size}, expected the domain size {d}")
    bad = ~np.isfinite(arr) | (arr <= 0)
    if np.any(bad):
        raise ValueError(f"{name} must be finite positive budgets, got {describe(arr[bad][0].item())} at item {int(np.flatnonzero(bad)[0])}")
    return arr
