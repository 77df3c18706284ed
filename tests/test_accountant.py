"""Privacy accountant: closed forms against enumeration, the papers' lemmas, bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpkit import GRR, OUE, RAPPOR, ExplicitChannel, UnaryChannel
from ldpkit.accountant import (
    REL_TOL,
    as_channel,
    check_fldp,
    check_idldp,
    check_ipldp,
    check_lip,
    check_mip,
    fldp_parameters,
    idldp_scale,
    ldp_epsilon,
    lip_epsilon,
    mutual_information,
)
from ldpkit import accountant

seeds = st.integers(min_value=0, max_value=2**32 - 1)
FAST = settings(max_examples=40, deadline=None)


# ------------------------------------------------------------------------ helpers
def random_channel(seed: int, d: int | None = None, n: int | None = None, zeros: bool = False) -> ExplicitChannel:
    """A random row-stochastic matrix; with ``zeros`` some entries are forced to 0."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 6)) if d is None else d
    n = int(rng.integers(2, 6)) if n is None else n
    m = rng.dirichlet(np.full(n, rng.uniform(0.3, 3.0)), size=d)
    if zeros:
        mask = rng.random((d, n)) < 0.25
        mask[np.arange(d), rng.integers(0, n, size=d)] = False  # keep each row non-empty
        m = np.where(mask, 0.0, m)
        m /= m.sum(axis=1, keepdims=True)
    return ExplicitChannel(m)


def random_prior(seed: int, d: int, zeros: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed + 1)
    p = rng.dirichlet(np.ones(d))
    if zeros and d > 2:
        p[rng.integers(0, d)] = 0.0
        p /= p.sum()
    return p


def dense_margins(L: np.ndarray, budgets: np.ndarray, rule) -> np.ndarray:
    """Reference: ``L - r(e_x, e_x')`` on every off-diagonal pair, ``-inf`` on the diagonal."""
    A = rule(budgets[:, None], budgets[None, :])
    margin = L - A
    np.fill_diagonal(margin, -np.inf)
    return margin


RULES = {"min": np.minimum, "max": np.maximum, "average": lambda a, b: (a + b) / 2}


def hadamard(k: int) -> np.ndarray:
    h = np.array([[1]])
    while h.shape[0] < k:
        h = np.block([[h, h], [h, -h]])
    return h


def fhr_channel(k: int, eps: float) -> ExplicitChannel:
    """FHR of Zhao et al. (Algorithm 1): item x uses Hadamard row x+1 (the first row is skipped);
    pick one +1 column i and one -1 column j uniformly, report (i, j) w.p. e^eps/(1+e^eps),
    else the swapped (j, i).  Outputs are ordered pairs (pos, neg) of distinct columns."""
    h = hadamard(k)
    outputs = [(i, j) for i in range(k) for j in range(k) if i != j]
    index = {o: t for t, o in enumerate(outputs)}
    p = math.exp(eps) / (1 + math.exp(eps))
    m = np.zeros((k - 1, len(outputs)))
    for x in range(k - 1):
        row = h[x + 1]
        plus, minus = np.flatnonzero(row == 1), np.flatnonzero(row == -1)
        w = 1.0 / (plus.size * minus.size)
        for i in plus:
            for j in minus:
                m[x, index[(int(i), int(j))]] += p * w
                m[x, index[(int(j), int(i))]] += (1 - p) * w
    return ExplicitChannel(m)


def iprr_channel(d: int, sensitive: np.ndarray, eps: np.ndarray) -> ExplicitChannel:
    """IPRR of Li et al. (Definition 5; Definition 4 when every item is sensitive).
    Q[input, output]; eps aligned with ``sensitive``."""
    s = np.sum(1.0 / np.expm1(eps))
    qbar = 1.0 / (np.expm1(eps) * (1.0 + s))
    q = np.exp(eps) * qbar
    qt = 1.0 / (1.0 + s)
    m = np.zeros((d, d))
    m[:, sensitive] = qbar[None, :]
    m[sensitive, sensitive] = q
    nonsens = np.setdiff1d(np.arange(d), sensitive)
    m[nonsens, nonsens] = qt
    return ExplicitChannel(m)


