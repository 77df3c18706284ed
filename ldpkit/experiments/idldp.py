"""The evaluation protocol of the ID-LDP paper (``gu2020idldp``, Sec. VII), rerun.

The paper compares RAPPOR and OUE (both at ``eps = min E``, so they satisfy LDP) with IDUE
(MinID-LDP for the per-item budgets ``E``) on single items, and RAPPOR-PS, OUE-PS and IDUE-PS on
item sets.  Per-item budgets are drawn from ``{eps, 1.2 eps, 2 eps}`` with shares
``{5%, 5%, 90%}`` unless a figure varies them, and every number is the average of ten repeats.

Everything here runs on the aggregate-level simulators: a single-item oracle's estimate is drawn
from the true counts (``FrequencyOracle.simulate``), and Padding-and-Sampling draws the sampled
counts once per padding length and repeat (they do not depend on the budget or the mechanism)
and then the inner oracle's estimate from them.  The ID-LDP experiments chapter
(:ref:`idldp-experiments`, sections :ref:`sec-idldp-table2` to :ref:`sec-idldp-fig7`) plots the
frames returned here through the figure registry (:mod:`ldpkit.experiments.idldp_figures`).

Every ``run_*`` function takes a :class:`~ldpkit.experiments.RunConfig`: its ``repeats``,
its ``seed`` (every point of the swept grid draws from its own stream, spawned from the seed by
:meth:`~ldpkit.experiments.RunConfig.map`, so a run is reproducible from the configuration
alone), its ``progress`` and its ``jobs`` and ``backend`` (the grid's points run in parallel,
with the same results).  ``config.scale`` selects users
of a *dataset* and must be applied to the data first (:func:`~ldpkit.experiments.subsample`):
these functions take the counts or item sets they are given and refuse a ``scale`` below 1.

Choices the paper leaves open are parameters with documented defaults; the chapter states the
values it uses.  In particular the level of every item is redrawn in each repeat (the paper
says the budgets are "randomly selected" without saying how often), and the same draw is used
by every mechanism of that repeat.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal

import numpy as np

from .. import idue as _idue
from .. import metrics
from .._validation import check_counts, check_epsilon, check_positive_int, check_real
from ..base import FrequencyOracle
from ..budgets import apportion, level_structure, random_levels
from ..padding import PaddingSampling
from ..sets import ItemSets, as_itemsets
from ..unary import OUE, RAPPOR
from .config import RunConfig, check_mechanism_names, check_run_config

__all__ = [
    "DEFAULT_PROTOCOL",
    "ITEMSET_MECHANISMS",
    "SINGLE_ITEM_MECHANISMS",
    "BudgetProtocol",
    "SolutionCache",
    "expected_mse",
    "run_budget_shares",
    "run_itemsets",
    "run_single_item",
    "summarise",
]

#: names understood by :func:`run_single_item`
SINGLE_ITEM_MECHANISMS = ("RAPPOR", "OUE", "IDUE-opt0", "IDUE-opt1", "IDUE-opt2")
#: names understood by :func:`run_itemsets`
ITEMSET_MECHANISMS = ("RAPPOR-PS", "OUE-PS", "IDUE-PS")
_Model = Literal["opt0", "opt1", "opt2"]
_MODELS: tuple[_Model, ...] = ("opt0", "opt1", "opt2")


@dataclass(frozen=True)
class BudgetProtocol:
    """Per-item budgets ``eps * multipliers[level]`` with level shares ``shares``.

    The paper's default is ``multipliers = (1, 1.2, 2)`` and ``shares = (0.05, 0.05, 0.9)``.
    Level sizes are the shares times ``m`` rounded by largest remainder
    (:func:`ldpkit.budgets.random_levels` with ``exact=True``), assigned to random items.

    Examples
    --------
    >>> mult = BudgetProtocol().multiplier_per_item(20, np.random.default_rng(0))
    >>> sorted(set(mult.tolist())), int((mult == 2.0).sum())
    ([1.0, 1.2, 2.0], 18)
    """

    multipliers: tuple[float, ...] = (1.0, 1.2, 2.0)
    shares: tuple[float, ...] = (0.05, 0.05, 0.90)

    def __post_init__(self) -> None:
        if len(self.multipliers) != len(self.shares) or not self.multipliers:
            raise ValueError(
                f"multipliers and shares must be non-empty and of equal length, got {self.multipliers!r} "
                f"and {self.shares!r}"
            )
        for mult in self.multipliers:
            check_epsilon(mult, "multiplier")
        if min(self.multipliers) != 1.0:
            raise ValueError(f"the smallest multiplier must be 1 (eps is the minimum budget), got {self.multipliers!r}")

    def multiplier_per_item(self, m: int, rng: np.random.Generator) -> np.ndarray:
        """One draw of every item's multiplier (scale by ``eps`` to get budgets)."""
        mult, shares = self._kept()
        if len(mult) == 1:
            return np.full(m, mult[0])
        return random_levels(m, mult, shares, rng=rng, exact=True)

    def sorted_multipliers(self, m: int) -> np.ndarray:
        """Every item's multiplier for one fixed placement: the level sizes of a draw, in level order.

        A draw (:meth:`multiplier_per_item`) is a uniformly random permutation of this vector.

        Examples
        --------
        >>> BudgetProtocol().sorted_multipliers(20).tolist()[:3]
        [1.0, 1.2, 2.0]
        """
        mult, shares = self._kept()
        m = check_positive_int(m, "m")
        return np.repeat(np.asarray(mult), apportion(m, shares))

    def _kept(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """The multipliers and shares of the levels with a positive share."""
        keep = [i for i, s in enumerate(self.shares) if s > 0]
        return tuple(self.multipliers[i] for i in keep), tuple(self.shares[i] for i in keep)


DEFAULT_PROTOCOL = BudgetProtocol()


class SolutionCache:
    """Memoised IDUE solutions keyed by model, level budgets and level sizes.

    With exact level shares every repeat has the same level sizes, so an optimisation model is
    solved once per budget scale instead of once per repeat.

    Examples
    --------
    >>> cache = SolutionCache()
    >>> budgets = np.array([1.0, 1.0, 2.0, 2.0, 2.0])
    >>> first = cache.get("opt0", budgets)
    >>> cache.get("opt0", budgets[::-1]) is first, cache.solves
    (True, 1)
    """

    def __init__(self) -> None:
        self._store: dict[tuple[Any, ...], Any] = {}
        self.solves = 0

    def get(self, model: str, budgets: np.ndarray) -> Any:
        """The solution of IDUE model ``model`` (``"opt0"``, ``"opt1"``, ``"opt2"``) for per-item ``budgets``."""
        if model not in _MODELS:
            raise ValueError(f"model must be one of {_MODELS}, got {model!r}")
        _, level_budgets, level_sizes = level_structure(budgets)
        key = (model, tuple(np.round(level_budgets, 12)), tuple(int(s) for s in level_sizes))
        if key not in self._store:
            self._store[key] = _idue.solve(model, level_budgets, level_sizes)
            self.solves += 1
        return self._store[key]


def _frame(rows: list[dict[str, Any]]) -> Any:
    import pandas as pd

    return pd.DataFrame(rows)


def _check_ks(ks: Sequence[int], m: int) -> tuple[int, ...]:
    ks = tuple(ks)
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= int(k) <= m:
            raise ValueError(f"every k must be an integer in 1..{m}, got {k!r}")
    return tuple(int(k) for k in ks)


def _common_arguments(
    mechanisms: Sequence[str], allowed: tuple[str, ...], config: RunConfig | None, ks: Sequence[int], m: int,
    cache: SolutionCache | None,
) -> tuple[tuple[str, ...], RunConfig, tuple[int, ...], SolutionCache]:
    """Validate the arguments every protocol shares; normalise the cache."""
    names = check_mechanism_names(mechanisms, allowed)
    config = check_run_config(config)
    ks = _check_ks(ks, m)
    if cache is not None and not isinstance(cache, SolutionCache):
        raise ValueError(f"cache must be a SolutionCache or None, got {type(cache).__name__}")
    return names, config, ks, SolutionCache() if cache is None else cache


def _check_eps_grid(epsilons: Iterable[float]) -> tuple[float, ...]:
    grid = tuple(float(check_epsilon(e, "epsilon")) for e in epsilons)
    if not grid:
        raise ValueError("epsilons is empty")
    return grid


def _single_item_oracle(name: str, budgets: np.ndarray, cache: SolutionCache) -> FrequencyOracle[Any]:
    m = budgets.size
    eps_min = float(budgets.min())
    if name == "RAPPOR":
        return RAPPOR(m, eps_min)
    if name == "OUE":
        return OUE(m, eps_min)
    model = name.split("-", 1)[1]
    return _idue.IDUE(budgets, model=cache.get(model, budgets))


def _score(true: np.ndarray, est: np.ndarray, n: int, ks: tuple[int, ...]) -> dict[str, float]:
    out = {"mse": float(np.sum((est - true) ** 2) / n)}
    for k in ks:
        out[f"re@{k}"] = metrics.relative_error_topk(true, est, k)
        out[f"precision@{k}"] = metrics.topk_precision(true, est, k)
    return out


def run_single_item(
    counts: Any,
    epsilons: Iterable[float],
    *,
    mechanisms: Sequence[str] = SINGLE_ITEM_MECHANISMS,
    protocol: BudgetProtocol = DEFAULT_PROTOCOL,
    ks: Sequence[int] = (20,),
    config: RunConfig | None = None,
    cache: SolutionCache | None = None,
) -> Any:
    """Figs. 2-4 protocol: estimate every item's count from single-item data.

    Parameters
    ----------
    counts
        True counts ``c*`` of the ``m`` items (``n = sum(counts)`` users).
    epsilons
        Minimum budgets ``eps`` (the x axis); item budgets are ``eps * multiplier``.
    mechanisms
        Subset of :data:`SINGLE_ITEM_MECHANISMS`.
    protocol
        Budget levels and shares.
    ks
        Top-k sizes for the relative error ``re@k`` and precision ``precision@k``.
    config
        ``config.repeats`` independent repeats per ``eps`` (the paper uses 10; each redraws the
        item levels), ``config.seed`` and ``config.progress``; ``None`` means ``RunConfig()``
        (10 repeats, unseeded).  ``config.scale`` must be 1 (see the module docstring).
    cache
        IDUE solutions shared between calls (results do not depend on it).

    Returns
    -------
    pandas.DataFrame
        One row per ``(eps, repeat, mechanism)`` with ``mse`` (``sum_i (c_hat_i - c_i)^2 / n``),
        ``mse_theory`` (the exact expectation of ``mse`` for that repeat's budgets,
        ``sum_i Var[c_hat_i] / n``, eq. (7) of the paper) and the top-k columns.
    """
    counts = check_counts(counts)
    grid = _check_eps_grid(epsilons)
    names, config, ks, cache = _common_arguments(
        mechanisms, SINGLE_ITEM_MECHANISMS, config, ks, counts.size, cache
    )

    def point(eps: float, gen: np.random.Generator) -> list[dict[str, Any]]:
        return _single_item_rows({"eps": eps}, counts, eps, protocol, names, config.repeats, ks, gen, cache)

    return _frame(list(chain.from_iterable(config.map(point, grid, "eps"))))


def _single_item_rows(
    key: dict[str, Any],
    counts: np.ndarray,
    eps: float,
    protocol: BudgetProtocol,
    names: tuple[str, ...],
    repeats: int,
    ks: tuple[int, ...],
    gen: np.random.Generator,
    cache: SolutionCache,
) -> list[dict[str, Any]]:
    """``repeats`` rows per mechanism: one budget draw per repeat, shared by the mechanisms."""
    m, n = counts.size, int(counts.sum())
    true = counts.astype(float)
    rows = []
    for rep in range(repeats):
        budgets = eps * protocol.multiplier_per_item(m, gen)
        for name in names:
            oracle = _single_item_oracle(name, budgets, cache)
            est = oracle.simulate(counts, rng=gen)
            row = {**key, "repeat": rep, "mechanism": name, "mse_theory": oracle.mse(counts) / n}
            row.update(_score(true, est, n, ks))
            rows.append(row)
    return rows


def expected_mse(
    name: str,
    eps: float,
    m: int,
    *,
    protocol: BudgetProtocol = DEFAULT_PROTOCOL,
    cache: SolutionCache | None = None,
) -> float:
    """Exact expected ``mse`` (per user) of a single-item mechanism over the protocol's budget draws.

    A repeat of :func:`run_single_item` or :func:`run_budget_shares` places the protocol's level
    sizes on uniformly random items, so item ``i`` is at level ``l`` with probability
    ``m_l / m``.  Summing eq. (7), ``n g_i + c_i h_i``, over the items and averaging over the
    placements gives ``sum_l m_l g_l + sum_l (m_l / m) h_l`` per user, whatever the counts (they
    sum to ``n``): the mean over repeats of ``mse_theory``, and of ``mse``, tends to it.  It is
    the MSE per user of one fixed placement (:meth:`BudgetProtocol.sorted_multipliers`) on
    uniform counts.  RAPPOR and OUE run at ``eps`` (the minimum budget) and do not depend on
    the draw.

    Parameters
    ----------
    name
        One of :data:`SINGLE_ITEM_MECHANISMS`.
    eps
        The minimum budget; item budgets are ``eps`` times the protocol's multipliers.
    m
        Number of items.
    protocol, cache
        As in :func:`run_single_item`.

    Examples
    --------
    >>> round(expected_mse("OUE", 1.0, 100), 4)  # 100 * 4 e / (e - 1)^2 + 1
    369.2694
    >>> expected_mse("IDUE-opt0", 1.0, 100) < expected_mse("OUE", 1.0, 100)
    True
    """
    (name,) = check_mechanism_names((name,), SINGLE_ITEM_MECHANISMS)
    eps = check_epsilon(eps, "eps")
    m = check_positive_int(m, "m")
    if not isinstance(protocol, BudgetProtocol):
        raise ValueError(f"protocol must be a BudgetProtocol, got {type(protocol).__name__}")
    if cache is not None and not isinstance(cache, SolutionCache):
        raise ValueError(f"cache must be a SolutionCache or None, got {type(cache).__name__}")
    budgets = eps * protocol.sorted_multipliers(m)
    oracle = _single_item_oracle(name, budgets, SolutionCache() if cache is None else cache)
    return oracle.mse(np.ones(m)) / m


def run_budget_shares(
    counts: Any,
    shares: Iterable[float],
    *,
    eps_small: float,
    eps_large: float,
    mechanisms: Sequence[str] = ("RAPPOR", "OUE", "IDUE-opt0"),
    ks: Sequence[int] = (50,),
    config: RunConfig | None = None,
    cache: SolutionCache | None = None,
) -> Any:
    """Fig. 5 protocol: two levels ``eps_small < eps_large``, varying the share of ``eps_small``.

    ``shares`` are fractions in ``(0, 1]`` of items at the smaller budget; RAPPOR and OUE run at
    ``eps_small`` (the minimum budget) throughout.  Same columns as :func:`run_single_item`
    with ``share`` in place of ``eps``; ``config`` and ``cache`` as there.
    """
    counts = check_counts(counts)
    eps_small = check_epsilon(eps_small, "eps_small")
    eps_large = check_epsilon(eps_large, "eps_large")
    if not eps_small < eps_large:
        raise ValueError(f"eps_small must be below eps_large, got {eps_small} and {eps_large}")
    grid = tuple(check_real(s, "shares", 0.0, 1.0, low_open=True) for s in shares)
    if not grid:
        raise ValueError("shares must be a non-empty list of fractions in (0, 1], got none")
    names, config, ks, cache = _common_arguments(
        mechanisms, SINGLE_ITEM_MECHANISMS, config, ks, counts.size, cache
    )
    ratio = eps_large / eps_small

    def point(share: float, gen: np.random.Generator) -> list[dict[str, Any]]:
        protocol = BudgetProtocol((1.0, ratio), (share, 1.0 - share))
        return _single_item_rows({"share": share}, counts, eps_small, protocol, names, config.repeats, ks, gen, cache)

    return _frame(list(chain.from_iterable(config.map(point, grid, "share"))))


def _itemset_oracle(name: str, budgets: np.ndarray, ell: int, cache: SolutionCache) -> PaddingSampling[Any]:
    m = budgets.size
    eps_min = float(budgets.min())
    if name == "RAPPOR-PS":
        return _idue.rappor_ps(m, eps_min, ell)
    if name == "OUE-PS":
        return _idue.oue_ps(m, eps_min, ell)
    return _idue.idue_ps(budgets, ell, model=cache.get("opt0", budgets))


def run_itemsets(
    itemsets: Any,
    epsilons: Iterable[float],
    ells: Iterable[int],
    *,
    mechanisms: Sequence[str] = ITEMSET_MECHANISMS,
    protocol: BudgetProtocol = DEFAULT_PROTOCOL,
    ks: Sequence[int] = (20,),
    theory: bool = False,
    config: RunConfig | None = None,
    cache: SolutionCache | None = None,
) -> Any:
    """Figs. 6-8 protocol: item-set data through Padding-and-Sampling.

    Parameters
    ----------
    itemsets
        :class:`~ldpkit.sets.ItemSets` (or anything :func:`~ldpkit.sets.as_itemsets`
        accepts together with its ``d``) — pass ``data.sets`` of an
        :class:`~ldpkit.datasets.ItemSetData`.
    epsilons, ells
        Minimum budgets and padding lengths to sweep.
    theory
        Also report ``mse_theory``, the exact expected ``mse`` including the padding bias
        (:meth:`~ldpkit.padding.PaddingSampling.mse`); costs one pass over the data per row.
    config, cache
        As in :func:`run_single_item`; ``config.repeats`` independent padding samples and level
        draws per padding length.

    Returns
    -------
    pandas.DataFrame
        One row per ``(ell, eps, repeat, mechanism)``; ``mse`` and the top-k columns are
        against the true counts ``c*`` (users holding each item), so they include the bias of
        truncating sets longer than ``ell``.
    """
    if not isinstance(itemsets, ItemSets):
        raise ValueError(f"itemsets must be an ItemSets (e.g. data.sets), got {type(itemsets).__name__}")
    sets = as_itemsets(itemsets, itemsets.d)
    grid = _check_eps_grid(epsilons)
    ell_grid = tuple(check_positive_int(e, "ell") for e in ells)
    if not ell_grid:
        raise ValueError("ells is empty")
    m, n = sets.d, len(sets)
    names, config, ks, cache = _common_arguments(mechanisms, ITEMSET_MECHANISMS, config, ks, m, cache)
    if not isinstance(theory, bool):
        raise ValueError(f"theory must be True or False, got {theory!r}")
    true = sets.true_counts().astype(float)

    def point(ell: int, gen: np.random.Generator) -> list[dict[str, Any]]:
        sampler = PaddingSampling(lambda k: OUE(k, 1.0), m, ell)
        sampled = sampler.sampled_counts(sets, rng=gen, trials=config.repeats)
        rows = []
        for rep in range(config.repeats):
            mult = protocol.multiplier_per_item(m, gen)
            for eps in grid:
                budgets = eps * mult
                for name in names:
                    ps = _itemset_oracle(name, budgets, ell, cache)
                    est = ell * ps.inner.simulate(sampled[rep], rng=gen)[:m]
                    row: dict[str, Any] = {"ell": ell, "eps": eps, "repeat": rep, "mechanism": name}
                    if theory:
                        row["mse_theory"] = ps.mse(sets) / n
                    row.update(_score(true, est, n, ks))
                    rows.append(row)
        return rows

    return _frame(list(chain.from_iterable(config.map(point, ell_grid, "ell"))))


def summarise(frame: Any, by: Sequence[str], columns: Sequence[str]) -> Any:
    """Mean and standard error over repeats of ``columns``, grouped by ``by``."""
    grouped = frame.groupby(list(by), sort=True)[list(columns)]
    mean = grouped.mean()
    sem = grouped.std(ddof=1) / np.sqrt(grouped.count())
    sem.columns = [f"{c}_se" for c in sem.columns]
    import pandas as pd

    return pd.concat([mean, sem], axis=1)

