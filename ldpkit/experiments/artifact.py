"""What an artifact evaluator needs to know about each paper item and each dataset.

For every registered experiment: the paper item, the command that reruns it and compares it
with its reference (``ldpkit check ID``), the expected wall time (the reference run's,
:func:`~ldpkit.experiments.check.reference_seconds`), the data the reference ran on and the
book section that shows it (:func:`artifact_items`).  For every dataset: who uses it, where it
comes from, whether it can be downloaded and checked, and what runs without it
(:func:`data_availability`).  Nothing here is typed by hand: a new experiment or dataset appears
with its registration.  The book's Artifact page renders both as tables, with the book's verdict
on each paper item taken from its claims register.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import datasets as _datasets
from .check import load_reference, reference_seconds
from .registry import list_experiments

__all__ = ["ArtifactItem", "PAPER_CITATIONS", "artifact_items", "citation_text", "data_availability", "is_paper_item"]


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
    section: str | None


def artifact_items() -> list[ArtifactItem]:
    """Every registered experiment with its command, expected time, reference data and section."""
    out = []
    for exp in list_experiments():
        try:
            _, record = load_reference(exp.id)
            data = ", ".join(ident["label"] for ident in record.get("datasets", {}).values()) or "generated only"
        except FileNotFoundError:
            data = "?"
        out.append(ArtifactItem(exp.id, exp.paper, exp.item, exp.kind, exp.title, f"ldpkit check {exp.id}",
                                reference_seconds(exp.id), data, exp.section))
    return out


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


#: how a citation names the paper whose figure, table or section an item reruns (authors and year,
#: never the BibTeX key)
PAPER_CITATIONS: dict[str, str] = {"gu2020idldp": "Gu et al. (2020)", "li2023ipldp": "Li et al. (2023)",
                                   "zhao2022fldp": "Zhao et al. (2022)", "jiang2018lip": "Jiang et al. (2018)",
                                   "arcolezi2024revealing": "Arcolezi and Gambs (2024)"}
_PAPER_ITEM = re.compile(r"^(Fig\.|Table|Sec\.) ")


def is_paper_item(item: str) -> bool:
    """Whether an item's title names a cited paper's figure, table or section (else it is the companion's own).

    Examples
    --------
    >>> is_paper_item("Fig. 3"), is_paper_item("Synthesis: guarantee table")
    (True, False)
    """
    return bool(_PAPER_ITEM.match(item))


def citation_text(experiment_id: str, version: str, commit: str | None = None) -> str:
    """How to cite one figure or table at one version: the item, the version and the rerun command.

    A paper's figure, table or section is named with the paper's authors and year; any other item
    (a synthesis or auditing result, the notion map) is the companion's own.

    Examples
    --------
    >>> print(citation_text("idldp-fig3", "0.1.0", "abc1234"))  # doctest: +NORMALIZE_WHITESPACE
    ldpkit developers. ldpkit 0.1.0 (commit abc1234): Fig. 3 of Gu et al. (2020), rerun with `ldpkit
    reproduce idldp-fig3` (seed 20200424); data: the provenance record idldp-fig3.json.
    """
    from .registry import get

    exp = get(experiment_id)
    at = f" (commit {commit})" if commit else ""
    what = (f"{exp.item} of {PAPER_CITATIONS.get(exp.paper, exp.paper)}" if is_paper_item(exp.item)
            else f"{exp.item} (the companion's own)")
    return (f"ldpkit developers. ldpkit {version}{at}: {what}, rerun with "
            f"`ldpkit reproduce {exp.id}` (seed {exp.defaults.seed}); data: the provenance record {exp.id}.json.")
