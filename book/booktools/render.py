"""MyST rendering of the claims register: the Scorecard's tables and the chapters' boxes.

The Scorecard page (:ref:`scorecard`) pastes :func:`status_definitions`, :func:`summary_table`
and :func:`register_table`, and a chapter pastes :func:`chapter_box`.  Each returns MyST
Markdown, to be glued as Markdown and pasted with ``:format: myst`` so that its roles and math
are parsed like the page itself. Every character of a statement, location, note or corrected
result that is not inline math or a role is literal text: :func:`myst_inline` escapes the
Markdown syntax around them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .labels import BookLabel, book_labels
from .markup import BOOK_DOC_ROOT, SEGMENT, check_markup, parse_glue_reference
from .register import DATA_QUALIFIERS, PAPERS, STATUS_DEFINITIONS, STATUSES, Claim, summary_rows

__all__ = [
    "PAPER_TITLES",
    "STATUS_BADGES",
    "DATA_BADGE",
    "status_badge",
    "data_badge",
    "claim_badges",
    "status_definitions",
    "EMPTY_CELL",
    "EVIDENCE_TEXT",
    "NOTE_TITLE",
    "to_markdown_table",
    "list_table",
    "myst_inline",
    "summary_table",
    "register_table",
    "chapter_box",
]

#: How the book names each paper (table captions, box titles).
PAPER_TITLES: dict[str, str] = {
    "idldp": "ID-LDP (Gu et al., ICDE 2020)",
    "ipldp": "IPLDP (Li et al., LNCS and Preprints.org 2023)",
    "fldp": "FLDP (Zhao et al., ICASSP 2022)",
    "lip": "LIP (Jiang et al., CNS 2018)",
}
#: The sphinx-design badge role that shows each status (keys: the statuses of
#: :data:`booktools.register.STATUS_DEFINITIONS`, in its order). Solid green: agrees with the
#: printed result; green outline: holds, nothing printed to compare with; red outline: a slip
#: whose intended statement holds; solid red: refuted; amber: differs; grey outline: pending.
STATUS_BADGES: dict[str, str] = {
    "reproduced": "bdg-success",
    "re-derived": "bdg-success-line",
    "slip": "bdg-danger-line",
    "refuted": "bdg-danger",
    "differs": "bdg-warning",
    "pending": "bdg-secondary-line",
}
#: The sphinx-design badge role of a data qualifier (:data:`booktools.register.DATA_QUALIFIERS`).
DATA_BADGE: str = "bdg-info-line"
#: Characters escaped in literal text; CommonMark lets a backslash escape any ASCII punctuation.
_MARKDOWN_SPECIAL = set("\\`*_[]<>{}#&|!~$")
_BLOCK_START = re.compile(r"^(?:[-+*:>#=]|\d+[.)])(?:\s|$)")


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
    check_markup(line, allow_glue=True)
    out: list[str] = []
    position = 0
    for match in SEGMENT.finditer(line):
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


def status_badge(status: str) -> str:
    """The sphinx-design badge of a status (:data:`STATUS_BADGES`), e.g. ``{bdg-success}`reproduced```."""
    return f"{{{STATUS_BADGES[status]}}}`{status}`"


def data_badge(data: str | None) -> str:
    """The badge of a data qualifier (its label, :data:`DATA_BADGE`), or ``""`` for none.

    Examples
    --------
    >>> data_badge("stand-in"), data_badge(None)
    ('{bdg-info-line}`on a stand-in`', '')
    """
    if data is None:
        return ""
    return f"{{{DATA_BADGE}}}`{DATA_QUALIFIERS[data][0]}`"


def claim_badges(claim: Claim) -> str:
    """The status badge of a claim, followed by its data qualifier's badge if it has one."""
    return " ".join(badge for badge in (status_badge(claim.status), data_badge(claim.data)) if badge)


