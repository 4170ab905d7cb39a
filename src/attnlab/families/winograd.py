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
from attnlab.tables import CHAPTER, for_people, is_seed_detail, overridden, provenance, seed_columns, seed_ids, table

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
# Below the chapter's rows, the other averages tried on both versions (which one is the chapter's model): each a
# contradiction's run (configs/hypotheses.yaml), with the seeds its hypothesis trains.
AVERAGES_TRIED = {
    "average_linear": "plain linear average (the mixer alone)",
    "average_mlp_no_residual": "linear average with an MLP, no residual",
    "average_residual_no_mlp": "linear average with a residual, no MLP",
    "average_lr3e3": "uniform causal average at learning rate 3e-3",
}
TRIED = {version: tuple(Row(model, f"winograd/{version}_{model}", label) for model, label in AVERAGES_TRIED.items())
         for version in VERSIONS}
ROLE_NAMES = {"x": "crosser", "y": "crossed"}


def accuracy_frame(inputs, version: str, outcomes: tuple[str, ...]) -> pd.DataFrame:
    """One row per model: held-out shares (percent, mean ± std over seeds), training accuracy, provenance."""
    rows = []
    for model, _, runs in trained_rows(VERSIONS[version] + TRIED[version], inputs):
        row = {"model": model.label, "experiment": model.experiment, **overridden(runs)}
        for outcome in outcomes:
            row.update(seed_columns(outcome, [r["held_out"][outcome] for r in runs]))
        row.update(seed_columns("train_accuracy", [r["train"]["accuracy"] for r in runs]))
        row.update({"held_out_sentences": runs[0]["held_out"]["sentences"], "params": runs[0]["params"],
                    "steps": runs[0]["steps"], "seeds": len(runs), "config_hash": runs[0]["config_hash"],
                    **provenance(runs)})
        rows.append(row)
    return pd.DataFrame(rows)


def version_runs(version: str):
    """A Winograd table's inputs: each model's seeds of one version (metrics.json); the averages tried, their
    hypotheses' published seeds."""
    return lambda jobs, variant: {
        **{m.name: jobs.winograd_runs(version, m.name, variant=variant) for m in VERSIONS[version]},
        **{m.name: jobs.winograd_published_runs(version, m.name) for m in TRIED[version]}}


def probes(jobs, variant: bool) -> dict:
    """The probed model's attention, per seed (probe.json)."""
    return {"probe": jobs.winograd_runs("role", PROBED.name, "probe.json", variant)}


def interventions(jobs, variant: bool) -> dict:
    """The probed model's circuit by intervention, per published seed (attnlab.measure.winograd_interventions)."""
    return {"interventions": jobs.interventions()}


@table("winograd_category", shown=("model", "accuracy", "train_accuracy", "params", "held_out_sentences", "steps", "seeds"),
       place=180, reads=version_runs("category"))
def winograd_category(inputs) -> pd.DataFrame:
    return accuracy_frame(inputs, "category", ("accuracy",))


@table("winograd_role", shown=("model", "accuracy", "wrong_noun", "other", "seeds"), place=190, reads=version_runs("role"))
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


# a weight a reader looks at: the uniform row gives each of the 15 visible tokens 0.067
SHOWN_WEIGHT = 0.1


def token_weights(df: pd.DataFrame, chapter: dict) -> pd.DataFrame:
    """The reader's view of an attention table, as the chapter prints it ("animal:0.70 … tired:1.00"): per row
    the tokens with a mean weight of at least SHOWN_WEIGHT, largest first, and the chapter's weights beside them;
    every weight with its spread is in the provenance view."""
    tokens = [c for c in df.columns if c[0].isdigit() and not is_seed_detail(c)]
    shown, _ = for_people(df, shared_columns=())

    def word(token: str, i) -> str:  # the adjective's slot reads as the row's adjective
        return df.at[i, "adjective"] if token.endswith(":adj") else token.split(":", 1)[1]

    rows = []
    for i in df.index:
        heavy = sorted((t for t in tokens if df.at[i, t] >= SHOWN_WEIGHT), key=lambda t: -df.at[i, t])
        rows.append({"adjective": df.at[i, "adjective"], "role": df.at[i, "role"], "block": df.at[i, "block"],
                     "right": df.at[i, "right"],
                     f"weights ≥ {SHOWN_WEIGHT}": " · ".join(f"{word(t, i)}:{shown.at[i, t]}" for t in heavy),
                     CHAPTER: " · ".join(f"{word(t, i)}:{chapter[t][i]}" for t in tokens if i in chapter.get(t, {}))})
    return pd.DataFrame(rows)


