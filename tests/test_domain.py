"""Tests for ldpkit.domain (labels <-> item indices) and the small user-facing additions of issue 25.

* :class:`~ldpkit.domain.Domain`: encoding and decoding, the orders of ``from_values``, refusal
  of unknown labels by name (and how many rows hold one), of duplicates, non-strings, empty
  labels and line breaks, the JSON round trip and immutability.
* ``FrequencyOracle.perturb_item``: the plain value of one user's report is what ``perturb``
  gives for that user, of the documented type, with the channel's law (GRR, chi-square at a
  stated false-alarm rate), and bad items are refused.
* the aliases ``KRR``/``SUE``, and ``privacy_profile(mech)`` reading a mechanism's own
  declared budgets, sensitive set and prior (explicit arguments still win).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import ldpkit
from ldpkit import GRR, IPRR, URR, accountant
from ldpkit._validation import ArgumentTypeError
from ldpkit.domain import Domain
from ldpkit.hadamard import PairReports
from ldpkit.hadamard_mechanism import CoefficientReports
from ldpkit.histogram import HistogramReports
from ldpkit.lip import BinaryRR
from ldpkit.family import families
from ldpkit.olh import HashedReports
from ldpkit.reports import ItemReports
from ldpkit.sketch import HadamardSketchReports, SketchReports
from ldpkit.subset import SubsetReports
from ldpkit.testing import CONTRACT_ALPHA, assert_matches_distribution, chi_square_noncentrality
from ldpkit.unary import UnaryReports


# ============================================================================ Domain
def test_encode_decode_round_trip() -> None:
    dom = Domain(["apple", "bread", "milk", "tea"])
    values = ["tea", "apple", "milk", "milk", "bread", "tea"]
    idx = dom.encode(values)
    assert idx.dtype == np.int64 and idx.tolist() == [3, 0, 2, 2, 1, 3]
    assert dom.decode(idx) == values
    assert dom.decode(2) == ["milk"]  # a scalar index decodes to a one-label list
    assert dom.d == len(dom) == 4 and "milk" in dom and "cheese" not in dom
    # any iterable of labels: a generator, a numpy array of strings, an empty list
    assert dom.encode(v for v in values).tolist() == idx.tolist()
    assert dom.encode(np.array(values)).tolist() == idx.tolist()
    assert dom.encode([]).tolist() == []


def test_encode_converts_with_str() -> None:
    """Values are matched by ``str`` (integer data against a domain of integer labels)."""
    dom = Domain.integers(5)
    assert dom.labels == ("0", "1", "2", "3", "4")
    assert dom.encode([4, 0, np.int64(2), "3"]).tolist() == [4, 0, 2, 3]


def test_decode_refuses_items_outside_the_domain() -> None:
    dom = Domain(["a", "b", "c"])
    with pytest.raises(ValueError, match=r"0\.\.2"):
        dom.decode([0, 3])
    with pytest.raises(ValueError):
        dom.decode([-1])
    with pytest.raises((TypeError, ValueError)):
        dom.decode([0.5])


def test_unknown_labels_are_refused_by_name_with_their_count() -> None:
    dom = Domain(["apple", "bread", "milk"])
    with pytest.raises(ValueError) as err:
        dom.encode(["apple", "cheese", "milk", "cheese", "eggs"])
    msg = str(err.value)
    # three rows hold an unknown label; both unknown labels are named; the domain size is stated
    assert msg.startswith("3 value(s)"), msg
    assert "'cheese'" in msg and "'eggs'" in msg and "(3 labels)" in msg
    assert "'apple'" not in msg and "'milk'" not in msg
    # many distinct unknown labels: the first five are named, the rest counted
    with pytest.raises(ValueError) as err:
        dom.encode([f"x{i}" for i in range(8)] + ["apple"])
    msg = str(err.value)
    assert msg.startswith("8 value(s)") and "'x0'" in msg and "'x4'" in msg and "'x5'" not in msg
    assert "and 3 more" in msg
    # a near miss (case, whitespace) is unknown too: no silent remapping
    with pytest.raises(ValueError, match="'Apple'"):
        dom.encode(["Apple"])
    with pytest.raises(ValueError, match="'milk '"):
        dom.encode(["milk "])


def test_encode_refuses_one_string() -> None:
    """A single string is not a sequence of labels (it would be split into characters)."""
    dom = Domain(["a", "b"])
    with pytest.raises(ArgumentTypeError, match=r"\['ab'\]"):
        dom.encode("ab")


@pytest.mark.parametrize(
    "labels, exc, pattern",
    [
        (["a", "b", "a"], ValueError, r"'a' appears twice \(items 0 and 2\)"),
        (["a", 1, "c"], ArgumentTypeError, "label 1 must be a string, got int"),
        (["a", None], ArgumentTypeError, "label 1 must be a string"),
        (["a", b"b"], ArgumentTypeError, "label 1 must be a string, got bytes"),
        (["a", ""], ValueError, "label 1 must be a non-empty string"),
        (["a", "b\nc"], ValueError, "label 1 .*U\\+000A.*line-break"),
        (["a\r", "b"], ValueError, "label 0 .*U\\+000D"),
        (["a", "b\u200bc"], ValueError, "label 1 .*U\\+200B ZERO WIDTH SPACE.*zero-width"),
        (["a", "b\u2028"], ValueError, "label 1 .*U\\+2028"),
        (["a", "b\x00"], ValueError, "label 1 .*U\\+0000"),
        (["a", "\ufeffb"], ValueError, "label 1 .*U\\+FEFF"),
        (["a", " b"], ValueError, "label 1 ' b' has whitespace at its start or end"),
        (["a", "b\u00a0"], ValueError, "label 1 .*whitespace"),
        (["a", "b\t"], ValueError, "label 1 .*U\\+0009"),
        (["caf\u00e9", "cafe\u0301"], ValueError, "labels 0 and 1 are one label, 'caf\u00e9', spelled two ways"),
        (["only"], ValueError, "at least 2 labels, got 1"),
        ([], ValueError, "at least 2 labels, got 0"),
        ("abc", ArgumentTypeError, "not one string"),
    ],
)
def test_bad_labels_are_refused(labels: Any, exc: type, pattern: str) -> None:
    with pytest.raises(exc, match=pattern):
        Domain(labels)


def test_from_values_orders() -> None:
    values = ["b", "a", "c", "b", "d", "a", "b", "c", "e"]
    # frequency: b (3), then a and c (2 each, in first-seen order a before c), then d, e (1 each)
    assert Domain.from_values(values).labels == ("b", "a", "c", "d", "e")
    assert Domain.from_values(values, order="frequency").labels == ("b", "a", "c", "d", "e")
    assert Domain.from_values(values, order="sorted").labels == ("a", "b", "c", "d", "e")
    assert Domain.from_values(values, order="first").labels == ("b", "a", "c", "d", "e")
    tie = ["z", "y", "x", "y", "z", "x"]  # all tied: first-seen order, not sorted
    assert Domain.from_values(tie).labels == ("z", "y", "x")
    assert Domain.from_values(tie, order="sorted").labels == ("x", "y", "z")
    # values are converted with str; sorted order is string order ("10" < "9")
    assert Domain.from_values([9, 10, 9], order="sorted").labels == ("10", "9")
    with pytest.raises(ValueError, match="order must be"):
        Domain.from_values(values, order="alphabetical")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least 2 labels"):
        Domain.from_values(["same", "same"])


def test_json_round_trip_and_refusals() -> None:
    import json

    dom = Domain(["naïve", "a,b", "x y", "#hash", "1"])  # non-ASCII, comma, space, comment sign
    data = dom.to_json()
    assert data == {"labels": list(dom.labels)}
    back = Domain.from_json(json.loads(json.dumps(data)))
    assert back == dom and hash(back) == hash(dom) and back.labels == dom.labels
    for bad in (["a", "b"], {"labels": "ab"}, {"names": ["a", "b"]}, None):
        with pytest.raises(ValueError, match="'labels' list"):
            Domain.from_json(bad)
    with pytest.raises(ValueError, match="appears twice"):
        Domain.from_json({"labels": ["a", "a"]})  # validated like the constructor


def test_equality_order_matters() -> None:
    assert Domain(["a", "b"]) == Domain(("a", "b"))
    assert Domain(["a", "b"]) != Domain(["b", "a"])  # another order is another item numbering
    assert Domain(["a", "b"]) != ("a", "b")
    assert len({Domain(["a", "b"]), Domain(["a", "b"]), Domain(["b", "a"])}) == 2


def test_domain_is_immutable() -> None:
    dom = Domain(["a", "b", "c"])
    with pytest.raises(AttributeError, match="immutable"):
        dom.labels = ("x", "y")  # type: ignore[misc]
    with pytest.raises(AttributeError):
        dom.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        dom._index = {}  # type: ignore[misc]
    assert isinstance(dom.labels, tuple)
    source = ["a", "b", "c"]
    dom2 = Domain(source)
    source.append("d")  # the caller's list is copied
    assert dom2.labels == ("a", "b", "c") and len(dom2) == 3
    assert "Domain(['a', 'b', 'c'])" == repr(dom)
    assert "(6 labels)" in repr(Domain("abcdef"[i] for i in range(6)))


# ============================================================================ perturb_item
def _item_families() -> list[tuple[str, Any]]:
    return [(f"{fam.name}-{k}", mech) for fam in families(inputs="items") for k, mech in enumerate(fam.examples())]


ITEM_FAMILIES = _item_families()


def _expected_value(reports: Any) -> Any:
    """The plain value of report 0, read from the container's fields (not through ``report_row``)."""
    if isinstance(reports, ItemReports):
        return int(np.asarray(reports)[0])
    if isinstance(reports, UnaryReports):
        return np.unpackbits(reports.bits[0], count=reports.d).astype(bool)
    if isinstance(reports, HashedReports):
        return (int(reports.seeds[0]), int(reports.values[0]))
    if isinstance(reports, PairReports):
        return (int(reports.plus[0]), int(reports.minus[0]))
    if isinstance(reports, HistogramReports):
        return np.array(reports.values[0])
    if isinstance(reports, SketchReports):
        return (int(reports.rows[0]), np.unpackbits(reports.bits[0], count=int(reports.m)).astype(np.int64))
    if isinstance(reports, HadamardSketchReports):
        return (int(reports.rows[0]), int(reports.coords[0]), 1 if int(reports.plus[0]) else -1)
    if isinstance(reports, SubsetReports):
        return tuple(int(v) for v in np.flatnonzero(np.unpackbits(reports.bits[0], count=reports.d)))
    if isinstance(reports, CoefficientReports):
        return (int(reports.coefficient[0]), int(reports.sign[0]))
    raise AssertionError(f"unexpected report type {type(reports).__name__}")


