"""Unary encodings: symmetric (basic RAPPOR), optimised (OUE) and general per-bit forms.

Derived in the Foundations chapter (eq. :eq:`eq-ue`, :prf:ref:`thm-ue-pairwise`,
:prf:ref:`thm-pure-variance`).  Reports are bit-packed (one bit per item), sampled in chunks.
"""

from __future__ import annotations

import math
from typing import Any
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike, as_generator
from ._sampling import PackedBernoulli, bernoulli_matrix, chunk_rows, packed_column_counts
from ._validation import (
    EPS_MAX,
    EPS_MIN,
    ArgumentTypeError,
    check_domain_size,
    check_epsilon,
    check_items,
    check_probabilities,
)
from .base import SupportOracle
from .channels import UnaryChannel
from .family import BudgetSweep, Family, domain_sweep, register_family, uniform_loss_inverse
from .reports import Provenance, ReportCodec, array_digest, check_report_source, check_source

__all__ = ["UnaryReports", "UnaryEncoding", "RAPPOR", "OUE", "SUE"]


@dataclass(frozen=True)
class UnaryReports:
    """Bit-packed unary reports: ``bits[u]`` holds user ``u``'s ``d`` bits (``np.packbits`` order).

    Examples
    --------
    >>> from ldpkit import OUE
    >>> reports = OUE(4, 1.0).perturb([0, 1, 1, 3], rng=0)
    >>> len(reports), reports.bits.shape, reports.to_dense().shape   # 4 users, 4 bits in 1 byte each
    (4, (4, 1), (4, 4))
    """

    bits: np.ndarray
    d: int
    #: the mechanism configuration that made these reports (``None`` when built by hand)
    source: Provenance | None = None

    def __post_init__(self) -> None:
        if isinstance(self.d, bool) or not isinstance(self.d, (int, np.integer)) or int(self.d) < 1:
            raise ArgumentTypeError(f"UnaryReports d must be a positive integer, got {self.d!r}")
        bits = self.bits
        if not isinstance(bits, np.ndarray) or bits.dtype != np.uint8:
            shape = getattr(bits, "shape", None)
            dtype = getattr(bits, "dtype", type(bits).__name__)
            raise ArgumentTypeError(
                f"UnaryReports bits must be a 2-d uint8 array (np.packbits), got {dtype} of shape {shape}"
            )
        if bits.ndim != 2:
            shape = getattr(bits, "shape", None)
            dtype = getattr(bits, "dtype", type(bits).__name__)
            raise ValueError(f"UnaryReports bits must be a 2-d uint8 array (np.packbits), got {dtype} of shape {shape}")
        width = (int(self.d) + 7) // 8
        if bits.shape[1] != width:
            raise ValueError(f"UnaryReports bits have {bits.shape[1]} bytes per user, expected {width} for d={self.d}")
        pad = 8 * width - int(self.d)
        if pad and bits.shape[0] and np.any(bits[:, -1] & np.uint8((1 << pad) - 1)):
            user = int(np.flatnonzero(bits[:, -1] & np.uint8((1 << pad) - 1))[0])
            raise ValueError(f"UnaryReports: user {user} has bits set beyond item d-1={int(self.d) - 1}")
        check_report_source(self.source, "UnaryReports")

    def __len__(self) -> int:
        return int(self.bits.shape[0])

    def row(self, i: int) -> np.ndarray:
        """User ``i``'s ``d`` bits as a boolean vector."""
        return np.unpackbits(self.bits[i], count=self.d).astype(bool)

    def to_dense(self) -> np.ndarray:
        """Unpack to a boolean ``(n, d)`` matrix (for small inputs and tests)."""
        return np.unpackbits(self.bits, axis=1, count=self.d).astype(bool)


