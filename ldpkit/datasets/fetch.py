"""Find a dataset file locally or download it with pooch, always checking its sha256.

A file is described by a :class:`~ldpkit.datasets.registry.DataFile` (relative path, public URL,
mirrors, pinned sha256, optional archive member).  :func:`fetch` looks for it in this order:

1. the directory named by the environment variable ``LDPKIT_DATA_DIR`` (the file's relative
   path below it, e.g. ``gowalla-10core/train.txt``);
2. the user cache directory :func:`~ldpkit.datasets.cache_dir` (``LDPKIT_CACHE_DIR`` if set, else
   the platform's user cache directory, as given by ``pooch.os_cache``);
3. a download from the public URL, then from each mirror, into the cache, unless
   ``LDPKIT_OFFLINE=1``.

Downloading is done by `pooch <https://www.fatiando.org/pooch/>`_: it streams the file into a
temporary file next to its destination, compares its sha256 with the pinned value and moves it
into place only when they agree; it retries a failed transfer (``DOWNLOAD_RETRIES`` times,
for interrupted transfers, server errors and checksum mismatches, which a damaged transfer
causes), shows a progress bar on a terminal, and extracts the wanted member of a tar archive
(``pooch.Untar``).  A permanent failure (HTTP 404 and the other client errors) and a host that
cannot be reached at all (within ``CONNECT_TIMEOUT`` seconds) are not retried: the next
mirror is tried at once.  Hashes are computed by ``pooch.file_hash``.

What stays ldpkit's own on top of pooch: the ``LDPKIT_DATA_DIR`` lookup, the name of the
``LDPKIT_CACHE_DIR`` override (pooch reads it), the ``LDPKIT_OFFLINE`` switch, the check of every
local copy before pooch is asked for anything, the record of the hash of a download that has no
pinned one, the trying of mirrors in order, and the error that lists every place tried.

Every file found locally is checked against its pinned sha256 as well: a mismatch raises
:class:`ChecksumMismatchError` and the file is never used (it is not replaced by a download
either, and a loader never falls back to a stand-in over it).  Something at a file's place that
is not a regular file (a directory, a broken symbolic link) raises
:class:`~ldpkit.datasets.DatasetFormatError`, for the same reason.  For the few files whose
checksum could not be pinned (``sha256=None``) the hash of the downloaded copy is written next
to it as ``<name>.sha256`` (so later corruption of the cache is caught) and the loader checks
the published statistics of the parsed data instead.  When every place fails,
:class:`DatasetUnavailableError` lists each place tried and why it failed.

Documented on the Datasets page of the book (:ref:`resolution and checksums <sec-datasets-fetch>`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tarfile
import tempfile
import warnings
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

#: tqdm.auto (imported by pooch) warns in a notebook without ipywidgets, then uses text bars
_NO_WIDGETS = "IProgress not found"

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message=_NO_WIDGETS)
    import pooch  # type: ignore[import-untyped, unused-ignore]

from .parsers import DatasetFormatError

if TYPE_CHECKING:  # pragma: no cover
    from .registry import DataFile

__all__ = [
    "ChecksumMismatchError",
    "DatasetUnavailableError",
    "cache_dir",
    "data_dir",
    "fetch",
    "is_offline",
    "locate",
    "sha256_file",
]

#: seconds allowed for each read of a download (passed to pooch's HTTP downloader)
DOWNLOAD_TIMEOUT = 30.0
#: seconds allowed to open the connection; a host that does not answer is not retried
CONNECT_TIMEOUT = 5.0
#: further attempts pooch makes after a failed transfer (interrupted, server error, bad checksum)
DOWNLOAD_RETRIES = 2
_TRUE = {"1", "true", "yes", "on"}
#: HTTP statuses worth retrying; every other 4xx status is permanent
_TRANSIENT_HTTP = {408, 425, 429}


class ChecksumMismatchError(ValueError):
    """A file's sha256 differs from the pinned (or previously recorded) value.

    Attributes
    ----------
    path
        The offending file (for a failed download: the name it would have had).
    expected, actual
        Hex digests.

    Examples
    --------
    >>> from ldpkit.datasets import ChecksumMismatchError
    >>> err = ChecksumMismatchError("retail.dat", expected="ab" * 32, actual="cd" * 32)
    >>> isinstance(err, ValueError), err.path
    (True, 'retail.dat')
    """

    def __init__(self, path: str | os.PathLike[str], expected: str, actual: str, where: str = "") -> None:
        self.path = str(path)
        self.expected = expected
        self.actual = actual
        extra = f" ({where})" if where else ""
        super().__init__(
            f"sha256 mismatch for {self.path}{extra}: expected {expected}, got {actual}; the file is "
            "truncated, damaged or a different version. It is not used; delete or replace it."
        )


class DatasetUnavailableError(RuntimeError):
    """No local copy of a dataset file was found and it could not be downloaded.

    Attributes
    ----------
    file
        The relative path of the missing file.
    attempts
        One ``(place, reason)`` pair per place tried, in order.

    Examples
    --------
    >>> from ldpkit.datasets import DatasetUnavailableError
    >>> from ldpkit.datasets.fetch import fetch
    >>> from ldpkit.datasets.registry import DataFile
    >>> try:
    ...     fetch(DataFile("no-such-file.dat", url=None, sha256=None), download=False)
    ... except DatasetUnavailableError as err:
    ...     print(err.file, err.attempts[-1])
    no-such-file.dat ('download', 'not attempted (download=False)')
    """

    def __init__(self, file: str, attempts: list[tuple[str, str]]) -> None:
        self.file = file
        self.attempts = list(attempts)
        lines = "\n".join(f"  - {place}: {reason}" for place, reason in self.attempts)
        super().__init__(f"dataset file {file!r} is unavailable; tried:\n{lines}")


def is_offline() -> bool:
    """True when downloads are disabled by the environment variable ``LDPKIT_OFFLINE=1``."""
    return os.environ.get("LDPKIT_OFFLINE", "").strip().lower() in _TRUE


def data_dir() -> Path | None:
    """The directory named by ``LDPKIT_DATA_DIR``, or ``None`` when the variable is unset or empty."""
    value = os.environ.get("LDPKIT_DATA_DIR", "").strip()
    return Path(value).expanduser() if value else None


def _pooch(path: Path | None, registry: dict[str, str | None], urls: dict[str, str]) -> Any:
    """A ``pooch.Pooch`` over ``path`` (default: the cache, ``LDPKIT_CACHE_DIR`` overriding it).

    Updates are disallowed: pooch never silently replaces a local file whose hash is wrong.
    """
    if path is None:
        return pooch.create(
            path=pooch.os_cache("ldpkit"), base_url="", env="LDPKIT_CACHE_DIR", registry=registry, urls=urls,
            retry_if_failed=DOWNLOAD_RETRIES, allow_updates=False,
        )
    return pooch.create(path=path, base_url="", registry=registry, urls=urls, retry_if_failed=DOWNLOAD_RETRIES,
                        allow_updates=False)


def cache_dir() -> Path:
    """Where downloads are stored: ``LDPKIT_CACHE_DIR`` if set, else the user cache directory.

    The user cache directory is pooch's ``os_cache("ldpkit")`` (from ``platformdirs``, e.g.
    ``~/.cache/ldpkit`` on Linux).  The directory is not created here (only when something is
    downloaded).
    """
    return Path(_pooch(None, {}, {}).abspath)


# ---------------------------------------------------------------------------------------------
# hashing and verification


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file (computed by ``pooch.file_hash``, in chunks)."""
    return str(pooch.file_hash(os.fspath(path), alg="sha256"))


