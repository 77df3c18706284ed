"""Channels: the conditional output distribution of a mechanism, for exact privacy accounting.

A *channel* describes ``P(y | x)`` for every input item ``x`` and output ``y``.  Three forms:

* :class:`ExplicitChannel` -- a row-stochastic matrix, used when the output space is small
  (GRR, uRR, hashed mechanisms restricted to a finite set of seeds, small unary encodings).
* :class:`UnaryChannel` -- the structured form of a unary encoding: output bit ``i`` is 1
  with probability ``a[i]`` when the input is ``i`` and ``b[i]`` otherwise, independently
  across bits.
* :class:`HadamardChannel` -- the structured form of the Hadamard mechanisms (HR and FHR).

A channel holds the law of a mechanism and nothing else: every privacy quantity of a channel
(its tightest epsilon, the pairwise loss matrix, every notion of the companion papers) is
computed by the accountant (:mod:`ldpkit.accountant`), which uses closed forms for the
structured kinds and exact enumeration of :meth:`~Channel.to_explicit` otherwise.
"""

from __future__ import annotations

import abc
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ._rng import RNGLike, as_generator
from ._validation import (
    MAX_USERS,
    ArgumentTypeError,
    check_positive_int,
    check_distribution,
    check_positive_real,
    check_probabilities,
    check_probability,
)

__all__ = [
    "Channel",
    "ExplicitChannel",
    "UnaryChannel",
    "HadamardChannel",
    "product_channel",
    "random_channel",
    "mix_with_uniform",
    "rr_matrix",
    "rr_probabilities",
]

_ROW_SUM_TOL = 1e-9


class Channel(abc.ABC):
    """Abstract base of every channel representation.

    A channel is the exact conditional law ``P(y | x)`` of a mechanism's output given its
    input, over ``n_inputs`` inputs and ``n_outputs`` outputs.  A subclass must provide
    :attr:`n_inputs`, :attr:`n_outputs` and :meth:`to_explicit`; that is all the accountant
    needs to account for it exactly by enumeration on small domains.  A subclass with
    structure (like :class:`UnaryChannel`) can also register closed forms per privacy notion
    with :func:`ldpkit.accountant.register_closed_form`, so that large domains are accounted
    for without enumeration.  Channels compute no privacy themselves.  :attr:`kind` names the representation in error messages and
    in the accountant's registry.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit.channels import Channel, ExplicitChannel
    >>> class Coin(Channel):
    ...     kind = "coin"
    ...     n_inputs = 2
    ...     n_outputs = 2
    ...     def to_explicit(self):
    ...         return ExplicitChannel(np.array([[0.75, 0.25], [0.25, 0.75]]))
    >>> from ldpkit.accountant import ldp_epsilon
    >>> round(ldp_epsilon(Coin()), 6)  # log 3, by enumeration of to_explicit()
    1.098612
    """

    #: short name of the representation (``"explicit"``, ``"unary"``, ...)
    kind: ClassVar[str] = "channel"

    @property
    @abc.abstractmethod
    def n_inputs(self) -> int:
        """Number of inputs ``x`` (rows)."""

    @property
    @abc.abstractmethod
    def n_outputs(self) -> int:
        """Number of outputs ``y`` (may be astronomically large for structured channels)."""

    @abc.abstractmethod
    def to_explicit(self) -> "ExplicitChannel":
        """The same channel as an explicit matrix (only feasible for small output spaces)."""

