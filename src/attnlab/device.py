"""The one device choice: every run and measurement asks `pick_device` which device it uses, and records
`device_name`."""

from __future__ import annotations

import platform
from pathlib import Path

import torch

from attnlab.config import ConfigError

AVAILABLE = {"cuda": torch.cuda.is_available, "mps": torch.backends.mps.is_available, "cpu": lambda: True}
RUN_KINDS = ("cuda", "mps", "cpu")
# the devices the timing and memory measurements can synchronise and read a peak on (MPS has neither)
MEASURED_KINDS = ("cuda", "cpu")


def pick_device(name: str, kinds: tuple[str, ...] = RUN_KINDS) -> torch.device:
    """auto: the first of `kinds` that torch can use; a named device outside `kinds` or that torch
    cannot see is refused. The measurements pass MEASURED_KINDS."""
    usable = [kind for kind in kinds if AVAILABLE[kind]()]
    if name == "auto":
        return torch.device(usable[0])
    if name not in usable:
        why = "torch sees no such device" if name in kinds else f"this job uses only {', '.join(kinds)}"
        raise ConfigError(f"device {name!r} but {why}; allowed here: auto, {', '.join(usable)}")
    return torch.device(name)


def device_name(kind: str) -> str:
    """The card's or the processor's model name, as a run's metrics and a timing's rows record it."""
    if kind == "cuda":
        return torch.cuda.get_device_name()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
