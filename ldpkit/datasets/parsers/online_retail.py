"""UCI Online Retail: the CRAN ``onlineretail`` R data file, or its ``.csv`` or ``.xlsx`` export.

Part of :mod:`ldpkit.datasets.parsers`, which documents the rules every parser follows.
"""

from __future__ import annotations

import csv
import io
import re
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from ...sets import ItemSets
from ..containers import ItemSetData, SingleItemData
from .errors import DatasetFormatError, MissingReaderError, csv_format_error
from .reading import (
    PathLike,
    check_choice,
    check_line_endings,
    check_name,
    check_path,
    cut_truncated,
    decompress,
    line_number,
    read_data,
    source_label,
)
from .records import reindex_strings, sets_of_distinct_pairs

__all__ = ["read_online_retail"]

_ONLINE_RETAIL_COLUMNS = (
    "InvoiceNo",
    "StockCode",
    "Description",
    "Quantity",
    "InvoiceDate",
    "UnitPrice",
    "CustomerID",
    "Country",
)
#: first bytes of an (uncompressed) R data file: XDR, ASCII or native binary, version 2 or 3
_R_DATA_MAGIC = (b"RDX2\n", b"RDX3\n", b"RDA2\n", b"RDA3\n", b"RDB2\n", b"RDB3\n")
#: a well-formed UTF-8 multi-byte sequence: a file holding one is UTF-8, not latin-1
_UTF8_MULTIBYTE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
#: the shape of an InvoiceDate written as text (2010-12-01 08:26, 12/1/2010 8:26, ...)
_DATE_TEXT = r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?"


def _decode_csv_text(raw: bytes, fname: str, notes: list[str]) -> str:
    """UTF-8 (a leading BOM removed), else latin-1 with a note; invalid UTF-8 in a UTF-8 file is damage."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if _UTF8_MULTIBYTE.search(raw):
            raise DatasetFormatError(
                fname, f"invalid UTF-8 ({exc.reason}) in a file that is otherwise UTF-8 (a damaged byte)",
                line=line_number(raw, exc.start)) from None
        text = raw.decode("latin-1")  # the UCI csv exports are often Windows-1252 / latin-1
        notes.append("file is not UTF-8: decoded as latin-1")
    return text.removeprefix("\ufeff")


def _check_csv_rows(text: str, fname: str) -> int:
    """Check that every row has as many fields as the header; return the number of data rows.

    A quoted field may span lines; problems are reported at the line where their row starts.
    """
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    n_cols: int | None = None
    start = 1
    rows = 0
    try:
        for row in reader:
            line, start = start, reader.line_num + 1
            if n_cols is None:
                if not row:
                    raise DatasetFormatError(fname, "blank header line", line=line)
                n_cols = len(row)
                continue
            if not row:
                raise DatasetFormatError(fname, "blank line", line=line)
            if len(row) != n_cols:
                cut = " (the row is cut short)" if len(row) < n_cols else ""
                raise DatasetFormatError(
                    fname, f"expected {n_cols} comma-separated fields as in the header, found {len(row)}{cut}",
                    line=line)
            rows += 1
    except csv.Error as exc:
        raise csv_format_error(fname, exc, "a quoted field opened on this line is never closed", start) from None
    return rows


def _check_zip(p: Path) -> None:
    """Check that an ``.xlsx`` (a zip archive) is complete and that every member's CRC-32 matches."""
    try:
        with zipfile.ZipFile(p) as z:
            bad = z.testzip()
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError) as exc:
        raise DatasetFormatError(
            p.name, f"corrupt or truncated spreadsheet: not a complete zip archive ({exc})") from None
    if bad is not None:
        raise DatasetFormatError(p.name, "corrupt spreadsheet: CRC-32 check failed (a damaged byte)", member=bad)


