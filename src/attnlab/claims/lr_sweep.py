"""The sqrt(d_k) sweep (table sqrt_dk_sweep): does one learning rate, unstated, reproduce every sqrt(d_k) number
of the chapter? Each number is read at every rate its runs were trained at (families/scale.py: the runs and the
family's tables at one rate), where one new run of ours lands is set against the chapter's window (the ledger's
one-run test), and the rates whose runs fit each number (not ruled out) make its band; one rate fits all where at
one rate tried the ledger's number AGREES for every number, none where two bands never meet.
"""

import json
import math
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np

from attnlab.claims import stats
from attnlab.claims.compare import NOT_ESTABLISHED
from attnlab.claims.evaluate import judge
from attnlab.claims.render import show_number
from attnlab.claims.rules import rounding
from attnlab.claims.stats import Sample
from attnlab.runs import evals_of
from attnlab.tables import held_out


@dataclass(frozen=True)
class SweepNumber:
    """A sqrt(d_k) number of the chapter: the claim that holds it, and what it reads at each rate — an
    evals.csv column's last value of one head (score std, one-hot share) or the held-out cost of not
    dividing (undivided − divided perplexity, seed by seed)."""
    number: str
    claim: str
    d_k: int
    read: str  # "score_std" / "onehot_share" of `variant`, or "cost"
    variant: str = "undivided"


SQRT_DK_NUMBERS = (
    SweepNumber("undivided final score std", "score_runaway.final_std", 1024, "score_std"),
    SweepNumber("undivided one-hot share", "score_runaway.onehot", 1024, "onehot_share"),
    SweepNumber("divided final score std (soft seeds)", "score_runaway.divided_final_std", 1024, "score_std", "divided"),
    SweepNumber("cost of not dividing, d_k = 256", "scale_training.dk256_cost", 256, "cost"),
    SweepNumber("cost of not dividing, d_k = 1024", "scale_training.dk1024_cost", 1024, "cost"),
)


def show_rate(lr: float, digits: int = 1) -> str:
    """3e-3, 6.2e-3: a learning rate as the configs write it."""
    mantissa, exponent = f"{lr:.{digits - 1}e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.') if '.' in mantissa else mantissa}e{int(exponent)}"



def values_at(n: SweepNumber, runs: dict, lr: float):
    """The number's value at a rate, over seeds (a stats.Sample; seed by seed for a cost where both heads
    trained the same seeds, Welch where they did not), or None where its runs were not trained."""
    def sample(values) -> Sample:
        values = np.asarray(values, dtype=float)
        return Sample(np.asarray(values.mean()), {len(values): values} if len(values) > 1 else {}, values)

    def read(variant: str):
        paths = runs.get((n.d_k, variant, lr))
        if n.read == "score_std" and variant == "divided":
            # the chapter's divided head is soft: its std is read on our soft seeds, never one spread across a
            # soft and a collapsed mode (a collapsed head's std is another quantity, an order of magnitude up)
            paths = [p for p in paths or [] if evals_of(p)["block1_onehot_share"].iloc[-1] <= COLLAPSED_ONEHOT]
        if not paths:
            return None
        if n.read == "cost":
            return sample([held_out(json.loads(Path(p).read_text())) for p in paths])
        return sample([evals_of(p)[f"block1_{n.read}"].iloc[-1] for p in paths])

    if n.read != "cost":
        return read(n.variant)
    divided, undivided = read("divided"), read("undivided")
    return None if divided is None or undivided is None else stats.combine(np.subtract, undivided, divided)


# A head has collapsed when most of its rows put > 0.99 of their weight on one token: the undivided head's
# state in the chapter (99.9 %), against its divided head's soft blend.
COLLAPSED_ONEHOT = 0.5


# Two kinds of collapse: a head that collapses within the first fifth of its training locked before it learned
# anything (its held-out perplexity stays near the no-context model's); one that stays soft longer and hardens
# later has learned first (issue 71: at 6e-3 the late ones end better than the divided head at 1e-3)
EARLY_SHARE = 0.2
KINDS = ("locked early", "hardened late", "soft")
# the sweep's row of how the undivided head collapsed: a description of our seeds, no chapter number's
UNDIVIDED_KINDS = "undivided_kinds"


