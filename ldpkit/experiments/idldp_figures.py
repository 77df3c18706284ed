"""Table II and Figs. 2-8 of the ID-LDP paper (``gu2020idldp``): data, drawing and registration.

Each figure or table of Sec. VII of the paper is one registered
:class:`~ldpkit.experiments.Experiment` (ids ``idldp-table2`` and ``idldp-fig2`` to
``idldp-fig8``) with a ``compute_*`` function (runs the protocol of
:mod:`ldpkit.experiments.idldp` on the datasets and returns an
:class:`~ldpkit.experiments.ExperimentData`) and a ``draw_*`` function (a matplotlib
figure, created without ``pyplot``).  The ID-LDP experiments chapter of the book
(:ref:`idldp-experiments`) runs them through :func:`ldpkit.experiments.run` and shows these
functions' source.

Data and seeds.  The datasets are part of each experiment's definition and are fixed by
:data:`DATA_SEED` (the chapter's ``SEED = 20200420``): the synthetic Power-law and Uniform data
are drawn, in that order, from one generator ``numpy.random.default_rng(DATA_SEED)``, and the real
datasets are loaded by the data policy (:func:`ldpkit.experiments.inputs.load_auto`, stand-in seed
``DATA_SEED``): the real file, else for Kosarak the stand-in resampled from its real prefix when
that is held (``"Kosarak (prefix stand-in)"``), else the synthetic stand-in.
A run's :class:`~ldpkit.experiments.RunConfig` ``seed`` (``ldpkit reproduce --seed``)
changes only the randomness of the mechanisms (budget-level draws, perturbation, padding
samples), never the data.  An experiment that runs the protocol on several datasets seeds the
``i``-th run with ``seed + i``.  The default seeds (:data:`DEFAULT_SEEDS`) are those of the book,
so the defaults reproduce its numbers exactly.

Scale.  With ``config.scale < 1`` every dataset is replaced by :func:`load_dataset`'s seeded
subsample of ``round(scale * n)`` of its users (uniform without replacement, original order kept,
item domain unchanged), drawn by ``numpy.random.default_rng([DATA_SEED, stream])`` where
``stream`` is a fixed number per dataset (:data:`SUBSAMPLE_STREAMS`), so the subsample does not
depend on ``--seed`` either.  Item-set data are subsampled before the single-item reduction.

Metadata.  The data of every figure records ``meta["n"]`` (dataset label -> the number of users
entering the run: users with at least one item for single-item runs) and ``meta["items"]``
(label -> the item domain size ``m``), for captions
(:meth:`~ldpkit.experiments.ExperimentResult.caption_facts`) and the chapter's checks.

Drawing.  Every figure has the look of :mod:`ldpkit.experiments.style` (width, fonts, each
mechanism's book-wide colour and marker, legends below the panels); where a panel shows eq. (7)
against simulation, the theory is a line drawn over the simulated open markers.

Stand-ins.  When a real file is missing, the stand-in is used without a
:class:`~ldpkit.datasets.StandInWarning`: it is reported by the result instead
(``ExperimentData.standins``) and named in every title through its ``label``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import datasets as _datasets
from ..datasets.containers import ItemSetData, SingleItemData
from . import idldp as _protocol
from . import style
from .config import RunConfig, subsample
from .inputs import identity, load_auto
from .comparison import Comparison
from .registry import Experiment, ExperimentData, register

if TYPE_CHECKING:  # pragma: no cover
    import matplotlib.axes
    import matplotlib.figure
    import pandas as pd

__all__ = [
    "DATA_SEED",
    "DEFAULT_SEEDS",
    "ELLS_FIG7",
    "ELLS_FIG8",
    "ELL_FIG6",
    "EPS_FIG4",
    "EPS_GRID",
    "EPS_LARGE_FIG5",
    "EPS_PADDING",
    "EPS_RIGHT_FIG6",
    "EPS_SMALL_FIG5",
    "KS_FIG4",
    "KS_FIG6",
    "PAPER",
    "POWER_LAW",
    "REPEATS",
    "SHARES_FIG5",
    "SUBSAMPLE_STREAMS",
    "UNIFORM",
    "compute_fig2",
    "compute_fig3",
    "compute_fig4",
    "compute_fig5",
    "compute_fig6",
    "compute_fig7",
    "compute_fig8",
    "compute_table2",
    "draw_fig2",
    "draw_fig3",
    "draw_fig4",
    "draw_fig5",
    "draw_fig6",
    "draw_fig7",
    "draw_fig8",
    "draw_padding_length",
    "draw_padding_lengths",
    "base_dataset",
    "load_dataset",
    "theory_gap",
]

#: bibtex key of the paper
PAPER = "gu2020idldp"
#: seed of the data (synthetic draws and stand-ins), the chapter's ``SEED``
DATA_SEED = 20200420
#: repeats per setting (the paper uses ten)
REPEATS = 10
#: minimum budgets of Figs. 2, 3 and 6 (the paper does not give its grid)
EPS_GRID = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0)
#: the fixed minimum budget of Fig. 4
EPS_FIG4 = 1.0
#: the top-k sizes of Fig. 4
KS_FIG4 = (10, 20, 30, 40, 50, 60, 70, 80, 90, 100)
#: shares of items at the smaller budget in Fig. 5
SHARES_FIG5 = (0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0)
#: the smaller budget of Fig. 5 (RAPPOR and OUE run at it)
EPS_SMALL_FIG5 = 1.0
#: the larger budget of Fig. 5
EPS_LARGE_FIG5 = 2.0
#: the top-k sizes of Fig. 6
KS_FIG6 = (10, 20, 30, 40, 50)
#: the padding length of Fig. 6
ELL_FIG6 = 2
#: the minimum budget of the right panels of Fig. 6
EPS_RIGHT_FIG6 = 2.0
#: minimum budgets of Figs. 7 and 8
EPS_PADDING = (0.5, 1.0, 2.0, 4.0)
#: padding lengths of Fig. 7
ELLS_FIG7 = (1, 2, 3, 4, 6, 8)
#: padding lengths of Fig. 8
ELLS_FIG8 = (1, 2, 5, 10, 15, 20, 30)

#: run seed of each experiment in the book (``DATA_SEED`` plus the chapter's offsets)
DEFAULT_SEEDS: Mapping[str, int] = MappingProxyType({
    "idldp-table2": DATA_SEED,
    "idldp-fig2": DATA_SEED + 2,  # Power-law; Uniform uses + 3
    "idldp-fig3": DATA_SEED + 4,  # Retail; Kosarak uses + 5
    "idldp-fig4": DATA_SEED + 10,  # Retail; Kosarak uses + 11
    "idldp-fig5": DATA_SEED + 20,
    "idldp-fig6": DATA_SEED + 30,
    "idldp-fig7": DATA_SEED + 40,
    "idldp-fig8": DATA_SEED + 50,
})

#: name of the synthetic Power-law data in ``Experiment.datasets``
POWER_LAW = "synthetic.power_law_items"
#: name of the synthetic Uniform data in ``Experiment.datasets``
UNIFORM = "synthetic.uniform_items"
#: fixed stream number of each dataset's subsample generator ``default_rng([DATA_SEED, stream])``
SUBSAMPLE_STREAMS: Mapping[str, int] = MappingProxyType(
    {POWER_LAW: 1, UNIFORM: 2, "retail": 3, "kosarak": 4, "clothing": 5}
)

# --------------------------------------------------------------------------- data


@functools.lru_cache(maxsize=1)
def _synthetic() -> tuple[SingleItemData, SingleItemData]:
    """Power-law then Uniform, from one generator seeded with DATA_SEED (as the chapter did)."""
    gen = np.random.default_rng(DATA_SEED)
    power = _datasets.synthetic.power_law_items(n=100_000, m=100, rng=gen)
    uniform = _datasets.synthetic.uniform_items(n=100_000, m=1_000, rng=gen)
    for data in (power, uniform):
        data.items.flags.writeable = False  # shared between calls
    return power, uniform


def base_dataset(name: str) -> SingleItemData | ItemSetData:
    """One dataset of the ID-LDP experiments as loaded, before any subsample.

    The synthetic data are generated as the module docstring says; the real datasets come from
    the data policy (:func:`ldpkit.experiments.inputs.load_auto`, stand-in seed
    :data:`DATA_SEED`): the real file, else ``"Kosarak (prefix stand-in)"`` for Kosarak when
    its prefix is held, else the labelled synthetic stand-in.
    """
    if name not in SUBSAMPLE_STREAMS:
        known = ", ".join(SUBSAMPLE_STREAMS)
        raise ValueError(f"unknown ID-LDP dataset {name!r}; choose from {known}")
    if name == POWER_LAW:
        return _synthetic()[0]
    if name == UNIFORM:
        return _synthetic()[1]
    return load_auto(name, rng=DATA_SEED)


def load_dataset(
    name: str, scale: float = 1.0
) -> SingleItemData | ItemSetData:
    """One dataset of the ID-LDP experiments, at ``scale``.

    See the module docstring for the seeds and the subsample.

    Parameters
    ----------
    name
        ``"synthetic.power_law_items"``,
        ``"synthetic.uniform_items"`` (Table II's Power-law and
        Uniform data, ``n = 100,000``) or ``"retail"``,
        ``"kosarak"``, ``"clothing"`` (:func:`base_dataset`).
    scale
        Fraction in ``(0, 1]`` of the users kept
        (:func:`~ldpkit.experiments.subsample` with the generator
        ``default_rng([DATA_SEED, SUBSAMPLE_STREAMS[name]])``).
    """
    data = base_dataset(name)
    return subsample(
        data,
        scale,
        rng=np.random.default_rng(
            [DATA_SEED, SUBSAMPLE_STREAMS[name]]
        ),
    )


def _itemsets(name: str, scale: float) -> ItemSetData:
    data = load_dataset(name, scale)
    assert isinstance(data, ItemSetData)
    return data


def _single(name: str, scale: float) -> SingleItemData:
    data = load_dataset(name, scale)
    assert isinstance(data, SingleItemData)
    return data


def _tidy(parts: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One frame with a leading ``dataset`` column (the label) from per-dataset frames."""
    import pandas as pd

    frames = [frame.assign(dataset=label)[["dataset", *frame.columns]] for label, frame in parts.items()]
    return pd.concat(frames, ignore_index=True)


