"""The ``ldpkit`` command: the book's figures and tables, and a collection dry run on your own data.

Usage::

    ldpkit --version
    ldpkit list                                    # every figure and table: kind, paper item, time, data, title
    ldpkit reproduce (ID [ID ...] | --all) [--out DIR] [--seed S] [--repeats R] [--scale F] [--jobs N]
                     [--scheduler ADDRESS]
    ldpkit check (ID [ID ...] | --all) [--jobs N] [--progress]  # rerun and compare with the stored references
    ldpkit check --write-references (ID [ID ...] | --all) --why TEXT  # maintainers: remake the references
    ldpkit datasets                                # what data a run would use here: real, prefix or stand-in
    ldpkit perturb --input FILE [--column NAME] [--delimiter C] [--encoding E] --output FILE [--force]
                   (--mechanism NAME [--epsilon E] [--budgets B] [--sensitive S] [--prior FILE] [--rule R]
                                     [--alpha A] [--g G] [--model M]
                    | --contract SPEC [--budgets B] [--sensitive S] [--prior FILE] [--matrix FILE] [--family NAME])
                   [--domain FILE | --allow-many-labels] [--seed N] [--data TEXT] [--chunk-rows N]
    ldpkit estimate FILE [FILE ...] [--output CSV [--force]] [--level 0.95] [--state JSON] [--scheduler ADDRESS]
    ldpkit account (--reports FILE | --mechanism NAME (--d D | --domain FILE) [--epsilon E] [--budgets B]
                   [--sensitive S] [--prior FILE] [--rule R] [--alpha A] [--g G] [--model M])

``reproduce`` runs experiments of :mod:`ldpkit.experiments` (their defaults reproduce the book)
with a progress bar on stderr and writes, for each, ``ID.png`` and ``ID.pdf`` (figures only),
``ID.csv`` and ``ID.json`` (the provenance record: ldpkit version and git commit, command line,
seed and configuration, each dataset's identity, library versions, platform, wall time) into
``DIR`` (default: the current directory); it prints the paths written and the data each run
used.  ``--seed`` changes the mechanisms' randomness, not the data; ``--scale`` uses a fixed seeded
subsample of each dataset's users.  ``--jobs N`` runs the points of each sweep on ``N`` worker
processes (``-1``: every core) and ``--scheduler ADDRESS`` on the Dask cluster whose scheduler
listens there; the numbers are the same either way (:class:`~ldpkit.experiments.RunConfig`).

``check`` reruns each experiment at its reference configuration and compares it with the
reference result stored in the package (:mod:`ldpkit.experiments.check`): ``reproduced``,
``differs`` (with the largest deviation) or ``not comparable`` (the data here are not the
reference's, and why).  Its stdout holds the verdicts, one line each and a summary; stderr says
which experiment runs (``checking ID (i/N) ...``) and, when it is a terminal or with
``--progress``, shows the sweeps' progress bars.  ``reproduce`` says the same per experiment and
always shows the bars.  ``check --write-references`` remakes the stored references (maintainers,
after a change that moves a result on purpose): one fresh process per experiment, at its
defaults, with the reason ``--why`` recorded in each reference (and to be said in
CHANGELOG.md); an experiment that would run here on other data than its reference did is
refused unless ``--allow-data-change``.  ``python -m ldpkit`` is the same command.

``perturb``, ``estimate`` and ``account`` run a collection on your own data, client side and server
side, through :mod:`ldpkit.domain`, :mod:`ldpkit.reportio` and :mod:`ldpkit.aggregation` (tutorial
chapter).  ``perturb`` reads items (labels) from a CSV column (``--column``; fields separated by
``--delimiter``, default ``,``) or a text file with one item per line (blank lines skipped), decoded
with ``--encoding`` (default UTF-8), in chunks of ``--chunk-rows`` with pandas, and writes one
report per item to a report file (``.csv``: the plain CSV form; any other suffix: the binary form)
that stores the mechanism, the domain and the ``--data`` line.  An existing ``--output`` file is
replaced only with ``--force`` (for ``estimate`` too; its ``--state`` file is updated in place).
The input is read twice: first to check every label and count the rows (an unknown label is
refused by name before anything is written), then to perturb, with one :class:`numpy.random.Generator` made from ``--seed`` (drawn and
printed when not given, so the run can be repeated).  The domain is ``--domain FILE`` (one label a
line: item ``i`` is line ``i``), or else the data's distinct labels, most frequent first (a dry run
only: a deployed collection fixes its domain beforehand); data with more distinct labels than half
their rows (and more than ``MANY_LABELS``), such as a numeric or identifier column, are refused
unless ``--allow-many-labels``.

The mechanism is a member of a registered family (:mod:`ldpkit.family`), named or calibrated; the
command line holds no list of families or notions, so a family or notion registered later (in
the kit, or by a module imported before :func:`main` runs) is taken the same way.
``--mechanism NAME`` names the family (its name or an alias, ignoring case; ``--mechanism NAME
--model M`` is another spelling of ``NAME-M``, as in ``IDUE --model opt1``); its member over
``d`` = the domain's size is built at budget parameter ``t = --epsilon``, or, for a family that
reads per-item budgets, at ``t = 1``: its ``--budgets`` as given.  Each context key the family
declares is read from the flag of that name (``--budgets``, ``--sensitive``, ``--prior``,
``--rule``, ``--alpha``, ``--g``; ``--budgets`` and ``--sensitive`` must be given where read), and
a flag the family does not read is refused, naming the families that read it; a family that is
not indexed by a budget or that perturbs item sets is refused with the reason.  ``--contract
SPEC`` states a promise of any registered notion, read by :func:`ldpkit.contracts.parse`
(``ldp:epsilon=1``, ``fldp:epsilon=1,alpha=0.5``, ``minid-ldp`` with ``--budgets``,
``lip:epsilon=1`` with ``--prior``, ``context-aware`` with ``--matrix``, ...), and the mechanism is
calibrated to it (:mod:`ldpkit.calibration`): of one ``--family``, or the family chosen by
:func:`ldpkit.calibration.best`, the smallest total variance at uniform counts (``n / d`` each)
among those that keep it.  The promise is checked once the domain is known: before the first
pass with ``--domain``, after it otherwise.  Per-label files are read by :mod:`ldpkit.domain`:
``--budgets FILE`` and ``--prior FILE`` as ``label,number`` lines
(:func:`~ldpkit.domain.read_values`), ``--matrix FILE`` as a table with a header line of labels
(:func:`~ldpkit.domain.read_matrix`), ``--sensitive FILE`` and ``--domain FILE`` as one label a
line (:func:`~ldpkit.domain.read_labels`).

``estimate`` adds report files to an :class:`~ldpkit.aggregation.Aggregator` (resumed from and
saved to ``--state``) and writes the estimate with standard errors and intervals
(:meth:`~ldpkit.aggregation.Estimate.to_csv`); files of another configuration are refused, naming
the file and what differs, and so are reports already counted (the same reports of the same
mechanism, in any encoding, from any file).  It holds the advisory lock of the ``--state`` file
(:func:`ldpkit.aggregation.state_lock`, the file ``STATE.lock``) from loading the state to saving
it: a second ``estimate`` on the same state says so on stderr and waits, then adds its files to
what the first saved.  With ``--scheduler ADDRESS`` (as ``reproduce`` takes it) the files are read
on the Dask cluster whose scheduler listens there, each to a partial aggregate on a worker, then
added in the order given (:func:`ldpkit.aggregation.aggregate_files`): the estimate is the same,
bit for bit, and every file is still checked here first.  ``account`` prints
the privacy profile (:func:`ldpkit.accountant.privacy_profile`) of the mechanism of a report file
or of one named on the command line, and its declared guarantees.  Every refused input (a bad
flag combination, a missing, truncated, corrupted or mismatched file, an unknown label, a domain
above ``LDPKIT_MAX_DOMAIN``) is one line on stderr with exit status 2, checked before any work
where possible; any other error of these three commands is one line too, with exit status 1
(``--debug`` shows its traceback).  An output file is never one of the command's inputs (compared
as files on disk, links included), is written under a temporary name of its own in the same
folder and renamed when complete, and only that temporary file is ever deleted after a failure.

Data are loaded by one policy (:mod:`ldpkit.datasets.loaders`): a valid local real file, else a
download where allowed, else the labelled stand-in.  Everything is checked before any work: an
unknown id or a bad option is a usage error (exit status 2); a present but damaged data file or a
missing optional package is reported in one line naming the file or package and the fix (exit
status 1; ``--debug`` shows the traceback).  ``check`` exits with 1 when a result differs.

Example (a dry run of a collection, then its estimate and its privacy)::

    ldpkit perturb --input visits.csv --column page --output day1.ldpr --mechanism OUE --epsilon 1 --seed 7
    ldpkit perturb --input visits.csv --column page --output day1.ldpr --contract ldp:epsilon=1 --domain pages.txt
    ldpkit estimate day1.ldpr day2.ldpr --output pages.csv --state pages-state.json
    ldpkit account --reports day1.ldpr
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, TextIO

if TYPE_CHECKING:  # pragma: no cover
    from .experiments import Experiment
    from .mechanism import Mechanism

__all__ = ["main"]

USAGE_ERROR = 2
FAILURE = 1

#: the context keys of a family (:data:`ldpkit.family.CONTEXT_KEYS`), each read from the flag of the same name
#: (``--budgets``, ``--sensitive``, ...): its metavar, its argparse type and what it is, for the help
_CONTEXT_FLAGS: dict[str, tuple[str, Any, str]] = {
    "budgets": ("B", None, "per-item budgets: one number for every item, or a CSV file of 'label,budget' lines "
                "(optional header line 'label,budget'; 'inf' marks a non-sensitive item; every label of the "
                "domain needs a line)"),
    "sensitive": ("S", None, "sensitive items: comma-separated labels, or a text file with one label a line"),
    "prior": ("FILE", None, "a prior over the items: a CSV file of 'label,probability' lines (the form of --budgets)"),
    "rule": ("R", None, "the pair rule of per-item budgets: min (default), average or max"),
    "alpha": ("A", float, "FLDP's alpha"),
    "g": ("G", int, "the hash range (OLH's default: round(e^epsilon + 1))"),
}
#: context keys ``--mechanism`` needs given (a uRR without sensitive items would be GRR: the items are named)
_REQUIRED_CONTEXT = ("budgets", "sensitive")
#: every flag that configures a mechanism named by ``--mechanism``
_MECHANISM_PARAMS = ("epsilon", *_CONTEXT_FLAGS, "model")
#: where ``--contract`` reads a promise's data from (:func:`ldpkit.contracts.parse`'s hints)
_CONTRACT_HINTS = {"budgets": "--budgets B", "sensitive": "--sensitive S", "prior": "--prior FILE",
                   "matrix": "--matrix FILE"}
#: rows ``perturb`` reads and perturbs at a time
DEFAULT_CHUNK_ROWS = 1_000_000
#: ``perturb`` without ``--domain`` refuses data with more distinct labels than this and than half its rows
#: (fewer than two rows a label: a numeric or identifier column, not items), unless ``--allow-many-labels``
MANY_LABELS = 100
#: separators a CSV header is searched for when ``--column`` is not among its names (a hint to ``--delimiter``)
_OTHER_DELIMITERS = (";", "\t", "|", ",")


class _UsageError(Exception):
    """A bad command line; reported on stderr with exit status 2."""


class _Failure(Exception):
    """Data or an optional package missing or unusable; reported in one line, exit status 1."""


def _scale_arg(text: str) -> float:
    """``--scale`` as a float; a value that overflows to infinity is reported as typed, not as ``inf``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid float value: {text!r}") from None
    if math.isinf(value) and not text.strip().lower().lstrip("+-").startswith("inf"):
        raise argparse.ArgumentTypeError(f"scale must be a fraction in (0, 1], got {text!r}")
    return value


