"""The ladder family: each row adds one piece; the analytic demonstrations give exact values."""

import json

import pytest
import torch

from attnlab.config import compose, model_config
from attnlab.families import ladder as family
from attnlab.measure import analytic
from attnlab.model import LanguageModel

LADDER = ["no_context", "average", "average_positions", "average_residual", "dot_raw", "query_key",
          "head_replace", "head_added", "four_heads", "mlp", "block"]
# What each row switches relative to the row above (the chapter's ladder section; table ladder).
ADDS = {
    "average": {"mixer": "average"},
    "average_positions": {"positions": "learned"},
    "average_residual": {"residual": True},
    "dot_raw": {"mixer": "attention", "n_heads": 1, "query_key": False, "value": False, "out_proj": False},
    "query_key": {"query_key": True},
    "head_replace": {"value": True, "residual": False},
    "head_added": {"residual": True},
    "four_heads": {"n_heads": 4, "out_proj": True},
    "mlp": {"mlp": True},
    "block": {"norm": "pre"},
}


@pytest.fixture(scope="module")
def ladder_models():
    return {run: model_config(compose([f"experiment=ladder/{run}"])) for run in LADDER}


def test_ladder_rows_add_one_piece_each(ladder_models):
    first = ladder_models["no_context"]
    assert (first.mixer, first.positions, first.residual, first.mlp, first.norm) == ("none", "none", False, False, "none")
    for below, run in zip(LADDER, LADDER[1:]):
        a, b = vars(ladder_models[below]), vars(ladder_models[run])
        changed = {k: b[k] for k in b if a[k] != b[k]}
        assert changed == ADDS[run], f"ladder/{run} vs ladder/{below}"
    assert ladder_models["block"] == model_config(compose([])), "row 11 is the default model"


def test_ladder_parameter_prices(ladder_models):
    params = {run: LanguageModel(cfg).n_params() for run, cfg in ladder_models.items()}
    assert params["block"] == 477_696
    assert params["four_heads"] - params["head_added"] == 16_512  # W_o: 128*128 + 128
    assert params["block"] - params["mlp"] == 768  # three LayerNorms of 2*128


def test_depth_config_is_the_block_twice():
    one, two = (model_config(compose([f"experiment={run}"])) for run in ("ladder/block", "depth/two_blocks"))
    assert two.n_blocks == 2 and vars(one) | {"n_blocks": 2} == vars(two)


def test_gpt2_formula_is_the_model():
    rows = {r["component"]: r for r in analytic.gpt2_params()["rows"]}
    assert rows["total (weights tied)"]["formula"] == rows["total (weights tied)"]["model_numel"] == 124_439_808
    assert rows["token embeddings"]["model_numel"] == 38_597_376
    assert rows["one block"]["model_numel"] == 7_087_872
    assert all(r["formula"] == r["model_numel"] for r in rows.values())


def test_gpt2_mismatch_fails_the_job(monkeypatch, tmp_path):
    monkeypatch.setitem(analytic.GPT2_SMALL, "qkv_bias", False)  # the model loses 3*768 per block
    with pytest.raises(SystemExit, match="formula .* vs model"):
        analytic.main(["gpt2_params", "--out", str(tmp_path / "r.json")])
    assert not (tmp_path / "r.json").exists()


def test_param_breakdown():
    rows = analytic.param_breakdown()["rows"]
    for r in rows[:-1]:
        d = r["d"]
        assert r["total"] == 12 * d * d + 13 * d == r["attention"] + r["mlp"] + r["layernorm"]
        assert abs(r["mlp_share"] - 2 / 3) < 0.003
    ours = rows[-1]
    assert (ours["attention"], ours["mlp"], ours["layernorm"]) == (4 * 128**2 + 128, 8 * 128**2 + 5 * 128, 4 * 128)


def test_averaging_matrix_printed(tmp_path):
    analytic.main(["averaging_matrix", "--out", str(tmp_path / "r.json")])
    df = family.averaging_matrix({"result": [str(tmp_path / "r.json")]})
    printed = [" ".join(row[1:7]) for row in df.itertuples(index=False)]
    assert printed == [
        "1.000 0.000 0.000 0.000 0.000 0.000",
        "0.500 0.500 0.000 0.000 0.000 0.000",
        "0.333 0.333 0.333 0.000 0.000 0.000",
        "0.250 0.250 0.250 0.250 0.000 0.000",
        "0.200 0.200 0.200 0.200 0.200 0.000",
        "0.167 0.167 0.167 0.167 0.167 0.167",
    ]
    # the masked softmax puts exactly 0 above the diagonal; the last row has nothing above it
    assert df["masked_weight_max"].tolist()[:-1] == [0.0] * 5 and df["masked_weight_max"].isna().iloc[-1]


def test_masked_softmax_is_the_averaging_matrix():
    W = analytic.masked_average_weights(16)
    assert torch.equal(W.triu(1), torch.zeros(16, 16)), "masked weights must be exactly 0 (-inf, not -1e9)"
    assert (W - analytic.averaging_matrix(16)).abs().max() < 1e-7


def test_three_averages_and_the_shuffle_agree():
    assert all(r["max_abs_diff"] < 1e-5 for r in analytic.average_equivalence()["rows"])
    assert all(r["max_abs_diff"] < 1e-5 for r in analytic.shuffle_test()["rows"])


def test_attention_matches_pytorch():
    out = analytic.attention_outputs(batch=2, T=16)
    ours = out.pop("ours")
    assert ours.abs().mean() > 0.01  # a real output, not zeros
    for name, theirs in out.items():
        assert (ours - theirs).abs().max() < 1e-5, name
    rows = analytic.attention_equivalence(batch=2, T=16)["rows"]
    assert [r["pair"] for r in rows] == ["ours vs nn.MultiheadAttention", "ours vs F.scaled_dot_product_attention"]


def test_ladder_table_reads_added_params(tmp_path):
    params = {"no_context": 263_168, "average": 263_168, "four_heads": 345_216}
    inputs = {name: [_metrics(tmp_path / name, n, ppl=40.0 + i)] for i, (name, n) in enumerate(params.items())}
    df = family.ladder(inputs)
    assert list(df["added_params"]) == [None, 0, 345_216 - 263_168]
    assert list(df["row"]) == [1, 2, 3] and list(df["held_out_ppl"]) == [40.0, 41.0, 42.0]


def test_depth_table_reads_blocks_from_run_config(tmp_path):
    inputs = {}
    for name, blocks in (("one_block", 1), ("two_blocks", 2)):
        path = _metrics(tmp_path / name, 1000 * blocks, ppl=38.0)
        (tmp_path / name / "config.yaml").write_text(f"config:\n  model:\n    n_blocks: {blocks}\n")
        inputs[name] = [path]
    assert list(family.depth_overfit(inputs)["blocks"]) == [1, 2]


def _metrics(folder, params: int, ppl: float) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    metrics = {"params": params, "train_ppl": ppl - 10, "held_out_ppl": {"128": ppl}, "steps": 3, "diverged": False,
               "diverged_step": None, "config_hash": "x", "commit": "abc", "experiment": f"ladder/{folder.name}"}
    (folder / "metrics.json").write_text(json.dumps(metrics))
    return str(folder / "metrics.json")
