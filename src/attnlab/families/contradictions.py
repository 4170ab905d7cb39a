"""Experiments behind the CONTRADICTED claims: for each, settings the chapter did not state, each tried as
an ordinary pipeline run (configs/experiment/... or configs/winograd/...), and what it does to the claim.

A hypothesis rebuilds one family table with the family's own builder, its runs in place of the published
ones (or, where it needs no run, reading another column of the published table), and the ledger's rules
judge the claim on that table exactly as on the published one. The finding compares the two:
- reproduced under this setting: the claim is MATCH under the hypothesis;
- conclusion reproduced: CONCLUSION HOLDS under it (the chapter's point, not its number);
- moves toward the chapter: the gap to the chapter's value (or to the rule's threshold) shrinks by more
  than a tenth, judged as the ledger judges a number: the 95 % interval of (0.9 × the gap before − the
  gap under the hypothesis) lies wholly above 0 — per seed where the hypothesis reads the published runs
  (paired), Welch's unpaired interval where it trains runs of its own;
- ruled out: the interval lies wholly below 0 (or the claim has no gap to shrink);
- undecided: it straddles 0; `seeds_to_decide` gives the cheapest way to decide it if the means and spreads
  held: the seeds of the hypothesis's runs, of the published runs, or of both, whichever adds the fewest
  runs ("none": no number would);
- not measured: the hypothesis's table lacks what the claim reads (a profile too small for it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from attnlab.claims import stats
from attnlab.claims.evaluate import Missing, chapter_value, evaluate, judge, load_tables, summary
from attnlab.claims.rules import load_claims
from attnlab.runs import load_runs
from attnlab.tables import BUILDERS, SEEDS_SUFFIX, provenance, table


@dataclass(frozen=True)
class Hypothesis:
    id: str                     # names its inputs: <id>:<the family table's input name>
    table: str                  # the family table it rebuilds
    claims: tuple[str, ...]     # the CONTRADICTED claims it tests (read on that table)
    text: str                   # the hypothesis, in words
    setting: str                # what differs from the chapter's stated settings
    runs: dict = field(default_factory=dict)  # table input -> the run trained under the hypothesis
    seeds: int = 3              # seeds of its runs, at most (a profile with fewer seeds trains its count;
                                # configs/pipeline.yaml's seeds_per_run may give a run more)
    read: dict = field(default_factory=dict)  # column -> the published table's column read in its place

    def seeds_under(self, profile_seeds: int) -> int:
        """How many seeds its runs train in a profile that trains `profile_seeds` of a published row."""
        return min(self.seeds, profile_seeds)


RUNAWAY = ("score_runaway.final_std", "score_runaway.onehot")
CATEGORY = ("winograd_category.average", "winograd_category.bag_of_words_wins")
TWO_HOP = ("winograd_attention.block1_same", "winograd_attention.block1_first_noun", "winograd_attention.block2_tired")

HYPOTHESES = (
    Hypothesis("runaway_lr3e3", "score_runaway", RUNAWAY,
               "the chapter trained at a higher learning rate than the one it states for every run",
               "train.lr=3e-3 (undivided d_k = 1024 run)", {"undivided": "scale/runaway_lr3e3"}),
    Hypothesis("runaway_lr1e2", "score_runaway", RUNAWAY,
               "as above, ten times the stated rate", "train.lr=1e-2 (undivided d_k = 1024 run)",
               {"undivided": "scale/runaway_lr1e2"}),
    Hypothesis("runaway_lr6e3", "score_runaway", RUNAWAY,
               "as above, between the two rates whose runs bracket the chapter's 5147",
               "train.lr=6e-3 (undivided d_k = 1024 run)", {"undivided": "scale/runaway_lr6e3"}),
    Hypothesis("runaway_betas095", "score_runaway", RUNAWAY,
               "the chapter used GPT-style Adam betas, whose shorter second-moment memory lets large updates through",
               "train.betas=[0.9,0.95] (undivided d_k = 1024 run)", {"undivided": "scale/runaway_betas095"}),
    Hypothesis("category_train_sentences", "winograd_category", (*CATEGORY, "winograd_category.block"),
               "the chapter scored sentences the models trained on, not held-out pairs",
               "accuracy read on the training sentences (the published runs)", read={"accuracy": "train_accuracy"}),
    Hypothesis("category_decay", "winograd_category", (*CATEGORY, "winograd_category.block"),
               "the average memorises its training pairs; stronger weight decay makes it copy the place present",
               "train.weight_decay=0.1 (both models)",
               {"average": "winograd/category_average_decay", "block": "winograd/category_block_decay"}),
    Hypothesis("category_average_long", "winograd_category", CATEGORY,
               "the chapter's average trained longer, past memorising its pairs",
               "train.steps=9000 (the average)", {"average": "winograd/category_average_long"}),
    Hypothesis("category_lr3e3", "winograd_category", (*CATEGORY, "winograd_category.block"),
               "the chapter's models trained at a higher learning rate", "train.lr=3e-3 (both models)",
               {"average": "winograd/category_average_lr3e3", "block": "winograd/category_block_lr3e3"}),
    Hypothesis("two_hop_one_head", "winograd_attention", TWO_HOP,
               "the chapter's maps are of one head per block; ours average four heads, which can split a circuit",
               "model.n_heads=1 (both blocks)", {"probe": "winograd/role_two_blocks_one_head"}),
    Hypothesis("crosser_one_head", "winograd_adjectives", ("winograd_adjectives.crosser",),
               "as above: one head per block", "model.n_heads=1 (both blocks)",
               {"probe": "winograd/role_two_blocks_one_head"}),
    Hypothesis("alibi_eight_heads", "position_extrapolation", ("position_extrapolation.alibi_256",),
               "the chapter's ALiBi had the paper's eight slopes 2^-1 … 2^-8; ours has four heads, 2^-2 … 2^-8",
               "model.n_heads=8 (ALiBi)", {"alibi": "position/alibi_eight_heads"}),
    Hypothesis("pre_warmup_no_clip", "norm_warmup", ("norm_warmup.pre_warmup",),
               "the chapter's stated settings, taken literally, do not clip gradients; our twelve-block runs clip the "
               "global norm at 1, a detail the chapter leaves unstated", "train.grad_clip=null (pre-norm, warmup)",
               {"pre_warmup": "norm/pre_warmup_no_clip"}),
    # the published measurement ran on another machine of the same kind: measured again here first (the
    # control), then at one thread, on the same machine
    Hypothesis("scaling_here", "attention_scaling", ("attention_scaling.ratio_to_4",),
               "the last doubling's extra time belongs to the machine that measured it (control: the same run here)",
               "explicit path measured again, 2 threads, on this pipeline's machine",
               {"explicit": "measure/attention_scaling_threads2"}),
    Hypothesis("scaling_one_thread", "attention_scaling", ("attention_scaling.ratio_to_4",),
               "the last doubling's extra time is two threads sharing memory bandwidth, not the computation",
               "explicit path measured at 1 thread, on the control's machine", {"explicit": "measure/attention_scaling_threads1"}),
)

def hypothesis_of(run: str) -> Hypothesis:
    """The hypothesis that trains a run."""
    return next(h for h in HYPOTHESES if run in h.runs.values())


REPRODUCED, CONCLUSION, TOWARD, UNDECIDED, RULED_OUT, NOT_MEASURED = FINDINGS = (
    "reproduced under this setting", "conclusion reproduced", "moves toward the chapter", "undecided", "ruled out",
    "not measured")
TOWARD_SHARE = 0.1  # "moves toward": the gap shrinks by more than this share of itself


def hypothesis_table(h: Hypothesis, inputs, published: dict) -> pd.DataFrame:
    """The family table under the hypothesis: its builder on the hypothesis's inputs, or the published
    table with columns read in place of others."""
    if h.read:
        df = published[h.table].copy()
        for column, source in h.read.items():
            for suffix in ("", SEEDS_SUFFIX):
                if f"{source}{suffix}" in df.columns:
                    df[f"{column}{suffix}"] = df[f"{source}{suffix}"]
        return df
    prefix = f"{h.id}:"
    return BUILDERS[h.table]({name.removeprefix(prefix): paths for name, paths in inputs.items()
                              if name.startswith(prefix)})


def gap(claim: dict, tables: dict) -> np.ndarray | None:
    """How far each seed's value is from the chapter's point: from its number (relative or absolute, as the
    rule compares) or from the rule's threshold (above / below); None where the rule has no distance."""
    rule = claim["rule"]
    value = evaluate(claim["value"], tables, claim["table"])
    value = value.reshape(-1, value.shape[-1])
    if rule["kind"] in ("relative", "absolute") and "to" not in rule:
        target = chapter_value(claim).reshape(-1, 1)
        distance = np.abs(value - target)
        if rule["kind"] == "relative":
            distance = distance / np.abs(target)
    elif rule["kind"] in ("above", "below") and isinstance(rule["than"], (int, float)):
        sign = 1 if rule["kind"] == "above" else -1
        distance = np.maximum(0.0, sign * (rule["than"] - value))
    else:
        return None
    return np.nanmean(distance, axis=0)


