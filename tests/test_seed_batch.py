"""train.seed_batch=K: K seeds folded into one model's batch give each seed the numbers of its separate
run (to float rounding), write the same folders, resume either way, drop a seed that diverges and
go on with the others. The equality holds for every experiment and Winograd config, tied output included."""

import json
import math
from functools import partial

import pandas as pd
import pytest
import torch

from attnlab import runs, train as train_module, winograd as W
from attnlab.config import CONFIG_DIR, ConfigError, compose, experiments, model_config
from attnlab.model import LanguageModel
from attnlab.seed_batch import FoldedSeeds, SeedBatch
from attnlab.train import learning_rate, make_optimizer, parameter_names, set_learning_rate, training_step

AGREEMENT = 1e-5  # relative, float32: a perplexity or loss is smooth in the weights (measured: a few 1e-7)
# Fold against separate, relative. float64: the same arithmetic in another order, so rounding alone
# (measured over every config: < 3e-15); a property of the code on any machine.
BOUND = {torch.float64: 1e-12, torch.float32: 1e-5}
# float32 weights: AdamW steps each coordinate by about the learning rate whatever its gradient's size, so
# a coordinate whose gradient lies within float32 rounding of zero may step the other way when the fold
# sums in another order (threads, kernels: machine-dependent). The weights may then differ by up to
# 2 * sum(lr) for each such coordinate; we allow that for a share ROUNDING_SHARE of the coordinates. A
# fold that mixes or drops seeds moves every coordinate: its gap is lr * sqrt(P), over 100x this bound.
ROUNDING_SHARE = 1e-5
WINOGRAD_RUNS = sorted(p.stem for p in (CONFIG_DIR / "winograd").glob("[!_]*.yaml"))
TIED = ["model.tie_output=true"]


@pytest.fixture(autouse=True)
def one_thread():
    """One torch thread, as the pipeline trains: two on a busy 2-core machine make these steps 5x slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def tiny(smoke_data, *extra):
    return compose([*smoke_data, "profile.budget=1.0", "train.steps=8", "train.eval_interval=4",
                    "train.checkpoint_interval=4", "train.batch_size=8", *extra])


def relative(a, b):
    return abs(a - b) / abs(b)


def shrunk(config: str, extra=()):
    """A config's composed settings at a tiny batch (and context, where the model's shapes allow)."""
    if config.startswith("winograd/"):
        return W.compose_run(config.removeprefix("winograd/"), ["profile=smoke", "train.batch_size=2", *extra])
    return compose([f"experiment={config}", "profile=smoke", "train.batch_size=2", "model.context=32", *extra])


def fold_against_separate(cfg, dtype, seeds: int = 3, steps: int = 3, mix_seeds: bool = False) -> tuple[float, float, float]:
    """The largest relative difference between `seeds` separate runs and the same seeds folded, over
    `steps` training steps of the config's own optimizer, schedule and clipping: of the per-step
    losses, and of each seed's weights at the end (as one vector); and the weights' bound for the
    dtype (see ROUNDING_SHARE), relative to the smallest seed's weights. mix_seeds: the fold trains seed k
    on seed k+1's batches (a broken fold, for the bound's own test)."""
    mcfg, t = model_config(cfg), cfg.train
    models = []
    for seed in range(seeds):
        torch.manual_seed(seed)
        models.append(LanguageModel(mcfg).to(dtype))
    separate = [LanguageModel(mcfg).to(dtype) for _ in range(seeds)]
    for alone, model in zip(separate, models):
        alone.load_state_dict(model.state_dict())
    optimizers = [make_optimizer(m.parameters(), t, parameter_names(m)) for m in separate]
    batch = SeedBatch(models, partial(make_optimizer, t=t, names=parameter_names(models[0])), [None] * seeds,
                      compile=False)
    data = torch.Generator().manual_seed(0)
    loss_gap, lr_sum = 0.0, 0.0
    for step in range(steps):
        x, y = torch.randint(mcfg.vocab_size, (2, seeds, t.batch_size, mcfg.context), generator=data)
        lr = learning_rate(step, t.lr, t.warmup_steps, steps, t.schedule)
        lr_sum += lr
        for optimizer in [*optimizers, batch.optimizer]:
            set_learning_rate(optimizer, lr)
        alone = [training_step(m, o, lambda m=m, k=k: m(x[k], y[k])[1], "float32", "cpu", t.grad_clip).item()
                 for k, (m, o) in enumerate(zip(separate, optimizers))]
        xf, yf = (x.roll(1, 0), y.roll(1, 0)) if mix_seeds else (x, y)
        together = training_step(batch.folded, batch.optimizer, lambda: batch.folded(xf, yf)[1], "float32", "cpu",
                                 t.grad_clip).tolist()
        loss_gap = max(loss_gap, *map(relative, together, alone))
    weight_gap, weight_bound = 0.0, float("inf")
    for model, alone in zip(batch.sync(), separate):
        a, b = (torch.cat([p.flatten() for p in m.parameters()]) for m in (model, alone))
        weight_gap = max(weight_gap, ((a - b).norm() / b.norm()).item())
        flips = 0.0 if dtype == torch.float64 else 2 * lr_sum * math.sqrt(ROUNDING_SHARE * b.numel())
        weight_bound = min(weight_bound, BOUND[dtype] + flips / b.norm().item())
    return loss_gap, weight_gap, weight_bound


def test_the_float32_bound_catches_a_fold_that_mixes_seeds():
    """The allowance for rounding-level gradients is no blind spot: at the highest learning rate tried, a fold
    that trains each seed on its neighbour's batches (every coordinate moves otherwise) is far outside it."""
    loss_gap, weight_gap, weight_bound = fold_against_separate(shrunk("scale/runaway_lr1e2"), torch.float32,
                                                               mix_seeds=True)
    assert loss_gap > 100 * BOUND[torch.float32] and weight_gap > 10 * weight_bound


