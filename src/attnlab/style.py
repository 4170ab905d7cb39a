"""One look for every figure and the report: palette and markers, the two verdicts' colours and marks,
the headline, the legend, how the chapter's value is drawn, and the PNG and SVG it is saved as.
Figure builders (attnlab.families.*, attnlab.claims.plot) call these; none styles itself.

A series is told apart by its colour *and* its marker (or dash), so a figure survives greyscale
printing and colour-blind readers. The chapter's value is always a hollow black diamond (or, in a
heat map, the cell's second line), labelled "chapter".
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator
from matplotlib.text import Annotation
from matplotlib.transforms import ScaledTranslation
from PIL import Image

from attnlab import readable
from attnlab.data import atomic_path

RC = {"figure.dpi": 120, "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False,
      "axes.spines.right": False, "font.size": 9, "legend.frameon": False, "legend.fontsize": 8}
# Okabe–Ito: qualitative and colour-blind safe; its yellow is last (faint on white)
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
MARKERS = ("o", "s", "^", "v", "P", "X", "<", ">")  # no diamond: that is the chapter's
DASHES = ("-", "--", ":", "-.")
HATCH = "///"  # the second of two kinds of bar side by side (undivided), told apart without colour
# hollow, so our marker shows through where the two agree; unclipped, so a value on an axis shows whole
CHAPTER = {"marker": "D", "ms": 8, "mfc": "none", "mec": "black", "mew": 1.3, "ls": "none", "zorder": 5,
           "clip_on": False}
CHAPTER_LINE = {"color": "black", "ls": (0, (5, 3)), "lw": 1}
OUTLINE = "chapter: the row's largest weight"  # heat_map's outlined cells
HEADLINE = "headline"  # gid of the title and subtitle, which layout() keeps above the axes
# The ledger's two verdicts (attnlab.claims.rules: NUMBER_WORDS, POINT_WORDS), in the report and in the claims plot:
# Okabe and Ito's colour-blind-safe hues and a mark each, so no word is told by colour alone. OPEN, a word of both,
# looks the same in each; FAILS has DIFFERS' colour and its own mark; "–" is rules.NO_POINT (the chapter states none)
NUMBER_COLOURS = {"AGREES": "#0072B2", "DIFFERS": "#D55E00", "OPEN": "#CC79A7", "NOT TESTED": "#000000"}
NUMBER_MARKS = {"AGREES": "=", "DIFFERS": "≠", "OPEN": "?", "NOT TESTED": "⊘"}
POINT_COLOURS = {"HOLDS": "#009E73", "FAILS": "#D55E00", "OPEN": "#CC79A7", "–": "#000000"}
POINT_MARKS = {"HOLDS": "✓", "FAILS": "✗", "OPEN": "?", "–": "–"}
# the SVG names its clip paths and glyphs by hashes salted with this, not with a random salt, so a
# rebuilt figure is the same bytes
SVG_SALT = "attnlab"


def series(i: int) -> dict:
    """Colour and marker of the i-th series of a figure."""
    return {"color": PALETTE[i % len(PALETTE)], "marker": MARKERS[i % len(MARKERS)]}


def headline(fig, point: str, profile: str, *details: str) -> None:
    """The title states the figure's point; the subtitle what it was built from: the profile, then
    steps, seeds and anything else that sets the numbers."""
    title = fig.text(0.01, 1, point, ha="left", va="top", fontsize=11, fontweight="bold", wrap=True, gid=HEADLINE,
                     transform=fig.transFigure + ScaledTranslation(0, -6 / 72, fig.dpi_scale_trans))
    subtitle = Annotation(" · ".join((f"{profile} profile", *details)), xy=(0, 0), xycoords=title,
                          xytext=(0, -3), textcoords="offset points", ha="left", va="top", color="0.3",
                          wrap=True, gid=HEADLINE)
    fig.add_artist(subtitle)


def spread(df, column: str):
    """A column's spread over seeds (`<column>_std`), or None where the table has one seed: error
    bars are drawn only where there is a spread."""
    return df[f"{column}_std"] if f"{column}_std" in df.columns else None


def seeds_note(seeds, spread: bool = True) -> str:
    """'1 seed', '3 seeds, mean ± std', or where rows differ '3–74 seeds a row, mean ± std' — each row's
    own count, never the table's largest (what error bars and bands show; without them '…, mean')."""
    counts = sorted({int(n) for n in np.atleast_1d(seeds) if n == n})  # NaN: a row that is not a run
    low, high = counts[0], counts[-1]
    said = f"{low}–{high} seeds a row" if low != high else "1 seed" if high == 1 else f"{high} seeds"
    return said if high == 1 else f"{said}, mean" + (" ± std" if spread else "")


