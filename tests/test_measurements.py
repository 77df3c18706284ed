"""The README's measured times and counts are rendered from the committed measurements, not typed.

``benchmarks/measure.py`` writes ``benchmarks/measurements.json`` and renders the README's blocks
``<!-- measured:NAME -->...<!-- /measured -->`` from it; the book's Artifact page reads the same
file. These tests measure nothing: they check the committed file against the renderer.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
from types import ModuleType
from typing import Any

import pytest

from conftest import BOOK, REPO

MEASUREMENTS = REPO / "benchmarks" / "measurements.json"


def _load_measure() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ldpkit_benchmarks_measure", REPO / "benchmarks" / "measure.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


measure = _load_measure()


@pytest.fixture(scope="module")
def measured() -> dict[str, Any]:
    return json.loads(MEASUREMENTS.read_text(encoding="utf-8"))


def test_the_measurements_have_every_field(measured: dict[str, Any]) -> None:
    assert measure.missing_fields(measured) == []
    assert measured["schema"] == measure.SCHEMA
    for cond in measure.CONDITIONS:
        check = measured["runs"][cond]["check"]
        assert check["checked"] == measured["items"] == len(check["statuses"])
        assert check["reproduced"] + check["differs"] + check["not_comparable"] == check["checked"]
        assert set(check["statuses"].values()) <= set(measure.STATUSES)
    # the datasets directory is what separates the two conditions
    assert set(measured["runs"]["with_data"]["datasets"].values()) != {"stand-in"}
    assert set(measured["runs"]["without_data"]["datasets"].values()) == {"stand-in"}


def test_a_missing_or_mistyped_field_is_reported(measured: dict[str, Any]) -> None:
    broken = copy.deepcopy(measured)
    del broken["runs"]["with_data"]["check"]["wall_seconds"]
    broken["items"] = "35"
    broken["quick"] = False
    broken["runs"]["without_data"]["book"] = None
    expected = ["items: str", "runs.with_data.check.wall_seconds: missing",
                "runs.without_data.book: null in a run that was not --quick"]
    if measured["quick"]:
        expected.append("runs.with_data.book: null in a run that was not --quick")
    assert sorted(measure.missing_fields(broken)) == sorted(expected)


def test_the_measurements_name_no_machine_path() -> None:
    text = MEASUREMENTS.read_text(encoding="utf-8")
    assert not re.search(r'"(/|[A-Za-z]:\\)', text), "a path in benchmarks/measurements.json"
    assert not any(prefix in text for prefix in ("/work", "/tmp", "/root", "/home"))


def test_the_readme_blocks_are_rendered_from_the_committed_measurements(measured: dict[str, Any]) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert measure.render_readme(readme, measured) == readme, (
        "the README's measured blocks differ from benchmarks/measurements.json: run "
        "`python benchmarks/measure.py --readme-only`")


def test_the_artifact_page_reads_the_measurements() -> None:
    page = (BOOK / "artifact.md").read_text(encoding="utf-8")
    assert '"benchmarks" / "measurements.json"' in page
    for key in ("art_check_with", "art_check_without_reproduced", "art_repro_without", "art_meas_machine"):
        assert f"{{glue:text}}`{key}`" in page
    assert "```{glue:md} art_book_times" in page


def _example(*, quick: bool, differs: int = 0) -> dict[str, Any]:
    def check(reproduced: int, not_comparable: int) -> dict[str, Any]:
        return {"wall_seconds": 105.2, "checked": 35, "reproduced": reproduced - differs, "differs": differs,
                "not_comparable": not_comparable}

    def book(seconds: float) -> dict[str, Any] | None:
        return None if quick else {"wall_seconds": seconds, "pages": 20, "executed_seconds": 254.0,
                                   "longest_seconds": 71.0, "longest_page": "ID-LDP experiments"}

    return {"date": "2026-11-26", "items": 35, "machine": {"cpu": "AMD EPYC", "cores": 2, "memory_gib": 23.5},
            "runs": {"with_data": {"check": check(35, 0), "reproduce": {"wall_seconds": 50.0}, "book": book(252.4)},
                     "without_data": {"check": check(12, 23), "reproduce": {"wall_seconds": 53.0},
                                      "book": book(314.0)}}}


def test_the_blocks_say_what_was_measured() -> None:
    full = {name: render(_example(quick=False)) for name, render in measure.BLOCKS.items()}
    assert full["quickstart"].startswith(
        "Measured on 2 cores (2026-11-26): the book builds from a clean `_build` in 5 min 14 s with no data "
        "directory at all and 4 min 12 s with the datasets, and the reduced-scale run of every experiment takes "
        "53 s without the data and 50 s with them. ")
    assert "1 min 45 s with the datasets (all 35 reproduced)" in full["check"]
    assert "without them (12 reproduced, 23 not comparable:" in full["check"]
    assert full["execution"].endswith("the 20 executed pages ran for 4 min 14 s in total, the longest "
                                      "(ID-LDP experiments) for 1 min 11 s; the whole build with its checks took "
                                      "4 min 12 s.")
    quick = {name: render(_example(quick=True)) for name, render in measure.BLOCKS.items()}
    assert "takes 53 s without the data and 50 s with them; the book's build is not measured yet" in quick["quickstart"]
    assert "not measured yet" in quick["quickstart"] and "No build has been measured" in quick["execution"]
    assert "(34 reproduced, 1 differs)" in measure.BLOCKS["check"](_example(quick=True, differs=1))


def test_every_block_occurs_once() -> None:
    blocks = "".join(f"a <!-- measured:{name} -->x<!-- /measured --> b\n" for name in measure.BLOCKS)
    measure.render_readme(blocks, _example(quick=True))
    with pytest.raises(ValueError, match="measured blocks"):
        measure.render_readme(blocks + "c <!-- measured:check -->y<!-- /measured -->", _example(quick=True))
    with pytest.raises(ValueError, match="measured blocks"):
        measure.render_readme(blocks.replace("measured:check", "measured:other"), _example(quick=True))


def test_wrapped_blocks_never_start_a_line_with_a_block_marker() -> None:
    text = "a - b + c 1. d > e # f <g h"
    wrapped = measure._wrap(text, first=1, width=1)
    assert wrapped.split() == text.split()
    assert not any(measure._LINE_START.match(line) for line in wrapped.splitlines())
    assert all(len(line) <= 100 for line in measure._wrap("word " * 80, first=40).splitlines())


def test_durations_read_as_the_book_writes_them() -> None:
    from booktools.execution import duration_text

    for seconds in (0, 0.4, 37.6, 59.5, 60, 252.4, 3599.4, 3600, 3790, 86400.2):
        assert measure.duration_text(seconds) == duration_text(seconds)
