"""The synthesis chapter's experiments (ldpkit.experiments.synthesis): the scenario and its promises,
the tightness certificate of every calibration, the exact variances against simulation, the
guarantee table against the accountant, and the papers' verdicts against the exact variances."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats

from ldpkit import GRR, IDUE, IPRR, accountant
from ldpkit.base import SupportOracle
from ldpkit.experiments import ExperimentData, RunConfig, get, style
from ldpkit.experiments import synthesis as syn
from ldpkit.experiments.verdicts import UNDECIDED
from ldpkit.family import families
from ldpkit.testing import Z

SC = syn.scenario()
CONTRACTS = syn.scenario_contracts(SC)
PAIRS = [(c, f) for c in CONTRACTS for f in syn.comparison_families()]
#: simulated populations per member and users per population in the simulation test
TRIALS, USERS = 400, 5_000


def test_scenario_states_its_choices() -> None:
    assert (SC.d, SC.eps_s, SC.eps_n, SC.alpha, SC.n_sensitive) == (10, 1.0, 2.0, 0.5, 3)
    assert SC.sensitive.tolist() == [7, 8, 9]  # the least frequent 30%
    assert np.all(np.diff(SC.prior) < 0) and math.isclose(SC.prior.sum(), 1.0)
    assert SC.budgets[SC.sensitive].tolist() == [1.0] * 3 and set(SC.budgets[:7]) == {2.0}
    assert np.isinf(SC.ipldp_budgets[:7]).all() and SC.counts().sum() == SC.n
    assert tuple(c.name for c in CONTRACTS.values()) == syn.CONTRACT_ORDER == tuple(CONTRACTS)
    assert set(syn.contract_descriptions(SC)) == set(CONTRACTS)
    with pytest.raises(ValueError, match="eps_s <= eps_n"):
        syn.scenario(eps_s=3.0)


@pytest.mark.parametrize("contract, family", PAIRS, ids=[f"{c}-{f}" for c, f in PAIRS])
def test_tightness_certificate_of_every_pair(contract: str, family: str) -> None:
    cal = syn.calibrated(family, CONTRACTS[contract])
    if not cal.satisfiable:
        assert cal.reason and cal.reason.strip(), (contract, family)
        return
    cert = cal.certificate()
    assert cert.verified and cert.keeps and cert.loosened_breaks, cert


def _members() -> dict[object, tuple[str, str]]:
    """Each distinct calibrated member of the chapter's pairs, with one (promise, family) it answers."""
    out: dict[object, tuple[str, str]] = {}
    for c, f in PAIRS:
        cal = syn.calibrated(f, CONTRACTS[c])
        if cal.satisfiable:
            out.setdefault(cal.mechanism, (c, f))
    return out


def _z(sim: np.ndarray, value: float) -> float:
    """Distance of ``value`` from the mean of the per-population squared errors ``sim``, in standard errors."""
    return abs(float(sim.mean()) - value) / (float(sim.std(ddof=1)) / math.sqrt(sim.size))


def test_exact_variance_agrees_with_aggregate_simulation() -> None:
    """Each population's total squared error ``W`` has mean the exact total variance; over ``TRIALS``
    populations the mean of ``W`` is compared with it in units of its standard error, estimated
    from the sample variance of ``W`` (the variance of a sample variance of the estimates: for
    Gaussian estimates ``Var W = 2 tr(Sigma^2)``, at most ``2 (tr Sigma)^2``, so the standard error
    is at most ``sqrt(2 / TRIALS)`` = 7% of the value).  Tolerance: the kit's ``Z`` standard errors.

    Power, stated against two plausible mistakes, each required to lie more than ``Z + 2`` of the
    same standard errors away (about 97% of runs of the mistaken code would then fail):
    a variance formula missing the ``n q (1 - q) / (p - q)^2`` term (for every pure protocol), and
    a MinID-LDP calibration at the promise's largest budget instead of its smallest (GRR at
    ``eps_n`` instead of ``eps_s``).
    """
    counts = SC.counts(USERS)
    seeds = np.random.SeedSequence(20240601).spawn(64)
    worst, n_cells, powers = 0.0, 0, []
    for i, (mech, (c, f)) in enumerate(_members().items()):
        est = mech.simulate(counts, np.random.default_rng(seeds[i]), trials=TRIALS)
        sse = np.sum((est - counts) ** 2, axis=1)
        exact = float(np.sum(mech.variance(counts)))
        worst, n_cells = max(worst, _z(sse, exact)), n_cells + 1
        if isinstance(mech, SupportOracle):
            p, q = np.asarray(mech.p_support), np.asarray(mech.q_support)
            missing = float(np.sum(counts * (1 - p - q) / (p - q)))  # the formula without n q(1-q)/(p-q)^2
            powers.append(_z(sse, missing))
        if (c, f) == ("MinID-LDP", "GRR"):
            assert math.isclose(syn.calibrated(f, CONTRACTS[c]).parameter, SC.eps_s, rel_tol=1e-9)
            powers.append(_z(sse, float(np.sum(GRR(SC.d, SC.eps_n).variance(counts)))))
    assert n_cells >= 20
    # the Bonferroni bound of the cells at family-wise 1e-3 is below Z: Z is the stricter of the two
    assert stats.norm.isf(1e-3 / (2 * n_cells)) < Z
    assert worst < Z, worst
    assert len(powers) >= 10 and min(powers) > Z + 2, sorted(powers)[:3]


