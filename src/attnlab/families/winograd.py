"""The Winograd probe: held-out referent accuracy, and the attention maps of the two-block model."""

import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from attnlab import style
from attnlab.families import Row, trained_rows
from attnlab.plots import figure
from attnlab.runs import load_runs
from attnlab.tables import is_seed_detail, overridden, provenance, seed_columns, table

MODELS = {
    "average": "uniform causal average (block with attention swapped out)",
    "block": "one transformer block",
    "two_blocks": "two transformer blocks",
}
# The rows of winograd_category and winograd_role: the models trained on each version of the
# language (configs/winograd/<version>_<model>.yaml); the attention tables probe the last one.
VERSIONS = {
    version: tuple(Row(model, f"winograd/{version}_{model}", MODELS[model]) for model in models)
    for version, models in {"category": ("average", "block"), "role": ("average", "block", "two_blocks")}.items()
}
PROBED = VERSIONS["role"][-1]
ROLE_NAMES = {"x": "crosser", "y": "crossed"}


def accuracy_frame(inputs, version: str, outcomes: tuple[str, ...]) -> pd.DataFrame:
    """One row per model: held-out shares (percent, mean ± std over seeds), training accuracy, provenance."""
    rows = []
    for model, _, runs in trained_rows(VERSIONS[version], inputs):
        row = {"model": model.label, **overridden(runs)}
        for outcome in outcomes:
            row.update(seed_columns(outcome, [r["held_out"][outcome] for r in runs]))
        row.update(seed_columns("train_accuracy", [r["train"]["accuracy"] for r in runs]))
        row.update({"held_out_sentences": runs[0]["held_out"]["sentences"], "params": runs[0]["params"],
                    "steps": runs[0]["steps"], "seeds": len(runs), "config_hash": runs[0]["config_hash"],
                    **provenance(runs)})
        rows.append(row)
    return pd.DataFrame(rows)


@table("winograd_category")
def winograd_category(inputs) -> pd.DataFrame:
    return accuracy_frame(inputs, "category", ("accuracy",))


@table("winograd_role")
def winograd_role(inputs) -> pd.DataFrame:
    df = accuracy_frame(inputs, "role", ("accuracy", "wrong_noun", "other"))
    # the baseline the chapter reads the average against: a coin flip between the sentence's two nouns
    chance = {"model": "chance (either noun of the pair)", "accuracy": 50.0, "wrong_noun": 50.0, "other": 0.0}
    df = pd.concat([pd.DataFrame([chance]), df], ignore_index=True)
    for col in ("held_out_sentences", "params", "steps", "seeds"):  # object dtype: integers, blank for chance
        df[col] = pd.Series([None if pd.isna(v) else int(v) for v in df[col]], dtype=object)
    return df


def position_columns(tokens: list[str]) -> list[str]:
    """'0:the', '1:animal', ...; the adjective slot is named 'adj' so rows of different adjectives align."""
    from attnlab.winograd import ADJ_POS  # the probe's language imports its trainer (torch): not while planning

    return [f"{i}:{'adj' if i == ADJ_POS else t}" for i, t in enumerate(tokens)]


def probe_frame(paths, keep) -> pd.DataFrame:
    """Head-averaged attention rows of the scored position, mean ± std over seeds, for the
    (adjective, block) cells `keep(row)` selects."""
    seeds = [json.loads(Path(p).read_text()) for p in paths]
    cells = {}
    for rows in seeds:
        for r in rows:
            if keep(r):
                cells.setdefault((r["adjective"], r["block"]), []).append(r)
    runs = load_runs([Path(p).with_name("metrics.json") for p in paths])  # written beside each probe.json
    out = []
    for (adj, block), rs in cells.items():
        columns = position_columns(rs[0]["tokens"])
        row = {"sentence": " ".join(rs[0]["tokens"]) + " …", "adjective": adj, "role": ROLE_NAMES[rs[0]["role"]],
               "block": block, "right": f"{sum(r['answer'] == r['referent'] for r in rs)}/{len(rs)}"}
        weights = np.array([r["weights"] for r in rs])
        for i, col in enumerate(columns):
            row.update(seed_columns(col, weights[:, i]))
        out.append({**row, "seeds": len(rs), **provenance(runs)})
    return pd.DataFrame(out)


