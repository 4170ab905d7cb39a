"""The one training loop, and the Hydra app that runs it: one run = one composed config, one
seed, one output folder (train.seed_batch=K: K seeds of that config, each in its own folder).

    python -m attnlab.train experiment=ladder/average train.steps=50

train() writes the run folder of attnlab.runs into hydra.run.dir: curve.csv, evals.csv,
checkpoint.pt, metrics.json and, last, config.yaml. A killed run resumes from its checkpoint and
ends with the same numbers as an uninterrupted one. A loss that becomes NaN/inf stops the run,
recorded as diverged. What a run learns from and how it is scored is its task: next-token
prediction on the corpus (Corpus) or the Winograd sentences (attnlab.winograd.Sentences).
"""

from __future__ import annotations

import logging
import math
import os
import platform
import re
import sys
import time
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

import hydra
import torch
import torch.nn.functional as F
from torch import nn
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from attnlab import data, runs
from attnlab.config import (ROOT, ConfigError, ablations, check_train, compose, config_hash, experiments, git_commit,
                            model_config, scaled, seed_config)
from attnlab.device import device_name, pick_device
from attnlab.model import LanguageModel, autocast
from attnlab.seed_batch import SeedBatch

log = logging.getLogger("attnlab.train")
# hand-made runs land in outputs/<profile>/<experiment or default>/<overrides or default>/seed<k>/ (configs/config.yaml)
OmegaConf.register_new_resolver("or_default", lambda value: "default" if value in (None, "None", "") else value,
                                replace=True)


def training_step(model: nn.Module, optimizer, loss_of: Callable[[], torch.Tensor], precision: str,
                  device_type: str, grad_clip: float | None = None) -> torch.Tensor:
    """One step as every run takes it: forward and loss (autocast in bf16), then, if the loss is
    finite, backward, the global gradient norm clipped at grad_clip by the model's own clip_grad_norm_
    (None: not clipped) and the optimizer's step. Returns the loss; a non-finite one leaves the model untouched (the run records
    it as diverged). `model` is one seed's model, or K seeds' (attnlab.seed_batch.FoldedSeeds: loss_of
    gives the K losses, and none is stepped if any is not finite). The throughput, eval-cost and
    runs-per-hour measurements time this same function."""
    with autocast(precision, device_type):
        loss = loss_of()
    if not torch.isfinite(loss).all():
        return loss
    optimizer.zero_grad(set_to_none=True)
    loss.sum().backward()  # K seeds folded (FoldedSeeds): they share no weight, so each gets its own loss's gradient
    if grad_clip:
        model.clip_grad_norm_(grad_clip)  # K folded seeds: each seed's norm on its own
    optimizer.step()
    return loss


def is_query_key(name: str) -> bool:
    """Whether a model's parameter, by its name (blocks.0.mixer.q.weight), is an attention block's W_q or W_k
    (or, with model.qkv_bias, their bias)."""
    return re.search(r"(^|\.)mixer\.[qk]\.(weight|bias)$", name) is not None


def parameter_names(model: nn.Module) -> list[str]:
    """The names of model.parameters(), in their order: what make_optimizer finds W_q and W_k by (K folded
    seeds, attnlab.seed_batch, have the separate model's parameters in its order)."""
    return [name for name, _ in model.named_parameters()]


