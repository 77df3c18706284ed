"""Closed forms of the FLDP chapter (``book/fldp.md``) that live in the kit.

* :meth:`~ldpkit.hadamard.FHR.signed_supports` against a direct count on the dense matrix;
* :meth:`~ldpkit.hadamard.FHR.best_linear_estimate`: exact per-user mean and variance by
  enumerating every output of the channel (no Monte Carlo), then a seeded Monte Carlo check
  with a tolerance derived from the exact variance;
* the range of epsilon where FHR's variance beats OUE's (``2 ln(1 + sqrt 2)``), and HR's
  non-holder variance being OUE's plus one.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpkit import FHR, HR, OUE
from ldpkit.hadamard import sylvester

Z_TOL = 4.0


@pytest.mark.parametrize("d", [3, 6, 7, 12])
def test_signed_supports_count_the_signed_contributions(d: int) -> None:
    fhr = FHR(d, 0.7)
    rng = np.random.default_rng(d)
    reports = fhr.perturb(rng.integers(0, d, size=500), rng=rng)
    s, t = fhr.signed_supports(reports)
    rows = sylvester(fhr.K)[1 : d + 1]
    a, z = reports.plus, reports.minus
    assert np.array_equal(s, ((rows[:, a] == 1) & (rows[:, z] == -1)).sum(axis=1))
    assert np.array_equal(t, ((rows[:, a] == -1) & (rows[:, z] == 1)).sum(axis=1))
    assert np.array_equal(s - t, fhr.aggregate(reports))


@pytest.mark.parametrize("eps", [0.01, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("d", [3, 6, 15])
def test_best_linear_estimator_exact_moments(d: int, eps: float) -> None:
    fhr = FHR(d, eps)
    ex = fhr.channel().to_explicit()
    a, z = np.array(ex.output_labels).T
    rows = sylvester(fhr.K)[1 : d + 1]
    s = (rows[:, a] == 1) & (rows[:, z] == -1)  # (item, output)
    t = (rows[:, a] == -1) & (rows[:, z] == 1)
    b = 1 / (1 + 2 * fhr.lam**2)  # the chapter's weights b (4p - 1, 4q - 1, -1)
    w_plus, w_minus, w_zero = b * (4 * fhr.p - 1), b * (4 * fhr.q - 1), -b
    contrib = np.where(s, w_plus, np.where(t, w_minus, w_zero))  # per-user term
    mean = ex.matrix @ contrib.T  # (input, item)
    var = ex.matrix @ (contrib.T**2) - mean**2
    np.testing.assert_allclose(mean, np.eye(d), atol=1e-12)
    counts = np.arange(1, d + 1)
    np.testing.assert_allclose(fhr.best_linear_variance(counts), counts @ var, rtol=1e-10)
    # the non-holder term is 1 / (1 + 2 tanh^2(eps/2)) <= 1, below the paper's estimator's
    lam = math.tanh(eps / 2)
    off = ~np.eye(d, dtype=bool)
    np.testing.assert_allclose(var[off], 1 / (1 + 2 * lam**2), rtol=1e-10)
    assert np.all(fhr.best_linear_variance(counts) <= fhr.variance(counts) * (1 + 1e-12))


def test_best_linear_estimator_monte_carlo() -> None:
    fhr = FHR(6, 0.05)
    counts = np.array([60, 30, 10, 0, 0, 100])
    items = np.repeat(np.arange(6), counts)
    var = fhr.best_linear_variance(counts)
    trials = 600
    rng = np.random.default_rng(20220314)
    est = np.stack([fhr.best_linear_estimate(fhr.perturb(items, rng=rng)) for _ in range(trials)])
    z_mean = (est.mean(axis=0) - counts) / np.sqrt(var / trials)
    z_var = (est.var(axis=0, ddof=1) / var - 1) / math.sqrt(2 / (trials - 1))
    assert np.all(np.abs(z_mean) < Z_TOL) and np.all(np.abs(z_var) < Z_TOL)
    # power: the paper's estimator's variance is hundreds of times larger at this budget
    assert np.all(fhr.variance(counts) > 100 * var)


def test_fhr_beats_oue_exactly_below_two_arsinh_one() -> None:
    eps_star = 2 * math.log(1 + math.sqrt(2))
    assert math.isclose(eps_star, 2 * math.asinh(1.0))
    nonholder = [0] + [0] * 8 + [1000]
    for eps in np.linspace(0.02, 5.0, 250):
        v_fhr = FHR(10, eps).variance(nonholder)[0]
        v_oue = OUE(10, eps).variance(nonholder)[0]
        v_hr = HR(10, eps).variance(nonholder)[0]
        assert (v_fhr < v_oue) == (eps < eps_star)
        assert math.isclose(v_hr, v_oue + 1000, rel_tol=1e-9)
    at = FHR(10, eps_star).variance(nonholder)[0]
    assert math.isclose(at, OUE(10, eps_star).variance(nonholder)[0], rel_tol=1e-9)
