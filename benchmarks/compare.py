"""ldpkit against the peer libraries and against the hardware floor (a benchmark, not a test).

One command measures, on this machine and in one run:

* **end to end** (client perturbation + aggregation + estimation) for n users (default
  1,000,000), d = 100 and 1,000 items, eps = 1, Zipf data: GRR, OUE, OLH, HR, FHR, IPRR, IDUE, SHE,
  THE, HM, uRAP (the first tenth of the items sensitive, ULDP budget eps), SS, BLH, FLH, CMS and
  HCMS in ldpkit and in every peer library that has the mechanism (pure-ldp 1.2.0, multi-freq-ldpy
  0.2.5; no peer has uRAP).  Libraries are interleaved (each repeat runs every library of a cell in turn) and the
  median of ``--repeats`` runs is reported, as users per second and as ldpkit's ratio to the
  faster peer.  A peer that cannot be imported is reported as such.
* **peer sizes**: the peers loop over users in Python.  A peer whose predicted time at full n fits
  in ``--peer-seconds`` runs at full n; otherwise it runs on the largest n2 that fits, and one run
  on n2 / 5 checks that its per-user cost is constant (within 25%).  Only then is its rate
  extrapolated to full n (marked ``~``); a peer that fails the check is marked ``!`` and its rate
  at n2 is shown as measured, not extrapolated.
* **correctness**: over ldpkit's timed repeats, the empirical MSE of the estimated counts against
  the exact variance (``sum_i Var[c_hat_i]``): the ratio and its standard error, which must be
  near 1 (speed never comes from a wrong answer).
* **floor**: the time numpy takes only to draw the random numbers each ldpkit path consumes (same
  generator, same distributions and sizes) and, for OLH, to evaluate the n x d hashes once.
* **peak memory** of one end-to-end run (``tracemalloc``: the peak of Python and numpy allocations
  during the run, above what was allocated before it).
* **aggregate-level trial** at Kosarak scale (n = 990,002, d = 41,270) for every mechanism with an
  exact one (``simulate``), and the **solvers** (IDUE opt0/opt1/opt2, LIP) at their largest sizes.

Usage (README, "Performance")::

    pip install -e ".[bench]"
    python benchmarks/compare.py --out benchmark-results

writes ``compare.md`` (the tables, with machine and date) and ``compare.json`` to ``--out`` and
prints the tables.  ``--quick`` runs a small smoke configuration (n = 20,000, 2 repeats).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import gc
import importlib.metadata
import json
import os
import platform
import statistics
import time
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import ldpkit
from ldpkit import lip
from ldpkit.budgets import apportion
from ldpkit.olh import OLH, seed_parameters

MECHANISMS = ("GRR", "OUE", "OLH", "HR", "FHR", "IPRR", "IDUE", "SHE", "THE", "HM", "uRAP", "SS", "BLH", "FLH", "CMS",
              "HCMS")
PEER_LIBRARIES = ("pure-ldp", "multi-freq-ldpy")
KOSARAK_N, KOSARAK_D = 990_002, 41_270
ZIPF_EXPONENT = 1.1


# ---------------------------------------------------------------------------------- set-up
def zipf_items(n: int, d: int, seed: int) -> np.ndarray:
    """``n`` items over ``d`` with P(item i) proportional to ``(i + 1) ** -1.1``."""
    weights = 1.0 / np.arange(1, d + 1) ** ZIPF_EXPONENT
    return np.random.default_rng(seed).choice(d, size=n, p=weights / weights.sum())


def two_level_budgets(d: int, eps: float) -> np.ndarray:
    """Per-item budgets for IPRR and IDUE: half the items at ``eps``, half at ``2 eps`` (every item sensitive)."""
    out = np.full(d, 2.0 * eps)
    out[::2] = eps
    return out


def make_ldpkit(name: str, d: int, eps: float) -> ldpkit.FrequencyOracle:
    """The ldpkit oracle ``name`` over ``d`` items at budget ``eps`` (IPRR, IDUE: :func:`two_level_budgets`)."""
    simple = {"GRR": ldpkit.GRR, "OUE": ldpkit.OUE, "OLH": OLH, "HR": ldpkit.HR, "FHR": ldpkit.FHR}
    if name in simple:
        return simple[name](d, eps)
    if name == "IPRR":
        return ldpkit.IPRR(two_level_budgets(d, eps))
    if name == "IDUE":
        return ldpkit.IDUE(two_level_budgets(d, eps), model="opt0")
    if name in ("SHE", "THE"):
        from ldpkit import histogram

        return histogram.SHE(d, eps) if name == "SHE" else histogram.THE(d, eps)
    if name == "HM":
        from ldpkit.hadamard_mechanism import HM

        return HM(d, eps)
    if name == "uRAP":  # no peer has it: the first tenth of the items sensitive, the ULDP budget eps
        from ldpkit.urap import URAP

        return URAP(d, eps, np.arange(max(1, d // 10)))
    if name == "SS":
        from ldpkit.subset import SubsetSelection

        return SubsetSelection(d, eps)  # the best subset size
    if name in ("BLH", "FLH", "CMS", "HCMS"):
        from ldpkit.blh import BLH
        from ldpkit.flh import FLH
        from ldpkit.sketch import CMS, HCMS
        return {"BLH": BLH, "FLH": FLH, "CMS": CMS, "HCMS": HCMS}[name](d, eps)
    raise ValueError(f"unknown mechanism {name!r}; expected one of {MECHANISMS}")


def floor_draws(name: str, mech: Any, n: int) -> Callable[[np.random.Generator], object]:
    """The random numbers ldpkit's ``perturb`` of ``name`` consumes for ``n`` users, drawn and discarded.

    Read off each ``perturb``: GRR and IPRR one uniform double per user plus one bounded integer
    (IPRR: a second double for its inverse-CDF resample); OUE and IDUE one 16-bit integer per
    byte of the bit-packed report plus one double per user; OLH a 64-bit seed, a double and a
    bounded integer per user; HR, FHR and HM one bounded integer and one double per user; THE and
    uRAP as OUE (unary encodings); SHE two geometric draws per cell of the n x d noise.
    """
    if name in ("GRR",):
        return lambda g: (g.random(n), g.integers(0, mech.d - 1, size=n))
    if name == "IPRR":
        return lambda g: (g.random(n), g.random(n))
    if name in ("OUE", "IDUE", "THE", "uRAP"):
        n_bytes = (mech.d + 7) // 8
        rows = max(1, (1 << 24) // mech.d)  # the same chunking as the mechanism (bounded memory)

        def unary(g: np.random.Generator) -> None:
            for start in range(0, n, rows):
                g.integers(0, 65536, size=(min(rows, n - start), n_bytes), dtype=np.uint16)
            g.random(n)

        return unary
    if name == "OLH":
        return lambda g: (g.integers(0, 2**64, size=n, dtype=np.uint64), g.random(n),
                          g.integers(0, mech.g - 1, size=n))
    if name == "HR":
        return lambda g: (g.integers(0, mech.K, size=n), g.random(n))
    if name == "FHR":
        return lambda g: (g.integers(0, mech.K * mech.K, size=n), g.random(n))
    if name == "HM":  # a coefficient index and a double per user
        return lambda g: (g.integers(0, mech.K, size=n), g.random(n))
    if name == "SHE":  # two geometric draws per cell (the discrete Laplace noise), in row chunks
        rows_she = max(1, (1 << 24) // mech.d)

        def she(g: np.random.Generator) -> None:
            for start in range(0, n, rows_she):
                shape = (min(rows_she, n - start), mech.d)
                g.geometric(mech.one_minus_alpha, size=shape)
                g.geometric(mech.one_minus_alpha, size=shape)
        return she
    if name == "SS":
        return lambda g: _subset_floor(g, mech, n)
    # BLH is OLH's perturb with g = 2; FLH draws a pool index instead of a seed
    if name in ("BLH", "FLH"):
        top = 2**64 if name == "BLH" else mech.k
        return lambda g: (g.integers(0, top, size=n, dtype=np.uint64), g.random(n),
                          g.integers(0, mech.g - 1, size=n))
    if name == "CMS":  # a pool index, one 16-bit integer per byte of the m bits, one double per user
        n_bytes = (mech.m + 7) // 8
        rows_cms = max(1, (1 << 24) // mech.m)

        def sketch(g: np.random.Generator) -> None:
            g.integers(0, mech.k, size=n)
            for start in range(0, n, rows_cms):
                g.integers(0, 65536, size=(min(rows_cms, n - start), n_bytes), dtype=np.uint16)
            g.random(n)

        return sketch
    if name == "HCMS":  # a pool index, a coefficient and a double per user
        return lambda g: (g.integers(0, mech.k, size=n), g.integers(0, mech.m, size=n), g.random(n))
    raise ValueError(f"no floor defined for {name!r}")


def _subset_floor(g: np.random.Generator, mech: Any, n: int) -> None:
    """SS's draws: one double per user (keep the item or not), then Floyd's algorithm, one bounded
    integer per user and chosen item: ``k - 1`` for a kept item, ``k`` otherwise (their complements
    among the ``d - 1`` other items when these are more than half), in steps of growing range."""
    g.random(n)
    others = mech.d - 1
    kept = int(round(n * float(mech.keep[0])))
    sizes = (mech.k - 1, mech.k)
    if 2 * mech.k > others + 1:
        sizes = (others - sizes[0], others - sizes[1])
    for size, users in zip(sizes, (kept, n - kept)):
        for j in range(others - size, others):
            g.integers(0, j + 1, size=users)


def olh_hash_floor(n: int, d: int, seed: int) -> Callable[[], None]:
    """Evaluate the n x d hashes ``a_u * k_i + b_u`` (64-bit multiply-add) once, in ~1M-cell blocks."""
    seeds = np.random.default_rng(seed).integers(0, 2**64, size=n, dtype=np.uint64)
    a, b = seed_parameters(seeds)
    keys = np.arange(d, dtype=np.uint64)
    rows = max(1, (1 << 20) // d)

    def run() -> None:
        for start in range(0, n, rows):
            block = a[start:start + rows, None] * keys[None, :]
            block += b[start:start + rows, None]
    return run


# ---------------------------------------------------------------------------------- peers
def _pure_ldp(name: str, d: int, eps: float) -> Callable[[np.ndarray], object] | None:
    from pure_ldp.frequency_oracles import direct_encoding, hadamard_response, local_hashing, unary_encoding
    from pure_ldp.frequency_oracles import hadamard_mechanism, histogram_encoding
    from pure_ldp.frequency_oracles.apple_cms import CMSClient
    from pure_ldp.frequency_oracles.local_hashing import FastLHClient, FastLHServer

    def make() -> tuple[Any, Any]:
        if name == "GRR":
            return direct_encoding.DEClient(eps, d), direct_encoding.DEServer(eps, d)
        if name == "OUE":
            return (unary_encoding.UEClient(eps, d, use_oue=True),
                    unary_encoding.UEServer(eps, d, use_oue=True))
        if name == "OLH":
            return (local_hashing.LHClient(eps, d, use_olh=True),
                    local_hashing.LHServer(eps, d, use_olh=True))
        if name in ("SHE", "THE"):  # THE: pure-ldp thresholds the noisy vectors on the server
            return (histogram_encoding.HEClient(eps, d),
                    histogram_encoding.HEServer(eps, d, use_the=name == "THE"))
        if name == "HM":  # pure-ldp's HM needs a power-of-two domain: the kit's padding, K >= d
            k = 1 << (d - 1).bit_length()
            return (hadamard_mechanism.HadamardMechClient(eps, k, t=1),
                    hadamard_mechanism.HadamardMechServer(eps, k, t=1))
        if name == "BLH":
            return (local_hashing.LHClient(eps, d, g=2, use_olh=False),
                    local_hashing.LHServer(eps, d, g=2, use_olh=False))
        server = hadamard_response.HadamardResponseServer(eps, d)
        return hadamard_response.HadamardResponseClient(eps, d, server.get_hash_funcs()), server

    if name == "FLH":  # client and server given the same g (their defaults differ: the book's field_hashing)
        mech = make_ldpkit(name, d, eps)

        def run_flh(items: np.ndarray) -> object:
            client = FastLHClient(eps, d, mech.k, g=mech.g, use_olh=False)
            server = FastLHServer(eps, d, mech.k, g=mech.g, use_olh=False)
            for x in items.tolist():
                server.aggregate(client.privatise(x + 1))
            return server.estimate_all(range(1, d + 1))
        return run_flh
    if name in ("CMS", "HCMS"):
        mech = make_ldpkit(name, d, eps)

        def run_cms(items: np.ndarray) -> object:
            server = _pure_ldp_cms_server(eps, mech.k, mech.m, name == "HCMS")
            client = CMSClient(eps, server.get_hash_funcs(), mech.m, is_hadamard=name == "HCMS")
            for x in items.tolist():
                server.aggregate(client.privatise(x))
            return server.estimate_all(range(d))
        return run_cms
    if name not in ("GRR", "OUE", "OLH", "HR", "BLH", "SHE", "THE", "HM"):
        return None

    def run(items: np.ndarray) -> object:
        client, server = make()
        for x in items.tolist():
            server.aggregate(client.privatise(x + 1))  # pure-ldp items are 1-based
        return server.estimate_all(range(1, d + 1))
    return run


def _multi_freq_ldpy(name: str, d: int, eps: float) -> Callable[[np.ndarray], object] | None:
    from multi_freq_ldpy.pure_frequency_oracles import GRR, HE, LH, UE

    if name == "GRR":
        def run(items: np.ndarray) -> object:
            reports = [GRR.GRR_Client(x, d, eps) for x in items.tolist()]
            return GRR.GRR_Aggregator_MI(reports, d, eps) * items.size
    elif name == "OUE":
        def run(items: np.ndarray) -> object:
            reports = [UE.UE_Client(x, d, eps, optimal=True) for x in items.tolist()]
            return UE.UE_Aggregator_MI(reports, eps, optimal=True) * items.size
    elif name == "OLH":
        def run(items: np.ndarray) -> object:
            reports = [LH.LH_Client(x, d, eps, optimal=True) for x in items.tolist()]
            return LH.LH_Aggregator_MI(reports, d, eps, optimal=True) * items.size
    elif name in ("SHE", "THE"):
        def run(items: np.ndarray) -> object:
            reports = [HE.HE_Client(x, d, eps) for x in items.tolist()]
            return HE.HE_Aggregator_MI(reports, d, eps, use_thresh=name == "THE") * items.size
    elif name == "SS":
        from multi_freq_ldpy.pure_frequency_oracles import SS

        def run(items: np.ndarray) -> object:  # its own subset size: d / (e^eps + 1) rounded
            reports = [SS.SS_Client(x, d, eps) for x in items.tolist()]
            return SS.SS_Aggregator_MI(reports, d, eps) * items.size
    elif name == "BLH":  # local hashing with optimal=False hashes into two buckets
        def run(items: np.ndarray) -> object:
            reports = [LH.LH_Client(x, d, eps, optimal=False) for x in items.tolist()]
            return LH.LH_Aggregator_MI(reports, d, eps, optimal=False) * items.size
    else:
        return None
    return run


def _pure_ldp_cms_server(eps: float, k: int, m: int, hadamard: bool) -> Any:
    """pure-ldp's ``CMSServer``, built although its base class calls ``np.zeros(None)``, which numpy 2 refuses.

    The base class is patched for the construction only, reading ``d = None`` as zero (the book's
    ``field_hashing`` section reproduces the defect).
    """
    from pure_ldp.core import FreqOracleServer
    from pure_ldp.frequency_oracles.apple_cms import CMSServer

    base_init = FreqOracleServer.__init__

    def tolerant(self: Any, epsilon: float, d: Any, index_mapper: Any = None) -> None:
        base_init(self, epsilon, 0 if d is None else d, index_mapper)

    FreqOracleServer.__init__ = tolerant
    try:
        return CMSServer(eps, k, m, is_hadamard=hadamard)
    finally:
        FreqOracleServer.__init__ = base_init


PEER_FACTORIES = {"pure-ldp": _pure_ldp, "multi-freq-ldpy": _multi_freq_ldpy}
PEER_DISTRIBUTIONS = {"pure-ldp": "pure-ldp", "multi-freq-ldpy": "multi-freq-ldpy"}


def peer_status() -> dict[str, str]:
    """``library -> version`` for importable peers, ``library -> 'not installed: <reason>'`` otherwise."""
    out = {}
    for lib, factory in PEER_FACTORIES.items():
        try:
            factory("GRR", 4, 1.0)
            out[lib] = importlib.metadata.version(PEER_DISTRIBUTIONS[lib])
        except Exception as err:  # an uninstallable peer is reported, not dropped
            out[lib] = f"not installed: {type(err).__name__}: {err}"
    return out


# ---------------------------------------------------------------------------------- measuring
def _timed(fn: Callable[[], object]) -> tuple[float, object]:
    gc.collect()
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def peak_memory_mb(fn: Callable[[], object]) -> float:
    """Peak of Python and numpy allocations (MB) while ``fn`` runs, above what existed before."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 1e6


