"""Tests of the book's claims register (``booktools``) and of the real register book/claims.yml."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
import yaml

import booktools
from booktools.labels import BookLabel, book_labels
from booktools.markup import SEGMENT, GlueReference, check_markup, parse_glue_reference
from booktools.register import (
    CORRECTED_STATUSES,
    DATA_QUALIFIERS,
    KINDS,
    MAX_CORRECTED_LENGTH,
    MAX_STATEMENT_LENGTH,
    PAPERS,
    REGISTER,
    RETIRED_STATUSES,
    STATUS_DEFINITIONS,
    STATUSES,
    Claim,
    claim_rows,
    glue_references,
    load_claims,
    summarise,
    summary_rows,
    validate_claims,
)
from booktools.render import (
    DATA_BADGE,
    EMPTY_CELL,
    EVIDENCE_TEXT,
    NOTE_TITLE,
    PAPER_TITLES,
    STATUS_BADGES,
    chapter_box,
    claim_badges,
    data_badge,
    myst_inline,
    register_table,
    status_definitions,
    summary_table,
    to_markdown_table,
)
from booktools.sources import chapter_glue_keys, check_glue_references

REPO = Path(__file__).resolve().parent.parent


def _good_entry(**changes):
    entry = {
        "id": "idldp-lemma-1",
        "paper": "idldp",
        "location": "Lemma 1, Sec. IV-B",
        "kind": "lemma",
        "statement": "A short paraphrase.",
        "status": "pending",
        "evidence": None,
    }
    entry.update(changes)
    return entry


def _write(tmp_path, document) -> Path:
    path = tmp_path / "claims.yml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def real_claims() -> list[Claim]:
    return load_claims(REGISTER)


# ----------------------------------------------------------------------------- real register


def test_default_path_is_repo_register():
    assert REGISTER == (REPO / "book" / "claims.yml").resolve()
    # the package lives in the book directory, beside the register and the chapters
    assert Path(booktools.__file__).resolve().parent.parent == REGISTER.parent


def test_real_register_loads(real_claims):
    assert len(real_claims) >= 60
    assert all(isinstance(c, Claim) for c in real_claims)
    assert load_claims() == real_claims


def test_every_paper_has_claims(real_claims):
    table = summarise(real_claims)
    for paper in PAPERS:
        assert table[paper]["total"] > 0, paper
    assert table["total"]["total"] == len(real_claims)
    assert sum(table[p]["total"] for p in PAPERS) == len(real_claims)


def test_ids_unique_and_well_formed(real_claims):
    ids = [c.id for c in real_claims]
    assert len(ids) == len(set(ids))
    for c in real_claims:
        assert re.fullmatch(r"[a-z]+-[a-z]+(-[a-z0-9]+)+", c.id), c.id
        assert c.id.startswith(c.paper + "-"), c.id


def test_non_pending_claims_have_evidence(real_claims):
    for c in real_claims:
        if c.status != "pending":
            assert c.evidence, c.id
        assert c.status in STATUSES and c.kind in KINDS


def test_evidence_labels_exist_in_the_book(real_claims):
    labels = book_labels()
    assert {"idldp", "def-ldp"} <= set(labels)  # the parser sees page targets and directive labels
    missing = {c.id: c.evidence for c in real_claims if c.evidence and c.evidence not in labels}
    assert not missing, missing


def test_statements_single_line_and_short(real_claims):
    for c in real_claims:
        assert "\n" not in c.statement, c.id
        assert 0 < len(c.statement) <= MAX_STATEMENT_LENGTH, c.id


def test_expected_numbered_claims_present(real_claims):
    ids = {c.id for c in real_claims}
    expected = {
        "idldp-thm-1", "idldp-thm-2", "idldp-thm-3", "idldp-thm-4", "idldp-lemma-1",
        "idldp-lemma-2", "idldp-table-1", "idldp-table-2", "idldp-example-1",
        *(f"idldp-fig-{k}" for k in range(2, 9)),
        *(f"ipldp-thm-{k}" for k in range(1, 7)), "ipldp-lemma-1", "ipldp-lemma-2",
        "ipldp-table-1", "ipldp-table-2", "ipldp-example-1",
        *(f"ipldp-fig-{k}" for k in range(1, 5)),
        "fldp-lemma-1", "fldp-lemma-2", "fldp-lemma-3", "fldp-thm-1", "fldp-thm-2",
        "fldp-table-2", *(f"fldp-fig-{k}" for k in range(2, 6)),
        "lip-prop-1", "lip-prop-2", "lip-prop-3", "lip-prop-4", "lip-thm-1", "lip-thm-2",
        "lip-cor-1", "lip-example-1", "lip-fig-2", *(f"lip-fig-{k}" for k in range(5, 9)),
    }
    assert expected <= ids, sorted(expected - ids)


def test_register_is_in_paper_order(real_claims):
    order = [PAPERS.index(c.paper) for c in real_claims]
    assert order == sorted(order)


# ----------------------------------------------------------------------------- status vocabulary


def test_status_vocabulary_has_one_source():
    """The statuses, their definitions and their badges are the same list, in the same order."""
    assert STATUSES == tuple(STATUS_DEFINITIONS) == tuple(STATUS_BADGES)
    assert set(STATUSES) == {"reproduced", "re-derived", "slip", "refuted", "differs", "pending"}
    assert not set(RETIRED_STATUSES) & set(STATUSES)
    assert set(CORRECTED_STATUSES) == {"slip", "refuted"}
    for text in (*STATUS_DEFINITIONS.values(), *(d for _, d in DATA_QUALIFIERS.values())):
        assert text.strip() and not check_markup(text, allow_glue=False)
    assert "remark" in KINDS


def _schema_comment_values(field: str) -> tuple[str, ...]:
    """The values the schema comment at the top of claims.yml lists for a field ("a | b | c")."""
    head = REGISTER.read_text(encoding="utf-8").split("\nversion:")[0]
    match = re.search(rf"^#\s+{field}:\s+(.+)$", head, flags=re.M)
    assert match, f"the schema comment of claims.yml does not list {field!r}"
    words = re.split(r"\s*\|\s*", match.group(1).split("(")[0].strip())
    return tuple(words)


def test_schema_comment_matches_the_vocabulary():
    assert _schema_comment_values("status") == STATUSES
    assert _schema_comment_values("kind") == KINDS
    assert _schema_comment_values("paper") == PAPERS
    assert _schema_comment_values("data") == tuple(DATA_QUALIFIERS)


def test_every_status_is_used_as_defined(real_claims):
    statuses = {c.status for c in real_claims}
    assert statuses <= set(STATUSES)
    for claim in real_claims:
        if claim.status in CORRECTED_STATUSES:  # a slip or a refuted claim gives the corrected result
            assert claim.corrected, f"{claim.id}: {claim.status} without a corrected result"
        if claim.status != "reproduced":  # every other status gives its reason
            assert claim.note, f"{claim.id}: {claim.status} without a note"
        if claim.status == "re-derived":  # there was nothing printed to compare with: say what was lost
            assert re.search(r"\blost\b", claim.note or ""), f"{claim.id}: re-derived, but the note says nothing lost"
            assert claim.paper == "fldp" or "text" in (claim.note or ""), claim.id
        if claim.status == "pending":  # why it cannot be decided yet, and what would decide it
            assert "decide" in (claim.note or ""), f"{claim.id}: pending without what would decide it"
        if claim.data is not None:  # a qualified verdict says which data were stand-ins
            assert "stand-in" in (claim.note or "") or "replaces" in (claim.note or ""), claim.id


def test_scorecard_text_does_not_use_retired_statuses():
    page = (REPO / "book" / "scorecard.md").read_text(encoding="utf-8")
    for status in RETIRED_STATUSES:
        assert not re.search(rf"\b{status}\b", page, flags=re.I), f"the Scorecard still mentions {status!r}"
    header = REGISTER.read_text(encoding="utf-8").split("\nversion:")[0]
    assert not any(re.search(rf"\b{status}\b", header) for status in RETIRED_STATUSES)


#: ASCII renderings of mathematics that must be inline math in register text (outside $...$ and roles).
_ASCII_MATH = {
    "epsilon spelt out": r"\beps",
    "subscript": r"[A-Za-z0-9)\]]_[A-Za-z0-9{(]",
    "power": r"\^",
    "square root": r"\bsqrt\b",
    "comparison": r"<=|>=|!=|=<",
    "pi": r"\bpi\b",
    "function call": r"\b(?:ln|log|exp)\s*\(",
    "greek letter spelt out": r"\b(?:alpha|beta|gamma|delta|lambda|mu|rho|sigma|tau)\b",
    "indexed letter": r"\b[A-Za-z][0-9]\b",
    "expectation": r"\bE\[",
    "tuple of sets": r"\([A-Z](?:\s?,\s?[A-Z])+\)",
    "min or max of a set": r"\b(?:min|max)\s+[A-Z]\b",
    "sum": r"\bsum(?:_|\()",
}


def _ascii_math(text: str) -> list[str]:
    """The ASCII-math fragments of a register text, outside inline math and roles."""
    literal = SEGMENT.sub(" ", text)
    return [f"{name}: {m.group(0)!r}" for name, pattern in _ASCII_MATH.items() for m in re.finditer(pattern, literal)]


@pytest.mark.parametrize(
    "text",
    ["eps_max near 0", "l1 ~ sqrt(2|D_S|/(n pi))", "the 4e^eps/(e^eps-1)^2 term", "I(X;Y) <= eps",
     "q* = 1/(e^eps+1)", "(D,E)-IPLDP", "at most 2 min E", "E[X|Y] = P1", "ln(3+2 sqrt 2)", "lambda_y"],
)
def test_ascii_math_detector_flags(text):
    assert _ascii_math(text), text


@pytest.mark.parametrize(
    "text",
    ["$\\varepsilon_{\\max}$ near 0", "{glue:text}`fldp.md::eps_star:.4f` and {ref}`sec-a_b`",
     "Fig. 2, Sec. VII-A (panels a-f), experiments #1-#3, App. B.5", "opt0/opt1/opt2 and the paper's Table 1",
     "{py:func}`ldpkit.budgets.ipldp_levels`", "$I(X;Y) \\le \\varepsilon$"],
)
def test_ascii_math_detector_passes(text):
    assert not _ascii_math(text), _ascii_math(text)


def test_register_text_is_typeset(real_claims):
    """Every formula of a statement, note or corrected result is inline math, not ASCII."""
    problems = [
        f"{claim.id} {field}: {hit}"
        for claim in real_claims
        for field in ("statement", "note", "corrected")
        for hit in _ascii_math(getattr(claim, field) or "")
    ]
    assert not problems, "ASCII math outside $...$:\n" + "\n".join(problems)


# ----------------------------------------------------------------------------- validator


def test_valid_fixture_loads(tmp_path):
    path = _write(tmp_path, {"version": 1, "claims": [_good_entry(note="ok")]})
    (claim,) = load_claims(path)
    assert claim == Claim("idldp-lemma-1", "idldp", "Lemma 1, Sec. IV-B", "lemma",
                          "A short paraphrase.", "pending", None, "ok")
    # a bare list is accepted too
    assert load_claims(_write(tmp_path, [_good_entry()]))[0].note is None


def test_claim_is_frozen():
    claim = validate_claims([_good_entry()])[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        claim.status = "reproduced"  # type: ignore[misc]


@pytest.mark.parametrize("field", ["id", "paper", "location", "kind", "statement", "status", "evidence"])
def test_missing_field_rejected(tmp_path, field):
    entry = _good_entry(id="fldp-thm-9")
    del entry[field]
    path = _write(tmp_path, {"claims": [entry]})
    name = "fldp-thm-9" if field != "id" else "entry 0"
    with pytest.raises(ValueError, match=rf"{re.escape(name)}.*missing field.*{field}"):
        load_claims(path)


@pytest.mark.parametrize(("claims", "message"), [
    pytest.param([_good_entry(), _good_entry(id="x-thm-1", paper="dp2006")], r"'x-thm-1'.*unknown paper 'dp2006'",
                 id="unknown-paper"),
    pytest.param([_good_entry(status="done")], r"'idldp-lemma-1'.*unknown status 'done'", id="unknown-status"),
    pytest.param([_good_entry(kind="definition")], r"'idldp-lemma-1'.*unknown kind 'definition'", id="unknown-kind"),
    pytest.param([_good_entry(), _good_entry(location="elsewhere")], r"'idldp-lemma-1' \(entry 1\): duplicate id",
                 id="duplicate-id"),
    pytest.param([_good_entry(status="reproduced", evidence="  ")], r"'idldp-lemma-1'.*evidence must be",
                 id="blank-evidence"),
    pytest.param([_good_entry(statement="first line\nsecond line")], r"'idldp-lemma-1'.*single line",
                 id="multiline-statement"),
    pytest.param([_good_entry(statement="x" * (MAX_STATEMENT_LENGTH + 1))], r"'idldp-lemma-1'.*201 characters",
                 id="long-statement"),
    pytest.param([_good_entry(proof="trivial")], r"'idldp-lemma-1'.*unknown field.*proof", id="unknown-field"),
    pytest.param([_good_entry(location="")], r"'idldp-lemma-1'.*'location'", id="empty-string-field"),
    pytest.param([_good_entry(), "just a string"], r"entry 1.*expected a mapping", id="non-mapping-entry"),
])
def test_bad_entry_rejected(tmp_path, claims, message):
    path = _write(tmp_path, {"claims": claims})
    with pytest.raises(ValueError, match=message):
        load_claims(path)


@pytest.mark.parametrize("status", [s for s in STATUSES if s != "pending"])
def test_evidence_required_unless_pending(tmp_path, status):
    corrected = {"corrected": "$x$"} if status in CORRECTED_STATUSES else {}
    path = _write(tmp_path, {"claims": [_good_entry(status=status, **corrected)]})
    with pytest.raises(ValueError, match=r"'idldp-lemma-1'.*evidence is missing"):
        load_claims(path)
    ok = _write(tmp_path, {"claims": [_good_entry(status=status, evidence="sec-idldp-lemma1", **corrected)]})
    assert load_claims(ok)[0].evidence == "sec-idldp-lemma1"
    # a pending claim may already point to its partial evidence
    assert load_claims(_write(tmp_path, [_good_entry(evidence="sec-a")]))[0].evidence == "sec-a"


@pytest.mark.parametrize("status", CORRECTED_STATUSES)
def test_corrected_result_required_for_slip_and_refuted(tmp_path, status):
    entry = _good_entry(status=status, evidence="sec-a")
    with pytest.raises(ValueError, match=rf"'idldp-lemma-1'.*status '{status}' needs the corrected result"):
        load_claims(_write(tmp_path, [entry]))
    glued = "$L_1 \\ge L_2$ at {glue:text}`idldp.md::k:.2f`"
    (claim,) = load_claims(_write(tmp_path, [{**entry, "corrected": glued}]))
    assert claim.corrected == glued
    assert glue_references([claim]) == [("idldp-lemma-1", GlueReference("idldp.md", "k", ".2f"))]


def test_corrected_result_checked(tmp_path):
    ok = _good_entry(status="differs", evidence="sec-a", corrected="optional $x$")
    assert load_claims(_write(tmp_path, [ok]))[0].corrected == "optional $x$"  # optional otherwise
    bad = {
        "empty": ("  ", r"corrected must be a non-empty string"),
        "lines": ("a\nb", r"corrected must be a single line"),
        "long": ("x" * (MAX_CORRECTED_LENGTH + 1), rf"corrected has {MAX_CORRECTED_LENGTH + 1} characters"),
        "markup": ("costs $5", r"corrected: unpaired"),
    }
    for value, message in bad.values():
        with pytest.raises(ValueError, match=rf"'idldp-lemma-1'.*{message}"):
            load_claims(_write(tmp_path, [_good_entry(status="slip", evidence="sec-a", corrected=value)]))


def test_retired_status_rejected_with_a_hint(tmp_path):
    for status in RETIRED_STATUSES:
        with pytest.raises(ValueError, match=rf"unknown status '{status}' \(retired: use slip or refuted\)"):
            load_claims(_write(tmp_path, [_good_entry(status=status, evidence="sec-a")]))


def test_data_qualifier_checked(tmp_path):
    for value in DATA_QUALIFIERS:
        assert load_claims(_write(tmp_path, [_good_entry(data=value)]))[0].data == value
    assert load_claims(_write(tmp_path, [_good_entry()]))[0].data is None
    with pytest.raises(ValueError, match=r"'idldp-lemma-1'.*unknown data qualifier 'synthetic'"):
        load_claims(_write(tmp_path, [_good_entry(data="synthetic")]))


@pytest.mark.parametrize("document", [{"version": 1}, "text", [], {"claims": {"a": 1}}])
def test_bad_document_shapes_rejected(tmp_path, document):
    with pytest.raises(ValueError, match=r"claims register"):
        load_claims(_write(tmp_path, document))


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ValueError, match=r"not found.*nope\.yml"):
        load_claims(tmp_path / "nope.yml")
    bad = tmp_path / "bad.yml"
    bad.write_text("claims: [\n  - id: a\n   broken", encoding="utf-8")
    with pytest.raises(ValueError, match=r"not valid YAML"):
        load_claims(bad)


# ----------------------------------------------------------------------------- summaries


def test_summarise_counts():
    entries = [
        _good_entry(id="idldp-a"),
        _good_entry(id="idldp-b", status="reproduced", evidence="lab-b"),
        _good_entry(id="lip-a", paper="lip", status="refuted", evidence="lab-c", corrected="c"),
    ]
    table = summarise(validate_claims(entries))
    assert set(table) == {*PAPERS, "total"}
    zero = dict.fromkeys(STATUSES, 0)
    assert table["idldp"] == {**zero, "pending": 1, "reproduced": 1, "total": 2}
    assert table["lip"]["refuted"] == 1 and table["lip"]["total"] == 1
    assert table["fldp"]["total"] == 0
    assert table["total"] == {**zero, "pending": 1, "reproduced": 1, "refuted": 1, "total": 3}


def test_summarise_rejects_unvalidated_claim():
    bogus = Claim("q-1", "other", "x", "lemma", "s", "pending", None)
    with pytest.raises(ValueError, match=r"'q-1'.*unknown paper 'other'"):
        summarise([bogus])


def test_rows_and_markdown(real_claims):
    header, rows = summary_rows(real_claims)
    assert header == ["paper", *STATUSES, "total"]
    assert [r[0] for r in rows] == [*PAPERS, "total"]
    assert rows[-1][-1] == len(real_claims)

    header, rows = claim_rows(real_claims)
    assert header == ["id", "paper", "location", "statement", "status", "evidence"]
    assert len(rows) == len(real_claims) and rows[0][0] == real_claims[0].id

    text = to_markdown_table(["a", "b"], [["x|y", None], [1, 2.5]])
    assert text.splitlines() == ["| a | b |", "|---|---|", "| x\\|y |  |", "| 1 | 2.5 |"]

    with pytest.raises(ValueError, match=r"unknown claim column 'proof'"):
        claim_rows(real_claims, columns=("id", "proof"))
    with pytest.raises(ValueError, match=r"row \[1\] has 1 cells"):
        to_markdown_table(["a", "b"], [[1]])


def test_scorecard_page_uses_register():
    page = (REPO / "book" / "scorecard.md").read_text(encoding="utf-8")
    assert page.lstrip().startswith("---")
    assert "(scorecard)=" in page and "# Scorecard" in page
    assert 'load_claims("claims.yml")' in page
    # everything the page shows is glued Markdown pasted as MyST (pandas HTML cannot hold roles)
    assert "to_html" not in page and "display(HTML" not in page
    glued = re.findall(r'glue\(f?"([^"]+)"', page)
    pasted = re.findall(r"^```\{glue:md\} (\S+)\n:format: myst\n```$", page, flags=re.M)
    expanded = {k.replace("{paper}", p) for k in glued for p in PAPERS}
    assert set(pasted) <= expanded and len(pasted) == 3 + len(PAPERS)
    # the definitions of the statuses are the register's own, pasted from status_definitions()
    assert 'glue("scorecard_statuses", Markdown(status_definitions())' in page
    for paper in PAPERS:  # one section per paper, titled as the package titles it
        assert f"### {PAPER_TITLES[paper]}\n" in page
        assert f"glue:md}} scorecard_register_{paper}" in page


# ----------------------------------------------------------------------------- inline markup


@pytest.mark.parametrize(
    "content, expected",
    [
        ("idldp.md::t1_ours_best:.2f", GlueReference("idldp.md", "t1_ours_best", ".2f")),
        ("idldp_experiments.md::fig6_n_eps:d", GlueReference("idldp_experiments.md", "fig6_n_eps", "d")),
        ("sub/ch.ipynb::x_1:s", GlueReference("sub/ch.ipynb", "x_1", "s")),
        ("idldp.md::gain:.1%", GlueReference("idldp.md", "gain", ".1%")),
    ],
)
def test_parse_glue_reference(content, expected):
    assert parse_glue_reference(content) == expected
    assert expected.role() == f"{{glue:text}}`/book/{content}`"
    assert expected.role("/") == f"{{glue:text}}`/{content}`"


@pytest.mark.parametrize(
    "content",
    [
        "t1_ours_best:.2f",  # no document: the register has no glue of its own
        "idldp.md::t1_ours_best",  # no format: myst-nb would read the key as the format
        "idldp::t1_ours_best:.2f",  # not a chapter file
        "idldp.md::t1 ours:.2f",
        "idldp.md::key:.2q",  # no type character
        "idldp.md::key:,",
        "idldp.md::key:.2.3f",  # not a valid specification
        "/book/idldp.md::key:d",  # relative to the register only
        "../book/idldp.md::key:d",
    ],
)
def test_parse_glue_reference_rejects(content):
    with pytest.raises(ValueError, match=r"glue reference"):
        parse_glue_reference(content)


def test_markup_validated_on_load(tmp_path):
    glue = "{glue:text}`idldp.md::t1_ours_best:.2f`"
    ok = _good_entry(statement="$\\min \\mathcal{E}$-LDP, see {ref}`scorecard`", note=f"total {glue}$\\,n$")
    assert load_claims(_write(tmp_path, [ok]))[0].note == f"total {glue}$\\,n$"
    bad = {
        "statement": (_good_entry(statement=f"total {glue}"), r"statement: glue references are allowed in notes only"),
        "location": (_good_entry(location=f"Sec. {glue}"), r"location: glue references"),
        "unpaired": (_good_entry(statement="costs $5"), r"statement: unpaired"),
        "display": (_good_entry(note="$$x$$"), r"note: unpaired or display-math"),
        "role": (_good_entry(note="{glue:any}`idldp.md::k:d`"), r"note: use the glue:text role"),
        "format": (_good_entry(note="{glue:text}`idldp.md::k`"), r"note: glue reference"),
        "broken role": (_good_entry(note="see {ref}`scorecard"), r"note: malformed role"),
    }
    for entry, message in bad.values():
        with pytest.raises(ValueError, match=rf"'idldp-lemma-1'.*{message}"):
            load_claims(_write(tmp_path, [entry]))


def test_myst_inline_escapes_text_and_keeps_markup():
    assert myst_inline(None) == "" and myst_inline("") == ""
    assert myst_inline("a_i * b_i <= 1 [7] `x` #1 & {{ y }}") == (
        "a\\_i \\* b\\_i \\<= 1 \\[7\\] \\`x\\` \\#1 \\& \\{\\{ y \\}\\}"
    )
    assert myst_inline("$a_i * b_i$ and {prf:ref}`lem-minid-ldp`") == "$a_i * b_i$ and {prf:ref}`lem-minid-ldp`"
    assert myst_inline("two\n  lines") == "two lines"
    assert myst_inline("- not a list") == "\\- not a list"
    assert myst_inline("1. not a list") == "1\\. not a list"
    assert myst_inline("12) no") == "12\\) no" and myst_inline("> no") == "\\> no"
    glued = myst_inline("gain {glue:text}`idldp_experiments.md::fig5_gain_40:.0f`%")
    assert glued == "gain {glue:text}`/book/idldp_experiments.md::fig5_gain_40:.0f`%"
    assert myst_inline("{glue:text}`idldp.md::k:d`", doc_root="/") == "{glue:text}`/idldp.md::k:d`"
    with pytest.raises(ValueError, match=r"unpaired"):
        myst_inline("$x")


def test_glue_references_in_register_order():
    entries = [
        _good_entry(id="idldp-a", note="{glue:text}`b.md::k2:d` and {glue:text}`a.md::k1:.1f`"),
        _good_entry(id="idldp-b"),
        _good_entry(id="idldp-c", note="{glue:text}`a.md::k1:.2f`"),
    ]
    refs = glue_references(validate_claims(entries))
    assert refs == [
        ("idldp-a", GlueReference("b.md", "k2", "d")),
        ("idldp-a", GlueReference("a.md", "k1", ".1f")),
        ("idldp-c", GlueReference("a.md", "k1", ".2f")),
    ]


# ----------------------------------------------------------------------------- chapter sources

_CHAPTER = """---
kernelspec:
  name: python3
