"""The repository a command works in (stdlib only: the seed campaign's `train` imports it on a bare GPU
machine before Hydra is installed)."""

from __future__ import annotations

import functools
import sys
from pathlib import Path


@functools.cache  # once per process: the note below is said once
def find_root() -> Path:
    """The repository a command works in: the nearest folder at or above the working directory that
    holds configs/config.yaml, else the checkout the package was installed from (a run started in a
    scratch folder, its outputs there through hydra.run.dir). A virtual environment built in another
    checkout must not read that checkout's configs or write its results when run inside this one."""
    here = Path.cwd().resolve()
    installed = Path(__file__).resolve().parents[2]
    root = next((f for f in (here, *here.parents) if (f / "configs" / "config.yaml").is_file()), None)
    if root is None:
        if (installed / "configs" / "config.yaml").is_file():
            return installed
        raise SystemExit(f"error: {here} is in no attnlab repository (no configs/config.yaml here or above it); "
                         "run from inside a clone")
    if installed != root:
        print(f"note: configs and results from {root}; the attnlab code from {installed}", file=sys.stderr)
    return root
