# Shared by every rule: the pipeline's options (attnlab.options), the run layout (attnlab.layout), the jobs'
# keys (attnlab.steps: what reruns a job), the table registry. What needs Snakemake's `workflow` object stays
# here: the interpreter the rules run and how a costly job reads its inputs.
# --lint 'mixed rules and functions': the shared functions live here, with rule key, which every job reads.
import functools
import re
import shlex
import sys
from pathlib import Path

from omegaconf import OmegaConf
from snakemake_interface_executor_plugins.settings import DeploymentMethod

from attnlab import options, steps
from attnlab.config import (CONFIG_DIR, ConfigError, check_train, compose, config_hash, data_hash, experiments,
                            model_config)
from attnlab.layout import run_folder, run_job, seed_groups, seed_key
from attnlab.plots import BUILDERS as FIGURE_BUILDERS
from attnlab.steps import code_hash, digest, refuse
from attnlab.tables import BUILDERS as TABLE_BUILDERS, RUNS as TABLE_RUNS, load_families

# Every rule names the project's environment (conda: ENVIRONMENT); under --use-conda Snakemake builds it
# and each job runs its `python`, otherwise the interpreter running Snakemake (the project's .venv).
ENVIRONMENT = "../../environment.yml"  # relative to workflow/rules/, where every rule lives
PYTHON = "python" if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method else sys.executable

composed = steps.Composed()
module_code, measurement_code = composed.module_code, composed.measurement_code

# --- the pipeline's options (--config name=value) ------------------------------------------------
options.check_names(config)
PROFILES = sorted(p.stem for p in (CONFIG_DIR / "profile").glob("*.yaml"))
PROFILE = options.profile_of(config, PROFILES)
PROFILE_CONFIG = OmegaConf.create(composed(f"profile {PROFILE}",
                                           lambda: OmegaConf.to_container(compose([f"profile={PROFILE}"]).profile)))
SEEDS = options.seeds_of(config, PROFILE_CONFIG.seeds)
RESULTS, FIGURES = f"results/{PROFILE}", f"figures/{PROFILE}"
CLAIMS_FILE = "configs/claims.yaml"  # the chapter's numbers: the ledger judges them, the figures draw them
EXPERIMENTS = experiments()
WINOGRAD_RUNS = sorted(p.stem for p in (CONFIG_DIR / "winograd").glob("[!_]*.yaml"))
# every trained run by its scope name: experiments as family/run, Winograd runs as winograd/<run>
RUN_NAMES = EXPERIMENTS + [f"winograd/{r}" for r in WINOGRAD_RUNS]
OVERRIDES = options.parse_overrides(config["override"], RUN_NAMES) if "override" in config else []
MORE_SEEDS = options.more_seeds(config, PROFILE, RUN_NAMES)
SEED_BATCH = options.seed_batch_of(config)


def overrides_of(run: str) -> list[str]:
    return options.overrides_of(OVERRIDES, run)


# A variant (override= or seeds=, attnlab.options) is written under results/<p>/variants/<name>/.
VARIANT_LABEL = options.variant_label(OVERRIDES, len(SEEDS), PROFILE_CONFIG.seeds)
VARIANT = options.variant_name(VARIANT_LABEL) if VARIANT_LABEL else None
VARIANT_DIR = f"{RESULTS}/variants/{VARIANT}" if VARIANT else None
HOMES = [RESULTS] + ([VARIANT_DIR] if VARIANT else [])
HOME_PATTERN = "|".join(re.escape(h) for h in HOMES)  # a rule's {home}: the published folder or the variant's


