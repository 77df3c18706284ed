"""Tests for ldpkit.histogram: SHE's discrete Laplace noise and exact variance, its privacy by closed
form (MIP refused), THE's bits and its optimal threshold, and the estimates of pure-ldp 1.2.0 and
multi-freq-ldpy 0.2.5 from the same reports.

The generic checks (sampling law of the cells against the channel, declared guarantees,
unbiasedness with the declared variance, aggregate simulation against the per-user path, report
files, bad inputs) run on every registered instance in ``tests/test_contract.py``; the closed forms
are compared with the enumeration of the cells in ``tests/test_notions.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sympy as sp
from scipy.optimize import minimize_scalar

from conftest import assert_variance_with_power
from ldpkit import RAPPOR, accountant
from ldpkit.histogram import GRID_BITS, SHE, THE, LaplaceHistogramChannel, optimal_threshold, threshold_bits
from ldpkit.testing import Z


# ---------------------------------------------------------------------------- SHE
def test_discrete_laplace_variance_by_sympy() -> None:
    """Var of the two-sided geometric law = 2 alpha / (1 - alpha)^2, and -> 8 / eps^2 on a finer grid."""
    a, k = sp.symbols("alpha k", positive=True)
    norm = (1 - a) / (1 + a)
    second = 2 * norm * sp.summation(k**2 * a**k, (k, 1, sp.oo)).rewrite(sp.Piecewise).args[0][0]
    assert sp.simplify(second - 2 * a / (1 - a) ** 2) == 0
    assert sp.simplify(norm * (1 + 2 * sp.summation(a**k, (k, 1, sp.oo)).args[0][0]) - 1) == 0
    eps, m = sp.symbols("epsilon m", positive=True)
    alpha = sp.exp(-eps / (2 * m))
    assert sp.limit(2 * alpha / (1 - alpha) ** 2 / m**2, m, sp.oo) == 8 / eps**2
    for e in (0.1, 1.0, 5.0):
        she = SHE(3, e)
        exact = float((2 * alpha / (1 - alpha) ** 2 / m**2).subs({eps: sp.nsimplify(e), m: 2**GRID_BITS}).evalf(60))
        assert she.noise_variance == pytest.approx(exact, rel=1e-12)
        assert she.noise_variance == pytest.approx(8 / e**2, rel=1e-8)   # O((delta eps)^2) apart
        np.testing.assert_allclose(she.variance([5, 3, 2]), 10 * exact, rtol=1e-12)


def test_she_simulation_and_power_against_the_sensitivity_one_variance() -> None:
    """Per-user estimates: unbiased with the exact variance; the variance of Laplace noise of scale
    1/eps (sensitivity taken as 1, a quarter of the truth) is rejected."""
    she = SHE(4, 1.0)
    counts = np.array([120, 50, 20, 10])
    users = np.repeat(np.arange(4), counts)
    r = 400
    est = np.stack([she.estimate(she.perturb(users, rng=s)) for s in range(r)])
    var = she.variance(counts)
    band = assert_variance_with_power(est, counts, var, counts.sum() * 2 / 1.0**2)
    sim = she.simulate(counts, rng=3, trials=r)   # the exact aggregate simulator agrees
    assert np.all(np.abs(sim.var(axis=0, ddof=1) / var - 1) < band)


def test_she_privacy_by_closed_form() -> None:
    ch = LaplaceHistogramChannel(30, 1.3)          # 3**30 cells: no enumeration anywhere below
    assert accountant.ldp_epsilon(ch) == 1.3
    assert accountant.uldp_epsilon(ch, sensitive=[0]) == 1.3
    prior = np.random.default_rng(0).dirichlet(np.ones(30))
    assert accountant.lip_epsilon(ch, prior) == pytest.approx(accountant.lip_epsilon(RAPPOR(30, 1.3), prior), rel=1e-12)
    assert accountant.minidldp_scale(ch, np.full(30, 1.3)) == pytest.approx(1.0)
    with pytest.raises(accountant.AccountingError, match="coarsening"):
        accountant.mutual_information(ch, prior)
    # the cells keep the extreme ratios: their enumeration gives the same LDP and LIP values
    small = LaplaceHistogramChannel(4, 1.3)
    p4 = prior[:4] / prior[:4].sum()
    assert accountant.ldp_epsilon(small.to_explicit()) == pytest.approx(1.3, rel=1e-9)
    assert accountant.lip_epsilon(small.to_explicit(), p4) == pytest.approx(accountant.lip_epsilon(small, p4), rel=1e-9)


def test_she_against_the_peers_from_the_same_reports() -> None:
    """pure-ldp 1.2.0's HEServer (SHE) and multi-freq-ldpy 0.2.5's HE_Aggregator_MI sum the same vectors."""
    pytest.importorskip("pure_ldp")
    pytest.importorskip("multi_freq_ldpy")
    from multi_freq_ldpy.pure_frequency_oracles.HE import HE_Aggregator_MI
    from pure_ldp.frequency_oracles.histogram_encoding import HEServer

    she = SHE(8, 1.0)
    items = np.random.default_rng(1).integers(0, 8, size=3000)
    reports = she.perturb(items, rng=2)
    mine = she.estimate(reports)
    server = HEServer(1.0, 8, index_mapper=lambda x: x)
    noisy = reports.noisy()
    for row in noisy:
        server.aggregate(row.copy())
    theirs = np.array([server.estimate(i, suppress_warnings=True) for i in range(8)])
    np.testing.assert_allclose(theirs, mine, rtol=0, atol=1e-9 * len(items))
    freq = HE_Aggregator_MI(list(noisy), 8, 1.0, use_thresh=False)
    clipped = np.clip(mine, 0, None)
    np.testing.assert_allclose(freq, clipped / clipped.sum(), atol=1e-12)


# ---------------------------------------------------------------------------- THE
def test_threshold_bits_and_the_optimal_threshold() -> None:
    """p, q from the Laplace tails (sympy); theta* is the minimiser of q(1-q)/(p-q)^2 (numerically and by
    the derivative); pure-ldp's rounded fminbound value lies within its rounding."""
    x, th, e, b = sp.symbols("x theta epsilon b", positive=True)
    lap = sp.exp(-sp.Abs(x) / b) / (2 * b)
    q = sp.integrate(lap.subs(x, x), (x, th, sp.oo))
    p = 1 - sp.integrate(sp.exp(x / b) / (2 * b), (x, -sp.oo, th - 1))   # the holder: 1 + L > theta
    for eps_v, th_v in [(1.0, 0.7), (3.0, 0.55)]:
        subs = {b: 2 / sp.Float(eps_v), th: sp.Float(th_v)}
        assert threshold_bits(eps_v, th_v) == pytest.approx((float(p.subs(subs)), float(q.subs(subs))), rel=1e-12)
    var = (2 * sp.exp(e * th / 2) - 1) / (1 + sp.exp(e * (th - sp.Rational(1, 2))) - 2 * sp.exp(e * th / 2)) ** 2
    dvar = sp.diff(var, th)
    for eps_v in (0.05, 0.5, 1.0, 3.0, 10.0):
        t = optimal_threshold(eps_v)
        assert 0.5 < t < 1
        assert abs(float(dvar.subs({e: eps_v, th: t}))) < 1e-6 * float(var.subs({e: eps_v, th: t}))
        f = sp.lambdify(th, var.subs(e, eps_v))
        res = minimize_scalar(f, bounds=(0.5, 1), method="bounded", options={"xatol": 1e-10})
        assert t == pytest.approx(res.x, abs=1e-6)
        pp, qq = threshold_bits(eps_v, t)
        assert qq * (1 - qq) / (pp - qq) ** 2 <= f(res.x) * (1 + 1e-12)


