"""Tables 1-2 and Figs. 2-4 of the IPLDP paper (``li2023ipldp``): data, drawing and registration.

Each table or figure of Sec. 7 of the paper is one registered
:class:`~ldpkit.experiments.Experiment` (ids ``ipldp-table1``, ``ipldp-table2`` and
``ipldp-fig2`` to ``ipldp-fig4``) with a ``compute_*`` function (runs the protocol of
:mod:`ldpkit.experiments.ipldp` and returns an :class:`~ldpkit.experiments.ExperimentData`)
and a ``draw_*`` function (a matplotlib figure created without ``pyplot``).  The IPLDP
experiments chapter of the book (:ref:`ipldp-experiments`) runs them through
:func:`ldpkit.experiments.run`.

Data.  ``Zipf`` is :func:`ldpkit.datasets.synthetic.zipf_items` (``n = 100,000``, 20 items,
exponent 2 as the paper says) drawn from ``numpy.random.default_rng(DATA_SEED)``.
``Kosarak`` follows the paper's reduction: one uniformly random item per user (generator
``default_rng([DATA_SEED, 1])``), then only the users whose item is among the
:data:`KOSARAK_ITEMS` most frequent such items are kept.  With the full FIMI file this gives
the real dataset.  Without it (the data policy, :func:`ldpkit.experiments.inputs.load_or_sample`)
the data are a **stand-in**: the same reduction applied to the Kosarak prefix when it is held
(``"Kosarak (prefix stand-in)"``), else to the synthetic Kosarak stand-in (``"Kosarak
(stand-in)"``), then :data:`KOSARAK_USERS` users (Table 1's count) drawn i.i.d. from the
reduced item distribution (generator ``default_rng([DATA_SEED, 2])``).  A run's ``seed`` changes only the
mechanisms' randomness and the user samples, never the data; ``scale < 1`` keeps a seeded
subsample of each dataset (:func:`~ldpkit.experiments.subsample` with the generator
``default_rng([DATA_SEED, 11])`` for Zipf and ``default_rng([DATA_SEED, 12])`` for Kosarak).
Dataset ``i`` of a figure (Zipf first) runs with the seed ``seed + i`` (Figs. 2 and 4:
``seed + 10 i + k`` for experiment ``#k``).

Drawing has the look of every figure of the book (:mod:`ldpkit.experiments.style`: width,
fonts, each mechanism's book-wide colour and marker, legends below the panels); exact expected
losses are lines drawn over the open markers of the simulated unbiased estimator.  Figs. 2 and 4
give each estimator its own panel (columns: empirical, NS, MLE), so that a panel shows at most
four mechanisms; Fig. 3 draws its two mechanisms under every estimator in one panel (NS dashed,
MLE dotted).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .. import datasets as _datasets
from ..budgets import IPLDP_EXPERIMENTS
from ..datasets.containers import SingleItemData
from . import ipldp as _protocol
from . import style
from .config import RunConfig, subsample
from .idldp import SolutionCache
from .inputs import identity, load_auto, load_or_sample
from .comparison import Comparison
from .registry import Experiment, ExperimentData, register

if TYPE_CHECKING:  # pragma: no cover
    import matplotlib.axes
    import matplotlib.figure
    import pandas as pd

__all__ = [
    "DATA_SEED",
    "DEFAULT_SEEDS",
    "KOSARAK",
    "KOSARAK_ITEMS",
    "KOSARAK_USERS",
    "NR_GRIDS",
    "PAPER",
    "REPEATS",
    "SR_GRID",
    "SR_GRID_FIG4",
    "ZIPF",
    "compute_fig2",
    "compute_fig3",
    "compute_fig4",
    "compute_table1",
    "compute_table2",
    "draw_fig2",
    "draw_fig3",
    "draw_fig4",
    "draw_losses",
    "base_dataset",
    "load_dataset",
    "prefix_reduction",
    "summary",
]

#: bibtex key of the paper
PAPER = "li2023ipldp"
#: seed of the data (the synthetic draw and the Kosarak reduction and stand-in)
DATA_SEED = 20230601
#: repeats per setting, the paper's "one hundred repeated experiments"
REPEATS = 100
#: name of the Zipf data in ``Experiment.datasets``
ZIPF = "synthetic.zipf_items"
#: name of the Kosarak data in ``Experiment.datasets``
KOSARAK = "kosarak"
#: items kept by the paper's Kosarak filter (Table 1)
KOSARAK_ITEMS = 100
#: users of the paper's reduced Kosarak (Table 1); the stand-in's size
KOSARAK_USERS = 646_510
#: sample ratios of experiments #1-#3 (Table 2 gives the range 0.2-1.0, not the step)
SR_GRID = (0.2, 0.4, 0.6, 0.8, 1.0)
#: sample ratios of experiment #5 (range 0.1-1.0)
SR_GRID_FIG4 = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
#: non-sensitive ratios of experiment #4 per dataset label name (Table 2 with its footnote)
NR_GRIDS: Mapping[str, tuple[float, ...]] = MappingProxyType({
    ZIPF: (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8),
    KOSARAK: (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
})
_STREAMS = {ZIPF: 1, KOSARAK: 2}

#: run seed of each experiment in the book (per-dataset offsets are in the module docstring)
DEFAULT_SEEDS: Mapping[str, int] = MappingProxyType({
    "ipldp-table1": DATA_SEED,
    "ipldp-table2": DATA_SEED,
    "ipldp-fig2": DATA_SEED + 2,
    "ipldp-fig3": DATA_SEED + 4,
    "ipldp-fig4": DATA_SEED + 6,
})

_RE_LABEL = "summed RE (ratio)"


# --------------------------------------------------------------------------- data


@functools.lru_cache(maxsize=1)
def _zipf() -> SingleItemData:
    data = _datasets.synthetic.zipf_items(n=100_000, m=20, alpha=2.0, rng=np.random.default_rng(DATA_SEED))
    data.items.flags.writeable = False  # shared between calls
    return data


def _reduce(data: Any, items: int) -> SingleItemData:
    """The paper's Kosarak reduction: a random item per user, then the top ``items`` items only."""
    single = data.random_items(rng=np.random.default_rng([DATA_SEED, 1]))
    counts = single.counts()
    top = np.lexsort((np.arange(counts.size), -counts))[:items]
    index = np.full(counts.size, -1, dtype=np.int64)
    index[np.sort(top)] = np.arange(items)
    kept = index[single.items]
    keep = kept >= 0
    note = (f"IPLDP reduction: one random item per user, then only users whose item is among the "
            f"{items} most frequent ({int(keep.sum()):,} of {single.n:,} users kept)")
    return dataclasses.replace(single, items=kept[keep], vocabulary=single.vocabulary[np.sort(top)],
                               notes=(*single.notes, note))