def _accountant_values(mech: object) -> dict[str, float]:
    matrix = accountant.pairwise_budgets(SC.d, budgets=SC.budgets, r="min")
    ch = accountant.as_channel(mech)
    square = ch.n_inputs == ch.n_outputs
    return {
        "ldp_epsilon": accountant.ldp_epsilon(mech),
        "minid_scale": accountant.minidldp_scale(mech, SC.budgets),
        "idldp_average_scale": accountant.idldp_scale(mech, SC.budgets, r="average"),
        "context_aware_scale": accountant.context_aware_scale(mech, matrix),
        "ipldp_scale": accountant.ipldp_scale(mech, SC.ipldp_budgets, sensitive=SC.sensitive) if square else math.nan,
        "uldp_epsilon": accountant.uldp_epsilon(mech, SC.sensitive),
        "fldp_epsilon": accountant.fldp_epsilon(mech, SC.alpha),
        "lip_epsilon": accountant.lip_epsilon(mech, SC.prior),
        "mip_information": _or_nan(lambda: accountant.mutual_information(mech, SC.prior)),
    }


def _or_nan(value: Callable[[], float]) -> float:
    """The accountant's value, or NaN where it says it cannot account the notion (SHE's continuous reports under
    MIP): the guarantee table shows such a value as not computed."""
    try:
        return value()
    except accountant.AccountingError:
        return math.nan


def test_guarantee_table_is_the_accountants() -> None:
    result = syn.compute_guarantees(get("synthesis-guarantees").defaults)
    table = result.frame.set_index("mechanism")
    members = {name: m for name, _, m in syn.representatives(SC)}
    assert list(table.index) == list(members)
    # every registered mechanism family has a row, in display order
    assert list(table.index) == list(table["registry"]) == [f.name for f in families()]
    for name, member in members.items():
        row = table.loc[name]
        if isinstance(member, str):
            assert row[list(syn.GUARANTEE_COLUMNS)].isna().all() and row["note"] == member
            continue
        for col, value in _accountant_values(member).items():
            shown = float(row[col])
            assert (math.isnan(shown) and math.isnan(value)) or shown == value or math.isclose(shown, value,
                                                                                            rel_tol=1e-12), (name, col)
        # the pairwise special case: CA-LDP with the MinID-LDP matrix is MinID-LDP
        assert row["context_aware_scale"] == pytest.approx(row["minid_scale"], rel=1e-9) or (
            math.isinf(row["context_aware_scale"]) and math.isinf(row["minid_scale"]))
        # an unbounded or undefined value says why
        unbounded = [c for c in syn.GUARANTEE_COLUMNS if not math.isfinite(float(row[c]))]
        assert bool(unbounded) == isinstance(row["note"], str), name
    assert table.loc["FHR", "ldp_epsilon"] == math.inf and table.loc["FHR", "fldp_epsilon"] == pytest.approx(SC.eps_s)
    assert "item sets" in table.loc["OUE-PS", "note"]


def test_papers_verdicts_are_what_the_exact_variances_say() -> None:
    frame = syn.compute_papers(get("synthesis-papers").defaults).frame
    assert set(frame["key"]) == {"idldp-fig-3", "ipldp-fig-4", "ipldp-fig-2", "fldp-fig-3", "lip-fig-6"}
    for row in frame.itertuples():
        lower = row.a if row.printed_a < row.printed_b else row.b
        assert row.printed_winner == lower, row
        if not (math.isnan(row.matched_a) or math.isnan(row.matched_b)):
            if math.isclose(row.matched_a, row.matched_b, rel_tol=1e-9):
                assert row.matched_winner == UNDECIDED, row
            else:
                assert row.matched_winner == (row.a if row.matched_a < row.matched_b else row.b), row
        else:  # a mechanism with no member of the promise loses by default, and says why
            alone = row.a if math.isnan(row.matched_b) else row.b
            assert row.matched_winner == alone and (row.reason_a or row.reason_b)
        assert row.changes == (row.matched_winner != row.printed_winner)
    by = frame.set_index(["key", "b", "promise"])
    # IPRR at E is only (s E)-MinID-LDP, s = max E / min E: calibrated, it runs at E min/max
    iprr = by.loc[("ipldp-fig-4", "IDUE-opt0", r"MinID-LDP($E$)")]
    assert iprr["param_a"] == pytest.approx(SC.eps_s / SC.eps_n, rel=1e-9)
    assert iprr["printed_a"] == pytest.approx(float(np.sum(IPRR(SC.budgets).variance(SC.counts()))), rel=1e-12)
    assert iprr["matched_b"] == pytest.approx(float(np.sum(IDUE(SC.budgets, model="opt0").variance(SC.counts()))),
                                              rel=1e-9)
    assert iprr["changes"] and iprr["matched_winner"] == "IDUE-opt0"
    # the ID-LDP paper's comparison is already at one promise; FHR keeps no LDP member
    assert by.loc[("idldp-fig-3", "OUE", r"MinID-LDP($E$)"), "already_matched"]
    assert by.loc[("fldp-fig-3", "OUE", r"LDP($\varepsilon_s$)"), "matched_winner"] == "OUE"