def test_the_bits_match_thresholded_laplace_noise() -> None:
    """THE's bit probabilities equal the frequencies of 1 + L > theta and L > theta for Laplace L."""
    the = THE(3, 1.0)
    noise = np.random.default_rng(0).laplace(scale=2.0, size=(2, 400_000))
    freq = np.array([(1 + noise[0] > the.theta).mean(), (noise[1] > the.theta).mean()])
    probs = np.array([the.a[0], the.b[0]])
    assert np.all(np.abs(freq - probs) < Z * np.sqrt(probs * (1 - probs) / noise.shape[1]))
    # thresholding is a post-processing of SHE: the bits leak less than eps
    assert accountant.ldp_epsilon(the) < 1.0 and accountant.verify(the).satisfied


def test_the_against_the_peers_from_the_same_reports() -> None:
    """pure-ldp's HEServer(use_the=True) and multi-freq-ldpy's HE_Aggregator_MI(use_thresh=True) threshold the
    same reports; at the threshold each uses, their estimates equal THE's."""
    pytest.importorskip("pure_ldp")
    pytest.importorskip("multi_freq_ldpy")
    from multi_freq_ldpy.pure_frequency_oracles.HE import HE_Aggregator_MI, find_tresh
    from pure_ldp.frequency_oracles.histogram_encoding import HEServer

    d, eps = 8, 1.0
    items = np.random.default_rng(3).integers(0, d, size=3000)
    # pure-ldp: its threshold is fminbound's rounded to 4 decimals
    server = HEServer(eps, d, use_the=True, index_mapper=lambda x: x)
    assert server.theta == pytest.approx(optimal_threshold(eps), abs=1e-4)
    the = THE(d, eps, theta=server.theta)
    bits = the.perturb(items, rng=4).to_dense().astype(float)
    for row in bits:
        server.aggregate(row.copy())
    theirs = np.array([server.estimate(i, suppress_warnings=True) for i in range(d)])
    mine = the.estimate(the.perturb(items, rng=4))
    np.testing.assert_allclose(theirs, mine, rtol=1e-12, atol=1e-9)
    # multi-freq-ldpy: bounded minimize_scalar's threshold, normalised and clipped estimate
    thresh = minimize_scalar(find_tresh, bounds=[0.5, 1], method="bounded", args=(eps,)).x
    assert thresh == pytest.approx(optimal_threshold(eps), abs=1e-4)
    the2 = THE(d, eps, theta=float(thresh))
    reports = the2.perturb(items, rng=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        freq = HE_Aggregator_MI(list(reports.to_dense().astype(float)), d, eps, use_thresh=True)
    est = np.clip(the2.estimate(reports), 0, None)
    np.testing.assert_allclose(freq, est / est.sum(), atol=1e-12)
