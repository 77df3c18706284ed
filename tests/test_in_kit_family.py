"""A new mechanism family inside the kit is one module with one registration, and no other file is edited.

The test copies the package ``ldpkit`` into a temporary directory and adds one module to the copy,
``ldpkit/ksubset.py``: the k-subset mechanism of ``tests/test_new_family.py`` (its channel kind
with a closed form, the mechanism, its report type and codec) and one ``register_family`` call,
declared here with its audit and its member at a budget.  It checks that the copy differs from
the package by that one file, then runs the copy in fresh processes.  Nothing imports the new
module by name: the registry finds it.  There the family is in the budget sweeps, passes the
mechanism contract (report files and batch aggregation included), is calibrated to an LDP promise
with a tightness certificate, is audited (the audit's family set and its member), joins the notion
map's pool and the synthesis tables, writes report files a fresh process reads back, and the
command line perturbs with it by name and calibrates it to a promise.  What the kit computed before
for the builtin families (the calibration of every builtin family, the most accurate family) is
unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, run_process
from test_new_family import family_module

NAME = "k-subset"


def ksubset_module() -> str:
    """The module: test_new_family's k-subset family, declared with its audit and its member at a budget."""
    source = family_module()
    old = "register_family(ksubset_declaration())\n"
    assert source.endswith(old)
    return source[: -len(old)] + textwrap.dedent('''\
        import dataclasses

        register_family(dataclasses.replace(
            ksubset_declaration(), audit="KSubset(d, 2, eps)", at_budget=lambda d, t: KSubset(d, 2, t)))
        ''')


#: what the fresh process reports, as JSON on its last line
PROBE = textwrap.dedent('''\
    import json, sys, warnings
    import numpy as np
    import ldpkit
    from ldpkit import contracts, notion_map
    from ldpkit.calibration import best, calibrate, calibrate_all
    from ldpkit.experiments import audit as aud, synthesis as syn
    from ldpkit.family import families, get_family
    from ldpkit.reportio import save_reports
    from ldpkit.testing import check_contract

    out = {"file": ldpkit.__file__}
    fam = get_family("k-subset")
    out["loaded_after_lookup"] = "ldpkit.ksubset" in sys.modules
    out["module"] = fam.mechanism.__module__
    out["sweeps"] = [s.name for s in fam.budget_sweeps()]
    out["budget_families"] = [f.name for f in families(budget=True)]
    member = fam.examples()[0]
    out["contract"] = check_contract(member, rng=0, samples_per_input=4_000, trials=100).rows_checked
    promise = contracts.ldp(5, 1.0)
    cal = calibrate("k-subset", promise)
    cert = cal.certificate()
    out["calibrated"] = [cal.satisfiable, repr(cal.mechanism), cert.verified and cert.keeps and cert.loosened_breaks]
    out["builtin"] = {name: repr(c.mechanism) for name, c in calibrate_all(promise).items() if name != "k-subset"}
    out["best"] = best(promise).family.name
    out["audited"] = [f.name for f in aud.audited_families()]
    out["audit_member"] = repr(aud.audited_member(fam, 1.0))
    out["pool"] = sorted({c.name for c in notion_map.candidate_pool(notion_map.Scenario(n_random=0))
                          if c.name.startswith("k-subset")})
    out["compared"] = list(syn.comparison_families())
    rng = np.random.default_rng(0)
    save_reports(sys.argv[1], member.perturb(rng.integers(0, member.d, 200), rng=rng), member)
    print(json.dumps(out, default=repr))
    ''')

#: a fresh process that reads the file back: the registry finds the module the file names
READ = textwrap.dedent('''\
    import json, sys
    from ldpkit.reportio import open_reports
    f = open_reports(sys.argv[1])
    print(json.dumps({"mechanism": repr(f.mechanism), "n": len(f.read())}))
    ''')

