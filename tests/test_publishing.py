"""Publishing basics: licence, one version, citation metadata, the dependency lists, lazy import.

* The version lives in ``ldpkit/__init__.py`` only; ``pyproject.toml`` reads it, and
  ``CITATION.cff`` and the newest release of ``CHANGELOG.md`` repeat it.
* ``CITATION.cff`` is valid Citation File Format 1.2.0 (checked offline against the schema vendored
  in ``tests/cff/``) and its references are the four papers, with venues, agreeing with the book's
  bibliography.
* ``environment.yml`` lists the same dependencies as ``pyproject.toml``; ``requirements-lock.txt``
  pins every one of them.
* ``import ldpkit`` loads no submodule of ldpkit and not numpy (every public name is imported on
  first use), ``from ldpkit import GRR`` leaves the other families' solvers unloaded, and the
  command line's ``--help`` and ``estimate`` paths leave pandas, ``scipy.stats`` and matplotlib
  unloaded (issue 33: start-up).  These tests assert on what is imported, not on time
  (``benchmarks/startup.py`` measures the time).
"""

from __future__ import annotations

import ast
import datetime
import hashlib
import json
import os
import re
import sys
import tomllib
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

import ldpkit
from conftest import REPO, run_process

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
CFF_SCHEMA = REPO / "tests" / "cff" / "schema-1.2.0.json"
CFF_SCHEMA_SHA256 = "0b8d22140da702d766df318dcff3a91af2f39521298dcf36d76315fd99cc169b"

#: the extras whose union (with the core dependencies) is the environment the results are made
#: with: `pip install -e ".[test]"` pulls in book, cluster and, through book, data and peers
EXTRAS = ("data", "peers", "book", "cluster", "test")

#: pip requirement -> the conda packages that provide it, where the names differ by more than
#: pip's own normalisation (case, ``_`` / ``.`` / ``-``; so types-PyYAML = types-pyyaml needs no
#: entry): conda-forge splits dask's "distributed" extra into the package of that name
PIP_TO_CONDA = {"dask[distributed]": ("dask", "distributed")}


# --------------------------------------------------------------------------------------- helpers

def _requirements(names: tuple[str, ...] = EXTRAS) -> list[Requirement]:
    """Core dependencies and the given extras, ldpkit's own ``ldpkit[...]`` references expanded."""
    optional = PYPROJECT["project"]["optional-dependencies"]
    out: list[Requirement] = []
    todo, seen = [*PYPROJECT["project"]["dependencies"]], set()
    todo += [r for extra in names for r in optional[extra]]
    while todo:
        req = Requirement(todo.pop(0))
        if canonicalize_name(req.name) == "ldpkit":
            todo += [r for extra in sorted(req.extras) if extra not in seen for r in optional[extra]]
            seen |= req.extras
            continue
        out.append(req)
    return out


def _by_name(reqs: list[Requirement]) -> dict[str, SpecifierSet]:
    """name -> the intersection of every specifier given for it."""
    merged: dict[str, SpecifierSet] = {}
    for req in reqs:
        name = canonicalize_name(req.name)
        merged[name] = merged.get(name, SpecifierSet()) & req.specifier
    return merged


def _cff() -> dict[str, Any]:
    return yaml.safe_load((REPO / "CITATION.cff").read_text())


def _releases() -> list[tuple[str, str]]:
    """``(version, date)`` of every released version in CHANGELOG.md, newest first."""
    text = (REPO / "CHANGELOG.md").read_text()
    return re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", text, re.M)


def _bib_entries() -> Iterator[dict[str, str]]:
    """The fields of each entry of book/references.bib (values with their outer braces removed)."""
    text = (REPO / "book" / "references.bib").read_text()
    for chunk in re.split(r"^@", text, flags=re.M)[1:]:
        fields: dict[str, str] = {}
        for match in re.finditer(r"(\w+)\s*=\s*\{", chunk):
            depth, i = 1, match.end()
            while depth:
                depth += {"{": 1, "}": -1}.get(chunk[i], 0)
                i += 1
            fields[match.group(1).lower()] = chunk[match.end(): i - 1]
        yield fields


