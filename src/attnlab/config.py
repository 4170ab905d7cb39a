"""One composed config per run: Hydra's compose API, its hash, and the checks every app runs."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import subprocess
import typing
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from attnlab.root import find_root

ROOT = find_root()
CONFIG_DIR = ROOT / "configs"
# the model (and torch) is imported where a model setting is checked, not here: Snakemake reads the
# workflow through this module, and planning needs no torch
# Settings that change how fast a run goes, where verified data comes from or how many seeds the
# pipeline trains, not what one run computes.
NOT_HASHED = ("train.threads", "train.device", "train.seed_batch", "train.compile",
              "data.corpus.local", "data.corpus.url", "data.corpus.timeout_s",
              "profile.seeds", "profile.winograd_seeds", "profile.measure")
# Settings added after runs were published, with the value every published run trained under:
# hashed only when they differ from it, so the published runs keep their hashes (and stay valid)
# while a run with another value gets a hash of its own.
HASHED_UNLESS = {"train.precision": "float32", "model.qk_init_scale": 1.0, "train.qk_lr_scale": 1.0}


class ConfigError(ValueError):
    """A bad setting; the message names the value and what is allowed."""


def compose(overrides: list[str] | tuple[str, ...] = ()) -> DictConfig:
    """The config `python -m attnlab.train <overrides>` would run with (without hydra.*)."""
    from hydra import compose as hydra_compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    cfg = error = None
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        try:
            cfg = hydra_compose(config_name="config", overrides=list(overrides))
        except (HydraException, OmegaConfBaseException) as e:
            error = e
    if error is not None:  # explained outside the `with`: _explain composes again
        raise ConfigError(_explain(str(error).splitlines()[0])) from error
    check_profile(cfg.profile)
    return cfg


def check_profile(p: DictConfig) -> None:
    """The one check of a profile's settings (configs/profile/<name>.yaml); a measurement with a settings
    file of its own (configs/measure/) checks the sizes it gives each profile there."""
    def whole(value, least):
        return isinstance(value, int) and not isinstance(value, bool) and value >= least

    if not (isinstance(p.budget, (int, float)) and 0 < p.budget <= 1):
        raise ConfigError(f"profile.budget={p.budget!r} must be a number in (0, 1]")
    for key in ("min_steps", "seeds", "winograd_seeds"):
        if not whole(p[key], 1):
            raise ConfigError(f"profile.{key}={p[key]!r} must be a whole number >= 1")
    for key in ("max_chars", "eval_max_windows"):
        if p[key] is not None and not whole(p[key], 1):
            raise ConfigError(f"profile.{key}={p[key]!r} must be null or a whole number >= 1")
    for key, value in p.measure.norm_grad_init.items():
        if not whole(value, 1):
            raise ConfigError(f"profile.measure.norm_grad_init.{key}={value!r} must be a whole number >= 1")
    speed = p.measure.throughput
    for key in ("repeats", "steps", "matmul_size", "runtime_min"):
        if not whole(speed[key], 1):
            raise ConfigError(f"profile.measure.throughput.{key}={speed[key]!r} must be a whole number >= 1")
    if not whole(speed.warmup, 0):
        raise ConfigError(f"profile.measure.throughput.warmup={speed.warmup!r} must be a whole number >= 0")
    if not speed.threads or not all(whole(n, 1) for n in speed.threads):
        raise ConfigError(f"profile.measure.throughput.threads={list(speed.threads)} must be whole numbers >= 1")
    if not speed.experiments or not set(speed.experiments) <= set(experiments()):
        raise ConfigError(f"profile.measure.throughput.experiments={list(speed.experiments)} must name "
                          f"experiments; allowed: {experiments()}")
    if speed.device not in ("auto", "cpu", "cuda"):
        raise ConfigError(f"profile.measure.throughput.device={speed.device!r} is not one of ['auto', 'cpu', 'cuda']")
    runs = p.measure.runs_per_hour
    for key in ("threads", "repeats", "steps", "runtime_min"):
        if not whole(runs[key], 1):
            raise ConfigError(f"profile.measure.runs_per_hour.{key}={runs[key]!r} must be a whole number >= 1")
    if not runs.seed_batches or not all(whole(k, 1) for k in runs.seed_batches):
        raise ConfigError(f"profile.measure.runs_per_hour.seed_batches={list(runs.seed_batches)} "
                          "must be whole numbers >= 1")
    if not runs.compile or not all(isinstance(c, bool) for c in runs.compile):
        raise ConfigError(f"profile.measure.runs_per_hour.compile={list(runs.compile)} must be true and/or false")
    from attnlab.model import PRECISIONS
    if not runs.precisions or not set(runs.precisions) <= set(PRECISIONS):
        raise ConfigError(f"profile.measure.runs_per_hour.precisions={list(runs.precisions)} "
                          f"must be among {list(PRECISIONS)}")
    if not runs.experiments or not set(runs.experiments) <= set(experiments()):
        raise ConfigError(f"profile.measure.runs_per_hour.experiments={list(runs.experiments)} must name "
                          f"experiments; allowed: {experiments()}")
    if runs.device not in ("auto", "cpu", "cuda"):
        raise ConfigError(f"profile.measure.runs_per_hour.device={runs.device!r} is not one of ['auto', 'cpu', 'cuda']")


def _explain(message: str) -> str:
    """Hydra's first error line, made to name what is allowed: unknown config choices and keys."""
    missing = re.search(r"Could not find '([^/']+)/([^']+)'", message)
    if missing:  # e.g. experiment=ladder/nope, profile=nope
        group, choice = missing.groups()
        if group == "experiment":
            known = experiments()
            family = [e for e in known if e.startswith(choice.split("/")[0] + "/")]
            return f"unknown experiment {choice!r}; allowed: {family or known}"
        return f"unknown {group} {choice!r}; allowed: {sorted(p.stem for p in (CONFIG_DIR / group).glob('*.yaml'))}"
    unknown_key = re.search(r"Could not override '([^']+)'", message)
    if unknown_key:  # e.g. model.foo=1, trian.steps=5
        key, base = unknown_key.group(1), compose()
        parent = key.rpartition(".")[0]
        while parent and OmegaConf.select(base, parent) is None:
            parent = parent.rpartition(".")[0]
        node = OmegaConf.select(base, parent) if parent else base
        if isinstance(node, DictConfig):
            return f"unknown option {key!r}; allowed in {parent or 'the top level'}: {sorted(node)}"
    return message


