"""LDP-Auditor's statistic (Arcolezi and Gambs, PETS 2024), reproduced exactly on the kit's mechanisms.

Auditing chapter, :ref:`sec-audit-ldp-auditor`.  Paper: "Revealing the True Cost of Locally
Differentially Private Protocols: An Auditing Perspective" (bibtex key ``arcolezi2024revealing``),
code ``hharcolezi/ldp-audit``.

What their auditor computes
---------------------------
For a protocol over ``k`` items at budget ``eps`` it takes the two inputs ``v1 = 0`` and
``v2 = k - 1``, perturbs each ``nb_trials`` times, and *guesses* the input from every report with a
protocol-specific attack:

* GRR: the report itself;
* unary encoding (SUE = RAPPOR, OUE): a uniformly random set bit, or a uniform item if no bit is set;
* local hashing (BLH ``g = 2``, OLH ``g = round(e^eps) + 1``): a uniform item among those hashing to
  the reported bucket under the report's hash, or a uniform item if none does;
* subset selection (SS): a uniform member of the reported subset.

``TP`` counts the guesses equal to ``v1`` under input ``v1``, ``FP`` those equal to ``v1`` under
input ``v2``.  With statsmodels' ``proportion_confint(count, n, alpha / 2, "beta")`` they take the
lower end for ``TP / n`` and the upper end for ``FP / n`` and report
``eps_emp = log((TPR_lower - delta) / FPR_upper)``.

Their confidence statement.  ``proportion_confint(count, nobs, a, "beta")`` is the *two-sided*
Clopper-Pearson interval at level ``1 - a``, each end missing with chance ``a / 2``
(``Beta(a/2; c, n-c+1)`` and ``Beta(1 - a/2; c+1, n-c)``).  Passing ``a = alpha / 2`` makes each end
they use a one-sided bound missing with chance ``alpha / 4``; both hold at once with probability at
least ``1 - alpha / 2`` (union bound).  So at their ``alpha = 1e-2`` the statement is a lower bound
at confidence 99.5 %, each side at 99.75 % (:data:`their_miss`).

What is reproduced, and how
---------------------------
* The attack as a post-processing kernel ``A`` (outputs -> guessed item, :func:`attack_kernel`) on
  the kit's GRR, RAPPOR (SUE), OUE and OLH (any ``g``, so BLH is ``OLH(d, eps, g=2)``): the guess
  channel ``P @ A`` is exact (:func:`guess_channel`, by enumeration at small ``k``), and so are the
  two probabilities the statistic needs, ``TPR = G[v1, v1]`` and ``FPR = G[v2, v1]``, in closed form
  at any ``k`` (:func:`guess_probabilities`).  For their own implementations (independent random
  hash functions, their subset selection) :func:`ideal_guess_probabilities` gives the same closed
  forms with ideal hashing.
* The estimator, exactly (:func:`ldp_auditor_epsilon`, with the kit's :func:`~ldpkit.audit.cp_lower`
  and :func:`~ldpkit.audit.cp_upper` at miss ``alpha / 4``).
* Its law at ``nb_trials``: ``TP ~ Bin(n, TPR)`` and ``FP ~ Bin(n, FPR)`` drawn independently
  (:func:`sample_ldp_auditor_statistic`); since the statistic is ``log TPR_lower(TP) -
  log FPR_upper(FP)``, its mean and standard deviation are exact finite sums over the two binomial
  laws (:func:`ldp_auditor_moments`).

What differs
------------
* Their code seeds the two inputs' trials with the same random stream (same seed per worker), so
  their ``TP`` and ``FP`` may be correlated; the reproduction draws them independently.  Means agree;
  spreads may differ slightly.
* Their statement covers one fixed event (the guess equals ``v1``) at ``1 - alpha / 2``; the kit's
  auditor (:func:`~ldpkit.audit.audit_ldp`) counts every interval it computes and splits ``alpha``
  among them (Bonferroni), so its bound holds at ``1 - alpha`` whatever events it examined
  (:func:`our_bounds` runs it on the same two inputs at the same samples per input).
* The reproduction runs the kit's OLH client on its fixed pool of seeds (``OLH.pool_channel``, exact
  over that pool; the kit's OLH itself draws a fresh seed per user); their LH draws a fresh xxhash
  seed per report.  :func:`guess_probabilities` is exact for the kit's pool,
  :func:`ideal_guess_probabilities` for ideal random hashing.

Examples
--------
>>> from ldpkit import GRR
>>> from ldpkit.audit.ldp_auditor import guess_probabilities, ldp_auditor_epsilon
>>> tpr, fpr = guess_probabilities(GRR(25, 1.0))
>>> round(float(ldp_auditor_epsilon(round(tpr * 1e6), round(fpr * 1e6), 10**6, 1e-2)), 3)
0.977
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from importlib import resources
from types import MappingProxyType
from typing import Any, Optional, cast

import numpy as np
from numpy.typing import ArrayLike

from .._rng import RNGLike, as_generator
from ..accountant import enumerate_channel
from ..family import get_family
from ..grr import GRR
from ..mechanism import Mechanism
from ..olh import OLH, hash_items
from ..unary import UnaryEncoding
from .bounds import cp_lower, cp_upper

__all__ = [
    "ALPHA",
    "EPS_GRID",
    "K_GRID",
    "NB_TRIALS",
    "PROTOCOLS",
    "PROTOCOL_FAMILIES",
    "attack",
    "attack_kernel",
    "compare_with_reproduction",
    "guess_channel",
    "guess_probabilities",
    "ideal_guess_probabilities",
    "kit_mechanism",
    "ldp_auditor_epsilon",
    "ldp_auditor_moments",
    "olh_hashes",
    "our_bounds",
    "pair_channel",
    "sample_ldp_auditor_statistic",
    "stored_ldp_auditor_runs",
    "their_miss",
]

#: their experiment 1 (trials per input, significance level, domain sizes, budgets, seeds)
NB_TRIALS = 10**6
ALPHA = 1e-2
K_GRID = (25, 50, 100, 150, 200)
EPS_GRID = (0.25, 0.5, 0.75, 1.0, 2.0, 4.0, 6.0, 10.0)
SEEDS = 5

#: the protocols reproduced on the kit (their names); SS only in closed form (the kit has no subset selection)
PROTOCOLS = ("GRR", "SUE", "OUE", "BLH", "OLH")
IDEAL_PROTOCOLS = PROTOCOLS + ("SS",)
#: their protocol name -> the kit's family (:mod:`ldpkit.family`) and the context its member is built with
PROTOCOL_FAMILIES: Mapping[str, tuple[str, Mapping[str, Any]]] = MappingProxyType({
    "GRR": ("GRR", {}), "SUE": ("RAPPOR", {}), "OUE": ("OUE", {}), "BLH": ("OLH", {"g": 2}), "OLH": ("OLH", {}),
})


def their_miss(alpha: float) -> float:
    """Miss probability of each one-sided end their code uses: ``alpha / 4``.

    ``proportion_confint(c, n, alpha / 2, "beta")`` is two-sided at level ``1 - alpha / 2``, each end
    missing with chance ``alpha / 4``.

    >>> their_miss(0.01)
    0.0025
    """
    return alpha / 4.0


# ============================================================================ the estimator
def ldp_auditor_epsilon(tp: ArrayLike, fp: ArrayLike, n: int, alpha: float, delta: float = 0.0) -> np.ndarray:
    """Their ``eps_emp = log((TPR_lower - delta) / FPR_upper)`` for counts ``tp``, ``fp`` out of ``n`` each.

    ``TPR_lower`` and ``FPR_upper`` are one-sided Clopper-Pearson bounds missing with chance
    ``alpha / 4`` each (:func:`their_miss`), equal to the ends of statsmodels'
    ``proportion_confint(count, n, alpha / 2, "beta")``.  ``-inf`` when ``TPR_lower <= delta``.

    >>> round(float(ldp_auditor_epsilon(500_000, 200_000, 10**6, 1e-2)), 4)
    0.9079
    """
    miss = their_miss(alpha)
    lo = cp_lower(tp, n, miss) - delta
    hi = cp_upper(fp, n, miss)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(lo > 0, np.log(np.where(lo > 0, lo, 1.0)) - np.log(hi), -np.inf)


def _support(n: int, p: float, tail: float = 1e-13) -> tuple[np.ndarray, np.ndarray]:
    from scipy import stats

    lo, hi = stats.binom.ppf(tail, n, p), stats.binom.isf(tail, n, p)
    t = np.arange(int(max(0, lo - 1)), int(min(n, hi + 1)) + 1)
    w = stats.binom.pmf(t, n, p)
    return t, w / w.sum()


#: above this many support points, the bounds are evaluated at this many nodes and interpolated
SMOOTH_NODES = 257


def _smooth(fn: Any, t: np.ndarray) -> np.ndarray:
    """``fn(t)`` on a long run of consecutive counts: a cubic spline through ``SMOOTH_NODES`` nodes.

    The Clopper-Pearson bounds are smooth in the count; over a support of ``L`` counts the spline's
    relative error is of order ``(L / nodes)**4 / t**3``, far below the statistic's spread.
    """
    if t.size <= 2 * SMOOTH_NODES or t[0] < 1:
        return cast("np.ndarray", fn(t))
    from scipy.interpolate import CubicSpline

    nodes = np.unique(np.round(np.linspace(t[0], t[-1], SMOOTH_NODES)))
    return cast("np.ndarray", CubicSpline(nodes, fn(nodes))(t))


def ldp_auditor_moments(tpr: float, fpr: float, n: int, alpha: float, delta: float = 0.0) -> tuple[float, float]:
    """Exact mean and standard deviation of their statistic when ``TP ~ Bin(n, tpr)``, ``FP ~ Bin(n, fpr)`` independently.

    The statistic is ``log(TPR_lower(TP) - delta) - log FPR_upper(FP)``, a sum of a function of
    ``TP`` and a function of ``FP``: its mean and variance are sums of the two, each a finite sum
    over its binomial law (truncated where the mass left out is below ``1e-13``; on long supports the
    bounds are interpolated by a cubic spline through ``SMOOTH_NODES`` exact nodes).

    >>> m, s = ldp_auditor_moments(0.5, 0.2, 10**6, 1e-2)
    >>> round(m, 4), round(s, 4)
    (0.9079, 0.0022)
    """
    miss = their_miss(alpha)
    t, wt = _support(n, tpr)
    f, wf = _support(n, fpr)
    lo = _smooth(lambda c: cp_lower(c, n, miss) - delta, t)
    if np.any((lo <= 0) & (wt > 0)):
        return -math.inf, math.nan
    a = np.log(lo)
    b = np.log(_smooth(lambda c: cp_upper(c, n, miss), f))
    ma, mb = float(wt @ a), float(wf @ b)
    var = float(wt @ (a - ma) ** 2) + float(wf @ (b - mb) ** 2)
    return ma - mb, math.sqrt(var)


def sample_ldp_auditor_statistic(tpr: float, fpr: float, n: int, alpha: float, size: int, rng: RNGLike = None,
                                 delta: float = 0.0) -> np.ndarray:
    """``size`` draws of their statistic at ``n`` trials per input: binomial ``TP`` and ``FP``, then :func:`ldp_auditor_epsilon`.

    >>> v = sample_ldp_auditor_statistic(0.5, 0.2, 10**6, 1e-2, 4, rng=0)
    >>> v.shape, bool(abs(v.mean() - 0.9079) < 0.02)
    ((4,), True)
    """
    gen = as_generator(rng)
    tp = gen.binomial(n, tpr, size=size)
    fp = gen.binomial(n, fpr, size=size)
    return ldp_auditor_epsilon(tp, fp, n, alpha, delta)


# ============================================================================ the attack on the kit's mechanisms
def kit_mechanism(protocol: str, k: int, eps: float) -> Mechanism:
    """The kit's mechanism for one of their protocol names (``SUE`` is the kit's RAPPOR, ``BLH`` is OLH with ``g = 2``).

    Built through the family registry (:data:`PROTOCOL_FAMILIES`:
    :meth:`ldpkit.family.Family.member` of the kit's family, with the protocol's context).

    >>> kit_mechanism("BLH", 10, 1.0).g
    2
    >>> kit_mechanism("SUE", 4, 1.0)
    RAPPOR(d=4, epsilon=1)
    """
    if not isinstance(protocol, str) or protocol not in PROTOCOL_FAMILIES:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    family, context = PROTOCOL_FAMILIES[protocol]
    return get_family(family).member(k, eps, **context)


def olh_hashes(mech: OLH) -> np.ndarray:
    """``h_s(i)`` for the seeds of ``mech.pool_channel()`` (rows) and every item (columns)."""
    seeds = mech.channel_seeds(mech.default_channel_seeds)
    return hash_items(seeds[:, None], np.arange(mech.d)[None, :], mech.g)


def attack_kernel(mech: Mechanism) -> np.ndarray:
    """Their attack as a post-processing kernel: row ``y`` is the law of the guessed item given output ``y``.

    Outputs are the columns of the mechanism's exact channel (``mech.channel()``, enumerated):
    items for GRR; bit vectors in ``itertools.product`` order (bit 0 most significant) for unary
    encoding; ``(seed, bucket)`` pairs over the seed pool of ``mech.pool_channel()`` for OLH.

    >>> from ldpkit import OUE
    >>> attack_kernel(OUE(2, 1.0)).tolist()        # outputs 00, 01, 10, 11
    [[0.5, 0.5], [0.0, 1.0], [1.0, 0.0], [0.5, 0.5]]
    """
    if isinstance(mech, GRR):
        return np.eye(mech.d)
    if isinstance(mech, UnaryEncoding):
        d = mech.d
        bits = ((np.arange(2**d)[:, None] >> np.arange(d - 1, -1, -1)[None, :]) & 1).astype(float)
        ones = bits.sum(axis=1, keepdims=True)
        return np.where(ones > 0, bits / np.maximum(ones, 1), 1.0 / d)
    if isinstance(mech, OLH):
        h = olh_hashes(mech)  # (m, d)
        m, d, g = h.shape[0], mech.d, mech.g
        member = (h[:, None, :] == np.arange(g)[None, :, None]).astype(float)  # (m, g, d)
        size = member.sum(axis=2, keepdims=True)
        kern = np.where(size > 0, member / np.maximum(size, 1), 1.0 / d)
        return kern.reshape(m * g, d)
    raise TypeError(f"no attack for {type(mech).__name__}: GRR, unary encoding (RAPPOR, OUE) and OLH are covered")


def guess_channel(mech: Mechanism) -> np.ndarray:
    """The exact guess channel ``P @ A`` (``d x d``): row ``x`` is the law of the guess under input ``x``.

    ``P`` is the mechanism's enumerated channel (:func:`ldpkit.accountant.enumerate_channel`, so
    only where it fits), ``A`` is :func:`attack_kernel`.

    >>> from ldpkit import RAPPOR
    >>> G = guess_channel(RAPPOR(3, 1.0))
    >>> G.shape, bool(np.allclose(G.sum(axis=1), 1))
    ((3, 3), True)
    """
    ch = mech.pool_channel() if isinstance(mech, OLH) else mech.channel()  # OLH: the seed pool the attack reads
    P = enumerate_channel(ch, "LDP-Auditor guess channel").matrix
    return cast("np.ndarray", P @ attack_kernel(mech))


def _e_inv(m: int, r: float, shift: int) -> float:
    """``E[1 / (shift + B)]`` for ``B ~ Bin(m, r)``, an exact finite sum."""
    from scipy import stats

    if m < 0:
        return 0.0
    c = np.arange(m + 1)
    return float(stats.binom.pmf(c, m, r) @ (1.0 / (shift + c)))


def _ue_guess(k: int, a: float, b: float) -> tuple[float, float]:
    # under v1: guess v1 iff its bit is set (a) and it is drawn among 1 + Bin(k-1, b) set bits, or no bit is set
    none = (1 - a) * (1 - b) ** (k - 1) / k
    tpr = a * _e_inv(k - 1, b, 1) + none
    # under v2: bit v1 set (b), drawn among it, v2's bit (a) and Bin(k-2, b) others
    fpr = b * (a * _e_inv(k - 2, b, 2) + (1 - a) * _e_inv(k - 2, b, 1)) + none
    return tpr, fpr


def _lh_guess_ideal(k: int, eps: float, g: int) -> tuple[float, float]:
    p = math.exp(eps) / (math.exp(eps) + g - 1)  # GRR keep probability over the g buckets
    r = 1.0 / g
    tpr = p * _e_inv(k - 1, r, 1) + (1 - p) * (1 - r) ** (k - 1) / k
    fpr = p * r * _e_inv(k - 2, r, 2) + (1 - p) * (r * _e_inv(k - 2, r, 1) + (1 - r) ** (k - 1) / k)
    return tpr, fpr


def _olh_pool_guess(mech: OLH, v1: int, v2: int) -> tuple[float, float]:
    h = olh_hashes(mech)  # (m, d)
    m, d, g = h.shape[0], mech.d, mech.g
    sizes = np.stack([np.bincount(row, minlength=g) for row in h])  # (m, g)
    empty = (sizes == 0).sum(axis=1)
    c1 = sizes[np.arange(m), h[:, v1]]
    same = h[:, v1] == h[:, v2]
    tpr = np.mean(mech.p_prime / c1 + mech.q_prime * empty / d)
    fpr = np.mean(np.where(same, mech.p_prime, mech.q_prime) / c1 + mech.q_prime * empty / d)
    return float(tpr), float(fpr)


def guess_probabilities(mech: Mechanism, v1: int = 0, v2: Optional[int] = None) -> tuple[float, float]:
    """``(TPR, FPR)`` of their attack on a kit mechanism: ``P(guess = v1 | v1)`` and ``P(guess = v1 | v2)``, exact.

    Closed forms, valid at any ``d`` (checked against :func:`guess_channel` in the tests):

    * GRR: ``TPR = e^eps / (e^eps + d - 1)``, ``FPR = 1 / (e^eps + d - 1)``;
    * unary encoding with bit probabilities ``a`` (own item) and ``b`` (others), ``B_m ~ Bin(m, b)``:
      ``TPR = a E[1/(1 + B_{d-1})] + (1-a)(1-b)^{d-1}/d`` and
      ``FPR = b (a E[1/(2 + B_{d-2})] + (1-a) E[1/(1 + B_{d-2})]) + (1-a)(1-b)^{d-1}/d``;
    * OLH over the channel's seed pool, with ``c_s`` the number of items in ``v1``'s bucket under seed
      ``s`` and ``E_s`` the number of empty buckets: ``TPR = mean_s (p'/c_s + q' E_s/d)`` and
      ``FPR = mean_s (p'[h_s(v1) = h_s(v2)] + q'[h_s(v1) != h_s(v2)]) / c_s + q' E_s / d``.

    >>> from ldpkit import OUE
    >>> [round(v, 5) for v in guess_probabilities(OUE(25, 1.0))]
    [0.07435, 0.03857]
    """
    d = mech.d
    v2 = d - 1 if v2 is None else v2
    if isinstance(mech, GRR):
        e = math.exp(mech.epsilon)
        return e / (e + d - 1), 1.0 / (e + d - 1)
    if isinstance(mech, UnaryEncoding):
        a, b = np.unique(mech.a), np.unique(mech.b)
        if a.size != 1 or b.size != 1:
            raise ValueError("the closed form needs one bit probability a and one b for every item")
        return _ue_guess(d, float(a[0]), float(b[0]))
    if isinstance(mech, OLH):
        return _olh_pool_guess(mech, v1, v2)
    raise TypeError(f"no attack for {type(mech).__name__}")


def _their_g(protocol: str, eps: float) -> int:
    return 2 if protocol == "BLH" else int(round(math.exp(eps))) + 1


def ideal_guess_probabilities(protocol: str, k: int, eps: float) -> tuple[float, float]:
    """``(TPR, FPR)`` of their attack on their implementations (multi-freq-ldpy 0.2.5), hashing taken as ideal.

    GRR, SUE, OUE as in :func:`guess_probabilities`.  Local hashing with a fresh uniformly random
    hash per report (``g = 2`` for BLH, ``round(e^eps) + 1`` for OLH; GRR keep ``p`` over the buckets,
    ``r = 1/g``, ``B_m ~ Bin(m, r)``): ``TPR = p E[1/(1+B_{k-1})] + (1-p)(1-r)^{k-1}/k`` and
    ``FPR = p r E[1/(2+B_{k-2})] + (1-p)(r E[1/(1+B_{k-2})] + (1-r)^{k-1}/k)``.  SS with subset size
    ``w = max(1, rint(k/(e^eps+1)))`` and inclusion ``p = w e^eps/(w e^eps + k - w)``: ``TPR = p/w``,
    ``FPR = (p (w-1) + (1-p) w) / ((k-1) w)``.

    >>> [round(v, 5) for v in ideal_guess_probabilities("SS", 25, 1.0)]
    [0.07341, 0.03861]
    """
    e = math.exp(eps)
    if protocol == "GRR":
        return e / (e + k - 1), 1.0 / (e + k - 1)
    if protocol == "SUE":
        b = 1.0 / (1.0 + math.exp(eps / 2))
        return _ue_guess(k, 1.0 - b, b)
    if protocol == "OUE":
        return _ue_guess(k, 0.5, 1.0 / (e + 1))
    if protocol in ("BLH", "OLH"):
        return _lh_guess_ideal(k, eps, _their_g(protocol, eps))
    if protocol == "SS":
        w = int(max(1, np.rint(k / (e + 1))))
        p = w * e / (w * e + k - w)
        return p / w, (p * (w - 1) + (1 - p) * w) / ((k - 1) * w)
    raise ValueError(f"protocol must be one of {IDEAL_PROTOCOLS}, got {protocol!r}")


def attack(mech: Mechanism, x: int, size: int, rng: RNGLike = None) -> np.ndarray:
    """Per user: ``size`` reports of input ``x`` from the kit's own client code, each guessed by their attack.

    GRR: ``perturb``; unary encoding: ``perturb`` (the user's bits), a uniform set bit or a uniform
    item; OLH: ``sample_outputs`` (the client's hashing and randomised response over the channel's
    seed pool), a uniform item of the reported bucket or a uniform item.  For the tests, which
    compare it with :func:`guess_channel`.
    """
    gen = as_generator(rng)
    items = np.full(size, x, dtype=np.int64)
    if isinstance(mech, GRR):
        return np.asarray(mech.perturb(items, gen), dtype=np.int64)
    if isinstance(mech, UnaryEncoding):
        cand = mech.perturb(items, gen).to_dense()
    elif isinstance(mech, OLH):
        out = mech.sample_pool_outputs(x, size, gen)
        h = olh_hashes(mech)
        cand = h[out // mech.g] == (out % mech.g)[:, None]
    else:
        raise TypeError(f"no attack for {type(mech).__name__}")
    n_set = cand.sum(axis=1)
    # the j-th set candidate, j uniform in [0, n_set); a uniform item when there is none
    j = np.floor(gen.random(size) * np.maximum(n_set, 1)).astype(np.int64)
    pick = np.argmax(np.cumsum(cand, axis=1) > j[:, None], axis=1)
    return np.where(n_set > 0, pick, gen.integers(0, mech.d, size=size))


# ============================================================================ the kit's auditor at equal samples
def pair_channel(mech: UnaryEncoding, v1: int = 0, v2: Optional[int] = None) -> np.ndarray:
    """The exact channel of a unary encoding seen through the two bits of ``v1`` and ``v2`` (``d x 4``).

    The other bits have the same law under both inputs, so this post-processing keeps the pair's
    exact worst ratio; it lets :func:`our_bounds` audit unary encodings at any ``d`` by multinomial
    histograms (columns: bits ``(y_v1, y_v2)`` = 00, 01, 10, 11).
    """
    d = mech.d
    v2 = d - 1 if v2 is None else v2
    rows = np.empty((d, 4))
    for x in range(d):
        p1 = mech.a[v1] if x == v1 else mech.b[v1]
        p2 = mech.a[v2] if x == v2 else mech.b[v2]
        rows[x] = [(1 - p1) * (1 - p2), (1 - p1) * p2, p1 * (1 - p2), p1 * p2]
    return rows


def our_bounds(mech: Mechanism, n: int, alpha: float = ALPHA, rng: RNGLike = None, v1: int = 0,
               v2: Optional[int] = None) -> dict[str, float]:
    """The kit's :func:`~ldpkit.audit.audit_ldp` on the pair ``(v1, v2)`` with ``n`` samples per input, white- and black-box.

    GRR through :func:`~ldpkit.audit.from_mechanism` (its own sampling code); OLH through its seed
    pool's channel (``OLH.pool_channel``) and unary encodings through :func:`pair_channel`, both
    sampled by multinomial histograms (the ``2**d`` support sets of OLH's exact channel and of a
    unary encoding do not fit in memory at ``d = 25``).  Confidence ``1 - alpha`` (Bonferroni over the
    intervals each audit computes).

    >>> from ldpkit import GRR
    >>> b = our_bounds(GRR(25, 1.0), 10**5, rng=0)
    >>> sorted(b), 0.8 < b["white"] <= 1.0
    (['black', 'white'], True)
    """
    from . import audit_ldp, from_channel, from_mechanism

    v2 = mech.d - 1 if v2 is None else v2
    gen = as_generator(rng)
    if isinstance(mech, UnaryEncoding):
        sampler: Any = from_channel(pair_channel(mech, v1, v2))
    elif isinstance(mech, OLH):
        sampler = from_channel(mech.pool_channel())
    else:
        sampler = from_mechanism(mech)
    out = {}
    for kind in ("white", "black"):
        b = audit_ldp(sampler, n, events=kind, alpha=alpha, pairs=[(v1, v2)], rng=gen)
        out[kind] = b.value
    return out


# ============================================================================ their code, run once
def compare_with_reproduction(rows: list[dict[str, Any]], draws: int = 0, rng: RNGLike = None) -> list[dict[str, Any]]:
    """Add to each run of their code the reproduction's exact mean and sd and the z-scores of counts and statistic.

    ``rows`` hold ``protocol, k, eps, nb_trials, alpha, seed, their_eps_emp`` and their counts
    ``tp``, ``fp``.  ``z_tp`` and ``z_fp`` compare the counts with ``n TPR`` and ``n FPR``
    (binomial sd); ``z_eps`` compares ``their_eps_emp`` with :func:`ldp_auditor_moments`; with
    ``draws`` the mean of that many binomial draws (:func:`sample_ldp_auditor_statistic`) is added.
    """
    gen = as_generator(rng)
    out = []
    for r in rows:
        n, alpha = int(r["nb_trials"]), float(r["alpha"])
        tpr, fpr = ideal_guess_probabilities(r["protocol"], int(r["k"]), float(r["eps"]))
        mean, sd = ldp_auditor_moments(tpr, fpr, n, alpha)
        row = {key: r[key] for key in ("protocol", "k", "eps", "nb_trials", "alpha", "seed", "tp", "fp",
                                       "their_eps_emp")}
        row.update(tpr=tpr, fpr=fpr, repro_mean=mean, repro_sd=sd,
                   z_eps=(r["their_eps_emp"] - mean) / sd,
                   z_tp=(r["tp"] - n * tpr) / math.sqrt(n * tpr * (1 - tpr)),
                   z_fp=(r["fp"] - n * fpr) / math.sqrt(n * fpr * (1 - fpr)),
                   estimator_check=float(ldp_auditor_epsilon(r["tp"], r["fp"], n, alpha)) - r["their_eps_emp"])
        if draws:
            row["repro_draw_mean"] = float(sample_ldp_auditor_statistic(tpr, fpr, n, alpha, draws, gen).mean())
        out.append(row)
    return out


def stored_ldp_auditor_runs() -> tuple[Any, dict[str, Any]]:
    """The stored run of their code against the reproduction: ``(frame, header)`` (no need for their code).

    Written by ``benchmarks/ldp_auditor.py`` to ``ldpkit/audit/data/ldp-auditor-reference.json``.

    >>> frame, header = stored_ldp_auditor_runs()
    >>> header["paper"], {"protocol", "their_eps_emp", "repro_mean", "z_eps"} <= set(frame.columns)
    ('arcolezi2024revealing', True)
    """
    import pandas as pd

    text = resources.files("ldpkit.audit").joinpath("data", "ldp-auditor-reference.json").read_text()
    data = json.loads(text)
    return pd.DataFrame(data["rows"]), data["header"]
