"""Streaming the per-user path at scale (a benchmark, not a test).

Streams n Zipf-distributed items (default n = 100,000,000, d = 1,000, exponent 1.1 as in
``compare.py``) through GRR and OUE with :func:`ldpkit.streaming.stream_estimate`.
The items are generated chunk by chunk (``--chunk`` items at a time, default 1,000,000) and
never materialised, so memory stays independent of n.  Prints, per mechanism, the wall time,
users per second (with and without the time spent generating the items), the maximum absolute
error of the estimated counts against the true counts (accumulated chunk by chunk) relative
to the estimator's standard deviation, and the process's peak resident set size
(``resource.getrusage``; a high-water mark, so the OUE line includes everything before it).

Usage: ``python benchmarks/streaming_scale.py [--n N] [--d D] [--chunk C] [--epsilon E] [--seed S]``.
Numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import platform
import resource
import sys
import time
from collections.abc import Iterator

import numpy as np

import ldpkit
from ldpkit.streaming import BLOCK_USERS, stream_estimate


def zipf_chunks(n: int, d: int, chunk: int, seed: int, counts: np.ndarray, timer: list[float]) -> Iterator[np.ndarray]:
    """``n`` Zipf(1.1) items over ``range(d)`` in chunks; adds the true counts to ``counts``, the time to ``timer``."""
    weights = 1.0 / np.arange(1, d + 1) ** 1.1
    cdf = np.cumsum(weights / weights.sum())
    cdf[-1] = 1.0
    rng = np.random.default_rng(seed)
    done = 0
    while done < n:
        start = time.perf_counter()
        m = min(chunk, n - done)
        items = np.searchsorted(cdf, rng.random(m), side="right").astype(np.int32)
        counts += np.bincount(items, minlength=d)
        timer[0] += time.perf_counter() - start
        done += m
        yield items


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e8, help="number of users (default 1e8)")
    ap.add_argument("--d", type=int, default=1000)
    ap.add_argument("--chunk", type=int, default=1_000_000, help="items generated per chunk")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=2020)
    ap.add_argument("--mechanisms", default="GRR,OUE")
    args = ap.parse_args()
    n, d = int(args.n), args.d
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}; "
          f"n={n:,} d={d} epsilon={args.epsilon} chunk={args.chunk:,} block={BLOCK_USERS:,}")
    print(f"peak RSS before streaming: {peak_rss_mb():.0f} MB")
    for name in args.mechanisms.split(","):
        mech = {"GRR": ldpkit.GRR, "OUE": ldpkit.OUE, "OLH": ldpkit.OLH}[name](d, args.epsilon)
        counts = np.zeros(d, dtype=np.int64)
        gen_time = [0.0]
        start = time.perf_counter()
        est = stream_estimate(mech, zipf_chunks(n, d, args.chunk, args.seed, counts, gen_time), rng=args.seed)
        wall = time.perf_counter() - start
        z = np.abs(est - counts) / np.sqrt(mech.variance(counts))
        print(f"{name}: {wall:.1f} s, {n / wall:,.0f} users/s overall, "
              f"{n / (wall - gen_time[0]):,.0f} users/s excluding item generation ({gen_time[0]:.1f} s); "
              f"max |error|/sd = {z.max():.2f}; peak RSS {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
