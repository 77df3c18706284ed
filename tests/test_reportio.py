"""Tests for ldpkit.reportio: report files (binary and CSV), their refusals, concatenation, writing.

* round trips of every report type (item, unary with ``d`` a multiple of 8 or not, hashed,
  pair) and of every registered family keep the reports bit for bit, their provenance, the
  domain and the data description;
* a file is refused with a :class:`~ldpkit.reportio.ReportFileError` naming the file and the
  fault when it is cut anywhere, when any single byte is flipped, when its header, magic,
  version, blocks or end record are wrong, when a CSV has a bad value, a wrong column line or
  no end line, and when its stored mechanism (or the one passed) has another provenance;
* :func:`~ldpkit.reportio.concat_reports` refuses mixed batches naming the batch;
* :class:`~ldpkit.reportio.ReportWriter` leaves no file when the writing fails, writes
  ``BLOCK_REPORTS``-sized blocks, narrows integer columns (two bytes per GRR report at
  ``d = 1000``);
* :func:`~ldpkit.reportio.mechanism_config` / :func:`~ldpkit.reportio.build_mechanism` rebuild
  every registered family's examples (in a fresh process too) and build no class that no
  registered family declares; saving such a class is refused before anything is written.

Files are small (tens of reports) so that the exhaustive cut and flip tests stay fast.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
import zlib
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from conftest import run_process
import ldpkit
import ldpkit.reportio as rio
from ldpkit import FHR, GRR, OLH, OUE, RAPPOR, ChannelOracle
from ldpkit.aggregation import Aggregator
from ldpkit.domain import Domain
from ldpkit.idue import oue_ps
from ldpkit.family import Family, families, get_family, register_family, unregister_family
from ldpkit.olh import HashedReports
from ldpkit.reportio import (
    FORMAT_VERSION,
    ReportFileError,
    ReportWriter,
    build_mechanism,
    codec_for,
    concat_reports,
    load_reports,
    mechanism_config,
    open_reports,
    save_reports,
)
from ldpkit.reports import ItemReports, source_of
from ldpkit.unary import UnaryReports

SUFFIXES = ["ldpr", "csv"]


# ============================================================================ helpers
def _inputs(mech: Any, n: int, seed: int = 0) -> Any:
    """``n`` users' inputs: items for a frequency oracle, sets of at most ``ell`` items otherwise."""
    rng = np.random.default_rng(seed)
    if hasattr(mech, "ell"):
        sizes = rng.integers(0, min(mech.ell, mech.d) + 1, size=n)
        return [sorted(rng.choice(mech.d, size=int(k), replace=False).tolist()) for k in sizes]
    return rng.integers(0, mech.d, size=n)


def _reports(mech: Any, n: int = 40, seed: int = 0) -> Any:
    return mech.perturb(_inputs(mech, n, seed), rng=seed + 1)


def _assert_same_reports(got: Any, want: Any) -> None:
    """Same type, same scalars, same provenance, and every column equal bit for bit (same dtype)."""
    assert type(got) is type(want)
    codec = codec_for(want)
    assert codec_for(got) is codec and codec.meta(got) == codec.meta(want)
    assert source_of(got) == source_of(want)
    for (name, _, _), a, b in zip(codec.columns, codec.to_columns(got), codec.to_columns(want)):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert a.tobytes() == b.tobytes(), name


def _write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def _refused(path: str, pattern: str = "", mechanism: Any = None) -> str:
    """Open and read ``path``: a ReportFileError naming the file (and matching ``pattern``); returns the message."""
    with pytest.raises(ReportFileError) as err:
        open_reports(path, mechanism).read()
    msg = str(err.value)
    assert path in msg, msg
    if pattern:
        import re

        assert re.search(pattern, msg), f"{pattern!r} not in {msg!r}"
    return msg


def _layout(raw: bytes, width: int = 1) -> dict[str, Any]:
    """Byte ranges of a binary report file, parsed independently of the reader.

    ``width`` is the number of stored values per report per column (``ceil(d / 8)`` bytes for
    unary reports, 1 otherwise).
    """
    assert raw[:8] == b"LDPKREPS"
    hlen = struct.unpack("<I", raw[12:16])[0]
    pos = 16 + hlen + 4
    blocks = []
    while raw[pos:pos + 4] in (b"BLK1", b"BLK2"):
        mlen = struct.unpack("<I", raw[pos + 4:pos + 8])[0]
        meta = json.loads(raw[pos + 8:pos + 8 + mlen])
        crc_at = pos + 8 + mlen
        size = sum(meta["n"] * width * np.dtype(t).itemsize for t in meta["dtypes"])
        blocks.append({"start": pos, "meta": (pos + 8, crc_at), "crc": (crc_at, crc_at + 4),
                       "payload": (crc_at + 4, crc_at + 4 + size), "n": meta["n"], "dtypes": meta["dtypes"]})
        pos = crc_at + 4 + size
    assert raw[pos:pos + 4] == b"END1" and pos + 24 == len(raw)
    return {"header": (16, 16 + hlen), "header_crc": (16 + hlen, 20 + hlen), "blocks": blocks, "end": (pos, pos + 24)}


