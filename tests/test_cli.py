"""The ``ldpkit`` command (ldpkit.cli): end to end through the installed console script and
``python -m ldpkit``, and in-process for the usage errors and the datasets report."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ldpkit
from ldpkit import experiments
from conftest import planned_label, run_process
from ldpkit import datasets
from ldpkit.cli import main
from ldpkit.datasets import DATASETS, plan

FIG2_COLUMNS = ["dataset", "eps", "repeat", "mechanism", "mse_theory", "mse", "re@20", "precision@20"]
SMALL = ["--repeats", "2", "--scale", "0.1"]


def _script() -> Path:
    script = Path(sys.executable).with_name("ldpkit")
    assert script.is_file(), f"console script {script} missing: run `pip install -e .`"
    return script


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_process(cmd, capture_output=True, text=True, cwd=cwd, env=dict(os.environ))


def _check_fig2_outputs(proc: subprocess.CompletedProcess[str], out: Path) -> list[list[str]]:
    assert proc.returncode == 0, proc.stderr
    files = [out / f"idldp-fig2.{ext}" for ext in ("png", "pdf", "csv", "json")]
    for path in files:
        assert path.is_file() and path.stat().st_size > 0, path
        assert str(path) in proc.stdout.splitlines()
    assert files[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert files[1].read_bytes()[:5] == b"%PDF-"
    with open(files[2], newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == FIG2_COLUMNS
    # 2 datasets x 6 budgets x 2 repeats x 5 mechanisms
    assert len(rows) - 1 == 2 * 6 * 2 * 5
    assert {r[0] for r in rows[1:]} == {"Power-law", "Uniform"}
    assert "stand-in" not in proc.stdout  # synthetic data only
    assert "eps" in proc.stderr and "6/6" in proc.stderr  # the progress bar
    record = json.loads(files[3].read_text())
    assert record["config"] == {"repeats": 2, "seed": 20200422, "scale": 0.1, "jobs": 1, "backend": None}
    assert {k: v["origin"] for k, v in record["datasets"].items()} == {
        "synthetic.power_law_items": "synthetic", "synthetic.uniform_items": "synthetic"}
    assert record["environment"]["ldpkit"] == ldpkit.__version__ and record["environment"]["versions"]["numpy"]
    assert record["command"].startswith("ldpkit reproduce idldp-fig2 --repeats 2 --scale 0.1 --out ")
    assert record["files"] == ["idldp-fig2.png", "idldp-fig2.pdf", "idldp-fig2.csv"]
    assert record["seconds"] > 0
    return rows


@pytest.fixture(scope="module")
def fig2_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[subprocess.CompletedProcess[str], Path]]:
    base = tmp_path_factory.mktemp("cli")
    script_out, module_out = base / "script", base / "module"
    return {
        "script": (_run([str(_script()), "reproduce", "idldp-fig2", *SMALL, "--out", str(script_out)], base),
                   script_out),
        "module": (_run([sys.executable, "-m", "ldpkit", "reproduce", "idldp-fig2", *SMALL, "--out",
                         str(module_out)], base), module_out),
    }


def test_reproduce_through_console_script(fig2_runs) -> None:
    _check_fig2_outputs(*fig2_runs["script"])


def test_reproduce_through_python_m(fig2_runs) -> None:
    _check_fig2_outputs(*fig2_runs["module"])


def test_same_options_give_the_same_csv(fig2_runs) -> None:
    (_, a), (_, b) = fig2_runs["script"], fig2_runs["module"]
    assert (a / "idldp-fig2.csv").read_bytes() == (b / "idldp-fig2.csv").read_bytes()


def test_reproduce_writes_into_current_directory_and_seed_changes_numbers(tmp_path: Path, fig2_runs,
                                                                          capsys: pytest.CaptureFixture[str],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "idldp-fig2", *SMALL, "--seed", "5"]) == 0
    captured = capsys.readouterr()
    assert "seed=5" in captured.err
    written = tmp_path / "idldp-fig2.csv"
    assert written.is_file() and (tmp_path / "idldp-fig2.png").is_file()
    _, default_out = fig2_runs["script"]
    assert written.read_bytes() != (default_out / "idldp-fig2.csv").read_bytes()


def test_list_names_every_id_with_time_and_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:4] == ["ID", "KIND", "PAPER", "ITEM"]
    rows = lines[1:-1]
    assert [line.split()[0] for line in rows] == list(experiments.ids())
    fig8 = next(line for line in rows if line.startswith("idldp-fig8 "))
    kosarak = "Kosarak (download)" if plan("kosarak").origin == "download" else planned_label("kosarak")
    assert "figure" in fig8 and "Fig. 8" in fig8 and kosarak in fig8
    assert re.search(r"\s\d+ s\s", fig8)  # the reference run's wall time
    assert "table" in next(line for line in rows if line.startswith("idldp-table2 "))
    assert "DATA HERE" in lines[0] and lines[-1].startswith("TIME: ")
    proc = _run([str(_script()), "list"], tmp_path)
    assert proc.returncode == 0 and proc.stdout.splitlines() == lines


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"ldpkit {ldpkit.__version__}"


def test_datasets_reports_every_dataset(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line for line in lines if line.split() and line.split()[0] in DATASETS}
    assert set(rows) == set(DATASETS)
    for key, line in rows.items():
        assert f"  {plan(key).origin}  " in line, line


@pytest.fixture
def no_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline, with an empty data directory and an empty cache: no real file anywhere."""
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("LDPKIT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LDPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LDPKIT_OFFLINE", "1")


