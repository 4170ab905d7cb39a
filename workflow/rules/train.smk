# Training runs: results/<profile>/runs/<family>/<run>/seed<k>/ and the Winograd probe's
# results/<profile>/measure/winograd/<version>/<model>/seed<k>/ (or a variant's folder; attnlab.layout). A run's
# key is its composed config's hash, so an edited YAML reruns exactly the runs whose config it changes.
# --lint 'mixed rules and functions': published_only and seed_group_rule serve these rules only.
from attnlab.config import winograd_versions
from attnlab.jobs import RUN_FILES, SPLIT_FILES, WINOGRAD_FILES
from attnlab.layout import run_folder

# gpu_slots: each training job holds one, so `--resources gpu_slots=N` lets N of them share one GPU at once
# (make reproduce-gpu); without it Snakemake does not limit them. gpu=0 is the cluster's request (README: GPU nodes).
TRAIN_RESOURCES = dict(mem_mb=4000, runtime=240, gpu=0, gpu_slots=1)
WINOGRAD_RESOURCES = dict(TRAIN_RESOURCES, mem_mb=2000, runtime=60)
RUN_FOLDER, WINOGRAD_FOLDER = run_folder("{home}", "{run}", "{seed}"), run_folder("{home}", "winograd/{version}_{model}", "{seed}")


def published_only(w, run: str) -> str:
    """A run's overrides: the variant's, never in a published folder."""
    return " ".join(shlex.quote(o) for o in J.overrides_of(run)) if w.home != RESULTS else ""


rule train:
    input: unpack(lambda w: J.train_step_at(w).rule_inputs())
    output: **{name.split(".")[0]: f"{RUN_FOLDER}/{name}" for name in RUN_FILES}
    wildcard_constraints: home=J.home_pattern, run=r"[a-z0-9_]+/[a-z0-9_]+", seed=r"\d+"
    params: overrides=lambda w: published_only(w, w.run), out=lambda w: run_folder(w.home, w.run, w.seed)
    threads: TRAIN_THREADS
    resources: **TRAIN_RESOURCES
    log: f"{RUN_FOLDER}/train.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.train 'experiment={wildcards.run}' profile={PROFILE} seed={wildcards.seed}"
               " {params.overrides} train.threads={threads} 'hydra.run.dir={params.out}'")


rule winograd_split:
    input: unpack(lambda w: J.split_step(w.version).rule_inputs())
    output: **{name: f"{J.winograd}/{{version}}/{path}" for name, path in SPLIT_FILES.items()}
    wildcard_constraints: version="|".join(winograd_versions())
    resources: mem_mb=1000, runtime=5
    log: f"{J.winograd}/{{version}}/split.log"
    conda: ENVIRONMENT
    shell: logged("{PYTHON} -m attnlab.winograd split {wildcards.version} --out $(dirname {output.split})")


rule winograd_train:
    input: unpack(lambda w: J.winograd_step_at(w).rule_inputs())
    output: **{name.split(".")[0]: f"{WINOGRAD_FOLDER}/{name}" for name in WINOGRAD_FILES}
    wildcard_constraints: home=J.home_pattern, version="|".join(winograd_versions()), model=r"[a-z0-9_]+", seed=r"\d+"
    params:
        overrides=lambda w: published_only(w, f"winograd/{w.version}_{w.model}"),
        split=lambda w: J.split_step(w.version).outputs[0],
    threads: TRAIN_THREADS
    resources: **WINOGRAD_RESOURCES
    log: f"{WINOGRAD_FOLDER}/train.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.winograd train {wildcards.version}_{wildcards.model} --split {params.split}"
               " --out $(dirname {output.metrics}) profile={PROFILE} seed={wildcards.seed} {params.overrides}"
               " train.threads={threads}")


# --- seeds trained together: --config seed_batch=K (on a GPU) -----------------------------------------
# A published run's seeds that have no results yet, in groups of up to K consecutive seeds, each group one job
# that trains them folded into one model (train.seed_batch): the files rule train writes, per seed. A group's
# outputs are several seeds' files, which no wildcard pattern names: one rule per group, and Snakemake prefers a
# rule without wildcards to rule train for them. A seed with results is never in a group, so a batch never
# retrains a published seed. What it buys: table runs_per_hour, per device and precision; pipeline.yaml keeps 1.
def seed_group_rule(name: str, steps: list, inputs: dict, command: str) -> None:
    rule:
        name: name
        input:
            unpack(lambda w: {name: read_by_key(path) for name, path in inputs.items()} |
                             {"key_files": [read_by_key(step.key_file) for step in steps]}),
        output: [path for step in steps for path in step.outputs]
        threads: TRAIN_THREADS
        resources:
            **(WINOGRAD_RESOURCES if steps[0].job.startswith("winograd") else TRAIN_RESOURCES),
        log: f"{Path(steps[0].outputs[0]).parent}/train.log"
        conda: ENVIRONMENT
        shell: logged(f"{command} train.seed_batch={len(steps)} train.threads={{threads}}")


for _run, _group in J.train_seed_groups():
    # --lint 'absolute path': a run name's separator, made a rule name's underscore
    seed_group_rule(f"train_seeds_{_run.replace('/', '_')}_{_group[0]}_{_group[-1]}",
                    [J.train_step(_run, seed) for seed in _group], {"tokens": J.tokens_record},
                    f"{{PYTHON}} -m attnlab.train 'experiment={_run}' profile={{PROFILE}} seed={_group[0]} "
                    f"'hydra.run.dir={run_folder(RESULTS, _run, _group[0])}'")
for _version, _model, _group in J.winograd_seed_groups():
    seed_group_rule(f"winograd_seeds_{_version}_{_model}_{_group[0]}_{_group[-1]}",
                    [J.winograd_step(_version, _model, seed) for seed in _group], {"split": J.split_step(_version).outputs[0]},
                    f"{{PYTHON}} -m attnlab.winograd train {_version}_{_model} --split {J.split_step(_version).outputs[0]} "
                    f"--out {run_folder(RESULTS, f'winograd/{_version}_{_model}', _group[0])} profile={{PROFILE}} seed={_group[0]}")
