"""What the chapters' code cells glue, and the check that the register's glue references resolve.

A register note quotes a computed number through a glue reference to the chapter that computes
it (:mod:`booktools.markup`).  :func:`chapter_glue_keys` reads, without running anything, the
keys a chapter glues: ``glue("key", ...)`` calls with a string literal, f-string keys as
patterns, and the caption facts of an experiment result glued by
:func:`booktools.chapters.glue_facts`; :func:`check_glue_references` checks every reference of
the register against them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

from .labels import BOOK_DIR
from .markup import GlueReference
from .register import Claim, glue_references

__all__ = ["code_cells", "chapter_glue_keys", "check_glue_references"]

_CODE_CELL = re.compile(
    r"^(?P<fence>`{3,}|~{3,})\{code-cell\}[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.MULTILINE | re.DOTALL
)
_GLUE_CALL = re.compile(r"\bglue\(\s*(?P<prefix>[rRbBuUfF]{0,2})(?P<quote>[\"'])(?P<key>[^\"'\n]*)(?P=quote)")
#: ``glue_facts(fig3, "fig3")`` (:func:`booktools.chapters.glue_facts`): the chapter glues the
#: result's caption facts as ``fig3_<fact>``
_GLUE_FACTS_CALL = re.compile(r"\bglue_facts\(\s*[\w.]+\s*,\s*(?P<quote>[\"'])(?P<key>\w+)(?P=quote)\s*\)")
#: ``show_result(fig3, "fig3", "fig-fldp-3")`` (:func:`booktools.chapters.show_result`): the facts
#: template ``fig3_<fact>`` and the figure's own key ``fig-fldp-3``
_SHOW_RESULT_CALL = re.compile(
    r"\bshow_result\(\s*[\w.]+\s*,\s*(?P<q1>[\"'])(?P<key>\w+)(?P=q1)\s*,\s*(?P<q2>[\"'])(?P<label>[^\"'\n]+)(?P=q2)\s*\)"
)


def code_cells(path: str | os.PathLike[str]) -> list[str]:
    """The source of every code cell of a MyST notebook (``.md``) or a Jupyter notebook (``.ipynb``)."""
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    if file.suffix == ".ipynb":
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
        ``glue_facts(fig3, "fig3")`` (an experiment result's caption facts glued under a key).

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
    >>> _ = chapter.write_text('```{code-cell} ipython3\\nfor k, v in glue_facts(fig3, "fig3").items():\\n'
    ...                        '    glue(k, v, display=False)\\n```\\n')
    >>> [t.pattern for t in chapter_glue_keys(chapter)[1]]
    ['fig3_.+']
    """
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"chapter not found: {str(file)!r}")
    keys: set[str] = set()
    templates: list[re.Pattern[str]] = []
    for body in code_cells(file):
        for match in _GLUE_CALL.finditer(body):
            key, prefix = match["key"], match["prefix"].lower()
            if "f" in prefix and "{" in key:
                parts = re.split(r"\{[^{}]*\}", key)
                templates.append(re.compile(".+".join(re.escape(part) for part in parts)))
            else:
                keys.add(key)
        for match in _GLUE_FACTS_CALL.finditer(body):
            templates.append(re.compile(re.escape(match["key"] + "_") + ".+"))
        for match in _SHOW_RESULT_CALL.finditer(body):
            templates.append(re.compile(re.escape(match["key"] + "_") + ".+"))
            keys.add(match["label"])
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
        defaults to :data:`booktools.labels.BOOK_DIR`.

    Returns
    -------
    list of (str, GlueReference)
        The references checked, as :func:`booktools.register.glue_references` lists them.

    Raises
    ------
    ValueError
        Naming every reference whose chapter does not exist or does not glue the key (the
        message lists them all, one per line).
    """
    root = Path(book_dir) if book_dir is not None else BOOK_DIR
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
