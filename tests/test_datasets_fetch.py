"""Tests of ldpkit.datasets.fetch: local resolution, cache, verified downloads, failures.

Downloads (done by pooch) go to a local ``http.server`` on 127.0.0.1 serving a temporary
directory; nothing leaves the machine.  The server can be told to fail a file's next requests
(with an HTTP status, or by cutting the transfer short) to test pooch's retries.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import socket
import tarfile
import threading
from pathlib import Path

import pytest

from ldpkit.datasets import DatasetFormatError
from ldpkit.datasets import fetch as F
from ldpkit.datasets.registry import DATASETS, DataFile

_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "no_proxy",
               "NO_PROXY")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Server:
    """A threaded HTTP server over a directory that counts the requests it receives.

    ``failures[path]`` lists what the next requests of ``path`` get instead of the file: an HTTP
    status, or ``"short"`` for the right Content-Length followed by only half of the bytes.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.hits: list[str] = []
        self.failures: dict[str, list[int | str]] = {}
        outer = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(root), **kwargs)

            def do_GET(self):  # http.server's naming
                outer.hits.append(self.path)
                plan = outer.failures.get(self.path)
                if plan:
                    what = plan.pop(0)
                    if what == "short":
                        data = (root / self.path.lstrip("/")).read_bytes()
                        self.send_response(200)
                        self.send_header("Content-Length", str(len(data)))
                        self.end_headers()
                        self.wfile.write(data[: len(data) // 2])
                        self.wfile.flush()
                        self.close_connection = True
                    else:
                        self.send_error(int(what))
                    return
                super().do_GET()

            def log_message(self, *args):  # keep test output clean
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{name}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def env(tmp_path, monkeypatch):
    """Clean environment: no data dir, not offline, no proxies, cache in a temporary directory."""
    for var in ("LDPKIT_DATA_DIR", "LDPKIT_OFFLINE", *_PROXY_VARS):
        monkeypatch.delenv(var, raising=False)
    cache = tmp_path / "cache"
    monkeypatch.setenv("LDPKIT_CACHE_DIR", str(cache))
    return cache


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    srv = Server(root)
    yield srv
    srv.close()


def files_below(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.is_file()) if path.exists() else []


PAYLOAD = b"1 2 3\n4 5\n6\n" * 100


def test_download_verified_then_served_from_cache(env, server):
    (server.root / "data.dat").write_bytes(PAYLOAD)
    spec = DataFile("data.dat", server.url("data.dat"), sha(PAYLOAD))
    path = F.fetch(spec)
    assert path == env / "data.dat"
    assert path.read_bytes() == PAYLOAD
    assert server.hits == ["/data.dat"]
    assert F.fetch(spec) == path
    assert server.hits == ["/data.dat"], "second call must use the cache"
    assert files_below(env) == [path], "no temporary file or sidecar is left for a pinned file"


def test_download_into_subdirectory(env, server):
    (server.root / "train.txt").write_bytes(PAYLOAD)
    spec = DataFile("gowalla-x/train.txt", server.url("train.txt"), sha(PAYLOAD))
    assert F.fetch(spec) == env / "gowalla-x" / "train.txt"


@pytest.fixture
def quick_retries(monkeypatch):
    """One retry instead of the default, to keep pooch's waits between attempts short."""
    monkeypatch.setattr(F, "DOWNLOAD_RETRIES", 1)


def test_checksum_mismatch_raises_and_leaves_no_file(env, server, quick_retries):
    (server.root / "data.dat").write_bytes(PAYLOAD)
    wrong = "0" * 64
    spec = DataFile("data.dat", server.url("data.dat"), wrong, mirrors=(server.url("data.dat"),))
    with pytest.raises(F.ChecksumMismatchError, match="data.dat") as info:
        F.fetch(spec)
    assert info.value.expected == wrong and info.value.actual == sha(PAYLOAD)
    assert wrong in str(info.value) and sha(PAYLOAD) in str(info.value)
    assert files_below(env) == []
    # a damaged transfer also fails the hash, so pooch tries again; a wrong file is never replaced
    # by a mirror's copy: the mismatch is an error
    assert server.hits == ["/data.dat"] * 2


def test_transient_server_error_is_retried(env, server, quick_retries):
    (server.root / "data.dat").write_bytes(PAYLOAD)
    server.failures["/data.dat"] = [503]
    spec = DataFile("data.dat", server.url("data.dat"), sha(PAYLOAD))
    assert F.fetch(spec).read_bytes() == PAYLOAD
    assert server.hits == ["/data.dat"] * 2


@pytest.mark.parametrize("pinned", [True, False])
def test_transfer_cut_short_is_retried_and_never_cached(env, server, quick_retries, pinned):
    (server.root / "data.dat").write_bytes(PAYLOAD)
    spec = DataFile("data.dat", server.url("data.dat"), sha(PAYLOAD) if pinned else None)
    server.failures["/data.dat"] = ["short", "short"]
    with pytest.raises(F.DatasetUnavailableError, match=r"failed after 2 attempt\(s\)") as info:
        F.fetch(spec)
    assert "IncompleteRead" in str(info.value)  # the Content-Length is enforced
    assert files_below(env) == [], "a partial download must never land in the cache"
    server.failures["/data.dat"] = ["short"]  # one cut transfer, then a good one
    assert F.fetch(spec).read_bytes() == PAYLOAD
    assert server.hits == ["/data.dat"] * 4


def _tarball(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_archive_member_extracted_and_verified(env, server):
    member = b"R data file contents" * 50
    (server.root / "pkg_0.1.tar.gz").write_bytes(_tarball({"pkg/DESCRIPTION": b"x", "pkg/data/pkg.rda": member}))
    spec = DataFile("pkg.rda", server.url("pkg_0.1.tar.gz"), sha(member), member="pkg/data/pkg.rda")
    path = F.fetch(spec)
    assert path.read_bytes() == member
    assert files_below(env) == [path], "the archive itself is not kept"


def _cut_in_half(data: bytes) -> bytes:
    return data[: len(data) // 2]


_LONG_MEMBER = bytes(range(256)) * 400  # incompressible enough that a cut loses part of the member


@pytest.mark.parametrize("archive, hashed, error, match", [
    pytest.param(_tarball({"pkg/data/pkg.rda": b"abc"}), b"abd", F.ChecksumMismatchError, "pkg.rda",
                 id="member-hash-mismatch"),
    pytest.param(_cut_in_half(_tarball({"pkg/data/pkg.rda": _LONG_MEMBER, "pkg/z": b"z"})), _LONG_MEMBER,
                 F.DatasetUnavailableError, "corrupt or truncated archive pkg.tgz", id="truncated-archive"),
    pytest.param(_tarball({"pkg/other": b"abc"}), b"abc", F.DatasetUnavailableError, "no member 'pkg/data/pkg.rda'",
                 id="archive-without-member"),
])
def test_bad_archive_raises_and_leaves_no_file(env, server, archive, hashed, error, match):
    (server.root / "pkg.tgz").write_bytes(archive)
    spec = DataFile("pkg.rda", server.url("pkg.tgz"), sha(hashed), member="pkg/data/pkg.rda")
    with pytest.raises(error, match=match):
        F.fetch(spec)
    assert files_below(env) == []


def test_404_lists_every_attempt(env, server):
    spec = DataFile("missing.dat", server.url("missing.dat"), "0" * 64)
    with pytest.raises(F.DatasetUnavailableError) as info:
        F.fetch(spec)
    places = [place for place, _ in info.value.attempts]
    reasons = [reason for _, reason in info.value.attempts]
    assert places[0] == "LDPKIT_DATA_DIR" and reasons[0] == "environment variable not set"
    assert places[1].startswith("cache") and "not present" in reasons[1]
    assert places[2] == f"download {spec.url}" and "404" in reasons[2]
    assert len(info.value.attempts) == 3
    message = str(info.value)
    assert "missing.dat" in message and "404" in message and "environment variable not set" in message
    assert server.hits == ["/missing.dat"], "a client error is permanent: pooch does not retry it"


def test_mirror_used_after_failing_url(env, server):
    (server.root / "b.dat").write_bytes(PAYLOAD)
    spec = DataFile("b.dat", server.url("nope.dat"), sha(PAYLOAD), mirrors=(server.url("b.dat"),))
    assert F.fetch(spec).read_bytes() == PAYLOAD
    assert server.hits == ["/nope.dat", "/b.dat"]


def test_offline_makes_no_request(env, server, monkeypatch):
    (server.root / "data.dat").write_bytes(PAYLOAD)
    monkeypatch.setenv("LDPKIT_OFFLINE", "1")
    assert F.is_offline()
    spec = DataFile("data.dat", server.url("data.dat"), sha(PAYLOAD))
    with pytest.raises(F.DatasetUnavailableError, match="LDPKIT_OFFLINE"):
        F.fetch(spec)
    assert server.hits == []
    assert files_below(env) == []


def test_download_false_makes_no_request(env, server):
    (server.root / "data.dat").write_bytes(PAYLOAD)
    spec = DataFile("data.dat", server.url("data.dat"), sha(PAYLOAD))
    with pytest.raises(F.DatasetUnavailableError, match="download=False"):
        F.fetch(spec, download=False)
    assert server.hits == []


def test_unreachable_host_fails_fast(env):
    with socket.socket() as s:  # a port on which nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    spec = DataFile("data.dat", f"http://127.0.0.1:{port}/data.dat", "0" * 64)
    with pytest.raises(F.DatasetUnavailableError, match="host unreachable"):
        F.fetch(spec)


def test_no_url_is_reported(env):
    spec = DataFile("local-only.dat", None, "0" * 64)
    with pytest.raises(F.DatasetUnavailableError, match="no public URL"):
        F.fetch(spec)


def test_data_dir_file_used_and_verified(env, server, tmp_path, monkeypatch):
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    (data / "sub" / "x.dat").write_bytes(PAYLOAD)
    monkeypatch.setenv("LDPKIT_DATA_DIR", str(data))
    assert F.data_dir() == data
    spec = DataFile("sub/x.dat", server.url("x.dat"), sha(PAYLOAD))
    assert F.fetch(spec) == data / "sub" / "x.dat"
    assert server.hits == []
    bad = DataFile("sub/x.dat", server.url("x.dat"), sha(b"something else"))
    with pytest.raises(F.ChecksumMismatchError, match="x.dat") as info:
        F.fetch(bad)
    assert "LDPKIT_DATA_DIR" in str(info.value)
    assert server.hits == [], "a wrong local file is an error, not a reason to download"


def test_data_dir_takes_precedence_over_cache(env, tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    (data / "x.dat").write_bytes(PAYLOAD)
    env.mkdir()
    (env / "x.dat").write_bytes(PAYLOAD)
    monkeypatch.setenv("LDPKIT_DATA_DIR", str(data))
    assert F.fetch(DataFile("x.dat", None, sha(PAYLOAD))) == data / "x.dat"


def test_missing_data_dir_is_reported(env, tmp_path, monkeypatch):
    monkeypatch.setenv("LDPKIT_DATA_DIR", str(tmp_path / "does-not-exist"))
    with pytest.raises(F.DatasetUnavailableError, match="not a directory"):
        F.fetch(DataFile("x.dat", None, "0" * 64))


def test_corrupt_cache_file_raises(env, server):
    env.mkdir()
    (env / "x.dat").write_bytes(b"corrupted")
    (server.root / "x.dat").write_bytes(PAYLOAD)
    with pytest.raises(F.ChecksumMismatchError, match="cache"):
        F.fetch(DataFile("x.dat", None, sha(PAYLOAD)))
    with pytest.raises(F.ChecksumMismatchError, match="cache"):  # not silently replaced by a download
        F.fetch(DataFile("x.dat", server.url("x.dat"), sha(PAYLOAD)))
    assert server.hits == [] and (env / "x.dat").read_bytes() == b"corrupted"


def test_directory_at_a_files_place_raises(env, tmp_path, monkeypatch, server):
    data = tmp_path / "data"
    (data / "x.dat").mkdir(parents=True)
    monkeypatch.setenv("LDPKIT_DATA_DIR", str(data))
    (server.root / "x.dat").write_bytes(PAYLOAD)
    with pytest.raises(DatasetFormatError, match=r"x\.dat: is a directory where the data file is expected"):
        F.fetch(DataFile("x.dat", server.url("x.dat"), sha(PAYLOAD)))
    assert server.hits == []


def test_unpinned_download_records_hash(env, server):
    (server.root / "big.dat").write_bytes(PAYLOAD)
    spec = DataFile("big.dat", server.url("big.dat"), None)
    path = F.fetch(spec)
    side = env / "big.dat.sha256"
    assert side.read_text().split() == [sha(PAYLOAD), "big.dat"]
    assert F.fetch(spec) == path and server.hits == ["/big.dat"]
    path.write_bytes(PAYLOAD + b"7\n")  # later corruption is caught through the recorded hash
    with pytest.raises(F.ChecksumMismatchError, match="recorded at download"):
        F.fetch(spec)


def test_unpinned_local_file_without_record_is_accepted(env, tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    (data / "k.dat").write_bytes(PAYLOAD)
    monkeypatch.setenv("LDPKIT_DATA_DIR", str(data))
    assert F.fetch(DataFile("k.dat", None, None)) == data / "k.dat"


def test_directories_and_offline_flag(env, monkeypatch, tmp_path):
    import pooch

    assert F.cache_dir() == env
    assert F.data_dir() is None
    monkeypatch.delenv("LDPKIT_CACHE_DIR")
    default = F.cache_dir()
    assert default.name.lower() == "ldpkit" or "ldpkit" in default.parts
    assert default == Path(pooch.os_cache("ldpkit")).absolute()  # pooch's per-platform cache
    for value, expected in (("1", True), ("true", True), ("YES", True), ("0", False), ("", False)):
        monkeypatch.setenv("LDPKIT_OFFLINE", value)
        assert F.is_offline() is expected


def test_sha256_file_matches_hashlib(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(PAYLOAD * 50)
    assert F.sha256_file(p) == sha(PAYLOAD * 50)


def test_registry_pins_and_urls():
    pinned = {k: info.pinned for k, info in DATASETS.items()}
    assert pinned == {"retail": True, "kosarak": False, "kosarak-prefix": True, "clothing": False,
                      "gowalla-10core": True, "brown": True, "online-retail": True, "groceries": True}
    for info in DATASETS.values():
        for layout in info.layouts:
            for spec in layout:
                assert spec.sha256 is None or (len(spec.sha256) == 64 and int(spec.sha256, 16) >= 0)
                for url in (spec.url, *spec.mirrors):
                    assert url is None or url.startswith(("http://", "https://"))
    retail = DATASETS["retail"]
    assert retail.published["records"] == 908_576 and retail.counted["records"] == 908_577
    online = DATASETS["online-retail"].files[0]
    assert online.member == "onlineretail/data/onlineretail.rda" and "Archive" in online.mirrors[0]
