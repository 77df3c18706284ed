"""The claims register: its entries, their validation and loading, and counts.

The register is ``claims.yml`` in the book directory: one entry per theorem, lemma,
proposition, corollary, table, result figure, worked example and checkable remark of the four
papers the book accompanies, with the book's verdict on it.

The verdict vocabulary is defined once, here: :data:`STATUS_DEFINITIONS` (and
:data:`DATA_QUALIFIERS` for the data a verdict rests on). The Scorecard renders its definitions
from these mappings, and the tests hold the schema comment of ``claims.yml`` and every entry to
them.

Validation rules (each failure is a :class:`ValueError` naming the offending entry):

* every entry has the fields ``id``, ``paper``, ``location``, ``kind``, ``statement``,
  ``status`` and ``evidence``; ``note``, ``corrected`` and ``data`` are optional; no other
  fields are allowed;
* ``paper`` is one of :data:`PAPERS`, ``kind`` one of :data:`KINDS`, ``status`` one of
  :data:`STATUSES`, ``data`` (when present) one of :data:`DATA_QUALIFIERS`;
* ids are unique, non-empty strings;
* ``statement`` is a single non-empty line of at most :data:`MAX_STATEMENT_LENGTH`
  characters;
* ``evidence`` is a non-empty string (a book label) whenever ``status`` is not ``pending``;
* ``corrected`` (the corrected result) is a non-empty string whenever ``status`` is one of
  :data:`CORRECTED_STATUSES`, at most :data:`MAX_CORRECTED_LENGTH` characters on one line;
* ``location``, ``statement``, ``note`` and ``corrected`` follow the inline-markup rules of
  :mod:`booktools.markup` (inline math, MyST roles, and in notes and corrected results only,
  glue references to the chapter that computes a quoted number).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from .labels import BOOK_DIR
from .markup import GlueReference, check_markup

__all__ = [
    "PAPERS",
    "STATUS_DEFINITIONS",
    "STATUSES",
    "RETIRED_STATUSES",
    "CORRECTED_STATUSES",
    "DATA_QUALIFIERS",
    "KINDS",
    "MAX_STATEMENT_LENGTH",
    "MAX_CORRECTED_LENGTH",
    "REGISTER",
    "Claim",
    "validate_claims",
    "load_claims",
    "summarise",
    "summary_rows",
    "claim_rows",
    "glue_references",
]

#: Paper keys, in the order the book presents them.
PAPERS: tuple[str, ...] = ("idldp", "ipldp", "fldp", "lip")
#: The verification statuses, in the order the Scorecard counts them, each with its definition
#: (MyST text). This mapping is the one source of the vocabulary: :data:`STATUSES`, the
#: Scorecard's definitions and its badges (:data:`booktools.render.STATUS_BADGES`) follow it.
STATUS_DEFINITIONS: Mapping[str, str] = MappingProxyType({
    "reproduced": (
        "The book re-derived or re-ran the result the paper prints and agrees with it, up to "
        "rounding or Monte Carlo noise of the stated size."
    ),
    "re-derived": (
        "The paper's text lost the formula (the FLDP text lost almost all of its mathematics in "
        "extraction), so the book reconstructed the statement and proved it. There is no printed "
        "statement to compare with, so this is not a reproduction; the note says what was lost."
    ),
    "slip": (
        "The printed statement has a typo or a slip, but the statement the paper intended holds. "
        "The corrected result gives it, and the evidence shows both the slip and the proof."
    ),
    "refuted": (
        "The claim's conclusion fails: the evidence holds a proof or a counterexample. The "
        "corrected result says what holds instead."
    ),
    "differs": (
        "The book's independent derivation or rerun gives a different result, and the gap cannot "
        "be pinned on one printed mistake, often because the paper does not specify its set-up "
        "fully. The note says how and where it differs."
    ),
    "pending": (
        "The evidence the book holds cannot decide the claim yet. The note says why and what "
        "would decide it; the evidence label, if any, points to what has been checked so far."
    ),
})
#: Allowed verification statuses, in the order of :data:`STATUS_DEFINITIONS`.
STATUSES: tuple[str, ...] = tuple(STATUS_DEFINITIONS)
#: Statuses no longer in use ("erratum" was split into ``slip`` and ``refuted``).
RETIRED_STATUSES: tuple[str, ...] = ("erratum",)
#: Statuses whose entries must give the corrected result (field ``corrected``).
CORRECTED_STATUSES: tuple[str, ...] = ("slip", "refuted")
#: The data qualifiers of a verdict (field ``data``): value -> (what the Scorecard shows next to
#: the status, definition). A claim without the field rests on the paper's own data, or on none.
DATA_QUALIFIERS: Mapping[str, tuple[str, str]] = MappingProxyType({
    "stand-in": (
        "on a stand-in",
        "Every experiment behind the verdict ran, in the book's reference build, on a stand-in: a "
        "labelled synthetic or prefix stand-in for a file that build does not hold, or a public "
        "dataset in place of data the paper does not identify. It checks the mechanisms, not the "
        "paper's numbers.",
    ),
    "partly stand-in": (
        "partly on a stand-in",
        "Some of the panels or rows behind the verdict ran on a stand-in, as above; the note says "
        "which, and the verdict on them checks the mechanisms only.",
    ),
})
#: Allowed kinds of claim.
KINDS: tuple[str, ...] = (
    "theorem",
    "lemma",
    "proposition",
    "corollary",
    "table",
    "figure",
    "example",
    "algorithm-claim",
    "remark",
)
#: Longest statement accepted (characters).
MAX_STATEMENT_LENGTH: int = 200
#: Longest corrected result accepted (characters, glue references included).
MAX_CORRECTED_LENGTH: int = 400
#: The register file, ``claims.yml`` in the book directory.
REGISTER: Path = BOOK_DIR / "claims.yml"

_REQUIRED: tuple[str, ...] = ("id", "paper", "location", "kind", "statement", "status", "evidence")
_OPTIONAL: tuple[str, ...] = ("note", "corrected", "data")


@dataclass(frozen=True)
class Claim:
    """One registered claim of a source paper.

    Attributes
    ----------
    id : str
        Stable identifier, e.g. ``"idldp-lemma-1"``.
    paper : str
        One of :data:`PAPERS`.
    location : str
        Where the claim sits in the paper (e.g. ``"Lemma 1, Sec. IV-B"``).
    kind : str
        One of :data:`KINDS`.
    statement : str
        One-line paraphrase of the claim.
    status : str
        One of :data:`STATUSES`.
    evidence : str or None
        Book label holding the evidence; ``None`` only while the claim is pending.
    note : str or None
        Optional remark (the reason for the status, conventions, caveats).
    corrected : str or None
        The corrected result; required when ``status`` is one of :data:`CORRECTED_STATUSES`.
    data : str or None
        Data qualifier, one of :data:`DATA_QUALIFIERS`, or ``None``.

    Examples
    --------
    >>> [claim] = validate_claims([{
    ...     "id": "idldp-lemma-1", "paper": "idldp", "location": "Lemma 1, Sec. IV-B", "kind": "lemma",
    ...     "statement": "$\\\\varepsilon$-LDP implies MinID-LDP when $\\\\min \\\\mathcal{E} = \\\\varepsilon$",
    ...     "status": "reproduced", "evidence": "lem-minid-ldp",
    ... }])
    >>> claim.id, claim.status, claim.evidence, claim.corrected
    ('idldp-lemma-1', 'reproduced', 'lem-minid-ldp', None)
    """

    id: str
    paper: str
    location: str
    kind: str
    statement: str
    status: str
    evidence: str | None
    note: str | None = None
    corrected: str | None = None
    data: str | None = None


def _entry_name(index: int, entry: Any) -> str:
    if isinstance(entry, Mapping) and isinstance(entry.get("id"), str) and entry.get("id"):
        return f"claim {entry['id']!r} (entry {index})"
    return f"claim entry {index}"


def _check_line(name: str, field: str, text: str, limit: int) -> None:
    """A register field that must be one line of at most ``limit`` characters."""
    if "\n" in text.strip() or "\r" in text:
        raise ValueError(f"{name}: {field} must be a single line")
    if len(text) > limit:
        raise ValueError(f"{name}: {field} has {len(text)} characters, more than the limit {limit}")


def _check_entry(index: int, entry: Any) -> Claim:
    name = _entry_name(index, entry)
    if not isinstance(entry, Mapping):
        raise ValueError(f"{name}: expected a mapping, got {type(entry).__name__}")
    missing = [key for key in _REQUIRED if key not in entry]
    if missing:
        raise ValueError(f"{name}: missing field(s) {', '.join(missing)}")
    unknown = sorted(str(key) for key in entry if key not in _REQUIRED and key not in _OPTIONAL)
    if unknown:
        raise ValueError(f"{name}: unknown field(s) {', '.join(unknown)}")

    for key in ("id", "paper", "location", "kind", "statement", "status"):
        value = entry[key]
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{name}: field {key!r} must be a non-empty string, got {value!r}")

    if entry["paper"] not in PAPERS:
        raise ValueError(f"{name}: unknown paper {entry['paper']!r}; expected one of {PAPERS}")
    if entry["kind"] not in KINDS:
        raise ValueError(f"{name}: unknown kind {entry['kind']!r}; expected one of {KINDS}")
    if entry["status"] not in STATUSES:
        retired = " (retired: use slip or refuted)" if entry["status"] in RETIRED_STATUSES else ""
        raise ValueError(f"{name}: unknown status {entry['status']!r}{retired}; expected one of {STATUSES}")

    statement = entry["statement"]
    _check_line(name, "statement", statement, MAX_STATEMENT_LENGTH)

    evidence = entry["evidence"]
    if evidence is not None and (not isinstance(evidence, str) or not evidence.strip()):
        raise ValueError(f"{name}: evidence must be null or a non-empty label, got {evidence!r}")
    if entry["status"] != "pending" and evidence is None:
        raise ValueError(
            f"{name}: evidence is missing but status is {entry['status']!r} "
            "(only pending claims may lack evidence)"
        )

    note = entry.get("note")
    if note is not None and not isinstance(note, str):
        raise ValueError(f"{name}: note must be a string or absent, got {note!r}")

    corrected = entry.get("corrected")
    if corrected is not None and (not isinstance(corrected, str) or not corrected.strip()):
        raise ValueError(f"{name}: corrected must be a non-empty string or absent, got {corrected!r}")
    if entry["status"] in CORRECTED_STATUSES and corrected is None:
        raise ValueError(
            f"{name}: status {entry['status']!r} needs the corrected result (field 'corrected')"
        )
    if corrected is not None:
        _check_line(name, "corrected", corrected, MAX_CORRECTED_LENGTH)

    data = entry.get("data")
    if data is not None and data not in DATA_QUALIFIERS:
        raise ValueError(f"{name}: unknown data qualifier {data!r}; expected one of {tuple(DATA_QUALIFIERS)}")

    for key in ("location", "statement", "note", "corrected"):
        if entry.get(key) is None:
            continue
        try:
            check_markup(entry[key], allow_glue=key in ("note", "corrected"))
        except ValueError as exc:
            raise ValueError(f"{name}: {key}: {exc}") from None

    return Claim(
        id=entry["id"].strip(),
        paper=entry["paper"],
        location=entry["location"].strip(),
        kind=entry["kind"],
        statement=statement.strip(),
        status=entry["status"],
        evidence=evidence.strip() if isinstance(evidence, str) else None,
        note=note.strip() if isinstance(note, str) else None,
        corrected=corrected.strip() if isinstance(corrected, str) else None,
        data=data,
    )


def validate_claims(entries: Any) -> list[Claim]:
    """Validate raw register entries and return them as :class:`Claim` objects.

    Parameters
    ----------
    entries : list of mapping, or mapping with key ``"claims"``
        The parsed YAML document (either the whole document or its ``claims`` list).

    Returns
    -------
    list of Claim
        The entries in file order.

    Raises
    ------
    ValueError
        If the document is not a list of entries, if any entry breaks a rule listed in the
        module docstring, or if two entries share an id; the message names the entry.
    """
    if isinstance(entries, Mapping):
        if "claims" not in entries:
            raise ValueError("claims register: top-level mapping has no 'claims' list")
        entries = entries["claims"]
    if not isinstance(entries, list):
        raise ValueError(
            f"claims register: expected a list of claims, got {type(entries).__name__}"
        )
    if not entries:
        raise ValueError("claims register: the list of claims is empty")

    claims: list[Claim] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        claim = _check_entry(index, entry)
        if claim.id in seen:
            raise ValueError(
                f"claim {claim.id!r} (entry {index}): duplicate id, first used by entry {seen[claim.id]}"
            )
        seen[claim.id] = index
        claims.append(claim)
    return claims


def load_claims(path: str | os.PathLike[str] | None = None) -> list[Claim]:
    """Load and validate the claims register.

    Parameters
    ----------
    path : str or path-like, optional
        YAML file to read; defaults to :data:`REGISTER`.

    Returns
    -------
    list of Claim
        Validated claims in file order.

    Raises
    ------
    ValueError
        If the file does not exist, is not valid YAML, or any entry is invalid.
    """
    file = Path(path) if path is not None else REGISTER
    if not file.is_file():
        raise ValueError(f"claims register not found: {str(file)!r}")
    try:
        document = yaml.safe_load(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ValueError(f"claims register {str(file)!r} is not valid YAML: {exc}") from exc
    return validate_claims(document)


def summarise(claims: Iterable[Claim]) -> dict[str, dict[str, int]]:
    """Count claims per paper and status.

    Parameters
    ----------
    claims : iterable of Claim

    Returns
    -------
    dict
        ``{paper: {status: count, ..., "total": count}}`` for every paper in :data:`PAPERS`
        (all statuses present, zeros included) plus a ``"total"`` row over all papers.

    Raises
    ------
    ValueError
        If a claim has a paper or status outside :data:`PAPERS` / :data:`STATUSES`.
    """
    table: dict[str, dict[str, int]] = {
        paper: {status: 0 for status in STATUSES} | {"total": 0} for paper in (*PAPERS, "total")
    }
    for claim in claims:
        if claim.paper not in PAPERS or claim.status not in STATUSES:
            raise ValueError(
                f"claim {claim.id!r}: unknown paper {claim.paper!r} or status {claim.status!r}"
            )
        for row in (claim.paper, "total"):
            table[row][claim.status] += 1
            table[row]["total"] += 1
    return table


def summary_rows(claims: Iterable[Claim]) -> tuple[list[str], list[list[Any]]]:
    """Return (header, rows) of the per-paper status counts, ready for display."""
    table = summarise(claims)
    header = ["paper", *STATUSES, "total"]
    rows = [[paper, *(table[paper][s] for s in STATUSES), table[paper]["total"]] for paper in table]
    return header, rows


def claim_rows(
    claims: Iterable[Claim],
    columns: Sequence[str] = ("id", "paper", "location", "statement", "status", "evidence"),
) -> tuple[list[str], list[list[Any]]]:
    """Return (header, rows) listing the given attributes of every claim.

    Raises
    ------
    ValueError
        If a requested column is not a :class:`Claim` field.
    """
    fields = Claim.__dataclass_fields__
    for column in columns:
        if column not in fields:
            raise ValueError(f"unknown claim column {column!r}; expected one of {tuple(fields)}")
    rows = [[getattr(claim, column) for column in columns] for claim in claims]
    return list(columns), rows


def glue_references(claims: Iterable[Claim]) -> list[tuple[str, GlueReference]]:
    """List the glue references of the claims' notes and corrected results.

    Parameters
    ----------
    claims : iterable of Claim

    Returns
    -------
    list of (str, GlueReference)
        ``(claim id, reference)`` in register order, one pair per occurrence (within a claim,
        the note's before the corrected result's).

    Raises
    ------
    ValueError
        If a note or corrected result holds a malformed reference.

    Examples
    --------
    >>> [claim] = validate_claims([{
    ...     "id": "idldp-fig-5", "paper": "idldp", "location": "Fig. 5", "kind": "figure",
    ...     "statement": "IDUE gains most when few items are sensitive.", "status": "reproduced",
    ...     "evidence": "sec-idldp-fig5",
    ...     "note": "Gain {glue:text}`idldp_experiments.md::fig5_gain_small:.0f`% at 1% sensitive items.",
    ... }])
    >>> glue_references([claim])
    [('idldp-fig-5', GlueReference(doc='idldp_experiments.md', key='fig5_gain_small', fmt='.0f'))]
    """
    return [
        (claim.id, ref)
        for claim in claims
        for text in (claim.note, claim.corrected)
        for ref in check_markup(text or "", allow_glue=True)
    ]
