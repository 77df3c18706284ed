"""Item-Oriented Personalized Randomized Response (IPRR; Li, Zhu, Zhang, Xie, Definitions 4-5).

Bibtex ``li2023ipldp`` (conference version) and ``li2023ipldppreprint``.  Each sensitive item
``x`` has a budget ``eps_x``; non-sensitive items have none (``inf``).  With
``r_x = 1/(e^{eps_x} - 1)`` for sensitive items, ``r_x = 0`` for non-sensitive ones and
``S = 1/(1 + sum_x r_x)``, the channel is (the paper's eq. (11))

* ``Q(y | x) = e^{eps_y} r_y S`` (honest answer ``q_y``) for a sensitive ``y = x``;
* ``Q(y | x) = r_y S`` (``qbar_y``) for a sensitive ``y != x``;
* ``Q(y | y) = S`` (``q~``) for a non-sensitive ``y``, and ``Q(y | x) = 0`` for a
  non-sensitive ``y != x``.

Every row is the same mixture: keep the true item with probability ``S``, otherwise report a
sensitive item drawn from ``pi_y = r_y / sum r``.  (Check: ``S + (1 - S) r_y / sum r =
S (1 + r_y) = q_y`` because ``1 - S = S sum r``.)  Hence IPRR is a pure protocol with
``p_y = q_y``, ``q_y = qbar_y`` (``p_y - q_y = S`` for every item), the paper's empirical
estimator (12), ``p_hat_x = m_hat_x / S - r_x``, is the pure estimator, sampling and exact
aggregate-level simulation are those of GRR with a non-uniform second stage, and the
maximum-likelihood estimate has a closed form (:meth:`~ldpkit.base.ItemReportOracle.mle`).

The unconventional feature the paper points out: smaller budgets make the honest answer *more*
likely relative to the others (``q_y / qbar_y = e^{eps_y}`` while ``qbar_y`` grows with
``r_y``).  The IPLDP chapter derives all of this (:prf:ref:`def-ipldp`, :prf:ref:`def-iprr`,
:prf:ref:`thm-iprr-ipldp`) and corrects the paper's loss formulas where they are wrong
(:ref:`sec-ipldp-losses`); whether the paper's comparisons are at equal privacy is discussed
in :ref:`sec-ipldp-minid` and in the experiments chapter.
"""

from __future__ import annotations

import math
from typing import Any, TYPE_CHECKING, cast

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike, as_generator
from ._validation import (
    EPS_MAX,
    EPS_MIN,
    check_counts,
    check_distribution,
    check_items,
    check_positive_int,
    check_real,
    describe,
    real_array,
)
from .accountant import Guarantee
from .base import ItemReportOracle, item_report_mle
from .channels import ExplicitChannel
from .family import BudgetSweep, Family, pair_budget_minima, register_family
from .reports import ItemReports

if TYPE_CHECKING:  # pragma: no cover
    from .contracts import Contract

__all__ = ["IPRR", "MAX_EXPLICIT_D", "iprr_pairwise_log_ratio", "iprr_parameters", "mle_keep_or_resample"]

#: largest domain for which :meth:`IPRR.channel` builds the dense ``d x d`` matrix
MAX_EXPLICIT_D = 4096


