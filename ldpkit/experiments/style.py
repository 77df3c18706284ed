"""The look of every figure the experiments draw: one place for all of it.

The four figure modules (:mod:`ldpkit.experiments.idldp_figures`,
:mod:`~ldpkit.experiments.ipldp_figures`, :mod:`~ldpkit.experiments.fldp_figures`,
:mod:`~ldpkit.experiments.lip_figures`) take from here the colour of every mechanism, the
markers, line widths and marker sizes, the fonts and figure width, the shared axis labels and
the defaults of the files ``ldpkit reproduce`` writes.  The same figures appear in the book and
in those files, so the look lives with the experiments, not with the book.

Sizes.  A figure is :data:`FIG_WIDTH` inches wide with at most two panels per row, and every
text in it is at least :data:`MIN_FONT_PT` points (:data:`RC`), so it is readable at the width
of the book's content column.  Draw functions run inside :data:`RC` (:func:`styled`) and create
their figure without ``pyplot`` (:func:`figure`).

Colours.  :data:`COLORS` gives each paper family's mechanisms (or models) their colours, from
matplotlib's default cycle.  A mechanism keeps its colour across the figures of a family; the
IPLDP figures give IDUE's opt1 and opt2 other colours than the ID-LDP figures, since IPRR, which
they are drawn against, takes opt1's red.  Grey explains a line or marker style in a legend
(:data:`KEY_GREY`).

Lines and markers.  An exact (theory) value is a solid line; a simulated mean is an open circle
(:data:`SIMULATED_MARKER`, face ``"none"``), so an exact line drawn over it stays visible.  The
named widths and sizes below are every value the figures use, each with the role it has.

Axis labels.  A label names the quantity and, in parentheses, its unit or kind: ``(counts^2 /
user)``, ``(nats)``, ``(ratio)``, ``(fraction)``; labels shared by several figures are defined
here (:data:`MSE_LABEL`, :data:`EPS_LABEL`, :data:`K_LABEL`).

Examples
--------
>>> from ldpkit.experiments import style
>>> style.COLORS["idldp"]["IDUE-opt0"], style.FIG_WIDTH, style.RC["font.size"] == style.MIN_FONT_PT
('C2', 7.5, True)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:  # pragma: no cover
    import matplotlib.axes
    import matplotlib.figure
    import matplotlib.lines

__all__ = [
    "COLORS",
    "EPS_LABEL",
    "ESTIMATOR_STYLES",
    "FIG_WIDTH",
    "INFEASIBLE_COLOR",
    "INFEASIBLE_MARKER",
    "KEY_GREY",
    "K_LABEL",
    "LW_DENSE",
    "LW_ESTIMATOR",
    "LW_EXACT",
    "LW_EXACT_IPLDP",
    "LW_KEY",
    "LW_PAPER",
    "LW_SWATCH",
    "MEANS_LINE",
    "MEW_SIMULATED",
    "MEW_SIMULATED_IPLDP",
    "MIN_FONT_PT",
    "MSE_LABEL",
    "MS_ERRORBAR",
    "MS_SIMULATED",
    "MS_SMALL",
    "MUTED_GREY",
    "RC",
    "SAVEFIG",
    "SHADE_GREY",
    "SIMULATED_MARKER",
    "TOPK_MARKERS",
    "TOPK_OTHER_MARKER",
    "figure",
    "legend_below",
    "ratio_axis",
    "styled",
    "swatch",
]

_F = TypeVar("_F", bound=Callable[..., Any])

# --------------------------------------------------------------------------- sizes and fonts
#: Width in inches of a figure with two panels side by side.  The book shows a figure at most
#: about 660 px wide (the figure box of its 740 px content column), 7.5 inches at 88 px per
#: inch, so :data:`MIN_FONT_PT` appears at about 9 points there.
FIG_WIDTH = 7.5
#: Smallest font size in points of any text in a figure (tick labels and legends).
MIN_FONT_PT = 10.0
#: matplotlib settings of every figure (the book's look); every draw function runs inside them
RC: Mapping[str, Any] = MappingProxyType({
    "figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3, "font.size": MIN_FONT_PT,
    "axes.titlesize": 11.0, "axes.labelsize": 10.5, "figure.titlesize": 11.5,
    "xtick.labelsize": MIN_FONT_PT, "ytick.labelsize": MIN_FONT_PT, "legend.fontsize": MIN_FONT_PT,
    "legend.title_fontsize": MIN_FONT_PT,
})
#: keyword arguments of ``Figure.savefig`` for the files ``ldpkit reproduce`` writes (the
#: book's inline figures are cropped the same way)
SAVEFIG: Mapping[str, Any] = MappingProxyType({"bbox_inches": "tight"})

# --------------------------------------------------------------------------- colours
#: Colour of each mechanism (ID-LDP, IPLDP, FLDP) or model (LIP), per paper family; the order of
#: a family's entries is the order of its legends where a figure lists them all.
COLORS: Mapping[str, Mapping[str, str]] = MappingProxyType({
    "idldp": MappingProxyType({"RAPPOR": "C0", "OUE": "C1", "IDUE-opt0": "C2", "IDUE-opt1": "C3",
                               "IDUE-opt2": "C4", "RAPPOR-PS": "C0", "OUE-PS": "C1", "IDUE-PS": "C2"}),
    "ipldp": MappingProxyType({"IPRR": "C3", "KRR": "C0", "URR": "C1", "KRR-emax": "C9", "URR-emax": "C5",
                               "IDUE-opt0": "C2", "IDUE-opt1": "C4", "IDUE-opt2": "C6"}),
    # FHR green, as in the paper
    "fldp": MappingProxyType({"FHR": "C2", "HR": "C4", "OLH": "C0", "OUE": "C1"}),
    "lip": MappingProxyType({"LDP": "C7", "Opt-LDP": "C0", "Opt-LIP": "C3", "Opt-LIP eps/2": "C1",
                             "Sym-LIP eps/2": "C2", "Opt-LIP (Thm 2)": "C3", "Opt-LIP eps/2 (Thm 2)": "C1",
                             "Sym-LIP eps/2 (eq. 23)": "C2", "LDP, printed": "C7", "Opt-LDP, printed": "C0",
                             "LIP, printed": "C3"}),
})
#: grey of the legend entries that explain a line or marker style rather than a mechanism
KEY_GREY = "0.35"
#: grey of a curve whose model has no colour of its own
MUTED_GREY = "0.3"
#: light grey of a shaded band (the "infinite epsilon" column of the FLDP figures)
SHADE_GREY = "0.93"

# --------------------------------------------------------------------------- markers
#: marker of a simulated mean, drawn open (``mfc="none"``)
SIMULATED_MARKER = "o"
#: simulated means joined by a line where no exact curve is drawn (ID-LDP figures), open (``mfc="none"``)
MEANS_LINE = "o-"
#: the marker of each top-k size in the FLDP figures (:data:`TOPK_OTHER_MARKER` for any other k)
TOPK_MARKERS: Mapping[int, str] = MappingProxyType({20: "o", 50: "s", 100: "^"})
#: the marker of a top-k size not in :data:`TOPK_MARKERS`
TOPK_OTHER_MARKER = "D"
#: line style and marker of each estimator in the IPLDP figures
ESTIMATOR_STYLES: Mapping[str, tuple[str, str]] = MappingProxyType({"NS": ("--", "s"), "MLE": (":", "^")})
#: the marker of a point of the LIP paper that violates LIP, drawn in :data:`INFEASIBLE_COLOR`
INFEASIBLE_MARKER = "x"
#: colour of an infeasible point (LIP figures)
INFEASIBLE_COLOR = "k"

# --------------------------------------------------------------------------- widths and sizes
#: an exact curve drawn over simulated means (ID-LDP's eq. (7); LIP's exact MSE)
LW_EXACT = 1.6
#: IPLDP's exact curve, beside two estimator curves per mechanism
LW_EXACT_IPLDP = 1.4
#: the NS and MLE curves of the IPLDP figures
LW_ESTIMATOR = 1.3
#: the LIP paper's printed curves
LW_PAPER = 1.2
#: curves of dense panels (the twelve series of an FLDP panel, LIP's exact MSE on the data's inputs)
LW_DENSE = 1.1
#: a colour-only legend entry (one per mechanism)
LW_SWATCH = 2.5
#: the legend entry that explains "line" (ID-LDP figures)
LW_KEY = 2.0
#: a simulated mean's open circle
MS_SIMULATED = 6
#: small markers of dense panels (FLDP's top-k markers, IPLDP's estimator markers)
MS_SMALL = 4
#: simulated means with error bars, and infeasible points (LIP figures)
MS_ERRORBAR = 5
#: edge width of the open circle (ID-LDP)
MEW_SIMULATED = 1.2
#: edge width of the open circle (IPLDP)
MEW_SIMULATED_IPLDP = 1.1

# --------------------------------------------------------------------------- axis labels
#: the mean squared error of counts, per user
MSE_LABEL = "MSE (counts$^2$ / user)"
#: the minimum budget (ID-LDP figures)
EPS_LABEL = r"minimum budget $\varepsilon$ (nats)"
#: the number of top items a metric looks at
K_LABEL = "k (number of top items)"


# --------------------------------------------------------------------------- helpers
def styled(draw: _F) -> _F:
    """Run a draw function inside :data:`RC`, so every text it creates gets the book's sizes."""

    @functools.wraps(draw)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import matplotlib

        with matplotlib.rc_context(cast(Any, dict(RC))):
            return draw(*args, **kwargs)

    return cast(_F, wrapper)


