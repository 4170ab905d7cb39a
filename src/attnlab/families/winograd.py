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
from attnlab.tables import is_seed_detail, overridden, provenance, seed_columns, seed_ids, table

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


# --- the two-block model's circuit, seed by seed ---------------------------------------------------------

# Each seed's circuit from its probe (the chapter's probe pair, "the animal … the street …", at the scored
# position): which visible token each block's head-averaged row reads, its largest weight (a tie reads none).
# The types, first match: the chapter's two-hop circuit and its mirror need their block 1 and block 2;
# "direct" is block 2 naming the referent itself, whatever block 1 does; a block 2 of the chapter's circuit
# or of its mirror without its block 1 is counted apart, and anything else is "other".
CIRCUITS = {
    "two-hop": "the chapter's two-hop circuit: block 1 reads the first noun (the animal) for both adjectives; "
               "block 2 reads the adjective for the crosser (tired), the second noun (the street) for the crossed (wet)",
    "mirror": "its mirror, the nouns swapped: block 1 reads the second noun for both; block 2 reads the first noun "
              "for the crosser, the adjective for the crossed",
    "direct": "block 2 reads the referent itself: the first noun for the crosser, the second for the crossed "
              "(block 1 reads anything)",
    "two-hop, second block only": "block 2 as in the two-hop circuit, block 1 not on the first noun for both",
    "mirror, second block only": "block 2 as in the mirror, block 1 not on the second noun for both",
    "other": "anything else, a tie for a row's largest weight included",
}
TIE = 1e-6  # two weights this close are a tie: the row reads neither


def reads(weights) -> int | None:
    """The position a row reads: its largest weight, None on a tie."""
    w = np.asarray(weights, dtype=float)
    top = np.argsort(w)[::-1]
    return int(top[0]) if w[top[0]] - w[top[1]] > TIE else None


def circuit(rows: list[dict], crosser: str, crossed: str, positions: tuple[int, int, int]) -> str:
    """The circuit of one seed's probe rows for one crosser and one crossed adjective; `positions`: the first
    noun's, the second noun's and the adjective's."""
    first, second, adjective = positions
    row = {(r["adjective"], r["block"]): r["weights"] for r in rows}
    last = max(r["block"] for r in rows)
    block1 = {reads(row[(a, 1)]) for a in (crosser, crossed)}
    block2 = (reads(row[(crosser, last)]), reads(row[(crossed, last)]))
    if block2 == (adjective, second):
        return "two-hop" if block1 == {first} else "two-hop, second block only"
    if block2 == (first, adjective):
        return "mirror" if block1 == {second} else "mirror, second block only"
    return "direct" if block2 == (first, second) else "other"


def circuits_of(probes: list[list[dict]], positions: tuple[int, int, int]) -> list[dict]:
    """Per seed: its circuit on the chapter's pair (the first crosser and the first crossed adjective of
    the probe), whether that circuit holds for every pair of a crosser and a crossed adjective, and whether
    the seed answers both sentences of the chapter's pair right."""
    out = []
    for rows in probes:
        by_role = {}
        for r in rows:
            by_role.setdefault(r["role"], [])
            if r["adjective"] not in by_role[r["role"]]:
                by_role[r["role"]].append(r["adjective"])
        crossers, crosseds = by_role["x"], by_role["y"]
        found = circuit(rows, crossers[0], crosseds[0], positions)
        every = all(circuit(rows, a, b, positions) == found for a in crossers for b in crosseds)
        right = all(r["answer"] == r["referent"] for r in rows if r["adjective"] in (crossers[0], crosseds[0]))
        out.append({"circuit": found, "every_pair": every, "right": right})
    return out


@table("winograd_circuits")
def winograd_circuits(inputs) -> pd.DataFrame:
    """Every seed of the two-block runs classified by circuit: shares with Wilson's 95 % interval."""
    from attnlab.claims import stats
    from attnlab.winograd import ADJ_POS, X_POS, Y_POS  # the probe's language imports its trainer (torch)

    labels = {"probe": "two blocks, four heads (the published role_two_blocks)",
              "one_head": "two blocks, one head (the hypothesis role_two_blocks_one_head)"}
    out = []
    for name, label in labels.items():
        paths = inputs.get(name, [])
        if not paths:
            continue
        runs = load_runs([Path(p).with_name("metrics.json") for p in paths])
        seeds = [r["seed"] for r in runs]
        found = circuits_of([json.loads(Path(p).read_text()) for p in paths], (X_POS, Y_POS, ADJ_POS))
        n = len(found)
        for kind in CIRCUITS:
            these = [s for s, f in zip(seeds, found) if f["circuit"] == kind]
            low, high = stats.share_interval(len(these), n)
            out.append({"model": label, "circuit": kind, "seeds_with_it": len(these), "of": n,
                        "share": len(these) / n, "share_low": low, "share_high": high,
                        "every_pair": sum(f["every_pair"] for f in found if f["circuit"] == kind),
                        "right": sum(f["right"] for f in found if f["circuit"] == kind),
                        "which": seed_ids(these), "seeds": n, **provenance(runs)})
    return pd.DataFrame(out)
