"""Reading a claim's value out of the tables, checking it, and the verdict.

A value carries the spread its seeds give it (0 where the table has one seed). A cell's spread is its
table's `<column>_std`. Rows read from the same seeds are paired, so the spread of their difference or
ratio is neither the sum of theirs (as if independent) nor zero; a derived value carries the largest
spread of its inputs — a scale that says when the seeds scatter more than a claim's margin, never a
reason to pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from attnlab.claims.render import describe_claim, show, show_chapter, show_number
from attnlab.claims.rules import READ_OPERATORS, TARGET_CHECKS, ClaimsError, is_number


class Missing(Exception):
    """A table, row or column a claim reads was not produced."""


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


def require_columns(df: pd.DataFrame, cols: list[str], table_id: str) -> None:
    absent = [c for c in cols if c not in df.columns]
    if absent:
        raise Missing(f"{table_id}: no column {absent[0]!r} (has {list(df.columns)})")


def read_cells(df: pd.DataFrame, rows: pd.DataFrame, cols: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(value, spread) matrices of rows x cols; the spread 0 where the table has no `<col>_std`."""
    value = numeric(rows[cols])
    std_cols = [f"{c}_std" for c in cols]
    if not all(c in df.columns for c in std_cols):
        return value, np.zeros_like(value)
    return value, np.nan_to_num(numeric(rows[std_cols]))


def read(node: dict, tables: dict, table_id: str):
    """A `column`, `columns` or `lead` read: (value, spread, x)."""
    table_id = node.get("table", table_id)
    if table_id not in tables:
        raise Missing(f"table {table_id} not produced")
    df = tables[table_id]
    rows = select(df, node.get("where"), table_id)
    x = None
    if "x" in node:
        require_columns(df, [node["x"]], table_id)
        x = numeric(rows[[node["x"]]])[:, 0]
    if "columns" in node:
        require_columns(df, node["columns"], table_id)
        value, spread = read_cells(df, rows, node["columns"])
        return value, spread, x
    if "lead" in node:  # how far the lead column is ahead of the largest other cell of its row
        others = [c for c in node["among"] if c != node["lead"]]
        require_columns(df, [node["lead"], *others], table_id)
        lead, lead_spread = read_cells(df, rows, [node["lead"]])
        rest, rest_spread = read_cells(df, rows, others)
        runner_up = np.argmax(rest, axis=1)
        value = lead[:, 0] - rest.max(axis=1)
        spread = np.maximum(lead_spread[:, 0], rest_spread[np.arange(len(rows)), runner_up])
    else:
        require_columns(df, [node["column"]], table_id)
        value, spread = (a[:, 0] for a in read_cells(df, rows, [node["column"]]))
    if len(value) == 1 and "reduce" not in node:  # one row: a number, several: a list
        value, spread = value[0], spread[0]
    return np.asarray(value), np.asarray(spread), x


def evaluate(node, tables: dict, table_id: str) -> tuple[np.ndarray, np.ndarray]:
    """(value, spread) of an expression, as arrays (0-d for a number)."""
    if is_number(node):
        return np.asarray(float(node)), np.asarray(0.0)
    x = None
    if any(op in node for op in READ_OPERATORS):
        value, spread, x = read(node, tables, table_id)
    elif "values" in node:
        parts = [evaluate(child, tables, table_id) for child in node["values"]]
        value, spread = np.array([v for v, _ in parts], dtype=float), np.array([s for _, s in parts], dtype=float)
    else:
        op = "ratio" if "ratio" in node else "difference"
        (a, sa), (b, sb) = (evaluate(child, tables, table_id) for child in node[op])
        if np.shape(a) != np.shape(b) and np.ndim(a) and np.ndim(b):
            raise ClaimsError(f"{op} of values with shapes {np.shape(a)} and {np.shape(b)}")
        with np.errstate(divide="ignore", invalid="ignore"):
            if op == "difference":
                value, spread = a - b, np.maximum(sa, sb)
            else:  # the larger relative spread
                value = a / b
                spread = np.abs(value) * np.maximum(np.nan_to_num(sa / np.abs(a)), np.nan_to_num(sb / np.abs(b)))
    if "reduce" in node:
        value, spread = reduce(node, np.ravel(value), np.ravel(np.broadcast_to(spread, np.shape(value))), x)
    return value, spread


