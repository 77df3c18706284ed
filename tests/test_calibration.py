"""Contracts and calibration: the member of each family that keeps a promise, with its tightness certificate.

The certificate test runs over every registered family indexed by a budget and every kind of
promise on a small domain, so a family registered later is covered.  (The chapter's own promises are tested in
tests/test_experiments_synthesis.py.)  Negative tests: a promise no member can keep is reported
with its reason; a family whose parameter does not loosen its privacy is caught by the
certificate; bad input is refused before any work.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from typing import Any

from ldpkit import GRR, IPRR, OUE, contracts
from ldpkit.calibration import LOOSEN, Calibration, best, calibrate, calibrate_all
from ldpkit.family import Family, families, get_family, register_family, unregister_family

D = 5
E = np.array([0.5, 0.5, 1.0, 2.0, 2.0])
PRIOR = np.array([0.35, 0.25, 0.2, 0.12, 0.08])

PROMISES = {
    "ldp": contracts.ldp(D, 1.0),
    "minid": contracts.minidldp(E),
    "id-average": contracts.idldp(E, "average"),
    "ipldp": contracts.ipldp(np.where(E < 1.5, E, np.inf)),
    "uldp": contracts.uldp(D, 1.0, [0, 1]),
    "fldp": contracts.fldp(D, 1.0, 0.5),
    "lip": contracts.lip(1.0, PRIOR),
    "context-aware": contracts.context_aware(contracts.idldp(E, "average").pairwise_matrix()),
}
PAIRS = [(f.name, key) for f in families(budget=True) for key in PROMISES]


@functools.cache
def _calibration(family: str, promise: str) -> Calibration:
    """``calibrate(family, PROMISES[promise])``, made once for all the tests of this module.

    A calibration is frozen and the same on every call (no randomness), so the tests below that
    ask for the same family and promise share it instead of solving again.
    """
    return calibrate(family, PROMISES[promise])


@pytest.mark.parametrize("family,promise", PAIRS, ids=[f"{f}-{p}" for f, p in PAIRS])
def test_certificate_or_reason(family: str, promise: str) -> None:
    cal = _calibration(family, promise)
    if not cal.satisfiable:
        assert cal.reason and cal.parameter is None and cal.method == "none"
        with pytest.raises(ValueError, match="no member|not defined|takes"):
            cal.certificate()
        return
    cert = cal.certificate()
    assert cert.verified, "the member's own declared guarantees fail"
    assert cert.keeps, f"the calibrated member breaks the promise (slack {cert.slack})"
    assert cert.loosened_breaks, f"loosening t by {LOOSEN} still keeps the promise: not the largest member"
    assert cert.loosened_slack < 0 and cert.holds


def test_every_family_keeps_some_promise_or_says_why() -> None:
    for fam in families(budget=True):
        results = [_calibration(fam.name, key) for key in PROMISES]
        assert all(r.satisfiable or r.reason for r in results), fam.name


def test_known_calibrations() -> None:
    # GRR's pairwise loss is its epsilon: under MinID-LDP it is calibrated to the smallest budget
    assert calibrate("GRR", PROMISES["minid"]).parameter == pytest.approx(0.5, rel=1e-9)
    # ... and under ID-LDP with the average rule to the smallest average of two distinct items' budgets
    assert calibrate("GRR", PROMISES["id-average"]).parameter == pytest.approx(0.5, rel=1e-9)
    # IDUE solves for its own promise: no search
    cal = calibrate("IDUE-opt1", PROMISES["minid"])
    assert (cal.method, cal.parameter) == ("own optimiser", 1.0)
    # FHR rules inputs out: no member keeps eps-LDP, and the reason says so
    fhr = calibrate("FHR", PROMISES["ldp"])
    assert not fhr.satisfiable and "impossible under another" in fhr.reason
    # GRR's non-sensitive outputs do not reveal their input: never IPLDP
    grr = calibrate("GRR", PROMISES["ipldp"])
    assert not grr.satisfiable and "non-sensitive item" in grr.reason
    # unary channels report bit vectors: IPLDP is not defined for them
    assert "not defined" in calibrate("OUE", PROMISES["ipldp"]).reason
    assert "item sets" in calibrate("OUE-PS", PROMISES["ldp"]).reason


def test_total_variance_is_the_members() -> None:
    counts = np.array([400, 300, 200, 80, 20])
    cal = calibrate("OUE", PROMISES["ldp"])
    assert cal.total_variance(counts) == pytest.approx(float(OUE(D, 1.0).variance(counts).sum()), rel=1e-9)
    with pytest.raises(ValueError, match="no member"):
        calibrate("FHR", PROMISES["ldp"]).total_variance(counts)


@pytest.mark.parametrize("promise", ["ldp", "minid", "ipldp", "lip"])
def test_total_variance_at_uniform_counts_of_any_n(promise: str) -> None:
    """Regression: ``n / d`` counts (n not a multiple of d) were refused as non-integer counts.

    The variance is linear in the counts, so at ``n / d`` it is the mean over the ``d`` one-user
    count vectors, times ``n``: the same number from integer counts only.
    """
    n = 57  # not a multiple of D
    uniform = np.full(D, n / D)
    # every family, as calibrate_all gives them (calibrate_all itself: test_a_family_registered_from_outside_is_calibrated)
    for name, cal in ((f.name, _calibration(f.name, promise)) for f in families(budget=True)):
        if not cal.satisfiable:
            continue
        one_user = [cal.total_variance(np.eye(D, dtype=np.int64)[x]) for x in range(D)]
        assert cal.total_variance(uniform) == pytest.approx(n * np.mean(one_user), rel=1e-9), name
        # integer counts: exactly the member's own variance
        assert cal.total_variance(np.full(D, 11)) == float(np.sum(cal.mechanism.variance(np.full(D, 11)))), name
    with pytest.raises(ValueError, match="non-negative"):
        calibrate("OUE", PROMISES["ldp"]).total_variance(np.full(D, -1.5))


def _grr_family(name: str, at_budget: Any, **kwargs: Any) -> Family:
    return Family(name, "none", GRR, lambda: (GRR(3, 1.0),), at_budget=at_budget, **kwargs)


def test_a_family_whose_parameter_does_not_loosen_is_caught() -> None:
    """Mutation: a family that ignores ``t`` above 0.5 keeps the promise when loosened: no certificate."""
    register_family(_grr_family("GRR-capped", lambda d, t: GRR(d, min(t, 0.5)), initial=lambda c: 0.1, hi=0.6))
    try:
        cal = calibrate("GRR-capped", PROMISES["ldp"])
        assert cal.satisfiable and not cal.certificate().holds
    finally:
        unregister_family("GRR-capped")
    assert "GRR-capped" not in [f.name for f in families()]


def test_a_family_registered_from_outside_is_calibrated() -> None:
    register_family(_grr_family("GRR-half", lambda d, t: GRR(d, t / 2), parameter="twice epsilon",
                                initial=lambda c: 1.0, hi=100.0))
    try:
        assert "GRR-half" in [f.name for f in families(budget=True)]
        cal = calibrate("GRR-half", PROMISES["ldp"])
        assert cal.parameter == pytest.approx(2.0, rel=1e-9) and cal.certificate().holds
        assert "GRR-half" in calibrate_all(PROMISES["ldp"])
    finally:
        unregister_family("GRR-half")


def test_an_unregistered_family_is_calibrated_and_certified() -> None:
    """The calibration keeps the family object itself: its certificate needs no registry."""
    fam = _grr_family("GRR-third", lambda d, t: GRR(d, t / 3), initial=lambda c: 1.0, hi=100.0)
    cal = calibrate(fam, PROMISES["ldp"])
    assert cal.family is fam and "GRR-third" not in [f.name for f in families()]
    assert cal.parameter == pytest.approx(3.0, rel=1e-9) and cal.certificate().holds


def test_no_member_is_built_twice() -> None:
    built: list[float] = []

    def at_budget(d: int, t: float) -> GRR:
        built.append(t)
        return GRR(d, t)

    cal = calibrate(_grr_family("GRR-counted", at_budget, initial=lambda c: 0.3), PROMISES["minid"])
    assert cal.parameter == pytest.approx(0.5, rel=1e-9) and len(built) == len(set(built)) >= 3
    # a family whose own optimiser answers the promise builds one member
    built.clear()
    own = calibrate(_grr_family("GRR-own", at_budget, optimiser=lambda c: 0.5), PROMISES["minid"])
    assert own.method == "own optimiser" and built == [0.5]


def test_a_family_receives_only_the_context_it_declares() -> None:
    seen: list[dict[str, Any]] = []

    def at_budget(d: int, t: float, **context: Any) -> IPRR:
        seen.append(context)
        return IPRR(t * context["budgets"])

    fam = Family("IPRR-seen", "none", IPRR, lambda: (IPRR([1.0, 2.0]),), at_budget=at_budget, context=("budgets",),
                 initial=lambda c: 1.0)
    promise = contracts.ipldp([0.5, 1.0, math.inf])
    cal = calibrate(fam, promise)
    assert cal.parameter == pytest.approx(1.0, rel=1e-9)
    assert all(set(ctx) == {"budgets"} for ctx in seen)
    np.testing.assert_array_equal(seen[0]["budgets"], promise.budget_vector())
    with pytest.raises(ValueError, match="unknown context key 'budget'"):
        fam.member(3, 1.0, budget=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="not indexed by a budget"):
        calibrate("UE", PROMISES["ldp"])


def test_best_is_the_smallest_total_variance_ties_to_the_first() -> None:
    promise = PROMISES["ldp"]
    cals = {f.name: _calibration(f.name, "ldp") for f in families(budget=True)}  # calibrate_all's, shared
    uniform = np.ones(D)
    kept = {name: cal.total_variance(uniform) for name, cal in cals.items() if cal.satisfiable}
    smallest = min(kept.values())
    # within rounding GRR, uRR (every item sensitive) and IPRR (equal budgets) have one variance: the first wins
    assert best(promise).family.name == next(name for name, v in kept.items() if v <= smallest * (1 + 1e-9)) == "GRR"
    # uRR with every item sensitive is GRR: a tie, won by the first of the order given
    assert best(promise, families=["uRR", "GRR"]).family.name == "uRR"
    assert best(promise, families=["GRR", "uRR"]).family.name == "GRR"
    # at counts far from uniform the ranking may change, never the rule
    skewed = np.array([1000.0, 1.0, 1.0, 1.0, 1.0])
    by_counts = best(promise, counts=skewed, families=["GRR", "OUE"])
    assert by_counts.total_variance(skewed) == min(calibrate(f, promise).total_variance(skewed) for f in ("GRR", "OUE"))
    with pytest.raises(ValueError, match="no family keeps"):
        best(promise, families=["FHR"])
    with pytest.raises(ValueError, match="counts must be 5"):
        best(promise, counts=[1.0, 2.0])


def test_callable_pair_rule_is_calibrated_by_the_verdict() -> None:
    def geometric(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.sqrt(a * b)

    c = contracts.idldp(E, geometric)
    with pytest.raises(ValueError, match="callable pair rule has no scale"):
        c.scale(GRR(D, 1.0))
    cal = calibrate("GRR", c)
    # the verdict carries the accountant's relative tolerance (1e-9): the boundary is found to within it
    assert cal.parameter == pytest.approx(0.5, rel=2e-9) and cal.certificate().holds


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: contracts.ldp(3, -1.0), "epsilon"),
        (lambda: contracts.minidldp([1.0]), "at least 2 items"),
        (lambda: contracts.ipldp([math.inf, math.inf]), "at least one sensitive"),
        (lambda: contracts.uldp(3, 1.0, []), "at least one sensitive"),
        (lambda: contracts.uldp(3, 1.0, [5]), "sensitive"),
        (lambda: contracts.fldp(3, 1.0, 1.5), "alpha"),
        (lambda: contracts.lip(1.0, [0.5, 0.5, 0.0]), "full support"),
        (lambda: contracts.lip(1.0, [0.5, 0.6]), "prior"),
        (lambda: contracts.context_aware(np.ones(3)), "d x d"),
        (lambda: contracts.idldp([1.0, 2.0], r="median"), "pair rule"),
    ],
)
def test_bad_promises_are_refused(make: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make()  # type: ignore[operator]


def test_calibrate_refuses_what_is_not_a_contract_or_family() -> None:
    with pytest.raises(TypeError, match="Contract"):
        calibrate("GRR", {"epsilon": 1.0})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="did you mean GRR"):
        get_family("GRRR")
    with pytest.raises(ValueError, match="already registered"):
        register_family(get_family("GRR"))
    with pytest.raises(TypeError, match="name or a Family"):
        calibrate(3, PROMISES["ldp"])  # type: ignore[arg-type]


def test_contract_views() -> None:
    c = PROMISES["uldp"]
    assert c.sensitive.tolist() == [0, 1] and c.budget_vector().tolist() == [1.0, 1.0, math.inf, math.inf, math.inf]
    assert c.pairwise_matrix() is None and c.prior is None
    m = PROMISES["minid"].pairwise_matrix()
    assert m[0, 4] == 0.5 and m[3, 4] == 2.0 and m[2, 2] == 0.0
    ca = PROMISES["context-aware"]
    assert ca.budget_vector()[0] == pytest.approx(0.5) and ca.name == "CA-LDP"
    assert PROMISES["lip"].prior.tolist() == PRIOR.tolist()
