"""The tables of the book's Artifact page, built from the registry, the references and the register.

For every registered experiment: the paper item, the command that reruns it, the expected wall
time (the reference run's, :func:`~ldpkit.experiments.check.reference_seconds`), the data the
reference ran on, and the book's verdict on the paper's claim for that item (its status in
``book/claims.yml``).  For every dataset: where it comes from, whether it can be downloaded and
checked, and what runs without it.  Nothing here is typed by hand: a new experiment or dataset
appears on the page with its registration.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import datasets as _datasets
from ..claims import STATUS_BADGES, Claim
from .check import load_reference, reference_seconds
from .registry import list_experiments

__all__ = ["ArtifactItem", "artifact_items", "artifact_table", "citation_text", "data_availability", "data_table"]

_ID = re.compile(r"^(?P<paper>[a-z]+)-(?P<kind>fig|table)(?P<number>\d+)$")


@dataclass(frozen=True)
class ArtifactItem:
    """One paper item as the Artifact page lists it.

    Attributes
    ----------
    id, paper, item, kind, title
        As registered (:class:`~ldpkit.experiments.Experiment`).
    command
        The command that reruns it and compares it with the reference (``ldpkit check ID``).
    seconds
        Wall time of the reference run, or ``None``.
    data
        The labels of the data the reference ran on (``"generated only"`` when the experiment
        generates everything it uses).
    claim, status
        The register entry for this item and its status (``None`` where the item is not a
        registered claim, e.g. a notation table).
    section
        The book section that shows it.
    """

    id: str
    paper: str
    item: str
    kind: str
    title: str
    command: str
    seconds: float | None
    data: str
    claim: str | None
    status: str | None
    section: str | None


def _claim_id(experiment_id: str) -> str | None:
    match = _ID.match(experiment_id)
    if match is None:
        return None
    kind = "fig" if match["kind"] == "fig" else "table"
    return f"{match['paper']}-{kind}-{match['number']}"


def artifact_items(claims: Iterable[Claim] = ()) -> list[ArtifactItem]:
    """Every registered experiment with its command, expected time, reference data and verdict."""
    by_id = {claim.id: claim for claim in claims}
    out = []
    for exp in list_experiments():
        try:
            _, record = load_reference(exp.id)
            data = ", ".join(ident["label"] for ident in record.get("datasets", {}).values()) or "generated only"
        except FileNotFoundError:
            data = "?"
        claim = by_id.get(_claim_id(exp.id) or "")
        out.append(ArtifactItem(exp.id, exp.paper, exp.item, exp.kind, exp.title, f"ldpkit check {exp.id}",
                                reference_seconds(exp.id), data, claim.id if claim else None,
                                claim.status if claim else None, exp.section))
    return out


def _seconds(value: float | None) -> str:
    return "?" if value is None else "under 1 s" if value < 1 else f"{value:.0f} s"


def artifact_table(items: Sequence[ArtifactItem], labels: Mapping[str, Any] | None = None) -> str:
    """The items as a MyST ``list-table`` (glue it as Markdown and paste it with ``:format: myst``).

    Columns: the paper item (a link to the book section that shows it), the command, the
    expected time, the data of the reference run, and the book's verdict on the paper's claim
    (a status badge; "not a claim" for items the register does not list).  ``labels`` maps book
    labels to their role (:func:`ldpkit.claims.book_labels`); without it sections are ``ref``
    links.
    """
    rows = []
    for it in items:
        role = getattr((labels or {}).get(it.section or ""), "role", "ref")
        where = f"{{{role}}}`{it.item} <{it.section}>`" if it.section else it.item
        verdict = (f"{{{STATUS_BADGES[it.status]}}}`{it.status}` ({it.claim})" if it.status and it.claim
                   else "not a claim")
        rows.append([f"{it.paper}: {where}", f"`{it.command}`", _seconds(it.seconds), it.data, verdict])
    header = ["paper item", "command", "time (reference machine)", "data of the reference run", "the book's verdict"]
    lines = ["```{list-table}", ":header-rows: 1", ":class: artifact-table", ":widths: 22 26 10 24 18", ""]
    for row in (header, *rows):
        for position, cell in enumerate(row):
            lines.append(("* - " if position == 0 else "  - ") + cell.replace("\n", " "))
    lines.append("```")
    return "\n".join(lines)


def data_availability() -> list[dict[str, str]]:
    """One row per dataset: who uses it, its public source, download and checksum, and what runs without it.

    ``used by`` counts the registered experiments per paper family (the prefix of their ids).
    """
    users: dict[str, dict[str, int]] = {}
    for exp in list_experiments():
        family = exp.id.split("-", 1)[0]
        for key in exp.datasets:
            users.setdefault(key, {}).setdefault(family, 0)
            users[key][family] += 1
    rows = []
    for key, info in _datasets.DATASETS.items():
        downloadable = any(all(f.url for f in layout) for layout in info.layouts)
        pinned = all(f.sha256 for f in info.files)
        if info.resample_from is not None:
            without = (f"prefix stand-in from {_datasets.DATASETS[info.resample_from].name} where that is held, "
                       "else synthetic stand-in")
        else:
            without = "synthetic stand-in"
        used = users.get(key, {})
        rows.append({
            "dataset": info.name,
            "used by": ", ".join(f"{family} ({count})" for family, count in used.items()) or "none",
            "source": info.citation_url,
            "download": "yes" if downloadable else "no (local copy only)",
            "checked by": "pinned sha256" if pinned else "published counts",
            "without it": without,
        })
    return rows


def data_table(rows: Sequence[Mapping[str, str]]) -> str:
    """:func:`data_availability` as a MyST ``list-table``, each source a link named by its host."""
    header = ["dataset", "used by (items)", "source", "download", "checked by", "without it"]
    lines = ["```{list-table}", ":header-rows: 1", ":class: artifact-table", ":widths: 14 16 20 14 16 20", ""]
    for row in [dict(zip(header, header)), *rows]:
        cells = list(row.values())
        if cells[2].startswith("http"):
            host = cells[2].split("/")[2]
            cells[2] = f"[{host}]({cells[2]})"
        for position, cell in enumerate(cells):
            lines.append(("* - " if position == 0 else "  - ") + cell)
    lines.append("```")
    return "\n".join(lines)


def citation_text(experiment_id: str, version: str, commit: str | None = None) -> str:
    """How to cite one figure or table at one version: the item, the version and the rerun command.

    Examples
    --------
    >>> print(citation_text("idldp-fig3", "0.1.0", "abc1234"))  # doctest: +NORMALIZE_WHITESPACE
    ldpkit developers. ldpkit 0.1.0 (commit abc1234): Fig. 3 of gu2020idldp, rerun with `ldpkit reproduce
    idldp-fig3` (seed 20200424); data: the provenance record idldp-fig3.json.
    """
    from .registry import get

    exp = get(experiment_id)
    at = f" (commit {commit})" if commit else ""
    return (f"ldpkit developers. ldpkit {version}{at}: {exp.item} of {exp.paper}, rerun with "
            f"`ldpkit reproduce {exp.id}` (seed {exp.defaults.seed}); data: the provenance record {exp.id}.json.")
