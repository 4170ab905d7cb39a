"""Position schemes (RoPE, ALiBi, sinusoids, none) and attnlab.eval_windows on a real smoke run."""

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from attnlab.eval_windows import load_run, main as evaluate_main
from attnlab.families.positions import position_extrapolation
from attnlab.model import CausalSelfAttention, LanguageModel, ModelConfig, alibi_bias, alibi_slopes, rope, sinusoids

ROOT = Path(__file__).resolve().parents[1]


def small(**overrides) -> ModelConfig:
    return ModelConfig(**{"vocab_size": 50, "d_model": 32, "context": 16, "n_heads": 4, **overrides})


def without_causal_mask(module: CausalSelfAttention) -> None:
    """Let every position see every other: the explicit path's additive mask becomes zeros."""
    module.score_bias = lambda T, device: torch.zeros(T, T, device=device)


# --- RoPE -------------------------------------------------------------------------------

def test_rope_scores_depend_only_on_offset():
    torch.manual_seed(0)
    T, dh = 12, 16
    q, k = torch.randn(dh), torch.randn(dh)
    # the same query and key vector at every position: any change in score comes from position
    scores = rope(q.expand(1, 1, T, dh)) @ rope(k.expand(1, 1, T, dh)).transpose(-2, -1)
    scores = scores[0, 0]
    for shift in (1, 3, 7):
        torch.testing.assert_close(scores[shift:, shift:], scores[:-shift, :-shift])
    assert not torch.allclose(scores[5, 2], scores[5, 4])  # but it does depend on the offset


def test_rope_is_a_rotation_and_leaves_position_zero_alone():
    x = torch.randn(2, 3, 10, 8)
    y = rope(x)
    torch.testing.assert_close(y.norm(dim=-1), x.norm(dim=-1))
    torch.testing.assert_close(y[..., 0, :], x[..., 0, :])


def test_rope_in_attention_gives_offset_only_scores():
    torch.manual_seed(0)
    attention = CausalSelfAttention(small(positions="rope"))
    x = torch.randn(1, 1, 32).expand(1, 12, 32)  # one token repeated: positions are all that differ
    _, att = attention(x, explicit=True)
    scores = att["scores"][0]
    for i in range(1, 12):
        for j in range(i):
            torch.testing.assert_close(scores[:, i, j], scores[:, i - j, 0])  # same offset, same score


# --- ALiBi ------------------------------------------------------------------------------

@pytest.mark.parametrize("heads", [4, 8])
def test_alibi_slopes_are_powers_of_two(heads):
    expected = torch.tensor([2.0 ** (-8 * h / heads) for h in range(1, heads + 1)])
    torch.testing.assert_close(alibi_slopes(heads), expected)
    assert alibi_slopes(heads)[-1] == 2.0 ** -8  # the last head always has slope 1/256


def test_alibi_slope_values_for_4_and_8_heads():
    assert alibi_slopes(4).tolist() == [1 / 4, 1 / 16, 1 / 64, 1 / 256]
    assert alibi_slopes(8).tolist() == [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]


@pytest.mark.parametrize("heads", [4, 8])
def test_alibi_bias_is_minus_slope_times_distance_inside_the_causal_mask(heads):
    T = 6
    bias = alibi_bias(heads, T)
    assert bias.shape == (heads, T, T)
    slopes = alibi_slopes(heads)
    for h in range(heads):
        for i in range(T):
            for j in range(T):
                expected = -float(slopes[h]) * (i - j) if j <= i else -math.inf
                assert bias[h, i, j].item() == expected, (h, i, j)


def test_alibi_bias_known_values():
    assert alibi_bias(4, 5)[0, 4, 0].item() == -1.0  # slope 1/4, distance 4
    assert alibi_bias(4, 5)[3, 4, 1].item() == -3 / 256
    assert alibi_bias(8, 4)[0, 3, 1].item() == -1.0  # slope 1/2, distance 2
    assert alibi_bias(8, 4)[7, 2, 2].item() == 0.0  # a token is never penalised for itself


def test_alibi_fused_path_equals_explicit_path():
    torch.manual_seed(0)
    model = LanguageModel(small(positions="alibi")).eval()
    idx = torch.randint(0, 50, (2, 16))
    fused, _, _ = model(idx)
    explicit, _, attentions = model(idx, explicit=True)
    torch.testing.assert_close(fused, explicit, atol=1e-5, rtol=1e-5)
    weights = attentions[0]["weights"]
    assert (weights.triu(1) == 0).all()  # the float mask still carries the causal -inf


