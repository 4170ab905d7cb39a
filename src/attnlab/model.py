"""The one model family of the chapter: from the plain average to the transformer block.

Every rung of the chapter's ladder is a switch of `ModelConfig`: the mixer (none, uniform
causal average, attention), how attention builds queries, keys and values, heads and head
width (independent of model width), residual, MLP, norm placement, position scheme and
score scaling. Initialisation is PyTorch's default on purpose: the chapter's "score std 21 at
initialisation" (claim score_runaway.init_std, configs/claims.yaml) only holds with it; only
`qk_init_scale` multiplies W_q and W_k after it (1.0, the default, leaves them untouched).

Attention has two paths that compute the same thing: an explicit one that can return
scores and weights (for probes and statistics) and the fused
`F.scaled_dot_product_attention` used for training.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import torch
import torch.nn as nn
import torch.nn.functional as F

MIXERS = ("none", "average", "attention")
NORMS = ("none", "pre", "post")
POSITIONS = ("none", "learned", "sinusoidal", "rope", "alibi")
PRECISIONS = ("float32", "bf16")  # train.precision


@dataclass
class ModelConfig:
    vocab_size: int = 1024
    d_model: int = 128
    context: int = 128
    max_positions: int | None = None  # learned-table rows; None = context
    n_blocks: int = 1
    mixer: str = "attention"
    n_heads: int = 4
    d_head: int | None = None  # None = d_model // n_heads
    query_key: bool = True  # learned W_q, W_k; False scores raw x against raw x
    value: bool = True  # learned W_v; False mixes raw x
    out_proj: bool = True  # W_o after concatenating the heads
    qkv_bias: bool = False
    residual: bool = True
    mlp: bool = True
    mlp_ratio: int = 4
    norm: str = "pre"
    attn_input_norm: bool = True  # pre-norm only: the LayerNorm before the attention projections
    positions: str = "learned"
    scale_scores: bool = True  # divide scores by sqrt(d_head); False is scale=1.0
    # W_q and W_k (with qkv_bias, their biases) at PyTorch's default init times this: q and k come out this much
    # smaller, the scores its square (d_head^(-1/4) squared is the divided head's 1/sqrt(d_head) at initialisation)
    qk_init_scale: float = 1.0
    tie_output: bool = False
    output_bias: bool = True

    @classmethod
    def from_dict(cls, d: dict) -> "ModelConfig":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown model option(s) {unknown}; allowed: {sorted(known)}")
        cfg = cls(**d)
        cfg.validate()
        return cfg

    @property
    def head_width(self) -> int:
        return self.d_head if self.d_head is not None else self.d_model // self.n_heads

    @property
    def table_positions(self) -> int:
        return self.max_positions if self.max_positions is not None else self.context

    def validate(self) -> None:
        def choice(name, allowed):
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"model.{name}={value!r} is not one of {list(allowed)}")

        choice("mixer", MIXERS)
        choice("norm", NORMS)
        choice("positions", POSITIONS)
        for name in ("vocab_size", "d_model", "context", "n_blocks", "n_heads", "mlp_ratio"):
            if getattr(self, name) <= 0:
                raise ValueError(f"model.{name}={getattr(self, name)} must be positive")
        if self.d_head is None and self.d_model % self.n_heads:
            raise ValueError(
                f"model.d_model={self.d_model} is not divisible by model.n_heads={self.n_heads}; "
                "choose heads that divide the width or set model.d_head")
        if self.d_head is not None and self.d_head <= 0:
            raise ValueError(f"model.d_head={self.d_head} must be positive")
        inner = self.n_heads * self.head_width
        raw_parts = [n for n, learned in (("query_key", self.query_key), ("value", self.value),
                                           ("out_proj", self.out_proj)) if not learned]
        if self.mixer == "attention" and raw_parts and inner != self.d_model:
            raise ValueError(
                f"with {', '.join(p + '=false' for p in raw_parts)} the heads read or write raw x, "
                f"so n_heads*d_head ({inner}) must equal d_model ({self.d_model})")
        if self.positions == "rope" and self.head_width % 2:
            raise ValueError(f"rope rotates 2-D slices: d_head={self.head_width} must be even")
        if self.positions in ("rope", "alibi") and self.mixer != "attention":
            raise ValueError(f"positions={self.positions} acts on attention scores; mixer is {self.mixer}")
        if self.max_positions is not None and self.max_positions < self.context:
            raise ValueError(f"model.max_positions={self.max_positions} < model.context={self.context}")
        if not self.qk_init_scale > 0:  # NaN too
            raise ValueError(f"model.qk_init_scale={self.qk_init_scale} must be a number > 0")
        if self.qk_init_scale != 1.0 and not (self.mixer == "attention" and self.query_key):
            raise ValueError(f"model.qk_init_scale={self.qk_init_scale} scales W_q and W_k, which this model does "
                             f"not have (mixer={self.mixer}, query_key={self.query_key}); leave it at 1.0")


def autocast(precision: str, device_type: str):
    """The arithmetic of a training step's forward pass and loss: float32, or bf16 under
    torch.autocast (matmuls in bf16; weights, gradients and AdamW's state stay float32, and bf16
    has float32's range, so no loss scaling is needed)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision={precision!r} is not one of {list(PRECISIONS)}")
    return torch.autocast(device_type, dtype=torch.bfloat16, enabled=precision == "bf16")


def causal_mask(T: int, device=None) -> torch.Tensor:
    """Float mask: 0 on and below the diagonal, -inf above (so masked weights are exactly 0)."""
    return torch.full((T, T), float("-inf"), device=device).triu(1)


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """Per-head slopes 2^(-8h/H), h = 1..H."""
    return torch.tensor([2.0 ** (-8.0 * h / n_heads) for h in range(1, n_heads + 1)])


def alibi_bias(n_heads: int, T: int, device=None) -> torch.Tensor:
    """(H, T, T) float mask: causal -inf plus -slope * distance below the diagonal."""
    pos = torch.arange(T, device=device)
    distance = (pos[:, None] - pos[None, :]).float()  # t - i
    bias = -alibi_slopes(n_heads).to(device)[:, None, None] * distance
    return bias + causal_mask(T, device)


def sinusoids(T: int, d: int, device=None) -> torch.Tensor:
    """The 2017 paper's fixed encoding: sin on even features, cos on odd, geometric frequencies."""
    pos = torch.arange(T, device=device, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, d, 2, device=device, dtype=torch.float32) * (-math.log(10000.0) / d))
    pe = torch.zeros(T, d, device=device)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq)[:, : d // 2]
    return pe


def rope(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotate consecutive feature pairs of x (B, H, T, dh) by angle position * theta_j."""
    T, dh = x.shape[-2], x.shape[-1]
    theta = base ** (-torch.arange(0, dh, 2, device=x.device, dtype=torch.float32) / dh)
    angle = torch.arange(T, device=x.device, dtype=torch.float32)[:, None] * theta  # (T, dh/2)
    cos, sin = angle.cos(), angle.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


class CausalSelfAttention(nn.Module):
    """Multi-head causal attention; q, k, v each learned or the raw input."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.n_heads, self.d_head = cfg.n_heads, cfg.head_width
        inner = self.n_heads * self.d_head
        self.q = nn.Linear(cfg.d_model, inner, bias=cfg.qkv_bias) if cfg.query_key else None
        self.k = nn.Linear(cfg.d_model, inner, bias=cfg.qkv_bias) if cfg.query_key else None
        self.v = nn.Linear(cfg.d_model, inner, bias=cfg.qkv_bias) if cfg.value else None
        self.o = nn.Linear(inner, cfg.d_model) if cfg.out_proj else None
        self.scale = 1.0 / math.sqrt(self.d_head) if cfg.scale_scores else 1.0
        if cfg.query_key and cfg.qk_init_scale != 1.0:
            with torch.no_grad():  # after the default init, so every other tensor draws what it always drew
                for p in (*self.q.parameters(), *self.k.parameters()):
                    p.mul_(cfg.qk_init_scale)

    def _heads(self, x: torch.Tensor, proj: nn.Linear | None) -> torch.Tensor:
        y = proj(x) if proj is not None else x
        B, T, _ = y.shape
        return y.view(B, T, self.n_heads, self.d_head).transpose(1, 2)

    def score_bias(self, T: int, device) -> torch.Tensor:
        """Additive float mask for the scores: causal -inf, plus the ALiBi distance penalty."""
        if self.cfg.positions == "alibi":
            return alibi_bias(self.n_heads, T, device)
        return causal_mask(T, device)

    def forward(self, x: torch.Tensor, explicit: bool = False):
        """Returns (output, attention); attention is {'scores', 'weights'} on the explicit path, else None."""
        q, k, v = self._heads(x, self.q), self._heads(x, self.k), self._heads(x, self.v)
        if self.cfg.positions == "rope":
            q, k = rope(q), rope(k)
        T = x.shape[1]
        attention = None
        if explicit:
            scores = (q @ k.transpose(-2, -1)) * self.scale + self.score_bias(T, x.device)
            weights = F.softmax(scores, dim=-1)
            y = weights @ v
            attention = {"scores": scores, "weights": weights}
        elif self.cfg.positions == "alibi":
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=self.score_bias(T, x.device), scale=self.scale)
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=self.scale)
        y = y.transpose(1, 2).reshape(x.shape[0], T, self.n_heads * self.d_head)
        if self.o is not None:
            y = self.o(y)
        return y, attention