def reduce(node: dict, value: np.ndarray, spread: np.ndarray, x) -> tuple[np.ndarray, np.ndarray]:
    keep = np.isfinite(value) & (np.isfinite(x) & (x > 0) if x is not None else True)
    value, spread = value[keep], spread[keep]
    x = x[keep] if x is not None else None
    if "last" in node:  # the last n rows that hold a number (e.g. before 'out of memory')
        n = int(node["last"])
        value, spread, x = value[-n:], spread[-n:], (x[-n:] if x is not None else None)
    if len(value) == 0:
        raise Missing("no finite value to reduce")
    how = node["reduce"]
    if how in ("max", "min", "first", "last"):
        i = {"max": np.argmax(value), "min": np.argmin(value), "first": 0, "last": -1}[how]
        return np.asarray(value[i]), np.asarray(spread[i])
    if how == "mean":
        return np.asarray(value.mean()), np.asarray(spread.max())
    if how == "range":
        return np.asarray(value.max() - value.min()), np.asarray(max(spread[np.argmax(value)], spread[np.argmin(value)]))
    if len(value) < 2 or np.any(value <= 0):
        raise Missing(f"a log-log slope needs two or more positive values, got {value.tolist()}")
    return np.asarray(np.polyfit(np.log(x), np.log(value), 1)[0]), np.asarray(0.0)  # a fit: no seeds' spread


# ---------------------------------------------------------------- checks

@dataclass
class Outcome:
    status: str  # "pass", "fail" or "inconclusive"
    margin: str  # how far the value is from the chapter (or past the bound), for the ledger


