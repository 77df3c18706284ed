"""Adapters of the peer libraries' frequency oracles (pure-ldp, multi-freq-ldpy) as audit samplers.

Auditing chapter, :ref:`sec-audit-peers`.  The peers are the ``bench`` extra
(``pip install -e ".[bench]"``); they are imported only inside the functions that need them, so
this module imports (and :func:`stored_peer_audits` works) without them.

Each adapter calls the peer's *client* once per user, exactly as the peer's documentation does
(``client.privatise(item)`` for pure-ldp, ``XX_Client(item, k, epsilon)`` for multi-freq-ldpy),
and maps every report to a hashable output key by ``encode`` (:func:`~ldpkit.audit.from_function`):

* item reports (GRR / direct encoding, Hadamard response) are the item itself;
* bit vectors (unary encoding, RAPPOR's Bloom filter, Apple's CMS sketch row) are the integer
  with those bits;
* where the raw report space is useless for events, the key is a **post-processing** of the
  report: a local-hashing report ``(value, seed)`` (a seed among ``2**63``) becomes the set of
  items it supports, ``{v : hash(v, seed) = value}``; a Hadamard-mechanism report becomes the
  set of items whose coefficients it matches; a histogram-encoding report (a real vector) becomes
  one of three levels per coordinate (below 0, in ``[0, 1]``, above 1).  A lower bound on a
  post-processing's epsilon is a valid lower bound on the mechanism's own: post-processing never
  increases the privacy loss (a ratio of probabilities of an event of the post-processed output
  is a ratio of probabilities of an event of the raw output).  For histogram encoding with
  Laplace noise the three levels even lose nothing (the worst ratio is attained).

Where the peer mechanism has a closed form (GRR, SUE, OUE, BLH, OLH, HE, SS, the Hadamard
mechanism, ADP), :attr:`PeerOracle.channel` is the claimed exact channel in the same output
indexing, for white-box events (``audit_ldp(o.sampler, n, channel=o.channel)``); hash-based
channels are those of an ideal (uniformly random) hash, which the peers' ``xxhash`` approximates.
The others (Hadamard response, RAPPOR, CMS, HCMS) are audited black-box.

The peers draw from their own global generators (``numpy.random`` and ``random``).  Every
batch of reports seeds both from the audit's generator and restores their previous state after
the batch, so an audit with a fixed ``rng`` is reproducible and leaves the global state as it was.
multi-freq-ldpy's clients are ``numba``-compiled and draw from numba's own generator, which is
seeded the same way (by a compiled ``np.random.seed``) but cannot be restored.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import sys
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from .samplers import FunctionSampler, from_function

__all__ = ["PEER_LIBRARIES", "PeerOracle", "peer_samplers", "stored_peer_audits", "REFERENCE_COLUMNS"]

#: the peer libraries (distribution names) and the modules they install
PEER_LIBRARIES = {"pure-ldp": "pure_ldp", "multi-freq-ldpy": "multi_freq_ldpy"}

#: the columns of :func:`stored_peer_audits`' table
REFERENCE_COLUMNS = ("library", "version", "mechanism", "call", "report", "d", "eps", "events", "samples",
                     "bound", "confidence", "violated", "seconds")

_INSTALL = 'pip install -e ".[bench]"'


@dataclass(frozen=True)
class PeerOracle:
    """One peer frequency oracle, adapted for auditing.

    Attributes
    ----------
    library, version
        Distribution name and installed version of the peer (``"pure-ldp"``, ``"1.2.0"``).
    mechanism
        The mechanism's name (``"OUE"``, ``"OLH"``, ...).
    call
        The exact peer call producing one report of item ``x`` (for a reproducer).
    report
        How a report is mapped to an output key (``"item"``, ``"bit vector"``, or the
        post-processing used).
    d, eps
        Domain size and the epsilon the peer claims for its call.
    kit
        The kit mechanism it corresponds to (``None`` if none).
    sampler
        The :class:`~ldpkit.audit.FunctionSampler` (one peer call per report).
    channel
        The claimed exact channel in the sampler's output indexing, or ``None`` (black-box only).
    """

    library: str
    version: str
    mechanism: str
    call: str
    report: str
    d: int
    eps: float
    kit: Optional[str]
    sampler: FunctionSampler
    channel: Optional[np.ndarray]

    @property
    def key(self) -> str:
        """``"library/mechanism"``, the key of :func:`peer_samplers`' dictionary."""
        return f"{self.library}/{self.mechanism}"


