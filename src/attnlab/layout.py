"""Where a trained run's seed lives, the job that names its key, its key, the seeds trained together, and a
variant's folder: one layout that the workflow (workflow/rules/), the campaign (attnlab.campaign) and the ledger's
reference (attnlab.claims.cli) read.

A run is named as a scope: `family/run` for an experiment (configs/experiment/), `winograd/<version>_<model>`
for a Winograd run (configs/winograd/). Stdlib only at import: the campaign's `train` runs where Hydra may be
missing until it installs it.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re


def digest(*parts) -> str:
    """A key: the hash of what makes a job's outputs."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def winograd_parts(run: str) -> tuple[str, str] | None:
    """(version, model) of a Winograd run's scope name, None for an experiment."""
    if not run.startswith("winograd/"):
        return None
    version, _, model = run.removeprefix("winograd/").partition("_")
    return version, model


def run_folder(home: str, run: str, seed) -> str:
    """A seed's folder under `home` (results/<profile>, or a variant's folder): the files its job writes."""
    winograd = winograd_parts(run)
    if winograd:
        return f"{home}/measure/winograd/{winograd[0]}/{winograd[1]}/seed{seed}"
    return f"{home}/runs/{run}/seed{seed}"


def run_job(run: str, seed) -> str:
    """The job that trains a seed, as its key's folder names it: <home>/stamps/<job>/<key>.key."""
    winograd = winograd_parts(run)
    if winograd:
        return f"winograd_train/{winograd[0]}/{winograd[1]}/seed{seed}"
    return f"train/{run}/seed{seed}"


def seed_key(cfg, seed: int) -> str:
    """A seed's key: the hash of its run's composed config with the seed set. The configs use the seed as a value
    only (no group or interpolation reads it), so this equals composing with seed=k, and a run is composed once."""
    from attnlab.config import config_hash

    cfg = copy.deepcopy(cfg)
    cfg.seed = seed
    return config_hash(cfg)


def seed_groups(seeds: list[int], batch: int) -> list[list[int]]:
    """The seeds in groups of up to `batch` consecutive seeds, in order: each group one job that trains them
    folded into one model (train.seed_batch)."""
    groups = []
    for seed in seeds:
        if groups and groups[-1][-1] == seed - 1 and len(groups[-1]) < batch:
            groups[-1].append(seed)
        else:
            groups.append([seed])
    return groups


def variant_label(overrides: list[tuple[str, list[str]]], seeds: int, profile_seeds: int) -> str:
    """What makes a variant, in words ('' for the published results)."""
    parts = [f"{scope}: {' '.join(items)}" for scope, items in overrides]
    if seeds != profile_seeds:
        parts.append(f"seeds={seeds}")
    return "; ".join(parts)


def variant_name(label: str) -> str:
    """The variant's folder name: Hydra reads the run's folder from its command line, so no '=' or other
    character its grammar treats apart."""
    name = re.sub(r"[^A-Za-z0-9._+-]+", "_", label.replace("/", "-").replace(": ", "_").replace("; ", "__")
                  .replace("=", "-"))
    return name if len(name) <= 80 else f"{name[:70]}-{digest(label)[:8]}"
