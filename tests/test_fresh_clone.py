"""A fresh clone is the published reproduction: in a copy of the repository with new file times, no
.snakemake/ and no token cache, Snakemake plans no training and no measurement, only the cheap jobs
that read the results (their outputs are older than their inputs in a clone's path order); once
those are built, nothing. One override plans exactly its run and what reads it; a deleted output
plans its job and everything downstream; reading the workflow changes no file; and every Snakemake
command in the README dry-runs."""

import csv
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab.campaign import GPU_SEED_BATCH
from attnlab.claims.rules import NUMBER_WORDS
from attnlab.config import winograd_versions
from attnlab.families import load_families
from attnlab.tables import BUILDERS as TABLE_BUILDERS

pytestmark = pytest.mark.slow  # Snakemake dry runs in a copy of the repository

REPO = Path(__file__).resolve().parents[1]
PUBLISHED = ["quick", "full"]  # profiles whose results/ and figures/ are committed in full


def copy_of_repository(work: Path) -> Path:
    """Tracked and untracked-but-not-ignored files, copied with new mtimes (as a clone has)."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.split("\n")
    for name in filter(None, files):
        if (REPO / name).is_file():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / name, work / name)
    return work


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A copy as after its first `snakemake`: the cheap jobs a clone plans rewrite the same bytes (checked
    by hand: README, "What reruns a job"), so marking them done (--touch) stands in for the minutes they take."""
    work = copy_of_repository(tmp_path_factory.mktemp("clone"))
    for profile in PUBLISHED:
        FRESH_PLANS[profile] = dry_run(work, "--config", f"profile={profile}")
        result = snakemake(work, "--touch", "--cores", "1", "--config", f"profile={profile}")
        assert result.returncode == 0, result.stderr[-3000:]
    return work


FRESH_PLANS = {}  # profile -> the plan of a fresh copy, before anything ran (the clone fixture's)


def snakemake(clone, *args) -> subprocess.CompletedProcess:
    """Snakemake in the copy, importing the copy's own attnlab (not the installed checkout's)."""
    return subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=clone, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(clone / "src")})


def built_in(out: str, rule: str) -> set[str]:
    """The wildcards of each job of a rule in a dry run's output."""
    return set(re.findall(rf"^(?:local)?rule {rule}:\n(?:    .*\n)*?    wildcards: (.*)$", out, re.M))


def dry_run(clone, *args) -> tuple[dict, str]:
    """{rule: job count} of a dry run, and its output."""
    result = snakemake(clone, "-n", "--cores", "2", *args)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-3000:]
    stats = re.search(r"Job stats:\n.*?\n-+\s+-+\n(.*?)\ntotal", out, re.S)
    jobs = {} if stats is None else {rule: int(n) for rule, n in re.findall(r"^(\S+)\s+(\d+)$", stats.group(1), re.M)}
    return jobs, out


@pytest.mark.parametrize("profile", PUBLISHED)
def test_a_fresh_clone_plans_nothing_that_is_published(clone, profile):
    jobs, out = dry_run(clone, "--config", f"profile={profile}")
    assert jobs == {}, out[-3000:]
    assert "Nothing to be done" in out


CLAIMS = "configs/claims.yaml"
COSTLY = ("train", "winograd_train", "measure_", "key", "corpus", "tokenizer", "tokens", "winograd_split")


@pytest.mark.parametrize("profile", PUBLISHED)
def test_a_fresh_copy_plans_no_training_and_no_measurement(clone, profile):
    """A copy's file times are in path order: only jobs that read the results (tables, figures, the
    ledger, the report) may rerun; every job that trains, measures or prepares data reads by key."""
    jobs, out = FRESH_PLANS[profile]
    assert not {job for job in jobs if job.startswith(COSTLY)}, out[-3000:]


