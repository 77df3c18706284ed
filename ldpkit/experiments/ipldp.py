"""The evaluation protocol of the IPLDP paper (``li2023ipldp``, Sec. 7), rerun.

The paper compares IPRR (``(D_S, E)``-IPLDP) with KRR (GRR at ``eps_min``, so
``eps_min``-LDP), uRR (``(D_S, eps_min)``-ULDP, the non-sensitive items being those of
IPRR) and IDUE (``E``-MinID-LDP, opt0, opt1, opt2).  The budgets ``E`` come from the paper's
assignment (:func:`ldpkit.budgets.ipldp_levels`: items ranked by count, the top fraction
``NR`` non-sensitive, the rest split into ``LC`` levels evenly spaced on
``[eps_min, eps_max]``), made once from the counts of the whole dataset.  Experiments #1-#3
and #5 sweep the sample ratio ``SR`` (``round(SR * n)`` users), #4 sweeps ``NR``.

Estimators (the paper's, plus the one with a closed-form loss):

* ``"empirical"``: the unbiased estimator of the pure protocol (the paper's eq. (12) for
  IPRR, KRR and uRR; eq. (7) of the ID-LDP paper for IDUE).  Its exact expected MSE is
  ``sum_x Var[c_hat_x] / n`` for the given counts (column ``mse_theory``).
* ``"NS"``: the empirical estimate projected onto ``{c >= 0, sum c = n}`` by Norm-Sub
  (:func:`ldpkit.postprocess.norm_sub`).  No closed form for its loss.
* ``"MLE"``: for IPRR, KRR and uRR the exact maximum-likelihood estimate.  All three are
  keep-or-resample channels (report the true item with probability ``keep = p - q``,
  otherwise an item drawn from ``pi = q / (1 - keep)``: uniform on every item for KRR,
  uniform on ``D_S`` for uRR, ``r / sum r`` for IPRR), whose likelihood is maximised in closed
  form by their ``mle`` method (:func:`ldpkit.base.item_report_mle`).  For IDUE the reports are bit vectors and
  the aggregate simulation keeps only the per-bit counts ``C_j``, whose joint law has no
  tractable likelihood; ``"MLE"`` there is the maximum of the *per-bit composite likelihood*
  ``sum_j C_j log q_j + (n - C_j) log(1 - q_j)``, ``q_j = b_j + (a_j - b_j) p_j``, over the
  simplex (:func:`bitwise_mle`): each ``C_j`` is exactly ``Binomial(n, q_j)``, the objective
  is separable and concave, and its maximiser is found by water-filling on one multiplier.
  No closed form for its loss.

Metrics (the paper's eq. (25)): ``mse = sum_x (c_hat_x - c_x)^2 / n`` and
``re = sum_x |c_hat_x - c_x| / c_x`` over every item, ``c`` the true counts of the users
taking part (:func:`ldpkit.metrics.relative_error_sum`).

Simulation.  For ``SR < 1`` every repeat draws its own users: the counts of a uniform sample
of ``round(SR * n)`` users without replacement (one multivariate hypergeometric draw).  The
reports are then drawn at the aggregate level, exactly in distribution
(:meth:`~ldpkit.base.FrequencyOracle.simulate`: for the keep-or-resample mechanisms one
binomial per input item and one multinomial for the resampled reports).  Every mechanism of
a repeat sees the same users.  ``config.scale`` selects users of a dataset and must be applied
before (:func:`~ldpkit.experiments.subsample`), as in :mod:`ldpkit.experiments.idldp`.  Every
point of the swept grid (an ``SR`` or an ``NR``) draws from its own stream spawned from
``config.seed`` (:meth:`~ldpkit.experiments.RunConfig.map`), so ``config.jobs`` points can run
in parallel with the same results.
IPLDP experiments chapter, :ref:`ipldp-experiments`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any, cast

import numpy as np

from .. import metrics
from .._validation import check_counts, check_epsilon, check_positive_int, check_real, real_array
from ..base import ItemReportOracle, SupportOracle
from ..budgets import IPLDPAssignment, ipldp_levels
from ..grr import GRR
from ..idue import IDUE
from ..iprr import IPRR
from ..postprocess import norm_sub
from ..urr import URR
from .config import RunConfig, check_mechanism_names, check_run_config
from .idldp import SolutionCache

__all__ = [
    "MECHANISMS",
    "bitwise_mle",
    "estimate_all",
    "make_oracle",
    "run_nonsensitive_ratio",
    "run_sample_ratio",
]

#: mechanisms understood by the protocol; ``KRR-emax`` and ``URR-emax`` (GRR and uRR at the
#: largest finite budget, the LDP and ULDP epsilons IPRR actually has) are not in the paper:
#: they serve the comparisons at matched privacy
MECHANISMS = ("IPRR", "KRR", "URR", "KRR-emax", "URR-emax", "IDUE-opt0", "IDUE-opt1", "IDUE-opt2")


def make_oracle(name: str, epsilons: np.ndarray, cache: SolutionCache | None = None) -> SupportOracle[Any]:
    """The mechanism ``name`` for per-item budgets ``epsilons`` (``inf`` = non-sensitive).

    ``IPRR`` uses ``epsilons`` as they are; ``KRR`` is GRR at ``eps_min`` on every item; ``URR``
    is uRR at ``eps_min`` with the finite-budget items sensitive (``KRR-emax`` and ``URR-emax``
    at the largest finite budget); ``IDUE-optK`` needs every budget finite.
    """
    if name not in MECHANISMS:
        raise ValueError(f"unknown mechanism {name!r}; choose from {MECHANISMS}")
    eps = real_array(epsilons, "epsilons")
    finite = np.isfinite(eps)
    if not finite.any():
        raise ValueError("epsilons has no finite budget: at least one item must be sensitive")
    d = eps.size
    if name == "IPRR":
        return IPRR(eps)
    if name == "KRR":
        return GRR(d, float(eps[finite].min()))
    if name == "KRR-emax":
        return GRR(d, float(eps[finite].max()))
    if name == "URR":
        return URR(d, float(eps[finite].min()), sensitive=finite)
    if name == "URR-emax":
        return URR(d, float(eps[finite].max()), sensitive=finite)
    if not finite.all():
        raise ValueError(f"{name} needs a finite budget for every item (IDUE has no non-sensitive items)")
    if cache is None:
        cache = SolutionCache()
    return IDUE(eps, model=cache.get(name.split("-", 1)[1], eps))


def bitwise_mle(support: np.ndarray, n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Maximiser over the simplex of the per-bit composite likelihood of a unary encoding.

    Maximises ``sum_j C_j log q_j + (n - C_j) log(1 - q_j)`` with ``q_j = b_j + (a_j - b_j) p_j``
    over ``p >= 0, sum p = 1`` (``a_j > b_j``).  The objective is separable and concave; at the
    optimum ``g_j'(p_j) = lam`` for ``0 < p_j < 1`` with one multiplier ``lam``.  For a given
    ``lam`` each ``q_j`` solves ``t q^2 - (t + n) q + C = 0`` with ``t = lam / (a_j - b_j)``
    (the root in ``[0, 1]``, clipped to ``[b_j, a_j]``); ``sum_j p_j(lam)`` decreases in
    ``lam`` and the root is found by bisection to machine precision.  Returns the distribution.
    """
    C = np.asarray(support, dtype=float)
    delta = a - b
    lo_q, hi_q = np.maximum(b, 1e-300), np.minimum(a, 1 - 1e-16)

    def slope(q: np.ndarray) -> np.ndarray:
        return cast("np.ndarray", delta * (C / q - (n - C) / (1.0 - q)))

    def p_of(lam: float) -> np.ndarray:
        t = lam / delta
        with np.errstate(divide="ignore", invalid="ignore"):
            root = 2.0 * C / ((t + n) + np.sqrt((t + n) ** 2 - 4.0 * t * C))
            zero = np.where(t < -n, 1.0 + n / t, 0.0)
        q = np.where(C > 0, root, zero)
        return cast("np.ndarray", np.clip((q - b) / delta, 0.0, 1.0))

    lo, hi = float(slope(hi_q).min()), float(slope(lo_q).max())
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if p_of(mid).sum() > 1.0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * max(1.0, abs(mid)):
            break
    p = p_of(0.5 * (lo + hi))
    return cast("np.ndarray", p / p.sum())


