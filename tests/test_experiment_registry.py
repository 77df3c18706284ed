"""The figure registry (ldpkit.experiments.registry), RunConfig, the seeded subsample, and the
ID-LDP figures registered from ldpkit.experiments.idldp_figures."""

from __future__ import annotations

import doctest
import io
import math
import re
import sys
import time
from typing import Any

import numpy as np
import pandas as pd
import pytest

from conftest import REPO, planned_label, planned_origin, run_process
from ldpkit import datasets
from ldpkit.datasets import ItemSetData, synthetic
from ldpkit.experiments import (
    Experiment,
    ExperimentData,
    RunConfig,
    get,
    idldp,
    idldp_figures,
    ids,
    list_experiments,
    register,
    registry,
    run,
    style,
    subsample,
)
from ldpkit.sets import ItemSets

CHAPTER = REPO / "book" / "idldp_experiments.md"
IDLDP_ITEMS = {
    "idldp-table2": ("Table II", "table"),
    **{f"idldp-fig{i}": (f"Fig. {i}", "figure") for i in range(2, 9)},
}
SMALL = RunConfig(repeats=2, seed=1, scale=0.05, progress=False)


# --------------------------------------------------------------------------- RunConfig


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"repeats": 0}, "repeats"),
        ({"repeats": -3}, "repeats"),
        ({"repeats": 2.5}, "repeats"),
        ({"repeats": True}, "repeats"),
        ({"repeats": "3"}, "repeats"),
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"seed": True}, "seed"),
        ({"seed": "7"}, "seed"),
        ({"scale": 0.0}, "scale"),
        ({"scale": -0.5}, "scale"),
        ({"scale": 1.01}, "scale"),
        ({"scale": math.nan}, "scale"),
        ({"scale": math.inf}, "scale"),
        ({"scale": True}, "scale"),
        ({"scale": "0.5"}, "scale"),
        ({"progress": "yes"}, "progress"),
        ({"progress": 1}, "progress"),
    ],
)
def test_runconfig_rejects_bad_values_naming_argument_and_value(kwargs: dict, name: str) -> None:
    value = next(iter(kwargs.values()))
    with pytest.raises(ValueError, match=rf"^{name} .*{re.escape(repr(value))}"):
        RunConfig(**kwargs)
    # replace() validates the same way
    with pytest.raises(ValueError, match=rf"^{name} "):
        RunConfig().replace(**kwargs)


def test_runconfig_values_generator_and_replace() -> None:
    config = RunConfig(repeats=np.int64(3), seed=np.uint32(5), scale=np.float32(0.5), progress=False)
    assert (config.repeats, config.seed, config.scale) == (3, 5, 0.5)
    assert type(config.repeats) is int and type(config.seed) is int and type(config.scale) is float
    assert RunConfig() == RunConfig(repeats=10, seed=None, scale=1.0, progress=None)
    # a fresh generator per call, seeded like default_rng(seed)
    a, b = config.generator(), config.generator()
    assert a is not b and a.integers(1 << 30) == b.integers(1 << 30)
    assert config.generator().random() == np.random.default_rng(5).random()
    # unseeded: fresh entropy each time
    assert RunConfig().generator().random() != RunConfig().generator().random()
    changed = config.replace(seed=6, repeats=4)
    assert (changed.seed, changed.repeats, changed.scale, config.seed) == (6, 4, 0.5, 5)
    assert config.offset_seed(3).seed == 8 and RunConfig().offset_seed(3).seed is None
    assert config.show_progress() is False and config.replace(progress=True).show_progress() is True
    with pytest.raises(AttributeError):
        config.seed = 3  # type: ignore[misc]  # frozen


# --------------------------------------------------------------------------- subsample


def test_subsample_single_items_keeps_order_domain_and_label() -> None:
    data = synthetic.uniform_items(n=2_000, m=50, rng=3)
    standin = type(data)(data.items, data.vocabulary, "Toy", "test", is_standin=True)
    assert subsample(data, 1.0, rng=0) is data
    small = subsample(standin, 0.1, rng=4)
    assert small.n == 200 and small.m == 50 and small.label == "Toy (stand-in)"
    # users kept in their original order: the kept items are a subsequence of the original
    it = iter(standin.items.tolist())
    assert all(any(x == y for y in it) for x in small.items.tolist())
    assert np.array_equal(subsample(standin, 0.1, rng=4).items, small.items)
    assert not np.array_equal(subsample(standin, 0.1, rng=5).items, small.items)
    assert "subsample" in small.notes[-1]
    assert subsample(data, 1e-9, rng=0).n == 1  # at least one user
    with pytest.raises(ValueError, match="scale"):
        subsample(data, 0.0, rng=0)
    with pytest.raises(ValueError, match="SingleItemData or ItemSetData"):
        subsample(data.items, 0.5, rng=0)


