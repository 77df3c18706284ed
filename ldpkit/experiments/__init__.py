"""Experiment protocols of the papers, and a registry of every figure and table of the book.

The four paper families are ID-LDP (``gu2020idldp``), IPLDP (``li2023ipldp``), FLDP
(``zhao2022fldp``) and LIP (``jiang2018lip``).  Three layers:

* protocols, one module per family (:mod:`ldpkit.experiments.idldp`,
  :mod:`ldpkit.experiments.ipldp`, :mod:`ldpkit.experiments.fldp`,
  :mod:`ldpkit.experiments.lip`): the paper's evaluation section as functions that rerun it
  with the aggregate-level simulators of the mechanisms and return ``pandas`` data frames; the
  LIP paper's own closed forms, as printed, are evaluated in
  :mod:`ldpkit.experiments.lip_paper`;
* the figure registry (:mod:`ldpkit.experiments.registry`): each figure or table the book
  reproduces is an :class:`Experiment` with a compute and a draw function and a default
  :class:`RunConfig`; :func:`run` runs one by id.  Each paper family registers its experiments
  from its own module (:mod:`ldpkit.experiments.idldp_figures`,
  :mod:`ldpkit.experiments.ipldp_figures`, :mod:`ldpkit.experiments.fldp_figures`,
  :mod:`ldpkit.experiments.lip_figures`), imported here, and so do the companion's own
  synthesis results (:mod:`ldpkit.experiments.synthesis_map`, the map of notions, and
  :mod:`ldpkit.experiments.synthesis`, every family calibrated to one promise);
* :class:`RunConfig` (:mod:`ldpkit.experiments.config`): repeats, seed, data scale, progress
  and parallel workers of a run, validated once.

Every figure has one look (:mod:`ldpkit.experiments.style`: colours, markers, line widths,
fonts, sizes, axis labels and the files' defaults).

Around them, the artifact: every experiment loads its data by the one data policy
(:mod:`ldpkit.experiments.inputs`), records what it ran on and with what software
(:mod:`ldpkit.experiments.provenance`, written as ``ID.json`` beside each output), and can be
rerun and compared with the reference results stored in the package
(:mod:`ldpkit.experiments.check`, ``ldpkit check``, by each experiment's :class:`Comparison`);
``ldpkit.experiments.artifact`` tells an artifact evaluator, per paper item, the command, the
expected time and the data.

The book's chapters and the ``ldpkit`` command (:mod:`ldpkit.cli`) both call :func:`run`.
Matplotlib is imported only when a figure is drawn.

Examples
--------
>>> from ldpkit import experiments
>>> experiments.get("idldp-fig2").item
'Fig. 2'
"""

from __future__ import annotations

# the *_figures modules are the paper families: importing them registers their experiments
from . import (
    audit,
    audit_ldp_auditor,
    check,
    comparison,
    config,
    fldp,
    fldp_figures,
    idldp,
    idldp_figures,
    inputs,
    ipldp,
    ipldp_figures,
    lip,
    lip_figures,
    lip_paper,
    provenance,
    registry,
    style,
    synthesis,
    synthesis_map,
)
from .comparison import Comparison
from .config import RunConfig, subsample
from .registry import (
    Experiment,
    ExperimentData,
    ExperimentResult,
    close_matches,
    flat_frame,
    get,
    ids,
    list_experiments,
    register,
    run,
)

__all__ = [
    "Comparison",
    "Experiment",
    "ExperimentData",
    "ExperimentResult",
    "RunConfig",
    "check",
    "close_matches",
    "comparison",
    "flat_frame",
    "config",
    "fldp",
    "fldp_figures",
    "get",
    "idldp",
    "idldp_figures",
    "inputs",
    "ipldp",
    "ipldp_figures",
    "lip",
    "lip_figures",
    "lip_paper",
    "provenance",
    "synthesis",
    "synthesis_map",
    "ids",
    "list_experiments",
    "register",
    "registry",
    "run",
    "style",
    "subsample",
]
