# The norm family: pre-norm vs post-norm, twelve blocks (TABLES.md: norm_grad_init, norm_warmup).

NORM_WARMUP = {
    "pre_no_warmup": "norm/pre_no_warmup",
    "pre_warmup": "norm/pre_warmup",
    "post_no_warmup": "norm/post_no_warmup",
    "post_warmup": "norm/post_warmup",
    # not chapter rows: post_warmup without each unstated detail we chose, to show what it does
    "post_warmup_no_clip": "norm/post_warmup_no_clip",
    "post_warmup_batch64": "norm/post_warmup_batch64",
}


rule measure_norm_grad_init:
    input:
        f"{DATA}/tokens.npy",
    output: f"{RESULTS}/measure/norm_grad_init/grad_norms.csv"
    params:
        # the measured models are those of the training runs: rerun when their model configs change
        model_hash=lambda w: [config_hash(compose([f"experiment=norm/{n}_no_warmup", f"profile={PROFILE}"]).model)
                              for n in ("pre", "post")],
        code=module_code("attnlab.measure.grad_norms", files=("configs/measure/norm.yaml",)),
    threads: 1
    resources: mem_mb=3000, runtime=15
    log: f"{RESULTS}/measure/norm_grad_init/grad_norms.log"
    shell: "{PYTHON} -m attnlab.measure.grad_norms --profile {PROFILE} --threads {threads} --out {output} > {log} 2>&1"


add_table("norm_grad_init", inputs={"grad_norms": f"{RESULTS}/measure/norm_grad_init/grad_norms.csv"})
add_table("norm_warmup", runs=NORM_WARMUP, figure_inputs={"tokens": f"{DATA}/tokens.npy"})
