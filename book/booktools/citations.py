"""Author-year citations that tell apart works by the same authors in the same year (Sphinx extension).

sphinxcontrib-bibtex's ``author_year`` style cites both versions of the IPLDP paper (the
conference version and the preprint, same authors, same year) as "Li *et al.*, 2023".  The usual
remedy is a letter after the year, "2023a" and "2023b", in the citations and in the bibliography
alike.  This extension adds it: once the bibliography files are parsed, entries whose citation
would read the same (same cited authors, same year) get the letters a, b, ... in the order the
bibliography style sorts them, as the year the citation and the reference list show.  The
``.bib`` file keeps the plain year.

Enable it in ``_config.yml`` (the path is the directory holding ``booktools``)::

    sphinx:
      local_extensions:
        booktools.citations: book
"""

from __future__ import annotations

import re
import string
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

__all__ = ["citation_key", "year_suffixes", "setup"]

_SUFFIXED = re.compile(r"^(?P<year>\d{4})(?P<suffix>[a-z]?)$")


def _names(entry: Any) -> list[Any]:
    persons = entry.persons
    return list(persons.get("author", ())) or list(persons.get("editor", ()))


def citation_key(entry: Any) -> tuple[tuple[str, ...], str] | None:
    """What an author-year citation of ``entry`` shows: its authors as cited, and its year.

    Three or more authors are cited as the first "*et al.*", one or two by all last names (the
    ``author_year`` style's rule).  ``None`` for an entry without a plain four-digit year.
    """
    match = _SUFFIXED.match(str(entry.fields.get("year", "")).strip())
    if match is None:
        return None
    people = [" ".join(person.last_names).lower() for person in _names(entry)]
    cited = tuple(people[:1]) + ("et al.",) if len(people) > 2 else tuple(people)
    return cited, match["year"]


def year_suffixes(entries: Iterable[Any], sorted_entries: Iterable[Any]) -> dict[str, str]:
    """Entry key -> the letter its year needs, for every group of entries cited alike.

    ``sorted_entries`` gives the order of the letters (the bibliography's order).
    """
    groups: dict[tuple[tuple[str, ...], str], list[str]] = defaultdict(list)
    order = {entry.key: rank for rank, entry in enumerate(sorted_entries)}
    for entry in entries:
        cited = citation_key(entry)
        if cited is not None:
            groups[cited].append(entry.key)
    out: dict[str, str] = {}
    for keys in groups.values():
        if len(keys) < 2:
            continue
        for letter, key in zip(string.ascii_lowercase, sorted(keys, key=lambda k: order.get(k, len(order)))):
            out[key] = letter
    return out


def _disambiguate(app: Any) -> None:
    import pybtex.plugin  # type: ignore[import-untyped]

    domain = app.env.get_domain("cite")
    entries = domain.bibdata.data.entries
    # the plain year, also when the parsed data come back from the environment's cache
    for entry in entries.values():
        match = _SUFFIXED.match(str(entry.fields.get("year", "")).strip())
        if match is not None and match["suffix"]:
            entry.fields["year"] = match["year"]
    style = pybtex.plugin.find_plugin("pybtex.style.formatting", app.config.bibtex_default_style)()
    suffixes = year_suffixes(entries.values(), style.sort(list(entries.values())))
    for key, letter in suffixes.items():
        entries[key].fields["year"] = str(entries[key].fields["year"]) + letter


def setup(app: Any) -> dict[str, Any]:
    """Run after sphinxcontrib-bibtex has parsed the bibliography files."""
    app.setup_extension("sphinxcontrib.bibtex")
    app.connect("builder-inited", _disambiguate, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
