"""Data behind a figure, downloadable beside it in the book.

The book's convention: every figure is followed by a link that downloads the data frame it
was drawn from as CSV.  The link embeds the CSV (a ``data:`` URI), so the built HTML is
self-contained and needs no file copied next to it.
"""

from __future__ import annotations

import base64
import html
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["csv_download_html", "json_download_html"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\.csv$")


def csv_download_html(frame: pd.DataFrame, filename: str, label: str | None = None) -> str:
    """An HTML link that downloads ``frame`` as ``filename`` (CSV, UTF-8, index included if named).

    Display it from a chapter cell with ``IPython.display.HTML``.

    Examples
    --------
    >>> import pandas as pd
    >>> from ldpkit.experiments import csv_download_html
    >>> link = csv_download_html(pd.DataFrame({"eps": [1.0], "mse": [0.5]}), "fig.csv")
    >>> link.startswith('<a download="fig.csv" href="data:text/csv;base64,')
    True
    """
    if not isinstance(filename, str) or not _NAME.match(filename):
        raise ValueError(f"filename must be a plain name ending in .csv, got {filename!r}")
    keep_index = any(name is not None for name in frame.index.names)
    data = frame.to_csv(index=keep_index).encode("utf-8")
    href = "data:text/csv;base64," + base64.b64encode(data).decode("ascii")
    text = html.escape(label or f"Download the data of this figure ({filename}, {len(frame):,} rows)")
    return f'<a download="{html.escape(filename)}" href="{href}">{text}</a>'


_JSON_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\.json$")


def json_download_html(text: str, filename: str, label: str | None = None) -> str:
    """An HTML link that downloads the JSON ``text`` as ``filename`` (a ``data:`` URI).

    Examples
    --------
    >>> from ldpkit.experiments.downloads import json_download_html
    >>> json_download_html('{"seed": 1}', "fig.json").startswith('<a download="fig.json" href="data:application/json;base64,')
    True
    """
    if not isinstance(filename, str) or not _JSON_NAME.match(filename):
        raise ValueError(f"filename must be a plain name ending in .json, got {filename!r}")
    href = "data:application/json;base64," + base64.b64encode(text.encode("utf-8")).decode("ascii")
    shown = html.escape(label or f"Download {filename}")
    return f'<a download="{html.escape(filename)}" href="{href}">{shown}</a>'
