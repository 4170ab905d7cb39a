# Shared by every rule: the pipeline's options, run paths and hashes, the table registry, and the
# stamps that decide which jobs run.
# --lint 'mixed rules and functions': the shared functions live here, with rule key, which every job reads.
import copy
import difflib
import functools
import hashlib
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

import yaml
from omegaconf import OmegaConf
from snakemake_interface_executor_plugins.settings import DeploymentMethod

from attnlab.plots import BUILDERS as FIGURE_BUILDERS
from attnlab.tables import BUILDERS as TABLE_BUILDERS, RUNS as TABLE_RUNS, load_families
from attnlab.config import (CONFIG_DIR, ROOT, ConfigError, check_train, compose, config_hash, data_hash, experiments,
                            model_config, provenance, source_files, NOT_HASHED)

# Every rule names the project's environment (conda: ENVIRONMENT); under --use-conda Snakemake builds it
# and each job runs its `python`, otherwise the interpreter running Snakemake (the project's .venv).
ENVIRONMENT = "../../environment.yml"  # relative to workflow/rules/, where every rule lives
PYTHON = "python" if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method else sys.executable


def refuse(message: str):
    """Stop with one line of ours naming what is wrong and what is allowed: Snakemake prints a
    WorkflowError with its frames, a SystemExit as it is."""
    raise SystemExit(f"error: {message}")


def digest(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def code_hash(*patterns: str) -> str:
    """Content hash of files (globs relative to the repository)."""
    h = hashlib.sha256()
    for path in sorted(p for pattern in patterns for p in Path(workflow.basedir).glob(pattern)):
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


# Composing a config with Hydra takes ~0.3 s, and the workflow needs every run's key on every call: a
# key once composed (and the files each module imports) is kept in .snakemake/attnlab/composed.json
# under a hash of every config and source file, so an edit of any of them composes afresh. The last
# few such states are kept, so an edit undone (a config tried and put back) composes nothing again.
# A config that fails its checks is never kept: its error shows on every call.
COMPOSED_FILE = Path(workflow.basedir, ".snakemake/attnlab/composed.json")
COMPOSE_INPUTS = code_hash("configs/**/*.yaml", "src/attnlab/**/*.py")
COMPOSED_STATES = 4


def read_composed_states() -> dict:
    """{hash of the configs and sources: what was composed from them}, oldest first."""
    try:
        states = json.loads(COMPOSED_FILE.read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in states.items() if isinstance(v, dict)} if isinstance(states, dict) else {}


STATES = read_composed_states()
COMPOSED = dict(STATES.get(COMPOSE_INPUTS, {}))
COMPOSED_BEFORE = dict(COMPOSED)


def composed(what: str, compute):
    """compute() (a composed config's key or settings), or what it gave when these files were last read."""
    if what not in COMPOSED:
        COMPOSED[what] = compute()
    return COMPOSED[what]


def keep_composed() -> None:
    """Called once the workflow is read: keeps what was composed afresh for the next call, this state
    newest, the oldest beyond COMPOSED_STATES dropped."""
    if COMPOSED != COMPOSED_BEFORE:
        STATES.pop(COMPOSE_INPUTS, None)
        STATES[COMPOSE_INPUTS] = dict(sorted(COMPOSED.items()))
        kept = dict(list(STATES.items())[-COMPOSED_STATES:])
        COMPOSED_FILE.parent.mkdir(parents=True, exist_ok=True)
        tmp = COMPOSED_FILE.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(kept))
        tmp.replace(COMPOSED_FILE)


# Every table and figure asks for the keys of the same few modules: each is computed once per parse.
@functools.lru_cache(maxsize=None)
def module_code(*modules: str, files: tuple = ()) -> str:
    """code_hash of the source the modules run (attnlab.config.source_files) and of other files they read."""
    return code_hash(*sorted({p for m in modules for p in module_files(m)}), *files)


def measurement_code(module: str, files: tuple = ()) -> str:
    """A measurement's code: the files of attnlab/measure/ its module runs, and other files it reads. The
    model and training code it calls are left out, as a run's key leaves them out: an edit there must
    not silently invalidate hours of published measurements (force one: -R measure_<name>)."""
    return code_hash(*[p for p in module_files(module) if p.startswith("src/attnlab/measure/")], *files)


