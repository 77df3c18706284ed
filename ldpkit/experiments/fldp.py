"""The evaluation protocol of the FLDP paper (``zhao2022fldp``, Sec. 6), rerun.

The paper compares FHR (reconstructed in :mod:`ldpkit.hadamard`; ``(1/2, eps)``-FLDP, no
finite LDP epsilon) with OLH and OUE (``eps``-LDP) on the top 20, 50 and 100 items of three
datasets, over a grid of small budgets, with four metrics.  This module adds Hadamard
Response (HR, ``eps``-LDP, the same Hadamard encoding as FHR) and records, for every
mechanism and budget, the standard-LDP epsilon and the FLDP parameters computed by the
accountant, so that the results can be read at equal nominal budget (the paper's comparison)
and at equal guarantee.

Metrics (the paper's eqs. (13)-(16) and Sec. 6.1 d); the formulas were lost from the text and
are reconstructed from its prose, see :mod:`ldpkit.metrics`), on the true top-``k`` items
``T(k)`` of each dataset:

* ``kld``: :func:`ldpkit.metrics.topk_kl_divergence`, ``KL(true || estimate)`` on ``T(k)``,
  both renormalised, the estimate clipped at 0 and smoothed by :data:`KLD_SMOOTHING`
  (an estimate can be non-positive on an item of ``T(k)`` at small budgets);
* ``re``: :func:`ldpkit.metrics.relative_error_topk` with ``aggregate="median"`` (PrivBasis'
  relative error, which the paper cites);
* ``se``: :func:`ldpkit.metrics.squared_error_topk` on frequencies, the mean over ``T(k)``;
  its exact expectation ``(1/k) sum_{i in T(k)} Var[c_hat_i] / n^2`` is column
  ``se_theory`` (every mechanism here has an exact per-item variance);
* ``ncr``: :func:`ldpkit.metrics.ncr`, over the estimated top-``k`` of the whole domain.

Simulation.  FHR, HR and OUE are simulated at the aggregate level, exactly in distribution
(their ``simulate``).  OLH's ``simulate`` runs the per-user path (its support counts are
correlated through the real hash family of :mod:`ldpkit.olh`), which costs ``O(n d)``;
here OLH is simulated under the idealised *fully random* hash that OLH's analysis assumes
(:func:`olh_ideal_support`): then, for a user holding ``x``, the hash values of the other
items are independent uniform buckets independent of the report, so the support indicators
of all items are mutually independent and ``C_i ~ Binomial(c_i, p') + Binomial(n - c_i, 1/g)``
independently over ``i``, which is exact for that hash.  The FLDP experiments chapter
checks it against the per-user path with ldpkit's real hash.

Verdicts.  "FHR beats X" is decided per cell (dataset, ``k``, budget) by a stated test of
:mod:`ldpkit.experiments.verdicts` (:func:`fhr_verdicts`): on ``se`` by the exact expectations
(``se_theory``, :func:`~ldpkit.experiments.verdicts.exact_verdict`), on the other metrics by
the paired runs (:func:`~ldpkit.experiments.verdicts.paired_verdict`); a ``kld`` verdict must
also be the same at every smoothing of :data:`KLD_SMOOTHINGS`, else the cell is undecided
(smoothing).  :func:`claim_verdict` turns the cells of one figure into the verdict on the
paper's "FHR best" inside a budget range.  FLDP experiments chapter, :ref:`fldp-experiments`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

import numpy as np

from .. import metrics
from .._rng import as_generator
from .._validation import check_counts, check_epsilon, check_positive_int
from ..accountant import fldp_parameters, ldp_epsilon
from ..base import FrequencyOracle
from ..hadamard import FHR, HR
from ..olh import OLH
from ..unary import OUE, RAPPOR
from .config import RunConfig, check_mechanism_names, check_run_config
from .verdicts import UNDECIDED, exact_verdict, paired_verdict

__all__ = [
    "BEATEN",
    "BEST",
    "COST_MECHANISMS",
    "CROSSOVER_EPSILON",
    "HIGHER_IS_BETTER",
    "KLD_SMOOTHING",
    "KLD_SMOOTHINGS",
    "KS",
    "MECHANISMS",
    "METRICS",
    "PAPER_RIVALS",
    "claim_verdict",
    "fhr_verdicts",
    "guarantees",
    "make_oracle",
    "measure_costs",
    "olh_ideal_support",
    "report_bits",
    "run_epsilons",
    "simulate_estimate",
]

#: mechanisms of the accuracy comparison (the paper's three plus HR)
MECHANISMS = ("OLH", "OUE", "FHR", "HR")
#: mechanisms of the cost comparison (the paper's Table 2 plus HR)
COST_MECHANISMS = ("OLH", "RAPPOR", "OUE", "FHR", "HR")
#: the four metrics, in the order of the paper's Figs. 2-5
METRICS = ("kld", "se", "re", "ncr")
#: the paper's top-k sizes
KS = (20, 50, 100)
#: additive smoothing of the renormalised top-k estimate in ``kld`` (our choice; the paper's
#: eq. (14) is lost)
KLD_SMOOTHING = 1e-6
#: the smoothings over which a ``kld`` verdict must agree (:func:`fhr_verdicts`), two decades
#: either side of :data:`KLD_SMOOTHING`; a cell whose verdict changes between them is decided by
#: the smoothing, not by the mechanisms
KLD_SMOOTHINGS = (1e-8, 1e-6, 1e-4)
#: FHR's rivals in the paper's Figs. 2-5 (HR is the book's addition)
PAPER_RIVALS = ("OLH", "OUE")
#: metrics where a larger value is better (the others are errors)
HIGHER_IS_BETTER = frozenset({"ncr"})
#: the budget below which FHR's per-user variance for a non-holder, ``1 / (2 tanh^2(eps/2))``,
#: is below OUE's and ideal OLH's ``4 e^eps / (e^eps - 1)^2``: ``ln(3 + 2 sqrt 2) = 2 asinh 1``
#: (derived in the FLDP chapter, :prf:ref:`thm-fhr-vs-oue`)
CROSSOVER_EPSILON = 2.0 * math.asinh(1.0)
#: outcome of a cell in :func:`fhr_verdicts` where FHR beats every rival
BEST = "FHR best"
#: outcome of a cell in :func:`fhr_verdicts` where a rival beats FHR
BEATEN = "FHR beaten"


def make_oracle(name: str, d: int, epsilon: float) -> FrequencyOracle[Any]:
    """The mechanism ``name`` (of :data:`COST_MECHANISMS`) over ``d`` items at budget ``epsilon``.

    For FHR the budget is its FLDP budget (the randomised response on the pair); for the
    others it is the LDP budget.
    """
    eps = check_epsilon(epsilon)
    d = check_positive_int(d, "d", 2)
    table = {"OLH": OLH, "OUE": OUE, "FHR": FHR, "HR": HR, "RAPPOR": RAPPOR}
    if name not in table:
        raise ValueError(f"unknown mechanism {name!r}; choose from {COST_MECHANISMS}")
    return table[name](d, eps)


def olh_ideal_support(olh: OLH, counts: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Support counts of OLH under a fully random hash: ``Bin(c_i, p') + Bin(n - c_i, 1/g)``, independent."""
    c = check_counts(counts, olh.d)
    n = int(c.sum())
    return gen.binomial(c, olh.p_prime) + gen.binomial(n - c, 1.0 / olh.g)