def status_definitions() -> str:
    """The status vocabulary and the data qualifiers as a MyST ``list-table``: badge | meaning.

    Rendered from :data:`booktools.register.STATUS_DEFINITIONS` and
    :data:`booktools.register.DATA_QUALIFIERS`, so the Scorecard's definitions are the
    register's own (class ``scorecard-statuses``).

    Examples
    --------
    >>> rows = status_definitions().split("\\n* - ")[1:]
    >>> rows[0].splitlines()
    ['status', '  - meaning']
    >>> rows[1].splitlines()[0], rows[-1].splitlines()[0]
    ('{bdg-success}`reproduced`', '{bdg-info-line}`partly on a stand-in`')
    """
    rows = [[status_badge(status), text] for status, text in STATUS_DEFINITIONS.items()]
    rows += [[data_badge(key), text] for key, (_, text) in DATA_QUALIFIERS.items()]
    return list_table(None, ["status", "meaning"], rows, widths=(22, 78), css_class="scorecard-statuses")


#: The text of a section's evidence link in the register table (theorems and equations keep
#: their numbers, e.g. "Theorem 8"; a section title would take several lines of the narrow column).
EVIDENCE_TEXT: str = "evidence"


def _evidence_link(label: str | None, labels: Mapping[str, BookLabel], *, short: bool = False) -> str:
    if not label:
        return ""
    found = labels.get(label)
    # an unknown label still becomes a reference, so the nitpicky build reports it
    role = found.role if found is not None else "ref"
    if short and role == "ref":
        return f"{{ref}}`{EVIDENCE_TEXT} <{label}>`"
    return f"{{{role}}}`{label}`"