def _check_item_budgets(budgets: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``(eps, sensitive mask)`` from per-item budgets where ``inf`` marks a non-sensitive item."""
    eps = real_array(budgets, "budgets")
    if eps.ndim != 1:
        raise ValueError(f"budgets must be a 1-d vector with one budget per item, got shape {eps.shape}")
    if eps.size < 2:
        raise ValueError(f"budgets must cover at least 2 items, got {eps.size}")
    sens = np.isfinite(eps)
    bad = np.isnan(eps) | (eps <= 0) | (np.isinf(eps) & (eps < 0))
    if np.any(bad):
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"budgets must be positive (inf for a non-sensitive item), got {describe(eps[k])} at item {k}")
    if not np.any(sens):
        raise ValueError("budgets mark every item non-sensitive (inf): IPRR needs at least one sensitive item")
    out = sens & ((eps < EPS_MIN) | (eps > EPS_MAX))
    if np.any(out):
        k = int(np.flatnonzero(out)[0])
        raise ValueError(
            f"budgets[{k}]={float(eps[k])!r} is outside the supported range [{EPS_MIN:g}, {EPS_MAX:g}]: below it the "
            "probabilities that tell inputs apart are near the resolution of double-precision draws, above it "
            "e^-eps underflows"
        )
    return eps, sens


def iprr_parameters(budgets: ArrayLike) -> dict[str, Any]:
    """The closed-form quantities of IPRR for per-item budgets (``inf`` = non-sensitive).

    Returns a dict with ``r`` (``1/(e^eps - 1)``, 0 for non-sensitive items), ``S``
    (``1/(1 + sum r)``), ``q`` (probability of reporting the true item: ``e^eps r S`` for a
    sensitive item, ``S`` for a non-sensitive one), ``qbar`` (``r S``: probability that
    another input reports this item; 0 for non-sensitive items) and ``sensitive`` (mask).
    Computed without overflow (``r = 1/expm1(eps)``).

    Examples
    --------
    >>> from ldpkit.iprr import iprr_parameters
    >>> par = iprr_parameters([0.1, 0.5, 1.0, float("inf"), float("inf")])
    >>> round(par["S"], 4), [round(float(v), 4) for v in par["q"]]
    (0.0792, [0.8319, 0.2012, 0.1252, 0.0792, 0.0792])
    """
    eps, sens = _check_item_budgets(budgets)
    r = np.zeros(eps.size)
    r[sens] = 1.0 / np.expm1(eps[sens])
    S = 1.0 / (1.0 + float(r.sum()))
    qbar = r * S
    # e^eps r = 1 + r, so q = (1 + r) S for sensitive items (no e^eps overflow)
    q = np.where(sens, (1.0 + r) * S, S)
    return {"r": r, "S": S, "q": q, "qbar": qbar, "sensitive": sens}


def iprr_pairwise_log_ratio(budgets: ArrayLike) -> np.ndarray:
    """Closed form of IPRR's pairwise log-ratios ``L[x, x'] = max_y log Q(y | x) / Q(y | x')``.

    ``L[x, x'] = eps_x`` for a sensitive ``x`` and ``inf`` for a non-sensitive ``x`` (every
    ``x' != x``; 0 on the diagonal): the row depends on ``x`` alone.  The same matrix as
    :func:`ldpkit.accountant.pairwise_log_ratio` of the channel, without enumerating it.  Hence
    IPRR's tightest level for the unordered pair is ``max(eps_x, eps_x')``, and its excess over
    the MinID-LDP bound ``min(eps_x, eps_x')`` is ``max(0, eps_x - eps_x')`` for two sensitive
    items (derived in the IPLDP chapter, :prf:ref:`prop-iprr-pairwise`).

    Examples
    --------
    >>> from ldpkit.iprr import iprr_pairwise_log_ratio
    >>> iprr_pairwise_log_ratio([0.5, 2.0, float("inf")]).tolist()
    [[0.0, 0.5, 0.5], [2.0, 0.0, 2.0], [inf, inf, 0.0]]
    """
    eps, _ = _check_item_budgets(budgets)
    out = np.repeat(eps[:, None], eps.size, axis=1)
    np.fill_diagonal(out, 0.0)
    return out


def mle_keep_or_resample(output_counts: ArrayLike, keep: float, pi: ArrayLike) -> np.ndarray:
    """Exact maximum-likelihood input distribution for a keep-or-resample channel.

    Channel: every user reports its item with probability ``keep`` and otherwise an item
    drawn from ``pi`` (GRR with uniform ``pi``, IPRR with ``pi`` proportional to ``r``).  The
    report probabilities are ``q_y = keep p_y + (1 - keep) pi_y``, and the log-likelihood
    ``sum_y m_y log q_y`` is separable and concave in ``p`` on the simplex, so its KKT
    conditions give ``p_y = max(0, m_y / lam - c_y)`` with ``c_y = (1 - keep) pi_y / keep``
    and ``lam`` fixed by ``sum p = 1`` (water-filling): found exactly by sorting, ``O(k log k)``
    (derived and checked against EM in the IPLDP chapter, :ref:`sec-ipldp-mle`).  This is
    :func:`ldpkit.base.item_report_mle` written in the keep-or-resample parameters.

    Parameters
    ----------
    output_counts
        Report counts ``m_y`` (non-negative integers, not all zero).
    keep
        Probability of reporting the true item, in ``(0, 1]``.
    pi
        Resampling distribution over the same items.

    Examples
    --------
    >>> from ldpkit.iprr import mle_keep_or_resample
    >>> mle_keep_or_resample([60, 40, 0], 0.5, [1/3, 1/3, 1/3]).round(4).tolist()
    [0.6667, 0.3333, 0.0]
    """
    m = check_counts(output_counts, name="output_counts")
    pi_arr = check_distribution(pi, m.size, "pi")
    keep = check_real(keep, "keep", 0.0, 1.0, low_open=True)
    # the item-report form: p_y = keep + (1 - keep) pi_y, q_y = (1 - keep) pi_y, so that
    # c_y = q_y / (p_y - q_y) = (1 - keep) pi_y / keep
    q = (1.0 - keep) * pi_arr
    return item_report_mle(m, keep + q, q)


class IPRR(ItemReportOracle):
    """IPRR for per-item budgets; ``inf`` marks a non-sensitive item (the paper's Definition 5).

    With every budget finite this is the paper's Definition 4 (``D_N`` empty); with equal
    budgets it is GRR (all sensitive) or uRR (some non-sensitive).

    Parameters
    ----------
    budgets
        One entry per item: the budget ``eps_x`` of a sensitive item, ``numpy.inf`` for a
        non-sensitive item (as :attr:`ldpkit.budgets.IPLDPAssignment.epsilons` gives them).

    Attributes
    ----------
    budgets, sensitive, r, S, q, qbar
        As in :func:`iprr_parameters`.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit import IPRR
    >>> iprr = IPRR([0.1, 0.5, 1.0, np.inf, np.inf])
    >>> iprr.epsilon                                   # non-sensitive outputs reveal the input
    inf
    >>> [g.notion for g in iprr.guarantees()]
    ['ipldp']
    >>> from ldpkit import accountant
    >>> accountant.verify(iprr).satisfied
    True
    """

    def __init__(self, budgets: ArrayLike) -> None:
        par = iprr_parameters(budgets)
        eps = real_array(budgets, "budgets")
        super().__init__(int(eps.size))
        self.budgets = eps
        self.sensitive: np.ndarray = par["sensitive"]
        #: the standard-LDP budget declared, ``max E`` when every item is sensitive (else none)
        self.epsilon = float(eps.max()) if bool(np.all(self.sensitive)) else math.inf
        self.sensitive_items = np.flatnonzero(self.sensitive)
        self.r: np.ndarray = par["r"]
        self.S: float = par["S"]
        self.q: np.ndarray = par["q"]
        self.qbar: np.ndarray = par["qbar"]
        self.p_support = self.q
        self.q_support = self.qbar
        total_r = float(self.r.sum())
        #: resampling distribution ``pi = r / sum r`` over the items (0 on non-sensitive items)
        self.pi = self.r / total_r

    # ------------------------------------------------------------------ accounting
    def guarantees(self) -> list[Guarantee]:
        """``(D_S, E)``-IPLDP (Theorems 1-2 of the paper); also ``max E``-LDP when ``D_N`` is empty."""
        out = [Guarantee("ipldp", budgets=self.budgets[self.sensitive].copy(), sensitive=self.sensitive_items.copy())]
        return out + super().guarantees()

    def report_parameters(self) -> dict[str, Any]:
        """``d`` and the per-item budgets (``inf`` for non-sensitive items)."""
        return {"d": self.d, "budgets": tuple(float(e) for e in self.budgets)}

    def arguments(self) -> dict[str, Any]:
        """The per-item budgets (``inf`` for non-sensitive items)."""
        return {"budgets": self.budgets.copy()}

    def channel(self) -> ExplicitChannel:
        """The ``d x d`` matrix of the paper's eq. (11) (outputs are items)."""
        if self.d > MAX_EXPLICIT_D:
            raise ValueError(f"IPRR channel matrix for d={self.d} exceeds MAX_EXPLICIT_D={MAX_EXPLICIT_D}")
        m = np.tile(self.qbar, (self.d, 1))
        m[np.arange(self.d), np.arange(self.d)] = self.q
        return ExplicitChannel(m)

    def __repr__(self) -> str:
        levels = np.unique(self.budgets[self.sensitive])
        return (f"IPRR(d={self.d}, sensitive={int(self.sensitive.sum())}, "
                f"budgets={levels.min():.6g}..{levels.max():.6g})")

    # ------------------------------------------------------------------ sampling
    def perturb(self, items: ArrayLike, rng: RNGLike = None) -> ItemReports:
        """Keep each item with probability ``S``, otherwise report a sensitive item drawn from ``pi``."""
        items = check_items(items, self.d)
        gen = as_generator(rng)
        keep = gen.random(items.size) < self.S
        other = self.sensitive_items[
            np.searchsorted(np.cumsum(self.pi[self.sensitive_items]), gen.random(items.size), side="right")
            .clip(0, self.sensitive_items.size - 1)
        ]
        return ItemReports(np.where(keep, items, other), self.provenance)

    def _simulate_support(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # kept reports: one binomial per item; the rest: one multinomial over the sensitive items
        kept = rng.binomial(counts, self.S)
        rest = int(counts.sum() - kept.sum())
        out = kept.astype(np.int64)
        out[self.sensitive_items] += rng.multinomial(rest, self.pi[self.sensitive_items])
        return out

    # ------------------------------------------------------------------ estimation
    def expected_l2_loss(self, p: ArrayLike, n: int) -> float:
        """The paper's eq. (13): ``E l2 = (1/n) sum_x (p_x + r_x)(1/S - p_x - r_x)`` (:prf:ref:`thm-ipldp-losses`).

        Users' items are i.i.d. from ``p`` (the paper's model), so each report is i.i.d. with
        probabilities ``m = S (p + r)`` and ``n m_hat`` is multinomial.  (Given fixed counts
        ``c = n p``, the method ``variance`` is smaller by the variance of the empirical input
        distribution; both are exact for their model.)
        """
        pv = check_distribution(p, self.d, "p")
        n = check_positive_int(n, "n")
        f = (pv + self.r) * (1.0 / self.S - (pv + self.r))
        return float(f.sum() / n)

    def expected_l1_loss(self, p: ArrayLike, n: int) -> float:
        """The paper's eq. (14), the large-``n`` limit: ``sqrt(2/(n pi)) sum_x sqrt((p_x + r_x)(1/S - p_x - r_x))``.

        Asymptotic (:prf:ref:`thm-ipldp-losses`): the ratio to the exact expected ``l1`` loss tends to 1.
        """
        pv = check_distribution(p, self.d, "p")
        n = check_positive_int(n, "n")
        f = (pv + self.r) * (1.0 / self.S - (pv + self.r))
        return float(math.sqrt(2.0 / (n * math.pi)) * np.sqrt(np.maximum(f, 0.0)).sum())

    def worst_case_distribution(self) -> np.ndarray:
        """The paper's Lemma 2: ``p*_x = max(0, T - r_x)`` with ``T`` fixed by ``sum p* = 1`` (water-filling on ``r``).

        It maximises both expected losses over the simplex (:prf:ref:`lem-ipldp-worst`).
        """
        r = self.r
        order = np.argsort(r, kind="stable")
        cs = np.cumsum(r[order])
        k = np.arange(1, r.size + 1)
        T = (1.0 + cs) / k
        ok = T > r[order]  # the first k smallest r all below the level
        j = int(np.flatnonzero(ok)[-1])
        level = float(T[j])
        p = np.maximum(0.0, level - r)
        # renormalise and clip: rounding can leave a lone support point at 1 + 2e-16, which
        # the loss functions (rightly) reject as a probability
        return cast("np.ndarray", np.minimum(p / p.sum(), 1.0))


# ---------------------------------------------------------------------------- the family
def _examples() -> tuple[IPRR, ...]:
    inf = float("inf")
    return (IPRR([0.1, 0.5, 1.0, inf, inf]), IPRR([0.5, 2.0, 2.0, 4.0]), IPRR([1.0, inf]))


def _sweeps() -> tuple[BudgetSweep, ...]:
    return (BudgetSweep("IPRR", lambda e: IPRR([e, e, math.inf]), EPS_MIN, EPS_MAX, "item", eps_arg="budgets",
                        scalar_budget=False, variants=(("IPRR([1, 2, inf])", lambda: IPRR([1.0, 2.0, math.inf])),)),)


def _at_budget(d: int, t: float, budgets: Any = None) -> IPRR:
    """IPRR at ``t`` times the per-item ``budgets`` (``inf``: a non-sensitive item)."""
    if budgets is None:
        raise ValueError("IPRR is built from per-item budgets: pass budgets (one per item)")
    e = np.asarray(budgets, dtype=float)
    if e.shape != (d,):
        raise ValueError(f"budgets must hold one budget per item ({d}), got shape {e.shape}")
    return IPRR(t * e)


def _limits(c: Contract) -> tuple[float, float]:
    """``t`` such that ``t`` times the promise's finite budgets stays in ``[EPS_MIN, EPS_MAX]`` (and ``t <= 50``)."""
    e = c.budget_vector()
    finite = e[np.isfinite(e)]
    if not finite.size:
        return EPS_MIN, 50.0
    return EPS_MIN / float(finite.min()), min(50.0, EPS_MAX / float(finite.max()))


def _inverse(c: Contract) -> float | None:
    """The largest multiple ``t`` of the promise's budgets ``E`` keeping it, in closed form (IPLDP chapter).

    IPRR at ``t E`` is ``(D_S, t E)``-IPLDP with every budget used exactly (:prf:ref:`thm-iprr-ipldp`):
    under ``(D_S, E)``-IPLDP, ``t = 1``.  With one budget ``eps`` on the sensitive items it is uRR
    at ``t eps`` (:prf:ref:`thm-urr-uldp`): under ``(S, eps)``-ULDP, ``t = 1``.  With every item
    sensitive, the pair ``(i, j)`` has the log-ratio ``t eps_i`` (:prf:ref:`prop-iprr-pairwise`):
    under a pairwise promise ``t = min_i min_{j != i} M[i, j] / eps_i``
    (:func:`~ldpkit.family.pair_budget_minima`), and under ``(alpha, eps)``-FLDP, where every output
    is shared and the ratio bound is the LDP level ``t max E`` (:prf:ref:`lem-fldp-ldp`),
    ``t = eps / max E``.  ``None`` otherwise, and when an item is not sensitive under a notion
    that protects every item (its output then reveals it at every ``t``: the search says so).
    """
    notion, e = c.guarantee.notion, c.budget_vector()
    if notion == "ipldp":
        return 1.0
    finite = e[np.isfinite(e)]
    if notion == "uldp" and c.params.get("protected") is None and finite.size and np.all(finite == finite[0]):
        return 1.0
    if not np.all(np.isfinite(e)):
        return None
    if notion == "fldp":
        return float(c.params["epsilon"]) / float(e.max())
    minima = pair_budget_minima(c)
    return None if minima is None else float(np.min(minima / e))


register_family(Family(
    "IPRR", "li2023ipldp", IPRR, _examples, "item-oriented personalised randomised response", sweeps=_sweeps,
    at_budget=_at_budget, parameter="multiple of the promise's per-item budgets", context=("budgets",), hi=50.0,
    limits=_limits, initial=lambda c: 1.0, audit="IPRR with budgets (eps/2, eps, eps, eps)", order=80,
    inverse=_inverse))
