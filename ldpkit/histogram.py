"""Histogram encoding: summation (SHE) and thresholding (THE) of a noisy one-hot vector.

Wang, Blocki, Li and Jha (USENIX Security 2017, :cite:`wang2017locally`): the user encodes item
``x`` as the one-hot vector ``e_x`` and adds Laplace noise of scale ``2 / eps`` to every
coordinate (the Laplace mechanism, whose L1 sensitivity on one-hot vectors is 2).

SHE
    The server sums the noisy vectors: coordinate ``i`` of the sum is ``c_i`` plus noise of mean 0,
    an unbiased count whose variance, ``n`` times the noise variance, does not depend on the counts.
THE
    Each noisy coordinate is compared with a threshold ``theta``: the bit ``[y_i > theta]`` is 1 with
    probability ``p = 1 - e^(-(1 - theta) eps/2) / 2`` for the holder and
    ``q = e^(-theta eps/2) / 2`` for the others, a pure protocol.  The threshold minimising the
    variance of a rare item, ``q (1 - q) / (p - q)^2``, has a closed form
    (:func:`optimal_threshold`; Field chapter, :prf:ref:`thm-field-the-threshold`).

Finite precision (SHE)
    Sampled in double precision, the textbook Laplace mechanism is not exactly eps-LDP (the set
    of doubles a draw can take depends on the input); and the kit's aggregates are sums of
    per-user integers, exact after any split into batches.  So SHE's noise is the *discrete*
    Laplace (two-sided geometric) law on the grid ``delta Z``, ``delta = 2**-GRID_BITS``:
    ``P(G = g) ~ alpha^|g|`` with ``alpha = e^(-delta eps / 2)``, the report is the vector of
    grid indices ``g = e_x / delta + G`` (int64), and the mechanism is exactly eps-LDP with the
    same tight value as the continuous one (Field chapter, :prf:ref:`thm-field-she-privacy`).
    Its noise variance, ``delta^2 2 alpha / (1 - alpha)^2``, differs from ``8 / eps^2`` by a
    relative ``O((delta eps)^2)``.
THE
    The kit's THE thresholds on the client, so the report is ``d`` bits (a unary encoding,
    :class:`~ldpkit.unary.UnaryReports`), with the bit probabilities of the continuous Laplace.
    The paper thresholds on the server; the estimate and its variance are the same, and the bits
    leak less than the noisy vector (THE's tight LDP value is below ``eps``: thresholding is a
    post-processing).

SHE's channel (:class:`LaplaceHistogramChannel`) has infinitely many outputs.  Every privacy
notion of the kit except MIP is a supremum over outputs of a function of the likelihood ratios
``P(y_i | holder) / P(y_i | non-holder)``, monotone in each; these ratios take their extreme values
``e^(+-eps/2)`` on whole *cells* of the output (``g_i <= 0`` and ``g_i >= 1/delta``), so the law of
the cell of each coordinate (3 cells per coordinate, ``3**d`` outputs) has the same value as the
report for every such notion: that law is the channel's explicit form (for the sampling tests and
small-domain enumeration), and closed forms registered here give every notion without
enumeration.  MIP is refused (:class:`~ldpkit.accountant.AccountingError`): the cells' mutual
information is only a lower bound on the report's.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Optional, cast

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike, as_generator
from ._sampling import chunk_rows
from ._validation import (
    EPS_MAX,
    EPS_MIN,
    ArgumentTypeError,
    check_counts,
    check_domain_size,
    check_epsilon,
    check_int64_signed_sums,
    check_items,
    check_real,
    check_real_counts,
    describe,
)
from .accountant import (
    AccountingError,
    FLDPParameters,
    Witness,
    closed_forms,
    register_closed_form,
    register_constant_pair_forms,
)
from .base import FrequencyOracle, check_integer_support
from .channels import Channel, ExplicitChannel, UnaryChannel
from .family import BudgetSweep, Family, domain_sweep, register_family
from .reports import Provenance, ReportCodec, check_report_source, check_source
from .unary import UNARY_CODEC, UnaryEncoding

__all__ = [
    "GRID_BITS",
    "HistogramReports",
    "LaplaceHistogramChannel",
    "SHE",
    "THE",
    "optimal_threshold",
    "threshold_bits",
]

#: SHE's reports are multiples of ``2**-GRID_BITS`` (stored as int64 grid indices)
GRID_BITS = 16

#: largest domain whose cell law :meth:`LaplaceHistogramChannel.to_explicit` materialises (``3**12`` cells)
MAX_CELL_D = 12


# ---------------------------------------------------------------------------- THE's parameters
def threshold_bits(epsilon: float, theta: float) -> tuple[float, float]:
    """``(p, q)``: the probabilities that a noisy coordinate exceeds ``theta`` for the holder and the others.

    ``p = 1 - e^(-(1 - theta) eps / 2) / 2`` and ``q = e^(-theta eps / 2) / 2`` for Laplace noise
    of scale ``2 / eps`` and ``0 <= theta <= 1`` (Field chapter, :prf:ref:`def-field-the`).

    Examples
    --------
    >>> from ldpkit.histogram import threshold_bits
    >>> [round(v, 4) for v in threshold_bits(1.0, 0.75)]
    [0.5588, 0.3436]
    """
    eps = check_epsilon(epsilon)
    th = check_real(theta, "theta", 0.0, 1.0)
    return 1.0 - 0.5 * math.exp(-(1.0 - th) * eps / 2.0), 0.5 * math.exp(-th * eps / 2.0)


def optimal_threshold(epsilon: float) -> float:
    """The threshold minimising THE's variance for a rare item, ``q (1 - q) / (p - q)^2``.

    With ``c = e^(-eps/2)`` and ``z = e^(theta eps/2)`` the stationarity condition is the quadratic
    ``3 c z^2 - 2 (1 + c) z + 1 = 0``, whose larger root gives
    ``theta* = 1 + (2 / eps) log1p(w)``, ``w = (c - 1)(1 + c / (1 + s)) / 3``,
    ``s = sqrt(1 - c + c^2)``: in ``(1/2, 1)``, tending to 1/2 as ``eps -> 0`` and to 1 as
    ``eps -> inf`` (Field chapter, :prf:ref:`thm-field-the-threshold`).

    Examples
    --------
    >>> from ldpkit.histogram import optimal_threshold
    >>> [round(optimal_threshold(e), 6) for e in (0.1, 1.0, 4.0)]
    [0.512493, 0.618553, 0.815676]
    """
    eps = check_epsilon(epsilon)
    c = math.exp(-eps / 2.0)
    s = math.sqrt(1.0 - c + c * c)
    w = math.expm1(-eps / 2.0) * (1.0 + c / (1.0 + s)) / 3.0
    return 1.0 + 2.0 / eps * math.log1p(w)


# ---------------------------------------------------------------------------- SHE's channel
def _check_cells_d(d: int, max_d: int) -> None:
    if d > max_d:
        raise ValueError(f"the cell law of a {d}-item histogram has 3**{d} outputs; at most {max_d} items (max_d)")


@dataclass(frozen=True)
class LaplaceHistogramChannel(Channel):
    """SHE's channel: ``e_x / delta`` plus i.i.d. discrete Laplace noise, ``alpha^(1/delta) = e^(-eps/2)``.

    Its outputs are integer vectors; :attr:`n_outputs` and :meth:`to_explicit` describe the law of
    their *cells* (per coordinate: ``g <= 0``, ``0 < g < 1/delta``, ``g >= 1/delta``), on which every
    notion except MIP has the channel's own value (module docstring; Field chapter,
    :prf:ref:`thm-field-she-privacy`).  The accountant uses the closed forms registered in
    :mod:`ldpkit.histogram` and refuses MIP.

    Examples
    --------
    >>> from ldpkit import accountant
    >>> from ldpkit.histogram import LaplaceHistogramChannel
    >>> ch = LaplaceHistogramChannel(3, 1.0)
    >>> ch.n_outputs, round(accountant.ldp_epsilon(ch), 12), round(accountant.ldp_epsilon(ch.to_explicit()), 12)
    (27, 1.0, 1.0)
    """

    d: int
    epsilon: float

    kind: ClassVar[str] = "laplace-histogram"
    #: ``to_explicit`` is the law of a coarsening of the output (the cells), not of the output
    coarsening: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "d", check_domain_size(self.d, minimum=1))
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    @property
    def n_inputs(self) -> int:
        return self.d

    @property
    def n_outputs(self) -> int:
        """The number ``3**d`` of cells (the outputs themselves are countably many)."""
        return 3 ** int(self.d)

    def cell_probabilities(self) -> tuple[np.ndarray, np.ndarray]:
        """Per coordinate, the probabilities of the three cells for the holder and for the others.

        For the others (mean 0): ``(1, alpha - alpha^m, alpha^m) / (1 + alpha)``; for the holder
        (mean ``m = 1/delta``) the same reversed, with ``alpha^m = e^(-eps/2)``.
        """
        alpha = math.exp(-self.epsilon / (2.0 * (1 << GRID_BITS)))
        tail = math.exp(-self.epsilon / 2.0)
        other = np.array([1.0, alpha - tail, tail]) / (1.0 + alpha)
        return other[::-1].copy(), other

    def to_explicit(self, max_d: int = MAX_CELL_D) -> ExplicitChannel:
        """The ``d x 3**d`` law of the cells (only for ``d <= max_d``); cell ``k`` of coordinate ``i`` is
        digit ``i`` of the output index in base 3, most significant first."""
        _check_cells_d(self.d, max_d)
        holder, other = self.cell_probabilities()
        cells = np.array(list(itertools.product(range(3), repeat=self.d)), dtype=np.int64)  # (3^d, d)
        base = np.prod(other[cells], axis=1)
        probs = np.empty((self.d, cells.shape[0]))
        for x in range(self.d):
            probs[x] = base * holder[cells[:, x]] / other[cells[:, x]]
        return ExplicitChannel(probs)


# ``eps``, the Laplace mechanism's bound, for every ordered pair, attained on the cell where
# ``g_x >= 1/delta`` and ``g_x' <= 0``; every output has positive probability under every input,
# so all are protected and ULDP is LDP
register_constant_pair_forms(LaplaceHistogramChannel, lambda ch: ch.epsilon)


def _rappor_like(epsilon: float, d: int) -> UnaryChannel:
    """The unary channel whose bits have the likelihood ratios ``e^(+-eps/2)`` (basic RAPPOR at ``eps``)."""
    b = 1.0 / (1.0 + math.exp(epsilon / 2.0))
    return UnaryChannel(np.full(d, 1.0 - b), np.full(d, b))


@register_closed_form("lip", LaplaceHistogramChannel)
def _lip_she(ch: LaplaceHistogramChannel, prior: np.ndarray) -> Witness:
    """``P(y|x) / P(y) = r_x / sum_z prior_z r_z`` with independent ``r_z`` in ``[e^-eps/2, e^eps/2]``,
    extremes included: the value of basic RAPPOR at ``eps``, whose bits take exactly those ratios."""
    out: Witness = closed_forms("lip").compute(_rappor_like(ch.epsilon, ch.d), prior)
    return out


@register_closed_form("fldp", LaplaceHistogramChannel)
def _fldp_she(ch: LaplaceHistogramChannel) -> FLDPParameters:
    """Every output is shared by every pair (fraction 1), with ratio ``eps``."""
    return FLDPParameters(1.0, (0, 1), ch.epsilon if ch.d >= 2 else 0.0, (0, 1), 1.0)


@register_closed_form("mip", LaplaceHistogramChannel)
def _mip_she(ch: LaplaceHistogramChannel, prior: np.ndarray) -> float:
    raise AccountingError(
        "mutual information: channel kind 'laplace-histogram' (SHE) has a continuous-valued output; its explicit "
        "form is the law of a coarsening (the cells), whose mutual information is only a lower bound, and no "
        "closed form is known: the kit does not account MIP for SHE")


# ---------------------------------------------------------------------------- SHE
@dataclass(frozen=True, eq=False)
class HistogramReports:
    """SHE reports: ``values[u, i]`` is user ``u``'s noisy coordinate ``i`` in units of ``1 / grid``.

    Attributes
    ----------
    values
        ``int64`` array of shape ``(n, d)``: grid indices (the noisy value is ``values / grid``).
    grid
        ``2**GRID_BITS``, the number of grid steps per unit.

    Examples
    --------
    >>> from ldpkit.histogram import SHE
    >>> reports = SHE(4, 1.0).perturb([0, 1, 1, 3], rng=0)
    >>> len(reports), reports.values.shape, reports.noisy().dtype
    (4, (4, 4), dtype('float64'))
    """

    values: np.ndarray
    d: int
    grid: int = 1 << GRID_BITS
    #: the mechanism configuration that made these reports (``None`` when built by hand)
    source: Optional[Provenance] = None

    def __post_init__(self) -> None:
        vals = self.values
        if not isinstance(vals, np.ndarray) or vals.dtype != np.int64:
            raise ArgumentTypeError(f"HistogramReports values must be a 2-d int64 array, got {describe(vals)}")
        if vals.ndim != 2 or vals.shape[1] != self.d:
            raise ValueError(f"HistogramReports values must have shape (n, {self.d}), got {vals.shape}")
        check_report_source(self.source, "HistogramReports")

    def __len__(self) -> int:
        return int(self.values.shape[0])

    def row(self, i: int) -> np.ndarray:
        """User ``i``'s noisy vector (as grid indices)."""
        return cast("np.ndarray", self.values[i].copy())

    def noisy(self) -> np.ndarray:
        """The noisy vectors as doubles (``values / grid``, exact)."""
        return self.values / float(self.grid)


