"""The paper's toy example (Sec. IV-A, Table I): five health conditions, HIV at ``ln 4``.

ID-LDP chapter, :ref:`sec-idldp-table1`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..accountant import PairRule
from ..unary import OUE, RAPPOR, UnaryEncoding
from .mechanism import IDUE
from .problem import MODELS, Model, variance_terms

__all__ = ["ToyExample", "toy_example"]


@dataclass(frozen=True, eq=False)
class ToyExample:
    """The survey of Sec. IV-A / Table I: HIV at ``ln 4``, four other conditions at ``ln 6``.

    Attributes
    ----------
    budgets
        Per-item budgets (5 items).
    names
        Item names.
    paper_table
        Table I as printed (rounded): per mechanism, ``flip`` = ``1 - a`` and ``b`` for
        ``(i = 1, i = 2..5)``, variance coefficients ``var_n`` (of ``n``) and ``var_c`` (of
        ``c_i``), and the total variance range in units of ``n``.

    Examples
    --------
    >>> from ldpkit import toy_example
    >>> toy = toy_example()
    >>> toy.names[0], round(float(toy.budgets[0]), 4)        # HIV at ln 4
    ('HIV', 1.3863)
    >>> [(row["mechanism"], round(row["total"][0], 2)) for row in toy.rows(models=("opt1",))]
    [('RAPPOR', 10.0), ('OUE', 9.89), ('IDUE-opt1', 8.61)]
    """

    budgets: np.ndarray
    names: tuple[str, ...]
    paper_table: dict[str, Any]

    def rows(self, models: Sequence[Model] = MODELS, r: PairRule = "min") -> list[dict[str, Any]]:
        """Recompute Table I: RAPPOR and OUE at ``min`` budget, then IDUE for each model.

        Each row gives ``flip`` (``1 - a``), ``b``, ``var_n`` (``g``), ``var_c`` (``h``) for
        item 1 and items 2-5, and ``total = (min, max)`` of ``sum_i Var/n`` over data
        distributions (``sum_i m_i g_i + min_i h_i`` to ``... + max_i h_i``).
        """
        eps_min = float(self.budgets.min())
        mechs: list[tuple[str, UnaryEncoding]] = [("RAPPOR", RAPPOR(5, eps_min)), ("OUE", OUE(5, eps_min))]
        for model in models:
            mechs.append((f"IDUE-{model}", IDUE(self.budgets, model=model, r=r)))
        out = []
        for name, mech in mechs:
            a, b = mech.a[[0, 1]], mech.b[[0, 1]]
            g, h = variance_terms(a, b)
            base = float(g[0] + 4 * g[1])
            out.append({
                "mechanism": name,
                "flip": (1 - a).tolist(),
                "b": b.tolist(),
                "var_n": g.tolist(),
                "var_c": h.tolist(),
                "total": (base + float(h.min()), base + float(h.max())),
            })
        return out


def toy_example() -> ToyExample:
    """The paper's Table I setup (5 items; ``eps_1 = ln 4``, ``eps_2..5 = ln 6``).

    ID-LDP chapter, :ref:`sec-idldp-table1`.
    """
    budgets = np.array([math.log(4.0)] + [math.log(6.0)] * 4)
    paper = {
        "RAPPOR": {"flip": (0.33, 0.33), "b": (0.33, 0.33), "var_n": (2.0, 2.0), "var_c": (0.0, 0.0), "total": (10.0, 10.0)},
        "OUE": {"flip": (0.5, 0.5), "b": (0.2, 0.2), "var_n": (1.78, 1.78), "var_c": (1.0, 1.0), "total": (9.9, 9.9)},
        "IDUE": {"flip": (0.41, 0.33), "b": (0.33, 0.28), "var_n": (3.27, 1.32), "var_c": (0.31, 0.13), "total": (8.68, 8.86)},
    }
    names = ("HIV", "anemia", "headache", "stomachache", "toothache")
    return ToyExample(budgets=budgets, names=names, paper_table=paper)