class CausalAverage(nn.Module):
    """Uniform causal average: position t becomes the mean of positions 0..t."""

    def forward(self, x: torch.Tensor, explicit: bool = False):
        T = x.shape[1]
        if explicit:
            weights = F.softmax(torch.zeros(T, T, device=x.device) + causal_mask(T, x.device), dim=-1)
            return weights @ x, {"scores": None, "weights": weights}
        counts = torch.arange(1, T + 1, device=x.device, dtype=x.dtype)[:, None]
        return x.cumsum(dim=1) / counts, None


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.fc = nn.Linear(cfg.d_model, cfg.mlp_ratio * cfg.d_model)
        self.proj = nn.Linear(cfg.mlp_ratio * cfg.d_model, cfg.d_model)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    """One mixer sublayer and an optional MLP sublayer, each residual or not, pre/post/no norm."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        make_mixer = {"none": lambda: None, "average": CausalAverage, "attention": lambda: CausalSelfAttention(cfg)}
        self.mixer = make_mixer[cfg.mixer]()
        use_ln1 = cfg.norm == "post" or (cfg.norm == "pre" and cfg.attn_input_norm)
        self.ln1 = nn.LayerNorm(cfg.d_model) if use_ln1 and self.mixer is not None else None
        self.mlp = MLP(cfg) if cfg.mlp else None
        self.ln2 = nn.LayerNorm(cfg.d_model) if cfg.norm != "none" and self.mlp is not None else None

    def _sublayer(self, x, fn, ln):
        """pre: x + f(LN(x)); post: LN(x + f(x)); none: x + f(x). Without residual the sum drops x."""
        if self.cfg.norm == "post":
            y, extra = fn(x)
            return ln(x + y if self.cfg.residual else y), extra
        y, extra = fn(ln(x) if ln is not None else x)
        return (x + y if self.cfg.residual else y), extra

    def forward(self, x, explicit: bool = False):
        attention = None
        if self.mixer is not None:
            x, attention = self._sublayer(x, lambda h: self.mixer(h, explicit), self.ln1)
        if self.mlp is not None:
            x, _ = self._sublayer(x, lambda h: (self.mlp(h), None), self.ln2)
        return x, attention


class LanguageModel(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        cfg.validate()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos = nn.Embedding(cfg.table_positions, cfg.d_model) if cfg.positions == "learned" else None
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_blocks))
        self.ln_f = nn.LayerNorm(cfg.d_model) if cfg.norm == "pre" else None
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=cfg.output_bias)
        if cfg.tie_output:
            self.head.weight = self.tok.weight

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())  # shared (tied) tensors count once

    def clip_grad_norm_(self, max_norm: float) -> None:
        """The gradients' global norm clipped at max_norm, as attnlab.train.training_step asks of every model
        (K folded seeds clip each seed on its own: attnlab.seed_batch.FoldedSeeds)."""
        torch.nn.utils.clip_grad_norm_(self.parameters(), max_norm)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None, explicit: bool = False):
        """Returns (logits, loss, attentions); attentions is a per-block list on the explicit path."""
        T = idx.shape[1]
        x = self.tok(idx)
        if self.pos is not None:
            if T > self.cfg.table_positions:
                raise ValueError(f"window of {T} tokens exceeds the learned position table "
                                 f"({self.cfg.table_positions}); set model.max_positions")
            x = x + self.pos(torch.arange(T, device=idx.device))
        elif self.cfg.positions == "sinusoidal":
            x = x + sinusoids(T, self.cfg.d_model, idx.device)
        attentions = []
        for block in self.blocks:
            x, attention = block(x, explicit)
            attentions.append(attention)
        if self.ln_f is not None:
            x = self.ln_f(x)
        logits = self.head(x)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss, (attentions if explicit else None)
