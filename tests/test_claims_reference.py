"""A shortened profile's regression reference (attnlab.claims.reference): its trained numbers are judged against
its own published seeds, never against the chapter's, in the ledger's own words — AGREES seed for seed (or within the
seeds' spread where they could have caught a move), DIFFERS beyond it, OPEN within it where they could not, NOT TESTED
where they all agree — its points judged on its own short runs as anywhere, and the reference holds the count
configs/pipeline.yaml planned."""

import json

import numpy as np
import pandas as pd
import pytest

from attnlab import claims as C
from attnlab.claims import reference as R
from attnlab.claims.read import estimate
from attnlab.claims.rules import NO_POINT, load_plans
from attnlab.claims.stats import Sample, t_quantile

SEEDS = [60.0, 61.0, 62.5]  # one row's held-out perplexity on three seeds
TABLE = pd.DataFrame({"row": [1, 2], "held_out_ppl": [np.mean(SEEDS), 240.0], "config_hash": ["a", "b"],
                      "held_out_ppl_seeds": [";".join(map(str, SEEDS)), "238;240;242"]})
CLAIM = {"id": "t.x", "table": "t", "statement": "s", "chapter": 59.7,
         "value": {"column": "held_out_ppl", "where": {"row": 1}}, "rule": {"kind": "relative", "tolerance": 0.02}}


def one_seed(ppl: float) -> dict:
    return {"t": pd.DataFrame({"row": [1, 2], "held_out_ppl": [ppl, 240.0], "seeds": [1, 1]})}


def frozen() -> dict:
    return R.freeze([CLAIM], {"t": TABLE}, "quick", 3)


def test_a_rerun_is_judged_against_the_reference_seeds_spread():
    """Beyond t(n − 1)·s·√(1/n + 1/m) of the reference's mean a rerun fails (DIFFERS); inside it, three reference seeds
    could not have caught a move of 4 sd ((t(0.975, 2) + z(0.8))·√(4/3) > 4: stats.powered), so it stays open (OPEN);
    ten could (it passes: AGREES); a rerun that gives the published seeds' values passes seed for seed."""
    half = t_quantile(2) * np.std(SEEDS, ddof=1) * np.sqrt(1 / 3 + 1)  # one new seed against three
    mean = np.mean(SEEDS)
    for ppl, expected in [(mean, "open"), (mean + 0.99 * half, "open"), (mean - 1.01 * half, "fail"),
                          (float("nan"), "fail"), (SEEDS[0], "pass")]:
        status, margin, band, why = R.regression(Sample.constant(ppl), SEEDS)
        assert status == expected, (ppl, margin, why)
        assert "3 reference seeds" in band
    assert "seed for seed" in R.regression(Sample.constant(SEEDS[0]), SEEDS)[3]
    ten = list(np.mean(SEEDS) + np.linspace(-1.5, 1.5, 10))
    assert R.regression(Sample.constant(float(np.mean(ten)) + 0.1), ten)[0] == "pass"
    # a rerun of three seeds itself: its mean is judged with 1/3 + 1/3, a narrower band than one seed's
    three = Sample(np.asarray(mean + 0.8 * half), {3: np.asarray(SEEDS) + 0.8 * half})
    assert R.regression(three, SEEDS)[0] == "fail"
    # seeds that all agree give no spread to judge a difference by
    assert R.regression(Sample.constant(61.0), [60.0, 60.0, 60.0])[0] == "untested"
    assert R.regression(Sample.constant(60.0), [60.0, 60.0, 60.0])[0] == "pass"


