"""CPU time of two paths that were once slow (a benchmark, not a test).

``notion-map``
    :func:`ldpkit.notion_map.notion_map` at the synthesis chapter's default scenario: every
    ordered pair of notions, each refuted by an enumerated channel or shown to imply.
``kosarak-standin``
    :func:`ldpkit.datasets.standins.standin_itemsets` at Kosarak's size (990,002 users,
    8 million records): a loop per record, the slow path it replaced, takes far longer.

Each path runs ``--repeats`` times in this process and the least CPU time
(:func:`time.process_time`, which moves less than wall time with the load of other processes)
is kept, with the same time in units of a fixed reference work (the interpreter, numpy calls, a
sort and matrix products on one BLAS thread), so that two machines can be compared.  These times
were once assertions of the test suite (``tests/test_notion_map.py``,
``tests/test_datasets_loaders.py``); the tests now check only what the paths compute.

Usage: ``python benchmarks/slow_paths.py [--paths notion-map,kosarak-standin] [--repeats R]
[--json FILE]``.  Numbers depend on the machine and its load; ``benchmarks/slow-paths-results.json``
holds the last measurement with the machine it was made on.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import benchlib


def reference_unit() -> float:
    """CPU seconds of the reference work, the least of five runs."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    values, matrix, small = rng.random(1_000_000), rng.random((300, 300)), rng.random(100)
    best = float("inf")
    with threadpool_limits(1):
        for _ in range(5):
            start = time.process_time()
            sum(i * i for i in range(600_000))
            for _ in range(6_000):
                small = np.sqrt(small * small + 1.0) - 1.0
            np.sort(values)
            matrix @ matrix @ matrix
            best = min(best, time.process_time() - start)
    return max(best, 1e-3)


def _notion_map() -> None:
    from ldpkit import notion_map as nm

    nm.notion_map(nm.Scenario())


def _kosarak_standin() -> None:
    from ldpkit.datasets import standins

    standins.standin_itemsets("kosarak", rng=0)


PATHS: dict[str, Callable[[], None]] = {"notion-map": _notion_map, "kosarak-standin": _kosarak_standin}


def main(argv: list[str]) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--paths", default=",".join(PATHS), help="comma-separated, of: " + ", ".join(PATHS))
    ap.add_argument("--repeats", type=int, default=3)
    benchlib.add_json_argument(ap)
    args = ap.parse_args(argv)
    names = [p for p in args.paths.split(",") if p]
    unknown = sorted(set(names) - set(PATHS))
    if unknown:
        ap.error(f"unknown path(s) {unknown}; known: {sorted(PATHS)}")
    if args.repeats < 1:
        ap.error(f"--repeats must be at least 1, got {args.repeats}")
    unit = reference_unit()
    results: dict[str, Any] = {}
    for name in names:
        best = float("inf")
        for _ in range(args.repeats):
            start = time.process_time()
            PATHS[name]()
            best = min(best, time.process_time() - start)
        results[name] = {"cpu_seconds": round(best, 3), "units": round(best / unit, 1)}
        print(f"{name}: {best:.2f} s of CPU, {best / unit:.0f} units", flush=True)
    out = {"date": benchlib.today(), "machine": benchlib.machine(), "unit_seconds": round(unit, 4),
           "command": benchlib.recorded_command("slow_paths.py", argv), "results": results}
    benchlib.write_json(args.json, out)
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
