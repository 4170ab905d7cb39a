"""A head read on its weights (attnlab.measure.head_readings): the reading places each row's largest weight right,
on a hand-built model whose one head is made to read one target, and counts what it reads elsewhere; its scores,
read as the trainer reads them, are the trainer's."""

import pytest
import torch

from attnlab import runs
from attnlab.measure.head_readings import (TARGETS, forced, main, read_elsewhere, score_readings, shares, targets_of,
                                          where_heads_point)
from attnlab.model import LanguageModel, ModelConfig
from attnlab.train import attention_stats

V, T = 8, 12
SHARP = 200.0  # a score this far above the rest makes its row one-hot


def reading(offset: int | None) -> LanguageModel:
    """One block, one head, no norm, no MLP: the residual stream is a token one-hot and a position one-hot. The
    query at position t meets the key at position t - offset (offset None: the first position) with a score of
    SHARP, every other key with 0; the head writes the token it reads, and the output reads the token part."""
    width = V + T
    model = LanguageModel(ModelConfig(vocab_size=V, d_model=width, context=T, n_heads=1, mixer="attention",
                                      norm="none", mlp=False, positions="learned", scale_scores=False))
    mixer = model.blocks[0].mixer
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        model.tok.weight[:, :V] = torch.eye(V)
        model.pos.weight[:, V:] = torch.eye(T)
        mixer.v.weight[:V, :V] = torch.eye(V)  # the value: the token, written back to the token's part ...
        mixer.o.weight[:V, :V] = 2 * torch.eye(V)
        model.head.weight[:, :V] = torch.eye(V)  # ... which the output reads
        for t in range(T):
            source = 0 if offset is None else t - offset
            if source >= 0:
                mixer.q.weight[t, V + t] = SHARP  # the query of position t in dimension t ...
                mixer.k.weight[t, V + source] = 1.0  # ... meets the key of its source there
    return model.eval()


def windows(n: int = 5) -> torch.Tensor:
    return torch.randint(0, V, (n, T), generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("offset, target", [(0, "itself"), (1, "previous"), (None, "first"), (3, "elsewhere")])
def test_a_head_made_to_read_one_target_is_placed_there(offset, target):
    read = where_heads_point(reading(offset), windows(), str)
    expected = {t: (1.0 if t == target else 0.0) for t in TARGETS}
    if offset == 3:  # row 2 has no source three back (uniform, not one-hot); row 3's source is the first token
        assert read["onehot_share"] == pytest.approx((T - 3) / (T - 2))
        expected.update(first=pytest.approx(1 / (T - 3)), elsewhere=pytest.approx((T - 4) / (T - 3)))
    else:
        assert read["onehot_share"] == 1.0
    assert read["onehot_rows"] == expected
    assert read["rows"] == 5 * (T - 2)


def test_what_is_read_elsewhere_is_counted_with_its_distance():
    x = windows()
    read = where_heads_point(reading(3), x, str)
    elsewhere = read["elsewhere_onehot"]
    assert elsewhere["rows"] == 5 * (T - 4) and elsewhere["median_back"] == 3.0
    read_tokens = x[:, 1: T - 3].flatten()  # the tokens three back of rows 4..T-1
    counts = torch.bincount(read_tokens, minlength=V)
    top = elsewhere["top_tokens"][0]
    assert top["share"] == pytest.approx(counts.max().item() / len(read_tokens))
    assert int(top["token"]) in torch.nonzero(counts == counts.max()).flatten().tolist()


def test_a_row_is_one_hot_only_above_the_runs_own_threshold():
    weights = torch.zeros(1, 1, 4, 4)
    weights[0, 0, 2, 2], weights[0, 0, 2, 0] = runs.ONEHOT_WEIGHT, 1 - runs.ONEHOT_WEIGHT  # at it: not one-hot
    weights[0, 0, 3, 2], weights[0, 0, 3, 0] = 0.995, 0.005
    placed = targets_of(weights)
    assert placed["onehot"].tolist() == [[[False, True]]]
    assert placed["itself"].tolist() == [[[True, False]]] and placed["previous"].tolist() == [[[False, True]]]
    assert shares(placed, placed["onehot"]) == {"itself": 0.0, "previous": 1.0, "first": 0.0, "elsewhere": 0.0}
    none = torch.zeros_like(placed["onehot"])
    assert set(shares(placed, none).values()) == {None}
    assert read_elsewhere(placed, torch.zeros(1, 4, dtype=torch.long), none, str)["rows"] == 0


def test_a_folder_without_a_run_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="not a finished attnlab.train run"):
        main(["--run", str(tmp_path), "--out", str(tmp_path / "out.json")])
    with pytest.raises(SystemExit, match="positive"):
        main(["--run", str(tmp_path), "--out", str(tmp_path / "out.json"), "--windows", "0"])


@pytest.mark.parametrize("model", [dict(norm="pre"), dict(norm="pre", attn_input_norm=False, scale_scores=False)])
def test_the_scores_read_as_the_runs_read_them_are_the_trainers(model):
    torch.manual_seed(0)
    net = LanguageModel(ModelConfig(vocab_size=V, d_model=16, context=T, n_heads=2, **model)).eval()
    x, other = windows(), torch.randint(0, V, (3, T), generator=torch.Generator().manual_seed(1))
    read = score_readings(net, x, other)
    assert read["runs_reading"] == pytest.approx(attention_stats(net, x)["block1_score_std"], rel=1e-6)
    scores = net(x, explicit=True)[2][0]["scores"]
    causal = torch.isfinite(scores)
    assert read["row_0_included"] == pytest.approx(scores[causal].std().item(), rel=1e-6)
    assert read["largest_abs"] == pytest.approx(scores[..., 1:, :][causal[..., 1:, :]].abs().max().item(), rel=1e-6)
    assert read["unmasked"] != pytest.approx(read["row_0_included"])  # the entries above the diagonal count too
    assert read["training_batch"] == pytest.approx(attention_stats(net, other)["block1_score_std"], rel=1e-6)


@pytest.mark.parametrize("offset, target", [(0, "itself"), (1, "previous"), (None, "first")])
def test_forcing_a_head_onto_the_target_it_reads_leaves_its_outputs_and_another_target_does_not(offset, target):
    model, x = reading(offset), windows()
    with torch.inference_mode():
        own = model(x)[0]
        for other in TARGETS[:-1]:
            with forced(model, other):
                logits = model(x)[0]
            if other == target:
                torch.testing.assert_close(logits, own)
            else:
                assert not torch.allclose(logits, own)
        assert torch.equal(model(x)[0], own)  # the intervention is gone after it
