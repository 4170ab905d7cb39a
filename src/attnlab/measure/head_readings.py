"""A trained head read on its run's own weights: where its rows point (table locked_heads) and its scores read
several ways (table score_readings).

    python -m attnlab.measure.head_readings \
        --run results/full/runs/scale/sweep_d1024_divided_lr6e3/seed0 \
        --out results/full/runs/scale/sweep_d1024_divided_lr6e3/seed0/head_readings.json

The model is the run's: its weights kept in the run's folder (checkpoint.pt at the run's last step, ignored by
git: the published run's own model where this checkout trained it) or, where none are kept, the run retrained on
the CPU from the overrides its config.yaml records (its key must be the run's) and kept there for the next call.
A retrained run is the published model bit for bit only on the machine and code that trained it, so the measured
model's own evaluations (from its checkpoint) and held-out perplexity are recorded beside the published ones.

Where it points: on the first `windows` held-out windows of the training length, block 1's attention rows t >= 2
(where the token itself, the previous token and the window's first token are three different tokens): the share
of rows that are one-hot (largest weight > runs.ONEHOT_WEIGHT, as the runs' own statistics count them) and where
each row's largest weight sits: on the token itself, the previous token, the first token or elsewhere, over the
one-hot rows and over all rows; for elsewhere, how far back and which tokens are read there most. Then, by
intervention, the held-out perplexity with block 1's attention forced one-hot onto each of the first three targets:
where forcing a head onto the target its rows read leaves the model's perplexity where it was, the head is that
function and nothing more.

Its scores, block 1's, read as the runs read them (the std over the causal entries of rows t >= 1 on the first
STATS_WINDOWS held-out windows: evals.csv's block1_score_std, which the measured model must reproduce) and
otherwise: with row 0, over the whole matrix before the causal mask, the largest |score|, and on a training batch.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import torch
import yaml
from omegaconf import OmegaConf

from attnlab import data, runs
from attnlab.config import ConfigError, measured_stamp, model_config
from attnlab.device import device_name
from attnlab.model import LanguageModel, rope
from attnlab.train import mean_loss, perplexity

TARGETS = ("itself", "previous", "first", "elsewhere")
STATS_WINDOWS = 8  # the held-out windows a run's own attention statistics are read on (attnlab.train)
WINDOWS = 64  # held-out windows read: 64 x 126 rows per head, shares to a fraction of a percent
TOP_TOKENS = 3  # the tokens most often read "elsewhere"


# ---------------------------------------------------------------- the model

def kept_model(run_dir: Path, key: str, steps: int) -> tuple[LanguageModel, dict] | None:
    """The run's kept weights (checkpoint.pt of its key, at its last step) and the training state they hold (its
    evaluations, the code and machine it trained on), or None."""
    path = run_dir / runs.CHECKPOINT
    if not path.exists():
        return None
    ckpt = runs.read_checkpoint(path, key)
    if ckpt["state"]["step"] != steps:
        return None
    model = LanguageModel(model_config(OmegaConf.create(runs.run_config(run_dir / runs.METRICS))))
    model.load_state_dict(ckpt["model"])
    return model, ckpt["state"]


def retrain(run_dir: Path, key: str) -> None:
    """Train the run again on the CPU from the overrides its config.yaml records, into a temporary folder, and
    keep its checkpoint in the run's folder; its key must be the published one."""
    overrides = [o for o in yaml.safe_load((run_dir / runs.CONFIG).read_text())["overrides"]
                 if not o.startswith(("hydra.", "train.device="))]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "attnlab.train", *overrides, "train.device=cpu",
                        f"hydra.run.dir={tmp}"], check=True)
        retrained = json.loads((Path(tmp) / runs.METRICS).read_text())["config_hash"]
        if retrained != key:
            raise ConfigError(f"{run_dir}: its overrides now compose to key {retrained}, not the published {key}")
        (Path(tmp) / runs.CHECKPOINT).replace(run_dir / runs.CHECKPOINT)


def load_model(run_dir: Path) -> tuple[LanguageModel, dict, str, dict]:
    """The run's model, its training state, where it came from ("kept" or "retrained") and the run's metrics."""
    metrics = json.loads((run_dir / runs.METRICS).read_text())
    kept, source = kept_model(run_dir, metrics["config_hash"], metrics["steps"]), "kept"
    if kept is None:
        retrain(run_dir, metrics["config_hash"])
        kept, source = kept_model(run_dir, metrics["config_hash"], metrics["steps"]), "retrained"
    model, state = kept
    return model.eval(), state, source, metrics


