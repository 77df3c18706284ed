"""LIP mechanisms (:mod:`ldpkit.lip`): binary randomised response, MMSE estimation, optimal channels.

* every optimum satisfies its notion exactly (every constraint, by the accountant) and matches a
  brute-force search over a fine ``(q0, q1)`` grid, refined twice around its best point, for the
  priors 0.01, 0.1, 0.5, 0.9, 0.99 and budgets 0.5, 1, 2, 4;
* the paper's closed forms (:mod:`ldpkit.experiments.lip_paper`) are compared with the optima over
  priors 0.001..0.999: Theorem 2 is right exactly on ``[1/(1 + e^eps), e^eps/(1 + e^eps)]`` and
  infeasible outside, Proposition 3 is right, Proposition 4's point is right but its printed MSE
  (eq. 23) is not;
* the MMSE estimator's MSE matches exact enumeration (small ``n``) and a seeded simulation whose
  tolerance comes from the exact variance of the squared error, with the power to reject the
  prior-free estimator's MSE;
* the k-ary optimum carries a dual certificate, beats or matches GRR, OUE and the LDP optimum at
  the same prior and budget, and plugs into :class:`~ldpkit.channel_oracle.ChannelOracle`.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

from ldpkit import ArgumentTypeError, accountant
from ldpkit.accountant import Guarantee
from ldpkit.channels import ExplicitChannel, mix_with_uniform, random_channel
from ldpkit.experiments.lip_paper import (
    compare_with_paper,
    corrected_theorem2,
    paper_corollary1,
    paper_proposition3,
    paper_proposition4,
    paper_theorem2,
)
from ldpkit.lip import (
    BinaryRR,
    bayes_risk,
    compare_kary,
    optimal_kary_ldp,
    optimal_kary_lip,
    optimal_ldp,
    optimal_lip,
    optimal_lip_global,
    optimal_lip_local,
    optimal_symmetric_lip,
    per_user_mse,
)
from ldpkit.testing import Z, check_contract

PRIORS = [0.01, 0.1, 0.5, 0.9, 0.99]
EPSILONS = [0.5, 1.0, 2.0, 4.0]
SOLVERS = {"lip": optimal_lip, "symmetric-lip": optimal_symmetric_lip, "ldp": optimal_ldp}


# ------------------------------------------------------------------------------ brute force
def _feasible(q0: np.ndarray, q1: np.ndarray, p: float, eps: float, notion: str) -> np.ndarray:
    """Every ratio of the notion within ``e^+-eps`` (with the accountant's relative tolerance), written out."""
    Q = {(0, 0): 1 - q0, (0, 1): q0, (1, 0): q1, (1, 1): 1 - q1}
    lam = {0: (1 - p) * (1 - q0) + p * q1, 1: (1 - p) * q0 + p * (1 - q1)}
    ok = np.ones(np.shape(q0), dtype=bool)
    hi, lo = math.exp(eps) * (1 + 1e-9), math.exp(-eps) * (1 - 1e-9)
    with np.errstate(divide="ignore", invalid="ignore"):
        for (x, y), v in Q.items():
            if notion == "ldp":
                r = v / Q[(1 - x, y)]
                ok &= (v == 0) | (r <= hi)
            else:
                r = v / lam[y]
                ok &= ((v == 0) & (lam[y] == 0)) | ((r <= hi) & (r >= lo))
    return ok


def _grid_minimum(p: float, eps: float, kind: str) -> float:
    """Smallest feasible MSE over a 801-point (per axis) grid of ``[0, 1]``, then two 201-point zooms around
    each of its eight best separated cells (a coarse grid cannot tell which vertex wins when they are close)."""
    notion = "ldp" if kind == "ldp" else "lip"
    sym = kind == "symmetric-lip"

    def values(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        q0, q1 = (a, a) if sym else np.meshgrid(a, b, indexing="ij")
        return q0, q1, np.where(_feasible(q0, q1, p, eps, notion), per_user_mse(q0, q1, p), np.inf)

    grid = np.linspace(0.0, 1.0, 801)
    q0, q1, f = values(grid, grid)
    best = float(f.min())
    seeds = []
    g = f.copy()
    for _ in range(8):  # best cells, each masking its neighbourhood of 20 cells
        k = np.unravel_index(int(np.argmin(g)), g.shape)
        if not np.isfinite(g[k]):
            break
        seeds.append((float(q0[k]), float(q1[k])))
        sl = tuple(slice(max(0, i - 20), i + 21) for i in k)
        g[sl] = np.inf
    for c0, c1 in seeds:
        h = 1.0 / 800
        for _ in range(2):
            a = np.linspace(max(0.0, c0 - 2 * h), min(1.0, c0 + 2 * h), 201)
            b = np.linspace(max(0.0, c1 - 2 * h), min(1.0, c1 + 2 * h), 201)
            z0, z1, fz = values(a, b)
            k = np.unravel_index(int(np.argmin(fz)), fz.shape)
            best = min(best, float(fz[k]))
            c0, c1, h = float(z0[k]), float(z1[k]), h * 4 / 200
    return best


#: grid tolerance: after the zooms the spacing is below 2e-6 (times 4/200 per zoom from 1/800) and the
#: MSE's difference quotients on a 1001-point grid of [0, 1]^2 stay below 0.91 for these priors, so a
#: grid point within a few spacings of the optimal vertex is within about 1e-5 of it (worst seen: 1.4e-6)
GRID_TOL = 1e-5


@pytest.mark.parametrize("kind", list(SOLVERS))
@pytest.mark.parametrize("prior", PRIORS)
@pytest.mark.parametrize("eps", EPSILONS)
def test_binary_optimum_is_feasible_and_matches_brute_force(kind: str, prior: float, eps: float) -> None:
    opt = SOLVERS[kind](prior, eps)
    # every constraint of its notion, by the accountant
    ch = opt.mechanism().channel()
    if opt.notion == "lip":
        assert accountant.check_lip(ch, eps, prior=[1 - prior, prior]).satisfied
    else:
        assert accountant.check_ldp(ch, eps).satisfied
    assert accountant.verify(opt.mechanism()).satisfied
    assert opt.mse == pytest.approx(float(per_user_mse(opt.q0, opt.q1, prior)), abs=1e-15)
    assert opt.active, "a concave minimum over a polygon lies on its boundary"
    if kind == "symmetric-lip":
        assert opt.q0 == opt.q1
    grid = _grid_minimum(prior, eps, kind)
    assert grid >= opt.mse - 1e-12, f"a feasible grid point beats the optimum: {grid!r} < {opt.mse!r}"
    assert grid - opt.mse <= GRID_TOL
    # every listed alternative is optimal too (the mirror image at least)
    for a, b in opt.alternatives:
        assert float(per_user_mse(a, b, prior)) == pytest.approx(opt.mse, abs=1e-13)


def test_model_inclusions_order_the_optima() -> None:
    """LDP is within LIP (Theorem 1) and symmetric within general: the optima are ordered."""
    for p in np.linspace(0.01, 0.99, 15):
        for eps in EPSILONS:
            gen, sym, ldp = optimal_lip(p, eps).mse, optimal_symmetric_lip(p, eps).mse, optimal_ldp(p, eps).mse
            assert gen <= sym + 1e-14 and sym <= ldp + 1e-14
            assert optimal_lip_global(p, eps) == optimal_lip(p, eps)


def test_local_priors_decompose_per_user() -> None:
    priors = np.array([0.05, 0.5, 0.05, 0.8, 0.3])
    res = optimal_lip_local(priors, 1.5)
    for i, p in enumerate(priors):
        single = optimal_lip(p, 1.5)
        assert (res.q0[i], res.q1[i], res.mse[i]) == (single.q0, single.q1, single.mse)
    assert res.total_mse == pytest.approx(res.mse.sum())
    for mech in res.mechanisms():
        assert accountant.verify(mech).satisfied


# ------------------------------------------------------------------------------ the paper's closed forms
PAPER_PRIORS = np.round(np.linspace(0.001, 0.999, 193), 6)


@pytest.mark.parametrize("eps", [0.25, *EPSILONS, 8.0])
def test_theorem2_and_corollary1_hold_exactly_on_the_central_priors(eps: float) -> None:
    e = math.exp(eps)
    for p in PAPER_PRIORS:
        cf, opt = paper_theorem2(p, eps), optimal_lip(p, eps)
        assert paper_corollary1(p, eps).q0 == cf.q0
        assert cf.mse_printed == pytest.approx(cf.mse_at_point, rel=1e-12)  # the printed MSE is that of the point
        central = 1 / (1 + e) <= p <= e / (1 + e)
        margin = min(abs(p - 1 / (1 + e)), abs(p - e / (1 + e)))
        if margin < 1e-9:
            continue
        assert cf.feasible == central, (p, eps)
        if central:  # then the printed point is a true optimum
            assert cf.mse_printed == pytest.approx(opt.mse, rel=1e-10, abs=1e-15)
            assert min(max(abs(a - cf.q0), abs(b - cf.q1)) for a, b in opt.alternatives) < 1e-9
        else:  # infeasible, and it promises less than any feasible mechanism achieves
            assert cf.achieved_epsilon > eps and cf.mse_printed < opt.mse


@pytest.mark.parametrize("eps", [0.25, *EPSILONS, 8.0])
@pytest.mark.parametrize(("closed_form", "optimum", "at_an_optimum"), [
    pytest.param(corrected_theorem2, optimal_lip, True, id="corrected-theorem2"),
    pytest.param(paper_proposition3, optimal_ldp, False, id="proposition3"),
])
def test_closed_form_is_the_optimum_for_every_prior(closed_form: Any, optimum: Any, at_an_optimum: bool,
                                                    eps: float) -> None:
    """The corrected Theorem 2 (LIP) and Proposition 3 (LDP) as printed reach the optimal MSE; the
    corrected Theorem 2's flips are also one of the optimal mechanisms."""
    for p in PAPER_PRIORS:
        cf, opt = closed_form(p, eps), optimum(p, eps)
        assert cf.feasible
        assert cf.mse_printed == pytest.approx(opt.mse, rel=1e-10, abs=1e-15)
        assert cf.mse_at_point == pytest.approx(opt.mse, rel=1e-10, abs=1e-15)
        if at_an_optimum:
            assert min(max(abs(a - cf.q0), abs(b - cf.q1)) for a, b in opt.alternatives) < 1e-9


@pytest.mark.parametrize("eps", [0.25, *EPSILONS, 8.0])
def test_proposition4_point_is_right_but_its_printed_mse_is_not(eps: float) -> None:
    e = math.exp(eps)
    for p in PAPER_PRIORS:
        cf, opt = paper_proposition4(p, eps), optimal_symmetric_lip(p, eps)
        assert cf.feasible
        assert cf.mse_at_point == pytest.approx(opt.mse, rel=1e-10, abs=1e-15)
        # the correct closed form of the MSE at the printed point (P1 <= 1/2; mirror P1 -> 1 - P1)
        s = min(p, 1 - p)
        correct = p * (1 - p) * (1 - s * (e - 1) ** 2 / (e * (1 + s * (e - 2))))
        assert opt.mse == pytest.approx(correct, rel=1e-10, abs=1e-15)
    # eq. (23) as printed is not the MSE (it is even negative, e.g. at P1 = 0.1)
    assert paper_proposition4(0.1, eps).mse_printed < 0


def test_compare_with_paper_rows() -> None:
    rows = compare_with_paper([0.01, 0.3, 0.99], [1.0, 2.0])
    assert len(rows) == 5 * 3 * 2
    bad = {(r["claim"], r["prior"], r["epsilon"]) for r in rows if not r["feasible"]}
    assert bad == {("Theorem 2", p, e) for p in (0.01, 0.99) for e in (1.0, 2.0)} | {
        ("Corollary 1", p, e) for p in (0.01, 0.99) for e in (1.0, 2.0)}
    for r in rows:
        if r["claim"] in ("Theorem 2", "Corollary 1") and r["prior"] == 0.3:
            assert abs(r["mse_gap"]) < 1e-12 and r["q_gap"] < 1e-9


# ------------------------------------------------------------------------------ MMSE estimation
def _exact_by_enumeration(rr: BinaryRR, priors: np.ndarray) -> tuple[float, float, dict[tuple[int, ...], float]]:
    """MSE of E[S | Y] (by conditioning on the whole report vector) and of the unbiased estimator."""
    n = priors.size
    Q = rr.channel().matrix
    xs = np.array(list(itertools.product((0, 1), repeat=n)))
    px = np.prod(np.where(xs == 1, priors, 1 - priors), axis=1)
    mmse = unb = 0.0
    post: dict[tuple[int, ...], float] = {}
    for y in itertools.product((0, 1), repeat=n):
        pyx = np.prod(Q[xs, np.array(y)[None, :]], axis=1)
        joint = px * pyx
        s = xs.sum(axis=1)
        est = float(joint @ s / joint.sum())  # E[S | Y = y], no decomposition used
        post[y] = est
        mmse += float(joint @ (s - est) ** 2)
        unb += float(joint @ (s - (sum(y) - n * rr.q0) / (1 - rr.q0 - rr.q1)) ** 2)
    return mmse, unb, post


@pytest.mark.parametrize("q0, q1", [(0.1, 0.3), (0.25, 0.25), (0.8, 0.6), (0.0, 0.4)])
def test_mmse_and_unbiased_mse_match_exact_enumeration(q0: float, q1: float) -> None:
    priors = np.array([0.1, 0.5, 0.73, 0.02, 0.9])
    rr = BinaryRR(q0, q1)
    mmse, unb, post = _exact_by_enumeration(rr, priors)
    assert rr.mmse(priors) == pytest.approx(mmse, rel=1e-12)
    assert rr.unbiased_mse(priors) == pytest.approx(unb, rel=1e-12)
    for y, est in post.items():
        assert rr.mmse_estimate(np.array(y), priors) == pytest.approx(est, rel=1e-12, abs=1e-14)
    # conditional on the inputs, the unbiased estimator's variance; and it is ChannelOracle's
    for c in range(6):
        xs = np.array([1] * c + [0] * (5 - c))
        ys = list(itertools.product((0, 1), repeat=5))
        Q = rr.channel().matrix
        probs = np.array([np.prod(Q[xs, np.array(y)]) for y in ys])
        ests = np.array([rr.unbiased_estimate(np.array(y)) for y in ys])
        assert probs @ ests == pytest.approx(c, abs=1e-12)
        assert rr.unbiased_variance(c, 5) == pytest.approx(probs @ (ests - c) ** 2, rel=1e-12)
        assert rr.unbiased_variance(c, 5) == pytest.approx(rr.variance([5 - c, c])[1], rel=1e-12)


def _error_moments(rr: BinaryRR, priors: np.ndarray, mmse: bool) -> tuple[float, float]:
    """Exact ``E[E^2]`` and ``Var(E^2)`` of the total error ``E = sum_i e_i`` (independent, zero-mean ``e_i``).

    ``E[E^4] = sum m4_i + 3 [(sum m2_i)^2 - sum m2_i^2]``, so ``Var(E^2) = sum m4 - 3 sum m2^2 + 2 (sum m2)^2``.
    """
    Q = rr.channel().matrix
    m2 = np.zeros(priors.size)
    m4 = np.zeros(priors.size)
    for x in (0, 1):
        for y in (0, 1):
            pr = np.where(x == 1, priors, 1 - priors) * Q[x, y]
            if mmse:
                est = rr.posterior_mean(np.full(priors.size, y), priors)
            else:
                est = np.full(priors.size, (y - rr.q0) / (1 - rr.q0 - rr.q1))
            m2 += pr * (est - x) ** 2
            m4 += pr * (est - x) ** 4
    s2 = float(m2.sum())
    return s2, float(m4.sum() - 3 * np.sum(m2**2) + 2 * s2**2)


def test_mmse_matches_a_seeded_simulation_with_power_against_the_prior_free_mse() -> None:
    gen = np.random.default_rng(14)
    priors = gen.uniform(0.02, 0.98, size=200)
    rr = optimal_lip(0.2, 1.0).mechanism()
    trials = 4_000
    err_mm, err_ub = rr.sample_errors(priors, trials=trials, rng=15)
    for err, mmse in ((err_mm, True), (err_ub, False)):
        mean_sq, var_sq = _error_moments(rr, priors, mmse)
        assert mean_sq == pytest.approx(rr.mmse(priors) if mmse else rr.unbiased_mse(priors), rel=1e-12)
        sd = math.sqrt(var_sq / trials)
        assert abs(float(np.mean(err**2)) - mean_sq) < Z * sd
        assert abs(float(np.mean(err))) < Z * math.sqrt(mean_sq / trials)  # no bias either
    # power: the named mistake (quoting the prior-free estimator's MSE for the MMSE estimator)
    # sits more than 2 Z standard errors away, so it is rejected with near certainty
    _, var_mm = _error_moments(rr, priors, True)
    assert rr.unbiased_mse(priors) - rr.mmse(priors) > 2 * Z * math.sqrt(var_mm / trials)
    assert abs(float(np.mean(err_mm**2)) - rr.unbiased_mse(priors)) > Z * math.sqrt(var_mm / trials)


@pytest.mark.parametrize(
    "mech",
    [BinaryRR(0.1, 0.3, prior=0.2, epsilon=math.log(7), lip_epsilon=1.2), BinaryRR.symmetric(0.25, epsilon=math.log(3)),
     optimal_lip(0.05, 2.0).mechanism(), optimal_ldp(0.5, 0.5).mechanism()],
    ids=repr,
)
def test_binary_rr_meets_the_contract(mech: BinaryRR) -> None:
    """Sampling matches the channel (chi-square), guarantees hold, simulation matches the per-user path."""
    report = check_contract(mech, rng=7)
    assert report.rows_checked == 2


def test_declared_lip_is_verified_and_an_overstated_one_is_refused() -> None:
    opt = optimal_lip(0.1, 1.0)
    ldp_tight = accountant.ldp_epsilon(BinaryRR(opt.q0, opt.q1))
    good = BinaryRR(opt.q0, opt.q1, prior=0.1, epsilon=ldp_tight, lip_epsilon=1.0)
    assert [g.notion for g in good.guarantees()] == ["ldp", "lip"]
    assert accountant.verify(good).satisfied
    bad = BinaryRR(opt.q0, opt.q1, prior=0.1, epsilon=ldp_tight, lip_epsilon=0.9)
    report = accountant.verify(bad)
    assert not report.satisfied
    (_, ldp), (_, lip) = list(report)
    assert ldp.satisfied and lip.slack == pytest.approx(-0.1, abs=1e-12)
    # a budget is declared only when stated: nothing is read off the channel
    assert BinaryRR(opt.q0, opt.q1, prior=0.1).guarantees() == []
    assert [g.notion for g in BinaryRR(opt.q0, opt.q1, prior=0.1, lip_epsilon=1.0).guarantees()] == ["lip"]
    g = Guarantee("lip", prior=[0.9, 0.1], epsilon=1.0)
    assert g.check(good).satisfied


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="q0 \\+ q1 must differ from 1"):
        BinaryRR(0.3, 0.7)
    with pytest.raises(ValueError, match="prior must be a probability in \\(0, 1\\)"):
        BinaryRR(0.1, 0.2, prior=1.0)
    with pytest.raises(ValueError, match="give prior too"):
        BinaryRR(0.1, 0.2, lip_epsilon=1.0)
    with pytest.raises(ArgumentTypeError):
        BinaryRR("0.1", 0.2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no global prior"):
        BinaryRR(0.1, 0.2).mmse(n=3)
    with pytest.raises(ValueError, match="needs the number of users"):
        BinaryRR(0.1, 0.2).mmse(0.3)
    with pytest.raises(ValueError, match="length 2, but there are n=3"):
        BinaryRR(0.1, 0.2).mmse_estimate([0, 1, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match="reports were made by"):
        BinaryRR(0.1, 0.2).mmse_estimate(BinaryRR(0.1, 0.3).perturb([0, 1], rng=0), 0.5)
    with pytest.raises(ValueError, match="epsilon"):
        optimal_lip(0.1, 0.0)
    with pytest.raises(ValueError, match="\\(0, 1\\)"):
        optimal_lip(0.0, 1.0)
    with pytest.raises(ValueError, match="supported range \\[1e-06, 300\\]"):
        optimal_lip(0.2, 301.0)
    with pytest.raises(ValueError, match="supported range \\[1e-06, 30\\]"):
        optimal_kary_lip([0.5, 0.5], 31.0)
    with pytest.raises(ValueError, match="priors must lie in \\(0, 1\\)"):
        optimal_lip_local([0.2, 1.0], 1.0)
    with pytest.raises(ValueError, match="full support"):
        optimal_kary_lip([0.5, 0.5, 0.0], 1.0)
    with pytest.raises(ValueError, match="'mse' or 'map'"):
        optimal_kary_lip([0.5, 0.5], 1.0, objective="mae")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="between 2 and"):
        optimal_kary_lip([1.0], 1.0)


# ------------------------------------------------------------------------------ k-ary LIP
def _priors(k: int) -> list[np.ndarray]:
    gen = np.random.default_rng(100 + k)
    skew = 0.6 ** np.arange(k)
    return [np.full(k, 1.0 / k), skew / skew.sum(), gen.dirichlet(np.ones(k))]


KARY = [(k, i, eps) for k in range(2, 9) for i in range(3) for eps in EPSILONS]


@pytest.mark.parametrize("k, which, eps", KARY, ids=[f"k{k}-prior{i}-eps{e}" for k, i, e in KARY])
def test_kary_optimum_is_certified_and_beats_the_baselines(k: int, which: int, eps: float) -> None:
    pi = _priors(k)[which]
    opt = optimal_kary_lip(pi, eps)
    cert = opt.certificate
    assert cert["duality_gap"] < 1e-9 and cert["dual_infeasibility"] < 1e-9
    assert opt.risk - opt.lower_bound < 1e-9
    assert opt.channel.n_outputs <= k
    assert accountant.check_lip(opt.channel, eps, prior=pi).satisfied
    assert opt.risk == pytest.approx(bayes_risk(opt.channel, pi), abs=1e-15)
    table = compare_kary(pi, eps)
    for name, row in table.items():
        assert row["lip_epsilon"] <= eps * (1 + 1e-9), name  # every row is compared at eps-LIP
        assert table["LIP-optimal"]["risk"] <= row["risk"] + 1e-12, name
    assert table["LDP-optimal"]["ldp_epsilon"] <= eps * (1 + 1e-9)
    for name in ("GRR", "OUE"):  # the LDP optimum is optimal among eps-LDP channels
        assert table["LDP-optimal"]["risk"] <= table[name]["risk"] + 1e-12
    # random eps-LIP channels (mixed towards uniform until eps-LIP) never beat the certified bound
    for seed in range(3):
        ch = random_channel(k, k + 1, rng=seed)
        lo, hi = 0.0, 1.0
        for _ in range(50):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if accountant.lip_epsilon(mix_with_uniform(ch, mid), pi) <= eps else (mid, hi)
        assert bayes_risk(mix_with_uniform(ch, hi), pi) >= opt.lower_bound - 1e-12


@pytest.mark.parametrize("eps", EPSILONS)
def test_kary_optimum_at_k2_is_the_binary_optimum(eps: float) -> None:
    for p in PRIORS:
        assert optimal_kary_lip([1 - p, p], eps).risk == pytest.approx(2 * optimal_lip(p, eps).mse, rel=1e-9)
        assert optimal_kary_ldp([1 - p, p], eps).risk == pytest.approx(2 * optimal_ldp(p, eps).mse, rel=1e-9)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_kary_local_search_never_beats_the_certificate(k: int) -> None:
    pi = _priors(k)[2]
    for objective in ("mse", "map"):
        opt = optimal_kary_lip(pi, 1.0, objective, local_starts=4, rng=k)
        gap = opt.certificate["local_search_gap"]
        assert gap >= -1e-9
        if k == 2:  # two outputs: SLSQP reaches the global optimum
            assert gap < 1e-8


def test_kary_optimum_plugs_into_channel_oracle() -> None:
    pi = np.array([0.5, 0.3, 0.2])
    opt = optimal_kary_lip(pi, 1.0)
    assert opt.full_rank
    oracle = opt.oracle()
    assert accountant.verify(oracle).satisfied
    check_contract(oracle, rng=3, samples_per_input=5_000, trials=100)
    # the posterior-mean histogram: exact MSE n * risk, checked by enumeration over one user
    m = opt.channel.matrix
    mse = sum(pi[x] * m[x, y] * np.sum((opt.posterior_mean_counts(np.eye(3, dtype=int)[y]) - np.eye(3)[x]) ** 2)
              for x in range(3) for y in range(3))
    assert mse == pytest.approx(opt.risk, rel=1e-12)


def test_kary_rank_deficient_optimum_is_refused_by_the_oracle_with_a_reason() -> None:
    pi = np.array([0.9, 0.05, 0.05])
    opt = optimal_kary_lip(pi, 0.5)
    if opt.full_rank:  # pragma: no cover - depends on the optimum found
        pytest.skip("this optimum happens to have full rank")
    with pytest.raises(ValueError, match="no unbiased estimator"):
        opt.oracle()


def test_bayes_risk_accepts_matrices_channels_and_mechanisms() -> None:
    m = [[0.75, 0.25], [0.25, 0.75]]
    assert bayes_risk(m, [0.5, 0.5]) == pytest.approx(0.375)
    assert bayes_risk(ExplicitChannel(np.array(m)), [0.5, 0.5]) == pytest.approx(0.375)
    assert bayes_risk(BinaryRR.symmetric(0.25), [0.5, 0.5]) == pytest.approx(0.375)
    assert bayes_risk(m, [0.5, 0.5], "map") == pytest.approx(0.25)


# ---------------------------------------------------------------- the book's proofs (LIP chapter)
@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_two_point_bound_is_the_corrected_theorem2(eps: float) -> None:
    """thm-lip-opt: the best MSE is P1 P0 + P1^2 L U with [1 + L, 1 + U] the LIP range of r_y(1)."""
    e = math.exp(eps)
    for p in np.round(np.arange(1, 200) / 200, 3):
        up = min(e, (1 - (1 - p) / e) / p) - 1
        lo = max(1 / e, (1 - (1 - p) * e) / p) - 1
        bound = p * (1 - p) + p * p * lo * up
        assert abs(bound - corrected_theorem2(float(p), eps).mse_printed) < 1e-12
        assert abs(bound - optimal_lip(float(p), eps).mse) < 1e-12


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_theorem1_factor_two_is_attained(eps: float) -> None:
    """thm-lip-ldp: under the prior (c, 1 - c) this binary channel is eps-LIP and exactly 2eps-LDP."""
    e, t = math.exp(eps), math.exp(-eps) / 2
    ch = ExplicitChannel([[e * t, 1 - e * t], [t / e, 1 - t / e]])
    prior = [1 / (1 + e), e / (1 + e)]
    assert accountant.lip_epsilon(ch, prior) == pytest.approx(eps, rel=1e-12)
    assert accountant.ldp_epsilon(ch) == pytest.approx(2 * eps, rel=1e-12)


@pytest.mark.parametrize("m", [3, 6, 7, 40])
def test_grr_uniform_prior_mip_ratio_and_bits_counterexample(m: int) -> None:
    """prop-lip-mip: GRR with e^eps = m - 1 has I = eps (m-2)/m nats; in bits I > eps from m = 7."""
    from ldpkit import GRR

    uniform = np.full(m, 1 / m)
    ch = GRR(m, 2 * math.log(m - 1)).channel()
    eps = accountant.lip_epsilon(ch, uniform)
    assert eps == pytest.approx(math.log(m - 1), rel=1e-12)
    assert accountant.mutual_information(ch, uniform) == pytest.approx(eps * (m - 2) / m, rel=1e-10)
    assert accountant.check_mip(ch, eps, prior=uniform).satisfied
    assert accountant.check_mip(ch, eps, prior=uniform, base=2).satisfied == (m < 7)
