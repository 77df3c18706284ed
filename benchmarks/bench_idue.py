"""Solve times of the IDUE optimisation models (a benchmark, not a test).

Measures, best of ``--repeats`` runs:

* opt1 and opt2 with t = 10, 30 and 100 privacy levels (random budgets in [0.5, 4], random level
  sizes summing to about 40,000 items, both pair rules), the scale the issue asks for;
* opt0 at the paper's experimental scales (three levels, m from 100 to 41,270) and with t = 10
  levels, including its certificate (conic solve, multistart and, for t <= 3, branch and bound).

The tests check that these solutions are correct (tests/test_idue.py); this script only times them.
Usage: ``python benchmarks/bench_idue.py [--repeats R] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np

from ldpkit import idue
from ldpkit.budgets import apportion


def _best_of(fn, repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def _random_levels(t: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.default_rng(seed)
    budgets = np.sort(gen.uniform(0.5, 4.0, t))
    sizes = gen.integers(1, 800, t)
    return budgets, sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=str, default=None)
    args = parser.parse_args()
    rows = []
    for model in ("opt1", "opt2"):
        for t in (10, 30, 100):
            for rule in ("min", "average"):
                budgets, sizes = _random_levels(t, seed=t)
                secs, sol = _best_of(lambda mo=model, b=budgets, s=sizes, r=rule: idue.solve(mo, b, s, r=r), args.repeats)
                rows.append({"model": model, "t": t, "rule": rule, "m": int(sizes.sum()), "seconds": secs,
                             "objective": sol.objective})
    for m in (100, 1_000, 5_850, 16_470, 41_270):
        sizes = apportion(m, [0.05, 0.05, 0.9])
        secs, sol = _best_of(lambda s=sizes: idue.solve("opt0", [1.0, 1.2, 2.0], s), args.repeats)
        rows.append({"model": "opt0", "t": 3, "rule": "min", "m": m, "seconds": secs, "objective": sol.objective})
    budgets, sizes = _random_levels(10, seed=10)
    secs, sol = _best_of(lambda: idue.solve("opt0", budgets, sizes), args.repeats)
    rows.append({"model": "opt0", "t": 10, "rule": "min", "m": int(sizes.sum()), "seconds": secs,
                 "objective": sol.objective})
    print(f"{'model':6} {'t':>4} {'rule':8} {'m':>7} {'seconds':>9}")
    for r in rows:
        print(f"{r['model']:6} {r['t']:>4} {r['rule']:8} {r['m']:>7} {r['seconds']:>9.3f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"python": platform.python_version(), "rows": rows}, fh, indent=2)


if __name__ == "__main__":
    main()
