"""Do a CPU and a GPU train the same run alike? Rows of the published tables mix seeds trained on a GPU with
seeds trained on a CPU; this table retrains published GPU seeds on a CPU (the twins: same config, same seed,
so the same key) and compares every statistic the ledger reads from a run, the largest difference first.

A twin is trained into results/<profile>/twins/<the published folder under results/<profile>/>, which no
table but this one reads (every pair's command: workflow/README.md, Cross-device agreement):

    python -m attnlab.train experiment=ladder/block profile=full seed=1 train.device=cpu train.threads=1 \\
        hydra.run.dir=results/full/twins/runs/ladder/block/seed1
    python -m attnlab.winograd train role_block --split results/full/measure/winograd/role/split.json \\
        --out results/full/twins/measure/winograd/role/block/seed0 profile=full seed=0 train.device=cpu train.threads=1
"""

import math
from pathlib import Path

import pandas as pd

from attnlab.claims.rules import TWIN_AGREES, TWIN_BEYOND_SPREAD, TWIN_NOT_RUN, TWIN_WITHIN_SPREAD
from attnlab.runs import load_runs
from attnlab.tables import held_out, table

# One published GPU seed of each family whose rows mix devices, the cheapest row of each on a CPU at one
# thread (its CPU seeds' train_s), and the ladder's block; folders under results/<profile>/.
PAIRS = ("runs/ladder/block/seed1", "runs/ladder/average_residual/seed1", "runs/depth/two_blocks/seed0",
         "runs/scale/short_d256_divided/seed0", "runs/norm/post_warmup/seed1", "runs/position/alibi/seed0",
         "measure/winograd/category/average/seed0", "measure/winograd/role/block/seed0",
         "measure/winograd/role/two_blocks/seed0")
TWINS = "twins"  # results/<profile>/twins/<folder>
# float32 rounding, compounded over a run: what two devices computing the same run may differ by
FLOAT_TOLERANCE = 1e-3
COLUMNS = ["run", "seed", "published_device", "published", "row_seeds", "row_sd", "twin_device", "twin", "difference",
           "in_row_sds", "largest_rel_diff", "largest_in", "statistics", "float_tolerance", "verdict"]
# the statistics of a run record the ledger reads (through the tables), each a number or a dict of numbers
STATISTICS = ("held_out_ppl", "train_ppl", "final_loss", "held_out", "train", "attention")


def statistics(record: dict) -> dict[str, float]:
    """Every number of a record the ledger reads, by a dotted name (held_out_ppl.128, held_out.accuracy)."""
    found = {}

    def visit(name, value):
        if isinstance(value, dict):
            for key, inner in value.items():
                visit(f"{name}.{key}", inner)
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and not name.endswith(".sentences"):
            found[name] = float(value)
    for key in STATISTICS:
        if key in record:
            visit(key, record[key])
    return found


def headline(record: dict) -> float:
    """The run's held-out result: perplexity, or a Winograd run's held-out accuracy (percent)."""
    return held_out(record) if "held_out_ppl" in record else record["held_out"]["accuracy"]


def verdict(largest_rel_diff: float, difference: float, spread: float) -> str:
    """Float tolerance decides whether the devices compute the same run; where they do not, the row's seed
    spread decides whether the device matters beside the seed (a row mixing devices then reads as seeds)."""
    if largest_rel_diff <= FLOAT_TOLERANCE:
        return TWIN_AGREES
    return TWIN_WITHIN_SPREAD if difference <= spread else TWIN_BEYOND_SPREAD


def relative(a: float, b: float) -> float:
    return 0.0 if a == b else abs(a - b) / max(abs(a), abs(b))


def folder_of(path: str | Path) -> str:
    """A run's folder under results/<profile>/, or under its twins/: 'runs/ladder/block/seed1'."""
    parts = Path(path).parent.parts
    start = parts.index(TWINS) + 1 if TWINS in parts else max(i for i, p in enumerate(parts) if p in ("runs", "measure"))
    return "/".join(parts[start:])


def pairs(jobs, variant: bool) -> dict[str, list[str]]:
    """The published seeds of each row a pair is in, and the pairs' CPU twins trained so far
    (results/<profile>/twins/<folder>/, which no other table reads)."""
    rows = {pair.rsplit("/", 1)[0] for pair in PAIRS}
    published = [p for paths in jobs.runs_by_family(False).values() for p in paths if folder_of(p).rsplit("/", 1)[0] in rows]
    twins = [f"{jobs.results}/{TWINS}/{pair}/metrics.json" for pair in PAIRS]
    return {"runs": published, "twins": [p for p in twins if Path(p).is_file()]}


# GPU seeds of the published rows against their CPU twins: the same run on both devices
@table("cross_device", shown=("run", "seed", "published", "twin", "difference", "in_row_sds", "largest_rel_diff", "verdict"), place=320, reads=pairs, reads_tables=2)
def cross_device(inputs) -> pd.DataFrame:
    """One row per pair the profile trained on a GPU: its published and twin (CPU) run's device, held-out result
    and the largest relative difference over every statistic the ledger reads, against FLOAT_TOLERANCE and
    against the spread of the published row's seeds; a pair whose twin is not trained yet says so."""
    published = {folder_of(p): p for p in inputs.get("runs", [])}
    twins = {folder_of(p): p for p in inputs.get("twins", [])}
    rows = []
    for folder in PAIRS:
        run, = load_runs([published[folder]]) if folder in published else [None]
        if run is None or run["device"] == "cpu":
            continue  # the profile does not train this seed, or not on a GPU
        row_seeds = load_runs([p for f, p in published.items() if f.rsplit("/", 1)[0] == folder.rsplit("/", 1)[0]])
        spread = pd.Series([headline(r) for r in row_seeds]).std()
        row = {"run": folder.rsplit("/", 1)[0].removeprefix("runs/").removeprefix("measure/"), "seed": run["seed"],
               "published_device": run.get("device_name") or run["device"], "published": headline(run),
               "row_seeds": len(row_seeds), "row_sd": spread}
        if folder not in twins:
            rows.append({**row, "twin_device": "", "verdict": TWIN_NOT_RUN})
            continue
        twin, = load_runs([twins[folder]])
        if twin["config_hash"] != run["config_hash"]:
            raise ValueError(f"twin {twins[folder]} has key {twin['config_hash']}, its published run "
                             f"{run['config_hash']}: not the same run")
        ours, theirs = statistics(run), statistics(twin)
        differences = {k: relative(ours[k], theirs[k]) for k in ours if k in theirs}
        largest = max(differences, key=differences.get)
        difference = abs(headline(twin) - headline(run))
        rows.append({**row, "twin_device": twin.get("device_name") or twin["device"], "twin": headline(twin),
                     "difference": difference, "in_row_sds": difference / spread if spread > 0 else math.nan,
                     "largest_rel_diff": differences[largest], "largest_in": largest,
                     "statistics": len(differences), "float_tolerance": FLOAT_TOLERANCE,
                     "verdict": verdict(differences[largest], difference, spread)})
    return pd.DataFrame(rows, columns=COLUMNS)
