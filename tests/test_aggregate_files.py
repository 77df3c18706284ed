"""Tests for ldpkit.aggregation.aggregate_files: many report files, each to a part on Dask, then merged.

* The aggregate and the estimate equal those of one process (:meth:`Aggregator.add_files`) bit
  for bit: here, on Dask's synchronous, threaded and process schedulers and on a small local
  cluster (in-process workers on loopback, by its client and by its address); another order of
  the files gives the same counts.  A :class:`~ldpkit.domain.Domain` pickles (to workers and back).
* Refusals before any report is read (every file opened first, by the validating reader): an
  empty list, a file given twice, files of another mechanism, configuration, contract or domain
  (naming the file), a bad scheduler; reports counted twice (two copies of one file, or a file
  already in a resumed aggregator) are refused before anything is added.
* ``ldpkit estimate --scheduler ADDRESS`` writes the same CSV as without it.
"""

from __future__ import annotations

import pickle
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import loopback_dask_client
import ldpkit.aggregation as aggregation
from ldpkit import GRR, OUE
from ldpkit._validation import ArgumentTypeError
from ldpkit.aggregation import Aggregator, aggregate_files
from ldpkit.cli import main
from ldpkit.domain import Domain
from ldpkit.reportio import ReportFileError, save_reports

LABELS = Domain(["tea", "coffee", "milk", "water", "juice"])


def _files(folder: Path, mech: Any, sizes: list[int], *, domain: Domain | None = LABELS, csv_every: int = 3,
           seed: int = 0) -> list[str]:
    """Report files of ``mech`` of the given sizes (every ``csv_every``-th one in the CSV form), with data lines."""
    rng = np.random.default_rng(seed)
    paths = []
    for i, n in enumerate(sizes):
        path = folder / f"part{i:02d}.{'csv' if i % csv_every == 2 else 'ldpr'}"
        items = rng.integers(0, mech.d, size=n)
        save_reports(path, mech.perturb(items, rng=rng), mech, domain=domain, data=f"shard {i % 4}")
        paths.append(str(path))
    return paths


def _same(a: Aggregator, b: Aggregator) -> None:
    """Two aggregators hold the same totals, and their estimates are equal to the last bit."""
    assert a.support is not None and b.support is not None
    assert a.support.dtype == b.support.dtype == np.int64 and np.array_equal(a.support, b.support)
    assert (a.n, a.batches, a.files, a.data, a.domain) == (b.n, b.batches, b.files, b.data, b.domain)
    ea, eb = a.estimate(), b.estimate()
    assert ea.counts.tobytes() == eb.counts.tobytes() and ea.variance.tobytes() == eb.variance.tobytes()
    assert (ea.n, ea.labels, ea.mechanism, ea.data) == (eb.n, eb.labels, eb.mechanism, eb.data)


@pytest.fixture(scope="module")
def grr_files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    # uneven sizes, binary and CSV: the sums must not depend on how reports are cut
    return _files(tmp_path_factory.mktemp("grr"), GRR(5, 1.0), [700, 1, 2500, 300, 999, 40, 1200])


@pytest.fixture(scope="module")
def dask_client() -> Iterator[Any]:
    yield from loopback_dask_client(n_workers=2, threads_per_worker=1)


# ============================================================================ the same, bit for bit
def test_one_process_equals_add_files(grr_files: list[str]) -> None:
    one = Aggregator(GRR(5, 1.0)).add_files(grr_files)
    got = aggregate_files(grr_files)
    _same(got, one)
    assert got.n == 700 + 1 + 2500 + 300 + 999 + 40 + 1200 and got.batches == 7
    assert got.domain == LABELS and got.data == ["shard 0", "shard 1", "shard 2", "shard 3"]