def _result(named: Mapping[str, SingleItemData | ItemSetData], parts: Mapping[str, pd.DataFrame],
            **meta: Any) -> ExperimentData:
    """The experiment's data; ``meta["items"]`` (label -> m) is added to the given ``meta``."""
    labels = {name: data.label for name, data in named.items()}
    standins = tuple(name for name, data in named.items() if data.is_standin)
    items = {data.label: data.m for data in named.values()}
    return ExperimentData(_tidy(parts), labels=labels, standins=standins, parts=parts,
                          meta={**meta, "items": items}, inputs=_inputs(named))


def _inputs(named: Mapping[str, Any]) -> dict[str, Any]:
    """Dataset name -> identity of the data as loaded (:func:`base_dataset`)."""
    return {name: identity(base_dataset(name)) for name in named}


def _cache(cache: _protocol.SolutionCache | None) -> _protocol.SolutionCache:
    return _protocol.SolutionCache() if cache is None else cache


def theory_gap(
    frame: pd.DataFrame, by: str | Sequence[str]
) -> float:
    """Largest gap of simulated and exact mean MSE, in std. errors.

    Groups the rows by mechanism and ``by``; in each group compares
    the mean of ``mse`` with the mean of ``mse_theory`` and divides
    by the standard error ``std(mse) / sqrt(repeats)``.  NaN with
    one repeat.
    """
    keys = ["mechanism", *([by] if isinstance(by, str) else by)]
    grouped = frame.groupby(keys)
    emp, theo = grouped["mse"].mean(), grouped["mse_theory"].mean()
    se = grouped["mse"].std(ddof=1) / np.sqrt(
        grouped["mse"].count()
    )
    return float(np.max(np.abs(emp - theo) / se))


