"""Measurement `attention_scaling`: time and memory of one attention layer as the context grows.

One CausalSelfAttention of the project's model (d_model 512, 8 heads), batch 1, float32,
forward pass only, through two paths that compute the same thing:
  explicit  the model's explicit=True math: scores and weights materialised, memory ~ n²
  fused     F.scaled_dot_product_attention (a flash kernel on CPU), memory ~ n

    python -m attnlab.measure.attention_scaling run --profile quick --path explicit --out explicit.json
    python -m attnlab.measure.attention_scaling one --profile quick --path explicit --tokens 4096

`run` measures every size the profile is given (configs/measure/attention_scaling.yaml), each in
its own process (`one`, which prints one JSON row), so a size that fails loses only its row
and the CPU peak memory of a size is not hidden by an earlier, larger one.

Never take the machine down: on a CPU an allocation that does not fit gets a process killed
(or the machine stalled) instead of raising. Before anything of a size is allocated, its
estimated need is compared with a memory budget (fixed, or a share of the memory available
at that moment); a size that does not fit is recorded as "out of memory (needs X GB,
budget Y GB)". On CUDA the allocator's out-of-memory error is caught as well.
GB and MB here are 2^30 and 2^20 bytes.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import yaml

from attnlab.config import CONFIG_DIR, ConfigError
from attnlab.data import write_json
from attnlab.device import MEASURED_KINDS, device_name, pick_device
from attnlab.model import CausalSelfAttention, ModelConfig

CONFIG = CONFIG_DIR / "measure" / "attention_scaling.yaml"
PATHS = ("explicit", "fused")
DEVICES = ("auto", *MEASURED_KINDS)
MB, GB = 2**20, 2**30
FLOAT32 = 4
# Peak of the explicit path in (H, T, T) float32 matrices, from model.py's expression: the
# scaled scores + the causal mask + their sum (2.125), then scores + weights (2); rounded up.
EXPLICIT_MATRICES = 2.25
ACTIVATIONS = 8  # (T, d_model) tensors alive at once: q, k, v, their per-head copies, output
OVERHEAD = GB // 4  # allocator slack and per-thread kernel buffers


class SettingsError(ValueError):
    """A bad measurement setting; the message names the value and what is allowed."""


def load_settings(profile: str, path: Path = CONFIG) -> dict:
    """The settings of `path` for one profile: the sizes it gives that profile (`sizes.<profile>`) with its
    shared settings (which may also set sizes, for a measurement by hand)."""
    shared = yaml.safe_load(Path(path).read_text())
    sizes = shared.pop("sizes", None) or {}
    if profile not in sizes:
        raise SettingsError(f"{path}: profile={profile!r} has no sizes (add sizes.{profile}); "
                            f"allowed: {sorted(sizes)}")
    settings = {**sizes[profile], **shared}
    check_settings(settings, f"{path}, sizes.{profile}")
    return settings


def check_settings(s: dict, where: str) -> None:
    def fail(key, allowed):
        raise SettingsError(f"{where}: {key}={s.get(key)!r}; allowed: {allowed}")

    for key in ("d_model", "n_heads", "repeats"):
        if not isinstance(s.get(key), int) or s[key] < 1:
            fail(key, "a whole number >= 1")
    if not isinstance(s.get("warmup"), int) or s["warmup"] < 0:
        fail("warmup", "a whole number >= 0")
    for key in ("timeout_s", "runtime_min"):
        if not isinstance(s.get(key), (int, float)) or s[key] <= 0:
            fail(key, "a positive number")
    if s.get("device") not in DEVICES:
        fail("device", list(DEVICES))
    budget = s.get("memory_budget_gb")
    if budget is not None and (not isinstance(budget, (int, float)) or budget <= 0):
        fail("memory_budget_gb", "null (a share of available memory) or a positive number of GB")
    share = s.get("memory_share")
    if not isinstance(share, dict) or set(share) != {"cpu", "cuda"} or not all(
            isinstance(v, (int, float)) and 0 < v <= 1 for v in share.values()):
        fail("memory_share", "{cpu: share, cuda: share}, each in (0, 1]")
    tokens = s.get("tokens")
    if not isinstance(tokens, dict) or set(tokens) != set(PATHS):
        fail("tokens", f"a mapping with keys {list(PATHS)}")
    for path, sizes in tokens.items():
        if (not isinstance(sizes, list) or not sizes or not all(isinstance(n, int) and n > 0 for n in sizes)
                or sizes != sorted(set(sizes))):
            raise SettingsError(f"{where}: tokens.{path}={sizes!r}; allowed: increasing positive whole numbers")


def matrix_bytes(tokens: int, n_heads: int) -> int:
    """One (H, T, T) float32 score matrix: the chapter's attention-matrix size."""
    return n_heads * tokens**2 * FLOAT32


