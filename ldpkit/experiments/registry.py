"""A registry of every figure and table the book reproduces.

Each figure or table of a paper that the book reruns is one :class:`Experiment`: an id
(``"idldp-fig2"``), the paper (its bibtex key) and the item it reproduces (``"Fig. 2"``), the
datasets it needs, a *compute* function returning its data (:class:`ExperimentData`: a pandas
frame plus the dataset labels and whatever the chapter needs), a *draw* function returning a
matplotlib figure (``None`` for tables) and its default :class:`~ldpkit.experiments.RunConfig`.
A paper family registers its experiments from its own module with one
:func:`~ldpkit.experiments.register` call each (see :mod:`ldpkit.experiments.idldp_figures`);
:func:`~ldpkit.experiments.run` runs one, the book's chapters and the ``ldpkit reproduce`` command
both go through it.

Compute functions take the run's :class:`~ldpkit.experiments.RunConfig` first and may
accept keyword options (the ID-LDP experiments take ``cache``); :func:`~ldpkit.experiments.run`
passes extra keywords through.  Draw functions take the :class:`ExperimentData` and return a
:class:`matplotlib.figure.Figure` created without ``pyplot`` (no global figure state); they import
matplotlib themselves, so importing :mod:`ldpkit` does not.
"""

from __future__ import annotations

import difflib
import numbers
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, cast

from . import style
from .comparison import EXACT, Comparison
from .config import RunConfig

from ..datasets.containers import DataIdentity

if TYPE_CHECKING:  # pragma: no cover
    import matplotlib.figure
    import pandas as pd

__all__ = [
    "Experiment",
    "ExperimentData",
    "ExperimentResult",
    "close_matches",
    "flat_frame",
    "get",
    "ids",
    "list_experiments",
    "register",
    "run",
]

_ID = re.compile(r"^[a-z0-9]+(?:[-_.][a-z0-9]+)*$")


@dataclass(frozen=True, eq=False)
class ExperimentData:
    """What a compute function returns: the data of one figure or table.

    Attributes
    ----------
    frame
        Tidy data frame written to CSV by ``ldpkit reproduce``: for protocol runs, one row per
        setting and repeat with a leading ``dataset`` column holding the dataset's label; for a
        table, the table itself.
    labels
        Dataset name (as in :attr:`Experiment.datasets`) -> the label figures and tables must
        use; a stand-in's label ends in ``"(stand-in)"``.
    standins
        The names (keys of :attr:`labels`) of the datasets that were stand-ins.
    parts
        Per-dataset frames exactly as the protocol returned them, keyed by dataset label (empty
        for tables).
    meta
        Anything else the draw function or the chapter needs (grids, ``k`` values, sizes).
    inputs
        Dataset name -> the :class:`~ldpkit.datasets.DataIdentity` of the data as loaded (before
        the experiment's subsample or reduction): what provenance sidecars record and ``ldpkit
        check`` compares.  Generated data that are part of the experiment (priors drawn in the
        compute function) need no entry.

    Examples
    --------
    >>> import pandas as pd
    >>> data = ExperimentData(pd.DataFrame({"x": [1]}), labels={"retail": "Retail", "kosarak": "Kosarak (stand-in)"},
    ...                       standins=("kosarak",))
    >>> data.standins, data.labels["kosarak"]
    (('kosarak',), 'Kosarak (stand-in)')
    """

    frame: pd.DataFrame
    labels: Mapping[str, str]
    standins: tuple[str, ...] = ()
    parts: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)
    inputs: Mapping[str, DataIdentity] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = [name for name in self.standins if name not in self.labels]
        if unknown:
            raise ValueError(f"standins {unknown!r} are not datasets of labels {sorted(self.labels)!r}")
        strangers = [name for name in self.inputs if name not in self.labels]
        if strangers:
            raise ValueError(f"inputs {strangers!r} are not datasets of labels {sorted(self.labels)!r}")
        object.__setattr__(self, "inputs", MappingProxyType(dict(self.inputs)))
        object.__setattr__(self, "labels", MappingProxyType(dict(self.labels)))
        object.__setattr__(self, "parts", MappingProxyType(dict(self.parts)))
        object.__setattr__(self, "meta", MappingProxyType(dict(self.meta)))
        object.__setattr__(self, "standins", tuple(self.standins))


