"""Server side over time: an incremental aggregator and estimates with their uncertainty.

Reports of a collection arrive in batches (days, files, shards).  An :class:`Aggregator` keeps
only the running aggregate of a mechanism (support counts, or net supports for FHR, or output
counts for a channel oracle) and the number of users; every aggregate in ldpkit is a sum of
per-user integer terms, so the total after any split into batches is the same integer vector,
and the :class:`Estimate` after any split equals the estimate of all reports at once exactly
(the contract test checks this for every registered family).  Its state saves to a small JSON
file and resumes; batches of another configuration, or files whose provenance or domain differ,
are refused, naming what differs.

An :class:`Estimate` holds the unbiased counts, the plug-in variance
(:meth:`~ldpkit.base.FrequencyOracle.variance_estimate`), standard errors and normal-approximation
confidence intervals, on the count and on the frequency scale, with the item labels when a
:class:`~ldpkit.domain.Domain` is known, and what it was computed from (mechanism, number of
reports, data descriptions).  Derived and checked for coverage in the tutorial chapter
(:ref:`sec-tutorial-uncertainty`).

Examples
--------
>>> import numpy as np
>>> from ldpkit import GRR
>>> from ldpkit.aggregation import Aggregator
>>> grr = GRR(3, 2.0)
>>> items = np.repeat([0, 1, 2], [500, 300, 200])
>>> agg = Aggregator(grr)
>>> for part in np.array_split(items, 4):               # four batches as they arrive
...     _ = agg.add(grr.perturb(part, rng=len(part)))
>>> est = agg.estimate()
>>> est.n, est.counts.shape, bool(np.all(est.se > 0))
(1000, (3,), True)
>>> lo, hi = est.interval(0.95)
>>> bool(np.all(lo < est.counts)) and bool(np.all(est.counts < hi))
True
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, Optional

import numpy as np

from . import __version__
from ._validation import ArgumentTypeError
from .domain import Domain
from .reportio import ReportFile, ReportFileError, decode_value, encode_value, build_mechanism, mechanism_config

__all__ = ["Aggregator", "Estimate"]

_STATE_FORMAT = "ldpkit-aggregate"
_STATE_VERSION = 1


def _check_level(level: Any) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be a confidence level in (0, 1), got {level!r}")
    return float(level)


def _z(level: float) -> float:
    """The two-sided normal quantile of a confidence level (the standard library's, no scipy needed)."""
    return NormalDist().inv_cdf(0.5 + _check_level(level) / 2)


def _cell(value: Any, fmt: str, na: str) -> str:
    """A table cell: a float in ``fmt`` (NaN as ``na``), anything else as text."""
    if isinstance(value, float):
        return na if math.isnan(value) else fmt % value
    return str(value)


@dataclass(frozen=True)
class Estimate:
    """Estimated counts with their plug-in variance, labels and what they were computed from.

    Attributes
    ----------
    counts
        Unbiased estimated counts (may be negative or above ``n``; post-process them with
        :mod:`ldpkit.postprocess` if a consistent vector is wanted).
    variance
        Plug-in estimate of each count's variance.
    n
        Number of reports.
    labels
        Item labels (``None`` when no domain is known: items are then ``0 .. d-1``).
    mechanism
        Description of the mechanism (its provenance).
    data
        Descriptions of the data the reports came from (one per distinct description).
    """

    counts: np.ndarray
    variance: np.ndarray
    n: int
    labels: Optional[tuple[str, ...]] = None
    mechanism: str = ""
    data: tuple[str, ...] = field(default_factory=tuple)

    @property
    def se(self) -> np.ndarray:
        """Standard error of each count."""
        return np.sqrt(np.maximum(self.variance, 0.0))

    @property
    def frequencies(self) -> np.ndarray:
        """Estimated frequencies ``counts / n``."""
        return self.counts / self.n

    @property
    def frequency_se(self) -> np.ndarray:
        """Standard error of each frequency."""
        return self.se / self.n

    def interval(self, level: float = 0.95, scale: str = "counts") -> tuple[np.ndarray, np.ndarray]:
        """Normal-approximation interval ``estimate +- z se`` at confidence ``level`` (``scale`` counts or frequency)."""
        z = _z(level)
        if scale == "counts":
            return self.counts - z * self.se, self.counts + z * self.se
        if scale == "frequency":
            return self.frequencies - z * self.frequency_se, self.frequencies + z * self.frequency_se
        raise ValueError(f"scale must be 'counts' or 'frequency', got {scale!r}")

    def _columns(self, level: float) -> list[tuple[str, Any]]:
        """The table's columns, ``(name, values)``: what :meth:`to_frame`, :meth:`to_csv` and :meth:`to_text` show."""
        lo, hi = self.interval(level)
        flo, fhi = self.interval(level, "frequency")
        first = ("label", list(self.labels)) if self.labels is not None else ("item", np.arange(self.counts.size))
        return [first, ("estimate", self.counts), ("se", self.se), ("lower", lo), ("upper", hi),
                ("frequency", self.frequencies), ("frequency_se", self.frequency_se),
                ("frequency_lower", flo), ("frequency_upper", fhi)]

    def _rows(self, level: float, fmt: str, na: str) -> tuple[list[str], list[list[str]]]:
        """Column names and the rows of the table as text, floats in ``fmt`` and NaN as ``na``."""
        columns = self._columns(level)
        cells = [[_cell(v, fmt, na) for v in (vals.tolist() if isinstance(vals, np.ndarray) else vals)] for _, vals in columns]
        return [name for name, _ in columns], [list(row) for row in zip(*cells)]

    def to_frame(self, level: float = 0.95) -> Any:
        """A pandas table: label (or item), estimate, se, lower, upper, frequency, frequency_se and its interval.

        pandas is imported here, on first use; :meth:`to_csv` and :meth:`to_text` write the same
        table without it.
        """
        import pandas as pd

        return pd.DataFrame(dict(self._columns(level)))

    def to_csv(self, path: str | os.PathLike[str], level: float = 0.95) -> None:
        """Write the table of :meth:`to_frame` as CSV, after comment lines saying what it was computed from.

        Floats are written with ten significant digits, a NaN as an empty field and a label that
        holds a comma or a quote in double quotes: the bytes ``to_frame(level).to_csv(fh,
        index=False, float_format="%.10g")`` writes, without importing pandas.
        """
        lines = [f"# ldpkit {__version__} estimate: {self.mechanism}, n={self.n}, "
                 f"{_check_level(level):.6g} normal intervals from the plug-in variance"]
        lines += [f"# data: {d}" for d in self.data] or ["# data: not described"]
        names, rows = self._rows(level, "%.10g", "")  # NaN as pandas writes it
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write("\n".join(lines) + "\n")
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(names)
            writer.writerows(rows)

    def to_text(self, level: float = 0.95) -> str:
        """The table of :meth:`to_frame` as aligned plain text (six significant digits), one line per item.

        What ``ldpkit estimate`` prints without ``--output``; no pandas needed.  The label column
        is left-aligned, the numbers right-aligned; the text ends without a newline.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpkit.aggregation import Estimate
        >>> est = Estimate(np.array([60.0, 40.0]), np.array([25.0, 16.0]), 100, labels=("tea", "coffee"))
        >>> print(est.to_text(0.95))  # doctest: -NORMALIZE_WHITESPACE
        label   estimate  se    lower    upper  frequency  frequency_se  frequency_lower  frequency_upper
        tea           60   5  50.2002  69.7998        0.6          0.05         0.502002         0.697998
        coffee        40   4  32.1601  47.8399        0.4          0.04         0.321601         0.478399
        """
        names, rows = self._rows(level, "%.6g", "nan")
        widths = [max(len(text) for text in (name, *(row[j] for row in rows))) for j, name in enumerate(names)]
        left = self.labels is not None  # labels read better left-aligned, item numbers like the other numbers

        def line(cells: list[str]) -> str:
            first = cells[0].ljust(widths[0]) if left else cells[0].rjust(widths[0])
            return "  ".join([first, *(c.rjust(w) for c, w in zip(cells[1:], widths[1:]))]).rstrip()

        return "\n".join(line(cells) for cells in [names, *rows])


class Aggregator:
    """Running aggregate of one mechanism's reports, with the estimate at any time.

    Parameters
    ----------
    mechanism
        The mechanism whose reports are added (a frequency oracle or Padding-and-Sampling).
    domain
        Labels of the items (checked against files added later, and given to estimates).

    Attributes
    ----------
    support
        The running aggregate (what :meth:`~ldpkit.base.FrequencyOracle.aggregate` returns, summed).
    n
        Number of reports added.
    batches
        Number of batches added.
    data
        Descriptions of the data of the files added (distinct, in order).
    """

    def __init__(self, mechanism: Any, *, domain: Optional[Domain] = None) -> None:
        if not (callable(getattr(mechanism, "aggregate", None)) and callable(getattr(mechanism, "estimate_from_support", None))):
            raise ArgumentTypeError(f"mechanism must be an ldpkit mechanism, got {type(mechanism).__name__}")
        if domain is not None and not isinstance(domain, Domain):
            raise ArgumentTypeError(f"domain must be a Domain, got {type(domain).__name__}")
        if domain is not None and len(domain) != mechanism.d:
            raise ValueError(f"the domain has {len(domain)} labels but the mechanism {mechanism.d} items")
        self.mechanism = mechanism
        self.domain = domain
        self.support: Optional[np.ndarray] = None
        self.n = 0
        self.batches = 0
        self.data: list[str] = []
        #: fingerprints of the report files added (:attr:`ldpkit.reportio.ReportFile.fingerprint`)
        self.files: list[str] = []

    def __repr__(self) -> str:
        return f"Aggregator({self.mechanism.provenance.describe()}, n={self.n}, batches={self.batches})"

    def _accumulate(self, support: np.ndarray, n: int) -> None:
        sup = np.asarray(support)
        if sup.dtype.kind not in "iu":
            raise ValueError(f"the aggregate must be integers to add up exactly, got dtype {sup.dtype}")
        sup = sup.astype(np.int64)
        if self.support is None:
            self.support = sup.copy()
        elif sup.shape != self.support.shape:
            raise ValueError(f"batch aggregate has shape {sup.shape}, the running one {self.support.shape}")
        else:
            self.support += sup
        self.n += int(n)
        self.batches += 1

    def add(self, reports: Any) -> Aggregator:
        """Add one batch of reports (refused if another configuration made them); returns ``self``."""
        mech = self.mechanism
        support = mech.aggregate(reports)  # checks the provenance and validates the reports
        self._accumulate(support, mech.n_reports(reports))
        return self

    def add_support(self, support: Any, n: int) -> Aggregator:
        """Add a batch given by its aggregate (what :meth:`add` computes from reports) of ``n`` users.

        For aggregates computed elsewhere (another server, a simulation with
        :meth:`~ldpkit.base.FrequencyOracle.simulate_support`); returns ``self``.
        """
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or int(n) < 1:
            raise ValueError(f"n must be a positive number of users, got {n!r}")
        self.mechanism.estimate_from_support(np.asarray(support), int(n))  # validates its shape and range
        self._accumulate(np.asarray(support), int(n))
        return self

    def add_file(self, path: str | os.PathLike[str], *, progress: bool = False) -> Aggregator:
        """Add every report of a report file, block by block (bounded memory); returns ``self``.

        The file's mechanism must equal this aggregator's and its domain (when both have one)
        must be the same; a truncated or corrupted file is refused with its name, and so is a
        file whose reports were added before (the same fingerprint, also across a saved and
        resumed state).  Nothing is added from a file that fails part-way (its blocks are summed
        aside first).
        """
        f = ReportFile(path, self.mechanism)
        if f.domain is not None:
            if self.domain is None:
                self.domain = f.domain
            elif f.domain != self.domain:
                raise ReportFileError(f"{f.path}: its domain {f.domain!r} differs from the aggregator's {self.domain!r}")
        total: Optional[np.ndarray] = None
        n = 0
        blocks = f.batches()
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=f.n, unit="reports", desc=os.path.basename(f.path), leave=False)
        try:
            for batch in blocks:
                try:
                    sup = np.asarray(self.mechanism.aggregate(batch)).astype(np.int64)
                except ValueError as exc:
                    raise ReportFileError(f"{f.path}: invalid reports after report {n}: {exc}") from exc
                k = self.mechanism.n_reports(batch)
                total = sup if total is None else total + sup
                n += k
                del batch  # hold one block at a time
                if progress:
                    bar.update(k)
        finally:
            if progress:
                bar.close()
        if f.fingerprint in self.files:
            raise ReportFileError(f"{f.path}: these reports are already in the aggregate (the same file, or a copy, "
                                  "was added before)")
        if total is not None:
            self._accumulate(total, n)
        if f.fingerprint is not None:
            self.files.append(f.fingerprint)
        if f.data and f.data not in self.data:
            self.data.append(f.data)
        return self

    def add_files(self, paths: Iterable[str | os.PathLike[str]], *, progress: bool = False) -> Aggregator:
        """:meth:`add_file` for each path in turn."""
        for p in paths:
            self.add_file(p, progress=progress)
        return self

    def merge(self, other: Aggregator) -> Aggregator:
        """Add another aggregator's totals (same mechanism and domain); returns ``self``."""
        if not isinstance(other, Aggregator):
            raise ArgumentTypeError(f"can only merge an Aggregator, got {type(other).__name__}")
        if other.mechanism.provenance != self.mechanism.provenance:
            diff = "; ".join(other.mechanism.provenance.differences(self.mechanism.provenance))
            raise ValueError(f"cannot merge aggregates of {other.mechanism.provenance.describe()} into "
                             f"{self.mechanism.provenance.describe()} ({diff})")
        if other.domain is not None and self.domain is not None and other.domain != self.domain:
            raise ValueError("cannot merge aggregates over different domains")
        repeated = set(self.files) & set(other.files)
        if repeated:
            raise ValueError(f"cannot merge: {len(repeated)} report file(s) are in both aggregates")
        if other.support is not None:
            self._accumulate(other.support, other.n)
            self.batches += other.batches - 1
        self.domain = self.domain or other.domain
        self.data += [d for d in other.data if d not in self.data]
        self.files += other.files
        return self

    def estimate(self) -> Estimate:
        """The estimate from every report added so far (at least one)."""
        if self.support is None or self.n == 0:
            raise ValueError("no reports added yet: nothing to estimate")
        mech = self.mechanism
        counts = np.asarray(mech.estimate_from_support(self.support, self.n), dtype=float)
        variance = np.asarray(mech.variance_estimate(self.support, self.n), dtype=float)
        return Estimate(counts, variance, self.n, None if self.domain is None else self.domain.labels,
                        mech.provenance.describe(), tuple(self.data))

    # ---------------------------------------------------------------- state
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the state (mechanism, domain, totals) as JSON; :meth:`load` resumes from it."""
        state = {
            "format": _STATE_FORMAT, "version": _STATE_VERSION, "written_by": f"ldpkit {__version__}",
            "mechanism": _config_or_none(self.mechanism), "provenance": encode_value(self.mechanism.provenance),
            "domain": None if self.domain is None else self.domain.to_json(),
            "n": self.n, "batches": self.batches, "data": self.data, "files": self.files,
            "support": None if self.support is None else [int(v) for v in self.support],
        }
        tmp = os.fspath(path) + ".partial"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(state, fh, allow_nan=False)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str], mechanism: Any = None) -> Aggregator:
        """Resume from :meth:`save` (the stored mechanism is rebuilt unless one is given; provenance checked)."""
        p = os.fspath(path)
        try:
            with open(p, encoding="utf-8") as fh:
                state = json.load(fh)
        except ValueError as exc:
            raise ReportFileError(f"{p}: not a readable aggregator state ({exc})") from exc
        if not isinstance(state, dict) or state.get("format") != _STATE_FORMAT:
            raise ReportFileError(f"{p}: not an ldpkit aggregator state")
        if int(state.get("version", 0)) > _STATE_VERSION:
            raise ReportFileError(f"{p}: state version {state.get('version')} is newer than this ldpkit reads")
        try:
            want = decode_value(state["provenance"])
            if mechanism is None:
                if state.get("mechanism") is None:
                    raise ValueError("the state does not store its mechanism; pass mechanism=")
                mechanism = build_mechanism(state["mechanism"])
            elif mechanism.provenance != want:
                raise ValueError(f"the state aggregates {want.describe()}, not {mechanism.provenance.describe()}")
            agg = cls(mechanism, domain=None if state.get("domain") is None else Domain.from_json(state["domain"]))
            if state.get("support") is not None:
                agg.support = np.array(state["support"], dtype=np.int64)
            agg.n, agg.batches, agg.data = int(state["n"]), int(state["batches"]), list(state.get("data") or [])
            agg.files = [str(f) for f in state.get("files") or []]
        except (KeyError, TypeError, ValueError) as exc:
            raise ReportFileError(f"{p}: {exc}") from exc
        if agg.n < 0 or (agg.support is None) != (agg.n == 0):
            raise ReportFileError(f"{p}: inconsistent state (n={agg.n})")
        return agg


def _config_or_none(mechanism: Any) -> Optional[dict[str, Any]]:
    try:
        return mechanism_config(mechanism)
    except NotImplementedError:
        return None

