"""The ledger's statistics. A value is read per seed (a table's `<col>_seeds`, seed order) and every
derived value — a difference, a ratio, a lead, a reduction over rows — is computed per seed before it
is summarised, so rows trained from the same seeds are paired.

A claim about a number is judged on the mean over seeds with its 95 % t-interval: it passes when the
whole interval is on the passing side of every edge, fails when it is wholly outside, and is undecided
only when it straddles an edge — and since the interval narrows as 1/√n, more seeds decide it.
An outcome that splits across seeds (which weight is the largest of a row) is judged on the share of
seeds in which it holds, with its 95 % Wilson interval against one half: most trained models, or not.
One value (an analytic table, or a single seed) is its own interval. Two different runs' values (a
hypothesis's run against the published one, in the contradictions table) share no seeds' luck: their
difference takes Welch's unpaired interval.
"""

from __future__ import annotations

import math

import numpy as np

LEVEL = 0.95
MAJORITY = 0.5  # an outcome "holds" when it holds in more than this share of seeds
MAX_SEEDS = 1000  # beyond this, "more seeds" is not a plan


def t_quantile(df: float) -> float:
    """Student's t at the two-sided 95 % level, `df` degrees of freedom (n − 1 for n seeds)."""
    from scipy import stats  # here: loading scipy takes a second, and the workflow imports this module on every call
    return float(stats.t.ppf((1 + LEVEL) / 2, df))


def mean_interval(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, low, high) of the mean over the last axis (seeds): a point for one seed."""
    n, mean = x.shape[-1], x.mean(axis=-1)
    if n < 2:
        return mean, mean, mean
    half = t_quantile(n - 1) * x.std(axis=-1, ddof=1) / math.sqrt(n)
    return mean, mean - half, mean + half


def prediction_interval(x: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Where one more seed's value falls with 95 % probability (None for one seed): mean ± t·sd·√(1 + 1/n)."""
    n = x.shape[-1]
    if n < 2:
        return None
    half = t_quantile(n - 1) * x.std(axis=-1, ddof=1) * math.sqrt(1 + 1 / n)
    return x.mean(axis=-1) - half, x.mean(axis=-1) + half


def difference_interval(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """(difference, low, high): mean(a) − mean(b) with Welch's 95 % interval, for seeds of two different
    runs (unpaired); a single seed adds no spread of its own."""
    return _welch(float(a.mean() - b.mean()), _variance_of_mean(a, a.size), _variance_of_mean(b, b.size))


# where more seeds of a difference's two runs go: (to a, to b), in the order a tie between plans is settled
GROWTH = {"b": (False, True), "a": (True, False), "both": (True, True)}


def seeds_to_decide_difference(a: np.ndarray, b: np.ndarray, grow: str = "b",
                               most_added: int | None = None) -> tuple[int, int] | None:
    """(seeds, runs added) at which mean(a) − mean(b) would have an interval clear of 0, if both means and
    spreads held, adding seeds to b, to a, or to both (each at least its own count); None where no number up to
    MAX_SEEDS would (growing one side whose partner's spread alone keeps the interval straddling 0), or none
    adding at most `most_added` runs."""
    if grow not in GROWTH:
        raise ValueError(f"grow is one of {', '.join(GROWTH)}, not {grow!r}")
    difference = float(a.mean() - b.mean())
    grow_a, grow_b = GROWTH[grow]
    # walked up from the start: the interval need not narrow with n (Welch's degrees of freedom fall back
    # to the fixed side's as the grown side's share of the spread vanishes)
    for n in range(max(a.size if grow_a else 0, b.size if grow_b else 0), MAX_SEEDS + 1):
        added = (n - a.size if grow_a else 0) + (n - b.size if grow_b else 0)
        if most_added is not None and added > most_added:
            return None
        _, low, high = _welch(difference, _variance_of_mean(a, n if grow_a else a.size),
                              _variance_of_mean(b, n if grow_b else b.size))
        if decide(low, high) != "inconclusive":
            return n, added
    return None


def cheapest_plan_to_decide_difference(a: np.ndarray, b: np.ndarray) -> tuple[str, int] | None:
    """(the plan in GROWTH, its seeds) deciding mean(a) − mean(b) with the fewest runs added; on a tie the
    earlier plan. A later plan only walks while it could still add fewer runs than the best so far."""
    best = None  # (plan, seeds, runs added)
    for grow in GROWTH:
        found = seeds_to_decide_difference(a, b, grow, most_added=None if best is None else best[2] - 1)
        if found is not None:
            best = (grow, *found)
    return None if best is None else best[:2]


def _variance_of_mean(x: np.ndarray, n: int) -> tuple[float, int]:
    """(the squared standard error of x's mean at n seeds, with x's spread; its degrees of freedom)."""
    return (float(x.var(ddof=1)) / n if x.size > 1 else 0.0), n - 1


def _welch(difference: float, *variances: tuple[float, int]) -> tuple[float, float, float]:
    spread = sum(v for v, _ in variances)
    if spread == 0:
        return difference, difference, difference
    df = spread ** 2 / sum(v * v / dof for v, dof in variances if v > 0)
    half = t_quantile(df) * math.sqrt(spread)
    return difference, difference - half, difference + half


def loglog_slope(x, y) -> float:
    """Least-squares slope of log(y) against log(x) (positive values), in plain floats: numpy's vectorised log
    and LAPACK's fit differ in the last digit from one CPU to another, and a table must come back byte for byte."""
    log_x, log_y = [math.log(v) for v in x], [math.log(v) for v in y]
    mean_x, mean_y = math.fsum(log_x) / len(log_x), math.fsum(log_y) / len(log_y)
    return (math.fsum((a - mean_x) * (b - mean_y) for a, b in zip(log_x, log_y))
            / math.fsum((a - mean_x) ** 2 for a in log_x))


def share_interval(k: int, n: int) -> tuple[float, float]:
    """Wilson's 95 % interval for a share k/n (a point for one seed)."""
    if n < 2:
        return k / n, k / n
    from scipy import stats  # as in t_quantile
    z = float(stats.norm.ppf((1 + LEVEL) / 2))
    p = k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def decide(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Per element, from the interval of a margin (>= 0 passes): pass, fail, or inconclusive when it
    straddles 0. A margin that is not a number (a run that diverged, a missing measurement) fails."""
    status = np.where(low >= 0, "pass", np.where(high < 0, "fail", "inconclusive"))
    return np.where(np.isnan(low) | np.isnan(high), "fail", status)


def decide_share(k: int, n: int) -> str:
    low, high = share_interval(k, n)
    return "pass" if low > MAJORITY else "fail" if high < MAJORITY else "inconclusive"


def seeds_to_decide(mean: float, sd: float) -> int | None:
    """The seeds at which a margin with this mean and sd (over seeds) would have an interval clear of 0,
    if both held; None where no number would (a mean at the edge, or no spread to shrink)."""
    if sd <= 0 or mean == 0 or not math.isfinite(mean / sd):
        return None
    for n in range(2, MAX_SEEDS + 1):
        if t_quantile(n - 1) * sd / math.sqrt(n) < abs(mean):
            return n
    return None


def seeds_to_decide_share(k: int, n: int) -> int | None:
    """The seeds at which the share k/n, if it held, would be clearly above or below one half."""
    p = k / n
    if p == MAJORITY:
        return None
    for m in range(n, MAX_SEEDS + 1):
        if decide_share(round(p * m), m) != "inconclusive":
            return m
    return None
