"""Post-processing of frequency estimates: clipping, Norm-Sub and maximum-likelihood EM.

The unbiased estimators of :mod:`ldpkit.base` can return negative counts and vectors that do
not sum to the number of users.  Three ways to repair that are implemented here:

* :func:`clip` -- set negative entries to zero (and optionally cap them at ``n``);
* :func:`norm_sub` -- Norm-Sub of Wang et al. (NDSS 2020, ``wang2020locally``): subtract one
  constant from every entry and clip at zero so that the result sums to the required total.
  It is exactly the Euclidean projection onto the scaled probability simplex and is computed
  exactly by sorting (Estimation chapter, :prf:ref:`thm-norm-sub-projection`);
* :func:`em_estimate` -- the maximum-likelihood estimate of the input distribution from the
  observed output counts of any channel with a finite output space, by the
  expectation-maximisation iteration (Estimation chapter, :prf:ref:`def-channel-mle`,
  :prf:ref:`thm-em-update` and :prf:ref:`thm-em-kkt`).

Post-processing never touches the users' reports again, so it costs no privacy.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Optional, cast

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (
    ArgumentTypeError,
    check_counts,
    check_distribution,
    check_positive_int,
    check_positive_real,
    describe,
    real_array,
)
from .channels import Channel, ExplicitChannel

__all__ = [
    "clip",
    "norm_sub",
    "em_estimate",
    "EMResult",
    "EMConvergenceWarning",
    "EMConvergenceError",
]


# --------------------------------------------------------------------------- validation
def _check_estimates(est: ArrayLike, name: str = "est", allow_2d: bool = False) -> np.ndarray:
    """Return ``est`` as a non-empty finite float array (1-d, or 2-d rows when allowed)."""
    raw = np.asarray(est)
    if raw.dtype != object and (
        raw.dtype == bool or not (np.issubdtype(raw.dtype, np.integer) or np.issubdtype(raw.dtype, np.floating))
    ):
        raise ArgumentTypeError(f"{name} must be a numeric array, got dtype {raw.dtype}")
    # object arrays of real numbers are accepted; integers beyond 2**53 would be rounded: refused
    arr = real_array(raw, name, exact=True)
    allowed = (1, 2) if allow_2d else (1,)
    if arr.ndim not in allowed:
        what = "a 1-d vector or a 2-d array of row vectors" if allow_2d else "a 1-d vector"
        raise ValueError(f"{name} must be {what}, got shape {arr.shape}")
    if arr.size == 0 or arr.shape[-1] == 0:
        raise ValueError(f"{name} is empty")
    bad = ~np.isfinite(arr)
    if np.any(bad):
        raise ValueError(f"{name} must be finite, got {arr[bad][0].item()!r}")
    return arr


# --------------------------------------------------------------------------- clipping
def clip(est: ArrayLike, n: float | None = None) -> np.ndarray:
    """Clip estimates to ``[0, n]`` (to ``[0, inf)`` when ``n`` is ``None``).

    Parameters
    ----------
    est
        Estimated counts or frequencies: a 1-d vector, or a 2-d array of independent rows
        (e.g. the trials returned by :meth:`ldpkit.base.FrequencyOracle.simulate`).
    n
        Optional upper bound, typically the number of users (counts) or 1 (frequencies).

    Returns
    -------
    numpy.ndarray
        A new float array; the input is not modified.  Clipping does not restore the total,
        see :func:`norm_sub` for that.
    """
    arr = _check_estimates(est, allow_2d=True)
    upper = np.inf if n is None else check_positive_real(n, "n")
    return cast("np.ndarray", np.clip(arr, 0.0, upper))


# --------------------------------------------------------------------------- Norm-Sub
def norm_sub(est: ArrayLike, total: float) -> np.ndarray:
    """Norm-Sub: shift all estimates by one constant and clip at zero so that they sum to ``total``.

    Finds the unique ``delta`` with ``sum_i max(est_i - delta, 0) = total`` and returns
    ``max(est - delta, 0)``.  The map ``delta -> sum_i max(est_i - delta, 0)`` is continuous,
    strictly decreasing where positive and piecewise linear, so ``delta`` is found exactly by
    sorting: with ``u`` the estimates in decreasing order and ``S_j = u_1 + ... + u_j``, the
    support size is ``rho = max{j : u_j > (S_j - total)/j}`` and ``delta = (S_rho - total)/rho``.
    Cost ``O(d log d)`` per vector, no iteration.

    The result is the Euclidean projection of ``est`` onto the scaled simplex
    ``{x : x >= 0, sum(x) = total}`` (the KKT conditions of that projection are exactly the
    thresholding above; Estimation chapter, :prf:ref:`thm-norm-sub-projection`).  It is the
    Norm-Sub post-processing of Wang et al. ``wang2020locally``.  When the positive estimates
    already sum to at least ``total`` (the usual case: pure-protocol estimates sum to about
    ``n``), ``delta >= 0`` and the result coincides with their "zero the negatives, then
    subtract from the positives until consistent" description.  When they sum to less,
    ``delta < 0`` and the projection also lifts entries in ``(delta, 0]``, whereas a literal
    "add only to the positive entries" reading would leave them at zero; the projection is
    the form implemented here.

    Parameters
    ----------
    est
        Estimated counts or frequencies: a 1-d vector or a 2-d array of independent rows.
    total
        Required sum, finite and positive: ``n`` for counts, ``1`` for frequencies.

    Returns
    -------
    numpy.ndarray
        Non-negative array of the same shape whose (row) sums equal ``total`` up to float
        rounding.
    """
    arr = _check_estimates(est, allow_2d=True)
    tot = check_positive_real(total, "total")
    rows = np.atleast_2d(arr)
    u = -np.sort(-rows, axis=1)  # decreasing
    # u_j > (S_j - total)/j  <=>  T_j = sum_{i<j} (u_i - u_j) < total, and T grows by the
    # non-negative steps (j-1)(u_{j-1} - u_j): no cancellation, and an overflow can only
    # reach +inf (where the condition is false, as it should be), whatever the magnitudes.
    j = np.arange(1, rows.shape[1] + 1, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        steps = (j[:-1])[None, :] * (u[:, :-1] - u[:, 1:])
        T = np.concatenate([np.zeros((rows.shape[0], 1)), np.cumsum(steps, axis=1)], axis=1)
    cond = T < tot  # true for j = 1 (T_1 = 0) and on a prefix
    rho = cond.shape[1] - np.argmax(cond[:, ::-1], axis=1)  # largest j (1-based) with cond true
    idx = np.arange(rows.shape[0])
    # delta = (S_rho - total)/rho = u_rho - (total - T_rho)/rho; subtracting u_rho first keeps
    # the result exact when the estimates are huge and close (est - delta would round away)
    lift = (tot - T[idx, rho - 1]) / rho
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.maximum((rows - u[idx, rho - 1][:, None]) + lift[:, None], 0.0)
    return cast("np.ndarray", out[0] if arr.ndim == 1 else out)


# --------------------------------------------------------------------------- EM / MLE
class EMConvergenceWarning(RuntimeWarning):
    """Emitted by :func:`em_estimate` when the iteration limit is hit before convergence.

    Examples
    --------
    >>> import warnings
    >>> from ldpkit.postprocess import EMConvergenceWarning, em_estimate
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     result = em_estimate([[0.75, 0.25], [0.25, 0.75]], [70, 30], max_iter=1)
    >>> result.converged, [w.category.__name__ for w in caught]
    (False, ['EMConvergenceWarning'])
    """


class EMConvergenceError(RuntimeError):
    """Raised by :func:`em_estimate` with ``strict=True`` when EM does not converge.

    Examples
    --------
    >>> from ldpkit.postprocess import EMConvergenceError, em_estimate
    >>> try:
    ...     em_estimate([[0.75, 0.25], [0.25, 0.75]], [70, 30], max_iter=1, strict=True)
    ... except EMConvergenceError as err:
    ...     print(err)  # doctest: +ELLIPSIS
    EM did not converge in max_iter=1 iterations ...
    """


@dataclass(frozen=True)
class EMResult:
    """Result of :func:`em_estimate`.

    Attributes
    ----------
    frequencies
        Estimated input distribution ``pi`` (non-negative, sums to 1).
    counts
        ``n * frequencies`` with ``n`` the number of observed reports (single-item data).
    log_likelihood
        ``sum_y m_y log (P^T pi)_y`` at the returned estimate (multinomial coefficient
        omitted).
    iterations
        Number of EM updates performed.
    converged
        Whether the stopping rule was met before ``max_iter``.
    n
        Number of observed reports ``sum_y m_y``.
    history
        Log-likelihood before the first update and after every update (length
        ``iterations + 1``) when requested, else ``None``.

    Examples
    --------
    >>> from ldpkit.postprocess import em_estimate
    >>> result = em_estimate([[0.75, 0.25], [0.25, 0.75]], [70, 30])
    >>> result.converged, result.n, [round(float(f), 4) for f in result.frequencies]
    (True, 100, [0.9, 0.1])
    """

    frequencies: np.ndarray
    counts: np.ndarray
    log_likelihood: float
    iterations: int
    converged: bool
    n: int
    history: np.ndarray | None = None


def _as_explicit(channel: Any) -> ExplicitChannel:
    """An explicit channel from a channel, a mechanism with ``channel()``, or a matrix."""
    if isinstance(channel, ExplicitChannel):
        return channel
    if isinstance(channel, Channel):
        return channel.to_explicit()
    method = getattr(channel, "channel", None)
    if callable(method):
        ch = method()
        if not isinstance(ch, Channel):
            raise ArgumentTypeError(f"{type(channel).__name__}.channel() returned {describe(ch)}, not a Channel")
        return ch.to_explicit()
    if isinstance(channel, (str, bytes)) or not hasattr(channel, "__len__"):
        raise ArgumentTypeError(
            f"channel must be a Channel, a mechanism with channel(), or a matrix, got {describe(channel)}"
        )
    return ExplicitChannel(real_array(channel, "channel matrix"))


#: channel columns whose largest entry is below this are rescaled inside :func:`em_estimate`
_SMALL_COLUMN = 2.0**-500


def _log_likelihood(m: np.ndarray, q: np.ndarray) -> float:
    return float(np.dot(m, np.log(q)))


def _check_bool(value: Any, name: str) -> None:
    if not isinstance(value, bool):
        raise ArgumentTypeError(f"{name} must be a bool, got {describe(value)}")


def _em_start(init: Optional[ArrayLike], d: int) -> np.ndarray:
    """The starting distribution of EM: uniform, or ``init`` checked strictly positive and renormalised."""
    if init is None:
        return np.full(d, 1.0 / d)
    pi = check_distribution(init, d, "init").copy()
    if np.any(pi <= 0):
        bad = int(np.flatnonzero(pi <= 0)[0])
        raise ValueError(f"init must be strictly positive, has {pi[bad].item()!r} at input {bad}")
    pi /= pi.sum()
    return pi


def _observed_channel(P: np.ndarray, m_all: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """The channel's observed columns (tiny ones rescaled), their float counts and the log-likelihood offset.

    Raises if an observed output is one the channel never produces.
    """
    observed = m_all > 0
    impossible = observed & (P.max(axis=0) <= 0)
    if np.any(impossible):
        y = int(np.flatnonzero(impossible)[0])
        raise ValueError(f"output_counts[{y}] = {int(m_all[y])} but the channel never produces output {y}")
    # Outputs never observed do not enter the likelihood or the update.
    Pm = P[:, observed]
    m = m_all[observed].astype(float)
    # The update uses only the ratios P[x, y] / q_y, which do not change when column y is scaled:
    # columns whose largest entry is tiny (down to subnormal) are scaled to largest entry 1, so that
    # q_y cannot underflow to 0; the log-likelihood gets the constant sum_y m_y log(scale_y) back.
    col_max = Pm.max(axis=0)
    small = col_max < _SMALL_COLUMN
    offset = 0.0
    if np.any(small):
        Pm = Pm.copy()
        Pm[:, small] /= col_max[small]
        offset = float(np.dot(m[small], np.log(col_max[small])))
    return Pm, m, offset


def _em_iterate(
    pi: np.ndarray, Pm: np.ndarray, m: np.ndarray, n: float, offset: float, tol: float, max_iter: int, history: bool,
) -> tuple[np.ndarray, float, int, bool, float, list[float] | None]:
    """The EM updates from ``pi`` until the per-report gain is at most ``tol`` or ``max_iter`` updates.

    Returns the estimate, its log-likelihood, the number of updates, whether the stopping rule
    was met, the last gain and the log-likelihood trace (``None`` unless ``history``).
    """
    w = m / n
    q = pi @ Pm
    ll = _log_likelihood(m, q) + offset
    trace = [ll] if history else None
    converged = False
    gain = math.nan  # set by the first update (max_iter >= 1)
    it = 0
    for it in range(1, max_iter + 1):
        pi = pi * (Pm @ (w / q))
        pi /= pi.sum()
        q = pi @ Pm
        new_ll = _log_likelihood(m, q) + offset
        if trace is not None:
            trace.append(new_ll)
        gain = (new_ll - ll) / n
        ll = new_ll
        if gain <= tol:
            converged = True
            break
    return pi, ll, it, converged, gain, trace


def em_estimate(
    channel: Any,
    output_counts: ArrayLike,
    tol: float = 1e-10,
    max_iter: int = 10_000,
    init: Optional[ArrayLike] = None,
    *,
    strict: bool = False,
    history: bool = False,
) -> EMResult:
    """Maximum-likelihood estimate of the input distribution by expectation-maximisation.

    Model: each of ``n`` users holds an item ``x ~ pi`` and reports ``y`` with probability
    ``P[x, y]``, so the output counts ``m`` are multinomial with cell probabilities
    ``q = P^T pi``.  The log-likelihood (without the multinomial coefficient) is
    ``L(pi) = sum_y m_y log q_y``.  Treating the hidden inputs as missing data, the E-step
    computes the expected number of users with input ``x``,
    ``sum_y m_y pi_x P[x, y] / q_y``, and the M-step divides it by ``n``.  Hence

        ``pi_x  <-  pi_x * [P (m / (n q))]_x``,   with ``q = P^T pi``,

    which already sums to one (``sum_x pi_x P[x, y] = q_y``); the code renormalises only to
    remove rounding drift.  Each update does not decrease ``L`` (the usual EM argument), and
    a fixed point with ``pi_x > 0`` satisfies ``dL/dpi_x = n``, the KKT condition of
    maximising ``L`` over the simplex with multiplier ``n`` (and ``dL/dpi_x <= n`` at the
    MLE where ``pi_x = 0``).  ``L`` is concave, so every KKT point is a global maximiser.
    For an invertible square channel whose unbiased estimate ``(P^T)^{-1} m / n`` lies in the
    simplex, that estimate makes ``q = m / n`` and is therefore the MLE.
    Derivation: Estimation chapter, :prf:ref:`def-channel-mle`, :prf:ref:`thm-em-update` and
    :prf:ref:`thm-em-kkt`.

    Parameters
    ----------
    channel
        An :class:`~ldpkit.channels.ExplicitChannel`, any :class:`~ldpkit.channels.Channel`
        (converted with ``to_explicit()``) or a row-stochastic matrix ``P[x, y]`` of shape
        ``(n_inputs, n_outputs)``.
    output_counts
        Non-negative integer counts of each output, length ``n_outputs``, not all zero.
    tol
        Stop when one update raises the *per-report* log-likelihood ``L / n`` by at most
        ``tol`` (finite, positive).  Near an interior maximum ``L`` is quadratic, so the
        distance to the MLE is then of order ``sqrt(tol)`` rather than ``tol``; EM is slow
        (linear rate, sublinear when the channel is nearly non-identifiable), so a small
        gain is a stopping rule, not a certificate; the KKT check in the Estimation chapter
        (:prf:ref:`thm-em-kkt`) is.
    max_iter
        Maximum number of updates (``>= 1``).
    init
        Starting distribution, strictly positive (a zero entry can never become positive
        under the multiplicative update); uniform by default.
    strict
        Raise :class:`EMConvergenceError` instead of warning when not converged.
    history
        Record the log-likelihood after every update in :attr:`EMResult.history`.

    Returns
    -------
    EMResult

    Raises
    ------
    ValueError
        Bad inputs, or an observed output that the channel can never produce (the
        likelihood is then zero for every ``pi``).
    EMConvergenceError
        With ``strict=True`` when ``max_iter`` is reached before the stopping rule.

    Warns
    -----
    EMConvergenceWarning
        With ``strict=False`` when ``max_iter`` is reached; ``converged`` is then ``False``.
    """
    P = _as_explicit(channel).matrix
    d, k = P.shape
    m_all = check_counts(output_counts, k, "output_counts")
    tol = check_positive_real(tol, "tol")
    max_iter = check_positive_int(max_iter, "max_iter")
    _check_bool(strict, "strict")
    _check_bool(history, "history")
    pi = _em_start(init, d)
    Pm, m, offset = _observed_channel(P, m_all)
    n = float(m.sum())
    pi, ll, it, converged, gain, trace = _em_iterate(pi, Pm, m, n, offset, tol, max_iter, history)

    if not converged:
        msg = (
            f"EM did not converge in max_iter={max_iter} iterations "
            f"(last per-report log-likelihood gain {gain!r} > tol={tol!r})"
        )
        if strict:
            raise EMConvergenceError(msg)
        warnings.warn(msg, EMConvergenceWarning, stacklevel=2)

    return EMResult(
        frequencies=pi,
        counts=pi * n,
        log_likelihood=ll,
        iterations=it,
        converged=converged,
        n=int(n),
        history=None if trace is None else np.asarray(trace),
    )
