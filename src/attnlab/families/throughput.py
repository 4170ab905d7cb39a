"""Table and figure `throughput`: training speed of the project's model (fused and explicit paths)
against a reference built from nn.TransformerEncoderLayer, float32 and bf16, with the model FLOP
utilisation against the machine's matmul peak. Rows come from attnlab.measure.throughput.
Table `runs_per_hour`: whole runs per hour, one seed per process against K seeds folded into one model,
with and without compile (attnlab.measure.runs_per_hour; on a GPU attnlab.measure.runs_per_hour_gpu)."""

import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import yaml

from attnlab import style
from attnlab.plots import figure
from attnlab.tables import for_people, table

MODELS = ("fused", "explicit", "reference")  # the measurement's, in table order (not imported: no torch here)
PRECISIONS = ("float32", "bf16")
COLUMNS = ["setting", "n_blocks", "batch_size", "model", "precision", "threads", "ms_per_step", "time_spread", "steps_per_s",
           "tokens_per_s", "mflop_per_token", "gflop_per_s", "matmul_gflop_per_s", "mfu", "vs_reference", "runs",
           "steps", "device", "torch"]


@table("throughput", shown=("setting", "model", "precision", "threads", "ms_per_step", "tokens_per_s", "mfu", "vs_reference"), place=300, reads={"throughput": "measure/throughput/throughput.json"})
def throughput(inputs) -> pd.DataFrame:
    """Each setting's rows by threads, model and precision, then the matmul's."""
    df = pd.DataFrame(json.loads(open(inputs["throughput"][0]).read())["rows"]).reindex(columns=COLUMNS)
    for col in ("n_blocks", "batch_size"):
        df[col] = df[col].astype("Int64").astype(object).where(df[col].notna(), None)  # the matmul rows have none
    settings = list(dict.fromkeys(df["setting"]))  # the measurement's order: the matmul last
    order = pd.DataFrame({"setting": df["setting"].map(settings.index), "threads": df["threads"],
                          "model": df["model"].map(lambda m: MODELS.index(m) if m in MODELS else len(MODELS)),
                          "precision": df["precision"].map(PRECISIONS.index)})
    return df.loc[order.sort_values(list(order.columns)).index].reset_index(drop=True)


@figure("throughput")
def throughput_figure(inputs, context):
    """Tokens/s per model, one panel per setting; a series per precision and thread count (colour
    and hatch), the bar labels the MFU against a matmul in the same precision."""
    df = pd.read_csv(inputs["table"][0])
    trained = df[df["setting"] != "matmul"]
    settings = list(dict.fromkeys(trained["setting"]))
    threads = sorted(trained["threads"].unique())
    fig, axes = plt.subplots(len(settings), 1, figsize=(7, 1.4 + 3 * len(settings)), squeeze=False)
    bars = [(n, p) for n in threads for p in PRECISIONS]
    width = 0.8 / len(bars)
    for ax, setting in zip(axes[:, 0], settings):
        rows = trained[trained["setting"] == setting].set_index(["model", "threads", "precision"])
        x = np.arange(len(MODELS))
        for k, (n, precision) in enumerate(bars):
            values = [rows.loc[(m, n, precision)] for m in MODELS]
            drawn = ax.bar(x + (k - (len(bars) - 1) / 2) * width, [v["tokens_per_s"] for v in values], width,
                           color=style.PALETTE[k], hatch=style.HATCH if precision == "bf16" else None,
                           edgecolor="white", label=f"{precision}, {n} thread{'s' if n > 1 else ''}")
            ax.bar_label(drawn, [f"{v['mfu']:.0%}" for v in values], fontsize=6, padding=1)
        blocks, batch = int(rows["n_blocks"].iloc[0]), int(rows["batch_size"].iloc[0])
        ax.set_title(f"{setting}: {blocks} block{'s' if blocks > 1 else ''}, batch {batch}", fontsize=9)
        ax.set_xticks(x, MODELS)
        ax.set_ylabel("training tokens/s (median of runs)")
    style.headline(fig, "The project's model trains as fast as PyTorch's own layers; bf16 buys speed, not MFU",
                   context.profile, f"{df['device'].iloc[0]}, torch {df['torch'].iloc[0]}",
                   "bar labels: MFU against a matmul in the same precision")
    style.legend_below(fig)
    return fig


