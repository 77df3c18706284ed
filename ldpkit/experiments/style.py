"""The look of every figure the experiments draw: one place for all of it.

The four figure modules (:mod:`ldpkit.experiments.idldp_figures`,
:mod:`~ldpkit.experiments.ipldp_figures`, :mod:`~ldpkit.experiments.fldp_figures`,
:mod:`~ldpkit.experiments.lip_figures`) take from here the colour of every mechanism, the
markers, line widths and marker sizes, the fonts and figure width, the shared axis labels and
the defaults of the files ``ldpkit reproduce`` writes.  The same figures appear in the book and
in those files, so the look lives with the experiments, not with the book.

Sizes.  A figure is :data:`FIG_WIDTH` inches wide (at most three panels per row), and every
text in it is at least :data:`MIN_FONT_PT` points (:data:`RC`), so it is at least
:data:`MIN_TEXT_PX` px on the page when the book shows the figure :data:`DISPLAY_WIDTH_PX` px
wide.  Draw functions run inside :data:`RC` (:func:`styled`, or ``with`` :func:`book_rc`) and
create their figure without ``pyplot`` (:func:`figure`, :func:`row_figure`); the legend goes
below the panels (:func:`legend_below`), never over the data.

Colours and markers.  :data:`MECHANISM_STYLES` gives every mechanism (and every LIP model)
the book draws one colour of a colour-blind-safe palette (:data:`PALETTE`, Okabe and Ito's)
and one marker, the same in every chapter: ``ax.plot(x, y, **mechanism_style("OUE"))``.
Mechanisms that appear in one figure have distinct colours, and no two mechanisms share a
(colour, marker) pair.  :data:`COLORS` is the same colours grouped by paper family, for the
figure modules' legends.  Grey explains a line or marker style in a legend (:data:`KEY_GREY`).

Rules.  :func:`audit_figure` lists what a drawn figure breaks of the book's rules: text under
:data:`MIN_TEXT_PX` px on the page, a legend over the data, more than :data:`MAX_SERIES` series
in a panel, a panel without axis labels, one colour for two mechanisms.

Lines and markers.  An exact (theory) value is a solid line; a simulated mean is the
mechanism's marker drawn open (face ``"none"``), so an exact line drawn over it stays visible.
Series of an ordered quantity that is not a mechanism (budgets, top-k sizes) take
:func:`ordered_style`.  The named widths and sizes below are every value the figures use, each
with the role it has.

Axis labels.  A label names the quantity and, in parentheses, its unit or kind: ``(counts^2 /
user)``, ``(nats)``, ``(ratio)``, ``(fraction)``; labels shared by several figures are defined
here (:data:`MSE_LABEL`, :data:`EPS_LABEL`, :data:`K_LABEL`).

Examples
--------
>>> from ldpkit.experiments import style
>>> style.mechanism_style("IDUE-opt0"), style.FIG_WIDTH, style.RC["font.size"] == style.MIN_FONT_PT
({'color': '#009E73', 'marker': 'h'}, 7.5, True)
>>> with style.book_rc():
...     fig, axes = style.figure(1, 2, 3.0)
>>> for ax in axes:
...     _ = ax.plot([1, 2], [3, 4], **style.mechanism_style("OUE"))
...     _ = ax.set(xlabel=style.EPS_LABEL, ylabel=style.MSE_LABEL)
>>> style.audit_figure(fig)
[]
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:  # pragma: no cover
    import matplotlib.axes
    import matplotlib.figure
    import matplotlib.lines

__all__ = [
    "COLORS",
    "DISPLAY_WIDTH_PX",
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
    "MECHANISM_ALIASES",
    "MECHANISM_LABELS",
    "MECHANISM_STYLES",
    "MECHANISM_VARIANTS",
    "MEW_SIMULATED",
    "MEW_SIMULATED_IPLDP",
    "MIN_FONT_PT",
    "MSE_LABEL",
    "MS_ERRORBAR",
    "MS_SIMULATED",
    "MS_SMALL",
    "MAX_SERIES",
    "MIN_TEXT_PX",
    "MUTED_GREY",
    "ORDERED_MARKERS",
    "PALETTE",
    "RC",
    "SAVEFIG",
    "SHADE_GREY",
    "SIMULATED_MARKER",
    "TOPK_MARKERS",
    "TOPK_OTHER_MARKER",
    "audit_figure",
    "blank_handle",
    "book_rc",
    "figure",
    "image_width_in",
    "key_handle",
    "legend_below",
    "mechanism_handle",
    "mechanism_label",
    "mechanism_style",
    "on_page_px",
    "ordered_style",
    "pad_row",
    "ratio_axis",
    "row_figure",
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
#: Width in px at which the book shows a figure at most (the figure box of its content column).
DISPLAY_WIDTH_PX = 660
#: Smallest on-page size in px of any text in a figure shown :data:`DISPLAY_WIDTH_PX` wide.
MIN_TEXT_PX = 10.0
#: Most series (mechanisms, or mechanism and setting pairs) one panel may show.
MAX_SERIES = 6
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
#: The colour-blind-safe palette of the book (Okabe & Ito's eight colours, their yellow left out
#: for its low contrast on white, and a mid grey); every mechanism colour is one of these.
PALETTE: Mapping[str, str] = MappingProxyType({
    "blue": "#0072B2", "sky blue": "#56B4E9", "orange": "#E69F00", "vermillion": "#D55E00",
    "green": "#009E73", "reddish purple": "#CC79A7", "black": "#000000", "grey": "#7F7F7F",
})


def _look(colour: str, marker: str) -> Mapping[str, str]:
    return MappingProxyType({"color": PALETTE[colour], "marker": marker})


#: One colour and one marker per mechanism (or LIP model), the same in every chapter and in
#: every figure of the kit: ``ax.plot(x, y, **mechanism_style(name))``.  Mechanisms drawn in
#: one figure (a paper family's figures, the foundations chapter's comparison) have distinct
#: colours; across the book every (colour, marker) pair is one mechanism's.  Aliases
#: (:data:`MECHANISM_ALIASES`) share their mechanism's look; a variant (:data:`MECHANISM_VARIANTS`:
#: padding-and-sampling, a paper's printed value) has its base's colour and its own marker.
#: The budget-``eps_max`` baselines of IPLDP (``KRR-emax``, ``URR-emax``) are mechanisms of
#: their own drawn beside KRR and uRR, so they have their own colours (KRR's in a lighter blue,
#: uRR's in grey: the IPLDP family has eight mechanisms, as many as the palette's colours).
MECHANISM_STYLES: Mapping[str, Mapping[str, str]] = MappingProxyType({
    # frequency oracles of the foundations chapter and the papers' baselines
    "GRR": _look("blue", "s"), "KRR": _look("blue", "s"),
    "RAPPOR": _look("sky blue", "v"),
    "OUE": _look("orange", "o"),
    "OLH": _look("reddish purple", "^"),
    # the hashed oracles of the field: local hashing's colour, Apple's sketches in grey and black
    "BLH": _look("reddish purple", "v"), "FLH": _look("reddish purple", "<"),
    "CMS": _look("grey", "h"), "HCMS": _look("black", "H"),
    "HR": _look("black", "X"),
    "FHR": _look("green", "P"),
    "URR": _look("orange", ">"), "uRR": _look("orange", ">"),
    "IPRR": _look("vermillion", "D"),
    "IDUE-opt0": _look("green", "h"),
    "IDUE-opt1": _look("reddish purple", "p"),
    "IDUE-opt2": _look("black", "d"),
    # the field's frequency oracles (Field chapter)
    "SHE": _look("blue", "o"), "THE": _look("sky blue", "o"),
    "HM": _look("grey", "X"),
    "uRAP": _look("vermillion", ">"),
    # variants: padding and sampling (ID-LDP), a base's colour with another marker
    "RAPPOR-PS": _look("sky blue", "<"), "OUE-PS": _look("orange", "s"), "IDUE-PS": _look("green", "D"),
    # IPLDP's baselines at eps_max
    "KRR-emax": _look("sky blue", "s"), "GRR-emax": _look("sky blue", "s"),
    "URR-emax": _look("grey", ">"), "uRR-emax": _look("grey", ">"),
    # LIP models, and the paper's printed values (a model's colour with a plus or a cross)
    "LDP": _look("grey", "o"),
    "Opt-LDP": _look("blue", "^"),
    "Opt-LIP": _look("vermillion", "s"),
    "Opt-LIP eps/2": _look("orange", "D"),
    "Sym-LIP eps/2": _look("green", "v"),
    "LDP, printed": _look("grey", "+"),
    "Opt-LDP, printed": _look("blue", "+"),
    "LIP, printed": _look("vermillion", "+"),
    "Opt-LIP (Thm 2)": _look("vermillion", "x"),
    "Opt-LIP eps/2 (Thm 2)": _look("orange", "+"),
    "Sym-LIP eps/2 (eq. 23)": _look("green", "+"),
    # the k-ary LIP optimum (LIP chapter's extension; audited in the auditing chapter)
    "LIP-kary": _look("vermillion", "*"),
    # subset selection and its input-discriminative form (the field chapter)
    "SS": _look("vermillion", "o"), "ID-SS": _look("black", "o"),
})
#: names that are another name of one mechanism (the IPLDP paper's KRR is GRR, its uRR is URR)
MECHANISM_ALIASES: Mapping[str, str] = MappingProxyType({
    "KRR": "GRR", "uRR": "URR", "GRR-emax": "KRR-emax", "uRR-emax": "URR-emax",
})
#: variant -> the mechanism (or model) it is a variant of; a variant keeps its base's colour
MECHANISM_VARIANTS: Mapping[str, str] = MappingProxyType({
    "RAPPOR-PS": "RAPPOR", "OUE-PS": "OUE", "IDUE-PS": "IDUE-opt0",
    "LDP, printed": "LDP", "Opt-LDP, printed": "Opt-LDP", "LIP, printed": "Opt-LIP",
    "Opt-LIP (Thm 2)": "Opt-LIP", "Opt-LIP eps/2 (Thm 2)": "Opt-LIP eps/2",
    "Sym-LIP eps/2 (eq. 23)": "Sym-LIP eps/2",
})
#: typeset legend label of a mechanism or model whose name is not its label (the LIP models)
MECHANISM_LABELS: Mapping[str, str] = MappingProxyType({
    "LDP": r"$\varepsilon$-LDP, unbiased", "Opt-LDP": r"$\varepsilon$-Opt-LDP",
    "Opt-LIP": r"$\varepsilon$-Opt-LIP", "Opt-LIP eps/2": r"$\varepsilon/2$-Opt-LIP",
    "Sym-LIP eps/2": r"$\varepsilon/2$-sym. LIP",
    "URR": "uRR", "KRR-emax": r"KRR at $\varepsilon_{\max}$", "URR-emax": r"uRR at $\varepsilon_{\max}$",
})

#: Colour of each mechanism (ID-LDP, IPLDP, FLDP) or model (LIP), per paper family, taken from
#: :data:`MECHANISM_STYLES`; the order of a family's entries is the order of its legends.
COLORS: Mapping[str, Mapping[str, str]] = MappingProxyType({
    family: MappingProxyType({name: MECHANISM_STYLES[name]["color"] for name in names})
    for family, names in {
        "idldp": ("RAPPOR", "OUE", "IDUE-opt0", "IDUE-opt1", "IDUE-opt2", "RAPPOR-PS", "OUE-PS", "IDUE-PS"),
        "ipldp": ("IPRR", "KRR", "URR", "KRR-emax", "URR-emax", "IDUE-opt0", "IDUE-opt1", "IDUE-opt2"),
        "fldp": ("FHR", "HR", "OLH", "OUE"),
        "lip": ("LDP", "Opt-LDP", "Opt-LIP", "Opt-LIP eps/2", "Sym-LIP eps/2", "Opt-LIP (Thm 2)",
                "Opt-LIP eps/2 (Thm 2)", "Sym-LIP eps/2 (eq. 23)", "LDP, printed", "Opt-LDP, printed",
                "LIP, printed"),
    }.items()
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
#: simulated means joined by a line, open (``mfc="none"``), for a series that is not a mechanism;
#: a mechanism's means take its own marker (:func:`mechanism_style`)
MEANS_LINE = "o-"
#: a marker per top-k size (:data:`TOPK_OTHER_MARKER` for any other k), for a panel that shows one
#: mechanism at several sizes; the FLDP figures give each size its own panel instead
TOPK_MARKERS: Mapping[int, str] = MappingProxyType({20: "o", 50: "s", 100: "^"})
#: the marker of a top-k size not in :data:`TOPK_MARKERS`
TOPK_OTHER_MARKER = "D"
#: markers of the series of an ordered quantity (budgets, top-k sizes), :func:`ordered_style`
ORDERED_MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P", "X", "h")
#: line style of each post-processing estimator in the IPLDP figures (the marker is the mechanism's)
ESTIMATOR_STYLES: Mapping[str, str] = MappingProxyType({"NS": "--", "MLE": ":"})
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
#: a colour-only legend entry (:func:`swatch`); a mechanism's entry shows its marker too
#: (:func:`mechanism_handle`)
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
def mechanism_style(name: str) -> dict[str, Any]:
    """The look of mechanism (or LIP model) ``name``: ``dict(color=..., marker=...)``.

    A new dict each call, to spread into a plot call (``ax.plot(x, y, **mechanism_style("OUE"))``)
    or to update.  An unknown name raises a ValueError naming it and the known names.

    >>> mechanism_style("KRR") == mechanism_style("GRR")
    True
    >>> mechanism_style("OUE")["color"] == mechanism_style("OUE-PS")["color"]
    True
    """
    try:
        return dict(MECHANISM_STYLES[name])
    except (KeyError, TypeError):
        known = ", ".join(MECHANISM_STYLES)
        raise ValueError(f"no figure style for mechanism {name!r}; known mechanisms: {known}") from None


def mechanism_label(name: str) -> str:
    """The legend label of mechanism (or model) ``name``: its typeset label or the name itself.

    >>> mechanism_label("OUE"), mechanism_label("Opt-LIP eps/2") == MECHANISM_LABELS["Opt-LIP eps/2"]
    ('OUE', True)
    """
    mechanism_style(name)  # validates the name
    return MECHANISM_LABELS.get(name, name)


@contextlib.contextmanager
def book_rc() -> Iterator[None]:
    """Context manager: matplotlib's rc parameters set to :data:`RC` (the book's look) inside.

    For a figure a chapter draws itself: ``with style.book_rc(): fig, axes = style.figure(1, 2, 3.0)``.
    """
    import matplotlib

    with matplotlib.rc_context(cast(Any, dict(RC))):
        yield


def styled(draw: _F) -> _F:
    """Run a draw function inside :data:`RC`, so every text it creates gets the book's sizes."""

    @functools.wraps(draw)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with book_rc():
            return draw(*args, **kwargs)

    return cast(_F, wrapper)


