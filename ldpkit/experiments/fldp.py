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
checks it against the per-user path with ldpkit's real hash.  FLDP experiments chapter,
:ref:`fldp-experiments`.
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

__all__ = [
    "COST_MECHANISMS",
    "KLD_SMOOTHING",
    "KS",
    "MECHANISMS",
    "METRICS",
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


def make_oracle(name: str, d: int, epsilon: float) -> FrequencyOracle:
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


def simulate_estimate(oracle: FrequencyOracle, counts: np.ndarray, gen: np.random.Generator) -> np.ndarray:
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

    Returns
    -------
    pandas.DataFrame
        One row per ``(epsilon, repeat, mechanism, k)`` with ``kld``, ``se``, ``re``,
        ``ncr`` and ``se_theory`` (exact expected ``se``).
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
                    })
        return rows

    return pd.DataFrame(list(chain.from_iterable(config.map(point, grid, "epsilon"))))


def report_bits(oracle: FrequencyOracle) -> int:
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