def make_optimizer(params, t: DictConfig, names: list[str] | None = None) -> torch.optim.AdamW:
    """The optimizer of every run: AdamW with the train config's lr, betas and weight decay.

    train.qk_lr_scale = c other than 1 gives W_q and W_k (found by `names`, the parameters' names in order:
    parameter_names) a group of their own at lr*c and weight decay wd/c; each group's lr_scale is what
    set_learning_rate multiplies the schedule's rate by. Why: the undivided head whose W_q, W_k start c times
    smaller (model.qk_init_scale = c = d_k^(-1/4)) computes the divided head's scores, c^2 q.k = q.k/sqrt(d_k).
    To stay W' = cW it must step c times less; its gradients are 1/c larger, which Adam's normalised step does
    not see (but through eps), so the rate takes the c. AdamW's decoupled decay, lr*wd*W', is then already c
    smaller through W' and would be c^2 smaller with lr*c: wd/c keeps lr*wd, the divided head's relative decay.
    (Gradient clipping, train.grad_clip, sees the 1/c larger gradients: with it the two heads differ.)
    At c = 1: the one group of every published run, as their checkpoints hold it."""
    scale = t.qk_lr_scale
    if scale == 1.0:
        return torch.optim.AdamW(params, lr=t.lr, betas=tuple(t.betas), weight_decay=t.weight_decay)
    params = list(params)
    if names is None or len(names) != len(params):
        raise ValueError(f"train.qk_lr_scale={scale} needs the parameters' names to find W_q and W_k: "
                         f"make_optimizer(params, t, parameter_names(model))")
    query_key = [is_query_key(name) for name in names]
    if not any(query_key):
        raise ConfigError(f"train.qk_lr_scale={scale} but the model has no W_q, W_k (model.query_key, "
                          "model.mixer=attention); leave it at 1.0")
    groups = [{"params": [p for p, qk in zip(params, query_key) if not qk], "lr_scale": 1.0},
              {"params": [p for p, qk in zip(params, query_key) if qk], "lr_scale": scale, "lr": t.lr * scale,
               "weight_decay": t.weight_decay / scale}]
    return torch.optim.AdamW(groups, lr=t.lr, betas=tuple(t.betas), weight_decay=t.weight_decay)


def set_learning_rate(optimizer: torch.optim.Optimizer, lr: float) -> None:
    """The schedule's rate for this step (learning_rate) in every group, times the group's lr_scale
    (make_optimizer: W_q and W_k's train.qk_lr_scale), so warmup and decay act on every group alike."""
    for group in optimizer.param_groups:
        group["lr"] = lr * group.get("lr_scale", 1.0)


def learning_rate(step: int, lr: float, warmup: int, steps: int, schedule: str) -> float:
    """Linear warmup from 0 over `warmup` steps, then constant or cosine to 0."""
    if step < warmup:
        return lr * (step + 1) / warmup
    if schedule == "cosine":
        return lr * 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))
    return lr


def perplexity(mean_loss: float) -> float | None:
    return math.exp(mean_loss) if math.isfinite(mean_loss) and mean_loss < 700 else None


@torch.inference_mode()
def mean_loss(model, tokens, length: int, batch_size: int, max_windows: int | None, device) -> float:
    """Mean next-token cross-entropy over every position of every non-overlapping window."""
    model.eval()
    x, y = data.eval_windows(tokens, length, max_windows)
    total = 0.0
    for i in range(0, len(x), batch_size):
        logits, _, _ = model(x[i:i + batch_size].to(device))
        total += F.cross_entropy(logits.flatten(0, 1).float(), y[i:i + batch_size].to(device).flatten(),
                                 reduction="sum").item()
    model.train()
    return total / y.numel()


@torch.inference_mode()
def attention_stats(model, x: torch.Tensor) -> dict:
    """Per attention block, from the explicit path on windows x: score std over the causal
    entries, mean row entropy (nats), the share of rows with > runs.ONEHOT_WEIGHT of their weight on one
    token and the median gap between a row's largest and second-largest score (a collapsed head's
    gap grows with its scores, so a row's collapse reads off it directly). Row 0 sees one token and
    is one-hot by construction, so it is left out."""
    model.eval()
    _, _, attentions = model(x, explicit=True)
    model.train()
    stats = {}
    for i, att in enumerate(attentions, start=1):
        if att is None or att["scores"] is None:
            continue
        scores, weights = att["scores"][..., 1:, :], att["weights"][..., 1:, :]
        finite = torch.isfinite(scores)
        stats[f"block{i}_score_std"] = scores[finite].std().item()
        plogp = torch.where(weights > 0, weights * weights.log(), torch.zeros_like(weights))
        stats[f"block{i}_entropy"] = (-plogp.sum(-1)).mean().item()
        stats[f"block{i}_onehot_share"] = (weights.max(-1).values > runs.ONEHOT_WEIGHT).float().mean().item()
        top2 = scores.masked_fill(~finite, float("-inf")).topk(2, dim=-1).values
        stats[f"block{i}_top_margin"] = (top2[..., 0] - top2[..., 1]).median().item()
    return stats


