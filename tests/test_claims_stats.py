"""The ledger's statistics on simulated ledgers, judged by the real evaluator.

- A number the chapter printed once is one draw of its code: drawn from the same distribution as our
  seeds (n = 3, 10, 30, 100; tolerance 0.5, 1 and 3 seed sds), it DIFFERS at most 5 % of the time, and it
  AGREES only where a chapter 4 sd past the tolerance would DIFFER 80 % of the time; the one-run spread
  s·√(1 + 1/n) is what makes that so. A quantity that is not normal is judged by rank, and a draw of it
  is not made rare by its scale.
- Seeds added after looking at the ledger (optional stopping) are judged at a corrected level.
- Rows of one seed set pair; rows of different sets are compared on all their seeds (Welch).
- The seeds a plan asks for reach 80 % power; a bounded quantity's interval stays in its range.
- Re-judging the published full tables with each chapter number replaced by a random draw of our own
  distribution contradicts few of them.
"""

import glob

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from attnlab import claims as C
from attnlab.claims import stats
from attnlab.claims.evaluate import show_interval
from attnlab.claims.read import select
from attnlab.claims.render import show_number
from attnlab.claims.rules import Printed, is_number, load_looks, load_plans
from attnlab.claims.stats import Sample

SEEDS = (3, 10, 30, 100)
TOLERANCES = (0.5, 1.0, 3.0)  # in seed sds
DRAWS = 4000  # per setting, vectorised: a rate to ±0.8 %
FULL_TABLES = C.ROOT / "results" / "full" / "tables"


def table(rows: dict[int, np.ndarray]) -> dict:
    """A trained table as the pipeline writes it: per row the mean, the sd and every seed's value."""
    return {"t": pd.DataFrame({
        "row": list(rows),
        "ppl": [v.mean() for v in rows.values()],
        "ppl_std": [v.std(ddof=1) for v in rows.values()],
        "ppl_seeds": [";".join(repr(float(x)) for x in v) for v in rows.values()]})}


def printed(chapter: float, tolerance: float) -> dict:
    """A claim on one row against a number the chapter printed (to many digits: no rounding to speak of)."""
    number = Printed(chapter)
    number.text = f"{chapter:.12f}"
    return {"id": "sim", "table": "t", "statement": "s", "chapter": number,
            "value": {"column": "ppl", "where": {"row": 1}}, "rule": {"kind": "absolute", "tolerance": tolerance}}


def one_draw_rates(n: int, tolerance: float, truth_gap: float, rng) -> dict[str, float]:
    """DRAWS ledgers at once: n seeds of N(0, 1) and a chapter run drawn from N(−truth_gap, 1) — the chapter's
    code on average truth_gap below ours (0: a perfect reproduction) — judged by stats.predict and stats.powered:
    "fail" (DIFFERS), "pass" (inside and powered: AGREES)."""
    seeds = rng.normal(0.0, 1.0, (DRAWS, n))
    chapter = rng.normal(-truth_gap, 1.0, DRAWS)
    gap = stats.combine(np.subtract, Sample(seeds.mean(axis=1), {n: seeds}), Sample.constant(chapter))
    differs, _ = stats.predict(gap, np.full(DRAWS, tolerance))
    able = stats.powered(gap)
    return {"fail": float(np.mean(differs)), "pass": float(np.mean(~differs & able))}


# ---------------------------------------------------------------- one printed run is one draw

@pytest.mark.parametrize("n", SEEDS)
def test_a_perfect_reproduction_differs_in_at_most_5_percent(n):
    """A prediction interval at 5 %: a chapter run drawn from our distribution lies outside it 5 % of the time at
    tolerance 0, less with a tolerance (to the simulation's error, 0.35 % a rate)."""
    rng = np.random.default_rng(n)
    assert one_draw_rates(n, 0.0, 0.0, rng)["fail"] <= 0.06
    for tolerance in TOLERANCES:
        rates = one_draw_rates(n, tolerance, 0.0, rng)
        assert rates["fail"] <= 0.05, (n, tolerance, rates)


