# One generic training rule: results/<profile>/runs/<family>/<run>/seed<k>/ (or a variant's folder). Its
# key is the composed config's hash (common.smk: train_step), so an edited YAML reruns exactly the runs
# whose config it changes.
# --lint 'mixed rules and functions': the run's Step lookups (key, inputs, outputs) stay beside its rule.


def train_step_at(w) -> Step:
    """The run a train job's output path names; a published folder never gets the variant's overrides."""
    step = train_step(w.run, int(w.seed), variant=w.home != RESULTS)
    if step.home != w.home:
        raise WorkflowError(f"{w.home}/runs/{w.run}/seed{w.seed}: this run's folder is {step.home}/runs/...")
    return step


rule train:
    input:
        unpack(lambda w: train_step_at(w).rule_inputs()),
    output:
        **{name.split(".")[0]: f"{run_dir('{home}', '{run}', '{seed}')}/{name}" for name in RUN_FILES},  # as train_step's
    wildcard_constraints:
        home=HOME_PATTERN,
        run=r"[a-z0-9_]+/[a-z0-9_]+",
        seed=r"\d+",
    params:
        overrides=lambda w: " ".join(shlex.quote(o) for o in overrides_of(w.run)) if w.home != RESULTS else "",
        run_dir=lambda w: run_dir(w.home, w.run, w.seed),
    threads: config.get("train_threads", 1)
    resources:
        mem_mb=4000,
        runtime=240,
        gpu=0,
    log: f"{run_dir('{home}', '{run}', '{seed}')}/train.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.train 'experiment={wildcards.run}' profile={PROFILE} seed={wildcards.seed}"
                    " {params.overrides} train.threads={threads} 'hydra.run.dir={params.run_dir}'")
