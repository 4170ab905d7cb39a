"""What share of a training run's time its evaluations take, at a profile's settings.

    python -m attnlab.measure.eval_cost ladder/block norm/pre_warmup --profile full [hydra overrides, e.g. train.precision=bf16]

For each experiment: the model and data exactly as `attnlab.train` builds them (the profile's
token cache, built by the pipeline or here), then `repeats` rounds of `steps` timed training steps
(attnlab.train's `training_step`, as every run takes it) followed by one timed held-out evaluation (interleaved, so a busy
machine slows both alike), and one timed train-split perplexity. The run's evaluations are
its held-out evaluation at step 0, every `train.eval_interval` and at the end, plus the train
perplexity where `train.eval_train` is on; their share is of training steps + evaluations. Timing
only: nothing here is a result of the chapter's, so it is not part of the DAG.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from attnlab import data
from attnlab.config import ConfigError, compose, model_config, scaled
from attnlab.model import LanguageModel
from attnlab.train import Corpus, make_optimizer, training_step


def measure(experiment: str, profile: str, steps: int, repeats: int, overrides: list[str] = ()) -> dict:
    cfg = compose([f"experiment={experiment}", f"profile={profile}", *overrides])
    mcfg, t, cpu = model_config(cfg), cfg.train, torch.device("cpu")
    task = Corpus(cfg, mcfg)
    torch.manual_seed(cfg.seed)
    model = LanguageModel(mcfg)
    optimizer = make_optimizer(model.parameters(), t)
    batches = torch.Generator().manual_seed(cfg.seed)
    step_s, eval_s = [], []
    for _ in range(repeats):
        for _ in range(steps):
            x, y = task.batch(batches)
            tick = time.perf_counter()
            training_step(model, optimizer, lambda: model(x, y)[1], t.precision, cpu.type, t.grad_clip)
            step_s.append(time.perf_counter() - tick)
        tick = time.perf_counter()
        task.evaluate(model, cpu)
        eval_s.append(time.perf_counter() - tick)
    train_ppl_s = 0.0
    if t.eval_train:
        tick = time.perf_counter()
        task.ppl(model, task.train_tokens, t.eval_lengths[0], cpu)
        train_ppl_s = time.perf_counter() - tick

    run_steps, every = scaled(cfg, t.steps), scaled(cfg, t.eval_interval)
    evaluations = len(range(0, run_steps, every)) + 1  # step 0, every interval, the end
    step = statistics.median(step_s[1:] or step_s)  # the first step warms up
    held_out = statistics.median(eval_s)
    evaluating_s = evaluations * held_out + train_ppl_s
    return {"experiment": experiment, "profile": profile, "steps": run_steps, "step_s": step,
            "evaluations": evaluations, "held_out_s": held_out, "train_ppl_s": train_ppl_s,
            "evaluating_s": evaluating_s, "share": evaluating_s / (run_steps * step + evaluating_s)}


def describe(m: dict) -> str:
    return (f"{m['experiment']} ({m['profile']}): {m['steps']} steps × {m['step_s'] * 1e3:.0f} ms; "
            f"{m['evaluations']} held-out evaluations × {m['held_out_s']:.2f} s + train perplexity "
            f"{m['train_ppl_s']:.1f} s = {m['evaluating_s']:.0f} s, {100 * m['share']:.1f} % of the run")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("args", nargs="+", help="experiments (ladder/block ...), then Hydra overrides (key=value)")
    parser.add_argument("--profile", default="full")
    parser.add_argument("--steps", type=int, default=6, help="timed training steps between evaluations")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_intermixed_args(argv)
    torch.set_num_threads(args.threads)
    overrides = [a for a in args.args if "=" in a]
    try:
        for experiment in (a for a in args.args if "=" not in a):
            print(describe(measure(experiment, args.profile, args.steps, args.repeats, overrides)), flush=True)
    except (ConfigError, data.DataError) as e:
        sys.exit(f"error: {e}")


if __name__ == "__main__":
    main()
