"""The ID-LDP experiment protocol (ldpkit.experiments.idldp): inputs, bookkeeping, and that the
simulated errors agree with their exact expectations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpkit import idue
from ldpkit.experiments import RunConfig
from ldpkit.experiments import idldp as exp
from ldpkit.sets import as_itemsets
from ldpkit.unary import OUE, RAPPOR

COUNTS = np.array([400, 250, 120, 80, 60, 40, 30, 15, 5, 0] * 3)  # m = 30, n = 3000


def _itemsets(seed: int = 0, n: int = 1500, m: int = 12):
    gen = np.random.default_rng(seed)
    sizes = gen.integers(0, 5, n)
    p = 1.0 / np.arange(1, m + 1)
    p /= p.sum()
    rows = [sorted(gen.choice(m, size=int(s), replace=False, p=p).tolist()) for s in sizes]
    return as_itemsets(rows, m)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: exp.run_single_item(COUNTS, []), "epsilons is empty"),
        (lambda: exp.run_single_item(COUNTS, [0.0]), "epsilon"),
        (lambda: exp.run_single_item(COUNTS, [math.nan]), "epsilon"),
        (lambda: exp.run_single_item(COUNTS, [1.0], mechanisms=("GRR",)), "unknown mechanism"),
        (lambda: exp.run_single_item(COUNTS, [1.0], mechanisms=()), "at least one mechanism"),
        (lambda: exp.run_single_item(COUNTS, [1.0], ks=(31,)), "every k"),
        (lambda: exp.run_single_item(COUNTS, [1.0], config=RunConfig(repeats=0)), "repeats"),
        (lambda: exp.run_single_item(COUNTS, [1.0], config=RunConfig(scale=0.5)), "scale"),
        (lambda: exp.run_single_item(COUNTS, [1.0], config={"repeats": 2}), "RunConfig"),
        (lambda: exp.run_single_item(COUNTS, [1.0], cache={}), "SolutionCache"),
        (lambda: exp.run_budget_shares(COUNTS, [0.5], eps_small=1.0, eps_large=2.0,
                                       config=RunConfig(scale=0.1)), "scale"),
        (lambda: exp.run_itemsets(_itemsets(n=10), [1.0], [1], config=RunConfig(scale=0.9)), "scale"),
        (lambda: exp.run_itemsets(_itemsets(n=10), [1.0], [1], ks=(5,), theory="yes"), "theory"),
        (lambda: exp.run_single_item([-1, 2], [1.0]), "count"),
        (lambda: exp.run_budget_shares(COUNTS, [0.5], eps_small=2.0, eps_large=1.0), "below"),
        (lambda: exp.run_budget_shares(COUNTS, [0.0], eps_small=1.0, eps_large=2.0), "shares"),
        (lambda: exp.run_budget_shares(COUNTS, [], eps_small=1.0, eps_large=2.0), "shares"),
        (lambda: exp.run_itemsets([[0, 1]], [1.0], [2]), "ItemSets"),
        (lambda: exp.run_itemsets(_itemsets(n=10), [1.0], []), "ells is empty"),
        (lambda: exp.run_itemsets(_itemsets(n=10), [1.0], [0]), "ell"),
        (lambda: exp.run_itemsets(_itemsets(n=10), [1.0], [1], mechanisms=("OUE",)), "unknown mechanism"),
        (lambda: exp.BudgetProtocol((1.0, 2.0), (1.0,)), "equal length"),
        (lambda: exp.BudgetProtocol((1.2, 2.0), (0.5, 0.5)), "smallest multiplier"),
        (lambda: exp.BudgetProtocol((1.0, -2.0), (0.5, 0.5)), "multiplier"),
    ],
)
def test_bad_input_raises_before_work(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_protocol_draw_has_exact_level_sizes() -> None:
    gen = np.random.default_rng(1)
    draws = [exp.DEFAULT_PROTOCOL.multiplier_per_item(100, gen) for _ in range(5)]
    for d in draws:
        values, sizes = np.unique(d, return_counts=True)
        assert values.tolist() == [1.0, 1.2, 2.0] and sizes.tolist() == [5, 5, 90]
    # placement is redrawn, sizes are not
    assert any(not np.array_equal(draws[0], d) for d in draws[1:])
    # a zero share drops its level; a single level gives a constant vector
    assert np.all(exp.BudgetProtocol((1.0, 3.0), (1.0, 0.0)).multiplier_per_item(7, gen) == 1.0)


def test_single_item_rows_theory_and_reproducibility() -> None:
    eps_grid = (0.8, 2.0)
    cache = exp.SolutionCache()
    config = RunConfig(repeats=3, seed=7, progress=False)
    frame = exp.run_single_item(COUNTS, eps_grid, ks=(5, 10), config=config, cache=cache)
    again = exp.run_single_item(COUNTS, eps_grid, ks=(5, 10), config=config)
    assert frame.equals(again)
    other = exp.run_single_item(COUNTS, eps_grid, ks=(5, 10), config=config.replace(seed=8))
    assert not frame["mse"].equals(other["mse"])
    assert len(frame) == len(eps_grid) * 3 * len(exp.SINGLE_ITEM_MECHANISMS)
    assert {"eps", "repeat", "mechanism", "mse", "mse_theory", "re@5", "precision@10"} <= set(frame.columns)
    # exact level sizes: each model is solved once per eps, not once per repeat
    assert cache.solves == 3 * len(eps_grid)
    n = COUNTS.sum()
    for eps in eps_grid:
        rows = frame[frame["eps"] == eps].set_index(["repeat", "mechanism"])["mse_theory"]
        for rep in range(3):
            assert rows[(rep, "RAPPOR")] == pytest.approx(RAPPOR(COUNTS.size, eps).mse(COUNTS) / n, rel=1e-12)
            assert rows[(rep, "OUE")] == pytest.approx(OUE(COUNTS.size, eps).mse(COUNTS) / n, rel=1e-12)
            # opt1 is RAPPOR with per-level probabilities and budgets >= eps on every item: it
            # can only lower each item's variance, and strictly does for the 95% above eps
            assert rows[(rep, "IDUE-opt1")] < rows[(rep, "RAPPOR")]
    assert frame["precision@5"].between(0, 1).all() and (frame["re@5"] >= 0).all()


def test_single_item_simulated_mse_matches_eq7() -> None:
    """Mean simulated MSE over 300 repeats against the exact expectation (z-test, 4.5 sd)."""
    reps = 300
    frame = exp.run_single_item(COUNTS, (1.0,), ks=(5,), config=RunConfig(repeats=reps, seed=11),
                                mechanisms=("OUE", "IDUE-opt0", "IDUE-opt2"))
    for mech, grp in frame.groupby("mechanism"):
        se = grp["mse"].std(ddof=1) / math.sqrt(reps)
        z = (grp["mse"].mean() - grp["mse_theory"].mean()) / se
        assert abs(z) < 4.5, (mech, z)


def test_budget_shares_limits() -> None:
    frame = exp.run_budget_shares(COUNTS, (0.1, 1.0), eps_small=1.0, eps_large=2.0, ks=(5,),
                                  config=RunConfig(repeats=2, seed=3), mechanisms=("OUE", "IDUE-opt2"))
    t = frame.groupby(["share", "mechanism"])["mse_theory"].mean().unstack()
    # every item at eps_small: opt2 with one level is OUE at eps_small
    assert t.loc[1.0, "IDUE-opt2"] == pytest.approx(t.loc[1.0, "OUE"], rel=1e-6)
    # 90% of the items at the larger budget: a smaller expected error (limited, because every
    # pair involving a sensitive item is still bounded by eps_small; the exact ratio is 0.915)
    assert t.loc[0.1, "IDUE-opt2"] < 0.95 * t.loc[0.1, "OUE"]
    assert set(frame["share"]) == {0.1, 1.0}


def test_itemsets_rows_and_theory() -> None:
    sets = _itemsets()
    reps = 200
    config = RunConfig(repeats=reps, seed=5)
    frame = exp.run_itemsets(sets, (1.0, 3.0), (1, 3), ks=(5,), theory=True, config=config)
    again = exp.run_itemsets(sets, (1.0, 3.0), (1, 3), ks=(5,), theory=True, config=config)
    assert frame.equals(again)
    assert len(frame) == 2 * 2 * reps * len(exp.ITEMSET_MECHANISMS)
    for (ell, eps, mech), grp in frame.groupby(["ell", "eps", "mechanism"]):
        # mse_theory includes the truncation bias of sets longer than ell (PaddingSampling.mse)
        se = grp["mse"].std(ddof=1) / math.sqrt(reps)
        z = (grp["mse"].mean() - grp["mse_theory"].mean()) / se
        assert abs(z) < 4.5, (ell, eps, mech, z)
    # baselines have exactly the PS mse of their LDP inner oracle
    n = len(sets)
    row = frame[(frame["ell"] == 3) & (frame["eps"] == 1.0) & (frame["mechanism"] == "OUE-PS")].iloc[0]
    assert row["mse_theory"] == pytest.approx(idue.oue_ps(sets.d, 1.0, 3).mse(sets) / n, rel=1e-12)


def test_summarise_mean_and_standard_error() -> None:
    frame = exp.run_single_item(COUNTS, (1.0,), ks=(5,), config=RunConfig(repeats=4, seed=2), mechanisms=("OUE",))
    out = exp.summarise(frame, ["eps", "mechanism"], ["mse"])
    assert out.loc[(1.0, "OUE"), "mse"] == pytest.approx(frame["mse"].mean())
    assert out.loc[(1.0, "OUE"), "mse_se"] == pytest.approx(frame["mse"].std(ddof=1) / 2)


def test_results_pinned_for_the_per_point_seeding() -> None:
    """Regression: sums recorded when sweeps moved to one ``SeedSequence`` child per sweep point.

    Point ``i`` of a sweep draws from child ``i`` of ``SeedSequence(seed)`` (so any number of
    workers gives the same result, tests/test_sweeps_parallel.py); these sums pin that stream so
    the book's numbers cannot move unnoticed.  The tolerance is 1e-11 relative, not exact, so
    last-bit changes in the mechanisms' probabilities pass (the IDUE solvers end at the exact KKT
    point with one BLAS thread, so machines and thread counts agree to about 1e-15); another
    stream, or an optimum off by the solvers' old accuracy (1e-9, issue 33), moves the sums by far
    more.
    """
    single = exp.run_single_item(COUNTS, (0.8, 2.0), ks=(5,), config=RunConfig(repeats=3, seed=7))
    assert single["mse"].sum() == pytest.approx(2492.5918986829993, rel=1e-11)
    assert single["re@5"].sum() == pytest.approx(5.802738079173131, rel=1e-11)
    shares = exp.run_budget_shares(COUNTS, (0.1, 1.0), eps_small=1.0, eps_large=2.0, ks=(5,),
                                   config=RunConfig(repeats=2, seed=3))
    assert shares["mse"].sum() == pytest.approx(1262.055891904372, rel=1e-11)
    sets = exp.run_itemsets(_itemsets(), (1.0, 3.0), (1, 3), ks=(5,), theory=True, config=RunConfig(repeats=4, seed=5))
    assert sets["mse"].sum() == pytest.approx(11877.562182083386, rel=1e-11)
    assert sets["re@5"].sum() == pytest.approx(22.22941606017453, rel=1e-11)


def test_default_config_is_ten_unseeded_repeats() -> None:
    frame = exp.run_single_item(COUNTS, (1.0,), ks=(5,), mechanisms=("OUE",))
    assert sorted(frame["repeat"]) == list(range(10))
    # unseeded: two default runs differ
    again = exp.run_single_item(COUNTS, (1.0,), ks=(5,), mechanisms=("OUE",))
    assert not frame["mse"].equals(again["mse"])


def test_progress_bar_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    exp.run_single_item(COUNTS, (1.0, 2.0), ks=(5,), mechanisms=("OUE",), config=RunConfig(repeats=1, seed=0,
                                                                                            progress=True))
    shown = capsys.readouterr()
    assert "eps" in shown.err and "2/2" in shown.err and shown.out == ""
    exp.run_single_item(COUNTS, (1.0, 2.0), ks=(5,), mechanisms=("OUE",), config=RunConfig(repeats=1, seed=0,
                                                                                            progress=False))
    assert capsys.readouterr().err == ""
