"""Tests for ldpkit.aggregation: batch invariance, resuming, merging, refusals, Estimate, coverage.

* The :class:`~ldpkit.aggregation.Aggregator`'s estimate after any split of the reports into
  batches (in memory or through report files) equals the one-shot ``mech.estimate(all)``
  exactly, for GRR, OUE, OLH, FHR, IDUE, OUE-PS and a channel oracle; saving and loading its
  state resumes exactly; ``merge`` adds another aggregator's totals; another configuration or
  domain is refused naming what differs.
* :class:`~ldpkit.aggregation.Estimate`: frequencies, standard errors, intervals with ``z`` from
  the level (the standard library's normal quantile, scipy's to 1e-12), ``to_frame``, ``to_csv``
  (without pandas, the bytes pandas writes) and ``to_text``.
* Coverage (statistical, fixed seeds): the 95% intervals of ``Aggregator.estimate()`` cover the
  true counts at a rate within ``Z`` binomial standard errors of 0.95 for GRR, OUE and OUE-PS,
  and the check rejects a named mistake (the PS plug-in variance without its sampling term).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import norm

import ldpkit.reportio as rio
from ldpkit import FHR, GRR, OLH, OUE
from ldpkit.aggregation import Aggregator, Estimate
from ldpkit.domain import Domain
from ldpkit.idue import oue_ps
from ldpkit.family import get_family
from ldpkit.postprocess import norm_sub
from ldpkit.reportio import ReportFileError, codec_for, save_reports
from ldpkit.reports import source_of
from ldpkit.sets import all_itemsets
from ldpkit.testing import Z


# ============================================================================ helpers
def _inputs(mech: Any, n: int, seed: int) -> Any:
    rng = np.random.default_rng(seed)
    if hasattr(mech, "ell"):
        sizes = rng.integers(0, min(mech.ell, mech.d) + 1, size=n)
        return [sorted(rng.choice(mech.d, size=int(k), replace=False).tolist()) for k in sizes]
    return rng.integers(0, mech.d, size=n)


def _split(reports: Any, cuts: Any) -> list[Any]:
    """The reports cut at ``cuts`` (sorted positions) into containers of the same type and provenance."""
    codec = codec_for(reports)
    cols = codec.to_columns(reports)
    bounds = [0, *[int(c) for c in cuts], int(cols[0].shape[0])]
    return [codec.build(tuple(c[a:b] for c in cols), codec.meta(reports), source_of(reports))
            for a, b in zip(bounds[:-1], bounds[1:])]


def _random_cuts(rng: np.random.Generator, n: int) -> np.ndarray:
    """Between 1 and 12 cut points, distinct and inside ``1 .. n-1`` (no empty batch)."""
    k = int(rng.integers(1, 13))
    return np.sort(rng.choice(np.arange(1, n), size=k, replace=False))


SPLIT_MECHS = [
    ("GRR", GRR(6, 1.0)),
    ("OUE", OUE(13, 1.0)),
    ("OLH", OLH(20, 1.0)),
    ("FHR", FHR(5, 1.0)),
    ("IDUE", get_family("IDUE-opt0").examples()[0]),
    ("OUE-PS", oue_ps(4, 1.0, 2)),
    ("Channel", get_family("Channel").examples()[1]),
]
IDS = [n for n, _ in SPLIT_MECHS]
N = 501


@pytest.fixture(params=SPLIT_MECHS, ids=IDS)
def mech_reports(request: pytest.FixtureRequest) -> tuple[Any, Any]:
    _, mech = request.param
    return mech, mech.perturb(_inputs(mech, N, 0), rng=1)


def _one_shot(mech: Any, reports: Any) -> tuple[np.ndarray, np.ndarray]:
    counts = np.asarray(mech.estimate(reports), dtype=float)
    variance = np.asarray(mech.variance_estimate(mech.aggregate(reports), mech.n_reports(reports)), dtype=float)
    return counts, variance


# ============================================================================ batch invariance
def test_estimate_after_any_split_equals_one_shot(mech_reports: tuple[Any, Any]) -> None:
    """Several random splits (and one into single reports at the start): identical counts and variances.

    Power: an aggregator that averaged batch estimates, estimated the running total with the
    last batch's ``n``, or dropped or double-counted a batch (the first or a one-report batch)
    fails ``array_equal``.
    """
    mech, reports = mech_reports
    counts, variance = _one_shot(mech, reports)
    rng = np.random.default_rng(7)
    splits = [_random_cuts(rng, N) for _ in range(4)] + [np.arange(1, 20)]
    for cuts in splits:
        agg = Aggregator(mech)
        for batch in _split(reports, cuts):
            assert agg.add(batch) is agg
        est = agg.estimate()
        assert est.n == N and agg.n == N and agg.batches == len(cuts) + 1
        assert np.array_equal(est.counts, counts), cuts
        assert np.array_equal(est.variance, variance), cuts
        assert agg.support is not None and agg.support.dtype == np.int64
        assert np.array_equal(agg.support, mech.aggregate(reports))
    # the estimate can be asked for at any time and does not change the state
    agg = Aggregator(mech)
    parts = _split(reports, [100, 300])
    agg.add(parts[0])
    first = agg.estimate()
    assert np.array_equal(first.counts, np.asarray(mech.estimate(parts[0]), dtype=float))
    agg.add(parts[1]).add(parts[2])
    assert np.array_equal(agg.estimate().counts, counts) and np.array_equal(agg.estimate().counts, counts)


def test_estimate_from_files_equals_one_shot(mech_reports: tuple[Any, Any], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches saved to files (binary and CSV, several blocks each), added file by file."""
    mech, reports = mech_reports
    counts, variance = _one_shot(mech, reports)
    monkeypatch.setattr(rio, "BLOCK_REPORTS", 37)
    paths = []
    for i, batch in enumerate(_split(reports, [120, 121, 350])):
        path = tmp_path / f"part{i}.{'csv' if i % 2 else 'ldpr'}"
        save_reports(path, batch, mech, data=f"day {i % 2}")
        paths.append(path)
    agg = Aggregator(mech).add_files(paths)
    est = agg.estimate()
    assert np.array_equal(est.counts, counts) and np.array_equal(est.variance, variance)
    assert est.n == N and agg.batches == 4 and agg.data == ["day 0", "day 1"]
    assert est.data == ("day 0", "day 1") and est.mechanism == mech.provenance.describe()
    # the files read in another order and mixed with an in-memory batch: the same estimate
    agg2 = Aggregator(mech).add_file(paths[3]).add(_split(reports, [120, 121, 350])[1])
    agg2.add_files([paths[0], paths[2]], progress=False)
    assert np.array_equal(agg2.estimate().counts, counts)


