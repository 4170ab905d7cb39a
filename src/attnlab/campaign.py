"""A seed campaign for a GPU lent for minutes: the seed plan packed here, trained there before a
deadline with K seeds folded per process (train.seed_batch), landed here with the runs' keys.

    python -m attnlab.campaign plan --profile full                     # what the plan trains, what it costs
    python -m attnlab.campaign pack --profile full [--run winograd/role_block=300] [--wheels]
    PYTHONPATH=src python3 -m attnlab.campaign train --minutes 9 --archive $OUT/runs.tar.gz   # on the GPU machine
    python -m attnlab.campaign land runs.tar.gz                        # here: into results/<profile>/
    python -m attnlab.campaign land ../clone                           # or the finished seeds (and measurements) of a clone

The plan: each run of configs/pipeline.yaml's seeds_per_run.<profile>, and each --run RUN=N (a
contradiction's sweep, say), with its seeds 0..N-1 that have no finished folder (metrics.json and
the key file of its current key). A run's seeds are trained in groups of up to --seed-batch
consecutive seeds, one process each. (`cost` prices the runs a Snakemake dry run lists: make reproduce-gpu.)

pack writes .campaign/ (git-ignored), all a bare GPU machine with torch needs beside the repository:
plan.json (each group's command and each seed's key), the profile's token cache (the runs' data.dir,
restored there by train: nothing is tokenized or downloaded), the Winograd splits and, with --wheels,
wheels of the pinned hydra-core, omegaconf and antlr4 (`pip wheel`, where a package index is
reachable; train installs them into .campaign/site when the machine lacks them).

train runs --processes groups at a time, each on its own process (device auto: the GPU). It starts a
group only if its estimated time fits before the deadline (--minutes from its start, less a margin
for the archive), and stops the groups still running at the deadline: their seeds are left out
(nothing half-written lands). Each finished seed is in its own folder under .campaign/out/, the
repository's layout, as it finishes; --archive packs the finished ones (no checkpoints) with
campaign.json (the plan, what finished, what was cut off, the machine's torch). --dry-run prints
the groups and the estimate and trains nothing.

land copies each finished seed into the repository (never over a seed that has results) after
checking its config hash against the run's current key, and writes the key file the pipeline reads.
The estimate is FLOPs (attnlab.measure.throughput.model_flops_per_token x the run's tokens) at an
assumed --tflops for the whole GPU, not a measurement: runs_per_hour's GPU rows are what to trust.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from attnlab.layout import run_folder, run_job, seed_groups, seed_key
from attnlab.root import find_root

# stdlib only at import: `train` runs on a machine that may lack Hydra until it installs the wheels
ROOT = find_root()  # the repository the command is given in, as every other module finds it
BUNDLE = ROOT / ".campaign"
WHEELS = ("hydra-core==1.3.8", "omegaconf==2.3.1", "antlr4-python3-runtime==4.9.3")
TOKEN_FILES = ("corpus.txt", "tokenizer.json", "tokens.npy", "tokens.json")
# one H200, float32, runs of the chapter's sizes: ≈ 5 s per 53-TFLOP run with 15 single-seed processes
# side by side (issue 50) — an assumption for planning until runs_per_hour has GPU rows
ASSUMED_TFLOPS = 10.0
ARCHIVE_MARGIN_S = 20
# seeds folded per process on a GPU (train.seed_batch), here and in `make reproduce-gpu` (its SEED_BATCH reads
# this); the workflow's own default is 1, one seed per process (configs/pipeline.yaml, seed_batch); what folding buys,
# on each device and precision measured: table runs_per_hour
GPU_SEED_BATCH = 10


# ---------------------------------------------------------------- the plan (here: needs attnlab.config)

def run_home(profile: str, run: str) -> tuple[str, str]:
    """(folder pattern, key job pattern) of a run's seeds, as the pipeline lays them out (attnlab.layout)."""
    return run_folder(f"results/{profile}", run, "{seed}"), run_job(run, "{seed}")


def composed_run(profile: str, run: str):
    """The run's config as the pipeline composes it (a seed's is this with its seed set)."""
    from attnlab.config import compose
    from attnlab.winograd import compose_run

    if run.startswith("winograd/"):
        return compose_run(run.removeprefix("winograd/"), [f"profile={profile}"])
    return compose([f"experiment={run}", f"profile={profile}"])