class SHE(FrequencyOracle[HistogramReports]):
    """Summation with histogram encoding (Wang et al. 2017), with discrete Laplace noise on a fine grid.

    Parameters
    ----------
    d
        Domain size (``>= 2``).
    epsilon
        LDP budget, finite and positive: the noise scale is ``2 / epsilon``.

    Notes
    -----
    ``Var[c_hat_i] = n delta^2 2 alpha / (1 - alpha)^2`` for every item, ``delta = 2**-GRID_BITS``,
    ``alpha = e^(-delta eps / 2)`` (Field chapter, :prf:ref:`thm-field-she-variance`); it tends to
    ``8 n / eps^2``, the continuous Laplace's, as ``delta -> 0``.

    Examples
    --------
    >>> from ldpkit import accountant
    >>> from ldpkit.histogram import SHE
    >>> she = SHE(4, 1.0)
    >>> reports = she.perturb([0] * 50 + [1] * 30 + [2] * 20, rng=0)
    >>> she.estimate(reports).shape, round(float(she.variance([50, 30, 20, 0])[0]), 3)
    ((4,), 800.0)
    >>> round(accountant.ldp_epsilon(she), 12), she.channel().kind
    (1.0, 'laplace-histogram')
    """

    #: the aggregate simulator draws the summed noise exactly (a difference of negative binomials)
    aggregate_simulation_exact = True

    def __init__(self, d: int, epsilon: float) -> None:
        d = check_domain_size(d)
        eps = check_epsilon(epsilon)
        super().__init__(d)
        self.epsilon = eps
        #: grid steps per unit
        self.grid = 1 << GRID_BITS
        t = eps / (2.0 * self.grid)
        #: ``1 - alpha``: the geometric law's success probability
        self.one_minus_alpha = -math.expm1(-t)
        #: variance of one noisy coordinate (in the unit of counts)
        self.noise_variance = 2.0 * math.exp(-t) / (self.one_minus_alpha**2 * float(self.grid) ** 2)

    def channel(self) -> LaplaceHistogramChannel:
        """The discrete Laplace histogram channel (its explicit form is the law of the cells)."""
        return LaplaceHistogramChannel(self.d, self.epsilon)

    def arguments(self) -> dict[str, Any]:
        """``d`` and ``epsilon``."""
        return {"d": self.d, "epsilon": self.epsilon}

    def report_parameters(self) -> dict[str, Any]:
        """``d``, ``epsilon`` and the grid."""
        return {"d": self.d, "epsilon": self.epsilon, "grid": self.grid}

    def _noise(self, gen: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """Two-sided geometric noise (the difference of two geometric counts of failures)."""
        return gen.geometric(self.one_minus_alpha, size=shape) - gen.geometric(self.one_minus_alpha, size=shape)

    def perturb(self, items: ArrayLike, rng: RNGLike = None) -> HistogramReports:
        """One noisy vector per user, as int64 grid indices (sampled in chunks of rows)."""
        items = check_items(items, self.d)
        gen = as_generator(rng)
        out = np.empty((items.size, self.d), dtype=np.int64)
        step = chunk_rows(items.size, self.d)
        for start in range(0, items.size, step):
            x = items[start:start + step]
            block = self._noise(gen, (x.size, self.d))
            block[np.arange(x.size), x] += self.grid
            out[start:start + step] = block
        return HistogramReports(out, self.d, self.grid, self.provenance)

    def _values(self, reports: HistogramReports) -> np.ndarray:
        check_source(reports, self.provenance)
        if not isinstance(reports, HistogramReports):
            raise ArgumentTypeError(f"reports must be HistogramReports, got {type(reports).__name__}")
        if reports.d != self.d or reports.grid != self.grid:
            raise ValueError(f"reports have d={reports.d}, grid={reports.grid}; this oracle has d={self.d}, "
                             f"grid={self.grid}")
        if len(reports) == 0:
            raise ValueError("reports is empty: at least one user is needed")
        return reports.values

    def aggregate(self, reports: HistogramReports) -> np.ndarray:
        """The exact column sums of the grid indices (int64; refused if a sum could wrap around)."""
        values = self._values(reports)
        check_int64_signed_sums(values.T, "the reports' columns")
        return cast("np.ndarray", values.sum(axis=0, dtype=np.int64))

    def n_reports(self, reports: HistogramReports) -> int:
        return len(reports)

    def estimate_from_support(self, support: ArrayLike, n: int) -> np.ndarray:
        """``c_hat = S / grid`` from the summed grid indices ``S`` of ``n`` users."""
        arr, _ = check_integer_support(support, self.d, n, "summed grid indices")
        return arr.astype(float) / self.grid

    def variance(self, counts: ArrayLike) -> np.ndarray:
        """``n`` times the noise variance, for every item (the counts enter only through ``n``)."""
        return self.variance_at(check_counts(counts, self.d).astype(float))

    def variance_at(self, counts: ArrayLike) -> np.ndarray:
        """:meth:`variance` at real-valued counts."""
        c = check_real_counts(counts, self.d)
        return np.full(self.d, c.sum() * self.noise_variance)

    def output_index(self, reports: HistogramReports) -> np.ndarray:
        """The cell of each report, in base 3 (coordinate 0 most significant), as in :meth:`LaplaceHistogramChannel.to_explicit`."""
        values = self._values(reports)
        if self.d > 39:
            raise ValueError(f"cell indices of a {self.d}-item histogram do not fit in int64 (d <= 39)")
        cells = (values > 0).astype(np.int64) + (values >= self.grid)
        weights = 3 ** np.arange(self.d - 1, -1, -1, dtype=np.int64)
        out: np.ndarray = cells @ weights
        return out

    def _simulate_support(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # the summed noise of n users is a difference of two negative binomials (sums of geometrics)
        n = int(counts.sum())
        up = rng.negative_binomial(n, self.one_minus_alpha, size=self.d)
        down = rng.negative_binomial(n, self.one_minus_alpha, size=self.d)
        return counts.astype(np.int64) * self.grid + up - down


# ---------------------------------------------------------------------------- THE
class THE(UnaryEncoding):
    """Thresholding with histogram encoding (Wang et al. 2017), thresholded on the client.

    Bit ``i`` is ``[e_x[i] + L_i > theta]`` with ``L_i`` Laplace of scale ``2 / eps``: set with
    probability ``p`` for the holder and ``q`` for the others (:func:`threshold_bits`), so THE is
    the unary encoding ``(a, b) = (p, q)``; its tight LDP value is below ``eps``.

    Parameters
    ----------
    d
        Domain size (``>= 2``).
    epsilon
        The Laplace noise's budget (the noise scale is ``2 / epsilon``); the LDP budget declared.
    theta
        The threshold in ``[0, 1]``; ``None`` (the default) takes :func:`optimal_threshold`.

    Examples
    --------
    >>> from ldpkit import accountant
    >>> from ldpkit.histogram import THE
    >>> the = THE(4, 1.0)
    >>> round(the.theta, 6), round(float(the.a[0]), 4), round(float(the.b[0]), 4)
    (0.618553, 0.5868, 0.367)
    >>> round(accountant.ldp_epsilon(the), 3)      # below the Laplace budget: thresholding discards
    0.896
    """

    def __init__(self, d: int, epsilon: float, theta: Optional[float] = None) -> None:
        d = check_domain_size(d)
        eps = check_epsilon(epsilon)
        th = optimal_threshold(eps) if theta is None else check_real(theta, "theta", 0.0, 1.0)
        p, q = threshold_bits(eps, th)
        super().__init__(np.full(d, p), np.full(d, q), epsilon=eps)
        #: the threshold
        self.theta = th

    def __repr__(self) -> str:
        return f"THE(d={self.d}, epsilon={self.epsilon:.6g}, theta={self.theta:.6g})"

    def report_parameters(self) -> dict[str, Any]:
        """``d``, ``epsilon`` and ``theta``, which determine the bit probabilities."""
        return {"d": self.d, "epsilon": self.epsilon, "theta": self.theta}

    def arguments(self) -> dict[str, Any]:
        """``d``, ``epsilon`` and ``theta``."""
        return {"d": self.d, "epsilon": self.epsilon, "theta": self.theta}


# ---------------------------------------------------------------------------- report files and the families
HISTOGRAM_CODEC = ReportCodec(
    "histogram", HistogramReports, (("values", "<i8", False),), lambda r: {"d": int(r.d), "grid": int(r.grid)},
    lambda r: (np.asarray(r.values, dtype=np.int64),),
    lambda cols, meta, src: HistogramReports(np.asarray(cols[0], dtype=np.int64).reshape(-1, int(meta["d"])),
                                             int(meta["d"]), int(meta["grid"]), src),
    widths=lambda meta: (int(meta["d"]),))


def _she_examples() -> tuple[SHE, ...]:
    return (SHE(3, 0.5), SHE(4, 2.0))


def _the_examples() -> tuple[THE, ...]:
    return (THE(3, 0.5), THE(4, 2.0), THE(3, 1.0, theta=0.9))


def _she_sweeps() -> tuple[BudgetSweep, ...]:
    return (domain_sweep(SHE, "histogram"),)


def _the_sweeps() -> tuple[BudgetSweep, ...]:
    return (BudgetSweep("THE", lambda e: THE(4, e), EPS_MIN, EPS_MAX, "unary",
                        variants=(("THE(theta=0.9)", lambda: THE(4, 1.0, theta=0.9)),)),)


def _she_applies(contract: Any) -> Optional[str]:
    if contract.notion.name == "mip":
        return "SHE's output is continuous-valued: the kit does not account its mutual information"
    return None


register_family(Family(
    "SHE", "wang2017locally", SHE, _she_examples, "summation with histogram encoding (Laplace)", reports="histogram",
    codec=HISTOGRAM_CODEC, sweeps=_she_sweeps, at_budget=lambda d, t: SHE(d, t), hi=50.0, applies=_she_applies,
    audit="SHE(d, eps), outputs counted by cell", order=37))
register_family(Family(
    "THE", "wang2017locally", THE, _the_examples, "thresholding with histogram encoding", reports="unary",
    codec=UNARY_CODEC, sweeps=_the_sweeps, at_budget=lambda d, t: THE(d, t), hi=50.0, audit="THE(d, eps)", order=38))
