"""Provenance recovered for run records written before runs recorded it: when a run ran, its device by
name, and whether a run from a dirty tree equals a run at its commit. Never touches what a run's key
covers (config_hash, config.yaml): no run is re-keyed.

    python -m attnlab.recover results/full

Each field it adds is named in the record's `recovered` with how it was found:
- started_at: the date of the commit the run was trained at (it cannot have started before);
- finished_at: the date of the first commit that changed its metrics.json after the run's commit (it
  cannot have finished after);
- device_name: a GPU run's model as the message of the commit that landed it names it (else as a landing
  message of GPU runs trained at the same commit names it); a CPU run's as the message says 'this
  machine' or 'this 2-core machine' (AMD EPYC, the project's build machine), else not recorded;
- key_at_commit: for a run trained from a dirty tree, its config composed at each dirty commit (that
  commit's own configs and code, in a temporary git worktree) and hashed there: 'equal' where that is its
  config_hash (no file its key covers differed: it equals a clean run at that commit), else 'differs'
  (or 'undecidable' where the commit does not compose it); a run its commit does not compose (a config file it
  read was not committed there: the dirty change was that file) is composed at the commit that landed its record,
  'equal where it landed' where that has its key (its config is one the repository committed).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

import yaml

from attnlab.config import ROOT
from attnlab.data import write_json

GPU_MODELS = re.compile(r"\b(H100|H200|A100|L4|L40S)\b")
# "this machine" of the landing messages: the 2-core build machine, as e4b60356's message names it
BUILD_MACHINE, BUILD_MACHINE_SAID = "AMD EPYC", re.compile(r"this (2-core )?machine|AMD EPYC")
NOT_RECORDED = "not recorded"
# key_at_commit of a dirty run its commit cannot compose, whose config composed where its record landed has its key
LANDED_EQUAL = "equal where it landed"
# run in a worktree at a run's commit, with that commit's code: each (kind, name, overrides) -> its key
KEY_AT_COMMIT = """
import json, sys
from attnlab.config import compose, config_hash
out = []
for kind, name, overrides in json.load(sys.stdin):
    try:
        if kind == "winograd":
            from attnlab.winograd import compose_run
            out.append(config_hash(compose_run(name, overrides)))
        else:
            out.append(config_hash(compose(overrides)))
    except Exception:  # the commit does not compose it (a config file it reads was not committed there)
        out.append(None)
print(json.dumps(out))
"""


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def landings(folder: Path) -> dict[str, list[tuple[str, str, str]]]:
    """metrics.json path (relative to the repository) -> (commit, date, message) of every commit that changed it."""
    log = git("log", "--format=%x00%H%x1f%cI%x1f%B%x1f", "--name-only", "--", f"{folder}/*metrics.json")
    found = {}
    for entry in log.split("\0")[1:]:
        commit, date, message, names = entry.split("\x1f")
        for name in names.split():
            found.setdefault(name, []).append((commit, date, message))
    return found


def landing(changes: list[tuple[str, str, str]], trained_at: str) -> tuple[str, str, str]:
    """The commit that landed a run's record: the first that changed its file after the run's commit (an
    earlier one landed a run the folder held before; a later one rewrote the record, not the run)."""
    after = [c for c in changes if datetime.fromisoformat(c[1]) >= datetime.fromisoformat(trained_at)]
    return min(after, key=lambda c: datetime.fromisoformat(c[1]))


def commit_date(commit: str) -> str:
    return git("show", "-s", "--format=%cI", commit).strip()


def gpu_named(message: str) -> str | None:
    found = GPU_MODELS.search(message)
    return f"NVIDIA {found.group(1)}" if found else None


def device_names(records: dict, landed: dict) -> dict[str, tuple[str, str]]:
    """path -> (device name, how it was found) for each record that lacks device_name."""
    gpu_at = {}  # run commit -> (model, landing commit) from any landing message that names a GPU model
    for path, r in records.items():
        if r["device"] == "cuda" and gpu_named(landed[path][2]):
            gpu_at.setdefault(r["commit"], (gpu_named(landed[path][2]), landed[path][0][:10]))
    named = {}
    for path, r in records.items():
        landed_by, _, message = landed[path]
        if r["device"] == "cuda" and gpu_named(message):
            named[path] = (gpu_named(message), f"the message of {landed_by[:10]}, which landed it")
        elif r["device"] == "cuda" and r["commit"] in gpu_at:
            model, other = gpu_at[r["commit"]]
            named[path] = (model, f"the message of {other}, which landed GPU runs of the same commit")
        elif r["device"] == "cpu" and BUILD_MACHINE_SAID.search(message):
            named[path] = (BUILD_MACHINE, f"the message of {landed_by[:10]}, which landed it, says it ran on this machine "
                                          f"({BUILD_MACHINE}, as e4b60356 names it)")
        else:
            named[path] = (f"{r['device']} ({NOT_RECORDED})", f"nothing names it: torch {r['torch']}")
    return named


def run_asked(path: str, r: dict) -> tuple[str, str, list[str]]:
    """(kind, name, overrides) that KEY_AT_COMMIT composes a run record's config from."""
    overrides = [o for o in yaml.safe_load((ROOT / path).with_name("config.yaml").read_text())["overrides"]
                 if not o.startswith("hydra")]
    winograd = "/measure/winograd/" in path
    return ("winograd" if winograd else "train", r["experiment"].split("/", 1)[1] if winograd else r["experiment"], overrides)


