"""The two-block Winograd model's circuit, shown by intervention on held-out pairs (table winograd_circuits).

    python -m attnlab.measure.winograd_interventions \
        --run results/full/measure/winograd/role/two_blocks/seed5 \
        --split results/full/measure/winograd/role/split.json --out .../seed5/interventions.json

The model is the run's: its weights kept in the run's folder (checkpoint.pt, ignored by git: the published
run's own model where this checkout trained it) or, where they are not, the seed retrained on the CPU from the
run's config (its recipe and seed; its key must be the run's) and kept there for the next call. A retrained seed
is the published model bit for bit only on the machine and code that trained it, so how it compares with the
published run is recorded beside the measurements: held-out answers that differ from answers.csv, and the
largest difference of a probe weight from probe.json.

Everything is read on the held-out sentences of the role split (noun pairs whose reverse order was trained and
which were never trained themselves), at the scored position (the "the" before the referent):
- per head of each block: its attention weight on the first noun, the second noun, the adjective and the rest,
  and its value-weighted contribution there, |alpha * W_O v| (the norm of what the head writes from that token);
- the held-out accuracy with each head's output zeroed (before W_O), and with each block's heads all zeroed;
- activation patching of block 1's output (the residual stream after block 1) from a donor sentence into a
  recipient, at some positions, and whether the answer becomes the donor's referent:
    adjective swap: the same pair, a crosser adjective against a crossed one (tired <-> wet), so the referent
      flips; patched at the query (the scored position), at the adjective, or at the two tokens after it
      (", so"). The positions before the adjective are the same in both sentences, so they are not patched.
    noun swap: the same adjective, another held-out pair with two other nouns; patched at the query or at the
      two nouns' positions. The answer then names a noun the recipient sentence does not contain only if
      block 2 takes it from what was patched.
  Only pairs the model answers right in both sentences count.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import torch
import yaml
from omegaconf import OmegaConf

from attnlab import data, runs
from attnlab.config import ConfigError, config_hash, git_commit, model_config
from attnlab.model import LanguageModel
from attnlab.winograd import ADJ_POS, SCORED, X_POS, Y_POS, Language, compose_run, encode, probe, score, train_to

# what a head reads at the scored position, by the token's slot; "rest" sums every other visible token
SLOTS = {"first_noun": [X_POS], "second_noun": [Y_POS], "adjective": [ADJ_POS]}
ROLE_NAMES = {"x": "crosser", "y": "crossed"}
# block 1's output positions each swap patches
SITES = {"adjective": {"query": [SCORED], "adjective": [ADJ_POS], "after_adjective": [ADJ_POS + 1, ADJ_POS + 2]},
         "noun": {"query": [SCORED], "nouns": [X_POS, Y_POS]}}


# ---------------------------------------------------------------- the model

def published(run_dir: Path) -> dict:
    """The run's name, profile, seed, key and steps, from its config.yaml and metrics.json (whose layout
    changed over the project's history; config.yaml holds the composed config, under `config` since then)."""
    doc = yaml.safe_load((run_dir / runs.CONFIG).read_text())
    cfg = doc.get("config", doc)
    metrics = json.loads((run_dir / runs.METRICS).read_text())
    return {"run": cfg["winograd"]["run"], "profile": cfg["profile"]["name"], "seed": cfg["seed"],
            "config_hash": metrics["config_hash"], "steps": metrics["steps"]}


def kept_model(run_dir: Path, cfg, steps: int) -> LanguageModel | None:
    """The run's kept weights (checkpoint.pt of its config, at its last step), or None."""
    path = run_dir / runs.CHECKPOINT
    if not path.exists():
        return None
    ckpt = runs.read_checkpoint(path, config_hash(cfg))
    if ckpt["state"]["step"] != steps:
        return None
    model = LanguageModel(model_config(cfg))
    model.load_state_dict(ckpt["model"])
    return model


