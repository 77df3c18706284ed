"""Throughput of the classic frequency oracles (a benchmark, not a test).

Measures, for n users and d items (default n = 1,000,000, d = 1,000):

* client perturbation + server aggregation + estimation throughput (users per second) of GRR,
  OUE and OLH through the per-user path;
* the time of one aggregate-level simulated trial (``simulate``), which samples the estimator
  directly from the true counts (OLH has no exact aggregate form and falls back to per-user
  simulation, so its trial costs a full per-user run);
* optionally, if the third-party package ``pure-ldp`` is importable, the same per-user
  throughput of its implementations on a smaller n (it loops over users in Python).

Usage: ``python benchmarks/bench_foundation.py [--n N] [--d D] [--repeats R] [--json FILE]``.
Numbers depend on the machine; the README records one run.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from typing import Callable

import numpy as np

import ldpkit
from ldpkit.olh import OLH


def _best_of(fn: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def bench_ldpkit(n: int, d: int, eps: float, repeats: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    # Zipf-like item distribution, as in the papers' synthetic data
    weights = 1.0 / np.arange(1, d + 1) ** 1.1
    items = rng.choice(d, size=n, p=weights / weights.sum())
    counts = np.bincount(items, minlength=d)
    rows = []
    for name, mech in (("GRR", ldpkit.GRR(d, eps)), ("OUE", ldpkit.OUE(d, eps)), ("OLH", OLH(d, eps))):
        per_user = _best_of(lambda m=mech: m.estimate(m.perturb(items, rng)), repeats)
        sim = _best_of(lambda m=mech: m.simulate(counts, rng), repeats if mech.aggregate_simulation_exact else 1)
        rows.append(
            {
                "mechanism": name,
                "n": n,
                "d": d,
                "epsilon": eps,
                "per_user_seconds": per_user,
                "users_per_second": n / per_user,
                "simulated_trial_seconds": sim,
                "aggregate_simulation_exact": mech.aggregate_simulation_exact,
            }
        )
    return rows


def bench_pure_ldp(d: int, eps: float, seed: int) -> list[dict]:
    try:
        from pure_ldp.frequency_oracles.direct_encoding import DEClient, DEServer
        from pure_ldp.frequency_oracles.local_hashing import LHClient, LHServer
        from pure_ldp.frequency_oracles.unary_encoding import UEClient, UEServer
    except ImportError:
        return []
    rng = np.random.default_rng(seed)
    rows = []
    setups = (
        ("GRR", 200_000, lambda: (DEClient(eps, d), DEServer(eps, d))),
        ("OUE", 20_000, lambda: (UEClient(eps, d, use_oue=True), UEServer(eps, d, use_oue=True))),
        ("OLH", 2_000, lambda: (LHClient(eps, d, use_olh=True), LHServer(eps, d, use_olh=True))),
    )
    for name, n, make in setups:
        items = rng.integers(1, d + 1, size=n)  # pure-ldp uses 1-based items
        client, server = make()
        start = time.perf_counter()
        for x in items:
            server.aggregate(client.privatise(int(x)))
        server.estimate_all(range(1, d + 1))
        elapsed = time.perf_counter() - start
        rows.append({"mechanism": name, "n": n, "d": d, "users_per_second": n / elapsed})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=1_000)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", type=str, default=None, help="write the results to this file")
    parser.add_argument("--pure-ldp", action="store_true", help="also time pure-ldp if installed")
    args = parser.parse_args()

    rows = bench_ldpkit(args.n, args.d, args.epsilon, args.repeats, args.seed)
    print(f"ldpkit {ldpkit.__version__}, numpy {np.__version__}, Python {platform.python_version()}")
    print(f"{'mechanism':<10}{'users/s':>14}{'per-user run (s)':>18}{'simulated trial (s)':>22}")
    for r in rows:
        note = "" if r["aggregate_simulation_exact"] else "  (per-user fallback)"
        print(f"{r['mechanism']:<10}{r['users_per_second']:>14,.0f}{r['per_user_seconds']:>18.3f}{r['simulated_trial_seconds']:>22.4f}{note}")
    result = {"ldpkit": rows}
    if args.pure_ldp:
        ref = bench_pure_ldp(args.d, args.epsilon, args.seed)
        result["pure_ldp"] = ref
        if not ref:
            print("pure-ldp not installed: reference timings skipped")
        for r in ref:
            mine = next(x for x in rows if x["mechanism"] == r["mechanism"])
            print(f"pure-ldp {r['mechanism']:<6}{r['users_per_second']:>14,.0f} users/s (n={r['n']:,});"
                  f" ldpkit is {mine['users_per_second'] / r['users_per_second']:.0f}x faster")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)


if __name__ == "__main__":
    main()
