"""The inline markup allowed in the claims register's text, and its glue references.

A statement, location or note of ``claims.yml`` may hold inline math between single dollar
signs and MyST roles (``{name}`` followed by its content in backticks); every other character
is literal text.  The dollar signs must pair up on one line: display math is not allowed.

A number the build computes is never typed into a note: the note pastes it from the chapter
that computes it with a cross-document glue reference, the ``glue:text`` role with the content
``<doc>::<key>:<format>``.  ``<doc>`` is the chapter's file relative to the register's
directory (``idldp_experiments.md``), ``<key>`` the name the chapter glues and ``<format>`` a
Python format specification ending in its type character (``.2f``, ``d``, ``s``).  Only notes
may hold glue references.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["BOOK_DOC_ROOT", "ROLE", "MATH", "SEGMENT", "GlueReference", "parse_glue_reference", "check_markup"]

#: The register's directory as Sphinx sees it (relative to the book's source root, which is the
#: repository root): glue references of the register are rewritten against it, so that they
#: resolve on whichever page the rendered register is pasted.
BOOK_DOC_ROOT: str = "/book/"

#: A MyST role in register text: ``{name}`` followed by its content in backticks.
ROLE = re.compile(r"\{(?P<name>[A-Za-z][\w:+.-]*)\}`(?P<content>[^`]*)`")
#: Inline math between single dollar signs (no dollar and no line break inside).
MATH = re.compile(r"\$(?P<body>[^$\n]+)\$")
#: A role or an inline formula: the segments of a text that are kept as they are when rendered.
SEGMENT = re.compile(f"{ROLE.pattern}|{MATH.pattern}")
_GLUE_CONTENT = re.compile(
    r"(?P<doc>[^:`\s][^:`]*?\.(?:md|ipynb))::(?P<key>[A-Za-z_][A-Za-z0-9_]*):(?P<fmt>[^:`]+)"
)


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


def check_markup(text: str, *, allow_glue: bool) -> list[GlueReference]:
    """Check the inline markup of a register text and return its glue references.

    Parameters
    ----------
    text : str
        A statement, location or note.
    allow_glue : bool
        Whether glue references are allowed (in notes only).

    Returns
    -------
    list of GlueReference
        In the order they appear.

    Raises
    ------
    ValueError
        For an unpaired dollar sign or display math, a malformed role, a glue role other than
        ``glue:text``, a malformed glue reference, or a glue reference where none is allowed.

    Examples
    --------
    >>> check_markup("gain {glue:text}`idldp.md::gain:.0f`% at $\\\\varepsilon = 1$", allow_glue=True)
    [GlueReference(doc='idldp.md', key='gain', fmt='.0f')]
    >>> check_markup("costs $5", allow_glue=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unpaired or display-math '$': ...
    """
    refs: list[GlueReference] = []
    rest = []
    position = 0
    for match in SEGMENT.finditer(text):
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
