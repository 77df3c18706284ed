"""The mechanism abstraction shared by every frequency oracle in ldpkit.

A frequency oracle has two separate halves, following the OpenDP idea of keeping privacy
accounting apart from sampling:

* **accounting** -- :meth:`FrequencyOracle.channel` returns the exact conditional output
  distribution (:mod:`ldpkit.channels`); :attr:`FrequencyOracle.epsilon` is the declared
  LDP budget and :func:`ldpkit.accountant.ldp_epsilon` recomputes it from the channel;
* **sampling and estimation** -- :meth:`perturb` (client side, vectorised over users, with
  an explicit :class:`numpy.random.Generator`), :meth:`aggregate` (server side support
  counts), :meth:`estimate` (unbiased counts), :meth:`variance` (exact variance of the
  estimator as a function of the true counts) and :meth:`simulate` (draw the estimator
  straight from the true counts, without materialising reports).

Most oracles in the papers are *pure* protocols (Wang et al., USENIX Security 2017): each
report supports a set of items, item ``i`` is supported with probability ``p_i`` when the
user holds ``i`` and ``q_i`` otherwise, and the unbiased count estimator is
``(C_i - n q_i) / (p_i - q_i)`` with variance
``[c_i p_i (1-p_i) + (n - c_i) q_i (1-q_i)] / (p_i - q_i)^2``
(derived in the Foundations chapter, label ``thm-pure-variance``).
:class:`SupportOracle` implements that once for all of them.
"""

from __future__ import annotations

import abc
import math
from typing import Any

import numpy as np

from ._rng import RNGLike, as_generator
from ._validation import check_counts, check_items, check_positive_int
from .accountant import Guarantee
from .channels import Channel

__all__ = ["FrequencyOracle", "SupportOracle", "ItemReportOracle", "pure_estimate", "pure_variance"]


