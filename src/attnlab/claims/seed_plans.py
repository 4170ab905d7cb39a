"""Seed plans from the pilot seeds: the seeds per row that decide each claim a row is for with 80 % power at its
design margin, declared before training (configs/pipeline.yaml, seeds_per_run.plan; python -m attnlab.claims plan).
"""

from __future__ import annotations

import numpy as np

from attnlab.claims import stats
from attnlab.claims.evaluate import margin_of, margins_of, printed_tolerance, target_of
from attnlab.claims.read import estimate, uses_lead
from attnlab.claims.stats import Sample
from attnlab.tables import SEEDS_SUFFIX, per_seed

def design_margin(claim: dict) -> np.ndarray | None:
    """The margin a seed plan is sized at, declared before training (configs/pipeline.yaml, seeds_per_run): one
    tolerance of the claim's kind at the chapter's value (configs/claims.yaml, `tolerances:`) with half its last
    printed digit, the smallest departure those tolerances are set to tell apart. None for a claim without one (an
    exact fact, a bound, an outcome per seed: judged on a share, not sized by a margin)."""
    rule = claim["rule"]
    if rule["kind"] not in ("relative", "absolute") or uses_lead(claim["value"]):
        return None
    try:
        return printed_tolerance(claim, rule)
    except (TypeError, ValueError):  # a chapter value in words
        return None


def at_margin(s: Sample, margin) -> Sample:
    """s with its estimate set to the design margin and its seeds' spread kept: a plan reads the pilot's spread only."""
    point = np.broadcast_to(np.asarray(margin, dtype=float), s.point.shape).copy()
    return Sample(point, {n: v - v.mean(axis=-1, keepdims=True) + point[..., None] for n, v in s.sets.items()})


def design_seeds(claim: dict, tables: dict) -> int | None:
    """The seeds per row that decide a claim with 80 % power if its truth lay one design margin (design_margin) past
    each edge its checks decide at — for the chapter's one run, its number one margin outside the tolerance; for a
    comparison or bound of our mean, the mean one margin from the bound — from the spread of the rows' seeds alone
    (their mean unused): the largest count any of its checks needs, a check that no count up to stats.MAX_SEEDS
    decides left out (a number whose tolerance is narrower than one run's spread: UNRESOLVED at any count). 0 where
    nothing is sized by a margin (no margin, no seeds); None where no check of it is decided at any count."""
    margin = design_margin(claim)
    if margin is None:
        return 0
    value = estimate(claim["value"], tables, claim["table"])
    if not value.sets:
        return 0
    needed, rule, conclusion = [], claim["rule"], claim.get("conclusion")
    if "to" not in rule:  # the chapter's one run against one of ours
        gap = stats.combine(np.subtract, value, target_of(rule, claim, tables))
        needed.append(stats.one_draw_seeds(at_margin(gap, 2 * margin), margin))
    # the checks of our mean: a rule comparing two of our values, and a conclusion that does not read a lead
    checks = [(rule, value)] if "to" in rule else []
    if conclusion and not uses_lead(conclusion.get("value")):
        checks.append((conclusion, estimate(conclusion["value"], tables, claim["table"]) if "value" in conclusion
                       else value))
    for check, c_value in checks:
        if check["kind"] == "exact":
            continue
        margins = [margin_of(*m) if isinstance(m, tuple) else m for m in margins_of(check, c_value, claim, tables)[0]]
        for m in margins:
            if m.sets:
                needed.append(stats.seeds_for_power(at_margin(m, margin)))
    counts = np.concatenate([np.ravel(n) for n in needed]) if needed else np.zeros(0, dtype=int)
    if len(counts) and np.all(counts == 0):
        return None
    return int(counts.max()) if len(counts) else 0


def pilot_tables(tables: dict, pilot: int) -> dict:
    """The tables as their first `pilot` seeds left them: every `<col>_seeds` cell cut to those seeds and its
    mean column recomputed."""
    out = {}
    for table_id, df in tables.items():
        df = df.copy()
        for column in [c for c in df.columns if c.endswith(SEEDS_SUFFIX)]:
            mean_column = column[: -len(SEEDS_SUFFIX)]
            cut = [per_seed(cell)[:pilot] for cell in df[column]]
            df[column] = [";".join(repr(v) for v in seeds) if len(seeds) > 1 else "" for seeds in cut]
            if mean_column in df.columns:
                df[mean_column] = [float(np.mean(s)) if s else mean for s, mean in zip(cut, df[mean_column])]
        out[table_id] = df
    return out


def seed_plans(claims: list[dict], tables: dict, plans: dict) -> dict[str, dict]:
    """Per planned row (configs/pipeline.yaml, seeds_per_run.plan.<profile>): from the spread of its pilot seeds
    alone, `planned` — the seeds per row at which every claim it is for is decided with 80 % power at its design
    margin (design_seeds; at least the pilot) — and `beyond`, its claims that no count up to stats.MAX_SEEDS
    decides at that margin."""
    by_id, cut, out = {c["id"]: c for c in claims}, {}, {}
    for run, plan in plans.items():
        pilot = int(plan["pilot"])
        if pilot not in cut:
            cut[pilot] = (pilot_tables(tables, pilot), {})
        pilot_set, needs = cut[pilot]
        for claim_id in plan["for"]:
            if claim_id not in needs:
                needs[claim_id] = design_seeds(by_id[claim_id], pilot_set)
        counts = [needs[c] for c in plan["for"]]
        out[run] = {"planned": max([pilot, *(n for n in counts if n)]),
                    "beyond": [c for c, n in zip(plan["for"], counts) if n is None]}
    return out