# ------------------------------------------------------------------- standard LDP
@pytest.mark.parametrize("d", [2, 5, 17])
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.7])
def test_declared_epsilon_is_exact(d: int, eps: float) -> None:
    for mech in (GRR(d, eps), RAPPOR(d, eps), OUE(d, eps)):
        assert ldp_epsilon(mech) == pytest.approx(eps, rel=1e-12)
        assert ldp_epsilon(mech.channel()) == pytest.approx(eps, rel=1e-12)
        res = check_idldp(mech, np.full(d, eps))
        assert res.satisfied and abs(res.slack) < 1e-12
        # just below the declared budget (beyond the tolerance) is a violation
        assert not check_idldp(mech, np.full(d, eps * (1 - 1e-7))).satisfied


@pytest.mark.parametrize("d", [2, 4, 6])
def test_declared_epsilon_by_enumeration(d: int) -> None:
    for mech in (RAPPOR(d, 1.3), OUE(d, 0.8)):
        assert ldp_epsilon(mech.channel().to_explicit()) == pytest.approx(mech.epsilon, rel=1e-12)


@given(seeds, st.booleans())
@FAST
def test_explicit_ldp_scan_matches_pairwise_matrix(seed: int, zeros: bool) -> None:
    ch = random_channel(seed, zeros=zeros)
    assert ldp_epsilon(ch) == pytest.approx(float(accountant.pairwise_log_ratio(ch).max()), rel=1e-12)


def test_tolerance_is_relative_1e9() -> None:
    assert REL_TOL == 1e-9
    grr = GRR(4, 2.0)
    assert check_idldp(grr, np.full(4, 2.0 * (1 - 1e-10))).satisfied  # rounding-level
    assert not check_idldp(grr, np.full(4, 2.0 * (1 - 1e-8))).satisfied


# ------------------------------------------------------------------------- ID-LDP
def test_worst_pair_on_hand_built_channel() -> None:
    m = np.array(
        [
            [0.6, 0.3, 0.1],
            [0.3, 0.4, 0.3],
            [0.1, 0.2, 0.7],
        ]
    )
    ch = ExplicitChannel(m)
    # item 1 has budget 1: L(1, 0) = log(0.3/0.1) = log 3 at output 2 exceeds min(1, 3) = 1
    # (L(1, 2) = log 3 at output 0 ties; the first in row-major order is reported)
    res = check_idldp(ch, np.array([3.0, 1.0, 2.5]))
    assert not res.satisfied
    assert res.worst_pair == (1, 0) and res.worst_output == 2
    assert res.worst_log_ratio == pytest.approx(math.log(3))
    assert res.allowed == 1.0
    assert res.slack == pytest.approx(1 - math.log(3))
    # with budget 2 for item 1 every pair holds; the tightest is (2, 0) at output 2:
    # log(0.7/0.1) against min(2.5, 3)
    relaxed = check_idldp(ch, np.array([3.0, 2.0, 2.5]))
    assert relaxed.satisfied
    assert relaxed.worst_pair == (2, 0) and relaxed.worst_output == 2
    assert relaxed.slack == pytest.approx(2.5 - math.log(7))
    # with r = max the pair (1, 0) is allowed max(3, 1) = 3 and (2, 0) becomes the worst
    by_max = check_idldp(ch, np.array([3.0, 1.0, 2.5]), r="max")
    assert by_max.satisfied and by_max.worst_pair == (2, 0) and by_max.allowed == 3.0


def test_hand_built_worst_pair_when_violated() -> None:
    m = np.array([[0.5, 0.5], [0.9, 0.1], [0.5, 0.5]])
    res = check_idldp(ExplicitChannel(m), np.array([5.0, 5.0, 1.0]))
    # L(0,1) = log 5 = 1.609 (output 1), allowed min(5, 5) = 5; L(1,2) = log 1.8, allowed 1;
    # L(2,1) = log 5, allowed min(1, 5) = 1 -> worst margin log 5 - 1 at (2, 1), output 1
    assert not res.satisfied
    assert res.worst_pair == (2, 1) and res.worst_output == 1
    assert res.worst_log_ratio == pytest.approx(math.log(5))
    assert res.allowed == 1.0 and res.slack == pytest.approx(1 - math.log(5))


