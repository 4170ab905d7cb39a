"""The norm family: pre-norm vs post-norm in twelve-block models (norm_grad_init, norm_warmup)."""

import json
import math
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from attnlab import style
from attnlab.families import Row, runs_of, trained_rows
from attnlab.plots import curve_of, figure
from attnlab.runs import evals_of, load_runs, run_config
from attnlab.tables import is_seed_detail, run_columns, seed_columns, seed_ids, table

@table("norm_grad_init", shown=("parameters", "norm", "block_1", "block_12", "ratio_last_first"), place=140, reads={"grad_norms": "measure/norm_grad_init/grad_norms.csv"})
def norm_grad_init(inputs) -> pd.DataFrame:
    """One row per parameter group and norm placement: gradient norm of blocks 1..12 and
    last/first (the ratio per seed, then averaged), mean ± std over seeds."""
    raw = pd.read_csv(inputs["grad_norms"][0])
    rows = []
    for (group, norm), cell in raw.groupby(["parameters", "norm"], sort=False):
        per_seed = cell.pivot(index="seed", columns="block", values="grad_norm")
        row = {"parameters": group, "norm": norm, "seeds": len(per_seed), "seed_ids": seed_ids(per_seed.index)}
        for block in per_seed.columns:
            row.update(seed_columns(f"block_{block}", per_seed[block].tolist()))
        row.update(seed_columns("ratio_last_first", (per_seed[per_seed.columns[-1]] / per_seed[per_seed.columns[0]]).tolist()))
        rows.append(row)
    return pd.DataFrame(rows)


GROUP_TITLES = {"all": "every parameter of the block", "attention_qkv": "attention q, k, v weights (the chapter's)"}


def growth_finding(df: pd.DataFrame, blocks: list[int]) -> str:
    """The title: what our runs show of the chapter's parameters (the attention q, k, v weights), in
    their numbers — the last block's gradient norm over the first's, per norm placement; the chapter's
    values are the markers."""
    qkv = df[df["parameters"] == "attention_qkv"]
    ratios = ", ".join(f"{row['norm']}-norm {row['ratio_last_first']:.2f}" for _, row in qkv.iterrows())
    return (f"Before any step, block {blocks[-1]}'s gradient norm over block {blocks[0]}'s "
            f"(attention q, k, v; mean over seeds): {ratios}")


@figure("norm_grad_init")
def norm_grad_init_figure(inputs, context):
    """Per-block gradient norm (mean ± std over seeds), pre vs post, one panel per parameter group;
    the chapter's first and last block where it prints them (the attention q, k, v weights)."""
    df = pd.read_csv(inputs["table"][0])
    blocks = sorted(int(c[len("block_"):]) for c in df.columns if c.startswith("block_") and not is_seed_detail(c))
    groups = list(dict.fromkeys(df["parameters"]))
    fig, axes = plt.subplots(1, len(groups), figsize=(min(9, 4.5 * len(groups)), 4.2), squeeze=False)
    for ax, group in zip(axes[0], groups):
        for i, (row, cell) in enumerate(df[df["parameters"] == group].iterrows()):
            means = [cell[f"block_{b}"] for b in blocks]
            stds = [cell[f"block_{b}_std"] for b in blocks] if "block_1_std" in df.columns else None
            ax.errorbar(blocks, means, yerr=stds, ms=4, capsize=2, lw=1.5, label=f"{cell['norm']}-norm",
                        **style.series(i))
        printed = [c for c in context.chapter if c.column.startswith("block_") and df.at[c.row, "parameters"] == group]
        style.mark_chapter(ax, [int(c.column[len("block_"):]) for c in printed], [c.value for c in printed])
        ax.set(xlabel="block (1 = nearest the input)", ylabel="gradient norm (L2, one batch)", ylim=(0, None),
               title=GROUP_TITLES.get(group, group))
        ax.set_xticks(blocks)
    style.headline(fig, growth_finding(df, blocks), context.profile,
                   "at initialisation: one batch, one backward, no step", style.seeds_note(pd.to_numeric(df["seeds"], errors="coerce")),
                   f"{len(blocks)} blocks")
    style.legend_below(fig)
    return fig


def run_settings(metrics_path: str) -> dict:
    """The schedule a run trained with, read from the config it saved (not from today's configs)."""
    cfg = run_config(metrics_path)
    t = cfg["train"]
    return {"norm": cfg["model"]["norm"], "n_blocks": cfg["model"]["n_blocks"], "lr": t["lr"],
            "warmup_steps": t["warmup_steps"], "schedule": t["schedule"],
            "grad_clip": "none" if t["grad_clip"] is None else t["grad_clip"], "batch": t["batch_size"]}


def outcome(runs: list[dict]) -> str:
    diverged = [r for r in runs if r["diverged"]]
    if not diverged:
        return "trained"
    return "; ".join(f"seed {r['seed']} diverged at step {r['diverged_step']}" for r in diverged)


