"""attnlab.campaign: the seed plan (seeds_per_run's and the sweeps' seeds without results) in groups of
folded seeds, its CPU dry run, and on the smoke profile the whole way: packed, trained before a
deadline, landed with the runs' keys so that the pipeline has nothing left to train."""

import json
import os
import re
import subprocess
import sys
import tarfile

import pytest

from attnlab import campaign


def finished(root, profile, run, seed, key):
    """A seed folder as the pipeline leaves it: metrics.json and its key file."""
    folder, job = (pattern.format(seed=seed) for pattern in campaign.run_home(profile, run))
    (root / folder).mkdir(parents=True)
    (root / folder / "metrics.json").write_text("{}")
    (root / f"results/{profile}/stamps" / job).mkdir(parents=True)
    (root / f"results/{profile}/stamps" / job / f"{key}.key").write_text(key + "\n")


def test_the_plan_groups_the_seeds_without_results(tmp_path):
    """Seed 1 finished, seed 3 trained under an old key: seeds 0, 2-3 (the stale one retrains) and 4, in
    groups of consecutive seeds no larger than the seed batch, each seed with its current key."""
    cfg = campaign.composed_run("smoke", "ladder/block")
    keys = [campaign.seed_key(cfg, seed) for seed in range(5)]
    finished(tmp_path, "smoke", "ladder/block", 1, keys[1])
    finished(tmp_path, "smoke", "ladder/block", 3, "0123456789abcdef")
    groups = campaign.plan("smoke", {"ladder/block": 5, "winograd/role_block": 1}, seed_batch=2, root=tmp_path)
    assert [(g["run"], g["seeds"]) for g in groups] == [("ladder/block", [0]), ("ladder/block", [2, 3]),
                                                        ("ladder/block", [4]), ("winograd/role_block", [0])]
    assert [k for g in groups[:3] for k in g["keys"]] == [keys[0], keys[2], keys[3], keys[4]]
    assert len(set(keys)) == 5 and groups[3]["folder"] == "results/smoke/measure/winograd/role/block/seed{seed}"
    assert campaign.group_command("smoke", groups[1], "out", "b")[:3] == ["-m", "attnlab.train", "experiment=ladder/block"]
    assert "train.seed_batch=2" in campaign.group_command("smoke", groups[1], "out", "b")


def test_the_dry_run_prints_each_group_and_trains_nothing(tmp_path, capsys):
    groups = campaign.plan("smoke", {"ladder/average": 3}, seed_batch=2, root=tmp_path)
    (tmp_path / "plan.json").write_text(json.dumps({"profile": "smoke", "data_dir": "results/smoke/data",
                                                    "groups": groups}))
    campaign.main(["train", "--bundle", str(tmp_path), "--minutes", "1", "--dry-run"])
    out = capsys.readouterr().out
    assert out.startswith("3 runs in 2 processes") and "assumed 10 TFLOP/s" in out
    assert "experiment=ladder/average profile=smoke seed=0 train.seed_batch=2" in out and "seed=2 train.seed_batch=1" in out
    assert not (tmp_path / "out").exists()


def test_cost_prices_the_runs_a_dry_run_lists():
    line = campaign.cost("full", ["results/full/runs/ladder/block/seed11/metrics.json",
                                  "results/full/runs/ladder/block/seed12/metrics.json",
                                  "results/full/measure/winograd/role/block/seed300/metrics.json"], 10.0)
    one_block = campaign.run_flops(campaign.composed_run("full", "ladder/block"))
    assert one_block == pytest.approx(53e12, rel=0.01)  # the 53 TFLOP for a 1-block full run
    assert line.startswith("3 runs, ")


@pytest.mark.parametrize("arg,message", [("--run=ladder/block=0", "expected RUN=N"),
                                         ("--run=ladder/nothing=2", "ladder/nothing")])
def test_a_bad_plan_stops_with_one_line(arg, message, capsys):
    with pytest.raises(SystemExit, match=message):
        campaign.main(["plan", "--profile", "smoke", arg])