def gap_or_none(claim: dict, tables: dict) -> np.ndarray | None:
    try:
        return gap(claim, tables)
    except Missing:
        return None


def finding(verdict: str, before: np.ndarray | None, under: np.ndarray | None, paired: bool = False) -> str:
    by_verdict = {"MISSING": NOT_MEASURED, "MATCH": REPRODUCED, "CONCLUSION HOLDS": CONCLUSION}
    if verdict in by_verdict:
        return by_verdict[verdict]
    if before is None or under is None:
        return RULED_OUT
    _, low, high = shrinkage_interval(before, under, paired)
    return {"pass": TOWARD, "fail": RULED_OUT, "inconclusive": UNDECIDED}[str(stats.decide(low, high))]


def shrinkage(before: np.ndarray, under: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two sides compared: 0.9 × the gap before (what "moves toward" must fall below), the gap under."""
    return (1 - TOWARD_SHARE) * before, under


def shrinkage_interval(before: np.ndarray, under: np.ndarray, paired: bool) -> tuple[float, float, float]:
    """How far the gap under the hypothesis falls below 0.9 × the gap before: mean and 95 % interval (a
    gap that is not a number, a run that diverged, gives an interval that is not one either)."""
    shrunk, under = shrinkage(before, under)
    if paired:
        return tuple(float(x) for x in stats.mean_interval(shrunk - under))
    return stats.difference_interval(shrunk, under)


# whose seeds a plan adds (stats.GROWTH: a is the published runs, b the hypothesis's)
WHOSE_SEEDS = {"b": "", "a": " of the published runs", "both": " of both the published and its runs"}


def seeds_to_decide(found: str, before: np.ndarray | None, under: np.ndarray | None, paired: bool = False) -> str:
    """For an undecided finding, the cheapest way to decide it: seeds of the hypothesis's runs, of the published
    runs, or of both, whichever adds the fewest runs ("none": no number would); empty otherwise."""
    if found != UNDECIDED:
        return ""
    shrunk, under = shrinkage(before, under)
    if paired:
        margin = shrunk - under
        n = stats.seeds_to_decide(float(margin.mean()), float(margin.std(ddof=1)))
        return "none" if n is None else str(n)
    plan = stats.cheapest_plan_to_decide_difference(shrunk, under)
    if plan is None:
        return "none"
    grow, n = plan
    return f"{n}{WHOSE_SEEDS[grow]}"


def show_gap(claim: dict, g: np.ndarray | None) -> str:
    if g is None:
        return "–"
    text = summary(g)
    return f"{text} (relative)" if claim["rule"]["kind"] == "relative" else text


def made_by(h: Hypothesis, inputs, published: dict) -> dict:
    """Where a hypothesis's numbers were made: its own runs' commits, devices and seeds (the metrics.json of
    each, beside a Winograd probe too), the published rows it reads another way, or the devices its
    measurements record."""
    if h.read:
        rows = published[h.table]
        return {c: ",".join(dict.fromkeys(v for cell in rows[c].dropna().astype(str) for v in cell.split(",") if v))
                for c in ("commit", "device", "seed_ids") if c in rows}
    paths = [Path(p) for name in h.runs for p in inputs[f"{h.id}:{name}"]]
    metrics = [p.with_name("metrics.json") for p in paths if p.with_name("metrics.json").is_file()]
    if metrics:
        return provenance(load_runs(metrics))
    devices = {row.get("device") for p in paths for row in json.loads(p.read_text()).get("rows", [])}
    return {"device": ",".join(sorted(d for d in devices if d))}


@table("contradictions")
def contradictions(inputs) -> pd.DataFrame:
    claims = {c["id"]: c for c in load_claims(inputs["claims"][0])}
    published = load_tables(inputs["tables"])
    rows = []
    for h in HYPOTHESES:
        tables = {**published, h.table: hypothesis_table(h, inputs, published)}
        runs = [f"{name}: {run}" for name, run in h.runs.items()] or ["the published runs"]
        for claim_id in h.claims:
            claim = claims[claim_id]
            before, under = judge(claim, published), judge(claim, tables)
            gaps = gap_or_none(claim, published), gap_or_none(claim, tables)
            paired = bool(h.read)  # the published runs read another way: the same seeds on both sides
            found = finding(under["verdict"], *gaps, paired)
            rows.append({
                "claim": claim_id, "hypothesis": h.text, "setting": h.setting, "experiment": "; ".join(runs),
                "chapter": before["chapter"], "ours_before": before["reproduced"], "verdict_before": before["verdict"],
                "ours_under_hypothesis": under["reproduced"], "seeds": under["seeds"], "verdict": under["verdict"],
                "gap_before": show_gap(claim, gaps[0]), "gap_under_hypothesis": show_gap(claim, gaps[1]),
                "finding": found, "seeds_to_decide": seeds_to_decide(found, *gaps, paired), "hypothesis_id": h.id,
                **made_by(h, inputs, published),
            })
    return pd.DataFrame(rows)