def test_a_copy_plans_with_the_installed_package_of_another_checkout(clone):
    """README: a fresh clone beside a checkout whose .venv it links runs that checkout's installed attnlab; the
    repository is where the command runs (its files make every key), so the plan is the copy's own."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--config", "profile=quick"],
                            cwd=clone, capture_output=True, text=True, env=env)
    assert result.returncode == 0 and "Nothing to be done" in result.stdout + result.stderr, result.stderr[-3000:]


def test_one_override_plans_its_run_and_what_reads_it(clone):
    jobs, out = dry_run(clone, "--config", "profile=quick", "override=ladder/average: train.lr=3e-3")
    variant = "results/quick/variants/ladder-average_train.lr-3e-3"
    # the run, the tables that read it (pipeline_time reads every run's clock), their figures, the sinks: each
    # job under its new key, which rule key writes first
    assert jobs == {"key": 10, "train": 1, "table": 3, "variant_figure": 2, "claims": 1, "variant_claims_plot": 1,
                    "captions": 1, "report": 1, "all": 1}, out[-3000:]
    assert built_in(out, "table") == {f"home={variant}, table={t}" for t in ("average_ladder", "ladder", "pipeline_time")}
    assert built_in(out, "variant_figure") == {"table=average_ladder", "table=ladder"}
    assert "train.lr=3e-3" in out and f"home={variant}, run=ladder/average, seed=0" in out
    assert "train/ladder/average/seed0: variant 'ladder/average: train.lr=3e-3'" in out  # why, in words
    written = re.findall(r"^    output: (.*)$", out, re.M)
    assert written and all(p.startswith(variant) for line in written for p in line.split(", ")), written


def test_a_table_asked_for_alone_retrains_the_runs_whose_key_changed(clone):
    jobs, _ = dry_run(clone, "results/quick/variants/ladder-average_train.lr-3e-3/tables/average_ladder.csv",
                      "--config", "profile=quick", "override=ladder/average: train.lr=3e-3")
    assert jobs == {"key": 2, "train": 1, "table": 1}, jobs  # the run's key and the table's


def test_a_family_is_forced_through_snakemake(clone):
    """The README's way to rerun runs although nothing changed: --forcerun names their files."""
    metrics = sorted(str(p.relative_to(clone)) for p in clone.glob("results/quick/runs/norm/*/seed*/metrics.json"))
    one_per_config = len([p for p in (clone / "configs/experiment/norm").glob("*.yaml") if not p.name.startswith("_")])  # quick trains seed 0 of each
    jobs, out = dry_run(clone, "--forcerun", *metrics, "--config", "profile=quick")
    tables = built_in(out, "table")
    assert jobs["train"] == len(metrics) == one_per_config and tables, out[-3000:]
    assert "home=results/quick, table=norm_warmup" in tables and "home=results/quick, table=ladder" not in tables


def test_a_deleted_run_plans_the_run_and_everything_downstream(clone):
    metrics = clone / "results/quick/runs/ladder/block/seed0/metrics.json"
    kept, times = metrics.read_bytes(), metrics.stat()
    metrics.unlink()
    try:
        jobs, out = dry_run(clone, "--config", "profile=quick")
    finally:
        metrics.write_bytes(kept)
        os.utime(metrics, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert jobs["train"] == 1 and "wildcards: home=results/quick, run=ladder/block, seed=0" in out
    assert {"claims", "report"} <= set(jobs) and "table=ladder" in built_in(out, "figure"), jobs
    assert {"home=results/quick, table=ladder", "home=results/quick, table=depth_overfit"} <= built_in(out, "table")


def whole_lines(n: int):
    """A cut at a line boundary: the first n lines (a negative n drops lines from the end)."""
    return lambda text: b"".join(text.splitlines(keepends=True)[:n])


@pytest.mark.parametrize("name, cut", [("metrics.json", lambda text: text[:97]), ("curve.csv", lambda text: text[:500]),
                                       ("curve.csv", whole_lines(100)), ("curve.csv", whole_lines(-1)),
                                       ("evals.csv", lambda text: text[:-3])],
                         ids=["metrics_mid_json", "curve_mid_line", "curve_whole_lines", "curve_last_line_gone",
                              "evals_mid_line"])
def test_a_damaged_published_file_stops_the_plan_naming_it_and_nothing_is_deleted(clone, name, cut):
    damaged = clone / "results/quick/runs/ladder/block/seed0" / name
    kept, times = damaged.read_bytes(), damaged.stat()
    damaged.write_bytes(cut(kept))
    before = snapshot(clone / "results/quick")
    try:
        result = snakemake(clone, "--cores", "1", "--config", "profile=quick")
        after = snapshot(clone / "results/quick")
    finally:  # bytes and time as they were: a newer run file would make the later tests plan its tables
        damaged.write_bytes(kept)
        os.utime(damaged, ns=(times.st_atime_ns, times.st_mtime_ns))
    relative = damaged.relative_to(clone)
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("error:")]
    assert result.returncode != 0 and len(lines) == 1, result.stderr[-2000:]
    assert f"{relative} is damaged" in lines[0] and f"git checkout -- {relative}" in lines[0]
    assert "Traceback" not in result.stderr and after == before