def _version() -> str:
    from . import __version__

    return __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ldpkit",
        description="Reproduce and check the figures and tables of the ldpkit book, and run a collection on your "
        "own data: perturb items into a reports file, estimate from reports files, account for a mechanism's "
        "privacy.",
    )
    parser.add_argument("--version", action="version", version=f"ldpkit {_version()}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of a data or dependency error")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("list", help="list every figure and table (id, kind, paper item, expected time, data, title)")
    rep = sub.add_parser(
        "reproduce",
        help="run figures or tables and write PNG, PDF, CSV and the provenance JSON",
        description="Run experiments and write ID.png, ID.pdf (figures), ID.csv and ID.json (provenance) into DIR. "
        "Defaults reproduce the book; --seed changes the mechanisms' randomness, not the data.",
    )
    rep.add_argument("ids", nargs="*", metavar="ID", help="experiment ids, e.g. idldp-fig2 (see `ldpkit list`)")
    rep.add_argument("--all", action="store_true", help="every registered experiment")
    rep.add_argument("--out", metavar="DIR", default=".", help="output directory (default: current directory)")
    rep.add_argument("--seed", type=int, default=None, help="non-negative run seed (default: the book's)")
    rep.add_argument("--repeats", type=int, default=None, help="repeats per setting, >= 1 (default: the book's)")
    rep.add_argument("--scale", type=_scale_arg, default=None,
                     help="fraction in (0, 1] of each dataset's users (default: the book's, 1)")
    rep.add_argument("--jobs", type=int, default=None, metavar="N",
                     help="parallel workers for the points of a sweep, >= 1 or -1 for every core (default: 1); "
                     "the results do not depend on it")
    rep.add_argument("--scheduler", metavar="ADDRESS", default=None,
                     help="run the sweeps on the Dask cluster of this scheduler, e.g. tcp://10.0.0.5:8786 "
                     "(needs ldpkit[cluster]; --jobs defaults to -1, every worker)")
    chk = sub.add_parser(
        "check",
        help="rerun experiments and compare them with the reference results stored in the package",
        description="Rerun each experiment at its reference configuration and compare it with the stored "
        "reference: reproduced, differs, or not comparable (other data than the reference's). Exit status 1 "
        "if any result differs.",
    )
    chk.add_argument("ids", nargs="*", metavar="ID", help="experiment ids (see `ldpkit list`)")
    chk.add_argument("--all", action="store_true", help="every registered experiment")
    chk.add_argument("--jobs", type=int, default=None, metavar="N",
                     help="parallel workers for the points of a sweep (the results do not depend on it; default 1)")
    chk.add_argument("--progress", action="store_true",
                     help="show the sweeps' progress bars on stderr even when it is not a terminal")
    chk.add_argument("--write-references", action="store_true",
                     help="maintainers: remake the stored reference results instead of checking them (one fresh "
                     "process per experiment; needs --why)")
    chk.add_argument("--why", metavar="TEXT", default=None,
                     help="with --write-references: why the references are remade, stored in each of them (say it in "
                     "CHANGELOG.md too)")
    chk.add_argument("--allow-data-change", action="store_true",
                     help="with --write-references: remake a reference even when this machine would run it on other "
                     "data than it was made on")
    sub.add_parser("datasets", help="for every dataset: real file, download, prefix stand-in, stand-in or error")
    _collection_parsers(sub)
    return parser


class _RegistryHelp(argparse.HelpFormatter):
    """Fills the registered families and notions into the help of ``perturb`` and ``account`` when it is shown.

    Reading the registries imports the family modules and numpy, which ``ldpkit --help`` and every
    other command must not pay for: the texts hold ``{families}``, ``{takes:KEY}`` and ``{notions}``
    until a help is formatted (:func:`_registry_text`).
    """

    def _get_help_string(self, action: argparse.Action) -> Optional[str]:
        text = super()._get_help_string(action)
        return None if text is None else _fill(text)

    def _format_text(self, text: str) -> str:
        return super()._format_text(_fill(text))


def _fill(text: str) -> str:
    import re

    return re.sub(r"\{(families|notions|takes:\w+)\}", lambda m: _registry_text(m.group(1)), text)


def _registry_text(token: str) -> str:
    """The families ``--mechanism`` takes, those that read one flag, or the notions ``--contract`` takes."""
    from .family import families

    named = families(budget=True, inputs="items")
    if token == "families":
        return ", ".join(f.name + (f" ({', '.join(f.aliases)})" if f.aliases else "") for f in named)
    if token.startswith("takes:"):
        users = [f.name for f in named if _takes(f, token[len("takes:"):])]
        return ", ".join(users) or "no registered family"
    from .accountant import SHARED_PARAMETERS, registered_notions

    shown = []
    for notion in registered_notions():
        text = [f"{p}={p[0].upper()}" for p in notion.required if p not in SHARED_PARAMETERS]
        data = [f"--{p}" for p in (*notion.required, *notion.optional) if p in SHARED_PARAMETERS]
        shown.append(notion.name + (":" + ",".join(text) if text else "") + (f" ({', '.join(data)})" if data else ""))
    return ", ".join(shown)