# --- keys: what reruns a job (attnlab.steps) -------------------------------------------------------
# A clone gives every file the time of its checkout, in path order, so file times say nothing about what
# was built from what. A costly job's inputs are therefore ancient() to Snakemake: their times never rerun
# it; a missing output or input, a new key (a missing key file) and a forced upstream job still do. Forced
# (-R, -F, --forcerun) is read here because Snakemake does not pass a forced job on through an ancient input.
# Called from input functions: Snakemake knows what is forced once the workflow is read.
def read_by_key(path: str):
    forced = workflow.dag_settings.forcerun
    return path if workflow.dag_settings.forceall or REGISTRY.producer(path) in forced or path in forced else ancient(path)


REGISTRY = steps.Registry(RESULTS, read_by_key)
Step = functools.partial(steps.Step, home=RESULTS, registry=REGISTRY)
register = REGISTRY.register
STEPS, JOBS = REGISTRY.by_output, REGISTRY.jobs


def keep_composed() -> None:
    composed.keep()


def why_jobs_run() -> None:
    steps.why_jobs_run(REGISTRY, PROFILE, VARIANT_LABEL)


def logged(cmd: str) -> str:
    """A rule's shell: the command, its output in {log}, and its last line on the console if it fails.
    {PYTHON} (the interpreter running Snakemake: the project's environment) and {PROFILE} are filled
    in here, when the workflow is read; Snakemake fills in the rest."""
    cmd = cmd.replace("{PYTHON}", shlex.quote(PYTHON)).replace("{PROFILE}", PROFILE)
    return f"({cmd}) > {{log}} 2>&1 || {{{{ echo \"failed: $(tail -n 1 {{log}})\" >&2; exit 1; }}}}"


def logged_with_key(cmd: str) -> str:
    """logged(cmd), then the job's key file (rules give output.key and params.key)."""
    return logged(cmd) + "\nrm -f $(dirname {output.key})/*.key && echo {params.key} > {output.key}"


rule key:
    output: "{home}/stamps/{job}/{key}.key"
    wildcard_constraints:
        home=HOME_PATTERN,
        # the jobs that read their key: runs, measurements, the data stages
        job=r"(train|winograd_train|winograd_split|measure_[a-z_]+)(/[a-z0-9_/]+)?|corpus|tokenizer|tokens",
        key=r"[0-9a-f]+",
    params:
        current=lambda w: REGISTRY.current_key(w.home, w.job, w.key),
    resources: mem_mb=100, runtime=1
    log: "{home}/logs/key/{job}/{key}.log"
    conda: ENVIRONMENT
    shell:
        # the job's earlier keys go: one key file per job, the one its outputs were made under
        "(rm -f $(dirname {output})/*.key && echo {params.current} > {output}) > {log} 2>&1"


# --- training runs: a seed's folder and key (attnlab.layout), in the published results or, where an override
# changes the run or the seed is one the published results do not train, the variant's folder.
RUN_FILES = ("metrics.json", "curve.csv", "evals.csv", "config.yaml")


@functools.cache
def run_config(run: str, overrides: tuple):
    """The config `python -m attnlab.train experiment=run profile=... <overrides>` composes, once it
    passed the checks every run makes (composed once per run: a seed's is it with its seed set)."""
    cfg = compose([f"experiment={run}", f"profile={PROFILE}", *overrides])
    check_train(cfg)
    model_config(cfg)  # a bad override stops here, before any job runs
    return cfg


@functools.cache
def train_step(run: str, seed: int, variant: bool = False) -> Step:
    """One training job, as the published results train it or (variant) with override= applied."""
    if run not in EXPERIMENTS:
        refuse(f"unknown experiment {run!r}; known: {EXPERIMENTS}")
    overrides = overrides_of(run) if variant else []
    home = RESULTS if not overrides and seed < len(seeds_of(run)) else VARIANT_DIR
    try:
        key = composed(digest("train", run, PROFILE, seed, overrides),
                       lambda: seed_key(run_config(run, tuple(overrides)), seed))
    except ConfigError as e:
        refuse(f"override for {run}: {e}")
    folder = run_folder(home, run, seed)
    # the token cache is rebuilt by a run that misses it; the run's key holds the data config, so the
    # record's time is no reason to retrain
    return register(Step(f"train/{run}/seed{seed}", key, [f"{folder}/{name}" for name in RUN_FILES],
                         {"tokens": [TOKENS_RECORD]}, home=home))


