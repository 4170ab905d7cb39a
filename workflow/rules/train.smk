# One generic training rule: results/<profile>/runs/<family>/<run>/seed<k>/. Its key is the
# composed config's hash (common.smk: train_step), so an edited YAML or an override reruns exactly
# the runs whose config it changes.


rule train:
    input:
        unpack(lambda w: train_step(w.run, int(w.seed)).rule_inputs()),
    output:
        **{name.split(".")[0]: f"{run_dir('{run}', '{seed}')}/{name}" for name in RUN_FILES},  # as train_step's
    wildcard_constraints:
        run=r"[a-z0-9_]+/[a-z0-9_]+",
        seed=r"\d+",
    params:
        overrides=lambda w: " ".join(shlex.quote(o) for o in overrides_of(w.run)),
        run_dir=lambda w: run_dir(w.run, w.seed),
    threads: config.get("train_threads", 1)
    resources:
        mem_mb=4000,
        runtime=240,
        gpu=0,
    log: f"{RESULTS}/runs/{{run}}/seed{{seed}}/train.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.train 'experiment={wildcards.run}' profile={PROFILE} seed={wildcards.seed}"
                    " {params.overrides} train.threads={threads} 'hydra.run.dir={params.run_dir}'")