def collapse_kind(evals) -> str:
    """A head's kind from its evaluations: soft where it ends with at most COLLAPSED_ONEHOT of its rows one-hot;
    otherwise locked early where its one-hot share first passes that within EARLY_SHARE of training, else
    hardened late."""
    share, steps = evals["block1_onehot_share"], evals["step"]
    if share.iloc[-1] <= COLLAPSED_ONEHOT:
        return "soft"
    first = steps[share > COLLAPSED_ONEHOT].iloc[0]
    return "locked early" if first <= EARLY_SHARE * steps.iloc[-1] else "hardened late"


def head_state(paths: list[str]) -> dict:
    """A d_k = 1024 head at one rate, seed by seed: how many seeds collapsed (one-hot share above COLLAPSED_ONEHOT
    at the last evaluation), the ranges of one-hot share and entropy (nats) there, and each seed's kind
    (collapse_kind) with its held-out perplexity."""
    evals = [evals_of(p) for p in paths]
    last = [e.iloc[-1] for e in evals]
    onehot, entropy = [e["block1_onehot_share"] for e in last], [e["block1_entropy"] for e in last]
    kinds: dict[str, list[tuple[int, float]]] = {}
    for p, e in zip(paths, evals):
        kinds.setdefault(collapse_kind(e), []).append((int(Path(p).parent.name.removeprefix("seed")),
                                                     held_out(json.loads(Path(p).read_text()))))
    return {"collapsed": sum(v > COLLAPSED_ONEHOT for v in onehot), "seeds": len(last),
            "onehot": (min(onehot), max(onehot)), "entropy": (min(entropy), max(entropy)), "kinds": kinds}


def show_state(state: dict) -> str:
    k, n = state["collapsed"], state["seeds"]
    word = "collapsed" if k == n else "soft" if k == 0 else "mixed"
    def held(seeds) -> str:
        return "held-out " + "–".join(dict.fromkeys(show_number(f(ppl for _, ppl in seeds)) for f in (min, max)))

    found = [(kind, seeds) for kind in KINDS if (seeds := state["kinds"].get(kind))]
    kinds = (f"every seed {found[0][0]} ({held(found[0][1])})" if len(found) == 1 else "; ".join(
        f"{kind}: seed{'s' if len(seeds) > 1 else ''} {', '.join(str(seed) for seed, _ in sorted(seeds))} ({held(seeds)})"
        for kind, seeds in found))
    return (f"{word}: {k} of {n} seeds collapsed (one-hot share {show_number(state['onehot'][0])}–"
            f"{show_number(state['onehot'][1])}, entropy {show_number(state['entropy'][0])}–"
            f"{show_number(state['entropy'][1])} nats); {kinds}")


def chapter_window(claim: dict) -> tuple[float, float]:
    """The values one run of ours must reach to be within the ledger's tolerance of the chapter's number
    (the tolerance widened by half its last printed digit, as the ledger's one-run test)."""
    chapter, rule = float(claim["chapter"]), claim["rule"]
    width = rule["tolerance"] * (abs(chapter) if rule["kind"] == "relative" else 1.0) + float(rounding(claim)) / 2
    return chapter - width, chapter + width


def on_scale(value, log: bool):
    """A value over seeds (a stats.Sample) on its scale: its logarithm for a std."""
    f = np.log if log else (lambda x: x)
    return type(value)(f(value.point), {n: f(v) for n, v in value.sets.items()},
                       f(value.shared) if value.shared is not None else None)


def run_band(scaled, level: float = 0.95):
    """(point, low, high) on the scale: where one new run of ours lands, our mean ± t·s·√(1 + 1/n) (the
    ledger's one-run spread); low = high = None with one seed (no spread)."""
    if not scaled.sets:
        return float(scaled.point), None, None
    spread, df = scaled.draw_error()
    half = float(stats.t_upper((1 + level) / 2, df) * spread)
    return float(scaled.point), float(scaled.point) - half, float(scaled.point) + half



# The ledger's number word at one rate, as the sweep reads it: the chapter's number fits where it is not ruled out.
FITS = {"AGREES": "fits", "OPEN": "fits", "DIFFERS": "misses", "NOT TESTED": "not tested"}