FAST = [("ladder/block", ()), ("ladder/block", TIED), ("winograd/role_block", ())]
EVERY = [(c, ()) for c in experiments()] + [(f"winograd/{r}", ()) for r in WINOGRAD_RUNS] + \
        [(c, TIED) for c in ("position/alibi", "norm/post_warmup", "depth/two_blocks", "winograd/role_two_blocks")]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("config,extra", [pytest.param(c, e, id=" ".join([c, *e])) for c, e in FAST])
def test_folded_seeds_equal_separate_runs(config, extra, dtype):
    loss_gap, weight_gap, weight_bound = fold_against_separate(shrunk(config, extra), dtype)
    assert loss_gap <= BOUND[dtype] and weight_gap <= weight_bound


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("config,extra", [pytest.param(c, e, id=" ".join([c, *e])) for c, e in EVERY])
def test_every_config_folds_to_its_separate_runs(config, extra, dtype):
    """Every experiment and Winograd config (a few steps, batch 2), and tied output heads: the mixers,
    norms, positions, widths, depths, clipping and warmup each run through the folded layers."""
    loss_gap, weight_gap, weight_bound = fold_against_separate(shrunk(config, extra), dtype)
    assert loss_gap <= BOUND[dtype] and weight_gap <= weight_bound


@pytest.mark.parametrize("extra", [(), TIED], ids=["untied", "tied"])
def test_folded_parameters_are_the_separate_models_stacked(extra):
    """The folded model's parameters have a separate model's names and order (AdamW's state_dict lines
    up with a separate run's), each with a leading seed axis; a tied head stays one tensor."""
    mcfg = model_config(shrunk("position/learned", extra))
    models = [LanguageModel(mcfg) for _ in range(3)]
    folded = FoldedSeeds(models)
    names = [(n, p.shape) for n, p in models[0].named_parameters()]
    assert [(n, p.shape[1:]) for n, p in folded.model.named_parameters()] == names
    assert all(p.shape[0] == 3 for p in folded.parameters())
    assert (folded.model.head.weight is folded.model.tok.weight) == bool(extra)
    for k, model in enumerate(models):
        assert all(torch.equal(folded.seed_state(k)[n], v) for n, v in model.state_dict().items())


