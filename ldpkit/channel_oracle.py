"""Frequency estimation through an explicit channel matrix, for any finite-output mechanism.

A mechanism with ``d`` inputs, ``k`` outputs and channel ``Q[x, y] = P(y | x)`` turns the true
counts ``c`` into output counts ``Y`` with ``E[Y] = Q^T c``: each input item's holders report
independently, so ``Y`` is a sum of one multinomial ``Mult(c_x, Q[x])`` per input item.  With
any left inverse ``A`` of ``Q^T`` (``A Q^T = I_d``, which exists exactly when ``Q`` has rank
``d``),

* the estimator ``c_hat = A Y`` is unbiased: ``E[c_hat] = A Q^T c = c``;
* its covariance is exact and closed-form: ``Cov(Y) = diag(mu) - Q^T diag(c) Q`` with
  ``mu = Q^T c``, hence ``Cov(c_hat) = A diag(mu) A^T - diag(c)``;
* the estimator can be sampled straight from the counts (one multinomial per input item),
  which is its exact distribution;
* the maximum-likelihood estimate comes from the same channel by EM
  (:func:`ldpkit.postprocess.em_estimate`).

For a square invertible channel the left inverse is unique, so GRR and uRR through
:class:`ChannelOracle` give exactly their own estimators (the tests check this); for
``k > d`` the Moore-Penrose left inverse is used.  Estimation chapter,
:ref:`sec-channel-estimation` (:prf:ref:`thm-channel-estimator`; :prf:ref:`def-channel-mle` for the
maximum-likelihood estimate).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Union, cast

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike, as_generator
from ._validation import (
    EPS_MAX,
    EPS_MIN,
    MAX_USERS,
    ArgumentTypeError,
    check_counts,
    check_items,
    check_positive_int,
    check_positive_real,
    check_real_counts,
    real_array,
)
from .accountant import Guarantee
from .base import FrequencyOracle
from .channels import Channel, ExplicitChannel, rr_matrix
from .family import BudgetSweep, Family, register_family
from .reports import ItemReports, array_digest, check_source
from .postprocess import EMResult, em_estimate

__all__ = ["ChannelOracle"]

#: largest ``d * k`` for which a channel oracle builds its left inverse
MAX_CHANNEL_CELLS = 1 << 24


class ChannelOracle(FrequencyOracle[ItemReports]):
    """Frequency oracle for a mechanism given by its explicit channel matrix.

    Reports are output indices ``0..k-1`` (int64).  Estimation, exact covariance,
    aggregate-level simulation and EM/MLE all come from the matrix; subclasses (IPRR, k-ary
    LIP mechanisms) only build the matrix and declare their guarantees.

    Parameters
    ----------
    channel
        An :class:`~ldpkit.channels.ExplicitChannel`, another
        :class:`~ldpkit.channels.Channel` (converted with ``to_explicit()``), or a
        row-stochastic ``(d, k)`` matrix; ``d >= 2`` inputs and rank ``d``.
    epsilon
        The standard-LDP budget the mechanism declares (``None``, the default, or ``inf`` declares
        none);
        :func:`ldpkit.accountant.verify` checks it against the channel, whose tight value
        :func:`ldpkit.accountant.ldp_epsilon` computes.
    guarantees
        Declared guarantees; default standard LDP at ``epsilon`` when finite.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit import ChannelOracle, accountant
    >>> coin = ChannelOracle([[0.75, 0.25], [0.25, 0.75]], epsilon=1.1)   # randomised response
    >>> coin.epsilon, round(accountant.ldp_epsilon(coin), 6)             # declared; tight log 3
    (1.1, 1.098612)
    >>> coin.variance([60, 40]).round(3)          # exact Var[c_hat] = A diag(mu) A^T - diag(c)
    array([75., 75.])
    >>> est = coin.estimate(coin.perturb(np.repeat([0, 1], [60, 40]), rng=7))
    >>> float(est.sum())                           # estimates always sum to n
    100.0
    """

    def __init__(
        self,
        channel: Union[Channel, ArrayLike],
        *,
        epsilon: float | None = None,
        guarantees: list[Guarantee] | None = None,
    ) -> None:
        ch = channel if isinstance(channel, Channel) else ExplicitChannel(real_array(channel, "channel"))
        if not isinstance(ch, ExplicitChannel):
            ch = ch.to_explicit()
        d, k = ch.matrix.shape
        if d < 2:
            raise ValueError(f"a channel oracle needs at least 2 inputs, the channel has {d}")
        if d * k > MAX_CHANNEL_CELLS:
            raise ValueError(f"channel of shape ({d}, {k}) exceeds MAX_CHANNEL_CELLS={MAX_CHANNEL_CELLS}")
        if guarantees is not None:
            guarantees = list(guarantees)
            bad = [g for g in guarantees if not isinstance(g, Guarantee)]
            if bad:
                raise ArgumentTypeError(f"guarantees must be Guarantee records, got {bad[0]!r}")
        declared_inf = isinstance(epsilon, numbers.Real) and not isinstance(epsilon, bool) and epsilon == math.inf
        eps = math.inf if epsilon is None or declared_inf else check_positive_real(epsilon, "epsilon")
        Q = ch.matrix
        rank = int(np.linalg.matrix_rank(Q))
        if rank < d:
            raise ValueError(
                f"the channel has rank {rank} < {d} inputs: no unbiased estimator of the counts exists"
            )
        super().__init__(d)
        self._channel = ch
        self.n_outputs = k
        #: the left inverse ``A`` (``d x k``) with ``A Q^T = I``
        self.left_inverse = np.linalg.inv(Q.T) if k == d else np.linalg.pinv(Q.T)
        self._cdf = np.cumsum(Q, axis=1)
        # from each row's last positive column on, the cdf is exactly 1, so rounding in the
        # cumulative sum can never hand a draw to a trailing zero-probability column
        last = k - 1 - np.argmax(Q[:, ::-1] > 0, axis=1)
        self._cdf[np.arange(k)[None, :] >= last[:, None]] = 1.0
        self.epsilon = eps
        self._guarantees = guarantees

    # ------------------------------------------------------------------ accounting
    def channel(self) -> ExplicitChannel:
        return self._channel

    def guarantees(self) -> list[Guarantee]:
        """The guarantees given to the constructor, else standard LDP at the stated ``epsilon`` (if any)."""
        if self._guarantees is not None:
            return list(self._guarantees)
        return super().guarantees()

    @property
    def matrix(self) -> np.ndarray:
        """The channel matrix ``Q[x, y]``."""
        return self._channel.matrix

    # ------------------------------------------------------------------ sampling
    def perturb(self, items: ArrayLike, rng: RNGLike = None) -> ItemReports:
        """One output index per user, drawn from row ``Q[x]`` by exact inverse CDF (int64)."""
        items = check_items(items, self.d)
        gen = as_generator(rng)
        u = gen.random(items.size)
        out = np.empty(items.size, dtype=np.int64)
        order = np.argsort(items, kind="stable")
        bounds = np.searchsorted(items[order], np.arange(self.d + 1))
        for x in range(self.d):
            lo, hi = bounds[x], bounds[x + 1]
            if hi > lo:
                sel = order[lo:hi]
                # first column whose cumulative probability exceeds u: zero-probability
                # columns (equal consecutive cdf values) are never chosen
                out[sel] = np.searchsorted(self._cdf[x], u[sel], side="right")
        return ItemReports(np.minimum(out, self.n_outputs - 1), self.provenance)

    def report_parameters(self) -> dict[str, Any]:
        """``d``, ``k`` and a fingerprint of the channel matrix."""
        return {"d": self.d, "k": self.n_outputs, "matrix": array_digest(self.matrix)}

    def arguments(self) -> dict[str, Any]:
        """The channel matrix and the declared guarantees (as ``{"notion", "params"}`` records)."""
        return {"channel": self.matrix.copy(),
                "guarantees": [{"notion": g.notion, "params": dict(g.params)} for g in self.guarantees()]}

    @classmethod
    def from_arguments(cls, arguments: dict[str, Any]) -> ChannelOracle:
        """Rebuild from :meth:`arguments` (guarantee records become :class:`~ldpkit.accountant.Guarantee`)."""
        args = dict(arguments)
        records = args.pop("guarantees", None)
        if records is not None:
            args["guarantees"] = [Guarantee(r["notion"], **r["params"]) for r in records]
        return cls(**args)

    def aggregate(self, reports: ArrayLike) -> np.ndarray:
        """Output counts ``Y`` (length ``k``)."""
        check_source(reports, self.provenance)
        outputs = check_items(reports, self.n_outputs, "reports")
        return np.bincount(outputs, minlength=self.n_outputs)

    def n_reports(self, reports: ArrayLike) -> int:
        return int(np.asarray(reports).size)

    def output_index(self, reports: ArrayLike) -> np.ndarray:
        """Reports already are output indices."""
        return check_items(reports, self.n_outputs, "reports")

    # ------------------------------------------------------------------ estimation
    def estimate_from_support(self, support: np.ndarray, n: int) -> np.ndarray:
        """``c_hat = A Y`` from the output counts ``Y`` of ``n`` users (unbiased)."""
        y = np.asarray(support)
        if y.shape != (self.n_outputs,):
            raise ValueError(f"output counts have shape {y.shape}, expected ({self.n_outputs},)")
        n = check_positive_int(n, "n", maximum=MAX_USERS)
        y = check_counts(y, self.n_outputs, "output counts")
        if int(y.sum()) != n:
            raise ValueError(f"output counts sum to {int(y.sum())}, but n={n}")
        return cast("np.ndarray", self.left_inverse @ y.astype(float))

    def covariance(self, counts: ArrayLike) -> np.ndarray:
        """Exact ``Cov(c_hat) = A diag(Q^T c) A^T - diag(c)`` (``d x d``)."""
        c = check_counts(counts, self.d).astype(float)
        mu = self.matrix.T @ c
        A = self.left_inverse
        return cast("np.ndarray", (A * mu[None, :]) @ A.T - np.diag(c))

    def variance(self, counts: ArrayLike) -> np.ndarray:
        """Exact ``Var[c_hat_i] = sum_y A_iy^2 mu_y - c_i`` with ``mu = Q^T c``."""
        c = check_counts(counts, self.d).astype(float)
        mu = self.matrix.T @ c
        return cast("np.ndarray", (self.left_inverse**2) @ mu - c)

    def variance_at(self, counts: ArrayLike) -> np.ndarray:
        """:meth:`variance` at real-valued counts (the formula is linear in them)."""
        c = check_real_counts(counts, self.d)
        return cast("np.ndarray", (self.left_inverse**2) @ (self.matrix.T @ c) - c)

    def _simulate_support(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # one multinomial per input item: the exact law of the output counts
        return cast("np.ndarray", rng.multinomial(counts, self.matrix).sum(axis=0))

    def mle(self, output_counts: ArrayLike, **em_options: Any) -> EMResult:
        """Maximum-likelihood estimate of the input distribution from output counts, by EM.

        ``em_options`` are passed to :func:`ldpkit.postprocess.em_estimate`; multiply the
        result's ``frequencies`` by ``n`` for counts.
        """
        return em_estimate(self._channel, output_counts, **em_options)

    def estimate_mle(self, reports: Any, **em_options: Any) -> np.ndarray:
        """MLE counts (``n`` times the EM frequencies) from the users' reports."""
        y = self.aggregate(reports)
        return float(y.sum()) * self.mle(y, **em_options).frequencies

    def __repr__(self) -> str:
        eps = "inf" if math.isinf(self.epsilon) else f"{self.epsilon:.6g}"
        return f"{type(self).__name__}(d={self.d}, k={self.n_outputs}, epsilon={eps})"



