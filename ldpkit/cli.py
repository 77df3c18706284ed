"""The ``ldpkit`` command: list, reproduce and check the data of the book's figures and tables.

Usage::

    ldpkit list                                    # one line per registered figure or table
    ldpkit reproduce ID [--out DIR] [--seed S] [--repeats R] [--scale F] [--jobs N] [--scheduler ADDRESS]
    ldpkit datasets                                # which real files are found, which are stand-ins

``reproduce`` runs one experiment of :mod:`ldpkit.experiments` (its defaults reproduce the book)
with a progress bar on stderr, writes ``ID.png``, ``ID.pdf`` (figures only) and ``ID.csv`` into
``DIR`` (default: the current directory), prints the paths written and, when a dataset was a
stand-in, a line naming it.  ``--seed`` changes the mechanisms' randomness, not the data;
``--scale`` uses a fixed seeded subsample of each dataset's users (see
:mod:`ldpkit.experiments.idldp_figures`).  ``--jobs N`` runs the points of each sweep on ``N``
worker processes (``-1``: every core) and ``--scheduler ADDRESS`` on the Dask cluster whose
scheduler listens there (``jobs`` then defaults to ``-1``, every worker); the numbers are the same
either way (:class:`~ldpkit.experiments.RunConfig`).  ``python -m ldpkit`` is the same command.

Exit status: 0 on success, 2 on a usage error (unknown id, bad option value), reported on
stderr before any work is done.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

__all__ = ["main"]

USAGE_ERROR = 2


class _UsageError(Exception):
    """A bad command line; reported on stderr with exit status 2."""


def _scale_arg(text: str) -> float:
    """``--scale`` as a float; a value that overflows to infinity is reported as typed, not as ``inf``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid float value: {text!r}") from None
    if math.isinf(value) and not text.strip().lower().lstrip("+-").startswith("inf"):
        raise argparse.ArgumentTypeError(f"scale must be a fraction in (0, 1], got {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ldpkit",
        description="Reproduce the figures and tables of the ldpkit book.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("list", help="list every figure and table (id, kind, paper item, datasets)")
    rep = sub.add_parser(
        "reproduce",
        help="run one figure or table and write PNG, PDF and CSV",
        description="Run one experiment and write ID.png, ID.pdf (figures) and ID.csv into DIR. "
        "Defaults reproduce the book; --seed changes the mechanisms' randomness, not the data.",
    )
    rep.add_argument("id", metavar="ID", help="experiment id, e.g. idldp-fig2 (see `ldpkit list`)")
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
    sub.add_parser("datasets", help="for every dataset: real file found, or stand-in")
    return parser


def _cmd_list(out: TextIO) -> int:
    from . import experiments

    exps = experiments.list_experiments()
    width = max((len(e.id) for e in exps), default=0)
    for e in exps:
        needs = ", ".join(e.datasets) if e.datasets else "-"
        out.write(f"{e.id:<{width}}  {e.kind:<6}  {e.paper} {e.item:<9}  {needs}\n")
    return 0


def _cmd_reproduce(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from . import experiments

    # every check before any work
    try:
        exp = experiments.get(args.id)
        changes: dict[str, object] = {name: value for name in ("seed", "repeats", "scale", "jobs")
                                      if (value := getattr(args, name)) is not None}
        if args.scheduler is not None:
            changes = {"jobs": -1, **changes, "backend": "dask"}
        config = exp.defaults.replace(progress=True, **changes)
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    directory = Path(args.out)
    if directory.exists() and not directory.is_dir():
        raise _UsageError(f"--out must be a directory, got the file {args.out!r}")
    with contextlib.ExitStack() as stack:
        if args.scheduler is not None:
            stack.enter_context(_connect(args.scheduler))
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _UsageError(f"--out: cannot create directory {args.out!r} ({exc.strerror})") from None

        where = f", scheduler={args.scheduler}" if args.scheduler is not None else ""
        err.write(f"{exp.id} ({exp.paper}, {exp.item}): repeats={config.repeats}, seed={config.seed}, "
                  f"scale={config.scale:g}, jobs={config.jobs}{where}\n")
        result = experiments.run(exp, config)
    out.writelines(f"{path}\n" for path in result.save(directory))
    if result.any_standin:
        out.write(f"stand-in: {', '.join(result.standins)} (real data not found; see `ldpkit datasets`)\n")
    return 0


def _connect(address: str) -> Any:
    """A ``distributed.Client`` of the scheduler at ``address`` (a context manager); a usage error if impossible."""
    try:
        from distributed import Client
    except ImportError:
        raise _UsageError("--scheduler needs dask.distributed: pip install 'ldpkit[cluster]'") from None
    try:
        return Client(address, timeout=10)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise _UsageError(f"--scheduler: cannot connect to {address!r} ({exc})") from None


def _dataset_status(key: str) -> tuple[str, str]:
    """``(status, detail)`` of one registry dataset, without downloading or parsing anything."""
    from .datasets import ChecksumMismatchError, DatasetFormatError, available, cache_dir, data_dir, describe, is_offline
    from .datasets.fetch import locate

    info = describe(key)
    root, cache = data_dir(), cache_dir()
    for layout in info.layouts:
        found = []
        try:
            for spec in layout:
                path = locate(spec)
                if path is None:
                    break
                found.append(path)
        except ChecksumMismatchError as exc:
            name = Path(exc.path).name
            return "error", f"{name} has the wrong sha256: it is not used and loading fails; delete or replace it"
        except DatasetFormatError as exc:
            return "error", f"{exc}; loading fails until it is replaced"
        else:
            if len(found) == len(layout):
                places = {"LDPKIT_DATA_DIR" if root is not None and p.is_relative_to(root) else
                          "the user cache" if p.is_relative_to(cache) else str(p.parent) for p in found}
                pinned = "" if all(s.sha256 for s in layout) else "; checksum not pinned, statistics checked on load"
                files = ", ".join(spec.path for spec in layout)
                return "real", f"{files} in {' and '.join(sorted(places))}{pinned}"
    wanted = " or ".join("{" + ", ".join(f.path for f in layout) + "}" for layout in info.layouts)
    if info.resample_from is not None and available(info.resample_from):
        standin = f"stand-in resampling the real {info.resample_from}"
    else:
        standin = "calibrated synthetic stand-in"
    downloadable = any(all(f.url for f in layout) for layout in info.layouts)
    if downloadable and not is_offline():
        return "download", f"{wanted} not found locally; downloaded on first load ({standin} if that fails)"
    reason = "LDPKIT_OFFLINE=1" if downloadable else "no public download"
    return "stand-in", f"{wanted} not found locally ({reason}): {standin}"


def _cmd_datasets(out: TextIO) -> int:
    from .datasets import DATASETS, cache_dir, data_dir, is_offline

    root = data_dir()
    out.write(f"LDPKIT_DATA_DIR: {root if root is not None else 'not set'}\n")
    out.write(f"user cache: {cache_dir()}\n")
    out.write(f"downloads: {'off (LDPKIT_OFFLINE=1)' if is_offline() else 'on'}\n")
    rows = [(key, DATASETS[key].name, *_dataset_status(key)) for key in DATASETS]
    w_key = max(len(r[0]) for r in rows)
    w_name = max(len(r[1]) for r in rows)
    w_status = max(len(r[2]) for r in rows)
    out.writelines(f"{key:<{w_key}}  {name:<{w_name}}  {status:<{w_status}}  {detail}\n"
                   for key, name, status, detail in rows)
    out.write("synthetic.*: generated from a seed, always available\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ldpkit`` command line; return the exit status (0 success, 2 usage error).

    Parameters
    ----------
    argv
        Arguments without the program name; ``None`` reads ``sys.argv[1:]``.
    """
    parser = _parser()
    try:
        args = parser.parse_args(None if argv is None else list(argv))
    except SystemExit as exc:  # argparse reports usage errors (status 2) and --help (status 0)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else USAGE_ERROR)
    try:
        if args.command == "list":
            return _cmd_list(sys.stdout)
        if args.command == "reproduce":
            return _cmd_reproduce(args, sys.stdout, sys.stderr)
        return _cmd_datasets(sys.stdout)
    except _UsageError as exc:
        sys.stderr.write(f"ldpkit {args.command}: error: {exc}\n")
        return USAGE_ERROR


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
