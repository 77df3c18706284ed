"""Gowalla: the processed 10-core split files (item sets) and the raw SNAP check-ins.

Part of :mod:`ldpkit.datasets.parsers`, which documents the rules every parser follows.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

from ..containers import ItemSetData
from .errors import DatasetFormatError
from .reading import PathLike, check_choice, check_name, check_path, line_number, read_lines, source_label
from .records import handle_blank, reindex_ints, sets_of_distinct_pairs, tokenize_ints

__all__ = ["CheckIns", "read_gowalla_10core", "read_gowalla_checkins"]


def read_gowalla_10core(paths: PathLike | Iterable[PathLike], *, name: str = "Gowalla") -> ItemSetData:
    """Read the processed 10-core Gowalla files (``user item item ...`` per line).

    The train / valid / test splits share user ids, so the result is the union per user over all
    files: each user's distinct locations, those of the first file first.  User ids must be
    exactly ``0..U-1`` over the union (error otherwise); a line holding only a user id is an empty
    contribution.  Locations are re-indexed by sorted id (``vocabulary`` holds the original ids).
    The real split files give 29,858 users, 40,981 locations and 1,027,370 user-location pairs.
    Datasets chapter, :ref:`sec-datasets-parsers`.

    Parameters
    ----------
    paths
        One file or a sequence of files (plain or compressed), in the order to merge them.
    name
        Dataset name stored in the result.

    Raises
    ------
    DatasetFormatError
        Missing path, directory, empty file, truncated or corrupt compressed stream, CR without
        LF, truncated last line, blank line, bad token (naming file and line), or user ids that
        are not contiguous from 0 (which also catches many files cut at a line end).
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not isinstance(paths, Iterable):
        raise ValueError(f"paths must be a file path or a sequence of file paths, got {type(paths).__name__}")
    plist = [check_path(q, "paths entry") for q in paths]
    if not plist:
        raise ValueError("paths is empty: give at least one Gowalla file")
    name = check_name(name)
    all_user: list[np.ndarray] = []
    all_loc: list[np.ndarray] = []
    notes: list[str] = []
    seen_users: list[np.ndarray] = []
    for p in plist:
        buf = read_lines(p, "error", notes, hint=False)
        values, line_of, n_lines = tokenize_ints(buf, p.name)
        handle_blank(line_of, n_lines, p.name, "error", notes)
        head = np.concatenate(([True], line_of[1:] != line_of[:-1]))  # first token of each line
        line_user = values[head]
        seen_users.append(line_user)
        all_user.append(line_user[line_of[~head]])
        all_loc.append(values[~head])
    users = np.concatenate(seen_users)
    n_users = int(users.max()) + 1
    if n_users > users.size:  # more ids than lines: some id is surely missing (no huge table needed)
        raise DatasetFormatError(
            ", ".join(q.name for q in plist),
            f"user ids are not contiguous: largest id {n_users - 1} but only {users.size} user lines",
        )
    present = np.zeros(n_users, dtype=bool)
    present[users] = True
    if not present.all():
        missing = np.flatnonzero(~present)
        raise DatasetFormatError(
            ", ".join(q.name for q in plist),
            f"user ids are not contiguous: {missing.size} id(s) in 0..{n_users - 1} never occur "
            f"(first missing: {int(missing[0])})",
        )
    user = np.concatenate(all_user)
    vocab, loc = reindex_ints(np.concatenate(all_loc))
    sets, n_rep = sets_of_distinct_pairs(user, loc, n_users, vocab.size)
    if n_rep:
        notes.append(f"merged {n_rep} repeated (user, location) pair(s) across lines/files")
    source = ", ".join(source_label(q) for q in plist)
    return ItemSetData(sets=sets, vocabulary=vocab, name=name, source=source, notes=tuple(notes))


