# mypy: disable-error-code="arg-type, call-overload, list-item"
# (the tables pass wrong types on purpose)
"""Bad-input patterns, tested over every entry point of each pattern (not instance by instance).

A bad-input probe found silent results in six patterns; each section below takes one pattern and
runs every entry point found for it; each entry point uses the validation layer's typed checks
(:mod:`ldpkit._validation`), and every row asserts the package's error policy (the exception
class, the argument named, the value shown as given).

1. a probability vector holding NaN (or strings, or of the wrong length) reaching a computation;
2. a string (or a bool) accepted where a number is expected: ``float("1.5")`` succeeds silently;
3. floats accepted as item indices by a set-valued container (:func:`~ldpkit._validation.check_items`
   with ``strict=True`` refuses every non-integer dtype, even whole-valued);
4. an integer transform that wraps around in int64 although it promises exactness
   (:func:`~ldpkit._validation.check_int64_signed_sums` checks the bound before the work);
5. closed forms that overflow inside their own stated budget range;
6. a false declared guarantee: accepted at construction by decision, reported by ``verify``.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ldpkit
import ldpkit.experiments.idldp
import ldpkit.experiments.ipldp
import ldpkit.experiments.lip
import ldpkit.experiments.lip_paper
import ldpkit.hadamard
import ldpkit.iprr
import ldpkit.olh
import ldpkit.testing
from ldpkit import GRR, OUE, URR, ArgumentTypeError, ChannelOracle, accountant, budgets, metrics, postprocess
from ldpkit import _validation as v
from ldpkit._validation import EPS_MAX, INT64_MAX

NAN = math.nan
BIG = 10**400


def assert_refused(call: Callable[[], Any], arg: str, given: str, wrong_type: bool) -> None:
    """The package's error policy: ArgumentTypeError for a wrong type, else a plain ValueError, the message
    naming the argument and showing the offending value as given."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError) as info:
            call()
    err = info.value
    assert isinstance(err, ArgumentTypeError) == wrong_type, f"{type(err).__name__}: {err}"
    assert arg in str(err), f"the message does not name {arg!r}: {err}"
    assert given in str(err), f"the message does not show {given!r}: {err}"


def _grr3() -> GRR:
    return GRR(3, 1.0)


def _explicit3() -> ldpkit.ExplicitChannel:
    return _grr3().channel()


