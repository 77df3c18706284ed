"""``audit-ldp-auditor``: LDP-Auditor's statistic against the kit's auditor, at equal samples per input.

Auditing chapter, :ref:`sec-audit-ldp-auditor`.  LDP-Auditor (Arcolezi and Gambs, PETS 2024,
``arcolezi2024revealing``; their Fig. 2 plots its estimate against the budget) audits each protocol
at ``(k, eps)`` with ``nb_trials = 10**6`` reports of each of two inputs and ``alpha = 1e-2``; its
statistic is reproduced exactly on the kit's mechanisms by :mod:`ldpkit.audit.ldp_auditor`.  This
experiment plots the *tightness* (lower bound over the true budget) of

* their statistic: the mean over ``repeats`` draws (their experiment averages 5 seeds) of
  binomial ``TP`` and ``FP`` at the exact guess probabilities of the kit's mechanism, with its
  exact expected value in ``expected``;
* the kit's :func:`~ldpkit.audit.audit_ldp`, white-box and black-box, on the same two inputs with the
  same samples per input and the same ``alpha`` (mean over the repeats), sampled at the aggregate
  level: multinomial histograms of the pair's exact channel rows (GRR: the items; RAPPOR and OUE:
  the two bits of the pair, :func:`~ldpkit.audit.ldp_auditor.pair_channel`; OLH and BLH: the
  ``(seed, bucket)`` outputs over the kit's seed pool).

No data: the inputs are the two items ``0`` and ``k - 1`` (``datasets = ()``).  ``config.scale``
multiplies the trials per input; ``config.repeats`` is the number of seeds.
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import TYPE_CHECKING, cast

import numpy as np

from .._rng import child_seeds
from ..audit import EventKind, audit_ldp, from_channel
from ..audit import ldp_auditor as la
from ..olh import OLH
from ..unary import UnaryEncoding
from . import style
from .comparison import Comparison
from .config import RunConfig
from .registry import Experiment, ExperimentData, register

if TYPE_CHECKING:  # pragma: no cover
    import matplotlib.figure

__all__ = ["K_VALUES", "METHODS", "compute", "draw", "pair_rows"]

PAPER = "arcolezi2024revealing"
SEED = 20240715
#: domain sizes drawn (their smallest, and one of their larger ones)
K_VALUES = (25, 100)
#: the three statistics compared, in drawing order
METHODS = ("LDP-Auditor", "ours, white-box", "ours, black-box")
_METHOD_COLOURS = MappingProxyType({"LDP-Auditor": style.PALETTE["vermillion"],
                                    "ours, white-box": style.PALETTE["blue"],
                                    "ours, black-box": style.PALETTE["green"]})
_METHOD_MARKERS = MappingProxyType({"LDP-Auditor": "o", "ours, white-box": "s", "ours, black-box": "^"})
_K_LINES = MappingProxyType({25: "-", 100: "--"})
_NAMES = MappingProxyType({"GRR": "GRR", "SUE": "RAPPOR (SUE)", "OUE": "OUE", "BLH": "BLH", "OLH": "OLH"})


#: our two event choices and their labels in the frame
OURS: tuple[tuple[EventKind, str], ...] = (("white", "ours, white-box"), ("black", "ours, black-box"))


def pair_rows(mech: object, v1: int, v2: int) -> np.ndarray:
    """The exact channel rows of inputs ``v1`` and ``v2`` (``2 x outputs``), as the kit's auditor samples them."""
    if isinstance(mech, UnaryEncoding):
        return la.pair_channel(mech, v1, v2)[[v1, v2]]
    if isinstance(mech, OLH):
        # the two rows of mech.channel() without building the others: (p' if v == h_s(x) else q') / m
        h = la.olh_hashes(mech)[:, [v1, v2]]  # (m, 2)
        m = h.shape[0]
        rows = np.full((2, m, mech.g), mech.q_prime / m)
        rows[0, np.arange(m), h[:, 0]] = rows[1, np.arange(m), h[:, 1]] = mech.p_prime / m
        return rows.reshape(2, m * mech.g)
    return cast("np.ndarray", mech.channel().matrix[[v1, v2]])  # type: ignore[attr-defined]


