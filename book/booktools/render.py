"""MyST rendering of the claims register: the Scorecard's tables and the chapters' boxes.

The Scorecard page (:ref:`scorecard`) pastes :func:`summary_table` and :func:`register_table`,
and a chapter pastes :func:`chapter_box`.  Each returns MyST Markdown, to be glued as Markdown
and pasted with ``:format: myst`` so that its roles and math are parsed like the page itself.
Every character of a statement, location or note that is not inline math or a role is literal
text: :func:`myst_inline` escapes the Markdown syntax around them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .labels import BookLabel, book_labels
from .markup import BOOK_DOC_ROOT, SEGMENT, check_markup, parse_glue_reference
from .register import PAPERS, STATUSES, Claim, summary_rows

__all__ = [
    "PAPER_TITLES",
    "STATUS_BADGES",
    "status_badge",
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


def _evidence_link(label: str | None, labels: Mapping[str, BookLabel]) -> str:
    if not label:
        return ""
    found = labels.get(label)
    # an unknown label still becomes a reference, so the nitpicky build reports it
    role = found.role if found is not None else "ref"
    return f"{{{role}}}`{label}`"


def list_table(title: str | None, header: Sequence[str], rows: Sequence[Sequence[str]], *,
               widths: Sequence[int] | None, css_class: str) -> str:
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
    >>> from booktools.register import validate_claims
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
    return list_table(None, [header[0], *(status_badge(s) for s in STATUSES), header[-1]], cells,
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
    >>> from booktools.register import validate_claims
    >>> [claim] = validate_claims([{
    ...     "id": "idldp-lemma-1", "paper": "idldp", "location": "Lemma 1, Sec. IV-B", "kind": "lemma",
    ...     "statement": "$\\\\min \\\\mathcal{E}$-LDP implies MinID-LDP", "status": "reproduced",
    ...     "evidence": "lem-minid-ldp",
    ... }])
    >>> print(register_table([claim], columns=("claim", "statement"),
    ...                      labels={"lem-minid-ldp": BookLabel("lem-minid-ldp", "idldp", "prf", 1)}))
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
            parts = [f"**{myst_inline(claim.location, doc_root=doc_root)}**", claim.id, status_badge(claim.status)]
            if claim.evidence:
                parts[-1] += " " + _evidence_link(claim.evidence, known)
            return "\n\n".join(parts)
        if column == "id":
            return f"`{claim.id}`"
        if column == "status":
            return status_badge(claim.status)
        if column == "evidence":
            return _evidence_link(claim.evidence, known)
        if column == "paper":
            return myst_inline(PAPER_TITLES[claim.paper])
        return myst_inline(getattr(claim, column), doc_root=doc_root)

    return list_table(
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
        item += f"{myst_inline(claim.statement, doc_root=doc_root)} {status_badge(claim.status)}"
        if claim.evidence:
            item += f" Evidence: {_evidence_link(claim.evidence, known)}."
        if notes and claim.note:
            item += f" {myst_inline(claim.note, doc_root=doc_root)}"
        lines.append(item)
    lines += ["", "Every claim of the four papers, with notes: {ref}`scorecard`.", "```"]
    return "\n".join(lines)