# =============================================================================== 1. probability vectors
#: (id, call with a bad probability vector, argument named, value shown, wrong type)
PROBABILITY_VECTORS: list[Any] = [
    # channel methods (ldpkit/channels.py)
    pytest.param(lambda: _explicit3().output_distribution([NAN, 0.5, 0.5]), "prior", "nan", False,
                 id="ExplicitChannel.output_distribution-nan"),
    pytest.param(lambda: _explicit3().output_distribution(["0.5", "0.5", "0"]), "prior", "<U3", True,
                 id="ExplicitChannel.output_distribution-str"),
    pytest.param(lambda: _explicit3().output_distribution([0.5, 0.5]), "prior", "length 2", False,
                 id="ExplicitChannel.output_distribution-length"),
    # statistical checks (ldpkit/testing.py)
    pytest.param(lambda: ldpkit.testing.chi_square_gof([5, 5], [NAN, 0.5]), "probs", "nan", False,
                 id="testing.chi_square_gof-nan"),
    pytest.param(lambda: ldpkit.testing.assert_matches_distribution([5, 5], [NAN, 0.5], 0.01), "probs", "nan", False,
                 id="testing.assert_matches_distribution-nan"),
    pytest.param(lambda: ldpkit.testing.chi_square_noncentrality([NAN, 0.5], [0.4, 0.6], 10), "probs", "nan", False,
                 id="testing.chi_square_noncentrality-probs-nan"),
    pytest.param(lambda: ldpkit.testing.chi_square_noncentrality([0.5, 0.5], [NAN, 0.6], 10), "alt_probs", "nan",
                 False, id="testing.chi_square_noncentrality-alt-nan"),
    # every other entry point taking a prior or a probability vector: validated already (regressions)
    pytest.param(lambda: accountant.lip_epsilon(_grr3(), [NAN, 0.5, 0.5]), "prior", "nan", False,
                 id="accountant.lip_epsilon"),
    pytest.param(lambda: accountant.check_lip(_grr3(), 1.0, prior=[NAN, 0.5, 0.5]), "prior", "nan", False,
                 id="accountant.check_lip"),
    pytest.param(lambda: accountant.mutual_information(_grr3(), [NAN, 0.5, 0.5]), "prior", "nan", False,
                 id="accountant.mutual_information"),
    pytest.param(lambda: accountant.check_mip(_grr3(), 1.0, prior=[NAN, 0.5, 0.5]), "prior", "nan", False,
                 id="accountant.check_mip"),
    pytest.param(lambda: accountant.privacy_profile(_grr3(), prior=[NAN, 0.5, 0.5]), "prior", "nan", False,
                 id="accountant.privacy_profile"),
    pytest.param(lambda: ldpkit.lip.bayes_risk(_explicit3(), [NAN, 0.5, 0.5]), "prior", "nan", False,
                 id="lip.bayes_risk"),
    pytest.param(lambda: ldpkit.lip.optimal_kary_lip([NAN, 0.5, 0.5], 1.0), "prior", "nan", False,
                 id="lip.optimal_kary_lip"),
    pytest.param(lambda: ldpkit.lip.per_user_mse(0.1, 0.2, NAN), "prior", "nan", False, id="lip.per_user_mse"),
    pytest.param(lambda: ldpkit.lip.optimal_lip_local([NAN, 0.3], 1.0), "priors", "nan", False,
                 id="lip.optimal_lip_local"),
    pytest.param(lambda: ldpkit.BinaryRR(0.1, 0.2).mmse([NAN, 0.5]), "priors", "nan", False, id="BinaryRR.mmse"),
    pytest.param(lambda: ldpkit.iprr.mle_keep_or_resample([5, 3, 2], 0.5, [NAN, 0.5, 0.5]), "pi", "nan", False,
                 id="iprr.mle_keep_or_resample-pi"),
    pytest.param(lambda: postprocess.em_estimate(_explicit3(), [3, 2, 1], init=[NAN, 0.5, 0.5]), "init", "nan",
                 False, id="postprocess.em_estimate-init"),
    pytest.param(lambda: postprocess.em_estimate([[NAN, 1.0], [0.5, 0.5]], [3, 2]), "channel matrix", "nan", False,
                 id="postprocess.em_estimate-channel"),
    pytest.param(lambda: metrics.kl_divergence([NAN, 1.0], [0.5, 0.5]), "p", "nan", False, id="metrics.kl-p"),
    pytest.param(lambda: metrics.kl_divergence([0.5, 0.5], [NAN, 1.0]), "q", "nan", False, id="metrics.kl-q"),
    pytest.param(lambda: budgets.apportion(5, [NAN, 1.0]), "shares", "nan", False, id="budgets.apportion"),
    pytest.param(lambda: budgets.random_levels(5, [1.0, 2.0], [NAN, 1.0], rng=0), "shares", "nan", False,
                 id="budgets.random_levels"),
    pytest.param(lambda: ldpkit.channels.mix_with_uniform(_explicit3(), NAN), "theta", "nan", False,
                 id="channels.mix_with_uniform"),
    pytest.param(lambda: ldpkit.channels.ExplicitChannel(np.array([[NAN, 1.0], [0.5, 0.5]])), "channel matrix",
                 "nan", False, id="channels.ExplicitChannel"),
]


@pytest.mark.parametrize(("call", "arg", "given", "wrong_type"), PROBABILITY_VECTORS)
def test_probability_vectors_are_validated(call: Callable[[], Any], arg: str, given: str, wrong_type: bool) -> None:
    assert_refused(call, arg, given, wrong_type)


@pytest.mark.parametrize("bad", [[NAN, 0.5, 0.5], [0.5, math.inf, -math.inf], [-0.5, 1.0, 0.5], [0.5, 0.5, 0.5]])
def test_check_distribution_refuses_what_a_prior_cannot_be(bad: list[float]) -> None:
    with pytest.raises(ValueError, match="prior"):
        v.check_distribution(bad, 3)


def test_output_distribution_of_a_valid_prior_is_unchanged() -> None:
    ch = _explicit3()
    np.testing.assert_allclose(ch.output_distribution([0.2, 0.3, 0.5]), np.array([0.2, 0.3, 0.5]) @ ch.matrix)


# =============================================================================== 2. strings for numbers
@pytest.mark.parametrize(
    ("value", "text", "wrong_type"),
    [("0.5", "'0.5'", True), (b"0.5", "b'0.5'", True), (True, "True", True), (None, "None", True),
     (0.5 + 0j, "(0.5+0j)", True), (np.array(0.5), "array(0.5)", True), ([0.5], "[0.5]", True),
     (NAN, "nan", False), (math.inf, "inf", False), (BIG, "1000000000", False), (0.0, "0.0", False),
     (1.5, "1.5", False), (-1, "-1", False)],
)
def test_check_real_is_typed(value: Any, text: str, wrong_type: bool) -> None:
    assert_refused(lambda: v.check_real(value, "keep", 0.0, 1.0, low_open=True), "keep", text, wrong_type)