def _read_online_retail_frame(p: Path, notes: list[str]) -> Any:
    """The table of ``p`` (a data frame), read by its format: R data, CSV or spreadsheet."""
    suffix = "".join(p.suffixes[-2:]).lower() if p.suffix.lower() == ".gz" else p.suffix.lower()
    if suffix in (".rda", ".rdata"):
        return _read_rda(p)
    if suffix in (".csv", ".csv.gz"):
        return _read_csv(p, notes)
    if suffix in (".xlsx", ".xls"):
        return _read_spreadsheet(p, suffix)
    raise ValueError(f"{p.name}: unsupported Online Retail format {suffix!r}; use .rda, .csv or .xlsx")


def _read_rda(p: Path) -> Any:
    """Object ``onlineretail`` of the R data file, its compressed stream checked first."""
    fname = p.name
    try:
        import pyreadr
        from pyreadr.custom_errors import LibrdataError, PyreadrError
    except ImportError:
        raise MissingReaderError(
            fname, "pyreadr", "install the 'data' extra (pip install 'ldpkit[data]') or use the .csv version "
            "of Online Retail"
        ) from None

    raw = p.read_bytes()
    if not raw:
        raise DatasetFormatError(fname, "file is empty")
    # librdata reads a truncated xz stream without complaint: check the compression here first
    head = decompress(raw, fname, keep=False)
    del raw
    if not head.startswith(_R_DATA_MAGIC):
        raise DatasetFormatError(fname, f"not an R data file (it starts with {head[:5]!r}, not RDX2 or RDX3)")
    with warnings.catch_warnings(record=True) as caught:  # pyreadr warns about unreadable objects
        warnings.simplefilter("always")
        try:
            objects = pyreadr.read_r(str(p))
        except (LibrdataError, PyreadrError, OSError, UnicodeDecodeError) as exc:
            raise DatasetFormatError(fname, f"unreadable R data file ({type(exc).__name__}: {exc})") from None
    if "onlineretail" not in objects:
        said = "".join(f"; pyreadr: {w.message}" for w in caught)
        raise DatasetFormatError(
            fname, f"no object 'onlineretail' (objects: {', '.join(objects) or 'none'}{said})")
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return objects["onlineretail"]


def _read_csv(p: Path, notes: list[str]) -> Any:
    """The CSV export, after the line-end, truncation, encoding and row-shape checks."""
    import pandas as pd

    fname = p.name
    raw = read_data(p)
    check_line_endings(raw, fname)
    cut_truncated(raw, fname, "error", notes, hint=False)  # a row cut short
    text = _decode_csv_text(raw, fname, notes)
    rows = _check_csv_rows(text, fname)
    try:
        df = pd.read_csv(io.StringIO(text), dtype={"InvoiceNo": str, "StockCode": str}, keep_default_na=True,
                         skip_blank_lines=False)
    except (pd.errors.ParserError, ValueError) as exc:  # pragma: no cover - the rows were checked above
        raise DatasetFormatError(fname, f"unreadable CSV ({exc})") from None
    if len(df) != rows:  # pragma: no cover - defensive
        raise DatasetFormatError(fname, f"read {len(df)} rows from {rows} CSV data rows")
    return df


def _read_spreadsheet(p: Path, suffix: str) -> Any:
    """The ``.xlsx`` (its zip container checked first) or ``.xls`` export."""
    import pandas as pd

    fname = p.name
    if suffix == ".xlsx":
        _check_zip(p)
    try:
        return pd.read_excel(p, dtype={"InvoiceNo": str, "StockCode": str})
    except ImportError as exc:
        raise ImportError(
            f"reading {fname} needs an Excel engine ({exc}); install openpyxl "
            "(pip install openpyxl) or use the .csv or CRAN .rda version of Online Retail"
        ) from None
    except Exception as exc:  # noqa: BLE001 - the engines raise many types for a damaged workbook
        raise DatasetFormatError(fname, f"unreadable spreadsheet ({type(exc).__name__}: {exc})") from None


