"""The ladder family: from the plain average to the transformer block."""

import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from attnlab.plots import curve_of, figure, smooth
from attnlab.tables import load_runs, run_columns, run_config, table

AVERAGE_LADDER_ROWS = {
    "no_context": "no context: embedding → linear",
    "average": "uniform causal average, replacing the token",
    "positions": "average + learned positions",
    "residual": "average added to the token (residual)",
}


def ladder_frame(inputs, labels: dict) -> pd.DataFrame:
    rows = []
    for i, (name, paths) in enumerate(inputs.items(), start=1):
        rows.append({"row": i, "model": labels.get(name, name), **run_columns(load_runs(paths))})
    return pd.DataFrame(rows)


@table("average_ladder")
def average_ladder(inputs) -> pd.DataFrame:
    return ladder_frame(inputs, AVERAGE_LADDER_ROWS)


def ladder_figure(inputs, labels: dict):
    """Held-out perplexity per row (bars) beside the training-loss curves."""
    df = pd.read_csv(inputs["table"][0])
    fig, (bars, curves) = plt.subplots(1, 2, figsize=(14, 0.3 * len(df) + 3))
    drawn = bars.barh(df["row"].astype(str) + ". " + df["model"], df["held_out_ppl"], color="tab:blue")
    bars.bar_label(drawn, fmt="%.2f", fontsize=7, padding=2)
    bars.invert_yaxis()
    bars.set_xlabel("held-out perplexity")
    rows = [name for name in inputs if name in labels]
    colours = plt.cm.viridis(np.linspace(0, 0.95, len(rows)))  # one colour per row, in ladder order
    for i, (name, colour) in enumerate(zip(rows, colours), start=1):
        curve = curve_of(inputs[name][0])
        curves.plot(curve["step"], smooth(curve["loss"]), label=f"{i}. {labels[name]}", lw=1, color=colour)
    curves.set_xlabel("step")
    curves.set_ylabel("training loss (smoothed)")
    curves.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


@figure("average_ladder")
def average_ladder_figure(inputs):
    return ladder_figure(inputs, AVERAGE_LADDER_ROWS)


# --- ladder: eleven rows, each the row above plus one piece --------------------------------

LADDER_ROWS = {
    "no_context": "no context: embedding → linear",
    "average": "uniform causal average, replacing the token",
    "positions": "+ learned positions",
    "residual": "+ residual (average added)",
    "dot_raw": "raw dot-product scores x·x/√d mixing raw x, added",
    "query_key": "query/key scores mixing raw x, added",
    "head_replace": "one head (q, k, v), replacing",
    "head_added": "one head (q, k, v), added",
    "four_heads": "four heads of 32 + W_o, added",
    "mlp": "+ feed-forward MLP",
    "block": "+ LayerNorm (pre-norm) = one block",
}


@table("ladder")
def ladder(inputs) -> pd.DataFrame:
    df = ladder_frame({name: paths for name, paths in inputs.items() if name in LADDER_ROWS}, LADDER_ROWS)
    # what each row's piece costs; object dtype keeps the counts integers and row 1 blank
    added = [None] + [int(b - a) for a, b in zip(df["params"], df["params"][1:])]
    df.insert(df.columns.get_loc("params") + 1, "added_params", pd.Series(added, dtype=object))
    return df


@figure("ladder")
def ladder_plot(inputs):
    return ladder_figure(inputs, LADDER_ROWS)


# --- depth_overfit: one block vs two -----------------------------------------------------

@table("depth_overfit")
def depth_overfit(inputs) -> pd.DataFrame:
    rows = []
    for name, paths in inputs.items():
        # the depth is read from the config the run trained under, not from the row's name
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
    """The 6x6 matrix printed to three decimals, as the chapter prints it."""
    df = measured(inputs).set_index("t")
    return df.map(lambda w: f"{w:.3f}").reset_index()


@figure("averaging_matrix")
def averaging_matrix_plot(inputs):
    A = measured(inputs).set_index("t")
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