def _rewrite_header(raw: bytes, edit: Callable[[dict[str, Any]], None]) -> bytes:
    """The binary file with its header JSON edited, and its CRC (in the header and the end record) recomputed."""
    version, hlen = struct.unpack("<II", raw[8:16])
    header = json.loads(raw[16:16 + hlen])
    edit(header)
    new = json.dumps(header, separators=(",", ":")).encode()
    crc = zlib.crc32(new)
    n, blocks, _ = struct.unpack("<QQI", raw[-20:])
    return (raw[:8] + struct.pack("<II", version, len(new)) + new + struct.pack("<I", crc)
            + raw[20 + hlen:-24] + b"END1" + struct.pack("<QQI", n, blocks, crc))


def _rewrite_csv_header(text: str, edit: Callable[[dict[str, Any]], None]) -> str:
    first, rest = text.split("\n", 1)
    header = json.loads(first[len("# ldpkit-reports "):])
    edit(header)
    return "# ldpkit-reports " + json.dumps(header, separators=(",", ":")) + "\n" + rest


# ============================================================================ round trips
#: one instance per report type, including unary at d not a multiple of 8 and a set-valued mechanism
TYPED = [
    ("item-GRR-d1000", GRR(1000, 1.0)),
    ("item-Channel", ChannelOracle([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.3, 0.2, 0.5]], epsilon=1.0)),
    ("unary-OUE-d13", OUE(13, 1.0)),
    ("unary-RAPPOR-d16", RAPPOR(16, 2.0)),
    ("unary-OUE-d1", OUE(2, 0.5)),
    ("hashed-OLH", OLH(20, 1.0)),
    ("hashed-OLH-g300", OLH(400, 1.0, g=300)),
    ("pair-FHR", FHR(5, 1.0)),
    ("pair-FHR-K512", FHR(300, 2.0)),
    ("unary-OUE-PS", oue_ps(4, 1.0, 2)),
]


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("mech", [m for _, m in TYPED], ids=[n for n, _ in TYPED])
def test_round_trip_keeps_reports_and_provenance(mech: Any, suffix: str, tmp_path: Path) -> None:
    reports = _reports(mech, n=57)
    dom = Domain([f"item {i}" for i in range(mech.d)])
    path = tmp_path / f"r.{suffix}"
    save_reports(path, reports, mech, domain=dom, data="synthetic users, seed 0")
    back = load_reports(path)
    _assert_same_reports(back, reports)
    assert back.source == mech.provenance
    f = open_reports(path)
    assert f.mechanism == mech and f.mechanism.provenance == mech.provenance and type(f.mechanism) is type(mech)
    assert f.source == mech.provenance
    assert f.domain == dom and f.data == "synthetic users, seed 0" and f.n == 57
    assert f.header["kind"] == codec_for(reports).kind and f.header["version"] == FORMAT_VERSION
    assert f.codec is codec_for(reports) and f.csv == (suffix == "csv")
    assert "57" in repr(f) and f.codec.kind in repr(f)
    # the rebuilt mechanism estimates exactly what the original does
    np.testing.assert_array_equal(f.mechanism.estimate(back), mech.estimate(reports))


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_round_trip_of_every_registered_family(suffix: str, tmp_path: Path) -> None:
    """Every example of every registered family (a new family is picked up automatically)."""
    seen = set()
    for fam in families():
        for k, mech in enumerate(fam.examples()):
            reports = _reports(mech, n=23, seed=k)
            path = tmp_path / f"{fam.name}-{k}.{suffix}"
            save_reports(path, reports, mech)
            f = open_reports(path)
            assert f.mechanism == mech, (fam.name, k)
            assert f.codec.kind == fam.reports, (fam.name, f.codec.kind)
            assert f.domain is None and f.data is None
            _assert_same_reports(f.read(), reports)
            seen.add(f.codec.kind)
    assert seen == {"item", "unary", "hashed", "pair", "histogram", "coefficient", "subset", "sketch", "hadamard-sketch"}


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_extreme_values_round_trip(suffix: str, tmp_path: Path) -> None:
    """Largest items, all-ones and all-zeros bit rows, seeds near 2**64: exact in both forms."""
    grr = GRR(70_000, 1.0)  # items need four bytes
    items = ItemReports(np.array([0, 69_999, 65_535, 65_536, 255, 256]), grr.provenance)
    save_reports(tmp_path / f"i.{suffix}", items, grr)
    _assert_same_reports(load_reports(tmp_path / f"i.{suffix}"), items)
    oue = OUE(11, 1.0)
    dense = np.array([[1] * 11, [0] * 11, [1] + [0] * 10, [0] * 10 + [1]], dtype=bool)
    bits = UnaryReports(np.packbits(dense, axis=1), 11, oue.provenance)
    save_reports(tmp_path / f"u.{suffix}", bits, oue)
    back = load_reports(tmp_path / f"u.{suffix}")
    _assert_same_reports(back, bits)
    np.testing.assert_array_equal(back.to_dense(), dense)
    olh = OLH(10, 1.0)
    seeds = np.array([0, 1, 2**63, 2**64 - 1], dtype=np.uint64)
    hashed = HashedReports(seeds, np.array([0, 3, 1, 2]), olh.g, olh.provenance)
    save_reports(tmp_path / f"h.{suffix}", hashed, olh)
    _assert_same_reports(load_reports(tmp_path / f"h.{suffix}"), hashed)


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_hand_built_reports_are_stored_with_the_mechanisms_provenance(suffix: str, tmp_path: Path) -> None:
    grr = GRR(5, 1.0)
    hand = ItemReports(np.array([0, 4, 2, 2]))  # no provenance
    save_reports(tmp_path / f"h.{suffix}", hand, grr)
    back = load_reports(tmp_path / f"h.{suffix}")
    assert back.source == grr.provenance and np.array_equal(back, hand)


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_empty_reports_round_trip(suffix: str, tmp_path: Path) -> None:
    grr, oue = GRR(5, 1.0), OUE(13, 1.0)
    save_reports(tmp_path / f"e.{suffix}", ItemReports(np.array([], dtype=np.int64), grr.provenance), grr)
    back = load_reports(tmp_path / f"e.{suffix}")
    assert len(back) == 0 and back.source == grr.provenance and open_reports(tmp_path / f"e.{suffix}").n == 0
    save_reports(tmp_path / f"u.{suffix}", UnaryReports(np.zeros((0, 2), np.uint8), 13, oue.provenance), oue)
    back = load_reports(tmp_path / f"u.{suffix}")
    assert isinstance(back, UnaryReports) and len(back) == 0 and back.d == 13


