"""The Winograd probe: the split, the scored position, determinism, and the tables."""

import json

import pandas as pd
import pytest
import torch

from attnlab import runs, winograd as W
from attnlab.config import ConfigError
from attnlab.families import winograd as F

TIMING = {"train_s", "tokens_per_s", "s_per_step", "started_at", "finished_at"}  # the clock, not the numbers


@pytest.fixture(scope="module")
def role():
    return W.Language.from_cfg(W.language_config("role"))


@pytest.fixture(scope="module")
def category():
    return W.Language.from_cfg(W.language_config("category"))


def pairs(triples):
    return {(x, y) for x, y, _ in triples}


def test_role_held_out_pairs_are_reversed_training_pairs(role):
    split = role.split()
    train, held = pairs(split["train"]), pairs(split["held_out"])
    assert len(held) == role.held_out and not train & held
    assert all((y, x) in train for x, y in held)
    # every noun is trained in both slots, so order is the only thing a held-out pair changes
    assert {x for x, _ in train} == {y for _, y in train} == set(role.x_nouns)
    assert len(train) + len(held) == 16 * 15 and all(x != y for x, y in train | held)
    assert role.probe in train and role.probe[::-1] in train


def test_category_held_out_pairs_are_unseen_and_nouns_are_not(category):
    split = category.split()
    train, held = pairs(split["train"]), pairs(split["held_out"])
    assert len(held) == category.held_out and not train & held
    assert {x for x, _ in held} <= {x for x, _ in train} and {y for _, y in held} <= {y for _, y in train}
    assert all(x in category.x_nouns and y in category.y_nouns for x, y in train | held)


def test_every_pair_has_every_adjective(role):
    split = role.split()
    for name in ("train", "held_out"):
        counts = pd.DataFrame(split[name], columns=["x", "y", "adj"]).groupby(["x", "y"]).size()
        assert (counts == len(role.adjectives)).all()


def test_scored_position_predicts_the_referent(role):
    triples = role.split()["held_out"]
    vocab = role.vocab()
    x, y = W.encode(role, triples, vocab)
    assert x.shape == (len(triples), 17) and torch.equal(x[:, 1:], y[:, :-1])
    for i, (nx, ny, adj) in enumerate(triples):
        assert [vocab[t] for t in x[i, W.SCORED - 1:W.SCORED + 1]] == ["so", "the"]
        assert vocab[y[i, W.SCORED]] == (nx if adj in ("tired", "scared", "slow", "weak") else ny)
        assert vocab[x[i, W.ADJ_POS]] == adj and vocab[x[i, W.X_POS]] == nx and vocab[x[i, W.Y_POS]] == ny


def test_split_is_deterministic_and_seeded(role):
    assert role.split() == role.split()
    other = W.Language(**{**role.__dict__, "split_seed": role.split_seed + 1})
    assert pairs(other.split()["held_out"]) != pairs(role.split()["held_out"])


def test_a_version_that_splits_again_keeps_the_words_and_holds_out_other_pairs(category):
    """configs/winograd/language/category1.yaml: the category words, split_seed 1; its runs read its own split."""
    again = W.Language.from_cfg(W.language_config("category1"))
    assert {**again.__dict__, "split_seed": 0} == category.__dict__ and again.split_seed == 1
    assert pairs(again.split()["held_out"]) != pairs(category.split()["held_out"])
    cfg = W.compose_run("category1_average_linear")
    assert cfg.winograd.language == W.language_config("category1")
    assert not cfg.model.mlp and cfg.model.mixer == "average"
    with pytest.raises(ConfigError, match="'category9' is not one of"):
        W.language_config("category9")


def test_bad_language_is_refused(role):
    with pytest.raises(ConfigError, match="held_out=500"):
        W.Language(**{**role.__dict__, "held_out": 500}).validate()
    with pytest.raises(ConfigError, match="role must be one of"):
        W.Language(**{**role.__dict__, "adjectives": {"tired": "x", "wet": "z"}}).validate()
    with pytest.raises(ConfigError, match="lacks"):
        W.Language.from_cfg({"version": "role", "nouns": ["a", "b"]})
    with pytest.raises(ConfigError, match="version='ladder'"):
        W.Language.from_cfg({"version": "ladder"})
    with pytest.raises(ConfigError, match="nope"):
        W.compose_run("nope")


