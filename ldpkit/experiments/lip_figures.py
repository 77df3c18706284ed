"""Figs. 2 and 5-8 of the LIP paper (``jiang2018lip``): data, drawing and registration.

Each figure is one registered :class:`~ldpkit.experiments.Experiment` (ids ``lip-fig2``,
``lip-fig5`` to ``lip-fig8``) with a ``compute_*`` function (the protocol of
:mod:`ldpkit.experiments.lip`, returning an :class:`~ldpkit.experiments.ExperimentData`) and a
``draw_*`` function.  The LIP experiments chapter (:ref:`lip-experiments`) runs them through
:func:`ldpkit.experiments.run`.

Every frame has one row per (panel, budget, model, kind) with columns ``dataset``, ``panel``,
``n`` (users), ``epsilon``, ``model``, ``kind``, ``mse`` (total over the users), ``rmse`` (the
paper's ``sqrt(MSE / N)``), ``se`` and ``mse_exact`` (exact standard error and expectation of a
simulated ``mse``, :func:`~ldpkit.experiments.lip.squared_error_moments`), ``feasible`` and
``infeasible_share`` (paper curves only).  Kinds: ``"exact"`` (inputs drawn from the priors, the
paper's quantity), ``"paper"`` (the paper's printed closed form), ``"simulated"`` (mean of
``trials`` simulated squared errors), and for real data ``"exact | data"`` (inputs fixed to the
dataset's, :func:`~ldpkit.experiments.lip.conditional_mse`).

Data.  Fig. 7 draws the local priors uniformly on ``[0, 1]`` from ``default_rng([DATA_SEED, N])``.
Fig. 8 (a): websites as users, ``X = 1`` for a page with more than 15,000 clicks in the full
Kosarak file, a page's clicks counted as the sessions containing it; the global prior is the
share of popular pages.  Without the full file (the data policy,
:func:`ldpkit.experiments.inputs.load_or_sample`) the panel is a stand-in: ``"Kosarak (prefix
stand-in)"`` takes the held prefix's pages as users and scales the threshold by the share of the
file's clicks the prefix holds, ``15,000 * records(prefix) / 8,019,015``
(:func:`kosarak_threshold`); ``"Kosarak (stand-in)"`` does the same on the synthetic Kosarak
stand-in.  Fig. 8 (b): Gowalla 10-core has neither coordinates nor timestamps, so the "secret
region" is the set of the :data:`GOWALLA_REGION` locations with the most visitors, one location
of each user drawn uniformly (``default_rng([DATA_SEED, 8])``) plays the last check-in (``X = 1``
when it lies in the region), and the local prior is the add-one share ``(k + 1) / (m + 2)`` of the
user's ``m`` other locations, ``k`` of them in the region; the label says ``"Gowalla, held-out
location"`` (``"Gowalla (stand-in), held-out location"`` on the synthetic stand-in).
``scale < 1`` keeps a seeded subsample of pages or users (``default_rng([DATA_SEED, 11])``,
``[DATA_SEED, 12]``) and of Fig. 7's ``N`` (``max(1, round(scale N))``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .. import datasets as _datasets
from ..datasets.containers import ItemSetData
from . import lip as _protocol
from . import style
from .config import RunConfig
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
    "EPS_FIG2",
    "EPS_FIG5",
    "EPS_FIG6",
    "EPS_SIM",
    "EXAMPLE_N",
    "EXAMPLE_PRIOR",
    "FIG7_N",
    "GOWALLA_REGION",
    "KOSARAK_CLICKS",
    "KOSARAK_RECORDS",
    "KOSARAK_TRIALS_FACTOR",
    "PAPER",
    "REPEATS",
    "compute_fig2",
    "compute_fig5",
    "compute_fig6",
    "compute_fig7",
    "compute_fig8",
    "draw_fig2",
    "draw_fig5",
    "draw_fig6",
    "draw_fig7",
    "draw_fig8",
    "example1_printed",
    "gowalla_data",
    "kosarak_data",
    "kosarak_threshold",
    "local_priors",
]

#: bibtex key of the paper
PAPER = "jiang2018lip"
#: seed of the data (priors of Fig. 7, the Gowalla hold-out)
DATA_SEED = 20181001
#: simulation trials per point; for Fig. 7 the trials at N = 500 (scaled as 500 / N), for Fig. 8 the
#: Gowalla trials (and :data:`KOSARAK_TRIALS_FACTOR` times as many for Kosarak)
REPEATS: Mapping[str, int] = MappingProxyType({"lip-fig2": 4000, "lip-fig5": 1, "lip-fig6": 1,
                                               "lip-fig7": 200, "lip-fig8": 200})
#: run seed of each figure
DEFAULT_SEEDS: Mapping[str, int] = MappingProxyType({f"lip-fig{k}": DATA_SEED + k for k in (2, 5, 6, 7, 8)})
#: the users and the prior of Example 1
EXAMPLE_N, EXAMPLE_PRIOR = 100, 0.1
#: budgets of Fig. 2 (the paper's range is not stated)
EPS_FIG2 = tuple(float(v) for v in np.round(np.arange(0.25, 5.0001, 0.25), 2))
#: budgets of Fig. 5 (1 to 5, step 0.5)
EPS_FIG5 = tuple(float(v) for v in np.round(np.arange(1.0, 5.0001, 0.5), 2))
#: budgets of Figs. 6-8 (0 to 10, step 0.5)
EPS_FIG6 = tuple(float(v) for v in np.round(np.arange(0.0, 10.0001, 0.5), 2))
#: budgets of the simulations of Figs. 2, 7 and 8
EPS_SIM = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0)
#: Fig. 7's numbers of users
FIG7_N = (5, 500, 50_000)
#: the paper's popularity threshold of Fig. 8 (a), in clicks, and the clicks of the full Kosarak file
KOSARAK_CLICKS, KOSARAK_RECORDS = 15_000, 8_019_015
#: the simulation trials of Fig. 8 (a) per Gowalla trial (two groups of exchangeable users make them cheap)
KOSARAK_TRIALS_FACTOR = 200
#: the number of locations forming the secret region of Fig. 8 (b), most visitors first
GOWALLA_REGION = 100

#: axis labels: the error of the estimated count S of ones (the models' legend labels are
#: :data:`ldpkit.experiments.style.MECHANISM_LABELS`)
_RMSE_LABEL = r"RMSE $\sqrt{\mathcal{E}/N}$ (counts / $\sqrt{\mathrm{user}}$)"
_MSE_LABEL = r"MSE $\mathcal{E}$ of the count $S$ (counts$^2$)"
_COLUMNS = ["dataset", "panel", "n", "epsilon", "model", "kind", "mse", "rmse", "se", "mse_exact", "feasible",
            "infeasible_share"]


# --------------------------------------------------------------------------- data


def local_priors(n: int) -> np.ndarray:
    """Fig. 7's ``n`` local priors, uniform on ``[0, 1]`` (``default_rng([DATA_SEED, n])``)."""
    p = np.random.default_rng([DATA_SEED, n]).random(n)
    return np.clip(p, 1e-12, 1 - 1e-12)