@pytest.mark.parametrize(
    ("value", "low", "high", "low_open", "high_open"),
    [(1, 0.0, 1.0, True, False), (np.float32(0.25), 0.0, 1.0, False, False), (np.int64(3), 3, math.inf, False, False),
     (0.0, 0.0, 1.0, False, True), (-1e308, -math.inf, 0.0, False, False), (2**60, 0.0, math.inf, True, False)],
)
def test_check_real_accepts_reals_in_its_interval(value: Any, low: float, high: float, low_open: bool,
                                                  high_open: bool) -> None:
    out = v.check_real(value, "x", low, high, low_open=low_open, high_open=high_open)
    assert type(out) is float and out == float(value)


def test_check_real_states_its_interval() -> None:
    with pytest.raises(ValueError, match=re.escape("x must be a finite real number in (0, 1), got 1.0")):
        v.check_real(1.0, "x", 0.0, 1.0, low_open=True, high_open=True)
    with pytest.raises(ValueError, match=re.escape("in [0, inf), got -0.5")):
        v.check_real(-0.5, "x", 0.0)


_COUNTS = [50, 40, 30, 20, 10, 5, 3, 2]


def _one_repeat() -> Any:
    from ldpkit.experiments import RunConfig

    return RunConfig(repeats=1, seed=0)