def list_table(title: str | None, header: Sequence[str], rows: Sequence[Sequence[str]], *,
               widths: Sequence[int] | None, css_class: str, width: str | None = None) -> str:
    """A MyST ``list-table`` with one header row.

    Parameters
    ----------
    title : str or None
        The table's caption.
    header, rows : sequence of sequence of str
        The cells; a cell may hold several paragraphs separated by line breaks.
    widths : sequence of int or None
        Relative column widths (``:widths:``), or ``None`` for Sphinx's default.
    css_class : str
        The table's HTML class.
    width : str, optional
        The table's width (``:width:``, e.g. ``"100%"``); by default the table is as wide as its
        content needs.

    Raises
    ------
    ValueError
        If a row does not have as many cells as the header.

    Examples
    --------
    >>> print(list_table(None, ["a", "b"], [["1", "x"]], widths=None, css_class="demo"))
    ```{list-table}
    :header-rows: 1
    :class: demo
    <BLANKLINE>
    * - a
      - b
    * - 1
      - x
    ```
    """
    lines = [f"```{{list-table}}{(' ' + title) if title else ''}", ":header-rows: 1", f":class: {css_class}"]
    if widths is not None:
        lines.append(":widths: " + " ".join(str(w) for w in widths))
    if width is not None:
        lines.append(f":width: {width}")
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
        MyST Markdown: a table with one row per paper (its short name, e.g. "LIP") and a total
        row, one column per status.

    Examples
    --------
    >>> from booktools.register import validate_claims
    >>> [claim] = validate_claims([{"id": "lip-thm-1", "paper": "lip", "location": "Theorem 1",
    ...     "kind": "theorem", "statement": "s", "status": "pending", "evidence": None}])
    >>> lines = summary_table([claim]).splitlines()
    >>> lines[lines.index("* - LIP"):][:8]
    ['* - LIP', '  - 0', '  - 0', '  - 0', '  - 0', '  - 0', '  - 1', '  - 1']
    >>> lines[-9:-1]
    ['* - **total**', '  - 0', '  - 0', '  - 0', '  - 0', '  - 0', '  - 1', '  - 1']
    """
    header, rows = summary_rows(claims)
    titles = {**{paper: title.split(" (")[0] for paper, title in PAPER_TITLES.items()}, "total": "**total**"}
    cells = [[titles[str(row[0])], *(str(value) for value in row[1:])] for row in rows]
    return list_table(None, [header[0], *(status_badge(s) for s in STATUSES), header[-1]], cells,
                       widths=None, css_class="scorecard-counts")


#: Columns :func:`register_table` can show, with their headers and relative widths. ``claim``
#: stacks the location, the id, and the status badge with the data qualifier and the evidence
#: link in one cell; ``corrected`` is the corrected result (an em dash where there is none).
#: The widths hold as long as no inline formula is wider than its column (a formula does not
#: wrap): corrected results write long formulas with ``\frac`` or in parts.
_REGISTER_COLUMNS: dict[str, tuple[str, int]] = {
    "claim": ("claim", 27),
    "id": ("id", 14),
    "paper": ("paper", 10),
    "location": ("location", 12),
    "kind": ("kind", 8),
    "statement": ("statement", 48),
    "status": ("status", 9),
    "data": ("data", 9),
    "evidence": ("evidence", 12),
    "note": ("note", 40),
    "corrected": ("corrected result", 25),
}
#: What an empty cell shows (a claim with no corrected result or no note).
EMPTY_CELL: str = "\u2014"
#: Title of the collapsed dropdown that holds a claim's note under its statement.
NOTE_TITLE: str = "Note"


#: The options of the note's dropdown: no outer margin and a slim title bar, so that a folded
#: note adds one short line to its row; class ``scorecard-note`` for the book's stylesheet.
_NOTE_OPTIONS: tuple[str, ...] = (
    ":margin: 0",
    ":class-container: scorecard-note sd-shadow-none",
    ":class-title: sd-py-1",
)


def _note_dropdown(note: str) -> str:
    """A collapsed sphinx-design dropdown holding a note (MyST, several lines)."""
    return "\n".join([f":::{{dropdown}} {NOTE_TITLE}", *_NOTE_OPTIONS, "", note, ":::"])


def register_table(
    claims: Iterable[Claim],
    *,
    paper: str | None = None,
    columns: Sequence[str] = ("claim", "statement", "corrected"),
    labels: Mapping[str, BookLabel] | None = None,
    title: str | None = None,
    fold_notes: bool = True,
    doc_root: str = BOOK_DOC_ROOT,
) -> str:
    """Return the register (or one paper's part of it) as a MyST ``list-table``, one row per claim.

    The table is meant to be glued as Markdown and pasted with ``:format: myst`` (see
    :func:`chapter_box`), so that its roles, math and directives are parsed: the status is a
    badge, followed by the data qualifier's badge if the claim has one; the evidence label is a
    cross-reference that fails a nitpicky build if the label does not exist; statements, notes
    and corrected results keep their inline math, and glue references paste the values the
    chapters compute.

    Parameters
    ----------
    claims : iterable of Claim
    paper : str, optional
        Keep only this paper's claims (one of :data:`PAPERS`).
    columns : sequence of str
        What to show, in order: claim fields, ``"claim"`` (one paragraph of three lines joined
        by hard line breaks: the location in bold, the id, and the badges followed by the
        evidence link, whose text is :data:`EVIDENCE_TEXT` for a section and the number for a
        theorem or an equation), ``"corrected"`` (the corrected result, :data:`EMPTY_CELL` for
        none) or ``"note"``. The default, claim | statement | corrected, leaves most of the
        width to the statement; the table spans the column (``:width: 100%``).
    labels : mapping, optional
        Where the evidence labels are defined, to choose the reference role; defaults to
        :func:`book_labels` of the book directory. An unknown label gets a ``ref`` role.
    title : str, optional
        Table caption.
    fold_notes : bool, optional
        When ``"note"`` is not a column, put each claim's note in a collapsed dropdown (titled
        :data:`NOTE_TITLE`, class ``scorecard-note``) under its statement (default ``True``).
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
    >>> from booktools.register import validate_claims
    >>> [claim] = validate_claims([{
    ...     "id": "ipldp-thm-6", "paper": "ipldp", "location": "Theorem 6", "kind": "theorem",
    ...     "statement": "The worst-case $l_2$ loss is $(1 - 1/|\\\\mathcal{D}|)/S^2$.", "status": "slip",
    ...     "evidence": "thm-ipldp-low", "corrected": "$(1 - 1/|\\\\mathcal{D}|)/(n S^2)$",
    ...     "note": "The printed formula drops the $1/n$.", "data": "partly stand-in",
    ... }])
    >>> print(register_table([claim], labels={"thm-ipldp-low": BookLabel("thm-ipldp-low", "ipldp", "prf", 1)}))
    ```{list-table}
    :header-rows: 1
    :class: scorecard-register
    :widths: 27 48 25
    :width: 100%
    <BLANKLINE>
    * - claim
      - statement
      - corrected result
    * - **Theorem 6**\\
        ipldp-thm-6\\
        {bdg-danger-line}`slip` {bdg-info-line}`partly on a stand-in` {prf:ref}`thm-ipldp-low`
      - The worst-case $l_2$ loss is $(1 - 1/|\\mathcal{D}|)/S^2$.
    <BLANKLINE>
        :::{dropdown} Note
        :margin: 0
        :class-container: scorecard-note sd-shadow-none
        :class-title: sd-py-1
    <BLANKLINE>
        The printed formula drops the $1/n$.
        :::
      - $(1 - 1/|\\mathcal{D}|)/(n S^2)$
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
    fold = fold_notes and "note" not in columns

    def cell(claim: Claim, column: str) -> str:
        if column == "claim":
            # one paragraph of three lines (hard line breaks): location, id, badges and evidence
            parts = [f"**{myst_inline(claim.location, doc_root=doc_root)}**", claim.id, claim_badges(claim)]
            if claim.evidence:
                parts[-1] += " " + _evidence_link(claim.evidence, known, short=True)
            return "\\\n".join(parts)
        if column == "id":
            return f"`{claim.id}`"
        if column == "status":
            return status_badge(claim.status)
        if column == "data":
            return data_badge(claim.data)
        if column == "evidence":
            return _evidence_link(claim.evidence, known)
        if column == "paper":
            return myst_inline(PAPER_TITLES[claim.paper])
        if column == "corrected":
            return myst_inline(claim.corrected, doc_root=doc_root) or EMPTY_CELL
        text = myst_inline(getattr(claim, column), doc_root=doc_root)
        if column == "statement" and fold and claim.note:
            text += "\n\n" + _note_dropdown(myst_inline(claim.note, doc_root=doc_root))
        return text

    return list_table(
        title,
        [_REGISTER_COLUMNS[column][0] for column in columns],
        [[cell(claim, column) for column in columns] for claim in chosen],
        widths=[_REGISTER_COLUMNS[column][1] for column in columns] if len(columns) > 1 else None,
        css_class="scorecard-register",
        width="100%",
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
    (with its data qualifier's badge, if any), a link to its evidence and, for a claim with a
    corrected result, that result; then a link to the Scorecard.

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
        Prefix for the documents of glue references in notes and corrected results (default
        :data:`BOOK_DOC_ROOT`).

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

        from booktools import chapter_box, load_claims

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
    >>> from booktools.register import validate_claims
    >>> [claim] = validate_claims([{
    ...     "id": "idldp-thm-3", "paper": "idldp", "location": "Theorem 3, Sec. V-C", "kind": "theorem",
    ...     "statement": "The IDUE estimator is unbiased.", "status": "reproduced",
    ...     "evidence": "sec-idue-unbiased",
    ... }])
    >>> labels = {"sec-idue-unbiased": BookLabel("sec-idue-unbiased", "idldp", "section", 1)}
    >>> print(chapter_box("idldp", [claim], labels=labels))
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
        item += f"{myst_inline(claim.statement, doc_root=doc_root)} {claim_badges(claim)}"
        if claim.evidence:
            item += f" Evidence: {_evidence_link(claim.evidence, known)}."
        if claim.corrected:
            item += f" Corrected: {myst_inline(claim.corrected, doc_root=doc_root)}"
        if notes and claim.note:
            item += f" {myst_inline(claim.note, doc_root=doc_root)}"
        lines.append(item)
    lines += ["", "Every claim of the four papers, with notes: {ref}`scorecard`.", "```"]
    return "\n".join(lines)
