"""Per-item privacy budgets as the papers' experiments assign them.

* ID-LDP :cite:`gu2020idldp` draws each item's budget from a few levels, by default
  ``(eps, 1.2 eps, 2 eps)`` with shares ``(5%, 5%, 90%)``: :func:`random_levels`.  IDUE then
  works with the distinct budgets ("levels") and their sizes: :func:`level_structure`.
  ID-LDP chapter, :ref:`sec-idldp-budget-assignment`.
* IPLDP :cite:`li2023ipldp` ranks items by their counts, declares the most frequent fraction
  ``NR`` non-sensitive and splits the rest into ``LC`` levels with budgets evenly spaced on
  ``[eps_min, eps_max]``, frequent items getting larger budgets: :func:`ipldp_levels`.  The
  five experiments of its Table 2 are transcribed in :data:`IPLDP_EXPERIMENTS`.  IPLDP
  experiments chapter, :ref:`sec-ipldp-levels`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike, as_generator
from ._validation import (
    MAX_USERS,
    ArgumentTypeError,
    check_budget_vector,
    check_counts,
    check_distribution,
    check_epsilon,
    check_positive_int,
    check_probability,
    real_array,
)

__all__ = [
    "IPLDP_EXPERIMENTS",
    "IPLDPAssignment",
    "IPLDPExperiment",
    "apportion",
    "ipldp_levels",
    "level_structure",
    "random_levels",
]

#: absolute slack when flooring ``share * m`` or ``NR * |D|``, so that products which are whole
#: numbers in exact arithmetic (``0.29 * 100 = 28.999999999999996`` in floating point) floor to
#: that whole number
_FLOOR_SLACK = 1e-9


def _budget_levels(budgets: ArrayLike) -> np.ndarray:
    arr = real_array(budgets, "budgets")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"budgets must be a non-empty 1-d sequence of budgets, got shape {arr.shape}")
    return check_budget_vector(arr, arr.size, "budgets")


# --------------------------------------------------------------------------- ID-LDP


def apportion(m: int, shares: ArrayLike) -> np.ndarray:
    """Split ``m`` items into levels of sizes proportional to ``shares`` (largest remainder).

    Each level first gets ``floor(shares[i] * m)`` items; the ``m - sum(floors)`` items left
    over go one each to the levels with the largest fractional parts ``shares[i] * m -
    floor(shares[i] * m)``, ties going to the lower level index.  The sizes sum to ``m``, each
    differs from ``shares[i] * m`` by less than 1, and a level with ``shares[i] * m >= 1`` is
    never empty.  ID-LDP chapter, :ref:`sec-idldp-budget-assignment`.

    Parameters
    ----------
    m
        Number of items (``1 <= m <= 2**53``, so that ``shares[i] * m`` is exact enough).
    shares
        Probability vector (non-negative, sums to 1).

    Returns
    -------
    numpy.ndarray
        int64 level sizes, same length as ``shares``.
    """
    m = check_positive_int(m, "m", maximum=MAX_USERS)
    shares = check_distribution(shares, name="shares")
    exact = shares * m
    sizes = np.floor(exact + _FLOOR_SLACK).astype(np.int64)
    sizes = np.minimum(sizes, m)
    left = m - int(sizes.sum())
    if abs(left) > sizes.size:
        # shares summing to 1 -+ ~1e-8 (check_distribution's tolerance) times a large m leave more
        # items over (or short) than there are levels: apportion the normalised shares instead
        exact = shares / shares.sum() * m
        sizes = np.minimum(np.floor(exact + _FLOOR_SLACK).astype(np.int64), m)
        left = m - int(sizes.sum())
    if left > 0:
        remainder = exact - sizes
        # stable sort on -remainder: largest remainders first, ties by level index
        order = np.argsort(-remainder, kind="stable")
        while left > 0:  # one round (a few at most for m near 2**53)
            take = order[:left]
            sizes[take] += 1
            left -= take.size
    elif left < 0:  # only reachable through the slack with shares summing to 1 + ~1e-8
        order = np.argsort(exact - sizes, kind="stable")
        while left < 0:
            for i in order:
                if left == 0:
                    break
                if sizes[i] > 0:
                    sizes[i] -= 1
                    left += 1
    return sizes


def random_levels(m: int, budgets: ArrayLike, shares: ArrayLike, rng: RNGLike = None, exact: bool = True) -> np.ndarray:
    """Per-item budgets for ID-LDP experiments: each item gets one of ``budgets``.

    The ID-LDP paper :cite:`gu2020idldp` picks every item's budget at random among a few
    levels with given shares (default ``(eps, 1.2 eps, 2 eps)`` with ``(0.05, 0.05, 0.9)``).

    * ``exact=True`` (default): level ``i`` gets exactly :func:`apportion` ``(m, shares)[i]``
      items (``shares[i] * m`` up to largest-remainder rounding), and which items form each
      level is a uniformly random permutation of the items.  This removes the sampling noise
      of the level sizes, so that e.g. the 5% levels of a 100-item domain hold exactly 5 items
      (i.i.d. draws would leave such a level empty with probability ``0.95**100 = 0.6%``).
    * ``exact=False``: every item draws its level independently with probabilities
      ``shares`` (the literal reading of the paper).

    Parameters
    ----------
    m
        Number of items (``>= 1``).
    budgets
        Budget of each level, finite and positive (e.g. ``(1.0, 1.2, 2.0)``).
    shares
        Share of the items at each level: a probability vector of the same length.
    rng
        Anything :func:`ldpkit.as_generator` accepts.
    exact
        Exact level sizes (True) or i.i.d. levels (False).

    Returns
    -------
    numpy.ndarray
        float array of length ``m``: the budget of every item.
    """
    m = check_positive_int(m, "m", maximum=MAX_USERS)
    levels = _budget_levels(budgets)
    shares = check_distribution(shares, levels.size, "shares")
    if not isinstance(exact, (bool, np.bool_)):
        raise ArgumentTypeError(f"exact must be True or False, got {exact!r}")
    gen = as_generator(rng)
    if exact:
        labels = np.repeat(np.arange(levels.size), apportion(m, shares))
        labels = gen.permutation(labels)
    else:
        labels = gen.choice(levels.size, size=m, p=shares)
    return levels[labels]


def level_structure(budgets_per_item: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group items by their budget, as IDUE does (``t`` levels of sizes ``m_1, ..., m_t``).

    Budgets are compared exactly (floating-point equality): compute each level's budget once
    and reuse it, as :func:`random_levels` and :func:`ipldp_levels` do.  ID-LDP chapter,
    :ref:`sec-idldp-budget-assignment`.

    Parameters
    ----------
    budgets_per_item
        Finite positive budget of every item (length ``m >= 1``).

    Returns
    -------
    levels
        int64 array of length ``m``: the level of every item (index into ``level_budgets``).
    level_budgets
        The ``t`` distinct budgets, ascending.
    level_sizes
        int64 array of length ``t``: the number of items at each level (sums to ``m``).
    """
    arr = real_array(budgets_per_item, "budgets_per_item")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"budgets_per_item must be a non-empty 1-d array, got shape {arr.shape}")
    arr = check_budget_vector(arr, arr.size, "budgets_per_item")
    level_budgets, levels, level_sizes = np.unique(arr, return_inverse=True, return_counts=True)
    return levels.astype(np.int64).reshape(-1), level_budgets, level_sizes.astype(np.int64)


