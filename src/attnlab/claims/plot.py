"""The claims plot: every numeric claim of the ledger as ours ÷ the chapter's, and each claim that does not
come back in its own units: two figures, each a page's width (readable at an 800 px window: attnlab.readable).

    python -m attnlab.claims.plot --ledger results/full/claims.csv --out figures/full/claims.png

writes claims.png and, beside it, claims.svg (the ratios) and claims_missed.png and .svg (the panels). In
the first, one row per claim, grouped by table in the ledger's order: our mean over the chapter's value (1 is the chapter's number, drawn as a dashed line)
with the mean's 95 % interval, in the colour and mark of its number's word (the ledger's `number` column;
the report's look: attnlab.style). Where the rule is a tolerance about the chapter's number (within 10 %,
within ±0.5) a grey band shows it, so a referee sees why a ratio far from 1 can still agree and a close
one not. Claims that are not one number (words, lists), whose chapter value is 0 (no ratio) or that were
not measured are left out there, and the subtitle counts them. The axis turns logarithmic (symmetric-log
where an interval reaches 0) once the ratios span more than a factor of ten. The title counts the words
of both columns, numbers and points apart.

In the second, one small panel per measured claim that does not come back (its number DIFFERS or its point
FAILS: the report's first screen lists the same), lists and words included, in the claim's own units: the
spread of our seeds (mean ± sd, thin), our mean's interval (thick), our mean in its number's mark, the
chapter's number as a diamond (the numbers its words print: both ends of a range, a difference of two;
words alone: the diamond in the corner, the words in the title), and both words and the seed count in the
panel's title, two panels a row (a figure saying so where every claim comes back). Each page is under
2,000 pixels tall for the full ledger.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.transforms import blended_transform_factory  # noqa: E402

from attnlab import style  # noqa: E402
from attnlab.claims import stats  # noqa: E402
from attnlab.claims.render import counted, is_judged_loosely, without_table_note  # noqa: E402
from attnlab.claims.rules import NO_POINT, NUMBER_WORDS, POINT_WORDS  # noqa: E402

# one number as the ledger writes it (render.show, show_chapter): 1,115,394 · 60.1 ± 0.4814 · 1.19e-07
NUMBER = re.compile(r"(-?[\d,]*\.?\d+(?:e[-+]?\d+)?)(?: ± \S+)?")
INTERVAL = re.compile(r"\[(-?[\d,]*\.?\d+(?:e[-+]?\d+)?), (-?[\d,]*\.?\d+(?:e[-+]?\d+)?)\]")
# a tolerance about the chapter's own number, as render.describe_check writes it (not `within … to <other>`)
TOLERANCE = re.compile(r"within (±)?(\S+?)( %)?(?:;|$)")
BAND = "the rule's tolerance about the chapter"
ROW_INCHES = 0.125  # a claim's row: 7-point labels, one a row
WIDTH = 7.0  # inches, each figure: 840 px at dpi 120, shown at 90 % at an 800 px window (6-point text: 9 px)
MISSED = "_missed"  # the panels' figure: claims_missed.png beside claims.png
NOT_MEASURED = "–"  # the ledger's `reproduced` where a table it reads was not made or the device cannot measure it
# one value as the ledger writes it, with its spread where it has one: 60.23 ± 0.49, -0.4392 ± 0.3926, 1.19e-07
VALUE = re.compile(r"(-?[\d,]*\.?\d+(?:e[-+]?\d+)?)(?: ± (-?[\d,]*\.?\d+(?:e[-+]?\d+)?))?")


def number(cell: str) -> float | None:
    """A ledger cell's one number (a mean ± sd: the mean), or None for words, lists and the empty."""
    found = NUMBER.fullmatch(without_table_note(cell.strip()))
    return float(found.group(1).replace(",", "")) if found else None


def interval(cell: str) -> tuple[float, float] | None:
    """The mean's 95 % interval of a one-number claim, or None (one seed, an analytic value)."""
    found = INTERVAL.fullmatch(cell.strip())
    return (float(found.group(1).replace(",", "")), float(found.group(2).replace(",", ""))) if found else None


def tolerance(rule: str, chapter: float) -> float | None:
    """Half the width of the rule's band in ratio units: `within 10 %` → 0.1, `within ±0.5` about a
    chapter value of 4 → 0.125; None for other rules (exact, bounds, a comparison with another value)."""
    found = TOLERANCE.match(rule)
    if not found:
        return None
    plus_minus, width, percent = found.groups()
    if not (plus_minus or percent):
        return None
    width = float(width.replace(",", ""))
    return width / 100 if percent else width / abs(chapter)