def test_custom_rule_and_rule_names() -> None:
    ch = GRR(3, 1.0)
    assert check_idldp(ch, [1.0, 2.0, 3.0], r="average").rule == "average"
    res = check_idldp(ch, [1.0, 2.0, 3.0], r=lambda a, b: np.full(np.broadcast(a, b).shape, 1.0))
    assert res.satisfied and res.allowed == 1.0
    # an r that allows nothing beyond 0.5 catches the GRR ratio e^1
    assert not check_idldp(ch, [1.0, 2.0, 3.0], r=lambda a, b: 0.5 * np.minimum(a, b)).satisfied


unary_ab = st.integers(min_value=2, max_value=6).flatmap(
    lambda d: st.tuples(
        st.lists(st.sampled_from([0.1, 0.3, 0.5, 0.62, 0.9]), min_size=d, max_size=d),
        st.lists(st.sampled_from([0.05, 0.2, 0.3, 0.5]), min_size=d, max_size=d),
        st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=d, max_size=d),
    )
)


@given(unary_ab, st.sampled_from(["min", "average", "max"]))
@FAST
def test_unary_id_ldp_classes_match_dense_and_enumeration(abe, rule: str) -> None:
    a, b, e = map(np.array, abe)
    ch = UnaryChannel(a, b)
    classes = check_idldp(ch, e, r=rule)
    dense = check_idldp(ch, e, r=rule, method="dense")
    enum = check_idldp(ch.to_explicit(), e, r=rule)
    ref = dense_margins(accountant.pairwise_log_ratio(ch.to_explicit()), e, RULES[rule])
    for res in (classes, dense, enum):
        assert res.satisfied == bool(np.all(ref <= 1e-9 * np.maximum(1, np.abs(RULES[rule](e[:, None], e[None, :])))))
        assert res.worst_log_ratio - res.allowed == pytest.approx(ref.max(), abs=1e-9)
        x, xp = res.worst_pair
        assert x != xp and ref[x, xp] == pytest.approx(ref.max(), abs=1e-9)
    # the explicit check also names an output attaining the worst ratio
    x, xp = enum.worst_pair
    P = ch.to_explicit().matrix
    y = enum.worst_output
    assert math.log(P[x, y] / P[xp, y]) == pytest.approx(enum.worst_log_ratio, abs=1e-12)
    assert idldp_scale(ch, e, r=rule) == pytest.approx(idldp_scale(ch.to_explicit(), e, r=rule), rel=1e-9)


def test_unary_classes_large_domain_agree_with_dense() -> None:
    rng = np.random.default_rng(7)
    d = 1500
    level = rng.integers(0, 3, size=d)
    a = np.array([0.5, 0.6, 0.7])[level]
    b = np.array([0.1, 0.2, 0.25])[level]
    e = np.array([1.5, 2.0, 2.5])[level]
    ch = UnaryChannel(a, b)
    for rule in ("min", "average", "max"):
        fast = check_idldp(ch, e, r=rule)
        slow = check_idldp(ch, e, r=rule, method="dense")
        assert fast.satisfied == slow.satisfied
        assert fast.worst_log_ratio - fast.allowed == pytest.approx(slow.worst_log_ratio - slow.allowed, abs=1e-12)
    # a single item alone in its class: within-class pairs must not be invented
    a2, b2, e2 = a.copy(), b.copy(), e.copy()
    a2[0], b2[0], e2[0] = 0.99, 0.01, 0.1
    ch2 = UnaryChannel(a2, b2)
    fast, slow = check_idldp(ch2, e2), check_idldp(ch2, e2, method="dense")
    assert fast.worst_log_ratio - fast.allowed == pytest.approx(slow.worst_log_ratio - slow.allowed, abs=1e-12)
    assert 0 in fast.worst_pair


# ------------------------------------------------------------ Lemma 1 of Gu et al.
@given(seeds)
@FAST
def test_lemma1_min_ldp_implies_minid(seed: int) -> None:
    ch = random_channel(seed)
    eps = ldp_epsilon(ch)
    rng = np.random.default_rng(seed)
    budgets = eps * (1 + rng.exponential(1.0, size=ch.n_inputs))
    budgets[rng.integers(0, ch.n_inputs)] = eps  # min(E) = eps
    assert check_idldp(ch, budgets).satisfied


