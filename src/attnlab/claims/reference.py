"""A shortened profile's regression reference: its trained numbers judged against its own published seeds.

A shortened profile (quick, smoke) trains a fraction of the chapter's budget, so its numbers say nothing about
the chapter's. What they can say is whether a rerun still gives what the profile published: the reference
(results/reference/<profile>.json) holds, for every trained claim whose number the chapter printed, that number
on each of the profile's seeds (seeds_per_run.reference.<profile> of configs/pipeline.yaml, planned before they
trained), read from the tables of the variant `snakemake --config profile=<profile> seeds=<n>` and frozen by

    python -m attnlab.claims reference --profile quick

No pipeline job writes it; the ledger reads it (`regression`) in the ledger's own four words: a rerun of the
published seeds that gives their values AGREES seed for seed; otherwise a rerun beyond t(n − 1)·s·√(1/n + 1/m) of
the reference's mean (m: the rerun's seeds, s: the reference seeds' sd) DIFFERS, and one inside it stays OPEN
unless the reference's seeds could have caught a move (stats.powered).
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from attnlab.claims import stats
from attnlab.claims.read import Missing, estimate
from attnlab.claims.rules import PIPELINE_FILE, ROOT, ClaimsError
from attnlab.claims.stats import Sample
from attnlab.data import atomic_path
from attnlab.numbers import show_number

REFERENCE_DIR = "results/reference"
PROVENANCE = ("commit", "device", "run_dates")  # a table's columns that say where its rows' runs came from
RUNS_MARK = "config_hash"  # a table of trained runs names each row's config; a measurement's table does not
SAME_RTOL = 1e-6  # a rerun of the published seeds gives their values to float rounding (another CPU's kernels)


def reference_file(profile: str) -> str:
    """The profile's reference, relative to the repository."""
    return f"{REFERENCE_DIR}/{profile}.json"


def planned_seeds(profile: str, path: str | Path = PIPELINE_FILE) -> int:
    """The reference's seeds per row, as configs/pipeline.yaml plans them (seeds_per_run.reference)."""
    doc = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    planned = ((doc.get("seeds_per_run") or {}).get("reference") or {}).get(profile)
    if not planned:
        raise ClaimsError(f"{path}: seeds_per_run.reference plans no reference for profile {profile!r}")
    return int(planned)


def printed_number(claim: dict) -> bool:
    """Does the claim's rule compare its value with a number the chapter printed (not with another value)?"""
    return claim["rule"]["kind"] in ("relative", "absolute") and "to" not in claim["rule"]


def freeze(claims: list[dict], tables: dict, profile: str, seeds: int) -> dict:
    """The reference: each printed-number claim's value on every seed the rows it reads share — at least `seeds`
    of them for a table of trained runs; a seeded measurement keeps the count its profile sets (two at least: a
    spread) — with the runs' commits, devices and dates as the tables record them."""
    values, short = {}, []
    for claim in claims:
        if not printed_number(claim):
            continue
        try:
            value = estimate(claim["value"], tables, claim["table"])
        except Missing:
            continue
        if not value.sets:  # analytic, or read once: nothing of seeds to regress on
            continue
        shared = value.shared
        if RUNS_MARK in tables[claim["table"]] and shared.shape[-1] < seeds:
            short.append(f"{claim['id']} ({shared.shape[-1]} seeds)")
        elif shared.shape[-1] >= 2:
            values[claim["id"]] = shared.tolist()
    if short:
        raise ClaimsError(f"the reference plans {seeds} seeds per row; these claims read rows of trained runs with fewer: "
                          + ", ".join(short))
    if not values:
        raise ClaimsError("no trained claim with a printed number was read: are these the profile's tables?")
    read = sorted({c["table"] for c in claims if c["id"] in values})
    return {"profile": profile, "seeds": seeds, "frozen": datetime.date.today().isoformat(),
            "runs": {t: provenance(tables[t]) for t in read if t in tables}, "values": values}


def provenance(df: pd.DataFrame) -> dict[str, list[str]]:
    """A table's distinct commits, devices and run dates (each cell as the table wrote it)."""
    return {col: sorted({str(v) for v in df[col].dropna()}) for col in PROVENANCE if col in df.columns}


def write(reference: dict, path: Path) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(reference, indent=1) + "\n", encoding="utf-8")


def load(profile: str, root: Path = ROOT) -> dict | None:
    """The profile's frozen reference, or None where it has none."""
    path = Path(root) / reference_file(profile)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def regression(value: Sample, seeds: list, level: float = stats.LEVEL) -> tuple[str, str, str, str]:
    """(status, margin, band, why) of a rerun's value against the reference's seeds. Where the rerun's seeds are
    the reference's first ones and give their values to float rounding, it passes seed for seed (any shift would
    show). Otherwise its mean is judged against the reference's spread: "fail" beyond t(n − 1)·s·√(1/n + 1/m) of the
    reference's mean (m: the rerun's seeds, s: the reference seeds' sd); inside, "pass" where that test could have
    failed (stats.powered), else "open"; "untested" where the reference's seeds all agree."""
    ref = np.asarray(seeds, dtype=float)
    n, mean, sd = ref.shape[-1], ref.mean(axis=-1), ref.std(axis=-1, ddof=1)
    point = np.broadcast_to(value.point, mean.shape)
    m = min(value.counts, default=1)
    reference = stats.Sample(mean, {n: ref})
    spread, df = reference.draw_error(draws=m)
    half = stats.t_quantile(df, level) * spread
    with np.errstate(divide="ignore", invalid="ignore"):
        in_sd = np.abs(point - mean) / sd
    worst = np.unravel_index(np.nanargmax(np.where(np.isfinite(in_sd), in_sd, -1.0)), mean.shape) if mean.ndim else ()
    margin = (f"Δ {show_number(float(point[worst] - mean[worst]))} from the reference's mean "
              f"({float(in_sd[worst]):.2g} reference sd)")
    band = (f"accepts [{show_number(float(mean[worst] - half[worst]))}, "
            f"{show_number(float(mean[worst] + half[worst]))}] ({n} reference seeds)")
    if np.isnan(point).any():
        return "fail", "not a number", band, "not a number"
    rerun = value.shared if value.shared is not None else value.point[..., None]
    if rerun.shape[-1] <= n and np.allclose(rerun, ref[..., :rerun.shape[-1]], rtol=SAME_RTOL, atol=0):
        return "pass", margin, band, (f"its {rerun.shape[-1]} seed{'s' * (rerun.shape[-1] > 1)} give the published "
                                      "values to float rounding, seed for seed")
    if not np.all(sd > 0):
        return "untested", margin, band, "the reference's seeds all agree: no spread to judge a rerun by"
    if np.any(np.abs(point - mean) > half):
        return "fail", margin, band, f"beyond the reference seeds' spread: {margin}"
    if np.all(stats.powered(stats.Sample(point - mean, {n: ref - mean[..., None]}), level)):
        return "pass", margin, band, f"within the reference seeds' spread: {margin}"
    return "open", margin, band, (f"within the reference seeds' spread ({margin}), but {n} reference seeds cannot "
                                  f"catch a move of {stats.CATCH_SD:g} sd")