#: (resolved path, size, mtime_ns) -> sha256, so a large file is hashed once per process
_HASHES: dict[tuple[str, int, int], str] = {}


def _cached_sha256(path: Path) -> str:
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _HASHES:
        _HASHES[key] = sha256_file(path)
    return _HASHES[key]


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _verify(path: Path, spec: DataFile, where: str) -> None:
    """Raise :class:`ChecksumMismatchError` unless ``path`` matches the pinned or recorded hash."""
    expected = spec.sha256
    if expected is None:
        side = _sidecar(path)
        if not side.is_file():
            return  # nothing to compare with: the loader checks the published statistics
        recorded = side.read_text().split()
        expected = recorded[0] if recorded else ""
        where = f"{where}, against the hash recorded at download in {side.name}"
    actual = _cached_sha256(path)
    if actual != expected.lower():
        size = path.stat().st_size
        raise ChecksumMismatchError(path, expected, actual, f"{where}; {size:,} bytes")


# ---------------------------------------------------------------------------------------------
# local resolution


def _local_candidates(spec: DataFile) -> list[tuple[str, Path | None, str]]:
    """``(place label, candidate path or None, reason when None)`` for the env dir and the cache."""
    out: list[tuple[str, Path | None, str]] = []
    root = data_dir()
    if root is None:
        out.append(("LDPKIT_DATA_DIR", None, "environment variable not set"))
    elif not root.is_dir():
        out.append((f"LDPKIT_DATA_DIR={root}", None, "not a directory"))
    else:
        out.append((f"LDPKIT_DATA_DIR={root}", root / spec.path, ""))
    cache = cache_dir()
    out.append((f"cache {cache}", cache / spec.path, ""))
    return out


