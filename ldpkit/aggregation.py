"""Server side over time: an incremental aggregator and estimates with their uncertainty.

Reports of a collection arrive in batches (days, files, shards).  An :class:`Aggregator` keeps
only the running aggregate of a mechanism (support counts, or net supports for FHR, or output
counts for a channel oracle) and the number of users; every aggregate in ldpkit is a sum of
per-user integer terms, so the total after any split into batches is the same integer vector,
and the :class:`Estimate` after any split equals the estimate of all reports at once exactly
(the contract test checks this for every registered family).  Its state saves to a small JSON
file and resumes; batches of another configuration, or files whose provenance or domain differ,
are refused, naming what differs, and so are reports already added: a file is known by its
content (mechanism, provenance and reports, :attr:`~ldpkit.reportio.ReportFile.fingerprint`), so
a copy re-encoded, with other line ends or another data line is the same file.

A state file is input from outside too: :meth:`Aggregator.load` decodes every field by a schema
with limits (the decoder of :mod:`ldpkit.reportio`), and any failure is a
:class:`~ldpkit.reportio.ReportFileError` naming the file and the field.  Writers are serialised:
:meth:`Aggregator.save` holds the state's advisory lock (:func:`state_lock`, the file
``<state>.lock`` beside it) and compares the file with the one this aggregator loaded (or last
saved), so two processes that load one state and both save it cannot both succeed: the second
is refused (:class:`StateConflictError`) and nothing it holds is lost silently.  A process that
holds :func:`state_lock` from loading to saving (as ``ldpkit estimate --state`` does) makes the
other wait, and then add to what the first saved.

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

import contextlib
import csv
import hashlib
import json
import math
import os
import re
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from dataclasses import replace as dataclasses_replace
from statistics import NormalDist
from typing import Any, Optional, cast

import numpy as np

from . import __version__
from ._validation import MAX_USERS, ArgumentTypeError, check_domain_limit, check_text_line, max_header_bytes
from .domain import Domain
from .mechanism import Mechanism
from .reportio import (
    FieldError,
    ReportFile,
    ReportFileError,
    atomic_write,
    build_mechanism,
    check_format_version,
    decode_json,
    decode_provenance,
    encode_value,
    mechanism_config,
    object_fields,
    read_boundary,
)

__all__ = ["Aggregator", "Estimate", "StateConflictError", "aggregate_files", "state_lock"]

_STATE_FORMAT = "ldpkit-aggregate"
#: 2: files known by their content fingerprint; 1 (read too): by a digest of their bytes, kept and compared
_STATE_VERSION = 2
_STATE_REQUIRED = ("format", "version", "provenance", "n", "batches", "support")
_STATE_OPTIONAL = ("written_by", "mechanism", "domain", "data", "files")
#: a file's fingerprint in a state: the content digest (version 2) or a version-1 digest of its bytes
_FILE_ID = re.compile(r"(?:reports-sha256:)?[0-9a-f]{64}", re.ASCII)


class StateConflictError(ValueError):
    """A state file that changed since this aggregator loaded or saved it (another writer), or exists unasked."""


# ============================================================================ the state's lock
class _HeldLock:
    """This process's hold of one lock file: a re-entrant thread lock and the locked descriptor."""

    def __init__(self) -> None:
        self.thread_lock = threading.RLock()
        self.fd: Optional[int] = None
        self.depth = 0


_LOCKS: dict[str, _HeldLock] = {}
_LOCKS_GUARD = threading.Lock()


