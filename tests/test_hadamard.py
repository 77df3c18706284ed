"""Hadamard Response (HR) and the reconstructed Flexible Hadamard Response (FHR): ``ldpkit.hadamard``.

* the Sylvester/FWHT helpers against the dense matrix and the recursion of eq. 6;
* the structured :class:`~ldpkit.channels.HadamardChannel` (rows sum to 1) and its closed forms
  (LDP epsilon, FLDP ``alpha``/``eps``/hiding fraction) against exact enumeration, ``K = 4..32``;
* sampling against the declared channel (chi-square, fixed seeds), with the power against a
  named mistake computed from the noncentral chi-square;
* the exact aggregate sampler :func:`~ldpkit.hadamard.hadamard_placements` against the exact law
  of the histogram (enumerated by convolution);
* the estimators: exact mean and variance by enumerating the per-user contribution of every
  output (no Monte Carlo), then seeded Monte Carlo on both paths with tolerances derived from
  the exact fourth cumulant (the known variance of the sample variance);
* reports, provenance and validation.

Registration makes both families run through ``tests/test_contract.py`` (checked here too).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import ldpkit
from ldpkit import FHR, HR, accountant
from ldpkit.channels import HadamardChannel
from ldpkit.hadamard import PairReports, fwht, hadamard_order, hadamard_placements, sylvester
from ldpkit.family import families, get_family
from ldpkit.testing import Z, chi_square_noncentrality, check_sampling_matches_channel, check_simulation_matches_per_user

EPSILONS = (0.3, 1.0, 2.5)


# ------------------------------------------------------------------------------ helpers
@pytest.mark.parametrize("k", [2**m for m in range(1, 7)])
def test_fwht_equals_the_dense_product(k: int) -> None:
    rng = np.random.default_rng(k)
    h = sylvester(k)
    ints = rng.integers(-1000, 1000, size=(3, k))
    reals = rng.normal(size=k)
    assert np.array_equal(fwht(ints), ints @ h.T)  # leading axes transformed independently
    assert fwht(ints).dtype == np.int64
    np.testing.assert_allclose(fwht(reals), h @ reals, rtol=1e-12, atol=1e-12)
    # H_K is symmetric and H_K^2 = K I
    assert np.array_equal(fwht(fwht(ints)), k * ints)


def test_sylvester_is_the_recursion_of_eq_6() -> None:
    h = np.array([[1]])
    for _ in range(6):
        h = np.block([[h, h], [h, -h]])
        assert np.array_equal(sylvester(h.shape[0]), h)


def test_helpers_refuse_bad_arguments() -> None:
    with pytest.raises(ValueError, match="power of two"):
        fwht(np.ones(6))
    with pytest.raises(ldpkit.ArgumentTypeError, match="dtype"):
        fwht(np.array(["a", "b"]))
    with pytest.raises(ValueError, match="MAX_DENSE_K"):
        sylvester(1 << 13)
    with pytest.raises(ValueError, match=r"side_counts\[0, 1\]"):
        hadamard_placements([[0, 1], [0, 0]])
    with pytest.raises(ValueError, match="shape"):
        hadamard_placements([1, 2, 3, 4])
    with pytest.raises(ValueError, match="method"):
        hadamard_placements([[1, 0], [0, 0]], method="fast")
    assert [hadamard_order(d) for d in (2, 3, 4, 1023, 1024)] == [4, 4, 8, 1024, 2048]


# ------------------------------------------------------------------------------ the exact aggregate sampler
def _placement_law(groups: list[tuple[np.ndarray, int]], k: int) -> dict[tuple[int, ...], float]:
    """Exact law of the histogram of independent placements, each uniform on a set (by convolution)."""
    law: dict[tuple[int, ...], float] = {(0,) * k: 1.0}
    for positions, count in groups:
        for _ in range(count):
            nxt: dict[tuple[int, ...], float] = {}
            for hist, prob in law.items():
                for pos in positions:
                    key = list(hist)
                    key[pos] += 1
                    t = tuple(key)
                    nxt[t] = nxt.get(t, 0.0) + prob / len(positions)
            law = nxt
    return law


@pytest.mark.parametrize("method", ["tree", "direct"])
def test_hadamard_placements_has_the_exact_law_of_the_histogram(method: str) -> None:
    """Chi-square against the enumerated law (792 histograms), for both samplers; power against a
    fair-split-only sampler.

    The plausible mistakes: for the tree, splitting every group fairly on every bit, forgetting
    that a row whose only remaining bit is the top one has its side fixed; for the direct sampler,
    not moving a position onto its side.  Either way row 4's placement would be uniform on all 8
    positions; the noncentrality of that law at this sample size gives power > 0.999.
    """
    k = 8
    h = sylvester(k)
    sides = np.zeros((k, 2), dtype=np.int64)
    sides[0, 0] = sides[1, 0] = sides[4, 1] = sides[6, 0] = sides[7, 1] = 1
    groups = [(np.flatnonzero(h[r] == (1 if t == 0 else -1)), int(sides[r, t])) for r in range(k) for t in range(2)]
    law = _placement_law([g for g in groups if g[1]], k)
    keys = sorted(law)
    index = {key: i for i, key in enumerate(keys)}
    probs = np.array([law[key] for key in keys])
    draws = 20_000
    rng = np.random.default_rng(11)
    observed = np.zeros(len(keys))
    for _ in range(draws):
        observed[index[tuple(hadamard_placements(sides, rng, method=method).tolist())]] += 1
    level = 1e-6
    stat, dof, pval = ldpkit.testing.chi_square_gof(observed, probs)
    assert pval >= level, (stat, dof, pval)
    wrong_groups = [(np.arange(k), 1) if g[0].size == 4 and set(g[0]) == set(np.flatnonzero(h[4] == -1)) else g
                    for g in groups if g[1]]
    wrong = _placement_law(wrong_groups, k)
    alt = np.array([wrong.get(key, 0.0) for key in keys])
    assert alt.sum() < 1.0  # the mistake also produces histograms the true law never does
    pooled = probs >= 5.0 / draws
    crit = stats.chi2.isf(level, int(pooled.sum()))
    power = stats.ncx2.sf(crit, int(pooled.sum()), chi_square_noncentrality(probs[pooled], alt[pooled], draws))
    assert power > 0.999, power


# ------------------------------------------------------------------------------ channels
@pytest.mark.parametrize("mech_cls", [HR, FHR])
@pytest.mark.parametrize("d", [2, 3, 4, 7, 8, 15, 16, 31])
def test_channel_rows_sum_to_one(mech_cls: type, d: int) -> None:
    for eps in EPSILONS + (1e-6, 700.0):
        m = mech_cls(d, eps).channel().to_explicit().matrix
        np.testing.assert_allclose(m.sum(axis=1), 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("k", [4, 8, 16, 32])
def test_closed_forms_equal_enumeration(k: int) -> None:
    """LDP epsilon and every FLDP parameter, closed form (no enumeration) against the explicit matrix."""
    for d in sorted({k // 2, k // 2 + 1, k - 1}):
        for eps in EPSILONS:
            for mech in (HR(d, eps), FHR(d, eps)):
                ch = mech.channel()
                ex = ch.to_explicit()
                assert accountant.ldp_epsilon(ch) == pytest.approx(accountant.ldp_epsilon(ex), rel=1e-12)
                np.testing.assert_allclose(accountant.pairwise_log_ratio(ch), accountant.pairwise_log_ratio(ex), rtol=1e-12)
                closed, enum = accountant.fldp_parameters(ch), accountant.fldp_parameters(ex)
                assert closed.shared_fraction == enum.shared_fraction
                assert closed.epsilon == pytest.approx(enum.epsilon, rel=1e-12)
                assert closed.hiding_fraction == enum.hiding_fraction
                assert closed.fraction_pair == enum.fraction_pair and closed.ratio_pair == enum.ratio_pair


@pytest.mark.parametrize("k", [4, 8, 16, 32])
def test_fhr_is_half_eps_fldp_and_not_ldp_by_enumeration(k: int) -> None:
    """FHR: alpha = 1/2 and eps exactly (Theorem 2, recomputed), LDP epsilon infinite, for every d in (K/2, K)."""
    for d in range(k // 2, k):
        for eps in EPSILONS:
            ex = FHR(d, eps).channel().to_explicit()
            params = accountant.fldp_parameters(ex)
            assert params.shared_fraction == 0.5
            assert params.epsilon == pytest.approx(eps, rel=1e-12)
            assert math.isinf(accountant.ldp_epsilon(ex))
            assert accountant.check_fldp(ex, eps, alpha=0.5).satisfied
            assert not accountant.check_fldp(ex, eps, alpha=0.5 + 1e-6).satisfied
            assert not accountant.check_fldp(ex, eps * (1 - 1e-6), alpha=0.5).satisfied


@pytest.mark.parametrize("k", [4, 8, 16, 32])
def test_hr_satisfies_its_ldp_epsilon_exactly(k: int) -> None:
    for d in (k // 2, k - 1):
        for eps in EPSILONS + (1e-6, 700.0):
            hr = HR(d, eps)
            ex = hr.channel().to_explicit()
            assert accountant.ldp_epsilon(ex) == pytest.approx(eps, rel=1e-9)
            assert accountant.check_ldp(ex, eps).satisfied
            if eps >= 0.1:  # below, 1e-6 relative is inside the accountant's absolute slack of 1e-9
                assert not accountant.check_ldp(ex, eps * (1 - 1e-6)).satisfied
            assert accountant.verify(hr).satisfied


def test_large_domains_are_accounted_without_enumeration() -> None:
    """d = 100,000 (K = 131,072; FHR has 1.7e10 outputs): closed forms only, both guarantees verified."""
    fhr, hr = FHR(100_000, 1.0), HR(100_000, 1.0)
    assert accountant.verify(fhr).satisfied and accountant.verify(hr).satisfied
    assert math.isinf(accountant.ldp_epsilon(fhr))
    assert accountant.ldp_epsilon(hr) == pytest.approx(1.0, rel=1e-12)
    params = accountant.fldp_parameters(fhr)
    assert params.shared_fraction == 0.5 and params.epsilon == pytest.approx(1.0, rel=1e-12)
    with pytest.raises(ValueError, match="max_cells"):
        fhr.channel().to_explicit()


def test_guarantees_are_declared_as_data() -> None:
    assert FHR(5, 1.0).guarantees() == [ldpkit.Guarantee("fldp", alpha=0.5, epsilon=1.0)]
    assert HR(5, 1.0).guarantees() == [ldpkit.Guarantee("ldp", epsilon=1.0)]
    assert math.isinf(FHR(5, 1.0).epsilon) and FHR(5, 1.0).fldp_epsilon == 1.0


def test_channel_validation() -> None:
    with pytest.raises(ValueError, match="power of two"):
        HadamardChannel(3, 6, 0.6, 0.4)
    with pytest.raises(ValueError, match="d"):
        HadamardChannel(4, 4, 0.6, 0.4)  # rows 1..4 do not exist in H_4
    with pytest.raises(ValueError, match="sum to 1"):
        HadamardChannel(3, 4, 0.6, 0.5)
    # degenerate p: no closed form, the accountant enumerates
    ch = HadamardChannel(3, 4, 1.0, 0.0, paired=True)
    assert accountant.fldp_parameters(ch) == accountant.fldp_parameters(ch.to_explicit())


# ------------------------------------------------------------------------------ sampling
@pytest.mark.parametrize("mech", [HR(9, 1.0), FHR(9, 1.0), FHR(6, 0.4), HR(12, 2.0)], ids=repr)
def test_sampling_matches_the_declared_channel(mech: object) -> None:
    check_sampling_matches_channel(mech, 40_000, rng=21)


def test_fhr_sampling_matches_the_channel_at_k_64() -> None:
    """4,032 ordered pairs: three inputs, chi-square at a family-wise level 1e-6."""
    fhr = FHR(40, 1.0)
    matrix = fhr.channel().to_explicit().matrix
    rng = np.random.default_rng(5)
    for x in (0, 17, 39):
        out = fhr.sample_outputs(x, 60_000, rng)
        ldpkit.testing.assert_matches_distribution(np.bincount(out, minlength=matrix.shape[1]), matrix[x], 1e-6 / 3)


class HalfBudgetFHR(FHR):
    """FHR that keeps the pair with the probability of eps/2 while declaring eps (channel as declared)."""

    def perturb(self, items, rng=None):  # type: ignore[no-untyped-def]
        reports = FHR(self.d, self.fldp_epsilon / 2).perturb(items, rng)
        return PairReports(reports.plus, reports.minus, reports.K, self.provenance)


def test_sampling_check_has_power_against_half_the_budget() -> None:
    """Noncentral chi-square at the sample size of the test above: the half-budget mistake is rejected."""
    n = 40_000
    declared = FHR(9, 1.0).channel().to_explicit().matrix
    actual = FHR(9, 0.5).channel().to_explicit().matrix
    k = declared.shape[1]
    crit = stats.chi2.isf(1e-6 / declared.shape[0], k - 1)
    power = max(stats.ncx2.sf(crit, k - 1, chi_square_noncentrality(declared[x], actual[x], n)) for x in range(9))
    assert power > 0.999, power
    with pytest.raises(AssertionError, match="chi-square"):
        check_sampling_matches_channel(HalfBudgetFHR(9, 1.0), n, rng=21)


# ------------------------------------------------------------------------------ estimators: exact enumeration
def _contributions(mech: object, ex_cols: int) -> np.ndarray:
    """``f[i, y]``: what one report ``y`` adds to ``c_hat_i`` (the estimator is a sum over users)."""
    k = mech.K  # type: ignore[attr-defined]
    h = sylvester(k)[1 : mech.d + 1]  # type: ignore[attr-defined]
    if isinstance(mech, FHR):
        a, z = np.nonzero(~np.eye(k, dtype=bool))
        assert a.size == ex_cols
        return (h[:, a] - h[:, z]) / (2.0 * mech.lam)
    hr: HR = mech  # type: ignore[assignment]
    return ((h > 0) - 0.5) / (hr.p - 0.5)


def _per_user_moments(mech: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact mean, variance and fourth cumulant of every item's per-user contribution, per input: (d, d) each."""
    m = mech.channel().to_explicit().matrix  # type: ignore[attr-defined]
    f = _contributions(mech, m.shape[1])
    mean = m @ f.T  # [x, i]
    centred = f[None, :, :] - mean[:, :, None]  # [x, i, y]
    var = np.einsum("xy,xiy->xi", m, centred**2)
    mu4 = np.einsum("xy,xiy->xi", m, centred**4)
    return mean, var, mu4 - 3 * var**2


