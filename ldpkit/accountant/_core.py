"""The accountant's machinery: tolerance, closed-form tables, notions, results, guarantees.

Privacy is computed here and nowhere else: channels (:mod:`ldpkit.channels`) hold the law of
a mechanism, and every privacy quantity of a channel goes through one :class:`~ldpkit.accountant.ClosedForms`
table per notion.  A notion module of this package (:mod:`~ldpkit.accountant.ldp`,
:mod:`~ldpkit.accountant.idldp`, ...)

* registers the exact enumeration for :class:`~ldpkit.channels.ExplicitChannel` in its table;
* registers closed forms for the structured channel kinds of :mod:`ldpkit.channels` (unary
  encodings, the Hadamard channels) in the same table; a channel kind defined elsewhere adds
  its own with :func:`~ldpkit.accountant.register_closed_form`;
* builds one :class:`~ldpkit.accountant.Notion` (its id and display name, its budget and context parameters, its
  tightest value, its check returning a typed :class:`~ldpkit.accountant.CheckResult`, how its promises are
  validated and how it is stated at one budget) and registers it with
  :func:`~ldpkit.accountant.register_notion`, so that :class:`~ldpkit.accountant.Guarantee`,
  :func:`~ldpkit.accountant.verify`, :func:`~ldpkit.accountant.privacy_profile`, the promises of
  :mod:`ldpkit.contracts` and the map of notions (:mod:`ldpkit.notion_map`) know it.

The package (``ldpkit/accountant/__init__.py``) imports every public module of the package, so a
new notion module is registered, and its public names re-exported, with no other edit.

:meth:`~ldpkit.accountant.ClosedForms.compute` picks the computation for a channel: the closed form registered
for the channel's class (or the nearest base class), else exact enumeration of
:meth:`~ldpkit.channels.Channel.to_explicit` when the channel is small enough
(``n_inputs * n_outputs <= MAX_ENUM_CELLS``), else an :class:`~ldpkit.accountant.AccountingError` naming the
channel kind and its size.  No ``isinstance`` chain: a new channel kind is accounted for as
soon as it implements the :class:`~ldpkit.channels.Channel` interface.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, NamedTuple, Optional, Protocol, TypeVar, Union, cast

import numpy as np

from .._registry import Registry
from .._validation import ArgumentTypeError, check_budget_vector, check_distribution, check_positive_real, describe
from ..channels import Channel, ExplicitChannel

__all__ = [
    "REL_TOL",
    "MAX_ENUM_CELLS",
    "AccountingError",
    "BUDGET_KINDS",
    "ChannelLike",
    "CheckResult",
    "ClosedForms",
    "DeclaresGuarantees",
    "Guarantee",
    "Notion",
    "QUANTITIES",
    "SHARED_PARAMETERS",
    "SupportsChannel",
    "Verification",
    "as_channel",
    "closed_forms",
    "enumerate_channel",
    "get_notion",
    "notions",
    "register_closed_form",
    "register_notion",
    "registered_notions",
    "standard_parameters",
    "unregister_notion",
    "verify",
    "Witness",
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
    return cast("np.ndarray", np.asarray(value) <= np.asarray(allowed) + tolerance(allowed))


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
_V = TypeVar("_V")
_F = TypeVar("_F", bound=Callable[..., Any])


class Witness(NamedTuple):
    """A computed privacy loss with the inputs and output attaining it (what the ratio closed forms return).

    ``inputs`` is ``(x, x')`` for the pairwise notions and ``(x,)`` for LIP; ``output`` is the
    worst output when the computation enumerated outputs, else ``None``.  A plain tuple
    ``(value, inputs, output)`` returned by a closed form registered from outside is read the
    same way.

    Examples
    --------
    >>> from ldpkit.accountant import Witness
    >>> Witness(1.0, (0, 1), None).value
    1.0
    """

    value: float
    inputs: tuple[int, ...]
    output: Optional[int]


class ClosedForms(Generic[_V]):
    """The computations of one quantity, per channel kind, that :meth:`compute` dispatches between.

    The entry registered for :class:`~ldpkit.channels.ExplicitChannel` is the exact
    enumeration; an entry for a structured kind is a closed form, which may return
    ``NotImplemented`` when it does not cover a particular channel (the accountant then
    enumerates).  Every notion owns one table, named after it; :func:`register_closed_form`
    adds to it from any module, so a new channel kind brings its closed forms with it.

    Examples
    --------
    >>> from ldpkit.accountant import closed_forms
    >>> from ldpkit.channels import ExplicitChannel, UnaryChannel
    >>> table = closed_forms("ldp")
    >>> ExplicitChannel in table.kinds() and UnaryChannel in table.kinds()
    True
    """

    def __init__(self, name: str, what: str | None = None) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a closed-form table needs a non-empty name, got {describe(name)}")
        self.name = name
        self.what = what or name
        self._table: dict[type, Callable[..., Any]] = {}

    def __repr__(self) -> str:
        kinds = ", ".join(k.__name__ for k in self._table)
        return f"ClosedForms({self.name!r}: {kinds})"

    def register(self, kind: type) -> Callable[[_F], _F]:
        """Decorator: the decorated ``func(channel, *args)`` computes this quantity for channels of class ``kind``."""
        if not isinstance(kind, type) or not issubclass(kind, Channel):
            raise ValueError(f"kind must be a Channel subclass, got {describe(kind)}")

        def decorator(func: _F) -> _F:
            if not callable(func):
                raise ValueError(f"closed form for {self.name!r} must be callable, got {describe(func)}")
            self._table[kind] = func
            return func

        return decorator

    def kinds(self) -> tuple[type, ...]:
        """The channel classes with a registered computation (the explicit enumeration among them)."""
        return tuple(self._table)

    def lookup(self, kind: type) -> Callable[..., Any] | None:
        """The computation registered for ``kind`` or its nearest base class, else ``None``."""
        for cls in kind.__mro__:
            if cls in self._table:
                return self._table[cls]
        return None

    def closed_form(self, ch: Channel, *args: Any, **kwargs: Any) -> Any:
        """The closed form's value for ``ch``, or ``NotImplemented`` when none applies (no enumeration)."""
        func = self.lookup(type(ch))
        if func is None or isinstance(ch, ExplicitChannel):
            return NotImplemented
        return func(ch, *args, **kwargs)

    def enumerate(self, ch: Channel, *args: Any, **kwargs: Any) -> _V:
        """The value by exact enumeration of ``ch`` (guarded by :data:`MAX_ENUM_CELLS`)."""
        explicit = enumerate_channel(ch, self.what)
        base = self._table.get(ExplicitChannel)
        if base is None:  # pragma: no cover - every table registers its explicit form
            raise AccountingError(f"{self.what}: no computation is registered for explicit channels")
        out: _V = base(explicit, *args, **kwargs)
        return out

    def compute(self, ch: Channel, *args: Any, **kwargs: Any) -> _V:
        """The closed form registered for the channel's kind, else exact enumeration.

        Raises
        ------
        AccountingError
            When no closed form applies and the channel is too large to enumerate.
        """
        out = self.closed_form(ch, *args, **kwargs)
        if out is not NotImplemented:
            return cast(_V, out)
        return self.enumerate(ch, *args, **kwargs)


_CLOSED_FORMS: dict[str, ClosedForms[Any]] = {}


def closed_forms(name: str, what: str | None = None) -> ClosedForms[Any]:
    """The closed-form table called ``name`` (created empty on first use)."""
    if name not in _CLOSED_FORMS:
        _CLOSED_FORMS[name] = ClosedForms(name, what)
    elif what is not None:
        _CLOSED_FORMS[name].what = what
    return _CLOSED_FORMS[name]


def register_closed_form(notion: str, kind: type) -> Callable[[_F], _F]:
    """Decorator: ``func(channel, ...)`` computes ``notion`` for channels of class ``kind``.

    The function receives the channel and the notion's arguments; it may return
    ``NotImplemented`` when its closed form does not cover this particular channel (for
    example a unary channel with deterministic bits), and the accountant then falls back to
    enumeration.  Registering for :class:`~ldpkit.channels.ExplicitChannel` defines the
    enumeration itself.  Every registered closed form is compared with enumeration on every
    registry mechanism it applies to by one test (``tests/test_accountant.py``).

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
    return closed_forms(notion).register(kind)


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
_R = TypeVar("_R", bound=CheckResult, covariant=True)


#: what carries a notion's budget: one number, one per item, or one per ordered pair of items
BUDGET_KINDS = ("epsilon", "budgets", "matrix")

#: what a notion's tightest value is (:attr:`Notion.quantity`): a budget, a factor of the stated
#: budgets, or an amount of information (MIP's mutual information, in nats)
QUANTITIES = ("epsilon", "scale", "information")

#: the parameters that are facts about the data and the promise rather than about one notion: every
#: notion that states one of them receives the same value (:func:`privacy_profile`,
#: :func:`ldpkit.contracts.parse`); any other parameter is the notion's own
SHARED_PARAMETERS = ("budgets", "sensitive", "prior", "matrix")

_ID = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


def standard_parameters(d: int, params: Mapping[str, Any], *, allow_inf: bool = False) -> dict[str, Any]:
    """The parameters of a guarantee on ``d`` items, the shared ones and ``epsilon`` validated by name.

    ``epsilon`` must be a finite positive number; ``budgets`` a vector of ``d`` positive budgets
    (``inf`` allowed with ``allow_inf``); ``sensitive`` distinct items of ``0..d-1`` (a mask or
    indices, at least one), returned sorted; ``prior`` a distribution over the ``d`` items;
    ``matrix`` a ``d x d`` matrix of pairwise budgets.  Every other parameter is returned as given
    (a notion's own parameters are validated by its :attr:`Notion.validate`, or by its check).
    This is what :meth:`Notion.parameters` does for a notion without its own ``validate``.

    Examples
    --------
    >>> from ldpkit.accountant import standard_parameters
    >>> standard_parameters(3, {"epsilon": 1, "sensitive": [2, 0]})
    {'epsilon': 1.0, 'sensitive': array([0, 2])}
    >>> standard_parameters(3, {"budgets": [1.0, 2.0]})
    Traceback (most recent call last):
    ...
    ValueError: budgets has length 2, expected the domain size 3
    """
    from .context_aware import check_budget_matrix
    from .ipldp import sensitive_indices

    out = dict(params)
    if "epsilon" in out:
        out["epsilon"] = check_positive_real(out["epsilon"], "epsilon")
    if "budgets" in out:
        out["budgets"] = check_budget_vector(out["budgets"], d, allow_inf=allow_inf)
    if "sensitive" in out:
        out["sensitive"] = np.sort(sensitive_indices(out["sensitive"], d))
    if "prior" in out:
        out["prior"] = check_distribution(out["prior"], d, "prior")
    if "matrix" in out:
        arr = np.asarray(out["matrix"], dtype=float)
        if arr.ndim != 2:
            raise ValueError(f"matrix must be a d x d matrix of pairwise budgets, got {arr.ndim} dimension(s)")
        out["matrix"] = check_budget_matrix(arr, d)
    return out


@dataclass(frozen=True)
class Notion(Generic[_R]):
    """A privacy notion: its parameters, its tightest value and its check, computed in one place.

    Every notion module of :mod:`ldpkit.accountant` makes one and registers it
    (:func:`register_notion`); the package imports every one of its modules, so a new module is
    found with no other edit.  The accountant's functions, :class:`Guarantee`, :func:`verify`,
    :func:`privacy_profile`, the promises of :mod:`ldpkit.contracts` (:func:`ldpkit.contracts.parse`
    included) and the map of notions (:mod:`ldpkit.notion_map`) all go through it.

    Attributes
    ----------
    name
        The notion's one id (``"ldp"``, ``"minid-ldp"``, ...): lower-case words joined by hyphens.
        Guarantees, promises and parameters passed per notion are keyed by it.
    budget
        The parameter that carries the budget: ``"epsilon"`` (a number), ``"budgets"`` (one
        per item) or ``"matrix"`` (one per ordered pair of items, the context-aware notion).
    context
        The other parameters a guarantee must state (``("sensitive",)``, ``("prior",)``, ...).
        Those of :data:`SHARED_PARAMETERS` are facts about the data; the others are the notion's
        own (:attr:`own`).
    optional
        Parameters a guarantee may state (with defaults); :meth:`tightest` takes them too.
    display
        The notion's name in tables and in the book (``"MinID-LDP"``); default: :attr:`name`.
    order
        Its place in every table of notions (the privacy profile's columns, the map of notions),
        ties broken by :attr:`name`; never the order of registration or import.
    quantity
        What :meth:`tightest` returns, one of :data:`QUANTITIES`: ``"scale"`` for per-item or
        per-pair budgets (the smallest factor ``s`` such that the channel satisfies the budgets
        scaled by ``s``, so it satisfies them exactly when ``s <= 1``); otherwise ``"epsilon"``
        (the smallest budget the channel satisfies; the default) or ``"information"``.
    profile
        Whether :func:`privacy_profile` reports it (its column is :attr:`profile_key`).
    label
        The book's label of the definition.
    description
        One line saying what the notion is and where it comes from.
    forms
        Name of the :class:`ClosedForms` table it is computed through (default: its name).
    applies
        Which channels the notion is defined for (default: every channel with two inputs).
    validate
        ``validate(d, params) -> params``: checks and normalises a guarantee's parameters on
        ``d`` items before anything is computed, raising ``ValueError`` naming the parameter
        (default: :func:`standard_parameters`).  :meth:`parameters` calls it.
    at_budget
        ``at_budget(d, epsilon, **facts) -> params or None``: the notion's guarantee at one scalar
        budget ``epsilon`` on ``d`` items, as the map of notions states it; ``facts`` are the
        setting's ``sensitive`` items, ``prior`` and ``alpha`` (the shared-output fraction of
        the setting).  ``None`` (the default) states the budget at ``epsilon`` (every item's
        budget, every pair's budget) and takes shared parameters from ``facts``; a notion
        with own parameters that the map should show states them here.
    pairwise
        ``pairwise(d, params) -> matrix``: the context-aware matrix of pairwise budgets equal to
        a guarantee of this notion, for the notions that are context-aware LDP with a particular
        matrix (LDP, ID-LDP, MinID-LDP); ``None`` otherwise.
    fits_by_mixing
        Whether the tightest value never grows when the channel is mixed with the uniform channel
        (:func:`ldpkit.channels.mix_with_uniform`), so that the map of notions can fit random
        channels to the notion's boundary by mixing.

    Examples
    --------
    >>> from ldpkit import GRR
    >>> from ldpkit.accountant import Guarantee, get_notion
    >>> uldp = get_notion("uldp")
    >>> uldp.required, uldp.optional, uldp.own
    (('epsilon', 'sensitive'), ('protected',), ('protected',))
    >>> round(uldp.tightest(GRR(3, 1.0), sensitive=[0]), 6)
    1.0
    >>> uldp.check(GRR(3, 1.0), Guarantee("uldp", epsilon=0.5, sensitive=[0])).satisfied
    False
    >>> minid = get_notion("minid-ldp")
    >>> minid.display, minid.quantity, minid.profile_key
    ('MinID-LDP', 'scale', 'minid_scale')
    """

    name: str
    check_fn: Callable[..., _R] = field(repr=False)
    tightest_fn: Callable[..., float] = field(repr=False)
    budget: str = "epsilon"
    context: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    display: str = ""
    order: int = 1000
    quantity: str = ""
    profile: bool = True
    label: str = ""
    description: str = ""
    forms: str = ""
    applies: Optional[Callable[[Channel], bool]] = field(default=None, repr=False)
    validate: Optional[Callable[[int, dict[str, Any]], dict[str, Any]]] = field(default=None, repr=False)
    at_budget: Optional[Callable[..., Optional[dict[str, Any]]]] = field(default=None, repr=False)
    pairwise: Optional[Callable[[int, Mapping[str, Any]], np.ndarray]] = field(default=None, repr=False)
    fits_by_mixing: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _ID.fullmatch(self.name):
            raise ValueError(f"a notion's name is its id, lower-case words joined by hyphens ('minid-ldp'), "
                             f"got {describe(self.name)}")
        if self.budget not in BUDGET_KINDS:
            raise ValueError(f"budget of {self.name!r} must be one of {BUDGET_KINDS}, got {describe(self.budget)}")
        if not callable(self.check_fn) or not callable(self.tightest_fn):
            raise ValueError(f"notion {self.name!r} needs callable check_fn and tightest_fn")
        for attr in ("context", "optional"):
            value = getattr(self, attr)
            if not isinstance(value, tuple) or not all(isinstance(p, str) and p.isidentifier() for p in value):
                raise ValueError(f"{attr} of {self.name!r} must be a tuple of parameter names, got {describe(value)}")
        names = self.required + self.optional
        if len(set(names)) != len(names):
            raise ValueError(f"notion {self.name!r} names a parameter twice: {names}")
        if not isinstance(self.order, int) or isinstance(self.order, bool):
            raise ValueError(f"order of {self.name!r} must be an integer, got {describe(self.order)}")
        if not isinstance(self.display, str):
            raise ValueError(f"display of {self.name!r} must be a string, got {describe(self.display)}")
        object.__setattr__(self, "display", self.display or self.name)
        quantity = self.quantity or ("scale" if self.scale else "epsilon")
        if quantity not in QUANTITIES or (quantity == "scale") != self.scale:
            raise ValueError(f"notion {self.name!r}: quantity must be 'scale' for per-item or per-pair budgets and "
                             f"'epsilon' or 'information' otherwise, got {describe(self.quantity)}")
        object.__setattr__(self, "quantity", quantity)
        for attr in ("applies", "validate", "at_budget", "pairwise"):
            if getattr(self, attr) is not None and not callable(getattr(self, attr)):
                raise ValueError(f"{attr} of {self.name!r} must be callable or None, got {describe(getattr(self, attr))}")

    @property
    def scale(self) -> bool:
        """Whether :meth:`tightest` is a scale of the budgets (per-item or per-pair budgets; see :attr:`quantity`)."""
        return self.budget != "epsilon"

    @property
    def required(self) -> tuple[str, ...]:
        """The parameters a guarantee of this notion must state (the budget, then the context)."""
        return (self.budget, *self.context)

    @property
    def own(self) -> tuple[str, ...]:
        """The notion's own parameters (not the budget, not one of :data:`SHARED_PARAMETERS`): FLDP's ``alpha``, ..."""
        return tuple(p for p in self.context + self.optional if p not in SHARED_PARAMETERS)

    @property
    def tightest_needs(self) -> tuple[str, ...]:
        """The parameters :meth:`tightest` needs (the context, and the budget direction of a scale notion)."""
        return self.required if self.scale else self.context

    @property
    def profile_key(self) -> str:
        """The notion's key in :class:`~ldpkit.accountant.PrivacyProfile`, derived from its id by one rule.

        The id without a trailing ``-ldp``, hyphens as underscores, then ``_`` and the
        :attr:`quantity`: ``ldp_epsilon``, ``minid_scale``, ``context_aware_scale``,
        ``mip_information``.
        """
        stem = self.name[: -len("-ldp")] if self.name.endswith("-ldp") else self.name
        return f"{stem.replace('-', '_')}_{self.quantity}"

    @property
    def closed_forms(self) -> ClosedForms[Any]:
        """The table of computations per channel kind this notion is computed through."""
        return closed_forms(self.forms or self.name)

    def applies_to(self, ch: ChannelLike) -> bool:
        """Whether the notion is defined for this channel (IPLDP, for one, needs a square channel)."""
        return True if self.applies is None else bool(self.applies(as_channel(ch)))

    def tightest(self, ch: ChannelLike, **context: Any) -> float:
        """The smallest parameter the channel satisfies (``inf`` when none): a budget, or a scale (see :attr:`quantity`)."""
        missing = [p for p in self.tightest_needs if p not in context]
        if missing:
            raise ValueError(f"{self.name}: tightest() needs {', '.join(missing)}")
        unknown = [p for p in context if p not in self.tightest_needs + self.optional]
        if unknown:
            raise ValueError(f"{self.name}: tightest() takes {', '.join(self.tightest_needs + self.optional) or 'no parameter'}; "
                             f"got {', '.join(unknown)}")
        return float(self.tightest_fn(as_channel(ch), **context))

    def check(self, ch: ChannelLike, guarantee: "Guarantee") -> _R:
        """Check ``guarantee`` (a :class:`Guarantee` of this notion) against the channel: a typed result."""
        if not isinstance(guarantee, Guarantee):
            raise ArgumentTypeError(f"{self.name}: check() needs a Guarantee, got {describe(guarantee)}")
        if guarantee.notion != self.name:
            raise ValueError(f"{self.name}: cannot check a {guarantee.notion!r} guarantee")
        return self.check_fn(as_channel(ch), **guarantee.params)

    def guarantee(self, **params: Any) -> "Guarantee":
        """A :class:`Guarantee` of this notion with ``params`` (validated against :attr:`required`)."""
        return Guarantee(self.name, **params)

    def parameters(self, d: int, params: Mapping[str, Any]) -> dict[str, Any]:
        """``params`` of a guarantee on ``d`` items, checked and normalised (:attr:`validate`); names are not checked here."""
        fn = self.validate or standard_parameters
        return dict(fn(d, dict(params)))

    def stated_at(self, d: int, epsilon: float, **facts: Any) -> Optional["Guarantee"]:
        """The notion's guarantee at one scalar budget (:attr:`at_budget`), or ``None`` when the facts do not state it.

        Examples
        --------
        >>> from ldpkit.accountant import get_notion
        >>> get_notion("uldp").stated_at(4, 1.0, sensitive=[0, 1])
        Guarantee('uldp', epsilon=1.0, sensitive=[0, 1])
        >>> get_notion("lip").stated_at(4, 1.0) is None   # no prior among the facts
        True
        """
        if self.at_budget is not None:
            params = self.at_budget(d, epsilon, **facts)
        else:
            params = {self.budget: _uniform_budget(self.budget, d, epsilon)}
            for p in self.context:
                if p not in SHARED_PARAMETERS or facts.get(p) is None:
                    return None
                params[p] = facts[p]
        return None if params is None else Guarantee(self.name, **params)


def _uniform_budget(kind: str, d: int, epsilon: float) -> Any:
    """``epsilon`` as a budget of the given kind: the number, every item's budget, or every pair's budget."""
    if kind == "epsilon":
        return float(epsilon)
    if kind == "budgets":
        return np.full(d, float(epsilon))
    out = np.full((d, d), float(epsilon))
    np.fill_diagonal(out, 0.0)
    return out


_NOTIONS: Registry[Notion[CheckResult]] = Registry("privacy notion")


def register_notion(notion: Notion[_R], *, replace: bool = False) -> Notion[_R]:
    """Make ``notion`` known to the whole kit (returns it): the accountant, guarantees, profiles, promises and the map.

    A notion module calls it once, at import.  An id already registered is refused unless
    ``replace=True`` (which puts ``notion`` in its place).

    Examples
    --------
    >>> from ldpkit.accountant import LDP, register_notion
    >>> register_notion(LDP)
    Traceback (most recent call last):
    ...
    ValueError: privacy notion 'ldp' is already registered (pass replace=True to replace it)
    >>> register_notion(LDP, replace=True) is LDP
    True
    """
    if not isinstance(notion, Notion):
        raise ArgumentTypeError(f"expected a Notion, got {describe(notion)}")
    if not isinstance(replace, bool):
        raise ArgumentTypeError(f"replace must be a bool, got {describe(replace)}")
    if notion.name in _NOTIONS:
        if not replace:
            raise ValueError(f"privacy notion {notion.name!r} is already registered (pass replace=True to replace it)")
        _NOTIONS.remove(notion.name)
    _NOTIONS.add(notion.name, cast("Notion[CheckResult]", notion))
    return notion


def unregister_notion(name: str) -> None:
    """Remove the notion with id ``name`` (tests that register their own notion clean up with this)."""
    get_notion(name)
    _NOTIONS.remove(name)


def notions() -> tuple[str, ...]:
    """Ids of every registered notion, sorted."""
    return tuple(sorted(n.name for n in _NOTIONS.values()))


def registered_notions() -> tuple[Notion[CheckResult], ...]:
    """Every registered notion, in table order (:attr:`Notion.order`, then id)."""
    return tuple(sorted(_NOTIONS.values(), key=lambda n: (n.order, n.name)))


def get_notion(name: str) -> Notion[CheckResult]:
    """The registered :class:`Notion` with id ``name`` (ValueError naming the close matches)."""
    if not isinstance(name, str):
        known = ", ".join(notions())
        raise ArgumentTypeError(f"privacy notion must be a string, got {describe(name)}; known notions: {known}")
    return _NOTIONS.get(name)


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

    def key(self) -> tuple[object, ...]:
        """A hashable canonical form: the notion and every parameter (arrays as tuples of floats)."""
        return (self.notion, tuple(sorted((k, _canonical(v)) for k, v in self.params.items())))

    def __hash__(self) -> int:
        return hash(self.key())

    def check(self, obj: ChannelLike) -> CheckResult:
        """Check this guarantee against a channel or a mechanism's channel."""
        return get_notion(self.notion).check(obj, self)


def _short(value: Any) -> str:
    if isinstance(value, np.ndarray):
        if value.size <= 6:
            return repr(value.tolist())
        return f"<array of {value.size}>"
    return describe(value)


def _canonical(value: Any) -> object:
    if isinstance(value, (np.ndarray, list, tuple)):
        return tuple(np.asarray(value).ravel().tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value


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
    >>> print(report)  # doctest: +NORMALIZE_WHITESPACE
    URR(d=4, uldp_epsilon=1, d_s=2)
    guarantee                                          holds  slack  worst inputs
    Guarantee('uldp', epsilon=1.0, sensitive=[0, 1])  yes    0      (0, 1)
    """

    mechanism: str
    results: tuple[tuple[Guarantee, CheckResult], ...] = field(default=())

    @property
    def satisfied(self) -> bool:
        """Whether every declared guarantee holds."""
        return all(r.satisfied for _, r in self.results)

    def __bool__(self) -> bool:
        """Truthy exactly when every declared guarantee holds (``if verify(mech): ...``)."""
        return self.satisfied

    def __str__(self) -> str:
        """A plain-text table: one line per guarantee with its verdict, slack and witness."""
        head = ("guarantee", "holds", "slack", "worst inputs")
        body = [(repr(g), "yes" if r.satisfied else "NO", _slack_text(r.slack), str(r.worst_inputs)) for g, r in self.results]
        widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
        lines = [self.mechanism, "  ".join(h.ljust(w) for h, w in zip(head, widths))]
        lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in body]
        return "\n".join(line.rstrip() for line in lines)

    def __iter__(self) -> Iterator[tuple[Guarantee, CheckResult]]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def rows(self) -> list[dict[str, Any]]:
        """One row per guarantee (for the synthesis tables)."""
        return [{"mechanism": self.mechanism, "guarantee": repr(g), **r.summary()} for g, r in self.results]


def _slack_text(slack: float) -> str:
    """The slack to 4 significant digits, rounding-level values (below :data:`REL_TOL`) shown as 0."""
    return "0" if abs(slack) < REL_TOL else f"{slack:.4g}"


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
