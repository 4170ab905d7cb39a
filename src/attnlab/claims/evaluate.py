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
from attnlab.claims.rules import (NO_POINT, NUMBER_WORD, POINT_WORD, ROOT, TARGET_CHECKS, TWIN_BEYOND_SPREAD,
                                  TWIN_NOT_RUN, ClaimsError, load_looks, rounding)
from attnlab.claims.stats import Sample
from attnlab.tables import SEEDS_SUFFIX, per_seed

MIN_REPEATS = 5  # a timing is judged on at least this many repeated measurements
# a seed plan's amendments (configs/pipeline.yaml) that say it was written after its row's seeds were trained
AFTER_SEEDS = ("looked", "short")


# ---------------------------------------------------------------- checks

@dataclass
class Outcome:
    status: str                   # "pass", "fail", "open" or "untested" (rules.NUMBER_WORD, rules.POINT_WORD)
    margin: str                   # how far the value is from the chapter (or past the bound), for the ledger
    share: str = ""               # "k/n": seeds in which the outcome holds, where the check is judged on them
    to_decide: int = 0            # seeds per row that would decide it (0: no count would, or it is decided)
    why: str = ""                 # why it reads its word, in one sentence
    band: str = ""                # a one-run number: the chapter values it accepts, the shift it catches (stats.band)
    chance: float = 0.0           # the chance that a chapter value drawn from ours reads "fail" (the test's α)


@dataclass(frozen=True)
class Judging:
    """How a claim is judged: its level (after its rows' looks), the next look's (what a plan is sized at), and the
    range of a bounded quantity."""
    level: float = stats.LEVEL
    next_level: float = stats.level_for(2)
    bounds: tuple[float, float] | None = None
    seeded: bool = False  # a value made over seeds (a trained claim): one seed, or no spread, judges no miss
    necessary: bool = False  # an outcome per seed the chapter argues holds in every model (stats.decide_necessary)
    by_rank: bool = False  # not normal on its own scale (a bounded share or accuracy, two modes): judged by rank


