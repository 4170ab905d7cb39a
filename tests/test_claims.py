"""The claims ledger: each check kind passes and fails, how seeds make a verdict (the mean's interval, paired
differences, the share of seeds for an outcome per seed), the CLI and the README splice. Every claim of
configs/claims.yaml against a table where the chapter's point holds and one where it fails:
test_claims_can_fail.py."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from attnlab import claims as C

LADDER = pd.DataFrame({"row": [1, 2, 3, 4], "params": [100, 100, 116, 116],
                       "held_out_ppl": [60.0, 240.0, 238.0, 61.0]})


def claim(rule, value, chapter=1.0, conclusion=None, table="t"):
    c = {"id": "x", "table": table, "statement": "s", "chapter": chapter, "value": value, "rule": rule}
    if conclusion:
        c["conclusion"] = conclusion
    C.validate_claim(c)
    return c


def verdict(c, tables=None):
    return C.judge(c, {"t": LADDER} if tables is None else tables).verdict


def ppl(row):
    return {"column": "held_out_ppl", "where": {"row": row}}


# ---------------------------------------------------------------- each check kind passes and fails

def test_exact_matches_and_a_one_off_count_is_contradicted():
    gap = {"difference": [{"column": "params", "where": {"row": 3}}, {"column": "params", "where": {"row": 2}}]}
    assert verdict(claim({"kind": "exact"}, gap, chapter=16)) == "MATCH"
    assert verdict(claim({"kind": "exact"}, gap, chapter=17)) == "CONTRADICTED"


def test_exact_matrix_to_printed_decimals():
    matrix = pd.DataFrame({"1": [1.0, 0.5, 1 / 3], "2": [0.0, 0.5, 1 / 3], "3": [0.0, 0.0, 1 / 3]})
    printed = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.333, 0.333, 0.333]]
    value = {"columns": ["1", "2", "3"]}
    assert verdict(claim({"kind": "exact", "decimals": 3}, value, printed), {"t": matrix}) == "MATCH"
    printed[2][2] = 0.334
    assert verdict(claim({"kind": "exact", "decimals": 3}, value, printed), {"t": matrix}) == "CONTRADICTED"
    assert verdict(claim({"kind": "exact", "decimals": 3}, value, [[1.0, 0.0]]), {"t": matrix}) == "CONTRADICTED"


def test_relative_tolerance_then_conclusion_then_contradiction():
    rule = {"kind": "relative", "tolerance": 0.01}
    below_row_2 = {"kind": "below", "than": ppl(2)}
    assert verdict(claim(rule, ppl(1), chapter=59.71, conclusion=below_row_2)) == "MATCH"  # 0.5 % off
    assert verdict(claim(rule, ppl(1), chapter=57.0, conclusion=below_row_2)) == "CONCLUSION HOLDS"  # 5 % off
    above_row_2 = {"kind": "above", "than": ppl(2)}
    assert verdict(claim(rule, ppl(1), chapter=57.0, conclusion=above_row_2)) == "CONTRADICTED"
    assert verdict(claim(rule, ppl(1), chapter=57.0)) == "CONTRADICTED"


def test_a_failing_conclusion_contradicts_even_a_matching_number():
    c = claim({"kind": "relative", "tolerance": 0.02}, {"difference": [ppl(2), ppl(1)]}, chapter=180,
              conclusion={"kind": "between", "low": 3, "high": 3.5, "value": {"ratio": [ppl(2), ppl(1)]}})
    row = C.judge(c, {"t": LADDER})
    assert row.verdict == "CONTRADICTED" and row.reproduced == "180"
    assert "conclusion FAILS on 4" in row.note and row.number == "MATCH" and row.conclusion == "FAILS"


def test_absolute_tolerance_fails_outside():
    assert verdict(claim({"kind": "absolute", "tolerance": 0.5}, ppl(4), chapter=60.6)) == "MATCH"
    assert verdict(claim({"kind": "absolute", "tolerance": 0.5}, ppl(4), chapter=60.4)) == "CONTRADICTED"


def test_orderings_and_their_required_step():
    rises = {"values": [ppl(1), ppl(2), ppl(3)]}  # 60, 240, 238
    assert verdict(claim({"kind": "increasing"}, rises, chapter="rises")) == "CONTRADICTED"
    assert verdict(claim({"kind": "increasing"}, {"values": [ppl(1), ppl(3)]}, chapter="rises")) == "MATCH"
    assert verdict(claim({"kind": "decreasing"}, {"values": [ppl(2), ppl(3), ppl(1)]}, chapter="falls")) == "MATCH"
    # 240 -> 238 is a 0.8 % drop: a decrease, but not by the 1 % a claim can ask for
    assert verdict(claim({"kind": "decreasing", "by": 0.01}, {"values": [ppl(2), ppl(3)]}, chapter="f")) == "CONTRADICTED"
    assert verdict(claim({"kind": "decreasing", "by": 0.005}, {"values": [ppl(2), ppl(3)]}, chapter="f")) == "MATCH"


def test_factor_above_below_between():
    ratio = {"ratio": [ppl(2), ppl(1)]}  # 4.0
    assert verdict(claim({"kind": "above", "than": 3}, ratio, chapter="> 3")) == "MATCH"
    assert verdict(claim({"kind": "above", "than": 1, "factor": 5}, ratio, chapter="> 5")) == "CONTRADICTED"
    assert verdict(claim({"kind": "below", "than": ppl(2)}, ppl(1), chapter="<")) == "MATCH"
    assert verdict(claim({"kind": "below", "than": ppl(1)}, ppl(2), chapter="<")) == "CONTRADICTED"
    assert verdict(claim({"kind": "between", "low": 3.5, "high": 4.5}, ratio, chapter="4")) == "MATCH"
    assert verdict(claim({"kind": "between", "low": 4.5, "high": 5}, ratio, chapter="4")) == "CONTRADICTED"


def test_lead_is_the_margin_of_a_column_over_the_rest_of_its_row():
    weights = pd.DataFrame({"role": ["a", "a", "b"], "x": [0.7, 0.5, 0.1], "y": [0.2, 0.45, 0.8], "z": [0.1, 0.05, 0.1]})
    lead_x = {"lead": "x", "among": ["x", "y", "z"], "where": {"role": "a"}}
    value = C.evaluate(lead_x, {"t": weights}, "t")
    assert value[:, 0].tolist() == pytest.approx([0.5, 0.05])
    assert verdict(claim({"kind": "above", "than": 0}, lead_x, "x largest"), {"t": weights}) == "MATCH"
    assert verdict(claim({"kind": "above", "than": 0.1}, lead_x, "x largest"), {"t": weights}) == "CONTRADICTED"
    lead_in_b = {**lead_x, "where": {"role": "b"}}  # y, not x, is the largest: the lead is negative
    assert verdict(claim({"kind": "above", "than": 0}, lead_in_b, "x largest"), {"t": weights}) == "CONTRADICTED"


# ---------------------------------------------------------------- seeds: the mean's interval decides

def seeded(df: pd.DataFrame, column: str, seeds_by_row) -> pd.DataFrame:
    """df with `column` the mean of each row's seeds and `<column>_seeds` the seeds, as the tables write them."""
    out = df.copy()
    out[column] = [float(np.mean(v)) for v in seeds_by_row]
    out[f"{column}_std"] = [float(np.std(v, ddof=1)) for v in seeds_by_row]
    out[f"{column}_seeds"] = [";".join(repr(float(x)) for x in v) for v in seeds_by_row]
    return out


