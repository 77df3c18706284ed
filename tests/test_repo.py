"""Repository contract: top-level layout, and CI running exactly the README's test command."""

from __future__ import annotations

import re

from conftest import REPO

ALLOWED_TOP = {"book", "ldpkit", "_config.yml", "_toc.yml", "tests", "environment.yml", "README.md",
               "pyproject.toml", ".ci", "benchmarks", "CITATION.cff", "LICENSE", "CHANGELOG.md",
               "requirements-lock.txt", "CONTRIBUTING.md", "setup.py"}


def _readme_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)\n```", (REPO / "README.md").read_text(), re.S)
    return [b.strip() for b in blocks]


def test_readme_opens_with_book_and_test_commands() -> None:
    commands = _readme_commands()
    assert commands[0].startswith('pip install -e ".[book]"') and "jupyter-book build . -W -n --keep-going" in commands[0]
    assert commands[1] == 'pip install -e ".[test]" && python -m pytest'


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci_lines = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    assert _readme_commands()[1] in ci_lines


def test_top_level_layout() -> None:
    tracked = {p.name for p in REPO.iterdir() if not p.name.startswith(".") or p.name == ".ci"}
    tracked -= {"_build", ".venv", ".hypothesis", ".pytest_cache"}
    extra = {name for name in tracked if name not in ALLOWED_TOP and not name.endswith(".egg-info")}
    assert not extra, f"unexpected top-level entries: {sorted(extra)}"
    for required in ("book", "ldpkit", "_config.yml", "_toc.yml", "tests", "environment.yml", "README.md",
                     "LICENSE", "CHANGELOG.md", "requirements-lock.txt", "CITATION.cff"):
        assert (REPO / required).exists(), required
