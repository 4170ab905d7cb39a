"""The contradictions table: every hypothesis names real runs and claims, its findings follow from the
ledger's rules, and the published full ledger's CONTRADICTED claims each have one tried."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attnlab.claims.rules import load_claims
from attnlab.config import CONFIG_DIR, experiments
from attnlab.families.contradictions import FINDINGS, HYPOTHESES, finding, gap, hypothesis_table, seeds_to_decide

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = {c["id"]: c for c in load_claims()}


def test_every_hypothesis_names_claims_of_its_table_and_runs_that_exist():
    for h in HYPOTHESES:
        assert h.runs or h.read, h.id
        for claim_id in h.claims:
            assert CLAIMS[claim_id]["table"] == h.table, (h.id, claim_id)
        for run in h.runs.values():
            if run.startswith("winograd/"):
                assert (CONFIG_DIR / f"{run}.yaml").exists(), run
            elif not run.startswith("measure/"):
                assert run in experiments(), run
    assert len({h.id for h in HYPOTHESES}) == len(HYPOTHESES)


def test_every_contradicted_claim_of_the_full_ledger_has_a_hypothesis():
    ledger = pd.read_csv(ROOT / "results/full/claims.csv")
    tested = [c for h in HYPOTHESES for c in h.claims]
    contradicted = set(ledger.loc[ledger["verdict"] == "CONTRADICTED", "id"])
    assert contradicted <= set(tested), contradicted - set(tested)
    for claim_id in ("score_runaway.final_std", "winograd_category.average"):
        assert tested.count(claim_id) >= 3, claim_id


def test_the_published_table_answers_every_claim_with_a_finding():
    df = pd.read_csv(ROOT / "results/full/tables/contradictions.csv")
    assert set(df["finding"]) <= set(FINDINGS)
    assert {(h.id, c) for h in HYPOTHESES for c in h.claims} == set(zip(df["hypothesis_id"], df["claim"]))


def runaway_table(final_std: list[float]) -> dict:
    """score_runaway as its builder writes it: the undivided row's final std per seed."""
    row = {"variant": "undivided", "score_std_init": 21.0, "score_std_final": np.mean(final_std),
           "score_std_final_seeds": ";".join(map(str, final_std))}
    return {"score_runaway": pd.DataFrame([row])}


def test_a_gap_is_the_distance_from_the_chapter_seed_by_seed():
    claim = CLAIMS["score_runaway.final_std"]  # relative to 5147
    g = gap(claim, runaway_table([147.0, 5147.0, 10147.0]))
    assert np.allclose(g, [5000 / 5147, 0.0, 5000 / 5147])


@pytest.mark.parametrize("before, under, verdict, expected", [
    ([0.9, 0.95], [0.1, 0.12], "CONTRADICTED", "moves toward the chapter"),
    ([0.9, 0.95], [0.5, 1.4], "CONTRADICTED", "undecided"),      # closer on the mean, within the interval
    ([0.9, 0.95], [1.2, 1.3], "CONTRADICTED", "ruled out"),      # further away
    ([0.9, 0.95, 0.92], [0.88, 0.9, 0.89], "CONTRADICTED", "ruled out"),  # closer, by surely less than a tenth
    ([0.99], [0.98], "CONTRADICTED", "ruled out"),               # one seed each: closer by a hair only
    ([0.5], [0.5], "CONTRADICTED", "ruled out"),                 # no closer
    ([0.9, 0.95], [np.nan, 0.2], "CONTRADICTED", "ruled out"),   # a run that diverged has no gap to read
    ([0.9, 0.95], [0.01, 0.02], "MATCH", "reproduced under this setting"),
    ([0.9, 0.95], [0.5, 0.52], "CONCLUSION HOLDS", "conclusion reproduced"),
])
def test_findings(before, under, verdict, expected):
    assert finding(verdict, np.array(before), np.array(under)) == expected


def test_an_undecided_finding_says_how_many_seeds_would_decide_it():
    before, under = np.array([0.97, 0.975, 0.972, 0.969]), np.array([0.6, 0.8])
    assert finding("CONTRADICTED", before, under) == "undecided"
    n = int(seeds_to_decide("undecided", before, under))
    assert n > under.size
    assert seeds_to_decide("ruled out", before, under) == ""
    # shrunk by 0.099 against a tenth of 0.97: on the edge, so no number of seeds decides it
    assert seeds_to_decide("undecided", before, np.array([0.86, 0.887])) == "none"
    # the published seeds' spread alone keeps it undecided: seeds of the published runs would decide it
    spread, tight = np.array([0.9, 0.97, 1.04, 0.95]), np.array([0.79, 0.8, 0.81])
    assert seeds_to_decide("undecided", spread, tight) == "5 of the published runs"
    # both spread: only seeds of both would
    assert seeds_to_decide("undecided", np.array([0.8, 1.2, 1.0]), np.array([0.5, 0.9])) == \
        "13 of both the published and its runs"
    # both would decide it, but seeds of its runs alone add fewer (4 against 2 + 3)
    assert seeds_to_decide("undecided", np.array([0.9, 1.1, 1.0]), np.array([0.6, 0.85, 0.7])) == "6"


def test_the_same_runs_read_another_way_are_compared_seed_by_seed():
    before, under = np.array([0.9, 0.5, 0.7]), np.array([0.7, 0.3, 0.5])  # each seed's gap falls by 0.2
    assert finding("CONTRADICTED", before, under, paired=True) == "moves toward the chapter"
    assert finding("CONTRADICTED", before, under) == "undecided"  # as two different runs: within the spread
    assert seeds_to_decide("undecided", before, under) != ""


def test_a_hypothesis_that_reads_another_column_takes_its_seeds_too():
    h = next(h for h in HYPOTHESES if h.read)
    column, source = next(iter(h.read.items()))
    published = {h.table: pd.DataFrame({column: [60.0], f"{column}_seeds": ["50;70"],
                                        source: [100.0], f"{source}_seeds": ["100;100"]})}
    df = hypothesis_table(h, {}, published)
    assert df[column].tolist() == [100.0] and df[f"{column}_seeds"].tolist() == ["100;100"]


def test_the_ledger_notes_what_was_tried_and_keeps_its_verdict():
    from attnlab.claims.evaluate import ledger
    claim = CLAIMS["score_runaway.final_std"]
    tables = runaway_table([137.0, 140.0, 135.0])
    plain = ledger([claim], tables, "full")
    tables["contradictions"] = pd.DataFrame([{"claim": claim["id"], "setting": "train.lr=1e-2",
                                              "finding": "moves toward the chapter"}])
    noted = ledger([claim], tables, "full")
    assert noted["verdict"].tolist() == plain["verdict"].tolist()
    assert noted["note"][0].endswith("tried: train.lr=1e-2: moves toward the chapter")


def test_a_claim_its_table_cannot_answer_is_not_measured():
    assert finding("MISSING", np.array([0.9]), None) == "not measured"