@dataclass(frozen=True)
class ExplicitChannel(Channel):
    """A channel given as a matrix ``P[x, y] = P(output y | input x)``.

    Parameters
    ----------
    matrix
        Array of shape ``(n_inputs, n_outputs)``; each row must be a probability vector.
    output_labels
        Optional description of the outputs (kept for display, not used in accounting).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit.channels import ExplicitChannel
    >>> rr = ExplicitChannel(np.array([[0.75, 0.25], [0.25, 0.75]]))   # randomised response
    >>> rr.n_inputs, rr.n_outputs
    (2, 2)
    >>> rr.output_distribution([0.5, 0.5]).tolist()
    [0.5, 0.5]
    """

    matrix: np.ndarray
    output_labels: tuple[Any, ...] | None = field(default=None, compare=False)

    kind: ClassVar[str] = "explicit"

    def __post_init__(self) -> None:
        m = check_probabilities(self.matrix, "channel matrix")
        if m.ndim != 2:
            raise ValueError(f"channel matrix must be 2-d (inputs x outputs), got shape {m.shape}")
        if m.shape[0] < 1:
            raise ValueError("channel matrix has no inputs")
        sums = m.sum(axis=1)
        bad = np.abs(sums - 1.0) > _ROW_SUM_TOL
        if np.any(bad):
            raise ValueError(f"channel matrix row {int(np.flatnonzero(bad)[0])} sums to {sums[bad][0]!r}, not 1")
        object.__setattr__(self, "matrix", m)

    @property
    def n_inputs(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def n_outputs(self) -> int:
        return int(self.matrix.shape[1])

    def output_distribution(self, prior: np.ndarray) -> np.ndarray:
        """``P(y) = sum_x prior[x] P(y|x)`` for a probability vector ``prior`` over the inputs."""
        p = check_distribution(prior, self.n_inputs, "prior")
        out: np.ndarray = p @ self.matrix
        return out

    def to_explicit(self) -> "ExplicitChannel":
        return self


@dataclass(frozen=True)
class UnaryChannel(Channel):
    """Structured channel of a unary encoding with per-bit probabilities.

    Bit ``i`` of the output is 1 with probability ``a[i]`` if the input is item ``i`` and
    with probability ``b[i]`` otherwise; bits are independent given the input.
    RAPPOR and OUE have constant ``a``, ``b``; IDUE has one pair per privacy level.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit.channels import UnaryChannel
    >>> ch = UnaryChannel(np.full(3, 0.5), np.full(3, 0.25))
    >>> ch.n_outputs                                   # 2**3 bit vectors
    8
    >>> ch.to_explicit().matrix.shape
    (3, 8)
    """

    a: np.ndarray
    b: np.ndarray

    kind: ClassVar[str] = "unary"

    def __post_init__(self) -> None:
        a = check_probabilities(self.a, "a")
        b = check_probabilities(self.b, "b")
        if a.ndim != 1 or a.shape != b.shape:
            raise ValueError(f"a and b must be 1-d of equal length, got shapes {a.shape} and {b.shape}")
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)

    @property
    def n_inputs(self) -> int:
        return int(self.a.size)

    @property
    def n_outputs(self) -> int:
        """The number ``2**d`` of bit vectors (a Python int, never enumerated unless asked)."""
        return 1 << int(self.a.size)

    def to_explicit(self, max_bits: int = 16) -> ExplicitChannel:
        """Enumerate all ``2**d`` outputs (only for ``d <= max_bits``)."""
        d = self.n_inputs
        if d > max_bits:
            raise ValueError(f"enumerating 2**{d} outputs is too large; max_bits={max_bits}")
        outputs = np.array(list(itertools.product((0, 1), repeat=d)), dtype=bool)  # (2^d, d)
        probs = np.empty((d, outputs.shape[0]))
        for x in range(d):
            p1 = self.b.copy()
            p1[x] = self.a[x]
            factors = np.where(outputs, p1[None, :], 1 - p1[None, :])
            probs[x] = np.prod(factors, axis=1)
            # a product of d positive factors can underflow to 0 (or lose its precision as a
            # subnormal): that would invent outputs impossible under x, hence a false infinite
            # privacy loss; refuse rather than return a wrong matrix
            lost = (probs[x] < np.finfo(float).tiny) & np.all(factors > 0, axis=1)
            if np.any(lost):
                y = int(np.flatnonzero(lost)[0])
                raise ValueError(
                    f"enumerating the {d}-bit unary channel underflows double precision: output {y} of input {x} "
                    f"has probability e^{float(np.sum(np.log(factors[y]))):.4g}, below the smallest normal double "
                    f"({np.finfo(float).tiny:.3g})"
                )
        return ExplicitChannel(probs, output_labels=tuple(map(tuple, outputs.astype(int))))


#: largest ``n_inputs * n_outputs`` that :meth:`HadamardChannel.to_explicit` materialises
MAX_HADAMARD_EXPLICIT_CELLS = 1 << 22


