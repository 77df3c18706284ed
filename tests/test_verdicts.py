"""The experiment verdicts (ldpkit.experiments.verdicts): the stated test behind every "A beats B"."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ldpkit.experiments.verdicts import UNDECIDED, VERDICT_Z, exact_verdict, paired_verdict, verdict_frame
from ldpkit.testing import Z


def test_verdict_tolerance_is_the_books_one_tolerance():
    assert VERDICT_Z == Z


def test_exact_verdict_orders_and_ties():
    assert exact_verdict("A", 1.0, "B", 2.0).winner == "A"
    assert exact_verdict("A", 2.0, "B", 1.0).winner == "B"
    assert exact_verdict("A", 1.0, "B", 1.0 + 1e-12).winner is None
    assert exact_verdict("A", 0.9, "B", 0.8, lower_is_better=False).winner == "A"
    with pytest.raises(ValueError, match="finite"):
        exact_verdict("A", float("inf"), "B", 1.0)
    with pytest.raises(ValueError, match="name_b"):
        exact_verdict("A", 1.0, "", 1.0)


def test_paired_verdict_bad_input():
    with pytest.raises(ValueError, match="match"):
        paired_verdict("A", [1, 2, 3], "B", [1, 2])
    with pytest.raises(ValueError, match="at least 2"):
        paired_verdict("A", [1], "B", [2])
    with pytest.raises(ValueError, match="z must be"):
        paired_verdict("A", [1, 2], "B", [2, 3], z=0)


def test_paired_verdict_false_winner_rate_under_equal_means():
    """Equal means: a winner is named no more often than the t tail beyond Z allows.

    With 10 paired runs the mean difference over its standard error is Student t with 9 degrees
    of freedom; P(|t| > Z) is the exact false-decision rate. Over 4,000 seeds the observed count
    stays below that rate plus 5 binomial standard deviations; the plausible mistake this
    rejects is using the standard deviation of one run instead of the standard error of the mean
    (threshold sqrt(10) times too small), whose false-decision rate is P(|t| > Z/sqrt(10)), above 0.1.
    """
    rng = np.random.default_rng(2026)
    runs, trials = 10, 4000
    decided = 0
    for _ in range(trials):
        common = rng.normal(size=runs)
        a = common + rng.normal(scale=0.1, size=runs)
        b = common + rng.normal(scale=0.1, size=runs)
        decided += paired_verdict("A", a, "B", b).decided
    rate = 2 * stats.t.sf(Z, df=runs - 1)
    limit = trials * rate + 5 * np.sqrt(trials * rate * (1 - rate)) + 1
    wrong_rate = 2 * stats.t.sf(Z / np.sqrt(runs), df=runs - 1)
    assert wrong_rate > 0.1 and trials * wrong_rate > 10 * limit
    assert decided <= limit


def test_paired_verdict_detects_a_clear_difference():
    rng = np.random.default_rng(7)
    common = rng.normal(size=30)
    a = common + rng.normal(scale=0.1, size=30)
    b = common + 1.0 + rng.normal(scale=0.1, size=30)  # B worse by 1, se about 0.026
    verdict = paired_verdict("A", a, "B", b)
    assert verdict.winner == "A" and verdict.difference < -Z * verdict.se
    assert paired_verdict("A", a, "B", b, lower_is_better=False).winner == "B"


def test_verdict_frame_exact_and_paired():
    exact = pd.DataFrame({"eps": [1, 1, 2, 2], "mech": ["A", "B", "A", "B"], "var": [1.0, 2.0, 3.0, 3.0]})
    out = verdict_frame(exact, by=["eps"], mechanism="mech", value="var", pair=("A", "B"))
    assert out["winner"].tolist() == ["A", UNDECIDED] and set(out["method"]) == {"exact"}
    with pytest.raises(ValueError, match="no row of 'C'"):
        verdict_frame(exact, by=["eps"], mechanism="mech", value="var", pair=("A", "C"))
    with pytest.raises(ValueError, match="columns"):
        verdict_frame(exact, by=["k"], mechanism="mech", value="var", pair=("A", "B"))
    doubled = pd.concat([exact, exact])
    with pytest.raises(ValueError, match="needs one"):
        verdict_frame(doubled, by=["eps"], mechanism="mech", value="var", pair=("A", "B"))
