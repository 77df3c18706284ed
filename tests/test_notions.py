"""Every privacy notion through one path: the abstract closed-form test, and a notion added from outside.

* One parametrised test compares every closed form registered for every notion with exact
  enumeration, on every instance of the mechanism registry whose channel is of that kind.  The
  cases are built from the registries, so a closed form (or a mechanism) registered later is
  covered with no edit here.
* The parameters each notion is tested at come from the registry: the notion states itself at
  one budget (:meth:`~ldpkit.accountant.Notion.stated_at`, which gives its own parameters, such
  as FLDP's ``alpha``), and the data shared by every notion (per-item budgets, a sensitive set, a
  prior, a matrix of pairwise budgets) are drawn here, by parameter name.
* A notion defined only in this file (approximate ``(eps, delta)``-LDP, with its own closed form
  for unary channels) is registered the way CONTRIBUTING says a notion module does it, and then
  works with :class:`~ldpkit.accountant.Guarantee`, :func:`~ldpkit.accountant.verify`,
  :func:`~ldpkit.accountant.privacy_profile`, the promises of :mod:`ldpkit.contracts`, the map of
  notions and the closed-form test, with no change to ldpkit.
* Registering an id twice is refused unless asked, and two notions with an own parameter of the
  same name each receive their own value.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from ldpkit import accountant, contracts
from ldpkit import notion_map as nm
from ldpkit.accountant import CheckResult, Guarantee, Notion, register_notion, registered_notions, unregister_notion
from ldpkit.channels import Channel, ExplicitChannel, UnaryChannel
from ldpkit.family import families

#: a representative value of every datum shared by the notions (accountant.SHARED_PARAMETERS)
DATA = {
    "sensitive": lambda d: np.arange((d + 1) // 2),
    "prior": lambda d: np.random.default_rng(d).dirichlet(np.ones(d)),
    "budgets": lambda d: np.linspace(0.5, 2.0, d),
    # distinct budgets per ordered pair, asymmetric: every pair of the context-aware notion differs
    "matrix": lambda d: 0.5 + np.arange(d * d, dtype=float).reshape(d, d) / (d * d),
}
assert set(DATA) == set(accountant.SHARED_PARAMETERS)


def context_for(notion: Notion[Any], ch: Channel) -> dict[str, Any]:
    """What ``notion.tightest`` is tested with: the notion's own parameters as it states itself, the data drawn here."""
    d = ch.n_inputs
    # the facts the map of notions states every notion from (ldpkit.notion_map.Scenario)
    stated = notion.stated_at(d, 1.0, sensitive=DATA["sensitive"](d), prior=DATA["prior"](d), alpha=0.5)
    assert stated is not None, f"{notion.name} does not state itself at one budget: its parameters are unknown"
    params = {**stated.params, **{p: DATA[p](d) for p in stated.params if p in DATA}}
    return {p: v for p, v in params.items() if p in notion.tightest_needs + notion.optional}


def registry_channels() -> Iterator[tuple[str, Channel]]:
    for fam in families():
        for i, mech in enumerate(fam.examples()):
            yield f"{fam.name}-{i}", mech.channel()


def closed_form_cases(notions: tuple[Notion[Any], ...]) -> list[tuple[str, str, str]]:
    """``(notion, kind, instance)`` for every closed form and every registry channel of its kind."""
    channels = list(registry_channels())
    cases = []
    for notion in notions:
        for kind in notion.closed_forms.kinds():
            if kind is ExplicitChannel:
                continue
            for name, ch in channels:
                if isinstance(ch, kind) and notion.applies_to(ch) and ch.n_inputs * ch.n_outputs <= accountant.MAX_ENUM_CELLS:
                    cases.append((notion.name, kind.__name__, name))
    return cases


