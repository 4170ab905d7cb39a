"""What sqrt(d_k) does under Adam (issue 71, experiment 8): dividing the scores by s = sqrt(d_k) is the undivided
head whose W_q and W_k start s^(1/2) smaller (model.qk_init_scale = d_k^(-1/4)) and step s^(1/2) slower
(train.qk_lr_scale = d_k^(-1/4): their own AdamW group, weight decay times s^(1/2)). With the project's own model,
optimizer, schedule and training step, the two heads give the same losses and scores at every step, W_q and W_k
staying the divided head's times d_k^(-1/4); either half alone does not; both options at 1.0 change nothing.

The two trajectories are float64: the only gap besides rounding is Adam's eps (1e-8), which the rescaled
head's 1/c larger gradients see as eps*c (c = d_k^(-1/4)). With eps made negligible the heads agree to
rounding (EXACT); with the optimizer as every run builds it, to AS_BUILT."""

import json
from functools import partial

import pytest
import torch
from omegaconf import OmegaConf

from attnlab import runs, train as train_module
from attnlab.config import ROOT, ConfigError, check_train, compose, config_hash, model_config, resolved
from attnlab.model import LanguageModel, ModelConfig
from attnlab.seed_batch import SeedBatch
from attnlab.train import (is_query_key, learning_rate, make_optimizer, parameter_names, set_learning_rate,
                           training_step)

D_HEAD = 8  # s = sqrt(8), s^(1/2) = 8^(1/4) = 1.68: not a power of two, so the factor rounds
C = D_HEAD ** -0.25
VOCAB, CONTEXT, BATCH, STEPS = 32, 8, 4, 12
TINY = dict(vocab_size=VOCAB, d_model=16, context=CONTEXT, n_blocks=2, n_heads=2, d_head=D_HEAD)
# a rate and decay high enough that every part moves measurably in a few steps; warmup and cosine decay so the
# schedule's rate is set on each group every step
TRAIN = ["train.lr=0.01", "train.weight_decay=0.1", "train.warmup_steps=3", "train.schedule=cosine"]
# Relative gaps, float64. Eps negligible: rounding alone (measured: 1e-16 loss, 1e-15 scores and weights). As built
# (eps = 1e-8): a coordinate's Adam step differs by about (1 - c) eps / (sqrt(v) + eps) of itself, which is not
# small only where a gradient is as small as eps (measured: loss 2e-8, scores 1e-5, weights 5e-5); either half
# alone is 6e-4 (loss) and 0.15 (scores, weights) apart or more, APART's thresholds at least 6x below that.
EXACT = {"loss": 1e-12, "scores": 1e-12, "weights": 1e-12}
AS_BUILT = {"loss": 1e-6, "scores": 1e-3, "weights": 1e-3}
APART = {"loss": 1e-4, "scores": 1e-2, "weights": 1e-2}
NEGLIGIBLE_EPS = 1e-300


@pytest.fixture(autouse=True)
def float64_one_thread():
    """float64 models (built under the default dtype, so their initialisation is drawn in float64 too); one torch
    thread, as the pipeline trains."""
    dtype, threads = torch.get_default_dtype(), torch.get_num_threads()
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    yield
    torch.set_default_dtype(dtype)
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def train_cfg():
    return compose(TRAIN).train


def with_scale(t, qk_lr_scale: float):
    t = t.copy()
    t.qk_lr_scale = qk_lr_scale
    return t


def build(t, scale_scores: bool, qk_init_scale: float, qk_lr_scale: float, **model):
    """A tiny model (seed 0) and its optimizer, as attnlab.train.start_seed builds them."""
    torch.manual_seed(0)
    net = LanguageModel(ModelConfig(**TINY, scale_scores=scale_scores, qk_init_scale=qk_init_scale, **model))
    return net, make_optimizer(net.parameters(), with_scale(t, qk_lr_scale), parameter_names(net))