def _number_column(df: Any, column: str, fname: str, *, missing_ok: bool = False) -> np.ndarray:
    """The column as float64; a value that is not a finite number raises naming its row."""
    import pandas as pd

    col = df[column]
    missing = col.isna().to_numpy(dtype=bool)
    if not pd.api.types.is_numeric_dtype(col):
        missing = missing | (col.astype(str).str.strip() == "").to_numpy(dtype=bool)
    vals = pd.to_numeric(col.where(~missing), errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(vals) & ~(missing & missing_ok)
    if bad.any():
        k = int(np.argmax(bad))
        raise DatasetFormatError(fname, f"{column} {str(col.iloc[k])!r} is not a number", row=k + 1)
    return cast("np.ndarray", vals)


def _check_dates(df: Any, fname: str) -> None:
    import pandas as pd

    col = df["InvoiceDate"]
    if pd.api.types.is_datetime64_any_dtype(col):
        bad = col.isna().to_numpy(dtype=bool)
    else:
        bad = (col.isna() | ~col.astype(str).str.strip().str.fullmatch(_DATE_TEXT)).to_numpy(dtype=bool)
    if bad.any():
        k = int(np.argmax(bad))
        raise DatasetFormatError(fname, f"InvoiceDate {str(col.iloc[k])!r} is not a date", row=k + 1)


def read_online_retail(
    path: PathLike, *, clean: bool = True, unit: Literal["invoice", "row"] = "invoice", name: str = "Online Retail"
) -> ItemSetData | SingleItemData:
    """Read UCI Online Retail (CRAN ``onlineretail`` ``.rda``, ``.csv`` or ``.xlsx``).

    Columns ``InvoiceNo, StockCode, Description, Quantity, InvoiceDate, UnitPrice, CustomerID,
    Country`` are required.  With ``unit="invoice"`` every invoice is one user holding the
    distinct stock codes of its rows (invoices and items in order of first appearance; repeated
    stock codes within an invoice are merged and counted in ``notes``).  With ``unit="row"`` every
    row is one record whose item is its stock code.  ``vocabulary`` holds the sorted stock codes
    that occur (after cleaning).  Real file: 541,909 rows; 25,900 invoices over 4,070 stock codes
    (``clean=False``); 20,728 invoices over 3,941 stock codes (``clean=True``).  Datasets chapter,
    :ref:`sec-datasets-parsers`.

    Parameters
    ----------
    path
        ``.rda`` (read with pyreadr, object ``onlineretail``), ``.csv`` (plain or compressed) or
        ``.xlsx`` (needs openpyxl).
    clean
        Drop rows of cancelled invoices (``InvoiceNo`` starting with ``C``) and rows with
        ``Quantity <= 0``; both counts are recorded in ``notes``.
    unit
        ``"invoice"`` (item sets) or ``"row"`` (single items).
    name
        Dataset name stored in the result.

    Raises
    ------
    DatasetFormatError
        Missing path or directory; a damaged container: an ``.rda`` whose compressed stream is
        cut short or fails its check (librdata alone would read a truncated xz stream), an
        ``.xlsx`` that is not a complete zip archive or has a member failing its CRC-32; for a
        CSV, a CR without LF, a last row without a newline (cut short), a row whose number of
        fields differs from the header's (naming the line), an unbalanced quote (naming the line
        where it opens), a blank line, or invalid UTF-8 in an otherwise UTF-8 file; a required
        column that is missing, or a row with an empty InvoiceNo / StockCode / Country, a
        Quantity or UnitPrice that is not a number, a CustomerID that is neither empty nor a
        number, or an InvoiceDate that is not a date (naming the data row, 1-based).

    Notes
    -----
    A CSV cut exactly at a line end is indistinguishable from a shorter file, and a flipped
    digit leaves a valid value; the pinned sha256 of the real ``.rda`` catches both, and in the
    compressed ``.rda`` and ``.xlsx`` every flipped byte fails a check value.
    """
    p = check_path(path)
    if not isinstance(clean, bool):
        raise ValueError(f"clean must be True or False, got {clean!r}")
    check_choice(unit, "unit", ("invoice", "row"))
    name = check_name(name)
    fname = p.name
    notes: list[str] = []
    df = _read_online_retail_frame(p, notes)
    invoice, stock, quantity = _checked_columns(df, fname)
    keep = _clean_rows(invoice, quantity, fname, notes) if clean else np.ones(len(df), dtype=bool)
    inv = invoice[keep]
    vocab, idx = reindex_strings(stock[keep].tolist())
    if unit == "row":
        return SingleItemData(items=idx, vocabulary=vocab, name=name, source=source_label(p), notes=tuple(notes))
    sets = _invoice_sets(inv, idx, vocab.size, notes)
    return ItemSetData(sets=sets, vocabulary=vocab, name=name, source=source_label(p), notes=tuple(notes))


def _checked_columns(df: Any, fname: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check every required column, row by row; return the invoice numbers, stock codes and quantities."""
    missing = [c for c in _ONLINE_RETAIL_COLUMNS if c not in df.columns]
    if missing:
        raise DatasetFormatError(
            fname, f"missing column(s) {', '.join(missing)} (found: {', '.join(map(str, df.columns))})"
        )
    if len(df) == 0:
        raise DatasetFormatError(fname, "no rows")
    invoice = _string_column(df["InvoiceNo"], "InvoiceNo", fname)
    stock = _string_column(df["StockCode"], "StockCode", fname)
    quantity = _number_column(df, "Quantity", fname)
    _number_column(df, "UnitPrice", fname)
    _number_column(df, "CustomerID", fname, missing_ok=True)
    _check_dates(df, fname)
    _check_nonempty(df["Country"], "Country", fname)
    return invoice, stock, quantity


def _clean_rows(invoice: np.ndarray, quantity: np.ndarray, fname: str, notes: list[str]) -> np.ndarray:
    """The rows to keep: not of a cancelled invoice (``InvoiceNo`` starting with ``C``) and ``Quantity > 0``."""
    cancelled = np.char.startswith(invoice.astype(str), "C")
    nonpos = quantity <= 0
    keep = ~cancelled & ~nonpos
    notes.append(
        f"dropped {int(cancelled.sum())} rows of cancelled invoices (InvoiceNo starting with C) and "
        f"{int((nonpos & ~cancelled).sum())} further rows with Quantity <= 0; "
        f"{int(keep.sum())} of {keep.size} rows kept"
    )
    if not keep.any():
        raise DatasetFormatError(fname, "no row left after cleaning")
    return keep


def _invoice_sets(inv: np.ndarray, idx: np.ndarray, m: int, notes: list[str]) -> ItemSets:
    """One item set per invoice (in order of first appearance): its distinct stock codes, in row order."""
    inv_labels, first = np.unique(inv, return_index=True)
    rank_sorted = np.empty(inv_labels.size, dtype=np.int64)
    rank_sorted[np.argsort(first, kind="stable")] = np.arange(inv_labels.size)  # order of first appearance
    user = rank_sorted[np.searchsorted(inv_labels, inv)]
    sets, n_rep = sets_of_distinct_pairs(user, idx, inv_labels.size, m)
    if n_rep:
        notes.append(f"merged {n_rep} repeated stock code(s) within an invoice")
    return sets


def _string_column(col: Any, column: str, fname: str) -> np.ndarray:
    missing = col.isna().to_numpy(dtype=bool)
    vals = col.astype(str).str.strip().to_numpy(dtype=str)
    empty = missing | (vals == "")
    if empty.any():
        k = int(np.argmax(empty))
        raise DatasetFormatError(fname, f"empty or missing {column}", row=k + 1)
    return cast("np.ndarray", vals)


def _check_nonempty(col: Any, column: str, fname: str) -> None:
    """Like :func:`_string_column` without building the values (checks the distinct values only)."""
    import pandas as pd

    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    bad_unique = np.flatnonzero(pd.Series(uniques, dtype=object).astype(str).str.strip().to_numpy() == "")
    empty = (codes < 0) | np.isin(codes, bad_unique)
    if empty.any():
        k = int(np.argmax(empty))
        raise DatasetFormatError(fname, f"empty or missing {column}", row=k + 1)
