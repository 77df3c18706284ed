"""The audit's speed on the kit's mechanisms and on the peers, and the audits of the peers (a benchmark, not a test).

One command measures, on this machine and in one run:

* **kit throughput**: ``audit_ldp`` with white-box and black-box events on ``from_mechanism`` of
  GRR, RAPPOR, OUE, OLH, HR, uRR, IPRR and IDUE at d = 10 and d = 100, eps = 1 (uRR: half the
  items sensitive; IPRR, IDUE: half the items at eps, half at 2 eps), ``--kit-samples`` samples
  per input: samples per second (inputs sampled x samples per input / seconds) and the peak of
  Python and numpy allocations (``tracemalloc``).  At d = 100 the black-box audit examines the
  ordered pairs of the first ten inputs (its event selection is per pair).  A mechanism whose
  outputs cannot be indexed (unary encodings at d = 100: 2**100 outputs) is reported as such.
* **peer audits**: every frequency oracle of pure-ldp and multi-freq-ldpy
  (:func:`ldpkit.audit.peers.peer_samplers`) at d = 4 and the budgets their documentation shows
  (pure-ldp: 0.5, 1 and 3, from its README and experiments; multi-freq-ldpy: 0.5, 1 and 2, its
  README's example budget and the default grid), the unary encodings also at 0.25, and subset
  selection also at d = 8.  ``--peer-samples`` reports per input are drawn once per oracle (one
  peer call each, seeded from ``--seed``) and bounded black-box and, where the claimed channel is
  known, white-box, at alpha = 0.05.  A bound above the claimed epsilon is flagged with its
  reproducer.  Samples per second of each peer are reported.
* ``--pure-ldp-112-python PY``: the same audit of pure-ldp 1.1.2's unary encodings, run in another
  interpreter ``PY`` that has pure-ldp 1.1.2 (a subprocess prints the reports).

Usage::

    pip install -e ".[bench]"
    python benchmarks/audit.py --out benchmark-results [--write-reference]

writes ``audit.md`` and ``audit.json`` to ``--out``; ``--write-reference`` also writes the peer
audits to ``ldpkit/audit/data/peers-reference.json`` (read by
:func:`ldpkit.audit.peers.stored_peer_audits`).  ``--quick`` runs a small smoke configuration.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import math
import os
import platform
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any, Optional

import numpy as np

import ldpkit
from ldpkit import accountant
from ldpkit.audit import audit_ldp, from_mechanism
from ldpkit.audit.peers import REFERENCE_COLUMNS, peer_samplers
from ldpkit.channels import ExplicitChannel

KIT_MECHANISMS = ("GRR", "RAPPOR", "OUE", "OLH", "HR", "uRR", "IPRR", "IDUE")
ALPHA = 0.05
#: budgets per peer library (their documentation's examples), and the extra ones
PEER_BUDGETS = {"pure-ldp": (0.5, 1.0, 3.0), "multi-freq-ldpy": (0.5, 1.0, 2.0)}
UE_EXTRA = (0.25,)
REFERENCE = Path(__file__).resolve().parent.parent / "ldpkit" / "audit" / "data" / "peers-reference.json"


def two_level(d: int, eps: float) -> np.ndarray:
    out = np.full(d, 2.0 * eps)
    out[::2] = eps
    return out


def kit_mechanism(name: str, d: int, eps: float) -> Any:
    if name == "uRR":
        return ldpkit.URR(d, eps, np.arange(d) < d // 2)
    if name == "IPRR":
        return ldpkit.IPRR(two_level(d, eps))
    if name == "IDUE":
        return ldpkit.IDUE(two_level(d, eps), model="opt0")
    return {"GRR": ldpkit.GRR, "RAPPOR": ldpkit.RAPPOR, "OUE": ldpkit.OUE, "OLH": ldpkit.OLH, "HR": ldpkit.HR}[name](
        d, eps)


def machine() -> dict[str, Any]:
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "cores": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__,
            "ldpkit": ldpkit.__version__}


# ---------------------------------------------------------------------------------- kit
def kit_rows(n: int, dims: tuple[int, ...], seed: int) -> list[dict[str, Any]]:
    rows = []
    for d in dims:
        for name in KIT_MECHANISMS:
            mech = kit_mechanism(name, d, 1.0)
            for events in ("white", "black"):
                row: dict[str, Any] = {"mechanism": name, "d": d, "events": events, "samples": n}
                pairs = None
                inputs = 2 if events == "white" else d
                if events == "black" and d > 10:
                    pairs = [(x, y) for x in range(10) for y in range(10) if x != y]
                    inputs = 10
                try:
                    sampler = from_mechanism(mech)
                    tracemalloc.start()
                    t0 = time.perf_counter()
                    b = audit_ldp(sampler, n, events=events, pairs=pairs, rng=seed)
                    sec = time.perf_counter() - t0
                    peak = tracemalloc.get_traced_memory()[1]
                    row.update(bound=b.value, seconds=sec, samples_per_s=inputs * n / sec, peak_mib=peak / 2**20,
                               note="")
                except Exception as err:  # reported, not dropped
                    row.update(bound=math.nan, seconds=math.nan, samples_per_s=math.nan, peak_mib=math.nan,
                               note=f"{type(err).__name__}: {str(err).split(':')[-1].strip()[:80]}")
                finally:
                    if tracemalloc.is_tracing():
                        tracemalloc.stop()
                print(f"kit {name:7s} d={d:<4d} {events}: bound {row['bound']:.3f}  "
                      f"{row['samples_per_s']:.3g}/s  {row['note']}", flush=True)
                rows.append(row)
    return rows


# ---------------------------------------------------------------------------------- peers
class Recorded:
    """A sampler replaying ``n`` pre-drawn outputs per input (each audit draws from its own copy in order)."""

    def __init__(self, sampler: Any, inputs: range, n: int, rng: np.random.Generator) -> None:
        self.n_inputs, self.n_outputs = sampler.n_inputs, sampler.n_outputs
        self.streams = {x: np.asarray(sampler(x, n, rng)) for x in inputs}
        self.pos = dict.fromkeys(self.streams, 0)
        if self.n_outputs is None:
            self.n_outputs_seen = 1 + max(int(s.max()) for s in self.streams.values())

    def rewind(self) -> "Recorded":
        self.pos = dict.fromkeys(self.streams, 0)
        return self

    def __call__(self, x: int, size: int, rng: np.random.Generator) -> np.ndarray:
        i = self.pos[x]
        if i + size > self.streams[x].size:
            raise ValueError("the recording is exhausted")
        self.pos[x] = i + size
        return self.streams[x][i:i + size]


def audit_peer(o: Any, n: int, seed: int, call: Optional[str] = None) -> list[dict[str, Any]]:
    """White-box (if a channel) and black-box LDP bounds of one peer oracle on ``n`` recorded reports per input."""
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    rec = Recorded(o.sampler, range(o.d), n, rng)
    draw = time.perf_counter() - t0
    exact = math.nan
    if o.channel is not None:
        lr = accountant.pairwise_log_ratio(ExplicitChannel(o.channel))
        np.fill_diagonal(lr, -np.inf)
        exact = float(lr.max())
    rows = []
    for events in (("white", "black") if o.channel is not None else ("black",)):
        t1 = time.perf_counter()
        b = audit_ldp(rec.rewind(), n, events=events, alpha=ALPHA, rng=seed,
                      channel=o.channel if events == "white" else None)
        rows.append({"library": o.library, "version": o.version, "mechanism": o.mechanism,
                     "call": call or o.call, "report": o.report, "d": o.d, "eps": o.eps, "events": events,
                     "samples": n, "bound": round(b.value, 4), "confidence": b.confidence,
                     "violated": bool(b.value > o.eps), "seconds": round(draw + time.perf_counter() - t1, 2),
                     "exact": round(exact, 4) if math.isfinite(exact) else None,
                     "samples_per_s": round(o.d * n / draw), "pair": list(b.pair), "event": list(b.event),
                     "seed": seed})
        r = rows[-1]
        print(f"peer {o.library:16s} {o.mechanism:9s} d={o.d} eps={o.eps:<5.3g} {events}: bound {r['bound']:.3f}"
              f" (exact {r['exact']}) {'VIOLATED' if r['violated'] else ''} {r['samples_per_s']:.3g}/s", flush=True)
    return rows


def peer_rows(n: int, seed: int, quick: bool) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for lib, budgets in PEER_BUDGETS.items():
        grid = [(4, eps, None) for eps in (budgets[:1] if quick else budgets)]
        grid += [(4, eps, ("SUE", "OUE")) for eps in UE_EXTRA]
        if lib == "multi-freq-ldpy" and not quick:
            grid += [(8, eps, ("SS", "SS (set)")) for eps in budgets]
        for d, eps, only in grid:
            for o in peer_samplers(d, eps, libraries=[lib], seed=seed).values():
                if only is None or o.mechanism in only:
                    rows += audit_peer(o, n, seed)
    return rows


OLD_UE_SCRIPT = """
import random, sys, numpy as np
from pure_ldp.frequency_oracles.unary_encoding import UEClient
eps, d, oue, n, seed = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1", int(sys.argv[4]), int(sys.argv[5])
np.random.seed(seed % 2**32); random.seed(seed)
c = UEClient(epsilon=eps, d=d, use_oue=oue)
out = np.array([[sum(1 << i for i, b in enumerate(c.privatise(x + 1)) if b > 0) for _ in range(n)] for x in range(d)])
np.save(sys.stdout.buffer, out)
"""


def old_pure_ldp_rows(python: str, n: int, seed: int, budgets: tuple[float, ...]) -> list[dict[str, Any]]:
    """pure-ldp 1.1.2's UE audited from reports printed by another interpreter."""
    import io

    from ldpkit.audit import from_function
    from ldpkit.audit.peers import PeerOracle, _ue_channel

    version = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('pure-ldp'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    rows = []
    d = 4
    for eps in budgets:
        for name, oue in (("SUE", False), ("OUE", True)):
            t0 = time.perf_counter()
            raw = subprocess.run([python, "-c", OLD_UE_SCRIPT, str(eps), str(d), str(int(oue)), str(n), str(seed)],
                                 capture_output=True, check=True).stdout
            reports = np.load(io.BytesIO(raw))
            e = math.exp(eps)
            p, q = (0.5, 1 / (e + 1)) if oue else (math.sqrt(e) / (math.sqrt(e) + 1), 1 / (math.sqrt(e) + 1))

            def fn(x: int, size: int, rng: np.random.Generator, reports: np.ndarray = reports) -> np.ndarray:
                return reports[x, :size]

            s = from_function(fn, d, int, outputs=range(2**d), batch=True)
            o = PeerOracle("pure-ldp", version, name, f"UEClient(epsilon={eps}, d={d}, use_oue={oue}).privatise(x + 1)",
                           "bit vector", d, eps, None, s, _ue_channel(d, p, q))

            class Replay:
                n_inputs, n_outputs = d, 2**d

                def __init__(self) -> None:
                    self.pos = [0] * d

                def __call__(self, x: int, size: int, rng: np.random.Generator) -> np.ndarray:
                    out = reports[x, self.pos[x]:self.pos[x] + size]
                    self.pos[x] += size
                    return out
            draw = time.perf_counter() - t0
            for events in ("white", "black"):
                b = audit_ldp(Replay(), n, events=events, alpha=ALPHA, rng=seed,
                              channel=o.channel if events == "white" else None)
                rows.append({"library": "pure-ldp", "version": version, "mechanism": name, "call": o.call,
                             "report": o.report, "d": d, "eps": eps, "events": events, "samples": n,
                             "bound": round(b.value, 4), "confidence": b.confidence, "violated": bool(b.value > eps),
                             "seconds": round(draw, 2), "exact": None, "samples_per_s": round(d * n / draw),
                             "pair": list(b.pair), "event": list(b.event), "seed": seed})
                print(f"pure-ldp {version} {name} eps={eps} {events}: bound {b.value:.3f}", flush=True)
    return rows


# ---------------------------------------------------------------------------------- output
def markdown(result: dict[str, Any]) -> str:
    lines = [f"# Audit benchmark ({result['date']})", "", f"Machine: {result['machine']}", "",
             f"Command: `{result['command']}`", "", "## Kit mechanisms (eps = 1)", "",
             "| mechanism | d | events | samples/input | bound | seconds | samples/s | peak MiB | note |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in result["kit"]:
        lines.append(f"| {r['mechanism']} | {r['d']} | {r['events']} | {r['samples']:,} | {r['bound']:.3f} | "
                     f"{r['seconds']:.2f} | {r['samples_per_s']:,.0f} | {r['peak_mib']:.1f} | {r['note']} |")
    lines += ["", f"## Peer audits (alpha = {ALPHA})", "",
              "| library | version | mechanism | d | eps | events | samples/input | bound | exact | violated | "
              "samples/s | call |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["peers"]:
        lines.append(f"| {r['library']} | {r['version']} | {r['mechanism']} | {r['d']} | {r['eps']:.4g} | "
                     f"{r['events']} | {r['samples']:,} | {r['bound']:.3f} | {r['exact']} | "
                     f"{'**yes**' if r['violated'] else 'no'} | {r['samples_per_s']:,} | `{r['call']}` |")
    bad = [r for r in result["peers"] if r["violated"]]
    lines += ["", f"Violations: {len(bad)}"]
    lines += [f"- {r['library']} {r['version']} `{r['call']}` (items 0-based x; seed {r['seed']}): bound "
              f"{r['bound']:.3f} > claimed {r['eps']:.4g} ({r['events']}-box, {r['samples']:,} samples/input)"
              for r in bad]
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("benchmark-results"))
    ap.add_argument("--quick", action="store_true", help="small smoke configuration (under a minute)")
    ap.add_argument("--kit-samples", type=int, default=None, help="samples per input, kit (default 1,000,000)")
    ap.add_argument("--peer-samples", type=int, default=None, help="reports per input, peers (default 100,000)")
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--write-reference", action="store_true", help="write ldpkit/audit/data/peers-reference.json")
    ap.add_argument("--pure-ldp-112-python", default=None, help="an interpreter with pure-ldp 1.1.2 installed")
    args = ap.parse_args(argv)
    kit_n = args.kit_samples or (20_000 if args.quick else 1_000_000)
    peer_n = args.peer_samples or (2_000 if args.quick else 100_000)
    # absolute paths (an output directory, another environment's python) are machine-specific
    # and never stored: each is replaced by a placeholder naming what it was
    command = "python benchmarks/audit.py " + " ".join(
        "<path>" if os.path.isabs(a) else a for a in (sys.argv[1:] if argv is None else argv))
    t0 = time.perf_counter()
    result: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "machine": machine(), "command": command,
        "versions": {lib: importlib.metadata.version(lib) for lib in ("pure-ldp", "multi-freq-ldpy")},
        "alpha": ALPHA, "kit_samples": kit_n, "peer_samples": peer_n, "seed": args.seed,
    }
    result["kit"] = kit_rows(kit_n, (10,) if args.quick else (10, 100), args.seed)
    result["peers"] = peer_rows(peer_n, args.seed, args.quick)
    if args.pure_ldp_112_python:
        result["peers"] += old_pure_ldp_rows(args.pure_ldp_112_python, peer_n, args.seed, (0.25, 0.5, 1.0))
    result["seconds"] = round(time.perf_counter() - t0, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "audit.json").write_text(json.dumps(result, indent=1, default=float) + "\n")
    md = markdown(result)
    (args.out / "audit.md").write_text(md)
    print(md)
    if args.write_reference:
        kit_summary = [{k: r[k] for k in ("mechanism", "d", "events", "samples", "samples_per_s", "peak_mib")}
                       for r in result["kit"]]
        ref = {"provenance": {"date": result["date"], "machine": result["machine"], "command": command,
                              "alpha": ALPHA, "seed": args.seed, "seconds": result["seconds"],
                              "versions": result["versions"], "kit_throughput": kit_summary},
               "columns": list(REFERENCE_COLUMNS) + ["exact", "samples_per_s", "pair", "event", "seed"],
               "rows": [[r[c] for c in list(REFERENCE_COLUMNS) + ["exact", "samples_per_s", "pair", "event", "seed"]]
                        for r in result["peers"]]}
        REFERENCE.parent.mkdir(parents=True, exist_ok=True)
        REFERENCE.write_text(json.dumps(ref, indent=1, default=float) + "\n")
        print(f"wrote {REFERENCE.name}")


if __name__ == "__main__":
    main()
