"""IDUE (opt0/opt1/opt2), IDUE-PS, the item-set budget and Table I of Gu et al. (ICDE 2020).

Privacy claims are checked by exact enumeration of the channel on small domains; optimality by
KKT certificates and independent solvers; variances by symbolic derivation.  The generic
checks (sampling law against the channel, declared guarantees, unbiasedness with the declared
variance by Monte Carlo, aggregate simulation against the per-user path, bad items and counts)
run on every registered IDUE and IDUE-PS instance in ``tests/test_contract.py``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from ldpkit import OUE, RAPPOR, UnaryEncoding, accountant, idue
from ldpkit.padding import PaddingSampling
from ldpkit.sets import all_itemsets

LN4, LN6 = math.log(4.0), math.log(6.0)


# ----------------------------------------------------------------------------- helpers
def _paper_objective(a: np.ndarray, b: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Problem (8)'s objective written straight from the paper (vectorised over rows)."""
    g = b * (1 - b) / (a - b) ** 2
    h = (1 - a - b) / (a - b)
    return np.sum(m * g, axis=-1) + np.max(h, axis=-1)


def _paper_ratios(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a_i (1 - b_j) / (b_i (1 - a_j))`` over the last axis, shape (..., t, t)."""
    return a[..., :, None] * (1 - b[..., None, :]) / (b[..., :, None] * (1 - a[..., None, :]))


def _itemset_rows(m: int) -> list[list[int]]:
    rows = [list(c) for r in range(m + 1) for c in itertools.combinations(range(m), r)]
    assert rows == all_itemsets(m)
    return rows


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: idue.solve_opt1([1.0, -1.0], [1, 1]), "level_budgets"),
        (lambda: idue.solve_opt1([1.0, float("nan")], [1, 1]), "level_budgets"),
        (lambda: idue.solve_opt1([1.0, 1.0], [1, 1]), "distinct"),
        (lambda: idue.solve_opt1([], []), "level_budgets"),
        (lambda: idue.solve_opt2([1.0, 2.0], [1, 0]), r"level_sizes\[1\]"),
        (lambda: idue.solve_opt2([1.0, 2.0], [1, 1.5]), r"level_sizes\[1\]"),
        (lambda: idue.solve_opt2([1.0, 2.0], [1]), "level_sizes has length 1"),
        (lambda: idue.solve_opt0([1.0, 2.0], [1, 2], r="median"), "median"),
        (lambda: idue.solve_opt0([1.0, 2.0], [1, 2], r=lambda e1, e2: 0 * e1 * e2), "positive"),
        (lambda: idue.solve_opt0([1.0, 2.0], [1, 2], same_level_pairs="some"), "same_level_pairs"),
        (lambda: idue.solve_opt0([1.0], [1], same_level_pairs="needed"), "unbounded"),
        (lambda: idue.solve_opt0([1.0, 2.0], [1, 2], n_starts=-1), "n_starts"),
        (lambda: idue.solve("opt3", [1.0, 2.0], [1, 2]), "opt3"),
        (lambda: idue.IDUE([1.0]), "len\\(budgets\\)"),
        (lambda: idue.IDUE([1.0, 0.0]), "budgets"),
        (lambda: idue.IDUE([1.0, 2.0], model="best"), "best"),
        (lambda: idue.IDUE([1.0, 3.0], model=idue.solve_opt1([1.0, 2.0], [1, 1])), "3.0"),
        (lambda: idue.idue_ps([1.0, 2.0], 0), "ell"),
        (lambda: idue.idue_ps([1.0, 2.0], 2, dummy_budget=1.5), "dummy_budget"),
        (lambda: idue.itemset_budget([0, 5], [1.0, 2.0], 2), "item 5"),
        (lambda: idue.itemset_budget([0, 0], [1.0, 2.0], 2), "more than once"),
        (lambda: idue.rappor_ps(3, -1.0, 2), "epsilon"),
        (lambda: idue.oue_ps(0, 1.0, 2), "m must be"),
    ],
)
def test_bad_input_raises_value_error(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_solver_error_is_a_value_error() -> None:
    assert issubclass(idue.IDUESolverError, ValueError)


# ----------------------------------------------------------------------------- exact privacy
@st.composite
def _budget_setups(draw):
    t = draw(st.integers(2, 3))
    levels = sorted(draw(st.lists(st.sampled_from([0.3, 0.5, 0.8, 1.0, 1.4, 2.0, 2.7, 3.5]), min_size=t, max_size=t, unique=True)))
    sizes = draw(st.lists(st.integers(1, 2), min_size=t, max_size=t))
    budgets = np.repeat(levels, sizes)
    perm = draw(st.permutations(range(budgets.size)))
    return budgets[list(perm)], draw(st.sampled_from(idue.MODELS)), draw(st.sampled_from(["min", "average"]))


@settings(max_examples=30, deadline=None)
@given(_budget_setups())
def test_idue_channel_satisfies_id_ldp_by_enumeration(setup) -> None:
    budgets, model, rule = setup
    mech = idue.IDUE(budgets, model=model, r=rule)
    explicit = mech.channel().to_explicit()
    res = accountant.check_idldp(explicit, budgets, r=rule)
    assert res.satisfied, res
    # the tight pairwise loss of distinct items is the closed form a_i(1-b_j)/(b_i(1-a_j))
    L = accountant.pairwise_log_ratio(explicit)
    closed = np.log(_paper_ratios(mech.a, mech.b))
    off = ~np.eye(budgets.size, dtype=bool)
    np.testing.assert_allclose(L[off], closed[off], rtol=1e-9, atol=1e-12)
    # and the solution checks all t^2 level constraints of the model it was solved with
    sol = mech.solution
    ok = np.isfinite(sol.pair_budgets)
    assert np.all(sol.log_ratio()[ok] <= sol.pair_budgets[ok] + 1e-9)
    assert np.all((0 < sol.b) & (sol.b < sol.a) & (sol.a < 1))


def test_min_solution_fails_average_check_only_when_it_should() -> None:
    budgets = np.array([0.5, 0.5, 2.0, 2.0, 2.0])
    avg = idue.IDUE(budgets, model="opt0", r="average")
    assert accountant.check_idldp(avg.channel(), budgets, r="average", method="classes").satisfied
    # the average rule is looser than min, so its optimum must break MinID-LDP (else min would do as well)
    assert not accountant.check_idldp(avg.channel(), budgets, r="min", method="classes").satisfied
    mn = idue.IDUE(budgets, model="opt0")
    assert avg.solution.objective < mn.solution.objective
    assert accountant.check_idldp(mn.channel(), budgets, r="min").satisfied


# ----------------------------------------------------------------------------- formulas (sympy)
def test_change_of_variables_and_monotonicity_sympy() -> None:
    u, v, Z, Y, m = sp.symbols("u v Z Y m", positive=True)
    A, B = sp.exp(u), sp.exp(v)
    b = (B - 1) / (A * B - 1)
    a = A * b
    assert sp.simplify(a / b - A) == 0 and sp.simplify((1 - b) / (1 - a) - B) == 0
    g = b * (1 - b) / (a - b) ** 2
    h = (1 - a - b) / (a - b)
    sub = {u: sp.log(1 + Z), v: sp.log(1 + Y)}
    # posynomial form of the variance terms: g = 1/Z + 1/(ZY), h = 1/Y - 1/Z
    assert sp.simplify(g.subs(sub) - (1 / Z + 1 / (Z * Y))) == 0
    assert sp.simplify(h.subs(sub) - (1 / Y - 1 / Z)) == 0
    # and the paper's ratio constraint is (1+Z_i)(1+Y_j) = e^{u_i + v_j}
    # monotonicity: g decreases in u and v; h decreases in v but INCREASES in u, while
    # m g + h decreases in u for every m >= 1 (so the max-term cannot spoil monotonicity)
    gz = 1 / Z + 1 / (Z * Y)
    hz = 1 / Y - 1 / Z
    dZ, dY = sp.diff(gz, Z), sp.diff(gz, Y)
    assert sp.simplify(dZ + (1 + 1 / Y) / Z**2) == 0 and sp.simplify(dY + 1 / (Z * Y**2)) == 0
    assert sp.simplify(sp.diff(hz, Z) - 1 / Z**2) == 0  # > 0: h increases with u
    mixed = sp.factor(sp.simplify(sp.diff(m * gz + hz, Z)))
    assert sp.simplify(mixed + ((m - 1) * Y + m) / (Y * Z**2)) == 0  # < 0 for m >= 1
    assert sp.simplify(sp.diff(hz, Y) + 1 / Y**2) == 0
    # F_i = sum_{k != i} m_k g_k + m_i g_i + h_i has only positive coefficients for m_i >= 1
    Fi = sp.expand(m * gz + hz)
    coeffs = sp.Poly(Fi * Z * Y, Z, Y).coeffs()
    assert sorted(map(sp.srepr, coeffs)) == sorted(map(sp.srepr, [m - 1, m, sp.Integer(1)]))


def test_paper_objective_is_not_convex_in_ab_but_convex_in_log_coordinates() -> None:
    a, b = sp.symbols("a b", positive=True)
    g = b * (1 - b) / (a - b) ** 2
    H = sp.hessian(g, (a, b))
    # a point of the feasible region where the Hessian in (a, b) has a negative eigenvalue
    eig = np.linalg.eigvalsh(np.array(H.subs({a: 0.9, b: 0.1}), dtype=float))
    assert eig.min() < 0
    # in (s, w) = (log Z, log Y) the term is e^{-s} + e^{-s-w}: Hessian PSD everywhere
    s_, w_ = sp.symbols("s w", real=True)
    G = sp.exp(-s_) + sp.exp(-s_ - w_)
    Hs = sp.hessian(G, (s_, w_))
    assert sp.simplify(Hs.det() - sp.exp(-2 * s_ - w_)) == 0 and sp.simplify(Hs[0, 0] - G) == 0


def test_opt1_opt2_objectives_are_convex_sympy() -> None:
    tau, b = sp.symbols("tau b", positive=True)
    f1 = sp.exp(tau) / (sp.exp(tau) - 1) ** 2
    d2 = sp.diff(f1, tau, 2)
    assert sp.simplify(d2 - sp.exp(tau) * (sp.exp(2 * tau) + 4 * sp.exp(tau) + 1) / (sp.exp(tau) - 1) ** 4) == 0
    assert sp.simplify(f1 - 1 / (4 * sp.sinh(tau / 2) ** 2)).rewrite(sp.exp).simplify() == 0
    f2 = b * (1 - b) / (sp.Rational(1, 2) - b) ** 2
    assert sp.simplify(f2 - (sp.Rational(1, 4) / (sp.Rational(1, 2) - b) ** 2 - 1)) == 0
    assert sp.simplify(sp.diff(f2, b, 2) - 24 / (2 * b - 1) ** 4) == 0
    # positive on the feasible regions: the separable Hessians are positive definite
    taus = np.linspace(0.01, 8, 50)
    assert np.all([float(d2.subs(tau, x)) > 0 for x in taus])


def test_eq7_variance_from_bernoulli_sums_sympy() -> None:
    a, b, n, c = sp.symbols("a b n c", positive=True)
    var_support = c * a * (1 - a) + (n - c) * b * (1 - b)  # independent bits of c holders, n-c others
    eq7 = n * b * (1 - b) / (a - b) ** 2 + c * (1 - a - b) / (a - b)
    assert sp.simplify(var_support / (a - b) ** 2 - eq7) == 0


# ----------------------------------------------------------------------------- Table I
def _toy_bruteforce(same_level_pairs: str = "paper") -> tuple[float, np.ndarray]:
    """Global minimum of (8) on the toy example: 4-d grid over (a1, b1, a2, b2), then SLSQP."""
    m = np.array([1.0, 4.0])
    R = np.array([[LN4, LN4], [LN4, LN6]])
    active = np.ones((2, 2), dtype=bool)
    if same_level_pairs == "needed":
        active[0, 0] = False
    grid = np.linspace(0.01, 0.99, 50)
    best_val, best = np.inf, None
    for a1 in grid:
        A1, B1, A2, B2 = np.meshgrid([a1], grid, grid, grid, indexing="ij")
        a = np.stack([A1.ravel(), A2.ravel()], axis=1)
        b = np.stack([B1.ravel(), B2.ravel()], axis=1)
        ok = np.all(b < a, axis=1)
        with np.errstate(all="ignore"):
            ratio = _paper_ratios(a, b)
            ok &= np.all((ratio <= np.exp(R)) | ~active, axis=(1, 2))
            f = np.where(ok, _paper_objective(a, b, m), np.inf)
        k = int(np.argmin(f))
        if f[k] < best_val:
            best_val, best = float(f[k]), np.concatenate([a[k], b[k]])
    I, J = np.nonzero(active)

    def cons(x: np.ndarray) -> np.ndarray:
        a, b = x[:2], x[2:]
        return np.concatenate([R[I, J] - np.log(_paper_ratios(a, b)[I, J]), a - b - 1e-9])

    res = minimize(
        lambda x: float(_paper_objective(x[:2], x[2:], m)), best, method="SLSQP",
        bounds=[(1e-6, 1 - 1e-6)] * 4, constraints=[{"type": "ineq", "fun": cons}],
        options={"ftol": 1e-14, "maxiter": 500},
    )
    x = res.x
    assert np.all(cons(x) >= -1e-7)
    return min(best_val, float(_paper_objective(x[:2], x[2:], m))), x


def test_opt0_toy_is_global_against_bruteforce() -> None:
    toy = idue.toy_example()
    sol = idue.IDUE(toy.budgets).solution
    brute, x = _toy_bruteforce()
    # the solver's value is at most the brute-force one and agrees with it to 1e-6 relative
    assert sol.objective <= brute * (1 + 1e-9)
    assert sol.objective == pytest.approx(brute, rel=1e-6)
    np.testing.assert_allclose(np.concatenate([sol.a, sol.b]), x, atol=1e-4)
    # certificate: KKT, independent multistart agreement, interval lower bound
    d = sol.diagnostics
    assert d["kkt_residual"] < 1e-8 and d["multistart"]["n_agree"] >= 5
    assert d["bnb"]["lower_bound"] <= sol.objective <= d["bnb"]["upper_bound"]
    assert d["bnb"]["gap"] <= 1e-4


def test_table_one_recomputed_against_the_paper() -> None:
    toy = idue.toy_example()
    rows = {row["mechanism"]: row for row in toy.rows()}
    paper = toy.paper_table
    # RAPPOR and OUE rows reproduce the paper (10n and 9.9n)
    assert rows["RAPPOR"]["total"] == pytest.approx((10.0, 10.0))
    assert rows["RAPPOR"]["var_n"] == pytest.approx([2.0, 2.0])
    assert rows["OUE"]["var_n"] == pytest.approx([16 / 9, 16 / 9])
    assert rows["OUE"]["total"][1] == pytest.approx(89 / 9) and round(89 / 9, 1) == paper["OUE"]["total"][1]
    # IDUE-opt0: the probabilities round to the paper's (0.41, 0.33 | 0.33, 0.28) ...
    ours = rows["IDUE-opt0"]
    assert np.round(ours["flip"], 2).tolist() == list(paper["IDUE"]["flip"])
    assert np.round(ours["b"], 2).tolist() == list(paper["IDUE"]["b"])
    # ... but the variances are smaller: 3.13n + 0.31c and 1.28n + 0.13c, total 8.39n..8.57n,
    # against 3.27n/1.32n and 8.68n..8.86n in the paper
    np.testing.assert_allclose(ours["var_n"], [3.1327, 1.2824], atol=1e-4)
    np.testing.assert_allclose(ours["var_c"], [0.3054, 0.1250], atol=1e-4)
    np.testing.assert_allclose(ours["total"], [8.3871, 8.5675], atol=1e-4)
    assert ours["total"][1] < paper["IDUE"]["total"][1] - 0.25
    # the paper's numbers are what its ROUNDED probabilities give (so they are not optimal)
    a_r = 1 - np.array(paper["IDUE"]["flip"])
    b_r = np.array(paper["IDUE"]["b"])
    g, h = idue.variance_terms(a_r, b_r)
    np.testing.assert_allclose(g, paper["IDUE"]["var_n"], atol=0.006)
    np.testing.assert_allclose(h, paper["IDUE"]["var_c"], atol=0.006)
    # (the paper adds the rounded 3.27 + 4 x 1.32: 8.68/8.86; unrounded these give 8.70/8.88)
    assert g[0] + 4 * g[1] + h.min() == pytest.approx(paper["IDUE"]["total"][0], abs=0.03)
    assert g[0] + 4 * g[1] + h.max() == pytest.approx(paper["IDUE"]["total"][1], abs=0.03)
    # ... and the rounded point is feasible (ratios 3.90, 3.91 <= 4; 5.22 <= 6), just worse
    ratios = _paper_ratios(a_r, b_r)
    assert np.all(ratios <= np.exp(np.array([[LN4, LN4], [LN4, LN6]])))
    # opt1 lies between opt0 and OUE; opt2 coincides with OUE here
    assert rows["IDUE-opt0"]["total"][1] < rows["IDUE-opt1"]["total"][1] < rows["OUE"]["total"][1]
    assert rows["IDUE-opt2"]["total"] == pytest.approx(rows["OUE"]["total"])


def test_same_level_pairs_flag() -> None:
    toy = idue.toy_example()
    e, m = [LN4, LN6], [1, 4]
    paper = idue.solve_opt0(e, m)
    needed = idue.solve_opt0(e, m, same_level_pairs="needed")
    # toy: dropping HIV's self-pair changes nothing (it is slack: ratio 2.99 < 4)
    assert needed.objective == pytest.approx(paper.objective, rel=1e-9)
    assert math.exp(paper.log_ratio()[0, 0]) == pytest.approx(2.987, abs=1e-3)
    assert np.isinf(needed.pair_budgets[0, 0]) and np.isfinite(paper.pair_budgets[0, 0])
    assert _toy_bruteforce("needed")[0] == pytest.approx(needed.objective, rel=1e-6)
    # with the average rule the dropped pair can matter a lot
    e2, m2 = [0.2, 1.9, 3.3], [1, 2, 2]
    p2 = idue.solve_opt0(e2, m2, r="average")
    n2 = idue.solve_opt0(e2, m2, r="average", same_level_pairs="needed")
    assert n2.objective < 0.2 * p2.objective
    assert n2.log_ratio()[0, 0] > 0.2 + 0.5  # the singleton level's own pair exceeds its budget
    ch = idue.IDUE(np.repeat(e2, m2), model=n2).channel().to_explicit()
    assert accountant.check_idldp(ch, np.repeat(e2, m2), r="average").satisfied
    del toy


# ----------------------------------------------------------------------------- scale and KKT
def _scipy_reference(model: str, e: np.ndarray, m: np.ndarray, rule: str) -> float:
    """Independent SLSQP solve of (10) or (11) from the LDP point, in the paper's variables."""
    R = idue.pair_budget_matrix(e, rule)
    t = e.size
    I, J = np.nonzero(np.ones((t, t), dtype=bool))
    if model == "opt1":
        I, J = np.nonzero(np.triu(np.ones((t, t), dtype=bool)))  # symmetric: one order suffices
        x0 = np.full(t, R.min() / 2 * 0.999)
        fun = lambda x: float(np.sum(m * np.exp(x) / np.expm1(x) ** 2))
        jac = lambda x: -m * np.exp(x) * (np.exp(x) + 1) / np.expm1(x) ** 3
        cons = {"type": "ineq", "fun": lambda x: R[I, J] - x[I] - x[J]}
        bounds = [(1e-6, None)] * t
    else:
        x0 = np.full(t, 1 / (math.exp(R.min()) + 1) * 1.001)
        fun = lambda x: float(np.sum(m * x * (1 - x) / (0.5 - x) ** 2))
        jac = lambda x: m * 0.5 / (0.5 - x) ** 3
        cons = {"type": "ineq", "fun": lambda x: np.exp(R[I, J]) * x[I] + x[J] - 1}
        bounds = [(1e-9, 0.5 - 1e-9)] * t
    f0 = fun(x0)
    res = minimize(lambda x: fun(x) / f0, x0, jac=lambda x: jac(x) / f0, method="SLSQP", bounds=bounds,
                   constraints=[cons], options={"maxiter": 1000, "ftol": 1e-15})
    assert np.all(cons["fun"](res.x) >= -1e-7)
    return fun(res.x)


@pytest.mark.parametrize("model, rule, seed", [("opt1", "min", 0), ("opt2", "min", 1), ("opt1", "average", 2), ("opt2", "average", 3)])
def test_opt1_opt2_solve_100_levels(model: str, rule: str, seed: int) -> None:
    gen = np.random.default_rng(seed)
    e = np.sort(gen.uniform(0.2, 4.0, 100))
    m = gen.integers(1, 60, 100)
    sol = idue.solve(model, e, m, rule)
    # feasibility of all t^2 constraints and of 0 < b < a < 1
    assert np.all(sol.log_ratio() <= idue.pair_budget_matrix(e, rule) + 1e-9)
    assert np.all((0 < sol.b) & (sol.b < sol.a) & (sol.a < 1))
    assert sol.diagnostics["kkt_residual"] < 1e-6
    if model == "opt1" and rule == "average":
        # closed form: the (i, i) pairs give tau_i <= eps_i/2, and tau = eps/2 meets every
        # pair with equality, so (the objective decreasing in tau) it is the optimum
        tau = np.log(sol.a / sol.b)
        np.testing.assert_allclose(tau, e / 2, rtol=1e-9)
        return
    # an independent scipy solve from a different start cannot do better
    ref = _scipy_reference(model, e, m, rule)
    assert sol.objective <= ref * (1 + 1e-7)
    assert sol.objective == pytest.approx(ref, rel=1e-5)


def test_opt0_is_never_worse_than_opt1_opt2_rappor_oue() -> None:
    e, m = np.array([0.5, 0.6, 1.0]), np.array([5, 5, 90])
    sols = {k: idue.solve(k, e, m) for k in idue.MODELS}
    f0 = sols["opt0"].worst_case_mse_per_user
    assert f0 <= sols["opt1"].worst_case_mse_per_user * (1 + 1e-9)
    assert f0 <= sols["opt2"].worst_case_mse_per_user * (1 + 1e-9)
    eps = e.min()
    for mech in (RAPPOR(2, eps), OUE(2, eps)):
        assert f0 < idue.worst_case_mse(np.full(3, mech.a[0]), np.full(3, mech.b[0]), m)
    d = sols["opt0"].diagnostics
    assert d["bnb"]["lower_bound"] <= sols["opt0"].objective and d["multistart"]["n_agree"] >= 1
    assert sols["opt1"].objective == pytest.approx(sols["opt1"].worst_case_mse_per_user)  # h = 0
    assert sols["opt2"].worst_case_mse_per_user == pytest.approx(sols["opt2"].objective + 1)  # h = 1


# ----------------------------------------------------------------------------- estimator
def test_variance_eq7_matches_inherited() -> None:
    """Eq. (7) ``n g + c h`` against the inherited per-user Bernoulli form (sympy derives one from the other)."""
    budgets = np.array([0.6, 0.6, 1.2, 1.2, 1.2, 2.0])
    mech = idue.IDUE(budgets, model="opt0")
    assert isinstance(mech, UnaryEncoding)
    counts = np.array([3000, 500, 1200, 0, 800, 4500])
    n = counts.sum()
    g, h = idue.variance_terms(mech.a, mech.b)
    np.testing.assert_allclose(mech.variance(counts), n * g + counts * h, rtol=1e-12)
    # worst-case MSE per user bounds the normalised total variance for any data
    assert mech.mse(counts) / n <= idue.worst_case_mse(mech.solution.a, mech.solution.b, mech.solution.level_sizes) + 1e-9
    # ... and is attained when everybody holds an item of the level with the largest h
    worst = np.zeros_like(counts)
    worst[int(np.argmax(h))] = n
    assert mech.mse(worst) / n == pytest.approx(
        idue.worst_case_mse(mech.solution.a, mech.solution.b, mech.solution.level_sizes), rel=1e-12
    )


# ----------------------------------------------------------------------------- IDUE-PS
def test_itemset_budget_eq15() -> None:
    e = np.array([LN4, LN6, LN6, 1.0])
    assert idue.itemset_budget([], e, 2) == pytest.approx(min(e))
    assert idue.itemset_budget([], e, 2, dummy_budget=LN6) == pytest.approx(LN6)
    # |x| = 1 < ell = 2: half real, half dummy (eps* = ln 4 by default... min is 1.0 here)
    assert idue.itemset_budget([1], e, 2) == pytest.approx(math.log(0.5 * 6 + 0.5 * math.e))
    # |x| >= ell: the mean of e^eps over x
    assert idue.itemset_budget([0, 1, 2], e, 2) == pytest.approx(math.log((4 + 6 + 6) / 3))
    # at least the average budget (Jensen) and between min and max of the items involved
    x = [0, 3]
    val = idue.itemset_budget(x, e, 3)
    assert val >= (2 / 3) * np.mean(e[x]) + (1 / 3) * 1.0 - 1e-12


def _theorem4_check(ps: PaddingSampling, budgets: np.ndarray, star: float) -> None:
    m = ps.d
    sets = _itemset_rows(m)
    ch = ps.channel(sets)
    eb = np.array([idue.itemset_budget(x, budgets, ps.ell, star) for x in sets])
    res = accountant.check_idldp(ch, eb, r="min")
    assert res.satisfied, res
    # the library's enumeration (used by the book) gives the same verdict and worst pair
    lib = idue.check_itemset_id_ldp(ps, budgets, star)
    assert lib.satisfied and lib.slack == pytest.approx(res.slack, abs=1e-12)


def _lemma2_check(ps: PaddingSampling) -> None:
    """Every y: P(y|x)/P(y|x') <= sum_x w_x alpha / sum_x' w_x' beta (Lemma 2, eq. 13/14)."""
    sets = _itemset_rows(ps.d)
    P = ps.channel(sets).matrix
    W = ps.sampling_probabilities(sets)
    a, b = ps.inner.a, ps.inner.b
    alpha, beta = a / b, (1 - a) / (1 - b)
    bound = (W @ alpha)[:, None] / (W @ beta)[None, :]
    np.testing.assert_allclose(idue.lemma2_log_bounds(ps, sets), np.log(bound), rtol=1e-12, atol=1e-12)
    ratio = P[:, None, :] / P[None, :, :]
    assert np.all(ratio.max(axis=2) <= bound * (1 + 1e-12))
    # the paper's remark "1 <= beta <= alpha" is wrong: beta < 1 < alpha whenever a > b
    assert np.all(beta < 1) and np.all(alpha > 1)


@pytest.mark.parametrize("model", idue.MODELS)
@pytest.mark.parametrize("m, ell", [(3, 1), (3, 2), (4, 2), (3, 4)])
def test_idue_ps_theorem4_and_lemma2_by_enumeration(model: str, m: int, ell: int) -> None:
    budgets = np.array([LN4, LN6, 1.0, LN6])[:m]
    ps = idue.idue_ps(budgets, ell, model=model)
    assert isinstance(ps, PaddingSampling) and ps.dummy_budget == pytest.approx(1.0 if m >= 3 else LN4)
    # the dummies sit at the dummy level
    k = int(np.argmin(np.abs(ps.solution.level_budgets - ps.dummy_budget)))
    assert np.all(ps.inner.a[m:] == ps.solution.a[k]) and np.all(ps.inner.b[m:] == ps.solution.b[k])
    _theorem4_check(ps, budgets, ps.dummy_budget)
    _lemma2_check(ps)
    # itemset budgets through the mechanism agree with the function
    assert ps.itemset_budgets([[0], [], [0, 1]]).tolist() == [
        idue.itemset_budget(x, budgets, ell, ps.dummy_budget) for x in ([0], [], [0, 1])
    ]


def test_idue_ps_other_dummy_level_and_needed_mode() -> None:
    budgets = np.array([0.4, 1.5, 1.5])
    ps = idue.idue_ps(budgets, 2, dummy_budget=1.5)
    _theorem4_check(ps, budgets, 1.5)
    # with r = "average" and "needed", the singleton level 0.4 keeps its self-pair once the
    # dummies join it, so the padded IDUE still satisfies the rule
    e2 = np.array([0.2, 1.9, 1.9, 3.3, 3.3])
    ps2 = idue.idue_ps(e2, 1, r="average", same_level_pairs="needed")
    assert np.isfinite(ps2.solution.pair_budgets[0, 0])
    padded = np.concatenate([e2, [0.2]])
    assert accountant.check_idldp(ps2.inner.channel(), padded, r="average").satisfied
    # a real-items-only "needed" solution cannot host the dummies at that level
    real_only = idue.solve_opt0([0.2, 1.9, 3.3], [1, 2, 2], r="average", same_level_pairs="needed")
    with pytest.raises(ValueError, match="violates ID-LDP"):
        idue.idue_ps(e2, 1, model=real_only, r="average").inner  # noqa: B018


def _random_padded_params(gen: np.random.Generator, eps: np.ndarray, star: float, m: int, ell: int):
    """Random (a, b) on m real items + ell dummies (shared params) with MinID-LDP on DISTINCT items."""
    k = m + 1  # the dummies share one parameter pair
    e_all = np.concatenate([eps, [star]])
    while True:
        u = gen.uniform(0.05, 1.5, k)
        v = gen.uniform(0.05, 1.5, k)
        if gen.random() < 0.5:  # one real item much more informative in both directions
            j = int(gen.integers(m))
            u[j], v[j] = gen.uniform(2.0, 3.0, 2)
        r = np.minimum(e_all[:, None], e_all[None, :])
        ratio = (u[:, None] + v[None, :]) / r
        off = ~np.eye(k, dtype=bool)
        off[m, m] = ell >= 2  # two distinct dummies form a pair
        scale = ratio[off].max()
        u, v = u / scale, v / scale
        if np.all(u > 1e-3) and np.all(v > 1e-3):
            break
    a, b = idue.ab_from_log_ratios(u, v)
    return np.concatenate([a[:m], np.full(ell, a[m])]), np.concatenate([b[:m], np.full(ell, b[m])])


def test_theorem4_holds_beyond_solver_outputs() -> None:
    """Probe: random feasible (a, b), including beta positively correlated with eps and real
    items violating their own (i, i) pair.  Theorem 4 still holds: the proof needs only
    rho_k <= e^{min(eps_k, eps_j)} rho_j for distinct padded items (the same item cancels),
    then Cauchy-Schwarz, (sum w e^eps)(sum w beta) >= (sum w sqrt(e^eps beta))^2 >= min_j e^eps_j beta_j,
    replaces the Chebyshev/anti-monotonicity step."""
    gen = np.random.default_rng(5)
    eps = np.array([0.5, 1.2, 2.0])
    n_positive_cov = n_self_violations = 0
    for trial in range(60):
        ell = int(gen.integers(1, 4))
        star = float(gen.choice(eps))
        a, b = _random_padded_params(gen, eps, star, 3, ell)
        ps = PaddingSampling(lambda k, a=a, b=b: UnaryEncoding(a, b), 3, ell)
        _theorem4_check(ps, eps, star)
        _lemma2_check(ps)
        beta = (1 - a[:3]) / (1 - b[:3])
        n_positive_cov += np.cov(np.exp(eps), beta)[0, 1] > 0
        L = np.log(a / b) + np.log((1 - b) / (1 - a))
        n_self_violations += np.any(L[:3] > eps + 1e-9)
    assert n_positive_cov >= 10 and n_self_violations >= 5


def test_theorem4_needs_the_dummy_levels_own_pair() -> None:
    """Counterexample: dummies copying a level whose (i, i) ratio exceeds e^{eps*}."""
    eps = np.array([1.0, 2.0])
    # item 0 (eps 1) has u + v = 1.5 > 1: fine for single items (it is alone in its level) ...
    u = np.array([0.75, 0.2])
    v = np.array([0.75, 0.2])
    a, b = idue.ab_from_log_ratios(u, v)
    single = UnaryEncoding(a, b)
    assert accountant.check_idldp(single.channel().to_explicit(), eps, r="min").satisfied
    # ... but dummies at eps* = 1 with item 0's (a, b) break Theorem 4: x = {0}, x' = {} with ell = 1
    ps = PaddingSampling(lambda k: UnaryEncoding(np.append(a, a[0]), np.append(b, b[0])), 2, 1)
    ch = ps.channel([[0], []])
    lr = float(np.max(np.log(ch.matrix[0] / ch.matrix[1])))
    assert lr == pytest.approx(1.5) and lr > idue.itemset_budget([0], eps, 1, 1.0)
    lib = idue.check_itemset_id_ldp(ps, eps, 1.0)
    assert not lib.satisfied and lib.worst_log_ratio == pytest.approx(1.5)
    # idue_ps refuses such a solution (the padded IDUE is checked exactly)
    sol = idue.IDUESolution(
        model="opt0", level_budgets=eps, level_sizes=np.array([1, 1]), a=a, b=b, objective=0.0,
        worst_case_mse_per_user=0.0, r="min", pair_budgets=np.array([[np.inf, 1.0], [1.0, np.inf]]),
        same_level_pairs="needed",
    )
    with pytest.raises(ValueError, match="violates ID-LDP"):
        idue.idue_ps(eps, 1, model=sol).inner  # noqa: B018


def test_dummies_do_not_change_the_paper_problem() -> None:
    # in "paper" mode the dummies join an existing level: same constraints, same objective
    budgets = np.array([LN4, LN6, LN6])
    ps = idue.idue_ps(budgets, 3)
    direct = idue.solve_opt0([LN4, LN6], [1, 2])
    np.testing.assert_allclose(ps.solution.a, direct.a, rtol=1e-9)
    np.testing.assert_allclose(ps.solution.b, direct.b, rtol=1e-9)


def test_baselines() -> None:
    r, o = idue.rappor_ps(4, 1.0, 2), idue.oue_ps(4, 1.0, 2)
    assert isinstance(r.inner, RAPPOR) and isinstance(o.inner, OUE) and r.inner.d == 6 and o.epsilon == 1.0


def test_ab_from_log_ratios_inverts_and_validates() -> None:
    a, b = idue.ab_from_log_ratios([0.3, 1.2], [0.5, 0.1])
    np.testing.assert_allclose(np.log(a / b), [0.3, 1.2])
    np.testing.assert_allclose(np.log((1 - b) / (1 - a)), [0.5, 0.1])
    assert np.all((0 < b) & (b < a) & (a < 1))
    for u, v, match in (([0.3], [0.5, 0.1], "same shape"), ([0.0], [0.5], "u must be positive"),
                        ([0.3], [math.inf], "v must be positive")):
        with pytest.raises(ValueError, match=match):
            idue.ab_from_log_ratios(u, v)
    with pytest.raises(ValueError, match="expected one per real item"):
        idue.check_itemset_id_ldp(idue.idue_ps([1.0, 2.0, 2.0], 2), [1.0, 2.0], 1.0)
    with pytest.raises(ValueError, match="MAX_ENUMERATED_D"):
        all_itemsets(11)
