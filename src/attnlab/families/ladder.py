"""The ladder family: from the plain average to the transformer block."""

import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from attnlab.families import Row, present
from attnlab.plots import curve_of, figure, smooth
from attnlab.runs import load_runs, run_config
from attnlab.tables import run_columns, table

# The rows of each table, in order: row name, the experiment that trains it, its label.
# Adding a row: its experiment config + one line here (README: "Add a row").
AVERAGE_LADDER = (
    Row("no_context", "ladder/no_context", "no context: embedding → linear"),
    Row("average", "ladder/average", "uniform causal average, replacing the token"),
    Row("positions", "ladder/average_positions", "average + learned positions"),
    Row("residual", "ladder/average_residual", "average added to the token (residual)"),
)
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
DEPTH_OVERFIT = (Row("one_block", "ladder/block"), Row("two_blocks", "depth/two_blocks"))


def ladder_frame(inputs, rows) -> pd.DataFrame:
    return pd.DataFrame([{"row": i, "model": row.label, **run_columns(load_runs(inputs[row.name]))}
                         for i, row in enumerate(present(rows, inputs), start=1)])


@table("average_ladder")
def average_ladder(inputs) -> pd.DataFrame:
    return ladder_frame(inputs, AVERAGE_LADDER)


def ladder_figure(inputs, rows):
    """Held-out perplexity per row (bars) beside the training-loss curves."""
    df = pd.read_csv(inputs["table"][0])
    fig, (bars, curves) = plt.subplots(1, 2, figsize=(14, 0.3 * len(df) + 3))
    drawn = bars.barh(df["row"].astype(str) + ". " + df["model"], df["held_out_ppl"], color="tab:blue")
    bars.bar_label(drawn, fmt="%.2f", fontsize=7, padding=2)
    bars.invert_yaxis()
    bars.set_xlabel("held-out perplexity")
    colours = plt.cm.viridis(np.linspace(0, 0.95, len(rows)))  # one colour per row, in ladder order
    for i, (row, colour) in enumerate(zip(present(rows, inputs), colours), start=1):
        curve = curve_of(inputs[row.name][0])
        curves.plot(curve["step"], smooth(curve["loss"]), label=f"{i}. {row.label}", lw=1, color=colour)
    curves.set_xlabel("step")
    curves.set_ylabel("training loss (smoothed)")
    curves.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


@figure("average_ladder")
def average_ladder_figure(inputs):
    return ladder_figure(inputs, AVERAGE_LADDER)


# --- ladder: eleven rows, each the row above plus one piece --------------------------------

@table("ladder")
def ladder(inputs) -> pd.DataFrame:
    df = ladder_frame(inputs, LADDER)
    # what each row's piece costs; object dtype keeps the counts integers and row 1 blank
    added = [None] + [int(b - a) for a, b in zip(df["params"], df["params"][1:])]
    df.insert(df.columns.get_loc("params") + 1, "added_params", pd.Series(added, dtype=object))
    return df


@figure("ladder")
def ladder_plot(inputs):
    return ladder_figure(inputs, LADDER)


# --- depth_overfit: one block vs two -----------------------------------------------------

@table("depth_overfit")
def depth_overfit(inputs) -> pd.DataFrame:
    rows = []
    for row in present(DEPTH_OVERFIT, inputs):
        # the depth is read from the config the run trained under, not from the row's name
        paths = inputs[row.name]
        runs = load_runs(paths)
        rows.append({"blocks": run_config(paths[0])["model"]["n_blocks"], "experiment": runs[0]["experiment"],
                     **run_columns(runs)})
    return pd.DataFrame(rows)


# --- analytic demonstrations (raw rows from attnlab.measure.analytic) -----------------------

def measured(inputs) -> pd.DataFrame:
    result = json.loads(Path(inputs["result"][0]).read_text())
    return pd.DataFrame(result["rows"], columns=result["columns"])


for _id in ("shuffle_test", "average_equivalence", "attention_equivalence", "param_breakdown", "gpt2_params"):
    table(_id)(measured)


@table("averaging_matrix")
def averaging_matrix(inputs) -> pd.DataFrame:
    """The 6x6 matrix printed to three decimals, as the chapter prints it; beside it, unrounded,
    the largest weight the masked softmax puts above the diagonal of each row."""
    df = measured(inputs).set_index("t")
    matrix = [c for c in df.columns if c.isdigit()]
    df[matrix] = df[matrix].map(lambda w: f"{w:.3f}")
    return df.reset_index()


@figure("averaging_matrix")
def averaging_matrix_plot(inputs):
    A = measured(inputs).set_index("t")
    A = A[[c for c in A.columns if c.isdigit()]]
    fig, ax = plt.subplots(figsize=(4.2, 3.6))
    image = ax.imshow(A.to_numpy(), cmap="Blues", vmin=0, vmax=1)
    for (t, i), w in np.ndenumerate(A.to_numpy()):
        ax.text(i, t, f"{w:.3f}", ha="center", va="center", fontsize=7, color="white" if w > 0.6 else "black")
    ax.set_xticks(range(len(A.columns)), A.columns)
    ax.set_yticks(range(len(A.index)), A.index)
    ax.set_xlabel("position i (averaged)")
    ax.set_ylabel("position t (output)")
    ax.grid(False)
    fig.colorbar(image, ax=ax, label="weight")
    return fig


@figure("param_breakdown")
def param_breakdown_plot(inputs):
    """Shares of one block's parameters (stacked to 1): the MLP holds two thirds at every width."""
    df = pd.read_csv(inputs["table"][0])
    labels = [f"d={d}" if m.startswith("formula") else f"ours\nd={d}" for m, d in zip(df["model"], df["d"])]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    bottom = np.zeros(len(df))
    for part, colour in (("attention", "tab:blue"), ("mlp", "tab:orange"), ("layernorm", "tab:green")):
        share = (df[part] / df["total"]).to_numpy()
        ax.bar(labels, share, bottom=bottom, label=part, color=colour)
        bottom += share
    for x, (total, attention, mlp_share) in enumerate(zip(df["total"], df["attention"] / df["total"], df["mlp_share"])):
        ax.text(x, 1.02, f"{total:,}", ha="center", fontsize=6)
        ax.text(x, attention + mlp_share / 2, f"MLP {mlp_share:.1%}", ha="center", fontsize=7)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("share of one block's parameters")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    return fig
