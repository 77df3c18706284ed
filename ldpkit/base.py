"""The mechanism abstraction shared by every frequency oracle in ldpkit.

A frequency oracle has two separate halves, following the OpenDP idea of keeping privacy
accounting apart from sampling:

* **accounting** -- :meth:`FrequencyOracle.channel` returns the exact conditional output
  distribution (:mod:`ldpkit.channels`); :meth:`FrequencyOracle.guarantees` states what the
  constructor's budget promises (:attr:`FrequencyOracle.epsilon` for standard LDP), and
  :func:`ldpkit.accountant.verify` checks it against the channel;
* **sampling and estimation** -- :meth:`~FrequencyOracle.perturb` (client side, vectorised over
  users, with an explicit :class:`numpy.random.Generator`), :meth:`~FrequencyOracle.aggregate`
  (server side support counts), :meth:`~FrequencyOracle.estimate` (unbiased counts),
  :meth:`~FrequencyOracle.variance` (exact variance of the estimator as a function of the true
  counts) and :meth:`~FrequencyOracle.simulate` (draw the estimator
  straight from the true counts, without materialising reports).

Most oracles in the papers are *pure* protocols (Wang et al., USENIX Security 2017): each
report supports a set of items, item ``i`` is supported with probability ``p_i`` when the
user holds ``i`` and ``q_i`` otherwise, and the unbiased count estimator is
``(C_i - n q_i) / (p_i - q_i)`` with variance
``[c_i p_i (1-p_i) + (n - c_i) q_i (1-q_i)] / (p_i - q_i)^2``
(derived in the Foundations chapter, :prf:ref:`thm-pure-variance`).
:class:`SupportOracle` implements that once for all of them.
"""

from __future__ import annotations

import abc
import math
from typing import Any, Generic, Protocol, TypeVar, cast, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike, as_generator
from ._validation import (MAX_USERS, ArgumentTypeError, check_counts, check_items, check_positive_int, check_probabilities,
                          check_real_counts)
from .accountant import Guarantee
from .channels import Channel
from .mechanism import Mechanism
from .reports import ItemReports, Provenance, check_source, report_row
from .sets import ItemSetsLike

__all__ = [
    "ComparedByConfiguration",
    "FrequencyOracle",
    "ItemReportOracle",
    "ReportT",
    "SetValuedMechanism",
    "SupportOracle",
    "item_report_mle",
    "pure_estimate",
    "pure_variance",
]


#: the type of a mechanism's reports (``ItemReports``, ``UnaryReports``, ``HashedReports``, ...)
ReportT = TypeVar("ReportT")


