"""The sqrt(d_k) family: why attention scores are divided (the chapter's sqrt(d_k) section: score_variance,
effective_tokens, softmax_saturation, scale_training, score_runaway), and the runs of the learning-rate sweep
over its numbers (sqrt_dk_sweep; the analysis: attnlab.claims.lr_sweep)."""

import json
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from attnlab import style
from attnlab.plots import figure
from attnlab.runs import ONEHOT_WEIGHT, evals_of, load_runs, run_config
from attnlab.tables import for_people, held_out, provenance, run_columns, seed_columns, table, transposed

VARIANTS = ("divided", "undivided")
SERIES = {variant: style.series(i) for i, variant in enumerate(VARIANTS)}
HATCHES = {"divided": None, "undivided": style.HATCH}
CLAIMS = "configs/claims.yaml"  # the chapter's numbers, read by the tables that set theirs beside ours


def _measured(inputs, name: str) -> pd.DataFrame:
    return pd.read_csv(inputs[name][0])


def _meta(inputs) -> dict:
    return json.loads(Path(inputs["meta"][0]).read_text())


# --- random rows --------------------------------------------------------------------------

@table("score_variance", place=60, reads={"pairs": "measure/score_variance/pairs.csv", "meta": "measure/score_variance/meta.json"})
def score_variance(inputs) -> pd.DataFrame:
    df = _measured(inputs, "pairs")
    return df.assign(seed=_meta(inputs)["seed"])[["d", "var", "std", "sqrt_d", "pairs", "seed"]]


@figure("score_variance")
def score_variance_figure(inputs, context):
    df = pd.read_csv(inputs["table"][0])
    fig, ax = plt.subplots(figsize=(7, 4.4))
    ax.plot(df["d"], df["sqrt_d"], color="0.5", lw=1, label="√d")
    ax.plot(df["d"], df["std"], ls="none", ms=7, label="measured std of q·k", **style.series(0))
    printed = context.of("std")
    style.mark_chapter(ax, df["d"][[c.row for c in printed]], [c.value for c in printed])
    ax.set(xscale="log", yscale="log", xlabel="width d (log scale)", ylabel="std of q·k (log scale)")
    ax.set_xticks(df["d"], [str(d) for d in df["d"]])
    ax.set_yticks(df["sqrt_d"], [f"{s:g}" for s in df["sqrt_d"]])
    ax.minorticks_off()
    style.headline(fig, "The dot product of two random d-dimensional vectors has standard deviation √d",
                   context.profile, f"measured: {df['pairs'][0]:,} pairs of N(0, 1) vectors per width",
                   f"seed {df['seed'][0]}")
    style.legend_below(fig)
    return fig


def _per_variant(rows: pd.DataFrame, column: str, how) -> pd.DataFrame:
    """One column per variant: `how` of `column` over each width's rows."""
    return rows.groupby(["d_k", "variant"])[column].agg(how).unstack("variant")[list(VARIANTS)]


ROWS_MEASURED = {"rows": "measure/random_rows/rows.csv", "meta": "measure/random_rows/meta.json"}  # read by the next two


