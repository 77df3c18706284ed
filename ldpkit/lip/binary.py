"""Binary randomised response under LIP: one user's MMSE and :class:`BinaryRR` with its estimators.

Each user ``i`` holds a private bit ``X_i`` with prior ``P1_i = P(X_i = 1)`` and reports a bit
``Y_i`` through binary randomised response.  **Convention** (the paper's eq. 14): ``q0 = P(Y = 1 |
X = 0)`` and ``q1 = P(Y = 0 | X = 1)`` are the two *flip* probabilities, so the channel is
``[[1 - q0, q0], [q1, 1 - q1]]``.  :func:`per_user_mse` is the exact MSE of one user's posterior
mean; :class:`BinaryRR` is the mechanism, with the posterior-mean (MMSE) and the prior-free
unbiased estimators of ``S = sum_i X_i``.  LIP chapter (:eq:`eq-lip-mmse` and
:eq:`eq-lip-unbiased`); part of :mod:`ldpkit.lip`, where every name is documented.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from .._rng import RNGLike, as_generator
from .._validation import (
    MAX_USERS,
    check_items,
    check_positive_int,
    check_positive_real,
    check_probabilities,
    check_probability,
    describe,
)
from ..accountant import Guarantee
from ..channel_oracle import ChannelOracle
from ..channels import ExplicitChannel
from ..reports import check_source

__all__ = ["BinaryRR", "per_user_mse"]


# ============================================================================ per-user MSE
def _mse(q0: ArrayLike, q1: ArrayLike, p: ArrayLike) -> np.ndarray:
    """``E[Var(X | Y)]`` for flips ``(q0, q1)`` and prior ``p`` (vectorised, unvalidated)."""
    q0, q1, p = np.broadcast_arrays(
        np.asarray(q0, dtype=float), np.asarray(q1, dtype=float), np.asarray(p, dtype=float)
    )
    lam0 = (1 - p) * (1 - q0) + p * q1
    lam1 = (1 - p) * q0 + p * (1 - q1)
    den = lam0 * lam1
    pp = p * (1 - p)
    with np.errstate(divide="ignore", invalid="ignore"):
        info = np.where(den > 0, pp * (1 - q0 - q1) ** 2 / np.where(den > 0, den, 1.0), 0.0)
    return cast("np.ndarray", pp * (1 - info))


def per_user_mse(q0: ArrayLike, q1: ArrayLike, prior: ArrayLike) -> np.ndarray:
    """Exact MSE ``E[(X - E[X|Y])^2]`` of one user's posterior mean, vectorised (the paper's eq. 16).

    With ``lambda_0 = (1-P1)(1-q0) + P1 q1`` and ``lambda_1 = 1 - lambda_0``::

        E = P1 P0 [1 - P1 P0 (1 - q0 - q1)^2 / (lambda_0 lambda_1)]

    (``P1 P0`` when ``lambda_0 lambda_1 = 0``: the report is constant).  Concave in ``(q0, q1)``.
    LIP chapter (:eq:`eq-lip-mmse`).

    Examples
    --------
    >>> from ldpkit.lip import per_user_mse
    >>> float(per_user_mse(0.0, 0.0, 0.3))                 # no noise: no error
    0.0
    >>> round(float(per_user_mse(0.25, 0.25, 0.5)), 4)     # randomised response, eps = log 3
    0.1875
    """
    a = check_probabilities(q0, "q0")
    b = check_probabilities(q1, "q1")
    p = check_probabilities(prior, "prior")
    try:
        return _mse(a, b, p)
    except ValueError as err:
        raise ValueError(f"q0, q1 and prior do not broadcast together: {err}") from None


def _binary_prior(prior: Any, name: str = "prior") -> float:
    """A prior ``P1`` strictly inside (0, 1)."""
    return check_probability(prior, name, open_interval=True)


# ============================================================================ BinaryRR
class BinaryRR(ChannelOracle):
    """Binary randomised response with flip probabilities ``q0 = P(Y=1|X=0)``, ``q1 = P(Y=0|X=1)``.

    The paper's convention (Jiang, Li, Tandon, eq. 14).  As a frequency oracle over the items
    ``{0, 1}`` it estimates the counts ``(n - S, S)`` without bias through its channel
    (:class:`~ldpkit.channel_oracle.ChannelOracle`); with priors it also gives the posterior-mean
    (MMSE) estimate of ``S`` and its exact MSE.

    Parameters
    ----------
    q0, q1
        Flip probabilities in ``[0, 1]`` with ``q0 + q1 != 1`` (otherwise ``Y`` is independent of ``X``).
    prior
        Optional global prior ``P1`` in ``(0, 1)``: :meth:`mmse_estimate` uses it by default, and
        a LIP budget is stated under the prior ``[1 - P1, P1]``.
    epsilon
        The standard-LDP budget the mechanism declares (``None``, the default, declares none).
    lip_epsilon
        The LIP budget the mechanism declares under the prior (needs ``prior``; ``None``, the
        default, declares none).  Declared budgets are the caller's claims, which
        :func:`ldpkit.accountant.verify` checks against the channel; the channel's tight values
        are :func:`ldpkit.accountant.ldp_epsilon` and :func:`ldpkit.accountant.lip_epsilon`.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit import accountant
    >>> from ldpkit.lip import BinaryRR
    >>> rr = BinaryRR(0.1, 0.3, prior=0.2, epsilon=2.0, lip_epsilon=1.2)
    >>> rr.channel().matrix.tolist()                       # rows x = 0, 1; columns y = 0, 1
    [[0.9, 0.1], [0.3, 0.7]]
    >>> [g.notion for g in rr.guarantees()], accountant.verify(rr).satisfied
    (['ldp', 'lip'], True)
    >>> round(accountant.ldp_epsilon(rr), 4)               # tight: max |log ratio| = log(0.7 / 0.1)
    1.9459
    >>> round(rr.mmse(n=100), 3)                           # exact MSE of the posterior mean
    10.629
    >>> round(rr.unbiased_mse(n=100), 3)                   # the prior-free unbiased estimator
    31.667
    >>> reports = rr.perturb(np.array([0] * 80 + [1] * 20), rng=1)
    >>> round(rr.mmse_estimate(reports), 2), round(rr.unbiased_estimate(reports), 2)
    (18.88, 16.67)
    """

    def __init__(
        self,
        q0: float,
        q1: float,
        *,
        prior: float | None = None,
        epsilon: float | None = None,
        lip_epsilon: float | None = None,
    ) -> None:
        a = check_probability(q0, "q0")
        b = check_probability(q1, "q1")
        if abs(1.0 - a - b) <= 1e-12:
            raise ValueError(
                f"q0 + q1 must differ from 1 (then Y is independent of X), got q0={describe(q0)}, q1={describe(q1)}"
            )
        p = None if prior is None else _binary_prior(prior)
        if lip_epsilon is not None and p is None:
            raise ValueError("lip_epsilon is a budget under a prior: give prior too")
        declared = None if lip_epsilon is None else check_positive_real(lip_epsilon, "lip_epsilon")
        ch = ExplicitChannel(np.array([[1.0 - a, a], [b, 1.0 - b]]))
        eps = math.inf if epsilon is None else check_positive_real(epsilon, "epsilon")
        guarantees = [Guarantee("ldp", epsilon=eps)] if math.isfinite(eps) else []
        if declared is not None and p is not None:
            guarantees.append(Guarantee("lip", prior=np.array([1.0 - p, p]), epsilon=declared))
        super().__init__(ch, epsilon=eps, guarantees=guarantees)
        #: the declared LIP budget under the prior, or ``None`` when none is declared
        self.lip_epsilon = declared
        self.q0 = a
        self.q1 = b
        self.prior = p

    @classmethod
    def symmetric(
        cls, q: float, *, prior: float | None = None, epsilon: float | None = None, lip_epsilon: float | None = None
    ) -> BinaryRR:
        """The symmetric model ``q0 = q1 = q`` (the paper's Fig. 4(c)).

        Examples
        --------
        >>> from ldpkit.lip import BinaryRR
        >>> BinaryRR.symmetric(0.25)
        BinaryRR(q0=0.25, q1=0.25)
        """
        a = check_probability(q, "q")
        return cls(a, a, prior=prior, epsilon=epsilon, lip_epsilon=lip_epsilon)

    def arguments(self) -> dict[str, Any]:
        """``q0``, ``q1``, the prior and the declared budgets (``None`` where none is declared)."""
        return {"q0": self.q0, "q1": self.q1, "prior": self.prior,
                "epsilon": self.epsilon if math.isfinite(self.epsilon) else None, "lip_epsilon": self.lip_epsilon}

    @classmethod
    def from_arguments(cls, arguments: dict[str, Any]) -> BinaryRR:
        """Rebuild from :meth:`arguments` (the constructor's keywords)."""
        return cls(**arguments)

    def configuration(self) -> tuple[object, ...]:
        """The channel oracle's configuration and the prior (which the MMSE estimate uses)."""
        return (*super().configuration(), self.prior)

    def __repr__(self) -> str:
        tail = "" if self.prior is None else f", prior={self.prior:.6g}"
        if math.isfinite(self.epsilon):
            tail += f", epsilon={self.epsilon:.6g}"
        if self.lip_epsilon is not None:
            tail += f", lip_epsilon={self.lip_epsilon:.6g}"
        return f"BinaryRR(q0={self.q0:.6g}, q1={self.q1:.6g}{tail})"

    # ------------------------------------------------------------------ priors and reports
    def _priors(self, priors: ArrayLike | None, n: int | None) -> np.ndarray:
        """Per-user priors: an array of length ``n``, a scalar broadcast to ``n``, or the global prior."""
        if priors is None:
            if self.prior is None:
                raise ValueError("no priors given and the mechanism has no global prior")
            priors = self.prior
        arr = check_probabilities(priors, "priors")
        if arr.ndim == 0:
            if n is None:
                raise ValueError("a scalar (global) prior needs the number of users n")
            return np.full(check_positive_int(n, "n", maximum=MAX_USERS), float(arr))
        if arr.ndim != 1:
            raise ValueError(f"priors must be a scalar or a 1-d array (one per user), got shape {arr.shape}")
        if n is not None and arr.size != n:
            raise ValueError(f"priors has length {arr.size}, but there are n={n} users")
        return arr

    def _reports(self, reports: Any) -> np.ndarray:
        check_source(reports, self.provenance)
        return check_items(reports, 2, "reports")

    # ------------------------------------------------------------------ MMSE estimation
    def posterior_mean(self, reports: Any, priors: ArrayLike | None = None) -> np.ndarray:
        """``E[X_i | Y_i]`` for every user (the paper's eq. 15); ``priors`` scalar, per user, or the global prior.

        LIP chapter (:eq:`eq-lip-mmse`).
        """
        y = self._reports(reports)
        p = self._priors(priors, y.size)
        lam0 = (1 - p) * (1 - self.q0) + p * self.q1
        lam1 = 1.0 - lam0
        with np.errstate(divide="ignore", invalid="ignore"):
            post1 = np.where(lam1 > 0, p * (1 - self.q1) / np.where(lam1 > 0, lam1, 1.0), p)
            post0 = np.where(lam0 > 0, p * self.q1 / np.where(lam0 > 0, lam0, 1.0), p)
        return np.where(y == 1, post1, post0)

    def mmse_estimate(self, reports: Any, priors: ArrayLike | None = None) -> float:
        """The MMSE estimate ``sum_i E[X_i | Y_i]`` of ``S`` (the paper's eq. 10).

        LIP chapter (:eq:`eq-lip-mmse`).
        """
        return float(np.sum(self.posterior_mean(reports, priors)))

    def mmse(self, priors: ArrayLike | None = None, n: int | None = None) -> float:
        """Exact MSE ``E[(S_hat - S)^2] = sum_i E[Var(X_i | Y_i)]`` of :meth:`mmse_estimate`.

        Expectation over the inputs (drawn from the priors) and the reports.  LIP chapter (:eq:`eq-lip-mmse`).
        """
        p = self._priors(priors, n)
        return float(np.sum(_mse(np.full(p.size, self.q0), np.full(p.size, self.q1), p)))

    # ------------------------------------------------------------------ prior-free baseline
    def unbiased_estimate(self, reports: Any) -> float:
        """The prior-free unbiased estimate ``(sum_i Y_i - n q0) / (1 - q0 - q1)`` of ``S`` (the paper's eq. 24).

        Equal to ``estimate(reports)[1]``.  LIP chapter (:eq:`eq-lip-unbiased`).
        """
        y = self._reports(reports)
        return float((y.sum() - y.size * self.q0) / (1.0 - self.q0 - self.q1))

    def unbiased_variance(self, count: int, n: int) -> float:
        """Exact ``Var`` of :meth:`unbiased_estimate` when ``count`` of the ``n`` users hold 1.

        ``[count q1 (1 - q1) + (n - count) q0 (1 - q0)] / (1 - q0 - q1)^2`` (the paper's eq. 25 when
        ``q0 = q1``).  LIP chapter (:eq:`eq-lip-unbiased`).
        """
        n = check_positive_int(n, "n", maximum=MAX_USERS)
        c = check_positive_int(count, "count", minimum=0, maximum=n)
        return (c * self.q1 * (1 - self.q1) + (n - c) * self.q0 * (1 - self.q0)) / (1.0 - self.q0 - self.q1) ** 2

    def unbiased_mse(self, priors: ArrayLike | None = None, n: int | None = None) -> float:
        """Exact ``E[(S_tilde - S)^2]`` of the unbiased estimator when the inputs follow the priors.

        ``sum_i [P1_i q1 (1 - q1) + (1 - P1_i) q0 (1 - q0)] / (1 - q0 - q1)^2``.  LIP chapter (:eq:`eq-lip-unbiased`).
        """
        p = self._priors(priors, n)
        num = p * self.q1 * (1 - self.q1) + (1 - p) * self.q0 * (1 - self.q0)
        return float(np.sum(num) / (1.0 - self.q0 - self.q1) ** 2)

    def sample_errors(
        self, priors: ArrayLike | None = None, n: int | None = None, trials: int = 1, rng: RNGLike = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Errors ``S_hat - S`` of the MMSE and of the unbiased estimator over ``trials`` populations.

        Each trial draws every ``X_i`` from its prior, perturbs it with ``perturb`` and
        estimates; returns two arrays of length ``trials``.
        """
        p = self._priors(priors, n)
        trials = check_positive_int(trials, "trials", maximum=MAX_USERS)
        if trials * p.size > 50_000_000:
            raise ValueError(f"trials * users = {trials * p.size} exceeds 50,000,000")
        gen = as_generator(rng)
        x = (gen.random((trials, p.size)) < p[None, :]).astype(np.int64)
        y = np.asarray(self.perturb(x.reshape(-1), gen)).reshape(trials, p.size)
        s = x.sum(axis=1).astype(float)
        post = np.stack([self.posterior_mean(np.zeros(p.size, dtype=np.int64), p),
                         self.posterior_mean(np.ones(p.size, dtype=np.int64), p)])  # E[X_i | Y_i = y]
        mm = np.where(y == 1, post[1][None, :], post[0][None, :]).sum(axis=1)
        ub = (y.sum(axis=1) - p.size * self.q0) / (1.0 - self.q0 - self.q1)
        return mm - s, ub - s