@dataclass(frozen=True)
class Experiment:
    """One figure or table of a paper, as the book reproduces it.

    Attributes
    ----------
    id
        Unique identifier, lowercase words joined by ``-`` (``"idldp-fig2"``).
    title
        One-line description.
    paper
        Bibtex key of the paper in ``book/references.bib`` (``"gu2020idldp"``).
    item
        The paper's figure or table reproduced (``"Fig. 2"``, ``"Table II"``).
    kind
        ``"figure"`` or ``"table"``.
    datasets
        Names of the datasets it needs: keys of :data:`ldpkit.datasets.DATASETS` for real data,
        ``"synthetic.<function>"`` for generated data.
    compute
        ``compute(config, **options) -> ExperimentData``.
    draw
        ``draw(data) -> matplotlib.figure.Figure``; ``None`` for tables.
    defaults
        The configuration of the book's run (its seed reproduces the book's numbers).
    section
        Label of the book section showing it, if any.
    comparison
        How ``ldpkit check`` compares a rerun with the stored reference
        (:class:`~ldpkit.experiments.Comparison`; default: every value exact, rows in
        order).

    Examples
    --------
    >>> import pandas as pd
    >>> def compute(config):
    ...     return ExperimentData(pd.DataFrame({"x": [config.repeats]}), labels={})
    >>> demo = Experiment("demo-table1", "A demo", "nobody2024", "Table 1", "table", (), compute, None,
    ...                   RunConfig(repeats=3, seed=0))
    >>> run(demo).frame["x"].tolist()
    [3]
    """

    id: str
    title: str
    paper: str
    item: str
    kind: Literal["figure", "table"]
    datasets: tuple[str, ...]
    compute: Callable[..., ExperimentData]
    draw: Callable[[ExperimentData], matplotlib.figure.Figure] | None
    defaults: RunConfig = field(default_factory=RunConfig)
    section: str | None = None
    comparison: Comparison = field(default_factory=lambda: EXACT)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not _ID.match(self.id):
            raise ValueError(f"id must be lowercase words joined by '-', got {self.id!r}")
        for name in ("title", "paper", "item"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{name} must be a non-empty string, got {value!r}")
        if self.kind not in ("figure", "table"):
            raise ValueError(f"kind must be 'figure' or 'table', got {self.kind!r}")
        if isinstance(self.datasets, str) or not all(isinstance(d, str) and d for d in self.datasets):
            raise ValueError(f"datasets must be a tuple of dataset names, got {self.datasets!r}")
        object.__setattr__(self, "datasets", tuple(self.datasets))
        if not callable(self.compute):
            raise ValueError(f"compute must be callable, got {self.compute!r}")
        if self.kind == "figure" and not callable(self.draw):
            raise ValueError(f"a figure needs a draw function, got {self.draw!r}")
        if self.kind == "table" and self.draw is not None:
            raise ValueError(f"a table has no draw function, got {self.draw!r}")
        if not isinstance(self.defaults, RunConfig):
            raise ValueError(f"defaults must be a RunConfig, got {self.defaults!r}")
        if not isinstance(self.comparison, Comparison):
            raise ValueError(f"comparison must be a Comparison, got {self.comparison!r}")


@dataclass(frozen=True, eq=False)
class ExperimentResult:
    """The outcome of :func:`run`: the data, the figure (if any) and the configuration used.

    Attributes
    ----------
    experiment
        The :class:`Experiment` that was run.
    config
        The :class:`~ldpkit.experiments.RunConfig` actually used.
    data
        The :class:`ExperimentData` returned by the compute function.
    figure
        The matplotlib figure (``None`` for tables or when run with ``draw=False``).
    seconds
        Wall-clock seconds :func:`run` took to compute the data and draw the figure (``None``
        for a result built by hand); the book quotes it for its longest runs.

    Examples
    --------
    >>> import pandas as pd
    >>> def compute(config):
    ...     return ExperimentData(pd.DataFrame({"repeats": [config.repeats]}), labels={"toy": "Toy (stand-in)"},
    ...                           standins=("toy",))
    >>> toy = Experiment("toy-table1", "A toy", "nobody2024", "Table 1", "table", ("toy",), compute, None)
    >>> result = run(toy, RunConfig(repeats=2))
    >>> result.frame["repeats"].tolist(), result.standins, result.any_standin, result.figure
    ([2], ('Toy (stand-in)',), True, None)
    >>> result.seconds >= 0
    True
    """

    experiment: Experiment
    config: RunConfig
    data: ExperimentData
    figure: matplotlib.figure.Figure | None = None
    seconds: float | None = None

    @property
    def frame(self) -> pd.DataFrame:
        """The experiment's data frame (:attr:`ExperimentData.frame`)."""
        return self.data.frame

    @property
    def parts(self) -> Mapping[str, pd.DataFrame]:
        """Per-dataset protocol frames keyed by dataset label (:attr:`ExperimentData.parts`)."""
        return self.data.parts

    @property
    def meta(self) -> Mapping[str, Any]:
        """Extra values of the compute function (:attr:`ExperimentData.meta`)."""
        return self.data.meta

    @property
    def labels(self) -> Mapping[str, str]:
        """Dataset name -> label; stand-ins end in ``"(stand-in)"``."""
        return self.data.labels

    @property
    def standins(self) -> tuple[str, ...]:
        """Labels of the datasets that were stand-ins."""
        return tuple(self.data.labels[name] for name in self.data.standins)

    @property
    def any_standin(self) -> bool:
        """True when at least one dataset was a stand-in."""
        return bool(self.data.standins)

    @property
    def command(self) -> str:
        """The ``ldpkit reproduce`` command that regenerates this result.

        Options appear only where the configuration differs from the experiment's defaults
        (``--seed``, ``--repeats``, ``--scale``).
        """
        parts = ["ldpkit", "reproduce", self.experiment.id]
        defaults = self.experiment.defaults
        if self.config.seed != defaults.seed:
            parts += ["--seed", str(self.config.seed)]
        if self.config.repeats != defaults.repeats:
            parts += ["--repeats", str(self.config.repeats)]
        if self.config.scale != defaults.scale:
            parts += ["--scale", f"{self.config.scale:g}"]
        return " ".join(parts)

    def caption_facts(self) -> dict[str, str]:
        """What a figure caption states about this result, as plain text.

        Keys: ``item`` (the paper's figure or table, ``"Fig. 2"``), ``data`` (the dataset labels,
        stand-ins included, each followed by its number of users when the compute function
        recorded them as ``meta["n"]``, a mapping label -> users), ``repeats``, ``seed`` (the
        run seed), ``scale`` (``"1"`` for the full data) and ``command``
        (:attr:`command`).  The book glues each value and pastes it into the figure's caption,
        so captions never hold a typed number.

        Examples
        --------
        >>> import pandas as pd
        >>> def compute(config):
        ...     return ExperimentData(pd.DataFrame({"x": [1]}), labels={"a": "Retail", "b": "Kosarak (stand-in)"},
        ...                           standins=("b",), meta={"n": {"Retail": 88162, "Kosarak (stand-in)": 990002}})
        >>> toy = Experiment("toy-fig1", "A toy", "nobody2024", "Fig. 1", "table", ("a", "b"), compute, None,
        ...                  RunConfig(repeats=10, seed=7))
        >>> facts = run(toy).caption_facts()
        >>> facts["data"]
        'Retail (n = 88,162) and Kosarak (stand-in) (n = 990,002)'
        >>> facts["repeats"], facts["seed"], facts["command"]
        ('10', '7', 'ldpkit reproduce toy-fig1')
        >>> run(toy, RunConfig(repeats=3, seed=7)).caption_facts()["command"]
        'ldpkit reproduce toy-fig1 --repeats 3'
        """
        sizes = self.meta.get("n")
        names = []
        for label in self.labels.values():
            users = sizes.get(label) if isinstance(sizes, Mapping) else None
            counted = isinstance(users, numbers.Integral) and not isinstance(users, bool)
            names.append(f"{label} (n = {int(cast(int, users)):,})" if counted else label)
        if not names:  # an experiment on no dataset (exact computations)
            data = "no dataset"
        else:
            data = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        return {
            "item": self.experiment.item,
            "data": data,
            "repeats": str(self.config.repeats),
            "seed": str(self.config.seed),
            "scale": f"{self.config.scale:g}",
            "command": self.command,
        }

    def sidecar(self, *, command: str | None = None, files: list[str] | None = None) -> dict[str, Any]:
        """The provenance record of this result (:func:`ldpkit.experiments.provenance.sidecar`).

        Examples
        --------
        >>> import pandas as pd
        >>> def compute(config):
        ...     return ExperimentData(pd.DataFrame({"x": [1]}), labels={})
        >>> toy = Experiment("toy-table1", "A toy", "nobody2024", "Table 1", "table", (), compute, None)
        >>> record = run(toy, RunConfig(seed=5)).sidecar()
        >>> record["id"], record["config"]["seed"], record["command"], "numpy" in record["environment"]["versions"]
        ('toy-table1', 5, 'ldpkit reproduce toy-table1 --seed 5', True)
        """
        from .provenance import sidecar

        return sidecar(self, command=command, files=files)

    def save(self, directory: str | Path = ".", *, formats: tuple[str, ...] = ("png", "pdf"),
             command: str | None = None) -> list[Path]:
        """Write the figure (one file per format), the frame as CSV and the provenance as JSON.

        Files are named after the experiment id (``idldp-fig2.png``, ``.pdf``, ``.csv``,
        ``.json``); the directory is created if needed.  A table, or a result without a figure,
        writes the CSV and the JSON.  Multi-level column names are joined with ``": "`` in the CSV
        header; the index is written only when it is not the default range index
        (:func:`~ldpkit.experiments.flat_frame`).  The JSON is :meth:`sidecar` (``command``: the command line that
        made the result); the figure files carry the experiment, the data labels and the command
        in their metadata.

        Returns
        -------
        list of pathlib.Path
            The files written, figure files first and the JSON last.
        """
        import json

        from .. import __version__

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        data = ", ".join(self.labels.values()) or "no dataset"
        about = f"{self.experiment.item} of {self.experiment.paper}; data: {data}; {command or self.command}"
        if self.figure is not None:
            for fmt in formats:
                path = out / f"{self.experiment.id}.{fmt}"
                title = f"{self.experiment.id}: {self.experiment.title}"
                meta = ({"Title": title, "Subject": about, "Creator": f"ldpkit {__version__}"} if fmt == "pdf" else
                        {"Title": title, "Description": about, "Software": f"ldpkit {__version__}"} if fmt == "png"
                        else None)
                self.figure.savefig(path, format=fmt, metadata=meta, **style.SAVEFIG)
                written.append(path)
        csv = out / f"{self.experiment.id}.csv"
        frame, keep_index = flat_frame(self.frame)
        frame.to_csv(csv, index=keep_index)
        written.append(csv)
        sidecar = out / f"{self.experiment.id}.json"
        record = self.sidecar(command=command, files=[p.name for p in written])
        sidecar.write_text(json.dumps(record, indent=2) + "\n")
        written.append(sidecar)
        return written


def flat_frame(frame: pd.DataFrame) -> tuple[pd.DataFrame, bool]:
    """``(frame, keep_index)`` as written to CSV: multi-level column names joined with ``": "``.

    ``keep_index`` is false for the default range index (which is then not written).
    """
    import pandas as pd

    frame = frame.copy()
    if isinstance(frame.columns, pd.MultiIndex):
        frame.columns = [": ".join(str(level) for level in col) for col in frame.columns]
    default_index = isinstance(frame.index, pd.RangeIndex) and frame.index.name is None
    return frame, not default_index


_REGISTRY: dict[str, Experiment] = {}


def register(experiment: Experiment, *, replace: bool = False) -> Experiment:
    """Add ``experiment`` to the registry and return it.

    Raises
    ------
    ValueError
        If it is not an :class:`Experiment`, or its id is taken and ``replace`` is false.
    """
    if not isinstance(experiment, Experiment):
        raise ValueError(f"register takes an Experiment, got {type(experiment).__name__}")
    if experiment.id in _REGISTRY and not replace:
        raise ValueError(f"experiment id {experiment.id!r} is already registered")
    _REGISTRY[experiment.id] = experiment
    return experiment


def ids() -> tuple[str, ...]:
    """Every registered id, in registration order."""
    return tuple(_REGISTRY)


def list_experiments() -> tuple[Experiment, ...]:
    """Every registered :class:`Experiment`, in registration order."""
    return tuple(_REGISTRY.values())


def close_matches(experiment_id: str, n: int = 5) -> list[str]:
    """Registered ids closest to ``experiment_id`` (:func:`difflib.get_close_matches`, ignoring case)."""
    return difflib.get_close_matches(str(experiment_id).lower(), list(_REGISTRY), n=n, cutoff=0.5)


def get(experiment_id: str) -> Experiment:
    """The registered experiment ``experiment_id``.

    Raises
    ------
    ValueError
        For an unknown id; the message lists the closest registered ids.
    """
    if isinstance(experiment_id, str) and experiment_id in _REGISTRY:
        return _REGISTRY[experiment_id]
    matches = close_matches(experiment_id) if isinstance(experiment_id, str) else []
    hint = f"close matches: {', '.join(matches)}" if matches else "no close match"
    raise ValueError(
        f"unknown experiment id {experiment_id!r} ({hint}); `ldpkit list` shows all {len(_REGISTRY)} ids"
    )


def run(
    experiment: str | Experiment,
    config: RunConfig | None = None,
    *,
    draw: bool = True,
    **options: Any,
) -> ExperimentResult:
    """Run one experiment: compute its data and, for a figure, draw it.

    Parameters
    ----------
    experiment
        A registered id or an :class:`Experiment`.
    config
        The run's configuration; ``None`` uses the experiment's :attr:`~Experiment.defaults`
        (which reproduce the book).
    draw
        Draw the figure (ignored for tables).
    **options
        Passed to the compute function (e.g. ``cache`` for the ID-LDP experiments).

    Returns
    -------
    ExperimentResult
        With :attr:`~ExperimentResult.seconds`, the wall-clock time of the compute and draw
        functions.
    """
    exp = experiment if isinstance(experiment, Experiment) else get(experiment)
    if config is None:
        config = exp.defaults
    elif not isinstance(config, RunConfig):
        raise ValueError(f"config must be a RunConfig or None, got {type(config).__name__}")
    if not isinstance(draw, bool):
        raise ValueError(f"draw must be True or False, got {draw!r}")
    start = time.perf_counter()
    data = exp.compute(config, **options)
    if not isinstance(data, ExperimentData):
        raise TypeError(f"{exp.id}: compute returned {type(data).__name__}, expected ExperimentData")
    figure = exp.draw(data) if (draw and exp.draw is not None) else None
    seconds = time.perf_counter() - start
    return ExperimentResult(experiment=exp, config=config, data=data, figure=figure, seconds=seconds)
