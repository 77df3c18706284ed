"""A privacy promise as data: a *contract* one can calibrate any mechanism family to.

A :class:`Contract` is a :class:`~ldpkit.accountant.Guarantee` (a notion and its parameters)
for a domain of ``d`` items, with a name for tables and what calibration needs from it: whether a
mechanism satisfies it (:meth:`Contract.satisfied`, exactly, through the accountant), by how much
(:meth:`Contract.scale`: the smallest factor of the contract's budgets the mechanism satisfies,
at most 1 when it satisfies the contract), the per-item budgets a family with one budget per
item is built from (:meth:`Contract.budget_vector`) and, for the pairwise notions, the matrix of
pairwise budgets of context-aware LDP (:meth:`Contract.pairwise_matrix`).

Every registered notion (:func:`ldpkit.accountant.registered_notions`), a notion registered later
included, is stated by one generic constructor, :func:`promise`, which validates the parameters
the notion declares before anything is computed, and from text by :func:`parse`
(``"fldp:epsilon=1,alpha=0.5"``; the per-item data, such as budgets or a prior, come from the
caller).  The constructors :func:`ldp`, :func:`idldp` (a pair rule ``min``, ``average``, ``max``
or a callable), :func:`minidldp`, :func:`ipldp`, :func:`uldp`, :func:`fldp`, :func:`lip` and
:func:`context_aware` are :func:`promise` with the builtin notions' arguments spelled out.
Synthesis chapter, :ref:`sec-synthesis-contracts`.

Examples
--------
>>> from ldpkit import GRR, contracts
>>> c = contracts.minidldp([0.5, 1.0, 2.0, 2.0])
>>> c.name, c.satisfied(GRR(4, 0.5)), round(c.scale(GRR(4, 1.0)), 6)
('MinID-LDP', True, 2.0)
>>> contracts.uldp(4, 1.0, sensitive=[0, 1]).budget_vector().tolist()
[1.0, 1.0, inf, inf]
>>> contracts.parse("fldp:epsilon=1,alpha=0.5", d=4)
Contract(FLDP: Guarantee('fldp', epsilon=1.0, alpha=0.5), d=4)
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional, cast

import numpy as np
from numpy.typing import ArrayLike

from . import accountant
from ._validation import ArgumentTypeError, check_positive_int, describe
from .accountant import SHARED_PARAMETERS, CheckResult, Guarantee, Notion, get_notion, registered_notions
from .accountant.ipldp import sensitive_indices
from .mechanism import Mechanism

__all__ = [
    "Contract",
    "SPELLINGS",
    "context_aware",
    "fldp",
    "idldp",
    "ipldp",
    "ldp",
    "lip",
    "minidldp",
    "parse",
    "promise",
    "uldp",
]

#: other spellings :func:`parse` accepts for a parameter, when the notion declares the parameter
#: and not the spelling: ``eps`` for ``epsilon``, ``rule`` for the pair rule ``r`` of ID-LDP
SPELLINGS: Mapping[str, str] = {"eps": "epsilon", "rule": "r"}


@dataclass(frozen=True, eq=False)
class Contract:
    """A privacy promise for a domain of ``d`` items: a notion with its parameters.

    Build one with :func:`promise`, :func:`parse` or the module's constructors (:func:`ldp`,
    :func:`minidldp`, ...), which validate the parameters.

    Attributes
    ----------
    name
        Short name for tables: the notion's display name (``"LDP"``, ``"MinID-LDP"``, ``"ULDP"``,
        ...), with its own parameters that are words in parentheses (``"ID-LDP (average)"``).
    guarantee
        The promise as a :class:`~ldpkit.accountant.Guarantee`.
    d
        Domain size.
    """

    name: str
    guarantee: Guarantee
    d: int

    # ------------------------------------------------------------------ what the promise is
    @property
    def notion(self) -> Notion[CheckResult]:
        """The registered notion of the promise."""
        return get_notion(self.guarantee.notion)

    @property
    def params(self) -> dict[str, Any]:
        """The guarantee's parameters."""
        return dict(self.guarantee.params)

    @property
    def sensitive(self) -> Optional[np.ndarray]:
        """The sensitive items, for IPLDP those with a finite budget and for ULDP as given; ``None`` for the other notions."""
        p = self.guarantee.params
        if "sensitive" in p:
            return sensitive_indices(p["sensitive"], self.d)
        return None

    @property
    def prior(self) -> Optional[np.ndarray]:
        """The prior of a LIP promise, else ``None``."""
        p = self.guarantee.params.get("prior")
        return None if p is None else np.asarray(p, dtype=float)

    def budget_vector(self) -> np.ndarray:
        """One budget per item, the form a family with per-item budgets (IPRR, IDUE) is built from.

        Read from the promise's parameters, whatever its notion: per-item ``budgets`` as stated
        (``inf`` for a non-sensitive item of IPLDP); a ``matrix`` of pairwise budgets: the smallest
        budget of any pair the item is part of; one ``epsilon`` with ``sensitive`` items (ULDP):
        ``eps`` on the sensitive items and ``inf`` elsewhere; one ``epsilon`` otherwise (LDP,
        FLDP, LIP): ``eps`` for every item.
        """
        p = self.guarantee.params
        if "budgets" in p:
            b = np.asarray(p["budgets"], dtype=float)
            if b.size == self.d:
                return b.copy()
            out = np.full(self.d, np.inf)  # one budget per sensitive item (IPLDP's other form)
            out[self.sensitive] = b
            return out
        if "matrix" in p:
            m = np.asarray(p["matrix"], dtype=float).copy()
            np.fill_diagonal(m, np.inf)
            return cast("np.ndarray", np.minimum(m.min(axis=1), m.min(axis=0)))
        eps = float(p["epsilon"])
        if "sensitive" in p:
            out = np.full(self.d, np.inf)
            out[self.sensitive] = eps
            return out
        return np.full(self.d, eps)

    def pairwise_matrix(self) -> Optional[np.ndarray]:
        """The context-aware matrix of a pairwise promise (:attr:`~ldpkit.accountant.Notion.pairwise`: LDP, ID-LDP, MinID-LDP, context-aware), else ``None``.

        Synthesis chapter, :prf:ref:`prop-pairwise-special-cases`.
        """
        pairwise = self.notion.pairwise
        return None if pairwise is None else np.asarray(pairwise(self.d, self.guarantee.params), dtype=float)

    # ------------------------------------------------------------------ a mechanism against it
    def _same_domain(self, mech: Mechanism) -> None:
        """Refuse a mechanism or channel over another number of items than the promise's ``d``."""
        n = _inputs_of(mech)
        if n is not None and n != self.d:
            raise ValueError(f"the promise {self.name} is stated for d={self.d} items, the mechanism "
                             f"{describe(mech)} has {n}: compare a mechanism with a promise on its own domain")

    def check(self, mech: Mechanism) -> CheckResult:
        """The accountant's typed check of the promise against a mechanism or channel (over ``d`` items).

        Raises
        ------
        ValueError
            A mechanism or channel whose number of items (inputs) is not the promise's ``d``.
        """
        self._same_domain(mech)
        return self.guarantee.check(mech)

    def satisfied(self, mech: Mechanism) -> bool:
        """Whether the mechanism keeps the promise (exactly, up to the accountant's relative tolerance).

        A mechanism over another number of items than ``d`` is refused (``ValueError``), not
        compared: a promise on 4 items says nothing of a mechanism on 100.
        """
        return bool(self.check(mech).satisfied)

    def scale(self, mech: Mechanism) -> float:
        """Smallest ``s`` such that the mechanism keeps the promise with every budget multiplied by ``s``.

        At most 1 (up to rounding) exactly when the mechanism keeps the promise; ``inf`` when no
        multiple of the budgets is kept (an output that rules an input out, for one).  For a
        notion with one budget it is the tightest budget over the promised one; for the
        per-item and pairwise notions, the notion's own scale.  An ID-LDP promise with a
        callable pair rule has no scale (the rule need not be homogeneous): ``ValueError``.
        """
        self._same_domain(mech)
        notion = self.notion
        p = self.guarantee.params
        context = {k: v for k, v in p.items() if k in notion.tightest_needs + notion.optional}
        if notion.scale:
            if "r" in p and not isinstance(p["r"], str):
                raise ValueError("an ID-LDP promise with a callable pair rule has no scale; use satisfied()")
            return float(notion.tightest(mech, **context))
        return float(notion.tightest(mech, **context)) / float(p[notion.budget])

    def __repr__(self) -> str:
        return f"Contract({self.name}: {self.guarantee!r}, d={self.d})"


