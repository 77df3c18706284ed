"""Time to calibrate every family to each promise of the synthesis chapter (a benchmark, not a test).

For each of the chapter's seven promises (:func:`ldpkit.experiments.synthesis.scenario_contracts`),
calibrates every family of ``ldpkit.calibration.families()`` with
:func:`ldpkit.calibration.calibrate` and times it.  Each repeat runs in a fresh interpreter (no
solution or channel cached by an earlier repeat); the best repeat of each (promise, family) is
kept.  Prints, per promise, the total wall time, the total CPU time of the process (less sensitive
to other processes on a shared machine), the number of families and the slowest family, then the
totals over the seven promises.

``--json FILE`` also writes every calibration's outcome (family, promise, method, parameter to
17 digits, reason) and time, so that two versions of ldpkit can be compared: the outcomes must
be identical, the times may differ.

Usage: ``python benchmarks/calibration.py [--repeats R] [--json FILE]``.  Numbers depend on the
machine and its load.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from typing import Any

_CHILD = "--child"


def _run_once() -> list[dict[str, Any]]:
    """One pass over every (promise, family), in this process."""
    from ldpkit.calibration import calibrate, families
    from ldpkit.experiments.synthesis import scenario_contracts

    rows = []
    names = [f.name for f in families()]
    for promise, contract in scenario_contracts().items():
        for name in names:
            start, cpu = time.perf_counter(), time.process_time()
            cal = calibrate(name, contract)
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
            rows.append({"promise": promise, "family": name, "seconds": seconds, "cpu": cpu, "method": cal.method,
                         "parameter": None if cal.parameter is None else repr(float(cal.parameter)),
                         "reason": cal.reason})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=str, default=None)
    parser.add_argument(_CHILD, action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        json.dump(_run_once(), sys.stdout)
        return
    runs = []
    for _ in range(args.repeats):
        out = subprocess.run([sys.executable, __file__, _CHILD], capture_output=True, text=True, check=True).stdout
        runs.append(json.loads(out))
    best = [dict(row, seconds=min(run[i]["seconds"] for run in runs), cpu=min(run[i]["cpu"] for run in runs))
            for i, row in enumerate(runs[0])]
    timing = ("seconds", "cpu")
    outcomes = {json.dumps({k: v for k, v in row.items() if k not in timing}) for run in runs for row in run}
    assert len(outcomes) == len(best), "a calibration's outcome changed between repeats"
    import ldpkit

    print(f"ldpkit {ldpkit.__version__} from {ldpkit.__path__[0]}; Python {platform.python_version()}; "
          f"best of {args.repeats} fresh processes")
    total = total_cpu = 0.0
    print(f"{'promise':<18} {'wall':>8}   {'CPU':>8}")
    for promise in dict.fromkeys(row["promise"] for row in best):
        rows = [row for row in best if row["promise"] == promise]
        secs, cpu = sum(row["seconds"] for row in rows), sum(row["cpu"] for row in rows)
        slow = max(rows, key=lambda row: row["seconds"])
        total, total_cpu = total + secs, total_cpu + cpu
        print(f"{promise:<18} {secs:8.2f} s {cpu:8.2f} s  {len(rows)} families; slowest {slow['family']} "
              f"{slow['seconds']:.2f} s")
    print(f"{'all seven':<18} {total:8.2f} s {total_cpu:8.2f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"python": platform.python_version(), "repeats": args.repeats, "rows": best}, fh, indent=1)


if __name__ == "__main__":
    main()