def test_subsample_itemsets_keeps_each_users_set() -> None:
    rows = [[0, 3], [], [1], [2, 4, 5], [5], [0, 1, 2, 3], [4]] * 30
    sets = ItemSets(np.array([i for r in rows for i in r], dtype=np.int64),
                    np.cumsum([0, *map(len, rows)]).astype(np.int64), 6)
    data = ItemSetData(sets, np.arange(6), "Toy", "test")
    small = subsample(data, 0.3, rng=1)
    assert small.n == round(0.3 * len(rows)) and small.m == 6
    originals = [tuple(r) for r in rows]
    kept = [tuple(r) for r in small.sets.to_lists()]
    # every kept user is an original user, in order (check by greedy matching)
    pos = 0
    for user in kept:
        while originals[pos] != user:
            pos += 1
        pos += 1
    assert small.n_records == sum(len(u) for u in kept)


# --------------------------------------------------------------------------- registry API


def test_every_idldp_figure_and_table_is_registered() -> None:
    registered = {e.id: e for e in list_experiments()}
    assert set(IDLDP_ITEMS) <= set(registered)
    assert list(ids()) == [e.id for e in list_experiments()]
    for exp_id, (item, kind) in IDLDP_ITEMS.items():
        e = registered[exp_id]
        assert (e.paper, e.item, e.kind) == ("gu2020idldp", item, kind)
        assert (e.draw is None) == (kind == "table")
        assert e.defaults.repeats == 10 and e.defaults.scale == 1.0
        for name in e.datasets:
            if name.startswith("synthetic."):
                assert callable(getattr(synthetic, name.split(".", 1)[1]))
            else:
                assert name in datasets.DATASETS


def test_default_seeds_are_the_chapters() -> None:
    seed = 20200420  # the chapter's SEED before the registry
    offsets = {"idldp-fig2": 2, "idldp-fig3": 4, "idldp-fig4": 10, "idldp-fig5": 20, "idldp-fig6": 30,
               "idldp-fig7": 40, "idldp-fig8": 50}
    for exp_id, offset in offsets.items():
        assert get(exp_id).defaults.seed == seed + offset
    assert idldp_figures.DATA_SEED == seed


def test_chapter_runs_every_registered_idldp_experiment() -> None:
    text = CHAPTER.read_text()
    called = set(re.findall(r'experiments\.run\("([^"]+)"', text))
    assert called == set(IDLDP_ITEMS)
    assert {e.id for e in list_experiments() if e.paper == "gu2020idldp"} == called
    for e in list_experiments():
        if e.paper == "gu2020idldp":
            assert f"({e.section})=" in text, e.section
    # the chapter shows the source of every compute and draw function it relies on
    for e in list_experiments():
        if e.paper == "gu2020idldp":
            assert f":pyobject: {e.compute.__name__}\n" in text, e.compute.__name__
            if e.draw is not None and e.id not in ("idldp-fig7", "idldp-fig8"):
                assert f":pyobject: {e.draw.__name__}\n" in text, e.draw.__name__
    # Figs. 7 and 8 are drawn side by side in the chapter
    assert ":pyobject: draw_padding_length\n" in text and ":pyobject: draw_padding_lengths\n" in text


def _glue_figures(text: str) -> dict[str, str]:
    """The ``glue:figure`` directives of a MyST chapter: glue key -> directive body."""
    return dict(re.findall(r"```\{glue:figure\} (\S+)\n(.*?)\n```", text, re.S))


