"""The model family: causality, masking, parameter counts, fused = explicit attention."""

import math

import pytest
import torch
import torch.nn.functional as F

from attnlab.config import compose, model_config
from attnlab.model import CausalSelfAttention, LanguageModel, ModelConfig, causal_mask

ALL_POSITIONS = ["none", "learned", "sinusoidal", "rope", "alibi"]


def test_full_block_has_the_chapters_parameter_count():
    assert LanguageModel(model_config(compose([]))).n_params() == 477_696


@pytest.mark.parametrize("positions", ALL_POSITIONS)
@pytest.mark.parametrize("norm", ["pre", "post"])
def test_changing_a_future_token_never_changes_an_earlier_output(positions, norm):
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(positions=positions, norm=norm, n_blocks=2, context=32)).eval()
    x = torch.randint(0, 1024, (1, 32))
    changed = x.clone()
    changed[0, 20:] = (changed[0, 20:] + 1) % 1024
    for explicit in (False, True):
        a, _, _ = model(x, explicit=explicit)
        b, _, _ = model(changed, explicit=explicit)
        assert torch.equal(a[0, :20], b[0, :20])
        assert not torch.allclose(a[0, 20:], b[0, 20:])


@pytest.mark.parametrize("mixer", ["average", "attention"])
def test_masked_weights_are_exactly_zero_and_rows_sum_to_one(mixer):
    model = LanguageModel(ModelConfig(mixer=mixer, positions="learned", context=16))
    _, _, attentions = model(torch.randint(0, 1024, (2, 16)), explicit=True)
    weights = attentions[0]["weights"]
    above = torch.ones(16, 16, dtype=torch.bool).triu(1)
    assert (weights[..., above] == 0).all()  # exactly 0: the mask is -inf, not -1e9
    assert torch.allclose(weights.sum(-1), torch.ones(()), atol=1e-6)
    assert torch.isinf(causal_mask(4)[0, 1]) and causal_mask(4)[1, 0] == 0


@pytest.mark.parametrize("positions", ALL_POSITIONS)
@pytest.mark.parametrize("scale_scores", [True, False])
def test_fused_path_equals_explicit_path(positions, scale_scores):
    torch.manual_seed(0)
    attention = CausalSelfAttention(ModelConfig(positions=positions, scale_scores=scale_scores))
    x = torch.randn(3, 40, 128)
    fused, none = attention(x)
    explicit, stats = attention(x, explicit=True)
    assert none is None and stats["weights"].shape == (3, 4, 40, 40)
    assert torch.allclose(fused, explicit, atol=1e-5)


def test_explicit_attention_matches_pytorch_math():
    torch.manual_seed(0)
    cfg = ModelConfig(n_heads=2, d_head=16, d_model=32, positions="none")
    attention = CausalSelfAttention(cfg)
    x = torch.randn(1, 8, 32)
    q = attention.q(x).view(1, 8, 2, 16).transpose(1, 2)
    k = attention.k(x).view(1, 8, 2, 16).transpose(1, 2)
    v = attention.v(x).view(1, 8, 2, 16).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(16)
    scores = scores.masked_fill(torch.ones(8, 8, dtype=torch.bool).triu(1), float("-inf"))
    expected = attention.o((F.softmax(scores, -1) @ v).transpose(1, 2).reshape(1, 8, 32))
    assert torch.allclose(attention(x, explicit=True)[0], expected, atol=1e-6)


def test_head_width_is_independent_of_model_width():
    cfg = ModelConfig(n_heads=1, d_head=1024)
    attention = CausalSelfAttention(cfg)
    assert attention.q.weight.shape == (1024, 128) and attention.o.weight.shape == (128, 1024)
    assert LanguageModel(cfg)(torch.randint(0, 1024, (1, 8)))[0].shape == (1, 8, 1024)


def test_average_mixer_is_the_prefix_mean():
    model = LanguageModel(ModelConfig(mixer="average", mlp=False, norm="none", positions="none", residual=False))
    x = torch.randn(2, 10, 128)
    fast, _ = model.blocks[0].mixer(x)
    explicit, _ = model.blocks[0].mixer(x, explicit=True)
    expected = torch.stack([x[:, : t + 1].mean(1) for t in range(10)], dim=1)
    assert torch.allclose(fast, expected, atol=1e-6) and torch.allclose(explicit, expected, atol=1e-6)


@pytest.mark.parametrize("bad, message", [
    ({"d_model": 130, "n_heads": 4}, "not divisible"),
    ({"d_head": 0}, "d_head=0"),
    ({"mixer": "mean"}, "mixer='mean' is not one of"),
    ({"positions": "rope", "d_head": 33}, "must be even"),
    ({"query_key": False, "n_heads": 2, "d_head": 32}, "must equal d_model"),
])
def test_impossible_shapes_are_refused_with_a_clear_message(bad, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig.from_dict(bad)


def test_unknown_model_option_is_named():
    with pytest.raises(ValueError, match="unknown model option"):
        ModelConfig.from_dict({"heads": 4})
