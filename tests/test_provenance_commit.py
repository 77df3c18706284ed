"""The commit in every provenance record: recorded by a build, read live from a checkout, or explained.

``setup.py`` writes ``ldpkit/_build_info.json`` into the build tree; ``ldpkit/_buildinfo.py`` reads
the checkout's live state first, then that record (``ldpkit.experiments.provenance.git_revision``).
The build tests build real wheels of a copy of the package's sources (committed to a throwaway
git repository, or with no ``.git`` at all, as an sdist or an archive is) with pip, using the
installed setuptools when it is recent enough for ``pyproject.toml`` and pip's isolated build
environment otherwise (what ``pip install .`` itself uses).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tomllib
import zipfile
from datetime import datetime
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import ldpkit
from conftest import REPO, run_process
from ldpkit._buildinfo import FILENAME, UNKNOWN, build_record, git_state, revision
from ldpkit.experiments.provenance import environment, git_revision

#: what a build of the package reads (pyproject.toml names README.md and LICENSE)
SOURCES = ("setup.py", "pyproject.toml", "README.md", "LICENSE", ".gitignore", "ldpkit")

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(root: Path, *args: str) -> str:
    cmd = ["git", "-C", str(root), "-c", "user.name=ldpkit tests", "-c", "user.email=tests@example.org",
           "-c", "commit.gpgsign=false", *args]
    return run_process(cmd, capture_output=True, text=True, check=True).stdout.strip()


def _commit_all(root: Path, message: str) -> str:
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", message)
    return _git(root, "rev-parse", "HEAD")


def _sources(dest: Path, *, git: bool) -> Path:
    """A copy of the package's sources in ``dest``, committed to a fresh repository when ``git``."""
    dest.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, dest / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", FILENAME, "*.egg-info"))
        else:
            shutil.copy2(REPO / name, dest / name)
    if git:
        _git(dest, "init", "-q")
        _commit_all(dest, "sources")
    return dest


def _installed_setuptools_builds() -> bool:
    requires = tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"]
    (req,) = [Requirement(r) for r in requires if Requirement(r).name == "setuptools"]
    try:
        return req.specifier.contains(metadata.version("setuptools"))
    except metadata.PackageNotFoundError:
        return False