@table("winograd_attention", view=token_weights, place=200, reads=probes)
def winograd_attention(inputs) -> pd.DataFrame:
    chosen = first_of_each_role(inputs["probe"])
    df = probe_frame(inputs["probe"], lambda r: r["adjective"] in chosen)
    crosser_first = {"crosser": 0, "crossed": 1}
    return df.sort_values(["role", "block"], key=lambda s: s.map(crosser_first) if s.name == "role" else s,
                          kind="stable").reset_index(drop=True)


@table("winograd_adjectives", view=token_weights, place=210, reads=probes)
def winograd_adjectives(inputs) -> pd.DataFrame:
    last = max(r["block"] for r in json.loads(Path(inputs["probe"][0]).read_text()))
    return probe_frame(inputs["probe"], lambda r: r["block"] == last)


def heat_map_figure(inputs, context, row_labels: list[str], point: str):
    """The table's attention rows as a heat map with the chapter's values; the runs the probe read
    (their metrics.json beside each probe.json) give the subtitle's steps and seeds."""
    df = pd.read_csv(inputs["table"][0])
    cells = df[[c for c in df.columns if c[0].isdigit() and not is_seed_detail(c)]]
    runs = load_runs([Path(p).with_name("metrics.json") for p in inputs["probe"]])
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(df) + 2.6))  # a page's width: readable at 800 px
    image = style.heat_map(ax, cells, row_labels, [c.split(":", 1)[1] for c in cells.columns], context.chapter,
                           narrow=True)
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


# --- the two-block model's circuit, seed by seed, by intervention on held-out pairs ----------------------------
# Each seed's interventions.json (attnlab.measure.winograd_interventions) patches block 1's output from a donor
# sentence and asks whether the answer becomes the donor's referent. A patch *moves* what it tests when it does so
# in more than half of the pairs the seed answers right; the site that moves it most, if any, is where block 2
# takes it from:
# - the adjective (adjective swap, tired <-> wet): from the query, block 1 brought it there; from the adjective's
#   own position or the two tokens after it, block 2 reads it there;
# - each role's referent noun (noun swap, the same adjective and two other nouns): from the query, block 1 carried
#   the noun there; from the nouns' positions, block 2 fetches it itself.
MOVES = 0.5
ADJECTIVE_SITES = {"query": "block 1 brings the adjective to the query",
                   "adjective": "block 2 reads the adjective at its position",
                   "after_adjective": "block 1 moves the adjective to the two tokens after it, block 2 reads it there"}
NOUN_SITES = {"query": "block 1 carries {noun} to the query", "nouns": "block 2 fetches {noun} itself"}
NOUNS = {"crosser": "the first noun (the crosser's referent)", "crossed": "the second noun (the crossed's referent)"}
UNMOVED = {"adjective": "no single patch moves the adjective", "noun": "no single patch moves {noun}"}
# The circuits the chapter's section names, by what the patches show. Any other combination is a row of its own,
# named by what its patches show.
NAMED = {
    "two-hop": ("adjective", "query", "nouns"),   # the chapter's: block 1 carries the first noun; block 2 reads
    "mirror": ("adjective", "nouns", "query"),    # the adjective and fetches the second noun; the mirror swaps nouns
    "adjective first": ("query", "nouns", "nouns"),
    "direct": ("adjective", "nouns", "nouns"),
}


# the chapter's general point: one block's output read by the other (its two-hop circuit, the mirror, or the
# adjective brought first); a row of winograd_circuits of its own, beside each kind
COMPOSED = ("two-hop", "mirror", "adjective first")
COMPOSED_KIND = "composed across the blocks"


def moved_by(rates: dict) -> str | None:
    """The site whose patch moves the answer most, if it moves it in more than MOVES of the pairs."""
    rates = {site: r for site, r in rates.items() if r is not None}
    top = max(rates, key=rates.get, default=None)
    return top if top is not None and rates[top] > MOVES else None


def patch_rates(record: dict, swap: str, recipients: tuple[str, ...]) -> dict:
    """{site: share of the counted pairs whose answer follows the donor}, over the given recipient roles."""
    out = {}
    for r in record["patching"]:
        if r["swap"] == swap and r["recipient"] in recipients and r["pairs"]:
            n, k = out.get(r["site"], (0, 0.0))
            out[r["site"]] = (n + r["pairs"], k + r["follows_donor"] * r["pairs"])
    return {site: k / n for site, (n, k) in out.items()}


