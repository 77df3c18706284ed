"""Every privacy notion through one path: the abstract closed-form test, and a notion added from outside.

* One parametrised test compares every closed form registered for every notion with exact
  enumeration, on every instance of the mechanism registry whose channel is of that kind.  The
  cases are built from the registries, so a closed form (or a mechanism) registered later is
  covered with no edit here.
* A notion defined only in this file (approximate ``(eps, delta)``-LDP, with its own closed form
  for unary channels) is registered the way the README says a notion module does it, and then
  works with :class:`~ldpkit.accountant.Guarantee`, :func:`~ldpkit.accountant.verify`,
  :func:`~ldpkit.accountant.privacy_profile` and the closed-form test, with no change to ldpkit.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from ldpkit import accountant
from ldpkit.accountant import CheckResult, Guarantee, Notion, register_notion, registered_notions, unregister_notion
from ldpkit.channels import Channel, ExplicitChannel, UnaryChannel
from ldpkit.family import families

#: a representative value of every context parameter a notion may need, by parameter name
CONTEXT = {
    "sensitive": lambda d: np.arange((d + 1) // 2),
    "prior": lambda d: np.random.default_rng(d).dirichlet(np.ones(d)),
    "budgets": lambda d: np.linspace(0.5, 2.0, d),
    "alpha": lambda d: 0.5,
    "delta": lambda d: 0.05,
    # distinct budgets per ordered pair, asymmetric: every pair of the context-aware notion differs
    "matrix": lambda d: 0.5 + np.arange(d * d, dtype=float).reshape(d, d) / (d * d),
}


def context_for(notion: Notion[Any], ch: Channel) -> dict[str, Any]:
    return {p: CONTEXT[p](ch.n_inputs) for p in notion.tightest_needs}


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


@pytest.fixture
def approx_notion() -> Iterator[Notion[ApproxResult]]:
    notion = register_notion(Notion("approx-ldp", check_approx, approx_epsilon, context=("delta",),
                                    profile_key="approx_epsilon", label="def-approx-ldp",
                                    description="approximate (eps, delta)-LDP, defined in a test"))
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
    # the privacy profile has its column, computed from the context given
    prof = accountant.privacy_profile(OUE(4, 1.0), delta=0.01)
    assert prof.approx_epsilon == pytest.approx(approx_epsilon(OUE(4, 1.0), 0.01))
    assert accountant.privacy_profile(OUE(4, 1.0)).approx_epsilon is None
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
