# The sqrt(d_k) family (TABLES.md: score_variance, effective_tokens, softmax_saturation,
# scale_training, score_runaway). The random-row measurements take seconds, so every profile
# measures the chapter's sample sizes (configs/measure/scale.yaml). Rows: src/attnlab/families/scale.py.
from attnlab.families.contradictions import hypothesis_of
from attnlab.families.scale import SCORE_RUNAWAY, SQRT_DK_RUNS, SWEEP_RUNS

SCALE_SETTINGS = "configs/measure/scale.yaml"
# an edit of the settings or of the measuring code reruns both measurements
RANDOM_ROWS_CODE = measurement_code("attnlab.measure.random_rows", files=(SCALE_SETTINGS,))


RANDOM_ROWS = {"score_variance": "pairs", "random_rows": "rows"}  # measurement -> its CSV's name


def random_rows_step(measure: str) -> Step:
    folder = f"{RESULTS}/measure/{measure}"
    return register(Step(f"measure_{measure}", digest(RANDOM_ROWS_CODE, measure),
                         [f"{folder}/{RANDOM_ROWS[measure]}.csv", f"{folder}/meta.json"]))


for _measure in RANDOM_ROWS:

    rule:
        name: f"measure_{_measure}"
        input:
            unpack(lambda w, _measure=_measure: random_rows_step(_measure).rule_inputs())
        output: csv=random_rows_step(_measure).outputs[0], meta=random_rows_step(_measure).outputs[1]
        params: mode="rows" if _measure == "random_rows" else _measure, settings=SCALE_SETTINGS
        threads: 1
        resources: mem_mb=1000, runtime=5
        log: f"{RESULTS}/measure/{_measure}/measure.log"
        conda: ENVIRONMENT
        shell:
            logged("{PYTHON} -m attnlab.measure.random_rows {params.mode} --config {params.settings}"
                   " --out {output.csv} --meta {output.meta}")


add_table("score_variance", inputs=dict(zip(("pairs", "meta"), random_rows_step("score_variance").outputs)))
for _id in ("effective_tokens", "softmax_saturation"):
    add_table(_id, inputs=dict(zip(("rows", "meta"), random_rows_step("random_rows").outputs)))

add_table("score_runaway", inputs=lambda variant: {name: run_metrics(run, variant)
                                                   for name, run in SCORE_RUNAWAY.runs().items()})


def sqrt_dk_seeds(run: str) -> list[int]:
    """The seeds the sweep reads of a run: a published row's, a hypothesis's, or (a sweep run) the seeds
    seeds_per_run names, none by default: the sweep's runs are trained apart and landed with their keys."""
    if run in SWEEP_RUNS:
        return seeds_of(run, base=0)
    if run in EXPERIMENT_ROWS:
        return seeds_of(run)
    return seeds_of(run, base=hypothesis_of(run).seeds_under(PROFILE_CONFIG.seeds))


EXPERIMENT_ROWS = set(SCORE_RUNAWAY.runs().values()) | {e for row in ("short_d256",) for e in
                                                         (f"scale/{row}_divided", f"scale/{row}_undivided")}
# the claims file gives the chapter's numbers and the ledger's tolerances: part of the table's key
add_table("sqrt_dk_sweep", inputs=lambda variant: {
    "claims": [CLAIMS_FILE], **{run: [train_step(run, seed).outputs[0] for seed in sqrt_dk_seeds(run)]
                                for run in SQRT_DK_RUNS}}, code_files=(CLAIMS_FILE,))