#: (call with a string, or another non-number, where a number is expected; argument; value shown; wrong type)
NUMBERS: list[Any] = [
    # entry points that used float(x) or np.asarray(x, dtype=float) on a user argument
    pytest.param(lambda: ldpkit.iprr.mle_keep_or_resample([5, 3, 2], "0.5", [1 / 3] * 3), "keep", "'0.5'", True,
                 id="iprr.mle_keep_or_resample-keep-str"),
    pytest.param(lambda: ldpkit.iprr.mle_keep_or_resample([5, 3, 2], True, [1 / 3] * 3), "keep", "True", True,
                 id="iprr.mle_keep_or_resample-keep-bool"),
    pytest.param(lambda: ldpkit.testing.variance_ratio_interval(10, "0.05"), "alpha", "'0.05'", True,
                 id="testing.variance_ratio_interval-alpha"),
    pytest.param(lambda: ldpkit.testing.chi_square_noncentrality([0.5, 0.5], [0.4, 0.6], "10"), "n", "'10'", True,
                 id="testing.chi_square_noncentrality-n"),
    pytest.param(lambda: ldpkit.testing.chi_square_noncentrality(["0.5", "0.5"], [0.4, 0.6], 10), "probs", "<U3",
                 True, id="testing.chi_square_noncentrality-probs-str"),
    pytest.param(lambda: ldpkit.testing.chi_square_gof(["5", "5"], [0.5, 0.5]), "observed", "<U1", True,
                 id="testing.chi_square_gof-observed-str"),
    pytest.param(lambda: ldpkit.testing.chi_square_gof([5, 5], [0.5, 0.5], min_expected="5"), "min_expected", "'5'",
                 True, id="testing.chi_square_gof-min_expected"),
    pytest.param(lambda: ldpkit.testing.random_padded_unary(0, [1.0, 2.0], "1.5", 2, 1), "dummy_budget", "'1.5'",
                 True, id="testing.random_padded_unary-dummy_budget"),
    pytest.param(lambda: ldpkit.testing.random_padded_unary(0, ["1.0", "2.0"], 1.5, 2, 1), "budgets", "<U3", True,
                 id="testing.random_padded_unary-budgets"),
    pytest.param(lambda: ldpkit.testing.assert_unbiased(np.ones((3, 2)), np.ones(2), np.ones(2), z="5"), "z", "'5'",
                 True, id="testing.assert_unbiased-z"),
    pytest.param(lambda: ldpkit.testing.assert_unbiased(np.array([["1"], ["2"]]), np.ones(1), np.ones(1)), "samples",
                 "<U1", True, id="testing.assert_unbiased-samples"),
    pytest.param(lambda: ldpkit.experiments.lip.flips("LDP", [0.3], "1.0"), "epsilons", "<U3", True,
                 id="experiments.lip.flips-epsilon"),
    pytest.param(lambda: ldpkit.experiments.lip.bayes_mse("Opt-LIP", [0.3], "1.0"), "epsilons", "<U3", True,
                 id="experiments.lip.bayes_mse-epsilon"),
    pytest.param(lambda: ldpkit.olh.seed_parameters(np.array(["1", "2"], dtype=object)), "seeds", "'1'", True,
                 id="olh.seed_parameters-str-seeds"),
    pytest.param(lambda: ldpkit.olh.seed_parameters(np.array([1.7, 2.0], dtype=object)), "seeds", "1.7", True,
                 id="olh.seed_parameters-truncated-float-seed"),
    pytest.param(lambda: ldpkit.experiments.lip_paper.compare_with_paper([0.3], ["1.0"]), "epsilons", "<U3", True,
                 id="experiments.lip_paper.compare_with_paper-epsilons"),
    pytest.param(lambda: ldpkit.experiments.ipldp.make_oracle("KRR", ["1.0", "2.0"]), "epsilons", "<U3", True,
                 id="experiments.ipldp.make_oracle-epsilons"),
    pytest.param(lambda: ldpkit.experiments.ipldp.run_sample_ratio(_COUNTS, ["0.5"], eps_min=1.0, eps_max=2.0, lc=2,
                                                                    config=_one_repeat()),
                 "srs", "'0.5'", True, id="experiments.ipldp.run_sample_ratio-srs"),
    pytest.param(lambda: ldpkit.experiments.ipldp.run_nonsensitive_ratio(_COUNTS, [0.5], sr="1", eps_min=1.0,
                                                                         eps_max=2.0, lc=2, config=_one_repeat()),
                 "sr", "'1'", True, id="experiments.ipldp.run_nonsensitive_ratio-sr"),
    pytest.param(lambda: ldpkit.experiments.idldp.run_budget_shares(_COUNTS, ["0.5"], eps_small=1.0, eps_large=2.0,
                                                                     mechanisms=("OUE",), ks=(2,),
                                                                     config=_one_repeat()),
                 "shares", "'0.5'", True, id="experiments.idldp.run_budget_shares-shares"),
    # estimators in postprocess.py, base.py and metrics.py, and the budget helpers: typed already (regressions)
    pytest.param(lambda: postprocess.em_estimate(_explicit3(), [3, 2, 1], tol="1e-3"), "tol", "'1e-3'", True,
                 id="postprocess.em_estimate-tol"),
    pytest.param(lambda: postprocess.em_estimate(_explicit3(), [3, 2, 1], max_iter="10"), "max_iter", "'10'", True,
                 id="postprocess.em_estimate-max_iter"),
    pytest.param(lambda: postprocess.em_estimate(_explicit3(), ["3", "2", "1"]), "output_counts", "<U1", True,
                 id="postprocess.em_estimate-counts"),
    pytest.param(lambda: postprocess.clip([1.0, -1.0], "3"), "n", "'3'", True, id="postprocess.clip-n"),
    pytest.param(lambda: postprocess.norm_sub([1.0, -1.0], "3"), "total", "'3'", True, id="postprocess.norm_sub-total"),
    pytest.param(lambda: postprocess.norm_sub(["1.0", "2.0"], 3.0), "est", "<U3", True, id="postprocess.norm_sub-est"),
    pytest.param(lambda: ldpkit.pure_estimate([1, 1], "2", 0.75, 0.25), "n", "'2'", True, id="base.pure_estimate-n"),
    pytest.param(lambda: ldpkit.pure_estimate([1, 1], 2, "0.75", 0.25), "p", "<U4", True, id="base.pure_estimate-p"),
    pytest.param(lambda: ldpkit.pure_variance(["1", "1"], 0.75, 0.25), "counts", "<U1", True,
                 id="base.pure_variance-counts"),
    pytest.param(lambda: GRR(3, 1.0).estimate_from_support([1, 1, 1], "3"), "n", "'3'", True,
                 id="SupportOracle.estimate_from_support-n"),
    pytest.param(lambda: ldpkit.FHR(3, 1.0).estimate_from_support([1, 1, 1], "3"), "n", "'3'", True,
                 id="FHR.estimate_from_support-n"),
    pytest.param(lambda: ChannelOracle(_explicit3()).mle([3, 2, 1], tol="1e-3"), "tol", "'1e-3'", True,
                 id="ChannelOracle.mle-tol"),
    pytest.param(lambda: ldpkit.base.item_report_mle([5, 3], ["0.75", "0.75"], [0.25, 0.25]), "p", "<U4", True,
                 id="base.item_report_mle-p"),
    pytest.param(lambda: ldpkit.BinaryRR(0.1, 0.2, prior=0.3).mmse(n="5"), "n", "'5'", True, id="BinaryRR.mmse-n"),
    pytest.param(lambda: ldpkit.BinaryRR(0.1, 0.2, prior="0.3"), "prior", "'0.3'", True, id="BinaryRR-prior"),
    pytest.param(lambda: metrics.mse([1, 2], [1, 2], n="3"), "n", "'3'", True, id="metrics.mse-n"),
    pytest.param(lambda: metrics.kl_divergence([0.5, 0.5], [0.5, 0.5], smoothing="0.1"), "smoothing", "'0.1'", True,
                 id="metrics.kl_divergence-smoothing"),
    pytest.param(lambda: metrics.root_average_mse("1", 3), "total_mse", "'1'", True, id="metrics.root_average_mse-E"),
    pytest.param(lambda: metrics.root_average_mse(1.0, "3"), "n", "'3'", True, id="metrics.root_average_mse-n"),
    pytest.param(lambda: metrics.top_k_items([1, 2], "1"), "k", "'1'", True, id="metrics.top_k_items-k"),
    pytest.param(lambda: budgets.ipldp_levels([5, 4, 3, 2], "0.5", 1, 1.0, 2.0), "nr", "'0.5'", True,
                 id="budgets.ipldp_levels-nr"),
    pytest.param(lambda: budgets.ipldp_levels([5, 4, 3, 2], 0.5, "1", 1.0, 2.0), "lc", "'1'", True,
                 id="budgets.ipldp_levels-lc"),
    pytest.param(lambda: budgets.apportion("5", [0.5, 0.5]), "m", "'5'", True, id="budgets.apportion-m"),
    pytest.param(lambda: budgets.level_structure(["1", "2"]), "budgets_per_item", "<U1", True,
                 id="budgets.level_structure"),
]