def trajectory(net, optimizer, t, eps: float | None = None) -> list[dict]:
    """STEPS training steps on the same batches for every model: each step's loss (the fused path), then the
    attention scores of every block (the explicit path) on that batch and W_q, W_k after the step."""
    if eps is not None:
        for group in optimizer.param_groups:
            group["eps"] = eps
    batches = torch.Generator().manual_seed(1)
    out = []
    for step in range(STEPS):
        x, y = torch.randint(VOCAB, (2, BATCH, CONTEXT), generator=batches)
        set_learning_rate(optimizer, learning_rate(step, t.lr, t.warmup_steps, STEPS, t.schedule))
        loss = training_step(net, optimizer, lambda: net(x, y)[1], "float32", "cpu", t.grad_clip)
        with torch.no_grad():
            _, _, attentions = net(x, explicit=True)
        out.append({"loss": loss.item(), "scores": [a["scores"] for a in attentions],
                    "weights": [p.detach().clone() for name, p in net.named_parameters() if is_query_key(name)]})
    return out


def gaps(divided: list[dict], rescaled: list[dict]) -> dict:
    """The largest relative gaps over the steps: of the loss, of every block's causal scores (to the largest
    score), and of W_q, W_k against the divided head's times C (to their largest entry)."""
    def rel(a, b):
        return ((a - b).abs().max() / a.abs().max()).item()

    out = {"loss": 0.0, "scores": 0.0, "weights": 0.0}
    for d, r in zip(divided, rescaled):
        out["loss"] = max(out["loss"], abs(d["loss"] - r["loss"]) / abs(d["loss"]))
        for a, b in zip(d["scores"], r["scores"]):
            causal = torch.isfinite(a)
            assert torch.equal(causal, torch.isfinite(b))  # the same mask
            out["scores"] = max(out["scores"], rel(a[causal], b[causal]))
        for a, b in zip(d["weights"], r["weights"]):
            out["weights"] = max(out["weights"], rel(a * C, b))
    return out


def within(gap: dict, bound: dict) -> bool:
    return all(gap[key] <= bound[key] for key in bound)


def apart(gap: dict) -> bool:
    return all(gap[key] > APART[key] for key in APART)


def test_the_rescaled_undivided_head_is_the_divided_head(train_cfg):
    """Eps negligible: the same numbers to rounding at every step, W_q and W_k staying the divided head's times
    d_k^(-1/4); the weight decay the project gives them (wd / c) is what keeps it so: at the divided head's wd
    the heads part. (Without qkv biases: the key's bias adds the same q.b_k to a query's every score, which the
    softmax ignores, so its gradient is rounding noise that an eps-less Adam steps by the full rate, differently
    in each head; at Adam's own eps it stays put: the qkv-bias case of the next test.)"""
    divided = trajectory(*build(train_cfg, True, 1.0, 1.0), train_cfg, NEGLIGIBLE_EPS)
    net, optimizer = build(train_cfg, False, C, C)
    assert len(optimizer.param_groups) == 2
    qk = optimizer.param_groups[1]
    assert len(qk["params"]) == 2 * TINY["n_blocks"]
    assert (qk["lr"], qk["weight_decay"]) == (train_cfg.lr * C, train_cfg.weight_decay / C)
    rescaled = trajectory(net, optimizer, train_cfg, NEGLIGIBLE_EPS)
    gap = gaps(divided, rescaled)
    assert within(gap, EXACT), gap

    net, optimizer = build(train_cfg, False, C, C)
    optimizer.param_groups[1]["weight_decay"] = train_cfg.weight_decay  # AdamW's decay c^2 smaller, not c
    undecayed = gaps(divided, trajectory(net, optimizer, train_cfg, NEGLIGIBLE_EPS))
    assert undecayed["weights"] > 1e3 * EXACT["weights"] and undecayed["loss"] > 1e3 * EXACT["loss"], undecayed


