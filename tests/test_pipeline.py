"""The smoke DAG end to end, in a copy of the repository: every registered table and figure
is produced, the HTML report builds, and a second invocation has nothing left to do."""

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.slow  # the smoke DAG end to end: minutes

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "--cores", "2", "--config", "profile=smoke"]


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("repo")
    tracked = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout.split()
    for name in tracked:
        if name.startswith(("results/", "figures/")) or not (REPO / name).is_file():
            continue
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, work / name)
    result = subprocess.run(SNAKEMAKE, cwd=work, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-4000:]
    return work


def test_every_table_and_figure_is_written(smoke_run):
    listed = subprocess.run([*SNAKEMAKE, "--list-target-rules"], cwd=smoke_run, capture_output=True,
                            text=True, check=True).stdout.split()
    tables = [r.removeprefix("table_") for r in listed if r.startswith("table_")]
    assert {"corpus", "average_ladder"} <= set(tables)
    for table_id in tables:
        csv = smoke_run / "results/smoke/tables" / f"{table_id}.csv"
        assert len(pd.read_csv(csv)) > 0, table_id
        assert (csv.with_suffix(".md")).read_text().startswith(f"## {table_id}")
    for rule in listed:
        if rule.startswith("figure_"):
            assert (smoke_run / "figures/smoke" / f"{rule.removeprefix('figure_')}.png").stat().st_size > 1000


def test_smoke_tables_hold_real_numbers(smoke_run):
    ladder = pd.read_csv(smoke_run / "results/smoke/tables/average_ladder.csv")
    assert list(ladder["params"]) == [263_168, 263_168, 279_552, 279_552]
    assert ladder["held_out_ppl"].between(1, 1024 * 4).all()
    corpus = pd.read_csv(smoke_run / "results/smoke/tables/corpus.csv").set_index("quantity")["value"]
    assert int(corpus["characters"]) == 100_000 and int(corpus["vocabulary"]) == 1024


def test_rerun_has_nothing_to_do_and_report_builds(smoke_run):
    dry = subprocess.run([*SNAKEMAKE, "-n"], cwd=smoke_run, capture_output=True, text=True, check=True)
    assert "Nothing to be done" in dry.stdout + dry.stderr
    report = smoke_run / "results/smoke/report.html"
    subprocess.run([*SNAKEMAKE, "--report", str(report)], cwd=smoke_run, capture_output=True, text=True, check=True)
    assert report.stat().st_size > 10_000
