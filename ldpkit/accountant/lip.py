"""Localized information privacy (LIP; Jiang, Li, Tandon, CNS 2018, Definition 3).

Bibtex ``jiang2018lip``.  A channel is eps-LIP under a prior when the prior-to-posterior ratio
of every input stays within ``[e^-eps, e^eps]`` whatever the output; by Bayes' rule this is
``e^-eps <= P(y|x) / P(y) <= e^eps`` (their eq. 5).  LIP chapter (:prf:ref:`def-lip` and :prf:ref:`thm-lip-ldp`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_distribution, check_positive_real
from ..channels import ExplicitChannel, UnaryChannel
from ._core import ChannelLike, CheckResult, ClosedForms, Notion
from ._core import Witness, as_channel, closed_forms, register_notion, standard_parameters, within

__all__ = ["LIP", "LIPResult", "check_lip", "lip_epsilon"]

_LIP: ClosedForms[Witness] = closed_forms("lip", "LIP")


@dataclass(frozen=True, kw_only=True)
class LIPResult(CheckResult):
    """Outcome of an LIP check (Jiang, Li, Tandon, Definition 3).

    Attributes
    ----------
    satisfied
        ``lip_epsilon <= epsilon`` (up to :data:`~ldpkit.accountant.REL_TOL`).
    epsilon
        The budget checked.
    lip_epsilon
        The smallest budget the channel satisfies under this prior.
    worst_output
        The output ``y`` attaining ``lip_epsilon`` with :attr:`worst_input` (``None`` for the
        unary closed form).
    slack
        ``epsilon - lip_epsilon``.

    Examples
    --------
    >>> from ldpkit import GRR, accountant
    >>> res = accountant.check_lip(GRR(3, 1.0), 1.0, prior=[0.5, 0.25, 0.25])
    >>> res.satisfied, res.worst_input, round(res.lip_epsilon, 4)
    (True, 1, 0.6426)
    """

    notion = "lip"

    epsilon: float
    lip_epsilon: float

    @property
    def worst_input(self) -> int:
        """The input ``x`` attaining :attr:`lip_epsilon`."""
        return self.worst_inputs[0]


@_LIP.register(ExplicitChannel)
def _lip_explicit(ch: ExplicitChannel, prior: np.ndarray) -> Witness:
    m = ch.matrix
    py = prior @ m
    with np.errstate(divide="ignore", invalid="ignore"):
        R = np.log(m) - np.log(py)[None, :]
    R = np.where((m == 0) & (py[None, :] == 0), 0.0, R)  # 0/0: this (x, y) never co-occurs nor is possible
    absR = np.abs(R)
    k = int(np.argmax(absR))
    x, y = np.unravel_index(k, absR.shape)
    return Witness(float(absR[x, y]), (int(x),), int(y))


@_LIP.register(UnaryChannel)
def _lip_unary(ch: UnaryChannel, prior: np.ndarray) -> Witness | Any:
    """Closed form for unary channels whose bits are all random (``0 < a, b < 1``), else ``NotImplemented``.

    Given bit ``y_x``, the ratio ``P(y|x)/P(y)`` is extremal when every other bit minimises
    (or maximises) ``rho_z(y_z) = P_a(y_z)/P_b(y_z)``, so the work is ``O(d)``.
    """
    a, b = ch.a, ch.b
    if not np.all((a > 0) & (a < 1) & (b > 0) & (b < 1)):
        return NotImplemented
    rho1 = a / b
    rho0 = (1 - a) / (1 - b)
    lo = np.minimum(rho0, rho1)
    hi = np.maximum(rho0, rho1)
    s_lo = float(prior @ lo)
    s_hi = float(prior @ hi)
    best = np.zeros(a.size)
    for rho in (rho0, rho1):
        # P(y|x)/P(y) = rho_x(y_x) / sum_z prior_z rho_z(y_z); the other bits of y are free
        up = rho / (prior * rho + np.maximum(s_lo - prior * lo, 0.0))
        down = rho / (prior * rho + np.maximum(s_hi - prior * hi, 0.0))
        best = np.maximum(best, np.maximum(np.log(up), -np.log(down)))
    x = int(np.argmax(best))
    return Witness(float(best[x]), (x,), None)


def lip_epsilon(ch: ChannelLike, prior: ArrayLike) -> float:
    """Smallest ``eps`` for which the channel is eps-LIP under ``prior``.

    Definition 3 of Jiang, Li, Tandon bounds the prior-to-posterior ratio,
    ``exp(-eps) <= P(X=x) / P(X=x | Y=y) <= exp(eps)``, for all ``x`` and ``y``; by Bayes'
    rule this is ``exp(-eps) <= P(y|x) / P(y) <= exp(eps)`` with
    ``P(y) = sum_x prior[x] P(y|x)`` (their eq. 5).  Hence::

        lip_epsilon = max_{x, y} |log P(y|x) - log P(y)|.

    Conventions where the paper's ratio is undefined:

    * outputs with ``P(y) = 0`` that no input can produce are skipped (``0/0``);
    * the Bayes form is imposed for *every* input, including those with zero prior (for
      which the posterior form is ``0/0``).  Then a zero-prior input that can produce an
      output no supported input produces, or that cannot produce an output that others
      produce, makes ``lip_epsilon`` infinite.  With this convention Theorem 1
      (eps-LIP implies 2eps-LDP) holds for every prior; restricted to the prior's support
      it would fail for zero-prior inputs.  For a prior with full support both readings
      coincide with "all ``x`` and all ``y`` with ``P(y) > 0``".

    Unary channels with all ``a, b`` in ``(0, 1)`` use a closed form in ``O(d)``; other
    unary channels are enumerated when small.

    LIP chapter (:prf:ref:`def-lip`).
    """
    ch = as_channel(ch)
    p = check_distribution(prior, ch.n_inputs)
    return float(_LIP.compute(ch, p).value)


def check_lip(ch: ChannelLike, epsilon: float, *, prior: ArrayLike) -> LIPResult:
    """Check eps-LIP under ``prior`` (see :func:`lip_epsilon` for the definition used).

    LIP chapter (:prf:ref:`def-lip`).
    """
    ch = as_channel(ch)
    p = check_distribution(prior, ch.n_inputs)
    eps = check_positive_real(epsilon, "epsilon")
    value, inputs, y = _LIP.compute(ch, p)
    return LIPResult(
        satisfied=bool(within(value, eps)),
        epsilon=eps,
        lip_epsilon=value,
        worst_inputs=tuple(inputs),
        worst_output=y,
        slack=eps - value,
    )


def _lip_parameters(d: int, params: dict[str, Any]) -> dict[str, Any]:
    """A LIP promise: a finite positive budget and a prior with full support over the ``d`` items."""
    out = standard_parameters(d, params)
    if "prior" in out and np.any(out["prior"] <= 0):
        raise ValueError(f"a LIP promise needs a prior with full support, got 0 at item {int(np.flatnonzero(out['prior'] <= 0)[0])}")
    return out


LIP: Notion[LIPResult] = register_notion(
    Notion("lip", check_lip, lip_epsilon, context=("prior",), display="LIP", order=80, label="def-lip",
           description="localized information privacy under a prior (Jiang et al., def-lip)",
           validate=_lip_parameters, fits_by_mixing=True)
)