def keys_at(commit: str, asked: list[tuple[str, str, list[str]]]) -> list[str | None]:
    """The key each (kind, name, overrides) composes to at `commit`, with that commit's configs and code (in a
    temporary worktree); None where the commit does not compose it."""
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / commit
        git("worktree", "add", "--detach", str(tree), commit)
        try:
            return json.loads(subprocess.run(
                [sys.executable, "-c", KEY_AT_COMMIT], cwd=tree, env={**os.environ, "PYTHONPATH": str(tree / "src")},
                input=json.dumps(asked), capture_output=True, text=True, check=True).stdout)
        finally:
            git("worktree", "remove", "--force", str(tree))


def keys_at_commits(records: dict) -> dict[str, str]:
    """path -> key_at_commit for each record trained from a dirty tree that does not record what differed."""
    asked = {}  # commit -> [path]
    for path, r in records.items():
        dirty = [s for s in r.get("sources", [{"commit": r["commit"], "dirty": r["dirty"]}]) if s["dirty"]]
        if not dirty or "key_at_commit" in r or all(s.get("diff_sha256") for s in dirty):
            continue
        for source in dirty:
            asked.setdefault(source["commit"], []).append(path)
    found = {}
    for commit, paths in asked.items():
        for path, key in zip(paths, keys_at(commit, [run_asked(p, records[p]) for p in paths])):
            verdict = "undecidable" if key is None else "equal" if key == records[path]["config_hash"] else "differs"
            if found.get(path, "equal") == "equal":  # a run resumed at several dirty commits: the worst
                found[path] = verdict
    return found


def keys_where_landed(records: dict, changes: dict) -> dict[str, str]:
    """path -> LANDED_EQUAL for each dirty run its commit cannot compose (a config file it read was not committed
    there: the dirty change was that file) whose config, composed at the commit that landed its record, has its
    key: its config is one the repository committed, as a clean run's is."""
    asked = {}  # landing commit -> [path]
    for path, r in records.items():
        if r.get("key_at_commit") == "undecidable":
            asked.setdefault(landing(changes[path], commit_date(r["commit"]))[0], []).append(path)
    return {path: LANDED_EQUAL for commit, paths in asked.items()
            for path, key in zip(paths, keys_at(commit, [run_asked(p, records[p]) for p in paths]))
            if key == records[path]["config_hash"]}


def recover(folder: Path) -> dict[str, dict]:
    """The records under `folder` (results/<profile>) that lacked a field, with what was recovered."""
    paths = sorted(folder.glob("runs/**/metrics.json")) + sorted(folder.glob("measure/winograd/**/metrics.json"))
    records = {str(p.relative_to(ROOT)): json.loads(p.read_text()) for p in paths}
    missing = {p: r for p, r in records.items() if "finished_at" not in r}
    dates = {c: commit_date(c) for c in {r["commit"] for r in missing.values()}}
    changes = landings(folder.relative_to(ROOT))
    landed = {p: landing(changes[p], dates[r["commit"]]) for p, r in missing.items()}
    named = device_names({p: r for p, r in missing.items() if "device_name" not in r}, landed)
    keys = keys_at_commits(records)
    keys |= keys_where_landed({p: {**r, "key_at_commit": keys.get(p, r.get("key_at_commit"))} for p, r in records.items()},
                              changes)
    changed = {}
    for path, r in records.items():
        new, how = dict(r), dict(r.get("recovered", {}))
        if path in missing:
            commit = r["commit"]
            new["started_at"], how["started_at"] = dates[commit], f"not before: the date of its commit {commit[:10]}"
            landed_by, landed_at, _ = landed[path]
            new["finished_at"], how["finished_at"] = landed_at, f"not after: the date of {landed_by[:10]}, which landed it"
        if path in named:
            new["device_name"], how["device_name"] = named[path][0], named[path][1]
        if path in keys:
            new["key_at_commit"] = keys[path]
            how["key_at_commit"] = ("composed at each commit it was trained at from a dirty tree, in a worktree of "
                                    "that commit, and hashed there" + ("; that commit does not compose it, so composed "
                                    "at the commit that landed its record" if keys[path] == LANDED_EQUAL else ""))
        if how:
            new["recovered"] = how
        if new != r:
            changed[path] = new
    return changed


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        sys.exit(f"usage: python -m attnlab.recover results/<profile>; got {argv}")
    changed = recover(Path(argv[0]).resolve())
    for path, record in changed.items():
        write_json(ROOT / path, record)
    verdicts = [r["key_at_commit"] for r in changed.values() if "key_at_commit" in r]
    print(f"{len(changed)} records given recovered fields; dirty runs checked at their commits: "
          + ", ".join(f"{v} {verdicts.count(v)}" for v in ("equal", LANDED_EQUAL, "differs", "undecidable")))
    for path, record in changed.items():
        if record.get("key_at_commit", "equal") not in ("equal", LANDED_EQUAL):
            print(f"  {record['key_at_commit']}: {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
