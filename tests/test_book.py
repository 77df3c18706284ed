"""Build the book once, report each chapter's execution, and check the HTML in a browser.

The build is the README's book build (``jupyter-book build . -W -n --keep-going``) run on a
clean output directory, so a broken cell, reference, citation or any warning fails it.  Each
chapter then gets its own test, so CI names the chapter that broke.  Finally headless Chromium
opens every page in a 1280 px wide window, as a reader with a laptop would, and checks, page by
page, that math was typeset by MathJax and every image loaded; that no TeX or MyST source is
left in the rendered text (cell outputs and glued text included); that no formula or table is
clipped or sticks out of the content column (a horizontally scrollable container is fine); that
no table is wider than the column at all (scroll container or not); that prose, tables and
captions hold no ASCII math ("<=", "e^1", "E_S") and no BibTeX key where a paper is named; and
that every figure has a caption and real alt text.  The Scorecard gets its own checks: statuses
as badges, working evidence links, pasted glue values and rendered math.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import BOOK_HANG_GUARD, REPO, run_process, toc_chapters

pytestmark = pytest.mark.book

CHAPTERS = toc_chapters()
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.fixture(scope="session")
def book_build(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("book")
    jb = shutil.which("jupyter-book") or str(Path(sys.executable).with_name("jupyter-book"))
    cmd = [jb, "build", str(REPO), "-W", "-n", "--keep-going", "--path-output", str(out)]
    # jupyter-book and its kernels (each in a session of its own) are ended together if the build hangs
    proc = run_process(cmd, guard=BOOK_HANG_GUARD, capture_output=True, text=True, cwd=REPO)
    log = proc.stdout + "\n" + proc.stderr
    (out / "build.log").write_text(log)
    return {"returncode": proc.returncode, "log": log, "html": out / "_build" / "html"}


def _warnings_for(log: str, doc: str) -> list[str]:
    pattern = re.compile(rf"{re.escape(doc)}(\.md|\.ipynb)?(:\d+)?: (WARNING|ERROR|CRITICAL)")
    return [line for line in log.splitlines() if pattern.search(line)]


@pytest.mark.parametrize("doc", CHAPTERS)
def test_chapter_executes_cleanly(book_build: dict, doc: str) -> None:
    html = book_build["html"]
    report = html / "reports" / f"{doc}.err.log"
    if report.exists():
        pytest.fail(f"{doc} failed to execute:\n{report.read_text()[-4000:]}")
    problems = _warnings_for(book_build["log"], doc)
    assert not problems, f"{doc} produced build warnings/errors:\n" + "\n".join(problems)
    assert (html / f"{doc}.html").is_file(), f"{doc}.html was not written"


def test_book_build_succeeds(book_build: dict) -> None:
    assert book_build["returncode"] == 0, "book build failed:\n" + book_build["log"][-6000:]


# --------------------------------------------------------------------------- browser checks
#: Width of the browser window: the layout a reader with a laptop screen sees.
WINDOW_WIDTH = 1280
#: hang guard of one Chromium run (it takes seconds; the page's own timers run on virtual time)
CHROMIUM_HANG_GUARD = 600.0
# The API reference pages are generated from the docstrings by autodoc; they are held to the
# same rules as the chapters, since their text is what a reader of the reference sees (a
# docstring with raw TeX or a wide table is as broken there as in a chapter).

# The probe runs in the page once MathJax has had time to typeset.  It opens every collapsed
# block (dropdown admonitions, <details>) so hidden content is measured too, then reports:
#   images / broken       every <img> in the document and those that failed to load;
#   mjx                   number of MathJax containers (typeset math);
#   rawInline/rawDisplay  the historical counts of \( and \[ or $$ in the main text;
#   rawTex                raw TeX in rendered text of the content column, outside MathJax
#                         containers and outside source code (cell inputs, code literals and
#                         code blocks that are not cell outputs): "$...$", "$$", "\(", "\[" and
#                         common macros such as "\frac";
#   rawMyst               MyST role syntax ({name} and a backtick) left in that same text;
#   wide                  math (<mjx-container>) and tables whose box is clipped by an ancestor
#                         or sticks out of the content column (article.bd-article); an element
#                         inside a horizontally scrollable container is fine as long as that
#                         container fits in the column;
#   columnScroll          whether the column's own container has to scroll sideways;
#   wideTables            tables wider than the content column, inside a scroll container or not
#                         (a table the prose refers to is read whole, not scrolled);
#   prose                 the rendered text of the content column outside MathJax, source code
#                         and printed cell output (code blocks, literals, and the API reference's
#                         signatures and parameter names, which are identifiers): the text a reader
#                         reads as prose, tables and captions, for the ASCII-math and citation checks;
#   figures               <img> in the content column without a <figcaption> in its <figure>, or
#                         with empty alt text (an alt that only repeats the file name counts as
#                         empty: Sphinx writes the URI when no alt text is given).
_PROBE = r"""
<script>
window.addEventListener('load', function () {
  setTimeout(function () {
    Array.prototype.forEach.call(document.querySelectorAll('details'), function (d) { d.open = true; });
    Array.prototype.forEach.call(document.querySelectorAll('.toggle-hidden'), function (e) {
      e.classList.remove('toggle-hidden');
    });
    setTimeout(measure, 500);
  }, 4000);
});
function measure() {
  var TOL = 1.5;
  var content = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  var column = content.getBoundingClientRect();
  var container = content.parentElement || content;
  function short(text, n) { return (text || '').replace(/\s+/g, ' ').trim().slice(0, n || 80); }
  function describe(el) {
    var tag = el.tagName.toLowerCase();
    var near = el.closest('section[id]');
    return tag + (el.id ? '#' + el.id : '') + (near ? ' in #' + near.id : '') + ': ' + short(el.textContent, 60);
  }
  function overflowX(el) { return getComputedStyle(el).overflowX; }
  // the box the element really occupies (a display-math container is as wide as its line, the
  // typeset formula inside it can be wider)
  function box(el) {
    var r = el.getBoundingClientRect();
    var left = r.left, right = r.right;
    var inner = el.tagName.toLowerCase() === 'mjx-container' ? el.querySelector('mjx-math') : null;
    if (inner) {
      var q = inner.getBoundingClientRect();
      left = Math.min(left, q.left); right = Math.max(right, q.right);
    }
    return {left: left, right: right, width: right - left, height: r.height};
  }
  var wide = [];
  var targets = content.querySelectorAll('mjx-container, table');
  Array.prototype.forEach.call(targets, function (el) {
    var b = box(el);
    if (b.width === 0 && b.height === 0) { return; }  // not rendered
    var scroller = null, clipped = null;
    for (var p = el; p && p !== content; p = p.parentElement) {
      var ox = overflowX(p);
      var pr = p.getBoundingClientRect();
      if (ox === 'auto' || ox === 'scroll') { scroller = p; break; }
      if ((ox === 'hidden' || ox === 'clip') && p !== el &&
          (b.left < pr.left - TOL || b.right > pr.right + TOL)) { clipped = p; break; }
    }
    var kind = el.tagName.toLowerCase() === 'table' ? 'table' : 'math';
    if (clipped) {
      wide.push({kind: kind, how: 'clipped', width: Math.round(b.width),
                 room: Math.round(clipped.getBoundingClientRect().width), what: describe(el)});
      return;
    }
    var outer = scroller ? scroller.getBoundingClientRect() : b;
    if (outer.left < column.left - TOL || outer.right > column.right + TOL) {
      wide.push({kind: kind, how: scroller ? 'scroll container overflows' : 'overflows',
                 width: Math.round(outer.right - outer.left), room: Math.round(column.width), what: describe(el)});
    }
  });
  // tables wider than the column, whether or not a scroll container holds them
  var wideTables = [];
  Array.prototype.forEach.call(content.querySelectorAll('table'), function (el) {
    var b = box(el);
    if (b.width === 0 && b.height === 0) { return; }
    if (b.width > column.width + TOL) {
      wideTables.push({width: Math.round(b.width), room: Math.round(column.width), what: describe(el)});
    }
  });
  // raw TeX in rendered text
  var skip = 'mjx-container, script, style, .cell_input, .headerlink, .linenos, .toggle-button';
  var walker = document.createTreeWalker(content, NodeFilter.SHOW_TEXT, null);
  var pieces = [], node;
  while ((node = walker.nextNode())) {
    var parent = node.parentElement;
    if (!parent || parent.closest(skip)) { continue; }
    var code = parent.closest('pre, code, .highlight');
    if (code && !code.closest('.cell_output')) { continue; }
    pieces.push(node.nodeValue);
  }
  var rendered = pieces.join('');
  // the prose: the same text without any code or printed output
  // code: literals and blocks, and the API reference's identifiers (signatures, parameter names)
  var codeLike = 'pre, code, kbd, samp, .highlight, dt.sig, dl.field-list > dd strong';
  var proseWalker = document.createTreeWalker(content, NodeFilter.SHOW_TEXT, null);
  var proseParts = [];
  while ((node = proseWalker.nextNode())) {
    var host = node.parentElement;
    if (!host || host.closest(skip) || host.closest(codeLike)) { continue; }
    proseParts.push(node.nodeValue);
  }
  var prose = proseParts.join('');
  var rawTex = [];
  var texPattern = /\$\$|\$[^$\n]{1,300}?\$|\\\(|\\\[|\\(frac|dfrac|tfrac|varepsilon|epsilon|mathcal|mathbb|mathrm|operatorname|sum|prod|sqrt|left|right|begin|end|cdot|ldots|le|ge|ne|in|infty|alpha|beta|ell|log|exp|min|max)(?![A-Za-z])/g;
  var m;
  while ((m = texPattern.exec(rendered)) && rawTex.length < 20) {
    rawTex.push(short(rendered.slice(Math.max(0, m.index - 30), m.index + m[0].length + 30), 120));
  }
  // MyST roles left as text (Markdown rendered as CommonMark, or a failed paste)
  var rawMyst = [];
  var mystPattern = /\{[a-z][\w:+.-]*\}`/g;
  while ((m = mystPattern.exec(rendered)) && rawMyst.length < 20) {
    rawMyst.push(short(rendered.slice(Math.max(0, m.index - 30), m.index + m[0].length + 40), 120));
  }
  // figures
  var figures = [];
  Array.prototype.forEach.call(content.querySelectorAll('img'), function (img) {
    var src = img.getAttribute('src') || '';
    var alt = (img.getAttribute('alt') || '').trim();
    var base = src.split('/').pop();
    var problems = [];
    var figure = img.closest('figure');
    if (!figure || !figure.querySelector('figcaption') || !short(figure.querySelector('figcaption').textContent)) {
      problems.push('no caption');
    }
    if (!alt || alt === src || alt.split('/').pop() === base) { problems.push('no alt text'); }
    if (problems.length) { figures.push({src: base, problems: problems}); }
  });
  var imgs = Array.prototype.slice.call(document.images);
  var bad = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); })
                .map(function (i) { return i.getAttribute('src'); });
  var main = document.querySelector('main') || document.body;
  var text = main.innerText || '';
  var probe = {images: imgs.length, broken: bad,
               mjx: document.querySelectorAll('mjx-container').length,
               rawInline: (text.match(/\\\(/g) || []).length,
               rawDisplay: (text.match(/\\\[|\$\$/g) || []).length,
               rawTex: rawTex, rawMyst: rawMyst, wide: wide, figures: figures,
               columnWidth: Math.round(column.width), windowWidth: window.innerWidth,
               columnScroll: container.scrollWidth > container.clientWidth + TOL,
               wideTables: wideTables, prose: prose, text: text};
  var out = document.createElement('pre');
  out.id = 'ldpkit-probe';
  out.textContent = JSON.stringify(probe);
  document.body.appendChild(out);
}
</script>
"""


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="session")
def browser() -> str:
    path = _chromium()
    if path is None:
        if IN_CI:
            pytest.fail("Chromium is required in CI (install the Debian package 'chromium')")
        pytest.skip("Chromium not installed: browser checks skipped (install Debian package 'chromium')")
    return path


def _probe_page(browser: str, page: Path, tmp: Path) -> dict:
    probe_page = page.with_name(f"_probe_{page.name}")
    probe_page.write_text(page.read_text().replace("</body>", _PROBE + "</body>"))
    # A fresh profile per attempt: headless Chromium occasionally exits without dumping the DOM
    # (seen once in CI on an unchanged page), so a page gets up to three attempts; a page whose
    # probe never runs still fails, with Chromium's own messages.
    for attempt in range(3):
        cmd = [
            browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--allow-file-access-from-files", f"--user-data-dir={tmp / f'profile-{page.stem}-{attempt}'}",
            f"--window-size={WINDOW_WIDTH},900", "--virtual-time-budget=30000", "--dump-dom", probe_page.as_uri(),
        ]
        proc = run_process(cmd, guard=CHROMIUM_HANG_GUARD, capture_output=True, text=True)
        match = re.search(r'<pre id="ldpkit-probe">(.*?)</pre>', proc.stdout, re.S)
        if match:
            break
    assert match, f"probe did not run on {page.name} in 3 attempts; chromium said:\n{proc.stderr[-2000:]}"
    import html as htmllib

    return json.loads(htmllib.unescape(match.group(1)))


@pytest.fixture(scope="session")
def probes(book_build: dict, browser: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    html = book_build["html"]
    tmp = tmp_path_factory.mktemp("chromium")
    return {doc: _probe_page(browser, html / f"{doc}.html", tmp) for doc in CHAPTERS if (html / f"{doc}.html").exists()}


@pytest.mark.parametrize("doc", CHAPTERS)
def test_page_math_typeset_and_images_load(probes: dict, doc: str) -> None:
    assert doc in probes, f"{doc}.html missing"
    probe = probes[doc]
    assert probe["broken"] == [], f"{doc}: images failed to load: {probe['broken']}"
    assert probe["rawInline"] == 0 and probe["rawDisplay"] == 0, f"{doc}: raw TeX delimiters left in the page"


def test_pages_measured_at_laptop_width(probes: dict) -> None:
    widths = {doc: probe["windowWidth"] for doc, probe in probes.items()}
    assert set(widths.values()) == {WINDOW_WIDTH}, widths


@pytest.mark.parametrize("doc", CHAPTERS)
def test_page_has_no_raw_markup(probes: dict, doc: str) -> None:
    """No TeX or MyST source shows in the rendered text (cell outputs and glued text included)."""
    assert doc in probes, f"{doc}.html missing"
    probe = probes[doc]
    problems = [f"raw TeX: ...{snippet}..." for snippet in probe["rawTex"]]
    problems += [f"raw MyST role: ...{snippet}..." for snippet in probe["rawMyst"]]
    assert not problems, f"{doc}: source markup left in the rendered page:\n" + "\n".join(problems)


@pytest.mark.parametrize("doc", CHAPTERS)
def test_page_fits_the_content_column(probes: dict, doc: str) -> None:
    """Math and tables at 1280 px are neither clipped nor wider than the content column.

    A wide element inside a horizontally scrollable container (e.g. the theme's table wrapper
    or a display formula's own scroll box) is fine as long as that container fits.
    """
    assert doc in probes, f"{doc}.html missing"
    probe = probes[doc]
    problems = [
        f"{item['kind']} {item['how']} ({item['width']} px, room {item['room']} px): {item['what']}"
        for item in probe["wide"]
    ]
    if probe["columnScroll"]:
        problems.append("the content column itself has to scroll sideways")
    assert not problems, (
        f"{doc}: at {probe['windowWidth']} px the column is {probe['columnWidth']} px wide, and\n" + "\n".join(problems)
    )


#: pages that still break a reader's rule of issue 38, each named with what is left (strict: a page that
#: is fixed must leave this list); the rule stays tested on every other page
_OPEN_RULES: dict[str, dict[str, str]] = {
    "tables": {},
    "ascii": {},
    "bibtex": {},
}


def _pages(rule: str) -> list[Any]:
    return [pytest.param(doc, marks=pytest.mark.xfail(reason=_OPEN_RULES[rule][doc], strict=True))
            if doc in _OPEN_RULES[rule] else doc for doc in CHAPTERS]


@pytest.mark.parametrize("doc", _pages("tables"))
def test_page_tables_fit_without_scrolling(probes: dict, doc: str) -> None:
    """No table at 1280 px is wider than the content column, even inside a scroll container.

    A table the prose refers to is read whole: one whose columns and caption have to be
    scrolled into view is split or transposed instead.
    """
    assert doc in probes, f"{doc}.html missing"
    probe = probes[doc]
    problems = [f"table {item['width']} px wide, room {item['room']} px: {item['what']}"
                for item in probe["wideTables"]]
    assert not problems, f"{doc}: tables wider than the content column:\n" + "\n".join(problems)


#: ASCII stand-ins for math in prose, tables and captions: comparison operators, a power written
#: with a caret (``e^1``, ``10^6``), a subscript written with an underscore (``E_S``, ``eps_s``)
#: and function-call notation for roots.  Source code and printed output are not prose.
ASCII_MATH = re.compile(
    r"<=|>=|!=|[\w)\]]\^[-+]?[\w({]"
    r"|\b(?:[A-Za-z]|eps|epsilon|alpha|delta|sigma|mu|pi|ell)_\{?[A-Za-z0-9]+\b"
    r"|\bsqrt\("
)


def _snippets(text: str, pattern: re.Pattern[str], limit: int = 12) -> list[str]:
    found = []
    for match in pattern.finditer(text):
        start, end = max(0, match.start() - 40), min(len(text), match.end() + 40)
        found.append(" ".join(text[start:end].split()))
        if len(found) == limit:
            break
    return found


@pytest.mark.parametrize("doc", _pages("ascii"))
def test_page_has_no_ascii_math(probes: dict, doc: str) -> None:
    """Prose, tables and captions write math as math ("at most 12", $\\le$, $e^1$), never "<=" or "e^1"."""
    assert doc in probes, f"{doc}.html missing"
    found = _snippets(probes[doc]["prose"], ASCII_MATH)
    assert not found, f"{doc}: ASCII math in the rendered text:\n" + "\n".join(f"...{s}..." for s in found)


def _bibtex_keys() -> list[str]:
    text = (REPO / "book" / "references.bib").read_text(encoding="utf-8")
    return sorted(set(re.findall(r"@\w+\s*\{\s*([^,\s]+)\s*,", text)))


@pytest.mark.parametrize("doc", _pages("bibtex"))
def test_page_names_papers_not_bibtex_keys(probes: dict, doc: str) -> None:
    """A citation reads as the paper (authors and year, or its title), never as its BibTeX key."""
    assert doc in probes, f"{doc}.html missing"
    keys = _bibtex_keys()
    assert keys, "no BibTeX keys read from references.bib"
    pattern = re.compile(r"(?<![\w/.-])(?:" + "|".join(map(re.escape, keys)) + r")(?![\w-])")
    found = _snippets(probes[doc]["prose"], pattern)
    assert not found, f"{doc}: BibTeX keys in the rendered text:\n" + "\n".join(f"...{s}..." for s in found)


@pytest.mark.parametrize("doc", CHAPTERS)
def test_page_figures_have_captions_and_alt_text(probes: dict, doc: str) -> None:
    assert doc in probes, f"{doc}.html missing"
    problems = [f"{fig['src']}: {', '.join(fig['problems'])}" for fig in probes[doc]["figures"]]
    assert not problems, (
        f"{doc}: figures need a caption (figcaption) and alt text other than the file name:\n" + "\n".join(problems)
    )


def test_foundations_has_math_and_figures(probes: dict) -> None:
    probe = probes["book/foundations"]
    assert probe["mjx"] >= 20, f"only {probe['mjx']} MathJax containers in Foundations"
    assert probe["images"] >= 2, f"only {probe['images']} images in Foundations"


def test_scorecard_lists_every_claim(probes: dict) -> None:
    from booktools import load_claims

    claims = load_claims(REPO / "book" / "claims.yml")
    text = probes["book/scorecard"]["text"]
    missing = [c.id for c in claims if c.id not in text]
    assert not missing, f"Scorecard page does not list {len(missing)} claims, e.g. {missing[:5]}"
    for paper in {c.paper for c in claims}:
        assert paper in text


def _plain_quotes(text: str) -> str:
    """Undo Sphinx's smart quotes."""
    return text.translate(str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}))


def _anchor_exists(page: Path, href: str) -> bool:
    target, _, anchor = href.partition("#")
    file = (page.parent / target).resolve() if target else page
    if not file.is_file():
        return False
    return not anchor or re.search(rf'id="{re.escape(anchor)}"', file.read_text()) is not None


def test_scorecard_renders_register(book_build: dict, probes: dict) -> None:
    """Statuses and data qualifiers are badges, evidence labels link, notes fold, glued values and math render."""
    bs4 = pytest.importorskip("bs4")
    from booktools import glue_references, load_claims
    from booktools.register import DATA_QUALIFIERS, STATUS_DEFINITIONS

    claims = load_claims(REPO / "book" / "claims.yml")
    page = book_build["html"] / "book" / "scorecard.html"
    soup = bs4.BeautifulSoup(page.read_text(), "html.parser")
    tables = soup.select("table.scorecard-register")
    assert len(tables) == 4, f"expected one register table per paper, found {len(tables)}"
    for table in tables + soup.select("table.scorecard-counts"):
        assert "pst-scrollable-table-container" in table.parent.get("class", []), "table not in a scroll container"
    # the page defines exactly the statuses the register uses, in the register's words
    text = _plain_quotes(probes["book/scorecard"]["text"])
    for status in STATUS_DEFINITIONS:
        assert status in text, f"status {status!r} not defined on the Scorecard"
    assert "erratum" not in {c.status for c in claims}
    rows = {}
    for table in tables:
        assert [th.get_text(strip=True) for th in table.select("thead th")] == ["claim", "statement", "corrected result"]
        for tr in table.select("tbody tr"):
            cells = tr.find_all("td")
            parts = re.split(r"<br\s*/?>", cells[0].find("p").decode_contents())
            location, ident, _status = (bs4.BeautifulSoup(part, "html.parser").get_text(" ", strip=True)
                                        for part in parts)
            rows[ident] = (location, cells)
    assert set(rows) == {c.id for c in claims}
    problems = []
    for claim in claims:
        location, cells = rows[claim.id]
        if _plain_quotes(location) != claim.location:
            problems.append(f"{claim.id}: location shown as {location!r}")
        badges = [b.get_text(strip=True) for b in cells[0].select("span.sd-badge")]
        expected = [claim.status] + ([DATA_QUALIFIERS[claim.data][0]] if claim.data else [])
        if badges != expected:
            problems.append(f"{claim.id}: badges {badges}, expected {expected}")
        if claim.evidence:
            link = cells[0].select_one("a.reference.internal")
            if link is None or not _anchor_exists(page, link["href"]):
                problems.append(f"{claim.id}: evidence {claim.evidence!r} is not a working link")
        note = cells[1].select_one("details.scorecard-note")
        if bool(claim.note) != (note is not None and bool(note.get_text(strip=True))):
            problems.append(f"{claim.id}: note {'missing' if claim.note else 'shown without one'}")
        if (cells[2].get_text(strip=True) == "\u2014") != (not claim.corrected):
            problems.append(f"{claim.id}: corrected result {'missing' if claim.corrected else 'shown without one'}")
    assert not problems, "\n".join(problems)
    register_text = " ".join(f"{c.statement} {c.note or ''} {c.corrected or ''}" for c in claims)
    n_math = len(re.findall(r"\$[^$\n]+\$", re.sub(r"\{[^}]+\}`[^`]*`", "", register_text)))
    n_math_html = sum(len(t.select("span.math")) for t in tables)
    assert n_math_html == n_math, f"{n_math} inline formulas in the register, {n_math_html} rendered as math"
    n_glue = len(glue_references(claims))
    n_pasted = sum(len(t.select("span.pasted-text")) for t in tables)
    assert n_pasted == n_glue, f"{n_glue} glue references in the register, {n_pasted} values pasted"
    box = soup.select("div.claims-box")
    assert len(box) == 1 and box[0].select("span.sd-badge") and box[0].select("a.reference.internal")
    assert probes["book/scorecard"]["mjx"] >= n_math


def test_citations_resolved(book_build: dict) -> None:
    page = (book_build["html"] / "book" / "intro.html").read_text()
    assert "Gu" in page and "2020" in page, "intro does not show the resolved ID-LDP citation"
    assert "??" not in page


def test_execution_statistics_list_every_executed_chapter(book_build: dict) -> None:
    """The execution page lists every chapter with code, in reading order, each run without error, and a total.

    The table is filled by the book's extension (``booktools.execution``) from MyST-NB's record of
    the build; a chapter missing from it (or marked as failed) would mean the page no longer shows
    the cost of reproducing the book.
    """
    bs4 = pytest.importorskip("bs4")
    page = book_build["html"] / "book" / "execution.html"
    soup = bs4.BeautifulSoup(page.read_text(), "html.parser")
    tables = soup.select("article table")
    assert len(tables) == 1, f"expected the execution table, found {len(tables)} tables"
    header = [th.get_text(strip=True).lower() for th in tables[0].select("thead th")]
    assert header[0] == "chapter" and "run time" in header and "status" in header, header
    order, rows, total = [], {}, None
    for tr in tables[0].select("tbody tr"):
        cells = [td.get_text(strip=True) for td in tr.find_all("td")]
        link = tr.select_one("a")
        if cells[0] == "Total":
            total = cells
            continue
        assert link is not None, f"row without a link to its chapter: {cells}"
        doc = "book/" + link["href"].split("#")[0].removesuffix(".html").split("/")[-1]
        order.append(doc)
        rows[doc] = cells
    assert total is not None, "no Total row"
    with_code = [doc for doc in CHAPTERS if "```{code-cell}" in (REPO / f"{doc}.md").read_text()]
    assert with_code, "no chapter with code cells found"
    missing = [doc for doc in with_code if doc not in rows]
    assert not missing, f"chapters missing from the execution table: {missing}; rows: {sorted(rows)}"
    assert order == [doc for doc in CHAPTERS if doc in rows], "rows are not in reading order"
    failed = {doc: cells for doc, cells in rows.items() if cells[-1] != "\u2713"}  # the check mark of success
    assert not failed, failed


# --------------------------------------------------------------------------- tables, weight, links
#: Largest HTML page the book may write: links to data files, not the data, keep pages light
#: (figures are separate image files).
MAX_PAGE_BYTES = 1_500_000
# ("None" is a category of the IPLDP paper's example, so it is not on the list; show_table writes
# a missing value as a dash, and a raw pandas table is caught by its class)
_RAW_CELL = re.compile(r"^(nan|NaN|inf|-inf|<NA>|NaT)$")


def _soup(book_build: dict, doc: str):
    bs4 = pytest.importorskip("bs4")
    return bs4.BeautifulSoup((book_build["html"] / f"{doc}.html").read_text(), "html.parser")


@pytest.mark.parametrize("doc", CHAPTERS)
def test_page_tables_are_readable(book_build: dict, doc: str) -> None:
    """No pandas HTML table, no raw NaN/None/inf cell, no pandas index header in any page."""
    soup = _soup(book_build, doc)
    article = soup.select_one("article.bd-article") or soup
    problems = [f"pandas table (class dataframe) near {t.find_previous(['h1', 'h2', 'h3']).get_text(strip=True)[:60]!r}"
                for t in article.select("table.dataframe")]
    for table in article.select("table"):
        for cell in table.select("td, th"):
            text = cell.get_text(strip=True)
            if _RAW_CELL.match(text):
                problems.append(f"cell {text!r} in a table near "
                                f"{(table.find_previous(['h1', 'h2', 'h3']) or soup).get_text(strip=True)[:60]!r}")
    assert not problems, f"{doc}:\n" + "\n".join(problems[:20])


@pytest.mark.parametrize("doc", CHAPTERS)
def test_page_is_light_and_its_download_links_resolve(book_build: dict, doc: str) -> None:
    page = book_build["html"] / f"{doc}.html"
    size = page.stat().st_size
    assert size <= MAX_PAGE_BYTES, f"{doc}.html is {size:,} bytes (limit {MAX_PAGE_BYTES:,}): embedded data?"
    soup = _soup(book_build, doc)
    problems = []
    for link in soup.select("a[href^='data:']"):
        problems.append(f"embedded data link {link.get_text(strip=True)[:60]!r}")
    for link in soup.select("a[download]"):
        target = (page.parent / link["href"]).resolve()
        if not target.is_file():
            problems.append(f"download link {link['href']!r} points to no file of the site")
    assert not problems, f"{doc}:\n" + "\n".join(problems)


@pytest.mark.parametrize("doc", [doc for doc in CHAPTERS if not doc.startswith(("book/api/", "book/scorecard",
                                                                                 "book/artifact", "book/execution",
                                                                                 "book/bibliography"))
                                 and doc != "book/intro"])
def test_book_numbers_are_chapter_prefixed(book_build: dict, doc: str) -> None:
    """The book's own figures, tables and theorems read "Fig. 4.2", never a bare "Fig. 2" (the papers' style)."""
    soup = _soup(book_build, doc)
    article = soup.select_one("article.bd-article") or soup
    numbers = [span.get_text(" ", strip=True) for span in article.select("span.caption-number")]
    numbers += [title.get_text(" ", strip=True).split("(")[0] for title in article.select("div.proof > p.admonition-title")]
    bare = [n for n in numbers
            if re.search(r"\b(Fig\.|Table|Theorem|Lemma|Proposition|Corollary|Definition|Example|Remark)\s+\d+(?!\d|\.\d)", n)]
    assert not bare, f"{doc}: numbers without the chapter prefix: {bare[:10]}"