@given(seeds)
@FAST
def test_lemma1_minid_implies_ldp_bound(seed: int) -> None:
    ch = random_channel(seed)
    rng = np.random.default_rng(seed)
    shape = rng.exponential(1.0, size=ch.n_inputs) + 0.05
    budgets = idldp_scale(ch, shape) * shape  # the tightest scaling satisfying MinID-LDP
    assert check_idldp(ch, budgets).satisfied
    assert not check_idldp(ch, budgets * (1 - 1e-6)).satisfied  # and it is tight
    bound = min(budgets.max(), 2 * budgets.min())
    assert ldp_epsilon(ch) <= bound * (1 + 1e-9)


def test_lemma1_factor_two_is_attained() -> None:
    eps, t = 0.7, 1e-3
    e = math.exp(eps)
    # x* (budget eps) sits between x1 and x2 (budgets 3 eps): the chain x1 -> x* -> x2 gives e^{2 eps}
    m = np.array([[e * e * t, 1 - e * e * t], [e * t, 1 - e * t], [t, 1 - t]])
    ch = ExplicitChannel(m)
    budgets = np.array([3 * eps, eps, 3 * eps])
    assert check_idldp(ch, budgets).satisfied
    assert ldp_epsilon(ch) == pytest.approx(min(budgets.max(), 2 * budgets.min()), rel=1e-12)


# -------------------------------------------------------------------------- IPLDP
def test_iprr_satisfies_ipldp_tightly() -> None:
    d = 6
    sens = np.array([0, 2, 3])
    eps = np.array([0.1, 0.5, 1.0])
    ch = iprr_channel(d, sens, eps)
    res = check_ipldp(ch, eps, sensitive=sens)  # Theorem 2 of Li et al.
    assert res.satisfied and res.n_structural_violations == 0
    assert abs(res.slack) < 1e-12  # each sensitive output attains its budget exactly
    # budgets may also be given per item (non-sensitive entries ignored)
    full = np.full(d, 9.0)
    full[sens] = eps
    assert check_ipldp(ch, full, sensitive=sens).satisfied
    mask = np.zeros(d, dtype=bool)
    mask[sens] = True
    assert check_ipldp(ch, eps, sensitive=mask).satisfied
    # one budget slightly too small is caught at that output, with the right pair
    tight = eps.copy()
    tight[1] *= 0.99
    bad = check_ipldp(ch, tight, sensitive=sens)
    assert not bad.satisfied and bad.worst_output == 2
    assert bad.worst_pair[0] == 2 and bad.worst_pair[1] != 2
    assert bad.worst_log_ratio == pytest.approx(0.5)


def test_iprr_all_sensitive_and_relation_with_ldp() -> None:
    eps = np.array([0.3, 0.8, 1.6, 2.0])
    ch = iprr_channel(4, np.arange(4), eps)  # Definition 4 / Theorem 1 of Li et al.
    assert check_ipldp(ch, eps, sensitive=np.arange(4)).satisfied
    # D = D_S: IPLDP with E implies max(E)-LDP (Sec. 4.2), here with equality
    assert ldp_epsilon(ch) <= eps.max() * (1 + 1e-12)
    # GRR with eps is IPLDP for any E with min E = eps
    grr = GRR(4, 0.3)
    assert check_ipldp(grr, eps, sensitive=np.arange(4)).satisfied


def test_ipldp_condition_two() -> None:
    # GRR reports non-sensitive items for other inputs: condition 2 fails
    res = check_ipldp(GRR(4, 1.0), [1.0, 1.0], sensitive=[0, 1])
    assert not res.satisfied and res.slack == pytest.approx(0.0, abs=1e-12)
    assert res.n_structural_violations == 2 * 3  # outputs 2, 3 each reachable from 3 other inputs
    assert (0, 2) in res.structural_violations
    # a non-sensitive item never reported as itself also fails
    m = np.array([[0.6, 0.4, 0.0], [0.4, 0.6, 0.0], [0.5, 0.5, 0.0]])
    res = check_ipldp(ExplicitChannel(m), [1.0, 1.0], sensitive=[0, 1])
    assert res.structural_violations == ((2, 2),) and not res.satisfied


