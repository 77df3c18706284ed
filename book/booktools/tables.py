"""One way to show a table in the book: a numbered MyST list-table with typeset cells.

Every table a chapter displays goes through :func:`show_table` (or :func:`table_markdown`, which
returns the same text to glue), so every table of the book looks the same:

* numbers formatted for reading: integers with thousands separators, floats to four significant
  digits (or the column's format), very large or small values in scientific notation typeset as
  math, ``inf`` as the symbol, booleans as yes/no;
* missing values (``NaN``, ``None``) as an em dash, which the table's note explains;
* no pandas index unless asked for, headers typeset (a header may hold inline math);
* a caption and a label make the table numbered ("Table 4.2") and referable with ``{numref}``;
* text cells keep inline math and roles and show every other character literally
  (:func:`booktools.render.myst_inline`).

The cell output is MyST Markdown, which the book renders like its pages
(``nb_render_markdown_format: myst`` in ``_config.yml``).
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union

from .render import list_table, myst_inline

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["MISSING", "format_value", "table_markdown", "show_table"]

#: What a missing value (NaN or None) shows as.
MISSING = "\u2014"
#: A column's format: a format specification such as ``".3f"`` or ``",d"``, or a function of the
#: value returning MyST text.
Format = Union[str, Callable[[Any], str]]

_LABEL = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_EXPONENT = re.compile(r"^(-?[\d.,]+)e([+-])0*(\d+)$")


def _scientific(text: str) -> str:
    match = _EXPONENT.match(text)
    if match is None:
        return text
    mantissa, sign, power = match.groups()
    exponent = ("-" if sign == "-" else "") + power
    return f"${mantissa} \\times 10^{{{exponent}}}$"


def format_value(value: Any, fmt: Format | None = None) -> str:
    """One cell as MyST text.

    Parameters
    ----------
    value : object
        The cell's value.
    fmt : str or callable, optional
        A format specification applied to a number (its exponent, if any, typeset as a power of
        ten), or a function returning the cell's MyST text.  Without it an integer gets
        thousands separators and a float four significant digits (all of its integer part).

    Examples
    --------
    >>> [format_value(v) for v in (1234567, 0.000123456, 2.0, 12345.678, float("inf"), None, True)]
    ['1,234,567', '0.0001235', '2', '12,346', '$\\\\infty$', '—', 'yes']
    >>> format_value(3.2e-9), format_value(0.5, ".1%"), format_value(-float("inf"))
    ('$3.2 \\\\times 10^{-9}$', '50.0%', '$-\\\\infty$')
    >>> format_value("eps_max $\\\\varepsilon$")
    'eps\\\\_max $\\\\varepsilon$'
    """
    if callable(fmt):
        return str(fmt(value))
    if value is None or type(value).__name__ in ("NAType", "NaTType"):  # None, pandas.NA, pandas.NaT
        return MISSING
    if isinstance(value, bool) or type(value).__name__ in ("bool", "bool_"):  # numpy.bool too
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return format(int(value), fmt or ",d")
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isnan(number):
            return MISSING
        if math.isinf(number):
            return "$\\infty$" if number > 0 else "$-\\infty$"
        if fmt is not None:
            return _scientific(format(number, fmt))
        if number == 0:
            return "0"
        size = abs(number)
        if number.is_integer() and size < 1e15:
            return format(int(number), ",d")
        if 1e-4 <= size < 1e7:
            digits = max(4 - 1 - math.floor(math.log10(size)), 0)
            return format(number, f",.{digits}f").rstrip("0").rstrip(".") if digits else format(number, ",.0f")
        return _scientific(format(number, ".3g"))
    text = str(value)
    return myst_inline(text) if text else ""


def _frame_columns(frame: pd.DataFrame) -> list[str]:
    names = []
    for column in frame.columns:
        if isinstance(column, tuple):
            names.append(" / ".join(str(part) for part in column if str(part)))
        else:
            names.append(str(column))
    return names


def table_markdown(frame: pd.DataFrame, *, headers: Mapping[str, str] | None = None,
                   formats: Mapping[str, Format] | None = None, caption: str | None = None,
                   label: str | None = None, index: bool = False, note: str | None = None,
                   widths: Sequence[int] | None = None) -> str:
    """The MyST text of a table: a list-table, numbered when it has a caption, and its note.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.  A column MultiIndex is flattened with ``" / "``.
    headers : mapping, optional
        Column name -> header shown (MyST, may hold inline math); other columns show their name.
    formats : mapping, optional
        Column name -> :data:`Format` of its cells (see :func:`format_value`).
    caption : str, optional
        The caption (MyST); a captioned table is numbered.
    label : str, optional
        The table's label, for ``{numref}``; needs a caption.
    index : bool
        Show the frame's index as leading columns (default: not shown).
    note : str, optional
        A line under the table (MyST), e.g. what a dash means.
    widths : sequence of int, optional
        Relative column widths.

    Raises
    ------
    ValueError
        If a label is given without a caption or is not lower-case letters, digits and hyphens,
        if ``headers`` or ``formats`` name a column the table does not have, or if the table is
        empty of columns.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"eps": [1.0, float("inf")], "n": [1000, 25000], "mse": [0.5, float("nan")]})
    >>> print(table_markdown(frame, headers={"eps": "$\\\\varepsilon$"}, caption="Two rows", label="tab-demo",
    ...                      note="A dash: not computed."))
    ~~~~{list-table} Two rows
    :header-rows: 1
    :class: book-table
    :name: tab-demo
    <BLANKLINE>
    * - $\\varepsilon$
      - n
      - mse
    * - 1
      - 1,000
      - 0.5
    * - $\\infty$
      - 25,000
      - —
    ~~~~
    <BLANKLINE>
    A dash: not computed.
    """
    if label is not None:
        if caption is None:
            raise ValueError(f"table {label!r}: a label needs a caption (a table is numbered only with one)")
        if not _LABEL.match(label):
            raise ValueError(f"table label must be lower-case letters, digits and '-', got {label!r}")
    shown = frame.reset_index() if index else frame
    names = _frame_columns(shown)
    if not names:
        raise ValueError("the table has no columns")
    headers = dict(headers or {})
    formats = dict(formats or {})
    unknown = sorted((set(headers) | set(formats)) - set(names))
    if unknown:
        raise ValueError(f"headers/formats name columns the table does not have: {unknown}; columns: {names}")
    header_row = [headers.get(name, myst_inline(name)) for name in names]
    rows = [[format_value(value, formats.get(name)) for name, value in zip(names, row)]
            for row in shown.itertuples(index=False, name=None)]
    text = list_table(caption, header_row, rows, widths=widths, css_class="book-table")
    # a fence of tildes: a caption may then hold inline code and roles ({numref}, {prf:ref}), which
    # a backtick fence's opening line cannot (CommonMark forbids backticks in its info string)
    text = "~~~~" + text[len("```"):-len("```")] + "~~~~"
    if label is not None:
        head, _, rest = text.partition("\n:class: book-table\n")
        text = f"{head}\n:class: book-table\n:name: {label}\n{rest}"
    if note:
        text += "\n\n" + note
    return text


def show_table(frame: pd.DataFrame, **options: Any) -> None:
    """Display :func:`table_markdown` ``(frame, **options)`` as the cell's output (MyST Markdown)."""
    from IPython.display import Markdown, display

    display(Markdown(table_markdown(frame, **options)))