def _os_lock(fd: int, wait: bool) -> bool:
    """Take the advisory lock of an open file (``fcntl.flock``; ``msvcrt.locking`` on Windows); whether it was taken."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        import msvcrt
        import time

        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
                return True
            except OSError:
                if not wait:
                    return False
                time.sleep(0.1)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        return True
    except BlockingIOError:
        return False


def _os_unlock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
        return
    fcntl.flock(fd, fcntl.LOCK_UN)


@contextlib.contextmanager
def state_lock(path: str | os.PathLike[str], *, waiting: Optional[Callable[[], None]] = None) -> Iterator[None]:
    """Hold the advisory lock of a state file for the block: other processes that ask for it wait.

    The lock is the file ``<path>.lock`` beside the state (created if needed and left in place:
    removing it would let two processes lock two different files).  It is advisory: it orders
    the writers that take it (:meth:`Aggregator.save` does, and ``ldpkit estimate --state`` from
    loading to saving); a writer that ignores it is caught by the comparison
    :meth:`Aggregator.save` makes.  Re-entrant within a process.  ``waiting`` is called once when
    another process holds the lock, before waiting for it.

    Examples
    --------
    >>> import os, tempfile
    >>> from ldpkit.aggregation import state_lock
    >>> state = os.path.join(tempfile.mkdtemp(), "state.json")
    >>> with state_lock(state):
    ...     with state_lock(state):   # re-entrant
    ...         os.path.exists(state + ".lock")
    True
    """
    lock_path = os.fspath(path) + ".lock"
    key = os.path.realpath(lock_path)
    with _LOCKS_GUARD:
        held = _LOCKS.setdefault(key, _HeldLock())
    with held.thread_lock:
        if held.depth == 0:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                if not _os_lock(fd, wait=False):
                    if waiting is not None:
                        waiting()
                    _os_lock(fd, wait=True)
            except BaseException:
                os.close(fd)
                raise
            held.fd = fd
        held.depth += 1
        try:
            yield
        finally:
            held.depth -= 1
            if held.depth == 0 and held.fd is not None:
                try:
                    _os_unlock(held.fd)
                finally:
                    os.close(held.fd)
                    held.fd = None


def _digest_of(path: str) -> Optional[str]:
    """The sha256 of a file's bytes (``None`` when there is no file)."""
    try:
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except FileNotFoundError:
        return None


