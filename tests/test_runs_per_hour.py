"""runs_per_hour: every mode gets a row, a run's cost follows from the timed step, the table reads the
rows in mode order. The chapter's 1-block shapes at one and two seeds, one step: no test asserts a speed."""

import pytest

from attnlab.compare import is_timing
from attnlab.data import write_json
from attnlab.measure import runs_per_hour
from attnlab.families import load_families
from attnlab.tables import BUILDERS as TABLES

pytestmark = pytest.mark.slow  # each mode trains steps of the chapter's model, bf16 among them


@pytest.fixture(scope="module")
def rows():
    return runs_per_hour.measure("smoke", ["ladder/block"], seed_batches=[1, 2], compile_modes=[False],
                                 precisions=["float32", "bf16"], threads=1, repeats=2, steps=1)


def test_every_mode_is_measured_and_a_runs_cost_follows_from_its_step(rows):
    assert {(r["seed_batch"], r["precision"]) for r in rows} == {(k, p) for k in (1, 2) for p in ("float32", "bf16")}
    for r in rows:
        assert r["ms_per_step"] > 0 and r["runs"] == 2 and r["steps"] == 1 and r["compile_s"] is None
        assert r["run_s"] == pytest.approx(r["run_steps"] * r["ms_per_step"] / 1000 / r["seed_batch"])
        assert r["runs_per_hour"] == pytest.approx(3600 / r["run_s"])
        baseline = r["seed_batch"] == 1 and r["precision"] == "float32"
        assert (r["vs_separate"] == 1) == baseline
    # the smoke profile's budget scales the run: its steps, not the chapter's 3,000
    assert {r["run_steps"] for r in rows} == {6}


def test_the_table_orders_the_modes_and_keeps_what_was_measured(rows, tmp_path):
    measured = tmp_path / "runs_per_hour.json"
    write_json(measured, {"rows": list(reversed(rows))})
    load_families()
    df = TABLES["runs_per_hour"]({"runs_per_hour": [str(measured)]})
    assert list(zip(df["seed_batch"], df["precision"])) == [(1, "float32"), (1, "bf16"), (2, "float32"), (2, "bf16")]
    # what attnlab.compare holds equal between two builds: the modes, not their speed
    assert [c for c in df.columns if not is_timing(c)] == ["setting", "n_blocks", "batch_size", "seed_batch",
                                                         "processes", "compiled", "precision", "threads", "run_steps",
                                                         "runs", "steps", "device", "torch"]


def test_without_a_gpu_measurement_the_gpu_modes_say_so(rows, tmp_path):
    """No runs_per_hour_gpu.json committed: the table lists the profile's GPU modes, each 'not measured on a
    GPU yet', after the measured rows; a committed one gives its rows instead."""
    measured = tmp_path / "runs_per_hour.json"
    write_json(measured, {"rows": rows})
    load_families()
    df = TABLES["runs_per_hour"]({"runs_per_hour": [str(measured)], "gpu_modes": ["configs/profile/full.yaml"]})
    gpu = df[df["device"] == "not measured on a GPU yet"]
    assert list(gpu.index) == list(range(len(rows), len(df))) and gpu["runs_per_hour"].isna().all()
    assert {(k, p) for k, p in zip(gpu["seed_batch"], gpu["processes"])} >= {(10, 1), (20, 1), (1, 15)}
    write_json(tmp_path / "gpu.json", {"rows": [{**rows[0], "device": "NVIDIA H200", "processes": 15}]})
    df = TABLES["runs_per_hour"]({"runs_per_hour": [str(measured)], "runs_per_hour_gpu": [str(tmp_path / "gpu.json")]})
    assert list(df["device"])[-1] == "NVIDIA H200" and "not measured on a GPU yet" not in set(df["device"])


def test_the_gpu_measurements_groups_share_one_baseline():
    """runs_per_hour_gpu measures its groups one after another; a group without the one-seed, uncompiled
    float32 mode is judged against the group that has it (here on the CPU: the same code)."""
    from attnlab.measure.runs_per_hour_gpu import measure_groups

    settings = {"groups": [{"experiments": ["ladder/block"], "seed_batches": [1], "compile": [False],
                            "precisions": ["float32"]},
                           {"experiments": ["ladder/block"], "seed_batches": [2], "compile": [False],
                            "precisions": ["float32"]}],
                "threads": 1, "repeats": 1, "steps": 1, "device": "cpu"}
    one, two = measure_groups("smoke", settings)
    assert (one["seed_batch"], two["seed_batch"]) == (1, 2) and one["vs_separate"] == 1
    assert two["vs_separate"] == pytest.approx(two["runs_per_hour"] / one["runs_per_hour"])


@pytest.mark.slow
def test_processes_side_by_side_count_their_runs_together():
    """A group with processes: P times P one-seed processes at once (spawned: seconds each on a CPU);
    their runs per hour add up, against the one-process baseline of the same setting."""
    from attnlab.measure.runs_per_hour_gpu import measure_groups

    settings = {"groups": [{"experiments": ["ladder/block"], "seed_batches": [1], "compile": [False],
                            "precisions": ["float32"]},
                           {"experiments": ["ladder/block"], "processes": 2}],
                "threads": 1, "repeats": 1, "steps": 1, "device": "cpu"}
    alone, together = measure_groups("smoke", settings)
    assert (alone["processes"], together["processes"], together["seed_batch"]) == (1, 2, 1)
    # each process's runs per hour from its own step time, summed: at least two runs of the median process's
    # time (1/a + 1/b >= 2/mean(a, b), and the median of two is their mean)
    assert together["runs_per_hour"] >= 2 * 3600 / together["run_s"] * (1 - 1e-12)
    assert together["vs_separate"] == pytest.approx(together["runs_per_hour"] / alone["runs_per_hour"])
