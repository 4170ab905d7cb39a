"""Reading a claim's value out of the tables: an expression of configs/claims.yaml (a `column`, `columns` or
`lead` read, `values`, a `ratio` or `difference`, a `reduce` over rows) evaluated over seeds.

Every value is read per seed (`<col>_seeds`, in seed order; a cell without it is one value) into a
stats.Sample: rows of one seed set pair seed by seed, rows of different sets stay apart (Welch), and
reductions over rows are taken seed by seed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from attnlab.claims import stats
from attnlab.claims.rules import READ_OPERATORS, ClaimsError, is_number
from attnlab.claims.stats import Sample
from attnlab.tables import SEEDS_SUFFIX, own_rows, per_seed


class Missing(Exception):
    """A table, row or column a claim reads was not produced."""


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


def read_cells(df: pd.DataFrame, rows: pd.DataFrame, cols: list[str]) -> list[list[np.ndarray]]:
    """rows x cols, each cell its seeds' values (one value where the table keeps no seeds). Text such as
    'out of memory' is NaN."""
    means = rows[cols].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    cells = [[np.array([mean]) for mean in row] for row in means]
    for j, col in enumerate(cols):
        if f"{col}{SEEDS_SUFFIX}" in df.columns:
            for i, cell in enumerate(rows[f"{col}{SEEDS_SUFFIX}"]):
                seeds = per_seed(cell)
                if seeds:
                    cells[i][j] = np.array(seeds)
    return cells


def read(node: dict, tables: dict, table_id: str) -> tuple[Sample, np.ndarray | None]:
    """A `column`, `columns` or `lead` read: (value over seeds, x)."""
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
        cells = read_cells(df, rows, node["columns"])
        value = Sample.of_cells([c for row in cells for c in row], (len(cells), len(node["columns"])))
    elif "lead" in node:  # per row and seed: the lead column minus the largest other cell of the row
        others = [c for c in node["among"] if c != node["lead"]]
        require_columns(df, [node["lead"], *others], table_id)
        leads = []
        for lead, *rest in read_cells(df, rows, [node["lead"], *others]):
            n = min(c.size for c in (lead, *rest))  # one row: one seed set
            leads.append(lead[:n] - np.max([c[:n] for c in rest], axis=0))
        value = Sample.of_cells(leads, (len(leads),))
    elif "matches" in node:  # a text cell as a fact: 1 where it contains the text, else 0
        require_columns(df, [node["column"]], table_id)
        value = Sample.constant(rows[node["column"]].astype(str).str.contains(node["matches"], regex=False)
                                .to_numpy(float))
    else:
        require_columns(df, [node["column"]], table_id)
        cells = read_cells(df, rows, [node["column"]])
        value = Sample.of_cells([row[0] for row in cells], (len(cells),))
    if value.point.shape[:1] == (1,) and "reduce" not in node:  # one row: a number, several: a list
        value = Sample(value.point[0], {n: v[0] for n, v in value.sets.items()}, value.shared[0])
    return value, x


def uses_lead(node) -> bool:
    """Does an expression read an outcome per seed — a lead (which weight is the largest), or a cell marked
    `per_seed` (a head-averaged weight that describes each seed's model, not a mean over models)?"""
    if isinstance(node, dict):
        return "lead" in node or node.get("per_seed") is True or any(uses_lead(child) for child in node.values())
    return isinstance(node, list) and any(uses_lead(child) for child in node)


def table_reads(node, table_id: str):
    """(table, node) of every node of an expression (or a list of them, or a check) that reads a table's cells
    (READ_OPERATORS), each with the table it reads."""
    if isinstance(node, dict):
        table_id = node.get("table", table_id)
        if any(op in node for op in READ_OPERATORS):
            yield table_id, node
        for child in node.values():
            yield from table_reads(child, table_id)
    elif isinstance(node, list):
        for child in node:
            yield from table_reads(child, table_id)


def columns_read(node, table_id: str) -> set[tuple[str, str]]:
    """(table, column) of every cell an expression (or a list of them, or a check) reads."""
    return {(table, column) for table, read_node in table_reads(node, table_id)
            for column in [*(read_node[k] for k in ("column", "lead") if k in read_node),
                           *read_node.get("columns", []), *read_node.get("among", [])]}


def estimate(node, tables: dict, table_id: str) -> Sample:
    """An expression's value over seeds."""
    if is_number(node):
        return Sample.constant(float(node))
    x = None
    if any(op in node for op in READ_OPERATORS):
        value, x = read(node, tables, table_id)
    elif "values" in node:
        value = stats.stack([estimate(child, tables, table_id) for child in node["values"]])
    else:
        op = "ratio" if "ratio" in node else "difference"
        a, b = (estimate(child, tables, table_id) for child in node[op])
        if a.point.shape != b.point.shape and a.point.ndim and b.point.ndim:
            raise ClaimsError(f"{op} of values with shapes {a.point.shape} and {b.point.shape}")
        value = stats.paired(np.subtract if op == "difference" else np.divide, a, b)
    if "reduce" in node:
        value = reduce(node, value, x)
    return value


def evaluate(node, tables: dict, table_id: str) -> np.ndarray:
    """An expression's value per seed, over the seeds all its rows share (shape (..., seeds); a number has one
    seed): for readers that need one value per seed."""
    return estimate(node, tables, table_id).shared


def reduce(node: dict, value: Sample, x) -> Sample:
    """rows -> one value, seed by seed, over the rows that hold a number in every seed."""
    def rows(a):
        return a.reshape(-1, a.shape[-1])

    point = value.point.reshape(-1)
    keep = np.isfinite(point) & np.isfinite(rows(value.shared)).all(axis=1)
    for values in value.sets.values():
        keep &= np.isfinite(rows(values)).all(axis=1)
    if x is not None:
        keep &= np.isfinite(x) & (x > 0)
    index = np.flatnonzero(keep)
    if "last" in node:  # the last n rows that hold a number (e.g. before 'out of memory')
        index = index[-int(node["last"]):]
    if len(index) == 0:
        raise Missing("no finite value to reduce")
    xs = x[index] if x is not None else None

    def by_seed(a):
        return reduced(node["reduce"], rows(a)[index], xs)

    sets = {n: by_seed(v) for n, v in value.sets.items()}
    centre = by_seed(point[:, None])[0] if len(sets) != 1 else next(iter(sets.values())).mean()
    return Sample(np.asarray(centre), sets, by_seed(value.shared))


def reduced(how: str, value: np.ndarray, x) -> np.ndarray:
    """rows x seeds -> seeds."""
    if how in ("max", "min", "mean"):
        return getattr(value, how)(axis=0)
    if how in ("first", "last"):
        return value[0 if how == "first" else -1]
    if how == "range":
        return value.max(axis=0) - value.min(axis=0)
    if len(value) < 2 or np.any(value <= 0):
        raise Missing(f"a log-log slope needs two or more positive values, got {value.mean(axis=1).tolist()}")
    return np.array([stats.loglog_slope(x, seed) for seed in value.T])  # one fit per seed
