"""The report-file fuzzer at a long budget (a benchmark, not a test): many more examples, and what they gave.

``tests/test_fuzz_files.py`` states the properties (every damaged report file, aggregator state
or command line either loads correctly or is refused with one ``ValueError`` naming the file, and
reading allocates at most ``allowed_peak(file size)`` under small ``LDPKIT_MAX_DOMAIN`` and
``LDPKIT_MAX_HEADER_BYTES``) and runs them at a few dozen examples each in the suite.  This script
runs the same properties with ``--examples`` examples each (default 5,000; hypothesis draws new
examples on every run unless ``--seed`` is given), then, for a fixed sample of the same damages
(``--sample``), counts the outcomes per seed file (loaded, refused) and records
the largest ratio of allocated memory to the allowed peak.

Usage::

    python benchmarks/fuzz_files.py [--examples N] [--sample M] [--seed S] [--json FILE]

Exit status 1 if any property fails (hypothesis prints the smallest failing example).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _run_properties(examples: int, seed: int | None) -> dict[str, Any]:
    """Each property of the test module at ``examples`` examples: pass or the failure, and the time taken."""
    os.environ["LDPKIT_FUZZ_EXAMPLES"] = str(examples)
    sys.path.insert(0, str(HERE.parent / "tests"))
    import test_fuzz_files as fuzz
    from hypothesis import seed as fixed_seed

    results = {}
    for name in ("test_damaged_report_files_load_correctly_or_are_refused",
                 "test_damaged_states_load_correctly_or_are_refused",
                 "test_the_command_line_answers_in_one_line", "test_random_bytes_are_refused"):
        test = getattr(fuzz, name)
        if seed is not None:
            test = fixed_seed(seed)(test)
        start = time.perf_counter()
        try:
            test()
            status = "passed"
        except Exception as exc:  # the property failed: report it, keep going
            status = f"FAILED: {type(exc).__name__}: {' '.join(str(exc).split())[:500]}"
        results[name] = {"status": status, "examples": examples, "seconds": round(time.perf_counter() - start, 1)}
        print(f"{name}: {status} ({results[name]['seconds']} s)", flush=True)
    return results


def _sample_outcomes(sample: int) -> dict[str, Any]:
    """Outcomes of ``sample`` damaged files drawn the same way on every run: counts per seed file, and the largest
    ratio of allocated memory to the allowed peak."""
    import test_fuzz_files as fuzz
    from hypothesis import given, settings
    from hypothesis import strategies as st

    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    worst = {"ratio": 0.0, "peak": 0, "size": 0, "seed": ""}

    @settings(max_examples=sample, deadline=None, database=None, derandomize=True)
    @given(data=st.data())
    def draw(data: st.DataObject) -> None:
        with fuzz.damaged_report_file(data) as (name, path):
            outcome, peak = fuzz._check_report_file(path)
            counts[(name, outcome)] += 1
            size = os.path.getsize(path)
            ratio = peak / fuzz.allowed_peak(size)
            if ratio > worst["ratio"]:
                worst.update(ratio=round(ratio, 4), peak=peak, size=size, seed=name)

    draw()  # derandomized: the same files on every run
    table: dict[str, dict[str, int]] = collections.defaultdict(dict)
    for (name, outcome), k in sorted(counts.items()):
        table[name][outcome] = k
    return {"by_seed": dict(table), "largest_peak_over_allowed": worst}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=5000, help="examples per property (default 5,000)")
    parser.add_argument("--sample", type=int, default=2000, help="damaged files whose outcomes are counted")
    parser.add_argument("--seed", type=int, default=None, help="a fixed hypothesis seed (default: new examples)")
    parser.add_argument("--json", metavar="FILE", default=None, help="write the results as JSON")
    args = parser.parse_args(argv)
    os.environ.setdefault("LDPKIT_OFFLINE", "1")
    start = time.perf_counter()
    properties = _run_properties(args.examples, args.seed)
    outcomes = _sample_outcomes(args.sample)
    result = {"properties": properties, "sample": args.sample, **outcomes,
              "seconds": round(time.perf_counter() - start, 1), "python": platform.python_version(),
              "machine": platform.machine()}
    print(json.dumps(outcomes, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 1 if any(p["status"] != "passed" for p in properties.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