@dataclasses.dataclass
class PeerPlan:
    """How a peer is timed in one cell: at ``n_run`` users, extrapolated or not."""

    library: str
    run: Callable[[np.ndarray], object]
    n_run: int
    mark: str = ""  # "" measured at full n, "~" extrapolated after the check, "!" not linear
    check: str = ""
    change: float = 0.0  # relative change of the per-user cost from n2 / 5 to n2
    times: list[float] = dataclasses.field(default_factory=list)


def plan_peer(library: str, run: Callable[[np.ndarray], object], items: np.ndarray, budget: float) -> PeerPlan:
    """Pilot the peer, then choose full n or a smaller n2 with a linearity check (see the module docstring)."""
    n = items.size
    run(items[:200])  # warm-up (numba compilation, imports)
    pilot_n = min(n, 2_000)
    per_user = _timed(lambda: run(items[:pilot_n]))[0] / pilot_n
    if per_user * n <= budget:
        return PeerPlan(library, run, n)
    n2 = max(1_000, int(budget / per_user))
    n1 = max(200, n2 // 5)
    c1 = _timed(lambda: run(items[:n1]))[0] / n1
    c2 = _timed(lambda: run(items[:n2]))[0] / n2
    change = c2 / c1 - 1.0
    mark = "~" if abs(change) <= 0.25 else "!"
    check = f"per-user cost {c1 * 1e6:.1f} us at n={n1:,}, {c2 * 1e6:.1f} us at n={n2:,} ({change:+.0%})"
    return PeerPlan(library, run, n2, mark, check, change)


def mse_check(estimates: list[np.ndarray], counts: np.ndarray, mech: Any) -> tuple[float, float]:
    """Empirical MSE / exact MSE over the repeats, and the standard error of that ratio.

    The ratio is ``mean_r sum_i e_ri^2 / sum_i v_i`` with ``e_ri`` the error of item ``i`` in
    repeat ``r`` and ``v_i = Var[c_hat_i]``.  With a handful of repeats the spread of the per-repeat
    sums is a poor estimate of its error, so the standard error sums the per-item spreads
    ``mean_r (e_ri^2 - v_i)^2`` instead, treating the items as independent (exact for the unary
    encodings, close for the others: their covariances are O(1/d) of the variances).
    """
    var = np.asarray(mech.variance(counts), dtype=float)
    sq = (np.asarray(estimates, dtype=float) - counts[None, :]) ** 2  # (repeats, d)
    exact = float(var.sum())
    se = float(np.sqrt(np.sum(np.mean((sq - var[None, :]) ** 2, axis=0)) / sq.shape[0]))
    return float(sq.sum(axis=1).mean()) / exact, se / exact


def bench_cell(name: str, d: int, args: argparse.Namespace, peers: dict[str, str]) -> dict[str, Any]:
    """Every library on one (mechanism, d) cell, interleaved; see the module docstring."""
    n, eps = args.n, args.epsilon
    items = zipf_items(n, d, args.seed)
    counts = np.bincount(items, minlength=d).astype(float)
    mech = make_ldpkit(name, d, eps)
    gen = np.random.default_rng(args.seed + 1)
    mech.estimate(mech.perturb(items[:1_000], gen))  # warm-up (lazy tables)
    plans = []
    for lib, version in peers.items():
        if version.startswith("not installed"):
            continue
        run = PEER_FACTORIES[lib](name, d, eps)
        if run is not None:
            np.random.seed(args.seed)  # the peers draw from numpy's global state
            plans.append(plan_peer(lib, run, items, args.peer_seconds))
    floor = floor_draws(name, mech, n)
    hash_floor = olh_hash_floor(n, d, args.seed) if name in ("OLH", "BLH") else None
    mine, floors, hashes, estimates = [], [], [], []
    for _ in range(args.repeats):
        t, est = _timed(lambda: mech.estimate(mech.perturb(items, gen)))
        mine.append(t)
        estimates.append(est)
        floors.append(_timed(lambda: floor(gen))[0])
        if hash_floor is not None:
            hashes.append(_timed(hash_floor)[0])
        for plan in plans:
            plan.times.append(_timed(lambda p=plan: p.run(items[: p.n_run]))[0])
    ratio, ratio_se = mse_check(estimates, counts, mech)
    t_mine = statistics.median(mine)
    row: dict[str, Any] = {
        "mechanism": name, "d": d, "n": n, "epsilon": eps,
        "seconds": t_mine, "users_per_s": n / t_mine,
        "floor_seconds": statistics.median(floors) + (statistics.median(hashes) if hashes else 0.0),
        "floor_hash_seconds": statistics.median(hashes) if hashes else None,
        "mse_ratio": ratio, "mse_ratio_se": ratio_se,
        "peak_mb": peak_memory_mb(lambda: mech.estimate(mech.perturb(items, gen))),
        "peers": {},
    }
    row["floor_multiple"] = t_mine / row["floor_seconds"]
    for plan in plans:
        rate = plan.n_run / statistics.median(plan.times)
        row["peers"][plan.library] = {
            "users_per_s": rate, "n_run": plan.n_run, "mark": plan.mark, "check": plan.check, "change": plan.change,
            "peak_mb": peak_memory_mb(lambda p=plan: p.run(items[: min(p.n_run, 20_000)])),
            "peak_mb_n": min(plan.n_run, 20_000),
        }
    return compare_to_peers(row)


def compare_to_peers(row: dict[str, Any]) -> dict[str, Any]:
    """ldpkit's ratio to the faster peer of a cell, and whether that ratio is only a lower bound.

    A peer whose per-user cost grows with n (``!`` with a positive change) is at most as fast at
    full n as where it was measured, so its measured rate still bounds the ratio from below
    (``ratio_is_lower_bound``); a peer whose per-user cost falls with n cannot be bounded and
    is left out.
    """
    usable = {lib: p for lib, p in row["peers"].items() if p["mark"] != "!" or p["change"] > 0}
    if not usable:
        row.update(faster_peer=None, faster_peer_users_per_s=None, ratio_to_faster_peer=None,
                   ratio_is_lower_bound=False)
        return row
    lib = max(usable, key=lambda k: usable[k]["users_per_s"])
    row.update(faster_peer=lib, faster_peer_users_per_s=usable[lib]["users_per_s"],
               ratio_to_faster_peer=row["users_per_s"] / usable[lib]["users_per_s"],
               ratio_is_lower_bound=usable[lib]["mark"] == "!")
    return row


def _median_time(fn: Callable[[], object], repeats: int) -> float:
    return statistics.median(_timed(fn)[0] for _ in range(repeats))


def bench_kosarak_trials(args: argparse.Namespace) -> list[dict[str, Any]]:
    """One aggregate-level simulated trial at Kosarak scale for every mechanism (exact ones timed)."""
    counts = np.bincount(zipf_items(KOSARAK_N, KOSARAK_D, args.seed), minlength=KOSARAK_D)
    gen = np.random.default_rng(args.seed)
    rows = []
    for name in MECHANISMS:
        if name in ("FLH", "CMS", "HCMS"):
            rows.append({"mechanism": name, "seconds": None,
                         "note": "not at this d: the pooled estimator solves a d x d system of the pool's collisions"})
            continue
        mech = make_ldpkit(name, KOSARAK_D, args.epsilon)
        if not mech.aggregate_simulation_exact:
            why = "the sets' items" if name == "SS" else "the hash"
            rows.append({"mechanism": name, "seconds": None,
                         "note": f"no exact aggregate form (support counts correlated through {why})"})
            continue
        mech.simulate(counts, gen)
        rows.append({"mechanism": name, "seconds": _median_time(lambda: mech.simulate(counts, gen), 7), "note": ""})
    return rows


def bench_solvers(args: argparse.Namespace) -> list[dict[str, Any]]:
    """IDUE models and LIP optima at the largest sizes the book and the kit use."""
    from ldpkit import idue

    rows = []
    gen = np.random.default_rng(100)
    budgets = np.sort(gen.uniform(0.5, 4.0, 100))
    sizes = gen.integers(1, 800, 100)
    sizes = np.round(sizes * (41_655 / sizes.sum())).astype(int)
    for model in ("opt1", "opt2"):
        rows.append({"solver": f"IDUE {model}", "size": f"t = 100 levels, m = {int(sizes.sum()):,} items",
                     "seconds": _median_time(lambda mo=model: idue.solve(mo, budgets, sizes), 3)})
    three = apportion(KOSARAK_D, [0.05, 0.05, 0.9])
    rows.append({"solver": "IDUE opt0 (with certificate)", "size": f"t = 3 levels, m = {KOSARAK_D:,} items",
                 "seconds": _median_time(lambda: idue.solve("opt0", [1.0, 1.2, 2.0], three), 3)})
    k = lip.MAX_KARY_K
    pi = np.r_[0.5, np.full(k - 1, 0.5 / (k - 1))]
    rows.append({"solver": "LIP optimal_kary_lip (LP + dual certificate)", "size": f"k = {k} (the kit's maximum)",
                 "seconds": _median_time(lambda: lip.optimal_kary_lip(pi, 1.0), 3)})
    from ldpkit.experiments import lip_figures

    gowalla = lip_figures.gowalla_data(1.0)  # the book's largest set of local priors (Fig. 8)
    priors = gowalla["prior"]
    rows.append({"solver": "LIP optimal_lip_local (one binary optimum per distinct prior)",
                 "size": f"{priors.size:,} users, {np.unique(priors).size:,} distinct priors ({gowalla['label']})",
                 "seconds": _median_time(lambda: lip.optimal_lip_local(priors, 1.0), 3)})
    return rows


# ---------------------------------------------------------------------------------- reporting
def machine() -> dict[str, Any]:
    """Cores, memory, CPU, Python and library versions, and the date."""
    try:
        import psutil

        memory = f"{psutil.virtual_memory().total / 2**30:.1f} GiB"
    except ImportError:
        memory = "unknown (psutil not installed)"
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), cpu)
    except OSError:
        pass
    return {
        "date": datetime.date.today().isoformat(), "cores": os.cpu_count(), "memory": memory, "cpu": cpu,
        "python": platform.python_version(), "numpy": np.__version__, "ldpkit": ldpkit.__version__,
    }