def assert_closed_form_matches_enumeration(notion: Notion[Any], ch: Channel) -> None:
    """The tightest value and the verdict either side of it agree with exact enumeration."""
    ctx = context_for(notion, ch)
    explicit = ch.to_explicit()
    if getattr(ch, "coarsening", False):  # to_explicit() is the law of a coarsening of the output (SHE's cells)
        try:
            notion.tightest(ch, **ctx)
        except accountant.AccountingError as err:  # a notion the coarsening does not keep must be refused
            assert "coarsening" in str(err), (notion.name, err)
            return
    closed = notion.tightest(ch, **ctx)
    enumerated = notion.tightest(explicit, **ctx)
    assert closed == pytest.approx(enumerated, rel=1e-9, abs=1e-12), (notion.name, closed, enumerated)
    if not math.isfinite(enumerated) or enumerated <= 0:
        return
    for factor in (1 - 1e-6, 1 + 1e-6):
        if notion.scale:  # the tightest value scales the budget vector of the context
            params = {**ctx, notion.budget: ctx[notion.budget] * enumerated * factor}
        else:
            params = {**ctx, notion.budget: enumerated * factor}
        g = Guarantee(notion.name, **params)
        assert notion.check(ch, g).satisfied == notion.check(explicit, g).satisfied == (factor > 1), (notion.name, factor)


CASES = closed_form_cases(registered_notions())
CHANNELS = dict(registry_channels())


def test_every_structured_kind_is_covered() -> None:
    kinds = {kind for _, kind, _ in CASES}
    assert {"UnaryChannel", "HadamardChannel"} <= kinds
    assert {n for n, _, _ in CASES} >= {"ldp", "id-ldp", "minid-ldp", "uldp", "lip", "fldp"}


@pytest.mark.parametrize("notion, kind, instance", CASES, ids=["-".join(c) for c in CASES])
def test_closed_form_equals_enumeration(notion: str, kind: str, instance: str) -> None:
    assert_closed_form_matches_enumeration(accountant.get_notion(notion), CHANNELS[instance])


def test_the_pairwise_matrix_closed_forms_equal_enumeration() -> None:
    table = accountant.closed_forms("pairwise")
    for name, ch in CHANNELS.items():
        if table.lookup(type(ch)) is not table.lookup(ExplicitChannel) and ch.n_inputs * ch.n_outputs <= 1 << 16:
            np.testing.assert_allclose(accountant.pairwise_log_ratio(ch), accountant.pairwise_log_ratio(ch.to_explicit()),
                                       rtol=1e-9, atol=1e-12, err_msg=name)


def test_tightest_is_the_boundary_of_check_for_every_notion() -> None:
    ch = ExplicitChannel(np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.3, 0.2, 0.5]]))
    for notion in registered_notions():
        ctx = context_for(notion, ch)
        if "sensitive" in ctx:  # every output sensitive: IPLDP's condition 2 holds
            ctx["sensitive"] = np.arange(3)
        value = notion.tightest(ch, **ctx)
        assert value > 0 and math.isfinite(value), notion.name
        if notion.scale:
            ok = {**ctx, notion.budget: ctx[notion.budget] * value * (1 + 1e-7)}
            bad = {**ctx, notion.budget: ctx[notion.budget] * value * (1 - 1e-7)}
        else:
            ok, bad = {**ctx, notion.budget: value * (1 + 1e-7)}, {**ctx, notion.budget: value * (1 - 1e-7)}
        assert notion.check(ch, notion.guarantee(**ok)).satisfied, notion.name
        assert not notion.check(ch, notion.guarantee(**bad)).satisfied, notion.name


def test_notion_objects_are_uniform() -> None:
    for notion in registered_notions():
        assert notion.required[0] == notion.budget and notion.budget in accountant.BUDGET_KINDS
        assert notion.scale == (notion.budget != "epsilon")
        assert notion.label.startswith("def-")
        with pytest.raises(ValueError, match="cannot check"):
            other = next(n for n in registered_notions() if n.name != notion.name)
            ch = ExplicitChannel(np.full((3, 3), 1 / 3))
            notion.check(ch, other.guarantee(**{**context_for(other, ch), other.budget: 1.0 if not other.scale else np.ones(3 if other.budget == "budgets" else (3, 3))}))


