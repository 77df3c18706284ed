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
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike, as_generator
from ._validation import MAX_USERS, ArgumentTypeError, check_domain_size, check_positive_int, describe
from .accountant import Guarantee
from .base import FrequencyOracle, SupportOracle, pure_variance
from .channels import ExplicitChannel, UnaryChannel
from .reports import Provenance, check_source, source_of, with_source

__all__ = ["ItemSets", "ItemSetsLike", "PaddingSampling", "all_itemsets", "as_itemsets"]

#: largest real domain for which :meth:`PaddingSampling.channel` enumerates all item sets
MAX_ENUMERATED_D = 10

#: largest padded domain for which a non-pure inner oracle's variance is linearised
MAX_GENERIC_VARIANCE_D = 4096


@dataclass(frozen=True, eq=False)
class ItemSets:
    """Users' item sets in compressed (CSR) form.

    User ``u`` holds ``indices[offsets[u]:offsets[u+1]]`` (distinct items of ``range(d)``).
    Build it with :func:`as_itemsets`, which validates; for many users, constructing
    ``ItemSets(indices, offsets, d)`` directly from int64 arrays skips the per-user
    conversion of Python lists (validation stays vectorised).

    Attributes
    ----------
    indices
        int64 array: the items of every user, one user after the other.
    offsets
        int64 array of length ``n + 1``: user ``u``'s items are ``indices[offsets[u]:offsets[u+1]]``.
    d
        Number of items of the domain.

    Examples
    --------
    >>> from ldpkit.padding import as_itemsets
    >>> sets = as_itemsets([[0, 2], [1], [], [0, 1, 3]], d=4)
    >>> len(sets), sets.sizes.tolist(), sets.true_counts().tolist()
    (4, [2, 1, 0, 3], [2, 2, 1, 1])
    >>> sets.indices.tolist(), sets.offsets.tolist()
    ([0, 2, 1, 0, 1, 3], [0, 2, 3, 3, 6])
    """

    indices: np.ndarray
    offsets: np.ndarray
    d: int

    def __len__(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def sizes(self) -> np.ndarray:
        """``|v_u|`` for every user."""
        return np.diff(self.offsets)

    @property
    def users(self) -> np.ndarray:
        """Owner of each entry of :attr:`indices`."""
        return np.repeat(np.arange(len(self)), self.sizes)

    def true_counts(self) -> np.ndarray:
        """Number of users holding each item (length ``d``)."""
        return np.bincount(self.indices, minlength=self.d)

    def to_lists(self) -> list[list[int]]:
        """Back to a list of Python lists (for small inputs and tests)."""
        return [self.indices[a:b].tolist() for a, b in zip(self.offsets[:-1], self.offsets[1:])]


#: users' item sets as every item-set function accepts them (an :class:`ItemSets`, one entry per
#: user as a list, 1-d array or Python set of distinct items, or a 2-d array with one row per user)
ItemSetsLike = Union[ItemSets, Sequence[Union[ArrayLike, Set[int]]], np.ndarray]


def _validate_csr(indices: np.ndarray, offsets: np.ndarray, d: int) -> None:
    n = offsets.size - 1
    if n < 1:
        raise ValueError("itemsets is empty: at least one user is needed")
    if offsets[0] != 0 or np.any(np.diff(offsets) < 0) or offsets[-1] != indices.size:
        raise ValueError(f"itemsets offsets must start at 0, not decrease and end at {indices.size}")
    if indices.size:
        lo, hi = int(indices.min()), int(indices.max())
        if lo < 0 or hi >= d:
            bad = lo if lo < 0 else hi
            user = int(np.searchsorted(offsets, int(np.flatnonzero(indices == bad)[0]), side="right") - 1)
            raise ValueError(f"itemsets: user {user} holds item {bad}, outside the domain 0..{d - 1}")
        users = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
        key = np.sort(users * np.int64(d) + indices)
        dup = np.flatnonzero(np.diff(key) == 0)
        if dup.size:
            k = int(key[dup[0]])
            raise ValueError(f"itemsets: user {k // d} holds item {k % d} more than once")


def as_itemsets(itemsets: ItemSetsLike, d: int) -> ItemSets:
    """Validate users' item sets and return them as :class:`ItemSets`.

    Parameters
    ----------
    itemsets
        An :class:`ItemSets` over ``d`` items, or a non-empty sequence (one entry per user)
        of 1-d integer arrays, lists or Python sets.  Items must lie in ``range(d)`` and be distinct
        within each set; empty sets are allowed (see the module docstring).
    d
        Number of real items.
    """
    if isinstance(itemsets, ItemSets):
        if itemsets.d != d:
            raise ValueError(f"itemsets are over d={itemsets.d} items, expected d={d}")
        _validate_csr(itemsets.indices, itemsets.offsets, d)
        return itemsets
    if isinstance(itemsets, np.ndarray) and itemsets.dtype != object:
        if itemsets.ndim != 2:
            raise ValueError(f"itemsets must be a sequence of item sets, got an array of shape {itemsets.shape}")
        itemsets = list(itemsets)
    if not isinstance(itemsets, Sequence) and not isinstance(itemsets, np.ndarray):
        raise ArgumentTypeError(f"itemsets must be a sequence of item sets, got {type(itemsets).__name__}")
    if len(itemsets) == 0:
        raise ValueError("itemsets is empty: at least one user is needed")
    parts = []
    for u, v in enumerate(itemsets):
        arr = np.asarray(sorted(v) if isinstance(v, (set, frozenset)) else v)
        if arr.ndim != 1:
            raise ValueError(f"itemsets: user {u} has an item set of shape {arr.shape}, expected 1-d")
        if arr.size and arr.dtype == object and all(
            isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in arr.tolist()
        ):
            arr = np.array([int(x) for x in arr.tolist()], dtype=object)  # Python ints of any size
        elif arr.size and (arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer)):
            floating = np.issubdtype(arr.dtype, np.floating)
            integral = floating and bool(np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)))
            if not integral:
                raise ValueError(f"itemsets: user {u} must hold integer items, got {arr.tolist()!r}"[:200])
        if arr.size and arr.dtype != np.int64:
            # range check on the values as given, before a cast to int64 could wrap or overflow them
            lo, hi = arr.min(), arr.max()
            if lo < 0 or hi >= d:
                bad = lo if lo < 0 else hi
                raise ValueError(f"itemsets: user {u} holds item {describe(bad)}, outside the domain 0..{d - 1}")
        parts.append(arr.astype(np.int64, copy=False))
    sizes = np.fromiter((p.size for p in parts), dtype=np.int64, count=len(parts))
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    indices = np.concatenate(parts) if offsets[-1] else np.zeros(0, dtype=np.int64)
    _validate_csr(indices, offsets, d)
    return ItemSets(indices, offsets, d)


