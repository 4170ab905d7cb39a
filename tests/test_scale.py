"""The sqrt(d_k) family: random-row measurements, the undivided variant, the runaway statistics."""

import json
import math

import pandas as pd
import pytest
import torch
import yaml

from attnlab.config import compose, model_config
from attnlab.families import scale
from attnlab.measure import random_rows
from attnlab.model import LanguageModel
from attnlab.train import attention_stats


@pytest.mark.parametrize("d", [4, 64, 1024])
def test_dot_product_variance_is_d(d):
    pairs = 20000
    out = random_rows.score_variance(d, pairs, torch.Generator().manual_seed(1))
    # Var(q·k) = d; the sample variance has standard error sqrt((2d² + 6d) / pairs)
    assert abs(out["var"] - d) < 4 * math.sqrt((2 * d * d + 6 * d) / pairs)
    assert out["std"] == pytest.approx(math.sqrt(out["var"]), rel=1e-5)


def test_saturation_on_hand_made_rows():
    n = 64
    one_hot = torch.zeros(n)
    one_hot[3] = 1.0
    uniform = torch.full((n,), 1.0 / n)
    half = torch.zeros(n)
    half[:2] = 0.5
    stats = random_rows.weight_stats(torch.stack([one_hot, uniform, half]), frozen_below=0.01)
    assert stats["frozen"].tolist() == [True, False, False]
    assert stats["jacobian_sum"].tolist() == pytest.approx([0.0, (n - 1) / n, 0.5])
    assert stats["jacobian_max"].tolist() == pytest.approx([0.0, (n - 1) / n**2, 0.25])
    assert stats["effective_tokens"].tolist() == pytest.approx([1.0, n, 2.0])
    assert stats["largest_weight"].tolist() == pytest.approx([1.0, 1 / n, 0.5])
    # the threshold is a setting: above 1/64·63/64 the uniform row counts as frozen too
    assert random_rows.weight_stats(uniform[None], frozen_below=0.02)["frozen"].item()


@pytest.mark.parametrize("n", [1, 7, 64, 1000])
def test_effective_tokens_of_uniform_row_is_n(n):
    assert random_rows.weight_stats(torch.full((1, n), 1.0 / n), 0.01)["effective_tokens"].item() == pytest.approx(n, rel=1e-5)


def test_random_rows_divided_flat_undivided_collapses():
    rows = pd.concat([random_rows.random_rows(d, 400, 64, 0.01, torch.Generator().manual_seed(0)) for d in (16, 1024)])
    mean = rows.groupby(["d_k", "variant"])[["jacobian_sum", "frozen", "effective_tokens"]].mean()
    for d in (16, 1024):  # divided scores are N(0,1) at every width: 1 - E Σw² ≈ 1 - e/64
        assert mean.loc[(d, "divided"), "jacobian_sum"] == pytest.approx(1 - math.e / 64, abs=0.01)
        assert mean.loc[(d, "divided"), "frozen"] == 0
    assert mean.loc[(1024, "undivided"), "frozen"] > 0.5
    assert mean.loc[(1024, "undivided"), "effective_tokens"] < 1.5 < mean.loc[(16, "undivided"), "effective_tokens"]
    assert (rows["d_k"].dtype, rows["jacobian_sum"].dtype) == ("int64", "float32")


def test_cli_and_tables(tmp_path):
    settings = {"seed": 0, "widths": [4, 256], "pairs": 500, "rows": 50, "keys": 64, "frozen_below": 0.01}
    config = tmp_path / "scale.yaml"
    config.write_text(yaml.safe_dump(settings))
    for name in ("score_variance", "rows"):
        random_rows.main([name, "--config", str(config), "--out", str(tmp_path / f"{name}.csv"),
                          "--meta", str(tmp_path / f"{name}.json")])
    assert json.loads((tmp_path / "rows.json").read_text())["frozen_below"] == 0.01
    rows = {"rows": [str(tmp_path / "rows.csv")], "meta": [str(tmp_path / "rows.json")]}
    tokens = scale.effective_tokens(rows)
    assert tokens["d_k"].tolist() == [4, 256] and tokens["rows"].tolist() == [50, 50]
    assert (tokens["mean_effective_undivided"] <= tokens["mean_effective_divided"]).all()
    assert tokens["largest_undivided"].between(1 / 64, 1).all()
    saturation = scale.softmax_saturation(rows)
    assert saturation["frozen_divided"].tolist() == [0.0, 0.0]
    variance = scale.score_variance({"pairs": [str(tmp_path / "score_variance.csv")],
                                     "meta": [str(tmp_path / "score_variance.json")]})
    assert variance["d"].tolist() == [4, 256]
    config.write_text(yaml.safe_dump({**settings, "frozen_below": 0.5}))
    with pytest.raises(SystemExit, match="frozen_below=0.5"):
        random_rows.main(["rows", "--config", str(config), "--out", str(tmp_path / "bad.csv"), "--meta", str(tmp_path / "bad.json")])
    assert not (tmp_path / "bad.csv").exists()


def _model(overrides):
    torch.manual_seed(0)
    return LanguageModel(model_config(compose(overrides))).eval()