def _resume_point(path: Path, expected_hash: str):
    """The checkpoint to resume from, or None (with a warning): a bad one is never trusted."""
    if not path.exists():
        return None
    try:
        return runs.read_checkpoint(path, expected_hash)
    except runs.CheckpointError as e:
        log.warning("%s; starting from scratch", e)
        return None


class Corpus:
    """Next-token prediction on the corpus: the task of every run but the Winograd probe's.

    A task is what train() needs beyond the model: batch(generator) -> (inputs, targets) of one
    step; evaluate(model, device) -> a row of evals.csv; results(model, device, final, diverged,
    run_dir) -> its entries of metrics.json (final: the last evaluation), writing its own files."""

    def __init__(self, cfg: DictConfig, mcfg):
        if cfg.data.corpus.get("local"):  # a named copy must exist and be the corpus, cache or not
            data.fetch_corpus(cfg.data.corpus)
        data.prepare(cfg.data, cfg.profile.max_chars)  # no-op when the pipeline built the cache
        self.train_tokens, self.held_out, meta = data.load_tokens(cfg.data.dir)
        if meta["vocab_size"] != mcfg.vocab_size:
            raise ConfigError(f"model.vocab_size={mcfg.vocab_size} but the tokenizer has {meta['vocab_size']} tokens")
        if mcfg.context >= len(self.train_tokens):
            raise ConfigError(f"model.context={mcfg.context} is longer than the training split "
                              f"({len(self.train_tokens)} tokens)")
        t = cfg.train
        too_long = [n for n in t.eval_lengths if n >= len(self.held_out)]  # a window needs length + 1 tokens
        if too_long:
            raise ConfigError(f"train.eval_lengths has {too_long}, longer than the held-out split allows "
                              f"({len(self.held_out)} tokens); allowed: lengths <= {len(self.held_out) - 1}")
        self.t, self.context, self.max_windows = t, mcfg.context, cfg.profile.eval_max_windows
        self.stats_windows = data.eval_windows(self.held_out, mcfg.context, 8)[0]

    def batch(self, generator: torch.Generator):
        return data.random_batch(self.train_tokens, self.t.batch_size, self.context, generator)

    def ppl(self, model, tokens, length: int, device) -> float | None:
        return perplexity(mean_loss(model, tokens, length, self.t.eval_batch_size, self.max_windows, device))

    def evaluate(self, model, device) -> dict:
        record = {f"held_out_ppl_{n}": self.ppl(model, self.held_out, n, device) for n in self.t.eval_lengths}
        if self.t.attention_stats:
            record.update(attention_stats(model, self.stats_windows.to(device)))
        return record

    def results(self, model, device, final: dict, diverged: bool, run_dir: Path) -> dict:
        t = self.t
        out = {"held_out_ppl": {str(n): None if diverged else final[f"held_out_ppl_{n}"] for n in t.eval_lengths},
               "train_ppl": self.ppl(model, self.train_tokens, t.eval_lengths[0], device)
               if t.eval_train and not diverged else None}
        if t.attention_stats:
            out["attention"] = {k: v for k, v in final.items() if k.startswith("block")}
        return out


def seed_folders(seeds: list[int], run_dir: Path) -> dict[int, Path]:
    """Where each seed of the call writes: run_dir for the first and, with train.seed_batch=K, the
    sibling folders seed<k> for the next K - 1 seeds (the pipeline's and a hand run's layout)."""
    first = seeds[0]
    if len(seeds) == 1:
        return {first: run_dir}
    if run_dir.name != f"seed{first}":
        raise ConfigError(f"train.seed_batch={len(seeds)} writes seeds {first}..{seeds[-1]} "
                          f"into sibling folders seed<k>, so the run folder must be named seed{first}, "
                          f"not {run_dir.name!r}")
    return {seed: run_dir.with_name(f"seed{seed}") for seed in seeds}


