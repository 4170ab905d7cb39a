"""The ledger's statistics. A value is read per seed (a table's `<col>_seeds`, seed order) into a Sample:
its estimate and, per seed set, every seed's value. Seeds are 0 … n−1 in every table (seed k of every
row draws from k), so rows share their first seeds whatever their counts: what is derived from them (a
difference, a ratio, a lead) is computed seed by seed on the seeds they share — paired — and centred on
the estimate over every seed of every row (`paired`). Values of several rows of different counts read
side by side (a list), and runs compared apart (`combine`), keep each set apart: each set's values
computed with the other sets at their means, with Welch–Satterthwaite's degrees of freedom.

Four ways to judge, by what the chapter printed:
- one run (a number the chapter printed once, compared within a tolerance): the chapter's value, widened by the
  tolerance, against a 95 % prediction interval of one new run of ours, our mean ± t·s·√(1 + 1/n) (`predict`):
  wholly outside differs; inside agrees only where the test could have failed (`powered`: a chapter value
  CATCH_SD one-run sd past the tolerance caught 80 % of the time), else it stays open (`seeds_to_power`);
- the same by rank, for a quantity that is not normal on its scale (a share, an accuracy with a failed-seed
  mode, a value of two modes): a conformal p-value of the chapter's value among our seeds (`rank_p`), which
  no draw of ours reaches at 5 % more often than 5 % of the time;
- a conclusion, a bound or an ordering: the mean's interval (`mean_interval`, `decide`);
- an outcome per seed (which weight is the largest), shown by the chapter's one model: the share of seeds with
  Wilson's interval, judged as a draw (`decide_draw`: a minority outcome stays open, a rare one differs).
A value whose rows had seeds added after K looks is judged at its last at 5 %/K (`level_for`), every seed
counted; a plan fixed before its first look reads all K at that level, and spends at most 5 % over them. A bounded quantity (an accuracy, a
share) gets its interval inside its range (`bounded_interval`). What more seeds would decide is a count at 80 %
power (`seeds_for_power`, `seeds_to_power`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

LEVEL = 0.95   # two-sided level of every interval with one look (α = 5 %)
POWER = 0.8    # a seed plan's chance of deciding a claim, if our mean and spread are the truth
MAJORITY = 0.5  # an outcome "holds" when it holds in more than this share of seeds
RARE = 0.05  # an outcome of one model seen in fewer than this share of our seeds is not a plausible draw of ours
CATCH_SD = 4  # an AGREES must be able to fail: a chapter value this many one-run sd past the tolerance is caught
MAX_SEEDS = 1000  # beyond this, "more seeds" is not a plan
# the levels as the ledger's words print them (one place: its text never types them)
LEVEL_TEXT, ALPHA_TEXT, POWER_TEXT, RARE_TEXT = (f"{100 * x:.3g} %" for x in (LEVEL, 1 - LEVEL, POWER, RARE))


def level_for(looks: int) -> float:
    """The two-sided level at a value's last look, after `looks` looks (seeds added after each): α/looks (Bonferroni).
    A plan fixed before its first look that reads every one of its K looks at α/K spends at most α over all of them;
    rows whose looks were read at looser levels first (5 %/j at look j, before this rule) spent more: alpha_spent."""
    return 1 - (1 - LEVEL) / max(int(looks), 1)


def alpha_spent(looks: int) -> float:
    """The α that `looks` looks at a value spent in all where look j was read at 5 %/j: at most α·(1 + 1/2 + … +
    1/looks)."""
    return (1 - LEVEL) * sum(1 / k for k in range(1, max(int(looks), 1) + 1))


def t_quantile(df: float, level: float = LEVEL) -> float:
    """Student's t at a two-sided level (95 % by default), `df` degrees of freedom (n − 1 for n seeds)."""
    return t_upper((1 + level) / 2, df)


def t_upper(p: float, df) -> np.ndarray | float:
    """Student's t quantile p at `df` degrees of freedom (an array, or inf for a normal)."""
    from scipy import stats  # here: loading scipy takes a second, and the workflow imports this module on every call
    df = np.asarray(df, dtype=float)
    out = np.where(np.isfinite(df), stats.t.ppf(p, np.where(np.isfinite(df), df, 1.0)), stats.norm.ppf(p))
    return float(out) if out.ndim == 0 else out


def normal_cdf(x):
    from scipy import stats  # as in t_upper
    return stats.norm.cdf(x)


# ---------------------------------------------------------------- values over seeds

