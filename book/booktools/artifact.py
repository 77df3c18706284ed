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

__all__ = ["claim_id", "artifact_table", "data_table"]

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

    Columns: the paper item (a link to the book section that shows it), the command, the
    expected time, the data of the reference run, and the book's verdict on the paper's claim
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
        where = f"{{{role}}}`{it.item} <{it.section}>`" if it.section else it.item
        claim = by_id.get(claim_id(it.id) or "")
        verdict = f"{claim_badges(claim)} ({claim.id})" if claim is not None else "not a claim"
        rows.append([f"{it.paper}: {where}", f"`{it.command}`", _seconds(it.seconds), it.data, verdict])
    header = ["paper item", "command", "time (reference machine)", "data of the reference run", "the book's verdict"]
    return list_table(None, header, [[cell.replace("\n", " ") for cell in row] for row in rows],
                      widths=(22, 26, 10, 24, 18), css_class="artifact-table")


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
    return list_table(None, header, cells, widths=(14, 16, 20, 14, 16, 20), css_class="artifact-table")
