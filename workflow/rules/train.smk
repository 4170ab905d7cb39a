# One generic training rule: results/<profile>/runs/<family>/<run>/seed<k>/ (or a variant's folder). Its
# key is the composed config's hash (common.smk: train_step), so an edited YAML reruns exactly the runs
# whose config it changes.
# --lint 'mixed rules and functions': the run's Step lookups (key, inputs, outputs) stay beside its rule.


def train_step_at(w) -> Step:
    """The run a train job's output path names; a published folder never gets the variant's overrides."""
    step = train_step(w.run, int(w.seed), variant=w.home != RESULTS)
    if step.home != w.home:
        refuse(f"{w.home}/runs/{w.run}/seed{w.seed}: this run's folder is {step.home}/runs/...")
    return step


def train_command(run: str, seed, options: str, folder: str) -> str:
    """A training job's shell (rule train's and the seed groups'); {threads} is the job's."""
    return logged(f"{{PYTHON}} -m attnlab.train 'experiment={run}' profile={{PROFILE}} seed={seed} {options}"
                  f" train.threads={{threads}} 'hydra.run.dir={folder}'")


# gpu_slots: each training job holds one, so `--resources gpu_slots=N` lets N of them share one GPU at once
# (make reproduce-gpu); without it Snakemake does not limit them. gpu=0 is the cluster's request (README: GPU nodes).
TRAIN_RESOURCES = dict(mem_mb=4000, runtime=240, gpu=0, gpu_slots=1)


rule train:
    input:
        unpack(lambda w: train_step_at(w).rule_inputs()),
    output:
        **{name.split(".")[0]: f"{run_folder('{home}', '{run}', '{seed}')}/{name}" for name in RUN_FILES},  # as train_step's
    wildcard_constraints:
        home=HOME_PATTERN,
        run=r"[a-z0-9_]+/[a-z0-9_]+",
        seed=r"\d+",
    params:
        overrides=lambda w: " ".join(shlex.quote(o) for o in overrides_of(w.run)) if w.home != RESULTS else "",
        run_dir=lambda w: run_folder(w.home, w.run, w.seed),
    threads: config.get("train_threads", 1)
    resources:
        **TRAIN_RESOURCES,
    log: f"{run_folder('{home}', '{run}', '{seed}')}/train.log"
    conda: ENVIRONMENT
    shell:
        train_command("{wildcards.run}", "{wildcards.seed}", "{params.overrides}", "{params.run_dir}")


# --- seeds trained together: --config seed_batch=K (on a GPU) -----------------------------------------
# A published run's seeds that have no results yet, in groups of up to K consecutive seeds, each group
# one job that trains them folded into one model (train.seed_batch): the files rule train writes, per
# seed. Snakemake prefers a rule without wildcards to rule train for them. A seed with results is never
# in a group, so a batch never retrains a published seed. It pays on a GPU, not on a CPU
# (table runs_per_hour): pipeline.yaml keeps 1. winograd.smk groups the Winograd runs' seeds the same way.
def missing_groups(seeds: list[int], step) -> list[list[int]]:
    """The seeds whose metrics.json (step(seed).outputs[0]) is missing, in groups of 2..SEED_BATCH consecutive seeds."""
    missing = [seed for seed in seeds if SEED_BATCH > 1 and not Path(step(seed).outputs[0]).exists()]
    return [group for group in seed_groups(missing, SEED_BATCH) if len(group) > 1]


def table_run_seeds() -> dict[str, list[int]]:
    """{run: its published seeds} of every run a table reads (registered by then): a run no table reads,
    as a contradiction's hypothesis not run, gets no group."""
    seeds = {}
    for home, job in JOBS:
        if home == RESULTS and job.startswith("train/"):
            run, seed = job.removeprefix("train/").rsplit("/seed", 1)  # --lint 'absolute path': a job name's separator
            seeds.setdefault(run, []).append(int(seed))
    return {run: sorted(s) for run, s in sorted(seeds.items())}


def add_seed_groups() -> None:
    """Called once every table is registered (Snakefile): one rule per group of a read run's seeds."""
    for run, seeds in table_run_seeds().items():
        for group in missing_groups(seeds, lambda seed, run=run: train_step(run, seed)):
            add_seed_group(run, group)


def add_seed_group(_run: str, _group: list[int]) -> None:
    rule:
        # --lint 'absolute path': a run name's separator, made a rule name's underscore
        name: f"train_seeds_{_run.replace('/', '_')}_{_group[0]}_{_group[-1]}"
        input:
            unpack(lambda w: {
                "tokens": read_by_key(TOKENS_RECORD),
                "key_files": [read_by_key(train_step(_run, seed).key_file) for seed in _group]}),
        output:
            [path for seed in _group for path in train_step(_run, seed).outputs],
        threads: config.get("train_threads", 1)
        resources:
            **TRAIN_RESOURCES,
        log: f"{run_folder(RESULTS, _run, _group[0])}/train.log"
        conda: "environment.yml"  # relative to the Snakefile, which defines these rules (add_seed_groups)
        shell:
            train_command(_run, _group[0], f"train.seed_batch={len(_group)}", run_folder(RESULTS, _run, _group[0]))
