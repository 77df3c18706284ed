"""What the report-file benchmarks share (``aggregate_files.py``, ``reports_io.py``; not a benchmark).

Each of those scripts runs every case in a fresh Python process (itself with ``--worker SPEC``),
writes its files to a fresh temporary directory unless ``--dir`` names one, checks the free space
first, and records the machine, the date and the command line (absolute paths replaced by
``<path>``) with its results.  The scripts import this module from their own directory, which
Python puts first on ``sys.path`` when it runs a script.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any, Optional

import numpy as np


def machine() -> dict[str, Any]:
    """The platform, processor, cores, memory and the Python, numpy and ldpkit versions."""
    import ldpkit

    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        ram = None
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "cores": os.cpu_count(), "memory_gib": None if ram is None else round(ram, 1),
            "python": platform.python_version(), "numpy": np.__version__, "ldpkit": ldpkit.__version__}


def today() -> str:
    """Today's date (UTC), ``YYYY-MM-DD``."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")


def ran_as_worker(argv: list[str], run_case: Callable[[dict[str, Any]], dict[str, Any]]) -> bool:
    """With ``--worker SPEC``, run the one case SPEC (JSON) here and print its result as JSON."""
    if argv[:1] != ["--worker"]:
        return False
    print(json.dumps(run_case(json.loads(argv[1]))), flush=True)
    return True


def add_mechanism_arguments(ap: argparse.ArgumentParser) -> None:
    """``--d`` and ``--epsilon``: the domain size (default 1,000) and the budget (default 1)."""
    ap.add_argument("--d", type=int, default=1000)
    ap.add_argument("--epsilon", type=float, default=1.0)


def add_file_arguments(ap: argparse.ArgumentParser) -> None:
    """``--dir`` and ``--keep``: where the report files go and whether they stay."""
    ap.add_argument("--dir", default=None, help="directory for the report files (default: a fresh temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the report files")


def add_json_argument(ap: argparse.ArgumentParser) -> None:
    """``--json FILE``: where the results go."""
    ap.add_argument("--json", default=None, help="write the results to this JSON file")


def files_directory(ap: argparse.ArgumentParser, args: argparse.Namespace, prefix: str, need: int,
                    what: str) -> tuple[str, bool]:
    """The directory for the files (``--dir`` or a fresh temporary one), and whether it is fresh.

    Stops (``ap.error``) when ``what`` (the files, or the largest file) needs more than 90% of the
    disk's free space: about ``need`` bytes.
    """
    own_dir = args.dir is None
    directory = tempfile.mkdtemp(prefix=prefix) if own_dir else os.path.abspath(args.dir)
    os.makedirs(directory, exist_ok=True)
    free = shutil.disk_usage(directory).free
    if need > 0.9 * free:
        ap.error(f"{what} about {need / 1e9:.1f} GB, the disk has {free / 1e9:.1f} GB free")
    return directory, own_dir


def recorded_command(script: str, argv: list[str]) -> str:
    """The command line, as stored: absolute paths are machine-specific and become ``<path>``."""
    return f"python benchmarks/{script} " + " ".join(
        "<path>" if os.path.isabs(a.split("=", 1)[-1]) else a for a in argv)


def run_in_fresh_process(script: str, spec: dict[str, Any], label: str) -> dict[str, Any]:
    """Run one case of ``script`` in a fresh Python process (``--worker``); the row it printed last."""
    proc = subprocess.run([sys.executable, os.path.abspath(script), "--worker", json.dumps(spec)],
                          stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{label}: the case failed (exit status {proc.returncode})")
    row: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return row


def clean_up(directory: str, own_dir: bool, keep: bool, remove: Callable[[], None]) -> None:
    """Keep the files (``--keep``), remove a fresh directory, or ``remove()`` the files written to ``--dir``."""
    if keep:
        print(f"report files kept in {directory}")
    elif own_dir:
        shutil.rmtree(directory, ignore_errors=True)
    else:
        remove()


def write_json(path: Optional[str], result: dict[str, Any]) -> None:
    """Write ``result`` to ``path`` (``--json``), when given."""
    if path:
        with open(path, "w") as fh:
            fh.write(json.dumps(result, indent=1) + "\n")
