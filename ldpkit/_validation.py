"""Input validation shared by every module, and the package's error policy.

**Error policy.** Every public entry point validates its arguments with these helpers
*before* doing any work.  A bad value raises :class:`ValueError`; an argument of the wrong
type raises :class:`ArgumentTypeError`, which is both a :class:`TypeError` and a
:class:`ValueError`, so ``except ValueError`` catches every rejection.  The message always
names the argument and the offending value as given.

**Supported budgets.** A mechanism's budget must lie in ``[EPS_MIN, EPS_MAX]`` (or a
narrower range the mechanism states): see :func:`check_epsilon` for why.

**Resource limits.** What a file or a command-line flag may ask for is bounded by what is
affordable, not only by what is exact: the largest domain (:func:`max_domain`, environment
variable ``LDPKIT_MAX_DOMAIN``), the largest stored header or state (:func:`max_header_bytes`,
``LDPKIT_MAX_HEADER_BYTES``) and the most samples an audit draws one by one per input
(:func:`max_audit_samples`, ``LDPKIT_MAX_AUDIT_SAMPLES``).  Each is checked before anything is
allocated, with a message naming the variable that raises it.  Opening a file never runs an
optimiser: :func:`solving_refused` marks such a region and the solvers' entry points call
:func:`check_solving_allowed`.

**Text.** :func:`check_label` and :func:`check_text_line` are the one definition of a label and
of a line of free text (a data description) wherever they come from: a user, a file, a flag.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
import os
import re
import unicodedata
from collections.abc import Iterator
from typing import Any, Optional

import numpy as np

__all__ = [
    "EPS_MAX",
    "EPS_MIN",
    "ArgumentTypeError",
    "describe",
    "check_epsilon",
    "check_positive_real",
    "check_real",
    "check_domain_size",
    "check_items",
    "check_sensitive_mask",
    "check_integer_array",
    "check_counts",
    "check_int64_signed_sums",
    "INT64_MAX",
    "check_probability",
    "check_probabilities",
    "check_distribution",
    "check_budget_vector",
    "check_positive_int",
    "MAX_USERS",
    "real_array",
    "check_real_counts",
    "MAX_DOMAIN",
    "MAX_AUDIT_SAMPLES",
    "MAX_HEADER_BYTES",
    "max_domain",
    "max_audit_samples",
    "max_header_bytes",
    "check_domain_limit",
    "solving_refused",
    "check_solving_allowed",
    "check_label",
    "check_text_line",
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


def _interval(low: float, high: float, low_open: bool, high_open: bool) -> str:
    """``[low, high)``-style text of an interval (``inf`` ends always open)."""
    left = "(" if low_open or low == -math.inf else "["
    right = ")" if high_open or high == math.inf else "]"
    return f"{left}{low:g}, {high:g}{right}"


def check_real(
    value: Any,
    name: str,
    low: float = -math.inf,
    high: float = math.inf,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a finite float in the interval from ``low`` to ``high``.

    The typed check for a scalar real argument (a tolerance, a significance level, a
    probability ``keep`` in ``(0, 1]``, a threshold): ``float(value)`` would parse the string
    ``"0.5"``, accept ``True`` as 1 and drop nothing, silently.  The ends are included unless
    ``low_open`` / ``high_open``.  A value that is not a real number (a string, a bool,
    ``None``, a complex number, an array) raises :class:`ArgumentTypeError`; NaN, an infinity,
    a Python integer beyond the double range or a value outside the interval raises
    :class:`ValueError`.  For a budget use :func:`check_epsilon`, for a positive quantity
    :func:`check_positive_real`, for a probability in ``[0, 1]`` :func:`check_probability`.

    Examples
    --------
    >>> from ldpkit._validation import check_real
    >>> check_real(0.5, "keep", 0.0, 1.0, low_open=True)
    0.5
    >>> try:
    ...     check_real("0.5", "keep", 0.0, 1.0, low_open=True)
    ... except TypeError as err:
    ...     print(err)
    keep must be a finite real number in (0, 1], got '0.5'
    """
    where = _interval(low, high, low_open, high_open)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"{name} must be a finite real number in {where}, got {describe(value)}")
    out = _to_float(value)
    if not math.isfinite(out):
        tail = ", beyond the double range" if isinstance(value, numbers.Integral) else ""
        raise ValueError(f"{name} must be a finite real number in {where}, got {describe(value)}{tail}")
    below = out <= low if low_open else out < low
    above = out >= high if high_open else out > high
    if below or above:
        raise ValueError(f"{name} must be a finite real number in {where}, got {describe(value)}")
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


