"""Mutants: channels of mechanisms with a known bug class injected, for the audits to catch.

Auditing chapter, :ref:`sec-audit-mutants`.  Each mutant is the exact channel of a buggy
implementation (the kit's mechanisms stay clean), together with the channel and the budget the
implementation *claims*.  The tests (``tests/test_audit.py``) assert that every mutant is caught
at its stated sample size by black-box events and by white-box events taken from the claimed
channel; the chapter measures how many samples each needs.

Two bug classes named in the issue turned out not to be privacy bugs, and are kept as controls
(:func:`controls`): swapping ``p`` and ``q`` in OUE keeps the ratio ``p(1-q) / (q(1-p))``
unchanged, and a biased hash in OLH leaves each seed's ratio at most ``p'/q'``.  An audit must
not flag them.

One mutant is a bug of accounting, not of sampling (:func:`lip_mutants`): OLH calibrated to a LIP
promise on a fixed pool of 64 hash seeds, as the kit did before its hashed channels were exact.
Its sampling code is the kit's own, with a fresh seed per user; the pool misses the grouping of
the items that breaks the promise (Field chapter, :ref:`field-hashing`).  Its claimed channel is
the pool's, which gives that grouping probability 0, so only events chosen without the claim
(black-box, or white-box from the exact channel) can find it.

Examples
--------
>>> from ldpkit import accountant
>>> from ldpkit.audit.mutants import mutants
>>> m = mutants()["grr-off-by-one"]
>>> round(accountant.ldp_epsilon(m.buggy), 3), m.budget
(1.405, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Optional, Union, cast

import numpy as np

from .. import accountant
from ..channels import Channel, ExplicitChannel, UnaryChannel
from ..grr import GRR
from ..idue import IDUE
from ..iprr import IPRR, iprr_parameters
from ..olh import OLH, hash_items
from ..unary import OUE, RAPPOR

__all__ = [
    "Mutant",
    "controls",
    "grr_off_by_one",
    "idue_dropped_constraint",
    "iprr_wrong_keep",
    "lip_mutants",
    "mutants",
    "olh_calibrated_on_a_seed_pool",
    "olh_biased_hash",
    "olh_range_mismatch",
    "oue_swapped",
    "pool_support_channel",
    "unary_slip",
]


@dataclass(frozen=True)
class Mutant:
    """A buggy channel, the channel it claims, and what an audit must find.

    Attributes
    ----------
    name
        Short identifier (``"grr-off-by-one"``).
    bug
        The bug class, in words.
    buggy
        The exact channel of the buggy implementation.
    claimed
        The channel the implementation claims (white-box events are taken from it).
    notion
        ``"ldp"``, ``"pairwise"`` (a budget matrix), ``"ipldp"`` (per-item budgets) or ``"lip"``
        (a budget under :attr:`prior`).
    budget
        The claimed budget: a number for LDP and LIP, a matrix for ``"pairwise"``, a vector for ``"ipldp"``.
    n_catch
        Samples per input at which the tests assert the bug is caught (seeds 0-2, both event kinds).
    prior
        The prior of a LIP mutant (``None`` otherwise).
    """

    name: str
    bug: str
    buggy: ExplicitChannel
    claimed: ExplicitChannel
    notion: str
    budget: Union[float, np.ndarray] = field(compare=False)
    n_catch: int
    prior: Optional[np.ndarray] = field(default=None, compare=False)

    @property
    def true_loss(self) -> float:
        """The buggy channel's exact LDP (LIP) epsilon for ``"ldp"`` (``"lip"``), or its largest excess over the budget."""
        if self.notion == "ldp":
            return accountant.ldp_epsilon(self.buggy)
        if self.notion == "lip":
            assert self.prior is not None  # a LIP mutant states its prior
            return accountant.lip_epsilon(self.buggy, self.prior)
        if self.notion == "pairwise":
            return float(np.max(accountant.pairwise_log_ratio(self.buggy) - np.asarray(self.budget)))
        return float(-accountant.check_ipldp(self.buggy, self.budget_vector, sensitive=self.sensitive).slack)

    @property
    def budget_vector(self) -> np.ndarray:
        """The finite budgets of the sensitive items (for an IPLDP mutant)."""
        b = np.asarray(self.budget, dtype=float)
        return cast("np.ndarray", b[np.isfinite(b)])

    @property
    def sensitive(self) -> list[int]:
        """The sensitive items, those with a finite budget (for an IPLDP mutant)."""
        return [int(i) for i in np.flatnonzero(np.isfinite(np.asarray(self.budget, dtype=float)))]