def estimate_all(oracle: SupportOracle[Any], counts: np.ndarray, gen: np.random.Generator) -> dict[str, np.ndarray]:
    """One aggregate-level run of ``oracle`` on ``counts``: estimated counts by estimator."""
    n = int(counts.sum())
    support = oracle.simulate_support(counts, rng=gen)
    empirical = oracle.estimate_from_support(support, n)
    if isinstance(oracle, ItemReportOracle):
        mle = n * oracle.mle(support)
    else:
        p = np.broadcast_to(np.asarray(oracle.p_support, dtype=np.float64), (oracle.d,))
        q = np.broadcast_to(np.asarray(oracle.q_support, dtype=np.float64), (oracle.d,))
        mle = n * bitwise_mle(support, n, p, q)
    return {"empirical": empirical, "NS": norm_sub(empirical, n), "MLE": mle}


def _check_grid(values: Iterable[float], name: str, low: float, low_open: bool) -> tuple[float, ...]:
    grid = tuple(check_real(v, name, low, 1.0, low_open=low_open) for v in values)
    if not grid:
        raise ValueError(f"{name} is empty")
    return grid


def _sample(counts: np.ndarray, size: int, gen: np.random.Generator) -> np.ndarray:
    if size == int(counts.sum()):
        return counts
    return gen.multivariate_hypergeometric(counts, size).astype(np.int64)


