"""``ldpkit check``: rerun an experiment and compare it with the reference result in the package.

The reference results live in ``ldpkit/experiments/references/``: for every registered
experiment ``ID.csv`` (the summary below, made by the same code at the experiment's default
configuration) and ``ID.json`` (the provenance record of that run,
:mod:`ldpkit.experiments.provenance`: data identities, versions, wall time, and ``why``: the
reason it was made).  A maintainer remakes them after a change that moves a result on purpose,
with one command (:func:`write_references`, one fresh process per experiment, so that the
recorded wall time is what ``ldpkit check ID`` costs alone)::

    ldpkit check --write-references (ID [ID ...] | --all) --why "what moved the results"
    python -m ldpkit.experiments.check --write-references [ID ...] --why "..."   # the same; no ID: all

The reason is stored in every remade reference and must be said in ``CHANGELOG.md`` (a test
holds the two together).  A reference is remade on the data it was made on: when this machine
would run an experiment on other data than its reference did (a stand-in where the reference
ran on the real file), it is refused before any run unless ``--allow-data-change`` is given.

How a rerun is compared (:class:`~ldpkit.experiments.Comparison`, declared per experiment at registration):

* Frames with one row per setting and *repeat* are summarised per setting: for every Monte
  Carlo column the mean over repeats and its standard deviation, for every column that is the
  same in every repeat (an exact expectation, a theory value) that value.
* Exact values (strings, integers, deterministic floats) must agree to the relative tolerance
  ``rtol`` (1e-6 by default: the same machine gives identical bits; another machine's ``exp``,
  ``log`` and BLAS round differently in the last digits, about 1e-15 relative once the solvers
  end at their KKT point).  Text is compared token by token (:func:`tokens`): words exactly,
  numbers as numbers to ``rtol``, and two numbers both at most ``rtol`` times the row's largest
  floating-point value agree (a difference of two nearly equal values of the row, printed in a
  verdict, is zero to the row's precision).
* A Monte Carlo mean must lie within ``z*`` standard errors of the reference mean, the standard
  error combining both runs' (``sqrt(se_ref**2 + se_new**2)``, each ``sd / sqrt(repeats)``, or
  the exact standard error a frame carries for its simulated values).  ``z*`` is the two-sided
  Bonferroni bound for a family-wise false alarm rate :data:`ALPHA` over all Monte Carlo values of
  the experiment, so an unchanged implementation on another machine (other random streams)
  passes with probability at least ``1 - ALPHA``, while an error of a few standard errors in any
  cell is caught.
* A standard error that the simulation itself estimates (``Comparison.simulated_se``) serves
  only as the standard error of its column; it is not compared (another random stream estimates
  it anew).
* Columns a comparison cannot use (wall-clock times) are named with the reason and skipped.

A rerun is only compared when it ran on the reference's data: the same origin (real, prefix
stand-in, stand-in, synthetic), the same files (sha256) and the same content.  Otherwise the
verdict is ``"not comparable"`` with the reason, decided before the rerun when the data policy
(:func:`ldpkit.datasets.plan`) already shows the data differ.  Verdicts: ``"reproduced"``,
``"differs"``, ``"not comparable"``.  Documented on the Artifact page of the book.
"""

from __future__ import annotations

import io
import json
import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .comparison import EXACT, Comparison
from .config import RunConfig
from .registry import Experiment, ExperimentResult

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "ALPHA",
    "CheckReport",
    "REFERENCES",
    "check",
    "compare",
    "load_reference",
    "reference_seconds",
    "summarise",
    "tokens",
    "write_reference",
    "write_references",
]

#: family-wise false alarm rate of the Monte Carlo comparisons of one experiment
ALPHA = 1e-3
#: directory of the reference results (package data)
REFERENCES = Path(__file__).resolve().parent / "references"
_SD = " [sd]"
_REPEATS = "[repeats]"




