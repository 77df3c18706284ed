"""Privacy profiles: every field equals its notion's own check, budgets with inf, bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpkit import GRR, IPRR, URR, ExplicitChannel, accountant
from ldpkit import accountant
from ldpkit.accountant import (
    check_ipldp,
    check_minidldp,
    check_uldp,
    idldp_scale,
    ldp_epsilon,
    lip_epsilon,
    privacy_profile,
)
from ldpkit.channels import random_channel


def _brute_minid_scale(m: np.ndarray, e: np.ndarray) -> float:
    """max over ordered pairs with a finite min budget of max_y log(m[x,y]/m[x',y]) / min budget."""
    d = m.shape[0]
    best = 0.0
    with np.errstate(divide="ignore"):
        logm = np.log(m)
    for x in range(d):
        for xp in range(d):
            a = min(e[x], e[xp])
            if x == xp or not math.isfinite(a):
                continue
            best = max(best, float(np.max(logm[x] - logm[xp])) / a)
    return best


@pytest.mark.parametrize("seed", range(12))
def test_fields_match_each_notion_on_random_channels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 7))
    ch = random_channel(d, d, rng=rng, concentration=float(rng.uniform(0.5, 3)))
    e = rng.uniform(0.2, 3.0, size=d)
    if d > 2:
        e[rng.choice(d, size=int(rng.integers(0, d - 1)), replace=False)] = math.inf
    prior = rng.dirichlet(np.ones(d))
    prof = privacy_profile(ch, budgets=e, prior=prior)
    sens = np.flatnonzero(np.isfinite(e))
    assert prof.sensitive == tuple(int(i) for i in sens)
    assert prof.ldp_epsilon == pytest.approx(ldp_epsilon(ch))
    assert prof.minid_scale == pytest.approx(_brute_minid_scale(ch.matrix, e), rel=1e-12)
    assert prof.lip_epsilon == pytest.approx(lip_epsilon(ch, prior))
    res = check_ipldp(ch, e[sens], sensitive=sens)
    assert prof.ipldp_satisfied == res.satisfied
    assert prof.uldp_epsilon == pytest.approx(check_uldp(ch, 1.0, sensitive=sens).uldp_epsilon)


@pytest.mark.parametrize("seed", range(6))
def test_minid_scale_with_finite_budgets_decides_minid_ldp(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    ch = random_channel(4, 4, rng=rng, concentration=5.0)
    e = rng.uniform(0.5, 2.0, size=4)
    s = privacy_profile(ch, budgets=e).minid_scale
    assert s == pytest.approx(idldp_scale(ch, e, r="min"))
    assert check_minidldp(ch, e * s * (1 + 1e-6)).satisfied
    assert not check_minidldp(ch, e * s * (1 - 1e-3)).satisfied


def test_iprr_profile() -> None:
    e = np.array([0.1, 0.5, 1.0, math.inf, math.inf])
    prof = privacy_profile(IPRR(e), budgets=e)
    assert prof.ipldp_satisfied
    # a reported non-sensitive item reveals the input: no LDP, no MinID-LDP at any scale
    assert prof.ldp_epsilon == math.inf and prof.minid_scale == math.inf
    # the protected outputs are the sensitive items, the largest ratio is at the largest budget
    assert prof.uldp_epsilon == pytest.approx(1.0)
    # with every item sensitive IPRR is (max E)-LDP and exactly E-MinID-LDP is not implied
    e2 = np.array([0.1, 0.5, 1.0])
    prof2 = privacy_profile(IPRR(e2), budgets=e2)
    assert prof2.ldp_epsilon == pytest.approx(1.0)
    assert prof2.ipldp_satisfied


def test_krr_at_min_budget_is_minid_but_not_ipldp_with_nonsensitive_items() -> None:
    e = np.array([0.1, 0.5, 1.0, math.inf])
    prof = privacy_profile(GRR(4, 0.1), budgets=e)
    assert prof.minid_scale == pytest.approx(1.0)
    assert prof.ipldp_satisfied is False  # a non-sensitive output is produced by other inputs
    prof_urr = privacy_profile(URR(4, 0.1, sensitive=[0, 1, 2]), budgets=e)
    assert prof_urr.ipldp_satisfied and prof_urr.uldp_epsilon == pytest.approx(0.1)


def test_optional_fields_stay_none() -> None:
    prof = privacy_profile(GRR(3, 1.0))
    assert prof.ldp_epsilon == pytest.approx(1.0)
    assert (prof.minid_scale, prof.ipldp_satisfied, prof.uldp_epsilon, prof.lip_epsilon) == (None,) * 4
    # one column per registered notion reported in profiles, in table order, and a verdict per scale notion
    profiled = [n for n in accountant.registered_notions() if n.profile]
    keys = [n.profile_key for n in profiled]
    assert list(prof.values) == keys and len(set(keys)) == len(keys)
    verdicts = {n.profile_key.removesuffix("_scale") + "_satisfied" for n in profiled if n.scale}
    assert set(prof.as_dict()) == set(keys) | verdicts | {"sensitive"}
    assert all(prof.as_dict()[k] is None for k in set(keys) - {"ldp_epsilon"})
    # the builtin notions' keys, each derived from the notion's id by one rule
    assert {"ldp_epsilon", "minid_scale", "ipldp_scale", "uldp_epsilon", "lip_epsilon", "mip_information",
            "fldp_epsilon", "context_aware_scale"} <= set(keys)
    assert privacy_profile(GRR(3, 1.0), sensitive=[0]).uldp_epsilon == pytest.approx(1.0)
    # the context-aware column needs its matrix of pairwise budgets
    M = accountant.pairwise_budgets(3, budgets=[0.5, 2.0, 2.0])
    assert privacy_profile(GRR(3, 1.0), matrix=M).context_aware_scale == pytest.approx(2.0)


def test_profile_keys_follow_one_rule_from_the_id() -> None:
    for notion in accountant.registered_notions():
        stem = notion.name.removesuffix("-ldp").replace("-", "_")
        assert notion.profile_key == f"{stem}_{notion.quantity}"
        assert notion.quantity in accountant.QUANTITIES and (notion.quantity == "scale") == notion.scale
    assert accountant.get_notion("mip").profile_key == "mip_information"


def test_own_parameters_are_passed_by_notion_id() -> None:
    from ldpkit import FHR

    fhr = FHR(5, fldp_epsilon=1.0)  # states (alpha = 1/2, eps)-FLDP
    assert privacy_profile(fhr).fldp_epsilon == pytest.approx(1.0)
    assert privacy_profile(fhr, params={"fldp": {"alpha": 0.6}}).fldp_epsilon == math.inf  # given beats declared
    assert privacy_profile(GRR(3, 1.0)).fldp_epsilon is None
    assert privacy_profile(GRR(3, 1.0), params={"fldp": {"alpha": 1.0}}).fldp_epsilon == pytest.approx(1.0)
    with pytest.raises(TypeError):
        privacy_profile(GRR(3, 1.0), alpha=0.5)  # type: ignore[call-arg]


def test_non_square_channel_has_no_ipldp() -> None:
    ch = ExplicitChannel(np.array([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]]))
    prof = privacy_profile(ch, budgets=[1.0, 2.0])
    assert prof.ipldp_satisfied is None and prof.minid_scale is not None


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"budgets": [1.0, -1.0, 1.0]}, "positive budgets or inf"),
        ({"budgets": [1.0, math.nan, 1.0]}, "positive budgets or inf"),
        ({"budgets": [1.0, 1.0]}, "length 2"),
        ({"budgets": [1.0, math.inf, 1.0], "sensitive": [0, 1]}, "finite budget"),
        ({"prior": [0.5, 0.5, 0.5]}, "prior"),
        ({"sensitive": [5]}, "5"),
    ],
)
def test_bad_inputs_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        privacy_profile(GRR(3, 1.0), **kwargs)