# ---------------------------------------------------------------------- LIP / MIP
@given(seeds, st.booleans(), st.booleans())
@FAST
def test_theorem1_lip_ldp_sandwich(seed: int, zeros: bool, prior_zeros: bool) -> None:
    ch = random_channel(seed, zeros=zeros)
    prior = random_prior(seed, ch.n_inputs, zeros=prior_zeros)
    lip, ldp = lip_epsilon(ch, prior), ldp_epsilon(ch)
    assert lip <= ldp * (1 + 1e-12) or ldp == math.inf  # eps-LDP => eps-LIP
    assert ldp <= 2 * lip * (1 + 1e-12) or lip == math.inf  # eps-LIP => 2 eps-LDP
    if math.isfinite(ldp) and ldp > 0:
        assert check_lip(ch, ldp, prior=prior).satisfied


def test_theorem1_factor_two_is_asymptotically_tight() -> None:
    for eps in (0.1, 0.01):
        p = math.exp(eps) / (1 + math.exp(eps))
        rr = ExplicitChannel(np.array([[p, 1 - p], [1 - p, p]]))
        ratio = ldp_epsilon(rr) / lip_epsilon(rr, [0.5, 0.5])
        assert 2 - eps < ratio < 2


def test_lip_zero_prior_convention() -> None:
    # input 1 has zero prior and can never produce output 1, which input 0 produces:
    # restricted to the prior's support the channel would be 0-LIP, yet it is not LDP at all.
    ch = ExplicitChannel(np.array([[0.5, 0.5], [1.0, 0.0]]))
    assert ldp_epsilon(ch) == math.inf
    res = check_lip(ch, 1.0, prior=[1.0, 0.0])
    assert res.lip_epsilon == math.inf and not res.satisfied
    assert (res.worst_input, res.worst_output) == (1, 1)


def test_lip_worst_cell_by_hand() -> None:
    m = np.array([[0.8, 0.2], [0.4, 0.6]])
    prior = np.array([0.5, 0.5])  # P(y) = (0.6, 0.4)
    res = check_lip(ExplicitChannel(m), 1.0, prior=prior)
    # ratios P(y|x)/P(y): 0.8/0.6, 0.2/0.4, 0.4/0.6, 0.6/0.4; the lower bound binds at (0, 1)
    assert res.lip_epsilon == pytest.approx(math.log(2))
    assert (res.worst_input, res.worst_output) == (0, 1)
    assert res.satisfied and res.slack == pytest.approx(1 - math.log(2))
    assert not check_lip(ExplicitChannel(m), 0.69, prior=prior).satisfied


unary_lip = st.integers(min_value=2, max_value=6).flatmap(
    lambda d: st.tuples(
        st.lists(st.floats(0.02, 0.98), min_size=d, max_size=d),
        st.lists(st.floats(0.02, 0.98), min_size=d, max_size=d),
        st.lists(st.floats(0.0, 1.0), min_size=d, max_size=d).filter(lambda w: sum(w) > 0.1),
    )
)


@given(unary_lip)
@FAST
def test_unary_lip_closed_form_matches_enumeration(abw) -> None:
    a, b, w = map(np.array, abw)
    prior = w / w.sum()
    ch = UnaryChannel(a, b)
    assert lip_epsilon(ch, prior) == pytest.approx(lip_epsilon(ch.to_explicit(), prior), rel=1e-9, abs=1e-12)
    res = check_lip(ch, 1.0, prior=prior)
    assert res.worst_output is None
    assert res.lip_epsilon == pytest.approx(lip_epsilon(ch, prior), rel=1e-12)


def test_unary_lip_with_deterministic_bits_is_enumerated() -> None:
    ch = UnaryChannel(np.array([1.0, 0.5, 0.5]), np.array([0.0, 0.2, 0.2]))
    assert lip_epsilon(ch, [0.2, 0.3, 0.5]) == lip_epsilon(ch.to_explicit(), [0.2, 0.3, 0.5])


@given(seeds, st.booleans(), st.booleans())
@FAST
def test_proposition1_lip_implies_mip(seed: int, zeros: bool, prior_zeros: bool) -> None:
    ch = random_channel(seed, zeros=zeros)
    prior = random_prior(seed, ch.n_inputs, zeros=prior_zeros)
    eps = lip_epsilon(ch, prior)
    mi = mutual_information(ch, prior)
    assert mi <= eps * (1 + 1e-12)  # Proposition 1 (nats)
    # in fact I(X;Y) <= eps * tanh(eps / 2): the bound of Proposition 1 is loose
    if math.isfinite(eps):
        assert mi <= eps * math.tanh(eps / 2) + 1e-12
        if eps > 0:
            assert check_mip(ch, eps, prior=prior).satisfied