@pytest.mark.parametrize("k", [4, 8, 16, 32])
def test_estimators_are_unbiased_with_the_derived_variance_by_enumeration(k: int) -> None:
    """No sampling: E and Var of each user's contribution, from the explicit channel, equal the formulas.

    FHR: mean ``[i = x]``; variance ``1/sinh^2(eps/2)`` for the holder and ``1/(2 tanh^2(eps/2))``
    otherwise.  HR: the pure-protocol terms ``p(1-p)/(p-1/2)^2`` and ``(1/4)/(p-1/2)^2``.
    """
    for d in (k // 2, k - 1):
        for eps in EPSILONS:
            for mech in (FHR(d, eps), HR(d, eps)):
                mean, var, _ = _per_user_moments(mech)
                np.testing.assert_allclose(mean, np.eye(d), atol=1e-12)
                for x in (0, d - 1):
                    counts = np.zeros(d, dtype=np.int64)
                    counts[x] = 1
                    np.testing.assert_allclose(var[x], mech.variance(counts), rtol=1e-12)


def test_the_remark_on_a_more_accurate_fhr_estimator() -> None:
    """Module docstring, *Remark*: the count of ``+1`` contributions is a pure support count (p, 1/4).

    By enumeration at ``K = 16``: its estimator ``(S_i - n/4)/(p - 1/4)`` is unbiased and a
    non-holder adds ``3/(16 (p - 1/4)^2)`` to its variance, less than the paper's ``1/(2 lambda^2)``.
    """
    fhr = FHR(12, 1.0)
    m = fhr.channel().to_explicit().matrix
    h = sylvester(fhr.K)[1:13]
    a, z = np.nonzero(~np.eye(fhr.K, dtype=bool))
    support = (h[:, a] - h[:, z]) == 2  # [i, y]: report y adds +1 to D_i
    prob = m @ support.T  # [x, i]
    np.testing.assert_allclose(np.diag(prob), fhr.p, rtol=1e-12)
    np.testing.assert_allclose(prob[~np.eye(12, dtype=bool)], 0.25, rtol=1e-12)
    other = 0.25 * 0.75 / (fhr.p - 0.25) ** 2
    assert other == pytest.approx(3 / (16 * (fhr.p - 0.25) ** 2))
    assert round(other, 2) == 0.81 and round(1 / (2 * fhr.lam**2), 2) == 2.34


def test_the_variance_formula_simplifies_as_stated() -> None:
    """``1/lambda^2 - 1 = 1/sinh^2(eps/2)`` with ``lambda = 2p - 1 = tanh(eps/2)``, ``p = e^eps/(1+e^eps)`` (sympy)."""
    sympy = pytest.importorskip("sympy")
    eps = sympy.symbols("epsilon", positive=True)
    p = sympy.exp(eps) / (1 + sympy.exp(eps))
    lam = 2 * p - 1
    assert sympy.simplify((lam - sympy.tanh(eps / 2)).rewrite(sympy.exp)) == 0
    assert sympy.simplify((1 / lam**2 - 1 - 1 / sympy.sinh(eps / 2) ** 2).rewrite(sympy.exp)) == 0


# ------------------------------------------------------------------------------ estimators: Monte Carlo
def _sample_variance_sd(kappa2: np.ndarray, kappa4: np.ndarray, r: int) -> np.ndarray:
    """Standard deviation of the sample variance of ``r`` i.i.d. draws with cumulants ``kappa2``, ``kappa4``.

    ``Var[s^2] = kappa4 / r + 2 kappa2^2 / (r - 1)`` (exact for any law with a fourth moment).
    """
    return np.sqrt(kappa4 / r + 2.0 * kappa2**2 / (r - 1))


@pytest.mark.parametrize("mech", [FHR(7, 1.0), HR(7, 1.0), FHR(12, 0.3)], ids=repr)
def test_monte_carlo_mean_and_variance_match_the_formulas(mech: object) -> None:
    """Seeded trials of both paths; tolerances from the exact cumulants of the estimator.

    The estimator is a sum over independent users, so its cumulants are sums of the per-user
    ones (enumerated above): ``kappa2`` is the declared variance and ``kappa4`` gives the
    standard deviation of the sample variance.  Power: the FHR variance with the holders' term
    replaced by the non-holders' ``1/(2 lambda^2)`` (a plausible slip, the two differ by a
    factor 2 at small eps) is off by more than the tolerance plus three standard deviations at
    item 0, which holds half the users.
    """
    d = mech.d  # type: ignore[attr-defined]
    n = 400
    counts = np.zeros(d, dtype=np.int64)
    counts[0], counts[1], counts[2] = n // 2, n // 4, n // 8
    counts[3] = n - counts[:3].sum()
    _, var_u, k4_u = _per_user_moments(mech)
    kappa2 = counts @ var_u
    kappa4 = counts @ k4_u
    np.testing.assert_allclose(kappa2, mech.variance(counts), rtol=1e-12)  # type: ignore[attr-defined]
    rng = np.random.default_rng(2022)
    r_sim, r_user = 3000, 600
    sim = mech.simulate(counts, rng=rng, trials=r_sim)  # type: ignore[attr-defined]
    users = np.repeat(np.arange(d), counts)
    per = np.stack([mech.estimate(mech.perturb(users, rng)) for _ in range(r_user)])  # type: ignore[attr-defined]
    for samples, r in ((sim, r_sim), (per, r_user)):
        assert np.all(np.abs(samples.mean(axis=0) - counts) <= Z * np.sqrt(kappa2 / r))
        sd = _sample_variance_sd(kappa2, kappa4, r)
        assert np.all(np.abs(samples.var(axis=0, ddof=1) - kappa2) <= Z * sd), (samples.var(axis=0, ddof=1), kappa2)
    if isinstance(mech, FHR):
        sd = _sample_variance_sd(kappa2, kappa4, r_sim)
        slip = n / (2 * mech.lam**2)  # every user at the non-holders' variance
        assert abs(slip - kappa2[0]) > (Z + 3) * sd[0]


@pytest.mark.parametrize("mech", [FHR(9, 0.7), HR(9, 0.7), FHR(33, 2.0)], ids=repr)
def test_aggregate_simulation_matches_the_per_user_path(mech: object) -> None:
    check_simulation_matches_per_user(mech, rng=8)


# ------------------------------------------------------------------------------ aggregation and reports
def test_aggregate_equals_the_dense_dot_products() -> None:
    rng = np.random.default_rng(3)
    for mech in (FHR(13, 1.0), HR(13, 1.0)):
        items = rng.integers(0, 13, size=500)
        reports = mech.perturb(items, rng)
        h = sylvester(mech.K)[1:14]
        if isinstance(mech, FHR):
            v = np.zeros(mech.K, dtype=np.int64)
            np.add.at(v, reports.plus, 1)
            np.add.at(v, reports.minus, -1)
            assert np.array_equal(mech.aggregate(reports), (h @ v) // 2)
            assert np.all(h[items, reports.plus] - h[items, reports.minus] != 0)  # opposite sides of the row
        else:
            assert np.array_equal(mech.aggregate(reports), (h[:, np.asarray(reports)] > 0).sum(axis=1))


def test_fhr_reports_are_small_and_validated() -> None:
    fhr = FHR(6, 1.0)
    reports = fhr.perturb([0, 1, 2, 5], rng=0)
    assert reports.plus.dtype == np.int64 and int(max(reports.plus.max(), reports.minus.max())) < fhr.K
    hand = PairReports(np.array([0, 3]), np.array([1, 2]), 8)  # hand-built: no provenance, accepted
    assert np.all(np.isfinite(fhr.estimate(hand)))
    with pytest.raises(ValueError, match="same position"):
        fhr.estimate(PairReports(np.array([0, 3]), np.array([0, 2]), 8))
    with pytest.raises(ValueError, match=r"reports\.plus contains item 8"):
        fhr.estimate(PairReports(np.array([8]), np.array([0]), 8))
    with pytest.raises(ValueError, match="K=16"):
        fhr.estimate(PairReports(np.array([1]), np.array([0]), 16))
    with pytest.raises(ValueError, match="power of two"):
        PairReports(np.array([1]), np.array([0]), 6)
    with pytest.raises(ldpkit.ArgumentTypeError, match="dtype"):
        fhr.estimate(PairReports(np.array([1.0]), np.array([0.0]), 8))
    with pytest.raises(ValueError, match="empty"):
        fhr.estimate(PairReports(np.array([], dtype=np.int64), np.array([], dtype=np.int64), 8))
    with pytest.raises(ValueError, match=r"reports were made by FHR\(d=6, epsilon=1.0, K=8\)"):
        FHR(6, 2.0).estimate(reports)
    with pytest.raises(ValueError, match="reports were made by FHR"):
        HR(6, 1.0).estimate(reports)
    with pytest.raises(ValueError, match="exceeds the number of users"):
        fhr.estimate_from_support(np.array([5, 0, 0, 0, 0, 0]), 4)


def test_hr_reports_are_positions_with_provenance() -> None:
    hr = HR(6, 1.0)
    reports = hr.perturb([0, 1, 2, 5], rng=0)
    assert reports.source == hr.provenance
    assert np.all(np.isfinite(hr.estimate([0, 7, 3])))  # hand-built positions in [0, K)
    with pytest.raises(ValueError, match="reports contains item 8"):
        hr.estimate([0, 8])
    with pytest.raises(ValueError, match="reports were made by HR"):
        HR(6, 0.5).estimate(reports)


def test_constructors_validate_before_work() -> None:
    with pytest.raises(ValueError, match="MAX_HADAMARD_D"):
        FHR(1 << 24, 1.0)
    with pytest.raises(ValueError, match="d"):
        HR(1, 1.0)
    with pytest.raises(ValueError, match="supported range"):
        FHR(4, 701.0)
    with pytest.raises(ldpkit.ArgumentTypeError, match="epsilon"):
        HR(4, "1")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ registry
def test_both_families_are_registered_for_the_contract() -> None:
    names = [fam.name for fam in families()]
    assert "HR" in names and "FHR" in names
    assert get_family("FHR").paper == "zhao2022fldp"
    assert get_family("HR").paper == "acharya2019hadamard"
    for name in ("HR", "FHR"):
        for mech in get_family(name).examples():
            assert mech.channel().n_inputs * mech.channel().n_outputs <= accountant.MAX_ENUM_CELLS
            assert accountant.verify(mech).satisfied


def test_the_unused_first_row_is_what_makes_the_estimator_unbiased() -> None:
    """Row 0 has no -1 side; rows 1..d have K/2 of each sign, and each pair of rows meets in K/4 positions."""
    for k in (4, 8, 16, 32):
        h = sylvester(k)[1:]
        assert np.all((h > 0).sum(axis=1) == k // 2)
        for r, s in itertools.combinations(range(k - 1), 2):
            assert int(((h[r] > 0) & (h[s] > 0)).sum()) == k // 4