def test_csv_is_plain_and_readable_by_pandas(tmp_path: Path) -> None:
    import pandas as pd

    olh = OLH(20, 1.0)
    reports = _reports(olh, n=30)
    save_reports(tmp_path / "h.csv", reports, olh)
    lines = (tmp_path / "h.csv").read_text().splitlines()
    assert lines[0].startswith("# ldpkit-reports {") and lines[1] == "seed,value"
    assert lines[-1] == '# end {"n": 30}'
    frame = pd.read_csv(tmp_path / "h.csv", comment="#", dtype=str)
    np.testing.assert_array_equal(frame["seed"].map(int).to_numpy(dtype=np.uint64), reports.seeds)
    np.testing.assert_array_equal(frame["value"].map(int).to_numpy(), reports.values)
    oue = OUE(13, 1.0)
    bits = _reports(oue, n=5)
    save_reports(tmp_path / "u.csv", bits, oue)
    rows = (tmp_path / "u.csv").read_text().splitlines()[2:-1]
    assert rows == ["".join("1" if b else "0" for b in row) for row in bits.to_dense()]


def test_open_reports_of_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nothere.ldpr"):
        open_reports(tmp_path / "nothere.ldpr")


# ============================================================================ binary refusals
@pytest.fixture
def small_binary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, Any, Any]:
    """A GRR file of 40 reports in three blocks (15, 15, 10), its bytes, reports and mechanism."""
    monkeypatch.setattr(rio, "BLOCK_REPORTS", 15)
    grr = GRR(100, 1.0)
    reports = _reports(grr, n=40)
    path = tmp_path / "small.ldpr"
    save_reports(path, reports, grr, domain=Domain.integers(100), data="d")
    monkeypatch.setattr(rio, "BLOCK_REPORTS", 1_000_000)
    raw = path.read_bytes()
    assert [b["n"] for b in _layout(raw)["blocks"]] == [15, 15, 10]
    return raw, reports, grr


def test_every_cut_of_a_binary_file_is_refused(small_binary: tuple[bytes, Any, Any], tmp_path: Path) -> None:
    """Cut at every byte: in the magic, the header, a block record, a payload, the end record."""
    raw, _, _ = small_binary
    path = tmp_path / "cut.ldpr"
    for cut in range(len(raw)):
        p = _write(path, raw[:cut])
        msg = _refused(p)
        if cut < 8:
            assert "not an ldpkit report file" in msg, (cut, msg)
        elif cut >= 16:
            assert "truncated" in msg, (cut, msg)
    # and the reader refuses at open (header and end record), before any report is read
    p = _write(path, raw[:-1])
    with pytest.raises(ReportFileError, match="no end record"):
        open_reports(p)


def test_a_cut_inside_the_version_fields_is_called_truncated(small_binary: tuple[bytes, Any, Any],
                                                            tmp_path: Path) -> None:
    raw, _, _ = small_binary
    for cut in range(8, 16):
        _refused(_write(tmp_path / "cut.ldpr", raw[:cut]), "truncated")


def test_a_gap_inside_a_block_is_refused(small_binary: tuple[bytes, Any, Any], tmp_path: Path) -> None:
    """Bytes removed from the middle (the end record intact): the block no longer checks."""
    raw, _, _ = small_binary
    lay = _layout(raw)
    a, b = lay["blocks"][1]["payload"]
    _refused(_write(tmp_path / "gap.ldpr", raw[:a + 2] + raw[a + 5:]), r"block 1|block 2|truncated")
    # the last block cut short, just before the end record
    a, b = lay["blocks"][2]["payload"]
    _refused(_write(tmp_path / "gap.ldpr", raw[:b - 1] + raw[b:]), r"truncated inside block 2|block 2")


def test_every_flipped_byte_is_refused(small_binary: tuple[bytes, Any, Any], tmp_path: Path) -> None:
    """Flipping any one byte (all bits, or the top bit) anywhere in the file is detected."""
    raw, _, _ = small_binary
    path = tmp_path / "flip.ldpr"
    for mask in (0xFF, 0x80):
        for i in range(len(raw)):
            data = bytearray(raw)
            data[i] ^= mask
            _refused(_write(path, bytes(data)))


