"""The FLDP experiment protocol (ldpkit.experiments.fldp) and its registered figures and tables
(ldpkit.experiments.fldp_figures): inputs, bookkeeping, stand-in naming, the guarantees, the
ideal-hash OLH model, and that the simulated errors agree with their exact expectations."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, planned_label, reproduce_with_cli
from ldpkit import FHR, HR, OLH, OUE
from ldpkit.experiments import RunConfig, fldp_figures, list_experiments, run
from ldpkit.experiments import fldp as exp

CHAPTER = REPO / "book" / "fldp_experiments.md"
COUNTS = np.array([900, 500, 300, 200, 150, 120, 90, 60, 40, 30, 20, 15, 10, 8, 5, 3])  # n = 2451
IDS = {"fldp-table1": ("Table 1", "table"), "fldp-table2": ("Table 2", "table"),
       "fldp-datasets": ("Sec. 6.1 (datasets)", "table"),
       "fldp-fig2": ("Fig. 2", "figure"), "fldp-fig3": ("Fig. 3", "figure"),
       "fldp-fig4": ("Fig. 4", "figure"), "fldp-fig5": ("Fig. 5", "figure")}
TINY = RunConfig(repeats=2, seed=3, scale=0.02)


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
    result = run("fldp-fig5", TINY)
    online, brown = planned_label("online-retail"), planned_label("brown")
    assert set(result.frame["dataset"]) == {"Zipf (FLDP)", online, brown}
    assert result.standins == tuple(label for label in (online, brown) if label.endswith("(stand-in)"))
    titles = [ax.get_title() for ax in result.figure.axes]
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
    text = CHAPTER.read_text()
    assert text.count("(fldp-experiments)=") == 1
    called = set(re.findall(r'experiments\.run\("([^"]+)"', text))
    assert called == set(IDS)
    for e in list_experiments():
        if e.paper == "zhao2022fldp":
            assert f"({e.section})=" in text, e.section
    figures = dict(re.findall(r"```\{glue:figure\} (\S+)\n(.*?)\n```", text, re.S))
    assert set(figures) == {f"fig-fldp-{n}" for n in (2, 3, 4, 5)}
    for key, body in figures.items():
        alt = re.search(r"^:alt: (.+)$", body, re.M)
        assert alt and len(alt.group(1).split()) >= 12, key
        caption = body.split("\n\n", 1)[1]
        assert "{cite}`zhao2022fldp`" in caption and "Reproduces" in caption, key
        for fact in ("data", "repeats", "seed"):
            assert re.search(rf"{{glue:text}}`fig\d_{fact}`", caption), (key, fact)
    assert len(re.findall(r"display\(HTML\(downloads_html\(fig\d\)\)\)|show_result\(fig\d, ", text)) == 4
