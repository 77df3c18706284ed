"""A new privacy notion inside the kit is one module with one registration, and no other file is edited.

The test copies the package ``ldpkit`` into a temporary directory, adds one module to the copy,
``ldpkit/accountant/renyi.py`` (Renyi LDP of an order ``alpha > 1``: for every pair of inputs,
``D_alpha(P(.|x) || P(.|x')) <= eps`` with
``D_alpha(P || Q) = log(sum_y P(y)^alpha Q(y)^(1 - alpha)) / (alpha - 1)``), checks that the copy
differs from the package by that one file, and runs the copy in a fresh process.  There the new
notion is in the accountant, in :func:`~ldpkit.accountant.privacy_profile` (GRR's value equals its
closed form, computed independently here), in :func:`ldpkit.contracts.parse` (satisfied on one
side of the boundary, not on the other) and among the members of the map of notions; and every
result that existed before is unchanged (the other notions' profile of a few mechanisms, every
relation of the map between two builtin notions).  The command line reads promises through
:func:`ldpkit.contracts.parse`, which needs nothing notion-specific: the copy's ``ldpkit perturb
--contract renyi-ldp:...`` calibrates GRR to the new promise, and its help lists the notion.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, run_process

#: the whole new notion: one module of ldpkit/accountant/, one register_notion call
RENYI_MODULE = '''\
"""Renyi LDP of an order alpha > 1: every pair of inputs within Renyi divergence eps (a notion added in one module)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_positive_real
from ..channels import ExplicitChannel
from ._core import ChannelLike, CheckResult, ClosedForms, Notion, as_channel, closed_forms, register_notion
from ._core import require_pairs, standard_parameters, within

__all__ = ["RENYI", "RenyiResult", "check_renyi", "renyi_epsilon"]

_RENYI: ClosedForms[tuple[float, tuple[int, int]]] = closed_forms("renyi-ldp", "Renyi LDP")


@dataclass(frozen=True, kw_only=True)
class RenyiResult(CheckResult):
    """Outcome of check_renyi."""

    notion = "renyi-ldp"

    epsilon: float
    order: float
    renyi_epsilon: float


@_RENYI.register(ExplicitChannel)
def _renyi_explicit(ch: ExplicitChannel, order: float) -> tuple[float, tuple[int, int]]:
    m = ch.matrix
    best: tuple[float, tuple[int, int]] = (0.0, (0, 1))
    for x in range(m.shape[0]):
        for xp in range(m.shape[0]):
            if x == xp:
                continue
            p, q = m[x], m[xp]
            if np.any((p > 0) & (q == 0)):
                value = math.inf
            else:
                on = p > 0
                value = math.log(float(np.sum(p[on] ** order * q[on] ** (1.0 - order)))) / (order - 1.0)
            if value > best[0]:
                best = (value, (x, xp))
    return best


def _order(order: Any) -> float:
    a = check_positive_real(order, "order")
    if a <= 1.0:
        raise ValueError(f"order must be greater than 1, got {order!r}")
    return a


def renyi_epsilon(ch: ChannelLike, order: float) -> float:
    """Smallest eps with Renyi LDP of this order: the largest divergence over ordered pairs of inputs."""
    channel = as_channel(ch)
    require_pairs(channel)
    return float(_RENYI.compute(channel, _order(order))[0])


def check_renyi(ch: ChannelLike, epsilon: float, *, order: float) -> RenyiResult:
    """Check Renyi LDP of an order at budget eps."""
    channel = as_channel(ch)
    eps = check_positive_real(epsilon, "epsilon")
    a = _order(order)
    value, pair = _RENYI.compute(channel, a)
    return RenyiResult(satisfied=bool(within(value, eps)), slack=eps - value, worst_inputs=pair,
                       epsilon=eps, order=a, renyi_epsilon=value)


def _parameters(d: int, params: dict[str, Any]) -> dict[str, Any]:
    out = standard_parameters(d, params)
    if "order" in out:
        out["order"] = _order(out["order"])
    return out


