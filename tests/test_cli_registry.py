"""The command line reads the registries: every family and every notion, one registered later included.

* ``--mechanism NAME`` takes every registered family indexed by a budget that perturbs items
  (read from :func:`ldpkit.family.families` at collection time), with the flags its declared
  context names and ``--epsilon`` for its budget parameter unless it reads per-item budgets; the
  stored mechanism is the family's member with those values; a flag it does not read is refused
  in one line naming the families that read it.
* Every context key a family may declare has its flag, and the help lists the families from the
  registry (only when a help is shown: ``ldpkit --help`` loads no numerical library,
  ``tests/test_publishing.py``).
* ``--contract SPEC`` takes every registered notion (:func:`ldpkit.accountant.registered_notions`
  at collection time), its text and data built from the notion's own statement at a budget
  (:meth:`~ldpkit.accountant.Notion.stated_at`); calibrated with ``--family GRR``, the outcome is
  one line, exit status 0 when GRR keeps the promise (and the stored member keeps it) and 2 when
  it does not.
* A family registered by a module outside the kit, imported before the command runs, is named
  by ``--mechanism``, listed by the help and calibrated by ``--family``, with no file of ldpkit
  edited.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import one_cli_error, run_process
from ldpkit import accountant, contracts
from ldpkit.accountant import SHARED_PARAMETERS, CheckResult, Notion, register_notion, registered_notions
from ldpkit.accountant import unregister_notion
from ldpkit.calibration import calibrate
from ldpkit.cli import main
from ldpkit.family import CONTEXT_KEYS, Family, families
from ldpkit.reportio import open_reports

#: the families --mechanism must take, read from the registry when the tests are collected
NAMED = families(budget=True, inputs="items")
#: the notions --contract must take
NOTIONS = registered_notions()


def _labels(d: int) -> list[str]:
    return [f"x{i}" for i in range(d)]


def _files(tmp_path: Path, d: int) -> dict[str, Path]:
    """Items (every label once, then the first twice), the domain, per-item budgets and a prior, over ``d`` labels."""
    labels = _labels(d)
    items = tmp_path / "items.txt"
    items.write_text("\n".join(labels + labels[:1] * 2) + "\n")
    domain = tmp_path / "labels.txt"
    domain.write_text("\n".join(labels) + "\n")
    return {"items": items, "domain": domain}


def _value_file(path: Path, labels: list[str], values: Any, what: str) -> Path:
    path.write_text(f"label,{what}\n" + "".join(f"{lab},{float(v)!r}\n" for lab, v in zip(labels, values)))
    return path


# ------------------------------------------------------------------------------------- --mechanism


def test_every_context_key_has_its_flag_and_the_help_reads_the_registry(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["perturb", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for key in CONTEXT_KEYS:
        assert f"--{key} " in text, key
    for fam in NAMED:
        assert fam.name in text, fam.name
    for fam in families(budget=False):  # UE, Channel: not offered
        assert f" {fam.name}," not in text and f" {fam.name} " not in text, fam.name
    for notion in NOTIONS:
        assert notion.name in text, notion.name


@pytest.mark.parametrize("fam", NAMED, ids=[f.name for f in NAMED])
def test_every_budget_family_is_named_by_mechanism_with_its_context_flags(
        fam: Family, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = accountant.as_channel(fam.examples()[0]).n_inputs  # the size of its own small example: cheap
    files = _files(tmp_path, d)
    labels = _labels(d)
    budgets = np.array([0.5] + [1.0] * (d - 1))
    prior = np.arange(1, d + 1) / (d * (d + 1) / 2)
    given: dict[str, tuple[list[str], Any]] = {  # each context key: its flag's arguments, and the value it means
        "budgets": (["--budgets", str(_value_file(tmp_path / "budgets.csv", labels, budgets, "budget"))], budgets),
        "sensitive": (["--sensitive", labels[0]], np.array([0])),
        "prior": (["--prior", str(_value_file(tmp_path / "prior.csv", labels, prior, "probability"))], prior),
        "rule": (["--rule", "average"], "average"),
        "alpha": (["--alpha", "0.5"], 0.5),
        "g": (["--g", "3"], 3),
    }
    assert set(given) == set(CONTEXT_KEYS)
    reads_budgets = "budgets" in fam.context
    argv = [] if reads_budgets else ["--epsilon", "1.5"]
    for key in fam.context:
        argv += given[key][0]
    out = tmp_path / "r.ldpr"
    base = ["perturb", "--input", str(files["items"]), "--output", str(out), "--domain", str(files["domain"]),
            "--seed", "3", "--mechanism", fam.name.lower()]
    assert main([*base, *argv]) == 0, capsys.readouterr().err
    expected = fam.member(d, 1.0 if reads_budgets else 1.5, **{k: given[k][1] for k in fam.context})
    f = open_reports(out)
    assert f.mechanism.provenance == expected.provenance and f.n == d + 2
    assert f"{d + 2} reports of {expected.provenance.describe()}" in capsys.readouterr().out
    # a flag the family does not read: refused before any work, naming the families that read it
    foreign = [key for key in CONTEXT_KEYS if key not in fam.context] + (["epsilon"] if reads_budgets else [])
    for key in foreign:
        out.unlink(missing_ok=True)
        flag = given[key][0] if key != "epsilon" else ["--epsilon", "1"]
        assert main([*base, *argv, *flag]) == 2, key
        line = one_cli_error(capsys)
        readers = [f.name for f in NAMED if (key in f.context if key != "epsilon" else "budgets" not in f.context)]
        assert f"--{key} does not apply to {fam.name} (" in line and ", ".join(readers or ["no registered"]) in line
        assert not out.exists()


@pytest.mark.parametrize("fam", [f for f in families() if f not in NAMED], ids=lambda f: f.name)
def test_a_family_the_command_line_cannot_build_is_refused_with_its_reason(
        fam: Family, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _files(tmp_path, 3)
    out = tmp_path / "never.ldpr"
    assert main(["perturb", "--input", str(files["items"]), "--output", str(out), "--domain", str(files["domain"]),
                 "--mechanism", fam.name, "--epsilon", "1"]) == 2
    line = one_cli_error(capsys)
    why = "is not indexed by a budget" if fam.at_budget is None else "perturbs item sets"
    assert f"--mechanism {fam.name}: the {fam.name} family ({fam.description}) {why}" in line
    assert not out.exists()


def test_model_is_the_family_of_that_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--mechanism IDUE --model opt1`` (the spelling before the registry) names IDUE-opt1."""
    files = _files(tmp_path, 3)
    outs = [tmp_path / "a.ldpr", tmp_path / "b.ldpr"]
    for out, spelling in zip(outs, (["IDUE", "--model", "opt1"], ["idue-OPT1"])):
        assert main(["perturb", "--input", str(files["items"]), "--output", str(out), "--domain",
                     str(files["domain"]), "--seed", "1", "--budgets", "1", "--mechanism", *spelling]) == 0
    assert open_reports(outs[0]).mechanism.provenance == open_reports(outs[1]).mechanism.provenance
    capsys.readouterr()
    assert main(["account", "--d", "3", "--budgets", "1", "--mechanism", "IDUE", "--model", "opt7"]) == 2
    assert "--model opt7: there is no family IDUE-opt7 (its models: opt0, opt1, opt2;" in one_cli_error(capsys)


