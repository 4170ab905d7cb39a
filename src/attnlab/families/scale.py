"""The sqrt(d_k) family: why attention scores are divided (TABLES.md: score_variance,
effective_tokens, softmax_saturation, scale_training, score_runaway)."""

import json
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from attnlab.plots import evals_of, figure
from attnlab.runs import load_runs, run_config
from attnlab.tables import held_out, run_columns, seed_columns, table

VARIANTS = ("divided", "undivided")
COLORS = {"divided": "tab:blue", "undivided": "tab:red"}


def _measured(inputs, name: str) -> pd.DataFrame:
    return pd.read_csv(inputs[name][0])


def _meta(inputs) -> dict:
    return json.loads(Path(inputs["meta"][0]).read_text())


# --- random rows --------------------------------------------------------------------------

@table("score_variance")
def score_variance(inputs) -> pd.DataFrame:
    df = _measured(inputs, "pairs")
    return df.assign(seed=_meta(inputs)["seed"])[["d", "var", "std", "sqrt_d", "pairs", "seed"]]


@figure("score_variance")
def score_variance_figure(inputs):
    df = pd.read_csv(inputs["table"][0])
    fig, ax = plt.subplots(figsize=(4.5, 3.5))
    ax.plot(df["d"], df["sqrt_d"], color="0.6", lw=1, label="√d")
    ax.plot(df["d"], df["std"], "o", color="tab:blue", label=f"measured std of q·k ({df['pairs'][0]:,} pairs)")
    ax.set(xscale="log", yscale="log", xlabel="d", ylabel="std of q·k")
    ax.legend()
    return fig


def _per_variant(rows: pd.DataFrame, column: str, how) -> pd.DataFrame:
    """One column per variant: `how` of `column` over each width's rows."""
    return rows.groupby(["d_k", "variant"])[column].agg(how).unstack("variant")[list(VARIANTS)]


@table("effective_tokens")
def effective_tokens(inputs) -> pd.DataFrame:
    rows = _measured(inputs, "rows")
    example = rows[rows["row"] == 0]
    out = pd.DataFrame(index=sorted(rows["d_k"].unique()))
    # the chapter prints one row: its columns get the plain names, the means over all rows `mean_`
    for prefix, source, how in (("", example, "first"), ("mean_", rows, "mean")):
        for column, short in (("effective_tokens", "effective"), ("largest_weight", "largest")):
            per_variant = _per_variant(source, column, how)
            for variant in VARIANTS:
                out[f"{prefix}{short}_{variant}"] = per_variant[variant]
    out["rows"] = rows.groupby("d_k")["row"].nunique()
    out["keys"] = _meta(inputs)["keys"]
    return out.rename_axis("d_k").reset_index()


@figure("effective_tokens")
def effective_tokens_figure(inputs):
    df = pd.read_csv(inputs["table"][0])
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for variant in VARIANTS:
        ax.plot(df["d_k"], df[f"mean_effective_{variant}"], "o-", color=COLORS[variant],
                label=f"{variant}: mean over {df['rows'][0]:,} rows")
        ax.plot(df["d_k"], df[f"effective_{variant}"], "x", color=COLORS[variant], ms=7,
                label=f"{variant}: one example row")
    ax.axhline(df["keys"][0], color="0.6", lw=0.8, ls="--")
    ax.set(xscale="log", yscale="log", xlabel="d_k", ylabel=f"effective tokens (of {df['keys'][0]})")
    ax.set_xticks(df["d_k"], [str(d) for d in df["d_k"]])
    ax.legend(fontsize=7)
    return fig


@table("softmax_saturation")
def softmax_saturation(inputs) -> pd.DataFrame:
    rows = _measured(inputs, "rows")
    out = pd.DataFrame(index=sorted(rows["d_k"].unique()))
    for column, name in (("jacobian_sum", "jacobian"), ("frozen", "frozen")):
        per_variant = _per_variant(rows, column, "mean")
        for variant in VARIANTS:
            out[f"{name}_{variant}"] = per_variant[variant]
    out["frozen_below"] = _meta(inputs)["frozen_below"]
    out["rows"] = rows.groupby("d_k")["row"].nunique()
    return out.rename_axis("d_k").reset_index()


@figure("softmax_saturation")
def softmax_saturation_figure(inputs):
    """The distribution of Σ w_i(1-w_i) over the rows of each width, divided and undivided."""
    rows = _measured(inputs, "rows")
    widths = sorted(rows["d_k"].unique())
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for offset, variant in ((-0.2, "divided"), (0.2, "undivided")):
        values = [rows[(rows["d_k"] == d) & (rows["variant"] == variant)]["jacobian_sum"].to_numpy() for d in widths]
        parts = ax.violinplot(values, positions=np.arange(len(widths)) + offset, widths=0.35, showmedians=True)
        for body in parts["bodies"]:
            body.set_facecolor(COLORS[variant])
            body.set_alpha(0.5)
        for key in ("cbars", "cmins", "cmaxes", "cmedians"):
            parts[key].set_color(COLORS[variant])
        ax.plot([], [], color=COLORS[variant], lw=6, alpha=0.5, label=variant)
    ax.set_xticks(range(len(widths)), [str(d) for d in widths])
    ax.set(xlabel="d_k", ylabel=r"$\sum_i w_i(1-w_i)$ per row", ylim=(0, 1))
    ax.legend(loc="lower left")
    return fig


