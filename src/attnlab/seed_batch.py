"""Seeds trained together (train.seed_batch=K): the K models of one config's seeds as one set of
parameters with a leading seed dimension, their loss vmapped over it (torch.func), one AdamW over
the stacked tensors.

Each seed keeps what its separate run would have: its own initialisation and batches (the
trainer builds seed k's model under manual_seed(k) and draws from seed k's generator), and its own
AdamW moments (AdamW is elementwise, so one optimizer over stacked tensors takes each seed's step).
What differs is the order of float operations inside the batched matrix multiplies, so a seed's
numbers agree with its separate run's to rounding, not bit for bit (tests/test_seed_batch.py).

A seed's state comes in and goes out in a separate run's checkpoint format (model state_dict,
AdamW state_dict), so a batch resumes from separate runs' checkpoints and the other way round.
"""

from __future__ import annotations

import copy

import torch
from torch import nn
from torch.func import functional_call, vmap

from attnlab.model import autocast


class SeedBatch:
    """K models of one architecture trained as one: step() takes each seed's batch and returns each
    seed's loss; models() gives the K models with their current weights (for evaluation and
    checkpoints); keep() gives the batch without some seeds (those that diverged)."""

    def __init__(self, models: list[nn.Module], make_optimizer, optimizer_states: list[dict | None], compile: bool):
        self.models, self.make_optimizer, self.compile = models, make_optimizer, compile
        self.names = [name for name, _ in models[0].named_parameters()]  # the optimizer's order in a separate run
        self.params = {name: torch.stack([dict(m.named_parameters())[name].detach() for m in models]).requires_grad_()
                       for name in self.names}
        self.optimizer = make_optimizer(list(self.params.values()))
        if optimizer_states[0] is not None:
            self.optimizer.load_state_dict(_stacked_optimizer_state(optimizer_states))
        shape_only = copy.deepcopy(models[0]).to("meta")  # the module's code, without weights of its own

        def loss_of(params, x, y):
            return functional_call(shape_only, params, (x, y))[1]

        self.losses = vmap(loss_of)
        if compile:
            self.losses = torch.compile(self.losses)

    def step(self, x: torch.Tensor, y: torch.Tensor, lr: float, precision: str, device_type: str,
             grad_clip: float | None) -> torch.Tensor:
        """attnlab.train.training_step for every seed at once: x, y are (K, batch, context). Returns
        the K losses; if any is not finite, no seed is stepped (the caller drops those seeds and
        steps the others again on their same batches)."""
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        with autocast(precision, device_type):
            losses = self.losses(self.params, x, y)
        if not torch.isfinite(losses).all():
            return losses
        self.optimizer.zero_grad(set_to_none=True)
        losses.sum().backward()  # seeds share no weights: each seed's gradient is its own loss's
        if grad_clip:
            _clip_per_seed(list(self.params.values()), grad_clip)
        self.optimizer.step()
        return losses.detach()

    @torch.no_grad()
    def sync(self) -> list[nn.Module]:
        """The K models, each holding its seed's current weights."""
        for k, model in enumerate(self.models):
            for name, p in model.named_parameters():
                p.copy_(self.params[name][k])
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


@torch.no_grad()
def _clip_per_seed(params: list[torch.Tensor], max_norm: float) -> None:
    """clip_grad_norm_ for each seed on its own: seed k's gradients scaled so their global norm is at
    most max_norm (the same formula as torch.nn.utils.clip_grad_norm_)."""
    grads = [p.grad for p in params if p.grad is not None]
    per_tensor = torch.stack([torch.linalg.vector_norm(g.flatten(1), dim=1) for g in grads])  # (tensors, K)
    total = torch.linalg.vector_norm(per_tensor, dim=0)  # (K,)
    scale = (max_norm / (total + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(scale.view(-1, *([1] * (g.dim() - 1))))
