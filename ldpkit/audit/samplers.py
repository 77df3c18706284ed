"""Samplers: what an audit draws outputs from (a kit mechanism, an explicit channel, any callable).

Auditing chapter, :ref:`sec-audit-samplers`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from functools import cached_property
from typing import Any, Optional, Protocol, Union, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

from .._rng import RNGLike, as_generator
from .._validation import (
    MAX_USERS,
    ArgumentTypeError,
    check_domain_limit,
    check_positive_int,
    describe,
    max_audit_samples,
    max_domain,
)
from ..accountant import enumerate_channel
from ..channels import Channel, ExplicitChannel
from ..mechanism import Mechanism

__all__ = [
    "ChannelSampler",
    "FunctionSampler",
    "MechanismSampler",
    "Sampler",
    "check_input",
    "check_sampler",
    "from_channel",
    "from_function",
    "from_mechanism",
    "sample_histograms",
]

#: outputs drawn per call of a sampler (bounds the memory of one call)
CHUNK = 1 << 20


def check_input(x: Any, n_inputs: int) -> int:
    """Input ``x`` of a sampler with ``n_inputs`` inputs as an ``int`` in ``0 .. n_inputs-1``, or refused.

    A negative index would silently sample the last rows (numpy's indexing from the end).
    """
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise ArgumentTypeError(f"input must be an integer index, got {describe(x)}")
    if not 0 <= int(x) < n_inputs:
        raise ValueError(f"input {describe(x)} is outside the sampler's inputs 0..{n_inputs - 1}")
    return int(x)


@runtime_checkable
class Sampler(Protocol):
    """What the audits sample: ``sampler(x, size, rng)`` returns ``size`` output indices (ints ``>= 0``) of input ``x``.

    ``n_inputs`` is the number of inputs ``0 .. n_inputs-1``; ``n_outputs`` the size of the output
    alphabet, or ``None`` when unknown (black-box implementations).  A sampler may also offer
    ``counts(x, size, rng)`` (the histogram of ``size`` outputs, for aggregate-level speed) and
    ``channel`` (its exact :class:`~ldpkit.channels.ExplicitChannel`, for white-box events).
    """

    n_inputs: int
    n_outputs: Optional[int]

    def __call__(self, x: int, size: int, rng: np.random.Generator) -> np.ndarray: ...


class MechanismSampler:
    """A kit mechanism's own sampling code, ``mech.sample_outputs`` (:func:`from_mechanism`)."""

    def __init__(self, mechanism: Mechanism) -> None:
        if not (callable(getattr(mechanism, "sample_outputs", None)) and callable(getattr(mechanism, "channel", None))):
            raise ArgumentTypeError(
                f"mechanism must have sample_outputs and channel methods, got {describe(mechanism)}")
        self.mechanism = mechanism
        ch: Channel = mechanism.channel()
        self.n_inputs: int = int(ch.n_inputs)
        self.n_outputs: Optional[int] = int(ch.n_outputs)

    def __call__(self, x: int, size: int, rng: np.random.Generator) -> np.ndarray:
        return np.asarray(self.mechanism.sample_outputs(check_input(x, self.n_inputs), size, rng))

    @cached_property
    def channel(self) -> ExplicitChannel:
        """The mechanism's exact channel, enumerated (for white-box events)."""
        return enumerate_channel(self.mechanism.channel(), f"audit of {self.mechanism!r}")

    def __repr__(self) -> str:
        return f"from_mechanism({self.mechanism!r})"


class ChannelSampler:
    """An explicit channel sampled row by row (:func:`from_channel`); histograms by one multinomial draw."""

    def __init__(self, channel: Union[Channel, ArrayLike]) -> None:
        ch = channel if isinstance(channel, Channel) else ExplicitChannel(np.asarray(channel, dtype=float))
        self.channel: ExplicitChannel = enumerate_channel(ch, "audit of a channel")
        self.n_inputs: int = self.channel.n_inputs
        self.n_outputs: Optional[int] = self.channel.n_outputs

    def __call__(self, x: int, size: int, rng: np.random.Generator) -> np.ndarray:
        return rng.choice(self.channel.n_outputs, size=size, p=self.channel.matrix[check_input(x, self.n_inputs)])

    def counts(self, x: int, size: int, rng: np.random.Generator) -> np.ndarray:
        """Histogram of ``size`` outputs of input ``x``: one multinomial draw, cost independent of ``size``.

        Drawn output by output (``_multinomial``), so that rows equal in exact arithmetic but
        rounded differently by two machines give the same histogram.
        """
        return _multinomial(rng, size, self.channel.matrix[check_input(x, self.n_inputs)])

    def __repr__(self) -> str:
        return f"from_channel({self.n_inputs} x {self.n_outputs})"


#: conditional probabilities this close to 1/2 are 1/2 (see ``_multinomial``)
HALF_TOL = 1e-12


def _multinomial(rng: np.random.Generator, n: int, weights: np.ndarray) -> np.ndarray:
    """``Mult(n, weights / sum(weights))`` by binomial splits down a binary tree, the same on every machine.

    The outputs are the leaves of a binary tree (padded with zero weights to a power of two);
    each node's draws are split between its two halves by ``Bin(draws, left / (left + right))``,
    the halves' weights summed pairwise, one vectorised binomial call per level.  numpy's own
    multinomial divides by a remainder it updates by subtraction and its binomial switches
    algorithm at probability 1/2: two equal weights (equal in exact arithmetic, their last bits
    from the machine's ``exp``) made a conditional probability 1/2 plus or minus an ulp, so the
    draw took one branch on one machine and the other on another, and every later draw differed.
    Here two bitwise equal halves give exactly 1/2, and a split within ``HALF_TOL`` of 1/2 is
    1/2, which moves the law by at most that much.

    Examples
    --------
    >>> import numpy as np
    >>> h = _multinomial(np.random.default_rng(0), 1000, np.array([0.5, 0.25, 0.25]))
    >>> h.shape, int(h.sum())
    ((3,), 1000)
    """
    w = np.asarray(weights, dtype=float)
    size = 1 << max(0, int(w.size - 1).bit_length())
    sums = [np.concatenate([w, np.zeros(size - w.size)])]
    while sums[-1].size > 1:
        sums.append(sums[-1][0::2] + sums[-1][1::2])
    counts = np.array([int(n)], dtype=np.int64)
    for level in range(len(sums) - 2, -1, -1):
        left, total = sums[level][0::2], sums[level + 1]
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.where(total > 0, np.minimum(left / np.where(total > 0, total, 1.0), 1.0), 0.0)
        p = np.where(np.abs(p - 0.5) <= HALF_TOL, 0.5, p)
        first = rng.binomial(counts, p)
        counts = np.stack([first, counts - first], axis=1).reshape(-1)
    return counts[: w.size]


def _default_encode(report: Any) -> Hashable:
    if isinstance(report, np.ndarray):
        return (report.dtype.str, report.shape, report.tobytes())
    if isinstance(report, (list, tuple)):
        return tuple(_default_encode(r) for r in report)
    if isinstance(report, np.generic):
        return report.item()
    if isinstance(report, Hashable):
        return report
    raise ArgumentTypeError(f"report {describe(report)} is not hashable: pass encode= to map it to a hashable key")


class FunctionSampler:
    """A black-box implementation called one user at a time (:func:`from_function`).

    Reports are mapped to hashable keys by ``encode``; each new key gets the next output index
    (``outputs`` fixes the indices of known keys first, e.g. ``range(d)`` when reports are items).
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        n_inputs: int,
        encode: Optional[Callable[[Any], Hashable]] = None,
        outputs: Optional[Iterable[Hashable]] = None,
        inputs: Optional[Sequence[Any]] = None,
        batch: bool = False,
    ) -> None:
        if not callable(fn):
            raise ArgumentTypeError(f"fn must be callable, got {describe(fn)}")
        self.fn = fn
        self.n_inputs = check_domain_limit(check_positive_int(n_inputs, "n_inputs"), "n_inputs")
        self.encode: Callable[[Any], Hashable] = encode if encode is not None else _default_encode
        if encode is not None and not callable(encode):
            raise ArgumentTypeError(f"encode must be callable, got {describe(encode)}")
        self.inputs: Sequence[Any] = range(self.n_inputs) if inputs is None else list(inputs)
        if len(self.inputs) != self.n_inputs:
            raise ValueError(f"inputs has {len(self.inputs)} entries, expected n_inputs={self.n_inputs}")
        self.batch = bool(batch)
        self._index: dict[Hashable, int] = {}
        for key in outputs if outputs is not None else ():
            self._index.setdefault(key, len(self._index))
        self.n_outputs: Optional[int] = None

    @property
    def keys(self) -> list[Hashable]:
        """The output keys seen so far, in index order."""
        return list(self._index)

    def __call__(self, x: int, size: int, rng: np.random.Generator) -> np.ndarray:
        value = self.inputs[check_input(x, self.n_inputs)]
        reports = self.fn(value, size, rng) if self.batch else [self.fn(value, rng) for _ in range(size)]
        out = np.empty(size, dtype=np.int64)
        n = 0
        for n, rep in enumerate(reports, start=1):
            if n > size:
                break
            key = self.encode(rep)
            out[n - 1] = self._index.setdefault(key, len(self._index))
        if n != size:
            raise ValueError(f"fn returned {n} reports for a batch of {size}")
        return out

    def __repr__(self) -> str:
        return f"from_function({getattr(self.fn, '__name__', repr(self.fn))}, n_inputs={self.n_inputs})"


def from_mechanism(mech: Mechanism) -> MechanismSampler:
    """The sampler of a kit mechanism: its own ``sample_outputs`` (aggregate-level fast, white-box capable).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit import OUE
    >>> from ldpkit.audit import from_mechanism
    >>> s = from_mechanism(OUE(3, 1.0))
    >>> s.n_inputs, s.n_outputs, s(0, 5, np.random.default_rng(0)).shape
    (3, 8, (5,))
    """
    return MechanismSampler(mech)


def from_channel(channel: Union[Channel, ArrayLike]) -> ChannelSampler:
    """A sampler drawing from an explicit channel (a matrix or a :class:`~ldpkit.channels.Channel`), by multinomial.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit.audit import from_channel
    >>> int(from_channel([[0.75, 0.25], [0.25, 0.75]]).counts(0, 1000, np.random.default_rng(0)).sum())
    1000
    """
    return ChannelSampler(channel)


def from_function(
    fn: Callable[..., Any],
    n_inputs: int,
    encode: Optional[Callable[[Any], Hashable]] = None,
    *,
    outputs: Optional[Iterable[Hashable]] = None,
    inputs: Optional[Sequence[Any]] = None,
    batch: bool = False,
) -> FunctionSampler:
    """Adapt a black-box implementation: ``fn(input, rng)`` returns one user's report.

    Parameters
    ----------
    fn
        ``fn(inputs[x], rng) -> report`` (or, with ``batch=True``, ``fn(inputs[x], size, rng)``
        returning ``size`` reports).  A function that ignores ``rng`` (a library drawing from its
        own generator) is audited all the same; only reproducibility is lost.
    n_inputs
        Number of inputs audited (at most the domain limit, ``LDPKIT_MAX_DOMAIN``).
    encode
        Report to hashable key (default: the report itself; arrays, lists and tuples by value).
    outputs
        Known output keys, indexed first in this order (``range(d)`` for item reports, which
        :func:`audit_ipldp` needs).
    inputs
        The value passed to ``fn`` for input index ``x`` (default ``x`` itself).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit.audit import from_function
    >>> def coin(x, rng):            # randomised response on one bit, keep with probability 3/4
    ...     return x if rng.random() < 0.75 else 1 - x
    >>> s = from_function(coin, 2, outputs=[0, 1])
    >>> int(s(1, 1000, np.random.default_rng(0)).sum()) > 600
    True
    """
    return FunctionSampler(fn, n_inputs, encode, outputs, inputs, batch)


def check_sampler(sampler: Any) -> Sampler:
    """``sampler`` itself when it is a :class:`Sampler` with a positive ``n_inputs``; a clear error otherwise."""
    if not isinstance(sampler, Sampler):
        raise ArgumentTypeError(
            f"sampler must be a Sampler (a callable with n_inputs and n_outputs; see from_mechanism, from_channel, "
            f"from_function), got {describe(sampler)}"
        )
    check_positive_int(sampler.n_inputs, "sampler.n_inputs")
    return sampler


def _histogram(sampler: Sampler, x: int, size: int, gen: np.random.Generator) -> np.ndarray:
    """The histogram of ``size`` outputs of input ``x``; an output index is checked before it is counted."""
    counts = getattr(sampler, "counts", None)
    if callable(counts):
        h = np.asarray(counts(x, size, gen))
        if h.ndim != 1 or not np.issubdtype(h.dtype, np.integer) or np.any(h < 0) or int(h.sum()) != size:
            raise ValueError(f"{sampler!r}.counts returned no histogram of {size} outputs")
        return h.astype(np.int64)
    total = np.zeros(0, dtype=np.int64)
    left = size
    while left:
        m = min(left, CHUNK)
        y = np.asarray(sampler(x, m, gen))
        if y.shape != (m,) or not np.issubdtype(y.dtype, np.integer):
            raise ArgumentTypeError(
                f"{sampler!r} must return {m} integer output indices, got {y.dtype} of shape {y.shape}")
        if m and int(y.min()) < 0:
            raise ValueError(f"{sampler!r} returned a negative output index {int(y.min())}")
        top = int(y.max()) if m else -1
        if sampler.n_outputs is not None and top >= sampler.n_outputs:
            raise ValueError(f"{sampler!r} returned the output index {top}, not below its "
                             f"n_outputs={sampler.n_outputs}")
        if sampler.n_outputs is None and top >= max_domain():
            raise ValueError(f"{sampler!r} returned the output index {top}: a sampler without n_outputs may use "
                             f"indices below {max_domain():,} (LDPKIT_MAX_DOMAIN)")
        h = np.bincount(y, minlength=total.size)
        h[: total.size] += total
        total, left = h, left - m
    return total


def sample_histograms(sampler: Sampler, inputs: Iterable[int], size: int, rng: RNGLike = None) -> np.ndarray:
    """Output histograms of ``size`` samples for each of ``inputs`` (rows), padded to one alphabet.

    Every input must be one of the sampler's (``0 .. n_inputs-1``).  A sampler with an exact
    histogram (``counts``) costs the same for any ``size``; one without draws ``size`` outputs
    per input, at most ``LDPKIT_MAX_AUDIT_SAMPLES`` (
    default ``10**8``), checked before any draw.

    Examples
    --------
    >>> from ldpkit import GRR
    >>> from ldpkit.audit import from_mechanism, sample_histograms
    >>> sample_histograms(from_mechanism(GRR(3, 1.0)), [0, 2], 100, rng=0).sum(axis=1).tolist()
    [100, 100]
    """
    sampler = check_sampler(sampler)
    size = check_positive_int(size, "size", maximum=MAX_USERS)
    xs = [check_input(x, sampler.n_inputs) for x in inputs]
    limit = max_audit_samples()
    if not callable(getattr(sampler, "counts", None)) and size > limit:
        raise ValueError(f"size={size:,} samples per input from {sampler!r}, which draws them one by one, is above the "
                         f"limit of {limit:,} (LDPKIT_MAX_AUDIT_SAMPLES; raise it for a longer audit)")
    gen = as_generator(rng)
    rows = [_histogram(sampler, x, size, gen) for x in xs]
    width = max([r.size for r in rows] + [sampler.n_outputs or 0])
    if sampler.n_outputs is not None and width > sampler.n_outputs:
        raise ValueError(f"{sampler!r} returned an output index >= its n_outputs={sampler.n_outputs}")
    out = np.zeros((len(rows), width), dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : r.size] = r
    return out