---
# A chapter

Prose that mentions glue("prose_only", 1) is not code.

```{code-cell} ipython3
from myst_nb import glue
glue("plain", 1, display=False)
glue( 'single_quoted', 2)
for ell in (1, 2):
    glue(f"ratio_l{ell}", ell, display=False)
glue(f"fixed", 3)
```

````{code-cell} ipython3
glue("four_backticks", 4)
````
"""


def test_chapter_glue_keys(tmp_path):
    chapter = tmp_path / "ch.md"
    chapter.write_text(_CHAPTER, encoding="utf-8")
    keys, templates = chapter_glue_keys(chapter)
    assert keys == {"plain", "single_quoted", "fixed", "four_backticks"}
    assert [t.pattern for t in templates] == ["ratio_l.+"]
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text(json.dumps({"cells": [
        {"cell_type": "markdown", "source": ['glue("in_markdown", 1)']},
        {"cell_type": "code", "source": ["x = 1\n", 'glue("from_ipynb", x)\n']},
    ]}), encoding="utf-8")
    assert chapter_glue_keys(notebook) == (frozenset({"from_ipynb"}), ())
    with pytest.raises(ValueError, match=r"chapter not found"):
        chapter_glue_keys(tmp_path / "missing.md")


def test_check_glue_references(tmp_path):
    (tmp_path / "ch.md").write_text(_CHAPTER, encoding="utf-8")
    good = validate_claims([
        _good_entry(id="idldp-a", note="{glue:text}`ch.md::plain:d`, {glue:text}`ch.md::ratio_l30:.2f`"),
        _good_entry(id="idldp-b", note="no numbers"),
    ])
    assert check_glue_references(good, tmp_path) == glue_references(good)
    bad = validate_claims([
        _good_entry(id="idldp-a", note="{glue:text}`ch.md::prose_only:d`"),
        _good_entry(id="idldp-b", note="{glue:text}`gone.md::plain:d` {glue:text}`ch.md::ratio_:d`"),
    ])
    with pytest.raises(ValueError) as info:
        check_glue_references(bad, tmp_path)
    lines = str(info.value).splitlines()
    assert lines[1:] == [
        "claim 'idldp-a': 'ch.md' does not glue the key 'prose_only'",
        "claim 'idldp-b': glue reference to 'gone.md', which does not exist",
        "claim 'idldp-b': 'ch.md' does not glue the key 'ratio_'",
    ]


def test_real_register_glue_references_resolve(real_claims):
    """Every value a note quotes is glued by the chapter the note names."""
    refs = glue_references(real_claims)
    assert len(refs) >= 20  # the ID-LDP notes quote computed values through glue
    chapters = {"idldp.md", "idldp_experiments.md", "ipldp.md", "ipldp_experiments.md", "lip.md", "fldp.md",
                "fldp_experiments.md", "lip_experiments.md", "synthesis.md"}
    assert {ref.doc for _, ref in refs} <= chapters
    check_glue_references(real_claims)


def test_book_labels(tmp_path):
    (tmp_path / "ch.md").write_text(
        "(sec-a)=\n# A\n\n```{prf:lemma} L\n:label: lem-a\n\nx\n```\n\n"
        ":::{prf:theorem}\n:label: thm-b\n:::\n\n```{figure} x.png\n:label: fig-c\n\ncap\n```\n\n"
        "```{math}\n:label: eq-d\nx\n```\n\n$$\nx = 1\n$$ (eq-e)\n\n(tgt-h)=\nNot a heading.\n\n"
        "````{admonition} Nested\n```{prf:remark}\n:label: rem-i\n```\n\n   $$\n   y\n   $$ (eq-j)\n````\n\n"
        "```python\n(not-a-label)=\n```\n\n```{code-cell} ipython3\n:label: not-either\n```\n",
        encoding="utf-8",
    )
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "page.md").write_text("(sec-f)=\n# F\n", encoding="utf-8")
    (tmp_path / "_build").mkdir()
    (tmp_path / "_build" / "skip.md").write_text("(sec-g)=\n", encoding="utf-8")
    (tmp_path / "_probe.md").write_text("(sec-k)=\n", encoding="utf-8")
    assert book_labels(tmp_path) == {
        "sec-a": BookLabel("sec-a", "ch", "section", 1), "lem-a": BookLabel("lem-a", "ch", "prf", 5),
        "thm-b": BookLabel("thm-b", "ch", "prf", 11), "fig-c": BookLabel("fig-c", "ch", "target", 15),
        "eq-d": BookLabel("eq-d", "ch", "eq", 21), "eq-e": BookLabel("eq-e", "ch", "eq", 27),
        "tgt-h": BookLabel("tgt-h", "ch", "target", 29), "rem-i": BookLabel("rem-i", "ch", "prf", 34),
        "eq-j": BookLabel("eq-j", "ch", "eq", 39), "sec-f": BookLabel("sec-f", "sub/page", "section", 1),
    }
    roles = {label: found.role for label, found in book_labels(tmp_path).items()}
    assert roles["sec-a"] == roles["fig-c"] == roles["tgt-h"] == "ref" and roles["lem-a"] == "prf:ref"
    assert roles["eq-d"] == roles["eq-j"] == "eq" and book_labels(tmp_path)["lem-a"].where == "ch.md:5"


def test_evidence_labels_resolve_with_the_right_role(real_claims):
    labels = book_labels()
    assert labels == book_labels(REPO / "book")
    assert (labels["lem-minid-ldp"].doc, labels["lem-minid-ldp"].role) == ("idldp", "prf:ref")
    assert (labels["sec-idldp-table1"].doc, labels["sec-idldp-table1"].role) == ("idldp", "ref")
    assert (labels["sec-idldp-fig6"].doc, labels["sec-idldp-fig6"].role) == ("idldp_experiments", "ref")
    assert (labels["eq-idue-estimator"].doc, labels["eq-idue-estimator"].role) == ("idldp", "eq")
    # an equation indented inside a directive, and the labels of the API reference pages
    assert labels["eq-ipldp-ratio"].kind == "eq" and labels["api-testing"].doc == "api/testing"
    missing = {c.id: c.evidence for c in real_claims if c.evidence and c.evidence not in labels}
    assert not missing, missing


# ----------------------------------------------------------------------------- MyST tables and boxes


def _list_table_rows(text: str) -> list[list[str]]:
    """Split a list-table produced by the renderers into rows of cells (paragraphs kept)."""
    lines = text.splitlines()
    assert lines[0].startswith("```{list-table}") and lines[-1] == "```"
    rows: list[list[str]] = []
    for line in lines[1:-1]:
        if line.startswith("* - ") or line == "* -":
            rows.append([line[4:]])
        elif line.startswith("  - ") or line == "  -":
            rows[-1].append(line[4:])
        elif line.startswith("    "):
            rows[-1][-1] += "\n" + line[4:]
        elif line == "" and rows:
            rows[-1][-1] += "\n"
        else:
            assert line == "" or line.startswith(":"), line
    return [[cell.strip("\n") for cell in row] for row in rows]


def test_summary_table(real_claims):
    text = summary_table(real_claims)
    assert ":header-rows: 1" in text and ":class: scorecard-counts" in text
    rows = _list_table_rows(text)
    assert rows[0] == ["paper", *(f"{{{STATUS_BADGES[s]}}}`{s}`" for s in STATUSES), "total"]
    assert [r[0] for r in rows[1:]] == ["ID-LDP", "IPLDP", "FLDP", "LIP", "**total**"]  # short names
    _, counts = summary_rows(real_claims)
    assert [[int(c) for c in r[1:]] for r in rows[1:]] == [r[1:] for r in counts]


def test_register_table_real(real_claims):
    """One row per claim: claim (location, id, badges + evidence) | statement + folded note | corrected result."""
    labels = book_labels()
    for paper in PAPERS:
        claims = [c for c in real_claims if c.paper == paper]
        text = register_table(real_claims, paper=paper, labels=labels)
        assert ":widths: 27 48 25" in text and ":width: 100%" in text
        rows = _list_table_rows(text)
        assert rows[0] == ["claim", "statement", "corrected result"]
        assert len(rows) == 1 + len(claims)
        for claim, row in zip(claims, rows[1:]):
            assert len(row) == 3
            # one paragraph, three lines joined by hard line breaks (a backslash ending the line)
            location, ident, status = row[0].split("\\\n")
            assert location == f"**{myst_inline(claim.location)}**" and ident == claim.id
            badges = f"{{{STATUS_BADGES[claim.status]}}}`{claim.status}`"
            if claim.data:
                badges += f" {{{DATA_BADGE}}}`{DATA_QUALIFIERS[claim.data][0]}`"
            assert badges == claim_badges(claim)
            role = labels[claim.evidence].role if claim.evidence else None
            if role == "ref":  # a section: a short link text
                assert status == f"{badges} {{ref}}`{EVIDENCE_TEXT} <{claim.evidence}>`"
            elif role:  # a theorem or an equation shows its number
                assert status == f"{badges} {{{role}}}`{claim.evidence}`"
            else:
                assert status == badges and claim.status == "pending"
            statement, *folded = row[1].split("\n\n", 1)
            assert statement == myst_inline(claim.statement)
            if claim.note:
                assert folded == [f":::{{dropdown}} {NOTE_TITLE}\n:margin: 0\n"
                                  ":class-container: scorecard-note sd-shadow-none\n:class-title: sd-py-1\n\n"
                                  f"{myst_inline(claim.note)}\n:::"]
                assert "{glue:text}`idldp" not in folded[0]  # rewritten under /book/
            else:
                assert folded == []
            assert row[2] == (myst_inline(claim.corrected) if claim.corrected else EMPTY_CELL)
    lemma = next(r for r in _list_table_rows(register_table(real_claims, labels=labels))
                 if "\\\nidldp-lemma-1\\\n" in r[0])
    assert lemma[0].endswith("{prf:ref}`lem-minid-ldp`") and "$2 \\min \\mathcal{E}$" in lemma[1]
    slip = next(r for r in _list_table_rows(register_table(real_claims, labels=labels))
                if "\\\nipldp-claim-eq23\\\n" in r[0])
    assert "{bdg-danger-line}`slip`" in slip[0] and "{n S^2}" in slip[2]


def test_register_table_options():
    claims = validate_claims([_good_entry(note="a_b", data="stand-in"),
                              _good_entry(id="lip-x", paper="lip", status="refuted", evidence="nowhere",
                                          corrected="$y$ instead")])
    columns = ("id", "paper", "location", "kind", "status", "data", "evidence", "note", "corrected")
    text = register_table(claims, columns=columns, labels={}, title="T")
    assert text.splitlines()[0] == "```{list-table} T"
    rows = _list_table_rows(text)
    assert rows[0] == ["id", "paper", "location", "kind", "status", "data", "evidence", "note", "corrected result"]
    assert rows[1] == ["`idldp-lemma-1`", PAPER_TITLES["idldp"], "Lemma 1, Sec. IV-B", "lemma",
                       "{bdg-secondary-line}`pending`", "{bdg-info-line}`on a stand-in`", "", "a\\_b", EMPTY_CELL]
    assert rows[2][4:] == ["{bdg-danger}`refuted`", "", "{ref}`nowhere`", "", "$y$ instead"]
    # an unknown label still fails the nitpicky build; with a note column, no note is folded
    assert ":::{dropdown}" not in text
    assert len(_list_table_rows(register_table(claims, paper="lip", labels={}))) == 2
    assert ":widths:" not in register_table(claims, columns=("note",), labels={})
    unfolded = _list_table_rows(register_table(claims, labels={}, fold_notes=False))
    assert unfolded[1][1] == "A short paraphrase."
    with pytest.raises(ValueError, match=r"unknown paper 'dp'"):
        register_table(claims, paper="dp", labels={})
    with pytest.raises(ValueError, match=r"unknown claim column 'proof'"):
        register_table(claims, columns=("id", "proof"), labels={})
    with pytest.raises(ValueError, match=r"no claims to show for paper 'fldp'"):
        register_table(claims, paper="fldp", labels={})


def test_status_definitions_render_the_vocabulary():
    rows = _list_table_rows(status_definitions())
    assert rows[0] == ["status", "meaning"]
    assert [r[0] for r in rows[1:]] == [f"{{{STATUS_BADGES[s]}}}`{s}`" for s in STATUSES] + [
        data_badge(k) for k in DATA_QUALIFIERS]
    assert [r[1] for r in rows[1:]] == [*STATUS_DEFINITIONS.values(), *(d for _, d in DATA_QUALIFIERS.values())]
    assert ":class: scorecard-statuses" in status_definitions()
    assert data_badge(None) == ""


def test_chapter_box():
    labels = {"sec-a": BookLabel("sec-a", "ch1", "section", 1), "thm-b": BookLabel("thm-b", "ch2", "prf", 1)}
    claims = validate_claims([
        _good_entry(id="idldp-a", location="Sec. I", statement="$x_i$ holds", status="reproduced",
                    evidence="sec-a", note="see {glue:text}`ch1.md::k:d`", data="partly stand-in"),
        _good_entry(id="idldp-b", location="Theorem 2", statement="y", status="slip", evidence="thm-b",
                    corrected="$y'$ at {glue:text}`ch2.md::k:d`"),
        _good_entry(id="idldp-c", statement="z"),
        _good_entry(id="lip-d", paper="lip", statement="w"),
    ])
    box = chapter_box("idldp", claims, labels=labels)
    lines = box.splitlines()
    assert lines[:3] == [f"```{{admonition}} Claims of {PAPER_TITLES['idldp']} in the register",
                         ":class: note claims-box", ""]
    assert lines[3] == ("- **Sec. I** (`idldp-a`): $x_i$ holds {bdg-success}`reproduced` "
                        "{bdg-info-line}`partly on a stand-in` Evidence: {ref}`sec-a`.")
    assert lines[4] == ("- **Theorem 2** (`idldp-b`): y {bdg-danger-line}`slip` Evidence: {prf:ref}`thm-b`. "
                        "Corrected: $y'$ at {glue:text}`/book/ch2.md::k:d`")
    assert lines[5] == "- **Lemma 1, Sec. IV-B** (`idldp-c`): z {bdg-secondary-line}`pending`"
    assert lines[-2:] == ["Every claim of the four papers, with notes: {ref}`scorecard`.", "```"]
    assert "lip-d" not in box and "ch1.md" not in box
    only = chapter_box("idldp", claims, doc="ch2", labels=labels, title="Here", notes=True)
    assert only.splitlines()[0] == "```{admonition} Here" and "idldp-a" not in only and "idldp-b" in only
    with_notes = chapter_box("idldp", claims, doc="ch1", labels=labels, notes=True)
    assert "see {glue:text}`/book/ch1.md::k:d`" in with_notes
    with pytest.raises(ValueError, match=r"no claims of paper 'idldp' with evidence in 'ch3'"):
        chapter_box("idldp", claims, doc="ch3", labels=labels)
    with pytest.raises(ValueError, match=r"unknown paper"):
        chapter_box("IDLDP", claims, labels=labels)


def test_chapter_box_real_and_recipe(real_claims):
    labels = book_labels()
    for doc in ("idldp", "idldp_experiments"):
        box = chapter_box("idldp", real_claims, doc=doc, labels=labels)
        ids = [c.id for c in real_claims if c.evidence and labels[c.evidence].doc == doc]
        assert ids and all(f"(`{i}`)" in box for i in ids)
        assert box.count("\n- **") == len(ids)
    # the docstring documents the exact two cells that paste a box
    doc = chapter_box.__doc__ or ""
    assert 'glue("claims_box", Markdown(chapter_box("idldp", load_claims(), doc="idldp")), display=False)' in doc
    assert "```{glue:md} claims_box\n        :format: myst\n        ```" in doc
