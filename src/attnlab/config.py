"""One composed config per run: Hydra's compose API, its hash, and the checks every app runs."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from attnlab.model import ModelConfig

ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = ROOT / "configs"
# Settings that change how fast a run goes or where verified data comes from, not what it computes.
NOT_HASHED = ("train.threads", "train.device", "data.corpus.local", "data.corpus.url", "data.corpus.timeout_s")


class ConfigError(ValueError):
    """A bad setting; the message names the value and what is allowed."""


def compose(overrides: list[str] | tuple[str, ...] = ()) -> DictConfig:
    """The config `python -m attnlab.train <overrides>` would run with (without hydra.*)."""
    from hydra import compose as hydra_compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        try:
            return hydra_compose(config_name="config", overrides=list(overrides))
        except (HydraException, OmegaConfBaseException) as e:
            raise ConfigError(str(e).splitlines()[0]) from e


def experiments() -> list[str]:
    """Every runnable experiment config, as `family/run` (files starting with _ are shared parts)."""
    folder = CONFIG_DIR / "experiment"
    return sorted(str(p.relative_to(folder).with_suffix(""))
                  for p in folder.rglob("*.yaml") if not p.name.startswith("_"))


def resolved(cfg: DictConfig) -> dict:
    container = OmegaConf.to_container(cfg, resolve=True)
    container.pop("hydra", None)
    return container


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def config_hash(cfg: DictConfig) -> str:
    """Short hash of everything that determines a run's numbers."""
    container = resolved(cfg)
    for dotted in NOT_HASHED:
        *parents, key = dotted.split(".")
        node = container
        for parent in parents:
            node = node.get(parent, {})
        node.pop(key, None)
    return _digest(container)


def data_hash(cfg: DictConfig) -> str:
    """Short hash of what determines the token cache: the verified corpus, its slice, the tokenizer."""
    data = resolved(cfg)["data"]
    return _digest({"sha256": data["corpus"]["sha256"], "vocab_size": data["vocab_size"],
                    "train_fraction": data["train_fraction"], "max_chars": cfg.profile.max_chars})


def scaled(cfg: DictConfig, steps: int) -> int:
    """A step count of the chapter scaled by the profile's budget (0 stays 0)."""
    if steps == 0:
        return 0
    return max(cfg.profile.min_steps, round(steps * cfg.profile.budget))


def model_config(cfg: DictConfig) -> ModelConfig:
    try:
        return ModelConfig.from_dict(OmegaConf.to_container(cfg.model, resolve=True))
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
    if not t.lr > 0:
        raise ConfigError(f"train.lr={t.lr!r} must be > 0")
    if t.schedule not in ("constant", "cosine"):
        raise ConfigError(f"train.schedule={t.schedule!r} is not one of ['constant', 'cosine']")
    if t.device not in ("auto", "cpu", "cuda", "mps"):
        raise ConfigError(f"train.device={t.device!r} is not one of ['auto', 'cpu', 'cuda', 'mps']")
    if not t.eval_lengths or any(not isinstance(n, int) or n <= 0 for n in t.eval_lengths):
        raise ConfigError(f"train.eval_lengths={list(t.eval_lengths)} must be positive whole numbers")


def git_commit() -> dict:
    """The commit a result came from, and whether the tree had uncommitted changes."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    try:
        return {"commit": git("rev-parse", "HEAD") or None, "dirty": bool(git("status", "--porcelain", "--", "src", "configs"))}
    except OSError:
        return {"commit": None, "dirty": None}
