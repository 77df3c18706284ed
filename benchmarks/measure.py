"""The times and counts the README and the book's Artifact page quote, measured in one run (a benchmark, not a test).

Measures, once without the datasets and once with them, in fresh processes:

* ``ldpkit check --all``: wall and CPU time, and how many items were reproduced, differ, or are
  not comparable (and each item's verdict);
* ``ldpkit reproduce --all --scale 0.02 --repeats 2`` (what the test command runs): wall and CPU
  time;
* the book's build, ``jupyter-book build . -W -n --keep-going``, from a clean ``_build`` in a
  temporary copy of the repository (the checkout's own ``_build`` is left alone): wall and CPU
  time, and MyST-NB's execution time of every page (total, and the longest page).

"Without the datasets" is a fresh machine: no ``LDPKIT_DATA_DIR``; "with" sets it to
``--data-dir``. Both set ``LDPKIT_OFFLINE=1`` and give every command an empty ``LDPKIT_CACHE_DIR``.
CPU time is the user and system time of the command and every process it waited for (its
kernels, for the book). The record also holds the date, the machine (processor, cores, memory),
Python and the versions of the packages that matter, the ldpkit commit
(:func:`ldpkit.experiments.provenance.git_revision`) and, per condition, what each dataset was
(real, prefix stand-in, stand-in). No path is recorded.

It writes ``benchmarks/measurements.json`` (committed). ``--write-readme`` then rewrites the
README's measured blocks, ``<!-- measured:NAME -->...<!-- /measured -->``, from that file
(:func:`render_readme`; ``--readme-only`` does only that, from the file as it is); the book's
Artifact page reads the same file when the book is built. ``tests/test_measurements.py`` checks
that the README's blocks are what :func:`render_readme` makes of the committed file.

Usage::

    python benchmarks/measure.py --data-dir DIR --write-readme   # everything, about 15 min on 2 cores
    python benchmarks/measure.py --data-dir DIR --quick          # without the two book builds
    python benchmarks/measure.py --readme-only                    # README blocks from the committed file

Needs the ``book`` extra for the book builds (``pip install -e ".[test]"`` has it). A command
that fails (exit status other than 0, or 1 for ``ldpkit check`` when an item differs) stops the
run before anything is written. Run it on a quiet machine: the times are wall-clock times.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import pickle
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# a duration as the book writes it: one function, the book's tooling's (the book directory holds booktools)
sys.path.insert(0, str(REPO / "book"))
from booktools.execution import _processor, duration_text  # noqa: E402

MEASUREMENTS = REPO / "benchmarks" / "measurements.json"
README = REPO / "README.md"
SCHEMA = 1

CHECK = ["check", "--all"]
REPRODUCE = ["reproduce", "--all", "--scale", "0.02", "--repeats", "2"]
BOOK = ["jupyter-book", "build", ".", "-W", "-n", "--keep-going"]
#: the two conditions, in the order they run
CONDITIONS = ("without_data", "with_data")
STATUSES = ("reproduced", "differs", "not comparable")
_VERSIONS = ("ldpkit", "numpy", "scipy", "cvxpy", "pandas", "matplotlib", "jupyter-book", "sphinx", "myst-nb")

#: the fields of every timed command (:func:`_timed`)
TIMED_FIELDS: dict[str, type | tuple[type, ...]] = {
    "command": str,
    "wall_seconds": (int, float),
    "cpu_seconds": (int, float),
    "exit_status": int,
}
#: every field of the file: dotted path -> type(s); ``{cond}`` stands for each condition
FIELDS: dict[str, type | tuple[type, ...]] = {
    "schema": int,
    "command": str,
    "date": str,
    "finished": str,
    "quick": bool,
    "machine.cpu": str,
    "machine.cores": int,
    "machine.memory_gib": (int, float),
    "machine.platform": str,
    "python": str,
    "versions": dict,
    "git.commit": str,
    "items": int,
    "runs.{cond}.environment": str,
    "runs.{cond}.datasets": dict,
    **{f"runs.{{cond}}.check.{key}": kind for key, kind in TIMED_FIELDS.items()},
    "runs.{cond}.check.checked": int,
    "runs.{cond}.check.reproduced": int,
    "runs.{cond}.check.differs": int,
    "runs.{cond}.check.not_comparable": int,
    "runs.{cond}.check.statuses": dict,
    **{f"runs.{{cond}}.reproduce.{key}": kind for key, kind in TIMED_FIELDS.items()},
    # null when the run was --quick
    "runs.{cond}.book": (dict, type(None)),
}
#: the fields of a measured book build
BOOK_FIELDS: dict[str, type | tuple[type, ...]] = {
    **TIMED_FIELDS,
    "pages": (int, type(None)),
    "executed_seconds": (int, float, type(None)),
    "longest_seconds": (int, float, type(None)),
    "longest_page": (str, type(None)),
}


# ----------------------------------------------------------------------------------- rendering

def machine_short(data: Mapping[str, Any]) -> str:
    """``"2 cores (AMD EPYC, 23.5 GiB)"``."""
    m = data["machine"]
    return f"{m['cores']} cores ({m['cpu']}, {m['memory_gib']:g} GiB)"


def counts_text(check: Mapping[str, Any]) -> str:
    """``"all 35 reproduced"``, or ``"12 reproduced, 23 not comparable"`` (``"1 differs"`` included)."""
    n, parts = check["checked"], []
    if check["reproduced"] == n:
        return f"all {n} reproduced"
    for key, word in (("reproduced", "reproduced"), ("not_comparable", "not comparable"), ("differs", "differ")):
        if check[key]:
            parts.append(f"{check[key]} {'differs' if key == 'differs' and check[key] == 1 else word}")
    return ", ".join(parts)


def _block_quickstart(data: Mapping[str, Any]) -> str:
    repro = [duration_text(data["runs"][cond]["reproduce"]["wall_seconds"]) for cond in CONDITIONS]
    books = [data["runs"][cond]["book"] for cond in CONDITIONS]
    text = f"Measured on {data['machine']['cores']} cores ({data['date']}): "
    if all(book is not None for book in books):
        text += (f"the book builds from a clean `_build` in {duration_text(books[0]['wall_seconds'])} with no data "
                 f"directory at all and {duration_text(books[1]['wall_seconds'])} with the datasets, and ")
    text += f"the reduced-scale run of every experiment takes {repro[0]} without the data and {repro[1]} with them"
    if any(book is None for book in books):
        text += "; the book's build is not measured yet (`python benchmarks/measure.py` without `--quick` measures it)"
    return text + (". These times and those below come from `benchmarks/measurements.json`, written by "
                   "`python benchmarks/measure.py`; the book's Artifact page reads the same file.")


def _block_check(data: Mapping[str, Any]) -> str:
    without, with_ = (data["runs"][cond]["check"] for cond in CONDITIONS)
    return (f"Measured on {machine_short(data)}, {data['date']}: `ldpkit check --all` reruns the "
            f"{data['items']} items in {duration_text(with_['wall_seconds'])} with the datasets "
            f"({counts_text(with_)}) and {duration_text(without['wall_seconds'])} without them "
            f"({counts_text(without)}: without data an item whose reference read a real file is not "
            f"comparable, and says so before any run).")


def _block_execution(data: Mapping[str, Any]) -> str:
    book = data["runs"]["with_data"]["book"]
    if book is None:
        return "No build has been measured yet (`python benchmarks/measure.py` without `--quick`)."
    text = f"In the last measured build ({data['machine']['cores']} cores, {data['date']}, with the datasets)"
    if book["pages"]:
        text += (f" the {book['pages']} executed pages ran for {duration_text(book['executed_seconds'])} in "
                 f"total, the longest ({book['longest_page']}) for {duration_text(book['longest_seconds'])};")
    return text + f" the whole build with its checks took {duration_text(book['wall_seconds'])}."


#: the README's measured blocks: name -> renderer of its text from the measurements
BLOCKS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "quickstart": _block_quickstart,
    "check": _block_check,
    "execution": _block_execution,
}
_MARK = re.compile(r"<!-- measured:(?P<name>[a-z]+) -->(?P<body>.*?)<!-- /measured -->", re.S)
#: a word that must not start a line of a Markdown paragraph (it would start a list, a quote, ...)
_LINE_START = re.compile(r"^([-+*>#=|]|\d+[.)]|<)")
WIDTH = 100


_KEEP = re.compile(r"`[^`]*`|\d+(?: min| s| h| GiB| cores)+\b")


def _wrap(text: str, first: int, width: int = WIDTH) -> str:
    """``text`` filled greedily to ``width`` columns, the first line to ``first``.

    A line never starts with a word Markdown would read as a block marker, and neither a code span
    nor a quantity with its unit (``4 min 12 s``) is broken.
    """
    glued = _KEEP.sub(lambda m: m.group(0).replace(" ", "\0"), text)
    lines: list[str] = []
    line, limit = "", first
    for word in glued.split():
        if line and len(line) + 1 + len(word) > limit and not _LINE_START.match(word):
            lines.append(line)
            line, limit = word, width
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n".join(lines).replace("\0", " ")


def render_readme(text: str, data: Mapping[str, Any]) -> str:
    """``text`` (the README) with every measured block's text remade from ``data`` (the measurements).

    Every block of :data:`BLOCKS` must occur exactly once, and no other.
    """
    found = [m["name"] for m in _MARK.finditer(text)]
    if sorted(found) != sorted(BLOCKS):
        raise ValueError(f"the README's measured blocks are {found}, expected each of {sorted(BLOCKS)} once")

    def replace(match: re.Match[str]) -> str:
        opening = match.group(0)[: match.start("body") - match.start()]
        column = match.start("body") - (text.rfind("\n", 0, match.start("body")) + 1)
        body = _wrap(BLOCKS[match["name"]](data), max(WIDTH - column, 30))
        return f"{opening}{body}<!-- /measured -->"

    return _MARK.sub(replace, text)


def missing_fields(data: Mapping[str, Any]) -> list[str]:
    """The fields of :data:`FIELDS` (and :data:`BOOK_FIELDS`) ``data`` lacks or holds with a wrong type."""
    bad = []

    def get(path: str) -> Any:
        value: Any = data
        for part in path.split("."):
            if not isinstance(value, Mapping) or part not in value:
                raise KeyError(path)
            value = value[part]
        return value

    for template, kinds in FIELDS.items():
        for path in sorted({template.format(cond=cond) for cond in CONDITIONS}):
            try:
                value = get(path)
            except KeyError:
                bad.append(f"{path}: missing")
                continue
            if not isinstance(value, kinds) or isinstance(value, bool) and kinds in (int, (int, float)):
                bad.append(f"{path}: {type(value).__name__}")
            if path.endswith(".book"):
                if value is None and not data.get("quick"):
                    bad.append(f"{path}: null in a run that was not --quick")
                for key, book_kinds in (BOOK_FIELDS.items() if isinstance(value, Mapping) else ()):
                    if key not in value or not isinstance(value[key], book_kinds):
                        bad.append(f"{path}.{key}: {'missing' if key not in value else type(value[key]).__name__}")
    return bad


# ----------------------------------------------------------------------------------- measuring

def _cpu_model() -> str:
    """The processor's model name as the book's execution statistics read it, else the machine type."""
    return _processor() or platform.machine()


def _memory_gib() -> float:
    try:
        return round(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return float("nan")


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _script(name: str) -> str | None:
    return shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)


def _ldpkit(args: list[str]) -> list[str]:
    script = _script("ldpkit")
    return [script, *args] if script else [sys.executable, "-m", "ldpkit", *args]


def _timed(cmd: list[str], env: Mapping[str, str], cwd: Path, shown: str, ok: tuple[int, ...] = (0,)) -> dict[str, Any]:
    """Run ``cmd``; its wall and CPU time (itself and the children it waited for), exit status and output."""
    print(f"  {shown} ...", end="", flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=dict(env), cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f" {duration_text(wall)} (CPU {duration_text(cpu)}), exit status {proc.returncode}")
    if proc.returncode not in ok:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-30:])
        raise SystemExit(f"measure: `{shown}` failed with exit status {proc.returncode}; nothing written.\n{tail}")
    return {"command": shown, "wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
            "exit_status": proc.returncode, "stdout": proc.stdout}


def _check_counts(stdout: str, ids: list[str]) -> dict[str, Any]:
    """The verdict of every item and the counts, from ``ldpkit check``'s output."""
    statuses: dict[str, str] = {}
    for line in stdout.splitlines():
        head, _, rest = line.partition(" ")
        if head in ids:
            status = next((s for s in STATUSES if rest.strip().startswith(s)), None)
            if status is not None:
                statuses[head] = status
    summary = re.search(r"^(\d+) checked: ", stdout, re.M)
    if summary is None or int(summary.group(1)) != len(statuses) or set(statuses) != set(ids):
        raise SystemExit(f"measure: cannot read the verdicts of `ldpkit check --all`:\n{stdout[-2000:]}")
    out: dict[str, Any] = {"checked": len(statuses)}
    for status in STATUSES:
        out[status.replace(" ", "_")] = sum(1 for s in statuses.values() if s == status)
    out["statuses"] = statuses
    return out