def _not_a_file(candidate: Path, place: str) -> DatasetFormatError | None:
    """The error for something at ``candidate`` that is there but is not a regular file."""
    if candidate.is_symlink() and not candidate.exists():
        return DatasetFormatError(str(candidate), f"broken symbolic link (in {place}); remove or fix it")
    if candidate.exists() and not candidate.is_file():
        kind = "a directory" if candidate.is_dir() else "not a regular file"
        return DatasetFormatError(str(candidate), f"is {kind} where the data file is expected (in {place})")
    return None


def locate(spec: DataFile, attempts: list[tuple[str, str]] | None = None) -> Path | None:
    """Return a verified local copy of ``spec`` (env directory, then cache) or ``None``.

    Never downloads.  Failed places are appended to ``attempts`` when given.

    Raises
    ------
    ChecksumMismatchError
        When a local copy exists but its sha256 is wrong.
    DatasetFormatError
        When something that is not a regular file (a directory, a broken symbolic link) sits at
        the file's place.
    """
    for place, candidate, reason in _local_candidates(spec):
        if candidate is None:
            if attempts is not None:
                attempts.append((place, reason))
            continue
        problem = _not_a_file(candidate, place)
        if problem is not None:
            raise problem
        if candidate.is_file():
            _verify(candidate, spec, place)
            return candidate
        if attempts is not None:
            attempts.append((place, f"{spec.path} not present"))
    return None


# ---------------------------------------------------------------------------------------------
# download (by pooch)


class _Unreachable(OSError):
    """The host could not be connected to: not retried, the next mirror is tried."""


class _PermanentHTTPError(OSError):
    """An HTTP client error (404, 403, ...): not retried, the next mirror is tried."""


def _unreachable(exc: BaseException) -> bool:
    import requests
    import urllib3

    if isinstance(exc, (requests.exceptions.ConnectTimeout, requests.exceptions.ProxyError)):
        return True
    if not isinstance(exc, requests.exceptions.ConnectionError) or not exc.args:
        return False
    reason = getattr(exc.args[0], "reason", None)  # urllib3's MaxRetryError.reason
    return isinstance(reason, (urllib3.exceptions.NewConnectionError, urllib3.exceptions.ConnectTimeoutError))


def _progressbar() -> Any:
    """A progress bar for pooch: shown on a terminal or in a notebook, silent otherwise."""
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_NO_WIDGETS)
            from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a core dependency
        return False
    return tqdm(total=0, unit="B", unit_scale=True, disable=None, leave=False)


class _Downloader:
    """pooch's HTTP downloader, classifying failures and recording the hash of the last transfer.

    Transient failures (interrupted transfer, read time-out, HTTP 5xx, 408, 425, 429) are raised as
    they are, so pooch retries them; a host that cannot be reached and the other HTTP client errors
    are raised as ``OSError`` subclasses that pooch does not retry.
    """

    def __init__(self) -> None:
        self.last_sha256: str | None = None

    def __call__(self, url: str, output_file: Any, pup: Any, check_only: bool = False) -> Any:
        import requests

        inner = pooch.HTTPDownloader(
            progressbar=False if check_only else _progressbar(),
            timeout=(CONNECT_TIMEOUT, DOWNLOAD_TIMEOUT),
            headers={"User-Agent": "ldpkit (pooch)"},
        )
        self.last_sha256 = None
        try:
            result = inner(url, output_file, pup, check_only=check_only)
        except requests.exceptions.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            if status >= 500 or status in _TRANSIENT_HTTP:
                raise
            raise _PermanentHTTPError(str(exc)) from None
        except requests.exceptions.RequestException as exc:
            if _unreachable(exc):
                raise _Unreachable(str(exc)) from None
            raise
        if not check_only and isinstance(output_file, (str, os.PathLike)):
            self.last_sha256 = sha256_file(output_file)
        return result


def _mismatch_or_raise(exc: ValueError, downloader: _Downloader, spec: DataFile, target: Path, url: str) -> None:
    """Turn pooch's checksum-mismatch ``ValueError`` into :class:`ChecksumMismatchError`; else re-raise."""
    actual = downloader.last_sha256
    if spec.sha256 is not None and actual is not None and actual != spec.sha256.lower():
        raise ChecksumMismatchError(
            target, spec.sha256, actual, f"downloaded from {url}; {1 + DOWNLOAD_RETRIES} attempt(s)"
        ) from None
    raise exc