def module_files(module: str) -> list[str]:
    """The files a module runs, relative to the repository (composed.json keeps them: reading the
    imports of every module took seconds)."""
    return composed(f"imports {module}", lambda: sorted(str(p.relative_to(ROOT)) for p in source_files(module)))


# --- the pipeline's options (--config name=value) ------------------------------------------------
OPTIONS = {
    "profile": "which profile to build: full (default), quick, smoke",
    "seeds": "seeds per trained table row (default: the profile's; rows given more by seeds_per_run keep theirs)",
    "seeds_per_run": "{profile: {run: seeds}}: rows that train more seeds (configs/pipeline.yaml)",
    "train_threads": "torch threads per training job",
    "seed_batch": "seeds without results trained together, up to this many per job (train.seed_batch; pays on a GPU)",
    "override": "'<scope>: <hydra override> ...' reruns the runs in scope with those overrides",
}
_unknown = sorted(set(config) - set(OPTIONS))
if _unknown:
    refuse(f"unknown --config option(s) {_unknown}; allowed: " +
                        "; ".join(f"{k} ({v})" for k, v in OPTIONS.items()))
PROFILES = sorted(p.stem for p in (CONFIG_DIR / "profile").glob("*.yaml"))
PROFILE = str(config.get("profile", "full"))
if PROFILE not in PROFILES:
    refuse(f"unknown profile {PROFILE!r}; allowed: {PROFILES} (--config profile=...)")
PROFILE_CONFIG = OmegaConf.create(composed(f"profile {PROFILE}",
                                           lambda: OmegaConf.to_container(compose([f"profile={PROFILE}"]).profile)))
try:
    SEEDS = list(range(int(config.get("seeds", PROFILE_CONFIG.seeds))))
    assert SEEDS
except (ValueError, AssertionError):
    refuse(f"seeds={config.get('seeds')!r} must be a whole number >= 1")
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
        near = difflib.get_close_matches(scope, ["all", *families, *RUN_NAMES], n=1)
        refuse(f"{option}: {scope!r} names no run{f'; did you mean {near[0]!r}?' if near else ''} "
               f"Allowed: all, a family {families} or a run {RUN_NAMES}")
    return scope


def parse_overrides(value) -> list[tuple[str, list[str]]]:
    """override='ladder/average: train.lr=3e-3 train.steps=500' (Snakemake reads it as YAML: a
    mapping, one entry per scope)."""
    items = value.items() if isinstance(value, dict) else [str(value).partition(":")[::2]]
    parsed = []
    for scope, rest in items:
        if not str(scope).strip() or not str(rest or "").strip():
            refuse(f"override={value!r}: expected '<scope>: <hydra override> ...', e.g. "
                   "'override=ladder/average: train.lr=3e-3' (quoted whole: an unquoted word after the scope "
                   "reaches Snakemake as a --config entry of its own)")
        given = shlex.split(str(rest))
        if any(o.split("=")[0].lstrip("+~") == "seed" for o in given):
            refuse(f"override={value!r}: a run's seeds are not overridden; choose them with seeds=N")
        parsed.append((check_scope(str(scope).strip(), "override"), given))
    return parsed


OVERRIDES = parse_overrides(config["override"]) if "override" in config else []


def overrides_of(run: str) -> list[str]:
    """The command-line overrides a run gets from `override=`, in the order given."""
    return [o for scope, items in OVERRIDES for o in items if in_scope(scope, run)]


# --- variants: an ablation beside the published results ------------------------------------------
# override= or a seeds= other than the profile's make a variant. The runs it changes, and every table,
# figure, ledger and report built from them, are written under results/<p>/variants/<name>/ (ignored
# by git); the published results are read, never written. A plain run does not see a variant; deleting
# its folder removes it. The name is readable from the options that made it.
def variant_label() -> str:
    parts = [f"{scope}: {' '.join(items)}" for scope, items in OVERRIDES]
    if len(SEEDS) != PROFILE_CONFIG.seeds:
        parts.append(f"seeds={len(SEEDS)}")
    return "; ".join(parts)


