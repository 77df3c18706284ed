"""Fast exact samplers shared by the mechanisms."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["bernoulli_matrix", "chunk_rows", "packed_column_counts"]

#: target number of matrix cells generated per chunk (bounds memory at ~16 MB per array)
CHUNK_CELLS = 1 << 24


def chunk_rows(n_rows: int, n_cols: int, cells: int = CHUNK_CELLS) -> int:
    """Rows per chunk so that a chunk has about ``cells`` entries."""
    return max(1, min(n_rows, cells // max(1, n_cols)))


def bernoulli_matrix(rng: np.random.Generator, n_rows: int, probs: np.ndarray) -> np.ndarray:
    """Boolean matrix of shape ``(n_rows, len(probs))``; column ``j`` is i.i.d. Bernoulli(probs[j]).

    Exact to double precision while drawing one random byte per cell: with
    ``T = floor(256 p)`` and ``f = 256 p - T``, a uniform byte ``U`` gives 1 when ``U < T``,
    0 when ``U > T`` and, on the tie ``U == T`` (probability 1/256), 1 with probability
    ``f`` from a uniform double.  Hence ``P(1) = T/256 + f/256 = p``.
    """
    probs = np.asarray(probs, dtype=float)
    d = probs.size
    scaled = probs * 256.0
    thresh = np.floor(scaled)
    frac = scaled - thresh
    # p == 1 gives T = 256, which no byte reaches: the comparison below is then always true.
    thresh_i = thresh.astype(np.int16)
    u = np.frombuffer(rng.bytes(n_rows * d), dtype=np.uint8).reshape(n_rows, d)
    out = u < thresh_i
    ties = np.flatnonzero(u == thresh_i)  # flat indices: much faster than a 2-d nonzero
    if ties.size:
        out.reshape(-1)[ties] = rng.random(ties.size) < frac[ties % d]
    return out


#: most distinct 8-column probability groups for which :func:`packed_bernoulli` builds tables
MAX_TABLES = 64
_BIT_WEIGHTS = (1 << np.arange(7, -1, -1)).astype(np.uint8)  # np.packbits order: first column = MSB
_PATTERN_BITS = ((np.arange(256)[:, None] & _BIT_WEIGHTS[None, :]) > 0)  # (256, 8)


def _pattern_table(p8: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inverse-CDF table of the 256 byte patterns for 8 independent bits with probabilities ``p8``.

    Returns ``(cdf, pattern_of_cell, ambiguous_cell)`` for the 65,536 cells
    ``[r/65536, (r+1)/65536)``: a cell maps to one pattern unless a CDF breakpoint falls inside
    it, in which case the caller refines with a uniform double (still an exact inverse CDF).
    """
    probs = np.prod(np.where(_PATTERN_BITS, p8[None, :], 1.0 - p8[None, :]), axis=1)
    cdf = np.minimum(np.cumsum(probs), 1.0)
    # the total is 1 in exact arithmetic: from the last pattern of positive probability on (the
    # zero-probability patterns of padding columns follow it), the CDF is exactly 1.  Left at its
    # rounded value, 1 - 1 ulp on one machine and 1 + 2 ulps on another, it made the last cell
    # ambiguous on the first only, which changed how many uniforms a sample draws: every later
    # draw differed between machines.
    cdf[np.flatnonzero(probs > 0)[-1]:] = 1.0
    lo = np.arange(65536) / 65536.0
    hi = (np.arange(65536) + 1) / 65536.0
    pat_lo = np.minimum(np.searchsorted(cdf, lo, side="right"), 255)
    pat_hi = np.minimum(np.searchsorted(cdf, np.nextafter(hi, 0), side="right"), 255)
    return cdf, pat_lo.astype(np.uint8), pat_lo != pat_hi


