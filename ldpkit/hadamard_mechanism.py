"""The Hadamard mechanism (HM): one random Hadamard coefficient with a randomised sign.

As surveyed by Cormode, Maddock and Maple (VLDB 2021, :cite:`cormode2021frequency`) and implemented by
pure-ldp (``hadamard_mechanism``): item ``x`` is column ``x`` of the Sylvester matrix ``H_K``
(``H_K[j, x] = (-1)^popcount(j & x)``, ``K`` the smallest power of two ``>= d``).  The user draws a
coefficient index ``j`` uniformly from ``[0, K)`` and reports ``(j, s)`` with the sign
``s = H_K[j, x]`` kept with probability ``p = e^eps / (e^eps + 1)`` and flipped otherwise.  The
server sums the signs per coefficient, ``A_j = sum_{u : j_u = j} s_u``, and inverts the transform:
``c_hat = (H_K A) / (2p - 1)`` restricted to the first ``d`` entries (one :func:`~ldpkit.hadamard.fwht`).

HM is a pure protocol: item ``i`` is supported by ``(j, s)`` when ``s H_K[j, i] = +1``, with
probability ``p`` for its holder and exactly ``1/2`` for the others (two distinct columns agree on
half of the coefficients), so ``c_hat_i = (2 C_i - n) / (2p - 1)`` and
``Var[c_hat_i] = n / tanh^2(eps/2) - c_i`` (Field chapter, :prf:ref:`thm-field-hm-support`).

*HM and HR.*  The kit's HR (:class:`~ldpkit.hadamard.HR`, Acharya, Sun and Zhang) reports one
position of row ``x + 1`` of ``H_K``, tilted towards its ``+1`` entries; HM's law is the same
construction on ``H_2K`` with item ``x`` encoded by row ``K + x`` (output ``(j, s)`` is position
``j + K [s = -1]``).  Both are pure protocols with supports ``(p, 1/2)``, hence the same estimator
variance and the same LDP value; they differ in their output alphabets and in which rows encode
the items, so their channels (and their prior-dependent notions) differ (Field chapter,
:prf:ref:`thm-field-hm-hr`).

pure-ldp also offers ``t > 1`` coefficients per user, their signs perturbed jointly; the kit
implements ``t = 1``, the mechanism the survey names HM.

The channel (:class:`HMChannel`) has ``2K`` outputs; closed forms registered here give every
notion of the kit in ``O(d K)`` (LIP and MIP from one transform of the prior), without enumeration.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Optional, cast

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike, as_generator
from ._validation import (
    check_domain_size,
    check_epsilon,
    check_items,
    check_positive_int,
    check_probability,
)
from .accountant import FLDPParameters, Witness, register_closed_form, register_constant_pair_forms
from .base import SupportOracle
from .channels import Channel, ExplicitChannel
from .family import BudgetSweep, Family, domain_sweep, register_family
from .hadamard import fwht
from .reports import Provenance, ReportCodec, check_report_field, check_report_source, check_reports

__all__ = ["CoefficientReports", "HM", "HMChannel", "MAX_HM_D", "hm_order"]

#: the largest domain (``K <= 2**24``, as for HR)
MAX_HM_D = 1 << 24

#: columns of ``H_K`` processed at once by the closed forms and the simulator
_BLOCK = 1 << 22


def hm_order(d: int) -> int:
    """``K``: the smallest power of two ``>= d`` (columns ``0..d-1`` of ``H_K`` encode the items).

    Examples
    --------
    >>> from ldpkit.hadamard_mechanism import hm_order
    >>> [hm_order(d) for d in (2, 3, 4, 5, 1000, 1024)]
    [2, 4, 4, 8, 1024, 1024]
    """
    d = check_positive_int(d, "d", maximum=MAX_HM_D)
    return 1 << (d - 1).bit_length()


def _signs(j: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``H[j, x] = (-1)^popcount(j & x)`` elementwise (broadcast), as int64."""
    return cast("np.ndarray", 1 - 2 * (np.bitwise_count(np.bitwise_and(j, x)) & 1).astype(np.int64))


