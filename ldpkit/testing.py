"""Statistical checks shared by the test suite and the book, and the mechanism contract.

Tolerances are derived from the known variance of what is checked, never tuned by hand:

* a mean of ``R`` i.i.d. draws with variance ``sigma^2`` is checked within ``z`` standard
  errors ``z sigma / sqrt(R)``;
* a sample variance of ``R`` near-normal draws has relative standard deviation
  ``sqrt(2 / (R - 1))``; the exact interval is ``chi^2_{R-1} / (R - 1)``
  (:func:`variance_ratio_interval`);
* an empirical distribution is compared with the declared one by Pearson's chi-square test
  (:func:`chi_square_gof`), at a stated false-alarm rate.

With the default ``Z = 5`` a correct implementation fails one two-sided comparison with
probability ``5.7e-7``; with fixed seeds every check is deterministic.

The **mechanism contract** (:func:`check_contract`) is what every example of every registered
family (:mod:`ldpkit.family`) must pass: its sampling code agrees with its accounting code (the
outputs of ``perturb`` follow ``channel()``), its channel meets its declared guarantees
exactly (:func:`ldpkit.accountant.verify`), its aggregate-level simulation agrees with the
per-user path, its estimator is unbiased with the variance it declares, it rejects bad
input, and its reports survive report files and batch aggregation exactly
(:func:`check_round_trip`).  Each check names, in its docstring, a plausible mistake it has the power to reject.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Optional, Union, cast

import numpy as np
from numpy.typing import ArrayLike

from ._rng import RNGLike, as_generator
from ._validation import (
    MAX_USERS,
    ArgumentTypeError,
    check_budget_vector,
    check_counts,
    check_distribution,
    check_positive_int,
    check_positive_real,
    check_probabilities,
    check_real,
    describe,
    real_array,
)
from .base import FrequencyOracle, SetValuedMechanism
from .channels import ExplicitChannel

__all__ = [
    "CONTRACT_ALPHA",
    "Z",
    "ContractReport",
    "VarianceCheck",
    "assert_matches_distribution",
    "assert_same_distribution",
    "assert_unbiased",
    "assert_variance",
    "check_contract",
    "check_round_trip",
    "check_guarantees",
    "check_rejects_bad_input",
    "check_sampling_matches_channel",
    "check_simulation_matches_per_user",
    "chi_square_gof",
    "input_kind",
    "InputKind",
    "Mechanism",
    "chi_square_noncentrality",
    "monte_carlo_variance",
    "random_padded_unary",
    "variance_ratio_interval",
]

#: what the contract checks, a frequency oracle over items or a mechanism over item sets
Mechanism = Union[FrequencyOracle[Any], SetValuedMechanism[Any]]

#: the kind of input a mechanism takes (``"items"`` or ``"itemsets"``), as its family states it
InputKind = Literal["items", "itemsets"]


def input_kind(mech: Mechanism, stated: Optional[InputKind] = None) -> InputKind:
    """``"items"`` for a :class:`~ldpkit.base.FrequencyOracle`, ``"itemsets"`` for a
    :class:`~ldpkit.base.SetValuedMechanism`; a ``stated`` kind must agree with the type.

    Examples
    --------
    >>> from ldpkit import GRR
    >>> from ldpkit.idue import oue_ps
    >>> from ldpkit.testing import input_kind
    >>> input_kind(GRR(3, 1.0)), input_kind(oue_ps(3, 1.0, 2))
    ('items', 'itemsets')
    """
    if isinstance(mech, FrequencyOracle):
        kind: InputKind = "items"
    elif isinstance(mech, SetValuedMechanism):
        kind = "itemsets"
    else:
        raise ArgumentTypeError(f"expected a FrequencyOracle or a SetValuedMechanism, got {describe(mech)}")
    if stated is not None and stated != kind:
        raise ValueError(f"{mech!r} takes {kind}, not {stated!r}")
    return kind


#: standard errors allowed by the mean and variance checks (two-sided false alarm 5.7e-7)
Z = 5.0

#: family-wise false-alarm rate of the distribution checks of the contract
CONTRACT_ALPHA = 1e-6


# ============================================================================ moments
def assert_unbiased(samples: np.ndarray, truth: np.ndarray, variance: np.ndarray, z: float = Z) -> None:
    """Mean of ``R`` i.i.d. estimates (rows) is within ``z`` standard errors ``sqrt(variance / R)`` of ``truth``.

    Power: an estimator off by ``delta`` fails once ``|delta| > 2 z sqrt(variance / R)``
    with probability above 0.98 (for example, subtracting ``n p`` instead of ``n q`` in a pure
    estimator shifts every estimate by ``n``).
    """
    samples, z = real_array(samples, "samples"), check_positive_real(z, "z")
    r = samples.shape[0]
    err = np.abs(samples.mean(axis=0) - real_array(truth, "truth"))
    tol = z * np.sqrt(real_array(variance, "variance") / r)
    bad = err > tol
    assert not np.any(bad), f"bias at items {np.flatnonzero(bad)[:5]}: err {err[bad][:5]} > tol {tol[bad][:5]}"


def assert_variance(samples: np.ndarray, variance: np.ndarray, z: float = Z) -> None:
    """Per-item sample variance of ``R`` estimates matches the exact variance.

    For a near-normal estimator the sample variance has relative standard deviation
    ``sqrt(2/(R-1))``; every item must lie within ``z`` of those.  Power: with ``R = 400`` the
    band is ``+-35%``, so dropping the ``c_i`` term of a variance formula where it accounts
    for half the variance is rejected.
    """
    samples, z = real_array(samples, "samples"), check_positive_real(z, "z")
    r = samples.shape[0]
    ratio = samples.var(axis=0, ddof=1) / real_array(variance, "variance")
    tol = z * math.sqrt(2.0 / (r - 1))
    bad = np.abs(ratio - 1.0) >= tol
    assert not np.any(bad), f"variance ratio at items {np.flatnonzero(bad)[:5]}: {ratio[bad][:5]} outside 1 +- {tol:.3f}"


def assert_same_distribution(a: np.ndarray, b: np.ndarray, variance: np.ndarray, z: float = Z) -> None:
    """Two independent samples of estimates (rows) agree in mean and variance.

    Means: ``|mean_a - mean_b| < z sqrt(var/R_a + var/R_b)`` per item.  Variances: the
    item-averaged log-ratio of sample variances has standard deviation at most
    ``sqrt(2/(R_a-1) + 2/(R_b-1))`` whatever the correlation between items.
    """
    a, b = real_array(a, "a"), real_array(b, "b")
    variance, z = real_array(variance, "variance"), check_positive_real(z, "z")
    ra, rb = a.shape[0], b.shape[0]
    diff = np.abs(a.mean(axis=0) - b.mean(axis=0))
    tol = z * np.sqrt(variance / ra + variance / rb)
    assert np.all(diff < tol), f"means differ: {diff[diff >= tol][:5]} >= {tol[diff >= tol][:5]}"
    ratio = a.var(axis=0, ddof=1) / b.var(axis=0, ddof=1)
    rel = z * math.sqrt(2.0 / (ra - 1) + 2.0 / (rb - 1))
    assert abs(float(np.log(ratio).mean())) < rel, f"variances differ: mean log-ratio {np.log(ratio).mean():.4f}"


def variance_ratio_interval(repeats: int, alpha: float) -> tuple[float, float]:
    """Two-sided ``1 - alpha`` interval of ``s^2 / sigma^2`` for ``repeats`` normal draws.

    ``(repeats - 1) s^2 / sigma^2 ~ chi^2_{repeats - 1}``.
    """
    from scipy import stats

    r = check_positive_int(repeats, "repeats", minimum=2)
    alpha = check_real(alpha, "alpha", 0.0, 1.0, low_open=True, high_open=True)
    lo = stats.chi2.ppf(alpha / 2, r - 1) / (r - 1)
    hi = stats.chi2.ppf(1 - alpha / 2, r - 1) / (r - 1)
    return float(lo), float(hi)


@dataclass(frozen=True)
class VarianceCheck:
    """Result of :func:`monte_carlo_variance` for one mechanism and one path.

    Attributes
    ----------
    exact
        Exact per-item variance (``mech.variance(counts)``).
    empirical
        Per-item sample variance over the repeats.
    mean
        Per-item mean of the estimates.
    ratio_z
        ``|mean(empirical / exact) - 1| / sqrt(2 / (R - 1))``: the item-averaged ratio in
        units of the standard deviation of one ratio (averaging cannot increase it).
    bias_z
        Largest ``|mean - c| / sqrt(exact / R)`` over items.
    ratio_range
        Smallest and largest per-item ratio, to compare with the chi-square interval.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpkit import GRR
    >>> from ldpkit.testing import monte_carlo_variance
    >>> grr, counts = GRR(3, 1.0), np.array([60, 30, 10])
    >>> check = monte_carlo_variance(grr.simulate(counts, rng=0, trials=200), counts, grr.variance(counts))
    >>> [round(float(v), 1) for v in check.exact], check.ratio_z < 5, check.bias_z < 5
    ([160.9, 143.4, 131.8], True, True)
    """

    exact: np.ndarray
    empirical: np.ndarray
    mean: np.ndarray
    ratio_z: float
    bias_z: float
    ratio_range: tuple[float, float]


def monte_carlo_variance(samples: np.ndarray, counts: np.ndarray, exact: np.ndarray) -> VarianceCheck:
    """Compare ``R`` seeded estimates (rows) with the exact variance and the true counts.

    The Foundations chapter runs this for every classic oracle, on the per-user path and on
    the aggregate simulator (:ref:`sec-variance-check`).
    """
    samples, exact, counts = real_array(samples, "samples"), real_array(exact, "exact"), real_array(counts, "counts")
    r = samples.shape[0]
    if r < 2:
        raise ValueError(f"need at least 2 repeats, got {r}")
    emp = samples.var(axis=0, ddof=1)
    ratio = emp / exact
    mean = samples.mean(axis=0)
    return VarianceCheck(
        exact=exact,
        empirical=emp,
        mean=mean,
        ratio_z=float(abs(ratio.mean() - 1.0) / math.sqrt(2.0 / (r - 1))),
        bias_z=float(np.max(np.abs(mean - counts) / np.sqrt(exact / r))),
        ratio_range=(float(ratio.min()), float(ratio.max())),
    )


# ============================================================================ distributions
def chi_square_gof(observed: ArrayLike, probs: ArrayLike, min_expected: float = 5.0) -> tuple[float, int, float]:
    """Pearson's chi-square test of observed counts against cell probabilities.

    Cells with expected count below ``min_expected`` are pooled into one cell (so the
    chi-square approximation holds).  An observation in a cell of probability zero makes the
    p-value exactly 0.  Returns ``(statistic, degrees_of_freedom, p_value)``.
    """
    from scipy import stats

    obs = check_counts(observed, name="observed").astype(float)
    p = check_distribution(probs, obs.size, "probs")
    min_expected = check_real(min_expected, "min_expected", 0.0)
    if obs.shape != p.shape or obs.ndim != 1:
        raise ValueError(f"observed and probs must be 1-d of equal length, got {obs.shape} and {p.shape}")
    n = obs.sum()
    if n <= 0:
        raise ValueError("observed counts are all zero")
    if np.any(obs[p <= 0] > 0):
        return math.inf, 0, 0.0
    expected = n * p
    small = expected < min_expected
    e = np.append(expected[~small], expected[small].sum())
    o = np.append(obs[~small], obs[small].sum())
    keep = e > 0
    e, o = e[keep], o[keep]
    dof = int(e.size - 1)
    if dof < 1:
        return 0.0, 0, 1.0
    stat = float(np.sum((o - e) ** 2 / e))
    return stat, dof, float(stats.chi2.sf(stat, dof))


def chi_square_noncentrality(probs: ArrayLike, alt_probs: ArrayLike, n: int) -> float:
    """Noncentrality ``n sum (p'_y - p_y)^2 / p_y`` of the chi-square test when the truth is ``alt_probs``.

    With ``k`` cells the statistic is then approximately noncentral chi-square with ``k - 1``
    degrees of freedom and this noncentrality: the power of :func:`chi_square_gof` against a
    named mistake follows from it (``scipy.stats.ncx2``).
    """
    p = check_distribution(probs, name="probs")
    q = check_probabilities(alt_probs, "alt_probs", p.shape)
    n = check_positive_int(n, "n", maximum=MAX_USERS)
    pos = p > 0
    return float(n * np.sum((q[pos] - p[pos]) ** 2 / p[pos]))


def assert_matches_distribution(observed: ArrayLike, probs: ArrayLike, alpha: float, what: str = "") -> float:
    """Chi-square test at false-alarm rate ``alpha``; returns the p-value."""
    stat, dof, pval = chi_square_gof(observed, probs)
    assert pval >= alpha, f"{what}: chi-square {stat:.1f} on {dof} dof, p = {pval:.3g} < {alpha:g}"
    return pval


# ============================================================================ item-set helper
def random_padded_unary(
    rng: RNGLike, budgets: ArrayLike, dummy_budget: float, m: int, ell: int
) -> tuple[np.ndarray, np.ndarray]:
    """Random unary ``(a, b)`` for ``m`` real items and ``ell`` dummies sharing one level.

    Draws log-ratios ``u, v`` uniformly, then scales them so that the padded single-item
    channel is exactly MinID-LDP on every pair of distinct padded items (the dummy level's
    own pair only when ``ell >= 2``), with the dummies at ``dummy_budget``.  The ID-LDP
    chapter uses such mechanisms, which are not solver outputs, to test Theorem 4
    (:prf:ref:`thm-idue-ps`).
    """
    from .idue import ab_from_log_ratios

    gen = as_generator(rng)
    m = check_positive_int(m, "m")
    ell = check_positive_int(ell, "ell")
    eps = check_budget_vector(budgets, m, "budgets")
    dummy_budget = check_positive_real(dummy_budget, "dummy_budget")
    e_all = np.append(eps, dummy_budget)
    k = m + 1
    u, v = gen.uniform(0.05, 1.5, k), gen.uniform(0.05, 1.5, k)
    r_all = np.minimum.outer(e_all, e_all)
    distinct = ~np.eye(k, dtype=bool)
    distinct[m, m] = ell >= 2
    scale = ((u[:, None] + v[None, :]) / r_all)[distinct].max()
    a, b = ab_from_log_ratios(u / scale, v / scale)
    return np.append(a[:m], np.full(ell, a[m])), np.append(b[:m], np.full(ell, b[m]))


# ============================================================================ the contract
@dataclass(frozen=True)
class ContractReport:
    """What :func:`check_contract` measured for one mechanism (every check passed if returned).

    Examples
    --------
    >>> from ldpkit import GRR
    >>> from ldpkit.testing import check_contract
    >>> report = check_contract(GRR(3, 1.0), samples_per_input=2_000, trials=50)
    >>> report.mechanism, report.rows_checked, report.guarantees
    ('GRR(d=3, epsilon=1)', 3, ("Guarantee('ldp', epsilon=1.0)",))
    """

    mechanism: str
    rows_checked: int
    smallest_p_value: float
    guarantees: tuple[str, ...]
    trials: int


def _explicit(mech: Mechanism) -> ExplicitChannel:
    from .accountant import enumerate_channel

    return enumerate_channel(mech.channel(), f"contract of {mech!r}")


def check_sampling_matches_channel(
    mech: Mechanism, samples_per_input: int = 20_000, alpha: float = CONTRACT_ALPHA, rng: RNGLike = 0
) -> float:
    """The empirical output law of ``perturb`` on each input matches its row of ``channel()``.

    Uses ``mech.sample_outputs(x, size, rng)`` (reports mapped to the columns of
    ``channel().to_explicit()``) and a chi-square test per input at level
    ``alpha / n_inputs`` (Bonferroni: family-wise false-alarm rate ``alpha``).  Power: the
    tests in ``tests/test_contract.py`` compute the noncentrality of named mistakes (GRR with
    ``p`` and ``q`` swapped, a unary encoding whose bits use the budget ``eps/2``) and show
    that they are rejected.  Returns the smallest p-value.
    """
    gen = as_generator(rng)
    ch = _explicit(mech)
    rows = ch.n_inputs
    smallest = 1.0
    for x in range(rows):
        out = np.asarray(mech.sample_outputs(x, samples_per_input, gen))
        if out.shape != (samples_per_input,):
            raise AssertionError(f"{mech!r}: sample_outputs returned shape {out.shape}")
        if out.size and (out.min() < 0 or out.max() >= ch.n_outputs):
            raise AssertionError(f"{mech!r}: output index outside 0..{ch.n_outputs - 1}")
        counts = np.bincount(out, minlength=ch.n_outputs)
        pval = assert_matches_distribution(counts, ch.matrix[x], alpha / rows, f"{mech!r}, input {x}")
        smallest = min(smallest, pval)
    return smallest


def check_guarantees(mech: Mechanism) -> tuple[str, ...]:
    """The channel meets every declared guarantee exactly (enumeration or closed form)."""
    from .accountant import verify

    report = verify(mech)
    failed = [(g, r) for g, r in report if not r.satisfied]
    assert not failed, f"{mech!r} violates {failed[0][0]!r}: slack {failed[0][1].slack!r}"
    return tuple(repr(g) for g, _ in report)


def _item_counts(d: int, n: int) -> np.ndarray:
    """A skewed population over ``d`` items with every item held by someone."""
    w = 1.0 / np.arange(1, d + 1)
    counts = np.floor(n * w / w.sum()).astype(np.int64)
    counts = np.maximum(counts, 1)
    counts[0] += n - counts.sum()
    return cast("np.ndarray", counts)


def _itemset_population(d: int, ell: int, n: int) -> list[list[int]]:
    """Users holding sets of at most ``ell`` items (so Padding-and-Sampling is unbiased)."""
    from .sets import all_itemsets

    sets = [s for s in all_itemsets(d) if len(s) <= ell]
    return [sets[u % len(sets)] for u in range(n)]


def check_simulation_matches_per_user(
    mech: Mechanism, inputs: Optional[InputKind] = None, n: int = 2_000, trials: int = 300, rng: RNGLike = 0
) -> None:
    """Aggregate-level simulation agrees with per-user simulation; both unbiased with the declared variance.

    Draws ``trials`` estimates by ``simulate`` (from the true counts) and ``trials`` by the
    per-user path (``perturb`` then ``estimate``), and checks: equal means and variances
    (:func:`assert_same_distribution`), unbiasedness of each (:func:`assert_unbiased`), and
    the sample variance of the simulator against ``variance`` (:func:`assert_variance`).
    Power: a simulator that draws each support count as one binomial of the *total* ``n``
    (ignoring the holders' higher probability) is biased by ``c_i (p - q)`` per item.
    """
    gen = as_generator(rng)
    trials = check_positive_int(trials, "trials", minimum=10)
    if isinstance(mech, FrequencyOracle):
        input_kind(mech, inputs)
        counts = _item_counts(mech.d, n)
        users = np.repeat(np.arange(mech.d), counts)
        sim = mech.simulate(counts, rng=gen, trials=trials)
        per = np.stack([mech.estimate(mech.perturb(users, gen)) for _ in range(trials)])
        truth = counts.astype(float)
        var = mech.variance(counts)
    else:
        input_kind(mech, inputs)
        sets = _itemset_population(mech.d, mech.ell, n)
        sim = mech.simulate(sets, rng=gen, trials=trials)
        per = np.stack([mech.estimate(mech.perturb(sets, gen)) for _ in range(trials)])
        truth = mech.expected_counts(sets)
        var = mech.variance(sets)
    assert np.all(var > 0), f"{mech!r}: non-positive declared variance {var}"
    assert_unbiased(sim, truth, var)
    assert_unbiased(per, truth, var)
    assert_variance(sim, var)
    assert_same_distribution(sim, per, var)


def _raises(func: Any, *args: Any, **kwargs: Any) -> bool:
    try:
        func(*args, **kwargs)
    except (ValueError, TypeError):
        return True
    return False


def check_rejects_bad_input(mech: Mechanism, inputs: Optional[InputKind] = None) -> None:
    """Items outside the domain, non-integers, empty input, bad counts and bad seeds are refused."""
    d = mech.d
    if input_kind(mech, inputs) == "items":
        cases: Sequence[tuple[str, Any, tuple[Any, ...], dict[str, Any]]] = [
            ("item d", mech.perturb, ([0, d],), {}),
            ("item -1", mech.perturb, ([-1, 0],), {}),
            ("non-integer item", mech.perturb, ([0.5],), {}),
            ("empty items", mech.perturb, ([],), {}),
            ("bad rng", mech.perturb, ([0],), {"rng": "seed"}),
            ("counts of wrong length", mech.variance, ([1] * (d + 1),), {}),
            ("negative count", mech.variance, ([-1] + [1] * (d - 1),), {}),
            ("all-zero counts", mech.simulate, ([0] * d,), {}),
            ("zero trials", mech.simulate, ([1] * d,), {"trials": 0}),
        ]
    else:
        cases = [
            ("item d", mech.perturb, ([[0, d]],), {}),
            ("repeated item", mech.perturb, ([[0, 0]],), {}),
            ("empty user list", mech.perturb, ([],), {}),
            ("bad rng", mech.perturb, ([[0]],), {"rng": "seed"}),
            ("zero trials", mech.simulate, ([[0]],), {"trials": 0}),
        ]
    accepted = [name for name, func, args, kwargs in cases if not _raises(func, *args, **kwargs)]
    assert not accepted, f"{mech!r} accepted bad input: {accepted}"


def check_round_trip(mech: Mechanism, inputs: Optional[InputKind] = None, n: int = 600, rng: RNGLike = 0) -> None:
    """Reports survive files and batches exactly: the own-data path of every family.

    Three uneven batches of reports are aggregated (i) in memory with
    :class:`~ldpkit.aggregation.Aggregator`, (ii) through report files of both forms (binary and
    CSV), with the aggregator's state saved and resumed after the first file; each estimate
    must equal ``estimate`` of all reports at once exactly, and every loaded batch must
    hold the same reports.  A family defined by ldpkit must also rebuild from the file alone
    (:meth:`~ldpkit.base.FrequencyOracle.arguments`).  The plug-in variance must be finite and
    non-negative.  Power: a codec that drops a column or narrows a value it cannot hold, an
    aggregate that is not a sum over users, or an ``arguments`` that forgets a parameter each
    break an equality here.
    """
    import os
    import tempfile

    from .aggregation import Aggregator
    from .reportio import codec_for, concat_reports, load_reports, open_reports, save_reports

    gen = as_generator(rng)
    if input_kind(mech, inputs) == "items":
        population: Any = gen.integers(0, mech.d, size=n)
    else:
        population = _itemset_population(mech.d, getattr(mech, "ell"), n)
    cuts = [0, n // 6, n // 2, n]
    batches = [mech.perturb(population[a:b], gen) for a, b in zip(cuts[:-1], cuts[1:])]
    everything = concat_reports(batches)
    expected = np.asarray(mech.estimate(everything))
    agg = Aggregator(mech)
    for batch in batches:
        agg.add(batch)
    est = agg.estimate()
    assert np.array_equal(est.counts, expected), f"{mech!r}: estimate after batches {est.counts} != one-shot {expected}"
    assert np.all(np.isfinite(est.variance)) and np.all(est.variance >= 0), f"{mech!r}: plug-in variance {est.variance}"
    own = type(mech).__module__.split(".")[0] == "ldpkit"
    with tempfile.TemporaryDirectory() as tmp:
        for suffix in (".ldpr", ".csv"):
            paths = [os.path.join(tmp, f"batch{k}{suffix}") for k in range(len(batches))]
            for path, batch in zip(paths, batches):
                save_reports(path, batch, mech, data="contract round trip")
            for path, batch in zip(paths, batches):
                back = load_reports(path, mechanism=mech)
                codec = codec_for(batch)
                same = all(np.array_equal(a, b) for a, b in zip(codec.to_columns(batch), codec.to_columns(back)))
                assert same, f"{mech!r}: {os.path.basename(path)} does not hold the reports written"
            state = os.path.join(tmp, f"state{suffix}.json")
            first = Aggregator(mech).add_file(paths[0])
            first.save(state)
            resumed = Aggregator.load(state, mechanism=mech) if not own else Aggregator.load(state)
            resumed.add_files(paths[1:])
            got = resumed.estimate().counts
            assert np.array_equal(got, expected), f"{mech!r}: estimate through {suffix} files {got} != one-shot {expected}"
            if own:
                rebuilt = open_reports(paths[0]).mechanism
                assert rebuilt == mech, f"{mech!r}: the file rebuilds {rebuilt!r}"


def check_contract(
    mech: Mechanism,
    inputs: Optional[InputKind] = None,
    rng: RNGLike = 0,
    samples_per_input: int = 20_000,
    trials: int = 300,
) -> ContractReport:
    """Run every contract check on ``mech``; raises ``AssertionError`` naming the first failure.

    Examples
    --------
    >>> import ldpkit
    >>> from ldpkit.testing import check_contract
    >>> check_contract(ldpkit.GRR(3, 1.0), samples_per_input=2_000, trials=50).rows_checked
    3
    """
    gen = as_generator(rng)
    check_rejects_bad_input(mech, inputs)
    guarantees = check_guarantees(mech)
    pmin = check_sampling_matches_channel(mech, samples_per_input, rng=gen)
    check_simulation_matches_per_user(mech, inputs, trials=trials, rng=gen)
    check_round_trip(mech, inputs, rng=gen)
    return ContractReport(
        mechanism=repr(mech),
        rows_checked=_explicit(mech).n_inputs,
        smallest_p_value=pmin,
        guarantees=guarantees,
        trials=trials,
    )
