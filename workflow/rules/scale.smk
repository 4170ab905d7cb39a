# The sqrt(d_k) family (TABLES.md: score_variance, effective_tokens, softmax_saturation,
# scale_training, score_runaway). The random-row measurements take seconds, so every profile
# measures the chapter's sample sizes (configs/measure/scale.yaml).

SCALE_SETTINGS = "configs/measure/scale.yaml"
# an edit of the settings or of the measuring code reruns both measurements
RANDOM_ROWS_CODE = module_code("attnlab.measure.random_rows", files=(SCALE_SETTINGS,))


RANDOM_ROWS = {"score_variance": "pairs", "random_rows": "rows"}  # measurement -> its CSV's name


def random_rows_step(measure: str) -> Step:
    folder = f"{RESULTS}/measure/{measure}"
    return register(Step(f"measure_{measure}", digest(RANDOM_ROWS_CODE, measure),
                         [f"{folder}/{RANDOM_ROWS[measure]}.csv", f"{folder}/meta.json"]))


for _measure in RANDOM_ROWS:

    rule:
        name: f"measure_{_measure}"
        input:
            unpack(lambda w, _measure=_measure: step_inputs(random_rows_step(_measure)))
        output: csv=random_rows_step(_measure).outputs[0], meta=random_rows_step(_measure).outputs[1],
                stamp=random_rows_step(_measure).stamp
        params: key=random_rows_step(_measure).key, mode="rows" if _measure == "random_rows" else _measure
        threads: 1
        resources: mem_mb=1000, runtime=5
        log: f"{RESULTS}/measure/{_measure}/measure.log"
        shell:
            write_stamp("{PYTHON} -m attnlab.measure.random_rows {params.mode} --config " + SCALE_SETTINGS +
                        " --out {output.csv} --meta {output.meta}")


add_table("score_variance", inputs=dict(zip(("pairs", "meta"), random_rows_step("score_variance").outputs)))
for _id in ("effective_tokens", "softmax_saturation"):
    add_table(_id, inputs=dict(zip(("rows", "meta"), random_rows_step("random_rows").outputs)))

# row -> (divided run, undivided run); the d_k = 32 divided run is the ladder's full block.
SCALE_TRAINING = {
    "shared_d32": ("ladder/block", "scale/shared_d32_undivided"),
    "shared_d128": ("scale/shared_d128_divided", "scale/shared_d128_undivided"),
    "short_d128": ("scale/short_d128_divided", "scale/short_d128_undivided"),
    "short_d256": ("scale/short_d256_divided", "scale/short_d256_undivided"),
    "short_d1024": ("scale/short_d1024_divided", "scale/short_d1024_undivided"),
}

add_table("scale_training", runs={f"{row}__{variant}": run for row, pair in SCALE_TRAINING.items()
                                  for variant, run in zip(("divided", "undivided"), pair)})
add_table("score_runaway", runs=dict(zip(("divided", "undivided"), SCALE_TRAINING["short_d1024"])))