@dataclass(frozen=True)
class HadamardChannel(Channel):
    """Structured channel of the Hadamard mechanisms (:mod:`ldpkit.hadamard`): HR and FHR.

    Input ``x`` (``0 <= x < d``) is encoded as row ``x + 1`` of the Sylvester Hadamard matrix
    ``H_K`` (``H_K[r, k] = (-1)^popcount(r & k)``; row 0, all ones, is skipped), whose
    positions split into ``P(x) = {k : H_K[x+1, k] = +1}`` and ``N(x)`` (``K/2`` each).

    * ``paired=False`` (Hadamard Response): the output is one position ``y`` in ``[0, K)``
      with ``P(y | x) = 2p/K`` on ``P(x)`` and ``2q/K`` on ``N(x)``.
    * ``paired=True`` (FHR): the output is an ordered pair ``(a, z)`` of distinct positions
      (the position holding ``+1`` and the one holding ``-1``), with
      ``P((a, z) | x) = 4p/K^2`` if ``a in P(x), z in N(x)``, ``4q/K^2`` if ``a in N(x), z in P(x)``
      and 0 if ``a`` and ``z`` lie on the same side of row ``x + 1``.  Outputs are indexed
      ``a (K - 1) + z - [z > a]``.

    ``q = 1 - p`` is passed separately so that a tiny ``q`` (``e^-eps`` scale) is stored
    exactly.  The closed forms of the accountant (:mod:`ldpkit.accountant.ldp`,
    :mod:`ldpkit.accountant.fldp`) never enumerate the ``K`` or ``K(K-1)`` outputs
    (FLDP chapter, :prf:ref:`thm-fhr-fldp`).

    Examples
    --------
    >>> import math
    >>> from ldpkit.channels import HadamardChannel
    >>> p = math.e / (1 + math.e)
    >>> hr = HadamardChannel(3, 4, p, 1 - p)
    >>> hr.n_outputs
    4
    >>> fhr = HadamardChannel(3, 4, p, 1 - p, paired=True)
    >>> fhr.kind, fhr.n_outputs
    ('hadamard', 12)
    >>> fhr.to_explicit().matrix.sum(axis=1).round(12).tolist()
    [1.0, 1.0, 1.0]
    """

    d: int
    K: int
    p: float
    q: float
    paired: bool = False

    kind: ClassVar[str] = "hadamard"

    def __post_init__(self) -> None:
        k = check_positive_int(self.K, "K", minimum=2)
        if k & (k - 1):
            raise ValueError(f"K must be a power of two, got {k}")
        d = check_positive_int(self.d, "d", maximum=k - 1)
        p = check_probability(self.p, "p")
        q = check_probability(self.q, "q")
        if abs(p + q - 1.0) > _ROW_SUM_TOL:
            raise ValueError(f"p and q must sum to 1, got p={p!r} and q={q!r}")
        if not isinstance(self.paired, (bool, np.bool_)):
            raise ArgumentTypeError(f"paired must be a bool, got {self.paired!r}")
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "K", k)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "paired", bool(self.paired))

    @property
    def n_inputs(self) -> int:
        return self.d

    @property
    def n_outputs(self) -> int:
        """``K`` positions (HR) or ``K (K - 1)`` ordered pairs of distinct positions (FHR)."""
        return self.K * (self.K - 1) if self.paired else self.K

    def column_sums(self) -> np.ndarray:
        """``sum_{r=1..d} H_K[r, w]`` for every column ``w``: one Walsh-Hadamard transform, ``O(K log K)``.

        ``(d - sums[w]) / 2`` rows have ``-1`` in column ``w`` (the FLDP closed form's hiding fraction).
        """
        out = np.zeros(self.K, dtype=np.int64)
        out[1 : self.d + 1] = 1
        h = 1
        while h < self.K:
            blocks = out.reshape(-1, 2, h)
            out = np.stack((blocks[:, 0] + blocks[:, 1], blocks[:, 0] - blocks[:, 1]), axis=1).reshape(-1)
            h *= 2
        return out

    def to_explicit(self, max_cells: int = MAX_HADAMARD_EXPLICIT_CELLS) -> ExplicitChannel:
        """The ``d x n_outputs`` matrix (only for ``d * n_outputs <= max_cells``)."""
        cells = self.d * self.n_outputs
        if cells > max_cells:
            raise ValueError(f"the Hadamard channel has d * n_outputs = {cells} cells, above max_cells={max_cells}")
        k = self.K
        rows = np.arange(1, self.d + 1, dtype=np.int64)[:, None]
        sign = 1 - 2 * (np.bitwise_count(rows & np.arange(k, dtype=np.int64)[None, :]) & 1).astype(np.int64)
        scale = 4.0 / (k * k) if self.paired else 2.0 / k
        low = self.q * scale
        if 0.0 < min(self.p, self.q) and min(self.p, self.q) * scale < np.finfo(float).tiny:
            raise ValueError(
                f"enumerating the Hadamard channel underflows double precision: probability "
                f"{min(self.p, self.q)!r} * {scale!r} is below the smallest normal double ({np.finfo(float).tiny:.3g})"
            )
        if not self.paired:
            return ExplicitChannel(np.where(sign > 0, self.p * scale, low))
        a, z = np.nonzero(~np.eye(k, dtype=bool))  # row-major: index a (K - 1) + z - [z > a]
        sa, sz = sign[:, a], sign[:, z]
        mat = np.where((sa > 0) & (sz < 0), self.p * scale, np.where((sa < 0) & (sz > 0), low, 0.0))
        return ExplicitChannel(mat, output_labels=tuple(zip(a.tolist(), z.tolist())))