def seed_overrides(overrides, seed: int, first_seed: int) -> list[str]:
    """One seed's command line: the call's, its seed replaced."""
    if seed == first_seed:
        return list(overrides)
    return [o for o in overrides if o.split("=")[0] != "seed"] + [f"seed={seed}"]


def utc_now() -> str:
    """The time now in UTC, to the second (ISO 8601): when a run started and finished."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def train(cfg: DictConfig, run_dir: Path, name: str = "run", overrides: list[str] = (), task=None) -> dict:
    """Train (or resume) one run into run_dir and return its metrics (with train.seed_batch=K, the
    next K - 1 seeds are trained with it, into the folders beside it: train_seeds)."""
    return train_seeds(cfg, run_dir, name, overrides, task)[0]


def train_seeds(cfg: DictConfig, run_dir: Path, name: str = "run", overrides: list[str] = (), task=None) -> list[dict]:
    """Train (or resume) the call's seeds and return the metrics of each: cfg.seed into run_dir and,
    with train.seed_batch=K, the next K - 1 seeds beside it, all K as one batched model
    (attnlab.seed_batch). `name` labels the run, `overrides` are the command line it was composed
    from (recorded), `task` its data and scorer (default: Corpus)."""
    # everything the config decides, read once before anything is built: the model, the step counts, and each
    # seed's own config and its hash (the key its checkpoint and metrics carry)
    check_train(cfg)
    source = git_commit()  # read before training: edits made while it runs are not its code
    mcfg, t = model_config(cfg), cfg.train
    steps, eval_every = scaled(cfg, t.steps), scaled(cfg, t.eval_interval)
    seed_cfgs = [seed_config(cfg, seed) for seed in range(cfg.seed, cfg.seed + t.seed_batch)]
    digests = [config_hash(seed_cfg) for seed_cfg in seed_cfgs]
    if steps != t.steps:
        log.info("profile %s runs %d of train.steps=%d (budget %g; warmup %d is not scaled)",
                 cfg.profile.name, steps, t.steps, cfg.profile.budget, t.warmup_steps)
    task = task or Corpus(cfg, mcfg)
    folders = seed_folders([seed_cfg.seed for seed_cfg in seed_cfgs], run_dir)

    device = pick_device(t.device)
    if device.type == "cpu":
        torch.use_deterministic_algorithms(True)  # the same config and seed give the same bits
    if t.threads:
        torch.set_num_threads(t.threads)

    seed_runs = [start_seed(seed_cfg, digest, mcfg, folder, device, source, seed_overrides(overrides, seed, cfg.seed))
                 for seed_cfg, digest, (seed, folder) in zip(seed_cfgs, digests, folders.items())]
    training = Training(cfg, mcfg, seed_runs, task, device, name, steps, eval_every)
    training.run()
    return [training.results[seed] for seed in folders]


def start_seed(seed_cfg: DictConfig, digest: str, mcfg, folder: Path, device, source: dict, overrides: list[str]
               ) -> SimpleNamespace:
    """One seed's run as its separate run would hold it: its config (and hash), model, optimizer and batch
    generator, fresh or from its checkpoint in `folder`, and its state (step, curve, evals, the code it trained
    with)."""
    seed = seed_cfg.seed
    torch.manual_seed(seed)
    model = LanguageModel(mcfg).to(device)
    optimizer = make_optimizer(model.parameters(), seed_cfg.train, parameter_names(model))
    batches = torch.Generator().manual_seed(seed)
    folder.mkdir(parents=True, exist_ok=True)
    state = {"step": 0, "curve": [], "evals": [], "diverged_step": None, "train_s": 0.0}
    ckpt = _resume_point(folder / runs.CHECKPOINT, digest)
    if ckpt is not None:
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        batches.set_state(ckpt["batches"])
        state = ckpt["state"]
        log.info("seed %d: resuming from step %d", seed, state["step"])
    # the code each process trained with: a run resumed under another commit says so in its metrics
    sources = state.setdefault("sources", [])
    state.setdefault("started_at", utc_now())
    if not sources or {k: sources[-1].get(k) for k in source} != source:
        sources.append({**source, "from_step": state["step"]})
    return SimpleNamespace(cfg=seed_cfg, dir=folder, digest=digest, model=model, optimizer=optimizer,
                           batches=batches, state=state, overrides=overrides)


class Training:
    """The seeds of one call, trained step by step to `steps`: the seeds still to train (`active`) as one
    seed's own model or, with several, folded into one batched model (SeedBatch); each seed's files written
    when it finishes or diverges (`results`: seed -> its metrics)."""

    def __init__(self, cfg: DictConfig, mcfg, seed_runs: list, task, device, name: str, steps: int, eval_every: int):
        self.cfg, self.t, self.task, self.device, self.name, self.steps = cfg, cfg.train, task, device, name, steps
        self.seed_runs, self.eval_every = seed_runs, eval_every
        self.tokens_per_step = self.t.batch_size * mcfg.context
        self.active = [r for r in seed_runs if r.state["step"] < steps and r.state["diverged_step"] is None]
        self.batch = None
        self.results = {}  # seed -> metrics, filled as each seed finishes
        if len(seed_runs) > 1 and self.active:
            if len({r.state["step"] for r in self.active}) > 1:
                raise ConfigError(f"seeds {[r.cfg.seed for r in self.active]} resume from different steps "
                                  f"{[r.state['step'] for r in self.active]}: train them without train.seed_batch")
            self.batch = SeedBatch([r.model for r in self.active],
                                   partial(make_optimizer, t=self.t, names=parameter_names(self.active[0].model)),
                                   [r.optimizer.state_dict() if r.optimizer.state else None for r in self.active],
                                   self.t.compile)
        elif self.t.compile:
            seed_runs[0].model.compile()

    def run(self) -> None:
        """Evaluate at step 0, then step, evaluate and checkpoint until every seed finished or diverged."""
        for r in self.seed_runs:
            if not r.state["evals"]:
                r.state["evals"].append({"step": 0, **self.task.evaluate(r.model, self.device)})
        seeds = [r.cfg.seed for r in self.seed_runs]
        label = self.name if len(seeds) == 1 else f"{self.name} seeds {min(seeds)}-{max(seeds)}"
        first = min((r.state["step"] for r in self.active), default=self.steps)
        bar = tqdm(total=self.steps, initial=first, desc=label, mininterval=5, dynamic_ncols=True, file=sys.stderr)
        while self.active and self.active[0].state["step"] < self.steps:
            losses = self.step()
            if not self.active:
                break
            bar.update(1)
            done = self.active[0].state
            tokens_per_s = len(self.active) * self.tokens_per_step * done["step"] / max(done["train_s"], 1e-9)
            bar.set_postfix(loss=f"{losses[0].item():.3f}", tok_s=f"{tokens_per_s:,.0f}", refresh=False)
            self.evaluate_and_checkpoint()
        bar.close()
        for i, (r, model) in enumerate(zip(self.active, self.current_models())):
            self.finish(r, model, self.optimizer_state(i))
        for r in self.seed_runs:  # seeds that had finished before this call: written again from their checkpoint
            if r.cfg.seed not in self.results:
                self.finish(r, r.model, r.optimizer.state_dict())

    def step(self) -> torch.Tensor:
        """One training step of the active seeds on their next batches; a seed whose loss is not finite is
        recorded as diverged and finished, and the others take the step again without it. Their losses, (K,)."""
        step = self.active[0].state["step"]
        tick = time.perf_counter()
        # the warmup is not scaled by a profile's budget: see configs/train/default.yaml
        lr = learning_rate(step, self.t.lr, self.t.warmup_steps, self.steps, self.t.schedule)
        drawn = [self.task.batch(r.batches) for r in self.active]
        if self.batch is None:  # one seed: the separate run's own model
            x, y = (v.to(self.device) for v in drawn[0])
        else:  # K seeds: (K, batch, context)
            x, y = (torch.stack(v).to(self.device) for v in zip(*drawn))
        losses = self.step_all(x, y, lr)
        diverged = [i for i, loss in enumerate(losses.tolist()) if not math.isfinite(loss)]
        if diverged:
            models = self.current_models()
            for i in diverged:
                r = self.active[i]
                r.state["diverged_step"] = step
                log.warning("seed %d: loss became %s at step %d: recorded as diverged", r.cfg.seed, losses[i].item(),
                            step)
                self.finish(r, models[i], self.optimizer_state(i))
            kept = [i for i in range(len(self.active)) if i not in diverged]
            if self.batch is not None and kept:  # the others take this step again, on the same batches
                self.batch = self.batch.keep(kept)
                losses = self.step_all(x[kept], y[kept], lr)
            self.active = [self.active[i] for i in kept]
            if not self.active:
                return losses
        seconds = time.perf_counter() - tick
        for r, loss in zip(self.active, losses.tolist()):
            r.state["train_s"] += seconds
            r.state["curve"].append({"step": step + 1, "loss": loss, "lr": lr})
            r.state["step"] = step + 1
        return losses

    def step_all(self, x, y, lr) -> torch.Tensor:
        """training_step for the active seeds: one seed's model, or the batch's folded one. Their losses, (K,)."""
        if self.batch is None:
            model, optimizer = self.active[0].model, self.active[0].optimizer
        else:
            model, optimizer = self.batch.folded, self.batch.optimizer
        set_learning_rate(optimizer, lr)
        return training_step(model, optimizer, lambda: model(x, y)[1], self.t.precision, self.device.type,
                             self.t.grad_clip).reshape(-1)

    def evaluate_and_checkpoint(self) -> None:
        """At an evaluation step (not the last: finish evaluates there), every active seed's evaluation; at a
        checkpoint step, its checkpoint."""
        done = self.active[0].state["step"]
        at_eval, at_checkpoint = done % self.eval_every == 0 and done < self.steps, \
            done % self.t.checkpoint_interval == 0
        if at_eval or at_checkpoint:
            for i, (r, model) in enumerate(zip(self.active, self.current_models())):
                if at_eval:
                    r.state["evals"].append({"step": done, **self.task.evaluate(model, self.device)})
                if at_checkpoint:
                    self.checkpoint(r, model, self.optimizer_state(i))

    def current_models(self) -> list:
        return self.batch.sync() if self.batch is not None else [r.model for r in self.active]

    def optimizer_state(self, i: int) -> dict:
        return self.batch.optimizer_state(i) if self.batch is not None else self.active[i].optimizer.state_dict()

    def checkpoint(self, r, model, optimizer_state) -> None:
        runs.save_checkpoint(r.dir / runs.CHECKPOINT, {
            "model": model.state_dict(), "optimizer": optimizer_state, "batches": r.batches.get_state(),
            "state": r.state, "config_hash": r.digest})

    def finish(self, r, model, optimizer_state) -> None:
        """The seed's last evaluation, checkpoint and files."""
        t, st, device = self.t, r.state, self.device
        diverged = st["diverged_step"] is not None
        if not diverged and st["evals"][-1]["step"] != st["step"]:
            st["evals"].append({"step": st["step"], **self.task.evaluate(model, device)})
        self.checkpoint(r, model, optimizer_state)
        sources = st["sources"]
        metrics = {
            "experiment": self.name, "overrides": ablations(r.overrides),
            "profile": self.cfg.profile.name, "seed": r.cfg.seed, "config_hash": r.digest,
            "commit": sources[0]["commit"], "dirty": any(s["dirty"] for s in sources), "sources": sources,
            "torch": torch.__version__, "python": platform.python_version(), "device": str(device),
            "device_name": device_name(device.type), "started_at": st["started_at"], "finished_at": utc_now(),
            "precision": t.precision, "params": model.n_params(),
            "seed_batch": len(self.seed_runs), "compiled": t.compile,
            "steps": self.steps, "steps_done": st["step"], "diverged": diverged, "diverged_step": st["diverged_step"],
            "final_loss": st["curve"][-1]["loss"] if st["curve"] else None,
            "train_s": st["train_s"], "tokens_per_s": self.tokens_per_step * st["step"] / max(st["train_s"], 1e-9),
            "s_per_step": st["train_s"] / max(st["step"], 1),
            **self.task.results(model, device, st["evals"][-1], diverged, r.dir),
        }
        runs.write_csv(r.dir / runs.CURVE, st["curve"], ["step", "loss", "lr"])
        runs.write_csv(r.dir / runs.EVALS, st["evals"], ["step"])
        data.write_json(r.dir / runs.METRICS, metrics)
        # written last so the folder only claims a config once a run finished under it
        runs.write_config(r.dir, r.cfg, r.overrides)
        self.results[r.cfg.seed] = metrics


