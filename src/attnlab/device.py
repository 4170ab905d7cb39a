"""The one device choice: every run and measurement asks `pick_device` which device it uses."""

from __future__ import annotations

import torch

from attnlab.config import ConfigError

AVAILABLE = {"cuda": torch.cuda.is_available, "mps": torch.backends.mps.is_available, "cpu": lambda: True}


def pick_device(name: str, kinds: tuple[str, ...] = ("cuda", "mps", "cpu")) -> torch.device:
    """auto: the first of `kinds` that torch can use; a named device outside `kinds` or that torch
    cannot see is refused. The memory measurements pass kinds=("cuda", "cpu"): they read CUDA's or
    the process's peak, which MPS has neither of."""
    usable = [kind for kind in kinds if AVAILABLE[kind]()]
    if name == "auto":
        return torch.device(usable[0])
    if name not in usable:
        raise ConfigError(f"device {name!r} but torch sees no such device; allowed here: auto, {', '.join(usable)}")
    return torch.device(name)