@functools.lru_cache(maxsize=2)
def _kosarak_from(base: Any, origin: str) -> SingleItemData:
    """Kosarak as the experiments use it, from what the data policy gave (see :func:`load_dataset`)."""
    reduced = _reduce(base, KOSARAK_ITEMS)
    if origin == "real":
        return reduced
    gen = np.random.default_rng([DATA_SEED, 2])
    items = gen.choice(KOSARAK_ITEMS, size=KOSARAK_USERS, p=reduced.counts() / reduced.n)
    what = "the Kosarak prefix" if origin == "prefix" else "a synthetic Kosarak stand-in"
    data = SingleItemData(
        items=items.astype(np.int64), vocabulary=reduced.vocabulary, name="Kosarak",
        source=f"stand-in built from {reduced.source}", origin=origin, files=reduced.files,
        notes=(*reduced.notes, f"stand-in: full Kosarak unavailable; {KOSARAK_USERS:,} users drawn i.i.d. from the "
               f"item distribution of {what} after the reduction ({reduced.n:,} users)"),
    )
    data.items.flags.writeable = False
    return data


def _kosarak() -> SingleItemData:
    base, origin = load_or_sample(KOSARAK, rng=DATA_SEED)
    return _kosarak_from(base, origin)


def prefix_reduction() -> SingleItemData | None:
    """The paper's reduction applied to the Kosarak prefix alone (what the prefix stand-in resamples).

    ``None`` when the prefix is not held.
    """
    if not _datasets.available("kosarak-prefix"):
        return None
    return _reduce(load_auto("kosarak-prefix"), KOSARAK_ITEMS)


