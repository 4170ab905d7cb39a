"""Checking a claim's value (claims.read reads it out of the tables) and the verdict: `judge` gives one claim's
Judgement (the ledger's row), `ledger` every claim's; attnlab.claims.stats says how each check decides.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd
from omegaconf import OmegaConf

from attnlab.claims import stats
from attnlab.claims.read import Missing, columns_read, estimate, select, table_reads, uses_lead
from attnlab.claims.reference import load as load_reference, printed_number, reference_file, regression
from attnlab.claims.render import describe_check, describe_claim, show, show_chapter, show_number
from attnlab.claims.rules import (CONCLUSION_VERDICTS, NO_CONCLUSION, NUMBER_VERDICTS, REGRESSION_VERDICTS, ROOT,
                                  TARGET_CHECKS, TWIN_BEYOND_SPREAD, TWIN_NOT_RUN, ClaimsError, load_looks,
                                  overall_verdict, rounding)
from attnlab.claims.stats import Sample
from attnlab.tables import SEEDS_SUFFIX

MIN_REPEATS = 5  # a timing is judged on at least this many repeated measurements


# ---------------------------------------------------------------- checks

@dataclass
class Outcome:
    status: str                   # "pass", "fail", "inconclusive"; a one-run number or an outcome of one model:
                                  # also "consistent", "unresolved", "unjudged" (rules.NUMBER_VERDICTS)
    margin: str                   # how far the value is from the chapter (or past the bound), for the ledger
    share: str = ""               # "k/n": seeds in which the outcome holds, where the check is judged on them
    to_decide: int = 0            # seeds per row that would decide it with 80 % power (0: no count would)
    why: str = ""                 # what keeps it undecided, where that is not the seeds' spread
    band: str = ""                # a one-run number: the chapter values it accepts, the shift it catches (stats.band)


@dataclass(frozen=True)
class Judging:
    """How a claim is judged: its level (after its rows' looks), the next look's (what a plan is sized at), and the
    range of a bounded quantity."""
    level: float = stats.LEVEL
    next_level: float = stats.level_for(2)
    bounds: tuple[float, float] | None = None
    seeded: bool = False  # a value made over seeds (a trained claim): one seed, or no spread, judges no miss
    necessary: bool = False  # an outcome per seed the chapter argues holds in every model (stats.decide_necessary)


def overall(statuses) -> str:
    """Every element must pass; one clear failure fails the whole."""
    statuses = np.asarray(statuses)
    for status in ("fail", "inconclusive", "consistent"):
        if np.any(statuses == status):
            return status
    return "pass"


def run_check(check: dict, value: Sample, claim: dict, tables: dict, judging: Judging = Judging(),
              by_share: bool = False, joint: list = ()) -> Outcome:
    """A check's outcome. `joint`: margins that must hold in the same seed too, where the check is judged on its
    share of seeds (the chapter's one model showed its number and its conclusion together)."""
    kind = check["kind"]
    if kind in TARGET_CHECKS:
        target = target_of(check, claim, tables)
        if target.point.ndim and value.point.shape != target.point.shape:
            return Outcome("fail", f"shape {value.point.shape} vs the chapter's {target.point.shape}")
        if kind == "exact":  # analytic: no seeds, only the chapter's printed precision
            decimals = check.get("decimals")
            a, b = value.point, target.point
            if decimals is not None:
                a, b = np.round(a, decimals), np.round(b, decimals)
            gap = np.max(np.abs(a - b))
            return Outcome("pass", "exact") if gap == 0 else Outcome("fail", f"off by {show_number(float(gap))}")
        if "to" not in check and (value.sets or judging.seeded) and not by_share:  # the chapter's one run
            return one_run_outcome(value, claim, check, judging)
    margins, text = margins_of(check, value, claim, tables, judging)
    if by_share:
        return share_outcome([*margins, *joint], judging)
    return interval_outcome(margins, text, judging)


def margins_of(check: dict, value: Sample, claim: dict, tables: dict,
               judging: Judging = Judging()) -> tuple[list, str | None]:
    """A check's margins, >= 0 passing — a tolerance's two edges around its target, a bound's, an ordering's steps —
    and, where it has a target, the gap in tolerances."""
    kind = check["kind"]
    if kind not in TARGET_CHECKS:
        return bound_margins(check, value, operands(check, claim, tables)), None
    target = target_of(check, claim, tables)
    scale = check["tolerance"]
    tolerance = stats.combine(lambda t: scale * np.abs(t) if kind == "relative" else np.full_like(t, scale), target)
    gap = stats.paired(np.subtract, value, target)
    return ([stats.paired(np.subtract, tolerance, gap), stats.paired(np.add, tolerance, gap)],
            gap_text(gap, tolerance.point, judging))


def operands(check: dict, claim: dict, tables: dict):
    """A check's expression at `key` (its `to`, `than`, `low`, `high`), read from the claim's tables."""
    return lambda key: estimate(check[key], tables, claim["table"])


def target_of(check: dict, claim: dict, tables: dict) -> Sample:
    """A target check's target: its `to` expression, or the chapter's number."""
    if "to" in check:
        return operands(check, claim, tables)("to")
    return Sample.constant(np.asarray(claim["chapter"], dtype=float))


def printed_tolerance(claim: dict, check: dict) -> np.ndarray:
    """A relative or absolute check's tolerance at the chapter's value, widened by half its last printed digit."""
    chapter = np.asarray(claim["chapter"], dtype=float)
    return check["tolerance"] * (np.abs(chapter) if check["kind"] == "relative" else 1.0) + rounding(claim) / 2


def one_run_outcome(value: Sample, claim: dict, check: dict, judging: Judging) -> Outcome:
    """The chapter printed one run: Δ against the spread of one run of ours (stats.one_draw), the tolerance
    widened by half the last digit the chapter printed. Undecided, it is INCONCLUSIVE where more seeds would decide
    it, UNRESOLVED where the tolerance is narrower than one run can show (stats.resolvable), CONSISTENT otherwise;
    with no spread (one seed, or seeds that all agree) a miss is not judged. Its band: the chapter values the test
    accepts, and the shift it catches 80 % of the time (stats.band)."""
    chapter = np.asarray(claim["chapter"], dtype=float)
    tolerance = printed_tolerance(claim, check)
    gap = stats.combine(np.subtract, value, Sample.constant(chapter))
    tolerance = np.broadcast_to(tolerance, gap.point.shape)
    status, half = stats.one_draw(gap, tolerance, judging.level)
    with np.errstate(divide="ignore", invalid="ignore"):
        in_tol = np.abs(gap.point) / tolerance
    if not np.isfinite(in_tol).any():
        return Outcome("fail", "not a number")
    worst = np.unravel_index(np.nanargmax(in_tol), in_tol.shape)
    text = f"Δ {float(in_tol[worst]):.2g} tol ± {float(np.broadcast_to(half / tolerance, in_tol.shape)[worst]):.2g} (one run)"
    low, high, catches, sd = (float(np.broadcast_to(x, in_tol.shape)[worst]) for x in
                              stats.band(value.point, gap, tolerance, judging.level))
    if judging.bounds is not None:  # a chapter value outside the quantity's range is no value at all
        low, high = max(low, judging.bounds[0]), min(high, judging.bounds[1])
    band = (f"accepts [{show_number(low)}, {show_number(high)}]; catches a shift of {show_number(catches)}"
            + (f" ({catches / sd:.1f} sd)" if sd > 0 else "") + f" {stats.POWER_TEXT} of the time")
    spread, _ = gap.draw_error()
    if np.any((spread == 0) & (status == "fail")):  # nothing to widen a miss by: no spread, no judgement
        return Outcome("unjudged", text, why="our seeds give it no spread (one seed, or seeds that all agree): "
                                              "a miss is not judged")
    found = overall(np.where(status == "undecided", "inconclusive", status))
    if found != "inconclusive":
        return Outcome(found, text, band=band)
    plans = stats.one_draw_seeds(gap, tolerance, judging.next_level)
    undecided = plans[status == "undecided"]
    if np.all(undecided > 0):
        return Outcome("inconclusive", text, to_decide=int(undecided.max()), band=band)
    resolvable = stats.resolvable(gap, tolerance, judging.level)[status == "undecided"]
    return Outcome("consistent" if np.all(resolvable) else "unresolved", text, band=band)


def bound_margins(check: dict, value: Sample, operand) -> list:
    """above / below / between / increasing / decreasing: how far the value clears its bound, >= 0 passes, per
    seed: (sign, value, bound) for the margin sign·(value − bound), or the margin itself (an ordering's steps)."""
    kind = check["kind"]
    if kind == "between":
        return [(1, value, operand("low")), (-1, value, operand("high"))]
    if kind in ("above", "below"):
        bound = stats.combine(lambda b: float(check.get("factor", 1.0)) * b, operand("than"))
        return [(1 if kind == "above" else -1, value, bound)]
    # increasing / decreasing: each step by at least `by`, a fraction of the value before it
    if value.point.ndim == 0 or len(value.point) < 2:
        raise ClaimsError(f"{kind} needs a list of two or more values, got shape {value.point.shape}")
    by = float(check.get("by", 0.0))
    steps = stats.combine(lambda v: v[1:] - v[:-1] * (1 + by) if kind == "increasing" else v[:-1] * (1 - by) - v[1:],
                          value)  # the list's elements on the first axis, the seeds on the last
    return [steps]


def margin_of(sign: int, value: Sample, bound: Sample) -> Sample:
    return stats.paired(lambda v, b: sign * (v - b), value, bound)


def margin_interval(sign: int, value: Sample, bound: Sample, judging: Judging):
    """(mean, low, high) of a margin: a bounded value against a fixed bound keeps the value's interval inside its
    range (stats.bounded_interval); otherwise the mean's interval over every seed set (Welch)."""
    if judging.bounds is not None and not bound.sets:
        _, low, high = stats.sample_interval(value, judging.level, judging.bounds)
        ends = sign * (low - bound.point), sign * (high - bound.point)
        return sign * (value.point - bound.point), np.minimum(*ends), np.maximum(*ends)
    return stats.sample_interval(margin_of(sign, value, bound), judging.level)


def interval_outcome(margins: list, text: str | None, judging: Judging) -> Outcome:
    """Each margin's mean with its interval decides, element by element."""
    statuses, plans, tightest = [], [], None
    for margin in margins:
        if isinstance(margin, tuple):
            mean, low, high = margin_interval(*margin, judging)
            margin = margin_of(*margin)
        else:
            mean, low, high = stats.sample_interval(margin, judging.level)
        status = stats.decide(low, high)
        statuses.append(status)
        if np.any(status == "inconclusive"):
            plans.append(stats.seeds_for_power(margin, judging.next_level)[status == "inconclusive"])
        if np.isfinite(mean).any():
            i = np.unravel_index(np.nanargmin(mean), np.shape(mean))
            if tightest is None or mean[i] < tightest[0]:
                tightest = (float(mean[i]), float(high[i] - mean[i]))
    statuses = np.broadcast_arrays(*statuses)
    status = overall(np.where(np.any([s == "fail" for s in statuses], axis=0), "fail",
                              np.where(np.all([s == "pass" for s in statuses], axis=0), "pass", "inconclusive")))
    if text is None:
        if tightest is None:
            text = "not a number"
        else:
            text = (f"{'clears' if tightest[0] >= 0 else 'misses'} by {show_number(abs(tightest[0]))}"
                    + (f" ± {show_number(tightest[1])}" if tightest[1] > 0 else ""))
    needed = np.concatenate(plans) if plans else np.zeros(0, dtype=int)
    plan = int(needed.max()) if status == "inconclusive" and len(needed) and np.all(needed > 0) else 0
    return Outcome(status, text, to_decide=plan)


def share_outcome(margins: list, judging: Judging) -> Outcome:
    """The outcome per seed (every element, every edge): the chapter showed it in one model, so it is judged as a
    draw (stats.decide_draw): MATCH where most of our seeds show it, CONTRADICTED only where Wilson's upper bound
    of its share is below RARE, otherwise a plausible draw — a minority outcome, k of n seeds."""
    try:
        per_seed = [(margin_of(*m) if isinstance(m, tuple) else m).per_seed() for m in margins]
    except ValueError as why:
        raise ClaimsError(f"an outcome per seed reads one seed set: {why}")
    holds = np.all([np.all(m >= 0, axis=tuple(range(m.ndim - 1))) for m in per_seed], axis=0)
    holds = np.broadcast_to(holds, (max(m.shape[-1] for m in per_seed),))
    k, n = int(holds.sum()), int(holds.size)
    if judging.necessary:
        status = stats.decide_necessary(k, n, judging.level)
        text = f"holds in {k} of {n} seeds, fails in {n - k} (necessary: it must hold in every model)"
    else:
        status = stats.decide_draw(k, n, judging.level)
        said = {"pass": "a majority outcome", "fail": "a rare outcome", "consistent": "a minority outcome"}[status]
        text = f"{said}, {k} of {n} seeds"
    if n < 2:  # one value: a fact where nothing is seeded; one seed of a trained run judges no share
        if judging.seeded:
            return Outcome("unjudged", f"holds in {k} of 1 seed", share=f"{k}/{n}",
                           why="one seed: an outcome's share is not judged")
        return Outcome("pass" if k else "fail", "holds" if k else "does not hold")
    return Outcome(status, text, share=f"{k}/{n}")


def gap_text(gap: Sample, tolerance: np.ndarray, judging: Judging) -> str:
    """The worst element's distance from the target in tolerances, ± its interval."""
    mean, low, high = stats.sample_interval(gap, judging.level)
    tol = np.broadcast_to(tolerance, np.shape(mean))
    with np.errstate(divide="ignore", invalid="ignore"):
        in_tol = np.abs(mean) / tol
    if not np.isfinite(in_tol).any():
        return "not a number"
    worst = np.unravel_index(np.nanargmax(in_tol), in_tol.shape)
    half = float(high[worst] - mean[worst]) / float(tol[worst])
    return f"{float(in_tol[worst]):.2g} tol" + (f" ± {half:.2g}" if half > 0 else "")


# ---------------------------------------------------------------- verdicts

@dataclass
class Judgement:
    """One claim judged: the ledger's row (`row()`: its columns, in their order) and, for an INCONCLUSIVE claim,
    the seeds per row that would decide it."""
    id: str
    kind: str                # trained (a value made over seeds) or analytic
    table: str
    statement: str
    chapter: str             # the chapter's value, as printed
    reproduced: str          # ours: mean ± the sd of one run (a value of two modes: each)
    rule: str                # the rule, in words
    headline: bool
    interval: str            # the mean's interval at the claim's level
    seeds: int               # the fewest seeds of the rows read
    seed_sets: str           # the seed counts of the rows read, where they differ
    looks: int               # the looks its rows had (their level: stats.level_for)
    seed_share: str          # k/n: seeds in which an outcome holds (a value of two modes: the nearest mode's)
    would_decide: str        # what would decide it (more seeds per row, repeated timings), in words
    band: str                # a one-run number: the chapter values it accepts, the shift it catches
    number: str              # the number's verdict (rules.NUMBER_VERDICTS)
    conclusion: str          # the conclusion's (rules.CONCLUSION_VERDICTS, or NO CONCLUSION)
    verdict: str             # the claim's, from both (rules.overall_verdict)
    margin: str              # how far the value is from the chapter (or past the bound)
    note: str                # why, in words
    reason: str              # configs/claims.yaml's reason, for a claim left CONTRADICTED or INCONCLUSIVE
    # an INCONCLUSIVE claim: the seeds per row that decide it with 80 % power (None where no count up to
    # stats.MAX_SEEDS does, or more seeds are not what it needs); 0 for a claim decided
    to_decide: int | None = field(default=0, repr=False)

    def row(self) -> dict:
        """The ledger's row."""
        row = asdict(self)
        del row["to_decide"]
        return row


def summary(value) -> str:
    """mean ± sd over seeds (a Sample: the sd of one run, every seed set's spread added)."""
    if isinstance(value, Sample):
        return show(value.point, value.sd())
    sd = value.std(axis=-1, ddof=1) if value.shape[-1] > 1 else 0.0
    return show(value.mean(axis=-1), sd)


def interval_text(value: Sample, judging: Judging) -> str:
    """The mean's interval at the claim's level (empty without seeds)."""
    if not value.sets:
        return ""
    _, low, high = stats.sample_interval(value, judging.level, judging.bounds)
    return show_interval(low, high)


def show_interval(low, high) -> str:
    if np.ndim(low) == 0:
        return f"[{show_number(float(low))}, {show_number(float(high))}]"
    return "[" + ", ".join(show_interval(lo, hi) for lo, hi in zip(low, high)) + "]"


def seeded(claim: dict, tables: dict) -> bool:
    """Is the claim about a value made over seeds — it reads a table of trained runs or seeded measurements, and
    is not an exact fact (a parameter count) read off one? Analytic otherwise."""
    if claim["rule"]["kind"] == "exact":
        return False
    read = columns_read([claim["value"], claim["rule"], claim.get("conclusion")], claim["table"])
    return any(t in tables and ("seeds" in tables[t] or any(c.endswith(SEEDS_SUFFIX) for c in tables[t]))
               for t, _ in read)


def timed_short(claim: dict, expressions, value: Sample) -> bool:
    """Does a check read a timing (the claim's `timing` columns) measured fewer than MIN_REPEATS times?"""
    timings = set(claim.get("timing", ()))
    read = {c for _, c in columns_read(expressions, claim["table"])}
    return bool(timings & read) and max(value.counts, default=1) < MIN_REPEATS


def split_modes(seeds: np.ndarray) -> list[np.ndarray]:
    """A value with two outcomes, its seeds cut at the widest gap between their sorted values (two seeds at least on
    each side): the lower mode's seeds and the upper's."""
    order = np.sort(seeds)
    cut = order[int(np.argmax(np.diff(order)[1:-1])) + 2]
    return [seeds[seeds < cut], seeds[seeds >= cut]]


def nearest_mode(value: Sample, claim: dict) -> tuple[Sample, str, str]:
    """For a claim of `modes: 2` (two outcomes among our seeds, a mean of which describes neither): the mode nearest
    the chapter's run as a value of its own (the chapter's run is one draw, of one mode), each mode's mean ± sd and
    share, and the nearest mode's share."""
    seeds = value.per_seed()
    modes = split_modes(seeds) if seeds.size >= 4 else []
    if min((m.size for m in modes), default=0) < 2:  # two seeds a mode at least (ties can leave one side short)
        return value, summary(value), ""
    nearest = min(modes, key=lambda m: abs(m.mean() - float(claim["chapter"])))
    said = "; ".join(f"{show(m.mean(), m.std(ddof=1))} in {m.size} of {seeds.size} seeds" for m in modes)
    return Sample(np.asarray(nearest.mean()), {nearest.size: nearest}), f"two modes: {said}", \
        f"{nearest.size}/{seeds.size}"


def not_measured(claim: dict, tables: dict) -> str:
    """Why the chapter's quantity was not measured on the device that made the claim's table (its `measurable`),
    or "" where it was."""
    need = claim.get("measurable")
    df = tables.get(claim["table"])
    if not need or df is None or need["column"] not in df:
        return ""
    methods = df[need["column"]].dropna().astype(str)
    if methods.str.contains(need["matches"], regex=False).any():
        return ""
    found = " / ".join(sorted(set(methods))) or "nothing"
    return f"not measurable on this device: the chapter's is {need['says']}; this table measured {found}"


def judge(claim: dict, tables: dict, looks: int = 1, shortened: bool = False, reference: dict | None = None) -> Judgement:
    """One ledger row: the number's verdict and the conclusion's apart, and the claim's from both
    (rules.overall_verdict). `looks`: how many times the rows it reads had seeds added after reading the ledger (its
    level: stats.level_for); `shortened`: the profile trains a shortened budget, so a trained claim's printed number
    is not compared with the chapter's but with the profile's own `reference` (attnlab.claims.reference: SAME AS
    PUBLISHED or MOVED; NOT JUDGED without one), and nothing that fails at that budget is held against the chapter;
    its orderings and conclusions that hold are shown."""
    trained = seeded(claim, tables)
    judging = Judging(stats.level_for(looks), stats.level_for(looks + 1),
                      tuple(claim["range"]) if "range" in claim else None, trained, bool(claim.get("necessary")))
    row = {"id": claim["id"], "kind": "trained" if trained else "analytic", "table": claim["table"],
           "statement": " ".join(str(claim["statement"]).split()), "chapter": show_chapter(claim["chapter"]),
           "reproduced": "–", "rule": describe_claim(claim), "headline": bool(claim.get("headline")), "interval": "",
           "seeds": 0, "seed_sets": "", "looks": looks, "seed_share": "", "would_decide": "", "band": "",
           "number": "MISSING", "conclusion": NO_CONCLUSION if "conclusion" not in claim else "MISSING"}
    unmeasured = not_measured(claim, tables)
    if unmeasured:
        return Judgement(**{**row, "number": "NOT MEASURABLE", "conclusion": NO_CONCLUSION if "conclusion" not in
                            claim else "NOT MEASURABLE", "verdict": "NOT MEASURABLE", "margin": "–", "note": unmeasured,
                            "reason": ""})
    try:
        value = estimate(claim["value"], tables, claim["table"])
        row.update(reproduced=summary(value), interval=interval_text(value, judging),
                   seeds=min(value.counts, default=1),
                   seed_sets=" · ".join(map(str, sorted(value.counts, reverse=True))) if len(value.counts) > 1 else "")
        judged_value, mode_share = value, ""
        if claim.get("modes"):
            judged_value, row["reproduced"], mode_share = nearest_mode(value, claim)
        conclusion, note, concluded = claim.get("conclusion"), "", None
        read_apart = bool(conclusion) and "value" in conclusion
        c_value = estimate(conclusion["value"], tables, claim["table"]) if read_apart else value
        # an outcome per seed with a conclusion per seed: the chapter's one model showed both, so its number is
        # judged as a draw of the seeds that show both
        by_share = uses_lead(claim["value"])
        joint = (margins_of(conclusion, c_value, claim, tables)[0]
                 if by_share and conclusion and uses_lead(conclusion["value"] if read_apart else claim["value"]) else [])
        # a necessary outcome: the chapter's one model is a draw of ours (the number); its argument that every model
        # shows it is the conclusion, refuted by the seeds where it fails
        rule = checked(claim["rule"], judged_value, claim, tables, replace(judging, necessary=False), by_share,
                       [claim["value"], claim["rule"]], joint)
        if judging.necessary:
            concluded = checked(claim["rule"], judged_value, claim, tables, judging, by_share,
                                [claim["value"], claim["rule"]])
            note = f"conclusion {CONCLUSION_VERDICTS[concluded.status]}: {concluded.margin}"
        elif conclusion:
            # the claim's range is its value's: a conclusion that reads another keeps the mean's plain interval
            c_judging = Judging(judging.level, judging.next_level, None if read_apart else judging.bounds, trained)
            concluded = checked(conclusion, c_value, claim, tables, c_judging,
                                uses_lead(conclusion["value"] if read_apart else claim["value"]),
                                [conclusion.get("value", claim["value"]), conclusion])
            note = (f"conclusion {CONCLUSION_VERDICTS[concluded.status]}" + (f" on {summary(c_value)}" if read_apart else "")
                    + f": {concluded.margin}")
    except Missing as why:
        return Judgement(**row, verdict="MISSING", margin="–", note=str(why), reason="")
    number = NUMBER_VERDICTS[rule.status]
    said = CONCLUSION_VERDICTS[concluded.status] if concluded else NO_CONCLUSION
    regressed = shortened and trained and printed_number(claim) and claim["id"] in (reference or {}).get("values", {})
    if regressed:  # its runs are not the chapter's: its number against the profile's own published seeds
        status, margin, band = regression(value, reference["values"][claim["id"]], judging.level)
        number = REGRESSION_VERDICTS[status]
        rule = replace(rule, status=status, margin=margin, band=band, share="", to_decide=0, why="")
    elif shortened and trained:  # no reference: no printed number is compared
        number = "NOT JUDGED" if printed_number(claim) or number == "CONTRADICTED" else number
    if shortened and trained:  # no failure at a shortened budget is held against the chapter
        said = "NOT JUDGED" if said == "FAILS" else said
    judged = (number if regressed and number != "NOT JUDGED"
              else "CONCLUSION HOLDS" if number == "NOT JUDGED" and said == "HOLDS" and shortened
              else overall_verdict(number, said))
    row.update(number=number, conclusion=said, band=rule.band)
    row["seed_share"] = " · ".join(dict.fromkeys([*([mode_share] if mode_share else []),
                                                  *(o.share for o in (rule, concluded) if o and o.share)]))
    if mode_share:
        note = "; ".join(filter(None, [f"the chapter's run judged against the nearest mode, {mode_share} of our seeds",
                                       note]))
    undecided = [o for o in (rule, concluded) if o and o.status in ("inconclusive", "unjudged")]
    whys = list(dict.fromkeys(o.why for o in undecided if o.why))  # one reason once, for the rule and conclusion
    if any(o.why.startswith("a timing") for o in undecided):
        row["would_decide"] = f"{MIN_REPEATS} repeated timings per size"
    first = shortened_note(reference, regressed) if shortened and trained else ""
    to_decide = 0
    if judged == "INCONCLUSIVE":
        needed = [o.to_decide for o in undecided if not o.why]
        to_decide = max(needed) if needed and all(needed) else None
        if to_decide:
            row["would_decide"] = f"{to_decide} seeds per row"
            whys.append(f"about {to_decide} seeds per row would decide it with {stats.POWER_TEXT} power"
                        f" (at the next look's level, {judging.next_level:.3g})")
        elif needed:
            whys.append(f"no count of seeds up to {stats.MAX_SEEDS} decides it with {stats.POWER_TEXT} power at this mean")
    if number == "UNRESOLVED":
        whys.append("one run of ours spreads wider than the tolerance: no count of our seeds shows agreement "
                    "with the chapter's single run")
    elif number == "CONSISTENT" and rule.band:
        whys.append("the chapter's run sits near the tolerance's edge: no count of our seeds decides it")
    if number == "CONTRADICTED" and not shortened:
        whys.append(f"the number fails its rule ({describe_check(claim['rule'])}): {rule.margin}")
    if number == "MOVED":
        whys.append(f"the number lies beyond its reference seeds' spread: {rule.margin}")
    note = "; ".join(filter(None, [first, note, *whys]))
    reason = claim.get("reason", "") if judged in ("CONTRADICTED", "INCONCLUSIVE") else ""
    return Judgement(**row, verdict=judged, margin=rule.margin, note=note, reason=reason, to_decide=to_decide)


def shortened_note(reference: dict | None, regressed: bool) -> str:
    """What a trained claim of a shortened profile is judged against, said first in its note."""
    if regressed:
        return ("a shortened profile: its runs are not the chapter's, so its number is judged against the profile's "
                f"own published seeds ({reference_file(reference['profile'])}: {reference['seeds']} seeds per row, "
                f"frozen {reference['frozen']}), not the chapter's, and what fails at its budget is not judged")
    return ("a shortened profile: its runs are not the chapter's, so its numbers are not compared with the chapter's "
            "and what fails at its budget is not judged"
            + ("" if reference else " (this profile publishes no reference of its own)"))


def checked(check: dict, value: Sample, claim: dict, tables: dict, judging: Judging, by_share: bool,
            expressions, joint: list = ()) -> Outcome:
    """run_check, or undecided where it reads a timing measured fewer than MIN_REPEATS times."""
    outcome = run_check(check, value, claim, tables, judging, by_share, joint)
    if judging.seeded and outcome.status == "fail" and not np.any(value.sd() > 0):
        return Outcome("unjudged", outcome.margin, outcome.share, why=(
            "our seeds give it no spread (one seed, or seeds that all agree): a miss is not judged"))
    if timed_short(claim, expressions, value):
        measured = max(value.counts, default=1)
        return Outcome("inconclusive", outcome.margin, why=(
            f"a timing measured {'once' if measured == 1 else f'{measured} times'} per size: it is judged on at "
            f"least {MIN_REPEATS} repeated measurements"))
    return outcome


def tried(claim_id: str, tables: dict) -> str:
    """What the contradictions table tried on a claim: each setting and its finding. The verdict stays the
    one under the chapter's stated settings."""
    df = tables.get("contradictions")
    rows = df[df["claim"] == claim_id] if df is not None else ()
    return "tried: " + "; ".join(f"{r.setting}: {r.finding}" for r in rows.itertuples()) if len(rows) else ""


# ---------------------------------------------------------------- devices: rows mixing GPU and CPU seeds

def devices_read(node, tables: dict, table_id: str) -> set[str]:
    """The devices (by name) of the seeds of every table row an expression reads, from the rows' provenance
    (`device`: 'NVIDIA H200 ×3, AMD EPYC ×7')."""
    found = set()
    for table, read_node in table_reads(node, table_id):
        df = tables.get(table)
        if df is None or "device" not in df.columns:
            continue
        try:
            cells = select(df, read_node.get("where", {}), table)["device"].dropna()
        except Missing:
            continue
        found |= {name.rsplit(" ×", 1)[0] for cell in cells for name in str(cell).split(", ")}
    return found


def on_a_gpu(device: str) -> bool:
    return device.startswith(("NVIDIA", "cuda"))


def device_check(claim: dict, tables: dict) -> tuple[bool, str]:
    """(stands, why) for a claim whose rows mix seeds trained on a GPU and on a CPU: it stands on cross_device,
    where published GPU seeds retrained on a CPU show whether a row mixing devices is one sample of seeds
    (rules.OVERALL_RULE). A claim whose rows are of one device stands as it is, with nothing to say."""
    found = devices_read([claim["value"], claim["rule"], claim.get("conclusion", {})], tables, claim["table"])
    gpus, cpus = sorted(d for d in found if on_a_gpu(d)), sorted(d for d in found if not on_a_gpu(d))
    if not (gpus and cpus):
        return True, ""
    mixed = f"its rows mix seeds trained on {', '.join(gpus)} and on {', '.join(cpus)}"
    twins = tables.get("cross_device")
    trained = twins[twins["verdict"] != TWIN_NOT_RUN] if twins is not None else ()
    if not len(trained):
        return True, f"{mixed}; no CPU twin of a GPU seed is trained yet (cross_device): the devices are not shown to agree"
    apart = trained[trained["verdict"] == TWIN_BEYOND_SPREAD]
    if len(apart):
        worst = apart.loc[apart["in_row_sds"].astype(float).idxmax()]
        return False, (f"{mixed}, and the CPU twin of {worst['run']} seed {worst['seed']} lies "
                       f"{float(worst['in_row_sds']):.2g} seed sd from its GPU run (cross_device): a row mixing devices "
                       f"is not one sample of seeds")
    return True, (f"{mixed}; it stands on cross_device, where all {len(trained)} CPU twins trained of "
                  f"{len(twins)} GPU seeds give a held-out result within one seed sd of their GPU run")


def ledger(claims: list[dict], tables: dict, profile: str, plans: dict | None = None) -> pd.DataFrame:
    """Every claim judged at the level its rows' looks leave (`plans`: the profile's seed plans, rules.load_plans);
    a planned row whose plan asks for more seeds than it trained is named in the note of each claim it is for."""
    plans = plans or {}
    looks, short = load_looks(claims, plans), {}
    for run, plan in plans.items():
        if plan["planned"] > plan["trained"]:
            for claim_id in plan["for"]:
                short.setdefault(claim_id, []).append(
                    f"{run}'s plan asks for {plan['planned']} seeds ({stats.POWER_TEXT} power at its design margin), "
                    f"{plan['trained']} trained")
    shortened = float(OmegaConf.load(ROOT / "configs" / "profile" / f"{profile}.yaml").get("budget", 1.0)) < 1
    reference = load_reference(profile) if shortened else None
    df = pd.DataFrame([judge(claim, tables, looks.get(claim["id"], 1), shortened, reference).row() for claim in claims])
    devices = [device_check(claim, tables) if kind == "trained" else (True, "") for claim, kind in zip(claims, df["kind"])]
    df["verdict"] = [verdict if stands else "INCONCLUSIVE" for verdict, (stands, _) in zip(df["verdict"], devices)]
    spent = {claim_id: f"its rows were read at {k} looks, look j at {stats.ALPHA_TEXT}/j (configs/pipeline.yaml): α spent at most "
                       f"{100 * stats.alpha_spent(k):.3g} % in all" for claim_id, k in looks.items() if k > 1}
    df["note"] = ["; ".join(filter(None, (note, mixed, *short.get(claim_id, []), spent.get(claim_id),
                                          tried(claim_id, tables))))
                  for claim_id, note, (_, mixed) in zip(df["id"], df["note"], devices)]
    df["profile"] = profile
    return df
