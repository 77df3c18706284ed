"""The artifact reruns anywhere and checks itself.

* With no data directory at all (no ``LDPKIT_DATA_DIR``, an empty cache, downloads off), every
  registered experiment reruns at reduced scale through ``ldpkit reproduce --all`` and every
  output says what it ran on (CSV labels, the provenance JSON).
* ``ldpkit check --all`` there reproduces every data-free result and every result whose reference
  ran on a stand-in, and calls the others "not comparable" (with the reason, before any run);
  with the shared data the results that need it are reproduced at full scale.  Together the two
  runs check every result once.
* The stored references cover every experiment, each says why it was made (and CHANGELOG.md says
  it too), and the comparison rejects a result moved by a few standard errors or an exact value
  changed in its last digits.

The subprocesses run in their own process group, killed whole if one hangs; the limit is only a
hang guard, far above what a slow machine needs.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO, run_process
from ldpkit import experiments
from ldpkit.datasets import DATASETS
from ldpkit.experiments import check as C

NO_DATA_SCALE = ["--repeats", "2", "--scale", "0.02"]
#: experiments that need no dataset file at all (everything they use is generated)
DATA_FREE = tuple(e.id for e in experiments.list_experiments() if not any(k in DATASETS for k in e.datasets))


def _no_data_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "LDPKIT_DATA_DIR"}
    env.update(LDPKIT_CACHE_DIR=str(tmp / "empty-cache"), LDPKIT_OFFLINE="1")
    return env


def _ldpkit(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m ldpkit ARGS`` in a process group of its own (``conftest.run_process``), ended whole."""
    return run_process([sys.executable, "-m", "ldpkit", *args], capture_output=True, text=True, env=env, cwd=cwd)


def _reference_origins(eid: str) -> set[str]:
    """The origins of the data the stored reference of ``eid`` ran on (empty: no dataset)."""
    return {ident["origin"] for ident in C.load_reference(eid)[1]["datasets"].values()}


#: experiments whose reference ran on nothing real: no dataset, synthetic data or labelled stand-ins only
#: (a fresh machine reruns them on the same data); the others need the shared data
NEEDS_NO_DATA = tuple(eid for eid in experiments.ids() if _reference_origins(eid) <= {"synthetic", "stand-in"})
NEEDS_DATA = tuple(eid for eid in experiments.ids() if eid not in NEEDS_NO_DATA)


@pytest.fixture(scope="module")
def no_data_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    tmp = tmp_path_factory.mktemp("no-data")
    out = tmp / "out"
    proc = _ldpkit(["reproduce", "--all", *NO_DATA_SCALE, "--out", str(out)], _no_data_env(tmp), tmp)
    return proc, out, tmp


def test_every_experiment_reruns_with_no_data(no_data_run) -> None:
    proc, out, _ = no_data_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    for exp in experiments.list_experiments():
        names = {f"{exp.id}.csv", f"{exp.id}.json"} | ({f"{exp.id}.png", f"{exp.id}.pdf"} if exp.kind == "figure"
                                                      else set())
        assert names <= {p.name for p in out.iterdir()}, exp.id
        assert f"{exp.id} data: " in proc.stdout


def test_every_output_says_what_it_ran_on(no_data_run) -> None:
    _, out, _ = no_data_run
    for exp in experiments.list_experiments():
        record = json.loads((out / f"{exp.id}.json").read_text())
        assert record["config"]["scale"] == 0.02 and record["config"]["repeats"] == 2
        real = [k for k in exp.datasets if k in DATASETS]
        assert set(record["datasets"]) >= set(real), exp.id
        for key in real:
            ident = record["datasets"][key]
            # nothing real is available: every real dataset is the synthetic stand-in, and says so
            assert ident["origin"] == "stand-in" and ident["files"] == [], (exp.id, key)
            assert "stand-in" in ident["label"] and "stand-in" in record["labels"][key]
            assert ident["label"] in record["standins"]
        for key, ident in record["datasets"].items():
            if key not in DATASETS:
                assert ident["origin"] == "synthetic", (exp.id, key)
        with open(out / f"{exp.id}.csv", newline="") as fh:
            text = fh.read()
        for key in real:
            if exp.kind == "figure" or "dataset" in text.splitlines()[0]:
                assert record["labels"][key] in text, (exp.id, key)  # the CSV names the stand-in
        if real:
            assert record["standins"], exp.id


