"""Which data every registered figure and table of the four papers runs on in this build.

The experiment registry (:func:`ldpkit.experiments.list_experiments`) names, for each figure or
table, the datasets it needs: registry keys of :data:`ldpkit.datasets.DATASETS` for real data and
``"synthetic.<function>"`` for data generated as the paper describes.  For a real dataset,
:func:`ldpkit.datasets.plan` says, without parsing anything, what a load with the book's data
policy gives here and now: the verified file, a download, the prefix stand-in or the synthetic
stand-in, each with the label the experiment's outputs carry.  The intro's coverage table is
:func:`coverage_frame`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["BOOK_ORDER", "PAPER_NAMES", "DataUse", "coverage_frame", "coverage_by_data", "data_use", "data_uses"]

#: The papers' bibtex keys in the book's reading order, and the short name of each.
BOOK_ORDER: tuple[str, ...] = ("gu2020idldp", "li2023ipldp", "zhao2022fldp", "jiang2018lip")
PAPER_NAMES: dict[str, str] = {"gu2020idldp": "ID-LDP", "li2023ipldp": "IPLDP", "zhao2022fldp": "FLDP",
                               "jiang2018lip": "LIP"}

_QUOTED = re.compile(r'"([^"]+)" dataset')


@dataclass(frozen=True)
class DataUse:
    """One dataset an experiment needs, as this build would load it.

    Attributes
    ----------
    name
        The registry's name (``"kosarak"``, ``"synthetic.zipf_items"``).
    label
        What the book shows: the dataset's name, its stand-in label, or the synthetic set's name.
    origin
        ``"real"``, ``"download"``, ``"prefix"``, ``"stand-in"``, ``"error"`` (from
        :func:`ldpkit.datasets.plan`) or ``"synthetic"`` (generated as the paper describes).
    """

    name: str
    label: str
    origin: str

    @property
    def stand_in(self) -> bool:
        """Whether a stand-in replaces the real data."""
        return self.origin in ("prefix", "stand-in")


def _synthetic_label(function: str) -> str:
    from ldpkit.datasets import synthetic

    doc = getattr(getattr(synthetic, function, None), "__doc__", None) or ""
    match = _QUOTED.search(doc)
    name = match[1] if match else function.replace("_", " ")
    return f"{name} (synthetic, as in the paper)"


def data_use(name: str) -> DataUse:
    """How this build would load the dataset ``name`` of the experiment registry."""
    if name.startswith("synthetic."):
        return DataUse(name, _synthetic_label(name.removeprefix("synthetic.")), "synthetic")
    from ldpkit.datasets import plan

    found = plan(name)
    label = found.label
    if found.origin == "download":
        label += " (downloaded, or its stand-in if the download fails)"
    elif found.origin == "error":
        label += " (a damaged file: loading fails)"
    return DataUse(name, label, found.origin)


def data_uses(names: Sequence[str]) -> tuple[DataUse, ...]:
    """:func:`data_use` of each name, each dataset planned once."""
    cache: dict[str, DataUse] = {}
    return tuple(cache.setdefault(name, data_use(name)) for name in names)


def coverage_frame(papers: Sequence[str] = BOOK_ORDER) -> pd.DataFrame:
    """One row per registered figure or table of ``papers``, with the data it runs on here.

    Columns: ``paper`` (short name), ``item`` (the paper's item, a ``{ref}`` link to the book's
    section), ``data`` (the labels of its datasets, ``"; "``-separated, or ``None`` when it needs
    none), ``stand_ins`` (the labels of the stand-ins among them, a tuple) and ``id`` (the
    registry id).  Rows follow ``papers``, then the registry's order.

    Examples
    --------
    >>> frame = coverage_frame()
    >>> list(frame.columns)
    ['paper', 'item', 'data', 'stand_ins', 'id']
    >>> frame.loc[frame["id"] == "idldp-fig2", "data"].item()
    'Power-law (synthetic, as in the paper); Uniform (synthetic, as in the paper)'
    """
    import pandas as pd
    from ldpkit import experiments

    rank = {paper: i for i, paper in enumerate(papers)}
    entries = [e for e in experiments.list_experiments() if e.paper in rank]
    entries.sort(key=lambda e: rank[e.paper])  # stable: registration order within a paper
    planned: dict[str, DataUse] = {}
    rows = []
    for entry in entries:
        uses = [planned.setdefault(name, data_use(name)) for name in entry.datasets]
        item = f"{{ref}}`{entry.item} <{entry.section}>`" if entry.section else entry.item
        rows.append({
            "paper": PAPER_NAMES.get(entry.paper, entry.paper),
            "item": item,
            "data": "; ".join(use.label for use in uses) if uses else None,
            "stand_ins": tuple(use.label for use in uses if use.stand_in),
            "id": entry.id,
        })
    return pd.DataFrame(rows, columns=["paper", "item", "data", "stand_ins", "id"])


def coverage_by_data(frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`coverage_frame` with one row per paper and data: the items that ran on the same data.

    Columns: ``paper``, ``items`` (the items' links, comma-separated, in the frame's order) and
    ``data``; rows in the order of each group's first item.

    Examples
    --------
    >>> compact = coverage_by_data(coverage_frame(["li2023ipldp"]))
    >>> compact["items"].tolist()[1]
    '{ref}`Table 2 <sec-ipldp-table2>`'
    """
    import pandas as pd

    groups: dict[tuple[str, object], list[str]] = {}
    for row in frame.itertuples(index=False):
        groups.setdefault((row.paper, row.data), []).append(row.item)
    rows = [{"paper": paper, "items": ", ".join(items), "data": data} for (paper, data), items in groups.items()]
    return pd.DataFrame(rows, columns=["paper", "items", "data"])
