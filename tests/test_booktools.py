"""The book's chapter helpers (``booktools.chapters``) and the one look of the figures.

* The caption facts a chapter glues, the links under every figure (its data as CSV, its
  provenance record as JSON) and the experiment map come from ``booktools``; the register's glue
  check reads the ``glue_facts`` calls of the chapters.
* Every figure module draws with :mod:`ldpkit.experiments.style`: no module sets matplotlib's
  rc parameters, creates a figure with its own width or defines colours of its own.
"""

from __future__ import annotations

import ast
import json
import re

import numpy as np
import pandas as pd
import pytest
import yaml

from booktools import chapter_glue_keys, csv_link_html, downloads_html, experiment_map, glue_facts
from conftest import REPO
from ldpkit import experiments
from ldpkit.experiments import Experiment, ExperimentData, RunConfig, run, style

FIGURE_MODULES = ("idldp_figures", "ipldp_figures", "fldp_figures", "lip_figures")


def _toy() -> Experiment:
    def compute(config: RunConfig) -> ExperimentData:
        frame = pd.DataFrame({"repeats": [config.repeats], "seed": [config.seed]})
        return ExperimentData(frame, labels={"toy": "Toy (stand-in)"}, standins=("toy",))

    return Experiment("toy-fig1", "A toy", "nobody2024", "Fig. 1", "table", ("toy",), compute, None,
                      RunConfig(repeats=3, seed=9))


def test_glue_facts_are_the_caption_facts_under_the_key() -> None:
    result = run(_toy())
    facts = glue_facts(result, "fig1")
    assert facts == {f"fig1_{name}": value for name, value in result.caption_facts().items()}
    assert facts["fig1_data"] == "Toy (stand-in)" and facts["fig1_command"] == "ldpkit reproduce toy-fig1"
    for bad in ("", "fig 1", "fig-1", 3):
        with pytest.raises(ValueError, match="key must be"):
            glue_facts(result, bad)  # type: ignore[arg-type]


def test_download_links_carry_the_data_and_the_provenance() -> None:
    """The links under a figure point to files the build copies into the site, not to embedded data."""
    from booktools.chapters import DOWNLOAD_DIR, DOWNLOAD_HREF

    result = run(_toy())
    link = csv_link_html(result)
    assert link.startswith(f'<a download="toy-fig1.csv" href="{DOWNLOAD_HREF}toy-fig1.csv">') and "base64" not in link
    csv_file, json_file = DOWNLOAD_DIR / "toy-fig1.csv", DOWNLOAD_DIR / "toy-fig1.json"
    try:
        assert pd.read_csv(csv_file).to_dict("records") == result.frame.to_dict("records")
        # under every figure of the book: the CSV link and the provenance record of the run
        both = downloads_html(result)
        assert both.startswith(link) and f'<a download="toy-fig1.json" href="{DOWNLOAD_HREF}toy-fig1.json">' in both
        record = json.loads(json_file.read_text())
        assert record["id"] == "toy-fig1" and record["labels"] == {"toy": "Toy (stand-in)"}
        assert record["config"]["seed"] == result.config.seed and record["standins"] == ["Toy (stand-in)"]
    finally:
        csv_file.unlink(missing_ok=True)
        json_file.unlink(missing_ok=True)
    # the build copies the folder's parent to the site's root, where the links point
    config = yaml.safe_load((REPO / "_config.yml").read_text())
    assert config["sphinx"]["config"]["html_extra_path"] == [str(DOWNLOAD_DIR.parent.relative_to(REPO))]
    assert DOWNLOAD_HREF == "../" + DOWNLOAD_DIR.name + "/"


def test_the_register_reads_the_chapters_glue_facts_calls(tmp_path) -> None:
    chapter = tmp_path / "ch.md"
    chapter.write_text('```{code-cell} ipython3\nfor name, value in glue_facts(fig3, "fig3").items():\n'
                       '    glue(name, value, display=False)\n```\n', encoding="utf-8")
    keys, templates = chapter_glue_keys(chapter)
    assert [t.pattern for t in templates] == ["fig3_.+"] and any(t.fullmatch("fig3_data") for t in templates)


def test_every_experiments_chapter_uses_the_helpers() -> None:
    for paper in ("idldp", "ipldp", "fldp", "lip"):
        text = (REPO / "book" / f"{paper}_experiments.md").read_text(encoding="utf-8")
        assert f'glue("{paper}_experiment_map", Markdown(experiment_map(figs.PAPER, BOOK_FIGURES))' in text, paper
        assert "experiments.list_experiments()" not in text, paper  # no copy of the map's loop
        assert ".glue_facts(" not in text and ".downloads_html(" not in text, paper