def describe(shown: tuple) -> str:
    """What the sites (adjective's, first noun's, second noun's; None: no single patch) show, in words."""
    words = [ADJECTIVE_SITES[shown[0]] if shown[0] else UNMOVED["adjective"]]
    words += [(NOUN_SITES[site] if site else UNMOVED["noun"]).format(noun=noun)
              for site, noun in zip(shown[1:], NOUNS.values())]
    return "; ".join(words)


def circuit_of(record: dict) -> tuple[str, str]:
    """(kind, circuit): a named kind (NAMED) or "other", and what the seed's patches show, in words."""
    shown = (moved_by(patch_rates(record, "adjective", ("crosser", "crossed"))),
             *(moved_by(patch_rates(record, "noun", (role,))) for role in NOUNS))
    return next((name for name, sites in NAMED.items() if sites == shown), "other"), describe(shown)


def interventions_of(paths) -> tuple[list[dict], list[dict]]:
    """Each seed's interventions.json and the metrics.json of its run (beside it)."""
    return ([json.loads(Path(p).read_text()) for p in paths],
            load_runs([Path(p).with_name("metrics.json") for p in paths]))


def measured(records: list[dict]) -> dict:
    """Where the interventions were made (the runs' provenance says where the models were trained): the first
    seed's commit, +dirty if any seed's tree had changes; how many seeds' weights were kept, how many retrained;
    how the measured models compare with the published runs: the seeds giving every published held-out answer,
    and the largest difference of a probe weight."""
    weights = [r["weights"] for r in records]
    return {"measured_commit": (records[0]["measured"]["commit"] or "")[:10]
                               + ("+dirty" if any(r["measured"]["dirty"] for r in records) else ""),
            "weights": ", ".join(f"{w} {weights.count(w)}" for w in sorted(set(weights))),
            "answers_as_published": sum(r["against_published"]["held_out_answers_differ"] == 0 for r in records),
            "probe_max_abs_diff": max(r["against_published"]["probe_max_abs_diff"] for r in records)}


EVERY_SEED = "every seed"
# the model as trained, a block's costliest head zeroed, the whole block zeroed
READ_ZEROED = ("nothing (the model as trained)", "the head ranked 1 by cost", "every head of the block")


def costliest_heads(df: pd.DataFrame, chapter: dict) -> pd.DataFrame:
    """The reader's view of winograd_heads: per circuit class and block, the costliest head — the accuracy without
    it and what it reads (its attention on the adjective and the second noun); every rank, the whole block zeroed
    and the model as trained are in the provenance view and the caption."""
    rows = df[df["zeroed"] == READ_ZEROED[1]].reset_index(drop=True)
    shown, _ = for_people(rows, shared_columns=())
    shown = shown.rename(columns={"held_out_accuracy": "held_out_accuracy_without_it"})
    return shown[[c for c in ("circuit", "seeds", "block", "held_out_accuracy_without_it", "weight_crosser_adjective",
                              "weight_crossed_adjective", "weight_crossed_second_noun") if c in shown]]


def heads_rows(records: list[dict], runs: list[dict], circuit: str) -> list[dict]:
    """winograd_heads' rows for the seeds of one circuit class (or every seed): the model as trained; per block,
    its heads ranked within each seed by what zeroing one costs, then every head of the block zeroed."""
    common = {"seeds": len(records), **provenance(runs), **measured(records)}
    intact = {"circuit": circuit, "block": None, "zeroed": READ_ZEROED[0]}
    for name in ("accuracy", "accuracy_crosser", "accuracy_crossed"):
        intact.update(seed_columns(f"held_out_{name}", [r["held_out"][name] for r in records]))
    rows = [{**intact, **common}]
    for block in sorted({h["block"] for h in records[0]["heads"]}):
        ranked = [sorted((h for h in r["heads"] if h["block"] == block),
                         key=lambda h: (h["ablated"]["accuracy"], h["head"])) for r in records]
        for rank in range(len(ranked[0])):
            heads = [seed[rank] for seed in ranked]
            row = {"circuit": circuit, "block": block, "zeroed": f"the head ranked {rank + 1} by cost"}
            for name in ("accuracy", "accuracy_crosser", "accuracy_crossed"):
                row.update(seed_columns(f"held_out_{name}", [h["ablated"][name] for h in heads]))
            for kind in ("weight", "contribution"):
                for role in NOUNS:
                    for slot in heads[0][kind][role]:
                        row.update(seed_columns(f"{kind}_{role}_{slot}", [h[kind][role][slot] for h in heads]))
            rows.append({**row, **common})
        blocks = [next(b for b in r["blocks"] if b["block"] == block) for r in records]
        row = {"circuit": circuit, "block": block, "zeroed": READ_ZEROED[2]}
        for name in ("accuracy", "accuracy_crosser", "accuracy_crossed"):
            row.update(seed_columns(f"held_out_{name}", [b["ablated"][name] for b in blocks]))
        rows.append({**row, **common})
    return rows