@pytest.mark.parametrize("n", SEEDS)
def test_agrees_only_where_a_chapter_4_sd_past_the_tolerance_is_caught(n):
    """AGREES must be able to fail: where the test is powered, a chapter run drawn around tolerance + 4 one-run sd
    DIFFERS at least 80 % of the time; with 3 seeds it is not powered, so a perfect reproduction stays OPEN."""
    rng = np.random.default_rng(200 + n)
    powered = bool(stats.powered(Sample(np.asarray(0.0), {n: np.linspace(-1, 1, n)})))
    assert powered == (n >= 5)
    for tolerance in TOLERANCES:
        if powered:
            assert one_draw_rates(n, tolerance, tolerance + stats.CATCH_SD, rng)["fail"] >= 0.80, (n, tolerance)
            assert one_draw_rates(n, tolerance, -tolerance - stats.CATCH_SD, rng)["fail"] >= 0.80, (n, tolerance)
        else:
            assert one_draw_rates(n, tolerance, 0.0, rng)["pass"] == 0.0


def test_the_ledger_gives_each_number_word_on_a_constructed_table():
    """Through C.judge: a typical draw with enough seeds AGREES; with too few it is OPEN (and names the seeds that
    would decide); a chapter run far outside DIFFERS; one seed is NOT TESTED."""
    rng = np.random.default_rng(7)
    ten = rng.normal(38.0, 1.0, 10)
    typical = C.judge(printed(float(ten.mean() + 0.3), 0.5), table({1: ten}))
    assert typical.number == "AGREES" and "would catch" in typical.why, typical
    few = C.judge(printed(float(ten[:3].mean() + 0.3), 0.5), table({1: ten[:3]}))
    assert few.number == "OPEN" and few.to_decide >= 5 and f"{few.to_decide} seeds per row" in few.why, few
    outside = C.judge(printed(float(ten.mean() + 8.0), 0.5), table({1: ten}))
    assert outside.number == "DIFFERS" and "outside" in outside.why, outside
    one = C.judge(printed(38.0, 0.5), table({1: ten[:1]}))
    assert one.number == "NOT TESTED", one


def test_an_outcome_seen_in_0_of_3_seeds_is_open_and_in_0_of_80_differs():
    """The chapter's one model shows an outcome (a weight above 0.5) that none of our seeds shows: with 3 seeds that
    is OPEN (3 seeds cannot show it rare), with 80 it DIFFERS; 80 of 80 AGREES."""
    shows = {"id": "o", "table": "t", "statement": "s", "chapter": "the weight is the row's largest",
             "value": {"column": "ppl", "where": {"row": 1}, "per_seed": True}, "rule": {"kind": "above", "than": 0.5}}
    rng = np.random.default_rng(3)
    never, always = rng.uniform(0.0, 0.4, 80), rng.uniform(0.6, 1.0, 80)
    few = C.judge(shows, table({1: never[:3]}))
    assert few.number == "OPEN" and "not seen in any of our 3 seeds" in few.why, few
    assert C.judge(shows, table({1: never})).number == "DIFFERS"
    assert C.judge(shows, table({1: always})).number == "AGREES"


def test_the_one_run_spread_keeps_its_one_over_n_term():
    """n = 3 seeds of sd 1, tolerance 10: the prediction interval is our mean ± t(0.975, 2)·1.155 = ±4.97
    (√(1 + 1/n) = √(4/3) = 1.155; ±4.30 without the 1/n term, ±2.48 with the mean's spread s/√n): the chapter's run
    DIFFERS when |Δ| > 10 + 4.97 = 14.97."""
    seeds = np.array([-1.0, 0.0, 1.0])  # sd 1
    assert seeds.std(ddof=1) == 1.0
    gap = Sample(seeds.mean(), {3: seeds})
    spread, df = gap.draw_error()
    assert float(spread) == pytest.approx(np.sqrt(1 + 1 / 3)) and float(df) == 2

    def number(delta):
        return C.judge(printed(50.0 - delta, 10.0), table({1: 50.0 + seeds})).number

    assert number(14.6) == "OPEN" and number(15.1) == "DIFFERS" and number(-15.1) == "DIFFERS"