@table("effective_tokens", shown=("d_k", "effective_divided", "effective_undivided", "largest_divided", "largest_undivided",
                                                         "mean_effective_divided", "mean_effective_undivided"), place=70, reads=ROWS_MEASURED)
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
def effective_tokens_figure(inputs, context):
    df = pd.read_csv(inputs["table"][0])
    fig, ax = plt.subplots(figsize=(7, 4.4))
    for variant in VARIANTS:
        ax.plot(df["d_k"], df[f"mean_effective_{variant}"], label=f"{variant}: mean over {df['rows'][0]:,} rows",
                **SERIES[variant])
        ax.plot(df["d_k"], df[f"effective_{variant}"], ls="none", mfc="none", ms=8, mew=1.5,
                label=f"{variant}: one example row", **SERIES[variant])
    printed = context.of("effective_undivided")
    style.mark_chapter(ax, df["d_k"][[c.row for c in printed]], [c.value for c in printed],
                       ["undivided, one row"] * len(printed))
    ax.axhline(df["keys"][0], color="0.5", lw=0.8, ls="--", label=f"all {df['keys'][0]} keys (uniform weights)")
    ax.set(xscale="log", yscale="log", xlabel="head width d_k (log scale)",
           ylabel=f"effective tokens = exp(entropy), of {df['keys'][0]}")
    ax.set_xticks(df["d_k"], [str(d) for d in df["d_k"]])
    ax.minorticks_off()
    ax.set_yticks([1, 2, 4, 8, 16, 32, 64], ["1", "2", "4", "8", "16", "32", "64"])
    style.headline(fig, "Undivided, a fresh head's softmax narrows to about one token as d_k grows", context.profile,
                   f"measured: {df['rows'][0]:,} random rows of {df['keys'][0]} keys per width, N(0, 1)",
                   f"seed {_meta(inputs)['seed']}")
    style.legend_below(fig)
    return fig


@table("softmax_saturation", place=80, reads=ROWS_MEASURED)
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
def softmax_saturation_figure(inputs, context):
    """Left, the distribution of Σ w_i(1-w_i) over the rows of each width (its mean: the table's);
    right, the share of frozen rows. Divided and undivided side by side at each width."""
    df = pd.read_csv(inputs["table"][0])
    rows = _measured(inputs, "rows")
    x = np.arange(len(df))
    fig, (spread_ax, frozen_ax) = plt.subplots(1, 2, figsize=(7.5, 4.6), width_ratios=(1.4, 1))
    for offset, variant in ((-0.2, "divided"), (0.2, "undivided")):
        values = [rows[(rows["d_k"] == d) & (rows["variant"] == variant)]["jacobian_sum"].to_numpy() for d in df["d_k"]]
        parts = spread_ax.violinplot(values, positions=x + offset, widths=0.35, showextrema=False)
        for body in parts["bodies"]:
            body.set(facecolor=SERIES[variant]["color"], edgecolor=SERIES[variant]["color"], alpha=0.35,
                     hatch=HATCHES[variant])
        spread_ax.plot(x + offset, df[f"jacobian_{variant}"], ls="none", ms=6, label=variant, **SERIES[variant])
        frozen_ax.bar(x + offset, df[f"frozen_{variant}"], width=0.4, color=SERIES[variant]["color"],
                      hatch=HATCHES[variant], edgecolor="white", label=variant)
    printed = context.of("jacobian_divided")
    style.mark_chapter(spread_ax, x[[c.row for c in printed]] - 0.2, [c.value for c in printed])
    printed = context.of("frozen_undivided")
    style.mark_chapter(frozen_ax, x[[c.row for c in printed]] + 0.2, [c.value for c in printed])
    for ax in (spread_ax, frozen_ax):
        ax.set_xticks(x, [str(d) for d in df["d_k"]])
        ax.set_xlabel("head width d_k")
        ax.grid(axis="x", visible=False)
    spread_ax.set(title="the softmax's gradient:\nevery row (shape) and their mean (marker)",
                  ylabel=r"$\sum_i w_i(1-w_i)$ per row", ylim=(0, 1))
    frozen_ax.set(title=f"rows frozen:\nlargest w(1−w) below {df['frozen_below'][0]:g}", ylabel="share of rows",
                  ylim=(0, 1))
    style.headline(fig, "Undivided, the softmax saturates as d_k grows: its gradient dies and rows freeze",
                   context.profile, f"measured: {df['rows'][0]:,} random rows of 64 keys per width, N(0, 1)",
                   f"seed {_meta(inputs)['seed']}")
    style.legend_below(fig)
    return fig


# --- training with and without the division -------------------------------------------------