# --------------------------------------------------------------------------- IPLDP


@dataclass(frozen=True, eq=False)
class IPLDPAssignment:
    """Outcome of :func:`ipldp_levels`.

    Attributes
    ----------
    sensitive
        bool mask of length ``|D|``: True for the items of ``D_S``.
    epsilons
        float array of length ``|D|``: the budget of every sensitive item and ``numpy.inf``
        for every non-sensitive item (IPLDP treats non-sensitive items as having an unbounded
        budget; use ``epsilons[sensitive]`` for the finite ones).
    nonsensitive
        int64 indices of the items of ``D_N``, ascending.
    levels
        int64 array of length ``|D|``: the level of every sensitive item, ``0`` for
        ``eps_min`` up to ``LC - 1`` for ``eps_max``; ``-1`` for non-sensitive items.
    level_budgets
        The ``LC`` budgets, ascending and evenly spaced on ``[eps_min, eps_max]``.
    level_sizes
        int64 number of items at each level (same order as ``level_budgets``).
    order
        All items ranked by count, descending, ties by item index (``D_N`` is ``order[:|D_N|]``).

    Examples
    --------
    >>> from ldpkit.budgets import ipldp_levels
    >>> a = ipldp_levels([50, 40, 30, 20, 10, 5], nr=0.5, lc=3, eps_min=1.0, eps_max=3.0)
    >>> a.nonsensitive.tolist(), a.levels.tolist()
    ([0, 1, 2], [-1, -1, -1, 2, 1, 0])
    >>> a.epsilons.tolist()
    [inf, inf, inf, 3.0, 2.0, 1.0]
    """

    sensitive: np.ndarray
    epsilons: np.ndarray
    nonsensitive: np.ndarray
    levels: np.ndarray
    level_budgets: np.ndarray
    level_sizes: np.ndarray
    order: np.ndarray

    @property
    def sensitive_items(self) -> np.ndarray:
        """int64 indices of the items of ``D_S``, ascending."""
        return np.flatnonzero(self.sensitive)