def spread_seeds(mean: float, sd: float, n: int) -> np.ndarray:
    """n values with exactly this mean and sample sd."""
    z = np.arange(n) - (n - 1) / 2
    return mean + sd * z / z.std(ddof=1)


def one_row(mean, sd, n, column="w"):
    return {"t": seeded(pd.DataFrame({"k": [0]}), column, [spread_seeds(mean, sd, n)])}


def test_a_bound_is_judged_by_the_means_interval_which_more_seeds_narrow():
    between = claim({"kind": "between", "low": 37.5, "high": 38.5}, {"column": "w"}, chapter="38 ± 0.5")
    # 38.1 ± 0.4: three seeds' interval (±1.0) reaches past the edge 38.5; ten seeds' (±0.29) does not
    three = C.judge(between, one_row(38.1, 0.4, 3))
    assert three.verdict == "INCONCLUSIVE" and three.seeds == 3
    # 80 % power at the next look's level (97.5 %): the margin 0.4 (= 1 sd) clears 0 once √n − t(0.9875, n − 1)
    # reaches 0.84: n = 12
    assert three.would_decide == "12 seeds per row" and "about 12 seeds per row would decide it" in three.note
    assert C.judge(between, one_row(38.1, 0.4, 10)).verdict == "MATCH"
    # an interval wholly outside the bounds is a miss, however wide the spread
    assert verdict(claim({"kind": "between", "low": 35.5, "high": 36.5}, {"column": "w"}, "36"),
                   one_row(38.1, 0.4, 3)) == "CONTRADICTED"


