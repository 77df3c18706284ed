"""The auditing chapter's experiments: the kit's own mechanisms audited, validity, mutants, notions.

Every experiment samples the kit's mechanisms through :func:`ldpkit.audit.from_mechanism` (the
mechanisms' own sampling code) or an explicit channel through :func:`ldpkit.audit.from_channel`
(the mutants) and compares the audit's lower bound with the exact value the accountant computes:

* ``audit-tightness`` (figure, :func:`compute_tightness`): every registered family on items
  that states how it is audited (:attr:`ldpkit.family.Family.audit`, :func:`audited_families`;
  the others with their reason, :func:`skipped_families`), at the budgets :data:`BUDGETS` on
  :data:`D` items, the LDP lower bound over the exact epsilon
  (:func:`ldpkit.accountant.ldp_epsilon`) against the samples per input (:data:`SIZES`),
  white-box and black-box events, ``repeats`` seeds each; the column ``n_tight`` is the first
  size at which the median ratio reaches :data:`TIGHT` (the samples needed to come within 10%),
  :func:`samples_to_tight`;
* ``audit-validity`` (table, :func:`compute_validity`): ``repeats`` seeds per (notion, mechanism,
  events) at ``alpha =`` :data:`VALIDITY_ALPHA`; how often the bound exceeds the exact parameter,
  against the binomial upper quantile a correct auditor stays under;
* ``audit-mutants`` (table, :func:`compute_mutants`): each mutant and control of
  :mod:`ldpkit.audit.mutants`, the smallest size of :data:`MUTANT_SIZES` at which the audit flags
  it in all ``MUTANT_SEEDS`` seeds, white-box (events from the claimed channel) and black-box;
* ``audit-notions`` (table, :func:`compute_notions`): the audits of the notions beyond LDP, entry
  by entry (IDUE's pairwise matrix, IPRR's and uRR's per-output levels, LIP under a prior).

No dataset is read: the inputs are the audited mechanisms' own samples, drawn from the run's seed.
Auditing chapter, :ref:`sec-audit`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import accountant
from ..audit import EventKind, audit_ipldp, audit_ldp, audit_lip, audit_pairwise, from_channel, from_mechanism, violates
from ..audit.mutants import Mutant, controls, mutants
from ..family import Family, families, get_family
from ..grr import GRR
from ..hadamard import HR
from ..idue import IDUE
from ..iprr import IPRR
from ..olh import OLH
from ..unary import OUE, RAPPOR
from ..urr import URR
from . import style
from .config import RunConfig
from .registry import Experiment, ExperimentData, register

if TYPE_CHECKING:  # pragma: no cover
    import matplotlib.figure
    import pandas as pd

__all__ = [
    "ALPHA",
    "BUDGETS",
    "D",
    "FALSE_ALARM",
    "LIP_PRIOR",
    "MUTANT_SIZES",
    "PAPER",
    "RELATIVE_BUDGETS",
    "SEED",
    "SIZES",
    "TIGHT",
    "VALIDITY_ALPHA",
    "audited_families",
    "audited_member",
    "compute_mutants",
    "compute_notions",
    "compute_tightness",
    "compute_validity",
    "draw_tightness",
    "exact_item_levels",
    "samples_table",
    "samples_to_tight",
    "skipped_families",
    "tightness_summary",
]

#: the anchor, Arcolezi and Gambs's LDP-Auditor audits LDP frequency oracles from their samples
PAPER = "arcolezi2024revealing"
#: run seed of every audit experiment
SEED = 20240624
#: family-wise miss probability of the tightness, mutant and notion audits
ALPHA = 0.05
#: miss probability of the validity runs (large, so that exceedances would be visible)
VALIDITY_ALPHA = 0.2
#: the validity limit, which a correct auditor exceeds it with probability below this (binomial upper quantile)
FALSE_ALARM = 1e-6
#: items of the audited mechanisms
D = 4
#: budget parameters of the tightness sweep (nats)
BUDGETS: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0)
#: samples per input of the tightness sweep, 1e2 to 1e6, half a decade apart
SIZES: tuple[int, ...] = tuple(int(round(10 ** (k / 2))) for k in range(4, 13))
#: a bound "within 10%" of the exact value has a ratio at least this
TIGHT = 0.9
#: the prior of the LIP audits (k-ary LIP optimum, validity) on D items
LIP_PRIOR: tuple[float, ...] = (0.4, 0.3, 0.2, 0.1)
#: GRR's LIP audit uses three items and this prior (the tests' case)
LIP_PRIOR_3: tuple[float, ...] = (0.5, 0.3, 0.2)
#: samples per input of each validity run
VALIDITY_N = 2_000
#: sizes of the mutant search, 1e2 to 1e6, a quarter decade apart
MUTANT_SIZES: tuple[int, ...] = tuple(int(round(10 ** (k / 4))) for k in range(8, 25))
#: seeds that must all flag a mutant
MUTANT_SEEDS = 3
#: samples per input of the notions table
NOTIONS_N = 1_000_000
#: IDUE's and IPRR's budgets in the notion audits (the tests' cases)
IDUE_BUDGETS: tuple[float, ...] = (0.5, 1.0, 2.0)
IPRR_BUDGETS: tuple[float, ...] = (0.5, 1.0, 2.0, math.inf)


#: the per-item budgets of a family that reads budgets, relative to the audited budget ``eps``
#: (IPRR and IDUE-opt1 at ``(eps/2, eps, eps, eps)``)
RELATIVE_BUDGETS: tuple[float, ...] = (0.5, 1.0, 1.0, 1.0)


def _context() -> dict[str, Any]:
    """The context every audited family is built with: relative budgets and the LIP prior."""
    return {"budgets": np.array(RELATIVE_BUDGETS), "prior": np.array(LIP_PRIOR)}


def audited_families() -> tuple[Family, ...]:
    """Every registered family the tightness sweep audits: the item families with :attr:`~ldpkit.family.Family.audit`.

    Read from the registry at each call, in display order; each is built at budget ``eps`` on
    :data:`D` items by :meth:`~ldpkit.family.Family.member` with the context relative budgets
    :data:`RELATIVE_BUDGETS` (times ``eps``) and prior :data:`LIP_PRIOR`, for the families
    that read them.

    Examples
    --------
    >>> from ldpkit.experiments.audit import audited_families
    >>> [f.name for f in audited_families()][:3]
    ['GRR', 'RAPPOR', 'OUE']
    """
    return tuple(f for f in families(inputs="items", budget=True) if f.audit is not None)


def audited_member(family: Family | str, eps: float) -> Any:
    """The member of an audited family the tightness sweep audits at budget ``eps`` (see :func:`audited_families`).

    Examples
    --------
    >>> from ldpkit.experiments.audit import audited_member
    >>> audited_member("GRR", 1.0), audited_member("IPRR", 2.0)
    (GRR(d=4, epsilon=1), IPRR(d=4, sensitive=4, budgets=1..2))
    """
    fam = _audited(family)
    return fam.member(D, float(eps), **_context())


def _audited(family: Family | str) -> Family:
    fam = family if isinstance(family, Family) else get_family(family)
    if fam.audit is None or fam.inputs != "items" or not fam.budget:
        raise ValueError(f"family {fam.name!r} is not audited by the tightness sweep: "
                         f"{skipped_families().get(fam.name, 'it declares no audit')}")
    return fam


def skipped_families() -> dict[str, str]:
    """Every registered family the tightness sweep does not audit, with the reason.

    The reason is the family's :attr:`~ldpkit.family.Family.audit_skip`.  A family registered
    without ``audit`` or ``audit_skip`` appears here as not yet audited, so the chapter's table
    shows it.
    """
    audited = {f.name for f in audited_families()}
    out = {}
    for fam in families():
        if fam.name in audited:
            continue
        if fam.audit is not None:  # declares how it would be audited, but the sweep cannot take it
            why = ("item-set inputs: the audits take items as inputs" if fam.inputs != "items"
                   else "not indexed by a budget")
        else:
            why = fam.audit_skip or "not yet audited (its family declares neither audit nor audit_skip)"
        out[fam.name] = why
    return out


def _labels() -> dict[str, str]:
    return {"synthetic": "samples of the audited mechanisms"}


# --------------------------------------------------------------------------- tightness
def compute_tightness(config: RunConfig, *, families: Sequence[Family | str] | None = None,
                      budgets: Sequence[float] = BUDGETS, sizes: Sequence[int] = SIZES) -> ExperimentData:
    """``audit-tightness``: the LDP lower bound over the exact epsilon, per family, budget, events, size and seed.

    One row per (mechanism, eps, events, n, repeat): ``mechanism`` and ``family`` (the family's
    name), ``exact`` (the accountant's LDP epsilon), ``bound`` (at confidence ``1 -`` :data:`ALPHA`),
    ``ratio = bound / exact`` and ``n_tight`` (:func:`samples_to_tight`, the same on every row of a
    (mechanism, eps, events)).  ``families`` defaults to :func:`audited_families`.  A scale ``< 1``
    keeps the sizes up to ``scale * max(sizes)``.  Seeds: the point (family, eps) draws from the
    run seed's child named ``("audit-tightness", family, eps)`` (``RunConfig.map`` with
    ``keys``), so registering another family moves no row.
    """
    import pandas as pd

    chosen = list(audited_families()) if families is None else [_audited(f) for f in families]
    top = config.scale * max(sizes)
    grid = [int(n) for n in sizes if n <= top * (1 + 1e-9)] or [int(min(sizes))]
    points = [(fam, float(eps)) for fam in chosen for eps in budgets]

    def one(point: tuple[Family, float], gen: np.random.Generator) -> list[dict[str, Any]]:
        fam, eps = point
        mech = fam.member(D, eps, **_context())
        sampler = from_mechanism(mech)
        exact = accountant.ldp_epsilon(mech)
        rows = []
        for rep in range(config.repeats):
            for events in ("white", "black"):
                for n in grid:
                    b = audit_ldp(sampler, n, events=events, alpha=ALPHA, rng=gen)
                    rows.append({"mechanism": fam.name, "family": fam.name, "eps": eps, "exact": exact,
                                 "events": events, "n": n, "repeat": rep, "bound": b.value, "ratio": b.value / exact})
        return rows

    keys = [("audit-tightness", fam.name, eps) for fam, eps in points]
    results = config.map(one, points, "audit tightness", keys=keys)
    frame = pd.DataFrame([row for rows in results for row in rows])
    tight = samples_to_tight(frame)
    frame = frame.merge(tight[["mechanism", "eps", "events", "n_tight"]], on=["mechanism", "eps", "events"],
                        how="left", sort=False)
    return ExperimentData(frame, labels=_labels(),
                          meta={"sizes": grid, "budgets": tuple(budgets), "alpha": ALPHA, "d": D, "tight": TIGHT,
                                "skipped": skipped_families(), "how": {f.name: f.audit for f in chosen}})


def tightness_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (mechanism, eps, events, n): the median ratio and its quartiles over the repeats."""
    keys = ["mechanism", "eps", "events", "n"]
    g = frame.groupby(keys, sort=False)["ratio"]
    out = g.median().rename("median").to_frame()
    out["q25"] = g.quantile(0.25)
    out["q75"] = g.quantile(0.75)
    out["max"] = g.max()
    return out.reset_index()


