"""Closed-form inverses (``Family.inverse``) against the search, and the search against the bisection it replaced.

Every family that declares an inverse is calibrated twice under every kind of promise it answers:
with the inverse, and as the same family without it (the accountant's search).  The two
parameters must agree to the search's resolution, and the inverse's member must carry a
tightness certificate (it keeps the promise; the member at ``t (1 + LOOSEN)`` breaks it).
Negative tests: an inverse that overshoots is caught by the certificate, one that undershoots by
the comparison; an inverse below the family's range leaves the search to say why; a promise that
no inverse answers is searched.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest

from ldpkit import GRR, contracts
from ldpkit.calibration import LOOSEN, calibrate
from ldpkit.family import Family, families, pair_budget_minima, uniform_loss_inverse

D = 5
E = np.array([0.5, 0.5, 1.0, 2.0, 2.0])
E_DISTINCT = np.array([0.4, 0.7, 1.0, 1.6, 2.5])
PRIOR = np.array([0.35, 0.25, 0.2, 0.12, 0.08])
ASYMMETRIC = np.array([[0.0, 0.9, 1.4, 2.0, 1.1],
                       [0.6, 0.0, 1.2, 0.8, 1.5],
                       [1.3, 1.7, 0.0, 0.9, 1.0],
                       [2.2, 0.7, 1.1, 0.0, 1.8],
                       [1.0, 1.6, 0.95, 1.4, 0.0]])

#: every kind of promise, on a small domain; several of each notion where the closed form has cases
PROMISES = {
    "ldp": contracts.ldp(D, 1.0),
    "ldp-small": contracts.ldp(D, 0.3),
    "minid": contracts.minidldp(E),
    "minid-distinct": contracts.minidldp(E_DISTINCT),
    "minid-equal": contracts.minidldp(np.full(D, 1.5)),
    "id-average": contracts.idldp(E, "average"),
    "id-average-distinct": contracts.idldp(E_DISTINCT, "average"),
    "id-max": contracts.idldp(E_DISTINCT, "max"),
    "ipldp": contracts.ipldp(np.where(E < 1.5, E, np.inf)),
    "ipldp-distinct": contracts.ipldp([0.4, 0.9, np.inf, 1.3, np.inf]),
    "ipldp-all": contracts.ipldp(E_DISTINCT),
    "uldp": contracts.uldp(D, 1.0, [0, 1]),
    "uldp-all": contracts.uldp(D, 0.8, list(range(D))),
    "fldp": contracts.fldp(D, 1.0, 0.5),
    "fldp-1": contracts.fldp(D, 0.7, 1.0),
    "lip": contracts.lip(1.0, PRIOR),
    "context-aware": contracts.context_aware(contracts.idldp(E, "average").pairwise_matrix()),
    "context-aware-asymmetric": contracts.context_aware(ASYMMETRIC),
}
WITH_INVERSE = [f for f in families(budget=True) if f.inverse is not None]


def _answered(name: str, promise: str) -> tuple[Family, Any]:
    """The family and its closed form under the promise (``None`` when it has none, or calibration takes another route)."""
    fam = next(f for f in WITH_INVERSE if f.name == name)
    contract = PROMISES[promise]
    if fam.applies is not None and fam.applies(contract):
        return fam, None
    if fam.optimiser is not None and fam.optimiser(contract) is not None:
        return fam, None
    assert fam.inverse is not None
    return fam, fam.inverse(contract)


#: every (family, promise) that a closed form answers
PAIRS = [(f.name, key) for f in WITH_INVERSE for key in PROMISES if _answered(f.name, key)[1] is not None]


def test_the_families_with_a_closed_form() -> None:
    assert {f.name for f in WITH_INVERSE} == {"GRR", "RAPPOR", "OUE", "OLH", "HR", "uRR", "IPRR", "IDUE-opt0",
                                              "IDUE-opt1", "IDUE-opt2"}


@pytest.mark.parametrize("family,promise", PAIRS, ids=[f"{f}-{p}" for f, p in PAIRS])
def test_inverse_agrees_with_the_search(family: str, promise: str) -> None:
    fam, t_inv = _answered(family, promise)
    contract = PROMISES[promise]
    cal = calibrate(fam, contract)
    searched = calibrate(dataclasses.replace(fam, inverse=None), contract)
    assert cal.method == searched.method == "largest accepted budget"
    assert searched.satisfiable, searched.reason
    t_lo, t_hi = fam.range_for(contract)
    assert cal.parameter == min(t_inv, t_hi)
    # the search ends within 1e-10 below the boundary the inverse states exactly (within the search's
    # tolerance 1e-12 of the scale; IDUE's programme keeps a margin of about 1e-12 below its budget)
    assert searched.parameter == pytest.approx(cal.parameter, rel=2e-10)
    cert = cal.certificate()
    assert cert.verified and cert.keeps and cert.loosened_breaks and cert.holds


def test_every_declared_inverse_answers_some_promise() -> None:
    for fam in WITH_INVERSE:
        answered = [p for p in PROMISES if _answered(fam.name, p)[1] is not None]
        assert answered, f"{fam.name} declares an inverse that answers none of the test promises"
    # ... and every notion with a closed form is exercised by some family
    notions = {PROMISES[p].guarantee.notion for f in WITH_INVERSE for p in PROMISES if _answered(f.name, p)[1] is not None}
    assert notions == {"ldp", "minid-ldp", "id-ldp", "ipldp", "uldp", "fldp", "context-aware"}


def test_the_inverse_builds_one_member_and_runs_no_check() -> None:
    built: list[float] = []

    def at_budget(d: int, t: float) -> GRR:
        built.append(t)
        return GRR(d, t)

    fam = Family("GRR-closed", "none", GRR, lambda: (GRR(3, 1.0),), at_budget=at_budget, inverse=uniform_loss_inverse)
    cal = calibrate(fam, PROMISES["minid"])
    assert (cal.parameter, built) == (0.5, [0.5])
    # above the family's range: the member at the top of the range (it keeps the promise)
    capped = calibrate(dataclasses.replace(fam, hi=0.4), PROMISES["minid"])
    assert capped.parameter == 0.4 and capped.certificate().keeps and not capped.certificate().loosened_breaks


def test_a_wrong_inverse_is_caught() -> None:
    """Mutations: an inverse 1 % too large breaks the promise; 1 % too small is not the largest member."""
    for factor, broken in ((1.01, "keeps"), (0.99, "loosened_breaks")):
        fam = Family("GRR-wrong", "none", GRR, lambda: (GRR(3, 1.0),), at_budget=lambda d, t: GRR(d, t),
                     inverse=lambda c, f=factor: f * uniform_loss_inverse(c))
        cert = calibrate(fam, PROMISES["ldp"]).certificate()
        assert not getattr(cert, broken) and not cert.holds
        searched = calibrate(dataclasses.replace(fam, inverse=None), PROMISES["ldp"])
        assert abs(searched.parameter / calibrate(fam, PROMISES["ldp"]).parameter - 1) > 1e-3


def test_an_inverse_below_the_range_leaves_the_reason_to_the_search() -> None:
    fam = Family("GRR-below", "none", GRR, lambda: (GRR(3, 1.0),), at_budget=lambda d, t: GRR(d, t), lo=0.6,
                 inverse=uniform_loss_inverse)
    cal = calibrate(fam, PROMISES["minid"])  # the closed form says 0.5, below every member
    assert not cal.satisfiable and "no member keeps the promise" in cal.reason


def test_pair_budget_minima_is_the_matrix_row_minimum() -> None:
    for key, contract in PROMISES.items():
        minima = pair_budget_minima(contract)
        matrix = contract.pairwise_matrix()
        if matrix is None:
            assert minima is None, key
            continue
        M = np.array(matrix, dtype=float)
        np.fill_diagonal(M, np.inf)
        np.testing.assert_array_equal(minima, M.min(axis=1), err_msg=key)
    # a function as pair rule: the verdict decides, no closed form
    assert pair_budget_minima(contracts.idldp(E, lambda a, b: np.sqrt(a * b))) is None
    assert uniform_loss_inverse(contracts.idldp(E, lambda a, b: np.sqrt(a * b))) is None
    # ULDP with named protected outputs is not read in closed form
    named = contracts.promise("uldp", D, epsilon=1.0, sensitive=[0, 1], protected=[0, 1])
    assert uniform_loss_inverse(named) is None


@pytest.mark.parametrize("promise", ["ldp", "minid", "lip", "context-aware", "uldp"])
def test_the_search_ends_where_the_bisection_did(promise: str) -> None:
    """The secant search against a plain bisection of the same family: the same boundary to 1e-10."""
    fam = dataclasses.replace(next(f for f in families(budget=True) if f.name == "LIP-kary"), optimiser=None)
    contract = PROMISES[promise]
    cal = calibrate(fam, contract)
    lo, hi = 0.05, 20.0
    member = lambda t: fam.member(D, t, prior=contract.prior)  # noqa: E731
    while hi / lo - 1 > 1e-10:
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if contract.scale(member(mid)) <= 1 + 1e-12 else (lo, mid)
    assert cal.parameter == pytest.approx(lo, rel=2e-10) and cal.certificate().holds


# ----------------------------------------------------------------------------- IDUE with many levels
def _levels(t: int) -> tuple[np.ndarray, np.ndarray]:
    return np.linspace(0.5, 4.0, t), np.arange(1, t + 1) % 7 + 1


def test_opt0_many_levels_solves_the_tied_levels(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under MinID-LDP most of 36 levels tie: the programme of the tied levels gives the whole one's optimum."""
    from ldpkit.idue import solvers

    e, m = _levels(36)
    merged = solvers.solve_opt0(e, m)
    info = merged.diagnostics["merged_levels"]
    assert info["levels"] == 36 and info["merged"] < 10 and merged.diagnostics["kkt_residual"] <= 1e-9
    assert sorted(i for g in info["groups"] for i in g) == list(range(36))
    monkeypatch.setattr(solvers, "MERGE_LEVELS", 1000)  # the whole programme, as before
    whole = solvers.solve_opt0(e, m)
    assert "merged_levels" not in whole.diagnostics
    assert merged.objective <= whole.objective * (1 + 1e-12)
    assert merged.objective == pytest.approx(whole.objective, rel=1e-12)
    np.testing.assert_allclose(merged.a, whole.a, rtol=1e-7)
    np.testing.assert_allclose(merged.b, whole.b, rtol=1e-7)