def _unary(d: int, a: float, b: float) -> ExplicitChannel:
    return UnaryChannel(np.full(d, a), np.full(d, b)).to_explicit()


def unary_slip(d: int, eps: float) -> ExplicitChannel:
    """The unary p/q slip: every bit kept with ``e^eps / (1 + e^eps)``, the whole budget spent per bit (loss 2 eps)."""
    return _unary(d, math.exp(eps) / (1 + math.exp(eps)), 1 / (1 + math.exp(eps)))


def oue_swapped(d: int, eps: float) -> ExplicitChannel:
    """OUE with ``p`` and ``q`` swapped (``p = 1/(e^eps + 1)``, ``q = 1/2``): a control, still eps-LDP."""
    return _unary(d, 1 / (math.exp(eps) + 1), 0.5)


def grr_off_by_one(d: int, eps: float) -> ExplicitChannel:
    """GRR with ``p = e^eps / (e^eps + d - 2)`` (off by one), ``q = (1 - p) / (d - 1)``: loss eps + log((d-1)/(d-2))."""
    p = math.exp(eps) / (math.exp(eps) + d - 2)
    m = np.full((d, d), (1 - p) / (d - 1))
    np.fill_diagonal(m, p)
    return ExplicitChannel(m)


def _olh_blocks(d: int, eps: float) -> tuple[OLH, np.ndarray]:
    olh = OLH(d, eps)
    m = olh.pool_channel().matrix
    return olh, m.reshape(d, -1, olh.g)


def olh_range_mismatch(d: int, eps: float) -> ExplicitChannel:
    """OLH hashing into ``g`` buckets but randomising as if there were ``g - 1``: loss eps + log((g-1)/(g-2))."""
    olh, blocks = _olh_blocks(d, eps)
    g = olh.g
    hashed = blocks.argmax(axis=2)
    p = math.exp(eps) / (math.exp(eps) + g - 2)
    bad = np.full(blocks.shape, (1 - p) / (g - 1))
    for x in range(d):
        bad[x, np.arange(blocks.shape[1]), hashed[x]] = p
    return ExplicitChannel(bad.reshape(d, -1) / blocks.shape[1])


