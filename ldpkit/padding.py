"""Padding-and-Sampling (PS): item-set input on top of any single-item frequency oracle.

Wang, Li and Jha (IEEE S&P 2018, :cite:`wang2018locally`) let each user hold a *set* of items
``v`` drawn from ``{0, ..., d-1}``.  The user pads ``v`` with dummy items ``d, ..., d+ell-1`` up
to length ``ell`` (or keeps ``ell`` of its items at random when ``|v| > ell``), samples one
element of the padded set uniformly, and reports it through a single-item oracle over the
``d + ell`` items.  The server multiplies the inner estimates of the real items by ``ell``.
Derived in the ID-LDP chapter (:prf:ref:`alg-ps`, :prf:ref:`thm-ps-bias` and :prf:ref:`thm-ps-variance`).

Sampling probabilities.  With ``L_u = max(|v_u|, ell)``, user ``u`` samples each of its items
with probability ``pi_ui = 1/L_u`` and dummy ``d + j`` with probability
``(1 - |v_u|/L_u) / ell`` (the dummies are a uniform subset, so by symmetry each is equally
likely).  The sampled item is therefore drawn from one uniform position ``r`` in
``{0, ..., L_u - 1}`` (vectorised over users): ``r < |v_u|`` picks the ``r``-th item of
``v_u``, otherwise the user reports a uniform dummy.

Empty sets.  An empty set is allowed: the user is padded with ``ell`` dummies and reports a
uniform dummy.  It counts as a user (it enters ``n`` in the inner estimator) but never
supports a real item, which is the right behaviour for users who hold nothing.

Every item-set argument is validated by :func:`ldpkit.sets.as_itemsets`: users' item sets in any
form of :class:`~ldpkit.sets.ItemSetsLike`, stored as :class:`~ldpkit.sets.ItemSets`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Generic, Optional, cast

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike, as_generator
from ._validation import MAX_USERS, ArgumentTypeError, check_domain_size, check_positive_int, describe
from .accountant import Guarantee
from .base import ComparedByConfiguration, FrequencyOracle, ReportT, SupportOracle, pure_variance
from .channels import ExplicitChannel
from .reports import Provenance, check_source, source_of, with_source
from .sets import ItemSets, ItemSetsLike, all_itemsets, as_itemsets

__all__ = ["PaddingSampling"]

#: largest padded domain for which a non-pure inner oracle's variance is linearised
MAX_GENERIC_VARIANCE_D = 4096


class PaddingSampling(ComparedByConfiguration, Generic[ReportT]):
    """Padding-and-Sampling around a single-item frequency oracle.

    Parameters
    ----------
    base_factory
        Callable ``k -> FrequencyOracle`` building the inner oracle over ``k`` items; it is
        called once with ``k = d + ell`` (items ``d .. d+ell-1`` are the dummies).  Example:
        ``PaddingSampling(lambda k: OUE(k, 1.0), d, ell)``.
    d
        Number of real items (``>= 1``).
    ell
        Padding length (``>= 1``).

    Notes
    -----
    The estimator ``ell * inner_estimate_i`` is unbiased for
    :meth:`expected_counts` ``= ell * sum_u pi_ui``, which equals the true count of item ``i``
    when every user holds at most ``ell`` items.  Users with ``|v_u| > ell`` contribute
    ``ell/|v_u| < 1`` in expectation, so the estimator is then biased downwards by
    ``sum_{u holds i} (1 - ell/|v_u|)`` (ID-LDP chapter, :prf:ref:`thm-ps-bias`).

    Examples
    --------
    >>> from ldpkit import OUE, PaddingSampling
    >>> ps = PaddingSampling(lambda k: OUE(k, 1.0), d=4, ell=2)
    >>> ps.inner
    OUE(d=6, epsilon=1)
    >>> ps.expected_counts([[0, 1, 2]]).round(4).tolist()    # |v| = 3 > ell: biased by 1 - 2/3
    [0.6667, 0.6667, 0.6667, 0.0]
    >>> ps.simulate([[0, 2], [1], [0, 1, 3]] * 100, rng=0).shape
    (4,)
    """

    def __init__(self, base_factory: Callable[[int], FrequencyOracle[ReportT]], d: int, ell: int) -> None:
        if not callable(base_factory):
            raise ArgumentTypeError(f"base_factory must be callable k -> FrequencyOracle, got {base_factory!r}")
        d = check_domain_size(d, minimum=1)
        ell = check_positive_int(ell, "ell", maximum=MAX_USERS - d)
        inner = base_factory(d + ell)
        if not isinstance(inner, FrequencyOracle):
            raise ArgumentTypeError(
                f"base_factory({d + ell}) must return a FrequencyOracle, got {type(inner).__name__}"
            )
        if inner.d != d + ell:
            raise ValueError(f"base_factory({d + ell}) returned an oracle over d={inner.d} items, expected {d + ell}")
        self.d = d
        self.ell = ell
        self.inner: FrequencyOracle[ReportT] = inner
        #: the standard-LDP budget declared by the inner oracle; PS never increases it (see :meth:`channel`)
        self.epsilon = inner.epsilon

    def __repr__(self) -> str:
        return f"PaddingSampling(d={self.d}, ell={self.ell}, inner={self.inner!r})"

    def arguments(self) -> dict[str, Any]:
        """``d``, ``ell`` and the inner oracle over ``d + ell`` items (rebuilt by :meth:`from_arguments`)."""
        return {"inner": self.inner, "d": self.d, "ell": self.ell}

    @classmethod
    def from_arguments(cls, arguments: dict[str, Any]) -> PaddingSampling[Any]:
        """Rebuild from :meth:`arguments`: the stored inner oracle is the factory's only product."""
        args = dict(arguments)
        inner = args.pop("inner")
        return cls(lambda k: inner, **args)

    def n_reports(self, reports: ReportT) -> int:
        """Number of users behind ``reports`` (one report each)."""
        return self.inner.n_reports(self._to_inner(reports))

    def estimate_from_support(self, support: ArrayLike, n: int) -> np.ndarray:
        """``ell`` times the inner estimate of the real items, from :meth:`aggregate`'s counts of ``n`` users."""
        return self.ell * self.inner.estimate_from_support(np.asarray(support), n)[: self.d]

    def variance_estimate(self, support: ArrayLike, n: int) -> np.ndarray:
        """Plug-in estimate of the estimator's variance from the aggregate of ``n`` users' reports.

        With users drawn independently from a population, each user's sampled item is an
        independent draw with probabilities ``pi = E[S] / n`` over the padded domain, so by the
        law of total variance ``Var = ell^2 [Var_inner(E S) + n pi (1 - pi)]`` (for fixed users
        the second term is an upper bound, by concavity).  ``E S`` is estimated by the inner
        estimate projected onto ``{S >= 0, sum S = n}`` (tutorial chapter,
        :ref:`sec-tutorial-uncertainty`).
        """
        from .postprocess import norm_sub

        s = norm_sub(self.inner.estimate_from_support(np.asarray(support), n), float(n))
        var = self.inner.variance_at(s) + s * (1.0 - s / float(n))
        return self.ell**2 * var[: self.d]

    def configuration(self) -> tuple[object, ...]:
        """The class, ``d``, ``ell``, the inner oracle's configuration and the declared guarantees (equality, hashing)."""
        return (type(self), self.d, self.ell, self.inner.configuration(), tuple(g.key() for g in self.guarantees()))

    def guarantees(self) -> list[Guarantee]:
        """Standard LDP at the inner oracle's budget, for item-set inputs (when finite).

        Each row of :meth:`channel` mixes rows of the inner channel, and a ratio of two
        mixtures never exceeds the largest ratio of their components.
        """
        eps = self.epsilon
        return [Guarantee("ldp", epsilon=eps)] if math.isfinite(eps) else []

    # ------------------------------------------------------------------ sampling probabilities
    def _caps(self, sets: ItemSets) -> np.ndarray:
        return cast("np.ndarray", np.maximum(sets.sizes, self.ell))

    def sampling_probabilities(self, itemsets: ItemSetsLike) -> np.ndarray:
        """Matrix ``(n, d + ell)``: probability that user ``u`` samples each padded item.

        Only for small inputs (accounting and tests); the estimators use the sparse form.
        """
        sets = as_itemsets(itemsets, self.d)
        n = len(sets)
        caps = self._caps(sets)
        out = np.zeros((n, self.d + self.ell))
        out[:, self.d :] = ((1.0 - sets.sizes / caps) / self.ell)[:, None]
        out[sets.users, sets.indices] = 1.0 / caps[sets.users]
        return out

    def expected_counts(self, itemsets: ItemSetsLike) -> np.ndarray:
        """``ell * sum_u pi_ui`` for the real items: what the estimator is unbiased for.

        Equals the true counts when every ``|v_u| <= ell`` (ID-LDP chapter,
        :prf:ref:`thm-ps-bias`).
        """
        sets = as_itemsets(itemsets, self.d)
        w = 1.0 / self._caps(sets)[sets.users]
        return self.ell * np.bincount(sets.indices, weights=w, minlength=self.d)

    def _sampled_moments(self, sets: ItemSets) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance of the sampled counts ``S_j`` over the padded domain."""
        caps = self._caps(sets)
        pi = 1.0 / caps[sets.users]
        mean = np.zeros(self.d + self.ell)
        var = np.zeros(self.d + self.ell)
        mean[: self.d] = np.bincount(sets.indices, weights=pi, minlength=self.d)
        var[: self.d] = np.bincount(sets.indices, weights=pi * (1 - pi), minlength=self.d)
        dummy = (1.0 - sets.sizes / caps) / self.ell  # per user, each dummy
        mean[self.d :] = dummy.sum()
        var[self.d :] = (dummy * (1 - dummy)).sum()
        return mean, var

    def _inner_variance(self, mean_counts: np.ndarray) -> np.ndarray:
        """Inner estimator variance at fractional counts, by linearity in the counts.

        For a pure inner oracle the variance formula is affine in ``c`` for fixed ``n`` and is
        evaluated directly.  Otherwise the per-user contribution of an item-``j`` holder is
        ``variance(e_j)`` (one user), and users are independent, so
        ``Var_i(c) = sum_j c_j variance(e_j)_i``.
        """
        inner = self.inner
        if isinstance(inner, SupportOracle):
            return pure_variance(mean_counts, inner.p_support, inner.q_support)
        k = inner.d
        if k > MAX_GENERIC_VARIANCE_D:
            raise ValueError(f"variance for a non-pure inner oracle needs d + ell <= {MAX_GENERIC_VARIANCE_D}, got {k}")
        per_user = np.stack([inner.variance(np.eye(1, k, j, dtype=np.int64)[0]) for j in range(k)])
        return cast("np.ndarray", mean_counts @ per_user)

    def variance(self, itemsets: ItemSetsLike) -> np.ndarray:
        """Exact variance of the scaled estimator ``ell * inner_estimate_i`` (real items).

        Law of total variance over the sampled counts ``S``:
        ``Var = ell^2 [ E Var_inner(S)_i + Var(S_i) ]`` with
        ``Var(S_i) = sum_u pi_ui (1 - pi_ui)``; the inner variance is linear in ``S`` (for
        fixed ``n``), so ``E Var_inner(S) = Var_inner(E S)`` (ID-LDP chapter,
        :prf:ref:`thm-ps-variance`).
        """
        sets = as_itemsets(itemsets, self.d)
        mean, var_s = self._sampled_moments(sets)
        v_inner = self._inner_variance(mean)
        return cast("np.ndarray", self.ell**2 * (v_inner[: self.d] + var_s[: self.d]))

    def mse(self, itemsets: ItemSetsLike) -> float:
        """Total MSE against the true counts: ``sum_i [Var_i + bias_i^2]``."""
        sets = as_itemsets(itemsets, self.d)
        bias = self.expected_counts(sets) - sets.true_counts()
        return float(np.sum(self.variance(sets)) + np.sum(bias**2))

    # ------------------------------------------------------------------ client and server
    def sample(self, itemsets: ItemSetsLike, rng: RNGLike = None) -> np.ndarray:
        """Pad and sample: one item of the padded domain ``range(d + ell)`` per user."""
        sets = as_itemsets(itemsets, self.d)
        return self._sample(sets, as_generator(rng))

    def sampled_counts(self, itemsets: ItemSetsLike, rng: RNGLike = None, trials: int | None = None) -> np.ndarray:
        """Counts of the sampled items over the padded domain, without perturbation.

        Shape ``(d + ell,)`` or ``(trials, d + ell)``.  The item sets are validated once for all
        trials, so experiments that reuse one sample for several inner oracles (the sampling does
        not depend on the budget) pay for validation and sampling only once.  Feeding row ``t`` to
        ``inner.simulate`` and multiplying by ``ell`` gives the same distribution as
        :meth:`simulate`.
        """
        sets = as_itemsets(itemsets, self.d)
        if trials is not None:
            trials = check_positive_int(trials, "trials", maximum=MAX_USERS)
        gen = as_generator(rng)
        k = self.d + self.ell
        reps = 1 if trials is None else trials
        out = np.empty((reps, k), dtype=np.int64)
        for t in range(reps):
            out[t] = np.bincount(self._sample(sets, gen), minlength=k)
        return out[0] if trials is None else out

    def _sample(self, sets: ItemSets, gen: np.random.Generator) -> np.ndarray:
        sizes = sets.sizes
        caps = self._caps(sets)
        r = gen.integers(0, caps)  # uniform position in the padded set of length max(|v|, ell)
        real = r < sizes
        out = self.d + gen.integers(0, self.ell, size=len(sets))  # uniform dummy
        out[real] = sets.indices[sets.offsets[:-1][real] + r[real]]
        return out

    def sample_outputs(self, x: int, size: int, rng: RNGLike = None) -> np.ndarray:
        """``size`` outputs of item set number ``x`` of :func:`~ldpkit.sets.all_itemsets` (as columns of
        :meth:`channel`).

        Rows of the default :meth:`channel` are the subsets of ``range(d)`` in the order of
        :func:`~ldpkit.sets.all_itemsets`; the reports are mapped by the inner oracle's ``output_index``.
        """
        sets = all_itemsets(self.d)
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
            raise ArgumentTypeError(f"x must be the index of an item set in 0..{len(sets) - 1}, got {describe(x)}")
        if not 0 <= int(x) < len(sets):
            raise ValueError(f"x must be the index of an item set in 0..{len(sets) - 1}, got {describe(x)}")
        size = check_positive_int(size, "size", maximum=MAX_USERS)
        return self.inner.output_index(self.perturb([sets[int(x)]] * size, rng))

    @property
    def provenance(self) -> Provenance:
        """``d``, ``ell`` and the inner oracle's provenance: two PS wrappers around the same inner
        oracle over ``d + ell`` items but with another split into real and dummy items differ."""
        return Provenance(type(self).__name__, (("d", self.d), ("ell", self.ell), ("inner", self.inner.provenance)))

    def _to_inner(self, reports: ReportT) -> ReportT:
        check_source(reports, self.provenance)
        if source_of(reports) is None:
            return reports
        out: ReportT = with_source(reports, self.inner.provenance)
        return out

    def perturb(self, itemsets: ItemSetsLike, rng: RNGLike = None) -> ReportT:
        """Client side: pad, sample one item, perturb it with the inner oracle (stamped with this PS's provenance)."""
        sets = as_itemsets(itemsets, self.d)
        gen = as_generator(rng)
        out: ReportT = with_source(self.inner.perturb(self._sample(sets, gen), gen), self.provenance)
        return out

    def aggregate(self, reports: ReportT) -> np.ndarray:
        """Inner support counts over the padded domain (length ``d + ell``)."""
        return self.inner.aggregate(self._to_inner(reports))

    def estimate(self, reports: ReportT) -> np.ndarray:
        """``ell * inner estimate`` of the real items (counts, length ``d``)."""
        return self.ell * self.inner.estimate(self._to_inner(reports))[: self.d]

    def estimate_itemsets(self, itemsets: ItemSetsLike, rng: RNGLike = None) -> np.ndarray:
        """Per-user path: perturb every user's set, then aggregate and estimate."""
        return self.estimate(self.perturb(itemsets, rng))

    def simulate(self, itemsets: ItemSetsLike, rng: RNGLike = None, trials: int | None = None) -> np.ndarray:
        """Sample the estimator: sampled counts per trial, then the inner oracle's ``simulate``.

        Sampling is vectorised over users; the inner oracle then draws its estimate from the
        sampled counts of the padded domain (exactly when its
        ``aggregate_simulation_exact`` is true).  Shape ``(d,)`` or ``(trials, d)``.
        """
        sets = as_itemsets(itemsets, self.d)
        if trials is not None:
            trials = check_positive_int(trials, "trials", maximum=MAX_USERS)
        gen = as_generator(rng)
        reps = 1 if trials is None else trials
        out = np.empty((reps, self.d))
        k = self.d + self.ell
        for t in range(reps):
            counts = np.bincount(self._sample(sets, gen), minlength=k)
            out[t] = self.ell * self.inner.simulate(counts, gen)[: self.d]
        return out[0] if trials is None else out

    # ------------------------------------------------------------------ accounting
    def channel(self, itemsets: Optional[ItemSetsLike] = None) -> ExplicitChannel:
        """Explicit channel whose inputs are item sets: rows mix the inner channel's rows.

        Row ``v`` is ``sum_j P(sample j | v) * inner_row_j``.  A ratio of two mixtures is at
        most the largest ratio of their components, so the epsilon of this channel never
        exceeds the inner channel's.

        Parameters
        ----------
        itemsets
            Candidate item sets (the rows); default every subset of ``range(d)``, the empty
            set included, in order of size then lexicographically (only for
            ``d <= MAX_ENUMERATED_D``).

        Raises
        ------
        ValueError
            When the inner channel is neither explicit nor small enough to enumerate (its
            ``to_explicit`` limits the outputs), or too many sets.
        """
        if itemsets is None:
            itemsets = all_itemsets(self.d)
        sets = as_itemsets(itemsets, self.d)
        inner_ch = self.inner.channel()
        if not isinstance(inner_ch, ExplicitChannel):  # a unary or hashed channel, enumerated when small enough
            try:
                inner_ch = inner_ch.to_explicit()
            except (ValueError, NotImplementedError) as err:
                raise ValueError(f"inner channel {type(inner_ch).__name__} cannot be enumerated: {err}") from None
        weights = self.sampling_probabilities(sets)
        mat = weights @ inner_ch.matrix
        labels = inner_ch.output_labels
        return ExplicitChannel(mat, output_labels=labels)
