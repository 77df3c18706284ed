"""The best possible under each promise, ``ldpkit.optimal``.

Each step of the bound is checked on its own: the smallest variance of a linear unbiased
estimator for one channel (the trace formula against a direct weighted least-norm solve),
splitting a column never lowering the information, the extreme rays against brute-force vertex
enumeration, the LDP closed form at uniform counts against the convex programme, the certificate
staying below the optimum even from a poor solver point, the FLDP witness keeping its promise,
and the bound lying below every calibrated family of the synthesis scenario.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ldpkit import accountant, contracts
from ldpkit.calibration import calibrate
from ldpkit.channels import ExplicitChannel, random_channel
from ldpkit.family import families
from ldpkit.optimal import (
    _gram,
    best_possible,
    cone_rays,
    ldp_rays,
    ldp_uniform_bound,
    lip_rays,
    pairwise_rays,
    ratios_to_best,
    ray_bound,
)

BUDGETS = np.array([2.0] * 7 + [1.0] * 3)
ZIPF = np.array([64526, 16131, 7170, 4033, 2581, 1792, 1317, 1008, 797, 645], dtype=float)


def _fisher(Q: np.ndarray, f: np.ndarray) -> np.ndarray:
    m = f @ Q
    keep = m > 0
    return (Q[:, keep] / m[keep]) @ Q[:, keep].T


def test_the_best_linear_unbiased_estimator_has_total_variance_n_trace_minus_one() -> None:
    """For one channel, minimise sum_y m_y |b_y|^2 subject to B Q^T = I directly, and compare."""
    gen = np.random.default_rng(1)
    for d, m in [(3, 5), (4, 9), (5, 5)]:
        Q = random_channel(d, m, rng=gen).matrix
        f = gen.dirichlet(np.ones(d))
        n = 1000.0
        D = np.diag(f @ Q)
        B = np.linalg.solve(Q @ np.linalg.inv(D) @ Q.T, Q @ np.linalg.inv(D))  # weighted least norm
        assert np.allclose(B @ Q.T, np.eye(d))
        c = n * f
        total = sum(c[x] * (Q[x] @ (B**2).sum(axis=0)) for x in range(d)) - n  # sum_x c_x E|b(y)|^2 - |e_x|^2
        assert total == pytest.approx(n * (np.trace(np.linalg.inv(_fisher(Q, f))) - 1), rel=1e-9)
        # any other unbiased linear estimator does worse: add a null-space direction
        N = np.linalg.svd(Q)[2][d:]  # rows orthogonal to Q's rows
        if N.size:
            B2 = B + gen.normal(size=(d, N.shape[0])) @ N
            assert np.allclose(B2 @ Q.T, np.eye(d))
            total2 = sum(c[x] * (Q[x] @ (B2**2).sum(axis=0)) for x in range(d)) - n
            assert total2 > total


def test_splitting_a_column_never_lowers_the_information() -> None:
    gen = np.random.default_rng(2)
    for _ in range(20):
        Q = random_channel(4, 3, rng=gen).matrix
        f = gen.dirichlet(np.ones(4))
        share = gen.uniform(0.1, 0.9, size=4)
        split = np.column_stack([Q[:, 0] * share, Q[:, 0] * (1 - share), Q[:, 1:]])
        gap = np.linalg.eigvalsh(_fisher(split, f) - _fisher(Q, f))
        assert gap.min() > -1e-12


def _brute_force_vertices(M: np.ndarray, step: float) -> set[tuple[float, ...]]:
    """Every lattice point of {u : u_x - u_y <= M[x, y], min u = 0} whose tight graph connects the items."""
    d = M.shape[0]
    top = int(round(np.max(M) / step))
    out = set()
    for z in itertools.product(range(top + 1), repeat=d):
        u = np.array(z) * step
        if u.min() != 0:
            continue
        diff = u[:, None] - u[None, :]
        off = ~np.eye(d, dtype=bool)
        if np.any(diff[off] > M[off] + 1e-12):
            continue
        tight = (np.abs(diff - M) < 1e-12) | (np.abs(diff.T - M.T) < 1e-12) | np.eye(d, dtype=bool)
        reach = tight.astype(float)
        for _ in range(d):
            reach = np.minimum(1, reach @ reach)
        if reach.min() > 0:
            out.add(tuple(np.round(u, 9)))
    return out


@pytest.mark.parametrize("budgets, rule", [([1.0, 1.0, 2.0, 2.0, 2.0], "min"), ([1.0, 2.0, 2.0, 2.0], "average"),
                                           ([0.5, 1.0, 1.5, 1.5], "min"), ([1.0, 1.0, 1.0, 1.0], "min")])
def test_pairwise_rays_are_the_vertices_found_by_brute_force(budgets: list[float], rule: str) -> None:
    M = accountant.pairwise_budgets(len(budgets), budgets=np.array(budgets), r=rule)
    rays = pairwise_rays(M)
    got = {tuple(np.round(np.log(r / r.min()), 9)) for r in rays}
    assert len(got) == rays.shape[0]
    assert got == _brute_force_vertices(M, 0.5)


def test_ldp_and_lip_rays() -> None:
    assert ldp_rays(4, 1.0).shape == (14, 4)
    prior = np.array([0.4, 0.3, 0.2, 0.1])
    rays = lip_rays(1.0, prior)
    lo, hi = math.exp(-1.0), math.exp(1.0)
    v = rays / (rays @ prior)[:, None]
    assert np.all(v >= lo * (1 - 1e-12)) and np.all(v <= hi * (1 + 1e-12))
    at_bound = (np.abs(v - lo) < 1e-12) | (np.abs(v - hi) < 1e-12)
    assert np.all(at_bound.sum(axis=1) >= 3)  # a vertex: every coordinate at a bound but at most one
    # brute force: every candidate (one free coordinate) that lands inside the box
    expected = set()
    for j in range(4):
        for corner in itertools.product((lo, hi), repeat=3):
            u = np.insert(np.array(corner), j, 0.0)
            u[j] = (1 - u @ prior) / prior[j]
            if lo - 1e-12 <= u[j] <= hi + 1e-12:
                expected.add(tuple(np.round(np.log(np.clip(u, lo, hi)), 9)))
    assert {tuple(np.round(np.log(r), 9)) for r in v} == expected


@pytest.mark.parametrize("d", [3, 4, 5, 7])
@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_the_ldp_bound_at_uniform_counts_is_ss_with_the_best_subset_size(d: int, eps: float) -> None:
    low, value, mu = ray_bound(ldp_rays(d, eps), np.full(d, 1 / d))
    closed = ldp_uniform_bound(d, eps)
    assert low - 1 <= closed * (1 + 1e-12) and value - 1 >= closed * (1 - 1e-7)
    assert low - 1 == pytest.approx(closed, rel=1e-5)


def test_the_certificate_stays_below_the_optimum_from_a_poor_point() -> None:
    """The dual point built from any weights bounds the minimum from below (here a uniform mixture of the rays)."""
    import scipy.optimize

    d, eps = 5, 1.0
    rays = ldp_rays(d, eps)
    R = rays / rays.max(axis=1, keepdims=True)
    f = np.full(d, 1 / d)
    mu = scipy.optimize.nnls(R.T, np.ones(d))[0] * 0.5 + 0.5 / R.shape[0] / R.sum(axis=1).mean()
    gram = _gram(R, f)
    F = (gram @ mu).reshape(d, d)
    W = np.linalg.inv(F) @ np.linalg.inv(F)
    need = np.einsum("jx,xy,jy->j", R, W, R) / (R @ f)
    lp = scipy.optimize.linprog(np.ones(d), A_ub=-R, b_ub=-need, bounds=[(None, None)] * d, method="highs")
    lower = 2 * np.sum(np.sqrt(np.linalg.eigvalsh(W))) - lp.x.sum()
    assert lower - 1 <= ldp_uniform_bound(d, eps) + 1e-9


def test_the_fldp_witness_keeps_its_promise_at_any_budget() -> None:
    """Report the input with probability 1 - delta, else one output every input shares: (0.5, eps)-FLDP for any eps."""
    d, delta = 4, 1e-3
    Q = np.hstack([np.eye(d) * (1 - delta), np.full((d, 1), delta)])
    ch = ExplicitChannel(Q)
    assert accountant.check_fldp(ch, 1e-3, alpha=0.5).satisfied
    assert not accountant.check_fldp(ch, 1e-3, alpha=0.6).satisfied  # one shared output of two: a half
    b = best_possible(contracts.fldp(d, 1e-3, 0.5))
    assert b.value == 0.0 and "infimum" in b.method
    # alpha = 1 is LDP: the LDP bound
    assert best_possible(contracts.fldp(d, 1.0, 1.0)).value == pytest.approx(d * ldp_uniform_bound(d, 1.0))


def test_the_bound_lies_below_every_calibrated_family_of_the_scenario() -> None:
    promises = {
        "LDP": contracts.ldp(10, 1.0), "MinID-LDP": contracts.minidldp(BUDGETS),
        "ID-LDP": contracts.idldp(BUDGETS, "average"), "ULDP": contracts.uldp(10, 1.0, np.arange(7, 10)),
        "LIP": contracts.lip(1.0, ZIPF / ZIPF.sum()),
    }
    names = [f.name for f in families(budget=True, inputs="items")]
    for label, promise in promises.items():
        b = best_possible(promise, ZIPF)
        assert b.known and 0 < b.value <= b.attained * (1 + 1e-12), label
        assert b.attained <= b.value * (1 + 1e-5), label  # the certificate is tight to the solver's accuracy
        for name in names:
            cal = calibrate(name, promise)
            if cal.satisfiable:
                assert cal.total_variance(ZIPF) >= b.value * (1 - 1e-9), (label, name)


def test_ipldp_is_bounded_through_a_larger_class_and_mip_not_at_all() -> None:
    e = np.full(10, np.inf)
    e[7:] = 1.0
    ip = best_possible(contracts.ipldp(e))
    ul = best_possible(contracts.uldp(10, 1.0, np.arange(7, 10)))
    assert ip.value == pytest.approx(ul.value, rel=1e-6) and "holds every IPLDP channel" in ip.bounds
    mip = best_possible(contracts.promise("mip", 4, epsilon=0.1, prior=[0.25] * 4))
    assert not mip.known and "no bound known" in mip.method and math.isnan(mip.ratio(1.0))


def test_ratios_and_bad_input() -> None:
    r = ratios_to_best(contracts.ldp(6, 1.0), families=["GRR", "SS", "OUE"])
    assert r["SS"] == pytest.approx(1.0, rel=1e-12) and r["GRR"] > 1 and r["OUE"] > 1
    with pytest.raises(ValueError, match="counts must be finite and positive"):
        best_possible(contracts.ldp(3, 1.0), [1.0, 0.0, 2.0])
    with pytest.raises(ValueError, match=r"one count per item \(3\)"):
        best_possible(contracts.ldp(3, 1.0), [1.0, 2.0])
    with pytest.raises(TypeError, match="best_possible needs a Contract"):
        best_possible("ldp", None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no cone describes"):
        cone_rays(contracts.fldp(3, 1.0, 0.5))