@pytest.mark.parametrize(("call", "arg", "given", "wrong_type"), NUMBERS)
def test_numbers_are_typed(call: Callable[[], Any], arg: str, given: str, wrong_type: bool) -> None:
    assert_refused(call, arg, given, wrong_type)


def test_keep_or_resample_still_accepts_its_valid_edges() -> None:
    """The typed ``keep`` keeps the half-open interval (0, 1]."""
    out = ldpkit.iprr.mle_keep_or_resample([60, 40, 0], 1, [1 / 3] * 3)
    np.testing.assert_allclose(out, [0.6, 0.4, 0.0])


# =============================================================================== 3. integer item indices
NON_INTEGER_INDICES = [
    pytest.param(np.array([1.0, 2.0]), "1.0", id="float64-whole"),
    pytest.param([0.0], "0.0", id="list-of-whole-floats"),
    pytest.param(np.array([1.0], dtype=np.float32), "1.0", id="float32"),
    pytest.param(np.array([1.0, 2.0], dtype=object), "1.0", id="object-floats"),
    pytest.param(np.array([1, 2.0], dtype=object), "2.0", id="object-int-and-float"),
    pytest.param([1e300], "1e+300", id="huge-float"),
    pytest.param([0.5], "0.5", id="fraction"),
    pytest.param([True, False], "True", id="bool"),
    pytest.param(["1"], "'1'", id="str"),
    pytest.param(np.array([1 + 0j]), "(1+0j)", id="complex"),
    pytest.param(np.array([None, 1], dtype=object), "None", id="object-None"),
]


@pytest.mark.parametrize(("items", "given"), NON_INTEGER_INDICES)
def test_strict_items_refuse_every_non_integer_dtype(items: Any, given: str) -> None:
    assert_refused(lambda: v.check_items(items, 4, "itemsets", strict=True), "itemsets", given, True)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                                   object])
def test_strict_items_accept_integers_of_any_width(dtype: Any) -> None:
    out = v.check_items(np.array([3, 0, 2], dtype=dtype), 4, strict=True)
    assert out.dtype == np.int64 and out.tolist() == [3, 0, 2]


@pytest.mark.parametrize(
    ("items", "given"),
    [(np.array([2**63], dtype=np.uint64), "9223372036854775808"), (np.array([2**70], dtype=object),
                                                                    "1180591620717411303424"),
     ([-1], "item -1"), ([4], "item 4"), (np.array([2**64 - 1], dtype=np.uint64), "18446744073709551615"),
     ([2**63, 0], "9223372036854775808"), ([0, 2**64 - 1], "18446744073709551615")],
)
def test_strict_items_range_is_checked_on_the_values_as_given(items: Any, given: str) -> None:
    assert_refused(lambda: v.check_items(items, 4, strict=True), "items", given, False)


