"""The errors of the dataset parsers: a damaged or missing file, and a missing optional reader.

Part of :mod:`ldpkit.datasets.parsers`, which documents the rules every parser follows.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DatasetFormatError", "MissingFileError", "MissingReaderError", "csv_format_error"]


class MissingReaderError(ImportError):
    """A dataset file is present but the optional package that reads it is not installed.

    Attributes
    ----------
    file
        The file's name.
    package
        The missing package (``"pyreadr"``).
    fix
        What to run to install it.

    Examples
    --------
    >>> from ldpkit.datasets import MissingReaderError
    >>> err = MissingReaderError("onlineretail.rda", "pyreadr", "pip install 'ldpkit[data]'")
    >>> isinstance(err, ImportError), str(err)
    (True, "reading onlineretail.rda needs pyreadr, which is not installed: pip install 'ldpkit[data]'")
    """

    def __init__(self, file: str, package: str, fix: str) -> None:
        self.file, self.package, self.fix = file, package, fix
        super().__init__(f"reading {file} needs {package}, which is not installed: {fix}")


class DatasetFormatError(ValueError):
    """A dataset file is corrupt, truncated, missing or not in the expected format.

    The message always starts with the file's name, then the archive member, the 1-based line,
    the data row and/or the byte offset (when they apply), then what was wrong, e.g.
    ``"retail.dat, line 12: non-integer token 'x1'"``.  Raised for a missing path it is also a
    ``FileNotFoundError``.

    Parameters
    ----------
    file
        Name of the file (a basename is enough).
    what
        What was wrong.
    line
        1-based line number, if the problem sits on one line.
    member
        Archive member the problem sits in, if any.
    row
        1-based data row of a table (R data file, CSV or spreadsheet; the header is not counted).
    offset
        0-based byte offset of the problem (in the compressed file for a compression error, in
        the uncompressed archive for a tar structure error), if it sits at one.

    Examples
    --------
    >>> from ldpkit.datasets import DatasetFormatError
    >>> err = DatasetFormatError("retail.dat", "non-integer token 'x1'", line=12)
    >>> print(err)
    retail.dat, line 12: non-integer token 'x1'
    >>> err.line, isinstance(err, ValueError)
    (12, True)
    >>> print(DatasetFormatError("retail.dat.gz", "truncated gzip stream", offset=4096))
    retail.dat.gz, byte offset 4096: truncated gzip stream
    """

    def __init__(
        self,
        file: str,
        what: str,
        *,
        line: int | None = None,
        member: str | None = None,
        row: int | None = None,
        offset: int | None = None,
    ) -> None:
        where = str(file)
        if member is not None:
            where += f", member {member}"
        if line is not None:
            where += f", line {line}"
        if row is not None:
            where += f", row {row}"
        if offset is not None:
            where += f", byte offset {offset}"
        super().__init__(f"{where}: {what}")
        self.file = str(file)
        self.what = what
        self.line = line
        self.member = member
        self.row = row
        self.offset = offset

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_error, (type(self), self.file, self.what, self.line, self.member, self.row, self.offset))


class MissingFileError(DatasetFormatError, FileNotFoundError):
    """A :class:`DatasetFormatError` for a path that does not exist (also a ``FileNotFoundError``)."""


def csv_format_error(file: str, exc: Exception, unclosed: str, line: int) -> DatasetFormatError:
    """The format error for a ``csv.Error`` at ``line``: an unbalanced quote (``unclosed`` says which) or malformed CSV."""
    if "unexpected end of data" in str(exc):
        return DatasetFormatError(file, f"unbalanced quote: {unclosed}", line=line)
    return DatasetFormatError(file, f"malformed CSV ({exc})", line=line)


def _rebuild_error(
    cls: type[DatasetFormatError], file: str, what: str, line: int | None, member: str | None, row: int | None,
    offset: int | None,
) -> DatasetFormatError:
    return cls(file, what, line=line, member=member, row=row, offset=offset)
