"""throughput: the FLOP formula counts every matmul, the measurement writes every row, the table
and figure read it. Tiny shapes: no test asserts a speed."""

import json
import math

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from attnlab import plots
from attnlab.claims import CLAIMS_FILE
from attnlab.compare import is_timing
from attnlab.config import ConfigError, compose, model_config
from attnlab.data import write_json
from attnlab.families import throughput as family
from attnlab.measure import throughput
from attnlab.model import PRECISIONS, LanguageModel, ModelConfig
from attnlab.plots import BUILDERS as FIGURES
from attnlab.families import load_families
from attnlab.tables import BUILDERS as TABLES

TINY = ModelConfig(vocab_size=64, d_model=16, context=8, n_heads=2, n_blocks=2)


def tiny_batch(train):
    """A train config as the experiment's, with TINY's batch of 2."""
    train = train.copy()
    train.batch_size = 2
    return train


def test_flop_formula_at_the_chapters_block():
    """6·N + 12·L·H·d_head·T with N = 4·128² (q, k, v, o) + 2·128·512 (MLP) + 128·1024 (output layer)."""
    cfg = model_config(compose(["experiment=ladder/block"]))
    weights = 4 * 128 * 128 + 2 * 128 * 512 + 128 * 1024
    assert throughput.model_flops_per_token(cfg) == 6 * weights + 12 * 1 * 4 * 32 * 128 == 2_162_688


@pytest.mark.parametrize("cfg", [TINY, ModelConfig(vocab_size=64, d_model=16, context=8, n_heads=2, d_head=4, mlp=False)],
                         ids=["two_blocks", "narrow_heads_no_mlp"])
def test_flop_formula_equals_pytorchs_count_of_a_training_step(cfg):
    """PyTorch's FlopCounterMode counts every matmul of a forward and backward pass (the explicit
    path: the fused kernel's backward is not counted on a CPU)."""
    batch = 3
    x, y = torch.randint(cfg.vocab_size, (2, batch, cfg.context))
    with FlopCounterMode(display=False) as counter:
        LanguageModel(cfg)(x, y, explicit=True)[1].backward()
    assert counter.get_total_flops() == throughput.model_flops_per_token(cfg) * batch * cfg.context


def test_the_reference_refuses_a_model_it_does_not_reproduce():
    with pytest.raises(ConfigError, match="has {'mixer': 'average'}"):
        throughput.ReferenceModel(ModelConfig(mixer="average"))


@pytest.mark.parametrize("experiment", ["ladder/block", "norm/pre_warmup", "norm/post_warmup_no_clip"])
def test_the_timed_step_clips_exactly_when_the_experiments_runs_do(experiment, monkeypatch):
    """Every timed step is attnlab.train's training_step with the experiment's grad_clip: the norm
    runs clip at 1.0, the ladder's and the unclipped post-norm run's do not."""
    clipped_at = []
    clip = torch.nn.utils.clip_grad_norm_
    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_",
                        lambda params, max_norm, **kw: clipped_at.append(max_norm) or clip(params, max_norm, **kw))
    setting = throughput.experiment_setting(experiment, "smoke")
    setting = throughput.Setting(setting.name, TINY, tiny_batch(setting.train))  # the experiment's step, tiny shapes
    workloads = throughput.training_workloads(setting, torch.device("cpu"))
    for w in workloads:
        w.step()
    runs_clip = compose([f"experiment={experiment}", "profile=smoke"]).train.grad_clip
    assert clipped_at == ([runs_clip] * len(workloads) if runs_clip else [])
    assert experiment != "norm/pre_warmup" or runs_clip == 1.0


@pytest.mark.slow  # times every row, bf16 among them
def test_measurement_writes_every_row_and_the_table_and_figure_read_it(tmp_path):
    settings = [throughput.Setting("tiny", TINY, tiny_batch(compose(["profile=smoke"]).train))]
    rows = throughput.measure(settings, threads=[1, 2], warmup=1, repeats=2, steps=1, matmul_size=16)
    trained = {(r["model"], r["precision"], r["threads"]) for r in rows if r["setting"] == "tiny"}
    assert trained == {(m, p, n) for m in throughput.MODELS for p in PRECISIONS for n in (1, 2)}
    assert {(r["precision"], r["threads"]) for r in rows if r["setting"] == "matmul"} == {
        (p, n) for p in PRECISIONS for n in (1, 2)}
    assert len(rows) == 3 * 2 * 2 + 2 * 2
    for r in rows:
        assert r["ms_per_step"] > 0 and r["time_spread"] >= 0 and r["runs"] == 2 and r["device"] and r["torch"]
        if r["setting"] == "tiny":
            assert r["tokens_per_s"] == pytest.approx(2 * 8 * r["steps_per_s"])
            assert r["mfu"] == pytest.approx(r["gflop_per_s"] / r["matmul_gflop_per_s"])
            assert r["model"] != "reference" or r["vs_reference"] == 1
    measured = tmp_path / "throughput.json"
    write_json(measured, {"rows": rows})
    load_families()
    df = TABLES["throughput"]({"throughput": [str(measured)]})
    assert list(df["setting"]) == ["tiny"] * 12 + ["matmul"] * 4
    assert list(df["model"][:6]) == [m for m in family.MODELS for _ in PRECISIONS]
    assert all(math.isfinite(v) for v in df["mfu"][:12])
    # what attnlab.compare holds equal between two builds (.ci/slurm.sh): what was measured, not how fast
    assert [c for c in df.columns if not is_timing(c)] == ["setting", "n_blocks", "batch_size", "model", "precision",
                                                         "threads", "mflop_per_token", "runs", "steps", "device", "torch"]
    csv = tmp_path / "throughput.csv"
    df.to_csv(csv, index=False)
    inputs = {"table": [str(csv)], "claims": [str(CLAIMS_FILE)], "throughput": [str(measured)]}
    fig = FIGURES["throughput"](inputs, plots.context("throughput", inputs, "smoke"))
    assert any(t.get_text().startswith("The project's model") for t in fig.texts)


@pytest.mark.slow
def test_the_smoke_profile_measures_the_chapters_block(tmp_path):
    out = tmp_path / "throughput.json"
    throughput.main(["--profile", "smoke", "--out", str(out)])
    measured = json.loads(out.read_text())
    assert measured["settings"]["experiments"] == ["ladder/block"]
    assert {r["setting"] for r in measured["rows"]} == {"ladder/block", "matmul"}
    assert {r["mflop_per_token"] for r in measured["rows"] if r["setting"] != "matmul"} == {2.162688}
