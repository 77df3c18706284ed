"""The auditing kit (:mod:`ldpkit.audit`): its confidence statement, its power, and the bugs it catches.

1. Validity: over many seeds, a correct mechanism's lower bound exceeds its exact parameter (from
   the accountant) in at most a fraction ``alpha`` of the runs.  The number of exceedances in
   ``R`` runs is then at most Binomial(``R``, ``alpha``) in law, so the test fails only if it
   exceeds that law's upper ``1 - FALSE_ALARM`` quantile (a correct auditor fails it with
   probability below ``FALSE_ALARM``).  Bonferroni makes the audits conservative: the measured
   rates sit far below ``alpha``.
2. Power: with enough samples the white-box bound comes within 10% of the exact epsilon
   (sample sizes stated per mechanism; the black-box bound needs more).
3. Mutation tests: copies of mechanisms with an injected bug, written here as explicit channels
   (the kit stays clean), are each caught, bound above the claimed budget at confidence
   ``1 - alpha``, at a stated sample size, by black-box events and by white-box events taken from
   the channel the implementation claims.
4. Bad input is refused before any sampling.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy import stats

from ldpkit import GRR, HR, IDUE, IPRR, OLH, OUE, RAPPOR, URR, ArgumentTypeError, accountant
from ldpkit.audit import (
    AuditBound,
    audit_ipldp,
    audit_ldp,
    audit_lip,
    audit_pairwise,
    cp_lower,
    cp_upper,
    from_channel,
    from_function,
    from_mechanism,
    sample_histograms,
    violates,
)
from ldpkit.audit.mutants import controls, mutants

ALPHA = 0.05
#: false-alarm rate of the validity tests (binomial upper quantile)
FALSE_ALARM = 1e-6
EPS = 1.0
E = math.e


# ============================================================================ Clopper-Pearson
def test_clopper_pearson_matches_the_exact_binomial_tails() -> None:
    # the lower bound is the p at which P(Bin(n, p) >= k) = miss; the upper one where P(Bin(n, p) <= k) = miss
    k, n, miss = np.array([1, 7, 50, 99]), 100, 0.01
    lo, hi = cp_lower(k, n, miss), cp_upper(k, n, miss)
    np.testing.assert_allclose(stats.binom.sf(k - 1, n, lo), miss, rtol=1e-6)
    np.testing.assert_allclose(stats.binom.cdf(k, n, hi), miss, rtol=1e-6)
    assert cp_lower(0, n, miss)[()] == 0.0 and cp_upper(n, n, miss)[()] == 1.0


def test_clopper_pearson_covers_at_its_level() -> None:
    # exact coverage of the one-sided bound, summed over the binomial law (no sampling)
    n, p, miss = 200, 0.13, 0.05
    k = np.arange(n + 1)
    w = stats.binom.pmf(k, n, p)
    assert float(w[cp_lower(k, n, miss) > p].sum()) <= miss
    assert float(w[cp_upper(k, n, miss) < p].sum()) <= miss


# ============================================================================ 1. validity
def _exceedances(run: Callable[[int], float], exact: float, runs: int) -> int:
    return sum(run(seed) > exact for seed in range(runs))


VALIDITY: list[Any] = [
    pytest.param(lambda s: audit_ldp(from_mechanism(GRR(4, EPS)), 2_000, alpha=0.2, rng=s).value,
                 accountant.ldp_epsilon(GRR(4, EPS)), id="GRR-white"),
    pytest.param(lambda s: audit_ldp(from_mechanism(GRR(4, EPS)), 2_000, alpha=0.2, events="black", rng=s).value,
                 accountant.ldp_epsilon(GRR(4, EPS)), id="GRR-black"),
    pytest.param(lambda s: audit_ldp(from_mechanism(OUE(4, EPS)), 2_000, alpha=0.2, rng=s).value,
                 accountant.ldp_epsilon(OUE(4, EPS)), id="OUE-white"),
    pytest.param(lambda s: audit_ldp(from_mechanism(OUE(4, EPS)), 2_000, alpha=0.2, events="black", rng=s).value,
                 accountant.ldp_epsilon(OUE(4, EPS)), id="OUE-black"),
    pytest.param(lambda s: audit_lip(from_mechanism(GRR(3, EPS)), [0.5, 0.3, 0.2], 2_000, alpha=0.2, rng=s).value,
                 accountant.lip_epsilon(GRR(3, EPS), [0.5, 0.3, 0.2]), id="GRR-LIP-white"),
    pytest.param(lambda s: float(np.nanmax(audit_ipldp(from_mechanism(IPRR([0.5, 1.0, 2.0])), [0.5, 1.0, 2.0], 2_000,
                                                       alpha=0.2, events="black", rng=s).values - [0.5, 1.0, 2.0])),
                 0.0, id="IPRR-IPLDP-black"),
]


@pytest.mark.parametrize(("run", "exact"), VALIDITY)
def test_a_correct_mechanism_is_bounded_above_its_parameter_at_most_alpha_of_the_time(
        run: Callable[[int], float], exact: float) -> None:
    runs, alpha = 200, 0.2
    limit = int(stats.binom.ppf(1 - FALSE_ALARM, runs, alpha))  # 66 of 200 at alpha = 0.2
    hits = _exceedances(run, exact, runs)
    assert hits <= limit, f"{hits} of {runs} bounds above the exact value (allowed {limit} at alpha={alpha})"


# ============================================================================ 2. power
#: (mechanism, white-box samples per input for a bound within 10% of the exact epsilon, seed 1)
TIGHT: list[Any] = [
    pytest.param(GRR(4, EPS), 30_000, id="GRR"),
    pytest.param(OUE(4, EPS), 30_000, id="OUE"),
    pytest.param(RAPPOR(4, EPS), 30_000, id="RAPPOR"),
    pytest.param(OLH(4, EPS), 30_000, id="OLH"),
    pytest.param(HR(4, EPS), 10_000, id="HR"),
    pytest.param(IPRR([0.5, 1.0, 1.0, 0.75]), 30_000, id="IPRR"),
]


@pytest.mark.parametrize(("mech", "n"), TIGHT)
def test_the_white_box_bound_comes_within_ten_percent(mech: Any, n: int) -> None:
    exact = accountant.ldp_epsilon(mech)
    bound = audit_ldp(from_mechanism(mech), n, rng=1)
    assert 0.9 * exact <= bound.value <= exact, (bound, exact)
    assert bound.confidence == 1 - ALPHA and bound.n_samples == n and bound.notion == "ldp"
    black = audit_ldp(from_mechanism(mech), 10 * n, events="black", rng=1)
    assert 0.85 * exact <= black.value <= exact, (black, exact)


def test_urr_is_audited_tightly_on_its_sensitive_outputs() -> None:
    mech, budgets = URR(4, EPS, [0, 1]), [EPS, EPS, math.inf, math.inf]
    res = audit_ipldp(from_mechanism(mech), budgets, 30_000, rng=1)
    assert np.isnan(res.values[2:]).all() and len(res.bounds) == 2
    assert 0.9 * EPS <= np.nanmax(res.values) <= EPS
    assert not violates(res, budgets).any()


def test_iprr_is_audited_per_output() -> None:
    budgets = [0.5, 1.0, 2.0, math.inf]
    res = audit_ipldp(from_mechanism(IPRR(budgets)), budgets, 300_000, rng=1)
    np.testing.assert_array_less(res.values[:3], [0.5, 1.0, 2.0])
    assert np.all(res.values[:3] >= 0.9 * np.array([0.5, 1.0, 2.0]))


def test_pairwise_bounds_follow_the_idue_matrix() -> None:
    mech = IDUE([0.5, 1.0, 2.0], model="opt1")
    exact = accountant.pairwise_log_ratio(mech)
    res = audit_pairwise(from_mechanism(mech), 100_000, rng=1)
    off = ~np.eye(3, dtype=bool)
    assert np.all(res.values[off] <= exact[off]) and np.all(res.values[off] >= 0.8 * exact[off])
    budget = accountant.pairwise_budgets(3, budgets=[0.5, 1.0, 2.0], r="min")
    assert not violates(res, budget).any()
    assert res.best.value == np.nanmax(res.values)


def test_lip_bound_is_close_to_the_exact_value() -> None:
    prior = [0.5, 0.3, 0.2]
    exact = accountant.lip_epsilon(GRR(3, EPS), prior)
    for events in ("white", "black"):
        b = audit_lip(from_mechanism(GRR(3, EPS)), prior, 1_000_000, events=events, rng=1)
        assert 0.9 * exact <= b.value <= exact, (events, b, exact)


def test_a_black_box_function_is_audited_one_user_at_a_time() -> None:
    p = E / (E + 2)

    def grr(x: int, rng: np.random.Generator) -> str:   # reports are strings: keys, not indices
        y = x if rng.random() < p else (x + 1 + int(rng.integers(2))) % 3
        return "abc"[y]

    sampler = from_function(grr, 3)
    assert sampler.n_outputs is None
    bound = audit_ldp(sampler, 20_000, events="black", rng=0)
    assert 0.75 <= bound.value <= EPS and sorted(sampler.keys) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="channel"):
        audit_ldp(sampler, 1_000)   # white-box needs a channel


# ============================================================================ 3. mutation tests
MUTANTS = mutants()


@pytest.mark.parametrize("name", [k for k, m in MUTANTS.items() if m.notion == "ldp"])
def test_an_ldp_mutant_is_caught(name: str) -> None:
    m = MUTANTS[name]
    assert accountant.ldp_epsilon(m.buggy) > m.budget >= accountant.ldp_epsilon(m.claimed) - 1e-9
    sampler = from_channel(m.buggy)
    for seed in range(3):
        assert audit_ldp(sampler, m.n_catch, events="black", rng=seed).value > m.budget
        assert audit_ldp(sampler, m.n_catch, channel=m.claimed, rng=seed).value > m.budget


@pytest.mark.parametrize("name", list(controls()))
def test_a_control_that_is_no_privacy_bug_is_not_flagged(name: str) -> None:
    m = controls()[name]
    assert accountant.ldp_epsilon(m.buggy) <= m.budget + 1e-9
    for seed in range(3):
        assert audit_ldp(from_channel(m.buggy), 300_000, events="black", rng=seed).value <= m.budget


def test_an_idue_with_a_dropped_constraint_is_caught_pair_by_pair() -> None:
    m = MUTANTS["idue-dropped-constraint"]
    matrix = np.asarray(m.budget)
    assert not accountant.check_context_aware(m.buggy, matrix).satisfied
    for seed in range(3):
        for events, kw in (("black", {}), ("white", {"channel": m.claimed})):
            res = audit_pairwise(from_channel(m.buggy), m.n_catch, events=events, rng=seed, **kw)  # type: ignore[arg-type]
            caught = violates(res, matrix)
            assert caught.any(), (events, res.values)
            # only pairs the bug really breaks are flagged
            assert np.all(accountant.pairwise_log_ratio(m.buggy)[caught] > matrix[caught])


def test_an_iprr_with_the_wrong_keep_budget_is_caught_per_output() -> None:
    m = MUTANTS["iprr-wrong-budget"]
    assert not accountant.check_ipldp(m.buggy, m.budget_vector, sensitive=m.sensitive).satisfied
    for seed in range(3):
        for events, kw in (("black", {}), ("white", {"channel": m.claimed})):
            res = audit_ipldp(from_channel(m.buggy), m.budget, m.n_catch, events=events, rng=seed,  # type: ignore[arg-type]
                              **kw)
            assert violates(res, m.budget)[2], (events, res.values)


# ============================================================================ results, speed
def test_a_bound_names_what_attains_it() -> None:
    b = audit_ldp(from_mechanism(OUE(4, EPS)), 50_000, rng=0)
    assert isinstance(b, AuditBound) and b.notion == "ldp" and len(b.pair) == 2
    x, xp = b.pair
    ch = OUE(4, EPS).channel().to_explicit().matrix
    ratio = ch[x, list(b.event)].sum() / ch[xp, list(b.event)].sum()
    assert math.log(ratio) == pytest.approx(EPS) and "Bonferroni over 2" in b.method


def test_histograms_are_drawn_at_the_aggregate_level() -> None:
    s = from_channel(GRR(10, EPS).channel())
    h = sample_histograms(s, range(10), 10**7, rng=0)   # ten million per input: one multinomial each
    assert h.shape == (10, 10) and (h.sum(axis=1) == 10**7).all()
    m = sample_histograms(from_mechanism(OUE(10, EPS)), [0], 200_000, rng=0)
    assert m.shape == (1, 1024) and m.sum() == 200_000


def test_results_are_reproducible_from_a_seed() -> None:
    s = from_mechanism(GRR(4, EPS))
    assert audit_ldp(s, 5_000, events="black", rng=3) == audit_ldp(s, 5_000, events="black", rng=3)


# ============================================================================ 4. bad input
BAD: list[Any] = [
    pytest.param(lambda s: audit_ldp(s, 100, alpha=0.0), ValueError, "alpha", id="alpha-0"),
    pytest.param(lambda s: audit_ldp(s, 100, alpha=1.0), ValueError, "alpha", id="alpha-1"),
    pytest.param(lambda s: audit_ldp(s, 100, alpha=math.nan), ValueError, "alpha", id="alpha-nan"),
    pytest.param(lambda s: audit_ldp(s, 100, alpha="0.05"), ArgumentTypeError, "alpha", id="alpha-str"),
    pytest.param(lambda s: audit_ldp(s, 0), ValueError, "n", id="n-0"),
    pytest.param(lambda s: audit_ldp(s, 1.5), ArgumentTypeError, "n", id="n-float"),
    pytest.param(lambda s: audit_ldp(s, 1, events="black"), ValueError, "at least 2", id="n-1-black"),
    pytest.param(lambda s: audit_ldp(s, 100, events="grey"), ValueError, "events", id="events"),
    pytest.param(lambda s: audit_pairwise(s, 100, pairs=[(0, 4)]), ValueError, "out of range", id="pair-range"),
    pytest.param(lambda s: audit_pairwise(s, 100, pairs=[(1, 1)]), ValueError, "distinct", id="pair-same"),
    pytest.param(lambda s: audit_pairwise(s, 100, pairs=[(0, 1, 2)]), ValueError, "ordered pairs", id="pair-len"),
    pytest.param(lambda s: audit_pairwise(s, 100, pairs=[(-1, 1)]), ValueError, "pair entry", id="pair-neg"),
    pytest.param(lambda s: audit_ipldp(s, [1.0, 1.0], 100), ValueError, "budgets", id="ipldp-budgets"),
    pytest.param(lambda s: audit_ipldp(s, [math.inf] * 4, 100), ValueError, "non-sensitive", id="ipldp-none"),
    pytest.param(lambda s: audit_lip(s, [0.5, 0.5], 100), ValueError, "prior", id="lip-prior"),
    pytest.param(lambda s: audit_ldp(object(), 100), ArgumentTypeError, "sampler", id="not-a-sampler"),
    pytest.param(lambda s: from_function(3, 2), ArgumentTypeError, "fn", id="fn"),
]


@pytest.mark.parametrize(("call", "error", "match"), BAD)
def test_bad_input_is_refused_before_any_sampling(call: Callable[[Any], Any], error: type, match: str) -> None:
    calls = []

    class Counting:
        n_inputs, n_outputs, channel = 4, 4, GRR(4, EPS).channel()

        def __call__(self, x: int, size: int, rng: np.random.Generator) -> np.ndarray:
            calls.append(size)
            return np.zeros(size, dtype=np.int64)

    with pytest.raises(error, match=match):
        call(Counting())
    assert not calls


def test_a_sampler_returning_garbage_is_refused() -> None:
    bad = from_function(lambda x, size, rng: [0.5] * size, 2, encode=lambda r: r, batch=True)
    assert audit_ldp(bad, 10, events="black", rng=0).value == 0.0   # floats are keys: one output, no loss

    class Floats:
        n_inputs, n_outputs = 2, None

        def __call__(self, x: int, size: int, rng: np.random.Generator) -> np.ndarray:
            return np.full(size, 0.5)

    with pytest.raises(ArgumentTypeError, match="integer output indices"):
        audit_ldp(Floats(), 10, events="black")


def test_ipldp_structural_condition_is_witnessed_by_a_sample() -> None:
    # GRR hides the input behind every output: a non-sensitive output comes from other inputs
    budgets = [1.0, 1.0, math.inf, math.inf]
    for events in ("white", "black"):
        res = audit_ipldp(from_mechanism(GRR(4, 1.0)), budgets, 2_000, events=events, rng=0)  # type: ignore[arg-type]
        assert res.structural_violated
        assert {(x, j) for x, j, _ in res.structural} == {(x, j) for j in (2, 3) for x in range(4) if x != j}
        assert all(c > 0 for *_, c in res.structural)
        # IPRR and uRR keep the condition: no sample can witness against them
        ok = audit_ipldp(from_mechanism(IPRR(budgets)), budgets, 2_000, events=events, rng=0)  # type: ignore[arg-type]
        assert not ok.structural_violated and ok.structural == ()