def samples_to_tight(frame: pd.DataFrame, tight: float = TIGHT) -> pd.DataFrame:
    """Per (mechanism, eps, events): ``n_tight``, the first size whose median ratio is at least ``tight`` (NaN if none)."""
    import pandas as pd

    summ = tightness_summary(frame)
    rows = []
    for (mech, eps, events), grp in summ.groupby(["mechanism", "eps", "events"], sort=False):
        grp = grp.sort_values("n")
        hit = grp[grp["median"] >= tight]
        rows.append({"mechanism": mech, "eps": eps, "events": events,
                     "n_tight": float(hit["n"].iloc[0]) if len(hit) else math.nan,
                     "median_at_max": float(grp["median"].iloc[-1])})
    return pd.DataFrame(rows)


def samples_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The samples-to-10% table: one row per (mechanism, eps), white and black side by side, and their ratio."""
    t = samples_to_tight(frame)
    wide = t.pivot_table(index=["mechanism", "eps"], columns="events", values="n_tight", sort=False,
                         dropna=False).reset_index()
    wide.columns.name = None
    wide["black_over_white"] = wide["black"] / wide["white"]
    return wide[["mechanism", "eps", "white", "black", "black_over_white"]]


@style.styled
def draw_tightness(data: ExperimentData) -> matplotlib.figure.Figure:
    """Two panels per mechanism (white-box, black-box events): median bound / exact epsilon against samples per input, a colour per budget."""
    from matplotlib import ticker

    summ = tightness_summary(data.frame)
    mechs = list(dict.fromkeys(summ["mechanism"]))
    budgets = list(dict.fromkeys(summ["eps"]))
    kinds = (("white", "-", "white-box"), ("black", "--", "black-box"))
    ncols = 4                               # two mechanisms per row, each as a white-box and a black-box panel
    nrows = -(-2 * len(mechs) // ncols)
    fig, axes = style.figure(nrows, ncols, 1.6 * nrows + 0.8, sharex=True, sharey=True)
    panels = [(mech, kind) for mech in mechs for kind in kinds]
    for ax, (mech, (events, ls, label)) in zip(axes, panels):
        for i, eps in enumerate(budgets):
            look = style.ordered_style(i, len(budgets))
            mfc = look["color"] if events == "white" else "none"
            cur = summ[(summ["mechanism"] == mech) & (summ["eps"] == eps) & (summ["events"] == events)]
            ax.plot(cur["n"], cur["median"], ls=ls, lw=style.LW_DENSE, ms=style.MS_SMALL, mfc=mfc, **look)
        ax.axhline(TIGHT, color=style.KEY_GREY, lw=0.8, ls=":")
        ax.set_title(f"{mech}, {label}", fontsize="small")
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(ticker.LogLocator(numticks=3))
        ax.set_ylim(0, 1.05)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    for ax in axes[-ncols:]:
        ax.set_xlabel("samples per input")
    for ax in axes[::ncols]:
        ax.set_ylabel(r"bound / exact $\varepsilon$")
    handles = [style.key_handle(rf"$\varepsilon$ = {eps:g}", **style.ordered_style(i, len(budgets)))
               for i, eps in enumerate(budgets)]
    handles += [style.key_handle("white-box (filled)", ls="-", marker="o"),
                style.key_handle("black-box (open)", ls="--", mfc="none", marker="o"),
                style.key_handle(f"{TIGHT:g} (within 10%)", ls=":", lw=0.8)]
    style.legend_below(fig, handles, ncol=4, by_row=True)
    return fig


# --------------------------------------------------------------------------- validity
def exact_item_levels(matrix: np.ndarray) -> np.ndarray:
    """Per output ``j``: ``max_{x, x'} log Q(j|x)/Q(j|x')`` (``inf`` where a column has a zero and a positive entry)."""
    m = np.asarray(matrix, dtype=float)
    hi, lo = m.max(axis=0), m.min(axis=0)
    with np.errstate(divide="ignore"):
        return np.where(hi > 0, np.log(hi) - np.log(lo), 0.0)


def _validity_cases() -> list[tuple[str, str, str, Callable[[EventKind, np.random.Generator], float], float]]:
    """(notion, mechanism, parameter, run(events, gen) -> largest excess of the bound over the exact value, exact)."""
    cases: list[tuple[str, str, str, Callable[[EventKind, np.random.Generator], float], float]] = []
    for label, mech in (("GRR", GRR(D, 1.0)), ("OUE", OUE(D, 1.0)), ("OLH", OLH(D, 1.0)), ("HR", HR(D, 1.0))):
        s, exact = from_mechanism(mech), accountant.ldp_epsilon(mech)

        def ldp(events: EventKind, gen: np.random.Generator, s: Any = s, exact: float = exact) -> float:
            return audit_ldp(s, VALIDITY_N, events=events, alpha=VALIDITY_ALPHA, rng=gen).value - exact

        cases.append(("LDP", label, "epsilon", ldp, exact))
    idue = IDUE(list(IDUE_BUDGETS), model="opt1")
    s_idue, L = from_mechanism(idue), accountant.pairwise_log_ratio(idue)
    off = ~np.eye(len(IDUE_BUDGETS), dtype=bool)

    def pairwise(events: EventKind, gen: np.random.Generator) -> float:
        res = audit_pairwise(s_idue, VALIDITY_N, events=events, alpha=VALIDITY_ALPHA, rng=gen)
        return float(np.nanmax(res.values[off] - L[off]))

    cases.append(("pairwise", "IDUE-opt1", "every pair's log-ratio", pairwise, float(L[off].max())))
    budgets = list(IPRR_BUDGETS[:3])
    iprr = IPRR(budgets)
    s_iprr = from_mechanism(iprr)
    levels = exact_item_levels(iprr.channel().to_explicit().matrix)

    def ipldp(events: EventKind, gen: np.random.Generator) -> float:
        res = audit_ipldp(s_iprr, budgets, VALIDITY_N, events=events, alpha=VALIDITY_ALPHA, rng=gen)
        return float(np.nanmax(res.values - levels))

    cases.append(("IPLDP", "IPRR", "every output's level", ipldp, float(levels.max())))
    grr3 = GRR(3, 1.0)
    s_grr3, lip_exact = from_mechanism(grr3), accountant.lip_epsilon(grr3, list(LIP_PRIOR_3))

    def lip(events: EventKind, gen: np.random.Generator) -> float:
        return audit_lip(s_grr3, list(LIP_PRIOR_3), VALIDITY_N, events=events, alpha=VALIDITY_ALPHA,
                         rng=gen).value - lip_exact

    cases.append(("LIP", "GRR (d = 3)", "LIP epsilon under the prior", lip, lip_exact))
    return cases


def compute_validity(config: RunConfig) -> ExperimentData:
    """``audit-validity``: ``repeats`` audits per (notion, mechanism, events) at ``alpha =`` :data:`VALIDITY_ALPHA`.

    Columns: ``notion``, ``mechanism``, ``parameter``, ``events``, ``runs``, ``n`` (samples per
    input), ``alpha``, ``exceed`` (runs whose bound exceeds the exact value: any entry, for the
    matrix and per-output audits), ``rate``, ``limit`` (the Binomial(``runs``, ``alpha``) upper
    quantile at ``1 -`` :data:`FALSE_ALARM`), ``ok`` (``exceed <= limit``), ``max_excess`` (the
    largest bound minus exact value over the runs: negative when no run exceeded) and
    ``median_excess``.
    """
    import pandas as pd
    from scipy import stats

    cases = _validity_cases()
    kinds: tuple[EventKind, ...] = ("white", "black")
    points = [(i, events) for i in range(len(cases)) for events in kinds]

    def one(point: tuple[int, EventKind], gen: np.random.Generator) -> dict[str, Any]:
        i, events = point
        notion, label, parameter, run, exact = cases[i]
        excess = np.array([run(events, gen) for _ in range(config.repeats)])
        exceed = int((excess > 0).sum())
        limit = int(stats.binom.ppf(1 - FALSE_ALARM, config.repeats, VALIDITY_ALPHA))
        return {"notion": notion, "mechanism": label, "parameter": parameter, "exact": exact, "events": events,
                "runs": config.repeats, "n": VALIDITY_N, "alpha": VALIDITY_ALPHA, "exceed": exceed,
                "rate": exceed / config.repeats, "limit": limit, "ok": exceed <= limit,
                "max_excess": float(excess.max()), "median_excess": float(np.median(excess))}

    frame = pd.DataFrame(config.map(one, points, "audit validity"))
    return ExperimentData(frame, labels=_labels(), meta={"false_alarm": FALSE_ALARM, "n": VALIDITY_N})


# --------------------------------------------------------------------------- mutants
def _flags(m: Mutant, n: int, events: EventKind, seed: int) -> tuple[bool, float]:
    """Whether the audit of ``m`` at ``n`` samples flags it, and the largest bound (or excess) it reports."""
    sampler = from_channel(m.buggy)
    kw: dict[str, Any] = {"channel": m.claimed} if events == "white" else {}
    if m.notion == "ldp":
        b = audit_ldp(sampler, n, events=events, alpha=ALPHA, rng=seed, **kw).value
        return b > float(m.budget), b
    if m.notion == "pairwise":
        res = audit_pairwise(sampler, n, events=events, alpha=ALPHA, rng=seed, **kw)
        return bool(violates(res, m.budget).any()), float(np.nanmax(res.values - np.asarray(m.budget)))
    items = audit_ipldp(sampler, m.budget, n, events=events, alpha=ALPHA, rng=seed, **kw)
    return bool(violates(items, m.budget).any()), float(np.nanmax(items.values - np.asarray(m.budget)))


def _budget_text(m: Mutant) -> str:
    if m.notion == "ldp":
        return f"{float(m.budget):g}-LDP"
    if m.notion == "pairwise":
        b = np.asarray(m.budget, dtype=float)
        ours = accountant.pairwise_budgets(len(IDUE_BUDGETS), budgets=list(IDUE_BUDGETS), r="min")
        if b.shape == ours.shape and np.allclose(b, ours):
            return "MinID-LDP (" + ", ".join(f"{v:g}" for v in IDUE_BUDGETS) + ")"
        return "a budget matrix"
    return "IPLDP (" + ", ".join("∞" if math.isinf(v) else f"{v:g}" for v in np.asarray(m.budget)) + ")"


def compute_mutants(config: RunConfig, *, sizes: Sequence[int] = MUTANT_SIZES) -> ExperimentData:
    """``audit-mutants``: per mutant and control, the smallest size at which every seed flags it, white and black.

    Seeds are ``config.seed + s`` for ``s < MUTANT_SEEDS``.  Columns: ``name``,
    ``kind`` (``"mutant"`` or ``"control"``), ``bug``, ``notion``, ``claimed`` (the claimed
    budget, in words), ``exact_excess`` (the buggy channel's exact loss minus the claim: positive
    for a privacy bug), ``ldp_epsilon`` (the buggy channel's exact LDP epsilon), ``n_white`` and
    ``n_black`` (smallest size of the grid at which every seed flags it; NaN if none up to the
    largest), ``n_stated`` (the size the tests assert), ``flagged_at_max`` and
    ``bound_white_max``, ``bound_black_max`` (the largest bound, or bound minus budget for the
    matrix and per-output notions, over the seeds at the largest size).
    """
    import pandas as pd

    grid = sorted(int(n) for n in sizes if n <= config.scale * max(sizes) * (1 + 1e-9)) or [int(min(sizes))]
    base = int(config.seed or 0)
    seeds = [base + s for s in range(MUTANT_SEEDS)]
    items = [("mutant", m) for m in mutants().values()] + [("control", m) for m in controls().values()]
    rows = []
    for kind, m in items:
        row: dict[str, Any] = {"name": m.name, "kind": kind, "bug": m.bug, "notion": m.notion,
                               "claimed": _budget_text(m), "ldp_epsilon": accountant.ldp_epsilon(m.buggy)}
        row["exact_excess"] = (row["ldp_epsilon"] - float(m.budget)) if m.notion == "ldp" else m.true_loss
        flagged_max = False
        for events in ("white", "black"):
            found = math.nan
            if kind == "mutant":
                for n in grid:
                    if all(_flags(m, n, events, s)[0] for s in seeds):
                        found = float(n)
                        break
            at_max = [_flags(m, grid[-1], events, s) for s in seeds]
            flagged_max = flagged_max or any(f for f, _ in at_max)
            row[f"n_{events}"] = found
            row[f"bound_{events}_max"] = max(v for _, v in at_max)
        row["n_stated"] = m.n_catch if kind == "mutant" else math.nan
        row["flagged_at_max"] = flagged_max
        rows.append(row)
    frame = pd.DataFrame(rows)
    return ExperimentData(frame, labels=_labels(), meta={"sizes": grid, "seeds": seeds, "alpha": ALPHA})


# --------------------------------------------------------------------------- notions
def compute_notions(config: RunConfig) -> ExperimentData:
    """``audit-notions``: the notions beyond LDP audited entry by entry, one seed, ``NOTIONS_N`` samples per input.

    Rows: every ordered pair of IDUE-opt1 at ``IDUE_BUDGETS`` (its log-ratio against the
    MinID-LDP budget), every sensitive output of IPRR at ``IPRR_BUDGETS`` and of uRR
    (two sensitive items of four) against its exact level, and GRR's LIP epsilon under
    ``LIP_PRIOR_3``.  Columns: ``notion``, ``mechanism``, ``entry``, ``budget``, ``exact``,
    ``white``, ``black`` (the bounds), ``white_ratio``, ``black_ratio``, ``violated`` (any bound
    above its budget); plus, for uRR and IPRR, ``structural`` (witnesses against IPLDP's
    structural condition, which a correct mechanism never shows).
    """
    import pandas as pd

    n = max(2, int(round(config.scale * NOTIONS_N)))
    gen = config.generator()
    rows: list[dict[str, Any]] = []
    idue = IDUE(list(IDUE_BUDGETS), model="opt1")
    L = accountant.pairwise_log_ratio(idue)
    M = accountant.pairwise_budgets(len(IDUE_BUDGETS), budgets=list(IDUE_BUDGETS), r="min")
    res = {ev: audit_pairwise(from_mechanism(idue), n, events=ev, alpha=ALPHA, rng=gen) for ev in ("white", "black")}
    for x in range(len(IDUE_BUDGETS)):
        for xp in range(len(IDUE_BUDGETS)):
            if x != xp:
                rows.append({"notion": "pairwise (MinID-LDP)", "mechanism": "IDUE-opt1", "entry": f"({x}, {xp})",
                             "budget": float(M[x, xp]), "exact": float(L[x, xp]),
                             "white": float(res["white"].values[x, xp]), "black": float(res["black"].values[x, xp]),
                             "violated": bool(violates(res["white"], M)[x, xp] or violates(res["black"], M)[x, xp]),
                             "structural": 0})
    for label, mech, budgets in (("IPRR", IPRR(list(IPRR_BUDGETS)), list(IPRR_BUDGETS)),
                                 ("uRR", URR(D, 1.0, [0, 1]), [1.0, 1.0, math.inf, math.inf])):
        levels = exact_item_levels(mech.channel().to_explicit().matrix)
        r = {ev: audit_ipldp(from_mechanism(mech), budgets, n, events=ev, alpha=ALPHA, rng=gen)
             for ev in ("white", "black")}
        for j, eps in enumerate(budgets):
            if math.isfinite(eps):
                rows.append({"notion": "IPLDP (per output)", "mechanism": label, "entry": f"output {j}",
                             "budget": eps, "exact": float(levels[j]), "white": float(r["white"].values[j]),
                             "black": float(r["black"].values[j]),
                             "violated": bool(violates(r["white"], budgets)[j] or violates(r["black"], budgets)[j]),
                             "structural": len(r["white"].structural) + len(r["black"].structural)})
    grr = GRR(3, 1.0)
    exact = accountant.lip_epsilon(grr, list(LIP_PRIOR_3))
    b = {ev: audit_lip(from_mechanism(grr), list(LIP_PRIOR_3), n, events=ev, alpha=ALPHA, rng=gen).value
         for ev in ("white", "black")}
    rows.append({"notion": "LIP (prior)", "mechanism": "GRR (d = 3)", "entry": "all", "budget": 1.0, "exact": exact,
                 "white": b["white"], "black": b["black"], "violated": bool(max(b.values()) > 1.0), "structural": 0})
    frame = pd.DataFrame(rows)
    frame["white_ratio"] = frame["white"] / frame["exact"]
    frame["black_ratio"] = frame["black"] / frame["exact"]
    return ExperimentData(frame, labels=_labels(), meta={"n": n, "alpha": ALPHA, "lip_prior": LIP_PRIOR_3})


# --------------------------------------------------------------------------- registration
register(Experiment("audit-tightness", "The kit's mechanisms audited: LDP lower bound over the exact epsilon",
                    PAPER, "Audit: tightness and samples to 10%", "figure", (), compute_tightness, draw_tightness,
                    RunConfig(repeats=3, seed=SEED, scale=1.0), "sec-audit-tightness"))
register(Experiment("audit-validity", "How often a correct mechanism's lower bound exceeds its exact parameter",
                    PAPER, "Audit: validity of the confidence statement", "table", (), compute_validity, None,
                    RunConfig(repeats=200, seed=SEED, scale=1.0), "sec-audit-validity"))
register(Experiment("audit-mutants", "Mutants with injected bugs and controls: the samples at which each is caught",
                    PAPER, "Audit: mutation tests", "table", (), compute_mutants, None,
                    RunConfig(repeats=1, seed=SEED, scale=1.0), "sec-audit-mutants"))
register(Experiment("audit-notions", "The notions beyond LDP audited entry by entry", PAPER,
                    "Audit: pairwise, per-output and LIP audits", "table", (), compute_notions, None,
                    RunConfig(repeats=1, seed=SEED, scale=1.0), "sec-audit-notions"))