def test_strict_items_shape_and_emptiness() -> None:
    assert v.check_items([], 4, strict=True, allow_empty=True).dtype == np.int64
    with pytest.raises(ValueError, match="empty"):
        v.check_items([], 4, strict=True)
    assert_refused(lambda: v.check_items(3, 4, strict=True), "items", "3", True)
    assert_refused(lambda: v.check_items([[0]], 4, strict=True), "items", "(1, 1)", False)


def test_default_items_still_accept_whole_floats() -> None:
    """Reports built by hand keep working (``GRR.estimate(np.array([0.0, 1.0]))``); only containers are strict."""
    assert v.check_items(np.array([1.0, 2.0]), 4).tolist() == [1, 2]
    with pytest.raises(ValueError, match="0.5"):
        v.check_items([0.5], 4)


@pytest.mark.parametrize(
    ("values", "given", "wrong_type"),
    [(np.array(["1", "2"], dtype=object), "'1'", True), (np.array([1.7], dtype=object), "1.7", True),
     (np.array([1.0, 2.0]), "1.0", True), (np.array([-1]), "-1", False),
     (np.array([2**64], dtype=object), "18446744073709551616", False)],
)
def test_integer_array_for_seeds(values: Any, given: str, wrong_type: bool) -> None:
    assert_refused(lambda: v.check_integer_array(values, "seeds", 0, 2**64, what="64-bit seeds", dtype=np.uint64),
                   "seeds", given, wrong_type)


def test_integer_array_keeps_uint64_seeds_exact() -> None:
    seeds = np.array([2**64 - 1, 0, 2**63], dtype=np.uint64)
    for given in (seeds, seeds.astype(object), [int(s) for s in seeds]):
        out = v.check_integer_array(given, "seeds", 0, 2**64, dtype=np.uint64)
        assert out.dtype == np.uint64 and out.tolist() == seeds.tolist()


#: every set-valued container of item indices, given whole-valued floats
FLOAT_INDEX_CONTAINERS: list[Any] = [
    pytest.param(lambda: ldpkit.as_itemsets([[1.0, 2.0]], 3), "itemsets", "1.0", id="as_itemsets"),
    pytest.param(lambda: ldpkit.ItemSets(np.array([1.0]), np.array([0, 1]), 3), "indices", "float64",
                 id="ItemSets"),
    pytest.param(lambda: ldpkit.oue_ps(3, 1.0, 2).perturb([[1.0, 2.0]], rng=0), "itemsets", "1.0",
                 id="PaddingSampling.perturb"),
    pytest.param(lambda: ldpkit.oue_ps(3, 1.0, 2).sampling_probabilities([[0.0]]), "itemsets", "0.0",
                 id="PaddingSampling.sampling_probabilities"),
    pytest.param(lambda: ldpkit.idue.itemset_budget([0.0, 1.0], [1.0, 2.0], 1), "itemsets", "0.0",
                 id="idue.itemset_budget"),
    pytest.param(lambda: ldpkit.streaming.stream_estimate(GRR(3, 1.0), [np.array([0.0, 1.0])], rng=0), "chunk 0",
                 "float64", id="streaming.stream_estimate"),
    pytest.param(lambda: accountant.check_uldp(URR(4, 1.0, [0]), 1.0, sensitive=[0], protected=[0.0]),
                 "protected", "[0.0]", id="accountant.check_uldp-protected"),
    # sets of sensitive items: the same container pattern, still lenient (optional, for their owners to decide)
    pytest.param(lambda: URR(4, 1.0, [0.0, 1.0]), "sensitive", "0.0", id="URR-sensitive"),
    pytest.param(lambda: accountant.check_ipldp(URR(4, 1.0, [0, 1]), [1.0, 1.0], sensitive=[0.0, 1.0]), "sensitive",
                 "0.0", id="accountant.check_ipldp-sensitive"),
]


@pytest.mark.parametrize(("call", "arg", "given"), FLOAT_INDEX_CONTAINERS)
def test_containers_refuse_float_item_indices(call: Callable[[], Any], arg: str, given: str) -> None:
    assert_refused(call, arg, given, True)


