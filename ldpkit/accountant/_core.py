"""The accountant's machinery: tolerance, dispatch on channel kinds, results, guarantees.

Every privacy notion is a module of this package (:mod:`~ldpkit.accountant.ldp`,
:mod:`~ldpkit.accountant.idldp`, ...).  A notion module

* implements its computation for explicit channels (exact, by enumeration of the outputs);
* registers closed forms for structured channel kinds with :func:`~ldpkit.accountant.register_closed_form`
  (the unary encodings' kind here; later families register their own kinds from their own
  modules);
* registers itself with :func:`~ldpkit.accountant.register_notion`, so that a
  :class:`~ldpkit.accountant.Guarantee` naming it can be verified by :func:`~ldpkit.accountant.verify`.

:func:`~ldpkit.accountant.dispatch` picks the computation for a channel: the closed form registered for the
channel's class (or the nearest base class), else exact enumeration of
:meth:`~ldpkit.channels.Channel.to_explicit` when the channel is small enough
(``n_inputs * n_outputs <= MAX_ENUM_CELLS``), else an :class:`AccountingError` naming the
channel kind and its size.  No ``isinstance`` chain: a new channel kind is accounted for as
soon as it implements the :class:`~ldpkit.channels.Channel` interface.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar, Union

import numpy as np

from .._validation import ArgumentTypeError, describe
from ..channels import Channel, ExplicitChannel

__all__ = [
    "REL_TOL",
    "MAX_ENUM_CELLS",
    "AccountingError",
    "ChannelLike",
    "CheckResult",
    "DeclaresGuarantees",
    "Guarantee",
    "Notion",
    "SupportsChannel",
    "Verification",
    "as_channel",
    "closed_form_for",
    "describe",
    "dispatch",
    "enumerate_channel",
    "get_notion",
    "notions",
    "register_closed_form",
    "register_notion",
    "verify",
    "within",
]

#: relative tolerance of every ``check_*`` function (see :mod:`ldpkit.accountant`)
REL_TOL = 1e-9

#: largest ``n_inputs * n_outputs`` that the accountant enumerates when no closed form exists
MAX_ENUM_CELLS = 1 << 20


class AccountingError(ValueError):
    """No closed form applies and the channel is too large to enumerate exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit import accountant
    >>> from ldpkit.channels import UnaryChannel
    >>> big = UnaryChannel(np.full(30, 1.0), np.full(30, 0.3))   # a deterministic bit, 2**30 outputs
    >>> try:
    ...     accountant.check_uldp(big, 1.0, sensitive=[0])
    ... except accountant.AccountingError as err:
    ...     print(err)  # doctest: +ELLIPSIS
    ULDP: no closed form applies to channel kind 'unary' (UnaryChannel), and exact enumeration ...
    """


class SupportsChannel(Protocol):
    """Anything with a ``channel()`` method returning a :class:`~ldpkit.channels.Channel` (every mechanism).

    Examples
    --------
    >>> from ldpkit import GRR
    >>> from ldpkit.accountant import as_channel
    >>> as_channel(GRR(3, 1.0)).n_outputs     # a mechanism stands for its channel
    3
    """

    def channel(self) -> Channel: ...


#: what every accountant function accepts: a channel, or a mechanism exposing ``channel()``
ChannelLike = Union[Channel, SupportsChannel]


class DeclaresGuarantees(SupportsChannel, Protocol):
    """A mechanism that states its guarantees: ``channel()`` and ``guarantees()``, as :func:`verify` needs.

    Examples
    --------
    >>> from ldpkit import OUE, accountant
    >>> mech = OUE(4, 1.0)                    # has channel() and guarantees()
    >>> mech.guarantees()
    [Guarantee('ldp', epsilon=1.0)]
    >>> accountant.verify(mech).satisfied
    True
    """

    def guarantees(self) -> Sequence[Guarantee]: ...


def tolerance(allowed: np.ndarray | float) -> np.ndarray:
    """Absolute slack granted to a comparison against ``allowed`` (``inf`` stays ``inf``)."""
    return REL_TOL * np.maximum(1.0, np.abs(allowed))


def within(value: np.ndarray | float, allowed: np.ndarray | float) -> np.ndarray:
    """``value <= allowed`` up to the relative tolerance :data:`REL_TOL`."""
    return np.asarray(value) <= np.asarray(allowed) + tolerance(allowed)


def as_channel(obj: ChannelLike) -> Channel:
    """Return the channel of ``obj``: a :class:`~ldpkit.channels.Channel` itself, or ``obj.channel()``.

    Raises
    ------
    ValueError
        If ``obj`` is neither a channel nor an object whose ``channel()`` returns one.
    """
    if isinstance(obj, Channel):
        return obj
    method = getattr(obj, "channel", None)
    if callable(method):
        ch = method()
        if isinstance(ch, Channel):
            return ch
        raise ArgumentTypeError(f"{type(obj).__name__}.channel() returned {type(ch).__name__}, not a Channel")
    raise ArgumentTypeError(f"expected a Channel or a mechanism with .channel(), got {describe(obj)}")


def require_pairs(ch: Channel) -> int:
    """Number of inputs; a pairwise notion needs at least two."""
    d = ch.n_inputs
    if d < 2:
        raise ValueError(f"a pairwise privacy check needs at least 2 inputs, the channel has {d}")
    return d


# ---------------------------------------------------------------------------- closed forms
_F = TypeVar("_F", bound=Callable[..., Any])
_CLOSED_FORMS: dict[str, dict[type, Callable[..., Any]]] = {}


def register_closed_form(notion: str, kind: type) -> Callable[[_F], _F]:
    """Decorator: ``func(channel, ...)`` computes ``notion`` for channels of class ``kind``.

    The function receives the channel and the notion's arguments; it may return
    ``NotImplemented`` when its closed form does not cover this particular channel (for
    example a unary channel with deterministic bits), and the accountant then falls back to
    enumeration.  Registering for :class:`~ldpkit.channels.ExplicitChannel` defines the
    enumeration itself.

    Examples
    --------
    >>> from ldpkit.accountant import register_closed_form
    >>> from ldpkit.channels import ExplicitChannel
    >>> class Scaled(ExplicitChannel):
    ...     kind = "scaled"
    >>> @register_closed_form("my-notion", Scaled)
    ... def _value(ch):
    ...     return 42.0
    """
    if not isinstance(notion, str) or not notion:
        raise ValueError(f"notion must be a non-empty string, got {describe(notion)}")
    if not isinstance(kind, type) or not issubclass(kind, Channel):
        raise ValueError(f"kind must be a Channel subclass, got {describe(kind)}")

    def decorator(func: _F) -> _F:
        if not callable(func):
            raise ValueError(f"closed form for {notion!r} must be callable, got {describe(func)}")
        _CLOSED_FORMS.setdefault(notion, {})[kind] = func
        return func

    return decorator


def closed_form_for(notion: str, kind: type) -> Callable[..., Any] | None:
    """The computation registered for ``notion`` on ``kind`` or its nearest base class."""
    table = _CLOSED_FORMS.get(notion, {})
    for cls in kind.__mro__:
        if cls in table:
            return table[cls]
    return None


def _size_text(ch: Channel) -> str:
    n_out = ch.n_outputs
    out = f"2**{n_out.bit_length() - 1}" if n_out > 1 << 16 and n_out & (n_out - 1) == 0 else f"{n_out:,}"
    return f"{ch.n_inputs:,} inputs and {out} outputs"


def enumerate_channel(ch: Channel, what: str) -> ExplicitChannel:
    """``ch.to_explicit()`` when ``n_inputs * n_outputs <= MAX_ENUM_CELLS``, else :class:`AccountingError`."""
    if isinstance(ch, ExplicitChannel):
        return ch
    cells = int(ch.n_inputs) * int(ch.n_outputs)
    if cells > MAX_ENUM_CELLS:
        raise AccountingError(
            f"{what}: no closed form applies to channel kind {ch.kind!r} "
            f"({type(ch).__name__}), and exact enumeration of its {_size_text(ch)} exceeds "
            f"MAX_ENUM_CELLS={MAX_ENUM_CELLS:,} cells"
        )
    try:
        ex = ch.to_explicit()
    except ValueError as err:
        raise AccountingError(
            f"{what}: channel kind {ch.kind!r} with {_size_text(ch)} cannot be enumerated: {err}"
        ) from err
    if not isinstance(ex, ExplicitChannel):
        raise AccountingError(f"{type(ch).__name__}.to_explicit() returned {type(ex).__name__}, not an ExplicitChannel")
    if ex.n_inputs != ch.n_inputs:
        raise AccountingError(
            f"{type(ch).__name__}.to_explicit() has {ex.n_inputs} inputs, the channel declares {ch.n_inputs}"
        )
    return ex


def dispatch(notion: str, ch: Channel, *args: Any, what: str | None = None, **kwargs: Any) -> Any:
    """Compute ``notion`` on ``ch``: its kind's closed form, else exact enumeration.

    Raises
    ------
    AccountingError
        When no closed form applies and the channel is too large to enumerate.
    """
    label = what or notion
    func = closed_form_for(notion, type(ch))
    if func is not None:
        out = func(ch, *args, **kwargs)
        if out is not NotImplemented:
            return out
    explicit = enumerate_channel(ch, label)
    base = closed_form_for(notion, ExplicitChannel)
    if base is None:  # pragma: no cover - every notion module registers its explicit form
        raise AccountingError(f"{label}: no computation is registered for explicit channels")
    return base(explicit, *args, **kwargs)


# ---------------------------------------------------------------------------- results
@dataclass(frozen=True, kw_only=True)
class CheckResult:
    """Base of every check result: whether the channel satisfies the notion, by how much.

    Attributes
    ----------
    satisfied
        Whether every constraint of the notion holds (up to :data:`REL_TOL`).
    slack
        The smallest margin ``allowed - actual`` over the notion's constraints, in the
        notion's own unit (log-ratio for the ratio notions, nats for MIP); negative means
        violated.
    worst_inputs
        The input(s) of the tightest constraint: ``(x, x')`` for the pairwise notions,
        ``(x,)`` for LIP, ``()`` when the notion has no single witness (MIP).
    worst_output
        The output attaining it, when known (``None`` for closed forms that do not
        enumerate outputs).

    Examples
    --------
    >>> from ldpkit import GRR, accountant
    >>> res = accountant.check_ldp(GRR(3, 1.0), 1.5)
    >>> isinstance(res, accountant.CheckResult), res.satisfied, round(res.slack, 6)
    (True, True, 0.5)
    >>> res.summary()["worst inputs"]
    (0, 1)
    """

    notion: ClassVar[str] = ""

    satisfied: bool
    slack: float
    worst_inputs: tuple[int, ...] = ()
    worst_output: int | None = None

    def summary(self) -> dict[str, Any]:
        """One row for a table: notion, satisfied, slack and the witness."""
        return {
            "notion": self.notion,
            "satisfied": bool(self.satisfied),
            "slack": float(self.slack),
            "worst inputs": self.worst_inputs,
            "worst output": self.worst_output,
        }


# ---------------------------------------------------------------------------- notions
@dataclass(frozen=True)
class Notion:
    """A privacy notion the accountant can check: its name, check function and parameters.

    ``check(channel, **parameters)`` returns a :class:`CheckResult`.  ``required`` and
    ``optional`` name the keyword parameters a :class:`Guarantee` of this notion may carry.

    Examples
    --------
    >>> from ldpkit.accountant import get_notion
    >>> uldp = get_notion("uldp")
    >>> uldp.required, uldp.optional
    (('epsilon', 'sensitive'), ('protected',))
    """

    name: str
    check: Callable[..., CheckResult]
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    description: str = ""


_NOTIONS: dict[str, Notion] = {}


def register_notion(notion: Notion) -> Notion:
    """Make ``notion`` available to :class:`Guarantee` and :func:`verify` (returns it)."""
    if not isinstance(notion, Notion):
        raise ValueError(f"expected a Notion, got {describe(notion)}")
    _NOTIONS[notion.name] = notion
    return notion


def notions() -> tuple[str, ...]:
    """Names of every registered notion, sorted."""
    return tuple(sorted(_NOTIONS))


def get_notion(name: str) -> Notion:
    """The registered :class:`Notion` called ``name`` (ValueError listing the known ones)."""
    if not isinstance(name, str):
        known = ", ".join(notions())
        raise ArgumentTypeError(f"privacy notion must be a string, got {describe(name)}; known notions: {known}")
    if name not in _NOTIONS:
        raise ValueError(f"unknown privacy notion {describe(name)}; known notions: {', '.join(notions())}")
    return _NOTIONS[name]


class Guarantee:
    """A privacy guarantee stated as data: a notion and its parameters.

    Mechanisms return these from ``guarantees()``; :func:`verify` checks each one against the
    mechanism's channel.  Parameters are validated against the notion's signature when the
    record is made (the values themselves are validated by the check).

    Examples
    --------
    >>> from ldpkit.accountant import Guarantee
    >>> Guarantee("ldp", epsilon=1.0)
    Guarantee('ldp', epsilon=1.0)
    >>> Guarantee("minid-ldp", budgets=[1.0, 2.0], r="min").params["r"]
    'min'
    """

    __slots__ = ("notion", "params")

    notion: str
    params: Mapping[str, Any]

    def __init__(self, notion: str, **params: Any) -> None:
        spec = get_notion(notion)
        missing = [p for p in spec.required if p not in params]
        if missing:
            raise ValueError(f"Guarantee({notion!r}) needs parameter(s) {', '.join(missing)}")
        unknown = [p for p in params if p not in spec.required + spec.optional]
        if unknown:
            allowed = ", ".join(spec.required + spec.optional)
            raise ValueError(f"Guarantee({notion!r}) got unknown parameter(s) {', '.join(unknown)}; allowed: {allowed}")
        object.__setattr__(self, "notion", notion)
        object.__setattr__(self, "params", dict(params))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Guarantee is immutable")

    def __repr__(self) -> str:
        parts = [repr(self.notion)] + [f"{k}={_short(v)}" for k, v in self.params.items()]
        return f"Guarantee({', '.join(parts)})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Guarantee):
            return NotImplemented
        if self.notion != other.notion or set(self.params) != set(other.params):
            return False
        return all(_same(self.params[k], other.params[k]) for k in self.params)

    __hash__ = None  # type: ignore[assignment]

    def check(self, obj: ChannelLike) -> CheckResult:
        """Check this guarantee against a channel or a mechanism's channel."""
        return get_notion(self.notion).check(as_channel(obj), **self.params)


def _short(value: Any) -> str:
    if isinstance(value, np.ndarray):
        if value.size <= 6:
            return repr(value.tolist())
        return f"<array of {value.size}>"
    return describe(value)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (np.ndarray, list, tuple)) or isinstance(b, (np.ndarray, list, tuple)):
        try:
            return bool(np.array_equal(np.asarray(a), np.asarray(b)))
        except (TypeError, ValueError):  # pragma: no cover - ragged input
            return False
    return bool(a == b)


