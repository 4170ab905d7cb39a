"""Shared fixtures, each built once per session: a smoke-profile token cache and the whole smoke DAG run in a
copy of the repository (each in a temp folder), and the published full tables."""

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab import claims, data
from attnlab.claims.reference import REFERENCE_DIR
from attnlab.config import compose

REPO = Path(__file__).resolve().parents[1]
SHARED_CORPUS = REPO.parent / "shared" / "data" / "tinyshakespeare" / "input.txt"
SMOKE_SNAKEMAKE = [sys.executable, "-m", "snakemake", "--cores", "2", "--config", "profile=smoke"]


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


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory, corpus_env):
    """The smoke DAG end to end (Snakemake, 2 cores) in a copy of the repository's files, the published results
    aside (the frozen references its ledger reads kept): minutes, so the tests that read a whole smoke build share
    this one."""
    work = tmp_path_factory.mktemp("repo")
    tracked = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout.split()
    for name in tracked:
        published = name.startswith(("results/", "figures/")) and not name.startswith(f"{REFERENCE_DIR}/")
        if published or not (REPO / name).is_file():
            continue
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, work / name)
    # the copy's own attnlab, not the installed checkout's (the copy has no .git: its runs record no commit)
    result = subprocess.run(SMOKE_SNAKEMAKE, cwd=work, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(work / "src")})
    assert result.returncode == 0, result.stderr[-4000:]
    return work


@pytest.fixture(scope="session")
def full_tables():
    """The published full tables (results/full/tables), as the ledger reads them."""
    paths = sorted(glob.glob(str(REPO / "results" / "full" / "tables" / "*.csv")))
    if not paths:
        pytest.skip("no published full tables")
    return claims.load_tables(paths)
