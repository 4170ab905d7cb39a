"""What a reader sees of a table: the chapter's rows and columns, the chapter's number beside ours, at most eight
columns. The rest — how each row was made (commits, devices, dates, seed ids) and the columns a reader of the
chapter does not need to compare (bands, plans, per-reading detail) — is its provenance view, one click away:
`<table>.provenance.md` beside `<table>.md`, a folded block under the table in the report. The CSV keeps all.

A table shows the columns its declaration names (`@table(..., shown=(...))`, in the chapter's shape), else
every column that is not bookkeeping; a `chapter` column follows each column a claim of configs/claims.yaml
reads one cell of (a claim reading several rows fills each row from its list).
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pandas as pd

from attnlab.claims.read import Missing, select
from attnlab.claims.rules import Printed, is_number, load_claims
from attnlab.data import atomic_path
from attnlab.families import load_families
from attnlab.tables import (ABLATION_COLUMN, BUILDERS, CHAPTER, DECLARED, SEEDS_SUFFIX, Declared,
                            beside_published, for_people, is_seed_detail, own_rows, parse_named)

MAX_COLUMNS = 8
# how a row was made, not what it found: the provenance view's, never the reader's
BOOKKEEPING = ("commit", "device", "run_dates", "dates_recovered", "seed_ids", "measured_commit", "weights",
               "answers_as_published", "probe_max_abs_diff", "config_hash", "torch", "kernel", "peak_method")


def printed(value) -> str:
    """The chapter's number as the claims file writes it (0.70 keeps its digits; 459760 reads 459,760)."""
    if isinstance(value, Printed):
        return value.text
    return f"{value:,}" if isinstance(value, int) else str(value)


# a claim's read of one column that lands on one cell of it: the row a reduction picks
PICKS = {"first": lambda cells: cells.index[0], "last": lambda cells: cells.index[-1],
         "max": lambda cells: cells.idxmax(), "min": lambda cells: cells.idxmin()}
PLAIN = {"column", "where", "table", "per_seed"}


def cells_read(node, table_id: str, df: pd.DataFrame) -> list[tuple[str, int]] | None:
    """The cells (column, row index) an expression of configs/claims.yaml reads from this table, in its order, where
    it reads plain cells: a column at the rows its `where` selects, one row of them a reduction picks (first,
    last, max, min), columns at those rows (a matrix, row by row), or a list of such reads; None for anything else
    (a ratio, a fit)."""
    if isinstance(node, dict) and set(node) == {"values"}:
        found = [cells_read(n, table_id, df) for n in node["values"]]
        return None if any(f is None for f in found) else [cell for f in found for cell in f]
    if isinstance(node, dict) and "columns" in node and not set(node) - {"columns", "where", "table"}:
        if node.get("table", table_id) != table_id or not set(node["columns"]) <= set(df.columns):
            return None
        try:  # a matrix, row by row
            return [(c, i) for i in select(df, node.get("where"), table_id).index for c in node["columns"]]
        except Missing:
            return None
    if not (isinstance(node, dict) and "column" in node and not set(node) - PLAIN - {"reduce"}):
        return None
    if node.get("table", table_id) != table_id or node["column"] not in df.columns or node.get("reduce", "first") not in PICKS:
        return None
    try:
        rows = select(df, node.get("where"), table_id)
    except Missing:
        return None
    if "reduce" not in node:
        return [(node["column"], i) for i in rows.index]
    cells = pd.to_numeric(rows[node["column"]], errors="coerce").dropna()
    return [(node["column"], PICKS[node["reduce"]](cells))] if len(cells) else None


def chapter_cells(table_id: str, df: pd.DataFrame, claims: list[dict] | None = None) -> dict[str, dict[int, str]]:
    """{column: {row index: the chapter's number}} for every claim of this table whose chapter value is a number
    (or a list, one per cell) and which reads plain cells (cells_read)."""
    found: dict[str, dict[int, str]] = {}
    for claim in claims if claims is not None else load_claims():
        if claim["table"] != table_id:
            continue
        chapter = claim["chapter"]
        values = chapter if isinstance(chapter, list) else [chapter]
        values = [v for row in values for v in (row if isinstance(row, list) else [row])]  # a matrix, row by row
        cells = cells_read(claim["value"], table_id, df)
        if cells is None or len(values) != len(cells) or not all(is_number(v) for v in values):
            continue
        for (column, index), value in zip(cells, values):
            found.setdefault(column, {})[index] = printed(value)
    return found


def declared(table_id: str) -> Declared:
    """A table's declaration, every family loaded (a table unknown to them: the default view)."""
    load_families()
    return DECLARED.get(table_id, Declared())


def shown_columns(table_id: str, df: pd.DataFrame) -> list[str]:
    """The columns of the reader's view, before the chapter's: the declaration's, else all but bookkeeping."""
    declared_shown = declared(table_id).shown
    columns = [c for c in declared_shown if c in df.columns] if declared_shown else \
        [c for c in df.columns if c not in BOOKKEEPING and not is_seed_detail(c)]
    return ([ABLATION_COLUMN] if ABLATION_COLUMN in df.columns else []) + [c for c in columns if c != ABLATION_COLUMN]


