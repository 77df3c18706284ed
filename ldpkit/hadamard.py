r"""Hadamard mechanisms: Hadamard Response (HR) and Flexible Hadamard Response (FHR).

Both encode item ``x`` (``0 <= x < d``) as row ``r = x + 1`` of the Sylvester Hadamard
matrix ``H_K``, ``H_K[r, k] = (-1)^popcount(r & k)``, with ``K`` the smallest power of two
above ``d`` (row 0, all ones, is skipped).  Every other row has ``K/2`` entries ``+1``
(the set ``P(x)``) and ``K/2`` entries ``-1`` (``N(x)``), and for two distinct items each of
the four sign patterns ``(+,+), (+,-), (-,+), (-,-)`` occurs at exactly ``K/4`` positions
(rows ``0``, ``r`` and ``r'`` are orthogonal, and ``H[r, k] H[r', k] = H[r XOR r', k]``).
The server works on one histogram of length ``K`` and one fast Walsh-Hadamard transform
(:func:`fwht`, ``O(K log K)``): ``(H_K v)[r]`` for every row at once.

HR (Acharya, Sun and Zhang, AISTATS 2019, :cite:`acharya2019hadamard`)
----------------------------------------------------------------------
The *basic* Hadamard Response with ``K`` outputs (their high-privacy scheme; the general
version with ``B`` blocks for large ``eps`` is not implemented): the user reports one
position ``y`` in ``[0, K)``, uniform on ``P(x)`` with probability ``p = e^eps / (e^eps + 1)``
and uniform on ``N(x)`` otherwise, so ``P(y|x) = 2p/K`` or ``2q/K`` (``q = 1 - p``) and
the mechanism is exactly eps-LDP.  It is a pure protocol: item ``i`` is supported when
``y in P(i)``, with ``p_support = p`` and ``q_support = 1/2`` (a quarter of the positions
are in ``P(i) cap P(x)``, a quarter in ``P(i) cap N(x)``).  Support counts are
``C_i = (n + (H_K h)[i + 1]) / 2`` for the histogram ``h`` of reports.

FHR (Zhao et al., ICASSP 2022, :cite:`zhao2022fldp`): the reconstruction
------------------------------------------------------------------------
The extracted text of the paper lost every formula; the mechanism is rebuilt from its
prose (Algorithm 1 and Sec. 5).  Each modelling decision and the sentence it rests on (square
brackets mark symbols lost in the extraction, filled in by this reconstruction; the counts in
item 6 are confirmed by enumeration in ``tests/test_hadamard.py``):

1. *Encoding.*  Sec. 5.1, "Encoding": "We first encode each item into a :math:`K`-length vector
   mapping from Hadamard matrix :math:`H_K`, except for the first row"; "half of the encoded vector
   values are :math:`+1` and the others are :math:`-1`"; "the positions of a vector at :math:`+1` or :math:`-1` have
   half values :math:`+1` and half values :math:`-1` in any other vector".  Chosen: row ``x + 1`` of the
   Sylvester matrix (their eq. 6 is the Sylvester recursion, and the notation table reads
   "Hadamard matrices of order :math:`2^k` for every nonnegative integer :math:`k`"), ``K`` the smallest
   power of two with ``K - 1 >= d``.  Skipping row 0 is what makes both properties hold.
2. *Sampling.*  Sec. 5.1, "Perturbation": "we randomly select one :math:`+1` value and one :math:`-1`
   value from the encoding vector".  Chosen: ``j`` uniform on ``P(x)`` and ``l`` uniform on
   ``N(x)``, independently (the prose gives no other law, and Theorem 1's proof needs the
   "four cases of equal probability").
3. *Randomised response on the pair.*  "We then use a random response to perturb this pair.
   Each user holds the true values with probability :math:`p` and the reverse values with
   probability :math:`1 - p`".  Chosen: ``p = e^eps / (e^eps + 1)``, the binary randomised response
   of Sec. 3.3.1; with it the closing ratio of Theorem 2 (lost in the extraction) is
   ``p / (1 - p) = e^eps``, the FLDP budget.
4. *The report.*  "user :math:`u` has a vector of length :math:`K` that has values only at the positions
   of :math:`j` and :math:`l` and has value 0 at all other positions.  Thus, each user sends :math:`(j, l, v_j)`
   ... Because :math:`v_l` is the inverse of :math:`v_j`, we do not need to send the value".
   Chosen: the report *is* that vector ``v = s e_j - s e_l`` (``s = +1`` kept, ``-1``
   reversed), stored as the ordered pair ``(a, z)`` = (position holding ``+1``, position
   holding ``-1``): ``2 log2 K`` bits, the same information as the triple.  The triple must
   not be sent with ``j`` always first: then the position order would reveal ``P(x)`` and
   the randomised bit would be ignorable.
5. *Estimator.*  Sec. 5.1, "Frequency Estimation": "the aggregator adds vectors sent by
   the user to obtain a summation vector of length :math:`K`.  Thereafter, the corresponding
   Hadamard vector of any item can be calculated with [it] to obtain the corresponding
   frequency (7)", and Theorem 1's proof: from item ``x`` "each participant gives 2 with
   probability :math:`p` or :math:`-2` with probability :math:`1 - p`"; from any other item "four cases of equal
   probability ... In the first and second cases, [the product] is always equal to 0".
   Chosen: ``V = sum_u v_u`` and ``c_hat_i = <H_K[i + 1], V> / (2 (2p - 1))``, the unbiased
   correction of that dot product (the "correction" of the notation table).
6. *Privacy.*  Theorem 2: "There are a total of :math:`K^2/2` outputs for each item ... the
   intersection between the two ranges is :math:`K^2/4` ... the sensitivity is maximized when :math:`x`
   and :math:`x'` are opposites ... Then FHR satisfies (:math:`\alpha = 0.5`)-FLDP".  Recomputed here
   (closed forms in :mod:`ldpkit.accountant.fldp`, checked by enumeration in the tests): under
   the pairwise reading of :func:`~ldpkit.accountant.fldp_parameters`, FHR is
   ``(alpha, eps)``-FLDP with ``alpha = 1/2`` and ``eps`` the budget, both tight; its
   standard LDP epsilon is infinite for every budget (an output with ``a, z`` on the same
   side of row ``x' + 1`` is impossible under ``x'``).

Derivation (FLDP chapter, :prf:ref:`alg-fhr`, :prf:ref:`thm-fhr-unbiased` and
:prf:ref:`thm-fhr-variance`).  A user holding ``x`` contributes ``(H[i+1, a] - H[i+1, z]) / 2`` to
``D_i = <H_K[i + 1], V> / 2``: for ``i = x`` it is ``+1`` with probability ``p`` and ``-1``
otherwise; for ``i != x`` the signs ``H[i+1, j]`` (``j`` uniform on ``P(x)``) and
``H[i+1, l]`` (``l`` uniform on ``N(x)``) are independent fair coins, so the contribution is
0 with probability 1/2 and ``+-1`` with probability 1/4 each, whatever the randomised bit.
With ``lambda = 2p - 1 = tanh(eps/2)``, ``c_hat_i = D_i / lambda`` is unbiased and, users
being independent,

``Var[c_hat_i] = c_i (1/lambda^2 - 1) + (n - c_i) / (2 lambda^2)
= c_i / sinh^2(eps/2) + (n - c_i) / (2 tanh^2(eps/2))``.

*Remark.*  The paper's dot-product estimator is not the most accurate unbiased one for this
channel: the count ``S_i`` of users whose ``D``-contribution to ``i`` is ``+1`` is itself a
pure-protocol support count (``p_support = p``, ``q_support = 1/4``), whose estimator
``(S_i - n/4) / (p - 1/4)`` has per-user variance ``3 / (16 (p - 1/4)^2)`` for non-holders
instead of ``1 / (2 lambda^2)`` (about 0.81 against 2.34 at ``eps = 1``), and the unbiased
estimator linear in the counts of ``+1``, ``-1`` and ``0`` contributions with the least
non-holder variance has variance ``1 / (1 + 2 lambda^2) <= 1`` per non-holder, for every
``eps``.  ``FHR.estimate`` is the paper's estimator; :meth:`FHR.signed_supports` and
:meth:`FHR.best_linear_estimate` give the others (FLDP chapter, :prf:ref:`rem-fhr-estimator`,
which derives and compares them).

Aggregate-level simulation (both mechanisms) is exact: the histogram of reported positions is
a sum of multinomials, one per (item, side of its row), and :func:`hadamard_placements`
samples that sum in ``O(K log K)`` by splitting on the bits of the position (groups whose
remaining constraint coincides merge), without per-user draws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, cast

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike, as_generator
from ._validation import (
    ArgumentTypeError,
    check_counts,
    check_domain_size,
    check_epsilon,
    check_int64_signed_sums,
    check_items,
    check_positive_int,
    check_real_counts,
)
from .accountant import Guarantee
from .base import FrequencyOracle, SupportOracle, check_integer_support
from .channels import HadamardChannel
from .family import BudgetSweep, Family, domain_sweep, register_family, uniform_loss_inverse
from .reports import ItemReports, Provenance, ReportCodec, check_report_field, check_report_source
from .reports import check_reports, check_source

__all__ = [
    "FHR",
    "HR",
    "MAX_HADAMARD_D",
    "PairReports",
    "fwht",
    "hadamard_order",
    "hadamard_placements",
    "sylvester",
]

#: the largest domain, with ``K <= 2**24`` so the server's histogram and transform stay below 128 MB
MAX_HADAMARD_D = (1 << 24) - 1

#: largest order :func:`sylvester` materialises densely (for tests and small examples)
MAX_DENSE_K = 1 << 12


# ---------------------------------------------------------------------------- Sylvester helpers
def _check_power_of_two(k: Any, name: str) -> int:
    k = check_positive_int(k, name)
    if k & (k - 1):
        raise ValueError(f"{name} must be a power of two, got {k}")
    return k


def hadamard_order(d: int) -> int:
    """``K``: the smallest power of two with ``K - 1 >= d`` (rows ``1..d`` of ``H_K`` encode the items).

    Examples
    --------
    >>> from ldpkit.hadamard import hadamard_order
    >>> [hadamard_order(d) for d in (1, 2, 3, 4, 7, 8, 1000)]
    [2, 4, 4, 8, 8, 16, 1024]
    """
    d = check_positive_int(d, "d", maximum=MAX_HADAMARD_D)
    return 1 << d.bit_length()


def sylvester(k: int) -> np.ndarray:
    """The dense Sylvester Hadamard matrix ``H_k[r, c] = (-1)^popcount(r & c)`` (int64, ``k <= 4096``).

    Equals the recursion ``H_1 = [1]``, ``H_2k = [[H_k, H_k], [H_k, -H_k]]`` (eq. 6 of Zhao et al.).

    Examples
    --------
    >>> from ldpkit.hadamard import sylvester
    >>> sylvester(4).tolist()
    [[1, 1, 1, 1], [1, -1, 1, -1], [1, 1, -1, -1], [1, -1, -1, 1]]
    """
    k = _check_power_of_two(k, "k")
    if k > MAX_DENSE_K:
        raise ValueError(f"k={k} is above MAX_DENSE_K={MAX_DENSE_K}; use fwht for products with H_k")
    idx = np.arange(k, dtype=np.int64)
    return cast("np.ndarray", 1 - 2 * (np.bitwise_count(idx[:, None] & idx[None, :]) & 1).astype(np.int64))


def fwht(values: ArrayLike) -> np.ndarray:
    """Fast Walsh-Hadamard transform ``H_K v`` along the last axis, in ``O(K log K)``.

    ``K`` (the last dimension) must be a power of two.  Integer input stays integer (exact up
    while every row's sum of absolute values stays below ``2**63``, which is checked); other
    input is computed in float64.  Leading axes are transformed
    independently.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit.hadamard import fwht, sylvester
    >>> v = np.array([3, 0, 1, 2])
    >>> fwht(v).tolist(), (sylvester(4) @ v).tolist()
    ([6, 2, 0, 4], [6, 2, 0, 4])
    """
    arr = np.asarray(values)
    if arr.ndim < 1:
        raise ValueError(f"values must have at least one axis, got shape {arr.shape}")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ArgumentTypeError(f"values must be an integer or real array, got dtype {arr.dtype}")
    k = _check_power_of_two(arr.shape[-1], "the length of values")
    if np.issubdtype(arr.dtype, np.integer):  # every output is a signed sum of a row: exact while those fit
        arr = check_int64_signed_sums(arr, "values")
    out = arr.astype(np.int64 if np.issubdtype(arr.dtype, np.integer) else np.float64, copy=True)
    lead = out.shape[:-1]
    h = 1
    while h < k:
        blocks = out.reshape(*lead, k // (2 * h), 2, h)
        top = blocks[..., 0, :]
        bottom = blocks[..., 1, :]
        out = np.stack((top + bottom, top - bottom), axis=-2).reshape(*lead, k)
        h *= 2
    return out


#: ``hadamard_placements(method="auto")`` places users one by one when there are at most this many
#: per ``K log2 K`` binomials of the tree (one placement costs about a tenth of one binomial)
DIRECT_PLACEMENTS_PER_BINOMIAL = 8


def hadamard_placements(side_counts: ArrayLike, rng: RNGLike = None, method: str = "auto") -> np.ndarray:
    """Histogram over ``[0, K)`` of independent uniform placements on the sides of Hadamard rows.

    ``side_counts[r, t]`` placements are made uniformly on ``{k : popcount(r & k) = t mod 2}``
    (``t = 0``: the ``+1`` positions of row ``r``; ``t = 1``: its ``-1`` positions; row 0 has
    no ``-1`` side).  The result has the exact law of the sum of those multinomials, drawn in
    ``O(K log K)`` binomials: split every group on the top bit of the position (a fair
    binomial, except for the group ``r = top bit``, whose side fixes that bit), and merge the
    groups whose remaining row bits and parity coincide -- their remaining laws are equal, and
    independent multinomials with equal probabilities add up to one multinomial.  When there are
    few placements for ``K`` (``n <= 8 K log2 K``), placing them one by one is cheaper and has the
    same law: a uniform position on ``[0, K)``, moved to the requested side by flipping the row's
    lowest set bit when it is on the other side (a bijection between the two sides).

    Parameters
    ----------
    side_counts
        Integer array of shape ``(K, 2)``, ``K`` a power of two.
    rng
        Generator, seed or ``None``.
    method
        ``"tree"`` (the binomial splits, cost independent of the number of placements),
        ``"direct"`` (one draw per placement) or ``"auto"`` (the cheaper of the two).

    Examples
    --------
    >>> from ldpkit.hadamard import hadamard_placements
    >>> sides = [[0, 0], [5, 0], [0, 0], [0, 0]]   # five placements on row 1's +1 side, {0, 2}
    >>> hadamard_placements(sides, rng=0).tolist()
    [2, 0, 3, 0]
    >>> hadamard_placements(sides, rng=0, method="tree").tolist()  # same law, another stream
    [3, 0, 2, 0]
    """
    arr = np.asarray(side_counts)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"side_counts must have shape (K, 2), got {arr.shape}")
    k = _check_power_of_two(arr.shape[0], "K (rows of side_counts)")
    counts = check_counts(arr.reshape(-1), name="side_counts", allow_zero_total=True).reshape(k, 2)
    if counts[0, 1]:
        raise ValueError(f"side_counts[0, 1] must be 0 (row 0 has no -1 positions), got {int(counts[0, 1])}")
    if method not in ("auto", "tree", "direct"):
        raise ValueError(f"method must be 'auto', 'tree' or 'direct', got {method!r}")
    gen = as_generator(rng)
    total = int(counts.sum())
    if method == "direct" or (method == "auto" and total <= DIRECT_PLACEMENTS_PER_BINOMIAL * k * max(1, k.bit_length() - 1)):
        return _placements_direct(counts, total, gen)
    state = counts.reshape(1, k, 2)  # (nodes = fixed top bits of k, remaining row bits, parity)
    nodes, rest = 1, k
    while rest > 1:
        half = rest // 2
        s4 = state.reshape(nodes, 2, half, 2)  # row = top * half + low
        to0 = gen.binomial(s4, 0.5)
        # row with only its top bit left: the bit of the position equals the parity
        to0[:, 1, 0, 0] = s4[:, 1, 0, 0]
        to0[:, 1, 0, 1] = 0
        to1 = s4 - to0
        child0 = to0[:, 0] + to0[:, 1]
        child1 = to1[:, 0] + to1[:, 1, :, ::-1]  # a set top bit of both flips the parity
        state = np.stack((child0, child1), axis=1).reshape(2 * nodes, half, 2)
        nodes, rest = 2 * nodes, half
    return np.ascontiguousarray(state[:, 0, 0])


def _placements_direct(counts: np.ndarray, total: int, gen: np.random.Generator) -> np.ndarray:
    """:func:`hadamard_placements` one placement at a time (row 0 has only the ``+1`` side)."""
    k = counts.shape[0]
    cell = np.repeat(np.arange(2 * k, dtype=np.int64), counts.reshape(-1))  # 2 * row + side
    rows, side = cell >> 1, cell & 1
    pos = gen.integers(0, k, size=total, dtype=np.int64)
    return np.bincount(_on_side(rows, rows & -rows, pos, side), minlength=k)


def _rows_lowbit(d: int) -> tuple[np.ndarray, np.ndarray]:
    rows = np.arange(1, d + 1, dtype=np.int64)
    return rows, rows & -rows


def _on_side(rows: np.ndarray, low: np.ndarray, pos: np.ndarray, side: np.ndarray) -> np.ndarray:
    """Move uniform positions onto the requested side of each row: flipping the row's lowest set bit
    swaps the sides bijectively, so a uniform position becomes uniform on the side."""
    wrong = (np.bitwise_count(rows & pos) & 1).astype(np.int64) ^ side
    return cast("np.ndarray", pos ^ (low * wrong))


def _check_hadamard_d(d: Any) -> int:
    d = check_domain_size(d)
    if d > MAX_HADAMARD_D:
        raise ValueError(f"d must be at most MAX_HADAMARD_D={MAX_HADAMARD_D} (K <= 2**24), got {d}")
    return d


# ---------------------------------------------------------------------------- HR
class HR(SupportOracle[ItemReports]):
    """Hadamard Response (Acharya, Sun and Zhang 2019), the basic version with ``K`` outputs.

    Item ``x`` is row ``x + 1`` of ``H_K`` (``K = hadamard_order(d)``); the user reports one
    position ``y in [0, K)``: uniform on the row's ``+1`` positions with probability
    ``p = e^eps / (e^eps + 1)``, else uniform on its ``-1`` positions (module docstring).  A
    pure protocol with ``p_support = p`` and ``q_support = 1/2`` (FLDP chapter,
    :prf:ref:`thm-hr-support`); the estimator and variance come from
    :class:`~ldpkit.base.SupportOracle` (Foundations chapter, :prf:ref:`thm-pure-variance`).  Reports are positions (``log2 K`` bits), in an
    :class:`~ldpkit.reports.ItemReports` array.

    Parameters
    ----------
    d
        Domain size (``2 <= d <= MAX_HADAMARD_D``).
    epsilon
        LDP budget, finite and positive.

    Examples
    --------
    >>> from ldpkit import HR, accountant
    >>> hr = HR(6, 1.0)
    >>> hr.K, round(hr.p, 4), float(hr.q_support[0])
    (8, 0.7311, 0.5)
    >>> reports = hr.perturb([0, 1, 5, 5], rng=0)          # one position in [0, 8) per user
    >>> len(reports), bool(reports.max() < 8)
    (4, True)
    >>> round(accountant.ldp_epsilon(hr), 12), hr.channel().kind
    (1.0, 'hadamard')
    """

    def __init__(self, d: int, epsilon: float) -> None:
        d = _check_hadamard_d(d)
        eps = check_epsilon(epsilon)
        super().__init__(d)
        self.epsilon = eps
        tail = math.exp(-eps)
        #: probability of reporting a position of the item's ``+1`` side
        self.p = 1.0 / (1.0 + tail)
        #: probability of the ``-1`` side, ``1 - p`` stored without cancellation
        self.q = tail / (1.0 + tail)
        #: order of the Hadamard matrix (number of outputs)
        self.K = hadamard_order(d)
        self.p_support = np.full(d, self.p)
        self.q_support = np.full(d, 0.5)
        self._rows, self._low = _rows_lowbit(d)

    def arguments(self) -> dict[str, Any]:
        """``d`` and ``epsilon``."""
        return {"d": self.d, "epsilon": self.epsilon}

    def channel(self) -> HadamardChannel:
        """``P(y | x) = 2p/K`` on the ``+1`` positions of row ``x + 1``, ``2q/K`` on its ``-1`` positions."""
        return HadamardChannel(self.d, self.K, self.p, self.q, paired=False)

    def perturb(self, items: ArrayLike, rng: RNGLike = None) -> ItemReports:
        """One reported position per user (int64 :class:`~ldpkit.reports.ItemReports`)."""
        items = check_items(items, self.d)
        gen = as_generator(rng)
        pos = gen.integers(0, self.K, size=items.size, dtype=np.int64)
        side = (gen.random(items.size) >= self.p).astype(np.int64)  # 1: the -1 side
        return ItemReports(_on_side(self._rows[items], self._low[items], pos, side), self.provenance)

    def _positions(self, reports: ArrayLike) -> np.ndarray:
        check_source(reports, self.provenance)
        return check_items(reports, self.K, "reports")

    def aggregate(self, reports: ArrayLike) -> np.ndarray:
        """Support counts ``C_i = #{u : y_u in P(i)} = (n + (H_K h)[i + 1]) / 2`` from the histogram ``h``."""
        pos = self._positions(reports)
        spectrum = fwht(np.bincount(pos, minlength=self.K))
        return (pos.size + spectrum[1 : self.d + 1]) // 2

    def n_reports(self, reports: ArrayLike) -> int:
        return int(np.asarray(reports).size)

    def output_index(self, reports: ArrayLike) -> np.ndarray:
        """Reports are positions, the channel's outputs in index order."""
        return self._positions(reports)

    def _simulate_support(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # side of each user's position: Bin(c_x, p) on P(x), the rest on N(x); then one exact
        # draw of the position histogram (hadamard_placements) and the server's transform
        kept = rng.binomial(counts, self.p)
        sides = np.zeros((self.K, 2), dtype=np.int64)
        sides[1 : self.d + 1, 0] = kept
        sides[1 : self.d + 1, 1] = counts - kept
        hist = hadamard_placements(sides, rng)
        return (int(counts.sum()) + fwht(hist)[1 : self.d + 1]) // 2


# ---------------------------------------------------------------------------- FHR
@dataclass(frozen=True, eq=False)
class PairReports:
    """FHR reports: user ``u`` sent the vector with ``+1`` at ``plus[u]`` and ``-1`` at ``minus[u]``.

    The paper's triple ``(j, l, v_j)`` in a canonical order (``2 log2 K`` bits per user).

    Attributes
    ----------
    plus, minus
        ``int64`` arrays of distinct positions in ``[0, K)``.
    K
        Order of the Hadamard matrix the reports were produced with.

    Examples
    --------
    >>> from ldpkit import FHR
    >>> reports = FHR(6, 1.0).perturb([0, 1, 5, 5], rng=0)
    >>> len(reports), reports.K, bool((reports.plus != reports.minus).all())
    (4, 8, True)
    """

    plus: np.ndarray
    minus: np.ndarray
    K: int
    #: the mechanism configuration that made these reports (``None`` when built by hand)
    source: Optional[Provenance] = None

    def __post_init__(self) -> None:
        check_report_field(self.K, "PairReports K", power_of_two=True)
        check_report_source(self.source, "PairReports")

    def __len__(self) -> int:
        return int(np.asarray(self.plus).shape[0])

    def row(self, i: int) -> tuple[int, int]:
        """User ``i``'s report ``(plus, minus)``."""
        return int(self.plus[i]), int(self.minus[i])


class FHR(FrequencyOracle[PairReports]):
    """Flexible Hadamard Response (Zhao et al. 2022), as reconstructed in the module docstring.

    Item ``x`` is row ``x + 1`` of ``H_K``; the user samples ``j`` uniform on the row's ``+1``
    positions and ``l`` uniform on its ``-1`` positions, keeps the pair with probability
    ``p = e^eps / (e^eps + 1)`` and reverses it otherwise, and sends the positions holding
    ``+1`` and ``-1`` (:class:`PairReports`).  The server sums the vectors and takes the
    dot product with each item's row: :meth:`aggregate` returns the net support
    ``D_i = <H_K[i + 1], V> / 2`` (an integer in ``[-n, n]``, not a count), and
    ``c_hat_i = D_i / tanh(eps/2)`` with
    ``Var[c_hat_i] = c_i / sinh^2(eps/2) + (n - c_i) / (2 tanh^2(eps/2))``
    (FLDP chapter, :prf:ref:`thm-fhr-unbiased` and :prf:ref:`thm-fhr-variance`).

    Privacy: ``(1/2, eps)``-FLDP under the pairwise reading of
    :func:`~ldpkit.accountant.fldp_parameters` (FLDP chapter, :prf:ref:`def-fldp` and
    :prf:ref:`thm-fhr-fldp`); no finite standard LDP epsilon, so ``epsilon`` is ``inf`` and the
    budget is :attr:`fldp_epsilon`, named after its notion in the constructor too.  The budget randomises only the order of the reported pair;
    the unordered pair is sent in the clear, so every count stays estimable with per-user
    variance at most 1 however small the budget (:meth:`best_linear_estimate`; FLDP chapter,
    :ref:`sec-fldp-protects`).

    Parameters
    ----------
    d
        Domain size (``2 <= d <= MAX_HADAMARD_D``).
    fldp_epsilon
        The FLDP budget (the randomised-response budget on the pair), finite and positive.

    Examples
    --------
    >>> from ldpkit import FHR, accountant
    >>> fhr = FHR(6, fldp_epsilon=1.0)
    >>> fhr.K, fhr.alpha, fhr.epsilon, fhr.guarantees()
    (8, 0.5, inf, [Guarantee('fldp', alpha=0.5, epsilon=1.0)])
    >>> params = accountant.fldp_parameters(fhr)              # closed form, no enumeration
    >>> params.shared_fraction, round(params.epsilon, 12)
    (0.5, 1.0)
    >>> [round(float(v), 2) for v in fhr.variance([50, 30, 15, 5, 0, 0])]
    [301.2, 274.38, 254.25, 240.84, 234.13, 234.13]
    """

    #: the fraction of shared outputs of every pair of items (Theorem 2 of the paper; recomputed)
    alpha = 0.5

    def __init__(self, d: int, fldp_epsilon: float) -> None:
        d = _check_hadamard_d(d)
        eps = check_epsilon(fldp_epsilon, "fldp_epsilon")
        super().__init__(d)
        #: the FLDP budget, the ratio bound ``e^eps`` on the outputs two items share
        self.fldp_epsilon = eps
        tail = math.exp(-eps)
        #: probability that the sampled pair is kept (not reversed)
        self.p = 1.0 / (1.0 + tail)
        #: probability that it is reversed, ``1 - p`` stored without cancellation
        self.q = tail / (1.0 + tail)
        #: ``2p - 1 = tanh(eps/2)``: the mean contribution of a holder to its item's net support
        self.lam = math.tanh(eps / 2)
        #: order of the Hadamard matrix
        self.K = hadamard_order(d)
        self._rows, self._low = _rows_lowbit(d)

    def __repr__(self) -> str:
        return f"FHR(d={self.d}, fldp_epsilon={self.fldp_epsilon:.6g})"

    def report_parameters(self) -> dict[str, Any]:
        """``d``, the FLDP budget and ``K``."""
        return {"d": self.d, "epsilon": self.fldp_epsilon, "K": self.K}

    def arguments(self) -> dict[str, Any]:
        """``d`` and ``fldp_epsilon``."""
        return {"d": self.d, "fldp_epsilon": self.fldp_epsilon}

    def guarantees(self) -> list[Guarantee]:
        """``(1/2, eps)``-FLDP (pairwise reading; FLDP chapter, :prf:ref:`thm-fhr-fldp`)."""
        return [Guarantee("fldp", alpha=self.alpha, epsilon=self.fldp_epsilon)]

    def channel(self) -> HadamardChannel:
        """``P((a, z) | x) = 4p/K^2`` if ``a`` is on the ``+1`` and ``z`` on the ``-1`` side of row ``x + 1``,
        ``4q/K^2`` if reversed, 0 otherwise."""
        return HadamardChannel(self.d, self.K, self.p, self.q, paired=True)

    # ------------------------------------------------------------------ sampling
    def perturb(self, items: ArrayLike, rng: RNGLike = None) -> PairReports:
        """Sample the ``+1``/``-1`` pair of each user's row and apply randomised response to it."""
        items = check_items(items, self.d)
        gen = as_generator(rng)
        n = items.size
        shift = np.int64(self.K.bit_length() - 1)
        both = gen.integers(0, self.K * self.K, size=n, dtype=np.int64)  # two uniform positions
        flip = (gen.random(n) >= self.p).astype(np.int64)  # 1: the pair is reversed
        rows, low = self._rows[items], self._low[items]
        plus = _on_side(rows, low, both & np.int64(self.K - 1), flip)
        minus = _on_side(rows, low, both >> shift, flip ^ 1)
        return PairReports(plus, minus, self.K, self.provenance)

    def _check_reports(self, reports: Any) -> tuple[np.ndarray, np.ndarray]:
        check_reports(reports, PairReports, self.provenance, K=self.K)
        plus, minus = np.asarray(reports.plus), np.asarray(reports.minus)
        for name, arr in (("plus", plus), ("minus", minus)):
            if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
                raise ArgumentTypeError(f"reports.{name} must be a 1-d integer array, got dtype {arr.dtype}")
            if arr.ndim != 1:
                raise ValueError(f"reports.{name} must be a 1-d integer array, got shape {arr.shape}")
        if minus.shape != plus.shape:
            raise ValueError(f"reports.minus has shape {minus.shape}, expected {plus.shape}")
        if plus.size == 0:
            raise ValueError("reports is empty: at least one user is needed")
        plus = check_items(plus, self.K, "reports.plus")
        minus = check_items(minus, self.K, "reports.minus")
        same = plus == minus
        if np.any(same):
            u = int(np.flatnonzero(same)[0])
            raise ValueError(f"reports: user {u} has +1 and -1 at the same position {int(plus[u])}")
        return plus, minus

    def aggregate(self, reports: PairReports) -> np.ndarray:
        """Net support ``D_i = <H_K[i + 1], V> / 2`` of every item, ``V`` the sum of the users' vectors.

        ``V`` is two histograms (``O(n)``), the dot products with every row one :func:`fwht`.
        """
        plus, minus = self._check_reports(reports)
        total = np.bincount(plus, minlength=self.K) - np.bincount(minus, minlength=self.K)
        return fwht(total)[1 : self.d + 1] // 2

    def n_reports(self, reports: PairReports) -> int:
        return len(reports)

    def estimate_from_support(self, support: ArrayLike, n: int) -> np.ndarray:
        """``c_hat_i = D_i / tanh(eps/2)`` from the net supports ``D`` of ``n`` users."""
        arr, n = check_integer_support(support, self.d, n, "net supports")
        if arr.size and int(np.abs(arr).max()) > n:
            raise ValueError(f"net support {int(arr[np.argmax(np.abs(arr))])} exceeds the number of users n={n}")
        return arr.astype(float) / self.lam

    def variance(self, counts: ArrayLike) -> np.ndarray:
        """``c_i / sinh^2(eps/2) + (n - c_i) / (2 tanh^2(eps/2))`` (module docstring)."""
        return self.variance_at(check_counts(counts, self.d).astype(float))

    def variance_at(self, counts: ArrayLike) -> np.ndarray:
        """:meth:`variance` at real-valued counts (the formula is affine in them)."""
        c = check_real_counts(counts, self.d)
        n = c.sum()
        half = self.fldp_epsilon / 2
        return cast("np.ndarray", c / math.sinh(half) ** 2 + (n - c) / (2.0 * self.lam**2))

    # ------------------------------------------------------------------ other estimators
    def signed_supports(self, reports: PairReports) -> tuple[np.ndarray, np.ndarray]:
        """``(S, T)``: per item, the users whose contribution to ``D_i`` is ``+1`` and ``-1``.

        ``S_i = #{u : a_u in P(i), z_u in N(i)}`` and ``T_i = #{u : a_u in N(i), z_u in P(i)}``,
        from three histograms (of ``a``, ``z`` and ``a XOR z``) and three transforms:
        ``S_i = (n + (H h_a)_i - (H h_z)_i - (H h_w)_i) / 4``,
        ``S_i + T_i = (n - (H h_w)_i) / 2`` (rows ``i + 1``), so ``S - T`` is
        :meth:`aggregate`.  FLDP chapter, :prf:ref:`rem-fhr-estimator`.

        Examples
        --------
        >>> from ldpkit import FHR
        >>> fhr = FHR(6, 1.0)
        >>> reports = fhr.perturb([0, 0, 1, 5], rng=0)
        >>> s, t = fhr.signed_supports(reports)
        >>> bool((s - t == fhr.aggregate(reports)).all())
        True
        """
        plus, minus = self._check_reports(reports)
        n = plus.size
        sl = slice(1, self.d + 1)
        ha = fwht(np.bincount(plus, minlength=self.K))[sl]
        hz = fwht(np.bincount(minus, minlength=self.K))[sl]
        hw = fwht(np.bincount(plus ^ minus, minlength=self.K))[sl]
        s = (n + ha - hz - hw) // 4
        return s, (n - hw) // 2 - s

    def _best_linear_weights(self) -> tuple[float, float, float]:
        b = 1.0 / (1.0 + 2.0 * self.lam**2)
        return b * (4.0 * self.p - 1.0), b * (4.0 * self.q - 1.0), -b

    def best_linear_estimate(self, reports: PairReports) -> np.ndarray:
        """The unbiased estimate linear in the counts of ``+1``, ``-1`` and ``0`` contributions
        with the least variance for non-holders.

        ``c~_i = b ((4p - 1) S_i + (4q - 1) T_i - (n - S_i - T_i))`` with
        ``b = 1 / (1 + 2 tanh^2(eps/2))`` (:meth:`signed_supports`); its per-user variance for a
        non-holder is ``b``, at most 1 for every budget (:meth:`best_linear_variance`).  FLDP
        chapter, :prf:ref:`rem-fhr-estimator`.
        """
        s, t = self.signed_supports(reports)
        n = len(reports)
        w_plus, w_minus, w_zero = self._best_linear_weights()
        return cast("np.ndarray", w_plus * s + w_minus * t + w_zero * (n - s - t))

    def best_linear_variance(self, counts: ArrayLike) -> np.ndarray:
        """Exact variance of :meth:`best_linear_estimate`: ``c_i v_1 + (n - c_i) b``, with
        ``v_1 = p w_+^2 + q w_-^2 - 1`` the holder's per-user variance."""
        c = check_counts(counts, self.d).astype(float)
        n = c.sum()
        w_plus, w_minus, _ = self._best_linear_weights()
        holder = self.p * w_plus**2 + self.q * w_minus**2 - 1.0
        return cast("np.ndarray", c * holder + (n - c) / (1.0 + 2.0 * self.lam**2))

    def output_index(self, reports: PairReports) -> np.ndarray:
        """Column ``a (K - 1) + z - [z > a]`` of ``channel().to_explicit()`` for the pair ``(a, z)``."""
        plus, minus = self._check_reports(reports)
        return cast("np.ndarray", plus * (self.K - 1) + minus - (minus > plus))

    def _simulate_support(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # Kept pairs put +1 on P(x) and -1 on N(x), reversed ones the opposite; given the
        # number kept (binomial), the +1 positions and the -1 positions are independent
        # uniform placements, each histogram drawn exactly by hadamard_placements.
        kept = rng.binomial(counts, self.p)
        rev = counts - kept
        plus_sides = np.zeros((self.K, 2), dtype=np.int64)
        minus_sides = np.zeros((self.K, 2), dtype=np.int64)
        plus_sides[1 : self.d + 1, 0], plus_sides[1 : self.d + 1, 1] = kept, rev
        minus_sides[1 : self.d + 1, 0], minus_sides[1 : self.d + 1, 1] = rev, kept
        total = hadamard_placements(plus_sides, rng) - hadamard_placements(minus_sides, rng)
        return fwht(total)[1 : self.d + 1] // 2


# ---------------------------------------------------------------------------- report files and the families
# the codec of FHR's position pairs, with the Hadamard order K
PAIR_CODEC = ReportCodec(
    "pair", PairReports, (("plus", "<i8", True), ("minus", "<i8", True)), lambda r: {"K": int(r.K)},
    lambda r: (np.asarray(r.plus, dtype=np.int64), np.asarray(r.minus, dtype=np.int64)),
    lambda cols, meta, src: PairReports(cols[0], cols[1], int(meta["K"]), src))


def _hr_examples() -> tuple[HR, ...]:
    return (HR(3, 0.5), HR(5, 1.0), HR(4, 3.0))


def _fhr_examples() -> tuple[FHR, ...]:
    return (FHR(3, 0.5), FHR(5, 1.0), FHR(4, 3.0))


def _hr_sweeps() -> tuple[BudgetSweep, ...]:
    return (domain_sweep(HR, "item"),)


def _fhr_sweeps() -> tuple[BudgetSweep, ...]:
    # FHR reports are (plus, minus) position pairs: a report family of their own
    return (domain_sweep(FHR, "pair", eps_arg="fldp_epsilon"),)


register_family(Family(
    "HR", "acharya2019hadamard", HR, _hr_examples, "Hadamard Response (basic, K outputs)", sweeps=_hr_sweeps,
    at_budget=lambda d, t: HR(d, t), hi=50.0, audit="HR(d, eps)", order=50, inverse=uniform_loss_inverse))
register_family(Family(
    "FHR", "zhao2022fldp", FHR, _fhr_examples, "flexible Hadamard response (FLDP)", reports="pair", codec=PAIR_CODEC,
    sweeps=_fhr_sweeps, at_budget=lambda d, t: FHR(d, t), hi=50.0,
    audit_skip="no finite LDP epsilon (an output rules an input out), so no exact value to approach", order=60))
