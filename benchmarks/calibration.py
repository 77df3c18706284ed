"""Time to calibrate mechanism families to privacy promises (a benchmark, not a test).

Three targets (issue 37), each timed in fresh interpreters (no member, solution or channel left
by an earlier run), the best of ``--repeats`` runs kept per calibration:

``synthesis``
    every family of ``ldpkit.calibration.families()`` calibrated with
    :func:`ldpkit.calibration.calibrate` to each of the synthesis chapter's seven promises
    (:func:`ldpkit.experiments.synthesis.scenario_contracts`), in one process: the target is
    under 5 s in total;
``minid-1000``
    every family calibrated to a MinID-LDP promise on ``d = 1000`` items with two budget levels
    (300 items at 1, 700 at 2): under 10 s in total;
``idue-120``
    IDUE-opt0 calibrated to a MinID-LDP promise on ``d = 1000`` items with 120 distinct budgets
    (``0.5`` to ``4``, evenly spaced, assigned in turn): under 10 s.

Each calibration's wall time and the CPU time of its process (less sensitive to other processes
on a shared machine) are printed per promise or family, then the totals.  A run that does not end
within ``--timeout`` seconds is stopped and reported as such.

``--json FILE`` also writes every calibration's outcome (family, promise, method, parameter to
17 digits, reason) and times, so that two versions of ldpkit can be compared: the outcomes must
agree (parameters to the search's relative ``1e-10``), the times may differ.

Usage: ``python benchmarks/calibration.py [--targets synthesis,minid-1000,idue-120] [--repeats R]
[--timeout S] [--json FILE]``.  Numbers depend on the machine and its load.
``benchmarks/calibration-results.json`` holds the last measurement, before and after issue 37's
calibration work, with the conditions it was made under.
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
TARGETS = ("synthesis", "minid-1000", "idue-120")
#: the issue's targets, in seconds of wall time on two cores
GOALS = {"synthesis": 5.0, "minid-1000": 10.0, "idue-120": 10.0}


def _promises(target: str) -> dict[str, Any]:
    import numpy as np

    from ldpkit import contracts

    if target == "synthesis":
        from ldpkit.experiments.synthesis import scenario_contracts

        return scenario_contracts()
    d = 1000
    if target == "minid-1000":
        return {"MinID-LDP (d=1000, 2 levels)": contracts.minidldp(np.where(np.arange(d) < 300, 1.0, 2.0))}
    if target == "idue-120":
        return {"MinID-LDP (d=1000, 120 budgets)": contracts.minidldp(np.resize(np.linspace(0.5, 4.0, 120), d))}
    raise ValueError(f"unknown target {target!r}; the targets are {TARGETS}")


def _run_once(target: str) -> list[dict[str, Any]]:
    """One pass over the target's (promise, family) pairs, in this process."""
    from ldpkit.calibration import calibrate, families

    names = ["IDUE-opt0"] if target == "idue-120" else [f.name for f in families()]
    rows = []
    for promise, contract in _promises(target).items():
        for name in names:
            start, cpu = time.perf_counter(), time.process_time()
            cal = calibrate(name, contract)
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
            rows.append({"target": target, "promise": promise, "family": name, "seconds": seconds, "cpu": cpu,
                         "method": cal.method, "parameter": None if cal.parameter is None else repr(float(cal.parameter)),
                         "reason": cal.reason})
    return rows


def _child(target: str, timeout: float) -> tuple[list[dict[str, Any]] | None, float]:
    """One fresh process over the target: its rows (``None`` when stopped at ``timeout``) and its wall time."""
    start = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, __file__, _CHILD, target], capture_output=True, text=True, check=True,
                             timeout=timeout).stdout
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - start
    return json.loads(out), time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=str, default=",".join(TARGETS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds after which a run is stopped")
    parser.add_argument("--json", type=str, default=None)
    parser.add_argument(_CHILD, type=str, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        json.dump(_run_once(args.child), sys.stdout)
        return
    import ldpkit

    print(f"ldpkit {ldpkit.__version__} from {ldpkit.__path__[0]}; Python {platform.python_version()}; "
          f"best of {args.repeats} fresh processes per target")
    report: dict[str, Any] = {"python": platform.python_version(), "repeats": args.repeats, "targets": {}}
    for target in args.targets.split(","):
        runs, stopped = [], []
        for _ in range(args.repeats):
            rows, wall = _child(target, args.timeout)
            if rows is None:
                stopped.append(wall)
                break  # a run that does not end will not end the next time either
            runs.append(rows)
        print(f"\n{target} (goal: under {GOALS[target]:g} s wall in total)")
        if not runs:
            print(f"  stopped after {stopped[0]:.0f} s: did not finish")
            report["targets"][target] = {"finished": False, "stopped_after": stopped[0]}
            continue
        best = [dict(row, seconds=min(run[i]["seconds"] for run in runs), cpu=min(run[i]["cpu"] for run in runs))
                for i, row in enumerate(runs[0])]
        timing = ("seconds", "cpu")
        outcomes = {json.dumps({k: v for k, v in row.items() if k not in timing}) for run in runs for row in run}
        assert len(outcomes) == len(best), "a calibration's outcome changed between repeats"
        print(f"  {'promise':<32} {'wall':>8}   {'CPU':>8}")
        total = total_cpu = 0.0
        for promise in dict.fromkeys(row["promise"] for row in best):
            rows = [row for row in best if row["promise"] == promise]
            secs, cpu = sum(row["seconds"] for row in rows), sum(row["cpu"] for row in rows)
            slow = max(rows, key=lambda row: row["seconds"])
            total, total_cpu = total + secs, total_cpu + cpu
            print(f"  {promise:<32} {secs:8.2f} s {cpu:8.2f} s  {len(rows)} families; slowest {slow['family']} "
                  f"{slow['seconds']:.2f} s")
        print(f"  {'total':<32} {total:8.2f} s {total_cpu:8.2f} s")
        report["targets"][target] = {"finished": True, "seconds": total, "cpu": total_cpu, "rows": best}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=1)


if __name__ == "__main__":
    main()