def steps_note(steps) -> str:
    """'300 steps', or '150–300 steps' where rows trained for different budgets."""
    low, high = int(min(steps)), int(max(steps))
    return f"{high:,} steps" if low == high else f"{low:,}–{high:,} steps"


DERIVED = "chapter's gap, counted from our row (not a number it prints)"


def mark_chapter(ax, x, y, notes=(), label: str = "chapter", beside: bool = False, **look) -> None:
    """The chapter's values as hollow black diamonds, each with an optional note beside it: whose
    value it is, or how it follows from the chapter ("= our row 8 + 14": the chapter's gap to a row
    of ours). `label` says what they are where that is not the chapter's printed number of the
    quantity drawn (DERIVED; a matrix size drawn on a peak-memory axis); `look` overrides CHAPTER.
    `beside`: each note right of its diamond, at its height (where the space above it is taken)."""
    if not len(x):
        return  # no legend entry for a chapter value that is not there
    ax.plot(x, y, label=label, **{**CHAPTER, **look})
    at_height = {}  # notes at one height are stacked: above the first diamond, below the next
    for xi, yi, note in zip(np.atleast_1d(x), np.atleast_1d(y), notes):
        if note:
            k = at_height[yi] = at_height.get(yi, -1) + 1
            ax.annotate(note, (xi, yi), xytext=(8, -12 * k) if beside else (5, 6 - 18 * k), textcoords="offset points",
                        fontsize=7, style="italic", va="center" if beside else "bottom")


def log_ticks(axis) -> None:
    """A log axis's ticks at 1, 1.5, 2, 3, 4, 5, 6 and 8 times a power of ten, written plainly (80,
    not 8×10¹): values within a decade or two are read off it like a linear one's (no 7 or 9, whose
    labels would touch their neighbours')."""
    axis.set_major_locator(LogLocator(subs=(1, 1.5, 2, 3, 4, 5, 6, 8)))
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axis.set_minor_locator(NullLocator())


def hbars(ax, labels, values, colors, chapter, xerr=None, names_above: bool = False) -> None:
    """One horizontal bar per row, top to bottom, its value written at its base (its end is left to
    the chapter's diamond and number, where it has one; `chapter`: ChapterValues of the plotted
    column). The value axis is logarithmic, so rows a few percent apart stay apart beside one several
    times worse (perplexities: 37 against 38, beside 308); it starts below the smallest value drawn.
    `names_above`: each row's name written above its bar, not beside the axis, so long names take no
    width from the bars (and a panel below them keeps its own left edge)."""
    y = np.arange(len(labels))
    ax.barh(y, values, height=0.55 if names_above else 0.8, xerr=xerr, color=colors, alpha=0.85,
            error_kw={"lw": 1, "capsize": 2})
    ax.set_xscale("log")
    log_ticks(ax.xaxis)
    values = np.asarray(values, dtype=float)
    lows = values - (0 if xerr is None else np.nan_to_num(np.asarray(xerr, dtype=float)))
    drawn = [v for v in (*values, *lows, *(c.value for c in chapter)) if np.isfinite(v) and v > 0]
    ax.set_xlim(left=min(drawn) / 1.5)  # room at every bar's base for its value, clear of the diamond
    for yi, value in zip(y, values):
        if np.isfinite(value):
            ax.annotate(f"{value:.2f}", (0, yi), xycoords=("axes fraction", "data"), xytext=(4, 0),
                        textcoords="offset points", va="center", fontsize=7, color="white", fontweight="bold")
    if names_above:
        ax.set_yticks(y, [""] * len(y))
        ax.tick_params(axis="y", length=0)
        for yi, label in zip(y, labels):
            ax.annotate(label, (0, yi - 0.29), xycoords=("axes fraction", "data"), xytext=(0, 1),
                        textcoords="offset points", va="bottom", ha="left")
    else:
        ax.set_yticks(y, labels)
    ax.invert_yaxis()
    if names_above:
        ax.set_ylim(len(y) - 0.6, -0.8)  # room above the first bar for its name
    ax.grid(axis="y", visible=False)
    # the chapter's number beside its diamond: a gap of a few percent is read, not measured off the axis;
    # a value made from the chapter's gap to one of our rows is grey, and named so
    printed, derived = [c for c in chapter if not c.note], [c for c in chapter if c.note]
    mark_chapter(ax, [c.value for c in printed], [c.row for c in printed], [f"{c.value:.2f}" for c in printed],
                 beside=names_above)
    mark_chapter(ax, [c.value for c in derived], [c.row for c in derived], [c.note for c in derived], label=DERIVED,
                 beside=names_above, mec="0.55")


