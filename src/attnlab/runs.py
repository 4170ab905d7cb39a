"""A run folder, written by `train` and read by `evaluate`, the tables and the families; every
trained run, Winograd included, holds the same files: config.yaml ({overrides, config_hash,
config}: the composed config it trained under; written last), metrics.json (its record),
curve.csv (loss and learning rate per step), evals.csv (the task's evaluation at every
evaluation step) and checkpoint.pt (the resume point, not published: tensors and plain data, never code).
"""

from __future__ import annotations

import hashlib
import json
import pickle
import re
from pathlib import Path

import pandas as pd
import yaml
from omegaconf import DictConfig, OmegaConf

from attnlab import data
from attnlab.config import config_hash, provenance

CONFIG, METRICS, CURVE, EVALS, CHECKPOINT = "config.yaml", "metrics.json", "curve.csv", "evals.csv", "checkpoint.pt"
# an attention row is one-hot when its largest weight exceeds this (evals.csv's block<i>_onehot_share; the
# captions read it here)
ONEHOT_WEIGHT = 0.99


def write_config(run_dir: Path, cfg: DictConfig, overrides: list[str]) -> None:
    record = {"overrides": list(overrides), "config_hash": config_hash(cfg), "config": provenance(cfg)}
    data.write_text(run_dir / CONFIG, OmegaConf.to_yaml(OmegaConf.create(record)))


def run_config(metrics_path: str | Path) -> dict:
    """The composed config a run trained under, saved beside its metrics.json."""
    return yaml.safe_load(Path(metrics_path).with_name(CONFIG).read_text())["config"]


def evals_of(metrics_path: str | Path) -> pd.DataFrame:
    """The perplexities (and attention statistics) at every evaluation, beside a run's metrics.json."""
    return pd.read_csv(Path(metrics_path).with_name(EVALS))


def load_runs(paths: list[str | Path]) -> list[dict]:
    """metrics.json of each seed of one run."""
    return [json.loads(Path(p).read_text()) for p in paths]


def write_csv(path: Path, rows: list[dict], columns: list[str] | None = None) -> None:
    """Rows as CSV; `columns` names the header of a table without rows."""
    with data.atomic_path(path) as tmp:
        pd.DataFrame(rows, columns=None if rows else columns).to_csv(tmp, index=False)


def checkpoint_digest(ckpt: dict) -> str:
    """sha256 over everything a checkpoint holds (tensors by their bytes), less its own digest:
    torch.load does not notice flipped bytes inside a tensor, this does. It sits in the same file,
    so it catches corruption, not tampering: loading only plain data guards against that."""
    import torch  # here, not at the top: the tables and Snakemake's planning read run folders without it

    h = hashlib.sha256()

    def visit(x):
        if isinstance(x, torch.Tensor):
            h.update(f"{x.dtype}{tuple(x.shape)}".encode())
            h.update(x.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes())
        elif isinstance(x, dict):
            for key in sorted(x, key=str):
                h.update(repr(key).encode())
                visit(x[key])
        elif isinstance(x, (list, tuple)):
            h.update(f"{type(x).__name__}{len(x)}".encode())
            for item in x:
                visit(item)
        else:
            h.update(repr(x).encode())

    visit({k: v for k, v in ckpt.items() if k != "sha256"})
    return h.hexdigest()


def save_checkpoint(path: Path, ckpt: dict) -> None:
    import torch

    with data.atomic_path(path) as tmp:
        torch.save({**ckpt, "sha256": checkpoint_digest(ckpt)}, tmp)


class CheckpointError(ValueError):
    """A checkpoint that cannot be trusted: unreadable, not plain data, failing its checksum, or
    from another config."""


def read_checkpoint(path: Path, expected_hash: str) -> dict:
    """The checkpoint at `path`, verified against its checksum and the config it must belong to."""
    import torch

    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:  # weights_only refuses any global but tensors and containers
        found = re.search(r"GLOBAL (\S+)", str(e))
        raise CheckpointError(f"checkpoint {path} is refused unread: it pickles "
                              f"{found.group(1) if found else 'an object'}, and a checkpoint may hold only "
                              "tensors and plain data, never code") from None
    except Exception as e:  # truncated or corrupt file
        raise CheckpointError(f"checkpoint {path} is unreadable ({e})") from e
    if not isinstance(ckpt, dict) or ckpt.get("sha256") != checkpoint_digest(ckpt):
        raise CheckpointError(f"checkpoint {path} does not match its checksum (corrupt)")
    if ckpt.get("config_hash") != expected_hash:
        raise CheckpointError(f"checkpoint {path} belongs to config {ckpt.get('config_hash')}, not {expected_hash}")
    return ckpt
