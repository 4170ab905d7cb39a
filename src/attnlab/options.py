"""The workflow's options (snakemake --config name=value; their defaults: configs/pipeline.yaml; their types and
bounds: workflow/schemas/config.schema.yaml), read into what the rules use, each bad value refused in one line
that says what is allowed.

override= or a seeds= other than the profile's make a variant: an ablation beside the published results. The
runs it changes, and every table, figure, ledger and report built from them, are written under
results/<p>/variants/<name>/ (ignored by git); the published results are read, never written. A plain run does
not see a variant; deleting its folder removes it. The name is readable from the options that made it.
"""

from __future__ import annotations

import difflib
import re
import shlex

import yaml

from attnlab.config import ROOT
from attnlab.steps import refuse

SCHEMA = ROOT / "workflow/schemas/config.schema.yaml"  # each option's type, bounds and description


def explain(error: str) -> str:
    """A schema's refusal (snakemake.utils.validate's message, which names the failed value and the option's
    part of the schema) in one line: what is wrong, and what the option (or, for an unknown one, each) allows."""
    lines = error.splitlines()
    what = next((line.removeprefix("ValidationError: ") for line in lines if line.startswith("ValidationError: ")), lines[0])
    described = yaml.safe_load(SCHEMA.read_text())["properties"]
    option = re.search(r"schema\['properties'\]\['(\w+)'\]", error)
    unknown = re.search(r"\((.*) (?:was|were) unexpected\)", what)
    if unknown:
        names = re.findall(r"'([^']*)'", unknown.group(1))
        what = f"unknown --config option(s) {names}"
    elif option:
        what = f"--config {option.group(1)}: {what}"
    return f"{what}; allowed: " + "; ".join(f"{name} ({described[name]['description']})"
                                             for name in ([option.group(1)] if option else described))


def profile_of(config: dict, profiles: list[str]) -> str:
    profile = str(config.get("profile", "full"))
    if profile not in profiles:
        refuse(f"unknown profile {profile!r}; allowed: {profiles} (--config profile=...)")
    return profile


def seeds_of(config: dict, profile_seeds: int) -> list[int]:
    """The seeds of a trained table row: seeds=, else the profile's count."""
    return list(range(config.get("seeds", profile_seeds)))


def more_seeds(config: dict, profile: str, run_names: list[str]) -> dict[str, int]:
    """{run: seeds} of the rows seeds_per_run.<profile> gives more seeds."""
    more = (config.get("seeds_per_run") or {}).get(profile) or {}
    if not all(run in run_names and str(n).isdigit() and int(n) >= 1 for run, n in more.items()):
        refuse(f"seeds_per_run.{profile}={more!r}: expected {{run: whole number >= 1}}; runs: {run_names}")
    return {run: int(n) for run, n in more.items()}  # --config gives numbers as text


def in_scope(scope: str, run: str) -> bool:
    """`ladder/average` names one run, `ladder` a family, `all` every run."""
    return scope in ("all", run) or run.startswith(f"{scope}/")


def check_scope(scope: str, option: str, run_names: list[str]) -> str:
    if not any(in_scope(scope, run) for run in run_names):
        families = sorted({r.split("/")[0] for r in run_names})
        near = difflib.get_close_matches(scope, ["all", *families, *run_names], n=1)
        refuse(f"{option}: {scope!r} names no run{f'; did you mean {near[0]!r}?' if near else ''} "
               f"Allowed: all, a family {families} or a run {run_names}")
    return scope


def parse_overrides(value, run_names: list[str]) -> list[tuple[str, list[str]]]:
    """override='ladder/average: train.lr=3e-3 train.steps=500' (Snakemake reads it as YAML: a
    mapping, one entry per scope)."""
    items = value.items() if isinstance(value, dict) else [str(value).partition(":")[::2]]
    parsed = []
    for scope, rest in items:
        if not str(scope).strip() or not str(rest or "").strip():
            refuse(f"override={value!r}: expected '<scope>: <hydra override> ...', e.g. "
                   "'override=ladder/average: train.lr=3e-3' (quoted whole: an unquoted word after the scope "
                   "reaches Snakemake as a --config entry of its own)")
        given = shlex.split(str(rest))
        if any(o.split("=")[0].lstrip("+~") == "seed" for o in given):
            refuse(f"override={value!r}: a run's seeds are not overridden; choose them with seeds=N")
        parsed.append((check_scope(str(scope).strip(), "override", run_names), given))
    return parsed


def overrides_of(overrides: list[tuple[str, list[str]]], run: str) -> list[str]:
    """The command-line overrides a run gets from `override=`, in the order given."""
    return [o for scope, items in overrides for o in items if in_scope(scope, run)]