def test_split_files_and_a_stale_split_is_refused(tmp_path):
    record = W.write_split("category", tmp_path)
    lines = (tmp_path / "held_out.txt").read_text().splitlines()
    assert len(lines) == len(record["held_out"]) == 12
    assert all(line.startswith("the ") and line.endswith(" waited .") for line in lines)
    cfg = W.compose_run("category_block")
    W.read_split(tmp_path / "split.json", cfg.winograd.language)
    cfg.winograd.language.split_seed = 7
    with pytest.raises(ConfigError, match="another language"):
        W.read_split(tmp_path / "split.json", cfg.winograd.language)


@pytest.mark.slow  # two whole smoke trainings
def test_training_is_deterministic_and_writes_every_file(tmp_path):
    W.write_split("role", tmp_path)
    overrides = ["profile=smoke", "seed=3", "train.threads=1"]
    first = W.train_to("role_two_blocks", tmp_path / "split.json", tmp_path / "a", overrides)
    second = W.train_to("role_two_blocks", tmp_path / "split.json", tmp_path / "b", overrides)
    assert first["final_loss"] == second["final_loss"] and first["held_out"] == second["held_out"]
    assert first["steps"] == 6 and first["held_out"]["sentences"] == 240
    h = first["held_out"]
    assert h["accuracy"] + h["wrong_noun"] + h["other"] == pytest.approx(100)
    probe = json.loads((tmp_path / "a/probe.json").read_text())
    assert len(probe) == 2 * 8  # two blocks, eight adjectives
    for row in probe:
        assert len(row["weights"]) == 15 and sum(row["weights"]) == pytest.approx(1, abs=1e-5)
        assert row["tokens"][1:7:5] == ["animal", "street"]
    assert (tmp_path / "a/probe.json").read_bytes() == (tmp_path / "b/probe.json").read_bytes()
    # a run folder like every trained run's, its config readable by the tables
    assert {p.name for p in (tmp_path / "a").iterdir()} == {
        runs.CONFIG, runs.METRICS, runs.CURVE, runs.EVALS, runs.CHECKPOINT, "answers.csv", "probe.json"}
    assert runs.run_config(tmp_path / "a/metrics.json")["winograd"]["run"] == "role_two_blocks"
    assert pd.read_csv(tmp_path / "a/evals.csv")["step"].tolist() == [0, 3, 6]


@pytest.mark.slow
def test_an_interrupted_run_resumes_to_the_uninterrupted_numbers(tmp_path, monkeypatch):
    W.write_split("category", tmp_path)
    overrides = ["profile=smoke", "train.checkpoint_interval=2", "train.threads=1"]
    whole = W.train_to("category_block", tmp_path / "split.json", tmp_path / "whole", overrides)

    real_batch, calls = W.Sentences.batch, []

    def dies_at_step_5(self, generator):
        calls.append(1)
        if len(calls) == 5:  # after the step-4 checkpoint, before the end
            raise KeyboardInterrupt
        return real_batch(self, generator)

    monkeypatch.setattr(W.Sentences, "batch", dies_at_step_5)
    with pytest.raises(KeyboardInterrupt):
        W.train_to("category_block", tmp_path / "split.json", tmp_path / "resumed", overrides)
    assert not (tmp_path / "resumed" / runs.METRICS).exists()
    monkeypatch.setattr(W.Sentences, "batch", real_batch)
    resumed = W.train_to("category_block", tmp_path / "split.json", tmp_path / "resumed", overrides)
    assert {k: v for k, v in resumed.items() if k not in TIMING} == {k: v for k, v in whole.items() if k not in TIMING}
    for name in ("answers.csv", "probe.json", runs.CURVE, runs.EVALS, runs.CONFIG):
        assert (tmp_path / "resumed" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()


def test_average_probe_is_uniform(tmp_path):
    W.write_split("category", tmp_path)
    W.train_to("category_average", tmp_path / "split.json", tmp_path / "avg", ["profile=smoke"])
    for row in json.loads((tmp_path / "avg/probe.json").read_text()):
        assert row["weights"] == pytest.approx([1 / 15] * 15)


def fake_probe(path, seed):
    rows = []
    for block in (1, 2):
        for adj, role in (("tired", "x"), ("wet", "y")):
            w = [0.0] * 15
            w[1 if block == 1 else (11 if role == "x" else 6)] = 1.0 - 0.1 * seed
            w[14] = 0.1 * seed
            tokens = "the animal did not cross the street because it was too ADJ , so the".replace("ADJ", adj).split()
            rows.append({"adjective": adj, "role": role, "block": block, "tokens": tokens, "weights": w,
                         "referent": "animal" if role == "x" else "street", "answer": "animal"})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows))
    # the run's record beside its probe, as winograd_train writes both
    path.with_name("metrics.json").write_text(json.dumps({"seed": seed, "commit": "0123456789ab", "dirty": False,
                                                          "device": ("cpu", "cuda")[seed % 2]}))
    return str(path)