def test_undivided_is_scale_one_on_both_paths():
    x = torch.randint(0, 1024, (2, 32))
    divided = _model(["experiment=scale/short_d256_divided"])
    undivided = _model(["experiment=scale/short_d256_undivided"])
    with torch.no_grad():
        s_div = divided(x, explicit=True)[2][0]["scores"]
        s_und = undivided(x, explicit=True)[2][0]["scores"]
        causal = torch.isfinite(s_div)
        assert torch.allclose(s_div[causal] * 16, s_und[causal], rtol=1e-4, atol=1e-3)
        # the fused training path uses the same scale as the explicit one
        assert torch.allclose(undivided(x)[0], undivided(x, explicit=True)[0], atol=1e-3)


def test_runaway_config_and_score_std_at_initialisation():
    cfg = compose(["experiment=scale/short_d1024_undivided"])
    assert cfg.train.attention_stats and not cfg.model.attn_input_norm and cfg.model.n_heads == 1
    model = _model(["experiment=scale/short_d1024_undivided"])
    stats = attention_stats(model, torch.randint(0, 1024, (4, 128), generator=torch.Generator().manual_seed(0)))
    # PyTorch's default init: embeddings tok + pos have variance 2, W_q/W_k entries variance
    # 1/(3·128), so q_j, k_j have variance 2/3 and q·k over 1024 dims has std 1024^½ · 2/3
    assert stats["block1_score_std"] == pytest.approx(math.sqrt(1024) * 2 / 3, rel=0.15)
    assert 0 <= stats["block1_onehot_share"] <= 1 and stats["block1_entropy"] > 0


def _fake_run(folder, ppl, n_heads=1, d_head=None, score_std=(1.0, 2.0)):
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps({
        "params": 1000, "train_ppl": ppl, "held_out_ppl": {"128": ppl}, "steps": 3, "diverged": False,
        "diverged_step": None, "config_hash": folder.name, "commit": "abc", "dirty": False}))
    (folder / "config.yaml").write_text(yaml.safe_dump({"config": {
        "model": {"d_model": 128, "n_heads": n_heads, "d_head": d_head, "attn_input_norm": True},
        "train": {"steps": 1500, "batch_size": 32}}}))
    pd.DataFrame({"step": [0, 3], "block1_score_std": score_std, "block1_entropy": [3.0, 1.0],
                  "block1_onehot_share": [0.0, 0.5]}).to_csv(folder / "evals.csv", index=False)
    return [str(folder / "metrics.json")]


def test_training_tables_pair_the_variants(tmp_path):
    d32, d1024 = scale.SCALE_TRAINING[0], scale.SCORE_RUNAWAY  # inputs are named by experiment
    inputs = {d32.divided: _fake_run(tmp_path / "a", 40.0, n_heads=4),
              d32.undivided: _fake_run(tmp_path / "b", 39.0, n_heads=4),
              d1024.divided: _fake_run(tmp_path / "c", 50.0, d_head=1024),
              d1024.undivided: _fake_run(tmp_path / "d", 67.0, d_head=1024, score_std=(21.0, 5000.0))}
    df = scale.scale_training(inputs)
    assert df["d_k"].tolist() == [32, 1024]
    assert df["difference"].tolist() == pytest.approx([-1.0, 17.0])
    assert df["config_hash"].tolist() == ["a/b", "c/d"]
    with pytest.raises(ValueError, match="shared_d32 lacks its {'undivided'} run"):
        scale.scale_training({d32.divided: inputs[d32.divided]})
    runaway = scale.score_runaway({"divided": inputs[d1024.divided], "undivided": inputs[d1024.undivided]})
    assert runaway.set_index("variant")["score_std_final"].to_dict() == {"divided": 2.0, "undivided": 5000.0}
    assert runaway["score_std_init"].tolist() == [1.0, 21.0]


@pytest.mark.parametrize("shares, kind", [
    ([0.0, 0.6, 0.9, 0.95, 0.97, 0.96], "locked early"),    # one-hot by a fifth of training, and stays
    ([0.0, 0.2, 0.3, 0.2, 0.7, 0.95], "hardened late"),     # soft while it learns, one-hot at the end
    ([0.0, 0.6, 0.4, 0.2, 0.1, 0.05], "soft"),              # a passing spike, soft at the end
])
def test_a_heads_collapse_is_named_by_when_it_happened(shares, kind):
    from attnlab.claims.lr_sweep import collapse_kind
    evals = pd.DataFrame({"step": [0, 200, 400, 600, 800, 1000], "block1_onehot_share": shares})
    assert collapse_kind(evals) == kind


def test_the_sweep_names_each_collapsed_seeds_kind_and_says_so_per_rate():
    """The published sweep: at 6e-3 the divided head's seeds split into both kinds, each seed named once; the
    undivided head's row exists at every rate it was trained."""
    from pathlib import Path
    sweep = pd.read_csv(Path(__file__).resolve().parents[1] / "results/full/tables/sqrt_dk_sweep.csv")
    soft = sweep[sweep["claim"] == "divided_soft"].iloc[0]
    assert "locked early: seeds" in soft["at_6e-3"] and "hardened late: seeds" in soft["at_6e-3"]
    undivided = sweep[sweep["claim"] == "undivided_kinds"].iloc[0]
    assert all(str(undivided[c]).startswith("collapsed") for c in sweep.columns
               if c.startswith("at_") and isinstance(undivided[c], str))