@dataclass(frozen=True)
class ScaleRow:
    """A scale_training row: the same model trained with and without the division, by the
    experiments scale/<name>_divided and scale/<name>_undivided (or another divided one)."""

    name: str
    divided_experiment: str = ""

    @property
    def divided(self) -> str:
        return self.divided_experiment or f"scale/{self.name}_divided"

    @property
    def undivided(self) -> str:
        return f"scale/{self.name}_undivided"

    def runs(self) -> dict[str, str]:
        return dict(zip(VARIANTS, (self.divided, self.undivided)))


# The rows of scale_training; the d_k = 32 divided run is the ladder's full block. Its inputs are
# named by experiment. score_runaway reads the d_k = 1024 pair, its inputs named by variant.
SCALE_TRAINING = (ScaleRow("shared_d32", divided_experiment="ladder/block"),
                  *map(ScaleRow, ("shared_d128", "short_d128", "short_d256", "short_d1024")))
SCORE_RUNAWAY = SCALE_TRAINING[-1]


@table("scale_training", shown=("d_k", "heads", "budget", "divided", "undivided", "difference", "seeds"), place=90, runs={e: e for row in SCALE_TRAINING for e in row.runs().values()})
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
            **provenance(runs["divided"] + runs["undivided"]),  # both variants' runs: each counted once
        })
    return pd.DataFrame(out)


@figure("scale_training")
def scale_training_figure(inputs, context):
    """Held-out perplexity with and without the division (left) and what dropping it costs (right)."""
    df = pd.read_csv(inputs["table"][0])
    labels = [f"d_k = {d}\n" + budget.replace(" × ", "\n× ") for d, budget in zip(df["d_k"], df["budget"])]
    x = np.arange(len(df))
    fig, (ppl_ax, cost_ax) = plt.subplots(1, 2, figsize=(9, 4.8))
    for offset, variant in ((-0.2, "divided"), (0.2, "undivided")):
        ppl_ax.bar(x + offset, df[variant], width=0.4, yerr=style.spread(df, variant), capsize=2,
                   color=SERIES[variant]["color"], hatch=HATCHES[variant], edgecolor="white", label=variant)
    ppl_ax.set(ylabel="held-out perplexity (lower is better)")
    cost_ax.axhline(0, color="0.4", lw=1)
    cost_ax.errorbar(x, df["difference"], yerr=style.spread(df, "difference"), ls="none", ms=7, capsize=3,
                     label="cost: undivided − divided", **style.series(2))
    printed = context.of("difference")
    style.mark_chapter(cost_ax, x[[c.row for c in printed]], [c.value for c in printed])
    cost_ax.set(ylabel="perplexity points lost without 1/√d_k")
    for ax in (ppl_ax, cost_ax):
        ax.set_xticks(x, labels, fontsize=8)
        ax.grid(axis="x", visible=False)
    # two rows share d_k = 128: the shorter budget is named
    costs = " · ".join(f"{d_k}{' short' if steps < df['steps'].max() else ''}: {diff:+.1f}"
                       for d_k, steps, diff in zip(df["d_k"], df["steps"], df["difference"]))
    style.headline(fig, f"Held-out perplexity lost without 1/√d_k, by d_k (mean over seeds): {costs}",
                   context.profile, style.steps_note(df["steps"]), style.seeds_note(pd.to_numeric(df["seeds"], errors="coerce")),
                   "budgets: the chapter's, scaled by the profile")
    style.legend_below(fig)
    return fig


# --- the runaway of the undivided head ---------------------------------------------------------

@table("score_runaway", view=transposed("variant", {
    "score_std_init": "score std at initialisation", "score_std_final": "score std after training",
    "entropy_final": "attention entropy after training (nats)",
    "onehot_share_final": f"share of rows with more than {ONEHOT_WEIGHT} on one token", "held_out_ppl": "held-out perplexity"}),
    place=100, reads=lambda jobs, variant: {name: jobs.run_metrics(run, variant)
                                                                 for name, run in SCORE_RUNAWAY.runs().items()})