def all_itemsets(d: int) -> list[list[int]]:
    """Every subset of ``range(d)``, the empty set first, by size then lexicographically.

    For exact enumeration of item-set channels (``d <= MAX_ENUMERATED_D``).
    """
    d = check_domain_size(d, minimum=1)
    if d > MAX_ENUMERATED_D:
        raise ValueError(f"enumerating all 2**{d} item sets needs d <= MAX_ENUMERATED_D={MAX_ENUMERATED_D}")
    return [list(c) for r in range(d + 1) for c in itertools.combinations(range(d), r)]


class PaddingSampling:
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

    def __init__(self, base_factory: Callable[[int], FrequencyOracle], d: int, ell: int) -> None:
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
        self.inner = inner

    @property
    def epsilon(self) -> float:
        """Declared budget of the inner oracle; PS never increases it (see :meth:`channel`)."""
        return self.inner.epsilon

    def __repr__(self) -> str:
        return f"PaddingSampling(d={self.d}, ell={self.ell}, inner={self.inner!r})"

    def guarantees(self) -> list[Guarantee]:
        """Standard LDP at the inner oracle's budget, for item-set inputs (when finite).

        Each row of :meth:`channel` mixes rows of the inner channel, and a ratio of two
        mixtures never exceeds the largest ratio of their components.
        """
        eps = self.inner.epsilon
        return [Guarantee("ldp", epsilon=eps)] if math.isfinite(eps) else []

    # ------------------------------------------------------------------ sampling probabilities
    def _caps(self, sets: ItemSets) -> np.ndarray:
        return np.maximum(sets.sizes, self.ell)

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
        return mean_counts @ per_user

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
        return self.ell**2 * (v_inner[: self.d] + var_s[: self.d])

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
        """``size`` outputs of item set number ``x`` of :func:`all_itemsets`, as columns of :meth:`channel`.

        Rows of the default :meth:`channel` are the subsets of ``range(d)`` in the order of
        :func:`all_itemsets`; the reports are mapped by the inner oracle's ``output_index``.
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

    def _to_inner(self, reports: Any) -> Any:
        check_source(reports, self.provenance)
        return with_source(reports, self.inner.provenance) if source_of(reports) is not None else reports

    def perturb(self, itemsets: ItemSetsLike, rng: RNGLike = None) -> Any:
        """Client side: pad, sample one item, perturb it with the inner oracle (stamped with this PS's provenance)."""
        sets = as_itemsets(itemsets, self.d)
        gen = as_generator(rng)
        return with_source(self.inner.perturb(self._sample(sets, gen), gen), self.provenance)

    def aggregate(self, reports: Any) -> np.ndarray:
        """Inner support counts over the padded domain (length ``d + ell``)."""
        return self.inner.aggregate(self._to_inner(reports))

    def estimate(self, reports: Any) -> np.ndarray:
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
            When the inner channel is neither explicit nor a unary channel small enough to
            enumerate (``UnaryChannel.to_explicit`` limits the bits), or too many sets.
        """
        if itemsets is None:
            itemsets = all_itemsets(self.d)
        sets = as_itemsets(itemsets, self.d)
        inner_ch = self.inner.channel()
        if isinstance(inner_ch, UnaryChannel):
            inner_ch = inner_ch.to_explicit()
        if not isinstance(inner_ch, ExplicitChannel):
            raise ValueError(f"inner channel {type(inner_ch).__name__} cannot be enumerated")
        weights = self.sampling_probabilities(sets)
        mat = weights @ inner_ch.matrix
        labels = inner_ch.output_labels
        return ExplicitChannel(mat, output_labels=labels)