def ratios(ledger: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """The claims drawn (id, table, number, ratio, low, high, band) and how many were left out, by why."""
    drawn, left_out = [], {"not a single number (words or a list)": 0, "with the chapter's value 0 (no ratio)": 0,
                           "not measured": 0}
    for _, claim in ledger.iterrows():
        chapter, ours = number(claim["chapter"]), number(claim["reproduced"])
        if claim["reproduced"] == NOT_MEASURED:
            left_out["not measured"] += 1
        elif chapter is None or ours is None:
            left_out["not a single number (words or a list)"] += 1
        elif chapter == 0:
            left_out["with the chapter's value 0 (no ratio)"] += 1
        else:
            bounds = interval(claim["interval"]) or (ours, ours)
            low, high = sorted(b / chapter for b in bounds)
            drawn.append({"id": claim["id"], "table": claim["table"], "number": claim["number"],
                          "ratio": ours / chapter, "low": low, "high": high,
                          "band": tolerance(claim["rule"], chapter)})
    return pd.DataFrame(drawn), {why: n for why, n in left_out.items() if n}


def as_float(text: str) -> float:
    return float(text.replace(",", ""))


def spread_values(cell: str) -> list[tuple[float, float]] | None:
    """Each value of a ledger cell with its sd over seeds (0 where it has none): '60.23 ± 0.49',
    '[0.1973 ± 0.2086, 0.1557 ± 0.1970]', '1,024'; None for words."""
    cell = without_table_note(cell.strip())
    items = cell[1:-1].split(", ") if cell.startswith("[") and cell.endswith("]") and "[" not in cell[1:] else [cell]
    found = [VALUE.fullmatch(item.strip()) for item in items]
    if not items or not all(found):
        return None
    return [(as_float(m[1]), as_float(m[2]) if m[2] else 0.0) for m in found]


def interval_values(cell: str, n: int) -> list[tuple[float, float]] | None:
    """The mean's interval of each of n values ('[lo, hi]' or '[[lo, hi], …]'), None where the ledger gives none."""
    pairs = [(as_float(a), as_float(b)) for a, b in INTERVAL.findall(cell)]
    return pairs if len(pairs) == n else None


def chapter_values(cell: str, n: int) -> list[float] | None:
    """The chapter's number for each of n values (one number is every value's), None for words."""
    found = spread_values(cell)
    if found is None or len(found) not in (1, n):
        return None
    return [v for v, _ in found] * (n if len(found) == 1 else 1)


# the chapter's printed numbers inside its words: a range '(−0.4 < difference < 0)', a difference '(100.0 − 91.7)'
WORDS_RANGE = re.compile(r"\((-?[\d.]+) < [^<]+ < (-?[\d.]+)\)")
WORDS_DIFFERENCE = re.compile(r"\((-?[\d.]+) - (-?[\d.]+)\)")


def chapter_in_words(cell: str) -> tuple[str, list[float]] | None:
    """('range', [low, high]) or ('difference', [a − b]) from the numbers the chapter's words print, else None."""
    cell = cell.replace("−", "-")
    if found := WORDS_RANGE.search(cell):
        return "range", [float(found[1]), float(found[2])]
    if found := WORDS_DIFFERENCE.search(cell):
        return "difference", [float(found[1]) - float(found[2])]
    return None


def missed(ledger: pd.DataFrame) -> list[dict]:
    """The measured claims that do not come back (number DIFFERS or point FAILS), those whose number DIFFERS
    first, each with its values, intervals and the chapter's."""
    out = []
    differs = ledger["number"] == "DIFFERS"
    for _, claim in pd.concat([ledger[differs], ledger[~differs & (ledger["point"] == "FAILS")]]).iterrows():
        values = spread_values(str(claim["reproduced"]))
        if values is None:
            continue
        out.append({"id": claim["id"], "number": claim["number"], "point": claim["point"], "values": values,
                    "intervals": interval_values(str(claim["interval"]), len(values)),
                    "chapter": chapter_values(str(claim["chapter"]), len(values)), "chapter_text": str(claim["chapter"]),
                    "chapter_words": chapter_in_words(str(claim["chapter"])),
                    "seeds": str(claim.get("seeds", "")).strip()})
    return out


def missed_panel(ax, claim: dict, first: bool, first_interval: bool | None = None) -> None:
    """One claim in its own units, a row per value: the seeds' spread, the mean's interval, the mean, the chapter's.
    `first`, `first_interval`: the panel labels what it draws for the legend (the interval: by default with `first`)."""
    colour, mark = style.NUMBER_COLOURS[claim["number"]], style.NUMBER_MARKS[claim["number"]]
    y = np.arange(len(claim["values"]))
    means = np.array([v for v, _ in claim["values"]])
    sds = np.array([sd for _, sd in claim["values"]])
    ax.hlines(y, means - sds, means + sds, color=colour, lw=1, alpha=0.7,
              label="our seeds: mean ± sd" if first else None)
    if claim["intervals"]:
        lows, highs = zip(*claim["intervals"])
        ax.hlines(y, lows, highs, color=colour, lw=4, alpha=0.45, label="our mean's interval" if (first if first_interval is None else first_interval) else None)
    ax.plot(means, y, ls="none", marker=f"${mark}$", ms=7, color=colour, zorder=4)
    said = claim["chapter_text"] if claim["chapter"] is None else ""
    words = claim.get("chapter_words")
    mark = {**style.CHAPTER, "ms": 6, "label": "chapter's number (its words: in the panel's title)"}
    if claim["chapter"] is not None:
        ax.plot(claim["chapter"], y, **mark)
    elif words and words[0] == "range":  # the chapter's printed bounds, each value's row between them
        for at in y:
            ax.plot(words[1], [at, at], color="black", lw=0.8, ls=":", zorder=4)
            ax.plot(words[1], [at, at], **mark)
    elif words:  # a difference of two printed numbers
        ax.plot(words[1] * len(y), y, **mark)
    else:  # words alone: the chapter's mark in the corner, at no position on the axis
        ax.plot([0.03], [0.9], transform=ax.transAxes, **mark)
    seeds = f"{claim['seeds']} seed{'' if claim['seeds'] == '1' else 's'}" if claim["seeds"] else ""
    said = f"\nchapter: {said if len(said) <= 44 else said[:43] + '…'}" if said else ""
    verdicts = [f"number {claim['number']}"] + ([f"point {claim['point']}"] if claim["point"] != NO_POINT else [])
    ax.set_title(f"{claim['id']}\n{' · '.join(verdicts + ([seeds] if seeds else []))}{said}", fontsize=7, loc="left",
                 color=colour)
    ax.set_yticks(y, [str(i + 1) for i in y] if len(y) > 1 else [""], fontsize=6)
    ax.set_ylim(len(y) - 0.5, -0.5)
    ax.tick_params(axis="x", labelsize=6)
    ax.grid(axis="y", visible=False)


def finding(ledger: pd.DataFrame) -> str:
    """The title: the words of both columns counted apart ('Of the chapter's 94 numbers, 62 AGREES, 10 DIFFERS, …;
    of its 50 points, 39 HOLDS, …'); a shortened profile's says what its trained numbers were judged against."""
    points = ledger[ledger["point"] != NO_POINT]
    against = " (trained ones against the profile's own published seeds)" if is_judged_loosely(
        ledger["profile"].iloc[0]) else ""
    return (f"Of the chapter's {len(ledger)} numbers{against}, {counted(ledger['number'], NUMBER_WORDS)}"
            + (f"; of its {len(points)} points, {counted(points['point'], POINT_WORDS)}" if len(points) else ""))


def scale(ax, df: pd.DataFrame) -> str:
    """Linear while everything drawn stays within a factor of ten of the smallest ratio, else log;
    symmetric-log where an interval reaches 0 or below (linear below the smallest ratio's decade). The
    limits hold every ratio, every interval and 1, not the bands (a wide one is cut at the edge).
    Returns the scale's name."""
    values = np.append(df[["ratio", "low", "high"]].to_numpy().ravel(), 1.0)
    low, high = values.min(), values.max()
    means = np.abs(df["ratio"].to_numpy())
    smallest = means[means > 0].min()
    if np.abs(values).max() / min(smallest, 1.0) <= 10:
        pad = max(0.05 * (high - low), 0.05)
        ax.set_xlim(low - pad, high + pad)
        return "linear"
    ax.set_xlim(low * 2 if low < 0 else low / 2, high * 2)
    if low <= 0:
        ax.set_xscale("symlog", linthresh=10.0 ** math.floor(math.log10(smallest)), linscale=0.5)
        return "symlog"
    ax.set_xscale("log")
    return "log"


def claims_figure(ledger: pd.DataFrame):
    """The ratios: a row per drawn claim under a bold row naming its table."""
    df, left_out = ratios(ledger)
    labels, y, ys = [], 0, []
    for table, claims in df.groupby("table", sort=False):
        labels.append((y, table, True))
        y += 1
        for claim_id in claims["id"]:
            labels.append((y, claim_id.removeprefix(f"{table}."), False))
            ys.append(y)
            y += 1
    df["y"] = ys
    fig, ax = plt.subplots(figsize=(WIDTH, ROW_INCHES * y + 3.0))
    how = scale(ax, df)
    ax.axvline(1, label="chapter's value (ratio 1)", zorder=1, **style.CHAPTER_LINE)
    for _, claim in df[df["band"].notna()].iterrows():
        ax.fill_betweenx([claim.y - 0.42, claim.y + 0.42], 1 - claim.band, 1 + claim.band, color="0.86", lw=0,
                         zorder=0, label=BAND)
    for word in NUMBER_WORDS:
        these = df[df["number"] == word]
        if these.empty:
            continue
        colour = style.NUMBER_COLOURS[word]
        ax.errorbar(these["ratio"], these["y"], xerr=[these["ratio"] - these["low"], these["high"] - these["ratio"]],
                    fmt="none", ecolor=colour, elinewidth=1.2, capsize=2, zorder=3)
        ax.plot(these["ratio"], these["y"], ls="none", marker=f"${style.NUMBER_MARKS[word]}$", ms=8, color=colour,
                zorder=4, label=word)
    right = blended_transform_factory(ax.transAxes, ax.transData)
    for _, claim in df.iterrows():  # the ratio in numbers, where a log axis makes it hard to read off
        ax.text(1.01, claim.y, f"{claim.ratio:.3g}", transform=right, va="center", fontsize=7, color="0.3")
    ax.set_yticks([at for at, _, _ in labels], [name for _, name, _ in labels], fontsize=7)
    for tick, (_, _, is_table) in zip(ax.get_yticklabels(), labels):
        if is_table:
            tick.set_fontweight("bold")
            tick.set_fontsize(8)
    ax.set_ylim(y - 0.5, -0.5)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel(f"ours ÷ chapter (mean, its {stats.LEVEL_TEXT} interval){'' if how == 'linear' else f'; {how} scale'}")
    profile = ledger["profile"].iloc[0]
    left = ", ".join(f"{n} {why}" for why, n in left_out.items())
    panels = len(missed(ledger))
    style.headline(fig, finding(ledger), profile, f"{len(df)} numeric claims drawn as ratios",
                   f"left out: {left}" if left else "none left out",
                   f"the {panels} measured claims whose number DIFFERS or point FAILS: the next figure, in their own units")
    style.legend_below(fig)
    return fig


def missed_figure(ledger: pd.DataFrame):
    """A panel per measured claim that does not come back, two a row, in the ledger's order (missed)."""
    panels = missed(ledger)
    profile = ledger["profile"].iloc[0]
    if not panels:
        fig = plt.figure(figsize=(WIDTH, 0.9))
        style.headline(fig, "No measured claim's number DIFFERS and no point FAILS", profile)
        return fig
    heights = [max(0.2 * len(p["values"]) + 0.55, 0.8) for p in panels]
    pairs = [max(heights[i:i + 2]) for i in range(0, len(panels), 2)]
    fig = plt.figure(figsize=(WIDTH, 0.75 * sum(pairs) + 0.55 * len(pairs) + 1.6))
    grid = fig.add_gridspec(len(pairs), 2, height_ratios=pairs)  # tight_layout spaces the rows for their titles
    interval = next((i for i, claim in enumerate(panels) if claim["intervals"]), None)
    for i, claim in enumerate(panels):  # each entry of the legend labelled once: the first panel that draws it
        missed_panel(fig.add_subplot(grid[i // 2, i % 2]), claim, first=i == 0, first_interval=i == interval)
    style.headline(fig, f"The {len(panels)} measured claims whose number DIFFERS or point FAILS, in their own units",
                   profile, "our seeds' spread (thin), our mean's interval (thick), the chapter's number (diamond)")
    style.legend_below(fig)
    return fig


def missed_path(out: Path) -> Path:
    """Where the panels' figure is written: claims_missed.png beside claims.png."""
    return out.with_name(f"{out.stem}{MISSED}{out.suffix}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ledger", required=True, type=Path, help="claims.csv (python -m attnlab.claims check)")
    parser.add_argument("--out", required=True, type=Path,
                        help="the ratios' PNG; its SVG, and the panels' PNG and SVG (claims_missed), are written beside it")
    args = parser.parse_args(argv)
    ledger = pd.read_csv(args.ledger, keep_default_na=False)
    with plt.rc_context(style.RC):
        for draw, out in ((claims_figure, args.out), (missed_figure, missed_path(args.out))):
            fig = draw(ledger)
            style.save(fig, out)
            plt.close(fig)


if __name__ == "__main__":
    main()
