"""The suite's one way to start a subprocess (``conftest.run_process``) leaves nothing running.

A command that outlives its hang guard is killed with everything it started, also a process in a
session of its own (as a Jupyter kernel is), and the test fails with the command's stderr; a
command that ends leaves nothing behind in its process group.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import psutil  # a test dependency (the "test" extra): the suite looks for what a command left running with it
import pytest

from conftest import hang_guard, run_process

#: a command that starts two sleepers, one in its process group and one in a session of its own, writes
#: their process ids and then sleeps ("sleep") or ends at once ("exit"); the first sleeper holds the
#: command's output open, the second too when the command sleeps
_SPAWN = """
import subprocess, sys, time
sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
same = subprocess.Popen(sleeper)
quiet = {} if sys.argv[2] == "sleep" else {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
apart = subprocess.Popen(sleeper, start_new_session=True, **quiet)
with open(sys.argv[1] + ".part", "w") as fh:
    fh.write(f"{same.pid} {apart.pid}")
__import__("os").replace(sys.argv[1] + ".part", sys.argv[1])
print("started", file=sys.stderr, flush=True)
if sys.argv[2] == "sleep":
    time.sleep(600)
"""


def _gone(pid: int) -> bool:
    """Whether ``pid`` has ended (a zombie waiting for its parent counts as ended)."""
    deadline = time.monotonic() + 60  # the kill is asynchronous; a busy machine may take a moment
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def _pids(path: Path) -> list[int]:
    return [int(pid) for pid in path.read_text().split()]


def test_a_command_that_hangs_is_killed_with_everything_it_started(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    guard = 2.0
    while not pids.exists():  # a guard so short that a slow machine kills the command before it spawned: longer
        guard *= 2
        with pytest.raises(pytest.fail.Exception, match=r"still ran after \d+ s ") as failed:
            run_process([sys.executable, "-c", _SPAWN, str(pids), "sleep"], guard=guard, capture_output=True,
                        text=True)
    assert failed.value.msg.endswith("its stderr ended with:\nstarted\n")
    same, apart = _pids(pids)
    assert _gone(same) and _gone(apart)


def test_a_command_that_ends_leaves_nothing_in_its_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    done = run_process([sys.executable, "-c", _SPAWN, str(pids), "exit"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == "started\n"
    same, apart = _pids(pids)
    try:
        assert _gone(same)  # it held the command's output open: the call did not wait for it
    finally:  # one that left the group (a session of its own) and whose parent ended at once is not found
        psutil.Process(apart).kill()


def test_run_process_is_subprocess_run_otherwise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    done = run_process([sys.executable, "-c", "import sys; print(sys.stdin.read() or 'empty')"],
                       capture_output=True, text=True)
    assert done.stdout == "empty\n"  # standard input is empty, not the terminal's
    echoed = run_process([sys.executable, "-c", "import sys; print(sys.stdin.read())"], input="hello",
                         capture_output=True, text=True, cwd=tmp_path)
    assert echoed.stdout == "hello\n"
    import subprocess

    with pytest.raises(subprocess.CalledProcessError):
        run_process([sys.executable, "-c", "raise SystemExit(3)"], check=True)
    monkeypatch.setenv("LDPKIT_TEST_HANG_SCALE", "2.5")
    assert hang_guard(10) == 25
    monkeypatch.setenv("LDPKIT_TEST_HANG_SCALE", "0")
    with pytest.raises(ValueError, match="LDPKIT_TEST_HANG_SCALE must be positive"):
        hang_guard(10)
    assert os.environ["LDPKIT_TEST_HANG_SCALE"] == "0"


#: the calls that start a process without ``run_process``
_STARTERS = {("subprocess", name) for name in ("run", "Popen", "call", "check_call", "check_output", "getoutput",
                                               "getstatusoutput")} | {
    ("os", name) for name in ("system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp", "spawnv", "spawnve",
                              "spawnl", "spawnle", "execv", "execve", "execl", "execle", "execvp", "execlp")}


def test_no_test_starts_a_process_but_through_run_process() -> None:
    """Every test module starts its subprocesses through ``conftest.run_process`` (code given to a child as text is
    the child's own business)."""
    import ast

    tests = Path(__file__).resolve().parent
    bad = []
    for path in sorted(tests.rglob("*.py")):
        if path.name == "conftest.py" and path.parent == tests:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and (node.func.value.id, node.func.attr) in _STARTERS):
                bad.append(f"{path.relative_to(tests)}:{node.lineno} calls {node.func.value.id}.{node.func.attr}")
            if isinstance(node, ast.ImportFrom) and node.module in ("subprocess", "os"):
                bad += [f"{path.relative_to(tests)}:{node.lineno} imports {alias.name} from {node.module}"
                        for alias in node.names if (node.module, alias.name) in _STARTERS]
    assert not bad, "start subprocesses through conftest.run_process:\n" + "\n".join(bad)