def reader_view(table_id: str, df: pd.DataFrame, claims: list[dict] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The table as a reader of the chapter compares it: formatted cells (mean ± sd), the chapter's number in a
    `chapter` column after each column it prints, and the settings every row shares (said once, under it). A
    table declared with a `view` is reshaped by it instead (its rows in the chapter's shape)."""
    chapter = chapter_cells(table_id, own_rows(df), claims)  # a variant's number beside its own row
    reshape = declared(table_id).view
    if reshape is not None and ABLATION_COLUMN not in df.columns:
        return reshape(df, chapter), []
    columns = shown_columns(table_id, df)
    spreads = [c for c in df.columns if is_seed_detail(c) and c.removesuffix(SEEDS_SUFFIX).removesuffix("_std") in columns]
    shown, shared = for_people(df[columns + spreads])
    return with_chapter(shown, chapter), shared


def with_chapter(shown: pd.DataFrame, chapter: dict[str, dict[int, str]]) -> pd.DataFrame:
    """`shown` with a `chapter` column after each column the chapter prints (`chapter (<column>)` where several);
    where those would pass MAX_COLUMNS, one `chapter` column at the end, each row's numbers named by column."""
    named = [c for c in shown.columns if c in chapter]
    if named and len(shown.columns) + len(named) > MAX_COLUMNS:
        return shown.assign(**{CHAPTER: [" · ".join(f"{c} {chapter[c][i]}" for c in named if i in chapter[c])
                                         for i in shown.index]})
    out = pd.DataFrame(index=shown.index)
    for column in shown.columns:
        out[column] = shown[column]
        if column in chapter:
            out[CHAPTER if len(named) == 1 else f"{CHAPTER} ({column})"] = [chapter[column].get(i, "") for i in shown.index]
    return out


def provenance_view(table_id: str, df: pd.DataFrame) -> pd.DataFrame:
    """What the reader's view leaves out: each row's first shown column (what the row is), then every other
    column, bookkeeping included, formatted as the reader's are."""
    reshaped = declared(table_id).view is not None
    columns = list(df.columns[:1]) if reshaped else shown_columns(table_id, df)
    key = columns[:2] if columns and columns[0] == ABLATION_COLUMN else columns[:1]
    rest = [c for c in df.columns if c not in columns or c in key]
    shown, _ = for_people(df[list(dict.fromkeys(key + rest))], shared_columns=(), csv_only=())
    return shown


NO_ROWS = "(no rows in this profile)"


def markdown_table(shown: pd.DataFrame) -> str:
    return shown.to_markdown(index=False, disable_numparse=True) if len(shown.columns) and len(shown) else NO_ROWS


def to_markdown(table_id: str, df: pd.DataFrame, title: str) -> str:
    shown, shared = reader_view(table_id, df)
    footer = f"\n\n{' · '.join(shared)}" if shared else ""
    return (f"## {title}\n\n{markdown_table(shown)}{footer}\n\n"
            f"How each row was made, and the columns not shown: [{table_id}.provenance.md]({table_id}.provenance.md); "
            f"every column: [{table_id}.csv]({table_id}.csv).\n")


def provenance_markdown(table_id: str, df: pd.DataFrame, title: str) -> str:
    shown = provenance_view(table_id, df)
    return (f"## {title}: how each row was made\n\n{markdown_table(shown)}\n\n"
            f"The table as a reader compares it with the chapter: [{table_id}.md]({table_id}.md).\n")


def provenance_path(md_path) -> Path:
    """`<table>.provenance.md` beside `<table>.md`."""
    return Path(md_path).with_suffix(".provenance.md")


def write_table(table_id: str, df: pd.DataFrame, csv_path, md_path, title: str) -> None:
    """The CSV (every column), the reader's Markdown and its provenance view beside it."""
    with atomic_path(Path(csv_path)) as tmp:
        df.to_csv(tmp, index=False)
    with atomic_path(Path(md_path)) as tmp:
        tmp.write_text(to_markdown(table_id, df, title), encoding="utf-8")
    with atomic_path(provenance_path(md_path)) as tmp:
        tmp.write_text(provenance_markdown(table_id, df, title), encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    """A table's command line (python -m attnlab.families table ...: every family's builder registered):

        python -m attnlab.families table <id> --csv out.csv --md out.md name=path [name=path ...]

    (and out.provenance.md beside out.md). A name given several times (one path per seed) arrives as a list."""
    parser = argparse.ArgumentParser(description="Build one table: its CSV, its Markdown and its provenance view.")
    parser.add_argument("table", choices=sorted(BUILDERS))
    parser.add_argument("--csv", required=True)
    parser.add_argument("--md", required=True)
    parser.add_argument("--published", help="a variant's table: the published CSV, shown beside its rows")
    parser.add_argument("--label", default="", help="a variant's table: what the variant changed")
    parser.add_argument("inputs", nargs="*", help="name=path")
    args = parser.parse_intermixed_args(argv)
    df = BUILDERS[args.table](parse_named(args.inputs))
    if args.published:
        published = pd.read_csv(args.published)
        # read back as the published one was, so equal rows compare equal
        df = beside_published(published, pd.read_csv(io.StringIO(df.to_csv(index=False))), args.label)
    write_table(args.table, df, args.csv, args.md, args.table + (f" (variant: {args.label})" if args.published else ""))