def figure(nrows: int, ncols: int, height: float,
           width: float = FIG_WIDTH) -> tuple[matplotlib.figure.Figure, list[matplotlib.axes.Axes]]:
    """A figure (not managed by ``pyplot``, constrained layout) with an ``nrows`` x ``ncols`` grid.

    Returns the figure and its axes, row by row.
    """
    import matplotlib.figure

    fig = matplotlib.figure.Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, [ax for row in axes for ax in row]


def swatch(color: str, label: str) -> matplotlib.lines.Line2D:
    """A colour-only legend entry: a thick line (:data:`LW_SWATCH`)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], color=color, lw=LW_SWATCH, label=label)


def legend_below(fig: matplotlib.figure.Figure, handles: Sequence[Any], labels: Sequence[str] | None = None, *,
                 ncol: int, **options: Any) -> None:
    """The figure's one legend, under its panels, without a frame (``options`` go to ``Figure.legend``)."""
    if labels is None:
        fig.legend(handles=handles, loc="outside lower center", ncol=ncol, frameon=False, **options)
    else:
        fig.legend(handles, labels, loc="outside lower center", ncol=ncol, frameon=False, **options)


def ratio_axis(ax: matplotlib.axes.Axes) -> None:
    """Log scale for a ratio (RE) with plain tick labels (``0.4``, ``1``) instead of powers of ten."""
    from matplotlib import ticker

    class _Plain(ticker.LogFormatter):
        def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
            return f"{x:g}"

    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(_Plain())
    ax.yaxis.set_minor_formatter(_Plain(minor_thresholds=(1, 0.4)))
