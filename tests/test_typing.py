"""The package type-checks: ``mypy`` (configured in ``pyproject.toml``) reports no error on ``ldpkit``."""

from __future__ import annotations

import os

import pytest

from conftest import REPO

mypy_api = pytest.importorskip("mypy.api", reason="mypy is part of the test extra (pip install -e .[test])")


def test_mypy_is_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    # from the repository root, so that [tool.mypy] of pyproject.toml applies (files = ["ldpkit"]);
    # no cache is read or written, so the result never depends on an earlier run
    monkeypatch.chdir(REPO)
    stdout, stderr, status = mypy_api.run(
        ["--config-file", str(REPO / "pyproject.toml"), "--no-incremental", "--cache-dir", os.devnull]
    )
    assert status == 0, f"mypy reported errors (exit status {status}):\n{stdout}{stderr}"


def test_package_ships_type_information() -> None:
    assert (REPO / "ldpkit" / "py.typed").is_file()
