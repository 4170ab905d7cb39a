"""Measurement `throughput`: how fast the project's model trains, against a PyTorch-native
reference of the same shapes and against the machine's own matmul peak.

For each experiment of the profile (configs/profile/<profile>.yaml, measure.throughput), at its
model shapes and batch size, three models train on one fixed batch of random tokens:
  fused      the project's LanguageModel as every run trains it (F.scaled_dot_product_attention)
  explicit   the same model on its explicit path (scores and weights materialised)
  reference  the same stack built from nn.TransformerEncoderLayer (ReferenceModel)
each in float32 and in bf16 (attnlab.model.autocast, as train.precision=bf16 trains), at each
thread count. A step is attnlab.train's training_step, as the experiment's runs take it: forward and
loss, backward, the gradient clipped where the experiment clips it, AdamW step.

All rows are timed in one process, interleaved: every row's first timed run, then every row's
second, ..., so a drift of the machine (another process, heat) spreads over all rows instead of
biasing the last ones. A row reports the median of its `repeats` runs of `steps` steps and their
spread, time_spread = (slowest - fastest) / median. Achieved FLOP/s = model_flops_per_token · tokens / time; the
peak is a matmul_size² matmul in each precision, timed in the same interleaving, and
MFU = achieved / peak at the same precision and thread count.

    python -m attnlab.measure.throughput --profile quick --out throughput.json
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F
from omegaconf import DictConfig

from attnlab.config import ConfigError, compose, model_config
from attnlab.device import MEASURED_KINDS, pick_device
from attnlab.measure.timing import Workload, machine_columns, measurement_main, time_interleaved
from attnlab.model import PRECISIONS, LanguageModel, ModelConfig, causal_mask
from attnlab.train import make_optimizer, training_step

MODELS = ("fused", "explicit", "reference")
DTYPES = {"float32": torch.float32, "bf16": torch.bfloat16}


def model_flops_per_token(cfg: ModelConfig) -> int:
    """Training FLOPs per token of one step (forward + backward), counting matrix multiplies:

        6·N + 12·L·H·d_head·T

    N is the number of weights that multiply activations (W_q, W_k, W_v, W_o, the MLP's two
    matrices per block, the output layer; the embeddings are lookups). Each costs a multiply and
    an add per token forward (2) and twice that backward, for the input's gradient and its own (4).
    Attention adds q·kᵀ and weights·v, each 2·T·d_head per token and head forward, times 3 with the
    backward: 12·H·d_head·T per block, counted over the full T×T scores although the causal half
    above the diagonal is masked (the convention of PaLM's MFU and nanoGPT's estimate_mfu). Biases,
    norms, softmax and the optimizer are elementwise: left out.
    """
    inner, d = cfg.n_heads * cfg.head_width, cfg.d_model
    block = 0
    if cfg.mixer == "attention":
        block += d * inner * (2 * cfg.query_key + cfg.value) + inner * d * cfg.out_proj
    if cfg.mlp:
        block += 2 * d * cfg.mlp_ratio * d
    weights = cfg.n_blocks * block + d * cfg.vocab_size
    attention = 12 * cfg.n_blocks * inner * cfg.context if cfg.mixer == "attention" else 0
    return 6 * weights + attention


class ReferenceModel(nn.Module):
    """The project's pre-norm stack from PyTorch's own layers: nn.TransformerEncoderLayer
    (norm_first, GELU, no dropout, causal mask) between the same embeddings, final LayerNorm and
    output layer. Its matmuls have the project's shapes; unlike the project's model, its q, k, v
    projections carry biases (PyTorch's layer has them or no bias at all)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        check_reference_shapes(cfg)
        self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos = nn.Embedding(cfg.context, cfg.d_model)
        layer = nn.TransformerEncoderLayer(cfg.d_model, cfg.n_heads, dim_feedforward=cfg.mlp_ratio * cfg.d_model,
                                           dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, cfg.n_blocks, enable_nested_tensor=False)
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size)
        self.register_buffer("mask", causal_mask(cfg.context))

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The mean next-token loss."""
        T = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(T, device=idx.device))
        x = self.blocks(x, mask=self.mask[:T, :T], is_causal=True)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten())

    def clip_grad_norm_(self, max_norm: float) -> None:
        """As the project's model clips (training_step asks every model)."""
        nn.utils.clip_grad_norm_(self.parameters(), max_norm)


# The model ReferenceModel reproduces: the chapter's full block (ladder/block, the norm family's pre-norm).
REFERENCE_BLOCK = dict(mixer="attention", norm="pre", attn_input_norm=True, mlp=True, residual=True, query_key=True,
                       value=True, out_proj=True, positions="learned", scale_scores=True, tie_output=False,
                       output_bias=True)


def check_reference_shapes(cfg: ModelConfig) -> None:
    differs = {k: getattr(cfg, k) for k, v in REFERENCE_BLOCK.items() if getattr(cfg, k) != v}
    if cfg.n_heads * cfg.head_width != cfg.d_model:
        differs["d_head"] = cfg.d_head
    if differs:
        raise ConfigError(f"the reference reproduces the full pre-norm block ({REFERENCE_BLOCK}, "
                          f"n_heads·d_head = d_model); this model has {differs}")


