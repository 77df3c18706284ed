"""The tables of the Artifact page: every paper item with the book's verdict, and the data.

The facts come from the kit (:mod:`ldpkit.experiments.artifact`: commands, expected times,
reference data, dataset availability); the verdict on each paper item is its status in the
claims register, found by the register's naming of figures and tables (:func:`claim_id`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from .labels import BookLabel
from .register import Claim
from .render import claim_badges, list_table

if TYPE_CHECKING:  # pragma: no cover
    from ldpkit.experiments.artifact import ArtifactItem

__all__ = ["claim_id", "artifact_table", "data_table", "item_owner", "PAPER_NAMES"]

_ITEM = re.compile(r"^(?P<paper>[a-z]+)-(?P<kind>fig|table)(?P<number>\d+)$")


def claim_id(experiment_id: str) -> str | None:
    """The register id of the figure or table an experiment reproduces, or ``None`` for another item.

    Examples
    --------
    >>> claim_id("idldp-fig3"), claim_id("fldp-table2"), claim_id("fldp-datasets")
    ('idldp-fig-3', 'fldp-table-2', None)
    """
    match = _ITEM.match(experiment_id)
    if match is None:
        return None
    return f"{match['paper']}-{match['kind']}-{match['number']}"


def _seconds(value: float | None) -> str:
    return "?" if value is None else "under 1 s" if value < 1 else f"{value:.0f} s"


def artifact_table(items: Sequence[ArtifactItem], claims: Iterable[Claim] = (),
                   labels: Mapping[str, BookLabel] | None = None) -> str:
    """The paper items as a MyST ``list-table`` (glue it as Markdown and paste it with ``:format: myst``).

    Columns: the item under its owner (a cited paper by name, or the companion; a link to the
    book section that shows it), the command with its expected time, the data of the reference
    run, and the book's verdict on the paper's claim
    (the status badge of the register entry :func:`claim_id` names; "not a claim" for items the
    register does not list).

    Parameters
    ----------
    items : sequence of ArtifactItem
        :func:`ldpkit.experiments.artifact.artifact_items`.
    claims : iterable of Claim
        The register (:func:`booktools.register.load_claims`).
    labels : mapping, optional
        The book's labels (:func:`booktools.labels.book_labels`), for the role of each section
        link; without them sections are ``ref`` links.
    """
    by_id = {claim.id: claim for claim in claims}
    rows = []
    for it in items:
        role = getattr((labels or {}).get(it.section or ""), "role", "ref")
        owner, title = item_owner(it.paper, it.item)
        where = f"{{{role}}}`{title} <{it.section}>`" if it.section else title
        claim = by_id.get(claim_id(it.id) or "")
        verdict = f"{claim_badges(claim)} ({claim.id})" if claim is not None else "not a claim"
        run = f"`{it.command}`\n{_seconds(it.seconds)}"
        rows.append([f"{owner}: {where}".replace("\n", " "), run, it.data.replace("\n", " "), verdict.replace("\n", " ")])
    header = ["item", "command, and its time on the reference machine", "data of the reference run",
              "the book's verdict"]
    return list_table(None, header, rows, widths=(26, 28, 24, 22), css_class="book-table artifact-table",
                      width="100%")


#: the cited papers whose items the artifact reruns, by the name the book gives them
PAPER_NAMES: dict[str, str] = {"gu2020idldp": "ID-LDP paper", "li2023ipldp": "IPLDP paper",
                               "zhao2022fldp": "FLDP paper", "jiang2018lip": "LIP paper",
                               "arcolezi2024revealing": "LDP-Auditor paper"}

def item_owner(paper: str, item: str) -> tuple[str, str]:
    """Who an artifact item belongs to, and its title: a cited paper's figure, table or section, or the companion's own.

    An item whose title names a figure, table or section is the paper's, shown under the paper's
    name (never its BibTeX key); any other item (an auditing or synthesis result, the notion
    map) is the companion's own, whatever paper its experiment is filed under.

    Examples
    --------
    >>> item_owner("gu2020idldp", "Fig. 3")
    ('ID-LDP paper', 'Fig. 3')
    >>> item_owner("acharya2020context", "Synthesis: guarantee table")
    ('Companion (synthesis)', 'guarantee table')
    >>> item_owner("desfontaines2020sok", "Notion map")
    ('Companion', 'Notion map')
    """
    from ldpkit.experiments.artifact import is_paper_item

    if is_paper_item(item):
        return PAPER_NAMES.get(paper, paper), item
    chapter, sep, rest = item.partition(": ")
    if sep:
        return f"Companion ({chapter.lower()})", rest
    return "Companion", item


def data_table(rows: Sequence[Mapping[str, str]]) -> str:
    """:func:`ldpkit.experiments.artifact.data_availability` as a MyST ``list-table``.

    Each source is a link named by its host.
    """
    header = ["dataset", "used by (items)", "source", "download", "checked by", "without it"]
    cells = []
    for row in rows:
        values = list(row.values())
        if values[2].startswith("http"):
            values[2] = f"[{values[2].split('/')[2]}]({values[2]})"
        cells.append(values)
    return list_table(None, header, cells, widths=(14, 16, 20, 14, 16, 20),
                      css_class="book-table artifact-table", width="100%")
