"""The map of notions (ldpkit.notion_map; synthesis chapter, sec-synthesis-map): every pair decided,
every witness verified by enumeration, every implication unrefuted by the pool, and a wrong
implication caught."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpkit import accountant
from ldpkit.channels import ExplicitChannel
from ldpkit import notion_map as nm


@pytest.fixture(scope="module")
def scenario() -> nm.Scenario:
    return nm.Scenario()


@pytest.fixture(scope="module")
def pool(scenario: nm.Scenario) -> tuple[nm.Candidate, ...]:
    return nm.candidate_pool(scenario)


@pytest.fixture(scope="module")
def nmap(scenario: nm.Scenario, pool: tuple[nm.Candidate, ...]) -> nm.NotionMap:
    return nm.notion_map(scenario, pool=pool)


@pytest.fixture(scope="module")
def bmap(scenario: nm.Scenario) -> nm.NotionMap:
    return nm.budget_map(scenario)


def test_the_members_come_from_the_registry(scenario: nm.Scenario, bmap: nm.NotionMap) -> None:
    notions = accountant.registered_notions()
    members = nm.scenario_members(scenario)
    assert [m.name for m in members] == [n.display for n in notions]  # every builtin notion, in table order
    for m, n in zip(members, notions):
        assert m.guarantee == n.stated_at(scenario.d, scenario.epsilon, sensitive=list(scenario.sensitive),
                                          prior=np.array(scenario.prior), alpha=scenario.alpha)
        assert m.reference == scenario.epsilon
    # the per-item map: the notions that are context-aware LDP with a particular matrix, at E
    assert bmap.names == ("LDP(min E)", "MinID-LDP(E)", "ID-LDP(E)", "LDP(max E)")
    mats = nm.budget_matrices(scenario)
    for m in bmap.members:
        notion = accountant.get_notion(m.guarantee.notion)
        assert notion.pairwise is not None
        np.testing.assert_array_equal(mats[m.name], notion.pairwise(scenario.d, m.guarantee.params))


def test_all_72_pairs_are_decided(nmap: nm.NotionMap) -> None:
    assert nmap.names == ("LDP", "CA-LDP", "MinID-LDP", "ID-LDP", "IPLDP", "ULDP", "FLDP", "LIP", "MIP")
    pairs = {(r.source, r.target) for r in nmap.relations}
    assert len(nmap.relations) == len(pairs) == 72
    assert all(r.holds is not None for r in nmap.relations)
    # the findings the chapter states
    assert nmap.classes() == [nm.PAIRWISE, ("IPLDP",), ("ULDP",), ("FLDP",), ("LIP",), ("MIP",)]
    arrows = {(a[0], b[0]) for a, b in nmap.hasse()}
    assert arrows == {("LDP", "ULDP"), ("LDP", "FLDP"), ("LDP", "LIP"), ("IPLDP", "ULDP"), ("IPLDP", "FLDP"),
                      ("LIP", "MIP")}
    assert sum(r.holds for r in nmap.relations) == 31


def _check_witness(rel: nm.Relation) -> None:
    assert rel.witness is not None and rel.source_member is not None and rel.target_member is not None
    assert nm.verify_witness(rel), (rel.source, rel.target, rel.witness_name)
    ch = ExplicitChannel(rel.witness.matrix)  # enumerated by the accountant
    assert rel.source_member.guarantee.check(ch).satisfied
    target = rel.target_member
    if target.applies(ch):
        assert not target.guarantee.check(ch).satisfied
    value = target.value(ch)
    assert value > target.reference * (1 + 1e-9)
    assert (math.isinf(value) and math.isinf(rel.target_value)) or value == pytest.approx(rel.target_value, rel=1e-9)
    assert rel.source_value is not None and rel.source_value <= rel.source_member.reference * (1 + 1e-9)


def test_every_witness_is_verified_by_enumeration(nmap: nm.NotionMap, bmap: nm.NotionMap) -> None:
    for m in (nmap, bmap):
        for rel in m.relations:
            if rel.holds is False:
                _check_witness(rel)
            else:
                assert not nm.verify_witness(rel)


def test_every_implication_survives_the_pool(nmap: nm.NotionMap, pool: tuple[nm.Candidate, ...]) -> None:
    members = {m.name: m for m in nmap.members}
    table = {(c.name, m): members[m].holds(c.channel) for c in pool for m in members}
    for rel in nmap.relations:
        if rel.holds:
            for c in pool:
                assert not table[(c.name, rel.source)] or table[(c.name, rel.target)], (rel.source, rel.target, c.name)
    # the parameter map LIP(eps) => X(2 eps) holds on the pool, and the factor 2 is attained
    eps = nmap.scenario.epsilon
    for (a, b), (factor, _) in nm.PARAMETER_MAPS.items():
        for c in pool:
            if table[(c.name, a)]:
                assert members[b].value(c.channel) <= factor * eps * (1 + 1e-9), (a, b, c.name)
        assert nmap.relation(a, b).target_value == pytest.approx(factor * eps, rel=1e-9)


def test_a_wrong_implication_is_caught(scenario: nm.Scenario, pool: tuple[nm.Candidate, ...]) -> None:
    wrong = {**nm.PROVED, ("ULDP", "LDP"): "wrong"}
    with pytest.raises(nm.ImplicationRefuted, match="ULDP => LDP"):
        nm.notion_map(scenario, implications=wrong, pool=pool)
    # a wrong proof's consequence by transitivity is caught as well
    with pytest.raises(nm.ImplicationRefuted):
        nm.notion_map(scenario, implications={**nm.PROVED, ("MIP", "LIP"): "wrong"}, pool=pool)
    # dropping a proof leaves its pair undecided (no witness can exist), which the map reports
    weaker = {k: v for k, v in nm.PROVED.items() if k != ("LIP", "MIP")}
    rel = nm.notion_map(scenario, implications=weaker, pool=pool).relation("LIP", "MIP")
    assert rel.holds is None and rel.verdict == "undecided"


def test_ipldp_implies_fldp_only_up_to_one_half() -> None:
    s = nm.Scenario(alpha=0.6)
    rel = nm.notion_map(s).relation("IPLDP", "FLDP")
    assert rel.holds is False and nm.verify_witness(rel)


def test_budget_map_follows_the_closure_rule(bmap: nm.NotionMap, scenario: nm.Scenario) -> None:
    mats = nm.budget_matrices(scenario)
    chain = ["LDP(min E)", "MinID-LDP(E)", "ID-LDP(E)", "LDP(max E)"]
    for i, a in enumerate(chain):
        for j, b in enumerate(chain):
            if a != b:
                assert bmap.relation(a, b).holds == (i < j) == nm.ca_implies(mats[a], mats[b])
    # MinID-LDP(E) is LDP at 2 min E (lem-minid-ldp): a channel of the pool attains it (the CA-extremal one);
    # the witness the map names is a kit mechanism keeping MinID-LDP(E) at the matched budget (ID-SS at E
    # since the field's oracles joined the pool; IDUE-opt1 at E before), which violates LDP(min E) by less
    E = np.array(scenario.budgets)
    rel = bmap.relation("MinID-LDP(E)", "LDP(min E)")
    assert nm.verify_witness(rel) and rel.witness_name == "ID-SS at 1 E"
    minid, ldp_min = bmap.member("MinID-LDP(E)"), bmap.member("LDP(min E)")
    pool = nm.candidate_pool(scenario, bmap.members, matrices=mats)
    largest = max(ldp_min.value(c.channel) for c in pool if minid.holds(c.channel))
    assert largest == pytest.approx(2 * E.min())
    assert E.min() < rel.target_value < largest
    # CA(M) => CA(closure(M)) although M exceeds its closure somewhere: M <= M' is not necessary
    M = mats["MinID-LDP(E)"]
    C = nm.closure(M)
    assert nm.ca_implies(M, C) and np.any(M > C + 1e-12)


def test_ca_extremal_channel_is_tight() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        d = int(rng.integers(3, 6))
        M = rng.uniform(0.2, 3.0, size=(d, d))
        x, xp = rng.choice(d, 2, replace=False)
        ch = nm.ca_extremal_channel(M, int(x), int(xp))
        assert accountant.check_context_aware(ch, M).satisfied
        L = accountant.pairwise_log_ratio(ch)
        assert L[x, xp] == pytest.approx(nm.closure(M)[x, xp], rel=1e-9)
        # any M' below the closure at (x, xp) is violated
        Mp = nm.closure(M).copy()
        Mp[x, xp] *= 0.99
        assert not accountant.check_context_aware(ch, Mp).satisfied


def test_constructed_channels() -> None:
    pi = np.array(nm.DEFAULT_PRIOR)
    ch = nm.lip_extremal_channel(pi, 1.0)
    assert accountant.lip_epsilon(ch, pi) == pytest.approx(1.0) and accountant.ldp_epsilon(ch) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        nm.lip_extremal_channel(pi, 4.0)  # min(pi) > 1 / (1 + e^4): the factor 2 is out of reach
    ip = nm.ipldp_extremal_channel(8, [0, 1], 1.0)
    assert accountant.check_ipldp(ip, [1.0, 1.0], sensitive=[0, 1]).satisfied
    assert accountant.mutual_information(ip, pi) > 1.0
    split = nm.split_invertible(ip, [0, 1], 2)
    assert accountant.check_uldp(split, 1.0, sensitive=[0, 1]).satisfied
    assert math.isinf(accountant.fldp_epsilon(split, alpha=0.5))
    star = nm.star_channel(8, 0.05)
    assert accountant.check_fldp(star, 1.0, alpha=0.5).satisfied and accountant.mutual_information(star, pi) > 1


def test_scenario_validation() -> None:
    with pytest.raises(ValueError, match="full support"):
        nm.Scenario(prior=(0.5, 0.5, 0, 0, 0, 0, 0, 0))
    with pytest.raises(ValueError, match="sensitive"):
        nm.Scenario(sensitive=tuple(range(8)))
    with pytest.raises(ValueError, match="budgets"):
        nm.Scenario(budgets=(1.0,) * 7)


def test_the_map_is_deterministic(scenario: nm.Scenario) -> None:
    # its CPU time is a benchmark (benchmarks/slow_paths.py), not a test
    a = nm.notion_map(scenario)
    b = nm.notion_map(scenario)
    assert a.frame().equals(b.frame())


def test_registered_figure(nmap: nm.NotionMap) -> None:
    from ldpkit.experiments import RunConfig, run, style, synthesis_map  # noqa: F401 - registers the figure

    res = run("synthesis-notion-map", RunConfig(repeats=1, seed=5, scale=0.01, progress=False))
    assert len(res.frame) == 72 and style.audit_figure(res.figure) == []
    assert set(res.frame["verdict"]) == {"implies", "fails"}


def test_the_witnesses_do_not_depend_on_the_order_of_the_pool(scenario: nm.Scenario, pool: tuple[nm.Candidate, ...],
                                                               nmap: nm.NotionMap) -> None:
    # ties (uRR and IPRR at eps are the same channel) go by place and name, never by position
    shuffled = list(pool)
    np.random.default_rng(5).shuffle(shuffled)
    for other in (nm.notion_map(scenario, pool=tuple(reversed(pool))), nm.notion_map(scenario, pool=tuple(shuffled))):
        assert [(r.source, r.target, r.holds, r.reason, r.witness_name) for r in other.relations] == [
            (r.source, r.target, r.holds, r.reason, r.witness_name) for r in nmap.relations]
    # the kit's mechanisms come from the family registry: every budget family on items at every budget
    from ldpkit.family import families

    names = {c.name for c in pool if c.kind == "mechanism"}
    for fam in families(inputs="items", budget=True):
        at_one = f"{fam.name} at 1 on S" if "budgets" in fam.context else f"{fam.name} at 1"
        assert (at_one in names) == (fam.name != "LIP-binary"), fam.name  # two items only: left out at d = 8
