"""The map of notions: every ordered pair of privacy notions at matched parameters, decided and machine-checked.

Synthesis chapter, :ref:`sec-synthesis-map`.  Desfontaines and Pejo's SoK (bibtex
``desfontaines2020sok``) collects a partial order of privacy notions from the literature; here
each edge is a proof and each missing edge is a witness channel found by search and verified by
exact enumeration with the accountant (:mod:`ldpkit.accountant`).

**One budget** (:func:`notion_map`, the chapter's :prf:ref:`prop-pairwise-special-cases`,
:prf:ref:`prop-map-ldp-edges`, :prf:ref:`prop-map-ipldp-edges`).  Every registered notion
(:func:`ldpkit.accountant.registered_notions`) is instantiated at one scalar ``eps`` on one
:class:`Scenario` (domain size ``d``, sensitive set ``S``, a prior ``pi`` with full support, a
shared-output fraction ``alpha``) as the notion states itself at one budget
(:meth:`ldpkit.accountant.Notion.stated_at`), under its display name and in its table order.
The nine builtin notions give ``LDP(eps)``; ``CA-LDP`` with the constant matrix ``eps``
(context-aware LDP, :prf:ref:`def-context-aware`); ``MinID-LDP`` and ``ID-LDP`` (pair rule
``average``) with every budget ``eps``; ``IPLDP`` with budget ``eps`` on ``S`` and ``inf`` off
``S`` (defined on square channels only: on any other channel it does not hold, with tightest
value ``inf``); ``ULDP(eps, S)``; ``FLDP(alpha, eps)``; ``LIP(eps, pi)``; ``MIP(eps, pi)`` in
nats.  Every notion's value at a channel is its tightest parameter in the unit of ``eps`` (the
tightest scale times ``eps`` for the per-item and per-pair notions).

For every ordered pair ``(A, B)`` the map holds one :class:`Relation`: an implication (every
channel satisfying ``A`` satisfies ``B``), with the proof's label, or a non-implication with a
witness channel that satisfies ``A`` and violates ``B``, and ``B``'s tightest value there.  The
direct implications are :data:`PROVED`; their transitive closure is taken, and every implication
is then tested against a pool of candidate channels (:func:`candidate_pool`: the kit's
mechanisms over a grid of budgets, structured extremal channels, and random channels mixed with
the uniform channel until a notion just holds); a candidate that satisfies ``A`` and not ``B``
refutes it (:class:`ImplicationRefuted`).  Every other pair takes its witness from the same pool:
among the candidates that satisfy ``A`` and violate ``B``, the kit's mechanisms first (then
constructed, then random channels), one on which ``B`` is defined, the largest violation, the
budget closest to the scenario's, then by :attr:`Candidate.place` and name, never by position in
the pool (a family registered later, placed after the builtin ones, changes a witness only by
offering a better one).  A pair
with neither a proof nor a witness is reported undecided: the proofs are written for
the builtin notions, so a notion registered later has its pairs decided by witnesses only.
Where a weaker implication holds at another parameter (``LIP(eps)`` gives ``LDP(2 eps)``, LIP
chapter :prf:ref:`thm-lip-ldp`), the relation records it as ``parameter_map``, and it is tested
against the pool too.

**Per-item budgets** (:func:`budget_map`, :prf:ref:`prop-ca-order`).  For one non-uniform budget
vector ``E``, every registered notion that is context-aware LDP with a particular matrix
(:attr:`ldpkit.accountant.Notion.pairwise`): one budget at ``min E`` and at ``max E``, per-item
budgets at ``E``; for the builtin notions ``LDP(min E)``, ``MinID-LDP(E)``, ``ID-LDP(E)``
(average rule), ``LDP(max E)``, each the context-aware notion of its matrix
(:func:`ldpkit.accountant.pairwise_budgets`).
``CA(M)`` implies ``CA(M')`` exactly when the shortest-path closure of ``M`` (:func:`closure`) is
at most ``M'`` entrywise (:func:`ca_implies`); otherwise :func:`ca_extremal_channel` is a witness.

Examples
--------
>>> from ldpkit.notion_map import notion_map
>>> nmap = notion_map()
>>> nmap.relation("LIP", "MIP").holds, nmap.relation("LIP", "MIP").reason
(True, 'prop-lip-mip')
>>> rel = nmap.relation("LIP", "LDP")
>>> rel.holds, rel.parameter_map, round(rel.target_value / nmap.scenario.epsilon, 6)
(False, 'LIP(eps) => LDP(2 eps) (thm-lip-ldp)', 2.0)
>>> len(nmap.relations), sum(r.holds is None for r in nmap.relations)
(72, 0)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Optional

import numpy as np
from numpy.typing import ArrayLike

from . import accountant
from ._rng import RNGLike, as_generator
from ._validation import check_distribution, check_positive_real, check_probability
from .accountant import Guarantee, get_notion
from .channels import Channel, ExplicitChannel, mix_with_uniform

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "Candidate",
    "ImplicationRefuted",
    "Member",
    "NotionMap",
    "PARAMETER_MAPS",
    "PROVED",
    "PAIRWISE",
    "Relation",
    "Scenario",
    "budget_map",
    "budget_members",
    "ca_extremal_channel",
    "budget_matrices",
    "ca_implies",
    "candidate_pool",
    "closure",
    "fit_by_mixing",
    "ipldp_extremal_channel",
    "lip_extremal_channel",
    "notion_map",
    "proved_implications",
    "scenario_members",
    "split_invertible",
    "star_channel",
    "verify_witness",
]

#: the builtin pairwise notions, which coincide at a uniform budget (:prf:ref:`prop-pairwise-special-cases`)
PAIRWISE: tuple[str, ...] = ("LDP", "CA-LDP", "MinID-LDP", "ID-LDP")

#: the direct implications between the builtin notions of the one-budget map (by display name),
#: each with the label of its proof in the book
PROVED: Mapping[tuple[str, str], str] = {
    **{(a, b): "prop-pairwise-special-cases" for a in PAIRWISE for b in PAIRWISE if a != b},
    **{(a, b): "prop-map-ldp-edges" for a in PAIRWISE for b in ("ULDP", "FLDP")},
    **{(a, "LIP"): "thm-lip-ldp" for a in PAIRWISE},
    ("IPLDP", "ULDP"): "prop-map-ipldp-edges",
    ("IPLDP", "FLDP"): "prop-map-ipldp-edges",
    ("LIP", "MIP"): "prop-lip-mip",
}

#: implications at another parameter, as (source, target) -> (factor on eps, text)
PARAMETER_MAPS: Mapping[tuple[str, str], tuple[float, str]] = {
    ("LIP", b): (2.0, f"LIP(eps) => {b}(2 eps) (thm-lip-ldp)") for b in (*PAIRWISE, "ULDP", "FLDP")
}

#: the prior of the default scenario: the two sensitive items are the rarest
DEFAULT_PRIOR: tuple[float, ...] = (0.04, 0.06, 0.10, 0.12, 0.14, 0.16, 0.18, 0.20)
#: the per-item budgets of the default scenario (:func:`budget_map`)
DEFAULT_BUDGETS: tuple[float, ...] = (0.5, 0.5, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0)
#: multiples of the scenario's budget at which the kit's mechanisms enter the pool
BUDGET_GRID: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)
#: relative tolerance of the witness checks (the accountant's :data:`~ldpkit.accountant.REL_TOL`)
REL_TOL = accountant.REL_TOL


class ImplicationRefuted(AssertionError):
    """A channel of the pool satisfies the source of a claimed implication and violates its target."""


# --------------------------------------------------------------------------- the scenario
@dataclass(frozen=True)
class Scenario:
    """One stated setting at which every notion is instantiated.

    Attributes
    ----------
    d
        Domain size (inputs ``0..d-1``).
    epsilon
        The one budget of the map (nats).
    sensitive
        The sensitive items ``S`` (ULDP, IPLDP).
    prior
        A prior with full support (LIP, MIP).
    alpha
        The shared-output fraction of FLDP (``1/2``, the fraction of FHR).
    budgets
        A non-uniform per-item budget vector ``E`` (:func:`budget_map`).
    seed
        Seed of the random candidates of the pool.
    n_random
        Random channels per fitted notion in the pool.

    The default has ``d = 8`` with ``S = {0, 1}`` and the two sensitive items the rarest; with six
    non-sensitive items an IPLDP channel can leak more than ``eps`` nats
    (:func:`ipldp_extremal_channel`, the witness against MIP; the chapter's :ref:`sec-synthesis-map`).

    Examples
    --------
    >>> s = Scenario()
    >>> s.d, s.epsilon, s.sensitive, s.alpha
    (8, 1.0, (0, 1), 0.5)
    """

    d: int = 8
    epsilon: float = 1.0
    sensitive: tuple[int, ...] = (0, 1)
    prior: tuple[float, ...] = DEFAULT_PRIOR
    alpha: float = 0.5
    budgets: tuple[float, ...] = DEFAULT_BUDGETS
    seed: int = 20200712
    n_random: int = 12

    def __post_init__(self) -> None:
        if not isinstance(self.d, int) or self.d < 3:
            raise ValueError(f"d must be an integer >= 3, got {self.d!r}")
        check_positive_real(self.epsilon, "epsilon")
        sens = tuple(int(i) for i in self.sensitive)
        if not sens or len(set(sens)) != len(sens) or min(sens) < 0 or max(sens) >= self.d or len(sens) >= self.d:
            raise ValueError(f"sensitive must be distinct items of 0..{self.d - 1}, not all of them, got {self.sensitive!r}")
        object.__setattr__(self, "sensitive", sens)
        prior = check_distribution(self.prior, self.d)
        if np.any(prior <= 0):
            raise ValueError("the prior must have full support")
        object.__setattr__(self, "prior", tuple(float(p) for p in prior))
        a = check_probability(self.alpha, "alpha")
        if a <= 0:
            raise ValueError("alpha must lie in (0, 1]")
        budgets = tuple(float(b) for b in self.budgets)
        if len(budgets) != self.d or not all(math.isfinite(b) and b > 0 for b in budgets):
            raise ValueError(f"budgets must be {self.d} finite positive numbers, got {self.budgets!r}")
        object.__setattr__(self, "budgets", budgets)
        if not isinstance(self.n_random, int) or self.n_random < 0:
            raise ValueError(f"n_random must be a non-negative integer, got {self.n_random!r}")

    @property
    def ipldp_budgets(self) -> np.ndarray:
        """``eps`` on the sensitive items and ``inf`` off them (IPRR's convention)."""
        out = np.full(self.d, math.inf)
        out[list(self.sensitive)] = self.epsilon
        return out


@dataclass(frozen=True)
class Member:
    """A notion instantiated in a scenario: its name, its guarantee and the value at its boundary.

    ``value(ch)`` is the tightest parameter: the notion's own (``eps`` of LDP, nats of MIP) for a
    budget notion, the tightest scale times ``reference`` for a per-item or per-pair notion, so
    that ``holds(ch)`` is ``value(ch) <= reference`` (up to the accountant's tolerance).  A notion
    undefined on a channel (IPLDP on a channel that is not square) does not hold there and has
    value ``inf``.

    Examples
    --------
    >>> from ldpkit import GRR
    >>> m = {mm.name: mm for mm in scenario_members(Scenario())}
    >>> round(m["MinID-LDP"].value(GRR(8, 0.5).channel()), 6), m["IPLDP"].holds(GRR(8, 0.5).channel())
    (0.5, False)
    """

    name: str
    guarantee: Guarantee
    reference: float

    @property
    def scale(self) -> bool:
        """Whether the notion's tightest value is a scale of its budgets."""
        return get_notion(self.guarantee.notion).scale

    def applies(self, ch: Channel) -> bool:
        """Whether the notion is defined on ``ch``."""
        return get_notion(self.guarantee.notion).applies_to(ch)

    def value(self, ch: Channel) -> float:
        """The tightest parameter of ``ch`` under this notion, in the unit of ``reference``."""
        notion = get_notion(self.guarantee.notion)
        if not notion.applies_to(ch):
            return math.inf
        params = self.guarantee.params
        ctx = {k: v for k, v in params.items() if k in notion.tightest_needs + notion.optional}
        raw = float(notion.tightest(ch, **ctx))
        return raw * self.reference if notion.scale else raw

    def holds(self, ch: Channel) -> bool:
        """The accountant's check of the guarantee (``False`` where the notion is undefined)."""
        if not self.applies(ch):
            return False
        return bool(self.guarantee.check(ch).satisfied)


def _facts(scenario: Scenario) -> dict[str, Any]:
    """What the scenario states for every notion (:meth:`ldpkit.accountant.Notion.stated_at`)."""
    return {"sensitive": list(scenario.sensitive), "prior": np.array(scenario.prior), "alpha": scenario.alpha}


def scenario_members(scenario: Scenario) -> tuple[Member, ...]:
    """Every registered notion that states itself at the scenario's one budget, in table order (module docstring).

    Examples
    --------
    >>> [m.name for m in scenario_members(Scenario())]  # doctest: +NORMALIZE_WHITESPACE
    ['LDP', 'CA-LDP', 'MinID-LDP', 'ID-LDP', 'IPLDP', 'ULDP', 'FLDP', 'LIP', 'MIP']
    """
    s, e = scenario, scenario.epsilon
    facts = _facts(s)
    out = []
    for notion in accountant.registered_notions():
        guarantee = notion.stated_at(s.d, e, **facts)
        if guarantee is not None:
            out.append(Member(notion.display, guarantee, e))
    return tuple(out)


def _budget_notions(scenario: Scenario) -> list[tuple[str, Guarantee, float, np.ndarray]]:
    """``(name, guarantee, reference, matrix)`` of every member of the per-item map (:func:`budget_members`)."""
    E = np.array(scenario.budgets)
    d = scenario.d
    facts = _facts(scenario)
    low: list[tuple[str, Guarantee, float, np.ndarray]] = []
    items: list[tuple[str, Guarantee, float, np.ndarray]] = []
    high: list[tuple[str, Guarantee, float, np.ndarray]] = []
    for notion in accountant.registered_notions():
        if notion.pairwise is None or notion.budget == "matrix":
            continue
        if notion.budget == "epsilon":
            for bucket, tag, eps in ((low, "min E", float(E.min())), (high, "max E", float(E.max()))):
                g = notion.stated_at(d, eps, **facts)
                if g is not None:
                    bucket.append((f"{notion.display}({tag})", g, eps, notion.pairwise(d, g.params)))
            continue
        g = notion.stated_at(d, 1.0, **facts)  # the notion at budget 1 per item, scaled to E
        if g is not None:
            params = {**g.params, "budgets": np.asarray(g.params["budgets"], dtype=float) * E}
            items.append((f"{notion.display}(E)", Guarantee(notion.name, **params), 1.0, notion.pairwise(d, params)))
    return low + items + high


def budget_members(scenario: Scenario) -> tuple[Member, ...]:
    """The notions of the per-item map for the scenario's budget vector ``E`` (module docstring).

    The one-budget members have values in nats (bound ``min E``, ``max E``); the per-item
    members have values that are scales of ``E`` (bound 1).

    Examples
    --------
    >>> [(m.name, m.reference) for m in budget_members(Scenario())]  # doctest: +NORMALIZE_WHITESPACE
    [('LDP(min E)', 0.5), ('MinID-LDP(E)', 1.0), ('ID-LDP(E)', 1.0), ('LDP(max E)', 2.0)]
    """
    return tuple(Member(name, g, ref) for name, g, ref, _ in _budget_notions(scenario))


def budget_matrices(scenario: Scenario) -> dict[str, np.ndarray]:
    """The context-aware matrix of each notion of :func:`budget_members` (:prf:ref:`prop-pairwise-special-cases`)."""
    return {name: M for name, _, _, M in _budget_notions(scenario)}


# --------------------------------------------------------------------------- relations and the map
@dataclass(frozen=True, eq=False)
class Relation:
    """The verdict on one ordered pair: does every channel satisfying ``source`` satisfy ``target``?

    Attributes
    ----------
    source, target
        The notions' names.
    holds
        ``True``: an implication (``reason`` names the proof, or the chain it follows from);
        ``False``: a non-implication shown by ``witness``; ``None``: undecided (no proof and no
        witness in the pool).
    reason
        The proof's label, ``"chain: A => C => B"``, or the witness's name.
    witness
        A channel that satisfies ``source`` and violates ``target`` (explicit, so the accountant
        checks it by enumeration).
    witness_name
        Where the witness comes from (a mechanism with its budget, a constructed channel).
    source_value, target_value
        The two notions' tightest values at the witness (:meth:`Member.value`).
    parameter_map
        An implication at another parameter, when one holds (``"LIP(eps) => LDP(2 eps)"``).
    source_guarantee, target_guarantee, reference
        What :func:`verify_witness` rechecks: the two guarantees and the target's bound.
    """

    source: str
    target: str
    holds: Optional[bool]
    reason: str
    witness: Optional[ExplicitChannel] = None
    witness_name: Optional[str] = None
    source_value: Optional[float] = None
    target_value: Optional[float] = None
    parameter_map: Optional[str] = None
    source_member: Optional[Member] = field(default=None, repr=False)
    target_member: Optional[Member] = field(default=None, repr=False)

    @property
    def verdict(self) -> Literal["implies", "fails", "undecided"]:
        """``"implies"``, ``"fails"`` or ``"undecided"``."""
        return "undecided" if self.holds is None else "implies" if self.holds else "fails"

    @property
    def amount(self) -> str:
        """The violation at the witness in words (``"LDP value inf > 1"``); empty for an implication."""
        if self.holds is not False or self.target_value is None or self.target_member is None:
            return ""
        value = "inf" if math.isinf(self.target_value) else f"{self.target_value:.4g}"
        return f"{self.target} value {value} > {self.target_member.reference:g}"


@dataclass(frozen=True)
class Candidate:
    """A channel of the search pool: its name, its kind (``"mechanism"``, ``"constructed"``, ``"random"``), its matrix.

    Names are unique within a pool: the map's choice of witness depends on the candidates, not
    on their order in the pool (:func:`notion_map`).
    """

    name: str
    kind: Literal["mechanism", "constructed", "random"]
    channel: ExplicitChannel
    budget_factor: float = 1.0  # its budget over the scenario's (ties prefer 1: the matched budget)
    #: where it stands when two candidates are equally good witnesses (compared before the name, never the
    #: position in the pool): a kit mechanism's ``(budget factor, family order, context variant)``; empty
    #: means ``(budget_factor,)``
    place: tuple[float, ...] = ()

    @property
    def rank(self) -> int:
        """Rank as a witness, lower preferred; the kit's mechanisms first, then constructed, then random channels."""
        return {"mechanism": 0, "constructed": 1, "random": 2}[self.kind]


@dataclass(frozen=True, eq=False)
class NotionMap:
    """Every ordered pair of a set of notions, decided (:func:`notion_map`, :func:`budget_map`).

    Examples
    --------
    >>> nmap = notion_map()
    >>> nmap.classes()[0]
    ('LDP', 'CA-LDP', 'MinID-LDP', 'ID-LDP')
    >>> ("IPLDP", "ULDP") in [(a[0], b[0]) for a, b in nmap.hasse()]
    True
    """

    scenario: Scenario
    members: tuple[Member, ...]
    relations: tuple[Relation, ...]
    pool_size: int

    @property
    def names(self) -> tuple[str, ...]:
        """The notions, in the map's order."""
        return tuple(m.name for m in self.members)

    def member(self, name: str) -> Member:
        """The member called ``name``."""
        for m in self.members:
            if m.name == name:
                return m
        raise KeyError(f"no notion {name!r} in the map; notions: {', '.join(self.names)}")

    def relation(self, source: str, target: str) -> Relation:
        """The relation of the ordered pair ``(source, target)``."""
        for r in self.relations:
            if r.source == source and r.target == target:
                return r
        raise KeyError(f"no relation {source!r} -> {target!r} in the map")

    def implies(self, source: str, target: str) -> bool:
        """Whether ``source`` implies ``target`` (a notion implies itself)."""
        return source == target or bool(self.relation(source, target).holds)

    def classes(self) -> list[tuple[str, ...]]:
        """The equivalence classes (notions implying each other), in the map's order."""
        out: list[tuple[str, ...]] = []
        seen: set[str] = set()
        for a in self.names:
            if a in seen:
                continue
            group = tuple(b for b in self.names if self.implies(a, b) and self.implies(b, a))
            seen.update(group)
            out.append(group)
        return out

    def hasse(self) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
        """The arrows of the map between classes, with the arrows implied by two others left out."""
        cls = self.classes()

        def imp(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
            return a != b and self.implies(a[0], b[0])

        return [(a, b) for a in cls for b in cls
                if imp(a, b) and not any(imp(a, c) and imp(c, b) for c in cls if c not in (a, b))]

    def frame(self) -> pd.DataFrame:
        """One row per ordered pair: verdict, reason, witness, the two values, the parameter map."""
        import pandas as pd

        rows = [{"source": r.source, "target": r.target, "verdict": r.verdict, "reason": r.reason,
                 "witness": r.witness_name or "", "source_value": r.source_value, "target_value": r.target_value,
                 "bound": None if r.target_member is None else r.target_member.reference,
                 "parameter_map": r.parameter_map or ""} for r in self.relations]
        return pd.DataFrame(rows)

    def matrix(self, cell: Callable[[Relation], str] | None = None) -> pd.DataFrame:
        """Source notions as rows, targets as columns; ``cell(relation)`` as entries (default: the verdict)."""
        import pandas as pd

        fn = cell or (lambda r: r.verdict)
        data = {b: [("" if a == b else fn(self.relation(a, b))) for a in self.names] for b in self.names}
        return pd.DataFrame(data, index=list(self.names))


# --------------------------------------------------------------------------- constructed channels
def closure(matrix: ArrayLike) -> np.ndarray:
    """The shortest-path closure of a matrix of pairwise budgets (Floyd-Warshall; diagonal 0).

    A channel's pairwise log-ratios obey ``L[x, z] <= L[x, y] + L[y, z]``, so ``CA(M)`` and
    ``CA(closure(M))`` are the same notion (:prf:ref:`prop-ca-order`).

    Examples
    --------
    >>> closure([[0, 0.5, 3.0], [0.5, 0, 0.5], [3.0, 0.5, 0]]).tolist()
    [[0.0, 0.5, 1.0], [0.5, 0.0, 0.5], [1.0, 0.5, 0.0]]
    """
    D = np.array(matrix, dtype=float)
    np.fill_diagonal(D, 0.0)
    for k in range(D.shape[0]):
        D = np.minimum(D, D[:, [k]] + D[[k], :])
    return D


def ca_implies(matrix: ArrayLike, other: ArrayLike) -> bool:
    """Whether ``CA(matrix)`` implies ``CA(other)``: ``closure(matrix) <= other`` off the diagonal (:prf:ref:`prop-ca-order`).

    Examples
    --------
    >>> from ldpkit.accountant import pairwise_budgets
    >>> E = [0.5, 2.0, 2.0]
    >>> minid, ldp1 = pairwise_budgets(3, budgets=E, r="min"), pairwise_budgets(3, epsilon=1.0)
    >>> ca_implies(minid, ldp1), bool((minid <= ldp1).all())   # implied, although minid > 1 at (1, 2)
    (True, False)
    """
    C = closure(matrix)
    M = np.array(other, dtype=float)
    off = ~np.eye(C.shape[0], dtype=bool)
    return bool(np.all(C[off] <= M[off] * (1 + REL_TOL)))


def ca_extremal_channel(matrix: ArrayLike, x: int, xp: int) -> ExplicitChannel:
    """A two-output channel that satisfies ``CA(matrix)`` and has log-ratio ``closure(matrix)[x, xp]`` at ``(x, xp)``.

    With ``D = closure(matrix)`` (finite off the diagonal), column 0 is ``t exp(-D[x, a])`` for
    input ``a`` and column 1 its complement, ``t = (1 - exp(-min D)) / 2``: the triangle
    inequality of ``D`` bounds every ratio of column 0 by ``exp(D[a, b])``, the choice of ``t``
    every ratio of column 1 by ``exp(min D)``, and the pair ``(x, xp)`` attains ``D[x, xp]``
    (:prf:ref:`prop-ca-order`).

    Examples
    --------
    >>> from ldpkit import accountant
    >>> M = accountant.pairwise_budgets(3, budgets=[0.5, 2.0, 2.0], r="min")
    >>> ch = ca_extremal_channel(M, 1, 2)
    >>> accountant.check_context_aware(ch, M).satisfied, round(float(accountant.pairwise_log_ratio(ch)[1, 2]), 9)
    (True, 1.0)
    """
    D = closure(matrix)
    d = D.shape[0]
    off = ~np.eye(d, dtype=bool)
    if not np.all(np.isfinite(D[off])) or np.any(D[off] <= 0):
        raise ValueError("ca_extremal_channel needs finite positive pairwise budgets")
    if x == xp or not (0 <= x < d and 0 <= xp < d):
        raise ValueError(f"need two distinct inputs of 0..{d - 1}, got ({x}, {xp})")
    t = (1.0 - math.exp(-float(D[off].min()))) / 2.0
    col = t * np.exp(-D[x])
    return ExplicitChannel(np.column_stack([col, 1.0 - col]))


def lip_extremal_channel(prior: ArrayLike, epsilon: float) -> ExplicitChannel:
    """A two-output channel that is ``eps``-LIP under ``prior`` and exactly ``2 eps``-LDP (LIP chapter, :prf:ref:`thm-lip-ldp`).

    Column 0 is ``t r`` with ``r_a = e^eps`` for the input ``a`` of smallest prior,
    ``r_b = e^-eps`` for one other input ``b`` and one common value in ``[e^-eps, e^eps]`` for the
    rest, chosen so that ``sum pi r = 1`` (then ``P(Y = 0) = t`` and every ratio of column 0 to
    ``P(Y = 0)`` is ``r``); ``t = 1 / (2 (e^eps + 1))`` keeps column 1 inside the LIP bounds.

    Examples
    --------
    >>> from ldpkit import accountant
    >>> pi = [0.1, 0.2, 0.3, 0.4]
    >>> ch = lip_extremal_channel(pi, 1.0)
    >>> round(accountant.lip_epsilon(ch, pi), 9), round(accountant.ldp_epsilon(ch), 9)
    (1.0, 2.0)
    """
    pi = check_distribution(prior)
    eps = check_positive_real(epsilon, "epsilon")
    E = math.exp(eps)
    order = np.argsort(pi, kind="stable")
    a = int(order[0])
    for b in (int(i) for i in order[::-1]):
        if b == a:
            continue
        rest = np.ones(pi.size, dtype=bool)
        rest[[a, b]] = False
        mass = float(pi[rest].sum())
        need = 1.0 - pi[a] * E - pi[b] / E
        if mass <= 0:
            if abs(need) > 1e-12:
                continue
            common = 1.0
        else:
            common = need / mass
        if 1.0 / E <= common <= E:
            r = np.full(pi.size, common)
            r[a], r[b] = E, 1.0 / E
            t = 1.0 / (2.0 * (E + 1.0))
            col = t * r
            return ExplicitChannel(np.column_stack([col, 1.0 - col]))
    raise ValueError(f"no two-output channel of this form is {eps}-LIP and {2 * eps}-LDP under this prior")


def ipldp_extremal_channel(d: int, sensitive: Sequence[int], epsilon: float, keep: float = 1.0) -> ExplicitChannel:
    """A square channel satisfying IPLDP (``eps`` on ``S``, ``inf`` off it) that leaks as much as it may.

    Every sensitive input reports the first sensitive item; a non-sensitive input ``x`` reports
    itself with probability ``keep * (1 - e^-eps)`` and that item otherwise.  The only
    sensitive output used has ratio at most ``e^eps`` and every non-sensitive output is produced
    by its own input only, so the channel is IPLDP and (:prf:ref:`prop-map-ipldp-edges`) ULDP.

    Examples
    --------
    >>> from ldpkit import accountant
    >>> ch = ipldp_extremal_channel(4, [0, 1], 1.0)
    >>> accountant.check_ipldp(ch, [1.0, 1.0], sensitive=[0, 1]).satisfied
    True
    """
    eps = check_positive_real(epsilon, "epsilon")
    keep = check_probability(keep, "keep")
    sens = sorted(int(i) for i in sensitive)
    m = np.zeros((d, d))
    q = keep * (1.0 - math.exp(-eps))
    for x in range(d):
        if x in sens:
            m[x, sens[0]] = 1.0
        else:
            m[x, x], m[x, sens[0]] = q, 1.0 - q
    return ExplicitChannel(m)


def split_invertible(ch: Channel, sensitive: Sequence[int], k: int) -> ExplicitChannel:
    """``ch`` with the output of every non-sensitive item split into ``k`` equal outputs (not square).

    A non-sensitive output produced by its own input only stays so after the split, so ULDP is
    kept; the range of each non-sensitive input grows by ``k - 1`` outputs that no other input
    shares (the witness against FLDP).

    Examples
    --------
    >>> split_invertible(ipldp_extremal_channel(3, [0], 1.0), [0], 2).matrix.shape
    (3, 5)
    """
    m = ch.to_explicit().matrix
    d = m.shape[0]
    sens = set(int(i) for i in sensitive)
    cols = [m[:, [j]] for j in range(m.shape[1]) if j in sens or j >= d]
    for j in range(d):
        if j not in sens:
            cols += [m[:, [j]] / k] * k
    return ExplicitChannel(np.hstack(cols))


def star_channel(d: int, shared: float, shared_law: ArrayLike = (1.0,), ratios: ArrayLike | None = None) -> ExplicitChannel:
    """Every input reports a shared output (law ``shared_law``) with probability ``shared * ratios[x]``, else its own output.

    Each range is the shared outputs plus one own output, so two inputs share at least half of
    each range: with ``max ratios / min ratios <= e^eps`` the channel is ``(1/2, eps)``-FLDP,
    while its own outputs reveal the input (it leaks nearly ``H(pi)`` when ``shared`` is small).

    Examples
    --------
    >>> from ldpkit import accountant
    >>> ch = star_channel(4, 0.05)
    >>> accountant.fldp_epsilon(ch, alpha=0.5), ch.matrix.shape
    (0.0, (4, 5))
    """
    law = np.asarray(shared_law, dtype=float)
    law = law / law.sum()
    r = np.ones(d) if ratios is None else np.asarray(ratios, dtype=float)
    p = shared * r
    if np.any(p > 1) or np.any(p < 0):
        raise ValueError("shared * ratios must lie in [0, 1]")
    return ExplicitChannel(np.hstack([p[:, None] * law[None, :], np.diag(1.0 - p)]))


def fit_by_mixing(ch: Channel, holds: Callable[[ExplicitChannel], bool], tol: float = 1e-10) -> tuple[ExplicitChannel, float]:
    """Mix ``ch`` with the uniform channel just enough for ``holds`` (smallest ``theta`` up to ``tol``, by bisection).

    Every pairwise ratio, every ratio ``P(y|x)/P(y)`` and the mutual information move
    monotonically towards their uniform values as ``theta`` grows
    (:func:`ldpkit.channels.mix_with_uniform`), so for LDP, the pairwise notions, LIP and MIP the
    bisection lands at the boundary: the result just holds.

    Examples
    --------
    >>> from ldpkit import accountant
    >>> from ldpkit.channels import random_channel
    >>> ch, theta = fit_by_mixing(random_channel(3, 3, rng=1), lambda c: accountant.check_ldp(c, 1.0).satisfied)
    >>> round(accountant.ldp_epsilon(ch), 6)
    1.0
    """
    ex = ch.to_explicit()
    if holds(ex):
        return ex, 0.0
    lo, hi = 0.0, 1.0
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if holds(mix_with_uniform(ex, mid)):
            hi = mid
        else:
            lo = mid
    return mix_with_uniform(ex, hi), hi


# --------------------------------------------------------------------------- the pool
def _mechanisms(scenario: Scenario, budget_vectors: bool) -> list[Candidate]:
    """The kit's mechanisms of the pool: every registered family on items indexed by a budget, at each grid budget.

    At budget ``b = f eps`` (``f`` in :data:`BUDGET_GRID`) each family's member is
    :meth:`~ldpkit.family.Family.member` ``(d, b)`` with the scenario's context: the sensitive
    set, the prior, and, for a family that reads per-item budgets, the budgets relative to
    ``b``: ``1`` on ``S`` and ``inf`` off it (named ``"... at b on S"``) and, with
    ``budget_vectors``, ``E / eps`` (``f`` times ``E``, named ``"... at f E"``).  A family that
    does not apply (its :attr:`~ldpkit.family.Family.applies` refuses the promise of that
    member: LDP at ``b`` on ``d`` items, IPLDP at ``b`` on ``S``, MinID-LDP at ``f E``; the
    binary LIP optimum on more than two items) or whose channel is too large to enumerate
    (:func:`ldpkit.accountant.enumerate_channel`) is left out.  Each candidate's
    :attr:`Candidate.place` is ``(f, family order, variant)``.
    """
    from . import contracts
    from .family import families

    d, e, S = scenario.d, scenario.epsilon, list(scenario.sensitive)
    on_s = np.full(d, math.inf)
    on_s[S] = 1.0
    relative_e = np.array(scenario.budgets) / e
    prior = np.array(scenario.prior)
    chosen = families(inputs="items", budget=True)
    out: list[Candidate] = []
    for f in BUDGET_GRID:
        b = e * f
        for fam in chosen:
            variants: list[tuple[str, Any, contracts.Contract]]
            if "budgets" in fam.context:
                variants = [(f"{fam.name} at {b:g} on S", on_s, contracts.ipldp(b * on_s))]
                if budget_vectors:
                    variants.append((f"{fam.name} at {f:g} E", relative_e, contracts.minidldp(b * relative_e)))
            else:
                variants = [(f"{fam.name} at {b:g}", None, contracts.ldp(d, b))]
            for v, (name, budgets, promise) in enumerate(variants):
                if fam.applies is not None and fam.applies(promise):
                    continue
                mech = fam.member(d, b, budgets=budgets, sensitive=S, prior=prior)
                try:
                    channel = accountant.enumerate_channel(mech.channel(), f"the notion map's candidate {name}")
                except accountant.AccountingError:
                    continue
                out.append(Candidate(name, "mechanism", channel, f, (f, fam.order, v)))
    return out


def candidate_pool(scenario: Scenario, members: Sequence[Member] | None = None, rng: RNGLike = None,
                   matrices: Mapping[str, np.ndarray] | None = None) -> tuple[Candidate, ...]:
    """The channels the map searches for witnesses and tests every implication on.

    * the kit's mechanisms at the scenario's ``d``, at every budget of ``BUDGET_GRID`` times
      ``eps``: the member of every registered family on items indexed by a budget
      (:func:`ldpkit.family.families`), built with the scenario's context (the sensitive set
      ``S``, the prior, and for a family that reads per-item budgets, the budget on ``S`` and
      ``inf`` off it, and multiples of ``E`` when ``matrices`` are given), for the builtin
      families GRR, RAPPOR, OUE, OLH, HR, FHR, uRR, IPRR, IDUE's three models and the k-ary LIP
      optimum; a family that does not apply at the scenario (the binary LIP optimum on more than
      two items) or whose channel is too large to enumerate is left out;
    * constructed channels: :func:`lip_extremal_channel`, :func:`ipldp_extremal_channel` (and
      with its non-sensitive outputs split, :func:`split_invertible`), :func:`star_channel`, and
      for every matrix of ``matrices`` :func:`ca_extremal_channel` at every pair;
    * random channels (seed ``scenario.seed`` unless ``rng``): random IPLDP-shaped channels,
      random star channels, and ``n_random`` Dirichlet channels (``d`` or ``2d`` outputs)
      fitted by :func:`fit_by_mixing` to each notion of ``members`` that mixing preserves
      (:attr:`ldpkit.accountant.Notion.fits_by_mixing`: the pairwise notions, LIP, MIP), drawn
      last and in the members' order.

    Examples
    --------
    >>> pool = candidate_pool(Scenario(n_random=1))
    >>> sorted({c.kind for c in pool})
    ['constructed', 'mechanism', 'random']
    """
    s = scenario
    gen = as_generator(s.seed if rng is None else rng)
    members = scenario_members(s) if members is None else members
    d, e, S = s.d, s.epsilon, list(s.sensitive)
    pool = _mechanisms(s, matrices is not None)
    for f in BUDGET_GRID:
        b = e * f
        try:
            pool.append(Candidate(f"LIP-extremal at {b:g}", "constructed", lip_extremal_channel(s.prior, b), f))
        except ValueError:  # the factor 2 needs min(prior) <= 1 / (1 + e^b)
            pass
        ip = ipldp_extremal_channel(d, S, b)
        pool.append(Candidate(f"IPLDP-extremal at {b:g}", "constructed", ip, f))
        pool.append(Candidate(f"IPLDP-extremal at {b:g}, outputs split in 2", "constructed",
                              split_invertible(ip, S, 2), f))
    for p in (0.05, 0.5):
        pool.append(Candidate(f"star (shared {p:g})", "constructed", star_channel(d, p)))
    for name, M in (matrices or {}).items():
        for x in range(d):
            for xp in range(d):
                if x != xp:
                    pool.append(Candidate(f"CA-extremal of {name} at ({x}, {xp})", "constructed",
                                          ca_extremal_channel(M, x, xp)))
    for i in range(s.n_random):
        pool.append(Candidate(f"random IPLDP-shaped ({i})", "random", _random_ipldp(s, gen)))
        k = int(gen.integers(1, 4))
        ratios = np.exp(e * gen.uniform(0, 1, size=d))
        shared = float(gen.uniform(0.02, 1.0)) / float(ratios.max())
        pool.append(Candidate(f"random star ({i})", "random",
                              star_channel(d, shared, gen.dirichlet(np.ones(k)), ratios)))
    # last, so that a notion added to the map only appends candidates: every other one is drawn as before
    fitted = [m for m in members if get_notion(m.guarantee.notion).fits_by_mixing]
    for m in fitted:
        for i in range(s.n_random):
            n_out = d if i % 2 == 0 else 2 * d
            conc = (0.3, 1.0, 3.0)[i % 3]
            raw = ExplicitChannel(np.maximum(gen.dirichlet(np.full(n_out, conc), size=d), 1e-12))
            raw = ExplicitChannel(raw.matrix / raw.matrix.sum(axis=1, keepdims=True))
            ch, _ = fit_by_mixing(raw, m.holds)
            pool.append(Candidate(f"random, fitted to {m.name} ({i})", "random", ch))
    return tuple(pool)


def _random_ipldp(s: Scenario, gen: np.random.Generator) -> ExplicitChannel:
    """A random square channel satisfying IPLDP: a random block on a random set of sensitive outputs, fitted, plus own outputs."""
    d, e, S = s.d, s.epsilon, list(s.sensitive)
    U = [j for j in S if gen.random() < 0.7] or [S[0]]
    block = gen.dirichlet(np.ones(len(U)), size=d)
    B, _ = fit_by_mixing(ExplicitChannel(block), lambda c: accountant.ldp_epsilon(c) <= e)
    nonsens = [x for x in range(d) if x not in S]

    def build(scale: float) -> ExplicitChannel:
        m = np.zeros((d, d))
        m[:, U] = B.matrix
        for x in nonsens:
            m[x, U] *= scale
            m[x, x] = 1.0 - scale
        return ExplicitChannel(m)

    guarantee = Guarantee("ipldp", budgets=s.ipldp_budgets, sensitive=S)
    lo, hi = 0.0, 1.0  # smallest scale that keeps the sensitive columns within e^eps
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if guarantee.check(build(mid)).satisfied:
            hi = mid
        else:
            lo = mid
    return build(hi + float(gen.uniform(0, 1)) * (1.0 - hi))


# --------------------------------------------------------------------------- deciding the pairs
def _closure_of(direct: Mapping[tuple[str, str], str], names: Sequence[str]) -> dict[tuple[str, str], str]:
    """Transitive closure of the direct implications; a derived one's reason names its chain."""
    reason: dict[tuple[str, str], str] = dict(direct)
    path: dict[tuple[str, str], list[str]] = {k: [k[0], k[1]] for k in direct}
    changed = True
    while changed:
        changed = False
        for (a, b) in list(path):
            for (c, e) in list(path):
                if b == c and a != e and (a, e) not in path:
                    path[(a, e)] = path[(a, b)] + path[(c, e)][1:]
                    reason[(a, e)] = "chain: " + " => ".join(path[(a, e)])
                    changed = True
    return {k: v for k, v in reason.items() if k[0] in names and k[1] in names}


def _decide(scenario: Scenario, members: Sequence[Member], pool: Sequence[Candidate],
            implications: Mapping[tuple[str, str], str],
            parameter_maps: Mapping[tuple[str, str], tuple[float, str]]) -> NotionMap:
    names = [m.name for m in members]
    holds = np.array([[m.holds(c.channel) for m in members] for c in pool], dtype=bool)
    values = np.array([[m.value(c.channel) for m in members] for c in pool])
    # the accountant's check and the tightest value agree
    bound = np.array([m.reference for m in members])
    tight = values <= bound * (1 + 1e-6)
    loose = values <= bound * (1 - 1e-6)
    if np.any(holds & ~tight) or np.any(~holds & loose):
        i, j = np.argwhere((holds & ~tight) | (~holds & loose))[0]
        raise AssertionError(f"{names[j]}: check and tightest value disagree on {pool[i].name}")
    index = {n: k for k, n in enumerate(names)}
    relations = []
    for a in names:
        for b in names:
            if a == b:
                continue
            ia, ib = index[a], index[b]
            bad = np.flatnonzero(holds[:, ia] & ~holds[:, ib])
            sa, sb = members[ia], members[ib]
            pmap = parameter_maps.get((a, b))
            if pmap is not None:
                factor, _ = pmap
                over = np.flatnonzero(holds[:, ia] & (values[:, ib] > factor * sb.reference * (1 + 1e-6)))
                if over.size:
                    raise ImplicationRefuted(f"{pmap[1]} is refuted by {pool[int(over[0])].name}")
            if (a, b) in implications:
                if bad.size:
                    c = pool[int(bad[0])]
                    raise ImplicationRefuted(
                        f"{a} => {b} ({implications[(a, b)]}) is refuted by {c.name}: it satisfies {a} "
                        f"(value {values[bad[0], ia]:.6g}) and violates {b} (value {values[bad[0], ib]:.6g})")
                relations.append(Relation(a, b, True, implications[(a, b)],
                                          parameter_map=None if pmap is None else pmap[1],
                                          source_member=sa, target_member=sb))
                continue
            if not bad.size:
                relations.append(Relation(a, b, None, "undecided: no proof and no witness in the pool",
                                          source_member=sa, target_member=sb))
                continue

            def key(k: int) -> tuple[int, bool, float, float, tuple[float, ...], str]:
                c = pool[k]  # never its position k: the witness does not depend on the pool's order
                ratio = values[k, ib] / sb.reference
                return (c.rank, not sb.applies(c.channel), -ratio, abs(math.log(c.budget_factor)),
                        c.place or (c.budget_factor,), c.name)

            k = min((int(i) for i in bad), key=key)
            c = pool[k]
            relations.append(Relation(a, b, False, f"witness: {c.name}", c.channel, c.name, float(values[k, ia]),
                                      float(values[k, ib]), None if pmap is None else pmap[1], sa, sb))
    return NotionMap(scenario, tuple(members), tuple(relations), len(pool))


def proved_implications(scenario: Scenario) -> dict[tuple[str, str], str]:
    """:data:`PROVED` as it applies to ``scenario``: IPLDP implies FLDP only when ``alpha <= 1/2`` (:prf:ref:`prop-map-ipldp-edges`).

    Examples
    --------
    >>> ("IPLDP", "FLDP") in proved_implications(Scenario(alpha=0.6))
    False
    """
    out = dict(PROVED)
    if scenario.alpha > 0.5:
        del out[("IPLDP", "FLDP")]
    return out


def notion_map(scenario: Scenario | None = None, *, implications: Mapping[tuple[str, str], str] | None = None,
               pool: Sequence[Candidate] | None = None) -> NotionMap:
    """The one-budget map of every registered notion (:func:`scenario_members`; module docstring), deterministic.

    Parameters
    ----------
    scenario
        The setting (default :class:`Scenario`).
    implications
        The direct implications to take as proved (default :data:`PROVED`); their transitive
        closure is tested against the pool.
    pool
        The candidate channels (default :func:`candidate_pool`).

    Raises
    ------
    ImplicationRefuted
        When a channel of the pool satisfies the source of an implication (or of a parameter
        map) and violates its target.

    Examples
    --------
    >>> nmap = notion_map()
    >>> r = nmap.relation("ULDP", "MIP")
    >>> r.holds, r.witness_name, r.target_value > nmap.scenario.epsilon
    (False, 'IPLDP-extremal at 1', True)
    """
    s = Scenario() if scenario is None else scenario
    members = scenario_members(s)
    pool = candidate_pool(s, members) if pool is None else pool
    direct = proved_implications(s) if implications is None else implications
    return _decide(s, members, pool, _closure_of(direct, [m.name for m in members]), PARAMETER_MAPS)


def budget_map(scenario: Scenario | None = None, *, pool: Sequence[Candidate] | None = None) -> NotionMap:
    """The per-item map of :func:`budget_members` for the scenario's ``E`` (:prf:ref:`prop-ca-order`).

    An ordered pair is an implication when :func:`ca_implies` holds for the two matrices
    (:func:`budget_matrices`), with reason ``"prop-ca-order"``; otherwise its witness is taken
    from the pool (which contains :func:`ca_extremal_channel` of every matrix at every pair).

    Examples
    --------
    >>> bmap = budget_map()
    >>> [(r.source, r.target) for r in bmap.relations if r.holds]  # doctest: +NORMALIZE_WHITESPACE
    [('LDP(min E)', 'MinID-LDP(E)'), ('LDP(min E)', 'ID-LDP(E)'), ('LDP(min E)', 'LDP(max E)'),
     ('MinID-LDP(E)', 'ID-LDP(E)'), ('MinID-LDP(E)', 'LDP(max E)'), ('ID-LDP(E)', 'LDP(max E)')]
    """
    s = Scenario() if scenario is None else scenario
    members = budget_members(s)
    mats = budget_matrices(s)
    pool = candidate_pool(s, members, matrices=mats) if pool is None else pool
    implications = {(a, b): "prop-ca-order" for a in mats for b in mats if a != b and ca_implies(mats[a], mats[b])}
    return _decide(s, members, pool, implications, {})


def verify_witness(relation: Relation) -> bool:
    """Recheck a non-implication by exact enumeration: the witness satisfies the source, violates the target by the stated amount.

    The accountant checks both guarantees on the explicit witness (enumeration of every output),
    and the target's tightest value is recomputed and compared with ``target_value``.  Returns
    ``False`` for an implication or an undecided pair.

    Examples
    --------
    >>> nmap = notion_map()
    >>> verify_witness(nmap.relation("IPLDP", "LDP")), verify_witness(nmap.relation("LDP", "LIP"))
    (True, False)
    """
    if relation.holds is not False or relation.witness is None:
        return False
    sa, sb = relation.source_member, relation.target_member
    if sa is None or sb is None:
        return False
    ch = ExplicitChannel(relation.witness.matrix)
    if not sa.holds(ch) or sb.holds(ch):
        return False
    value = sb.value(ch)
    if relation.target_value is None or not value > sb.reference * (1 + REL_TOL):
        return False
    if math.isinf(value) or math.isinf(relation.target_value):
        return math.isinf(value) and math.isinf(relation.target_value)
    return abs(value - relation.target_value) <= 1e-9 * max(1.0, abs(value))
