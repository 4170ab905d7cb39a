"""The claims ledger: every figure the chapter prints, judged against the tables this pipeline wrote.

    python -m attnlab.claims check --profile P --seeds N --csv claims.csv --md claims.md \
        --html claims.html results/P/tables/<id>.csv ...
    python -m attnlab.claims readme --ledger results/full/claims.csv --readme README.md \
        --out section.md [table=results/full/tables/<id>.md ...] [figure=figures/full/<id>.png ...]

configs/claims.yaml holds the chapter's numbers (its header documents the vocabulary). A claim
reads a value out of a table CSV (table + row selector + column, optionally combined and reduced),
checks it with its `rule` and, where given, its `conclusion`:
  MATCH             the rule holds (and the conclusion, if any)
  CONCLUSION HOLDS  the number is off but the chapter's conclusion holds
  CONTRADICTED      the rule fails and no conclusion holds
  MISSING           the table, a selected row or a column was not produced
With several seeds a table carries `<col>_std`; a difference within that spread is not a failure.
"""

from __future__ import annotations

import argparse
import html
import math
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from attnlab.data import atomic_path

ROOT = Path(__file__).resolve().parents[2]
CLAIMS_FILE = ROOT / "configs" / "claims.yaml"
VERDICTS = ("MATCH", "CONCLUSION HOLDS", "CONTRADICTED", "MISSING")
TARGET_CHECKS = ("exact", "relative", "absolute")  # compared with the chapter's number (or `to`)
SHAPE_CHECKS = ("above", "below", "between", "increasing", "decreasing")
CHECK_KEYS = {"exact": {"decimals", "to"}, "relative": {"tolerance", "to"}, "absolute": {"tolerance", "to"},
              "above": {"than", "factor"}, "below": {"than", "factor"}, "between": {"low", "high"},
              "increasing": set(), "decreasing": set()}
REDUCERS = ("max", "min", "mean", "first", "last", "range", "loglog_slope")
OPERATORS = ("column", "columns", "ratio", "difference", "values")
CLAIM_KEYS = {"id", "table", "statement", "chapter", "value", "rule", "conclusion"}
README_START, README_END = "<!-- results:start -->", "<!-- results:end -->"


class ClaimsError(ValueError):
    """configs/claims.yaml (or a README) is malformed."""


class Missing(Exception):
    """A table, row or column a claim reads was not produced."""


# ---------------------------------------------------------------- loading and validation

def load_claims(path: str | Path = CLAIMS_FILE) -> list[dict]:
    doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    claims = doc.get("claims") if isinstance(doc, dict) else None
    if not isinstance(claims, list) or not claims:
        raise ClaimsError(f"{path}: expected a top-level `claims:` list")
    seen = set()
    for claim in claims:
        validate_claim(claim)
        if claim["id"] in seen:
            raise ClaimsError(f"claim id {claim['id']!r} appears twice")
        seen.add(claim["id"])
    return claims


def validate_claim(claim: dict) -> None:
    where = f"claim {claim.get('id', claim)!r}"
    if not isinstance(claim, dict):
        raise ClaimsError(f"{where}: expected a mapping")
    missing = {"id", "table", "statement", "chapter", "value", "rule"} - claim.keys()
    if missing:
        raise ClaimsError(f"{where}: missing {sorted(missing)}")
    unknown = claim.keys() - CLAIM_KEYS
    if unknown:
        raise ClaimsError(f"{where}: unknown keys {sorted(unknown)}; allowed: {sorted(CLAIM_KEYS)}")
    validate_expr(claim["value"], where)
    validate_check(claim["rule"], claim, f"{where} rule")
    if "conclusion" in claim:
        conclusion = claim["conclusion"]
        validate_check(conclusion, claim, f"{where} conclusion", extra={"value", "says"})
        if "value" in conclusion:
            validate_expr(conclusion["value"], where)