def run_flops(cfg) -> float:
    """Training FLOPs of one run (matmuls, forward and backward; evaluation left out)."""
    from attnlab.config import model_config, scaled
    from attnlab.measure.throughput import model_flops_per_token

    mcfg = model_config(cfg)
    return float(model_flops_per_token(mcfg) * scaled(cfg, cfg.train.steps) * cfg.train.batch_size * mcfg.context)


def planned_counts(profile: str, extra: dict[str, int]) -> dict[str, int]:
    """run -> seeds it should have: seeds_per_run.<profile>, and the extra runs' counts."""
    import yaml

    from attnlab.config import CONFIG_DIR

    counts = dict((yaml.safe_load((CONFIG_DIR / "pipeline.yaml").read_text())["seeds_per_run"] or {}).get(profile) or {})
    for run, n in extra.items():
        counts[run] = max(counts.get(run, 0), n)
    return counts


def ledger_asks(profile: str, root: Path = ROOT) -> dict[str, int]:
    """run -> the seeds per row the ledger's would_decide column asks for (results/<profile>/claims.csv), beyond what
    seeds_per_run.<profile> trains, for each trained run the written plan lists for those claims
    (pipeline.yaml: seeds_per_run.plan.<profile>.<run>.for). Not in the campaign's plan: seeds the pipeline
    reads are a look, written in seeds_per_run first; --run trains them."""
    import csv
    import re

    from attnlab.claims.rules import load_plans
    from attnlab.config import CONFIG_DIR

    ledger = root / f"results/{profile}/claims.csv"
    if not ledger.is_file():
        return {}
    with open(ledger, newline="") as f:
        asked = {row["id"]: int(m.group(1)) for row in csv.DictReader(f)
                 for m in [re.match(r"(\d+) seeds per row", row.get("would_decide") or "")] if m}
    asks = {}
    for run, plan in load_plans(profile, CONFIG_DIR / "pipeline.yaml").items():
        wanted = max((asked[claim] for claim in plan["for"] if claim in asked), default=0)
        if not run.startswith("measure/") and wanted > plan["trained"]:
            asks[run] = wanted
    return asks


def plan(profile: str, extra: dict[str, int] | None = None, seed_batch: int = GPU_SEED_BATCH, root: Path = ROOT) -> list[dict]:
    """The groups to train: each a run, its consecutive seeds (at most seed_batch), their keys and folders."""
    groups = []
    for run, count in sorted(planned_counts(profile, extra or {}).items()):
        cfg = composed_run(profile, run)
        folder, job = run_home(profile, run)
        missing = {}  # seed -> its key
        for seed in range(count):
            key = seed_key(cfg, seed)
            done = (root / folder.format(seed=seed) / "metrics.json").exists() and \
                (root / f"results/{profile}/stamps" / job.format(seed=seed) / f"{key}.key").exists()
            if not done:
                missing[seed] = key
        flops = run_flops(cfg)
        groups += [{"run": run, "seeds": seeds, "keys": [missing[s] for s in seeds], "folder": folder, "job": job,
                    "run_flops": flops} for seeds in seed_groups(list(missing), seed_batch)]
    return groups


def group_command(profile: str, group: dict, out: str, bundle: str) -> list[str]:
    """The group's training command, run from the repository root (a path here is relative to it)."""
    first, n = group["seeds"][0], len(group["seeds"])
    run, folder = group["run"], f"{out}/{group['folder'].format(seed=first)}"
    common = [f"profile={profile}", f"seed={first}", f"train.seed_batch={n}", "train.threads=1"]
    if run.startswith("winograd/"):
        name = run.removeprefix("winograd/")
        version = name.partition("_")[0]
        return ["-m", "attnlab.winograd", "train", name, "--split", f"{bundle}/splits/{version}/split.json",
                "--out", folder, *common]
    return ["-m", "attnlab.train", f"experiment={run}", *common, f"hydra.run.dir={folder}"]


def cost_line(groups: list[dict], tflops: float) -> str:
    runs = sum(len(g["seeds"]) for g in groups)
    flops = sum(g["run_flops"] * len(g["seeds"]) for g in groups)
    return (f"{runs} runs in {len(groups)} processes, {flops / 1e12:,.4g} TFLOP of training: about "
            f"{flops / (tflops * 1e12) / 60:,.3g} min on one GPU at an assumed {tflops:g} TFLOP/s "
            "(estimated; runs_per_hour's GPU rows measure it)")


