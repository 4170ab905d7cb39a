"""Experiments behind the claims the full ledger contradicts: for each, settings the chapter did not state,
each tried as an ordinary pipeline run (configs/experiment/... or configs/winograd/...), and what it does to
the claim; controls that read the published runs another way; the hypotheses written down but not run.

The hypotheses are data: configs/hypotheses.yaml (its header documents each field). A hypothesis rebuilds one
family table with the family's own builder, its runs in place of the published ones (a control: the published
table with columns read in place of others), and the ledger's rules judge the claim on that table as on the
published one (its number's word and its point's: `number_under_hypothesis`, `point_under_hypothesis`, beside
`number_before`, `point_before`). The finding reads those words and compares the two runs on the claim's distance
from the chapter's point, seed by seed (claims.compare: the scale, log ratio or difference, and the margin):
- the pairing: a hypothesis that changes only training settings (its config sets nothing outside `train:`,
  so seed k starts from the published seed k's weights and draws its batches) and trains no seed the
  published runs lack is compared seed by seed over its seeds (paired), as is a control; any other, on all
  seeds of both (Welch);
- the level: 1 − 5 %/looks of its runs' seed plan (configs/pipeline.yaml, seeds_per_run.plan), as the
  ledger's; its seed count is planned from its pilot seeds alone at 80 % power (stats.seeds_for_power);
- the finding, the first that fits: *reproduced* where the number AGREES under it and did not before (its
  point not failing); *the chapter's point holds* where the point HOLDS under it and did not before;
  *moves toward the chapter* where the interval of (0.9 × the distance before − the distance under it) lies
  wholly above 0; *ruled out* where the number DIFFERS under it or its point FAILS; *undecided* where the
  interval straddles 0 (with the seeds that would decide it at 80 % power); *does not move toward the
  chapter* where it lies wholly below 0 or there is no distance to shrink. An OPEN word brings nothing back:
  the ledger leaves a number or point OPEN where too few seeds show its outcome, 0 of 3 among them. *only
  through runs that failed* where a finding that comes closer does not hold on the seeds whose runs fit their
  own training data (a Winograd run below 100 % training accuracy, a run that diverged); *not measured* where
  the hypothesis's table lacks what the claim reads; *not run* for a hypothesis written down and not trained.
  A control's finding says what the published runs show read its way.
Every row says what else broke (the other claims of its table whose number no longer AGREES or point no longer
HOLDS, its runs that failed), and its wording (`says`) is generated from its numbers and the ledger's reason for
the number's word under it (`why_under_hypothesis`). A claim no hypothesis brings back is "not established"
(`explained`).
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from attnlab.claims import stats
from attnlab.claims.compare import (NOT_ESTABLISHED, Compared, one_set, per_element_mean, pilot_margin,
                                    show_distance, show_scaled)
from attnlab.claims.evaluate import Judgement, judge
from attnlab.claims.lr_sweep import UNDIVIDED_KINDS
from attnlab.claims.read import Missing, load_tables
from attnlab.claims.render import shortened_lists, show
from attnlab.claims.rules import NO_POINT, ClaimsError, load_claims, load_looks, load_plans
from attnlab.claims.stats import Sample
from attnlab.config import CONFIG_DIR
from attnlab.runs import load_runs
from attnlab.tables import BUILDERS, SEEDS_SUFFIX, counted, provenance, seed_ids, table, tally


HYPOTHESES_FILE = CONFIG_DIR / "hypotheses.yaml"


@dataclass(frozen=True)
class Hypothesis:
    """One entry of configs/hypotheses.yaml (its header says what each field means)."""
    id: str
    claims: tuple[str, ...]
    table: str  # the family table it rebuilds: its claims' (configs/claims.yaml), never written beside them
    text: str
    setting: str
    runs: dict = field(default_factory=dict)
    seeds: int = 3
    read: dict = field(default_factory=dict)
    control: bool = False
    trained: bool = True

    def seeds_under(self, profile_seeds: int) -> int:
        """How many seeds its runs train in a profile that trains `profile_seeds` of a published row."""
        return min(self.seeds, profile_seeds)


@functools.cache  # read when first asked, not at import
def load_hypotheses(path: Path = HYPOTHESES_FILE) -> tuple[Hypothesis, ...]:
    """The hypotheses, each with the table of its claims; ClaimsError for a claim not in configs/claims.yaml, claims
    of two tables (a hypothesis rebuilds one), or a table written beside them."""
    table_of = {claim["id"]: claim["table"] for claim in load_claims()}
    found = []
    for entry in yaml.safe_load(path.read_text(encoding="utf-8"))["hypotheses"]:
        where = f"{path.name}: hypothesis {entry.get('id')}"
        unknown = [c for c in entry.get("claims", ()) if c not in table_of]
        if "table" in entry or unknown or not entry.get("claims"):
            raise ClaimsError(f"{where}: claims lists ids of configs/claims.yaml, whose tables are its table"
                              + (f" (unknown: {unknown})" if unknown else ""))
        tables = sorted({table_of[c] for c in entry["claims"]})
        if len(tables) != 1:
            raise ClaimsError(f"{where} tests claims of {len(tables)} tables ({tables}): it rebuilds one family "
                              "table, so its claims are of one")
        found.append(Hypothesis(**{**entry, "claims": tuple(entry["claims"]), "table": tables[0]}))
    return tuple(found)


def trained() -> tuple[Hypothesis, ...]:
    """The hypotheses the workflow trains runs for (`trained` left true)."""
    return tuple(h for h in load_hypotheses() if h.trained)


def hypothesis_of(run: str) -> Hypothesis | None:
    """The trained hypothesis whose run this is, if one is."""
    return next((h for h in trained() if run in h.runs.values()), None)


# best first: a finding on the seeds whose runs fit their training data that is worse than on all seeds says the
# runs that failed made it (FAILED_RUNS)
FINDINGS = (REPRODUCED, POINT_HOLDS, TOWARD, UNDECIDED, NO_CLOSER, RULED_OUT, FAILED_RUNS, NOT_MEASURED, NOT_RUN,
            CONTROL) = ("reproduced under this setting", "the chapter's point holds under this setting",
                        "moves toward the chapter", "undecided", "does not move toward the chapter", "ruled out",
                        "only through runs that failed to train", "not measured", "not run", "control")
COMES_BACK = (REPRODUCED, POINT_HOLDS)
SWEEP_BAND, SWEEP_NOWHERE = "fits in a band of rates", "fits at no rate tried"  # the sqrt(d_k) sweep's rows


# ---------------------------------------------------------------- the hypothesis's table

def hypothesis_table(h: Hypothesis, inputs, published: dict, keep=None) -> pd.DataFrame:
    """The family table under the hypothesis: its builder on the hypothesis's inputs (`keep(path)`: only the
    seeds it keeps), or the published table with columns read in place of others."""
    if h.read:
        df = published[h.table].copy()
        for column, source in h.read.items():
            for suffix in ("", SEEDS_SUFFIX):
                if f"{source}{suffix}" in df.columns:
                    df[f"{column}{suffix}"] = df[f"{source}{suffix}"]
        return df
    prefix = f"{h.id}:"
    return BUILDERS[h.table]({name.removeprefix(prefix): [p for p in paths if keep is None or keep(p)]
                              for name, paths in inputs.items() if name.startswith(prefix)})


def changes_only_training(run: str) -> bool:
    """Does a hypothesis's run config set nothing outside `train:`? Then seed k starts from the weights of the
    published run's seed k and draws the same batches: the two are a pair."""
    path = CONFIG_DIR / (f"{run}.yaml" if run.startswith("winograd/") else f"experiment/{run}.yaml")
    return path.is_file() and set(yaml.safe_load(path.read_text()) or {}) - {"defaults"} <= {"train"}