def base_dataset(name: str) -> SingleItemData:
    """``"synthetic.zipf_items"`` or ``"kosarak"`` as the experiments use them, before any subsample.

    Kosarak comes from the data policy: the paper's reduction of the full file when it is held
    (or downloads), else the **prefix stand-in** (``"Kosarak (prefix stand-in)"``: the
    reduction of the held prefix, resampled to :data:`KOSARAK_USERS` users), else the same
    construction on the synthetic Kosarak stand-in (``"Kosarak (stand-in)"``).
    """
    if name not in _STREAMS:
        raise ValueError(f"unknown IPLDP dataset {name!r}; choose from {', '.join(_STREAMS)}")
    return _zipf() if name == ZIPF else _kosarak()


def load_dataset(name: str, scale: float = 1.0) -> SingleItemData:
    """:func:`base_dataset` at ``scale`` (see the module docstring)."""
    if name not in _STREAMS:
        raise ValueError(f"unknown IPLDP dataset {name!r}; choose from {', '.join(_STREAMS)}")
    RunConfig(scale=scale)  # validates scale
    data = base_dataset(name)
    return subsample(data, scale, rng=np.random.default_rng([DATA_SEED, 10 + _STREAMS[name]]))


def _result(named: Mapping[str, SingleItemData], parts: Mapping[str, pd.DataFrame], **meta: Any) -> ExperimentData:
    import pandas as pd

    labels = {name: data.label for name, data in named.items()}
    standins = tuple(name for name, data in named.items() if data.is_standin)
    frames = [frame.assign(dataset=label)[["dataset", *frame.columns]] for label, frame in parts.items()]
    return ExperimentData(pd.concat(frames, ignore_index=True), labels=labels, standins=standins, parts=parts,
                          meta={**meta, "n": {d.label: d.n for d in named.values()},
                                "items": {d.label: d.m for d in named.values()}}, inputs=_inputs(named))


def _inputs(named: Mapping[str, Any]) -> dict[str, Any]:
    """Dataset name -> identity of the data before any subsample (:func:`base_dataset`)."""
    return {name: identity(base_dataset(name)) for name in named}


def summary(frame: pd.DataFrame, by: str | Sequence[str]) -> pd.DataFrame:
    """Mean over repeats of ``mse``, ``re`` and ``mse_theory`` with the std. error of ``mse``.

    Grouped by ``by`` (e.g. ``["experiment", "sr"]``), mechanism and estimator.
    """
    keys = [*([by] if isinstance(by, str) else by), "mechanism", "estimator"]
    grouped = frame.groupby(keys, sort=False)
    out = grouped[["mse", "re", "mse_theory"]].mean()
    out["mse_se"] = grouped["mse"].std(ddof=1) / np.sqrt(grouped["mse"].count())
    return out


# --------------------------------------------------------------------------- compute


def compute_table1(config: RunConfig) -> ExperimentData:
    """Table 1: users and items of the paper beside this build's (``repeats``, ``seed`` unused)."""
    import pandas as pd

    named = {name: load_dataset(name, config.scale) for name in (ZIPF, KOSARAK)}
    table = pd.DataFrame({
        "dataset": [d.label for d in named.values()],
        "paper users": [100_000, 646_510],
        "paper items": [20, 100],
        "users": [d.n for d in named.values()],
        "items": [d.m for d in named.values()],
        "items with a zero count": [int((d.counts() == 0).sum()) for d in named.values()],
    }, index=["Zipf", "Kosarak"])
    return ExperimentData(table, labels={k: d.label for k, d in named.items()},
                          standins=tuple(k for k, d in named.items() if d.is_standin),
                          meta={"notes": {d.label: d.notes for d in named.values()}}, inputs=_inputs(named))


def compute_table2(config: RunConfig) -> ExperimentData:
    """Table 2: the paper's settings (:data:`ldpkit.budgets.IPLDP_EXPERIMENTS`) and the grids used here."""
    import pandas as pd

    def rng(value: Any) -> str:
        return f"{value[0]:.1f}-{value[1]:.1f}" if isinstance(value, tuple) else f"{value:.1f}"

    grids = {1: SR_GRID, 2: SR_GRID, 3: SR_GRID, 5: SR_GRID_FIG4}
    rows = []
    for ex in IPLDP_EXPERIMENTS:
        rows.append({
            "#": ex.number, "compared with": ", ".join(ex.compared_with), "eps_min": ex.eps_min,
            "eps_max": ex.eps_max, "LC": ex.lc, "NR (Zipf)": rng(ex.nr_zipf), "NR (Kosarak)": rng(ex.nr_kosarak),
            "SR": rng(ex.sr),
            "grid used here": (_grid_text(grids[ex.number]) if ex.number in grids
                               else "NR over each range, step 0.1"),
        })
    return ExperimentData(pd.DataFrame(rows).set_index("#"), labels={})


