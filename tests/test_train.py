"""The training app: determinism, resume = uninterrupted, divergence recorded, clear CLI errors,
and a checkpoint is data, never code."""

import json
import platform
from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest
import torch

from attnlab import runs, train as train_module
from attnlab.config import compose, config_hash

TIMING = {"train_s", "tokens_per_s", "s_per_step", "started_at", "finished_at"}  # the clock, not the numbers


def tiny(smoke_data, *extra):
    return compose([*smoke_data, "profile.budget=1.0", "train.steps=8", "train.eval_interval=4",
                    "train.checkpoint_interval=4", "train.batch_size=8", *extra])


def without_timing(metrics):
    return {k: v for k, v in metrics.items() if k not in TIMING}


@pytest.mark.slow
def test_same_seed_gives_identical_numbers(smoke_data, tmp_path):
    a = train_module.train(tiny(smoke_data), tmp_path / "a")
    b = train_module.train(tiny(smoke_data), tmp_path / "b")
    c = train_module.train(tiny(smoke_data, "seed=1"), tmp_path / "c")
    assert without_timing(a) == without_timing(b)
    assert pd.read_csv(tmp_path / "a" / "curve.csv").equals(pd.read_csv(tmp_path / "b" / "curve.csv"))
    assert a["final_loss"] != c["final_loss"]


@pytest.mark.slow
def test_interrupted_then_resumed_equals_uninterrupted(smoke_data, tmp_path, monkeypatch):
    whole = train_module.train(tiny(smoke_data), tmp_path / "whole")

    real_batch, calls = train_module.data.random_batch, []

    def dies_at_step_7(*args, **kwargs):
        calls.append(1)
        if len(calls) == 7:  # after the step-4 checkpoint, before the end
            raise KeyboardInterrupt
        return real_batch(*args, **kwargs)

    monkeypatch.setattr(train_module.data, "random_batch", dies_at_step_7)
    with pytest.raises(KeyboardInterrupt):
        train_module.train(tiny(smoke_data), tmp_path / "resumed")
    assert not (tmp_path / "resumed" / "metrics.json").exists()
    monkeypatch.setattr(train_module.data, "random_batch", real_batch)
    resumed = train_module.train(tiny(smoke_data), tmp_path / "resumed")
    assert without_timing(resumed) == without_timing(whole)
    assert pd.read_csv(tmp_path / "whole" / "curve.csv").equals(pd.read_csv(tmp_path / "resumed" / "curve.csv"))


def test_a_diverging_run_is_recorded_not_crashed(smoke_data, tmp_path):
    metrics = train_module.train(tiny(smoke_data, "train.lr=1e6", "train.steps=30"), tmp_path)
    assert metrics["diverged"] and 0 < metrics["diverged_step"] < 30
    assert metrics["held_out_ppl"] == {"128": None} and metrics["train_ppl"] is None
    assert json.loads((tmp_path / "metrics.json").read_text())["diverged"]
    # and when and where it ran: the device by name, the software, the UTC start and finish
    assert metrics["device"] == "cpu" and metrics["device_name"] and metrics["device_name"] != "cpu"
    assert metrics["python"] == platform.python_version() and metrics["torch"] == torch.__version__
    started, finished = (datetime.fromisoformat(metrics[k]) for k in ("started_at", "finished_at"))
    assert started.utcoffset() == timedelta(0) and started <= finished <= datetime.now(timezone.utc)


