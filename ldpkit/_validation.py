"""Input validation shared by every module, and the package's error policy.

**Error policy.** Every public entry point validates its arguments with these helpers
*before* doing any work.  A bad value raises :class:`ValueError`; an argument of the wrong
type raises :class:`ArgumentTypeError`, which is both a :class:`TypeError` and a
:class:`ValueError`, so ``except ValueError`` catches every rejection.  The message always
names the argument and the offending value as given.

**Supported budgets.** A mechanism's budget must lie in ``[EPS_MIN, EPS_MAX]`` (or a
narrower range the mechanism states): see :func:`check_epsilon` for why.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

__all__ = [
    "EPS_MAX",
    "EPS_MIN",
    "ArgumentTypeError",
    "describe",
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
    "MAX_USERS",
    "real_array",
]

_ATOL = 1e-9

#: smallest mechanism budget ldpkit accepts (see :func:`check_epsilon`)
EPS_MIN = 1e-6

#: largest mechanism budget ldpkit accepts (see :func:`check_epsilon`)
EPS_MAX = 700.0

_EPS_LOW_WHY = (
    "below it the probabilities that tell inputs apart differ by about eps/d, close to the "
    "resolution of double-precision uniform draws, so the sampled channel would not be the declared one"
)
_EPS_HIGH_WHY = "above it the smallest output probabilities (about e^-eps) underflow double precision"


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type; a :class:`ValueError` too, so one ``except`` catches every rejection."""


def describe(value: Any) -> str:
    """Short repr of a user-supplied value for error messages (numpy scalars as Python scalars)."""
    if isinstance(value, np.generic):
        value = value.item()
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _to_float(value: Any) -> float:
    """``float(value)``, with a Python int too large for a double mapped to +-inf instead of OverflowError."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def check_positive_real(value: Any, name: str) -> float:
    """Return ``value`` as a float; raise unless it is a finite positive real number.

    A value that is not a real number raises :class:`ArgumentTypeError`.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"{name} must be a finite positive real number, got {describe(value)}")
    out = _to_float(value)
    if out == math.inf and isinstance(value, numbers.Integral):
        raise ValueError(
            f"{name} must be a finite positive real number, got {describe(value)}, beyond the double range"
        )
    if not math.isfinite(out) or out <= 0.0:
        raise ValueError(f"{name} must be a finite positive real number, got {describe(value)}")
    return out


