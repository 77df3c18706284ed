"""Find a dataset file locally or download it, always checking its sha256.

A file is described by a :class:`~ldpkit.datasets.registry.DataFile` (relative path, public URL,
pinned sha256, optional archive member).  :func:`fetch` looks for it in this order:

1. the directory named by the environment variable ``LDPKIT_DATA_DIR`` (the file's relative
   path below it, e.g. ``gowalla-10core/train.txt``);
2. the user cache directory :func:`~ldpkit.datasets.cache_dir` (``LDPKIT_CACHE_DIR`` if set, else the platform's
   user cache directory);
3. a download from the public URL (and its mirrors) into the cache, unless ``LDPKIT_OFFLINE=1``.
   The host is first probed with a short socket connection so that an offline machine fails
   fast.  The download streams into a temporary file next to its destination; its sha256 (or the
   sha256 of the extracted archive member) is compared with the pinned value and the file is
   renamed into place only when they agree.

Every file found locally is checked against its pinned sha256 as well: a mismatch raises
:class:`ChecksumMismatchError` and the file is never used.  For the few files whose checksum
could not be pinned (``sha256=None``) the hash of the downloaded copy is written next to it as
``<name>.sha256`` (so later corruption of the cache is caught) and the loader checks the
published statistics of the parsed data instead.  When every place fails,
:class:`DatasetUnavailableError` lists each place tried and why it failed.

Documented on the Datasets page of the book (:ref:`resolution and checksums <sec-datasets-fetch>`).
"""

from __future__ import annotations

import hashlib
import os
import socket
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, BinaryIO

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

#: seconds allowed for the HTTP connection and each read of a download
DOWNLOAD_TIMEOUT = 30.0
#: seconds allowed for the reachability probe of the download host
PROBE_TIMEOUT = 3.0
_CHUNK = 1 << 20
_TRUE = {"1", "true", "yes", "on"}


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
            f"sha256 mismatch for {self.path}{extra}: expected {expected}, got {actual}. "
            "The file is not used; delete or replace it."
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


def cache_dir() -> Path:
    """Where downloads are stored: ``LDPKIT_CACHE_DIR`` if set, else the user cache directory.

    The user cache directory comes from ``platformdirs`` when it is installed, otherwise it is
    ``~/.cache/ldpkit``.  The directory is not created here (only when something is downloaded).
    """
    value = os.environ.get("LDPKIT_CACHE_DIR", "").strip()
    if value:
        return Path(value).expanduser()
    try:
        import platformdirs
    except ImportError:  # pragma: no cover - depends on the environment
        return Path("~/.cache/ldpkit").expanduser()
    return Path(platformdirs.user_cache_dir("ldpkit", appauthor=False))


# ---------------------------------------------------------------------------------------------
# hashing and verification


def _hash_stream(stream: IO[bytes], sink: BinaryIO | None = None, progress: Any = None) -> str:
    digest = hashlib.sha256()
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        digest.update(chunk)
        if sink is not None:
            sink.write(chunk)
        if progress is not None:
            progress.update(len(chunk))
    return digest.hexdigest()


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    with open(path, "rb") as fh:
        return _hash_stream(fh)


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
        raise ChecksumMismatchError(path, expected, actual, where)


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
    out.append((f"cache {cache_dir()}", cache_dir() / spec.path, ""))
    return out


def locate(spec: DataFile, attempts: list[tuple[str, str]] | None = None) -> Path | None:
    """Return a verified local copy of ``spec`` (env directory, then cache) or ``None``.

    Never downloads.  Failed places are appended to ``attempts`` when given.

    Raises
    ------
    ChecksumMismatchError
        When a local copy exists but its sha256 is wrong.
    """
    for place, candidate, reason in _local_candidates(spec):
        if candidate is None:
            if attempts is not None:
                attempts.append((place, reason))
            continue
        if candidate.is_file():
            _verify(candidate, spec, place)
            return candidate
        if attempts is not None:
            attempts.append((place, f"{spec.path} not present"))
    return None


# ---------------------------------------------------------------------------------------------
# download


def _probe(url: str) -> None:
    """Open and close a TCP connection to the URL's host (or its proxy); raise OSError on failure."""
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname, parts.port
    if host is None:
        raise OSError(f"no host in URL {url!r}")
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        pparts = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        host = pparts.hostname or host
        port = pparts.port or (443 if pparts.scheme == "https" else 80)
    if port is None:
        port = 443 if parts.scheme == "https" else 80
    with socket.create_connection((host, port), timeout=PROBE_TIMEOUT):
        pass


def _progress(total: int | None, name: str) -> Any:
    if not total:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is optional
        return None
    return tqdm(total=total, unit="B", unit_scale=True, desc=name, disable=None, leave=False)


def _download_to(url: str, fh: BinaryIO, name: str) -> None:
    opener = urllib.request.build_opener()  # fresh, so proxy settings are read now
    request = urllib.request.Request(url, headers={"User-Agent": "ldpkit"})
    with opener.open(request, timeout=DOWNLOAD_TIMEOUT) as response:
        length = response.headers.get("Content-Length")
        bar = _progress(int(length) if length and length.isdigit() else None, name)
        try:
            _hash_stream(response, sink=fh, progress=bar)
        finally:
            if bar is not None:
                bar.close()


def _extract_member(archive: Path, member: str, fh: BinaryIO) -> str:
    """Copy ``member`` of a (possibly compressed) tar archive into ``fh``; return its sha256."""
    with tarfile.open(archive, "r:*") as tar:
        try:
            info = tar.getmember(member)
        except KeyError:
            raise OSError(f"archive has no member {member!r}") from None
        stream = tar.extractfile(info)
        if stream is None:
            raise OSError(f"archive member {member!r} is not a regular file")
        with stream:
            return _hash_stream(stream, sink=fh)


def _download(spec: DataFile, url: str, target: Path) -> None:
    """Download ``url`` (extracting ``spec.member`` if set) to ``target``, verified, atomically."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp_paths: list[Path] = []

    def temp() -> tuple[BinaryIO, Path]:
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
        tmp_paths.append(Path(name))
        return os.fdopen(fd, "wb"), Path(name)

    try:
        fh, tmp = temp()
        with fh:
            _download_to(url, fh, target.name)
        if spec.member is not None:
            archive = tmp
            fh, tmp = temp()
            with fh:
                actual = _extract_member(archive, spec.member, fh)
        else:
            actual = sha256_file(tmp)
        if spec.sha256 is not None and actual != spec.sha256.lower():
            raise ChecksumMismatchError(target, spec.sha256, actual, f"downloaded from {url}")
        os.replace(tmp, target)
        if spec.sha256 is None:
            _sidecar(target).write_text(f"{actual}  {target.name}\n")
    finally:
        for path in tmp_paths:
            if path.exists():
                path.unlink()


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
        target = cache_dir() / spec.path
        for url in urls:
            try:
                _probe(url)
            except OSError as exc:
                attempts.append((f"download {url}", f"host unreachable ({exc})"))
                continue
            try:
                _download(spec, url, target)
            except ChecksumMismatchError:
                raise
            except (OSError, urllib.error.URLError, tarfile.TarError, ValueError) as exc:
                attempts.append((f"download {url}", f"failed ({type(exc).__name__}: {exc})"))
                continue
            return target
    raise DatasetUnavailableError(spec.path, attempts)
