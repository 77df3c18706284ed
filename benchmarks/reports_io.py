"""Reports as files at scale: perturb, write, read back and aggregate (a benchmark, not a test).

For each case (default: GRR with n = 100,000,000 users and OUE with n = 10,000,000 users, both
at d = 1,000 and eps = 1) one run

1. draws Zipf(1.1) items over ``range(d)`` (as ``streaming_scale.py`` and ``compare.py`` do)
   ``--chunk`` items at a time from a seeded numpy Generator, never all at once, and perturbs
   each chunk (phase *generate + perturb*);
2. writes every chunk through ONE :class:`ldpkit.reportio.ReportWriter` to a binary ``.ldpr``
   file (phase *write*, which includes ``close`` and an ``fsync`` so the bytes are on the disk),
   while summing ``mech.aggregate(chunk)`` in memory (the reference, timed aside as *check*);
3. evicts the file from the page cache (``posix_fadvise(DONTNEED)``; ``--warm-cache`` skips
   this), then reads it back with ``Aggregator(mech).add_file(path)``, block by block (phase
   *read + aggregate*);
4. requires the file's support counts to equal the in-memory ones exactly and the estimate to
   equal ``mech.estimate_from_support(running, n)`` exactly (anything else aborts with an error).

It reports reports per second for each phase and for the pipeline (the three phases together;
the check is excluded), the file's size in bytes per report next to the bytes the same reports
take in memory (and so what holding all n of them at once would take), and peak memory.  Each
case runs in a fresh Python process so cases do not mask each other; in it, the resident set
high-water mark (``VmHWM`` of ``/proc/self/status``, reset between passes through
``/proc/self/clear_refs``) is taken separately for the write pass and for the read pass, next to
the resident set after the imports and the process's peak (the largest of the three high-water
marks).  Where ``/proc`` is not available only the process's peak (``resource.getrusage``) is
reported.

``--csv-check`` adds the CSV form (``.csv``) of both mechanisms at ``--n-csv`` users (default
100,000), with the same exact checks.

Usage::

    python benchmarks/reports_io.py [--n-grr N] [--n-oue N] [--d D] [--epsilon E] [--chunk C]
        [--seed S] [--dir DIR] [--keep] [--warm-cache] [--csv-check [--n-csv N]] [--json FILE]

An ``--n-*`` of 0 skips that case.  The files go to a fresh temporary directory, removed at the
end (``--dir`` puts them in DIR instead; ``--keep`` keeps them).  At full size the GRR file is
about 0.2 GB and the OUE file about 1.25 GB.  ``--json FILE`` writes the results (absolute
paths in the recorded command are replaced by ``<path>``).  Numbers depend on the machine and
its disk.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from collections.abc import Iterator
from typing import Any, Optional

import numpy as np

import benchlib

ZIPF_EXPONENT = 1.1


# ---------------------------------------------------------------------------------- memory
def _status_kib(field: str) -> Optional[int]:
    """A ``kB`` field of ``/proc/self/status`` (``VmRSS``, ``VmHWM``), or ``None`` off Linux."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def reset_peak() -> bool:
    """Reset the resident set high-water mark (Linux ``clear_refs`` 5); whether that worked."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def process_peak_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def mib(kib: Optional[int]) -> Optional[float]:
    return None if kib is None else kib / 2**10


# ---------------------------------------------------------------------------------- one case
def zipf_chunks(n: int, d: int, chunk: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """``n`` Zipf(1.1) items over ``range(d)``, ``chunk`` at a time."""
    weights = 1.0 / np.arange(1, d + 1) ** ZIPF_EXPONENT
    cdf = np.cumsum(weights / weights.sum())
    cdf[-1] = 1.0
    done = 0
    while done < n:
        m = min(chunk, n - done)
        done += m
        yield np.searchsorted(cdf, rng.random(m), side="right").astype(np.int32)


def run_case(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one case in this process (the worker); returns its measurements."""
    import ldpkit
    from ldpkit.aggregation import Aggregator
    from ldpkit.reportio import BLOCK_REPORTS, ReportWriter, codec_for

    name, n, d, eps, chunk = spec["mechanism"], spec["n"], spec["d"], spec["epsilon"], spec["chunk"]
    mech: Any = {"GRR": ldpkit.GRR, "OUE": ldpkit.OUE}[name](d, eps)
    path = spec["path"]
    rss_start = _status_kib("VmRSS")
    peak_start = _status_kib("VmHWM")  # the imports' peak (clear_refs resets ru_maxrss too)
    item_ss, perturb_ss = np.random.SeedSequence(spec["seed"]).spawn(2)
    item_rng, perturb_rng = np.random.default_rng(item_ss), np.random.default_rng(perturb_ss)
    tick = max(1, n // 10)
    t = {"generate": 0.0, "perturb": 0.0, "write": 0.0, "sync": 0.0, "check": 0.0, "read": 0.0}
    running = np.zeros(d, dtype=np.int64)
    memory_bytes = 0.0
    per_pass_peak = reset_peak()
    wall0 = time.perf_counter()

    # ---- pass 1: generate, perturb, write (and the in-memory reference aggregate)
    done = 0
    with ReportWriter(path, mech, data=f"Zipf({ZIPF_EXPONENT}) items over {d}, seed {spec['seed']} (benchmark)") as w:
        chunks = zipf_chunks(n, d, chunk, item_rng)
        while True:
            t0 = time.perf_counter()
            items = next(chunks, None)
            t1 = time.perf_counter()
            if items is None:
                break
            reports = mech.perturb(items, rng=perturb_rng)
            t2 = time.perf_counter()
            w.write(reports)
            t3 = time.perf_counter()
            running += np.asarray(mech.aggregate(reports), dtype=np.int64)
            t4 = time.perf_counter()
            t["generate"] += t1 - t0
            t["perturb"] += t2 - t1
            t["write"] += t3 - t2
            t["check"] += t4 - t3
            if not memory_bytes:
                memory_bytes = sum(c.nbytes for c in codec_for(reports).to_columns(reports)) / len(reports)
            before, done = done, done + len(reports)
            if done // tick != before // tick:
                print(f"  {spec['label']}: {done:,} of {n:,} written", file=sys.stderr, flush=True)
            del items, reports
        t0 = time.perf_counter()
    t["write"] += time.perf_counter() - t0  # close: end record and rename
    t0 = time.perf_counter()
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        t["sync"] = time.perf_counter() - t0
        if not spec["warm_cache"] and hasattr(os, "posix_fadvise"):
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # the read pass then reads the disk
    finally:
        os.close(fd)
    t["write"] += t["sync"]
    write_peak = mib(_status_kib("VmHWM")) if per_pass_peak else None
    size = os.path.getsize(path)

    # ---- pass 2: read back and aggregate, block by block
    per_pass_peak = per_pass_peak and reset_peak()
    t0 = time.perf_counter()
    agg = Aggregator(mech).add_file(path)
    est = agg.estimate()
    t["read"] = time.perf_counter() - t0
    read_peak = mib(_status_kib("VmHWM")) if per_pass_peak else None
    wall = time.perf_counter() - wall0

    # ---- exact checks
    if agg.support is None or agg.n != n or not np.array_equal(agg.support, running):
        bad = -1 if agg.support is None else int(np.count_nonzero(agg.support != running))
        raise SystemExit(f"{spec['label']}: the file's aggregate differs from the in-memory one "
                         f"(n {agg.n} vs {n}; {bad} items differ)")
    want = np.asarray(mech.estimate_from_support(running, n), dtype=float)
    if not np.array_equal(est.counts, want):
        raise SystemExit(f"{spec['label']}: the estimate from the file differs from estimate_from_support "
                         f"(max |difference| {np.max(np.abs(est.counts - want)):.3g})")
    if agg.batches != 1:
        raise SystemExit(f"{spec['label']}: add_file counted {agg.batches} batches, expected 1")

    pipeline = t["generate"] + t["perturb"] + t["write"] + t["read"]
    return {
        "label": spec["label"], "mechanism": name, "form": "csv" if path.lower().endswith(".csv") else "binary",
        "n": n, "d": d, "epsilon": eps, "chunk": chunk, "block_reports": BLOCK_REPORTS, "seed": spec["seed"],
        "cold_read": not spec["warm_cache"],
        "file_bytes": size, "file_bytes_per_report": size / n,
        "memory_bytes_per_report": memory_bytes, "all_reports_in_memory_mib": memory_bytes * n / 2**20,
        "seconds": {k: round(v, 3) for k, v in t.items()},
        "rate": {"generate_perturb": n / (t["generate"] + t["perturb"]), "write": n / t["write"],
                 "read_aggregate": n / t["read"], "pipeline": n / pipeline},
        "pipeline_seconds": round(pipeline, 3), "wall_seconds": round(wall, 3),
        "rss_start_mib": mib(rss_start), "peak_write_mib": write_peak, "peak_read_mib": read_peak,
        "peak_process_mib": (max(v for v in (mib(peak_start), write_peak, read_peak) if v is not None)
                             if read_peak is not None else process_peak_mib()), "exact": True,
    }


# ---------------------------------------------------------------------------------- driver
def expected_file_bytes(mechanism: str, n: int, d: int, csv: bool) -> int:
    """A rough size of the file (for the free-space check)."""
    if mechanism == "OUE":
        return n * (d + 1 if csv else (d + 7) // 8)
    if csv:
        return n * (len(str(d - 1)) + 1)
    return n * (1 if d <= 2**8 else 2 if d <= 2**16 else 4)


def fmt(v: Optional[float], spec: str = ",.0f") -> str:
    return "-" if v is None else format(v, spec)


def table(rows: list[dict[str, Any]]) -> str:
    head = ("case", "n", "file MB", "B/report", "all in RAM MiB", "gen+perturb /s", "write /s",
            "read+agg /s", "pipeline /s", "pipeline s", "RSS start MiB", "peak write MiB", "peak read MiB",
            "peak proc MiB")
    body = [(r["label"], f"{r['n']:,}", fmt(r["file_bytes"] / 1e6, ",.1f"), fmt(r["file_bytes_per_report"], ".3f"),
             fmt(r["all_reports_in_memory_mib"]), fmt(r["rate"]["generate_perturb"]),
             fmt(r["rate"]["write"]), fmt(r["rate"]["read_aggregate"]), fmt(r["rate"]["pipeline"]),
             fmt(r["pipeline_seconds"], ",.1f"), fmt(r["rss_start_mib"]), fmt(r["peak_write_mib"]),
             fmt(r["peak_read_mib"]), fmt(r["peak_process_mib"])) for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    lines = ["  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(head, widths)))]
    lines += ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(b, widths))) for b in body]
    return "\n".join(lines)


def _remove_files(written: list[str]) -> None:
    """Remove the report files (and any partial ones) written to a directory this run did not create."""
    for p in written:
        for q in (p, p + ".partial"):
            if os.path.exists(q):
                os.remove(q)


def main(argv: Optional[list[str]] = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if benchlib.ran_as_worker(argv, run_case):  # one case, in a fresh process
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-grr", type=float, default=1e8, help="GRR reports (default 1e8; 0 skips)")
    ap.add_argument("--n-oue", type=float, default=1e7, help="OUE reports (default 1e7; 0 skips)")
    benchlib.add_mechanism_arguments(ap)
    ap.add_argument("--chunk", type=int, default=1_000_000, help="items generated, perturbed and written per step")
    ap.add_argument("--seed", type=int, default=2025)
    benchlib.add_file_arguments(ap)
    ap.add_argument("--warm-cache", action="store_true", help="read back from the page cache (no eviction)")
    ap.add_argument("--csv-check", action="store_true", help="also write and read the CSV form at --n-csv")
    ap.add_argument("--n-csv", type=float, default=1e5, help="reports per CSV case (default 1e5)")
    benchlib.add_json_argument(ap)
    args = ap.parse_args(argv)
    if args.chunk < 1 or args.d < 2:
        ap.error("--chunk must be at least 1 and --d at least 2")

    cases = [("GRR", int(args.n_grr), ".ldpr"), ("OUE", int(args.n_oue), ".ldpr")]
    if args.csv_check:
        cases += [("GRR", int(args.n_csv), ".csv"), ("OUE", int(args.n_csv), ".csv")]
    cases = [c for c in cases if c[1] > 0]
    if not cases:
        ap.error("no case to run (every n is 0)")
    need = max(expected_file_bytes(m, n, args.d, s == ".csv") for m, n, s in cases)
    directory, own_dir = benchlib.files_directory(ap, args, "ldpkit-reports-io-", need, "the largest file needs")

    result: dict[str, Any] = {
        "date": benchlib.today(), "machine": benchlib.machine(),
        "command": benchlib.recorded_command("reports_io.py", argv), "zipf_exponent": ZIPF_EXPONENT, "cases": [],
    }
    m = result["machine"]
    print(f"python {m['python']}, numpy {m['numpy']}, ldpkit {m['ldpkit']}, {m['cores']} cores, "
          f"{m['memory_gib']} GiB; d={args.d} epsilon={args.epsilon} chunk={args.chunk:,}", flush=True)
    written: list[str] = []
    t_all = time.perf_counter()
    try:
        for mechanism, n, suffix in cases:
            label = f"{mechanism} {suffix}"
            path = os.path.join(directory, f"{mechanism.lower()}-n{n}-d{args.d}{suffix}")
            written.append(path)
            spec = {"label": label, "mechanism": mechanism, "n": n, "d": args.d, "epsilon": args.epsilon,
                    "chunk": args.chunk, "seed": args.seed, "path": path, "warm_cache": args.warm_cache}
            print(f"{label}: n={n:,} ...", flush=True)
            row = benchlib.run_in_fresh_process(__file__, spec, label)
            s = row["seconds"]
            print(f"{label}: generate {s['generate']:.1f} s + perturb {s['perturb']:.1f} s, write {s['write']:.1f} s "
                  f"(fsync {s['sync']:.1f} s), read+aggregate {s['read']:.1f} s, in-memory check {s['check']:.1f} s; "
                  f"{row['file_bytes'] / 1e6:,.1f} MB on disk; exact", flush=True)
            result["cases"].append(row)
    finally:
        benchlib.clean_up(directory, own_dir, args.keep, lambda: _remove_files(written))
    result["seconds"] = round(time.perf_counter() - t_all, 1)
    print()
    print(table(result["cases"]))
    print("rates are reports per second; 'pipeline' = generate+perturb, write (with fsync) and read+aggregate; "
          "'all in RAM' = n x the bytes per report in memory; file MB = 10^6 bytes; peaks are resident set "
          "high-water marks of the write pass, the read pass and the whole process (one process per case)")
    print(f"total {result['seconds']:,.1f} s")
    benchlib.write_json(args.json, result)


if __name__ == "__main__":
    main()
