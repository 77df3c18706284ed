"""The audits of the hashed families: fresh seeds when sampling, and the LIP mutant of a seed-pool calibration.

``OLH.sample_outputs`` runs the mechanism as ``perturb`` does, a fresh 64-bit seed per user, and
maps each report to the set of items it supports (a column of ``OLH.channel()``).  The mutant
``olh-lip-seed-pool`` (:func:`ldpkit.audit.mutants.lip_mutants`) is OLH calibrated to LIP on the
pool of 64 seeds the accountant used to read: its LIP audit flags it, from the exact channel and
from the kit's own sampling code.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldpkit import OLH, accountant, contracts
from ldpkit.audit import audit_ldp, audit_lip, from_channel, from_mechanism
from ldpkit.audit.mutants import lip_mutants, olh_calibrated_on_a_seed_pool, pool_support_channel
from ldpkit.calibration import calibrate

MUTANT = lip_mutants()["olh-lip-seed-pool"]


def test_the_seed_pool_calibration_claims_the_promise_and_breaks_it() -> None:
    m = MUTANT
    assert m.notion == "lip" and m.prior is not None
    claimed = accountant.lip_epsilon(m.claimed, m.prior)
    assert claimed <= m.budget * (1 + 1e-9)                 # what the pool's accountant certified
    assert m.true_loss > m.budget + 0.25                      # what fresh seeds give
    # the claimed channel is the pool channel with its outputs merged by support set: same LIP value
    olh = olh_calibrated_on_a_seed_pool(4, list(m.prior), m.budget)
    assert accountant.lip_epsilon(olh.pool_channel(), m.prior) == pytest.approx(claimed, rel=1e-12)
    # the grouping that breaks it (items 0-2 together, item 3 apart) never occurs in the pool
    worst = 0b0111
    assert m.claimed.matrix[:, worst].sum() == 0 and m.buggy.matrix[:, worst].min() > 0


@pytest.mark.parametrize("seed", range(3))
def test_the_lip_audit_catches_it_black_box_and_from_the_exact_channel(seed: int) -> None:
    m = MUTANT
    sampler = from_channel(m.buggy)
    assert audit_lip(sampler, m.prior, m.n_catch, events="black", rng=seed).value > m.budget
    assert audit_lip(sampler, m.prior, m.n_catch, events="white", rng=seed, channel=m.buggy).value > m.budget
    # events chosen from the claim cannot see it: the claim gives the violating outputs probability 0
    assert audit_lip(sampler, m.prior, m.n_catch, events="white", rng=seed, channel=m.claimed).value <= m.budget


def test_the_lip_audit_catches_it_in_the_kits_own_sampling_code() -> None:
    """Black-box, from ``OLH.sample_outputs``: fresh seeds with the kit's hash, as ``perturb`` draws them."""
    m = MUTANT
    olh = olh_calibrated_on_a_seed_pool(4, list(m.prior), m.budget)
    assert audit_lip(from_mechanism(olh), m.prior, m.n_catch, events="black", rng=0).value > m.budget
    # the member calibrated now keeps the promise, and the same audit does not flag it
    fixed = calibrate("OLH", contracts.lip(m.budget, m.prior)).mechanism
    assert fixed.epsilon < olh.epsilon
    assert audit_lip(from_mechanism(fixed), m.prior, m.n_catch, events="black", rng=0).value <= m.budget


def test_sampling_a_hashed_family_matches_its_exact_channel() -> None:
    """The audits' sampler of OLH: fresh seeds, outputs the support sets, law equal to the exact channel."""
    from scipy import stats

    olh = OLH(5, 1.0)
    ch = olh.channel().to_explicit()
    sampler = from_mechanism(olh)
    assert sampler.n_outputs == 32
    for x in (0, 4):
        counts = np.bincount(sampler(x, 200_000, np.random.default_rng(x)), minlength=32)
        assert stats.chisquare(counts, 200_000 * ch.matrix[x]).pvalue > 1e-4
    assert 0.85 < audit_ldp(sampler, 200_000, events="black", rng=0).value <= 1.0


def test_pool_support_channel_rows_are_distributions() -> None:
    ch = pool_support_channel(OLH(5, 1.0))
    assert ch.n_outputs == 32
    np.testing.assert_allclose(ch.matrix.sum(axis=1), 1.0, atol=1e-12)
    assert accountant.ldp_epsilon(ch) == pytest.approx(1.0, abs=1e-9)