def _plain(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", title.replace("{", "").replace("}", "").lower()).strip()


# ------------------------------------------------------------------------------ licence, version

def test_licence_is_the_mit_text_the_metadata_names() -> None:
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 ldpkit developers" in text
    assert "Permission is hereby granted, free of charge" in text and 'THE SOFTWARE IS PROVIDED "AS IS"' in text
    project = PYPROJECT["project"]
    assert project["license"] == "MIT", "an SPDX expression, not the deprecated table form"
    assert project["license-files"] == ["LICENSE"]
    assert _cff()["license"] == "MIT"
    # SPDX license strings and license-files need setuptools 77
    (setuptools,) = [Requirement(r) for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools")]
    assert not setuptools.specifier.contains("76.99") and setuptools.specifier.contains("77.0")


def test_version_is_single_sourced() -> None:
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project.get("dynamic", [])
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "ldpkit.__version__"}
    # a literal assignment, so that setuptools reads it without importing ldpkit (and numpy) at build time
    tree = ast.parse((REPO / "ldpkit" / "__init__.py").read_text())
    literals = [node.value.value for node in tree.body if isinstance(node, ast.Assign)
                and [getattr(t, "id", None) for t in node.targets] == ["__version__"]
                and isinstance(node.value, ast.Constant)]
    assert literals == [ldpkit.__version__]
    Version(ldpkit.__version__)  # a valid PEP 440 version


def test_installed_metadata_carries_the_version() -> None:
    from importlib.metadata import version

    assert version("ldpkit") == ldpkit.__version__, (
        "the installed metadata is stale: reinstall (pip install -e \".[test]\") after changing __version__")


def test_citation_and_changelog_repeat_the_version() -> None:
    cff = _cff()
    assert cff["version"] == ldpkit.__version__
    releases = _releases()
    assert releases, "CHANGELOG.md has no release heading '## [x.y.z] - YYYY-MM-DD'"
    newest_version, newest_date = releases[0]
    assert newest_version == ldpkit.__version__
    assert str(cff["date-released"]) == newest_date
    # releases newest first, and an Unreleased section above them
    assert [Version(v) for v, _ in releases] == sorted((Version(v) for v, _ in releases), reverse=True)
    assert [d for _, d in releases] == sorted((d for _, d in releases), reverse=True)
    text = (REPO / "CHANGELOG.md").read_text()
    assert 0 <= text.find("## [Unreleased]") < text.find(f"## [{newest_version}]")


# ------------------------------------------------------------------------------- CITATION.cff

def _stringify_dates(value: Any) -> Any:
    # the schema's own note to implementers: YAML dates must be cast to strings before validating
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _stringify_dates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_stringify_dates(v) for v in value]
    return value


def test_citation_cff_is_valid_against_the_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is part of the test extra")
    # the published file, unmodified (tests/cff/README.md says where it comes from)
    assert hashlib.sha256(CFF_SCHEMA.read_bytes()).hexdigest() == CFF_SCHEMA_SHA256
    schema = json.loads(CFF_SCHEMA.read_text())
    assert schema["$id"] == "https://citation-file-format.github.io/1.2.0/schema.json"
    cff = _cff()
    assert cff["cff-version"] == "1.2.0"
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    errors = [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
              for e in validator.iter_errors(_stringify_dates(cff))]
    assert not errors, "CITATION.cff does not validate:\n" + "\n".join(errors)


def test_citation_cff_reads_the_same_in_yaml_1_1() -> None:
    # PyYAML (YAML 1.1) turns an unquoted 2026-11-21 into a date and 1.10 into a float; quoted,
    # every reader sees the strings the format asks for
    cff = _cff()
    assert isinstance(cff["version"], str) and isinstance(cff["date-released"], str)
    for ref in cff["references"]:
        for key in ("date-published", "version", "number"):
            assert key not in ref or isinstance(ref[key], str), (ref["title"], key)