def _same_part(got: Any, want: Any) -> bool:
    """One field of a report: a plain int equal to the stored one, or an array equal to it."""
    if isinstance(want, np.ndarray):
        return isinstance(got, np.ndarray) and np.array_equal(got, want)
    return type(got) is int and got == want


@pytest.mark.parametrize("mech", [m for _, m in ITEM_FAMILIES], ids=[n for n, _ in ITEM_FAMILIES])
def test_perturb_item_is_perturb_of_one_user(mech: Any) -> None:
    """Same seed, same report as ``perturb([x])``; the value has the documented plain type.

    Power: a ``perturb_item`` that reported the item itself, another row, or a value of another
    type (a numpy scalar, the packed bits, a one-element array) fails.
    """
    for x in range(mech.d):
        for seed in (0, 1, 2):
            got = mech.perturb_item(x, rng=seed)
            ref = mech.perturb(np.array([x]), rng=seed)
            want = _expected_value(ref)
            if isinstance(ref, UnaryReports):
                assert isinstance(got, np.ndarray) and got.dtype == bool and got.shape == (mech.d,)
                assert np.array_equal(got, want)
            elif isinstance(ref, ItemReports):
                assert type(got) is int and got == want
            elif isinstance(ref, HistogramReports):
                assert isinstance(got, np.ndarray) and got.shape == (mech.d,) and np.array_equal(got, want)
            else:  # a tuple of plain ints (and, for a sketch, its bit vector)
                assert isinstance(got, tuple) and len(got) == len(want)
                assert all(_same_part(g, w) for g, w in zip(got, want))
    # a numpy integer item is accepted
    np.testing.assert_equal(mech.perturb_item(np.int64(0), rng=5), mech.perturb_item(0, rng=5))