def _grid_text(grid: Sequence[float]) -> str:
    return f"SR {grid[0]:.1f} to {grid[-1]:.1f}, step {grid[1] - grid[0]:.1f}"


def _sr_runs(config: RunConfig, numbers: Sequence[int], srs: Sequence[float], mechanisms: Sequence[str],
             cache: SolutionCache | None) -> ExperimentData:
    named = {name: load_dataset(name, config.scale) for name in (ZIPF, KOSARAK)}
    base = config.replace(scale=1.0)
    cache = SolutionCache() if cache is None else cache
    parts = {}
    for i, data in enumerate(named.values()):
        frames = []
        for number in numbers:
            ex = IPLDP_EXPERIMENTS[number - 1]
            nr = ex.nr("Zipf" if data.name == "Zipf" else "Kosarak")
            frame = _protocol.run_sample_ratio(
                data.counts(), srs, eps_min=ex.eps_min, eps_max=ex.eps_max, lc=ex.lc, nr=float(cast(float, nr)),
                mechanisms=mechanisms, config=base.offset_seed(10 * i + number), cache=cache)
            frames.append(frame.assign(experiment=number)[["experiment", *frame.columns]])
        import pandas as pd

        parts[data.label] = pd.concat(frames, ignore_index=True)
    return _result(named, parts, srs=tuple(srs), experiments=tuple(numbers))


def compute_fig2(config: RunConfig, *, cache: SolutionCache | None = None) -> ExperimentData:
    """Fig. 2 (experiments #1-#3): IPRR, KRR and uRR against ``SR``, Zipf and Kosarak."""
    return _sr_runs(config, (1, 2, 3), SR_GRID, ("IPRR", "KRR", "URR"), cache)


def compute_fig3(config: RunConfig) -> ExperimentData:
    """Fig. 3 (experiment #4): IPRR and uRR against ``NR`` at ``SR = 1``."""
    named = {name: load_dataset(name, config.scale) for name in (ZIPF, KOSARAK)}
    ex = IPLDP_EXPERIMENTS[3]
    base = config.replace(scale=1.0)
    parts = {
        data.label: _protocol.run_nonsensitive_ratio(
            data.counts(), NR_GRIDS[name], eps_min=ex.eps_min, eps_max=ex.eps_max, lc=ex.lc,
            sr=float(cast(float, ex.sr)), config=base.offset_seed(i))
        for i, (name, data) in enumerate(named.items())
    }
    return _result(named, parts, nrs={named[k].label: v for k, v in NR_GRIDS.items()})


def compute_fig4(config: RunConfig, *, cache: SolutionCache | None = None) -> ExperimentData:
    """Fig. 4 (experiment #5): IPRR against IDUE (opt0, opt1, opt2) over ``SR``, ``NR = 0``."""
    return _sr_runs(config, (5,), SR_GRID_FIG4, ("IPRR", "IDUE-opt0", "IDUE-opt1", "IDUE-opt2"), cache)


# --------------------------------------------------------------------------- draw

#: the estimators of a run, in the order of the figures' columns, with their panel titles
_ESTIMATORS: Mapping[str, str] = MappingProxyType({"empirical": "empirical (unbiased)", "NS": "Norm-Sub (NS)",
                                                   "MLE": "MLE"})


