"""Corpus → tokenizer → token cache, and the batches and evaluation windows every run reads.

Each stage writes its file atomically (temp file, then rename), so a failed stage leaves
nothing half-written. The token cache carries its own checksum: a corrupt cache is
detected, not silently trained on.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

# torch is imported by the functions that make tensors: the tables, the report and Snakemake's
# planning import this module for its file helpers, and need no torch
if TYPE_CHECKING:
    import torch

CORPUS, TOKENIZER, TOKENS, TOKENS_META = "corpus.txt", "tokenizer.json", "tokens.npy", "tokens.json"


class DataError(RuntimeError):
    """Bad or missing input data; the message says what to do."""


@contextmanager
def atomic_path(path: Path):
    """Yield a temp path beside `path`; rename it over `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o644)  # mkstemp makes files private; results are for everyone to read
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_text(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: Path, obj) -> None:
    """`obj` as JSON. A measurement's record (a mapping with its `rows`, written under a measure/ folder) is stamped
    with the commit it was measured at and when (attnlab.config.measured_stamp), where it does not say them itself:
    the report's provenance names both for the table built from it. The stamp is added here rather than in
    attnlab/measure/, whose files are the measurements' keys: an edit there would re-measure every published timing."""
    if is_measurement_record(path, obj):
        from attnlab.config import measured_stamp
        stamp = measured_stamp()
        # a record that names its own commit (random_rows' meta) keeps it, and gains the date
        obj = {**(stamp if "commit" not in obj else {"measured_at": stamp["measured_at"]}), **obj}
    write_text(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


def is_measurement_record(path, obj) -> bool:
    """A measurement's record: a mapping with `rows`, written under a folder named measure (results/<p>/measure/)."""
    return isinstance(obj, dict) and "rows" in obj and "measure" in Path(path).parts


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _download(url: str, timeout_s: float) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return response.read()
    except (urllib.error.URLError, TimeoutError, OSError) as e:
        raise DataError(
            f"could not download the corpus from {url} ({e}). Offline? Point to a local copy: "
            "export ATTNLAB_CORPUS=/path/to/tinyshakespeare/input.txt (or data.corpus.local=...)") from e


def fetch_corpus(corpus_cfg) -> bytes:
    """The verified corpus bytes: the local copy if configured, else the download."""
    local = corpus_cfg.get("local")
    if local:
        path = Path(local).expanduser()
        if not path.is_file():
            raise DataError(f"local corpus {path} does not exist (set by data.corpus.local or ATTNLAB_CORPUS)")
        data, source = path.read_bytes(), str(path)
    else:
        data, source = _download(corpus_cfg["url"], corpus_cfg.get("timeout_s", 30)), corpus_cfg["url"]
    actual = sha256_bytes(data)
    if actual != corpus_cfg["sha256"]:
        raise DataError(f"corpus {source} has the wrong checksum: expected sha256 {corpus_cfg['sha256']}, "
                        f"got {actual}. The file is corrupt or not Tiny Shakespeare.")
    return data


def prepare_corpus(data_cfg, max_chars: int | None) -> Path:
    """Stage 1: verified corpus (sliced to the profile's max_chars) → <dir>/corpus.txt."""
    text = fetch_corpus(data_cfg.corpus).decode("utf-8")
    if max_chars:
        text = text[:max_chars]
    out = Path(data_cfg.dir) / CORPUS
    write_text(out, text)
    return out


def train_tokenizer(data_cfg) -> Path:
    """Stage 2: byte-level BPE with the configured vocabulary, trained on the corpus."""
    from tokenizers import ByteLevelBPETokenizer

    text = (Path(data_cfg.dir) / CORPUS).read_text(encoding="utf-8")
    tokenizer = ByteLevelBPETokenizer()
    tokenizer.train_from_iterator([text], vocab_size=data_cfg.vocab_size, min_frequency=2, show_progress=False)
    if tokenizer.get_vocab_size() != data_cfg.vocab_size:
        raise DataError(f"tokenizer learned {tokenizer.get_vocab_size()} tokens, not {data_cfg.vocab_size}: "
                        "the corpus slice is too small for this vocabulary")
    out = Path(data_cfg.dir) / TOKENIZER
    with atomic_path(out) as tmp:
        tokenizer._tokenizer.save(str(tmp))
    return out


def encode_corpus(data_cfg) -> Path:
    """Stage 3: the corpus encoded once into a uint16 cache with its checksum and counts."""
    from tokenizers import Tokenizer

    folder = Path(data_cfg.dir)
    text = (folder / CORPUS).read_text(encoding="utf-8")
    tokenizer = Tokenizer.from_file(str(folder / TOKENIZER))
    ids = np.asarray(tokenizer.encode(text).ids, dtype=np.uint16)
    with atomic_path(folder / TOKENS) as tmp:
        with open(tmp, "wb") as f:
            np.save(f, ids)
    import torch

    n_train = int(len(ids) * data_cfg.train_fraction)
    write_json(folder / TOKENS_META, {
        "characters": len(text), "tokens": int(len(ids)), "vocab_size": tokenizer.get_vocab_size(),
        "train_tokens": n_train, "held_out_tokens": int(len(ids)) - n_train,
        "train_fraction": data_cfg.train_fraction, "sha256": sha256_bytes(ids.tobytes()),
        "train_unigram_entropy": unigram_entropy(torch.from_numpy(ids[:n_train].astype(np.int64))),
    })
    return folder / TOKENS


def unigram_entropy(tokens: torch.Tensor) -> float:
    """Cross-entropy (nats) of predicting every token by the split's own token frequencies:
    the loss of a model that ignores its input, where a collapsed run sits."""
    import torch

    p = torch.bincount(tokens).double() / len(tokens)
    p = p[p > 0]
    return float(-(p * p.log()).sum())


def prepare(data_cfg, max_chars: int | None) -> None:
    """Every stage whose output is missing (for hand-made runs; the pipeline runs them as rules)."""
    folder = Path(data_cfg.dir)
    if not (folder / CORPUS).exists():
        prepare_corpus(data_cfg, max_chars)
    if not (folder / TOKENIZER).exists():
        train_tokenizer(data_cfg)
    problem = token_cache_problem(folder)
    if problem:
        if (folder / TOKENS).exists():
            print(f"warning: {problem}; rebuilding it", file=sys.stderr)
        encode_corpus(data_cfg)


def _read_token_cache(folder: Path) -> tuple[np.ndarray, dict]:
    """The cached ids and their meta; DataError if missing, unreadable or not matching the checksum."""
    try:
        meta = json.loads((folder / TOKENS_META).read_text())
        ids = np.load(folder / TOKENS)
        expected = (meta["tokens"], meta["sha256"])
    except (OSError, ValueError, EOFError, KeyError, TypeError) as e:
        raise DataError(f"token cache in {folder} is missing or unreadable ({e})") from e
    if (len(ids), sha256_bytes(ids.tobytes())) != expected:
        raise DataError(f"token cache {folder / TOKENS} does not match its checksum in {TOKENS_META}: it is corrupt")
    return ids, meta


def token_cache_problem(folder: str | Path) -> str | None:
    """Why the token cache in `folder` cannot be used, or None if it is sound."""
    try:
        _read_token_cache(Path(folder))
    except DataError as e:
        return str(e)
    return None


def load_tokens(folder: str | Path) -> tuple[torch.Tensor, torch.Tensor, dict]:
    """(train, held_out, meta) from a verified token cache."""
    folder = Path(folder)
    try:
        ids, meta = _read_token_cache(folder)
    except DataError as e:
        raise DataError(f"{e}; rebuild it: rerun the pipeline (it rebuilds a corrupt cache) "
                        f"or delete {folder} and rerun") from e
    import torch

    tokens = torch.from_numpy(ids.astype(np.int64))
    return tokens[: meta["train_tokens"]], tokens[meta["train_tokens"]:], meta


def random_batch(tokens: torch.Tensor, batch_size: int, context: int, generator: torch.Generator):
    """Random training windows: inputs and next-token targets, each (batch, context)."""
    import torch

    starts = torch.randint(len(tokens) - context, (batch_size,), generator=generator)
    offsets = torch.arange(context)
    x = tokens[starts[:, None] + offsets]
    y = tokens[starts[:, None] + offsets + 1]
    return x, y


def eval_windows(tokens: torch.Tensor, length: int, max_windows: int | None = None):
    """Non-overlapping windows of `length` inputs (and their targets), in order; deterministic."""
    n = (len(tokens) - 1) // length
    if n == 0:
        raise DataError(f"evaluation window of {length} tokens is longer than the split ({len(tokens)} tokens)")
    if max_windows:
        n = min(n, max_windows)
    x = tokens[: n * length].view(n, length)
    y = tokens[1: n * length + 1].view(n, length)
    return x, y


STAGES = {"corpus": lambda cfg: prepare_corpus(cfg.data, cfg.profile.max_chars),
          "tokenizer": lambda cfg: train_tokenizer(cfg.data),
          "tokens": lambda cfg: encode_corpus(cfg.data)}


def main(argv: list[str] | None = None) -> None:
    """python -m attnlab.data {corpus,tokenizer,tokens} [hydra overrides, e.g. profile=smoke]"""
    from attnlab.config import ConfigError, compose

    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in STAGES:
        sys.exit(f"usage: python -m attnlab.data {{{','.join(STAGES)}}} [overrides]; got {argv[:1]}")
    try:
        print(STAGES[argv[0]](compose(argv[1:])))
    except (ConfigError, DataError) as e:
        sys.exit(f"error: {e}")


if __name__ == "__main__":
    main()