def _strict_integers(arr: np.ndarray, name: str, what: str) -> np.ndarray:
    """``arr`` (1-d, non-empty) unchanged when of an integer dtype, or its Python ints as an object array.

    Refuses every other dtype with :class:`ArgumentTypeError`, floats included *even when
    whole-valued* (``[1.0, 2.0]``): the values are not converted, so nothing is rounded or
    wrapped before the caller's range check.
    """
    if arr.dtype == object:
        values = arr.tolist()
        bad = [v for v in values if isinstance(v, bool) or not isinstance(v, numbers.Integral)]
        if bad:
            raise ArgumentTypeError(f"{name} must hold integer {what}, got {describe(bad[0])}")
        return np.array([int(v) for v in values], dtype=object)  # Python ints of any size
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ArgumentTypeError(f"{name} must hold integer {what}, got {describe(arr[0])} (dtype {arr.dtype})")
    return arr


def _as_1d(values: Any, name: str, what: str) -> np.ndarray:
    """``values`` as an array, 1-d or an error; a sequence of Python ints that numpy would turn into
    float64 (``[2**63, 0]``: too large for int64) is kept as Python ints, exactly."""
    arr = np.asarray(values)
    if arr.dtype == np.float64 and not isinstance(values, np.ndarray) and arr.ndim == 1:
        raw = np.asarray(values, dtype=object)
        if all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in raw.tolist()):
            arr = raw
    if arr.ndim == 0:
        raise ArgumentTypeError(f"{name} must be a 1-d array of {what}, got {describe(values)}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array of {what}, got shape {arr.shape}")
    return arr


def check_items(
    items: Any, d: int, name: str = "items", *, strict: bool = False, allow_empty: bool = False
) -> np.ndarray:
    """Return ``items`` as a 1-d int64 array with every entry in ``range(d)``.

    The offending value is reported as given (a ``uint64`` item ``2**63`` is reported as
    ``9223372036854775808``, never as its wrapped int64 value).

    By default floats holding whole numbers (``[1.0, 2.0]``) are accepted, as reports and
    items built by hand often are.  With ``strict=True`` only integer dtypes (and Python
    integers) are: any other dtype, floats included even when whole-valued, raises
    :class:`ArgumentTypeError` naming its first entry, because a float item index is almost
    always a bug upstream (an average, a division, a column read with the wrong type).
    Containers of item indices (users' item sets, sensitive-item lists) use it.
    ``allow_empty`` accepts an empty array (a user holding no item) instead of raising.
    """
    arr = _as_1d(items, name, "item indices")
    if arr.size == 0:
        if allow_empty:
            return np.empty(0, dtype=np.int64)
        raise ValueError(f"{name} is empty: at least one user is needed")
    if strict:
        out = _strict_integers(arr, name, "item indices")
        lo, hi = out.min(), out.max()  # on the values as given: no wrap-around
        if lo < 0 or hi >= d:
            bad = lo if lo < 0 else hi
            raise ValueError(f"{name} contains item {describe(bad)}, outside the domain 0..{d - 1}")
        return out.astype(np.int64)
    out = _integer_array(arr, name, "item indices")
    if out.dtype == object:
        raise ValueError(f"{name} contains item {out[0]}, outside the domain 0..{d - 1}")
    lo_i, hi_i = int(out.min()), int(out.max())
    if lo_i < 0 or hi_i >= d:
        bad_i = lo_i if lo_i < 0 else hi_i
        raise ValueError(f"{name} contains item {bad_i}, outside the domain 0..{d - 1}")
    return out


