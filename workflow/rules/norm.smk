# The norm family: pre-norm vs post-norm, twelve blocks (TABLES.md: norm_grad_init, norm_warmup).
# Rows: src/attnlab/families/norm.py.

GRAD_NORMS = f"{RESULTS}/measure/norm_grad_init/grad_norms.csv"
# the measured models are those of the training runs: their model configs are part of the key
GRAD_NORMS_STEP = register(Step(
    "measure_norm_grad_init",
    digest(measurement_code("attnlab.measure.grad_norms"), dict(PROFILE_CONFIG.measure.norm_grad_init),
           [composed(f"norm model {n} {PROFILE}", lambda: config_hash(compose([f"experiment=norm/{n}_no_warmup",
                                                                               f"profile={PROFILE}"]).model))
            for n in ("pre", "post")]),
    [GRAD_NORMS], {"tokens": [TOKENS_RECORD]}))


rule measure_norm_grad_init:
    input:
        unpack(lambda w: GRAD_NORMS_STEP.rule_inputs())
    output: csv=GRAD_NORMS
    threads: 1
    resources: mem_mb=3000, runtime=15
    log: f"{RESULTS}/measure/norm_grad_init/grad_norms.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.measure.grad_norms --profile {PROFILE} --threads {threads} --out {output.csv}")


add_table("norm_grad_init", inputs={"grad_norms": GRAD_NORMS})
add_table("norm_warmup", figure_inputs={"tokens": TOKENS_RECORD})  # its runs: @table in families/norm.py