@contextlib.contextmanager
def _quiet_pooch() -> Any:
    """Hide pooch's INFO log of each download (a stderr line, which fails a book cell); warnings stay.

    ldpkit shows its own progress bar on a terminal, and every failed place is listed by
    :class:`DatasetUnavailableError`.
    """
    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        logger.setLevel(level)


def _download_file(spec: DataFile, url: str) -> Path:
    """Download ``url`` into the cache as ``spec.path`` with pooch, verified against the pinned hash."""
    downloader = _Downloader()
    known = f"sha256:{spec.sha256.lower()}" if spec.sha256 is not None else None
    pup = _pooch(None, {spec.path: known}, {spec.path: url})
    target = Path(pup.abspath) / spec.path
    try:
        with _quiet_pooch():
            path = Path(pup.fetch(spec.path, downloader=downloader))
    except ValueError as exc:
        _mismatch_or_raise(exc, downloader, spec, target, url)
    if spec.sha256 is None:  # record what was downloaded, so later damage to the cache is caught
        _sidecar(path).write_text(f"{sha256_file(path)}  {path.name}\n")
    return path


def _download_member(spec: DataFile, url: str) -> Path:
    """Download the tar archive at ``url`` into a temporary directory, extract ``spec.member`` with
    ``pooch.Untar``, verify its sha256 and move it into the cache; the archive is not kept."""
    assert spec.member is not None
    target = cache_dir() / spec.path
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".download"))
    try:
        archive = url.rstrip("/").rsplit("/", 1)[-1] or "archive"
        downloader = _Downloader()
        pup = _pooch(work, {archive: None}, {archive: url})
        untar = pooch.Untar(members=[spec.member], extract_dir="members")
        try:
            with _quiet_pooch():
                pup.fetch(archive, processor=untar, downloader=downloader)
        except (tarfile.TarError, EOFError, zlib.error) as exc:
            raise OSError(f"corrupt or truncated archive {archive} ({type(exc).__name__}: {exc})") from None
        member = work / "members" / spec.member
        if not member.is_file():
            raise OSError(f"archive {archive} has no member {spec.member!r}")
        actual = sha256_file(member)
        if spec.sha256 is not None and actual != spec.sha256.lower():
            raise ChecksumMismatchError(target, spec.sha256, actual, f"member {spec.member} of {url}")
        os.replace(member, target)
        if spec.sha256 is None:
            _sidecar(target).write_text(f"{actual}  {target.name}\n")
        return target
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _describe_failure(exc: BaseException) -> str:
    if isinstance(exc, _Unreachable):
        return f"host unreachable ({exc})"
    if isinstance(exc, _PermanentHTTPError):
        return f"failed ({exc})"
    return f"failed after {1 + DOWNLOAD_RETRIES} attempt(s) ({type(exc).__name__}: {exc})"


def fetch(spec: DataFile, *, download: bool = True) -> Path:
    """Return the path of a verified local copy of ``spec``, downloading it if needed.

    Parameters
    ----------
    spec
        The file to resolve (see :class:`~ldpkit.datasets.registry.DataFile`).
    download
        When False, only the environment directory and the cache are searched.

    Returns
    -------
    pathlib.Path
        A file whose sha256 equals ``spec.sha256`` (or, for an unpinned file, equals the hash
        recorded at download when there is one).

    Raises
    ------
    ChecksumMismatchError
        A local copy or a fresh download has the wrong sha256 (a failed download leaves no file).
    DatasetFormatError
        Something that is not a regular file sits at the file's place (see :func:`locate`).
    DatasetUnavailableError
        Nothing worked; the message lists every place tried and why it failed.
    """
    attempts: list[tuple[str, str]] = []
    found = locate(spec, attempts)
    if found is not None:
        return found
    urls = [u for u in (spec.url, *spec.mirrors) if u]
    if not download:
        attempts.append(("download", "not attempted (download=False)"))
    elif not urls:
        attempts.append(("download", "no public URL for this file (local copies only)"))
    elif is_offline():
        attempts.append(("download", "skipped: LDPKIT_OFFLINE is set"))
    else:
        for url in urls:
            try:
                return _download_member(spec, url) if spec.member is not None else _download_file(spec, url)
            except ChecksumMismatchError:
                raise
            except (OSError, ValueError) as exc:  # requests' errors are OSErrors
                attempts.append((f"download {url}", _describe_failure(exc)))
    raise DatasetUnavailableError(spec.path, attempts)