def _column_blocks(d: int, k: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(items, H[:, items])`` in blocks of columns (each block ``K x b``)."""
    step = max(1, _BLOCK // k)
    j = np.arange(k, dtype=np.int64)[:, None]
    for start in range(0, d, step):
        items = np.arange(start, min(d, start + step), dtype=np.int64)
        yield items, _signs(j, items[None, :])


# ---------------------------------------------------------------------------- the channel
@dataclass(frozen=True)
class HMChannel(Channel):
    """HM's channel: output ``(j, s)``, indexed ``j + K [s = -1]``, with ``P = p/K`` if ``s = H_K[j, x]`` else ``q/K``.

    Examples
    --------
    >>> import math
    >>> from ldpkit import accountant
    >>> from ldpkit.hadamard_mechanism import HMChannel
    >>> p = math.e / (1 + math.e)
    >>> ch = HMChannel(3, 4, p, 1 - p)
    >>> ch.n_outputs, round(accountant.ldp_epsilon(ch), 12), ch.to_explicit().matrix.sum(axis=1).round(12).tolist()
    (8, 1.0, [1.0, 1.0, 1.0])
    """

    d: int
    K: int
    p: float
    q: float

    kind: ClassVar[str] = "hadamard-mechanism"

    def __post_init__(self) -> None:
        k = check_positive_int(self.K, "K", minimum=2)
        if k & (k - 1):
            raise ValueError(f"K must be a power of two, got {k}")
        d = check_positive_int(self.d, "d", maximum=k)
        p, q = check_probability(self.p, "p"), check_probability(self.q, "q")
        if abs(p + q - 1.0) > 1e-9:
            raise ValueError(f"p and q must sum to 1, got p={p!r} and q={q!r}")
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "K", k)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", q)

    @property
    def n_inputs(self) -> int:
        return self.d

    @property
    def n_outputs(self) -> int:
        """``2K``: a coefficient index and a sign."""
        return 2 * self.K

    def to_explicit(self, max_cells: int = 1 << 22) -> ExplicitChannel:
        """The ``d x 2K`` matrix (only for ``d * 2K <= max_cells``)."""
        if self.d * 2 * self.K > max_cells:
            raise ValueError(f"the HM channel has {self.d * 2 * self.K} cells, above max_cells={max_cells}")
        h = _signs(np.arange(self.K, dtype=np.int64)[None, :], np.arange(self.d, dtype=np.int64)[:, None])
        plus = np.where(h > 0, self.p, self.q) / self.K   # s = +1
        minus = np.where(h < 0, self.p, self.q) / self.K  # s = -1
        return ExplicitChannel(np.hstack([plus, minus]))

    @property
    def log_ratio(self) -> float:
        """``|log p/q|`` (``inf`` when exactly one of them is 0)."""
        if self.p == self.q:
            return 0.0
        if min(self.p, self.q) == 0.0:
            return math.inf
        return abs(math.log(self.p) - math.log(self.q))

    def agreement_extremes(self, prior: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per item ``x``, ``min_j`` and ``max_j`` of ``w_jx = H[j, x] (H pi)_j`` (``pi`` the prior padded to ``K``)."""
        f = np.zeros(self.K)
        f[: self.d] = prior
        spectrum = fwht(f)
        lo, hi = np.empty(self.d), np.empty(self.d)
        for items, h in _column_blocks(self.d, self.K):
            w = h * spectrum[:, None]
            lo[items], hi[items] = w.min(axis=0), w.max(axis=0)
        return lo, hi


# every pair of distinct columns differs at half of the coefficients, so every ordered pair has the
# ratio |log p/q| (Field chapter, :prf:ref:`thm-field-hm-support`); with p, q > 0 every output is
# produced by every input, so all are protected and ULDP is LDP
register_constant_pair_forms(HMChannel, lambda ch: ch.log_ratio, uldp_applies=lambda ch: min(ch.p, ch.q) > 0.0)


def _ratios(ch: HMChannel, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``P(y|x) / P(y)`` for the sign that agrees with ``H[j, x]`` and for the other one, at agreement ``w``."""
    agree = 2.0 * ch.p / (ch.p * (1.0 + w) + ch.q * (1.0 - w))
    differ = 2.0 * ch.q / (ch.p * (1.0 - w) + ch.q * (1.0 + w))
    return agree, differ


@register_closed_form("lip", HMChannel)
def _lip_hm(ch: HMChannel, prior: np.ndarray) -> Any:
    """``P(j, s) = (1 + lam s (H pi)_j) / 2K``; both ratios are extreme at the smallest agreement ``w``
    (Field chapter, :prf:ref:`thm-field-hm-support`)."""
    if min(ch.p, ch.q) == 0.0:
        return NotImplemented
    lo, _ = ch.agreement_extremes(prior)
    agree, differ = _ratios(ch, lo)
    worst = np.maximum(np.abs(np.log(agree)), np.abs(np.log(differ)))
    x = int(np.argmax(worst))
    return Witness(float(worst[x]), (x,), None)


@register_closed_form("mip", HMChannel)
def _mip_hm(ch: HMChannel, prior: np.ndarray) -> Any:
    """``I = sum_x pi_x (1/K) sum_j [p log r_agree(w_jx) + q log r_differ(w_jx)]``, in ``O(d K)``."""
    if min(ch.p, ch.q) == 0.0:
        return NotImplemented
    f = np.zeros(ch.K)
    f[: ch.d] = prior
    spectrum = fwht(f)
    total = 0.0
    for items, h in _column_blocks(ch.d, ch.K):
        agree, differ = _ratios(ch, h * spectrum[:, None])
        per_item = (ch.p * np.log(agree) + ch.q * np.log(differ)).mean(axis=0)
        total += float(prior[items] @ per_item)
    return max(0.0, total)


@register_closed_form("fldp", HMChannel)
def _fldp_hm(ch: HMChannel) -> Any:
    """With ``p, q > 0`` every output is shared by every pair: fraction 1, ratio ``|log p/q|``."""
    if min(ch.p, ch.q) == 0.0:
        return NotImplemented
    return FLDPParameters(1.0, (0, 1), ch.log_ratio if ch.d >= 2 else 0.0, (0, 1), 1.0)


# ---------------------------------------------------------------------------- reports
@dataclass(frozen=True, eq=False)
class CoefficientReports:
    """HM reports: user ``u`` sent coefficient index ``coefficient[u]`` and sign ``sign[u]`` (``+1`` or ``-1``).

    Examples
    --------
    >>> from ldpkit.hadamard_mechanism import HM
    >>> reports = HM(6, 1.0).perturb([0, 1, 5, 5], rng=0)
    >>> len(reports), reports.K, sorted(set(reports.sign.tolist())) <= [-1, 1]
    (4, 8, True)
    """

    coefficient: np.ndarray
    sign: np.ndarray
    K: int
    #: the mechanism configuration that made these reports (``None`` when built by hand)
    source: Optional[Provenance] = None

    def __post_init__(self) -> None:
        check_report_field(self.K, "CoefficientReports K", power_of_two=True)
        check_report_source(self.source, "CoefficientReports")

    def __len__(self) -> int:
        return int(np.asarray(self.coefficient).shape[0])

    def row(self, i: int) -> tuple[int, int]:
        """User ``i``'s report ``(coefficient, sign)``."""
        return int(self.coefficient[i]), int(self.sign[i])


# ---------------------------------------------------------------------------- HM
class HM(SupportOracle[CoefficientReports]):
    """The Hadamard mechanism with one coefficient per user (module docstring).

    Parameters
    ----------
    d
        Domain size (``2 <= d <= MAX_HM_D``).
    epsilon
        LDP budget, finite and positive.

    Examples
    --------
    >>> from ldpkit import accountant
    >>> from ldpkit.hadamard_mechanism import HM
    >>> hm = HM(6, 1.0)
    >>> hm.K, round(hm.p, 4), float(hm.q_support[0])
    (8, 0.7311, 0.5)
    >>> [round(float(v), 1) for v in hm.variance([50, 30, 15, 5, 0, 0])]      # n / tanh(eps/2)^2 - c_i
    [418.3, 438.3, 453.3, 463.3, 468.3, 468.3]
    >>> round(accountant.ldp_epsilon(hm), 12)
    1.0
    """

    def __init__(self, d: int, epsilon: float) -> None:
        d = check_domain_size(d)
        if d > MAX_HM_D:
            raise ValueError(f"d must be at most MAX_HM_D={MAX_HM_D} (K <= 2**24), got {d}")
        eps = check_epsilon(epsilon)
        super().__init__(d)
        self.epsilon = eps
        tail = math.exp(-eps)
        #: probability that the sign is kept
        self.p = 1.0 / (1.0 + tail)
        #: probability that it is flipped, ``1 - p`` stored without cancellation
        self.q = tail / (1.0 + tail)
        #: order of the Hadamard matrix (number of coefficients)
        self.K = hm_order(d)
        self.p_support = np.full(d, self.p)
        self.q_support = np.full(d, 0.5)

    def arguments(self) -> dict[str, Any]:
        """``d`` and ``epsilon``."""
        return {"d": self.d, "epsilon": self.epsilon}

    def channel(self) -> HMChannel:
        """``P((j, s) | x) = p/K`` if ``s = H_K[j, x]``, ``q/K`` otherwise."""
        return HMChannel(self.d, self.K, self.p, self.q)

    def perturb(self, items: ArrayLike, rng: RNGLike = None) -> CoefficientReports:
        """One ``(coefficient, sign)`` per user."""
        items = check_items(items, self.d)
        gen = as_generator(rng)
        j = gen.integers(0, self.K, size=items.size, dtype=np.int64)
        flip = gen.random(items.size) >= self.p
        sign = (_signs(j, items) * np.where(flip, -1, 1)).astype(np.int8)
        return CoefficientReports(j, sign, self.K, self.provenance)

    def _check_reports(self, reports: Any) -> tuple[np.ndarray, np.ndarray]:
        check_reports(reports, CoefficientReports, self.provenance, K=self.K)
        j, s = np.asarray(reports.coefficient), np.asarray(reports.sign)
        if s.shape != j.shape or j.ndim != 1:
            raise ValueError(f"reports: coefficient and sign must be 1-d of equal length, got {j.shape} and {s.shape}")
        if j.size == 0:
            raise ValueError("reports is empty: at least one user is needed")
        j = check_items(j, self.K, "reports.coefficient")
        if s.dtype == bool or not np.issubdtype(s.dtype, np.integer) or np.any((s != 1) & (s != -1)):
            raise ValueError("reports.sign must hold only +1 and -1")
        return j, s.astype(np.int64)

    def aggregate(self, reports: CoefficientReports) -> np.ndarray:
        """Support counts ``C_i = #{u : s_u H[j_u, i] = +1} = (n + (H_K A)_i) / 2``, ``A`` the signed histogram."""
        j, s = self._check_reports(reports)
        signed = np.bincount(j[s > 0], minlength=self.K) - np.bincount(j[s < 0], minlength=self.K)
        return (j.size + fwht(signed)[: self.d]) // 2

    def n_reports(self, reports: CoefficientReports) -> int:
        return len(reports)

    def output_index(self, reports: CoefficientReports) -> np.ndarray:
        """Column ``j + K [s = -1]`` of ``channel().to_explicit()``."""
        j, s = self._check_reports(reports)
        return cast("np.ndarray", j + self.K * (s < 0))

    def _simulate_support(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        n = int(counts.sum())
        if n < self.d * self.K:  # fewer users than cells of H: drawing per user (O(n)) is cheaper
            return self._simulate_support_per_user(counts, n, rng)
        # kept signs are H[j, x] and flipped ones -H[j, x]; given the number kept (binomial), the
        # coefficients of each group are a multinomial over the K indices: A = sum_x H[:, x] (M+ - M-)
        kept = rng.binomial(counts, self.p)
        uniform = np.full(self.K, 1.0 / self.K)
        signed = np.zeros(self.K, dtype=np.int64)
        for items, h in _column_blocks(self.d, self.K):
            net = rng.multinomial(kept[items], uniform) - rng.multinomial(counts[items] - kept[items], uniform)
            signed += np.sum(h * net.T, axis=1)
        return (int(counts.sum()) + fwht(signed)[: self.d]) // 2

    def _simulate_support_per_user(self, counts: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        # the law of perturb + aggregate, drawn in chunks of users sorted by item (bounded memory)
        ends = np.cumsum(counts)
        signed = np.zeros(self.K, dtype=np.int64)
        for start in range(0, n, _BLOCK):
            users = np.arange(start, min(n, start + _BLOCK), dtype=np.int64)
            items = np.searchsorted(ends, users, side="right")
            j = rng.integers(0, self.K, size=users.size, dtype=np.int64)
            sign = _signs(j, items) * np.where(rng.random(users.size) < self.p, 1, -1)
            signed += np.bincount(j[sign > 0], minlength=self.K) - np.bincount(j[sign < 0], minlength=self.K)
        return (n + fwht(signed)[: self.d]) // 2


# ---------------------------------------------------------------------------- report files and the family
COEFFICIENT_CODEC = ReportCodec(
    "coefficient", CoefficientReports, (("coefficient", "<i8", True), ("negative", "|u1", True)),
    lambda r: {"K": int(r.K)},
    lambda r: (np.asarray(r.coefficient, dtype=np.int64), (np.asarray(r.sign) < 0).astype(np.uint8)),
    lambda cols, meta, src: CoefficientReports(np.asarray(cols[0], dtype=np.int64),
                                               (1 - 2 * np.asarray(cols[1], dtype=np.int64)).astype(np.int8),
                                               int(meta["K"]), src))


def _examples() -> tuple[HM, ...]:
    return (HM(3, 0.5), HM(5, 1.0), HM(4, 3.0))


def _sweeps() -> tuple[BudgetSweep, ...]:
    return (domain_sweep(HM, "coefficient"),)


register_family(Family(
    "HM", "cormode2021frequency", HM, _examples, "Hadamard mechanism (one coefficient, randomised sign)",
    reports="coefficient", codec=COEFFICIENT_CODEC, sweeps=_sweeps, at_budget=lambda d, t: HM(d, t), hi=50.0,
    audit="HM(d, eps)", order=55))
