"""Register of the formal claims made by the source papers.

The register lives in ``book/claims.yml``: one entry per theorem, lemma, proposition,
corollary, table, result figure and worked example of the four papers the book accompanies.
This module loads it, validates every entry and renders it for the book: the Scorecard page
(Register part of the book, :ref:`scorecard`) pastes :func:`summary_table` and
:func:`register_table`, and a chapter pastes :func:`chapter_box`.

Validation rules (each failure is a :class:`ValueError` naming the offending entry):

* every entry has the fields ``id``, ``paper``, ``location``, ``kind``, ``statement``,
  ``status`` and ``evidence`` (``note`` is optional); no other fields are allowed;
* ``paper`` is one of :data:`PAPERS`, ``kind`` one of :data:`KINDS`, ``status`` one of
  :data:`STATUSES`;
* ids are unique, non-empty strings;
* ``statement`` is a single non-empty line of at most :data:`MAX_STATEMENT_LENGTH`
  characters;
* ``evidence`` is a non-empty string (a book label) whenever ``status`` is not ``pending``;
* ``location``, ``statement`` and ``note`` may contain inline math between single dollar
  signs and MyST roles (a role is written ``{name}`` followed by its content in backticks);
  the dollar signs must pair up, and display math (two dollar signs) is not allowed;
* a number the build computes is never typed in a note: the note refers to the chapter that
  computes it with a cross-document glue reference, the ``glue:text`` role with the content
  ``<doc>::<key>:<format>``, where ``<doc>`` is the chapter's file relative to the register's
  directory (e.g. ``idldp_experiments.md``), ``<key>`` the name the chapter glues and
  ``<format>`` a Python format specification ending in its type character (``.2f``, ``d``,
  ``s``). Only notes may hold glue references. :func:`check_glue_references` checks that the
  chapter exists and glues the key.

Every other character of a statement, location or note is literal text: the renderers escape
Markdown syntax outside math and roles.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "PAPERS",
    "STATUSES",
    "KINDS",
    "MAX_STATEMENT_LENGTH",
    "ENV_VAR",
    "Claim",
    "load_claims",
    "validate_claims",
    "default_claims_path",
    "summarise",
    "summary_rows",
    "claim_rows",
    "to_markdown_table",
    "PAPER_TITLES",
    "STATUS_BADGES",
    "BOOK_DOC_ROOT",
    "GlueReference",
    "BookLabel",
    "parse_glue_reference",
    "glue_references",
    "chapter_glue_keys",
    "check_glue_references",
    "book_labels",
    "myst_inline",
    "summary_table",
    "register_table",
    "chapter_box",
]

#: Paper keys, in the order the book presents them.
PAPERS: tuple[str, ...] = ("idldp", "ipldp", "fldp", "lip")
#: Allowed verification statuses.
STATUSES: tuple[str, ...] = ("pending", "reproduced", "differs", "erratum")
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
)
#: Longest statement accepted (characters).
MAX_STATEMENT_LENGTH: int = 200
#: Environment variable consulted by :func:`default_claims_path` as a fallback.
ENV_VAR: str = "LDPKIT_CLAIMS"
#: How the book names each paper (table captions, box titles).
PAPER_TITLES: dict[str, str] = {
    "idldp": "ID-LDP (Gu et al., ICDE 2020)",
    "ipldp": "IPLDP (Li et al., 2023)",
    "fldp": "FLDP (Zhao et al., ICASSP 2022)",
    "lip": "LIP (Jiang et al., CNS 2018)",
}
#: The sphinx-design badge role that shows each status.
STATUS_BADGES: dict[str, str] = {
    "pending": "bdg-secondary-line",
    "reproduced": "bdg-success",
    "differs": "bdg-warning",
    "erratum": "bdg-danger",
}
#: The register's directory as Sphinx sees it (relative to the book's source root, which is the
#: repository root): glue references of the register are rewritten against it, so that they
#: resolve on whichever page the rendered register is pasted.
BOOK_DOC_ROOT: str = "/book/"

_REQUIRED: tuple[str, ...] = ("id", "paper", "location", "kind", "statement", "status", "evidence")
_OPTIONAL: tuple[str, ...] = ("note",)


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
        Optional remark (suspected errors, conventions).

    Examples
    --------
    >>> from ldpkit.claims import validate_claims
    >>> [claim] = validate_claims([{
    ...     "id": "idldp-lemma-1", "paper": "idldp", "location": "Lemma 1, Sec. IV-B", "kind": "lemma",
    ...     "statement": "eps-LDP implies E-MinID-LDP for every E with min E = eps",
    ...     "status": "reproduced", "evidence": "lem-minid-ldp",
    ... }])
    >>> claim.id, claim.status, claim.evidence
    ('idldp-lemma-1', 'reproduced', 'lem-minid-ldp')
    """

    id: str
    paper: str
    location: str
    kind: str
    statement: str
    status: str
    evidence: str | None
    note: str | None = None


