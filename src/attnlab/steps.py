"""What reruns a job: every job of the workflow is a Step with a key, and its key file is a path Snakemake sees.

Every job has a key file, results/<profile>/stamps/<job>/<key>.key, committed with its outputs. The key covers
what makes the outputs besides the files the job reads: a training run's is its composed config's hash (which
covers its data; code changes do not retrain), a measurement's its settings and code, a table's, figure's, the
ledger's or the report's (a derived job) its code and the keys of the jobs it reads from. A key that changes (an
edited YAML, an override, an edited builder) names a file that does not exist yet, which rule `key` writes, and
every job reads its own key file: the job then reruns, as for any updated input, and so does whatever reads it.
The default target asks for every job's outputs and key file. The key is in a path because a path is what a
clone keeps: file times and .snakemake/ records are not. The workflow (workflow/rules/common.smk) gives the
registry its one Snakemake-aware piece: how a job reads a path by key alone (ancient, unless forced).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

import yaml

from attnlab.config import NOT_HASHED, ROOT, compose, provenance, source_files
from attnlab.layout import digest, run_folder


def refuse(message: str):
    """Stop with one line of ours naming what is wrong and what is allowed: Snakemake prints a
    WorkflowError with its frames, a SystemExit as it is."""
    raise SystemExit(f"error: {message}")


def code_hash(*patterns: str, root: Path = ROOT) -> str:
    """Content hash of files (globs relative to the repository)."""
    h = hashlib.sha256()
    for path in sorted(p for pattern in patterns for p in Path(root).glob(pattern)):
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


class Composed:
    """Composing a config with Hydra takes ~0.3 s, and the workflow needs every run's key on every call: a key
    once composed (and the files each module imports) is kept in .snakemake/attnlab/composed.json under a hash
    of every config and source file, so an edit of any of them composes afresh. The last few such states are
    kept, so an edit undone (a config tried and put back) composes nothing again. A config that fails its
    checks is never kept: its error shows on every call."""

    STATES = 4

    def __init__(self, root: Path = ROOT):
        self.root = Path(root)
        self.file = self.root / ".snakemake/attnlab/composed.json"
        self.inputs = code_hash("configs/**/*.yaml", "src/attnlab/**/*.py", root=self.root)
        try:
            states = json.loads(self.file.read_text())
        except (OSError, ValueError):
            states = {}
        self.states = {k: v for k, v in states.items() if isinstance(v, dict)} if isinstance(states, dict) else {}
        self.found = dict(self.states.get(self.inputs, {}))
        self.before = dict(self.found)

    def __call__(self, what: str, compute):
        """compute() (a composed config's key or settings), or what it gave when these files were last read."""
        if what not in self.found:
            self.found[what] = compute()
        return self.found[what]

    def keep(self) -> None:
        """Called once the workflow is read: keeps what was composed afresh for the next call, this state
        newest, the oldest beyond STATES dropped."""
        if self.found == self.before:
            return
        self.states.pop(self.inputs, None)
        self.states[self.inputs] = dict(sorted(self.found.items()))
        kept = dict(list(self.states.items())[-self.STATES:])
        self.file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.file.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(kept))
        tmp.replace(self.file)

    def module_files(self, module: str) -> list[str]:
        """The files a module runs, relative to the repository (kept: reading the imports of every module
        took seconds)."""
        return self(f"imports {module}", lambda: sorted(str(p.relative_to(ROOT)) for p in source_files(module)))

    @functools.lru_cache(maxsize=None)  # every table and figure asks for the keys of the same few modules
    def module_code(self, *modules: str, files: tuple = ()) -> str:
        """code_hash of the source the modules run (attnlab.config.source_files) and of other files they read."""
        return code_hash(*sorted({p for m in modules for p in self.module_files(m)}), *files, root=self.root)

    def measurement_code(self, module: str, files: tuple = ()) -> str:
        """A measurement's code: the files of attnlab/measure/ its module runs, and other files it reads. The
        model and training code it calls are left out, as a run's key leaves them out: an edit there must not
        silently invalidate hours of published measurements (force one: -R measure_<name>)."""
        return code_hash(*[p for p in self.module_files(module) if p.startswith("src/attnlab/measure/")], *files,
                         root=self.root)