def validate_check(check, claim: dict, where: str, extra: frozenset | set = frozenset()) -> None:
    if not isinstance(check, dict) or check.get("kind") not in CHECK_KEYS:
        kind = check.get("kind") if isinstance(check, dict) else check
        raise ClaimsError(f"{where}: kind {kind!r} unknown; allowed: {sorted(CHECK_KEYS)}")
    kind = check["kind"]
    unknown = check.keys() - CHECK_KEYS[kind] - set(extra) - {"kind"}
    if unknown:
        raise ClaimsError(f"{where}: {kind} takes {sorted(CHECK_KEYS[kind] | set(extra))}, not {sorted(unknown)}")
    needed = {"relative": {"tolerance"}, "absolute": {"tolerance"}, "above": {"than"}, "below": {"than"},
              "between": {"low", "high"}}.get(kind, set())
    if needed - check.keys():
        raise ClaimsError(f"{where}: {kind} needs {sorted(needed - check.keys())}")
    if kind in TARGET_CHECKS and "to" not in check and not is_number_or_list(claim["chapter"]):
        raise ClaimsError(f"{where}: {kind} compares with a number, but chapter is {claim['chapter']!r}; "
                          "give a numeric chapter value or `to:`")
    for key in ("to", "than", "low", "high"):
        if key in check:
            validate_expr(check[key], where)


def validate_expr(node, where: str) -> None:
    if is_number(node):
        return
    if not isinstance(node, dict):
        raise ClaimsError(f"{where}: a value is a number or a mapping with one of {OPERATORS}, got {node!r}")
    ops = [op for op in OPERATORS if op in node]
    if len(ops) != 1:
        raise ClaimsError(f"{where}: a value needs exactly one of {OPERATORS}, got {sorted(node)}")
    allowed = {ops[0], "reduce", "last"} | ({"table", "where", "x"} if ops[0] in ("column", "columns") else set())
    if node.keys() - allowed:
        raise ClaimsError(f"{where}: {ops[0]} takes {sorted(allowed)}, not {sorted(node.keys() - allowed)}")
    if node.get("reduce", "max") not in REDUCERS:
        raise ClaimsError(f"{where}: reduce {node['reduce']!r} unknown; allowed: {REDUCERS}")
    if (node.get("reduce") == "loglog_slope") != ("x" in node):
        raise ClaimsError(f"{where}: reduce loglog_slope needs `x:` (the column it is fitted against) and only it")
    if ops[0] in ("ratio", "difference"):
        if not isinstance(node[ops[0]], list) or len(node[ops[0]]) != 2:
            raise ClaimsError(f"{where}: {ops[0]} takes a list of two values")
    if ops[0] in ("ratio", "difference", "values"):
        for child in node[ops[0]]:
            validate_expr(child, where)


def is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def is_number_or_list(x) -> bool:
    return is_number(x) or (isinstance(x, list) and bool(x) and all(is_number_or_list(v) for v in x))


# ---------------------------------------------------------------- reading values out of tables

def load_tables(paths: list[str | Path]) -> dict[str, pd.DataFrame]:
    """Table CSVs by id (the file's stem)."""
    return {Path(p).stem: pd.read_csv(p) for p in paths}


def select(df: pd.DataFrame, where: dict, table_id: str) -> pd.DataFrame:
    mask = pd.Series(True, index=df.index)
    for col, want in (where or {}).items():
        if col not in df.columns:
            raise Missing(f"{table_id}: no column {col!r} to select rows by (has {list(df.columns)})")
        if is_number(want):
            mask &= np.isclose(pd.to_numeric(df[col], errors="coerce"), want, rtol=0, atol=1e-12)
        else:
            mask &= df[col].astype(str).str.strip() == str(want)
    if not mask.any():
        raise Missing(f"{table_id}: no row where {where}")
    return df[mask]


def numeric(frame: pd.DataFrame) -> np.ndarray:
    """Cells as floats; text such as 'out of memory' becomes NaN."""
    return frame.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)


def read_columns(node: dict, tables: dict, table_id: str):
    table_id = node.get("table", table_id)
    if table_id not in tables:
        raise Missing(f"table {table_id} not produced")
    df = tables[table_id]
    rows = select(df, node.get("where"), table_id)
    cols = node["columns"] if "columns" in node else [node["column"]]
    absent = [c for c in cols if c not in df.columns]
    if absent:
        raise Missing(f"{table_id}: no column {absent[0]!r} (has {list(df.columns)})")
    value = numeric(rows[cols])
    std_cols = [f"{c}_std" for c in cols]
    std = np.nan_to_num(numeric(rows[std_cols])) if all(c in df.columns for c in std_cols) else np.zeros_like(value)
    x = None
    if "x" in node:
        if node["x"] not in df.columns:
            raise Missing(f"{table_id}: no column {node['x']!r} (has {list(df.columns)})")
        x = numeric(rows[[node["x"]]])[:, 0]
    if "column" in node:  # one column: a scalar for one row, a list for several
        value, std = value[:, 0], std[:, 0]
        if len(value) == 1 and "reduce" not in node:
            value, std = value[0], std[0]
    return np.asarray(value), np.asarray(std), x