def test_flipped_payload_byte_fails_the_block_checksum(small_binary: tuple[bytes, Any, Any], tmp_path: Path) -> None:
    raw, _, _ = small_binary
    a, _ = _layout(raw)["blocks"][1]["payload"]
    data = bytearray(raw)
    data[a + 3] ^= 0x01  # a report changes to another valid item
    p = _write(tmp_path / "flip.ldpr", bytes(data))
    open_reports(p)  # the header and the end record are intact
    _refused(p, r"block 1 \(reports 15 to 29\) fails its checksum")
    # Aggregator.add_file refuses it too, and adds nothing (blocks are summed aside first)
    agg = Aggregator(GRR(100, 1.0))
    with pytest.raises(ReportFileError, match="fails its checksum"):
        agg.add_file(p)
    assert agg.n == 0 and agg.support is None and agg.batches == 0


def test_header_faults(small_binary: tuple[bytes, Any, Any], tmp_path: Path) -> None:
    raw, _, _ = small_binary
    lay = _layout(raw)
    path = tmp_path / "h.ldpr"
    data = bytearray(raw)
    data[lay["header"][0] + 10] ^= 0x01
    _refused(_write(path, bytes(data)), r"corrupted header \(checksum fails\)")
    data = bytearray(raw)
    data[lay["header_crc"][0]] ^= 0x01
    _refused(_write(path, bytes(data)), r"corrupted header \(checksum fails\)")
    _refused(_write(path, b"LDPKREPX" + raw[8:]), "not an ldpkit report file")
    _refused(_write(path, b"PK\x03\x04" + raw[4:]), "not an ldpkit report file")
    newer = raw[:8] + struct.pack("<I", FORMAT_VERSION + 1) + raw[12:]
    _refused(_write(path, newer), rf"format version {FORMAT_VERSION + 1}, newer than this ldpkit reads "
                                  rf"\({FORMAT_VERSION}\); upgrade ldpkit")


def test_block_and_end_record_faults(small_binary: tuple[bytes, Any, Any], tmp_path: Path) -> None:
    raw, _, _ = small_binary
    lay = _layout(raw)
    path = tmp_path / "e.ldpr"
    end = lay["end"][0]
    # stray bytes between the last block and the end record
    _refused(_write(path, raw[:end] + b"\x00\x01\x02" + raw[end:]), "3 stray bytes after the last block")
    # the end record's total disagrees with the blocks
    n, blocks, crc = struct.unpack("<QQI", raw[end + 4:])
    _refused(_write(path, raw[:end + 4] + struct.pack("<QQI", n + 1, blocks, crc)),
             "blocks hold 40 reports, the end record says 41")
    # one block fewer in the end record: the last block is left over
    _refused(_write(path, raw[:end + 4] + struct.pack("<QQI", n, blocks - 1, crc)), "stray bytes|end record says")
    # one block more: the end record is read where a block should start
    _refused(_write(path, raw[:end + 4] + struct.pack("<QQI", n, blocks + 1, crc)), "block 3 does not start")
    # the end record of another file (another header)
    _refused(_write(path, raw[:end + 4] + struct.pack("<QQI", n, blocks, crc ^ 1)),
             "end record belongs to another header")
    # a block tag damaged
    b1 = lay["blocks"][1]["start"]
    _refused(_write(path, raw[:b1] + b"BLK3" + raw[b1 + 4:]), "block 1 does not start with a block tag")
    _refused(_write(path, raw[:b1] + b"BLK1" + raw[b1 + 4:]), "block 1 does not start with a block tag")  # version 1's
    # a block record naming a wider column type (its length field adjusted): the bytes no longer check
    a, b = lay["blocks"][0]["meta"]
    meta = raw[a:b].replace(b'"|u1"', b'"<u2"')
    assert meta != raw[a:b] and len(meta) == b - a
    _refused(_write(path, raw[:a] + meta + raw[b:]), "block 0|block 1")


def test_concatenated_files_are_refused(small_binary: tuple[bytes, Any, Any], tmp_path: Path) -> None:
    """Two files glued together (``cat a b > c``) do not read as one."""
    raw, _, _ = small_binary
    _refused(_write(tmp_path / "cat.ldpr", raw + raw))


