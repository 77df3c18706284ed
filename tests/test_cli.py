"""The ``ldpkit`` command (ldpkit.cli): end to end through the installed console script and
``python -m ldpkit``, and in-process for the usage errors and the datasets report."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ldpkit import experiments
from ldpkit.cli import main
from ldpkit.datasets import DATASETS

FIG2_COLUMNS = ["dataset", "eps", "repeat", "mechanism", "mse_theory", "mse", "re@20", "precision@20"]
SMALL = ["--repeats", "2", "--scale", "0.1"]


def _script() -> Path:
    script = Path(sys.executable).with_name("ldpkit")
    assert script.is_file(), f"console script {script} missing: run `pip install -e .`"
    return script


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, check=False, capture_output=True, text=True, cwd=cwd, env=dict(os.environ), timeout=300)


def _check_fig2_outputs(proc: subprocess.CompletedProcess[str], out: Path) -> list[list[str]]:
    assert proc.returncode == 0, proc.stderr
    files = [out / f"idldp-fig2.{ext}" for ext in ("png", "pdf", "csv")]
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


def test_list_names_every_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(experiments.ids())
    fig8 = next(line for line in lines if line.startswith("idldp-fig8 "))
    assert "figure" in fig8 and "Fig. 8" in fig8 and "kosarak" in fig8
    assert "table" in next(line for line in lines if line.startswith("idldp-table2 "))
    proc = _run([str(_script()), "list"], tmp_path)
    assert proc.returncode == 0 and proc.stdout.splitlines() == lines


def test_datasets_reports_every_dataset(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line for line in lines if line.split() and line.split()[0] in DATASETS}
    assert set(rows) == set(DATASETS)
    for line in rows.values():
        assert any(f"  {status}  " in line for status in ("real", "stand-in", "download", "error")), line


def test_datasets_without_any_file_are_all_standins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("LDPKIT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LDPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LDPKIT_OFFLINE", "1")
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "off (LDPKIT_OFFLINE=1)" in out
    for key in DATASETS:
        line = next(line for line in out.splitlines() if line.startswith(f"{key} "))
        assert "  stand-in  " in line, line


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
    assert "  error  " in line and "sha256" in line


def test_reproduce_names_standins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("LDPKIT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LDPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LDPKIT_OFFLINE", "1")
    out = tmp_path / "out"
    assert main(["reproduce", "idldp-fig7", "--repeats", "2", "--scale", "0.05", "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert "stand-in: Clothing (stand-in)" in stdout
    assert sorted(p.name for p in out.iterdir()) == ["idldp-fig7.csv", "idldp-fig7.pdf", "idldp-fig7.png"]


def test_reproduce_table_writes_csv_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "idldp-table2", "--scale", "0.05", "--out", str(tmp_path)]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["idldp-table2.csv"]
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