def test_datasets_without_any_file_are_all_standins(no_data: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "off (LDPKIT_OFFLINE=1)" in out
    for key in DATASETS:
        line = next(line for line in out.splitlines() if line.startswith(f"{key} "))
        assert "  stand-in  " in line, line


def test_datasets_says_when_the_data_dir_is_not_a_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("LDPKIT_DATA_DIR", str(tmp_path / "missing"))
    monkeypatch.setenv("LDPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LDPKIT_OFFLINE", "1")
    assert main(["datasets"]) == 0
    assert "(NOT A DIRECTORY: ignored)" in capsys.readouterr().out
    assert main(["reproduce", "lip-fig5", "--out", str(tmp_path / "out")]) == 0
    assert "is not a directory; it is ignored" in capsys.readouterr().err


def test_datasets_reports_the_prefix_standin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    real = Path(os.environ.get("LDPKIT_DATA_DIR") or tmp_path / "none") / "kosarak-prefix.dat"
    if not real.is_file():
        pytest.skip("needs the real kosarak-prefix.dat in LDPKIT_DATA_DIR")
    data = tmp_path / "data"
    data.mkdir()
    (data / "kosarak-prefix.dat").symlink_to(real)
    monkeypatch.setenv("LDPKIT_DATA_DIR", str(data))
    monkeypatch.setenv("LDPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LDPKIT_OFFLINE", "1")
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out.splitlines()
    line = next(line for line in out if line.startswith("kosarak "))
    assert "  prefix  " in line and "the prefix stand-in resampling the real Kosarak prefix" in line
    assert "  stand-in  " in next(line for line in out if line.startswith("retail "))


def test_datasets_reports_a_found_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "groceries.csv").write_text("milk,bread\n")  # wrong checksum: reported, never used
    monkeypatch.setenv("LDPKIT_DATA_DIR", str(data))
    monkeypatch.setenv("LDPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LDPKIT_OFFLINE", "1")
    assert main(["datasets"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("groceries "))
    assert "  error  " in line and "sha256" in line and "fix: delete or replace" in line


def test_reproduce_names_standins(tmp_path: Path, no_data: None, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["reproduce", "idldp-fig7", "--repeats", "2", "--scale", "0.05", "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert "stand-in: Clothing (stand-in)" in stdout
    assert "idldp-fig7 data: Clothing (stand-in) [stand-in: synthetic stand-in" in stdout
    assert sorted(p.name for p in out.iterdir()) == ["idldp-fig7.csv", "idldp-fig7.json", "idldp-fig7.pdf",
                                                     "idldp-fig7.png"]
    record = json.loads((out / "idldp-fig7.json").read_text())
    clothing = record["datasets"]["clothing"]
    assert clothing["origin"] == "stand-in" and clothing["files"] == [] and "seed 20200420" in clothing["source"]
    assert record["standins"] == ["Clothing (stand-in)"] and len(clothing["content_sha256"]) == 64


def test_reproduce_several_ids_and_all_are_checked_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["reproduce", "lip-fig5", "ipldp-table2", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["ipldp-table2.csv", "ipldp-table2.json", "lip-fig5.csv",
                                                     "lip-fig5.json", "lip-fig5.pdf", "lip-fig5.png"]
    assert main(["reproduce", "lip-fig5", "lip-fig55", "--out", str(tmp_path / "never")]) == 2
    assert "lip-fig55" in capsys.readouterr().err and not (tmp_path / "never").exists()
    assert main(["reproduce", "lip-fig5", "--all", "--out", str(tmp_path / "never")]) == 2
    assert "not both" in capsys.readouterr().err


def test_damaged_file_is_one_line_and_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "retail.dat").write_text("1 2 3\n")  # present, wrong checksum: never a reason for a stand-in
    monkeypatch.setenv("LDPKIT_DATA_DIR", str(data))
    monkeypatch.setenv("LDPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LDPKIT_OFFLINE", "1")
    for argv in (["reproduce", "idldp-fig5", "--out", str(tmp_path / "never")], ["check", "idldp-fig5"]):
        assert main(argv) == 1
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and "retail.dat" in lines[0] and "fix: delete or replace" in lines[0], captured.err
        assert "Traceback" not in captured.err and captured.out == ""
    assert not (tmp_path / "never").exists()
    with pytest.raises(datasets.ChecksumMismatchError):  # --debug shows the error itself
        main(["--debug", "reproduce", "idldp-fig5", "--out", str(tmp_path / "never")])


def test_missing_reader_is_one_line_and_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from ldpkit.datasets import loaders

    monkeypatch.setattr(loaders, "reader_installed", lambda package: False)
    monkeypatch.setattr(loaders, "locate", lambda spec, attempts=None: tmp_path / spec.path)
    assert plan("online-retail").origin == "error"
    assert main(["datasets"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("online-retail "))
    assert "  error  " in line and "pyreadr" in line and "pip install 'ldpkit[data]'" in line
    assert main(["reproduce", "fldp-fig2", "--out", str(tmp_path / "never")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pyreadr" in err[0] and "pip install 'ldpkit[data]'" in err[0]


def test_reproduce_table_writes_csv_and_json_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "idldp-table2", "--scale", "0.05", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idldp-table2.csv", "idldp-table2.json"]
    header = (tmp_path / "idldp-table2.csv").read_text().splitlines()[0].split(",")
    assert header[:3] == ["", "this build: data", "paper: records"]
    assert str(tmp_path / "idldp-table2.csv") in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["reproduce", "idldp-fig9"], "close matches: idldp-fig8"),
        (["reproduce", "idldp-fgi2"], "idldp-fig2"),
        (["reproduce", "idldp-fig2", "--scale", "0"], "scale must be a fraction in (0, 1], got 0.0"),
        (["reproduce", "idldp-fig2", "--scale", "1.5"], "scale"),
        (["reproduce", "idldp-fig2", "--scale", "nan"], "scale"),
        (["reproduce", "idldp-fig2", "--repeats", "0"], "repeats must be an integer in [1, 100000], got 0"),
        (["reproduce", "idldp-fig2", "--repeats", "two"], "invalid int value: 'two'"),
        (["reproduce", "idldp-fig2", "--seed", "-1"], "seed must be a non-negative integer"),
        (["reproduce", "idldp-fig2", "--seed", "1.5"], "invalid int value"),
        (["reproduce"], "required: ID"),
        (["check"], "required: ID"),
        (["check", "lip-fig9"], "close matches: lip-fig8"),
        (["check", "lip-fig5", "--jobs", "0"], "jobs must be -1"),
        (["check", "lip-fig5", "--why", "a reason"], "--why only goes with --write-references"),
        (["check", "lip-fig5", "--allow-data-change"], "--allow-data-change only goes with --write-references"),
        (["check", "--write-references", "lip-fig5"], "--write-references needs --why TEXT"),
        (["check", "--write-references", "lip-fig5", "--why", " "], "--why must be one non-empty line"),
        (["check", "--write-references", "lip-fig5", "--why", "x", "--jobs", "2"],
         "--jobs and --progress do not apply"),
        (["check", "--write-references", "lip-fig9", "--why", "x"], "close matches: lip-fig8"),
        (["frobnicate"], "invalid choice"),
        ([], "required"),
    ],
)
def test_usage_errors_exit_2_before_any_work(argv: list[str], message: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "never"
    extra = ["--out", str(out)] if argv[:1] == ["reproduce"] and len(argv) > 1 else []
    assert main([*argv, *extra]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""
    assert not out.exists()  # rejected before any work


def test_check_says_which_experiment_runs_and_shows_progress_on_request(tmp_path: Path) -> None:
    # stdout: the verdicts only; stderr: "checking ID (i/N; ...)", and the sweeps' bars with --progress
    # (stderr is a pipe here, so without --progress there is no bar)
    for flags, bar in (([], False), (["--progress"], True)):
        proc = _run([sys.executable, "-m", "ldpkit", "check", "lip-fig2", "lip-fig5", *flags], tmp_path)
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert [line.split()[:2] for line in lines[:-1]] == [["lip-fig2", "reproduced"], ["lip-fig5", "reproduced"]]
        assert lines[-1] == "2 checked: 2 reproduced"
        assert "checking lip-fig2 (1/2; " in proc.stderr and "checking lip-fig5 (2/2; " in proc.stderr
        assert ("simulating" in proc.stderr) == bar  # lip-fig2's sweep


def test_out_must_be_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x")
    assert main(["reproduce", "idldp-fig2", "--out", str(target)]) == 2
    assert "--out must be a directory" in capsys.readouterr().err


def test_usage_error_through_console_script(tmp_path: Path) -> None:
    proc = _run([str(_script()), "reproduce", "idldp-fig9", "--out", str(tmp_path / "x")], tmp_path)
    assert proc.returncode == 2 and "idldp-fig8" in proc.stderr and proc.stdout == ""
    proc = _run([sys.executable, "-m", "ldpkit", "reproduce", "idldp-fig2", "--scale", "2"], tmp_path)
    assert proc.returncode == 2 and "scale must be a fraction" in proc.stderr


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "reproduce" in capsys.readouterr().out