# --------------------------------------------------------------------------- compute


def compute_table2(config: RunConfig) -> ExperimentData:
    """Table II: the paper's n, m and records beside ours.

    Rows Power-law, Uniform, Retail, Kosarak, Clothing; columns
    ``("this build", "data")`` (the label), the paper's ``records``,
    ``n``, ``m``, and this build's ``records``, ``n``, ``m``,
    ``mean size``, ``max size`` (at ``config.scale``).
    ``meta["standin_rows"]`` names the rows built from stand-ins;
    ``repeats`` and ``seed`` are not used.
    """
    import pandas as pd

    rows = {
        "Power-law": POWER_LAW,
        "Uniform": UNIFORM,
        "Retail": "retail",
        "Kosarak": "kosarak",
        "Clothing": "clothing",
    }
    data = {
        name: load_dataset(name, config.scale)
        for name in rows.values()
    }
    paper = pd.DataFrame(
        {
            "records": [
                100_000,
                100_000,
                908_576,
                8_019_015,
                192_544,
            ],
            "n": [100_000, 100_000, 88_162, 990_002, 105_508],
            "m": [100, 1_000, 16_470, 41_270, 5_850],
        },
        index=list(rows),
    )
    ours = pd.DataFrame(
        [data[name].summary() for name in rows.values()]
    )
    ours.index = paper.index
    table = pd.concat(
        {
            "paper": paper,
            "this build": ours[
                ["records", "n", "m", "mean size", "max size"]
            ],
        },
        axis=1,
    )
    table.insert(
        0,
        ("this build", "data"),
        [data[name].label for name in rows.values()],
    )
    standin_rows = tuple(
        row for row, name in rows.items() if data[name].is_standin
    )
    return ExperimentData(
        table,
        labels={name: d.label for name, d in data.items()},
        standins=tuple(rows[row] for row in standin_rows),
        meta={"standin_rows": standin_rows},
        inputs=_inputs(data),
    )