def own_code(repo):
    return {**os.environ, "PYTHONPATH": str(repo / "src")}


@pytest.mark.slow
def test_a_campaign_trains_before_its_deadline_and_lands_what_the_pipeline_reads(smoke_run, tmp_path):
    """In the smoke build: ladder/average seeds 1-2 (folded) and winograd/role_average seed 1 planned,
    packed, trained on the CPU, landed: each seed in its folder under its key, and Snakemake, asked for
    those seeds, has nothing to do. A deadline too short for any run lands nothing."""
    def campaign_call(*args):
        result = subprocess.run([sys.executable, "-m", "attnlab.campaign", *args], cwd=smoke_run,
                                env=own_code(smoke_run), capture_output=True, text=True)
        assert result.returncode == 0, result.stderr[-3000:]
        return result.stdout

    plan = ["--profile", "smoke", "--run", "ladder/average=3", "--run", "winograd/role_average=2", "--seed-batch", "2"]
    printed = campaign_call("pack", *plan)
    assert "ladder/average: 2 seeds (1–2)" in printed and "winograd/role_average: 1 seeds (1–1)" in printed
    printed = campaign_call("train", "--minutes", "5", "--processes", "2", "--archive", str(tmp_path / "runs.tar.gz"))
    assert "3 runs finished, 0 cut at the deadline, 0 not started" in printed
    with tarfile.open(tmp_path / "runs.tar.gz") as tar:
        assert not [n for n in tar.getnames() if n.endswith(".pt")]
        assert json.loads(tar.extractfile("campaign.json").read())["torch"]
    campaign_call("land", str(tmp_path / "runs.tar.gz"))
    for run, folder, job, seed, batch in [("ladder/average", "runs/ladder/average", "train/ladder/average", 1, 2),
                                          ("ladder/average", "runs/ladder/average", "train/ladder/average", 2, 2),
                                          ("winograd/role_average", "measure/winograd/role/average",
                                           "winograd_train/role/average", 1, 1)]:
        metrics = json.loads((smoke_run / f"results/smoke/{folder}/seed{seed}/metrics.json").read_text())
        assert metrics["seed"] == seed and metrics["seed_batch"] == batch and not metrics["diverged"]
        (key,) = (smoke_run / f"results/smoke/stamps/{job}/seed{seed}").glob("*.key")
        assert key.stem == metrics["config_hash"]
    targets = ["results/smoke/runs/ladder/average/seed2/metrics.json",
               "results/smoke/measure/winograd/role/average/seed1/metrics.json"]
    dry = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "--config", "profile=smoke",
                          "seeds_per_run={smoke: {ladder/average: 3, winograd/role_average: 2}}", "-n", "--", *targets],
                         cwd=smoke_run, env=own_code(smoke_run), capture_output=True, text=True, check=True)
    assert "Nothing to be done" in dry.stdout + dry.stderr
    assert "0 runs in 0 processes" in campaign_call("plan", *plan)  # landed: nothing left of the plan

    campaign_call("pack", "--profile", "smoke", "--run", "ladder/average=5")
    printed = campaign_call("train", "--minutes", str(21 / 60), "--archive", str(tmp_path / "cut.tar.gz"))
    assert "0 runs finished, 2 cut at the deadline" in printed
    with tarfile.open(tmp_path / "cut.tar.gz") as tar:
        assert tar.getnames() == ["campaign.json"]


def test_help_is_whole_and_names_every_subcommand(capsys):
    with pytest.raises(SystemExit):
        campaign.main(["--help"])
    out = capsys.readouterr().out
    assert "landed here with the runs' keys." in out and "campaign train --minutes 9" in out
    for name in ("plan", "pack", "cost", "train", "land"):
        assert re.search(rf"^    {name} +\S", out, re.M), name  # each subcommand with its line of help


def test_train_before_pack_stops_with_one_line(tmp_path):
    with pytest.raises(SystemExit, match=r"^error: .*plan.json is missing: pack the plan first") as stop:
        campaign.main(["train", "--bundle", str(tmp_path), "--minutes", "1", "--dry-run"])
    assert "\n" not in str(stop.value)