def overall(statuses) -> str:
    """Every element must pass; one clear failure fails the whole."""
    statuses = np.asarray(statuses)
    for status in ("fail", "untested", "open"):
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
            if gap == 0:
                return Outcome("pass", "exact", why="exact to the printed precision")
            return Outcome("fail", f"off by {show_number(float(gap))}",
                           why=f"off by {show_number(float(gap))} at the printed precision")
        if "to" not in check and (value.sets or judging.seeded) and not by_share:  # the chapter's one run
            if judging.by_rank:
                return rank_outcome(value, claim, check, judging)
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
    """The chapter printed one run: its value, widened by the tolerance (and half its last printed digit), against a
    prediction interval of one run of ours (stats.predict). DIFFERS wholly outside; AGREES inside where the test
    could have failed (stats.powered: a chapter value stats.CATCH_SD one-run sd past the tolerance is caught 80 % of
    the time); OPEN inside where it could not yet (the seeds per row that would make it able to). No spread (one
    seed, or seeds that all agree): NOT TESTED."""
    chapter = np.asarray(claim["chapter"], dtype=float)
    gap = stats.combine(np.subtract, value, Sample.constant(chapter))
    tolerance = np.broadcast_to(printed_tolerance(claim, check), gap.point.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        in_tol = np.abs(gap.point) / tolerance
    if not np.isfinite(in_tol).any():
        return Outcome("fail", "not a number", why="our value is not a number (a run that diverged)")
    differs, half = stats.predict(gap, tolerance, judging.level)
    worst = np.unravel_index(np.nanargmax(in_tol), in_tol.shape)
    pick = lambda x: float(np.broadcast_to(x, in_tol.shape)[worst])  # noqa: E731
    text = f"Δ {pick(in_tol):.2g} tol ± {pick(half / tolerance):.2g} (one run)"
    low, high, catches, sd = (pick(x) for x in stats.band(value.point, gap, tolerance, judging.level))
    if judging.bounds is not None:  # a chapter value outside the quantity's range is no value at all
        low, high = max(low, judging.bounds[0]), min(high, judging.bounds[1])
    band = (f"accepts [{show_number(low)}, {show_number(high)}]; catches a shift of {show_number(catches)}"
            + (f" ({catches / sd:.1f} sd)" if sd > 0 else "") + f" {stats.POWER_TEXT} of the time")
    if not np.all(gap.sd() > 0):  # nothing to judge a run by: no spread, no judgement
        return Outcome("untested", text, why="our seeds give it no spread (one seed, or seeds that all agree)")
    alpha = 1 - judging.level
    ours, printed, tol = pick(value.point), pick(chapter), pick(tolerance)
    z = (printed - ours) / sd
    if differs.any():
        return Outcome("fail", text, band=band, chance=alpha, why=(
            f"{show_number(printed)} ± {show_number(tol)} lies outside one run of ours, "
            f"[{show_number(ours - pick(half))}, {show_number(ours + pick(half))}] at {100 * alpha:.3g} % (z = {z:.2g})"))
    bottom, top = judging.bounds if judging.bounds is not None else (-np.inf, np.inf)
    edges = [show_number(x) for x in (ours - catches, ours + catches) if bottom <= x <= top]  # inside its range
    catch = f"would catch a chapter value past {' or '.join(edges)} ({catches / sd:.1f} sd)" if edges else \
        f"would catch a chapter value {catches / sd:.1f} sd away"
    carried = abs(printed - ours) > pick(half)  # inside only because of the declared tolerance
    typical = (f"{show_number(printed)} within the declared ±{show_number(tol)} of a typical run of ours, "
               f"{show_number(ours)}" if carried else f"a typical single run of ours (z = {z:.2g})" if abs(z) <= 2
               else f"not ruled out by one run of ours (z = {z:.2g})")
    if np.all(stats.powered(gap, judging.level)):
        return Outcome("pass", text, band=band, chance=alpha, why=f"{typical}; {catch}")
    needed = stats.seeds_to_power(gap, judging.next_level)
    return Outcome("open", text, band=band, chance=alpha, to_decide=needed, why=(
        f"{typical}, but {min(gap.counts, default=1)} seeds cannot yet catch one {stats.CATCH_SD:g} sd past the "
        "tolerance" + (f"; {needed} seeds per row would" if needed else "")))


def rank_outcome(value: Sample, claim: dict, check: dict, judging: Judging) -> Outcome:
    """A number the chapter printed once, of a quantity that is not normal on its own scale (a share or an accuracy
    bounded by its range, a value of two modes, a weight per seed): how shallow the chapter's value ± the tolerance
    lies among our seeds, by rank (stats.rank_p, a conformal p-value), so no run of ours is made rare by the scale.
    DIFFERS at p <= α; AGREES where the test could have failed: a chapter value stats.CATCH_SD one-run sd past the
    tolerance, on each side the range leaves room for, reaches p <= α. Too few seeds for that: the normal interval
    (one_run_outcome)."""
    seeds = value.per_seed() if len(value.sets) == 1 else None
    alpha, n = 1 - judging.level, (seeds.shape[-1] if seeds is not None else 0)
    if seeds is None or n < stats.rank_seeds(judging.level):
        outcome = one_run_outcome(value, claim, check, replace(judging, by_rank=False))
        return replace(outcome, why=outcome.why + (f" (on the normal scale: {n} seeds are too few to judge by rank, "
                                                   f"{stats.rank_seeds(judging.level)} would)" if seeds is not None else ""))
    chapter = np.broadcast_to(np.asarray(claim["chapter"], dtype=float), value.point.shape)
    tolerance = np.broadcast_to(printed_tolerance(claim, check), value.point.shape)
    sd, mean = seeds.std(axis=-1, ddof=1), seeds.mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        in_tol = np.abs(mean - chapter) / tolerance
    text = f"Δ {float(np.nanmax(in_tol)):.2g} tol (by rank)" if np.isfinite(in_tol).any() else "not a number"
    if not np.all(sd > 0):
        return Outcome("untested", text, why="our seeds give it no spread (one seed, or seeds that all agree)")
    p = stats.rank_p(seeds, chapter, tolerance)
    shown = show_number(float(chapter.flat[0])) if chapter.size == 1 else "the chapter's row"
    if p <= alpha:
        return Outcome("fail", text, chance=alpha, why=(
            f"{shown} ± {show_number(float(tolerance.flat[0]))} lies outside what {n} seeds of ours give one run, by "
            f"rank: p = {p:.2g} at {100 * alpha:.3g} %"))
    bottom, top = judging.bounds if judging.bounds is not None else (-np.inf, np.inf)
    caught, room = [], False
    for sign in (-1, 1):
        shifted = mean + sign * (tolerance + stats.CATCH_SD * sd)
        fits = (shifted >= bottom) & (shifted <= top)
        if fits.any():
            room = True
            caught.append(stats.rank_p(seeds, np.where(fits, shifted, mean), tolerance) <= alpha)
    typical = (f"{shown} is a typical run of ours by rank (p = {p:.2g}, {n} seeds)" if p > stats.RARE else
               f"{shown} is not ruled out by rank (p = {p:.2g} against the {100 * alpha:.3g} % its looks leave, "
               f"{n} seeds)")
    if room and all(caught):
        return Outcome("pass", text, chance=alpha,
                       why=f"{typical}; would catch a chapter value {stats.CATCH_SD:g} sd past the tolerance")
    return Outcome("open", text, chance=alpha, why=(
        f"{typical}, but a chapter value {stats.CATCH_SD:g} sd past the tolerance "
        + ("would pass too: the spread of our seeds, not their count, keeps it open" if room else
           "does not fit in the quantity's range: no count of seeds decides it")))


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
                              np.where(np.all([s == "pass" for s in statuses], axis=0), "pass", "open")))
    if text is None:
        if tightest is None:
            text = "not a number"
        else:
            text = (f"{'clears' if tightest[0] >= 0 else 'misses'} by {show_number(abs(tightest[0]))}"
                    + (f" ± {show_number(tightest[1])}" if tightest[1] > 0 else ""))
    needed = np.concatenate(plans) if plans else np.zeros(0, dtype=int)
    plan = int(needed.max()) if status == "open" and len(needed) and np.all(needed > 0) else 0
    level = f"our mean's {100 * judging.level:.3g} % interval"
    why = {"pass": f"{level} clears it", "fail": f"{level} misses it",
           "open": f"{level} lies on both sides" + (f"; {plan} seeds per row would decide it" if plan else "")}[status]
    return Outcome(status, text, to_decide=plan, why=why)


