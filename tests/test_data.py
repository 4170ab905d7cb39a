"""Corpus, tokenizer and token cache: checksums, clear errors, the chapter's tokenisation."""

import json

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf

from attnlab import data
from attnlab.config import compose


def corpus_cfg(**over):
    cfg = OmegaConf.to_container(compose([]).data.corpus, resolve=True)
    cfg.update(over)
    return OmegaConf.create(cfg)


def test_wrong_checksum_names_expected_and_actual(tmp_path):
    bad = tmp_path / "input.txt"
    bad.write_text("not shakespeare")
    with pytest.raises(data.DataError, match=r"expected sha256 86c4e6aa.*got [0-9a-f]{64}"):
        data.fetch_corpus(corpus_cfg(local=str(bad)))


def test_missing_local_copy_is_named(tmp_path):
    with pytest.raises(data.DataError, match="does not exist"):
        data.fetch_corpus(corpus_cfg(local=str(tmp_path / "nope.txt")))


def test_unreachable_download_says_how_to_provide_a_local_copy():
    with pytest.raises(data.DataError, match="ATTNLAB_CORPUS"):
        data.fetch_corpus(corpus_cfg(local=None, url="http://127.0.0.1:9/input.txt", timeout_s=2))


def test_smoke_cache_counts_and_split(smoke_data):
    cfg = compose(smoke_data)
    train, held_out, meta = data.load_tokens(cfg.data.dir)
    assert meta["characters"] == cfg.profile.max_chars and meta["vocab_size"] == 1024
    assert len(train) == int(0.9 * meta["tokens"]) and len(train) + len(held_out) == meta["tokens"]
    assert 2.0 < meta["characters"] / meta["tokens"] < 3.0


def test_corrupt_token_cache_is_detected(tmp_path, smoke_data):
    folder = compose(smoke_data).data.dir
    for name in (data.TOKENS, data.TOKENS_META):
        (tmp_path / name).write_bytes((data.Path(folder) / name).read_bytes())
    ids = np.load(tmp_path / data.TOKENS)
    ids[100] += 1
    np.save(tmp_path / data.TOKENS, ids)
    with pytest.raises(data.DataError, match="corrupt"):
        data.load_tokens(tmp_path)


def test_eval_windows_are_non_overlapping_and_shifted():
    tokens = torch.arange(100)
    x, y = data.eval_windows(tokens, 16)
    assert x.shape == (6, 16) and torch.equal(x.flatten(), tokens[:96]) and torch.equal(y, x + 1)
    with pytest.raises(data.DataError, match="longer than the split"):
        data.eval_windows(tokens, 128)


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.json"
    with pytest.raises(RuntimeError):
        with data.atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []
    data.write_json(target, {"a": 1})
    assert json.loads(target.read_text()) == {"a": 1}
