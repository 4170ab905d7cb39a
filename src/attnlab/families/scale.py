"""The sqrt(d_k) family: why attention scores are divided (TABLES.md: score_variance,
effective_tokens, softmax_saturation, scale_training, score_runaway)."""

import json
import math
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from attnlab import style
from attnlab.claims.render import show_number
from attnlab.plots import evals_of, figure
from attnlab.runs import load_runs, run_config
from attnlab.tables import held_out, provenance, run_columns, seed_columns, table

VARIANTS = ("divided", "undivided")
SERIES = {variant: style.series(i) for i, variant in enumerate(VARIANTS)}
HATCHES = {"divided": None, "undivided": style.HATCH}


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


@table("effective_tokens", place=70, reads=ROWS_MEASURED)
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
    fig, (spread_ax, frozen_ax) = plt.subplots(1, 2, figsize=(12, 4.4), width_ratios=(1.4, 1))
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
    spread_ax.set(title="the softmax's gradient: every row (shape) and their mean (marker)",
                  ylabel=r"$\sum_i w_i(1-w_i)$ per row", ylim=(0, 1))
    frozen_ax.set(title=f"rows frozen: largest w(1−w) below {df['frozen_below'][0]:g}", ylabel="share of rows",
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


@table("scale_training", place=90, runs={e: e for row in SCALE_TRAINING for e in row.runs().values()})
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
            **provenance(runs["divided"]),
        })
    return pd.DataFrame(out)


@figure("scale_training")
def scale_training_figure(inputs, context):
    """Held-out perplexity with and without the division (left) and what dropping it costs (right)."""
    df = pd.read_csv(inputs["table"][0])
    labels = [f"d_k = {d}\n" + budget.replace(" × ", "\n× ") for d, budget in zip(df["d_k"], df["budget"])]
    x = np.arange(len(df))
    fig, (ppl_ax, cost_ax) = plt.subplots(1, 2, figsize=(12, 4.6))
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

