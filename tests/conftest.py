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