def test_proposition1_needs_natural_logarithms() -> None:
    # GRR over 64 items with eps = 6 under a uniform prior: about 4.01-LIP, yet I(X;Y) is
    # 3.20 nats = 4.62 bits.  Measured in bits, Proposition 1 would fail.
    grr, prior = GRR(64, 6.0), np.full(64, 1 / 64)
    eps = lip_epsilon(grr, prior)
    assert mutual_information(grr, prior) <= eps
    assert mutual_information(grr, prior, base=2) > eps
    assert not check_mip(grr, 0.99 * mutual_information(grr, prior), prior=prior).satisfied


def test_mip_base_is_explicit_in_check_and_guarantee() -> None:
    """check_mip and Guarantee("mip", ...) take the log base; nats by default, as Proposition 1 needs."""
    from typing import Any

    from ldpkit.accountant import Guarantee, verify

    grr, prior = GRR(64, 6.0), np.full(64, 1 / 64)
    nats, bits = mutual_information(grr, prior), mutual_information(grr, prior, base=2)
    assert bits == pytest.approx(nats / math.log(2), rel=1e-12)
    res = check_mip(grr, 4.7, prior=prior, base=2)
    assert res.satisfied and res.base == 2.0 and res.mutual_information == pytest.approx(bits)
    assert res.slack == pytest.approx(4.7 - bits)
    assert not check_mip(grr, 4.6, prior=prior, base=2).satisfied and check_mip(grr, 4.6, prior=prior).satisfied
    assert check_mip(grr, 4.6, prior=prior).base is None
    with pytest.raises(ValueError, match="base"):
        check_mip(grr, 1.0, prior=prior, base=1)
    with pytest.raises(ValueError, match="base"):
        check_mip(grr, 1.0, prior=prior, base="2")

    class Declares:
        def __init__(self, guarantees: list[Guarantee]) -> None:
            self._g = guarantees

        def channel(self) -> Any:
            return grr.channel()

        def guarantees(self) -> list[Guarantee]:
            return self._g

    assert verify(Declares([Guarantee("mip", prior=prior, epsilon=4.7, base=2)])).satisfied
    assert not verify(Declares([Guarantee("mip", prior=prior, epsilon=4.6, base=2)])).satisfied
    assert verify(Declares([Guarantee("mip", prior=prior, epsilon=4.6)])).satisfied
    # and LIP under a prior is verified from its Guarantee record
    lip = lip_epsilon(grr, prior)
    assert verify(Declares([Guarantee("lip", prior=prior, epsilon=lip)])).satisfied
    assert not verify(Declares([Guarantee("lip", prior=prior, epsilon=0.99 * lip)])).satisfied


def test_mutual_information_known_values() -> None:
    prior = np.array([0.5, 0.25, 0.25])
    ident = ExplicitChannel(np.eye(3))
    entropy = -np.sum(prior * np.log(prior))
    assert mutual_information(ident, prior) == pytest.approx(entropy)
    assert mutual_information(ident, prior, base=2) == pytest.approx(1.5)
    const = ExplicitChannel(np.full((3, 4), 0.25))
    assert mutual_information(const, prior) == 0.0
    d, eps = 5, 1.0
    g = GRR(d, eps)
    row = np.array([g.p] + [g.q] * (d - 1))
    expected = math.log(d) + float(np.sum(row * np.log(row)))
    assert mutual_information(g, np.full(d, 1 / d)) == pytest.approx(expected, rel=1e-12)
    # unary channels are enumerated
    ue = OUE(4, 1.0)
    assert mutual_information(ue, np.full(4, 0.25)) == pytest.approx(
        mutual_information(ue.channel().to_explicit(), np.full(4, 0.25)), rel=1e-12
    )


