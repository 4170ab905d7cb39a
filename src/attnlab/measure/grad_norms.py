"""Gradient norm of each block's parameters at initialisation (table norm_grad_init).

    python -m attnlab.measure.grad_norms --profile quick --out grad_norms.csv

For each norm placement (pre, post) and seed k: build the twelve-block model of experiment
norm/<norm>_no_warmup exactly as `attnlab.train` does with seed k, draw a batch as that run
draws its first one (of the profile's measure.norm_grad_init size), do one forward and one backward (no optimiser step) and record the L2
norm of the gradient of each block's parameters, for two parameter groups:
  all            every parameter of the block (attention, MLP, both LayerNorms);
  attention_qkv  the attention input maps W_q, W_k, W_v together (what one fused qkv
                 matrix, the first parameter of a nanoGPT-style block, would hold).
The MLP output matrix dominates `all` and hardly changes with depth; the qkv maps carry
the depth trend. Seed k's init is the same for pre and post (LayerNorm has no random
init), so the two rows differ only in where the norm sits.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import torch

from attnlab import data
from attnlab.config import ConfigError, compose, model_config
from attnlab.model import LanguageModel

NORMS = ("pre", "post")
PARAMETER_GROUPS = {
    "all": lambda name: True,
    "attention_qkv": lambda name: name in ("mixer.q.weight", "mixer.k.weight", "mixer.v.weight"),
}


def sizes(profile: str) -> dict:
    """seeds and batch of the measurement in one profile (configs/profile/<profile>.yaml)."""
    return dict(compose([f"profile={profile}"]).profile.measure.norm_grad_init)


def block_grad_norms(model: LanguageModel, x: torch.Tensor, y: torch.Tensor) -> dict[str, list[float]]:
    """One forward+backward on (x, y); per parameter group, the gradient L2 norm of each block, block 1 first."""
    model.zero_grad(set_to_none=True)
    _, loss, _ = model(x, y)
    loss.backward()
    norms = {}
    for group, member in PARAMETER_GROUPS.items():
        squares = [sum(p.grad.pow(2).sum().item() for name, p in block.named_parameters()
                       if member(name) and p.grad is not None) for block in model.blocks]
        norms[group] = [s ** 0.5 for s in squares]
    return norms


def measure(profile: str, seeds: int, batch: int) -> pd.DataFrame:
    """Rows (norm, parameters, seed, block, grad_norm) for every norm placement, group, seed and block."""
    torch.use_deterministic_algorithms(True)
    rows = []
    for norm in NORMS:
        cfg = compose([f"experiment=norm/{norm}_no_warmup", f"profile={profile}"])
        data.prepare(cfg.data, cfg.profile.max_chars)
        train_tokens, _, _ = data.load_tokens(cfg.data.dir)
        mcfg = model_config(cfg)
        for seed in range(seeds):
            torch.manual_seed(seed)  # the init of training run `seed` ...
            model = LanguageModel(mcfg)
            x, y = data.random_batch(train_tokens, batch, mcfg.context, torch.Generator().manual_seed(seed))  # ... and its first batch
            for group, norms in block_grad_norms(model, x, y).items():
                for block, g in enumerate(norms, start=1):
                    rows.append({"norm": norm, "parameters": group, "seed": seed, "block": block, "grad_norm": g})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", required=True)
    parser.add_argument("--out", required=True, help="CSV: norm, parameters, seed, block, grad_norm")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        size = sizes(args.profile)
        df = measure(args.profile, int(size["seeds"]), int(size["batch"]))
    except (ConfigError, data.DataError) as e:
        sys.exit(f"error: {e}")
    with data.atomic_path(Path(args.out)) as tmp:
        df.to_csv(tmp, index=False)


if __name__ == "__main__":
    main()
