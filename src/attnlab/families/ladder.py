"""The ladder family: from the plain average to the transformer block."""

import json
from dataclasses import replace
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from attnlab import style
from attnlab.families import Row, present, runs_of, trained_rows
from attnlab.plots import curve_of, figure
from attnlab.runs import run_config
from attnlab.tables import CHAPTER, for_people, run_columns, table

# The rows of each table, in order: row name, the experiment that trains it, its label.
# Adding a row: its experiment config + one line here (README: "Add a row").
LADDER = (
    Row("no_context", "ladder/no_context", "no context: embedding → linear"),
    Row("average", "ladder/average", "uniform causal average, replacing the token"),
    Row("positions", "ladder/average_positions", "+ learned positions"),
    Row("residual", "ladder/average_residual", "+ residual (average added)"),
    Row("dot_raw", "ladder/dot_raw", "raw dot-product scores x·x/√d mixing raw x, added"),
    Row("query_key", "ladder/query_key", "query/key scores mixing raw x, added"),
    Row("head_replace", "ladder/head_replace", "one head (q, k, v), replacing"),
    Row("head_added", "ladder/head_added", "one head (q, k, v), added"),
    Row("four_heads", "ladder/four_heads", "four heads of 32 + W_o, added"),
    Row("mlp", "ladder/mlp", "+ feed-forward MLP"),
    Row("block", "ladder/block", "+ LayerNorm (pre-norm) = one block"),
)
# average_ladder: the ladder's first four rows, each label saying what it is without the rows above
AVERAGE_LADDER = tuple(replace(row, label=label) for row, label in zip(LADDER, (
    "no context: embedding → linear", "uniform causal average, replacing the token",
    "average + learned positions", "average added to the token (residual)")))
DEPTH_OVERFIT = (Row("one_block", "ladder/block"), Row("two_blocks", "depth/two_blocks"))


def ladder_frame(inputs, rows) -> pd.DataFrame:
    return pd.DataFrame([{"row": i, "model": row.label, **run_columns(runs)}
                         for i, (row, _, runs) in enumerate(trained_rows(rows, inputs), start=1)])


@table("average_ladder", place=20, runs=runs_of(AVERAGE_LADDER))
def average_ladder(inputs) -> pd.DataFrame:
    return ladder_frame(inputs, AVERAGE_LADDER)


def ladder_figure(inputs, context, rows, point: str, groups: dict | None = None):
    """Held-out perplexity per row (bars, the chapter's diamonds; each row's name above its bar) above the
    training-loss curves, a page wide (readable at 800 px: attnlab.readable).
    `groups` (group: row names) colours the curves by group, each row of a group its own dash;
    without it every row is its own colour. Each curve is labelled at its end by its row number."""
    df = pd.read_csv(inputs["table"][0])
    shown = present(rows, inputs)
    groups = groups or {row.label: (row.name,) for row in shown}
    group_of = {name: (i, names.index(name)) for i, names in enumerate(groups.values()) for name in names}
    colors = [style.PALETTE[group_of[row.name][0]] for row in shown]
    # the bars above the curves, each row's name above its bar: a page's width (readable at 800 px)
    fig, (bars, curves) = plt.subplots(2, 1, figsize=(7, 0.45 * len(df) + 5.4), height_ratios=(0.45 * len(df), 3.2))
    style.hbars(bars, [f"{r}. {m}" for r, m in zip(df["row"], df["model"])], df["held_out_ppl"], colors,
                context.of("held_out_ppl"), xerr=style.spread(df, "held_out_ppl"), names_above=True)
    bars.set_xlabel("held-out perplexity (lower is better, log scale)")
    ends = []
    for number, row in zip(df["row"], shown):
        group, position = group_of[row.name]
        curve = curve_of(inputs[row.name])
        curves.plot(curve["step"], curve["loss"], ls=style.DASHES[position % len(style.DASHES)], lw=1.3,
                    color=style.PALETTE[group])
        ends.append((curve["step"].iloc[-1], curve["loss"].iloc[-1], str(number), style.PALETTE[group]))
    if len(groups) < len(shown):  # the groups' colours need a key; single rows are named on the bars
        for i, (name, names) in enumerate(groups.items()):
            numbers = [str(n) for n, row in zip(df["row"], shown) if row.name in names]
            curves.plot([], [], color=style.PALETTE[i], lw=2, label=f"{name} (rows {numbers[0]}–{numbers[-1]})")
    style.label_ends(curves, ends)
    curves.set(xlabel="step", ylabel="training loss (nats, smoothed, mean over seeds)")
    style.headline(fig, point, context.profile, style.steps_note(df["steps"]), style.seeds_note(pd.to_numeric(df["seeds"], errors="coerce")))
    style.legend_below(fig)
    return fig


@figure("average_ladder")
def average_ladder_figure(inputs, context):
    return ladder_figure(inputs, context, AVERAGE_LADDER,
                         "Averaging the context in place of the token, with positions, and added to it, beside no context")


# --- ladder: eleven rows, each the row above plus one piece --------------------------------

@table("ladder", place=110, runs=runs_of(LADDER))
def ladder(inputs) -> pd.DataFrame:
    df = ladder_frame(inputs, LADDER)
    # what each row's piece costs; object dtype keeps the counts integers and row 1 blank
    added = [None] + [int(b - a) for a, b in zip(df["params"], df["params"][1:])]
    df.insert(df.columns.get_loc("params") + 1, "added_params", pd.Series(added, dtype=object))
    return df