def label_ends(ax, ends) -> None:
    """Name lines at their right ends (`ends`: x, y, text, colour each), nudged apart vertically so
    no two labels overlap: many curves are told apart without a legend."""
    low, high = ax.get_ylim()
    gap = 0.035 * (high - low)
    placed = []
    for x, y, text, colour in sorted(ends, key=lambda end: end[1]):
        y = max(y, placed[-1] + gap) if placed else y
        placed.append(y)
        ax.annotate(text, (x, y), xytext=(4, 0), textcoords="offset points", va="center", fontsize=7,
                    fontweight="bold", color=colour, annotation_clip=False)


def heat_map(ax, cells, row_labels, column_labels, chapter=(), decimals: int = 2, narrow: bool = False):
    """Weights (`cells`: a frame of the table's rows and the plotted columns) as shaded cells with
    their values. A cell the chapter prints gets the chapter's value as a second line; a cell where
    the chapter puts its row's largest weight (value NaN) a black outline, labelled OUTLINE.
    `narrow`: cells too narrow for "chapter 0.70" on one line (many columns on a page's width): the
    chapter's value under "chapter", and the column labels slanted so that long ones do not touch."""
    values = cells.to_numpy(dtype=float)
    image = ax.imshow(values, cmap="Blues", vmin=0, vmax=1, aspect="auto")
    columns = list(cells.columns)
    printed = {(c.row, columns.index(c.column)): c.value for c in chapter
               if c.column in columns and np.isfinite(c.value)}
    for (i, j), v in np.ndenumerate(values):
        colour = "white" if v > 0.6 else "black"
        if (i, j) in printed and narrow:
            ax.text(j, i - 0.2, f"{v:.{decimals}f}", ha="center", va="center", fontsize=7, color=colour)
            ax.text(j, i + 0.17, f"chapter\n{printed[i, j]:.{decimals}f}", ha="center", va="center", fontsize=6.5,
                    style="italic", color=colour, linespacing=1.1)
        elif (i, j) in printed:
            ax.text(j, i - 0.13, f"{v:.{decimals}f}", ha="center", va="center", fontsize=7, color=colour)
            ax.text(j, i + 0.2, f"chapter {printed[i, j]:.{decimals}f}", ha="center", va="center", fontsize=6,
                    style="italic", color=colour)
        else:
            ax.text(j, i, f"{v:.{decimals}f}", ha="center", va="center", fontsize=7, color=colour)
    for c in chapter:
        if c.column in columns and not np.isfinite(c.value):
            ax.add_patch(Rectangle((columns.index(c.column) - 0.5, c.row - 0.5), 1, 1, fill=False, ec="black",
                                   lw=2, zorder=4, label=OUTLINE))
    ax.set_xticks(range(len(column_labels)), column_labels,
                  **({"rotation": 35, "ha": "right", "rotation_mode": "anchor"} if narrow else {}))
    ax.set_yticks(range(len(row_labels)), row_labels)
    ax.grid(False)
    return image


def legend_below(fig) -> None:
    """One legend for the whole figure, under the axes (it never covers data): every labelled
    artist of every panel once, the chapter's entries last, in as many columns as fit the width."""
    entries = {}
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    labels = sorted(entries, key=lambda label: label.startswith("chapter"))
    handles = [entries[label] for label in labels]
    renderer = fig.canvas.get_renderer()
    for ncol in range(len(labels), 0, -1):
        legend = fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 0.01), ncol=ncol)
        if legend.get_window_extent(renderer).width <= 0.98 * fig.bbox.width or ncol == 1:
            return
        legend.remove()