def experiments() -> list[str]:
    """Every runnable experiment config, as `family/run` (files starting with _ are shared parts)."""
    folder = CONFIG_DIR / "experiment"
    return sorted(str(p.relative_to(folder).with_suffix(""))
                  for p in folder.rglob("*.yaml") if not p.name.startswith("_"))


def winograd_versions() -> list[str]:
    """Every version of the Winograd language, each split once: configs/winograd/language/<version>.yaml (its words,
    winograd.language.version, and its split_seed)."""
    return sorted(p.stem for p in (CONFIG_DIR / "winograd" / "language").glob("*.yaml"))


def resolved(cfg: DictConfig) -> dict:
    container = OmegaConf.to_container(cfg, resolve=True)
    container.pop("hydra", None)
    return container


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def config_hash(cfg: DictConfig) -> str:
    """Short hash of everything that determines a run's numbers."""
    container = resolved(cfg)
    for dotted in (*NOT_HASHED, *HASHED_UNLESS):
        *parents, key = dotted.split(".")
        node = container
        for parent in parents:
            node = node.get(parent, {})
        if dotted in NOT_HASHED or node.get(key) == HASHED_UNLESS[dotted]:
            node.pop(key, None)
    return _digest(container)


# Overrides every pipeline run gets (what it is, where it runs); anything else is an ablation of it.
ROUTINE_OVERRIDES = ("experiment", "profile", "seed", "train.threads", "train.device", "train.seed_batch",
                     "train.compile", "data.corpus.local")


def ablations(overrides) -> list[str]:
    """The overrides of a command line that change a run from its experiment's config."""
    return [o for o in overrides
            if not o.lstrip("+~").startswith("hydra") and o.lstrip("+~").split("=")[0] not in ROUTINE_OVERRIDES]


def provenance(cfg: DictConfig) -> dict:
    """The composed config as published: without the machine's own corpus path (the corpus is
    identified by its sha256)."""
    container = resolved(cfg)
    if "data" in container:
        container["data"]["corpus"]["local"] = None
    return container


def data_hash(cfg: DictConfig) -> str:
    """Short hash of what determines the token cache: the verified corpus, its slice, the tokenizer."""
    data = resolved(cfg)["data"]
    return _digest({"sha256": data["corpus"]["sha256"], "vocab_size": data["vocab_size"],
                    "train_fraction": data["train_fraction"], "max_chars": cfg.profile.max_chars})


def seed_config(cfg: DictConfig, seed: int) -> DictConfig:
    """The config of one seed of a call that trains several (train.seed_batch): the call's, its seed replaced."""
    seed_cfg = cfg.copy()
    seed_cfg.seed = seed
    return seed_cfg


def scaled(cfg: DictConfig, steps: int) -> int:
    """A step count of the chapter scaled by the profile's budget (0 stays 0)."""
    if steps == 0:
        return 0
    return max(cfg.profile.min_steps, round(steps * cfg.profile.budget))


def _check_types(values: dict) -> None:
    """Each model setting has its field's type (a bool is not a number here)."""
    from attnlab.model import ModelConfig
    for name, hint in typing.get_type_hints(ModelConfig).items():
        if name not in values:
            continue
        allowed = typing.get_args(hint) or (hint,)
        value = values[name]
        if not any(value is None if t is type(None) else
                   isinstance(value, t) and (t is bool or not isinstance(value, bool)) for t in allowed):
            names = " or ".join("null" if t is type(None) else t.__name__ for t in allowed)
            raise ConfigError(f"model.{name}={value!r} has the wrong type; allowed: {names}")


def model_config(cfg: DictConfig) -> "ModelConfig":
    from attnlab.model import ModelConfig
    values = OmegaConf.to_container(cfg.model, resolve=True)
    _check_types(values)
    try:
        return ModelConfig.from_dict(values)
    except (TypeError, ValueError) as e:
        raise ConfigError(str(e)) from e