def _n_nonsensitive(nr: float, d: int) -> int:
    return min(d, math.floor(nr * d + _FLOOR_SLACK))


def ipldp_levels(counts: ArrayLike, nr: float, lc: int, eps_min: float, eps_max: float) -> IPLDPAssignment:
    """IPLDP experiment budgets: top counts non-sensitive, the rest in ``LC`` levels.

    Procedure (IPLDP :cite:`li2023ipldp`, Sec. 7.1, made precise):

    1. Rank the ``|D|`` items by count, descending; equal counts are ranked by item index
       (lower index first).
    2. The first ``|D_N| = floor(NR * |D|)`` ranked items are non-sensitive.
    3. The remaining ``|D_S|`` items, still in rank order, are cut into ``LC`` contiguous groups
       whose sizes differ by at most one, the larger groups first (as
       :func:`numpy.array_split` does).
    4. The level budgets are ``eps_min + j (eps_max - eps_min) / (LC - 1)``, ``j = 0..LC-1``; the
       group with the largest counts gets ``eps_max`` and the one with the smallest counts gets
       ``eps_min``.  With ``LC = 1`` the single level gets ``eps_min``: every sensitive item then
       needs the strongest protection the experiment asks for, so the guarantee the
       experiment is labelled with (``eps_min`` for the least frequent items) holds.

    Rounding of ``NR * |D|``: the paper fixes it only through its example (``0.5 * 6 = 3``).
    We floor (with a ``1e-9`` slack against floating-point error, so ``0.7 * 20`` gives 14):
    ``|D_N| <= NR * |D|`` always, so rounding never declares *more* items non-sensitive than
    the ratio allows, which is the privacy-conservative direction.  On the paper's grids
    (``NR`` a multiple of 0.1 with ``|D| = 20`` for Zipf and ``|D| = 100`` for Kosarak)
    ``NR * |D|`` is a whole number, so floor, round and ceiling agree and the choice does not
    affect any reproduced figure.  The paper's remark that ``|D_S|`` drops below ``LC = 4``
    once ``NR`` exceeds 0.8 on Zipf refers to that 0.1 grid (``NR = 0.9`` leaves 2 items); for
    ``0.8 < NR < 0.85`` flooring still leaves 4.

    IPLDP experiments chapter, :ref:`sec-ipldp-levels` (with the paper's worked example).

    Parameters
    ----------
    counts
        Count of every item (non-negative integers, not all zero); ``|D| = len(counts)``.
    nr
        Non-sensitive ratio ``NR`` in ``[0, 1]``.
    lc
        Level count ``LC >= 1``; must not exceed ``|D_S|``.
    eps_min, eps_max
        Smallest and largest budget, finite, positive, ``eps_min <= eps_max``.

    Returns
    -------
    IPLDPAssignment

    Raises
    ------
    ValueError
        On invalid inputs, and when ``LC > |D_S|`` (some level would be empty).
    """
    counts, nr, lc, eps_min, eps_max = _check_ipldp_arguments(counts, nr, lc, eps_min, eps_max)
    d = counts.size
    n_ns = _n_nonsensitive(nr, d)
    _check_level_count(lc, d, nr, n_ns)
    order = np.lexsort((np.arange(d), -counts)).astype(np.int64)
    level_budgets = np.linspace(eps_min, eps_max, lc)
    levels = _rank_levels(order, n_ns, lc, d)
    sensitive = levels >= 0
    epsilons = np.full(d, np.inf)
    epsilons[sensitive] = level_budgets[levels[sensitive]]
    level_sizes = np.bincount(levels[sensitive], minlength=lc).astype(np.int64)
    return IPLDPAssignment(
        sensitive=sensitive,
        epsilons=epsilons,
        nonsensitive=np.sort(order[:n_ns]),
        levels=levels,
        level_budgets=level_budgets,
        level_sizes=level_sizes,
        order=order,
    )


def _check_ipldp_arguments(
    counts: ArrayLike, nr: float, lc: int, eps_min: float, eps_max: float
) -> tuple[np.ndarray, float, int, float, float]:
    """:func:`ipldp_levels`' arguments, validated (``eps_min <= eps_max``)."""
    counts = check_counts(counts)
    nr = check_probability(nr, "nr")
    lc = check_positive_int(lc, "lc")
    eps_min = check_epsilon(eps_min, "eps_min")
    eps_max = check_epsilon(eps_max, "eps_max")
    if eps_min > eps_max:
        raise ValueError(f"eps_min={eps_min!r} must not exceed eps_max={eps_max!r}")
    return counts, nr, lc, eps_min, eps_max