# ------------------------------------------------------------------------------ a notion from outside
@dataclass(frozen=True, kw_only=True)
class ApproxResult(CheckResult):
    """Outcome of an approximate ``(eps, delta)``-LDP check."""

    notion = "approx-ldp"

    epsilon: float
    delta: float
    achieved_delta: float


def _hockey_stick(m: np.ndarray, eps: float) -> tuple[float, tuple[int, int]]:
    """``max_{x, x'} sum_y max(0, P(y|x) - e^eps P(y|x'))`` and its pair."""
    gap = np.maximum(0.0, m[:, None, :] - math.exp(eps) * m[None, :, :]).sum(axis=2)
    np.fill_diagonal(gap, 0.0)
    x, xp = np.unravel_index(int(np.argmax(gap)), gap.shape)
    return float(gap[x, xp]), (int(x), int(xp))


APPROX = accountant.closed_forms("approx-ldp", "approximate LDP")
UNARY_CALLS: list[int] = []


@APPROX.register(ExplicitChannel)
def _approx_explicit(ch: ExplicitChannel, eps: float) -> tuple[float, tuple[int, int]]:
    return _hockey_stick(ch.matrix, eps)


@APPROX.register(UnaryChannel)
def _approx_unary(ch: UnaryChannel, eps: float) -> tuple[float, tuple[int, int]]:
    """Only bits x and x' differ between inputs x and x', so the divergence lives on 4 outcomes."""
    UNARY_CALLS.append(ch.n_inputs)
    a, b, d = ch.a, ch.b, ch.n_inputs
    best = (0.0, (0, 1))
    for x in range(d):
        for xp in range(d):
            if x == xp:
                continue
            p = np.outer([1 - a[x], a[x]], [1 - b[xp], b[xp]]).ravel()  # bits (x, x') under input x
            q = np.outer([1 - b[x], b[x]], [1 - a[xp], a[xp]]).ravel()  # under input x'
            value = float(np.maximum(0.0, p - math.exp(eps) * q).sum())
            if value > best[0]:
                best = (value, (x, xp))
    return best


def check_approx(ch: Any, epsilon: float, *, delta: float) -> ApproxResult:
    ch = accountant.as_channel(ch)
    achieved, pair = APPROX.compute(ch, float(epsilon))
    return ApproxResult(satisfied=achieved <= delta + 1e-12, slack=delta - achieved, worst_inputs=pair,
                        epsilon=float(epsilon), delta=float(delta), achieved_delta=achieved)


def approx_epsilon(ch: Any, delta: float) -> float:
    """Smallest eps with (eps, delta)-LDP, by bisection (delta(eps) is non-increasing)."""
    ch = accountant.as_channel(ch)
    lo, hi = 0.0, 1.0
    while APPROX.compute(ch, hi)[0] > delta:
        lo, hi = hi, 2 * hi
        if hi > 1e3:
            return math.inf
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if APPROX.compute(ch, mid)[0] <= delta else (mid, hi)
    return hi


def _approx_at_budget(d: int, epsilon: float, **facts: Any) -> dict[str, Any]:
    """On the map of notions, approximate LDP is stated with delta = 0.05."""
    return {"epsilon": epsilon, "delta": 0.05}


@pytest.fixture
def approx_notion() -> Iterator[Notion[ApproxResult]]:
    notion = register_notion(Notion("approx-ldp", check_approx, approx_epsilon, context=("delta",),
                                    display="Approx-LDP", label="def-approx-ldp",
                                    description="approximate (eps, delta)-LDP, defined in a test",
                                    at_budget=_approx_at_budget))
    yield notion
    unregister_notion("approx-ldp")


class StatedGRR:
    """A mechanism declaring an (eps, delta) guarantee of the new notion (nothing else is needed)."""

    def __init__(self, d: int, epsilon: float, delta: float) -> None:
        from ldpkit import GRR

        self.inner, self.epsilon, self.delta = GRR(d, epsilon), epsilon, delta

    def channel(self) -> Channel:
        return self.inner.channel()

    def guarantees(self) -> list[Guarantee]:
        return [Guarantee("approx-ldp", epsilon=self.epsilon, delta=self.delta)]


