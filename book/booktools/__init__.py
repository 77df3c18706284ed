"""Tooling of the companion book: the claims register, its rendering, and the chapters' helpers.

This package belongs to the book, not to ``ldpkit``: it formats what the kit computes for the
book's pages, and ``ldpkit`` never imports it.  Chapters run with the book directory as their
working directory, so ``import booktools`` works in every chapter; the tests put the book
directory on ``sys.path``.

Modules, one concern each:

* :mod:`booktools.register`: the claims register ``claims.yml``, its entries (:class:`Claim`),
  validation, loading and counts;
* :mod:`booktools.markup`: the inline markup allowed in register text and its glue references;
* :mod:`booktools.labels`: the one parser of the labels the book's sources define;
* :mod:`booktools.sources`: the glue keys the chapters' code cells define, and the check that
  every glue reference of the register resolves;
* :mod:`booktools.render`: MyST rendering of the register (the Scorecard's tables, the chapters'
  claims boxes);
* :mod:`booktools.artifact`: the Artifact page's tables;
* :mod:`booktools.chapters`: what the chapters call (the experiment map, the caption facts to
  glue, the download links under every figure);
* :mod:`booktools.tables`: the one way a chapter shows a table (:func:`show_table`);
* :mod:`booktools.coverage`: which data each of the papers' figures ran on in this build;
* :mod:`booktools.execution` and :mod:`booktools.citations`: the book's Sphinx extensions (the
  execution table in reading order; distinct citation labels for two works of one author-year).
"""

from __future__ import annotations

from .artifact import artifact_table, claim_id, data_table
from .chapters import (
    csv_download_html,
    csv_link_html,
    downloads_html,
    experiment_map,
    glue_facts,
    json_download_html,
    show_result,
)
from .labels import BOOK_DIR, BookLabel, book_labels
from .markup import GlueReference, parse_glue_reference
from .register import (
    CORRECTED_STATUSES,
    DATA_QUALIFIERS,
    KINDS,
    PAPERS,
    REGISTER,
    STATUS_DEFINITIONS,
    STATUSES,
    Claim,
    glue_references,
    load_claims,
    validate_claims,
)
from .render import (
    PAPER_TITLES,
    STATUS_BADGES,
    chapter_box,
    myst_inline,
    register_table,
    status_definitions,
    summary_table,
)
from .sources import chapter_glue_keys, check_glue_references
from .coverage import coverage_by_data, coverage_frame
from .tables import format_value, show_table, table_markdown

__all__ = [
    "BOOK_DIR",
    "BookLabel",
    "CORRECTED_STATUSES",
    "Claim",
    "DATA_QUALIFIERS",
    "GlueReference",
    "KINDS",
    "PAPERS",
    "PAPER_TITLES",
    "REGISTER",
    "STATUSES",
    "STATUS_BADGES",
    "STATUS_DEFINITIONS",
    "artifact_table",
    "book_labels",
    "chapter_box",
    "chapter_glue_keys",
    "check_glue_references",
    "claim_id",
    "csv_download_html",
    "csv_link_html",
    "data_table",
    "downloads_html",
    "experiment_map",
    "glue_facts",
    "show_result",
    "glue_references",
    "json_download_html",
    "load_claims",
    "myst_inline",
    "parse_glue_reference",
    "register_table",
    "status_definitions",
    "summary_table",
    "validate_claims",
    "coverage_by_data",
    "coverage_frame",
    "format_value",
    "show_table",
    "table_markdown",
]
