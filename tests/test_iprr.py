"""Tests for ldpkit.iprr: the channel and its IPLDP guarantee by enumeration, the reductions to
GRR and uRR, the closed form against sympy, the estimator, the MLE and the loss formulas.

The generic checks (sampling law, declared guarantee, unbiasedness with the declared
variance, aggregate simulation) also run on the registered IPRR instances in
``tests/test_contract.py``.  The derivations are in the IPLDP chapter (``book/ipldp.md``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from scipy import stats

from ldpkit import GRR, IPRR, URR, accountant, postprocess
from ldpkit.iprr import iprr_pairwise_log_ratio, iprr_parameters, mle_keep_or_resample
from ldpkit.testing import check_sampling_matches_channel, chi_square_gof

INF = math.inf
#: a statistic fails beyond Z_TOL standard errors; trial counts give a named mistake a shift
#: of at least Z_TOL + Z_POWER standard errors
Z_TOL, Z_POWER = 4.0, 3.0


def _random_budgets(rng: np.random.Generator, with_dn: bool) -> np.ndarray:
    d = int(rng.integers(2, 9))
    eps = rng.uniform(0.05, 5.0, size=d)
    if with_dn:
        k = int(rng.integers(1, d))  # at least one non-sensitive, one sensitive item
        eps[rng.permutation(d)[:k]] = INF
    return eps


def _loop_channel(budgets: np.ndarray) -> np.ndarray:
    """The paper's eq. (11), entry by entry, independently of ldpkit.iprr."""
    d = budgets.size
    r = [1 / (math.exp(e) - 1) if math.isfinite(e) else 0.0 for e in budgets]
    S = 1 / (1 + sum(r))
    m = np.zeros((d, d))
    for x in range(d):
        for y in range(d):
            if math.isfinite(budgets[y]):
                m[x, y] = math.exp(budgets[y]) * r[y] * S if x == y else r[y] * S
            else:
                m[x, y] = S if x == y else 0.0
    return m


# ---------------------------------------------------------------------------- channel, privacy