def _datasets(env: Mapping[str, str]) -> dict[str, str]:
    """What each dataset is under ``env``: real, prefix, stand-in, ... (``ldpkit.datasets.plan``)."""
    code = ("import json; from ldpkit.datasets import DATASETS, plan; "
            "print(json.dumps({key: plan(key).origin for key in DATASETS}))")
    proc = subprocess.run([sys.executable, "-c", code], env=dict(env), capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def _copy_repository(dest: Path) -> None:
    """The repository's files as the checkout has them (tracked and untracked, not ignored) into ``dest``."""
    try:
        cmd = ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
        listed = subprocess.run(cmd, capture_output=True, check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        shutil.copytree(REPO, dest, ignore=shutil.ignore_patterns(
            ".git", ".venv", "_build", "__pycache__", "*.egg-info", ".jupyter_cache", ".hypothesis", ".pytest_cache"))
        return
    for name in filter(None, listed):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def _execution(build: Path) -> dict[str, Any]:
    """MyST-NB's execution time of every page of a finished build (the Sphinx environment it pickled)."""
    none = {"pages": None, "executed_seconds": None, "longest_seconds": None, "longest_page": None}
    pickles = sorted(build.glob("**/environment.pickle"))
    if not pickles:
        return none
    if str(REPO / "book") not in sys.path:  # the book's extensions (booktools) may be pickled with it
        sys.path.insert(0, str(REPO / "book"))
    try:
        with open(pickles[0], "rb") as handle:
            env = pickle.load(handle)  # the build's own file, just written
        records = {doc: float(data["exec_data"]["runtime"]) for doc, data in getattr(env, "nb_metadata", {}).items()
                   if data.get("exec_data")}
        if not records:
            return none
        longest = max(records, key=records.__getitem__)
        title = env.titles[longest].astext() if longest in getattr(env, "titles", {}) else longest
    except Exception as exc:  # noqa: BLE001 - a statistic, not the measurement: say why it is missing
        print(f"  (no execution statistics: {type(exc).__name__}: {exc})")
        return none
    return {"pages": len(records), "executed_seconds": round(sum(records.values()), 1),
            "longest_seconds": round(records[longest], 1), "longest_page": title}


def _book(env: Mapping[str, str]) -> dict[str, Any]:
    jb = _script("jupyter-book")
    if jb is None:
        raise SystemExit("measure: jupyter-book is not installed (pip install -e \".[book]\"), or use --quick")
    with tempfile.TemporaryDirectory(prefix="ldpkit-measure-book-") as tmp:
        copy = Path(tmp) / "repo"
        _copy_repository(copy)
        run = _timed([jb, *BOOK[1:]], env, copy, " ".join(BOOK))
        run.pop("stdout")
        run.update(_execution(copy / "_build"))
    return run


def _environments(data_dir: Path) -> dict[str, dict[str, str]]:
    base = {k: v for k, v in os.environ.items() if k not in ("LDPKIT_DATA_DIR", "LDPKIT_CACHE_DIR")}
    base["LDPKIT_OFFLINE"] = "1"
    return {"without_data": base, "with_data": {**base, "LDPKIT_DATA_DIR": str(data_dir)}}


def measure(data_dir: Path, *, quick: bool, command: str) -> dict[str, Any]:
    """Every measurement of the module docstring, as the JSON-ready record."""
    from ldpkit.experiments import list_experiments
    from ldpkit.experiments.provenance import environment

    ids = [exp.id for exp in list_experiments()]
    env_info = environment()
    runs: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="ldpkit-measure-") as tmp:
        root = Path(tmp)
        envs = _environments(data_dir)
        n = 0

        def fresh(env: Mapping[str, str]) -> dict[str, str]:
            nonlocal n
            n += 1
            cache = root / f"cache-{n}"
            cache.mkdir()
            return {**env, "LDPKIT_CACHE_DIR": str(cache)}

        # warm-up (file cache, bytecode): not measured
        subprocess.run([sys.executable, "-c", "import ldpkit.experiments, pandas, matplotlib.pyplot, cvxpy"],
                       env=fresh(envs["without_data"]), check=True)
        for cond in CONDITIONS:
            print(f"{cond.replace('_', ' ')}:")
            env = envs[cond]
            work = root / cond
            work.mkdir()
            check = _timed(_ldpkit(CHECK), fresh(env), work, " ".join(["ldpkit", *CHECK]), ok=(0, 1))
            check.update(_check_counts(check.pop("stdout"), ids))
            reproduce = _timed(_ldpkit([*REPRODUCE, "--out", "out"]), fresh(env), work,
                               " ".join(["ldpkit", *REPRODUCE]))
            reproduce.pop("stdout")
            runs[cond] = {
                "environment": ("LDPKIT_DATA_DIR set to the datasets directory" if cond == "with_data"
                                else "no LDPKIT_DATA_DIR") + ", LDPKIT_OFFLINE=1, an empty LDPKIT_CACHE_DIR",
                "datasets": _datasets(fresh(env)),
                "check": check,
                "reproduce": reproduce,
                "book": None if quick else _book(fresh(env)),
            }
    finished = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    return {
        "schema": SCHEMA,
        "command": command,
        "date": finished.date().isoformat(),
        "finished": finished.isoformat(),
        "quick": quick,
        "machine": {"cpu": _cpu_model(), "cores": os.cpu_count() or 0, "memory_gib": _memory_gib(),
                    "platform": f"{platform.system()} {platform.release()} {platform.machine()}"},
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "versions": {name: _version(name) for name in _VERSIONS},
        "git": env_info["git"],
        "items": len(ids),
        "runs": runs,
    }


def write_readme(data: Mapping[str, Any], path: Path = README) -> bool:
    """Rewrite the measured blocks of the README at ``path``; whether it changed."""
    old = path.read_text(encoding="utf-8")
    new = render_readme(old, data)
    if new != old:
        path.write_text(new, encoding="utf-8")
    return new != old


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="the datasets directory for the runs with data (default: LDPKIT_DATA_DIR)")
    ap.add_argument("--quick", action="store_true", help="skip the two book builds (their fields are null)")
    ap.add_argument("--out", type=Path, default=MEASUREMENTS, help="the JSON file (default: %(default)s)")
    ap.add_argument("--write-readme", action="store_true", help="then rewrite the README's measured blocks")
    ap.add_argument("--readme-only", action="store_true",
                    help="measure nothing: rewrite the README's measured blocks from --out as it is")
    args = ap.parse_args(argv)
    if args.readme_only:
        changed = write_readme(json.loads(args.out.read_text(encoding="utf-8")))
        print(f"README.md {'rewritten' if changed else 'already up to date'}")
        return 0
    data_dir = args.data_dir or (Path(os.environ["LDPKIT_DATA_DIR"]) if os.environ.get("LDPKIT_DATA_DIR") else None)
    if data_dir is None or not data_dir.is_dir():
        ap.error("--data-dir (or LDPKIT_DATA_DIR) must name the datasets directory")
    command = "python benchmarks/measure.py --data-dir DATA" + (" --quick" if args.quick else "")
    data = measure(data_dir.resolve(), quick=args.quick, command=command)
    bad = missing_fields(data)
    if bad:
        raise SystemExit("measure: incomplete record: " + "; ".join(bad))
    args.out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out.relative_to(REPO) if args.out.is_relative_to(REPO) else args.out}")
    if args.write_readme:
        print(f"README.md {'rewritten' if write_readme(data) else 'already up to date'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
