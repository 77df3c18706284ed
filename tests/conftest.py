"""Shared pytest configuration: the repository root, the book's tooling and the book's chapter list."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
#: the book directory; on ``sys.path`` so that the tests import the book's tooling (``booktools``)
#: as the chapters do, which run with this directory as their working directory
BOOK = REPO / "book"
if str(BOOK) not in sys.path:
    sys.path.insert(0, str(BOOK))


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


@pytest.fixture(params=["here", "none"])
def data_env(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
             tmp_path_factory: pytest.TempPathFactory) -> str:
    """Run a test twice: with the data this machine has ("here"), and with none at all ("none").

    "none" is a fresh machine without the dataset folder: no ``LDPKIT_DATA_DIR``, an empty user
    cache and downloads off, so every real dataset is a labelled stand-in.
    """
    if request.param == "none":
        monkeypatch.delenv("LDPKIT_DATA_DIR", raising=False)
        monkeypatch.setenv("LDPKIT_CACHE_DIR", str(tmp_path_factory.mktemp("empty-cache")))
        monkeypatch.setenv("LDPKIT_OFFLINE", "1")
    return str(request.param)


def planned_label(key: str) -> str:
    """The label dataset ``key`` gets here by the data policy (``ldpkit.datasets.plan``).

    Where the policy would try a download (no local copy, downloads allowed), only the load can
    tell whether it succeeds: the label is then that of the loaded data.
    """
    import warnings

    from ldpkit.datasets import StandInWarning, load, plan

    planned = plan(key)
    if planned.origin != "download":
        return planned.label
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StandInWarning)
        return load(key, source="auto").label


def planned_origin(key: str) -> str:
    """The origin dataset ``key`` gets here by the data policy (a download is resolved as in :func:`planned_label`)."""
    import warnings

    from ldpkit.datasets import StandInWarning, load, plan

    planned = plan(key)
    if planned.origin != "download":
        return planned.origin
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StandInWarning)
        return str(load(key, source="auto").origin)


def reproduce_with_cli(eid: str, kind: str, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, list[list[str]]]:
    """Run ``ldpkit reproduce <eid>`` at a tiny scale into ``out``; check the files it writes.

    A table writes its CSV and its provenance JSON, a figure also its PDF and PNG.  The JSON
    records the run's configuration and, for each real dataset, the origin the data policy
    gives here.  Returns what the command printed and the rows of the CSV (header first, at least
    one data row).
    """
    import csv
    import json

    from ldpkit.cli import main
    from ldpkit.datasets import DATASETS, plan
    from ldpkit.experiments import get

    assert main(["reproduce", eid, "--repeats", "2", "--scale", "0.02", "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    names = [f"{eid}.csv", f"{eid}.json"] + ([] if kind == "table" else [f"{eid}.pdf", f"{eid}.png"])
    assert sorted(p.name for p in out.iterdir()) == sorted(names)
    record = json.loads((out / f"{eid}.json").read_text())
    assert record["id"] == eid and record["config"]["scale"] == 0.02 and record["config"]["repeats"] == 2
    assert record["command"] == f"ldpkit reproduce {eid} --repeats 2 --scale 0.02 --out {out}"
    for key in get(eid).datasets:
        if key in DATASETS and plan(key).origin != "download":
            assert record["datasets"][key]["origin"] == plan(key).origin, key
            assert record["labels"][key].startswith(plan(key).label), key
    assert f"{eid} data: " in stdout
    with open(out / f"{eid}.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert len(rows) > 1
    return stdout, rows


def panel_series(ax: Any) -> int:
    """The series of a panel: its curves, and the sets of markers that sit on no curve of their colour.

    Simulated means drawn as markers on their own exact curve are that curve's series; the
    crosses that mark a printed point's infeasibility annotate a curve and are not counted.
    """
    from matplotlib.colors import to_hex

    from ldpkit.experiments import style

    curves = [line for line in ax.lines if line.get_linestyle() not in ("None", "none", "") and
              len(line.get_xdata()) > 1]
    colours = {to_hex(line.get_color()) for line in curves}
    markers = {to_hex(line.get_color()) for line in ax.lines if line not in curves
               and line.get_marker() not in (style.INFEASIBLE_MARKER, "None", "none", "")}
    return len(curves) + len(markers - colours)
