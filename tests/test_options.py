"""The workflow's options and layout, without Snakemake running: a bad --config value is refused in one line
naming the option and what it allows (workflow/schemas/config.schema.yaml), and a seed's folder, key job and
groups are those the workflow and the campaign both read (attnlab.layout)."""

import pytest
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from attnlab import layout, options


@pytest.mark.parametrize("config, named", [({"seeds": "abc"}, "seeds: 'abc' is not of type 'integer'"),
                                           ({"seed_batch": 0}, "seed_batch: 0 is less than the minimum of 1"),
                                           ({"fast": 1}, "unknown --config option(s) ['fast']")])
def test_a_bad_option_is_one_line_naming_what_is_allowed(config, named):
    with pytest.raises(WorkflowError) as refused:
        validate(config, schema=str(options.SCHEMA))
    line = options.explain(str(refused.value))
    assert "\n" not in line and named in line and "allowed: " in line
    assert ("profile (" in line) == ("fast" in config)  # an unknown option lists every option


def test_the_pipeline_defaults_pass_the_schema():
    import yaml

    from attnlab.config import CONFIG_DIR

    validate(yaml.safe_load((CONFIG_DIR / "pipeline.yaml").read_text()), schema=str(options.SCHEMA))


def test_a_seed_folder_and_its_key_job_follow_the_run_kind():
    assert layout.run_folder("results/full", "ladder/block", 3) == "results/full/runs/ladder/block/seed3"
    assert layout.run_job("ladder/block", 3) == "train/ladder/block/seed3"
    assert layout.run_folder("r", "winograd/role_two_blocks", 0) == "r/measure/winograd/role/two_blocks/seed0"
    assert layout.run_job("winograd/role_two_blocks", 0) == "winograd_train/role/two_blocks/seed0"


def test_seed_groups_are_consecutive_and_at_most_the_batch():
    groups = layout.seed_groups([0, 1, 2, 4, 5, 9], 2)
    assert groups == [[0, 1], [2], [4, 5], [9]]
    assert sorted(s for g in groups for s in g) == [0, 1, 2, 4, 5, 9]
