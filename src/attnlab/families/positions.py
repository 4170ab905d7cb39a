"""Table `position_extrapolation`: five position schemes trained at 64 tokens, read at longer windows.

Inputs are the runs' metrics.json, one per seed, named by scheme: each run evaluates its model
on held-out windows of every length in train.eval_lengths (the first is its training length).
"""

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from attnlab import style
from attnlab.families import Row, runs_of, trained_rows
from attnlab.plots import figure
from attnlab.runs import run_config
from attnlab.tables import held_out, is_seed_detail, run_columns, seed_columns, table

# The rows of position_extrapolation: trained at 64 tokens, evaluated at every train.eval_lengths window.
SCHEMES = tuple(Row(scheme, f"position/{scheme}", label) for scheme, label in (
    ("learned", "learned absolute (table of 256)"),
    ("sinusoidal", "sinusoidal, added"),
    ("rope", "RoPE (rotate q, k)"),
    ("alibi", "ALiBi (distance penalty)"),
    ("none", "none (causal mask only)"),
))


def window_columns(runs: list[dict]) -> dict:
    """ppl_<n> for every evaluated window (mean, and _std over seeds)."""
    columns = {}
    for n in sorted(map(int, runs[0]["held_out_ppl"])):
        columns.update(seed_columns(f"ppl_{n}", [held_out(r, n) for r in runs]))
    return columns


@table("position_extrapolation", place=160, runs=runs_of(SCHEMES))
def position_extrapolation(inputs) -> pd.DataFrame:
    rows = []
    for scheme, paths, runs in trained_rows(SCHEMES, inputs):
        run = run_columns(runs)
        del run["held_out_ppl"]  # the run's own number is ppl_<training length>
        rows.append({"scheme": scheme.label, "trained_at": run_config(paths[0])["model"]["context"],
                     **window_columns(runs), **run})
    return pd.DataFrame(rows)


def extrapolation_finding(df: pd.DataFrame, windows: list[int]) -> str:
    """The title: what our runs show past the trained length, in their numbers (the chapter's are the markers)."""
    def path(label: str) -> str:
        row = df[df["scheme"].str.startswith(label)].iloc[0]
        return " → ".join(f"{row[f'ppl_{n}']:.4g}" for n in windows)

    return (f"Past the trained length, learned positions go {path('learned')}; "
            f"ALiBi {path('ALiBi')} ({windows[0]} → {windows[-1]} tokens)")


@figure("position_extrapolation")
def position_extrapolation_figure(inputs, context):
    """Held-out perplexity against the evaluation window, one line per scheme."""
    df = pd.read_csv(inputs["table"][0])
    windows = sorted(int(c[len("ppl_"):]) for c in df.columns if c.startswith("ppl_") and not is_seed_detail(c))
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for i, (_, row) in enumerate(df.iterrows()):
        means = [row[f"ppl_{n}"] for n in windows]
        stds = [row[f"ppl_{n}_std"] for n in windows] if f"ppl_{windows[0]}_std" in df.columns else None
        ax.errorbar(windows, means, yerr=stds, capsize=3, lw=1.5, ms=6, label=row["scheme"], **style.series(i))
    printed = [c for c in context.chapter if c.column.startswith("ppl_")]
    style.mark_chapter(ax, [int(c.column[len("ppl_"):]) for c in printed], [c.value for c in printed],
                       [df.at[c.row, "scheme"].split(" (")[0] for c in printed])
    trained = int(df["trained_at"].iloc[0])
    ax.axvline(trained, color="grey", ls="--", lw=1)
    ax.annotate(f"trained at {trained}", (trained, 1), xycoords=("data", "axes fraction"),
                xytext=(4, -12), textcoords="offset points", fontsize=8, color="grey")
    ax.set_xscale("log", base=2)
    ax.set_xticks(windows, [str(n) for n in windows])
    ax.set_yscale("log")
    # perplexities span about a decade: ticks at 40, 50, … 100, 150, written plainly (90, not 9×10¹)
    ax.yaxis.set_major_locator(LogLocator(subs=(1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("evaluation window (tokens, log scale)")
    ax.set_ylabel("held-out perplexity (log scale)")
    style.headline(fig, extrapolation_finding(df, windows), context.profile, style.steps_note(df["steps"]), style.seeds_note(pd.to_numeric(df["seeds"], errors="coerce")),
                   f"trained on {trained}-token windows")
    style.legend_below(fig)
    return fig