def evaluate(node, tables: dict, table_id: str) -> tuple[np.ndarray, np.ndarray]:
    """(value, spread) of an expression; arrays (0-d for a scalar), the spread 0 where unknown."""
    if is_number(node):
        return np.asarray(float(node)), np.asarray(0.0)
    x = None
    if "column" in node or "columns" in node:
        value, std, x = read_columns(node, tables, table_id)
    elif "values" in node:
        parts = [evaluate(child, tables, table_id) for child in node["values"]]
        value, std = np.array([v for v, _ in parts], dtype=float), np.array([s for _, s in parts], dtype=float)
    else:
        op = "ratio" if "ratio" in node else "difference"
        (a, sa), (b, sb) = (evaluate(child, tables, table_id) for child in node[op])
        if np.shape(a) != np.shape(b) and np.ndim(a) and np.ndim(b):
            raise ClaimsError(f"{op} of values with shapes {np.shape(a)} and {np.shape(b)}")
        with np.errstate(divide="ignore", invalid="ignore"):
            if op == "difference":
                value, std = a - b, np.hypot(sa, sb)
            else:  # relative spreads add in quadrature
                value = a / b
                std = np.abs(value) * np.hypot(np.nan_to_num(sa / np.abs(a)), np.nan_to_num(sb / np.abs(b)))
    if "reduce" in node:
        value, std = reduce(node, np.ravel(value), np.ravel(std), x)
    return value, std


def reduce(node: dict, value: np.ndarray, std: np.ndarray, x) -> tuple[np.ndarray, np.ndarray]:
    keep = np.isfinite(value) & (np.isfinite(x) & (x > 0) if x is not None else True)
    value, std = value[keep], std[keep]
    x = x[keep] if x is not None else None
    if "last" in node:  # the last n rows that hold a number (e.g. before 'out of memory')
        n = int(node["last"])
        value, std, x = value[-n:], std[-n:], (x[-n:] if x is not None else None)
    if len(value) == 0:
        raise Missing("no finite value to reduce")
    how = node["reduce"]
    if how in ("max", "min", "first", "last"):
        i = {"max": np.argmax(value), "min": np.argmin(value), "first": 0, "last": -1}[how]
        return np.asarray(value[i]), np.asarray(std[i])
    if how == "mean":
        return np.asarray(value.mean()), np.asarray(np.sqrt((std ** 2).sum()) / len(std))
    if how == "range":
        return np.asarray(value.max() - value.min()), np.asarray(np.hypot(std[np.argmax(value)], std[np.argmin(value)]))
    if len(value) < 2 or np.any(value <= 0):
        raise Missing(f"a log-log slope needs two or more positive values, got {value.tolist()}")
    return np.asarray(np.polyfit(np.log(x), np.log(value), 1)[0]), np.asarray(0.0)


# ---------------------------------------------------------------- checks and verdicts

def run_check(check: dict, value, std, claim: dict, tables: dict) -> tuple[bool, str]:
    """Does `value` (± std) pass the check? Returns (holds, note); the note says when only the spread saved it."""
    kind, table_id = check["kind"], claim["table"]

    def operand(key, default=None):
        node = check.get(key, default)
        return evaluate(node, tables, table_id)

    value, std = np.asarray(value, dtype=float), np.asarray(std, dtype=float)
    if kind in TARGET_CHECKS:
        target, target_std = operand("to", claim["chapter"]) if "to" in check else (
            np.asarray(claim["chapter"], dtype=float), np.asarray(0.0))
        if np.ndim(target) and np.shape(value) != np.shape(target):
            return False, f"shape {np.shape(value)} vs the chapter's {np.shape(target)}"
        if kind == "exact":  # analytic: no spread, only the chapter's printed precision
            decimals = check.get("decimals")
            a, b = (np.round(value, decimals), np.round(target, decimals)) if decimals is not None else (value, target)
            return bool(np.all(np.isclose(a, b, rtol=1e-12, atol=0))), ""
        gap = np.abs(value - target)
        allowed = check["tolerance"] * (np.abs(target) if kind == "relative" else 1.0)
        spread = np.hypot(std, target_std)
        strict, loose = gap <= allowed, gap <= np.maximum(allowed, spread)
        return bool(np.all(loose)), ("within the seeds' spread" if np.all(loose) and not np.all(strict) else "")
    if kind in ("above", "below"):
        bound, bound_std = operand("than")
        factor = float(check.get("factor", 1.0))
        bound, spread = factor * bound, np.hypot(std, factor * bound_std)
        strict = value > bound if kind == "above" else value < bound
        loose = strict | (np.abs(value - bound) <= spread) & (spread > 0)
        return bool(np.all(loose)), ("within the seeds' spread" if np.all(loose) and not np.all(strict) else "")
    if kind == "between":
        (low, low_std), (high, high_std) = operand("low"), operand("high")
        strict = (value >= low) & (value <= high)
        loose = (value + np.hypot(std, low_std) >= low) & (value - np.hypot(std, high_std) <= high)
        return bool(np.all(loose)), ("within the seeds' spread" if np.all(loose) and not np.all(strict) else "")
    # increasing / decreasing: a shape over a list of at least two values
    if np.ndim(value) != 1 or len(value) < 2:
        return False, f"{kind} needs a list of two or more values, got {np.ravel(value).tolist()}"
    steps = np.diff(value) * (1 if kind == "increasing" else -1)
    spread = np.hypot(std[:-1], std[1:]) if np.ndim(std) else np.zeros_like(steps)
    strict, loose = steps > 0, (steps > 0) | ((np.abs(steps) <= spread) & (spread > 0))
    return bool(np.all(loose)), ("within the seeds' spread" if np.all(loose) and not np.all(strict) else "")