def variant_name(label: str) -> str:
    # Hydra reads the run's folder from its command line: no '=' or other character its grammar treats apart
    # (--lint 'absolute path' below: "/" is the character replaced, not a path)
    name = re.sub(r"[^A-Za-z0-9._+-]+", "_", label.replace("/", "-").replace(": ", "_").replace("; ", "__")
                  .replace("=", "-"))
    return name if len(name) <= 80 else f"{name[:70]}-{digest(label)[:8]}"


VARIANT_LABEL = variant_label()
VARIANT = variant_name(VARIANT_LABEL) if VARIANT_LABEL else None
VARIANT_DIR = f"{RESULTS}/variants/{VARIANT}" if VARIANT else None
HOMES = [RESULTS] + ([VARIANT_DIR] if VARIANT else [])
HOME_PATTERN = "|".join(re.escape(h) for h in HOMES)  # a rule's {home}: the published folder or the variant's


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
# from reading those records; costly jobs read by key alone, read_by_key). Deleting an output
# reruns its job and what reads it; `snakemake -R <rule or file>` forces a job (README: What reruns
# a job).
@dataclass(eq=False)
class Step:
    job: str                  # names its key's folder: train/ladder/average/seed0, table_ladder, ...
    own_key: str              # what makes the outputs, besides what the job reads
    outputs: list
    inputs: dict = field(default_factory=dict)  # name -> [paths]: what the job reads
    writes_key: bool = False  # a table, figure, the ledger or the report: it writes its key file
    home: str = RESULTS       # where its key file lives: the published results, or the variant's folder

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
        return f"{self.home}/stamps/{self.job}/{self.key}.key"

    def rule_inputs(self) -> dict:
        """The rule's input: what the job reads, and its own key file or those of the jobs it reads from.
        A job that reads its own key (a run, a measurement, a data stage, the Winograd split: hours of
        work, or what every run reads) reads everything by key alone (read_by_key)."""
        if self.writes_key:  # a key file's name is its content: its time says nothing
            for path in (out for p in chain(*self.inputs.values()) for out in (STEPS[p].outputs if p in STEPS else [p])):
                check_readable(path)
            return {**self.inputs, "key_files": [read_by_key(s.key_file) for s in sorted(self.upstream, key=lambda s: s.key_file)]}
        return {name: [read_by_key(p) for p in paths] for name, paths in {**self.inputs, "key_files": [self.key_file]}.items()}


# A damaged result (a truncated or hand-edited file) stops the plan, naming the file, before any job
# starts: Snakemake deletes the outputs of a job it runs, and a job that failed on such a file would
# take its committed table with it. What a table, figure or the ledger reads is checked once per call:
# JSON parses, a text file ends with its last line's newline (every writer here writes whole lines,
# through a temporary file renamed into place), and a run's curve.csv (one row per step) ends at the step
# its metrics.json records (steps_done): a file cut at a line boundary is whole lines, but short. evals.csv is
# not held to it: a run resumed or diverged evaluates at other steps.
CHECKED = set()
RUN_LOGS = ("curve.csv",)  # a run's files with one row per step, step first


def last_step(path: str) -> int | None:
    """The step on a run log's last line (None if it has no step there)."""
    with open(path, "rb") as f:
        f.seek(max(0, f.seek(0, os.SEEK_END) - 4096))
        field = f.read().splitlines()[-1].split(b",")[0]
    return int(field) if field.isdigit() else None


def check_readable(path: str) -> None:
    if path in CHECKED or not os.path.isfile(path):
        return
    CHECKED.add(path)
    try:
        if path.endswith(".json"):
            json.loads(Path(path).read_text())
        elif path.endswith((".csv", ".yaml", ".txt", ".md")):
            with open(path, "rb") as f:
                if f.seek(0, os.SEEK_END) == 0 or (f.seek(-1, os.SEEK_END), f.read(1))[1] != b"\n":
                    raise ValueError("it ends in the middle of a line")
        metrics = Path(path).with_name("metrics.json")
        if Path(path).name in RUN_LOGS and metrics.is_file():
            check_readable(str(metrics))
            steps = json.loads(metrics.read_text()).get("steps_done")
            if steps is not None and last_step(path) != steps:
                raise ValueError(f"it ends at step {last_step(path)}; its run's metrics.json records {steps} steps")
    except (ValueError, UnicodeDecodeError) as e:
        refuse(f"{path} is damaged ({str(e).splitlines()[0]}): restore the published file with "
               f"`git checkout -- {path}`, or delete it to rebuild it")


