"""Context-aware LDP and the pairwise log-ratio matrix: every pairwise notion follows from the matrix.

The pairwise matrix ``L[x, x'] = max_y log P(y|x) / P(y|x')`` is the tightest parameter of
context-aware LDP.  LDP, ID-LDP (every built-in rule) and MinID-LDP are context-aware LDP with a
particular matrix (:func:`~ldpkit.accountant.pairwise_budgets`), so each one's tightest value must
be a function of ``L`` alone: this test recomputes each from ``L`` and compares it with the
notion's own accountant on every instance of the mechanism registry (item mechanisms and the
item-set channels of Padding-and-Sampling alike), so a mechanism registered later is covered.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpkit import GRR, IPRR, accountant
from ldpkit.accountant import (
    check_budget_matrix,
    check_context_aware,
    context_aware_scale,
    pairwise_budgets,
    pairwise_log_ratio,
)
from ldpkit.channels import ExplicitChannel
from ldpkit.family import families

RULES = {"min": np.minimum, "average": lambda a, b: (a + b) / 2, "max": np.maximum}


def instances() -> list[tuple[str, object]]:
    return [(f"{fam.name}-{i}", mech) for fam in families() for i, mech in enumerate(fam.examples())]


def budgets_for(d: int) -> np.ndarray:
    return np.linspace(0.4, 2.5, d)


def scale_from_matrix(L: np.ndarray, M: np.ndarray) -> float:
    off = ~np.eye(L.shape[0], dtype=bool) & np.isfinite(M)
    return float(max(0.0, np.max(L[off] / M[off]))) if np.any(off) else 0.0


@pytest.mark.parametrize("name,mech", instances(), ids=[n for n, _ in instances()])
def test_pairwise_matrix_gives_every_pairwise_notion(name: str, mech: object) -> None:
    L = pairwise_log_ratio(mech)
    d = L.shape[0]
    off = ~np.eye(d, dtype=bool)
    # LDP: the largest entry
    assert accountant.ldp_epsilon(mech) == pytest.approx(float(L[off].max()), rel=1e-12, abs=1e-12)
    e = budgets_for(d)
    for rule, fn in RULES.items():
        M = fn(e[:, None], e[None, :])
        expected = scale_from_matrix(L, M)
        assert accountant.idldp_scale(mech, e, r=rule) == pytest.approx(expected, rel=1e-12, abs=1e-12), rule
        assert context_aware_scale(mech, pairwise_budgets(d, budgets=e, r=rule)) == pytest.approx(expected, rel=1e-12,
                                                                                                      abs=1e-12)
    assert accountant.minidldp_scale(mech, e) == pytest.approx(scale_from_matrix(L, np.minimum(e[:, None], e[None, :])),
                                                                rel=1e-12, abs=1e-12)
    # the check's verdict is the scale's: satisfied exactly when L <= M everywhere
    M = pairwise_budgets(d, budgets=e, r="min")
    s = context_aware_scale(mech, M)
    if math.isfinite(s) and s > 0:
        assert check_context_aware(mech, M * s * (1 + 1e-7)).satisfied
        assert not check_context_aware(mech, M * s * (1 - 1e-7)).satisfied
        assert check_context_aware(mech, M).satisfied == accountant.check_minidldp(mech, e).satisfied


def test_ldp_is_the_constant_matrix() -> None:
    mech = GRR(4, 1.3)
    M = pairwise_budgets(4, epsilon=1.3)
    assert check_context_aware(mech, M).satisfied and not check_context_aware(mech, M * (1 - 1e-7)).satisfied


def test_unconstrained_pairs_and_iprr() -> None:
    """A pair with budget inf is free: IPRR's two non-sensitive items may be told apart from each other only."""
    e = np.array([0.5, 1.0, math.inf, math.inf])
    mech = IPRR(e)
    L = pairwise_log_ratio(mech)
    M = np.full((4, 4), math.inf)
    M[2, 3] = M[3, 2] = 1.0  # constrain only the pair of non-sensitive items: violated (L = inf there)
    assert math.isinf(L[2, 3]) and not check_context_aware(mech, M).satisfied
    assert math.isinf(context_aware_scale(mech, M))
    free = np.full((4, 4), math.inf)
    res = check_context_aware(mech, free)
    assert res.satisfied and res.scale == 0.0


def test_asymmetric_matrix_is_checked_per_ordered_pair() -> None:
    # P(y|0) / P(y|1) reaches 3 and P(y|1) / P(y|0) reaches 2: M[0, 1] = log 3 and M[1, 0] = log 2 are tight
    ch = ExplicitChannel(np.array([[0.6, 0.4], [0.2, 0.8]]))
    M = np.array([[0.0, math.log(3)], [math.log(2), 0.0]])
    assert check_context_aware(ch, M).satisfied
    assert not check_context_aware(ch, M.T).satisfied


@pytest.mark.parametrize(
    "matrix,match",
    [
        (np.ones((3, 2)), r"3 x 3 matrix"),
        (np.array([[0, -1.0, 1], [1, 0, 1], [1, 1, 0]]), r"positive budgets or inf .* pair \(0, 1\)"),
        (np.array([[0, np.nan, 1], [1, 0, 1], [1, 1, 0]]), r"pair \(0, 1\)"),
    ],
)
def test_bad_matrices_are_refused_before_any_work(matrix: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        check_budget_matrix(matrix, 3)
    with pytest.raises(ValueError, match=match):
        check_context_aware(GRR(3, 1.0), matrix)


def test_pairwise_budgets_arguments() -> None:
    with pytest.raises(ValueError, match="exactly one of"):
        pairwise_budgets(3)
    with pytest.raises(ValueError, match="exactly one of"):
        pairwise_budgets(3, epsilon=1.0, budgets=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="length 2"):
        pairwise_budgets(3, budgets=[1.0, 1.0])