def _table(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame as its CSV holds it, read back (so both sides have the CSV's types)."""
    import pandas as pd

    from .registry import flat_frame

    flat, keep_index = flat_frame(frame)
    text = flat.to_csv(index=keep_index)
    return pd.read_csv(io.StringIO(text))


def summarise(frame: pd.DataFrame, spec: Comparison) -> pd.DataFrame:
    """The reference form of ``frame``: per setting, exact values, Monte Carlo means and their sd.

    Without ``spec.repeat`` the frame itself (as its CSV holds it), minus ignored columns.
    """
    import pandas as pd

    table = _table(frame)
    table = table.drop(columns=[c for c in spec.ignore if c in table.columns])
    if spec.repeat is None:
        return table
    missing = [c for c in (*spec.keys, spec.repeat, *spec.exact) if c not in table.columns]
    if missing:
        raise ValueError(f"columns {missing} are not in the frame (columns: {list(table.columns)})")
    values = [c for c in table.columns if c not in (*spec.keys, spec.repeat)]
    monte_carlo = [c for c in values if c not in spec.exact]
    grouped = table.groupby(list(spec.keys), sort=False, dropna=False)
    out = grouped[list(spec.exact)].first() if spec.exact else grouped.size().to_frame(_REPEATS).iloc[:, :0]
    for col in monte_carlo:
        out[col] = grouped[col].mean()
        out[col + _SD] = grouped[col].std(ddof=1)
    out[_REPEATS] = grouped[spec.repeat].count()
    return pd.DataFrame(out).reset_index()


@dataclass(frozen=True)
class CheckReport:
    """The verdict of :func:`check` or :func:`compare` for one experiment.

    Attributes
    ----------
    id
        The experiment.
    status
        ``"reproduced"``, ``"differs"`` or ``"not comparable"``.
    detail
        One line: the largest deviation, or why the results differ or cannot be compared.
    seconds
        Wall time of the rerun (``None`` when nothing was run).
    """

    id: str
    status: str
    detail: str
    seconds: float | None = None

    def line(self, width: int = 14) -> str:
        """``"<id>  <status>  <detail>"`` for the command line."""
        took = f" ({self.seconds:.0f} s)" if self.seconds is not None else ""
        return f"{self.id:<{width}}  {self.status:<14}  {self.detail}{took}"


def _float(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out


#: a number inside text: not glued to a letter, digit or point on either side ("opt0" is a word)
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def tokens(text: str) -> list[str | float]:
    """``text`` split into words and numbers: the numbers as floats, everything between them as strings.

    Examples
    --------
    >>> tokens("IPRR better: difference -2.856e+05 (exact)")
    ['IPRR better: difference ', -285600.0, ' (exact)']
    >>> tokens("IDUE-opt0 at 1")
    ['IDUE-opt0 at ', 1.0]
    """
    out: list[str | float] = []
    at = 0
    for match in _NUMBER.finditer(text):
        if match.start() > at:
            out.append(text[at:match.start()])
        out.append(float(match.group()))
        at = match.end()
    if at < len(text):
        out.append(text[at:])
    return out


def _close(fa: float, fb: float, rtol: float, floor: float) -> tuple[bool, float]:
    """Whether two numbers agree to ``rtol`` (or are both at most ``floor`` in size), and their relative deviation."""
    if math.isnan(fa) or math.isnan(fb):
        equal = math.isnan(fa) and math.isnan(fb)
        return equal, 0.0 if equal else math.inf
    if fa == fb:
        return True, 0.0
    scale = max(abs(fa), abs(fb))
    rel = abs(fa - fb) / scale
    return rel <= rtol or abs(fa - fb) <= 1e-300 or scale <= floor, rel


def _same(a: Any, b: Any, rtol: float, floor: float = 0.0) -> tuple[bool, float]:
    """Whether two exact cells agree, and their relative deviation (0 for equal non-numbers).

    Numbers agree to the relative tolerance ``rtol``.  Text is compared token by token
    (:func:`tokens`): the words exactly, the numbers in it as numbers, to ``rtol``; two numbers
    both at most ``floor`` in size agree (a difference of two nearly equal quantities printed in
    the text is rounding noise of the size of the row's values times ``rtol``, which is the
    floor :func:`compare` passes).

    Examples
    --------
    >>> _same("undecided: difference 1.164e-10 (exact)", "undecided: difference 0 (exact)", 1e-6, floor=0.5)
    (True, 1e-06)
    >>> _same("A better: difference -2.856e+05", "A better: difference -2.857e+05", 1e-6, floor=0.5)[0]
    False
    >>> _same("IDUE-opt0 better", "IDUE-opt1 better", 1e-6)[0]
    False
    """
    fa, fb = _float(a), _float(b)
    if fa is not None and fb is not None:
        return _close(fa, fb, rtol, 0.0)
    if str(a) == str(b):
        return True, 0.0
    if fa is not None or fb is not None:  # a number against text
        return False, math.inf
    ta, tb = tokens(str(a)), tokens(str(b))
    if len(ta) != len(tb):
        return False, math.inf
    worst = 0.0
    for x, y in zip(ta, tb):
        if isinstance(x, str) or isinstance(y, str):
            if x != y:
                return False, math.inf
            continue
        same, rel = _close(x, y, rtol, floor)
        if not same:
            return False, rel
        worst = max(worst, min(rel, rtol))  # two numbers below the floor: within the tolerance
    return True, worst


def _row_scale(table: pd.DataFrame, i: int, columns: list[str]) -> float:
    """The largest magnitude among row ``i``'s finite floating-point cells (0 if none)."""
    values = [abs(float(table[c][i])) for c in columns]
    return max((v for v in values if math.isfinite(v)), default=0.0)


def _where(row: pd.Series, keys: tuple[str, ...]) -> str:
    return ", ".join(f"{k}={row[k]}" for k in keys) if keys else f"row {row.name}"


def compare(reference: pd.DataFrame, rerun: pd.DataFrame, spec: Comparison, experiment_id: str = "") -> CheckReport:
    """Compare a rerun's summary with the reference summary (both from :func:`summarise`).

    Examples
    --------
    >>> import pandas as pd
    >>> spec = Comparison(keys=("eps",), repeat="repeat")
    >>> ref = summarise(pd.DataFrame({"eps": [1.0] * 4, "repeat": range(4), "mse": [1.0, 1.2, 0.8, 1.0]}), spec)
    >>> compare(ref, ref, spec, "toy").status
    'reproduced'
    >>> off = summarise(pd.DataFrame({"eps": [1.0] * 4, "repeat": range(4), "mse": [9.0, 9.2, 8.8, 9.0]}), spec)
    >>> compare(ref, off, spec, "toy").status
    'differs'
    """
    from scipy import stats

    ref, new = _table(reference), _table(rerun)
    if list(ref.columns) != list(new.columns):
        return CheckReport(experiment_id, "differs", f"columns differ: reference {list(ref.columns)}, "
                           f"rerun {list(new.columns)}")
    if len(ref) != len(new):
        return CheckReport(experiment_id, "differs", f"{len(new)} rows, reference {len(ref)}")
    if spec.keys:
        ref = ref.sort_values(list(spec.keys), kind="stable").reset_index(drop=True)
        new = new.sort_values(list(spec.keys), kind="stable").reset_index(drop=True)
        for key in spec.keys:
            ok = [_same(a, b, 0.0)[0] for a, b in zip(ref[key], new[key])]
            if not all(ok):
                row = ok.index(False)
                return CheckReport(experiment_id, "differs", f"settings differ: {key} = {new[key][row]!r} "
                                   f"where the reference has {ref[key][row]!r}")
    sd_cols = {c[: -len(_SD)] for c in ref.columns if c.endswith(_SD)}
    float_cols = [c for c in ref.columns if ref[c].dtype.kind == "f" and not c.endswith(_SD)]
    mc_cells: list[tuple[float, str]] = []  # (z, where)
    worst_rel, worst_rel_at, n_exact = 0.0, "", 0
    for col in ref.columns:
        if col in spec.keys or col.endswith(_SD) or col == _REPEATS or col in spec.simulated_se:
            continue
        se_col = spec.se.get(col)
        for i in range(len(ref)):
            a, b = ref[col][i], new[col][i]
            if col in sd_cols:
                k_ref, k_new = float(ref[_REPEATS][i]), float(new[_REPEATS][i])
                se_ref = float(ref[col + _SD][i]) / math.sqrt(k_ref) if k_ref > 1 else math.nan
                se_new = float(new[col + _SD][i]) / math.sqrt(k_new) if k_new > 1 else math.nan
            elif se_col is not None and _float(ref[se_col][i]) is not None and not math.isnan(float(ref[se_col][i])):
                se_ref, se_new = float(ref[se_col][i]), float(new[se_col][i])
            else:
                se_ref = se_new = math.nan
            combined = math.sqrt(se_ref ** 2 + se_new ** 2) if not (math.isnan(se_ref) or math.isnan(se_new)) else 0.0
            fa, fb = _float(a), _float(b)
            if combined > 0 and fa is not None and fb is not None and not (math.isnan(fa) or math.isnan(fb)):
                mc_cells.append((abs(fa - fb) / combined, f"{col} at {_where(new.iloc[i], spec.keys)}"))
                continue
            floor = spec.rtol * _row_scale(ref, i, float_cols) if isinstance(a, str) else 0.0
            same, rel = _same(a, b, spec.rtol, floor)
            n_exact += 1
            if rel > worst_rel:
                worst_rel, worst_rel_at = rel, f"{col} at {_where(new.iloc[i], spec.keys)}"
            if not same:
                return CheckReport(experiment_id, "differs", f"{col} at {_where(new.iloc[i], spec.keys)}: "
                                   f"{b!r}, reference {a!r} (relative tolerance {spec.rtol:g})")
    parts = []
    if mc_cells:
        z_star = float(stats.norm.isf(ALPHA / (2 * len(mc_cells))))
        z, at = max(mc_cells)
        if z > z_star:
            return CheckReport(experiment_id, "differs", f"{at}: {z:.1f} standard errors from the reference "
                               f"(tolerance {z_star:.1f} over {len(mc_cells):,} Monte Carlo values)")
        parts.append(f"{len(mc_cells):,} Monte Carlo values identical to the reference" if z == 0 else
                     f"{len(mc_cells):,} Monte Carlo values within {z:.2g} standard errors of the reference "
                     f"(tolerance {z_star:.1f})")
    if n_exact:
        parts.append(f"{n_exact:,} exact values identical" if worst_rel == 0 else
                     f"{n_exact:,} exact values within {worst_rel:.1g} relative ({worst_rel_at})")
    return CheckReport(experiment_id, "reproduced", "; ".join(parts) or "nothing to compare")


# --------------------------------------------------------------------------- references


def _paths(experiment_id: str, directory: Path | None = None) -> tuple[Path, Path]:
    root = REFERENCES if directory is None else Path(directory)
    return root / f"{experiment_id}.csv", root / f"{experiment_id}.json"


def load_reference(experiment_id: str, directory: str | Path | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The reference summary and provenance record of ``experiment_id``.

    Raises
    ------
    FileNotFoundError
        When the package holds no reference for it.
    """
    import pandas as pd

    csv, record = _paths(experiment_id, None if directory is None else Path(directory))
    if not csv.is_file() or not record.is_file():
        raise FileNotFoundError(f"no reference result for {experiment_id!r} (expected {csv.name} and {record.name})")
    return pd.read_csv(csv), json.loads(record.read_text())


def reference_seconds(experiment_id: str) -> float | None:
    """Wall time in seconds of the reference run (the expected run time), or ``None``."""
    try:
        record = json.loads(_paths(experiment_id)[1].read_text())
    except (OSError, ValueError):
        return None
    seconds = record.get("seconds")
    return float(seconds) if isinstance(seconds, (int, float)) else None


def _check_why(why: Any) -> str:
    """The reason a reference is remade: one non-empty line."""
    if not isinstance(why, str) or not why.strip() or "\n" in why:
        raise ValueError(f"why must be one non-empty line saying why the references are remade, got {why!r}")
    return why.strip()


def write_reference(result: ExperimentResult, directory: str | Path | None = None, *, why: str) -> list[Path]:
    """Store ``result`` (a run at the experiment's defaults) as its reference, with the reason ``why``.

    Returns the paths written.
    """
    why = _check_why(why)
    exp = result.experiment
    if result.config.replace(progress=None, jobs=1, backend=None) != exp.defaults.replace(
            progress=None, jobs=1, backend=None):
        raise ValueError(f"{exp.id}: a reference is made at the experiment's defaults {exp.defaults}, "
                         f"not at {result.config}")
    csv, record = _paths(exp.id, None if directory is None else Path(directory))
    csv.parent.mkdir(parents=True, exist_ok=True)
    summarise(result.frame, exp.comparison).to_csv(csv, index=False)
    sidecar = result.sidecar(command=f"ldpkit check {exp.id}", files=[csv.name])
    sidecar["environment"].pop("git", None)  # the reference's commit is the one that stores it
    sidecar["why"] = why
    record.write_text(json.dumps(sidecar, indent=2) + "\n")
    return [csv, record]


# --------------------------------------------------------------------------- check


def _data_differs(reference: Mapping[str, Any], datasets: Mapping[str, Any]) -> str | None:
    """Why data identities differ from the reference's (``None`` when they are the same)."""
    from ..datasets.containers import DataIdentity

    for name, ref in reference.items():
        ref_id = DataIdentity.from_dict(ref)
        now = datasets.get(name)
        if now is None:
            return f"{name}: not recorded by the rerun"
        if (now.origin, now.files, now.content_sha256) != (ref_id.origin, ref_id.files, ref_id.content_sha256):
            if now.origin != ref_id.origin or now.files != ref_id.files:
                return f"ran on {now.describe()}; the reference ran on {ref_id.describe()}"
            return f"{now.label}: the data differ from the reference's (content sha256 {now.content_sha256[:12]}, " \
                   f"reference {ref_id.content_sha256[:12]})"
    return None


def _planned_differs(reference: Mapping[str, Any]) -> str | None:
    """Why the data the policy would load differ from the reference's, known before any run."""
    from .. import datasets as _datasets
    from ..datasets.containers import DataIdentity

    for name, ref in reference.items():
        if name not in _datasets.DATASETS:
            continue
        ref_id = DataIdentity.from_dict(ref)
        planned = _datasets.plan(name)
        if planned.origin in ("download", "error"):
            continue  # decided by the load itself (an error is raised there, with its fix)
        if planned.origin != ref_id.origin:
            return f"{planned.name}: this machine would use {planned.label}; the reference ran on {ref_id.describe()}"
    return None


def check(experiment: str | Experiment, *, jobs: int = 1, progress: bool | None = False,
          directory: str | Path | None = None) -> CheckReport:
    """Rerun ``experiment`` at its reference configuration and compare (module docstring).

    Parameters
    ----------
    experiment
        A registered id or :class:`~ldpkit.experiments.Experiment`.
    jobs
        Parallel workers for the sweep (:class:`~ldpkit.experiments.RunConfig`); the numbers do
        not depend on it.
    progress
        Progress bar on stderr.
    directory
        Where the references are (default: the package's).
    """
    from .registry import get, run

    exp = get(experiment) if isinstance(experiment, str) else experiment
    reference, record = load_reference(exp.id, directory)
    stored = record["config"]
    config = exp.defaults.replace(repeats=int(stored["repeats"]), seed=stored["seed"],
                                             scale=float(stored["scale"]), jobs=jobs, progress=progress)
    why = _planned_differs(record.get("datasets", {}))
    if why is not None:
        return CheckReport(exp.id, "not comparable", why)
    start = time.perf_counter()
    result = run(exp, config, draw=False)
    seconds = time.perf_counter() - start
    why = _data_differs(record.get("datasets", {}), result.data.inputs)
    if why is not None:
        return CheckReport(exp.id, "not comparable", why, seconds)
    report = compare(reference, summarise(result.frame, exp.comparison), exp.comparison, exp.id)
    same_data = [i.label for i in result.data.inputs.values() if i.origin in ("prefix", "stand-in")]
    detail = report.detail + (f"; on the same stand-in data as the reference ({', '.join(same_data)})"
                              if same_data else "")
    return CheckReport(exp.id, report.status, detail, seconds)


def _data_change(exp: Experiment, directory: str | Path | None = None) -> str | None:
    """Why a run here would use other data than ``exp``'s stored reference (``None``: the same, or no reference)."""
    try:
        _, record = load_reference(exp.id, directory)
    except FileNotFoundError:
        return None
    return _planned_differs(record.get("datasets", {}))


def write_references(ids: Sequence[str], why: str, *, allow_data_change: bool = False, fresh: bool = True,
                     err: TextIO | None = None, directory: str | Path | None = None) -> None:
    """Remake the references of ``ids`` (at their defaults), recording the reason ``why`` in each.

    Everything is checked before any run: the ids, the reason (one non-empty line) and the data:
    an experiment that would run here on other data than its stored reference (a stand-in where
    the reference ran on the real file) is refused unless ``allow_data_change``.  With ``fresh``
    each experiment runs in a fresh process (this module's command line), so that its
    recorded wall time is what ``ldpkit check ID`` costs alone; the experiments' progress bars
    and the paths written go to this process's stderr and stdout.  ``directory``: where the
    references are (default: the package's; only in-process, ``fresh=False``).

    Raises
    ------
    ValueError
        For an unknown id, a bad reason or a refused data change (nothing is written), and when
        a fresh process fails (the references before it are written).
    """
    import subprocess
    import sys

    from .registry import get, run

    why = _check_why(why)
    exps = [get(eid) for eid in ids]
    if not exps:
        raise ValueError("no experiment to remake")
    if fresh and directory is not None:
        raise ValueError("directory is only for fresh=False (the fresh processes write the package's references)")
    if not allow_data_change:
        changes = [f"{exp.id}: {why_not}" for exp in exps if (why_not := _data_change(exp, directory)) is not None]
        if changes:
            raise ValueError("these references would be remade on other data than they were made on (get the data "
                             "they ran on, see `ldpkit datasets`, or pass --allow-data-change): " + "; ".join(changes))
    err = sys.stderr if err is None else err
    for i, exp in enumerate(exps, start=1):
        if fresh or len(exps) > 1:
            err.write(f"writing the reference of {exp.id} ({i}/{len(exps)}) ...\n")
            err.flush()
        if fresh:
            args = ["--write-references", exp.id, "--why", why] + (["--allow-data-change"] if allow_data_change else [])
            # the module's _main through -c: `-m ldpkit.experiments.check` warns that the package imported it first
            code = f"from ldpkit.experiments.check import _main; raise SystemExit(_main({args!r}))"
            argv = [sys.executable, "-c", code]
            sys.stdout.flush()
            if subprocess.run(argv, check=False).returncode != 0:
                raise ValueError(f"{exp.id}: remaking its reference failed (see above); the references of "
                                 f"{', '.join(e.id for e in exps[: i - 1]) or 'no experiment'} were written")
            continue
        result = run(exp, exp.defaults.replace(progress=True), draw=False)
        if not allow_data_change:
            try:
                _, record = load_reference(exp.id, directory)
            except FileNotFoundError:
                record = {}
            changed = _data_differs(record.get("datasets", {}), result.data.inputs)
            if changed is not None:
                raise ValueError(f"{exp.id}: not written, the run used other data than the reference: {changed}")
        for path in write_reference(result, directory, why=why):
            print(path.name)
        print(f"{exp.id}: {result.seconds:.1f} s", flush=True)


def _main(argv: list[str] | None = None) -> int:
    """``python -m ldpkit.experiments.check --write-references [ID ...] --why TEXT``: remake the references."""
    import argparse
    import sys

    from .registry import ids

    parser = argparse.ArgumentParser(prog="python -m ldpkit.experiments.check",
                                     description="Remake the reference results stored in the package.")
    parser.add_argument("--write-references", action="store_true", required=True)
    parser.add_argument("ids", nargs="*", help="experiment ids (default: all)")
    parser.add_argument("--why", required=True,
                        help="why the references are remade (stored in each; say it in CHANGELOG.md too)")
    parser.add_argument("--allow-data-change", action="store_true",
                        help="remake a reference even when this machine would run it on other data than it was made on")
    args = parser.parse_args(argv)
    chosen = args.ids or list(ids())
    try:
        write_references(chosen, args.why, allow_data_change=args.allow_data_change, fresh=len(chosen) > 1)
    except ValueError as exc:
        sys.stderr.write(f"{parser.prog}: error: {exc}\n")
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(_main())