def _inputs_of(mech: Mechanism) -> Optional[int]:
    """The number of items of a mechanism (its ``d``), a channel (``n_inputs``) or a matrix (rows); else None."""
    for attr in ("d", "n_inputs"):
        value = getattr(mech, attr, None)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return int(value)
    if isinstance(mech, np.ndarray) and mech.ndim == 2:
        return int(mech.shape[0])
    return None


# ---------------------------------------------------------------------------- any notion
def promise(notion: str | Notion[Any], d: int, *, name: Optional[str] = None, **params: Any) -> Contract:
    """A promise of any registered notion on ``d`` items, its parameters validated from the notion's declaration.

    The parameters are those the notion declares (:attr:`~ldpkit.accountant.Notion.required`
    and :attr:`~ldpkit.accountant.Notion.optional`), checked and normalised by its
    :attr:`~ldpkit.accountant.Notion.validate` before anything is computed.

    Parameters
    ----------
    notion
        A registered notion's id (``"fldp"``) or the :class:`~ldpkit.accountant.Notion` itself.
    d
        Domain size, at least 2 (a promise on one item protects nothing).
    name
        The contract's name in tables (default: the notion's display name, followed in
        parentheses by its own parameters that are words other than their defaults, as
        ``"ID-LDP (average)"``).
    **params
        The guarantee's parameters.

    Raises
    ------
    ValueError
        An unknown notion or parameter, a missing parameter, or a bad value (named).

    Examples
    --------
    >>> from ldpkit import GRR, contracts
    >>> c = contracts.promise("fldp", 4, epsilon=1.0, alpha=0.5)
    >>> c.name, c.satisfied(GRR(4, 1.0))
    ('FLDP', True)
    >>> contracts.promise("id-ldp", 3, budgets=[1.0, 1.0, 2.0], r="average").name
    'ID-LDP (average)'
    >>> contracts.promise("fldp", 4, epsilon=1.0)
    Traceback (most recent call last):
    ...
    ValueError: fldp needs alpha
    """
    spec = notion if isinstance(notion, Notion) else get_notion(notion)
    d = check_positive_int(d, "d")
    if name is not None and not isinstance(name, str):
        raise ArgumentTypeError(f"name must be a string, got {describe(name)}")
    allowed = spec.required + spec.optional
    unknown = [p for p in params if p not in allowed]
    if unknown:
        raise ValueError(f"{spec.name} takes {', '.join(allowed)}; got {', '.join(unknown)}")
    values = spec.parameters(d, params)
    _two_items(spec, d)
    missing = [p for p in spec.required if p not in values]
    if missing:
        raise ValueError(f"{spec.name} needs {', '.join(missing)}")
    values = {p: values[p] for p in allowed if p in values}  # in the order the notion declares them
    return Contract(name or _title(spec, values), Guarantee(spec.name, **values), d)


