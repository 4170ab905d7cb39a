# Shared by every rule: the pipeline's options, run paths and hashes, the table registry, and the
# stamps that decide which jobs run.
# --lint 'mixed rules and functions': the shared functions live here, with rule key, which every job reads.
import functools
import hashlib
import json
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake_interface_executor_plugins.settings import DeploymentMethod

from attnlab.families import runs_of
from attnlab.plots import BUILDERS as FIGURE_BUILDERS
from attnlab.tables import BUILDERS as TABLE_BUILDERS, load_families
from attnlab.config import (CONFIG_DIR, ROOT, ConfigError, check_train, compose, config_hash, data_hash, experiments,
                            model_config, source_files)

# Every rule names the project's environment (conda: ENVIRONMENT); under --use-conda Snakemake builds it
# and each job runs its `python`, otherwise the interpreter running Snakemake (the project's .venv).
ENVIRONMENT = "../../environment.yml"  # relative to workflow/rules/, where every rule lives
PYTHON = "python" if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method else sys.executable

# --- the pipeline's options (--config name=value) ------------------------------------------------
OPTIONS = {
    "profile": "which profile to build: full (default), quick, smoke",
    "seeds": "seeds per trained table row (default: the profile's; rows given more by seeds_per_run keep theirs)",
    "seeds_per_run": "{profile: {run: seeds}}: rows that train more seeds (configs/pipeline.yaml)",
    "train_threads": "torch threads per training job",
    "override": "'<scope>: <hydra override> ...' reruns the runs in scope with those overrides",
}
_unknown = sorted(set(config) - set(OPTIONS))
if _unknown:
    raise WorkflowError(f"unknown --config option(s) {_unknown}; allowed: " +
                        "; ".join(f"{k} ({v})" for k, v in OPTIONS.items()))
PROFILES = sorted(p.stem for p in (CONFIG_DIR / "profile").glob("*.yaml"))
PROFILE = str(config.get("profile", "full"))
if PROFILE not in PROFILES:
    raise WorkflowError(f"unknown profile {PROFILE!r}; allowed: {PROFILES} (--config profile=...)")
PROFILE_CONFIG = compose([f"profile={PROFILE}"]).profile
try:
    SEEDS = list(range(int(config.get("seeds", PROFILE_CONFIG.seeds))))
    assert SEEDS
except (ValueError, AssertionError):
    raise WorkflowError(f"seeds={config.get('seeds')!r} must be a whole number >= 1")
RESULTS, FIGURES = f"results/{PROFILE}", f"figures/{PROFILE}"
CLAIMS_FILE = "configs/claims.yaml"  # the chapter's numbers: the ledger judges them, the figures draw them
EXPERIMENTS = experiments()
WINOGRAD_RUNS = sorted(p.stem for p in (CONFIG_DIR / "winograd").glob("[!_]*.yaml"))
# every trained run by its scope name: experiments as family/run, Winograd runs as winograd/<run>
RUN_NAMES = EXPERIMENTS + [f"winograd/{r}" for r in WINOGRAD_RUNS]


def in_scope(scope: str, run: str) -> bool:
    """`ladder/average` names one run, `ladder` a family, `all` every run."""
    return scope in ("all", run) or run.startswith(f"{scope}/")


def check_scope(scope: str, option: str) -> str:
    if not any(in_scope(scope, run) for run in RUN_NAMES):
        families = sorted({r.split("/")[0] for r in RUN_NAMES})
        raise WorkflowError(f"{option}: {scope!r} names no run; allowed: all, a family {families} or a run {RUN_NAMES}")
    return scope


def parse_overrides(value) -> list[tuple[str, list[str]]]:
    """override='ladder/average: train.lr=3e-3 train.steps=500' (Snakemake reads it as YAML: a
    mapping, one entry per scope)."""
    items = value.items() if isinstance(value, dict) else [str(value).partition(":")[::2]]
    parsed = []
    for scope, rest in items:
        if not str(scope).strip() or not str(rest or "").strip():
            raise WorkflowError(f"override={value!r}: expected '<scope>: <hydra override> ...', "
                                "e.g. override='ladder/average: train.lr=3e-3'")
        parsed.append((check_scope(str(scope).strip(), "override"), shlex.split(str(rest))))
    return parsed


OVERRIDES = parse_overrides(config["override"]) if "override" in config else []


def overrides_of(run: str) -> list[str]:
    """The command-line overrides a run gets from `override=`, in the order given."""
    return [o for scope, items in OVERRIDES for o in items if in_scope(scope, run)]