def compute_fig2(
    config: RunConfig,
    *,
    cache: _protocol.SolutionCache | None = None,
) -> ExperimentData:
    """Fig. 2: every single-item mechanism, Power-law and Uniform.

    Over :data:`EPS_GRID`.
    """
    cache = _cache(cache)
    named = {
        name: _single(name, config.scale)
        for name in (POWER_LAW, UNIFORM)
    }
    base = config.replace(scale=1.0)
    parts = {
        data.label: _protocol.run_single_item(
            data.counts(),
            EPS_GRID,
            ks=(20,),
            config=base.offset_seed(i),
            cache=cache,
        )
        for i, data in enumerate(named.values())
    }
    return _result(
        named, parts, n={d.label: d.n for d in named.values()}
    )


def _first_items_runs(
    config: RunConfig,
    names: Iterable[str],
    epsilons: Sequence[float],
    ks: Sequence[int],
    cache: _protocol.SolutionCache | None,
) -> ExperimentData:
    cache = _cache(cache)
    named = {name: _itemsets(name, config.scale) for name in names}
    base = config.replace(scale=1.0)
    parts = {}
    n = {}  # users entering the run (those with at least one item)
    for i, data in enumerate(named.values()):
        single = data.first_items()
        parts[data.label] = _protocol.run_single_item(
            single.counts(),
            epsilons,
            mechanisms=("RAPPOR", "OUE", "IDUE-opt0"),
            ks=ks,
            config=base.offset_seed(i),
            cache=cache,
        )
        n[data.label] = single.n
    return _result(
        named, parts, ks=tuple(ks), epsilons=tuple(epsilons), n=n
    )


def compute_fig3(
    config: RunConfig,
    *,
    cache: _protocol.SolutionCache | None = None,
) -> ExperimentData:
    """Fig. 3: RAPPOR, OUE and IDUE (opt0), Retail and Kosarak.

    First item of each user, over :data:`EPS_GRID`.
    """
    return _first_items_runs(
        config, ("retail", "kosarak"), EPS_GRID, (20,), cache
    )


def compute_fig4(
    config: RunConfig,
    *,
    cache: _protocol.SolutionCache | None = None,
) -> ExperimentData:
    """Fig. 4: as Fig. 3 at one budget, RE of the top k.

    At ``eps =`` :data:`EPS_FIG4`, for ``k`` in :data:`KS_FIG4`.
    """
    return _first_items_runs(
        config, ("retail", "kosarak"), (EPS_FIG4,), KS_FIG4, cache
    )


