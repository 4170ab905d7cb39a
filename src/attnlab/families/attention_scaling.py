"""Table and figure `attention_scaling`: one attention layer's time and memory vs tokens,
explicit (n²) and fused (n). Rows come from attnlab.measure.attention_scaling."""

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from attnlab import style
from attnlab.claims import stats
from attnlab.plots import figure
from attnlab.tables import SEEDS_SUFFIX, table

PATHS = ("explicit", "fused")  # the measurement's paths, in table order (not imported: no torch here)
FIT_ROWS = 4  # the chapter fits its exponents over the last four rows
COLUMNS = ["path", "tokens", "status", "ms_total", "time_ratio", "ms_projections", "matrix_mb", "peak_mb",
           "memory_ratio", "time_exponent", "memory_exponent", "need_gb", "budget_gb", "budget_rule",
           "peak_method", "kernel", "device", "torch", "threads", "runs"]
SERIES = {"explicit": style.series(1), "fused": style.series(0)}
# the chapter's two fitted slopes, one a panel, told apart in the figure's one legend by name and dash
CHAPTER_FITS = {"time_exponent": ("time", style.CHAPTER_LINE["ls"]),
                "memory_exponent": ("memory", (0, (6, 2, 1.5, 2, 1.5, 2)))}


def fit_exponent(tokens, values, last: int = FIT_ROWS) -> float:
    """Slope of log(value) against log(tokens) over the last `last` rows with a positive value."""
    points = [(n, v) for n, v in zip(tokens, values) if np.isfinite(v) and v > 0][-last:]
    if len(points) < 2:
        return float("nan")
    return stats.loglog_slope(*zip(*points))


def repeats(values: list) -> str:
    """A `<col>_seeds` cell from a size's timed calls: repeats play the seeds' part, so the ledger judges a
    timing on its spread as it judges a trained number on its seeds' (empty where a size was not timed)."""
    return ";".join(repr(float(v)) for v in values) if len(values) > 1 else ""


def path_frame(measurement: dict) -> pd.DataFrame:
    """One path's rows with ratios to the row above and the fitted exponents (on its last measured row);
    where each timed call is kept (`<col>_runs`), every ratio and exponent also repeat by repeat, call k
    of a size against call k of the size before (each size is its own process: any pairing is as good)."""
    timed = {col: [list(r.get(f"{col}_runs") or []) for r in measurement["rows"]] for col in ("ms_total", "ms_projections")}
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
    calls = min((len(t) for t in timed["ms_total"] if t), default=0)
    if calls > 1:
        for col, values in timed.items():
            df[f"{col}{SEEDS_SUFFIX}"] = [repeats(v) for v in values]
        total = [np.array(v[:calls]) if len(v) >= calls else np.full(calls, np.nan) for v in timed["ms_total"]]
        df[f"time_ratio{SEEDS_SUFFIX}"] = [""] + [repeats(now / before) if np.isfinite(now / before).all() else ""
                                                   for before, now in zip(total, total[1:])]
        df[f"time_exponent{SEEDS_SUFFIX}"] = ""
        df.loc[measured[-1], f"time_exponent{SEEDS_SUFFIX}"] = repeats(
            [fit_exponent(df["tokens"], [t[k] for t in total]) for k in range(calls)])
    return df


@table("attention_scaling", shown=("path", "tokens", "status", "ms_total", "matrix_mb", "peak_mb", "memory_ratio"), place=170, reads={path: f"measure/attention_scaling/{path}.json" for path in ("explicit", "fused")})
def attention_scaling(inputs) -> pd.DataFrame:
    frames = [path_frame(json.loads(open(p).read())) for name in PATHS for p in inputs.get(name, [])]
    return pd.concat(frames, ignore_index=True)


def budget_lines(df: pd.DataFrame) -> list[tuple[str, float]]:
    """(label, GB) of the memory budget lines: the budget each size skipped as out of memory was refused under, its
    `budget_gb` cell, as its status prints it; where none was refused, the smallest budget any size ran under."""
    refused = df[df["status"].astype(str).str.startswith("out of memory") & df["budget_gb"].notna()]
    if len(refused):
        return [(f"memory budget that refused {r.path} at {int(r.tokens):,} tokens: {r.budget_gb:.1f} GB", r.budget_gb)
                for r in refused.itertuples()]
    budgets = df["budget_gb"].dropna()
    return [(f"memory budget (smallest: {budgets.min():.1f} GB)", budgets.min())] if len(budgets) else []


