"""A property-based fuzzer of report files, aggregator states and the command line (hypothesis; issue 36).

Each example starts from a valid file (binary or CSV, of GRR, OUE, OLH, FHR, IDUE, a channel
oracle or OUE-PS; or an aggregator state) and damages it: bit flips, cuts, inserted or deleted
bytes, a header or block-record field replaced by a random JSON value of any type (its checksums
recomputed, as a careful forger would), or random bytes after a valid start.  The property:

* every outcome is a correct load (the reports read are as many as the file says, and they
  aggregate and estimate) or a ``ValueError`` whose one-line message names the file;
* the memory allocated while opening, reading, aggregating and estimating stays below
  :func:`allowed_peak` (``tracemalloc``), a bound that depends on the file's size and the
  documented limits only: ``LDPKIT_MAX_DOMAIN`` and ``LDPKIT_MAX_HEADER_BYTES`` are set small here
  (:data:`FUZZ_DOMAIN`, :data:`FUZZ_HEADER`), so a file that could request more would show;
* ``ldpkit estimate FILE`` exits with 0 or 2 and, when it refuses, writes one line.

In the suite each property runs :data:`EXAMPLES` examples (a few seconds); the benchmark
``benchmarks/fuzz_files.py`` runs the same properties with many more (``LDPKIT_FUZZ_EXAMPLES``).
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import struct
import tempfile
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ldpkit.reportio as rio
from ldpkit import FHR, GRR, IDUE, OLH, OUE, ChannelOracle
from ldpkit.aggregation import Aggregator
from ldpkit.cli import main
from ldpkit.domain import Domain
from ldpkit.idue import oue_ps
from ldpkit.reportio import open_reports, save_reports

#: examples per property in the suite (the benchmark sets ``LDPKIT_FUZZ_EXAMPLES`` higher)
EXAMPLES = int(os.environ.get("LDPKIT_FUZZ_EXAMPLES", "40"))
#: the limits the fuzzer runs under: any file that requests more is refused
FUZZ_DOMAIN = 4096
FUZZ_HEADER = 1 << 16
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 100,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def allowed_peak(file_size: int) -> int:
    """The most memory reading a file of ``file_size`` bytes may allocate under the fuzzer's limits.

    A constant for the interpreter's own work, 2 KB per item of the largest allowed domain (the
    mechanism, the domain's labels, the aggregate and the estimate's vectors), and 64 bytes per
    byte of the file (its reports decoded to 8-byte integers, twice, and the text of a CSV).
    """
    return 4 * 2**20 + 2048 * FUZZ_DOMAIN + 64 * file_size


@contextlib.contextmanager
def _fuzz_limits() -> Any:
    old = {k: os.environ.get(k) for k in ("LDPKIT_MAX_DOMAIN", "LDPKIT_MAX_HEADER_BYTES")}
    os.environ["LDPKIT_MAX_DOMAIN"] = str(FUZZ_DOMAIN)
    os.environ["LDPKIT_MAX_HEADER_BYTES"] = str(FUZZ_HEADER)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# ============================================================================ seeds: valid files
@functools.lru_cache(maxsize=1)
def seeds() -> dict[str, bytes]:
    """Valid files, by name: every report type, both encodings, several blocks, a domain and a data line."""
    out: dict[str, bytes] = {}
    mechs = {"grr": GRR(6, 1.0), "oue": OUE(13, 1.0), "olh": OLH(9, 1.0), "fhr": FHR(5, 1.0),
             "idue": IDUE([0.5, 0.5, 1.0, 2.0], model="opt1"),
             "channel": ChannelOracle([[0.6, 0.3, 0.1], [0.2, 0.6, 0.2], [0.1, 0.3, 0.6]], epsilon=2.0),
             "ps": oue_ps(4, 1.0, 2)}
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(rio, "BLOCK_REPORTS", 9)
        for name, mech in mechs.items():
            rng = np.random.default_rng(len(name))
            if hasattr(mech, "ell"):
                inputs: Any = [sorted(rng.choice(mech.d, size=int(k), replace=False).tolist())
                               for k in rng.integers(0, 3, size=20)]
            else:
                inputs = rng.integers(0, mech.d, size=20)
            reports = mech.perturb(inputs, rng=1)
            domain = Domain([f"item {i}" for i in range(mech.d)])
            for suffix in ("ldpr", "csv"):
                path = os.path.join(tmp, f"{name}.{suffix}")
                save_reports(path, reports, mech, domain=domain, data=f"{name} seed")
                out[f"{name}.{suffix}"] = Path(path).read_bytes()
            state = os.path.join(tmp, f"{name}.json")
            Aggregator(mech, domain=domain).add(reports).save(state)
            out[f"{name}.json"] = Path(state).read_bytes()
    return out


REPORT_SEEDS = sorted(k for k in seeds() if not k.endswith(".json"))
STATE_SEEDS = sorted(k for k in seeds() if k.endswith(".json"))

#: JSON values of every type: what a forged field may hold
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12) | st.sampled_from(["<u2", ">u2", "|u1", "<f8", "opt0", "inf", "ldpkit.grr.GRR",
                                             "GRR", "item", "ldpkit-reports", "a\nb", "\u200b"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["$array", "$float", "$tuple", "$provenance", "$mechanism", "$x", "d", "ell", "g", "dtype",
                         "shape", "data", "labels", "n", "class", "arguments", "mechanism", "params"])
        | st.text(max_size=6), children, max_size=4),
    max_leaves=12)


def _walk(value: Any, data: st.DataObject) -> list[Any]:
    """A random path into a JSON value (a list of keys and indices; empty: the value itself)."""
    path: list[Any] = []
    while isinstance(value, (dict, list)) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value) if isinstance(value, dict) else range(len(value))))
        path.append(key)
        value = value[key]
    return path


def _replace(doc: Any, path: list[Any], new: Any, delete: bool) -> Any:
    if not path:
        return new
    target = doc
    for key in path[:-1]:
        target = target[key]
    if delete and isinstance(target, dict):
        del target[path[-1]]
    else:
        target[path[-1]] = new
    return doc


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()  # NaN and infinities as the literals JSON forbids


def _with_header(raw: bytes, csv: bool, header: bytes) -> bytes:
    if csv:
        return b"# ldpkit-reports " + header + b"\n" + raw.split(b"\n", 1)[1]
    version, hlen = struct.unpack("<II", raw[8:16])
    crc = zlib.crc32(header)
    n, blocks, _ = struct.unpack("<QQI", raw[-20:])
    return (raw[:8] + struct.pack("<II", version, len(header)) + header + struct.pack("<I", crc)
            + raw[20 + hlen:-24] + b"END1" + struct.pack("<QQI", n, blocks, crc))


def _header_of(raw: bytes, csv: bool) -> Any:
    if csv:
        return json.loads(raw.split(b"\n", 1)[0][len(b"# ldpkit-reports "):])
    hlen = struct.unpack("<I", raw[12:16])[0]
    return json.loads(raw[16:16 + hlen])


def _forge_record(raw: bytes, data: st.DataObject) -> bytes:
    """A block record of a binary file with one field replaced, its block checksum recomputed (format 2)."""
    hlen = struct.unpack("<I", raw[12:16])[0]
    pos = 20 + hlen
    mlen = struct.unpack("<I", raw[pos + 4:pos + 8])[0]
    record = json.loads(raw[pos + 8:pos + 8 + mlen])
    new = _dumps(_replace(record, _walk(record, data), data.draw(JSON_VALUES), data.draw(st.booleans())))
    head = raw[pos:pos + 4] + struct.pack("<I", len(new))
    rest = raw[pos + 12 + mlen:-24]
    crc = zlib.crc32(rest[:max(0, len(rest))], zlib.crc32(new, zlib.crc32(head)))
    return raw[:pos] + head + new + struct.pack("<I", crc) + rest + raw[-24:]


def _damaged(data: st.DataObject, raw: bytes, csv: bool) -> bytes:
    """``raw`` with one or two kinds of damage drawn by hypothesis."""
    kinds = data.draw(st.lists(st.sampled_from(["flip", "cut", "insert", "delete", "header", "record", "tail",
                                                "splice"]), min_size=1, max_size=2))
    out = bytearray(raw)
    for kind in kinds:
        size = len(out)
        if kind == "flip" and size:
            for _ in range(data.draw(st.integers(1, 4))):
                out[data.draw(st.integers(0, size - 1))] ^= 1 << data.draw(st.integers(0, 7))
        elif kind == "cut":
            out = out[:data.draw(st.integers(0, size))]
        elif kind == "insert":
            at = data.draw(st.integers(0, size))
            out[at:at] = data.draw(st.binary(min_size=1, max_size=24))
        elif kind == "delete" and size:
            at = data.draw(st.integers(0, size - 1))
            del out[at:at + data.draw(st.integers(1, 24))]
        elif kind == "header":
            try:
                header = _header_of(bytes(out), csv)
            except (ValueError, struct.error, IndexError):
                continue
            path = _walk(header, data)
            forged = _replace(header, path, data.draw(JSON_VALUES), data.draw(st.booleans()))
            out = bytearray(_with_header(bytes(out), csv, _dumps(forged)))
        elif kind == "record" and not csv:
            with contextlib.suppress(ValueError, struct.error, IndexError, KeyError, TypeError):
                out = bytearray(_forge_record(bytes(out), data))
        elif kind == "tail":
            out += data.draw(st.binary(min_size=1, max_size=64))
        elif kind == "splice":  # the start of one seed with the end of another (files joined or mixed up)
            other = seeds()[data.draw(st.sampled_from(REPORT_SEEDS))]
            out = out[:data.draw(st.integers(0, size))] + other[data.draw(st.integers(0, len(other))):]
    return bytes(out)


# ============================================================================ the properties
def _loaded_or_refused(path: str, what: str, load: Callable[[], None]) -> tuple[str, int]:
    """Run ``load()`` on ``path`` under tracemalloc: ``"loaded"`` or ``"refused"``, and the peak of memory
    allocated; anything else (another exception, a message not naming the file, a peak larger than
    :func:`allowed_peak` allows for a ``what`` of that size) fails."""
    size = os.path.getsize(path)
    tracemalloc.start()
    try:
        try:
            load()
            outcome = "loaded"
        except ValueError as exc:
            text = str(exc)
            assert path in text and "\n" not in text, text
            outcome = "refused"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= allowed_peak(size), f"{peak:,} bytes allocated for a {what} of {size:,} bytes"
    return outcome, peak


def _check_report_file(path: str) -> tuple[str, int]:
    """Open, read, aggregate and estimate ``path``: ``"loaded"`` or ``"refused"``, and the peak of memory
    allocated; anything else (another exception, a message not naming the file, a larger peak) fails."""
    def load() -> None:
        f = open_reports(path)
        n = sum(f.mechanism.n_reports(batch) for batch in f.batches())
        assert n == f.n, (path, n, f.n)
        agg = Aggregator(f.mechanism, domain=f.domain).add_file(path)
        assert agg.n == f.n
        if agg.n:
            est = agg.estimate()
            assert est.counts.shape == (f.mechanism.d,)
    return _loaded_or_refused(path, "file", load)


def _check_state(path: str) -> tuple[str, int]:
    def load() -> None:
        agg = Aggregator.load(path)
        if agg.n:
            agg.estimate()
    return _loaded_or_refused(path, "state", load)


def _check_cli(path: str) -> int:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["estimate", path])
    lines = err.getvalue().strip().splitlines()
    assert status in (0, 2), (status, err.getvalue())
    if status == 2:
        assert len(lines) == 1 and "Traceback" not in lines[0] and lines[0].startswith("ldpkit estimate: error:"), lines
    return status


@contextlib.contextmanager
def damaged_report_file(data: st.DataObject) -> Iterator[tuple[str, str]]:
    """A damaged copy of a seed report file drawn from ``data``, written under the fuzz limits: the seed's
    name and the copy's path (``benchmarks/fuzz_files.py`` draws its sample through this too)."""
    name = data.draw(st.sampled_from(REPORT_SEEDS))
    raw = _damaged(data, seeds()[name], name.endswith(".csv"))
    with tempfile.TemporaryDirectory() as tmp, _fuzz_limits():
        path = os.path.join(tmp, "fuzzed." + name.rsplit(".", 1)[1])
        Path(path).write_bytes(raw)
        yield name, path