def _two_items(notion: Notion[Any], d: int) -> None:
    """A promise on fewer than two items protects nothing (there is no other input to hide among)."""
    if d < 2:
        raise ValueError(f"a {notion.display} promise needs at least 2 items, got d={d}")


def _title(notion: Notion[Any], params: Mapping[str, Any]) -> str:
    """The display name, with the notion's own word parameters that differ from the check's defaults."""
    try:
        defaults = {k: v.default for k, v in inspect.signature(notion.check_fn).parameters.items()}
    except (TypeError, ValueError):  # pragma: no cover - a callable without a signature
        defaults = {}
    words = [v for k, v in params.items() if k in notion.own and isinstance(v, str) and defaults.get(k) != v]
    return f"{notion.display} ({', '.join(words)})" if words else notion.display


def _find_notion(text: str) -> Notion[Any]:
    """The registered notion named ``text``: its id or display name, ignoring case, hyphens, underscores and spaces."""
    def key(s: str) -> str:
        return "".join(ch for ch in s.lower() if ch not in "-_ ")

    found = {n.name: n for n in registered_notions() if key(text) in (key(n.name), key(n.display))}
    if len(found) == 1:
        return next(iter(found.values()))
    if found:
        raise ValueError(f"{text!r} names several notions: {', '.join(found)}")
    known = ", ".join(n.name for n in registered_notions())
    raise ValueError(f"unknown notion {text!r}; known notions: {known}")


