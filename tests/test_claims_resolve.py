"""What the ledger can resolve, on the published full tables: a chapter value that is one of our own seeds rarely
DIFFERS (calibration, each seed left out in turn), and a chapter value far from our mean DIFFERS by its number
whatever its point says (power), or the claim says it cannot resolve it (OPEN, with its band)."""

import numpy as np

from attnlab import claims as C
from attnlab.claims import stats
from attnlab.claims.evaluate import device_check, seeded
from attnlab.claims.read import estimate, uses_lead
from attnlab.claims.rules import (NUMBER_WORDS, POINT_WORDS, TWIN_AGREES, TWIN_BEYOND_SPREAD, TWIN_NOT_RUN, load_looks,
                                  load_plans, rounding)
from attnlab.claims.stats import Sample

CLAIMS = C.load_claims()


def one_run_numbers(tables):
    """(claim, its value over one seed set) for every trained claim that compares one printed number with ours."""
    for claim in CLAIMS:
        rule = claim["rule"]
        if (rule["kind"] in ("relative", "absolute") and "to" not in rule and seeded(claim, tables)
                and not uses_lead(claim["value"]) and not claim.get("measurable")):
            value = estimate(claim["value"], tables, claim["table"])
            if len(value.counts) == 1 and value.point.ndim == 0:
                yield claim, value


def tolerance_at(claim, chapter):
    rule = claim["rule"]
    return rule["tolerance"] * (abs(chapter) if rule["kind"] == "relative" else 1.0) + float(rounding(claim)) / 2


def test_a_seed_of_ours_as_the_chapters_run_rarely_differs(full_tables):
    """Each seed in turn, left out of the sample, is the chapter's value: outside the prediction interval of one run
    of the other seeds (stats.predict: the number DIFFERS) in at most 5 % plus twice the simulation's standard error,
    claim by claim."""
    checked = 0
    for claim, value in one_run_numbers(full_tables):
        seeds = value.per_seed()
        n = seeds.size
        if n < 5:
            continue
        failed = 0
        for i in range(n):
            rest = np.delete(seeds, i)
            gap = Sample(np.asarray(rest.mean() - seeds[i]), {n - 1: rest - seeds[i]})
            differs, _ = stats.predict(gap, np.asarray(tolerance_at(claim, seeds[i])))
            failed += bool(differs)
        assert failed / n <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / n), (claim["id"], failed, n)
        checked += 1
    assert checked >= 30


def test_a_chapter_far_from_our_mean_differs_by_its_number(full_tables):
    """The chapter's value at our mean + (tolerance + 4 one-run spreads): the number DIFFERS in at least 80 % of the
    claims, and every one where it does not is OPEN or NOT TESTED, never AGREES (with its band)."""
    found = []
    for claim, value in one_run_numbers(full_tables):
        spread, _ = value.draw_error()
        mean = float(value.point)
        rule = claim["rule"]
        # the tolerance at the shifted value: relative tolerances grow with it
        scale = 1 / (1 - rule["tolerance"]) if rule["kind"] == "relative" and mean > 0 else 1.0
        far = (mean + (tolerance_at(claim, mean) + 4 * float(spread))) * scale
        row = C.judge({**claim, "chapter": far}, full_tables)
        found.append((claim["id"], row.number, row.band))
    differs = [f for f in found if f[1] == "DIFFERS"]
    assert len(differs) >= 0.8 * len(found), found
    assert all(number in ("OPEN", "NOT TESTED") and band for _, number, band in found if number != "DIFFERS"), found


def test_the_full_ledger_has_a_band_for_every_number_it_compares_with_one_run(full_tables):
    """A number compared with one run on the normal scale shows its band (the chapter values it accepts, the shift it
    catches); one judged by rank (a bounded quantity with seeds enough: stats.rank_seeds) says so instead."""
    ledger = C.ledger(CLAIMS, full_tables, "full")
    compared = {claim["id"] for claim, _ in one_run_numbers(full_tables)}
    rows = ledger[ledger["id"].isin(compared)]
    by_rank = rows["margin"].str.endswith("(by rank)")
    assert len(rows[~by_rank]) >= 30 and (rows[~by_rank]["band"].str.startswith("accepts [")).all()
    assert (rows[by_rank]["why"].str.contains("by rank")).all() and (rows[by_rank]["band"] == "").all()
    assert set(ledger["number"]) <= set(NUMBER_WORDS) and set(ledger["point"]) <= set(POINT_WORDS)


def test_every_number_printed_from_one_run_uses_its_kinds_tolerance(full_tables):
    """configs/claims.yaml states one tolerance per kind of quantity (its `tolerances:`, each with its reason); every
    claim that compares one printed run with ours takes its rule from there (the anchor itself, not a copy)."""
    import yaml
    from attnlab.claims.rules import ClaimsLoader
    doc = yaml.load(C.CLAIMS_FILE.read_text(encoding="utf-8"), Loader=ClaimsLoader)
    schemes = list(doc["tolerances"].values())
    by_id = {c["id"]: c for c in doc["claims"]}
    compared = [claim["id"] for claim, _ in one_run_numbers(full_tables)]
    assert len(compared) >= 30
    for claim_id in compared:
        assert any(by_id[claim_id]["rule"] is scheme for scheme in schemes), claim_id