RENYI: Notion[RenyiResult] = register_notion(
    Notion("renyi-ldp", check_renyi, renyi_epsilon, context=("order",), display="Renyi-LDP",
           label="def-renyi-ldp", description="Renyi LDP of an order alpha > 1 (added in one module)",
           validate=_parameters, fits_by_mixing=True,
           at_budget=lambda d, epsilon, **facts: {"epsilon": float(epsilon), "order": 2.0})
)
'''

#: what the fresh process reports, as JSON on its last line (arguments: the order, GRR's epsilon, d)
PROBE = textwrap.dedent('''\
    import json, math, sys
    import numpy as np
    import ldpkit
    from ldpkit import GRR, OUE, IPRR, accountant, contracts
    from ldpkit import notion_map as nm

    out = {"file": ldpkit.__file__, "notions": list(accountant.notions()),
           "exported": hasattr(accountant, "RENYI") and "check_renyi" in accountant.__all__}
    order, eps, d = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    prof = accountant.privacy_profile(GRR(d, eps), params={"renyi-ldp": {"order": order}})
    out["renyi"] = prof.values.get("renyi_epsilon")
    out["renyi_without_order"] = accountant.privacy_profile(GRR(d, eps)).values.get("renyi_epsilon", "absent")
    out["satisfied"] = {}
    for factor in (1 - 1e-6, 1 + 1e-6):
        c = contracts.parse(f"renyi-ldp:epsilon={out['renyi'] * factor!r},order={order}", d=d)
        out["satisfied"][repr(factor)] = [c.name, c.satisfied(GRR(d, eps))]
    try:
        contracts.parse("renyi-ldp:epsilon=1", d=d)
    except ValueError as err:
        out["missing"] = str(err)
    try:
        contracts.parse("renyi-ldp:epsilon=1,order=0.5", d=d)
    except ValueError as err:
        out["bad_order"] = str(err)
    nmap = nm.notion_map()
    out["members"] = list(nmap.names)
    out["renyi_member"] = repr(nmap.member("Renyi-LDP").guarantee)
    out["map"] = nmap.frame().to_json(orient="records")
    out["verified"] = all(nm.verify_witness(r) for r in nmap.relations if r.holds is False)
    out["profiles"] = {repr(m): {k: v for k, v in accountant.privacy_profile(m, prior=np.full(4, 0.25)).values.items()}
                       for m in (GRR(4, 1.0), OUE(4, 1.0), IPRR([0.5, 1.0, 2.0, 2.0]))}
    print(json.dumps(out, default=repr))
    ''')


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def _grr_renyi(d: int, eps: float, order: float) -> float:
    """Renyi divergence of order ``order`` between two rows of GRR(d, eps): the same for every pair."""
    p = math.exp(eps) / (math.exp(eps) + d - 1)
    q = 1.0 / (math.exp(eps) + d - 1)
    total = p ** order * q ** (1 - order) + q ** order * p ** (1 - order) + (d - 2) * q
    return math.log(total) / (order - 1)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("kit")
    shutil.copytree(REPO / "ldpkit", root / "ldpkit", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "ldpkit" / "accountant" / "renyi.py").write_text(RENYI_MODULE)
    added = set(_digests(root / "ldpkit").items()) - set(_digests(REPO / "ldpkit").items())
    assert {name for name, _ in added} == {os.path.join("accountant", "renyi.py")}  # one file, nothing else edited
    env = {**os.environ, "PYTHONPATH": str(root), "LDPKIT_OFFLINE": "1"}
    proc = run_process([sys.executable, "-c", PROBE, "2.0", "1.0", "5"], cwd=root, env=env, capture_output=True,
                       text=True)
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    out["root"] = str(root)
    # the command line of the copy: --contract reads the new notion through contracts.parse, its help lists it
    (root / "items.txt").write_text("a\nb\nc\nd\ne\na\n")
    (root / "labels.txt").write_text("a\nb\nc\nd\ne\n")
    cli = [sys.executable, "-m", "ldpkit", "perturb", "--input", "items.txt", "--domain", "labels.txt", "--seed", "1",
           "--output", "renyi.ldpr", "--family", "GRR", "--contract", "renyi-ldp:epsilon=0.5,order=2"]
    perturb = run_process(cli, cwd=root, env=env, capture_output=True, text=True)
    shown = run_process([sys.executable, "-m", "ldpkit", "perturb", "--help"], cwd=root, env=env,
                        capture_output=True, text=True)
    out["cli"] = {"status": perturb.returncode, "err": perturb.stderr, "file": str(root / "renyi.ldpr"),
                  "help": " ".join(shown.stdout.split())}
    return out


def test_the_copy_with_the_new_module_is_what_runs(run: dict[str, Any]) -> None:
    assert Path(run["file"]).resolve().is_relative_to(Path(run["root"]).resolve())
    assert "renyi-ldp" in run["notions"] and run["exported"]


def test_it_appears_in_the_privacy_profile(run: dict[str, Any]) -> None:
    assert run["renyi"] == pytest.approx(_grr_renyi(5, 1.0, 2.0), rel=1e-12)
    assert run["renyi"] < 1.0  # below GRR's LDP epsilon, as every order's divergence is
    assert run["renyi_without_order"] is None  # its own parameter not given: not computed


def test_it_appears_in_contracts(run: dict[str, Any]) -> None:
    below, above = run["satisfied"][repr(1 - 1e-6)], run["satisfied"][repr(1 + 1e-6)]
    assert below == ["Renyi-LDP", False] and above == ["Renyi-LDP", True]
    assert run["missing"] == "renyi-ldp needs order, as in renyi-ldp:order=VALUE"
    assert run["bad_order"] == "order must be greater than 1, got 0.5"


def test_it_appears_in_the_notion_map_and_changes_no_existing_result(run: dict[str, Any]) -> None:
    from ldpkit import GRR, IPRR, OUE, accountant
    from ldpkit import notion_map as nm

    here = nm.notion_map()
    assert run["members"] == [*here.names, "Renyi-LDP"]
    assert run["renyi_member"] == "Guarantee('renyi-ldp', epsilon=1.0, order=2.0)"
    assert run["verified"]
    rows = json.loads(run["map"])
    new = [r for r in rows if "Renyi-LDP" in (r["source"], r["target"])]
    assert len(new) == 2 * len(here.names)
    assert all(r["verdict"] != "implies" for r in new)  # no proof is written for it: witnesses or undecided
    old = [r for r in rows if "Renyi-LDP" not in (r["source"], r["target"])]
    assert old == json.loads(here.frame().to_json(orient="records"))
    # the other notions' values are those of the kit without the new module
    import numpy as np

    for mech in (GRR(4, 1.0), OUE(4, 1.0), IPRR([0.5, 1.0, 2.0, 2.0])):
        theirs = dict(run["profiles"][repr(mech)])
        assert theirs.pop("renyi_epsilon") is None
        assert theirs == accountant.privacy_profile(mech, prior=np.full(4, 0.25)).values


def test_it_appears_in_the_command_line(run: dict[str, Any]) -> None:
    from ldpkit.reportio import open_reports

    cli = run["cli"]
    assert cli["status"] == 0, cli["err"]
    assert "contract Renyi-LDP (epsilon=0.5, order=2): GRR calibrated to GRR(d=5, epsilon=" in cli["err"]
    grr = open_reports(cli["file"]).mechanism  # a GRR file: readable here, without the new notion
    assert _grr_renyi(5, grr.epsilon, 2.0) == pytest.approx(0.5, rel=1e-6)  # at the promise's boundary
    assert "renyi-ldp:epsilon=E,order=O" in cli["help"]