class FrequencyOracle(abc.ABC):
    """Abstract frequency oracle over the item domain ``{0, ..., d-1}``.

    Estimates are *counts* (the papers' ``c_i``); divide by ``n`` for frequencies.
    """

    #: whether :meth:`simulate` samples the estimator's exact joint distribution from
    #: aggregate counts (``True``) or falls back to per-user simulation (``False``).
    aggregate_simulation_exact: bool = True

    def __init__(self, d: int) -> None:
        self.d = d

    # ------------------------------------------------------------------ accounting
    @property
    @abc.abstractmethod
    def epsilon(self) -> float:
        """Declared standard LDP budget (``math.inf`` if the mechanism gives none)."""

    @abc.abstractmethod
    def channel(self) -> Channel:
        """Exact conditional output distribution, for the accountant."""

    def guarantees(self) -> list[Guarantee]:
        """The privacy guarantees this mechanism declares, as data.

        :func:`ldpkit.accountant.verify` checks each one against :meth:`channel`.  The
        default declares standard LDP at :attr:`epsilon` when it is finite; mechanisms built
        for another notion (ID-LDP, ULDP, ...) override this.
        """
        eps = self.epsilon
        return [Guarantee("ldp", epsilon=eps)] if math.isfinite(eps) else []

    # ------------------------------------------------------------------ sampling
    @abc.abstractmethod
    def perturb(self, items: Any, rng: Any = None) -> Any:
        """Client side: one randomised report per user (vectorised)."""

    @abc.abstractmethod
    def aggregate(self, reports: Any) -> np.ndarray:
        """Server side: support count of every item (length ``d``)."""

    @abc.abstractmethod
    def n_reports(self, reports: Any) -> int:
        """Number of users behind ``reports``."""

    @abc.abstractmethod
    def estimate_from_support(self, support: np.ndarray, n: int) -> np.ndarray:
        """Unbiased count estimates from support counts of ``n`` users."""

    @abc.abstractmethod
    def variance(self, counts: Any) -> np.ndarray:
        """Exact variance of each count estimate given the true count vector."""

    # ------------------------------------------------------------------ sampling <-> accounting
    def output_index(self, reports: Any) -> np.ndarray:
        """Index of each report in the output alphabet of ``channel().to_explicit()``.

        This is the bridge that lets the tests compare the sampling code with the accounting
        code: the empirical law of ``output_index(perturb(x))`` must be row ``x`` of the
        channel.  Mechanisms whose explicit channel is feasible implement it; the default
        raises ``NotImplementedError``.
        """
        raise NotImplementedError(f"{type(self).__name__} does not map its reports to channel outputs")

    def sample_outputs(self, x: int, size: int, rng: RNGLike = None) -> np.ndarray:
        """``size`` independent outputs of input ``x``, as column indices of ``channel().to_explicit()``.

        The default perturbs ``size`` copies of item ``x`` with :meth:`perturb` and maps the
        reports with :meth:`output_index`; mechanisms whose channel restricts a random part
        of the output (OLH's hash seeds) override it.
        """
        x = check_items([x], self.d, "x")[0]
        size = check_positive_int(size, "size")
        return self.output_index(self.perturb(np.full(size, x, dtype=np.int64), rng))

    @abc.abstractmethod
    def _simulate_support(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Draw support counts directly from the true counts (one trial)."""

    # ------------------------------------------------------------------ shared API
    def estimate(self, reports: Any) -> np.ndarray:
        """Unbiased estimated counts from the users' reports."""
        return self.estimate_from_support(self.aggregate(reports), self.n_reports(reports))

    def estimate_items(self, items: Any, rng: Any = None) -> np.ndarray:
        """Perturb ``items`` on the client side, then aggregate and estimate (per-user path)."""
        items = check_items(items, self.d)
        return self.estimate(self.perturb(items, rng))

    def simulate(self, counts: Any, rng: Any = None, trials: int | None = None) -> np.ndarray:
        """Sample the estimator's distribution from the true counts.

        Returns shape ``(d,)`` for ``trials=None`` and ``(trials, d)`` otherwise. Exact in
        distribution when :attr:`aggregate_simulation_exact` is true; otherwise each trial
        expands the counts into users and runs the per-user path.
        """
        counts = check_counts(counts, self.d)
        if trials is not None:
            trials = check_positive_int(trials, "trials")
        gen = as_generator(rng)
        n = int(counts.sum())
        reps = 1 if trials is None else trials
        out = np.empty((reps, self.d))
        for t in range(reps):
            out[t] = self.estimate_from_support(self._simulate_support(counts, gen), n)
        return out[0] if trials is None else out

    def mse(self, counts: Any) -> float:
        """Exact total MSE ``sum_i Var(c_hat_i)`` of the unbiased estimator (counts scale)."""
        return float(np.sum(self.variance(counts)))

    def __repr__(self) -> str:
        eps = self.epsilon
        eps_s = "inf" if math.isinf(eps) else f"{eps:.6g}"
        return f"{type(self).__name__}(d={self.d}, epsilon={eps_s})"


def pure_estimate(support: np.ndarray, n: int, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``(C - n q) / (p - q)``, the unbiased estimator of a pure protocol."""
    return (np.asarray(support, dtype=float) - n * q) / (p - q)


def pure_variance(counts: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Exact ``Var`` of the pure estimator: ``[c p(1-p) + (n-c) q(1-q)] / (p-q)^2``."""
    c = np.asarray(counts, dtype=float)
    n = c.sum()
    return (c * p * (1 - p) + (n - c) * q * (1 - q)) / (p - q) ** 2


class SupportOracle(FrequencyOracle):
    """A pure protocol with per-item support probabilities ``p_support``, ``q_support``.

    Subclasses set :attr:`p_support` and :attr:`q_support` (arrays of length ``d``) and
    implement sampling; estimation and variance come from here.
    """

    p_support: np.ndarray
    q_support: np.ndarray

    def estimate_from_support(self, support: np.ndarray, n: int) -> np.ndarray:
        support = np.asarray(support)
        if support.shape != (self.d,):
            raise ValueError(f"support has shape {support.shape}, expected ({self.d},)")
        n = check_positive_int(n, "n")
        return pure_estimate(support, n, self.p_support, self.q_support)

    def variance(self, counts: Any) -> np.ndarray:
        counts = check_counts(counts, self.d)
        return pure_variance(counts, self.p_support, self.q_support)


class ItemReportOracle(SupportOracle):
    """A pure protocol whose report is a single item (GRR, uRR): support = the reported item."""

    def aggregate(self, reports: Any) -> np.ndarray:
        reports = check_items(reports, self.d, "reports")
        return np.bincount(reports, minlength=self.d)

    def n_reports(self, reports: Any) -> int:
        return int(np.asarray(reports).size)

    def output_index(self, reports: Any) -> np.ndarray:
        """Reports are items, and the channel's outputs are the items in index order."""
        return check_items(reports, self.d, "reports")