@pytest.fixture(scope="module")
def separate_and_batched(smoke_data, tmp_path_factory):
    root = tmp_path_factory.mktemp("seeds")
    separate = [train_module.train(tiny(smoke_data, f"seed={k}"), root / "separate" / f"seed{k}") for k in range(3)]
    batched = train_module.train_seeds(tiny(smoke_data, "seed=0", "train.seed_batch=3"), root / "batched" / "seed0")
    return root, separate, batched


@pytest.mark.slow
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


@pytest.mark.slow  # trains, kills and resumes both ways (seconds)
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


@pytest.mark.slow
def test_a_diverging_seed_is_dropped_and_the_others_go_on(separate_and_batched, smoke_data, tmp_path, monkeypatch):
    """Seed 0's weights turn NaN before step 4: it is recorded as diverged there, as a separate
    run would be, and seeds 1 and 2 go on to the end with their separate runs' numbers."""
    _, separate, _ = separate_and_batched
    real_step, calls = train_module.training_step, []

    def poisons_seed0(model, *args):
        calls.append(1)
        if len(calls) == 5:
            with torch.no_grad():
                model.model.head.bias[0] = float("nan")
        return real_step(model, *args)

    monkeypatch.setattr(train_module, "training_step", poisons_seed0)
    batched = train_module.train_seeds(tiny(smoke_data, "seed=0", "train.seed_batch=3"), tmp_path / "seed0")
    assert len(calls) == 9  # steps 0-3, step 4 refused (seed 0's loss is NaN), again without seed 0, steps 5-7
    assert batched[0]["diverged"] and batched[0]["diverged_step"] == 4 and batched[0]["steps_done"] == 4
    assert batched[0]["held_out_ppl"] == {"128": None}
    for alone, together in zip(separate[1:], batched[1:]):
        assert not together["diverged"] and together["steps_done"] == 8
        assert relative(together["held_out_ppl"]["128"], alone["held_out_ppl"]["128"]) <= AGREEMENT


@pytest.mark.slow  # a whole folded Winograd training
def test_winograd_seeds_train_folded(tmp_path):
    """`python -m attnlab.winograd train ... train.seed_batch=2` (attnlab.train.train trains the call's
    seeds): both seeds' folders, each run as its separate run (its key, answers and curve to rounding)."""
    W.write_split("role", tmp_path)
    overrides = ["profile=smoke", "train.threads=1"]
    separate = [W.train_to("role_block", tmp_path / "split.json", tmp_path / "alone" / f"seed{k}",
                           [*overrides, f"seed={k}"]) for k in (4, 5)]
    W.main(["train", "role_block", "--split", str(tmp_path / "split.json"), "--out", str(tmp_path / "folded" / "seed4"),
            *overrides, "seed=4", "train.seed_batch=2"])
    for alone in separate:
        folder = tmp_path / "folded" / f"seed{alone['seed']}"
        together = json.loads((folder / runs.METRICS).read_text())
        assert together["config_hash"] == alone["config_hash"] and together["seed_batch"] == 2
        assert together["held_out"] == alone["held_out"]
        curves = [pd.read_csv(f / runs.CURVE).loss for f in (folder, tmp_path / "alone" / f"seed{alone['seed']}")]
        assert ((curves[0] - curves[1]).abs() / curves[1]).max() <= AGREEMENT
        assert (folder / "answers.csv").read_bytes() == (tmp_path / "alone" / f"seed{alone['seed']}" / "answers.csv").read_bytes()


def test_seed_batch_needs_a_seed_folder_and_a_whole_number(smoke_data, tmp_path):
    with pytest.raises(ConfigError, match="must be named seed0"):
        train_module.train(tiny(smoke_data, "train.seed_batch=2"), tmp_path / "run")
    with pytest.raises(ConfigError, match="seed_batch=0 must be a whole number >= 1"):
        train_module.train(tiny(smoke_data, "train.seed_batch=0"), tmp_path / "seed0")
