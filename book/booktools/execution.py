"""The book's execution statistics, written by the build itself (a local Sphinx extension).

MyST-NB executes every notebook page in a fresh kernel when the book is built and records, per
page, the wall-clock time of that execution (its ``runtime``: from starting the kernel, through
every cell, to shutting the kernel down; ``myst_nb.core.execute``).  This extension reads those
records once every page has been read, that is after every notebook has run, so a page can show
the statistics of the whole build even though it is itself executed before the others:

* the directive ``{book-exec-table}`` is replaced by a table of the executed pages in reading
  order (the order of ``_toc.yml``), each with its number, linked title and execution time, a
  total row, and, for a chapter that times itself and pastes the result in its "ran in" line,
  that time too (:data:`RAN_IN_KEYS`);
* the role ``{exec-stat}`` pastes one statistic into the text: ``runtime`` (this page's
  execution time), ``total`` (all pages), ``pages`` (how many were executed), ``longest`` (the
  longest execution time) and ``longest-title`` (that page's title), ``read`` (the wall time from
  the start of the build until every page had been read and executed), ``machine`` (CPU count,
  processor, Python version and platform: no path and no host name) and ``date`` (the build's
  date).  A duration shows as minutes and seconds (``4 min 12 s``), or with a format
  specification after a colon, in seconds: ``{exec-stat}`total:.0f```.

Enable it in ``_config.yml`` (the path is the directory holding ``booktools``)::

    sphinx:
      local_extensions:
        booktools.execution: book

The statistics are those of the build that wrote the page: a page-mode build of one chapter
shows that chapter only.
"""

from __future__ import annotations

import datetime
import math
import os
import platform
import re
import time
from collections.abc import Iterator
from typing import Any

from docutils import nodes  # type: ignore[import-untyped]
from sphinx.addnodes import pending_xref
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

__all__ = ["RAN_IN_KEYS", "duration_text", "machine_text", "reading_order", "setup"]

#: Glue keys under which a chapter pastes its own timing in its "ran in" line, and the factor
#: that turns each into seconds.  Such a chapter starts a clock (``time.perf_counter()``) in its
#: first code cell, after its imports, and stops it in one of its last cells, so its time omits
#: the kernel's start-up, the imports and the cells after the clock stops; MyST-NB's runtime
#: includes them.
RAN_IN_KEYS: dict[str, float] = {"chapter_seconds": 1.0, "chapter_minutes": 60.0, "page_runtime": 1.0}

_STATS = ("runtime", "total", "pages", "longest", "longest-title", "read", "machine", "date")
_APP_START = "_book_exec_start"
_APP_READ = "_book_exec_read_seconds"


