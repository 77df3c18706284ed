"""Sweeps scale out (RunConfig.map): the same numbers for any number of workers, on joblib's
loky and threading backends and on a Dask cluster, from the API and from ``ldpkit reproduce``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import loopback_dask_client
from ldpkit.cli import main
from ldpkit.experiments import RunConfig, idldp

COUNTS = np.array([400, 250, 120, 80, 60, 40, 25, 15, 8, 2])
EPS = (0.5, 1.0, 2.0)


def _draws(point: int, gen: np.random.Generator) -> tuple[int, list[float]]:
    return point, gen.random(3).tolist()


def _single_item(config: RunConfig) -> pd.DataFrame:
    # IDUE-opt0 is solved numerically: it checks that the solvers agree to the last bit across workers
    return idldp.run_single_item(COUNTS, EPS, ks=(3,), config=config.replace(repeats=2, seed=11, progress=False))


@pytest.fixture
def dask_client() -> Iterator[object]:
    yield from loopback_dask_client(n_workers=1, threads_per_worker=2)


def test_map_gives_point_i_child_i_of_the_seed_sequence_for_any_workers() -> None:
    points = list(range(7))
    children = np.random.SeedSequence(5).spawn(len(points))
    expected = [(i, np.random.default_rng(child).random(3).tolist()) for i, child in enumerate(children)]
    base = RunConfig(seed=5, progress=False)
    assert base.map(_draws, points, "points") == expected
    for jobs, backend in ((2, None), (2, "loky"), (2, "threading"), (-1, "threading")):
        assert base.replace(jobs=jobs, backend=backend).map(_draws, iter(points), "points") == expected
    assert base.map(_draws, [], "points") == []


def test_map_unseeded_draws_fresh_streams() -> None:
    config = RunConfig(progress=False)
    assert config.map(_draws, [0], "p") != config.map(_draws, [0], "p")


def test_map_progress_bar_counts_points(capsys: pytest.CaptureFixture[str]) -> None:
    RunConfig(seed=1, progress=True, jobs=2, backend="threading").map(_draws, range(4), "cells")
    err = capsys.readouterr().err
    assert "cells" in err and "4/4" in err


def test_protocol_frames_identical_for_one_and_two_workers() -> None:
    one = _single_item(RunConfig(jobs=1))
    pd.testing.assert_frame_equal(one, _single_item(RunConfig(jobs=2)), check_exact=True)
    pd.testing.assert_frame_equal(one, _single_item(RunConfig(jobs=2, backend="threading")), check_exact=True)
    assert sorted(set(one["eps"])) == list(EPS)


def test_protocol_on_a_dask_cluster(dask_client: object) -> None:
    one = _single_item(RunConfig(jobs=1))
    pd.testing.assert_frame_equal(one, _single_item(RunConfig(jobs=-1, backend="dask")), check_exact=True)
    # backend="dask" uses the cluster whatever jobs is
    pd.testing.assert_frame_equal(one, _single_item(RunConfig(jobs=1, backend="dask")), check_exact=True)


def _reproduce(out: Path, *options: str) -> bytes:
    assert main(["reproduce", "lip-fig2", "--repeats", "20", "--out", str(out), *options]) == 0
    return (out / "lip-fig2.csv").read_bytes()


def test_cli_jobs_writes_the_same_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = _reproduce(tmp_path / "one")
    assert _reproduce(tmp_path / "two", "--jobs", "2") == one
    assert "jobs=2" in capsys.readouterr().err


def test_cli_scheduler_writes_the_same_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           dask_client: object) -> None:
    one = _reproduce(tmp_path / "one")
    address = dask_client.scheduler.address  # type: ignore[attr-defined]
    assert _reproduce(tmp_path / "dask", "--scheduler", address) == one
    assert f"jobs=-1, scheduler={address}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        ({"jobs": 0}, ValueError, "jobs must be -1 (every core) or an integer >= 1, got 0"),
        ({"jobs": -2}, ValueError, "got -2"),
        ({"jobs": 1.5}, TypeError, "got 1.5"),
        ({"jobs": True}, TypeError, "got True"),
        ({"jobs": "2"}, TypeError, "got '2'"),
        ({"backend": "multiprocessing"}, ValueError,
         "backend must be None or one of ('loky', 'threading', 'dask'), got 'multiprocessing'"),
        ({"backend": 1}, TypeError, "got 1"),
    ],
)
def test_bad_jobs_and_backend_are_refused(changes: dict[str, object], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        RunConfig(**changes)  # type: ignore[arg-type]
    assert message in str(info.value)


def test_numpy_jobs_normalised() -> None:
    assert RunConfig(jobs=np.int64(3)).jobs == 3 and type(RunConfig(jobs=np.int64(3)).jobs) is int


def test_dask_backend_without_a_client_is_a_clear_error() -> None:
    pytest.importorskip("distributed")
    config = RunConfig(seed=1, jobs=2, backend="dask", progress=False)
    with pytest.raises(RuntimeError, match=r"backend='dask' needs an active distributed\.Client"):
        config.map(_draws, range(3), "points")


def test_dask_backend_without_distributed_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed now fails
    config = RunConfig(seed=1, backend="dask", progress=False)
    with pytest.raises(ImportError, match=r"pip install 'ldpkit\[cluster\]'"):
        config.map(_draws, range(3), "points")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--jobs", "0"], "jobs must be -1 (every core) or an integer >= 1, got 0"),
        (["--jobs", "two"], "invalid int value: 'two'"),
        (["--scheduler", "no-port"], "--scheduler: cannot connect to 'no-port'"),
    ],
)
def test_cli_bad_jobs_or_scheduler_exit_2_before_any_work(argv: list[str], message: str, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "never"
    assert main(["reproduce", "lip-fig2", *argv, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""
    assert not out.exists()
