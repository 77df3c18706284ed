"""The IPLDP experiment protocol (ldpkit.experiments.ipldp) and its registered figures and tables
(ldpkit.experiments.ipldp_figures): inputs, bookkeeping, stand-in naming, the estimators, and that
the simulated errors agree with their exact expectations."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, check_experiments_chapter, panel_series, planned_label, reproduce_with_cli
from ldpkit import GRR, IPRR, URR
from ldpkit.budgets import ipldp_levels
from ldpkit.experiments import RunConfig, ipldp_figures, list_experiments, run
from ldpkit.experiments import ipldp as exp
from ldpkit.iprr import mle_keep_or_resample

CHAPTER = REPO / "book" / "ipldp_experiments.md"
COUNTS = np.array([900, 500, 300, 200, 150, 120, 90, 60, 40, 30, 20, 15, 10, 8, 5, 3])  # n = 2451
KW = {"eps_min": 0.5, "eps_max": 2.0, "lc": 2, "nr": 0.25}
IDS = {"ipldp-table1": ("Table 1", "table"), "ipldp-table2": ("Table 2", "table"),
       "ipldp-fig2": ("Fig. 2", "figure"), "ipldp-fig3": ("Fig. 3", "figure"),
       "ipldp-fig4": ("Fig. 4", "figure")}
TINY = RunConfig(repeats=2, seed=3, scale=0.02)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: exp.run_sample_ratio(COUNTS, [], **KW), "srs is empty"),
        (lambda: exp.run_sample_ratio(COUNTS, [0.0], **KW), r"\(0, 1\]"),
        (lambda: exp.run_sample_ratio(COUNTS, [1.5], **KW), r"\(0, 1\]"),
        (lambda: exp.run_sample_ratio(COUNTS, [math.nan], **KW), r"\(0, 1\]"),
        (lambda: exp.run_sample_ratio(COUNTS, [1.0], mechanisms=("OUE",), **KW), "unknown mechanism"),
        (lambda: exp.run_sample_ratio(COUNTS, [1.0], mechanisms=(), **KW), "at least one mechanism"),
        (lambda: exp.run_sample_ratio(COUNTS, [1.0], mechanisms="IPRR", **KW), "sequence of names"),
        (lambda: exp.run_sample_ratio(COUNTS, [1.0], config=RunConfig(scale=0.5), **KW), "scale"),
        (lambda: exp.run_sample_ratio(COUNTS, [1.0], config={"repeats": 2}, **KW), "RunConfig"),
        (lambda: exp.run_sample_ratio(COUNTS, [1.0], cache={}, **KW), "SolutionCache"),
        (lambda: exp.run_sample_ratio([-1, 2], [1.0], **KW), "count"),
        (lambda: exp.run_sample_ratio(COUNTS, [1.0], eps_min=2.0, eps_max=1.0, lc=2, nr=0.25), "eps_min"),
        (lambda: exp.run_sample_ratio(COUNTS, [1.0], eps_min=0.5, eps_max=1.0, lc=20, nr=0.25), "lc"),
        (lambda: exp.run_sample_ratio(COUNTS, [1.0], mechanisms=("IDUE-opt0",), **KW), "IDUE"),
        (lambda: exp.run_nonsensitive_ratio(COUNTS, [], eps_min=0.5, eps_max=2.0), "nrs is empty"),
        (lambda: exp.run_nonsensitive_ratio(COUNTS, [1.2], eps_min=0.5, eps_max=2.0), r"\[0, 1\]"),
        (lambda: exp.run_nonsensitive_ratio(COUNTS, [0.5], eps_min=0.5, eps_max=2.0,
                                            mechanisms=("IPRR", "IDUE-opt1")), "non-sensitive"),
        (lambda: exp.run_nonsensitive_ratio(COUNTS, [0.5], eps_min=0.5, eps_max=2.0, sr=0.0), r"\(0, 1\]"),
        (lambda: exp.run_nonsensitive_ratio(COUNTS, [0.5], eps_min=0.0, eps_max=2.0), "eps_min"),
        (lambda: exp.make_oracle("GRR", np.ones(4)), "unknown mechanism"),
        (lambda: exp.make_oracle("IPRR", np.full(4, np.inf)), "no finite budget"),
        (lambda: ipldp_figures.load_dataset("retail"), "unknown IPLDP dataset"),
        (lambda: ipldp_figures.load_dataset(ipldp_figures.ZIPF, 0.0), "scale"),
    ],
)
def test_bad_input_raises_before_work(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_sample_ratio_frame_columns_and_sizes() -> None:
    frame = exp.run_sample_ratio(COUNTS, [0.5, 1.0], mechanisms=("IPRR", "KRR", "URR", "URR-emax"),
                                 config=RunConfig(repeats=3, seed=1), **KW)
    assert list(frame.columns) == ["sr", "n", "repeat", "mechanism", "estimator", "mse", "re", "mse_theory"]
    assert len(frame) == 2 * 3 * 4 * 3
    assert set(frame["n"]) == {round(0.5 * COUNTS.sum()), COUNTS.sum()}
    assert frame.loc[frame["estimator"] == "empirical", "mse_theory"].notna().all()
    assert frame.loc[frame["estimator"] != "empirical", "mse_theory"].isna().all()
    again = exp.run_sample_ratio(COUNTS, [0.5, 1.0], mechanisms=("IPRR", "KRR", "URR", "URR-emax"),
                                 config=RunConfig(repeats=3, seed=1), **KW)
    assert frame.equals(again)


def test_simulated_mse_matches_exact_expectation() -> None:
    # fixed counts (SR = 1): mse is an average of `repeats` i.i.d. draws with mean mse_theory;
    # |mean - theory| / (sd / sqrt(R)) is then close to a t variable with R - 1 degrees of freedom,
    # and 5 is beyond its 99.999% quantile; a wrong variance formula (e.g. dropping the c_i term,
    # or IPRR's r_x) shifts the mean by many standard errors at these sizes
    frame = exp.run_sample_ratio(COUNTS, [1.0], mechanisms=("IPRR", "KRR", "URR", "KRR-emax"),
                                 config=RunConfig(repeats=400, seed=7), **KW)
    emp = frame[frame["estimator"] == "empirical"].groupby("mechanism")
    mean, theory = emp["mse"].mean(), emp["mse_theory"].mean()
    se = emp["mse"].std(ddof=1) / np.sqrt(emp["mse"].count())
    z = ((mean - theory) / se).abs()
    assert (z < 5).all(), z.to_dict()


def test_nonsensitive_ratio_frame_and_assignment() -> None:
    frame = exp.run_nonsensitive_ratio(COUNTS, [0.0, 0.5], eps_min=0.5, eps_max=2.0, lc=2,
                                       config=RunConfig(repeats=2, seed=2))
    assert list(frame.columns)[:2] == ["nr", "n"] and set(frame["nr"]) == {0.0, 0.5}
    # at NR = 0 uRR has no non-sensitive item and is KRR: same exact loss
    zero = frame[(frame["nr"] == 0.0) & (frame["estimator"] == "empirical")]
    krr = GRR(COUNTS.size, 0.5).mse(COUNTS) / COUNTS.sum()
    assert np.allclose(zero.loc[zero["mechanism"] == "URR", "mse_theory"], krr)


def test_keep_or_resample_structure_and_mle() -> None:
    eps = ipldp_levels(COUNTS, 0.25, 2, 0.5, 2.0).epsilons
    sens = np.isfinite(eps)
    counts = np.array([400, 300, 0, 200, 10, 5, 120, 90, 60, 30, 20, 15, 10, 8, 5, 3])
    for oracle in (IPRR(eps), GRR(COUNTS.size, 0.5), URR(COUNTS.size, 0.5, sensitive=sens)):
        p, q = np.broadcast_to(oracle.p_support, (oracle.d,)), np.broadcast_to(oracle.q_support, (oracle.d,))
        keep, pi = float(np.mean(p - q)), q / q.sum()
        P = oracle.channel().matrix
        assert np.allclose(P, keep * np.eye(oracle.d) + (1 - keep) * pi[None, :])
        mle = oracle.mle(counts)
        assert np.allclose(mle, mle_keep_or_resample(counts, keep, pi))
        # KKT of the log-likelihood on the simplex
        q = P.T @ mle
        grad = P @ np.divide(counts, q, out=np.zeros(q.size), where=counts > 0) / counts.sum()
        assert np.allclose(grad[mle > 0], 1.0) and np.all(grad[mle == 0] <= 1 + 1e-9)
    # uRR at eps is IPRR with equal budgets on D_S
    equal = np.where(sens, 0.5, np.inf)
    assert np.allclose(IPRR(equal).channel().matrix, URR(COUNTS.size, 0.5, sensitive=sens).channel().matrix)


def test_bitwise_mle_is_the_constrained_maximiser() -> None:
    gen = np.random.default_rng(5)
    d, n = 12, 5_000
    a = np.linspace(0.5, 0.9, d)
    b = np.linspace(0.3, 0.05, d)
    p = gen.dirichlet(np.full(d, 0.5))
    support = gen.binomial(n, b + (a - b) * p)
    est = exp.bitwise_mle(support, n, a, b)
    assert est.min() >= 0 and math.isclose(est.sum(), 1.0)
    q = b + (a - b) * est
    grad = (a - b) * (support / q - (n - support) / (1 - q))
    inner = (est > 1e-12) & (est < 1 - 1e-12)
    lam = grad[inner].mean()
    assert np.allclose(grad[inner], lam, rtol=1e-6, atol=1e-6 * abs(lam))
    assert np.all(grad[est <= 1e-12] <= lam + 1e-6 * abs(lam))
    # consistency: with many users it recovers p
    big = 10**9
    est_big = exp.bitwise_mle(np.rint(big * (b + (a - b) * p)), big, a, b)
    assert np.abs(est_big - p).max() < 1e-4


def test_every_ipldp_figure_and_table_is_registered() -> None:
    registered = {e.id: e for e in list_experiments() if e.paper == "li2023ipldp"}
    assert set(registered) == set(IDS)
    for eid, (item, kind) in IDS.items():
        e = registered[eid]
        assert (e.item, e.kind) == (item, kind)
        assert e.defaults.repeats == ipldp_figures.REPEATS == 100
        assert e.defaults.seed == ipldp_figures.DEFAULT_SEEDS[eid]


def test_standin_is_named_in_frames_labels_and_titles(data_env: str) -> None:
    result = run("ipldp-fig3", TINY)
    kosarak = planned_label("kosarak")
    assert set(result.frame["dataset"]) == {"Zipf", kosarak}
    assert result.standins == ((kosarak,) if kosarak != "Kosarak" else ())
    titles = [ax.get_title() for ax in result.figure.axes]
    assert any(kosarak in t for t in titles)
    if kosarak != "Kosarak":  # a stand-in is never shown as "Kosarak" alone
        assert not any(re.search(r"Kosarak(?! \((prefix )?stand-in\))", t) for t in titles)
    table = run("ipldp-table1", TINY).frame
    assert table.loc["Kosarak", "dataset"] == kosarak
    assert table.loc["Zipf", "users"] == round(0.02 * 100_000)
    if kosarak != "Kosarak":  # a stand-in has Table 1's size whichever data it was rebuilt from
        assert table.loc["Kosarak", "users"] == round(0.02 * ipldp_figures.KOSARAK_USERS)
    if data_env == "none":
        assert kosarak == "Kosarak (stand-in)"


def test_table2_is_the_papers() -> None:
    table = run("ipldp-table2").frame
    assert table["eps_min"].tolist() == [0.1, 1.0, 0.1, 0.1, 0.1]
    assert table["eps_max"].tolist() == [1.0, 10.0, 10.0, 10.0, 10.0]
    assert table["NR (Zipf)"].tolist() == ["0.5", "0.5", "0.5", "0.0-0.8", "0.0"]
    assert table["NR (Kosarak)"].tolist()[3] == "0.1-0.9"


@pytest.mark.parametrize("eid", sorted(IDS))
def test_every_ipldp_experiment_reproduces_through_the_cli(eid: str, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    stdout, rows = reproduce_with_cli(eid, IDS[eid][1], tmp_path / "out", capsys)
    kosarak = planned_label("kosarak")
    if eid != "ipldp-table2":
        assert (f"stand-in: {kosarak}" in stdout) == (kosarak != "Kosarak")
        assert any(kosarak == cell for row in rows[1:] for cell in row)
        if kosarak != "Kosarak":
            assert not any(cell == "Kosarak" and row[0] != "Kosarak" for row in rows[1:] for cell in row[:2])


def test_chapter_runs_and_shows_every_registered_ipldp_experiment() -> None:
    text = CHAPTER.read_text()
    captions = check_experiments_chapter(text, "ipldp-experiments", IDS, "li2023ipldp",
                                         {"fig-ipldp-2", "fig-ipldp-3", "fig-ipldp-4"})
    for label in ("sec-ipldp-levels", "sec-ipldp-equal-privacy"):
        assert f"({label})=" in text
    for key, caption in captions.items():
        for fact in ("data", "repeats", "seed"):
            assert re.search(rf"{{glue:text}}`fig\d_{fact}`", caption), (key, fact)
        assert f"{{numref}}`{key}`" in text, key


def test_fig4_draws_the_coinciding_idue_models_once() -> None:
    """The three IDUE models' exact MSEs nearly coincide: Fig. 4 draws one IDUE curve, said to be their mean."""
    result = run("ipldp-fig4", RunConfig(repeats=1, seed=3, scale=0.01))
    assert ipldp_figures.idue_spread(result.frame) < ipldp_figures.IDUE_COINCIDE
    counts = {ax.get_title(): panel_series(ax) for ax in result.figure.axes if ax.get_visible()}
    assert counts and max(counts.values()) <= 6, counts
    labels = [text.get_text() for legend in result.figure.legends for text in legend.get_texts()]
    assert sum("IDUE" in label for label in labels) == 1 and any("coincide" in label for label in labels), labels