class ComparedByConfiguration(abc.ABC):
    """Equality and hashing by :meth:`configuration`: two mechanisms configured alike are equal."""

    @abc.abstractmethod
    def configuration(self) -> tuple[object, ...]:
        """Everything that defines the mechanism (class, parameters, declared guarantees), hashable."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ComparedByConfiguration):
            return NotImplemented
        return self.configuration() == other.configuration()

    def __hash__(self) -> int:
        return hash(self.configuration())


class FrequencyOracle(ComparedByConfiguration, Generic[ReportT]):
    """Abstract frequency oracle over the item domain ``{0, ..., d-1}``, generic over its report type.

    Estimates are *counts* (the papers' ``c_i``); divide by ``n`` for frequencies.
    ``FrequencyOracle[UnaryReports]`` is an oracle whose :meth:`perturb` returns
    :class:`~ldpkit.unary.UnaryReports` and whose :meth:`aggregate` reads them.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit import GRR
    >>> oracle = GRR(4, epsilon=1.0)                 # every frequency oracle has this interface
    >>> reports = oracle.perturb(np.repeat([0, 1, 2, 3], [50, 30, 15, 5]), rng=0)
    >>> est = oracle.estimate(reports)               # unbiased counts
    >>> est.shape, round(float(est.sum()))
    ((4,), 100)
    >>> [round(float(v), 1) for v in oracle.variance([50, 30, 15, 5])]   # exact Var[c_hat_i]
    [218.0, 194.7, 177.3, 165.6]
    >>> oracle.simulate([50, 30, 15, 5], rng=0, trials=3).shape          # without reports
    (3, 4)
    """

    #: whether :meth:`~ldpkit.base.FrequencyOracle.simulate` samples the estimator's exact joint
    #: distribution from aggregate counts (``True``) or falls back to per-user simulation (``False``).
    aggregate_simulation_exact: bool = True

    def __init__(self, d: int) -> None:
        self.d = d

    # ------------------------------------------------------------------ accounting
    #: The standard-LDP budget given to the constructor, or ``math.inf`` when the family
    #: declares none.  A family built for another notion names its budget after that notion
    #: (``fldp_epsilon``, ``uldp_epsilon``, ``budgets``, ...); every budget is a plain
    #: attribute set from the constructor's argument, never computed from the channel, so
    #: that :func:`ldpkit.accountant.verify` checks a claim the channel could fail.
    epsilon: float = math.inf

    @abc.abstractmethod
    def channel(self) -> Channel:
        """Exact conditional output distribution, for the accountant."""

    def guarantees(self) -> list[Guarantee]:
        """The privacy guarantees this mechanism declares, as data.

        :func:`ldpkit.accountant.verify` checks each one against :meth:`channel`.  The
        default declares standard LDP at :attr:`~ldpkit.base.FrequencyOracle.epsilon` (the constructor's budget) when it is
        finite; mechanisms built for another notion (ID-LDP, ULDP, ...) override this.
        """
        eps = self.epsilon
        return [Guarantee("ldp", epsilon=eps)] if math.isfinite(eps) else []

    # ------------------------------------------------------------------ sampling
    @abc.abstractmethod
    def perturb(self, items: ArrayLike, rng: RNGLike = None) -> ReportT:
        """Client side: one randomised report per user (vectorised)."""

    def perturb_item(self, item: int, rng: RNGLike = None) -> Any:
        """One user's report of ``item``, as a plain value.

        An ``int`` for single-item reports (GRR, HR, uRR, IPRR, channel oracles), a boolean
        vector of ``d`` bits for unary encodings, ``(seed, bucket)`` for OLH and ``(plus, minus)``
        for FHR.  For many users call :meth:`perturb`, which is vectorised.

        Examples
        --------
        >>> from ldpkit import GRR, OLH
        >>> GRR(4, 1.0).perturb_item(2, rng=0) in range(4)
        True
        >>> len(OLH(10, 1.0).perturb_item(3, rng=0))
        2
        """
        if isinstance(item, bool) or not isinstance(item, (int, np.integer)):
            raise ArgumentTypeError(f"item must be one item index in 0..{self.d - 1}, got {item!r}; "
                                    "use perturb for many users")
        return report_row(self.perturb(check_items([item], self.d, "item"), rng), 0)

    @abc.abstractmethod
    def aggregate(self, reports: ReportT) -> np.ndarray:
        """Server side: support count of every item (length ``d``)."""

    @abc.abstractmethod
    def n_reports(self, reports: ReportT) -> int:
        """Number of users behind ``reports``."""

    @abc.abstractmethod
    def estimate_from_support(self, support: np.ndarray, n: int) -> np.ndarray:
        """Unbiased count estimates from support counts of ``n`` users."""

    @abc.abstractmethod
    def variance(self, counts: ArrayLike) -> np.ndarray:
        """Exact variance of each count estimate given the true count vector."""

    # ------------------------------------------------------------------ provenance
    def report_parameters(self) -> dict[str, object]:
        """The parameters the meaning of this mechanism's reports depends on (for :attr:`provenance`).

        The default is ``d`` and :attr:`~ldpkit.base.FrequencyOracle.epsilon`; mechanisms with more configuration
        (probability vectors, hash range, sensitive set, ...) extend it.
        """
        return {"d": self.d, "epsilon": self.epsilon}

    @property
    def provenance(self) -> Provenance:
        """What :meth:`perturb` stamps on its reports and :meth:`aggregate` requires of them."""
        return Provenance(type(self).__name__, tuple(self.report_parameters().items()))

    # ------------------------------------------------------------------ recipe (report files)
    def arguments(self) -> dict[str, Any]:
        """The keyword arguments that rebuild this mechanism with :meth:`from_arguments`.

        Report files and aggregator states store them (:func:`ldpkit.reportio.mechanism_config`),
        so that reports can be estimated from the file alone; the rebuilt mechanism must have the
        same :attr:`provenance`, which loading checks.  Values are numbers, strings, arrays,
        nested mechanisms and plain lists and dicts of these.  A family that cannot be rebuilt
        raises ``NotImplementedError`` (the default), and its reports are then saved only with
        the mechanism given again when they are loaded.
        """
        raise NotImplementedError(f"{type(self).__name__} does not state the arguments that rebuild it")

    @classmethod
    def from_arguments(cls, arguments: dict[str, Any]) -> FrequencyOracle[Any]:
        """Rebuild a mechanism from :meth:`arguments` (the default calls the constructor with them)."""
        return cls(**arguments)

    # ------------------------------------------------------------------ identity
    def configuration(self) -> tuple[object, ...]:
        """Everything that defines the mechanism: its class, its report parameters and its declared guarantees.

        Two mechanisms are equal (and hash alike) exactly when their configurations are.

        Examples
        --------
        >>> from ldpkit import GRR, OUE
        >>> GRR(4, 1.0) == GRR(4, 1.0), GRR(4, 1.0) == GRR(4, 2.0), GRR(4, 1.0) == OUE(4, 1.0)
        (True, False, False)
        >>> len({GRR(4, 1.0), GRR(4, 1.0), OUE(4, 1.0)})
        2
        """
        return (type(self), self.provenance, tuple(g.key() for g in self.guarantees()))

    # ------------------------------------------------------------------ sampling <-> accounting
    def output_index(self, reports: ReportT) -> np.ndarray:
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
        size = check_positive_int(size, "size", maximum=MAX_USERS)
        return self.output_index(self.perturb(np.full(size, x, dtype=np.int64), rng))

    @abc.abstractmethod
    def _simulate_support(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Draw support counts directly from the true counts (one trial)."""

    # ------------------------------------------------------------------ shared API
    def estimate(self, reports: ReportT) -> np.ndarray:
        """Unbiased estimated counts from the users' reports."""
        return self.estimate_from_support(self.aggregate(reports), self.n_reports(reports))

    def estimate_items(self, items: ArrayLike, rng: RNGLike = None) -> np.ndarray:
        """Perturb ``items`` on the client side, then aggregate and estimate (per-user path)."""
        items = check_items(items, self.d)
        return self.estimate(self.perturb(items, rng))

    def simulate(self, counts: ArrayLike, rng: RNGLike = None, trials: int | None = None) -> np.ndarray:
        """Sample the estimator's distribution from the true counts.

        Returns shape ``(d,)`` for ``trials=None`` and ``(trials, d)`` otherwise. Exact in
        distribution when :attr:`aggregate_simulation_exact` is true; otherwise each trial
        expands the counts into users and runs the per-user path.
        """
        counts = check_counts(counts, self.d)
        n = int(counts.sum())
        support = self.simulate_support(counts, rng, trials)
        if trials is None:
            return self.estimate_from_support(support, n)
        return np.stack([self.estimate_from_support(row, n) for row in support])

    def simulate_support(self, counts: ArrayLike, rng: RNGLike = None, trials: int | None = None) -> np.ndarray:
        """Sample the support counts (what :meth:`aggregate` returns) from the true counts.

        For estimators other than the unbiased one (maximum likelihood, Norm-Sub of the
        support) that need the aggregate rather than the estimate.  Shapes and exactness as
        in :meth:`simulate`, which is :meth:`estimate_from_support` applied to these.
        """
        counts = check_counts(counts, self.d)
        if trials is not None:
            trials = check_positive_int(trials, "trials", maximum=MAX_USERS)
        gen = as_generator(rng)
        if trials is None:
            return self._simulate_support(counts, gen)
        return np.stack([self._simulate_support(counts, gen) for _ in range(trials)])

    def variance_at(self, counts: ArrayLike) -> np.ndarray:
        """:meth:`variance` at real-valued counts (non-negative, not all zero), by linearity.

        Every variance in ldpkit is a sum over users, so it is linear in the counts:
        ``Var_i(c) = sum_x c_x Var_i(e_x)`` with ``e_x`` one user holding ``x``.  The default
        evaluates that sum (``d`` calls of :meth:`variance`, for ``d <= 4096``); families with a
        closed form override it.  Used by :meth:`variance_estimate`.
        """
        c = check_real_counts(counts, self.d)
        if self.d > 4096:
            raise ValueError(f"variance at real counts needs a closed form for d={self.d} > 4096")
        per_user = np.stack([self.variance(np.eye(1, self.d, x, dtype=np.int64)[0]) for x in range(self.d)])
        return cast("np.ndarray", c @ per_user)

    def variance_estimate(self, support: ArrayLike, n: int) -> np.ndarray:
        """Plug-in estimate of :meth:`variance` from the aggregate of ``n`` users' reports.

        The exact variance is evaluated at the counts of the estimate projected onto
        ``{c >= 0, sum c = n}`` (Norm-Sub, :func:`ldpkit.postprocess.norm_sub`), the nearest
        count vector the population could have.  Derived and checked for coverage in the
        tutorial chapter (:ref:`sec-tutorial-uncertainty`).
        """
        from .postprocess import norm_sub

        est = self.estimate_from_support(np.asarray(support), n)
        return self.variance_at(norm_sub(est, float(n)))

    def mse(self, counts: ArrayLike) -> float:
        """Exact total MSE ``sum_i Var(c_hat_i)`` of the unbiased estimator (counts scale)."""
        return float(np.sum(self.variance(counts)))

    def __repr__(self) -> str:
        eps = self.epsilon
        eps_s = "inf" if math.isinf(eps) else f"{eps:.6g}"
        return f"{type(self).__name__}(d={self.d}, epsilon={eps_s})"


def _support_probabilities(p: ArrayLike, q: ArrayLike, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Validated ``(p, q)`` of a pure protocol, scalars broadcast to length ``d``, with ``p != q``."""
    pa = np.broadcast_to(check_probabilities(p, "p"), (d,)) if np.ndim(p) == 0 else check_probabilities(p, "p", (d,))
    qa = np.broadcast_to(check_probabilities(q, "q"), (d,)) if np.ndim(q) == 0 else check_probabilities(q, "q", (d,))
    same = pa == qa
    if np.any(same):
        k = int(np.flatnonzero(same)[0])
        raise ValueError(f"p and q must differ (the estimator divides by p - q); equal at item {k}: {float(pa[k])!r}")
    return pa, qa


def check_support(support: ArrayLike, d: int, n: int) -> np.ndarray:
    """Support counts of ``n <= MAX_USERS`` users: ``d`` non-negative integers, none above ``n``.

    Their total is not limited: one user supports several items (unary encodings, OLH).
    """
    n = check_positive_int(n, "n", maximum=MAX_USERS)
    arr = check_counts(support, d, "support", allow_zero_total=True, limit_total=False)
    if arr.size and int(arr.max()) > n:
        raise ValueError(f"support count {int(arr.max())} exceeds the number of users n={n}")
    return arr


def check_integer_support(support: ArrayLike, d: int, n: int, what: str) -> tuple[np.ndarray, int]:
    """An aggregate of ``n <= MAX_USERS`` users that is ``d`` integers of any sign (``what`` says which), and ``n``.

    For the oracles whose aggregate is not a support count (FHR's net supports, SHE's summed grid
    indices); :func:`check_support` checks support counts.
    """
    n = check_positive_int(n, "n", maximum=MAX_USERS)
    arr = np.asarray(support)
    if arr.ndim != 1 or arr.size != d:
        raise ValueError(f"support must be a 1-d array of length d={d}, got shape {arr.shape}")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ArgumentTypeError(f"support must hold integers ({what}), got dtype {arr.dtype}")
    return arr, n


def pure_estimate(support: ArrayLike, n: int, p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """``(C - n q) / (p - q)``, the unbiased estimator of a pure protocol (validated inputs).

    Examples
    --------
    >>> from ldpkit import pure_estimate
    >>> pure_estimate([30, 10], 40, 0.75, 0.25).tolist()
    [40.0, 0.0]
    """
    sup = np.asarray(support)
    d = sup.shape[0] if sup.ndim == 1 else -1
    if d < 1:
        raise ValueError(f"support must be a 1-d array of counts, got shape {sup.shape}")
    pa, qa = _support_probabilities(p, q, d)
    c = check_support(support, d, n)
    return cast("np.ndarray", (c.astype(float) - n * qa) / (pa - qa))


def _variance_formula(c: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    n = c.sum()
    return cast("np.ndarray", (c * p * (1 - p) + (n - c) * q * (1 - q)) / (p - q) ** 2)


def pure_variance(counts: ArrayLike, p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """Exact ``Var`` of the pure estimator: ``[c p(1-p) + (n-c) q(1-q)] / (p-q)^2`` (validated inputs).

    ``counts`` may be fractional (the formula is linear in them, which Padding-and-Sampling
    uses for expected counts); they must be finite, non-negative and not all zero.
    """
    c = check_real_counts(counts)
    pa, qa = _support_probabilities(p, q, c.size)
    return _variance_formula(c, pa, qa)


@runtime_checkable
class SetValuedMechanism(Mechanism, Protocol[ReportT]):
    """A mechanism whose users hold item *sets* (Padding-and-Sampling, IDUE-PS): what the contract uses.

    A :class:`~ldpkit.mechanism.Mechanism` whose reports come from item sets, with the exact moments
    the contract checks.

    Its channel's rows are the subsets of a small domain (:func:`ldpkit.sets.all_itemsets`);
    ``perturb`` and ``estimate`` work on reports of type ``ReportT``, and the exact
    moments are functions of the users' sets.  :class:`~ldpkit.padding.PaddingSampling`
    implements it; :func:`ldpkit.testing.check_contract` dispatches on it.

    Examples
    --------
    >>> from ldpkit import GRR
    >>> from ldpkit.base import SetValuedMechanism
    >>> from ldpkit.idue import oue_ps
    >>> isinstance(oue_ps(3, 1.0, 2), SetValuedMechanism), isinstance(GRR(3, 1.0), SetValuedMechanism)
    (True, False)
    """

    d: int
    ell: int

    def channel(self) -> Channel: ...

    def guarantees(self) -> list[Guarantee]: ...

    def perturb(self, itemsets: ItemSetsLike, rng: RNGLike = None) -> ReportT: ...

    def estimate(self, reports: ReportT) -> np.ndarray: ...

    def expected_counts(self, itemsets: ItemSetsLike) -> np.ndarray: ...

    def variance(self, itemsets: ItemSetsLike) -> np.ndarray: ...

    def simulate(self, itemsets: ItemSetsLike, rng: RNGLike = None, trials: int | None = None) -> np.ndarray: ...

    def sample_outputs(self, x: int, size: int, rng: RNGLike = None) -> np.ndarray: ...


class SupportOracle(FrequencyOracle[ReportT]):
    """A pure protocol with per-item support probabilities ``p_support``, ``q_support``.

    Subclasses set :attr:`p_support` and :attr:`q_support` (arrays of length ``d``) and
    implement sampling; estimation and variance come from here.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit import OUE
    >>> from ldpkit.base import SupportOracle
    >>> oue = OUE(4, 1.0)
    >>> isinstance(oue, SupportOracle), float(oue.p_support[0]), round(float(oue.q_support[0]), 4)
    (True, 0.5, 0.2689)
    >>> [round(float(c), 1) for c in oue.estimate_from_support(np.array([40, 30, 35, 27]), n=100)]
    [56.7, 13.4, 35.1, 0.5]
    """

    #: probability ``p_i`` that item ``i`` is supported when the user holds ``i`` (length ``d``)
    p_support: np.ndarray
    #: probability ``q_i`` that item ``i`` is supported when the user holds another item (length ``d``)
    q_support: np.ndarray

    def estimate_from_support(self, support: ArrayLike, n: int) -> np.ndarray:
        c = check_support(support, self.d, n)
        return cast("np.ndarray", (c.astype(float) - n * self.q_support) / (self.p_support - self.q_support))

    def variance(self, counts: ArrayLike) -> np.ndarray:
        return _variance_formula(check_counts(counts, self.d).astype(float), self.p_support, self.q_support)

    def variance_at(self, counts: ArrayLike) -> np.ndarray:
        """The variance formula at real-valued counts (it is affine in them)."""
        return _variance_formula(check_real_counts(counts, self.d), self.p_support, self.q_support)


def item_report_mle(output_counts: ArrayLike, p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """Exact maximum-likelihood input distribution for a pure protocol whose reports are items.

    A user holding ``x`` reports ``y`` with probability ``p_y`` if ``y = x`` and ``q_y``
    otherwise (GRR, uRR, IPRR), so reports are i.i.d. with probabilities
    ``m_y = q_y + (p_y - q_y) f_y`` for input distribution ``f``.  The log-likelihood
    ``sum_y n_y log m_y`` is separable and concave in ``f`` on the simplex; its KKT
    conditions give ``f_y = max(0, n_y / lam - c_y)`` with ``c_y = q_y / (p_y - q_y)`` and
    ``lam`` fixed by ``sum f = 1`` (water-filling), found exactly by sorting in
    ``O(d log d)``.  Derived and checked against EM in the IPLDP chapter
    (:ref:`sec-ipldp-mle`).

    Parameters
    ----------
    output_counts
        Report counts ``n_y`` (non-negative integers, not all zero).
    p, q
        Per-item probabilities of reporting ``y`` when holding ``y`` and when holding another
        item, ``0 <= q_y < p_y <= 1``.

    Examples
    --------
    >>> from ldpkit.base import item_report_mle
    >>> item_report_mle([60, 40, 0], [2/3] * 3, [1/6] * 3).round(4).tolist()   # GRR-like
    [0.6667, 0.3333, 0.0]
    """
    m = check_counts(output_counts, name="output_counts").astype(float)
    pv, qv = _support_probabilities(p, q, m.size)
    if np.any(pv < qv):
        k = int(np.flatnonzero(pv < qv)[0])
        raise ValueError(f"item_report_mle needs p > q for every item; p < q at item {k}")
    n = m.sum()
    c = qv / (pv - qv)
    # f_y(lam) = max(0, n_y/lam - c_y) decreases in lam, so sum_y f_y(lam) = 1 has one root.
    # Items never reported get f_y = 0; sort the others by their breakpoint n_y / c_y.
    pos = m > 0
    if not np.any(c[pos] > 0):
        return cast("np.ndarray", m / n)
    with np.errstate(divide="ignore"):
        brk = np.where(c > 0, m / np.where(c > 0, c, 1.0), np.inf)
    idx = np.flatnonzero(pos)[np.argsort(-brk[pos], kind="stable")]
    # with the first j items active, lam = N_j / (1 + C_j); valid while below their breakpoints
    lam_j = np.cumsum(m[idx]) / (1.0 + np.cumsum(c[idx]))
    valid = lam_j < brk[idx] * (1 + 1e-15)
    lam = lam_j[int(np.flatnonzero(valid)[-1]) if np.any(valid) else 0]
    f = np.maximum(0.0, m / lam - c)
    f[~pos] = 0.0
    return cast("np.ndarray", f / f.sum())


class ItemReportOracle(SupportOracle[ItemReports]):
    """A pure protocol whose report is a single item (GRR, uRR): support = the reported item.

    Examples
    --------
    >>> from ldpkit import GRR
    >>> GRR(3, 1.0).aggregate([0, 2, 2, 1]).tolist()   # a report supports the item it names
    [1, 1, 2]
    """

    def aggregate(self, reports: ArrayLike) -> np.ndarray:
        check_source(reports, self.provenance)
        items = check_items(reports, self.d, "reports")
        return np.bincount(items, minlength=self.d)

    def n_reports(self, reports: ArrayLike) -> int:
        return int(np.asarray(reports).size)

    def output_index(self, reports: ArrayLike) -> np.ndarray:
        """Reports are items, and the channel's outputs are the items in index order."""
        return check_items(reports, self.d, "reports")

    def mle(self, output_counts: ArrayLike) -> np.ndarray:
        """Exact maximum-likelihood input distribution from report counts (:func:`item_report_mle`).

        ``output_counts`` are the counts of :meth:`aggregate` (or of :meth:`~ldpkit.base.FrequencyOracle.simulate_support`).
        """
        return item_report_mle(output_counts, self.p_support, self.q_support)