def _mechanism_flags(p: argparse.ArgumentParser, contract: bool) -> None:
    """The flags that name a mechanism and its parameters (``perturb``, with ``contract``, and ``account``).

    One flag per context key a family may declare (:data:`ldpkit.family.CONTEXT_KEYS`), read for
    the families that declare it; the families each flag applies to are listed when the help is shown.
    """
    p.add_argument("--mechanism", metavar="NAME", default=None,
                   help="a registered family, by name or alias, case-insensitive: {families}; built over d = the "
                   "domain's size at --epsilon, or at the --budgets of a family that reads per-item budgets")
    p.add_argument("--epsilon", metavar="E", type=float, default=None,
                   help="the budget parameter t of a family that does not read per-item budgets: {takes:epsilon}")
    for key, (metavar, kind, what) in _CONTEXT_FLAGS.items():
        also = " and by the promises of --contract that state them" if contract and key in _CONTRACT_HINTS else ""
        p.add_argument(f"--{key}", metavar=metavar, type=kind, default=None,
                       help=f"{what}; read by {{takes:{key}}}{also}")
    p.add_argument("--model", metavar="M", default=None,
                   help="another spelling of a family's model: --mechanism NAME --model M is --mechanism NAME-M "
                   "(--mechanism IDUE --model opt1 is IDUE-opt1)")
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="show the traceback of an error instead of its one-line message")


def _collection_parsers(sub: Any) -> None:
    """The parsers of ``perturb``, ``estimate`` and ``account`` (a collection on the user's own data)."""
    per = sub.add_parser(
        "perturb",
        formatter_class=_RegistryHelp,
        help="perturb the items of a CSV column or text file into a reports file (a collection dry run)",
        description="Read items (labels) from a CSV column or a text file with one item per line, perturb each "
        "with a mechanism (named, or calibrated to a privacy contract) and write the reports, the mechanism, the "
        "domain and a data line to a reports file. The input is read twice: once to check its labels and count "
        "its rows, once to perturb. Exit status 2 for any refused input, before anything is written.",
        epilog="Contracts (every registered notion, ldpkit.contracts.parse): {notions}; the per-item data come "
        "from the flags in parentheses. Calibrating every family to a MinID-LDP promise at d = 1,000 with two "
        "budget levels takes about 1 s of CPU (benchmarks/calibration.py, 2026-11-28); --family calibrates one. "
        "Examples: ldpkit perturb --input visits.csv "
        "--column page --output day1.ldpr --mechanism OUE --epsilon 1 --seed 7;  ldpkit perturb --input items.txt "
        "--output r.csv --contract ldp:epsilon=1",
    )
    per.add_argument("--input", metavar="FILE", required=True,
                     help="the items: a CSV file with a header line (name the column with --column), or a text file "
                     "with one item per line (blank lines skipped)")
    per.add_argument("--column", metavar="NAME", default=None, help="the CSV column holding the items")
    per.add_argument("--delimiter", metavar="C", default=None,
                     help="with --column: the one character between the CSV's fields (default: ','; '\\t' or 'tab' "
                     "for a tab)")
    per.add_argument("--encoding", metavar="E", default="utf-8",
                     help="the text encoding of --input (default: utf-8; e.g. latin-1 or cp1252 for files saved by "
                     "older spreadsheet programs)")
    per.add_argument("--output", metavar="FILE", required=True,
                     help="the reports file to write: a name ending in .csv gives the plain CSV form, any other "
                     "(.ldpr by convention) the binary form; written under a temporary name and renamed when "
                     "complete; an existing file is refused unless --force")
    per.add_argument("--force", action="store_true", help="replace the --output file if it exists")
    _mechanism_flags(per, contract=True)
    per.add_argument("--contract", metavar="SPEC", default=None,
                     help="instead of --mechanism: a privacy promise to calibrate to, NOTION[:PARAM=VALUE,...] "
                     "(ldpkit.contracts.parse), e.g. ldp:epsilon=1 or fldp:epsilon=1,alpha=0.5; see below")
    per.add_argument("--matrix", metavar="FILE", default=None,
                     help="with --contract: the pairwise budgets of a context-aware promise, a CSV table whose header "
                     "line is an empty field then the labels, and one line per label: the label, then the budget of "
                     "each pair (row label, column label); the diagonal may be empty")
    per.add_argument("--family", metavar="NAME", default=None,
                     help="with --contract: calibrate this family only (one of {families}); default: every family, "
                     "keeping the one with the smallest total variance at uniform counts, n/d each "
                     "(ldpkit.calibration.best)")
    per.add_argument("--domain", metavar="FILE", default=None,
                     help="the domain: a text file of labels, one a line (item i is line i); default: the data's "
                     "distinct labels, most frequent first (a dry run only: a deployed collection fixes its domain "
                     "beforehand)")
    per.add_argument("--allow-many-labels", action="store_true",
                     help=f"without --domain: accept data with more than {MANY_LABELS} distinct labels and more "
                     "than half as many as rows (refused by default: such a column, e.g. numbers or identifiers, "
                     "is rarely a set of items)")
    per.add_argument("--seed", metavar="N", type=int, default=None,
                     help="non-negative seed of the one random generator (default: a fresh seed, printed so that the "
                     "run can be repeated)")
    per.add_argument("--data", metavar="TEXT", default=None,
                     help="one line saying what the data are, stored in the file and shown by every estimate made "
                     "from it (default: the input's name, the column and the number of rows)")
    per.add_argument("--chunk-rows", metavar="N", type=int, default=DEFAULT_CHUNK_ROWS,
                     help=f"rows read and perturbed at a time (default: {DEFAULT_CHUNK_ROWS:,}); bounds the memory")
    est = sub.add_parser(
        "estimate",
        help="estimate counts, standard errors and intervals from reports files",
        description="Add the reports of each file in turn to one aggregator (the state, if given, first) and "
        "write the estimate: per label, the count, its standard error and interval, and the same on the frequency "
        "scale. Files of another configuration (mechanism, parameters, domain) are refused, naming the file and "
        "what differs.",
    )
    est.add_argument("files", nargs="+", metavar="FILE", help="reports files written by `ldpkit perturb` "
                     "(or ldpkit.reportio), all of one configuration")
    est.add_argument("--output", metavar="CSV", default=None,
                     help="write the estimate as CSV (comment lines first: mechanism, n, data lines); default: "
                     "print the table; an existing file is refused unless --force")
    est.add_argument("--force", action="store_true",
                     help="replace the --output file if it exists (the --state file is always updated in place)")
    est.add_argument("--level", metavar="L", type=float, default=0.95,
                     help="confidence level of the normal intervals, in (0, 1) (default: 0.95)")
    est.add_argument("--state", metavar="JSON", default=None,
                     help="the aggregator's state: resumed from this file if it exists, saved to it afterwards "
                     "(reports already in the state are refused); its lock, the file JSON.lock, is held meanwhile: "
                     "another estimate on the same state waits for it")
    est.add_argument("--scheduler", metavar="ADDRESS", default=None,
                     help="read the files on the Dask cluster of this scheduler, e.g. tcp://10.0.0.5:8786, each "
                     "file to a partial aggregate on a worker (the files must be at the same absolute paths there), "
                     "then merged: the same estimate, bit for bit (needs ldpkit[cluster]; default: in this process)")
    est.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                     help="show the traceback of an error instead of its one-line message")
    acc = sub.add_parser(
        "account",
        formatter_class=_RegistryHelp,
        help="print a mechanism's privacy profile under every notion, and its declared guarantees",
        description="The privacy profile (ldpkit.accountant.privacy_profile: the tightest value under each "
        "notion, computed exactly) of the mechanism of a reports file, or of a mechanism given by name and "
        "parameters, then the guarantees the mechanism declares and whether each holds.",
    )
    acc.add_argument("--reports", metavar="FILE", default=None,
                     help="the reports file whose mechanism to account for (rebuilt from the file)")
    _mechanism_flags(acc, contract=False)
    acc.add_argument("--d", metavar="D", type=int, default=None,
                     help="with --mechanism: the number of items (labels of --budgets and --sensitive are then "
                     "0 .. D-1)")
    acc.add_argument("--domain", metavar="FILE", default=None,
                     help="with --mechanism: the domain, a text file of labels one a line (gives d and the labels of "
                     "--budgets and --sensitive)")


# --------------------------------------------------------------------------- shared checks


def _select(args: argparse.Namespace) -> list[Experiment]:
    """The experiments named on the command line (or all), each checked before any work."""
    from . import experiments

    if args.all and args.ids:
        raise _UsageError("give experiment ids or --all, not both")
    if not args.all and not args.ids:
        raise _UsageError("the following arguments are required: ID (or --all)")
    try:
        return list(experiments.list_experiments()) if args.all else [experiments.get(i) for i in args.ids]
    except ValueError as exc:
        raise _UsageError(str(exc)) from None


def _data_ready(selected: Sequence[Experiment], err: TextIO, debug: bool = False) -> None:
    """Stop before any work when a dataset the runs need would fail to load (damaged file, missing reader).

    With ``debug`` the load itself is attempted, so that its error and traceback show.
    """
    from .datasets import DATASETS, data_dir, load, plan

    root = data_dir()
    if root is not None and not root.is_dir():
        err.write(f"ldpkit: warning: LDPKIT_DATA_DIR={root} is not a directory; it is ignored (stand-ins are "
                  "used where no other copy is found)\n")
    keys = sorted({key for exp in selected for key in exp.datasets if key in DATASETS})
    for key in keys:
        planned = plan(key)
        if planned.origin == "error":
            if debug:
                load(key, source="auto")
            raise _Failure(f"{planned.name}: {planned.detail}; fix: {planned.fix}")


