"""The ``ldpkit`` command: the book's figures and tables, and a collection dry run on your own data.

Usage::

    ldpkit --version
    ldpkit list                                    # every figure and table: kind, paper item, time, data, title
    ldpkit reproduce (ID [ID ...] | --all) [--out DIR] [--seed S] [--repeats R] [--scale F] [--jobs N]
                     [--scheduler ADDRESS]
    ldpkit check (ID [ID ...] | --all) [--jobs N] [--progress]  # rerun and compare with the stored references
    ldpkit check --write-references (ID [ID ...] | --all) --why TEXT  # maintainers: remake the references
    ldpkit datasets                                # what data a run would use here: real, prefix or stand-in
    ldpkit perturb --input FILE [--column NAME] --output FILE
                   (--mechanism NAME [--epsilon E] [--budgets B] [--sensitive S] [--model M] [--g G]
                    | --contract SPEC [--family NAME])
                   [--domain FILE] [--seed N] [--data TEXT] [--chunk-rows N]
    ldpkit estimate FILE [FILE ...] [--output CSV] [--level 0.95] [--state JSON]
    ldpkit account (--reports FILE | --mechanism NAME (--d D | --domain FILE) [--epsilon E] [--budgets B]
                   [--sensitive S] [--model M] [--g G])

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
chapter).  ``perturb`` reads items (labels) from a CSV column (``--column``) or a text file with one
item per line (blank lines skipped), in chunks of ``--chunk-rows`` with pandas, and writes one
report per item to a report file (``.csv``: the plain CSV form; any other suffix: the binary form)
that stores the mechanism, the domain and the ``--data`` line.  The input is read twice: first to
check every label and count the rows (an unknown label is refused by name before anything is
written), then to perturb, with one :class:`numpy.random.Generator` made from ``--seed`` (drawn and
printed when not given, so the run can be repeated).  The domain is ``--domain FILE`` (one label a
line: item ``i`` is line ``i``), or else the data's distinct labels, most frequent first (a dry run
only: a deployed collection fixes its domain beforehand).  The mechanism is named (``--mechanism``,
built over ``d`` = the domain's size) or calibrated to a promise (``--contract``, with
:mod:`ldpkit.contracts` and :mod:`ldpkit.calibration`: one ``--family``, or the family with the
smallest total variance at uniform counts among those that keep it).  ``estimate`` adds report
files to an :class:`~ldpkit.aggregation.Aggregator` (resumed from and saved to ``--state``) and
writes the estimate with standard errors and intervals (:meth:`~ldpkit.aggregation.Estimate.to_csv`);
files of another configuration are refused, naming the file and what differs.  ``account`` prints
the privacy profile (:func:`ldpkit.accountant.privacy_profile`) of the mechanism of a report file
or of one named on the command line, and its declared guarantees.  Every refused input (a bad
flag combination, a missing, truncated or mismatched file, an unknown label) is one line on
stderr with exit status 2, checked before any work where possible.

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

__all__ = ["main"]

USAGE_ERROR = 2
FAILURE = 1

#: the names ``--mechanism`` takes (case-insensitive)
MECHANISM_NAMES = ("GRR", "KRR", "OUE", "SUE", "RAPPOR", "OLH", "HR", "FHR", "uRR", "IPRR", "IDUE")
#: the contracts ``--contract`` takes (``NAME[:epsilon=E]``)
CONTRACT_NAMES = ("ldp", "uldp", "minid-ldp", "ipldp")
#: rows ``perturb`` reads and perturbs at a time
DEFAULT_CHUNK_ROWS = 1_000_000


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


def _mechanism_flags(p: argparse.ArgumentParser, contract: bool) -> None:
    """The flags that name a mechanism and its parameters (``perturb``, with ``contract``, and ``account``)."""
    budgets_of = "IPRR and IDUE (and of the minid-ldp and ipldp contracts)" if contract else "IPRR and IDUE"
    sensitive_of = "uRR (and of the uldp contract)" if contract else "uRR"
    p.add_argument("--mechanism", metavar="NAME", default=None,
                   help=f"the mechanism, case-insensitive: {', '.join(MECHANISM_NAMES)}; built over d = the "
                   "domain's size")
    p.add_argument("--epsilon", metavar="E", type=float, default=None,
                   help="the budget of GRR, KRR, OUE, SUE, RAPPOR, OLH, HR (LDP epsilon), FHR (its FLDP epsilon) "
                   "and uRR (its ULDP epsilon)")
    p.add_argument("--budgets", metavar="B", default=None,
                   help=f"per-item budgets of {budgets_of}: one number for every item, or a CSV file of "
                   "'label,budget' lines (optional header line 'label,budget'; 'inf' marks a non-sensitive item; "
                   "every label of the domain needs a line)")
    p.add_argument("--sensitive", metavar="S", default=None,
                   help=f"sensitive items of {sensitive_of}: comma-separated labels, or a text file with one "
                   "label a line")
    p.add_argument("--model", metavar="M", choices=("opt0", "opt1", "opt2"), default=None,
                   help="IDUE's optimisation model: opt0 (default), opt1 or opt2")
    p.add_argument("--g", metavar="G", type=int, default=None,
                   help="OLH's hash range (default: round(e^epsilon + 1))")
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="show the traceback of an error instead of its one-line message")


def _collection_parsers(sub: Any) -> None:
    """The parsers of ``perturb``, ``estimate`` and ``account`` (a collection on the user's own data)."""
    per = sub.add_parser(
        "perturb",
        help="perturb the items of a CSV column or text file into a reports file (a collection dry run)",
        description="Read items (labels) from a CSV column or a text file with one item per line, perturb each "
        "with a mechanism (named, or calibrated to a privacy contract) and write the reports, the mechanism, the "
        "domain and a data line to a reports file. The input is read twice: once to check its labels and count "
        "its rows, once to perturb. Exit status 2 for any refused input, before anything is written.",
        epilog="Contracts: ldp:epsilon=E, uldp:epsilon=E (with --sensitive), minid-ldp and ipldp (with "
        "--budgets). Calibrating every family to minid-ldp takes minutes at d = 1,000 (exact accounting of "
        "each candidate); --family calibrates one. Examples: ldpkit perturb --input visits.csv --column page --output day1.ldpr --mechanism OUE "
        "--epsilon 1 --seed 7;  ldpkit perturb --input items.txt --output r.csv --contract ldp:epsilon=1",
    )
    per.add_argument("--input", metavar="FILE", required=True,
                     help="the items: a CSV file with a header line (name the column with --column), or a text file "
                     "with one item per line (blank lines skipped)")
    per.add_argument("--column", metavar="NAME", default=None, help="the CSV column holding the items")
    per.add_argument("--output", metavar="FILE", required=True,
                     help="the reports file to write: a name ending in .csv gives the plain CSV form, any other "
                     "(.ldpr by convention) the binary form; written under a temporary name and renamed when complete")
    _mechanism_flags(per, contract=True)
    per.add_argument("--contract", metavar="SPEC", default=None,
                     help="instead of --mechanism: a privacy promise to calibrate to (ldp:epsilon=E, uldp:epsilon=E, "
                     "minid-ldp, ipldp; see below)")
    per.add_argument("--family", metavar="NAME", default=None,
                     help="with --contract: calibrate this family only (a name of ldpkit.calibration.families(), "
                     "e.g. GRR, OUE, IPRR, IDUE-opt1; default: every family, keeping the one with the smallest "
                     "total variance at uniform counts)")
    per.add_argument("--domain", metavar="FILE", default=None,
                     help="the domain: a text file of labels, one a line (item i is line i); default: the data's "
                     "distinct labels, most frequent first (a dry run only: a deployed collection fixes its domain "
                     "beforehand)")
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
                     "print the table")
    est.add_argument("--level", metavar="L", type=float, default=0.95,
                     help="confidence level of the normal intervals, in (0, 1) (default: 0.95)")
    est.add_argument("--state", metavar="JSON", default=None,
                     help="the aggregator's state: resumed from this file if it exists, saved to it afterwards "
                     "(a file whose reports are already in the state is refused)")
    est.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                     help="show the traceback of an error instead of its one-line message")
    acc = sub.add_parser(
        "account",
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


def _read_labels(path: str, flag: str, debug: bool) -> list[str]:
    """The labels of a text file, one a line (trailing blank lines dropped)."""
    _existing_file(path, flag)
    with _refused(debug, f"{flag} {path}"):
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _read_domain(path: str, debug: bool, flag: str = "--domain") -> Any:
    from .domain import Domain

    labels = _read_labels(path, flag, debug)
    with _refused(debug, f"{flag} {path} (label i is line i + 1)"):
        return Domain(labels)


def _budgets_spec(text: str, debug: bool) -> float | dict[str, float]:
    """``--budgets``: one number, or the ``label -> budget`` lines of a CSV file (mapped to the domain later)."""
    import csv

    try:
        return float(text)
    except ValueError:
        pass
    if not Path(text).is_file():
        raise _UsageError(f"--budgets {text!r}: neither a number nor an existing file")
    out: dict[str, float] = {}
    with _refused(debug, f"--budgets {text}"), open(text, newline="", encoding="utf-8") as fh:
        for line_no, row in enumerate(csv.reader(fh), start=1):
            if not row or not "".join(row).strip():
                continue
            if line_no == 1 and [c.strip().lower() for c in row] == ["label", "budget"]:
                continue
            if len(row) != 2:
                raise _UsageError(f"--budgets {text}: line {line_no} has {len(row)} fields; each line is label,budget")
            label, value = row[0], row[1].strip()
            try:
                budget = float(value)
            except ValueError:
                budget = math.nan
            if math.isnan(budget):
                raise _UsageError(f"--budgets {text}: line {line_no}: the budget {value!r} is not a number "
                                  "(a positive number, or inf for a non-sensitive item)")
            if label in out:
                raise _UsageError(f"--budgets {text}: line {line_no}: the label {label!r} is given twice")
            out[label] = budget
    if not out:
        raise _UsageError(f"--budgets {text}: no label,budget lines")
    return out


def _budget_vector(spec: float | dict[str, float], domain: Any, flag: str, debug: bool) -> Any:
    """One budget per item of ``domain`` from :func:`_budgets_spec`; a label not listed or unknown is refused."""
    import numpy as np

    if isinstance(spec, float):
        return np.full(len(domain), spec)
    with _refused(debug, f"{flag} (its labels)"):
        index = domain.encode(list(spec))
    vector = np.full(len(domain), np.nan)
    vector[index] = list(spec.values())
    missing = [domain.labels[i] for i in np.flatnonzero(np.isnan(vector))]
    if missing:
        raise _UsageError(f"{flag}: no budget for {len(missing)} label(s) of the domain: {_shown(missing)}; every "
                          "label needs a line (inf for a non-sensitive item)")
    return vector


def _sensitive_spec(text: str, debug: bool) -> list[str]:
    """``--sensitive``: the labels of a file (one a line) or a comma-separated list."""
    if Path(text).is_file():
        labels = [lab for lab in _read_labels(text, "--sensitive", debug) if lab]
    else:
        labels = [lab for lab in text.split(",") if lab]
    if not labels:
        raise _UsageError(f"--sensitive {text!r}: no labels")
    return labels


def _sensitive_items(labels: list[str], domain: Any, debug: bool) -> Any:
    with _refused(debug, "--sensitive"):
        return domain.encode(labels)


#: for each mechanism (upper-case name): the parameter flags it takes; --epsilon, --budgets and --sensitive are required
_MECHANISM_PARAMS: dict[str, tuple[str, ...]] = {
    "GRR": ("epsilon",), "KRR": ("epsilon",), "OUE": ("epsilon",), "SUE": ("epsilon",), "RAPPOR": ("epsilon",),
    "OLH": ("epsilon", "g"), "HR": ("epsilon",), "FHR": ("epsilon",), "URR": ("epsilon", "sensitive"),
    "IPRR": ("budgets",), "IDUE": ("budgets", "model"),
}
_PARAMS = ("epsilon", "budgets", "sensitive", "model", "g")
_REQUIRED_PARAMS = ("epsilon", "budgets", "sensitive")


def _mechanism_name(args: argparse.Namespace) -> str:
    """The canonical (upper-case) mechanism name, its parameter flags checked (none missing, none foreign)."""
    key = args.mechanism.strip().upper()
    if key not in _MECHANISM_PARAMS:
        raise _UsageError(f"--mechanism {args.mechanism!r}: unknown; choose one of {', '.join(MECHANISM_NAMES)}")
    takes = _MECHANISM_PARAMS[key]
    shown = MECHANISM_NAMES[[n.upper() for n in MECHANISM_NAMES].index(key)]
    for param in _PARAMS:
        given = getattr(args, param) is not None
        if given and param not in takes:
            users = [MECHANISM_NAMES[i] for i, n in enumerate(MECHANISM_NAMES) if param in _MECHANISM_PARAMS[n.upper()]]
            raise _UsageError(f"--{param} does not apply to {shown} (it is a parameter of {', '.join(users)})")
        if not given and param in takes and param in _REQUIRED_PARAMS:
            raise _UsageError(f"--mechanism {shown} needs --{param}")
    return key


def _build_mechanism(key: str, args: argparse.Namespace, domain: Any, budgets: Any, sensitive: Any) -> Any:
    """The named mechanism over ``d = len(domain)`` (its constructor's refusal is a usage error)."""
    from .grr import GRR
    from .hadamard import FHR, HR
    from .idue import IDUE
    from .iprr import IPRR
    from .olh import OLH
    from .unary import OUE, RAPPOR
    from .urr import URR

    d = len(domain)
    with _refused(args.debug, f"--mechanism {args.mechanism}"):
        if key in ("GRR", "KRR"):  # KRR is GRR's other name
            return GRR(d, args.epsilon)
        if key == "OUE":
            return OUE(d, args.epsilon)
        if key in ("SUE", "RAPPOR"):  # SUE is basic RAPPOR
            return RAPPOR(d, args.epsilon)
        if key == "OLH":
            return OLH(d, args.epsilon, args.g)
        if key == "HR":
            return HR(d, args.epsilon)
        if key == "FHR":
            return FHR(d, args.epsilon)
        if key == "URR":
            return URR(d, args.epsilon, _sensitive_items(sensitive, domain, args.debug))
        vector = _budget_vector(budgets, domain, f"--budgets {args.budgets}", args.debug)
        if key == "IPRR":
            return IPRR(vector)
        return IDUE(vector, model=args.model or "opt0")


def _contract_spec(args: argparse.Namespace) -> tuple[str, Optional[float]]:
    """``--contract NAME[:epsilon=E]`` parsed and its flags checked: (notion, epsilon or None)."""
    name, _, rest = args.contract.partition(":")
    notion = {"minidldp": "minid-ldp", "minid_ldp": "minid-ldp"}.get(name.strip().lower(), name.strip().lower())
    if notion not in CONTRACT_NAMES:
        raise _UsageError(f"--contract {args.contract!r}: unknown promise {name!r}; choose one of "
                          "ldp:epsilon=E, uldp:epsilon=E, minid-ldp, ipldp")
    epsilon: Optional[float] = None
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq or key.strip().lower() not in ("epsilon", "eps") or notion not in ("ldp", "uldp"):
            raise _UsageError(f"--contract {args.contract!r}: unknown parameter {part!r} (ldp and uldp take "
                              "epsilon=E; minid-ldp and ipldp take their budgets from --budgets)")
        try:
            epsilon = float(value)
        except ValueError:
            raise _UsageError(f"--contract {args.contract!r}: epsilon {value.strip()!r} is not a number") from None
    if notion in ("ldp", "uldp") and epsilon is None:
        raise _UsageError(f"--contract {args.contract!r}: {notion} needs its budget, as in {notion}:epsilon=1")
    takes = {"ldp": (), "uldp": ("sensitive",), "minid-ldp": ("budgets",), "ipldp": ("budgets",)}[notion]
    for param in _PARAMS:
        given = getattr(args, param) is not None
        if given and param not in takes:
            why = (" (the contract's epsilon is in the spec, e.g. ldp:epsilon=1)" if param == "epsilon" else
                   " (calibration chooses the family's parameters)" if param in ("model", "g") else "")
            raise _UsageError(f"--{param} does not apply to --contract {notion}{why}")
        if not given and param in takes:
            raise _UsageError(f"--contract {notion} needs --{param}")
    return notion, epsilon


def _family_name(name: str) -> str:
    """A registered calibration family's name, matched case-insensitively."""
    from .calibration import families

    names = [f.name for f in families()]
    for known in names:
        if known.lower() == name.strip().lower():
            return known
    raise _UsageError(f"--family {name!r}: unknown; choose one of {', '.join(names)}")


def _build_contract(notion: str, epsilon: Optional[float], args: argparse.Namespace, domain: Any, budgets: Any,
                    sensitive: Any) -> Any:
    from . import contracts

    eps = math.nan if epsilon is None else epsilon  # set for ldp and uldp (checked by _contract_spec)
    with _refused(args.debug, f"--contract {args.contract}"):
        if notion == "ldp":
            return contracts.ldp(len(domain), eps)
        if notion == "uldp":
            return contracts.uldp(len(domain), eps, _sensitive_items(sensitive, domain, args.debug))
        vector = _budget_vector(budgets, domain, f"--budgets {args.budgets}", args.debug)
        return contracts.minidldp(vector) if notion == "minid-ldp" else contracts.ipldp(vector)


def _storable(mech: Any) -> bool:
    """Whether a reports file can store the mechanism's arguments (so that the file alone suffices to estimate)."""
    from .reportio import mechanism_config

    try:
        mechanism_config(mech)
    except NotImplementedError:
        return False
    return True


def _calibrated(contract: Any, what: str, family: Optional[str], n: int, err: TextIO, debug: bool) -> Any:
    """The mechanism calibrated to ``contract``: of ``family``, or the smallest total variance among all families."""
    import numpy as np

    from .calibration import calibrate, calibrate_all, families

    uniform = np.full(contract.d, n / contract.d)
    if family is not None:
        with _refused(debug, f"--family {family}"):
            cal = calibrate(family, contract)
        if not cal.satisfiable:
            raise _UsageError(f"--family {family}: no member keeps {what}: {cal.reason}")
        if not _storable(cal.mechanism):
            raise _UsageError(f"--family {family}: its member cannot be stored in a reports file (its class does not "
                              "state its arguments)")
        err.write(f"ldpkit perturb: {what}: {family} calibrated to {cal.mechanism.provenance.describe()} "
                  f"({cal.method}, parameter {cal.parameter:.6g}); total variance at uniform counts "
                  f"{cal.total_variance(uniform):.4g} for n = {n}\n")
        return cal.mechanism
    err.write(f"ldpkit perturb: {what}: calibrating {len(families())} families (--family NAME calibrates one) ...\n")
    err.flush()
    with _refused(debug, f"--contract {what}"):
        cals = calibrate_all(contract)
    kept = [(name, cal, cal.total_variance(uniform)) for name, cal in cals.items()
            if cal.satisfiable and _storable(cal.mechanism)]
    if not kept:
        reasons = "; ".join(f"{name}: {cal.reason}" for name, cal in list(cals.items())[:3])
        raise _UsageError(f"--contract {what}: no family keeps it ({reasons} ...)")
    smallest = min(v for _, _, v in kept)
    # ties within rounding go to the first family registered
    name, cal, value = next(k for k in kept if k[2] <= smallest * (1 + 1e-9))
    others = sorted((k for k in kept if k[0] != name), key=lambda k: k[2])[:2]
    nxt = ", ".join(f"{o[0]} {o[2]:.4g}" for o in others)
    err.write(f"ldpkit perturb: {what}: chose {name}, {cal.mechanism.provenance.describe()} ({cal.method}): the "
              f"smallest total variance at uniform counts ({value:.4g} for n = {n}) of the {len(kept)} of "
              f"{len(cals)} families that keep it" + (f"; next: {nxt}" if nxt else "") + "\n")
    return cal.mechanism


def _read_chunks(path: str, column: Optional[str], chunk_rows: int) -> Iterator[Any]:
    """The items of the input as object arrays of strings, ``chunk_rows`` at a time (pandas)."""
    import csv

    import pandas as pd

    options: dict[str, Any] = dict(dtype=str, keep_default_na=False, na_filter=False, chunksize=chunk_rows)
    if column is None:  # one item per line: no header, no quoting, no separator (a unit separator never occurs)
        reader = pd.read_csv(path, header=None, names=["item"], sep="\x1f", quoting=csv.QUOTE_NONE, **options)
    else:
        reader = pd.read_csv(path, usecols=[column], **options)
    with reader:
        for chunk in reader:
            yield chunk.iloc[:, 0].to_numpy(dtype=object)


def _progress(total: Optional[int], desc: str, err: TextIO, show: bool) -> Any:
    """A tqdm bar on ``err`` (shown only when ``show`` and ``err`` is a terminal)."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="rows", unit_scale=True, file=err, leave=False,
                disable=None if show else True)


def _scan(path: str, column: Optional[str], chunk_rows: int, err: TextIO, debug: bool) -> tuple[int, dict[str, int]]:
    """First pass over the input: the number of rows and each distinct label's count, in first-seen order."""
    import numpy as np
    import pandas as pd

    counts: dict[str, int] = {}
    rows = 0
    where = f"--input {path}" + (f" (column {column!r})" if column is not None else "")
    bar = None
    with _refused(debug, where):
        try:
            for pos, values in enumerate(_read_chunks(path, column, chunk_rows)):
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
    key = notion = None
    epsilon: Optional[float] = None
    family: Optional[str] = None
    if args.mechanism is not None:
        key = _mechanism_name(args)
    else:
        notion, epsilon = _contract_spec(args)
        family = None if args.family is None else _family_name(args.family)
    if args.chunk_rows < 1:
        raise _UsageError(f"--chunk-rows must be >= 1, got {args.chunk_rows}")
    if args.seed is not None and args.seed < 0:
        raise _UsageError(f"--seed must be a non-negative integer, got {args.seed}")
    if args.data is not None and ("\n" in args.data or "\r" in args.data):
        raise _UsageError("--data must be one line of text")
    # 2. the files
    path = _existing_file(args.input, "--input")
    if args.column is None and path.lower().endswith(".csv"):
        raise _UsageError(f"--input {path}: a CSV file needs --column NAME (without it the input is a text file with "
                          "one item per line)")
    if args.column is not None:
        with _refused(args.debug, f"--input {path}"):
            columns = [str(c) for c in pd.read_csv(path, nrows=0).columns]
        if args.column not in columns:
            raise _UsageError(f"--column {args.column!r}: not a column of {path} (its columns: {_shown(columns, 8)})")
    _writable(args.output, "--output")
    if Path(args.output).resolve() == Path(path).resolve():
        raise _UsageError("--output must not be the --input file")
    given_domain = None if args.domain is None else _read_domain(args.domain, args.debug)
    budgets = None if args.budgets is None else _budgets_spec(args.budgets, args.debug)
    sensitive = None if args.sensitive is None else _sensitive_spec(args.sensitive, args.debug)
    mech = None
    if key is not None and given_domain is not None:  # the domain is known: the mechanism is checked now
        mech = _build_mechanism(key, args, given_domain, budgets, sensitive)
    # 3. the first pass: every label checked, the rows counted
    rows, counts = _scan(path, args.column, args.chunk_rows, err, args.debug)
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

        # the same domain as from the raw values: same counts, same first-seen order
        with _refused(args.debug, f"--input {path} ({column})"):
            domain = Domain.from_values(Counter(counts).elements(), order="frequency")
        err.write(f"ldpkit perturb: no --domain: the domain is the {len(domain)} distinct labels of the data, most "
                  "frequent first (a dry run: a deployed collection fixes its domain beforehand; pass --domain FILE)\n")
    # 4. the mechanism (built above when the domain was given)
    if mech is None and key is not None:
        mech = _build_mechanism(key, args, domain, budgets, sensitive)
    elif mech is None:
        assert notion is not None
        contract = _build_contract(notion, epsilon, args, domain, budgets, sensitive)
        what = f"contract {contract.name}" + (f" (epsilon={epsilon:g})" if epsilon is not None else "")
        mech = _calibrated(contract, what, family, rows, err, args.debug)
    data = args.data if args.data is not None else f"{Path(path).name}, {column}, {rows} rows"
    seed = args.seed
    if seed is None:
        seed = int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
        err.write(f"ldpkit perturb: no --seed: drew the seed {seed} (repeat the run with --seed {seed})\n")
    rng = as_generator(seed)  # the one normaliser of seeds
    # 5. the second pass: perturb chunk by chunk with the one generator, write block by block
    with _refused(args.debug, f"--output {args.output}"):
        with ReportWriter(args.output, mech, domain=domain, data=data) as writer:
            bar = _progress(rows, f"perturbing {Path(path).name}", err, rows > args.chunk_rows)
            try:
                for values in _read_chunks(path, args.column, args.chunk_rows):
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
    import os

    from .aggregation import Aggregator
    from .reportio import BLOCK_REPORTS, open_reports

    if not 0.0 < args.level < 1.0:
        raise _UsageError(f"--level must be a confidence level in (0, 1), got {args.level:g}")
    for path in args.files:
        _existing_file(path, "report file")
    seen: dict[str, str] = {}
    for path in args.files:
        real = os.path.realpath(path)
        if real in seen:
            also = "" if seen[real] == path else f" (as {seen[real]!r} too)"
            raise _UsageError(f"{path}: given twice{also}: its reports would be counted twice")
        seen[real] = path
    if args.output is not None:
        _writable(args.output, "--output")
    if args.state is not None:
        _writable(args.state, "--state")
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
    for path, size in zip(args.files, sizes):
        with _refused(args.debug):
            agg.add_file(path, progress=size > BLOCK_REPORTS and err.isatty())
    with _refused(args.debug):
        est = agg.estimate()
    if args.output is not None:
        with _refused(args.debug, f"--output {args.output}"):
            est.to_csv(args.output, args.level)
    else:
        table = est.to_frame(args.level).to_string(index=False, float_format=lambda v: f"{v:.6g}")
        out.write(table + "\n")
    if args.state is not None:
        with _refused(args.debug, f"--state {args.state}"):
            agg.save(args.state)
    origin = (f" ({earlier:,} from the state {args.state}, {est.n - earlier:,} from {len(args.files)} file(s))" if earlier
              else f" from {len(args.files)} file(s)")
    parts = [f"{est.mechanism}: n={est.n:,} reports{origin}", f"{args.level:g} intervals"]
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
        extra = [f"--{p}" for p in (*_PARAMS, "d", "domain") if getattr(args, p) is not None]
        if extra:
            raise _UsageError(f"{', '.join(extra)}: not with --reports (the file states its mechanism)")
        _existing_file(args.reports, "--reports")
        with _refused(args.debug):
            f = open_reports(args.reports)
        mech, domain, source = f.mechanism, f.domain, f" (the mechanism of {args.reports})"
    else:
        key = _mechanism_name(args)
        if args.d is None and args.domain is None:
            raise _UsageError(f"--mechanism {args.mechanism} needs --d D or --domain FILE")
        domain = None if args.domain is None else _read_domain(args.domain, args.debug)
        if domain is not None and args.d is not None and args.d != len(domain):
            raise _UsageError(f"--d {args.d} but --domain {args.domain} has {len(domain)} labels")
        if domain is None:
            if args.d < 2:
                raise _UsageError(f"--d must be at least 2, got {args.d}")
            domain = Domain.integers(args.d)
        budgets = None if args.budgets is None else _budgets_spec(args.budgets, args.debug)
        sensitive = None if args.sensitive is None else _sensitive_spec(args.sensitive, args.debug)
        mech, source = _build_mechanism(key, args, domain, budgets, sensitive), ""
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
        if args.command == "perturb":
            return _cmd_perturb(args, sys.stdout, sys.stderr)
        if args.command == "estimate":
            return _cmd_estimate(args, sys.stdout, sys.stderr)
        if args.command == "account":
            return _cmd_account(args, sys.stdout, sys.stderr)
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
