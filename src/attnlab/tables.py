"""Tables: every table id has one builder that turns its named inputs into a DataFrame, and the
columns every trained row carries. Builders live in attnlab.families.<family> and register with
@table("<id>"); attnlab.views writes each as CSV (every column) and Markdown (what a reader compares).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from attnlab.numbers import show
from attnlab.recover import LANDED_EQUAL

def registry(builders: dict):
    """A decorator that files a builder in `builders` under its id: @table("ladder"), @figure("ladder")."""
    def under(builder_id: str):
        def register(fn):
            builders[builder_id] = fn
            return fn
        return register
    return under


BUILDERS = {}
DECLARED = {}  # table id -> Declared: what it reads and where it goes, declared with its builder


@dataclass(frozen=True)
class Declared:
    """A table, besides its builder: the place of its section in the chapter's order (a table without one comes
    last); the trained runs it reads ({row name: experiment}, one metrics.json per seed); its other inputs (reads:
    {name: path or paths under results/<profile>/}, or a function (jobs, variant) -> {name: paths} of
    attnlab.jobs' runs and measurements); what its figure reads besides the table's inputs (figure_reads, as
    reads); other files its builder reads (code_files, part of its key; or a function of jobs); and whether its
    inputs are other tables' (reads_tables: 1, a family table's; 2, every table's: declared after those); the
    columns a reader compares with the chapter, in the chapter's shape (shown: attnlab.views; by default all but
    bookkeeping), or a function that reshapes the table into it (view(df, chapter cells) -> the reader's frame)."""

    place: float = math.inf
    runs: dict | None = None
    reads: dict | Callable | None = None
    figure_reads: dict | None = None
    code_files: tuple | Callable = ()
    reads_tables: int = 0
    shown: tuple = ()
    view: Callable | None = None


def table(table_id: str, **declared):
    """@table("ladder", place=10, runs=runs_of(LADDER)): files the builder under its id with what it reads
    (Declared). The workflow (attnlab.jobs) trains and measures those inputs and hands the builder their paths by
    name; every table is one such declaration, in its family module (src/attnlab/families/)."""
    def register(fn):
        BUILDERS[table_id] = fn
        DECLARED[table_id] = Declared(**declared)
        return fn
    return register


# the places from here on hold the pipeline's own tables (its time, speed and devices), not the chapter's: the
# report folds their rows under their captions
PIPELINE_OWN = 290


def chapter_order() -> list[str]:
    """The tables in the chapter's order (their declared places), the chapter's argument from the data to the
    probe, then the experiments behind what did not reproduce, then the pipeline's own: the report's sections."""
    return sorted(DECLARED, key=lambda t: (DECLARED[t].place, t))


def held_out(metrics: dict, length: int | None = None) -> float:
    """Held-out perplexity at `length` (default: the shortest evaluated window, the training length
    where a run evaluates several); NaN if diverged."""
    values = metrics["held_out_ppl"]
    value = values[str(length if length is not None else min(map(int, values)))]
    return math.nan if value is None else value


def seed_columns(name: str, values: list[float]) -> dict:
    """`name` = mean over seeds; with several seeds also `name_std` (sample std) and `name_seeds`, every
    seed's value in seed order (';'-separated, exact), which the ledger pairs across rows."""
    arr = np.asarray(values, dtype=float)
    out = {name: float(arr.mean())}
    if len(arr) > 1:
        out[f"{name}_std"] = float(arr.std(ddof=1))
        out[f"{name}{SEEDS_SUFFIX}"] = ";".join(repr(float(v)) for v in arr)
    return out


SEEDS_SUFFIX = "_seeds"


def is_seed_detail(column: str) -> bool:
    """`<col>_std` and `<col>_seeds`: how a mean column spreads over seeds, not a column of its own."""
    return column.endswith(("_std", SEEDS_SUFFIX))


def per_seed(cell) -> list[float]:
    """A `<col>_seeds` cell as floats (empty for a row with one seed)."""
    return [float(v) for v in str(cell).split(";")] if isinstance(cell, str) and cell else []


def overridden(runs: list[dict]) -> dict:
    """An `overrides` column for runs trained with command-line ablations (override=...), else nothing."""
    found = sorted({o for r in runs for o in r.get("overrides", [])})
    return {"overrides": " ".join(found)} if found else {}


def run_columns(runs: list[dict]) -> dict:
    """The columns every trained row carries: size, outcome, provenance."""
    diverged = [r["diverged_step"] for r in runs if r["diverged"]]
    return {**overridden(runs),
        "params": runs[0]["params"],
        **seed_columns("train_ppl", [math.nan if r["train_ppl"] is None else r["train_ppl"] for r in runs]),
        **seed_columns("held_out_ppl", [held_out(r) for r in runs]),
        "steps": runs[0]["steps"], "seeds": len(runs),
        "diverged_at": ",".join(map(str, diverged)) if diverged else "",
        "config_hash": runs[0]["config_hash"], **provenance(runs),
    }


def provenance(runs: list[dict]) -> dict:
    """Where a row was made, for a reader to check: every commit its seeds ran at and every device by name,
    each with its seed count, most first ('2058215393 ×70, a5b45a3a77+dirty ×4': +dirty, +unverified where
    a dirty run is not shown to equal a run at its commit, +resumed where it resumed under another
    commit); the range of the runs' dates, and how many runs' dates were recovered rather than recorded;
    the seeds (empty where a record lacks them); the torch each ran under, with its seed count (a GPU image's torch
    beside the pinned one shows). A run that is not publishable is refused."""
    for run in runs:
        check_publishable(run)
    dates = [d for r in runs for d in (r.get("started_at"), r.get("finished_at")) if d]
    return {"commit": counted([commit_of(r) for r in runs if r.get("commit")]),
            "device": counted([r.get("device_name") or r["device"] for r in runs if r.get("device")]),
            "run_dates": f"{min(dates)[:10]} – {max(dates)[:10]}" if dates else "",
            "dates_recovered": sum("finished_at" in r.get("recovered", {}) for r in runs),
            "seed_ids": seed_ids(r.get("seed") for r in runs),
            "torch": counted([r["torch"] for r in runs if r.get("torch")])}


def counted(values: list[str] | Counter) -> str:
    """'a ×70, b ×4': each value with how many runs gave it (values, or a Counter of them), most first."""
    return ", ".join(f"{v} ×{n}" for v, n in (values if isinstance(values, Counter) else Counter(values)).most_common())


def tally(cells) -> Counter:
    """The runs behind a provenance column's cells, summed over rows: 'a ×70, b ×4' and 'a ×3' give a: 73, b: 4
    (a cell without counts, a measurement's 'cpu', counts once)."""
    found = Counter()
    for cell in cells:
        for part in (p.strip() for p in ("" if pd.isna(cell) else str(cell)).split(",")):
            value, _, count = part.partition(" ×")
            if value:
                found[value] += int(count) if count.isdigit() else 1
    return found


def dirty_sources(run: dict) -> list[dict]:
    """The processes that trained a run from a tree with uncommitted changes (a record without sources: its own flag)."""
    return [s for s in run.get("sources", [{"dirty": run.get("dirty")}]) if s.get("dirty")]


def commit_of(run: dict) -> str:
    """A run's commit as a row names it: 10 characters, +dirty (+unverified where neither its changes are
    recorded nor its key shown to equal its commit's, or where its commit cannot compose it, the key of the commit
    that landed it), +resumed where it resumed under another commit."""
    dirty = dirty_sources(run)
    verified = all(s.get("diff_sha256") for s in dirty) or run.get("key_at_commit") in ("equal", LANDED_EQUAL)
    return (run["commit"][:10] + ("+dirty" if dirty else "") + ("" if verified else "+unverified")
            + ("+resumed" if len(run.get("sources", [])) > 1 else ""))


def check_publishable(run: dict) -> None:
    """Refuses a run from a dirty tree that says nothing of what differed: each process that trained it
    from a dirty tree records its changed files and their diff's hash, or (a record from before runs
    recorded that) the record says whether its config, composed at its commit, has its key (key_at_commit,
    attnlab.recover)."""
    dirty = dirty_sources(run)
    if dirty and "key_at_commit" not in run and not all(s.get("diff_sha256") for s in dirty):
        raise ValueError(f"{run.get('experiment', run.get('run'))} seed {run.get('seed')} (key {run.get('config_hash')}) "
                         f"ran from a dirty tree at {run.get('commit')} and records neither what differed nor whether "
                         "its key equals the key at that commit (python -m attnlab.recover): retrain it from a clean "
                         "tree, or leave it out")


def seed_ids(seeds) -> str:
    """'0–6', '0,1', '0–4,6': which seeds a row averages, consecutive ones as a range."""
    spans = []
    for seed in sorted({int(s) for s in seeds if s is not None}):
        if spans and seed == spans[-1][1] + 1:
            spans[-1][1] = seed
        else:
            spans.append([seed, seed])
    return ",".join(f"{a}–{b}" if b > a + 1 else ",".join(map(str, range(a, b + 1))) for a, b in spans)


def fmt(value, spread: float | None = None) -> str:
    """A cell as people read it, with its spread over seeds where given (60.23 ± 0.49). Numbers print
    as the ledger prints them (attnlab.numbers.show), so one value reads the same in a table, a
    caption and the ledger; NaN prints as –."""
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return "–"
        if value.is_integer() and abs(value) < 1e15 and not spread:  # a count read back as a float (its column has gaps)
            return f"{int(value):,}"
        has_spread = isinstance(spread, (float, np.floating, int)) and not math.isnan(spread)
        return show(float(value), float(spread) if has_spread else 0.0)
    return "" if value is None else str(value)


# How a row was made rather than what it found: said once under the table when every row shares
# it, a column where rows differ. Config hashes and memory budgets stay in the CSV.
SHARED = ("steps", "seeds", "seed_ids", "commit", "device", "run_dates", "dates_recovered", "torch", "threads", "kernel", "peak_method", "runs", "rows",
          "keys", "pairs", "seed", "held_out_sentences", "frozen_below", "trained_at", "n_blocks", "outcome")
CSV_ONLY = ("config_hash", "need_gb", "budget_gb", "budget_rule")


def for_people(df: pd.DataFrame, shared_columns: tuple | None = None, csv_only: tuple | None = None
               ) -> tuple[pd.DataFrame, list[str]]:
    """The table as people read it (Markdown, the HTML report): formatted cells, mean ± std where a
    `<col>_std` column exists, no empty columns, none of `csv_only` (by default CSV_ONLY); and the `name: value`
    settings every row shares (of `shared_columns`, by default SHARED), said once instead of a column."""
    shared_columns = SHARED if shared_columns is None else shared_columns
    csv_only = CSV_ONLY if csv_only is None else csv_only
    shown, shared = pd.DataFrame(index=df.index), []
    for col in df.columns:
        if col in csv_only or is_seed_detail(col):
            continue
        # rows without a spread (one seed, a fixed row) show the value alone
        std = df[f"{col}_std"] if f"{col}_std" in df.columns else pd.Series(math.nan, index=df.index)
        cells = pd.Series([fmt(v, sd) for v, sd in zip(df[col], std)], index=df.index, dtype=object)
        values = list(dict.fromkeys(v for v in cells if v not in ("", "–")))
        if not values:
            continue  # nothing to say: no row diverged, no run was overridden
        if col in shared_columns and len(values) == 1:
            shared.append(f"{col}{'s' if len(values) > 1 else ''}: {', '.join(values)}")
            continue
        shown[col] = cells
    return shown, shared


# A variant's table (override= or seeds=, attnlab.options) shows each published row its
# runs change beside the variant's: `ablation` says which is which ("" where a row is the same in both).
ABLATION_COLUMN = "ablation"
PUBLISHED_ROW = "published"


def beside_published(published: pd.DataFrame, ours: pd.DataFrame, label: str) -> pd.DataFrame:
    """The variant's rows, each that differs from its published row (same place in the same builder's
    table) preceded by that row; a table whose rows do not line up shows all of both."""
    columns = [*ours.columns, *(c for c in published.columns if c not in ours.columns)]  # e.g. `overrides`
    published, ours = published.reindex(columns=columns), ours.reindex(columns=columns)

    def as_text(df):
        return df.astype(object).where(df.notna(), "").astype(str).values.tolist()

    def tagged(df, tag):
        return df.assign(**{ABLATION_COLUMN: tag})[[ABLATION_COLUMN, *columns]]

    if len(published) != len(ours):
        return pd.concat([tagged(published, PUBLISHED_ROW), tagged(ours, label)], ignore_index=True)
    rows = []
    for i in range(len(ours)):
        before, after = published.iloc[[i]], ours.iloc[[i]]
        if as_text(before) == as_text(after):  # by value: a column only one side has is empty in the other
            rows.append(tagged(after, ""))
        else:
            rows += [tagged(before, PUBLISHED_ROW), tagged(after, label)]
    return pd.concat(rows, ignore_index=True)


def own_rows(df: pd.DataFrame) -> pd.DataFrame:
    """A table as the ledger and the figures read it: a variant's without the published rows it shows (its own rows
    keep their index, so what is read of them can be placed back in the whole table)."""
    if ABLATION_COLUMN not in df.columns:
        return df
    return df[df[ABLATION_COLUMN] != PUBLISHED_ROW].drop(columns=ABLATION_COLUMN)


def parse_named(items: list[str]) -> dict[str, list[str]]:
    named: dict[str, list[str]] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep:
            raise SystemExit(f"error: expected name=path, got {item!r}")
        named.setdefault(name, []).append(path)
    return named


# the column of a reader's view that holds the chapter's number (attnlab.views)
CHAPTER = "chapter"


def transposed(by: str, rows: dict[str, str]):
    """A view with one row per quantity (rows: column → what it is, in words) and one column per value of `by`,
    each followed by the chapter's number where it prints one: a table of few rows and many measured columns."""
    def view(df: pd.DataFrame, chapter: dict) -> pd.DataFrame:
        shown, _ = for_people(df, shared_columns=())
        out = pd.DataFrame({"quantity": list(rows.values())})
        for i, name in zip(df.index, df[by]):
            out[str(name)] = [shown.at[i, c] if c in shown else "" for c in rows]
            printed_here = [chapter.get(c, {}).get(i, "") for c in rows]
            if any(printed_here):
                out[f"{CHAPTER} ({name})"] = printed_here
        return out
    return view