def duration_text(seconds: float) -> str:
    """A duration for reading: ``"38 s"``, ``"4 min 12 s"``, ``"2 min"``, ``"1 h 3 min"``.

    Examples
    --------
    >>> duration_text(37.6), duration_text(252.4), duration_text(120.2), duration_text(3790)
    ('38 s', '4 min 12 s', '2 min', '1 h 3 min')
    """
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"a duration must be finite and non-negative, got {seconds!r}")
    whole = int(round(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def _processor() -> str:
    """The processor's model name from ``/proc/cpuinfo`` (Linux), else ``platform.processor()``."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return re.sub(r"\s+", " ", line.split(":", 1)[1]).strip()
    except OSError:
        pass
    return platform.processor().strip()


def machine_text() -> str:
    """The machine that built the book: CPU count, processor, Python and platform (no host name)."""
    cpus = os.cpu_count() or 0
    parts = [f"{cpus} CPU{'s' if cpus != 1 else ''}"]
    processor = _processor()
    if processor:
        parts[0] += f" ({processor})"
    parts.append(f"Python {platform.python_version()}")
    parts.append(f"{platform.system()} on {platform.machine()}")
    return ", ".join(parts)


# ------------------------------------------------------------------------- the build's data

def reading_order(env: Any) -> list[tuple[str, str | None]]:
    """``(docname, caption of its part)`` of every document, root first, in reading order.

    Walks the toctrees from the root document depth first, as the navigation shows them.
    """
    from sphinx import addnodes

    root = env.config.root_doc
    order: list[tuple[str, str | None]] = []
    seen: set[str] = set()

    def walk(docname: str, caption: str | None) -> None:
        if docname in seen or docname not in env.all_docs:
            return
        seen.add(docname)
        order.append((docname, caption))
        try:
            doctree = env.get_doctree(docname)
        except Exception:  # pragma: no cover - a document that was never read
            return
        for toctree in doctree.findall(addnodes.toctree):
            part = toctree.get("caption") or caption
            for _title, child in toctree["entries"]:
                if child and child != "self":
                    walk(child, part)

    walk(root, None)
    return order


def _exec_data(env: Any) -> dict[str, dict[str, Any]]:
    """docname -> MyST-NB's execution record, for every page executed in this build."""
    from myst_nb.sphinx_ import NbMetadataCollector

    return {doc: data["exec_data"] for doc, data in NbMetadataCollector.get_doc_data(env).items()
            if data.get("exec_data")}


def _ran_in(env: Any, docname: str) -> float | None:
    """The chapter's own timing, in seconds, from its glue data (:data:`RAN_IN_KEYS`), if any."""
    from myst_nb.ext.glue.crossref import read_glue_cache

    data = read_glue_cache(env.mystnb_config.output_folder, docname)
    for key, factor in RAN_IN_KEYS.items():
        text = data.get(key, {}).get("data", {}).get("text/plain")
        if text is None:
            continue
        try:
            return float(text) * factor
        except ValueError:
            continue
    return None


def _rows(env: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(docname, execution record)`` of the executed pages in reading order (others last)."""
    records = _exec_data(env)
    ordered = [doc for doc, _ in reading_order(env) if doc in records]
    for doc in ordered + sorted(set(records) - set(ordered)):
        yield doc, records[doc]


def _title(env: Any, docname: str) -> str:
    title = env.titles.get(docname)
    return title.astext() if title is not None else docname


def _secnumber(env: Any, docname: str) -> str:
    number = env.toc_secnumbers.get(docname, {}).get("")
    return ".".join(str(n) for n in number) if number else ""


def statistic(env: Any, app: Any, name: str, docname: str) -> float | str:
    """The value of one ``{exec-stat}`` statistic (seconds for a duration)."""
    records = dict(_rows(env))
    times = {doc: float(rec.get("runtime") or 0.0) for doc, rec in records.items()}
    if name == "runtime":
        if docname not in times:
            raise KeyError(f"page {docname!r} was not executed in this build")
        return times[docname]
    if name == "total":
        return math.fsum(times.values())
    if name == "pages":
        return float(len(times))
    if name in ("longest", "longest-title"):
        if not times:
            raise KeyError("no page was executed in this build")
        doc = max(times, key=times.__getitem__)
        return times[doc] if name == "longest" else _title(env, doc)
    if name == "read":
        value = getattr(app, _APP_READ, None)
        if value is None:
            raise KeyError("the read phase of this build was not timed")
        return float(value)
    if name == "machine":
        return machine_text()
    if name == "date":
        return datetime.date.today().isoformat()
    raise KeyError(f"unknown statistic {name!r}; known: {', '.join(_STATS)}")


def _format(name: str, value: float | str, spec: str) -> str:
    if isinstance(value, str):
        return value
    if spec:
        return format(value, spec)
    if name == "pages":
        return str(int(value))
    return duration_text(value).replace(" ", "\u00a0")  # kept on one line


# ------------------------------------------------------------------------- Sphinx glue

_logger = logging.getLogger(__name__)


class exec_table_node(nodes.General, nodes.Element):
    """Placeholder of the execution table, filled by :class:`FillExecStats`."""


class exec_stat_node(nodes.Inline, nodes.TextElement):
    """Placeholder of one statistic, filled by :class:`FillExecStats`."""


def _note_page(env: Any) -> None:
    from myst_nb.sphinx_ import NbMetadataCollector

    NbMetadataCollector.set_doc_data(env, env.docname, "has_book_exec_stats", True)


class ExecTableDirective(SphinxDirective):
    """``{book-exec-table}``: the table of the executed pages (no argument, no content)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        _note_page(self.env)
        node = exec_table_node()
        self.set_source_info(node)
        return [node]


class ExecStatRole(SphinxRole):
    """``{exec-stat}`<statistic>[:<format>]```: one statistic of the build."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        name, _, spec = self.text.strip().partition(":")
        if name not in _STATS:
            msg = self.inliner.reporter.error(
                f"exec-stat: unknown statistic {name!r}; known: {', '.join(_STATS)}", line=self.lineno)
            return [], [msg]
        _note_page(self.env)
        node = exec_stat_node(self.rawtext, "", stat=name, spec=spec)
        self.set_source_info(node)
        return [node], []


#: the status column: every cell ran, or the notebook failed
_OK, _FAILED = "\u2713", "\u2717 failed"


def _cell_time(seconds: float) -> str:
    """:func:`duration_text` kept on one line (no-break spaces)."""
    return duration_text(seconds).replace(" ", "\u00a0")


def _entry(*children: nodes.Node) -> nodes.entry:
    paragraph = nodes.paragraph()
    paragraph.extend(children)
    return nodes.entry("", paragraph)


def make_table(env: Any, docname: str) -> nodes.table:
    """The execution table of the pages executed in this build, for the page ``docname``."""
    headers = ["Chapter", "Run time", "Its own clock", "Status"]
    table = nodes.table(classes=["colwidths-auto", "book-table", "exec-table"])
    group = nodes.tgroup(cols=len(headers))
    table += group
    for _ in headers:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    group += head
    row = nodes.row()
    head += row
    for text in headers:
        row += _entry(nodes.Text(text))
    body = nodes.tbody()
    group += body
    total, all_ok = 0.0, True
    for doc, record in _rows(env):
        runtime = float(record.get("runtime") or 0.0)
        total += runtime
        ok = record.get("succeeded") is True
        all_ok &= ok
        link = pending_xref(refdoc=docname, refdomain="std", reftype="doc", refexplicit=True,
                            refwarn=True, reftarget="/" + doc, classes=["xref", "doc"])
        number = _secnumber(env, doc)
        link += nodes.inline(text=(f"{number}. " if number else "") + _title(env, doc))
        own = _ran_in(env, doc)
        row = nodes.row()
        row += _entry(link)
        row += _entry(nodes.Text(_cell_time(runtime)))
        row += _entry(nodes.Text(_cell_time(own) if own is not None else "\u2014"))
        row += _entry(nodes.Text(_OK if ok else _FAILED))
        body += row
    row = nodes.row(classes=["exec-total"])
    row += _entry(nodes.strong(text="Total"))
    row += _entry(nodes.strong(text=_cell_time(total)))
    row += _entry(nodes.Text(""))
    row += _entry(nodes.Text(_OK if all_ok else _FAILED))
    body += row
    return table


class FillExecStats(SphinxPostTransform):
    """Replace the placeholders by the table and the statistics, once every page has run."""

    # before the reference resolvers (9, 10), so that the table's links resolve
    default_priority = 8

    def run(self, **kwargs: Any) -> None:
        env, docname = self.env, self.env.docname
        for node in list(self.document.findall(exec_table_node)):
            node.replace_self(make_table(env, docname))
        for node in list(self.document.findall(exec_stat_node)):
            name, spec = node["stat"], node["spec"]
            try:
                text = _format(name, statistic(env, self.app, name, docname), spec)
            except (KeyError, ValueError) as exc:
                _logger.warning(f"exec-stat {name!r}: {exc}", location=node, type="book", subtype="exec_stat")
                text = "\u2014"
            node.replace_self(nodes.inline(text, text, classes=["pasted-text", "exec-stat"]))


def _builder_inited(app: Any) -> None:
    setattr(app, _APP_START, time.perf_counter())


def _env_updated(app: Any, env: Any) -> list[str]:
    start = getattr(app, _APP_START, None)
    if start is not None:
        setattr(app, _APP_READ, time.perf_counter() - start)
    # pages showing statistics are rewritten whenever any page was executed
    from myst_nb.sphinx_ import NbMetadataCollector

    if not NbMetadataCollector.new_exec_data(env):
        return []
    return [doc for doc, data in NbMetadataCollector.get_doc_data(env).items() if data.get("has_book_exec_stats")]


def setup(app: Any) -> dict[str, Any]:
    """Register the directive, the role and the post-transform that fills them."""
    app.setup_extension("myst_nb")
    app.add_node(exec_table_node)
    app.add_node(exec_stat_node)
    app.add_directive("book-exec-table", ExecTableDirective)
    app.add_role("exec-stat", ExecStatRole())
    app.add_post_transform(FillExecStats)
    app.connect("builder-inited", _builder_inited)
    app.connect("env-updated", _env_updated)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