def compute_fig5(
    config: RunConfig,
    *,
    cache: _protocol.SolutionCache | None = None,
) -> ExperimentData:
    """Fig. 5: two budgets 1 < 2 on the Retail first items.

    Varies the share of items at the smaller budget.
    """
    retail = _itemsets("retail", config.scale)
    single = retail.first_items()
    frame = _protocol.run_budget_shares(
        single.counts(),
        SHARES_FIG5,
        eps_small=EPS_SMALL_FIG5,
        eps_large=EPS_LARGE_FIG5,
        ks=(50,),
        config=config.replace(scale=1.0),
        cache=_cache(cache),
    )
    return _result(
        {"retail": retail},
        {retail.label: frame},
        shares=SHARES_FIG5,
        n={retail.label: single.n},
    )


def compute_fig6(
    config: RunConfig,
    *,
    cache: _protocol.SolutionCache | None = None,
) -> ExperimentData:
    """Fig. 6: RAPPOR-PS, OUE-PS and IDUE-PS, Clothing item sets.

    Padding length ``ell = 2``; the frame has ``mse_theory``.
    """
    clothing = _itemsets("clothing", config.scale)
    frame = _protocol.run_itemsets(
        clothing.sets,
        EPS_GRID,
        (ELL_FIG6,),
        ks=KS_FIG6,
        theory=True,
        config=config.replace(scale=1.0),
        cache=_cache(cache),
    )
    return _result(
        {"clothing": clothing},
        {clothing.label: frame},
        m=clothing.m,
        ks=KS_FIG6,
        n={clothing.label: clothing.n},
    )


def _padding_run(
    config: RunConfig,
    name: str,
    ells: Sequence[int],
    k: int,
    cache: _protocol.SolutionCache | None,
) -> ExperimentData:
    data = _itemsets(name, config.scale)
    frame = _protocol.run_itemsets(
        data.sets,
        EPS_PADDING,
        ells,
        mechanisms=("IDUE-PS",),
        ks=(k,),
        config=config.replace(scale=1.0),
        cache=_cache(cache),
    )
    return _result(
        {name: data},
        {data.label: frame},
        k=k,
        ells=tuple(ells),
        epsilons=EPS_PADDING,
        n={data.label: data.n},
    )


def compute_fig7(
    config: RunConfig,
    *,
    cache: _protocol.SolutionCache | None = None,
) -> ExperimentData:
    """Fig. 7: IDUE-PS on Clothing, RE of the top 20 by ``ell``."""
    return _padding_run(config, "clothing", ELLS_FIG7, 20, cache)


def compute_fig8(
    config: RunConfig,
    *,
    cache: _protocol.SolutionCache | None = None,
) -> ExperimentData:
    """Fig. 8: IDUE-PS on Kosarak, RE of the top 100 by ``ell``."""
    return _padding_run(config, "kosarak", ELLS_FIG8, 100, cache)


# --------------------------------------------------------------------------- draw


def _look(mech: Any, **extra: Any) -> dict[str, Any]:
    """The mechanism's colour and marker (:func:`ldpkit.experiments.style.mechanism_style`), open markers."""
    return {**style.mechanism_style(str(mech)), "mfc": "none", "ms": style.MS_SIMULATED,
            "mew": style.MEW_SIMULATED, **extra}


def _mechanism_legend(fig: matplotlib.figure.Figure, mechanisms: Sequence[str], *,
                      styles: Sequence[tuple[str, str]] = (), ncol: int = 4) -> None:
    """One legend under the panels: an entry per mechanism (colour, marker), then line-style entries.

    ``styles`` pairs a style (``"line"`` or ``"markers"``) with its meaning, drawn in grey.
    """
    handles = [style.mechanism_handle(m) for m in mechanisms]
    if styles and len(handles) > ncol:
        handles = style.pad_row(handles, ncol)
    for kind, meaning in styles:
        if kind == "line":
            handles.append(style.key_handle(meaning, lw=style.LW_KEY))
        else:
            handles.append(style.key_handle(meaning, ls="none", marker=style.SIMULATED_MARKER, mfc="none"))
    # the entries read row by row: mechanisms first, then the styles
    style.legend_below(fig, handles, ncol=ncol, by_row=True)


def _mechanisms(frame: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(frame["mechanism"]))