class PackedBernoulli:
    """Sampler of bit-packed Bernoulli matrices (``np.packbits`` layout) for fixed probabilities.

    Column ``j`` is i.i.d. Bernoulli(``probs[j]``).  Each output byte (8 columns) is drawn at
    once by inverse CDF over its 256 patterns from one 16-bit random integer ``r``; when a CDF
    breakpoint falls inside the cell of ``r`` (probability at most 255/65536) a uniform double
    ``v`` refines the draw to ``(r + v) / 65536``, which is exactly uniform, so the sampling is
    exact.  This draws 2 random bytes per 8 cells instead of 8 and needs no packing step.
    Tables are built once, for at most :data:`MAX_TABLES` distinct 8-column groups;
    :meth:`supported` says whether the probabilities qualify.
    """

    def __init__(self, probs: np.ndarray) -> None:
        probs = np.asarray(probs, dtype=float)
        self.d = probs.size
        self.n_bytes = (probs.size + 7) // 8
        padded = np.zeros(self.n_bytes * 8)
        padded[: probs.size] = probs
        uniq, inverse = np.unique(padded.reshape(self.n_bytes, 8), axis=0, return_inverse=True)
        self.n_groups = int(uniq.shape[0])
        self._inverse = inverse.reshape(-1)
        self._tables: list[Any] | None = None
        if self.n_groups <= MAX_TABLES:
            tables = [_pattern_table(g) for g in uniq]
            self._cdfs = [t[0] for t in tables]
            self._pattern = np.concatenate([t[1] for t in tables])
            self._ambiguous = np.concatenate([t[2] for t in tables])
            self._offset = (self._inverse * 65536).astype(np.int64)
            self._tables = tables

    @property
    def supported(self) -> bool:
        return self._tables is not None

    def sample(self, rng: np.random.Generator, n_rows: int) -> np.ndarray:
        if self._tables is None:
            raise ValueError(f"too many distinct probability groups ({self.n_groups} > {MAX_TABLES})")
        r = rng.integers(0, 65536, size=(n_rows, self.n_bytes), dtype=np.uint16)
        idx: np.ndarray
        if self.n_groups == 1:
            idx = r
        else:
            idx = r + self._offset[None, :]
        out = np.take(self._pattern, idx)
        amb = np.flatnonzero(np.take(self._ambiguous, idx))
        if amb.size:
            cols = amb % self.n_bytes
            u = (r.reshape(-1)[amb] + rng.random(amb.size)) / 65536.0
            refined = np.empty(amb.size, dtype=np.uint8)
            groups = self._inverse[cols]
            for k, cdf in enumerate(self._cdfs):
                sel = groups == k
                if np.any(sel):
                    refined[sel] = np.minimum(np.searchsorted(cdf, u[sel], side="right"), 255)
            out.reshape(-1)[amb] = refined
        return out


#: the 8 bits of every byte value, most significant first (``np.packbits`` order), as int64
_BYTE_BITS = ((np.arange(256)[:, None] >> np.arange(7, -1, -1)[None, :]) & 1).astype(np.int64)


def packed_column_counts(bits: np.ndarray, d: int) -> np.ndarray:
    """How many rows of a ``np.packbits`` matrix have each of the first ``d`` bits set (int64, length ``d``).

    Each byte column's 256 values are histogrammed (in chunks of rows) and the 8 bit counts read
    off the table of byte patterns: far cheaper than unpacking every bit.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit._sampling import packed_column_counts
    >>> packed_column_counts(np.packbits([[1, 0, 1], [1, 1, 0]], axis=1), 3).tolist()
    [2, 1, 1]
    """
    n, n_bytes = bits.shape
    hist = np.zeros(n_bytes * 256, dtype=np.int64)
    offsets = (np.arange(n_bytes, dtype=np.int64) * 256)[None, :]
    step = chunk_rows(n, n_bytes * 8)
    for start in range(0, n, step):
        block = bits[start : start + step]
        hist += np.bincount((block + offsets).reshape(-1), minlength=n_bytes * 256)
    bit_counts = hist.reshape(n_bytes, 256) @ _BYTE_BITS  # (n_bytes, 8)
    return bit_counts.reshape(-1)[:d]