def test_id_ldp_scale_accepts_inf_only_where_documented() -> None:
    with pytest.raises(ValueError, match="positive budgets or inf"):
        idldp_scale(GRR(3, 1.0), [1.0, -math.inf, 1.0])
    with pytest.raises(ValueError, match="finite positive"):
        check_minidldp(GRR(3, 1.0), [1.0, math.inf, 1.0])
    assert accountant.idldp_scale(GRR(3, 1.0), [math.inf] * 3) == 0.0


def test_uldp_of_random_unary_channels_is_ldp_without_enumeration() -> None:
    from ldpkit import OUE, UnaryChannel
    from ldpkit.accountant import ldp_epsilon as ldp_eps

    small = UnaryChannel(np.array([0.6, 0.7, 0.55]), np.array([0.2, 0.3, 0.25]))
    for sens in ([0], [0, 2], [0, 1, 2]):
        closed = check_uldp(small, 1.0, sensitive=sens)
        enum = check_uldp(small.to_explicit(), 1.0, sensitive=sens)
        assert closed.protected is None and len(enum.protected) == 8
        assert closed.uldp_epsilon == pytest.approx(enum.uldp_epsilon, rel=1e-12)
        assert closed.satisfied == enum.satisfied
    big = OUE(200, 1.0)  # 2**200 outputs: only the closed form can answer
    prof = privacy_profile(big, budgets=np.full(200, 1.0))
    assert prof.uldp_epsilon == pytest.approx(ldp_eps(big)) and prof.minid_scale == pytest.approx(1.0)


def test_a_notion_that_cannot_be_computed_for_the_channel_is_none() -> None:
    """Mutual information has no closed form for unary channels: a 40-bit OUE (2**40 outputs) cannot be
    enumerated, so its column is None while the notions with closed forms are computed."""
    from ldpkit import OUE

    prof = privacy_profile(OUE(40, 1.0), prior=np.full(40, 1 / 40))
    assert prof.mip_information is None
    assert prof.ldp_epsilon == pytest.approx(1.0) and prof.lip_epsilon is not None
    with pytest.raises(accountant.AccountingError):
        accountant.mutual_information(OUE(40, 1.0), np.full(40, 1 / 40))
