"""Tests for ldpkit.hadamard_mechanism: HM's supports and exact variance (sympy, simulation), its channel
as Hadamard Response on H_2K, the closed forms at large d, and pure-ldp 1.2.0's estimates from the same
reports.

The generic checks (sampling law against the channel, declared guarantee, unbiasedness with the
declared variance, aggregate simulation against the per-user path, report files, bad inputs) run on
every registered HM instance in ``tests/test_contract.py``; the closed forms (LDP, ID-LDP, ULDP, LIP,
MIP, FLDP) are compared with enumeration in ``tests/test_notions.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from conftest import assert_variance_with_power
from ldpkit import HR, accountant
from ldpkit.hadamard import sylvester
from ldpkit.hadamard_mechanism import HM, HMChannel, hm_order


def test_supports_and_variance_by_sympy() -> None:
    """A holder supports its item with probability p, any other user with 1/2; the pure estimator's
    variance is then n / tanh^2(eps/2) - c."""
    eps, n, c = sp.symbols("epsilon n c", positive=True)
    p = sp.exp(eps) / (sp.exp(eps) + 1)
    q = sp.Rational(1, 2)
    var = (c * p * (1 - p) + (n - c) * q * (1 - q)) / (p - q) ** 2
    assert sp.simplify((var - (n / sp.tanh(eps / 2) ** 2 - c)).rewrite(sp.exp)) == 0
    hm = HM(8, 1.0)
    mat = hm.channel().to_explicit().matrix
    h = sylvester(8)
    # support of item i by output (j, s): s H[j, i] = +1; columns j (s = +1) then j (s = -1)
    support = np.hstack([h > 0, h < 0]).T           # (2K outputs, items)
    prob = mat @ support                            # P(item i supported | input x)
    np.testing.assert_allclose(np.diag(prob), hm.p, rtol=1e-14)
    np.testing.assert_allclose(prob[~np.eye(8, dtype=bool)], 0.5, rtol=1e-14)
    counts = np.array([30, 20, 10, 5, 5, 0, 0, 0])
    np.testing.assert_allclose(hm.variance(counts), counts.sum() / math.tanh(0.5) ** 2 - counts, rtol=1e-13)


def test_variance_by_simulation_with_power() -> None:
    """Per-user estimates have the exact variance; the variance of a pure protocol with q = 1 - p (HM read
    as binary randomised response on the item's own sign), about a quarter of it, is rejected."""
    hm = HM(5, 1.0)
    counts = np.array([300, 100, 60, 30, 10])
    users = np.repeat(np.arange(5), counts)
    r = 400
    est = np.stack([hm.estimate(hm.perturb(users, rng=s)) for s in range(r)])
    var = hm.variance(counts)
    assert_variance_with_power(est, counts, var, counts.sum() * hm.p * hm.q / (hm.p - hm.q) ** 2)


@pytest.mark.parametrize("scale", [1, 20])
def test_both_aggregate_simulations_follow_the_exact_variance(scale: int) -> None:
    """``simulate`` draws per user below ``d K`` users and per item above (the per-item draw costs
    ``O(d K)``, hours at Kosarak's size); each path is unbiased with the exact variance, and the
    variance of a pure protocol with q = 1 - p is rejected."""
    hm = HM(40, 1.0)
    counts = np.zeros(40, dtype=np.int64)
    counts[:8] = np.array([90, 60, 40, 30, 20, 10, 5, 5]) * scale  # 260 users (< d K = 2560), then 5200
    assert (counts.sum() < hm.d * hm.K) == (scale == 1)
    r = 400
    est = hm.simulate(counts, rng=np.random.default_rng(scale), trials=r)
    var = hm.variance(counts)
    assert_variance_with_power(est, counts, var, counts.sum() * hm.p * hm.q / (hm.p - hm.q) ** 2)


@pytest.mark.parametrize("d", [3, 4, 6, 8])
def test_hm_is_hadamard_response_on_h2k_rows_k_plus_x(d: int) -> None:
    """P((j, s) | x) = (1 + lam H_2K[K + x, j + K [s = -1]]) / 2K: HR's law on the rows K..K+d-1 of H_2K."""
    hm = HM(d, 1.0)
    k = hm.K
    rows = sylvester(2 * k)[k : k + d]
    hr_law = np.where(rows > 0, 2 * hm.p, 2 * hm.q) / (2 * k)
    np.testing.assert_allclose(hm.channel().to_explicit().matrix, hr_law, rtol=1e-14)
    # the same pure protocol as HR (supports p and 1/2): the same variance, the same LDP value
    counts = np.arange(1, d + 1) * 7
    np.testing.assert_allclose(hm.variance(counts), HR(d, 1.0).variance(counts), rtol=1e-13)
    assert accountant.ldp_epsilon(hm) == pytest.approx(accountant.ldp_epsilon(HR(d, 1.0)), rel=1e-12)


def test_closed_forms_without_enumeration() -> None:
    hm = HM(3000, 2.0)
    prior = np.random.default_rng(0).dirichlet(np.ones(3000))
    assert accountant.ldp_epsilon(hm) == pytest.approx(2.0, rel=1e-12)
    assert accountant.uldp_epsilon(hm, sensitive=[0]) == pytest.approx(2.0, rel=1e-12)
    lip = accountant.lip_epsilon(hm, prior)
    assert 0 < lip <= 2.0 + 1e-12
    assert 0 < accountant.mutual_information(hm, prior) <= lip   # eps-LIP implies eps-MIP
    small = HMChannel(6, 8, hm.p, hm.q)
    p6 = prior[:6] / prior[:6].sum()
    assert accountant.lip_epsilon(small, p6) == pytest.approx(accountant.lip_epsilon(small.to_explicit(), p6), rel=1e-10)
    assert accountant.mutual_information(small, p6) == pytest.approx(
        accountant.mutual_information(small.to_explicit(), p6), rel=1e-10)


def test_against_pure_ldp_from_the_same_reports() -> None:
    """pure-ldp 1.2.0's HadamardMechServer (t = 1) sums the same (coefficient, sign) pairs and inverts."""
    pytest.importorskip("pure_ldp")
    from pure_ldp.frequency_oracles.hadamard_mechanism import HadamardMechServer

    d, eps = 16, 1.0
    hm = HM(d, eps)
    assert hm.K == hm_order(d) == d
    items = np.random.default_rng(5).integers(0, d, size=4000)
    reports = hm.perturb(items, rng=6)
    server = HadamardMechServer(eps, d, t=1, index_mapper=lambda x: x)
    for j, s in zip(reports.coefficient.tolist(), reports.sign.tolist()):
        server.aggregate([(j, s)])
    theirs = np.array([server.estimate(i, suppress_warnings=True) for i in range(d)])
    np.testing.assert_allclose(theirs, hm.estimate(reports), rtol=1e-12, atol=1e-9)


def test_pure_ldp_client_follows_the_channel() -> None:
    """pure-ldp's client (t = 1): its output law matches HM's channel (chi-square at 1e-6)."""
    pytest.importorskip("pure_ldp")
    import random

    from pure_ldp.frequency_oracles.hadamard_mechanism import HadamardMechClient

    from ldpkit.testing import assert_matches_distribution

    d = 4
    hm = HM(d, 1.0)
    client = HadamardMechClient(1.0, d, t=1, index_mapper=lambda x: x)
    random.seed(0)
    mat = hm.channel().to_explicit().matrix
    for x in range(d):
        out = [list(client.privatise(x))[0] for _ in range(20_000)]
        idx = np.array([j + d * (s < 0) for j, s in out])
        assert_matches_distribution(np.bincount(idx, minlength=2 * d), mat[x], 1e-6 / d, f"pure-ldp HM, input {x}")