def _entry_name(index: int, entry: Any) -> str:
    if isinstance(entry, Mapping) and isinstance(entry.get("id"), str) and entry.get("id"):
        return f"claim {entry['id']!r} (entry {index})"
    return f"claim entry {index}"


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
        raise ValueError(f"{name}: unknown status {entry['status']!r}; expected one of {STATUSES}")

    statement = entry["statement"]
    if "\n" in statement.strip() or "\r" in statement:
        raise ValueError(f"{name}: statement must be a single line")
    if len(statement) > MAX_STATEMENT_LENGTH:
        raise ValueError(
            f"{name}: statement has {len(statement)} characters, "
            f"more than the limit {MAX_STATEMENT_LENGTH}"
        )

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

    for key in ("location", "statement", "note"):
        if entry.get(key) is None:
            continue
        try:
            _check_markup(entry[key], allow_glue=key == "note")
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
        YAML file to read; defaults to :func:`default_claims_path`.

    Returns
    -------
    list of Claim
        Validated claims in file order.

    Raises
    ------
    ValueError
        If the file does not exist, is not valid YAML, or any entry is invalid.
    """
    file = Path(path) if path is not None else default_claims_path()
    if not file.is_file():
        raise ValueError(f"claims register not found: {str(file)!r}")
    try:
        document = yaml.safe_load(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ValueError(f"claims register {str(file)!r} is not valid YAML: {exc}") from exc
    return validate_claims(document)


def default_claims_path() -> Path:
    """Return the location of ``book/claims.yml``.

    The package lives at ``<repo>/ldpkit``, so the register is ``<repo>/book/claims.yml``.
    If that file does not exist (e.g. an installed copy of the package) and the environment
    variable :data:`ENV_VAR` (``LDPKIT_CLAIMS``) is set, its value is used instead.

    Returns
    -------
    pathlib.Path
        The repository copy if it exists, else the environment override if set, else the
        (missing) repository path, so that :func:`load_claims` reports where it looked.
    """
    repo_copy = Path(__file__).resolve().parent.parent / "book" / "claims.yml"
    if repo_copy.is_file():
        return repo_copy
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override)
    return repo_copy


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


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """Render a header and rows as a GitHub/MyST pipe table (``None`` shown as empty)."""
    lines = [
        "| " + " | ".join(_cell(h) for h in header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"row {list(row)!r} has {len(row)} cells, header has {len(header)}")
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- inline markup
#: A MyST role in register text: ``{name}`` followed by its content in backticks.
_ROLE = re.compile(r"\{(?P<name>[A-Za-z][\w:+.-]*)\}`(?P<content>[^`]*)`")
#: Inline math between single dollar signs (no dollar and no line break inside).
_MATH = re.compile(r"\$(?P<body>[^$\n]+)\$")
_SEGMENT = re.compile(f"{_ROLE.pattern}|{_MATH.pattern}")
_GLUE_CONTENT = re.compile(
    r"(?P<doc>[^:`\s][^:`]*?\.(?:md|ipynb))::(?P<key>[A-Za-z_][A-Za-z0-9_]*):(?P<fmt>[^:`]+)"
)
#: Characters escaped in literal text; CommonMark lets a backslash escape any ASCII punctuation.
_MARKDOWN_SPECIAL = set("\\`*_[]<>{}#&|!~$")
_BLOCK_START = re.compile(r"^(?:[-+*:>#=]|\d+[.)])(?:\s|$)")


@dataclass(frozen=True)
class GlueReference:
    """A cross-document glue reference of a register note.

    Attributes
    ----------
    doc : str
        The chapter that glues the value, relative to the register's directory
        (e.g. ``"idldp_experiments.md"``).
    key : str
        The glue key.
    fmt : str
        Python format specification ending in its type character (e.g. ``".2f"``).
    """

    doc: str
    key: str
    fmt: str

    def role(self, doc_root: str = BOOK_DOC_ROOT) -> str:
        """Return the ``glue:text`` role that pastes the value, with ``doc`` under ``doc_root``.

        Parameters
        ----------
        doc_root : str, optional
            Prefix of ``doc`` as Sphinx resolves it (default :data:`BOOK_DOC_ROOT`); a leading
            ``/`` makes the path relative to the book's source root, so the role resolves on
            any page.

        Returns
        -------
        str
            The MyST role, e.g. ``{glue:text}`/book/idldp.md::t1_ours_best:.2f```.
        """
        return f"{{glue:text}}`{doc_root}{self.doc}::{self.key}:{self.fmt}`"


def _check_format_spec(fmt: str) -> None:
    probe: Any
    kind = fmt[-1]
    if kind in "bcdoxX":
        probe = 0
    elif kind in "eEfFgGn%":
        probe = 0.0
    elif kind == "s":
        probe = ""
    else:
        raise ValueError(f"format {fmt!r} must end in a type character (e.g. '.2f', 'd', 's')")
    try:
        format(probe, fmt)
    except ValueError as exc:
        raise ValueError(f"invalid format {fmt!r}: {exc}") from None


def parse_glue_reference(content: str) -> GlueReference:
    """Parse the content of a register ``glue:text`` role, ``<doc>::<key>:<format>``.

    Parameters
    ----------
    content : str
        What stands between the backticks of the role.

    Returns
    -------
    GlueReference

    Raises
    ------
    ValueError
        If the content is not a cross-document reference with a chapter file (``.md`` or
        ``.ipynb``, relative to the register's directory, without ``..``), a key and a format
        specification ending in its type character.

    Examples
    --------
    >>> parse_glue_reference("idldp.md::t1_ours_best:.2f")
    GlueReference(doc='idldp.md', key='t1_ours_best', fmt='.2f')
    >>> parse_glue_reference("t1_ours_best:.2f")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: glue reference 't1_ours_best:.2f': expected '<doc>::<key>:<format>' ...
    """
    match = _GLUE_CONTENT.fullmatch(content)
    if match is None:
        raise ValueError(
            f"glue reference {content!r}: expected '<doc>::<key>:<format>' with <doc> a chapter "
            "file relative to the register (e.g. 'idldp.md::t1_ours_best:.2f')"
        )
    doc = match["doc"]
    if doc.startswith("/") or ".." in Path(doc).parts:
        raise ValueError(f"glue reference {content!r}: the document must be relative to the register, inside it")
    try:
        _check_format_spec(match["fmt"])
    except ValueError as exc:
        raise ValueError(f"glue reference {content!r}: {exc}") from None
    return GlueReference(doc, match["key"], match["fmt"])


def _check_markup(text: str, *, allow_glue: bool) -> list[GlueReference]:
    """Check the inline markup of a register text; return its glue references."""
    refs: list[GlueReference] = []
    rest = []
    position = 0
    for match in _SEGMENT.finditer(text):
        rest.append(text[position : match.start()])
        position = match.end()
        name = match["name"]
        if name is None:
            continue
        if name.startswith("glue"):
            if not allow_glue:
                raise ValueError("glue references are allowed in notes only")
            if name != "glue:text":
                raise ValueError(f"use the glue:text role for computed values, not {name!r}")
            refs.append(parse_glue_reference(match["content"]))
    rest.append(text[position:])
    literal = "".join(rest)
    if "$" in literal:
        raise ValueError(
            "unpaired or display-math '$': inline math is $...$ on one line, display math is not allowed"
        )
    if re.search(r"\{[A-Za-z][\w:+.-]*\}`", literal):
        raise ValueError("malformed role: expected {name}`content`")
    return refs


def glue_references(claims: Iterable[Claim]) -> list[tuple[str, GlueReference]]:
    """List the glue references of the claims' notes.

    Parameters
    ----------
    claims : iterable of Claim

    Returns
    -------
    list of (str, GlueReference)
        ``(claim id, reference)`` in register order, one pair per occurrence.

    Raises
    ------
    ValueError
        If a note holds a malformed reference.

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
    return [(claim.id, ref) for claim in claims for ref in _check_markup(claim.note or "", allow_glue=True)]


# ----------------------------------------------------------------------------- chapter sources
_CODE_CELL = re.compile(
    r"^(?P<fence>`{3,}|~{3,})\{code-cell\}[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.MULTILINE | re.DOTALL
)
_GLUE_CALL = re.compile(r"\bglue\(\s*(?P<prefix>[rRbBuUfF]{0,2})(?P<quote>[\"'])(?P<key>[^\"'\n]*)(?P=quote)")
#: ``result.glue_facts("fig3")`` (:meth:`ldpkit.experiments.ExperimentResult.glue_facts`): the
#: chapter glues the result's caption facts as ``fig3_<fact>``
_GLUE_FACTS_CALL = re.compile(r"\.glue_facts\(\s*(?P<quote>[\"'])(?P<key>\w+)(?P=quote)\s*\)")


def _code_cells(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        notebook = json.loads(text)
        return [
            "".join(cell["source"]) if isinstance(cell["source"], list) else str(cell["source"])
            for cell in notebook.get("cells", [])
            if cell.get("cell_type") == "code"
        ]
    return [match["body"] for match in _CODE_CELL.finditer(text)]


def chapter_glue_keys(path: str | os.PathLike[str]) -> tuple[frozenset[str], tuple[re.Pattern[str], ...]]:
    """Read the glue keys a chapter defines, from the ``glue("key", ...)`` calls of its code cells.

    Parameters
    ----------
    path : str or path-like
        A MyST notebook (``.md`` with ``code-cell`` blocks) or a Jupyter notebook (``.ipynb``).

    Returns
    -------
    keys : frozenset of str
        The keys given as plain string literals.
    templates : tuple of re.Pattern
        One pattern per key given as an f-string (e.g. ``glue(f"ratio_l{ell}", ...)``), each
        replacement field standing for any non-empty text, and ``fig3_.+`` for a call
        ``result.glue_facts("fig3")`` (an experiment result's caption facts glued under a key).

    Raises
    ------
    ValueError
        If the file does not exist.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> chapter = pathlib.Path(tempfile.mkdtemp()) / "ch.md"
    >>> _ = chapter.write_text(
    ...     '```{code-cell} ipython3\\nglue("gain", 0.5, display=False)\\n'
    ...     'for l in (1, 2):\\n    glue(f"ratio_l{l}", l)\\n```\\n')
    >>> keys, templates = chapter_glue_keys(chapter)
    >>> sorted(keys), [t.pattern for t in templates]
    (['gain'], ['ratio_l.+'])
    >>> _ = chapter.write_text('```{code-cell} ipython3\\nfor k, v in fig3.glue_facts("fig3").items():\\n'
    ...                        '    glue(k, v, display=False)\\n```\\n')
    >>> [t.pattern for t in chapter_glue_keys(chapter)[1]]
    ['fig3_.+']
    """
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"chapter not found: {str(file)!r}")
    keys: set[str] = set()
    templates: list[re.Pattern[str]] = []
    for body in _code_cells(file):
        for match in _GLUE_CALL.finditer(body):
            key, prefix = match["key"], match["prefix"].lower()
            if "f" in prefix and "{" in key:
                parts = re.split(r"\{[^{}]*\}", key)
                templates.append(re.compile(".+".join(re.escape(part) for part in parts)))
            else:
                keys.add(key)
        for match in _GLUE_FACTS_CALL.finditer(body):
            templates.append(re.compile(re.escape(match["key"] + "_") + ".+"))
    return frozenset(keys), tuple(templates)


def check_glue_references(
    claims: Iterable[Claim], book_dir: str | os.PathLike[str] | None = None
) -> list[tuple[str, GlueReference]]:
    """Check that every glue reference of the notes names a chapter that glues the key.

    Parameters
    ----------
    claims : iterable of Claim
    book_dir : str or path-like, optional
        The register's directory, against which the references' documents are resolved;
        defaults to the directory of :func:`default_claims_path`.

    Returns
    -------
    list of (str, GlueReference)
        The references checked, as :func:`glue_references` lists them.

    Raises
    ------
    ValueError
        Naming every reference whose chapter does not exist or does not glue the key (the
        message lists them all, one per line).
    """
    root = Path(book_dir) if book_dir is not None else default_claims_path().parent
    refs = glue_references(claims)
    found: dict[str, tuple[frozenset[str], tuple[re.Pattern[str], ...]] | None] = {}
    problems: list[str] = []
    for claim_id, ref in refs:
        if ref.doc not in found:
            chapter = root / ref.doc
            found[ref.doc] = chapter_glue_keys(chapter) if chapter.is_file() else None
        defined = found[ref.doc]
        if defined is None:
            problems.append(f"claim {claim_id!r}: glue reference to {ref.doc!r}, which does not exist")
            continue
        keys, templates = defined
        if ref.key not in keys and not any(t.fullmatch(ref.key) for t in templates):
            problems.append(f"claim {claim_id!r}: {ref.doc!r} does not glue the key {ref.key!r}")
    if problems:
        raise ValueError("claims register: unresolved glue references:\n" + "\n".join(problems))
    return refs


@dataclass(frozen=True)
class BookLabel:
    """Where a book label is defined and the role that links to it.

    Attributes
    ----------
    doc : str
        The document, relative to the book directory, without suffix (e.g. ``"idldp"``).
    role : str
        ``"ref"`` for a target ``(label)=`` or a labelled directive other than the two below,
        ``"prf:ref"`` for a sphinx-proof directive (theorem, lemma, ...) and ``"eq"`` for a
        labelled equation.
    """

    doc: str
    role: str


_TARGET = re.compile(r"^\((?P<label>[A-Za-z0-9_.:-]+)\)=\s*$")
_DIRECTIVE = re.compile(r"^(?:`{3,}|~{3,}|:{3,})\{(?P<name>[^}]+)\}")
_OPTION_LABEL = re.compile(r"^:label:\s*(?P<label>[A-Za-z0-9_.:-]+)\s*$")
_EQUATION = re.compile(r"^\$\$.*\((?P<label>[A-Za-z0-9_.:-]+)\)\s*$")


def book_labels(book_dir: str | os.PathLike[str] | None = None) -> dict[str, BookLabel]:
    """Find the labels defined in the book's MyST sources.

    Parameters
    ----------
    book_dir : str or path-like, optional
        Directory of the chapters (searched recursively for ``*.md``); defaults to the
        directory of :func:`default_claims_path`.

    Returns
    -------
    dict
        Maps each label to its :class:`BookLabel`: every ``(label)=`` target, every
        ``:label:`` option of a directive and the label written after the closing dollar
        signs of a display equation.

    Examples
    --------
    >>> labels = book_labels()
    >>> labels["scorecard"]
    BookLabel(doc='scorecard', role='ref')
    """
    root = Path(book_dir) if book_dir is not None else default_claims_path().parent
    labels: dict[str, BookLabel] = {}
    for path in sorted(root.rglob("*.md")):
        if any(part.startswith((".", "_")) for part in path.relative_to(root).parts):
            continue
        doc = path.relative_to(root).with_suffix("").as_posix()
        directive = ""
        for line in path.read_text(encoding="utf-8").splitlines():
            if (match := _DIRECTIVE.match(line)) is not None:
                directive = match["name"].strip()
            elif (match := _TARGET.match(line)) is not None:
                labels.setdefault(match["label"], BookLabel(doc, "ref"))
            elif (match := _OPTION_LABEL.match(line)) is not None:
                role = "prf:ref" if directive.startswith("prf:") else "eq" if directive == "math" else "ref"
                labels.setdefault(match["label"], BookLabel(doc, role))
            elif (match := _EQUATION.match(line)) is not None:
                labels.setdefault(match["label"], BookLabel(doc, "eq"))
    return labels


# ----------------------------------------------------------------------------- MyST rendering
def _escape_literal(text: str) -> str:
    return "".join(f"\\{char}" if char in _MARKDOWN_SPECIAL else char for char in text)


def myst_inline(text: str | None, *, doc_root: str = BOOK_DOC_ROOT) -> str:
    """Render a register text as one line of MyST Markdown.

    Inline math and roles are kept; glue references are rewritten so that their document is
    under ``doc_root``; everything else is escaped, so it shows literally.

    Parameters
    ----------
    text : str or None
        A statement, location or note (``None`` gives the empty string).
    doc_root : str, optional
        Prefix for the documents of glue references (default :data:`BOOK_DOC_ROOT`).

    Returns
    -------
    str
        The MyST text, on one line.

    Raises
    ------
    ValueError
        If the text holds unpaired dollar signs, a malformed role or glue reference.

    Examples
    --------
    >>> print(myst_inline("a_i * b_i <= $e^{\\\\varepsilon}$ (see {ref}`scorecard`)"))
    a\\_i \\* b\\_i \\<= $e^{\\varepsilon}$ (see {ref}`scorecard`)
    >>> print(myst_inline("{glue:text}`idldp.md::t1_ours_best:.2f`$\\\\,n$"))
    {glue:text}`/book/idldp.md::t1_ours_best:.2f`$\\,n$
    """
    if not text:
        return ""
    line = " ".join(text.split())
    _check_markup(line, allow_glue=True)
    out: list[str] = []
    position = 0
    for match in _SEGMENT.finditer(line):
        out.append(_escape_literal(line[position : match.start()]))
        position = match.end()
        if match["name"] == "glue:text":
            out.append(parse_glue_reference(match["content"]).role(doc_root))
        else:
            out.append(match.group(0))
    out.append(_escape_literal(line[position:]))
    rendered = "".join(out)
    if (start := _BLOCK_START.match(rendered)) is not None:
        # a cell or list item that begins like a list, quote, heading or definition: escape the
        # marker (a backslash escapes punctuation only, so "1." becomes "1\.")
        marker = start.group(0).rstrip()
        cut = len(marker) - 1
        rendered = rendered[:cut] + "\\" + rendered[cut:]
    return rendered


def _badge(status: str) -> str:
    return f"{{{STATUS_BADGES[status]}}}`{status}`"


def _evidence_link(label: str | None, labels: Mapping[str, BookLabel]) -> str:
    if not label:
        return ""
    found = labels.get(label)
    # an unknown label still becomes a reference, so the nitpicky build reports it
    role = found.role if found is not None else "ref"
    return f"{{{role}}}`{label}`"


def _list_table(title: str | None, header: Sequence[str], rows: Sequence[Sequence[str]], *,
                widths: Sequence[int] | None, css_class: str) -> str:
    lines = [f"```{{list-table}}{(' ' + title) if title else ''}", ":header-rows: 1", f":class: {css_class}"]
    if widths is not None:
        lines.append(":widths: " + " ".join(str(w) for w in widths))
    lines.append("")
    for row in (header, *rows):
        if len(row) != len(header):
            raise ValueError(f"row {list(row)!r} has {len(row)} cells, header has {len(header)}")
        for position, cell in enumerate(row):
            bullet = "* - " if position == 0 else "  - "
            first, *more = cell.split("\n")
            lines.append((bullet + first).rstrip())
            # further paragraphs of a cell are indented to the cell's content column
            lines.extend(("    " + line).rstrip() for line in more)
    lines.append("```")
    return "\n".join(lines)


def summary_table(claims: Iterable[Claim]) -> str:
    """Return the per-paper status counts as a MyST ``list-table``.

    Parameters
    ----------
    claims : iterable of Claim

    Returns
    -------
    str
        MyST Markdown: a table with one row per paper and a total row, one column per status.

    Examples
    --------
    >>> [claim] = validate_claims([{"id": "lip-thm-1", "paper": "lip", "location": "Theorem 1",
    ...     "kind": "theorem", "statement": "s", "status": "pending", "evidence": None}])
    >>> lines = summary_table([claim]).splitlines()
    >>> lines[lines.index("* - LIP (Jiang et al., CNS 2018)"):][:6]
    ['* - LIP (Jiang et al., CNS 2018)', '  - 1', '  - 0', '  - 0', '  - 0', '  - 1']
    >>> lines[-7:-1]
    ['* - **total**', '  - 1', '  - 0', '  - 0', '  - 0', '  - 1']
    """
    header, rows = summary_rows(claims)
    titles = {**PAPER_TITLES, "total": "**total**"}
    cells = [[titles[str(row[0])], *(str(value) for value in row[1:])] for row in rows]
    return _list_table(None, [header[0], *(_badge(s) for s in STATUSES), header[-1]], cells,
                       widths=None, css_class="scorecard-counts")


#: Columns :func:`register_table` can show, with their headers and relative widths. ``claim``
#: stacks the location, the id, the status badge and the evidence link in one cell.
_REGISTER_COLUMNS: dict[str, tuple[str, int]] = {
    "claim": ("claim", 24),
    "id": ("id", 14),
    "paper": ("paper", 10),
    "location": ("location", 12),
    "kind": ("kind", 8),
    "statement": ("statement", 36),
    "status": ("status", 9),
    "evidence": ("evidence", 12),
    "note": ("note", 40),
}


def register_table(
    claims: Iterable[Claim],
    *,
    paper: str | None = None,
    columns: Sequence[str] = ("claim", "statement", "note"),
    labels: Mapping[str, BookLabel] | None = None,
    title: str | None = None,
    doc_root: str = BOOK_DOC_ROOT,
) -> str:
    """Return the register (or one paper's part of it) as a MyST ``list-table``.

    The table is meant to be glued as Markdown and pasted with ``:format: myst`` (see
    :func:`chapter_box`), so that its roles and math are parsed: the status is a badge, the
    evidence label a cross-reference that fails a nitpicky build if the label does not
    exist, statements and notes keep their inline math, and the glue references of notes
    paste the values the chapters compute.

    Parameters
    ----------
    claims : iterable of Claim
    paper : str, optional
        Keep only this paper's claims (one of :data:`PAPERS`).
    columns : sequence of str
        What to show, in order: claim fields, or ``"claim"``, one cell that stacks the
        location, the id, the status badge and the evidence link (the default layout, which
        leaves most of the width to the statement and the note).
    labels : mapping, optional
        Where the evidence labels are defined, to choose the reference role; defaults to
        :func:`book_labels` of the book directory. An unknown label gets a ``ref`` role.
    title : str, optional
        Table caption.
    doc_root : str, optional
        Prefix for the documents of glue references (default :data:`BOOK_DOC_ROOT`).

    Returns
    -------
    str
        MyST Markdown for the table (class ``scorecard-register``).

    Raises
    ------
    ValueError
        If ``paper`` or a column is unknown, or if no claim is left to show.

    Examples
    --------
    >>> [claim] = validate_claims([{
    ...     "id": "idldp-lemma-1", "paper": "idldp", "location": "Lemma 1, Sec. IV-B", "kind": "lemma",
    ...     "statement": "$\\\\min \\\\mathcal{E}$-LDP implies MinID-LDP", "status": "reproduced",
    ...     "evidence": "lem-minid-ldp",
    ... }])
    >>> print(register_table([claim], columns=("claim", "statement"),
    ...                      labels={"lem-minid-ldp": BookLabel("idldp", "prf:ref")}))
    ```{list-table}
    :header-rows: 1
    :class: scorecard-register
    :widths: 24 36
    <BLANKLINE>
    * - claim
      - statement
    * - **Lemma 1, Sec. IV-B**
    <BLANKLINE>
        idldp-lemma-1
    <BLANKLINE>
        {bdg-success}`reproduced` {prf:ref}`lem-minid-ldp`
      - $\\min \\mathcal{E}$-LDP implies MinID-LDP
    ```
    """
    if paper is not None and paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; expected one of {PAPERS}")
    for column in columns:
        if column not in _REGISTER_COLUMNS:
            raise ValueError(f"unknown claim column {column!r}; expected one of {tuple(_REGISTER_COLUMNS)}")
    chosen = [claim for claim in claims if paper is None or claim.paper == paper]
    if not chosen:
        raise ValueError(f"no claims to show{f' for paper {paper!r}' if paper else ''}")
    known = book_labels() if labels is None else labels

    def cell(claim: Claim, column: str) -> str:
        if column == "claim":
            parts = [f"**{myst_inline(claim.location, doc_root=doc_root)}**", claim.id, _badge(claim.status)]
            if claim.evidence:
                parts[-1] += " " + _evidence_link(claim.evidence, known)
            return "\n\n".join(parts)
        if column == "id":
            return f"`{claim.id}`"
        if column == "status":
            return _badge(claim.status)
        if column == "evidence":
            return _evidence_link(claim.evidence, known)
        if column == "paper":
            return myst_inline(PAPER_TITLES[claim.paper])
        return myst_inline(getattr(claim, column), doc_root=doc_root)

    return _list_table(
        title,
        [_REGISTER_COLUMNS[column][0] for column in columns],
        [[cell(claim, column) for column in columns] for claim in chosen],
        widths=[_REGISTER_COLUMNS[column][1] for column in columns] if len(columns) > 1 else None,
        css_class="scorecard-register",
    )


def chapter_box(
    paper: str,
    claims: Iterable[Claim],
    *,
    doc: str | None = None,
    labels: Mapping[str, BookLabel] | None = None,
    title: str | None = None,
    notes: bool = False,
    doc_root: str = BOOK_DOC_ROOT,
) -> str:
    """Return a MyST admonition summarising a paper's claims for a chapter.

    One bullet per claim, in register order: its location, its statement, its status badge
    and a link to its evidence, followed by a link to the Scorecard.

    Parameters
    ----------
    paper : str
        One of :data:`PAPERS`.
    claims : iterable of Claim
        Usually ``load_claims()``.
    doc : str, optional
        Keep only the claims whose evidence is defined in this document (relative to the book
        directory, without suffix, e.g. ``"idldp_experiments"``).
    labels : mapping, optional
        Where labels are defined; defaults to :func:`book_labels` of the book directory.
    title : str, optional
        Title of the box; by default it names the paper.
    notes : bool, optional
        Also show each claim's note, with its glued values (default ``False``).
    doc_root : str, optional
        Prefix for the documents of glue references in notes (default :data:`BOOK_DOC_ROOT`).

    Returns
    -------
    str
        MyST Markdown for an ``admonition`` with class ``claims-box``.

    Raises
    ------
    ValueError
        If ``paper`` is unknown or no claim is left to show.

    Notes
    -----
    Markdown displayed by a cell is rendered as CommonMark, which leaves roles and math raw.
    Glue the box as Markdown instead, and paste it with ``:format: myst`` so that it is parsed
    like the page itself. The recipe takes two cells of a MyST notebook chapter::

        ```{code-cell} ipython3
        :tags: [remove-cell]

        from IPython.display import Markdown
        from myst_nb import glue

        from ldpkit.claims import chapter_box, load_claims

        glue("claims_box", Markdown(chapter_box("idldp", load_claims(), doc="idldp")), display=False)
        ```

        ```{glue:md} claims_box
        :format: myst
        ```

    The ``glue`` key must be unique within the page. ``doc`` is the chapter's own name, so the
    box lists the claims whose evidence the chapter holds; leave it out to list every claim of
    the paper.

    Examples
    --------
    >>> [claim] = validate_claims([{
    ...     "id": "idldp-thm-3", "paper": "idldp", "location": "Theorem 3, Sec. V-C", "kind": "theorem",
    ...     "statement": "The IDUE estimator is unbiased.", "status": "reproduced",
    ...     "evidence": "sec-idue-unbiased",
    ... }])
    >>> print(chapter_box("idldp", [claim], labels={"sec-idue-unbiased": BookLabel("idldp", "ref")}))
    ```{admonition} Claims of ID-LDP (Gu et al., ICDE 2020) in the register
    :class: note claims-box
    <BLANKLINE>
    - **Theorem 3, Sec. V-C** (`idldp-thm-3`): The IDUE estimator is unbiased. {bdg-success}`reproduced`
      Evidence: {ref}`sec-idue-unbiased`.
    <BLANKLINE>
    Every claim of the four papers, with notes: {ref}`scorecard`.
    ```
    """
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; expected one of {PAPERS}")
    known = book_labels() if labels is None else labels

    def in_doc(claim: Claim) -> bool:
        found = known.get(claim.evidence) if claim.evidence is not None else None
        return doc is None or (found is not None and found.doc == doc)

    chosen = [claim for claim in claims if claim.paper == paper and in_doc(claim)]
    if not chosen:
        where = f" with evidence in {doc!r}" if doc is not None else ""
        raise ValueError(f"no claims of paper {paper!r}{where}")
    heading = title if title is not None else f"Claims of {PAPER_TITLES[paper]} in the register"
    lines = [f"```{{admonition}} {heading}", ":class: note claims-box", ""]
    for claim in chosen:
        item = f"- **{myst_inline(claim.location, doc_root=doc_root)}** (`{claim.id}`): "
        item += f"{myst_inline(claim.statement, doc_root=doc_root)} {_badge(claim.status)}"
        if claim.evidence:
            item += f" Evidence: {_evidence_link(claim.evidence, known)}."
        if notes and claim.note:
            item += f" {myst_inline(claim.note, doc_root=doc_root)}"
        lines.append(item)
    lines += ["", "Every claim of the four papers, with notes: {ref}`scorecard`.", "```"]
    return "\n".join(lines)
