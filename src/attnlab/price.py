"""What a Snakemake call would train, and about how long that takes, before it starts:

    python -m attnlab.price [--confirm yes] -- <snakemake arguments>

dry-runs the call (`snakemake -n`), counts its jobs by rule and prices every planned training run at
its family's hours per run on a CPU, read from the profile's `pipeline_time` table (each published
run's own clock). Without `--confirm yes`, a call that trains runs of the full profile stops there:
`make ablate PROFILE=full` asks first.
"""

from __future__ import annotations

import argparse
import collections
import csv
import re
import subprocess
import sys

from attnlab.config import ROOT

TRAINING_RULES = ("train", "winograd_train", "train_seeds_")


def planned_jobs(snakemake_args: list[str]) -> tuple[collections.Counter, collections.Counter]:
    """({rule: jobs}, {family: training runs}) of `snakemake -n <args>`."""
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", *snakemake_args], cwd=ROOT,
                            capture_output=True, text=True)
    out = result.stdout + result.stderr
    if result.returncode != 0:
        raise SystemExit(next((line for line in out.splitlines() if line.startswith("error:")), out.strip()[-500:]))
    rules, families = collections.Counter(), collections.Counter()
    for rule, block in re.findall(r"^(?:local)?rule (\S+):\n((?:    .*\n?)*)", out, re.M):  # a job: its indented lines
        rules[rule] += 1
        if rule.startswith(TRAINING_RULES):
            run = re.search(r"run=([a-z0-9_]+)/", block)
            seeds = block.count("/metrics.json") if rule.startswith("train_seeds_") else 1
            family = "winograd" if rule == "winograd_train" else run.group(1) if run else rule.split("_")[2]
            families[family] += seeds
    return rules, families


def hours_per_run(profile: str) -> dict[str, float]:
    """{family: CPU hours per run} from the profile's pipeline_time table; 'all' for a family it lacks."""
    table = ROOT / "results" / profile / "tables" / "pipeline_time.csv"
    rates = {}
    with open(table, newline="") as f:
        for row in csv.DictReader(f):
            if row["device"] == "cpu" or row["family"] == "all":
                rates[row["family"]] = float(row["train_hours"]) / int(row["runs"])
    return rates


def cpu_time(hours: float) -> str:
    """Hours, or minutes below one hour (a quick run's few minutes are never "0.0 CPU-hours")."""
    minutes = max(1, round(hours * 60))
    return f"{hours:.1f} CPU-hours" if hours >= 1 else f"{minutes} CPU-minute{'s' * (minutes != 1)}"


def profile_of(snakemake_args: list[str]) -> str:
    found = [a.split("=", 1)[1] for a in snakemake_args if a.startswith("profile=")]
    return found[-1] if found else "full"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m attnlab.price", description=__doc__.split("\n\n")[0])
    parser.add_argument("--confirm", default="", help="'yes' lets a call that trains full-profile runs go on")
    parser.add_argument("snakemake_args", nargs=argparse.REMAINDER, help="after --: the Snakemake call's arguments")
    args = parser.parse_args(argv)
    snakemake_args = [a for a in args.snakemake_args if a != "--"]
    profile = profile_of(snakemake_args)
    rules, families = planned_jobs(snakemake_args)
    rates = hours_per_run(profile)
    hours = sum(n * rates.get(family, rates["all"]) for family, n in families.items())
    print(f"{profile}: {sum(rules.values())} jobs: " + ", ".join(f"{n} {r}" for r, n in sorted(rules.items())))
    if families:
        print(f"  trains {sum(families.values())} runs (" + ", ".join(f"{n} {f}" for f, n in sorted(families.items()))
              + f"): about {cpu_time(hours)} at one thread a run (results/{profile}/tables/pipeline_time.csv)")
    if families and profile == "full" and args.confirm != "yes":
        raise SystemExit("error: this trains full-profile runs; to go on, repeat the command with CONFIRM=yes "
                         "(or try it first with PROFILE=quick)")


if __name__ == "__main__":
    main()