def judge(claim: dict, tables: dict) -> dict:
    row = {"id": claim["id"], "table": claim["table"], "statement": " ".join(str(claim["statement"]).split()),
           "chapter": show_chapter(claim["chapter"]), "reproduced": "–", "rule": describe_claim(claim)}
    try:
        value, std = evaluate(claim["value"], tables, claim["table"])
        row["reproduced"] = show(value, std)
        holds, note = run_check(claim["rule"], value, std, claim, tables)
        notes = [note] if note else []
        conclusion = claim.get("conclusion")
        concluded = None
        if conclusion:
            if "value" in conclusion:
                c_value, c_std = evaluate(conclusion["value"], tables, claim["table"])
                notes.append(f"conclusion reads {show(c_value, c_std)}")
            else:
                c_value, c_std = value, std
            concluded, c_note = run_check(conclusion, c_value, c_std, claim, tables)
            notes += [f"conclusion {c_note}"] if c_note else []
    except Missing as why:
        return {**row, "verdict": "MISSING", "note": str(why)}
    if holds and concluded in (None, True):
        verdict = "MATCH"
    elif concluded:
        verdict = "CONCLUSION HOLDS"
    else:
        verdict = "CONTRADICTED"
    return {**row, "verdict": verdict, "note": "; ".join(notes)}


def ledger(claims: list[dict], tables: dict, profile: str, seeds: int) -> pd.DataFrame:
    df = pd.DataFrame([judge(claim, tables) for claim in claims])
    df["profile"], df["seeds"] = profile, seeds
    return df


# ---------------------------------------------------------------- formatting

def show_number(x: float) -> str:
    if not math.isfinite(x):
        return "nan" if math.isnan(x) else str(x)
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}"
    if abs(x) < 1e-3 or abs(x) >= 1e6:
        return f"{x:.3g}"
    return f"{x:.4g}" if abs(x) < 100 else f"{x:,.2f}"


def show(value, std=0.0) -> str:
    value, std = np.asarray(value, dtype=float), np.broadcast_to(np.asarray(std, dtype=float), np.shape(value))
    if value.ndim == 0:
        return show_number(float(value)) + (f" ± {show_number(float(std))}" if std > 0 else "")
    return "[" + ", ".join(show(v, s) for v, s in zip(value, std)) + "]"


def show_chapter(chapter) -> str:
    """The chapter's value as printed (every digit it gives)."""
    if is_number(chapter):
        return f"{chapter:,.10g}"
    if is_number_or_list(chapter):
        return "[" + ", ".join(show_chapter(v) for v in chapter) + "]"
    return str(chapter)


def describe_expr(node) -> str:
    if is_number(node):
        return show_number(float(node))
    if "ratio" in node or "difference" in node:
        op = "ratio" if "ratio" in node else "difference"
        a, b = (describe_expr(child) for child in node[op])
        text = f"{a} / {b}" if op == "ratio" else f"{a} − {b}"
    elif "values" in node:
        text = "[" + ", ".join(describe_expr(child) for child in node["values"]) + "]"
    else:
        where = ",".join(f"{k}={v}" for k, v in (node.get("where") or {}).items())
        cols = node.get("column") or "|".join(node["columns"])
        text = (f"{node['table']}." if "table" in node else "") + cols + (f"[{where}]" if where else "")
    if "reduce" in node:
        last = f" of last {node['last']}" if "last" in node else ""
        text = f"{node['reduce']}{last}({text}" + (f" vs {node['x']})" if "x" in node else ")")
    return text