def check_train(cfg: DictConfig) -> None:
    t = cfg.train
    for key in ("steps", "warmup_steps"):
        if not isinstance(t[key], int) or t[key] < 0:
            raise ConfigError(f"train.{key}={t[key]!r} must be a whole number >= 0")
    for key in ("batch_size", "eval_interval", "checkpoint_interval", "eval_batch_size"):
        if not isinstance(t[key], int) or t[key] <= 0:
            raise ConfigError(f"train.{key}={t[key]!r} must be a whole number > 0")
    if not isinstance(t.lr, (int, float)) or isinstance(t.lr, bool) or not t.lr > 0:
        raise ConfigError(f"train.lr={t.lr!r} must be a number > 0")
    if not isinstance(t.qk_lr_scale, (int, float)) or isinstance(t.qk_lr_scale, bool) or not t.qk_lr_scale > 0:
        raise ConfigError(f"train.qk_lr_scale={t.qk_lr_scale!r} must be a number > 0 (W_q, W_k's rate over train.lr)")
    if t.qk_lr_scale != 1 and not (cfg.model.mixer == "attention" and cfg.model.query_key):
        raise ConfigError(f"train.qk_lr_scale={t.qk_lr_scale} but the model has no W_q, W_k (model.mixer="
                          f"{cfg.model.mixer}, model.query_key={cfg.model.query_key}); leave it at 1.0")
    if t.schedule not in ("constant", "cosine"):
        raise ConfigError(f"train.schedule={t.schedule!r} is not one of ['constant', 'cosine']")
    from attnlab.model import PRECISIONS
    if t.precision not in PRECISIONS:
        raise ConfigError(f"train.precision={t.precision!r} is not one of {list(PRECISIONS)}")
    if t.device not in ("auto", "cpu", "cuda", "mps"):
        raise ConfigError(f"train.device={t.device!r} is not one of ['auto', 'cpu', 'cuda', 'mps']")
    if not isinstance(t.seed_batch, int) or isinstance(t.seed_batch, bool) or t.seed_batch < 1:
        raise ConfigError(f"train.seed_batch={t.seed_batch!r} must be a whole number >= 1 (seeds trained together)")
    if not isinstance(t.compile, bool):
        raise ConfigError(f"train.compile={t.compile!r} must be true or false")
    if not t.eval_lengths or any(not isinstance(n, int) or n <= 0 for n in t.eval_lengths):
        raise ConfigError(f"train.eval_lengths={list(t.eval_lengths)} must be positive whole numbers")


def git_commit() -> dict:
    """The commit a result came from, and whether the tree had uncommitted changes under src/ and configs/;
    if so, which files differed and a sha256 of what changed (the diff against the commit, then each
    untracked file's name and bytes), so a reader can tell whether two dirty runs ran the same code. A
    copy of a committed tree without .git (sent to another machine) is named by ATTNLAB_COMMIT."""
    if os.environ.get("ATTNLAB_COMMIT"):
        return {"commit": os.environ["ATTNLAB_COMMIT"], "dirty": False}

    def git(*args) -> bytes:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True).stdout
    try:
        commit = git("rev-parse", "HEAD").decode().strip() or None
        status = git("status", "--porcelain", "--untracked-files=all", "--", "src", "configs").decode().splitlines()
    except OSError:
        return {"commit": None, "dirty": None}
    if not status:
        return {"commit": commit, "dirty": False}
    changed = sorted(line[3:].split(" -> ")[-1] for line in status)
    digest = hashlib.sha256(git("diff", "--binary", "HEAD", "--", "src", "configs"))
    for name in (line[3:] for line in status if line.startswith("??")):
        digest.update(name.encode() + b"\0" + (ROOT / name).read_bytes())
    return {"commit": commit, "dirty": True, "changed": changed, "diff_sha256": digest.hexdigest()}


def measured_stamp() -> dict:
    """What every measurement record carries (read before it measures: edits made while it runs are not its code):
    the commit and whether the tree was dirty (git_commit), and when it was measured (UTC). The report's provenance
    names both for a table built from the record."""
    from datetime import datetime, timezone
    return {**git_commit(), "measured_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def source_files(module: str) -> set[Path]:
    """The file of an attnlab module and of every attnlab module it imports, transitively (with the
    packages' __init__): what `python -m module` runs, so a rule's code hash misses no file."""
    found: set[Path] = set()

    def visit(name: str) -> None:
        parts = name.split(".")
        for depth in range(1, len(parts)):  # importing a.b.c runs a/__init__ and a/b/__init__
            found.add(ROOT.joinpath("src", *parts[:depth], "__init__.py"))
        base = ROOT.joinpath("src", *parts)
        path = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if path in found:
            return
        found.add(path)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # `from attnlab import data` names a module, `from attnlab.x import f` a function
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for imported in names:
                target = ROOT.joinpath("src", *imported.split("."))
                if imported.split(".")[0] == "attnlab" and (target.with_suffix(".py").is_file() or target.is_dir()):
                    visit(imported)

    visit(module)
    return found