def test_citation_cff_describes_the_software() -> None:
    cff = _cff()
    assert cff["type"] == "software"
    assert len(cff.get("abstract", "").split()) >= 40, "an abstract of the software"
    keywords = cff.get("keywords", [])
    assert len(keywords) >= 3 and "local differential privacy" in keywords
    assert cff["authors"] == [{"name": "ldpkit developers"}]
    # there is no public address yet: no URL field may point anywhere
    assert not {"url", "repository", "repository-code", "repository-artifact", "doi", "identifiers"} & set(cff)


def test_citation_cff_references_the_four_papers_with_their_venues() -> None:
    refs = _cff()["references"]
    assert len(refs) == 4
    bib = {_plain(entry["title"]): entry for entry in _bib_entries() if "title" in entry}
    acronyms = set()
    for ref in refs:
        title = ref["title"]
        # every author is a person: no "et al." or other placeholder entity
        assert all("family-names" in a and "given-names" in a and "name" not in a for a in ref["authors"]), title
        assert isinstance(ref["year"], int), title
        # a venue
        if ref["type"] == "conference-paper":
            assert ref.get("conference", {}).get("name"), f"{title}: no conference"
        elif ref.get("status") == "preprint":
            assert ref.get("publisher", {}).get("name") and ref.get("url"), f"{title}: no preprint server"
        else:
            assert ref["type"] == "article" and ref.get("journal"), f"{title}: no journal"
        # the facts agree with the book's bibliography
        entry = bib.get(_plain(title))
        assert entry is not None, f"{title!r} is not in book/references.bib"
        assert int(entry["year"]) == ref["year"], title
        bib_families = [a.split(",")[0].strip() for a in re.split(r"\s+and\s+", entry["author"])]
        assert bib_families == [a["family-names"] for a in ref["authors"]], title
        if "start" in ref:
            assert entry["pages"] == f"{ref['start']}--{ref['end']}", title
        acronyms |= {a for a in ("Input-Discriminative", "Item-Oriented", "FLDP", "Localized Information")
                     if a.lower() in title.lower()}
    assert len(acronyms) == 4, "one reference per paper: ID-LDP, IPLDP, FLDP, LIP"


# --------------------------------------------------------------------- environment.yml, lock file

def _conda_environment() -> tuple[dict[str, SpecifierSet], dict[str, SpecifierSet], list[str]]:
    """(conda packages, pip packages, other pip lines) of environment.yml, names normalised."""
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    conda: dict[str, SpecifierSet] = {}
    pip: dict[str, SpecifierSet] = {}
    other: list[str] = []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            for line in dep["pip"]:
                if line.startswith("-"):
                    other.append(line)
                else:
                    req = Requirement(line)
                    pip[canonicalize_name(req.name)] = req.specifier
        else:
            req = Requirement(dep)  # conda's "name>=x" / "name==x" read as pip specifiers
            conda[canonicalize_name(req.name)] = req.specifier
    return conda, pip, other


def test_environment_yml_lists_the_same_dependencies_as_pyproject() -> None:
    expected: dict[str, SpecifierSet] = {}
    for req in _requirements():
        key = f"{req.name}[{','.join(sorted(req.extras))}]" if req.extras else req.name
        for name in PIP_TO_CONDA.get(key, (req.name,)):
            name = canonicalize_name(name)
            expected[name] = expected.get(name, SpecifierSet()) & req.specifier
    conda, pip, other = _conda_environment()
    assert not set(conda) & set(pip), "a package listed both for conda and for pip"
    listed = {**conda, **pip}
    python, tool = listed.pop("python", None), listed.pop("pip", None)
    assert python == SpecifierSet(PYPROJECT["project"]["requires-python"]) and tool == SpecifierSet()
    assert other == ["-e ."], "environment.yml installs ldpkit itself, editable, and nothing else by path"
    missing = sorted(set(expected) - set(listed))
    extra = sorted(set(listed) - set(expected))
    assert not missing and not extra, f"environment.yml lacks {missing}, has extra {extra} (see PIP_TO_CONDA)"
    differ = {name: (str(listed[name]), str(spec)) for name, spec in expected.items() if listed[name] != spec}
    assert not differ, f"version constraints differ (environment.yml, pyproject.toml): {differ}"