# ---------------------------------------------------------------- the comparison in words

def comparison_of(margin: Sample, paired: bool) -> str:
    if len(margin.sets) > 1:
        return "Welch, " + " vs ".join(f"{n} seeds" for n in sorted(margin.sets, reverse=True))
    n = one_set(margin)
    if n is None:
        return "one value each"
    return f"paired over seeds {seed_ids(range(n))}" if paired else f"{n} seeds each (the same count: paired)"


# ---------------------------------------------------------------- findings

def finding(number: str, point: str, status: str | None, number_before: str = "DIFFERS",
            point_before: str = NO_POINT) -> str:
    """The finding from the ledger's words under the hypothesis (`number`, `point`; `number_before`,
    `point_before`: on the published runs) and the status of its margin (0.9 × the distance before − the distance
    under it: pass, fail, inconclusive; None: no distance). Only a word that is decided brings a claim back: AGREES,
    HOLDS, each where it was not before (an OPEN one may rest on an outcome no seed shows). Otherwise the margin
    says whether it comes closer; one that does not, where the number DIFFERS or the point FAILS under it, rules
    the setting out as the chapter's."""
    if number == "AGREES" and number_before != "AGREES" and point != "FAILS":
        return REPRODUCED
    if point == "HOLDS" and point_before != "HOLDS":
        return POINT_HOLDS
    if status == "pass":
        return TOWARD
    if number == "DIFFERS" or point == "FAILS":
        return RULED_OUT
    return UNDECIDED if status == "inconclusive" else NO_CLOSER


