"""Shared pytest configuration: the repository root and the book's chapter list."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


def toc_chapters() -> list[str]:
    """Every document named in ``_toc.yml`` (root first), as repo-relative paths without suffix."""
    toc = yaml.safe_load((REPO / "_toc.yml").read_text())
    docs = [toc["root"]]
    for part in toc.get("parts", []):
        for chapter in part.get("chapters", []):
            docs.append(chapter["file"])
            docs.extend(section["file"] for section in chapter.get("sections", []))
    return docs


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


def reproduce_with_cli(eid: str, kind: str, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, list[list[str]]]:
    """Run ``ldpkit reproduce <eid>`` at a tiny scale into ``out``; check the files it writes.

    A table writes its CSV, a figure its CSV, PDF and PNG.  Returns what the command printed and
    the rows of the CSV (header first, at least one data row).
    """
    import csv

    from ldpkit.cli import main

    assert main(["reproduce", eid, "--repeats", "2", "--scale", "0.02", "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    expected = [f"{eid}.csv"] if kind == "table" else [f"{eid}.csv", f"{eid}.pdf", f"{eid}.png"]
    assert sorted(p.name for p in out.iterdir()) == expected
    with open(out / f"{eid}.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert len(rows) > 1
    return stdout, rows