# --------------------------------------------------------------------------- FLDP
def test_fhr_is_half_fldp() -> None:
    # Theorem 2 of Zhao et al.: FHR satisfies (alpha = 0.5)-FLDP with its RR budget
    for k, eps in ((8, 1.0), (16, 0.4)):
        params = fldp_parameters(fhr_channel(k, eps))
        assert params.shared_fraction == pytest.approx(0.5)
        assert params.epsilon == pytest.approx(eps, rel=1e-12)
        assert check_fldp(fhr_channel(k, eps), eps, alpha=0.5).satisfied
        assert not check_fldp(fhr_channel(k, eps), eps, alpha=0.6).satisfied
        # FHR is not LDP at all: outputs outside the intersection have ratio infinity
        assert ldp_epsilon(fhr_channel(k, eps)) == math.inf


@given(seeds, st.booleans())
@FAST
def test_fldp_alpha_one_is_ldp(seed: int, zeros: bool) -> None:
    # Lemma 1 of Zhao et al. under the reconstruction: (1, eps)-FLDP <=> eps-LDP
    ch = random_channel(seed, zeros=zeros)
    eps = ldp_epsilon(ch)
    params = fldp_parameters(ch)
    if math.isfinite(eps):
        assert params.shared_fraction == 1.0
        assert params.epsilon == pytest.approx(eps, rel=1e-12)
        assert check_fldp(ch, max(eps, 1e-3), alpha=1.0).satisfied
    else:
        assert params.shared_fraction < 1.0 or params.epsilon == math.inf


def test_fldp_partition_into_groups() -> None:
    # GRR inside each of two groups of 3: each input hides in half the domain (hiding_fraction),
    # but inputs in different groups share no output (shared_fraction 0)
    g = GRR(3, 1.0).channel().matrix
    m = np.zeros((6, 6))
    m[:3, :3] = g
    m[3:, 3:] = g
    params = fldp_parameters(ExplicitChannel(m))
    assert params.shared_fraction == 0.0 and params.hiding_fraction == pytest.approx(0.5)
    assert params.epsilon == pytest.approx(1.0)
    assert not check_fldp(ExplicitChannel(m), 1.0, alpha=0.5).satisfied


unary_fldp = st.integers(min_value=2, max_value=6).flatmap(
    lambda d: st.tuples(
        st.lists(st.sampled_from([0.0, 0.3, 0.5, 0.8, 1.0]), min_size=d, max_size=d),
        st.lists(st.sampled_from([0.0, 0.2, 0.5, 1.0]), min_size=d, max_size=d),
    )
)


@given(unary_fldp)
@FAST
def test_unary_fldp_closed_form_matches_enumeration(ab) -> None:
    a, b = map(np.array, ab)
    ch = UnaryChannel(a, b)
    closed, enum = fldp_parameters(ch), fldp_parameters(ch.to_explicit())
    assert closed.shared_fraction == pytest.approx(enum.shared_fraction, abs=1e-12)
    assert closed.epsilon == pytest.approx(enum.epsilon, abs=1e-9)
    assert closed.hiding_fraction == enum.hiding_fraction
    fx, fxp = closed.fraction_pair
    assert fx != fxp