def check_sensitive_mask(sensitive: Any, d: int, name: str = "sensitive") -> np.ndarray:
    """Boolean mask of length ``d`` from a boolean mask or a list of distinct item indices (at least one).

    The sensitive items of the ULDP mechanisms (uRR, uRAP) are given either way; a list must not
    repeat an item, and at least one item must be selected.

    Examples
    --------
    >>> from ldpkit._validation import check_sensitive_mask
    >>> check_sensitive_mask([0, 2], 4).tolist()
    [True, False, True, False]
    """
    arr = np.asarray(sensitive)
    if arr.ndim != 1:
        raise ArgumentTypeError(f"{name} must be a 1-d boolean mask or list of item indices, got {describe(sensitive)}")
    if arr.dtype == bool:
        if arr.size != d:
            raise ValueError(f"{name} mask has length {arr.size}, expected the domain size {d}")
        mask = arr.copy()
    else:
        if arr.size == 0:
            raise ValueError(f"{name} is empty: at least one sensitive item is needed")
        idx = check_items(arr, d, name, strict=True)
        uniq, cnt = np.unique(idx, return_counts=True)
        if np.any(cnt > 1):
            raise ValueError(f"{name} lists item {int(uniq[cnt > 1][0])} more than once")
        mask = np.zeros(d, dtype=bool)
        mask[idx] = True
    if not mask.any():
        raise ValueError(f"{name} selects no item: at least one sensitive item is needed")
    return mask


def check_integer_array(
    values: Any,
    name: str,
    low: int,
    high: int,
    *,
    what: str = "values",
    dtype: Any = np.int64,
    allow_empty: bool = False,
) -> np.ndarray:
    """Return ``values`` as a 1-d array of ``dtype`` with every entry in ``[low, high)``.

    Only integer dtypes and Python integers are accepted: floats (even whole-valued),
    booleans, strings and other objects raise :class:`ArgumentTypeError` naming the first
    entry; ``int("5")`` or ``int(1.7)`` never run.  The range is checked on the values as
    given, before the cast to ``dtype`` (which must hold ``[low, high)``), so nothing wraps.
    For example hash seeds: ``check_integer_array(seeds, "seeds", 0, 2**64, dtype=np.uint64)``.
    """
    arr = _as_1d(values, name, what)
    if arr.size == 0:
        if allow_empty:
            return np.empty(0, dtype=dtype)
        raise ValueError(f"{name} is empty")
    out = _strict_integers(arr, name, what)
    lo, hi = out.min(), out.max()
    if lo < low or hi >= high:
        bad = lo if lo < low else hi
        raise ValueError(f"{name} must hold integer {what} in [{low}, {high}), got {describe(bad)}")
    return out.astype(dtype)


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


#: largest int64 value, ``2**63 - 1``
INT64_MAX = 2**63 - 1

#: below this float total of absolute values a row is certainly within :data:`INT64_MAX` (rounding each
#: entry and numpy's pairwise summation are off by a relative 2**-40 at most, far inside the factor 2 of
#: margin); at or above it the row's total is added exactly in Python integers
_INT64_SAFE_FLOAT = 2.0**62