@pytest.mark.parametrize("mech", [m for _, m in ITEM_FAMILIES[:1]] + [ldpkit.OUE(4, 1.0), ldpkit.OLH(6, 1.0)],
                         ids=["GRR", "OUE", "OLH"])
def test_perturb_item_refuses_bad_items(mech: Any) -> None:
    d = mech.d
    for bad in (1.0, 0.5, True, False, "1", [1], None):
        with pytest.raises(ArgumentTypeError, match=rf"one item index in 0\.\.{d - 1}.*use perturb"):
            mech.perturb_item(bad)
    for bad in (d, -1, 10**6):
        with pytest.raises(ValueError, match=rf"item .*0\.\.{d - 1}"):
            mech.perturb_item(bad)


def test_perturb_item_law_matches_the_grr_channel() -> None:
    """Many calls with one generator: the outputs of item 2 follow row 2 of GRR's channel.

    Chi-square at false-alarm rate ``CONTRACT_ALPHA``.  Power: a ``perturb_item`` that reused
    a fresh generator from the same seed on every call (one output repeated), or that swapped
    ``p`` and ``q`` (noncentrality computed below), is rejected.
    """
    grr = GRR(4, 1.0)
    gen = np.random.default_rng(2024)
    size = 20_000
    outs = np.array([grr.perturb_item(2, rng=gen) for _ in range(size)])
    row = grr.channel().to_explicit().matrix[2]
    assert_matches_distribution(np.bincount(outs, minlength=4), row, CONTRACT_ALPHA, "GRR perturb_item")
    # the swapped-p/q law is far outside what the test accepts at this sample size
    swapped = np.full(4, row[2])
    swapped[2] = row[0]
    from scipy import stats

    crit = stats.chi2.ppf(1 - CONTRACT_ALPHA, 3)
    assert stats.ncx2.sf(crit, 3, chi_square_noncentrality(row, swapped, size)) > 0.999
    # unseeded calls differ (no hidden fixed seed)
    assert len({grr.perturb_item(2) for _ in range(50)}) > 1