def load_model(run_dir: Path, split_path: Path) -> tuple[LanguageModel, str]:
    """The published run's model and where it came from ("kept" or "retrained"). A retrained seed's
    checkpoint is kept in the run's folder for the next call."""
    metrics = published(run_dir)
    cfg = compose_run(metrics["run"], [f"profile={metrics['profile']}", f"seed={metrics['seed']}"])
    if config_hash(cfg) != metrics["config_hash"]:
        raise ConfigError(f"{run_dir}: its config no longer composes to the published key {metrics['config_hash']}")
    model = kept_model(run_dir, cfg, metrics["steps"])
    if model is not None:
        return model, "kept"
    with tempfile.TemporaryDirectory() as tmp:
        train_to(metrics["run"], split_path, Path(tmp), [f"profile={metrics['profile']}", f"seed={metrics['seed']}",
                                                         "train.threads=1", "train.device=cpu"])
        (Path(tmp) / runs.CHECKPOINT).replace(run_dir / runs.CHECKPOINT)
    return kept_model(run_dir, cfg, metrics["steps"]), "retrained"


def against_published(model, lang: Language, split: dict, run_dir: Path) -> dict:
    """How the measured model compares with the published run: held-out answers that differ (answers.csv) and
    the largest difference of a probe weight (probe.json). A retrained seed is the published run's recipe and
    seed, but it comes back bit for bit only on the machine and code that trained it: elsewhere float rounding
    grows over training, so this is recorded, not required."""
    answers = score(model, lang, [tuple(t) for t in split["held_out"]], split["vocab"], torch.device("cpu"))
    with open(run_dir / "answers.csv", newline="") as f:
        published_answers = list(csv.DictReader(f))
    if len(answers) != len(published_answers):
        raise ConfigError(f"{run_dir}: answers.csv has {len(published_answers)} held-out sentences, the split "
                          f"{len(answers)}: another split")
    rows = probe(model, lang, split["vocab"], torch.device("cpu"))
    published_rows = json.loads((run_dir / "probe.json").read_text())
    return {"held_out_answers_differ": sum(a != b for a, b in zip(answers, published_answers)),
            "probe_max_abs_diff": max(abs(a - b) for r, p in zip(rows, published_rows)
                                      for a, b in zip(r["weights"], p["weights"]))}


# ---------------------------------------------------------------- interventions

@contextmanager
def ablated(model, heads):
    """The model with each (block, head)'s output zeroed before W_O (blocks counted from 0)."""
    def zero(args, head_list, width):
        (x,) = args
        x = x.clone()
        for h in head_list:
            x[..., h * width:(h + 1) * width] = 0
        return (x,)

    hooks = []
    for block in sorted({b for b, _ in heads}):
        mixer = model.blocks[block].mixer
        hooks.append(mixer.o.register_forward_pre_hook(
            lambda module, args, hs=[h for b, h in heads if b == block], width=mixer.d_head: zero(args, hs, width)))
    try:
        yield model
    finally:
        for hook in hooks:
            hook.remove()


@contextmanager
def patched(model, block: int, positions: list[int], donor_states: torch.Tensor):
    """The model with block `block`'s output at `positions` replaced, sentence by sentence, by donor_states."""
    def replace(module, args, output):
        x, attention = output
        x = x.clone()
        x[:, positions] = donor_states[:, positions]
        return x, attention

    hook = model.blocks[block].register_forward_hook(replace)
    try:
        yield model
    finally:
        hook.remove()


@torch.inference_mode()
def answers_of(model, inputs: torch.Tensor) -> torch.Tensor:
    return model(inputs)[0][:, SCORED].argmax(-1)


@torch.inference_mode()
def block_output(model, inputs: torch.Tensor, block: int) -> torch.Tensor:
    kept = {}
    hook = model.blocks[block].register_forward_hook(lambda module, args, output: kept.update(x=output[0]))
    try:
        model(inputs)
    finally:
        hook.remove()
    return kept["x"]


