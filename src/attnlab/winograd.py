"""The Winograd probe: a language where the question has a right answer, and its scoring.

    python -m attnlab.winograd split role --out results/quick/measure/winograd/role
    python -m attnlab.winograd train role_two_blocks --split results/quick/measure/winograd/role/split.json \
        --out results/quick/measure/winograd/role/two_blocks/seed0 profile=quick seed=0

Every sentence is `the {x} did not cross the {y} because it was too {adj} , so the {ref} waited .`
with word-level tokens. A run (configs/winograd/<run>.yaml, composed by Hydra's compose API on
top of the shared defaults) trains the project's LanguageModel as an ordinary next-token
predictor on the training sentences, through attnlab.train's loop (the same run folder, resumable),
and is scored at one position only: input position 14, the
"the" after "so", whose next token is the referent. An answer is right (the referent), the wrong
noun of the pair, or anything else. The split is seeded by the language, not by the run's seed,
so seeds vary only the model's initialisation and batch order.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import torch
from omegaconf import DictConfig, OmegaConf, open_dict

from attnlab import data, runs
from attnlab.config import ConfigError, compose, config_hash, winograd_versions
from attnlab.train import train

TEMPLATE = "the {x} did not cross the {y} because it was too {adj} , so the {ref} waited ."
TEMPLATE_WORDS = [w for w in TEMPLATE.split() if not w.startswith("{")]
SCORED = 14  # input position of the "the" after "so": the next token is the referent
ADJ_POS, X_POS, Y_POS = 11, 1, 6
VERSIONS = ("category", "role")  # the language's kinds (winograd.language.version); a version's file may re-split one
ROLES = ("x", "y")  # which slot an adjective makes the referent: x = the crosser, y = the crossed


def sentence(x: str, y: str, adj: str, ref: str) -> str:
    return TEMPLATE.format(x=x, y=y, adj=adj, ref=ref)


@dataclass(frozen=True)
class Language:
    """The nouns that may fill each slot, the adjectives with their role, and how to split."""

    version: str
    x_nouns: tuple[str, ...]
    y_nouns: tuple[str, ...]
    adjectives: dict  # adjective -> "x" | "y"
    held_out: int
    split_seed: int
    probe: tuple[str, str]

    @classmethod
    def from_cfg(cls, lang) -> "Language":
        lang = OmegaConf.to_container(lang, resolve=True) if isinstance(lang, DictConfig) else dict(lang)
        version = lang.get("version")
        if version not in VERSIONS:
            raise ConfigError(f"winograd.language.version={version!r} is not one of {list(VERSIONS)}")
        needed = ["animals", "places"] if version == "category" else ["nouns"]
        missing = [k for k in [*needed, "adjectives", "held_out", "split_seed", "probe"] if k not in lang]
        if missing:
            raise ConfigError(f"winograd.language ({version}) lacks {missing}")
        x_nouns, y_nouns = (lang["animals"], lang["places"]) if version == "category" else (lang["nouns"],) * 2
        out = cls(version, tuple(x_nouns), tuple(y_nouns), dict(lang["adjectives"]), int(lang["held_out"]),
                  int(lang["split_seed"]), tuple(lang["probe"]))
        out.validate()
        return out

    def validate(self) -> None:
        bad = {a: r for a, r in self.adjectives.items() if r not in ROLES}
        if bad:
            raise ConfigError(f"winograd.language.adjectives {bad}: each role must be one of {list(ROLES)}")
        if set(self.adjectives.values()) != set(ROLES):
            raise ConfigError(f"winograd.language.adjectives={self.adjectives} needs adjectives of both roles")
        words = [*self.x_nouns, *self.adjectives] + ([] if self.version == "role" else list(self.y_nouns))
        clash = sorted({w for w in words if words.count(w) > 1 or w in TEMPLATE_WORDS})
        if clash:
            raise ConfigError(f"winograd.language: words {clash} are repeated or are template words")
        x, y = self.probe
        if x not in self.x_nouns or y not in self.y_nouns or x == y:
            raise ConfigError(f"winograd.language.probe={list(self.probe)} must be an (x, y) pair of the noun pools")
        available = len(self.candidate_pairs())
        # category: every held-out noun must keep a training partner
        limit = min(available, len(self.x_nouns) - 1, len(self.y_nouns) - 1) if self.version == "category" else available
        if not 1 <= self.held_out <= limit:
            raise ConfigError(f"winograd.language.held_out={self.held_out} must be between 1 and {limit}")

    def vocab(self) -> list[str]:
        """Template words, then nouns, then adjectives, each once, in order of first mention."""
        return list(dict.fromkeys([*TEMPLATE_WORDS, *self.x_nouns, *self.y_nouns, *self.adjectives]))

    def referent(self, x: str, y: str, adj: str) -> str:
        return x if self.adjectives[adj] == "x" else y

    def candidate_pairs(self) -> list[tuple[str, str]]:
        """Pairs that may be held out: category (x, y) pairs; role unordered pairs. Never the probe's."""
        probe = set(self.probe)
        if self.version == "category":
            return [(x, y) for x in self.x_nouns for y in self.y_nouns if (x, y) != self.probe]
        return [p for p in itertools.combinations(self.x_nouns, 2) if set(p) != probe]

    def split(self) -> dict:
        """{"train": [(x, y, adj)], "held_out": [(x, y, adj)]}, every adjective for every pair.

        category: held-out (animal, place) pairs never appear in training.
        role: for each drawn unordered pair one order (a coin flip) is trained and the reverse is
        held out; every other ordered pair is trained."""
        rng = random.Random(self.split_seed)
        drawn = rng.sample(self.candidate_pairs(), self.held_out)
        if self.version == "category":
            held = set(drawn)
        else:
            held = {(b, a) if rng.random() < 0.5 else (a, b) for a, b in drawn}
        pairs = [(x, y) for x in self.x_nouns for y in self.y_nouns if x != y]
        expand = lambda ps: [(x, y, adj) for x, y in ps for adj in self.adjectives]  # noqa: E731
        return {"train": expand(p for p in pairs if p not in held),
                "held_out": expand(p for p in pairs if p in held)}


