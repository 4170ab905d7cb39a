"""A shortened profile's regression reference (attnlab.claims.reference): its trained numbers are judged against
its own published seeds, never against the chapter's — SAME AS PUBLISHED within the seeds' spread, MOVED
beyond it — and the reference holds the count configs/pipeline.yaml planned."""

import json

import numpy as np
import pandas as pd
import pytest

from attnlab import claims as C
from attnlab.claims import reference as R
from attnlab.claims.read import estimate
from attnlab.claims.rules import load_plans
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


def test_a_rerun_within_the_reference_seeds_spread_is_the_same_and_beyond_it_moved():
    half = t_quantile(2) * np.std(SEEDS, ddof=1) * np.sqrt(1 / 3 + 1)  # one new seed against three
    mean = np.mean(SEEDS)
    for ppl, expected in [(mean, "same"), (mean + 0.99 * half, "same"), (mean - 1.01 * half, "moved"),
                          (float("nan"), "moved")]:
        status, margin, band = R.regression(Sample.constant(ppl), SEEDS)
        assert status == expected, (ppl, margin)
        assert "3 reference seeds" in band
    # a rerun of three seeds itself: its mean is judged with 1/3 + 1/3, a narrower band than one seed's
    three = Sample(np.asarray(mean + 0.8 * half), {3: np.asarray(SEEDS) + 0.8 * half})
    assert R.regression(three, SEEDS)[0] == "moved"
    # seeds that all agree give no spread to judge a difference by
    assert R.regression(Sample.constant(61.0), [60.0, 60.0, 60.0])[0] == "unjudged"
    assert R.regression(Sample.constant(60.0), [60.0, 60.0, 60.0])[0] == "same"


def test_the_ledger_judges_a_shortened_profiles_printed_number_against_its_reference_not_the_chapter():
    reference = frozen()
    assert reference["values"] == {"t.x": SEEDS} and reference["seeds"] == 3
    published = C.judge(CLAIM, one_seed(SEEDS[0]), shortened=True, reference=reference)
    assert published.number == published.verdict == "SAME AS PUBLISHED"
    assert published.note.startswith("a shortened profile") and "results/reference/quick.json" in published.note
    moved = C.judge(CLAIM, one_seed(75.0), shortened=True, reference=reference)
    assert moved.number == moved.verdict == "MOVED" and "beyond its reference seeds' spread" in moved.note
    without = C.judge(CLAIM, one_seed(SEEDS[0]), shortened=True)
    assert without.number == "NOT JUDGED" and "no reference of its own" in without.note
    # the full profile never reads a reference
    assert C.judge(CLAIM, one_seed(SEEDS[0]), reference=reference).number not in ("SAME AS PUBLISHED", "MOVED")


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
    reference's seeds, bit for bit on a CPU) is SAME AS PUBLISHED: the ledger reads what the reference froze. A
    measurement of the machine (a timing) is judged too, and may have moved on the machine that measured it again."""
    reference = R.load("quick")
    claims = {c["id"]: c for c in C.load_claims()}
    tables = C.load_tables(sorted((C.ROOT / "results/quick/tables").glob("*.csv")))
    ledger = C.ledger(list(claims.values()), tables, "quick", load_plans("quick"))
    regressed = ledger[ledger["id"].isin(reference["values"])]
    assert len(regressed) == len(reference["values"])
    assert regressed["number"].isin(["SAME AS PUBLISHED", "MOVED"]).all()
    trained = regressed[regressed["id"].map(lambda c: bool(reference["runs"].get(claims[c]["table"], {}).get("commit")))]
    assert len(trained) and (trained["number"] == "SAME AS PUBLISHED").all(), trained[["id", "number", "margin"]].to_string()
