# The Winograd probe (TABLES.md: winograd_category, winograd_role, winograd_attention,
# winograd_adjectives): its own sentences, split once per version, and short dedicated training
# runs scored at one position. Outputs under results/<profile>/measure/winograd/<version>/.
# Rows: src/attnlab/families/winograd.py.
# --lint 'mixed rules and functions': this family's Step functions (its jobs' keys, inputs, outputs) stay beside its rules.
from attnlab.families.contradictions import TRAINED
from attnlab.families.winograd import PROBED, VERSIONS
import importlib

# the probe's module imports its trainer (torch): read only when a language or config is composed afresh
WINOGRAD_MODULE = "attnlab.winograd"

WINOGRAD = f"{RESULTS}/measure/winograd"
# the split is drawn by this file's sentence code alone (the runs' training code does not re-split)
SPLIT_CODE = code_hash("src/attnlab/winograd.py")
WINOGRAD_FILES = ("metrics.json", "probe.json", "answers.csv", "config.yaml")


SPLIT_FILES = {"split": "split.json", "train": "train.txt", "held_out": "held_out.txt"}
# a run's folder (the published results' or, where an override changes the run or the seed is new, the
# variant's): filled in by its step, a pattern in the rule (attnlab.layout)
RUN_FOLDER = run_folder("{home}", "winograd/{version}_{model}", "{seed}")


@functools.cache
def split_step(version: str) -> Step:
    language = composed(f"language {version}", lambda: importlib.import_module(WINOGRAD_MODULE).language_hash(version))
    return register(Step(f"winograd_split/{version}", digest(language, SPLIT_CODE),
                         [f"{WINOGRAD}/{version}/{name}" for name in SPLIT_FILES.values()]))


def winograd_seeds(version: str, model: str, variant: bool = False) -> list[int]:
    """The held-out sets are small, so one seed is noisy: the profile's Winograd count, the pipeline's
    (a variant's seeds=) if larger, or more where seeds_per_run names the run (winograd/<version>_<model>)."""
    return list(range(max(PROFILE_CONFIG.winograd_seeds, len(seeds_of(f"winograd/{version}_{model}", variant)))))


@functools.cache
def winograd_config(run: str, overrides: tuple):
    """A Winograd run's config, composed once for all its seeds (attnlab.layout.seed_key)."""
    return importlib.import_module(WINOGRAD_MODULE).compose_run(run, [f"profile={PROFILE}", *overrides])


@functools.cache
def winograd_step(version: str, model: str, seed: int, variant: bool = False) -> Step:
    """One Winograd run: its key is the hash of its composed config (a variant's overrides included)."""
    run = f"{version}_{model}"
    overrides = overrides_of(f"winograd/{run}") if variant else []
    try:
        key = composed(digest("winograd", run, PROFILE, seed, overrides),
                       lambda: seed_key(winograd_config(run, tuple(overrides)), seed))
    except ConfigError as e:
        refuse(f"winograd run {run}: {e}")
    home = RESULTS if not overrides and seed in winograd_seeds(version, model) else VARIANT_DIR
    folder = run_folder(home, f"winograd/{run}", seed)
    return register(Step(run_job(f"winograd/{run}", seed), key, [f"{folder}/{n}" for n in WINOGRAD_FILES],
                         {"split": split_step(version).outputs[:1]}, home=home))


def winograd_step_at(w) -> Step:
    """The run a winograd_train job's output path names; a published folder never gets the variant's overrides."""
    step = winograd_step(w.version, w.model, int(w.seed), variant=w.home != RESULTS)
    if step.home != w.home:
        refuse(f"{RUN_FOLDER.format(**w)}: this run's folder is under {step.home}")
    return step


def winograd_runs(version: str, model: str, name: str = "metrics.json", variant: bool = False) -> list[str]:
    return [winograd_step(version, model, seed, variant).outputs[WINOGRAD_FILES.index(name)]
            for seed in winograd_seeds(version, model, variant)]


rule winograd_split:
    input:
        unpack(lambda w: split_step(w.version).rule_inputs())
    output:
        **{name: f"{WINOGRAD}/{{version}}/{file}" for name, file in SPLIT_FILES.items()},
    wildcard_constraints: version="category|role"
    params:
        out=lambda w: f"{WINOGRAD}/{w.version}",
    resources: mem_mb=1000, runtime=5
    log: f"{WINOGRAD}/{{version}}/split.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.winograd split {wildcards.version} --out {params.out}")


rule winograd_train:
    input:
        unpack(lambda w: winograd_step_at(w).rule_inputs())
    output:
        **{name.split(".")[0]: f"{RUN_FOLDER}/{name}" for name in WINOGRAD_FILES},
    wildcard_constraints: home=HOME_PATTERN, version="category|role", model=r"[a-z0-9_]+", seed=r"\d+"
    params:
        overrides=lambda w: " ".join(shlex.quote(o) for o in overrides_of(f"winograd/{w.version}_{w.model}"))
                            if w.home != RESULTS else "",
        split=lambda w: split_step(w.version).outputs[0],
        out=lambda w: RUN_FOLDER.format(**w),
    threads: config.get("train_threads", 1)
    resources: mem_mb=2000, runtime=60, gpu=0, gpu_slots=1  # as train.smk's TRAIN_RESOURCES
    log: f"{RUN_FOLDER}/train.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.winograd train {wildcards.version}_{wildcards.model} --split {params.split}"
               " --out {params.out} profile={PROFILE} seed={wildcards.seed} {params.overrides} train.threads={threads}")


