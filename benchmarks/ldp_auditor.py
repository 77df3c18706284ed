"""Run LDP-Auditor's own code (Arcolezi and Gambs, PETS 2024) and compare it with the kit's reproduction.

LDP-Auditor (``arcolezi2024revealing``) audits a protocol at ``(k, eps)`` by guessing the input of
``nb_trials`` reports of each of two inputs and turning the two counts into
``eps_emp = log(TPR_lower / FPR_upper)`` (see :mod:`ldpkit.audit.ldp_auditor`).  This benchmark runs
their ``LDPAuditor.run_audit`` in a separate interpreter where their dependencies are installed
(ray, numba, multi-freq-ldpy 0.2.5, statsmodels, xxhash < 4: xxhash 4 refuses the ``str`` their
code hashes), records their counts ``TP`` and ``FP`` (by wrapping the ``proportion_confint`` their
module calls, which leaves the computation unchanged) and their ``eps_emp``, and compares both with
the exact guess probabilities of :mod:`ldpkit.audit.ldp_auditor` (z-scores of the counts, and of
``eps_emp`` against the mean and standard deviation of the reproduced statistic).

Setup (a throwaway environment, not the kit's)::

    python3 -m venv VENV && VENV/bin/pip install ray numba multi-freq-ldpy==0.2.5 pure-ldp \\
        statsmodels "xxhash<4" psutil scikit-learn pandas
    git -C LDP_AUDIT_GIT archive HEAD | tar -x -C SRC

Run::

    python benchmarks/ldp_auditor.py --ldp-audit-python VENV/bin/python --ldp-audit-src SRC

It writes ``ldpkit/audit/data/ldp-auditor-reference.json`` (read back by
:func:`ldpkit.audit.ldp_auditor.stored_ldp_auditor_runs`).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "ldpkit" / "audit" / "data" / "ldp-auditor-reference.json"
COMMAND = "python benchmarks/ldp_auditor.py --ldp-audit-python VENV/bin/python --ldp-audit-src SRC"

DRIVER = r'''
import json, sys, time, warnings
import importlib.metadata as md
cfg = json.loads(sys.argv[1])
sys.path.insert(0, cfg["src"])
import ldp_audit.base_auditor as ba
calls = []
_orig = ba.proportion_confint
def _recording(count, nobs, alpha, method):
    calls.append((int(count), int(nobs)))
    return _orig(count, nobs, alpha, method)
ba.proportion_confint = _recording
warnings.simplefilter("ignore")
aud = ba.LDPAuditor(nb_trials=cfg["nb_trials"], alpha=cfg["alpha"], epsilon=cfg["eps"][0], k=cfg["k"],
                    random_state=cfg["seeds"][0], n_jobs=cfg["n_jobs"])
rows = []
for seed in cfg["seeds"]:
    for eps in cfg["eps"]:
        aud.set_params(epsilon=eps, k=cfg["k"], random_state=seed)
        for proto in cfg["protocols"]:
            calls.clear()
            t = time.perf_counter()
            val = float(aud.run_audit(proto))
            rows.append(dict(protocol=proto, k=cfg["k"], eps=eps, nb_trials=cfg["nb_trials"], alpha=cfg["alpha"],
                             seed=seed, tp=calls[0][0], fp=calls[1][0], their_eps_emp=val,
                             seconds=time.perf_counter() - t))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
versions = {p: md.version(p) for p in ("ray", "numba", "numpy", "multi-freq-ldpy", "statsmodels", "xxhash")}
versions["python"] = sys.version.split()[0]
print(json.dumps(dict(rows=rows, versions=versions)))
'''


def run_theirs(python: str, src: str, cfg: dict) -> dict:
    """Run the driver in LDP-Auditor's interpreter; its workers import ``ldp_audit`` from ``src``."""
    env = dict(os.environ, PYTHONPATH=src, RAY_DEDUP_LOGS="0")
    cfg = dict(cfg, src=src)
    proc = subprocess.run([python, "-c", DRIVER, json.dumps(cfg)], cwd=src, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"LDP-Auditor driver failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def their_commit(git_dir: str | None) -> str:
    if not git_dir:
        return ""
    return subprocess.run(["git", "-C", git_dir, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ldp-audit-python", required=True, help="interpreter with LDP-Auditor's dependencies")
    ap.add_argument("--ldp-audit-src", required=True, help="LDP-Auditor's files (git archive of its repository)")
    ap.add_argument("--ldp-audit-git", default=None, help="its git directory, to record the commit")
    ap.add_argument("--commit", default="", help="their commit, when --ldp-audit-git is not given")
    ap.add_argument("--nb-trials", type=int, default=1_000_000)
    ap.add_argument("--alpha", type=float, default=1e-2)
    ap.add_argument("--k", type=int, default=25)
    ap.add_argument("--eps", type=float, nargs="+", default=[0.25, 1.0, 4.0, 10.0])
    ap.add_argument("--protocols", nargs="+", default=["GRR", "SUE", "OUE", "OLH", "BLH", "SS"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--raw", default=None, help="a JSON file: reuse their rows from it if it exists, else save them there")
    ap.add_argument("--draws", type=int, default=20_000, help="draws of the reproduced statistic per row")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)

    cfg = dict(nb_trials=args.nb_trials, alpha=args.alpha, k=args.k, eps=args.eps, protocols=args.protocols,
               seeds=args.seeds, n_jobs=args.n_jobs)
    t0 = time.perf_counter()
    if args.raw and Path(args.raw).exists():
        theirs = json.loads(Path(args.raw).read_text())
    else:
        theirs = run_theirs(args.ldp_audit_python, args.ldp_audit_src, cfg)
        if args.raw:
            Path(args.raw).write_text(json.dumps(theirs))
    wall = time.perf_counter() - t0

    from ldpkit.audit import ldp_auditor as la

    rows = la.compare_with_reproduction(theirs["rows"], draws=args.draws, rng=20240601)
    header = dict(
        what="LDP-Auditor's run_audit (their code) against the kit's reproduction of its statistic",
        paper="arcolezi2024revealing",
        repository="https://github.com/hharcolezi/ldp-audit",
        commit=their_commit(args.ldp_audit_git) or args.commit,
        versions=theirs["versions"],
        setup="their code in its own environment, xxhash < 4 (xxhash 4 rejects the str their code hashes), "
              "n_jobs=%d ray workers" % args.n_jobs,
        date=_dt.date.today().isoformat(),
        command=COMMAND,
        their_seconds=round(sum(r["seconds"] for r in theirs["rows"]), 1),
        wall_seconds=round(wall, 1),
        draws=args.draws,
        note="z_tp, z_fp: their counts against the exact guess probabilities (binomial sd); z_eps: their eps_emp "
             "against the mean and sd of the reproduced statistic (independent binomial draws; their code reuses one "
             "random stream for both inputs, which may correlate TP and FP)",
    )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(dict(header=header, rows=rows), indent=1) + "\n")
    for r in rows:
        print(f"{r['protocol']:>4} eps={r['eps']:<5} theirs={r['their_eps_emp']:.4f} ours={r['repro_mean']:.4f}"
              f"+-{r['repro_sd']:.4f} z_eps={r['z_eps']:+.2f} z_tp={r['z_tp']:+.2f} z_fp={r['z_fp']:+.2f}")
    print(f"their code: {header['their_seconds']} s; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