def parse(
    spec: str,
    d: Optional[int] = None,
    *,
    budgets: Optional[ArrayLike] = None,
    sensitive: Optional[ArrayLike] = None,
    prior: Optional[ArrayLike] = None,
    matrix: Optional[ArrayLike] = None,
    hints: Optional[Mapping[str, str]] = None,
) -> Contract:
    """A promise of any registered notion from text: ``NOTION[:PARAM=VALUE,...]``, the per-item data from the caller.

    The grammar: the notion's id or display name (``ldp``, ``minid-ldp``, ``MinID-LDP``; case,
    hyphens and underscores are ignored), then optionally ``:`` and comma-separated
    ``PARAM=VALUE`` pairs for the parameters that are single values: the budget ``epsilon``
    (also spelled ``eps``) and the notion's own parameters (FLDP's ``alpha``, ID-LDP's pair rule
    ``r``, also spelled ``rule``; :data:`SPELLINGS`).  A value is read as a number when it is
    one, else kept as a word.  The data of the promise, :data:`~ldpkit.accountant.SHARED_PARAMETERS`
    (per-item ``budgets``, ``sensitive`` items, a ``prior``, a ``matrix`` of pairwise budgets),
    are never written in the text: they come as keyword arguments, and only to a notion that
    states them.  Nothing here depends on a particular notion, so a notion registered later is
    parsed the same way.  Examples: ``ldp:epsilon=1``, ``fldp:epsilon=1,alpha=0.5``,
    ``minid-ldp`` (with ``budgets=``), ``lip:epsilon=1`` (with ``prior=``),
    ``id-ldp:rule=average`` (with ``budgets=``), ``uldp:eps=1`` (with ``sensitive=``),
    ``context-aware`` (with ``matrix=``).

    Parameters
    ----------
    spec
        The text.
    d
        Domain size; default: the length of the data given (``budgets``, ``prior``, ``matrix``).
    budgets, sensitive, prior, matrix
        The data of the promise, for the notions that state them.
    hints
        Where the caller reads each datum from, shown in the error naming a missing one (the
        command line passes ``{"budgets": "the CLI's --budgets FILE", ...}``); default: the
        keyword argument.

    Raises
    ------
    ValueError
        One line naming what is wrong: an unknown notion or parameter, a value that is not
        valid, a missing parameter or datum (with its hint), data the notion does not take.

    Examples
    --------
    >>> from ldpkit import GRR, contracts
    >>> contracts.parse("ldp:epsilon=1", d=4).satisfied(GRR(4, 1.0))
    True
    >>> contracts.parse("id-ldp:rule=average", budgets=[1.0, 2.0, 2.0])
    Contract(ID-LDP (average): Guarantee('id-ldp', budgets=[1.0, 2.0, 2.0], r='average'), d=3)
    >>> contracts.parse("minid-ldp", hints={"budgets": "the CLI's --budgets FILE"})
    Traceback (most recent call last):
    ...
    ValueError: minid-ldp needs budgets (the CLI's --budgets FILE)
    >>> contracts.parse("ldp:epsilon=1", budgets=[1.0, 2.0])
    Traceback (most recent call last):
    ...
    ValueError: ldp takes no budgets (it takes epsilon in its text)
    """
    if not isinstance(spec, str):
        raise ArgumentTypeError(f"a promise's text must be a string, got {describe(spec)}")
    if hints is not None and not isinstance(hints, Mapping):
        raise ArgumentTypeError(f"hints must map data names to where they come from, got {describe(hints)}")
    head, _, rest = spec.partition(":")
    if not head.strip():
        raise ValueError(f"{spec!r} names no notion; write NOTION[:PARAM=VALUE,...], as in ldp:epsilon=1")
    notion = _find_notion(head.strip())
    declared = notion.required + notion.optional
    in_text = tuple(p for p in declared if p not in SHARED_PARAMETERS)
    data_taken = tuple(p for p in declared if p in SHARED_PARAMETERS)

    def hint(p: str) -> str:
        return (hints or {}).get(p) or f"give {p}="

    def takes() -> str:
        parts = [", ".join(in_text) + " in its text"] if in_text else []
        parts += [", ".join(data_taken) + " from the caller"] if data_taken else []
        return " and ".join(parts) or "no parameter"

    params: dict[str, Any] = {}
    for part in (p.strip() for p in rest.split(",") if rest.strip()):
        key, eq, value = part.partition("=")
        key = key.strip().lower()
        if not eq or not key or not value.strip():
            raise ValueError(f"{notion.name}: {part!r} is not PARAM=VALUE")
        if key not in declared and SPELLINGS.get(key) in declared:
            key = SPELLINGS[key]
        if key in SHARED_PARAMETERS and key in declared:
            raise ValueError(f"{notion.name}: {key} is not written in the text; it comes from the caller ({hint(key)})")
        if key not in in_text:
            raise ValueError(f"{notion.name} takes {takes()}; got {key}")
        if key in params:
            raise ValueError(f"{notion.name}: {key} is given twice")
        params[key] = _value(value.strip())
    data = {"budgets": budgets, "sensitive": sensitive, "prior": prior, "matrix": matrix}
    for p, v in data.items():
        if v is None:
            continue
        if p not in declared:
            raise ValueError(f"{notion.name} takes no {p} (it takes {takes()})")
        params[p] = v
    if notion.budget in SHARED_PARAMETERS and notion.budget not in params:
        raise ValueError(f"{notion.name} needs {notion.budget} ({hint(notion.budget)})")
    if d is None:
        d = next((int(np.shape(v)[0]) for p, v in data.items() if v is not None and p != "sensitive"
                  and np.ndim(v) >= 1), None)
    missing_data = [p for p in notion.context if p in SHARED_PARAMETERS and p not in params]
    if d is None:
        if missing_data:
            raise ValueError(f"{notion.name} needs {_listed([f'{p} ({hint(p)})' for p in missing_data])}")
        raise ValueError(f"{notion.name}: the domain size d is needed (no data gives it)")
    d = check_positive_int(d, "d")
    values = notion.parameters(d, params)
    _two_items(notion, d)
    missing = [p for p in notion.required if p not in values]
    if missing:
        said = [f"{p} ({hint(p)})" if p in SHARED_PARAMETERS else f"{p}, as in {notion.name}:{p}=VALUE"
                for p in missing]
        raise ValueError(f"{notion.name} needs {_listed(said)}")
    return promise(notion, d, **values)