def check_epsilon(
    epsilon: Any, name: str = "epsilon", low: float = EPS_MIN, high: float = EPS_MAX, high_why: str = _EPS_HIGH_WHY
) -> float:
    """Return a mechanism's privacy budget as a float in ``[low, high]``.

    The default range ``[EPS_MIN, EPS_MAX] = [1e-6, 700]`` is where every mechanism of ldpkit
    computes its probabilities exactly in double precision: below ``1e-6`` the probabilities
    that separate two inputs differ by about ``eps / d``, near the ``2**-53`` resolution of a
    uniform draw, so sampling could not reproduce the declared channel; above ``700`` the
    smallest output probabilities, about ``e^-eps``, underflow.  Mechanisms whose
    representation is more fragile state a narrower ``high`` and its reason (``high_why``).
    A non-real value raises :class:`ArgumentTypeError`; NaN, infinities, non-positive values
    and values outside the range raise :class:`ValueError`.
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise ArgumentTypeError(f"{name} must be a real number, got {describe(epsilon)}")
    out = _to_float(epsilon)
    huge_int = out == math.inf and isinstance(epsilon, numbers.Integral)  # finite, but beyond any double
    if not huge_int and (not math.isfinite(out) or out <= 0.0):
        raise ValueError(f"{name} must be a finite positive budget, got {describe(epsilon)}")
    if out < low:
        raise ValueError(f"{name}={describe(epsilon)} is below the supported range [{low:g}, {high:g}]: {_EPS_LOW_WHY}")
    if out > high:
        raise ValueError(f"{name}={describe(epsilon)} is above the supported range [{low:g}, {high:g}]: {high_why}")
    return out


#: largest count, and largest total number of users, that ldpkit accepts: every count and their
#: sum stay exact in double precision (estimators work in floating point) and in int64
MAX_USERS = 2**53


def check_positive_int(value: Any, name: str, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as an int; raise unless it is an integer in ``[minimum, maximum]``.

    A value that is not an integer raises :class:`ArgumentTypeError`.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(f"{name} must be an integer >= {minimum}, got {describe(value)}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {describe(value)}")
    if maximum is not None and int(value) > maximum:
        raise ValueError(f"{name} must be an integer in [{minimum}, {maximum}], got {describe(value)}")
    return int(value)


def check_domain_size(d: Any, name: str = "d", minimum: int = 2) -> int:
    """Return the domain size; an LDP frequency oracle needs at least two items.

    At most :data:`MAX_USERS` ``= 2**53`` items: item indices must stay exact in double precision.
    """
    return check_positive_int(d, name, minimum, maximum=MAX_USERS)


def _integer_array(values: Any, name: str, what: str) -> np.ndarray:
    """``values`` as a 1-d array of Python-exact integers (int64, or object for huge values), or ValueError."""
    arr = np.asarray(values)
    if arr.ndim == 0:
        raise ArgumentTypeError(f"{name} must be a 1-d array of {what}, got {describe(values)}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array of {what}, got shape {arr.shape}")
    if arr.dtype == object:
        # Python ints of any size (or integer-valued reals): check each entry without wrapping
        for v in arr.tolist():
            integral = isinstance(v, numbers.Integral) and not isinstance(v, bool)
            real_int = (isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(float(v))
                        and float(v).is_integer())
            if not (integral or real_int):
                raise ArgumentTypeError(f"{name} must hold integer {what}, got {describe(v)}")
        ints = [int(v) for v in arr.tolist()]
        if ints and (min(ints) < -(2**63) or max(ints) >= 2**63):
            bad_int = next(v for v in ints if not -(2**63) <= v < 2**63)
            return np.array([bad_int], dtype=object)  # caller reports the out-of-range value
        return np.array(ints, dtype=np.int64)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ArgumentTypeError(f"{name} must hold integer {what}, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.floating):
        ok = np.isfinite(arr) & (arr == np.round(arr))
        if not np.all(ok):
            raise ValueError(f"{name} must hold integer {what}, got {describe(arr[~ok][0].item())}")
        big = np.abs(arr) >= 2.0**63
        if np.any(big):
            return np.array([int(arr[big][0])], dtype=object)
        return arr.astype(np.int64)
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) >= 2**63:
        return np.array([int(arr.max())], dtype=object)
    return arr.astype(np.int64, copy=False)


def check_items(items: Any, d: int, name: str = "items") -> np.ndarray:
    """Return ``items`` as a non-empty 1-d int64 array with every entry in ``range(d)``.

    The offending value is reported as given (a ``uint64`` item ``2**63`` is reported as
    ``9223372036854775808``, never as its wrapped int64 value).
    """
    arr = np.asarray(items)
    if arr.ndim == 1 and arr.size == 0:
        raise ValueError(f"{name} is empty: at least one user is needed")
    out = _integer_array(arr, name, "item indices")
    if out.dtype == object:
        raise ValueError(f"{name} contains item {out[0]}, outside the domain 0..{d - 1}")
    lo, hi = int(out.min()), int(out.max())
    if lo < 0 or hi >= d:
        bad = lo if lo < 0 else hi
        raise ValueError(f"{name} contains item {bad}, outside the domain 0..{d - 1}")
    return out


def check_counts(
    counts: Any, d: int | None = None, name: str = "counts", allow_zero_total: bool = False, limit_total: bool = True
) -> np.ndarray:
    """Return a 1-d int64 array of non-negative counts (of length ``d`` if given), not all zero.

    Every count and (unless ``limit_total`` is false, as for support counts, where one user
    supports several items) their total must be at most :data:`MAX_USERS` ``= 2**53``, so that
    they are exact in double precision (the estimators compute in floating point) and their
    sum cannot wrap in int64.
    """
    arr = np.asarray(counts)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array of counts, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if d is not None and arr.size != d:
        raise ValueError(f"{name} has length {arr.size}, expected the domain size {d}")
    out = _integer_array(arr, name, "counts")
    if out.dtype == object:
        raise ValueError(f"{name} contains {out[0]}, above the supported {MAX_USERS} (2**53) users")
    if np.any(out < 0):
        raise ValueError(f"{name} must be non-negative integers, got {int(out[out < 0][0])}")
    if np.any(out > MAX_USERS):
        raise ValueError(f"{name} contains {int(out[out > MAX_USERS][0])}, above the supported {MAX_USERS} (2**53) users")
    total = float(np.sum(out, dtype=np.float64))
    if limit_total and total >= MAX_USERS / 2:  # the float sum may have rounded: add exactly
        exact = sum(out.tolist())
        if exact > MAX_USERS:
            raise ValueError(f"{name} sum to {exact}, above the supported {MAX_USERS} (2**53) users")
    if total == 0 and not allow_zero_total:
        raise ValueError(f"{name} sum to zero: at least one user is needed")
    return out


def real_array(values: Any, name: str, exact: bool = False) -> np.ndarray:
    """``values`` as a float array; complex, string, boolean or object entries that are not real are refused.

    ``np.asarray(x, dtype=float)`` would drop an imaginary part or parse strings; this does not.
    A Python integer too large for a double is refused (naming it) instead of raising
    ``OverflowError``; with ``exact=True`` so is every integer entry beyond :data:`MAX_USERS`
    ``= 2**53`` in magnitude, which double precision would round.
    """
    arr = np.asarray(values)
    if arr.dtype == object:
        flat = arr.reshape(-1).tolist()
        not_real = [v for v in flat if isinstance(v, bool) or not isinstance(v, numbers.Real)]
        if not_real:  # (None is a value that can be offending, so no None sentinel here)
            raise ArgumentTypeError(f"{name} must hold real numbers, got {describe(not_real[0])}")
        inexact = [v for v in flat if isinstance(v, numbers.Integral) and abs(int(v)) > MAX_USERS] if exact else []
        if inexact:
            big = inexact[0]
            raise ValueError(f"{name} contains the integer {big}, beyond the {MAX_USERS} (2**53) that double "
                             "precision holds exactly")
        try:
            return arr.astype(float)
        except OverflowError:
            huge = next(v for v in flat if not math.isfinite(_to_float(v)))
            raise ValueError(f"{name} contains {describe(huge)}, too large for double precision") from None
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ArgumentTypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if exact and np.issubdtype(arr.dtype, np.integer) and arr.size:
        lo, hi = int(arr.min()), int(arr.max())
        if max(-lo, hi) > MAX_USERS:
            big_int = hi if hi > MAX_USERS else lo
            raise ValueError(f"{name} contains the integer {big_int}, beyond the {MAX_USERS} (2**53) that double "
                             "precision holds exactly")
    return arr.astype(float)


def check_probability(p: Any, name: str = "p", open_interval: bool = False) -> float:
    """Return ``p`` as a float in [0, 1] (or (0, 1) when ``open_interval``)."""
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise ArgumentTypeError(f"{name} must be a probability in [0, 1], got {describe(p)}")
    value = _to_float(p)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a probability in [0, 1], got {describe(p)}")
    if open_interval and not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be a probability in (0, 1), got {describe(p)}")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {describe(p)}")
    return value


def check_probabilities(p: Any, name: str = "probabilities", shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Return a float array whose entries all lie in [0, 1]."""
    arr = real_array(p, name)
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


def check_budget_vector(budgets: Any, d: int, name: str = "budgets", allow_inf: bool = False) -> np.ndarray:
    """Return a per-item privacy budget vector of length ``d`` with positive entries.

    Entries must be finite unless ``allow_inf`` (then ``+inf`` marks an item without a
    budget, such as a non-sensitive item of IPRR).
    """
    arr = real_array(budgets, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d vector of budgets, got shape {arr.shape}")
    if arr.size != d:
        raise ValueError(f"{name} has length {arr.size}, expected the domain size {d}")
    ok = (arr > 0) & (np.isfinite(arr) | (allow_inf & (arr == np.inf)))
    bad = ~ok
    if np.any(bad):
        kind = "positive budgets or inf" if allow_inf else "finite positive budgets"
        raise ValueError(f"{name} must be {kind}, got {describe(arr[bad][0].item())} at item {int(np.flatnonzero(bad)[0])}")
    return arr