def test_opt0_wrong_ties_fall_back_to_the_whole_programme(monkeypatch: pytest.MonkeyPatch) -> None:
    from ldpkit.idue import solvers

    e, m = _levels(33)
    right = solvers.solve_opt0(e, m)
    # tie the two smallest budgets, which differ at the optimum: the whole programme's KKT check refuses it
    monkeypatch.setattr(solvers, "_tied_levels", lambda u, v: [np.array([0, 1]), *[np.array([k]) for k in range(2, 33)]])
    assert solvers._opt0_merged(*solvers.problem_setup(e, m, "min", "paper", None), "min", "paper", None, 3,
                                np.random.default_rng(0)) is None
    fallback = solvers.solve_opt0(e, m)
    assert "merged_levels" not in fallback.diagnostics
    assert fallback.objective == pytest.approx(right.objective, rel=1e-12)


def test_opt0_without_ties_solves_the_whole_programme() -> None:
    from ldpkit.idue import solvers

    e, m = _levels(32)
    sol = solvers.solve_opt0(e, m, "max")  # every level its own (u, v)
    assert "merged_levels" not in sol.diagnostics and sol.diagnostics["kkt_residual"] <= solvers.KKT_RTOL


def test_idue_calibrated_to_many_distinct_budgets_is_certified() -> None:
    promise = contracts.minidldp(np.resize(np.linspace(0.5, 4.0, 40), 200))
    cal = calibrate("IDUE-opt0", promise)
    assert cal.method == "own optimiser" and cal.mechanism.solution.diagnostics["merged_levels"]["merged"] < 10
    assert cal.certificate().holds