RUNS_PER_HOUR_COLUMNS = ["setting", "n_blocks", "batch_size", "seed_batch", "processes", "compiled", "precision", "threads",
                         "ms_per_step", "time_spread", "compile_s", "run_steps", "run_s", "runs_per_hour", "vs_separate",
                         "runs", "steps", "device", "torch"]


NOT_ON_A_GPU = "not measured on a GPU yet"


def gpu_rows(jobs, variant: bool) -> dict:
    """The measuring machine's runs_per_hour and the GPU's rows: measured by hand where there is one
    (attnlab.measure.runs_per_hour_gpu) and committed; until then the profile's GPU modes
    (measure.runs_per_hour_gpu), each row saying it was not measured."""
    gpu = f"{jobs.results}/measure/runs_per_hour/runs_per_hour_gpu.json"
    rows = {"runs_per_hour_gpu": [gpu]} if Path(gpu).exists() else \
        {"gpu_modes": [f"configs/profile/{jobs.profile}.yaml"]} if "runs_per_hour_gpu" in jobs.profile_config.measure else {}
    return {"runs_per_hour": [f"{jobs.results}/measure/runs_per_hour/runs_per_hour.json"], **rows}


def measured_rows(df: pd.DataFrame, chapter: dict) -> pd.DataFrame:
    """The reader's view of runs_per_hour: the rows measured (a GPU mode not measured yet is a row of the CSV, with
    no number); which machine measured a row, where they differ (one machine: its provenance view says which)."""
    rows = df[df["device"] != NOT_ON_A_GPU].reset_index(drop=True)
    shown, _ = for_people(rows.assign(machine=rows["device"]) if rows["device"].nunique() > 1 else rows, shared_columns=())
    return shown[[c for c in ("machine", "setting", "seed_batch", "compiled", "precision", "ms_per_step", "runs_per_hour",
                              "vs_separate") if c in shown]]


@table("runs_per_hour", view=measured_rows, place=310, reads=gpu_rows)
def runs_per_hour(inputs) -> pd.DataFrame:
    """The measuring machine's rows, then the GPU's (runs_per_hour_gpu: measured by hand, committed; or,
    where none was, the profile's GPU modes, gpu_modes, each saying so), each machine's by setting, then
    seeds per batch, compiled or not, precision."""
    def measured(name):  # rows measured before `processes` was a column ran in one process
        return [{"processes": 1, **r} for r in json.loads(open(inputs[name][0]).read())["rows"]]

    rows = measured("runs_per_hour")
    if "runs_per_hour_gpu" in inputs:
        rows += measured("runs_per_hour_gpu")
    elif "gpu_modes" in inputs:
        groups = yaml.safe_load(open(inputs["gpu_modes"][0]))["measure"]["runs_per_hour_gpu"]["groups"]
        rows += [{"setting": e, "seed_batch": k, "processes": g.get("processes", 1), "compiled": c, "precision": p,
                  "device": NOT_ON_A_GPU}
                 for g in groups for e in g["experiments"] for k in g.get("seed_batches", [1])
                 for c in g.get("compile", [False]) for p in g.get("precisions", ["float32"])]
    df = pd.DataFrame(rows).reindex(columns=RUNS_PER_HOUR_COLUMNS)
    devices, settings = list(dict.fromkeys(df["device"])), list(dict.fromkeys(df["setting"]))
    order = pd.DataFrame({"device": df["device"].map(devices.index), "setting": df["setting"].map(settings.index),
                          "processes": df["processes"], "seed_batch": df["seed_batch"], "compiled": df["compiled"],
                          "precision": df["precision"].map(PRECISIONS.index)})
    return df.loc[order.sort_values(list(order.columns), kind="stable").index].reset_index(drop=True)