@dataclass(frozen=True, eq=False)
class CheckIns:
    """Raw location check-ins: record ``k`` is ``user[k]`` at ``location[k]`` at ``time[k]``.

    Attributes
    ----------
    user
        int64 user ids.
    time
        ``datetime64[s]`` check-in times (UTC).
    lat, lon
        float64 coordinates in degrees (lat in [-90, 90], lon in [-180, 180]).
    location
        int64 location ids.
    source
        File name and sha256.
    notes
        What the parser dropped, with counts.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ldpkit.datasets import read_gowalla_checkins
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "checkins.txt"
    ...     _ = path.write_text("0\\t2010-10-19T23:55:27Z\\t30.2359\\t-97.7951\\t22847\\n"
    ...                         "1\\t2010-10-17T23:42:03Z\\t30.2557\\t-97.7634\\t316637\\n")
    ...     checkins = read_gowalla_checkins(path)
    >>> len(checkins), checkins.user.tolist(), checkins.location.tolist()
    (2, [0, 1], [22847, 316637])
    """

    user: np.ndarray
    time: np.ndarray
    lat: np.ndarray
    lon: np.ndarray
    location: np.ndarray
    source: str = ""
    notes: tuple[str, ...] = ()

    def __len__(self) -> int:
        return int(self.user.size)


def read_gowalla_checkins(path: PathLike, *, truncated: Literal["error", "drop"] = "error") -> CheckIns:
    """Read the raw SNAP Gowalla check-ins (``loc-gowalla_totalCheckins.txt``, optionally gzipped).

    Tab-separated lines ``user, time, latitude, longitude, location`` with times like
    ``2010-10-19T23:55:27Z``.  Every field is validated (non-negative integer ids, ISO time in UTC,
    latitude in [-90, 90], longitude in [-180, 180]); the first bad line raises.  Line endings,
    truncation and compression are checked as in :func:`read_fimi`.  Datasets chapter,
    :ref:`sec-datasets-parsers`.

    Parameters
    ----------
    path
        Plain or compressed (gzip, bzip2, xz) file.
    truncated
        As in :func:`read_fimi`.

    Raises
    ------
    DatasetFormatError
        Missing path, directory, empty or truncated file, corrupt compressed stream, CR without
        LF, a byte that is not printable ASCII, a line without exactly 5 fields, or an invalid
        field (naming file, line and field).
    """
    p = check_path(path)
    check_choice(truncated, "truncated", ("error", "drop"))
    fname = p.name
    notes: list[str] = []
    buf = read_lines(p, truncated, notes)
    if not buf.strip():
        raise DatasetFormatError(fname, "no check-in found")
    n_lines = _check_checkin_lines(buf, fname)
    df = _checkin_frame(buf, fname)
    if len(df) != n_lines:  # pragma: no cover - defensive: one row per line is checked above
        raise DatasetFormatError(fname, f"read {len(df)} rows from {n_lines} lines")
    user = df["user"].to_numpy(dtype=np.int64)
    location = df["location"].to_numpy(dtype=np.int64)
    _bad_row(df, user < 0, "user", "not a non-negative integer", fname)
    _bad_row(df, location < 0, "location", "not a non-negative integer", fname)
    time = _checkin_times(df, fname)
    coords = {}
    for column, lim in (("lat", 90.0), ("lon", 180.0)):
        vals = df[column].to_numpy(dtype=np.float64)
        _bad_row(df, ~np.isfinite(vals), column, "not a finite number", fname)
        _bad_row(df, np.abs(vals) > lim, column, f"outside [-{lim:g}, {lim:g}]", fname)
        coords[column] = vals
    return CheckIns(
        user=user,
        time=time,
        lat=coords["lat"],
        lon=coords["lon"],
        location=location,
        source=source_label(p),
        notes=tuple(notes),
    )


def _check_checkin_lines(buf: bytes, fname: str) -> int:
    """Every byte printable ASCII and every line five tab-separated fields (vectorised, before any
    conversion); return the number of lines."""
    a = np.frombuffer(buf, dtype=np.uint8)
    foreign = (a > 126) | ((a < 32) & (a != 9) & (a != 10) & (a != 13))  # every field is printable ASCII
    if foreign.any():
        pos = int(np.argmax(foreign))
        raise DatasetFormatError(
            fname, f"byte 0x{int(a[pos]):02x} is not printable ASCII (a damaged byte?)", line=line_number(buf, pos))
    # field count per line, from the tab positions
    newlines = np.flatnonzero(a == 10)
    tabs_per_line = np.bincount(np.searchsorted(newlines, np.flatnonzero(a == 9)), minlength=newlines.size)
    line_len = np.diff(np.concatenate(([-1], newlines))) - 1
    wrong = np.flatnonzero(tabs_per_line != 4)
    if wrong.size:
        k = int(wrong[0])
        blank_line = line_len[k] == 0 or not buf[newlines[k] - line_len[k] : newlines[k]].strip()
        what = "blank line" if blank_line else f"expected 5 tab-separated fields, found {tabs_per_line[k] + 1}"
        raise DatasetFormatError(fname, what, line=k + 1)
    return int(newlines.size)