class UnaryEncoding(SupportOracle[UnaryReports]):
    """Unary encoding with per-item bit probabilities.

    Bit ``i`` of a user's report is 1 with probability ``a[i]`` when the user holds ``i``
    and ``b[i]`` otherwise.  Its tight LDP epsilon is
    ``max_{x != x'} [log max(a_x/b_x, (1-a_x)/(1-b_x)) + log max(b_x'/a_x', (1-b_x')/(1-a_x'))]``
    (:func:`ldpkit.accountant.ldp_epsilon`; Foundations chapter, :prf:ref:`thm-ue-pairwise`);
    the mechanism declares the budget it is given, which :func:`ldpkit.accountant.verify`
    then checks against that value.

    Parameters
    ----------
    a, b
        Arrays of length ``d`` with ``a[i] != b[i]`` (the estimator divides by ``a - b``).
    epsilon
        The standard-LDP budget the mechanism declares; ``None`` (the default) declares none
        (``epsilon`` is then ``inf``).

    Examples
    --------
    >>> from ldpkit import UnaryEncoding, accountant
    >>> ue = UnaryEncoding([0.6, 0.7, 0.55], [0.3, 0.2, 0.45], epsilon=1.9)
    >>> ue.epsilon, round(accountant.ldp_epsilon(ue), 4)    # declared, and what the channel gives
    (1.9, 1.8124)
    >>> bool(accountant.verify(ue)), bool(accountant.verify(UnaryEncoding(ue.a, ue.b, epsilon=1.8)))
    (True, False)
    """

    def __init__(self, a: ArrayLike, b: ArrayLike, *, epsilon: float | None = None) -> None:
        declared = math.inf if epsilon is None else check_epsilon(epsilon)
        a = check_probabilities(a, "a")
        b = check_probabilities(b, "b")
        if a.ndim != 1 or a.shape != b.shape:
            raise ValueError(f"a and b must be 1-d of equal length, got shapes {a.shape} and {b.shape}")
        check_domain_size(a.size, "len(a)")
        same = a == b
        if np.any(same):
            raise ValueError(f"a[i] must differ from b[i]; equal at item {int(np.flatnonzero(same)[0])} ({a[same][0]!r})")
        super().__init__(int(a.size))
        self.epsilon = declared
        self.a = a
        self.b = b
        self.p_support = a
        self.q_support = b
        self._channel = UnaryChannel(a, b)
        self._sampler: PackedBernoulli | None = None

    def channel(self) -> UnaryChannel:
        return self._channel

    def perturb(self, items: ArrayLike, rng: RNGLike = None) -> UnaryReports:
        """Sample each user's ``d`` bits (exact Bernoulli sampling, bit-packed output)."""
        items = check_items(items, self.d)
        gen = as_generator(rng)
        n = items.size
        packed = np.empty((n, (self.d + 7) // 8), dtype=np.uint8)
        if self._sampler is None:
            self._sampler = PackedBernoulli(self.b)
        step = chunk_rows(n, self.d)
        for start in range(0, n, step):
            x = items[start : start + step]
            rows = np.arange(x.size)
            if self._sampler.supported:
                block = self._sampler.sample(gen, x.size)
            else:
                block = np.packbits(bernoulli_matrix(gen, x.size, self.b), axis=1)
            # overwrite each user's own bit with a Bernoulli(a_x) draw
            mask = (np.uint8(0x80) >> (x & 7).astype(np.uint8)).astype(np.uint8)
            own = gen.random(x.size) < self.a[x]
            cols = x >> 3
            block[rows, cols] = (block[rows, cols] & ~mask) | np.where(own, mask, np.uint8(0))
            packed[start : start + step] = block
        return UnaryReports(packed, self.d, self.provenance)

    def report_parameters(self) -> dict[str, Any]:
        """``d`` and fingerprints of the bit probabilities ``a`` and ``b``."""
        return {"d": self.d, "a": array_digest(self.a), "b": array_digest(self.b)}

    def arguments(self) -> dict[str, Any]:
        """The bit probabilities ``a``, ``b`` and the declared ``epsilon`` (``None`` for none)."""
        return {"a": self.a.copy(), "b": self.b.copy(), "epsilon": self.epsilon if math.isfinite(self.epsilon) else None}

    def aggregate(self, reports: UnaryReports) -> np.ndarray:
        if not isinstance(reports, UnaryReports) or reports.d != self.d:
            got = f"UnaryReports over d={reports.d}" if isinstance(reports, UnaryReports) else type(reports).__name__
            raise ValueError(f"reports must be UnaryReports over d={self.d} items, got {got}")
        check_source(reports, self.provenance)
        if len(reports) == 0:
            raise ValueError("reports is empty: at least one user is needed")
        return packed_column_counts(reports.bits, self.d)

    def n_reports(self, reports: UnaryReports) -> int:
        return len(reports)

    def output_index(self, reports: UnaryReports) -> np.ndarray:
        """Index of each report among the ``2**d`` outputs of :meth:`~ldpkit.channels.UnaryChannel.to_explicit`.

        Outputs are enumerated with bit 0 most significant (``itertools.product`` order), so
        the index of bits ``(y_0, ..., y_{d-1})`` is ``sum_k y_k 2**(d-1-k)``; only for
        ``d <= 62``.
        """
        if not isinstance(reports, UnaryReports) or reports.d != self.d:
            raise ValueError(f"reports must be UnaryReports over d={self.d} items")
        if self.d > 62:
            raise ValueError(f"output indices of a {self.d}-bit unary report do not fit in int64 (d <= 62)")
        weights = np.left_shift(np.int64(1), np.arange(self.d - 1, -1, -1, dtype=np.int64))
        return reports.to_dense().astype(np.int64) @ weights

    def _simulate_support(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # Bits are independent across users and items: each support count is a sum of two
        # binomials, which is the exact joint distribution.
        n = int(counts.sum())
        return rng.binomial(counts, self.a) + rng.binomial(n - counts, self.b)


#: largest budget of :class:`RAPPOR` (see its docstring)
RAPPOR_EPS_MAX = 30.0

#: why budgets above :data:`RAPPOR_EPS_MAX` are refused
RAPPOR_HIGH_WHY = (
    "above it 1 - a = 1/(1 + e^(eps/2)) is below 3e-7, and storing a next to 1 in double precision "
    "shifts the channel's log-ratio by more than the accountant's relative tolerance of 1e-9"
)


class RAPPOR(UnaryEncoding):
    """Basic (one-time) RAPPOR: symmetric unary encoding, ``a = e^{eps/2}/(e^{eps/2}+1)``, ``b = 1 - a``.

    Supported budgets: ``[EPS_MIN, RAPPOR_EPS_MAX] = [1e-6, 30]``; above 30 the
    probability ``1 - a`` cannot be stored next to 1 accurately enough for exact accounting.

    Examples
    --------
    >>> from ldpkit import RAPPOR, accountant
    >>> rappor = RAPPOR(3, 2.0)
    >>> [round(float(a), 4) for a in rappor.a], [round(float(b), 4) for b in rappor.b]
    ([0.7311, 0.7311, 0.7311], [0.2689, 0.2689, 0.2689])
    >>> round(accountant.ldp_epsilon(rappor.channel()), 6)
    2.0
    """

    def __init__(self, d: int, epsilon: float) -> None:
        d = check_domain_size(d)
        eps = check_epsilon(epsilon, high=RAPPOR_EPS_MAX, high_why=RAPPOR_HIGH_WHY)
        b = 1.0 / (1.0 + math.exp(eps / 2))  # logistic(-eps/2), no overflow
        super().__init__(np.full(d, 1.0 - b), np.full(d, b), epsilon=eps)

    def report_parameters(self) -> dict[str, Any]:
        """``d`` and ``epsilon``, which determine the bit probabilities."""
        return {"d": self.d, "epsilon": self.epsilon}

    def arguments(self) -> dict[str, Any]:
        """``d`` and ``epsilon``."""
        return {"d": self.d, "epsilon": self.epsilon}


class OUE(UnaryEncoding):
    """Optimised unary encoding (Wang et al. 2017): ``a = 1/2``, ``b = 1/(e^eps + 1)``.

    Examples
    --------
    >>> from ldpkit import OUE
    >>> oue = OUE(4, 1.0)
    >>> oue.a.tolist(), [round(float(b), 4) for b in oue.b]
    ([0.5, 0.5, 0.5, 0.5], [0.2689, 0.2689, 0.2689, 0.2689])
    >>> [round(float(v), 1) for v in oue.variance([50, 30, 15, 5])]
    [418.3, 398.3, 383.3, 373.3]
    """

    def __init__(self, d: int, epsilon: float) -> None:
        d = check_domain_size(d)
        eps = check_epsilon(epsilon)
        tail = math.exp(-eps)
        super().__init__(np.full(d, 0.5), np.full(d, tail / (1.0 + tail)), epsilon=eps)  # 1/(e^eps + 1)

    def report_parameters(self) -> dict[str, Any]:
        """``d`` and ``epsilon``, which determine the bit probabilities."""
        return {"d": self.d, "epsilon": self.epsilon}

    def arguments(self) -> dict[str, Any]:
        """``d`` and ``epsilon``."""
        return {"d": self.d, "epsilon": self.epsilon}


#: symmetric unary encoding: the name Wang et al. (2017) give basic RAPPOR (bits kept with
#: probability ``e^(eps/2) / (e^(eps/2) + 1)``); the same class, so its reports say ``RAPPOR``
SUE = RAPPOR


# ---------------------------------------------------------------------------- report files and the families
def _bits_to_text(bits: np.ndarray, meta: dict[str, Any]) -> list[str]:
    d = int(meta["d"])
    dense = np.unpackbits(bits, axis=1, count=d)
    dense += ord("0")
    raw = dense.tobytes().decode("ascii")
    return [raw[i:i + d] for i in range(0, len(raw), d)]


def _text_to_bits(text: list[str], meta: dict[str, Any]) -> np.ndarray:
    d = int(meta["d"])
    bad = next((i for i, t in enumerate(text) if len(t) != d), None)
    codes = None
    if bad is None:
        codes = np.frombuffer("".join(text).encode("ascii", "replace"), dtype=np.uint8).reshape(len(text), d)
        wrong = np.flatnonzero(((codes != ord("0")) & (codes != ord("1"))).any(axis=1))
        bad = int(wrong[0]) if wrong.size else None
    if bad is not None:
        raise ValueError(f"report {bad} is {text[bad][:40]!r}, not {d} zeros and ones")
    assert codes is not None
    return np.packbits(codes == ord("1"), axis=1)


# the codec of unary reports: one packed bit row per user (in CSV, a string of d zeros and ones)
UNARY_CODEC = ReportCodec(
    "unary", UnaryReports, (("bits", "|u1", False),), lambda r: {"d": int(r.d)},
    lambda r: (r.bits,),
    lambda cols, meta, src: UnaryReports(cols[0], int(meta["d"]), src),
    _bits_to_text, _text_to_bits, lambda meta: ((int(meta["d"]) + 7) // 8,))


def _ue_at(eps: float) -> UnaryEncoding:
    """A general unary encoding whose tight budget is ``eps``, declaring it.

    OUE's bits on items 0 and 2 (their pair attains ``eps``); item 1's ``b`` lies half-way to 1/2,
    which only lowers the pairs it takes part in.
    """
    tail = math.exp(-eps)
    b = tail / (1.0 + tail)
    return UnaryEncoding(np.full(3, 0.5), np.array([b, (b + 0.5) / 2, b]), epsilon=eps)


def _rappor_examples() -> tuple[RAPPOR, ...]:
    return (RAPPOR(3, 0.5), RAPPOR(4, 2.0))


def _oue_examples() -> tuple[OUE, ...]:
    return (OUE(3, 0.5), OUE(4, 2.0))


def _ue_examples() -> tuple[UnaryEncoding, ...]:
    # a stated budget above the channel's tight value 3.8712...: verify checks the claim
    return (UnaryEncoding([0.6, 0.7, 0.55, 0.9], [0.3, 0.2, 0.45, 0.05], epsilon=3.9),)


def _rappor_sweeps() -> tuple[BudgetSweep, ...]:
    return (BudgetSweep("RAPPOR", lambda e: RAPPOR(4, e), EPS_MIN, RAPPOR_EPS_MAX, "unary"),)


def _oue_sweeps() -> tuple[BudgetSweep, ...]:
    return (domain_sweep(OUE, "unary"),)


def _ue_sweeps() -> tuple[BudgetSweep, ...]:
    return (BudgetSweep("UnaryEncoding", _ue_at, EPS_MIN, EPS_MAX, "unary", scalar_budget=False),)


register_family(Family(
    "RAPPOR", "erlingsson2014rappor", RAPPOR, _rappor_examples, "basic (symmetric) unary encoding", reports="unary",
    codec=UNARY_CODEC, sweeps=_rappor_sweeps, at_budget=lambda d, t: RAPPOR(d, t), hi=30.0, aliases=("SUE",),
    audit="RAPPOR(d, eps)", order=20, inverse=uniform_loss_inverse))
register_family(Family(
    "OUE", "wang2017locally", OUE, _oue_examples, "optimised unary encoding", reports="unary", codec=UNARY_CODEC,
    sweeps=_oue_sweeps, at_budget=lambda d, t: OUE(d, t), hi=50.0, audit="OUE(d, eps)", order=30,
    inverse=uniform_loss_inverse))
register_family(Family(
    "UE", "wang2017locally", UnaryEncoding, _ue_examples, "unary encoding with per-item bits", reports="unary",
    codec=UNARY_CODEC, sweeps=_ue_sweeps,
    audit_skip="per-item unary encoding: its named members RAPPOR, OUE and IDUE are audited", order=35))