def test_comparison_on_a_small_run_labels_its_data() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = syn.compute_comparison(RunConfig(repeats=5, seed=2, scale=0.05, progress=False))
    frame = data.frame
    assert set(frame["dataset"]) == set(data.labels.values()) and len(data.labels) == 2
    for name in data.standins:
        assert "stand-in" in data.labels[name]
    assert set(data.inputs) == set(data.labels)
    assert len(frame) == 2 * len(CONTRACTS) * len(syn.comparison_families())
    ok = frame[frame["satisfiable"]]
    assert (ok["ratio"] >= 1.0).all() and ok.groupby(["dataset", "contract"])["best"].any().all()
    assert frame.loc[~frame["satisfiable"], "reason"].str.len().gt(0).all()
    win = syn.winners(frame)
    assert (win["margin"] >= 1.0).all()
    for label in data.labels.values():
        guide = syn.practitioners_guide(frame, label).set_index("contract")
        assert guide.loc["LDP", "vs_ldp"] == 1.0
        assert (guide["grr"].dropna() >= 1.0).all() and (guide["oue"].dropna() >= 1.0).all()
        assert math.isnan(guide.loc["IPLDP", "grr"]) and isinstance(guide.loc["IPLDP", "grr_reason"], str)


def test_wins_figure_on_a_few_points_follows_the_book_style() -> None:
    points = [(axis, x, sc) for axis, x, sc in syn._wins_points()
              if (axis, x) in {("d", 4.0), ("d", 10.0), ("eps_s", 1.0), ("eps_s", 4.0), ("share", 0.3), ("share", 1.0)}]
    frame = syn.wins_frame(points)
    assert frame.groupby(["promise", "axis", "x"])["best"].any().all()
    left = syn.left_out(frame)
    assert set(left) | set(syn.WINS_DRAWN) >= set(syn.comparison_families())
    fig = syn.draw_wins(ExperimentData(frame, labels={}))
    assert style.audit_figure(fig) == []


def test_registered_experiments() -> None:
    for eid, kind in (("synthesis-guarantees", "table"), ("synthesis-comparison", "table"),
                      ("synthesis-wins", "figure"), ("synthesis-papers", "table")):
        exp = get(eid)
        assert (exp.paper, exp.kind) == (syn.PAPER, kind) and exp.item.startswith("Synthesis")
        assert exp.section and exp.section.startswith("sec-synthesis-")
    assert get("synthesis-comparison").datasets == (syn.ZIPF, syn.REAL)


#: the headline of the synthesis chapter (and of the introduction and the README), per promise on the
#: scenario's Zipf data: the best families (tied: the same variance), the runner-up and the runner-up's
#: exact total variance over the best's
HEADLINE = {
    "LDP": ({"SS", "ID-SS"}, "IDUE-opt0", 1.295557),
    "MinID-LDP": ({"ID-SS"}, "SS", 1.055944),
    "ID-LDP (average)": ({"ID-SS"}, "IDUE-opt0", 1.549387),
    "IPLDP": ({"uRR", "IPRR"}, None, math.inf),
    "ULDP": ({"uRR", "IPRR"}, "uRAP", 2.399033),
    "FLDP": ({"FHR"}, "SS", 1.175693),
    "LIP": ({"SS", "ID-SS"}, "FLH", 1.406304),
}
#: relative tolerance on a margin.  The margins are ratios of exact variances of calibrated members, and a
#: calibrated parameter is certified to a relative LOOSEN = 1e-6 (the member at t (1 + 1e-6) breaks the
#: promise; the search itself ends far below that).  A total variance moves with its parameter by at most a
#: few times the parameter's relative change here (its log-derivative in t is below 3 for every member of
#: the scenario), so two calibrations can move a margin by about 1e-5 at most; 1e-4 leaves room for the
#: solvers of the families' own optimisers and still fails on any change a reader could see in the
#: chapter's four printed digits.
MARGIN_RTOL = 1e-4


