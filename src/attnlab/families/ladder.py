"""The ladder family: from the plain average to the transformer block."""

import matplotlib.pyplot as plt
import pandas as pd

from attnlab.plots import curve_of, figure, smooth
from attnlab.tables import load_runs, run_columns, table

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
    fig, (bars, curves) = plt.subplots(1, 2, figsize=(10, 4))
    bars.barh(df["row"].astype(str) + ". " + df["model"], df["held_out_ppl"], color="tab:blue")
    bars.invert_yaxis()
    bars.set_xlabel("held-out perplexity")
    for name, paths in inputs.items():
        if name in labels:
            curve = curve_of(paths[0])
            curves.plot(curve["step"], smooth(curve["loss"]), label=labels[name], lw=1)
    curves.set_xlabel("step")
    curves.set_ylabel("training loss (smoothed)")
    curves.legend(fontsize=7)
    return fig


@figure("average_ladder")
def average_ladder_figure(inputs):
    return ladder_figure(inputs, AVERAGE_LADDER_ROWS)