# ------------------------------------------------------------------------------------- --contract


def _contract_argv(notion: Any, d: int, tmp_path: Path) -> tuple[list[str], dict[str, Any]]:
    """``--contract`` and data flags for the notion's own statement at budget 1 on ``d`` items; its parameters."""
    labels = _labels(d)
    prior = np.arange(1, d + 1) / (d * (d + 1) / 2)
    stated = notion.stated_at(d, 1.0, sensitive=[0], prior=prior, alpha=0.5)
    assert stated is not None, f"{notion.name} states no guarantee at a budget from sensitive items, a prior, alpha"
    params = dict(stated.params)
    text = [f"{k}={v!r}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items()
            if k not in SHARED_PARAMETERS]
    argv = ["--contract", notion.name + (":" + ",".join(text) if text else "")]
    for key, value in params.items():
        if key == "budgets":
            argv += ["--budgets", str(_value_file(tmp_path / "budgets.csv", labels, value, "budget"))]
        elif key == "prior":
            argv += ["--prior", str(_value_file(tmp_path / "prior.csv", labels, value, "probability"))]
        elif key == "sensitive":
            argv += ["--sensitive", ",".join(labels[int(i)] for i in value)]
        elif key == "matrix":
            m = np.asarray(value, dtype=float)
            rows = [",".join(["", *labels])] + [",".join([labels[x], *("" if x == y else repr(float(m[x, y]))
                                                                        for y in range(d))]) for x in range(d)]
            path = tmp_path / "matrix.csv"
            path.write_text("\n".join(rows) + "\n")
            argv += ["--matrix", str(path)]
    return argv, params