def _wheel(src: Path, out: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q", "-w", str(out)]
    if _installed_setuptools_builds():
        cmd.append("--no-build-isolation")
    proc = run_process(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = out.glob("ldpkit-*.whl")
    return wheel


def _build_info(wheel: Path) -> dict:
    with zipfile.ZipFile(wheel) as zf:
        return json.loads(zf.read(f"ldpkit/{FILENAME}"))


# ------------------------------------------------------------------------------------- builds

def test_a_wheel_built_from_a_checkout_records_its_commit_and_leaves_the_checkout_clean(tmp_path: Path) -> None:
    src = _sources(tmp_path / "src", git=True)
    head = _git(src, "rev-parse", "HEAD")
    wheel = _wheel(src, tmp_path / "dist")
    record = _build_info(wheel)
    assert record["commit"] == head and record["dirty"] is False
    datetime.fromisoformat(record["built"])
    # the build ran in a temporary directory and wrote nothing into the sources
    assert _git(src, "status", "--porcelain") == ""
    assert not (src / "build").exists() and not (src / "ldpkit" / FILENAME).exists()

    # installed (a wheel unpacked onto the path), ldpkit's provenance record names that commit
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    code = ("import json, ldpkit; from ldpkit.experiments.provenance import environment; "
            "print(json.dumps([ldpkit.__file__, environment()['git']]))")
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = run_process([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    where, git = json.loads(proc.stdout)
    assert Path(where).resolve().is_relative_to(site.resolve())
    assert git == {"commit": head, "dirty": False, "source": "build", "built": record["built"]}


def test_a_wheel_built_without_git_says_why_the_commit_is_unknown(tmp_path: Path) -> None:
    src = _sources(tmp_path / "src", git=False)  # an sdist or an archive: no .git
    record = _build_info(_wheel(src, tmp_path / "dist"))
    assert record["commit"] == UNKNOWN and "dirty" not in record
    assert record["reason"].startswith("at build time: ") and "no .git" in record["reason"]
    pkg = tmp_path / "site" / "ldpkit"
    pkg.mkdir(parents=True)
    (pkg / FILENAME).write_text(json.dumps(record))
    assert revision(pkg) == {"commit": UNKNOWN, "reason": record["reason"]}


# ----------------------------------------------------------------------------- at run time

def test_this_ldpkit_names_its_commit_or_why_not() -> None:
    git = environment()["git"]
    assert git == git_revision()
    root = Path(ldpkit.__file__).resolve().parents[1]
    if (root / ".git").exists():  # the test command's editable install
        assert git["source"] == "checkout" and isinstance(git["dirty"], bool)
        assert git["commit"] == _git(root, "rev-parse", "HEAD")
    elif git["commit"] == UNKNOWN:
        assert git["reason"] and set(git) == {"commit", "reason"}
    else:
        assert git["source"] == "build" and len(git["commit"]) == 40


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git repository holding a package directory ``ldpkit`` with one tracked module."""
    (tmp_path / "ldpkit").mkdir()
    (tmp_path / "ldpkit" / "mod.py").write_text("x = 1\n")
    _git(tmp_path, "init", "-q")
    _commit_all(tmp_path, "one")
    return tmp_path


def test_a_checkout_is_read_live_before_any_build_record(checkout: Path) -> None:
    pkg = checkout / "ldpkit"
    first = _git(checkout, "rev-parse", "HEAD")
    assert revision(pkg) == {"commit": first, "dirty": False, "source": "checkout"}
    # a stale build record in the package directory does not hide the checkout's state
    (pkg / FILENAME).write_text(json.dumps({"commit": "0" * 40, "dirty": False, "built": "2000-01-01T00:00:00"}))
    (checkout / ".gitignore").write_text(f"ldpkit/{FILENAME}\n")
    second = _commit_all(checkout, "two")
    assert second != first and revision(pkg) == {"commit": second, "dirty": False, "source": "checkout"}
    (checkout / "notes.txt").write_text("untracked\n")
    assert revision(pkg)["dirty"] is False, "untracked files do not make a checkout dirty"
    (pkg / "mod.py").write_text("x = 2\n")
    assert revision(pkg) == {"commit": second, "dirty": True, "source": "checkout"}
    record = build_record(checkout)
    assert (record["commit"], record["dirty"]) == (second, True)


def test_the_build_date_follows_source_date_epoch(checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert build_record(checkout)["built"] == "2023-11-14T22:13:20+00:00"


def test_every_unknown_commit_has_a_reason(tmp_path: Path, checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "plain" / "ldpkit"
    pkg.mkdir(parents=True)
    no_record = revision(pkg)
    assert no_record["commit"] == UNKNOWN and f"no {FILENAME}" in no_record["reason"]
    (pkg / FILENAME).write_text("{not json")
    assert "unreadable" in revision(pkg)["reason"]
    (pkg / FILENAME).write_text(json.dumps({"commit": UNKNOWN}))
    assert revision(pkg) == {"commit": UNKNOWN, "reason": f"the build recorded no commit ({FILENAME})"}

    broken = tmp_path / "broken"
    (broken / "ldpkit").mkdir(parents=True)
    (broken / ".git").write_text("gitdir: nowhere\n")  # a worktree whose repository is gone
    reason = revision(broken / "ldpkit")["reason"]
    assert reason.startswith("ldpkit runs from a git checkout, but git rev-parse failed: ")

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no git executable
    assert git_state(checkout) == {"commit": UNKNOWN, "reason": "git is not installed"}
