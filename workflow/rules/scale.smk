# The sqrt(d_k) family (TABLES.md: score_variance, effective_tokens, softmax_saturation,
# scale_training, score_runaway). The random-row measurements take seconds, so every profile
# measures the chapter's sample sizes (configs/measure/scale.yaml).

SCALE_SETTINGS = "configs/measure/scale.yaml"
# an edit of the settings or of the measuring code reruns both measurements
RANDOM_ROWS_CODE = module_code("attnlab.measure.random_rows", files=(SCALE_SETTINGS,))


rule measure_score_variance:
    input: settings=SCALE_SETTINGS
    output: csv=f"{RESULTS}/measure/score_variance/pairs.csv", meta=f"{RESULTS}/measure/score_variance/meta.json"
    params: code=RANDOM_ROWS_CODE
    threads: 1
    resources: mem_mb=1000, runtime=5
    log: f"{RESULTS}/measure/score_variance/measure.log"
    shell:
        "{PYTHON} -m attnlab.measure.random_rows score_variance --config {input.settings}"
        " --out {output.csv} --meta {output.meta} 2> {log}"


rule measure_random_rows:
    input: settings=SCALE_SETTINGS
    output: csv=f"{RESULTS}/measure/random_rows/rows.csv", meta=f"{RESULTS}/measure/random_rows/meta.json"
    params: code=RANDOM_ROWS_CODE
    threads: 1
    resources: mem_mb=1000, runtime=5
    log: f"{RESULTS}/measure/random_rows/measure.log"
    shell:
        "{PYTHON} -m attnlab.measure.random_rows rows --config {input.settings}"
        " --out {output.csv} --meta {output.meta} 2> {log}"


add_table("score_variance", inputs={"pairs": rules.measure_score_variance.output.csv,
                                    "meta": rules.measure_score_variance.output.meta})
for _id in ("effective_tokens", "softmax_saturation"):
    add_table(_id, inputs={"rows": rules.measure_random_rows.output.csv, "meta": rules.measure_random_rows.output.meta})

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
