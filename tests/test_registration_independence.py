"""Registering a family moves no existing result, and every consumer of the registry takes the new family.

Issue 34: every consumer reads the family registry (:mod:`ldpkit.family`), and every simulation
seed indexed by a family is named by a stable key (:func:`ldpkit._rng.keyed_seed`), not numbered
by the family's position.  So:

1. A family registered by a fixture (the k-subset mechanism of ``tests/test_new_family.py`` with
   ``k = d - 1``, a poor mechanism that is never the most accurate, declared to sort *first* in
   every table) leaves every existing row of every registered experiment of the modules that read
   the registry bit-identical, at a small scale, and adds its own rows.
2. The notion map's decisions do not move when families are registered after the builtin ones
   (the default display order): a copy of GRR under another name, whose candidates tie exactly
   with GRR's, and the fixture family above.  Witnesses never go by position in the pool; an
   exact tie between two kit mechanisms goes to the family shown first, so a family declared to
   sort before the builtin ones may be named instead of an equally good builtin witness.
3. A registered family with ``audit`` and ``at_budget`` appears in the audit's audited set, the
   notion map's pool, the synthesis tables and the candidates of :func:`ldpkit.calibration.best`,
   with no edit to any of them.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ldpkit.experiments.audit as aud
import ldpkit.experiments.synthesis as syn
import ldpkit.experiments.synthesis_map  # noqa: F401  (registers synthesis-notion-map)
from ldpkit import contracts, notion_map
from ldpkit.calibration import best, calibrate
from ldpkit.experiments import RunConfig, get, list_experiments
from ldpkit.family import Family, get_family, register_family, unregister_family
from test_new_family import KSubset, ksubset_declaration

#: every registered experiment of a module that reads the family registry, and the scale it runs at here
ITERATING: dict[str, RunConfig] = {
    "audit-tightness": RunConfig(scale=1e-4, repeats=2, progress=False),
    "audit-validity": RunConfig(repeats=2, progress=False),
    "audit-mutants": RunConfig(scale=1e-3, repeats=1, progress=False),
    "audit-notions": RunConfig(scale=1e-3, repeats=1, progress=False),
    "synthesis-comparison": RunConfig(scale=0.01, repeats=2, progress=False),
    "synthesis-wins": RunConfig(scale=0.01, repeats=1, progress=False),
    "synthesis-guarantees": RunConfig(repeats=1, progress=False),
    "synthesis-papers": RunConfig(repeats=1, progress=False),
}
#: tested by test_the_notion_maps_decisions_do_not_move (families registered after the builtin ones)
MAP = "synthesis-notion-map"
#: those whose rows the new family joins
JOINED = ("audit-tightness", "synthesis-comparison", "synthesis-wins", "synthesis-guarantees")
#: the name of the fixture family
NEW = "k-all-but-one"


def _poor_subset() -> Family:
    """The k-subset mechanism with ``k = d - 1``, sorting first in every table, audited."""
    return dataclasses.replace(ksubset_declaration(), name=NEW, at_budget=lambda d, t: KSubset(d, d - 1, t),
                               order=1, audit="KSubset(d, d - 1, eps)", sweeps=None)


@pytest.fixture
def poor_subset() -> Iterator[Family]:
    fam = register_family(_poor_subset())
    try:
        yield fam
    finally:
        unregister_family(NEW)


def _run(eid: str) -> pd.DataFrame:
    exp = get(eid)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the Retail stand-in says it is one
        config = ITERATING.get(eid, RunConfig(repeats=1, progress=False))
        return exp.compute(config.replace(seed=exp.defaults.seed)).frame


def test_the_experiments_that_iterate_the_families_are_all_tested() -> None:
    # every experiment of a module that reads the family registry or the notion map's pool is in ITERATING
    here = Path(aud.__file__).parent
    readers = {p.stem for p in here.glob("*.py")
               if any(call in p.read_text() for call in ("families(", "notion_map(", "candidate_pool("))}
    found = {e.id for e in list_experiments() if e.compute.__module__.rsplit(".", 1)[-1] in readers}
    assert found == {*ITERATING, MAP}


def test_a_family_registered_first_moves_no_existing_row() -> None:
    before = {eid: _run(eid) for eid in ITERATING}
    register_family(_poor_subset())
    try:
        after = {eid: _run(eid) for eid in ITERATING}
    finally:
        unregister_family(NEW)
    for eid in ITERATING:
        old, new = before[eid], after[eid]
        keys = [c for c in ("family", "mechanism", "registry") if c in new.columns]
        mine = np.zeros(len(new), dtype=bool)
        for col in keys:
            mine |= (new[col] == NEW).to_numpy()
        assert mine.any() == (eid in JOINED), f"{eid}: the new family's rows"
        kept = new[~mine].reset_index(drop=True)
        if eid == "audit-tightness":  # its new rows come first: the old ones, in their order
            kept = kept.sort_values(["mechanism", "eps", "events", "n", "repeat"], kind="stable").reset_index(drop=True)
            old = old.sort_values(["mechanism", "eps", "events", "n", "repeat"], kind="stable").reset_index(drop=True)
        pd.testing.assert_frame_equal(kept, old, check_exact=True, obj=eid)


def test_the_notion_maps_decisions_do_not_move() -> None:
    def decisions(m: notion_map.NotionMap) -> list[tuple[object, ...]]:
        return [(r.source, r.target, r.holds, r.reason, r.witness_name, r.source_value, r.target_value)
                for r in m.relations]

    scenario = notion_map.Scenario()
    one, per_item = decisions(notion_map.notion_map(scenario)), decisions(notion_map.budget_map(scenario))
    reference = _run(MAP)
    # registered after the builtin families (the default order)
    copy = dataclasses.replace(get_family("GRR"), name="GRR-copy", aliases=(), order=1000, audit=None)
    late = dataclasses.replace(_poor_subset(), order=1000)
    register_family(copy)
    register_family(late)
    try:
        pool = notion_map.candidate_pool(scenario)
        assert {"GRR-copy at 1", f"{NEW} at 1"} <= {c.name for c in pool}
        assert decisions(notion_map.notion_map(scenario, pool=pool)) == one
        assert decisions(notion_map.budget_map(scenario)) == per_item
        pd.testing.assert_frame_equal(_run(MAP), reference, check_exact=True)
    finally:
        unregister_family("GRR-copy")
        unregister_family(NEW)


def test_a_registered_family_reaches_every_consumer(poor_subset: Family) -> None:
    # the audit
    assert poor_subset in aud.audited_families() and NEW not in aud.skipped_families()
    assert aud.audited_member(poor_subset, 1.0) == KSubset(aud.D, aud.D - 1, 1.0)
    # the notion map's pool, at every budget of its grid
    names = {c.name for c in notion_map.candidate_pool(notion_map.Scenario(n_random=0))}
    assert {f"{NEW} at {f:g}" for f in notion_map.BUDGET_GRID} <= names
    # the synthesis tables: the compared families and the guarantee table's representatives
    assert NEW in syn.comparison_families()
    rows = {row: member for row, _, member in syn.representatives()}
    assert rows[NEW] == KSubset(syn.scenario().d, syn.scenario().d - 1, syn.scenario().eps_s)
    # calibration, and the candidates of best
    promise = contracts.ldp(5, 1.0)
    assert calibrate(NEW, promise).satisfiable
    assert best(promise).family.name != NEW  # a poor mechanism: a candidate, never the winner
    assert best(promise, families=[NEW]).family is poor_subset
