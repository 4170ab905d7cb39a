# The Winograd probe (TABLES.md: winograd_category, winograd_role, winograd_attention,
# winograd_adjectives): its own sentences, split once per version, and short dedicated training
# runs scored at one position. Outputs under results/<profile>/measure/winograd/<version>/.
import yaml

from attnlab.winograd import language_hash, run_config

WINOGRAD = f"{RESULTS}/measure/winograd"
# The held-out sets are small, so one seed is noisy: a per-profile count, or the pipeline's if larger.
WINOGRAD_SEEDS = list(range(max(len(SEEDS), yaml.safe_load(open(CONFIG_DIR / "winograd/_seeds.yaml"))[PROFILE])))
WINOGRAD_CODE = module_code("attnlab.winograd")


@functools.cache
def winograd_hash(run: str, seed: int) -> str:
    return config_hash(run_config(run, [f"profile={PROFILE}", f"seed={seed}"]))


def winograd_runs(version: str, model: str, name: str = "metrics.json") -> list[str]:
    return [f"{WINOGRAD}/{version}/{model}/seed{seed}/{name}" for seed in WINOGRAD_SEEDS]


rule winograd_split:
    output:
        split=f"{WINOGRAD}/{{version}}/split.json",
        train=f"{WINOGRAD}/{{version}}/train.txt",
        held_out=f"{WINOGRAD}/{{version}}/held_out.txt",
    wildcard_constraints: version="category|role"
    params:
        language_hash=lambda w: language_hash(w.version),
        code=code_hash("src/attnlab/winograd.py"),
        out=lambda w: f"{WINOGRAD}/{w.version}",
    resources: mem_mb=1000, runtime=5
    shell: "{PYTHON} -m attnlab.winograd split {wildcards.version} --out {params.out}"


rule winograd_train:
    input:
        split=f"{WINOGRAD}/{{version}}/split.json",
    output:
        metrics=f"{WINOGRAD}/{{version}}/{{model}}/seed{{seed}}/metrics.json",
        probe=f"{WINOGRAD}/{{version}}/{{model}}/seed{{seed}}/probe.json",
        answers=f"{WINOGRAD}/{{version}}/{{model}}/seed{{seed}}/answers.csv",
    wildcard_constraints: version="category|role", model=r"[a-z0-9_]+", seed=r"\d+"
    params:
        config_hash=lambda w: winograd_hash(f"{w.version}_{w.model}", int(w.seed)),
        code=WINOGRAD_CODE,
        out=lambda w: f"{WINOGRAD}/{w.version}/{w.model}/seed{w.seed}",
    threads: config.get("train_threads", 1)
    resources: mem_mb=2000, runtime=60, gpu=0
    log: f"{WINOGRAD}/{{version}}/{{model}}/seed{{seed}}/train.log"
    shell:
        "{PYTHON} -m attnlab.winograd train {wildcards.version}_{wildcards.model} --split {input.split}"
        " --out {params.out} profile={PROFILE} seed={wildcards.seed} train.threads={threads} > {log} 2>&1"


add_table("winograd_category", inputs={m: winograd_runs("category", m) for m in ("average", "block")}, figure=False)
add_table("winograd_role", inputs={m: winograd_runs("role", m) for m in ("average", "block", "two_blocks")},
          figure=False)
add_table("winograd_attention", inputs={"probe": winograd_runs("role", "two_blocks", "probe.json")})
add_table("winograd_adjectives", inputs={"probe": winograd_runs("role", "two_blocks", "probe.json")})
