"""Shared fixtures: a smoke-profile token cache built once per session in a temp folder."""

import os
from pathlib import Path

import pytest

from attnlab import data
from attnlab.config import compose

REPO = Path(__file__).resolve().parents[1]
SHARED_CORPUS = REPO.parent / "shared" / "data" / "tinyshakespeare" / "input.txt"


@pytest.fixture(scope="session", autouse=True)
def corpus_env():
    """Tests run offline: point the corpus stage at the local copy unless one is set already."""
    if not os.environ.get("ATTNLAB_CORPUS"):
        if not SHARED_CORPUS.exists():
            pytest.exit(f"no corpus: set ATTNLAB_CORPUS or place it at {SHARED_CORPUS}", returncode=2)
        os.environ["ATTNLAB_CORPUS"] = str(SHARED_CORPUS)


@pytest.fixture(scope="session")
def smoke_data(tmp_path_factory, corpus_env):
    """Overrides that make a run read a smoke-sized token cache in a temp folder."""
    folder = tmp_path_factory.mktemp("data")
    overrides = ["profile=smoke", f"data.dir={folder}"]
    cfg = compose(overrides)
    data.prepare(cfg.data, cfg.profile.max_chars)
    return overrides
