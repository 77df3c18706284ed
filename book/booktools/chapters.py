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
  its provenance record as JSON.  Each writes its file to :data:`DOWNLOAD_DIR`, which the build
  copies into the site (``html_extra_path`` in ``_config.yml``), and links it; pages carry
  links, not the data, so they stay light.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .labels import BOOK_DIR

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ldpkit.experiments import ExperimentResult

__all__ = [
    "DOWNLOAD_DIR",
    "DOWNLOAD_HREF",
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
#: Where the chapters write the files their download links point to; the build copies the
#: folder's parent (``book/_generated``, ``html_extra_path``) to the root of the site.
DOWNLOAD_DIR = BOOK_DIR / "_generated" / "data"
#: The links' address of :data:`DOWNLOAD_DIR` from a chapter's page (every chapter is in book/).
DOWNLOAD_HREF = "../data/"


def _write_download(filename: str, data: bytes) -> str:
    DOWNLOAD_DIR.mkdir(parents=True, exist_ok=True)
    (DOWNLOAD_DIR / filename).write_bytes(data)
    return DOWNLOAD_HREF + filename


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
    """Write ``frame`` to :data:`DOWNLOAD_DIR` as ``filename`` (CSV, UTF-8, index included if named); link it.

    Display it from a chapter cell with ``IPython.display.HTML``.

    Examples
    --------
    >>> import pandas as pd
    >>> link = csv_download_html(pd.DataFrame({"eps": [1.0], "mse": [0.5]}), "doctest-fig.csv")
    >>> link
    '<a download="doctest-fig.csv" href="../data/doctest-fig.csv">Download the data shown above (doctest-fig.csv, 1 row)</a>'
    >>> (DOWNLOAD_DIR / "doctest-fig.csv").read_text().splitlines()
    ['eps,mse', '1.0,0.5']
    >>> (DOWNLOAD_DIR / "doctest-fig.csv").unlink()
    """
    if not isinstance(filename, str) or not _CSV_NAME.match(filename):
        raise ValueError(f"filename must be a plain name ending in .csv, got {filename!r}")
    keep_index = any(name is not None for name in frame.index.names)
    href = _write_download(filename, frame.to_csv(index=keep_index).encode("utf-8"))
    rows = f"{len(frame):,} row{'' if len(frame) == 1 else 's'}"
    text = html.escape(label or f"Download the data shown above ({filename}, {rows})")
    return f'<a download="{html.escape(filename)}" href="{html.escape(href)}">{text}</a>'


def json_download_html(text: str, filename: str, label: str | None = None) -> str:
    """Write the JSON ``text`` to :data:`DOWNLOAD_DIR` as ``filename``; link it.

    Examples
    --------
    >>> json_download_html('{"seed": 1}', "doctest-fig.json")
    '<a download="doctest-fig.json" href="../data/doctest-fig.json">Download doctest-fig.json</a>'
    >>> (DOWNLOAD_DIR / "doctest-fig.json").unlink()
    """
    if not isinstance(filename, str) or not _JSON_NAME.match(filename):
        raise ValueError(f"filename must be a plain name ending in .json, got {filename!r}")
    href = _write_download(filename, text.encode("utf-8"))
    shown = html.escape(label or f"Download {filename}")
    return f'<a download="{html.escape(filename)}" href="{html.escape(href)}">{shown}</a>'


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
