"""Faults cost nothing but the failed step: a killed run resumes to the same numbers, a corrupt
checkpoint or token cache is detected and rebuilt, a diverging run is recorded, an interrupted
DAG reruns only what was unfinished, and the smoke tables come out the same twice.

The DAG tests (marked `slow`, ~1-2 min CPU together) run Snakemake in scratch copies of the
repo; the rest run single training jobs of a few hundred tiny steps.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from attnlab.compare import differences, is_timing
from attnlab.data import TOKENS, token_cache_problem

pytestmark = pytest.mark.slow  # real processes killed and resumed

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
# A run long enough to be killed mid-way yet cheap: no mixer, small batches, few steps (smoke
# scales train.steps by 0.002: 100 steps), a checkpoint every 5 steps, one thread (bit-for-bit on CPU).
SHORT_RUN = ["experiment=ladder/no_context", "profile=smoke", "train.steps=50000", "train.batch_size=8",
             "train.eval_interval=25000", "train.checkpoint_interval=5", "train.threads=1"]
TIMING_KEYS = {"train_s", "tokens_per_s", "s_per_step", "started_at", "finished_at"}  # metrics.json keys that read the clock


def environ():
    return {**os.environ, "PYTHONPATH": str(ROOT / "src"), "MPLBACKEND": "Agg"}


def train(cwd: Path, run_dir: str, *overrides: str, wait=True):
    args = [sys.executable, "-m", "attnlab.train", *SHORT_RUN, *overrides, f"hydra.run.dir={run_dir}"]
    if not wait:
        return subprocess.Popen(args, cwd=cwd, env=environ(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    result = subprocess.run(args, cwd=cwd, env=environ(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def outcome(run_dir: Path) -> tuple:
    """Everything a run computed: metrics less timing, the loss curve and the evaluations."""
    metrics = json.loads((run_dir / "metrics.json").read_text())
    return ({k: v for k, v in metrics.items() if k not in TIMING_KEYS},
            (run_dir / "curve.csv").read_text(), (run_dir / "evals.csv").read_text())


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A working directory with the smoke token cache and one uninterrupted reference run."""
    if not os.environ.get("ATTNLAB_CORPUS"):
        pytest.skip("ATTNLAB_CORPUS (a local Tiny Shakespeare) is not set")
    folder = tmp_path_factory.mktemp("faults")
    train(folder, "runs/reference")  # also builds the token cache (data.prepare)
    return folder


def test_kill9_then_resume_equals_uninterrupted(workdir):
    run_dir = workdir / "runs/killed"
    job = train(workdir, str(run_dir), wait=False)
    deadline = time.monotonic() + 300
    while not (run_dir / "checkpoint.pt").exists() and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)  # land between two checkpoints, so some steps are done twice
    job.send_signal(signal.SIGKILL)
    job.wait()
    assert job.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    assert not (run_dir / "metrics.json").exists()

    log = train(workdir, str(run_dir))
    assert "resuming from step" in log and "resuming from step 0" not in log, log
    assert outcome(run_dir) == outcome(workdir / "runs/reference")


def test_corrupt_checkpoint_is_not_resumed_from(workdir):
    """A checkpoint with flipped bytes inside a tensor still loads with torch.load; its checksum
    catches it, and the run starts over (same numbers) instead of resuming from garbage."""
    run_dir = workdir / "runs/corrupt_checkpoint"
    shutil.copytree(workdir / "runs/reference", run_dir)
    (run_dir / "metrics.json").unlink()
    checkpoint = bytearray((run_dir / "checkpoint.pt").read_bytes())
    middle = len(checkpoint) // 2
    checkpoint[middle:middle + 8] = bytes(b ^ 0xFF for b in checkpoint[middle:middle + 8])
    (run_dir / "checkpoint.pt").write_bytes(checkpoint)

    log = train(workdir, str(run_dir))
    assert "does not match its checksum" in log and "resuming" not in log, log
    assert outcome(run_dir) == outcome(workdir / "runs/reference")