@table("score_runaway", place=100, reads=lambda jobs, variant: {name: jobs.run_metrics(run, variant)
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
                  ("onehot_share", "share of rows with > 0.99 on one token"))


def runaway_finding(df: pd.DataFrame) -> str:
    """The title: what block 1's head does in training, undivided (divided beside it), in the table's
    numbers — from the first evaluation to the last; the chapter's values are the markers."""
    undivided, divided = (df.set_index("variant").loc[v] for v in ("undivided", "divided"))
    return (f"In training, the undivided head's score std goes {undivided['score_std_init']:.4g} → "
            f"{undivided['score_std_final']:.4g} (divided: {divided['score_std_init']:.3g} → "
            f"{divided['score_std_final']:.3g}), its entropy {undivided['entropy_init']:.3g} → "
            f"{undivided['entropy_final']:.3g} nats; {100 * undivided['onehot_share_final']:.1f} % of its rows "
            f"end with > 0.99 on one token")


@figure("score_runaway")
def score_runaway_figure(inputs, context):
    """Block 1's score std, attention entropy and one-hot share at every evaluation, both variants
    (mean over seeds, a band of ± std with several); the chapter's values at the first (`_init`)
    and last (`_final`) evaluation."""
    df = pd.read_csv(inputs["table"][0])
    fig, axes = plt.subplots(1, len(RUNAWAY_PANELS), figsize=(14, 4.2))
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

# Every run behind the chapter's sqrt(d_k) numbers, at each learning rate tried: the published runs at the
# stated 1e-3, the runaway hypotheses (undivided d_k = 1024) and the sweep's runs of the other three heads.
# Each run's head (d_k, divided or not) and rate are read from its config.
SQRT_DK_RUNS = ("scale/short_d1024_divided", "scale/short_d1024_undivided", "scale/short_d256_divided",
                "scale/short_d256_undivided",
                *(f"scale/runaway_lr{rate}" for rate in ("3e3", "5e3", "6e3", "1e2")),
                *(f"scale/sweep_d{d_k}_{variant}_lr{rate}" for rate in ("3e3", "6e3")
                  for d_k, variant in ((1024, "divided"), (256, "divided"), (256, "undivided"))),
                "scale/sweep_d1024_divided_lr5e3")
SWEEP_RUNS = tuple(r for r in SQRT_DK_RUNS if "/sweep_" in r)  # trained only as far as seeds_per_run names them


@dataclass(frozen=True)
class SweepNumber:
    """A sqrt(d_k) number of the chapter: the claim that holds it, and what it reads at each rate — an
    evals.csv column's last value of one head (score std, one-hot share) or the held-out cost of not
    dividing (undivided − divided perplexity, seed by seed)."""
    number: str
    claim: str
    d_k: int
    read: str  # "score_std" / "onehot_share" of `variant`, or "cost"
    variant: str = "undivided"


SQRT_DK_NUMBERS = (
    SweepNumber("undivided final score std", "score_runaway.final_std", 1024, "score_std"),
    SweepNumber("undivided one-hot share", "score_runaway.onehot", 1024, "onehot_share"),
    SweepNumber("divided final score std", "score_runaway.divided_final_std", 1024, "score_std", "divided"),
    SweepNumber("cost of not dividing, d_k = 256", "scale_training.dk256_cost", 256, "cost"),
    SweepNumber("cost of not dividing, d_k = 1024", "scale_training.dk1024_cost", 1024, "cost"),
)


def show_rate(lr: float, digits: int = 1) -> str:
    """3e-3, 6.2e-3: a learning rate as the configs write it."""
    mantissa, exponent = f"{lr:.{digits - 1}e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.') if '.' in mantissa else mantissa}e{int(exponent)}"


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


def values_at(n: SweepNumber, runs: dict, lr: float):
    """The number's value at a rate, over seeds (a stats.Sample; seed by seed for a cost where both heads
    trained the same seeds, Welch where they did not), or None where its runs were not trained."""
    from attnlab.claims import stats
    from attnlab.claims.stats import Sample

    def sample(values) -> Sample:
        values = np.asarray(values, dtype=float)
        return Sample(np.asarray(values.mean()), {len(values): values} if len(values) > 1 else {}, values)

    def read(variant: str):
        paths = runs.get((n.d_k, variant, lr))
        if not paths:
            return None
        if n.read == "cost":
            return sample([held_out(json.loads(Path(p).read_text())) for p in paths])
        return sample([evals_of(p)[f"block1_{n.read}"].iloc[-1] for p in paths])

    if n.read != "cost":
        return read(n.variant)
    divided, undivided = read("divided"), read("undivided")
    return None if divided is None or undivided is None else stats.combine(np.subtract, undivided, divided)


# A head has collapsed when most of its rows put > 0.99 of their weight on one token: the undivided head's
# state in the chapter (99.9 %), against its divided head's soft blend.
COLLAPSED_ONEHOT = 0.5


def head_state(paths: list[str]) -> dict:
    """The d_k = 1024 divided head at one rate, seed by seed at its last evaluation: how many seeds collapsed
    (one-hot share above COLLAPSED_ONEHOT) and the ranges of one-hot share and entropy (nats)."""
    last = [evals_of(p).iloc[-1] for p in paths]
    onehot, entropy = [e["block1_onehot_share"] for e in last], [e["block1_entropy"] for e in last]
    return {"collapsed": sum(v > COLLAPSED_ONEHOT for v in onehot), "seeds": len(last),
            "onehot": (min(onehot), max(onehot)), "entropy": (min(entropy), max(entropy))}


def show_state(state: dict) -> str:
    k, n = state["collapsed"], state["seeds"]
    word = "collapsed" if k == n else "soft" if k == 0 else "mixed"
    return (f"{word}: {k} of {n} seeds collapsed (one-hot share {show_number(state['onehot'][0])}–"
            f"{show_number(state['onehot'][1])}, entropy {show_number(state['entropy'][0])}–"
            f"{show_number(state['entropy'][1])} nats)")


def chapter_window(claim: dict) -> tuple[float, float]:
    """The values one run of ours must reach to be within the ledger's tolerance of the chapter's number
    (the tolerance widened by half its last printed digit, as the ledger's one-run test)."""
    from attnlab.claims.rules import rounding
    chapter, rule = float(claim["chapter"]), claim["rule"]
    width = rule["tolerance"] * (abs(chapter) if rule["kind"] == "relative" else 1.0) + float(rounding(claim)) / 2
    return chapter - width, chapter + width


def on_scale(value, log: bool):
    """A value over seeds (a stats.Sample) on its scale: its logarithm for a std."""
    f = np.log if log else (lambda x: x)
    return type(value)(f(value.point), {n: f(v) for n, v in value.sets.items()},
                       f(value.shared) if value.shared is not None else None)


def run_band(scaled, level: float = 0.95):
    """(point, low, high) on the scale: where one new run of ours lands, our mean ± t·s·√(1 + 1/n) (the
    ledger's one-run spread); low = high = None with one seed (no spread)."""
    from attnlab.claims import stats

    if not scaled.sets:
        return float(scaled.point), None, None
    spread, df = scaled.draw_error()
    half = float(stats.t_upper((1 + level) / 2, df) * spread)
    return float(scaled.point), float(scaled.point) - half, float(scaled.point) + half


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


def rate_status(claim: dict, tables: dict) -> tuple[str, str]:
    """The ledger's verdict of a claim on one rate's runs: fits (MATCH, CONSISTENT or UNRESOLVED: the chapter's run
    is not ruled out), misses (CONTRADICTED, or CONCLUSION HOLDS: its number misses), undecided (INCONCLUSIVE, with
    the seeds its plan asks for)."""
    from attnlab.claims.evaluate import judge

    judged = judge(claim, tables)
    verdict = judged["verdict"]
    if verdict in ("MATCH", "CONSISTENT", "UNRESOLVED"):
        return "fits", verdict
    if verdict == "INCONCLUSIVE":
        return "undecided", f"INCONCLUSIVE, {judged['plan'] or 'no count of seeds'} would decide it"
    return "misses", verdict


def fitting_band(rates: list[float], lows: list[float], highs: list[float], window: tuple[float, float]
                 ) -> list[tuple[float, float]]:
    """The learning rates at which one run of ours could land within the chapter's window: each run band
    ([low, high] per rate, on the value's scale) interpolated linearly in log(rate) between rates, the rates
    where the band meets the window, as intervals (low rate, high rate)."""
    w_low, w_high = window
    x = np.log10(rates)
    pieces = []
    if len(rates) == 1:
        return [(rates[0], rates[0])] if lows[0] <= w_high and highs[0] >= w_low else []
    for i in range(len(rates) - 1):
        u_low, u_high = 0.0, 1.0
        # low(u) <= w_high and high(u) >= w_low, each linear in u
        for start, end, bound, at_most in ((lows[i], lows[i + 1], w_high, True), (highs[i], highs[i + 1], w_low, False)):
            slope = end - start
            if slope == 0:
                if (start > bound) if at_most else (start < bound):
                    u_low, u_high = 1.0, 0.0
                continue
            root = (bound - start) / slope
            if (slope > 0) == at_most:
                u_high = min(u_high, root)
            else:
                u_low = max(u_low, root)
        if u_low <= u_high:
            pieces.append((10 ** (x[i] + u_low * (x[i + 1] - x[i])), 10 ** (x[i] + u_high * (x[i + 1] - x[i]))))
    merged = []
    for low, high in pieces:
        if merged and low <= merged[-1][1] * (1 + 1e-9):
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


def intersect(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out = []
    for low, high in a:
        for other_low, other_high in b:
            if max(low, other_low) <= min(high, other_high):
                out.append((max(low, other_low), min(high, other_high)))
    return out


def show_band(band: list[tuple[float, float]], tried: list[float]) -> str:
    if len(tried) == 1:
        return f"{show_rate(tried[0])} (the only rate measured with a spread)" if band else \
            f"not at {show_rate(tried[0])} (the only rate measured with a spread)"
    if not band:
        return f"none between {show_rate(min(tried))} and {show_rate(max(tried))}"
    parts = []
    for low, high in band:
        text = show_rate(low, 2) if math.isclose(low, high) else f"{show_rate(low, 2)} – {show_rate(high, 2)}"
        ends = [end for end, touches in (("lowest", math.isclose(low, min(tried))), ("highest", math.isclose(high, max(tried))))
                if touches and not math.isclose(low, high)]
        if ends:
            text += f" (to the {' and the '.join(ends)} rate measured with a spread)"
        parts.append(text)
    return ", ".join(parts)


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

    return {"claims": ["configs/claims.yaml"], **{run: [jobs.train_step(run, seed).outputs[0] for seed in seeds(run)]
                                                   for run in SQRT_DK_RUNS}}


@table("sqrt_dk_sweep", place=280, reads=sweep_inputs, code_files=("configs/claims.yaml",))
def sqrt_dk_sweep(inputs) -> pd.DataFrame:
    from attnlab.claims.rules import load_claims
    from attnlab.families.contradictions import NOT_ESTABLISHED

    claims = {c["id"]: c for c in load_claims(inputs["claims"][0])}
    runs = sweep_runs(inputs)
    rates = sorted({lr for _, _, lr in runs})
    out, bands, measured, statuses = [], {}, {}, {}
    for n in SQRT_DK_NUMBERS:
        claim = claims[n.claim]
        window = chapter_window(claim)
        values = {lr: v for lr in rates if (v := values_at(n, runs, lr)) is not None}
        log = n.read == "score_std"  # a std is compared as a ratio: ours spans 2 to 12,000 over the rates
        f, g = (math.log, math.exp) if log else ((lambda v: v), (lambda v: v))
        scaled_window = (f(max(window[0], 1e-12)), f(window[1]))
        row = {"number": n.number, "claim": n.claim, "chapter": float(claim["chapter"]),
               "scale": "log" if log else "linear"}
        spread_rates, lows, highs = [], [], []
        for lr in rates:
            if lr not in values:
                row[f"at_{show_rate(lr)}"] = "not run"
                continue
            point, low, high = run_band(on_scale(values[lr], log))
            status, why = rate_status(claim, rate_tables(runs, lr))
            statuses[n.claim, lr] = status
            seeds = max(values[lr].counts, default=1)
            if low is None:
                row[f"at_{show_rate(lr)}"] = f"{show_number(g(point))}, 1 seed: no spread"
                continue
            row[f"at_{show_rate(lr)}"] = (f"{show_number(g(point))} [{show_number(g(low))}, {show_number(g(high))}] "
                                          f"{status}: {why} ({seeds} seeds)")
            spread_rates.append(lr)
            lows.append(low)
            highs.append(high)
        if spread_rates:
            band = fitting_band(spread_rates, lows, highs, scaled_window)
            bands[n.claim], measured[n.claim] = band, (min(spread_rates), max(spread_rates))
            row.update(band=show_band(band, spread_rates), band_low=band[0][0] if band else math.nan,
                       band_high=band[-1][1] if band else math.nan)
        else:
            row.update(band=NOT_ESTABLISHED, band_low=math.nan, band_high=math.nan)
        row["fits_at"] = ", ".join(show_rate(lr) for lr in rates if statuses.get((n.claim, lr)) == "fits") or "none"
        row["rates"] = ", ".join(show_rate(lr) for lr in values)
        row["seeds"] = " · ".join(str(max(values[lr].counts, default=1)) for lr in values)
        out.append(row)
    states = {lr: head_state(paths) for (d_k, variant, lr), paths in runs.items()
              if d_k == head_width(SCORE_RUNAWAY) and variant == "divided"}
    out.append({"number": "divided head stays soft", "claim": "divided_soft", "scale": "seeds",
                **{f"at_{show_rate(lr)}": show_state(state) for lr, state in sorted(states.items())},
                "fits_at": ", ".join(show_rate(lr) for lr, st in sorted(states.items()) if st["collapsed"] == 0) or "none",
                "rates": ", ".join(show_rate(lr) for lr in sorted(states)),
                "seeds": " · ".join(str(st["seeds"]) for _, st in sorted(states.items()))})
    names = {n.claim: n.number for n in SQRT_DK_NUMBERS}
    collapsed = {lr: (st["collapsed"], st["seeds"]) for lr, st in states.items()}
    out.append({"number": "all five", "claim": "all",
                **one_rate(bands, measured, names, statuses, rates, collapsed, "score_runaway.final_std")})
    paths = [p for paths in runs.values() for p in paths]
    prov = provenance(load_runs(paths)) if paths else {}
    return pd.DataFrame([{**r, **prov} for r in out])


def one_rate(bands: dict, measured: dict, names: dict, statuses: dict | None = None, rates: tuple = (),
             collapsed: dict | None = None, runaway: str | None = None) -> dict:
    """Does one learning rate reproduce every number? No where two numbers' bands (the rates at which the
    chapter's number is not ruled out) meet nowhere in the range of rates where both were measured with a spread
    (the widest such range is named; intervals that never meet all together contain two that never meet); yes
    where, at one rate tried, every number fits (the ledger's one-run test: a MATCH, CONSISTENT or UNRESOLVED, decided);
    else not established. `bands`: claim -> its band; `measured`: claim -> (lowest, highest rate with a spread);
    `statuses`: (claim, rate) -> fits / misses / undecided. `collapsed`: rate -> (seeds whose divided head
    collapsed there, seeds); no also where every seed collapsed at the highest rate tried at or below the low end
    of the `runaway` claim's band and at every rate tried above (the undivided std reaches the chapter's only
    where the divided head, soft in the chapter, no longer is; collapse is taken to persist at higher rates,
    as it does at every rate tried); otherwise the finding says how many seeds collapsed at each rate tried in
    that band."""
    from itertools import combinations

    from attnlab.families.contradictions import NOT_ESTABLISHED

    statuses, collapsed = statuses or {}, collapsed or {}
    if runaway in bands and bands[runaway] and collapsed:
        start = bands[runaway][0][0]
        below = [lr for lr in collapsed if lr <= start * (1 + 1e-9)]
        from_ = max(below) if below else None
        if from_ is not None and all(k == n for lr, (k, n) in collapsed.items() if lr >= from_):
            return {"band": f"none from {show_rate(from_)}", "band_low": math.nan, "band_high": math.nan,
                    "finding": f"no: the {names[runaway]} reaches the chapter's only from {show_rate(start, 2)}, and "
                               f"the divided head, soft in the chapter, has collapsed at every rate tried from "
                               f"{show_rate(from_)} up"}
    conflicts = []
    for a, b in combinations(bands, 2):
        common = (max(measured[a][0], measured[b][0]), min(measured[a][1], measured[b][1]))
        if common[0] <= common[1] and not intersect(intersect([common], bands[a]), bands[b]):
            conflicts.append((math.log(common[1] / common[0]), common, a, b))
    if conflicts:
        _, (low, high), a, b = max(conflicts, key=lambda c: c[0])
        where = f"at {show_rate(low)}" if math.isclose(low, high) else f"between {show_rate(low)} and {show_rate(high)}"
        return {"band": f"none {where}", "band_low": math.nan, "band_high": math.nan,
                "finding": f"no: no rate {where} fits both the {names[a]} and the {names[b]} (the range where "
                           f"both were measured with a spread)"}
    every = [lr for lr in rates if all(statuses.get((c, lr)) == "fits" for c in names)]
    if every:
        text = ", ".join(show_rate(lr) for lr in every)
        return {"band": text, "band_low": min(every), "band_high": max(every),
                "finding": f"yes: at {text} every one of the {len(names)} numbers fits"}
    together = None
    if len(bands) == len(names):
        common = (max(low for low, _ in measured.values()), min(high for _, high in measured.values()))
        together = [common] if common[0] <= common[1] else []
        for band in bands.values():
            together = intersect(together, band)
    where = (f"not ruled out together at {show_band(together, [min(rates), max(rates)])}" if together
             else "no rate where all were measured with a spread")
    open_ = sorted({names[c] for (c, lr), status in statuses.items() if status != "fits"
                    and together and any(low <= lr <= high for low, high in together)})
    heads = ""
    if runaway in bands and bands[runaway] and collapsed:
        inside = [lr for lr in sorted(collapsed) if any(low <= lr <= high for low, high in bands[runaway])]
        if inside:
            heads = ("; where the " + names[runaway] + " can reach the chapter's, the divided head collapsed in " +
                     ", ".join(f"{collapsed[lr][0]} of {collapsed[lr][1]} seeds at {show_rate(lr)}" for lr in inside))
    return {"band": NOT_ESTABLISHED, "band_low": math.nan, "band_high": math.nan,
            "finding": f"{NOT_ESTABLISHED}: {where}" + (f"; undecided there: the {', the '.join(open_)}" if open_ else "")
                       + heads}
