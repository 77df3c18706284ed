"""Aggregating many report files: one process against a local Dask cluster (a benchmark, not a test).

Writes ``--files`` binary report files (default 1,000) of ``--n`` GRR reports each (default
1,000,000; d = 1,000, eps = 1; uniform items from a seeded numpy Generator, a different stream
per file, so no two files hold the same reports) to a fresh temporary directory, then aggregates
them all with :func:`ldpkit.aggregation.aggregate_files`

* in one process (``scheduler=None``: file after file), and
* on a local Dask cluster of ``--workers`` worker processes (default 2, one thread each), each
  file to a partial aggregate on a worker, merged in the client,

each in a fresh Python process, and requires the two aggregates and estimates to be equal to the
last bit (anything else aborts with an error).  It reports the wall time of the aggregation
(cluster start-up, with the imports on each worker, timed aside), reports per second, the CPU
time spent (user and system; for Dask the client with its in-process scheduler and each worker,
so the cluster's overhead shows even when other work shares the cores), and peak memory: the resident set
high-water mark (``resource.getrusage``) of the process that aggregates (the client, for Dask)
and, for Dask, of each worker process.  The files are read from the page cache when they fit
there (they were just written), so this times the aggregation rather than the disk.

Usage::

    python benchmarks/aggregate_files.py [--files F] [--n N] [--d D] [--epsilon E] [--workers W]
        [--threads-per-worker T] [--seed S] [--dir DIR] [--keep] [--json FILE]
    python benchmarks/aggregate_files.py --quick        # 40 files of 100,000 reports (seconds)

At full size the files take about 2 GB (two bytes per report at d = 1,000).  ``--json FILE``
writes the results (absolute paths in the recorded command are replaced by ``<path>``).
Numbers depend on the machine and its load (the load average at the start and the end is
recorded): on 2 cores shared with other work the cluster's gain is bounded by the second core
and by what the other work leaves of it.

One run (2026-11-28; 2 cores shared with other work, load average 18-20; Python 3.11, numpy
2.4, dask 2026.8): 1,000 files of 10^6 GRR reports (2.0 GB, written in 98 s) aggregated in one
process in 32.9 s wall, 7.0 s CPU, peak resident set 92 MiB; on a local cluster of 2 worker
processes in 81.6 s wall (start-up 7.2 s aside), 15.7 s CPU (workers 6.7 s each, of which about
2 s is a worker's idle cost over that wall time, measured at 0.027 CPU seconds per second; the
client with its scheduler 2.3 s), peak 92 MiB in the client and 84 MiB in each worker; the
aggregates and estimates equal to the last bit.  On that loaded machine the cluster lost to one
process.  Each process holds one block of reports at a time: its peak was 70 MiB at ``--quick``
(40 files of 10^5 reports: 0.15-0.25 s in one process against 0.8-1.1 s on the cluster, its cost
per task on that machine) and 92 MiB at 1,000 files of 10^6.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import sys
import time
from typing import Any, Optional

import numpy as np

import benchlib


def peak_rss_mib() -> float:
    """This process's resident set high-water mark, in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def machine() -> dict[str, Any]:
    try:
        import dask
        import distributed

        dask_versions: dict[str, Optional[str]] = {"dask": dask.__version__, "distributed": distributed.__version__}
    except ImportError:
        dask_versions = {"dask": None, "distributed": None}
    return {**benchlib.machine(), **dask_versions}


def write_files(directory: str, files: int, n: int, d: int, epsilon: float, seed: int) -> list[str]:
    """``files`` report files of ``n`` GRR reports each; their paths."""
    from ldpkit import GRR
    from ldpkit.reportio import save_reports

    grr = GRR(d, epsilon)
    streams = np.random.SeedSequence(seed).spawn(files)
    paths = []
    for i, stream in enumerate(streams):
        rng = np.random.default_rng(stream)
        path = os.path.join(directory, f"grr-{i:05d}.ldpr")
        save_reports(path, grr.perturb(rng.integers(0, d, size=n), rng=rng), grr, data=f"benchmark file {i}")
        paths.append(path)
    return paths


