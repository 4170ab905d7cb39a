"""Config composition: every experiment composes into a valid model; the ladder ends at the default."""

import pytest
from omegaconf import OmegaConf

from attnlab.config import ROOT, ConfigError, compose, config_hash, experiments, model_config, scaled, source_files
from attnlab.model import LanguageModel


@pytest.mark.parametrize("experiment", experiments())
@pytest.mark.parametrize("profile", ["full", "smoke"])
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
    evaluate = names("attnlab.evaluate")
    # evaluate imports runs (read_checkpoint) and train (mean_loss), which import model, data and config
    assert {"attnlab/evaluate.py", "attnlab/runs.py", "attnlab/train.py", "attnlab/model.py", "attnlab/data.py",
            "attnlab/config.py", "attnlab/__init__.py"} <= set(evaluate)
    assert "attnlab/winograd.py" not in evaluate and "attnlab/claims/__init__.py" not in evaluate
    grad_norms = names("attnlab.measure.grad_norms")
    assert {"attnlab/measure/__init__.py", "attnlab/measure/grad_norms.py", "attnlab/model.py"} <= set(grad_norms)