# ---------------------------------------------------------------- the reading

def targets_of(weights: torch.Tensor) -> dict[str, torch.Tensor]:
    """For attention weights (N, H, T, T), rows t >= 2: where each row's largest weight sits, as a boolean per
    target (N, H, T-2), its distance back (t minus the position read) and whether the row is one-hot."""
    T = weights.shape[-1]
    rows = weights[..., 2:, :]
    largest, at = rows.max(-1)
    t = torch.arange(2, T)
    placed = {"itself": at == t, "previous": at == t - 1, "first": at == 0}
    placed["elsewhere"] = ~(placed["itself"] | placed["previous"] | placed["first"])
    return {**placed, "onehot": largest > runs.ONEHOT_WEIGHT, "back": t - at, "at": at}


def shares(placed: dict, among: torch.Tensor) -> dict[str, float | None]:
    """The share of the rows in `among` whose largest weight sits at each target (None without such rows)."""
    n = int(among.sum())
    return {target: (float((placed[target] & among).sum()) / n if n else None) for target in TARGETS}


def read_elsewhere(placed: dict, windows: torch.Tensor, among: torch.Tensor, decode) -> dict:
    """Of the rows in `among` whose largest weight sits elsewhere: the median distance back and the tokens read
    there most, with their shares of those rows."""
    rows = placed["elsewhere"] & among
    n = int(rows.sum())
    if not n:
        return {"rows": 0, "median_back": None, "top_tokens": []}
    N, H, R = rows.shape
    read = windows[:, None, :].expand(N, H, -1).gather(-1, placed["at"])[rows]
    ids, counts = read.unique(return_counts=True)
    order = counts.argsort(descending=True)[:TOP_TOKENS]
    return {"rows": n, "median_back": float(placed["back"][rows].float().median()),
            "top_tokens": [{"token": decode(int(ids[i])), "share": float(counts[i]) / n} for i in order]}


@torch.inference_mode()
def where_heads_point(model: LanguageModel, windows: torch.Tensor, decode) -> dict:
    """Block 1's attention on `windows` (N, T): the one-hot share, and where the largest weight sits over the
    one-hot rows and over all rows."""
    _, _, attentions = model(windows, explicit=True)
    weights = attentions[0]["weights"]
    placed = targets_of(weights)
    every = torch.ones_like(placed["onehot"])
    return {"rows": int(every.sum()), "heads": weights.shape[1],
            "onehot_share": float(placed["onehot"].float().mean()),
            "onehot_rows": shares(placed, placed["onehot"]), "all_rows": shares(placed, every),
            "elsewhere_onehot": read_elsewhere(placed, windows, placed["onehot"], decode),
            "elsewhere_all": read_elsewhere(placed, windows, every, decode)}


def forced_weights(target: str, T: int) -> torch.Tensor:
    """Attention weights (T, T) that put every row's whole weight on one target: the token itself, the previous
    token (row 0: itself, all it sees) or the first token."""
    rows = torch.arange(T)
    source = {"itself": rows, "previous": (rows - 1).clamp(min=0), "first": torch.zeros_like(rows)}[target]
    return torch.nn.functional.one_hot(source, T).float()


@contextmanager
def forced(model: LanguageModel, target: str):
    """The model with block 1's attention replaced by forced_weights(target): every head mixes its values as if
    its rows were one-hot on that target (an intervention: what the head does if it is only that)."""
    mixer = model.blocks[0].mixer

    def replace(module, args, output):
        x = args[0]
        v = module._heads(x, module.v)
        y = forced_weights(target, x.shape[1]).to(x.device) @ v
        y = y.transpose(1, 2).reshape(x.shape[0], x.shape[1], module.n_heads * module.d_head)
        return (module.o(y) if module.o is not None else y), output[1]

    hook = mixer.register_forward_hook(replace)
    try:
        yield model
    finally:
        hook.remove()


@torch.inference_mode()
def block1_scores(model: LanguageModel, windows: torch.Tensor) -> torch.Tensor:
    """Block 1's scores on `windows` (N, H, T, T) before the causal mask: q.k, scaled where the head divides."""
    mixer, kept = model.blocks[0].mixer, {}
    hook = mixer.register_forward_hook(lambda module, args, output: kept.update(x=args[0]))
    try:
        model(windows)
    finally:
        hook.remove()
    q, k = mixer._heads(kept["x"], mixer.q), mixer._heads(kept["x"], mixer.k)
    if model.cfg.positions == "rope":
        q, k = rope(q), rope(k)
    return (q @ k.transpose(-2, -1)) * mixer.scale


