"""Config composition: every experiment composes into a valid model; the ladder ends at the default."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from omegaconf import OmegaConf

from attnlab.config import (ROOT, ConfigError, check_train, compose, config_hash, experiments, model_config, scaled,
                            source_files)
from attnlab.model import LanguageModel
from attnlab.winograd import compose_run


@pytest.mark.parametrize("experiment", experiments())
@pytest.mark.parametrize("profile", ["full", pytest.param("smoke", marks=pytest.mark.slow)])  # the fast tier: one
def test_every_experiment_composes_into_a_valid_model(experiment, profile):
    cfg = compose([f"experiment={experiment}", f"profile={profile}"])
    LanguageModel(model_config(cfg))


def test_the_top_of_the_ladder_is_the_default_model():
    default, block = compose([]), compose(["experiment=ladder/block"])
    assert OmegaConf.to_container(default.model) == OmegaConf.to_container(block.model)
    assert config_hash(default) == config_hash(block)


def test_hash_changes_with_settings_but_not_with_threads():
    base = config_hash(compose([]))
    assert config_hash(compose(["train.lr=0.002"])) != base
    assert config_hash(compose(["seed=1"])) != base
    assert config_hash(compose(["train.threads=2"])) == base


def test_profile_budget_scales_step_counts():
    assert scaled(compose(["profile=full"]), 3000) == 3000
    assert scaled(compose(["profile=quick"]), 3000) == 300
    smoke = compose(["profile=smoke"])
    assert scaled(smoke, 3000) == 6 and scaled(smoke, 200) == smoke.profile.min_steps and scaled(smoke, 0) == 0


@pytest.mark.parametrize("overrides, message", [
    (["experiment=ladder/nope"], "unknown experiment 'ladder/nope'; allowed: .*'ladder/average'"),
    (["profile=huge"], "unknown profile 'huge'"),
    (["model.heads=4"], "unknown option 'model.heads'"),
])
def test_bad_overrides_raise_config_errors(overrides, message):
    with pytest.raises(ConfigError, match=message):
        compose(overrides)


def test_source_files_follow_imports_transitively():
    """A rule's code hash covers every attnlab file its module runs, found from the imports."""
    names = lambda module: sorted(str(p.relative_to(ROOT / "src")) for p in source_files(module))
    eval_windows = names("attnlab.eval_windows")
    # eval_windows imports runs (read_checkpoint) and train (mean_loss), which import model, data and config
    assert {"attnlab/eval_windows.py", "attnlab/runs.py", "attnlab/train.py", "attnlab/model.py", "attnlab/data.py",
            "attnlab/config.py", "attnlab/__init__.py"} <= set(eval_windows)
    assert "attnlab/winograd.py" not in eval_windows and "attnlab/claims/__init__.py" not in eval_windows
    grad_norms = names("attnlab.measure.grad_norms")
    assert {"attnlab/measure/__init__.py", "attnlab/measure/grad_norms.py", "attnlab/model.py"} <= set(grad_norms)


def test_precision_enters_the_hash_only_when_not_float32():
    """float32 is what every published run trained under: its hash is that of the config without
    train.precision, so adding the setting kept every published hash."""
    default = compose([])
    without = OmegaConf.to_container(default)
    del without["train"]["precision"]
    assert config_hash(default) == config_hash(OmegaConf.create(without))
    assert config_hash(compose(["train.precision=bf16"])) != config_hash(default)
    with pytest.raises(ConfigError, match=r"train.precision='fp16' is not one of \['float32', 'bf16'\]"):
        check_train(compose(["train.precision=fp16"]))


@pytest.mark.slow  # composes every published run's config: ~20 s
def test_every_published_run_keeps_its_hash():
    """Each run's config composed once (Hydra takes a good part of a second), each seed's hash from it with
    its seed set: the seed is a plain value of the config, as the check on one run's last seed shows."""
    runs = {}  # (profile, how the run composes) -> [(metrics file, its metrics)]
    for path in sorted(ROOT.glob("results/*/runs/**/seed*/metrics.json")):
        metrics, profile = json.loads(path.read_text()), path.parts[len(ROOT.parts) + 1]
        run = str(path.parent.parent.relative_to(ROOT / "results" / profile / "runs"))
        overrides = metrics.get("overrides", [])  # the first published runs record none: they had none
        runs.setdefault((profile, f"experiment={run}", *overrides), []).append((path, metrics))
    for path in sorted(ROOT.glob("results/*/measure/winograd/*/*/seed*/metrics.json")):
        profile, version, model = path.parts[len(ROOT.parts) + 1], path.parts[-4], path.parts[-3]
        runs.setdefault((profile, f"winograd={version}_{model}"), []).append((path, json.loads(path.read_text())))

    def composed(key: tuple, seed: int):
        profile, run, *overrides = key
        if run.startswith("winograd="):
            return compose_run(run.removeprefix("winograd="), [f"profile={profile}", f"seed={seed}"])
        return compose([run, f"profile={profile}", f"seed={seed}", *overrides])

    checked, moved = 0, []
    for key, seeds in runs.items():
        cfg = composed(key, seeds[0][1]["seed"])
        for path, metrics in seeds:
            cfg.seed = metrics["seed"]
            checked += 1
            moved += [str(path)] if config_hash(cfg) != metrics["config_hash"] else []
    assert checked > 0 and moved == []
    # composed afresh at its own seed, the last seed of the run with the most seeds has the hash set above
    key, seeds = max(runs.items(), key=lambda item: len(item[1]))
    path, metrics = seeds[-1]
    assert len(seeds) > 1 and config_hash(composed(key, metrics["seed"])) == metrics["config_hash"], path


