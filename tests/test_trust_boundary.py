"""Report files, aggregator states and the command line as a trust boundary (issue 36): one test group per pattern.

1. **Fields are validated, not trusted once the checksum passes**: the header's shape, ``meta``,
   JSON depth, infinities, oversized integers, argument tags, dtypes and the class name's type,
   in binary and CSV files and in states, are refused with a ``ReportFileError`` (a ``ValueError``)
   naming the file and the field; the command line prints one line.  A 350-byte file naming GRR
   with ``d = 10**9`` is refused with almost nothing allocated (``tracemalloc``).
2. **Sizes are checked against what is affordable**: ``LDPKIT_MAX_DOMAIN`` bounds what a file or a
   flag may request; audits are bounded; an IDUE file never runs a solver when opened.
3. **The block record is under the checksum** (format 2) and only the storage types the writer
   uses are accepted (format 1 files, still read, too).
4. **Paths**: no output is one of the command's inputs (links included); writers use temporary
   files of their own and delete nothing else.
5. **The state file**: its advisory lock and the comparison on save; two real concurrent
   ``ldpkit estimate --state`` processes both count, or one fails in one line.
6. **Duplicates by content**: the same reports re-encoded, with CRLF line ends or another data
   line are refused; ``cat a.csv b.csv`` is refused; merging an aggregator with itself is refused.
7. **Older helpers**: Clopper-Pearson inputs, sampler inputs, contracts over another domain or one
   item, labels (NFC, control and zero-width characters, whitespace, missing values), ASCII digits
   in report CSVs, one-line data descriptions in the estimate CSV, ``rng`` checked by the loaders.
"""

from __future__ import annotations

import base64
import json
import os
import re
import struct
import subprocess
import sys
import threading
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ldpkit.reportio as rio
from ldpkit import GRR, IDUE, OUE, ArgumentTypeError, contracts
from ldpkit._validation import MAX_DOMAIN, max_domain
from ldpkit.aggregation import Aggregator, Estimate, StateConflictError, state_lock
from ldpkit.audit import audit_ldp, cp_lower, cp_upper, from_channel, from_function, from_mechanism, sample_histograms
from ldpkit.cli import main
from ldpkit.domain import Domain
from ldpkit.reportio import FORMAT_VERSION, ReportFileError, ReportWriter, load_reports, open_reports, save_reports

from conftest import end_process_tree, finish_process, run_process, start_process

#: what a process may be given to start and finish a small command; only a guard against a hang, never a criterion
HANG_GUARD = 300


# ============================================================================ helpers
def _reports(mech: Any, n: int = 40, seed: int = 0) -> Any:
    return mech.perturb(np.random.default_rng(seed).integers(0, mech.d, size=n), rng=seed + 1)


def _rewrite_header(raw: bytes, edit: Callable[[dict[str, Any]], Any]) -> bytes:
    """A binary file with its header JSON edited and every CRC of the header recomputed (a consistent forgery)."""
    version, hlen = struct.unpack("<II", raw[8:16])
    header = json.loads(raw[16:16 + hlen])
    edited = edit(header)
    new = (edited if isinstance(edited, bytes) else json.dumps(header, separators=(",", ":")).encode())
    crc = zlib.crc32(new)
    n, blocks, _ = struct.unpack("<QQI", raw[-20:])
    return (raw[:8] + struct.pack("<II", version, len(new)) + new + struct.pack("<I", crc)
            + raw[20 + hlen:-24] + b"END1" + struct.pack("<QQI", n, blocks, crc))


def _blocks(raw: bytes, width: int = 1) -> list[dict[str, Any]]:
    """Each block's byte ranges: its record, its CRC and its payload (parsed independently of the reader)."""
    hlen = struct.unpack("<I", raw[12:16])[0]
    pos, out = 20 + hlen, []
    while raw[pos:pos + 4] in (b"BLK1", b"BLK2"):
        mlen = struct.unpack("<I", raw[pos + 4:pos + 8])[0]
        record = json.loads(raw[pos + 8:pos + 8 + mlen])
        size = sum(record["n"] * width * np.dtype(t).itemsize for t in record["dtypes"])
        out.append({"start": pos, "record": (pos + 8, pos + 8 + mlen), "crc": pos + 8 + mlen,
                    "payload": (pos + 12 + mlen, pos + 12 + mlen + size), "n": record["n"]})
        pos += 12 + mlen + size
    return out


def _as_version1(raw: bytes, width: int = 1) -> bytes:
    """The same file in format 1: version 1, ``BLK1`` blocks whose CRC covers the column bytes only."""
    version, hlen = struct.unpack("<II", raw[8:16])
    assert version == 2
    header = json.loads(raw[16:16 + hlen])
    header["version"] = 1
    new = json.dumps(header, separators=(",", ":")).encode()
    crc = zlib.crc32(new)
    out = bytearray(raw[:8] + struct.pack("<II", 1, len(new)) + new + struct.pack("<I", crc))
    for b in _blocks(raw, width):
        a, z = b["payload"]
        out += (b"BLK1" + raw[b["start"] + 4:b["record"][1]] + struct.pack("<I", zlib.crc32(raw[a:z])) + raw[a:z])
    n, blocks, _ = struct.unpack("<QQI", raw[-20:])
    return bytes(out + b"END1" + struct.pack("<QQI", n, blocks, crc))


def _refused(path: Path | str, *patterns: str, mechanism: Any = None) -> str:
    """Open and read ``path``: a ReportFileError naming it and matching every pattern; returns the message."""
    with pytest.raises(ReportFileError) as err:
        open_reports(path, mechanism).read()
    msg = str(err.value)
    assert str(path) in msg and "\n" not in msg, msg
    for pattern in patterns:
        assert re.search(pattern, msg), f"{pattern!r} not in {msg!r}"
    return msg


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