@dataclass(frozen=True)
class Verification:
    """Result of :func:`verify`: every declared guarantee with its check result.

    Examples
    --------
    >>> from ldpkit import URR, accountant
    >>> report = accountant.verify(URR(4, 1.0, sensitive=[0, 1]))
    >>> len(report), report.satisfied
    (1, True)
    >>> [row["guarantee"] for row in report.rows()]
    ["Guarantee('uldp', epsilon=1.0, sensitive=[0, 1])"]
    """

    mechanism: str
    results: tuple[tuple[Guarantee, CheckResult], ...] = field(default=())

    @property
    def satisfied(self) -> bool:
        """Whether every declared guarantee holds."""
        return all(r.satisfied for _, r in self.results)

    def __iter__(self) -> Iterator[tuple[Guarantee, CheckResult]]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def rows(self) -> list[dict[str, Any]]:
        """One row per guarantee (for the synthesis tables)."""
        return [{"mechanism": self.mechanism, "guarantee": repr(g), **r.summary()} for g, r in self.results]


def verify(mech: DeclaresGuarantees, *, raise_on_failure: bool = False) -> Verification:
    """Check every guarantee a mechanism declares against its channel.

    Parameters
    ----------
    mech
        An object with ``guarantees()`` (a sequence of :class:`Guarantee`) and ``channel()``.
    raise_on_failure
        Raise ``ValueError`` naming the first violated guarantee instead of returning.

    Examples
    --------
    >>> import ldpkit
    >>> report = ldpkit.accountant.verify(ldpkit.GRR(4, 1.0))
    >>> report.satisfied, [g.notion for g, _ in report]
    (True, ['ldp'])
    """
    if not isinstance(raise_on_failure, bool):
        raise ArgumentTypeError(f"raise_on_failure must be a bool, got {describe(raise_on_failure)}")
    method = getattr(mech, "guarantees", None)
    if not callable(method):
        raise ArgumentTypeError(f"{describe(mech)} declares no guarantees (it has no guarantees() method)")
    declared = list(method())
    for g in declared:
        if not isinstance(g, Guarantee):
            raise ValueError(f"{type(mech).__name__}.guarantees() returned {describe(g)}, not a Guarantee")
    if not declared:
        raise ValueError(f"{type(mech).__name__}.guarantees() is empty: nothing to verify")
    ch = as_channel(mech)
    results = tuple((g, g.check(ch)) for g in declared)
    out = Verification(mechanism=repr(mech), results=results)
    if raise_on_failure and not out.satisfied:
        g, r = next((g, r) for g, r in results if not r.satisfied)
        raise ValueError(f"{out.mechanism} violates its declared {g!r}: slack {r.slack!r} at {r.worst_inputs}")
    return out


def finite_or_inf(value: float) -> float:
    """``value`` as a float, mapping NaN (never expected) to ``inf`` so that checks fail loudly."""
    v = float(value)
    return math.inf if math.isnan(v) else v
