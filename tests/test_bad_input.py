"""Bad input, one case each: a non-zero exit, one clear line naming the bad value and what is
allowed, and nothing written (no run folder, no data file). An attention size over the memory
budget is a recorded outcome, tested in test_attention_scaling.py."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each case runs the app or Snakemake in a process

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")


def run(args, cwd, **env):
    environ = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "MPLBACKEND": "Agg", **env}
    environ = {k: v for k, v in environ.items() if v is not None}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=environ, capture_output=True, text=True, timeout=300)


def snapshot(folder: Path) -> set:
    return {(str(p.relative_to(folder)), p.is_dir() or p.stat().st_mtime_ns) for p in folder.rglob("*")}


def assert_clean_failure(result, before: set, folder: Path, *expected: str):
    """Exit != 0, the message is one line that names the bad value and what is allowed, nothing written."""
    assert result.returncode != 0, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for text in expected:
        assert text in lines[0], (text, lines[0])
    assert snapshot(folder) == before, "a failed run left files behind"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A working directory with the smoke profile's token cache (a run reads it before training)."""
    folder = tmp_path_factory.mktemp("bad_input")
    if not os.environ.get("ATTNLAB_CORPUS"):
        pytest.skip("ATTNLAB_CORPUS (a local Tiny Shakespeare) is not set")
    for stage in ("corpus", "tokenizer", "tokens"):
        result = run(["-m", "attnlab.data", stage, "profile=smoke"], folder)
        assert result.returncode == 0, result.stderr
    return folder


CASES = {
    "unknown_experiment": (["experiment=ladder/nope"], ["'ladder/nope'", "allowed:", "ladder/average"]),
    "unknown_option": (["model.widht=64"], ["'model.widht'", "allowed in model:", "d_model"]),
    "wrong_type": (["model.d_model=wide"], ["model.d_model='wide'", "allowed: int"]),
    "heads_do_not_divide_width": (["model.n_heads=3"], ["model.n_heads=3", "model.d_model=128", "d_head"]),
    "d_head_zero": (["model.d_head=0"], ["model.d_head=0", "must be positive"]),
    "negative_steps": (["train.steps=-5"], ["train.steps=-5", ">= 0"]),
    "unknown_profile": (["profile=nope"], ["'nope'", "['full', 'quick', 'smoke']"]),
    "eval_window_longer_than_split": (["train.eval_lengths=[100000]"], ["100000", "held-out split", "allowed: lengths <="]),
}


@pytest.mark.parametrize("case", CASES)
def test_train_rejects(case, workdir):
    overrides, expected = CASES[case]
    before = snapshot(workdir)
    args = ["-m", "attnlab.train", "experiment=ladder/block", "profile=smoke", *overrides, "hydra.run.dir=runs/bad/seed0"]
    assert_clean_failure(run(args, workdir), before, workdir, *expected)


def test_train_without_an_experiment_names_the_families(workdir):
    """No experiment= would train the default model for hours: it is refused in one line instead."""
    before = snapshot(workdir)
    result = run(["-m", "attnlab.train", "profile=smoke"], workdir)
    assert_clean_failure(result, before, workdir, "experiment=<family>/<run>", "ladder", "position")
    assert len(result.stderr.strip().splitlines()) == 1


def test_corrupt_corpus(tmp_path):
    corpus = tmp_path / "input.txt"
    corpus.write_text("To be, or not to be: not Tiny Shakespeare.\n")
    before = snapshot(tmp_path)
    result = run(["-m", "attnlab.data", "corpus", "profile=smoke"], tmp_path, ATTNLAB_CORPUS=str(corpus))
    assert_clean_failure(result, before, tmp_path, str(corpus), "wrong checksum", "expected sha256 86c4e6aa")


def test_missing_corpus_offline(tmp_path):
    """No local copy and no network (a closed local port stands in for it): the message says
    how to provide a local copy."""
    before = snapshot(tmp_path)
    result = run(["-m", "attnlab.data", "corpus", "profile=smoke", "data.corpus.url=http://127.0.0.1:9/input.txt"],
                 tmp_path, ATTNLAB_CORPUS=None)
    assert_clean_failure(result, before, tmp_path, "could not download", "export ATTNLAB_CORPUS=", "data.corpus.local")


def test_local_corpus_missing(tmp_path):
    before = snapshot(tmp_path)
    result = run(["-m", "attnlab.data", "corpus", "profile=smoke"], tmp_path, ATTNLAB_CORPUS=str(tmp_path / "nope.txt"))
    assert_clean_failure(result, before, tmp_path, "nope.txt does not exist", "ATTNLAB_CORPUS")


def test_unknown_profile_in_snakemake(tmp_path):
    """`--config profile=nope` stops before any job, naming the profiles that exist."""
    before = snapshot(ROOT / "results") if (ROOT / "results").exists() else set()
    result = subprocess.run([str(SNAKEMAKE), "-n", "--cores", "1", "--config", "profile=nope"], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode != 0
    assert "unknown profile 'nope'; allowed: ['full', 'quick', 'smoke']" in result.stdout + result.stderr
    assert not (ROOT / "results" / "nope").exists()
    assert (snapshot(ROOT / "results") if (ROOT / "results").exists() else set()) == before
