"""Book labels named in ldpkit's docstrings: each one exists in the book, or is explicitly forthcoming.

Docstrings name the chapter and label that derive each formula.  A label the book defines is
written as a cross-reference, so the nitpicky book build (API reference part) fails when it points
nowhere:

* ``:ref:`` for a ``(name)=`` target (with an explicit title when the target does not precede a
  heading);
* ``:prf:ref:`` for a ``{prf:...}`` directive's ``:label:``;
* ``:eq:`` (or ``:math:numref:``) for a numbered equation ``$$ ... $$ (name)``.

A label of a chapter not written yet is written as an explicit forward reference, in one form:
"forthcoming IPLDP chapter (planned label ``def-ipldp``)" (or "planned labels ``a``, ``b`` and
``c``"; "section" instead of "chapter" for a section of an existing chapter).  This module checks
both, and ``python tests/test_docstring_labels.py`` prints every forthcoming label with the
docstrings that promise it, so the later chapters know what to define.  The labels the book
defines are found by the book's one label parser, :func:`booktools.labels.book_labels`.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass

import pytest

from booktools.labels import book_labels
from conftest import REPO

PACKAGE = REPO / "ldpkit"

#: a cross-reference role in a docstring: ``:role:`target``` or ``:role:`title <target>```
ROLE = re.compile(r":(?P<role>ref|prf:ref|eq|math:numref|numref):`(?P<body>[^`]+)`")
#: the one accepted form of a forward reference to a label of an unwritten chapter or section
FORTHCOMING = re.compile(
    r"forthcoming\s+(?P<where>[A-Z][\w-]*)\s+(?:chapter|section)\s+\(planned\s+labels?\s+"
    r"(?P<labels>``[^`]+``(?:(?:,\s*and\s+|,\s*|\s+and\s+)``[^`]+``)*)\)",
    re.IGNORECASE,
)
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


def _forthcoming(text: str) -> list[tuple[str, str, tuple[int, int]]]:
    """``(label, chapter, span)`` of every label promised in a forthcoming phrase."""
    out = []
    for m in FORTHCOMING.finditer(text):
        for label in re.findall(r"``([^`]+)``", m["labels"]):
            out.append((label, m["where"], m.span()))
    return out


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
        promised = _forthcoming(text)
        spans = [span for _, _, span in promised]
        for label, chapter, _ in promised:
            if label in labels:
                bad.append(f"{doc.where}: forthcoming label {label!r} is now defined at book/{labels[label].where}; "
                           "write it as a cross-reference")
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
            if any(a <= m.start() < b for a, b in spans):
                continue
            label = m.group(1)
            if label not in labels:
                bad.append(f"{doc.where}: label ``{label}`` is neither defined in book/*.md nor written as "
                           "'forthcoming <Chapter> chapter (planned label ``...``)'")
        for m in PLAIN_LABEL.finditer(text):
            if any(a <= m.start() < b for a, b in spans):
                continue
            label = m["label"]
            if label in labels:
                bad.append(f"{doc.where}: plain-text label ``{label}``: write it as a cross-reference "
                           f"({labels[label].kind} label at book/{labels[label].where})")
    return bad


def forthcoming_labels() -> dict[str, list[str]]:
    """Every forthcoming label -> the docstrings that promise it."""
    out: dict[str, list[str]] = defaultdict(list)
    for doc in docstrings():
        for label, chapter, _ in _forthcoming(_normalise(doc.text)):
            out[f"{chapter} chapter: {label}"].append(doc.where)
    return dict(sorted(out.items()))


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


def test_every_docstring_label_exists_or_is_forthcoming() -> None:
    bad = problems()
    assert not bad, f"{len(bad)} docstring label problem(s):\n" + "\n".join(bad)


def test_forthcoming_labels_are_listed(capsys: pytest.CaptureFixture[str]) -> None:
    # the parser itself must still recognise the wording, even when no promise is left open
    sample = "derived in the forthcoming LIP chapter (planned labels ``def-a`` and ``thm-b``)"
    assert [(lab, ch) for lab, ch, _ in _forthcoming(sample)] == [("def-a", "LIP"), ("thm-b", "LIP")]
    promised = forthcoming_labels()
    with capsys.disabled():
        print("\nforthcoming book labels promised by ldpkit docstrings:")
        for label, where in promised.items():
            print(f"  {label}  ({len(where)} docstring(s), e.g. {where[0]})")


def test_forthcoming_wording_is_uniform() -> None:
    # a forward reference in any other wording would escape the checks above
    bad = []
    for doc in docstrings():
        text = _normalise(doc.text)
        for m in re.finditer(r"(?i)\b(forthcoming|planned labels?)\b", text):
            if not any(a <= m.start() < b for _, _, (a, b) in _forthcoming(text)):
                context = text[max(0, m.start() - 60): m.end() + 60]
                bad.append(f"{doc.where}: ...{context}...")
    assert not bad, "forward references not in the form 'forthcoming X chapter (planned label ``...``)':\n" + \
        "\n".join(bad)


if __name__ == "__main__":
    for label, where in forthcoming_labels().items():
        print(label)
        for w in where:
            print(f"    {w}")