def digest(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def code_hash(*patterns: str) -> str:
    """Content hash of files (globs relative to the repository)."""
    h = hashlib.sha256()
    for path in sorted(p for pattern in patterns for p in Path(workflow.basedir).glob(pattern)):
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


# Every table and figure asks for the keys of the same few modules: each is computed once per
# parse (parsing the source for imports each time made reading the Snakefile take half a minute).
@functools.lru_cache(maxsize=None)
def module_code(*modules: str, files: tuple = ()) -> str:
    """code_hash of the source the modules run (attnlab.config.source_files) and of other files they read."""
    return code_hash(*sorted({str(p.relative_to(ROOT)) for m in modules for p in module_files(m)}), *files)


@functools.lru_cache(maxsize=None)
def module_files(module: str) -> frozenset:
    return frozenset(source_files(module))


# --- keys: what reruns a job ------------------------------------------------------------------------
# Every job has a key file, results/<profile>/stamps/<job>/<key>.key, committed with its outputs. The
# key covers what makes the outputs besides the files the job reads: a training run's is its composed
# config's hash (which covers its data; code changes do not retrain), a measurement's its settings and
# code, a table's, figure's, the ledger's or the report's its code and the keys of the jobs it reads
# from. A key that changes (an edited YAML, an override, an edited builder) names a file that does not
# exist yet, and Snakemake builds missing files:
# - runs, measurements and the data stages (rules with wildcards, or costly) read their key file, which
#   rule `key` writes: the job then reruns, as for any updated input;
# - tables, figures, the ledger and the report write theirs, and read those of the jobs they read
#   from: asked for as a target, such a job with a new key reruns, and first whatever it reads whose
#   key changed.
# The default target asks for every job's outputs and key file. The key is in a path because a path
# is what a clone keeps: file times and .snakemake/ records are not (profiles/default keeps Snakemake
# from reading those records; `make times` puts a clone's file times in order). Deleting an output
# reruns its job and what reads it; `snakemake -R <rule or file>` forces a job (README: What reruns
# a job).
STAMPS = f"{RESULTS}/stamps"


@dataclass(eq=False)
class Step:
    job: str                  # names its key's folder: train/ladder/average/seed0, table_ladder, ...
    own_key: str              # what makes the outputs, besides what the job reads
    outputs: list
    inputs: dict = field(default_factory=dict)  # name -> [paths]: what the job reads
    writes_key: bool = False  # a table, figure, the ledger or the report: it writes its key file

    @functools.cached_property
    def upstream(self) -> list:
        """The jobs whose outputs this one reads (asked once every job is registered)."""
        found = {id(STEPS[p]): STEPS[p] for paths in self.inputs.values() for p in paths if p in STEPS}
        return list(found.values())

    @functools.cached_property
    def key(self) -> str:
        return digest(self.own_key, [s.key for s in self.upstream]) if self.writes_key else self.own_key

    @property
    def key_file(self) -> str:
        return f"{STAMPS}/{self.job}/{self.key}.key"

    def rule_inputs(self) -> dict:
        """The rule's input: what the job reads, and its own key file or those of the jobs it reads from."""
        keys = sorted(s.key_file for s in self.upstream) if self.writes_key else [self.key_file]
        return {**self.inputs, "key_files": keys}


STEPS = {}  # output path -> Step
JOBS = {}   # job name -> Step


def register(step: Step) -> Step:
    for path in step.outputs:
        STEPS.setdefault(path, step)
    return JOBS.setdefault(step.job, step)


def logged(cmd: str) -> str:
    """A rule's shell: the command, its output in {log}, and its last line on the console if it fails.
    {PYTHON} (the interpreter running Snakemake: the project's environment) and {PROFILE} are filled
    in here, when the workflow is read; Snakemake fills in the rest."""
    cmd = cmd.replace("{PYTHON}", shlex.quote(PYTHON)).replace("{PROFILE}", PROFILE)
    return f"({cmd}) > {{log}} 2>&1 || {{{{ echo \"failed: $(tail -n 1 {{log}})\" >&2; exit 1; }}}}"


def logged_with_key(cmd: str) -> str:
    """logged(cmd), then the job's key file (rules give output.key and params.key)."""
    return logged(cmd) + "\nrm -f $(dirname {output.key})/*.key && echo {params.key} > {output.key}"


def current_key(job: str, key: str) -> str:
    """The key rule `key` writes: a key asked for by hand that is not the job's current one is refused."""
    current = JOBS[job].key if job in JOBS else "no such job"
    if key != current:
        raise WorkflowError(f"{job}: {key} is not its current key ({current})")
    return key


rule key:
    output: f"{STAMPS}/{{job}}/{{key}}.key"
    wildcard_constraints:
        # the jobs that read their key: runs, measurements, the data stages
        job=r"(train|winograd_train|winograd_split|measure_[a-z_]+)(/[a-z0-9_/]+)?|corpus|tokenizer|tokens",
        key=r"[0-9a-f]+",
    params:
        current=lambda w: current_key(w.job, w.key),
    resources: mem_mb=100, runtime=1
    log: f"{RESULTS}/logs/key/{{job}}/{{key}}.log"
    conda: ENVIRONMENT
    shell:
        # the job's earlier keys go: one key file per job, the one its outputs were made under
        "(rm -f $(dirname {output})/*.key && echo {params.current} > {output}) > {log} 2>&1"


# --- training runs --------------------------------------------------------------------------------
def run_dir(run: str, seed) -> str:
    return f"{RESULTS}/runs/{run}/seed{seed}"


@functools.cache
def train_step(run: str, seed: int) -> Step:
    """One training job: its key is the hash of the config `python -m attnlab.train experiment=run
    profile=... seed=... <overrides>` composes."""
    if run not in EXPERIMENTS:
        raise WorkflowError(f"unknown experiment {run!r}; known: {EXPERIMENTS}")
    try:
        cfg = compose([f"experiment={run}", f"profile={PROFILE}", f"seed={seed}", *overrides_of(run)])
        check_train(cfg)
        model_config(cfg)  # a bad override stops here, before any job runs
        key = config_hash(cfg)
    except ConfigError as e:
        raise WorkflowError(f"override for {run}: {e}")
    folder = run_dir(run, seed)
    return register(Step(f"train/{run}/seed{seed}", key, [f"{folder}/{name}" for name in RUN_FILES],
                         {"tokens": [TOKENS_RECORD]}))  # the token cache is rebuilt by a run that misses it


RUN_FILES = ("metrics.json", "curve.csv", "evals.csv", "config.yaml")


MORE_SEEDS = (config.get("seeds_per_run") or {}).get(PROFILE) or {}
if not all(run in EXPERIMENTS and isinstance(n, int) and n >= 1 for run, n in MORE_SEEDS.items()):
    raise WorkflowError(f"seeds_per_run.{PROFILE}={MORE_SEEDS!r}: expected {{experiment: whole number >= 1}}; "
                        f"experiments: {EXPERIMENTS}")


def seeds_of(run: str) -> list[int]:
    """The seeds a run trains: the pipeline's count, or more where seeds_per_run says so (rows whose
    claims need more seeds to be decided)."""
    return list(range(max(len(SEEDS), MORE_SEEDS.get(run, 0))))


def run_metrics(run: str) -> list[str]:
    """metrics.json of every seed of one experiment run (its curve.csv and evals.csv sit beside it)."""
    return [train_step(run, seed).outputs[0] for seed in seeds_of(run)]


# --- tables ---------------------------------------------------------------------------------------
# id -> {"inputs": {name: [paths]}, "figure_inputs": {name: [paths]}, "figure": bool, "category": str}
TABLES = {}
FAMILY_RULES = sorted(str(p) for p in Path(workflow.basedir, "workflow/rules").glob("*.smk")
                      if p.stem not in ("common", "data", "train", "tables", "report"))


load_families()  # every @table and @figure builder, so the registry knows which tables have a figure


def add_table(table_id, runs=None, inputs=None, figure_inputs=None, category="Tables"):
    """Register a table: `runs` maps row names to experiments (families/<family>.py declares them),
    `inputs` names other files. tables.smk turns each entry into a table rule, and a figure rule
    where the family registered a figure builder."""
    if table_id not in TABLE_BUILDERS:
        raise WorkflowError(f"table {table_id!r} has no builder (@table) in src/attnlab/families/")
    named = {name: run_metrics(run) for name, run in (runs or {}).items()}
    named.update({name: [p] if isinstance(p, str) else list(p) for name, p in (inputs or {}).items()})
    TABLES[table_id] = {"inputs": named, "figure": table_id in FIGURE_BUILDERS, "category": category,
                        "figure_inputs": {n: [p] if isinstance(p, str) else list(p) for n, p in (figure_inputs or {}).items()}}


def named_args(named: dict) -> str:
    """name=path arguments for the attnlab.tables / attnlab.plots command lines."""
    return " ".join(shlex.quote(f"{name}={path}") for name, paths in named.items() for path in paths)