def element_status(margin: np.ndarray, tolerance: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """Per element: margin is the signed distance to the edge of the passing region (>= 0 inside),
    tolerance the region's half-width (0 for a one-sided bound). A spread wider than the tolerance
    that reaches across the edge leaves the data unable to tell a pass from a fail."""
    unclear = (spread > tolerance) & (np.abs(margin) <= spread)
    return np.where(unclear, "inconclusive", np.where(margin >= 0, "pass", "fail"))


def overall(statuses: np.ndarray) -> str:
    """Every element must pass; one clear failure fails the whole."""
    for status in ("fail", "inconclusive"):
        if np.any(statuses == status):
            return status
    return "pass"


def in_spreads(distance: float, spread: float) -> str:
    return f"{abs(distance) / spread:.2g} sd" if spread > 0 else ""


def run_check(check: dict, value, spread, claim: dict, tables: dict) -> Outcome:
    value = np.asarray(value, dtype=float)
    spread = np.broadcast_to(np.asarray(spread, dtype=float), value.shape)

    def operand(key):
        return evaluate(check[key], tables, claim["table"])

    if check["kind"] in TARGET_CHECKS:
        target = operand("to") if "to" in check else (np.asarray(claim["chapter"], dtype=float), 0.0)
        return target_check(check, value, spread, *target)
    return bound_check(check, value, spread, operand)


def target_check(check: dict, value, spread, target, target_spread) -> Outcome:
    """exact / relative / absolute: the value against the chapter's number (or `to`)."""
    if np.ndim(target) and np.shape(value) != np.shape(target):
        return Outcome("fail", f"shape {np.shape(value)} vs the chapter's {np.shape(target)}")
    if check["kind"] == "exact":  # analytic: no spread, only the chapter's printed precision
        decimals = check.get("decimals")
        a, b = (np.round(value, decimals), np.round(target, decimals)) if decimals is not None else (value, target)
        gap = np.max(np.abs(a - b))
        return Outcome("pass", "exact") if gap == 0 else Outcome("fail", f"off by {show_number(float(gap))}")
    gap = np.abs(value - target)
    tolerance = np.broadcast_to(check["tolerance"] * (np.abs(target) if check["kind"] == "relative" else 1.0), gap.shape)
    spread = np.maximum(spread, target_spread)
    statuses = element_status(tolerance - gap, tolerance, spread)
    worst = np.unravel_index(np.argmax(gap / tolerance), gap.shape)
    margin = [f"{gap[worst] / tolerance[worst]:.2g} tol", in_spreads(gap[worst], spread[worst])]
    return Outcome(overall(statuses), ", ".join(filter(None, margin)))


def bound_check(check: dict, value, spread, operand) -> Outcome:
    """above / below / between / increasing / decreasing: how far the value clears its bound."""
    kind = check["kind"]
    tolerance = 0.0  # a one-sided bound has no tolerance band
    if kind == "between":
        (low, low_spread), (high, high_spread) = operand("low"), operand("high")
        margin, tolerance = np.minimum(value - low, high - value), (high - low) / 2
        spread = np.maximum(spread, np.maximum(low_spread, high_spread))
    elif kind in ("above", "below"):
        (bound, bound_spread), factor = operand("than"), float(check.get("factor", 1.0))
        margin = (value - factor * bound) if kind == "above" else (factor * bound - value)
        spread = np.maximum(spread, factor * bound_spread)
    else:  # increasing / decreasing: each step by at least `by`, a fraction of the value before it
        if np.ndim(value) != 1 or len(value) < 2:
            return Outcome("fail", f"{kind} needs a list of two or more values, got {np.ravel(value).tolist()}")
        by, before, after = float(check.get("by", 0.0)), value[:-1], value[1:]
        margin = after - before * (1 + by) if kind == "increasing" else before * (1 - by) - after
        spread = np.maximum(spread[:-1], spread[1:])
    margin, spread = np.broadcast_arrays(np.asarray(margin, dtype=float), spread)
    statuses = element_status(margin, np.broadcast_to(tolerance, margin.shape), spread)
    tightest = np.unravel_index(np.argmin(margin), margin.shape)
    text = f"{'clears' if margin[tightest] >= 0 else 'misses'} by {show_number(abs(float(margin[tightest])))}"
    sds = in_spreads(margin[tightest], spread[tightest])
    return Outcome(overall(statuses), text + (f" ({sds})" if sds else ""))


# ---------------------------------------------------------------- verdicts

def verdict(rule: str, conclusion: str | None) -> str:
    """From the rule's and the conclusion's status (None: the claim has no conclusion)."""
    if conclusion == "fail":
        return "CONTRADICTED"  # the chapter's point is false, whatever the number
    if rule == "pass" and conclusion in (None, "pass"):
        return "MATCH"
    if "inconclusive" in (rule, conclusion):
        return "INCONCLUSIVE"
    return "CONCLUSION HOLDS" if conclusion == "pass" else "CONTRADICTED"


def judge(claim: dict, tables: dict) -> dict:
    row = {"id": claim["id"], "table": claim["table"], "statement": " ".join(str(claim["statement"]).split()),
           "chapter": show_chapter(claim["chapter"]), "reproduced": "–", "rule": describe_claim(claim),
           "headline": bool(claim.get("headline"))}
    try:
        value, spread = evaluate(claim["value"], tables, claim["table"])
        row["reproduced"] = show(value, spread)
        rule = run_check(claim["rule"], value, spread, claim, tables)
        conclusion, note = claim.get("conclusion"), ""
        if conclusion:
            read_apart = "value" in conclusion
            c_value, c_spread = evaluate(conclusion["value"], tables, claim["table"]) if read_apart else (value, spread)
            concluded = run_check(conclusion, c_value, c_spread, claim, tables)
            note = (f"conclusion {concluded.status}" + (f" on {show(c_value, c_spread)}" if read_apart else "")
                    + f": {concluded.margin}")
    except Missing as why:
        return {**row, "verdict": "MISSING", "margin": "–", "note": str(why)}
    return {**row, "verdict": verdict(rule.status, concluded.status if conclusion else None),
            "margin": rule.margin, "note": note}


def ledger(claims: list[dict], tables: dict, profile: str, seeds: int) -> pd.DataFrame:
    df = pd.DataFrame([judge(claim, tables) for claim in claims])
    df["profile"], df["seeds"] = profile, seeds
    return df