def test_the_ledger_judges_a_shortened_profiles_printed_number_against_its_reference_not_the_chapter():
    reference = frozen()
    assert reference["values"] == {"t.x": SEEDS} and reference["seeds"] == 3
    published = C.judge(CLAIM, one_seed(SEEDS[0]), shortened=True, reference=reference)
    assert (published.number, published.point) == ("AGREES", NO_POINT)
    assert published.why.startswith("a shortened profile") and "results/reference/quick.json" in published.why
    moved = C.judge(CLAIM, one_seed(75.0), shortened=True, reference=reference)
    assert moved.number == "DIFFERS" and "beyond the reference seeds' spread" in moved.why
    without = C.judge(CLAIM, one_seed(SEEDS[0]), shortened=True)
    assert without.number == "NOT TESTED" and "no reference of its own" in without.why
    # the full profile never reads a reference: one seed of its own is not tested against the chapter
    full = C.judge(CLAIM, one_seed(SEEDS[0]), reference=reference)
    assert full.number == "NOT TESTED" and "shortened" not in full.why and "reference" not in full.why
    # the reference judges the number only: the point is judged on the profile's own runs as in the full profile,
    # where one seed gives it no spread to be judged by (OPEN, both ways)
    concluded = {**CLAIM, "conclusion": {"kind": "below", "than": {"column": "held_out_ppl", "where": {"row": 2}}}}
    short, full = (C.judge(concluded, one_seed(SEEDS[0]), shortened=s, reference=reference) for s in (True, False))
    assert (short.number, short.point) == ("AGREES", "OPEN") and (short.point, short.note) == (full.point, full.note)
    assert "one seed" in short.note


def test_a_reference_short_of_its_planned_seeds_or_of_trained_claims_is_refused(tmp_path):
    with pytest.raises(C.ClaimsError, match="fewer"):
        R.freeze([CLAIM], {"t": TABLE}, "quick", 5)
    with pytest.raises(C.ClaimsError, match="no trained claim"):
        R.freeze([CLAIM], one_seed(60.0), "quick", 1)
    path = tmp_path / "results/reference/quick.json"
    R.write(frozen(), path)
    assert json.loads(path.read_text())["values"]["t.x"] == SEEDS
    assert not list(path.parent.glob(".*.tmp"))


@pytest.mark.parametrize("profile", ["quick", "smoke"])
def test_a_shortened_profiles_reference_holds_its_planned_seeds_of_printed_numbers(profile):
    """The reference holds the seeds configs/pipeline.yaml planned for it, no more and no fewer, for every claim
    read from trained runs — or the profile's own count where it publishes more (quick's Winograd probes) — a seeded
    measurement its profile's count; and printed-number claims only."""
    claims = {c["id"]: c for c in C.load_claims()}
    reference = R.load(profile)
    assert reference and reference["profile"] == profile and reference["seeds"] == R.planned_seeds(profile)
    assert all(R.printed_number(claims[claim_id]) for claim_id in reference["values"])
    counts = {claim_id: np.shape(values)[-1] for claim_id, values in reference["values"].items()}
    published = C.load_tables(sorted((C.ROOT / "results" / profile / "tables").glob("*.csv")))  # none for smoke

    def own(claim_id: str) -> int:
        claim = claims[claim_id]
        return estimate(claim["value"], published, claim["table"]).shared.shape[-1] if published else 1

    runs = {claim_id for claim_id in counts if reference["runs"].get(claims[claim_id]["table"], {}).get("commit")}
    assert runs and all(counts[c] == max(reference["seeds"], own(c)) for c in runs), counts
    assert all(n >= 2 for n in counts.values())


def test_the_published_quick_ledger_comes_back_as_published():
    """Every printed number of the published quick tables read from trained runs (seed 0 of each row, one of the
    reference's seeds, bit for bit on a CPU) AGREES seed for seed: the ledger reads what the reference froze. A
    measurement of the machine (a timing) is judged too, against the reference, and may have moved (DIFFERS) on the
    machine that measured it again."""
    reference = R.load("quick")
    claims = {c["id"]: c for c in C.load_claims()}
    tables = C.load_tables(sorted((C.ROOT / "results/quick/tables").glob("*.csv")))
    ledger = C.ledger(list(claims.values()), tables, "quick", load_plans("quick"))
    regressed = ledger[ledger["id"].isin(reference["values"])]
    assert len(regressed) == len(reference["values"])
    assert regressed["number"].isin(["AGREES", "DIFFERS", "OPEN"]).all()
    assert regressed["why"].str.contains("judged against its own published seeds").all()
    trained = regressed[regressed["id"].map(lambda c: bool(reference["runs"].get(claims[c]["table"], {}).get("commit")))]
    assert len(trained) and (trained["number"] == "AGREES").all(), trained[["id", "number", "margin"]].to_string()
    assert trained["why"].str.endswith("seed for seed").all()