@torch.inference_mode()
def head_reads(model, inputs: torch.Tensor) -> list[dict]:
    """Per block and head, per sentence: attention weight and |alpha W_O v| from the scored position to each
    slot. [{"weight": {slot: (N,)}, "contribution": {slot: (N,)}} per (block, head)], blocks in order."""
    values = []
    hooks = [block.mixer.v.register_forward_hook(lambda module, args, output: values.append(output))
             for block in model.blocks]
    try:
        _, _, attentions = model(inputs, explicit=True)
    finally:
        for hook in hooks:
            hook.remove()
    out = []
    for block, (attention, v) in enumerate(zip(attentions, values)):
        mixer = model.blocks[block].mixer
        N, T, _ = v.shape
        H, dh = mixer.n_heads, mixer.d_head
        w_o = mixer.o.weight.view(-1, H, dh)  # (d_model, H, dh)
        written = torch.einsum("nthd,mhd->nthm", v.view(N, T, H, dh), w_o).norm(dim=-1)  # (N, T, H)
        alpha = attention["weights"][:, :, SCORED, :SCORED + 1]  # (N, H, T')
        contribution = alpha * written[:, :SCORED + 1].transpose(1, 2)
        for head in range(H):
            reads = {}
            for name, per_token in (("weight", alpha[:, head]), ("contribution", contribution[:, head])):
                named = {slot: per_token[:, pos].sum(-1) for slot, pos in SLOTS.items()}
                named["rest"] = per_token.sum(-1) - sum(named.values())
                reads[name] = named
            out.append({"block": block + 1, "head": head, **reads})
    return out


def accuracy(answers: torch.Tensor, referents: torch.Tensor, where: torch.Tensor | None = None) -> float:
    right = answers == referents
    right = right if where is None else right[where]
    return 100.0 * right.float().mean().item()


def adjective_swaps(lang: Language, held: list[tuple]) -> list[tuple[tuple, tuple]]:
    """(recipient, donor) sentences: the same pair, every crosser adjective against every crossed one, both ways."""
    by_pair = {}
    for x, y, adj in held:
        by_pair.setdefault((x, y), []).append(adj)
    swaps = []
    for (x, y), adjectives in by_pair.items():
        crossers = [a for a in adjectives if lang.adjectives[a] == "x"]
        crosseds = [a for a in adjectives if lang.adjectives[a] == "y"]
        for a in crossers:
            for b in crosseds:
                swaps += [((x, y, a), (x, y, b)), ((x, y, b), (x, y, a))]
    return swaps


def noun_swaps(held: list[tuple]) -> list[tuple[tuple, tuple]]:
    """(recipient, donor) sentences: the same adjective, the next held-out pair (in split order, cyclic) whose
    two nouns are both other nouns."""
    pairs = list(dict.fromkeys((x, y) for x, y, _ in held))
    swaps = []
    for x, y, adj in held:
        start = pairs.index((x, y))
        donor = next(p for p in pairs[start + 1:] + pairs[:start] if not {x, y} & set(p))
        swaps.append(((x, y, adj), (*donor, adj)))
    return swaps


def patching(model, lang: Language, vocab: list[str], swap: str, pairs: list[tuple[tuple, tuple]]) -> list[dict]:
    """Per site and recipient role: of the pairs answered right in both sentences, the share whose patched
    answer is the donor's referent."""
    stoi = {w: i for i, w in enumerate(vocab)}
    recipients, donors = [p[0] for p in pairs], [p[1] for p in pairs]
    r_in, d_in = encode(lang, recipients, vocab)[0], encode(lang, donors, vocab)[0]
    r_ref = torch.tensor([stoi[lang.referent(*t)] for t in recipients])
    d_ref = torch.tensor([stoi[lang.referent(*t)] for t in donors])
    right = (answers_of(model, r_in) == r_ref) & (answers_of(model, d_in) == d_ref)
    donor_states = block_output(model, d_in, 0)
    roles = [lang.adjectives[t[2]] for t in recipients]
    out = []
    for site, positions in SITES[swap].items():
        with patched(model, 0, positions, donor_states):
            follows = answers_of(model, r_in) == d_ref
        for role, name in ROLE_NAMES.items():
            counted = right & torch.tensor([r == role for r in roles])
            n = int(counted.sum())
            out.append({"swap": swap, "site": site, "recipient": name, "pairs": n,
                        "follows_donor": float(follows[counted].float().mean()) if n else None})
    return out


