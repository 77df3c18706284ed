"""Per-label data from files (ldpkit.domain): the readers the command line's flags go through.

:func:`~ldpkit.domain.read_labels` (``--domain``, ``--sensitive FILE``), :func:`~ldpkit.domain.read_values`
(``--budgets FILE``, ``--prior FILE``: ``label,number`` lines) and :func:`~ldpkit.domain.read_matrix`
(``--matrix FILE``), then :meth:`~ldpkit.domain.Domain.vector` and :meth:`~ldpkit.domain.Domain.matrix`
in item order.  Every refusal names the file and the line, or the labels at fault.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from ldpkit._validation import ArgumentTypeError
from ldpkit.domain import Domain, read_labels, read_matrix, read_values


def _write(tmp_path: Path, text: str, name: str = "f.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_read_labels_keeps_inner_lines_and_drops_trailing_blank_ones(tmp_path: Path) -> None:
    path = _write(tmp_path, "caf\u00e9\nbread\n\nmilk\n\n\n", "labels.txt")
    assert read_labels(path) == ["caf\u00e9", "bread", "", "milk"]
    with pytest.raises(ValueError, match="label 2 must be a non-empty string"):
        Domain(read_labels(path))  # the empty inner line is the domain's to refuse
    assert read_labels(str(path)) == read_labels(path)


def test_read_values_header_quoting_inf_and_order(tmp_path: Path) -> None:
    path = _write(tmp_path, 'label,budget\nmilk,2\n"tea, green",0.5\n\napple, inf \n')
    values = read_values(path, "budget")
    assert list(values) == ["milk", "tea, green", "apple"]
    assert values["milk"] == 2.0 and values["tea, green"] == 0.5 and math.isinf(values["apple"])
    no_header = _write(tmp_path, "label,3\nx,1\n", "g.csv")  # 'label' is a label here: its value is a number
    assert read_values(no_header) == {"label": 3.0, "x": 1.0}
    dom = Domain(["apple", "milk", "tea, green"])
    assert dom.vector(values, "budget").tolist() == [math.inf, 2.0, 0.5]


_VALUES_REFUSALS = [
    ("a,1\nb,1,2\n", r"line 2 has 3 fields; each line is label,budget"),
    ("a,1\nb,nan\n", r"line 2: the budget 'nan' is not a number"),
    ("a,1\nb,one\n", r"line 2: the budget 'one' is not a number"),
    ("a,1\n\na,2\n", r"line 3: the label 'a' is given twice"),
    ("label,budget\n\n", r"no label,budget lines"),
    ("", r"no label,budget lines"),
]
_MATRIX_REFUSALS = [
    ("", r"empty; the first line is a header"),
    (",a,a\na,,1\n", r"line 1: the header must be an empty field followed by distinct"),
    (",a,b\na,,1\nb,2\n", r"line 3 has 2 fields; the header has 3"),
    (",a,b\na,,x\nb,2,\n", r"line 2: the budget 'x' in column 'b' is not a number"),
    (",a,b\na,,1\na,2,\n", r"line 3: the row label 'a' is given twice"),
    (",a,b\n", r"no rows under the header"),
]


@pytest.mark.parametrize(("reader", "text", "message"),
                         [(read_values, *row) for row in _VALUES_REFUSALS]
                         + [(read_matrix, *row) for row in _MATRIX_REFUSALS],
                         ids=lambda v: v.__name__ if callable(v) else None)
def test_read_refusals_name_the_file_and_line(reader, text: str, message: str, tmp_path: Path) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ValueError, match=message) as info:
        reader(path, "budget")
    assert str(info.value).startswith(f"{path}: ")


def test_vector_refuses_unknown_and_missing_labels() -> None:
    dom = Domain(["apple", "bread", "milk"])
    with pytest.raises(ValueError, match=r"2 probability label\(s\) are not labels of the domain \(3 labels\): "
                                         r"'tea', 'egg'"):
        dom.vector({"apple": 0.2, "tea": 0.3, "egg": 0.5}, "probability")
    with pytest.raises(ValueError, match=r"no budget for 1 label\(s\) of the domain: 'milk'; every label needs one"):
        dom.vector({"apple": 1.0, "bread": 1.0}, "budget")
    with pytest.raises(ValueError, match=r"the budget of 'apple' must be a number"):
        dom.vector({"apple": float("nan"), "bread": 1.0, "milk": 1.0}, "budget")
    with pytest.raises(ArgumentTypeError, match="values must be a number or a mapping"):
        dom.vector(["apple"])  # type: ignore[arg-type]
    assert dom.vector(2).tolist() == [2.0, 2.0, 2.0]


def test_read_matrix_round_trip_in_domain_order(tmp_path: Path) -> None:
    d = 4
    labels = ["w", "x", "y", "z"]
    rng = np.random.default_rng(3)
    m = rng.uniform(0.5, 2.0, size=(d, d))
    m[0, 3] = np.inf
    lines = [",".join(["", *labels])] + [",".join([labels[i], *("" if i == j else repr(float(m[i, j]))
                                                                  for j in range(d))]) for i in range(d)]
    path = _write(tmp_path, "\n".join(lines) + "\n")
    table = read_matrix(path, "budget")
    order = [2, 0, 3, 1]  # a domain in another order: rows and columns follow it
    got = Domain([labels[i] for i in order]).matrix(table, "budget")
    want = m[np.ix_(order, order)].copy()
    np.fill_diagonal(want, 0.0)
    assert np.array_equal(got, want)


def test_matrix_refuses_unknown_labels_and_missing_pairs() -> None:
    dom = Domain(["a", "b", "c"])
    with pytest.raises(ValueError, match=r"1 budget label\(s\) are not labels of the domain \(3 labels\): 'q'"):
        dom.matrix({"a": {"q": 1.0}}, "budget")
    with pytest.raises(ValueError, match=r"no budget for 4 pair\(s\) of labels of the domain: \('a', 'c'\), "
                                         r"\('b', 'c'\), \('c', 'a'\) \.\.\."):
        dom.matrix({"a": {"b": 1.0}, "b": {"a": 1.0}}, "budget")
