"""Tests for ldpkit.claims and the real register book/claims.yml."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import yaml

from ldpkit import claims as cl
from ldpkit.claims import (
    KINDS,
    MAX_STATEMENT_LENGTH,
    PAPERS,
    STATUSES,
    Claim,
    claim_rows,
    default_claims_path,
    load_claims,
    summarise,
    summary_rows,
    to_markdown_table,
    validate_claims,
)

REPO = Path(__file__).resolve().parent.parent
REGISTER = REPO / "book" / "claims.yml"


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
    assert default_claims_path() == REGISTER.resolve()


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


def _book_labels() -> set[str]:
    """Labels defined in the chapters: ``(label)=`` targets, ``:label:`` options, ``$$ (label)``."""
    labels: set[str] = set()
    for md in (REPO / "book").glob("*.md"):
        text = md.read_text(encoding="utf-8")
        labels |= set(re.findall(r"^\(([A-Za-z0-9_-]+)\)=\s*$", text, flags=re.M))
        labels |= set(re.findall(r"^:label: *([A-Za-z0-9_-]+)\s*$", text, flags=re.M))
        labels |= set(re.findall(r"^\$\$ *\(([A-Za-z0-9_-]+)\)\s*$", text, flags=re.M))
    return labels


def test_evidence_labels_exist_in_the_book(real_claims):
    labels = _book_labels()
    assert {"idldp", "def-ldp"} <= labels  # the scanner sees page targets and directive labels
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


def test_unknown_paper_rejected(tmp_path):
    path = _write(tmp_path, {"claims": [_good_entry(), _good_entry(id="x-thm-1", paper="dp2006")]})
    with pytest.raises(ValueError, match=r"'x-thm-1'.*unknown paper 'dp2006'"):
        load_claims(path)


def test_unknown_status_rejected(tmp_path):
    path = _write(tmp_path, {"claims": [_good_entry(status="done")]})
    with pytest.raises(ValueError, match=r"'idldp-lemma-1'.*unknown status 'done'"):
        load_claims(path)


def test_unknown_kind_rejected(tmp_path):
    path = _write(tmp_path, {"claims": [_good_entry(kind="definition")]})
    with pytest.raises(ValueError, match=r"'idldp-lemma-1'.*unknown kind 'definition'"):
        load_claims(path)


def test_duplicate_id_rejected(tmp_path):
    path = _write(tmp_path, {"claims": [_good_entry(), _good_entry(location="elsewhere")]})
    with pytest.raises(ValueError, match=r"'idldp-lemma-1' \(entry 1\): duplicate id"):
        load_claims(path)


@pytest.mark.parametrize("status", ["reproduced", "differs", "erratum"])
def test_evidence_required_unless_pending(tmp_path, status):
    path = _write(tmp_path, {"claims": [_good_entry(status=status)]})
    with pytest.raises(ValueError, match=r"'idldp-lemma-1'.*evidence is missing"):
        load_claims(path)
    ok = _write(tmp_path, {"claims": [_good_entry(status=status, evidence="sec-idldp-lemma1")]})
    assert load_claims(ok)[0].evidence == "sec-idldp-lemma1"


def test_blank_evidence_rejected(tmp_path):
    path = _write(tmp_path, {"claims": [_good_entry(status="reproduced", evidence="  ")]})
    with pytest.raises(ValueError, match=r"'idldp-lemma-1'.*evidence must be"):
        load_claims(path)


def test_multiline_statement_rejected(tmp_path):
    path = _write(tmp_path, {"claims": [_good_entry(statement="first line\nsecond line")]})
    with pytest.raises(ValueError, match=r"'idldp-lemma-1'.*single line"):
        load_claims(path)


def test_long_statement_rejected(tmp_path):
    path = _write(tmp_path, {"claims": [_good_entry(statement="x" * (MAX_STATEMENT_LENGTH + 1))]})
    with pytest.raises(ValueError, match=r"'idldp-lemma-1'.*201 characters"):
        load_claims(path)


def test_unknown_field_rejected(tmp_path):
    path = _write(tmp_path, {"claims": [_good_entry(proof="trivial")]})
    with pytest.raises(ValueError, match=r"'idldp-lemma-1'.*unknown field.*proof"):
        load_claims(path)


def test_empty_string_field_rejected(tmp_path):
    path = _write(tmp_path, {"claims": [_good_entry(location="")]})
    with pytest.raises(ValueError, match=r"'idldp-lemma-1'.*'location'"):
        load_claims(path)


def test_non_mapping_entry_rejected(tmp_path):
    path = _write(tmp_path, {"claims": [_good_entry(), "just a string"]})
    with pytest.raises(ValueError, match=r"entry 1.*expected a mapping"):
        load_claims(path)


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


def test_env_var_fallback(tmp_path, monkeypatch):
    target = _write(tmp_path, [_good_entry()])
    monkeypatch.setenv(cl.ENV_VAR, str(target))
    # the repository copy wins while it exists
    assert default_claims_path() == REGISTER.resolve()
    monkeypatch.setattr(cl, "__file__", str(tmp_path / "pkg" / "ldpkit" / "claims.py"))
    assert default_claims_path() == target
    assert load_claims()[0].id == "idldp-lemma-1"
    monkeypatch.delenv(cl.ENV_VAR)
    assert default_claims_path() == tmp_path / "pkg" / "book" / "claims.yml"


# ----------------------------------------------------------------------------- summaries


def test_summarise_counts():
    entries = [
        _good_entry(id="idldp-a"),
        _good_entry(id="idldp-b", status="reproduced", evidence="lab-b"),
        _good_entry(id="lip-a", paper="lip", status="erratum", evidence="lab-c"),
    ]
    table = summarise(validate_claims(entries))
    assert set(table) == {*PAPERS, "total"}
    assert table["idldp"] == {"pending": 1, "reproduced": 1, "differs": 0, "erratum": 0, "total": 2}
    assert table["lip"]["erratum"] == 1 and table["lip"]["total"] == 1
    assert table["fldp"]["total"] == 0
    assert table["total"] == {"pending": 1, "reproduced": 1, "differs": 0, "erratum": 1, "total": 3}


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
    assert page.count(":tags: [remove-input]") == 2
