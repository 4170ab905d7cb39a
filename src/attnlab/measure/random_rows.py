"""Random attention scores: why they are divided by sqrt(d_k) (the chapter's sqrt(d_k)
section: score_variance, effective_tokens, softmax_saturation).

    python -m attnlab.measure.random_rows score_variance --out pairs.csv --meta meta.json
    python -m attnlab.measure.random_rows rows --out rows.csv --meta meta.json [--config scale.yaml]

`score_variance`: Var(q·k) over random pairs with i.i.d. N(0,1) entries, one line per width.
`rows`: per width, random rows of scores (one query against `keys` keys, N(0,1) entries),
softmaxed divided by sqrt(d_k) and undivided; one line per row and variant with its
effective tokens (exp of the entropy), largest weight, Σ w_i(1-w_i), largest w_i(1-w_i)
and whether it is frozen. Everything is float32; seeded from the config.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import pandas as pd
import torch
import yaml

from attnlab.config import CONFIG_DIR, git_commit
from attnlab.data import atomic_path, write_json

DEFAULT_CONFIG = CONFIG_DIR / "measure" / "scale.yaml"
SETTINGS = ("seed", "widths", "pairs", "rows", "keys", "frozen_below")
CHUNK_ELEMENTS = 2**24  # rows are drawn in chunks of about 64 MB of float32 keys


def load_settings(path: str | Path) -> dict:
    """The measurement settings, checked: one line naming a bad value and what is allowed."""
    cfg = yaml.safe_load(Path(path).read_text())
    if not isinstance(cfg, dict):
        raise ValueError(f"{path}: expected a mapping of {list(SETTINGS)}")
    unknown, missing = sorted(set(cfg) - set(SETTINGS)), sorted(set(SETTINGS) - set(cfg))
    if unknown or missing:
        raise ValueError(f"{path}: unknown {unknown}, missing {missing}; expected exactly {list(SETTINGS)}")
    widths = cfg["widths"]
    if not isinstance(widths, list) or not widths or any(not isinstance(d, int) or d <= 0 for d in widths):
        raise ValueError(f"widths={widths!r} must be a non-empty list of positive whole numbers")
    for key in ("seed", "pairs", "rows", "keys"):
        if not isinstance(cfg[key], int) or cfg[key] < (0 if key == "seed" else 2):
            raise ValueError(f"{key}={cfg[key]!r} must be a whole number >= {0 if key == 'seed' else 2}")
    if not isinstance(cfg["frozen_below"], (int, float)) or not 0 < cfg["frozen_below"] <= 0.25:
        raise ValueError(f"frozen_below={cfg['frozen_below']!r} must be in (0, 0.25] (w(1-w) is at most 0.25)")
    return cfg


def score_variance(d: int, pairs: int, generator: torch.Generator) -> dict:
    """Var and std of q·k over `pairs` random pairs of d i.i.d. N(0,1) entries."""
    q = torch.randn(pairs, d, generator=generator, dtype=torch.float32)
    k = torch.randn(pairs, d, generator=generator, dtype=torch.float32)
    scores = (q * k).sum(-1)
    return {"d": d, "var": scores.var().item(), "std": scores.std().item(), "sqrt_d": math.sqrt(d), "pairs": pairs}


def weight_stats(weights: torch.Tensor, frozen_below: float) -> dict[str, torch.Tensor]:
    """Per softmax row (last dim): effective tokens = exp(entropy), largest weight, the softmax
    Jacobian's diagonal w_i(1-w_i) summed and its largest entry; frozen = largest entry below
    `frozen_below` (no score of the row can move its weights much)."""
    entropy = -torch.special.xlogy(weights, weights).sum(-1)  # 0·log 0 = 0
    jacobian = weights * (1 - weights)
    largest_jacobian = jacobian.max(-1).values
    return {"effective_tokens": entropy.exp(), "largest_weight": weights.max(-1).values,
            "jacobian_sum": jacobian.sum(-1), "jacobian_max": largest_jacobian,
            "frozen": largest_jacobian < frozen_below}


def random_rows(d: int, rows: int, keys: int, frozen_below: float, generator: torch.Generator) -> pd.DataFrame:
    """`rows` rows of `keys` scores q·k_j (N(0,1) entries), divided by sqrt(d) and undivided."""
    chunk = max(1, CHUNK_ELEMENTS // (keys * d))
    raw = []
    for start in range(0, rows, chunk):
        n = min(chunk, rows - start)
        q = torch.randn(n, 1, d, generator=generator, dtype=torch.float32)
        k = torch.randn(n, keys, d, generator=generator, dtype=torch.float32)
        raw.append((q @ k.transpose(1, 2)).squeeze(1))
    raw = torch.cat(raw)
    frames = []
    for variant, scale in (("divided", 1 / math.sqrt(d)), ("undivided", 1.0)):
        stats = weight_stats(torch.softmax(raw * scale, dim=-1), frozen_below)
        frames.append(pd.DataFrame({"d_k": d, "variant": variant, "row": range(rows),
                                    **{name: values.numpy() for name, values in stats.items()}}))
    return pd.concat(frames, ignore_index=True)


def measure(name: str, cfg: dict) -> pd.DataFrame:
    generator = torch.Generator().manual_seed(cfg["seed"])
    if name == "score_variance":
        return pd.DataFrame([score_variance(d, cfg["pairs"], generator) for d in cfg["widths"]])
    return pd.concat([random_rows(d, cfg["rows"], cfg["keys"], cfg["frozen_below"], generator)
                      for d in cfg["widths"]], ignore_index=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("measurement", choices=["score_variance", "rows"])
    parser.add_argument("--config", default=str(DEFAULT_CONFIG))
    parser.add_argument("--out", required=True, help="CSV of the measurement")
    parser.add_argument("--meta", required=True, help="JSON of the settings and provenance")
    args = parser.parse_args(argv)
    try:
        cfg = load_settings(args.config)
    except (OSError, ValueError, yaml.YAMLError) as e:
        sys.exit(f"error: {e}")
    torch.set_num_threads(1)
    df = measure(args.measurement, cfg)
    with atomic_path(Path(args.out)) as tmp:
        df.to_csv(tmp, index=False)
    write_json(Path(args.meta), {"measurement": args.measurement, **cfg, "dtype": "float32",
                                 "torch": torch.__version__, **git_commit()})


if __name__ == "__main__":
    main()
