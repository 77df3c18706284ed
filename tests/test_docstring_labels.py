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
docstrings that promise it, so the later chapters know what to define.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass

import pytest

from conftest import REPO

PACKAGE = REPO / "ldpkit"
BOOK = REPO / "book"

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

_TARGET = re.compile(r"^\((?P<label>[A-Za-z0-9_.:-]+)\)=\s*$")
_FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[A-Za-z0-9:_-]+)\}")
_OPTION_LABEL = re.compile(r"^:label:\s*(?P<label>\S+)\s*$")
_EQUATION = re.compile(r"\$\$\s*\((?P<label>[A-Za-z0-9_.:-]+)\)\s*$")


@dataclass(frozen=True)
class BookLabel:
    label: str
    kind: str  # "section" (target before a heading), "target" (needs a title), "prf", "eq"
    where: str  # book/file.md:line


def book_labels() -> dict[str, BookLabel]:
    """Every label defined in ``book/*.md``, with the kind of cross-reference it takes."""
    found: dict[str, BookLabel] = {}
    for path in sorted(BOOK.glob("*.md")):
        lines = path.read_text(encoding="utf-8").splitlines()
        stack: list[tuple[str, str]] = []  # open directives: (fence, name)
        for i, line in enumerate(lines):
            where = f"book/{path.name}:{i + 1}"
            stripped = line.strip()
            m = _TARGET.match(stripped)
            if m:
                following = next((nxt.strip() for nxt in lines[i + 1:] if nxt.strip()), "")
                kind = "section" if following.startswith("#") else "target"
                found[m["label"]] = BookLabel(m["label"], kind, where)
                continue
            m = _FENCE.match(stripped)
            if m:
                stack.append((m["fence"], m["name"]))
                continue
            if stack and stripped and set(stripped) <= {"`", ":"} and stripped.startswith(stack[-1][0][0]) \
                    and len(stripped) >= len(stack[-1][0]):
                stack.pop()
                continue
            m = _OPTION_LABEL.match(stripped)
            if m and stack:
                name = stack[-1][1]
                kind = "prf" if name.startswith("prf:") else ("eq" if name == "math" else "target")
                found[m["label"]] = BookLabel(m["label"], kind, where)
                continue
            m = _EQUATION.search(stripped)
            if m:
                found[m["label"]] = BookLabel(m["label"], "eq", where)
    return found


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
                bad.append(f"{doc.where}: forthcoming label {label!r} is now defined at {labels[label].where}; "
                           "write it as a cross-reference")
        for m in ROLE.finditer(text):
            target, titled = _role_target(m["body"])
            book = labels.get(target)
            if book is None:
                bad.append(f"{doc.where}: :{m['role']}:`{m['body']}` points to no label of book/*.md")
            elif book.kind not in _ROLE_KINDS[m["role"]]:
                bad.append(f"{doc.where}: :{m['role']}:`{target}` but {target!r} is a {book.kind} label "
                           f"({book.where})")
            elif book.kind == "target" and not titled:
                bad.append(f"{doc.where}: :ref:`{target}` needs an explicit title ({target!r} does not precede "
                           f"a heading, {book.where})")
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
                           f"({labels[label].kind} label at {labels[label].where})")
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
