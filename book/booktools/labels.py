"""The one parser of the labels the book's MyST sources define.

Three kinds of definition make a label that a cross-reference can name:

* a target line ``(name)=``; it takes ``{ref}``, and is a *section* label when the next
  non-blank line is a heading, else a bare *target* (a ``{ref}`` to it needs an explicit title);
* a ``:label:`` option of a directive: a sphinx-proof directive (``{prf:theorem}``,
  ``{prf:lemma}``, ...) makes a *prf* label (``{prf:ref}``), a ``{math}`` directive an *eq*
  label (``{eq}``), any other directive (a figure, a table) a *target*;
* a label written after the closing dollar signs of a display equation, ``$$ (name)``: an *eq*
  label.

Fences are tracked as CommonMark and MyST nest them: a backtick, tilde or colon fence opens a
block that only a fence of the same character and at least the same length closes.  Nothing
inside a literal block (a fence without a directive, or a ``{code-cell}`` / ``{code-block}``)
defines a label.  Every ``*.md`` file below the book directory is read, except those whose
name, or the name of a directory on their path, starts with ``.`` or ``_`` (build output,
checkpoints).  When a label is defined twice, the first definition counts (Sphinx warns about
the second).

The Scorecard and the chapter boxes use this parser to choose the role of each evidence link,
and the test of ldpkit's docstrings uses it to check that every label a docstring names exists.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BOOK_DIR", "ROLES", "BookLabel", "book_labels"]

#: The book directory: the chapters, the register ``claims.yml`` and this package.
BOOK_DIR: Path = Path(__file__).resolve().parent.parent
#: The cross-reference role each kind of label takes.
ROLES: dict[str, str] = {"section": "ref", "target": "ref", "prf": "prf:ref", "eq": "eq"}

_TARGET = re.compile(r"^\((?P<label>[A-Za-z0-9_.:-]+)\)=$")
_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
_DIRECTIVE = re.compile(r"^\{(?P<name>[^}\s]+)\}")
_OPTION_LABEL = re.compile(r"^:label:\s*(?P<label>\S+)$")
_EQUATION = re.compile(r"\$\$\s*\((?P<label>[A-Za-z0-9_.:-]+)\)$")
#: directives whose content is code, not MyST
_LITERAL_DIRECTIVES = frozenset({"code-cell", "code-block", "code", "sourcecode"})


@dataclass(frozen=True)
class BookLabel:
    """Where a book label is defined, and the reference it takes.

    Attributes
    ----------
    label : str
        The label.
    doc : str
        The document, relative to the book directory, without suffix (``"idldp"``,
        ``"api/index"``).
    kind : str
        ``"section"`` (a target before a heading), ``"target"`` (a target elsewhere, or the
        ``:label:`` of a directive other than the two below), ``"prf"`` (a sphinx-proof
        directive) or ``"eq"`` (a ``{math}`` directive or a labelled display equation).
    line : int
        The line of the definition (1-based).

    Examples
    --------
    >>> label = BookLabel("lem-minid-ldp", "idldp", "prf", 212)
    >>> label.role, label.where
    ('prf:ref', 'idldp.md:212')
    """

    label: str
    doc: str
    kind: str
    line: int

    @property
    def role(self) -> str:
        """The MyST role that links to the label (``ref``, ``prf:ref`` or ``eq``)."""
        return ROLES[self.kind]

    @property
    def where(self) -> str:
        """``<doc>.md:<line>``, relative to the book directory."""
        return f"{self.doc}.md:{self.line}"


def _labels_of(text: str, doc: str) -> list[BookLabel]:
    lines = text.splitlines()
    found: list[BookLabel] = []
    # open fences, innermost last: (character, length, directive name or None for a code fence)
    stack: list[tuple[str, int, str | None]] = []
    for index, raw in enumerate(lines):
        line = raw.strip()
        fence = _FENCE.match(line)
        if fence is not None:
            char, length, info = fence["fence"][0], len(fence["fence"]), fence["info"].strip()
            if stack and char == stack[-1][0] and length >= stack[-1][1] and not info:
                stack.pop()
                continue
            literal = bool(stack) and (stack[-1][2] is None or stack[-1][2] in _LITERAL_DIRECTIVES)
            if not literal:
                directive = _DIRECTIVE.match(info)
                stack.append((char, length, directive["name"] if directive else None))
                continue
        if stack and (stack[-1][2] is None or stack[-1][2] in _LITERAL_DIRECTIVES):
            continue  # code: no labels
        if (match := _TARGET.match(line)) is not None:
            following = next((nxt.strip() for nxt in lines[index + 1:] if nxt.strip()), "")
            kind = "section" if following.startswith("#") else "target"
            found.append(BookLabel(match["label"], doc, kind, index + 1))
        elif (match := _OPTION_LABEL.match(line)) is not None and stack:
            name = stack[-1][2] or ""
            kind = "prf" if name.startswith("prf:") else "eq" if name == "math" else "target"
            found.append(BookLabel(match["label"], doc, kind, index + 1))
        elif (match := _EQUATION.search(line)) is not None:
            found.append(BookLabel(match["label"], doc, "eq", index + 1))
    return found


def book_labels(book_dir: str | os.PathLike[str] | None = None) -> dict[str, BookLabel]:
    """Find every label the book's MyST sources define (the module docstring lists the rules).

    Parameters
    ----------
    book_dir : str or path-like, optional
        The directory of the chapters, searched recursively for ``*.md``; defaults to
        :data:`BOOK_DIR`.

    Returns
    -------
    dict
        Maps each label to its :class:`BookLabel`, in file and line order.

    Examples
    --------
    >>> labels = book_labels()
    >>> labels["scorecard"].doc, labels["scorecard"].kind, labels["scorecard"].role
    ('scorecard', 'section', 'ref')
    """
    root = Path(book_dir) if book_dir is not None else BOOK_DIR
    labels: dict[str, BookLabel] = {}
    for path in sorted(root.rglob("*.md")):
        relative = path.relative_to(root)
        if any(part.startswith((".", "_")) for part in relative.parts):
            continue
        for label in _labels_of(path.read_text(encoding="utf-8"), relative.with_suffix("").as_posix()):
            labels.setdefault(label.label, label)
    return labels
