"""Auditing: lower bounds on privacy parameters, with a stated confidence, from samples of an implementation.

Auditing chapter, :ref:`sec-audit`.  The package has one module per part:
:mod:`~ldpkit.audit.samplers`, :mod:`~ldpkit.audit.bounds`, :mod:`~ldpkit.audit.notions`, the
mutants that the chapter and the tests audit (:mod:`~ldpkit.audit.mutants`) and the adapters of
the peer libraries (:mod:`~ldpkit.audit.peers`, needing the ``bench`` extra).

The accountant (:mod:`ldpkit.accountant`) proves what a mechanism's *channel* guarantees.  An
auditor asks the converse of an *implementation* it can only call: sample its outputs on chosen
inputs and bound its privacy loss from below, at a stated confidence.  A lower bound above the
claimed budget is evidence of a bug; a lower bound close to the exact value shows the sampler
loses as much privacy as its channel says (the bound is then tight).

Ingredients:

* a **sampler** (:class:`Sampler`): a callable ``(x, size, rng) -> output indices`` with
  ``n_inputs`` (and ``n_outputs`` when known); :func:`from_mechanism` wraps a kit mechanism
  (its ``sample_outputs``, which runs the mechanism's own sampling code), :func:`from_channel`
  samples an explicit channel by multinomial histograms, :func:`from_function` adapts any
  black-box callable returning one report per call (reports mapped to hashable keys);
* **Clopper-Pearson bounds** (:func:`cp_lower`, :func:`cp_upper`): for an event ``S`` (a set of
  outputs) and ``n`` samples of input ``x``, one-sided exact binomial bounds on ``P(S | x)``;
* **events**: white-box (``events="white"``: chosen from the exact channel, which the kit knows)
  or black-box (``events="black"``: each input's samples are split in halves, events are chosen
  on the first half and the bound is computed on the second half only);
* **notions**: :func:`audit_ldp` (eps-LDP), :func:`audit_pairwise` (the matrix of pairwise
  log-ratios, hence ID-LDP, MinID-LDP and context-aware LDP with :func:`violates`),
  :func:`audit_ipldp` (IPLDP, one bound per sensitive output) and :func:`audit_lip` (LIP with a
  prior).

Confidence statement
--------------------
Every audit computes a number ``K`` of one-sided Clopper-Pearson intervals, each missing its
probability with chance at most ``alpha / K`` (Bonferroni).  With probability at least
``1 - alpha`` all of them hold at once, and then every reported bound holds, whatever the events
examined (the events are fixed before the samples that bound them are drawn: from the exact
channel, or from the first half of the samples).  Reported values are clipped at 0, a bound
every notion satisfies.

Examples
--------
>>> from ldpkit import GRR
>>> from ldpkit.audit import audit_ldp, from_mechanism
>>> bound = audit_ldp(from_mechanism(GRR(4, 1.0)), 200_000, rng=0)
>>> 0.9 < bound.value <= 1.0, bound.pair, bound.event, bound.confidence
(True, (0, 1), (0,), 0.95)
"""

from __future__ import annotations

from .bounds import AuditBound, ItemAudit, PairwiseAudit, cp_lower, cp_upper, violates
from .notions import EventKind, audit_ipldp, audit_ldp, audit_lip, audit_pairwise
from .samplers import (
    ChannelSampler,
    FunctionSampler,
    MechanismSampler,
    Sampler,
    from_channel,
    from_function,
    from_mechanism,
    sample_histograms,
)

__all__ = [
    "AuditBound",
    "ChannelSampler",
    "EventKind",
    "FunctionSampler",
    "ItemAudit",
    "MechanismSampler",
    "PairwiseAudit",
    "Sampler",
    "audit_ipldp",
    "audit_ldp",
    "audit_lip",
    "audit_pairwise",
    "cp_lower",
    "cp_upper",
    "from_channel",
    "from_function",
    "from_mechanism",
    "sample_histograms",
    "violates",
]