def _one_line(exc: BaseException) -> str:
    """A data or dependency error as one line that names the file or package and the fix."""
    from .datasets import ChecksumMismatchError, DatasetFormatError, DatasetUnavailableError, MissingReaderError

    if isinstance(exc, MissingReaderError):
        return f"{exc.file}: reading it needs {exc.package}, which is not installed; fix: {exc.fix}"
    if isinstance(exc, ChecksumMismatchError):
        return (f"{Path(exc.path).name}: wrong sha256 (expected {exc.expected[:12]}, got {exc.actual[:12]}): the "
                "file is damaged or another version; fix: delete or replace it")
    if isinstance(exc, DatasetUnavailableError):
        return (f"{exc.file}: not available ({'; '.join(f'{p}: {r}' for p, r in exc.attempts)}); fix: put it in "
                "LDPKIT_DATA_DIR, or allow downloads (unset LDPKIT_OFFLINE)")
    if isinstance(exc, DatasetFormatError):
        return f"{exc}; fix: replace the file with an undamaged copy"
    if isinstance(exc, ImportError):
        name = getattr(exc, "name", None) or "a package"
        return f"{exc} (missing: {name}); fix: pip install the package, or the ldpkit extra that names it"
    return " ".join(str(exc).split())


def _data_errors() -> tuple[type[BaseException], ...]:
    from .datasets import (ChecksumMismatchError, DatasetFormatError, DatasetUnavailableError,
                           StatisticsMismatchError)

    return (ChecksumMismatchError, DatasetFormatError, DatasetUnavailableError, StatisticsMismatchError,
            ImportError)


@contextlib.contextmanager
def _as_failures(debug: bool) -> Iterator[None]:
    """Turn a data or dependency error raised inside into :class:`_Failure` (unless ``debug``)."""
    try:
        yield
    except _data_errors() as exc:
        if debug:
            raise
        raise _Failure(_one_line(exc)) from None


def _data_line(inputs: Any) -> str:
    return "; ".join(ident.describe() for ident in inputs.values()) or "no dataset (everything generated)"


# --------------------------------------------------------------------------- commands


def _cmd_list(out: TextIO) -> int:
    from . import experiments
    from .datasets import DATASETS, plan
    from .experiments.check import reference_seconds

    exps = experiments.list_experiments()
    cache: dict[str, str] = {}

    def data(exp: Experiment) -> str:
        names = []
        for key in exp.datasets:
            if key not in DATASETS:
                names.append(key.removeprefix("synthetic.").replace("_", " ") + " (synthetic)")
                continue
            if key not in cache:
                planned = plan(key)
                cache[key] = {"download": f"{planned.name} (download)", "error": f"{planned.name} (error)"}.get(
                    planned.origin, planned.label)
            names.append(cache[key])
        return ", ".join(names) or "-"

    def seconds(exp: Experiment) -> str:
        value = reference_seconds(exp.id)
        return "?" if value is None else f"{value:.0f} s" if value >= 1 else "<1 s"

    rows = [(e.id, e.kind, f"{e.paper} {e.item}", seconds(e), data(e), e.title) for e in exps]
    header = ("ID", "KIND", "PAPER ITEM", "TIME", "DATA HERE", "TITLE")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
    for row in [header, *rows]:
        out.write("  ".join(f"{cell:<{w}}" for cell, w in zip(row[:5], widths)) + f"  {row[5]}\n")
    out.write("TIME: wall time of the reference run (2 cores); DATA HERE: what `ldpkit reproduce` would use on this "
              "machine now (see `ldpkit datasets`)\n")
    return 0