@dataclass(frozen=True)
class Sample:
    """A value over seeds: `point`, its estimate (shape S: one number, a list, a matrix); `sets`, per seed set
    (its size n), every seed's value (S + (n,)), the other sets at their means; `shared`, every seed's value over
    the seeds all sets share (seed k with seed k), for readers that need one value per seed."""
    point: np.ndarray
    sets: dict[int, np.ndarray] = field(default_factory=dict)
    shared: np.ndarray | None = None

    @staticmethod
    def constant(x) -> Sample:
        x = np.asarray(x, dtype=float)
        return Sample(x, {}, x[..., None])

    @staticmethod
    def of_cells(cells: list, shape: tuple) -> Sample:
        """From each element's seed values (a list; one value: no seeds), elements flattened in `shape`'s order."""
        cells = [np.asarray(c, dtype=float).reshape(-1) for c in cells]
        point = np.array([c.mean() for c in cells]).reshape(shape)
        counts = sorted({c.size for c in cells if c.size > 1})
        sets = {}
        for n in counts:
            values = np.repeat(point.reshape(-1)[:, None], n, axis=1)
            for i, c in enumerate(cells):
                if c.size == n:
                    values[i] = c
            sets[n] = values.reshape(*shape, n)
        m = counts[0] if counts else 1
        shared = np.array([c[:m] if c.size > 1 else np.repeat(c, m) for c in cells]).reshape(*shape, m)
        return Sample(point, sets, shared)

    @property
    def counts(self) -> list[int]:
        return sorted(self.sets)

    def at(self, n: int) -> np.ndarray:
        """Every seed's value of set n (the point, repeated, where the value does not read that set)."""
        return self.sets[n] if n in self.sets else self.point[..., None]

    def per_seed(self) -> np.ndarray:
        """Every seed's value: a value of one seed set only (a point has one 'seed')."""
        if len(self.sets) > 1:
            raise ValueError(f"a value of rows with different seed sets ({self.counts}) has no one value per seed")
        return next(iter(self.sets.values())) if self.sets else self.point[..., None]

    def terms(self) -> list[tuple[np.ndarray, int]]:
        """(each seed set's variance over its seeds, elementwise; its seed count)."""
        return [(values.var(axis=-1, ddof=1), n) for n, values in self.sets.items()]

    def sd(self) -> np.ndarray:
        """The spread of one run of this value: the seed sd (√ of the sets' variances added)."""
        return np.sqrt(sum((v for v, _ in self.terms()), np.zeros(self.point.shape)))

    def mean_error(self, grown: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """(the standard error of the point, its Welch–Satterthwaite degrees of freedom), with every set grown
        to at least `grown` seeds (its spread kept): what a plan would give."""
        return welch([(v / max(n, grown), max(n, grown) - 1) for v, n in self.terms()], self.point.shape)

    def draw_error(self, grown: int = 0, draws: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """(the spread of a new value, the mean of `draws` runs, against our mean, s·√(1/draws + 1/n) over the
        sets; its degrees of freedom), every set grown to at least `grown` seeds."""
        return welch([(v * (1 / draws + 1 / max(n, grown)), max(n, grown) - 1) for v, n in self.terms()],
                     self.point.shape)


def welch(parts, shape) -> tuple[np.ndarray, np.ndarray]:
    """√ of the variance parts added, and their Satterthwaite degrees of freedom (inf where nothing varies);
    a part is (variance, the degrees of freedom of the spread it was measured with)."""
    spread, denominator = np.zeros(shape), np.zeros(shape)
    for part, dof in parts:
        spread = spread + part
        denominator = denominator + part ** 2 / dof
    with np.errstate(divide="ignore", invalid="ignore"):
        df = np.where(denominator > 0, spread ** 2 / denominator, np.inf)
    return np.sqrt(spread), df


def combine(f, *samples: Sample) -> Sample:
    """f applied elementwise to samples: seed by seed where they read one seed set (or none), set by set (the
    other sets at their means) where they read several."""
    counts = sorted({n for s in samples for n in s.sets})
    with np.errstate(divide="ignore", invalid="ignore"):
        shared = f(*align_shared(*(s.shared if s.shared is not None else s.point[..., None] for s in samples)))
        if len(counts) <= 1:
            values = f(*(s.at(counts[0]) if counts else s.point[..., None] for s in samples))
            if not counts:
                return Sample(values[..., 0], {}, shared)
            return Sample(values.mean(axis=-1), {counts[0]: values}, shared)
        return Sample(f(*(s.point for s in samples)), {n: f(*(s.at(n) for s in samples)) for n in counts}, shared)


def paired(f, *samples: Sample) -> Sample:
    """f applied elementwise to the values of rows of one table, seed by seed (combine), and where their counts
    differ, on the seeds they share (seed k of every row draws from k: paired), each seed's value moved by the same
    amount so that their mean is f of the estimates over every seed of every row."""
    counts = {n for s in samples for n in s.sets}
    if len(counts) <= 1:
        return combine(f, *samples)
    with np.errstate(divide="ignore", invalid="ignore"):
        shared = f(*align_shared(*(s.shared if s.shared is not None else s.point[..., None] for s in samples)))
        point = np.asarray(f(*(s.point for s in samples)), dtype=float)
    return Sample(point, {shared.shape[-1]: shared - shared.mean(axis=-1, keepdims=True) + point[..., None]}, shared)


def align_shared(*arrays: np.ndarray) -> list[np.ndarray]:
    """Seed axes cut to the seeds every value has (seed k with seed k); one value broadcasts."""
    counts = [a.shape[-1] for a in arrays if a.shape[-1] > 1]
    n = min(counts) if counts else 1
    return [a[..., :n] if a.shape[-1] > 1 else a for a in arrays]


def stack(samples: list[Sample]) -> Sample:
    """A list of values (broadcast to one shape) as one value with a leading axis."""
    shape = np.broadcast_shapes(*(s.point.shape for s in samples))
    counts = sorted({n for s in samples for n in s.sets})

    def lift(values):
        n = max(v.shape[-1] for v in values)
        return np.stack([np.broadcast_to(v, shape + (n,)) for v in values])

    shared = lift(align_shared(*(s.shared for s in samples)))
    point = np.stack([np.broadcast_to(s.point, shape) for s in samples])
    return Sample(point, {n: lift([s.at(n) for s in samples]) for n in counts}, shared)


# ---------------------------------------------------------------- intervals and decisions

def mean_interval(x: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, low, high) of the mean over the last axis (seeds): a point for one seed."""
    n, mean = x.shape[-1], x.mean(axis=-1)
    if n < 2:
        return mean, mean, mean
    half = t_quantile(n - 1, level) * x.std(axis=-1, ddof=1) / math.sqrt(n)
    return mean, mean - half, mean + half


def sample_interval(s: Sample, level: float = LEVEL, bounds: tuple[float, float] | None = None):
    """(point, low, high): the mean's interval over all its seed sets (Welch), inside `bounds` where the
    quantity has a range (an accuracy, a share)."""
    error, df = s.mean_error()
    if bounds is not None:
        return (s.point, *bounded_interval(s.point, error, df, bounds, level))
    half = t_quantile(df, level) * error
    return s.point, s.point - half, s.point + half


def bounded_interval(point, error, df, bounds, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's interval for a mean in [low, high]: the share's interval at the effective number of draws that
    gives its standard error (n_eff = p(1 − p)/se²), with t's quantile for the seeds' degrees of freedom. It stays
    inside the range, is a point where nothing varies, and is the t-interval where the mean is far from an edge."""
    low, high = bounds
    p = np.clip((np.asarray(point, dtype=float) - low) / (high - low), 0, 1)
    se = np.asarray(error, dtype=float) / (high - low)
    z = t_quantile(df, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.where(se > 0, p * (1 - p) / se ** 2, np.inf)
        n = np.where(n > 0, n, np.inf)  # a mean on an edge with a spread (not a real mean of values in range)
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        centre, half = np.where(np.isfinite(n), centre, p), np.where(np.isfinite(n), half, 0.0)
    return low + (high - low) * (centre - half), low + (high - low) * (centre + half)


def difference_interval(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """(difference, low, high): mean(a) − mean(b) with Welch's 95 % interval, for seeds of two different
    runs (unpaired); a single seed adds no spread of its own."""
    return _welch(float(a.mean() - b.mean()), _variance_of_mean(a, a.size), _variance_of_mean(b, b.size))


def decide(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Per element, from the interval of a margin (>= 0 passes): pass, fail, or inconclusive when it
    straddles 0. A margin that is not a number (a run that diverged, a missing measurement) fails."""
    status = np.where(low >= 0, "pass", np.where(high < 0, "fail", "inconclusive"))
    return np.where(np.isnan(low) | np.isnan(high), "fail", status)


def predict(gap: Sample, tolerance: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """A number the chapter printed once, against ours: per element, (differs, the half-width of one new run's
    prediction interval). Δ = our mean − the chapter's run; one new run spreads s·√(1 + 1/n) around our mean; the
    chapter's value widened by ±tolerance differs where it lies wholly outside our mean ± t(1 − α/2)·spread — the
    replication criterion of a prediction interval (Patil, Peng and Leek, 2016)."""
    spread, df = gap.draw_error()
    half = t_upper(1 - (1 - level) / 2, df) * spread
    differs = (np.abs(gap.point) - half > tolerance) | np.isnan(gap.point)
    return differs, half


def band(point: np.ndarray, gap: Sample, tolerance: np.ndarray, level: float = LEVEL):
    """What predict can resolve, per element: (low, high) — the chapter values it accepts, our mean ± (tolerance +
    t(1 − α/2)·spread); the shift of the chapter's run from our mean that it catches 80 % of the time, tolerance +
    (t(1 − α/2) + z(0.8))·spread (the chapter's run drawn with one run's spread around that shift); the seed sd."""
    spread, df = gap.draw_error()
    outside = tolerance + t_upper(1 - (1 - level) / 2, df) * spread
    catches = outside + t_upper(POWER, np.inf) * spread
    return point - outside, point + outside, catches, gap.sd()


def powered(gap: Sample, level: float = LEVEL, grown: int = 0) -> np.ndarray:
    """Per element, could predict have said differs: does it catch, 80 % of the time, a chapter value CATCH_SD
    one-run sd past the tolerance — (t(1 − α/2) + z(0.8))·spread <= CATCH_SD·s? Needs about 5 seeds at α = 5 %."""
    spread, df = gap.draw_error(grown)
    return (t_upper(1 - (1 - level) / 2, df) + t_upper(POWER, np.inf)) * spread <= CATCH_SD * gap.sd() * (1 + 1e-12)


def seeds_to_power(gap: Sample, level: float = LEVEL) -> int:
    """The seeds per row at which predict is powered for every element (0: none up to MAX_SEEDS)."""
    for n in _counts_from(max(gap.counts, default=1)):
        if np.all(powered(gap, level, int(n))):
            return int(n)
    return 0


def rank_seeds(level: float = LEVEL) -> int:
    """The fewest seeds at which rank_p can reach 1 − level: a value beyond every seed has p = 2/(n + 1) (it and the
    far extreme seed are the shallowest), so n >= 2/α − 1: 39 at 95 %."""
    return math.ceil(2 / (1 - level) - 1 - 1e-9)


def rank_p(seeds: np.ndarray, value: np.ndarray, tolerance: np.ndarray) -> float:
    """A conformal p-value by rank, for a quantity that is not normal on its scale: how shallow `value` lies among
    our seeds (last axis) and itself, against how shallow each seed lies among them. A point's depth is, over the
    elements, the least of the points at or below it and at or above it; were `value` a run of ours, its depth's
    rank among the n + 1 points would be uniform, so p = #points no deeper / (n + 1) reaches α at most α of the
    time, whatever the distribution and however many elements the value has. The tolerance only deepens `value`
    (its depth is read at its most central point within ±tolerance)."""
    seeds = seeds.reshape(-1, seeds.shape[-1])
    value, tolerance = (np.broadcast_to(x, seeds.shape[:1])[:, None] for x in (value, tolerance))
    below = (seeds[:, None, :] <= seeds[:, :, None]).sum(axis=-1) + (value <= seeds)  # element x seed
    above = (seeds[:, None, :] >= seeds[:, :, None]).sum(axis=-1) + (value >= seeds)
    depth = np.minimum(below, above).min(axis=0)
    own = np.minimum(1 + (seeds <= value + tolerance).sum(axis=-1), 1 + (seeds >= value - tolerance).sum(axis=-1)).min()
    return float((1 + (depth <= own).sum()) / (seeds.shape[-1] + 1))


# ---------------------------------------------------------------- seeds that would decide, at 80 % power

def seeds_for_power(s: Sample, level: float = LEVEL, smallest: bool = False) -> np.ndarray:
    """Per element of a margin (>= 0 passes), the seeds per row at which its mean's interval would clear 0 with
    80 % power if the mean and spread held; 0 where no count up to MAX_SEEDS would. Every seed set is grown to
    the count (a larger one kept); `smallest`: counts are tried from the smallest set up (the fewest seeds its
    smaller rows need beside a large one), not from the largest."""
    def power(i, counts):
        error, df = _grown(s, i, counts, draw=False)
        margin, t = float(s.point.flat[i]), t_upper((1 + level) / 2, df)
        with np.errstate(divide="ignore", invalid="ignore"):
            return normal_cdf(margin / error - t) + normal_cdf(-margin / error - t)

    return _first_count(s, power, min(s.counts, default=1) if smallest else None)


def one_draw_seeds(gap: Sample, tolerance: np.ndarray, level: float = LEVEL) -> np.ndarray:
    """Per element, the seeds per row at which a one-run comparison would be decided — equivalence to the tolerance
    shown by two one-sided tests, or the chapter's run outside — with 80 % power if our mean and spread held; 0 where
    no count up to MAX_SEEDS would. The design rule of the seed plans written in configs/pipeline.yaml (seed_plans),
    which were sized at it; the ledger judges by predict."""
    alpha, tolerance = 1 - level, np.broadcast_to(tolerance, gap.point.shape)

    def power(i, counts):
        error, _ = _grown(gap, i, counts, draw=False)
        spread, df = _grown(gap, i, counts, draw=True)
        delta, tol = float(gap.point.flat[i]), float(tolerance.flat[i])
        inside = tol - t_upper(1 - alpha, df) * spread
        outside = tol + t_upper(1 - alpha / 2, df) * spread
        matched = np.maximum(0.0, normal_cdf((inside - delta) / error) - normal_cdf((-inside - delta) / error))
        missed = normal_cdf((-outside - delta) / error) + 1 - normal_cdf((outside - delta) / error)
        return matched + missed

    return _first_count(gap, power)


def _grown(s: Sample, i: int, counts: np.ndarray, draw: bool) -> tuple[np.ndarray, np.ndarray]:
    """Element i's standard error of the mean (or, draw=True, one run's spread against the mean) and its
    degrees of freedom, with every seed set grown to each of `counts` (its spread kept)."""
    spread, denominator = np.zeros(counts.shape), np.zeros(counts.shape)
    for var, n in s.terms():
        size = np.maximum(n, counts)
        part = float(var.flat[i]) * ((1 + 1 / size) if draw else 1 / size)
        spread, denominator = spread + part, denominator + part ** 2 / (size - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt(spread), np.where(denominator > 0, spread ** 2 / denominator, np.inf)


def _counts_from(n: int) -> np.ndarray:
    """Candidate counts from n: every count to 100, then in steps of 1 % (a plan is read to two digits)."""
    counts, m = [], max(n, 2)
    while m <= MAX_SEEDS:
        counts.append(m)
        m += 1 if m < 100 else max(1, m // 100)
    return np.array(counts)


def _first_count(s: Sample, power, start: int | None = None) -> np.ndarray:
    """Per element, the first candidate count (from `start`, by default the largest seed set) whose power
    reaches POWER (0: none; nothing varies: 0)."""
    counts = _counts_from(max(s.counts, default=1) if start is None else start)
    out = np.zeros(s.point.shape, dtype=int)
    for i in range(s.point.size):
        if not s.sets or not np.isfinite(s.point.flat[i]) or len(counts) == 0:
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            reached = np.flatnonzero(np.nan_to_num(power(i, counts)) >= POWER)
        out.flat[i] = counts[reached[0]] if len(reached) else 0
    return out


# ---------------------------------------------------------------- shares of seeds

def share_interval(k, n: int, level: float = LEVEL):
    """Wilson's interval for a share k/n (k a count or an array of counts; a point for one seed)."""
    if n < 2:
        return np.asarray(k) / n, np.asarray(k) / n
    from scipy import stats  # as in t_upper
    z = float(stats.norm.ppf((1 + level) / 2))
    p = np.asarray(k) / n
    centre, half = p + z * z / (2 * n), z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)
    # none or all: the interval's end is the range's, exactly (rounding leaves 5e-17 otherwise)
    low, high = np.where(np.asarray(k) == 0, 0.0, low), np.where(np.asarray(k) == n, 1.0, high)
    return (float(low), float(high)) if np.ndim(k) == 0 else (low, high)


def decide_draw(k: int, n: int, level: float = LEVEL) -> str:
    """An outcome the chapter showed in one model, seen in k of our n seeds: "pass" where most seeds show it (Wilson's
    lower bound above one half), "fail" where it is rare (the upper bound below RARE: the chapter's model is not a
    plausible draw of ours), else "consistent" (a minority outcome: a plausible draw)."""
    low, high = share_interval(k, n, level)
    return "pass" if low > MAJORITY else "fail" if high < RARE else "consistent"


def decide_necessary(k: int, n: int, level: float = LEVEL) -> str:
    """An outcome the chapter argues must hold in every model, holding in k of our n seeds: "fail" where the seeds
    where it fails are more than a rare few (Wilson's lower bound of their share above RARE), "pass" where they are
    fewer (its upper bound below RARE), else "consistent"."""
    low, high = share_interval(n - k, n, level)
    return "fail" if low > RARE else "pass" if high < RARE else "consistent"


# ---------------------------------------------------------------- two runs' seeds (Welch)

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
