"""Measurement `runs_per_hour` on a GPU: attnlab.measure.runs_per_hour's modes timed on CUDA, by hand on
a machine that has one (the pipeline's machines may have none, so it never schedules this; its JSON
is committed beside the CPU's and the table reads both). Settings: the profile's
measure.runs_per_hour_gpu, groups of modes measured one after another (compiling is timed only where
a group asks for it: each compile costs the GPU machine seconds of its time). A group with
`processes: P` times P one-seed processes side by side instead, sharing the GPU as P training jobs do
(make reproduce-gpu): its runs_per_hour is theirs together.

    python -m attnlab.measure.runs_per_hour_gpu --profile full \
        --out results/full/measure/runs_per_hour/runs_per_hour_gpu.json
"""

from __future__ import annotations

import statistics
import time

import torch
import torch.multiprocessing as mp

from attnlab.config import compose, scaled
from attnlab.device import MEASURED_KINDS, pick_device
from attnlab.measure.runs_per_hour import measure, mode_workload
from attnlab.measure.timing import machine_columns, measurement_main


def one_of_many(profile: str, experiment: str, threads: int, repeats: int, steps: int, device: str, ready, results):
    """One process of a side-by-side group: the one-seed float32 step, warmed up, then timed once every
    process is ready (seconds per step of each timed run)."""
    torch.set_num_threads(threads)
    target = pick_device(device, MEASURED_KINDS)
    sync = torch.cuda.synchronize if target.type == "cuda" else (lambda: None)
    w = mode_workload(experiment, compose([f"experiment={experiment}", f"profile={profile}"]), 1, False, "float32",
                      target)
    for _ in range(2):
        w.step()
    sync()
    ready.wait()
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            w.step()
        sync()
        seconds.append((time.perf_counter() - start) / steps)
    results.put(seconds)


def side_by_side(profile: str, experiment: str, processes: int, threads: int, repeats: int, steps: int,
                 device: str) -> dict:
    """P one-seed processes at once: each one's median step, and their runs per hour together."""
    spawn = mp.get_context("spawn")  # CUDA needs a fresh process
    ready, results = spawn.Barrier(processes), spawn.Queue()
    workers = [spawn.Process(target=one_of_many, args=(profile, experiment, threads, repeats, steps, device, ready,
                                                        results)) for _ in range(processes)]
    for p in workers:
        p.start()
    timed = [results.get() for _ in workers]
    for p in workers:
        p.join()
    cfg = compose([f"experiment={experiment}", f"profile={profile}"])
    medians = [statistics.median(s) for s in timed]
    run_steps = scaled(cfg, cfg.train.steps)
    return {"setting": experiment, "n_blocks": cfg.model.n_blocks, "batch_size": cfg.train.batch_size,
            "seed_batch": 1, "processes": processes, "compiled": False, "precision": "float32", "threads": threads,
            "ms_per_step": 1000 * statistics.median(medians),
            "time_spread": (max(medians) - min(medians)) / statistics.median(medians), "compile_s": None,
            "run_steps": run_steps, "run_s": run_steps * statistics.median(medians),
            "runs_per_hour": sum(3600 / (run_steps * m) for m in medians), "runs": repeats, "steps": steps,
            **machine_columns(pick_device(device, MEASURED_KINDS))}


def measure_groups(profile: str, settings: dict) -> list[dict]:
    rows = []
    for group in settings["groups"]:
        if "processes" in group:
            rows += [side_by_side(profile, e, group["processes"], settings["threads"], settings["repeats"],
                                  settings["steps"], settings["device"]) for e in group["experiments"]]
            continue
        rows += measure(profile, group["experiments"], group["seed_batches"], group["compile"], group["precisions"],
                        settings["threads"], settings["repeats"], settings["steps"], settings["device"])
    # each group judged against the same baseline: one seed in one process, uncompiled, float32
    separate = {(r["setting"], r["threads"]): r["runs_per_hour"] for r in rows
                if r["seed_batch"] == 1 and r["processes"] == 1 and not r["compiled"] and r["precision"] == "float32"}
    for r in rows:
        base = separate.get((r["setting"], r["threads"]))
        r["vs_separate"] = r["runs_per_hour"] / base if base else None
    return rows


if __name__ == "__main__":
    measurement_main("runs_per_hour_gpu", __doc__, measure_groups, None)
