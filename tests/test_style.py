"""The book's figure style (ldpkit.experiments.style): one colour and marker per mechanism, the
sizes, and the figure audit; every registered figure, drawn on a small run, passes the audit."""

from __future__ import annotations

import re
import warnings
from itertools import combinations

import matplotlib
import numpy as np
import pytest
from matplotlib import colors

from conftest import REPO
from ldpkit.experiments import RunConfig, list_experiments, run, style
from ldpkit.experiments import fldp, idldp, ipldp, lip, lip_figures

#: the mechanism (or model) names the experiments' protocols draw
PROTOCOL_NAMES = {*fldp.MECHANISMS, *fldp.COST_MECHANISMS, *idldp.SINGLE_ITEM_MECHANISMS,
                  *idldp.ITEMSET_MECHANISMS, *ipldp.MECHANISMS, *lip.MODELS, *lip.PAPER_MODELS,
                  *lip_figures.example1_printed(1.0)}
#: a small run of every figure: one repeat on 1% of the users
SMALL = RunConfig(repeats=1, seed=5, scale=0.01, progress=False)
FIGURES = [e.id for e in list_experiments() if e.draw is not None]


def _family(name: str) -> str:
    name = style.MECHANISM_ALIASES.get(name, name)
    return style.MECHANISM_VARIANTS.get(name, name)


# --------------------------------------------------------------------------- the settings


def test_every_mechanism_has_its_own_colour_and_marker() -> None:
    pairs = {name: (colors.to_hex(look["color"]), look["marker"]) for name, look in style.MECHANISM_STYLES.items()}
    for a, b in combinations(pairs, 2):
        same_name = style.MECHANISM_ALIASES.get(a, a) == style.MECHANISM_ALIASES.get(b, b)
        assert (pairs[a] == pairs[b]) == same_name, (a, b, pairs[a], pairs[b])
    # every look is exactly a colour of the palette and a marker, nothing else
    palette = {colors.to_hex(c) for c in style.PALETTE.values()}
    for name, look in style.MECHANISM_STYLES.items():
        assert set(look) == {"color", "marker"} and colors.to_hex(look["color"]) in palette, name
    # aliases and variants name mechanisms that exist; a variant keeps its base's colour
    assert set(style.MECHANISM_ALIASES) | set(style.MECHANISM_ALIASES.values()) <= set(style.MECHANISM_STYLES)
    for variant, base in style.MECHANISM_VARIANTS.items():
        assert style.MECHANISM_STYLES[variant]["color"] == style.MECHANISM_STYLES[base]["color"], variant
        assert style.MECHANISM_STYLES[variant]["marker"] != style.MECHANISM_STYLES[base]["marker"], variant


def test_mechanisms_drawn_together_have_distinct_colours() -> None:
    groups = {family: list(names) for family, names in style.COLORS.items()}
    groups["foundations"] = ["GRR", "RAPPOR", "OUE", "OLH"]  # the foundations chapter's comparison
    for family, names in groups.items():
        by_colour: dict[str, set[str]] = {}
        for name in names:
            by_colour.setdefault(colors.to_hex(style.mechanism_style(name)["color"]), set()).add(_family(name))
        assert all(len(f) == 1 for f in by_colour.values()), (family, by_colour)
        # COLORS is MECHANISM_STYLES grouped: one source of truth
        assert all(style.COLORS.get(family, {}).get(n, style.mechanism_style(n)["color"])
                   == style.mechanism_style(n)["color"] for n in names)


def test_the_names_the_kit_and_the_book_draw_have_a_style() -> None:
    assert PROTOCOL_NAMES <= set(style.MECHANISM_STYLES), PROTOCOL_NAMES - set(style.MECHANISM_STYLES)
    for name in ("GRR", "KRR", "URR", "uRR", "RAPPOR", "OUE", "OLH", "HR", "FHR", "IPRR"):
        assert name in style.MECHANISM_STYLES
    # every literal name a chapter or the kit passes to the style's look-ups is known
    sources = [*REPO.glob("book/*.md"), *REPO.glob("book/booktools/*.py"), *REPO.glob("ldpkit/experiments/*.py")]
    call = re.compile(r"""mechanism_(?:style|label|handle)\(\s*["']([^"']+)["']""")
    used = {(path.name, name) for path in sources for name in call.findall(path.read_text(encoding="utf-8"))}
    unknown = {(path, name) for path, name in used if name not in style.MECHANISM_STYLES}
    assert not unknown, unknown


def test_mechanism_style_and_label() -> None:
    look = style.mechanism_style("OUE")
    assert look == dict(style.MECHANISM_STYLES["OUE"]) and isinstance(look, dict)
    look["color"] = "red"  # a copy: the book's style is not changed
    assert style.mechanism_style("OUE")["color"] != "red"
    assert style.mechanism_style("KRR") == style.mechanism_style("GRR")
    assert style.mechanism_style("uRR") == style.mechanism_style("URR")
    with pytest.raises(ValueError, match=r"'SUE'.*known mechanisms: GRR, KRR"):
        style.mechanism_style("SUE")
    with pytest.raises(ValueError, match="known mechanisms"):
        style.mechanism_label("no such mechanism")
    assert style.mechanism_label("RAPPOR") == "RAPPOR"
    assert style.mechanism_label("Opt-LIP eps/2") == style.MECHANISM_LABELS["Opt-LIP eps/2"]


def test_book_rc_sets_the_sizes_and_restores_them() -> None:
    before = matplotlib.rcParams["font.size"]
    with style.book_rc():
        assert matplotlib.rcParams["font.size"] == style.MIN_FONT_PT
        assert matplotlib.rcParams["legend.fontsize"] == style.MIN_FONT_PT
    assert matplotlib.rcParams["font.size"] == before