def describe_check(check: dict) -> str:
    kind = check["kind"]
    target = f" to {describe_expr(check['to'])}" if "to" in check else ""
    if kind == "exact":
        return "exact" + target + (f" ({check['decimals']} decimals)" if "decimals" in check else "")
    if kind == "relative":
        return f"within {check['tolerance'] * 100:g} %{target}"
    if kind == "absolute":
        return f"within ±{show_number(check['tolerance'])}{target}"
    if kind in ("above", "below"):
        factor = f"{check['factor']:g} × " if "factor" in check else ""
        return f"{'>' if kind == 'above' else '<'} {factor}{describe_expr(check['than'])}"
    if kind == "between":
        return f"between {describe_expr(check['low'])} and {describe_expr(check['high'])}"
    return kind


def describe_claim(claim: dict) -> str:
    text = describe_check(claim["rule"])
    conclusion = claim.get("conclusion")
    if conclusion:
        said = conclusion.get("says") or (
            (f"{describe_expr(conclusion['value'])} " if "value" in conclusion else "") + describe_check(conclusion))
        text += f"; conclusion: {said}"
    return text


def is_judged_loosely(profile: str) -> bool:
    return profile != "full"


def summary_line(df: pd.DataFrame) -> str:
    profile, seeds = df["profile"].iloc[0], int(df["seeds"].iloc[0])
    counts = df["verdict"].value_counts()
    label = f"profile {profile}, {seeds} seed{'s' if seeds > 1 else ''}"
    if is_judged_loosely(profile):
        label += f"; {profile} numbers are not expected to match the chapter"
    return (f"claims ({label}): {len(df)} — "
            + ", ".join(f"{int(counts.get(v, 0))} {v}" for v in VERDICTS))


def ledger_markdown(df: pd.DataFrame) -> str:
    profile = df["profile"].iloc[0]
    lines = [f"# Claims ledger — profile `{profile}`", ""]
    if is_judged_loosely(profile):
        lines += [f"> Profile **{profile}** is a pipeline check with short runs: its verdicts show that every "
                  "claim can be read and judged, not whether the chapter's numbers come back.", ""]
    lines += [f"**{summary_line(df)}**", ""]
    cols = ["id", "table", "statement", "chapter", "reproduced", "rule", "verdict", "note"]
    cells = df[cols].astype(str).apply(lambda col: col.str.replace("|", "\\|", regex=False))
    lines.append(cells.to_markdown(index=False, disable_numparse=True))
    return "\n".join(lines) + "\n"


VERDICT_COLOURS = {"MATCH": "#d8f0d8", "CONCLUSION HOLDS": "#eef5c8", "CONTRADICTED": "#f6d0d0",
                   "MISSING": "#e4e4e4"}