def score_runaway(inputs) -> pd.DataFrame:
    out = []
    for label in (v for v in VARIANTS if inputs.get(v)):  # a sweep's rate may have trained one head only
        paths = inputs[label]
        evals = [evals_of(p) for p in paths]
        first, last = [e.iloc[0] for e in evals], [e.iloc[-1] for e in evals]
        out.append({
            "variant": label,
            **seed_columns("score_std_init", [e["block1_score_std"] for e in first]),
            **seed_columns("score_std_final", [e["block1_score_std"] for e in last]),
            **seed_columns("entropy_init", [e["block1_entropy"] for e in first]),
            **seed_columns("entropy_final", [e["block1_entropy"] for e in last]),
            **seed_columns("onehot_share_init", [e["block1_onehot_share"] for e in first]),
            **seed_columns("onehot_share_final", [e["block1_onehot_share"] for e in last]),
            **run_columns(load_runs(paths)),
        })
    return pd.DataFrame(out)


# score_runaway's panels: the evals.csv column each plots, and its axis
RUNAWAY_PANELS = (("score_std", "std of attention scores (log scale)"),
                  ("entropy", "mean attention entropy (nats)"),
                  ("onehot_share", f"share of rows with > {ONEHOT_WEIGHT} on one token"))


def runaway_finding(df: pd.DataFrame) -> str:
    """The title: what block 1's head does in training, undivided (divided beside it), in the table's
    numbers — from the first evaluation to the last; the chapter's values are the markers."""
    undivided, divided = (df.set_index("variant").loc[v] for v in ("undivided", "divided"))
    return (f"In training, the undivided head's score std goes {undivided['score_std_init']:.4g} → "
            f"{undivided['score_std_final']:.4g} (divided: {divided['score_std_init']:.3g} → "
            f"{divided['score_std_final']:.3g}), its entropy {undivided['entropy_init']:.3g} → "
            f"{undivided['entropy_final']:.3g} nats; {100 * undivided['onehot_share_final']:.1f} % of its rows "
            f"end with > {ONEHOT_WEIGHT} on one token")


@figure("score_runaway")
def score_runaway_figure(inputs, context):
    """Block 1's score std, attention entropy and one-hot share at every evaluation, both variants
    (mean over seeds, a band of ± std with several); the chapter's values at the first (`_init`)
    and last (`_final`) evaluation."""
    df = pd.read_csv(inputs["table"][0])
    fig, axes = plt.subplots(1, len(RUNAWAY_PANELS), figsize=(7.5, 4.6))
    for variant in VARIANTS:
        evals = pd.concat([evals_of(p) for p in inputs[variant]])
        for ax, (name, _) in zip(axes, RUNAWAY_PANELS):
            per_step = evals.groupby("step")[f"block1_{name}"].agg(["mean", "std"])
            ax.plot(per_step.index, per_step["mean"], ms=4, label=variant, **SERIES[variant])
            if len(inputs[variant]) > 1:
                ax.fill_between(per_step.index, per_step["mean"] - per_step["std"], per_step["mean"] + per_step["std"],
                                color=SERIES[variant]["color"], alpha=0.2, lw=0)
    steps = evals["step"]
    for ax, (name, label) in zip(axes, RUNAWAY_PANELS):
        printed = [c for c in context.chapter if c.column in (f"{name}_init", f"{name}_final")]
        style.mark_chapter(ax, [steps.min() if c.column.endswith("_init") else steps.max() for c in printed],
                           [c.value for c in printed], [df.at[c.row, "variant"] for c in printed])
        ax.set(xlabel="step", ylabel=label)
    axes[0].set_yscale("log")
    axes[1].set_ylim(bottom=0)
    axes[2].set_ylim(0, 1.05)
    style.headline(fig, runaway_finding(df), context.profile, style.steps_note(df["steps"]),
                   style.seeds_note(pd.to_numeric(df["seeds"], errors="coerce")), "d_k = 1024, one head; block 1 on fixed held-out windows")
    style.legend_below(fig)
    return fig