def cost(profile: str, paths: list[str], tflops: float) -> str:
    """cost_line of the runs whose metrics.json paths are given (what a Snakemake dry run will train)."""
    counts = {}
    for path in paths:
        parts = Path(path).parts  # results/<profile>/runs/<family>/<run>/seed<k>/... or .../measure/winograd/<v>/<m>/...
        run = f"winograd/{parts[4]}_{parts[5]}" if parts[2:4] == ("measure", "winograd") else f"{parts[3]}/{parts[4]}"
        counts[run] = counts.get(run, 0) + 1
    runs = [{"run_flops": run_flops(composed_run(profile, run)), "seeds": [0] * n} for run, n in counts.items()]
    return cost_line(runs, tflops).replace(f" in {len(runs)} processes", "")


def print_plan(groups: list[dict], tflops: float, file=sys.stdout) -> None:
    by_run = {}
    for g in groups:
        by_run.setdefault(g["run"], []).extend(g["seeds"])
    for run, seeds in by_run.items():
        print(f"  {run}: {len(seeds)} seeds ({seeds[0]}–{seeds[-1]})", file=file)
    print(cost_line(groups, tflops), file=file)


def pack(profile: str, groups: list[dict], bundle: Path, wheels: bool) -> None:
    """Everything the GPU machine needs beside the repository's tracked files, into `bundle`."""
    from attnlab import data
    from attnlab.config import compose
    from attnlab.winograd import write_split

    cfg = compose([f"profile={profile}"])
    cache = cfg.data.copy()
    cache.dir = str(ROOT / cfg.data.dir)  # relative to the repository, as the pipeline's runs read it
    data.prepare(cache, cfg.profile.max_chars)  # the runs' token cache (a no-op where it is built)
    if bundle.exists():
        shutil.rmtree(bundle)
    (bundle / "data").mkdir(parents=True)
    for name in TOKEN_FILES:
        shutil.copy2(Path(cache.dir) / name, bundle / "data" / name)
    for version in sorted({g["run"].removeprefix("winograd/").partition("_")[0]
                           for g in groups if g["run"].startswith("winograd/")}):
        write_split(version, bundle / "splits" / version)
    if wheels:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(bundle / "wheels"), *WHEELS],
                       check=True)
    data.write_json(bundle / "plan.json", {"profile": profile, "data_dir": cfg.data.dir, "groups": groups})


# ---------------------------------------------------------------- on the GPU machine: stdlib until the wheels are in