def test_a_printed_number_is_judged_as_one_run_against_ours():
    """The chapter's 0.49 is one run: Δ = 0.647 − 0.49 against one run of ours, 0.274·√(1 + 1/5), within ±0.1
    (± half its last digit, 0.005). It is well inside our runs' spread (no contradiction), and no count of
    seeds shows agreement to ±0.105 with one run that spreads ±0.3 (below 1.645 sd): UNRESOLVED, with its band."""
    rule = {"kind": "absolute", "tolerance": 0.1}
    row = C.judge(claim(rule, {"column": "w"}, chapter=0.49), one_row(0.647, 0.274, 5))
    assert row.interval == "[0.3068, 0.9872]"  # the mean's: 0.647 ± 2.776 · 0.274 / √5
    assert row.verdict == row.number == "UNRESOLVED" and row.reproduced == "0.647 ± 0.274"
    assert row.conclusion == "NO CONCLUSION"
    assert row.margin == "Δ 1.5 tol ± 7.9 (one run)"  # 0.157 / 0.105; 2.776 · 0.274 · √1.2 / 0.105
    # accepts 0.647 ± (0.105 + 2.776 · 0.274 · √1.2); catches 0.105 + (2.776 + 0.8416) · 0.274 · √1.2 (4.3 sd)
    assert row.band == "accepts [-0.2914, 1.585]; catches a shift of 1.191 (4.3 sd) 80 % of the time"
    # a tolerance one run can resolve (0.105 ≥ 1.645 · 0.02), the chapter on its edge: no count decides it
    edge = C.judge(claim(rule, {"column": "w"}, chapter=0.795), one_row(0.9, 0.02, 30))
    assert edge.verdict == "CONSISTENT" and edge.would_decide == "", edge
    far = C.judge(claim(rule, {"column": "w"}, chapter=0.2), one_row(0.9, 0.01, 5))
    assert far.verdict == "CONTRADICTED"
    near = C.judge(claim(rule, {"column": "w"}, chapter=0.9), one_row(0.91, 0.01, 5))
    assert near.verdict == "MATCH"  # 0.01 ± 2.132 · 0.01 · √1.2 inside ±0.105
    # undecided, and more seeds could decide it: INCONCLUSIVE with its plan
    edge = C.judge(claim(rule, {"column": "w"}, chapter=0.85), one_row(0.9, 0.02, 3))
    assert edge.verdict == "INCONCLUSIVE" and edge.would_decide.endswith("seeds per row")
    # one value (an analytic table): its own interval, the tolerance as written
    assert verdict(claim(rule, {"column": "w"}, chapter=0.2), {"t": pd.DataFrame({"w": [0.305]})}) == "CONTRADICTED"
    assert verdict(claim(rule, {"column": "w"}, chapter=0.2), {"t": pd.DataFrame({"w": [0.29]})}) == "MATCH"


def test_the_chapters_last_printed_digit_widens_the_tolerance_by_half_of_it():
    from attnlab.claims.rules import load_claims, printed_step, rounding
    claims = {c["id"]: c for c in load_claims()}
    assert float(printed_step(claims["winograd_attention.block1_first_noun"]["chapter"])) == pytest.approx(0.01)  # 0.70
    assert float(printed_step(claims["score_runaway.final_std"]["chapter"])) == 1.0  # 5147
    assert float(printed_step(claims["shuffle_test.order_blind"]["chapter"])) == pytest.approx(1e-10)  # 2.98e-08
    assert float(rounding(claims["score_runaway.entropy"])) == 0.0  # "zero", in words
    # 3 printed as "3": 2.5 … 3.5; three seeds at 3.9 ± 0.01 are inside ±0.5 + 0.5, not ±0.5
    three = claim({"kind": "absolute", "tolerance": 0.5}, {"column": "w"}, chapter=3)
    assert verdict(three, one_row(3.9, 0.01, 3)) == "MATCH"
    assert verdict({**three, "rounding": 0}, one_row(3.9, 0.01, 3)) == "CONTRADICTED"


def test_one_sided_checks_use_the_interval_and_between_has_no_half_band_tolerance():
    between = {"kind": "between", "low": 40, "high": 60}
    # 59.08 ± 4.22 over 5 seeds against an edge at 60: two seeds of five above it — undecided, not a match
    assert verdict(claim(between, {"column": "w"}, "40-60"), one_row(59.08, 4.22, 5)) == "INCONCLUSIVE"
    assert verdict(claim(between, {"column": "w"}, "40-60"), one_row(50.0, 4.22, 5)) == "MATCH"
    above = {"kind": "above", "than": 50}
    assert verdict(claim(above, {"column": "w"}, ">"), one_row(51.0, 2.0, 3)) == "INCONCLUSIVE"
    assert verdict(claim(above, {"column": "w"}, ">"), one_row(51.0, 2.0, 30)) == "MATCH"
    assert verdict(claim(above, {"column": "w"}, ">"), one_row(45.0, 2.0, 3)) == "CONTRADICTED"


