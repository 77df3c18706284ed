"""The auditing chapter's registered experiments (:mod:`ldpkit.experiments.audit`), at a small scale.

1. Each experiment runs and its frame has the documented columns.
2. The tightness ratio exceeds 1 no more often than the audit's confidence allows: over all
   runs, the number of bounds above the exact epsilon is at most the Binomial(runs, alpha) upper
   quantile at ``1 - FALSE_ALARM``.
3. The samples-to-10% column agrees with the frame's medians.
4. The mutant table flags every mutant and no control.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import ldpkit.experiments.audit as aud  # registers the audit experiments
from ldpkit.experiments import RunConfig, get, run


@pytest.fixture(scope="module")
def tightness():
    # three families, two budgets, sizes 1e2 .. 1e5: a few seconds
    return aud.compute_tightness(RunConfig(repeats=3, seed=1, progress=False), families=["GRR", "OUE", "IPRR"],
                                 budgets=(0.5, 2.0), sizes=aud.SIZES[:7])


def test_the_four_experiments_are_registered() -> None:
    for eid, kind in (("audit-tightness", "figure"), ("audit-validity", "table"), ("audit-mutants", "table"),
                      ("audit-notions", "table")):
        exp = get(eid)
        assert exp.kind == kind and exp.paper == aud.PAPER and exp.item.startswith("Audit")


def test_tightness_frame_has_its_columns(tightness) -> None:
    f = tightness.frame
    assert list(f.columns) == ["mechanism", "family", "eps", "exact", "events", "n", "repeat", "bound", "ratio",
                               "n_tight"]
    assert len(f) == 3 * 2 * 2 * 7 * 3
    assert set(f["events"]) == {"white", "black"} and (f["bound"] >= 0).all()
    np.testing.assert_allclose(f["ratio"], f["bound"] / f["exact"])


def test_tightness_ratio_exceeds_one_no_more_than_alpha_allows(tightness) -> None:
    f = tightness.frame
    runs, above = len(f), int((f["ratio"] > 1).sum())
    assert above <= stats.binom.ppf(1 - aud.FALSE_ALARM, runs, aud.ALPHA), (above, runs)


def test_samples_to_tight_agrees_with_the_medians(tightness) -> None:
    f = tightness.frame
    summ = aud.tightness_summary(f)
    for (mech, eps, events), grp in f.groupby(["mechanism", "eps", "events"]):
        n_tight = grp["n_tight"].iloc[0]
        assert (grp["n_tight"].fillna(-1) == (-1 if math.isnan(n_tight) else n_tight)).all()
        med = summ[(summ["mechanism"] == mech) & (summ["eps"] == eps) & (summ["events"] == events)].sort_values("n")
        reached = med[med["median"] >= aud.TIGHT]["n"]
        if math.isnan(n_tight):
            assert reached.empty
        else:
            assert n_tight == reached.min() and (med[med["n"] < n_tight]["median"] < aud.TIGHT).all()
    table = aud.samples_table(f)
    assert list(table.columns) == ["mechanism", "eps", "white", "black", "black_over_white"]
    assert len(table) == 3 * 2


def test_tightness_figure_follows_the_book_style(tightness) -> None:
    from ldpkit.experiments import style

    assert style.audit_figure(aud.draw_tightness(tightness)) == []


def test_every_unaudited_family_has_a_reason() -> None:
    from ldpkit.family import families

    names = {f.name for f in families()}
    audited = {f.name for f in aud.audited_families()}
    skipped = aud.skipped_families()
    assert names == audited | set(skipped) and not audited & set(skipped)
    assert all(reason and "not yet audited" not in reason for reason in skipped.values())
    assert audited == {"GRR", "RAPPOR", "OUE", "OLH", "HR", "IPRR", "IDUE-opt1", "LIP-kary",
                       "SHE", "THE", "BLH", "FLH", "CMS", "HCMS", "SS", "HM"}


def test_the_audited_members_are_built_from_the_registry() -> None:
    from ldpkit import GRR, HR, OLH, OUE, RAPPOR
    from ldpkit.idue import IDUE
    from ldpkit.iprr import IPRR
    from ldpkit.blh import BLH
    from ldpkit.flh import FLH
    from ldpkit.hadamard_mechanism import HM
    from ldpkit.histogram import SHE, THE
    from ldpkit.lip import optimal_kary_lip
    from ldpkit.sketch import CMS, HCMS
    from ldpkit.subset import SubsetSelection

    for eps in aud.BUDGETS:
        half = [eps / 2, eps, eps, eps]
        expected = {"GRR": GRR(aud.D, eps), "RAPPOR": RAPPOR(aud.D, eps), "OUE": OUE(aud.D, eps),
                    "OLH": OLH(aud.D, eps), "HR": HR(aud.D, eps), "IPRR": IPRR(half),
                    "IDUE-opt1": IDUE(half, model="opt1"),
                    "LIP-kary": optimal_kary_lip(list(aud.LIP_PRIOR), eps).oracle()}
        # the field's oracles (issue 35), compared by configuration: some channels are continuous
        # (SHE) or over a pool of hash functions, with no small explicit form
        field = {"SHE": SHE(aud.D, eps), "THE": THE(aud.D, eps), "BLH": BLH(aud.D, eps), "FLH": FLH(aud.D, eps),
                 "CMS": CMS(aud.D, eps), "HCMS": HCMS(aud.D, eps), "SS": SubsetSelection(aud.D, eps),
                 "HM": HM(aud.D, eps)}
        for fam in aud.audited_families():
            got = aud.audited_member(fam, eps)
            if fam.name in field:
                assert type(got) is type(field[fam.name]) and got == field[fam.name], fam.name
                continue
            want = expected[fam.name]
            assert type(got) is type(want)
            np.testing.assert_array_equal(got.channel().to_explicit().matrix, want.channel().to_explicit().matrix)
    with pytest.raises(ValueError, match="FHR"):
        aud.audited_member("FHR", 1.0)


def test_validity_table_stays_under_its_limit() -> None:
    res = run("audit-validity", RunConfig(repeats=20, seed=2, progress=False))
    f = res.frame
    assert {"notion", "mechanism", "events", "runs", "alpha", "exceed", "rate", "limit", "ok", "max_excess"} <= set(f)
    assert set(f["notion"]) == {"LDP", "pairwise", "IPLDP", "LIP"} and len(f) == 2 * 7
    assert f["ok"].all() and (f["runs"] == 20).all() and (f["exceed"] <= f["limit"]).all()


def test_mutant_table_flags_every_mutant_and_no_control() -> None:
    f = run("audit-mutants", RunConfig(repeats=1, seed=0, progress=False)).frame
    assert {"name", "kind", "claimed", "exact_excess", "n_white", "n_black", "n_stated", "flagged_at_max"} <= set(f)
    mut, ctl = f[f["kind"] == "mutant"], f[f["kind"] == "control"]
    assert len(mut) == 5 and len(ctl) == 2
    assert mut[["n_white", "n_black"]].notna().all().all() and mut["flagged_at_max"].all()
    # caught no later than the tests assert
    assert (mut["n_white"] <= mut["n_stated"]).all() and (mut["n_black"] <= mut["n_stated"]).all()
    assert (mut["exact_excess"] > 0).all() and (ctl["exact_excess"] <= 1e-9).all()
    assert not ctl["flagged_at_max"].any() and ctl[["n_white", "n_black"]].isna().all().all()


def test_notions_table_small_run() -> None:
    f = run("audit-notions", RunConfig(repeats=1, seed=0, scale=0.1, progress=False)).frame
    assert {"notion", "mechanism", "entry", "budget", "exact", "white", "black", "violated"} <= set(f)
    assert not f["violated"].any() and (f["structural"] == 0).all()
    assert (f["white"] <= f["exact"] + 1e-12).mean() > 0.5