def _zipf_variances(contract: str) -> dict[str, float]:
    counts = syn.comparison_data(1.0)[syn.ZIPF][1]
    out = {}
    for f in syn.comparison_families():
        cal = syn.calibrated(f, CONTRACTS[contract])
        if cal.satisfiable:
            out[f] = cal.total_variance(counts)
    return out


@pytest.mark.parametrize("contract", list(HEADLINE))
def test_headline_winner_runner_up_and_margin(contract: str) -> None:
    """A change of winner, of runner-up or of the margin cannot pass unnoticed: the book's prose names them."""
    best_set, runner, margin = HEADLINE[contract]
    v = _zipf_variances(contract)
    low = min(v.values())
    tied = {f for f, x in v.items() if x <= low * (1 + syn.TIE_RTOL)}
    assert tied == best_set, (contract, tied)
    rest = {f: x for f, x in v.items() if f not in tied}
    if runner is None:
        assert not rest
        return
    second = min(rest, key=rest.__getitem__)
    assert second == runner, (contract, second)
    assert rest[second] / low == pytest.approx(margin, rel=MARGIN_RTOL)
    # no headline winner is a near tie: the prose calls each one the best
    assert rest[second] / low >= 1 + syn.NEAR_TIE


def test_best_is_never_below_the_certified_bound() -> None:
    """The bound of ldpkit.optimal is a lower bound for every mechanism keeping the promise: the best family's
    variance over it is at least 1 (to the dual certificate's rounding), and FLDP bounds nothing."""
    from ldpkit.optimal import best_possible

    counts = syn.comparison_data(1.0)[syn.ZIPF][1]
    assert counts.sum() == SC.n
    to_bound = {}
    for c in CONTRACTS:
        bound = best_possible(CONTRACTS[c], counts).value
        if c == "FLDP":
            assert bound == 0.0
            continue
        to_bound[c] = min(_zipf_variances(c).values()) / bound
    assert all(r >= 1 - 1e-9 for r in to_bound.values()), to_bound
    # the LDP winner is near the bound (SS is optimal at uniform counts), LIP's the farthest from it
    assert max(to_bound, key=to_bound.__getitem__) == "LIP" and to_bound["LDP"] < 1.2


def test_papers_split_own_promise_from_restatements() -> None:
    """Issue 38: at each paper's own promise 2 of 5 comparisons change; the 2 restatements under a promise the
    paper never made (FHR under LDP, IPRR under ULDP) both change."""
    frame = syn.compute_papers(get("synthesis-papers").defaults).frame
    per = frame.groupby(["key", "promise"], sort=False).agg(own=("own_promise", "all"), changes=("changes", "any"))
    own, other = per[per["own"]], per[~per["own"]]
    assert len(own) == 5 and own.index.get_level_values("key").is_unique
    assert sorted(own[own["changes"]].index.get_level_values("key")) == ["ipldp-fig-4", "lip-fig-6"]
    assert sorted(other.index.get_level_values("key")) == ["fldp-fig-3", "ipldp-fig-2"] and other["changes"].all()


def test_regimes_coinciding_lines_and_report_bits() -> None:
    points = [(axis, x, sc) for axis, x, sc in syn._wins_points()
              if (axis, x) in {("d", 10.0), ("d", 64.0), ("d", 128.0), ("eps_s", 1.0), ("eps_s", 4.0)}]
    frame = syn.wins_frame(points)
    reg = syn.regimes(frame)
    # every point is in exactly one run of its (promise, axis)
    for (promise, axis), grp in frame.groupby(["promise", "axis"]):
        runs = reg[(reg["promise"] == promise) & (reg["axis"] == axis)]
        xs = sorted(grp["x"].unique())
        assert sum(sum(r.lo <= x <= r.hi for x in xs) for r in runs.itertuples()) == len(xs)
    uldp_d = reg[(reg["promise"] == "ULDP") & (reg["axis"] == "d")].set_index("lo")
    assert uldp_d.loc[64.0, "best"] == "uRAP" and uldp_d.loc[10.0, "best"] == "uRR = IPRR"
    assert (reg["margin_min"] >= 1.0).all() and (reg["bits_min"] >= 1).all()
    # uRR's member under MinID-LDP is GRR's: its line is drawn once, as GRR's
    assert ("MinID-LDP", "uRR", "GRR") in syn.coinciding(frame)
    assert syn.report_bits(syn.calibrated("SS", CONTRACTS["LDP"]).mechanism) == math.ceil(math.log2(math.comb(10, 3)))