def test_differences_are_taken_seed_by_seed():
    """Rows 2 and 3 scatter by ±3 over seeds, but every seed's row 3 is its row 2 minus 2.0 ± 0.1: paired,
    the gain is decided; judged on the rows' spreads it would not be."""
    shared = np.array([-3.0, 0.5, 2.5, -1.0, 1.0])
    row2 = 240 + shared
    row3 = row2 - 2.0 + np.array([0.1, -0.1, 0.05, -0.05, 0.0])
    seeds = {"t": seeded(LADDER, "held_out_ppl", [[60.0] * 5, row2, row3, [61.0] * 5])}
    gap = {"difference": [ppl(2), ppl(3)]}
    assert C.evaluate(gap, seeds, "t") == pytest.approx(row2 - row3)
    assert verdict(claim({"kind": "absolute", "tolerance": 0.5}, gap, chapter=2.14), seeds) == "MATCH"
    # rows of different counts pair on the seeds they share (0, 1, 2); the estimate keeps every seed of both
    fewer = {"t": seeded(LADDER, "held_out_ppl", [[60.0] * 5, row2, row3[:3], [61.0] * 5])}
    judged = C.judge(claim({"kind": "above", "than": 1.0}, gap, chapter="> 1"), fewer)
    assert judged.seeds == 3 and judged.verdict == "MATCH"
    assert judged.reproduced.startswith(C.render.show_number(row2.mean() - row3[:3].mean()))
    # ... in bounds too: row 3 (three seeds) below row 2 (five seeds) by 2 — decided, paired
    below = claim({"kind": "below", "than": ppl(2)}, ppl(3), chapter="<")
    assert verdict(below, seeds) == "MATCH" and verdict(below, fewer) == "MATCH"


def test_an_outcome_that_splits_across_seeds_is_judged_on_its_share():
    street_largest = {"lead": "street", "among": ["street", "adj"]}
    rule = {"kind": "above", "than": 0.1}

    def judged(street_by_seed):
        adj = [0.3] * len(street_by_seed)
        table = seeded(seeded(pd.DataFrame({"k": [0]}), "street", [street_by_seed]), "adj", [adj])
        return C.judge(claim(rule, street_largest, "street largest"), {"t": table})

    split = judged([0.9, 0.9, 0.9, 0.1, 0.1])  # the mean lead (0.28) clears 0.1, but 2 of 5 seeds do not
    assert split.verdict == "CONSISTENT" and split.seed_share == "3/5"  # the chapter's model: a plausible draw
    assert judged([0.9] * 5).verdict == "MATCH" and judged([0.9] * 5).seed_share == "5/5"
    assert judged([0.9] * 9 + [0.1]).verdict == "MATCH"  # 9 of 10: clearly most models
    # the chapter showed one model: an outcome in a tenth of our seeds is a minority outcome, not a contradiction
    minority = judged([0.9] * 25 + [0.1] * 183)
    assert minority.verdict == "CONSISTENT" and minority.margin == "a minority outcome, 25 of 208 seeds"
    assert judged([0.1] * 5).verdict == "CONSISTENT"  # 0 of 5: five seeds cannot call it rare
    rare = judged([0.9] + [0.1] * 207)  # Wilson's upper bound of 1/208 is below 5 %
    assert rare.verdict == "CONTRADICTED" and rare.margin == "a rare outcome, 1 of 208 seeds"


def test_one_models_number_and_conclusion_are_a_draw_of_the_seeds_that_show_both():
    """A weight per seed with a conclusion per seed (street's weight, and street the row's largest): the chapter's
    one model showed both, so its number is judged on the seeds that show both at once; the conclusion alone on its
    own share."""
    value = {"column": "street", "per_seed": True}
    lead = {"kind": "above", "than": 0.1, "value": {"lead": "street", "among": ["street", "adj"]}}
    c = claim({"kind": "absolute", "tolerance": 0.1}, value, chapter=0.5, conclusion=lead)
    # 10 seeds at 0.5 with adj above street (near the number, not the largest), 10 at 0.5 largest, 10 at 0.9 largest
    street = [0.5] * 20 + [0.9] * 10
    adj = [0.7] * 10 + [0.2] * 20
    table = seeded(seeded(pd.DataFrame({"k": [0]}), "street", [street]), "adj", [adj])
    judged = C.judge(c, {"t": table})
    assert judged.seed_share == "10/30 · 20/30" and judged.margin == "a minority outcome, 10 of 30 seeds"
    alone = C.judge({k: v for k, v in c.items() if k != "conclusion"}, {"t": table})
    assert alone.seed_share == "20/30"


