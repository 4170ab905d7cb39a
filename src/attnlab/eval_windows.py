"""Evaluate a finished run's checkpoint at other window lengths, without retraining.

    python -m attnlab.eval_windows results/quick/runs/position/alibi/seed0 --lengths 64 128 256 --out eval.json

Reads the run folder that `attnlab.train` wrote (config.yaml: the composed config under
`config`; checkpoint.pt: the model state under "model"; metrics.json: the run's record),
rebuilds the model and writes held-out perplexity on non-overlapping windows of each
length, with the same evaluation settings as the run (batch size, window cap, device), so
the training length reproduces the run's own number.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
from omegaconf import OmegaConf

from attnlab import data, runs
from attnlab.config import ConfigError, git_commit, model_config
from attnlab.device import pick_device
from attnlab.model import LanguageModel
from attnlab.train import mean_loss, perplexity


def load_run(run_dir: Path):
    """(composed config, model with the checkpoint's weights, the run's metrics)."""
    missing = [name for name in (runs.CONFIG, runs.CHECKPOINT, runs.METRICS) if not (run_dir / name).is_file()]
    if missing:
        raise ConfigError(f"run folder {run_dir} lacks {missing}: it is not a finished attnlab.train run")
    [metrics] = runs.load_runs([run_dir / runs.METRICS])
    try:
        ckpt = runs.read_checkpoint(run_dir / runs.CHECKPOINT, metrics["config_hash"])
    except runs.CheckpointError as e:
        raise ConfigError(f"{e}: rerun the training") from e
    cfg = OmegaConf.create(runs.run_config(run_dir / runs.METRICS))
    model = LanguageModel(model_config(cfg))
    model.load_state_dict(ckpt["model"])
    return cfg, model, metrics


def evaluate(run_dir: Path, lengths: list[int], device: str | None = None, threads: int | None = None) -> dict:
    """Held-out perplexity of the run's final model on windows of each length."""
    cfg, model, metrics = load_run(run_dir)
    mcfg = model.cfg
    if mcfg.positions == "learned":
        too_long = [n for n in lengths if n > mcfg.table_positions]
        if too_long:
            raise ConfigError(f"lengths {too_long} exceed the learned position table of {run_dir} "
                              f"({mcfg.table_positions} rows); retrain with model.max_positions >= {max(too_long)}")
    data.prepare(cfg.data, cfg.profile.max_chars)  # a clone has no cache: it is rebuilt from the corpus
    _, held_out, _ = data.load_tokens(cfg.data.dir)
    target = pick_device(device or cfg.train.device)
    if target.type == "cpu":
        torch.use_deterministic_algorithms(True)  # as in training: the same numbers on every rerun
    if threads:
        torch.set_num_threads(threads)
    model.to(target)
    max_windows = cfg.profile.eval_max_windows
    ppl, windows = {}, {}
    for n in lengths:
        windows[str(n)] = len(data.eval_windows(held_out, n, max_windows)[0])  # raises if n does not fit
        loss = mean_loss(model, held_out, n, cfg.train.eval_batch_size, max_windows, target)
        # a diverged run has no perplexity, as in its own metrics.json
        ppl[str(n)] = None if metrics["diverged"] else perplexity(loss)
    return {"run_dir": str(run_dir), "run": metrics, "training_length": mcfg.context, "lengths": lengths,
            "held_out_ppl": ppl, "windows": windows, "device": str(target), "evaluated_at": git_commit()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="folder written by attnlab.train")
    parser.add_argument("--lengths", type=int, nargs="+", required=True, help="window lengths in tokens")
    parser.add_argument("--out", type=Path, required=True, help="JSON to write")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda", "mps"], help="default: the run's train.device")
    parser.add_argument("--threads", type=int, help="torch CPU threads")
    args = parser.parse_args(argv)
    bad = [n for n in args.lengths if n <= 0]
    if bad:
        sys.exit(f"error: --lengths {bad} must be positive whole numbers")
    try:
        result = evaluate(args.run_dir, args.lengths, args.device, args.threads)
    except (ConfigError, data.DataError) as e:
        sys.exit(f"error: {e}")
    data.write_json(args.out, result)
    print(json.dumps(result["held_out_ppl"]))


if __name__ == "__main__":
    main()