def kosarak_threshold(records: int) -> float:
    """The popularity threshold scaled to a file with ``records`` clicks: ``15,000 records / 8,019,015``."""
    return KOSARAK_CLICKS * records / KOSARAK_RECORDS


@functools.lru_cache(maxsize=2)
def _kosarak_counts(base: ItemSetData, origin: str) -> tuple[np.ndarray, str, bool, int, float]:
    counts = base.counts()
    counts.flags.writeable = False
    label = _datasets.label_for("Kosarak", origin)
    threshold = float(KOSARAK_CLICKS) if origin == "real" else kosarak_threshold(base.n_records)
    return counts, label, origin != "real", base.n_records, threshold


def _kosarak_base() -> tuple[ItemSetData, str]:
    """What Fig. 8 (a) counts clicks on, by the data policy, and the origin of the panel's data."""
    base, origin = load_or_sample("kosarak", rng=DATA_SEED)
    return cast(ItemSetData, base), origin


def _kosarak_full() -> tuple[np.ndarray, str, bool, int, float]:
    return _kosarak_counts(*_kosarak_base())


def kosarak_data(scale: float = 1.0) -> dict[str, Any]:
    """Fig. 8 (a): per page ``x`` (popular or not), the global prior, label, threshold and sizes."""
    RunConfig(scale=scale)
    counts, label, standin, records, threshold = _kosarak_full()
    x_all = (counts > threshold).astype(np.int8)
    prior = float(x_all.mean())
    keep = np.arange(counts.size)
    if scale < 1:
        size = max(1, round(scale * counts.size))
        keep = np.sort(np.random.default_rng([DATA_SEED, 11]).choice(counts.size, size, replace=False))
    return {"x": x_all[keep], "prior": prior, "label": label, "standin": standin, "records": records,
            "threshold": threshold, "pages": int(counts.size), "popular": int(x_all.sum())}