def ledger_html(df: pd.DataFrame) -> str:
    """A self-contained page (no scripts, no external files) for the Snakemake report."""
    profile = df["profile"].iloc[0]
    cols = ["id", "table", "statement", "chapter", "reproduced", "rule", "verdict", "note"]
    head = "".join(f"<th>{c}</th>" for c in cols)
    body = "\n".join(
        f"<tr style='background:{VERDICT_COLOURS[r.verdict]}'>"
        + "".join(f"<td>{html.escape(str(getattr(r, c)))}</td>" for c in cols) + "</tr>"
        for r in df.itertuples())
    warning = (f"<p class=warn>Profile <b>{profile}</b> is a pipeline check with short runs: its verdicts show "
               "that every claim can be read and judged, not whether the chapter's numbers come back.</p>"
               if is_judged_loosely(profile) else "")
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Claims ledger ({html.escape(profile)})</title>
<style>body{{font-family:sans-serif;font-size:13px;margin:1em}} table{{border-collapse:collapse}}
td,th{{border:1px solid #bbb;padding:3px 6px;vertical-align:top}} th{{background:#f0f0f0}}
.warn{{background:#fff3cd;padding:6px}}</style></head><body>
<h2>Claims ledger — profile {html.escape(profile)}</h2>
{warning}<p><b>{html.escape(summary_line(df))}</b></p>
<table><tr>{head}</tr>
{body}
</table></body></html>
"""


def write_ledger(df: pd.DataFrame, csv_path, md_path, html_path=None) -> None:
    with atomic_path(Path(csv_path)) as tmp:
        df.to_csv(tmp, index=False)
    with atomic_path(Path(md_path)) as tmp:
        tmp.write_text(ledger_markdown(df), encoding="utf-8")
    if html_path:
        with atomic_path(Path(html_path)) as tmp:
            tmp.write_text(ledger_html(df), encoding="utf-8")


# ---------------------------------------------------------------- README results section

def readme_section(df: pd.DataFrame, readme_dir: Path, ledger_path: Path,
                   tables: list[str], figures: list[str]) -> str:
    def link(path) -> str:
        return f"[{Path(path).stem}]({Path(os.path.relpath(Path(path).resolve(), readme_dir.resolve())).as_posix()})"

    ledger_md = Path(ledger_path).with_suffix(".md")
    compact = df[["id", "chapter", "reproduced", "verdict"]].astype(str).apply(
        lambda col: col.map(lambda cell: cell if len(cell) <= 40 else cell[:39] + "…").str.replace("|", "\\|", regex=False))
    lines = [README_START,
             "<!-- generated by `python -m attnlab.claims readme` (rule readme_results); do not edit by hand -->",
             "", f"**{summary_line(df)}.** Full ledger with statements and rules: "
             f"{link(ledger_md) if ledger_md.exists() else ledger_md.as_posix()}.", ""]
    lines += [compact.to_markdown(index=False, disable_numparse=True), ""]
    if tables:
        lines += ["Tables: " + " · ".join(link(p) for p in sorted(tables)), ""]
    if figures:
        lines += ["Figures: " + " · ".join(link(p) for p in sorted(figures)), ""]
    lines.append(README_END)
    return "\n".join(lines)


def splice_readme(readme: Path, section: str) -> None:
    """Replace the text between the results markers; fails before writing anything if they are absent."""
    text = readme.read_text(encoding="utf-8")
    starts, ends = text.count(README_START), text.count(README_END)
    if starts != 1 or ends != 1 or text.index(README_START) > text.index(README_END):
        raise ClaimsError(f"{readme}: needs exactly one {README_START!r} followed by one {README_END!r} "
                          f"(found {starts} and {ends}); add them where the Results section goes")
    before, rest = text.split(README_START)
    after = rest.split(README_END, 1)[1]
    with atomic_path(readme) as tmp:
        tmp.write_text(before + section + after, encoding="utf-8")


# ---------------------------------------------------------------- command line

def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="judge every claim against the table CSVs")
    check.add_argument("--claims", default=str(CLAIMS_FILE))
    check.add_argument("--profile", required=True)
    check.add_argument("--seeds", type=int, default=1)
    check.add_argument("--csv", required=True)
    check.add_argument("--md", required=True)
    check.add_argument("--html")
    check.add_argument("tables", nargs="*", help="table CSVs, <id>.csv")
    readme = sub.add_parser("readme", help="write the README's Results section from a ledger")
    readme.add_argument("--ledger", required=True, help="claims.csv (of the full profile)")
    readme.add_argument("--readme", default="README.md")
    readme.add_argument("--out", help="also write the section here (the pipeline's record of it)")
    readme.add_argument("links", nargs="*", help="table=<path.md> or figure=<path.png>")
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            df = ledger(load_claims(args.claims), load_tables(args.tables), args.profile, args.seeds)
            write_ledger(df, args.csv, args.md, args.html)
            print(summary_line(df))
            return
        links = {"table": [], "figure": []}
        for item in args.links:
            kind, sep, path = item.partition("=")
            if not sep or kind not in links:
                raise ClaimsError(f"expected table=<path> or figure=<path>, got {item!r}")
            links[kind].append(path)
        readme_path = Path(args.readme)
        if not readme_path.exists():
            raise ClaimsError(f"{readme_path} does not exist")
        df = pd.read_csv(args.ledger, keep_default_na=False)
        section = readme_section(df, readme_path.parent, Path(args.ledger), links["table"], links["figure"])
        splice_readme(readme_path, section)
        if args.out:
            with atomic_path(Path(args.out)) as tmp:
                tmp.write_text(section + "\n", encoding="utf-8")
        print(summary_line(df))
    except ClaimsError as err:
        raise SystemExit(f"error: {err}")


if __name__ == "__main__":
    main(sys.argv[1:])