@pytest.mark.parametrize("asked, expected", [("50 seeds per row", 50), ("", None), ("2 seeds per row", None)])
def test_the_plan_names_the_seeds_the_ledger_asks_for(tmp_path, asked, expected):
    """A claim's would_decide column (the ledger's) asks for seeds per row: each trained run the written plan lists
    for that claim is named with the count, unless seeds_per_run trains that many already."""
    ledger = tmp_path / "results/full/claims.csv"
    ledger.parent.mkdir(parents=True)
    ledger.write_text(f"id,would_decide,number\nnorm_warmup.post_warmup,{asked},OPEN\n")
    asks = campaign.ledger_asks("full", root=tmp_path)
    assert asks.get("norm/post_warmup") == expected
    assert not any(run.startswith("measure/") for run in asks)


def test_the_repository_is_the_working_directory_s(tmp_path):
    """As attnlab.config finds it: a clone the command is given in, not the checkout the package came from."""
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs/config.yaml").write_text("{}\n")
    src = os.path.join(os.path.dirname(campaign.__file__), os.pardir)
    found = subprocess.run([sys.executable, "-c", "from attnlab import campaign; print(campaign.ROOT)"], cwd=tmp_path,
                           env={**os.environ, "PYTHONPATH": os.path.abspath(src)}, capture_output=True, text=True)
    assert found.stdout.strip() == str(tmp_path.resolve()), found.stderr


def test_land_takes_a_folder_laid_out_as_a_checkout(tmp_path):
    """`land CLONE`: each finished seed folder of another checkout lands with its key file, its checkpoint
    left behind; a seed under a stale key, one trained from a dirty tree and one that has results here
    are left out, and nothing of theirs is written."""
    clone, repo = tmp_path / "clone", tmp_path / "repo"
    cfg = campaign.composed_run("smoke", "ladder/block")
    keys = [campaign.seed_key(cfg, seed) for seed in range(4)]
    records = [{"config_hash": keys[0], "dirty": False}, {"config_hash": "0123456789abcdef", "dirty": False},
               {"config_hash": keys[2], "dirty": True}, {"config_hash": keys[3], "dirty": False}]
    for seed, metrics in enumerate(records):
        folder = clone / campaign.run_home("smoke", "ladder/block")[0].format(seed=seed)
        folder.mkdir(parents=True)
        (folder / "metrics.json").write_text(json.dumps(metrics))
        (folder / "curve.csv").write_text("step,loss\n0,7.0\n")
        (folder / "checkpoint.pt").write_bytes(b"weights")
    finished(repo, "smoke", "ladder/block", 3, keys[3])
    landed = campaign.land(clone, repo)
    assert landed == ["results/smoke/runs/ladder/block/seed0"]
    seed0 = repo / landed[0]
    assert sorted(p.name for p in seed0.iterdir()) == ["curve.csv", "metrics.json"]
    assert [p.name for p in (repo / "results/smoke/stamps/train/ladder/block/seed0").iterdir()] == [f"{keys[0]}.key"]
    assert not (repo / "results/smoke/runs/ladder/block/seed1").exists()
    assert not (repo / "results/smoke/runs/ladder/block/seed2").exists()
    assert (repo / "results/smoke/runs/ladder/block/seed3/metrics.json").read_text() == "{}"


def test_a_seed_folder_names_its_profile_run_and_seed():
    assert campaign.run_of("results/full/runs/scale/sweep_d1024_divided_lr5e3/seed2") == \
        ("full", "scale/sweep_d1024_divided_lr5e3", 2)
    assert campaign.run_of("results/quick/measure/winograd/role/two_blocks/seed7") == ("quick", "winograd/role_two_blocks", 7)
    assert campaign.run_of("results/full/tables/seed1") is None