class OpensAFile:
    """Unpickling this runs code: it opens (creates) the file it names."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return open, (str(self.path), "w")


@pytest.mark.slow
@pytest.mark.parametrize("payload, pickled", [(OpensAFile, "io.open"), (lambda path: print, "print")])
def test_a_checkpoint_carrying_code_is_refused_never_run(smoke_data, tmp_path, payload, pickled):
    """Its sha256 sits in the same file, so a handed-over checkpoint can carry a valid one:
    loading only tensors and plain data is what keeps its pickle from running."""
    cfg, ran = tiny(smoke_data), tmp_path / "ran"
    checkpoint = tmp_path / "run" / runs.CHECKPOINT
    runs.save_checkpoint(checkpoint, {"model": {}, "config_hash": config_hash(cfg), "hook": payload(ran)})
    with pytest.raises(runs.CheckpointError, match=f"refused unread: it pickles {pickled}.*never code"):
        runs.read_checkpoint(checkpoint, config_hash(cfg))
    metrics = train_module.train(cfg, tmp_path / "run")  # not resumed from: trained from scratch
    assert without_timing(metrics) == without_timing(train_module.train(cfg, tmp_path / "fresh"))
    assert not ran.exists()


@pytest.mark.slow
def test_a_shorter_profile_runs_a_prefix_of_the_warmup_schedule(smoke_data, tmp_path):
    """Warmup is not scaled by the profile's budget: a run with half the budget takes the same
    first steps, at the same learning rates, as the whole run (constant lr after warmup)."""
    warmup = ["train.warmup_steps=6", "train.lr=3e-3"]
    whole = train_module.train(tiny(smoke_data, *warmup), tmp_path / "whole")
    half = train_module.train(tiny(smoke_data, *warmup, "profile.budget=0.5"), tmp_path / "half")
    assert (whole["steps"], half["steps"]) == (8, 4)
    whole_curve, half_curve = (pd.read_csv(tmp_path / name / "curve.csv") for name in ("whole", "half"))
    assert half_curve["lr"].tolist() == pytest.approx([3e-3 * k / 6 for k in (1, 2, 3, 4)])
    assert half_curve.equals(whole_curve.iloc[:4])


@pytest.mark.slow
def test_a_run_resumed_under_another_commit_records_both(smoke_data, tmp_path, monkeypatch):
    real_batch, calls = train_module.data.random_batch, []

    def dies_at_step_7(*args, **kwargs):
        calls.append(1)
        if len(calls) == 7:  # after the step-4 checkpoint
            raise KeyboardInterrupt
        return real_batch(*args, **kwargs)

    monkeypatch.setattr(train_module, "git_commit", lambda: {"commit": "a" * 40, "dirty": False})
    monkeypatch.setattr(train_module.data, "random_batch", dies_at_step_7)
    with pytest.raises(KeyboardInterrupt):
        train_module.train(tiny(smoke_data), tmp_path)
    monkeypatch.setattr(train_module.data, "random_batch", real_batch)
    monkeypatch.setattr(train_module, "git_commit", lambda: {"commit": "b" * 40, "dirty": True})
    metrics = train_module.train(tiny(smoke_data), tmp_path)
    assert metrics["commit"] == "a" * 40 and metrics["dirty"]
    assert metrics["sources"] == [{"commit": "a" * 40, "dirty": False, "from_step": 0},
                                  {"commit": "b" * 40, "dirty": True, "from_step": 4}]


@pytest.mark.slow  # trains in bf16: seconds a step on a CPU without native bf16
def test_bf16_trains_records_its_precision_and_hashes_apart(smoke_data, tmp_path):
    float32 = train_module.train(tiny(smoke_data), tmp_path / "float32")
    bf16 = train_module.train(tiny(smoke_data, "train.precision=bf16"), tmp_path / "bf16")
    assert (float32["precision"], bf16["precision"]) == ("float32", "bf16")
    assert bf16["config_hash"] != float32["config_hash"]  # a bf16 run never resumes a float32 checkpoint
    assert bf16["steps_done"] == bf16["steps"] and not bf16["diverged"]
    # autocast changes the arithmetic, not what is learned: the same seed ends close to float32
    assert bf16["final_loss"] != float32["final_loss"]
    assert bf16["final_loss"] == pytest.approx(float32["final_loss"], rel=0.05)


@pytest.mark.slow  # times steps and evaluations of two experiments
def test_eval_cost_counts_the_evaluations_a_run_makes(smoke_data, tmp_path, capsys):
    """attnlab.measure.eval_cost prices the evaluations train() makes: as many held-out evaluations as
    the run's evals.csv has rows, and a share of the run's time between 0 and 1."""
    from attnlab.measure import eval_cost
    overrides = [o for o in smoke_data if o != "profile=smoke"] + [
        "profile.budget=1.0", "train.steps=8", "train.eval_interval=3", "train.batch_size=8"]
    train_module.train(compose(["experiment=ladder/block", "profile=smoke", *overrides]), tmp_path / "run")
    measured = eval_cost.measure("ladder/block", "smoke", steps=2, repeats=2, overrides=overrides)
    assert measured["evaluations"] == len(pd.read_csv(tmp_path / "run" / runs.EVALS))
    assert 0 < measured["share"] < 1 and measured["step_s"] > 0 and measured["train_ppl_s"] > 0
    eval_cost.main(["ladder/block", "--profile", "smoke", "--steps", "1", "--repeats", "1", *overrides])
    assert "held-out evaluations" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="unknown experiment 'ladder/nope'"):
        eval_cost.main(["ladder/nope", "--profile", "smoke", *overrides])