def words(number_before: str, point_before: str, number: str, point: str) -> str:
    """The ledger's words on the published runs → under the hypothesis: "number DIFFERS → OPEN, point HOLDS →
    HOLDS" (the point where the chapter states one)."""
    said = f"number {number_before} → {number}"
    return said if point_before == point == NO_POINT else f"{said}, point {point_before} → {point}"


def plan_text(margin_pilot: Sample | None, pilot: int, trained: int) -> str:
    """The seeds per row its finding needs at 80 % power, from its pilot seeds alone (stats.seeds_for_power)."""
    if margin_pilot is None or not margin_pilot.sets:
        return "–"
    n = int(stats.seeds_for_power(margin_pilot, smallest=True))
    planned = "none up to " + f"{stats.MAX_SEEDS:,}" if n == 0 else f"{n}"
    return f"{planned} ({stats.POWER_TEXT} power from {pilot} pilot seeds); {trained} trained"


def to_decide_text(found: str, margin: Sample, level: float) -> str:
    if found != UNDECIDED:
        return ""
    n = int(stats.seeds_for_power(margin, level, smallest=True))
    return f"none up to {stats.MAX_SEEDS:,}" if n == 0 else f"{n} seeds per run"


# ---------------------------------------------------------------- what else broke

def failed_runs(h: Hypothesis, inputs) -> dict[str, list[tuple[int, str]]]:
    """Per run of the hypothesis, its seeds that failed to train: (seed, why): a Winograd run below 100 %
    accuracy on its own training sentences, a language-model run that diverged."""
    out = {}
    for name, run in h.runs.items():
        failed = []
        for path in inputs.get(f"{h.id}:{name}", []):
            metrics = Path(path).with_name("metrics.json")
            if not metrics.is_file():
                continue
            m = json.loads(metrics.read_text())
            if "train" in m and isinstance(m["train"], dict) and m["train"].get("accuracy", 100.0) < 100.0:
                failed.append((int(m["seed"]), f"{m['train']['accuracy']:.0f} %"))
            elif m.get("diverged"):
                failed.append((int(m["seed"]), f"diverged at step {m.get('diverged_step')}"))
        if failed:
            out[run] = failed
    return out


def failed_text(failed: dict, inputs, h: Hypothesis) -> str:
    parts = []
    for name, run in h.runs.items():
        if run not in failed:
            continue
        n = len(inputs.get(f"{h.id}:{name}", []))
        accuracies = sorted(w for _, w in failed[run] if w.endswith("%"))
        what = (f"below 100 % training accuracy ({accuracies[0]}–{accuracies[-1]})" if accuracies
                else "diverged")
        parts.append(f"{run}: {len(failed[run])} of {n} seeds {what}")
    return "; ".join(parts)


def collateral(h: Hypothesis, claims: dict, published: dict, tables: dict) -> list[str]:
    """The other claims of its table whose number AGREES or whose point HOLDS on the published runs and no longer
    under the hypothesis."""
    out = []
    for claim in claims.values():
        if claim["table"] != h.table or claim["id"] in h.claims:
            continue
        before, after = judge(claim, published), judge(claim, tables)
        if before.number == "AGREES" != after.number or before.point == "HOLDS" != after.point:
            out.append(f"{claim['id']} {words(before.number, before.point, after.number, after.point)}")
    return out


# ---------------------------------------------------------------- one row

def looks_of(h: Hypothesis, plans: dict) -> tuple[int, int]:
    """(the looks its runs' seeds had, their pilot seeds) from their plans (one look, 3 pilot seeds without)."""
    planned = [plans[run] for run in h.runs.values() if run in plans]
    return (max((len(p["looks"]) for p in planned), default=1),
            min((int(p["pilot"]) for p in planned), default=h.seeds))


def not_run_row(h: Hypothesis, claim: dict, before: Judgement) -> dict:
    configs = "; ".join(f"{name}: {run}" for name, run in h.runs.items()) or "no config: " + h.setting
    return {"claim": claim["id"], "role": "not run", "hypothesis": h.text, "setting": h.setting,
            "experiment": configs, "chapter": before.chapter, "ours_before": before.reproduced,
            "number_before": before.number, "point_before": before.point, "finding": NOT_RUN,
            "says": f"not run: {h.text} ({h.setting}); what it would show is {NOT_ESTABLISHED}",
            "hypothesis_id": h.id}


