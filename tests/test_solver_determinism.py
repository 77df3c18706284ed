"""The numerical optima do not depend on the machine: thread count, rounding, solver path.

A solver's point follows the last bits of its arithmetic: a multi-threaded BLAS rounds its sums
differently with the number of threads, other CPUs take other SIMD paths, and among several
certified candidates of equal objective (to rounding) the winner is an accident.  IDUE's optima
moved in their ninth digit between ``OMP_NUM_THREADS=1`` and the default (issue 33), and the
k-ary LIP optimum permuted its outputs when its vertices moved in the fourteenth digit.  Here
the machine is imitated: BLAS thread counts, and perturbations far above rounding of what the
solvers compute in between; the results must agree to a few units in the last place.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import ldpkit._solvers as solvers
import ldpkit.idue.solvers as idue_solvers
import ldpkit.lip.kary as kary
from ldpkit.idue.solvers import solve_opt0, solve_opt1, solve_opt2
from ldpkit.lip import optimal_kary_ldp, optimal_kary_lip

#: level budgets and sizes of the IDUE problems (one level of the audits, the tests' three, skewed sizes)
PROBLEMS = [([0.25, 0.5], [1, 3]), ([0.5, 1.0, 2.0], [1, 1, 1]), ([0.1, 0.5, 1.0, 4.0], [3, 1, 5, 10])]
#: a few units in the last place
ULPS = 1e-14


def _rel(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.max(np.abs(x - y) / np.abs(y)))


@pytest.mark.parametrize("solve", [solve_opt0, solve_opt1, solve_opt2])
def test_an_idue_optimum_does_not_depend_on_the_blas_threads(solve) -> None:
    budgets, sizes = PROBLEMS[0]
    solve(budgets, sizes)  # loads every library the solver uses, so that the limits below reach them all
    with threadpool_limits(limits=1):
        one = solve(budgets, sizes)
    with threadpool_limits(limits=2):
        two = solve(budgets, sizes)
    np.testing.assert_array_equal(one.a, two.a)
    np.testing.assert_array_equal(one.b, two.b)


@pytest.mark.parametrize("budgets, sizes", PROBLEMS)
def test_an_idue_opt0_optimum_is_its_kkt_point_whichever_candidate_wins(budgets, sizes) -> None:
    base = solve_opt0(budgets, sizes)
    assert base.diagnostics["chosen"] == "newton" and base.diagnostics["kkt_residual"] < 1e-9
    choose = idue_solvers._opt0_choose
    for seed in range(3):
        rng = np.random.default_rng(seed)

        def moved(table, status):  # the winner moved by 1e-8 relative: another machine's candidate
            best, n_agree = choose(table, status)
            jitter = 1 + 1e-8 * rng.uniform(-1, 1, (2, best["u"].size))
            return {**best, "u": best["u"] * jitter[0], "v": best["v"] * jitter[1]}, n_agree

        with mock.patch.object(idue_solvers, "_opt0_choose", moved):
            sol = solve_opt0(budgets, sizes)
        assert _rel(sol.a, base.a) < ULPS and _rel(sol.b, base.b) < ULPS


@pytest.mark.parametrize("solve", [solve_opt1, solve_opt2])
@pytest.mark.parametrize("budgets, sizes", PROBLEMS)
def test_an_idue_opt1_opt2_optimum_is_its_kkt_point_whichever_candidate_wins(solve, budgets, sizes) -> None:
    base = solve(budgets, sizes)
    assert base.diagnostics["kkt_point"] == "newton"
    certify = solvers.certify_candidates
    for seed in range(3):
        rng = np.random.default_rng(seed)

        def moved(what, cands, *args, **kwargs):  # the solvers' candidates moved by 1e-8 relative
            if [name for name, _ in cands] != ["newton"]:
                cands = [(name, x if x is None else x * (1 + 1e-8 * rng.uniform(-1, 1, x.size))) for name, x in cands]
            return certify(what, cands, *args, **kwargs)

        with mock.patch.object(solvers, "certify_candidates", moved):
            sol = solve(budgets, sizes)
        assert _rel(sol.a, base.a) < ULPS and _rel(sol.b, base.b) < ULPS


@pytest.mark.parametrize("optimum", [optimal_kary_lip, optimal_kary_ldp])
@pytest.mark.parametrize("objective", ["mse", "map"])
@pytest.mark.parametrize("prior", [(0.4, 0.3, 0.2, 0.1), (0.25, 0.25, 0.25, 0.25)])
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_the_kary_optimum_is_one_channel_on_every_machine(optimum, objective, prior, eps) -> None:
    # vertices moved in their fourteenth digit: several optimal channels (degenerate LPs) and tied
    # output orders must still resolve to the same channel, outputs in the same order
    base = optimum(list(prior), eps, objective).channel.matrix
    vertices = kary._lip_ratio_vertices if optimum is optimal_kary_lip else kary._ldp_ratio_vertices
    name = vertices.__name__
    for seed in range(3):
        rng = np.random.default_rng(seed)

        def moved(pi, e):
            V = vertices(pi, e)
            return V * (1 + 1e-14 * rng.uniform(-1, 1, V.shape))

        with mock.patch.object(kary, name, moved):
            Q = optimum(list(prior), eps, objective).channel.matrix
        assert Q.shape == base.shape
        np.testing.assert_allclose(Q, base, rtol=0, atol=1e-12)