def test_chapter_figures_are_numbered_captioned_and_downloadable() -> None:
    text = CHAPTER.read_text()
    figures = _glue_figures(text)
    for e in list_experiments():
        if e.paper != "gu2020idldp" or e.kind != "figure":
            continue
        bodies = [body for body in figures.values() if f"`ldpkit reproduce {e.id}`" in body]
        assert len(bodies) == 1, e.id
        body = bodies[0]
        assert re.search(r"^:name: fig-idldp-\S+$", body, re.M), e.id
        alt = re.search(r"^:alt: (.+)$", body, re.M)
        assert alt and len(alt.group(1).split()) >= 12, e.id
        caption = body.split("\n\n", 1)[1]
        assert "{cite}`gu2020idldp`" in caption and "Reproduces" in caption, e.id
        for fact in ("data", "repeats", "seed"):
            assert re.search(rf"{{glue:text}}`fig\d_{fact}`", caption), (e.id, fact)
        # every figure is referred to by its label in the prose
        label = re.search(r"^:name: (\S+)$", body, re.M).group(1)
        assert f"{{numref}}`{label}`" in text, label
    # each figure's data is offered as CSV, and every glued figure is pasted
    assert len(re.findall(r"display\(HTML\(downloads_html\(fig\d\)\)\)|show_result\(fig\d, ", text)) >= 7
    glued = set(re.findall(r'(?:glue\(\s*|show_result\(\w+, "\w+", )"(fig-idldp-[^"]+)"', text))
    assert glued == set(figures)


def test_chapter_imports_are_in_its_first_visible_cell() -> None:
    cells = re.findall(r"```\{code-cell\} ipython3\n(.*?)\n```", CHAPTER.read_text(), re.S)
    first = cells[0]
    assert not first.startswith(":tags:"), "the first code cell must be shown"
    assert "from ldpkit import experiments" in first and "from myst_nb import glue" in first
    for cell in cells[1:]:
        assert not re.search(r"^(import|from) \S+", cell, re.M), cell[:80]


@pytest.mark.parametrize(
    "typo, expected",
    [("idldp-fig9", "idldp-fig8"), ("idldp-fgi2", "idldp-fig2"), ("idldp_table2", "idldp-table2"),
     ("IDLDP-FIG3", "idldp-fig3")],
)
def test_unknown_id_lists_close_matches(typo: str, expected: str) -> None:
    with pytest.raises(ValueError, match=rf"unknown experiment id '{typo}' \(close matches: [^)]*{expected}"):
        get(typo)
    with pytest.raises(ValueError, match="close matches"):
        run(typo)


def test_unknown_id_without_close_match() -> None:
    with pytest.raises(ValueError, match="no close match"):
        get("zzzzzz")


def _toy_compute(config: RunConfig, *, offset: int = 0) -> ExperimentData:
    frame = pd.DataFrame({"repeats": [config.repeats], "seed": [config.seed], "offset": [offset]})
    return ExperimentData(frame, labels={"toy": "Toy (stand-in)"}, standins=("toy",))


def _toy_draw(data: ExperimentData):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 2))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1])
    ax.set(xlabel="x (units)", ylabel="y (units)", title=data.labels["toy"])
    return fig