def test_a_necessary_outcome_is_refuted_by_the_seeds_where_it_fails():
    c = claim({"kind": "absolute", "tolerance": 0.01}, {"column": "d", "per_seed": True}, chapter=0)
    c["necessary"] = True
    C.validate_claim(c)

    def judged(d):
        return C.judge(c, {"t": seeded(pd.DataFrame({"k": [0]}), "d", [d])})

    assert judged([0.0] * 100).verdict == "MATCH"
    # its mean is 0 (the differences cancel), but it fails in half the seeds: the chapter's one model is a plausible
    # draw (its number), its argument that every model shows it is refuted (the conclusion)
    refuted = judged([0.2, -0.2] * 25 + [0.0] * 50)
    assert (refuted.number, refuted.conclusion, refuted.verdict) == ("CONSISTENT", "FAILS", "CONTRADICTED")
    assert refuted.seed_share == "50/100" and "fails in 50 (necessary" in refuted.note
    assert judged([0.2, -0.2] * 50).number == "CONTRADICTED"  # in none of 100 seeds: not even a plausible draw
    assert judged([0.0] * 98 + [0.2, -0.2]).verdict == "CONSISTENT"  # 2 of 100: not shown rare, nor many
    with pytest.raises(C.ClaimsError, match="takes no conclusion of its own"):
        C.validate_claim({**c, "conclusion": {"kind": "above", "than": 0}})


def test_exact_checks_ignore_the_seeds():
    assert verdict(claim({"kind": "exact"}, {"column": "w"}, chapter=61.0), one_row(60.0, 2.0, 3)) == "CONTRADICTED"


@pytest.mark.parametrize("number, conclusion, expected", [
    ("MATCH", "NO CONCLUSION", "MATCH"), ("MATCH", "HOLDS", "MATCH"), ("MATCH", "INCONCLUSIVE", "INCONCLUSIVE"),
    ("MATCH", "FAILS", "CONTRADICTED"), ("MATCH", "PLAUSIBLE", "CONSISTENT"),
    ("INCONCLUSIVE", "NO CONCLUSION", "INCONCLUSIVE"), ("INCONCLUSIVE", "HOLDS", "INCONCLUSIVE"),
    ("INCONCLUSIVE", "FAILS", "CONTRADICTED"), ("CONSISTENT", "HOLDS", "CONSISTENT"),
    ("UNRESOLVED", "HOLDS", "UNRESOLVED"), ("UNRESOLVED", "INCONCLUSIVE", "INCONCLUSIVE"),
    ("UNRESOLVED", "FAILS", "CONTRADICTED"), ("CONTRADICTED", "NO CONCLUSION", "CONTRADICTED"),
    ("CONTRADICTED", "HOLDS", "CONCLUSION HOLDS"), ("CONTRADICTED", "INCONCLUSIVE", "CONTRADICTED"),
    ("CONTRADICTED", "PLAUSIBLE", "CONTRADICTED"), ("CONTRADICTED", "FAILS", "CONTRADICTED"),
    ("NOT JUDGED", "HOLDS", "NOT JUDGED"),
])
def test_the_verdict_comes_from_the_numbers_and_the_conclusions_by_one_rule(number, conclusion, expected):
    """A passing conclusion never turns a failing number into anything but CONCLUSION HOLDS (the number's column
    keeps CONTRADICTED), and every verdict it yields is defined."""
    from attnlab.claims.rules import overall_verdict
    assert overall_verdict(number, conclusion) == expected and expected in C.VERDICTS


def test_one_seed_or_no_spread_judges_no_miss():
    rule = {"kind": "relative", "tolerance": 0.01}
    one_seed = seeded(pd.DataFrame({"k": [0]}), "w", [[50.0]])  # a trained table with one seed
    row = C.judge(claim(rule, {"column": "w"}, chapter=60.0), {"t": one_seed})
    assert row.kind == "trained" and row.verdict == "NOT JUDGED" and "no spread" in row.note
    agree = C.judge(claim(rule, {"column": "w"}, chapter=60.0), {"t": seeded(pd.DataFrame({"k": [0]}), "w", [[50.0] * 5])})
    assert agree.verdict == "NOT JUDGED"
    assert C.judge(claim(rule, {"column": "w"}, chapter=50.2), {"t": one_seed}).verdict == "MATCH"


def test_margins_read_in_tolerances_with_their_interval_or_past_the_bound():
    rule = {"kind": "relative", "tolerance": 0.01}
    assert C.judge(claim(rule, ppl(1), chapter=59.7), {"t": LADDER}).margin == "0.5 tol"  # 0.3 of 0.597
    # one run of the chapter's: Δ = 0.3 over 0.597 + 0.05 (half of the printed 0.1), ± t(0.975, 2) · 0.3 · √(4/3)
    assert C.judge(claim(rule, {"column": "w"}, chapter=59.7), one_row(60.0, 0.3, 3)).margin == "Δ 0.46 tol ± 2.3 (one run)"
    above = C.judge(claim({"kind": "above", "than": 50}, {"column": "w"}, ">"), one_row(60.0, 2.0, 3))
    assert above.margin == "clears by 10 ± 4.968"
    assert C.judge(claim({"kind": "exact"}, ppl(1), chapter=61.0), {"t": LADDER}).margin == "off by 1"