@pytest.fixture()
def grr_file(tmp_path: Path) -> tuple[Path, bytes]:
    grr = GRR(5, 1.0)
    path = tmp_path / "g.ldpr"
    save_reports(path, _reports(grr), grr, domain=Domain(["a", "b", "c", "d", "e"]), data="shop A")
    return path, path.read_bytes()


def _peak(fn: Callable[[], Any]) -> tuple[Any, int]:
    """``fn()``'s result (or the exception it raised) and the peak of memory it allocated, in bytes."""
    tracemalloc.start()
    try:
        try:
            result: Any = fn()
        except Exception as exc:  # returned for the caller to check
            result = exc
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ============================================================================ 1. fields validated
def _set_argument(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda h: h["mechanism"]["arguments"].__setitem__(key, value)


HEADER_FAULTS: list[tuple[str, Callable[[dict[str, Any]], Any], str]] = [
    ("header not an object", lambda h: b"[1, 2]", r"header: must be an object"),
    ("meta a list", lambda h: h.__setitem__("meta", [1]), r"header\.meta"),
    ("meta a negative number", lambda h: h.__setitem__("meta", {"d": -1}), r"header\.meta"),
    ("meta missing", lambda h: h.pop("meta"), r"header: has no 'meta'"),
    ("unknown field", lambda h: h.__setitem__("signed", True), r"header: unknown field 'signed'"),
    ("format", lambda h: h.__setitem__("format", "other"), r"header\.format"),
    ("version a string", lambda h: h.__setitem__("version", "2"), r"header\.version"),
    ("kind a number", lambda h: h.__setitem__("kind", 3), r"header\.kind"),
    ("columns", lambda h: h.__setitem__("columns", [["report", ">i8"]]), r"header\.columns"),
    ("data two lines", lambda h: h.__setitem__("data", "a\n# data: forged"), r"header\.data"),
    ("data a number", lambda h: h.__setitem__("data", 5), r"header\.data"),
    ("deep JSON", lambda h: h.__setitem__("data", json.loads("[" * 40 + "]" * 40)), r"nested more than 32 levels"),
    ("very deep JSON", lambda h: ("[" * 100_000 + "]" * 100_000).encode(), r"nested"),
    ("Infinity", lambda h: json.dumps(h).replace('"epsilon": 1.0', '"epsilon": Infinity').encode(),
     r"Infinity is not a JSON number"),
    ("NaN", lambda h: json.dumps(h).replace('"epsilon": 1.0', '"epsilon": NaN').encode(), r"NaN"),
    ("1e999", lambda h: json.dumps(h).replace('"epsilon": 1.0', '"epsilon": 1e999').encode(),
     r"beyond double precision"),
    ("huge integer", lambda h: json.dumps(h).replace('"d": 5', '"d": ' + "9" * 5000).encode(), r"beyond 64 bits"),
    ("duplicate key", lambda h: json.dumps(h).replace('"d": 5', '"d": 5, "d": 6').encode(), r"appears twice"),
    ("not UTF-8", lambda h: json.dumps(h).encode().replace(b'"shop A"', b'"shop \xff"'), r"not UTF-8"),
    ("$array without data", _set_argument("epsilon", {"$array": {"dtype": "<f8", "shape": [1]}}), r"has no 'data'"),
    ("$array with a bad dtype", _set_argument("epsilon", {"$array": {"dtype": "[('a', 'f8')]", "shape": [1],
                                                                     "data": "AAAAAAAA8D8="}}), r"\$array\.dtype"),
    ("$array with a flipped dtype", _set_argument("epsilon", {"$array": {"dtype": "<f8)", "shape": [], "data": ""}}),
     r"\$array\.dtype"),
    ("$array big-endian", _set_argument("epsilon", {"$array": {"dtype": ">f8", "shape": [], "data": "P/AAAAAAAAA="}}),
     r"\$array\.dtype"),
    ("$array short data", _set_argument("epsilon", {"$array": {"dtype": "<f8", "shape": [2], "data": "AAAAAAAA8D8="}}),
     r"\$array\.data"),
    ("$array huge shape", _set_argument("epsilon", {"$array": {"dtype": "<f8", "shape": [10**6, 10**6], "data": ""}}),
     r"LDPKIT_MAX_DOMAIN"),
    ("$array bad base64", _set_argument("epsilon", {"$array": {"dtype": "<f8", "shape": [], "data": "!!!!!!!!!!!!"}}),
     r"unreadable|base64|Non-base64"),
    ("$tuple with a number", _set_argument("epsilon", {"$tuple": 5}), r"\$tuple: must be a list"),
    ("$float with a list", _set_argument("epsilon", {"$float": [1]}), r"\$float: must be 'inf'"),
    ("$float with a number", _set_argument("epsilon", {"$float": "1.5"}), r"\$float"),
    ("unknown tag", _set_argument("epsilon", {"$eval": "1"}), r"unknown tag '\$eval'"),
    ("two tags", _set_argument("epsilon", {"$float": "inf", "$tuple": []}), r"a tagged value has one key"),
    ("$provenance malformed", lambda h: h.__setitem__("provenance", {"$provenance": {"mechanism": "GRR"}}),
     r"header\.provenance\.\$provenance: has no 'params'"),
    ("provenance not tagged", lambda h: h.__setitem__("provenance", {"mechanism": "GRR"}), r"header\.provenance"),
    ("class a list", lambda h: h["mechanism"].__setitem__("class", ["ldpkit.grr.GRR"]), r"header\.mechanism\.class"),
    ("class a number", lambda h: h["mechanism"].__setitem__("class", 7), r"header\.mechanism\.class"),
    ("family of another class", lambda h: h["mechanism"].__setitem__("family", "OUE"), r"header\.mechanism\.family"),
    ("arguments a list", lambda h: h["mechanism"].__setitem__("arguments", [5, 1.0]), r"header\.mechanism\.arguments"),
    ("arguments of another constructor", _set_argument("eps", 1.0), r"cannot rebuild ldpkit\.grr\.GRR"),
    ("d a string", _set_argument("d", "5"), r"cannot rebuild|header\.mechanism"),
    ("d = 10**9", _set_argument("d", 10**9), r"header\.mechanism\.arguments\.d asks for a domain of "
                                              r"1,000,000,000 items.*LDPKIT_MAX_DOMAIN"),
    ("labels a string", lambda h: h.__setitem__("domain", {"labels": "abcde"}), r"header\.domain"),
    ("labels with a line break", lambda h: h.__setitem__("domain", {"labels": ["a", "b", "c", "d", "e\nf"]}),
     r"header\.domain.*U\+000A"),
    ("labels not strings", lambda h: h.__setitem__("domain", {"labels": [None, 1, 2, 3, 4]}), r"header\.domain"),
]


@pytest.mark.parametrize("name, edit, pattern", HEADER_FAULTS, ids=[f[0] for f in HEADER_FAULTS])
def test_every_header_field_is_validated(name: str, edit: Any, pattern: str, grr_file: tuple[Path, bytes],
                                         tmp_path: Path) -> None:
    """A consistent forgery (checksums recomputed) of any header field: one ValueError naming the file and field."""
    _, raw = grr_file
    bad = tmp_path / "bad.ldpr"
    bad.write_bytes(_rewrite_header(raw, edit))
    _refused(bad, pattern)
    # the same header in the CSV form
    text = tmp_path / "bad.csv"
    save_reports(text, load_reports(grr_file[0]), GRR(5, 1.0), domain=Domain(["a", "b", "c", "d", "e"]),
                 data="shop A")
    first, rest = text.read_bytes().split(b"\n", 1)
    header = json.loads(first[len(b"# ldpkit-reports "):])
    edited = edit(header)
    new = edited if isinstance(edited, bytes) else json.dumps(header).encode()
    text.write_bytes(b"# ldpkit-reports " + new + b"\n" + rest)
    with pytest.raises(ReportFileError) as err:
        open_reports(text).read()
    assert str(text) in str(err.value) and "\n" not in str(err.value)


def test_a_350_byte_file_naming_a_billion_items_allocates_nothing(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The probe's file: GRR with d = 10**9.  Refused by open_reports, Aggregator.load and the CLI, below 1 MB."""
    header = {"format": "ldpkit-reports", "version": FORMAT_VERSION, "kind": "item", "meta": {},
              "columns": [["report", "<i8"]],
              "mechanism": {"class": "ldpkit.grr.GRR", "family": "GRR", "arguments": {"d": 10**9, "epsilon": 1.0}},
              "provenance": None, "domain": None, "data": None, "written_by": "x"}
    raw = json.dumps(header, separators=(",", ":")).encode()
    crc = zlib.crc32(raw)
    path = tmp_path / "billion.ldpr"
    path.write_bytes(b"LDPKREPS" + struct.pack("<II", FORMAT_VERSION, len(raw)) + raw + struct.pack("<I", crc)
                     + b"END1" + struct.pack("<QQI", 0, 0, crc))
    assert path.stat().st_size < 400
    err, peak = _peak(lambda: open_reports(path))
    assert isinstance(err, ReportFileError) and "LDPKIT_MAX_DOMAIN" in str(err) and peak < 2**20, (err, peak)
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"format": "ldpkit-aggregate", "version": 2, "mechanism": header["mechanism"],
                                 "provenance": {"$provenance": {"mechanism": "GRR", "params": [["d", 10**9],
                                                                                              ["epsilon", 1.0]]}},
                                 "n": 0, "batches": 0, "support": None}))
    err, peak = _peak(lambda: Aggregator.load(state))
    assert isinstance(err, ReportFileError) and "LDPKIT_MAX_DOMAIN" in str(err) and peak < 2**20, (err, peak)
    status, peak = _peak(lambda: main(["estimate", str(path)]))
    assert status == 2 and peak < 4 * 2**20, peak
    assert "LDPKIT_MAX_DOMAIN" in _one_line(capsys)