# --- the sqrt(d_k) sweep: one learning rate for every sqrt(d_k) number of the chapter, or none -------------
# (the analysis: attnlab.claims.lr_sweep; here, its runs and this family's tables at one rate)

# Every run behind the chapter's sqrt(d_k) numbers, at each learning rate tried: the published runs at the
# stated 1e-3, the runaway hypotheses (undivided d_k = 1024) and the sweep's runs of the other three heads.
# Each run's head (d_k, divided or not) and rate are read from its config.
SQRT_DK_RUNS = ("scale/short_d1024_divided", "scale/short_d1024_undivided", "scale/short_d256_divided",
                "scale/short_d256_undivided",
                *(f"scale/runaway_lr{rate}" for rate in ("3e3", "5e3", "6e3", "1e2")),
                *(f"scale/sweep_d{d_k}_{variant}_lr{rate}" for rate in ("3e3", "6e3")
                  for d_k, variant in ((1024, "divided"), (256, "divided"), (256, "undivided"))),
                "scale/sweep_d1024_divided_lr5e3", "scale/sweep_d1024_divided_lr4e3",
                "scale/sweep_d1024_undivided_lr4e3")
SWEEP_RUNS = tuple(r for r in SQRT_DK_RUNS if "/sweep_" in r)  # trained only as far as seeds_per_run names them


def sweep_runs(inputs) -> dict[tuple[int, str, float], list[str]]:
    """(d_k, divided or undivided, lr) -> the metrics.json of each seed of the run there."""
    out = {}
    for run in SQRT_DK_RUNS:
        paths = inputs.get(run, [])
        if paths:
            cfg = run_config(paths[0])
            key = (cfg["model"]["d_head"], VARIANTS[not cfg["model"]["scale_scores"]], float(cfg["train"]["lr"]))
            out[key] = list(paths)
    return out


def head_width(row: ScaleRow) -> int:
    """A scale_training row's d_k, as its name says (short_d1024)."""
    return int(row.name.rsplit("_d", 1)[1])


def rate_tables(runs: dict, lr: float) -> dict:
    """score_runaway and scale_training as their builders make them from the runs at one learning rate (the rows
    whose runs were trained there)."""
    heads = {(d_k, variant): paths for (d_k, variant, rate), paths in runs.items() if rate == lr}
    tables = {}
    runaway = {variant: paths for (d_k, variant), paths in heads.items() if d_k == head_width(SCORE_RUNAWAY)}
    if runaway:
        tables["score_runaway"] = score_runaway(runaway)
    training = {}
    for row in SCALE_TRAINING:
        d_k = head_width(row)
        if all((d_k, variant) in heads for variant in VARIANTS):
            training.update({experiment: heads[d_k, variant] for variant, experiment in row.runs().items()})
    if training:
        tables["scale_training"] = scale_training(training)
    return tables


def sweep_inputs(jobs, variant: bool) -> dict:
    """The claims (the chapter's numbers and the ledger's tolerances) and the seeds the sweep reads of each run:
    a published row's, a hypothesis's, or (a sweep run) the seeds seeds_per_run names, none by default: the
    sweep's runs are trained apart and landed with their keys."""
    from attnlab.families.contradictions import hypothesis_of

    rows = set(SCORE_RUNAWAY.runs().values()) | {"scale/short_d256_divided", "scale/short_d256_undivided"}

    def seeds(run: str) -> list[int]:
        if run in SWEEP_RUNS:
            return jobs.seeds_of(run, base=0)
        if run in rows:
            return jobs.seeds_of(run)
        return jobs.seeds_of(run, base=hypothesis_of(run).seeds_under(jobs.profile_config.seeds))

    return {"claims": [CLAIMS], **{run: [jobs.train_step(run, seed).outputs[0] for seed in seeds(run)]
                                                   for run in SQRT_DK_RUNS}}