# ---------------------------------------------------------------- by rank: a quantity that is not normal

def test_a_draw_of_a_bimodal_share_is_not_made_rare_by_its_scale():
    """A weight in [0, 1] with two modes (most seeds near 0, a few near 1), judged by rank (stats.rank_p): a chapter
    value drawn from the same distribution DIFFERS in at most 5 % of draws, even one from the rare mode; a value
    beyond every seed DIFFERS once the seeds can show it (2/(n + 1) <= α: 39 seeds)."""
    rng = np.random.default_rng(11)

    def share(size):
        return np.where(rng.random(size) < 0.05, rng.uniform(0.8, 1.0, size), rng.uniform(0.0, 0.2, size))

    seeds = share(200)
    draws = share(1000)
    p = np.array([stats.rank_p(seeds, np.asarray(d), np.asarray(0.0)) for d in draws])
    assert np.mean(p <= 0.05) <= 0.065  # 5 % over draws of the seeds too; for these 200 seeds, to ±1.4 %
    assert stats.rank_seeds() == 39
    assert stats.rank_p(seeds[:39], np.asarray(1.5), np.asarray(0.0)) <= 0.05
    assert stats.rank_p(seeds[:38], np.asarray(1.5), np.asarray(0.0)) > 0.05


def test_a_bounded_share_is_judged_by_rank_in_the_ledger():
    """Through C.judge: a claim with a range, 60 seeds of a bimodal share; the chapter's value in the rare mode is
    not DIFFERS, one beyond every seed is."""
    rng = np.random.default_rng(12)
    seeds = np.concatenate([rng.uniform(0.0, 0.1, 55), rng.uniform(0.85, 0.95, 5)])
    claim = {**printed(0.9, 0.01), "range": [0, 1]}
    rare_mode = C.judge(claim, table({1: seeds}))
    assert rare_mode.number != "DIFFERS" and "by rank" in rare_mode.why, rare_mode
    beyond = C.judge({**claim, "chapter": 0.999}, table({1: seeds}))
    assert beyond.number == "DIFFERS", beyond


# ---------------------------------------------------------------- looks: seeds added after reading the ledger

def chase(looks: list[int], level, rng, draws: int = 8000) -> float:
    """The share of chases that end on a false pass: the truth of a margin on its edge (0), seeds looked at after
    each count in `looks`, a chase stops once the mean's interval (at level(k) on the k-th look) clears 0."""
    x = rng.normal(0.0, 1.0, (draws, looks[-1]))
    stopped, false_pass = np.zeros(draws, bool), np.zeros(draws, bool)
    for k, n in enumerate(looks, 1):
        s = Sample(x[:, :n].mean(axis=1), {n: x[:, :n]})
        _, low, high = stats.sample_interval(s, level(k))
        false_pass |= (low >= 0) & ~stopped
        stopped |= (low >= 0) | (high < 0)
    return float(false_pass.mean())


def test_seeds_added_after_a_look_are_judged_at_a_corrected_level():
    """Five looks raise the false pass of a truth on an edge from 2.5 % (one look) to about 9 %; judged at
    α/k on the k-th look (stats.level_for), a chase stays under α = 5 %."""
    rng = np.random.default_rng(5)
    assert chase([40], lambda k: stats.LEVEL, rng) <= 0.035
    for looks in ([3, 5, 10, 20, 40], [3, 7, 15, 17, 20], [3, 4, 74]):
        assert chase(looks, lambda k: stats.LEVEL, rng) >= 0.055, looks
        assert chase(looks, stats.level_for, rng) <= 0.05, looks
    assert stats.level_for(1) == stats.LEVEL and stats.level_for(5) == pytest.approx(0.99)


