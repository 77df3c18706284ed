"""The package type-checks: ``mypy`` (configured in ``pyproject.toml``) reports no error on ``ldpkit``,
and a user's type checker sees ldpkit's types after the README's editable install."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from conftest import REPO, run_process

mypy_api = pytest.importorskip("mypy.api", reason="mypy is part of the test extra (pip install -e .[test])")


def test_mypy_is_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    # from the repository root, so that [tool.mypy] of pyproject.toml applies (files: the kit and
    # the book's tooling);
    # no cache is read or written, so the result never depends on an earlier run
    monkeypatch.chdir(REPO)
    stdout, stderr, status = mypy_api.run(
        ["--config-file", str(REPO / "pyproject.toml"), "--no-incremental", "--cache-dir", os.devnull]
    )
    assert status == 0, f"mypy reported errors (exit status {status}):\n{stdout}{stderr}"


def test_package_ships_type_information() -> None:
    assert (REPO / "ldpkit" / "py.typed").is_file()


_USER_SCRIPT = """\
import ldpkit

reveal_type(ldpkit.OUE)
reveal_type(ldpkit.datasets.DATASETS)
ldpkit.no_such_attribute
"""


def test_type_information_reaches_a_users_type_checker(tmp_path: Path) -> None:
    # What a user gets after the README's editable install: mypy, run from a directory outside the
    # repository on a script that imports ldpkit, must find the package and its py.typed marker
    # (setuptools' import-hook finder for editable installs hides both from type checkers).
    # mypy runs in a fresh process: in this one, pytest has put the repository on sys.path, and
    # mypy's in-process search would find ldpkit there whatever the installation.
    script = tmp_path / "use_ldpkit.py"
    script.write_text(_USER_SCRIPT)
    (tmp_path / "mypy.ini").write_text("[mypy]\n")  # no configuration of the repository or the user
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    proc = run_process(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--no-incremental", "--cache-dir", os.devnull,
         script.name],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )
    out = proc.stdout + proc.stderr
    for symptom in ("missing library stubs", "untyped", "Cannot find implementation", "import-not-found"):
        assert symptom not in out, f"mypy does not see ldpkit's types:\n{out}"
    assert re.search(r'Revealed type is "def \(.*\) -> ldpkit\.unary\.OUE"', out), out
    assert re.search(r'Revealed type is "typing\.Mapping\[(builtins\.)?str, ldpkit\.datasets\.', out), out
    # the lazy submodules are typed, and the lazy loading does not make every attribute Any
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert len(errors) == 1 and 'Module has no attribute "no_such_attribute"' in errors[0], out
