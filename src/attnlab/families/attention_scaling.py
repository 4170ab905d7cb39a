"""Table and figure `attention_scaling`: one attention layer's time and memory vs tokens,
explicit (n²) and fused (n). Rows come from attnlab.measure.attention_scaling."""

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from attnlab.plots import figure
from attnlab.tables import table

PATHS = ("explicit", "fused")  # the measurement's paths, in table order (not imported: no torch here)
FIT_ROWS = 4  # the chapter fits its exponents over the last four rows
COLUMNS = ["path", "tokens", "status", "ms_total", "time_ratio", "ms_projections", "matrix_mb", "peak_mb",
           "memory_ratio", "time_exponent", "memory_exponent", "need_gb", "budget_gb", "budget_rule",
           "peak_method", "kernel", "device", "torch", "threads", "runs"]
STYLE = {"explicit": dict(color="tab:red", marker="o"), "fused": dict(color="tab:blue", marker="s")}


def fit_exponent(tokens, values, last: int = FIT_ROWS) -> float:
    """Slope of log(value) against log(tokens) over the last `last` rows with a positive value."""
    points = [(n, v) for n, v in zip(tokens, values) if np.isfinite(v) and v > 0][-last:]
    if len(points) < 2:
        return float("nan")
    n, v = np.log(np.array(points, dtype=float)).T
    return float(np.polyfit(n, v, 1)[0])


def path_frame(measurement: dict) -> pd.DataFrame:
    """One path's rows with ratios to the row above and the fitted exponents (on its last measured row)."""
    df = pd.DataFrame(measurement["rows"]).reindex(columns=COLUMNS)
    df["path"] = measurement["path"]
    df["tokens"] = df["tokens"].astype(int)
    numeric = ["matrix_mb", "ms_total", "ms_projections", "peak_mb", "need_gb", "budget_gb",
               "time_exponent", "memory_exponent"]
    for col in numeric:
        df[col] = pd.to_numeric(df[col], errors="coerce")
    df["time_ratio"] = df["ms_total"] / df["ms_total"].shift()
    df["memory_ratio"] = df["peak_mb"] / df["peak_mb"].shift()
    measured = df.index[df["status"] == "ok"]
    if len(measured):
        df.loc[measured[-1], "time_exponent"] = fit_exponent(df["tokens"], df["ms_total"])
        df.loc[measured[-1], "memory_exponent"] = fit_exponent(df["tokens"], df["peak_mb"])
    return df


@table("attention_scaling")
def attention_scaling(inputs) -> pd.DataFrame:
    frames = [path_frame(json.loads(open(p).read())) for name in PATHS for p in inputs.get(name, [])]
    return pd.concat(frames, ignore_index=True)


def guide(ax, tokens, anchor_n, anchor_value, power: int) -> None:
    """A dotted c·n^power line through one measured point."""
    n = np.asarray(tokens, dtype=float)
    ax.plot(n, anchor_value * (n / anchor_n) ** power, ls=":", lw=1, color="grey" if power == 2 else "black",
            label="∝ n²" if power == 2 else "∝ n")


@figure("attention_scaling")
def attention_scaling_figure(inputs):
    df = pd.read_csv(inputs["table"][0])
    fig, (time_ax, mem_ax) = plt.subplots(1, 2, figsize=(10, 5))
    for path, rows in df.groupby("path", sort=False):
        ok = rows[rows["status"] == "ok"]
        oom = rows[rows["status"].str.startswith("out of memory")]
        time_ax.plot(ok["tokens"], ok["ms_total"], label=f"{path}: total", **STYLE[path])
        time_ax.plot(ok["tokens"], ok["ms_projections"], ls="--", lw=1, alpha=0.6, label=f"{path}: projections",
                     color=STYLE[path]["color"])
        mem_ax.plot(ok["tokens"], ok["peak_mb"], label=f"{path}: measured peak", **STYLE[path])
        if len(oom):
            mem_ax.scatter(oom["tokens"], oom["need_gb"] * 1024, marker="x", s=60, color=STYLE[path]["color"],
                           label=f"{path}: out of memory (estimated need)", zorder=3)
    # guides through the largest measured size, where fixed costs matter least: n² through the
    # explicit path; n through what is linear — the projections' time and the fused path's memory
    largest = {p: rows.iloc[-1] for p, rows in df[df["status"] == "ok"].groupby("path")}
    tokens = np.sort(df["tokens"].unique())
    for ax, square, linear in ((time_ax, ("explicit", "ms_total"), ("fused", "ms_projections")),
                               (mem_ax, ("explicit", "peak_mb"), ("fused", "peak_mb"))):
        for (path, col), power in ((square, 2), (linear, 1)):
            if path in largest:
                guide(ax, tokens, largest[path]["tokens"], largest[path][col], power)
    matrix = df[["tokens", "matrix_mb"]].drop_duplicates().sort_values("tokens")
    mem_ax.plot(matrix["tokens"], matrix["matrix_mb"], color="tab:red", lw=0.8, alpha=0.4,
                label="one score matrix (heads·n²·4 B)")
    budgets = df["budget_gb"].dropna()
    if len(budgets):
        mem_ax.axhline(budgets.min() * 1024, color="tab:orange", lw=1, ls="-.",
                       label=f"memory budget (smallest: {budgets.min():.1f} GB)")
    time_ax.set_ylabel("forward time (ms, median)")
    mem_ax.set_ylabel("peak memory above input (MB)")
    device = f"{df['device'].iloc[0]}, torch {df['torch'].iloc[0]}"
    for ax in (time_ax, mem_ax):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("tokens n")
        ax.legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.15))  # below: keeps the data clear
    fig.suptitle(f"One attention layer (d=512, 8 heads, batch 1, float32) — {device}", fontsize=9)
    return fig
