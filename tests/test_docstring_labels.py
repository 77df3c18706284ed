"""Book labels named in ldpkit's docstrings: each one exists in the book.

Docstrings name the chapter and label that derive each formula.  A label the book defines is
written as a cross-reference, so the nitpicky book build (API reference part) fails when it points
nowhere:

* ``:ref:`` for a ``(name)=`` target (with an explicit title when the target does not precede a
  heading);
* ``:prf:ref:`` for a ``{prf:...}`` directive's ``:label:``;
* ``:eq:`` (or ``:math:numref:``) for a numbered equation ``$$ ... $$ (name)``.

Every chapter the docstrings name exists, so there are no forward references: a label-like literal
(``def-...``, ``thm-...``) must be one the book defines.  The labels the book defines are found by
the book's one label parser, :func:`booktools.labels.book_labels`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from booktools.labels import book_labels
from conftest import REPO

PACKAGE = REPO / "ldpkit"

#: a cross-reference role in a docstring: ``:role:`target``` or ``:role:`title <target>```
ROLE = re.compile(r":(?P<role>ref|prf:ref|eq|math:numref|numref):`(?P<body>[^`]+)`")
#: an inline literal that looks like a book label (``def-ldp``, ``thm-pure-variance``, ...)
LABEL_LITERAL = re.compile(r"``((?:def|thm|lem|eq|sec|alg|prop|cor|fig|tab|rem|ex)-[a-z0-9-]+)``")
#: the retired plain-text convention: "label ``x``" / "labels ``x``, ``y``"
PLAIN_LABEL = re.compile(r"\blabels?\s+``(?P<label>[A-Za-z0-9_:.-]+)``")


@dataclass(frozen=True)
class Docstring:
    where: str  # ldpkit/module.py:line (object)
    text: str


def docstrings() -> list[Docstring]:
    """Every module, class and function docstring of the package (private ones included)."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes: list[ast.AST] = [tree] + [
            n for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        for node in nodes:
            text = ast.get_docstring(node, clean=True)  # type: ignore[arg-type]
            if text:
                line = getattr(node, "lineno", 1)
                name = getattr(node, "name", "<module>")
                out.append(Docstring(f"{rel}:{line} ({name})", text))
    return out


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _role_target(body: str) -> tuple[str, bool]:
    """``(target, has_explicit_title)`` of a role's content."""
    m = re.fullmatch(r"(?s)(.*?)\s*<([^<>]+)>", body)
    return (m.group(2).strip(), True) if m and m.group(1).strip() else (body.strip(), False)


_ROLE_KINDS = {"ref": {"section", "target"}, "prf:ref": {"prf"}, "eq": {"eq"}, "math:numref": {"eq"},
               "numref": {"target"}}


def problems() -> list[str]:
    labels = book_labels()
    bad = []
    for doc in docstrings():
        text = _normalise(doc.text)
        for m in ROLE.finditer(text):
            target, titled = _role_target(m["body"])
            book = labels.get(target)
            if book is None:
                bad.append(f"{doc.where}: :{m['role']}:`{m['body']}` points to no label of book/*.md")
            elif book.kind not in _ROLE_KINDS[m["role"]]:
                bad.append(f"{doc.where}: :{m['role']}:`{target}` but {target!r} is a {book.kind} label "
                           f"(book/{book.where})")
            elif book.kind == "target" and not titled:
                bad.append(f"{doc.where}: :ref:`{target}` needs an explicit title ({target!r} does not precede "
                           f"a heading, book/{book.where})")
        for m in LABEL_LITERAL.finditer(text):
            label = m.group(1)
            if label not in labels:
                bad.append(f"{doc.where}: label ``{label}`` is not defined in book/*.md")
        for m in PLAIN_LABEL.finditer(text):
            label = m["label"]
            if label in labels:
                bad.append(f"{doc.where}: plain-text label ``{label}``: write it as a cross-reference "
                           f"({labels[label].kind} label at book/{labels[label].where})")
    return bad


# --------------------------------------------------------------------------- tests
def test_book_labels_are_found() -> None:
    labels = book_labels()
    # one of each kind, from chapters that are not going away
    assert labels["thm-pure-variance"].kind == "prf"
    assert labels["eq-grr"].kind == "eq"
    assert labels["sec-metrics"].kind == "section"
    assert labels["sec-synthetic-uniform"].kind == "target"


def test_docstrings_are_scanned() -> None:
    texts = [d.text for d in docstrings()]
    assert len(texts) > 200
    assert any(":prf:ref:`thm-pure-variance`" in t for t in texts)


def test_every_docstring_label_exists() -> None:
    bad = problems()
    assert not bad, f"{len(bad)} docstring label problem(s):\n" + "\n".join(bad)


def test_no_forward_references_are_left() -> None:
    # every chapter is written: a docstring promising a label of a later chapter is stale
    stale = [d.where for d in docstrings() if re.search(r"(?i)\b(forthcoming|planned labels?)\b", d.text)]
    assert not stale, "forward references to chapters that now exist:\n" + "\n".join(stale)