# ============================================================================ imports and seeding
def _import(library: str) -> Any:
    import importlib

    try:
        return importlib.import_module(PEER_LIBRARIES[library])
    except ImportError as err:
        raise ImportError(f"the peer library {library} is not installed ({err}): {_INSTALL}") from None


def _version(library: str) -> str:
    import importlib.metadata

    return importlib.metadata.version(library)


_NUMBA_SEED: list[Any] = []


def _seed_numba(seed: int) -> None:
    """Seed numba's own generator (multi-freq-ldpy's clients are ``numba.jit`` functions) if numba is installed."""
    if not _NUMBA_SEED:
        try:
            import numba  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError:
            _NUMBA_SEED.append(None)
        else:
            def seed_fn(s: int) -> None:
                np.random.seed(s)
            _NUMBA_SEED.append(numba.njit(seed_fn))
    if _NUMBA_SEED[0] is not None:
        _NUMBA_SEED[0](seed)


class _GlobalSeed:
    """Seed ``numpy.random``, ``random`` and numba's generator for a block; restore the first two after it.

    numba's generator (used inside jitted clients) cannot be saved, so it is only seeded.
    """

    def __init__(self, seed: int) -> None:
        self.seed = int(seed)

    def __enter__(self) -> None:
        self._np, self._py = np.random.get_state(), random.getstate()
        np.random.seed(self.seed % 2**32)
        random.seed(self.seed)
        if "numba" in sys.modules:
            _seed_numba(self.seed % 2**32)

    def __exit__(self, *exc: object) -> None:
        np.random.set_state(self._np)
        random.setstate(self._py)


def _batch(call: Callable[[Any], Any]) -> Callable[[Any, int, np.random.Generator], list[Any]]:
    """``fn(value, size, rng)``: ``size`` reports of ``call(value)``, the peer's generators seeded from ``rng``."""

    def fn(value: Any, size: int, rng: np.random.Generator) -> list[Any]:
        with _GlobalSeed(int(rng.integers(2**63))):
            return [call(value) for _ in range(size)]

    return fn


# ============================================================================ encodings and channels
def _bits(report: Any) -> int:
    """A 0/1 (or +-1) vector as the integer with bit ``i`` set where entry ``i`` is positive."""
    return int(sum(1 << i for i, b in enumerate(np.asarray(report).ravel().tolist()) if b > 0))


def _grr_channel(d: int, eps: float) -> np.ndarray:
    e = math.exp(eps)
    return np.where(np.eye(d, dtype=bool), e, 1.0) / (e + d - 1)


def _ue_channel(d: int, p: float, q: float) -> np.ndarray:
    """Unary encoding, outputs the integers ``0 .. 2**d - 1`` (bit ``i`` = coordinate ``i``)."""
    bits = (np.arange(2**d)[:, None] >> np.arange(d)[None, :]) & 1  # outputs x coordinates
    out = np.empty((d, 2**d))
    for x in range(d):
        prob = np.full(d, q)
        prob[x] = p
        out[x] = np.prod(np.where(bits == 1, prob, 1 - prob), axis=1)
    return out


def _support_channel(d: int, eps: float, g: int) -> np.ndarray:
    """Local hashing through an ideal hash, reported as the support set (bitmask) ``{v: h(v) = y}``."""
    e = math.exp(eps)
    p = e / (e + g - 1)
    sets = np.arange(2**d)
    size = np.array([bin(s).count("1") for s in sets])
    out = np.empty((d, 2**d))
    for x in range(d):
        inside = (sets >> x) & 1 == 1
        # x in S: the report is h(x) (prob p), every other item joins with prob 1/g;
        # x not in S: the report is another value (prob 1 - p), every other item joins with prob 1/g
        out[x] = np.where(inside, p * (1 / g) ** (size - 1) * (1 - 1 / g) ** (d - size),
                          (1 - p) * (1 / g) ** size * (1 - 1 / g) ** (d - 1 - size))
    return out