def test_a_notion_from_outside_works_everywhere(approx_notion: Notion[ApproxResult]) -> None:
    from ldpkit import GRR, OUE

    assert "approx-ldp" in accountant.notions()
    # delta = 0 is pure LDP: the tightest epsilon is GRR's own
    assert approx_notion.tightest(GRR(4, 1.0), delta=0.0) == pytest.approx(1.0, rel=1e-9)
    # verify() checks it, and fails when the declared budget is too small
    assert accountant.verify(StatedGRR(4, 1.0, 0.0))
    assert not accountant.verify(_stated(0.9, 0.0))
    # the privacy profile has its column, under the key derived from its id, computed from its own parameter
    assert approx_notion.profile_key == "approx_epsilon"
    prof = accountant.privacy_profile(OUE(4, 1.0), params={"approx-ldp": {"delta": 0.01}})
    assert prof.approx_epsilon == pytest.approx(approx_epsilon(OUE(4, 1.0), 0.01))
    assert accountant.privacy_profile(OUE(4, 1.0)).approx_epsilon is None
    # a promise of it, from Python and from text, checked on both sides of GRR's tightest value
    tight = approx_epsilon(GRR(4, 1.0), 0.05)
    for factor in (1 - 1e-6, 1 + 1e-6):
        c = contracts.parse(f"approx-ldp:epsilon={tight * factor!r},delta=0.05", d=4)
        assert c == c and c.name == "Approx-LDP" and c.satisfied(GRR(4, 1.0)) == (factor > 1)
        assert c.guarantee == contracts.promise("approx-ldp", 4, epsilon=tight * factor, delta=0.05).guarantee
    with pytest.raises(ValueError, match="approx-ldp needs delta"):
        contracts.parse("approx-ldp:epsilon=1", d=4)
    # the map of notions states it at its one budget and decides its pairs with the pool's witnesses
    scenario = nm.Scenario(n_random=2)
    members = {m.name: m for m in nm.scenario_members(scenario)}
    assert members["Approx-LDP"].guarantee == Guarantee("approx-ldp", epsilon=1.0, delta=0.05)
    nmap = nm.notion_map(scenario)
    new = [r for r in nmap.relations if "Approx-LDP" in (r.source, r.target)]
    assert len(new) == 2 * (len(nmap.names) - 1)
    assert all(r.holds is not True for r in new)  # no proof is written for it
    assert all(nm.verify_witness(r) for r in new if r.holds is False)
    # LDP(eps) implies it (delta = 0 suffices), which no proof here states: undecided, never refuted
    assert nmap.relation("LDP", "Approx-LDP").verdict == "undecided"
    assert nmap.relation("IPLDP", "Approx-LDP").verdict == "fails"  # a non-sensitive output reveals the input
    # its closed form for unary channels is covered by the abstract test the moment it exists
    cases = closed_form_cases((approx_notion,))
    assert {kind for _, kind, _ in cases} == {"UnaryChannel"} and len(cases) >= 4
    for _, _, instance in cases:
        assert_closed_form_matches_enumeration(approx_notion, CHANNELS[instance])
    assert UNARY_CALLS


def _stated(epsilon: float, delta: float) -> StatedGRR:
    mech = StatedGRR(4, 1.0, delta)
    mech.epsilon = epsilon  # declares less than the channel gives
    return mech


