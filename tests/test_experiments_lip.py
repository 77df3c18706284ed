"""The LIP experiment protocol (ldpkit.experiments.lip) and its registered figures
(ldpkit.experiments.lip_figures): inputs, the models against the exact optimisers of ldpkit.lip,
exact moments against simulation, stand-in naming, and the reproduce command at tiny scale."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, check_experiments_chapter, panel_series, planned_label, reproduce_with_cli
from scipy import stats

from ldpkit import lip
from ldpkit.experiments import RunConfig, lip_figures, list_experiments, run
from ldpkit.experiments import lip as exp
from ldpkit.experiments import lip_paper

CHAPTER = REPO / "book" / "lip_experiments.md"
IDS = {f"lip-fig{k}": f"Fig. {k}" for k in (2, 5, 6, 7, 8)}
TINY = RunConfig(repeats=2, seed=3, scale=0.02)
PRIORS = np.array([0.002, 0.05, 0.3, 0.5, 0.8, 0.995])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: exp.flips("OUE", [0.5], 1.0), "unknown model"),
        (lambda: exp.flips("Opt-LIP", [0.0], 1.0), r"inside \(0, 1\)"),
        (lambda: exp.flips("Opt-LIP", [1.2], 1.0), "prior"),
        (lambda: exp.flips("Opt-LIP", [0.5], -1.0), "budgets"),
        (lambda: exp.flips("Opt-LIP", [0.5], math.nan), "budgets"),
        (lambda: exp.bayes_mse("Opt-LIP", [], 1.0), "empty"),
        (lambda: exp.conditional_mse("Opt-LIP", [0.5, 0.5], [1], 1.0), "0/1 array"),
        (lambda: exp.conditional_mse("Opt-LIP", [0.5], [2], 1.0), "0/1 array"),
        (lambda: exp.simulate_squared_errors("Opt-LIP", [0.5], 1.0, 0), "trials"),
        (lambda: exp.simulate_squared_errors("Opt-LIP", [0.5, 0.4], 1.0, 5, x=[1]), "length"),
        (lambda: exp.exact_curves([0.5], [], ("Opt-LIP",)), "budgets"),
        (lambda: exp.exact_curves([0.5], [1.0], ("GRR",)), "unknown model"),
        (lambda: lip_figures.kosarak_data(0.0), "scale"),
    ],
)
def test_bad_input_raises(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5, 6.0, 9.5])
def test_models_are_the_exact_optima(eps: float) -> None:
    solvers = {"Opt-LDP": (lip.optimal_ldp, 1.0), "Opt-LIP": (lip.optimal_lip, 1.0),
               "Opt-LIP eps/2": (lip.optimal_lip, 0.5), "Sym-LIP eps/2": (lip.optimal_symmetric_lip, 0.5)}
    for model, (solver, factor) in solvers.items():
        for p in PRIORS:
            best = solver(float(p), factor * eps).mse
            assert math.isclose(exp.bayes_mse(model, [p], eps), best, rel_tol=1e-8), (model, p)
    # the unbiased baseline is eq. (25)
    e = math.exp(eps)
    assert math.isclose(exp.bayes_mse("LDP", PRIORS, eps), PRIORS.size * e / (e - 1) ** 2, rel_tol=1e-12)


def test_budget_zero_gives_no_information() -> None:
    for model in exp.MODELS[1:]:
        assert math.isclose(exp.bayes_mse(model, PRIORS, 0.0), float(np.sum(PRIORS * (1 - PRIORS))), rel_tol=1e-12)
    assert exp.bayes_mse("LDP", PRIORS, 0.0) == math.inf


def test_paper_curves_are_the_kits_closed_forms() -> None:
    for eps in (0.5, 2.0, 7.0):
        frame = exp.paper_curves(PRIORS[:1], [eps]).set_index("model")
        cf, cf2 = lip_paper.paper_theorem2(float(PRIORS[0]), eps), lip_paper.paper_theorem2(float(PRIORS[0]), eps / 2)
        p4 = lip_paper.paper_proposition4(float(PRIORS[0]), eps / 2)
        assert math.isclose(frame.loc["Opt-LIP (Thm 2)", "mse"], cf.mse_printed, rel_tol=1e-12)
        assert bool(frame.loc["Opt-LIP (Thm 2)", "feasible"]) == cf.feasible
        assert bool(frame.loc["Opt-LIP eps/2 (Thm 2)", "feasible"]) == cf2.feasible
        assert math.isclose(frame.loc["Sym-LIP eps/2 (eq. 23)", "mse"], p4.mse_printed, rel_tol=1e-12)


def test_half_budget_lip_never_beats_ldp() -> None:
    # eps/2-LIP implies eps-LDP (Theorem 1), so eps-Opt-LDP is at least as good at every prior
    wide = np.concatenate([np.logspace(-5, -1, 20), np.linspace(0.1, 0.9, 17), 1 - np.logspace(-5, -1, 20)])
    for eps in (0.5, 3.0, 8.3, 10.0):
        for p in wide:
            assert exp.bayes_mse("Opt-LIP eps/2", [p], eps) >= exp.bayes_mse("Opt-LDP", [p], eps) * (1 - 1e-9)


@pytest.mark.parametrize("fixed", [False, True])
def test_simulation_matches_exact_moments(fixed: bool) -> None:
    # the mean of R squared errors against the exact mean, with the exact variance: |z| < 5 fails
    # with probability below 1e-6 per check (R = 20,000: the mean is close to normal); a wrong
    # posterior (e.g. the prior-free estimator's weights) moves the mean by many standard errors
    gen = np.random.default_rng(11)
    priors = gen.random(9)
    priors[4] = priors[2]
    x = (gen.random(9) < priors).astype(int) if fixed else None
    if fixed:
        x[4] = x[2]
    for model in exp.MODELS:
        mean, var = exp.squared_error_moments(model, priors, 1.7, x)
        exact = exp.conditional_mse(model, priors, x, 1.7) if fixed else exp.bayes_mse(model, priors, 1.7)
        assert math.isclose(mean, exact, rel_tol=1e-12)
        sq = exp.simulate_squared_errors(model, priors, 1.7, 20_000, gen, x=x)
        z = (sq.mean() - mean) / math.sqrt(var / sq.size)
        assert abs(z) < 5, (model, z)
        # and the variance itself: the sample variance within 10% at this size
        assert abs(sq.var() / var - 1) < 0.1, model


def test_conditional_mse_has_no_bias_with_the_empirical_prior() -> None:
    x = np.array([1] * 3 + [0] * 97)
    prior = np.full(100, 0.03)
    for eps in (0.0, 1.0):
        assert exp.conditional_mse("Opt-LIP", prior, x, eps) <= exp.bayes_mse("Opt-LIP", prior, eps) + 1e-12
    assert exp.conditional_mse("Opt-LIP", prior, x, 0.0) < 1e-20


def test_unbiased_ldp_optimum_is_symmetric_rr() -> None:
    for eps in (0.5, 2.0):
        _, _, mse = exp.unbiased_ldp_optimum(0.1, eps, grid=101)
        e = math.exp(eps)
        assert math.isclose(mse, e / (e - 1) ** 2, rel_tol=1e-9)


def test_every_lip_figure_is_registered() -> None:
    registered = {e.id: e for e in list_experiments() if e.paper == "jiang2018lip"}
    assert set(registered) == set(IDS)
    for eid, item in IDS.items():
        e = registered[eid]
        assert (e.item, e.kind) == (item, "figure")
        assert e.defaults.seed == lip_figures.DEFAULT_SEEDS[eid]
        assert e.defaults.repeats == lip_figures.REPEATS[eid]


def test_data_are_named_in_frames_labels_and_titles(data_env: str) -> None:
    result = run("lip-fig8", TINY)
    kosarak, gowalla = planned_label("kosarak"), planned_label("gowalla-10core") + ", held-out location"
    assert set(result.frame["dataset"]) == {kosarak, gowalla}
    assert set(result.standins) == {label for label in (kosarak, gowalla) if "stand-in" in label}
    titles = [ax.get_title() for ax in result.figure.axes if ax.get_visible()]
    assert any(kosarak in t for t in titles) and any(gowalla in t for t in titles)
    if kosarak != "Kosarak":
        assert not any(re.search(r"Kosarak(?! \((prefix )?stand-in\))", t) for t in titles)
    kos = result.meta["kosarak"]
    if kosarak == "Kosarak":
        assert kos["threshold"] == lip_figures.KOSARAK_CLICKS
    else:  # the threshold is scaled by the share of the full file's clicks the data hold
        assert kos["threshold"] == pytest.approx(lip_figures.kosarak_threshold(kos["records"]))
    if data_env == "none":
        assert (kosarak, gowalla) == ("Kosarak (stand-in)", "Gowalla (stand-in), held-out location")


def test_fig7_tiny_scale_and_simulation_columns() -> None:
    result = run("lip-fig7", TINY)
    frame = result.frame
    assert set(frame["panel"]) == {"N = 1", "N = 10", "N = 1,000"}
    sim = frame[frame["kind"] == "simulated"]
    assert sim["se"].notna().all() and (sim["se"] > 0).all()
    law = stats.gamma(a=(sim["mse_exact"] / sim["se"]) ** 2, scale=sim["se"] ** 2 / sim["mse_exact"])
    assert law.mean() == pytest.approx(sim["mse_exact"].values, rel=1e-9)


@pytest.mark.parametrize("eid", sorted(IDS))
def test_every_lip_figure_reproduces_through_the_cli(eid: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    stdout, rows = reproduce_with_cli(eid, "figure", tmp_path / "out", capsys)
    if eid == "lip-fig8":
        labels = {planned_label("kosarak"), planned_label("gowalla-10core") + ", held-out location"}
        assert {row[0] for row in rows[1:]} == labels
        assert ("stand-in: " in stdout) == any("stand-in" in label for label in labels)


def test_chapter_runs_and_shows_every_registered_lip_figure() -> None:
    text = CHAPTER.read_text()
    captions = check_experiments_chapter(text, "lip-experiments", IDS, "jiang2018lip",
                                         {f"fig-lip-{k}" for k in (2, 5, 6, 7, 8)})
    for key, caption in captions.items():
        assert re.search(r"{glue:text}`fig\d_data`", caption), key
        assert "`ldpkit reproduce lip-fig" in caption, key
        assert f"{{numref}}`{key}`" in text or key in text, key



@pytest.mark.parametrize("eid", sorted(IDS))
def test_every_lip_panel_draws_at_most_six_series(eid: str) -> None:
    result = run(eid, TINY)
    counts = {ax.get_title(): panel_series(ax) for ax in result.figure.axes if ax.get_visible()}
    assert counts and max(counts.values()) <= 6, counts
