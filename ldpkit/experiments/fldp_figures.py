"""Tables 1-2 and Figs. 2-5 of the FLDP paper (``zhao2022fldp``): data, drawing and registration.

Each table or figure of Sec. 6 of the paper is one registered
:class:`~ldpkit.experiments.Experiment` (ids ``fldp-table1``, ``fldp-table2`` and
``fldp-fig2`` to ``fldp-fig5``).  The FLDP experiments chapter of the book
(:ref:`fldp-experiments`) runs them through :func:`ldpkit.experiments.run`.

``fldp-table1`` is the paper's Table 1 (notation) mapped to the book's symbols and ldpkit's
names, ``fldp-table2`` the measured cost of the paper's Table 2, ``fldp-datasets`` the
paper's datasets (Sec. 6.1) beside this build's.

Data.  ``Zipf`` is :func:`ldpkit.datasets.synthetic.fldp_zipf_items` (593,358 records,
exponent :data:`ZIPF_EXPONENT`, the paper's being illegible) drawn from
``numpy.random.default_rng(DATA_SEED)``.  ``Online`` is UCI Online Retail
(:func:`ldpkit.datasets.load_online_retail`, cleaned, one user per invoice line holding its
stock code), labelled ``"Online Retail"``: the paper's "Online" has 2,603 categories and
cannot be identified, so a public dataset of the same kind takes its place (said in the data's
notes and in the chapter).  ``Brown`` is the Brown corpus (:func:`ldpkit.datasets.load_brown`,
one user per token holding the word, case kept).  Both come from the data policy
(:func:`ldpkit.experiments.inputs.load_auto`): without the file, the labelled synthetic
stand-in (``"Online Retail (stand-in)"``, ``"Brown (stand-in)"``).  A
run's ``seed`` changes only the mechanisms' randomness; ``scale < 1`` keeps a seeded
subsample of each dataset (generator ``default_rng([DATA_SEED, 10 + i])`` for dataset
``i``).  Dataset ``i`` runs with the seed ``seed + i``.

Figs. 2-5 share one protocol run (:func:`compute_metrics`, cached per configuration): each
figure draws one metric in three rows (datasets) and two columns: left, every mechanism at
equal nominal budget (the paper's comparison); right, at equal *standard LDP* epsilon as
computed by the accountant, where FHR, whose LDP epsilon is infinite, can only be drawn at
``eps = inf``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .. import datasets as _datasets
from ..datasets.containers import SingleItemData
from . import fldp as _protocol
from . import style
from .config import RunConfig, subsample
from .inputs import identity, load_auto
from .comparison import Comparison
from .registry import Experiment, ExperimentData, register

if TYPE_CHECKING:  # pragma: no cover
    import matplotlib.figure

__all__ = [
    "BROWN",
    "COST_D",
    "COST_EPSILON",
    "COST_USERS",
    "DATASETS",
    "DATA_SEED",
    "EPSILONS",
    "ONLINE",
    "PAPER",
    "REPEATS",
    "ZIPF",
    "ZIPF_EXPONENT",
    "NOTATION",
    "compute_datasets",
    "compute_metrics",
    "compute_table1",
    "compute_table2",
    "base_dataset",
    "draw_metric",
    "load_dataset",
]

#: bibtex key of the paper
PAPER = "zhao2022fldp"
#: seed of the data (the Zipf draw)
DATA_SEED = 20220523
#: repeats per setting, the paper's "average results over 10 runs"
REPEATS = 10
#: Zipf exponent (the paper's is lost; 2 as in the other papers' Zipf data)
ZIPF_EXPONENT = 2.0
#: the budgets of Figs. 2-5, in the small range the paper motivates (its grid is lost)
EPSILONS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
#: users, items and budget of the cost measurement (Table 2)
COST_USERS = 1_000_000
COST_D = 1024
COST_EPSILON = 1.0
#: names of the datasets in ``Experiment.datasets``
ZIPF = "synthetic.fldp_zipf_items"
ONLINE = "online-retail"
BROWN = "brown"
#: the three datasets of the chapter, in the paper's order
DATASETS = (ZIPF, ONLINE, BROWN)
#: the paper's dataset sizes where legible (users, items); ``None``: lost in the extraction
PAPER_SIZES: Mapping[str, tuple[int | None, int | None]] = MappingProxyType(
    {ZIPF: (593_358, None), ONLINE: (None, 2_603), BROWN: (None, None)})
#: colours of the mechanisms (:data:`ldpkit.experiments.style.COLORS`; FHR green, as in the paper)
_COLORS = style.COLORS["fldp"]
_YLABELS = {"kld": "KLD on the top k", "se": "SE (frequency$^2$)", "re": "RE (median over the top k)",
            "ncr": "NCR"}
_DEFAULT_SEED = DATA_SEED + 1


# --------------------------------------------------------------------------- data


@functools.lru_cache(maxsize=1)
def _zipf() -> SingleItemData:
    data = _datasets.synthetic.fldp_zipf_items(n=593_358, a=ZIPF_EXPONENT, rng=np.random.default_rng(DATA_SEED))
    data.items.flags.writeable = False  # shared between calls
    return data


@functools.lru_cache(maxsize=2)
def _online(loaded: SingleItemData) -> SingleItemData:
    note = (f"in place of the paper's 'Online' data (2,603 categories, not identifiable): UCI Online Retail "
            f"invoice lines, {loaded.m:,} stock codes")
    return dataclasses.replace(loaded, notes=(*loaded.notes, note))


def base_dataset(name: str) -> SingleItemData:
    """One of :data:`DATASETS` as the experiments use it, before any subsample (module docstring).

    Online Retail and Brown come from the data policy (:func:`ldpkit.experiments.inputs.load_auto`):
    the real file, else the labelled synthetic stand-in.
    """
    if name not in DATASETS:
        raise ValueError(f"unknown FLDP dataset {name!r}; choose from {', '.join(DATASETS)}")
    if name == ZIPF:
        return _zipf()
    if name == ONLINE:
        return _online(cast(SingleItemData, load_auto(ONLINE, rng=DATA_SEED, unit="row")))
    return cast(SingleItemData, load_auto(BROWN, rng=DATA_SEED))


def load_dataset(name: str, scale: float = 1.0) -> SingleItemData:
    """:func:`base_dataset` at ``scale`` (see the module docstring)."""
    if name not in DATASETS:
        raise ValueError(f"unknown FLDP dataset {name!r}; choose from {', '.join(DATASETS)}")
    RunConfig(scale=scale)
    return subsample(base_dataset(name), scale, rng=np.random.default_rng([DATA_SEED, 10 + DATASETS.index(name)]))


def _named(scale: float) -> dict[str, SingleItemData]:
    return {name: load_dataset(name, scale) for name in DATASETS}


def _inputs() -> dict[str, Any]:
    """Dataset name -> identity of the data before any subsample (:func:`base_dataset`)."""
    return {name: identity(base_dataset(name)) for name in DATASETS}


# --------------------------------------------------------------------------- compute


#: the paper's Table 1 (its notation), our symbol and where ldpkit holds the quantity
NOTATION = (
    ("privacy budget", r"$\varepsilon$", "epsilon (FHR: fldp_epsilon)"),
    ("total number of users", "$n$", "counts.sum()"),
    ("domain of users' items", r"$\mathcal{D}$, $d = \lvert \mathcal{D} \rvert$", "d"),
    ("domain of the item via perturbation", r"$\mathcal{Y}$", "channel()"),
    ("value that user holds", "$x$", "items"),
    ("Hadamard matrices of order $2^k$", "$H_K$, $K = 2^k > d$", "sylvester(K), K"),
    ("vector sent via perturbation mechanism", "$v$ (FHR: the pair $(a, z)$)", "PairReports"),
    ("summation and correction of $v$", r"$D_i$, $\hat c_i = D_i / \tanh(\varepsilon/2)$",
     "aggregate, estimate_from_support"),
)


def compute_table1(config: RunConfig) -> ExperimentData:
    """Table 1 (the paper's notation): each entry, the book's symbol and ldpkit's name."""
    import pandas as pd

    frame = pd.DataFrame(NOTATION, columns=["the paper's definition", "symbol here", "ldpkit"])
    return ExperimentData(frame, labels={})


def compute_datasets(config: RunConfig) -> ExperimentData:
    """The datasets: users and items of the paper (where legible) beside this build's."""
    import pandas as pd

    named = _named(config.scale)
    table = pd.DataFrame({
        "dataset": [d.label for d in named.values()],
        "paper users": [PAPER_SIZES[k][0] for k in named],
        "paper items": [PAPER_SIZES[k][1] for k in named],
        "users": [d.n for d in named.values()],
        "items": [d.m for d in named.values()],
        "top-100 share": [float(np.sort(d.counts())[::-1][:100].sum() / d.n) for d in named.values()],
    }, index=["Zipf", "Online", "Brown"])
    return ExperimentData(table, labels={k: d.label for k, d in named.items()},
                          standins=tuple(k for k, d in named.items() if d.is_standin),
                          meta={"notes": {d.label: d.notes for d in named.values()}}, inputs=_inputs())


def compute_table2(config: RunConfig) -> ExperimentData:
    """Table 2, measured: bits per report and client and server time at :data:`COST_USERS` users.

    ``repeats`` timings per mechanism; the table holds the median of each time.  ``scale``
    scales the number of users.
    """
    import pandas as pd

    users = max(1, round(config.scale * COST_USERS))
    runs = [_protocol.measure_costs(users, COST_D, COST_EPSILON, rng=config.offset_seed(r).seed)
            for r in range(config.repeats)]
    frame = pd.concat(runs).groupby(level=0, sort=False).median()
    return ExperimentData(frame, labels={}, meta={"users": users, "d": COST_D, "epsilon": COST_EPSILON})


def _metrics(config: RunConfig) -> ExperimentData:
    # cached per configuration and per data actually loaded (the data policy may change between calls)
    return _metrics_for(config, tuple(base_dataset(name) for name in DATASETS))


@functools.lru_cache(maxsize=4)
def _metrics_for(config: RunConfig, bases: tuple[SingleItemData, ...]) -> ExperimentData:
    import pandas as pd

    named = _named(config.scale)
    base = config.replace(scale=1.0)
    parts = {data.label: _protocol.run_epsilons(data.counts(), EPSILONS, config=base.offset_seed(i))
             for i, data in enumerate(named.values())}
    frames = [f.assign(dataset=label)[["dataset", *f.columns]] for label, f in parts.items()]
    guar = _protocol.guarantees(_protocol.MECHANISMS, EPSILONS, named[ZIPF].m)
    return ExperimentData(pd.concat(frames, ignore_index=True), labels={k: d.label for k, d in named.items()},
                          standins=tuple(k for k, d in named.items() if d.is_standin), parts=parts,
                          meta={"n": {d.label: d.n for d in named.values()},
                                "items": {d.label: d.m for d in named.values()},
                                "epsilons": EPSILONS, "ks": _protocol.KS, "guarantees": guar},
                          inputs=_inputs())


def compute_metrics(config: RunConfig) -> ExperimentData:
    """Figs. 2-5: the four metrics against the budget on the three datasets (one run, cached)."""
    return _metrics(config)


# --------------------------------------------------------------------------- draw


@style.styled
def draw_metric(data: ExperimentData, metric: str) -> matplotlib.figure.Figure:
    """``metric`` against the budget: rows datasets, columns equal nominal budget and equal LDP epsilon.

    Colour: mechanism; marker: ``k``.  For ``se`` markers are simulated means and lines the
    exact expectations; otherwise lines join the simulated means.
    """
    from matplotlib.lines import Line2D

    if metric not in _protocol.METRICS:
        raise ValueError(f"unknown metric {metric!r}; choose from {_protocol.METRICS}")
    guar = data.meta["guarantees"].set_index(["mechanism", "epsilon"])["ldp_epsilon"]
    eps = list(data.meta["epsilons"])
    inf_x = eps[-1] + 2 * (eps[1] - eps[0])
    nrows = len(data.parts)
    fig, axes = style.figure(nrows, 2, 2.6 * nrows + 1.0)
    for row, (label, frame) in enumerate(data.parts.items()):
        means = frame.groupby(["mechanism", "k", "epsilon"])[[metric, "se_theory"]].mean()
        for col in (0, 1):
            ax = axes[2 * row + col]
            for (mech, k), sub in means.groupby(level=[0, 1]):
                x = np.array(sub.index.get_level_values("epsilon"), dtype=float)
                if col == 1:
                    ldp = np.array([guar[(mech, e)] for e in x])
                    x = np.where(np.isfinite(ldp), ldp, inf_x)
                y = sub[metric].to_numpy()
                marker = style.TOPK_MARKERS.get(int(k), style.TOPK_OTHER_MARKER)
                look: dict[str, Any] = dict(color=_COLORS[mech], marker=marker, ms=style.MS_SMALL)
                finite_x = col == 0 or mech != "FHR"
                if metric == "se":
                    ax.plot(x, y, ls="none", mfc="none", **look)
                    if finite_x:
                        ax.plot(x, sub["se_theory"].to_numpy(), "-", lw=style.LW_DENSE, color=_COLORS[mech])
                else:
                    ax.plot(x, y, ls="-" if finite_x else "none", lw=style.LW_DENSE, **look)
            if metric != "ncr":
                ax.set_yscale("log")
            if col == 0:
                ax.set_xlabel(r"budget $\varepsilon$ (FHR: FLDP; others: LDP)")
                ax.set_title(f"{label}: equal budget")
            else:
                ax.set_xticks([*eps[1::2], inf_x], [*(f"{e:g}" for e in eps[1::2]), r"$\infty$"])
                ax.axvspan(eps[-1] + 0.5 * (eps[1] - eps[0]), inf_x + (eps[1] - eps[0]), color=style.SHADE_GREY)
                ax.set_xlabel(r"standard LDP $\varepsilon$ (accountant)")
                ax.set_title(f"{label}: equal LDP " + r"$\varepsilon$")
            ax.set_ylabel(_YLABELS[metric])
    handles = [style.swatch(c, m) for m, c in _COLORS.items()]
    handles += [Line2D([], [], color=style.KEY_GREY, ls="none", marker=mk, label=f"top {k}")
                for k, mk in style.TOPK_MARKERS.items()]
    if metric == "se":
        handles += [Line2D([], [], color=style.KEY_GREY, lw=style.LW_DENSE, label="exact expectation")]
    style.legend_below(fig, handles, ncol=4)
    return fig


def _drawer(metric: str) -> Any:
    def draw(data: ExperimentData) -> matplotlib.figure.Figure:
        return draw_metric(data, metric)

    draw.__name__ = f"draw_{metric}"
    draw.__doc__ = f"The {metric.upper()} figure (:func:`draw_metric`)."
    return draw


# --------------------------------------------------------------------------- registration


def _defaults() -> RunConfig:
    return RunConfig(repeats=REPEATS, seed=_DEFAULT_SEED, scale=1.0)


register(Experiment("fldp-table1", "Notation of the paper, the book and ldpkit", PAPER, "Table 1", "table", (),
                    compute_table1, None, _defaults(), "sec-fldp-exp-notation"))
register(Experiment("fldp-datasets", "Datasets: users and items against the paper", PAPER, "Sec. 6.1 (datasets)",
                    "table", DATASETS, compute_datasets, None, _defaults(), "sec-fldp-exp-data"))
_TIMES = "wall-clock time: depends on the machine and its load"
register(Experiment("fldp-table2", "Communication and aggregation cost, measured", PAPER, "Table 2", "table", (),
                    compute_table2, None, RunConfig(repeats=1, seed=_DEFAULT_SEED), "sec-fldp-exp-cost",
                    Comparison(keys=("mechanism",), ignore={"perturb_s": _TIMES, "aggregate_s": _TIMES})))
for _number, _metric in zip((2, 3, 4, 5), _protocol.METRICS):
    register(Experiment(f"fldp-fig{_number}", f"{_metric.upper()} against the budget, top 20/50/100", PAPER,
                        f"Fig. {_number}", "figure", DATASETS, compute_metrics, _drawer(_metric), _defaults(),
                        f"sec-fldp-exp-fig{_number}",
                        Comparison(keys=("dataset", "epsilon", "mechanism", "k"), repeat="repeat",
                                   exact=("se_theory",))))