def draw_losses(ax: matplotlib.axes.Axes, frame: pd.DataFrame, x: str, metric: str,
                estimators: Sequence[str] = ("empirical", "NS", "MLE")) -> list[str]:
    """Into ``ax``: ``metric`` against ``x`` per mechanism and estimator of ``estimators``.

    A mechanism has its book-wide colour and marker
    (:func:`ldpkit.experiments.style.mechanism_style`); an estimator its line style: NS
    dashed, MLE dotted (:data:`ldpkit.experiments.style.ESTIMATOR_STYLES`), and for the
    unbiased (``"empirical"``) estimator the simulation as open markers (every marker is open, as
    in the legend), with, for
    ``metric == "mse"``, its exact expectation as a solid line over them.  Returns the
    mechanisms drawn.
    """
    mechanisms = list(dict.fromkeys(frame["mechanism"]))
    means = frame.groupby([x, "mechanism", "estimator"])[[metric, "mse_theory"]].mean()
    for mech in mechanisms:
        look = style.mechanism_style(mech)
        for est in estimators:
            s = means.xs((mech, est), level=("mechanism", "estimator"))
            if est == "empirical":
                ax.plot(s.index, s[metric].values, ls="none" if metric == "mse" else "-", lw=style.LW_ESTIMATOR,
                        ms=style.MS_SIMULATED, mfc="none", mew=style.MEW_SIMULATED_IPLDP, **look)
                if metric == "mse":
                    ax.plot(s.index, s["mse_theory"].values, "-", lw=style.LW_EXACT_IPLDP, color=look["color"])
            else:
                ax.plot(s.index, s[metric].values, ls=style.ESTIMATOR_STYLES[est], ms=style.MS_SMALL,
                        lw=style.LW_ESTIMATOR, mfc="none", **look)  # open, as in the legend
    if metric == "re":
        style.ratio_axis(ax)
    else:
        ax.set_yscale("log")
    return mechanisms


def _legend(fig: matplotlib.figure.Figure, mechanisms: Sequence[str], *, estimator_keys: bool,
            labels: Mapping[str, str] | None = None) -> None:
    """Mechanisms (colour and marker, or the label of ``labels``), then the meaning of the line styles."""
    labels = labels or {}
    handles = style.pad_row([style.mechanism_handle(m, labels.get(m), line=False) for m in mechanisms], 4)
    handles.append(style.key_handle("empirical: simulated", ls="none", marker=style.SIMULATED_MARKER, mfc="none"))
    handles.append(style.key_handle("empirical: exact (MSE)", lw=style.LW_EXACT_IPLDP))
    if estimator_keys:
        handles += [style.key_handle(est, ls=ls) for est, ls in style.ESTIMATOR_STYLES.items()]
    style.legend_below(fig, handles, ncol=4, by_row=True)


def _estimator_rows(rows: Sequence[tuple[pd.DataFrame, str]], x: str, xlabel: str,
                    titles: Sequence[str], labels: Mapping[str, str] | None = None) -> matplotlib.figure.Figure:
    """One row per ``(frame, metric)`` of ``rows`` (titled ``titles``), one panel per estimator."""
    fig, axes = style.row_figure(titles, len(_ESTIMATORS), 2.0, legend_height=0.9, sharey=True)
    mechanisms: list[str] = []
    for row, (frame, metric) in zip(axes, rows):
        for ax, (est, title) in zip(row, _ESTIMATORS.items()):
            mechanisms = draw_losses(ax, frame, x, metric, (est,))
            ax.set(xlabel=xlabel, title=title)
        row[0].set_ylabel(style.MSE_LABEL if metric == "mse" else _RE_LABEL)
    _legend(fig, mechanisms, estimator_keys=False, labels=labels)
    return fig


#: the IDUE models of Fig. 4 (experiment #5)
IDUE_MODELS = ("IDUE-opt0", "IDUE-opt1", "IDUE-opt2")
#: Fig. 4 draws the IDUE models as one curve (their mean) when their exact MSEs differ by less than this
#: (relative) at every point: their mechanisms then nearly coincide, and on log axes spanning decades
#: their curves would lie on one another
IDUE_COINCIDE = 0.05


def idue_spread(frame: pd.DataFrame) -> float:
    """The largest relative spread ``max / min - 1`` of the IDUE models' exact MSE at one point of ``frame``.

    A point is a dataset and a sample ratio (the exact MSE, column ``mse_theory``, is that of
    the unbiased estimator).
    """
    idue = frame[frame["mechanism"].isin(IDUE_MODELS)]
    keys = [k for k in ("dataset", "sr") if k in idue.columns]
    means = idue.groupby([*keys, "mechanism"])["mse_theory"].mean().unstack("mechanism")
    return float((means.max(axis=1) / means.min(axis=1) - 1).max())