def _lock() -> tuple[str, dict[str, str]]:
    text = (REPO / "requirements-lock.txt").read_text()
    pins: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!_-]+)", line)
        assert match, f"requirements-lock.txt: not a plain name==version pin: {line!r}"
        name = canonicalize_name(match.group(1))
        assert name not in pins, f"{name} pinned twice"
        pins[name] = match.group(2)
    return text, pins


def test_lock_file_pins_every_declared_dependency() -> None:
    text, pins = _lock()
    assert "ldpkit" not in pins, "the lock pins ldpkit's dependencies, not ldpkit"
    assert "pip install -r requirements-lock.txt && pip install -e . --no-deps" in text
    assert re.search(r"Python 3\.11", text) and "Linux x86_64" in text
    unpinned, outside = [], []
    for name, spec in _by_name(_requirements()).items():
        if name not in pins:
            unpinned.append(name)
        elif not spec.contains(pins[name], prereleases=True):
            outside.append(f"{name}=={pins[name]} (pyproject: {spec})")
    # dask[distributed]: the extra's package is pinned too
    if "distributed" not in pins:
        unpinned.append("distributed")
    assert not unpinned, f"requirements-lock.txt does not pin {sorted(unpinned)}"
    assert not outside, f"pins outside pyproject.toml's ranges: {outside}"


# --------------------------------------------------------------------------------- lazy import

LAZY = ("ldpkit.datasets", "ldpkit.experiments", "ldpkit.metrics", "pooch", "pandas", "matplotlib")
#: what the estimate command must not load for a GRR report file: pandas (the table and the CSV are
#: written without it), scipy.stats (the normal quantile is the standard library's), matplotlib,
#: and the families whose solvers a GRR does not need
NOT_FOR_ESTIMATE = ("pandas", "scipy.stats", "scipy.optimize", "matplotlib", "ldpkit.idue", "ldpkit.lip",
                    "ldpkit.datasets", "ldpkit.experiments")

_PROBE = """
import json, sys
import ldpkit
loaded = [m for m in {lazy!r} if m in sys.modules]
bare = sorted(m for m in sys.modules if m.startswith(("ldpkit.", "numpy")))
dir_ok = all(name in dir(ldpkit) for name in ldpkit.__all__)
try:
    ldpkit.no_such_attribute
    unknown = "no error"
except AttributeError as exc:
    unknown = str(exc)
n_datasets = len(ldpkit.datasets.DATASETS)
metrics = ldpkit.metrics.__name__
missing = [name for name in ldpkit.__all__ if not hasattr(ldpkit, name)]
print(json.dumps(dict(loaded=loaded, bare=bare, dir_ok=dir_ok, unknown=unknown, n_datasets=n_datasets,
                      metrics=metrics, missing=missing, datasets_now="ldpkit.datasets" in sys.modules)))
"""


def _fresh(code: str) -> Any:
    """What ``code`` prints last (a JSON line), run in a fresh interpreter from the repository root."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    out = run_process([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                      cwd=REPO).stdout
    return json.loads(out.splitlines()[-1])


def test_import_ldpkit_leaves_the_heavy_machinery_unloaded() -> None:
    result = _fresh(_PROBE.format(lazy=LAZY))
    assert result["loaded"] == [], f"import ldpkit loaded {result['loaded']}"
    bare = result["bare"]
    assert bare == [], f"import ldpkit loaded {len(bare)} modules ({', '.join(bare[:6])}, ...): every public name loads on first use"
    assert result["dir_ok"], "dir(ldpkit) must list every name of __all__"
    assert result["unknown"] == "module 'ldpkit' has no attribute 'no_such_attribute'"
    assert result["n_datasets"] > 0 and result["datasets_now"]
    assert result["metrics"] == "ldpkit.metrics"
    assert result["missing"] == []


_NAMES_PROBE = """
import json, sys
import ldpkit
# the submodules that import ldpkit used to load still resolve as attributes, on first access
submodules = [m for m in ("base", "channels", "grr", "unary", "reports", "sets", "channel_oracle", "_validation")
              if getattr(ldpkit, m).__name__ == "ldpkit." + m]