def estimated_need(path: str, tokens: int, d_model: int, n_heads: int) -> int:
    """Bytes one forward pass allocates beyond its input and weights, with margin."""
    quadratic = EXPLICIT_MATRICES * matrix_bytes(tokens, n_heads) if path == "explicit" else 0
    return int(quadratic + ACTIVATIONS * tokens * d_model * FLOAT32 + OVERHEAD)


def available_bytes(device: str) -> int:
    if device == "cuda":
        return torch.cuda.mem_get_info()[0]
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    raise SettingsError("cannot read MemAvailable from /proc/meminfo; set memory_budget_gb in " + str(CONFIG))


def memory_budget(settings: dict, device: str) -> tuple[int, str]:
    """(bytes, how it was chosen): the fixed budget, or a share of what is available right now."""
    if settings["memory_budget_gb"] is not None:
        return int(settings["memory_budget_gb"] * GB), "fixed"
    share = settings["memory_share"][device]
    available = available_bytes(device)
    return int(share * available), f"{share:.0%} of {available / GB:.1f} GB available"


def _status_bytes(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def start_peak(device: str):
    """Reset the peak counter; returns (a function giving the peak bytes above now, how it is measured)."""
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        return lambda: torch.cuda.max_memory_allocated() - before, "CUDA max_memory_allocated minus before"
    try:  # Linux: "5" resets the kernel's RSS high-water mark (VmHWM) to the current RSS
        Path("/proc/self/clear_refs").write_text("5")
        before = _status_bytes("VmRSS")
        return lambda: _status_bytes("VmHWM") - before, "CPU peak RSS of own process (VmHWM minus RSS before)"
    except OSError:  # elsewhere: ru_maxrss cannot be reset, but right after setup it is the current RSS
        before = _maxrss()
        return lambda: _maxrss() - before, "CPU peak RSS of own process (ru_maxrss minus before)"


def _maxrss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)


def timed_ms(fn, sync, warmup: int, repeats: int) -> list[float]:
    """Wall times (ms) of `repeats` calls of fn after `warmup` calls: every one is kept, so a ratio or
    an exponent is judged on its spread, not on one median (the ledger asks for at least five). fn's
    result is dropped at once, so no two outputs coexist."""
    for _ in range(warmup):
        fn()
        sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        times.append(1000 * (time.perf_counter() - start))
    return times


def fused_kernel(n_heads: int, tokens: int, d_head: int, device: str) -> str:
    """The backend F.scaled_dot_product_attention picks for these shapes (private API: may vanish)."""
    q = torch.empty(1, n_heads, tokens, d_head, device=device)  # empty: no pages touched
    try:
        from torch.nn.attention import SDPBackend
        return "sdpa:" + SDPBackend(torch._fused_sdp_choice(q, q, q, is_causal=True)).name.lower()
    except (AttributeError, ImportError, RuntimeError, ValueError):
        return "sdpa"


def run_forward(path: str, tokens: int, settings: dict, device: str) -> dict:
    """Time and peak memory of one layer's forward pass at one size (allocates: check the budget first)."""
    torch.manual_seed(0)
    cfg = ModelConfig(d_model=settings["d_model"], n_heads=settings["n_heads"], context=tokens)
    attn = CausalSelfAttention(cfg).to(device).eval()
    x = torch.randn(1, tokens, cfg.d_model, device=device)
    explicit = path == "explicit"
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    timing = dict(sync=sync, warmup=settings["warmup"], repeats=settings["repeats"])
    kernel = "explicit: matmul, softmax, matmul" if explicit else fused_kernel(
        cfg.n_heads, tokens, cfg.head_width, device)

    def projections():  # the four (T, 512) x (512, 512) maps; o applied to x has the shape of o(y)
        attn.q(x), attn.k(x), attn.v(x), attn.o(x)

    with torch.inference_mode():
        read_peak, method = start_peak(device)
        total = timed_ms(lambda: attn(x, explicit=explicit), **timing)
        peak = read_peak()
        projected = timed_ms(projections, **timing)
    return {"ms_total": statistics.median(total), "ms_total_runs": total, "ms_projections": statistics.median(projected),
            "ms_projections_runs": projected, "peak_mb": peak / MB, "peak_method": method, "runs": len(total),
            "kernel": kernel}