def _theory_and_simulation(ax: matplotlib.axes.Axes, x: Any, theory: Any, simulated: Any, mech: Any) -> None:
    """Simulation as the mechanism's open markers, theory as a line drawn on top of them (never hidden)."""
    look = _look(mech)
    ax.plot(x, simulated, ls="none", zorder=2, **look)
    ax.plot(x, theory, "-", lw=style.LW_EXACT, color=look["color"], zorder=3)


def _means(ax: matplotlib.axes.Axes, x: Any, y: Any, mech: Any) -> None:
    """Simulated means joined by a line, the mechanism's open markers."""
    ax.plot(x, y, "-", lw=style.LW_DENSE, **_look(mech))


@style.styled
def draw_fig2(data: ExperimentData) -> matplotlib.figure.Figure:
    """MSE: eq. (7) (lines) and simulation (open markers) by dataset."""
    fig, axes = style.figure(1, 2, 3.9)
    mechanisms: list[str] = []
    for ax, (label, frame) in zip(axes, data.parts.items()):
        mechanisms = _mechanisms(frame)
        for mech, grp in frame.groupby("mechanism", sort=False):
            by = grp.groupby("eps")
            emp, theo = by["mse"].mean(), by["mse_theory"].mean()
            _theory_and_simulation(ax, theo.index, theo.values, emp.values, mech)
        ax.set_yscale("log")
        ax.set_xlabel(style.EPS_LABEL)
        ax.set_ylabel(style.MSE_LABEL)
        ax.set_title(f"{label}, n = {data.meta['n'][label]:,}")
    _mechanism_legend(fig, mechanisms, styles=(("line", "eq. (7)"), ("markers", "simulated")), ncol=4)
    return fig


@style.styled
def draw_fig3(data: ExperimentData) -> matplotlib.figure.Figure:
    """MSE and RE of the top 20 against the budget, by dataset."""
    fig, axes = style.figure(len(data.parts), 2, 2.9 * len(data.parts) + 0.5)
    mechanisms: list[str] = []
    for j, (label, frame) in enumerate(data.parts.items()):
        mechanisms = _mechanisms(frame)
        for mech, grp in frame.groupby("mechanism", sort=False):
            by = grp.groupby("eps")
            emp = by["mse"].mean()
            _means(axes[2 * j], emp.index, emp.values, mech)
            _means(axes[2 * j + 1], emp.index, by["re@20"].mean().values, mech)
        axes[2 * j].set(yscale="log", xlabel=style.EPS_LABEL, ylabel=style.MSE_LABEL, title=f"{label}: MSE")
        axes[2 * j + 1].set(xlabel=style.EPS_LABEL, ylabel="RE of the top 20 (ratio)",
                            title=f"{label}: RE of the top 20")
        style.ratio_axis(axes[2 * j + 1])
    _mechanism_legend(fig, mechanisms, ncol=5)
    return fig


@style.styled
def draw_fig4(data: ExperimentData) -> matplotlib.figure.Figure:
    """RE of the top k against k at one budget, by dataset."""
    ks = data.meta["ks"]
    eps = data.meta["epsilons"][0]
    fig, axes = style.figure(1, len(data.parts), 3.6)
    mechanisms = ("RAPPOR", "OUE", "IDUE-opt0")
    for ax, (label, frame) in zip(axes, data.parts.items()):
        means = frame.groupby("mechanism")[[f"re@{k}" for k in ks]].mean()
        for mech in mechanisms:
            _means(ax, ks, means.loc[mech].values, mech)
        ax.set(xlabel=style.K_LABEL, ylabel="RE of the top k (ratio)", title=rf"{label}, $\varepsilon$ = {eps:g}")
        style.ratio_axis(ax)
    _mechanism_legend(fig, mechanisms, ncol=3)
    return fig