def share_outcome(margins: list, judging: Judging) -> Outcome:
    """An outcome per seed (every element, every edge), shown by the chapter's one model, judged as a draw of ours
    (stats.decide_draw): it passes where most of our seeds show it and the count of seeds could have shown it rare,
    fails where it is rare (Wilson's upper bound of its share below stats.RARE), and stays open where it is a
    minority outcome (a plausible, untypical draw) or too few seeds could show it rare (0 of 3 is open)."""
    try:
        per_seed = [(margin_of(*m) if isinstance(m, tuple) else m).per_seed() for m in margins]
    except ValueError as why:
        raise ClaimsError(f"an outcome per seed reads one seed set: {why}")
    holds = np.all([np.all(m >= 0, axis=tuple(range(m.ndim - 1))) for m in per_seed], axis=0)
    holds = np.broadcast_to(holds, (max(m.shape[-1] for m in per_seed),))
    k, n = int(holds.sum()), int(holds.size)
    if n < 2:  # one value: a fact where nothing is seeded; one seed of a trained run judges no share
        if judging.seeded:
            return Outcome("untested", f"holds in {k} of 1 seed", share=f"{k}/{n}",
                           why="one seed: an outcome's share is not judged")
        return Outcome("pass" if k else "fail", "holds" if k else "does not hold",
                       why="holds" if k else "does not hold")
    able = next((m for m in range(n, stats.MAX_SEEDS + 1) if stats.decide_draw(0, m, judging.level) == "fail"), 0)
    if judging.necessary:
        status = stats.decide_necessary(k, n, judging.level)
        text = f"holds in {k} of {n} seeds, fails in {n - k} (necessary: it must hold in every model)"
        status = {"consistent": "open"}.get(status, status)
        why = {"pass": f"holds in all but a rare few of our seeds ({k} of {n})",
               "fail": f"fails in more than a rare few of our seeds ({n - k} of {n})",
               "open": f"fails in {n - k} of {n} seeds: too few seeds to tell a rare few from more"}[status]
        return Outcome(status, text, share=f"{k}/{n}", why=why, chance=1 - judging.level)
    status = stats.decide_draw(k, n, judging.level)
    if status == "pass" and n < able:  # most seeds show it, but no count this small could have shown it rare
        status = "open"
    said = ("a rare outcome" if status == "fail" else "not seen" if k == 0 else
            "a minority outcome" if k < n / 2 else "a majority outcome")
    text = f"{said}, {k} of {n} seeds"
    if status == "pass":
        why = f"the outcome of most of our seeds ({k} of {n})"
    elif status == "fail":
        why = f"a rare outcome of ours ({k} of {n} seeds: under {stats.RARE_TEXT} at {100 * judging.level:.3g} %)"
    elif k == 0:  # an outcome never seen is no plausible draw yet: only too few seeds to call it rare
        why = f"not seen in any of our {n} seeds, too few to show it rare ({able} would)"
        status = "open"
    elif status == "consistent" and k < n / 2:
        why = f"a minority outcome of ours ({k} of {n} seeds): a plausible but untypical draw"
    else:
        why = f"seen in {k} of {n} seeds: too few to call it the outcome of most" + (
            f" and to have shown it rare ({able} would)" if n < able else "")
    status = {"consistent": "open"}.get(status, status)
    return Outcome(status, text, share=f"{k}/{n}", why=why, to_decide=able if status == "open" and k == 0 else 0,
                   chance=1 - judging.level)


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
    """One claim judged: the ledger's row (`row()`: its columns, in their order) and, for a claim left OPEN, the
    seeds per row that would decide it."""
    id: str
    name: str                # what the number is, in plain words (configs/claims.yaml's name): how a reader finds it
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
    plan: str                # where a row it reads had its seeds planned after they were read: "after its seeds"
    seed_share: str          # k/n: seeds in which an outcome holds
    would_decide: str        # what would decide it (more seeds per row, repeated timings), in words
    band: str                # a one-run number: the chapter values it accepts, the shift it catches
    number: str              # the number's word (rules.NUMBER_WORDS)
    point: str               # the chapter's point's word (rules.POINT_WORDS; rules.NO_POINT where it states none)
    why: str                 # why the number reads its word, in one sentence
    margin: str              # how far the value is from the chapter (or past the bound)
    note: str                # the point's why, and everything else a reader may ask
    reason: str              # configs/claims.yaml's reason, for a claim whose number or point is not borne out
    chance: float            # the chance that the number reads DIFFERS were the chapter's value a run of ours
    # an OPEN claim: the seeds per row that decide it (None where no count up to stats.MAX_SEEDS does, or more seeds
    # are not what it needs); 0 for a claim decided
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
    """One ledger row: the number's word and the point's, judged apart (no word combines them). `looks`: how many
    times the rows it reads had seeds added after reading the ledger (its level: stats.level_for); `shortened`: the
    profile trains a shortened budget, so a trained claim's printed number is judged against the profile's own
    `reference` (attnlab.claims.reference), not the chapter's; its other trained numbers are NOT TESTED, and its points
    are judged on its own short runs (a point that FAILS there says nothing of the chapter)."""
    trained = seeded(claim, tables)
    judging = Judging(stats.level_for(looks), stats.level_for(looks + 1),
                      tuple(claim["range"]) if "range" in claim else None, trained, bool(claim.get("necessary")),
                      by_rank=trained and ("range" in claim or "modes" in claim
                                           or (uses_lead(claim["value"]) and printed_number(claim))))
    row = {"id": claim["id"], "name": " ".join(str(claim.get("name", "")).split()),
           "kind": "trained" if trained else "analytic", "table": claim["table"],
           "statement": " ".join(str(claim["statement"]).split()), "chapter": show_chapter(claim["chapter"]),
           "reproduced": "–", "rule": describe_claim(claim), "headline": bool(claim.get("headline")), "interval": "",
           "seeds": 0, "seed_sets": "", "looks": looks, "plan": "", "seed_share": "", "would_decide": "", "band": "",
           "number": "NOT TESTED", "point": NO_POINT if "conclusion" not in claim and not claim.get("necessary")
           else "OPEN", "margin": "–", "reason": "", "chance": 0.0}
    unmeasured = not_measured(claim, tables)
    if unmeasured:
        return Judgement(**row, why=unmeasured, note="")
    try:
        value = estimate(claim["value"], tables, claim["table"])
        row.update(reproduced=summary(value), interval=interval_text(value, judging),
                   seeds=min(value.counts, default=1),
                   seed_sets=" · ".join(map(str, sorted(value.counts, reverse=True))) if len(value.counts) > 1 else "")
        if claim.get("modes"):
            row["reproduced"] = modes_text(value)
        row["reproduced"] += table_cell_note(claim, tables)
        conclusion, concluded = claim.get("conclusion"), None
        read_apart = bool(conclusion) and "value" in conclusion
        c_value = estimate(conclusion["value"], tables, claim["table"]) if read_apart else value
        # an outcome per seed with a conclusion per seed: the chapter's one model showed both, so its number is
        # judged as a draw of the seeds that show both
        by_share = uses_lead(claim["value"]) and not judging.by_rank
        joint = (margins_of(conclusion, c_value, claim, tables)[0]
                 if by_share and conclusion and uses_lead(conclusion["value"] if read_apart else claim["value"]) else [])
        # a necessary outcome: the chapter's one model is a draw of ours (the number); its argument that every model
        # shows it is the point, refuted by the seeds where it fails
        rule = checked(claim["rule"], value, claim, tables, replace(judging, necessary=False), by_share,
                       [claim["value"], claim["rule"]], joint)
        if judging.necessary:
            concluded = checked(claim["rule"], value, claim, tables, replace(judging, by_rank=False), True,
                                [claim["value"], claim["rule"]])
        elif conclusion:
            # the claim's range is its value's: a conclusion that reads another keeps the mean's plain interval
            c_judging = Judging(judging.level, judging.next_level, None if read_apart else judging.bounds, trained)
            concluded = checked(conclusion, c_value, claim, tables, c_judging,
                                uses_lead(conclusion["value"] if read_apart else claim["value"]),
                                [conclusion.get("value", claim["value"]), conclusion])
    except Missing as why:
        return Judgement(**row, why=str(why), note="")
    if shortened and trained:  # its runs are not the chapter's: a printed number against its own seeds, no other
        if printed_number(claim) and claim["id"] in (reference or {}).get("values", {}):
            status, margin, band, why = regression(value, reference["values"][claim["id"]], judging.level)
            rule = Outcome(status, margin, band=band, why=f"{shortened_note(reference)}: {why}")
        else:
            rule = Outcome("untested", rule.margin, why=shortened_note(reference))
    number = NUMBER_WORD[rule.status]
    point = POINT_WORD[concluded.status] if concluded else row["point"]
    point_why = (f"point {point}" + (f" on {summary(c_value)}" if conclusion and "value" in conclusion else "")
                 + f": {concluded.why or concluded.margin}") if concluded else ""
    row.update(number=number, point=point, band=rule.band, margin=rule.margin, chance=rule.chance)
    row["seed_share"] = " · ".join(dict.fromkeys(o.share for o in (rule, concluded) if o and o.share))
    waits = [o for o in (rule, concluded) if o and o.status == "open"]
    to_decide = 0
    if any(o.why.startswith("a timing") for o in waits):
        row["would_decide"], to_decide = f"{MIN_REPEATS} repeated timings per size", None
    elif waits:
        to_decide = max(o.to_decide for o in waits) if all(o.to_decide for o in waits) else None
        row["would_decide"] = f"{to_decide} seeds per row" if to_decide else ""
    row["reason"] = claim.get("reason", "") if number in ("DIFFERS", "OPEN") or point in ("FAILS", "OPEN") else ""
    return Judgement(**row, why=rule.why, note=point_why, to_decide=to_decide)