def _value(text: str) -> Any:
    """A value of the text: a number when it reads as one, else the word."""
    try:
        return float(text)
    except ValueError:
        return text


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# ---------------------------------------------------------------------------- the builtin notions
def ldp(d: int, epsilon: float) -> Contract:
    """eps-LDP on ``d`` items (Foundations chapter, :prf:ref:`def-ldp`).

    Examples
    --------
    >>> from ldpkit import contracts
    >>> contracts.ldp(3, 1.0)
    Contract(LDP: Guarantee('ldp', epsilon=1.0), d=3)
    """
    return promise("ldp", d, epsilon=epsilon)


def idldp(budgets: ArrayLike, r: accountant.PairRule = "average") -> Contract:
    """E-ID-LDP with pair rule ``r`` (ID-LDP chapter, :prf:ref:`def-idldp`); ``r="min"`` is :func:`minidldp`."""
    name, _ = accountant.resolve_pair_rule(r)
    if name == "min":
        return minidldp(budgets)
    return promise("id-ldp", int(np.size(budgets)), name=f"ID-LDP ({name})", budgets=budgets, r=r)


def minidldp(budgets: ArrayLike) -> Contract:
    """E-MinID-LDP (ID-LDP chapter, :prf:ref:`def-minidldp`)."""
    return promise("minid-ldp", int(np.size(budgets)), budgets=budgets)


def ipldp(budgets: ArrayLike) -> Contract:
    r"""(:math:`\mathcal{D}_S, \mathcal{E}`)-IPLDP: ``budgets`` finite on the sensitive items, ``inf`` on the others (IPLDP chapter, :prf:ref:`def-ipldp`)."""
    return promise("ipldp", int(np.size(budgets)), budgets=budgets)


def uldp(d: int, epsilon: float, sensitive: ArrayLike) -> Contract:
    r"""(:math:`\mathcal{X}_S, \varepsilon`)-ULDP for the sensitive items ``sensitive`` (IPLDP chapter, :prf:ref:`def-uldp`)."""
    return promise("uldp", d, epsilon=epsilon, sensitive=sensitive)


def fldp(d: int, epsilon: float, alpha: float) -> Contract:
    """(eps, alpha)-FLDP as reconstructed (FLDP chapter, :prf:ref:`def-fldp`)."""
    return promise("fldp", d, epsilon=epsilon, alpha=alpha)


def lip(epsilon: float, prior: ArrayLike) -> Contract:
    """eps-LIP under a prior over the ``d = len(prior)`` items (LIP chapter, :prf:ref:`def-lip`)."""
    return promise("lip", int(np.size(prior)), epsilon=epsilon, prior=prior)


def context_aware(matrix: ArrayLike) -> Contract:
    """Context-aware LDP with one budget per ordered pair (Synthesis chapter, :prf:ref:`def-context-aware`)."""
    arr = np.asarray(matrix, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"matrix must be a d x d matrix of pairwise budgets, got {arr.ndim} dimension(s)")
    return promise("context-aware", int(arr.shape[0]), matrix=arr)
