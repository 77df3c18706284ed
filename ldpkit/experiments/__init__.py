"""Experiment protocols of the papers, and a registry of every figure and table of the book.

Three layers:

* protocols (:mod:`ldpkit.experiments.idldp`, :mod:`ldpkit.experiments.ipldp`): one paper's
  evaluation section as functions that rerun it with the aggregate-level simulators of the
  mechanisms and return ``pandas`` data frames (one row per setting and repeat);
* the figure registry (:mod:`ldpkit.experiments.registry`): each figure or table the book
  reproduces is an :class:`Experiment` with a compute and a draw function and a default
  :class:`RunConfig`; :func:`run` runs one by id.  Each paper family registers its experiments
  from its own module (:mod:`ldpkit.experiments.idldp_figures`,
  :mod:`ldpkit.experiments.ipldp_figures`), imported here;
* :class:`RunConfig` (:mod:`ldpkit.experiments.config`): repeats, seed, data scale and progress
  of a run, validated once.

Around them, the artifact: every experiment loads its data by the one data policy
(:mod:`ldpkit.experiments.inputs`), records what it ran on and with what software
(:mod:`ldpkit.experiments.provenance`, written as ``ID.json`` beside each output), and can be
rerun and compared with the reference results stored in the package
(:mod:`ldpkit.experiments.check`, ``ldpkit check``).

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
    check,
    comparison,
    config,
    downloads,
    fldp,
    fldp_figures,
    idldp,
    idldp_figures,
    inputs,
    ipldp,
    ipldp_figures,
    lip,
    lip_figures,
    provenance,
    registry,
)
from .comparison import Comparison
from .config import RunConfig, subsample
from .downloads import csv_download_html
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
    "csv_download_html",
    "config",
    "downloads",
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
    "provenance",
    "ids",
    "list_experiments",
    "register",
    "registry",
    "run",
    "subsample",
]