def test_fonts_are_large_enough_on_the_page() -> None:
    sizes = {key: value for key, value in style.RC.items() if "size" in key and key != "figure.figsize"}
    assert sizes and all(float(v) >= style.MIN_FONT_PT for v in sizes.values()), sizes
    with style.book_rc():
        fig, _ = style.figure(1, 2, 3.0)
    # the smallest font of a full-width figure is at least MIN_TEXT_PX at the book's column width
    assert style.on_page_px(style.MIN_FONT_PT, fig) >= style.MIN_TEXT_PX
    assert fig.get_figwidth() == style.FIG_WIDTH
    # the same font on a wider figure shrinks below the limit: the rule has teeth
    wide = matplotlib.figure.Figure(figsize=(2 * style.FIG_WIDTH, 3))
    assert style.on_page_px(style.MIN_FONT_PT, wide) < style.MIN_TEXT_PX


def test_ordered_style_is_not_a_mechanism_style() -> None:
    looks = [style.ordered_style(i, 5) for i in range(5)]
    assert len({lk["color"] for lk in looks}) == 5 and len({lk["marker"] for lk in looks}) == 5
    mechanism_colours = {colors.to_hex(lk["color"]) for lk in style.MECHANISM_STYLES.values()}
    assert not {lk["color"] for lk in looks} & mechanism_colours
    with pytest.raises(ValueError, match="index"):
        style.ordered_style(3, 3)


# --------------------------------------------------------------------------- the audit


def _panel(n_series: int, *, legend_pt: float | None = None, labelled: bool = True):
    with style.book_rc():
        fig, (ax,) = style.figure(1, 1, 3.0)
    x = np.arange(5.0)
    for i in range(n_series):
        ax.plot(x, x + i, marker=style.ORDERED_MARKERS[i % len(style.ORDERED_MARKERS)], color=f"C{i}",
                label=f"series {i}")
    if labelled:
        ax.set(xlabel="budget (nats)", ylabel="MSE (counts)")
    if legend_pt is not None:
        ax.legend(fontsize=legend_pt, loc="upper left")
    return fig


def test_audit_passes_a_figure_that_follows_the_rules() -> None:
    with style.book_rc():
        fig, axes = style.figure(1, 2, 3.0, sharey=True)
    for ax in axes:
        for name in ("RAPPOR", "OUE", "IDUE-opt0"):
            ax.plot([1, 2, 3], [3, 2, 1], **style.mechanism_style(name))
        ax.set_xlabel(style.EPS_LABEL)
    axes[0].set_ylabel(style.MSE_LABEL)  # the right panel shares it
    style.legend_below(fig, [style.mechanism_handle(m) for m in ("RAPPOR", "OUE", "IDUE-opt0")], ncol=3)
    assert style.audit_figure(fig) == []


def test_audit_catches_a_small_legend_over_the_data_and_seven_series() -> None:
    problems = style.audit_figure(_panel(7, legend_pt=5))
    kinds = {p.split(":")[0] for p in problems}
    assert kinds == {"text too small", "legend over data", "too many series"}, problems
    assert any("series 0" in p and "px on the page" in p for p in problems)
    assert any("shows 7" in p for p in problems)
    # six series, no legend: nothing to report; no axis labels: reported
    assert style.audit_figure(_panel(6)) == []
    assert {p.split(":")[0] for p in style.audit_figure(_panel(3, labelled=False))} == {"missing axis label"}
    # unlabelled lines count by colour and marker: twelve of them in one panel
    with style.book_rc():
        fig, (ax,) = style.figure(1, 1, 3.0)
    for colour in ("C0", "C1", "C2", "C3"):
        for marker in "os^":
            ax.plot([1, 2], [1, 2], color=colour, marker=marker)
    ax.set(xlabel="x (units)", ylabel="y (units)")
    assert style.audit_figure(fig) == ["too many series: panel 1 shows 12 (> 6)"]


def test_audit_catches_one_colour_for_two_mechanisms_and_a_wide_figure() -> None:
    with style.book_rc():
        fig, (ax,) = style.figure(1, 1, 3.0)
    ax.plot([1, 2], [1, 2], color=style.mechanism_style("OUE")["color"], label="OUE (exact)")
    ax.plot([1, 2], [2, 3], color=style.mechanism_style("OUE")["color"], label="URR, simulated")
    ax.plot([1, 2], [3, 4], color=style.mechanism_style("OUE")["color"], label="OUE-PS")  # a variant: same colour
    ax.set(xlabel="x (units)", ylabel="y (units)")
    assert style.audit_figure(fig) == [f"colour used twice: {colors.to_hex(style.mechanism_style('OUE')['color'])} "
                                       "draws OUE, URR"]
    with style.book_rc():
        wide, (ax,) = style.figure(1, 1, 3.0, width=2 * style.FIG_WIDTH)
    ax.set(xlabel="x (units)", ylabel="y (units)")
    assert all(p.startswith("text too small") for p in style.audit_figure(wide)) and style.audit_figure(wide)


# --------------------------------------------------------------------------- every registered figure


@pytest.mark.parametrize("experiment_id", FIGURES)
def test_every_registered_figure_passes_the_audit(experiment_id: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # stand-in notices and small-sample warnings
        result = run(experiment_id, SMALL)
    fig = result.figure
    assert fig is not None and fig.get_figwidth() <= style.FIG_WIDTH
    assert style.audit_figure(fig) == []
    # the mechanisms (models) of the data all have the book's style
    frame = result.data.frame
    for column in ("mechanism", "model"):
        if column in frame:
            names = set(frame[column].astype(str))
            assert names <= set(style.MECHANISM_STYLES), names - set(style.MECHANISM_STYLES)
