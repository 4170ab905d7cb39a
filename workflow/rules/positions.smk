# The positions family (TABLES.md: position_extrapolation): five schemes trained on 64-token
# windows by the generic train rule; attnlab.evaluate then reads each checkpoint at every
# window below. Evaluation is its own job, so adding a length reruns it, never the training.

POSITION_SCHEMES = ["learned", "sinusoidal", "rope", "alibi", "none"]
POSITION_WINDOWS = [64, 128, 256]  # the learned table (position/learned.yaml) must cover the longest
POSITION_EVAL = f"{RESULTS}/measure/position_extrapolation"


rule position_evaluate:
    input:
        # checkpoint.pt and config.yaml sit beside metrics.json, written by the same job
        metrics=lambda w: f"{run_dir('position/' + w.scheme, w.seed)}/metrics.json",
    output: f"{POSITION_EVAL}/{{scheme}}/seed{{seed}}.json"
    wildcard_constraints:
        scheme="|".join(POSITION_SCHEMES),
        seed=r"\d+",
    params:
        run_dir=lambda w: run_dir("position/" + w.scheme, w.seed),
        windows=" ".join(map(str, POSITION_WINDOWS)),
        code=module_code("attnlab.evaluate"),
    threads: 1
    resources: mem_mb=2000, runtime=10
    log: f"{POSITION_EVAL}/{{scheme}}/seed{{seed}}.log"
    shell:
        "{PYTHON} -m attnlab.evaluate {params.run_dir} --lengths {params.windows} --out {output}"
        " --threads {threads} > {log} 2>&1"


add_table("position_extrapolation",
          inputs={scheme: [f"{POSITION_EVAL}/{scheme}/seed{seed}.json" for seed in SEEDS]
                  for scheme in POSITION_SCHEMES})