def rates_read(df: pd.DataFrame, chapter: dict) -> pd.DataFrame:
    """The reader's view of sqrt_dk_sweep: each number, the chapter's, and at each rate where one run of ours lands
    and whether the chapter's fits there (the ledger's word, the interval's detail, the bands and the plans: the
    provenance view); the last row's answer in its first cell."""
    rates = [c for c in df.columns if c.startswith("at_")]
    shown, _ = for_people(df[["number", "chapter", *rates]], shared_columns=())
    cut = {r"(fits|misses): [^;]*?\((\d+) seeds\)": r"\1, \2 seeds",  # the ledger's word and why: the provenance
           r" \(one-hot share [^)]*\)": ""}                               # the shares behind a head's state
    for pattern, by in cut.items():
        shown[rates] = shown[rates].replace(pattern, by, regex=True)
    answer = df["finding"].notna() & (df["finding"].astype(str) != "")
    shown.loc[answer, "number"] = [f"{n}: {f}" for n, f in zip(df.loc[answer, "number"], df.loc[answer, "finding"])]
    return shown


@table("sqrt_dk_sweep", view=rates_read, place=280, reads=sweep_inputs, code_files=(CLAIMS,))
def sqrt_dk_sweep(inputs) -> pd.DataFrame:
    from attnlab.claims.lr_sweep import sweep_rows
    from attnlab.claims.rules import load_claims

    claims = {c["id"]: c for c in load_claims(inputs["claims"][0])}
    runs = sweep_runs(inputs)
    rows = sweep_rows(claims, runs, lambda lr: rate_tables(runs, lr), head_width(SCORE_RUNAWAY))
    paths = [p for paths in runs.values() for p in paths]
    prov = provenance(load_runs(paths)) if paths else {}
    return pd.DataFrame([{**r, **prov} for r in rows])


# --- what sqrt(d_k) does under Adam: its two halves apart ---------------------------------------------------
# Under AdamW, dividing the scores by s = sqrt(d_k) equals the undivided head with W_q, W_k initialised s^(1/2)
# smaller and stepped s^(1/2) slower (tests/test_adam_equivalence.py). Each half alone, beside neither (the
# undivided head) and both (the divided head), says which one carries the division's benefit: the chapter's
# explanation, saturation at initialisation, is the first half.
ADAM_ARMS = (("neither", "scale/short_d1024_undivided"), ("initialisation only", "scale/adam_qk_init"),
             ("rate only", "scale/adam_qk_lr"), ("both", "scale/short_d1024_divided"))
ADAM_SWEPT = ("scale/adam_qk_init", "scale/adam_qk_lr")  # trained only as far as seeds_per_run names them


def adam_inputs(jobs, variant: bool) -> dict:
    return {arm: jobs.run_metrics(run, variant) if run not in ADAM_SWEPT
            else [jobs.train_step(run, seed).outputs[0] for seed in jobs.seeds_of(run, base=0)]
            for arm, run in ADAM_ARMS}


@table("sqrt_dk_adam", shown=("arm", "qk_init_scale", "qk_lr_scale", "score_std_final", "onehot_share_final", "held_out_ppl",
                                                    "gap_closed", "seeds"), place=285, reads=adam_inputs)