def first_of_each_role(paths) -> set[str]:
    """The chapter's two sentences: the first crosser adjective (tired) and the first crossed (wet)."""
    rows = json.loads(Path(paths[0]).read_text())
    firsts = {}
    for r in rows:
        firsts.setdefault(r["role"], r["adjective"])
    return set(firsts.values())


@table("winograd_attention")
def winograd_attention(inputs) -> pd.DataFrame:
    chosen = first_of_each_role(inputs["probe"])
    df = probe_frame(inputs["probe"], lambda r: r["adjective"] in chosen)
    crosser_first = {"crosser": 0, "crossed": 1}
    return df.sort_values(["role", "block"], key=lambda s: s.map(crosser_first) if s.name == "role" else s,
                          kind="stable").reset_index(drop=True)


@table("winograd_adjectives")
def winograd_adjectives(inputs) -> pd.DataFrame:
    last = max(r["block"] for r in json.loads(Path(inputs["probe"][0]).read_text()))
    return probe_frame(inputs["probe"], lambda r: r["block"] == last)


def heat_map_figure(inputs, context, row_labels: list[str], point: str):
    """The table's attention rows as a heat map with the chapter's values; the runs the probe read
    (their metrics.json beside each probe.json) give the subtitle's steps and seeds."""
    df = pd.read_csv(inputs["table"][0])
    cells = df[[c for c in df.columns if c[0].isdigit() and not is_seed_detail(c)]]
    runs = load_runs([Path(p).with_name("metrics.json") for p in inputs["probe"]])
    fig, ax = plt.subplots(figsize=(13, 0.5 * len(df) + 2.4))
    image = style.heat_map(ax, cells, row_labels, [c.split(":", 1)[1] for c in cells.columns], context.chapter)
    ax.set_xlabel("the visible tokens (the adjective's slot: adj)")
    fig.colorbar(image, ax=ax, pad=0.01, label=f"attention weight (uniform: {1 / len(cells.columns):.3f})")
    style.headline(fig, point, context.profile, style.steps_note([r["steps"] for r in runs]),
                   style.seeds_note(len(runs), spread=False),
                   "attention from the position that predicts the referent, mean over heads")
    style.legend_below(fig)
    return fig


def largest(row: pd.Series, cells: list[str]) -> str:
    """'street 0.55': a row's largest mean weight, by token."""
    top = max(cells, key=lambda c: row[c])
    return f"{top.split(':', 1)[1]} {row[top]:.2f}"


@figure("winograd_attention")
def winograd_attention_figure(inputs, context):
    df = pd.read_csv(inputs["table"][0])
    cells = [c for c in df.columns if c[0].isdigit() and not is_seed_detail(c)]
    finding = "; ".join(f"block {b}: " + ", ".join(f"too {r['adjective']} → {largest(r, cells)}"
                                                   for _, r in df[df["block"] == b].iterrows())
                        for b in sorted(df["block"].unique()))
    return heat_map_figure(inputs, context, [f"too {a}, block {b}" for a, b in zip(df["adjective"], df["block"])],
                           f"Largest weight (mean over seeds) — {finding}")


@figure("winograd_adjectives")
def winograd_adjectives_figure(inputs, context):
    df = pd.read_csv(inputs["table"][0])
    cells = [c for c in df.columns if c[0].isdigit() and not is_seed_detail(c)]
    by_role = {role: sorted({largest(r, cells).split()[0] for _, r in rows.iterrows()})
               for role, rows in df.groupby("role", sort=False)}
    finding = "; ".join(f"{role}s → {', '.join(tokens)}" for role, tokens in by_role.items())
    return heat_map_figure(inputs, context, [f"{a} ({r})" for a, r in zip(df["adjective"], df["role"])],
                           f"Block {df['block'].iloc[0]}'s largest weight (mean over seeds) — {finding}")
