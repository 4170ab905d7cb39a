"""Reading a claim's value out of the tables, checking it, and the verdict.

Every value is read per seed (`<col>_seeds`, in seed order; a cell without it is one value) and
carries its seeds on a last axis, so differences, ratios, leads and reductions are computed seed by
seed (rows trained from the same seeds are paired) and summarised only when a check decides:
attnlab.claims.stats says how.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from attnlab.claims import stats
from attnlab.claims.render import describe_claim, show, show_chapter, show_number
from attnlab.claims.rules import READ_OPERATORS, TARGET_CHECKS, ClaimsError, is_number
from attnlab.tables import SEEDS_SUFFIX, own_rows, per_seed


class Missing(Exception):
    """A table, row or column a claim reads was not produced."""


# ---------------------------------------------------------------- reading values out of tables

def load_tables(paths) -> dict[str, pd.DataFrame]:
    """Table CSVs by id (the file's stem); a variant's without the published rows it shows beside its own."""
    return {Path(p).stem: own_rows(pd.read_csv(p)) for p in paths}


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


def require_columns(df: pd.DataFrame, cols: list[str], table_id: str) -> None:
    absent = [c for c in cols if c not in df.columns]
    if absent:
        raise Missing(f"{table_id}: no column {absent[0]!r} (has {list(df.columns)})")


def align(*arrays: np.ndarray) -> list[np.ndarray]:
    """Seed axes made compatible: values with several seeds keep the seeds they all have (seed k pairs
    with seed k); a value without seeds (length 1) broadcasts."""
    counts = [a.shape[-1] for a in arrays if a.shape[-1] > 1]
    if not counts:
        return list(arrays)
    n = min(counts)
    return [a[..., :n] if a.shape[-1] > 1 else a for a in arrays]


def read_cells(df: pd.DataFrame, rows: pd.DataFrame, cols: list[str]) -> np.ndarray:
    """rows x cols x seeds. Text such as 'out of memory' is NaN."""
    means = rows[cols].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    cells = [[[mean] for mean in row] for row in means]
    for j, col in enumerate(cols):
        if f"{col}{SEEDS_SUFFIX}" in df.columns:
            for i, cell in enumerate(rows[f"{col}{SEEDS_SUFFIX}"]):
                cells[i][j] = per_seed(cell) or cells[i][j]
    counts = [len(c) for row in cells for c in row if len(c) > 1]
    n = min(counts) if counts else 1
    return np.array([[c[:n] if len(c) > 1 else c * n for c in row] for row in cells], dtype=float)


def read(node: dict, tables: dict, table_id: str) -> tuple[np.ndarray, np.ndarray | None]:
    """A `column`, `columns` or `lead` read: (value with its seed axis, x)."""
    table_id = node.get("table", table_id)
    if table_id not in tables:
        raise Missing(f"table {table_id} not produced")
    df = tables[table_id]
    rows = select(df, node.get("where"), table_id)
    x = None
    if "x" in node:
        require_columns(df, [node["x"]], table_id)
        x = pd.to_numeric(rows[node["x"]], errors="coerce").to_numpy(dtype=float)
    if "columns" in node:
        require_columns(df, node["columns"], table_id)
        value = read_cells(df, rows, node["columns"])
    elif "lead" in node:  # per row and seed: the lead column minus the largest other cell of the row
        others = [c for c in node["among"] if c != node["lead"]]
        require_columns(df, [node["lead"], *others], table_id)
        lead, rest = align(read_cells(df, rows, [node["lead"]]), read_cells(df, rows, others))
        value = lead[:, 0] - rest.max(axis=1)
    elif "matches" in node:  # a text cell as a fact: 1 where it contains the text, else 0
        require_columns(df, [node["column"]], table_id)
        value = rows[node["column"]].astype(str).str.contains(node["matches"], regex=False).to_numpy(float)[:, None]
    else:
        require_columns(df, [node["column"]], table_id)
        value = read_cells(df, rows, [node["column"]])[:, 0]
    if len(value) == 1 and "reduce" not in node:  # one row: a number, several: a list
        value = value[0]
    return value, x


def uses_lead(node) -> bool:
    """Does an expression read a lead (an outcome per seed: which weight is the largest)?"""
    if isinstance(node, dict):
        return "lead" in node or any(uses_lead(child) for child in node.values())
    return isinstance(node, list) and any(uses_lead(child) for child in node)


def evaluate(node, tables: dict, table_id: str) -> np.ndarray:
    """An expression's value per seed: shape (..., seeds); a number has one seed."""
    if is_number(node):
        return np.array([float(node)])
    x = None
    if any(op in node for op in READ_OPERATORS):
        value, x = read(node, tables, table_id)
    elif "values" in node:
        parts = align(*(evaluate(child, tables, table_id) for child in node["values"]))
        value = np.stack(np.broadcast_arrays(*parts))
    else:
        op = "ratio" if "ratio" in node else "difference"
        a, b = align(*(evaluate(child, tables, table_id) for child in node[op]))
        if a.shape[:-1] != b.shape[:-1] and a.ndim > 1 and b.ndim > 1:
            raise ClaimsError(f"{op} of values with shapes {a.shape[:-1]} and {b.shape[:-1]}")
        with np.errstate(divide="ignore", invalid="ignore"):
            value = a - b if op == "difference" else a / b
    if "reduce" in node:
        value = reduce(node, value.reshape(-1, value.shape[-1]), x)
    return value


def reduce(node: dict, value: np.ndarray, x) -> np.ndarray:
    """rows x seeds -> seeds: each seed reduced over the rows that hold a number in every seed."""
    keep = np.isfinite(value).all(axis=1) & (np.isfinite(x) & (x > 0) if x is not None else True)
    value, x = value[keep], (x[keep] if x is not None else None)
    if "last" in node:  # the last n rows that hold a number (e.g. before 'out of memory')
        n = int(node["last"])
        value, x = value[-n:], (x[-n:] if x is not None else None)
    if len(value) == 0:
        raise Missing("no finite value to reduce")
    how = node["reduce"]
    if how in ("max", "min", "mean"):
        return getattr(value, how)(axis=0)
    if how in ("first", "last"):
        return value[0 if how == "first" else -1]
    if how == "range":
        return value.max(axis=0) - value.min(axis=0)
    if len(value) < 2 or np.any(value <= 0):
        raise Missing(f"a log-log slope needs two or more positive values, got {value.mean(axis=1).tolist()}")
    return np.array([stats.loglog_slope(x, seed) for seed in value.T])  # one fit per seed


# ---------------------------------------------------------------- checks

@dataclass
class Outcome:
    status: str                   # "pass", "fail" or "inconclusive"
    margin: str                   # how far the value is from the chapter (or past the bound), for the ledger
    share: str = ""               # "k/n": seeds in which the outcome holds, where the check is judged on them
    to_decide: int | None = None  # seeds that would decide it, where it is inconclusive and some number would


def overall(statuses) -> str:
    """Every element must pass; one clear failure fails the whole."""
    statuses = np.asarray(statuses)
    for status in ("fail", "inconclusive"):
        if np.any(statuses == status):
            return status
    return "pass"


def chapter_value(claim: dict) -> np.ndarray:
    return np.asarray(claim["chapter"], dtype=float)[..., None]


def run_check(check: dict, value: np.ndarray, claim: dict, tables: dict, by_share: bool = False) -> Outcome:
    def operand(key):
        return evaluate(check[key], tables, claim["table"])

    kind = check["kind"]
    if kind in TARGET_CHECKS:
        target = operand("to") if "to" in check else chapter_value(claim)
        if target.ndim > 1 and value.shape[:-1] != target.shape[:-1]:
            return Outcome("fail", f"shape {value.shape[:-1]} vs the chapter's {target.shape[:-1]}")
        if kind == "exact":  # analytic: no seeds, only the chapter's printed precision
            decimals = check.get("decimals")
            a, b = value.mean(axis=-1), target.mean(axis=-1)
            if decimals is not None:
                a, b = np.round(a, decimals), np.round(b, decimals)
            gap = np.max(np.abs(a - b))
            return Outcome("pass", "exact") if gap == 0 else Outcome("fail", f"off by {show_number(float(gap))}")
        value, target = align(value, target)
        gap = value - target
        tolerance = check["tolerance"] * (np.abs(target) if kind == "relative" else 1.0)
        margins = [tolerance - gap, tolerance + gap]  # both >= 0: |gap| <= tolerance
        text = gap_text(gap, np.broadcast_to(tolerance, gap.shape))
    else:
        margins = bound_margins(check, value, operand)
        text = None
    margins = np.broadcast_arrays(*align(*margins))
    if by_share:
        return share_outcome(margins)
    return interval_outcome(margins, text)


def bound_margins(check: dict, value: np.ndarray, operand) -> list[np.ndarray]:
    """above / below / between / increasing / decreasing: how far the value clears its bound, per seed
    (>= 0 passes)."""
    kind = check["kind"]
    if kind == "between":
        value, low, high = align(value, operand("low"), operand("high"))  # rows of unequal seed counts pair
        return [value - low, high - value]
    if kind in ("above", "below"):
        value, bound = align(value, float(check.get("factor", 1.0)) * operand("than"))
        return [value - bound if kind == "above" else bound - value]
    # increasing / decreasing: each step by at least `by`, a fraction of the value before it
    if value.ndim != 2 or len(value) < 2:
        raise ClaimsError(f"{kind} needs a list of two or more values, got shape {value.shape[:-1]}")
    by, before, after = float(check.get("by", 0.0)), value[:-1], value[1:]
    return [after - before * (1 + by) if kind == "increasing" else before * (1 - by) - after]


def interval_outcome(margins: list[np.ndarray], text: str | None) -> Outcome:
    """Each margin's mean with its 95 % interval decides, element by element."""
    statuses, to_decide, tightest = [], [], None
    for m in margins:
        mean, low, high = stats.mean_interval(m)
        status = stats.decide(low, high)
        statuses.append(status)
        sd = m.std(axis=-1, ddof=1) if m.shape[-1] > 1 else np.zeros_like(mean)
        for i in map(tuple, np.argwhere(status == "inconclusive")):
            to_decide.append(stats.seeds_to_decide(float(mean[i]), float(sd[i])))
        i = np.unravel_index(np.nanargmin(mean), mean.shape) if np.isfinite(mean).any() else None
        if i is not None and (tightest is None or mean[i] < tightest[0]):
            tightest = (float(mean[i]), float(high[i] - mean[i]))
    statuses = np.broadcast_arrays(*statuses)
    status = overall(np.where(np.any([s == "fail" for s in statuses], axis=0), "fail",
                              np.where(np.all([s == "pass" for s in statuses], axis=0), "pass", "inconclusive")))
    if text is None:
        if tightest is None:
            text = "not a number"
        else:
            text = (f"{'clears' if tightest[0] >= 0 else 'misses'} by {show_number(abs(tightest[0]))}"
                    + (f" ± {show_number(tightest[1])}" if tightest[1] > 0 else ""))
    needed = None if status != "inconclusive" or None in to_decide else max(to_decide, default=None)
    return Outcome(status, text, to_decide=needed)


def share_outcome(margins: list[np.ndarray]) -> Outcome:
    """The outcome per seed (every element, every edge); the share of seeds in which it holds decides."""
    holds = np.all([np.all(m >= 0, axis=tuple(range(m.ndim - 1))) for m in margins], axis=0)
    k, n = int(holds.sum()), int(holds.size)
    status = stats.decide_share(k, n)
    return Outcome(status, f"holds in {k} of {n} seed{'s' if n > 1 else ''}", share=f"{k}/{n}",
                   to_decide=stats.seeds_to_decide_share(k, n) if status == "inconclusive" else None)


def gap_text(gap: np.ndarray, tolerance: np.ndarray) -> str:
    """The worst element's distance from the target in tolerances, ± its 95 % interval."""
    mean, low, high = stats.mean_interval(gap)
    tol = tolerance.mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        in_tol = np.abs(mean) / tol
    if not np.isfinite(in_tol).any():
        return "not a number"
    worst = np.unravel_index(np.nanargmax(in_tol), in_tol.shape)
    half = float(high[worst] - mean[worst]) / float(tol[worst])
    return f"{float(in_tol[worst]):.2g} tol" + (f" ± {half:.2g}" if half > 0 else "")


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


def summary(value: np.ndarray) -> str:
    """mean ± sd over seeds."""
    sd = value.std(axis=-1, ddof=1) if value.shape[-1] > 1 else 0.0
    return show(value.mean(axis=-1), sd)


def interval_text(value: np.ndarray) -> str:
    """The mean's 95 % interval (empty for one seed)."""
    if value.shape[-1] < 2:
        return ""
    _, low, high = stats.mean_interval(value)
    return show_interval(low, high)


def show_interval(low, high) -> str:
    if np.ndim(low) == 0:
        return f"[{show_number(float(low))}, {show_number(float(high))}]"
    return "[" + ", ".join(show_interval(lo, hi) for lo, hi in zip(low, high)) + "]"


def plausible_draw(claim: dict, value: np.ndarray) -> str:
    """Is the chapter's single run inside our seeds' 95 % prediction interval (yes / no)? Empty where the
    rule does not compare with the chapter's number or we have one seed."""
    rule = claim["rule"]
    interval = stats.prediction_interval(value)
    if rule["kind"] not in ("relative", "absolute") or "to" in rule or interval is None:
        return ""
    chapter = np.asarray(claim["chapter"], dtype=float)
    low, high = interval
    return "yes" if np.all((low <= chapter) & (chapter <= high)) else "no"


def judge(claim: dict, tables: dict) -> dict:
    row = {"id": claim["id"], "table": claim["table"], "statement": " ".join(str(claim["statement"]).split()),
           "chapter": show_chapter(claim["chapter"]), "reproduced": "–", "rule": describe_claim(claim),
           "headline": bool(claim.get("headline")), "interval": "", "plausible_draw": "", "seed_share": "",
           "seeds": 0}
    try:
        value = evaluate(claim["value"], tables, claim["table"])
        row.update(reproduced=summary(value), interval=interval_text(value),
                   plausible_draw=plausible_draw(claim, value), seeds=int(value.shape[-1]))
        rule = run_check(claim["rule"], value, claim, tables, by_share=uses_lead(claim["value"]))
        conclusion, note, concluded = claim.get("conclusion"), "", None
        if conclusion:
            read_apart = "value" in conclusion
            c_value = evaluate(conclusion["value"], tables, claim["table"]) if read_apart else value
            concluded = run_check(conclusion, c_value, claim, tables,
                                  by_share=uses_lead(conclusion["value"] if read_apart else claim["value"]))
            note = (f"conclusion {concluded.status}" + (f" on {summary(c_value)}" if read_apart else "")
                    + f": {concluded.margin}")
    except Missing as why:
        return {**row, "verdict": "MISSING", "margin": "–", "note": str(why)}
    judged = verdict(rule.status, concluded.status if concluded else None)
    row["seed_share"] = " · ".join(o.share for o in (rule, concluded) if o and o.share)
    if judged == "INCONCLUSIVE":
        undecided = [o for o in (rule, concluded) if o and o.status == "inconclusive"]
        needed = [o.to_decide for o in undecided]
        note = "; ".join(filter(None, [note, (
            f"about {max(needed)} seeds would decide it if the mean and spread held" if None not in needed
            else "no number of seeds decides it at this mean (it sits on an edge)")]))
    return {**row, "verdict": judged, "margin": rule.margin, "note": note}


def tried(claim_id: str, tables: dict) -> str:
    """What the contradictions table tried on a claim: each setting and its finding. The verdict stays the
    one under the chapter's stated settings."""
    df = tables.get("contradictions")
    rows = df[df["claim"] == claim_id] if df is not None else ()
    return "tried: " + "; ".join(f"{r.setting}: {r.finding}" for r in rows.itertuples()) if len(rows) else ""


def ledger(claims: list[dict], tables: dict, profile: str) -> pd.DataFrame:
    df = pd.DataFrame([judge(claim, tables) for claim in claims])
    df["note"] = ["; ".join(filter(None, (note, tried(claim_id, tables)))) for claim_id, note in zip(df["id"], df["note"])]
    df["profile"] = profile
    return df
