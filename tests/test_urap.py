"""Tests for ldpkit.urap: the bits derived from ULDP's conditions, the accountant's closed forms at
large d, the exact variance against simulation, and the reductions to OUE.

The generic checks (sampling law against the channel, declared ULDP guarantee, unbiasedness with
the declared variance, aggregate simulation against the per-user path, report files, bad inputs)
run on every registered uRAP instance in ``tests/test_contract.py``; the ULDP and LIP closed forms
are compared with enumeration there and in ``tests/test_notions.py``.  uRAP has no peer
implementation: it is checked against its derivation and by simulation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from ldpkit import OUE, RAPPOR, accountant
from ldpkit.testing import Z
from ldpkit.urap import URAP, URAPChannel, urap_bits


def test_bits_solve_the_uldp_conditions() -> None:
    """phi from the sensitive pair's ratio e^eps, a_N the largest value the mixed pair allows (sympy)."""
    th, phi, aN, eps = sp.symbols("theta phi a_N epsilon", positive=True)
    phi_sol = sp.solve(sp.Eq(th * (1 - phi) / (phi * (1 - th)), sp.exp(eps)), phi)[0]
    # a sensitive holder against a non-sensitive one, on the output with only the sensitive bit set:
    # (theta / phi) / (1 - a_N) = e^eps at the largest a_N
    aN_sol = sp.solve(sp.Eq((th / phi_sol) / (1 - aN), sp.exp(eps)), aN)[0]
    assert sp.simplify(aN_sol - th * (1 - sp.exp(-eps))) == 0
    for e, t in [(0.3, 0.5), (1.0, 0.7), (4.0, 0.2)]:
        got = urap_bits(e, t)
        want = (t, float(phi_sol.subs({th: t, eps: e})), float(aN_sol.subs({th: t, eps: e})))
        np.testing.assert_allclose(got, want, rtol=1e-13)


@pytest.mark.parametrize("eps, theta", [(0.5, 0.5), (1.0, 0.8), (3.0, 0.3)])
def test_uldp_is_tight_and_a_larger_bit_breaks_it(eps: float, theta: float) -> None:
    u = URAP(6, eps, [0, 3], theta=theta)
    assert accountant.uldp_epsilon(u, sensitive=[0, 3]) == pytest.approx(eps, rel=1e-12)
    assert accountant.uldp_epsilon(u.channel().to_explicit(), sensitive=[0, 3]) == pytest.approx(eps, rel=1e-12)
    bumped = u.a.copy()
    bumped[1] *= 1 + 1e-6                    # a non-sensitive bit set a little more often
    assert accountant.uldp_epsilon(URAPChannel(bumped, u.b), sensitive=[0, 3]) > eps * (1 + 1e-9)
    # declaring a non-sensitive item sensitive: its set bit is an output only that sensitive input makes
    assert accountant.uldp_epsilon(u, sensitive=[0, 1, 3]) == math.inf
    assert accountant.ldp_epsilon(u) == math.inf and accountant.lip_epsilon(u, np.full(6, 1 / 6)) == math.inf


def test_closed_forms_at_a_domain_too_large_to_enumerate() -> None:
    """2**40 outputs: the ULDP value is still the budget, and verify works."""
    u = URAP(40, 1.5, np.arange(10))
    assert accountant.uldp_epsilon(u, sensitive=np.arange(10)) == pytest.approx(1.5, rel=1e-12)
    assert accountant.verify(u).satisfied


def test_every_item_sensitive_is_oue_and_rappor() -> None:
    oue = URAP(5, 1.2, np.arange(5))
    np.testing.assert_allclose(oue.a, OUE(5, 1.2).a, rtol=1e-15)
    np.testing.assert_allclose(oue.b, OUE(5, 1.2).b, rtol=1e-14)
    assert oue.epsilon == 1.2 and [g.notion for g in oue.guarantees()] == ["uldp", "ldp"]
    half = math.exp(0.6) / (1 + math.exp(0.6))
    rap = URAP(5, 1.2, np.arange(5), theta=half)
    np.testing.assert_allclose(rap.b, RAPPOR(5, 1.2).b, rtol=1e-13)


def test_variance_formula_and_simulation() -> None:
    """Exact variance against 600 aggregate-level draws; power against the variance with b = phi on
    the non-sensitive items (uRAP treated as OUE), which is rejected by a wide margin."""
    u = URAP(6, 1.0, [0, 1])
    counts = np.array([400, 100, 300, 120, 60, 20])
    n = counts.sum()
    a, b = u.a, u.b
    exact = (counts * a * (1 - a) + (n - counts) * b * (1 - b)) / (a - b) ** 2
    np.testing.assert_allclose(u.variance(counts), exact, rtol=1e-14)
    np.testing.assert_allclose(u.variance(counts)[2:], counts[2:] * (1 - a[2:]) / a[2:], rtol=1e-14)
    r = 600
    draws = u.simulate(counts, rng=7, trials=r)
    assert np.all(np.abs(draws.mean(axis=0) - counts) < Z * np.sqrt(exact / r))
    ratio = draws.var(axis=0, ddof=1) / exact
    assert np.all(np.abs(ratio - 1) < Z * math.sqrt(2 / (r - 1)))
    phi = b[0]
    wrong = (counts * a * (1 - a) + (n - counts) * phi * (1 - phi)) / (a - phi) ** 2
    assert np.all(np.abs(draws.var(axis=0, ddof=1)[2:] / wrong[2:] - 1) > 3 * Z * math.sqrt(2 / (r - 1)))


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="theta"):
        URAP(4, 1.0, [0], theta=1.0)
    with pytest.raises(ValueError, match="sensitive"):
        URAP(4, 1.0, [])
    with pytest.raises(ValueError, match="uldp_epsilon"):
        URAP(4, -1.0, [0])
