"""The ``ldpkit`` command: list, reproduce and check the book's figures and tables, and report the data.

Usage::

    ldpkit --version
    ldpkit list                                    # every figure and table: kind, paper item, time, data, title
    ldpkit reproduce (ID [ID ...] | --all) [--out DIR] [--seed S] [--repeats R] [--scale F] [--jobs N]
                     [--scheduler ADDRESS]
    ldpkit check (ID [ID ...] | --all) [--jobs N]  # rerun and compare with the stored reference results
    ldpkit datasets                                # what data a run would use here: real, prefix or stand-in

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
reference's, and why).  ``python -m ldpkit`` is the same command.

Data are loaded by one policy (:mod:`ldpkit.datasets.loaders`): a valid local real file, else a
download where allowed, else the labelled stand-in.  Everything is checked before any work: an
unknown id or a bad option is a usage error (exit status 2); a present but damaged data file or a
missing optional package is reported in one line naming the file or package and the fix (exit
status 1; ``--debug`` shows the traceback).  ``check`` exits with 1 when a result differs.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:  # pragma: no cover
    from .experiments import Experiment

__all__ = ["main"]

USAGE_ERROR = 2
FAILURE = 1


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
        description="Reproduce and check the figures and tables of the ldpkit book.",
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
    chk.add_argument("--jobs", type=int, default=1, metavar="N",
                     help="parallel workers for the points of a sweep (the results do not depend on it)")
    sub.add_parser("datasets", help="for every dataset: real file, download, prefix stand-in, stand-in or error")
    return parser


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
        for exp, config in zip(selected, configs):
            err.write(f"{exp.id} ({exp.paper}, {exp.item}): repeats={config.repeats}, seed={config.seed}, "
                      f"scale={config.scale:g}, jobs={config.jobs}{where}\n")
            with _as_failures(args.debug):
                result = experiments.run(exp, config)
            out.writelines(f"{path}\n" for path in result.save(directory, command=command))
            out.write(f"{exp.id} data: {_data_line(result.data.inputs)}\n")
            if result.any_standin:
                out.write(f"stand-in: {', '.join(result.standins)} (real data not found; see `ldpkit datasets`)\n")
    return 0


def _cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .experiments import RunConfig
    from .experiments.check import check

    selected = _select(args)
    try:
        RunConfig(jobs=args.jobs)
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    with _as_failures(args.debug):
        _data_ready(selected, err, args.debug)
    width = max(len(exp.id) for exp in selected)
    counts: dict[str, int] = {}
    for exp in selected:
        err.write(f"checking {exp.id} ({exp.paper}, {exp.item}) ...\n")
        with _as_failures(args.debug):
            try:
                report = check(exp, jobs=args.jobs, progress=None)
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