def test_a_text_cell_is_read_as_a_fact():
    scaling = pd.DataFrame({"tokens": [8192, 16384], "status": ["ok", "out of memory (needs 18 GB)"]})
    oom = {"values": [{"column": "status", "where": {"tokens": t}, "matches": "out of memory"} for t in (16384, 8192)]}
    assert verdict(claim({"kind": "exact", "to": {"values": [1, 0]}}, oom, "oom"), {"t": scaling}) == "MATCH"
    ran = {"t": scaling.assign(status=["ok", "ok"])}
    assert verdict(claim({"kind": "exact", "to": {"values": [1, 0]}}, oom, "oom"), ran) == "CONTRADICTED"


# ---------------------------------------------------------------- missing pieces

def test_missing_table_row_and_column():
    rule = {"kind": "relative", "tolerance": 0.01}
    assert verdict(claim(rule, ppl(1), table="absent")) == "MISSING"
    assert verdict(claim(rule, ppl(9))) == "MISSING"
    row = C.judge(claim(rule, {"column": "nope", "where": {"row": 1}}), {"t": LADDER})
    assert row.verdict == "MISSING" and "held_out_ppl" in row.note  # names the columns there are
    assert verdict(claim(rule, {"column": "held_out_ppl", "where": {"model": "x"}})) == "MISSING"


def test_missing_conclusion_operand_is_missing():
    c = claim({"kind": "relative", "tolerance": 0.01}, ppl(1), chapter=60,
              conclusion={"kind": "below", "than": {"column": "held_out_ppl", "where": {"row": 1}, "table": "gone"}})
    assert verdict(c) == "MISSING"


def test_loglog_slope_and_last_skip_out_of_memory_rows():
    scaling = pd.DataFrame({"tokens": [128, 256, 512, 1024, 2048, 4096],
                            "ms": [1.0, 3.0, 12.0, 48.0, 192.0, "out of memory"]})
    slope = {"column": "ms", "reduce": "loglog_slope", "x": "tokens", "last": 3}
    assert verdict(claim({"kind": "absolute", "tolerance": 1e-9}, slope, chapter=2.0), {"t": scaling}) == "MATCH"
    last = {"column": "ms", "reduce": "last"}
    assert C.judge(claim({"kind": "exact"}, last, chapter=192), {"t": scaling}).verdict == "MATCH"


# ---------------------------------------------------------------- the claims file

def test_claims_file_is_valid_and_ids_are_unique():
    claims = C.load_claims()
    assert len({c["id"] for c in claims}) == len(claims) > 50
    assert all(c["id"].split(".")[0] == c["table"] for c in claims)


def published_ledger(profile: str) -> pd.DataFrame:
    """The ledger this code writes for a profile's published tables (not the published claims.csv, which the lead
    rebuilds after a change to the rules)."""
    from attnlab.claims.rules import load_plans
    tables = C.load_tables(sorted((C.ROOT / "results" / profile / "tables").glob("*.csv")))
    return C.ledger(C.load_claims(), tables, profile, load_plans(profile))


def test_every_claim_the_full_ledger_leaves_contradicted_or_undecided_says_why_in_words():
    """Its reason (configs/claims.yaml) is in the ledger beside the verdict; a reason is words only, so it cannot go
    stale as seeds land: one with a number in it is refused."""
    ledger = published_ledger("full")
    failed = ledger[ledger["verdict"].isin(("CONTRADICTED", "INCONCLUSIVE"))]
    assert len(failed) and (failed["reason"].str.len() > 0).all(), list(failed[failed["reason"] == ""]["id"])
    assert (ledger[~ledger["verdict"].isin(("CONTRADICTED", "INCONCLUSIVE"))]["reason"] == "").all()
    c = claim({"kind": "relative", "tolerance": 0.1}, ppl(1))
    C.validate_claim({**c, "reason": "Our runs spread wider than the chapter's."})
    with pytest.raises(C.ClaimsError, match="without digits"):
        C.validate_claim({**c, "reason": "Seven of 20 seeds diverge."})


