"""Helpers the chapters call: the experiment map, the caption facts to glue, the download links.

* :func:`experiment_map`: the table at the top of each experiments chapter that pairs every
  registered figure and table of a paper with its registry id and the place the book shows it;
* :func:`glue_facts`: an experiment result's caption facts under the names a chapter glues
  them by, ``<key>_<fact>``; the register's glue check (:mod:`booktools.sources`) reads these
  calls;
* :func:`show_result`: what every experiment cell does with its result: glue the figure under its
  label and the caption facts by :func:`glue_facts`, and show the download links;
* :func:`downloads_html`, :func:`csv_link_html`, :func:`csv_download_html`,
  :func:`json_download_html`: the links under every figure that download its data as CSV and
  its provenance record as JSON.  Each link embeds the file (a ``data:`` URI), so the built HTML
  is self-contained and needs no file copied next to it.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ldpkit.experiments import ExperimentResult

__all__ = [
    "experiment_map",
    "glue_facts",
    "show_result",
    "csv_download_html",
    "json_download_html",
    "csv_link_html",
    "downloads_html",
]

_KEY = re.compile(r"^\w+$", re.ASCII)
_CSV_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\.csv$")
_JSON_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\.json$")


def experiment_map(paper: str, figures: Mapping[str, str]) -> str:
    """The paper's registered figures and tables, their registry ids and where the book shows them.

    Parameters
    ----------
    paper : str
        The paper's bibtex key (:attr:`ldpkit.experiments.Experiment.paper`).
    figures : mapping
        Registry id -> the label of the book figure that shows it (a ``{numref}`` link); an
        experiment not listed links to its section (:attr:`~ldpkit.experiments.Experiment.section`,
        a ``{ref}`` link).

    Returns
    -------
    str
        A Markdown table with a row per experiment, in registration order (glue it as Markdown
        and paste it with ``:format: myst``).

    Raises
    ------
    ValueError
        If the paper has no registered experiment, or one has neither a figure label nor a
        section.

    Examples
    --------
    >>> print(experiment_map("jiang2018lip", {f"lip-fig{k}": f"fig-lip-{k}" for k in (2, 5, 6, 7, 8)}))
    | The paper's | Registry id | In this book |
    | --- | --- | --- |
    | Fig. 2 | `lip-fig2` | {numref}`fig-lip-2` |
    | Fig. 5 | `lip-fig5` | {numref}`fig-lip-5` |
    | Fig. 6 | `lip-fig6` | {numref}`fig-lip-6` |
    | Fig. 7 | `lip-fig7` | {numref}`fig-lip-7` |
    | Fig. 8 | `lip-fig8` | {numref}`fig-lip-8` |
    """
    from ldpkit import experiments

    lines = ["| The paper's | Registry id | In this book |", "| --- | --- | --- |"]
    for entry in experiments.list_experiments():
        if entry.paper != paper:
            continue
        label = figures.get(entry.id)
        if label is None and entry.section is None:
            raise ValueError(f"{entry.id}: no figure label given and no section registered")
        where = f"{{numref}}`{label}`" if label else f"{{ref}}`{entry.section}`"
        lines.append(f"| {entry.item} | `{entry.id}` | {where} |")
    if len(lines) == 2:
        raise ValueError(f"no registered experiment of paper {paper!r}")
    return "\n".join(lines)


def glue_facts(result: ExperimentResult, key: str) -> dict[str, str]:
    """The caption facts of ``result`` under the names a chapter glues them by: ``f"{key}_{fact}"``.

    The facts are :meth:`ldpkit.experiments.ExperimentResult.caption_facts` (the paper's item,
    the data, repeats, seed, scale and command).  A chapter glues each pair
    (``glue(name, value, display=False)``) and its figure caption pastes the glued values,
    ``fig2_data``, ``fig2_seed`` and so on, so a caption never holds a typed number.

    Raises
    ------
    ValueError
        If ``key`` is not a non-empty string of letters, digits and ``_``.

    Examples
    --------
    >>> import pandas as pd
    >>> from ldpkit.experiments import Experiment, ExperimentData, RunConfig, run
    >>> def compute(config):
    ...     return ExperimentData(pd.DataFrame({"x": [1]}), labels={"a": "Retail"})
    >>> toy = Experiment("toy-fig1", "A toy", "nobody2024", "Fig. 1", "table", ("a",), compute, None,
    ...                  RunConfig(repeats=10, seed=7))
    >>> facts = glue_facts(run(toy), "fig1")
    >>> facts["fig1_data"], facts["fig1_seed"], facts["fig1_command"]
    ('Retail', '7', 'ldpkit reproduce toy-fig1')
    """
    if not isinstance(key, str) or not _KEY.match(key):
        raise ValueError(f"key must be letters, digits and '_' (a glue name prefix), got {key!r}")
    return {f"{key}_{name}": value for name, value in result.caption_facts().items()}


def show_result(result: ExperimentResult, key: str, label: str) -> None:
    """Glue ``result``'s figure under ``label`` and its caption facts under ``<key>_<fact>``; show its links.

    The four lines every experiment cell of the book ran after :func:`ldpkit.experiments.run`:
    ``glue(label, result.figure)``, a glue per :func:`glue_facts` pair, and the
    :func:`downloads_html` links under the figure.  The register's glue check
    (:mod:`booktools.sources`) reads ``show_result(fig2, "fig2", "fig-idldp-2")`` as the key
    ``fig-idldp-2`` and the template ``fig2_<fact>``.
    """
    from IPython.display import HTML, display
    from myst_nb import glue

    facts = glue_facts(result, key)
    glue(label, result.figure, display=False)
    for name, value in facts.items():
        glue(name, value, display=False)
    display(HTML(downloads_html(result)))


def csv_download_html(frame: pd.DataFrame, filename: str, label: str | None = None) -> str:
    """An HTML link that downloads ``frame`` as ``filename`` (CSV, UTF-8, index included if named).

    Display it from a chapter cell with ``IPython.display.HTML``.

    Examples
    --------
    >>> import pandas as pd
    >>> link = csv_download_html(pd.DataFrame({"eps": [1.0], "mse": [0.5]}), "fig.csv")
    >>> link.startswith('<a download="fig.csv" href="data:text/csv;base64,')
    True
    """
    if not isinstance(filename, str) or not _CSV_NAME.match(filename):
        raise ValueError(f"filename must be a plain name ending in .csv, got {filename!r}")
    keep_index = any(name is not None for name in frame.index.names)
    data = frame.to_csv(index=keep_index).encode("utf-8")
    href = "data:text/csv;base64," + base64.b64encode(data).decode("ascii")
    text = html.escape(label or f"Download the data of this figure ({filename}, {len(frame):,} rows)")
    return f'<a download="{html.escape(filename)}" href="{href}">{text}</a>'


def json_download_html(text: str, filename: str, label: str | None = None) -> str:
    """An HTML link that downloads the JSON ``text`` as ``filename`` (a ``data:`` URI).

    Examples
    --------
    >>> json_download_html('{"seed": 1}', "fig.json").startswith(
    ...     '<a download="fig.json" href="data:application/json;base64,')
    True
    """
    if not isinstance(filename, str) or not _JSON_NAME.match(filename):
        raise ValueError(f"filename must be a plain name ending in .json, got {filename!r}")
    href = "data:application/json;base64," + base64.b64encode(text.encode("utf-8")).decode("ascii")
    shown = html.escape(label or f"Download {filename}")
    return f'<a download="{html.escape(filename)}" href="{href}">{shown}</a>'


def csv_link_html(result: ExperimentResult) -> str:
    """An HTML link that downloads the result's frame as ``<experiment id>.csv`` (:func:`csv_download_html`)."""
    return csv_download_html(result.frame, f"{result.experiment.id}.csv")


def downloads_html(result: ExperimentResult) -> str:
    """The links under a figure or table: its data (:func:`csv_link_html`) and its provenance record as JSON.

    The record is :meth:`ldpkit.experiments.ExperimentResult.sidecar`, exactly as ``ldpkit
    reproduce`` writes it beside its files, so a figure carries what it ran on, with which code
    and seed.  Display it with ``display(HTML(downloads_html(result)))``.
    """
    record = result.sidecar(files=[f"{result.experiment.id}.csv"])
    return (csv_link_html(result) + " &middot; " +
            json_download_html(json.dumps(record, indent=2), f"{result.experiment.id}.json",
                               "provenance of this run (JSON: data, seed, versions)"))