# ============================================================================ stored mechanism refusals
def _edit_arguments(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(header: dict[str, Any]) -> None:
        header["mechanism"]["arguments"][key] = value
    return edit


def _edit_provenance_epsilon(value: float) -> Callable[[dict[str, Any]], None]:
    def edit(header: dict[str, Any]) -> None:
        for block in (header["provenance"], header["mechanism"]["provenance"]):
            block["$provenance"]["params"] = [[k, value if k == "epsilon" else v]
                                              for k, v in block["$provenance"]["params"]]
    return edit


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_tampered_stored_mechanism_is_refused(suffix: str, tmp_path: Path) -> None:
    """A header edited consistently (its CRC recomputed) whose mechanism rebuilds to another provenance."""
    grr = GRR(6, 1.0)
    path = tmp_path / f"ok.{suffix}"
    save_reports(path, _reports(grr), grr)
    out = tmp_path / f"bad.{suffix}"

    def tampered(edit: Callable[[dict[str, Any]], None]) -> str:
        if suffix == "csv":
            out.write_text(_rewrite_csv_header(path.read_text(), edit))
        else:
            out.write_bytes(_rewrite_header(path.read_bytes(), edit))
        return str(out)

    # the arguments now build GRR at epsilon 2, but the reports were made at epsilon 1
    msg = _refused(tampered(_edit_arguments("epsilon", 2.0)), "epsilon")
    assert "1.0" in msg and "2.0" in msg
    _refused(tampered(_edit_arguments("d", 7)), r"\bd\b")
    # the stored provenance says epsilon 3 while the arguments still rebuild epsilon 1
    _refused(tampered(_edit_provenance_epsilon(3.0)), "epsilon")
    # a class that ldpkit does not define, and arguments the constructor refuses
    _refused(tampered(lambda h: h["mechanism"].__setitem__("class", "os.system")),
             "unknown mechanism class 'os.system'")
    _refused(tampered(_edit_arguments("epsilon", -1.0)), "cannot rebuild ldpkit.grr.GRR")
    # no stored mechanism: refused unless one is passed, which must have the stored provenance
    p = tampered(lambda h: h.__setitem__("mechanism", None))
    _refused(p, "does not store its mechanism; pass mechanism=")
    assert open_reports(p, grr).mechanism is grr
    _refused(p, "epsilon 1.0 != 2.0", mechanism=GRR(6, 2.0))
    # the untampered file still opens (the edits above are what is refused)
    assert open_reports(path).mechanism == grr


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_open_with_another_mechanism_is_refused(suffix: str, tmp_path: Path) -> None:
    oue = OUE(8, 1.0)
    path = tmp_path / f"r.{suffix}"
    save_reports(path, _reports(oue), oue)
    msg = _refused(str(path), "reports were made by OUE", mechanism=OUE(8, 1.5))
    assert "epsilon 1.0 != 1.5" in msg
    _refused(str(path), "d 8 != 9", mechanism=OUE(9, 1.0))
    _refused(str(path), "mechanism OUE != RAPPOR", mechanism=RAPPOR(8, 1.0))
    assert open_reports(path, OUE(8, 1.0)).mechanism == oue  # an equal mechanism is accepted


# ============================================================================ CSV refusals
@pytest.fixture
def small_csv(tmp_path: Path) -> tuple[str, Any]:
    grr = GRR(10, 1.0)
    path = tmp_path / "small.csv"
    save_reports(path, _reports(grr, n=12), grr)
    return path.read_text(), grr


def test_every_cut_of_a_csv_file_is_refused(small_csv: tuple[str, Any], tmp_path: Path) -> None:
    """Cut at every character (inside the header line, a report line, the end line), except the final newline."""
    text, _ = small_csv
    raw = text.encode()
    for cut in range(len(raw) - 1):
        _refused(_write(tmp_path / "cut.csv", raw[:cut]))
    # whole lines dropped from the end
    lines = text.splitlines(keepends=True)
    for k in range(1, len(lines)):
        _refused(_write(tmp_path / "cut.csv", "".join(lines[:k]).encode()), "truncated|corrupted|not an ldpkit")
    # without its final newline the file is complete
    assert len(load_reports(_write(tmp_path / "ok.csv", raw[:-1]))) == 12


def test_csv_value_and_structure_faults(small_csv: tuple[str, Any], tmp_path: Path) -> None:
    text, grr = small_csv
    lines = text.splitlines()
    path = tmp_path / "bad.csv"

    def with_lines(new: list[str]) -> str:
        return _write(path, ("\n".join(new) + "\n").encode())

    _refused(with_lines(lines[:5] + ["x7"] + lines[6:]), r"column 'report' of lines \d+-\d+ is not valid.*'x7'")
    _refused(with_lines(lines[:5] + ["1.5"] + lines[6:]), "is not valid")
    _refused(with_lines(lines[:5] + ["3,4"] + lines[6:]), "line 6 has 2 fields, expected 1")
    _refused(with_lines(lines[:1] + ["item"] + lines[2:]), r"line 2 names the columns 'item', expected 'report'")
    _refused(with_lines(lines[:-1]), "truncated: its last line is not the end record")
    _refused(with_lines(lines[:5] + lines[6:]), "11 reports read, the end record says 12")
    _refused(with_lines(lines[:5] + ['# end {"n": 12}'] + lines[5:]), "more lines after the end record on line 6")
    _refused(with_lines(lines[:-1] + ['# end {"m": 12}']), "corrupted end record")
    _refused(with_lines(["# ldpkit-reports {not json"] + lines[1:]), "corrupted header line")
    _refused(with_lines(["report"] + lines[1:]), "not an ldpkit reports CSV")
    newer = _rewrite_csv_header(text, lambda h: h.__setitem__("version", FORMAT_VERSION + 1))
    _refused(_write(path, newer.encode()), rf"format version {FORMAT_VERSION + 1}, newer")
    # a comment line between reports is refused (the writer writes none: it could hide a forged header)
    _refused(with_lines(lines[:5] + ["# a note"] + lines[5:]), "line 6 is a comment line among the reports")


def test_csv_error_names_the_lines_of_the_bad_value(small_csv: tuple[str, Any], tmp_path: Path) -> None:
    """The 12 reports are lines 3 to 14 (line 1 the header, line 2 the column names); the bad value is on line 6."""
    text, _ = small_csv
    lines = text.splitlines()
    bad = ("\n".join(lines[:5] + ["x7"] + lines[6:]) + "\n").encode()
    _refused(_write(tmp_path / "bad.csv", bad), r"column 'report' of lines 3-14 is not valid")


def test_csv_out_of_range_item_is_refused_when_aggregated(small_csv: tuple[str, Any], tmp_path: Path) -> None:
    """An item outside ``0..d-1`` (a hand edit) is refused by the aggregator, naming the file and the item."""
    text, grr = small_csv
    lines = text.splitlines()
    p = _write(tmp_path / "oor.csv", ("\n".join(lines[:5] + ["10"] + lines[6:]) + "\n").encode())
    agg = Aggregator(grr)
    with pytest.raises(ReportFileError) as err:
        agg.add_file(p)
    assert p in str(err.value) and "item 10" in str(err.value)
    assert agg.n == 0
    with pytest.raises(ValueError, match="item 10"):
        grr.estimate(load_reports(p))


@pytest.mark.parametrize("row, pattern", [("0101", "not 13 zeros and ones"), ("01010101010102", "zeros and ones"),
                                          ("0101010101010101", "not 13 zeros and ones")])
def test_csv_bad_unary_row_is_refused(row: str, pattern: str, tmp_path: Path) -> None:
    oue = OUE(13, 1.0)
    path = tmp_path / "u.csv"
    save_reports(path, _reports(oue, n=6), oue)
    lines = path.read_text().splitlines()
    _refused(_write(path, ("\n".join(lines[:3] + [row] + lines[4:]) + "\n").encode()), pattern)


def test_csv_bad_hashed_or_pair_row_is_refused(tmp_path: Path) -> None:
    """A negative seed (OLH) is refused on reading; a pair with ``plus == minus`` (FHR) when aggregated."""
    olh, fhr = OLH(10, 1.0), FHR(5, 1.0)
    path = tmp_path / "h.csv"
    save_reports(path, _reports(olh, n=6), olh)
    lines = path.read_text().splitlines()
    lines[3] = "-1," + lines[3].split(",")[1]
    _refused(_write(path, ("\n".join(lines) + "\n").encode()), "column 'seed' .* is not valid")
    path = tmp_path / "p.csv"
    save_reports(path, _reports(fhr, n=6), fhr)
    lines = path.read_text().splitlines()
    lines[3] = "3,3"
    p = _write(path, ("\n".join(lines) + "\n").encode())
    agg = Aggregator(fhr)
    with pytest.raises(ReportFileError, match="same position 3") as err:
        agg.add_file(p)
    assert p in str(err.value) and agg.n == 0


# ============================================================================ concatenation
def test_concat_keeps_order_and_provenance() -> None:
    for mech in (GRR(5, 1.0), OUE(13, 1.0), OLH(9, 1.0), FHR(5, 1.0), oue_ps(3, 1.0, 2)):
        parts = [_reports(mech, n=n, seed=s) for s, n in enumerate((7, 1, 12))]
        whole = concat_reports(parts)
        assert source_of(whole) == mech.provenance and mech.n_reports(whole) == 20
        codec = codec_for(whole)
        for j, col in enumerate(codec.to_columns(whole)):
            want = np.concatenate([codec.to_columns(p)[j] for p in parts])
            assert col.tobytes() == want.tobytes()
        np.testing.assert_array_equal(mech.aggregate(whole), sum(mech.aggregate(p) for p in parts))
    hand = [ItemReports(np.array([0, 1])), ItemReports(np.array([2]))]
    assert source_of(concat_reports(hand)) is None and concat_reports(hand).tolist() == [0, 1, 2]


def test_concat_refusals_name_the_batch() -> None:
    g1, g2 = GRR(5, 1.0), GRR(5, 2.0)
    a, b = _reports(g1, n=4), _reports(g1, n=3, seed=1)
    with pytest.raises(ValueError, match="batch 2 holds unary reports, batch 0 item reports"):
        concat_reports([a, b, _reports(OUE(5, 1.0))])
    with pytest.raises(ValueError, match=r"batch 1 has \{'d': 6\}, batch 0 \{'d': 5\}"):
        concat_reports([_reports(OUE(5, 1.0)), _reports(OUE(6, 1.0))])
    with pytest.raises(ValueError, match=r"batch 1 has \{'g': 5\}, batch 0 \{'g': 4\}"):
        concat_reports([_reports(OLH(9, 1.0, g=4)), _reports(OLH(9, 1.0, g=5))])
    with pytest.raises(ValueError, match=r"batch 1 has \{'K': 16\}, batch 0 \{'K': 8\}"):
        concat_reports([_reports(FHR(5, 1.0)), _reports(FHR(9, 1.0))])
    with pytest.raises(ValueError, match=r"batch 2 was made by GRR\(d=5, epsilon=2.0\) but batch 0 by "
                                         r"GRR\(d=5, epsilon=1.0\) \(epsilon 2.0 != 1.0\)"):
        concat_reports([a, b, _reports(g2)])
    with pytest.raises(ValueError, match=r"mechanism URR != GRR"):
        concat_reports([a, _reports(ldpkit.URR(5, 1.0, [0]))])
    with pytest.raises(ValueError, match=r"batch 1 was built by hand \(no provenance\) but batch 0 was made by GRR"):
        concat_reports([a, ItemReports(np.array([1, 2]))])
    with pytest.raises(ValueError, match=r"batch 1 was made by GRR.* but batch 0 was built by hand"):
        concat_reports([ItemReports(np.array([1, 2])), a])
    with pytest.raises(ValueError, match="no batches"):
        concat_reports([])
    # PS reports and the inner OUE's reports are not interchangeable
    ps = oue_ps(3, 1.0, 2)
    with pytest.raises(ValueError, match="PaddingSampling"):
        concat_reports([_reports(ps), _reports(ps.inner)])


# ============================================================================ writing
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_writer_leaves_no_file_when_the_block_raises(suffix: str, tmp_path: Path) -> None:
    grr = GRR(5, 1.0)
    path = tmp_path / f"w.{suffix}"
    with pytest.raises(RuntimeError, match="collection crashed"):
        with ReportWriter(path, grr) as w:
            w.write(_reports(grr))
            assert not path.exists()  # written under a temporary name until closed
            raise RuntimeError("collection crashed")
    assert list(tmp_path.iterdir()) == []
    # a refused batch inside the block also leaves nothing
    with pytest.raises(ValueError, match="epsilon"):
        with ReportWriter(path, grr) as w:
            w.write(_reports(grr))
            w.write(_reports(GRR(5, 2.0)))
    assert list(tmp_path.iterdir()) == []
    # an existing complete file is not replaced by a failed rewrite
    save_reports(path, _reports(grr, n=9), grr)
    before = path.read_bytes()
    with pytest.raises(RuntimeError):
        with ReportWriter(path, grr) as w:
            w.write(_reports(grr, n=3))
            raise RuntimeError("again")
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == [path.name]


def test_writer_refusals(tmp_path: Path) -> None:
    grr = GRR(5, 1.0)
    with pytest.raises(ValueError, match="no reports were written"):
        ReportWriter(tmp_path / "e.ldpr", grr).close()
    with pytest.raises(ValueError, match="epsilon 2.0 != 1.0"):
        save_reports(tmp_path / "x.ldpr", _reports(GRR(5, 2.0)), grr)
    with pytest.raises(ValueError, match="batch of unary reports"):
        with ReportWriter(tmp_path / "m.ldpr", grr) as w:
            w.write(ItemReports(np.array([1, 2])))
            w.write(UnaryReports(np.zeros((1, 1), np.uint8), 5))
    with pytest.raises(ValueError, match="domain has 3 labels but the mechanism 5 items"):
        ReportWriter(tmp_path / "d.ldpr", grr, domain=Domain(["a", "b", "c"]))
    with pytest.raises(ValueError, match="one line"):
        ReportWriter(tmp_path / "d.ldpr", grr, data="two\nlines")
    with pytest.raises(TypeError, match="one line"):
        ReportWriter(tmp_path / "d.ldpr", grr, data=7)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Domain"):
        ReportWriter(tmp_path / "d.ldpr", grr, domain=["a", "b", "c", "d", "e"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="no report file format"):
        save_reports(tmp_path / "l.ldpr", [0, 1, 2], grr)
    assert not any(p.suffix in (".ldpr", ".csv") for p in tmp_path.iterdir())


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_writer_writes_blocks_of_block_reports(suffix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rio, "BLOCK_REPORTS", 7)
    oue = OUE(13, 1.0)
    parts = [_reports(oue, n=23, seed=1), _reports(oue, n=27, seed=2), _reports(oue, n=7, seed=3)]
    path = tmp_path / f"b.{suffix}"
    with ReportWriter(path, oue, data="three batches") as w:
        for p in parts:
            w.write(p)
        assert w.n == 57
    assert w.blocks == (4 + 4 + 1 if suffix == "ldpr" else 9)
    f = open_reports(path)
    sizes = [len(b) for b in f.batches(rows_per_batch=7)]
    assert sizes == [7, 7, 7, 2, 7, 7, 7, 6, 7] if suffix == "ldpr" else sizes == [7] * 8 + [1]
    monkeypatch.setattr(rio, "BLOCK_REPORTS", 1_000_000)  # the file does not depend on the reader's setting
    _assert_same_reports(load_reports(path), concat_reports(parts))
    if suffix == "ldpr":
        assert [b["n"] for b in _layout(path.read_bytes(), width=2)["blocks"]] == [7, 7, 7, 2, 7, 7, 7, 6, 7]


@pytest.mark.parametrize(
    "mech, per_report",
    [(GRR(1000, 1.0), 2), (GRR(200, 1.0), 1), (GRR(70_000, 1.0), 4), (OUE(13, 1.0), 2), (OUE(8, 1.0), 1),
     (OLH(50, 1.0, g=4), 9), (FHR(5, 1.0), 2), (FHR(300, 1.0), 4)],
    ids=["GRR-1000", "GRR-200", "GRR-70000", "OUE-13", "OUE-8", "OLH", "FHR-K8", "FHR-K512"],
)
def test_integer_columns_are_narrowed(mech: Any, per_report: int, tmp_path: Path) -> None:
    """File size per report: the narrowest unsigned type for items, buckets and positions; packed bits."""
    n = 50_000
    reports = _reports(mech, n=n)
    path = tmp_path / "n.ldpr"
    save_reports(path, reports, mech)
    size = path.stat().st_size
    assert n * per_report <= size < n * per_report + 2_000, size / n
    _assert_same_reports(load_reports(path), reports)


# ============================================================================ mechanisms as data
CASES = [(fam.name, k) for fam in families() for k in range(len(fam.examples()))]


@pytest.mark.parametrize("name, k", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_mechanism_config_round_trip(name: str, k: int) -> None:
    mech = get_family(name).examples()[k]
    cfg = mechanism_config(mech)
    text = json.dumps(cfg, allow_nan=False)  # plain JSON (no NaN/inf literals)
    back = build_mechanism(json.loads(text))
    assert type(back) is type(mech) and back == mech and back.provenance == mech.provenance
    assert [g.key() for g in back.guarantees()] == [g.key() for g in mech.guarantees()]
    assert cfg["class"].startswith("ldpkit.") and cfg["class"].endswith(type(mech).__qualname__)
    assert get_family(cfg["family"]).mechanism is type(mech)  # the family that makes the class readable
    assert mechanism_config(back) == cfg  # stable: rebuilding does not change the record


def test_build_mechanism_refuses_unknown_classes() -> None:
    """Only classes ldpkit defines are built; a name is never imported."""
    args = {"d": 4, "epsilon": 1.0}
    imported_before = "tabnanny" in sys.modules  # a harmless stdlib module nothing here imports
    for cls in ("os.system", "builtins.eval", "subprocess.Popen", "tabnanny.check", "ldpkit.grr.GRRX",
                "ldpkit.domain.Domain", "ldpkit.reportio.ReportWriter", "GRR", "ldpkit.GRR"):
        with pytest.raises(ValueError, match=f"unknown mechanism class '{cls}'"):
            build_mechanism({"class": cls, "arguments": args})
    assert ("tabnanny" in sys.modules) == imported_before
    with pytest.raises(ValueError, match="'class' and 'arguments'"):
        build_mechanism({"arguments": args})
    with pytest.raises(ValueError, match="'class' and 'arguments'"):
        build_mechanism("ldpkit.grr.GRR")
    with pytest.raises(ValueError, match="cannot rebuild ldpkit.grr.GRR"):
        build_mechanism({"class": "ldpkit.grr.GRR", "arguments": {"d": 4, "eps": 1.0}})
    cfg = mechanism_config(GRR(4, 1.0))
    cfg["arguments"]["epsilon"] = 1.5
    with pytest.raises(ValueError, match=r"epsilon 1.5 != 1.0.*pass the mechanism that made them"):
        build_mechanism(cfg)
    del cfg["provenance"]  # without a stored provenance nothing is checked
    assert build_mechanism(cfg) == GRR(4, 1.5)


# ============================================================================ classes and families
class LocalGRR(GRR):
    """GRR under another class name, defined here: it states its arguments (inherited) but no family declares it."""


def test_a_class_no_registered_family_declares_is_refused_at_save(tmp_path: Path) -> None:
    mech = LocalGRR(4, 1.0)
    reports = _reports(mech)
    for suffix in SUFFIXES:
        with pytest.raises(ValueError, match=r"LocalGRR mechanism: no registered family declares.*register its family"):
            save_reports(tmp_path / f"local.{suffix}", reports, mech)
    with pytest.raises(ValueError, match="register its family"):
        Aggregator(mech).add(reports).save(tmp_path / "state.json")
    assert list(tmp_path.iterdir()) == []  # refused before anything was written
    register_family(Family("LocalGRR", "none", LocalGRR, lambda: (LocalGRR(3, 1.0),)))
    try:
        save_reports(tmp_path / "local.ldpr", reports, mech)
        f = open_reports(tmp_path / "local.ldpr")
        assert type(f.mechanism) is LocalGRR and f.mechanism == mech and f.header["mechanism"]["family"] == "LocalGRR"
    finally:
        unregister_family("LocalGRR")
    # written while the family was registered, read without it: refused, naming the family to import
    with pytest.raises(ReportFileError, match="its family 'LocalGRR' is not registered in this process"):
        open_reports(tmp_path / "local.ldpr")
    assert open_reports(tmp_path / "local.ldpr", mech).mechanism is mech  # the reader may pass it


_FRESH_READER = """
import hashlib, json, sys
from ldpkit.reportio import codec_for, mechanism_config, open_reports
out = {}
for path in sys.argv[1:]:
    f = open_reports(path)
    reports = f.read()
    digest = hashlib.sha256(b"".join(c.tobytes() for c in codec_for(reports).to_columns(reports))).hexdigest()
    out[path] = [mechanism_config(f.mechanism), digest]
print(json.dumps(out))
"""


def test_every_example_of_every_family_is_read_by_a_fresh_process(tmp_path: Path) -> None:
    """A file needs nothing of the writer's process: a new interpreter rebuilds every family's member."""
    want = {}
    for fam in families():
        for k, mech in enumerate(fam.examples()):
            reports = _reports(mech, n=11, seed=k)
            path = str(tmp_path / f"{fam.name}-{k}.ldpr")
            save_reports(path, reports, mech)
            digest = hashlib.sha256(b"".join(c.tobytes() for c in codec_for(reports).to_columns(reports))).hexdigest()
            want[path] = [json.loads(json.dumps(mechanism_config(mech))), digest]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    out = run_process([sys.executable, "-c", _FRESH_READER, *want], capture_output=True, text=True, check=True,
                      env=env).stdout
    assert json.loads(out) == want
