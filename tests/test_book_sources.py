"""The book's reading conventions, checked on the chapters' sources (issue 21's patterns).

* Every chapter in reading order (the Background and paper parts of ``_toc.yml``) ends with a
  "What this chapter established" box (an admonition of class ``established``), after which
  no section starts.
* Every experiments chapter has a "Verdict" section.
* Wherever the book corrects a paper there is one erratum block per corrected claim: an
  admonition of class ``erratum`` named ``erratum-<claim id>``, titled "Erratum (slip)" or
  "Erratum (refuted)" as the register's status says, with the four fields Printed, Corrected,
  Evidence and Consequence, in that order; every slip or refuted claim of the register has its
  block.
* No chapter shows a pandas table raw: tables go through ``booktools.show_table``.
* Plumbing cells (only glue calls, asserts and download links) are folded or removed.
* Every figure caption's last sentence carries a glued number (the caption ends with what to
  conclude, in numbers computed by the build).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from conftest import REPO

BOOK = REPO / "book"


def reading_chapters() -> list[Path]:
    """The chapters of the numbered parts of ``_toc.yml`` (not the API reference or the Register)."""
    toc = yaml.safe_load((REPO / "_toc.yml").read_text())
    files = []
    for part in toc["parts"]:
        if part["caption"].startswith(("API", "Register")):
            continue
        files.extend(REPO / f"{chapter['file']}.md" for chapter in part["chapters"])
    return files


CHAPTERS = reading_chapters()
#: pages of the numbered parts that are looked up rather than read through (no findings of their own)
REFERENCE_PAGES = {"notation"}
EXPERIMENT_CHAPTERS = [path for path in CHAPTERS if path.stem.endswith("_experiments")]


@dataclass
class Block:
    """A fenced MyST directive: its name, argument, options, body and first line (1-based)."""

    name: str
    argument: str
    options: dict[str, str]
    body: list[str]
    line: int
    children: list[Block] = field(default_factory=list)


_FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}\s*(?P<arg>.*)$")


def directives(text: str) -> list[Block]:
    """Every fenced directive of a MyST file, nested ones included (in source order)."""
    lines = text.splitlines()
    found: list[Block] = []

    def parse(start: int, end: int) -> None:
        i = start
        while i < end:
            match = _FENCE.match(lines[i].strip())
            if not match:
                i += 1
                continue
            fence = match["fence"]
            j = i + 1
            while j < end and lines[j].strip() != fence:
                j += 1
            body = lines[i + 1 : j]
            options: dict[str, str] = {}
            k = 0
            while k < len(body) and body[k].startswith(":") and not body[k].startswith(":::"):
                key, _, value = body[k][1:].partition(":")
                options[key.strip()] = value.strip()
                k += 1
            block = Block(match["name"], match["arg"].strip(), options, body[k:], i + 1)
            found.append(block)
            if block.name not in ("code-cell",):
                parse(i + 1 + k, j)
            i = j + 1

    parse(0, len(lines))
    return found


def code_cells(text: str) -> list[Block]:
    return [block for block in directives(text) if block.name == "code-cell"]


def cell_tags(block: Block) -> set[str]:
    tags = block.options.get("tags", "")
    return {tag.strip(" '\"") for tag in tags.strip("[]").split(",") if tag.strip()}


# --------------------------------------------------------------------------- chapter ends
@pytest.mark.parametrize("path", [p for p in CHAPTERS if p.stem not in REFERENCE_PAGES], ids=lambda p: p.stem)
def test_chapter_ends_with_what_it_established(path: Path) -> None:
    text = path.read_text()
    boxes = [b for b in directives(text) if b.name == "admonition" and "established" in b.options.get("class", "")]
    assert len(boxes) == 1, f"{path.name}: expected one 'What this chapter established' box, found {len(boxes)}"
    box = boxes[0]
    assert box.argument == "What this chapter established", f"{path.name}: box titled {box.argument!r}"
    items = [line for line in box.body if line.lstrip().startswith(("- ", "* "))]
    assert items, f"{path.name}: the box lists no finding"
    after = text.splitlines()[box.line :]
    headings = [line for line in after if re.match(r"^#{1,6} ", line)]
    assert not headings, f"{path.name}: sections after the box: {headings}"


@pytest.mark.parametrize("path", EXPERIMENT_CHAPTERS, ids=lambda p: p.stem)
def test_experiment_chapter_has_a_verdict_section(path: Path) -> None:
    assert re.search(r"^## Verdict\b", path.read_text(), re.M), f"{path.name}: no '## Verdict' section"


# --------------------------------------------------------------------------- erratum blocks
_ERRATUM_FIELDS = ("Printed", "Corrected", "Evidence", "Consequence")


def _erratum_blocks() -> dict[str, tuple[Path, Block]]:
    found: dict[str, tuple[Path, Block]] = {}
    for path in sorted(BOOK.glob("*.md")):
        for block in directives(path.read_text()):
            if block.name == "admonition" and "erratum" in block.options.get("class", "").split():
                name = block.options.get("name", "")
                assert name.startswith("erratum-"), f"{path.name}:{block.line}: erratum block without name erratum-<id>"
                assert name not in found, f"{name} defined twice"
                found[name] = (path, block)
    return found


def test_erratum_blocks_have_the_four_fields_in_order() -> None:
    problems = []
    for name, (path, block) in _erratum_blocks().items():
        terms = [line.strip() for line in block.body if line.strip() in _ERRATUM_FIELDS]
        if tuple(terms) != _ERRATUM_FIELDS:
            problems.append(f"{path.name}:{block.line} {name}: fields {terms}, expected {list(_ERRATUM_FIELDS)}")
        if not re.match(r"^Erratum \((slip|refuted)\): \S", block.argument):
            problems.append(f"{path.name}:{block.line} {name}: title {block.argument!r} is not 'Erratum (slip|refuted): ...'")
    assert not problems, "\n".join(problems)


def test_every_corrected_claim_has_its_erratum_block() -> None:
    from booktools import load_claims

    blocks = _erratum_blocks()
    claims = {claim.id: claim for claim in load_claims()}
    corrected = {cid for cid, claim in claims.items() if claim.status in ("slip", "refuted")}
    named = {name.removeprefix("erratum-") for name in blocks}
    assert corrected <= named, f"slip/refuted claims without an erratum block: {sorted(corrected - named)}"
    problems = []
    for cid in sorted(named):
        claim = claims.get(cid)
        path, block = blocks[f"erratum-{cid}"]
        if claim is None:
            problems.append(f"{path.name}: erratum-{cid} names no claim of the register")
        elif claim.status not in ("slip", "refuted"):
            problems.append(f"{path.name}: erratum-{cid}, but the register says {claim.status!r}")
        elif f"({claim.status})" not in block.argument:
            problems.append(f"{path.name}: erratum-{cid} titled {block.argument!r}, register status {claim.status!r}")
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- tables and plumbing
_RAW_TABLE = re.compile(r"\.to_html\(|\.to_markdown\(|\.style\.(format|hide|set_|apply|map|highlight|background)"
                        r"|display\((?!HTML|Markdown)\w*(frame|df|table)\w*\)")


#: methods whose result, left as a cell's last expression, is a DataFrame shown raw
_FRAME_METHODS = {"round", "head", "tail", "pivot", "pivot_table", "rename", "rename_axis", "set_index", "reset_index",
                  "sort_values", "assign", "describe", "agg", "unstack", "stack", "transpose", "to_frame", "query",
                  "drop", "loc", "iloc", "melt", "merge", "concat", "DataFrame"}


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_raw_pandas_tables(path: Path) -> None:
    problems = []
    for cell in code_cells(path.read_text()):
        source = "\n".join(cell.body)
        if _RAW_TABLE.search(source):
            problems.append(f"line {cell.line}: {_RAW_TABLE.search(source).group(0)}")
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        last = tree.body[-1] if tree.body else None
        # a cell ending in a bare name, subscript or method chain displays it; a frame shown that
        # way is a raw pandas table (plots and numbers end in calls the check below allows)
        if isinstance(last, ast.Expr) and isinstance(last.value, (ast.Name, ast.Subscript, ast.Attribute)):
            problems.append(f"line {cell.line}: the cell displays {ast.unparse(last.value)!r} raw")
        elif (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
              and isinstance(last.value.func, ast.Attribute) and last.value.func.attr in _FRAME_METHODS):
            problems.append(f"line {cell.line}: the cell displays {ast.unparse(last.value)[:60]!r} raw")
    assert not problems, f"{path.name}: tables must go through booktools.show_table:\n" + "\n".join(problems)


_PLUMBING_CALLS = {"glue", "glue_facts", "display", "HTML", "Markdown", "csv_download_html", "downloads_html",
                   "chapter_box", "json_download_html", "csv_link_html"}
_FOLDED = {"remove-cell", "remove-input", "hide-input", "hide-cell"}


def _is_plumbing(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Assert):
        return True
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        return isinstance(func, ast.Name) and func.id in _PLUMBING_CALLS
    if isinstance(statement, ast.For):
        return all(_is_plumbing(inner) for inner in statement.body)
    return False


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_plumbing_cells_are_folded(path: Path) -> None:
    problems = []
    for cell in code_cells(path.read_text()):
        try:
            tree = ast.parse("\n".join(cell.body))
        except SyntaxError:
            continue
        if tree.body and all(_is_plumbing(statement) for statement in tree.body) and not cell_tags(cell) & _FOLDED:
            problems.append(f"line {cell.line}")
        # also: cells made mostly of glue calls
    assert not problems, f"{path.name}: cells of only glue/assert/link calls must be folded or removed: {problems}"


# --------------------------------------------------------------------------- captions
_GLUE_ROLE = re.compile(r"\{glue(:text)?\}`")


def _caption(block: Block) -> str:
    return " ".join(line.strip() for line in block.body if line.strip())


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_figure_captions_end_with_a_glued_conclusion(path: Path) -> None:
    problems = []
    for block in directives(path.read_text()):
        if block.name not in ("glue:figure", "figure"):
            continue
        caption = _caption(block)
        # the last sentence: split at a full stop followed by a space and a capital or a role
        sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z{(])", caption)
        if not sentences or not _GLUE_ROLE.search(sentences[-1]):
            problems.append(f"line {block.line}: ...{sentences[-1][-100:] if sentences else ''}")
    assert not problems, f"{path.name}: figure captions must end with a sentence holding a glued number:\n" + "\n".join(problems)


def test_paper_titles_agree_with_the_part_captions() -> None:
    """The register names each paper as the table of contents does (venue and year included)."""
    from booktools import PAPER_TITLES

    captions = [part["caption"] for part in yaml.safe_load((REPO / "_toc.yml").read_text())["parts"]]
    assert all(title in captions for title in PAPER_TITLES.values()), (PAPER_TITLES, captions)


_OWN_FIGURE = re.compile(r"plt\.subplots\(|plt\.figure\(|figsize\s*=|\bFigure\(|rcParams\[")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_figures_use_the_book_style(path: Path) -> None:
    """A chapter draws through ``ldpkit.experiments.style`` (its figure size, fonts and colours), never its own.

    The style module's own settings are tested in tests/test_style.py, where every registered
    figure is drawn and audited; a chapter that built its figure with pyplot or a figsize of its
    own would escape those checks.
    """
    problems = [f"line {cell.line}: {m.group(0)}" for cell in code_cells(path.read_text())
                for m in [_OWN_FIGURE.search("\n".join(cell.body))] if m]
    assert not problems, f"{path.name}: figures must come from style.figure / style.row_figure: {problems}"


# --------------------------------------------------------------------------- formal blocks (issue 22)
_FORMAL = ("prf:theorem", "prf:lemma", "prf:proposition", "prf:corollary")


def _formal_segments(text: str) -> list[tuple[Block, list[Block], list[Block]]]:
    """Each formal block with the proofs and code cells that follow it, up to the next formal block."""
    blocks = directives(text)
    formal = [i for i, b in enumerate(blocks) if b.name in _FORMAL]
    out = []
    for n, i in enumerate(formal):
        stop = formal[n + 1] if n + 1 < len(formal) else len(blocks)
        # nested directives (inside the statement) come right after it in source order; skip them
        following = [b for b in blocks[i + 1 : stop] if b.line > blocks[i].line + len(blocks[i].body) + 1]
        out.append((blocks[i], [b for b in following if b.name == "prf:proof"],
                    [b for b in following if b.name == "code-cell"]))
    return out


def _symbolic(cell: Block) -> bool:
    source = "\n".join(cell.body)
    return bool(re.search(r"\bsp\.|\bsympy\b", source)) and re.search(r"^\s*assert\b", source, re.M) is not None


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_formal_block_is_derived_or_names_its_method(path: Path) -> None:
    """A theorem, lemma, proposition or corollary is followed, before the next one, by a sympy
    derivation ending in an assert, or its proof names a non-symbolic method (``*Method:*``) and
    a cell ending in an assert performs it."""
    problems = []
    for block, proofs, cells in _formal_segments(path.read_text()):
        label = block.options.get("label", f"line {block.line}")
        if any(_symbolic(cell) for cell in cells):
            continue
        named = any(line.lstrip().startswith("*Method:*") for proof in proofs for line in proof.body)
        checked = any(re.search(r"^\s*assert\b", "\n".join(cell.body), re.M) for cell in cells)
        if not (named and checked):
            problems.append(f"{label}: no sympy derivation, and " +
                            ("no cell asserting its method" if named else "no *Method:* in its proof"))
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def _section_text(label: str) -> str | None:
    """The source from the target ``(label)=`` to the next heading of the same or a higher level."""
    for path in sorted(BOOK.glob("*.md")):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if line.strip() == f"({label})=" and i + 1 < len(lines) and lines[i + 1].startswith("#"):
                level = len(lines[i + 1]) - len(lines[i + 1].lstrip("#"))
                end = next((j for j in range(i + 2, len(lines))
                            if re.match(rf"^#{{1,{level}}} ", lines[j])), len(lines))
                return "\n".join(lines[i:end])
    return None


def test_scorecard_evidence_of_formal_claims_leads_to_a_derivation() -> None:
    """The register's evidence for a theorem, lemma, proposition or corollary is the book's formal
    block, which the test above holds to a derivation or a named method, or a section holding a
    sympy derivation cell."""
    from booktools import load_claims

    formal = {block.options["label"] for path in BOOK.glob("*.md") for block in directives(path.read_text())
              if block.name in _FORMAL and "label" in block.options}
    problems = []
    for claim in load_claims():
        if claim.kind not in ("theorem", "lemma", "proposition", "corollary") or not claim.evidence:
            continue
        if claim.evidence in formal:
            continue
        section = _section_text(claim.evidence)
        if section is None or not any(_symbolic(cell) for cell in code_cells(section)):
            problems.append(f"{claim.id}: evidence {claim.evidence!r} is neither a formal block nor a section "
                            "with a sympy derivation")
    assert not problems, "\n".join(problems)