# --- training with and without the division -------------------------------------------------

@dataclass(frozen=True)
class ScaleRow:
    """A scale_training row: the same model trained with and without the division."""

    name: str
    divided: str    # experiments
    undivided: str

    def runs(self) -> dict[str, str]:
        return dict(zip(VARIANTS, (self.divided, self.undivided)))


# The rows of scale_training; the d_k = 32 divided run is the ladder's full block. Its inputs are
# named by experiment. score_runaway reads the d_k = 1024 pair, its inputs named by variant.
SCALE_TRAINING = (
    ScaleRow("shared_d32", "ladder/block", "scale/shared_d32_undivided"),
    ScaleRow("shared_d128", "scale/shared_d128_divided", "scale/shared_d128_undivided"),
    ScaleRow("short_d128", "scale/short_d128_divided", "scale/short_d128_undivided"),
    ScaleRow("short_d256", "scale/short_d256_divided", "scale/short_d256_undivided"),
    ScaleRow("short_d1024", "scale/short_d1024_divided", "scale/short_d1024_undivided"),
)
SCORE_RUNAWAY = SCALE_TRAINING[-1]


@table("scale_training")
def scale_training(inputs) -> pd.DataFrame:
    out = []
    for row in SCALE_TRAINING:
        variants = {variant: inputs[e] for variant, e in row.runs().items() if e in inputs}
        if len(variants) == 1:
            raise ValueError(f"row {row.name} lacks its {set(VARIANTS) - set(variants)} run")
        if not variants:
            continue
        cfg = run_config(variants["divided"][0])
        model, train = cfg["model"], cfg["train"]
        runs = {v: load_runs(variants[v]) for v in VARIANTS}
        columns = {v: run_columns(runs[v]) for v in VARIANTS}
        ppl = {v: [held_out(r) for r in runs[v]] for v in VARIANTS}
        out.append({
            "d_k": model["d_head"] or model["d_model"] // model["n_heads"], "heads": model["n_heads"],
            "budget": f"{train['steps']} steps × batch {train['batch_size']}",
            "ln_before_qkv": model["attn_input_norm"],
            **seed_columns("divided", ppl["divided"]),
            **seed_columns("undivided", ppl["undivided"]),
            **seed_columns("difference", [u - d for d, u in zip(ppl["divided"], ppl["undivided"])]),
            "params": columns["divided"]["params"], "steps": columns["divided"]["steps"],
            "seeds": columns["divided"]["seeds"],
            "diverged_at": "/".join(columns[v]["diverged_at"] for v in VARIANTS).strip("/"),
            "config_hash": "/".join(columns[v]["config_hash"] for v in VARIANTS),
            "commit": columns["divided"]["commit"],
        })
    return pd.DataFrame(out)


@figure("scale_training")
def scale_training_figure(inputs):
    df = pd.read_csv(inputs["table"][0])
    labels = [f"d_k={d}\n{b.split(' steps')[0]} steps" for d, b in zip(df["d_k"], df["budget"])]
    x = np.arange(len(df))
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for offset, variant in ((-0.2, "divided"), (0.2, "undivided")):
        ax.bar(x + offset, df[variant], width=0.4, color=COLORS[variant], label=variant)
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_ylabel("held-out perplexity")
    ax.legend()
    return fig


# --- the runaway of the undivided head ---------------------------------------------------------

@table("score_runaway")
def score_runaway(inputs) -> pd.DataFrame:
    out = []
    for variant in VARIANTS:
        paths = inputs[variant]
        evals = [evals_of(p) for p in paths]
        first, last = [e.iloc[0] for e in evals], [e.iloc[-1] for e in evals]
        out.append({
            "variant": variant,
            **seed_columns("score_std_init", [e["block1_score_std"] for e in first]),
            **seed_columns("score_std_final", [e["block1_score_std"] for e in last]),
            **seed_columns("entropy_init", [e["block1_entropy"] for e in first]),
            **seed_columns("entropy_final", [e["block1_entropy"] for e in last]),
            **seed_columns("onehot_share_init", [e["block1_onehot_share"] for e in first]),
            **seed_columns("onehot_share_final", [e["block1_onehot_share"] for e in last]),
            **run_columns(load_runs(paths)),
        })
    return pd.DataFrame(out)


@figure("score_runaway")
def score_runaway_figure(inputs):
    """Score std and mean attention entropy at every evaluation (seed 0), both variants."""
    fig, (std_ax, entropy_ax) = plt.subplots(1, 2, figsize=(9, 3.5))
    for variant in VARIANTS:
        evals = evals_of(inputs[variant][0])
        std_ax.plot(evals["step"], evals["block1_score_std"], "o-", ms=3, color=COLORS[variant], label=variant)
        entropy_ax.plot(evals["step"], evals["block1_entropy"], "o-", ms=3, color=COLORS[variant], label=variant)
    std_ax.set(yscale="log", xlabel="step", ylabel="std of attention scores")
    entropy_ax.set(xlabel="step", ylabel="mean attention entropy (nats)", ylim=(0, None))
    std_ax.legend()
    return fig