def test_a_shortened_profile_judges_no_trained_claim_against_the_chapter_and_says_so_first():
    """quick trains a tenth of the chapter's steps: no trained claim of its ledger is CONTRADICTED or compares a
    printed number with the chapter's (it is judged against quick's own reference, test_claims_reference.py, or
    NOT JUDGED; its note saying why first); the orderings and conclusions that hold at its budget are shown; its
    ledger and summary say so first."""
    from attnlab.claims.reference import printed_number
    from attnlab.claims.rules import REGRESSION_VERDICTS

    ledger = published_ledger("quick")
    trained = ledger[ledger["kind"] == "trained"]
    assert len(trained) and not (trained[["verdict", "number"]] == "CONTRADICTED").any().any()
    measured = trained[trained["verdict"] != "NOT MEASURABLE"]
    assert (trained["conclusion"] != "FAILS").all() and measured["note"].str.startswith("a shortened profile").all()
    printed = trained["id"].map({c["id"]: printed_number(c) for c in C.load_claims()})
    assert trained.loc[printed & (trained["number"] != "NOT MEASURABLE"), "number"].isin(REGRESSION_VERDICTS.values()).all()
    assert (trained["verdict"] == "CONCLUSION HOLDS").any() and (trained["verdict"] == "MATCH").any()
    assert "quick numbers are not judged against the chapter" in C.summary_line(ledger)
    assert C.render.ledger_markdown(ledger).split("\n")[2].startswith("> Profile **quick** is a pipeline check")


@pytest.mark.parametrize("bad, message", [
    ({"kind": "roughly"}, "unknown"),
    ({"kind": "relative"}, "tolerance"),
    ({"kind": "above", "than": 1, "within": 2}, "not"),
    ({"kind": "increasing", "tolerance": 0.1}, "not"),
])
def test_malformed_rules_are_refused(bad, message):
    with pytest.raises(C.ClaimsError, match=message):
        claim(bad, ppl(1))


def test_a_lead_needs_the_columns_of_its_row():
    with pytest.raises(C.ClaimsError, match="among"):
        claim({"kind": "above", "than": 0}, {"lead": "x", "where": {"row": 1}})


def test_a_target_rule_needs_a_numeric_chapter_value():
    with pytest.raises(C.ClaimsError, match="numeric chapter"):
        claim({"kind": "relative", "tolerance": 0.1}, ppl(1), chapter="about four")


# ---------------------------------------------------------------- the CLI: ledger and README

def write_smoke_tables(folder: Path) -> list[Path]:
    corpus = pd.DataFrame({"quantity": ["characters", "tokens", "characters per token", "vocabulary",
                                        "train tokens", "held-out tokens"],
                           "value": [100000, 37898, 2.6387, 1024, 34108, 3790]})
    paths = [folder / "corpus.csv", folder / "average_ladder.csv"]
    corpus.to_csv(paths[0], index=False)
    LADDER.to_csv(paths[1], index=False)
    return paths


def test_check_cli_writes_a_labelled_ledger_of_every_claim(tmp_path, capsys):
    out = tmp_path / "out"
    C.main(["check", "--profile", "smoke", "--csv", str(out / "claims.csv"), "--md", str(out / "claims.md"),
            *map(str, write_smoke_tables(tmp_path))])
    df = pd.read_csv(out / "claims.csv")
    ids = [c["id"] for c in yaml.safe_load(C.CLAIMS_FILE.read_text())["claims"]]
    assert df["id"].tolist() == ids and set(df["verdict"]) <= set(C.VERDICTS)
    assert (df.loc[df["table"] == "ladder", "verdict"] == "MISSING").all()
    verdicts = df.set_index("id")["verdict"]
    assert verdicts["corpus.vocabulary"] == "MATCH" and verdicts["corpus.characters"] == "CONTRADICTED"
    assert verdicts["corpus.split"] == "MATCH"  # 34,108 of 37,898 tokens train: 0.9 to the token
    assert "margin" in df.columns and df.set_index("id").loc["corpus.chars_per_token", "margin"].endswith("tol")
    summary = capsys.readouterr().out.strip()
    assert "profile smoke" in summary and "not judged against the chapter" in summary and f": {len(ids)};" in summary
    kinds = df["kind"].value_counts()
    assert f"{kinds['analytic']} analytic — " in summary and ("trained" in summary) == ("trained" in kinds)
    markdown = (out / "claims.md").read_text()
    assert summary in markdown
    for verdict_name, meaning in C.VERDICTS.items():  # each verdict defined once, in the ledger's words
        assert f"**{verdict_name}**: {meaning}" in markdown