def test_truncated_checkpoint_is_not_resumed_from(workdir):
    run_dir = workdir / "runs/truncated_checkpoint"
    shutil.copytree(workdir / "runs/reference", run_dir)
    (run_dir / "metrics.json").unlink()
    checkpoint = run_dir / "checkpoint.pt"
    checkpoint.write_bytes(checkpoint.read_bytes()[: checkpoint.stat().st_size // 2])

    log = train(workdir, str(run_dir))
    assert "unreadable" in log and "resuming" not in log, log
    assert outcome(run_dir) == outcome(workdir / "runs/reference")


def test_corrupt_token_cache_is_rebuilt_by_a_run(workdir, tmp_path):
    """A hand-made run finds the cache failing its checksum, rebuilds it, and trains as before."""
    shutil.copytree(workdir / "results", tmp_path / "results")
    cache = tmp_path / "results/smoke/data"
    ids = bytearray((cache / TOKENS).read_bytes())
    ids[-2:] = bytes(b ^ 0xFF for b in ids[-2:])
    (cache / TOKENS).write_bytes(ids)
    assert "does not match its checksum" in token_cache_problem(cache)

    log = train(tmp_path, "runs/reference")
    assert "rebuilding it" in log, log
    assert token_cache_problem(cache) is None
    assert outcome(tmp_path / "runs/reference") == outcome(workdir / "runs/reference")


def test_diverging_run_is_recorded(workdir):
    """A learning rate of 1e30 makes the loss NaN/inf within a step or two: the run ends normally,
    recorded as diverged, and a table built from it says so instead of failing."""
    run_dir = workdir / "runs/diverged"
    train(workdir, str(run_dir), "train.lr=1e30")
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["diverged"] is True and metrics["diverged_step"] is not None
    assert metrics["held_out_ppl"] == {"128": None} and metrics["train_ppl"] is None

    out = workdir / "tables"
    reference = workdir / "runs/reference/metrics.json"
    result = subprocess.run(
        [sys.executable, "-m", "attnlab.families", "table", "average_ladder", "--csv", out / "t.csv", "--md", out / "t.md",
         f"no_context={reference}", f"average={run_dir / 'metrics.json'}"],
        env=environ(), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(out / "t.csv", dtype=str, keep_default_na=False)
    assert list(table["diverged_at"]) == ["", str(metrics["diverged_step"])]
    assert table["held_out_ppl"].iloc[1] == "" or table["held_out_ppl"].iloc[1].lower() == "nan"


def test_timing_columns_are_named_as_such():
    assert all(map(is_timing, ["train_s", "tokens_per_s", "s_per_step", "forward_ms", "train_s_std",
                               "time_spread", "mfu", "vs_reference",  # throughput's
                               "compile_s", "run_s", "runs_per_hour", "vs_separate"]))  # runs_per_hour's
    assert not any(map(is_timing, ["held_out_ppl", "steps", "params", "seeds", "diverged_at", "loss"]))


# ---------------------------------------------------------------- DAG-level (slow) ----------

SMOKE_TARGETS = ["results/smoke/tables/corpus.csv", "results/smoke/tables/average_ladder.csv"]
RUNS = [f"results/smoke/runs/ladder/{run}/seed0" for run in
        ("no_context", "average", "average_positions", "average_residual")]


def scratch_copy(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "profiles", "environment.yml", "configs", "workflow", "src"):
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, folder / name)
    return folder


def snakemake(folder: Path, *args: str, wait=True):
    cmd = [str(SNAKEMAKE), *args, "--cores", "1", "--config", "profile=smoke"]  # --config takes the rest
    env = {**environ(), "PYTHONPATH": str(folder / "src")}
    if not wait:  # own process group, like a terminal's foreground job
        # SIGINT restored to its default: a shell's background job (CI under nohup ... &) starts
        # with it ignored, and an ignored signal stays ignored across exec
        return subprocess.Popen(cmd, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    result = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def dag(tmp_path_factory):
    if not os.environ.get("ATTNLAB_CORPUS"):
        pytest.skip("ATTNLAB_CORPUS (a local Tiny Shakespeare) is not set")
    return scratch_copy(tmp_path_factory.mktemp("dag") / "repo")


def test_interrupted_dag_reruns_only_unfinished_jobs(dag):
    """Ctrl-C (SIGINT to the process group) while the second training job runs; the rerun keeps
    every finished output (same mtime) and leaves nothing half-written behind."""
    # the averaging rows (all three read this file) train 50 steps instead of 3-6, so the interrupt lands
    # inside a job: seconds to spare, and the rerun retrains only those three short runs
    config = dag / "configs/experiment/ladder/average.yaml"
    config.write_text(config.read_text() + "\ntrain:\n  steps: 25000\n")
    job = snakemake(dag, *SMOKE_TARGETS, wait=False)
    finished, running = dag / RUNS[0] / "metrics.json", None
    deadline = time.monotonic() + 900
    while running is None and job.poll() is None and time.monotonic() < deadline:
        done = [r for r in RUNS if (dag / r / "metrics.json").exists()]
        # started = its progress bar is up: imports and the first evaluation are done, 50 steps to go
        started = [r for r in RUNS if r not in done and (dag / r / "train.log").exists()
                   and "%|" in (dag / r / "train.log").read_text(errors="replace")]
        if done and started:
            finished, running = dag / done[0] / "metrics.json", dag / started[0]
        time.sleep(0.05)
    assert running is not None, "the DAG finished or stalled before it could be interrupted"
    os.killpg(job.pid, signal.SIGINT)
    job.wait(timeout=120)
    assert job.returncode != 0

    # nothing half-written: the interrupted run has no outputs, no temp file is left anywhere
    assert not any((running / name).exists() for name in ("metrics.json", "curve.csv", "evals.csv"))
    assert not list((dag / "results").rglob("*.tmp"))
    for metrics in (dag / "results").rglob("metrics.json"):
        json.loads(metrics.read_text())  # complete JSON
    kept = {p: p.stat().st_mtime_ns for p in (dag / "results").rglob("*")
            if p.is_file() and p.suffix in (".json", ".csv", ".npy", ".txt") and p.parent != running}
    assert finished in kept

    snakemake(dag, *SMOKE_TARGETS)
    for path, mtime in kept.items():
        assert path.stat().st_mtime_ns == mtime, f"{path} was recomputed"
    assert (dag / "results/smoke/tables/average_ladder.csv").exists()


def test_diverging_run_completes_the_dag(dag):
    """One ladder row made to diverge (lr 1e30 in its experiment file): the DAG completes and the
    table records where it diverged."""
    config = dag / "configs/experiment/ladder/average_residual.yaml"
    config.write_text(config.read_text() + "\ntrain:\n  lr: 1.0e+30\n")
    # a table asked for by its path is rebuilt only when missing; forced (-f), it first reruns the run whose key changed
    snakemake(dag, "-f", *SMOKE_TARGETS)
    table = pd.read_csv(dag / "results/smoke/tables/average_ladder.csv", dtype=str, keep_default_na=False)
    metrics = json.loads((dag / RUNS[3] / "metrics.json").read_text())
    assert metrics["diverged"] and list(table["diverged_at"]) == ["", "", "", str(metrics["diverged_step"])]


def test_corrupt_token_cache_is_rebuilt_by_the_run_that_reads_it(dag):
    """Planning never touches the cache (a dry run leaves a corrupt one as it is); the next run that
    reads it finds the checksum wrong and rebuilds it before training: no job trains on it."""
    snakemake(dag, *SMOKE_TARGETS)
    cache = dag / "results/smoke/data"
    ids = bytearray((cache / TOKENS).read_bytes())
    ids[-2:] = bytes(b ^ 0xFF for b in ids[-2:])
    (cache / TOKENS).write_bytes(ids)

    snakemake(dag, "-n", *SMOKE_TARGETS)
    assert (cache / TOKENS).read_bytes() == ids
    before = json.loads((dag / RUNS[0] / "metrics.json").read_text())["held_out_ppl"]
    (dag / RUNS[0] / "checkpoint.pt").unlink(missing_ok=True)  # a real rerun, not a resume at its last step
    snakemake(dag, *SMOKE_TARGETS, "--forcerun", f"{RUNS[0]}/metrics.json")  # --forcerun takes every path after it
    assert token_cache_problem(cache) is None
    assert json.loads((dag / RUNS[0] / "metrics.json").read_text())["held_out_ppl"] == before


def test_smoke_tables_are_the_same_twice(smoke_run, tmp_path):
    """The corpus and average_ladder tables built in a fresh copy, alone and on one core, against the same
    tables of the session's whole smoke DAG on two cores: every CSV cell is equal, timing columns aside
    (attnlab.compare names them)."""
    again = scratch_copy(tmp_path / "again")
    snakemake(again, *SMOKE_TARGETS)
    built = again / "results/smoke/tables"
    first = tmp_path / "first"
    first.mkdir()
    for table in built.glob("*.csv"):
        shutil.copy(smoke_run / "results/smoke/tables" / table.name, first)
    assert sorted(p.name for p in first.iterdir()) == ["average_ladder.csv", "corpus.csv"]
    assert differences(first, built) == []


@pytest.mark.skipif(os.environ.get("ATTNLAB_SLURM") != "1",
                    reason="set ATTNLAB_SLURM=1 to run: needs root, installs slurm-wlm and munge, 3-8 min")
def test_smoke_dag_through_slurm():
    """.ci/slurm.sh: a single-node SLURM here, a slice of the smoke DAG through --executor slurm, same tables."""
    result = subprocess.run(["bash", str(ROOT / ".ci/slurm.sh")], env={**environ(), "VENV": str(Path(sys.executable).parents[1])},
                            capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]
    assert "same tables locally and through SLURM" in result.stdout
