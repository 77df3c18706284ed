"""Tolerances for seeded Monte Carlo checks, derived from the estimator's known variance."""

from __future__ import annotations

import numpy as np

#: number of standard errors allowed; with fixed seeds the tests are deterministic, and a
#: correct implementation fails a 5-sigma check with probability below 6e-7 per comparison.
Z = 5.0


def assert_unbiased(samples: np.ndarray, truth: np.ndarray, variance: np.ndarray, z: float = Z) -> None:
    """Mean of ``R`` i.i.d. estimates is within ``z`` standard errors ``sqrt(variance / R)``."""
    r = samples.shape[0]
    err = np.abs(samples.mean(axis=0) - truth)
    tol = z * np.sqrt(variance / r)
    bad = err > tol
    assert not np.any(bad), f"bias at items {np.flatnonzero(bad)[:5]}: err {err[bad][:5]} > tol {tol[bad][:5]}"


def assert_variance(samples: np.ndarray, variance: np.ndarray, z: float = Z) -> None:
    """Per-item sample variance of ``R`` estimates matches the exact variance.

    For a near-normal estimator the sample variance of ``R`` draws has relative standard
    deviation ``sqrt(2/(R-1))``; every item must lie within ``z`` of those.
    """
    r = samples.shape[0]
    ratio = samples.var(axis=0, ddof=1) / variance
    tol = z * np.sqrt(2.0 / (r - 1))
    bad = np.abs(ratio - 1.0) >= tol
    assert not np.any(bad), f"variance ratio at items {np.flatnonzero(bad)[:5]}: {ratio[bad][:5]} outside 1 +- {tol:.3f}"


def assert_same_distribution(a: np.ndarray, b: np.ndarray, variance: np.ndarray, z: float = Z) -> None:
    """Two independent samples of estimates agree in mean and variance.

    Means: ``|mean_a - mean_b| < z sqrt(var/R_a + var/R_b)``.  Variances: the ratio of
    sample variances has relative sd ``sqrt(2/(R_a-1) + 2/(R_b-1))``.
    """
    ra, rb = a.shape[0], b.shape[0]
    diff = np.abs(a.mean(axis=0) - b.mean(axis=0))
    tol = z * np.sqrt(variance / ra + variance / rb)
    assert np.all(diff < tol), f"means differ: {diff[diff >= tol][:5]} >= {tol[diff >= tol][:5]}"
    ratio = a.var(axis=0, ddof=1) / b.var(axis=0, ddof=1)
    rel = z * np.sqrt(2.0 / (ra - 1) + 2.0 / (rb - 1))
    assert abs(float(np.log(ratio).mean())) < rel, f"variances differ: mean log-ratio {np.log(ratio).mean():.4f}"