def rate_status(claim: dict, tables: dict) -> tuple[str, str]:
    """The ledger's number word of a claim on one rate's runs (its point is not what a rate is asked) and the
    word in a cell: OPEN with the seeds that would decide it."""
    judged = judge(claim, tables)
    if judged.number == "OPEN":
        return judged.number, f"OPEN, {judged.would_decide or 'no count of seeds'} would decide it"
    return judged.number, judged.number


def fitting_band(rates: list[float], lows: list[float], highs: list[float], window: tuple[float, float]
                 ) -> list[tuple[float, float]]:
    """The learning rates at which one run of ours could land within the chapter's window: each run band
    ([low, high] per rate, on the value's scale) interpolated linearly in log(rate) between rates, the rates
    where the band meets the window, as intervals (low rate, high rate)."""
    w_low, w_high = window
    x = np.log10(rates)
    pieces = []
    if len(rates) == 1:
        return [(rates[0], rates[0])] if lows[0] <= w_high and highs[0] >= w_low else []
    for i in range(len(rates) - 1):
        u_low, u_high = 0.0, 1.0
        # low(u) <= w_high and high(u) >= w_low, each linear in u
        for start, end, bound, at_most in ((lows[i], lows[i + 1], w_high, True), (highs[i], highs[i + 1], w_low, False)):
            slope = end - start
            if slope == 0:
                if (start > bound) if at_most else (start < bound):
                    u_low, u_high = 1.0, 0.0
                continue
            root = (bound - start) / slope
            if (slope > 0) == at_most:
                u_high = min(u_high, root)
            else:
                u_low = max(u_low, root)
        if u_low <= u_high:
            pieces.append((10 ** (x[i] + u_low * (x[i + 1] - x[i])), 10 ** (x[i] + u_high * (x[i + 1] - x[i]))))
    merged = []
    for low, high in pieces:
        if merged and low <= merged[-1][1] * (1 + 1e-9):
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