def _rate(x: float) -> str:
    return f"{x / 1e6:.2f} M" if x >= 1e6 else f"{x / 1e3:.1f} k"


def markdown(result: dict[str, Any]) -> str:
    """The result as Markdown tables with the machine and the notes on marks."""
    m, peers = result["machine"], result["peers"]
    lines = [
        f"Measured {m['date']} on {m['cores']} cores ({m['cpu']}), {m['memory']} memory; Python {m['python']}, "
        f"numpy {m['numpy']}, ldpkit {m['ldpkit']}; "
        + ", ".join(f"{lib} {v}" for lib, v in peers.items())
        + f". n = {result['n']:,} users, eps = {result['epsilon']:g}, Zipf({ZIPF_EXPONENT}) data, "
        f"median of {result['repeats']} interleaved runs.",
        "",
        "| mechanism | d | ldpkit users/s | floor (x) | MSE / exact (SE) | peak MB | "
        + " | ".join(f"{lib} users/s" for lib in peers) + " | ldpkit / faster peer |",
        "|---|---|---|---|---|---|" + "---|" * len(peers) + "---|",
    ]
    for r in result["cells"]:
        cells = []
        for lib in peers:
            p = r["peers"].get(lib)
            if p is None:
                cells.append("not installed" if peers[lib].startswith("not installed") else "no such mechanism")
            else:
                cells.append(f"{p['mark']}{_rate(p['users_per_s'])}")
        if r["ratio_to_faster_peer"] is None:
            ratio = "no peer has it" if not r["peers"] else "no comparable peer"
        else:
            bound = ">= " if r["ratio_is_lower_bound"] else ""
            x = r["ratio_to_faster_peer"]
            ratio = f"{bound}{x:,.0f}x ({r['faster_peer']})" if x >= 10 else f"{bound}{x:.2g}x ({r['faster_peer']})"
        lines.append(
            f"| {r['mechanism']} | {r['d']:,} | {_rate(r['users_per_s'])} | {r['floor_multiple']:.1f}x | "
            f"{r['mse_ratio']:.3f} ({r['mse_ratio_se']:.3f}) | {r['peak_mb']:.0f} | " + " | ".join(cells)
            + f" | {ratio} |"
        )
    lines += ["", "Peer cells: plain = measured at full n; `~` = measured at a smaller n and extrapolated "
              "after a linearity check; `!` = per-user cost not constant, rate at the smaller n shown as "
              "measured; if the cost grows with n that rate is an upper bound at full n and the ratio a lower "
              "bound (`>=`), otherwise the peer is left out of the ratio. Checks:"]
    for r in result["cells"]:
        for lib, p in r["peers"].items():
            if p["mark"]:
                lines.append(f"- {r['mechanism']}, d = {r['d']:,}, {lib}: {p['mark']} {p['check']}")
    lines += ["", "floor (x): ldpkit's time divided by the time numpy needs only to draw the random numbers "
              "the path consumes (OLH: plus evaluating the n x d hashes once). peak MB: tracemalloc peak of "
              "one end-to-end run at full n.", "",
              f"Aggregate-level simulated trial at Kosarak scale (n = {KOSARAK_N:,}, d = {KOSARAK_D:,}), "
              "median of 7:", "", "| mechanism | one trial |", "|---|---|"]
    for r in result["kosarak"]:
        lines.append(f"| {r['mechanism']} | " + (f"{r['seconds'] * 1e3:.1f} ms" if r["seconds"] is not None
                                                  else r["note"]) + " |")
    if result.get("solvers"):
        lines += ["", "Solvers, median of 3:", "", "| solver | size | seconds |", "|---|---|---|"]
        for r in result["solvers"]:
            lines.append(f"| {r['solver']} | {r['size']} | {r['seconds']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, nargs="+", default=[100, 1_000])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per cell, median reported (>= 3)")
    parser.add_argument("--mechanisms", nargs="+", default=list(MECHANISMS), choices=MECHANISMS)
    parser.add_argument("--peer-seconds", type=float, default=8.0,
                        help="longest single peer run; beyond it a peer runs on fewer users")
    parser.add_argument("--peers", nargs="*", default=list(PEER_LIBRARIES), choices=PEER_LIBRARIES,
                        help="peer libraries to time (default: all; none with an empty list)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--no-solvers", action="store_true", help="skip the solver timings")
    parser.add_argument("--quick", action="store_true", help="smoke run (not a measurement): n = 20,000, 2 repeats, no solvers")
    parser.add_argument("--out", type=Path, default=None, help="directory for compare.md and compare.json")
    args = parser.parse_args(argv)
    # pure-ldp warns on every small run ("only aggregated small amounts of data"): expected here
    warnings.filterwarnings("ignore", message=".*only aggregated small amounts of data.*")
    if args.quick:
        args.n, args.repeats, args.no_solvers = 20_000, 2, True
    if args.n < 1_000 or args.repeats < (2 if args.quick else 3) or args.epsilon <= 0 or min(args.d) < 2:
        parser.error("need --n >= 1000, --repeats >= 3 (a median of at least three), --epsilon > 0 and every --d >= 2")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)

    peers = {lib: v for lib, v in peer_status().items() if lib in args.peers}
    print("peers:", ", ".join(f"{k} {v}" for k, v in peers.items()), flush=True)
    cells = []
    for d in args.d:
        for name in args.mechanisms:
            row = bench_cell(name, d, args, peers)
            print(f"{name:5} d={d:<6,} {_rate(row['users_per_s'])} users/s, floor x{row['floor_multiple']:.1f}, "
                  f"MSE/exact {row['mse_ratio']:.3f} +- {row['mse_ratio_se']:.3f}, peak {row['peak_mb']:.0f} MB; "
                  + ", ".join(f"{lib} {p['mark']}{_rate(p['users_per_s'])}" for lib, p in row["peers"].items()),
                  flush=True)
            cells.append(row)
    kosarak = bench_kosarak_trials(args)
    print("Kosarak-scale trials:", ", ".join(f"{r['mechanism']} {r['seconds']}" for r in kosarak), flush=True)
    solvers = [] if args.no_solvers else bench_solvers(args)
    result = {"machine": machine(), "peers": peers, "n": args.n, "epsilon": args.epsilon, "repeats": args.repeats,
              "cells": cells, "kosarak": kosarak, "solvers": solvers}
    text = markdown(result)
    print(text)
    if args.out is not None:
        (args.out / "compare.md").write_text(text, encoding="utf-8")
        (args.out / "compare.json").write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
