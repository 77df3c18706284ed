"""The map of notions (synthesis chapter): data, drawing and registration of ``synthesis-notion-map``.

:func:`compute_map` runs :func:`ldpkit.notion_map.notion_map` on the default
:class:`~ldpkit.notion_map.Scenario` (its random candidates seeded by the run's seed) and returns
the 72 ordered pairs as a frame (:meth:`ldpkit.notion_map.NotionMap.frame`: verdict, proof or
witness, the two notions' tightest values at the witness, the parameter map); :func:`draw_map`
draws the map as a directed graph: one box per class of equivalent notions, a solid arrow per
implication at the same budget that no other arrow implies, a dashed arrow for an implication at
twice the budget; two notions joined by no path are separated by a witness channel.  Synthesis
chapter, :ref:`sec-synthesis-map`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import notion_map as _nm
from . import style
from .config import RunConfig
from .registry import Experiment, ExperimentData, register

if TYPE_CHECKING:  # pragma: no cover
    import matplotlib.figure

__all__ = ["compute_map", "draw_map", "layout"]

#: the anchor: Desfontaines and Pejo's SoK collects the literature's partial order of notions
PAPER = "desfontaines2020sok"


def compute_map(config: RunConfig) -> ExperimentData:
    """The one-budget map at the default scenario, random candidates seeded by ``config.seed``."""
    seed = config.seed if isinstance(config.seed, int) else _nm.Scenario().seed
    scenario = _nm.Scenario(seed=seed)
    nmap = _nm.notion_map(scenario)
    return ExperimentData(nmap.frame(), labels={"synthetic": "generated channels"},
                          meta={"map": nmap, "scenario": scenario})


def _class_label(group: Sequence[str]) -> str:
    if len(group) <= 2:
        return " \u2261 ".join(group)
    half = (len(group) + 1) // 2
    return " \u2261 ".join(group[:half]) + "\n\u2261 " + " \u2261 ".join(group[half:])


#: hand positions of the default map's classes (by their first notion): no two arrows cross
POSITIONS: dict[str, tuple[float, float]] = {"LDP": (0.27, 1.0), "IPLDP": (0.8, 1.0), "ULDP": (0.55, 0.5),
                                             "FLDP": (0.55, 0.0), "LIP": (0.1, 0.5), "MIP": (0.1, 0.0)}


def layout(nmap: _nm.NotionMap) -> dict[tuple[str, ...], tuple[float, float]]:
    """Position of every class: ``POSITIONS`` when it names every class, else by level and parents.

    The fallback puts a class at its level (the longest chain of arrows above it) and, within the
    level, orders classes by the mean position of their parents.

    Examples
    --------
    >>> from ldpkit.notion_map import notion_map
    >>> pos = layout(notion_map())
    >>> pos[("MIP",)][1] < pos[("LIP",)][1] < pos[("IPLDP",)][1]
    True
    """
    classes = nmap.classes()
    if all(c[0] in POSITIONS for c in classes):
        return {c: POSITIONS[c[0]] for c in classes}
    edges = nmap.hasse()
    parents = {c: [a for a, b in edges if b == c] for c in classes}
    level: dict[tuple[str, ...], int] = {}

    def depth(c: tuple[str, ...]) -> int:
        if c not in level:
            level[c] = 0 if not parents[c] else 1 + max(depth(p) for p in parents[c])
        return level[c]

    for c in classes:
        depth(c)
    n_levels = max(level.values()) + 1
    pos: dict[tuple[str, ...], tuple[float, float]] = {}
    for lv in range(n_levels):
        row = [c for c in classes if level[c] == lv]
        if lv:
            row.sort(key=lambda c: (sum(pos[p][0] for p in parents[c]) / len(parents[c]), classes.index(c)))
        for i, c in enumerate(row):
            x = 0.5 if len(row) == 1 else 0.12 + 0.76 * i / (len(row) - 1)
            if lv and len(row) == 1 and parents[c]:
                x = sum(pos[p][0] for p in parents[c]) / len(parents[c])
            pos[c] = (x, 1.0 - lv / max(1, n_levels - 1))
    return pos


@style.styled
def draw_map(data: ExperimentData) -> matplotlib.figure.Figure:
    """The map as a directed graph (module docstring)."""
    nmap: _nm.NotionMap = data.meta["map"]
    pos = layout(nmap)
    fig, (ax,) = style.figure(1, 1, 4.4)
    ax.set_axis_off()
    ax.set_xlim(-0.06, 1.02)
    ax.set_ylim(-0.14, 1.14)
    boxes: dict[tuple[str, ...], Any] = {}
    for c, (x, y) in pos.items():
        boxes[c] = ax.text(x, y, _class_label(c), ha="center", va="center", fontsize=style.MIN_FONT_PT + 1,
                           bbox=dict(boxstyle="round,pad=0.45", fc=style.SHADE_GREY, ec=style.KEY_GREY, lw=1.0))
    for a, b in nmap.hasse():
        ax.annotate("", xy=pos[b], xytext=pos[a],
                    arrowprops=dict(arrowstyle="-|>", color="k", lw=style.LW_EXACT, mutation_scale=16,
                                    patchA=boxes[a].get_bbox_patch(), patchB=boxes[b].get_bbox_patch(),
                                    shrinkA=3, shrinkB=3, connectionstyle="arc3,rad=0.0"))
    # implications at another parameter, drawn once per target class (LIP(eps) => LDP(2 eps))
    drawn: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()
    cls_of = {n: c for c in pos for n in c}
    for r in nmap.relations:
        if r.parameter_map is None or r.holds:
            continue
        a, b = cls_of[r.source], cls_of[r.target]
        if (a, b) in drawn or any(cls_of[t] == b and nmap.implies(r.source, t) for t in b if t != r.target):
            continue
        if b != cls_of[_nm.PAIRWISE[0]]:
            continue  # the others follow from the pairwise class by its own arrows
        drawn.add((a, b))
        ax.annotate("", xy=pos[b], xytext=pos[a],
                    arrowprops=dict(arrowstyle="-|>", color=style.KEY_GREY, lw=style.LW_DENSE, ls="--",
                                    mutation_scale=16, patchA=boxes[a].get_bbox_patch(),
                                    patchB=boxes[b].get_bbox_patch(), shrinkA=3, shrinkB=3,
                                    connectionstyle="arc3,rad=-0.35"))
        my = (pos[a][1] + pos[b][1]) / 2
        ax.text(min(pos[a][0], pos[b][0]) - 0.035, my, r"at $2\varepsilon$", ha="right", va="center", color=style.KEY_GREY)
    handles = [style.key_handle(r"implies, at the same $\varepsilon$", color="k", lw=style.LW_EXACT),
               style.key_handle(r"implies at $2\varepsilon$ only", ls="--"),
               style.key_handle("no path: a witness channel separates them", ls="none")]
    style.legend_below(fig, handles, ncol=2, by_row=True)
    return fig


register(Experiment("synthesis-notion-map", "The map of notions: every ordered pair decided, at one budget",
                    PAPER, "Notion map", "figure", (), compute_map, draw_map,
                    RunConfig(repeats=1, seed=_nm.Scenario().seed, scale=1.0), "sec-synthesis-map"))
