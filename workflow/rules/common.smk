# Shared by every rule: the profile, seeds, run paths, the composed-config hash, the table registry.
import functools
import hashlib
import shlex
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

from attnlab.config import CONFIG_DIR, ROOT, compose, config_hash, data_hash, experiments, source_files

PYTHON = sys.executable  # the interpreter running Snakemake (the project's environment)
PROFILES = sorted(p.stem for p in (CONFIG_DIR / "profile").glob("*.yaml"))
PROFILE = str(config.get("profile", "full"))
if PROFILE not in PROFILES:
    raise WorkflowError(f"unknown profile {PROFILE!r}; allowed: {PROFILES} (--config profile=...)")
try:
    SEEDS = list(range(int(config.get("seeds", 1))))
    assert SEEDS
except (ValueError, AssertionError):
    raise WorkflowError(f"seeds={config.get('seeds')!r} must be a whole number >= 1")
RESULTS, FIGURES = f"results/{PROFILE}", f"figures/{PROFILE}"
EXPERIMENTS = experiments()


def code_hash(*patterns: str) -> str:
    """Content hash of files, used as a param: editing them reruns the rule. (Snakemake's code
    trigger does not see src/, and mtime is not a rerun trigger here: see workflow/profiles/default.)"""
    digest = hashlib.sha256()
    for path in sorted(p for pattern in patterns for p in Path(workflow.basedir).glob(pattern)):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def module_code(*modules: str, files: tuple = ()) -> str:
    """code_hash of the source the modules run (attnlab.config.source_files) and of other files they read."""
    return code_hash(*sorted({str(p.relative_to(ROOT)) for m in modules for p in source_files(m)}), *files)


MODEL_CODE = module_code("attnlab.train")
FAMILY_MODULES = [f"attnlab.families.{p.stem}" for p in Path(workflow.basedir, "src/attnlab/families").glob("[!_]*.py")]
TABLE_CODE = module_code("attnlab.tables", "attnlab.plots", *FAMILY_MODULES)

ALL_TARGETS = []
FAMILY_RULES = sorted(str(p) for p in Path(workflow.basedir, "workflow/rules").glob("*.smk")
                      if p.stem not in ("common", "data", "train", "tables"))


@functools.cache
def run_hash(run: str, seed: int) -> str:
    """Hash of the config `python -m attnlab.train experiment=run profile=... seed=...` composes."""
    return config_hash(compose([f"experiment={run}", f"profile={PROFILE}", f"seed={seed}"]))


def run_dir(run: str, seed) -> str:
    return f"{RESULTS}/runs/{run}/seed{seed}"


def run_metrics(run: str) -> list[str]:
    """metrics.json of every seed of one experiment run (its curve.csv and evals.csv sit beside it)."""
    if run not in EXPERIMENTS:
        raise WorkflowError(f"unknown experiment {run!r}; known: {EXPERIMENTS}")
    return [f"{run_dir(run, seed)}/metrics.json" for seed in SEEDS]


# id -> {"inputs": {name: [paths]}, "figure_inputs": {name: [paths]}, "figure": bool, "category": str}
TABLES = {}


def add_table(table_id, runs=None, inputs=None, figure=True, figure_inputs=None, category="Tables"):
    """Register a table: `runs` maps row names to experiments, `inputs` names other files.
    tables.smk turns each entry into a table rule (and a figure rule)."""
    named = {name: run_metrics(run) for name, run in (runs or {}).items()}
    named.update({name: [p] if isinstance(p, str) else list(p) for name, p in (inputs or {}).items()})
    TABLES[table_id] = {"inputs": named, "figure": figure, "category": category,
                        "figure_inputs": figure_inputs or {}}


def named_args(named: dict) -> str:
    """name=path arguments for the attnlab.tables / attnlab.plots command lines."""
    return " ".join(shlex.quote(f"{name}={path}") for name, paths in named.items() for path in paths)