# A clone gives every file the time of its checkout, in path order, so file times say nothing about what
# was built from what. A costly job's inputs are therefore ancient() to Snakemake: their times never rerun
# it; a missing output or input, a new key (a missing key file) and a forced upstream job still do. Forced
# (-R, -F, --forcerun) is read here because Snakemake does not pass a forced job on through an ancient input.
# Called from input functions: Snakemake knows what is forced once the workflow is read.
def read_by_key(path: str):
    # --lint 'absolute path': a folder name looked for inside a path, and a job name's separator
    producer = "key" if "/stamps/" in path else STEPS[path].job.split("/")[0] if path in STEPS else None
    forced = workflow.dag_settings.forcerun
    return path if workflow.dag_settings.forceall or producer in forced or path in forced else ancient(path)


STEPS = {}  # output path -> Step
JOBS = {}   # (home, job name) -> Step


def register(step: Step) -> Step:
    for path in step.outputs:
        STEPS.setdefault(path, step)
    return JOBS.setdefault((step.home, step.job), step)


def logged(cmd: str) -> str:
    """A rule's shell: the command, its output in {log}, and its last line on the console if it fails.
    {PYTHON} (the interpreter running Snakemake: the project's environment) and {PROFILE} are filled
    in here, when the workflow is read; Snakemake fills in the rest."""
    cmd = cmd.replace("{PYTHON}", shlex.quote(PYTHON)).replace("{PROFILE}", PROFILE)
    return f"({cmd}) > {{log}} 2>&1 || {{{{ echo \"failed: $(tail -n 1 {{log}})\" >&2; exit 1; }}}}"


def logged_with_key(cmd: str) -> str:
    """logged(cmd), then the job's key file (rules give output.key and params.key)."""
    return logged(cmd) + "\nrm -f $(dirname {output.key})/*.key && echo {params.key} > {output.key}"


def current_key(home: str, job: str, key: str) -> str:
    """The key rule `key` writes: a key asked for by hand that is not the job's current one is refused."""
    current = JOBS[home, job].key if (home, job) in JOBS else "no such job"
    if key != current:
        refuse(f"{home}/{job}: {key} is not its current key ({current})")
    return key


rule key:
    output: "{home}/stamps/{job}/{key}.key"
    wildcard_constraints:
        home=HOME_PATTERN,
        # the jobs that read their key: runs, measurements, the data stages
        job=r"(train|winograd_train|winograd_split|measure_[a-z_]+)(/[a-z0-9_/]+)?|corpus|tokenizer|tokens",
        key=r"[0-9a-f]+",
    params:
        current=lambda w: current_key(w.home, w.job, w.key),
    resources: mem_mb=100, runtime=1
    log: "{home}/logs/key/{job}/{key}.log"
    conda: ENVIRONMENT
    shell:
        # the job's earlier keys go: one key file per job, the one its outputs were made under
        "(rm -f $(dirname {output})/*.key && echo {params.current} > {output}) > {log} 2>&1"


# --- training runs --------------------------------------------------------------------------------
# A run's folder: results/<p>/runs/<family>/<run>/seed<k>/, or the variant's when an override changes
# the run or the seed is one the published results do not train.
def run_dir(home: str, run: str, seed) -> str:
    return f"{home}/runs/{run}/seed{seed}"


# Composing takes ~0.2 s and the full profile has hundreds of seeds: each run is composed once and a
# seed's config is that one with its seed set. The configs use the seed as a value only (no group or
# interpolation reads it), so the keys equal composing with seed=k, as a fresh clone's check of every
# published key shows (tests/test_fresh_clone.py).
def seeded(cfg, seed: int):
    cfg = copy.deepcopy(cfg)
    cfg.seed = seed
    return cfg


@functools.cache
def run_config(run: str, overrides: tuple):
    """The config `python -m attnlab.train experiment=run profile=... <overrides>` composes, once it
    passed the checks every run makes."""
    cfg = compose([f"experiment={run}", f"profile={PROFILE}", *overrides])
    check_train(cfg)
    model_config(cfg)  # a bad override stops here, before any job runs
    return cfg