def figure(nrows: int, ncols: int, height: float, width: float = FIG_WIDTH, *,
           sharex: bool | str = False,
           sharey: bool | str = False) -> tuple[matplotlib.figure.Figure, list[matplotlib.axes.Axes]]:
    """A figure (not managed by ``pyplot``, constrained layout) with an ``nrows`` x ``ncols`` grid.

    Returns the figure and its axes, row by row.  ``sharex`` and ``sharey`` go to
    ``Figure.subplots`` (``True``, ``"row"``, ``"col"``): a panel that shares a labelled axis
    may leave its own label empty (:func:`audit_figure`).
    """
    import matplotlib.figure

    fig = matplotlib.figure.Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=cast(Any, sharex), sharey=cast(Any, sharey))
    return fig, [ax for row in axes for ax in row]


def row_figure(titles: Sequence[str], ncols: int, row_height: float, *, width: float = FIG_WIDTH,
               legend_height: float = 0.9, sharex: bool = False,
               sharey: bool = False) -> tuple[matplotlib.figure.Figure, list[list[matplotlib.axes.Axes]]]:
    """A figure of titled rows of ``ncols`` panels: one row (a subfigure) per title.

    The row's title (a dataset, a setting) stands above its panels, so the panels' own titles
    stay short (a column's meaning).  ``sharex``/``sharey`` share within a row.  Returns the
    figure and its axes, row by row.  The height is ``row_height`` per row plus
    ``legend_height`` for a legend below (:func:`legend_below`).
    """
    import matplotlib.figure

    fig = matplotlib.figure.Figure(figsize=(width, row_height * len(titles) + legend_height), layout="constrained")
    subs = fig.subfigures(len(titles), 1, squeeze=False)[:, 0]
    rows = []
    for sub, title in zip(subs, titles):
        sub.suptitle(title, fontsize=RC["axes.titlesize"])
        axes = sub.subplots(1, ncols, squeeze=False, sharex=sharex, sharey=sharey)[0]
        rows.append(list(axes))
    return fig, rows