def test_a_forced_table_plans_its_figure_ledger_captions_and_report(clone):
    jobs, out = dry_run(clone, "-R", "results/quick/tables/ladder.csv", "--config", "profile=quick")
    assert jobs == {"table": 1, "figure": 1, "claims": 1, "claims_plot": 1, "captions": 1, "report": 1, "all": 1}, jobs
    assert built_in(out, "figure") == {"table=ladder"}


def test_a_forced_stage_read_by_key_retrains_what_reads_it(clone):
    """Runs read the Winograd split by key (its time never retrains them), yet -R on the split does."""
    runs = len(list(clone.glob("results/quick/measure/winograd/role/*/seed*/metrics.json")))
    jobs, out = dry_run(clone, "-R", "winograd_split", "--config", "profile=quick")
    assert jobs["winograd_split"] == len(winograd_versions()) and jobs["winograd_train"] >= runs > 0, out[-3000:]
    assert "train" not in jobs


def test_the_dag_shows_data_runs_tables_figures_ledger_and_report(clone):
    result = snakemake(clone, "--rulegraph", "--config", "profile=quick")
    assert result.returncode == 0, result.stderr[-2000:]
    names = dict(re.findall(r'^\s*(\d+)\[label = "([^"]+)"', result.stdout, re.M))
    edges = {(names[a], names[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", result.stdout, re.M)}
    for edge in [("tokens", "train"), ("train", "table"), ("table", "figure"), ("table", "claims"),
                 ("claims", "report"), ("figure", "report"), ("key", "train"), ("key", "table")]:
        assert edge in edges, f"{edge} missing from the rule graph"


def snapshot(folder: Path) -> dict:
    return {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.rglob("*") if p.is_file()
            and ".snakemake" not in p.parts}


@pytest.mark.parametrize("args", [["-n"], ["--lint"], ["--dag"]], ids=" ".join)
def test_reading_the_workflow_changes_no_file(clone, args):
    before = snapshot(clone)
    snakemake(clone, *args, "--cores", "1", "--config", "profile=quick")
    assert snapshot(clone) == before


LINT_KINDS = {"Absolute path": "absolute path", "Mixed rules and functions": "mixed rules and functions"}


def test_every_lint_warning_left_has_its_reason_beside_it(clone):
    """snakemake --lint: the file gives each warning's reason in a `--lint '<kind>'` comment on the
    flagged line or the one above it; a warning about the whole file, in its header."""
    result = snakemake(clone, "--lint", "--cores", "1", "--config", "profile=quick")
    out = result.stdout + result.stderr
    parts = re.split(r"^Lints for (snakefile|rule) (.+):$", out, flags=re.M)
    assert result.returncode == 0 or len(parts) > 1, out[-2000:]  # it ran: clean, or lints listed
    unexplained = []
    for kind, name, body in zip(parts[1::3], parts[2::3], parts[3::3]):
        lines = Path(name).read_text().splitlines() if kind == "snakefile" else []
        header = "\n".join(itertools.takewhile(lambda line: line.startswith("#"), lines))
        for title, number in re.findall(r"^    \* (.+?)(?: in line (\d+))?:$", body, flags=re.M):
            reason = f"--lint '{next((v for k, v in LINT_KINDS.items() if title.startswith(k)), title)}'"
            beside = "\n".join(lines[max(int(number) - 2, 0):int(number)]) if number else header
            if reason not in beside:
                unexplained.append(f"{name}: {title}")
    assert not unexplained, unexplained


@pytest.mark.parametrize("option, message", [
    ("sedes=3", r"unknown --config option\(s\) \['sedes'\]; allowed: profile"),
    ("override=ladder/nope: train.lr=1", r"override: 'ladder/nope' names no run"),
    ("override=train.lr=1", r"expected '<scope>: <hydra override> ...'"),
    ("override=ladder/average: train.lr=-1", r"train.lr=-1 must be a number > 0"),
    ("override=ladder/average: trian.lr=1", r"unknown option 'trian.lr'"),
    ("override=ladder/average: seed=7", r"a run's seeds are not overridden; choose them with seeds=N"),
])
def test_bad_options_are_refused_naming_what_is_allowed(clone, option, message):
    result = snakemake(clone, "-n", "--cores", "1", "--config", "profile=quick", option)
    assert result.returncode != 0 and re.search(message, result.stdout + result.stderr), result.stderr[-2000:]


def test_a_winograd_run_given_more_seeds_trains_only_the_new_ones(clone):
    """seeds_per_run names Winograd runs as winograd/<version>_<model>: seeds past the profile's
    winograd_seeds train beside the published ones and the tables that read the run are rebuilt."""
    jobs, out = dry_run(clone, "--config", "profile=quick", "seeds_per_run={quick: {winograd/role_average: 7}}")
    assert jobs["winograd_train"] == 2, out[-3000:]  # quick's winograd_seeds is 5
    for seed in (5, 6):
        assert f"home=results/quick, version=role, model=average, seed={seed}" in out
    assert "home=results/quick, table=winograd_role" in built_in(out, "table") and {"claims", "report"} <= set(jobs)
    result = snakemake(clone, "-n", "--cores", "1", "--config", "profile=quick",
                       "seeds_per_run={quick: {winograd/role_nope: 7}}")
    assert result.returncode != 0 and "winograd/role_average" in result.stderr + result.stdout


def test_a_hypothesis_run_given_more_seeds_trains_them_for_the_contradictions_table(clone):
    """seeds_per_run names a contradiction's hypothesis run too: its seeds past the hypothesis's own
    count train, and only the contradictions table (not the published family table) reads them."""
    jobs, out = dry_run(clone, "--config", "profile=quick", "seeds_per_run={quick: {winograd/category_block_lr3e3: 4}}")
    assert jobs["winograd_train"] == 1, out[-3000:]  # category_lr3e3 trains 3 seeds
    assert "home=results/quick, version=category, model=block_lr3e3, seed=3" in out
    tables = built_in(out, "table")
    assert "home=results/quick, table=contradictions" in tables and "home=results/quick, table=winograd_category" not in tables


def test_a_row_is_one_config_and_one_declared_line(clone):
    """The README's recipe: the new run trains alone, and the ladder family's tables, figures and
    the ledger are rebuilt; removing the row again plans nothing."""
    config = clone / "configs/experiment/ladder/eight_heads.yaml"
    family = clone / "src/attnlab/families/ladder.py"
    declared = family.read_text()
    config.write_text("# @package _global_\ndefaults:\n  - /experiment/ladder/block@_here_\nmodel:\n  n_heads: 8\n")
    family.write_text(declared.replace('    Row("block", "ladder/block", "+ LayerNorm (pre-norm) = one block"),\n',
                                       '    Row("block", "ladder/block", "+ LayerNorm (pre-norm) = one block"),\n'
                                       '    Row("eight_heads", "ladder/eight_heads", "eight heads of 16"),\n', 1))
    try:
        jobs, out = dry_run(clone, "--config", "profile=quick")
    finally:
        family.write_text(declared)
        config.unlink()
    assert jobs["train"] == 1 and "wildcards: home=results/quick, run=ladder/eight_heads, seed=0" in out
    assert "table=ladder" in built_in(out, "figure") and {"claims", "report"} <= set(jobs)
    load_families()
    ladder_family = {t for t, builder in TABLE_BUILDERS.items() if builder.__module__ == "attnlab.families.ladder"}
    rebuilt = {w.rsplit("=", 1)[1] for kind in ("table", "figure") for w in built_in(out, kind)}
    assert rebuilt <= ladder_family | {"pipeline_time"}, \
        "only the ladder family's tables and figures are rebuilt (and the cost table, which reads every run)"
    assert dry_run(clone, "--config", "profile=quick")[0] == {}


def test_a_failing_job_says_why_on_the_console(clone, tmp_path):
    """The job's one-line error reaches the console (its whole output stays in its log file)."""
    result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "results/smoke/data/corpus.txt",
                             "--config", "profile=smoke"], cwd=clone, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(clone / "src"), "ATTNLAB_CORPUS": str(tmp_path / "no.txt")})
    assert result.returncode != 0
    assert re.search(r"failed: error: .*no\.txt does not exist", result.stdout + result.stderr)


