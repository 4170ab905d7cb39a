"""The chapter's analytic demonstrations: no training, seconds on a CPU, the same numbers in
every profile (seeded, float32).

    python -m attnlab.measure.analytic <id> --out result.json

ids: shuffle_test, average_equivalence, averaging_matrix, attention_equivalence,
param_breakdown, gpt2_params. Each writes {"id", "settings", "rows"}; the table builders in
attnlab.families.ladder turn the rows into tables. gpt2_params fails (exit 1, one line) when
the formula and the instantiated model disagree.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from attnlab.data import write_json
from attnlab.model import CausalSelfAttention, LanguageModel, ModelConfig, causal_mask

SEED = 0
WIDTH, CONTEXT = 128, 128  # the chapter's model width and context


class CountMismatch(RuntimeError):
    """The parameter formula and the instantiated model disagree."""


# --- the causal prefix mean, three ways -------------------------------------------------

def averaging_matrix(T: int) -> torch.Tensor:
    """Lower-triangular ones with each row divided by its sum: row t averages positions 0..t."""
    A = torch.tril(torch.ones(T, T))
    return A / A.sum(1, keepdim=True)


def masked_average_weights(T: int) -> torch.Tensor:
    """Softmax over all-zero scores masked with -inf above the diagonal (the project's mask)."""
    return F.softmax(torch.zeros(T, T) + causal_mask(T), dim=-1)


def prefix_mean_loop(x: torch.Tensor) -> torch.Tensor:
    return torch.stack([x[: t + 1].mean(0) for t in range(x.shape[0])])


def shuffle_test(lengths=(6, 32, CONTEXT), d: int = WIDTH) -> dict:
    """Last row of the averaging matrix applied to a window and to the same window shuffled."""
    torch.manual_seed(SEED)
    rows = []
    for T in lengths:
        x = torch.randn(T, d)
        y = x[torch.randperm(T)]
        last = averaging_matrix(T)[-1]
        rows.append({"T": T, "d": d, "max_abs_diff": (last @ x - last @ y).abs().max().item()})
    return {"settings": {"seed": SEED, "dtype": "float32"}, "rows": rows}


def average_equivalence(T: int = CONTEXT, d: int = WIDTH) -> dict:
    torch.manual_seed(SEED)
    x = torch.randn(T, d)
    loop = prefix_mean_loop(x)
    mat = averaging_matrix(T) @ x
    soft = masked_average_weights(T) @ x
    rows = [{"pair": name, "T": T, "d": d, "max_abs_diff": (loop - other).abs().max().item()}
            for name, other in (("loop vs matmul", mat), ("loop vs softmax", soft))]
    return {"settings": {"seed": SEED, "dtype": "float32"}, "rows": rows}


def averaging_matrix_rows(T: int = 6) -> dict:
    """The matrix, and per row the largest weight the masked softmax puts above the diagonal
    (unrounded: the mask must make it exactly 0; the last row has nothing above it)."""
    A, W = averaging_matrix(T), masked_average_weights(T)
    return {"settings": {"T": T}, "rows": [{"t": t + 1, **{str(i + 1): A[t, i].item() for i in range(T)},
                                            "masked_weight_max": W[t, t + 1:].max().item() if t < T - 1 else None}
                                           for t in range(T)]}


# --- attention: ours vs PyTorch's ------------------------------------------------------

def attention_outputs(batch: int = 4, T: int = CONTEXT, seed: int = SEED) -> dict[str, torch.Tensor]:
    """The project's attention (explicit path: score, mask, softmax, mix) at the default block's
    shape, and the same weights run through nn.MultiheadAttention and F.scaled_dot_product_attention."""
    cfg = ModelConfig()  # 128 wide, four heads of 32, q/k/v without bias, W_o with bias
    torch.manual_seed(seed)
    ours_attn = CausalSelfAttention(cfg).eval()
    x = torch.randn(batch, T, cfg.d_model)
    H, dh = cfg.n_heads, cfg.head_width
    with torch.no_grad():
        ours, _ = ours_attn(x, explicit=True)

        mha = nn.MultiheadAttention(cfg.d_model, H, bias=True, batch_first=True).eval()
        mha.in_proj_weight.copy_(torch.cat([ours_attn.q.weight, ours_attn.k.weight, ours_attn.v.weight]))
        mha.in_proj_bias.zero_()  # ours has no q/k/v bias; W_o's bias is copied below
        mha.out_proj.weight.copy_(ours_attn.o.weight)
        mha.out_proj.bias.copy_(ours_attn.o.bias)
        torch_mha, _ = mha(x, x, x, attn_mask=causal_mask(T), need_weights=False)

        def heads(proj):
            return proj(x).view(batch, T, H, dh).transpose(1, 2)

        y = F.scaled_dot_product_attention(heads(ours_attn.q), heads(ours_attn.k), heads(ours_attn.v), is_causal=True)
        sdpa = ours_attn.o(y.transpose(1, 2).reshape(batch, T, H * dh))
    return {"ours": ours, "nn.MultiheadAttention": torch_mha, "F.scaled_dot_product_attention": sdpa}


def attention_equivalence(batch: int = 4, T: int = CONTEXT) -> dict:
    out = attention_outputs(batch, T)
    ours = out.pop("ours")
    rows = [{"pair": f"ours vs {name}", "max_abs_diff": (ours - other).abs().max().item(),
             "mean_abs_output": ours.abs().mean().item()} for name, other in out.items()]
    return {"settings": {"seed": SEED, "batch": batch, "T": T, "d_model": WIDTH, "n_heads": 4}, "rows": rows}


# --- parameter counts ------------------------------------------------------------------

def block_formula(d: int) -> dict[str, int]:
    """One GPT-2 block at width d with a 4x MLP: biases on q, k, v and W_o; two LayerNorms."""
    return {"attention": 4 * d * d + 4 * d, "mlp": 8 * d * d + 5 * d, "layernorm": 4 * d}


def numel(module: nn.Module | None) -> int:
    return 0 if module is None else sum(p.numel() for p in module.parameters())


def block_counted(cfg: ModelConfig) -> dict[str, int]:
    """The same split, counted from the modules of one of the project's blocks."""
    block = LanguageModel(cfg).blocks[0]
    return {"attention": numel(block.mixer), "mlp": numel(block.mlp), "layernorm": numel(block.ln1) + numel(block.ln2)}


def breakdown_row(model: str, d: int, parts: dict[str, int]) -> dict:
    total = sum(parts.values())
    return {"model": model, "d": d, **parts, "total": total, "mlp_share": parts["mlp"] / total}


def param_breakdown(widths=(128, 768, 1024, 4096, 12288)) -> dict:
    rows = [breakdown_row("formula (GPT-2 block)", d, block_formula(d)) for d in widths]
    rows.append(breakdown_row("this project's block (counted)", WIDTH, block_counted(ModelConfig())))
    return {"settings": {"mlp_ratio": 4}, "rows": rows}


GPT2_SMALL = dict(vocab_size=50257, d_model=768, context=1024, n_blocks=12, n_heads=12,
                  qkv_bias=True, tie_output=True, output_bias=False)


def gpt2_params() -> dict:
    """GPT-2 small counted twice: the formula, and numel() of the project's model at that shape."""
    cfg = ModelConfig(**GPT2_SMALL)
    d, n = cfg.d_model, cfg.n_blocks
    with torch.device("meta"):  # shapes only: no 500 MB of weights to initialise
        model = LanguageModel(cfg)
    block = sum(block_formula(d).values())
    formula = {"token embeddings": cfg.vocab_size * d, "position embeddings": cfg.context * d,
               "one block": block, f"{n} blocks": n * block, "final LayerNorm": 2 * d}
    formula["total (weights tied)"] = sum(v for k, v in formula.items() if k != "one block")
    counted = {"token embeddings": numel(model.tok), "position embeddings": numel(model.pos),
               "one block": numel(model.blocks[0]), f"{n} blocks": numel(model.blocks),
               "final LayerNorm": numel(model.ln_f), "total (weights tied)": model.n_params()}
    rows = [{"component": k, "formula": formula[k], "model_numel": counted[k]} for k in formula]
    bad = [f"{r['component']}: formula {r['formula']:,} vs model {r['model_numel']:,}"
           for r in rows if r["formula"] != r["model_numel"]]
    if bad:
        raise CountMismatch("gpt2_params: the formula and the instantiated model disagree: " + "; ".join(bad))
    return {"settings": GPT2_SMALL, "rows": rows}


MEASUREMENTS = {
    "shuffle_test": shuffle_test,
    "average_equivalence": average_equivalence,
    "averaging_matrix": averaging_matrix_rows,
    "attention_equivalence": attention_equivalence,
    "param_breakdown": param_breakdown,
    "gpt2_params": gpt2_params,
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("measurement", choices=sorted(MEASUREMENTS))
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # deterministic and polite on a shared machine
    try:
        result = MEASUREMENTS[args.measurement]()
    except CountMismatch as e:
        sys.exit(f"error: {e}")
    # the column order travels with the rows (the JSON writer sorts keys)
    write_json(args.out, {"id": args.measurement, "columns": list(result["rows"][0]), **result})


if __name__ == "__main__":
    main()