def table_cell_note(claim: dict, tables: dict) -> str:
    """Where the claim reads one cell whose table prints another summary of the values the ledger reads (a timing
    table's fit or ratio of the median times, beside the mean of each repeat's own), ' (over the repeats; the
    table's <column>, from their medians: <cell>)': one quantity never reads as two values. Empty where the cell is
    the mean of its values (every trained table), or the claim reads more than one cell."""
    node = claim["value"]
    if not (isinstance(node, dict) and isinstance(node.get("column"), str) and node.get("reduce") in (None, "last", "first")
            and not any(k in node for k in ("matches", "per_seed", "lead", "columns"))):
        return ""
    table_id = node.get("table", claim["table"])
    df, column = tables.get(table_id), node["column"]
    if df is None or column not in df or f"{column}{SEEDS_SUFFIX}" not in df:
        return ""
    try:
        rows = select(df, node.get("where", {}), table_id)
    except Missing:
        return ""
    cells = rows[pd.to_numeric(rows[column], errors="coerce").notna()]
    if not len(cells) or (len(cells) > 1 and node.get("reduce") is None):
        return ""
    cell = cells.iloc[0 if node.get("reduce") == "first" else -1]
    values = per_seed(cell[f"{column}{SEEDS_SUFFIX}"])
    if len(values) < 2 or np.isclose(float(cell[column]), np.mean(values), rtol=1e-9, atol=0):
        return ""
    over, of = ("the repeats", "from their medians") if column in claim.get("timing", []) else ("the seeds", "its own summary")
    return f" (over {over}; the table's {column}, {of}: {show_number(float(cell[column]))})"