@pytest.mark.parametrize("qkv_bias", [False, True], ids=["no bias", "qkv bias"])
def test_as_every_run_builds_it_only_eps_separates_the_heads(train_cfg, qkv_bias):
    """The optimizer untouched (Adam's eps 1e-8): the two heads agree to AS_BUILT at every step (with qkv_bias,
    b_q and b_k scaled and stepped with W_q and W_k), while the undivided head with only one half of the
    rescaling, or neither, is APART from the divided one."""
    divided = trajectory(*build(train_cfg, True, 1.0, 1.0, qkv_bias=qkv_bias), train_cfg)
    net, optimizer = build(train_cfg, False, C, C, qkv_bias=qkv_bias)
    assert len(optimizer.param_groups[1]["params"]) == 2 * TINY["n_blocks"] * (2 if qkv_bias else 1)
    both = gaps(divided, trajectory(net, optimizer, train_cfg))
    assert within(both, AS_BUILT), both
    for init, lr in ((C, 1.0), (1.0, C), (1.0, 1.0)):  # init only, rate only, plain undivided
        half = gaps(divided, trajectory(*build(train_cfg, False, init, lr, qkv_bias=qkv_bias), train_cfg))
        assert apart(half), (init, lr, half)


def test_both_options_at_one_change_nothing(train_cfg):
    """qk_init_scale only multiplies W_q and W_k after PyTorch's default init (every other tensor drawn as
    before: at 0.5, a power of two, the products are exact); at 1.0, with qk_lr_scale 1.0, the optimizer is the
    one group every published run trained with, AdamW(parameters, lr, betas, weight_decay), and trains bit for bit
    as it did with the schedule's rate set on it directly."""
    torch.manual_seed(0)
    plain = LanguageModel(ModelConfig(**TINY))
    torch.manual_seed(0)
    halved = LanguageModel(ModelConfig(**TINY, qk_init_scale=0.5))
    names = parameter_names(plain)
    assert [n for n in names if is_query_key(n)] == [f"blocks.{i}.mixer.{p}.weight" for i in range(2) for p in "qk"]
    for name, p in plain.named_parameters():
        assert torch.equal(halved.get_parameter(name), p * 0.5 if is_query_key(name) else p), name

    assert train_cfg.qk_lr_scale == 1.0 and model_config(compose([])).qk_init_scale == 1.0
    torch.manual_seed(0)
    before = LanguageModel(ModelConfig(**TINY))
    optimizer = make_optimizer(plain.parameters(), train_cfg, names)
    reference = torch.optim.AdamW(before.parameters(), lr=train_cfg.lr, betas=tuple(train_cfg.betas),
                                  weight_decay=train_cfg.weight_decay)  # make_optimizer before issue 71
    assert optimizer.state_dict() == reference.state_dict()  # one group: published checkpoints load as before
    assert make_optimizer(plain.parameters(), train_cfg).state_dict() == reference.state_dict()  # names not needed
    batches = torch.Generator().manual_seed(1)
    for step in range(STEPS):
        x, y = torch.randint(VOCAB, (2, BATCH, CONTEXT), generator=batches)
        lr = learning_rate(step, train_cfg.lr, train_cfg.warmup_steps, STEPS, train_cfg.schedule)
        set_learning_rate(optimizer, lr)
        for group in reference.param_groups:  # attnlab.train before issue 71
            group["lr"] = lr
        a = training_step(plain, optimizer, lambda: plain(x, y)[1], "float32", "cpu")
        b = training_step(before, reference, lambda: before(x, y)[1], "float32", "cpu")
        assert torch.equal(a, b)
    assert all(torch.equal(p, q) for p, q in zip(plain.parameters(), before.parameters()))


def test_the_schedule_keeps_the_groups_ratio(train_cfg):
    net, optimizer = build(train_cfg, False, C, C)
    for step in range(5):
        lr = learning_rate(step, train_cfg.lr, train_cfg.warmup_steps, STEPS, train_cfg.schedule)
        set_learning_rate(optimizer, lr)
        assert [g["lr"] for g in optimizer.param_groups] == [lr, lr * C]
        wd = train_cfg.weight_decay
        assert [g["weight_decay"] for g in optimizer.param_groups] == [wd, wd / C]  # not scheduled