@pytest.mark.parametrize("notion", NOTIONS, ids=[n.name for n in NOTIONS])
def test_every_notion_is_taken_by_contract(notion: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = 3
    files = _files(tmp_path, d)
    argv, params = _contract_argv(notion, d, tmp_path)
    out = tmp_path / "r.ldpr"
    status = main(["perturb", "--input", str(files["items"]), "--output", str(out), "--domain", str(files["domain"]),
                   "--seed", "2", "--family", "GRR", *argv])
    promise = contracts.promise(notion, d, **params)
    kept = calibrate("GRR", promise).satisfiable
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    if kept:
        assert status == 0 and "GRR calibrated to " in err[0] and promise.name in err[0], err
        assert promise.satisfied(open_reports(out).mechanism)
    else:
        assert status == 2 and "--family GRR: no member keeps" in err[0] and not out.exists(), err


def test_a_promise_the_family_cannot_keep_isone_cli_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _files(tmp_path, 3)
    out = tmp_path / "never.ldpr"
    assert main(["perturb", "--input", str(files["items"]), "--output", str(out), "--domain", str(files["domain"]),
                 "--contract", "ldp:epsilon=1", "--family", "fhr"]) == 2
    line = one_cli_error(capsys)
    assert "--family FHR: no member keeps contract LDP (epsilon=1): no member keeps the promise" in line
    assert not out.exists()


@dataclass(frozen=True, kw_only=True)
class FloorResult(CheckResult):
    """Outcome of the check of a notion no mechanism keeps below its floor (defined here)."""

    notion = "floor-ldp"


def _floor_epsilon(ch: Any, floor: float) -> float:
    return accountant.ldp_epsilon(ch) + float(floor)


def _check_floor(ch: Any, epsilon: float, *, floor: float) -> FloorResult:
    value = _floor_epsilon(ch, floor)
    return FloorResult(satisfied=value <= epsilon, slack=epsilon - value)


@pytest.fixture
def floor_notion() -> Iterator[Notion[FloorResult]]:
    """A notion registered by the test: LDP's epsilon plus a floor, so a budget below the floor is kept by nothing."""
    notion = register_notion(Notion("floor-ldp", _check_floor, _floor_epsilon, context=("floor",),
                                    display="Floor-LDP", label="def-floor-ldp",
                                    description="LDP epsilon plus a floor, defined in a test"))
    yield notion
    unregister_notion("floor-ldp")


def test_a_notion_registered_later_is_taken_and_no_family_keeping_it_isone_cli_error(
        floor_notion: Notion[FloorResult], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _files(tmp_path, 3)
    out = tmp_path / "r.ldpr"
    base = ["perturb", "--input", str(files["items"]), "--output", str(out), "--domain", str(files["domain"]),
            "--seed", "4"]
    assert main([*base, "--contract", "floor-ldp:epsilon=1.5,floor=0.5"]) == 0  # every family compared (best)
    err = capsys.readouterr().err
    assert "contract Floor-LDP (epsilon=1.5, floor=0.5): chose GRR, GRR(d=3, epsilon=" in err, err
    assert contracts.parse("floor-ldp:epsilon=1.5,floor=0.5", d=3).satisfied(open_reports(out).mechanism)
    out.unlink()
    # a budget below 1 too (regression: IPRR's search once left its budget range at t = 1e-6 and raised)
    for spec in ("floor-ldp:epsilon=1,floor=2", "floor-ldp:epsilon=0.5,floor=1"):
        assert main([*base, "--contract", spec]) == 2
        line = one_cli_error(capsys)
        assert line.startswith(f"ldpkit perturb: error: --contract {spec}: no family keeps "
                               "Floor-LDP: GRR: no member keeps the promise"), line
        assert not out.exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["--contract", "ldp:epsilon=1", "--budgets", "1"], "--contract ldp:epsilon=1: ldp takes no budgets"),
    (["--contract", "lip:epsilon=1"], "lip needs prior (--prior FILE)"),
    (["--contract", "context-aware"], "context-aware needs matrix (--matrix FILE)"),
    (["--contract", "uldp:epsilon=1"], "uldp needs sensitive (--sensitive S)"),
    (["--contract", "fldp:epsilon=1"], "fldp needs alpha, as in fldp:alpha=VALUE"),
    (["--contract", "id-ldp", "--budgets", "1", "--rule", "average"], "--rule does not apply to --contract"),
    (["--contract", "ldp:epsilon=1", "--g", "3"], "--g does not apply to --contract"),
    (["--contract", "ldp:epsilon=1", "--family", "UE"], "--family UE: the UE family"),
    (["--mechanism", "GRR", "--epsilon", "1", "--matrix", "m.csv"], "--matrix applies with --contract only"),
])
def test_contract_usage_errors(argv: list[str], message: str, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    files = _files(tmp_path, 3)
    out = tmp_path / "never.ldpr"
    assert main(["perturb", "--input", str(files["items"]), "--output", str(out), "--domain", str(files["domain"]),
                 *argv]) == 2
    assert message in one_cli_error(capsys)
    assert not out.exists()


# ------------------------------------------------------------------------------------- a family from outside the kit

#: a family declared by a user's module: uRR at half its budget parameter, reading the sensitive items
HALF_URR = '''\
from ldpkit.family import Family, register_family
from ldpkit.urr import URR


def _at_budget(d, t, sensitive=None):
    return URR(d, t / 2, range(d) if sensitive is None else sensitive)


register_family(Family("uRR-half", "none", URR, lambda: (URR(3, 0.5, [0]),), "uRR at half the budget parameter",
                       at_budget=_at_budget, context=("sensitive",), aliases=("HALF",)))
'''

RUN = "import sys, half_urr; from ldpkit.cli import main; raise SystemExit(main(sys.argv[1:]))"


def test_a_family_registered_outside_the_kit_appears_in_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "half_urr.py").write_text(HALF_URR)
    files = _files(tmp_path, 3)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "LDPKIT_OFFLINE": "1"}

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return run_process([sys.executable, "-c", RUN, *argv], capture_output=True, text=True, env=env,
                           cwd=tmp_path)

    base = ["perturb", "--input", str(files["items"]), "--domain", str(files["domain"]), "--seed", "5"]
    named = run(*base, "--output", "r.ldpr", "--mechanism", "half", "--epsilon", "2", "--sensitive", "x1")
    assert named.returncode == 0, named.stderr
    assert "5 reports of URR(d=3, epsilon=1.0, sensitive=(1,))" in named.stdout
    refused = run(*base, "--output", "s.ldpr", "--mechanism", "urr-HALF", "--epsilon", "2")
    assert refused.returncode == 2 and refused.stderr.strip() == "ldpkit perturb: error: --mechanism uRR-half needs --sensitive"
    other = run(*base, "--output", "s.ldpr", "--mechanism", "GRR", "--epsilon", "2", "--sensitive", "x1")
    assert other.returncode == 2 and "it is a parameter of uRR, uRAP, uRR-half)" in other.stderr
    calibrated = run(*base, "--output", "c.ldpr", "--contract", "uldp:epsilon=1", "--sensitive", "x0",
                     "--family", "uRR-half")
    assert calibrated.returncode == 0, calibrated.stderr
    assert "uRR-half calibrated to URR(d=3, epsilon=1.0, sensitive=(0,)) (largest accepted budget, parameter 2)" in (
        calibrated.stderr)
    shown = run("perturb", "--help")
    assert shown.returncode == 0 and "uRR-half (HALF)" in " ".join(shown.stdout.split())
    # without the module, the name is unknown (nothing in ldpkit was edited)
    plain = run_process([sys.executable, "-m", "ldpkit", *base, "--output", "p.ldpr", "--mechanism", "half",
                         "--epsilon", "2", "--sensitive", "x1"], capture_output=True, text=True,
                        env={**os.environ, "LDPKIT_OFFLINE": "1"}, cwd=tmp_path)
    assert plain.returncode == 2 and "--mechanism 'half': unknown; choose one of GRR, KRR" in plain.stderr
    assert open_reports(tmp_path / "r.ldpr").mechanism.provenance.describe() == "URR(d=3, epsilon=1.0, sensitive=(1,))"