@style.styled
def draw_fig2(data: ExperimentData) -> matplotlib.figure.Figure:
    """MSE against ``SR``: one row per dataset and experiment (#1-#3), one panel per estimator."""
    numbers = data.meta["experiments"]
    rows, titles = [], []
    for label, frame in data.parts.items():
        for number in numbers:
            ex = IPLDP_EXPERIMENTS[number - 1]
            rows.append((frame[frame["experiment"] == number], "mse"))
            titles.append(rf"{label}: #{number}, budgets $\varepsilon$ {ex.eps_min:g} to {ex.eps_max:g}")
    return _estimator_rows(rows, "sr", "sample ratio SR (fraction)", titles)


@style.styled
def draw_fig3(data: ExperimentData) -> matplotlib.figure.Figure:
    """MSE and RE against ``NR`` (experiment #4), one row per dataset, every estimator in a panel."""
    fig, axes = style.figure(len(data.parts), 2, 2.9 * len(data.parts) + 1.0)
    mechanisms: list[str] = []
    for j, (label, frame) in enumerate(data.parts.items()):
        for k, metric in enumerate(("mse", "re")):
            ax = axes[2 * j + k]
            mechanisms = draw_losses(ax, frame, "nr", metric)
            ax.set(xlabel="non-sensitive ratio NR (fraction of items)",
                   ylabel=style.MSE_LABEL if metric == "mse" else _RE_LABEL, title=f"{label}: {metric.upper()}")
    _legend(fig, mechanisms, estimator_keys=True)
    return fig


@style.styled
def draw_fig4(data: ExperimentData) -> matplotlib.figure.Figure:
    """MSE and RE against ``SR`` for IPRR and IDUE (experiment #5): rows dataset and metric, panels estimators."""
    together = idue_spread(data.frame) < IDUE_COINCIDE
    one = {m: IDUE_MODELS[0] for m in IDUE_MODELS}
    rows, titles = [], []
    for label, frame in data.parts.items():
        if together:  # one curve: the three models' mean
            frame = frame.assign(mechanism=frame["mechanism"].replace(one))
        for metric in ("mse", "re"):
            rows.append((frame, metric))
            titles.append(f"{label}: {metric.upper()}")
    labels = {IDUE_MODELS[0]: "IDUE opt0, opt1, opt2 (coincide: their mean)"} if together else None
    return _estimator_rows(rows, "sr", "sample ratio SR (fraction)", titles, labels)


# --------------------------------------------------------------------------- registration


def _defaults(experiment_id: str) -> RunConfig:
    return RunConfig(repeats=REPEATS, seed=DEFAULT_SEEDS[experiment_id], scale=1.0)


def _compare(setting: str) -> Comparison:
    """How ``ldpkit check`` compares a rerun: per (dataset, setting, mechanism, estimator), mean over repeats."""
    return Comparison(keys=("dataset", *setting.split(","), "n", "mechanism", "estimator"), repeat="repeat",
                      exact=("mse_theory",))


register(Experiment("ipldp-table1", "Datasets: users and items against the paper", PAPER, "Table 1", "table",
                    (ZIPF, KOSARAK), compute_table1, None, _defaults("ipldp-table1"), "sec-ipldp-table1"))
register(Experiment("ipldp-table2", "Parameter settings of experiments #1-#5", PAPER, "Table 2", "table", (),
                    compute_table2, None, _defaults("ipldp-table2"), "sec-ipldp-table2"))
register(Experiment("ipldp-fig2", "IPRR, KRR and uRR against the sample ratio (#1-#3)", PAPER, "Fig. 2",
                    "figure", (ZIPF, KOSARAK), compute_fig2, draw_fig2, _defaults("ipldp-fig2"), "sec-ipldp-fig2", _compare("experiment,sr")))
register(Experiment("ipldp-fig3", "IPRR and uRR against the non-sensitive ratio (#4)", PAPER, "Fig. 3",
                    "figure", (ZIPF, KOSARAK), compute_fig3, draw_fig3, _defaults("ipldp-fig3"), "sec-ipldp-fig3", _compare("nr")))
register(Experiment("ipldp-fig4", "IPRR against IDUE opt0, opt1, opt2 (#5)", PAPER, "Fig. 4", "figure",
                    (ZIPF, KOSARAK), compute_fig4, draw_fig4, _defaults("ipldp-fig4"), "sec-ipldp-fig4", _compare("experiment,sr")))