def test_the_ledger_judges_a_row_with_looks_at_the_corrected_level():
    bound = {"id": "b", "table": "t", "statement": "s", "chapter": "> 37", "value": {"column": "ppl", "where": {"row": 1}},
             "rule": {"kind": "above", "than": 37.0}}
    seeds = {1: 38.0 + np.array([-1.0, 0.0, 1.0, 0.5, -0.5, 0.2, -0.2, 0.8, -0.8, 0.0])}
    one, five = C.judge(bound, table(seeds)), C.judge(bound, table(seeds), looks=5)
    assert one.looks == 1 and five.looks == 5
    low = float(one.interval.strip("[]").split(",")[0])
    assert low == pytest.approx(38.0 - scipy_stats.t.ppf(0.975, 9) * seeds[1].std(ddof=1) / np.sqrt(10), abs=0.006)
    low5 = float(five.interval.strip("[]").split(",")[0])
    assert low5 == pytest.approx(38.0 - scipy_stats.t.ppf(0.995, 9) * seeds[1].std(ddof=1) / np.sqrt(10), abs=0.006)
    assert one.number == "AGREES" and five.number == "AGREES"


# ---------------------------------------------------------------- all the seeds: paired or Welch

def test_rows_pair_on_the_seeds_they_share_whatever_their_counts():
    """Two rows share each seed's luck (sd 2) and differ by 3.0 with little noise of their own (sd 0.2). With the
    same seeds they pair (the difference is decided); with 12 seeds against 10 they pair on seeds 0 … 9, and the
    estimate is the difference of the rows' means over all their seeds."""
    gain = {"id": "g", "table": "t", "statement": "s", "chapter": "> 2", "rule": {"kind": "above", "than": 2.0},
            "value": {"difference": [{"column": "ppl", "where": {"row": 1}}, {"column": "ppl", "where": {"row": 2}}]}}
    rng = np.random.default_rng(1)
    luck = rng.normal(0, 2.0, 12)
    first, second = 40 + luck + rng.normal(0, 0.2, 12), 37 + luck + rng.normal(0, 0.2, 12)
    paired = C.judge(gain, table({1: first[:10], 2: second[:10]}))
    assert paired.number == "AGREES" and paired.seeds == 10 and paired.seed_sets == ""
    more = C.judge(gain, table({1: first, 2: second[:10]}))  # 12 seeds against 10
    assert more.seeds == 10 and more.number == "AGREES"
    assert more.reproduced.startswith(show_number(first.mean() - second[:10].mean()))
    difference, low, high = stats.difference_interval(first, second[:10])  # unpaired, Welch would not decide it
    assert low < 2.0


# ---------------------------------------------------------------- plans at 80 % power, bounded intervals

def test_a_plan_reaches_80_percent_power():
    """A margin of 0.5 sd, judged at 95 %: the plan's count decides it in 80 % of simulated runs (and one count
    fewer in under 80 %, allowing for simulation noise); the half-the-time count is about half of it."""
    rng = np.random.default_rng(3)
    margin = Sample(np.asarray(0.5), {5: 0.5 + np.array([-1.0, -0.5, 0.0, 0.5, 1.0]) / np.sqrt(0.625)})
    assert float(margin.sd()) == pytest.approx(1.0)
    planned = int(stats.seeds_for_power(margin))

    def decided(n, draws=6000):
        x = rng.normal(0.5, 1.0, (draws, n))
        _, low, high = stats.sample_interval(Sample(x.mean(axis=1), {n: x}))
        return float(np.mean((low >= 0) | (high < 0)))

    assert decided(planned) >= 0.78 and decided(planned - 3) < 0.80
    assert int(stats.seeds_for_power(Sample(np.asarray(0.0), {5: np.arange(5.0) - 2}))) == 0  # on the edge


def test_an_outcome_of_one_model_is_judged_as_a_draw():
    """Rare (a "fail": DIFFERS) only where the outcome is rare among our seeds (Wilson's upper bound below 5 %)."""
    assert stats.decide_draw(1, 208) == "fail" and stats.decide_draw(26, 208) == "consistent"
    assert stats.decide_draw(0, 20) == "consistent"  # twenty seeds cannot show an outcome rare
    assert stats.decide_draw(150, 208) == "pass"
    assert stats.share_interval(1, 208)[1] < stats.RARE < stats.share_interval(0, 20)[1]