def measure_size(path: str, tokens: int, settings: dict, threads: int | None = None) -> dict:
    """One row: out of memory (nothing allocated) when the estimated need exceeds the budget."""
    device = pick_device(settings["device"], MEASURED_KINDS).type
    if threads:
        torch.set_num_threads(threads)
    budget, budget_rule = memory_budget(settings, device)
    need = estimated_need(path, tokens, settings["d_model"], settings["n_heads"])
    row = {"path": path, "tokens": tokens, "need_gb": need / GB, "budget_gb": budget / GB,
           "budget_rule": budget_rule, "device": device_name(device), "torch": torch.__version__,
           "threads": torch.get_num_threads()}
    if need > budget:
        return {**row, "status": f"out of memory (needs {need / GB:.1f} GB, budget {budget / GB:.1f} GB)"}
    try:
        return {**row, **run_forward(path, tokens, settings, device), "status": "ok"}
    except torch.cuda.OutOfMemoryError:
        return {**row, "status": f"out of memory (CUDA allocator; estimated {need / GB:.1f} GB, "
                                 f"budget {budget / GB:.1f} GB)"}


def run_isolated(path: str, tokens: int, profile: str, settings: dict, threads: int | None,
                 budget_gb: float | None, config: Path) -> dict:
    """measure_size in a child process; its failure (killed, crashed, too slow) becomes the row."""
    cmd = [sys.executable, "-m", "attnlab.measure.attention_scaling", "one", "--profile", profile,
           "--path", path, "--tokens", str(tokens), "--config", str(config)]
    cmd += ["--threads", str(threads)] if threads else []
    cmd += ["--budget-gb", str(budget_gb)] if budget_gb is not None else []
    row = {"path": path, "tokens": tokens}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=settings["timeout_s"])
    except subprocess.TimeoutExpired:
        return {**row, "status": f"timed out after {settings['timeout_s']} s"}
    sys.stderr.write(proc.stderr)
    if proc.returncode == 0:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    if proc.returncode < 0:
        why = f"killed by signal {-proc.returncode}"
        why += " (SIGKILL: likely the kernel's out-of-memory killer)" if proc.returncode == -9 else ""
    else:
        why = f"exit code {proc.returncode}"
    last = (proc.stderr.strip().splitlines() or [""])[-1][:200]
    return {**row, "status": f"failed ({why}: {last})" if last else f"failed ({why})"}


def with_budget(settings: dict, budget_gb: float | None) -> dict:
    return settings if budget_gb is None else {**settings, "memory_budget_gb": budget_gb}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["run", "one"], help="run: every size, each in its own process; "
                        "one: a single size, JSON row on stdout")
    parser.add_argument("--profile", required=True)
    parser.add_argument("--path", required=True, choices=PATHS)
    parser.add_argument("--tokens", type=int, help="one: the size")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's choice)")
    parser.add_argument("--budget-gb", type=float, help="override memory_budget_gb of the profile")
    parser.add_argument("--config", type=Path, default=CONFIG)
    parser.add_argument("--out", type=Path, help="run: the JSON file to write")
    args = parser.parse_args(argv)
    try:
        settings = with_budget(load_settings(args.profile, args.config), args.budget_gb)
        check_settings(settings, "--budget-gb")
        pick_device(settings["device"], MEASURED_KINDS)  # a device torch cannot see stops before any size runs
    except (SettingsError, ConfigError) as e:
        raise SystemExit(f"error: {e}")
    if args.command == "one":
        if args.tokens is None or args.tokens < 1:
            raise SystemExit(f"error: one needs --tokens >= 1, got {args.tokens}")
        print(json.dumps(measure_size(args.path, args.tokens, settings, args.threads)))
        return
    if args.out is None:
        raise SystemExit("error: run needs --out")
    rows = []
    for tokens in settings["tokens"][args.path]:
        row = run_isolated(args.path, tokens, args.profile, settings, args.threads, args.budget_gb, args.config)
        print(f"{args.path} {tokens:>6}: {row['status']}"
              + (f", {row['ms_total']:.2f} ms, peak {row['peak_mb']:.1f} MB" if row["status"] == "ok" else ""),
              file=sys.stderr, flush=True)
        rows.append({**row, "matrix_mb": matrix_bytes(tokens, settings["n_heads"]) / MB})
    write_json(args.out, {"table": "attention_scaling", "profile": args.profile, "path": args.path,
                          "settings": settings, "rows": rows})


if __name__ == "__main__":
    main()