# ---------------------------------------------------------------------------- channel algebra
def product_channel(*channels: Channel) -> ExplicitChannel:
    """Joint release of several mechanisms run independently on the *same* input.

    ``P((y_1, ..., y_k) | x) = prod_i P_i(y_i | x)``: the channel of sequential composition
    (ID-LDP chapter, :prf:ref:`thm-idldp-composition`).  Outputs are the Cartesian product in
    row-major order, so the result has ``prod_i n_outputs_i`` columns; keep the factors small.
    """
    if not channels:
        raise ValueError("product_channel needs at least one channel")
    mats = []
    for i, ch in enumerate(channels):
        if not isinstance(ch, Channel):
            raise ArgumentTypeError(f"argument {i} is not a Channel, got {type(ch).__name__}")
        mats.append(ch.to_explicit().matrix)
    d = mats[0].shape[0]
    for i, m in enumerate(mats):
        if m.shape[0] != d:
            raise ValueError(f"channel {i} has {m.shape[0]} inputs, channel 0 has {d}")
    out = mats[0]
    for m in mats[1:]:
        out = (out[:, :, None] * m[:, None, :]).reshape(d, -1)
    return ExplicitChannel(out)


def random_channel(n_inputs: int, n_outputs: int, rng: RNGLike = None, concentration: float = 1.0) -> ExplicitChannel:
    """A channel with i.i.d. Dirichlet(``concentration``) rows (all entries positive a.s.).

    Used by the book to test privacy theorems on mechanisms that are not of any named family.
    """
    n_inputs = check_positive_int(n_inputs, "n_inputs", maximum=MAX_USERS)
    n_outputs = check_positive_int(n_outputs, "n_outputs", maximum=MAX_USERS)
    concentration = check_positive_real(concentration, "concentration")
    gen = as_generator(rng)
    m = gen.dirichlet(np.full(n_outputs, concentration), size=n_inputs)
    m = np.maximum(m, 1e-300)
    return ExplicitChannel(m / m.sum(axis=1, keepdims=True))


def mix_with_uniform(ch: Channel, theta: float) -> ExplicitChannel:
    """``(1 - theta) P + theta U`` with ``U`` uniform over the outputs (``0 <= theta <= 1``).

    Every ratio ``P(y|x)/P(y|x')`` moves monotonically towards 1 as ``theta`` grows (a
    linear-fractional function of ``theta``), so the privacy loss of every pair is
    non-increasing in ``theta``; :func:`ldpkit.accountant.fit_to_budgets` bisects on it.
    """
    theta = check_probability(theta, "theta")
    m = ch.to_explicit().matrix
    return ExplicitChannel((1.0 - theta) * m + theta / m.shape[1])


def rr_probabilities(epsilon: float, k: int) -> tuple[float, float]:
    """``(p, q)`` of ``k``-ary randomised response at ``epsilon``: keep the value, or any given other one.

    ``p = e^eps / (e^eps + k - 1)`` and ``q = p e^-eps``, written with ``e^-eps`` so that nothing
    overflows (GRR over the domain, OLH's and FLH's response over the buckets).

    Examples
    --------
    >>> from ldpkit.channels import rr_probabilities
    >>> [round(v, 4) for v in rr_probabilities(1.0, 4)]
    [0.4754, 0.1749]
    """
    tail = math.exp(-epsilon)
    p = 1.0 / (1.0 + (k - 1) * tail)
    return p, tail * p


def rr_matrix(epsilon: float, k: int) -> np.ndarray:
    """The ``k x k`` matrix of ``k``-ary randomised response at ``epsilon`` (:func:`rr_probabilities`).

    Examples
    --------
    >>> from ldpkit.channels import rr_matrix
    >>> rr_matrix(1.0, 3).sum(axis=1).round(12).tolist()
    [1.0, 1.0, 1.0]
    """
    p, q = rr_probabilities(epsilon, k)
    m = np.full((k, k), q)
    np.fill_diagonal(m, p)
    return m
