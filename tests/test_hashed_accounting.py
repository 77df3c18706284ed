"""Exact accounting of the hashed families: every hash outcome, not a sample of them.

The regression this file was written for: the accountant used to build OLH's channel from a fixed
pool of 64 hash seeds, while ``OLH.perturb`` draws a fresh 64-bit seed per user.  For a pairwise
notion the pool gave the exact value; for LIP it gave only a lower bound, so OLH calibrated to
LIP(1) under the synthesis chapter's Zipf prior (``t = 1.01122``) produced, for some fresh seeds,
an output whose LIP value is 1.00711 (items 0-8 in one bucket, item 9 alone).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ldpkit import accountant, contracts
from ldpkit.calibration import calibrate
from ldpkit.datasets.synthetic import truncated_zipf_probabilities
from ldpkit.olh import hash_items

#: the synthesis chapter's setting: ten items, Zipf(2) prior, LIP budget 1
D, EPS = 10, 1.0
PRIOR = truncated_zipf_probabilities(D, 2.0)


def per_hash_lip(h: np.ndarray, prior: np.ndarray, g: int, p: float, q: float) -> np.ndarray:
    """LIP value of the channel given each hash outcome (rows of ``h``: the bucket of every item).

    Given the hash, the report is randomised response over the ``g`` buckets applied to the
    item's bucket, so ``P(v | x) = p`` if ``h(x) = v`` else ``q``, and ``P(v) = q + (p - q) M_v``
    with ``M_v`` the prior mass of bucket ``v``; the value is ``max |log P(v|x) / P(v)|`` over the
    items and buckets.  Computed here from the definition, bucket by bucket.
    """
    rows = np.arange(h.shape[0])[:, None]
    mass = np.zeros((h.shape[0], g))
    np.add.at(mass, (rows, h), prior[None, :])
    py = q + (p - q) * mass  # (seeds, g)
    own = np.log(p) - np.log(py[rows, h])  # log P(h(x) | x) / P(h(x)), every item
    occupied = np.zeros((h.shape[0], g), dtype=bool)
    occupied[rows, h] = True
    # every bucket v other than the item's own: log P(v) / q; the worst is the heaviest such bucket
    worst_other = np.zeros(h.shape[0])
    for v in range(g):
        other = (h != v).any(axis=1)  # some item lies outside bucket v
        worst_other = np.maximum(worst_other, np.where(other, np.log(py[:, v]) - np.log(q), 0.0))
    return np.maximum(np.abs(own).max(axis=1), worst_other)


def test_olh_calibrated_to_lip_breaks_it_on_no_seed() -> None:
    """An adversarial search over fresh seeds and over every hash function [d] -> [g] finds no violation."""
    cal = calibrate("OLH", contracts.lip(EPS, PRIOR))
    assert cal.satisfiable and cal.certificate().holds
    mech = cal.mechanism
    g, p, q = mech.g, mech.p_prime, mech.q_prime
    # fresh seeds, with the kit's own hash (as perturb draws them)
    seeds = np.random.default_rng(20240517).integers(0, 2**64, size=2_000_000, dtype=np.uint64)
    worst_seed = 0.0
    for block in np.array_split(seeds, 8):
        h = hash_items(block[:, None], np.arange(D)[None, :], g)
        worst_seed = max(worst_seed, float(per_hash_lip(h, PRIOR, g, p, q).max()))
    # the worst grouping: every function [d] -> [g] (here 4**10, in blocks)
    digits = np.array(list(itertools.product(range(g), repeat=5)), dtype=np.int64)  # (g**5, 5)
    worst_function = 0.0
    for head in digits:
        h = np.concatenate([np.broadcast_to(head, digits.shape), digits], axis=1)
        worst_function = max(worst_function, float(per_hash_lip(h, PRIOR, g, p, q).max()))
    assert worst_seed <= EPS * (1 + accountant.REL_TOL), worst_seed
    assert worst_function <= EPS * (1 + accountant.REL_TOL), worst_function
    # the accountant's value is the worst hash outcome, attained: the promise is tight
    assert accountant.lip_epsilon(mech, PRIOR) == pytest.approx(worst_function, rel=1e-12)
    assert worst_function == pytest.approx(EPS, rel=1e-9)
    assert math.isclose(worst_seed, worst_function, rel_tol=1e-12)  # 2e6 seeds reach the worst grouping