def test_alibi_and_rope_run_past_the_training_context():
    for positions in ("alibi", "rope", "sinusoidal", "none"):
        model = LanguageModel(small(positions=positions)).eval()
        logits, _, _ = model(torch.randint(0, 50, (1, 64)))  # context is 16
        assert logits.shape == (1, 64, 50) and torch.isfinite(logits).all()


# --- sinusoids --------------------------------------------------------------------------

def test_sinusoid_values_at_known_positions():
    pe = sinusoids(60, 4)
    torch.testing.assert_close(pe[0], torch.tensor([0.0, 1.0, 0.0, 1.0]))
    # d=4: frequencies 1 and 1/10000^(2/4) = 1/100
    torch.testing.assert_close(pe[1], torch.tensor([math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)]))
    torch.testing.assert_close(pe[50], torch.tensor([math.sin(50), math.cos(50), math.sin(0.5), math.cos(0.5)]))
    pe8 = sinusoids(4, 8)  # d=8: second frequency 1/10000^(2/8) = 1/10
    torch.testing.assert_close(pe8[3, 2:4], torch.tensor([math.sin(0.3), math.cos(0.3)]))


def test_sinusoids_are_fixed_and_length_independent():
    torch.testing.assert_close(sinusoids(256, 32)[:64], sinusoids(64, 32))
    # nothing learned: exactly the parameters of the model without positions
    assert LanguageModel(small(positions="sinusoidal")).n_params() == LanguageModel(small(positions="none")).n_params()


# --- no positions -----------------------------------------------------------------------

def test_attention_without_positions_or_mask_is_permutation_equivariant():
    torch.manual_seed(0)
    attention = CausalSelfAttention(small(positions="none"))
    without_causal_mask(attention)
    x, perm = torch.randn(2, 10, 32), torch.randperm(10)
    y, _ = attention(x, explicit=True)
    y_perm, _ = attention(x[:, perm], explicit=True)
    torch.testing.assert_close(y_perm, y[:, perm])


def test_whole_model_without_positions_or_mask_is_permutation_equivariant():
    torch.manual_seed(0)
    perm = torch.randperm(12)
    idx = torch.randint(0, 50, (2, 12))
    for positions, equivariant in (("none", True), ("learned", False), ("sinusoidal", False), ("rope", False)):
        model = LanguageModel(small(positions=positions)).eval()
        without_causal_mask(model.blocks[0].mixer)
        logits, _, _ = model(idx, explicit=True)
        logits_perm, _, _ = model(idx[:, perm], explicit=True)
        assert torch.allclose(logits_perm, logits[:, perm], atol=1e-5) == equivariant, positions


def test_causal_model_without_positions_runs_and_sees_its_prefix_as_a_bag():
    torch.manual_seed(0)
    model = LanguageModel(small(positions="none")).eval()
    idx = torch.randint(0, 50, (2, 16))
    logits, loss, _ = model(idx, idx)
    explicit, _, _ = model(idx, explicit=True)
    assert torch.isfinite(loss)
    torch.testing.assert_close(logits, explicit, atol=1e-5, rtol=1e-5)
    # the last position sees a set of tokens, not a sequence: shuffling its prefix changes nothing
    shuffled = torch.cat([idx[:, :-1][:, torch.randperm(15)], idx[:, -1:]], dim=1)
    torch.testing.assert_close(model(shuffled)[0][:, -1], logits[:, -1], atol=1e-5, rtol=1e-5)
    # and the mask keeps it causal: changing later tokens leaves position 0 alone
    later = idx.clone()
    later[:, 1:] = (later[:, 1:] + 1) % 50
    torch.testing.assert_close(model(later)[0][:, 0], logits[:, 0])


# --- attnlab.eval_windows on a real (smoke) run -----------------------------------------