def _cmd_reproduce(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from . import experiments

    # every check before any work
    selected = _select(args)
    changes: dict[str, object] = {name: value for name in ("seed", "repeats", "scale", "jobs")
                                  if (value := getattr(args, name)) is not None}
    if args.scheduler is not None:
        changes = {"jobs": -1, **changes, "backend": "dask"}
    try:
        configs = [exp.defaults.replace(progress=True, **changes) for exp in selected]
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    directory = Path(args.out)
    if directory.exists() and not directory.is_dir():
        raise _UsageError(f"--out must be a directory, got the file {args.out!r}")
    with _as_failures(args.debug):
        _data_ready(selected, err, args.debug)
    command = " ".join(["ldpkit", *args.argv])
    with contextlib.ExitStack() as stack:
        if args.scheduler is not None:
            stack.enter_context(_connect(args.scheduler))
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _UsageError(f"--out: cannot create directory {args.out!r} ({exc.strerror})") from None
        where = f", scheduler={args.scheduler}" if args.scheduler is not None else ""
        for i, (exp, config) in enumerate(zip(selected, configs), start=1):
            err.write(f"reproducing {exp.id} ({i}/{len(selected)}; {exp.paper}, {exp.item}): repeats={config.repeats}, "
                      f"seed={config.seed}, scale={config.scale:g}, jobs={config.jobs}{where}\n")
            err.flush()
            with _as_failures(args.debug):
                result = experiments.run(exp, config)
            out.writelines(f"{path}\n" for path in result.save(directory, command=command))
            out.write(f"{exp.id} data: {_data_line(result.data.inputs)}\n")
            if result.any_standin:
                out.write(f"stand-in: {', '.join(result.standins)} (real data not found; see `ldpkit datasets`)\n")
    return 0


def _cmd_write_references(args: argparse.Namespace, selected: list[Experiment], err: TextIO) -> int:
    from .experiments.check import write_references

    if args.jobs is not None or args.progress:
        raise _UsageError("--write-references runs each experiment at its defaults (one job, progress shown): "
                          "--jobs and --progress do not apply")
    if args.why is None:
        raise _UsageError("--write-references needs --why TEXT: the reason, stored in each reference (and to be said "
                          "in CHANGELOG.md)")
    if not args.why.strip() or "\n" in args.why:
        raise _UsageError(f"--why must be one non-empty line, got {args.why!r}")
    with _as_failures(args.debug):
        _data_ready(selected, err, args.debug)
    try:  # a refused data change (nothing written) or a failed run
        write_references([exp.id for exp in selected], args.why, allow_data_change=args.allow_data_change, err=err)
    except ValueError as exc:
        raise _Failure(str(exc)) from None
    return 0


def _cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .experiments import RunConfig
    from .experiments.check import check

    selected = _select(args)
    if args.write_references:
        return _cmd_write_references(args, selected, err)
    for flag, given in (("--why", args.why is not None), ("--allow-data-change", args.allow_data_change)):
        if given:
            raise _UsageError(f"{flag} only goes with --write-references")
    jobs = 1 if args.jobs is None else args.jobs
    try:
        RunConfig(jobs=jobs)
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    with _as_failures(args.debug):
        _data_ready(selected, err, args.debug)
    width = max(len(exp.id) for exp in selected)
    counts: dict[str, int] = {}
    for i, exp in enumerate(selected, start=1):
        err.write(f"checking {exp.id} ({i}/{len(selected)}; {exp.paper}, {exp.item}) ...\n")
        err.flush()
        with _as_failures(args.debug):
            try:
                report = check(exp, jobs=jobs, progress=True if args.progress else None)
            except FileNotFoundError as exc:
                raise _Failure(f"{exc}; fix: reinstall ldpkit (the references are package data)") from None
        out.write(report.line(width) + "\n")
        out.flush()
        counts[report.status] = counts.get(report.status, 0) + 1
    summary = ", ".join(f"{counts[s]} {s}" for s in ("reproduced", "differs", "not comparable") if s in counts)
    out.write(f"{len(selected)} checked: {summary}\n")
    return FAILURE if counts.get("differs") else 0


def _connect(address: str) -> Any:
    """A ``distributed.Client`` of the scheduler at ``address`` (a context manager); a usage error if impossible."""
    try:
        from distributed import Client
    except ImportError:
        raise _Failure("--scheduler needs dask.distributed, which is not installed; fix: "
                       "pip install 'ldpkit[cluster]'") from None
    try:
        return Client(address, timeout=10)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise _UsageError(f"--scheduler: cannot connect to {address!r} ({exc})") from None


def _cmd_datasets(out: TextIO) -> int:
    from .datasets import DATASETS, cache_dir, data_dir, is_offline, plan

    root = data_dir()
    state = "not set" if root is None else f"{root}" + ("" if root.is_dir() else " (NOT A DIRECTORY: ignored)")
    out.write(f"LDPKIT_DATA_DIR: {state}\n")
    out.write(f"user cache: {cache_dir()}\n")
    out.write(f"downloads: {'off (LDPKIT_OFFLINE=1)' if is_offline() else 'on'}\n")
    rows = []
    for key in DATASETS:
        planned = plan(key)
        detail = planned.detail + (f"; fix: {planned.fix}" if planned.fix else "")
        shown = {"prefix": "prefix"}.get(planned.origin, planned.origin)
        rows.append((key, planned.name, shown, detail))
    w_key = max(len(r[0]) for r in rows)
    w_name = max(len(r[1]) for r in rows)
    w_status = max(len(r[2]) for r in rows)
    out.writelines(f"{key:<{w_key}}  {name:<{w_name}}  {status:<{w_status}}  {detail}\n"
                   for key, name, status, detail in rows)
    out.write("status: real = the file is used; download = fetched on first use; prefix = stand-in rebuilt from "
              "the real prefix; stand-in = synthetic, calibrated; error = loading fails (see the fix)\n")
    out.write("synthetic.*: generated from a seed, always available\n")
    return 0


# --------------------------------------------------------------------------- a collection on your own data


@contextlib.contextmanager
def _refused(debug: bool, where: str = "") -> Iterator[None]:
    """Turn a refusal raised inside (``ValueError``, such as a kit's ``ReportFileError``, or ``OSError``) into a
    one-line :class:`_UsageError` prefixed with ``where`` (unless ``debug``, which shows the traceback)."""
    try:
        yield
    except (ValueError, OSError) as exc:
        if debug:
            raise
        if isinstance(exc, OSError) and exc.strerror and exc.filename:
            text = f"{exc.filename}: {exc.strerror}"
        else:
            text = " ".join(str(exc).split()) or type(exc).__name__
        raise _UsageError(f"{where}: {text}" if where else text) from None


def _affordable(d: int, what: str) -> None:
    """Refuse a domain above the domain limit (``LDPKIT_MAX_DOMAIN``) before it is built."""
    from ._validation import check_domain_limit

    try:
        check_domain_limit(d, what)
    except ValueError as exc:
        raise _UsageError(str(exc)) from None


def _shown(labels: Sequence[str], limit: int = 5) -> str:
    """Labels as a short list for a message."""
    more = f" and {len(labels) - limit} more" if len(labels) > limit else ""
    return ", ".join(repr(lab) for lab in labels[:limit]) + more


def _existing_file(path: str, flag: str) -> str:
    if not Path(path).exists():
        raise _UsageError(f"{flag} {path}: no such file")
    if not Path(path).is_file():
        raise _UsageError(f"{flag} {path}: not a file")
    return path


def _writable(path: str, flag: str) -> str:
    """A path a file can be written to: not a directory, in an existing directory."""
    target = Path(path)
    if target.is_dir():
        raise _UsageError(f"{flag} {path}: is a directory, not a file name")
    parent = target.parent
    if not parent.is_dir():
        raise _UsageError(f"{flag} {path}: the directory {str(parent)!r} does not exist")
    return path


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one file: the same file on disk (hard and symbolic links too), or one resolved path."""
    import os

    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def _not_an_input(path: str, flag: str, inputs: Sequence[tuple[str, Optional[str]]]) -> None:
    """Refuse an output that is one of the command's inputs: ``(what it is, path)`` pairs (``None`` paths skipped),
    compared as files on disk (hard and symbolic links included)."""
    for what, given in inputs:
        if given is not None and Path(given).is_file() and _same_file(path, given):
            same = "" if given == path else f" ({given})"
            raise _UsageError(f"{flag} {path}: it is {what}{same}; an output never replaces one of the command's "
                              "inputs")


def _new_file(path: str, flag: str, force: bool) -> str:
    """:func:`_writable`, and not an existing file unless ``force`` (``--force``)."""
    _writable(path, flag)
    if Path(path).exists() and not force:
        raise _UsageError(f"{flag} {path}: the file exists; pass --force to replace it, or choose another name")
    return path


def _delimiter(text: Optional[str]) -> str:
    """``--delimiter``: one character (``\\t`` or ``tab`` for a tab); ``,`` when not given."""
    if text is None:
        return ","
    value = {"\\t": "\t", "tab": "\t"}.get(text.lower(), text)
    if len(value) != 1 or value in "\"\r\n":
        raise _UsageError(f"--delimiter {text!r}: must be one character other than a quote or a line break, "
                          "e.g. ';' or '\\t' (a tab)")
    return value


def _encoding(text: str) -> str:
    """``--encoding``: a codec Python knows, in its canonical name."""
    import codecs

    try:
        return codecs.lookup(text).name
    except LookupError:
        raise _UsageError(f"--encoding {text!r}: unknown encoding; e.g. utf-8, latin-1, cp1252") from None


def _shown_delimiter(delimiter: str) -> str:
    return "'\\t'" if delimiter == "\t" else repr(delimiter)


def _undecodable(path: str, encoding: str, exc: UnicodeDecodeError) -> _UsageError:
    """A decoding failure of the input as one line: where (line and byte, found again) and the flag that fixes it."""
    where, reason = "", exc.reason
    try:  # the error's position is in pandas' buffer: find the first line that does not decode
        with open(path, "rb") as fh:
            for line_no, raw in enumerate(fh, start=1):
                try:
                    raw.decode(encoding)
                except UnicodeDecodeError as line_exc:
                    bad = raw[line_exc.start:line_exc.end]
                    where = f" at line {line_no} (byte {' '.join(f'0x{b:02x}' for b in bad)})"
                    reason = line_exc.reason
                    break
    except OSError:
        pass
    other = "cp1252" if encoding == "latin-1" else "latin-1"
    return _UsageError(f"--input {path}: not {encoding} text{where}: {reason}; pass its encoding with "
                       f"--encoding, e.g. --encoding {other}")


def _csv_columns(path: str, delimiter: str, encoding: str, debug: bool) -> list[str]:
    """The names of the CSV's header line."""
    import pandas as pd

    with _refused(debug, f"--input {path}"):
        try:
            return [str(c) for c in pd.read_csv(path, nrows=0, sep=delimiter, encoding=encoding).columns]
        except UnicodeDecodeError as exc:
            if debug:
                raise
            raise _undecodable(path, encoding, exc) from None


def _missing_column(column: str, columns: list[str], path: str, delimiter: str) -> _UsageError:
    """``--column`` not in the header: its names, and the ``--delimiter`` the header seems to use."""
    text = f"--column {column!r}: not a column of {path} (its columns: {_shown(columns, 8)})"
    header = delimiter.join(columns)
    for other in _OTHER_DELIMITERS:
        if other != delimiter and other in header:
            names = header.split(other)
            found = "; with it, the column is there" if column in names else ""
            text += (f"; the header has {_shown_delimiter(other)} between names: if that separates the fields, pass "
                     f"--delimiter {_shown_delimiter(other)}{found}")
            break
    return _UsageError(text)


def _read_domain(path: str, debug: bool, flag: str = "--domain") -> Any:
    """``--domain FILE``: the labels of a text file, one a line (:func:`ldpkit.domain.read_labels`)."""
    from .domain import Domain, read_labels

    _existing_file(path, flag)
    with _refused(debug, f"{flag} {path}"):
        labels = read_labels(path)
    with _refused(debug, f"{flag} {path} (label i is line i + 1)"):
        return Domain(labels)


# --------------------------------------------------------------------------- a family by name, a promise by text


def _family_data(args: argparse.Namespace) -> dict[str, Any]:
    """The per-label data of the flags given, read before the domain is known (files checked now).

    ``budgets``: one number or the ``label -> budget`` lines of a CSV file; ``sensitive``: labels;
    ``prior``: ``label -> probability``; ``matrix``: ``row label -> column label -> budget``
    (:mod:`ldpkit.domain`'s readers).  Each is put in item order by :func:`_in_domain`.
    """
    from .domain import read_labels, read_matrix, read_values

    debug = args.debug
    data: dict[str, Any] = {}
    if args.budgets is not None:
        try:
            data["budgets"] = float(args.budgets)
        except ValueError:
            if not Path(args.budgets).is_file():
                raise _UsageError(f"--budgets {args.budgets!r}: neither a number nor an existing file") from None
            with _refused(debug, "--budgets"):
                data["budgets"] = read_values(args.budgets, "budget")
    if args.sensitive is not None:
        if Path(args.sensitive).is_file():
            with _refused(debug, "--sensitive"):
                labels = [lab for lab in read_labels(args.sensitive) if lab]
        else:
            labels = [lab for lab in args.sensitive.split(",") if lab]
        if not labels:
            raise _UsageError(f"--sensitive {args.sensitive!r}: no labels")
        data["sensitive"] = labels
    if args.prior is not None:
        _existing_file(args.prior, "--prior")
        with _refused(debug, "--prior"):
            data["prior"] = read_values(args.prior, "probability")
    if getattr(args, "matrix", None) is not None:
        _existing_file(args.matrix, "--matrix")
        with _refused(debug, "--matrix"):
            data["matrix"] = read_matrix(args.matrix, "budget")
    return data


def _in_domain(data: dict[str, Any], domain: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The data of :func:`_family_data` in item order of ``domain`` (a label outside it, or one missing, refused)."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        with _refused(args.debug, f"--{key} {getattr(args, key)}"):
            if key == "sensitive":
                out[key] = domain.encode(value)
            elif key == "matrix":
                out[key] = domain.matrix(value, "budget")
            else:
                out[key] = domain.vector(value, "budget" if key == "budgets" else "probability")
    return out


def _takes(family: Any, param: str) -> bool:
    """Whether ``--mechanism`` reads flag ``--param`` for ``family``.

    A family that reads per-item budgets (context ``budgets``) is built at ``t = 1``, its
    budgets as given; every other at ``t = --epsilon``.  A context key is read from its flag.
    """
    if param == "epsilon":
        return "budgets" not in family.context
    return param in family.context


def _resolve_family(name: str, flag: str) -> Any:
    """The registered family called ``name`` or with that alias (:func:`ldpkit.family.get_family`), ignoring case."""
    from .family import families, get_family

    wanted = name.strip()
    spellings = [n for f in families() for n in (f.name, *f.aliases)]
    if wanted in spellings:
        return get_family(wanted)
    folded = [n for n in spellings if n.lower() == wanted.lower()]
    if folded:
        return get_family(folded[0])
    named = ", ".join(n for f in families(budget=True, inputs="items") for n in (f.name, *f.aliases))
    raise _UsageError(f"{flag} {name!r}: unknown; choose one of {named}")


def _budget_family(fam: Any, flag: str) -> Any:
    """``fam`` if it can be built at a budget over items; else the reason, as a usage error."""
    if fam.at_budget is None:
        raise _UsageError(f"{flag} {fam.name}: the {fam.name} family ({fam.description}) is not indexed by a budget, "
                          "so the command line cannot build it; name a family with a budget (see --help)")
    if fam.inputs != "items":
        raise _UsageError(f"{flag} {fam.name}: the {fam.name} family ({fam.description}) perturbs item sets, and "
                          "the command line reads one item per row")
    return fam


def _named_family(args: argparse.Namespace) -> Any:
    """``--mechanism NAME`` (and ``--model M``) resolved through the family registry, its flags checked.

    A flag the family does not read is refused, naming the families that read it; ``--epsilon``
    and the context keys of :data:`_REQUIRED_CONTEXT` are needed where the family reads them.
    """
    from .family import families

    fam = _resolve_family(args.mechanism, "--mechanism")
    if args.model is not None:
        target = f"{args.mechanism.strip()}-{args.model.strip()}"
        found = [f for f in families() if f.name.lower() == target.lower()]
        if not found:
            base = args.mechanism.strip().lower() + "-"
            models = [f.name[len(base):] for f in families(budget=True, inputs="items") if f.name.lower().startswith(base)]
            has = f"its models: {', '.join(models)}" if models else f"no family is called {args.mechanism.strip()}-M"
            raise _UsageError(f"--model {args.model}: there is no family {target} ({has}; --mechanism NAME --model M "
                              "is --mechanism NAME-M)")
        fam = found[0]
    _budget_family(fam, "--mechanism")
    named = families(budget=True, inputs="items")
    for param in ("epsilon", *_CONTEXT_FLAGS):
        given = getattr(args, param) is not None
        takes = _takes(fam, param)
        if given and not takes:
            users = [f.name for f in named if _takes(f, param)]
            which = f"it is a parameter of {', '.join(users)}" if users else "no registered family reads it"
            if param == "epsilon":  # a family with per-item budgets is built at them
                which = f"{fam.name} is built at its per-item --budgets; --epsilon is the budget of {', '.join(users)}"
            raise _UsageError(f"--{param} does not apply to {fam.name} ({which})")
        if not given and takes and param in ("epsilon", *_REQUIRED_CONTEXT):
            raise _UsageError(f"--mechanism {fam.name} needs --{param}")
    unread = [key for key in fam.context if key not in _CONTEXT_FLAGS]
    if unread:  # pragma: no cover - every context key has its flag (tests/test_cli_registry.py)
        raise _UsageError(f"--mechanism {fam.name}: it reads {', '.join(unread)}, which no flag gives")
    return fam


def _member(fam: Any, args: argparse.Namespace, domain: Any, data: dict[str, Any]) -> Mechanism:
    """The member of ``fam`` over ``d = len(domain)`` with the flags' context (its constructor's refusal: a usage error)."""
    context = _in_domain({k: v for k, v in data.items() if k in fam.context}, domain, args)
    for key in fam.context:
        if key not in context and getattr(args, key, None) is not None:
            context[key] = getattr(args, key)
    t = args.epsilon if _takes(fam, "epsilon") else 1.0
    with _refused(args.debug, f"--mechanism {args.mechanism}"):
        return fam.member(len(domain), t, **context)


def _stored(mech: Mechanism, args: argparse.Namespace) -> Any:
    """``mech``, if a reports file can store it (refused before anything is written otherwise)."""
    if not _storable(mech):
        raise _UsageError(f"--mechanism {args.mechanism}: {mech.provenance.describe()} cannot be stored in a reports "
                          "file (its class does not state its arguments, or no registered family declares it)")
    return mech


def _contract_flags(args: argparse.Namespace) -> Any:
    """The flags of ``--contract`` checked before any work; the ``--family`` (a :class:`~ldpkit.family.Family`) or None."""
    if args.epsilon is not None:
        raise _UsageError("--epsilon does not apply to --contract (the promise's epsilon is in its text, e.g. "
                          "ldp:epsilon=1)")
    for param in ("rule", "alpha", "g", "model"):
        if getattr(args, param) is not None:
            where = ("calibration chooses the family's parameters" if param in ("g", "model") else
                     "a promise's own parameters are in its text, e.g. id-ldp:rule=average or fldp:epsilon=1,alpha=0.5")
            raise _UsageError(f"--{param} does not apply to --contract ({where})")
    if args.family is None:
        return None
    fam = _resolve_family(args.family, "--family")
    if fam.at_budget is None:
        raise _UsageError(f"--family {fam.name}: the {fam.name} family ({fam.description}) is not indexed by a budget: "
                          "there is nothing to calibrate")
    return fam


def _promise(args: argparse.Namespace, domain: Any, data: dict[str, Any]) -> Any:
    """``--contract SPEC`` on ``domain`` with the data flags (:func:`ldpkit.contracts.parse`)."""
    from . import contracts

    values = _in_domain(data, domain, args)
    with _refused(args.debug, f"--contract {args.contract}"):
        return contracts.parse(args.contract, len(domain), hints=_CONTRACT_HINTS, **values)


def _promise_text(contract: Any) -> str:
    """``contract NAME (epsilon=1, alpha=0.5)``: the promise and the numbers of its text, for messages."""
    numbers = [f"{k}={v:g}" for k, v in contract.params.items() if isinstance(v, float)]
    return f"contract {contract.name}" + (f" ({', '.join(numbers)})" if numbers else "")


def _storable(mech: Mechanism) -> bool:
    """Whether a reports file can store the mechanism's arguments (so that the file alone suffices to estimate)."""
    from .reportio import mechanism_config

    try:
        mechanism_config(mech)
    except (NotImplementedError, ValueError):
        return False
    return True


def _calibrated(contract: Any, args: argparse.Namespace, family: Any, n: int, err: TextIO) -> Any:
    """The mechanism calibrated to ``contract``: of ``family``, or :func:`ldpkit.calibration.best` at uniform counts."""
    import numpy as np

    from .calibration import best, calibrate
    from .family import families

    what = _promise_text(contract)
    uniform = np.full(contract.d, n / contract.d)
    if family is not None:
        with _refused(args.debug, f"--family {family.name}"):
            cal = calibrate(family, contract)
        if not cal.satisfiable:
            raise _UsageError(f"--family {family.name}: no member keeps {what}: {cal.reason}")
        member = cal.kept()
        if not _storable(member):
            raise _UsageError(f"--family {family.name}: its member cannot be stored in a reports file (its class does "
                              "not state its arguments)")
        err.write(f"ldpkit perturb: {what}: {family.name} calibrated to {member.provenance.describe()} "
                  f"({cal.method}, parameter {cal.parameter:.6g}); total variance at uniform counts "
                  f"{cal.total_variance(uniform):.4g} for n = {n}\n")
        return member
    err.write(f"ldpkit perturb: {what}: calibrating {len(families(budget=True))} families (--family NAME calibrates "
              "one) ...\n")
    err.flush()
    with _refused(args.debug, f"--contract {args.contract}"):
        cal = best(contract, counts=uniform)
    member = cal.kept()
    if not _storable(member):
        raise _UsageError(f"--contract {args.contract}: {cal.family.name} keeps it with the smallest total variance, "
                          "but its member cannot be stored in a reports file; name another with --family")
    err.write(f"ldpkit perturb: {what}: chose {cal.family.name}, {member.provenance.describe()} ({cal.method}, "
              f"parameter {cal.parameter:.6g}): the smallest total variance at uniform counts "
              f"({cal.total_variance(uniform):.4g} for n = {n}) of the families that keep it\n")
    return member


def _read_chunks(path: str, column: Optional[str], chunk_rows: int, delimiter: str = ",",
                 encoding: str = "utf-8") -> Iterator[Any]:
    """The items of the input as object arrays of strings, ``chunk_rows`` at a time (pandas)."""
    import csv

    import pandas as pd

    options: dict[str, Any] = dict(dtype=str, keep_default_na=False, na_filter=False, chunksize=chunk_rows,
                                   encoding=encoding)
    if column is None:  # one item per line: no header, no quoting, no separator (a unit separator never occurs)
        reader = pd.read_csv(path, header=None, names=["item"], sep="\x1f", quoting=csv.QUOTE_NONE, **options)
    else:
        reader = pd.read_csv(path, usecols=[column], sep=delimiter, **options)
    with reader:
        for chunk in reader:
            yield chunk.iloc[:, 0].to_numpy(dtype=object)


def _progress(total: Optional[int], desc: str, err: TextIO, show: bool) -> Any:
    """A tqdm bar on ``err`` (shown only when ``show`` and ``err`` is a terminal)."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="rows", unit_scale=True, file=err, leave=False,
                disable=None if show else True)


def _scan(path: str, column: Optional[str], chunk_rows: int, err: TextIO, debug: bool, delimiter: str = ",",
          encoding: str = "utf-8") -> tuple[int, dict[str, int]]:
    """First pass over the input: the number of rows and each distinct label's count, in first-seen order."""
    import numpy as np
    import pandas as pd

    counts: dict[str, int] = {}
    rows = 0
    where = f"--input {path}" + (f" (column {column!r})" if column is not None else "")
    bar = None
    with _refused(debug, where):
        try:
            for pos, values in enumerate(_read_chunks(path, column, chunk_rows, delimiter, encoding)):
                if pos == 1:  # more than one chunk: show the reading
                    bar = _progress(None, f"checking {Path(path).name}", err, True)
                    bar.update(rows)
                codes, uniques = pd.factorize(values)
                for label, k in zip(uniques.tolist(), np.bincount(codes, minlength=len(uniques)).tolist()):
                    counts[label] = counts.get(label, 0) + k
                rows += len(values)
                if bar is not None:
                    bar.update(len(values))
        except pd.errors.EmptyDataError:
            raise _UsageError(f"{where}: the file is empty") from None
        except UnicodeDecodeError as exc:
            if debug:
                raise
            raise _undecodable(path, encoding, exc) from None
        finally:
            if bar is not None:
                bar.close()
    if rows == 0:
        raise _UsageError(f"{where}: no items")
    if "" in counts:
        raise _UsageError(f"{where}: {counts['']} row(s) have an empty item; every row needs a label")
    return rows, counts


def _cmd_perturb(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import numpy as np
    import pandas as pd

    from .domain import Domain
    from ._rng import as_generator
    from .reportio import ReportWriter

    # 1. the flags
    if (args.mechanism is None) == (args.contract is None):
        raise _UsageError("give --mechanism NAME (with its parameters) or --contract SPEC, exactly one")
    if args.family is not None and args.contract is None:
        raise _UsageError("--family applies with --contract only")
    if args.matrix is not None and args.contract is None:
        raise _UsageError("--matrix applies with --contract only (the pairwise budgets of a context-aware promise)")
    family = calibrated = None
    if args.mechanism is not None:
        family = _named_family(args)
    else:
        calibrated = _contract_flags(args)
    if args.chunk_rows < 1:
        raise _UsageError(f"--chunk-rows must be >= 1, got {args.chunk_rows}")
    if args.seed is not None and args.seed < 0:
        raise _UsageError(f"--seed must be a non-negative integer, got {args.seed}")
    if args.data is not None and ("\n" in args.data or "\r" in args.data):
        raise _UsageError("--data must be one line of text")
    if args.delimiter is not None and args.column is None:
        raise _UsageError("--delimiter applies to a CSV input, with --column (a text file has one item per line)")
    if args.allow_many_labels and args.domain is not None:
        raise _UsageError("--allow-many-labels applies without --domain only (a given domain is used as it is)")
    delimiter = _delimiter(args.delimiter)
    encoding = _encoding(args.encoding)
    # 2. the files
    path = _existing_file(args.input, "--input")
    if args.column is None and path.lower().endswith(".csv"):
        raise _UsageError(f"--input {path}: a CSV file needs --column NAME (without it the input is a text file with "
                          "one item per line)")
    if args.column is not None:
        columns = _csv_columns(path, delimiter, encoding, args.debug)
        if args.column not in columns:
            raise _missing_column(args.column, columns, path, delimiter)
    _writable(args.output, "--output")
    read = ("domain", "budgets", "sensitive", "prior", "matrix")
    _not_an_input(args.output, "--output",
                  [("the --input file", path), *((f"the --{flag} file", getattr(args, flag, None)) for flag in read)])
    _new_file(args.output, "--output", args.force)
    given_domain = None if args.domain is None else _read_domain(args.domain, args.debug)
    data = _family_data(args)
    mech = contract = None
    if given_domain is not None:  # the domain is known: the mechanism or the promise is checked now
        _affordable(len(given_domain), f"--domain {args.domain}")
        if family is not None:
            mech = _stored(_member(family, args, given_domain, data), args)
        else:
            contract = _promise(args, given_domain, data)
    # 3. the first pass: every label checked, the rows counted
    rows, counts = _scan(path, args.column, args.chunk_rows, err, args.debug, delimiter, encoding)
    column = f"column {args.column!r}" if args.column is not None else "one item per line"
    if given_domain is not None:
        domain = given_domain
        try:
            domain.encode(list(counts))
        except ValueError as exc:
            bad = sum(k for label, k in counts.items() if label not in domain)
            raise _UsageError(f"--input {path} ({column}): {exc}, in {bad} of its {rows} rows; add them to "
                              f"--domain {args.domain} or drop those rows") from None
    else:
        from collections import Counter

        if len(counts) > max(MANY_LABELS, rows / 2) and not args.allow_many_labels:
            raise _UsageError(f"--input {path} ({column}): {len(counts):,} distinct labels in {rows:,} rows (more "
                              f"than half the rows, and more than {MANY_LABELS}), such as {_shown(list(counts), 3)}: "
                              "a numeric or identifier column rather than items; pass --domain FILE with the "
                              "collection's labels, or --allow-many-labels to use every distinct value as a label")
        # the same domain as from the raw values: same counts, same first-seen order
        _affordable(len(counts), f"--input {path} ({column}): its distinct labels")
        with _refused(args.debug, f"--input {path} ({column})"):
            domain = Domain.from_values(Counter(counts).elements(), order="frequency")
        err.write(f"ldpkit perturb: no --domain: the domain is the {len(domain)} distinct labels of the data, most "
                  "frequent first (a dry run: a deployed collection fixes its domain beforehand; pass --domain FILE)\n")
    # 4. the mechanism (built above when the domain was given; a promise is calibrated now)
    if mech is None and family is not None:
        mech = _stored(_member(family, args, domain, data), args)
    elif mech is None:
        if contract is None:
            contract = _promise(args, domain, data)
        mech = _calibrated(contract, args, calibrated, rows, err)
    line = args.data if args.data is not None else f"{Path(path).name}, {column}, {rows} rows"
    seed = args.seed
    if seed is None:
        seed = int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
        err.write(f"ldpkit perturb: no --seed: drew the seed {seed} (repeat the run with --seed {seed})\n")
    rng = as_generator(seed)  # the one normaliser of seeds
    # 5. the second pass: perturb chunk by chunk with the one generator, write block by block
    with _refused(args.debug, f"--output {args.output}"):
        with ReportWriter(args.output, mech, domain=domain, data=line) as writer:
            bar = _progress(rows, f"perturbing {Path(path).name}", err, rows > args.chunk_rows)
            try:
                for values in _read_chunks(path, args.column, args.chunk_rows, delimiter, encoding):
                    codes, uniques = pd.factorize(values)
                    items = domain.encode(uniques)[codes]
                    writer.write(mech.perturb(items, rng=rng))
                    bar.update(len(values))
            finally:
                bar.close()
    out.write(f"{args.output}: {writer.n:,} reports of {mech.provenance.describe()} over {len(domain)} labels, "
              f"seed {seed}\n")
    return 0


def _cmd_estimate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .aggregation import state_lock

    if not 0.0 < args.level < 1.0:
        raise _UsageError(f"--level must be a confidence level in (0, 1), got {args.level:g}")
    for path in args.files:
        _existing_file(path, "report file")
    import os

    seen: dict[tuple[int, int], str] = {}
    for path in args.files:
        on_disk = os.stat(path)  # one file on disk, however it is named (links included)
        key = (on_disk.st_dev, on_disk.st_ino)
        if key in seen:
            also = "" if seen[key] == path else f" (as {seen[key]!r} too)"
            raise _UsageError(f"{path}: given twice{also}: its reports would be counted twice")
        seen[key] = path
    if args.force and args.output is None:
        raise _UsageError("--force applies with --output only (the --state file is always updated in place)")
    inputs = [("one of the report files read", path) for path in args.files]
    if args.state is not None:
        _not_an_input(args.state, "--state", inputs)
    if args.output is not None:
        _not_an_input(args.output, "--output", inputs)
        if args.state is not None and _same_file(args.output, args.state):
            raise _UsageError(f"--output {args.output}: it is the --state file")
        _new_file(args.output, "--output", args.force)
    with contextlib.ExitStack() as held:
        args.client = None
        if args.scheduler is not None:  # connected before any work: an unreachable scheduler is a usage error
            args.client = held.enter_context(_connect(args.scheduler))
        if args.state is not None:
            _writable(args.state, "--state")

            def waiting() -> None:
                err.write(f"ldpkit estimate: --state {args.state}: another process holds its lock; waiting for it\n")
                err.flush()

            with _refused(args.debug, f"--state {args.state}"):
                held.enter_context(state_lock(args.state, waiting=waiting))
        status = _estimate_locked(args, out, err)
    return status


def _estimate_locked(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``estimate`` once the state's lock is held: load, add every file, write the estimate, save the state."""
    from .aggregation import Aggregator
    from .reportio import BLOCK_REPORTS, open_reports

    # every file opened first (header and end record: a truncated file is refused), then checked against the
    # aggregator's mechanism (a file of another configuration is refused, naming it and what differs)
    agg = None
    if args.state is not None and Path(args.state).exists():
        with _refused(args.debug, f"--state {args.state}"):
            agg = Aggregator.load(args.state)
    earlier = 0 if agg is None else agg.n
    sizes = []
    for path in args.files:
        with _refused(args.debug):
            f = open_reports(path, None if agg is None else agg.mechanism)
        if agg is None:
            agg = Aggregator(f.mechanism, domain=f.domain)
        sizes.append(f.n)
    assert agg is not None
    if args.client is not None:
        from .aggregation import aggregate_files

        with _refused(args.debug):  # each file to a part on a worker, the parts added here in the order given
            aggregate_files(args.files, scheduler=args.client, aggregator=agg)
    for path, size in zip(args.files if args.client is None else [], sizes):
        with _refused(args.debug):
            agg.add_file(path, progress=size > BLOCK_REPORTS and err.isatty())
    with _refused(args.debug):
        est = agg.estimate()
    if args.output is not None:
        with _refused(args.debug, f"--output {args.output}"):
            est.to_csv(args.output, args.level)
    else:
        out.write(est.to_text(args.level) + "\n")
    if args.state is not None:
        with _refused(args.debug, f"--state {args.state}"):
            agg.save(args.state)
    origin = (f" ({earlier:,} from the state {args.state}, {est.n - earlier:,} from {len(args.files)} file(s))" if earlier
              else f" from {len(args.files)} file(s)")
    parts = [f"{est.mechanism}: n={est.n:,} reports{origin}", f"{args.level:g} intervals"]
    if args.scheduler is not None:
        parts.append(f"read on the Dask cluster at {args.scheduler}")
    if args.output is not None:
        parts.append(f"written to {args.output}")
    if args.state is not None:
        parts.append(f"state saved to {args.state}")
    out.write(", ".join(parts) + "\n")
    return 0


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.10g}"
    return str(value)


def _cmd_account(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .accountant import privacy_profile
    from .domain import Domain
    from .reportio import open_reports

    if (args.reports is None) == (args.mechanism is None):
        raise _UsageError("give --reports FILE or --mechanism NAME (with --d or --domain and its parameters), "
                          "exactly one")
    if args.reports is not None:
        extra = [f"--{p}" for p in (*_MECHANISM_PARAMS, "d", "domain") if getattr(args, p) is not None]
        if extra:
            raise _UsageError(f"{', '.join(extra)}: not with --reports (the file states its mechanism)")
        _existing_file(args.reports, "--reports")
        with _refused(args.debug):
            f = open_reports(args.reports)
        mech, domain, source = f.mechanism, f.domain, f" (the mechanism of {args.reports})"
    else:
        family = _named_family(args)
        if args.d is None and args.domain is None:
            raise _UsageError(f"--mechanism {args.mechanism} needs --d D or --domain FILE")
        domain = None if args.domain is None else _read_domain(args.domain, args.debug)
        if domain is not None and args.d is not None and args.d != len(domain):
            raise _UsageError(f"--d {args.d} but --domain {args.domain} has {len(domain)} labels")
        if domain is None:
            if args.d < 2:
                raise _UsageError(f"--d must be at least 2, got {args.d}")
            _affordable(args.d, f"--d {args.d}")
            domain = Domain.integers(args.d)
        mech, source = _member(family, args, domain, _family_data(args)), ""
    with _refused(args.debug, "privacy profile"):
        profile = privacy_profile(mech)
    rows = [(k, v) for k, v in profile.as_dict().items() if v is not None]
    out.write(f"privacy profile of {mech.provenance.describe()}{source}:\n")
    width = max(len(k) for k, _ in rows) if rows else 0
    for k, v in rows:
        text = _value_text(v)
        if k == "sensitive":  # item indices, and their labels when the domain has its own
            text = f"items {', '.join(str(i) for i in v[:10])}{' ...' if len(v) > 10 else ''}"
            if domain is not None and domain != Domain.integers(len(domain)):
                text += f" ({_shown([domain.labels[i] for i in v], 10)})"
        out.write(f"  {k:<{width}}  {text}\n")
    guarantees = mech.guarantees()
    out.write(f"declared guarantees ({len(guarantees)}):\n")
    for g in guarantees:
        with _refused(args.debug, f"checking {g!r}"):
            holds = g.check(mech).satisfied
        out.write(f"  {g!r}: {'holds' if holds else 'DOES NOT HOLD'}\n")
    return 0


#: the commands of a collection on one's own data: every error they meet is one line (``--debug``: the traceback)
_COLLECTION = ("perturb", "estimate", "account")


def _collection_command(args: argparse.Namespace) -> int:
    """Run ``perturb``, ``estimate`` or ``account``: an error no check foresaw is one line too, with exit status 1."""
    command = {"perturb": _cmd_perturb, "estimate": _cmd_estimate, "account": _cmd_account}[args.command]
    try:
        return command(args, sys.stdout, sys.stderr)
    except (_UsageError, _Failure):
        raise
    except MemoryError:  # pragma: no cover - a limit was set too high for this machine
        if getattr(args, "debug", False):
            raise
        raise _Failure("out of memory (lower LDPKIT_MAX_DOMAIN or LDPKIT_MAX_HEADER_BYTES, or free memory)") from None
    except Exception as exc:  # the command line's boundary: a traceback only with --debug
        if getattr(args, "debug", False):
            raise
        text = " ".join(str(exc).split())
        if isinstance(exc, (ValueError, OSError)):
            raise _UsageError(text or type(exc).__name__) from None
        raise _Failure(f"unexpected {type(exc).__name__}{': ' + text if text else ''} (run again with --debug for "
                       "the traceback, and please report it)") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ldpkit`` command line; return the exit status (0 success, 1 failure, 2 usage error).

    Parameters
    ----------
    argv
        Arguments without the program name; ``None`` reads ``sys.argv[1:]``.
    """
    parser = _parser()
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exc:  # argparse reports usage errors (status 2), --help and --version (status 0)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else USAGE_ERROR)
    args.argv = arguments
    try:
        if args.command == "list":
            with _as_failures(args.debug):
                return _cmd_list(sys.stdout)
        if args.command == "reproduce":
            return _cmd_reproduce(args, sys.stdout, sys.stderr)
        if args.command == "check":
            return _cmd_check(args, sys.stdout, sys.stderr)
        if args.command in _COLLECTION:
            return _collection_command(args)
        with _as_failures(args.debug):
            return _cmd_datasets(sys.stdout)
    except _UsageError as exc:
        sys.stderr.write(f"ldpkit {args.command}: error: {exc}\n")
        return USAGE_ERROR
    except _Failure as exc:
        sys.stderr.write(f"ldpkit {args.command}: error: {exc}\n")
        return FAILURE


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
