"""Parsers for the real dataset files used by the papers (FIMI, Rent the Runway, Gowalla, Brown, ...).

Every parser reads one published file format and returns a :class:`~ldpkit.datasets.ItemSetData`
or :class:`~ldpkit.datasets.SingleItemData` whose ``source`` names the file and its sha256.  The
rule for damaged input is the same everywhere: a corrupt or truncated file raises
:class:`~ldpkit.datasets.DatasetFormatError`, whose message names the file, then where the problem
is (the archive member, the 1-based line, the data row or the byte offset) and what was wrong.  The
only exceptions are the documented, opt-in ``"drop"`` / ``"skip"`` modes, and whatever they remove
is counted in the container's ``notes``.  No parser ever returns a silent partial load.

Paths.  A path that does not exist raises :class:`~ldpkit.datasets.DatasetFormatError` (which is
then also a ``FileNotFoundError``); a directory, a broken symbolic link or a special file given
where a file is expected raises :class:`~ldpkit.datasets.DatasetFormatError` too (only
:func:`~ldpkit.datasets.read_brown` also takes a directory).

Compressed input.  A file whose first bytes are the gzip, bzip2 or xz magic number is
decompressed completely before anything is parsed, whatever its suffix, and every stream must
end with its end-of-stream marker and check value (for gzip: the 8-byte trailer with CRC-32 and
length).  A file cut anywhere inside a stream, a missing trailer, a failed CRC (a flipped byte in
the compressed data) and unexpected bytes after the last stream all raise, naming the
compressed byte offset.

Line endings.  LF and CRLF line ends are accepted, also mixed (every line end is then still
unambiguous).  A carriage return that is not followed by a line feed (CR-only "classic Mac" line
ends, or a stray CR) is refused naming the line: read as whitespace it would silently merge
records, read as a line end it would split them.

Truncated last line.  A text file that does not end with a line feed has a truncated last line
(the usual sign of an interrupted download; a file that ends with CR was cut inside a CRLF).
``truncated="error"`` (default) raises naming that line; ``truncated="drop"`` (where offered)
drops it and says so in ``notes``.  Truncation inside a compressed stream is never dropped.

What cannot be detected.  Plain text has no end marker: a file cut exactly at a line boundary is
indistinguishable from a shorter file, and a byte flipped into another valid byte (a digit into
another digit, a letter inside a name into another letter) leaves a valid file.  Likewise a
multi-stream (e.g. ``bgzip``) file cut exactly between two streams.  These are caught by the
pinned sha256 of the known files (checked by the loaders, :mod:`ldpkit.datasets.fetch`), and for
the files without a pinned sha256 by the published-statistics check of the loaders.  An
uncompressed tar archive has checksummed headers but no checksum of the members' contents.

Documented on the Datasets page of the book (:ref:`sec-datasets-parsers`).

Modules.  One per file format or dataset family (``fimi``, ``clothing``, ``gowalla``, ``brown``,
``online_retail``, ``groceries``), on a shared core: ``errors`` (the exceptions), ``reading``
(paths, optional readers, decompression, line ends) and ``records`` (tokens, re-indexing, repeats,
CSR item sets).  Every name is importable from ``ldpkit.datasets.parsers``.
"""

from __future__ import annotations

from .brown import read_brown
from .clothing import read_clothing
from .errors import DatasetFormatError, MissingReaderError
from .fimi import read_fimi
from .gowalla import CheckIns, read_gowalla_10core, read_gowalla_checkins
from .groceries import read_groceries
from .online_retail import read_online_retail
from .reading import PathLike, needs_reader, reader_installed, sha256_of  # all four importable from here

__all__ = [
    "CheckIns",
    "DatasetFormatError",
    "MissingReaderError",
    "read_brown",
    "read_clothing",
    "read_fimi",
    "read_gowalla_10core",
    "read_gowalla_checkins",
    "read_groceries",
    "read_online_retail",
    "sha256_of",
]