def test_a_cost_of_two_outcomes_is_reported_as_two_modes_and_judged_by_the_normal_rule(full_tables):
    """dk256_cost has two outcomes among our seeds (the undivided head dies in some): its ledger row gives each mode
    with its share; its 21 seeds are too few to judge by rank, so the number is the normal rule's (not the nearest
    mode's), said so: the chapter's 18 AGREES, a chapter that printed a gain (−5) or a cost past both modes (40)
    DIFFERS, at the level its rows' looks leave."""
    claim = next(c for c in CLAIMS if c["id"] == "scale_training.dk256_cost")
    looks = load_looks(CLAIMS, load_plans("full")).get(claim["id"], 1)
    row = C.judge(claim, full_tables, looks)
    assert row.reproduced.startswith("two modes: ") and row.reproduced.count(" of 21 seeds") == 2
    assert row.number == "AGREES" and "21 seeds are too few to judge by rank" in row.why and row.band
    assert row.point == "HOLDS" and row.seed_share == ""
    for chapter in (-5, 40):
        judged = C.judge({**claim, "chapter": chapter}, full_tables, looks)
        assert (judged.number, judged.point) == ("DIFFERS", row.point), judged


def test_an_outcome_of_one_of_our_seeds_as_the_chapters_model_rarely_differs(full_tables):
    """For every claim judged on an outcome per seed (the chapter's one model), each of our seeds in turn, left out,
    is the chapter's model: its outcome reads DIFFERS or FAILS (rare among the other seeds) in at most 5 % plus twice
    the simulation's standard error of the seeds."""
    ledger = C.ledger([c for c in CLAIMS if not c.get("modes")], full_tables, "full")
    shares = [(r.id, *map(int, r.seed_share.split(" · ")[0].split("/"))) for r in ledger.itertuples() if r.seed_share]
    assert len(shares) >= 4 and "winograd_attention.block1_same" in {s[0] for s in shares}  # a necessary claim too
    for claim_id, k, n in shares:
        # a seed where it holds leaves k − 1 of n − 1 holding; one where it does not, n − k − 1 not holding
        rate = ((k * (stats.decide_draw(k - 1, n - 1) == "fail") if k else 0)
                + ((n - k) * (stats.decide_draw(n - k - 1, n - 1) == "fail") if n - k else 0)) / n
        assert rate <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / n), (claim_id, k, n, rate)


def test_a_claim_on_rows_mixing_devices_stands_on_cross_device(full_tables):
    """ladder.block reads rows of GPU and CPU seeds: it stands while every CPU twin of a GPU seed lies within one
    seed sd of it, its number turns OPEN (naming the twin) when one lies beyond, and says so when no twin is trained;
    a claim on rows of one device is left as it is."""
    claim = next(c for c in CLAIMS if c["id"] == "ladder.block")
    twins = full_tables["cross_device"]
    trained = twins["verdict"] != TWIN_NOT_RUN
    assert trained.any()

    def judged(table):
        return C.ledger([claim], {**full_tables, "cross_device": table}, "full").iloc[0]

    agree = twins.assign(verdict=np.where(trained, TWIN_AGREES, TWIN_NOT_RUN))
    standing = judged(agree)
    alone = C.judge(claim, full_tables)
    assert alone.number == "AGREES" and "it stands on cross_device" in standing["note"]
    assert (standing["number"], standing["point"]) == (alone.number, alone.point)
    first = trained.idxmax()
    apart = agree.copy()
    apart.loc[first, ["verdict", "in_row_sds"]] = [TWIN_BEYOND_SPREAD, 3.0]
    falling = judged(apart)
    assert (falling["number"], falling["point"]) == ("OPEN", alone.point)
    assert f"the CPU twin of {twins.loc[first, 'run']} seed {twins.loc[first, 'seed']} lies 3 seed sd" in falling["note"]
    assert "no CPU twin" in judged(twins.assign(verdict=TWIN_NOT_RUN))["note"]
    one_device = {**full_tables, "ladder": full_tables["ladder"].assign(device="NVIDIA H200 ×3")}
    assert device_check(claim, {**one_device, "cross_device": apart}) == (True, "")


def test_one_models_head_averaged_weight_is_judged_by_rank_among_our_models(full_tables):
    """block2_wet is one model's head-averaged weight, which falls on quarters (one-hot heads), in [0, 1]: the
    chapter's printed weight is judged by rank among our 208 models (stats.rank_p), its point (street the row's
    largest weight) on the share of our seeds that show it, apart. Our seeds span the range, so the chapter's 0.49 is
    a run of ours, and no count of seeds could make the test able to fail inside the range (OPEN, saying so); a
    chapter that printed 0.0 is a run of ours too (some of our models put nearly nothing on street). The point holds
    in most of our seeds whatever number the chapter printed."""
    claim = next(c for c in CLAIMS if c["id"] == "winograd_attention.block2_wet")
    printed, zero = C.judge(claim, full_tables), C.judge({**claim, "chapter": 0.0}, full_tables)
    assert printed.number == "OPEN" and "by rank" in printed.why and "no count of seeds decides it" in printed.why
    assert zero.number == "OPEN" and "by rank" in zero.why
    assert printed.point == zero.point == "HOLDS" and printed.note == zero.note
    # the point's share counts the seeds where street leads by 0.1, from the table's own per-seed cells
    lead = estimate(claim["conclusion"]["value"], full_tables, claim["table"]).per_seed()
    assert printed.seed_share == zero.seed_share == f"{int(np.sum(lead >= 0.1))}/{lead.size}"