def test_state_fields_are_validated(tmp_path: Path) -> None:
    grr = GRR(5, 1.0)
    good = tmp_path / "good.json"
    Aggregator(grr).add(_reports(grr)).save(good)
    state = json.loads(good.read_text())
    bad = tmp_path / "bad.json"
    faults: list[tuple[Callable[[dict[str, Any]], Any], str]] = [
        (lambda s: s.__setitem__("n", -1), r"state\.n"),
        (lambda s: s.__setitem__("n", "40"), r"state\.n"),
        (lambda s: s.__setitem__("n", 2**60), r"state\.n"),
        (lambda s: s.__setitem__("batches", 1.5), r"state\.batches"),
        (lambda s: s.__setitem__("support", [1, 2]), r"state\.support"),
        (lambda s: s.__setitem__("support", "12345"), r"state\.support"),
        (lambda s: s.__setitem__("support", [1.5] * 5), r"state\.support"),
        (lambda s: s.__setitem__("data", ["two\nlines"]), r"state\.data\[0\]"),
        (lambda s: s.__setitem__("data", "one string"), r"state\.data"),
        (lambda s: s.__setitem__("files", ["not a fingerprint"]), r"state\.files"),
        (lambda s: s.__setitem__("extra", 1), r"state: unknown field 'extra'"),
        (lambda s: s.pop("support"), r"state: has no 'support'"),
        (lambda s: s.__setitem__("provenance", 5), r"state\.provenance"),
        (lambda s: s.__setitem__("domain", {"labels": ["a", "a", "b", "c", "d"]}), r"appears twice"),
        (lambda s: s.__setitem__("version", 0), r"version 0 does not exist"),
        (lambda s: s["mechanism"]["arguments"].__setitem__("d", 10**12), r"LDPKIT_MAX_DOMAIN"),
    ]
    for edit, pattern in faults:
        changed = json.loads(json.dumps(state))
        edit(changed)
        bad.write_text(json.dumps(changed))
        with pytest.raises(ReportFileError, match=pattern) as err:
            Aggregator.load(bad)
        assert str(bad) in str(err.value)
    bad.write_text(json.dumps(state).replace('"n": 40', '"n": 40, "n": 41'))
    with pytest.raises(ReportFileError, match="appears twice"):
        Aggregator.load(bad)
    bad.write_text("[" * 10_000 + "]" * 10_000)
    with pytest.raises(ReportFileError, match="not a readable aggregator state"):
        Aggregator.load(bad)