@pytest.mark.parametrize("scheduler", ["synchronous", "threads"])
@pytest.mark.parametrize("per_task", [1, 3000, aggregation._TASK_REPORTS])  # a task per file, per run, for all
def test_dask_local_schedulers_equal_one_process(grr_files: list[str], scheduler: str, per_task: int,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("dask")
    monkeypatch.setattr(aggregation, "_TASK_REPORTS", per_task)
    _same(aggregate_files(grr_files, scheduler=scheduler), aggregate_files(grr_files))


def test_small_files_grouped_into_runs() -> None:
    names = [f"f{i}" for i in range(6)]
    sizes = [aggregation._TASK_REPORTS, 1, aggregation._TASK_REPORTS - 1, 5, 2 * aggregation._TASK_REPORTS, 7]
    assert aggregation._groups(names, sizes) == [["f0"], ["f1", "f2"], ["f3", "f4"], ["f5"]]


def test_dask_cluster_equals_one_process(grr_files: list[str], dask_client: Any,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aggregation, "_TASK_REPORTS", 1000)  # several tasks, on both workers
    one = aggregate_files(grr_files)
    _same(aggregate_files(grr_files, scheduler=dask_client), one)
    _same(aggregate_files(grr_files, scheduler=dask_client.scheduler.address), one)  # an address, as the CLI has it


def test_dask_processes_equal_one_process(grr_files: list[str]) -> None:
    # parts pickled back from worker processes: the domain of each file with them (a Domain pickles as its labels)
    pytest.importorskip("dask")
    _same(aggregate_files(grr_files[:4], scheduler="processes"), aggregate_files(grr_files[:4]))


def test_domain_pickles_as_its_labels() -> None:
    back = pickle.loads(pickle.dumps(LABELS))
    assert back == LABELS and back.labels == LABELS.labels and back.encode(["milk"]).tolist() == [2]


def test_order_of_files_changes_no_count(grr_files: list[str]) -> None:
    # integer totals: another order gives the same support and estimate (only the order of files and data lines)
    forward, backward = aggregate_files(grr_files), aggregate_files(grr_files[::-1])
    assert np.array_equal(forward.support, backward.support) and forward.n == backward.n
    assert forward.estimate().counts.tobytes() == backward.estimate().counts.tobytes()
    assert sorted(forward.files) == sorted(backward.files)


def test_oue_on_dask_equals_one_process(tmp_path: Path) -> None:
    pytest.importorskip("dask")
    paths = _files(tmp_path, OUE(5, 0.5), [300, 20, 800], domain=None)
    one = Aggregator(OUE(5, 0.5)).add_files(paths)
    _same(aggregate_files(paths, scheduler="threads"), one)


def test_adds_to_a_resumed_aggregator(grr_files: list[str], tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    Aggregator(GRR(5, 1.0)).add_files(grr_files[:3]).save(state)
    resumed = aggregate_files(grr_files[3:], aggregator=Aggregator.load(state))
    _same(resumed, Aggregator(GRR(5, 1.0)).add_files(grr_files))


# ============================================================================ refusals
def test_empty_list_refused() -> None:
    with pytest.raises(ValueError, match="paths must name at least one report file, got an empty list"):
        aggregate_files([])
    with pytest.raises(ValueError, match="at least one report file"):
        aggregate_files(iter([]), scheduler="synchronous")


@pytest.mark.parametrize("paths", ["a.ldpr", Path("a.ldpr"), 3, None])
def test_paths_must_be_a_list_of_names(paths: Any) -> None:
    with pytest.raises(ArgumentTypeError, match="paths must be a list of report file names"):
        aggregate_files(paths)


def _no_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any read of reports fail the test: refusals must come before any work."""
    def read(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("reports were read before the refusal")

    monkeypatch.setattr(aggregation, "_read_part", read)
    monkeypatch.setattr(aggregation, "_files_parts", read)


@pytest.mark.parametrize(
    ("other", "message"),
    [
        (GRR(5, 2.0), r"other\.ldpr: reports were made by GRR.*not by GRR"),  # another budget
        (OUE(5, 1.0), r"other\.ldpr: reports were made by OUE"),  # another mechanism
    ],
)
def test_mixed_mechanisms_refused_by_name_before_any_work(grr_files: list[str], tmp_path: Path, other: Any,
                                                           message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    odd = tmp_path / "other.ldpr"
    save_reports(odd, other.perturb(np.arange(5), rng=1), other, domain=LABELS)
    _no_reading(monkeypatch)
    with pytest.raises(ReportFileError, match=message):
        aggregate_files([*grr_files[:2], str(odd), *grr_files[2:]])


def test_mixed_contracts_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # two members calibrated to two promises of one family: their provenance differs
    from ldpkit.calibration import calibrate
    from ldpkit.contracts import parse

    loose = calibrate("OUE", parse("ldp:epsilon=2", d=5)).mechanism
    tight = calibrate("OUE", parse("ldp:epsilon=1", d=5)).mechanism
    a, b = tmp_path / "loose.ldpr", tmp_path / "tight.ldpr"
    save_reports(a, loose.perturb(np.arange(5), rng=1), loose)
    save_reports(b, tight.perturb(np.arange(5), rng=1), tight)
    _no_reading(monkeypatch)
    with pytest.raises(ReportFileError, match=r"tight\.ldpr: reports were made by"):
        aggregate_files([a, b])


def test_mixed_domains_refused_by_name_before_any_work(grr_files: list[str], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    odd = tmp_path / "labels.ldpr"
    grr = GRR(5, 1.0)
    save_reports(odd, grr.perturb(np.arange(5), rng=1), grr, domain=Domain(["a", "b", "c", "d", "e"]))
    _no_reading(monkeypatch)
    with pytest.raises(ReportFileError, match=r"labels\.ldpr: its domain .* differs from that of .*part00\.ldpr"):
        aggregate_files([*grr_files, str(odd)], scheduler="synchronous")
    with pytest.raises(ReportFileError, match=r"labels\.ldpr: its domain .* differs from that of the aggregator"):
        aggregate_files([str(odd)], aggregator=Aggregator(grr, domain=LABELS))


def test_a_file_given_twice_or_missing_refused(grr_files: list[str], tmp_path: Path) -> None:
    link = tmp_path / "link.ldpr"
    link.symlink_to(grr_files[0])
    with pytest.raises(ValueError, match=r"link\.ldpr: given twice .*part00\.ldpr"):
        aggregate_files([grr_files[0], str(link)])
    with pytest.raises(FileNotFoundError, match=r"nowhere\.ldpr: no such report file"):
        aggregate_files([grr_files[0], str(tmp_path / "nowhere.ldpr")])


def test_reports_counted_twice_refused_and_nothing_added(grr_files: list[str], tmp_path: Path) -> None:
    pytest.importorskip("dask")
    copy = tmp_path / "copy.csv"
    shutil.copyfile(grr_files[2], copy)
    with pytest.raises(ReportFileError, match=r"copy\.csv: these reports are already in the aggregate"):
        aggregate_files([*grr_files, str(copy)], scheduler="threads")
    resumed = Aggregator(GRR(5, 1.0)).add_file(grr_files[2])
    before = (resumed.support.copy(), resumed.n, list(resumed.files))  # type: ignore[union-attr]
    with pytest.raises(ReportFileError, match=r"part02\.csv: these reports are already in the aggregate"):
        aggregate_files(grr_files, aggregator=resumed)
    assert np.array_equal(resumed.support, before[0]) and (resumed.n, resumed.files) == before[1:]


def test_a_file_corrupted_inside_is_refused_by_name_on_the_worker(grr_files: list[str], tmp_path: Path) -> None:
    # the header and end record pass the first look; the block's checksum fails where the file is read
    pytest.importorskip("dask")
    bad = tmp_path / "bad.ldpr"
    raw = bytearray(Path(grr_files[3]).read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    bad.write_bytes(bytes(raw))
    for scheduler in (None, "threads"):
        with pytest.raises(ReportFileError, match=r"bad\.ldpr: .*(checksum|CRC)"):
            aggregate_files([grr_files[0], str(bad)], scheduler=scheduler)


def test_bad_scheduler_refused_before_any_work(grr_files: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _no_reading(monkeypatch)
    with pytest.raises(ArgumentTypeError, match="scheduler must be None, a distributed.Client"):
        aggregate_files(grr_files, scheduler=2)
    with pytest.raises(ValueError, match="scheduler must be one of"):
        aggregate_files(grr_files, scheduler=" ")
    with pytest.raises(ArgumentTypeError, match="aggregator must be an Aggregator"):
        aggregate_files(grr_files, aggregator=GRR(5, 1.0))  # type: ignore[arg-type]


def test_scheduler_without_dask_is_a_clear_error(grr_files: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "dask", None)  # import dask now fails
    monkeypatch.setitem(__import__("sys").modules, "distributed", None)
    with pytest.raises(ImportError, match=r"pip install 'ldpkit\[cluster\]'"):
        aggregate_files(grr_files, scheduler="threads")
    with pytest.raises(ImportError, match=r"needs dask\.distributed"):
        aggregate_files(grr_files, scheduler="tcp://127.0.0.1:8786")


def test_unreachable_scheduler_is_a_value_error(grr_files: list[str]) -> None:
    pytest.importorskip("distributed")
    with pytest.raises(ValueError, match="scheduler: cannot connect to 'no-port'"):
        aggregate_files(grr_files, scheduler="no-port")


# ============================================================================ the command line
def test_cli_estimate_with_scheduler_writes_the_same_csv(grr_files: list[str], tmp_path: Path, dask_client: Any,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    one, dask = tmp_path / "one.csv", tmp_path / "dask.csv"
    assert main(["estimate", *grr_files, "--output", str(one)]) == 0
    address = dask_client.scheduler.address
    assert main(["estimate", *grr_files, "--output", str(dask), "--scheduler", address]) == 0
    assert dask.read_bytes() == one.read_bytes()
    assert f"read on the Dask cluster at {address}" in capsys.readouterr().out


def test_cli_estimate_bad_scheduler_exit_2_before_any_work(grr_files: list[str], tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("distributed")
    out, state = tmp_path / "never.csv", tmp_path / "state.json"
    argv = ["estimate", *grr_files, "--output", str(out), "--state", str(state), "--scheduler", "no-port"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "--scheduler: cannot connect to 'no-port'" in captured.err and captured.out == ""
    assert not out.exists() and not state.exists()