# The ladder's curves in four groups, a colour each: the average, scores, heads, the block.
LADDER_GROUPS = {
    "the average": ("no_context", "average", "positions", "residual"),
    "scores without a head": ("dot_raw", "query_key"),
    "heads": ("head_replace", "head_added", "four_heads"),
    "the block": ("mlp", "block"),
}


@figure("ladder")
def ladder_plot(inputs, context):
    return ladder_figure(inputs, context, LADDER,
                         "From the plain average to one transformer block: what each piece buys", LADDER_GROUPS)


# --- depth_overfit: one block vs two -----------------------------------------------------

@table("depth_overfit", place=260, runs=runs_of(DEPTH_OVERFIT))
def depth_overfit(inputs) -> pd.DataFrame:
    rows = []
    for row, paths, runs in trained_rows(DEPTH_OVERFIT, inputs):
        # the depth is read from the config the run trained under, not from the row's name
        rows.append({"blocks": run_config(paths[0])["model"]["n_blocks"], "experiment": runs[0]["experiment"],
                     **run_columns(runs)})
    return pd.DataFrame(rows)


# --- analytic demonstrations (raw rows from attnlab.measure.analytic) -----------------------

def measured(inputs) -> pd.DataFrame:
    result = json.loads(Path(inputs["result"][0]).read_text())
    return pd.DataFrame(result["rows"], columns=result["columns"])


# the analytic demonstrations (attnlab.measure.analytic): each measurement's result, by its id
for _id, _place in {"shuffle_test": 30, "average_equivalence": 40, "attention_equivalence": 250, "param_breakdown": 120,
                    "gpt2_params": 130}.items():
    table(_id, place=_place, reads={"result": f"measure/{_id}/result.json"})(measured)


def rows_beside_chapter(df: pd.DataFrame, chapter: dict) -> pd.DataFrame:
    """The reader's view of averaging_matrix: each row of ours, and beside it the chapter's row."""
    shown, _ = for_people(df, shared_columns=())
    weights = [c for c in df.columns if c.isdigit()]
    return shown[["t", *weights]].assign(**{CHAPTER: [
        "[" + ", ".join(chapter[c][i] for c in weights) + "]" if all(i in chapter.get(c, {}) for c in weights) else ""
        for i in df.index]})


@table("averaging_matrix", view=rows_beside_chapter, place=50, reads={"result": "measure/averaging_matrix/result.json"})
def averaging_matrix(inputs) -> pd.DataFrame:
    """The 6x6 matrix printed to three decimals, as the chapter prints it; beside it, unrounded,
    the largest weight the masked softmax puts above the diagonal of each row."""
    df = measured(inputs).set_index("t")
    matrix = [c for c in df.columns if c.isdigit()]
    df[matrix] = df[matrix].map(lambda w: f"{w:.3f}")
    return df.reset_index()


@figure("averaging_matrix")
def averaging_matrix_plot(inputs, context):
    """The matrix unrounded, each cell with the chapter's printed value beneath."""
    A = measured(inputs)
    cells = A[[c for c in A.columns if c.isdigit()]]
    fig, ax = plt.subplots(figsize=(6.4, 5.2))
    image = style.heat_map(ax, cells, A["t"], cells.columns, context.chapter, decimals=3)
    ax.set(xlabel="position i (averaged over)", ylabel="position t (output)")
    fig.colorbar(image, ax=ax, label="weight of position i in output t")
    style.headline(fig, "The causal average is a matrix: 1/t on and below the diagonal, 0 above", context.profile,
                   "computed, no training", "masked softmax of zero scores")
    return fig


@figure("param_breakdown")
def param_breakdown_plot(inputs, context):
    """Shares of one block's parameters (stacked to 1, the MLP at the bottom so its share is the
    height the chapter's two thirds is read against)."""
    df = pd.read_csv(inputs["table"][0])
    labels = [f"d = {d}" if m.startswith("formula") else f"ours\nd = {d}" for m, d in zip(df["model"], df["d"])]
    x = np.arange(len(df))
    fig, ax = plt.subplots(figsize=(8, 4.6))
    bottom = np.zeros(len(df))
    parts = (("mlp", "feed-forward (MLP)", None), ("attention", "attention", style.HATCH),
             ("layernorm", "LayerNorm", ".."))
    for colour, (part, name, hatch) in zip(style.PALETTE, parts):
        share = (df[part] / df["total"]).to_numpy()
        ax.bar(x, share, bottom=bottom, width=0.6, color=colour, hatch=hatch, edgecolor="white", label=name)
        bottom += share
    for xi, share in zip(x, df["mlp_share"]):
        ax.text(xi, share / 2, f"{share:.1%}", ha="center", va="center", fontsize=8, color="white", fontweight="bold")
    chapter_totals = {c.row: c.value for c in context.of("total")}
    for xi, total in zip(x, df["total"]):
        note = f"\nchapter {chapter_totals[xi]:,.0f}" if xi in chapter_totals else ""
        ax.text(xi, 1.02, f"{total:,}{note}", ha="center", va="bottom", fontsize=7)
    mlp = context.of("mlp_share")
    style.mark_chapter(ax, [c.row for c in mlp], [c.value for c in mlp])
    ax.set_xticks(x, labels)
    ax.set(ylim=(0, 1.18), ylabel="share of one block's parameters", xlabel="block width d (above: total parameters)")
    ax.grid(axis="x", visible=False)
    style.headline(fig, "Two thirds of a block's parameters are feed-forward, at every width", context.profile,
                   "counted: the formula 12d² + 13d, and our own block's modules", "no training")
    style.legend_below(fig)
    return fig