def readme_snakemake_commands() -> list[list[str]]:
    """Every `snakemake` command line in the bash blocks of README.md and workflow/README.md, continuation lines
    joined, each once."""
    commands = []
    text = (REPO / "README.md").read_text() + (REPO / "workflow/README.md").read_text()
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0].endswith("snakemake") and words[1:] not in commands:
                commands.append(words[1:])
    return commands


def test_the_readme_has_snakemake_commands():
    assert len(readme_snakemake_commands()) >= 5


@pytest.mark.parametrize("args", readme_snakemake_commands(), ids=" ".join)
def test_every_readme_snakemake_command_dry_runs(clone, args):
    if "--executor" in args:  # the SLURM command needs its plugin and a cluster: .ci/slurm.sh runs it
        args = [a for a in args if not a.startswith("slurm_")]
        pytest.skip("needs snakemake-executor-plugin-slurm (.ci/slurm.sh)")
    if "--report" in args:  # a report is built, not planned: ask Snakemake to build the DAG instead
        args = args[:args.index("--report")] + args[args.index("--report") + 2:]
    dry_run(clone, *args)


@pytest.mark.parametrize("target, message", [
    ("results/quick/tables/average_ladders.csv", r"no table 'average_ladders' .*; tables: attention_equivalence, "),
    ("table_average_ladders", r"no rule 'table_average_ladders': a table is asked for by its path, results/quick/"
                              r"tables/<id>.csv; tables: attention_equivalence, "),
    ("results/full/tables/ladder.csv", r"belongs to profile full; add --config profile=full"),
])
def test_a_target_no_rule_makes_names_what_there_is(clone, target, message):
    result = snakemake(clone, "-n", "--cores", "1", target, "--config", "profile=quick")
    assert result.returncode != 0 and re.search(message, result.stdout + result.stderr), result.stderr[-2000:]