# --- seeds trained together (--config seed_batch=K, as train.smk's): a Winograd run's published seeds without
# results, in groups of consecutive seeds, one job each (`winograd train ... train.seed_batch=K`)
def published_seeds(version: str, model: str) -> list[int]:
    """The seeds the pipeline trains of a Winograd run: its family table's, or (a run only a contradiction's
    hypothesis trains) the hypothesis's, as contradictions.smk asks for them. No other seed gets a job."""
    if any(m.name == model for m in VERSIONS[version]):
        return winograd_seeds(version, model)
    run = f"winograd/{version}_{model}"
    h = next((h for h in TRAINED if run in h.runs.values()), None)
    return seeds_of(run, base=h.seeds_under(PROFILE_CONFIG.winograd_seeds)) if h else []


for _version, _model, _group in ((v, m, group) for v, _, m in (run.partition("_") for run in WINOGRAD_RUNS)
                                 for group in missing_groups(published_seeds(v, m),
                                                             lambda seed, v=v, m=m: winograd_step(v, m, seed))):
    rule:
        name: f"winograd_seeds_{_version}_{_model}_{_group[0]}_{_group[-1]}"
        input:
            split=split_step(_version).outputs[0],
            key_files=[winograd_step(_version, _model, seed).key_file for seed in _group],
        output:
            [path for seed in _group for path in winograd_step(_version, _model, seed).outputs],
        threads: config.get("train_threads", 1)
        resources: mem_mb=2000, runtime=60, gpu=0, gpu_slots=1
        log: f"{run_folder(RESULTS, f'winograd/{_version}_{_model}', _group[0])}/train.log"
        conda: ENVIRONMENT
        shell:
            logged(f"{{PYTHON}} -m attnlab.winograd train {_version}_{_model} --split {split_step(_version).outputs[0]}"
                   f" --out {run_folder(RESULTS, f'winograd/{_version}_{_model}', _group[0])}"
                   f" profile={{PROFILE}} seed={_group[0]} train.seed_batch={len(_group)} train.threads={{threads}}")


for _version, _models in VERSIONS.items():
    add_table(f"winograd_{_version}", inputs=lambda variant, _version=_version, _models=_models:
              {m.name: winograd_runs(_version, m.name, variant=variant) for m in _models})
for _id in ("winograd_attention", "winograd_adjectives"):
    add_table(_id, inputs=lambda variant: {"probe": winograd_runs("role", PROBED.name, "probe.json", variant)})


# --- the two-block model's circuit, by intervention on held-out pairs (attnlab.measure.winograd_interventions):
# one job per seed of the published run, seeds 0..N-1 (N: the profile's measure.winograd_interventions.seeds).
# It reads the run's outputs and writes interventions.json beside them, under a key of its own: the run's key and
# the measurement's code. The training rule and its outputs are not touched, so nothing published retrains; the
# job takes the seed's kept weights (checkpoint.pt, ignored by git) or retrains the seed itself on the CPU (and
# keeps its weights there), and records how that model compares with the published answers and probe.
INTERVENTIONS = "interventions.json"
INTERVENTIONS_FOLDER = f"{RESULTS}/measure/winograd/role/{PROBED.name}/seed{{seed}}"


@functools.cache
def interventions_step(seed: int) -> Step:
    run = winograd_step("role", PROBED.name, seed)
    return register(Step(f"measure_winograd_interventions/role/{PROBED.name}/seed{seed}",
                         digest(measurement_code("attnlab.measure.winograd_interventions"), run.key),
                         [f"{INTERVENTIONS_FOLDER.format(seed=seed)}/{INTERVENTIONS}"],
                         {"run": run.outputs, "split": split_step("role").outputs[:1]}))


def interventions() -> list[str]:
    return [interventions_step(seed).outputs[0]
            for seed in range(PROFILE_CONFIG.measure.winograd_interventions.seeds)]


rule measure_winograd_interventions:
    input:
        unpack(lambda w: interventions_step(int(w.seed)).rule_inputs())
    output:
        result=f"{INTERVENTIONS_FOLDER}/{INTERVENTIONS}",
    wildcard_constraints: seed=r"\d+"
    params:
        run=lambda w: INTERVENTIONS_FOLDER.format(seed=w.seed),
        split=split_step("role").outputs[0],
    threads: 1
    resources: mem_mb=2000, runtime=30
    log: f"{INTERVENTIONS_FOLDER}/interventions.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.measure.winograd_interventions --run {params.run} --split {params.split}"
               " --out {output.result}")


for _id in ("winograd_heads", "winograd_patching", "winograd_circuits"):
    add_table(_id, inputs=lambda variant: {"interventions": interventions()})
