"""What every mechanism of the kit offers, as a type: the :class:`Mechanism` protocol.

Calibration, report files, aggregation, the contracts, the audits and the command line take "a
mechanism" without caring which family it belongs to; this protocol says what they may use.  Every
member of a registered family satisfies it: the frequency oracles
(:class:`~ldpkit.base.FrequencyOracle`) and the set-valued mechanisms
(:class:`~ldpkit.base.SetValuedMechanism`) alike.  It keeps the OpenDP split: the accounting half
(:meth:`~Mechanism.channel`, :meth:`~Mechanism.guarantees`) apart from the sampling and estimation
half (:meth:`~Mechanism.perturb`, :meth:`~Mechanism.sample_outputs`, :meth:`~Mechanism.estimate`),
with the server's steps an aggregator uses (:meth:`~Mechanism.aggregate`,
:meth:`~Mechanism.estimate_from_support`, :meth:`~Mechanism.variance_estimate`), plus the
:attr:`~Mechanism.provenance` that ties reports to their mechanism and the
:meth:`~Mechanism.arguments` a report file rebuilds it from.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from ._rng import RNGLike
from .accountant import Guarantee
from .channels import Channel
from .reports import Provenance

__all__ = ["Mechanism"]


@runtime_checkable
class Mechanism(Protocol):
    """A local randomiser over ``d`` inputs with its exact accounting.

    Examples
    --------
    >>> from ldpkit import GRR, OUE
    >>> from ldpkit.idue import oue_ps
    >>> from ldpkit.mechanism import Mechanism
    >>> all(isinstance(m, Mechanism) for m in (GRR(3, 1.0), OUE(3, 1.0), oue_ps(3, 1.0, 2)))
    True
    >>> isinstance("GRR", Mechanism)
    False
    """

    #: the number of items (inputs of a frequency oracle; the domain of a set-valued mechanism)
    d: int

    def channel(self) -> Channel:
        """The exact conditional law of a report given the input (:mod:`ldpkit.channels`)."""
        ...

    def guarantees(self) -> list[Guarantee]:
        """What the constructor's budget promises, as data the accountant verifies."""
        ...

    def perturb(self, values: Any, /, rng: RNGLike = None) -> Any:
        """The users' reports (client side), vectorised over users."""
        ...

    def sample_outputs(self, x: int, size: int, rng: RNGLike = None) -> np.ndarray:
        """``size`` outputs for input ``x``, as indices of the channel's outputs (what the audits sample)."""
        ...

    def estimate(self, reports: Any, /) -> np.ndarray:
        """Unbiased counts from reports (server side)."""
        ...

    def aggregate(self, reports: Any, /) -> np.ndarray:
        """The support counts of a batch of reports (what an aggregator adds up)."""
        ...

    def n_reports(self, reports: Any, /) -> int:
        """How many reports a batch holds."""
        ...

    def estimate_from_support(self, support: Any, n: int, /) -> np.ndarray:
        """Unbiased counts from support counts summed over ``n`` reports."""
        ...

    def variance_estimate(self, support: Any, n: int, /) -> np.ndarray:
        """An unbiased estimate of each count estimate's variance, from the same support counts."""
        ...

    @property
    def provenance(self) -> Provenance:
        """The record that ties reports to the configuration that made them."""
        ...

    def arguments(self) -> dict[str, Any]:
        """The constructor's arguments, from which a report file rebuilds the mechanism."""
        ...
