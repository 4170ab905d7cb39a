"""Measurement `runs_per_hour` on a GPU: attnlab.measure.runs_per_hour's modes timed on CUDA, by hand on
a machine that has one (the pipeline's machines may have none, so it never schedules this; its JSON
is committed beside the CPU's and the table reads both). Settings: the profile's
measure.runs_per_hour_gpu, groups of modes measured one after another (compiling is timed only where
a group asks for it: each compile costs the GPU machine seconds of its time).

    python -m attnlab.measure.runs_per_hour_gpu --profile full \
        --out results/full/measure/runs_per_hour/runs_per_hour_gpu.json
"""

from __future__ import annotations

from attnlab.measure.runs_per_hour import measure
from attnlab.measure.throughput import measurement_main


def measure_groups(profile: str, settings: dict) -> list[dict]:
    rows = []
    for group in settings["groups"]:
        rows += measure(profile, group["experiments"], group["seed_batches"], group["compile"], group["precisions"],
                        settings["threads"], settings["repeats"], settings["steps"], settings["device"])
    # each group judged against the same baseline: one seed per process, uncompiled, float32
    separate = {(r["setting"], r["threads"]): r["runs_per_hour"] for r in rows
                if r["seed_batch"] == 1 and not r["compiled"] and r["precision"] == "float32"}
    for r in rows:
        base = separate.get((r["setting"], r["threads"]))
        r["vs_separate"] = r["runs_per_hour"] / base if base else None
    return rows


if __name__ == "__main__":
    measurement_main("runs_per_hour_gpu", __doc__, measure_groups, None)
