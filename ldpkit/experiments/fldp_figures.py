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
figure draws one metric (:func:`draw_metric`) in three rows (datasets) of three panels (top-k
sizes), each with the four mechanisms in their book-wide colours and markers.  HR, OLH and OUE,
whose *standard LDP* epsilon (the accountant's) is their budget, are solid curves; FHR, whose
budget is an FLDP budget and whose LDP epsilon is infinite, is a dashed curve at its nominal
budget (the paper's comparison) and again in a shaded strip at ``eps = inf`` (the comparison at
equal LDP epsilon).
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
_YLABELS = {"kld": "KL divergence on the top k (nats)", "se": "squared error (frequency$^2$)",
            "re": "RE, median over the top k (ratio)", "ncr": "NCR (fraction, higher is better)"}
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
    smoothings = tuple(s for s in _protocol.KLD_SMOOTHINGS if s != _protocol.KLD_SMOOTHING)
    runs = {data.label: _protocol.run_epsilons(data.counts(), EPSILONS, config=base.offset_seed(i),
                                               kld_smoothings=smoothings)
            for i, data in enumerate(named.values())}
    extra = [f"kld@{s:g}" for s in smoothings]
    parts = {label: f.drop(columns=extra) for label, f in runs.items()}
    frames = [f.assign(dataset=label)[["dataset", *f.columns]] for label, f in runs.items()]
    full = pd.concat(frames, ignore_index=True)
    guar = _protocol.guarantees(_protocol.MECHANISMS, EPSILONS, named[ZIPF].m)
    keys = ["dataset", "epsilon", "repeat", "mechanism", "k"]
    return ExperimentData(full.drop(columns=extra), labels={k: d.label for k, d in named.items()},
                          standins=tuple(k for k, d in named.items() if d.is_standin), parts=parts,
                          meta={"n": {d.label: d.n for d in named.values()},
                                "items": {d.label: d.m for d in named.values()},
                                "epsilons": EPSILONS, "ks": _protocol.KS, "guarantees": guar,
                                "kld_smoothing": full[[*keys, "kld", *extra]]},
                          inputs=_inputs())


def compute_metrics(config: RunConfig) -> ExperimentData:
    """Figs. 2-5: the four metrics against the budget on the three datasets (one run, cached).

    ``meta["kld_smoothing"]`` holds the same runs' KLD at every smoothing of
    :data:`ldpkit.experiments.fldp.KLD_SMOOTHINGS` (columns ``kld`` and ``kld@<s>``), for the
    KLD verdicts (:func:`ldpkit.experiments.fldp.fhr_verdicts`); the frame and the parts hold
    the default smoothing only.
    """
    return _metrics(config)


# --------------------------------------------------------------------------- draw


@style.styled
def draw_metric(data: ExperimentData, metric: str) -> matplotlib.figure.Figure:
    """``metric`` against the budget: one row per dataset, one panel per top-k size.

    Each panel shows the four mechanisms in their book-wide colour and marker
    (:func:`ldpkit.experiments.style.mechanism_style`).  A mechanism is drawn at its nominal
    budget, solid where that is also its standard LDP epsilon (the accountant's) and dashed
    where it is not (FHR, an FLDP budget); a mechanism whose LDP epsilon is infinite is drawn
    again in the shaded strip at ``eps = inf``.  So the solid curves and the strip compare the
    mechanisms at equal LDP epsilon, and the dashed curve gives the paper's comparison at equal
    nominal budget.  For ``se`` open markers are simulated means and lines the exact
    expectations; otherwise lines join the simulated means.
    """
    if metric not in _protocol.METRICS:
        raise ValueError(f"unknown metric {metric!r}; choose from {_protocol.METRICS}")
    guar = data.meta["guarantees"].set_index(["mechanism", "epsilon"])["ldp_epsilon"]
    eps = list(data.meta["epsilons"])
    step = eps[1] - eps[0] if len(eps) > 1 else 0.5
    inf_x = eps[-1] + 2 * step
    ks = [int(k) for k in data.meta["ks"]]
    fig, rows = style.row_figure(list(data.parts), len(ks), 2.5, legend_height=1.1, sharey=True)
    mechanisms: list[str] = []
    any_inf = False
    for axes, frame in zip(rows, data.parts.values()):
        means = frame.groupby(["mechanism", "k", "epsilon"])[[metric, "se_theory"]].mean()
        drawn = list(dict.fromkeys(frame["mechanism"]))  # the paper's order (FHR first), then any other
        known = style.COLORS["fldp"]
        mechanisms = [m for m in known if m in drawn] + [m for m in drawn if m not in known]
        for ax, k in zip(axes, ks):
            strip = False
            for mech in mechanisms:
                sub = means.xs((mech, k), level=("mechanism", "k"))
                x = np.array(sub.index, dtype=float)
                ldp = np.array([guar[(mech, e)] for e in x], dtype=float)
                y = sub[metric].to_numpy()
                look: dict[str, Any] = {**style.mechanism_style(mech), "ms": style.MS_SMALL + 1, "mfc": "none"}
                nominal = np.isclose(ldp, x)
                ls = "-" if nominal.all() else "--"
                if metric == "se":
                    ax.plot(x, y, ls="none", **look)
                    ax.plot(x, sub["se_theory"].to_numpy(), ls=ls, lw=style.LW_DENSE, color=look["color"])
                else:
                    ax.plot(x, y, ls=ls, lw=style.LW_DENSE, **look)
                infinite = ~np.isfinite(ldp)
                if infinite.any():
                    strip = any_inf = True
                    ax.plot(np.full(int(infinite.sum()), inf_x), y[infinite], ls="none", **look)
                other = np.isfinite(ldp) & ~nominal
                if other.any():  # a finite LDP epsilon other than the budget: drawn there too
                    ax.plot(ldp[other], y[other], ls="none", **look)
            if metric != "ncr":
                ax.set_yscale("log")
            ticks = [e for e in eps if e >= 0.5 and (e * 2) % 1 == 0] or eps
            if strip:
                ax.axvspan(eps[-1] + 0.5 * step, inf_x + step, color=style.SHADE_GREY, zorder=0)
                ax.set_xticks([*ticks, inf_x], [*(f"{e:g}" for e in ticks), r"$\infty$"])
            ax.set_xlabel(r"budget $\varepsilon$ (nats)")
            ax.set_title(f"top {k}")
        axes[0].set_ylabel(_YLABELS[metric])
    handles = [style.mechanism_handle(m) if np.isclose(guar[m].to_numpy(), guar[m].index.to_numpy()).all()
               else style.mechanism_handle(m, f"{m} (dashed: FLDP budget)") for m in mechanisms]
    for h in handles:
        if "dashed" in str(h.get_label()):
            h.set_linestyle("--")
    handles = style.pad_row(handles, 4)
    if any_inf:
        handles.append(style.key_handle(r"shaded: LDP $\varepsilon = \infty$", lw=8, color=style.SHADE_GREY))
    if metric == "se":
        handles += [style.key_handle("simulated mean", ls="none", marker=style.SIMULATED_MARKER, mfc="none"),
                    style.key_handle("exact expectation")]
    style.legend_below(fig, handles, ncol=4, by_row=True)
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
