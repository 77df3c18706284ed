"""The collection commands of ``ldpkit`` (ldpkit.cli): ``perturb``, ``estimate`` and ``account``, in-process.

The command line must give exactly what the Python path gives for the same seed (one Generator,
chunk after chunk), store the domain and the data line with the reports, refuse bad input in one
line with exit status 2 before writing anything, and name the file a refusal is about.
"""

from __future__ import annotations

import contextlib
import io
import re
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import one_cli_error
from ldpkit import GRR, OUE, contracts
from ldpkit.aggregation import Aggregator
from ldpkit.cli import main
from ldpkit.domain import Domain
from ldpkit.reportio import codec_for, concat_reports, open_reports

LABELS = ["apple", "bread", "milk", "eggs", "tea"]
N = 1000


@pytest.fixture()
def items(tmp_path: Path) -> dict[str, object]:
    """A CSV of N users' items (column ``item``), the same items one per line, and the domain file."""
    rng = np.random.default_rng(2024)
    labels = [LABELS[i] for i in rng.choice(len(LABELS), size=N, p=[0.4, 0.25, 0.2, 0.1, 0.05])]
    csv = tmp_path / "items.csv"
    csv.write_text("user,item\n" + "".join(f"u{i},{lab}\n" for i, lab in enumerate(labels)))
    txt = tmp_path / "items.txt"
    txt.write_text("\n".join(labels) + "\n")
    dom = tmp_path / "labels.txt"
    dom.write_text("\n".join(LABELS) + "\n")
    return {"labels": labels, "csv": csv, "txt": txt, "domain": dom}


def _python_path(mech, labels: list[str], seed: int, chunk: int) -> tuple[object, Aggregator]:
    """What the command does, in Python: encode, perturb chunk after chunk with one Generator, aggregate."""
    domain = Domain(LABELS)
    rng = np.random.default_rng(seed)
    agg = Aggregator(mech, domain=domain)
    parts = []
    for start in range(0, len(labels), chunk):
        reports = mech.perturb(domain.encode(labels[start:start + chunk]), rng=rng)
        agg.add(reports)
        parts.append(reports)
    return parts, agg


