"""Seed plans (configs/pipeline.yaml, seeds_per_run.plan): each planned row's count is the 80 %-power count at
its declared design margin from its pilot seeds' spread, every published row has the seeds its plan asks for or an
amendment that says why, its looks end on the count trained, and every claim that reads a row with more seeds than
the profile's is in that row's plan — so the ledger judges it at the level its looks leave."""

from pathlib import Path

import pytest
from omegaconf import OmegaConf

from attnlab import claims as C
from attnlab.claims.seed_plans import seed_plans
from attnlab.claims.read import estimate
from attnlab.claims.rules import PIPELINE_FILE, load_looks, load_plans
from attnlab.layout import run_folder

PROFILE = OmegaConf.load(C.ROOT / "configs" / "profile" / "full.yaml")
TIMED = OmegaConf.load(C.ROOT / "configs" / "measure" / "attention_scaling.yaml").sizes.full
PLANS = load_plans("full")
CLAIMS = C.load_claims()


def test_every_row_given_more_seeds_has_a_plan_whose_looks_end_on_its_count():
    counts = OmegaConf.load(PIPELINE_FILE).seeds_per_run.full
    assert set(counts) <= set(PLANS)
    for run, plan in PLANS.items():
        assert plan["looks"] == sorted(set(plan["looks"])) and plan["pilot"] == plan["looks"][0], run
        assert plan["trained"] == plan["looks"][-1] == counts.get(run, plan["trained"]), run
    assert PLANS["measure/norm_grad_init"]["trained"] == PROFILE.measure.norm_grad_init.seeds


def test_each_plan_is_the_80_percent_power_count_at_its_design_margin(full_tables):
    found = seed_plans(CLAIMS, full_tables, PLANS)
    for run, plan in PLANS.items():
        assert (plan["planned"], plan.get("beyond", [])) == (found[run]["planned"], found[run]["beyond"]), run


def published_seeds(run: str, tables: dict) -> int:
    """The seeds a published row has: its seed folders with a finished run (a measurement: its table's seeds)."""
    if run.startswith("measure/"):
        return int(tables[run.removeprefix("measure/")]["seeds"].max())
    folders = Path(run_folder(str(C.ROOT / "results" / "full"), run, 0)).parent
    return sum(1 for p in folders.glob("seed*/metrics.json") if p.parent.name.removeprefix("seed").isdigit())


def test_every_published_row_has_the_seeds_its_plan_asks_for_or_an_amendment(full_tables):
    """Seeds planned, then trained: a row whose published seeds differ from its plan's count names why (`amended:`,
    one of seeds_per_run.amendments); its published seeds are the count it says it trained."""
    amendments = OmegaConf.load(PIPELINE_FILE).seeds_per_run.amendments
    for run, plan in PLANS.items():
        assert plan["trained"] == plan["planned"] or plan.get("amended") in amendments, run
        assert published_seeds(run, full_tables) == plan["trained"], run


def test_an_amendment_that_is_not_defined_is_refused(tmp_path):
    doc = OmegaConf.to_container(OmegaConf.load(PIPELINE_FILE))
    doc["seeds_per_run"]["plan"]["full"]["ladder/block"]["amended"] = "because"
    (tmp_path / "profile").mkdir()
    (tmp_path / "profile" / "full.yaml").write_text((C.ROOT / "configs" / "profile" / "full.yaml").read_text())
    (tmp_path / "pipeline.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(doc)))
    with pytest.raises(C.ClaimsError, match="does not define"):
        load_plans("full", tmp_path / "pipeline.yaml")


def test_every_claim_on_a_row_with_more_seeds_is_in_its_plan_and_judged_at_its_looks(full_tables):
    """A claim's seed sets larger than the profile's (3 a trained row, 10 a Winograd run) are rows given more
    seeds: a plan with that count lists the claim, and the ledger's looks for it are that plan's. A timing's
    repeats are the profile's own count, as a row's first seeds are."""
    looks = load_looks(CLAIMS, PLANS)
    defaults = {PROFILE.seeds, PROFILE.winograd_seeds, TIMED.repeats,
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
        load_looks(CLAIMS, {"x/y": {"pilot": 3, "planned": 3, "looks": [3], "for": ["no.such_claim"]}})


def test_the_ledger_names_a_plan_that_asks_for_more_than_was_trained(full_tables):
    short = {run: plan for run, plan in PLANS.items() if plan["planned"] > plan["trained"]}
    assert short  # e.g. depth/two_blocks: its design margin asks for more than the 4 trained
    notes = C.ledger(CLAIMS, full_tables, "full", PLANS).set_index("id")["note"]
    for run, plan in short.items():
        for claim_id in plan["for"]:
            assert f"{run}'s plan asks for {plan['planned']} seeds" in notes[claim_id]


def test_a_claim_no_count_decides_at_its_observed_mean_gets_a_plan_at_its_design_margin(full_tables):
    """At the mean observed, no count decides depth_overfit.two_blocks_held_out or norm_warmup.pre_no_warmup (the mean
    sits on an edge); at the declared design margin (one tolerance past each edge) each has a finite count, and it
    does not move with the observed mean: a shifted table plans the same."""
    from attnlab.claims.seed_plans import design_seeds, pilot_tables
    by_id = {c["id"]: c for c in CLAIMS}
    pilot = pilot_tables(full_tables, 3)
    for claim_id in ("depth_overfit.two_blocks_held_out", "norm_warmup.pre_no_warmup"):
        planned = design_seeds(by_id[claim_id], pilot)
        assert planned and 3 <= planned <= 1000, claim_id
        shifted = {t: df.copy() for t, df in pilot.items()}
        table = shifted[by_id[claim_id]["table"]]
        for column in [c for c in table.columns if c.startswith("held_out_ppl")]:
            if column.endswith("_seeds"):
                table[column] = [";".join(repr(float(v) + 5.0) for v in cell.split(";")) if isinstance(cell, str) and cell
                                 else cell for cell in table[column]]
            elif column == "held_out_ppl":
                table[column] = table[column] + 5.0
        assert design_seeds(by_id[claim_id], shifted) == planned, claim_id