def check_int64_signed_sums(values: Any, name: str) -> np.ndarray:
    """Return integer ``values`` as int64 when every signed sum along the last axis is exact in int64.

    A transform that only adds and subtracts the entries of each row -- a Walsh-Hadamard
    transform (every intermediate butterfly value and every output is ``sum_i s_i v_i`` with
    ``s_i`` in ``{-1, 0, 1}``), a signed or cumulative sum, a difference of histograms --
    produces numbers of absolute value at most ``sum_i |v_i|``.  So it is exact in int64 for
    every row whose absolute values sum to at most :data:`INT64_MAX` ``= 2**63 - 1``, and that
    bound cannot be raised: for a row of non-negative values (a histogram) the all-plus output
    equals the sum itself.  The check is made on the values as given (``uint64`` entries
    ``>= 2**63`` and Python integers of any size included, added exactly) before any work and
    before the cast; a failing row is named with its exact total and its largest entry.

    Only integer dtypes (and object arrays of Python integers) are accepted: a float or other
    array raises :class:`ArgumentTypeError` (compute those in float64 instead).
    """
    arr = np.asarray(values)
    if arr.ndim == 0:
        raise ArgumentTypeError(f"{name} must be an integer array with at least one axis, got {describe(values)}")
    if arr.dtype == object:
        flat = arr.reshape(-1).tolist()
        bad = [v for v in flat if isinstance(v, bool) or not isinstance(v, numbers.Integral)]
        if bad:
            raise ArgumentTypeError(f"{name} must hold integers, got {describe(bad[0])}")
    elif arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ArgumentTypeError(f"{name} must be an integer array, got dtype {arr.dtype}")
    if arr.size == 0:
        return arr.astype(np.int64)
    rows = arr.reshape(-1, arr.shape[-1])
    if arr.dtype == object:
        suspect: Any = range(rows.shape[0])
    elif max(-int(arr.min()), int(arr.max())) * arr.shape[-1] <= INT64_MAX:
        suspect = []  # largest magnitude times row length: no row can exceed the bound, no copy made
    else:
        approx = np.abs(rows.astype(np.float64)).sum(axis=1)  # float: no wrap-around
        suspect = np.flatnonzero(approx >= _INT64_SAFE_FLOAT).tolist()
    for r in suspect:
        row = [int(v) for v in rows[r].tolist()]
        total = sum(abs(v) for v in row)
        if total > INT64_MAX:
            where = f"row {r} of {name}" if rows.shape[0] > 1 else name
            largest = max(row, key=abs)
            raise ValueError(
                f"{where} has absolute values summing to {total} (largest entry {largest}), above "
                f"2**63 - 1 = {INT64_MAX}: adding and subtracting them would wrap around in int64"
            )
    return arr.astype(np.int64)


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


def check_real_counts(counts: Any, d: int | None = None) -> np.ndarray:
    """Real-valued counts (a non-empty 1-d array, of length ``d`` if given): finite, non-negative, not all zero."""
    c = real_array(counts, "counts")
    if d is not None and c.shape != (d,):
        raise ValueError(f"counts must have shape ({d},), got {c.shape}")
    if c.ndim != 1 or c.size == 0:
        raise ValueError(f"counts must be a non-empty 1-d array, got shape {c.shape}")
    bad = ~np.isfinite(c) | (c < 0)
    if np.any(bad):
        raise ValueError(f"counts must be finite and non-negative, got {float(c[bad][0])!r}")
    if c.sum() <= 0:
        raise ValueError("counts sum to zero: at least one user is needed")
    return c


# ---------------------------------------------------------------------------- resource limits
#: default of the largest domain (number of items) a file or a command-line flag may request:
#: building a mechanism allocates about 16 to 40 bytes per item, a labelled domain about 100
#: (``LDPKIT_MAX_DOMAIN`` overrides it; the Python API itself is not limited)
MAX_DOMAIN = 2**20

#: default of the most samples an audit draws per input from a sampler that has no exact
#: histogram (``counts``), one sampler call per chunk (``LDPKIT_MAX_AUDIT_SAMPLES`` overrides it)
MAX_AUDIT_SAMPLES = 10**8

#: default of the largest report-file header and aggregator state, in bytes
#: (``LDPKIT_MAX_HEADER_BYTES`` overrides it)
MAX_HEADER_BYTES = 2**26