def test_attention_tables_average_seeds_and_say_where_they_were_made(tmp_path):
    probes = [fake_probe(tmp_path / f"seed{s}/probe.json", s) for s in (0, 1)]
    att = F.winograd_attention({"probe": probes})
    assert list(att["adjective"]) == ["tired", "tired", "wet", "wet"] and list(att["block"]) == [1, 2, 1, 2]
    assert att.loc[0, "1:animal"] == pytest.approx(0.95) and att.loc[0, "1:animal_std"] > 0
    assert "11:adj" in att.columns and list(att["right"]) == ["2/2", "2/2", "0/2", "0/2"]
    assert att.loc[0, ["seeds", "commit", "device", "seed_ids"]].tolist() == [2, "0123456789 ×2", "cpu ×1, cuda ×1", "0,1"]
    adjs = F.winograd_adjectives({"probe": probes})
    assert set(adjs["block"]) == {2}
    assert adjs.set_index("adjective").loc["wet", "6:street"] == pytest.approx(0.95)


def fake_metrics(path, accuracy, wrong_noun):
    path.write_text(json.dumps({
        "held_out": {"accuracy": accuracy, "wrong_noun": wrong_noun, "other": 100 - accuracy - wrong_noun,
                     "sentences": 240},
        "train": {"accuracy": 90.0}, "params": 1234, "steps": 6, "config_hash": "abc", "commit": "0123456789ab"}))
    return str(path)


def test_role_table_leads_with_the_chance_row(tmp_path):
    df = F.winograd_role({"average": [fake_metrics(tmp_path / "a.json", 30.0, 50.0)],
                          "block": [fake_metrics(tmp_path / "b.json", 90.0, 10.0)],
                          "two_blocks": [fake_metrics(tmp_path / "c.json", 100.0, 0.0)]})
    assert list(df["model"]) == ["chance (either noun of the pair)", *(F.MODELS[m] for m in ("average", "block",
                                                                                         "two_blocks"))]
    chance = df.iloc[0]
    assert (chance["accuracy"], chance["wrong_noun"], chance["other"]) == (50.0, 50.0, 0.0)
    assert df[["accuracy", "wrong_noun", "other"]].sum(axis=1).tolist() == [100.0] * 4
    assert chance["params"] is None and df.loc[1, "params"] == 1234  # counts stay integers, chance has none


def test_the_averages_tried_sit_below_the_chapters_rows_with_their_experiment(tmp_path):
    """The other averages (each a contradiction's run) are rows after the chapter's, labelled, their experiment named
    in the CSV; an average tried that the inputs do not name is no row."""
    df = F.winograd_category({"average": [fake_metrics(tmp_path / "a.json", 60.0, 0.0)],
                              "block": [fake_metrics(tmp_path / "b.json", 90.0, 0.0)],
                              "average_linear": [fake_metrics(tmp_path / "l.json", 100.0, 0.0)]})
    assert list(df["model"]) == [F.MODELS["average"], F.MODELS["block"], F.AVERAGES_TRIED["average_linear"]]
    assert list(df["experiment"]) == ["winograd/category_average", "winograd/category_block",
                                      "winograd/category_average_linear"]
    assert df["accuracy"].tolist() == [60.0, 90.0, 100.0]