def modes_text(value: Sample) -> str:
    """A value with two outcomes among our seeds: each mode's mean ± sd and share (a mean of both describes
    neither)."""
    seeds = value.per_seed()
    modes = split_modes(seeds) if seeds.size >= 4 else []
    if min((m.size for m in modes), default=0) < 2:  # two seeds a mode at least (ties can leave one side short)
        return summary(value)
    return "two modes: " + "; ".join(f"{show(m.mean(), m.std(ddof=1))} in {m.size} of {seeds.size} seeds"
                                     for m in modes)


def shortened_note(reference: dict | None) -> str:
    """What a trained number of a shortened profile is judged against."""
    if reference:
        return (f"a shortened profile, judged against its own published seeds ({reference_file(reference['profile'])}, "
                f"{reference['seeds']} seeds per row, frozen {reference['frozen']}), not the chapter")
    return "a shortened profile that publishes no reference of its own: not judged against the chapter"


def checked(check: dict, value: Sample, claim: dict, tables: dict, judging: Judging, by_share: bool,
            expressions, joint: list = ()) -> Outcome:
    """run_check; untested where a seeded value was read from one seed (no spread to judge a pass or a miss by;
    several seeds that all agree are judged: the interval is their value); open where it reads a timing measured
    fewer than MIN_REPEATS times."""
    outcome = run_check(check, value, claim, tables, judging, by_share, joint)
    if judging.seeded and outcome.status in ("pass", "fail") and not value.sets:
        return Outcome("untested", outcome.margin, outcome.share, why="read from one seed: no spread to judge it by")
    if timed_short(claim, expressions, value):
        measured = max(value.counts, default=1)
        return Outcome("open", outcome.margin, why=(
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
    (a number that does not stand is OPEN). A claim whose rows are of one device stands as it is, with nothing to say."""
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
    a claim reading a row whose plan was written after its seeds trained is marked so (`plan`), and a planned row
    that asks for more seeds than it trained is named in the note of each claim it is for. Rows read at several
    looks are judged at the looks actually seen (stats.level_for), every seed counted."""
    plans = plans or {}
    looks, short, after = load_looks(claims, plans), {}, set()
    for run, plan in plans.items():
        if plan.get("amended") in AFTER_SEEDS:
            after.update(plan["for"])
        if plan["planned"] > plan["trained"]:
            for claim_id in plan["for"]:
                short.setdefault(claim_id, []).append(
                    f"{run}'s plan asks for {plan['planned']} seeds, {plan['trained']} trained")
    shortened = float(OmegaConf.load(ROOT / "configs" / "profile" / f"{profile}.yaml").get("budget", 1.0)) < 1
    reference = load_reference(profile) if shortened else None
    df = pd.DataFrame([judge(claim, tables, looks.get(claim["id"], 1), shortened, reference).row() for claim in claims])
    devices = [device_check(claim, tables) if kind == "trained" else (True, "") for claim, kind in zip(claims, df["kind"])]
    df["number"] = [number if stands or number == "NOT TESTED" else "OPEN"
                    for number, (stands, _) in zip(df["number"], devices)]
    df["plan"] = ["after its seeds" if claim_id in after else "" for claim_id in df["id"]]
    spent = {claim_id: f"its rows were read at {k} looks (configs/pipeline.yaml), judged at the last at "
                       f"{stats.ALPHA_TEXT}/{k}; its earlier looks were read at {stats.ALPHA_TEXT}/j, so α spent at most "
                       f"{100 * stats.alpha_spent(k):.3g} % over all of them"
             for claim_id, k in looks.items() if k > 1}
    df["note"] = ["; ".join(filter(None, (note, mixed, *short.get(claim_id, []), spent.get(claim_id),
                                          tried(claim_id, tables))))
                  for claim_id, note, (_, mixed) in zip(df["id"], df["note"], devices)]
    df["profile"] = profile
    return df
