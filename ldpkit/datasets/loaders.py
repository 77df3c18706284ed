"""Loaders of the real datasets, with labelled stand-ins when a file is unavailable.

Every loader takes ``source``:

``"real"`` (default)
    Resolve the files (``LDPKIT_DATA_DIR``, the cache, then a download; see
    :mod:`ldpkit.datasets.fetch`), parse them and return the real data, or raise
    :class:`~ldpkit.datasets.fetch.DatasetUnavailableError`.
``"auto"``
    The real data when they can be resolved, otherwise the stand-in of
    :mod:`ldpkit.datasets.standins` together with a :class:`StandInWarning` naming what is missing.
    Only missing files lead to a stand-in: a real file that is present but unusable (wrong
    checksum, not a regular file, a parse error, statistics that differ from the published ones)
    is an error naming the file and why, never a reason to fall back.  The same holds for the real
    sample a stand-in resamples (the Kosarak prefix for Kosarak).
``"standin"``
    Always the stand-in (``is_standin=True``, label ``"<name> (stand-in)"``).

``rng`` seeds the stand-in only; its default ``0`` makes the stand-in the same dataset on every
call.  Files without a pinned checksum (full Kosarak, Clothing, the online Gowalla layout) are
accepted only if the parsed data reproduce the published counts exactly (else
:class:`StatisticsMismatchError`); full Kosarak must moreover begin with the pinned Kosarak prefix.
Parsed data are cached per process, keyed by the resolved paths, their sizes and modification
times and the options, and returned with read-only arrays (the same object is shared between
calls); stand-ins are cached by their options, seed and the real sample they resample.

The data policy.  Every experiment, chapter and command loads data through ``source="auto"``:
a valid local real file; else a download where one exists and downloads are allowed; else the
labelled stand-in, rebuilt from a real prefix of the file when one is held (``origin="prefix"``,
Kosarak) and synthetic otherwise (``origin="stand-in"``).  A real file that is present but damaged,
or that needs an optional reader that is not installed (:class:`~ldpkit.datasets.MissingReaderError`), is an
error.  :func:`~ldpkit.datasets.plan` says which of these a load would give without parsing anything; ``ldpkit datasets``
prints it.  Documented on the Datasets page of the book (:ref:`sec-datasets-loaders`).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
import gzip
import hashlib
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from .._rng import RNGLike, as_generator
from .containers import ItemSetData, SingleItemData
from .fetch import ChecksumMismatchError, DatasetUnavailableError, data_dir, fetch, is_offline, locate, sha256_file
from .parsers import DatasetFormatError, MissingReaderError, needs_reader, reader_installed
from .registry import DATASETS, KOSARAK_PREFIX_LINES, KOSARAK_PREFIX_LINES_SHA256, DataFile, DatasetInfo
from .standins import bootstrap_itemsets, spec_for, standin_itemsets, standin_single

__all__ = [
    "DataPlan",
    "StandInWarning",
    "StatisticsMismatchError",
    "available",
    "describe",
    "load",
    "load_brown",
    "load_clothing",
    "load_gowalla",
    "load_groceries",
    "load_kosarak",
    "load_kosarak_prefix",
    "load_online_retail",
    "load_retail",
    "plan",
]

Source = Literal["real", "auto", "standin"]
Data = ItemSetData | SingleItemData
_SOURCES = ("real", "auto", "standin")


class StandInWarning(UserWarning):
    """A loader called with ``source="auto"`` returned a stand-in because real data were missing.

    Examples
    --------
    >>> import warnings
    >>> from ldpkit.datasets import StandInWarning, load_groceries
    >>> issubclass(StandInWarning, UserWarning)
    True
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", StandInWarning)   # a silent fallback would now raise
    ...     data = load_groceries(source="standin")          # asked for explicitly: no warning
    >>> data.label
    'Groceries (stand-in)'
    """


class StatisticsMismatchError(ValueError):
    """A file without a pinned checksum does not reproduce the dataset's published statistics.

    Examples
    --------
    >>> from ldpkit.datasets import StatisticsMismatchError
    >>> issubclass(StatisticsMismatchError, ValueError)
    True
    """


# ---------------------------------------------------------------------------------------------
# registry access


def describe(key: str) -> DatasetInfo:
    """Provenance, licence, files, URLs, checksums and published statistics of a dataset."""
    if not isinstance(key, str) or key not in DATASETS:
        raise ValueError(f"unknown dataset key {key!r}; known: {', '.join(sorted(DATASETS))}")
    return DATASETS[key]


def _resolve(info: DatasetInfo, *, download: bool = True) -> tuple[tuple[Path, ...], tuple[DataFile, ...]]:
    """Paths of the first layout available locally, else of the first layout that downloads."""
    for layout in info.layouts:
        paths = []
        for spec in layout:
            found = locate(spec)
            if found is None:
                break
            paths.append(found)
        else:
            return tuple(paths), layout
    attempts: list[tuple[str, str]] = []
    for layout in info.layouts:
        try:
            return tuple(fetch(spec, download=download) for spec in layout), layout
        except DatasetUnavailableError as exc:
            attempts.extend((f"{exc.file} @ {place}", reason) for place, reason in exc.attempts)
    wanted = " or ".join("{" + ", ".join(f.path for f in layout) + "}" for layout in info.layouts)
    raise DatasetUnavailableError(f"{info.name}: {wanted}", attempts)


def available(key: str) -> bool:
    """True when the real data of ``key`` are present locally with the right checksum.

    No download is attempted and nothing is parsed: for a file without a pinned checksum this says
    that a copy exists (and matches the hash recorded when it was downloaded), not that it passes
    the published-statistics check, which happens when it is loaded.  A copy with a wrong
    checksum, or something that is not a regular file at its place, is not available (loading it
    raises, saying why).
    """
    info = describe(key)
    try:
        _resolve(info, download=False)
    except (DatasetUnavailableError, ChecksumMismatchError, DatasetFormatError):
        return False
    return True


# ---------------------------------------------------------------------------------------------
# verification of unpinned files


def _open_maybe_gzip(path: Path) -> Any:
    with open(path, "rb") as fh:
        magic = fh.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def _count_tokens(path: Path) -> int:
    """Whitespace-separated tokens of a (possibly gzipped) text file."""
    total, prev_space = 0, True
    with _open_maybe_gzip(path) as fh:
        for chunk in iter(lambda: fh.read(1 << 24), b""):
            arr = np.frombuffer(chunk, dtype=np.uint8)
            space = (arr == 32) | (arr == 9) | (arr == 10) | (arr == 13)
            starts = ~space & np.concatenate(([prev_space], space[:-1]))
            total += int(np.count_nonzero(starts))
            prev_space = bool(space[-1])
    return total


def _count_lines(path: Path) -> int:
    """Non-blank lines of a (possibly gzipped) text file."""
    with _open_maybe_gzip(path) as fh:
        return sum(1 for line in fh if line.strip())


def _kosarak_prefix_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with _open_maybe_gzip(path) as fh:
        for _ in range(KOSARAK_PREFIX_LINES):
            digest.update(fh.readline())
    return digest.hexdigest()


def _check_statistics(data: ItemSetData, info: DatasetInfo, files: str, raw_records: int | None = None) -> str:
    """Raise unless n, m and records equal the published values; return the verification note."""
    pub = info.published
    problems = []
    if data.n != pub["n"]:
        problems.append(f"n = {data.n:,} users (published {pub['n']:,})")
    if data.m != pub["m"]:
        problems.append(f"m = {data.m:,} items (published {pub['m']:,})")
    accepted = {data.n_records} | ({raw_records} if raw_records is not None else set())
    if pub["records"] not in accepted:
        got = f"{data.n_records:,} distinct pairs"
        if raw_records is not None:
            got += f", {raw_records:,} raw records"
        problems.append(f"records = {got} (published {pub['records']:,})")
    if problems:
        raise StatisticsMismatchError(
            f"{files}: no pinned checksum, and the parsed data do not match the published statistics of "
            f"{info.name}: " + "; ".join(problems) + ". The file is not used; delete it and download it again."
        )
    return (
        f"checksum not pinned; verified by published statistics instead: n = {data.n:,}, m = {data.m:,}, "
        f"records = {pub['records']:,} all equal the published values"
    )


# ---------------------------------------------------------------------------------------------
# parsing with a per-process cache


def _freeze(data: Data) -> Data:
    arrays = [data.vocabulary]
    if isinstance(data, ItemSetData):
        arrays += [data.sets.indices, data.sets.offsets]
    else:
        arrays.append(data.items)
    for arr in arrays:
        if isinstance(arr, np.ndarray):
            arr.flags.writeable = False
    return data


def _with_notes(data: Data, *extra: str) -> Data:
    return dataclasses.replace(data, notes=(*data.notes, *extra))


def _pinned_note(layout: tuple[DataFile, ...], paths: tuple[Path, ...]) -> str:
    return "sha256 verified against the pinned value: " + ", ".join(
        f"{p.name} {spec.sha256[:12]}" for p, spec in zip(paths, layout) if spec.sha256
    )


def _parse(
    key: str, paths: tuple[Path, ...], layout: tuple[DataFile, ...], options: tuple[tuple[str, Any], ...]
) -> Data:
    from . import parsers

    info = DATASETS[key]
    opts = dict(options)
    files = ", ".join(p.name for p in paths)
    data: Data
    pinned = all(spec.sha256 is not None for spec in layout)
    if key in ("retail", "kosarak"):
        data = parsers.read_fimi(paths[0], name=info.name)
    elif key == "kosarak-prefix":
        data = parsers.read_fimi(paths[0], name=info.name, truncated="drop")
    elif key == "clothing":
        data = parsers.read_clothing(paths[0], name=info.name)
    elif key == "gowalla-10core":
        data = parsers.read_gowalla_10core(list(paths), name=info.name)
    elif key == "brown":
        data = parsers.read_brown(paths[0], lowercase=opts["lowercase"], name=info.name)
    elif key == "online-retail":
        data = parsers.read_online_retail(paths[0], clean=opts["clean"], unit=opts["unit"], name=info.name)
    elif key == "groceries":
        data = parsers.read_groceries(paths[0], name=info.name)
    else:  # pragma: no cover - guarded by describe()
        raise ValueError(f"no parser for dataset {key!r}")
    data = dataclasses.replace(data, files=tuple(
        (p.name, spec.sha256.lower() if spec.sha256 else sha256_file(p)) for p, spec in zip(paths, layout)))
    if pinned:
        return _freeze(_with_notes(data, _pinned_note(layout, paths)))
    assert isinstance(data, ItemSetData)
    raw = None
    if key == "kosarak":
        digest = _kosarak_prefix_digest(paths[0])
        if digest != KOSARAK_PREFIX_LINES_SHA256:
            raise ChecksumMismatchError(
                paths[0], KOSARAK_PREFIX_LINES_SHA256, digest,
                f"sha256 of the first {KOSARAK_PREFIX_LINES:,} lines, which must equal the pinned Kosarak prefix",
            )
        raw = _count_tokens(paths[0])
    elif key == "clothing":
        raw = _count_lines(paths[0])
    note = _check_statistics(data, info, files, raw)
    extra = [note]
    if key == "kosarak":
        extra.append(f"the first {KOSARAK_PREFIX_LINES:,} lines are byte-identical to the pinned Kosarak prefix")
    return _freeze(_with_notes(data, *extra))


@functools.lru_cache(maxsize=32)
def _parse_cached(key: str, stamp: tuple[tuple[str, int, int], ...], layout: tuple[DataFile, ...],
                  options: tuple[tuple[str, Any], ...]) -> Data:
    return _parse(key, tuple(Path(s[0]) for s in stamp), layout, options)


def _stamp(paths: tuple[Path, ...]) -> tuple[tuple[str, int, int], ...]:
    out = []
    for p in paths:
        st = p.stat()
        out.append((str(p.resolve()), st.st_size, st.st_mtime_ns))
    return tuple(out)


@functools.lru_cache(maxsize=16)
def _standin_cached(key: str, options: tuple[tuple[str, Any], ...], seed: int,
                    sample: tuple[tuple[str, int, int], ...] | None, why: str | None) -> Data:
    data = _make_standin(key, dict(options), seed, sample is not None)
    return _freeze(_with_notes(data, f"real data unavailable: {why}") if why else data)


def _sample_stamp(info: DatasetInfo) -> tuple[tuple[str, int, int], ...] | None:
    """Stamp of the verified real sample the stand-in of ``info`` resamples, or ``None`` if there is none.

    A present but damaged sample raises (its checksum error): a stand-in is never built around it.
    """
    if info.resample_from is None:
        return None
    try:
        paths, _ = _resolve(describe(info.resample_from), download=False)
    except DatasetUnavailableError:
        return None
    return _stamp(paths)


def _make_standin(key: str, opts: dict[str, Any], rng: RNGLike, resample: bool) -> Data:
    info = describe(key)
    if resample and info.resample_from is not None:
        # a real sample beats a fitted power law: resample its users (see bootstrap_itemsets)
        sample = cast(ItemSetData, load(info.resample_from, source="real"))
        return bootstrap_itemsets(sample, int(info.published["n"]), int(info.published["m"]), rng, name=info.name)
    spec = spec_for(key, **opts)
    return standin_single(spec, rng) if spec.kind == "single" else standin_itemsets(spec, rng)


def _standin(key: str, opts: dict[str, Any], rng: RNGLike, why: str | None) -> Data:
    sample = _sample_stamp(describe(key))
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and int(rng) >= 0:
        # cached with its note, so that a seed gives the same object on every call (callers cache per object)
        return _standin_cached(key, tuple(sorted(opts.items())), int(rng), sample, why)
    data = _make_standin(key, opts, rng, sample is not None)
    return _with_notes(data, f"real data unavailable: {why}") if why else data


def _summarise(exc: DatasetUnavailableError) -> str:
    """The places tried, without local paths (the text ends up in notes, warnings and the book)."""
    text = "; ".join(f"{place}: {reason}" for place, reason in exc.attempts) or str(exc)
    text = re.sub(r"LDPKIT_DATA_DIR=\S+?(?=:(\s|$))", "LDPKIT_DATA_DIR", text)
    return re.sub(r"\bcache \S+?(?=:(\s|$))", "user cache", text)


def _load(key: str, source: Any, rng: RNGLike, **opts: Any) -> Data:
    if not isinstance(source, str) or source not in _SOURCES:
        raise ValueError(f"source must be one of {', '.join(map(repr, _SOURCES))}, got {source!r}")
    # checked whatever the source: a bad rng is an error even when the real file is used and the rng is not
    # (a generator is returned unchanged and draws nothing)
    as_generator(rng)
    info = describe(key)
    if source == "standin":
        return _standin(key, opts, rng, None)
    try:
        paths, layout = _resolve(info)
    except DatasetUnavailableError as exc:
        if source == "real":
            raise
        why = _summarise(exc)
        data = _standin(key, opts, rng, why)
        warnings.warn(
            f"{info.name}: real data unavailable ({why}); using the stand-in labelled {data.label!r}",
            StandInWarning,
            stacklevel=3,
        )
        return data
    _check_readers(paths)
    return _parse_cached(key, _stamp(paths), layout, tuple(sorted(opts.items())))


_READER_FIX = {"pyreadr": "pip install 'ldpkit[data]'"}


def _check_readers(paths: tuple[Path, ...]) -> None:
    """Raise :class:`MissingReaderError` when a present file needs an optional reader that is missing."""
    for path in paths:
        package = needs_reader(path)
        if package is not None and not reader_installed(package):
            raise MissingReaderError(path.name, package, _READER_FIX.get(package, f"pip install {package}"))


# ---------------------------------------------------------------------------------------------
# what a load would give


@dataclass(frozen=True)
class DataPlan:
    """What loading a dataset with ``source="auto"`` would give here and now (:func:`plan`).

    Attributes
    ----------
    key
        Registry key.
    name
        Display name.
    origin
        ``"real"`` (verified local files), ``"download"`` (not held locally, downloadable, and
        downloads are allowed: the real data if the download succeeds, else the stand-in below),
        ``"prefix"`` (stand-in rebuilt from the real prefix that is held), ``"stand-in"``
        (synthetic) or ``"error"`` (a present file is damaged or needs a reader that is missing:
        loading fails).
    detail
        One line: which files were found where, or why a stand-in will be used, or the error.
    fix
        For ``"error"``: what to do about it.
    """

    key: str
    name: str
    origin: str
    detail: str
    fix: str = ""

    @property
    def label(self) -> str:
        """The label the data will carry (``"download"`` and ``"error"``: the real name)."""
        origin = self.origin if self.origin in ("real", "prefix", "stand-in") else "real"
        from .containers import label_for

        return label_for(self.name, origin)


def _places(paths: tuple[Path, ...]) -> str:
    from .fetch import cache_dir

    root, cache = data_dir(), cache_dir()
    places = {"LDPKIT_DATA_DIR" if root is not None and p.is_relative_to(root) else
              "the user cache" if p.is_relative_to(cache) else "a local directory" for p in paths}
    return " and ".join(sorted(places))


def plan(key: str) -> DataPlan:
    """What :func:`load` with ``source="auto"`` gives for ``key`` here, decided without parsing.

    Follows the data policy of the module docstring step by step: verified local files (their
    checksums are checked, so this may hash a large file once per process), a download, the
    prefix stand-in, the synthetic stand-in.  Nothing is downloaded.

    Examples
    --------
    >>> import os
    >>> from ldpkit.datasets import plan
    >>> os.environ.get("LDPKIT_OFFLINE") in (None, "", "0") or plan("clothing").origin in ("real", "stand-in")
    True
    """
    info = describe(key)
    for layout in info.layouts:
        found: list[Path] = []
        try:
            for spec in layout:
                path = locate(spec)
                if path is None:
                    break
                found.append(path)
        except ChecksumMismatchError as exc:
            return DataPlan(key, info.name, "error", f"{Path(exc.path).name} has the wrong sha256 ({exc.actual[:12]}; "
                            f"expected {exc.expected[:12]}): it is not used and loading fails",
                            "delete or replace the file")
        except DatasetFormatError as exc:
            return DataPlan(key, info.name, "error", f"{exc}; loading fails", "replace it with the data file")
        if len(found) < len(layout):
            continue
        paths = tuple(found)
        try:
            _check_readers(paths)
        except MissingReaderError as exc:
            return DataPlan(key, info.name, "error", f"{exc.file} is present but reading it needs {exc.package}, "
                            "which is not installed", exc.fix)
        pinned = "" if all(s.sha256 for s in layout) else "; checksum not pinned, statistics checked on load"
        files = ", ".join(spec.path for spec in layout)
        return DataPlan(key, info.name, "real", f"{files} in {_places(paths)}{pinned}")
    wanted = " or ".join("{" + ", ".join(f.path for f in layout) + "}" for layout in info.layouts)
    if info.resample_from is not None:
        try:
            sample = _sample_stamp(info)
        except (ChecksumMismatchError, DatasetFormatError) as exc:
            return DataPlan(key, info.name, "error", f"the real sample {info.resample_from} is damaged ({exc})",
                            "delete or replace it")
    else:
        sample = None
    standin = (f"prefix stand-in resampling the real {describe(info.resample_from).name}"
               if sample is not None and info.resample_from is not None
               else "synthetic stand-in calibrated to the published statistics")
    downloadable = any(all(f.url for f in layout) for layout in info.layouts)
    if downloadable and not is_offline():
        return DataPlan(key, info.name, "download",
                        f"{wanted} not found locally; downloaded on first load (the {standin} if that fails)")
    reason = "downloads are off: LDPKIT_OFFLINE=1" if downloadable else "no public download exists"
    return DataPlan(key, info.name, "prefix" if sample is not None else "stand-in",
                    f"{wanted} not found locally ({reason}): the {standin}")


# ---------------------------------------------------------------------------------------------
# public loaders


def load_retail(source: Source = "real", rng: RNGLike = 0) -> ItemSetData:
    """FIMI Retail: 88,162 market baskets over 16,470 items (ID-LDP chapter's "Retail").

    Parameters
    ----------
    source
        ``"real"``, ``"auto"`` or ``"standin"`` (see the module docstring).
    rng
        Seed or generator for the stand-in.
    """
    return cast(ItemSetData, _load("retail", source, rng))


def load_kosarak(source: Source = "real", rng: RNGLike = 0) -> ItemSetData:
    """FIMI Kosarak, full: 990,002 click-stream sessions over 41,270 pages.

    The file has no pinned checksum: it must begin with the pinned Kosarak prefix and reproduce the
    published n, m and records exactly.  Parameters as in :func:`load_retail`.
    """
    return cast(ItemSetData, _load("kosarak", source, rng))


def load_kosarak_prefix(source: Source = "real", rng: RNGLike = 0) -> ItemSetData:
    """The first 36,682 Kosarak sessions (17,034 items), from the local prefix file.

    The truncated last line of the file is dropped (said in ``notes``).  Parameters as in
    :func:`load_retail`.
    """
    return cast(ItemSetData, _load("kosarak-prefix", source, rng))


def load_clothing(source: Source = "real", rng: RNGLike = 0) -> ItemSetData:
    """Rent the Runway "Clothing": 105,508 users' sets of rented items (5,850 items).

    No pinned checksum: the parsed data must reproduce the published n, m and records exactly.
    Parameters as in :func:`load_retail`.
    """
    return cast(ItemSetData, _load("clothing", source, rng))


def load_gowalla(source: Source = "real", rng: RNGLike = 0) -> ItemSetData:
    """Gowalla 10-core: 29,858 users' sets of visited locations (40,981 locations).

    Parameters as in :func:`load_retail`.
    """
    return cast(ItemSetData, _load("gowalla-10core", source, rng))


def load_brown(lowercase: bool = False, source: Source = "real", rng: RNGLike = 0) -> SingleItemData:
    """Brown corpus as single-item data: 1,161,192 tokens, each a user holding one word.

    Parameters
    ----------
    lowercase
        Lowercase the words (49,815 instead of 56,057 distinct words).
    source, rng
        As in :func:`load_retail`.
    """
    if not isinstance(lowercase, bool):
        raise ValueError(f"lowercase must be True or False, got {lowercase!r}")
    return cast(SingleItemData, _load("brown", source, rng, lowercase=lowercase))


def load_online_retail(
    clean: bool = True, unit: Literal["invoice", "row"] = "invoice", source: Source = "real", rng: RNGLike = 0
) -> Data:
    """UCI Online Retail: invoices as item sets (``unit="invoice"``) or invoice lines as single items.

    Parameters
    ----------
    clean
        Drop cancelled invoices and rows with non-positive quantity (20,728 invoices over 3,941
        stock codes remain).
    unit
        ``"invoice"`` or ``"row"``.
    source, rng
        As in :func:`load_retail`.
    """
    if not isinstance(clean, bool):
        raise ValueError(f"clean must be True or False, got {clean!r}")
    if unit not in ("invoice", "row"):
        raise ValueError(f"unit must be 'invoice' or 'row', got {unit!r}")
    return _load("online-retail", source, rng, clean=clean, unit=unit)


def load_groceries(source: Source = "real", rng: RNGLike = 0) -> ItemSetData:
    """arules Groceries: 9,835 baskets over 169 items.  Parameters as in :func:`load_retail`."""
    return cast(ItemSetData, _load("groceries", source, rng))


_LOADERS: dict[str, Callable[..., Data]] = {
    "retail": load_retail,
    "kosarak": load_kosarak,
    "kosarak-prefix": load_kosarak_prefix,
    "clothing": load_clothing,
    "gowalla-10core": load_gowalla,
    "brown": load_brown,
    "online-retail": load_online_retail,
    "groceries": load_groceries,
}


def load(key: str, **kw: Any) -> Data:
    """Load dataset ``key`` (a key of :data:`~ldpkit.datasets.DATASETS`) with the loader's options."""
    describe(key)
    return _LOADERS[key](**kw)
