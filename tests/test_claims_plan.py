"""Seed plans (configs/pipeline.yaml, seeds_per_run.plan): each planned row's 80 %-power count is what its pilot
seeds give, its looks end on the count trained, and every claim that reads a row with more seeds than the
profile's is in that row's plan — so the ledger judges it at the level its looks leave."""

import pytest
from omegaconf import OmegaConf

from attnlab import claims as C
from attnlab.claims.evaluate import seed_plans
from attnlab.claims.read import estimate
from attnlab.claims.rules import PIPELINE_FILE, load_looks, load_plans

PROFILE = OmegaConf.load(C.ROOT / "configs" / "profile" / "full.yaml")
PLANS = load_plans("full")
CLAIMS = C.load_claims()


def test_every_row_given_more_seeds_has_a_plan_that_ends_on_its_count():
    counts = OmegaConf.load(PIPELINE_FILE).seeds_per_run.full
    assert set(counts) <= set(PLANS)
    for run, plan in PLANS.items():
        assert plan["looks"] == sorted(plan["looks"]) and plan["pilot"] == plan["looks"][0], run
        if run in counts:
            assert plan["looks"][-1] == counts[run], run
    assert PLANS["measure/norm_grad_init"]["looks"][-1] == PROFILE.measure.norm_grad_init.seeds


def test_each_plan_is_the_80_percent_power_count_of_its_pilot_seeds(full_tables):
    found = seed_plans(CLAIMS, full_tables, PLANS)
    for run, plan in PLANS.items():
        assert (plan["power80"], plan.get("beyond", [])) == (found[run]["power80"], found[run]["beyond"]), run


def test_every_claim_on_a_row_with_more_seeds_is_in_its_plan_and_judged_at_its_looks(full_tables):
    """A claim's seed sets larger than the profile's (3 a trained row, 10 a Winograd run) are rows given more
    seeds: a plan with that count lists the claim, and the ledger's looks for it are that plan's. A timing's
    repeats are the profile's own count, as a row's first seeds are."""
    looks = load_looks(CLAIMS, PLANS)
    defaults = {PROFILE.seeds, PROFILE.winograd_seeds, PROFILE.measure.attention_scaling.repeats,
                PROFILE.measure.winograd_interventions.seeds}
    for claim in CLAIMS:
        for expression in (claim["value"], (claim.get("conclusion") or {}).get("value")):
            if expression is None:
                continue
            try:
                counts = estimate(expression, full_tables, claim["table"]).counts
            except C.Missing:
                continue
            for n in set(counts) - defaults:
                planned = [run for run, plan in PLANS.items() if plan["looks"][-1] == n and claim["id"] in plan["for"]]
                assert planned, f"{claim['id']} reads a row of {n} seeds that no plan lists it for"
                assert looks[claim["id"]] >= max(len(PLANS[run]["looks"]) for run in planned)


def test_a_plan_for_a_claim_that_does_not_exist_is_refused():
    with pytest.raises(C.ClaimsError, match="claims that do not exist"):
        load_looks(CLAIMS, {"x/y": {"pilot": 3, "power80": 3, "looks": [3], "for": ["no.such_claim"]}})


def test_the_ledger_names_a_plan_that_asks_for_more_than_was_trained(full_tables):
    short = {run: plan for run, plan in PLANS.items() if plan["power80"] > plan["looks"][-1]}
    assert short  # e.g. position/alibi: its pilot asks for more than the 16 trained
    notes = C.ledger(CLAIMS, full_tables, "full", PLANS).set_index("id")["note"]
    for run, plan in short.items():
        for claim_id in plan["for"]:
            assert f"{run}'s plan asks for {plan['power80']} seeds" in notes[claim_id]
