"""How a value under a changed setting compares with the published one, on the claim's distance from the
chapter's point, seed by seed (the contradictions table's statistics):
- the scale: a quantity whose values (ours before, ours under the change, the chapter's) span a factor of ten
  or more is compared as a log ratio (`LOG_SPAN`), every other as a difference (`log_scale`);
- the pairing: values of the same seeds (a change of training settings alone, a control reading the published
  runs another way) are compared seed by seed over the seeds of the changed one (`paired_with`); any other, on
  all seeds of both (Welch: stats.combine keeps seed sets of different sizes apart);
- the margin: 0.9 × the distance before − the distance under the change (`shrinkage`), above 0 where the change
  moves the value toward the chapter by more than a tenth of the distance (`TOWARD_SHARE`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attnlab.claims import stats
from attnlab.claims.seed_plans import pilot_tables
from attnlab.claims.read import estimate
from attnlab.claims.render import show, show_number
from attnlab.claims.rules import is_number
from attnlab.claims.stats import Sample

TOWARD_SHARE = 0.1  # "moves toward": the distance shrinks by more than this share of itself
LOG_SPAN = 10.0     # values spanning this factor or more are compared as log ratios
NOT_ESTABLISHED = "not established"  # no setting tried brings the claim back, or none was decided


def per_element_mean(s: Sample, f) -> Sample:
    """f of the value, averaged over its elements (rows, columns), seed by seed: one number per seed."""
    def over_elements(values: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            out = f(values)
        return np.nanmean(out.reshape(-1, out.shape[-1]), axis=0) if out.ndim else out

    sets = {n: over_elements(v) for n, v in s.sets.items()}
    point = next(iter(sets.values())).mean() if len(sets) == 1 else over_elements(s.point[..., None])[0]
    shared = over_elements(s.shared) if s.shared is not None else None
    return Sample(np.asarray(point, dtype=float), sets, shared)


def seeds_of_value(s: Sample) -> np.ndarray:
    """Every number a value takes (its point and each seed's), for the scale."""
    return np.concatenate([np.ravel(s.point), *(np.ravel(v) for v in s.sets.values())])


def log_scale(*values, chapter=None) -> bool:
    """Compared as log ratios: every value positive, and together with the chapter's they span LOG_SPAN."""
    numbers = np.concatenate([seeds_of_value(v) for v in values]
                             + ([np.ravel(np.asarray(chapter, dtype=float))] if is_number_or_array(chapter) else []))
    numbers = numbers[np.isfinite(numbers)]
    return bool(len(numbers) and (numbers > 0).all() and numbers.max() / numbers.min() >= LOG_SPAN)


def is_number_or_array(x) -> bool:
    try:
        return np.asarray(x, dtype=float).size > 0
    except (TypeError, ValueError):
        return False


def distance(claim: dict, value: Sample, log: bool) -> Sample | None:
    """How far the value is from the chapter's point, seed by seed (its elements averaged): from its number,
    relative or absolute as its rule compares (a log ratio on a log scale), or from the rule's threshold (above,
    below); None where the rule has no distance (an ordering, a threshold read from the table)."""
    rule = claim["rule"]
    f = np.log if log else (lambda x: x)
    if rule["kind"] in ("relative", "absolute") and "to" not in rule and is_number_or_array(claim["chapter"]):
        target = np.asarray(claim["chapter"], dtype=float)

        def gap(v):
            t = target.reshape(target.shape + (1,) * (v.ndim - target.ndim))
            d = np.abs(f(v) - f(t))
            return d if log or rule["kind"] == "absolute" else d / np.abs(t)
    elif rule["kind"] in ("above", "below") and is_number(rule.get("than")):
        sign, than = (1 if rule["kind"] == "above" else -1), float(rule["than"])

        def gap(v):
            return np.maximum(0.0, sign * (f(than) - f(v)))
    else:
        return None
    return per_element_mean(value, gap)


def cut(s: Sample, n: int) -> Sample:
    """The value on its first n seeds (one seed set)."""
    (count, values), = s.sets.items()
    values = values[..., :n]
    return Sample(values.mean(axis=-1), {n: values} if n > 1 else {}, values)


def one_set(s: Sample | None) -> int | None:
    return next(iter(s.sets)) if s is not None and len(s.sets) == 1 else None


def paired_with(before: Sample, under: Sample, paired: bool) -> Sample:
    """The published value on the hypothesis's seeds where the two are compared seed by seed; else as it is
    (on all its seeds: a different seed count keeps the two sets apart, Welch)."""
    n, m = one_set(before), one_set(under)
    return cut(before, m) if paired and n is not None and m is not None and m < n else before


def show_scaled(mean: float, low: float, high: float, log: bool, signed: bool = True) -> str:
    if log:
        return f"×{show_number(math.exp(mean))} [{show_number(math.exp(low))}, {show_number(math.exp(high))}]"
    sign = "+" if signed and mean > 0 else ""
    return f"{sign}{show_number(mean)} [{show_number(low)}, {show_number(high)}]"


def show_distance(d: Sample | None, log: bool, relative: bool) -> str:
    if d is None:
        return "–"
    if log:
        return f"×{show_number(math.exp(float(d.point)))}"
    return show(d.point, d.sd()) + (" (relative)" if relative else "")


def shrinkage(before: Sample, under: Sample) -> Sample:
    """0.9 × the distance before − the distance under the hypothesis, seed by seed where their seed sets are
    one, else each on all its seeds (Welch)."""
    return stats.combine(lambda b, u: (1 - TOWARD_SHARE) * b - u, before, under)


@dataclass
class Compared:
    """A claim's value and distance from the chapter, published and under the hypothesis, on one scale."""
    log: bool
    paired: bool
    before: Sample
    under: Sample
    distance_before: Sample | None
    distance_under: Sample | None

    @staticmethod
    def of(claim: dict, published: dict, tables: dict, paired: bool) -> Compared:
        before, under = (estimate(claim["value"], t, claim["table"]) for t in (published, tables))
        log = "range" not in claim and log_scale(before, under, chapter=claim["chapter"])  # a bounded share stays linear
        before = paired_with(before, under, paired)
        paired = paired and one_set(before) is not None and one_set(before) == one_set(under)
        return Compared(log, paired, before, under, distance(claim, before, log), distance(claim, under, log))

    def effect(self) -> Sample:
        """Under − before, on the scale (a log ratio or a difference), elements averaged."""
        f = np.log if self.log else (lambda x: x)
        return stats.combine(np.subtract, per_element_mean(self.under, f), per_element_mean(self.before, f))

    def margin(self) -> Sample | None:
        if self.distance_before is None or self.distance_under is None:
            return None
        return shrinkage(self.distance_before, self.distance_under)


def pilot_margin(claim: dict, published: dict, tables: dict, paired: bool, pilot: int) -> Sample | None:
    """The margin as the changed runs' pilot seeds left it (the published runs on all their seeds, or on the
    pilot's where paired)."""
    under = estimate(claim["value"], tables, claim["table"])
    if one_set(under) is None or one_set(under) <= pilot:
        return Compared.of(claim, published, tables, paired).margin()
    cut_tables = {**tables, **pilot_tables({claim["table"]: tables[claim["table"]]}, pilot)}
    return Compared.of(claim, published, cut_tables, paired).margin()
