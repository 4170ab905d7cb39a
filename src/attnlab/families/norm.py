"""The norm family: pre-norm vs post-norm in twelve-block models (norm_grad_init, norm_warmup)."""

import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from attnlab.data import load_tokens
from attnlab.families import Row, present
from attnlab.plots import curve_of, evals_of, figure, smooth
from attnlab.runs import load_runs, run_config
from attnlab.tables import run_columns, seed_columns, table

NORM_STYLE = {"pre": "tab:blue", "post": "tab:red"}


@table("norm_grad_init")
def norm_grad_init(inputs) -> pd.DataFrame:
    """One row per parameter group and norm placement: gradient norm of blocks 1..12 and
    last/first (the ratio per seed, then averaged), mean ± std over seeds."""
    raw = pd.read_csv(inputs["grad_norms"][0])
    rows = []
    for (group, norm), cell in raw.groupby(["parameters", "norm"], sort=False):
        per_seed = cell.pivot(index="seed", columns="block", values="grad_norm")
        row = {"parameters": group, "norm": norm, "seeds": len(per_seed)}
        for block in per_seed.columns:
            row.update(seed_columns(f"block_{block}", per_seed[block].tolist()))
        row.update(seed_columns("ratio_last_first", (per_seed[per_seed.columns[-1]] / per_seed[per_seed.columns[0]]).tolist()))
        rows.append(row)
    return pd.DataFrame(rows)


@figure("norm_grad_init")
def norm_grad_init_figure(inputs):
    """Per-block gradient norm, pre vs post, one panel per parameter group."""
    raw = pd.read_csv(inputs["grad_norms"][0])
    groups = list(dict.fromkeys(raw["parameters"]))
    fig, axes = plt.subplots(1, len(groups), figsize=(5 * len(groups), 3.8), squeeze=False)
    for ax, group in zip(axes[0], groups):
        for norm, cell in raw[raw["parameters"] == group].groupby("norm", sort=False):
            stats = cell.groupby("block")["grad_norm"].agg(["mean", "std", "count"])
            ax.errorbar(stats.index, stats["mean"], yerr=stats["std"].fillna(0), marker="o", ms=3, capsize=2,
                        color=NORM_STYLE.get(norm), label=f"{norm}-norm")
        ax.set_xlabel("block")
        ax.set_ylabel("gradient norm")
        ax.set_xticks(range(1, int(raw["block"].max()) + 1))
        ax.set_ylim(bottom=0)
        ax.set_title(f"parameters: {group} ({int(stats['count'].iloc[0])} seeds, mean ± std)")
        ax.legend()
    fig.suptitle("gradient norm per block at initialisation (one batch, one backward, no step)")
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
)


@table("norm_warmup")
def norm_warmup(inputs) -> pd.DataFrame:
    rows = []
    for name in (row.name for row in present(NORM_WARMUP, inputs)):
        paths = inputs[name]
        runs = load_runs(paths)
        final = [math.nan if r["final_loss"] is None else r["final_loss"] for r in runs]
        rows.append({"run": name, **run_settings(paths[0]), **run_columns(runs),
                     **seed_columns("final_train_loss", final), "outcome": outcome(runs)})
    return pd.DataFrame(rows)


def unigram_entropy(tokens: torch.Tensor) -> float:
    """Cross-entropy (nats) of predicting every token by the split's own token frequencies:
    the loss of a model that ignores its input, where a collapsed run sits."""
    p = torch.bincount(tokens).double() / len(tokens)
    p = p[p > 0]
    return float(-(p * p.log()).sum())


@figure("norm_warmup")
def norm_warmup_figure(inputs):
    """Training loss per step and held-out loss at every evaluation, one line per run (a diverged
    run ends with an x at its step); the gap between the panels is overfitting."""
    df = pd.read_csv(inputs["table"][0])
    fig, (train_ax, held_ax) = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    train_tokens, _, _ = load_tokens(Path(inputs["tokens"][0]).parent)
    for ax in (train_ax, held_ax):
        ax.axhline(unigram_entropy(train_tokens), color="grey", ls=":", lw=1,
                   label="unigram (token frequencies, no context)")
    chosen = df.iloc[0]  # the settings of the chapter's first row
    for _, row in df.iterrows():
        metrics = inputs[row["run"]][0]
        curve, evals = curve_of(metrics), evals_of(metrics)
        # the chapter's rows: solid with warmup, dashed without; a row that drops one of our details: its own
        style = ("--" if not row["warmup_steps"] else ":" if str(row["grad_clip"]) != str(chosen["grad_clip"])
                 else "-." if row["batch"] != chosen["batch"] else "-")
        label = f"{row['norm']}-norm, warmup {row['warmup_steps']}, clip {row['grad_clip']}, batch {row['batch']}"
        label += f" (held-out ppl {row['held_out_ppl']:.1f})" if np.isfinite(row["held_out_ppl"]) else f" ({row['outcome']})"
        color = NORM_STYLE.get(row["norm"])
        train_ax.plot(curve["step"], smooth(curve["loss"]), style, color=color, lw=1.2)
        held_column = [c for c in evals.columns if c.startswith("held_out_ppl_")][0]
        held_ax.plot(evals["step"], np.log(evals[held_column]), style, marker="o", ms=3, color=color, lw=1.2, label=label)
        if row["outcome"] != "trained":
            train_ax.plot(curve["step"].iloc[-1], curve["loss"].iloc[-1], "x", color=color, ms=8)
    train_ax.set(xlabel="step", ylabel="loss (nats)", title="training loss (smoothed)")
    held_ax.set(xlabel="step", title="held-out loss = ln(perplexity), every evaluation", ylim=(None, 7.5))
    fig.suptitle(f"twelve blocks, lr {df['lr'].iloc[0]:g}, schedule {df['schedule'].iloc[0]}")
    held_ax.legend(fontsize=7)
    return fig