def simulate_estimate(oracle: FrequencyOracle[Any], counts: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """One run of ``oracle`` on ``counts``: estimated counts (OLH with the ideal hash)."""
    if isinstance(oracle, OLH):
        return oracle.estimate_from_support(olh_ideal_support(oracle, counts, gen), int(counts.sum()))
    return oracle.simulate(counts, rng=gen)


def guarantees(names: Sequence[str], epsilons: Iterable[float], d: int) -> Any:
    """Accountant's LDP epsilon and FLDP ``(alpha, eps)`` of each mechanism at each budget (``d`` items)."""
    import pandas as pd

    rows = []
    for eps in epsilons:
        for name in names:
            oracle = make_oracle(name, d, eps)
            params = fldp_parameters(oracle)
            rows.append({"epsilon": float(eps), "mechanism": name, "ldp_epsilon": float(ldp_epsilon(oracle)),
                         "fldp_alpha": float(params.shared_fraction), "fldp_epsilon": float(params.epsilon)})
    return pd.DataFrame(rows)


def run_epsilons(
    counts: Any,
    epsilons: Iterable[float],
    *,
    ks: Sequence[int] = KS,
    mechanisms: Sequence[str] = MECHANISMS,
    config: RunConfig | None = None,
    kld_smoothings: Sequence[float] = (),
) -> Any:
    """The paper's Figs. 2-5 for one dataset: the four metrics against the budget.

    Parameters
    ----------
    counts
        True counts of the dataset (every user takes part).
    epsilons
        Budgets (FHR: FLDP budget; the others: LDP budget).
    ks
        Top-k sizes, each in ``1..d``.
    mechanisms
        Subset of :data:`MECHANISMS`.
    config
        ``repeats`` (the paper: 10), ``seed`` (each budget draws from its own stream, spawned by
        :meth:`~ldpkit.experiments.RunConfig.map`), ``progress``, ``jobs`` and ``backend`` (the
        budgets run in parallel, with the same results); ``scale`` must be 1.
    kld_smoothings
        Further smoothings of ``kld``, each adding a column ``kld@<s>`` (``s`` formatted
        with ``:g``) computed on the same estimates; the other columns do not change.

    Returns
    -------
    pandas.DataFrame
        One row per ``(epsilon, repeat, mechanism, k)`` with ``kld``, ``se``, ``re``,
        ``ncr`` and ``se_theory`` (exact expected ``se``), then the ``kld@<s>`` columns.
    """
    import pandas as pd

    c = check_counts(counts)
    d = c.size
    grid = tuple(check_epsilon(e) for e in epsilons)
    if not grid:
        raise ValueError("epsilons is empty")
    kk = tuple(check_positive_int(k, "k") for k in ks)
    if not kk or max(kk) > d:
        raise ValueError(f"every k must lie in 1..d={d}, got {ks!r}")
    names = check_mechanism_names(mechanisms, tuple(MECHANISMS))
    config = check_run_config(config)
    extra = tuple(float(s) for s in kld_smoothings)
    if not all(math.isfinite(s) and s > 0 for s in extra):
        raise ValueError(f"every KLD smoothing must be a finite number > 0, got {kld_smoothings!r}")
    n = int(c.sum())
    f = c / n
    order = metrics.top_k_items(c, max(kk))  # rank order, ties by index

    def point(eps: float, gen: np.random.Generator) -> list[dict[str, Any]]:
        oracles = {name: make_oracle(name, d, eps) for name in names}
        theory = {name: o.variance(c)[order] / n**2 for name, o in oracles.items()}
        rows = []
        for rep in range(config.repeats):
            for name, oracle in oracles.items():
                est = simulate_estimate(oracle, c, gen) / n
                # the true top-max(k) in rank order: the metrics on the true top-k see the
                # same items (ties by index) on these short vectors as on the full ones
                top_f, top_est = f[order], est[order]
                for k in kk:
                    rows.append({
                        "epsilon": eps, "repeat": rep, "mechanism": name, "k": k,
                        "kld": metrics.topk_kl_divergence(top_f, top_est, k, smoothing=KLD_SMOOTHING),
                        "se": metrics.squared_error_topk(top_f, top_est, k),
                        "re": metrics.relative_error_topk(top_f, top_est, k, aggregate="median"),
                        "ncr": metrics.ncr(f, est, k),
                        "se_theory": float(theory[name][:k].mean()),
                        **{f"kld@{sm:g}": metrics.topk_kl_divergence(top_f, top_est, k, smoothing=sm)
                           for sm in extra},
                    })
        return rows

    return pd.DataFrame(list(chain.from_iterable(config.map(point, grid, "epsilon"))))


def _cell_keys(frame: Any) -> list[str]:
    return [key for key in ("dataset", "k", "epsilon") if key in frame.columns]


def fhr_verdicts(frame: Any, metric: str, *, rivals: Sequence[str] = PAPER_RIVALS, z: float | None = None) -> Any:
    """FHR against each rival in every cell (dataset, ``k``, budget) of a :func:`run_epsilons` frame.

    The test is stated, never read off a figure (:mod:`ldpkit.experiments.verdicts`):

    * ``se``: the exact expected squared errors (column ``se_theory``),
      :func:`~ldpkit.experiments.verdicts.exact_verdict`;
    * ``kld``, ``re``, ``ncr``: the runs paired by ``repeat`` (the same data and stream index),
      :func:`~ldpkit.experiments.verdicts.paired_verdict` with ``z`` standard errors (default
      :data:`~ldpkit.experiments.verdicts.VERDICT_Z`); ``ncr`` is a score (higher is better);
    * ``kld`` with ``kld@<s>`` columns (:func:`run_epsilons` ``kld_smoothings``): the paired
      verdict at the default smoothing and at every other one must name the same winner,
      otherwise the smoothing decides the order and the rival's verdict is undecided.

    Parameters
    ----------
    frame
        Rows ``(dataset, epsilon, repeat, mechanism, k)``; ``dataset`` may be absent.
    metric
        One of :data:`METRICS`.
    rivals
        The mechanisms FHR is compared with (default: the paper's, :data:`PAPER_RIVALS`).
    z
        Standard errors a paired difference must exceed.

    Returns
    -------
    pandas.DataFrame
        One row per cell: the keys, ``vs <rival>`` (the winner's name or ``"undecided"``),
        ``outcome`` (:data:`BEST` when FHR beats every rival, :data:`BEATEN` when a rival
        beats FHR, else ``"undecided"``) and ``undecided_by`` (``"smoothing"`` when a KLD
        verdict changed with the smoothing, ``"noise"`` for another undecided cell, ``""``
        for a decided one).

    Examples
    --------
    >>> import numpy as np
    >>> frame = run_epsilons(np.arange(60, 20, -1), [0.5, 3.0], ks=(5,), config=RunConfig(repeats=3, seed=1))
    >>> cells = fhr_verdicts(frame, "se")
    >>> cells["vs OUE"].tolist(), cells["outcome"].tolist()
    (['FHR', 'OUE'], ['FHR best', 'FHR beaten'])
    >>> fhr_verdicts(frame, "ncr")["undecided_by"].tolist()
    ['noise', 'noise']
    """
    import pandas as pd

    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; choose from {METRICS}")
    keys = _cell_keys(frame)
    names = check_mechanism_names(tuple(rivals), tuple(MECHANISMS))
    if "FHR" in names:
        raise ValueError("the rivals must not include FHR")
    exact = metric == "se"
    columns = ["se_theory"] if exact else [metric] + sorted(
        (c for c in frame.columns if metric == "kld" and c.startswith("kld@")), key=lambda c: float(c[4:]))
    missing = [c for c in (*keys, "mechanism", "repeat", *columns) if c not in frame.columns]
    if missing:
        raise ValueError(f"columns {missing} not in the frame; it has {list(frame.columns)}")
    lower = metric not in HIGHER_IS_BETTER
    rows = []
    for key, cell in frame.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        by_mech = {name: part.sort_values("repeat") for name, part in cell.groupby("mechanism")}
        for name in ("FHR", *names):
            if name not in by_mech:
                raise ValueError(f"cell {dict(zip(keys, key))}: no rows of {name!r}")
        row: dict[str, Any] = dict(zip(keys, key))
        winners, by_smoothing = [], False
        for rival in names:
            fhr, other = by_mech["FHR"], by_mech[rival]
            if exact:
                verdict = exact_verdict("FHR", fhr["se_theory"].mean(), rival, other["se_theory"].mean())
                winner = verdict.winner
            else:
                if list(fhr["repeat"]) != list(other["repeat"]):
                    raise ValueError(f"cell {dict(zip(keys, key))}: the runs of FHR and {rival} differ")
                found = {paired_verdict("FHR", fhr[c].to_numpy(), rival, other[c].to_numpy(), z=z,
                                        lower_is_better=lower).winner for c in columns}
                winner = found.pop() if len(found) == 1 else None
                by_smoothing |= len(found) > 0
            winners.append(winner)
            row[f"vs {rival}"] = winner or UNDECIDED
        if any(w is not None and w != "FHR" for w in winners):
            row["outcome"], row["undecided_by"] = BEATEN, ""
        elif all(w == "FHR" for w in winners):
            row["outcome"], row["undecided_by"] = BEST, ""
        else:
            row["outcome"], row["undecided_by"] = UNDECIDED, "smoothing" if by_smoothing else "noise"
        rows.append(row)
    return pd.DataFrame(rows)


def claim_verdict(cells: Any, *, below: float = CROSSOVER_EPSILON) -> dict[str, Any]:
    """The verdict on the paper's "FHR best" from the cells of :func:`fhr_verdicts`, budgets ``< below``.

    Inside the range the claim is ``"differs"`` when a cell has FHR beaten, ``"reproduced"``
    when no cell has FHR beaten and FHR is best in more than half of the cells, and
    ``"undecided"`` otherwise: a claim the test supports in a few cells and cannot decide in the
    rest is not reproduced.  The cells at budgets ``>= below`` are counted apart (``outside_*``).

    Examples
    --------
    >>> import pandas as pd
    >>> cells = pd.DataFrame({"epsilon": [0.25, 0.5, 1.0, 2.0], "outcome": [BEST, BEST, "undecided", BEATEN],
    ...                       "undecided_by": ["", "", "noise", ""]})
    >>> v = claim_verdict(cells, below=1.76)
    >>> v["verdict"], v["cells"], v["best"], v["undecided_noise"], v["outside_beaten"]
    ('reproduced', 3, 2, 1, 1)
    >>> claim_verdict(cells.iloc[1:], below=1.76)["verdict"]
    'undecided'
    """
    eps = np.asarray(cells["epsilon"], dtype=float)
    inside = cells[eps < below]
    outside = cells[eps >= below]

    def count(part: Any, outcome: str, why: str | None = None) -> int:
        hit = part["outcome"] == outcome
        if why is not None:
            hit &= part["undecided_by"] == why
        return int(hit.sum())

    summary: dict[str, Any] = {
        "below": float(below), "cells": len(inside), "best": count(inside, BEST), "beaten": count(inside, BEATEN),
        "undecided_noise": count(inside, UNDECIDED, "noise"),
        "undecided_smoothing": count(inside, UNDECIDED, "smoothing"),
        "outside_cells": len(outside), "outside_best": count(outside, BEST),
        "outside_beaten": count(outside, BEATEN), "outside_undecided": count(outside, UNDECIDED),
    }
    if summary["beaten"]:
        summary["verdict"] = "differs"
    elif 2 * summary["best"] > summary["cells"]:
        summary["verdict"] = "reproduced"
    else:
        summary["verdict"] = UNDECIDED
    return summary


def report_bits(oracle: FrequencyOracle[Any]) -> int:
    """Bits one user sends: OLH a 64-bit seed and a bucket, unary encodings ``d``, FHR two positions, HR one."""
    if isinstance(oracle, OLH):
        return 64 + math.ceil(math.log2(oracle.g))
    if isinstance(oracle, (OUE, RAPPOR)):
        return oracle.d
    if isinstance(oracle, FHR):
        return 2 * (oracle.K.bit_length() - 1)
    if isinstance(oracle, HR):
        return oracle.K.bit_length() - 1
    raise ValueError(f"no report size known for {type(oracle).__name__}")


def measure_costs(
    n: int, d: int, epsilon: float, *, mechanisms: Sequence[str] = COST_MECHANISMS, rng: Any = None
) -> Any:
    """The paper's Table 2, measured: bits per report, client and aggregation time at ``n`` users.

    The users hold items drawn uniformly from ``d``; each mechanism perturbs them (timed as
    ``perturb_s``) and aggregates the reports (``aggregate_s``, the server's work).
    Timings depend on the machine.
    """
    import pandas as pd

    n = check_positive_int(n, "n")
    names = check_mechanism_names(mechanisms, tuple(COST_MECHANISMS))
    gen = as_generator(rng)
    items = gen.integers(0, d, size=n)
    rows = []
    for name in names:
        oracle = make_oracle(name, d, epsilon)
        start = time.perf_counter()
        reports = oracle.perturb(items, rng=gen)
        mid = time.perf_counter()
        oracle.aggregate(reports)
        end = time.perf_counter()
        rows.append({"mechanism": name, "bits_per_report": report_bits(oracle),
                     "perturb_s": mid - start, "aggregate_s": end - mid})
    return pd.DataFrame(rows).set_index("mechanism")