def ordered_style(index: int, count: int) -> dict[str, Any]:
    """The look of series ``index`` of ``count`` of an ordered quantity (budgets, top-k sizes).

    Colours run along the colour-blind-safe, light-to-dark-ordered viridis map (its pale yellow
    end left out), each with its own marker of :data:`ORDERED_MARKERS`; never a mechanism's look.

    >>> [ordered_style(i, 3)["marker"] for i in range(3)]
    ['o', 's', '^']
    """
    from matplotlib import colormaps, colors

    if count < 1 or not 0 <= index < count:
        raise ValueError(f"index must lie in [0, count) and count >= 1, got index={index}, count={count}")
    where = 0.0 if count == 1 else 0.85 * index / (count - 1)
    return {"color": colors.to_hex(colormaps["viridis"](where)),
            "marker": ORDERED_MARKERS[index % len(ORDERED_MARKERS)]}


def mechanism_handle(name: str, label: str | None = None, *, line: bool = True,
                     filled: bool = False) -> matplotlib.lines.Line2D:
    """A legend entry of mechanism ``name``: its colour and marker (open unless ``filled``), with a line.

    ``label`` defaults to :func:`mechanism_label`.
    """
    from matplotlib.lines import Line2D

    look = mechanism_style(name)
    return Line2D([], [], ls="-" if line else "none", lw=LW_DENSE, ms=MS_SIMULATED,
                  mfc=look["color"] if filled else "none", label=mechanism_label(name) if label is None else label,
                  **look)