@table("winograd_heads", view=costliest_heads, place=220, reads=interventions)
def winograd_heads(inputs) -> pd.DataFrame:
    """The heads of the two-block model, zeroed and read (mean ± std over seeds), for every seed and then apart
    for the seeds of each circuit class (winograd_circuits' kinds): seeds whose circuits differ use their heads
    differently, so their mean describes no model."""
    records, runs = interventions_of(inputs["interventions"])
    kinds = [circuit_of(r)[0] for r in records]
    rows = heads_rows(records, runs, EVERY_SEED)
    for kind in [*NAMED, "other"]:
        these = [i for i, k in enumerate(kinds) if k == kind]
        if these:
            rows += heads_rows([records[i] for i in these], [runs[i] for i in these], kind)
    df = pd.DataFrame(rows)
    df["block"] = pd.Series([None if pd.isna(v) else int(v) for v in df["block"]], dtype=object)
    return df


@table("winograd_patching", place=230, reads=interventions)
def winograd_patching(inputs) -> pd.DataFrame:
    """Per swap, patched site and role of the recipient's adjective: the share of pairs (answered right in both
    sentences) whose answer becomes the donor's referent, mean ± std over seeds, and how many seeds it moves."""
    records, runs = interventions_of(inputs["interventions"])
    rows = []
    for cell in records[0]["patching"]:
        found = [next(r for r in record["patching"] if all(r[k] == cell[k] for k in ("swap", "site", "recipient")))
                 for record in records]
        shares = [r["follows_donor"] for r in found if r["follows_donor"] is not None]
        rows.append({"swap": cell["swap"], "site": cell["site"], "recipient": cell["recipient"],
                     **(seed_columns("follows_donor", shares) if shares else {"follows_donor": None}),
                     "pairs": float(np.mean([r["pairs"] for r in found])),
                     "seeds_moved": sum(s > MOVES for s in shares), "seeds": len(shares), **provenance(runs),
                     **measured(records)})
    return pd.DataFrame(rows)


@table("winograd_circuits", shown=("kind", "circuit", "seeds_with_it", "of", "share", "shows_it", "held_out_accuracy"), place=240, reads=interventions)
def winograd_circuits(inputs) -> pd.DataFrame:
    """Every seed of the two-block run classified by what its patches show: shares with Wilson's 95 % interval."""
    from attnlab.claims import stats

    records, runs = interventions_of(inputs["interventions"])
    found = [circuit_of(r) for r in records]
    others = sorted({f for f in found if f[0] == "other"}, key=lambda f: (-found.count(f), f[1]))
    circuits = [(kind, describe(sites)) for kind, sites in NAMED.items()] + others
    n = len(found)
    out = []
    composed = (COMPOSED_KIND, f"{', '.join(COMPOSED[:-1])} or {COMPOSED[-1]}: one block's output read by the other")
    for kind, shown in [*circuits, composed]:
        if kind == COMPOSED_KIND:
            these = [r for r, f in zip(records, found) if f[0] in COMPOSED]
            shows = [float(f[0] in COMPOSED) for f in found]
        else:
            these = [r for r, f in zip(records, found) if f == (kind, shown)]
            shows = [float(f == (kind, shown)) for f in found]
        low, high = stats.share_interval(len(these), n)
        out.append({"kind": kind, "circuit": shown, "seeds_with_it": len(these),
                    "of": n, "share": len(these) / n, "share_low": low, "share_high": high,
                    # 1 for each seed that shows it, in seed order: the ledger judges a circuit seed by seed
                    **seed_columns("shows_it", shows),
                    "which": seed_ids(r["seed"] for r in these),
                    "held_out_accuracy": float(np.mean([r["held_out"]["accuracy"] for r in these])) if these else None,
                    "seeds": n, **provenance(runs), **measured(records)})
    return pd.DataFrame(out)
