"""The ledger's statistics on simulated ledgers: values drawn around a known true mean, n = 3, 5, 10, 30 seeds,
judged by the real evaluator. A claim whose truth is outside the tolerance rarely matches; one whose truth is
well inside comes to match as seeds are added; on rows that share a seed's luck, pairing decides sooner."""

import numpy as np
import pandas as pd
import pytest

from attnlab import claims as C

DRAWS = 100
SEEDS = (3, 5, 10, 30)
CHAPTER, TOLERANCE, SD = 38.0, 0.4, 0.5
NUMBER = {"id": "sim", "table": "t", "statement": "s", "chapter": CHAPTER, "value": {"column": "ppl", "where": {"row": 1}},
          "rule": {"kind": "absolute", "tolerance": TOLERANCE}}


def table(rows: dict[int, np.ndarray]) -> dict:
    """A trained table as the pipeline writes it: per row the mean, the sd and every seed's value."""
    return {"t": pd.DataFrame({
        "row": list(rows),
        "ppl": [v.mean() for v in rows.values()],
        "ppl_std": [v.std(ddof=1) for v in rows.values()],
        "ppl_seeds": [";".join(repr(float(x)) for x in v) for v in rows.values()]})}


def match_rate(claim: dict, draw, n: int, rng) -> float:
    return float(np.mean([C.judge(claim, table(draw(rng, n)))["verdict"] == "MATCH" for _ in range(DRAWS)]))


@pytest.mark.parametrize("n", SEEDS)
def test_a_truth_outside_the_tolerance_matches_in_at_most_5_percent_of_draws(n):
    rng = np.random.default_rng(n)
    on_the_edge = CHAPTER + TOLERANCE  # the hardest truth that is not inside
    rate = match_rate(NUMBER, lambda rng, n: {1: rng.normal(on_the_edge, SD, n)}, n, rng)
    assert rate <= 0.05, rate
    beyond = CHAPTER + 2 * TOLERANCE
    assert match_rate(NUMBER, lambda rng, n: {1: rng.normal(beyond, SD, n)}, n, rng) <= 0.01


def test_a_truth_well_inside_the_tolerance_becomes_a_match_as_seeds_are_added():
    rng = np.random.default_rng(0)
    rates = [match_rate(NUMBER, lambda rng, n: {1: rng.normal(CHAPTER, SD, n)}, n, rng) for n in SEEDS]
    assert rates[0] < 0.05 and rates[-1] >= 0.9, rates  # 3 seeds cannot decide it; 30 do
    assert all(later >= earlier - 0.03 for earlier, later in zip(rates, rates[1:])), rates


def test_paired_differences_beat_unpaired_ones_on_correlated_rows():
    """Two rows share each seed's luck (sd 2) and differ by 3.0 with little noise of their own (sd 0.2).
    Paired seed by seed, the difference is decided; with the pairing broken (one row's seeds shuffled,
    which is what judging each row by its own spread amounts to) it is not."""
    gain = {**NUMBER, "chapter": 3.0, "rule": {"kind": "absolute", "tolerance": 0.5},
            "value": {"difference": [{"column": "ppl", "where": {"row": 1}}, {"column": "ppl", "where": {"row": 2}}]}}

    def correlated(rng, n, paired):
        luck = rng.normal(0, 2.0, n)
        first, second = 40 + luck + rng.normal(0, 0.2, n), 37 + luck + rng.normal(0, 0.2, n)
        return {1: first, 2: second if paired else rng.permutation(second)}

    rng = np.random.default_rng(1)
    paired = match_rate(gain, lambda rng, n: correlated(rng, n, True), 10, rng)
    unpaired = match_rate(gain, lambda rng, n: correlated(rng, n, False), 10, rng)
    assert paired >= 0.9 and unpaired <= 0.1, (paired, unpaired)


def test_seeds_to_decide_follow_from_the_t_interval():
    from attnlab.claims import stats
    # a margin of 0.4 with sd 0.4: t(n-1)/sqrt(n) < 1 first at n = 7 (2.447 / 2.646)
    assert stats.seeds_to_decide(0.4, 0.4) == 7
    assert stats.seeds_to_decide(0.0, 0.4) is None and stats.seeds_to_decide(0.4, 0.0) is None
    assert stats.decide_share(5, 5) == "pass" and stats.decide_share(4, 5) == "inconclusive"
    # 4 of 5: Wilson's lower bound is above one half from 9 of 11 (0.52), not at 8 of 10 (0.49)
    assert stats.seeds_to_decide_share(4, 5) == 11