def sqrt_dk_adam(inputs) -> pd.DataFrame:
    """Per arm: its two settings, block 1's score std at initialisation and at the end, its one-hot share at the
    end, held-out perplexity, and the share of the undivided head's perplexity gap to the divided head it closes
    (seed means)."""
    rows = []
    for arm, _ in ADAM_ARMS:
        paths = inputs.get(arm) or []
        if not paths:
            continue
        cfg = run_config(paths[0])
        evals = [evals_of(p) for p in paths]
        rows.append({"arm": arm, "scores_divided": bool(cfg["model"]["scale_scores"]),
                     "qk_init_scale": float(cfg["model"].get("qk_init_scale", 1.0)),
                     "qk_lr_scale": float(cfg["train"].get("qk_lr_scale", 1.0)),
                     **seed_columns("score_std_init", [e["block1_score_std"].iloc[0] for e in evals]),
                     **seed_columns("score_std_final", [e["block1_score_std"].iloc[-1] for e in evals]),
                     **seed_columns("onehot_share_final", [e["block1_onehot_share"].iloc[-1] for e in evals]),
                     **run_columns(load_runs(paths))})
    df = pd.DataFrame(rows)
    ends = df.set_index("arm")["held_out_ppl"] if len(df) else pd.Series(dtype=float)
    if {"neither", "both"} <= set(ends.index):
        df.insert(df.columns.get_loc("held_out_ppl") + 1, "gap_closed",
                  [(ends["neither"] - ppl) / (ends["neither"] - ends["both"]) for ppl in df["held_out_ppl"]])
    return df


# --- where the collapsed heads point: block 1's largest weight per row, on the run's own weights ----------------
# (attnlab.measure.head_readings, one record beside each run and seed the profile names in measure.head_readings)
TOWARD = {"itself": "at itself", "previous": "at the previous token", "first": "at the first token",
          "elsewhere": "elsewhere", "no one-hot row": "nowhere"}  # where a head points, in words


def locked_heads_inputs(jobs, variant: bool) -> dict:
    return {"measured": jobs.head_readings()}


def lacks(cfg: dict) -> list[str]:
    """What a measured model lacks of the block ('no LayerNorm', 'no MLP'), in words."""
    return [*(["no LayerNorm"] if cfg["model"]["norm"] == "none" else []), *([] if cfg["model"]["mlp"] else ["no MLP"])]


def points_at(shares: dict) -> str:
    """Where most of a head's one-hot rows put their weight, with that share: 'itself (99.5 %)'."""
    known = {t: s for t, s in shares.items() if s is not None}
    if not known:
        return "no one-hot row"
    target = max(known, key=known.get)
    return f"{target} ({100 * known[target]:.1f} %)"


@table("locked_heads", shown=("head", "kind", "onehot_share", "points_at", "held_out_ppl", "forced_ppl"), place=282,
       reads=locked_heads_inputs)
def locked_heads(inputs) -> pd.DataFrame:
    """Per run and seed: the head (divided or not, its rate), its kind of collapse (from the measured model's own
    evaluations; the published run's beside it), the measured model's held-out perplexity beside the published
    run's, its one-hot share, and where the largest weight of its one-hot rows sits (shares of those rows; over all
    rows in *_all_rows; points_at: the most); for elsewhere, the median distance back and the tokens read there most;
    the held-out perplexity with the head forced one-hot onto the target it points at (forced_ppl; onto each target
    in forced_<target>_ppl)."""
    from attnlab.claims.lr_sweep import collapse_kind

    rows = []
    for path in inputs["measured"]:
        m = json.loads(Path(path).read_text())
        metrics = Path(path).parent / "metrics.json"
        cfg = run_config(metrics)
        elsewhere, target = m["elsewhere_onehot"], points_at(m["onehot_rows"]).split(" (")[0]
        # the kind of the model measured, from its own evaluations (a retrained run's may differ from the published)
        variant, kind = VARIANTS[not cfg["model"]["scale_scores"]], collapse_kind(pd.DataFrame(m["evals"]))
        rows.append({
            "head": ", ".join([variant, f"lr {cfg['train']['lr']:.0e}".replace("e-0", "e-"), *lacks(cfg), f"seed {m['seed']}"]),
            "run": m["run"], "seed": m["seed"], "d_k": cfg["model"]["d_head"], "kind": kind,
            "group": f"{variant}, {kind}", "published_kind": collapse_kind(evals_of(metrics)),
            "held_out_ppl": m["held_out_ppl"], "published_held_out_ppl": m["published_held_out_ppl"],
            "same_as_published": m["held_out_ppl"] == m["published_held_out_ppl"],
            "model": m["model"], "onehot_share": m["onehot_share"],
            **m["onehot_rows"], **{f"{t}_all_rows": s for t, s in m["all_rows"].items()},
            "points_at": points_at(m["onehot_rows"]), "target": target, "toward": TOWARD[target],
            "forced_ppl": m["forced_held_out_ppl"].get(target),
            **{f"forced_{t}_ppl": ppl for t, ppl in m["forced_held_out_ppl"].items()},
            "elsewhere_median_back": elsewhere["median_back"],
            "elsewhere_tokens": "; ".join(f"{t['token']!r} {100 * t['share']:.1f} %" for t in elsewhere["top_tokens"]),
            "windows": m["windows"], "commit": m["commit"], "measured_at": m["measured_at"],
            "device": m["device_name"]})
    return pd.DataFrame(rows)