def _env_limit(name: str, default: int, minimum: int) -> int:
    """The integer in environment variable ``name`` (at least ``minimum``), or ``default`` when it is unset or empty."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    digits = text.replace("_", "") if re.fullmatch(r"[0-9]+(?:_[0-9]+)*", text, re.ASCII) else ""
    if not digits or int(digits) < minimum:
        raise ValueError(f"the environment variable {name}={text!r} must be an integer >= {minimum} (unset it for the "
                         f"default, {default:,})")
    return int(digits)


def max_domain() -> int:
    """The largest domain a report file, an aggregator state or a command-line flag may request.

    :data:`MAX_DOMAIN` ``= 2**20`` items unless the environment variable ``LDPKIT_MAX_DOMAIN``
    says otherwise (read at every call, so a running process can change it).

    Examples
    --------
    >>> from ldpkit._validation import MAX_DOMAIN, max_domain
    >>> max_domain() == MAX_DOMAIN  # doctest: +SKIP
    True
    """
    return _env_limit("LDPKIT_MAX_DOMAIN", MAX_DOMAIN, 2)


def max_audit_samples() -> int:
    """The most samples per input an audit draws from a sampler without an exact histogram.

    :data:`MAX_AUDIT_SAMPLES` ``= 10**8`` unless ``LDPKIT_MAX_AUDIT_SAMPLES`` says otherwise.
    """
    return _env_limit("LDPKIT_MAX_AUDIT_SAMPLES", MAX_AUDIT_SAMPLES, 1)


def max_header_bytes() -> int:
    """The largest report-file header (and aggregator state file) read, in bytes.

    :data:`MAX_HEADER_BYTES` ``= 2**26`` (64 MiB) unless ``LDPKIT_MAX_HEADER_BYTES`` says otherwise.
    """
    return _env_limit("LDPKIT_MAX_HEADER_BYTES", MAX_HEADER_BYTES, 1024)


def check_domain_limit(d: Any, what: str) -> int:
    """Return ``d`` when it is at most :func:`max_domain`; else a ``ValueError`` naming ``what`` and the variable.

    ``d`` must already be an integer (:func:`check_domain_size` checks the type and the lower end).

    Examples
    --------
    >>> from ldpkit._validation import check_domain_limit
    >>> check_domain_limit(1000, "--d")
    1000
    >>> check_domain_limit(10**12, "--d")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: --d asks for a domain of 1,000,000,000,000 items, above the limit of ... items (LDPKIT_MAX_DOMAIN; ...)
    """
    limit = max_domain()
    if int(d) > limit:
        raise ValueError(f"{what} asks for a domain of {int(d):,} items, above the limit of {limit:,} items "
                         "(LDPKIT_MAX_DOMAIN; set it higher to allow more: about 40 bytes per item to build a "
                         "mechanism, 100 more per label)")
    return int(d)


# ---------------------------------------------------------------------------- no optimiser here
_NO_SOLVING: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar("ldpkit_no_solving", default=None)


@contextlib.contextmanager
def solving_refused(reason: str) -> Iterator[None]:
    """A region in which every solver refuses to run (:func:`check_solving_allowed` raises ``ValueError``).

    Report files and aggregator states store a mechanism's solved probabilities; rebuilding one
    from a file must never solve again (a small file could otherwise ask for minutes of work).

    Examples
    --------
    >>> from ldpkit._validation import check_solving_allowed, solving_refused
    >>> with solving_refused("opening a file"):
    ...     check_solving_allowed("solve_opt0")
    Traceback (most recent call last):
    ...
    ValueError: solve_opt0 would run an optimiser, which is refused here: opening a file
    """
    token = _NO_SOLVING.set(reason)
    try:
        yield
    finally:
        _NO_SOLVING.reset(token)


def check_solving_allowed(what: str) -> None:
    """Raise ``ValueError`` inside :func:`solving_refused`; return otherwise (the solvers call it first)."""
    reason = _NO_SOLVING.get()
    if reason is not None:
        raise ValueError(f"{what} would run an optimiser, which is refused here: {reason}")


# ---------------------------------------------------------------------------- labels and lines of text
#: Unicode categories never allowed in a label: controls, format (zero-width) characters, surrogates,
#: line and paragraph separators
_LABEL_BAD = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
#: in a line of free text: the same but format characters (invisible, harmless on one line)
_LINE_BAD = frozenset({"Cc", "Cs", "Zl", "Zp"})
_ASCII_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_ASCII_LINE_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # a tab is allowed on a line


def _bad_character(text: str, bad: frozenset[str]) -> Optional[str]:
    """The first character of ``text`` in one of the categories ``bad`` (a tab allowed on a line), or ``None``."""
    line = bad is _LINE_BAD
    if text.isascii():
        found = (_ASCII_LINE_CONTROL if line else _ASCII_CONTROL).search(text)
        return None if found is None else found.group()
    return next((c for c in text if unicodedata.category(c) in bad and not (line and c == "\t")), None)


def _character(c: str) -> str:
    name = unicodedata.name(c, "")
    return f"U+{ord(c):04X}" + (f" {name}" if name else "")


def check_label(label: Any, name: str = "label") -> str:
    """Return ``label`` in Unicode normal form NFC, or refuse it.

    A label is a non-empty string without control, zero-width (format), surrogate or line-break
    characters and without whitespace at either end: what it names must be unambiguous when it
    is read back from a file, printed in a table or typed again.  Two spellings of one text (the
    NFC and NFD forms of ``"é"``) are one label.

    Raises
    ------
    ArgumentTypeError
        A label that is not a string.
    ValueError
        Naming ``name`` and the offending character.

    Examples
    --------
    >>> from ldpkit._validation import check_label
    >>> check_label("cafe\\u0301") == "caf\\u00e9"
    True
    >>> check_label(" milk")
    Traceback (most recent call last):
    ...
    ValueError: label ' milk' has whitespace at its start or end
    """
    if not isinstance(label, str):
        raise ArgumentTypeError(f"{name} must be a string, got {type(label).__name__} {describe(label)}")
    if not label:
        raise ValueError(f"{name} must be a non-empty string, got {label!r}")
    bad = _bad_character(label, _LABEL_BAD)
    if bad is not None:
        raise ValueError(f"{name} {describe(label)} holds the character {_character(bad)}: labels hold no control, "
                         "zero-width or line-break characters")
    if label.strip() != label:
        raise ValueError(f"{name} {describe(label)} has whitespace at its start or end")
    return label if label.isascii() or unicodedata.is_normalized("NFC", label) else unicodedata.normalize("NFC", label)


def check_text_line(text: Any, name: str, max_length: int = 4096) -> str:
    """Return ``text`` when it is one line of free text: a string of at most ``max_length`` characters
    without control (a tab excepted), surrogate or line-break characters.

    Examples
    --------
    >>> from ldpkit._validation import check_text_line
    >>> check_text_line("shop A, Monday", "data")
    'shop A, Monday'
    >>> check_text_line("a\\nb", "data")
    Traceback (most recent call last):
    ...
    ValueError: data must be one line of text, got 'a\\nb' (it holds the character U+000A)
    """
    if not isinstance(text, str):
        raise ArgumentTypeError(f"{name} must be one line of text, got {type(text).__name__} {describe(text)}")
    if len(text) > max_length:
        raise ValueError(f"{name} must be one line of at most {max_length} characters, got {len(text)}")
    bad = _bad_character(text, _LINE_BAD)
    if bad is not None:
        raise ValueError(f"{name} must be one line of text, got {describe(text)} (it holds the character "
                         f"U+{ord(bad):04X})")
    return text
