"""Shared pytest configuration: the repository root, the book's tooling and the book's chapter list,
the one way a test starts a subprocess (:func:`run_process`), and the order in which pytest-xdist
hands the modules to its workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
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



# --------------------------------------------------------------------------- pytest-xdist
# The test command runs the suite on two workers (``-n auto`` in pyproject.toml, resolved below)
# and hands out whole modules (``--dist loadfile``): a module's fixtures (the book's build, the
# artifact's reruns, a module's shared runs) are made once, by the one worker that runs it.

#: Modules handed out first, in this order: the book's build and the artifact's reruns take minutes
#: and start at once, one on each worker; the other modules follow in collection order, on whichever
#: worker is free.
FIRST_MODULES = ("tests/test_book.py", "tests/test_artifact.py")
#: workers for a run of whole directories (the suite): the book's build beside everything else
WORKERS = 2


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: two workers for the suite or a directory, one process for files named on the command line.

    A run of a few files gains nothing from workers that each start and import the kit;
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` or an explicit ``-n N`` still decides.
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist reads it
    paths = [Path(str(arg).split("::")[0]) for arg in config.args]
    if paths and all(path.suffix == ".py" or not path.is_dir() for path in paths):
        return 0
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return min(WORKERS, cpus) if cpus > 1 else 0


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the order of the items
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not hasattr(config, "workerinput"):  # one process: collection order
        return
    first = {module: rank for rank, module in enumerate(FIRST_MODULES)}
    items.sort(key=lambda item: first.get(item.nodeid.split("::")[0], len(first)))


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

# --------------------------------------------------------------------------- subprocesses
#: Seconds after which a test's subprocess is taken to hang, and killed with everything it started.
#: It is a hang guard, not a time limit: far above what a slow, busy machine needs (the longest
#: command, the book's build, takes minutes; it gets :data:`BOOK_HANG_GUARD`).  On an unusually slow
#: machine, ``LDPKIT_TEST_HANG_SCALE`` multiplies every guard (e.g. ``4``).
HANG_GUARD = 3600.0
#: the hang guard of the book's build
BOOK_HANG_GUARD = 3 * 3600.0


def hang_guard(seconds: float = HANG_GUARD) -> float:
    """``seconds`` times ``LDPKIT_TEST_HANG_SCALE`` (default 1): the guard a command gets on this machine."""
    scale = float(os.environ.get("LDPKIT_TEST_HANG_SCALE") or 1.0)
    if not scale > 0:
        raise ValueError(f"LDPKIT_TEST_HANG_SCALE must be positive, got {scale!r}")
    return seconds * scale


#: seconds between two looks at a running command's process tree
_POLL = 1.0


def _descendants(pid: int) -> list[Any]:
    """The processes below ``pid`` now (``psutil.Process`` objects; empty without psutil or once it is gone)."""
    try:
        import psutil

        return list(psutil.Process(pid).children(recursive=True))
    except Exception:  # psutil missing, or the process already gone
        return []


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # nothing left in the group
        pass


def _kill_all(processes: Iterable[Any]) -> None:
    for process in processes:
        try:
            process.kill()  # psutil refuses a process id that another process has taken since
        except Exception:  # already gone
            pass


def end_process_tree(proc: subprocess.Popen[Any], seen: Iterable[Any] = ()) -> None:
    """Kill ``proc``, every process of its process group and every descendant it has or had (``seen``).

    While ``proc`` has not been waited for, its tree is listed again before the group is killed:
    a Jupyter kernel runs in a session of its own, so only the tree finds it.  (Once waited for,
    its process id may belong to another process: only the descendants seen before are killed,
    and psutil refuses any of them whose process id was taken since.)
    """
    found = [*seen, *(_descendants(proc.pid) if proc.returncode is None else [])]
    _kill_group(proc.pid)
    _kill_all(found)


def start_process(cmd: Sequence[str], **popen: Any) -> subprocess.Popen[Any]:
    """Start a command that runs beside the test (tests of concurrent processes), in a session of its own.

    Standard input is empty unless given.  The test ends it with :func:`finish_process` (which
    waits up to the hang guard) or :func:`end_process_tree` (which kills it with what it started).
    """
    popen.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.Popen(list(cmd), start_new_session=True, **popen)


def finish_process(proc: subprocess.Popen[Any], guard: float = HANG_GUARD) -> tuple[int, Any, Any]:
    """Wait for a command of :func:`start_process` (its return code, stdout and stderr), then end what it left.

    A command that outlives the hang guard is killed with everything it started and the test fails.
    """
    limit = hang_guard(guard)
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        end_process_tree(proc)
        proc.communicate()
        pytest.fail(f"{' '.join(map(str, proc.args))} still ran after {limit:.0f} s (a hang guard): killed with "
                    "every process it started")
    end_process_tree(proc)
    return proc.returncode, out, err


def run_process(cmd: Sequence[str], *, guard: float = HANG_GUARD, check: bool = False,
                capture_output: bool = False, input: str | bytes | None = None,
                **popen: Any) -> subprocess.CompletedProcess[Any]:
    """:func:`subprocess.run` for tests: the command and everything it starts are ended, whatever happens.

    The command starts a new session (``start_new_session=True``), so it and what it starts
    (workers, kernels, a browser's helpers) form one process group; its process tree is also
    looked at every second, to find what leaves the group (a Jupyter kernel starts a session of
    its own).  When the command has ended, what it left running is killed (also what still
    holds its output open, which would otherwise keep this call waiting); when it outlives the
    hang guard (:func:`hang_guard` of ``guard`` seconds), or the test is interrupted, the group
    and every descendant are killed and the test fails with the command's stderr.  Standard
    input is empty unless ``input`` is given.  The other arguments are those of
    :class:`subprocess.Popen` (``text``, ``env``, ``cwd``, ...); ``check`` raises
    :class:`subprocess.CalledProcessError` on a non-zero exit status, as ``subprocess.run`` does.
    """
    limit = hang_guard(guard)
    if capture_output:
        popen.setdefault("stdout", subprocess.PIPE)
        popen.setdefault("stderr", subprocess.PIPE)
    popen.setdefault("stdin", subprocess.DEVNULL if input is None else subprocess.PIPE)
    proc = subprocess.Popen(list(cmd), start_new_session=True, **popen)
    seen: dict[int, Any] = {}  # every descendant looked at, by process id
    deadline = time.monotonic() + limit
    try:
        while True:
            try:
                out, err = proc.communicate(input, timeout=_POLL)
                break
            except subprocess.TimeoutExpired:
                input = None  # sent once; communicate() goes on from where it was
                seen.update((child.pid, child) for child in _descendants(proc.pid))
                if proc.poll() is not None:  # ended, but what it left holds its output open
                    end_process_tree(proc, seen.values())
                elif time.monotonic() > deadline:
                    end_process_tree(proc, seen.values())
                    try:
                        out, err = proc.communicate(timeout=60)
                    except subprocess.TimeoutExpired:  # a process outside the tree holds the output: stop reading
                        proc.kill()
                        out, err = None, None
                    tail = err[-3000:] if err else ""
                    pytest.fail(f"{' '.join(map(str, cmd))} still ran after {limit:.0f} s (a hang guard, far above "
                                f"what it needs): killed with every process it started; its stderr ended with:\n{tail}")
    except BaseException:  # interrupted (Ctrl-C, a failing worker) or hung: leave nothing running
        end_process_tree(proc, seen.values())
        proc.wait()
        raise
    end_process_tree(proc, seen.values())  # whatever the command left running
    completed = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    if check:
        completed.check_returncode()
    return completed


def assert_variance_with_power(est: Any, counts: Any, var: Any, wrong: Any) -> float:
    """Estimates ``est`` (one row per trial) of ``counts``: the mean within ``Z`` standard errors, the
    sample variance within the band of ``var`` (``Z`` times the variance ratio's standard deviation), and
    the sample variance outside the band of the ``wrong`` variance (the test has power).  The band."""
    import math

    import numpy as np

    from ldpkit.testing import Z

    r = est.shape[0]
    assert np.all(np.abs(est.mean(axis=0) - counts) < Z * np.sqrt(var / r))
    band = Z * math.sqrt(2 / (r - 1))
    assert np.all(np.abs(est.var(axis=0, ddof=1) / var - 1) < band)
    assert np.all(np.abs(est.var(axis=0, ddof=1) / wrong - 1) > band)
    return band


def loopback_dask_client(n_workers: int, threads_per_worker: int) -> Iterable[Any]:
    """A generator for a fixture (``yield from loopback_dask_client(...)``): a dask client on an
    in-process cluster, skipping the test where ``distributed`` is missing."""
    distributed = pytest.importorskip("distributed")
    # in-process workers on loopback, no dashboard: starts in well under a second
    with (distributed.LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker, processes=False,
                                   protocol="tcp://", host="127.0.0.1", dashboard_address=None) as cluster,
          distributed.Client(cluster) as client):
        yield client


def check_experiments_chapter(text: str, anchor: str, ids: Iterable[str], paper: str,
                              figures: set[str]) -> dict[str, str]:
    """The checks every experiments chapter ``text`` passes: the ``anchor`` label once, an
    ``experiments.run`` call for exactly ``ids``, the section label of each experiment of ``paper``, the
    glued ``figures`` with an alt text of 12 words or more and a caption citing ``paper`` and saying what
    it reproduces, and a download link under each figure.  The caption of each figure, by key."""
    import re

    from ldpkit.experiments import list_experiments

    assert text.count(f"({anchor})=") == 1
    called = set(re.findall(r'experiments\.run\("([^"]+)"', text))
    assert called == set(ids)
    for e in list_experiments():
        if e.paper == paper:
            assert f"({e.section})=" in text, e.section
    bodies = dict(re.findall(r"```\{glue:figure\} (\S+)\n(.*?)\n```", text, re.DOTALL))
    assert set(bodies) == figures
    captions = {}
    for key, body in bodies.items():
        alt = re.search(r"^:alt: (.+)$", body, re.MULTILINE)
        assert alt and len(alt.group(1).split()) >= 12, key
        captions[key] = caption = body.split("\n\n", 1)[1]
        assert f"{{cite}}`{paper}`" in caption and "Reproduces" in caption, key
    shown = re.findall(r"display\(HTML\(downloads_html\(fig\d\)\)\)|show_result\(fig\d, ", text)
    assert len(shown) == len(figures)
    return captions


def one_cli_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The one stderr line of a refused command (after any notes printed before the refusal), with no
    traceback anywhere on stderr."""
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if ": error: " in line]
    assert len(errors) == 1 and errors[-1] == err[-1], err
    assert "Traceback" not in "\n".join(err)
    return errors[0]


class EstimatesByInner:
    """Estimation by an inner oracle ``self._inner``, for oracles written in the tests: ``estimate_from_support``,
    ``variance`` and ``_simulate_support`` are the inner oracle's (list this class before
    :class:`~ldpkit.base.FrequencyOracle` among the bases)."""

    _inner: Any

    def estimate_from_support(self, support: Any, n: int) -> Any:
        return self._inner.estimate_from_support(support, n)

    def variance(self, counts: Any) -> Any:
        return self._inner.variance(counts)

    def _simulate_support(self, counts: Any, rng: Any) -> Any:
        return self._inner._simulate_support(counts, rng)