def _he_levels(report: Any) -> int:
    """Histogram-encoding vector to one of three levels per coordinate (< 0, in [0, 1], > 1), base 3."""
    v = np.asarray(report, dtype=float).ravel()
    lev = (v >= 0).astype(int) + (v > 1).astype(int)
    return int(np.sum(lev * 3 ** np.arange(v.size)))


def _he_channel(d: int, eps: float) -> np.ndarray:
    t = math.exp(-eps / 2)  # P(Laplace(2/eps) > 1)
    row0 = np.array([0.5, 0.5 * (1 - t), 0.5 * t])  # levels of a coordinate with mean 0
    row1 = row0[::-1]  # mean 1
    levels = (np.arange(3**d)[:, None] // 3 ** np.arange(d)[None, :]) % 3
    out = np.empty((d, 3**d))
    for x in range(d):
        mean = np.zeros(d, dtype=int)
        mean[x] = 1
        out[x] = np.prod(np.where(mean == 1, row1[levels], row0[levels]), axis=1)
    return out


def _ss_size(d: int, eps: float) -> int:
    return int(max(1, np.rint(d / (math.exp(eps) + 1))))


def _ss_channel(d: int, eps: float, ordered: bool) -> tuple[list[Hashable], np.ndarray]:
    """Subset selection of ``s`` items: as a set (bitmask) or as the ordered array the client returns."""
    s = _ss_size(d, eps)
    e = math.exp(eps)
    pv = s * e / (s * e + d - s)
    if ordered:
        keys: list[Hashable] = list(itertools.permutations(range(d), s))
        out = np.zeros((d, len(keys)))
        for j, t in enumerate(keys):
            for x in range(d):
                if t[0] == x:  # type: ignore[index]  # kept: the true item first, then s - 1 others in random order
                    out[x, j] = pv / math.perm(d - 1, s - 1)
                elif x not in t:  # type: ignore[operator]
                    out[x, j] = (1 - pv) / math.perm(d - 1, s)
        return keys, out
    keys = list(range(2**d))
    out = np.zeros((d, 2**d))
    for m in range(2**d):
        if bin(m).count("1") != s:
            continue
        for x in range(d):
            out[x, m] = pv / math.comb(d - 1, s - 1) if (m >> x) & 1 else (1 - pv) / math.comb(d - 1, s)
    return keys, out


def _hm_coeff(v: int, j: int) -> int:
    return -1 if bin(v & j).count("1") % 2 else 1


def _hm_support(d: int, report: Any) -> int:
    """Hadamard-mechanism report ``[(j_1, c_1), ...]`` to the items whose coefficients all match."""
    pairs = list(report)
    return int(sum(1 << v for v in range(d) if all(_hm_coeff(v, int(j)) == int(c) for j, c in pairs)))


def _hm_channel(d: int, eps: float, t: int) -> np.ndarray:
    e = math.exp(eps)
    p = e / (e + 2**t - 1)
    signs = list(itertools.product((-1, 1), repeat=t))
    out = np.zeros((d, 2**d))
    for js in itertools.product(range(d), repeat=t):
        h = [tuple(_hm_coeff(v, j) for j in js) for v in range(d)]
        for c in signs:
            s = _hm_support(d, zip(js, c))
            for x in range(d):
                out[x, s] += (p if h[x] == c else (1 - p) / (2**t - 1)) / d**t
    return out


# ============================================================================ the peers
def _oracle(library: str, mechanism: str, call: str, report: str, d: int, eps: float, kit: Optional[str],
            fn: Callable[[Any], Any], encode: Callable[[Any], Hashable], outputs: Optional[Sequence[Hashable]],
            inputs: Sequence[Any], channel: Optional[np.ndarray]) -> PeerOracle:
    sampler = from_function(_batch(fn), d, encode, outputs=outputs, inputs=inputs, batch=True)
    if outputs is not None and channel is not None:
        sampler.n_outputs = len(outputs)
    return PeerOracle(library, _version(library), mechanism, call, report, d, float(eps), kit, sampler, channel)


def _pure_ldp(d: int, eps: float, seed: int) -> list[PeerOracle]:
    _import("pure-ldp")
    import xxhash  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from pure_ldp.core import generate_hash_funcs  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from pure_ldp.frequency_oracles import apple_cms, direct_encoding, hadamard_mechanism, hadamard_response  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from pure_ldp.frequency_oracles import histogram_encoding, local_hashing, rappor, unary_encoding  # type: ignore[import-untyped,import-not-found,unused-ignore]

    lib, one_based = "pure-ldp", [v + 1 for v in range(d)]  # pure-ldp items are 1-based
    out: list[PeerOracle] = []
    e = math.exp(eps)

    de = direct_encoding.DEClient(epsilon=eps, d=d)
    out.append(_oracle(lib, "GRR", f"DEClient(epsilon={eps}, d={d}).privatise(x + 1)", "item", d, eps, "GRR",
                       de.privatise, int, range(d), one_based, _grr_channel(d, eps)))
    for name, oue in (("SUE", False), ("OUE", True)):
        ue = unary_encoding.UEClient(epsilon=eps, d=d, use_oue=oue)
        p, q = (0.5, 1 / (e + 1)) if oue else (math.sqrt(e) / (math.sqrt(e) + 1), 1 / (math.sqrt(e) + 1))
        out.append(_oracle(lib, name, f"UEClient(epsilon={eps}, d={d}, use_oue={oue}).privatise(x + 1)",
                           "bit vector", d, eps, "RAPPOR" if name == "SUE" else "OUE", ue.privatise, _bits,
                           range(2**d), one_based, _ue_channel(d, p, q)))
    for name, olh in (("BLH", False), ("OLH", True)):
        lh = local_hashing.LHClient(epsilon=eps, d=d, use_olh=olh)
        g = int(lh.g)

        def lh_support(rep: Any, g: int = g) -> int:
            y, s = rep  # pure-ldp hashes str(index), index = item - 1
            return int(sum(1 << v for v in range(d) if xxhash.xxh32(str(v), seed=s).intdigest() % g == y))

        out.append(_oracle(lib, name, f"LHClient(epsilon={eps}, d={d}, use_olh={olh}).privatise(x + 1)",
                           "support set of (value, seed) (post-processing)", d, eps, "OLH" if olh else None,
                           lh.privatise, lh_support, range(2**d), one_based, _support_channel(d, eps, g)))
    he = histogram_encoding.HEClient(epsilon=eps, d=d)
    out.append(_oracle(lib, "HE", f"HEClient(epsilon={eps}, d={d}).privatise(x + 1)",
                       "three levels per coordinate (post-processing)", d, eps, None, he.privatise, _he_levels,
                       range(3**d), one_based, _he_channel(d, eps)))
    hm = hadamard_mechanism.HadamardMechClient(epsilon=eps, d=d, t=1, use_optimal_t=True)
    out.append(_oracle(lib, "HM", f"HadamardMechClient(epsilon={eps}, d={d}, t=1, use_optimal_t=True)"
                       ".privatise(x + 1)", "support set (post-processing)", d, eps, None, hm.privatise,
                       lambda r: _hm_support(d, r), range(2**d), one_based, _hm_channel(d, eps, int(hm.t))))
    with _GlobalSeed(seed):  # the servers draw their hash functions from the global generators
        hr_server = hadamard_response.HadamardResponseServer(eps, d)
        hr = hadamard_response.HadamardResponseClient(eps, d, hr_server.get_hash_funcs())
        f = rappor.RAPPORClient(0.5, 8, None).convert_eps_to_f(eps)
        rp_server = rappor.RAPPORServer(f=f, m=8, k=1, d=d, num_of_cohorts=2)
        rp = rappor.RAPPORClient(f=f, m=8, hash_funcs=rp_server.get_hash_funcs(), num_of_cohorts=2)
    # CMSServer fails to construct under numpy 2 (np.zeros(None)); its hash functions are
    # generate_hash_funcs(k, m), deterministic, which the clients take directly
    cms = apple_cms.CMSClient(eps, generate_hash_funcs(2, 8), 8)
    hcms = apple_cms.CMSClient(eps, generate_hash_funcs(2, 8), 8, is_hadamard=True)
    out.append(_oracle(lib, "HR", f"HadamardResponseClient({eps}, {d}, HadamardResponseServer({eps}, {d})"
                       ".get_hash_funcs()).privatise(x + 1)", "item", d, eps, None, hr.privatise, int, None,
                       one_based, None))
    out.append(_oracle(lib, "RAPPOR", f"RAPPORClient(f={f}, m=8, hash_funcs=RAPPORServer(f={f}, m=8, k=1, d={d}, "
                       "num_of_cohorts=2).get_hash_funcs(), num_of_cohorts=2).privatise(x + 1)",
                       "(Bloom filter bits, cohort)", d, float(rp_server.epsilon), None, rp.privatise,
                       lambda r: (_bits(r[0]), int(r[1])), None, one_based, None))
    out.append(_oracle(lib, "CMS", f"CMSClient({eps}, generate_hash_funcs(2, 8), 8).privatise(x + 1)",
                       "(sketch row bits, hash index)", d, eps, None, cms.privatise,
                       lambda r: (_bits(r[0]), int(r[1])), None, one_based, None))
    out.append(_oracle(lib, "HCMS", f"CMSClient({eps}, generate_hash_funcs(2, 8), 8, is_hadamard=True)"
                       ".privatise(x + 1)", "(sign, hash index, coefficient index)", d, eps, None,
                       hcms.privatise, lambda r: tuple(int(v) for v in r), None, one_based, None))
    return out


def _multi_freq_ldpy(d: int, eps: float) -> list[PeerOracle]:
    _import("multi-freq-ldpy")
    import xxhash  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from multi_freq_ldpy.pure_frequency_oracles import ADP, GRR, HE, LH, SS, UE  # type: ignore[import-untyped,import-not-found,unused-ignore]

    lib, items = "multi-freq-ldpy", list(range(d))
    out: list[PeerOracle] = []
    e = math.exp(eps)
    out.append(_oracle(lib, "GRR", f"GRR_Client(x, {d}, {eps})", "item", d, eps, "GRR",
                       lambda x: GRR.GRR_Client(x, d, eps), int, range(d), items, _grr_channel(d, eps)))
    for name, opt in (("SUE", False), ("OUE", True)):
        p, q = (0.5, 1 / (e + 1)) if opt else (math.sqrt(e) / (math.sqrt(e) + 1), 1 / (math.sqrt(e) + 1))
        out.append(_oracle(lib, name, f"UE_Client(x, {d}, {eps}, optimal={opt})", "bit vector", d, eps,
                           "OUE" if opt else "RAPPOR", lambda x, opt=opt: UE.UE_Client(x, d, eps, optimal=opt),  # type: ignore[misc]
                           _bits, range(2**d), items, _ue_channel(d, p, q)))
    for name, opt in (("BLH", False), ("OLH", True)):
        g = int(round(e)) + 1 if opt else 2

        def lh_support(rep: Any, g: int = g) -> int:
            y, s = rep  # multi-freq-ldpy hashes str(item)
            return int(sum(1 << v for v in range(d) if xxhash.xxh32(str(v), seed=int(s)).intdigest() % g == y))

        out.append(_oracle(lib, name, f"LH_Client(x, {d}, {eps}, optimal={opt})",
                           "support set of (value, seed) (post-processing)", d, eps, "OLH" if opt else None,
                           lambda x, opt=opt: LH.LH_Client(x, d, eps, optimal=opt), lh_support, range(2**d), items,  # type: ignore[misc]
                           _support_channel(d, eps, g)))
    out.append(_oracle(lib, "HE", f"HE_Client(x, {d}, {eps})", "three levels per coordinate (post-processing)", d,
                       eps, None, lambda x: HE.HE_Client(x, d, eps), _he_levels, range(3**d), items,
                       _he_channel(d, eps)))
    keys, ch = _ss_channel(d, eps, ordered=True)
    out.append(_oracle(lib, "SS", f"SS_Client(x, {d}, {eps})", "the array as returned (ordered)", d, eps, None,
                       lambda x: SS.SS_Client(x, d, eps), lambda r: tuple(int(v) for v in r), keys, items, ch))
    keys, ch = _ss_channel(d, eps, ordered=False)
    out.append(_oracle(lib, "SS (set)", f"SS_Client(x, {d}, {eps})", "the set of items (post-processing)", d, eps,
                       None, lambda x: SS.SS_Client(x, d, eps), _bits_of_items, keys, items, ch))
    grr_like = np.ndim(ADP.ADP_Client(0, d, eps, optimal=True)) == 0
    out.append(_oracle(lib, "ADP", f"ADP_Client(x, {d}, {eps}, optimal=True)",
                       "item (GRR chosen)" if grr_like else "bit vector (OUE chosen)", d, eps,
                       "GRR" if grr_like else "OUE", lambda x: ADP.ADP_Client(x, d, eps, optimal=True),
                       int if grr_like else _bits, range(d) if grr_like else range(2**d), items,
                       _grr_channel(d, eps) if grr_like else _ue_channel(d, 0.5, 1 / (e + 1))))
    return out


def _bits_of_items(report: Any) -> int:
    return int(sum(1 << int(v) for v in np.asarray(report).ravel().tolist()))


def peer_samplers(d: int, eps: float, *, libraries: Optional[Sequence[str]] = None,
                  seed: int = 0) -> dict[str, PeerOracle]:
    """Every frequency oracle of the peer libraries over ``d`` items at budget ``eps``, adapted for auditing.

    Parameters
    ----------
    d
        Domain size (keep it small, e.g. 4: the output alphabets grow like ``2**d`` or ``3**d``).
    eps
        The budget passed to each peer (RAPPOR takes ``f = convert_eps_to_f(eps)``, its own
        conversion, and claims the epsilon its server computes from ``f``).
    libraries
        Subset of :data:`PEER_LIBRARIES` (default both); a missing one raises :class:`ImportError`.
    seed
        Seeds the peers' global generators while the servers draw their hash functions (RAPPOR,
        Hadamard response), so the oracles are the same on every call.

    Returns
    -------
    dict
        ``"library/mechanism" -> PeerOracle``.

    Examples
    --------
    >>> from ldpkit.audit import audit_ldp
    >>> from ldpkit.audit.peers import peer_samplers
    >>> oracles = peer_samplers(4, 1.0)                                   # doctest: +SKIP
    >>> o = oracles["multi-freq-ldpy/GRR"]                                # doctest: +SKIP
    >>> o.call, o.version                                                 # doctest: +SKIP
    ('GRR_Client(x, 4, 1.0)', '0.2.5')
    >>> b = audit_ldp(o.sampler, 20_000, channel=o.channel, rng=0)        # doctest: +SKIP
    >>> b.value <= o.eps                                                  # doctest: +SKIP
    True
    """
    d, eps = int(d), float(eps)
    libs = tuple(PEER_LIBRARIES) if libraries is None else tuple(libraries)
    unknown = [lib for lib in libs if lib not in PEER_LIBRARIES]
    if unknown:
        raise ValueError(f"unknown peer libraries {unknown}; expected some of {list(PEER_LIBRARIES)}")
    found: list[PeerOracle] = []
    if "pure-ldp" in libs:
        found += _pure_ldp(d, eps, seed)
    if "multi-freq-ldpy" in libs:
        found += _multi_freq_ldpy(d, eps)
    return {o.key: o for o in found}


# ============================================================================ stored results
def stored_peer_audits() -> tuple[Any, dict[str, Any]]:
    """The stored peer audits (``python benchmarks/audit.py --write-reference``): a table and its provenance.

    Works without the peers installed.  Columns: :data:`REFERENCE_COLUMNS` (``events`` is
    ``"white"`` or ``"black"``, ``samples`` the samples per input, ``bound`` the lower bound on
    epsilon at ``confidence``, ``violated`` whether it exceeds the claimed ``eps``).  The
    provenance holds the date, the machine, the Python and numpy versions and the command.

    Examples
    --------
    >>> from ldpkit.audit.peers import REFERENCE_COLUMNS, stored_peer_audits
    >>> table, provenance = stored_peer_audits()
    >>> set(REFERENCE_COLUMNS) <= set(table.columns), "command" in provenance
    (True, True)
    """
    import pandas as pd

    raw = json.loads((Path(__file__).parent / "data" / "peers-reference.json").read_text())
    table = pd.DataFrame(raw["rows"], columns=list(raw["columns"]))
    return table, dict(raw["provenance"])