def layout(fig) -> None:
    """Axes between the headline (top) and the figure's legend (bottom)."""
    fig.canvas.draw()  # text sizes, wrapped lines and the legend's height are known once drawn
    height = fig.bbox.height
    top = min((t.get_window_extent().y0 for t in fig.texts + fig.artists if t.get_gid() == HEADLINE), default=height)
    bottom = max((legend.get_window_extent().y1 for legend in fig.legends), default=0)
    fig.tight_layout(rect=(0, bottom / height, 1, (top - 4) / height))


def beside_published(published_png: str | Path, fig, label: str):
    """A variant's figure: the published figure above the variant's, each titled, drawn at their own
    resolution as pictures (the builders lay out one figure each); stacked, so the pair reads at the
    width of one figure. Each picture's id names its smallest text in its own pixels (readable.RASTER_TEXT:
    the published one's from the SVG beside it, where there is one), so save reads it with the rest."""
    import matplotlib.pyplot as plt  # the caller chose the backend
    layout(fig)
    buffer, svg = io.BytesIO(), io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    fig.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    images = [np.asarray(Image.open(published_png).convert("RGB")), np.asarray(Image.open(buffer).convert("RGB"))]
    published_svg = Path(published_png).with_suffix(".svg")
    text_px = [picture_text_px(published_svg, images[0].shape[1]) if published_svg.exists() else None,
               picture_text_px(svg.getvalue(), images[1].shape[1])]
    dpi = fig.dpi
    width = max(im.shape[1] for im in images) / dpi
    both, axes = plt.subplots(2, 1, figsize=(width, sum(im.shape[0] for im in images) / dpi + 0.8),
                              height_ratios=[im.shape[0] for im in images], dpi=dpi)
    for i, (ax, image, title, px) in enumerate(zip(axes, images, ("published", f"variant: {label}"), text_px)):
        named = px is not None and math.isfinite(px)  # a picture without text (or without its SVG) names none
        ax.imshow(image, interpolation="none", gid=f"{readable.RASTER_TEXT}{px:.2f}px-{i}" if named else None)
        ax.set_title(title, loc="left", fontsize=12, fontweight="bold")
        ax.set_axis_off()
    return both


def picture_text_px(svg, png_px: int) -> float:
    """The smallest text of a figure in its PNG's pixels (`png_px` wide), from its SVG; rounded down."""
    width, texts = readable.texts(svg)
    return math.floor(100 * min(t.pt for t in texts) * png_px / width) / 100 if texts else math.inf


class Unreadable(ValueError):
    """A figure whose smallest text the report would show under readable.READABLE_PX at readable.WINDOW_PX."""


def save(fig, path: str | Path) -> None:
    """Lay out and write the figure at `path` as a small PNG and beside it, same stem, as an SVG (to
    print or zoom), each the same bytes for the same figure: the PNG in 256 colours (plots have few),
    neither with metadata (matplotlib writes its version and the SVG a date), the SVG's ids salted
    with SVG_SALT. Refused (Unreadable, nothing written) where the report, read at an 800 px window,
    would show its smallest text under 8 px (attnlab.readable: the SVG's smallest glyph, the PNG's
    width): larger text, fewer panels a row or a narrower figure (one no wider than the page's
    755 px, 6.29 in at dpi 120, is shown at its own size) make it readable. A variant's figure
    (beside_published) draws the published one about 4 % smaller: keep a figure's text above 8.4 px."""
    layout(fig)
    path = Path(path)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    image = Image.open(buffer).convert("RGB").quantize(colors=256, dither=Image.Dither.NONE)
    svg = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": SVG_SALT}):
        fig.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
    shown = readable.reading(svg.getvalue(), image.width)
    if not shown.readable:
        raise Unreadable(f"{path.name}: {shown}, under {readable.READABLE_PX} px: make its text larger, its panels "
                         f"fewer a row or the figure narrower (attnlab.readable)")
    with atomic_path(path) as tmp:
        image.save(tmp, format="png", optimize=True)
    with atomic_path(path.with_suffix(".svg")) as tmp:
        Path(tmp).write_bytes(svg.getvalue())