# ---------------------------------------------------------------------- bad inputs
def test_mechanism_or_channel_accepted() -> None:
    grr = GRR(3, 1.0)
    assert isinstance(as_channel(grr), ExplicitChannel)
    ch = grr.channel()
    assert as_channel(ch) is ch
    assert lip_epsilon(grr, [0.2, 0.3, 0.5]) == lip_epsilon(grr.channel(), [0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match="'not a channel'"):
        ldp_epsilon("not a channel")


def test_bad_priors() -> None:
    ch = GRR(3, 1.0)
    with pytest.raises(ValueError, match="sums to 0.75"):
        lip_epsilon(ch, [0.25, 0.25, 0.25])
    with pytest.raises(ValueError, match="-0.1"):
        check_lip(ch, 1.0, prior=[-0.1, 0.6, 0.5])
    with pytest.raises(ValueError, match="1.5"):
        mutual_information(ch, [1.5, -0.25, -0.25])
    with pytest.raises(ValueError, match="length 2, expected 3"):
        check_mip(ch, 1.0, prior=[0.5, 0.5])
    with pytest.raises(ValueError, match="sums to"):
        check_mip(ch, 1.0, prior=[0.5, 0.6, 0.0])


def test_bad_budgets_and_rules() -> None:
    ch = GRR(4, 1.0)
    with pytest.raises(ValueError, match="length 3, expected the domain size 4"):
        check_idldp(ch, [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="-1.0"):
        check_idldp(ch, [1.0, -1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="0.0"):
        idldp_scale(ch, [1.0, 0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="'median'"):
        check_idldp(ch, [1.0] * 4, r="median")
    with pytest.raises(ValueError, match="42"):
        check_idldp(ch, [1.0] * 4, r=42)
    with pytest.raises(ValueError, match="-1.0"):
        check_idldp(ch, [1.0] * 4, r=lambda a, b: -np.minimum(a, b))
    with pytest.raises(ValueError, match="'sparse'"):
        check_idldp(ch, [1.0] * 4, method="sparse")
    with pytest.raises(ValueError, match="'classes' needs a UnaryChannel"):
        check_idldp(ch, [1.0] * 4, method="classes")
    with pytest.raises(ValueError, match="lambda|homogeneous"):
        idldp_scale(ch, [1.0] * 4, r=lambda a, b: a)
    with pytest.raises(ValueError, match="at least 2 inputs, the channel has 1"):
        check_idldp(ExplicitChannel(np.array([[0.5, 0.5]])), [1.0])


def test_bad_ipldp_arguments() -> None:
    grr = GRR(4, 1.0)
    with pytest.raises(ValueError, match="length 3, expected 2"):
        check_ipldp(grr, [1.0, 1.0, 1.0], sensitive=[0, 1])
    with pytest.raises(ValueError, match="-2.0"):
        check_ipldp(grr, [1.0, -2.0], sensitive=[0, 1])
    with pytest.raises(ValueError, match="item 1 more than once"):
        check_ipldp(grr, [1.0, 1.0], sensitive=[1, 1])
    with pytest.raises(ValueError, match="item 7"):
        check_ipldp(grr, [1.0, 1.0], sensitive=[0, 7])
    with pytest.raises(ValueError, match="selects no item"):
        check_ipldp(grr, [1.0], sensitive=np.zeros(4, dtype=bool))
    with pytest.raises(ValueError, match=r"square channel .*\(2, 3\)"):
        check_ipldp(ExplicitChannel(np.full((2, 3), 1 / 3)), [1.0], sensitive=[0])
    with pytest.raises(ValueError, match="UnaryChannel"):
        check_ipldp(RAPPOR(3, 1.0), [1.0], sensitive=[0])


def test_bad_scalars() -> None:
    ch = GRR(3, 1.0)
    with pytest.raises(ValueError, match="-1"):
        check_lip(ch, -1, prior=[1 / 3] * 3)
    with pytest.raises(ValueError, match="0"):
        check_mip(ch, 0, prior=[1 / 3] * 3)
    with pytest.raises(ValueError, match="1.5"):
        check_fldp(ch, 1.0, alpha=1.5)
    with pytest.raises(ValueError, match="0.0"):
        check_fldp(ch, 1.0, alpha=0.0)
    with pytest.raises(ValueError, match="nan"):
        check_fldp(ch, float("nan"), alpha=0.5)
    with pytest.raises(ValueError, match="base.* 1"):
        mutual_information(ch, [1 / 3] * 3, base=1)
    with pytest.raises(ValueError, match="-2"):
        mutual_information(ch, [1 / 3] * 3, base=-2)
    with pytest.raises(ValueError, match="2\\*\\*20"):
        mutual_information(OUE(20, 1.0), np.full(20, 0.05))


def test_fit_to_budgets_is_tight() -> None:
    from ldpkit.accountant import check_idldp, fit_to_budgets, idldp_scale
    from ldpkit.channels import random_channel

    budgets = np.array([0.5, 1.0, 1.0, 2.0])
    ch, theta = fit_to_budgets(random_channel(4, 6, rng=5, concentration=0.3), budgets)
    assert 0.0 < theta < 1.0
    assert check_idldp(ch, budgets, r="min").satisfied
    assert idldp_scale(ch, budgets, r="min") == pytest.approx(1.0, abs=1e-9)
    # an already private channel is returned unchanged
    same, zero = fit_to_budgets(ch, budgets * 2)
    assert zero == 0.0 and np.array_equal(same.matrix, ch.matrix)
