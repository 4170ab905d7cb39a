"""Table `pipeline_time`: what the profile's training cost, from every run's own clock (metrics.json:
train_s, device), per family."""

import pandas as pd

from attnlab.runs import load_runs
from attnlab.tables import PIPELINE_OWN, table


# what the profile's training cost, from every run's own clock: every table's runs, the contradictions' too
@table("pipeline_time", place=PIPELINE_OWN, reads=lambda jobs, variant: jobs.runs_by_family(variant), reads_tables=2)
def pipeline_time(inputs) -> pd.DataFrame:
    """Inputs: every run's metrics.json, named by family (Winograd runs as `winograd`)."""
    rows = []
    for family, paths in inputs.items():
        runs = load_runs(paths)
        for device in sorted({r["device"] for r in runs}):
            on = [r for r in runs if r["device"] == device]
            steps = sum(r.get("steps_done", r["steps"]) for r in on)
            hours = sum(r["train_s"] for r in on) / 3600
            rows.append({"family": family, "device": device, "runs": len(on), "steps": steps,
                         "train_hours": hours, "ms_per_step": 1000 * 3600 * hours / max(steps, 1)})
    df = pd.DataFrame(rows)
    total = {"family": "all", "device": ", ".join(sorted(set(df["device"]))), "runs": int(df["runs"].sum()),
             "steps": int(df["steps"].sum()), "train_hours": df["train_hours"].sum()}
    total["ms_per_step"] = 1000 * 3600 * total["train_hours"] / max(total["steps"], 1)
    return pd.concat([df, pd.DataFrame([total])], ignore_index=True)