@pytest.mark.parametrize(("name", "cls", "suffix", "chunk"), [
    ("GRR", GRR, ".ldpr", N),
    ("oue", OUE, ".csv", N),      # the CSV form of the reports file; case-insensitive name
    ("KRR", GRR, ".csv", 300),    # four chunks through one Generator
    ("OUE", OUE, ".ldpr", 300),
])
def test_cli_estimate_equals_the_python_path(name: str, cls, suffix: str, chunk: int, items, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    reports = tmp_path / f"reports{suffix}"
    assert main(["perturb", "--input", str(items["csv"]), "--column", "item", "--output", str(reports),
                 "--mechanism", name, "--epsilon", "1.5", "--domain", str(items["domain"]), "--seed", "11",
                 "--chunk-rows", str(chunk)]) == 0
    out = capsys.readouterr().out
    assert f"{N:,} reports of {cls.__name__}(d=5, epsilon=1.5)" in out and "seed 11" in out
    mech = cls(len(LABELS), 1.5)
    parts, agg = _python_path(mech, items["labels"], seed=11, chunk=chunk)
    f = open_reports(reports)
    assert f.mechanism == mech and f.domain == Domain(LABELS) and f.n == N
    stored, expected = f.read(), concat_reports(parts)
    for got, want in zip(codec_for(stored).to_columns(stored), codec_for(expected).to_columns(expected)):
        assert np.array_equal(got, want)  # the very same reports
    state = tmp_path / "state.json"
    est_csv = tmp_path / "estimate.csv"
    assert main(["estimate", str(reports), "--output", str(est_csv), "--state", str(state)]) == 0
    summary = capsys.readouterr().out
    assert f"n={N:,} reports from 1 file(s)" in summary and str(est_csv) in summary
    resumed = Aggregator.load(state)
    assert np.array_equal(resumed.support, agg.support) and resumed.n == agg.n == N
    cli_est, py_est = resumed.estimate(), agg.estimate()
    assert np.array_equal(cli_est.counts, py_est.counts) and np.array_equal(cli_est.variance, py_est.variance)
    # the CSV the command wrote is the Python estimate's, data line included
    py_csv = tmp_path / "python.csv"
    replace(py_est, data=cli_est.data).to_csv(py_csv)
    assert est_csv.read_text() == py_csv.read_text()


def test_estimate_csv_comment_lines_carry_the_data_line(items, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    default, given = tmp_path / "a.ldpr", tmp_path / "b.ldpr"
    base = ["--mechanism", "GRR", "--epsilon", "1", "--domain", str(items["domain"]), "--seed", "1"]
    assert main(["perturb", "--input", str(items["csv"]), "--column", "item", "--output", str(default), *base]) == 0
    # another seed: the same items with the same seed are the same reports, which the estimate counts once
    assert main(["perturb", "--input", str(items["txt"]), "--output", str(given), *base[:-1], "2",
                 "--data", "shop baskets, Monday"]) == 0
    assert open_reports(default).data == f"items.csv, column 'item', {N} rows"
    est = tmp_path / "est.csv"
    assert main(["estimate", str(default), str(given), "--output", str(est), "--level", "0.9"]) == 0
    lines = est.read_text().splitlines()
    assert lines[0].startswith("# ldpkit ") and "GRR(d=5, epsilon=1.0)" in lines[0] and f"n={2 * N}" in lines[0]
    assert "0.9 normal intervals" in lines[0]
    assert lines[1:3] == [f"# data: items.csv, column 'item', {N} rows", "# data: shop baskets, Monday"]
    assert lines[3].split(",")[:3] == ["label", "estimate", "se"]
    assert [line.split(",")[0] for line in lines[4:]] == LABELS


def test_domain_from_the_data_is_said_and_stored(items, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.ldpr"
    assert main(["perturb", "--input", str(items["txt"]), "--output", str(out), "--mechanism", "OUE",
                 "--epsilon", "1", "--seed", "3"]) == 0
    note = [line for line in capsys.readouterr().err.splitlines() if "--domain" in line]
    assert len(note) == 1 and "most frequent first" in note[0]
    assert open_reports(out).domain == Domain.from_values(items["labels"], order="frequency")
    assert open_reports(out).data == f"items.txt, one item per line, {N} rows"


def test_seed_is_drawn_printed_and_repeats_the_run(items, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "1.ldpr", tmp_path / "2.ldpr"
    args = ["--input", str(items["txt"]), "--mechanism", "GRR", "--epsilon", "1", "--domain", str(items["domain"])]
    assert main(["perturb", *args, "--output", str(first)]) == 0
    seed = re.search(r"--seed (\d+)", capsys.readouterr().err).group(1)
    assert main(["perturb", *args, "--output", str(second), "--seed", seed]) == 0
    assert np.array_equal(open_reports(first).read(), open_reports(second).read())


def test_unknown_label_is_refused_by_name(items, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("item\napple\nkiwi\nmilk\nkiwi\n")
    out = tmp_path / "never.ldpr"
    assert main(["perturb", "--input", str(bad), "--column", "item", "--output", str(out), "--mechanism", "GRR",
                 "--epsilon", "1", "--domain", str(items["domain"])]) == 2
    line = one_cli_error(capsys)
    assert line.startswith("ldpkit perturb: error: ") and "'kiwi'" in line and "bad.csv" in line
    assert "2 of its 4 rows" in line
    assert not out.exists() and not Path(str(out) + ".partial").exists()


def test_truncated_reports_file_is_refused_with_its_name(items, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    for suffix in (".ldpr", ".csv"):
        good, cut = tmp_path / f"good{suffix}", tmp_path / f"cut{suffix}"
        assert main(["perturb", "--input", str(items["txt"]), "--output", str(good), "--mechanism", "OUE",
                     "--epsilon", "1", "--domain", str(items["domain"]), "--seed", "5"]) == 0
        raw = good.read_bytes()
        cut.write_bytes(raw[: len(raw) * 2 // 3])
        capsys.readouterr()
        assert main(["estimate", str(good), str(cut), "--output", str(tmp_path / "never.csv")]) == 2
        line = one_cli_error(capsys)
        assert str(cut) in line and "truncated" in line
        assert not (tmp_path / "never.csv").exists()
        with pytest.raises(ValueError, match="truncated"):  # --debug shows the kit's error itself
            main(["estimate", str(cut), "--debug"])


def test_files_of_different_epsilon_are_refused_naming_the_file(items, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    one, two = tmp_path / "eps1.ldpr", tmp_path / "eps2.ldpr"
    for path, eps in ((one, "1"), (two, "2")):
        assert main(["perturb", "--input", str(items["txt"]), "--output", str(path), "--mechanism", "GRR",
                     "--epsilon", eps, "--domain", str(items["domain"]), "--seed", "5"]) == 0
    capsys.readouterr()
    state = tmp_path / "state.json"
    assert main(["estimate", str(one), str(two), "--state", str(state)]) == 2
    line = one_cli_error(capsys)
    assert str(two) in line and "epsilon" in line and "GRR(d=5, epsilon=2.0)" in line
    assert not state.exists()  # nothing saved from a refused run
    assert main(["estimate", str(one), str(one)]) == 2
    assert "given twice" in one_cli_error(capsys)


def test_state_resume_equals_one_call(items, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    days = []
    for day, source in enumerate(("csv", "txt")):
        path = tmp_path / f"day{day}.ldpr"
        extra = ["--column", "item"] if source == "csv" else []
        assert main(["perturb", "--input", str(items[source]), *extra, "--output", str(path), "--mechanism", "OUE",
                     "--epsilon", "2", "--domain", str(items["domain"]), "--seed", str(day)]) == 0
        days.append(path)
    state, both, resumed = tmp_path / "state.json", tmp_path / "both.csv", tmp_path / "resumed.csv"
    assert main(["estimate", str(days[0]), "--state", str(state)]) == 0
    assert main(["estimate", str(days[1]), "--state", str(state), "--output", str(resumed)]) == 0
    assert f"n={2 * N:,} reports ({N:,} from the state {state}, {N:,} from 1 file(s))" in capsys.readouterr().out
    assert main(["estimate", *map(str, days), "--output", str(both)]) == 0
    assert resumed.read_text() == both.read_text()
    assert Aggregator.load(state).n == 2 * N


def test_estimate_prints_the_table_without_output(items, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.ldpr"
    assert main(["perturb", "--input", str(items["txt"]), "--output", str(path), "--mechanism", "GRR",
                 "--epsilon", "1", "--domain", str(items["domain"]), "--seed", "5"]) == 0
    capsys.readouterr()
    assert main(["estimate", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["label", "estimate", "se"]
    assert [line.split()[0] for line in lines[1:6]] == LABELS
    assert lines[-1].startswith("GRR(d=5, epsilon=1.0): n=1,000 reports from 1 file(s)")


def test_account_reports_prints_the_profile(items, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.csv"
    assert main(["perturb", "--input", str(items["txt"]), "--output", str(path), "--mechanism", "OUE",
                 "--epsilon", "1.5", "--domain", str(items["domain"]), "--seed", "5"]) == 0
    capsys.readouterr()
    assert main(["account", "--reports", str(path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  ldp_epsilon\s+1\.5$", out, re.M), out
    assert "Guarantee('ldp', epsilon=1.5): holds" in out
    # a mechanism named on the command line, with labels from a domain file
    assert main(["account", "--mechanism", "uRR", "--domain", str(items["domain"]), "--epsilon", "1",
                 "--sensitive", "apple,milk"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  uldp_epsilon\s+1$", out, re.M) and "'apple', 'milk'" in out
    assert re.search(r"^  ldp_epsilon\s+inf$", out, re.M)
    budgets = tmp_path / "budgets.csv"
    budgets.write_text("label,budget\n0,1\n1,2\n2,inf\n")
    assert main(["account", "--mechanism", "IPRR", "--d", "3", "--budgets", str(budgets)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  ipldp_satisfied\s+yes$", out, re.M) and "Guarantee('ipldp'" in out


@pytest.mark.parametrize(("spec", "extra", "family"), [
    ("ldp:epsilon=1", [], None),
    ("uldp:epsilon=1", ["--sensitive", "apple,bread"], "uRR"),
    ("ipldp", ["--budgets", "BUDGETS"], None),
])
def test_contract_calibration_keeps_the_contract(spec: str, extra: list[str], family, items, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    budgets = tmp_path / "budgets.csv"
    budgets.write_text("label,budget\napple,0.5\nbread,1\nmilk,1\neggs,inf\ntea,inf\n")
    extra = [str(budgets) if e == "BUDGETS" else e for e in extra]
    out = tmp_path / "r.ldpr"
    argv = ["perturb", "--input", str(items["csv"]), "--column", "item", "--output", str(out), "--contract", spec,
            *extra, "--domain", str(items["domain"]), "--seed", "9"]
    if family is not None:
        argv += ["--family", family.lower()]
    assert main(argv) == 0
    err = capsys.readouterr().err
    mech = open_reports(out).mechanism
    if family is None:
        assert "chose " in err and "smallest total variance at uniform counts" in err
    else:
        assert f"{family} calibrated to {mech.provenance.describe()}" in err
    contract = {"ldp:epsilon=1": lambda: contracts.ldp(5, 1.0),
                "uldp:epsilon=1": lambda: contracts.uldp(5, 1.0, [0, 1]),
                "ipldp": lambda: contracts.ipldp([0.5, 1.0, 1.0, np.inf, np.inf])}[spec]()
    assert contract.satisfied(mech)


@pytest.mark.parametrize(("argv", "message"), [
    (["--mechanism", "GRR", "--epsilon", "1", "--contract", "ldp:epsilon=1"], "exactly one"),
    (["--mechanism", "GRR"], "--mechanism GRR needs --epsilon"),
    (["--mechanism", "GRR", "--epsilon", "1", "--g", "4"], "--g does not apply to GRR"),
    (["--mechanism", "Foo", "--epsilon", "1"], "choose one of GRR, KRR"),
    (["--mechanism", "uRR", "--epsilon", "1"], "needs --sensitive"),
    (["--mechanism", "IPRR", "--budgets", "no-such-budgets.csv"], "neither a number nor an existing file"),
    (["--mechanism", "GRR", "--epsilon", "1", "--family", "GRR"], "--family applies with --contract only"),
    (["--contract", "ldp"], "--contract ldp: ldp needs epsilon, as in ldp:epsilon=VALUE"),  # contracts.parse
    (["--contract", "ldp:epsilon=1", "--epsilon", "1"], "--epsilon does not apply to --contract"),
    (["--contract", "ipldp"], "--contract ipldp: ipldp needs budgets (--budgets B)"),
    (["--contract", "xdp:epsilon=1"], "unknown notion 'xdp'; known notions: ldp, "),
    (["--contract", "ldp:epsilon=1", "--family", "nope"], "--family 'nope': unknown"),
    (["--mechanism", "GRR", "--epsilon", "1", "--chunk-rows", "0"], "--chunk-rows must be >= 1"),
    (["--mechanism", "GRR", "--epsilon", "1", "--seed", "-1"], "--seed must be a non-negative"),
    (["--mechanism", "GRR", "--epsilon", "-1"], "epsilon must be a finite positive budget"),
    (["--mechanism", "GRR", "--epsilon", "1", "--column", "nope"], "not a column of"),
    (["--mechanism", "GRR", "--epsilon", "1", "--no-column"], "a CSV file needs --column"),
])
def test_perturb_usage_errors_exit_2_before_any_work(argv: list[str], message: str, items, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "never.ldpr"
    column = [] if "--no-column" in argv or "--column" in argv else ["--column", "item"]
    argv = [a for a in argv if a != "--no-column"]
    assert main(["perturb", "--input", str(items["csv"]), *column, "--output", str(out), "--domain",
                 str(items["domain"]), *argv]) == 2
    line = one_cli_error(capsys)
    assert line.startswith("ldpkit perturb: error: ") and message in line, line
    assert not out.exists()


def test_file_errors_name_the_file(items, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--mechanism", "GRR", "--epsilon", "1"]
    missing = tmp_path / "missing.txt"
    assert main(["perturb", "--input", str(missing), "--output", str(tmp_path / "r.ldpr"), *base]) == 2
    assert f"--input {missing}: no such file" in one_cli_error(capsys)
    assert main(["perturb", "--input", str(items["txt"]), "--output", str(tmp_path / "no" / "r.ldpr"), *base]) == 2
    assert "does not exist" in one_cli_error(capsys)
    budgets = tmp_path / "budgets.csv"
    budgets.write_text("apple,1\nbread,2\n")
    assert main(["perturb", "--input", str(items["txt"]), "--output", str(tmp_path / "r.ldpr"), "--mechanism", "IPRR",
                 "--budgets", str(budgets), "--domain", str(items["domain"])]) == 2
    line = one_cli_error(capsys)
    assert str(budgets) in line and "no budget for 3 label(s)" in line and "'milk'" in line
    assert main(["estimate", str(tmp_path / "none.ldpr")]) == 2
    assert "none.ldpr: no such file" in one_cli_error(capsys)
    not_reports = tmp_path / "not.ldpr"
    not_reports.write_text("hello\n")
    assert main(["account", "--reports", str(not_reports)]) == 2
    assert f"{not_reports}: not an ldpkit report file" in one_cli_error(capsys)
    assert main(["account", "--mechanism", "GRR", "--epsilon", "1"]) == 2
    assert "needs --d D or --domain FILE" in one_cli_error(capsys)


# --------------------------------------------------------------------------- first-run faults (issue 33)


def _run(argv: list[str]) -> tuple[int, str, str]:
    """``main(argv)`` with its stdout and stderr (for property tests, which cannot take capsys)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(d=st.integers(2, 6), extra=st.lists(st.integers(0, 5), max_size=60), family=st.sampled_from(["GRR", "OUE"]),
       epsilon=st.sampled_from([0.5, 1.0, 2.5]), given_domain=st.booleans(), data=st.data())
def test_perturb_contract_for_any_rows_and_labels(d: int, extra: list[int], family: str, epsilon: float,
                                                  given_domain: bool, data) -> None:
    """Regression: the uniform counts ``n / d`` were refused as non-integer counts unless ``d`` divides ``n``."""
    labels = [f"item{i}" for i in range(d)]
    rows = data.draw(st.permutations(list(range(d)) + [x % d for x in extra]), label="rows")  # every label occurs
    with tempfile.TemporaryDirectory() as tmp:
        src, dom, out = Path(tmp) / "items.txt", Path(tmp) / "labels.txt", Path(tmp) / "r.ldpr"
        src.write_text("".join(f"{labels[x]}\n" for x in rows))
        dom.write_text("\n".join(labels) + "\n")
        argv = ["perturb", "--input", str(src), "--output", str(out), "--contract", f"ldp:epsilon={epsilon}",
                "--family", family, "--seed", "3"] + (["--domain", str(dom)] if given_domain else [])
        status, _, err = _run(argv)
        assert status == 0, err
        f = open_reports(out)
        assert f.n == len(rows) and len(f.domain) == d
        assert contracts.ldp(d, epsilon).satisfied(f.mechanism)
        uniform = np.full(d, len(rows) / d)
        total = float(np.sum(f.mechanism.variance_at(uniform)))
        assert f"total variance at uniform counts {total:.4g} for n = {len(rows)}" in err, err


def test_perturb_contract_over_every_family_when_d_does_not_divide_n(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The all-families path (no --family) at a tiny domain, 7 rows over 3 labels."""
    src, out = tmp_path / "items.txt", tmp_path / "r.ldpr"
    src.write_text("a\nb\nc\na\na\nb\na\n")
    assert main(["perturb", "--input", str(src), "--output", str(out), "--contract", "ldp:epsilon=1",
                 "--seed", "1"]) == 0
    err = capsys.readouterr().err
    assert "chose " in err and "smallest total variance at uniform counts" in err and "for n = 7" in err, err
    assert contracts.ldp(3, 1.0).satisfied(open_reports(out).mechanism)


def _many(tmp_path: Path, distinct: int, rows: int) -> Path:
    """A CSV whose column ``lat`` has ``distinct`` values over ``rows`` rows (a latitude-like numeric column)."""
    values = [f"{51 + (i % distinct) / 1000:.4f}" for i in range(rows)]
    path = tmp_path / f"lat-{distinct}-{rows}.csv"
    path.write_text("id,lat\n" + "".join(f"{i},{v}\n" for i, v in enumerate(values)))
    return path


def test_a_column_of_nearly_distinct_values_is_refused_without_domain(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from ldpkit.cli import MANY_LABELS

    base = ["--column", "lat", "--mechanism", "GRR", "--epsilon", "1", "--seed", "1"]
    out = tmp_path / "r.ldpr"
    path = _many(tmp_path, 3375, 3376)  # the reported case: latitudes, one value (almost) per row
    assert main(["perturb", "--input", str(path), *base, "--output", str(out)]) == 2
    line = one_cli_error(capsys)
    assert "3,375 distinct labels in 3,376 rows" in line and "--allow-many-labels" in line and "--domain FILE" in line
    assert not out.exists()
    assert main(["perturb", "--input", str(path), *base, "--output", str(out), "--allow-many-labels"]) == 0
    assert len(open_reports(out).domain) == 3375
    # the rule's edges: more than half the rows and more than MANY_LABELS distinct labels
    for distinct, rows, status in ((151, 300, 2), (150, 300, 0), (MANY_LABELS, MANY_LABELS, 0),
                                   (MANY_LABELS + 1, MANY_LABELS + 1, 2)):
        target = tmp_path / f"edge-{distinct}-{rows}.ldpr"
        assert main(["perturb", "--input", str(_many(tmp_path, distinct, rows)), *base,
                     "--output", str(target)]) == status, (distinct, rows)
    capsys.readouterr()
    # a domain given beforehand is used as it is; the flag does not apply with it
    dom = tmp_path / "labels.txt"
    dom.write_text("".join(f"{51 + i / 1000:.4f}\n" for i in range(3375)))
    assert main(["perturb", "--input", str(path), *base, "--output", str(tmp_path / "d.ldpr"),
                 "--domain", str(dom)]) == 0
    assert main(["perturb", "--input", str(path), *base, "--output", str(tmp_path / "e.ldpr"), "--domain", str(dom),
                 "--allow-many-labels"]) == 2
    assert "--allow-many-labels applies without --domain only" in one_cli_error(capsys)


def test_existing_output_is_replaced_only_with_force(items, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.ldpr"
    out.write_bytes(b"precious")
    base = ["perturb", "--input", str(items["txt"]), "--output", str(out), "--mechanism", "GRR", "--epsilon", "1",
            "--domain", str(items["domain"]), "--seed", "1"]
    assert main(base) == 2
    line = one_cli_error(capsys)
    assert f"--output {out}: the file exists" in line and "--force" in line
    assert out.read_bytes() == b"precious"
    assert main([*base, "--force"]) == 0
    assert open_reports(out).n == N
    # estimate: the same for --output; the --state file is updated in place without --force
    est, state = tmp_path / "est.csv", tmp_path / "state.json"
    est.write_text("precious\n")
    assert main(["estimate", str(out), "--output", str(est), "--state", str(state)]) == 2
    line = one_cli_error(capsys)
    assert f"--output {est}: the file exists" in line and "--force" in line
    assert est.read_text() == "precious\n" and not state.exists()
    assert main(["estimate", str(out), "--output", str(est), "--state", str(state), "--force"]) == 0
    assert est.read_text().startswith("# ldpkit ") and Aggregator.load(state).n == N
    second = tmp_path / "r2.ldpr"
    assert main([*base[:4], str(second), *base[5:-1], "2"]) == 0  # another seed: other reports
    assert main(["estimate", str(second), "--state", str(state)]) == 0
    assert Aggregator.load(state).n == 2 * N
    capsys.readouterr()
    # never the files it reads, even with --force
    assert main(["estimate", str(out), "--output", str(out), "--force"]) == 2
    assert "one of the report files read" in one_cli_error(capsys)
    assert main(["estimate", str(out), "--output", str(state), "--state", str(state), "--force"]) == 2
    assert "it is the --state file" in one_cli_error(capsys)
    assert main(["estimate", str(out), "--force"]) == 2
    assert "--force applies with --output only" in one_cli_error(capsys)


def test_encoding_flag_and_a_decoding_error_that_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin.csv"
    path.write_bytes("user,item\n1,café\n2,thé\n3,café\n".encode("latin-1"))
    out = tmp_path / "r.ldpr"
    base = ["perturb", "--input", str(path), "--column", "item", "--output", str(out), "--mechanism", "GRR",
            "--epsilon", "1", "--seed", "1"]
    assert main(base) == 2
    line = one_cli_error(capsys)
    assert f"--input {path}: not utf-8 text at line 2 (byte 0xe9)" in line and "--encoding latin-1" in line, line
    assert not out.exists()
    assert main([*base, "--encoding", "latin-1"]) == 0
    assert open_reports(out).domain == Domain(["café", "thé"])
    # a header that does not decode, and a text file (one item per line)
    header = tmp_path / "header.csv"
    header.write_bytes("user,catégorie\n1,a\n".encode("latin-1"))
    assert main([*base[:2], str(header), *base[3:4], "catégorie", *base[5:]]) == 2
    assert "not utf-8 text at line 1" in one_cli_error(capsys)
    txt = tmp_path / "latin.txt"
    txt.write_bytes("café\nthé\n".encode("cp1252"))
    assert main(["perturb", "--input", str(txt), "--output", str(tmp_path / "t.ldpr"), "--mechanism", "GRR",
                 "--epsilon", "1"]) == 2
    assert "--encoding" in one_cli_error(capsys)
    assert main(["perturb", "--input", str(txt), "--output", str(tmp_path / "t.ldpr"), "--mechanism", "GRR",
                 "--epsilon", "1", "--encoding", "cp1252"]) == 0
    capsys.readouterr()
    assert main([*base, "--encoding", "no-such-codec", "--force"]) == 2
    assert "--encoding 'no-such-codec': unknown encoding" in one_cli_error(capsys)


@pytest.mark.parametrize(("sep", "flag"), [(";", ";"), ("\t", "\\t"), ("\t", "tab"), ("|", "|")])
def test_delimiter_flag_and_a_wrong_separator_hint(sep: str, flag: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "items.csv"
    path.write_text(f"user{sep}item\n" + "".join(f"u{i}{sep}{LABELS[i % 5]}\n" for i in range(20)))
    out = tmp_path / "r.ldpr"
    base = ["perturb", "--input", str(path), "--column", "item", "--output", str(out), "--mechanism", "OUE",
            "--epsilon", "1", "--seed", "1"]
    assert main(base) == 2
    line = one_cli_error(capsys)
    shown = "'\\t'" if sep == "\t" else repr(sep)
    assert "--column 'item': not a column of" in line and f"pass --delimiter {shown}" in line, line
    assert main([*base, "--delimiter", flag]) == 0
    assert open_reports(out).n == 20 and set(open_reports(out).domain.labels) == set(LABELS)


@pytest.mark.parametrize(("argv", "message"), [
    (["--delimiter", ";;"], "--delimiter ';;': must be one character"),
    (["--delimiter", '"'], "must be one character other than a quote"),
    (["--delimiter", ";", "--no-column"], "--delimiter applies to a CSV input, with --column"),
    (["--column", "item", "--delimiter", ";"], "pass --delimiter ','"),  # a comma file read with ';'
])
def test_delimiter_usage_errors(argv: list[str], message: str, items, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    column = [] if "--no-column" in argv or "--column" in argv else ["--column", "item"]
    source = items["txt"] if "--no-column" in argv else items["csv"]
    argv = [a for a in argv if a != "--no-column"]
    out = tmp_path / "never.ldpr"
    assert main(["perturb", "--input", str(source), *column, "--output", str(out), "--mechanism", "GRR",
                 "--epsilon", "1", *argv]) == 2
    line = one_cli_error(capsys)
    assert message in line, line
    assert not out.exists()


def test_readme_own_data_example_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's "Your own data" section, its Python then its shell commands, in an empty directory."""
    import shlex
    import sys

    from conftest import run_process

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Your own data"):]
    section = section[:section.index("\n### ", 1)]
    python = re.findall(r"```python\n(.*?)```", section, re.S)
    shell = re.findall(r"```bash\n(.*?)```", section, re.S)
    assert len(python) == 1 and len(shell) == 1
    monkeypatch.chdir(tmp_path)
    exec(compile(python[0], "README.md", "exec"), {})
    # `ldpkit` is this interpreter's, whatever the PATH
    script = f"ldpkit() {{ {shlex.quote(sys.executable)} -m ldpkit \"$@\"; }}\n{shell[0]}"
    done = run_process(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Guarantee('ldp', epsilon=2.0): holds" in done.stdout
    both = (tmp_path / "both-days.csv").read_text()
    assert "# data: shop A, Monday" in both and "# data: items.csv, column 'item', 5 rows" in both