@pytest.mark.parametrize("with_dn", [False, True])
@pytest.mark.parametrize("seed", range(15))
def test_channel_rows_and_ipldp_by_enumeration(seed: int, with_dn: bool) -> None:
    budgets = _random_budgets(np.random.default_rng(seed), with_dn)
    mech = IPRR(budgets)
    Q = mech.channel().matrix
    np.testing.assert_allclose(Q, _loop_channel(budgets), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    sens = np.flatnonzero(np.isfinite(budgets))
    res = accountant.check_ipldp(mech.channel(), budgets[sens], sensitive=sens)
    assert res.satisfied and res.n_structural_violations == 0
    assert abs(res.slack) < 1e-9  # every budget is used exactly (Theorems 1-2)
    # each sensitive column is tight at its own budget
    cols = Q[:, sens]
    np.testing.assert_allclose(np.log(cols.max(axis=0) / cols.min(axis=0)), budgets[sens], rtol=1e-9)
    assert accountant.verify(mech).satisfied
    # a tighter budget on any one sensitive item fails
    tighter = budgets[sens].copy()
    tighter[int(np.random.default_rng(seed).integers(sens.size))] *= 0.99
    assert not accountant.check_ipldp(mech.channel(), tighter, sensitive=sens).satisfied
    assert mech.epsilon == (INF if with_dn else pytest.approx(budgets.max()))


@pytest.mark.parametrize("with_dn", [False, True])
@pytest.mark.parametrize("seed", range(10))
def test_pairwise_log_ratio_closed_form_and_minid_excess(seed: int, with_dn: bool) -> None:
    """L[x, x'] = eps_x (inf for a non-sensitive x), against the accountant's enumeration."""
    budgets = _random_budgets(np.random.default_rng(100 + seed), with_dn)
    closed = iprr_pairwise_log_ratio(budgets)
    enumerated = accountant.pairwise_log_ratio(IPRR(budgets).channel())
    finite = np.isfinite(closed)
    np.testing.assert_array_equal(np.isfinite(enumerated), finite)
    np.testing.assert_allclose(enumerated[finite], closed[finite], rtol=1e-9, atol=1e-12)
    # excess over the MinID-LDP pair budget min(eps_x, eps_x') on two sensitive items
    sens = np.isfinite(budgets)
    e = budgets[sens]
    off = ~np.eye(e.size, dtype=bool)
    excess = closed[np.ix_(sens, sens)] - np.minimum.outer(e, e)
    np.testing.assert_allclose(excess[off], np.maximum(0.0, np.subtract.outer(e, e))[off], atol=1e-12)
    # a non-sensitive input is told apart from every other input
    off_all = ~np.eye(budgets.size, dtype=bool)
    assert np.all(np.isinf(closed[~sens][off_all[~sens]]))
    # the smallest s with (s E)-MinID-LDP: eps_max / eps_min, and no finite s with D_N
    scale = accountant.privacy_profile(IPRR(budgets), budgets=budgets).minid_scale
    if with_dn:
        assert scale == INF
    else:
        assert scale == pytest.approx(budgets.max() / budgets.min(), rel=1e-9)
        assert not accountant.check_minidldp(IPRR(budgets).channel(), budgets).satisfied


def test_pairwise_log_ratio_equal_budgets_is_minid() -> None:
    budgets = [0.7] * 4
    np.testing.assert_allclose(iprr_pairwise_log_ratio(budgets)[~np.eye(4, dtype=bool)], 0.7)
    assert accountant.check_minidldp(IPRR(budgets).channel(), budgets).satisfied


@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
@pytest.mark.parametrize("d", [2, 3, 6])
def test_equal_budgets_reduce_to_grr_and_urr(d: int, eps: float) -> None:
    np.testing.assert_allclose(IPRR([eps] * d).channel().matrix, GRR(d, eps).channel().matrix, rtol=1e-12)
    for k in range(1, d):
        vec = [eps] * k + [INF] * (d - k)
        np.testing.assert_allclose(
            IPRR(vec).channel().matrix, URR(d, eps, list(range(k))).channel().matrix, rtol=1e-12, atol=1e-15
        )


def test_closed_form_is_the_unique_solution_of_the_row_constraints() -> None:
    """Symbolic solve of q_x + sum_{x' != x} qbar_x' = 1 with q_x = e^{eps_x} qbar_x (eqs. (6), (9))."""
    d = 3
    t = sp.symbols("t1:4", positive=True)  # e^eps - 1
    qb = sp.symbols("qb1:4")
    eqs = [(1 + t[x]) * qb[x] + sum(qb[y] for y in range(d) if y != x) - 1 for x in range(d)]
    sol = sp.solve(eqs, qb, dict=True)
    assert len(sol) == 1
    S = 1 / (1 + sum(1 / tx for tx in t))
    for x in range(d):
        assert sp.simplify(sol[0][qb[x]] - S / t[x]) == 0
    for budgets in ([0.1, 0.5, 1.0], [2.0, 2.0, 0.3]):
        par = iprr_parameters(budgets)
        point = {t[x]: math.expm1(budgets[x]) for x in range(d)}
        np.testing.assert_allclose(par["qbar"], [float(sol[0][qb[x]].subs(point)) for x in range(d)], rtol=1e-12)
        np.testing.assert_allclose(par["q"], np.exp(budgets) * par["qbar"], rtol=1e-12)


def test_fig1_example_values() -> None:
    """The paper's Fig. 1 setting (its printed numbers are lost in both text versions)."""
    mech = IPRR([0.1, 0.5, 1.0, INF, INF])
    r = 1 / np.expm1([0.1, 0.5, 1.0])
    S = 1 / (1 + r.sum())
    assert mech.S == pytest.approx(S, rel=1e-14)
    np.testing.assert_allclose(mech.q[:3], (1 + r) * S, rtol=1e-14)
    # smaller budget, more honest
    assert mech.q[0] > mech.q[1] > mech.q[2] > mech.q[3] == mech.q[4] == pytest.approx(S)


# ---------------------------------------------------------------------------- sampling, estimator


@pytest.mark.parametrize("budgets", [[0.1, 0.5, 1.0, INF, INF], [0.5, 2.0, 2.0, 4.0], [1.0, INF]])
def test_sampling_matches_channel(budgets: list[float]) -> None:
    mech = IPRR(budgets)
    check_sampling_matches_channel(mech, samples_per_input=20_000, rng=7)
    # and one pooled chi-square over all inputs from the per-user path
    rng = np.random.default_rng(8)
    d = mech.d
    for x in range(d):
        out = np.asarray(mech.perturb(np.full(30_000, x), rng=rng))
        _, _, pval = chi_square_gof(np.bincount(out, minlength=d), mech.channel().matrix[x])
        assert pval > 1e-6 / d


def test_estimator_unbiased_with_exact_covariance() -> None:
    """eq. (12) is unbiased; its variance under i.i.d. inputs is (m (1 - m)) / (n S^2).

    Named mistakes that the trial count is sized to reject by Z_TOL + Z_POWER standard errors:
    (mean) subtracting ``qbar_x = r_x S`` instead of ``r_x``; (variance) the variance given the
    users' items, which misses the sampling variance ``p_x (1 - p_x) / n`` of the inputs.
    """
    mech = IPRR([2.0, 3.0, INF, INF])
    p = np.array([0.25, 0.25, 0.25, 0.25])
    n = 200
    m = mech.S * (p + mech.r)
    var = m * (1 - m) / (n * mech.S**2)
    delta = p * (1 - p) / n / var
    T = math.ceil(2 * ((Z_TOL + Z_POWER) / delta.max()) ** 2) + 1
    shift = mech.r * (1 - mech.S)
    assert np.max(shift / np.sqrt(var / T)) >= Z_TOL + Z_POWER
    assert delta.max() * math.sqrt((T - 1) / 2) >= Z_TOL + Z_POWER
    rng = np.random.default_rng(2023)
    items = rng.choice(mech.d, size=T * n, p=p)
    reports = np.asarray(mech.perturb(items, rng=rng))
    counts = np.bincount(np.repeat(np.arange(T), n) * mech.d + reports, minlength=T * mech.d).reshape(T, mech.d)
    est = counts / n / mech.S - mech.r
    np.testing.assert_allclose(mech.estimate_from_support(counts[0], n) / n, est[0], rtol=1e-12, atol=1e-12)
    z_mean = (est.mean(axis=0) - p) / np.sqrt(var / T)
    z_var = (est.var(axis=0, ddof=1) / var - 1) / math.sqrt(2 / (T - 1))
    assert np.all(np.abs(z_mean) < Z_TOL), z_mean
    assert np.all(np.abs(z_var) < Z_TOL), z_var


def test_expected_l2_loss_matches_monte_carlo() -> None:
    mech = IPRR([2.0, 3.0, INF, INF])
    p = np.array([0.25, 0.25, 0.25, 0.25])
    n, T = 1_000, 20_000
    rng = np.random.default_rng(11)
    counts = rng.multinomial(n, mech.S * (p + mech.r), size=T)
    l2 = ((counts / n / mech.S - mech.r - p) ** 2).sum(axis=1)
    z = (l2.mean() - mech.expected_l2_loss(p, n)) / (l2.std(ddof=1) / math.sqrt(T))
    assert abs(z) < Z_TOL
    # a named mistake: the fixed-count loss, smaller by (1 - sum p^2) / n
    wrong = mech.expected_l2_loss(p, n) - (1 - np.sum(p**2)) / n
    assert abs(l2.mean() - wrong) / (l2.std(ddof=1) / math.sqrt(T)) >= Z_TOL + Z_POWER


def test_expected_l1_loss_is_the_large_n_limit() -> None:
    mech = IPRR([0.1, 0.5, 1.0, INF, INF])
    p = np.array([0.05, 0.1, 0.15, 0.3, 0.4])
    for n, tol in ((1_000, 2e-2), (1_000_000, 1e-3)):
        m = mech.S * (p + mech.r)
        k = np.floor(n * m).astype(int)
        mad = 2 * (k + 1) * stats.binom.pmf(k + 1, n, m) * (1 - m)  # E|Binomial - mean|
        exact = mad.sum() / (n * mech.S)
        assert mech.expected_l1_loss(p, n) / exact == pytest.approx(1.0, abs=tol)


# ---------------------------------------------------------------------------- MLE


@pytest.mark.parametrize("seed", range(8))
def test_mle_is_the_likelihood_maximum(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    budgets = _random_budgets(rng, with_dn=bool(seed % 2))
    mech = IPRR(budgets)
    p = rng.dirichlet(np.full(mech.d, 0.5))
    items = rng.choice(mech.d, size=int(rng.integers(20, 2000)), p=p)
    counts = np.bincount(np.asarray(mech.perturb(items, rng=rng)), minlength=mech.d)
    p_ml = mech.mle(counts)
    assert np.all(p_ml >= 0) and p_ml.sum() == pytest.approx(1.0, abs=1e-12)

    def loglik(q: np.ndarray) -> float:
        m = mech.S * (q + mech.r)
        pos = counts > 0
        return float(np.sum(counts[pos] * np.log(m[pos])))

    em = postprocess.em_estimate(mech.channel(), counts, tol=1e-12)
    assert loglik(p_ml) >= loglik(em.frequencies) - 1e-7 * abs(loglik(p_ml))
    # KKT of eq. (eq-iprr-mle): N/(p + r) is one level on the support, at most it elsewhere
    on = p_ml > 0
    lam = counts[on] / (p_ml[on] + mech.r[on])
    assert np.ptp(lam) <= 1e-9 * lam.mean()
    off = (~on) & (mech.r > 0)
    assert np.all(counts[off] / mech.r[off] <= lam.mean() * (1 + 1e-9))


def test_mle_beats_empirical_and_norm_sub_on_a_fixed_case() -> None:
    mech = IPRR([0.1, 0.3, 0.6, 1.0, INF, INF])
    p = np.array([0.02, 0.03, 0.05, 0.1, 0.3, 0.5])
    rng = np.random.default_rng(5)
    n, T = 500, 200
    loss = {"mle": 0.0, "empirical": 0.0, "norm_sub": 0.0}
    for _ in range(T):
        items = rng.choice(mech.d, size=n, p=p)
        counts = np.bincount(np.asarray(mech.perturb(items, rng=rng)), minlength=mech.d)
        emp = counts / n / mech.S - mech.r
        loss["mle"] += np.sum((mech.mle(counts) - p) ** 2)
        loss["empirical"] += np.sum((emp - p) ** 2)
        loss["norm_sub"] += np.sum((postprocess.norm_sub(emp, 1.0) - p) ** 2)
    assert loss["mle"] <= loss["empirical"] and loss["mle"] <= loss["norm_sub"]


def test_mle_keep_or_resample_edge_cases() -> None:
    # keep = 1: the MLE is the empirical distribution
    np.testing.assert_allclose(mle_keep_or_resample([3, 1, 0], 1.0, [1 / 3] * 3), [0.75, 0.25, 0.0])
    # one non-zero count: all mass there
    np.testing.assert_allclose(mle_keep_or_resample([0, 5, 0], 0.3, [0.2, 0.3, 0.5]), [0, 1, 0], atol=1e-15)


# ---------------------------------------------------------------------------- worst case, monotonicity


@pytest.mark.parametrize("seed", range(10))
def test_worst_case_distribution_maximises_both_losses(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    mech = IPRR(_random_budgets(rng, with_dn=bool(seed % 2)))
    p_star = mech.worst_case_distribution()
    assert np.all(p_star >= 0) and p_star.sum() == pytest.approx(1.0, abs=1e-12)
    cand = np.vstack([rng.dirichlet(np.full(mech.d, a), size=2000) for a in (0.2, 1.0, 5.0)] + [np.eye(mech.d)])
    u = cand + mech.r
    f = np.clip(u * (1 / mech.S - u), 0, None)
    assert f.sum(axis=1).max() / 1 <= mech.expected_l2_loss(p_star, 1) * (1 + 1e-12)
    assert math.sqrt(2 / math.pi) * np.sqrt(f).sum(axis=1).max() <= mech.expected_l1_loss(p_star, 1) * (1 + 1e-12)
    # the paper's conditions (17) on D* = support of p*
    star = p_star > 0
    T = (1 + mech.r[star].sum()) / star.sum()
    assert np.all(mech.r[star] < T) and np.all(mech.r[~star] >= T * (1 - 1e-12))


@pytest.mark.parametrize("budgets", [[0.07813980435735055, 0.4129610991762391, 0.1320512949226627],
                                     [0.10518633347519113, 0.5630222222507237]])
def test_worst_case_distribution_is_a_valid_distribution(budgets: list[float]) -> None:
    """Regression: a single-point worst case used to come out as 1 + 2e-16 and be rejected."""
    mech = IPRR(budgets)
    p_star = mech.worst_case_distribution()
    assert np.all((p_star >= 0) & (p_star <= 1)) and p_star.sum() == pytest.approx(1.0, abs=1e-15)
    assert mech.expected_l2_loss(p_star, 10) > 0 and mech.expected_l1_loss(p_star, 10) > 0


@pytest.mark.parametrize("seed", range(10))
def test_losses_decrease_in_every_budget(seed: int) -> None:
    """Lemma 1 with the corrected direction: raising budgets item by item lowers both losses."""
    rng = np.random.default_rng(400 + seed)
    e1 = _random_budgets(rng, with_dn=bool(seed % 2))
    e2 = np.where(np.isfinite(e1), e1 + rng.exponential(1.0, e1.size), INF)
    p = rng.dirichlet(np.ones(e1.size))
    a, b = IPRR(e1), IPRR(e2)
    assert a.expected_l2_loss(p, 100) >= b.expected_l2_loss(p, 100)
    assert a.expected_l1_loss(p, 100) >= b.expected_l1_loss(p, 100)


def test_low_privacy_bound_and_when_it_is_attained() -> None:
    """Theorem 6 corrected: (1 - 1/|D|) / (n S^2) bounds the l2 loss, attained iff max r <= 1/(|D| S)."""
    n = 1000
    for budgets, attained in (([2.0, 2.0, 2.0, INF], True), ([0.8, 50.0, 50.0, INF], False)):
        mech = IPRR(budgets)
        assert math.log(2) < min(budgets)  # the paper's condition holds in both cases
        bound = (1 - 1 / mech.d) / (n * mech.S**2)
        worst = mech.expected_l2_loss(mech.worst_case_distribution(), n)
        assert worst <= bound * (1 + 1e-12)
        assert math.isclose(worst, bound, rel_tol=1e-12) is attained
        assert bool(mech.r.max() <= 1 / (mech.d * mech.S)) is attained