def test_experiment_map_links_figures_and_sections() -> None:
    text = experiment_map("li2023ipldp", {"ipldp-fig2": "fig-ipldp-2"})
    rows = text.splitlines()
    assert rows[:2] == ["| The paper's | Registry id | In this book |", "| --- | --- | --- |"]
    ids = [e.id for e in experiments.list_experiments() if e.paper == "li2023ipldp"]
    assert [re.search(r"`([^`]+)`", row).group(1) for row in rows[2:]] == ids
    assert "| Fig. 2 | `ipldp-fig2` | {numref}`fig-ipldp-2` |" in rows
    assert f"| Table 1 | `ipldp-table1` | {{ref}}`{experiments.get('ipldp-table1').section}` |" in rows
    with pytest.raises(ValueError, match="no registered experiment"):
        experiment_map("nobody2024", {})


# --------------------------------------------------------------------------- the one look
def _source(name: str) -> str:
    return (REPO / "ldpkit" / "experiments" / f"{name}.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", FIGURE_MODULES)
def test_figure_modules_take_their_look_from_the_style_module(name: str) -> None:
    source = _source(name)
    tree = ast.parse(source)
    # no rc parameters, figure sizes or savefig defaults of their own
    assert "rc_context" not in source and "rcParams" not in source and "figsize" not in source, name
    assert "savefig" not in source, name
    # no other figure module as a style base
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                for alias in node.names} | {node.module or "" for node in ast.walk(tree)
                                            if isinstance(node, ast.ImportFrom)}
    assert not {m for m in FIGURE_MODULES if m != name} & imported, name
    assert "style" in imported, name
    # colours come from style.COLORS (a budget's colour in a per-budget panel is the cycle's)
    literal_colours = re.findall(r"""["']C\d["']""", source)
    assert not literal_colours, (name, literal_colours)
    # every draw function that makes a figure runs inside the style's rc parameters (one that
    # draws into a given ``ax`` runs inside its caller's)
    for node in tree.body:
        if (isinstance(node, ast.FunctionDef) and node.name.startswith("draw_")
                and "ax" not in [a.arg for a in node.args.args]):
            decorated = any(ast.unparse(d) == "style.styled" for d in node.decorator_list)
            delegates = any(isinstance(n, ast.Call) and ast.unparse(n.func) in ("draw_padding_lengths",
                                                                               "_draw_panels", "draw_metric")
                            for n in ast.walk(node))
            assert decorated or delegates, (name, node.name)


def test_style_covers_every_family_and_keeps_the_book_sizes() -> None:
    assert set(style.COLORS) == {"idldp", "ipldp", "fldp", "lip"}
    assert style.RC["font.size"] == style.MIN_FONT_PT and style.FIG_WIDTH == 7.5
    assert dict(style.SAVEFIG) == {"bbox_inches": "tight"}


# ----------------------------------------------------------------------------- tables
def test_table_cells_read_as_numbers_not_as_pandas() -> None:
    from booktools.tables import MISSING, format_value, table_markdown

    assert format_value(np.int64(25000)) == "25,000" and format_value(np.float64(3.0)) == "3"
    assert format_value(float("nan")) == MISSING and format_value(pd.NA) == MISSING and format_value(None) == MISSING
    assert format_value(np.inf) == "$\\infty$" and format_value(2.5e-9) == "$2.5 \\times 10^{-9}$"
    assert format_value(np.bool_(True)) == "yes" and format_value(0.123456, ".2f") == "0.12"
    frame = pd.DataFrame({"eps": [0.5, np.inf], "count": [1234, 5]}, index=pd.Index(["a", "b"], name="item"))
    text = table_markdown(frame, headers={"eps": "$\\varepsilon$"}, caption="A caption", label="tab-x", index=True)
    assert ":name: tab-x" in text and "* - item" in text and "  - $\\varepsilon$" in text and "1,234" in text
    assert "nan" not in text.lower() and "inf\n" not in text
    # a caption may hold inline code and roles: the parsed table keeps its caption, label and rows
    # (a backtick fence dropped the whole table to text when its caption held a backtick)
    from docutils.core import publish_doctree
    from myst_parser.parsers.docutils_ import Parser

    text = table_markdown(frame, caption="See `code` and {sub}`a role`", label="tab-y")
    tree = publish_doctree(text, parser=Parser(), settings_overrides={"report_level": 5})
    tables = [node for node in tree.findall() if node.tagname == "table"]
    assert len(tables) == 1 and "tab-y" in tables[0]["ids"]
    assert tables[0].children[0].astext() == "See code and a role"
    assert [row.astext().split("\n\n") for row in tables[0].findall() if row.tagname == "row"][1] == ["0.5", "1,234"]
    # bad input is refused before any work, naming what is wrong
    with pytest.raises(ValueError, match="needs a caption"):
        table_markdown(frame, label="tab-x")
    with pytest.raises(ValueError, match="lower-case"):
        table_markdown(frame, caption="c", label="Tab X")
    with pytest.raises(ValueError, match=r"\['mse'\]"):
        table_markdown(frame, headers={"mse": "MSE"})