@hydra.main(config_path="../../configs", config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> None:
    run_dir = Path(HydraConfig.get().runtime.output_dir)
    try:
        seeds = train_seeds(cfg, run_dir, HydraConfig.get().runtime.choices.get("experiment") or "default",
                            list(HydraConfig.get().overrides.task))
    except (ConfigError, data.DataError) as e:
        _remove_empty(run_dir)  # nothing half-written
        sys.exit(f"error: {e}")
    for metrics in seeds:
        length, ppl = next(iter(metrics["held_out_ppl"].items()))
        outcome = f"diverged at step {metrics['diverged_step']}" if metrics["diverged"] else \
            f"held-out perplexity {ppl:.2f} ({length}-token windows)"
        folder = run_dir.with_name(f"seed{metrics['seed']}") if len(seeds) > 1 else run_dir
        print(f"{metrics['experiment']} seed {metrics['seed']}, {metrics['steps']} steps: {outcome} -> {folder}")


def _remove_empty(folder: Path) -> None:
    """Remove `folder`, and the parents Hydra made for it below the working directory, while empty."""
    cwd, folder = Path.cwd().resolve(), folder.resolve()
    while cwd in folder.parents and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def check_overrides(argv: list[str]) -> None:
    """Compose the command line's config before Hydra runs it: a bad override then ends in one
    line naming it and what is allowed (Hydra's own report spans a screen), and no folder is made."""
    if any(arg.startswith("-") for arg in argv):
        return  # --help, --cfg, --multirun ...: Hydra's own modes
    if not any(arg.startswith("experiment=") for arg in argv):
        families = sorted({e.split("/")[0] for e in experiments()})
        sys.exit(f"error: name the run to train: experiment=<family>/<run>, e.g. experiment=ladder/block "
                 f"(families: {', '.join(families)}; every run: ls configs/experiment/*/)")
    try:
        compose([arg for arg in argv if not arg.lstrip("+~").startswith("hydra")])
    except ConfigError as e:
        sys.exit(f"error: {e}")


def run_in_repository(argv: list[str]) -> list[str]:
    """Move a hand run started elsewhere into the repository, where its paths are (outputs/, the
    profile's token cache in results/<profile>/data/); a corpus named by a relative path is read from
    where the user stood. A run given its folder (hydra.run.dir=, as the pipeline and the tests do)
    stays where it was started, its paths relative to there."""
    here = Path.cwd().resolve()
    if here == ROOT or any(arg.startswith("hydra.run.dir=") for arg in argv):
        return argv
    moved = []
    for arg in argv:
        key, _, value = arg.partition("=")
        if key.lstrip("+") == "data.corpus.local" and value and not Path(value).expanduser().is_absolute():
            arg = f"{key}={here / value}"
        moved.append(arg)
    if os.environ.get("ATTNLAB_CORPUS") and not Path(os.environ["ATTNLAB_CORPUS"]).expanduser().is_absolute():
        os.environ["ATTNLAB_CORPUS"] = str(here / os.environ["ATTNLAB_CORPUS"])
    print(f"note: running in the repository, {ROOT}: outputs/ and results/ are written there", file=sys.stderr)
    os.chdir(ROOT)
    return moved


if __name__ == "__main__":
    check_overrides(sys.argv[1:])
    sys.argv[1:] = run_in_repository(sys.argv[1:])
    main()