@style.styled
def draw_fig5(data: ExperimentData) -> matplotlib.figure.Figure:
    """MSE and RE of the top 50 by the share of sensitive items.

    The MSE panel draws eq. (7) as lines over the simulated open markers.
    """
    ((label, frame),) = data.parts.items()
    fig, axes = style.figure(1, 2, 3.8)
    for mech, grp in frame.groupby("mechanism", sort=False):
        by = grp.groupby("share")
        mse, theory = by["mse"].mean(), by["mse_theory"].mean()
        _theory_and_simulation(axes[0], theory.index, theory.values, mse.values, mech)
        re = by["re@50"].mean()
        _means(axes[1], re.index, re.values, mech)
    xlabel = r"share of items at $\varepsilon_1$ (fraction)"
    axes[0].set(yscale="log", xlabel=xlabel, ylabel=style.MSE_LABEL, title=f"{label}: MSE")
    axes[1].set(xlabel=xlabel, ylabel="RE of the top 50 (ratio)", title=f"{label}: RE of the top 50")
    style.ratio_axis(axes[1])
    _mechanism_legend(fig, _mechanisms(frame), styles=(("line", "eq. (7) (MSE panel)"), ("markers", "simulated")),
                      ncol=4)
    return fig


@style.styled
def draw_fig6(data: ExperimentData) -> matplotlib.figure.Figure:
    """Precision and RE of the top items, a 2 x 2 grid.

    Top row: the top 20 against the budget; bottom row: the top k at
    ``eps =`` :data:`EPS_RIGHT_FIG6`.
    """
    ((label, frame),) = data.parts.items()
    ks = data.meta["ks"]
    fig, axes = style.figure(2, 2, 6.4)
    for mech, grp in frame.groupby("mechanism", sort=False):
        by = grp.groupby("eps")
        prec, re = by["precision@20"].mean(), by["re@20"].mean()
        _means(axes[0], prec.index, prec.values, mech)
        _means(axes[1], re.index, re.values, mech)
        right = grp[grp["eps"] == EPS_RIGHT_FIG6]
        _means(axes[2], ks, [right[f"precision@{k}"].mean() for k in ks], mech)
        _means(axes[3], ks, [right[f"re@{k}"].mean() for k in ks], mech)
    eps_right = rf"$\varepsilon$ = {EPS_RIGHT_FIG6:g}"
    axes[0].set(xlabel=style.EPS_LABEL, ylabel="precision (fraction)", title="Precision of the top 20")
    axes[1].set(xlabel=style.EPS_LABEL, ylabel="RE (ratio)", title="RE of the top 20")
    axes[2].set(xlabel=style.K_LABEL, ylabel="precision (fraction)", title=f"Precision of the top k, {eps_right}")
    axes[3].set(xlabel=style.K_LABEL, ylabel="RE (ratio)", title=f"RE of the top k, {eps_right}")
    for ax in (axes[1], axes[3]):
        style.ratio_axis(ax)
    fig.suptitle(rf"{label}, padding length $\ell$ = {ELL_FIG6}")
    _mechanism_legend(fig, _mechanisms(frame), ncol=3)
    return fig


def draw_padding_length(
    data: ExperimentData, ax: matplotlib.axes.Axes
) -> list[Any]:
    """Into ``ax``: IDUE-PS's RE of the top k by padding length.

    One line per budget (:func:`ldpkit.experiments.style.ordered_style`); returns the lines,
    labelled with their budgets, for a legend below the panels.
    """
    ((label, frame),) = data.parts.items()
    k = data.meta["k"]
    table = frame.groupby(["eps", "ell"])[f"re@{k}"].mean().unstack()
    epsilons = list(data.meta["epsilons"])
    lines = []
    for i, eps in enumerate(epsilons):
        (line,) = ax.plot(table.columns, table.loc[eps].values, "-", lw=style.LW_DENSE, mfc="none",
                          ms=style.MS_SIMULATED, label=rf"$\varepsilon$ = {eps:g}",
                          **style.ordered_style(i, len(epsilons)))
        lines.append(line)
    ax.set(xlabel=r"padding length $\ell$ (items)", ylabel=f"RE of the top {k} (ratio)",
           title=f"{label}, IDUE-PS, k = {k}")
    style.ratio_axis(ax)
    return lines