def _one_line(text: str) -> str:
    """``text`` with every control, format and line-break character escaped: one line that says what it holds."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


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
        return cast("np.ndarray", np.sqrt(np.maximum(self.variance, 0.0)))

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
        index=False, float_format="%.10g")`` writes, without importing pandas.  A data description
        that holds a line break or another control character is written with it escaped (one
        comment line each), and the file is written through a temporary file renamed over ``path``.
        """
        lines = [f"# ldpkit {__version__} estimate: {_one_line(self.mechanism)}, n={self.n}, "
                 f"{_check_level(level):.6g} normal intervals from the plug-in variance"]
        lines += [f"# data: {_one_line(d)}" for d in self.data] or ["# data: not described"]
        names, rows = self._rows(level, "%.10g", "")  # NaN as pandas writes it
        with atomic_write(path) as fh:
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

    def __init__(self, mechanism: Mechanism, *, domain: Optional[Domain] = None) -> None:
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
        #: the sha256 of each state file this aggregator loaded or saved, by its real path (what save compares)
        self._states: dict[str, str] = {}
        #: what this aggregator holds besides files: its own id, those of the aggregators merged into it and the
        #: digests of the states it was loaded from (merging the same one twice is refused)
        self._parts: set[str] = {uuid.uuid4().hex}

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
        file whose reports were added before (the same content fingerprint: the same reports of
        the same mechanism, in any encoding and with any data line; also across a saved and
        resumed state).  Nothing is added from a file that fails part-way (its blocks are summed
        aside first).
        """
        f = ReportFile(path, self.mechanism)
        self._check_file_domain(f.path, f.domain)
        self._add_part(_read_part(f, self.mechanism, progress=progress))
        return self

    def _check_file_domain(self, path: str, domain: Optional[Domain]) -> None:
        """Refuse a file whose domain differs from this aggregator's (when both have one)."""
        if domain is not None and self.domain is not None and domain != self.domain:
            raise ReportFileError(f"{path}: its domain {domain!r} differs from the aggregator's {self.domain!r}")

    def _refuse_known(self, part: _FilePart) -> None:
        """Refuse a file whose reports are already in this aggregate (its content fingerprint)."""
        if part.fingerprint in self.files or (part.legacy_fingerprint is not None
                                              and part.legacy_fingerprint in self.files):
            raise ReportFileError(f"{part.path}: these reports are already in the aggregate (the same reports of the "
                                  "same mechanism were added before, from this file or a copy of it, whatever its "
                                  "encoding or data line)")

    def _add_part(self, part: _FilePart) -> None:
        """Add what :func:`_read_part` summed from one file (its domain checked before it was read)."""
        self._check_file_domain(part.path, part.domain)
        self._refuse_known(part)
        if part.domain is not None and self.domain is None:
            self.domain = part.domain
        if part.support is not None:
            self._accumulate(part.support, part.n)
        if part.fingerprint is not None:
            self.files.append(part.fingerprint)
        if part.data and part.data not in self.data:
            self.data.append(part.data)

    def add_files(self, paths: Iterable[str | os.PathLike[str]], *, progress: bool = False) -> Aggregator:
        """:meth:`add_file` for each path in turn."""
        for p in paths:
            self.add_file(p, progress=progress)
        return self

    def merge(self, other: Aggregator) -> Aggregator:
        """Add another aggregator's totals (same mechanism and domain); returns ``self``.

        Refused when the two share anything: the aggregator itself, a report file, an aggregator
        merged into both, or a state file both were loaded from (its totals would count twice).
        """
        if not isinstance(other, Aggregator):
            raise ArgumentTypeError(f"can only merge an Aggregator, got {type(other).__name__}")
        if other is self:
            raise ValueError("cannot merge an aggregator with itself: its reports would count twice")
        if self._parts & other._parts:
            raise ValueError("cannot merge: the two aggregators hold the same part (one was merged into the other "
                             "before, or both were loaded from the same state): its reports would count twice")
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
        self._parts |= other._parts
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
    def _state_json(self) -> str:
        state = {
            "format": _STATE_FORMAT, "version": _STATE_VERSION, "written_by": f"ldpkit {__version__}",
            "mechanism": _config_or_none(self.mechanism), "provenance": encode_value(self.mechanism.provenance),
            "domain": None if self.domain is None else self.domain.to_json(),
            "n": self.n, "batches": self.batches, "data": self.data, "files": self.files,
            "support": None if self.support is None else [int(v) for v in self.support],
        }
        return json.dumps(state, allow_nan=False)

    def save(self, path: str | os.PathLike[str], *, replace: bool = False) -> None:
        """Write the state (mechanism, domain, totals) as JSON; :meth:`load` resumes from it.

        Holding the state's lock (:func:`state_lock`), the file is compared with the one this
        aggregator loaded from ``path`` or last saved there: if another writer changed it since,
        nothing is written and :class:`StateConflictError` says so (load it again and add to it).
        A state file this aggregator neither loaded nor saved is replaced only with
        ``replace=True``.  The file is written through a temporary file of its own in the same
        folder and renamed over ``path``.

        Raises
        ------
        StateConflictError
            The file changed since this aggregator loaded or saved it, or exists and ``replace``
            is false.
        """
        p = os.fspath(path)
        text = self._state_json().encode()
        real = os.path.realpath(p)
        with state_lock(p):
            current = _digest_of(p)
            known = self._states.get(real)
            if known is not None and current != known:
                raise StateConflictError(
                    f"{p}: the state {'changed' if current else 'was removed'} since this aggregator loaded or saved "
                    "it (another process wrote it); nothing was written: load the state again and add to it")
            if known is None and current is not None and not replace:
                raise StateConflictError(
                    f"{p}: a state file exists that this aggregator did not load: load it (Aggregator.load) to add "
                    "to it, or pass replace=True to overwrite it")
            with atomic_write(p, binary=True) as fh:
                fh.write(text)
            self._states[real] = hashlib.sha256(text).hexdigest()

    @classmethod
    def load(cls, path: str | os.PathLike[str], mechanism: Optional[Mechanism] = None) -> Aggregator:
        """Resume from :meth:`save` (the stored mechanism is rebuilt unless one is given; provenance checked).

        Every field is decoded by its schema and limits (a JSON object of at most
        ``LDPKIT_MAX_HEADER_BYTES`` bytes; known fields only; ``n`` and ``batches``
        whole numbers up to 2**53; the support an integer vector the mechanism accepts; one-line
        data descriptions; file fingerprints); states of version 1 are read too.

        Raises
        ------
        ReportFileError
            Naming the file and the field that fails.
        """
        p = os.fspath(path)
        with read_boundary(p):
            limit = max_header_bytes()
            with open(p, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                raw = fh.read(min(size, limit) + 1)  # the size first: a read of the limit would allocate it
            if len(raw) > limit:
                raise ReportFileError(f"{p}: more than {limit:,} bytes (LDPKIT_MAX_HEADER_BYTES): not an aggregator "
                                      "state this ldpkit reads")
            try:
                state = decode_json(raw, "state")
            except FieldError as exc:
                raise ReportFileError(f"{p}: not a readable aggregator state ({exc})") from None
            if not isinstance(state, dict) or state.get("format") != _STATE_FORMAT:
                raise ReportFileError(f"{p}: not an ldpkit aggregator state")
            version = state.get("version")
            check_format_version(version, _STATE_VERSION, f"{p}: state: version {version!r} does not exist",
                                 f"{p}: state version {version} is")
            object_fields(state, _STATE_REQUIRED, _STATE_OPTIONAL, "state")
            agg = cls._from_state(state, mechanism)
            agg._states[os.path.realpath(p)] = hashlib.sha256(raw).hexdigest()
            agg._parts.add("state:" + hashlib.sha256(raw).hexdigest())
        return agg

    @classmethod
    def _from_state(cls, state: dict[str, Any], mechanism: Optional[Mechanism]) -> Aggregator:
        want = decode_provenance(state["provenance"], "state.provenance")
        if mechanism is None:
            if state.get("mechanism") is None:
                raise ValueError("the state does not store its mechanism; pass mechanism=")
            mechanism = build_mechanism(state["mechanism"], field="state.mechanism")
        elif mechanism.provenance != want:
            raise ValueError(f"the state aggregates {want.describe()}, not {mechanism.provenance.describe()}")
        if mechanism.provenance != want:
            raise FieldError("state.provenance", f"{want.describe()} is not the stored mechanism's "
                                                 f"{mechanism.provenance.describe()}")
        domain = None
        if state.get("domain") is not None:
            labels = object_fields(state["domain"], ("labels",), (), "state.domain")["labels"]
            if not isinstance(labels, list):
                raise FieldError("state.domain.labels", "must be a list of labels")
            check_domain_limit(len(labels), "state.domain")
            domain = Domain.from_json(state["domain"])
        n, batches = state["n"], state["batches"]
        for name, value in (("n", n), ("batches", batches)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_USERS:
                raise FieldError(f"state.{name}", f"must be a whole number in [0, 2**53], got {value!r}")
        data = state.get("data") or []
        if not isinstance(data, list):
            raise FieldError("state.data", "must be a list of one-line descriptions")
        data = [check_text_line(d, f"state.data[{i}]") for i, d in enumerate(data)]
        files = state.get("files") or []
        if not isinstance(files, list) or not all(isinstance(f, str) and _FILE_ID.fullmatch(f) for f in files):
            raise FieldError("state.files", "must be a list of report-file fingerprints")
        if len(set(files)) != len(files):
            raise FieldError("state.files", "names one report file twice")
        support = state["support"]
        if support is not None and (not isinstance(support, list) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in support)):
            raise FieldError("state.support", "must be a list of integers")
        if (support is None) != (n == 0):
            raise ValueError(f"inconsistent state (n={n})")
        agg = cls(mechanism, domain=domain)
        if support is not None:
            arr = np.array(support, dtype=np.int64)
            try:
                mechanism.estimate_from_support(arr, n)  # the aggregate's shape and range for this mechanism
            except ValueError as exc:
                raise FieldError("state.support", " ".join(str(exc).split())) from None
            agg.support = arr
        agg.n, agg.batches, agg.data, agg.files = n, batches, data, list(files)
        return agg


#: the names of Dask's local schedulers that ``aggregate_files(scheduler=...)`` takes (anything else is an address)
_LOCAL_SCHEDULERS = ("synchronous", "threads", "processes")


def _is_client(value: Any) -> bool:
    """Whether ``value`` is a ``distributed.Client`` (without importing distributed when it is not loaded)."""
    import sys

    distributed = sys.modules.get("distributed")
    return distributed is not None and isinstance(value, distributed.Client)


def _check_scheduler(scheduler: Any) -> None:
    """Refuse a scheduler of the wrong type, or one that needs a package that is not installed (before any work)."""
    if scheduler is None:
        return
    if _is_client(scheduler):
        return
    if not isinstance(scheduler, str):
        raise ArgumentTypeError("scheduler must be None, a distributed.Client, one of "
                                f"{_LOCAL_SCHEDULERS} or a scheduler address, got {type(scheduler).__name__}")
    if not scheduler.strip():
        raise ValueError(f"scheduler must be one of {_LOCAL_SCHEDULERS} or a scheduler address, got {scheduler!r}")
    package = "dask" if scheduler in _LOCAL_SCHEDULERS else "distributed"
    try:
        __import__(package)
    except ImportError:
        raise ImportError(f"scheduler={scheduler!r} needs {'dask' if package == 'dask' else 'dask.distributed'}: "
                          "install it with pip install 'ldpkit[cluster]'") from None


def _file_paths(paths: Any) -> list[str]:
    """The file names of ``paths`` (a non-empty collection, each file given once), checked before any work."""
    if isinstance(paths, (str, bytes, os.PathLike)) or not isinstance(paths, Iterable):
        raise ArgumentTypeError(f"paths must be a list of report file names, got {type(paths).__name__}")
    names = list(paths)
    if not names:
        raise ValueError("paths must name at least one report file, got an empty list")
    seen: dict[tuple[int, int], str] = {}
    for p in names:
        if not isinstance(p, (str, os.PathLike)):
            raise ArgumentTypeError(f"paths must hold file names, got {type(p).__name__} {p!r}")
        name = os.fspath(p)
        if not os.path.isfile(name):
            raise FileNotFoundError(f"{name}: no such report file")
        on_disk = os.stat(name)  # one file on disk, however it is named (links included)
        key = (on_disk.st_dev, on_disk.st_ino)
        if key in seen:
            raise ValueError(f"{name}: given twice (as {seen[key]!r} too): its reports would be counted twice")
        seen[key] = name
    return [os.fspath(p) for p in names]


def aggregate_files(paths: Iterable[str | os.PathLike[str]], *, scheduler: Any = None,
                    aggregator: Optional[Aggregator] = None) -> Aggregator:
    """Aggregate many report files, each to a partial aggregate on a Dask worker, then merged.

    Every file is opened first, here, by the validating reader (:class:`~ldpkit.reportio.ReportFile`:
    header and end record), and checked against the first (or against ``aggregator``): a file of
    another mechanism, configuration or contract (another provenance) or of another domain is
    refused, naming it and what differs, before any report is read.  Then each file is read
    where the scheduler runs it, by the same reader (so it must be at the same absolute path there, e.g.
    on a shared file system), to its integer aggregate and count (a task reads a run of
    consecutive small files, about eight million reports); the parts come back and are
    added in the order of ``paths``.  Aggregates are integer vectors, so the total, and the
    :class:`Estimate` computed once from it, are the same, bit for bit, as
    :meth:`Aggregator.add_files` of the same files in one process, whatever the scheduler or the
    order in which parts finish.  Reports counted twice (two files of the same content, or a
    file already in ``aggregator``) are refused, naming the file, before anything is added: a
    failure adds nothing.

    Parameters
    ----------
    paths
        The report files (at least one, each once).
    scheduler
        ``None`` (default): in this process, one file after another.  A
        ``distributed.Client``: on its cluster.  A scheduler address such as
        ``"tcp://10.0.0.5:8786"``: on that cluster, through a client connected for the call (as
        ``ldpkit reproduce --scheduler``).  ``"synchronous"``, ``"threads"`` or ``"processes"``:
        Dask's local schedulers.  Every choice but ``None`` needs the ``cluster`` extra
        (``pip install 'ldpkit[cluster]'``).
    aggregator
        Add to this aggregator (e.g. one resumed with :meth:`Aggregator.load`); by default a new
        one of the first file's mechanism and domain.

    Returns
    -------
    Aggregator
        ``aggregator``, or the new one, holding every file's reports.

    Raises
    ------
    ValueError
        An empty ``paths``, a file given twice or already counted, or a scheduler it cannot
        connect to.
    ~ldpkit.reportio.ReportFileError
        A file that is not a readable report file, or not of the same mechanism and domain
        (naming it).

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from ldpkit import GRR
    >>> from ldpkit.aggregation import Aggregator, aggregate_files
    >>> from ldpkit.reportio import save_reports
    >>> grr, folder = GRR(4, 1.0), tempfile.mkdtemp()
    >>> paths = [os.path.join(folder, f"day{i}.ldpr") for i in range(3)]
    >>> for i, path in enumerate(paths):
    ...     save_reports(path, grr.perturb(np.arange(400) % 4, rng=i), grr)
    >>> one = Aggregator(grr).add_files(paths).estimate()             # one process, file after file
    >>> est = aggregate_files(paths, scheduler="threads").estimate()   # on Dask's threads
    >>> est.n, est.counts.tobytes() == one.counts.tobytes()
    (1200, True)
    """
    names = _file_paths(paths)
    if aggregator is not None and not isinstance(aggregator, Aggregator):
        raise ArgumentTypeError(f"aggregator must be an Aggregator, got {type(aggregator).__name__}")
    _check_scheduler(scheduler)
    # every file opened and checked before any report is read (the header and end record only)
    mechanism: Optional[Mechanism] = None if aggregator is None else aggregator.mechanism
    domain = None if aggregator is None else aggregator.domain
    sizes = []
    for name in names:
        f = ReportFile(name, mechanism)
        sizes.append(f.n)
        if mechanism is None:
            mechanism = f.mechanism
        if f.domain is not None:
            if domain is not None and f.domain != domain:
                raise ReportFileError(f"{f.path}: its domain {f.domain!r} differs from that of "
                                      f"{'the aggregator' if aggregator is not None else names[0]} ({domain!r})")
            domain = domain or f.domain
    agg = aggregator if aggregator is not None else Aggregator(f.mechanism if mechanism is None else mechanism,
                                                               domain=domain)
    parts = _compute_parts(names, sizes, agg.mechanism, scheduler)
    # reports counted twice are refused before anything is added; then the parts in the order of paths
    trial = Aggregator(agg.mechanism, domain=agg.domain)
    trial.files = list(agg.files)
    for part in parts:
        trial._check_file_domain(part.path, part.domain)
        trial._refuse_known(part)
        trial.files.append(part.fingerprint or "")
        trial.domain = trial.domain or part.domain
    for part in parts:
        agg._add_part(part)
    return agg


#: a Dask task reads consecutive files until it holds this many reports (one file at least): small files are
#: grouped, so that the scheduler's cost per task stays small next to the reading
_TASK_REPORTS = 2**23


def _groups(names: list[str], sizes: list[int]) -> list[list[str]]:
    """``names`` cut into runs of consecutive files of at least ``_TASK_REPORTS`` reports (the last: any)."""
    groups: list[list[str]] = [[]]
    held = 0
    for name, size in zip(names, sizes):
        if groups[-1] and held >= _TASK_REPORTS:
            groups.append([])
            held = 0
        groups[-1].append(name)
        held += size
    return groups


def _compute_parts(names: list[str], sizes: list[int], mechanism: Mechanism, scheduler: Any) -> list[_FilePart]:
    """Each file's part, in the order of ``names``: here, or on Dask (one task per group of files)."""
    if scheduler is None:
        return [_read_part(ReportFile(name, mechanism), mechanism) for name in names]
    import dask

    shared = dask.delayed(mechanism, traverse=False)  # sent once, not once per task
    tasks = [dask.delayed(_files_parts, pure=False)([os.path.abspath(name) for name in group], shared)
             for group in _groups(names, sizes)]
    if isinstance(scheduler, str) and scheduler not in _LOCAL_SCHEDULERS:
        from distributed import Client

        try:
            client = Client(scheduler, timeout=10)
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            raise ValueError(f"scheduler: cannot connect to {scheduler!r} ({exc}; Dask's local schedulers are "
                             f"{', '.join(_LOCAL_SCHEDULERS)})") from None
        with client:
            results = dask.compute(*tasks, scheduler=client)
    else:
        results = dask.compute(*tasks, scheduler=scheduler)
    parts = [part for group in results for part in group]
    # the workers name the files by their absolute paths; the caller's names are restored
    return [dataclasses_replace(part, path=name) for part, name in zip(parts, names)]


@dataclass(frozen=True)
class _FilePart:
    """What one report file adds to an aggregate: its summed (integer) aggregate and what identifies it."""

    path: str
    support: Optional[np.ndarray]
    n: int
    fingerprint: Optional[str]
    legacy_fingerprint: Optional[str]
    data: Optional[str]
    domain: Optional[Domain]


def _read_part(f: ReportFile, mechanism: Mechanism, *, progress: bool = False) -> _FilePart:
    """Sum the aggregate of every block of an opened report file (one block held at a time)."""
    total: Optional[np.ndarray] = None
    n = 0
    blocks = f.batches()
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=f.n, unit="reports", desc=os.path.basename(f.path), leave=False)
    try:
        for batch in blocks:
            try:
                sup = np.asarray(mechanism.aggregate(batch)).astype(np.int64)
            except ValueError as exc:
                raise ReportFileError(f"{f.path}: invalid reports after report {n}: {exc}") from exc
            k = mechanism.n_reports(batch)
            total = sup if total is None else total + sup
            n += k
            del batch  # hold one block at a time
            if progress:
                bar.update(k)
    finally:
        if progress:
            bar.close()
    return _FilePart(f.path, total, n, f.fingerprint, f.legacy_fingerprint, f.data, f.domain)


def _files_parts(paths: list[str], mechanism: Optional[Mechanism]) -> list[_FilePart]:
    """The part of each file, read where this runs (a Dask worker): each file is opened and validated again there."""
    files = [ReportFile(path, mechanism) for path in paths]
    return [_read_part(f, f.mechanism if mechanism is None else mechanism) for f in files]


def _config_or_none(mechanism: Mechanism) -> Optional[dict[str, Any]]:
    try:
        return mechanism_config(mechanism)
    except NotImplementedError:
        return None