def test_folded_seeds_take_the_groups_too(train_cfg):
    """train.seed_batch=K (attnlab.seed_batch): the folded model's optimizer has the same two groups, found by the
    separate model's names, so each seed trains as its separate run (to rounding) and its AdamW state is a
    separate run's checkpoint."""
    t = with_scale(train_cfg, C)
    models, separate = [], []
    for seed in range(2):
        torch.manual_seed(seed)
        models.append(LanguageModel(ModelConfig(**TINY, scale_scores=False, qk_init_scale=C)))
        torch.manual_seed(seed)
        separate.append(LanguageModel(ModelConfig(**TINY, scale_scores=False, qk_init_scale=C)))
    optimizers = [make_optimizer(m.parameters(), t, parameter_names(m)) for m in separate]
    batch = SeedBatch(models, partial(make_optimizer, t=t, names=parameter_names(models[0])), [None, None], False)
    folded_qk = {id(batch.folded.model.get_parameter(n)) for n in parameter_names(models[0]) if is_query_key(n)}
    assert {id(p) for p in batch.optimizer.param_groups[1]["params"]} == folded_qk
    batches = torch.Generator().manual_seed(1)
    for step in range(3):
        x, y = torch.randint(VOCAB, (2, 2, BATCH, CONTEXT), generator=batches)
        lr = learning_rate(step, t.lr, t.warmup_steps, STEPS, t.schedule)
        for optimizer in (*optimizers, batch.optimizer):
            set_learning_rate(optimizer, lr)
        alone = [training_step(m, o, lambda m=m, k=k: m(x[k], y[k])[1], "float32", "cpu").item()
                 for k, (m, o) in enumerate(zip(separate, optimizers))]
        together = training_step(batch.folded, batch.optimizer, lambda: batch.folded(x, y)[1], "float32", "cpu")
        assert together.tolist() == pytest.approx(alone, rel=1e-12)
    for k, (model, alone) in enumerate(zip(batch.sync(), separate)):
        for p, q in zip(model.parameters(), alone.parameters()):
            assert torch.allclose(p, q, rtol=1e-12, atol=1e-14)
        optimizers[k].load_state_dict(batch.optimizer_state(k))  # the same groups, as a checkpoint holds them


def test_the_new_options_at_their_defaults_keep_every_hash():
    """Both options at 1.0 hash as the config without them, so every published run keeps its hash
    (tests/test_config.py checks them all); another value hashes apart."""
    default = compose([])
    without = OmegaConf.to_container(default)
    del without["model"]["qk_init_scale"], without["train"]["qk_lr_scale"]
    assert config_hash(default) == config_hash(OmegaConf.create(without))
    published = json.loads((ROOT / "results/full/runs/ladder/block/seed0/metrics.json").read_text())["config_hash"]
    assert config_hash(compose(["experiment=ladder/block", "profile=full"])) == published
    hashes = {config_hash(compose(o)) for o in ([], ["model.qk_init_scale=0.5"], ["train.qk_lr_scale=0.5"],
                                               ["model.qk_init_scale=0.5", "train.qk_lr_scale=0.5"])}
    assert len(hashes) == 4


def test_the_experiments_are_the_undivided_d1024_head_rescaled():
    """scale/adam_qk_{init,lr}: scale/short_d1024_undivided with one of the two options set, to 1024^(-1/4) (both
    together are the divided head, scale/short_d1024_divided, as the tests above show)."""
    factor = 1024 ** -0.25
    undivided = resolved(compose(["experiment=scale/short_d1024_undivided"]))
    for name, init, lr in (("init", factor, 1.0), ("lr", 1.0, factor)):
        cfg = compose([f"experiment=scale/adam_qk_{name}"])
        check_train(cfg)
        assert model_config(cfg).qk_init_scale == init and cfg.train.qk_lr_scale == lr
        assert not cfg.model.scale_scores and cfg.model.d_head == 1024 and cfg.train.lr == 1e-3
        expected = json.loads(json.dumps(undivided))
        expected["model"]["qk_init_scale"], expected["train"]["qk_lr_scale"] = init, lr
        assert resolved(cfg) == expected