def test_the_cli_prints_one_line_for_every_file_error(grr_file: tuple[Path, bytes], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    _, raw = grr_file
    bad = tmp_path / "bad.ldpr"
    for name, edit, _ in HEADER_FAULTS:
        bad.write_bytes(_rewrite_header(raw, edit))
        for argv in (["estimate", str(bad)], ["account", "--reports", str(bad)]):
            assert main(argv) == 2, name
            line = _one_line(capsys)
            assert str(bad) in line, (name, line)


def test_an_unforeseen_error_is_one_line_too(grr_file: tuple[Path, bytes], monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """An error no check foresaw (here a KeyError planted in the estimate): one line, exit status 1; --debug raises."""
    path, _ = grr_file

    def broken(self: Any) -> Any:
        raise KeyError("planted")

    monkeypatch.setattr(Aggregator, "estimate", broken)
    assert main(["estimate", str(path)]) == 1
    line = _one_line(capsys)
    assert "unexpected KeyError: 'planted'" in line and "--debug" in line
    with pytest.raises(KeyError, match="planted"):
        main(["estimate", str(path), "--debug"])


# ============================================================================ 2. affordable sizes
def test_the_domain_limit_is_configurable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert max_domain() == MAX_DOMAIN == 2**20
    grr = GRR(20, 1.0)
    path = tmp_path / "g.ldpr"
    save_reports(path, _reports(grr), grr)
    monkeypatch.setenv("LDPKIT_MAX_DOMAIN", "10")
    _refused(path, r"asks for a domain of 20 items, above the limit of 10 items \(LDPKIT_MAX_DOMAIN")
    assert main(["account", "--mechanism", "GRR", "--d", "11", "--epsilon", "1"]) == 2
    assert "LDPKIT_MAX_DOMAIN" in _one_line(capsys)
    with pytest.raises(ValueError, match="LDPKIT_MAX_DOMAIN"):
        Domain.integers(11)
    monkeypatch.setenv("LDPKIT_MAX_DOMAIN", "20")
    assert open_reports(path).mechanism == grr
    monkeypatch.setenv("LDPKIT_MAX_DOMAIN", "lots")
    with pytest.raises(ValueError, match=r"LDPKIT_MAX_DOMAIN='lots' must be an integer >= 2"):
        max_domain()


def test_account_with_a_billion_items_is_refused_before_any_label(capsys: pytest.CaptureFixture[str]) -> None:
    status, peak = _peak(lambda: main(["account", "--mechanism", "GRR", "--d", "1000000000", "--epsilon", "1"]))
    assert status == 2 and peak < 4 * 2**20, peak
    assert "1,000,000,000 items" in _one_line(capsys)
    for bad in (10**9, 3.0, "3", 1, True):
        with pytest.raises(ValueError):
            Domain.integers(bad)  # type: ignore[arg-type]


def test_a_sampler_output_is_range_checked_before_it_is_counted() -> None:
    class Huge:
        n_inputs, n_outputs = 2, None

        def __call__(self, x: int, size: int, rng: Any) -> np.ndarray:
            return np.full(size, 10**12, dtype=np.int64)

    err, peak = _peak(lambda: sample_histograms(Huge(), [0, 1], 10, rng=0))
    assert isinstance(err, ValueError) and "output index 1000000000000" in str(err) and peak < 2**20, (err, peak)
    known = from_channel([[0.5, 0.5], [0.5, 0.5]])
    known.n_outputs = 2

    class Liar(Huge):
        n_outputs = 2

    with pytest.raises(ValueError, match="not below its n_outputs=2"):
        sample_histograms(Liar(), [0], 10, rng=0)


def test_audit_sizes_are_bounded_before_sampling(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    sampler = from_mechanism(GRR(3, 1.0))
    inner = sampler.mechanism.sample_outputs

    def counted(x: int, size: int, rng: Any) -> Any:
        calls.append(size)
        return inner(x, size, rng)

    monkeypatch.setattr(sampler.mechanism, "sample_outputs", counted, raising=False)
    with pytest.raises(ValueError, match=r"LDPKIT_MAX_AUDIT_SAMPLES"):
        audit_ldp(sampler, 10**12, rng=0)
    assert calls == []
    monkeypatch.setenv("LDPKIT_MAX_AUDIT_SAMPLES", "1000")
    with pytest.raises(ValueError, match=r"size=1,001 samples per input.*above the limit of 1,000"):
        sample_histograms(sampler, [0], 1001, rng=0)
    assert sample_histograms(sampler, [0], 1000, rng=0).sum() == 1000
    # a channel sampler draws histograms exactly, at a cost independent of the size: not limited
    assert sample_histograms(from_channel([[0.75, 0.25], [0.25, 0.75]]), [0, 1], 10**12, rng=0).sum() == 2 * 10**12


def test_from_function_does_not_build_its_inputs() -> None:
    with pytest.raises(ValueError, match="LDPKIT_MAX_DOMAIN"):
        from_function(lambda x, rng: x, 10**10)
    s, peak = _peak(lambda: from_function(lambda x, rng: x, 10**6))
    assert peak < 2**20 and len(s.inputs) == 10**6


@pytest.fixture()
def idue_file(tmp_path: Path) -> Path:
    mech = IDUE([0.5, 0.5, 1.0, 2.0], model="opt0")
    path = tmp_path / "idue.ldpr"
    save_reports(path, _reports(mech), mech)
    return path


def _recording_solvers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    import ldpkit.idue.solvers as solvers

    calls: list[str] = []
    for name in list(solvers._SOLVERS):
        def refuse(*args: Any, _name: str = name, **kwargs: Any) -> Any:
            calls.append(_name)
            raise AssertionError(f"the {_name} solver ran while a file was opened")

        monkeypatch.setitem(solvers._SOLVERS, name, refuse)
    return calls


def test_opening_an_idue_file_never_solves(idue_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _recording_solvers(monkeypatch)
    f = open_reports(idue_file)
    assert isinstance(f.mechanism, IDUE) and len(f.read()) == 40
    # a 1 KB file naming opt0 and 120 distinct budgets instead of a solution: refused, nothing solved
    budgets = np.linspace(0.5, 5.0, 120)
    forged = _rewrite_header(idue_file.read_bytes(), lambda h: h.update(
        provenance=None, mechanism={"class": "ldpkit.idue.mechanism.IDUE", "family": "IDUE-opt0", "arguments": {
            "budgets": {"$array": {"dtype": "<f8", "shape": [120],
                                   "data": base64.b64encode(budgets.astype("<f8").tobytes()).decode()}},
            "model": "opt0"}}))
    bad = tmp_path / "solve.ldpr"
    bad.write_bytes(forged)
    assert len(forged) < 2000
    _refused(bad, r"would run an optimiser, which is refused here")
    assert calls == []
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"format": "ldpkit-aggregate", "version": 2,
                                 "mechanism": json.loads(forged[16:16 + struct.unpack("<I", forged[12:16])[0]])[
                                     "mechanism"],
                                 "provenance": {"$provenance": {"mechanism": "IDUE", "params": []}},
                                 "n": 0, "batches": 0, "support": None}))
    with pytest.raises(ReportFileError, match="refused here"):
        Aggregator.load(state)
    assert calls == []


def test_a_fresh_process_opens_an_idue_file_without_any_solver_library(idue_file: Path) -> None:
    code = ("import sys; from ldpkit.reportio import open_reports; f = open_reports(sys.argv[1]); f.read(); "
            "print([m for m in ('cvxpy', 'scipy.optimize', 'threadpoolctl') if m in sys.modules])")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    out = run_process([sys.executable, "-c", code, str(idue_file)], capture_output=True, text=True, check=True,
                      env=env).stdout
    assert out.strip() == "[]"


# ============================================================================ 3. the block record under the checksum
def test_every_bit_of_a_block_record_is_under_the_checksum(grr_file: tuple[Path, bytes], tmp_path: Path) -> None:
    _, raw = grr_file
    block = _blocks(raw)[0]
    a, z = block["record"]
    bad = tmp_path / "flip.ldpr"
    for i in range(block["start"], z):
        for bit in range(8):
            data = bytearray(raw)
            data[i] ^= 1 << bit
            bad.write_bytes(bytes(data))
            _refused(bad)


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("stored, pattern", [
    (b'">u2"', r"stores column 'report' as '>u2'|fails its checksum"),   # byte order flipped: never byte-swapped
    (b'"<f2"', r"stores column 'report' as '<f2'|fails its checksum"),   # a float type: 1.7 is never read as 1
    (b'"|u1"', r"fails its checksum|truncated|stray bytes"),            # narrower: never wrapped
    (b'"<i2"', r"stores column 'report' as '<i2'|fails its checksum"),
])
def test_only_the_storage_types_the_writer_uses_are_read(version: int, stored: bytes, pattern: str,
                                                         tmp_path: Path) -> None:
    grr = GRR(1000, 1.0)  # two bytes per report: stored as <u2
    path = tmp_path / "g.ldpr"
    save_reports(path, _reports(grr, n=30), grr)
    raw = path.read_bytes() if version == 2 else _as_version1(path.read_bytes())
    if version == 1:
        assert len(load_reports(_write(tmp_path / "v1.ldpr", raw))) == 30  # version 1 is read
    assert b'"<u2"' in raw
    _refused(_write(tmp_path / "bad.ldpr", raw.replace(b'"<u2"', stored)), pattern)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_version_1_files_read_as_before(tmp_path: Path) -> None:
    for mech, width in ((GRR(5, 1.0), 1), (OUE(13, 1.0), 2)):
        reports = _reports(mech, n=50)
        path = tmp_path / "v2.ldpr"
        save_reports(path, reports, mech, data="version 1")
        v1 = _write(tmp_path / "v1.ldpr", _as_version1(path.read_bytes(), width))
        f = open_reports(v1)
        assert f.version == 1 and f.mechanism == mech and f.data == "version 1"
        back = f.read()
        assert mech.n_reports(back) == 50
        assert np.array_equal(mech.aggregate(back), mech.aggregate(reports))
        g = open_reports(path)
        g.read()
        assert g.version == FORMAT_VERSION == 2 and g.fingerprint == f.fingerprint  # one content, two encodings
        data = bytearray(v1.read_bytes())
        a, _ = _blocks(bytes(data), width)[0]["payload"]
        data[a] ^= 1
        _refused(_write(tmp_path / "v1bad.ldpr", bytes(data)), "fails its checksum")


# ============================================================================ 4. paths
def test_perturb_never_writes_over_one_of_its_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = _write(tmp_path / "items.txt", b"a\nb\nc\na\n")
    domain = _write(tmp_path / "labels.txt", b"a\nb\nc\n")
    budgets = _write(tmp_path / "budgets.csv", b"a,1\nb,1\nc,inf\n")
    sensitive = _write(tmp_path / "sensitive.txt", b"a\n")
    os.link(items, tmp_path / "linked.txt")
    os.symlink(domain, tmp_path / "symlink.txt")
    before = {p: p.read_bytes() for p in (items, domain, budgets, sensitive)}
    base = ["perturb", "--input", str(items), "--domain", str(domain), "--seed", "1", "--force"]
    cases = [
        (["--output", str(domain), "--mechanism", "GRR", "--epsilon", "1"], "it is the --domain file"),
        (["--output", str(tmp_path / "symlink.txt"), "--mechanism", "GRR", "--epsilon", "1"], "the --domain file"),
        (["--output", str(budgets), "--mechanism", "IPRR", "--budgets", str(budgets)], "it is the --budgets file"),
        (["--output", str(sensitive), "--mechanism", "uRR", "--epsilon", "1", "--sensitive", str(sensitive)],
         "it is the --sensitive file"),
        (["--output", str(tmp_path / "linked.txt"), "--mechanism", "GRR", "--epsilon", "1"], "it is the --input file"),
    ]
    for extra, said in cases:
        assert main([*base, *extra]) == 2, extra
        assert said in _one_line(capsys)
    assert {p: p.read_bytes() for p in before} == before


def test_an_input_named_like_the_old_temporary_file_survives(tmp_path: Path) -> None:
    out = tmp_path / "r.ldpr"
    partial = _write(tmp_path / "r.ldpr.partial", b"a\nb\nb\n")
    assert main(["perturb", "--input", str(partial), "--output", str(out), "--mechanism", "GRR", "--epsilon", "1",
                 "--seed", "1"]) == 0
    assert partial.read_bytes() == b"a\nb\nb\n" and open_reports(out).n == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.ldpr", "r.ldpr.partial"]


def test_a_failed_writer_deletes_only_its_own_temporary_file(tmp_path: Path) -> None:
    grr = GRR(5, 1.0)
    path = tmp_path / "w.ldpr"
    foreign = _write(tmp_path / "w.ldpr.partial", b"someone else's")
    with pytest.raises(RuntimeError):
        with ReportWriter(path, grr) as w:
            w.write(_reports(grr))
            raise RuntimeError("crash")
    assert foreign.read_bytes() == b"someone else's" and not path.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.ldpr.partial"]
    # two writers of one path never share a temporary file: the last to close wins, complete
    first, second = ReportWriter(path, grr), ReportWriter(path, grr)
    first.write(_reports(grr, n=7))
    second.write(_reports(grr, n=9))
    first.close()
    second.close()
    assert open_reports(path).n == 9


def test_estimate_never_writes_over_a_report_file_or_its_state(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    grr = GRR(5, 1.0)
    report = tmp_path / "r.ldpr"
    save_reports(report, _reports(grr), grr)
    os.link(report, tmp_path / "r-link.ldpr")
    state = tmp_path / "state.json"
    assert main(["estimate", str(report), "--state", str(state)]) == 0
    os.link(state, tmp_path / "state-link.json")
    capsys.readouterr()
    before = report.read_bytes(), state.read_bytes()
    for argv, said in [
        (["estimate", str(report), "--output", str(tmp_path / "r-link.ldpr"), "--force"], "one of the report files"),
        (["estimate", str(report), "--output", str(tmp_path / "state-link.json"), "--state", str(state), "--force"],
         "it is the --state file"),
        (["estimate", str(report), "--state", str(tmp_path / "r-link.ldpr")], "--state .* one of the report files"),
        (["estimate", str(report), str(tmp_path / "r-link.ldpr")], "given twice"),
    ]:
        assert main(argv) == 2, argv
        assert re.search(said, _one_line(capsys)), argv
    assert (report.read_bytes(), state.read_bytes()) == before


def test_outputs_are_written_atomically(tmp_path: Path) -> None:
    est = Estimate(np.array([1.0, 2.0]), np.array([1.0, 1.0]), 3, labels=("a", "b"))
    path = tmp_path / "e.csv"
    est.to_csv(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.csv"]


# ============================================================================ 5. the state file
def test_a_state_changed_by_another_writer_is_not_overwritten(tmp_path: Path) -> None:
    grr = GRR(5, 1.0)
    state = tmp_path / "s.json"
    Aggregator(grr).add(_reports(grr, seed=0)).save(state)
    a, b = Aggregator.load(state), Aggregator.load(state)
    a.add(_reports(grr, seed=1))
    b.add(_reports(grr, seed=2))
    a.save(state)
    with pytest.raises(StateConflictError, match="the state changed since this aggregator loaded or saved it"):
        b.save(state)
    assert Aggregator.load(state).n == 80
    a.add(_reports(grr, seed=3))
    a.save(state)  # its own last save: accepted
    assert Aggregator.load(state).n == 120
    with pytest.raises(StateConflictError, match="did not load"):
        Aggregator(grr).save(state)
    state.unlink()
    with pytest.raises(StateConflictError, match="was removed since"):
        a.save(state)


_SAVER = """
import sys
import numpy as np
from ldpkit import GRR
from ldpkit.aggregation import Aggregator, state_lock
path, rounds = sys.argv[1], int(sys.argv[2])
for _ in range(rounds):
    with state_lock(path):
        agg = Aggregator.load(path)
        agg.add_support(np.array([1, 0, 0, 0, 0]), 1)
        agg.save(path)
"""


def _spawn(args: list[str]) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    env["LDPKIT_OFFLINE"] = "1"
    return start_process([sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


@pytest.fixture()
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes started by a test, each in its own process group: killed with its group if still running."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        end_process_tree(proc)
        proc.wait()


def _finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    return finish_process(proc, guard=HANG_GUARD)


def test_two_processes_saving_one_state_lose_nothing(tmp_path: Path, processes: list[subprocess.Popen[str]]) -> None:
    state = tmp_path / "s.json"
    Aggregator(GRR(5, 1.0)).add_support(np.array([1, 0, 0, 0, 0]), 1).save(state)
    processes += [_spawn(["-c", _SAVER, str(state), "75"]) for _ in range(2)]
    results = [_finish(p) for p in processes]
    assert [r[0] for r in results] == [0, 0], results
    assert Aggregator.load(state).n == 151
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json", "s.json.lock"]  # no temporary file left


def _perturbed(tmp_path: Path, name: str, seed: int) -> Path:
    grr = GRR(5, 1.0)
    path = tmp_path / name
    save_reports(path, _reports(grr, n=100, seed=seed), grr)
    return path


def test_two_estimate_processes_on_one_state_both_count(tmp_path: Path,
                                                        processes: list[subprocess.Popen[str]]) -> None:
    """Both wait for the lock this test holds; released, each adds its file to what the other saved."""
    state = tmp_path / "state.json"
    first, b, c = (_perturbed(tmp_path, f"{k}.ldpr", seed) for k, seed in (("a", 1), ("b", 2), ("c", 3)))
    assert main(["estimate", str(first), "--state", str(state)]) == 0
    with state_lock(state):
        processes += [_spawn(["-m", "ldpkit", "estimate", str(f), "--state", str(state)]) for f in (b, c)]
        for proc in processes:  # each says it waits (a hang guard, not a criterion, bounds the read)
            line = _readline(proc)
            assert "another process holds its lock; waiting for it" in line, line
    results = [_finish(p) for p in processes]
    assert [r[0] for r in results] == [0, 0], results
    assert Aggregator.load(state).n == 300


def _readline(proc: subprocess.Popen[str]) -> str:
    box: list[str] = []
    stream = proc.stderr
    assert stream is not None
    reader = threading.Thread(target=lambda: box.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(HANG_GUARD)
    if not box:
        end_process_tree(proc)
        pytest.fail("the process hung before saying it waits")
    return box[0]


def test_two_free_running_estimates_never_lose_an_update(tmp_path: Path,
                                                         processes: list[subprocess.Popen[str]]) -> None:
    state = tmp_path / "fresh.json"
    files = [_perturbed(tmp_path, f"{k}.ldpr", seed) for k, seed in (("x", 4), ("y", 5))]
    processes += [_spawn(["-m", "ldpkit", "estimate", str(f), "--state", str(state)]) for f in files]
    results = [_finish(p) for p in processes]
    ok = [r for r in results if r[0] == 0]
    for code, _, err in results:
        if code != 0:
            errors = [line for line in err.strip().splitlines() if ": error: " in line]
            assert len(errors) == 1 and "Traceback" not in err, err
    assert ok, results
    assert Aggregator.load(state).n == 100 * len(ok)  # what the successful runs added, nothing lost


# ============================================================================ 6. duplicates by content
def test_the_same_reports_count_once_whatever_their_encoding(tmp_path: Path) -> None:
    oue = OUE(13, 1.0)
    reports = _reports(oue, n=60)
    binary, text = tmp_path / "r.ldpr", tmp_path / "r.csv"
    save_reports(binary, reports, oue, data="Monday")
    save_reports(text, reports, oue, data="Monday")
    crlf = _write(tmp_path / "crlf.csv", text.read_bytes().replace(b"\n", b"\r\n"))
    relabelled = tmp_path / "relabelled.csv"
    save_reports(relabelled, reports, oue, data="another data line")
    blocks = tmp_path / "blocks.ldpr"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rio, "BLOCK_REPORTS", 7)
        save_reports(blocks, reports, oue, data="in blocks of 7")
    agg = Aggregator(oue).add_file(binary)
    for copy in (text, crlf, relabelled, blocks):
        with pytest.raises(ReportFileError, match="already in the aggregate") as err:
            agg.add_file(copy)
        assert str(copy) in str(err.value)
    assert agg.n == 60
    other = _reports(oue, n=60, seed=9)
    save_reports(tmp_path / "other.ldpr", other, oue, data="Monday")
    assert agg.add_file(tmp_path / "other.ldpr").n == 120


def test_concatenated_csv_files_are_refused(tmp_path: Path) -> None:
    grr = GRR(5, 1.0)
    one, two = tmp_path / "d1.csv", tmp_path / "d2.csv"
    save_reports(one, _reports(grr, n=20, seed=1), grr)
    save_reports(two, _reports(grr, n=20, seed=2), grr)  # equal counts: the end records agree
    joined = _write(tmp_path / "both.csv", one.read_bytes() + two.read_bytes())
    _refused(joined, r"more lines after the end record.*two files joined")


def test_merging_what_is_already_held_is_refused(tmp_path: Path) -> None:
    grr = GRR(5, 1.0)
    agg = Aggregator(grr).add(_reports(grr))
    with pytest.raises(ValueError, match="with itself"):
        agg.merge(agg)
    other = Aggregator(grr).add(_reports(grr, seed=5))
    agg.merge(other)
    with pytest.raises(ValueError, match="hold the same part"):
        agg.merge(other)
    state = tmp_path / "s.json"
    agg.save(state)
    a, b = Aggregator.load(state), Aggregator.load(state)
    with pytest.raises(ValueError, match="loaded from the same state"):
        a.merge(b)
    path = tmp_path / "f.ldpr"
    save_reports(path, _reports(grr, seed=7), grr)
    c, d = Aggregator(grr).add_file(path), Aggregator(grr).add_file(path)
    with pytest.raises(ValueError, match="report file"):
        c.merge(d)
    assert agg.n == 80 and c.n == 40


def test_a_version_1_state_still_refuses_the_files_it_holds(tmp_path: Path) -> None:
    """A state written by the previous ldpkit knows its files by a digest of their bytes: still compared."""
    import hashlib

    grr = GRR(5, 1.0)
    path = tmp_path / "r.ldpr"
    save_reports(path, _reports(grr), grr)
    v1 = _write(tmp_path / "v1.ldpr", _as_version1(path.read_bytes()))
    f = open_reports(v1)
    f.read()
    raw = v1.read_bytes()
    hlen = struct.unpack("<I", raw[12:16])[0]
    legacy = hashlib.sha256(json.dumps(json.loads(raw[16:16 + hlen]), sort_keys=True).encode())
    for b in _blocks(raw):
        legacy.update(struct.pack("<QI", b["n"], struct.unpack("<I", raw[b["crc"]:b["crc"] + 4])[0]))
    assert f.legacy_fingerprint == legacy.hexdigest()
    state = tmp_path / "s.json"
    Aggregator(grr).add_file(v1).save(state)
    old = json.loads(state.read_text())
    old.update(version=1, files=[legacy.hexdigest()])
    state.write_text(json.dumps(old))
    resumed = Aggregator.load(state)
    with pytest.raises(ReportFileError, match="already in the aggregate"):
        resumed.add_file(v1)


# ============================================================================ 7. older helpers
@pytest.mark.parametrize("k, n, miss, pattern", [
    (101, 100, 0.05, r"k must lie in \[0, n\]"),
    (-1, 100, 0.05, r"k must lie in \[0, n\]"),
    (0, 0, 0.05, r"n must be at least 1"),
    (1.5, 10, 0.05, r"whole numbers"),
    (float("nan"), 10, 0.05, r"whole numbers"),
    (1, 10, 0.0, r"miss"),
    (1, 10, 1.0, r"miss"),
    ([1, 2], [10, 10, 10], 0.05, r"broadcast"),
])
def test_clopper_pearson_inputs_are_checked(k: Any, n: Any, miss: float, pattern: str) -> None:
    for bound in (cp_lower, cp_upper):
        with pytest.raises(ValueError, match=pattern):
            bound(k, n, miss)


def test_a_sampler_refuses_inputs_outside_its_range() -> None:
    for sampler in (from_mechanism(GRR(3, 1.0)), from_channel([[0.5, 0.5], [0.2, 0.8]]),
                    from_function(lambda x, rng: x, 2)):
        for bad in (-1, sampler.n_inputs):
            with pytest.raises(ValueError, match="outside the sampler's inputs"):
                sampler(bad, 5, np.random.default_rng(0))
            with pytest.raises(ValueError, match="outside the sampler's inputs"):
                sample_histograms(sampler, [0, bad], 5, rng=0)
        with pytest.raises(TypeError):
            sampler(0.0, 5, np.random.default_rng(0))  # type: ignore[arg-type]


def test_a_contract_compares_its_domain_and_needs_two_items() -> None:
    with pytest.raises(ValueError, match=r"stated for d=4 items.*has 100"):
        contracts.ldp(4, 1.0).satisfied(GRR(100, 1.0))
    with pytest.raises(ValueError, match=r"stated for d=4 items"):
        contracts.uldp(4, 1.0, sensitive=[0]).satisfied(GRR(100, 1.0))
    with pytest.raises(ValueError, match=r"stated for d=4 items"):
        contracts.ldp(4, 1.0).scale(GRR(5, 1.0))
    assert contracts.ldp(4, 1.0).satisfied(GRR(4, 1.0))
    for build in (lambda: contracts.ldp(1, 1.0), lambda: contracts.promise("ldp", 1, epsilon=1.0),
                  lambda: contracts.parse("ldp:epsilon=1", d=1)):
        with pytest.raises(ValueError, match="at least 2 items"):
            build()


def test_labels_are_normalised_and_checked() -> None:
    dom = Domain(["caf\u00e9", "tea"])
    assert dom.encode(["cafe\u0301", "caf\u00e9"]).tolist() == [0, 0] and "cafe\u0301" in dom
    assert Domain(["cafe\u0301", "tea"]).labels == ("caf\u00e9", "tea")  # stored in NFC
    with pytest.raises(ValueError, match="spelled two ways"):
        Domain(["caf\u00e9", "cafe\u0301"])
    for bad in ("a\u200b", " a", "a ", "a\x00", "a\u2028", "\ufeffa", "a\u00a0"):
        with pytest.raises(ValueError, match="label 1"):
            Domain(["x", bad])
    for missing in ([None, "a"], [float("nan"), "a"]):
        with pytest.raises(ValueError, match="a missing value"):
            Domain.from_values(missing)
    with pytest.raises(ArgumentTypeError):
        Domain(["a", None])  # type: ignore[list-item]


@pytest.mark.parametrize("value", ["1_0", "\u0661", "\uff11", "+1", " 1", "1 ", "0x1", "1e0", ""])
def test_report_csvs_hold_ascii_digits_only(value: str, tmp_path: Path) -> None:
    grr = GRR(20, 1.0)
    path = tmp_path / "r.csv"
    save_reports(path, _reports(grr, n=5), grr)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[3] = value
    _write(path, ("\n".join(lines) + "\n").encode())
    _refused(path, r"column 'report' of lines 3-7 is not valid")


def test_the_estimate_csv_holds_one_comment_line_per_data_line(tmp_path: Path) -> None:
    est = Estimate(np.array([1.0, 2.0]), np.array([1.0, 1.0]), 3, labels=("a", "b"), mechanism="GRR\nforged",
                   data=("two\nlines", "label,estimate,se\r\nforged,1,1"))
    path = tmp_path / "e.csv"
    est.to_csv(path)
    lines = path.read_text().splitlines()
    assert lines[0].startswith("# ldpkit ") and "GRR\\nforged" in lines[0]
    assert lines[1:3] == ["# data: two\\nlines", "# data: label,estimate,se\\r\\nforged,1,1"]
    assert lines[3].startswith("label,estimate,se") and len(lines) == 6


def test_loaders_check_rng_whatever_the_source() -> None:
    from ldpkit.datasets import load_retail

    for source in ("real", "auto", "standin"):
        with pytest.raises(TypeError, match="rng must be"):
            load_retail(source=source, rng="abc")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="rng"):
            load_retail(source=source, rng=-1)
