"""Measurement `runs_per_hour`: how many training runs of an experiment one process finishes per hour,
one seed per process (the pipeline's way) or K seeds folded into one model (train.seed_batch=K,
attnlab.seed_batch), with and without torch.compile (train.compile), in float32 and bf16 (train.precision).

For each experiment of the profile (measure.runs_per_hour) and each mode, the step is the one
attnlab.train takes: training_step of one seed's model, or of the K seeds' folded one, on the experiment's shapes
and batch (random tokens), every mode's models alive at once. Each mode's first step is timed alone
(with compile it compiles the forward and the backward), then the modes' timed runs of `steps` steps
are interleaved `repeats` times, as attnlab.measure.throughput does, and the median taken.

    run seconds    = (experiment steps x seconds per step + compile seconds) / K
    runs_per_hour  = 3600 / run seconds
    vs_separate    = runs_per_hour / the one-seed, uncompiled float32 row's (same experiment, threads)

The compile seconds (compiled modes) are the first step's time less a steady step's, compiled without
the on-disk caches (a fresh machine's cost). Evaluation is left out: each
seed is evaluated on its own in every mode, so it adds the same time per run to all of them.

    python -m attnlab.measure.runs_per_hour --profile quick --out runs_per_hour.json
"""

from __future__ import annotations

import itertools
import statistics
import time
from functools import partial

import torch
from omegaconf import DictConfig

from attnlab.config import compose, model_config, scaled
from attnlab.device import MEASURED_KINDS, pick_device
from attnlab.measure.timing import Workload, machine_columns, measurement_main, time_interleaved
from attnlab.model import LanguageModel
from attnlab.seed_batch import SeedBatch
from attnlab.train import make_optimizer, training_step


def mode_workload(experiment: str, cfg: DictConfig, seed_batch: int, compiled: bool, precision: str,
                  device: torch.device) -> Workload:
    """One mode of one experiment (cfg: its composed config): K fresh models (seeds 0..K-1) and a step
    over one random batch each."""
    mcfg, t = model_config(cfg), cfg.train
    torch.manual_seed(0)
    x, y = torch.randint(mcfg.vocab_size, (2, seed_batch, t.batch_size, mcfg.context), device=device)
    models = []
    for seed in range(seed_batch):
        torch.manual_seed(seed)
        models.append(LanguageModel(mcfg).to(device))

    if seed_batch == 1:
        model, optimizer, x, y = models[0], make_optimizer(models[0].parameters(), t), x[0], y[0]
        if compiled:
            model.compile()
    else:
        batch = SeedBatch(models, partial(make_optimizer, t=t), [None] * seed_batch, compiled)
        model, optimizer = batch.folded, batch.optimizer
    step = partial(training_step, model, optimizer, lambda: model(x, y)[1], precision, device.type, t.grad_clip)
    columns = {"setting": experiment, "n_blocks": mcfg.n_blocks, "batch_size": t.batch_size,
               "seed_batch": seed_batch, "processes": 1, "compiled": compiled, "precision": precision,
               "run_steps": scaled(cfg, t.steps)}
    return Workload(columns, step, 0, seed_batch * t.batch_size * mcfg.context)


def measure(profile: str, experiments: list[str], seed_batches: list[int], compile_modes: list[bool],
            precisions: list[str], threads: int, repeats: int, steps: int, device: str = "cpu") -> list[dict]:
    target = pick_device(device, MEASURED_KINDS)
    if target.type == "cpu":
        torch.use_deterministic_algorithms(True)  # as attnlab.train runs on a CPU: the same kernels
    sync = torch.cuda.synchronize if target.type == "cuda" else (lambda: None)
    own_threads = torch.get_num_threads()
    workloads, first_step = [], []
    # every compiled mode keeps its own graphs, and compiles from scratch, as a job on a fresh machine pays
    # it: no mode (nor this process) reuses the graphs an earlier one left in inductor's and AOTAutograd's
    # on-disk caches; the process's own settings come back afterwards, as its thread count does
    with torch._dynamo.config.patch(cache_size_limit=64), torch._inductor.config.patch(fx_graph_cache=False), \
            torch._functorch.config.patch(enable_autograd_cache=False):
        try:
            torch.set_num_threads(threads)
            for experiment in experiments:
                cfg = compose([f"experiment={experiment}", f"profile={profile}"])
                for k, compiled, precision in itertools.product(seed_batches, compile_modes, precisions):
                    w = mode_workload(experiment, cfg, k, compiled, precision, target)
                    sync()
                    start = time.perf_counter()
                    w.step()  # compiles, where compiled
                    sync()
                    first_step.append(time.perf_counter() - start)
                    workloads.append(w)
                    print(f"runs_per_hour: {experiment} K={k} compile={compiled} {precision}: first step "
                          f"{first_step[-1]:.1f} s", flush=True)
            seconds = time_interleaved(workloads, [threads], 1, repeats, steps, sync, "runs_per_hour")
        finally:
            torch.set_num_threads(own_threads)
    machine = machine_columns(target)
    rows = []
    for (i, n), runs in seconds.items():
        w, median = workloads[i], statistics.median(runs)
        k = w.columns["seed_batch"]
        compile_s = max(0.0, first_step[i] - median) if w.columns["compiled"] else None
        run_s = (w.columns["run_steps"] * median + (compile_s or 0.0)) / k
        rows.append({**w.columns, "threads": n, "ms_per_step": 1000 * median,
                     "time_spread": (max(runs) - min(runs)) / median, "compile_s": compile_s,
                     "run_s": run_s, "runs_per_hour": 3600 / run_s, "runs": repeats, "steps": steps, **machine})
    separate = {(r["setting"], r["threads"]): r["runs_per_hour"] for r in rows
                if r["seed_batch"] == 1 and not r["compiled"] and r["precision"] == "float32"}
    for r in rows:
        base = separate.get((r["setting"], r["threads"]))
        r["vs_separate"] = r["runs_per_hour"] / base if base else None
    return rows


def main(argv: list[str] | None = None) -> None:
    def measure_profile(profile: str, sizes: dict) -> list[dict]:
        return measure(profile, sizes["experiments"], sizes["seed_batches"], sizes["compile"], sizes["precisions"],
                       sizes["threads"], sizes["repeats"], sizes["steps"], sizes["device"])

    measurement_main("runs_per_hour", __doc__, measure_profile, argv)


if __name__ == "__main__":
    main()