# The rows of norm_warmup: the chapter's four, then post_warmup without each unstated detail we
# chose (not chapter rows: they show what each detail does).
NORM_WARMUP = (
    Row("pre_no_warmup", "norm/pre_no_warmup"),
    Row("pre_warmup", "norm/pre_warmup"),
    Row("post_no_warmup", "norm/post_no_warmup"),
    Row("post_warmup", "norm/post_warmup"),
    Row("post_warmup_no_clip", "norm/post_warmup_no_clip"),
    Row("post_warmup_batch64", "norm/post_warmup_batch64"),
    Row("pre_no_warmup_batch64", "norm/pre_no_warmup_batch64"),
    Row("pre_warmup_batch64", "norm/pre_warmup_batch64"),
)


@table("norm_warmup", shown=("run", "norm", "warmup_steps", "batch", "held_out_ppl", "best_held_out_ppl", "outcome"), place=150, runs=runs_of(NORM_WARMUP), figure_reads={"tokens": "tokens.json"})
def norm_warmup(inputs) -> pd.DataFrame:
    rows = []
    for row, paths, runs in trained_rows(NORM_WARMUP, inputs):
        final = [math.nan if r["final_loss"] is None else r["final_loss"] for r in runs]
        # these models overfit within their 1000 steps: the lowest held-out perplexity on the way is a reading
        # of its own (issue 71: at batch 64 it sits where batch 32 ends)
        best = [float(evals_of(p)["held_out_ppl_128"].min()) for p in paths]
        rows.append({"run": row.name, **run_settings(paths[0]), **run_columns(runs),
                     **seed_columns("best_held_out_ppl", best),
                     **seed_columns("final_train_loss", final), "outcome": outcome(runs)})
    return pd.DataFrame(rows)


def run_label(row: pd.Series, first: pd.Series) -> str:
    """'post-norm, warmup 200', and any setting where the row departs from the first (the chapter's
    four rows share theirs; the others each drop one of our details)."""
    label = f"{row['norm']}-norm, " + (f"warmup {row['warmup_steps']}" if row["warmup_steps"] else "no warmup")
    return label + "".join(f", {name} {row[column]}" for column, name in (("grad_clip", "clip"), ("batch", "batch"))
                           if str(row[column]) != str(first[column]))


def warmup_finding(df: pd.DataFrame) -> str:
    """The title: the chapter's four runs' held-out perplexity after training, ours (the chapter's are
    the diamonds); a run that diverged has none."""
    ppl = df.set_index("run")["held_out_ppl"]

    def ours(run: str) -> str:
        return f"{ppl[run]:.2f}" if math.isfinite(ppl[run]) else "diverged"

    return (f"Held-out perplexity after training: post-norm {ours('post_no_warmup')} without warmup, "
            f"{ours('post_warmup')} with; pre-norm {ours('pre_no_warmup')} without, {ours('pre_warmup')} with")


@figure("norm_warmup")
def norm_warmup_figure(inputs, context):
    """Training loss per step (mean over seeds; an x where a seed diverged) beside the final
    held-out perplexity of each run, against a model that ignores its input (unigram)."""
    df = pd.read_csv(inputs["table"][0])
    fig, (curves, bars) = plt.subplots(1, 2, figsize=(7.5, 5.2), width_ratios=(1, 1.1))
    unigram = json.loads(Path(inputs["tokens"][0]).read_text())["train_unigram_entropy"]  # the cache's record
    labels = [run_label(row, df.iloc[0]) for _, row in df.iterrows()]
    for i, (row, label) in enumerate(zip(df.itertuples(), labels)):
        curve = curve_of(inputs[row.run])
        curves.plot(curve["step"], curve["loss"], ls="-" if row.warmup_steps else "--", lw=1.3, markevery=0.1,
                    ms=5, label=label, **style.series(i))
        for path, run in zip(inputs[row.run], load_runs(inputs[row.run])):
            if run["diverged"]:
                end = pd.read_csv(Path(path).with_name("curve.csv")).iloc[-1]
                curves.plot(end["step"], end["loss"], "x", color=style.series(i)["color"], ms=9, mew=2,
                            label="a seed diverged")
    curves.axhline(unigram, color="0.4", ls=":", lw=1.2, label="unigram: train-token frequencies, no context")
    curves.set(xlabel="step", ylabel="training loss (nats, smoothed, mean over seeds)")
    style.hbars(bars, labels, df["held_out_ppl"], [style.series(i)["color"] for i in range(len(df))],
                context.of("held_out_ppl"), xerr=style.spread(df, "held_out_ppl"), names_above=True)
    bars.axvline(math.exp(unigram), color="0.4", ls=":", lw=1.2)
    bars.set_xlabel("held-out perplexity after training (lower is better, log scale)")
    first = df.iloc[0]
    style.headline(fig, warmup_finding(df), context.profile,
                   style.steps_note(df["steps"]), style.seeds_note(pd.to_numeric(df["seeds"], errors="coerce")),
                   f"{first['n_blocks']} blocks, lr {first['lr']:g}, {first['schedule']} schedule, "
                   f"clip {first['grad_clip']}, batch {first['batch']}")
    style.legend_below(fig)
    return fig
