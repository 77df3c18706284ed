"""Throughput of HR and FHR (a benchmark, not a test).

Measures, for n users and d items (default n = 1,000,000, d = 1,000, eps = 1, Zipf-like data):

* client perturbation + server aggregation + estimation throughput (users per second), best of
  ``--repeats`` runs, split into the perturbation and the aggregation + estimation times;
* the time of one exact aggregate-level simulated trial (``simulate``);
* if the peer library ``pure-ldp`` is importable (``pip install pure-ldp "xxhash<4"
  scikit-learn statsmodels``), its Hadamard Response on ``--peer-n`` users, the only peer
  implementation of HR we know of.  It loops over users in Python, so its time is measured at
  two sizes (``--peer-n`` and a fifth of it) and extrapolated linearly to ``n`` only if the
  per-user cost of the two agrees within 25%; the script says which.

The target is at least 4,000,000 users per second (20x a per-user Python Hadamard Response at
about 200,000 users per second).

Usage: ``python benchmarks/hadamard_speed.py [--n N] [--d D] [--epsilon EPS] [--repeats R]``.
Numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import platform
import time
from typing import Callable

import numpy as np

import ldpkit


def _best_of(fn: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=1_000)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=2022)
    parser.add_argument("--peer-n", type=int, default=50_000)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    weights = 1.0 / np.arange(1, args.d + 1) ** 1.1
    items = rng.choice(args.d, size=args.n, p=weights / weights.sum())
    counts = np.bincount(items, minlength=args.d)
    print(f"python {platform.python_version()}, numpy {np.__version__}, n={args.n:,}, d={args.d:,}, "
          f"eps={args.epsilon:g}, best of {args.repeats}")
    rates = {}
    for mech in (ldpkit.HR(args.d, args.epsilon), ldpkit.FHR(args.d, args.epsilon)):
        mech.estimate(mech.perturb(items[:1000], rng))  # warm-up
        total = _best_of(lambda m=mech: m.estimate(m.perturb(items, rng)), args.repeats)
        perturb = _best_of(lambda m=mech: m.perturb(items, rng), args.repeats)
        reports = mech.perturb(items, rng)
        server = _best_of(lambda m=mech, r=reports: m.estimate(r), args.repeats)
        sim = _best_of(lambda m=mech: m.simulate(counts, rng), args.repeats)
        print(f"{type(mech).__name__:4s} K={mech.K:,}: perturb + estimate {args.n / total:,.0f} users/s "
              f"({total:.3f} s; perturb {perturb:.3f} s, aggregate + estimate {server:.3f} s); "
              f"one simulated trial {sim:.4f} s")
        rates[type(mech).__name__] = args.n / total
    _peer(items, args, rates)


def _peer(items: np.ndarray, args: argparse.Namespace, rates: dict[str, float]) -> None:
    try:
        from pure_ldp.frequency_oracles.hadamard_response import (
            HadamardResponseClient,
            HadamardResponseServer,
        )
    except ImportError as err:
        print(f"pure-ldp HR: not measured (pure-ldp cannot be imported: {err})")
        return

    def run(m: int) -> float:
        server = HadamardResponseServer(args.epsilon, args.d)
        client = HadamardResponseClient(args.epsilon, args.d, server.get_hash_funcs())
        start = time.perf_counter()
        for x in items[:m]:
            server.aggregate(client.privatise(int(x) + 1))  # pure-ldp items are 1-based
        server.estimate_all(range(1, args.d + 1))
        return time.perf_counter() - start

    big = min(args.peer_n, args.n)
    small = max(big // 5, 1)
    per_small, per_big = run(small) / small, run(big) / big
    linear = abs(per_big / per_small - 1.0) <= 0.25
    rate = 1.0 / per_big
    note = "extrapolated linearly to n" if linear else "NOT extrapolated: per-user cost is not linear"
    print(f"pure-ldp HR: {rate:,.0f} users/s on {big:,} users (per-user cost at {small:,}: "
          f"{per_small * 1e6:.2f} us, at {big:,}: {per_big * 1e6:.2f} us; {note})")
    for name, r in rates.items():
        print(f"  ldpkit {name} / pure-ldp HR throughput: {r / rate:,.0f}x")


if __name__ == "__main__":
    main()