# --- what the chapter's 5,147 measures: the undivided head's scores at the chapter's rate, read several ways, in
# the block and in two smaller models (no LayerNorm; no LayerNorm and no MLP) -------------------------------------
SCORES_READ = (SCORE_RUNAWAY.undivided, "scale/runaway_no_norm", "scale/runaway_head_alone")
NEAR = 0.10  # a reading this close to the chapter's number (as a share of it) would be trained on two more seeds
READINGS = {"published": "the run's own, at its last evaluation (evals.csv)",
            "runs_reading": "the run's reading, on the measured model",
            "row_0_included": "with row 0 (one token: one-hot by construction)",
            "unmasked": "the whole matrix, before the causal mask",
            "largest_abs": "the largest absolute score",
            "training_batch": "on a training batch"}


def score_readings_inputs(jobs, variant: bool) -> dict:
    return {"claims": [CLAIMS], "measured": [p for p in jobs.head_readings()
                                                  if any(f"/runs/{run}/" in p for run in SCORES_READ)]}


def model_label(cfg: dict, seed: int) -> str:
    """A measured model by what it holds: 'block, seed 3', 'no LayerNorm, no MLP, seed 0'."""
    return ", ".join([*(lacks(cfg) or ["block"]), f"seed {seed}"])


def readings_read(df: pd.DataFrame, chapter: dict) -> pd.DataFrame:
    """The reader's view of score_readings: each reading, the chapter's number and each model's (the log gap that
    picks the closest and whether it is near stay in the CSV)."""
    return for_people(df.drop(columns=["closest_log_gap", "near", "closest_near"]), shared_columns=())[0]


@table("score_readings", view=readings_read, place=281, reads=score_readings_inputs, code_files=(CLAIMS,))
def score_readings(inputs) -> pd.DataFrame:
    """Per reading of block 1's scores (READINGS): the chapter's final score std beside each measured model's value
    (score_runaway's undivided head and the smaller models of SCORES_READ), and the model closest to the chapter's
    number on the log scale with its ratio to it."""
    from attnlab.claims.rules import load_claims

    chapter = {c["id"]: c for c in load_claims(inputs["claims"][0])}["score_runaway.final_std"]["chapter"]
    models = {}
    for path in inputs["measured"]:
        m = json.loads(Path(path).read_text())
        values = {"published": m["published_score_std"], **m["scores"]}
        models[model_label(run_config(Path(path).parent / "metrics.json"), m["seed"])] = values
    rows = []
    for name, text in READINGS.items():
        ours = {label: v[name] for label, v in models.items() if v[name] is not None}
        closest = min(ours, key=lambda label: abs(np.log(ours[label] / chapter)), default=None)
        ratio = ours[closest] / chapter if closest else None
        rows.append({"reading": text, "chapter": chapter, **ours, "closest": closest, "closest_ratio": ratio,
                     "closest_log_gap": abs(np.log(ratio)) if closest else None, "near": NEAR,
                     "closest_near": bool(closest) and abs(ratio - 1) <= NEAR})
    return pd.DataFrame(rows)