@pytest.fixture(scope="module")
def learned_run(tmp_path_factory):
    """position/learned trained for the smoke profile's few steps, data cache in a temp folder."""
    corpus = os.environ.get("ATTNLAB_CORPUS")
    if not corpus or not Path(corpus).is_file():
        pytest.skip("needs the corpus: export ATTNLAB_CORPUS=/path/to/tinyshakespeare/input.txt")
    tmp = tmp_path_factory.mktemp("position_run")
    run_dir = tmp / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    subprocess.run([sys.executable, "-m", "attnlab.train", "experiment=position/learned", "profile=smoke",
                    f"data.dir={tmp / 'data'}", "train.threads=1", f"hydra.run.dir={run_dir}"],
                   cwd=ROOT, env=env, check=True, capture_output=True)
    return run_dir


@pytest.mark.slow
def test_evaluate_reproduces_the_runs_own_perplexity(learned_run, tmp_path):
    metrics = json.loads((learned_run / "metrics.json").read_text())
    out = tmp_path / "eval.json"
    evaluate_main([str(learned_run), "--lengths", "64", "128", "256", "--out", str(out), "--threads", "1"])
    result = json.loads(out.read_text())
    assert result["training_length"] == 64
    assert result["held_out_ppl"]["64"] == pytest.approx(metrics["held_out_ppl"]["64"], rel=1e-6)
    assert all(math.isfinite(result["held_out_ppl"][n]) for n in ("128", "256"))
    assert result["windows"] == {"64": 8, "128": 8, "256": 8}  # the smoke profile's cap
    # the run evaluated itself at every window (train.eval_lengths) with the same numbers
    assert metrics["held_out_ppl"] == pytest.approx(result["held_out_ppl"], rel=1e-6)


@pytest.mark.slow
def test_the_table_reads_every_window_of_the_runs(learned_run):
    metrics = json.loads((learned_run / "metrics.json").read_text())
    row = position_extrapolation({"learned": [str(learned_run / "metrics.json")]}).iloc[0]
    assert row["trained_at"] == 64
    assert [row[f"ppl_{n}"] for n in (64, 128, 256)] == [metrics["held_out_ppl"][str(n)] for n in (64, 128, 256)]
    assert row["params"] == metrics["params"] and row["config_hash"] == metrics["config_hash"]


@pytest.mark.slow
def test_evaluate_refuses_windows_past_the_learned_table(learned_run, tmp_path):
    out = tmp_path / "eval.json"
    with pytest.raises(SystemExit, match=r"\[512\].*256 rows.*max_positions"):
        evaluate_main([str(learned_run), "--lengths", "512", "--out", str(out)])
    assert not out.exists()  # nothing half-written


@pytest.mark.slow
def test_evaluate_refuses_a_corrupt_checkpoint(learned_run, tmp_path):
    """Flipped bytes inside a tensor still load with torch.load; the checkpoint's checksum stops
    them from becoming a table row."""
    run_dir = tmp_path / "run"
    shutil.copytree(learned_run, run_dir)
    checkpoint = bytearray((run_dir / "checkpoint.pt").read_bytes())
    middle = len(checkpoint) // 2
    checkpoint[middle:middle + 8] = bytes(b ^ 0xFF for b in checkpoint[middle:middle + 8])
    (run_dir / "checkpoint.pt").write_bytes(checkpoint)
    out = tmp_path / "eval.json"
    with pytest.raises(SystemExit, match="does not match its checksum.*rerun the training"):
        evaluate_main([str(run_dir), "--lengths", "64", "--out", str(out)])
    assert not out.exists()


def test_evaluate_refuses_a_folder_that_is_not_a_run(tmp_path):
    with pytest.raises(SystemExit, match="not a finished attnlab.train run"):
        evaluate_main([str(tmp_path), "--lengths", "64", "--out", str(tmp_path / "eval.json")])


@pytest.mark.slow
def test_untrained_rows_of_the_learned_table_keep_their_initial_values(learned_run):
    """Rows 64..255 never get a gradient: only AdamW's weight decay touches them (the cliff)."""
    cfg, trained, metrics = load_run(learned_run)
    torch.manual_seed(cfg.seed)  # train.py seeds right before building the model
    initial = LanguageModel(trained.cfg)
    decay = (1 - cfg.train.lr * cfg.train.weight_decay) ** metrics["steps"]
    before, after = initial.pos.weight.detach(), trained.pos.weight.detach()
    torch.testing.assert_close(after[64:], before[64:] * decay)
    assert (after[:64] - before[:64] * decay).abs().max() > 1e-4  # the trained rows did move