@pytest.mark.parametrize("overrides, message", [
    (["model.qk_init_scale=0.0"], r"model.qk_init_scale=0.0 must be a number > 0"),
    (["model.qk_init_scale=-0.5"], r"model.qk_init_scale=-0.5 must be a number > 0"),
    (["model.qk_init_scale=0.5", "model.query_key=false"],
     r"model.qk_init_scale=0.5 scales W_q and W_k, which this model does not have"),
    (["model.qk_init_scale=0.5", "model.mixer=average"], r"which this model does not have"),
    (["train.qk_lr_scale=0"], r"train.qk_lr_scale=0 must be a number > 0"),
    (["train.qk_lr_scale=-1.0"], r"train.qk_lr_scale=-1.0 must be a number > 0"),
    (["train.qk_lr_scale=true"], r"train.qk_lr_scale=True must be a number > 0"),
    (["train.qk_lr_scale=0.5", "model.mixer=average"], r"train.qk_lr_scale=0.5 but the model has no W_q, W_k"),
])
def test_a_bad_factor_is_refused_in_one_line(overrides, message):
    cfg = compose(overrides)
    with pytest.raises(ConfigError, match=message):
        check_train(cfg)
        model_config(cfg)


def test_the_optimizer_needs_the_names_to_find_w_q_and_w_k(train_cfg):
    net = LanguageModel(ModelConfig(**TINY))
    with pytest.raises(ValueError, match="needs the parameters' names"):
        make_optimizer(net.parameters(), with_scale(train_cfg, C))


@pytest.mark.slow  # trains five tiny runs (8 steps) on the smoke corpus: seconds
def test_a_run_trains_the_rescaled_head_as_the_divided_one(smoke_data, tmp_path):
    """Through train() (float32, the block's d_head = 32, warmup): the rescaled undivided run ends at the divided
    run's loss and held-out perplexity to float32 rounding and eps (measured: 1e-6), the run with W_q and W_k only
    initialised smaller does not, the rescaled run's checkpoint holds the two groups at the
    scaled rate and decay (a resumed run picks them up), and with train.seed_batch=2 its seeds fold with them."""
    c = 32 ** -0.25
    settings = [*smoke_data, "profile.budget=1.0", "train.steps=8", "train.eval_interval=4", "train.warmup_steps=2",
                "train.checkpoint_interval=4", "train.batch_size=8", "train.lr=0.01"]
    rescaled = ["model.scale_scores=false", f"model.qk_init_scale={c}", f"train.qk_lr_scale={c}"]
    torch.set_default_dtype(torch.float32)  # as every run
    divided = train_module.train(compose(settings), tmp_path / "divided")
    alone = train_module.train(compose([*settings, *rescaled]), tmp_path / "rescaled")
    assert alone["config_hash"] != divided["config_hash"]
    assert alone["final_loss"] == pytest.approx(divided["final_loss"], rel=1e-4)
    assert alone["held_out_ppl"]["128"] == pytest.approx(divided["held_out_ppl"]["128"], rel=1e-4)
    init_only = train_module.train(compose([*settings, *rescaled[:2]]), tmp_path / "init_only")
    assert init_only["final_loss"] != pytest.approx(divided["final_loss"], rel=1e-3)  # measured: 5e-3 apart
    checkpoint = runs.read_checkpoint(tmp_path / "rescaled" / runs.CHECKPOINT, alone["config_hash"])
    groups = checkpoint["optimizer"]["param_groups"]
    assert [g["lr_scale"] for g in groups] == [1.0, c] and len(groups[1]["params"]) == 2  # W_q, W_k of the one block
    assert groups[1]["lr"] == pytest.approx(groups[0]["lr"] * c)
    assert groups[1]["weight_decay"] == pytest.approx(groups[0]["weight_decay"] / c)
    again = train_module.train(compose([*settings, *rescaled]), tmp_path / "rescaled")  # resumes its checkpoint
    assert again["final_loss"] == alone["final_loss"] and again["held_out_ppl"] == alone["held_out_ppl"]
    folded = train_module.train_seeds(compose([*settings, *rescaled, "train.seed_batch=2"]), tmp_path / "seed0")
    assert folded[0]["final_loss"] == pytest.approx(alone["final_loss"], rel=1e-5)