def olh_biased_hash(d: int, eps: float) -> ExplicitChannel:
    """OLH whose hash sends every item to bucket 0 on half of the seeds: a control, still eps-LDP.

    Utility suffers (colliding items become indistinguishable); privacy does not, since each
    seed's report is randomised response over the buckets, ratio at most ``p'/q'``.
    """
    olh, blocks = _olh_blocks(d, eps)
    g, s = olh.g, blocks.shape[1]
    p, q = math.exp(eps) / (math.exp(eps) + g - 1), 1 / (math.exp(eps) + g - 1)
    hashed = blocks.argmax(axis=2)
    hashed[:, : s // 2] = 0
    bad = np.full(blocks.shape, q)
    for x in range(d):
        bad[x, np.arange(s), hashed[x]] = p
    return ExplicitChannel(bad.reshape(d, -1) / s)


def pool_support_channel(olh: OLH) -> ExplicitChannel:
    """OLH's channel restricted to its seed pool (:meth:`~ldpkit.olh.OLH.pool_channel`), each output mapped to the items it supports.

    Column ``b`` (a bit mask) sums the pool's outputs ``(s, v)`` with ``{i : h_s(i) = v} = b``, the
    outputs of :meth:`~ldpkit.olh.OLH.channel`; a grouping no pool seed produces has probability 0.
    The likelihood ratio of every output is that of its support set, so every privacy value of the
    pool channel is unchanged.
    """
    pool = olh.pool_channel().matrix
    seeds = olh.channel_seeds(olh.default_channel_seeds)
    h = hash_items(seeds[:, None], np.arange(olh.d)[None, :], olh.g)  # (m, d)
    member = h[:, None, :] == np.arange(olh.g)[None, :, None]  # (m, g, d)
    masks = (member.astype(np.int64) << np.arange(olh.d)).sum(axis=2).ravel()  # column (s, v) -> support mask
    out = np.zeros((olh.d, 1 << olh.d))
    for x in range(olh.d):
        np.add.at(out[x], masks, pool[x])
    return ExplicitChannel(out)


def olh_calibrated_on_a_seed_pool(d: int, prior: list[float], epsilon: float) -> OLH:
    """OLH calibrated to ``epsilon``-LIP under ``prior`` as the kit did before: on its pool of 64 hash seeds.

    The largest budget ``t`` whose :meth:`~ldpkit.olh.OLH.pool_channel` keeps the promise, by
    bisection to a relative ``1e-10`` (the calibration's own tolerance), with OLH's default ``g``.
    """
    lo, hi = 1e-3, 50.0
    while hi / lo - 1.0 > 1e-10:
        mid = math.sqrt(lo * hi)
        if accountant.lip_epsilon(OLH(d, mid).pool_channel(), prior) <= epsilon:
            lo = mid
        else:
            hi = mid
    return OLH(d, lo)


def idue_dropped_constraint(budgets: list[float], factor: float = 1.25) -> ExplicitChannel:
    """IDUE (opt1) with ``a_0`` raised by ``factor``, as if the constraints of item 0's pairs had been dropped."""
    mech = IDUE(budgets, model="opt1")
    a = mech.p_support.copy()
    a[0] *= factor
    return UnaryChannel(a, mech.q_support.copy()).to_explicit()


def iprr_wrong_keep(budgets: list[float], wrong: list[float]) -> ExplicitChannel:
    """IPRR whose keep probability ``S`` is computed from ``wrong`` budgets (the resampling law from the right ones)."""
    r = iprr_parameters(budgets)["r"]
    keep = iprr_parameters(wrong)["S"]
    d = len(budgets)
    return ExplicitChannel((1 - keep) * np.tile(r / r.sum(), (d, 1)) + keep * np.eye(d))


def _explicit(ch: Channel) -> ExplicitChannel:
    return accountant.enumerate_channel(ch, "mutant")


_EPS = 1.0
_D = 4
_IDUE_BUDGETS = [0.5, 1.0, 2.0]
_IPRR_BUDGETS, _IPRR_WRONG = [0.5, 1.0, 2.0, math.inf], [2.0, 1.0, 2.0, math.inf]

def _ldp_mutant(
    name: str, bug: str, buggy: Callable[[int, float], ExplicitChannel],
    claimed: Callable[[int, float], ExplicitChannel], n_catch: int,
) -> tuple[str, Callable[[], Mutant]]:
    """``(name, builder)`` of an LDP mutant at ``d = _D``, ``eps = _EPS``: ``buggy`` and ``claimed`` take ``(d, eps)``."""
    return name, lambda: Mutant(name, bug, buggy(_D, _EPS), claimed(_D, _EPS), "ldp", _EPS, n_catch)


def _enumerated(mechanism: Callable[[int, float], GRR | OUE | RAPPOR]) -> Callable[[int, float], ExplicitChannel]:
    """The explicit channel of ``mechanism(d, eps)``, as a function of ``(d, eps)``."""
    return lambda d, eps: _explicit(mechanism(d, eps).channel())


def _olh_pool(d: int, eps: float) -> ExplicitChannel:
    """OLH's channel on its default pool of hash seeds (:meth:`~ldpkit.olh.OLH.pool_channel`)."""
    return OLH(d, eps).pool_channel()


_BUILD: dict[str, Callable[[], Mutant]] = dict([
    _ldp_mutant("unary-pq-slip", "unary encoding spending the whole budget on every bit",
                unary_slip, _enumerated(RAPPOR), 10_000),
    _ldp_mutant("grr-off-by-one", "GRR's keep probability with d - 2 for d - 1",
                grr_off_by_one, _enumerated(GRR), 10_000),
    _ldp_mutant("olh-hash-range", "OLH randomising over g - 1 buckets while hashing into g",
                olh_range_mismatch, _olh_pool, 300_000),
    ("idue-dropped-constraint", lambda: Mutant(
        "idue-dropped-constraint", "IDUE with one item's pair constraints dropped (its a raised 25%)",
        idue_dropped_constraint(_IDUE_BUDGETS), _explicit(IDUE(_IDUE_BUDGETS, model="opt1").channel()), "pairwise",
        accountant.pairwise_budgets(len(_IDUE_BUDGETS), budgets=_IDUE_BUDGETS, r="min"), 30_000)),
    ("iprr-wrong-budget", lambda: Mutant(
        "iprr-wrong-budget", "IPRR's keep probability computed from the wrong item's budget",
        iprr_wrong_keep(_IPRR_BUDGETS, _IPRR_WRONG), _explicit(IPRR(_IPRR_BUDGETS).channel()), "ipldp",
        np.array(_IPRR_BUDGETS), 10_000)),
])
_CONTROLS: dict[str, Callable[[], Mutant]] = dict([
    _ldp_mutant("oue-pq-swapped", "OUE with p and q swapped (not a privacy bug)",
                oue_swapped, _enumerated(OUE), 0),
    _ldp_mutant("olh-biased-hash", "OLH with a hash biased to one bucket (not a privacy bug)",
                olh_biased_hash, _olh_pool, 0),
])


#: the LIP mutant's setting: four items, the last one rare, and a LIP budget of 2
_LIP_PRIOR = [0.95 / 3, 0.95 / 3, 0.95 / 3, 0.05]
_LIP_EPS = 2.0


def _olh_pool_lip() -> Mutant:
    olh = olh_calibrated_on_a_seed_pool(_D, _LIP_PRIOR, _LIP_EPS)
    return Mutant("olh-lip-seed-pool", "OLH calibrated to LIP on a pool of 64 hash seeds (fresh seeds when sampling)",
                  _explicit(olh.channel()), pool_support_channel(olh), "lip", _LIP_EPS, 3_000_000,
                  prior=np.array(_LIP_PRIOR))


_LIP_BUILD: dict[str, Callable[[], Mutant]] = {"olh-lip-seed-pool": _olh_pool_lip}


def mutants() -> dict[str, Mutant]:
    """The mutants every audit must catch, by name (d = 4, eps = 1; IDUE and IPRR at their own budgets)."""
    return {name: build() for name, build in _BUILD.items()}


def controls() -> dict[str, Mutant]:
    """Bug classes that are not privacy bugs, by name: an audit must not flag them."""
    return {name: build() for name, build in _CONTROLS.items()}


def lip_mutants() -> dict[str, Mutant]:
    """Mutants the LIP audit must catch, by name: OLH calibrated to LIP on a seed pool (``d = 4``, prior with one rare item, ``eps = 2``).

    Kept apart from :func:`mutants`, whose audits are of the pairwise notions and IPLDP.  The claimed
    channel (the pool's, mapped onto support sets by :func:`pool_support_channel`) gives the
    violating grouping probability 0: white-box events from it cannot see the bug, black-box events
    and white-box events from the exact channel do.
    """
    return {name: build() for name, build in _LIP_BUILD.items()}