def test_a_bounded_mean_keeps_its_interval_inside_its_range():
    accuracies = np.array([100.0, 100, 100, 100, 100, 100, 100, 100, 83.3, 100])  # one sentence of 12 wrong once
    s = Sample(accuracies.mean(), {10: accuracies})
    _, low, high = stats.sample_interval(s, bounds=(0, 100))
    _, t_low, t_high = stats.sample_interval(s)
    assert t_high > 100 and 0 <= low < accuracies.mean() < high <= 100 and low < t_low
    flat = Sample(np.asarray(100.0), {10: np.full(10, 100.0)})
    assert stats.sample_interval(flat, bounds=(0, 100))[1:] == (100.0, 100.0)
    middle = Sample(np.asarray(50.0), {200: 50 + np.resize([-3.0, 3.0], 200)})
    assert stats.sample_interval(middle, bounds=(0, 100))[1] == pytest.approx(stats.sample_interval(middle)[1], abs=0.01)


# ---------------------------------------------------------------- the published tables, the chapter redrawn

def redrawn_contradictions(tables: dict, claims: list[dict], draws: int, rng) -> tuple[int, int, int]:
    """Each seeded claim that reads one cell against a printed number within a tolerance, re-judged `draws` times
    with our seeds shifted so that the chapter's number is a random draw of our own distribution (our spread
    kept): (claims, judgements, DIFFERS)."""
    from attnlab.tables import per_seed
    looks = load_looks(claims, load_plans("full"))
    count, judged, contradicted = 0, 0, 0
    for claim in claims:
        node, rule = claim["value"], claim["rule"]
        if rule["kind"] not in ("relative", "absolute") or "to" in rule or "column" not in node \
                or not is_number(claim["chapter"]):
            continue
        df = tables[node.get("table", claim["table"])]
        rows = select(df, node.get("where"), claim["table"])
        column = f"{node['column']}_seeds"
        if len(rows) != 1 or column not in df or not per_seed(rows[column].iloc[0]):
            continue
        count += 1
        seeds = np.array(per_seed(rows[column].iloc[0]))
        for _ in range(draws):
            ours = float(claim["chapter"]) - rng.normal(0.0, seeds.std(ddof=1))  # the chapter = ours + one run's luck
            shifted = df.copy()
            shifted.loc[rows.index, column] = ";".join(repr(float(v)) for v in seeds - seeds.mean() + ours)
            shifted.loc[rows.index, node["column"]] = ours
            number = C.judge(claim, {**tables, node.get("table", claim["table"]): shifted},
                             looks.get(claim["id"], 1)).number
            judged, contradicted = judged + 1, contradicted + (number == "DIFFERS")
    return count, judged, contradicted


@pytest.mark.slow
@pytest.mark.skipif(not FULL_TABLES.is_dir(), reason="no published full tables")
def test_the_full_ledger_rarely_contradicts_a_chapter_that_is_a_draw_of_ours():
    tables = C.load_tables(sorted(glob.glob(str(FULL_TABLES / "*.csv"))))
    count, judged, contradicted = redrawn_contradictions(tables, C.load_claims(), 6, np.random.default_rng(12))
    assert count >= 30 and contradicted <= 0.10 * judged, (count, judged, contradicted)


@pytest.mark.slow
def test_no_published_claim_differs_by_itself_leaving_one_seed_out():
    """Each held-out seed's value as the chapter's, judged by the ledger against the other seeds, at the level its
    looks leave: DIFFERS for at most 5 % of them, every claim with 3 seeds or more (attnlab.claims.calibration)."""
    from attnlab.claims.calibration import held_out

    tables = C.load_tables(sorted(glob.glob(str(FULL_TABLES / "*.csv"))))
    claims = C.load_claims()
    looks = load_looks(claims, load_plans("full"))
    rates = {c["id"]: found for c in claims if (found := held_out(c, tables, looks.get(c["id"], 1)))}
    assert len(rates) >= 40
    assert {i: f for i, f in rates.items() if f[0] > 0.05 * f[1]} == {}