def hypothesis_row(h: Hypothesis, claim: dict, claims: dict, inputs, published: dict, plans: dict,
                   claim_looks: dict) -> dict:
    before = judge(claim, published, claim_looks.get(claim["id"], 1))
    if not h.trained:
        return not_run_row(h, claim, before)
    tables = {**published, h.table: hypothesis_table(h, inputs, published)}
    looks, pilot = looks_of(h, plans)
    level = stats.level_for(looks)
    under = judge(claim, tables, looks)
    runs = [f"{name}: {run}" for name, run in h.runs.items()] or ["the published runs"]
    row = {"claim": claim["id"], "role": "control" if h.control else "hypothesis", "hypothesis": h.text,
           "setting": h.setting, "experiment": "; ".join(runs),
           "measure": "the claim's value",
           "chapter": before.chapter, "ours_before": before.reproduced, "number_before": before.number,
           "point_before": before.point, "ours_under_hypothesis": under.reproduced, "seeds": under.seeds,
           "number_under_hypothesis": under.number, "point_under_hypothesis": under.point,
           "why_under_hypothesis": under.why, "hypothesis_id": h.id}
    paired = bool(h.read) or all(changes_only_training(run) for run in h.runs.values())
    try:
        compared = Compared.of(claim, published, tables, paired)
    except Missing:
        return {**row, "finding": NOT_MEASURED, "says": f"not measured: the {h.table} table under it lacks what "
                                                       f"{claim['id']} reads"}
    margin = compared.margin()
    status = None
    if margin is not None:
        _, low, high = stats.sample_interval(margin, level)
        status = str(stats.decide(low, high))
    found = finding(under.number, under.point, status, before.number, before.point)
    row["distance_shrinks"] = status or "–"
    effect = compared.effect()
    _, e_low, e_high = stats.sample_interval(effect, level)
    relative = claim["rule"]["kind"] == "relative" and not compared.log
    row.update(scale="log ratio" if compared.log else "difference",
               comparison=comparison_of(margin if margin is not None else effect, compared.paired),
               level=f"{level * 100:.4g} %",
               effect=show_scaled(float(effect.point), float(e_low), float(e_high), compared.log),
               gap_before=show_distance(compared.distance_before, compared.log, relative),
               gap_under_hypothesis=show_distance(compared.distance_under, compared.log, relative))
    failed = failed_runs(h, inputs)
    conditioned = ""
    if failed and found in (*COMES_BACK, TOWARD, UNDECIDED):
        bad = {(run, seed) for run, seeds in failed.items() for seed, _ in seeds}
        bad_seeds = {seed for _, seed in bad}
        keep = lambda p: int(json.loads(Path(p).with_name("metrics.json").read_text())["seed"]) not in bad_seeds  # noqa: E731
        try:
            if not all(any(keep(p) for p in inputs[f"{h.id}:{name}"]) for name in h.runs):
                raise Missing("every seed has a run that failed")
            fit = {**published, h.table: hypothesis_table(h, inputs, published, keep)}
            kept = judge(claim, fit, looks)
            kept_compared = Compared.of(claim, published, fit, paired)
            kept_margin = kept_compared.margin()
            kept_status = None
            if kept_margin is not None:
                _, k_low, k_high = stats.sample_interval(kept_margin, level)
                kept_status = str(stats.decide(k_low, k_high))
            kept_found = finding(kept.number, kept.point, kept_status, before.number, before.point)
            conditioned = (f"on the {kept.seeds} seeds whose runs all fit their training data: {kept.reproduced} "
                           f"(number {kept.number}, point {kept.point}: {kept_found})")
            if FINDINGS.index(kept_found) > FINDINGS.index(found) and kept_found not in COMES_BACK:
                found = FAILED_RUNS
        except Missing:
            conditioned = "no seed whose runs all fit their training data"
            found = FAILED_RUNS
    also = [*collateral(h, claims, published, tables)]
    broke = failed_text(failed, inputs, h)
    if broke:
        also.insert(0, broke)
    if h.control:
        found = CONTROL
    row.update(finding=found, also_broke="; ".join(also) or "nothing the table shows", conditioned=conditioned,
               seeds_planned=plan_text(pilot_margin(claim, published, tables, paired, pilot), pilot,
                                       int(under.seeds or 0)) if margin is not None and not h.control else "–",
               seeds_to_decide=to_decide_text(found, margin, stats.level_for(looks + 1)) if margin is not None else "")
    row["says"] = says(row, h, compared)
    return {**row, **made_by(h, inputs, published)}