def compute(config: RunConfig) -> ExperimentData:
    """Tightness of the three statistics for GRR, RAPPOR, OUE, BLH and OLH at ``k`` in :data:`K_VALUES`, every budget of their grid."""
    import pandas as pd

    n = max(100, int(round(la.NB_TRIALS * config.scale)))
    alpha = la.ALPHA
    rows = []
    settings = [(p, k, e) for p in la.PROTOCOLS for k in K_VALUES for e in la.EPS_GRID]
    for (proto, k, eps), ss in zip(settings, child_seeds(config.seed, len(settings))):
        mech = la.kit_mechanism(proto, k, eps)
        tpr, fpr = la.guess_probabilities(mech)
        expected, sd = la.ldp_auditor_moments(tpr, fpr, n, alpha)
        sampler = from_channel(pair_rows(mech, 0, k - 1))
        gens = [np.random.default_rng(s) for s in ss.spawn(config.repeats)]
        theirs = [float(la.sample_ldp_auditor_statistic(tpr, fpr, n, alpha, 1, g)[0]) for g in gens]
        base = dict(protocol=proto, k=k, eps=eps, n=n, tpr=tpr, fpr=fpr)
        for r, gen in enumerate(gens):
            rows.append(dict(base, method="LDP-Auditor", repeat=r, bound=theirs[r], expected=expected, sd=sd))
            for kind, name in OURS:
                b = audit_ldp(sampler, n, events=kind, alpha=alpha, pairs=[(0, 1)], rng=gen).value
                rows.append(dict(base, method=name, repeat=r, bound=b, expected=math.nan, sd=math.nan))
    frame = pd.DataFrame(rows)
    frame["tightness"] = frame["bound"] / frame["eps"]
    return ExperimentData(frame, labels={}, meta={"n": n, "alpha": alpha, "k_values": K_VALUES,
                                                  "protocols": la.PROTOCOLS, "eps_grid": la.EPS_GRID,
                                                  "inputs": "items 0 and k - 1 (no data)"})


def draw(data: ExperimentData) -> matplotlib.figure.Figure:
    """One panel per protocol: mean tightness against the budget, colour = statistic, line style = ``k``."""
    from matplotlib import ticker

    frame = data.frame
    means = frame.groupby(["protocol", "k", "eps", "method"], sort=False)["tightness"].mean().reset_index()
    with style.book_rc():
        fig, axes = style.figure(2, 3, 5.4, sharex=True, sharey=True)
        for ax, proto in zip(axes, la.PROTOCOLS):
            for k in data.meta["k_values"]:
                for m in METHODS:
                    cur = means[(means["protocol"] == proto) & (means["k"] == k) & (means["method"] == m)]
                    ax.plot(cur["eps"], cur["tightness"].clip(lower=0), ls=_K_LINES[k], color=_METHOD_COLOURS[m],
                            marker=_METHOD_MARKERS[m], lw=style.LW_DENSE, ms=style.MS_SMALL, label=f"{m}, k = {k}")
            ax.set_title(_NAMES[proto])
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _pos: f"{v:g}"))
            ax.set_ylim(0, 1.05)
            ax.axhline(1.0, color=style.KEY_GREY, lw=0.8, ls=":")
        for ax in axes[3:5]:
            ax.set_xlabel(r"budget $\varepsilon$ (nats)")
        axes[2].set_xlabel(r"budget $\varepsilon$ (nats)")
        axes[2].xaxis.set_tick_params(labelbottom=True)
        for ax in (axes[0], axes[3]):
            ax.set_ylabel("lower bound / budget")
        axes[5].set_axis_off()
        handles = [style.key_handle(m, color=_METHOD_COLOURS[m], marker=_METHOD_MARKERS[m]) for m in METHODS]
        handles += [style.key_handle(f"k = {k}", ls=_K_LINES[k]) for k in data.meta["k_values"]]
        style.legend_below(fig, handles, ncol=3)
    return fig


register(Experiment("audit-ldp-auditor",
                    "LDP-Auditor's statistic and the kit's auditor at equal samples per input: tightness against the budget",
                    PAPER, "Fig. 2", "figure", (), compute, draw,
                    RunConfig(repeats=la.SEEDS, seed=SEED, scale=1.0), "sec-audit-ldp-auditor",
                    Comparison(keys=("protocol", "k", "eps", "method"), repeat="repeat",
                               exact=("n", "tpr", "fpr", "expected", "sd"),
                               ignore={"tightness": "the bound over the budget, compared through bound"})))