def run_key(run: str, seed: int, overrides: list) -> str:
    """The hash of the config `python -m attnlab.train experiment=run profile=... seed=... <overrides>` composes."""
    try:
        return composed(digest("train", run, PROFILE, seed, overrides),
                        lambda: config_hash(seeded(run_config(run, tuple(overrides)), seed)))
    except ConfigError as e:
        refuse(f"override for {run}: {e}")


@functools.cache
def train_step(run: str, seed: int, variant: bool = False) -> Step:
    """One training job, as the published results train it or (variant) with override= applied."""
    if run not in EXPERIMENTS:
        refuse(f"unknown experiment {run!r}; known: {EXPERIMENTS}")
    overrides = overrides_of(run) if variant else []
    home = RESULTS if not overrides and seed < len(seeds_of(run)) else VARIANT_DIR
    folder = run_dir(home, run, seed)
    return register(Step(f"train/{run}/seed{seed}", run_key(run, seed, overrides),
                         [f"{folder}/{name}" for name in RUN_FILES],
                         # the token cache is rebuilt by a run that misses it; the run's key holds the data
                         # config, so the record's time is no reason to retrain
                         {"tokens": [TOKENS_RECORD]},
                         home=home))


RUN_FILES = ("metrics.json", "curve.csv", "evals.csv", "config.yaml")


MORE_SEEDS = (config.get("seeds_per_run") or {}).get(PROFILE) or {}
if not all(run in RUN_NAMES and str(n).isdigit() and int(n) >= 1 for run, n in MORE_SEEDS.items()):
    refuse(f"seeds_per_run.{PROFILE}={MORE_SEEDS!r}: expected {{run: whole number >= 1}}; "
                        f"runs: {RUN_NAMES}")
MORE_SEEDS = {run: int(n) for run, n in MORE_SEEDS.items()}  # --config gives numbers as text


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


# --- why a job runs -------------------------------------------------------------------------------
def flat(tree: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in tree.items():
        out.update(flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out


def config_change(step: Step) -> str:
    """The config keys in which a published run's new config differs from the one it trained under."""
    run, seed = step.job.removeprefix("train/").rsplit("/seed", 1)  # --lint 'absolute path': a job name's separator
    try:
        old = flat(yaml.safe_load(Path(run_dir(RESULTS, run, seed), "config.yaml").read_text())["config"])
    except (OSError, KeyError, TypeError, yaml.YAMLError):
        return "the run's config.yaml is missing"
    new = flat(provenance(compose([f"experiment={run}", f"profile={PROFILE}", f"seed={seed}"])))
    changed = [f"{k} {old[k]!r} -> {new[k]!r}" for k in sorted(old.keys() & new.keys())
               if old[k] != new[k] and k not in NOT_HASHED]
    added = len(new.keys() - old.keys())
    return "config changed: " + ", ".join(changed + [f"{added} keys new since it trained"] * bool(added))


def why_jobs_run(limit: int = 15) -> None:
    """Say in words why each job whose key file is missing will run when asked for (Snakemake's own
    reason is only "missing output": the key file)."""
    reasons = []
    for (home, job), step in JOBS.items():
        if os.path.exists(step.key_file):
            continue
        folder = Path(step.key_file).parent
        older = sorted(folder.glob("*.key")) if folder.is_dir() else []
        if home != RESULTS:
            why = f"variant {VARIANT_LABEL!r}"
        elif not older:
            why = "never built here"
        elif job.startswith("train/"):
            why = config_change(step)
        else:
            why = f"its code or what it reads changed (key {older[-1].stem} -> {step.key})"
        reasons.append(f"  {job}: {why}")
    if reasons:
        print(f"why jobs run ({len(reasons)} with a new key; the ones the targets need run):", file=sys.stderr)
        print("\n".join(reasons[:limit] + ([f"  ... and {len(reasons) - limit} more"] if len(reasons) > limit else [])),
              file=sys.stderr)
        # Snakemake's rule for targets: one whose outputs exist is rebuilt only when an input is newer
        print("  (a job asked for by an output's path, or a run or measurement by its rule, keeps its outputs "
              "under a new key: ask for the table that reads it, table_<id>, or force it with -R)", file=sys.stderr)