def measure(model, lang: Language, split: dict) -> dict:
    """Every reading of the module docstring, on the held-out sentences."""
    train_pairs = {(x, y) for x, y, _ in split["train"]}
    held = [tuple(t) for t in split["held_out"]]
    if any((x, y) in train_pairs for x, y, _ in held):
        raise ConfigError("a held-out pair is a training pair: the split is not the role split")
    model.eval()
    vocab = split["vocab"]
    stoi = {w: i for i, w in enumerate(vocab)}
    inputs, _ = encode(lang, held, vocab)
    referents = torch.tensor([stoi[lang.referent(*t)] for t in held])
    crosser = torch.tensor([lang.adjectives[t[2]] == "x" for t in held])

    def accuracies(answers) -> dict:
        return {"accuracy": accuracy(answers, referents), "accuracy_crosser": accuracy(answers, referents, crosser),
                "accuracy_crossed": accuracy(answers, referents, ~crosser)}

    heads = []
    for reads in head_reads(model, inputs):
        with ablated(model, [(reads["block"] - 1, reads["head"])]):
            ablation = accuracies(answers_of(model, inputs))
        heads.append({"block": reads["block"], "head": reads["head"], "ablated": ablation,
                      **{kind: {ROLE_NAMES[role]: {slot: float(v[mask].mean()) for slot, v in reads[kind].items()}
                                for role, mask in (("x", crosser), ("y", ~crosser))}
                         for kind in ("weight", "contribution")}})
    blocks = []
    for block in range(len(model.blocks)):
        with ablated(model, [(block, h) for h in range(model.blocks[block].mixer.n_heads)]):
            blocks.append({"block": block + 1, "ablated": accuracies(answers_of(model, inputs))})
    return {"held_out": {"pairs": len({(x, y) for x, y, _ in held}), "sentences": len(held),
                         **accuracies(answers_of(model, inputs))},
            "heads": heads, "blocks": blocks,
            "patching": patching(model, lang, vocab, "adjective", adjective_swaps(lang, held))
                        + patching(model, lang, vocab, "noun", noun_swaps(held))}


def run(run_dir: Path, split_path: Path, out: Path) -> dict:
    metrics = published(run_dir)
    cfg = compose_run(metrics["run"], [f"profile={metrics['profile']}"])
    split = json.loads(split_path.read_text())
    lang = Language.from_cfg(cfg.winograd.language)
    if split["language"] != OmegaConf.to_container(cfg.winograd.language, resolve=True):
        raise ConfigError(f"{split_path} was written for another language than {run_dir}'s run")
    if cfg.model.mixer != "attention" or not cfg.model.out_proj:
        raise ConfigError(f"{metrics['run']}: heads are read through W_O; it needs mixer=attention and out_proj")
    torch.use_deterministic_algorithms(True)
    measured = git_commit()  # read before measuring: edits made while it runs are not its code
    model, source = load_model(run_dir, split_path)
    record = {"run": metrics["run"], "profile": metrics["profile"], "seed": metrics["seed"],
              "config_hash": metrics["config_hash"], "measured": measured, "weights": source,
              "against_published": against_published(model, lang, split, run_dir), **measure(model, lang, split)}
    data.write_json(out, record)
    return record


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True, help="the published run's folder (metrics.json, probe.json)")
    parser.add_argument("--split", type=Path, required=True, help="split.json of the run's version")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    try:
        r = run(args.run, args.split, args.out)
    except ConfigError as e:
        sys.exit(f"error: {e}")
    print(f"{r['run']} seed {r['seed']} ({r['weights']} weights): held-out accuracy {r['held_out']['accuracy']:.1f} % "
          f"on {r['held_out']['sentences']} sentences; against the published run: "
          f"{r['against_published']['held_out_answers_differ']} held-out answers differ, probe weights within "
          f"{r['against_published']['probe_max_abs_diff']:.2g}")


if __name__ == "__main__":
    main()
