"""LDP-Auditor's statistic reproduced on the kit (ldpkit.audit.ldp_auditor) and its registered experiment."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from ldpkit import GRR, OLH, OUE, RAPPOR
from ldpkit.audit import ldp_auditor as la

SMALL = [GRR(6, 1.0), RAPPOR(6, 1.0), OUE(6, 2.0), OLH(6, 1.0), OLH(6, 0.5, g=2), OLH(5, 3.0)]


@pytest.mark.parametrize("mech", SMALL, ids=repr)
def test_closed_forms_match_enumeration(mech):
    G = la.guess_channel(mech)
    assert np.allclose(G.sum(axis=1), 1.0)
    tpr, fpr = la.guess_probabilities(mech)
    assert tpr == pytest.approx(G[0, 0], rel=1e-12) and fpr == pytest.approx(G[-1, 0], rel=1e-12)


@pytest.mark.parametrize("mech", SMALL, ids=repr)
def test_guess_channel_matches_per_user_attack(mech):
    G = la.guess_channel(mech)
    rng = np.random.default_rng(123)
    n = 40_000
    for x in (0, mech.d - 1):
        counts = np.bincount(la.attack(mech, x, n, rng), minlength=mech.d)
        expected = n * G[x]
        keep = expected > 0
        assert counts[~keep].sum() == 0
        chi2 = float(((counts[keep] - expected[keep]) ** 2 / expected[keep]).sum())
        assert stats.chi2.sf(chi2, keep.sum() - 1) > 1e-4


@pytest.mark.parametrize("protocol,k,eps,g", [("OLH", 4, 1.0, 4), ("BLH", 5, 0.7, 2), ("OLH", 3, 2.0, 8)])
def test_ideal_hashing_closed_form_matches_all_hash_functions(protocol, k, eps, g):
    """Their LH with a uniformly random hash: enumerate every hash function [k] -> [g]."""
    assert la._their_g(protocol, eps) == g
    p = math.exp(eps) / (math.exp(eps) + g - 1)
    q = (1 - p) / (g - 1)
    funcs = list(itertools.product(range(g), repeat=k))
    tpr = fpr = 0.0
    for h in funcs:
        for y in range(g):
            members = [i for i in range(k) if h[i] == y]
            guess0 = (1 / len(members) if 0 in members else 0.0) if members else 1 / k
            tpr += (p if h[0] == y else q) * guess0
            fpr += (p if h[k - 1] == y else q) * guess0
    tpr, fpr = tpr / len(funcs), fpr / len(funcs)
    assert la.ideal_guess_probabilities(protocol, k, eps) == pytest.approx((tpr, fpr), rel=1e-12)


def test_ideal_ss_and_ue_closed_forms():
    # UE: the same formula as the kit's RAPPOR and OUE
    assert la.ideal_guess_probabilities("SUE", 7, 1.3) == pytest.approx(la.guess_probabilities(RAPPOR(7, 1.3)))
    assert la.ideal_guess_probabilities("OUE", 7, 1.3) == pytest.approx(la.guess_probabilities(OUE(7, 1.3)))
    # SS: enumerate the subsets at k = 6, eps = 0.5 (subset size 2)
    k, eps = 6, 0.5
    w = int(max(1, np.rint(k / (math.exp(eps) + 1))))
    p = w * math.exp(eps) / (w * math.exp(eps) + k - w)
    tpr = fpr = 0.0
    for x, acc in ((0, "tpr"), (k - 1, "fpr")):
        others = [i for i in range(k) if i != x]
        with_x = list(itertools.combinations(others, w - 1))
        without = list(itertools.combinations(others, w))
        val = sum(p / len(with_x) * ((0 in s or x == 0) / w) for s in with_x)
        val += sum((1 - p) / len(without) * ((0 in s) / w) for s in without)
        tpr, fpr = (val, fpr) if acc == "tpr" else (tpr, val)
    assert la.ideal_guess_probabilities("SS", k, eps) == pytest.approx((tpr, fpr), rel=1e-12)


def test_estimator_matches_statsmodels():
    sm = pytest.importorskip("statsmodels.stats.proportion")
    for tp, fp, n, alpha in [(500_000, 200_000, 10**6, 1e-2), (73, 5, 1000, 0.05), (10, 0, 50, 1e-2), (40, 40, 40, 0.1)]:
        lo = sm.proportion_confint(tp, n, alpha / 2, "beta")[0]
        hi = sm.proportion_confint(fp, n, alpha / 2, "beta")[1]
        assert float(la.ldp_auditor_epsilon(tp, fp, n, alpha)) == pytest.approx(math.log(lo / hi), rel=1e-10)


def test_moments_match_draws():
    tpr, fpr = la.guess_probabilities(OUE(25, 1.0))
    mean, sd = la.ldp_auditor_moments(tpr, fpr, 10**5, 1e-2)
    draws = la.sample_ldp_auditor_statistic(tpr, fpr, 10**5, 1e-2, 4000, rng=7)
    assert abs(draws.mean() - mean) < 4 * sd / math.sqrt(draws.size)
    assert draws.std() == pytest.approx(sd, rel=0.1)


def test_our_bounds_below_budget():
    b = la.our_bounds(OUE(25, 2.0), 20_000, rng=3)
    assert 0 < b["black"] <= 2.0 and 0 < b["white"] <= 2.0


def test_stored_runs_agree():
    frame, header = la.stored_ldp_auditor_runs()
    assert header["paper"] == "arcolezi2024revealing" and len(header["commit"]) == 40
    assert len(frame) > 0 and set(frame["protocol"]) >= {"GRR", "SUE", "OUE", "OLH"}
    assert (frame["estimator_check"].abs() < 1e-9).all()
    assert (frame["z_eps"].abs() < 5).all()


def test_experiment_small_scale():
    from ldpkit.experiments import RunConfig, audit_ldp_auditor, registry

    exp = registry.get("audit-ldp-auditor")
    data = audit_ldp_auditor.compute(RunConfig(repeats=1, seed=1, scale=0.01))
    f = data.frame
    assert set(f["method"]) == set(audit_ldp_auditor.METHODS)
    assert (f["tightness"] <= 1.0 + 1e-12).all()
    assert exp.draw(data) is not None