def score_readings(model: LanguageModel, held_out_windows: torch.Tensor, train_batch: torch.Tensor) -> dict:
    """Block 1's score spread read several ways; `runs_reading` is the runs' own (attnlab.train.attention_stats)."""
    scores = block1_scores(model, held_out_windows)
    T = scores.shape[-1]
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    later = causal.clone()
    later[0] = False  # row 0 sees one token
    batch = block1_scores(model, train_batch)
    return {"runs_reading": scores[..., later].std().item(),
            "row_0_included": scores[..., causal].std().item(),
            "unmasked": scores.std().item(),
            "largest_abs": scores[..., later].abs().max().item(),
            "training_batch": batch[..., later].std().item()}


def published_score_std(run_dir: Path) -> float | None:
    """Block 1's score std at the run's last evaluation (evals.csv), where the run logged it."""
    evals = runs.evals_of(run_dir / runs.METRICS)
    return float(evals["block1_score_std"].iloc[-1]) if "block1_score_std" in evals else None


def measure(run_dir: Path, n_windows: int = WINDOWS) -> dict:
    from tokenizers import Tokenizer

    stamp = measured_stamp()  # read before measuring: edits made while it runs are not its code
    torch.use_deterministic_algorithms(True)
    model, state, source, metrics = load_model(run_dir)
    cfg = OmegaConf.create(runs.run_config(run_dir / runs.METRICS))
    # the corpus where this machine keeps it, as a run composed here reads it (not part of the run's key)
    cfg.data.corpus.local = os.environ.get("ATTNLAB_CORPUS") or cfg.data.corpus.local
    data.prepare(cfg.data, cfg.profile.max_chars)  # a clone has no token cache: it is rebuilt from the corpus
    train, held_out, _ = data.load_tokens(cfg.data.dir)
    tokenizer = Tokenizer.from_file(str(Path(cfg.data.dir) / data.TOKENIZER))
    length = model.cfg.context
    windows, _ = data.eval_windows(held_out, length, n_windows)
    train_batch, _ = data.random_batch(train, cfg.train.batch_size, length, torch.Generator().manual_seed(cfg.seed))
    def held_out_ppl() -> float | None:
        return perplexity(mean_loss(model, held_out, length, cfg.train.eval_batch_size, cfg.profile.eval_max_windows,
                                    torch.device("cpu")))

    own = held_out_ppl()
    forced_ppl = {}
    for target in TARGETS[:-1]:
        with forced(model, target):
            forced_ppl[target] = held_out_ppl()
    published = (metrics["held_out_ppl"] or {}).get(str(length))
    return {"run": metrics["experiment"], "seed": metrics["seed"], "config_hash": metrics["config_hash"],
            "model": source, "trained": state["sources"], "evals": state["evals"], "windows": len(windows),
            "length": length,
            "held_out_ppl": own, "published_held_out_ppl": published, "forced_held_out_ppl": forced_ppl,
            **where_heads_point(model, windows, lambda i: tokenizer.decode([i])),
            "scores": score_readings(model, windows[:STATS_WINDOWS], train_batch),
            "published_score_std": published_score_std(run_dir),
            **stamp, "device": "cpu", "device_name": device_name("cpu")}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True, help="a run folder written by attnlab.train")
    parser.add_argument("--out", type=Path, required=True, help="JSON to write")
    parser.add_argument("--windows", type=int, default=WINDOWS, help="held-out windows to read")
    args = parser.parse_args(argv)
    if args.windows <= 0:
        sys.exit(f"error: --windows {args.windows} must be a positive whole number")
    if not (args.run / runs.METRICS).is_file():
        sys.exit(f"error: {args.run} holds no {runs.METRICS}: not a finished attnlab.train run")
    try:
        result = measure(args.run, args.windows)
    except (ConfigError, data.DataError, runs.CheckpointError) as e:
        sys.exit(f"error: {e}")
    data.write_json(args.out, result)
    print(json.dumps({k: result[k] for k in ("onehot_share", "onehot_rows", "held_out_ppl")}))


if __name__ == "__main__":
    main()
