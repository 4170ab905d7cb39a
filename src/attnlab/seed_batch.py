"""Seeds trained together (train.seed_batch=K), folded into the batch: the K models of one config's
seeds become one LanguageModel whose parameters carry a leading seed axis, and whose batch holds the
K seeds' windows one after another (K·B windows). Only the model's leaf layers change (fold):
linear layers are batched matmuls over the seed axis, embeddings and LayerNorms index and scale with
each seed's own tensors, and everything between them is the model's own code, so attention sees
(K·B, heads, T, d_head) and calls F.scaled_dot_product_attention unchanged (the explicit path too).
One AdamW over the folded parameters (AdamW is elementwise, so it takes each seed's own step), the
step attnlab.train.training_step, as for one seed; clipping is per seed (FoldedSeeds.clip_grad_norm_).

Each seed keeps what its separate run would have: its own initialisation and batches (the trainer
builds seed k's model under manual_seed(k) and draws from seed k's generator) and its own AdamW
moments. Only the order of float operations inside the batched matmuls and reductions differs, so
a seed's numbers agree with its separate run's to rounding, not bit for bit (tests/test_seed_batch.py).

A seed's state comes in and goes out in a separate run's checkpoint format (model state_dict, AdamW
state_dict): the folded parameters have the separate model's names and order, each tensor stacked,
so a batch resumes from separate runs' checkpoints and the other way round.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn


class FoldedLinear(nn.Module):
    """K nn.Linear layers: weight (K, out, in), bias (K, out) or None; input (K·B, ..., in)."""

    def __init__(self, weight: nn.Parameter, bias: nn.Parameter | None):
        super().__init__()
        self.weight, self.bias = weight, bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        folded = x.reshape(self.weight.shape[0], -1, x.shape[-1])  # (K, B·..., in): seed k's rows are its own
        w = self.weight.transpose(1, 2)
        y = torch.bmm(folded, w) if self.bias is None else torch.baddbmm(self.bias[:, None], folded, w)
        return y.view(*x.shape[:-1], -1)


class FoldedEmbedding(nn.Module):
    """K nn.Embedding tables: weight (K, rows, d). Token ids (K·B, T) look up their own seed's table;
    a 1-D index (the positions 0..T-1 every window shares) gives each seed's rows once per window
    (`windows`: B, set by FoldedSeeds for each batch)."""

    def __init__(self, weight: nn.Parameter):
        super().__init__()
        self.weight, self.windows = weight, 1

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        K, rows, d = self.weight.shape
        if idx.dim() == 1:
            return self.weight[:, idx].unsqueeze(1).expand(K, self.windows, -1, -1).flatten(0, 1)
        offset = torch.arange(K, device=idx.device).repeat_interleave(idx.shape[0] // K) * rows
        return F.embedding(idx + offset.view(-1, *[1] * (idx.dim() - 1)), self.weight.view(K * rows, d))


class FoldedLayerNorm(nn.Module):
    """K nn.LayerNorm layers over the last dimension: weight and bias (K, d)."""

    def __init__(self, weight: nn.Parameter, bias: nn.Parameter, eps: float):
        super().__init__()
        self.weight, self.bias, self.eps = weight, bias, eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        K, d = self.weight.shape
        y = F.layer_norm(x, (d,), eps=self.eps).view(K, -1, d)
        return (y * self.weight[:, None] + self.bias[:, None]).view(x.shape)


def fold(models: list[nn.Module]) -> nn.Module:
    """One copy of models[0] whose leaf layers hold all K models' tensors, stacked (a tensor the models
    share, as a tied output head, stays one parameter)."""
    folded = copy.deepcopy(models[0])
    stacked = {}

    def stack(tensors) -> nn.Parameter | None:
        if tensors[0] is None:
            return None
        key = tuple(id(t) for t in tensors)
        if key not in stacked:
            stacked[key] = nn.Parameter(torch.stack([t.detach() for t in tensors]))
        return stacked[key]

    for name, module in list(folded.named_modules()):
        layers = [m.get_submodule(name) for m in models]
        if isinstance(module, nn.Linear):
            replacement = FoldedLinear(stack([m.weight for m in layers]), stack([m.bias for m in layers]))
        elif isinstance(module, nn.Embedding):
            replacement = FoldedEmbedding(stack([m.weight for m in layers]))
        elif isinstance(module, nn.LayerNorm) and module.weight is not None and len(module.normalized_shape) == 1:
            replacement = FoldedLayerNorm(stack([m.weight for m in layers]), stack([m.bias for m in layers]), module.eps)
        elif any(True for _ in module.parameters(recurse=False)):
            raise TypeError(f"seed_batch cannot fold {name}: {type(module).__name__}")
        else:
            continue
        parent, _, attr = name.rpartition(".")
        setattr(folded.get_submodule(parent), attr, replacement)
    return folded


class FoldedSeeds(nn.Module):
    """K models as one: forward(x, y) takes each seed's batch, x and y (K, B, T), and returns what
    LanguageModel's does, (logits, losses, None), with the logits (K·B, T, vocab) and the K seeds' mean
    next-token losses; its parameters are the separate model's, each with a leading K axis."""

    def __init__(self, models: list[nn.Module]):
        super().__init__()
        self.seeds, self.model = len(models), fold(models)
        self.positions = [m for m in self.model.modules() if isinstance(m, FoldedEmbedding)]

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        K, B = x.shape[:2]
        for table in self.positions:
            table.windows = B
        logits, _, _ = self.model(x.flatten(0, 1))
        losses = F.cross_entropy(logits.flatten(0, -2), y.flatten(), reduction="none")
        return logits, losses.view(K, -1).mean(1), None

    @torch.no_grad()
    def clip_grad_norm_(self, max_norm: float) -> None:
        """torch.nn.utils.clip_grad_norm_ for each seed on its own: seed k's gradients scaled so their
        global norm is at most max_norm (the same formula)."""
        grads = [p.grad for p in self.parameters() if p.grad is not None]
        per_tensor = torch.stack([torch.linalg.vector_norm(g.flatten(1), dim=1) for g in grads])  # (tensors, K)
        total = torch.linalg.vector_norm(per_tensor, dim=0)  # (K,)
        scale = (max_norm / (total + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(scale.view(-1, *([1] * (g.dim() - 1))))

    def seed_state(self, k: int) -> dict:
        """Seed k's model state_dict, as its separate model holds it."""
        return {name: value[k] for name, value in self.model.state_dict().items()}


class SeedBatch:
    """K models of one architecture trained as one: `folded` and `optimizer` are what
    attnlab.train.training_step steps; models() gives the K models with their current weights (for
    evaluation and checkpoints); keep() gives the batch without some seeds (those that diverged)."""

    def __init__(self, models: list[nn.Module], make_optimizer, optimizer_states: list[dict | None], compile: bool):
        self.models, self.make_optimizer, self.compile = models, make_optimizer, compile
        self.folded = FoldedSeeds(models)
        self.optimizer = make_optimizer(self.folded.parameters())
        if optimizer_states[0] is not None:
            self.optimizer.load_state_dict(_stacked_optimizer_state(optimizer_states))
        if compile:
            self.folded.compile()

    @torch.no_grad()
    def sync(self) -> list[nn.Module]:
        """The K models, each holding its seed's current weights."""
        for k, model in enumerate(self.models):
            model.load_state_dict(self.folded.seed_state(k))
        return self.models

    def optimizer_state(self, k: int) -> dict:
        """Seed k's AdamW state_dict, as its separate run's optimizer would hold it."""
        full = self.optimizer.state_dict()
        return {"state": {i: {key: value.clone() if value.dim() == 0 else value[k].clone() for key, value in s.items()}
                          for i, s in full["state"].items()},
                "param_groups": copy.deepcopy(full["param_groups"])}

    def keep(self, indices: list[int]) -> SeedBatch:
        """A batch of the seeds at `indices` only, each with its current weights and AdamW state."""
        models = self.sync()
        states = [self.optimizer_state(k) for k in indices] if self.optimizer.state else [None] * len(indices)
        return SeedBatch([models[k] for k in indices], self.make_optimizer, states, self.compile)


def _stacked_optimizer_state(states: list[dict]) -> dict:
    """One AdamW state_dict over stacked tensors from K seeds' own (steps must agree)."""
    stacked = {}
    for i, first in states[0]["state"].items():
        stacked[i] = {}
        for key, value in first.items():
            if value.dim() == 0:
                if any(s["state"][i][key] != value for s in states):
                    raise ValueError(f"seeds are at different optimizer steps ({key}); train them separately")
                stacked[i][key] = value.clone()
            else:
                stacked[i][key] = torch.stack([s["state"][i][key] for s in states])
    return {"state": stacked, "param_groups": copy.deepcopy(states[0]["param_groups"])}