def test_a_changed_config_says_which_keys_changed(clone):
    """A published run whose config changed: the plan says which keys, before Snakemake's own reasons.
    Put back, the keys composed before the edit are read again: no new composed.json (composing every
    key afresh takes minutes)."""
    config, composed = clone / "configs/experiment/ladder/block.yaml", clone / ".snakemake/attnlab/composed.json"
    kept = config.read_text()
    config.write_text(kept + "\ntrain:\n  lr: 0.002\n")
    try:
        jobs, out = dry_run(clone, "--config", "profile=quick")
    finally:
        config.write_text(kept)
    assert jobs["train"] == 1
    assert re.search(r"train/ladder/block/seed0: config changed: train.lr 0.001 -> 0.002", out), out[:3000]
    states, written = json.loads(composed.read_text()), composed.stat().st_mtime_ns
    assert len(states) >= 2
    jobs, _ = dry_run(clone, "--config", "profile=quick")
    assert composed.stat().st_mtime_ns == written and "train" not in jobs



def test_a_full_profile_ablation_shows_its_cost_and_waits_for_confirmation(clone):
    """make ablate's first step (attnlab.price): what the call trains and about how long, and for the
    full profile a stop until CONFIRM=yes."""
    args = ["--", "--cores", "1", "--config", "profile=full", "override=ladder/average: train.lr=3e-3"]
    priced = subprocess.run([sys.executable, "-m", "attnlab.price", *args], cwd=clone, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(clone / "src")})
    runs = len(list(clone.glob("results/full/runs/ladder/average/seed*/metrics.json")))
    assert priced.returncode != 0 and re.search(rf"trains {runs} runs \({runs} ladder\): about [\d.]+ CPU-(hours|minutes)", priced.stdout)
    assert priced.stderr.strip().startswith("error: this trains full-profile runs") and "CONFIRM=yes" in priced.stderr