def cpu_seconds() -> float:
    """User and system CPU time of this process so far (every thread)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _warm_up() -> None:
    """What a worker imports to read GRR report files (done here, before the clock starts)."""
    import ldpkit.aggregation
    import ldpkit.grr  # noqa: F401


def run_case(spec: dict[str, Any]) -> dict[str, Any]:
    """Aggregate the files in this (fresh) process, here or on a local cluster; the timings and a digest."""
    from ldpkit.aggregation import aggregate_files

    _warm_up()
    paths: list[str] = spec["paths"]
    row: dict[str, Any] = {"label": spec["label"], "rss_start_mib": round(peak_rss_mib(), 1)}
    if spec["workers"] == 0:
        c0, t0 = cpu_seconds(), time.perf_counter()
        agg = aggregate_files(paths)
        row["seconds"] = time.perf_counter() - t0
        row["cpu_seconds"] = round(cpu_seconds() - c0, 2)
    else:
        import distributed

        t0 = time.perf_counter()
        with (distributed.LocalCluster(n_workers=spec["workers"], threads_per_worker=spec["threads"],
                                       processes=True, dashboard_address=None) as cluster,
              distributed.Client(cluster) as client):
            client.run(_warm_up)  # imports on every worker, as in the one process before its clock starts
            row["startup_seconds"] = round(time.perf_counter() - t0, 2)
            before = client.run(cpu_seconds)
            c0, t0 = cpu_seconds(), time.perf_counter()
            agg = aggregate_files(paths, scheduler=client)
            row["seconds"] = time.perf_counter() - t0
            client_cpu = cpu_seconds() - c0
            after = client.run(cpu_seconds)
            row["cpu_seconds_client"] = round(client_cpu, 2)  # the client and, in this process, the scheduler
            row["cpu_seconds_workers"] = [round(after[w] - before[w], 2) for w in sorted(after)]
            row["cpu_seconds"] = round(client_cpu + sum(row["cpu_seconds_workers"]), 2)
            worker_peaks = client.run(peak_rss_mib)
            row["peak_worker_mib"] = [round(v, 1) for v in worker_peaks.values()]
    est = agg.estimate()
    row["n"] = agg.n
    row["reports_per_second"] = agg.n / row["seconds"]
    row["seconds"] = round(row["seconds"], 2)
    row["peak_process_mib"] = round(peak_rss_mib(), 1)
    digest = hashlib.sha256()
    for part in (agg.support.tobytes(), est.counts.tobytes(), est.variance.tobytes(),  # type: ignore[union-attr]
                 json.dumps([agg.n, agg.files, agg.data]).encode()):
        digest.update(part)
    row["digest"] = digest.hexdigest()
    return row


def _remove_report_files(directory: str) -> None:
    """Remove the report files this benchmark wrote to a directory it did not create."""
    for p in os.listdir(directory):
        if p.startswith("grr-") and p.endswith(".ldpr"):
            os.remove(os.path.join(directory, p))


def main(argv: Optional[list[str]] = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if benchlib.ran_as_worker(argv, run_case):  # one case, in a fresh process
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=1000, help="number of report files (default 1,000)")
    ap.add_argument("--n", type=float, default=1e6, help="GRR reports per file (default 1e6)")
    benchlib.add_mechanism_arguments(ap)
    ap.add_argument("--workers", type=int, default=2, help="worker processes of the local cluster (default 2)")
    ap.add_argument("--threads-per-worker", type=int, default=1)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--quick", action="store_true", help="40 files of 100,000 reports (unless --files/--n given)")
    benchlib.add_file_arguments(ap)
    benchlib.add_json_argument(ap)
    args = ap.parse_args(argv)
    if args.quick:
        given = {a.split("=", 1)[0] for a in argv}
        args.files = args.files if "--files" in given else 40
        args.n = args.n if "--n" in given else 1e5
    n = int(args.n)
    if args.files < 1 or n < 1 or args.workers < 1 or args.threads_per_worker < 1 or args.d < 2:
        ap.error("--files, --n, --workers and --threads-per-worker must be at least 1, --d at least 2")
    need = args.files * n * (1 if args.d <= 2**8 else 2 if args.d <= 2**16 else 4)
    directory, own_dir = benchlib.files_directory(ap, args, "ldpkit-aggregate-files-", need, "the files need")

    result: dict[str, Any] = {
        "date": benchlib.today(), "machine": machine(), "command": benchlib.recorded_command("aggregate_files.py", argv),
        "files": args.files, "n_per_file": n, "d": args.d, "epsilon": args.epsilon,
        "workers": args.workers, "threads_per_worker": args.threads_per_worker, "cases": [],
    }
    m = result["machine"]
    print(f"python {m['python']}, numpy {m['numpy']}, dask {m['dask']}, ldpkit {m['ldpkit']}, {m['cores']} cores, "
          f"{m['memory_gib']} GiB; {args.files:,} files x {n:,} GRR reports, d={args.d} epsilon={args.epsilon}",
          flush=True)
    t_all = time.perf_counter()
    result["load_average_start"] = [round(v, 1) for v in os.getloadavg()]
    try:
        t0 = time.perf_counter()
        paths = write_files(directory, args.files, n, args.d, args.epsilon, args.seed)
        result["write_seconds"] = round(time.perf_counter() - t0, 1)
        result["bytes_on_disk"] = sum(os.path.getsize(p) for p in paths)
        print(f"wrote {args.files:,} files ({result['bytes_on_disk'] / 1e6:,.1f} MB) in {result['write_seconds']} s",
              flush=True)
        for label, workers in (("one process", 0),
                               (f"Dask, {args.workers} workers x {args.threads_per_worker} thread(s)", args.workers)):
            spec = {"label": label, "paths": paths, "workers": workers, "threads": args.threads_per_worker}
            row = benchlib.run_in_fresh_process(__file__, spec, label)
            extra = (f" (cluster start-up {row['startup_seconds']} s aside; CPU: client and scheduler "
                     f"{row['cpu_seconds_client']} s, workers {', '.join(map(str, row['cpu_seconds_workers']))} s), "
                     f"worker peaks {', '.join(f'{v:,.0f}' for v in row['peak_worker_mib'])} MiB") if workers else ""
            print(f"{label}: {row['seconds']:,.2f} s, {row['reports_per_second'] / 1e6:,.1f} M reports/s, CPU "
                  f"{row['cpu_seconds']:,.2f} s, peak {row['peak_process_mib']:,.0f} MiB{extra}", flush=True)
            result["cases"].append(row)
    finally:
        benchlib.clean_up(directory, own_dir, args.keep, lambda: _remove_report_files(directory))
    one, dask_row = result["cases"]
    if one["digest"] != dask_row["digest"] or one["n"] != dask_row["n"]:
        raise SystemExit("the cluster's aggregate differs from the one process's: not exact")
    result["speedup"] = round(one["seconds"] / dask_row["seconds"], 2)
    result["load_average_end"] = [round(v, 1) for v in os.getloadavg()]
    result["seconds"] = round(time.perf_counter() - t_all, 1)
    print(f"equal to the last bit (support, estimate, variance, files); speed-up {result['speedup']}x; "
          f"total {result['seconds']:,.1f} s; load average (1, 5, 15 min) {result['load_average_start']} at the "
          f"start, {result['load_average_end']} at the end")
    benchlib.write_json(args.json, result)


if __name__ == "__main__":
    main()