def seeds_of(run: str, variant: bool = False, base: int | None = None) -> list[int]:
    """The seeds a run trains: `base` (by default the profile's count; a variant's: seeds=), or more where
    seeds_per_run says so (rows whose claims need more seeds to be decided, a contradiction's hypothesis
    runs whose finding does)."""
    if base is None:
        base = len(SEEDS) if variant else PROFILE_CONFIG.seeds
    return list(range(max(base, MORE_SEEDS.get(run, 0))))


def run_metrics(run: str, variant: bool = False) -> list[str]:
    """metrics.json of every seed of one experiment run (its curve.csv and evals.csv sit beside it)."""
    return [train_step(run, seed, variant).outputs[0] for seed in seeds_of(run, variant)]


# --- tables ---------------------------------------------------------------------------------------
# id -> {"inputs": {name: [paths]}, "variant_inputs": the variant's where they differ (else None),
#        "figure_inputs": {name: [paths]}, "figure": bool, "category": str}
TABLES = {}
FAMILY_RULES = sorted(str(p) for p in Path(workflow.basedir, "workflow/rules").glob("*.smk")
                      if p.stem not in ("common", "data", "train", "contradictions", "tables", "report", "targets"))


load_families()  # every @table and @figure builder, so the registry knows which tables have a figure


def add_table(table_id, inputs=None, figure_inputs=None, category="Tables", code_files=()):
    """Register a table: the runs its @table declares (row name -> experiment), `inputs` other files (for
    runs a family lays out itself, a function of `variant` that names them), `code_files` what else the
    builder reads (part of its key). tables.smk registers a table that declares only runs, and turns each
    entry into a table rule, and a figure rule where the family registered a figure builder; a variant's,
    where its inputs differ from the published table's."""
    if table_id not in TABLE_BUILDERS:
        refuse(f"table {table_id!r} has no builder (@table) in src/attnlab/families/")
    if not Path(workflow.basedir, "workflow/report", f"{table_id}.rst").is_file():
        refuse(f"table {table_id!r} has no caption: write workflow/report/{table_id}.rst")
    runs = TABLE_RUNS.get(table_id)

    def named(variant: bool) -> dict:
        found = {name: run_metrics(run, variant) for name, run in (runs or {}).items()}
        for name, paths in (inputs(variant) if callable(inputs) else inputs or {}).items():
            found[name] = [paths] if isinstance(paths, str) else list(paths)
        return found

    published = named(False)
    in_variant = named(True) if VARIANT else published
    TABLES[table_id] = {"inputs": published, "variant_inputs": in_variant if in_variant != published else None,
                        "figure": table_id in FIGURE_BUILDERS, "category": category, "code_files": tuple(code_files),
                        "figure_inputs": {n: [p] if isinstance(p, str) else list(p) for n, p in (figure_inputs or {}).items()}}


def add_declared_tables() -> None:
    """After the families' rule files: a table whose @table declares its runs and reads nothing else
    needs no line in a rule file; a builder nothing registers is an error, not a table that never builds."""
    for table_id in sorted(set(TABLE_RUNS) - set(TABLES)):
        add_table(table_id)
    undeclared = sorted(set(TABLE_BUILDERS) - set(TABLES) - {"pipeline_time", "contradictions", "cross_device"})  # registered later
    if undeclared:
        refuse(f"table(s) {undeclared} have a builder but no inputs: declare runs= in @table, or add_table(...) "
               "in workflow/rules/<family>.smk")


def named_args(named: dict) -> str:
    """name=path arguments for the attnlab.tables / attnlab.plots command lines."""
    return " ".join(shlex.quote(f"{name}={path}") for name, paths in named.items() for path in paths)
