"""The FLDP experiment protocol (ldpkit.experiments.fldp) and its registered figures and tables
(ldpkit.experiments.fldp_figures): inputs, bookkeeping, stand-in naming, the guarantees, the
ideal-hash OLH model, and that the simulated errors agree with their exact expectations."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, check_experiments_chapter, planned_label, reproduce_with_cli
from ldpkit import FHR, HR, OLH, OUE
from ldpkit.experiments import RunConfig, fldp_figures, get, list_experiments, run
from ldpkit.experiments import fldp as exp

CHAPTER = REPO / "book" / "fldp_experiments.md"
COUNTS = np.array([900, 500, 300, 200, 150, 120, 90, 60, 40, 30, 20, 15, 10, 8, 5, 3])  # n = 2451
IDS = {"fldp-table1": ("Table 1", "table"), "fldp-table2": ("Table 2", "table"),
       "fldp-datasets": ("Sec. 6.1 (datasets)", "table"),
       "fldp-fig2": ("Fig. 2", "figure"), "fldp-fig3": ("Fig. 3", "figure"),
       "fldp-fig4": ("Fig. 4", "figure"), "fldp-fig5": ("Fig. 5", "figure")}
TINY = RunConfig(repeats=2, seed=3, scale=0.02)
#: the configuration ``ldpkit reproduce fldp-figN --repeats 2 --scale 0.02`` runs with
#: (``conftest.reproduce_with_cli``): Figs. 2-5 share one protocol run, cached per configuration
#: and data (``fldp_figures.compute_metrics``), so the tests below that run at this configuration
#: with the data found here make that run once for the module, CLI tests included
CLI_TINY = get("fldp-fig2").defaults.replace(progress=True, repeats=2, scale=0.02)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: exp.run_epsilons(COUNTS, []), "epsilons is empty"),
        (lambda: exp.run_epsilons(COUNTS, [0.0]), "epsilon"),
        (lambda: exp.run_epsilons(COUNTS, [1.0], ks=(20,)), "k must lie"),
        (lambda: exp.run_epsilons(COUNTS, [1.0], ks=(2,), mechanisms=("RAPPOR",)), "unknown mechanism"),
        (lambda: exp.run_epsilons(COUNTS, [1.0], ks=(2,), mechanisms=()), "at least one mechanism"),
        (lambda: exp.run_epsilons(COUNTS, [1.0], ks=(2,), mechanisms="FHR"), "sequence of names"),
        (lambda: exp.run_epsilons(COUNTS, [1.0], ks=(2,), config=RunConfig(scale=0.5)), "scale"),
        (lambda: exp.run_epsilons(COUNTS, [1.0], ks=(2,), config={"repeats": 2}), "RunConfig"),
        (lambda: exp.run_epsilons([-1, 2], [1.0], ks=(1,)), "count"),
        (lambda: exp.make_oracle("GRR", 4, 1.0), "unknown mechanism"),
        (lambda: exp.measure_costs(10, 8, 1.0, mechanisms=("IPRR",)), "unknown mechanism"),
        (lambda: fldp_figures.load_dataset("retail"), "unknown FLDP dataset"),
        (lambda: fldp_figures.load_dataset(fldp_figures.ZIPF, 0.0), "scale"),
    ],
)
def test_bad_input_raises_before_work(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_frame_columns_sizes_and_determinism() -> None:
    config = RunConfig(repeats=3, seed=1)
    frame = exp.run_epsilons(COUNTS, [0.5, 1.0], ks=(2, 5), config=config)
    assert list(frame.columns) == ["epsilon", "repeat", "mechanism", "k", "kld", "se", "re", "ncr", "se_theory"]
    assert len(frame) == 2 * 3 * 4 * 2
    assert frame["ncr"].between(0, 1).all() and (frame["kld"] >= 0).all()
    assert frame.equals(exp.run_epsilons(COUNTS, [0.5, 1.0], ks=(2, 5), config=config))


def test_simulated_se_matches_exact_expectation() -> None:
    # se is a mean over R i.i.d. runs with mean se_theory; 5 standard errors is beyond the
    # 99.999% quantile of the t statistic, and FHR's variance with HR's non-holder term
    # (the factor 1/2 dropped) would be about twice too large
    frame = exp.run_epsilons(COUNTS, [1.0], ks=(4,), config=RunConfig(repeats=1500, seed=7))
    grouped = frame.groupby("mechanism")
    mean, theory = grouped["se"].mean(), grouped["se_theory"].mean()
    se = grouped["se"].std(ddof=1) / np.sqrt(grouped["se"].count())
    z = ((mean - theory) / se).abs()
    assert (z < 5).all(), z.to_dict()
    assert abs(mean["FHR"] - 2 * theory["FHR"]) / se["FHR"] > 5


def test_kld_smoothings_add_columns_on_the_same_estimates() -> None:
    config = RunConfig(repeats=2, seed=4)
    plain = exp.run_epsilons(COUNTS, [0.5], ks=(4,), config=config)
    extra = exp.run_epsilons(COUNTS, [0.5], ks=(4,), config=config, kld_smoothings=(1e-8, 1e-2))
    assert list(extra.columns) == [*plain.columns, "kld@1e-08", "kld@0.01"]
    assert extra[plain.columns].equals(plain)
    assert (extra[["kld@1e-08", "kld@0.01"]] >= 0).all().all()
    assert not np.allclose(extra["kld@0.01"], extra["kld"])  # the smoothing matters here
    with pytest.raises(ValueError, match="smoothing"):
        exp.run_epsilons(COUNTS, [0.5], ks=(4,), kld_smoothings=(0.0,))


def test_crossover_is_where_fhr_and_oue_nonholder_variances_meet() -> None:
    one = np.array([0, 1])
    for eps, fhr_better in ((0.99 * exp.CROSSOVER_EPSILON, True), (1.01 * exp.CROSSOVER_EPSILON, False)):
        assert (FHR(2, eps).variance(one)[0] < OUE(2, eps).variance(one)[0]) == fhr_better
    assert math.isclose(exp.CROSSOVER_EPSILON, math.log(3 + 2 * math.sqrt(2)))


def test_se_verdicts_follow_the_exact_variances() -> None:
    # a flat domain: every top item is rare, so the non-holder term decides (crossover ~1.76)
    counts = np.full(64, 50)
    frame = exp.run_epsilons(counts, [0.5, 1.5, 2.5], ks=(8,), config=RunConfig(repeats=2, seed=5))
    cells = exp.fhr_verdicts(frame, "se")
    assert list(cells["outcome"]) == [exp.BEST, exp.BEST, exp.BEATEN]
    assert list(cells["vs OUE"]) == ["FHR", "FHR", "OUE"]
    summary = exp.claim_verdict(cells)
    assert (summary["verdict"], summary["cells"], summary["best"], summary["outside_beaten"]) == ("reproduced", 2, 2, 1)
    assert exp.claim_verdict(cells, below=3.0)["verdict"] == "differs"


def test_paired_verdicts_need_agreement_across_smoothings() -> None:
    import pandas as pd

    def frame(fhr: list[float], oue: list[float], smoothed: list[float]) -> pd.DataFrame:
        rows = []
        for mech, values, other in (("FHR", fhr, smoothed), ("OUE", oue, oue)):
            for rep, (v, w) in enumerate(zip(values, other)):
                rows.append({"epsilon": 1.0, "repeat": rep, "mechanism": mech, "k": 5, "kld": v, "kld@0.01": w})
        return pd.DataFrame(rows)

    better = [1.0, 1.1, 0.9, 1.0]
    worse = [2.0, 2.1, 1.9, 2.05]
    agree = exp.fhr_verdicts(frame(better, worse, better), "kld", rivals=("OUE",))
    assert (agree.loc[0, "outcome"], agree.loc[0, "undecided_by"]) == (exp.BEST, "")
    flipped = exp.fhr_verdicts(frame(better, worse, [3.0, 3.1, 2.9, 3.0]), "kld", rivals=("OUE",))
    assert (flipped.loc[0, "outcome"], flipped.loc[0, "undecided_by"]) == ("undecided", "smoothing")
    noisy = exp.fhr_verdicts(frame(better, [1.0, 1.12, 0.88, 1.01], better), "kld", rivals=("OUE",))
    assert (noisy.loc[0, "outcome"], noisy.loc[0, "undecided_by"]) == ("undecided", "noise")
    # NCR is a score: higher is better
    scores = frame(worse, better, worse).rename(columns={"kld": "ncr"}).drop(columns="kld@0.01")
    assert exp.fhr_verdicts(scores, "ncr", rivals=("OUE",)).loc[0, "outcome"] == exp.BEST
    with pytest.raises(ValueError, match="unknown metric"):
        exp.fhr_verdicts(scores, "mse")
    with pytest.raises(ValueError, match="FHR"):
        exp.fhr_verdicts(scores, "ncr", rivals=("FHR",))


def test_shared_run_keeps_the_kld_at_every_smoothing() -> None:
    data = fldp_figures.compute_metrics(CLI_TINY)
    smoothing = data.meta["kld_smoothing"]
    assert not any(c.startswith("kld@") for c in data.frame.columns)
    assert [c for c in smoothing.columns if c.startswith("kld")] == [
        "kld", *(f"kld@{s:g}" for s in exp.KLD_SMOOTHINGS if s != exp.KLD_SMOOTHING)]
    assert np.array_equal(smoothing["kld"].to_numpy(), data.frame["kld"].to_numpy())


def test_ideal_olh_support_has_the_exact_moments() -> None:
    olh = OLH(COUNTS.size, 1.0)
    gen = np.random.default_rng(11)
    est = np.array([exp.simulate_estimate(olh, COUNTS, gen) for _ in range(4000)])
    var = olh.variance(COUNTS)
    z_mean = (est.mean(axis=0) - COUNTS) / np.sqrt(var / est.shape[0])
    assert np.abs(z_mean).max() < 5
    # sample variance / exact: sd of the ratio about sqrt(2 / R)
    ratio = est.var(axis=0, ddof=1) / var
    assert np.abs(ratio - 1).max() < 5 * math.sqrt(2 / est.shape[0])
    # the per-user path (ldpkit's hash) agrees in mean with the ideal model
    user = np.array([olh.simulate(COUNTS, rng=gen) for _ in range(200)])
    assert np.abs((user.mean(axis=0) - COUNTS) / np.sqrt(var / 200)).max() < 5


def test_guarantees_from_the_accountant() -> None:
    table = exp.guarantees(exp.COST_MECHANISMS, [0.5, 2.0], 12).set_index(["mechanism", "epsilon"])
    for mech in ("OLH", "RAPPOR", "OUE", "HR"):
        for eps in (0.5, 2.0):
            row = table.loc[(mech, eps)]
            assert math.isclose(row["ldp_epsilon"], eps, rel_tol=1e-9) and row["fldp_alpha"] == 1.0
    fhr = table.loc["FHR"]
    assert np.isinf(fhr["ldp_epsilon"]).all() and (fhr["fldp_alpha"] == 0.5).all()
    assert np.allclose(fhr["fldp_epsilon"], [0.5, 2.0])


def test_report_bits_and_costs() -> None:
    assert exp.report_bits(FHR(1000, 1.0)) == 20 and exp.report_bits(HR(1000, 1.0)) == 10
    assert exp.report_bits(OUE(1000, 1.0)) == 1000
    assert exp.report_bits(OLH(1000, 1.0)) == 64 + 2
    costs = exp.measure_costs(2_000, 64, 1.0, rng=1)
    assert list(costs.index) == list(exp.COST_MECHANISMS)
    assert (costs[["perturb_s", "aggregate_s"]] >= 0).all().all()


def test_every_fldp_figure_and_table_is_registered() -> None:
    registered = {e.id: e for e in list_experiments() if e.paper == "zhao2022fldp"}
    assert set(registered) == set(IDS)
    for eid, (item, kind) in IDS.items():
        assert (registered[eid].item, registered[eid].kind) == (item, kind)
    for n in (2, 3, 4, 5):
        assert registered[f"fldp-fig{n}"].defaults.repeats == fldp_figures.REPEATS == 10


def test_data_are_named_in_frames_labels_and_titles(data_env: str) -> None:
    result = run("fldp-fig5", CLI_TINY)
    online, brown = planned_label("online-retail"), planned_label("brown")
    assert set(result.frame["dataset"]) == {"Zipf (FLDP)", online, brown}
    assert result.standins == tuple(label for label in (online, brown) if label.endswith("(stand-in)"))
    # a row of panels per dataset, titled with its label (the panels' titles are the top-k sizes)
    titles = [ax.get_title() for ax in result.figure.axes] + [sub.get_suptitle() for sub in result.figure.subfigs]
    assert any(online in t for t in titles) and any(brown in t for t in titles)
    # a stand-in is never shown under the real name alone
    for label in (online, brown):
        if label.endswith("(stand-in)"):
            name = re.escape(label.removesuffix(" (stand-in)"))
            assert not any(re.search(name + r"(?! \(stand-in\))", t) for t in titles)
    table = run("fldp-datasets", TINY).frame
    assert table.loc["Online", "dataset"] == online
    assert table.loc["Zipf", "users"] == round(0.02 * 593_358)
    if data_env == "none":
        assert (online, brown) == ("Online Retail (stand-in)", "Brown (stand-in)")


@pytest.mark.parametrize("eid", sorted(IDS))
def test_every_fldp_experiment_reproduces_through_the_cli(eid: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    stdout, rows = reproduce_with_cli(eid, IDS[eid][1], tmp_path / "out", capsys)
    if eid.startswith("fldp-fig") or eid == "fldp-datasets":
        standins = [label for label in (planned_label("online-retail"), planned_label("brown"))
                    if label.endswith("(stand-in)")]
        assert (f"stand-in: {', '.join(standins)}" in stdout) == bool(standins)


def test_chapter_runs_and_shows_every_registered_fldp_experiment() -> None:
    captions = check_experiments_chapter(CHAPTER.read_text(), "fldp-experiments", IDS, "zhao2022fldp",
                                         {f"fig-fldp-{n}" for n in (2, 3, 4, 5)})
    for key, caption in captions.items():
        for fact in ("data", "repeats", "seed"):
            assert re.search(rf"{{glue:text}}`fig\d_{fact}`", caption), (key, fact)