# =============================================================================== 4. exact integer transforms
WRAPPING = [
    pytest.param(np.array([2**62, 2**62, 0, 0]), "9223372036854775808", id="int64-sum-2**63"),
    pytest.param(np.array([2**62, -(2**62), 2**62, 0]), "13835058055282163712", id="int64-cancelling-butterfly"),
    pytest.param(np.array([2**63, 0], dtype=np.uint64), "9223372036854775808", id="uint64-2**63"),
    pytest.param(np.array([-(2**63), 0]), "-9223372036854775808", id="int64-min"),
    pytest.param(np.array([[1, 2], [2**62, 2**62]]), "row 1", id="second-row"),
    pytest.param(np.full(2**12, 2**51, dtype=np.int64), "9223372036854775808", id="many-moderate-entries"),
    pytest.param(np.array([2**70, 0], dtype=object), "1180591620717411303424", id="object-bigint"),
]


@pytest.mark.parametrize(("values", "given"), WRAPPING)
def test_signed_sums_beyond_int64_are_refused_before_the_work(values: np.ndarray, given: str) -> None:
    assert_refused(lambda: v.check_int64_signed_sums(values, "values"), "values", given, False)


@pytest.mark.parametrize("values", [np.array([1.0, 2.0]), np.array([True, False]), np.array(["1", "2"]), 5,
                                    np.array([1, 2.5], dtype=object)])
def test_signed_sums_need_integers(values: Any) -> None:
    with pytest.raises(ArgumentTypeError, match="values"):
        v.check_int64_signed_sums(values, "values")


@pytest.mark.parametrize(
    "values",
    [np.array([2**62, 2**62 - 1, 0, 0]), np.array([INT64_MAX, 0]), np.array([-INT64_MAX, 0]),
     np.array([2**63 - 1, 0], dtype=np.uint64), np.array([[3, 0, 1, 2], [2**62, 2**62 - 1, 0, 0]]),
     np.full(2**12, 2**51 - 1, dtype=np.int64)],
    ids=["sum-2**63-1", "int64-max", "minus-int64-max", "uint64-int64-max", "two-rows", "many-entries"],
)
def test_signed_sums_up_to_int64_max_are_accepted_and_the_transform_is_exact(values: np.ndarray) -> None:
    arr = v.check_int64_signed_sums(values, "values")
    assert arr.dtype == np.int64 and arr.tolist() == values.tolist()
    out = ldpkit.hadamard.fwht(arr)
    k = arr.shape[-1]
    h = [[(-1) ** bin(r & c).count("1") for c in range(k)] for r in range(k)] if k <= 8 else None
    for row_in, row_out in zip(np.atleast_2d(arr).tolist(), np.atleast_2d(out).tolist()):
        assert row_out[0] == sum(row_in)  # the all-plus output: the bound is attained
        if h is not None:
            assert row_out == [sum(s * x for s, x in zip(hr, row_in)) for hr in h]


@pytest.mark.parametrize(("values", "given"), [
    pytest.param(np.array([2**62, 2**62, 0, 0]), "9223372036854775808", id="int64"),
    pytest.param(np.array([2**63, 0], dtype=np.uint64), "9223372036854775808", id="uint64"),
])
def test_fwht_refuses_input_it_cannot_transform_exactly(values: np.ndarray, given: str) -> None:
    assert_refused(lambda: ldpkit.hadamard.fwht(values), "values", given, False)


# =============================================================================== 5. overflow inside the range
def _mp_exact(prior: float, eps: float, claim: str) -> float:
    """The printed MSE of ``claim`` in 60-digit arithmetic, as the paper writes it."""
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(60):
        p, e = mpmath.mpf(prior), mpmath.e ** mpmath.mpf(eps)
        if claim == "Proposition 3":
            value = p * (1 - p) - (p * (1 - p) * (1 - e)) ** 2 / ((1 - p + p * e) * (e - p * e + p))
        elif claim == "Proposition 4":
            value = p * (1 - p) - p * (1 - p) * (2 * e - e * p - 2 * p + 1) ** 2 / (e * e - 2 * e * p + e)
        else:  # corrected Theorem 2, branch P1 < 1 / (1 + e^eps)
            value = p * (1 - p) - p * p * (e - 1) ** 2 / e
        return float(value)


#: closed forms of the LIP paper, inside their stated range [EPS_MIN, EPS_MAX] (check_epsilon's default)
PAPER_CLOSED_FORMS: list[Any] = [
    pytest.param("corrected_theorem2", 1e-300, 400.0, "Theorem 2 (corrected)", id="corrected_theorem2-p<c"),
    pytest.param("corrected_theorem2", 0.5, EPS_MAX, "Theorem 2 (corrected)", id="corrected_theorem2-EPS_MAX"),
    pytest.param("paper_proposition3", 0.3, 400.0, "Proposition 3", id="paper_proposition3"),
    pytest.param("paper_proposition3", 0.3, EPS_MAX, "Proposition 3", id="paper_proposition3-EPS_MAX"),
    pytest.param("paper_proposition4", 0.3, 400.0, "Proposition 4", id="paper_proposition4"),
    pytest.param("paper_proposition4", 0.7, EPS_MAX, "Proposition 4", id="paper_proposition4-EPS_MAX"),
    pytest.param("paper_theorem2", 0.3, EPS_MAX, "Theorem 2", id="paper_theorem2-EPS_MAX"),
]