@dataclass(eq=False)
class Step:
    job: str                  # names its key's folder: train/ladder/average/seed0, table_ladder, ...
    own_key: str              # what makes the outputs, besides what the job reads
    outputs: list
    inputs: dict = field(default_factory=dict)  # name -> [paths]: what the job reads
    derived: bool = False     # a table, figure, the ledger, the captions or the report: built in seconds from
                              # other jobs' outputs, its key covers theirs
    home: str = ""            # where its key file lives: the published results, or the variant's folder
    registry: "Registry" = field(default=None, repr=False)  # the jobs it may read from

    @functools.cached_property
    def upstream(self) -> list:
        """The jobs whose outputs this one reads (asked once every job is registered)."""
        by_output = self.registry.by_output
        found = {id(by_output[p]): by_output[p] for paths in self.inputs.values() for p in paths if p in by_output}
        return list(found.values())

    @functools.cached_property
    def key(self) -> str:
        return digest(self.own_key, [s.key for s in self.upstream]) if self.derived else self.own_key

    @property
    def key_file(self) -> str:
        return f"{self.home}/stamps/{self.job}/{self.key}.key"

    def rule_inputs(self) -> dict:
        """The rule's input: what the job reads, and its own key file. A costly job (a run, a measurement, a data
        stage, the Winograd split: hours of work, or what every run reads) reads everything by key alone
        (Registry.read_by_key). A derived job reads by file time what it builds from, checked whole first, and
        the key files of the jobs it reads from too: asked for by force (-f, -R), it reruns first whatever it
        reads whose key changed (a key file's name is its content: its time says nothing)."""
        by_output, by_key = self.registry.by_output, self.registry.read_by_key
        if self.derived:
            for path in (out for p in chain(*self.inputs.values()) for out in (by_output[p].outputs if p in by_output else [p])):
                check_readable(path)
            keys = [self.key_file, *sorted(s.key_file for s in self.upstream)]
            return {**self.inputs, "key_files": [by_key(p) for p in keys]}
        return {name: [by_key(p) for p in paths] for name, paths in {**self.inputs, "key_files": [self.key_file]}.items()}


class Registry:
    """Every job of one call of the workflow: by output path, and by (home, job name)."""

    def __init__(self, home: str, read_by_key):
        self.home = home                # the published results' folder
        self.read_by_key = read_by_key  # path -> what Snakemake reads (the workflow's: ancient unless forced)
        self.by_output = {}             # output path -> Step
        self.jobs = {}                  # (home, job name) -> Step

    def register(self, step: Step) -> Step:
        """The step, or the one registered before under its job's name."""
        for path in step.outputs:
            self.by_output.setdefault(path, step)
        return self.jobs.setdefault((step.home, step.job), step)

    def writer(self, path: str) -> Step:
        """The job that writes a path (a rule's input function asks, from the output its wildcards name)."""
        if path not in self.by_output:
            refuse(f"no job of this call writes {path}")
        return self.by_output[path]

    def producer(self, path: str) -> str | None:
        """The rule a path's job is ruled by, as -R names it: `key` for a key file."""
        # a folder name looked for inside a path, and a job name's separator
        return "key" if "/stamps/" in path else self.by_output[path].job.split("/")[0] if path in self.by_output else None

    def current_key(self, home: str, job: str, key: str) -> str:
        """The key rule `key` writes: a key asked for by hand that is not the job's current one is refused."""
        current = self.jobs[home, job].key if (home, job) in self.jobs else "no such job"
        if key != current:
            refuse(f"{home}/{job}: {key} is not its current key ({current})")
        return key


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
        first = f.read().splitlines()[-1].split(b",")[0]
    return int(first) if first.isdigit() else None


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


# --- why a job runs -------------------------------------------------------------------------------
def flat(tree: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in tree.items():
        out.update(flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out


def config_change(step: Step, profile: str) -> str:
    """The config keys in which a published run's new config differs from the one it trained under."""
    run, seed = step.job.removeprefix("train/").rsplit("/seed", 1)
    try:
        old = flat(yaml.safe_load(Path(run_folder(step.home, run, seed), "config.yaml").read_text())["config"])
    except (OSError, KeyError, TypeError, yaml.YAMLError):
        return "the run's config.yaml is missing"
    new = flat(provenance(compose([f"experiment={run}", f"profile={profile}", f"seed={seed}"])))
    changed = [f"{k} {old[k]!r} -> {new[k]!r}" for k in sorted(old.keys() & new.keys())
               if old[k] != new[k] and k not in NOT_HASHED]
    added = len(new.keys() - old.keys())
    return "config changed: " + ", ".join(changed + [f"{added} keys new since it trained"] * bool(added))


def why_jobs_run(registry: Registry, profile: str, variant_label: str, limit: int = 15) -> None:
    """Say in words why each job whose key file is missing will run when asked for (Snakemake's own
    reason is only "missing output": the key file)."""
    reasons = []
    for (home, job), step in registry.jobs.items():
        if os.path.exists(step.key_file):
            continue
        folder = Path(step.key_file).parent
        older = sorted(folder.glob("*.key")) if folder.is_dir() else []
        if home != registry.home:
            why = f"variant {variant_label!r}"
        elif not older:
            why = "never built here"
        elif job.startswith("train/"):
            why = config_change(step, profile)
        else:
            why = f"its code or what it reads changed (key {older[-1].stem} -> {step.key})"
        reasons.append(f"  {job}: {why}")
    if reasons:
        print(f"why jobs run ({len(reasons)} with a new key; the ones the targets need run):", file=sys.stderr)
        print("\n".join(reasons[:limit] + ([f"  ... and {len(reasons) - limit} more"] if len(reasons) > limit else [])),
              file=sys.stderr)
        # Snakemake's rule for targets: one whose outputs exist is rebuilt only when an input is newer
        print("  (an output asked for by its path alone keeps itself under a new key: ask with -f, which first "
              "reruns what it reads whose key changed, or force a job with -R)", file=sys.stderr)