def says(row: dict, h: Hypothesis, compared: Compared) -> str:
    """The finding in words, from the row's numbers."""
    found = row["finding"]
    if np.size(compared.before.point) > 1:  # a list: its elements' mean, seed by seed
        values = [per_element_mean(v, lambda x: x) for v in (compared.before, compared.under)]
        shown = [f"mean over its {np.size(compared.before.point)} elements {show(values[0].point, values[0].sd())}",
                 show(values[1].point, values[1].sd())]
    else:
        shown = [row["ours_before"], row["ours_under_hypothesis"]]
    level = f", {row['level']} interval" if compared.before.sets or compared.under.sets else ""
    change = (f"{shown[0]} → {shown[1]} against the chapter's {row['chapter']}; "
              f"the {row['scale']} changes by {row['effect']} ({row['comparison']}{level})")
    if compared.distance_before is not None:
        change += f"; the distance from the chapter {row['gap_before']} → {row['gap_under_hypothesis']}"
    to_decide = row["seeds_to_decide"]
    moved = words(row["number_before"], row["point_before"], row["number_under_hypothesis"],
                  row["point_under_hypothesis"])
    ruled = " and ".join(filter(None, (
        "the chapter's number lies outside what our seeds give under it"
        if row["number_under_hypothesis"] == "DIFFERS" else "",
        "the chapter's point fails under it" if row["point_under_hypothesis"] == "FAILS" else "")))
    lead = {REPRODUCED: f"reproduced under {h.setting} ({moved})",
            POINT_HOLDS: f"the chapter's point holds under {h.setting} ({moved})",
            TOWARD: f"moves toward the chapter by more than a tenth of the distance ({moved})",
            RULED_OUT: f"ruled out: {ruled} ({moved})"
                       + {"fail": ", and the distance does not shrink by a tenth",
                          "inconclusive": ", whether or not the distance shrinks by a tenth (undecided)"}.get(
                           row.get("distance_shrinks"), ""),
            UNDECIDED: f"undecided ({moved}): " + (
                f"about {to_decide} would decide whether the distance shrinks by a tenth ({stats.POWER_TEXT} power)"
                if not to_decide.startswith("none") else
                f"no count of seeds up to {stats.MAX_SEEDS:,} decides whether the distance shrinks by a tenth (it "
                "sits on that edge)"),
            NO_CLOSER: "does not move toward the chapter: " + ("the distance does not shrink by a tenth"
                                                               if row.get("distance_shrinks") == "fail" else
                                                               "the claim has no distance from it to shrink")
                       + f" ({moved})",
            FAILED_RUNS: f"comes closer only through runs that failed to train ({moved} on all seeds)",
            CONTROL: f"control, not the chapter's setting: {h.setting} ({moved})"}[found]
    if row["why_under_hypothesis"]:
        lead += f"; the number under it: {row['why_under_hypothesis']}"
    tail = [f"{row['conditioned']}" if row["conditioned"] else "", f"what else broke: {row['also_broke']}"]
    return "; ".join(filter(None, [lead, change, *tail]))


def made_by(h: Hypothesis, inputs, published: dict) -> dict:
    """Where a hypothesis's numbers were made: its own runs' commits, devices and seeds (the metrics.json of
    each, beside a Winograd probe too), the published rows it reads another way, or the devices its
    measurements record."""
    if h.read:
        rows = published[h.table]
        found = {c: counted(tally(rows[c])) for c in ("commit", "device") if c in rows}
        if "seed_ids" in rows:
            found["seed_ids"] = ",".join(dict.fromkeys(v for cell in rows["seed_ids"].dropna().astype(str)
                                                       for v in cell.split(",") if v))
        ends = [d for cell in rows.get("run_dates", pd.Series(dtype=str)).dropna() for d in str(cell).split(" – ")]
        if ends:
            found["run_dates"] = f"{min(ends)} – {max(ends)}"
        return found
    paths = [Path(p) for name in h.runs for p in inputs[f"{h.id}:{name}"]]
    metrics = [p.with_name("metrics.json") for p in paths if p.with_name("metrics.json").is_file()]
    if metrics:
        return provenance(load_runs(metrics))
    devices = {row.get("device") for p in paths for row in json.loads(p.read_text()).get("rows", [])}
    return {"device": ",".join(sorted(d for d in devices if d))}