@pytest.mark.parametrize("args, message", [
    (["RUN=ladder/average", "OVERRIDE=train.lr=3e-3", "train.steps=500"],
     "train.steps=500 reached make as a variable of its own: put every override in one quoted OVERRIDE="),
    (["RUN=ladder/average"], "usage: make ablate RUN=<run or family> OVERRIDE="),
])
def test_make_ablate_refuses_what_it_would_drop(args, message):
    result = subprocess.run(["make", "-n", "ablate", *args], cwd=REPO, capture_output=True, text=True)
    assert result.returncode != 0 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1


TOY_FAMILY = '''"""A toy table: one declared row, read from the published runs."""
import pandas as pd

from attnlab.families import Row, runs_of, trained_rows
from attnlab.tables import run_columns, table

ROWS = (Row("block", "ladder/block", "one block"),)


@table("toy", runs=runs_of(ROWS))
def toy(inputs) -> pd.DataFrame:
    return pd.DataFrame([{"model": row.label, **run_columns(runs)} for row, _, runs in trained_rows(ROWS, inputs)])
'''

TOY_CLAIM = """
- id: toy.block_learns
  name: Held-out perplexity of the toy block
  table: toy
  statement: One block ends below the held-out perplexity of a uniform guess over the vocabulary.
  chapter: 4096
  value: {column: held_out_ppl, where: {model: one block}}
  rule: {kind: below, than: 4096}
"""


def test_a_new_table_is_one_module_one_caption_and_its_claims(clone):
    """README "Add a table": its family module (rows, builder), its caption and its claim in configs/claims.yaml,
    nothing else; the workflow finds the table and the ledger judges its claim, and without the caption the
    workflow says so in one line."""
    module, caption, claims = clone / "src/attnlab/families/toy.py", clone / "workflow/report/toy.rst", clone / CLAIMS
    module.write_text(TOY_FAMILY)
    published_claims = claims.read_text()
    claims.write_text(published_claims + TOY_CLAIM)
    try:
        missing = snakemake(clone, "-n", "--cores", "1", "--config", "profile=quick")
        caption.write_text("One block and its held-out perplexity.\n")
        jobs, out = dry_run(clone, "--config", "profile=quick")
        built = snakemake(clone, "--cores", "1", "results/quick/tables/toy.csv", "--config", "profile=quick")
        table = (clone / "results/quick/tables/toy.csv").read_text()
        judged = subprocess.run([sys.executable, "-m", "attnlab.claims", "check", "--profile", "quick", "--csv",
                                 str(clone / "toy_claims.csv"), "--md", str(clone / "toy_claims.md"),
                                 "results/quick/tables/toy.csv"], cwd=clone, capture_output=True, text=True,
                                env={**os.environ, "PYTHONPATH": str(clone / "src")})
        ledger = {row["id"]: row for row in csv.DictReader((clone / "toy_claims.csv").open())}
        # its claim can fail and can match with no case written for it (derived from the claim)
        can_fail = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                   "tests/test_claims_can_fail.py", "-k", "toy or every_claim_has_a_case"],
                                  cwd=clone, capture_output=True, text=True,
                                  env={**os.environ, "PYTHONPATH": str(clone / "src")})
    finally:
        claims.write_text(published_claims)
        for path in (module, caption, *clone.glob("toy_claims.*"), *clone.glob("results/quick/tables/toy.*"),
                     *clone.glob("results/quick/stamps/table/toy/*"), *clone.glob("results/quick/logs/table_toy.log")):
            path.unlink(missing_ok=True)
    assert missing.returncode != 0 and "error: table 'toy' has no caption: write workflow/report/toy.rst" in missing.stderr
    assert "home=results/quick, table=toy" in built_in(out, "table") and "claims" in jobs, jobs
    assert not {j for j in jobs if j.startswith(COSTLY) and j != "key"}, jobs
    assert built.returncode == 0 and table.startswith("model,params,") and "one block" in table
    assert judged.returncode == 0, judged.stderr[-2000:]
    # read and judged: a table, row or column it cannot find reads NOT TESTED, naming what it lacks
    assert ledger["toy.block_learns"]["number"] in NUMBER_WORDS, ledger["toy.block_learns"]
    assert not re.search(r"no (row|column|table)", ledger["toy.block_learns"]["why"]), ledger["toy.block_learns"]
    assert can_fail.returncode == 0 and "3 passed" in can_fail.stdout, can_fail.stdout[-2000:]