def test_save_load_resumes_exactly(mech_reports: tuple[Any, Any], tmp_path: Path) -> None:
    mech, reports = mech_reports
    parts = _split(reports, [200, 260])
    dom = Domain([f"label {i}" for i in range(mech.d)])
    live = Aggregator(mech, domain=dom).add(parts[0]).add(parts[1])
    live.data.append("first two days")
    state = tmp_path / "state.json"
    live.save(state)
    assert json.loads(state.read_text())["format"] == "ldpkit-aggregate"
    assert state.stat().st_size < 20_000  # totals, not reports
    resumed = Aggregator.load(state)
    assert resumed.mechanism == mech and resumed.domain == dom and resumed.n == live.n
    assert resumed.batches == 2 and resumed.data == ["first two days"]
    live.add(parts[2])
    resumed.add(parts[2])
    a, b = live.estimate(), resumed.estimate()
    assert np.array_equal(a.counts, b.counts) and np.array_equal(a.variance, b.variance)
    assert a.labels == b.labels == dom.labels and a.n == b.n == N and a.data == b.data
    assert np.array_equal(b.counts, _one_shot(mech, reports)[0])
    # with the mechanism given again (equal provenance)
    assert Aggregator.load(state, mechanism=mech).n == 260


def test_save_load_refusals(tmp_path: Path) -> None:
    grr = GRR(5, 1.0)
    state = tmp_path / "s.json"
    Aggregator(grr).add(grr.perturb(np.arange(5), rng=0)).save(state)
    with pytest.raises(ReportFileError, match=r"s\.json: the state aggregates GRR\(d=5, epsilon=1.0\), not GRR"):
        Aggregator.load(state, mechanism=GRR(5, 2.0))
    text = state.read_text()
    bad = tmp_path / "bad.json"
    bad.write_text(text[: len(text) // 2])
    with pytest.raises(ReportFileError, match=r"bad\.json: not a readable aggregator state"):
        Aggregator.load(bad)
    bad.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ReportFileError, match="not an ldpkit aggregator state"):
        Aggregator.load(bad)
    newer = json.loads(text)
    newer["version"] = 99
    bad.write_text(json.dumps(newer))
    with pytest.raises(ReportFileError, match="state version 99 is newer"):
        Aggregator.load(bad)
    broken = json.loads(text)
    broken["n"] = 0
    bad.write_text(json.dumps(broken))
    with pytest.raises(ReportFileError, match=r"inconsistent state \(n=0\)"):
        Aggregator.load(bad)
    broken = json.loads(text)
    broken["mechanism"]["arguments"]["epsilon"] = 3.0
    bad.write_text(json.dumps(broken))
    with pytest.raises(ReportFileError, match="epsilon"):
        Aggregator.load(bad)
    # an empty aggregator saves and resumes too (over a state it did not load: only when asked)
    with pytest.raises(ValueError, match="a state file exists that this aggregator did not load"):
        Aggregator(grr).save(state)
    Aggregator(grr).save(state, replace=True)
    assert Aggregator.load(state).n == 0


def test_merge_equals_one_aggregator(mech_reports: tuple[Any, Any]) -> None:
    mech, reports = mech_reports
    parts = _split(reports, [50, 170, 400])
    left = Aggregator(mech).add(parts[0]).add(parts[1])
    right = Aggregator(mech).add(parts[2]).add(parts[3])
    left.data.append("a")
    right.data += ["a", "b"]
    assert left.merge(right) is left
    est = left.estimate()
    assert np.array_equal(est.counts, _one_shot(mech, reports)[0]) and est.n == N
    assert left.batches == 4 and left.data == ["a", "b"]
    assert right.n == N - 170  # the merged-in aggregator is unchanged
    # merging an empty aggregator changes nothing; merging into an empty one copies
    before = left.estimate().counts
    left.merge(Aggregator(mech))
    assert np.array_equal(left.estimate().counts, before) and left.batches == 4
    empty = Aggregator(mech).merge(right)
    assert empty.n == right.n and np.array_equal(empty.support, right.support)


# ============================================================================ refusals
def test_other_configurations_are_refused(tmp_path: Path) -> None:
    grr = GRR(5, 1.0)
    agg = Aggregator(grr).add(grr.perturb(np.arange(5), rng=0))
    with pytest.raises(ValueError, match=r"epsilon 2.0 != 1.0"):
        agg.add(GRR(5, 2.0).perturb(np.arange(5), rng=0))
    with pytest.raises(ValueError, match=r"\bd 6 != 5"):
        agg.add(GRR(6, 1.0).perturb(np.arange(5), rng=0))
    with pytest.raises(ValueError, match="mechanism URR != GRR"):
        agg.add(get_family("uRR").examples()[0].perturb(np.arange(5), rng=0))
    assert agg.n == 5 and agg.batches == 1  # nothing was added by the refused batches
    with pytest.raises(ValueError, match=r"cannot merge .*epsilon 2.0 != 1.0"):
        agg.merge(Aggregator(GRR(5, 2.0)))
    with pytest.raises(TypeError, match="only merge an Aggregator"):
        agg.merge(grr)  # type: ignore[arg-type]
    # files of another mechanism or domain, naming the file
    other = tmp_path / "other.ldpr"
    save_reports(other, GRR(5, 2.0).perturb(np.arange(5), rng=0), GRR(5, 2.0))
    with pytest.raises(ReportFileError, match=r"other\.ldpr: reports were made by GRR\(d=5, epsilon=2.0\)"):
        agg.add_file(other)
    dom_a, dom_b = Domain(list("abcde")), Domain(list("abcdx"))
    f_a, f_b = tmp_path / "a.ldpr", tmp_path / "b.csv"
    save_reports(f_a, grr.perturb(np.arange(5), rng=1), grr, domain=dom_a)
    save_reports(f_b, grr.perturb(np.arange(5), rng=2), grr, domain=dom_b)
    with_dom = Aggregator(grr).add_file(f_a)
    assert with_dom.domain == dom_a  # taken from the first file with one
    with pytest.raises(ReportFileError, match=r"b\.csv: its domain .* differs from the aggregator's"):
        with_dom.add_file(f_b)
    assert with_dom.n == 5
    with pytest.raises(ValueError, match="different domains"):
        Aggregator(grr, domain=dom_a).merge(Aggregator(grr, domain=dom_b))
    assert agg.n == 5


def test_the_same_reports_are_never_added_twice(tmp_path: Path) -> None:
    """A file (or a byte copy of it) already in the aggregate is refused, also after a saved and resumed state,
    and nothing of it is added; another file of the same mechanism is accepted."""
    grr = GRR(4, 1.0)
    first, second = tmp_path / "a.ldpr", tmp_path / "b.csv"
    save_reports(first, grr.perturb(np.arange(4).repeat(30), rng=1), grr)
    save_reports(second, grr.perturb(np.arange(4).repeat(30), rng=2), grr)
    copy = tmp_path / "copy.ldpr"
    copy.write_bytes(first.read_bytes())
    agg = Aggregator(grr).add_file(first)
    before = agg.support.copy()
    for again in (first, copy):
        with pytest.raises(ReportFileError, match=f"{again.name}.*already in the aggregate"):
            agg.add_file(again)
        assert np.array_equal(agg.support, before) and agg.n == 120
    agg.save(tmp_path / "s.json")
    resumed = Aggregator.load(tmp_path / "s.json")
    with pytest.raises(ReportFileError, match="already in the aggregate"):
        resumed.add_file(copy)
    assert resumed.add_file(second).n == 240
    other = Aggregator(grr).add_file(copy)
    with pytest.raises(ValueError, match="in both aggregates"):
        resumed.merge(other)


def test_constructor_and_empty_refusals() -> None:
    grr = GRR(5, 1.0)
    with pytest.raises(ValueError, match="no reports added yet"):
        Aggregator(grr).estimate()
    with pytest.raises(ValueError, match="domain has 3 labels but the mechanism 5 items"):
        Aggregator(grr, domain=Domain(["a", "b", "c"]))
    with pytest.raises(TypeError, match="must be a Domain"):
        Aggregator(grr, domain=["a", "b", "c", "d", "e"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ldpkit mechanism"):
        Aggregator("GRR")
    with pytest.raises(ValueError, match="outside the domain"):
        Aggregator(grr).add(np.array([0, 5]))


# ============================================================================ Estimate
@pytest.fixture
def estimate() -> Estimate:
    oue = OUE(4, 2.0)
    items = np.repeat(np.arange(4), [500, 300, 150, 50])
    agg = Aggregator(oue, domain=Domain(["tea", "coffee", "milk", "water"]))
    agg.add(oue.perturb(items, rng=3))
    agg.data.append("drinks of 1000 people")
    return agg.estimate()


def test_estimate_fields(estimate: Estimate) -> None:
    est = estimate
    assert est.n == 1000 and est.labels == ("tea", "coffee", "milk", "water")
    assert est.mechanism == "OUE(d=4, epsilon=2.0)" and est.data == ("drinks of 1000 people",)
    np.testing.assert_array_equal(est.frequencies, est.counts / 1000)
    np.testing.assert_array_equal(est.se, np.sqrt(est.variance))
    np.testing.assert_array_equal(est.frequency_se, est.se / 1000)
    assert np.all(est.variance > 0)
    for level in (0.95, 0.9, 0.5, 0.999):
        z = norm.ppf(0.5 + level / 2)
        lo, hi = est.interval(level)
        np.testing.assert_allclose((lo + hi) / 2, est.counts, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose((hi - lo) / 2, z * est.se, rtol=1e-12)
        flo, fhi = est.interval(level, scale="frequency")
        np.testing.assert_allclose((fhi - flo) / 2, z * est.se / 1000, rtol=1e-12)
        np.testing.assert_allclose((flo + fhi) / 2, est.frequencies, rtol=1e-12, atol=1e-12)
    assert math.isclose(float((est.interval()[1] - est.counts)[0] / est.se[0]), 1.959963984540054, rel_tol=1e-12)
    for bad in (0, 1, 1.5, -0.1, True, "0.95", None):
        with pytest.raises(ValueError, match="confidence level in"):
            est.interval(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="scale must be"):
        est.interval(0.95, scale="percent")
    # a negative plug-in variance (not produced here) would give se 0, not NaN
    neg = Estimate(np.array([1.0, 2.0]), np.array([-1.0, 4.0]), 3)
    np.testing.assert_array_equal(neg.se, [0.0, 2.0])


def test_estimate_frame_and_csv(estimate: Estimate, tmp_path: Path) -> None:
    import pandas as pd

    est = estimate
    frame = est.to_frame(0.9)
    assert list(frame.columns) == ["label", "estimate", "se", "lower", "upper", "frequency", "frequency_se",
                                   "frequency_lower", "frequency_upper"]
    assert frame["label"].tolist() == ["tea", "coffee", "milk", "water"]
    lo, hi = est.interval(0.9)
    np.testing.assert_array_equal(frame["lower"], lo)
    np.testing.assert_array_equal(frame["frequency"], est.frequencies)
    path = tmp_path / "est.csv"
    est.to_csv(path, level=0.9)
    lines = path.read_text().splitlines()
    assert lines[0].startswith("# ldpkit ") and "OUE(d=4, epsilon=2.0)" in lines[0] and "n=1000" in lines[0]
    assert "0.9 normal intervals" in lines[0]
    assert lines[1] == "# data: drinks of 1000 people"
    assert lines[2] == ",".join(frame.columns) and len(lines) == 3 + 4
    assert lines[3].startswith("tea,")
    back = pd.read_csv(path, comment="#")
    assert back["label"].tolist() == frame["label"].tolist()
    for col in frame.columns[1:]:
        np.testing.assert_allclose(back[col], frame[col], rtol=1e-9, atol=1e-9)
    # without a domain: an item column; without data descriptions: said so
    plain = Estimate(est.counts, est.variance, est.n, mechanism=est.mechanism)
    assert plain.to_frame()["item"].tolist() == [0, 1, 2, 3]
    plain.to_csv(path)
    text = path.read_text().splitlines()
    assert text[1] == "# data: not described" and text[2].startswith("item,estimate,")
    assert "0.95 normal intervals" in text[0]


def test_interval_quantile_agrees_with_scipy() -> None:
    # the quantile comes from the standard library (statistics.NormalDist), so that an estimate
    # needs no scipy.stats; it must be scipy's to 1e-12 (relative), out to the far tails.  With
    # counts 0 and se 1 the interval is (-z, z) exactly.
    unit = Estimate(np.zeros(1), np.ones(1), 1)
    for level in (1e-9, 0.01, 0.5, 0.68, 0.8, 0.9, 0.95, 0.975, 0.99, 0.999, 1 - 1e-6, 1 - 1e-12):
        lo, hi = unit.interval(level)
        z = float(norm.ppf(0.5 + level / 2))
        assert math.isclose(float(hi[0]), z, rel_tol=1e-12) and float(lo[0]) == -float(hi[0]), level


def test_csv_is_the_bytes_pandas_writes(tmp_path: Path) -> None:
    import pandas as pd

    # labels that need quoting, a NaN, an infinity, a negative zero, tiny and huge values
    odd = Estimate(np.array([1.0, -0.0, 123456789012.5, 1 / 3]), np.array([np.nan, 1e-20, np.inf, 2.0]), 7,
                   labels=("a,b", 'say "hi"', "plain", " spaced"), mechanism="GRR(d=4, epsilon=1.0)",
                   data=("odd values",))
    plain = Estimate(np.array([3.5, 1.25, 2.0]), np.array([4.0, 1.0, 0.25]), 7)
    for est in (odd, plain):
        for level in (0.95, 0.9):
            ours, theirs = tmp_path / "ours.csv", tmp_path / "theirs.csv"
            est.to_csv(ours, level)
            head = ours.read_text().splitlines(keepends=True)[: 1 + max(1, len(est.data))]
            with open(theirs, "w", encoding="utf-8", newline="\n") as fh:
                fh.write("".join(head))
                est.to_frame(level).to_csv(fh, index=False, float_format="%.10g")
            assert ours.read_bytes() == theirs.read_bytes()
            back = pd.read_csv(ours, comment="#")
            assert list(back.columns) == list(est.to_frame(level).columns) and len(back) == est.counts.size


def test_text_table(estimate: Estimate) -> None:
    frame = estimate.to_frame(0.9)
    lines = estimate.to_text(0.9).split("\n")
    assert len(lines) == 1 + 4 and lines[0].split() == list(frame.columns)
    # every row: the label left-aligned under its header, each number right-aligned under its header
    # and equal to the table's value at six significant digits
    for row, (_, want) in zip(lines[1:], frame.iterrows()):
        assert row.startswith(want["label"] + " ")
        cells = row.split()
        assert cells[0] == want["label"]
        for name, cell in zip(frame.columns[1:], cells[1:]):
            assert cell == f"{want[name]:.6g}", (name, cell)
            end = lines[0].index(name) + len(name)
            assert row[:end].endswith(cell) and row[end:end + 1] in ("", " "), (name, row)
    # without labels: item numbers; a NaN is shown as nan
    plain = Estimate(np.array([1.0, np.nan]), np.array([4.0, 1.0]), 2).to_text()
    assert plain.split("\n")[0].split()[0] == "item" and plain.split("\n")[2].split()[:2] == ["1", "nan"]
    with pytest.raises(ValueError, match="confidence level in"):
        estimate.to_text(1.0)


# ============================================================================ coverage
# Each run gives, per item, one Bernoulli "the 95% interval covers the true count".  Over R
# independent runs (fixed seeds) the covered fraction of a correct interval has mean 0.95 (up to
# the normal approximation, O(1/n) at these n) and standard error sqrt(0.95 * 0.05 / R), which is
# 0.0069 at R = 1000 and 0.0109 at R = 400.  Each item is checked within Z = 5 of those
# (ldpkit.testing.Z, a two-sided false alarm of 5.7e-7 per item), i.e. +-0.034 (R = 1000) and
# +-0.054 (R = 400).  The aggregate simulators used here (simulate_support for GRR and OUE;
# PS's sampled counts then the inner OUE's simulate_support) draw the support counts exactly,
# so they give the same coverage as perturbing users; GRR and OUE-PS also run through perturb.
LEVEL = 0.95


def _band(runs: int) -> float:
    return Z * math.sqrt(LEVEL * (1 - LEVEL) / runs)


def _aggregator_at(mech: Any, support: np.ndarray, n: int) -> Aggregator:
    """An aggregator holding one batch with this aggregate (what ``add`` of such reports leaves)."""
    return Aggregator(mech).add_support(np.asarray(support, dtype=np.int64), int(n))


def _covered(est: Estimate, truth: np.ndarray) -> np.ndarray:
    lo, hi = est.interval(LEVEL)
    return (lo <= truth) & (truth <= hi)


def _assert_coverage(rate: np.ndarray, runs: int, what: str) -> None:
    tol = _band(runs)
    bad = np.abs(rate - LEVEL) > tol
    assert not np.any(bad), f"{what}: coverage {rate} outside {LEVEL} +- {tol:.4f} ({runs} runs)"


@pytest.mark.parametrize("mech, counts", [
    (GRR(5, 1.0), np.array([1200, 800, 500, 300, 200])),
    (OUE(6, 1.0), np.array([1000, 800, 500, 300, 250, 150])),
], ids=["GRR", "OUE"])
def test_coverage_from_exact_simulation(mech: Any, counts: np.ndarray) -> None:
    runs = 1000
    assert mech.aggregate_simulation_exact
    supports = mech.simulate_support(counts, rng=11, trials=runs)
    n = int(counts.sum())
    rate = np.mean([_covered(_aggregator_at(mech, s, n).estimate(), counts) for s in supports], axis=0)
    _assert_coverage(rate, runs, repr(mech))


def test_coverage_through_perturb_grr() -> None:
    """Real reports: perturb, add in two batches, estimate."""
    grr, runs = GRR(4, 1.5), 400
    counts = np.array([450, 300, 150, 100])
    items = np.repeat(np.arange(4), counts)
    gen = np.random.default_rng(12)
    hits = np.zeros(4)
    for _ in range(runs):
        agg = Aggregator(grr).add(grr.perturb(items[:600], gen)).add(grr.perturb(items[600:], gen))
        hits += _covered(agg.estimate(), counts)
    _assert_coverage(hits / runs, runs, "GRR through perturb")


# OUE-PS: every user holds the same set {0, 1, 2} (d = 3, ell = 8).  Each user then samples each
# padded item with the same probability, so the sampled counts are exactly multinomial and PS's
# plug-in variance ell^2 [Var_inner(S) + S (1 - S/n)] is the exact variance of the estimate
# around the true counts n (for users holding different sets the sampling term is an upper
# bound, checked one-sided below).  At epsilon = 6 the inner OUE adds little noise, so the
# sampling term is about 45% of the variance: dropping it shrinks the intervals by a factor
# sqrt(0.55), and the covered fraction falls to 2 Phi(1.96 sqrt(0.55)) - 1 = 0.855, 0.06 below
# the lower end of the band (0.916 at R = 1000), i.e. 5.5 standard errors (0.011) of that rate:
# the check misses the mistake on an item with probability below 1e-7.
PS_SET, PS_D, PS_ELL, PS_EPS, PS_N = [0, 1, 2], 3, 8, 6.0, 2000


def _ps_variance_without_sampling(ps: Any, support: np.ndarray, n: int) -> np.ndarray:
    """The named mistake: PS's plug-in variance with the sampling term ``s (1 - s/n)`` dropped."""
    s = norm_sub(ps.inner.estimate_from_support(np.asarray(support), n), float(n))
    return ps.ell**2 * ps.inner.variance_at(s)[: ps.d]


def test_coverage_oue_ps_and_power_against_a_dropped_sampling_term() -> None:
    ps, runs = oue_ps(PS_D, PS_EPS, PS_ELL), 1000
    sets = [PS_SET] * PS_N
    truth = np.full(PS_D, float(PS_N))
    np.testing.assert_array_equal(ps.expected_counts(sets), truth)  # unbiased: |v| <= ell
    sampled = ps.sampled_counts(sets, rng=13, trials=runs)
    gen = np.random.default_rng(14)
    z = norm.ppf(0.5 + LEVEL / 2)
    right, wrong = np.zeros(PS_D), np.zeros(PS_D)
    for s in sampled:
        support = ps.inner.simulate_support(s, rng=gen)
        est = _aggregator_at(ps, support, PS_N).estimate()
        right += _covered(est, truth)
        wrong += np.abs(est.counts - truth) <= z * np.sqrt(_ps_variance_without_sampling(ps, support, PS_N))
    _assert_coverage(right / runs, runs, "OUE-PS")
    # the mistake is rejected: every item falls below the band
    assert np.all(wrong / runs < LEVEL - _band(runs)), f"dropped sampling term not detected: {wrong / runs}"


def test_coverage_through_perturb_oue_ps() -> None:
    """Real reports of users with item sets: perturb (pad, sample, OUE), add, estimate."""
    ps, runs = oue_ps(PS_D, PS_EPS, PS_ELL), 400
    sets = [PS_SET] * PS_N
    truth = np.full(PS_D, float(PS_N))
    gen = np.random.default_rng(15)
    hits = np.zeros(PS_D)
    for _ in range(runs):
        hits += _covered(Aggregator(ps).add(ps.perturb(sets, gen)).estimate(), truth)
    _assert_coverage(hits / runs, runs, "OUE-PS through perturb")


def test_coverage_oue_ps_is_conservative_for_mixed_sets() -> None:
    """Users holding different sets: the sampling term is an upper bound, so coverage is above 0.95.

    The rate expected is ``2 Phi(z sqrt(V_plug / V)) - 1`` with ``V`` the exact variance for
    these users (``ps.variance``) and ``V_plug`` the plug-in formula at the expected sampled
    counts (0.969 here); the observed rate is checked within ``Z`` binomial standard errors of
    it, and is at least 0.95 minus the band.
    """
    ps, runs, n = oue_ps(4, 6.0, 2), 1000, 2000
    small = [s for s in all_itemsets(4) if len(s) <= 2]
    sets = [small[u % len(small)] for u in range(n)]
    truth = ps.expected_counts(sets)
    # expected sampled counts of the padded domain: real items truth / ell, the rest spread over the dummies
    mean = np.append(truth / ps.ell, np.full(ps.ell, (n - truth.sum() / ps.ell) / ps.ell))
    plug = ps.ell**2 * (ps.inner.variance_at(mean) + mean * (1 - mean / n))[: ps.d]
    expected = 2 * norm.cdf(norm.ppf(0.5 + LEVEL / 2) * np.sqrt(plug / ps.variance(sets))) - 1
    assert np.all(expected > LEVEL + 0.01)
    sampled = ps.sampled_counts(sets, rng=16, trials=runs)
    gen = np.random.default_rng(17)
    rate = np.mean([_covered(_aggregator_at(ps, ps.inner.simulate_support(s, rng=gen), n).estimate(), truth)
                    for s in sampled], axis=0)
    tol = Z * np.sqrt(expected * (1 - expected) / runs)
    assert np.all(np.abs(rate - expected) <= tol), f"coverage {rate}, expected {expected} +- {tol}"
    assert np.all(rate >= LEVEL - _band(runs)), f"under-coverage {rate}"