# ---------------------------------------------------------------------------- the family
def _examples() -> tuple[ChannelOracle, ...]:
    # each declares a budget stated by hand (log 2.5 and log 6, the largest ratios in a column)
    return (
        ChannelOracle([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.3, 0.2, 0.5]], epsilon=math.log(2.5)),
        ChannelOracle([[0.6, 0.1, 0.2, 0.1], [0.1, 0.6, 0.1, 0.2], [0.2, 0.2, 0.3, 0.3]], epsilon=math.log(6)),
    )


def _grr_matrix(d: int, eps: float) -> np.ndarray:
    """GRR's channel matrix written with e^-eps (no overflow), for the explicit-channel sweep."""
    return rr_matrix(eps, d)


def _sweeps() -> tuple[BudgetSweep, ...]:
    # beyond EPS_MAX the matrix is the identity (e^-eps underflows): it then states no budget
    return (BudgetSweep("ChannelOracle",
                        lambda e: ChannelOracle(_grr_matrix(3, e), epsilon=e if e <= EPS_MAX else math.inf),
                        EPS_MIN, EPS_MAX, "item", budget_range=False, refusal=r"rank 1 < 3 inputs"),)


register_family(Family(
    "Channel", "kairouz2016discrete", ChannelOracle, _examples, "any explicit finite channel", sweeps=_sweeps,
    audit_skip="any explicit channel: audited through from_channel in the mutation tests", order=120))