#: the same probe's builtin part in this kit, without the new module
HERE = textwrap.dedent('''\
    import json
    from ldpkit import contracts
    from ldpkit.calibration import best, calibrate_all
    promise = contracts.ldp(5, 1.0)
    print(json.dumps({"builtin": {name: repr(c.mechanism) for name, c in calibrate_all(promise).items()},
                      "best": best(promise).family.name}))
    ''')


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def _last_json(proc: Any) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("kit")
    shutil.copytree(REPO / "ldpkit", root / "ldpkit", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "ldpkit" / "ksubset.py").write_text(ksubset_module())
    added = set(_digests(root / "ldpkit").items()) - set(_digests(REPO / "ldpkit").items())
    assert {name for name, _ in added} == {"ksubset.py"}  # one file, nothing else edited
    env = {**os.environ, "PYTHONPATH": str(root), "LDPKIT_OFFLINE": "1"}
    env.pop("LDPKIT_DATA_DIR", None)
    report = root / "reports.ldpr"
    out = _last_json(run_process([sys.executable, "-c", PROBE, str(report)], cwd=root, env=env,
                                 capture_output=True, text=True))
    out["root"], out["report"] = str(root), str(report)
    out["read"] = _last_json(run_process([sys.executable, "-c", READ, str(report)], cwd=root, env=env,
                                         capture_output=True, text=True))
    here_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    out["here"] = _last_json(run_process([sys.executable, "-c", HERE], cwd=REPO, env=here_env,
                                         capture_output=True, text=True))
    items = root / "items.csv"
    items.write_text("item\n" + "".join(f"{i % 5}\n" for i in range(50)))
    cli: dict[str, Any] = {}
    for key, extra in (("mechanism", ["--mechanism", NAME, "--epsilon", "1"]),
                       ("contract", ["--contract", "ldp:epsilon=1", "--family", NAME])):
        target = root / f"{key}.ldpr"
        proc = run_process([sys.executable, "-m", "ldpkit", "perturb", "--input", str(items), "--column", "item",
                            "--output", str(target), "--seed", "3", *extra], cwd=root, env=env,
                           capture_output=True, text=True)
        cli[key] = {"status": proc.returncode, "err": proc.stderr, "file": str(target)}
    out["cli"] = cli
    return out


def test_the_copy_with_the_new_module_is_what_runs(run: dict[str, Any]) -> None:
    assert Path(run["file"]).resolve().is_relative_to(Path(run["root"]).resolve())
    # imported by the registry's first look-up, not by anything that names it
    assert run["module"] == "ldpkit.ksubset" and run["loaded_after_lookup"]


def test_it_appears_in_the_sweeps_and_passes_the_contract(run: dict[str, Any]) -> None:
    assert run["sweeps"] == [NAME]
    assert NAME in run["budget_families"]
    assert run["contract"] == 4  # every row of KSubset(4, 2, 1)'s channel checked (check_contract raises on a failure)


def test_it_is_calibrated_and_the_builtin_results_do_not_move(run: dict[str, Any]) -> None:
    satisfiable, member, tight = run["calibrated"]
    assert satisfiable and member.startswith("KSubset(d=5, k=2, epsilon=1") and tight
    assert run["builtin"] == run["here"]["builtin"]
    assert run["best"] == run["here"]["best"]


def test_it_is_audited_and_joins_the_notion_map_and_the_synthesis(run: dict[str, Any]) -> None:
    assert NAME in run["audited"]
    assert run["audit_member"].startswith("KSubset(d=")
    assert run["pool"], "no k-subset candidate in the notion map's pool"
    assert NAME in run["compared"]


def test_its_report_files_are_read_by_a_fresh_process(run: dict[str, Any]) -> None:
    assert run["read"] == {"mechanism": "KSubset(d=4, k=2, epsilon=1)", "n": 200}


def test_the_command_line_perturbs_with_it_by_name_and_calibrates_it(run: dict[str, Any]) -> None:
    for key in ("mechanism", "contract"):
        cli = run["cli"][key]
        assert cli["status"] == 0, cli["err"]
        assert Path(cli["file"]).stat().st_size > 0
    assert "k-subset" in run["cli"]["contract"]["err"]