@pytest.mark.parametrize(("func", "prior", "eps", "claim"), PAPER_CLOSED_FORMS)
def test_paper_closed_forms_are_finite_inside_their_range(func: str, prior: float, eps: float, claim: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cf = getattr(ldpkit.experiments.lip_paper, func)(prior, eps)
    assert math.isfinite(cf.mse_printed) and math.isfinite(cf.q0) and math.isfinite(cf.q1), cf
    if claim in ("Proposition 3", "Proposition 4") or (claim.endswith("(corrected)") and prior < 1e-100):
        # relative 1e-9, or an absolute 1e-15 where the printed formula itself cancels to almost nothing
        assert cf.mse_printed == pytest.approx(_mp_exact(prior, eps, claim), rel=1e-9, abs=1e-15)


#: the library's own closed forms at both ends of the budget range: finite, no overflow warning
LIBRARY_CLOSED_FORMS: list[tuple[str, Callable[[float], Any]]] = [
    ("GRR.variance", lambda e: GRR(4, e).variance([5, 3, 2, 1])),
    ("OUE.variance", lambda e: OUE(4, e).variance([5, 3, 2, 1])),
    ("OLH.variance", lambda e: ldpkit.OLH(4, e).variance([5, 3, 2, 1])),
    ("HR.variance", lambda e: ldpkit.HR(4, e).variance([5, 3, 2, 1])),
    ("FHR.variance", lambda e: ldpkit.FHR(4, e).variance([5, 3, 2, 1])),  # sinh(eps/2)**2: 2.5e303 at 700
    ("FHR.best_linear_variance", lambda e: ldpkit.FHR(4, e).best_linear_variance([5, 3, 2, 1])),
    ("URR.variance", lambda e: URR(4, e, [0, 1]).variance([5, 3, 2, 1])),
    ("IPRR.variance", lambda e: ldpkit.IPRR([e, 1.0, math.inf]).variance([5, 3, 2])),
    ("iprr_parameters", lambda e: ldpkit.iprr.iprr_parameters([e, e, 1.0])["q"]),
    ("GRR.mle", lambda e: GRR(4, e).mle([5, 3, 2, 1])),
    ("check_ldp", lambda e: accountant.check_ldp(GRR(3, e), e).slack),
    ("check_lip", lambda e: accountant.check_lip(GRR(3, e), e, prior=[0.2, 0.3, 0.5]).slack),
    ("fldp_parameters(FHR)", lambda e: accountant.fldp_parameters(ldpkit.FHR(40, e)).epsilon),
    ("ldp_epsilon(OUE, closed form)", lambda e: accountant.ldp_epsilon(OUE(40, e))),
    ("budgets.ipldp_levels", lambda e: budgets.ipldp_levels([5, 4, 3, 2], 0.5, 2, 1e-6, e).epsilons[2:]),
]


@pytest.mark.parametrize("eps", [1e-6, EPS_MAX], ids=["EPS_MIN", "EPS_MAX"])
@pytest.mark.parametrize("call", [c for _, c in LIBRARY_CLOSED_FORMS], ids=[n for n, _ in LIBRARY_CLOSED_FORMS])
def test_library_closed_forms_are_finite_at_both_ends_of_the_range(call: Callable[[float], Any], eps: float) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = np.asarray(call(eps), dtype=float)
    assert np.all(np.isfinite(value)), value


# =============================================================================== 6. false declared guarantees
def test_a_false_guarantee_is_accepted_at_construction_and_reported_by_verify() -> None:
    """Decision: construction checks the form of a guarantee, not whether it holds; ``verify`` answers that."""
    rr = [[0.75, 0.25], [0.25, 0.75]]  # tight LDP epsilon log 3 = 1.0986
    claim = accountant.Guarantee("ldp", epsilon=0.5)
    mech = ChannelOracle(rr, guarantees=[claim])
    assert mech.guarantees() == [claim]
    report = accountant.verify(mech)
    assert not report.satisfied
    with pytest.raises(ValueError, match="violates its declared"):
        accountant.verify(mech, raise_on_failure=True)