# a class or function is the object its module defines
defined = [name for name in ldpkit.__all__ if isinstance(getattr(ldpkit, name), type)
           and getattr(sys.modules[getattr(ldpkit, name).__module__], name) is not getattr(ldpkit, name)]
namespace = {{}}
exec("from ldpkit import *", namespace)
print(json.dumps(dict(submodules=submodules, defined=defined, star=sorted(set(namespace) - {{"__builtins__"}}))))
"""


def test_every_public_name_resolves_on_first_use() -> None:
    result = _fresh(_NAMES_PROBE.format())
    assert result["submodules"] == ["base", "channels", "grr", "unary", "reports", "sets", "channel_oracle",
                                    "_validation"]
    assert result["defined"] == []
    assert result["star"] == sorted(ldpkit.__all__)


_ONE_FAMILY_PROBE = """
import json, sys
from ldpkit import GRR
GRR(4, 1.0).estimate(GRR(4, 1.0).perturb([0, 1, 2, 3], rng=0))
print(json.dumps([m for m in {heavy!r} if m in sys.modules]))
"""


def test_one_family_loads_without_the_others() -> None:
    assert _fresh(_ONE_FAMILY_PROBE.format(heavy=NOT_FOR_ESTIMATE)) == []


_ESTIMATE_PROBE = """
import contextlib, io, json, sys
from ldpkit.cli import main
status = []
with contextlib.redirect_stdout(io.StringIO()) as out:
    status.append(main(["estimate", {reports!r}]))
    status.append(main(["estimate", {reports!r}, "--output", {csv!r}, "--state", {state!r}, "--level", "0.9"]))
print(json.dumps(dict(status=status, table=out.getvalue().splitlines()[0].split(),
                      loaded=[m for m in {heavy!r} if m in sys.modules])))
"""

_HELP_PROBE = """
import contextlib, io, json, sys
from ldpkit.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    status = main(["--help"])
print(json.dumps(dict(status=status, loaded=sorted({m.split(".")[0] for m in sys.modules} &
                                                  {"numpy", "scipy", "pandas", "matplotlib"}))))
"""


@pytest.mark.parametrize("suffix", [".ldpr", ".csv"])
def test_command_line_estimate_loads_neither_pandas_nor_scipy_stats(suffix: str, tmp_path: Any) -> None:
    import numpy as np

    from ldpkit.domain import Domain
    from ldpkit.grr import GRR
    from ldpkit.reportio import save_reports

    grr = GRR(5, 1.0)
    reports = tmp_path / f"day1{suffix}"
    save_reports(reports, grr.perturb(np.arange(200) % 5, rng=1), grr, domain=Domain(list("abcde")), data="probe")
    csv, state = tmp_path / "estimate.csv", tmp_path / "state.json"
    result = _fresh(_ESTIMATE_PROBE.format(reports=str(reports), csv=str(csv), state=str(state),
                                           heavy=NOT_FOR_ESTIMATE))
    assert result["status"] == [0, 0] and result["table"][:3] == ["label", "estimate", "se"]
    assert csv.read_text().splitlines()[2].startswith("label,estimate,se,") and state.is_file()
    assert result["loaded"] == [], f"ldpkit estimate loaded {result['loaded']}"


def test_command_line_help_loads_no_numerical_library() -> None:
    result = _fresh(_HELP_PROBE)
    assert result == {"status": 0, "loaded": []}