def encode(lang: Language, triples, vocab: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """(inputs, targets), each (N, 17): targets are inputs shifted by one token."""
    stoi = {w: i for i, w in enumerate(vocab)}
    ids = torch.tensor([[stoi[w] for w in sentence(x, y, adj, lang.referent(x, y, adj)).split()]
                        for x, y, adj in triples], dtype=torch.long)
    return ids[:, :-1], ids[:, 1:]


# ---------------------------------------------------------------- configs

def compose_run(run: str, overrides=()) -> DictConfig:
    """The composed config of one Winograd run (configs/winograd/<run>.yaml), with model.vocab_size
    set from its language. The corpus group plays no part here, so it is dropped (and leaves the hash)."""
    cfg = compose([f"+winograd={run}", *overrides])
    if "language" not in cfg.get("winograd", {}):
        raise ConfigError(f"winograd={run} defines no winograd.language; runs are configs/winograd/<run>.yaml")
    lang = Language.from_cfg(cfg.winograd.language)
    with open_dict(cfg):
        cfg.model.vocab_size = len(lang.vocab())
        cfg.winograd.run = run
        del cfg["data"]
    return cfg


def language_config(version: str) -> DictConfig:
    if version not in winograd_versions():
        raise ConfigError(f"version {version!r} is not one of {winograd_versions()} (configs/winograd/language/)")
    return compose_run(f"language/{version}").winograd.language


def language_hash(version: str) -> str:
    return config_hash(OmegaConf.create({"language": language_config(version)}))


# ---------------------------------------------------------------- split on disk

def write_split(version: str, out: Path) -> dict:
    """split.json (language, vocab, triples) plus train.txt / held_out.txt, one sentence a line."""
    lang_cfg = language_config(version)
    lang = Language.from_cfg(lang_cfg)
    split = lang.split()
    for name in ("train", "held_out"):
        data.write_text(out / f"{name}.txt", "".join(sentence(x, y, a, lang.referent(x, y, a)) + "\n"
                                                     for x, y, a in split[name]))
    record = {"version": version, "language": OmegaConf.to_container(lang_cfg), "vocab": lang.vocab(),
              "train": [list(t) for t in split["train"]], "held_out": [list(t) for t in split["held_out"]]}
    data.write_json(out / "split.json", record)
    return record


def read_split(path: Path, lang_cfg: DictConfig) -> dict:
    record = json.loads(Path(path).read_text())
    if record["language"] != OmegaConf.to_container(lang_cfg, resolve=True):
        raise ConfigError(f"{path} was written for another language than the run's; rerun the split")
    return record


# ---------------------------------------------------------------- training and scoring

@torch.inference_mode()
def score(model, lang: Language, triples, vocab: list[str], device) -> list[dict]:
    """One row per sentence: the argmax answer at the scored position and its outcome."""
    model.eval()
    x, y = encode(lang, triples, vocab)
    logits, _, _ = model(x.to(device))
    answers = logits[:, SCORED].argmax(-1).cpu()
    model.train()
    rows = []
    for (nx, ny, adj), target, answer in zip(triples, y[:, SCORED].tolist(), answers.tolist()):
        ref, word = vocab[target], vocab[answer]
        other = ny if ref == nx else nx
        outcome = "right" if word == ref else "wrong_noun" if word == other else "other"
        rows.append({"x": nx, "y": ny, "adjective": adj, "referent": ref, "answer": word, "outcome": outcome})
    return rows


def shares(scored: list[dict]) -> dict:
    """Percent right, wrong noun of the pair, anything else."""
    n = len(scored)
    share = lambda outcome: 100.0 * sum(row["outcome"] == outcome for row in scored) / n  # noqa: E731
    return {"accuracy": share("right"), "wrong_noun": share("wrong_noun"), "other": share("other"), "sentences": n}


@torch.inference_mode()
def probe(model, lang: Language, vocab: list[str], device) -> list[dict]:
    """For the probe pair and every adjective: each block's attention from the scored position to
    the 15 visible tokens, averaged over heads (the average mixer has one uniform row)."""
    model.eval()
    x_noun, y_noun = lang.probe
    triples = [(x_noun, y_noun, adj) for adj in lang.adjectives]
    x, _ = encode(lang, triples, vocab)
    logits, _, attentions = model(x.to(device), explicit=True)
    answers = logits[:, SCORED].argmax(-1).tolist()
    model.train()
    rows = []
    for block, att in enumerate(attentions, start=1):
        if att is None:  # mixer none: nothing attends
            continue
        w = att["weights"]
        w = w.mean(1) if w.dim() == 4 else w.expand(len(triples), -1, -1)  # (B, T, T)
        for i, (_, _, adj) in enumerate(triples):
            rows.append({"adjective": adj, "role": lang.adjectives[adj], "block": block,
                         "referent": lang.referent(x_noun, y_noun, adj), "answer": vocab[answers[i]],
                         "tokens": [vocab[t] for t in x[i, :SCORED + 1].tolist()],
                         "weights": w[i, SCORED, :SCORED + 1].tolist()})
    return rows


class Sentences:
    """The Winograd task of train.train: batches of training sentences, and scores at SCORED
    (held-out shares at every evaluation; at the end held-out and training shares, answers.csv
    with each held-out answer and probe.json)."""

    def __init__(self, cfg: DictConfig, split: dict):
        self.lang = Language.from_cfg(cfg.winograd.language)
        self.vocab = split["vocab"]
        self.train_triples = [tuple(t) for t in split["train"]]
        self.held_triples = [tuple(t) for t in split["held_out"]]
        self.inputs, self.targets = encode(self.lang, self.train_triples, self.vocab)
        self.batch_size = cfg.train.batch_size

    def batch(self, generator: torch.Generator):
        rows = torch.randint(len(self.inputs), (self.batch_size,), generator=generator)
        return self.inputs[rows], self.targets[rows]  # every position: an ordinary language model

    def evaluate(self, model, device) -> dict:
        held = shares(score(model, self.lang, self.held_triples, self.vocab, device))
        return {f"held_out_{k}": v for k, v in held.items() if k != "sentences"}

    def results(self, model, device, final: dict, diverged: bool, run_dir: Path) -> dict:
        held = score(model, self.lang, self.held_triples, self.vocab, device)
        runs.write_csv(run_dir / "answers.csv", held)
        data.write_json(run_dir / "probe.json", probe(model, self.lang, self.vocab, device))
        return {"version": self.lang.version, "held_out": shares(held),
                "train": shares(score(model, self.lang, self.train_triples, self.vocab, device))}


def train_to(run: str, split_path: Path, out: Path, overrides=()) -> dict:
    cfg = compose_run(run, overrides)
    split = read_split(split_path, cfg.winograd.language)
    return train(cfg, out, f"winograd/{run}", overrides, Sentences(cfg, split))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_split = sub.add_parser("split", help="write one version's train/held-out sentences")
    p_split.add_argument("version", choices=winograd_versions())
    p_split.add_argument("--out", type=Path, required=True)
    p_train = sub.add_parser("train", help="train and score one run (configs/winograd/<run>.yaml)")
    p_train.add_argument("run")
    p_train.add_argument("--split", type=Path, required=True, help="split.json of the run's version")
    p_train.add_argument("--out", type=Path, required=True)
    args, overrides = parser.parse_known_args(argv)  # the rest are Hydra overrides: profile=quick seed=1
    if args.command == "split" and overrides or any(o.startswith("-") for o in overrides):
        parser.error(f"unrecognized arguments: {' '.join(overrides)}")
    try:
        if args.command == "split":
            record = write_split(args.version, args.out)
            print(f"{args.version}: {len(record['train'])} training, {len(record['held_out'])} held-out sentences")
        else:
            m = train_to(args.run, args.split, args.out, overrides)
            h = m["held_out"]
            print(f"{args.run} seed {m['seed']}: {m['steps']} steps, held-out accuracy {h['accuracy']:.1f} %, "
                  f"wrong noun {h['wrong_noun']:.1f} %, other {h['other']:.1f} % ({h['sentences']} sentences)")
    except ConfigError as e:
        sys.exit(f"error: {e}")


if __name__ == "__main__":
    main()