def _checkin_frame(buf: bytes, fname: str) -> Any:
    """The five columns as a data frame, numbers converted by the C parser; on failure, the first bad
    line is named (read as text and checked column by column)."""
    import pandas as pd

    names = ["user", "time", "lat", "lon", "location"]

    def frame(dtype: Any) -> Any:
        return pd.read_csv(
            io.BytesIO(buf),
            sep="\t",
            header=None,
            names=names,
            dtype=dtype,
            na_filter=False,
            skip_blank_lines=False,
            quoting=csv.QUOTE_NONE,
            engine="c",
        )

    fast = {"user": np.int64, "time": str, "lat": np.float64, "lon": np.float64, "location": np.int64}
    try:  # fast path: let the C parser convert the numeric columns
        return frame(fast)
    except (ValueError, OverflowError):  # slow path: read text, then name the first bad line
        df = frame(str)
        for column in ("user", "location"):
            _bad_row(
                df, ~df[column].str.fullmatch(r"\d{1,18}").to_numpy(dtype=bool), column, "not a non-negative integer",
                fname,
            )
        for column in ("lat", "lon"):
            vals = pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=float)
            _bad_row(df, np.isnan(vals), column, "not a number", fname)
        raise DatasetFormatError(fname, "unreadable check-in file") from None  # pragma: no cover


def _bad_row(df: Any, mask: np.ndarray, column: str, what: str, fname: str) -> None:
    """Raise naming the first row where ``mask`` holds (its line and its value), if any."""
    if mask.any():
        k = int(np.argmax(mask))
        val = df[column].iloc[k]
        shown = repr(val) if isinstance(val, str) else repr(val.item() if hasattr(val, "item") else val)
        raise DatasetFormatError(fname, f"{what}: {column} = {shown}", line=k + 1)


def _checkin_times(df: Any, fname: str) -> np.ndarray:
    """The ``time`` column as ``datetime64[s]`` (UTC), each value first checked to look like
    ``2010-10-19T23:55:27Z``."""
    time_text = df["time"].to_numpy(dtype=str)
    _bad_row(df, ~_iso_z_shape(time_text), "time", "not an ISO time like 2010-10-19T23:55:27Z", fname)
    stamps = time_text.astype("<U19")  # drop the final "Z" (UTC)
    try:
        return cast("np.ndarray", stamps.astype("datetime64[s]"))
    except ValueError:
        for k, stamp in enumerate(stamps):
            try:
                np.datetime64(stamp, "s")
            except ValueError:
                raise DatasetFormatError(fname, f"invalid date/time {str(time_text[k])!r}", line=k + 1) from None
        raise  # pragma: no cover


def _iso_z_shape(times: np.ndarray) -> np.ndarray:
    """Vectorised check that every string looks like ``YYYY-MM-DDTHH:MM:SSZ`` (values checked later)."""
    ok = np.char.str_len(times) == 20
    if times.dtype.itemsize != 80:  # some string longer than 20 characters (or all shorter)
        if not ok.any():
            return cast("np.ndarray", ok)
        times = np.where(ok, times, "0000-00-00T00:00:00Z").astype("<U20")
    codes = times.view(np.uint32).reshape(-1, 20)
    digit = (codes >= ord("0")) & (codes <= ord("9"))
    pattern = "dddd-dd-ddTdd:dd:ddZ"
    for j, ch in enumerate(pattern):
        ok &= digit[:, j] if ch == "d" else codes[:, j] == ord(ch)
    return cast("np.ndarray", ok)