# ---------------------------------------------------------------- the sqrt(d_k) sweep's rows

def sweep_rows(sweep: pd.DataFrame) -> list[dict]:
    """The sqrt(d_k) sweep (table sqrt_dk_sweep) as rows of this table: one per chapter number, the band of
    learning rates whose runs fit it, and whether one rate fits them all."""
    rows = []
    joint = sweep[sweep["claim"] == "all"]
    answer = joint["finding"].iloc[0] if len(joint) else NOT_ESTABLISHED
    for r in sweep[~sweep["claim"].isin(("all", UNDIVIDED_KINDS))].itertuples():
        found = (NOT_ESTABLISHED if r.band == NOT_ESTABLISHED else SWEEP_NOWHERE if math.isnan(r.band_low)
                 else SWEEP_BAND)
        rows.append({"claim": r.claim, "role": "hypothesis", "hypothesis": "one learning rate, unstated, reproduces "
                     "every sqrt(d_k) number of the chapter", "setting": f"train.lr swept ({r.rates})",
                     "experiment": "table sqrt_dk_sweep", "measure": r.number, "chapter": r.chapter,
                     "scale": r.scale, "finding": found,
                     "says": f"{r.number}: " + (f"fits at {r.band}" if isinstance(r.band, str)  # the divided head's
                                                    else f"soft at {r.fits_at}")  # row is seeds, not a band
                             + f"; one rate for all: {answer}",
                     "hypothesis_id": "one_rate", "seeds_per_rate": r.seeds, "seed_ids": r.seed_ids,
                     "commit": r.commit, "device": r.device})
    return rows


# ---------------------------------------------------------------- the table

def explained(rows: list[dict]) -> dict[str, str]:
    """Per claim, the settings under which it comes back (not a control, not through failed runs), else
    "not established"."""
    out = {}
    for row in rows:
        if row.get("role") == "hypothesis" and row["finding"] in COMES_BACK:
            out.setdefault(row["claim"], []).append(f"{row['finding']}: {row['setting']}")
    return {claim: "; ".join(found) for claim, found in out.items()}


# the header row of a claim in the reader's view: it names no hypothesis (its index there, the CSV row it shows)
CLAIM_ROW = -1


def by_claim(df: pd.DataFrame, chapter: dict) -> pd.DataFrame:
    """The reader's view: each claim once (the chapter's number, ours before), under it what was tried (the
    hypothesis, ours under it, the finding), a claim's rows together; the index is the CSV row a line shows
    (CLAIM_ROW for a claim's own line); a long list cut to its first values. Everything else about a row, and
    every value, is in the provenance view."""
    lines, index = [], []
    for claim, rows in df.groupby("claim", sort=False):
        first = rows.iloc[0]
        lines.append({"claim, then what was tried": claim, "chapter": first["chapter"],
                      "ours": shortened_lists(str(first["ours_before"])), "finding": ""})
        index.append(CLAIM_ROW)
        for i, row in rows.iterrows():
            lines.append({"claim, then what was tried": f"↳ {row['hypothesis']}", "chapter": "",
                          "ours": shortened_lists(str(row["ours_under_hypothesis"])), "finding": row["finding"]})
            index.append(i)
    return pd.DataFrame(lines, index=index).fillna("")


@table("contradictions", view=by_claim, place=270,
       reads=lambda jobs, variant: jobs.contradiction_inputs(variant, ("sqrt_dk_sweep",)),
       code_files=lambda jobs: jobs.hypothesis_files(), reads_tables=1)
def contradictions(inputs) -> pd.DataFrame:
    claims = {c["id"]: c for c in load_claims(inputs["claims"][0])}
    published = load_tables(inputs["tables"])
    profile = yaml.safe_load(Path(inputs["profile"][0]).read_text())["name"]
    plans = load_plans(profile, inputs["pipeline"][0])
    claim_looks = load_looks(list(claims.values()), plans)
    rows = [hypothesis_row(h, claims[claim_id], claims, inputs, published, plans, claim_looks)
            for h in load_hypotheses() for claim_id in h.claims]
    if "sqrt_dk_sweep" in published:
        rows += sweep_rows(published["sqrt_dk_sweep"])
    why = explained(rows)
    for row in rows:
        row["explained"] = why.get(row["claim"], NOT_ESTABLISHED)
    return pd.DataFrame(rows)