def test_readme_section_is_spliced_between_markers_and_refused_without_them(tmp_path):
    out = tmp_path / "results" / "full"
    out.mkdir(parents=True)
    C.main(["check", "--profile", "full", "--csv", str(out / "claims.csv"), "--md", str(out / "claims.md"),
            *map(str, write_smoke_tables(tmp_path))])
    readme = tmp_path / "README.md"
    readme.write_text("# attnlab\n\nintro\n")
    args = ["readme", "--ledger", str(out / "claims.csv"), "--readme", str(readme),
            f"table={out}/tables/corpus.md", f"figure={tmp_path}/figures/full/average_ladder.png"]
    with pytest.raises(SystemExit, match="results:start"):
        C.main(args)
    assert readme.read_text() == "# attnlab\n\nintro\n"  # nothing half-written
    readme.write_text(f"# attnlab\n\n## Results\n{C.README_START}\nOLD SECTION\n{C.README_END}\n\n## Tests\n")
    C.main(args + ["--out", str(out / "readme_results.md")])
    once = readme.read_text()
    assert "OLD SECTION" not in once and "## Tests" in once and "profile full" in once and "| verdict" in once
    assert all(f"**{v}**: {meaning}" in once for v, meaning in C.VERDICTS.items())
    assert "(results/full/tables/corpus.md)" in once and "(figures/full/average_ladder.png)" in once
    assert "(results/full/claims.md)" in once
    headline = [line for line in once.splitlines() if line.startswith("| ") and "|" in line[2:]]
    assert "| corpus.tokens " in once and "| corpus.characters " not in once  # headline claims only
    assert len(headline) - 1 == sum(1 for c in C.load_claims() if c.get("headline"))  # less the header
    C.main(args)
    assert readme.read_text() == once  # regenerating is idempotent


@pytest.mark.slow
def test_python_m_attnlab_claims_runs_the_same_command_line(tmp_path):
    import subprocess
    import sys
    tables = write_smoke_tables(tmp_path)
    cmd = [sys.executable, "-m", "attnlab.claims", "check", "--claims", "configs/claims.yaml", "--profile", "smoke",
           "--csv", str(tmp_path / "c.csv"), "--md", str(tmp_path / "c.md"), *map(str, tables)]
    done = subprocess.run(cmd, cwd=C.ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.startswith("claims (profile smoke, 1 seed per claim;") and (tmp_path / "c.md").exists()


def snakemake(*args) -> str:
    import subprocess
    import sys
    cmd = [sys.executable, "-m", "snakemake", "--cores", "1", "--config", "profile=full", *args]
    return subprocess.run(cmd, cwd=C.ROOT, capture_output=True, text=True, check=True).stdout


@pytest.mark.slow  # builds the workflow's DAG
def test_the_readme_and_the_ledger_wait_for_every_registered_table():
    """Dry run: the README section needs the ledger, and the ledger needs every registered table."""
    from attnlab.families import load_families
    from attnlab.tables import BUILDERS
    load_families()
    jobs = snakemake("-n", "-F", "--quiet", "rules", "--", "results/full/readme_results.md")
    scheduled = dict(re.findall(r"^(\w+)\s+(\d+)$", jobs, flags=re.M))
    assert {"claims", "readme_results"} <= set(scheduled) and int(scheduled["table"]) == len(BUILDERS) > 0


def test_a_spread_keeps_its_first_digit_when_the_mean_shows_few():
    """A mean shown as 45 (44.997: four significant digits) keeps its spread 0.509 as 0.5, not as 1;
    where the mean's last digit holds the spread's first, the spread stops there (60.1 ± 0.5)."""
    from attnlab.claims.render import show
    assert show(44.997, 0.509) == "45 ± 0.5"
    assert show(60.1, 0.4814) == "60.1 ± 0.5"
    assert show(1.417, 0.199) == "1.417 ± 0.199"
    assert show(137.6, 6.0) == "137.60 ± 6.00"


def test_two_outcomes_are_split_at_their_widest_gap_and_judged_on_the_nearest():
    from attnlab.claims.evaluate import split_modes
    low, high = split_modes(np.array([17.0, 6.5, 16.5, 7.0, 17.5, 6.0, 16.0]))
    assert sorted(low) == [6.0, 6.5, 7.0] and sorted(high) == [16.0, 16.5, 17.0, 17.5]
    c = claim({"kind": "relative", "tolerance": 0.1}, {"column": "w"}, chapter=17.0)
    c["modes"] = 2
    C.validate_claim(c)
    row = C.judge(c, one_row_of([17.0, 6.5, 16.5, 7.0, 17.5, 6.0, 16.0]))
    assert row.reproduced == "two modes: 6.5 ± 0.5 in 3 of 7 seeds; 16.75 ± 0.65 in 4 of 7 seeds"
    assert row.seed_share == "4/7" and row.number != "CONTRADICTED"
    assert C.judge({**c, "chapter": 0.0}, one_row_of([17.0, 6.5, 16.5, 7.0, 17.5, 6.0, 16.0])).number == "CONTRADICTED"


def one_row_of(seeds):
    return {"t": seeded(pd.DataFrame({"k": [0]}), "w", [np.asarray(seeds, dtype=float)])}