def _gowalla_base() -> ItemSetData:
    return cast(ItemSetData, load_auto("gowalla-10core", rng=DATA_SEED))


def _gowalla_label(data: ItemSetData) -> str:
    return f"{data.label}, held-out location"


def _gowalla_full() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return _gowalla_from(_gowalla_base())


@functools.lru_cache(maxsize=2)
def _gowalla_from(data: ItemSetData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    counts = data.counts()
    region = np.zeros(data.m, dtype=bool)
    region[np.lexsort((np.arange(data.m), -counts))[:GOWALLA_REGION]] = True
    sets, sizes = data.sets, data.sizes
    gen = np.random.default_rng([DATA_SEED, 8])
    pick = sets.offsets[:-1] + np.floor(gen.random(sizes.size) * sizes).astype(np.int64)
    held = sets.indices[pick]
    x = region[held].astype(np.int8)
    inside = np.add.reduceat(region[sets.indices].astype(np.int64), sets.offsets[:-1])
    k = inside - x
    prior = (k + 1.0) / (sizes - 1.0 + 2.0)
    for arr in (x, prior):
        arr.flags.writeable = False
    return x, prior, sizes


def gowalla_data(scale: float = 1.0) -> dict[str, Any]:
    """Fig. 8 (b): per user ``x`` (held-out location in the region) and the local prior (module docstring)."""
    RunConfig(scale=scale)
    data = _gowalla_base()
    x, prior, _ = _gowalla_from(data)
    keep = np.arange(x.size)
    if scale < 1:
        size = max(1, round(scale * x.size))
        keep = np.sort(np.random.default_rng([DATA_SEED, 12]).choice(x.size, size, replace=False))
    return {"x": x[keep], "prior": prior[keep], "label": _gowalla_label(data),
            "standin": bool(data.is_standin), "users": int(x.size), "region": GOWALLA_REGION}


def example1_printed(epsilon: float, n: int = EXAMPLE_N) -> dict[str, float]:
    """Example 1's three printed errors at ``epsilon``: ``100 e^eps/(e^eps + 1)^2``, ``25/(0.5 - e^eps/2)^2``, ``(10 e^eps - 1)/0.64``.

    Scaled by ``n / 100`` (the paper's ``N = 100``); the second is infinite at ``eps = 0``.
    """
    e = math.exp(epsilon)
    opt = 25.0 / (0.5 - e / 2) ** 2 if e != 1.0 else math.inf
    return {"LDP, printed": n / 100 * 100 * e / (e + 1) ** 2, "Opt-LDP, printed": n / 100 * opt,
            "LIP, printed": n / 100 * (10 * e - 1) / 0.64}


# --------------------------------------------------------------------------- compute helpers


def _exact_rows(panel: str, priors: np.ndarray, eps: Sequence[float], models: Sequence[str]) -> list[dict[str, Any]]:
    frame = _protocol.exact_curves(priors, [e for e in eps], [m for m in models])
    rows = []
    for r in frame.itertuples(index=False):
        if r.model == "LDP" and r.epsilon == 0:
            continue
        rows.append({"panel": panel, "n": int(priors.size), "epsilon": r.epsilon, "model": r.model, "kind": "exact",
                     "mse": float(r.mse), "rmse": float(r.rmse)})
    return rows


def _paper_rows(panel: str, priors: np.ndarray, eps: Sequence[float], models: Sequence[str]) -> list[dict[str, Any]]:
    frame = _protocol.paper_curves(priors, eps)
    frame = frame[frame["model"].isin(models)]
    return [{"panel": panel, "n": int(priors.size), "epsilon": r.epsilon, "model": r.model, "kind": "paper",
             "mse": float(r.mse), "rmse": float(r.rmse), "feasible": bool(r.feasible),
             "infeasible_share": float(r.infeasible_share)} for r in frame.itertuples(index=False)]


#: one simulated panel: its name, the users' priors, the trials and the fixed inputs (``None``: drawn)
_SimPanel = tuple[str, np.ndarray, int, np.ndarray | None]


def _sim_rows(panels: Sequence[_SimPanel], eps: Sequence[float], models: Sequence[str],
              config: RunConfig) -> dict[str, list[dict[str, Any]]]:
    """The simulated rows of every panel at every (budget, model), by panel name.

    All cells of all panels form one sweep of :meth:`~ldpkit.experiments.RunConfig.map`: every
    cell draws from its own stream, so the panels are independent and the numbers do not depend
    on ``config.jobs``.
    """
    cells = [(k, float(e), m) for k in range(len(panels)) for e in eps for m in models]

    def point(cell: tuple[int, float, str], gen: np.random.Generator) -> dict[str, Any]:
        k, e, m = cell
        panel, priors, trials, x = panels[k]
        sq = _protocol.simulate_squared_errors(m, priors, e, trials, gen, x=x)
        mean = float(sq.mean())
        exact, var = _protocol.squared_error_moments(m, priors, e, x)
        return {"panel": panel, "n": int(priors.size), "epsilon": e, "model": m, "kind": "simulated",
                "mse": mean, "rmse": math.sqrt(mean / priors.size), "se": math.sqrt(var / trials),
                "mse_exact": exact}

    rows: dict[str, list[dict[str, Any]]] = {panel: [] for panel, *_ in panels}
    for row in config.map(point, cells, "simulating"):
        rows[row["panel"]].append(row)
    return rows


def _frame(rows: list[dict[str, Any]], dataset: str) -> pd.DataFrame:
    import pandas as pd

    frame = pd.DataFrame(rows)
    frame.insert(0, "dataset", dataset)
    for col in _COLUMNS:
        if col not in frame:
            frame[col] = np.nan
    return frame[_COLUMNS]


def _synthetic(frame: pd.DataFrame, **meta: Any) -> ExperimentData:
    return ExperimentData(frame, labels={"synthetic": "synthetic priors"}, parts={"synthetic": frame},
                          meta=meta)


# --------------------------------------------------------------------------- compute


def compute_fig2(config: RunConfig) -> ExperimentData:
    """Fig. 2 (Example 1): errors of ``N = 100`` users with prior 0.1 against eps, exact, printed and simulated."""
    prior = np.full(EXAMPLE_N, EXAMPLE_PRIOR)
    models = ("LDP", "Opt-LDP", "Opt-LIP")
    rows = _exact_rows("Example 1", prior, EPS_FIG2, models)
    rows += _paper_rows("Example 1", prior, EPS_FIG2, ("Opt-LIP (Thm 2)",))
    for e in EPS_FIG2:
        for name, value in example1_printed(e).items():
            ok = math.isfinite(value) and value > 0
            rows.append({"panel": "Example 1", "n": EXAMPLE_N, "epsilon": e, "model": name, "kind": "paper",
                         "mse": value, "rmse": math.sqrt(value / EXAMPLE_N) if ok else math.nan})
    sim_eps = [e for e in EPS_SIM if e <= max(EPS_FIG2)]
    rows += _sim_rows([("Example 1", prior, config.repeats, None)], sim_eps, models, config)["Example 1"]
    return _synthetic(_frame(rows, "synthetic"), n={"synthetic priors": EXAMPLE_N}, prior=EXAMPLE_PRIOR)


def _global(config: RunConfig, priors: Sequence[float], eps: Sequence[float], models: Sequence[str],
            paper: Sequence[str]) -> ExperimentData:
    rows: list[dict[str, Any]] = []
    for p in priors:
        panel = f"P1 = {p:g}"
        arr = np.array([p])
        rows += _exact_rows(panel, arr, eps, models)
        rows += _paper_rows(panel, arr, eps, paper)
    return _synthetic(_frame(rows, "synthetic"), priors=tuple(priors), epsilons=tuple(eps))


def compute_fig5(config: RunConfig) -> ExperimentData:
    """Fig. 5: context-free LDP, Opt-LDP and Opt-LIP at global priors 0.5 and 0.99, eps 1 to 5 (exact)."""
    return _global(config, (0.5, 0.99), EPS_FIG5, ("LDP", "Opt-LDP", "Opt-LIP"), ("Opt-LIP (Thm 2)",))


def compute_fig6(config: RunConfig) -> ExperimentData:
    """Fig. 6: the four prior-aware models at global priors 0.5 and 0.01, eps 0 to 10 (exact)."""
    return _global(config, (0.5, 0.01), EPS_FIG6, ("Opt-LDP", "Opt-LIP", "Opt-LIP eps/2", "Sym-LIP eps/2"),
                   _protocol.PAPER_MODELS)


_FOUR = ("Opt-LDP", "Opt-LIP", "Opt-LIP eps/2", "Sym-LIP eps/2")


def _trials(config: RunConfig, n: int) -> int:
    return max(20, math.ceil(config.repeats * 500 / n))


def compute_fig7(config: RunConfig) -> ExperimentData:
    """Fig. 7: local priors uniform on [0, 1], ``N = 5, 500, 50,000``: exact curves and simulation."""
    sizes = {f"N = {users:,}": users for users in (max(1, round(config.scale * n)) for n in FIG7_N)}
    panels = [(panel, local_priors(users), _trials(config, users), None) for panel, users in sizes.items()]
    sims = _sim_rows(panels, EPS_SIM, _FOUR, config)
    rows: list[dict[str, Any]] = []
    for panel, priors, _, _ in panels:
        rows += _exact_rows(panel, priors, EPS_FIG6, _FOUR)
        rows += _paper_rows(panel, priors, EPS_FIG6, ("Opt-LIP (Thm 2)", "Opt-LIP eps/2 (Thm 2)"))
        rows += sims[panel]
    return _synthetic(_frame(rows, "synthetic"), sizes=sizes,
                      trials={p: _trials(config, n) for p, n in sizes.items()})


def compute_fig8(config: RunConfig) -> ExperimentData:
    """Fig. 8: Kosarak (global prior; stand-in offline) and Gowalla (local priors; held-out stand-in)."""
    import pandas as pd

    kos = kosarak_data(config.scale)
    gow = gowalla_data(config.scale)
    parts = {}
    trials = {kos["label"]: KOSARAK_TRIALS_FACTOR * config.repeats, gow["label"]: config.repeats}
    data = ((kos, np.full(kos["x"].size, kos["prior"])), (gow, gow["prior"]))
    sims = _sim_rows([(d["label"], priors, trials[d["label"]], d["x"]) for d, priors in data], EPS_SIM, _FOUR, config)
    for d, priors in data:
        rows = _exact_rows(d["label"], priors, EPS_FIG6, _FOUR)
        rows += _paper_rows(d["label"], priors, EPS_FIG6, ("Opt-LIP (Thm 2)", "Opt-LIP eps/2 (Thm 2)"))
        for e in EPS_FIG6:
            for m in _FOUR:
                mse = _protocol.conditional_mse(m, priors, d["x"], e)
                rows.append({"panel": d["label"], "n": int(priors.size), "epsilon": e, "model": m,
                             "kind": "exact | data", "mse": mse, "rmse": math.sqrt(mse / priors.size)})
        rows += sims[d["label"]]
        parts[d["label"]] = _frame(rows, d["label"])
    frame = pd.concat(list(parts.values()), ignore_index=True)
    kos_base, kos_origin = _kosarak_base()
    kos_id = dataclasses.replace(identity(kos_base, kos["label"]), origin=kos_origin) if kos_origin != "real" \
        else identity(kos_base)
    inputs = {"kosarak": kos_id, "gowalla-10core": identity(_gowalla_base(), gow["label"])}
    return ExperimentData(frame, labels={"kosarak": kos["label"], "gowalla-10core": gow["label"]},
                          inputs=inputs,
                          standins=tuple(k for k, d in (("kosarak", kos), ("gowalla-10core", gow)) if d["standin"]),
                          parts=parts, meta={"n": {kos["label"]: int(kos["x"].size), gow["label"]: int(gow["x"].size)},
                                             "trials": trials,
                                             "kosarak": {k: v for k, v in kos.items() if k != "x"},
                                             "gowalla": {k: v for k, v in gow.items() if k not in ("x", "prior")}})


# --------------------------------------------------------------------------- draw

#: the line style of each kind of curve and what it means in the legend (simulated means: open markers)
_KIND_LINES: Mapping[str, tuple[str, str]] = MappingProxyType({
    "exact": ("-", "exact (inputs drawn from the priors)"),
    "exact | data": ("-.", "exact (the data's inputs)"),
    "paper": ("--", "paper's formula (Thm 2, eq. 23)"),
    "printed": (":", "paper's printed value (Example 1)"),
})


def _figure(n: int, height: float) -> tuple[matplotlib.figure.Figure, list[matplotlib.axes.Axes]]:
    ncols = min(2, n)
    nrows = math.ceil(n / 2)
    fig, flat = style.figure(nrows, ncols, height * nrows + 1.5)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def _base(model: str) -> str:
    """The model a curve belongs to (a printed curve's model, :data:`~ldpkit.experiments.style.MECHANISM_VARIANTS`)."""
    return style.MECHANISM_VARIANTS.get(model, model)


def _panel(ax: matplotlib.axes.Axes, frame: pd.DataFrame, y: str = "rmse") -> tuple[list[str], set[str]]:
    """Into ``ax``: every model's curves of ``frame``; returns the models and the kinds drawn.

    A model has its book-wide colour (:func:`ldpkit.experiments.style.mechanism_style`); a kind
    its line style (:data:`_KIND_LINES`), simulated means are the model's open markers with two
    exact standard errors, and a printed point that violates LIP is a black cross.
    """
    models: list[str] = []
    kinds: set[str] = set()
    for model, g in frame.groupby("model", sort=False):
        model = str(model)
        base = _base(model)
        look: dict[str, Any] = dict(style.MECHANISM_STYLES.get(base, {"color": style.MUTED_GREY,
                                                                      "marker": style.SIMULATED_MARKER}))
        if base not in models:
            models.append(base)
        for kind, h in g.groupby("kind", sort=False):
            h = h.sort_values("epsilon")
            kind = "printed" if kind == "paper" and model.endswith("printed") else str(kind)
            kinds.add(kind)
            if kind == "simulated":
                err = h["se"] / (2 * h["mse"]) * h["rmse"] if y == "rmse" else h["se"]
                ax.errorbar(h["epsilon"], h[y], yerr=2 * err, ls="none", ms=style.MS_ERRORBAR, mfc="none", **look)
                continue
            lw = style.LW_EXACT if kind == "exact" else style.LW_DENSE if kind == "exact | data" else style.LW_PAPER
            ax.plot(h["epsilon"], h[y], _KIND_LINES[kind][0], color=look["color"], lw=lw,
                    alpha=1.0 if kind.startswith("exact") else 0.85)
            bad = h[h["feasible"].eq(False)] if "feasible" in h else h.iloc[:0]  # NaN (not applicable) is not False
            if len(bad):
                kinds.add("infeasible")
                ax.plot(bad["epsilon"], bad[y], ls="none", marker=style.INFEASIBLE_MARKER,
                        color=style.INFEASIBLE_COLOR, ms=style.MS_ERRORBAR)
    ax.set_yscale("log")
    ax.set_xlabel(r"privacy budget $\varepsilon$ (nats)")
    ax.set_ylabel(_RMSE_LABEL if y == "rmse" else _MSE_LABEL)
    return models, kinds


def _legend(fig: matplotlib.figure.Figure, models: Sequence[str], kinds: set[str]) -> None:
    """Models (colour and marker), then the meaning of each line style and marker drawn."""
    handles = style.pad_row([style.mechanism_handle(m, line=True) for m in models], 2)
    handles += [style.key_handle(text, ls=ls) for kind, (ls, text) in _KIND_LINES.items() if kind in kinds]
    if "simulated" in kinds:
        handles.append(style.key_handle("simulated, 2 standard errors", ls="none", marker=style.SIMULATED_MARKER,
                                        mfc="none"))
    if "infeasible" in kinds:
        handles.append(style.key_handle("paper's point violates LIP", ls="none", marker=style.INFEASIBLE_MARKER,
                                        color=style.INFEASIBLE_COLOR))
    style.legend_below(fig, handles, ncol=2, by_row=True)


#: at most six series a panel: a figure whose panels would hold more draws each data panel as a row of
#: panels, one per group of curves (the group's models or ``None`` for all, its kinds or ``None`` for
#: all, and its title after the data panel's)
_GROUPS: Mapping[str, tuple[tuple[tuple[str, ...] | None, tuple[str, ...] | None, str], ...]] = MappingProxyType({
    "lip-fig2": ((None, ("exact", "simulated"), "true errors"), (None, ("paper",), "as the paper prints them")),
    "lip-fig6": ((("Opt-LDP", "Opt-LIP", "Opt-LIP (Thm 2)"), None, r"budget $\varepsilon$"),
                 (("Opt-LDP", "Opt-LIP eps/2", "Sym-LIP eps/2", "Opt-LIP eps/2 (Thm 2)", "Sym-LIP eps/2 (eq. 23)"),
                  None, r"budget $\varepsilon/2$ (and $\varepsilon$-Opt-LDP)")),
    "lip-fig8": ((None, ("exact", "paper"), "inputs drawn from the priors"),
                 (None, ("exact | data", "simulated"), "the data's inputs")),
})


def _draw_panels(data: ExperimentData, y: str = "rmse", height: float = 3.0,
                 groups: Sequence[tuple[Sequence[str] | None, Sequence[str] | None, str]] = ()
                 ) -> matplotlib.figure.Figure:
    """One panel per data panel of ``data``, or, with ``groups``, one row of panels per data panel.

    With ``groups`` (models, kinds and a title, :data:`_GROUPS`), each data panel is drawn as one
    panel per group, holding the group's curves; the panels of a row share their y range.
    """
    frame = data.frame
    panels = list(dict.fromkeys(frame["panel"]))
    cells = [(panel, (models_, kinds_), f"{panel}:\n{title}") for panel in panels
             for models_, kinds_, title in groups] if groups else [(panel, (None, None), panel) for panel in panels]
    fig, axes = _figure(len(cells), height)
    models: list[str] = []
    kinds: set[str] = set()
    rows: dict[str, list[matplotlib.axes.Axes]] = {}
    for ax, (panel, only, title) in zip(axes, cells):
        sub = frame[frame["panel"] == panel]
        if only[0] is not None:
            sub = sub[sub["model"].isin(only[0])]
        if only[1] is not None:
            sub = sub[sub["kind"].isin(only[1])]
        drawn, drawn_kinds = _panel(ax, sub, y)
        models += [m for m in drawn if m not in models]
        kinds |= drawn_kinds
        ax.set_title(title)
        exact = sub.loc[sub["kind"].isin(("exact", "exact | data")), y]
        exact = exact[exact > 0]
        if len(exact):
            ax.set_ylim(bottom=float(exact.min()) / 3)
        rows.setdefault(panel, []).append(ax)
    for row in rows.values():
        if len(row) > 1:
            low = min(ax.get_ylim()[0] for ax in row)
            high = max(ax.get_ylim()[1] for ax in row)
            for ax in row:
                ax.set_ylim(low, high)
    _legend(fig, models, kinds)
    return fig


@style.styled
def draw_fig2(data: ExperimentData) -> matplotlib.figure.Figure:
    """Example 1: total MSE of the aggregate against eps; the true errors left, the printed ones right."""
    fig = _draw_panels(data, y="mse", height=4.0, groups=_GROUPS["lip-fig2"])
    for ax in fig.axes[:2]:
        ax.set_ylim(1e-2, 1e3)
    return fig


@style.styled
def draw_fig5(data: ExperimentData) -> matplotlib.figure.Figure:
    """Fig. 5: one panel per global prior."""
    return _draw_panels(data)


@style.styled
def draw_fig6(data: ExperimentData) -> matplotlib.figure.Figure:
    """Fig. 6: a row per global prior, the models at budget eps left and at eps/2 right."""
    return _draw_panels(data, groups=_GROUPS["lip-fig6"])


@style.styled
def draw_fig7(data: ExperimentData) -> matplotlib.figure.Figure:
    """Fig. 7: one panel per number of users."""
    return _draw_panels(data)


@style.styled
def draw_fig8(data: ExperimentData) -> matplotlib.figure.Figure:
    """Fig. 8: a row per dataset (Kosarak, Gowalla), the paper's MSE left and the data's inputs right."""
    return _draw_panels(data, height=3.4, groups=_GROUPS["lip-fig8"])


# --------------------------------------------------------------------------- registration


def _defaults(experiment_id: str) -> RunConfig:
    return RunConfig(repeats=REPEATS[experiment_id], seed=DEFAULT_SEEDS[experiment_id], scale=1.0)


_SYN: tuple[str, ...] = ()  # the priors are generated in the compute functions
#: ``ldpkit check``: one row per (panel, budget, model, kind); simulated means carry their exact standard error
_COMPARE = Comparison(keys=("dataset", "panel", "n", "epsilon", "model", "kind"), se={"mse": "se"},
                      ignore={"rmse": "sqrt(mse / n): compared through mse"})
register(Experiment("lip-fig2", "Example 1: error of the aggregate against eps (N = 100, prior 0.1)", PAPER,
                    "Fig. 2", "figure", _SYN, compute_fig2, draw_fig2, _defaults("lip-fig2"), "sec-lip-fig2", _COMPARE))
register(Experiment("lip-fig5", "Context-free LDP, Opt-LDP and Opt-LIP at priors 0.5 and 0.99", PAPER, "Fig. 5",
                    "figure", _SYN, compute_fig5, draw_fig5, _defaults("lip-fig5"), "sec-lip-fig5", _COMPARE))
register(Experiment("lip-fig6", "Prior-aware models at global priors 0.5 and 0.01", PAPER, "Fig. 6", "figure",
                    _SYN, compute_fig6, draw_fig6, _defaults("lip-fig6"), "sec-lip-fig6", _COMPARE))
register(Experiment("lip-fig7", "Local priors uniform on [0, 1], N = 5, 500, 50,000", PAPER, "Fig. 7", "figure",
                    _SYN, compute_fig7, draw_fig7, _defaults("lip-fig7"), "sec-lip-fig7", _COMPARE))
register(Experiment("lip-fig8", "Kosarak (global prior) and Gowalla (local priors)", PAPER, "Fig. 8", "figure",
                    ("kosarak", "gowalla-10core"), compute_fig8, draw_fig8, _defaults("lip-fig8"), "sec-lip-fig8", _COMPARE))