def test_a_chapter_4_sd_past_the_tolerance_differs_for_the_claims_that_agree():
    """Every published one-run number that AGREES could have failed: the chapter's value moved to our mean ±
    (tolerance + 4 one-run sd), inside the quantity's range, reads DIFFERS for at least 80 % of them each way."""
    from attnlab.claims.evaluate import printed_tolerance
    from attnlab.claims.read import estimate
    from attnlab.claims.reference import printed_number

    tables = C.load_tables(sorted(glob.glob(str(FULL_TABLES / "*.csv"))))
    claims = C.load_claims()
    looks = load_looks(claims, load_plans("full"))
    caught = {-1: [], 1: []}
    for claim in claims:
        judged = C.judge(claim, tables, looks.get(claim["id"], 1))
        if judged.number != "AGREES" or judged.kind != "trained" or not printed_number(claim):
            continue
        value = estimate(claim["value"], tables, claim["table"])
        low, high = claim.get("range", (-np.inf, np.inf))
        for sign in caught:
            moved = value.point + sign * (printed_tolerance(claim, claim["rule"]) + stats.CATCH_SD * value.sd())
            if np.all((moved >= low) & (moved <= high)):
                shifted = C.judge({**claim, "chapter": moved.tolist() if moved.ndim else float(moved)}, tables,
                                  looks.get(claim["id"], 1))
                caught[sign].append(shifted.number == "DIFFERS")
    for sign, found in caught.items():
        assert len(found) >= 15 and np.mean(found) >= 0.8, (sign, len(found), np.mean(found))


def test_the_difference_of_two_runs_has_welchs_interval():
    from scipy import stats as scipy_stats
    from attnlab.claims import stats
    a, b = np.array([0.97, 0.975, 0.972, 0.969]), np.array([0.86, 0.887])
    difference, low, high = stats.difference_interval(a, b)
    expected = scipy_stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert difference == pytest.approx(a.mean() - b.mean())
    assert (low, high) == pytest.approx((expected.low, expected.high), rel=1e-9)
    assert stats.difference_interval(np.array([0.99]), np.array([0.98])) == pytest.approx((0.01, 0.01, 0.01))


def test_a_plan_beside_a_large_row_grows_the_small_one_only():
    """A difference between a row of many seeds and one of three (Welch): counts are tried from the small row up,
    the large one kept as it is, so the plan is the small row's seeds (not the large row's count), and the small
    row grown to it decides the difference in about 80 % of simulated draws."""
    from attnlab.claims import stats
    rng = np.random.default_rng(3)
    big, small = rng.normal(1.0, 1.0, 200), np.array([0.2, 1.4, 2.6])
    big_row = Sample(np.asarray(big.mean()), {200: big})
    margin = stats.combine(np.subtract, Sample(np.asarray(small.mean()), {3: small}), big_row)
    planned = int(stats.seeds_for_power(margin, smallest=True))
    assert 3 < planned < 200 and int(stats.seeds_for_power(margin)) >= 200

    def decided(n, draws=1500):
        hits = 0
        for x in rng.normal(small.mean(), small.std(ddof=1), (draws, n)):
            _, low, high = stats.sample_interval(stats.combine(np.subtract, Sample(np.asarray(x.mean()), {n: x}), big_row))
            hits += bool(low >= 0 or high < 0)
        return hits / draws

    assert decided(planned) >= 0.76 and decided(max(planned // 2, 4)) < 0.8


def test_the_log_log_slope_is_least_squares_on_the_logs():
    from attnlab.claims import stats
    x = np.array([1024.0, 2048, 4096, 8192])
    assert stats.loglog_slope(x, 3e-6 * x**1.9) == pytest.approx(1.9, rel=1e-12)
    noisy = 5 * x**2 * np.array([1.1, 0.95, 1.02, 0.98])
    assert stats.loglog_slope(x, noisy) == pytest.approx(np.polyfit(np.log(x), np.log(noisy), 1)[0], rel=1e-12)