@style.styled
def draw_padding_lengths(
    *data: ExperimentData,
) -> matplotlib.figure.Figure:
    """Figs. 7 and 8 side by side (:func:`draw_padding_length`), the budgets' legend below.

    At most two panels per row; a single panel gets 0.6 of the width.
    """
    if not data:
        raise ValueError(
            "draw_padding_lengths needs at least one ExperimentData"
        )
    ncols = min(2, len(data))
    nrows = -(-len(data) // ncols)
    width = style.FIG_WIDTH if ncols == 2 else style.FIG_WIDTH * 0.6
    fig, axes = style.figure(nrows, ncols, 3.7 * nrows + 0.6, width=width)
    handles: dict[str, Any] = {}
    for ax, one in zip(axes, data):
        for line in draw_padding_length(one, ax):
            handles.setdefault(str(line.get_label()), line)
    for ax in axes[len(data) :]:
        ax.set_visible(False)
    style.legend_below(fig, list(handles.values()), ncol=3 if ncols == 1 else 5, by_row=True)
    return fig


def draw_fig7(data: ExperimentData) -> matplotlib.figure.Figure:
    """Fig. 7 alone (Clothing, k = 20)."""
    return draw_padding_lengths(data)


def draw_fig8(data: ExperimentData) -> matplotlib.figure.Figure:
    """Fig. 8 alone (Kosarak, k = 100)."""
    return draw_padding_lengths(data)


# --------------------------------------------------------------------------- registration


def _defaults(experiment_id: str) -> RunConfig:
    return RunConfig(repeats=REPEATS, seed=DEFAULT_SEEDS[experiment_id], scale=1.0)


def _compare(setting: str, *, theory: bool = True) -> Comparison:
    """How ``ldpkit check`` compares a rerun: per (dataset, setting, mechanism), mean over repeats."""
    keys = ("dataset", *setting.split(","), "mechanism")
    return Comparison(keys=keys, repeat="repeat", exact=("mse_theory",) if theory else ())


# one register() call per figure or table: id, title, paper, item, kind, datasets, compute, draw, defaults, section,
# comparison
register(Experiment("idldp-table2", "Datasets: n, m and records against the paper", PAPER, "Table II", "table",
                    (POWER_LAW, UNIFORM, "retail", "kosarak", "clothing"), compute_table2, None,
                    _defaults("idldp-table2"), "sec-idldp-table2"))
register(Experiment("idldp-fig2", "Empirical against theoretical MSE, synthetic data", PAPER, "Fig. 2", "figure",
                    (POWER_LAW, UNIFORM), compute_fig2, draw_fig2, _defaults("idldp-fig2"), "sec-idldp-fig2", _compare("eps")))
register(Experiment("idldp-fig3", "MSE and RE against the budget, Retail and Kosarak single items", PAPER,
                    "Fig. 3", "figure", ("retail", "kosarak"), compute_fig3, draw_fig3, _defaults("idldp-fig3"),
                    "sec-idldp-fig3", _compare("eps")))
register(Experiment("idldp-fig4", "RE of the top k against k, Retail and Kosarak single items", PAPER,
                    "Fig. 4", "figure", ("retail", "kosarak"), compute_fig4, draw_fig4, _defaults("idldp-fig4"),
                    "sec-idldp-fig3", _compare("eps")))
register(Experiment("idldp-fig5", "MSE and RE against the share of sensitive items, Retail", PAPER, "Fig. 5",
                    "figure", ("retail",), compute_fig5, draw_fig5, _defaults("idldp-fig5"), "sec-idldp-fig5", _compare("share")))
register(Experiment("idldp-fig6", "Top-k precision and RE of the PS mechanisms, Clothing item sets", PAPER,
                    "Fig. 6", "figure", ("clothing",), compute_fig6, draw_fig6, _defaults("idldp-fig6"),
                    "sec-idldp-fig6", _compare("ell,eps")))
register(Experiment("idldp-fig7", "IDUE-PS: RE against the padding length, Clothing", PAPER, "Fig. 7", "figure",
                    ("clothing",), compute_fig7, draw_fig7, _defaults("idldp-fig7"), "sec-idldp-fig7", _compare("ell,eps", theory=False)))
register(Experiment("idldp-fig8", "IDUE-PS: RE against the padding length, Kosarak", PAPER, "Fig. 8", "figure",
                    ("kosarak",), compute_fig8, draw_fig8, _defaults("idldp-fig8"), "sec-idldp-fig7", _compare("ell,eps", theory=False)))