@SETTINGS
@given(data=st.data())
def test_damaged_report_files_load_correctly_or_are_refused(data: st.DataObject) -> None:
    with damaged_report_file(data) as (_, path):
        _check_report_file(path)


@SETTINGS
@given(data=st.data())
def test_damaged_states_load_correctly_or_are_refused(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(STATE_SEEDS))
    raw = seeds()[name]
    if data.draw(st.booleans()):
        state = json.loads(raw)
        raw = _dumps(_replace(state, _walk(state, data), data.draw(JSON_VALUES), data.draw(st.booleans())))
    else:
        raw = _damaged(data, raw, True)
    with tempfile.TemporaryDirectory() as tmp, _fuzz_limits():
        path = os.path.join(tmp, "state.json")
        Path(path).write_bytes(raw)
        _check_state(path)


@SETTINGS
@given(data=st.data())
def test_the_command_line_answers_in_one_line(data: st.DataObject) -> None:
    with damaged_report_file(data) as (_, path):
        _check_cli(path)


@SETTINGS
@given(raw=st.binary(max_size=600), magic=st.sampled_from([b"", b"LDPKREPS", b"# ldpkit-reports "]),
       csv=st.booleans())
def test_random_bytes_are_refused(raw: bytes, magic: bytes, csv: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp, _fuzz_limits():
        path = os.path.join(tmp, "random.csv" if csv else "random.ldpr")
        Path(path).write_bytes(magic + raw)
        assert _check_report_file(path)[0] == "refused" or magic
        state = os.path.join(tmp, "state.json")
        Path(state).write_bytes(magic + raw)
        _check_state(state)


def test_every_seed_loads() -> None:
    """The undamaged files load: the property's "correct load" side is reached, under the same limits."""
    with tempfile.TemporaryDirectory() as tmp, _fuzz_limits():
        for name, raw in seeds().items():
            path = os.path.join(tmp, name)
            Path(path).write_bytes(raw)
            assert (_check_state(path) if name.endswith(".json") else _check_report_file(path))[0] == "loaded", name