# ============================================================================ aliases
def test_aliases() -> None:
    assert ldpkit.KRR is ldpkit.GRR
    assert ldpkit.SUE is ldpkit.RAPPOR
    assert "KRR" in ldpkit.__all__ and "SUE" in ldpkit.__all__


@pytest.mark.parametrize("eps", [0.5, 1.0, 4.0])
def test_sue_bits_are_symmetric(eps: float) -> None:
    """SUE keeps a bit with ``p = e^(eps/2) / (e^(eps/2) + 1)`` and flips it with ``q = 1 - p``."""
    sue = ldpkit.SUE(6, eps)
    p = math.exp(eps / 2) / (math.exp(eps / 2) + 1)
    np.testing.assert_allclose(sue.p_support, p, rtol=1e-14)
    np.testing.assert_allclose(sue.q_support, 1 - p, rtol=1e-14)
    np.testing.assert_allclose(sue.p_support + sue.q_support, 1.0, rtol=1e-14)
    assert not np.allclose(ldpkit.OUE(6, eps).q_support, 1 - ldpkit.OUE(6, eps).p_support)
    assert math.isclose(accountant.ldp_epsilon(ldpkit.SUE(4, eps)), eps, rel_tol=1e-9)


# ============================================================================ privacy_profile reads own guarantees
def test_profile_of_iprr_uses_its_budgets() -> None:
    e = [0.5, 1.0, math.inf, 2.0]
    mech = IPRR(e)
    own = accountant.privacy_profile(mech)
    given = accountant.privacy_profile(mech, budgets=e)
    assert own.ipldp_satisfied is True and own.minid_scale is not None
    assert own.values == given.values and own.sensitive == given.sensitive == (0, 1, 3)
    # explicit budgets override: half the budgets are not met
    tighter = accountant.privacy_profile(mech, budgets=[0.25, 0.5, math.inf, 1.0])
    assert tighter.ipldp_satisfied is False and math.isclose(tighter.ipldp_scale, 2.0, rel_tol=1e-9)
    # a mechanism declaring no budgets gets none
    assert accountant.privacy_profile(GRR(4, 1.0)).ipldp_scale is None


def test_profile_of_urr_uses_its_sensitive_set() -> None:
    mech = URR(5, 1.0, [0, 1])
    own = accountant.privacy_profile(mech)
    assert own.sensitive == (0, 1)
    assert math.isclose(own.uldp_epsilon, 1.0, rel_tol=1e-9)
    assert own.values == accountant.privacy_profile(mech, sensitive=[0, 1]).values
    # explicit argument overrides: calling item 2 sensitive too, uRR (which reveals it) has no finite ULDP
    other = accountant.privacy_profile(mech, sensitive=[0, 1, 2])
    assert other.sensitive == (0, 1, 2) and other.uldp_epsilon == math.inf
    assert accountant.privacy_profile(GRR(5, 1.0)).uldp_epsilon is None


def test_profile_of_binary_rr_uses_its_prior() -> None:
    mech = BinaryRR(0.1, 0.3, prior=0.2, lip_epsilon=1.2)
    own = accountant.privacy_profile(mech)
    given = accountant.privacy_profile(mech, prior=[0.8, 0.2])
    assert own.lip_epsilon is not None and own.lip_epsilon <= 1.2 * (1 + 1e-9)
    assert own.lip_epsilon == given.lip_epsilon and own.mip_information == given.mip_information
    # explicit prior overrides (the uniform prior gives another, larger, LIP epsilon here)
    uniform = accountant.privacy_profile(mech, prior=[0.5, 0.5])
    assert uniform.lip_epsilon is not None and uniform.lip_epsilon > own.lip_epsilon * 1.1