def test_the_difference_of_two_runs_has_welchs_interval():
    from scipy import stats as scipy_stats
    from attnlab.claims import stats
    a, b = np.array([0.97, 0.975, 0.972, 0.969]), np.array([0.86, 0.887])
    difference, low, high = stats.difference_interval(a, b)
    expected = scipy_stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert difference == pytest.approx(a.mean() - b.mean())
    assert (low, high) == pytest.approx((expected.low, expected.high), rel=1e-9)
    assert stats.difference_interval(np.array([0.99]), np.array([0.98])) == pytest.approx((0.01, 0.01, 0.01))


def like(x: np.ndarray, n: int) -> np.ndarray:
    """n seeds with x's mean and sd."""
    y = np.resize(x, n) + 0.0
    return x.mean() + (y - y.mean()) * x.std(ddof=1) / y.std(ddof=1)


def test_seeds_to_decide_a_difference_grow_either_run_or_both():
    from attnlab.claims import stats

    def decided(a: np.ndarray, b: np.ndarray) -> str:
        return str(stats.decide(*stats.difference_interval(a, b)[1:]))

    a, b = np.array([0.87, 0.875, 0.872, 0.869]), np.array([0.6, 0.8])
    n, added = stats.seeds_to_decide_difference(a, b)  # 0.17 ± 0.9 over two seeds of b
    assert decided(a, b) == "inconclusive" and n > b.size and added == n - b.size
    assert decided(a, like(b, n)) == "pass" and decided(a, like(b, n - 1)) == "inconclusive"
    assert stats.cheapest_plan_to_decide_difference(a, b) == ("b", n)
    # a's own spread alone straddles 0: no number of b's seeds decides it, but seeds of a do
    a, b = np.array([-1.0, 2.0]), np.array([0.0, 0.0])
    assert stats.seeds_to_decide_difference(a, b) is None
    n, added = stats.seeds_to_decide_difference(a, b, grow="a")
    assert n > a.size and added == n - a.size
    assert decided(like(a, n), b) == "pass" and decided(like(a, n - 1), b) == "inconclusive"
    # both spread: only seeds of both runs decide it
    a, b = np.array([0.72, 1.08, 0.9]), np.array([0.5, 0.9])
    assert stats.seeds_to_decide_difference(a, b) is None and stats.seeds_to_decide_difference(a, b, grow="a") is None
    n, added = stats.seeds_to_decide_difference(a, b, grow="both")
    assert n > a.size and added == 2 * n - a.size - b.size
    assert decided(like(a, n), like(b, n)) == "pass" and decided(like(a, n - 1), like(b, n - 1)) == "inconclusive"
    # a bound on the runs added stops the walk: one run short of the plan, no plan
    assert stats.seeds_to_decide_difference(a, b, grow="both", most_added=added) == (n, added)
    assert stats.seeds_to_decide_difference(a, b, grow="both", most_added=added - 1) is None
    # a difference of 0 is on the edge: no number of seeds decides it
    assert stats.seeds_to_decide_difference(np.array([1.0, 2.0]), np.array([1.0, 2.0]), grow="both") is None
    assert stats.cheapest_plan_to_decide_difference(np.array([1.0, 2.0]), np.array([1.0, 2.0])) is None
    with pytest.raises(ValueError, match="grow is one of b, a, both"):
        stats.seeds_to_decide_difference(a, b, grow="neither")


def test_the_cheapest_plan_adds_the_fewest_runs_and_settles_a_tie_by_plan_order():
    from attnlab.claims import stats
    rng = np.random.default_rng(0)
    for _ in range(12):
        a = rng.normal(1.0, rng.uniform(0.05, 1.0), rng.integers(2, 8))
        b = rng.normal(rng.uniform(0.0, 0.5), rng.uniform(0.05, 1.0), rng.integers(2, 8))
        plans = {grow: stats.seeds_to_decide_difference(a, b, grow) for grow in stats.GROWTH}
        found = [(added, i, grow, n) for i, (grow, plan) in enumerate(plans.items()) if plan for n, added in [plan]]
        expected = min(found)[2:] if found else None  # fewest runs added, then the earlier plan
        assert stats.cheapest_plan_to_decide_difference(a, b) == expected
    # mirror images: seeds of a or of b decide at the same count, and b's plan comes first
    b = np.array([0.0, 0.9, 0.3])
    assert stats.seeds_to_decide_difference(b + 1.0, b, "a") == stats.seeds_to_decide_difference(b + 1.0, b, "b")
    assert stats.cheapest_plan_to_decide_difference(b + 1.0, b)[0] == "b"


def test_the_log_log_slope_is_least_squares_on_the_logs():
    from attnlab.claims import stats
    x = np.array([1024.0, 2048, 4096, 8192])
    assert stats.loglog_slope(x, 3e-6 * x**1.9) == pytest.approx(1.9, rel=1e-12)
    noisy = 5 * x**2 * np.array([1.1, 0.95, 1.02, 0.98])
    assert stats.loglog_slope(x, noisy) == pytest.approx(np.polyfit(np.log(x), np.log(noisy), 1)[0], rel=1e-12)