def test_planning_imports_no_torch(clone):
    """A warm dry run (its configs composed before) reads the table registry and every key without
    torch: what a plan costs is Snakemake's own work, not importing the trainer."""
    dry_run(clone, "--config", "profile=quick")  # composes what the fixture's --touch left to compose
    probe = ("import runpy, sys\nsys.argv = ['snakemake', '-n', '--cores', '1', '--config', 'profile=quick']\n"
             "try:\n    runpy.run_module('snakemake', run_name='__main__')\nexcept SystemExit:\n    pass\n"
             "print('torch imported:', 'torch' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", probe], cwd=clone, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(clone / "src")})
    assert "torch imported: False" in result.stdout, result.stdout[-2000:] + result.stderr[-2000:]


def make_help_targets() -> list[str]:
    # --no-print-directory: under `make test` this make is a sub-make, which would print "make[1]: Entering ..."
    result = subprocess.run(["make", "--no-print-directory", "help"], cwd=REPO, capture_output=True, text=True, check=True)
    return [line.split()[0] for line in result.stdout.splitlines()]


def test_make_help_lists_every_described_target():
    described = re.findall(r"^([a-z-]+):.*## ", (REPO / "Makefile").read_text(), re.M)
    assert make_help_targets() == described and {"reproduce", "table", "ablate", "help"} <= set(described)


def makefile_snakemake_commands(clone, *make_args) -> list[list[str]]:
    """The Snakemake calls `make <make_args>` would make in the copy (make -n), each as its arguments, the
    console filter after them dropped."""
    result = subprocess.run(["make", "-n", *make_args], cwd=clone, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    calls = []
    for line in result.stdout.splitlines():
        words = shlex.split(line.split(" 2>&1")[0].split("set -o pipefail; ")[-1])
        if words and words[0].endswith("/snakemake"):
            calls.append(words[1:])
    return calls


@pytest.mark.parametrize("make_args", [
    ["reproduce"], ["quick"], ["smoke"], ["table", "ID=average_ladder", "PROFILE=quick"], ["table", "ID=ladder"],
    ["ablate", "RUN=ladder/average", "OVERRIDE=train.lr=3e-3"],
], ids=" ".join)
def test_every_makefile_command_dry_runs(clone, make_args):
    """Each README and `make help` command as written, its Snakemake calls dry-run (what would train does not)."""
    calls = makefile_snakemake_commands(clone, *make_args)
    assert calls, make_args
    for args in calls:
        if "--report" in args:  # a report is built, not planned: plan the DAG it reads instead
            args = args[:args.index("--report")] + args[args.index("--report") + 2:]
        dry_run(clone, *args)


def trained_seeds(jobs: dict) -> int:
    """Seeds a plan trains: one per train or winograd_train job, each seed of a group (rule *_seeds_<run>_<first>_<last>)."""
    grouped = sum(int(last) - int(first) + 1 for rule in jobs
                  for first, last in re.findall(r"_seeds_.*_(\d+)_(\d+)$", rule))
    return jobs.get("train", 0) + jobs.get("winograd_train", 0) + grouped


def test_the_gpu_path_trains_only_the_seeds_the_plain_plan_trains(clone):
    """make reproduce-gpu's plan (seed_batch=GPU_SEED_BATCH) folds the seeds a plain plan would train, and no other:
    a run no table reads (a contradiction's hypothesis not run) has no group. Everything published: nothing."""
    plain, _ = dry_run(clone, "--config", "profile=full")
    batched, out = dry_run(clone, "--resources", "gpu_slots=15", "--config", "profile=full",
                           f"seed_batch={GPU_SEED_BATCH}")
    assert trained_seeds(batched) == trained_seeds(plain), out[-3000:]
    assert not [rule for rule in batched if "alibi_steps" in rule]
    made = subprocess.run(["make", "-n", "reproduce-gpu"], cwd=REPO, capture_output=True, text=True, check=True)
    assert f"seed_batch={GPU_SEED_BATCH} " in made.stdout  # the count is the campaign's, declared once