def _check_level_count(lc: int, d: int, nr: float, n_ns: int) -> None:
    """Raise when the ``d - n_ns`` sensitive items cannot fill ``lc`` levels."""
    n_s = d - n_ns
    if lc > n_s:
        raise ValueError(
            f"lc={lc} exceeds the number of sensitive items |D_S|={n_s} "
            f"(|D|={d} and nr={nr!r} make |D_N|={n_ns}); lower nr or lc"
        )


def _rank_levels(order: np.ndarray, n_ns: int, lc: int, d: int) -> np.ndarray:
    """Levels of the items ranked by ``order``: ``-1`` for the first ``n_ns``, then ``lc`` contiguous groups.

    The group with the largest counts gets level ``lc - 1`` (``eps_max``).
    """
    levels = np.full(d, -1, dtype=np.int64)
    groups = np.array_split(order[n_ns:], lc)  # groups[0] holds the largest counts
    for g, members in enumerate(groups):
        levels[members] = lc - 1 - g
    return levels


@dataclass(frozen=True)
class IPLDPExperiment:
    """One row of Table 2 of the IPLDP paper (parameter settings of experiments #1-#5).

    A value given as a pair ``(lo, hi)`` is a range swept in the experiment; the text does not
    give the grid step (it is only visible in the figures, which the extracted text lacks).
    ``sr`` is the sample ratio: an experiment uses ``SR * n`` users, ``n`` being the dataset's
    user count of Table 1 (the paper writes ``SR * |D|``, but ``|D|`` there cannot be the item
    domain: 20 items would give at most 20 users).

    Examples
    --------
    >>> from ldpkit.budgets import IPLDP_EXPERIMENTS
    >>> ex = IPLDP_EXPERIMENTS[3]
    >>> ex.number, ex.nr("Zipf"), ex.nr("Kosarak")
    (4, (0.0, 0.8), (0.1, 0.9))
    """

    number: int
    compared_with: tuple[str, ...]
    eps_min: float
    eps_max: float
    lc: int
    nr_zipf: float | tuple[float, float]
    nr_kosarak: float | tuple[float, float]
    sr: float | tuple[float, float]

    def nr(self, dataset: str) -> float | tuple[float, float]:
        """``NR`` (or its swept range) for ``dataset`` in ``{"Zipf", "Kosarak"}``."""
        if not isinstance(dataset, str):
            raise ArgumentTypeError(f"dataset must be 'Zipf' or 'Kosarak', got {dataset!r}")
        if dataset == "Zipf":
            return self.nr_zipf
        if dataset == "Kosarak":
            return self.nr_kosarak
        raise ValueError(f"dataset must be 'Zipf' or 'Kosarak', got {dataset!r}")


# Transcribed from Table 2 of both versions of the IPLDP paper (li2023ipldp, li2023ipldppreprint).
# The two agree on every number legible in both.  One difference: for experiment #4 the NR column
# of the preprint reads "0.0-0.8 *" and "0.1-0.9 **", the footnote saying * is for Zipf and ** for
# Kosarak; the conference text keeps the same footnote but shows only "0.0-0.8 *", its Kosarak
# range having been lost (most likely in text extraction).  We take 0.1-0.9 for Kosarak from the
# preprint; it is consistent with the Sec. 7.2 remark that only Zipf is capped at NR = 0.8.
#: the five experiments of Table 2 of the IPLDP paper (transcription notes in the comment above)
IPLDP_EXPERIMENTS: tuple[IPLDPExperiment, ...] = (
    IPLDPExperiment(1, ("KRR", "URR"), 0.1, 1.0, 4, 0.5, 0.5, (0.2, 1.0)),
    IPLDPExperiment(2, ("KRR", "URR"), 1.0, 10.0, 4, 0.5, 0.5, (0.2, 1.0)),
    IPLDPExperiment(3, ("KRR", "URR"), 0.1, 10.0, 4, 0.5, 0.5, (0.2, 1.0)),
    IPLDPExperiment(4, ("URR",), 0.1, 10.0, 4, (0.0, 0.8), (0.1, 0.9), 1.0),
    IPLDPExperiment(5, ("IDUE",), 0.1, 10.0, 4, 0.0, 0.0, (0.1, 1.0)),
)