@pytest.mark.parametrize("override, message", [
    ("profile.measure.throughput.threads=[]", "threads=.* must be whole numbers >= 1"),
    ("profile.measure.throughput.experiments=[ladder/nope]", "must name experiments; allowed: .*'ladder/block'"),
    ("profile.measure.throughput.repeats=0", "repeats=0 must be a whole number >= 1"),
    ("profile.measure.throughput.device=tpu", "device='tpu' is not one of"),
    ("profile.measure.runs_per_hour.seed_batches=[1,0]", "seed_batches=.* must be whole numbers >= 1"),
    ("profile.measure.runs_per_hour.compile=[maybe]", "compile=.* must be true and/or false"),
    ("profile.measure.runs_per_hour.precisions=[float16]", r"precisions=\['float16'\] must be among"),
    ("profile.measure.runs_per_hour.threads=0", "threads=0 must be a whole number >= 1"),
])
def test_bad_throughput_settings_name_the_value(override, message):
    with pytest.raises(ConfigError, match=message):
        compose(["profile=smoke", override])


def test_every_row_given_more_seeds_is_in_the_workflow_readmes_seeds_table():
    """configs/pipeline.yaml's seeds_per_run (full) and workflow/README.md's "Seeds per row" table name the same
    runs with the same counts: the table is where each count's reason lives."""
    counts = OmegaConf.load(ROOT / "configs/pipeline.yaml").seeds_per_run.full
    readme = (ROOT / "workflow/README.md").read_text()
    listed = {name: int(seeds) for names, seeds in re.findall(r"^\| ((?:`[^`]+/[^`]+`(?:, )?)+) \| (\d+) \|", readme, re.M)
              for name in re.findall(r"`([^`]+)`", names)}
    assert listed == dict(counts)


def root_seen_from(folder, package_src=ROOT / "src") -> subprocess.CompletedProcess:
    """What attnlab.config takes as the repository when a command starts in `folder`, the package
    imported from `package_src` (by default this checkout, as a virtual environment built here)."""
    return subprocess.run([sys.executable, "-c", "from attnlab.config import ROOT; print(ROOT)"], cwd=folder,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(package_src)})


def test_the_repository_is_where_the_command_runs_not_where_the_package_is(tmp_path):
    other = tmp_path / "other_clone"
    shutil.copytree(ROOT / "configs", other / "configs")
    (other / "results").mkdir()
    found = root_seen_from(other / "results")  # a subfolder of another checkout
    assert found.stdout.strip() == str(other) and f"configs and results from {other}" in found.stderr
    scratch = tmp_path / "scratch"  # in no checkout: the package's own (the tests' scratch runs)
    scratch.mkdir()
    assert root_seen_from(scratch).stdout.strip() == str(ROOT)
    # a package with no checkout around it (copied out, as an installed wheel) and no checkout here
    shutil.copytree(ROOT / "src" / "attnlab", tmp_path / "bare" / "src" / "attnlab")
    outside = root_seen_from(scratch, tmp_path / "bare" / "src")
    assert outside.returncode != 0 and outside.stderr.strip().startswith(f"error: {scratch} is in no attnlab repository")


def test_a_dirty_tree_records_which_files_differed_and_a_hash_of_the_change(tmp_path, monkeypatch):
    import attnlab.config as config_module

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)
    (tmp_path / "src").mkdir()
    (tmp_path / "configs").mkdir()
    (tmp_path / "src" / "model.py").write_text("width = 1\n")
    (tmp_path / "notes.txt").write_text("not code\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "one")
    monkeypatch.setattr(config_module, "ROOT", tmp_path)
    monkeypatch.delenv("ATTNLAB_COMMIT", raising=False)
    clean = config_module.git_commit()
    assert clean["dirty"] is False and len(clean["commit"]) == 40 and "changed" not in clean
    (tmp_path / "notes.txt").write_text("edited\n")  # outside src/ and configs/: not the run's code
    assert config_module.git_commit() == clean
    (tmp_path / "src" / "model.py").write_text("width = 2\n")
    (tmp_path / "configs" / "new.yaml").write_text("lr: 1\n")
    dirty = config_module.git_commit()
    assert dirty["commit"] == clean["commit"] and dirty["dirty"] is True
    assert dirty["changed"] == ["configs/new.yaml", "src/model.py"] and len(dirty["diff_sha256"]) == 64
    assert config_module.git_commit() == dirty  # the same change, the same hash
    (tmp_path / "configs" / "new.yaml").write_text("lr: 2\n")  # an untracked file's bytes count too
    assert config_module.git_commit()["diff_sha256"] != dirty["diff_sha256"]
