"""What the timing measurements share (attnlab.measure.throughput, .runs_per_hour, .runs_per_hour_gpu):
workloads timed interleaved, the columns that say where, and the command line."""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch
from omegaconf import OmegaConf

from attnlab.config import ConfigError, compose
from attnlab.data import write_json
from attnlab.device import device_name


@dataclass
class Workload:
    """One row: its identifying columns, one unit of its work, and what one unit computes."""
    columns: dict
    step: Callable[[], object]
    flops: int   # per step
    tokens: int  # per step; 0 for the matmul


def time_interleaved(workloads: list[Workload], threads: list[int], warmup: int, repeats: int, steps: int,
                     sync: Callable[[], None], measurement: str) -> dict[tuple[int, int], list[float]]:
    """{(workload index, threads): seconds per step of each timed run}, runs interleaved; progress is
    logged under the measurement's name."""
    for n in threads:  # each thread count has its own kernels' first-call costs
        torch.set_num_threads(n)
        for w in workloads:
            for _ in range(warmup):
                w.step()
    seconds = {}
    for repeat in range(repeats):
        for n in threads:
            torch.set_num_threads(n)
            for i, w in enumerate(workloads):
                sync()
                start = time.perf_counter()
                for _ in range(steps):
                    w.step()
                sync()
                seconds.setdefault((i, n), []).append((time.perf_counter() - start) / steps)
        print(f"{measurement}: timed run {repeat + 1}/{repeats}", file=sys.stderr, flush=True)
    return seconds


def machine_columns(target: torch.device) -> dict:
    """The columns that say where a timing was taken."""
    cores = f" ({os.cpu_count()} cores)" if target.type == "cpu" else ""
    return {"device": device_name(target.type) + cores, "torch": torch.__version__}


def measurement_main(measurement: str, doc: str, measure_with: Callable[[str, dict], list[dict]],
                     argv: list[str] | None) -> None:
    """The command line of a timing measurement: --profile, --out; measure_with(profile, settings) gets
    the profile's measure.<measurement> settings and returns the rows written to --out."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--profile", required=True)
    parser.add_argument("--out", type=Path, required=True, help="the JSON file to write")
    args = parser.parse_args(argv)
    try:  # a bad setting stops before anything is timed
        settings = OmegaConf.to_container(compose([f"profile={args.profile}"]).profile.measure[measurement])
        rows = measure_with(args.profile, settings)
    except ConfigError as e:
        raise SystemExit(f"error: {e}")
    write_json(args.out, {"table": measurement, "profile": args.profile, "settings": settings, "rows": rows})