def intersect(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out = []
    for low, high in a:
        for other_low, other_high in b:
            if max(low, other_low) <= min(high, other_high):
                out.append((max(low, other_low), min(high, other_high)))
    return out


def show_band(band: list[tuple[float, float]], tried: list[float]) -> str:
    if len(tried) == 1:
        return f"{show_rate(tried[0])} (the only rate measured with a spread)" if band else \
            f"not at {show_rate(tried[0])} (the only rate measured with a spread)"
    if not band:
        return f"none between {show_rate(min(tried))} and {show_rate(max(tried))}"
    parts = []
    for low, high in band:
        text = show_rate(low, 2) if math.isclose(low, high) else f"{show_rate(low, 2)} – {show_rate(high, 2)}"
        ends = [end for end, touches in (("lowest", math.isclose(low, min(tried))), ("highest", math.isclose(high, max(tried))))
                if touches and not math.isclose(low, high)]
        if ends:
            text += f" (to the {' and the '.join(ends)} rate measured with a spread)"
        parts.append(text)
    return ", ".join(parts)



def one_rate(bands: dict, measured: dict, names: dict, statuses: dict | None = None, rates: tuple = (),
             collapsed: dict | None = None, runaway: str | None = None) -> dict:
    """Does one learning rate reproduce every number? No where two numbers' bands (the rates at which the chapter's
    number is not ruled out) meet nowhere in the range of rates where both were measured with a spread (the widest
    such range is named; intervals that never meet all together contain two that never meet); yes where, at one rate
    tried, the ledger's number AGREES for every number (shown, not merely not ruled out: an OPEN one may still be
    ruled out by more seeds); else not established. `bands`: claim -> its band; `measured`: claim -> (lowest, highest
    rate with a spread); `statuses`: (claim, rate) -> the ledger's number word there (rate_status). `collapsed`: rate
    -> (seeds whose divided head collapsed there, seeds); no also where a soft divided head is a rare outcome of ours
    (stats.decide_draw: the chapter's one run is not a plausible draw) at the highest rate tried at or below the low
    end of the `runaway` claim's band and at every rate tried above (the undivided std reaches the chapter's only
    where the divided head, soft in the chapter, no longer is; collapse is taken to persist at higher rates, as it
    does at every rate tried); otherwise the finding says how many seeds collapsed at each rate tried in that band."""
    statuses, collapsed = statuses or {}, collapsed or {}
    if runaway in bands and bands[runaway] and collapsed:
        start = bands[runaway][0][0]
        below = [lr for lr in collapsed if lr <= start * (1 + 1e-9)]
        from_ = max(below) if below else None
        if from_ is not None and all(stats.decide_draw(n - k, n) == "fail" for lr, (k, n) in collapsed.items()
                                     if lr >= from_):
            return {"band": f"none from {show_rate(from_)}", "band_low": math.nan, "band_high": math.nan,
                    "finding": f"no: the {names[runaway]} reaches the chapter's only from {show_rate(start, 2)}, and "
                               f"the divided head, soft in the chapter, has collapsed at every rate tried from "
                               f"{show_rate(from_)} up, where a soft one is a rare outcome of ours"}
    conflicts = []
    for a, b in combinations(bands, 2):
        common = (max(measured[a][0], measured[b][0]), min(measured[a][1], measured[b][1]))
        if common[0] <= common[1] and not intersect(intersect([common], bands[a]), bands[b]):
            conflicts.append((math.log(common[1] / common[0]), common, a, b))
    if conflicts:
        _, (low, high), a, b = max(conflicts, key=lambda c: c[0])
        where = f"at {show_rate(low)}" if math.isclose(low, high) else f"between {show_rate(low)} and {show_rate(high)}"
        windows = "; ".join(f"the {names[c]} fits at {show_band(bands[c], list(measured[c]))}" for c in (a, b))
        return {"band": f"none {where}", "band_low": math.nan, "band_high": math.nan,
                "finding": f"no: no rate {where} fits both the {names[a]} and the {names[b]} (the range where "
                           f"both were measured with a spread; {windows})"}
    every = [lr for lr in rates if all(statuses.get((c, lr)) == "AGREES" for c in names)]
    if every:
        text = ", ".join(show_rate(lr) for lr in every)
        return {"band": text, "band_low": min(every), "band_high": max(every),
                "finding": f"yes: at {text} every one of the {len(names)} numbers AGREES"}
    together = None
    if len(bands) == len(names):
        common = (max(low for low, _ in measured.values()), min(high for _, high in measured.values()))
        together = [common] if common[0] <= common[1] else []
        for band in bands.values():
            together = intersect(together, band)
    where = (f"not ruled out together at {show_band(together, [min(rates), max(rates)])}" if together
             else "no rate where all were measured with a spread")
    short = sorted({(names[c], word) for (c, lr), word in statuses.items() if word != "AGREES"
                    and together and any(low <= lr <= high for low, high in together)})
    heads = ""
    if runaway in bands and bands[runaway] and collapsed:
        inside = [lr for lr in sorted(collapsed) if any(low <= lr <= high for low, high in bands[runaway])]
        if inside:
            heads = ("; where the " + names[runaway] + " can reach the chapter's, the divided head collapsed in " +
                     ", ".join(f"{collapsed[lr][0]} of {collapsed[lr][1]} seeds at {show_rate(lr)}" for lr in inside))
            every = [lr for lr in inside if collapsed[lr][0] == collapsed[lr][1]]
            if every:  # all collapsed, yet too few seeds to call a soft head (the chapter's) rare
                n = collapsed[every[0]][1]
                _, upper = stats.share_interval(0, n)
                heads += (f" (a soft one, as the chapter's, is not ruled out there: Wilson's upper bound "
                          f"{100 * float(upper):.0f} % of {n} seeds)")
    return {"band": NOT_ESTABLISHED, "band_low": math.nan, "band_high": math.nan,
            "finding": f"{NOT_ESTABLISHED}: {where}"
                       + ("; not shown to agree at a rate tried there: "
                          + ", ".join(f"the {name} ({word})" for name, word in short) if short else "")
                       + heads}


def sweep_rows(claims: dict, runs: dict, tables_at, runaway_d_k: int) -> list[dict]:
    """The sqrt_dk_sweep table's rows: per number, its value at each rate with where one run of ours lands and
    the ledger's number word on that rate's tables (`tables_at(lr)`: score_runaway and scale_training from the runs
    there), the band of rates that fit it; the state of the divided d_k = `runaway_d_k` head at each rate; and
    whether one rate fits all five (`one_rate`). `runs`: (d_k, divided or undivided, lr) -> its seeds'
    metrics.json."""
    rates = sorted({lr for _, _, lr in runs})
    out, bands, measured, statuses = [], {}, {}, {}
    for n in SQRT_DK_NUMBERS:
        claim = claims[n.claim]
        window = chapter_window(claim)
        values = {lr: v for lr in rates if (v := values_at(n, runs, lr)) is not None}
        log = n.read == "score_std"  # a std is compared as a ratio: ours spans 2 to 12,000 over the rates
        f, g = (math.log, math.exp) if log else ((lambda v: v), (lambda v: v))
        scaled_window = (f(max(window[0], 1e-12)), f(window[1]))
        row = {"number": n.number, "claim": n.claim, "chapter": float(claim["chapter"]),
               "scale": "log" if log else "linear"}
        spread_rates, lows, highs = [], [], []
        for lr in rates:
            if lr not in values:
                trained = n.read != "cost" and runs.get((n.d_k, n.variant, lr))
                row[f"at_{show_rate(lr)}"] = "no soft seed: every one collapsed" if trained else "not run"
                continue
            point, low, high = run_band(on_scale(values[lr], log))
            word, why = rate_status(claim, tables_at(lr))
            statuses[n.claim, lr] = word
            seeds = max(values[lr].counts, default=1)
            if low is None:
                row[f"at_{show_rate(lr)}"] = f"{show_number(g(point))}, 1 seed: no spread"
                continue
            row[f"at_{show_rate(lr)}"] = (f"{show_number(g(point))} [{show_number(g(low))}, {show_number(g(high))}] "
                                          f"{FITS[word]}: {why} ({seeds} seeds)")
            spread_rates.append(lr)
            lows.append(low)
            highs.append(high)
        if spread_rates:
            band = fitting_band(spread_rates, lows, highs, scaled_window)
            bands[n.claim], measured[n.claim] = band, (min(spread_rates), max(spread_rates))
            row.update(band=show_band(band, spread_rates), band_low=band[0][0] if band else math.nan,
                       band_high=band[-1][1] if band else math.nan)
        else:
            row.update(band=NOT_ESTABLISHED, band_low=math.nan, band_high=math.nan)
        row["fits_at"] = ", ".join(show_rate(lr) for lr in rates
                                   if FITS.get(statuses.get((n.claim, lr))) == "fits") or "none"
        row["rates"] = ", ".join(show_rate(lr) for lr in values)
        row["seeds"] = " · ".join(str(max(values[lr].counts, default=1)) for lr in values)
        out.append(row)
    states = {lr: head_state(paths) for (d_k, variant, lr), paths in runs.items()
              if d_k == runaway_d_k and variant == "divided"}
    out.append({"number": "divided head stays soft", "claim": "divided_soft", "scale": "seeds",
                **{f"at_{show_rate(lr)}": show_state(state) for lr, state in sorted(states.items())},
                "fits_at": ", ".join(show_rate(lr) for lr, st in sorted(states.items()) if st["collapsed"] == 0) or "none",
                "rates": ", ".join(show_rate(lr) for lr in sorted(states)),
                "seeds": " · ".join(str(st["seeds"]) for _, st in sorted(states.items()))})
    undivided = {lr: head_state(paths) for (d_k, variant, lr), paths in runs.items()
                 if d_k == runaway_d_k and variant == "undivided"}
    out.append({"number": "how the undivided head collapsed", "claim": UNDIVIDED_KINDS, "scale": "seeds",
                **{f"at_{show_rate(lr)}": show_state(state) for lr, state in sorted(undivided.items())},
                "rates": ", ".join(show_rate(lr) for lr in sorted(undivided)),
                "seeds": " · ".join(str(st["seeds"]) for _, st in sorted(undivided.items()))})
    names = {n.claim: n.number for n in SQRT_DK_NUMBERS}
    collapsed = {lr: (st["collapsed"], st["seeds"]) for lr, st in states.items()}
    out.append({"number": "all five", "claim": "all",
                **one_rate(bands, measured, names, statuses, rates, collapsed, "score_runaway.final_std")})
    return out