def python_path(bundle: Path) -> str:
    """PYTHONPATH for the training processes: the repository's src and, where this machine lacks Hydra,
    the packed wheels installed into bundle/site."""
    paths = [str(ROOT / "src")]
    try:
        import hydra  # noqa: F401
        import omegaconf  # noqa: F401
    except ImportError:
        wheels = sorted((bundle / "wheels").glob("*.whl"))
        if not wheels:
            sys.exit("error: this machine lacks hydra-core/omegaconf and the bundle has no wheels: pack --wheels")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                        "--target", str(bundle / "site"), *map(str, wheels)], check=True)
        paths.append(str(bundle / "site"))
    return os.pathsep.join(paths + [os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)


def finished_seeds(out: Path, group: dict) -> list[int]:
    return [s for s in group["seeds"] if (out / group["folder"].format(seed=s) / "metrics.json").exists()]


def train(bundle: Path, minutes: float, processes: int, tflops: float, archive: Path | None, dry_run: bool) -> dict:
    started = time.monotonic()
    deadline = started + 60 * minutes - ARCHIVE_MARGIN_S
    if not (bundle / "plan.json").is_file():
        sys.exit(f"error: {bundle / 'plan.json'} is missing: pack the plan first "
                 "(python -m attnlab.campaign pack --profile full)")
    packed = json.loads((bundle / "plan.json").read_text())
    profile, groups, out = packed["profile"], packed["groups"], bundle / "out"
    rate = tflops * 1e12 / processes  # FLOP/s of one process, until finished groups say otherwise
    print(cost_line(groups, tflops), flush=True)
    if dry_run:
        for g in groups:
            print(f"  {g['run']} seeds {g['seeds'][0]}–{g['seeds'][-1]}: python "
                  + " ".join(group_command(profile, g, os.path.relpath(out, ROOT), os.path.relpath(bundle, ROOT))))
        return {}
    cache = ROOT / packed["data_dir"]  # the runs' data.dir (part of their keys): restored, never rebuilt
    cache.mkdir(parents=True, exist_ok=True)
    for name in TOKEN_FILES:
        if not (cache / name).exists():
            shutil.copy2(bundle / "data" / name, cache / name)
    env = {**os.environ, "PYTHONPATH": python_path(bundle), "PYTHONUNBUFFERED": "1"}
    queue, running, finished, cut, skipped, observed = list(groups), {}, [], [], [], []
    while queue or running:
        now = time.monotonic()
        while queue and len(running) < processes:
            g = queue.pop(0)
            if now + g["run_flops"] * len(g["seeds"]) / rate > deadline:
                skipped.append(g)
                continue
            folder = out / g["folder"].format(seed=g["seeds"][0])
            folder.mkdir(parents=True, exist_ok=True)
            log = open(folder / "train.log", "w")
            proc = subprocess.Popen([sys.executable, *group_command(profile, g, str(out), str(bundle))], cwd=ROOT,
                                    env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            running[proc] = (g, now, log)
        for proc in [p for p in running if p.poll() is not None]:
            g, began, log = running.pop(proc)
            log.close()
            done = finished_seeds(out, g)
            finished += [{"run": g["run"], "seed": s} for s in done]
            if proc.returncode == 0:
                observed.append(g["run_flops"] * len(g["seeds"]) / (time.monotonic() - began))
                rate = sum(observed) / len(observed)
            else:
                print(f"failed: {g['run']} seeds {g['seeds']} (exit {proc.returncode}; its train.log)", flush=True)
            print(f"{time.monotonic() - started:6.0f} s  {g['run']} seeds {g['seeds'][0]}–{g['seeds'][-1]}: "
                  f"{len(done)} finished", flush=True)
        if time.monotonic() > deadline:
            for proc, (g, _, log) in running.items():  # killed: the unfinished seeds write nothing that lands
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                log.close()
                cut.append(g)
            running = {}
            skipped += queue
            queue = []
        time.sleep(0.5)
    import torch  # the machine's own, recorded: a GPU image may run another torch than the pin

    summary = {"profile": profile, "plan": groups, "finished": finished, "wall_s": time.monotonic() - started,
               "cut_at_deadline": [{"run": g["run"], "seeds": g["seeds"]} for g in cut],
               "not_started": [{"run": g["run"], "seeds": g["seeds"]} for g in skipped],
               "torch": torch.__version__, "device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"}
    (out / "campaign.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"{len(finished)} runs finished, {sum(len(g['seeds']) for g in cut)} cut at the deadline, "
          f"{sum(len(g['seeds']) for g in skipped)} not started ({summary['wall_s']:.0f} s)", flush=True)
    if archive is not None:
        write_archive(out, finished, groups, archive)
    return summary


def write_archive(out: Path, finished: list[dict], groups: list[dict], archive: Path) -> None:
    """The finished seeds' folders (without checkpoints) and campaign.json, as one .tar.gz."""
    folders = {g["run"]: g["folder"] for g in groups}
    archive.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(out / "campaign.json", "campaign.json")
        for f in finished:
            folder = folders[f["run"]].format(seed=f["seed"])
            for path in sorted((out / folder).iterdir()):
                if path.suffix != ".pt":
                    tar.add(path, f"{folder}/{path.name}")
    print(f"{archive}: {archive.stat().st_size / 2**20:.1f} MiB", flush=True)


# ---------------------------------------------------------------- landing (here)

def run_of(folder: str) -> tuple[str, str, int] | None:
    """(profile, run, seed) of a seed folder in the repository's layout (run_home's), or None."""
    parts = Path(folder).parts
    if len(parts) < 4 or parts[0] != "results" or not parts[-1].startswith("seed") or not parts[-1][4:].isdigit():
        return None
    profile, seed = parts[1], int(parts[-1][4:])
    if parts[2] == "runs":
        return profile, "/".join(parts[3:-1]), seed
    if parts[2:4] == ("measure", "winograd") and len(parts) == 7:
        return profile, f"winograd/{parts[4]}_{parts[5]}", seed
    return None


def landable_seeds(source: Path):
    """(folder in the repository's layout, its files as {name: bytes}) of each finished seed in `source`: a
    campaign archive (.tar.gz, its campaign.json lists them) or a folder laid out as a checkout (another
    clone that trained them, say); a checkpoint stays behind."""
    if source.is_dir():
        for metrics in sorted(source.glob("results/*/**/seed*/metrics.json")):
            folder = metrics.parent
            yield folder.relative_to(source).as_posix(), \
                {f.name: f.read_bytes() for f in folder.iterdir() if f.is_file() and f.name != "checkpoint.pt"}
        return
    with tarfile.open(source) as tar:
        summary = json.loads(tar.extractfile("campaign.json").read())
        if summary["torch"]:
            print(f"trained with torch {summary['torch']} on {summary['device']}")
        folders = {g["run"]: g["folder"] for g in summary["plan"]}
        for f in summary["finished"]:
            folder = folders[f["run"]].format(seed=f["seed"])
            yield folder, {Path(m.name).name: tar.extractfile(m).read() for m in tar.getmembers()
                           if m.name.startswith(f"{folder}/")}


def land(source: Path, into: Path = ROOT) -> list[str]:
    """Each finished seed of `source` (an archive or a folder, landable_seeds') into `into`, with its key
    file, then (a folder) each measurement it holds that `into` lacks (land_measurements); returns what landed.
    A seed that has results there, that was trained from a dirty tree, or whose config hash is not its run's
    current key, is left out (said why)."""
    landed, configs, present = [], {}, 0
    for folder, files in landable_seeds(source):
        where = run_of(folder)
        if where is None:
            print(f"  {folder}: not a seed folder of the pipeline's layout; left out")
            continue
        profile, run, seed = where
        target = into / folder
        if (target / "metrics.json").exists():
            present += 1  # a clone holds every published seed too: counted, not listed
            continue
        metrics = json.loads(files["metrics.json"])
        if metrics.get("dirty"):
            print(f"  {folder}: trained from a dirty tree at {metrics.get('commit')}; left out")
            continue
        if (profile, run) not in configs:  # a run's config is its profile's: a clone may hold two profiles' seeds
            configs[profile, run] = composed_run(profile, run)
        key = seed_key(configs[profile, run], seed)
        if metrics["config_hash"] != key:
            print(f"  {folder}: trained under key {metrics['config_hash']}, the run's is {key} now; left out")
            continue
        # the key file first, as rule key writes it before the run: the run's files are newer than it
        stamps = into / f"results/{profile}/stamps" / run_home(profile, run)[1].format(seed=seed)
        stamps.mkdir(parents=True, exist_ok=True)
        for old in stamps.glob("*.key"):
            old.unlink()
        (stamps / f"{key}.key").write_text(key + "\n")
        staging = target.with_name(f".{target.name}.landing")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for name, content in files.items():
            (staging / name).write_bytes(content)
        shutil.rmtree(target, ignore_errors=True)  # an unfinished folder (no metrics.json) gives way
        staging.replace(target)  # the whole folder at once: nothing half-written
        landed.append(folder)
    if present:
        print(f"  {present} seeds have results here already; left out")
    print(f"landed {len(landed)} runs into {into}")
    if source.is_dir():
        landed += land_measurements(source, into)
    return landed


def measured_clean(content: bytes) -> bool:
    """A measurement's JSON record says it was measured from a committed tree (its `measured` or own flag)."""
    record = json.loads(content)
    return not (record.get("measured") or {}).get("dirty", False) and not record.get("dirty", False)


def land_measurements(source: Path, into: Path = ROOT) -> list[str]:
    """Each measurement of a clone (`source`, laid out as a checkout) that `into` lacks, and each Winograd split
    (what the clone's Winograd runs read: without it here they would retrain), measured there from a clean tree
    under the job's current key (the workflow's jobs, attnlab.jobs: the key file under the clone's stamps names
    it), with its key file and its log beside it; returns what landed. One measured under another key, or from
    a dirty tree, is left out (said why)."""
    from attnlab.jobs import Jobs

    landed = []
    for profile in sorted(p.name for p in (source / "results").iterdir() if (into / "configs/profile" / f"{p.name}.yaml").is_file()):
        jobs = Jobs({"profile": profile}, read_by_key=str, root=into)
        for step in jobs.registry.jobs.values():
            if not step.job.startswith(("measure_", "winograd_split/")) or step.home != jobs.results:
                continue
            wanted = [out for out in step.outputs if not (into / out).exists()]
            if not wanted or not all((source / out).is_file() for out in step.outputs):
                continue
            where = step.outputs[0]
            if not (source / step.key_file).is_file():
                print(f"  {where}: measured under another key than its job's current one ({step.key}); left out")
                continue
            if not all(measured_clean((source / out).read_bytes()) for out in step.outputs if out.endswith(".json")):
                print(f"  {where}: measured from a dirty tree; left out")
                continue
            key_dir = into / step.key_file.rsplit("/", 1)[0]
            key_dir.mkdir(parents=True, exist_ok=True)
            for old in key_dir.glob("*.key"):
                old.unlink()
            (into / step.key_file).write_bytes((source / step.key_file).read_bytes())
            logs = [str(Path(out).with_suffix(".log")) for out in step.outputs if (source / out).with_suffix(".log").is_file()]
            for path in [*logs, *step.outputs]:  # the record last: a landing cut short leaves no record without its log
                staging = (into / path).with_name(f".{Path(path).name}.landing")
                staging.parent.mkdir(parents=True, exist_ok=True)
                staging.write_bytes((source / path).read_bytes())
                staging.replace(into / path)
            landed.append(where)
    print(f"landed {len(landed)} measurements and Winograd splits into {into}")
    return landed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m attnlab.campaign", description="\n\n".join(__doc__.split("\n\n")[:2]),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="{plan,pack,cost,train,land}")
    for name, text in (("plan", "what the plan trains, in groups of folded seeds, and what it costs"),
                       ("pack", "the plan, token cache, splits (and --wheels) into .campaign/ for the GPU machine")):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("--profile", default="full")
        p.add_argument("--run", action="append", default=[], metavar="RUN=N", help="also RUN's seeds 0..N-1")
        p.add_argument("--seed-batch", type=int, default=GPU_SEED_BATCH, help="seeds folded per process")
        p.add_argument("--tflops", type=float, default=ASSUMED_TFLOPS, help="the GPU's rate, for the estimate")
    text = "the cost of the runs whose metrics.json paths are on stdin (make reproduce-gpu)"
    p = sub.add_parser("cost", help=text, description=text)
    p.add_argument("--profile", default="full")
    p.add_argument("--tflops", type=float, default=ASSUMED_TFLOPS)
    sub.choices["pack"].add_argument("--out", type=Path, default=BUNDLE)
    sub.choices["pack"].add_argument("--wheels", action="store_true", help="pip wheel the pinned Hydra packages")
    text = "on the GPU machine: train the packed plan's groups before a deadline"
    p = sub.add_parser("train", help=text, description=text)
    p.add_argument("--bundle", type=Path, default=BUNDLE)
    p.add_argument("--minutes", type=float, required=True, help="the deadline, from the start")
    p.add_argument("--processes", type=int, default=8, help="groups trained at once")
    p.add_argument("--tflops", type=float, default=ASSUMED_TFLOPS)
    p.add_argument("--archive", type=Path, help="write the finished runs here (.tar.gz)")
    p.add_argument("--dry-run", action="store_true", help="print the groups and the estimate; train nothing")
    text = "land a campaign's finished seeds (an archive, or a folder laid out as a checkout), each with its key file"
    p = sub.add_parser("land", help=text, description=text)
    p.add_argument("archive", type=Path, help="a campaign's runs.tar.gz, or a folder laid out as a checkout")
    p.add_argument("--into", type=Path, default=ROOT, help="the repository to land in")
    args = parser.parse_args(argv)
    for name in ("bundle", "archive", "into", "out"):  # paths from where the command was given
        if getattr(args, name, None) is not None:
            setattr(args, name, getattr(args, name).resolve())

    if args.command == "train":
        train(args.bundle, args.minutes, args.processes, args.tflops, args.archive, args.dry_run)
        return
    from attnlab.config import ConfigError

    try:
        if args.command == "land":
            land(args.archive, args.into)
            return
        if args.command == "cost":
            print("training:", cost(args.profile, sys.stdin.read().split(), args.tflops))
            return
        extra = {}
        for item in args.run:
            run, _, n = item.partition("=")
            if not n.isdigit() or int(n) < 1:
                raise ConfigError(f"--run {item!r}: expected RUN=N with N a whole number >= 1")
            extra[run] = int(n)
        if args.seed_batch < 1:
            raise ConfigError(f"--seed-batch={args.seed_batch} must be a whole number >= 1")
        groups = plan(args.profile, extra, args.seed_batch)
    except ConfigError as e:
        sys.exit(f"error: {e}")
    print_plan(groups, args.tflops)
    asks = {run: n for run, n in ledger_asks(args.profile).items() if n > extra.get(run, 0)}
    if args.command == "plan" and asks:
        print(f"the ledger's would_decide column asks for more seeds on {len(asks)} runs, not planned until "
              "seeds_per_run gives them (or --run): " + " ".join(f"--run {run}={n}" for run, n in sorted(asks.items())))
        print("  with them: " + cost_line(plan(args.profile, {**extra, **asks}, args.seed_batch), args.tflops))
    if args.command == "pack":
        pack(args.profile, groups, args.out, args.wheels)
        print(f"packed into {args.out}")


if __name__ == "__main__":
    main()