@dataclass(frozen=True)
class Setting:
    """One training shape: a model and how the experiment's runs train it."""
    name: str  # the experiment it comes from
    model: ModelConfig
    train: DictConfig  # its batch size, gradient clipping (None: not clipped) and optimizer


def experiment_setting(experiment: str, profile: str) -> Setting:
    cfg = compose([f"experiment={experiment}", f"profile={profile}"])
    return Setting(experiment, model_config(cfg), cfg.train)


def project_loss(model: LanguageModel, x: torch.Tensor, y: torch.Tensor, explicit: bool) -> torch.Tensor:
    return model(x, y, explicit=explicit)[1]


def training_workloads(setting: Setting, device: torch.device) -> list[Workload]:
    cfg, t = setting.model, setting.train
    torch.manual_seed(0)
    x, y = torch.randint(cfg.vocab_size, (2, t.batch_size, cfg.context), device=device)
    tokens = t.batch_size * cfg.context
    workloads = []
    for name in MODELS:
        model = (ReferenceModel(cfg) if name == "reference" else LanguageModel(cfg)).to(device)
        loss_of = partial(model, x, y) if name == "reference" else partial(project_loss, model, x, y, name == "explicit")
        optimizer = make_optimizer(model.parameters(), t)
        for precision in PRECISIONS:
            columns = {"setting": setting.name, "n_blocks": cfg.n_blocks, "batch_size": t.batch_size,
                       "model": name, "precision": precision}
            step = partial(training_step, model, optimizer, loss_of, precision, device.type, t.grad_clip)
            workloads.append(Workload(columns, step,
                                      model_flops_per_token(cfg) * tokens, tokens))
    return workloads


def matmul_workloads(size: int, device: torch.device) -> list[Workload]:
    """The peak: one size×size matmul per precision (2·size³ FLOPs), in that dtype throughout."""
    workloads = []
    for precision in PRECISIONS:
        a, b = torch.randn(2, size, size, device=device, dtype=DTYPES[precision])
        workloads.append(Workload({"setting": "matmul", "model": f"{size}x{size} matmul", "precision": precision},
                                  partial(torch.matmul, a, b), 2 * size**3, 0))
    return workloads


def measure(settings: list[Setting], threads: list[int], warmup: int, repeats: int, steps: int, matmul_size: int,
            device: str = "cpu") -> list[dict]:
    """Every row: each setting × model × precision × thread count, and the matmul per precision × thread count."""
    target = pick_device(device, MEASURED_KINDS)
    if target.type == "cpu":
        torch.use_deterministic_algorithms(True)  # as attnlab.train runs on a CPU: the same kernels
    sync = torch.cuda.synchronize if target.type == "cuda" else (lambda: None)
    workloads = [w for s in settings for w in training_workloads(s, target)] + matmul_workloads(matmul_size, target)
    own_threads = torch.get_num_threads()
    try:
        seconds = time_interleaved(workloads, threads, warmup, repeats, steps, sync, "throughput")
    finally:
        torch.set_num_threads(own_threads)  # the caller's, as it was
    machine = machine_columns(target)
    rows = []
    for (i, n), runs in seconds.items():
        w, median = workloads[i], statistics.median(runs)
        rows.append({**w.columns, "threads": n, "runs": repeats, "steps": steps, "ms_per_step": 1000 * median,
                     "time_spread": (max(runs) - min(runs)) / median, "steps_per_s": 1 / median,
                     "tokens_per_s": w.tokens / median if w.tokens else None,
                     "mflop_per_token": w.flops / w.tokens / 1e6 if w.tokens else None,
                     "gflop_per_s": w.flops / median / 1e9, **machine})
    peak = {(r["precision"], r["threads"]): r["gflop_per_s"] for r in rows if r["setting"] == "matmul"}
    reference = {(r["setting"], r["precision"], r["threads"]): r["ms_per_step"] for r in rows if r["model"] == "reference"}
    for r in rows:
        trained = r["setting"] != "matmul"
        r["matmul_gflop_per_s"] = peak[r["precision"], r["threads"]]
        r["mfu"] = r["gflop_per_s"] / r["matmul_gflop_per_s"] if trained else None
        # > 1: faster than the reference at the same setting, precision and threads
        r["vs_reference"] = reference[r["setting"], r["precision"], r["threads"]] / r["ms_per_step"] if trained else None
    return rows


def main(argv: list[str] | None = None) -> None:
    def measure_profile(profile: str, sizes: dict) -> list[dict]:
        settings = [experiment_setting(e, profile) for e in sizes["experiments"]]
        return measure(settings, sizes["threads"], sizes["warmup"], sizes["repeats"], sizes["steps"],
                       sizes["matmul_size"], sizes["device"])

    measurement_main("throughput", __doc__, measure_profile, argv)


if __name__ == "__main__":
    main()