def guide(ax, tokens, anchor_n, anchor_value, power: float, label: str, **line) -> None:
    """A c·n^power line through one measured point."""
    n = np.asarray(tokens, dtype=float)
    ax.plot(n, anchor_value * (n / anchor_n) ** power, label=label, **line)


@figure("attention_scaling")
def attention_scaling_figure(inputs, context):
    df = pd.read_csv(inputs["table"][0])
    settings = json.loads(open(inputs[df["path"].iloc[0]][0]).read())["settings"]
    fig, (time_ax, mem_ax) = plt.subplots(1, 2, figsize=(6.5, 5.6))
    for path, rows in df.groupby("path", sort=False):
        ok = rows[rows["status"] == "ok"]
        oom = rows[rows["status"].str.startswith("out of memory")]
        time_ax.plot(ok["tokens"], ok["ms_total"], label=path, **SERIES[path])
        time_ax.plot(ok["tokens"], ok["ms_projections"], ls="--", lw=1, alpha=0.7, label=f"{path}: projections only",
                     color=SERIES[path]["color"])
        mem_ax.plot(ok["tokens"], ok["peak_mb"], label=path, **SERIES[path])
        if len(oom):
            mem_ax.plot(oom["tokens"], oom["need_gb"] * 1024, "x", ms=9, mew=2, color=SERIES[path]["color"],
                        label=f"{path}: out of memory (estimated need)")
    # guides through the largest measured size, where fixed costs matter least: the chapter's fitted
    # slope through the explicit path (ours is written beside it); n through what is linear — the
    # projections' time and the fused path's memory
    largest = {p: rows.iloc[-1] for p, rows in df[df["status"] == "ok"].groupby("path")}
    tokens = np.sort(df["tokens"].unique())
    for ax, total, exponent, linear in ((time_ax, "ms_total", "time_exponent", "ms_projections"),
                                        (mem_ax, "peak_mb", "memory_exponent", "peak_mb")):
        if "explicit" in largest:
            last = largest["explicit"]
            # the table's cell: for time, the fit to the median times (the ledger judges each repeat's own fit)
            fitted = "ours, fit to the median times" if exponent == "time_exponent" else "ours"
            ax.annotate(f"{fitted}: $n^{{{last[exponent]:.2f}}}$", (last["tokens"], last[total]), xytext=(-8, 6),
                        textcoords="offset points", ha="right", fontsize=8, color=SERIES["explicit"]["color"])
            quantity, dash = CHAPTER_FITS[exponent]
            for c in context.of(exponent):
                guide(ax, tokens, last["tokens"], last[total], c.value,
                      f"chapter's fit, {quantity}: ∝ $n^{{{c.value:g}}}$", **{**style.CHAPTER_LINE, "ls": dash})
        if "fused" in largest:
            fused = largest["fused"]
            guide(ax, tokens, fused["tokens"], fused[linear], 1, "∝ n", color="0.4", ls=":", lw=1)
    matrix = df[["tokens", "matrix_mb"]].drop_duplicates().sort_values("tokens")
    mem_ax.plot(matrix["tokens"], matrix["matrix_mb"], color=SERIES["explicit"]["color"], lw=0.8, alpha=0.5,
                label="one score matrix (heads·n²·4 B)")
    printed = context.of("matrix_mb")
    style.mark_chapter(mem_ax, df["tokens"][[c.row for c in printed]], [c.value for c in printed],
                       label="chapter: one score matrix's MB (not its peak)")
    for label, budget in budget_lines(df):
        mem_ax.axhline(budget * 1024, color="0.3", lw=1, ls="-.", label=label)
    time_ax.set_ylabel("forward time (ms, median, log scale)")
    mem_ax.set_ylabel("peak memory above input (MB, log scale)")
    for ax in (time_ax, mem_ax):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("tokens n (log scale)")
    # what is drawn, not what it shows: the ledger judges the exponents (a title asserts no claim of it)
    style.headline(fig, "One attention layer's time and peak memory against n: the explicit path and a fused kernel",
                   context.profile,
                   f"one layer: d = {settings['d_model']}, {settings['n_heads']} heads, batch 1, float32",
                   f"{df['device'].iloc[0]}, torch {df['torch'].iloc[0]}", f"median of {int(df['runs'].max())} runs")
    style.legend_below(fig)
    return fig
