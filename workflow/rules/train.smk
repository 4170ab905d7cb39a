# One generic training rule: results/<profile>/runs/<family>/<run>/seed<k>/.
# The composed config's hash is a param, so an edited YAML reruns exactly the runs it changes.


rule train:
    input:
        f"{DATA}/tokens.npy",
    output:
        metrics=f"{RESULTS}/runs/{{run}}/seed{{seed}}/metrics.json",
        curve=f"{RESULTS}/runs/{{run}}/seed{{seed}}/curve.csv",
        evals=f"{RESULTS}/runs/{{run}}/seed{{seed}}/evals.csv",
    wildcard_constraints:
        run=r"[a-z0-9_]+/[a-z0-9_]+",
        seed=r"\d+",
    params:
        config_hash=lambda w: run_hash(w.run, int(w.seed)),
        code=MODEL_CODE,
        run_dir=lambda w: run_dir(w.run, w.seed),
    threads: config.get("train_threads", 1)
    resources:
        mem_mb=4000,
        runtime=240,
        gpu=0,
    log: f"{RESULTS}/runs/{{run}}/seed{{seed}}/train.log"
    shell:
        "{PYTHON} -m attnlab.train 'experiment={wildcards.run}' profile={PROFILE} seed={wildcards.seed}"
        " train.threads={threads} 'hydra.run.dir={params.run_dir}' > {log} 2>&1"