def _repeat_rows(
    key: dict[str, Any], counts: np.ndarray, users: int, oracles: dict[str, SupportOracle[Any]], repeats: int,
    gen: np.random.Generator,
) -> list[dict[str, Any]]:
    rows = []
    for rep in range(repeats):
        sample = _sample(counts, users, gen)
        true = sample.astype(float)
        present = sample > 0
        for name, oracle in oracles.items():
            theory = oracle.mse(sample) / users
            for est_name, est in estimate_all(oracle, sample, gen).items():
                rows.append({
                    **key, "n": users, "repeat": rep, "mechanism": name, "estimator": est_name,
                    "mse": float(np.sum((est - true) ** 2) / users),
                    "re": metrics.relative_error_sum(true[present], est[present]),
                    "mse_theory": theory if est_name == "empirical" else math.nan,
                })
    return rows


def _frame(rows: list[dict[str, Any]]) -> Any:
    import pandas as pd

    return pd.DataFrame(rows)


def run_sample_ratio(
    counts: Any,
    srs: Iterable[float],
    *,
    eps_min: float,
    eps_max: float,
    lc: int = 4,
    nr: float = 0.5,
    mechanisms: Sequence[str] = ("IPRR", "KRR", "URR"),
    config: RunConfig | None = None,
    cache: SolutionCache | None = None,
) -> Any:
    """Experiments #1-#3 and #5: loss against the sample ratio ``SR`` at fixed budgets.

    Parameters
    ----------
    counts
        True counts of the whole dataset (the budget assignment ranks the items by them).
    srs
        Sample ratios in ``(0, 1]``; each repeat draws ``round(SR * n)`` users without
        replacement (at least one).
    eps_min, eps_max, lc, nr
        The budget assignment (:func:`ldpkit.budgets.ipldp_levels`).
    mechanisms
        Subset of :data:`MECHANISMS`.
    config
        ``repeats`` (the paper uses 100), ``seed``, ``progress``; ``scale`` must be 1.
    cache
        IDUE solutions (results do not depend on it).

    Returns
    -------
    pandas.DataFrame
        One row per ``(sr, repeat, mechanism, estimator)`` with ``n`` (users), ``mse``, ``re``
        and ``mse_theory`` (exact expected ``mse`` of the ``"empirical"`` estimator for that
        repeat's users; NaN for NS and MLE, which have no closed form).
    """
    counts = check_counts(counts)
    grid = _check_grid(srs, "srs", 0.0, True)
    names = check_mechanism_names(mechanisms, MECHANISMS)
    config = check_run_config(config)
    if cache is not None and not isinstance(cache, SolutionCache):
        raise ValueError(f"cache must be a SolutionCache or None, got {type(cache).__name__}")
    assignment = ipldp_levels(counts, nr, lc, eps_min, eps_max)
    oracles = {name: make_oracle(name, assignment.epsilons, cache) for name in names}
    n = int(counts.sum())

    def point(sr: float, gen: np.random.Generator) -> list[dict[str, Any]]:
        return _repeat_rows({"sr": sr}, counts, max(1, round(sr * n)), oracles, config.repeats, gen)

    return _frame(list(chain.from_iterable(config.map(point, grid, "SR"))))


def run_nonsensitive_ratio(
    counts: Any,
    nrs: Iterable[float],
    *,
    eps_min: float,
    eps_max: float,
    lc: int = 4,
    sr: float = 1.0,
    mechanisms: Sequence[str] = ("IPRR", "URR"),
    config: RunConfig | None = None,
) -> Any:
    """Experiment #4: loss against the non-sensitive ratio ``NR`` (budgets reassigned per ``NR``).

    Same columns as :func:`run_sample_ratio` with ``nr`` in place of ``sr``; IDUE mechanisms
    are refused (they have no non-sensitive items).
    """
    counts = check_counts(counts)
    grid = _check_grid(nrs, "nrs", 0.0, False)
    names = check_mechanism_names(mechanisms, MECHANISMS)
    if any(name.startswith("IDUE") for name in names):
        raise ValueError("IDUE has no non-sensitive items: experiment #4 compares IPRR, KRR and uRR only")
    sr = _check_grid([sr], "sr", 0.0, True)[0]
    check_positive_int(lc, "lc")
    check_epsilon(eps_min, "eps_min")
    check_epsilon(eps_max, "eps_max")
    config = check_run_config(config)
    assignments: list[IPLDPAssignment] = [ipldp_levels(counts, nr, lc, eps_min, eps_max) for nr in grid]
    users = max(1, round(sr * int(counts.sum())))

    def point(nr_assignment: tuple[float, IPLDPAssignment], gen: np.random.Generator) -> list[dict[str, Any]]:
        nr, assignment = nr_assignment
        oracles = {name: make_oracle(name, assignment.epsilons) for name in names}
        return _repeat_rows({"nr": nr}, counts, users, oracles, config.repeats, gen)

    return _frame(list(chain.from_iterable(config.map(point, zip(grid, assignments), "NR"))))