@pytest.fixture(scope="session")
def no_data_check(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """``ldpkit check --all --jobs 2`` on a fresh machine: no data directory, an empty cache, downloads off."""
    tmp = tmp_path_factory.mktemp("no-data-check")
    return _ldpkit(["check", "--all", "--jobs", "2"], _no_data_env(tmp), tmp)


def test_check_all_without_data_reproduces_every_result_that_needs_no_data(no_data_check) -> None:
    proc = no_data_check
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    verdicts = {line.split()[0]: line for line in lines[:-1]}
    assert list(verdicts) == list(experiments.ids())
    assert set(DATA_FREE) <= set(NEEDS_NO_DATA) and any(eid not in DATA_FREE for eid in NEEDS_NO_DATA)  # stand-ins
    for eid in NEEDS_NO_DATA:
        assert "  reproduced  " in verdicts[eid], verdicts[eid]
    for eid in NEEDS_DATA:
        assert "  not comparable  " in verdicts[eid] and "reference ran on" in verdicts[eid], verdicts[eid]
        assert not re.search(r"\(\d+ s\)$", verdicts[eid])  # decided before any run (no run time shown)
    assert lines[-1] == (f"{len(verdicts)} checked: {len(NEEDS_NO_DATA)} reproduced, "
                         f"{len(NEEDS_DATA)} not comparable")
    for i, eid in enumerate(experiments.ids(), start=1):  # which experiment runs, on stderr
        assert f"checking {eid} ({i}/{len(verdicts)}; " in proc.stderr


def test_references_cover_every_experiment() -> None:
    for exp in experiments.list_experiments():
        frame, record = C.load_reference(exp.id)
        assert record["id"] == exp.id and record["schema"] == 1 and len(frame) > 0
        defaults = exp.defaults
        assert (record["config"]["repeats"], record["config"]["seed"], record["config"]["scale"]) == (
            defaults.repeats, defaults.seed, defaults.scale), exp.id
        assert C.reference_seconds(exp.id) is not None
        for key in exp.datasets:
            assert key in record["datasets"], (exp.id, key)
        assert "git" not in record["environment"]  # the commit that stores a reference is its version


def _perturbed(tmp_path: Path, eid: str, column: str, change) -> Path:
    directory = tmp_path / "refs"
    directory.mkdir(exist_ok=True)
    for suffix in ("csv", "json"):
        shutil.copy(C.REFERENCES / f"{eid}.{suffix}", directory / f"{eid}.{suffix}")
    frame = pd.read_csv(directory / f"{eid}.csv")
    frame = change(frame)
    frame.to_csv(directory / f"{eid}.csv", index=False)
    return directory


def test_check_rejects_a_mean_moved_by_a_few_standard_errors(tmp_path: Path) -> None:
    # lip-fig2's simulated means carry their exact standard error: move one by 6 of them
    def move(frame: pd.DataFrame) -> pd.DataFrame:
        sim = frame.index[frame["kind"] == "simulated"][3]
        frame.loc[sim, "mse"] += 6 * frame.loc[sim, "se"] * 2 ** 0.5
        return frame

    report = C.check("lip-fig2", directory=_perturbed(tmp_path, "lip-fig2", "mse", move))
    assert report.status == "differs" and "standard errors" in report.detail, report
    assert C.check("lip-fig2").status == "reproduced"


def test_check_rejects_a_changed_exact_value(tmp_path: Path) -> None:
    def nudge(frame: pd.DataFrame) -> pd.DataFrame:
        exact = frame.index[frame["kind"] == "exact"][0]
        frame.loc[exact, "mse"] *= 1 + 1e-5
        return frame

    report = C.check("lip-fig5", directory=_perturbed(tmp_path, "lip-fig5", "mse", nudge))
    assert report.status == "differs" and "relative tolerance" in report.detail, report


def test_repeated_frames_are_summarised_per_setting() -> None:
    spec = C.Comparison(keys=("eps",), repeat="repeat", exact=("theory",))
    frame = pd.DataFrame({"eps": [1.0, 1.0, 2.0, 2.0], "repeat": [0, 1, 0, 1], "theory": [5.0, 5.0, 7.0, 7.0],
                          "mse": [4.0, 6.0, 6.0, 8.0]})
    summary = C.summarise(frame, spec)
    assert summary.to_dict("list") == {"eps": [1.0, 2.0], "theory": [5.0, 7.0], "mse": [5.0, 7.0],
                                       "mse [sd]": [2 ** 0.5, 2 ** 0.5], "[repeats]": [2, 2]}
    # a mean 5 combined standard errors away is rejected; one 1 standard error away is not
    far = C.summarise(frame.assign(mse=frame["mse"] + 5.0), spec)
    near = C.summarise(frame.assign(mse=frame["mse"] + 1.0), spec)
    assert C.compare(summary, far, spec).status == "differs"
    assert C.compare(summary, near, spec).status == "reproduced"


def test_a_simulated_standard_error_is_used_not_compared() -> None:
    # synthesis-comparison's mse_se is the sd of its trials over sqrt(trials): another random stream
    # (another machine) estimates it anew, so only the value it is the standard error of is compared
    spec = C.Comparison(keys=("k",), se={"mse": "mse_se"}, simulated_se=("mse_se",))
    ref = pd.DataFrame({"k": [1, 2], "mse": [10.0, 20.0], "mse_se": [1.0, 2.0]})
    assert C.compare(ref, ref.assign(mse=[10.5, 19.0], mse_se=[1.1, 1.9]), spec).status == "reproduced"
    assert C.compare(ref, ref.assign(mse=[19.0, 20.0], mse_se=[1.1, 1.9]), spec).status == "differs"
    exact = C.Comparison(keys=("k",), se={"mse": "mse_se"})  # an exact standard error is compared
    assert C.compare(ref, ref.assign(mse_se=[1.1, 1.9]), exact).status == "differs"
    with pytest.raises(ValueError, match="no standard error of se"):
        C.Comparison(se={"mse": "mse_se"}, simulated_se=("mse",))


def test_numbers_inside_text_are_compared_as_numbers() -> None:
    spec = C.Comparison(keys=("k",))
    ref = pd.DataFrame({"k": [1, 2], "va": [549552.4706610158, 1.0],
                        "verdict": ["undecided: difference 1.164e-10 (exact)", "A better: difference -1 (exact)"]})
    # rounding noise: a difference of two equal variances (below the row's scale times rtol), a last digit
    noise = ref.assign(verdict=["undecided: difference 0 (exact)", "A better: difference -1.0000000001 (exact)"])
    assert C.compare(ref, noise, spec).status == "reproduced"
    for verdict in (["undecided: difference 0 (exact)", "A better: difference -1.001 (exact)"],  # a number moved
                    ["undecided: difference 0 (exact)", "B better: difference -1 (exact)"],  # a word changed
                    ["undecided: difference 0.9 (exact)", "A better: difference -1 (exact)"],  # above the floor
                    ["undecided: difference 0 (exact)", "A better: difference -1 -1 (exact)"]):  # a number added
        report = C.compare(ref, ref.assign(verdict=verdict), spec)
        assert report.status == "differs" and "verdict" in report.detail, (verdict, report)
    assert C.tokens("IDUE-opt0 at 1e-3, 2.5") == ["IDUE-opt0 at ", 0.001, ", ", 2.5]


@pytest.mark.skipif(not (Path(os.environ.get("LDPKIT_DATA_DIR") or "/nonexistent") / "retail.dat").is_file(),
                    reason="needs the shared data in LDPKIT_DATA_DIR (the references were made with it)")
def test_check_with_the_data_reproduces_every_result_that_needs_it(tmp_path: Path) -> None:
    # the other results are checked by test_check_all_without_data_reproduces_every_result_that_needs_no_data
    proc = _ldpkit(["check", *NEEDS_DATA, "--jobs", "2"], dict(os.environ), tmp_path)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    n = len(NEEDS_DATA)
    assert lines[-1] == f"{n} checked: {n} reproduced", proc.stdout
    for line in lines[:-1]:
        assert "  reproduced  " in line, line


def test_references_are_remade_with_their_reason_and_on_their_own_data(tmp_path: Path, monkeypatch) -> None:
    for eid in ("lip-fig5", "idldp-fig3"):
        for suffix in ("csv", "json"):
            shutil.copy(C.REFERENCES / f"{eid}.{suffix}", tmp_path / f"{eid}.{suffix}")
    C.write_references(["lip-fig5"], "a reason", fresh=False, directory=tmp_path)
    frame, record = C.load_reference("lip-fig5", tmp_path)
    assert record["why"] == "a reason" and record["command"] == "ldpkit check lip-fig5"
    assert C.compare(C.load_reference("lip-fig5")[0], frame, experiments.get("lip-fig5").comparison).status == \
        "reproduced"
    with pytest.raises(ValueError, match="one non-empty line"):
        C.write_references(["lip-fig5"], "two\nlines", fresh=False, directory=tmp_path)
    # without the data idldp-fig3's reference ran on, nothing is run or written
    monkeypatch.delenv("LDPKIT_DATA_DIR", raising=False)
    monkeypatch.setenv("LDPKIT_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("LDPKIT_OFFLINE", "1")
    before = (tmp_path / "idldp-fig3.json").read_text()
    with pytest.raises(ValueError, match="idldp-fig3: Retail: this machine would use Retail \\(stand-in\\)"):
        C.write_references(["lip-fig5", "idldp-fig3"], "a reason", fresh=False, directory=tmp_path)
    assert (tmp_path / "idldp-fig3.json").read_text() == before


def test_every_reference_says_why_it_was_made_and_the_changelog_says_it_too() -> None:
    # a change that moves a result fails `ldpkit check` until its references are remade, with a reason
    # (`ldpkit check --write-references ... --why TEXT`), and that reason must be said in CHANGELOG.md
    changelog = (REPO / "CHANGELOG.md").read_text()
    for eid in experiments.ids():
        why = C.load_reference(eid)[1].get("why")
        assert isinstance(why, str) and why.strip(), f"{eid}: its reference records no reason (remake it with " \
                                                      "ldpkit check --write-references ID --why TEXT)"
        assert why in changelog, f"{eid}: the reason its reference was remade is not in CHANGELOG.md: {why!r}"


def test_no_data_csv_rows_are_complete(no_data_run) -> None:
    _, out, _ = no_data_run
    with open(out / "ipldp-table1.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[2][1] == "Kosarak (stand-in)"


def test_artifact_page_tables_cover_every_item_and_dataset() -> None:
    from booktools import STATUS_BADGES, artifact_table, claim_id, data_table, load_claims
    from booktools.render import claim_badges
    from ldpkit.experiments import artifact

    items = artifact.artifact_items()
    assert [it.id for it in items] == list(experiments.ids())
    claims = {c.id: c for c in load_claims(REPO / "book" / "claims.yml")}
    for it in items:
        assert it.command == f"ldpkit check {it.id}" and it.seconds is not None
        assert it.section == experiments.get(it.id).section
    # every numbered figure and table is a claim of the register, of the same paper
    registered = {it.id: claims[claim_id(it.id) or ""] for it in items if (claim_id(it.id) or "") in claims}
    # not numbered items of a paper: the FLDP datasets table, and the companion's own synthesis and
    # auditing results
    own = {it.id for it in items if it.id.startswith(("synthesis-", "audit-"))}
    assert set(registered) == {it.id for it in items} - {"fldp-datasets"} - own
    assert all(claim.paper == eid.split("-")[0] for eid, claim in registered.items())
    table = artifact_table(items, claims.values())
    assert table.count("\n* - ") == len(items) + 1
    for eid, claim in registered.items():  # its verdict is the register's
        # the status badge, then the data qualifier's badge when the verdict rests on a stand-in
        assert f"{claim_badges(claim)} ({claim.id})" in table, eid
        assert claim_badges(claim).startswith(f"{{{STATUS_BADGES[claim.status]}}}`{claim.status}`"), eid
    # items under the paper's name, never its BibTeX key; the companion's own results as the companion's
    assert not any(it.paper in table for it in items), "a BibTeX key in the Artifact page's table"
    assert table.count("* - Companion") == sum(not it.item.startswith(("Fig.", "Table", "Sec.")) for it in items) > 0
    rows = artifact.data_availability()
    assert [r["dataset"] for r in rows] == [info.name for info in DATASETS.values()]
    assert data_table(rows).count("\n* - ") == len(rows) + 1
