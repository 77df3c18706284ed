"""Deciding "A beats B" in an experiment by a stated test, or saying it is undecided.

The experiment chapters compare mechanisms cell by cell (a dataset, a budget, a metric).  A
verdict is never read off a figure; it comes from one of two tests:

* :func:`exact_verdict`, where both errors are exact (a closed-form variance or MSE): the
  smaller error wins, and two values equal to a relative ``rtol`` are a tie (undecided);
* :func:`paired_verdict`, where the errors are simulated: the runs are paired (run ``r`` of A
  and run ``r`` of B share the data and the seed index), the mean of the differences
  ``A - B`` is compared with its standard error, and a winner is named only when the mean is
  more than ``z`` standard errors from zero.  ``z`` defaults to :data:`VERDICT_Z`, equal to
  :data:`ldpkit.testing.Z`, the book's one Monte Carlo tolerance (a test holds them equal), so a verdict is as conservative as every other simulated
  check; a cell within it, where noise or a smoothing choice can flip the order, is
  *undecided*.

:func:`verdict_frame` applies the right test to every cell of a results table.

Examples
--------
>>> str(exact_verdict("FHR", 1.0, "OLH", 2.0))
'FHR better: difference -1 (exact)'
>>> v = paired_verdict("A", [1.0, 1.1, 0.9, 1.0], "B", [1.01, 1.12, 0.88, 1.02])
>>> v.winner is None, v.method
(True, 'paired')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["UNDECIDED", "VERDICT_Z", "Verdict", "exact_verdict", "paired_verdict", "verdict_frame"]

#: What a table shows for a comparison without a winner.
UNDECIDED = "undecided"


#: How many standard errors a simulated difference must exceed to name a winner, the book's one
#: Monte Carlo tolerance (:data:`ldpkit.testing.Z`; the experiments layer does not import the
#: testing layer, so the value is repeated here and a test holds the two equal).
VERDICT_Z = 5.0


@dataclass(frozen=True)
class Verdict:
    """The outcome of comparing mechanism ``a`` with mechanism ``b`` on one cell.

    Attributes
    ----------
    a, b : str
        The two mechanisms' names.
    winner : str or None
        The better one, or ``None`` when the test cannot decide.
    difference : float
        ``value(a) - value(b)`` (a mean over the paired runs for a simulated comparison).
    se : float
        Standard error of ``difference`` (0 for an exact comparison).
    method : str
        ``"exact"`` or ``"paired"``.
    threshold : float
        What ``|difference|`` had to exceed: ``rtol * max(|a|, |b|)`` (exact) or ``z * se``
        (paired).
    runs : int
        Number of paired runs (1 for an exact comparison).
    """

    a: str
    b: str
    winner: str | None
    difference: float
    se: float
    method: str
    threshold: float
    runs: int

    @property
    def decided(self) -> bool:
        """Whether the test named a winner."""
        return self.winner is not None

    def __str__(self) -> str:
        if self.method == "exact":
            detail = f"difference {self.difference:.4g} (exact)"
        else:
            detail = f"difference {self.difference:.4g} +/- {self.se:.2g} over {self.runs} paired runs"
        head = f"{self.winner} better" if self.winner is not None else UNDECIDED
        return f"{head}: {detail}"


def _check_name(name: object, what: str) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f"{what} must be a non-empty string, got {name!r}")
    return name


def exact_verdict(name_a: str, value_a: float, name_b: str, value_b: float, *,
                  rtol: float = 1e-9, lower_is_better: bool = True) -> Verdict:
    """Compare two exact values (an exact variance, MSE or error); equal to ``rtol`` is a tie.

    Raises
    ------
    ValueError
        If a name is empty, a value is not a finite number or ``rtol`` is negative.

    Examples
    --------
    >>> exact_verdict("HR", 3.0, "FHR", 3.0 + 1e-12).winner is None
    True
    >>> exact_verdict("top-20 precision A", 0.9, "B", 0.8, lower_is_better=False).winner
    'top-20 precision A'
    """
    name_a, name_b = _check_name(name_a, "name_a"), _check_name(name_b, "name_b")
    a, b = float(value_a), float(value_b)
    if not (math.isfinite(a) and math.isfinite(b)):
        raise ValueError(f"exact values must be finite, got {value_a!r} and {value_b!r}")
    if not rtol >= 0:
        raise ValueError(f"rtol must be >= 0, got {rtol!r}")
    difference = a - b
    threshold = rtol * max(abs(a), abs(b))
    winner = None
    if abs(difference) > threshold:
        a_wins = (difference < 0) == lower_is_better
        winner = name_a if a_wins else name_b
    return Verdict(name_a, name_b, winner, difference, 0.0, "exact", threshold, 1)


def paired_verdict(name_a: str, values_a: ArrayLike, name_b: str, values_b: ArrayLike, *,
                   z: float | None = None, lower_is_better: bool = True) -> Verdict:
    """Compare two mechanisms' simulated values run by run (paired differences, ``z`` standard errors).

    Parameters
    ----------
    name_a, name_b : str
        The mechanisms.
    values_a, values_b : array-like of float
        One value per run, in the same run order (at least two runs).
    z : float, optional
        How many standard errors of the mean difference it must exceed to name a winner
        (default :data:`VERDICT_Z`).
    lower_is_better : bool
        ``True`` for errors, ``False`` for scores such as precision.

    Raises
    ------
    ValueError
        If the runs differ in number, are fewer than two, hold a non-finite value, or ``z`` is
        not positive.

    Examples
    --------
    >>> v = paired_verdict("A", [1.0, 1.2, 0.8], "B", [2.0, 2.3, 1.8])
    >>> v.winner, round(v.difference, 3), round(v.se, 3)
    ('A', -1.033, 0.033)
    """
    name_a, name_b = _check_name(name_a, "name_a"), _check_name(name_b, "name_b")
    a = np.asarray(values_a, dtype=float).ravel()
    b = np.asarray(values_b, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"paired runs must match: {a.size} values for {name_a}, {b.size} for {name_b}")
    if a.size < 2:
        raise ValueError(f"a paired comparison needs at least 2 runs, got {a.size}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("paired values must be finite")
    z = VERDICT_Z if z is None else float(z)
    if not z > 0:
        raise ValueError(f"z must be > 0, got {z!r}")
    d = a - b
    difference = float(d.mean())
    se = float(d.std(ddof=1) / math.sqrt(d.size))
    threshold = z * se
    winner = None
    if abs(difference) > threshold:
        a_wins = (difference < 0) == lower_is_better
        winner = name_a if a_wins else name_b
    return Verdict(name_a, name_b, winner, difference, se, "paired", threshold, int(d.size))


def verdict_frame(frame: pd.DataFrame, *, by: Sequence[str], mechanism: str, value: str,
                  pair: tuple[str, str], run: str | None = None, z: float | None = None,
                  rtol: float = 1e-9, lower_is_better: bool = True) -> pd.DataFrame:
    """The verdict of ``pair[0]`` against ``pair[1]`` in every cell (``by``) of a results table.

    Without ``run`` each cell must hold one exact value per mechanism (:func:`exact_verdict`);
    with ``run`` the values are paired by that column (:func:`paired_verdict`).

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns and ``winner`` (a name or :data:`UNDECIDED`), ``difference``, ``se``,
        ``method``, ``runs``, one row per cell in the order of first appearance.

    Raises
    ------
    ValueError
        If a column is missing, a cell lacks one of the two mechanisms, or (exact) holds more
        than one value per mechanism.

    Examples
    --------
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"eps": [1, 1, 1, 1, 2, 2, 2, 2], "mech": ["A", "B"] * 4, "run": [0, 0, 1, 1] * 2,
    ...                      "mse": [1.0, 2.0, 1.1, 2.1, 1.0, 1.01, 1.2, 1.18]})
    >>> verdict_frame(runs, by=["eps"], mechanism="mech", value="mse", pair=("A", "B"), run="run")["winner"].tolist()
    ['A', 'undecided']
    """
    import pandas as pd

    by = list(by)
    needed = [*by, mechanism, value] + ([run] if run is not None else [])
    missing = [column for column in needed if column not in frame.columns]
    if missing:
        raise ValueError(f"columns {missing} not in the table; it has {list(frame.columns)}")
    name_a, name_b = pair
    rows = []
    for key, cell in frame.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        where = dict(zip(by, key))
        parts = {name: cell[cell[mechanism] == name] for name in (name_a, name_b)}
        for name, part in parts.items():
            if part.empty:
                raise ValueError(f"cell {where}: no row of {name!r}")
        if run is None:
            for name, part in parts.items():
                if len(part) != 1:
                    raise ValueError(f"cell {where}: {len(part)} values of {name!r}, an exact comparison needs one")
            verdict = exact_verdict(name_a, parts[name_a][value].iloc[0], name_b, parts[name_b][value].iloc[0],
                                    rtol=rtol, lower_is_better=lower_is_better)
        else:
            a = parts[name_a].set_index(run)[value]
            b = parts[name_b].set_index(run)[value]
            if set(a.index) != set(b.index):
                raise ValueError(f"cell {where}: the runs of {name_a!r} and {name_b!r} differ")
            verdict = paired_verdict(name_a, a.sort_index().to_numpy(), name_b, b.sort_index().to_numpy(),
                                     z=z, lower_is_better=lower_is_better)
        rows.append({**where, "winner": verdict.winner or UNDECIDED, "difference": verdict.difference,
                     "se": verdict.se, "method": verdict.method, "runs": verdict.runs})
    return pd.DataFrame(rows)