def blank_handle() -> matplotlib.lines.Line2D:
    """An empty legend entry, to end a group of entries before the row is full (:func:`pad_row`)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], ls="none", label=" ")


def pad_row(handles: Sequence[Any], ncol: int) -> list[Any]:
    """``handles`` padded with :func:`blank_handle` entries to whole legend rows of ``ncol``.

    With ``legend_below(..., by_row=True)`` the next group of entries then starts a new row.
    """
    return [*handles, *(blank_handle() for _ in range(-len(handles) % ncol))]


def key_handle(label: str, **line: Any) -> matplotlib.lines.Line2D:
    """A grey legend entry that explains a line or marker style (``line`` goes to ``Line2D``)."""
    from matplotlib.lines import Line2D

    options: dict[str, Any] = {"color": KEY_GREY, "lw": LW_DENSE, "ms": MS_SIMULATED}
    options.update(line)
    return Line2D([], [], label=label, **options)


def swatch(color: str, label: str) -> matplotlib.lines.Line2D:
    """A colour-only legend entry: a thick line (:data:`LW_SWATCH`)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], color=color, lw=LW_SWATCH, label=label)


def legend_below(fig: matplotlib.figure.Figure, handles: Sequence[Any], labels: Sequence[str] | None = None, *,
                 ncol: int, by_row: bool = False, **options: Any) -> None:
    """The figure's one legend, under its panels, without a frame (``options`` go to ``Figure.legend``).

    ``ncol`` is capped at the number of entries.  matplotlib fills a legend column by column;
    ``by_row=True`` orders the entries to read row by row instead (the last row padded with
    blank entries).
    """
    handles = list(handles)
    labels = [str(h.get_label()) for h in handles] if labels is None else list(labels)
    ncol = max(1, min(ncol, len(handles)))
    if by_row and len(handles) > ncol:
        nrows = -(-len(handles) // ncol)
        blanks = nrows * ncol - len(handles)
        handles += [blank_handle() for _ in range(blanks)]
        labels += [" "] * blanks
        order = [row * ncol + col for col in range(ncol) for row in range(nrows)]
        handles, labels = [handles[i] for i in order], [labels[i] for i in order]
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


# --------------------------------------------------------------------------- audit
def image_width_in(fig: matplotlib.figure.Figure) -> float:
    """Width in inches of the image of ``fig`` as the book saves it (:data:`SAVEFIG`'s tight box).

    A legend or label that sticks out of the figure widens the image, and the page then shrinks
    all of it.
    """
    if SAVEFIG.get("bbox_inches") == "tight":
        box = fig.get_tightbbox()
        if box is not None and box.width > 0:
            return float(box.width)
    return float(fig.get_figwidth())


def on_page_px(font_pt: float, fig: matplotlib.figure.Figure, display_width_px: float = DISPLAY_WIDTH_PX) -> float:
    """On-page size in px of a ``font_pt`` text of ``fig`` shown at most ``display_width_px`` wide.

    The text is ``font_pt * dpi / 72`` px in the figure's image (:func:`image_width_in` wide),
    which the page scales down by ``display_width_px / (width_in * dpi)`` when the image is
    wider than that.

    >>> fig, _ = figure(1, 2, 3.0)
    >>> on_page_px(MIN_FONT_PT, fig) >= 10 * 660 / (FIG_WIDTH * 72)  # 12.2 px: 660 px for 7.5 in
    True
    """
    dpi = float(fig.dpi)
    image_px = image_width_in(fig) * dpi
    return float(font_pt) * dpi / 72.0 * min(1.0, display_width_px / image_px)


_NO_MARKERS = (None, "None", "none", "", " ", ",", "_", "|", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)


def _mechanism_of(label: str) -> str | None:
    """The mechanism (its variant's base, its alias's name) a legend label names, or None."""
    import re

    typeset = {text: name for name, text in MECHANISM_LABELS.items()}
    text = label.strip()
    while text not in MECHANISM_STYLES and text not in typeset:
        # drop a trailing qualifier: "OUE (exact)", "KRR, simulated"
        shorter = re.sub(r"\s*(\([^()]*\)|,[^,]*)$", "", text)
        if shorter == text or not shorter:
            return None
        text = shorter
    name = typeset.get(text, text)
    name = MECHANISM_ALIASES.get(name, name)
    return MECHANISM_VARIANTS.get(name, name)


def _artist_colour(artist: Any) -> str | None:
    from matplotlib import colors
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    try:
        if isinstance(artist, Line2D):
            return colors.to_hex(artist.get_color())
        if isinstance(artist, Patch):
            return colors.to_hex(artist.get_facecolor())
        if isinstance(artist, Collection):
            faces = artist.get_facecolor()
            return colors.to_hex(cast(Any, faces[0] if len(faces) else artist.get_edgecolor()[0]))
    except (ValueError, IndexError, TypeError):
        return None
    return None


def _panel_name(ax: matplotlib.axes.Axes, index: int) -> str:
    title = ax.get_title() or ax.get_title("left") or ax.get_title("right")
    return f"panel {index + 1}" + (f" ({title!r})" if title else "")


def _series_count(ax: matplotlib.axes.Axes) -> tuple[int, int]:
    """(distinct labels, distinct styles) of the data series drawn in ``ax``."""
    import numpy as np
    from matplotlib import colors
    from matplotlib.collections import PathCollection

    artists: list[Any] = [*ax.lines, *ax.collections, *ax.patches, *ax.containers]
    labels = {str(a.get_label()) for a in artists if a.get_label() and not str(a.get_label()).startswith("_")}
    keys: set[tuple[str, str | None]] = set()
    for line in ax.lines:
        if not line.get_visible() or not line.get_transform().contains_branch(ax.transData):
            continue  # axhline, axvline: references, not series
        marker = line.get_marker()
        keys.add((colors.to_hex(cast(Any, line.get_color())), None if marker in _NO_MARKERS else str(marker)))
    for coll in ax.collections:
        if isinstance(coll, PathCollection) and coll.get_visible() and np.size(coll.get_offsets()):
            colour = _artist_colour(coll)
            if colour is not None:
                keys.add((colour, "scatter"))
    marked = {c for c, m in keys if m is not None}
    styles = {(c, m) for c, m in keys if m is not None or c not in marked}
    return len(labels), len(styles)


def _has_axis_label(ax: matplotlib.axes.Axes, which: str, fig: matplotlib.figure.Figure) -> bool:
    axis = ax.xaxis if which == "x" else ax.yaxis
    if not axis.get_visible() or axis.get_label_text():
        return True
    sup = getattr(fig, "_supxlabel" if which == "x" else "_supylabel", None)
    if sup is not None and sup.get_text():
        return True
    shared = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    return any((other.xaxis if which == "x" else other.yaxis).get_label_text()
               for other in shared.get_siblings(ax) if other is not ax)


def audit_figure(fig: matplotlib.figure.Figure, *, display_width_px: float = DISPLAY_WIDTH_PX) -> list[str]:
    """The problems of ``fig`` against the book's figure rules; an empty list if none.

    The rules: every text is at least :data:`MIN_TEXT_PX` px on the page when the figure's
    image (:func:`image_width_in`) is shown at most ``display_width_px`` wide
    (:func:`on_page_px`); no legend lies over an axes'
    data area (legends go below the panels, :func:`legend_below`); a panel shows at most
    :data:`MAX_SERIES` series (distinct labels, or distinct colour and marker pairs of its
    lines and scatter points, a line of a marked series' colour counting with it); every panel
    has an x and a y label, or shares that axis with a panel that has one (or the figure has a
    ``supxlabel`` / ``supylabel``); one colour names one mechanism (labels resolved through
    :data:`MECHANISM_STYLES`, its aliases, variants and typeset labels; other labels are not
    checked).  The figure is drawn (without rendering) to measure its legends.

    >>> fig, (ax,) = figure(1, 1, 3.0)
    >>> _ = ax.plot([1, 2], [1, 2], label="OUE", **mechanism_style("OUE"))
    >>> _ = ax.legend(fontsize=5)
    >>> [p.split(":")[0] for p in audit_figure(fig)]
    ['text too small', 'legend over data', 'missing axis label', 'missing axis label']
    """
    from matplotlib.text import Text

    fig.draw_without_rendering()
    problems: list[str] = []

    small: dict[str, float] = {}
    dpi = float(fig.dpi)
    scale = dpi / 72.0 * min(1.0, display_width_px / (image_width_in(fig) * dpi))  # px on the page per point
    for text in fig.findobj(match=Text):
        if not text.get_visible() or not text.get_text().strip():
            continue
        px = float(text.get_fontsize()) * scale
        if px < MIN_TEXT_PX - 1e-9:
            small.setdefault(text.get_text().strip()[:40], px)
    for content, px in small.items():
        problems.append(f"text too small: {content!r} is {px:.1f} px on the page (< {MIN_TEXT_PX:g} px)")

    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison and not hasattr(ax, "_colorbar")]
    legends = list(fig.legends) + [leg for ax in fig.axes if (leg := ax.get_legend()) is not None]
    for legend in legends:
        if not legend.get_visible():
            continue
        box = legend.get_window_extent()
        for i, ax in enumerate(panels):
            area = ax.get_window_extent()
            width = min(box.x1, area.x1) - max(box.x0, area.x0)
            height = min(box.y1, area.y1) - max(box.y0, area.y0)
            if width > 1 and height > 1:
                problems.append(f"legend over data: a legend lies over the data area of {_panel_name(ax, i)}")

    for i, ax in enumerate(panels):
        n_labels, n_styles = _series_count(ax)
        if max(n_labels, n_styles) > MAX_SERIES:
            problems.append(f"too many series: {_panel_name(ax, i)} shows {max(n_labels, n_styles)} "
                            f"(> {MAX_SERIES})")
        for which in ("x", "y"):
            if not _has_axis_label(ax, which, fig):
                problems.append(f"missing axis label: {_panel_name(ax, i)} has no {which} label")

    families: dict[str, set[str]] = {}
    entries: list[tuple[str, Any]] = []
    for legend in legends:
        entries += [(t.get_text(), h) for t, h in zip(legend.get_texts(), legend.legend_handles)]
    for ax in fig.axes:
        entries += [(str(a.get_label()), a) for a in [*ax.lines, *ax.collections, *ax.patches]]
    for label, artist in entries:
        family = _mechanism_of(label) if label and not label.startswith("_") else None
        colour = _artist_colour(artist) if family is not None else None
        if family is not None and colour is not None:
            families.setdefault(colour, set()).add(family)
    for colour, names in families.items():
        if len(names) > 1:
            problems.append(f"colour used twice: {colour} draws {', '.join(sorted(names))}")
    return problems
