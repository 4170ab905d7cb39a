"""train.seed_batch=K: K seeds trained as one batched model give each seed the numbers of its separate
run (to float rounding), write the same folders, resume either way, drop a seed that diverges and
go on with the others."""

import math

import pandas as pd
import pytest
import torch

from attnlab import runs, train as train_module
from attnlab.config import ConfigError, compose
from attnlab.seed_batch import SeedBatch

AGREEMENT = 1e-5  # relative, float32 (the bound); measured here: a few 1e-7


def tiny(smoke_data, *extra):
    return compose([*smoke_data, "profile.budget=1.0", "train.steps=8", "train.eval_interval=4",
                    "train.checkpoint_interval=4", "train.batch_size=8", *extra])


def relative(a, b):
    return abs(a - b) / abs(b)


@pytest.fixture(scope="module")
def separate_and_batched(smoke_data, tmp_path_factory):
    root = tmp_path_factory.mktemp("seeds")
    separate = [train_module.train(tiny(smoke_data, f"seed={k}"), root / "separate" / f"seed{k}") for k in range(3)]
    batched = train_module.train_seeds(tiny(smoke_data, "seed=0", "train.seed_batch=3"), root / "batched" / "seed0")
    return root, separate, batched


def test_each_seed_agrees_with_its_separate_run(separate_and_batched):
    root, separate, batched = separate_and_batched
    assert [m["seed"] for m in batched] == [0, 1, 2]
    for alone, together in zip(separate, batched):
        assert together["config_hash"] == alone["config_hash"]  # the same run, by its key
        assert relative(together["held_out_ppl"]["128"], alone["held_out_ppl"]["128"]) <= AGREEMENT
        assert relative(together["train_ppl"], alone["train_ppl"]) <= AGREEMENT
        k = alone["seed"]
        curve_alone = pd.read_csv(root / "separate" / f"seed{k}" / runs.CURVE)
        curve_together = pd.read_csv(root / "batched" / f"seed{k}" / runs.CURVE)
        assert ((curve_together.loss - curve_alone.loss).abs() / curve_alone.loss).max() <= AGREEMENT
    # the seeds differ from each other: each drew its own initialisation and batches
    assert len({m["final_loss"] for m in batched}) == 3


def test_batched_seeds_write_the_folders_separate_runs_write(separate_and_batched):
    root, _, batched = separate_and_batched
    for k in range(3):
        names = {p.name for p in (root / "separate" / f"seed{k}").iterdir()}
        assert {p.name for p in (root / "batched" / f"seed{k}").iterdir()} == names
        recorded = runs.run_config(root / "batched" / f"seed{k}" / runs.METRICS)
        alone = runs.run_config(root / "separate" / f"seed{k}" / runs.METRICS)
        assert recorded["seed"] == k and recorded["train"].pop("seed_batch") == 3 and alone["train"].pop("seed_batch") == 1
        assert recorded == alone  # the same composed config but for how it was trained
    assert all(m["seed_batch"] == 3 for m in batched)


def interrupted(monkeypatch, at_call: int):
    """data.random_batch raises KeyboardInterrupt on its at_call-th call (a killed job)."""
    real, calls = train_module.data.random_batch, []

    def dies(*args, **kwargs):
        calls.append(1)
        if len(calls) == at_call:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(train_module.data, "random_batch", dies)
    return lambda: monkeypatch.setattr(train_module.data, "random_batch", real)


def test_checkpoints_resume_either_way(separate_and_batched, smoke_data, tmp_path, monkeypatch, caplog):
    """A separate run's checkpoint and a batch's are one format: separate runs killed at step 6
    resume as a batch, a batch killed at step 6 resumes as separate runs; both end where the
    uninterrupted separate runs did (the step-4 checkpoint is the resume point)."""
    _, separate, _ = separate_and_batched
    caplog.set_level("INFO", logger="attnlab.train")
    for k in range(2):
        restore = interrupted(monkeypatch, 7)
        with pytest.raises(KeyboardInterrupt):
            train_module.train(tiny(smoke_data, f"seed={k}"), tmp_path / "to_batch" / f"seed{k}")
        restore()
    as_batch = train_module.train_seeds(tiny(smoke_data, "seed=0", "train.seed_batch=2"), tmp_path / "to_batch" / "seed0")

    restore = interrupted(monkeypatch, 13)  # two batches a step
    with pytest.raises(KeyboardInterrupt):
        train_module.train_seeds(tiny(smoke_data, "seed=0", "train.seed_batch=2"), tmp_path / "to_separate" / "seed0")
    restore()
    assert not any((tmp_path / "to_separate" / f"seed{k}" / runs.METRICS).exists() for k in range(2))
    as_separate = [train_module.train(tiny(smoke_data, f"seed={k}"), tmp_path / "to_separate" / f"seed{k}")
                   for k in range(2)]
    assert caplog.messages.count("seed 0: resuming from step 4") == caplog.messages.count("seed 1: resuming from step 4") == 2
    for alone, resumed_batch, resumed_alone in zip(separate, as_batch, as_separate):
        for resumed in (resumed_batch, resumed_alone):
            assert relative(resumed["held_out_ppl"]["128"], alone["held_out_ppl"]["128"]) <= AGREEMENT


def test_a_diverging_seed_is_dropped_and_the_others_go_on(separate_and_batched, smoke_data, tmp_path, monkeypatch):
    """Seed 0's weights turn NaN before step 4: it is recorded as diverged there, as a separate
    run would be, and seeds 1 and 2 go on to the end with their separate runs' numbers."""
    _, separate, _ = separate_and_batched

    class PoisonsSeed0(SeedBatch):
        calls = 0

        def step(self, *args):
            PoisonsSeed0.calls += 1
            if PoisonsSeed0.calls == 5:
                with torch.no_grad():
                    self.params["head.bias"][0] = float("nan")
            return super().step(*args)

    monkeypatch.setattr(train_module, "SeedBatch", PoisonsSeed0)
    batched = train_module.train_seeds(tiny(smoke_data, "seed=0", "train.seed_batch=3"), tmp_path / "seed0")
    assert batched[0]["diverged"] and batched[0]["diverged_step"] == 4 and batched[0]["steps_done"] == 4
    assert batched[0]["held_out_ppl"] == {"128": None}
    for alone, together in zip(separate[1:], batched[1:]):
        assert not together["diverged"] and together["steps_done"] == 8
        assert relative(together["held_out_ppl"]["128"], alone["held_out_ppl"]["128"]) <= AGREEMENT


def test_seed_batch_needs_a_seed_folder_and_a_whole_number(smoke_data, tmp_path):
    with pytest.raises(ConfigError, match="must be named seed0"):
        train_module.train(tiny(smoke_data, "train.seed_batch=2"), tmp_path / "run")
    with pytest.raises(ConfigError, match="seed_batch=0 must be a whole number >= 1"):
        train_module.train(tiny(smoke_data, "train.seed_batch=0"), tmp_path / "seed0")
