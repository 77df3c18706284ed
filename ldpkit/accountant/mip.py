"""Mutual-information privacy (MIP; Jiang, Li, Tandon, CNS 2018, Definition 2).

Bibtex ``jiang2018lip``.  A channel is eps-MIP under a prior when ``I(X; Y) <= eps``.  The
paper's Proposition 1 (eps-LIP implies eps-MIP) holds with ``I`` in nats, because its proof
bounds each logarithm by ``eps`` and ``eps`` is a natural-log quantity (``e^eps`` in LIP).
LIP chapter (:prf:ref:`def-mip` and :prf:ref:`prop-lip-mip`).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import ArgumentTypeError, check_distribution, check_positive_real, describe
from ..channels import ExplicitChannel
from ._core import ChannelLike, CheckResult, ClosedForms, Notion, as_channel, closed_forms, register_notion, within
from ._core import standard_parameters

__all__ = ["MIP", "MIPResult", "check_mip", "mutual_information"]

_MIP: ClosedForms[float] = closed_forms("mip", "mutual information")


@dataclass(frozen=True, kw_only=True)
class MIPResult(CheckResult):
    """Outcome of an MIP check: ``I(X;Y) <= epsilon`` (Definition 2 of Jiang et al.), in the unit of ``base``.

    Attributes
    ----------
    mutual_information
        ``I(X;Y)`` in the unit of :attr:`base` (nats when ``base`` is ``None``).
    epsilon
        The budget checked, in the same unit.
    base
        The logarithm base of both (``None``: natural logarithm, nats; ``2``: bits).

    Examples
    --------
    >>> from ldpkit import GRR, accountant
    >>> res = accountant.check_mip(GRR(3, 1.0), 0.1, prior=[1 / 3, 1 / 3, 1 / 3])
    >>> res.satisfied, round(res.mutual_information, 4), res.base     # nats
    (False, 0.1233, None)
    >>> round(accountant.check_mip(GRR(3, 1.0), 0.2, prior=[1 / 3, 1 / 3, 1 / 3], base=2).mutual_information, 4)
    0.1779
    """

    notion = "mip"

    mutual_information: float
    epsilon: float
    base: float | None = None


def _check_base(base: Any) -> float:
    if base is None:
        return 1.0
    if isinstance(base, bool) or not isinstance(base, numbers.Real):
        raise ArgumentTypeError(f"base must be a finite real > 0 and != 1 (or None for nats), got {describe(base)}")
    try:
        finite = math.isfinite(float(base))
    except OverflowError:  # a Python int beyond the double range
        finite = False
    if not finite or float(base) <= 0 or float(base) == 1.0:
        raise ValueError(f"base must be a finite real > 0 and != 1 (or None for nats), got {describe(base)}")
    return math.log(float(base))


@_MIP.register(ExplicitChannel)
def _mi_explicit(ch: ExplicitChannel, prior: np.ndarray) -> float:
    m = ch.matrix
    py = prior @ m
    joint = prior[:, None] * m
    pos = joint > 0
    terms = joint[pos] * (np.log(m[pos]) - np.log(np.broadcast_to(py[None, :], m.shape)[pos]))
    return float(max(0.0, terms.sum()))


def mutual_information(ch: ChannelLike, prior: ArrayLike, base: float | None = None) -> float:
    """``I(X;Y) = sum_{x,y} prior[x] P(y|x) log(P(y|x) / P(y))`` with ``0 log 0 = 0``.

    In nats by default (``base=None``); ``base=2`` gives bits.  Proposition 1 of Jiang et
    al. (eps-LIP implies ``I(X;Y) <= eps``) holds in nats only: its proof bounds every
    ``log`` term by ``eps``, and ``eps`` is a natural-log quantity (``exp(eps)`` in the
    LIP definition).  Channels without a registered closed form are enumerated when small.

    LIP chapter (:prf:ref:`def-mip`).
    """
    ch = as_channel(ch)
    p = check_distribution(prior, ch.n_inputs)
    scale = _check_base(base)
    return float(_MIP.compute(ch, p)) / scale


def check_mip(ch: ChannelLike, epsilon: float, *, prior: ArrayLike, base: float | None = None) -> MIPResult:
    """Check eps-MIP: ``I(X;Y) <= eps`` (Definition 2 of Jiang et al.), both in the unit of ``base``.

    ``base=None`` (the default) measures in nats, the unit in which Proposition 1 (eps-LIP implies
    eps-MIP) holds; ``base=2`` measures in bits.  The paper leaves the base of its ``log``
    unstated, so a guarantee must name it: ``Guarantee("mip", prior=..., epsilon=..., base=2)``.

    LIP chapter (:prf:ref:`def-mip`).
    """
    ch = as_channel(ch)
    p = check_distribution(prior, ch.n_inputs)
    eps = check_positive_real(epsilon, "epsilon")
    _check_base(base)
    value = mutual_information(ch, p, base=base)
    unit = None if base is None else float(base)
    return MIPResult(satisfied=bool(within(value, eps)), mutual_information=value, epsilon=eps, slack=eps - value,
                     base=unit)


def _mip_parameters(d: int, params: dict[str, Any]) -> dict[str, Any]:
    """A MIP promise: a finite positive amount of information, a prior over the ``d`` items, a valid base."""
    out = standard_parameters(d, params)
    if "base" in out:
        _check_base(out["base"])
    return out


MIP: Notion[MIPResult] = register_notion(
    Notion("mip", check_mip, mutual_information, context=("prior",), optional=("base",), display="MIP", order=90,
           quantity="information", label="def-mip",
           description="mutual-information privacy, in nats unless a base is given (Jiang et al., def-mip)",
           validate=_mip_parameters, fits_by_mixing=True)
)