def test_register_run_and_save(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    toy = register(Experiment("toy-fig1", "A toy", "nobody2024", "Fig. 1", "figure", ("toy",), _toy_compute,
                              _toy_draw, RunConfig(repeats=3, seed=9)))
    assert get("toy-fig1") is toy and ids()[-1] == "toy-fig1"
    with pytest.raises(ValueError, match="already registered"):
        register(toy)
    register(toy, replace=True)
    result = run("toy-fig1", offset=2)
    assert result.config == RunConfig(repeats=3, seed=9)
    assert result.frame.to_dict("records") == [{"repeats": 3, "seed": 9, "offset": 2}]
    assert result.any_standin and result.standins == ("Toy (stand-in)",)
    assert result.figure is not None and result.figure.axes[0].get_title() == "Toy (stand-in)"
    assert run(toy, RunConfig(repeats=1), draw=False).figure is None
    written = result.save(tmp_path / "out")
    assert [p.name for p in written] == ["toy-fig1.png", "toy-fig1.pdf", "toy-fig1.csv", "toy-fig1.json"]
    assert written[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and written[1].read_bytes()[:5] == b"%PDF-"
    assert pd.read_csv(written[2]).columns.tolist() == ["repeats", "seed", "offset"]
    with pytest.raises(ValueError, match="RunConfig"):
        run(toy, {"repeats": 2})  # type: ignore[arg-type]


def test_result_seconds() -> None:
    def slow_compute(config: RunConfig) -> ExperimentData:
        time.sleep(0.02)
        return _toy_compute(config)

    toy = Experiment("toy-fig1", "A toy", "nobody2024", "Fig. 1", "figure", ("toy",), slow_compute, _toy_draw,
                     RunConfig(repeats=3, seed=9))
    start = time.perf_counter()
    result = run(toy, draw=False)
    outside = time.perf_counter() - start
    # the time of compute and draw, measured by run; None for a result built by hand
    assert isinstance(result.seconds, float) and 0.02 <= result.seconds <= outside
    assert registry.ExperimentResult(toy, result.config, result.data).seconds is None


@pytest.mark.parametrize(
    "changes, match",
    [
        ({"id": "Bad Id"}, "id must be"),
        ({"kind": "plot"}, "kind"),
        ({"draw": None}, "draw function"),
        ({"kind": "table"}, "no draw function"),
        ({"datasets": "retail"}, "datasets"),
        ({"paper": ""}, "paper"),
        ({"compute": 3}, "compute"),
        ({"defaults": {"repeats": 2}}, "defaults"),
    ],
)
def test_experiment_validation(changes: dict, match: str) -> None:
    fields = {"id": "toy-fig1", "title": "A toy", "paper": "nobody2024", "item": "Fig. 1", "kind": "figure",
              "datasets": ("toy",), "compute": _toy_compute, "draw": _toy_draw, "defaults": RunConfig()}
    with pytest.raises(ValueError, match=match):
        Experiment(**{**fields, **changes})


def test_register_rejects_non_experiments() -> None:
    with pytest.raises(ValueError, match="Experiment"):
        register("idldp-fig2")  # type: ignore[arg-type]


def test_experimentdata_standins_must_be_datasets() -> None:
    with pytest.raises(ValueError, match="standins"):
        ExperimentData(pd.DataFrame(), labels={"a": "A"}, standins=("b",))


# --------------------------------------------------------------------------- ID-LDP runs


def test_fig2_small_run_frames_labels_and_figure() -> None:
    cache = idldp.SolutionCache()
    config = SMALL.replace(scale=0.1)
    result = run("idldp-fig2", config, cache=cache)
    assert result.config is config and not result.any_standin
    assert list(result.parts) == ["Power-law", "Uniform"]
    assert result.frame.columns.tolist() == ["dataset", "eps", "repeat", "mechanism", "mse_theory", "mse", "re@20",
                                             "precision@20"]
    assert len(result.frame) == 2 * len(idldp_figures.EPS_GRID) * 2 * len(idldp.SINGLE_ITEM_MECHANISMS)
    assert result.meta["n"] == {"Power-law": 10_000, "Uniform": 10_000}
    # the i-th dataset runs with seed + i on the subsample
    uniform = idldp_figures.load_dataset("synthetic.uniform_items", 0.1)
    direct = idldp.run_single_item(uniform.counts(), idldp_figures.EPS_GRID, ks=(20,),
                                   config=RunConfig(repeats=2, seed=2), cache=cache)
    pd.testing.assert_frame_equal(result.parts["Uniform"], direct)
    # the same configuration gives the same frame; --seed changes the runs but not the data
    pd.testing.assert_frame_equal(run("idldp-fig2", config, cache=cache, draw=False).frame, result.frame)
    other = run("idldp-fig2", config.replace(seed=2), cache=cache, draw=False)
    assert other.meta == result.meta and not other.frame["mse"].equals(result.frame["mse"])
    fig = result.figure
    assert fig is not None and len(fig.axes) == 2
    for ax, label in zip(fig.axes, result.parts):
        assert label in ax.get_title() and "10,000" in ax.get_title()
        assert ax.get_xlabel() and "counts" in ax.get_ylabel()


@pytest.fixture(scope="module")
def small_runs() -> dict[int, Any]:
    """``idldp-fig2`` to ``idldp-fig8`` at :data:`SMALL` with this machine's data, run once for the module.

    Module-scoped, so made before a test's ``data_env`` changes the environment: these are the
    runs of the data found here.
    """
    cache = idldp.SolutionCache()
    return {i: run(f"idldp-fig{i}", SMALL, cache=cache) for i in range(2, 9)}


def test_standins_are_reported_and_named_in_titles(data_env: str, small_runs) -> None:
    # with the data found here the module's shared run is this run; with none, a run of its own
    result = small_runs[3] if data_env == "here" else run("idldp-fig3", SMALL)
    labels = list(result.labels.values())
    assert labels == list(result.parts)
    assert labels == [planned_label("retail"), planned_label("kosarak")]
    assert set(result.standins) == {label for label in labels if label.endswith("stand-in)")}
    assert result.any_standin == bool(result.standins)
    assert {k: i.origin for k, i in result.data.inputs.items()} == {k: planned_origin(k) for k in ("retail", "kosarak")}
    if data_env == "none":
        assert labels == ["Retail (stand-in)", "Kosarak (stand-in)"]
    titles = [ax.get_title() for ax in result.figure.axes]
    for label in labels:
        assert sum(label in t for t in titles) == 2
    assert all(ax.get_xlabel() and ax.get_ylabel() for ax in result.figure.axes)


def test_table2_small_run(data_env: str) -> None:
    result = run("idldp-table2", SMALL)
    table = result.frame
    assert result.figure is None
    assert table.index.tolist() == ["Power-law", "Uniform", "Retail", "Kosarak", "Clothing"]
    assert table.loc["Power-law", ("this build", "n")] == 5_000
    assert table.loc["Power-law", ("paper", "n")] == 100_000
    for row in result.meta["standin_rows"]:
        assert table.loc[row, ("this build", "data")].endswith("stand-in)")
    for row, key in (("Retail", "retail"), ("Kosarak", "kosarak"), ("Clothing", "clothing")):
        assert table.loc[row, ("this build", "data")] == planned_label(key)
        assert (row in result.meta["standin_rows"]) == (planned_origin(key) in ("prefix", "stand-in"))


def test_padding_figures_small_run_and_side_by_side() -> None:
    cache = idldp.SolutionCache()
    fig7 = run("idldp-fig7", SMALL, cache=cache)
    ((label, frame),) = fig7.parts.items()
    assert set(frame["ell"]) == set(idldp_figures.ELLS_FIG7) and set(frame["mechanism"]) == {"IDUE-PS"}
    assert label in fig7.figure.axes[0].get_title() and "k = 20" in fig7.figure.axes[0].get_title()
    both = idldp_figures.draw_padding_lengths(fig7.data, fig7.data)
    assert len(both.axes) == 2
    with pytest.raises(ValueError, match="at least one"):
        idldp_figures.draw_padding_lengths()


# --------------------------------------------------------------------------- readable figures
#: widest a figure is shown in the book, in CSS pixels: the figure box of the 740 px content
#: column at a 1280 px window (measured in Chromium)
COLUMN_PX = 660


def _shown_pt(fig, size_pt: float) -> float:
    """Size in CSS points of a font of ``size_pt`` once the figure is shown in the column.

    The PNG has ``width * dpi`` pixels and is shown at that size, or scaled down to fit.
    """
    width_in = fig.get_figwidth()
    px_per_in = min(fig.dpi, COLUMN_PX / width_in)
    return size_pt * px_per_in / 96


def _texts(fig):
    """Every visible, non-empty text of a drawn figure, with a short description."""
    out = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        ticks = [*ax.get_xticklabels(), *ax.get_yticklabels(),
                 *ax.get_xticklabels(minor=True), *ax.get_yticklabels(minor=True)]
        out += [("tick", t) for t in ticks]
        out += [("title", ax.title), ("xlabel", ax.xaxis.label), ("ylabel", ax.yaxis.label)]
        if ax.get_legend() is not None:
            out += [("legend", t) for t in ax.get_legend().get_texts()]
    for legend in fig.legends:
        out += [("legend", t) for t in legend.get_texts()]
    return [(kind, t) for kind, t in out if t.get_visible() and t.get_text().strip()]


@pytest.fixture(scope="module")
def small_figures(small_runs):
    results = small_runs
    figures = {f"fig{i}": r.figure for i, r in results.items()}
    figures["fig7+8"] = idldp_figures.draw_padding_lengths(results[7].data, results[8].data)
    for fig in figures.values():
        fig.savefig(io.BytesIO(), format="png")  # lays out and draws every text
    return figures


def test_figures_fit_the_column_with_two_panels_per_row(small_figures) -> None:
    for name, fig in small_figures.items():
        assert fig.get_figwidth() <= style.FIG_WIDTH + 1e-9, name
        for ax in fig.axes:
            spec = ax.get_subplotspec()
            assert spec is not None and spec.get_gridspec().ncols <= 2, name


def test_figure_texts_are_readable_at_the_column_width(small_figures) -> None:
    for name, fig in small_figures.items():
        kinds = {kind for kind, _ in _texts(fig)}
        assert {"tick", "legend", "xlabel", "ylabel"} <= kinds, (name, kinds)
        small = [(kind, t.get_text(), round(_shown_pt(fig, t.get_fontsize()), 2))
                 for kind, t in _texts(fig) if _shown_pt(fig, t.get_fontsize()) < 9.0]
        assert not small, (name, small[:5])


def test_panels_have_distinct_titles_and_axis_units(small_figures) -> None:
    for name, fig in small_figures.items():
        titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
        assert all(titles) and len(set(titles)) == len(titles), (name, titles)
        for ax in fig.axes:
            for label in (ax.get_xlabel(), ax.get_ylabel()):
                assert re.search(r"\(.+\)", label), (name, label)


@pytest.mark.parametrize("name, panel", [("fig2", 0), ("fig2", 1), ("fig5", 0)])
def test_theory_lines_are_drawn_over_the_simulation(small_figures, name: str, panel: int) -> None:
    ax = small_figures[name].axes[panel]
    lines = [ln for ln in ax.get_lines() if len(ln.get_xdata())]
    theory = [ln for ln in lines if ln.get_linestyle() == "-" and ln.get_marker() in ("None", "", None)]
    simulated = [ln for ln in lines if ln.get_linestyle() == "None" and ln.get_marker() not in ("None", "", None)]
    assert theory and len(theory) == len(simulated)
    assert min(ln.get_zorder() for ln in theory) > max(ln.get_zorder() for ln in simulated)
    # open markers (each mechanism's own), so the line stays visible through them
    assert all(ln.get_markerfacecolor() == "none" for ln in simulated)


def test_meta_records_users_and_items_per_dataset(small_runs) -> None:
    result = small_runs[3]
    assert set(result.meta["n"]) == set(result.parts) == set(result.meta["items"])
    for label, frame in result.parts.items():
        assert result.meta["items"][label] > 0 and result.meta["n"][label] > 0
    facts = result.caption_facts()
    for label in result.parts:
        assert f"{label} (n = {result.meta['n'][label]:,})" in facts["data"]
    assert facts["command"] == "ldpkit reproduce idldp-fig3 --seed 1 --repeats 2 --scale 0.05"
    assert (facts["repeats"], facts["seed"], facts["scale"]) == ("2", "1", "0.05")
    default = registry.ExperimentResult(get("idldp-fig3"), get("idldp-fig3").defaults, result.data)
    assert default.command == "ldpkit reproduce idldp-fig3"


def test_theory_gap_is_zero_when_simulation_equals_theory() -> None:
    frame = pd.DataFrame({"mechanism": ["A"] * 4, "eps": [1.0] * 4, "mse": [1.0, 2.0, 3.0, 4.0],
                          "mse_theory": [2.5] * 4})
    assert idldp_figures.theory_gap(frame, "eps") == 0.0
    frame["mse_theory"] = 2.5 + np.std([1, 2, 3, 4], ddof=1) / 2  # one standard error above
    assert idldp_figures.theory_gap(frame, ["eps"]) == pytest.approx(1.0)


def test_load_dataset_rejects_unknown_names() -> None:
    with pytest.raises(ValueError, match="unknown ID-LDP dataset"):
        idldp_figures.load_dataset("gowalla-10core")


def test_importing_ldpkit_and_experiments_does_not_import_matplotlib() -> None:
    code = ("import sys, ldpkit, ldpkit.experiments, ldpkit.cli; "
            "print('matplotlib' in sys.modules, 'pandas' in sys.modules)")
    out = run_process([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


@pytest.mark.parametrize("module", ["ldpkit.experiments", "ldpkit.experiments.config", "ldpkit.experiments.registry",
                                    "ldpkit.experiments.idldp", "ldpkit.experiments.idldp_figures", "ldpkit.cli"])
def test_docstring_examples_run(module: str) -> None:
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