# ------------------------------------------------------------------------------ the registry's rules
def test_registering_an_existing_id_is_refused_unless_replace() -> None:
    ldp = accountant.get_notion("ldp")
    twin = Notion("ldp", ldp.check_fn, ldp.tightest_fn, display="LDP", order=ldp.order, label="def-ldp")
    with pytest.raises(ValueError, match="'ldp' is already registered"):
        register_notion(twin)
    assert accountant.get_notion("ldp") is ldp
    try:
        assert register_notion(twin, replace=True) is twin and accountant.get_notion("ldp") is twin
    finally:
        register_notion(ldp, replace=True)
    assert accountant.get_notion("ldp") is ldp
    with pytest.raises(ValueError, match="did you mean ldp"):
        accountant.get_notion("ldpp")
    with pytest.raises(ValueError, match="lower-case words joined by hyphens"):
        Notion("MinID_LDP", ldp.check_fn, ldp.tightest_fn)


@dataclass(frozen=True, kw_only=True)
class ShiftResult(CheckResult):
    """Outcome of a check of a notion defined below (LDP's epsilon plus a constant)."""

    notion = "shift"


def _shift_notion(name: str) -> Notion[ShiftResult]:
    """A notion whose tightest value is LDP's epsilon plus its own parameter ``alpha``, as FLDP has an ``alpha``."""
    def tightest(ch: Any, alpha: float) -> float:
        return accountant.ldp_epsilon(ch) + float(alpha)

    def check(ch: Any, epsilon: float, *, alpha: float) -> ShiftResult:
        value = tightest(ch, alpha)
        return ShiftResult(satisfied=value <= epsilon * (1 + 1e-9), slack=epsilon - value)

    return Notion(name, check, tightest, context=("alpha",), label=f"def-{name}",
                  at_budget=lambda d, epsilon, **facts: {"epsilon": epsilon, "alpha": 0.25})


@pytest.fixture
def shift_notions() -> Iterator[tuple[Notion[ShiftResult], Notion[ShiftResult]]]:
    pair = (register_notion(_shift_notion("shift-one")), register_notion(_shift_notion("shift-two")))
    yield pair
    for n in pair:
        unregister_notion(n.name)


def test_notions_with_an_own_parameter_of_the_same_name_get_their_own_values(
        shift_notions: tuple[Notion[ShiftResult], Notion[ShiftResult]]) -> None:
    from ldpkit import FHR, GRR

    params = {"shift-one": {"alpha": 0.5}, "shift-two": {"alpha": 2.0}, "fldp": {"alpha": 1.0}}
    prof = accountant.privacy_profile(GRR(4, 1.0), params=params)
    assert prof.shift_one_epsilon == pytest.approx(1.5) and prof.shift_two_epsilon == pytest.approx(3.0)
    assert prof.fldp_epsilon == pytest.approx(1.0)  # GRR shares every output: FLDP at alpha = 1 is LDP
    # FHR states FLDP at alpha = 1/2: its alpha is FLDP's only
    fhr = accountant.privacy_profile(FHR(4, fldp_epsilon=1.0), params={"shift-one": {"alpha": 0.5}})
    assert fhr.fldp_epsilon == pytest.approx(1.0) and fhr.shift_two_epsilon is None
    assert fhr.shift_one_epsilon == math.inf  # FHR's own outputs rule inputs out: no LDP at any epsilon
    with pytest.raises(ValueError, match="takes alpha"):
        accountant.privacy_profile(GRR(4, 1.0), params={"shift-one": {"delta": 0.5}})
    with pytest.raises(ValueError, match="pass prior="):
        accountant.privacy_profile(GRR(4, 1.0), params={"lip": {"prior": [0.25] * 4}})
    with pytest.raises(ValueError, match="did you mean shift-one"):
        accountant.privacy_profile(GRR(4, 1.0), params={"shift-on": {"alpha": 0.5}})
    # and so do their promises
    one = contracts.parse("shift-one:epsilon=2,alpha=0.5", d=4)
    two = contracts.parse("shift-two:epsilon=2,alpha=2", d=4)
    assert one.satisfied(GRR(4, 1.0)) and not two.satisfied(GRR(4, 1.0))
    members = {m.name: m.guarantee.params for m in nm.scenario_members(nm.Scenario())}
    assert members["shift-one"]["alpha"] == members["shift-two"]["alpha"] == 0.25 and members["FLDP"]["alpha"] == 0.5