def test_land_keys_each_seed_by_its_own_profile(tmp_path):
    """A clone holding the same run's seeds in two profiles: each lands under its own profile's key."""
    clone, repo = tmp_path / "clone", tmp_path / "repo"
    for profile in ("smoke", "quick"):
        key = campaign.seed_key(campaign.composed_run(profile, "ladder/block"), 0)
        folder = clone / campaign.run_home(profile, "ladder/block")[0].format(seed=0)
        folder.mkdir(parents=True)
        (folder / "metrics.json").write_text(json.dumps({"config_hash": key, "dirty": False}))
    assert campaign.land(clone, repo) == ["results/quick/runs/ladder/block/seed0", "results/smoke/runs/ladder/block/seed0"]


def test_land_takes_a_clones_measurements_beside_the_runs_here(tmp_path, monkeypatch):
    """`land CLONE` lands a measurement this checkout lacks with its key file and its log, when the clone measured
    it from a clean tree under its job's current key; one under another key, one from a dirty tree and one
    measured here already are left out, and nothing of theirs is written."""
    from types import SimpleNamespace

    import attnlab.jobs

    clone, repo = tmp_path / "clone", tmp_path / "repo"
    (repo / "configs/profile").mkdir(parents=True)
    (repo / "configs/profile/full.yaml").write_text("{}\n")
    steps = []
    for seed, (key, dirty, here) in enumerate([("k0", False, False), ("k1", False, False), ("k2", True, False),
                                               ("k3", False, True)]):
        out = f"results/full/measure/winograd/role/two_blocks/seed{seed}/interventions.json"
        job = f"measure_winograd_interventions/role/two_blocks/seed{seed}"
        steps.append(SimpleNamespace(job=job, home="results/full", outputs=[out], key=key,
                                     key_file=f"results/full/stamps/{job}/{key}.key"))
        (clone / out).parent.mkdir(parents=True)
        (clone / out).write_text(json.dumps({"measured": {"commit": "c", "dirty": dirty}}))
        (clone / out).with_suffix(".log").write_text("measured\n")
        measured_under = key if seed != 1 else "stale"  # seed 1: the clone measured it under an older key
        (clone / f"results/full/stamps/{job}").mkdir(parents=True)
        (clone / f"results/full/stamps/{job}/{measured_under}.key").write_text(measured_under + "\n")
        if here:
            (repo / out).parent.mkdir(parents=True)
            (repo / out).write_text("{}")
    # a new Winograd split the clone's runs read: it lands too (its text files beside its split.json)
    split = [f"results/full/measure/winograd/category1/{name}" for name in ("split.json", "train.txt", "held_out.txt")]
    steps.append(SimpleNamespace(job="winograd_split/category1", home="results/full", outputs=split, key="k4",
                                 key_file="results/full/stamps/winograd_split/category1/k4.key"))
    (clone / split[0]).parent.mkdir(parents=True)
    for out in split:
        (clone / out).write_text("{}" if out.endswith(".json") else "the dog did not cross the road\n")
    (clone / steps[-1].key_file).parent.mkdir(parents=True)
    (clone / steps[-1].key_file).write_text("k4\n")
    jobs = SimpleNamespace(results="results/full", registry=SimpleNamespace(jobs={(s.home, s.job): s for s in steps}))
    monkeypatch.setattr(attnlab.jobs, "Jobs", lambda config, read_by_key, root: jobs)
    assert campaign.land_measurements(clone, repo) == [steps[0].outputs[0], split[0]]
    assert all((repo / out).read_bytes() == (clone / out).read_bytes() for out in split)
    seed0 = repo / "results/full/measure/winograd/role/two_blocks/seed0"
    assert sorted(p.name for p in seed0.iterdir()) == ["interventions.json", "interventions.log"]
    assert (repo / steps[0].key_file).read_text() == "k0\n"
    assert not (repo / "results/full/measure/winograd/role/two_blocks/seed1").exists()
    assert not (repo / "results/full/measure/winograd/role/two_blocks/seed2").exists()
    assert (repo / steps[3].outputs[0]).read_text() == "{}"
