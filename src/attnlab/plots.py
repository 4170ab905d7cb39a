"""Figures: one builder per figure id, one style for all (attnlab.style); headless (Agg).

    python -m attnlab.families figure <id> --profile P --out fig.png table=table.csv claims=configs/claims.yaml name=path [...]

writes fig.png and, beside it, fig.svg (style.save: the same bytes from the same inputs).

Builders live beside the table builders in attnlab.families.<family> and register with
@figure("<id>"); they receive the same named inputs as the table plus `table` and `claims`, and a
Context: the profile (named in the subtitle) and the chapter's values of their table, read from
the claims ledger (configs/claims.yaml, the only place the chapter's numbers live) so the figure
shows the chapter's number beside ours.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from attnlab import style  # noqa: E402
from attnlab.claims import Missing, load_claims  # noqa: E402
from attnlab.claims.read import select  # noqa: E402
from attnlab.claims.rules import is_number  # noqa: E402
from attnlab.tables import ABLATION_COLUMN, own_rows, parse_named, registry  # noqa: E402

BUILDERS = {}
figure = registry(BUILDERS)


def curve_of(metrics_paths: list[str]) -> pd.DataFrame:
    """The per-step training loss of a row, smoothed and averaged over its seeds (each seed's
    curve.csv sits beside its metrics.json); a diverged seed's curve ends early."""
    losses = [pd.read_csv(Path(p).with_name("curve.csv")).set_index("step")["loss"] for p in metrics_paths]
    return pd.concat([smooth(loss) for loss in losses], axis=1).mean(axis=1).rename("loss").reset_index()


def smooth(series: pd.Series, frac: float = 0.02) -> pd.Series:
    return series.rolling(max(1, int(len(series) * frac)), min_periods=1).mean()


# --- the chapter's values, placed on the cells of a table ------------------------------------------

@dataclass(frozen=True)
class ChapterValue:
    """Where the chapter puts one cell of the figure's table (`row`: its position in the CSV)."""

    column: str
    row: int
    value: float     # NaN: the chapter says only that this cell is its row's largest (a `lead` claim)
    note: str = ""   # how the value follows from the chapter where it is not printed as is


@dataclass(frozen=True)
class Context:
    """What a builder draws besides its inputs: the profile and the chapter's values of its table."""

    profile: str
    chapter: tuple[ChapterValue, ...]

    def of(self, column: str) -> list[ChapterValue]:
        return [c for c in self.chapter if c.column == column]


def context(figure_id: str, inputs: dict, profile: str) -> Context:
    table = pd.read_csv(inputs["table"][0])
    claims = [c for c in load_claims(inputs["claims"][0]) if c["table"] == figure_id]
    return Context(profile, tuple(v for claim in claims for v in chapter_values(claim, table)))


def chapter_values(claim: dict, table: pd.DataFrame) -> list[ChapterValue]:
    """The cells a claim's value reads, each with the chapter's number for it — only where that is
    clear: a read of cells (one number for all, a list per row or per read, a matrix per cell; with
    `reduce: first|last`, that row), a gap or ratio between two rows of one column (the chapter's
    gap to the second row, applied to ours), or a `lead` (the cell the chapter says is largest).
    Nothing for other claims (a chapter in words, a reduction over rows) or cells not produced."""
    expr, chapter, table_id = claim["value"], claim["chapter"], claim["table"]
    try:
        if "lead" in expr:
            rows = select(table, expr.get("where"), table_id).index
            return [ChapterValue(expr["lead"], row, math.nan) for row in rows]
        if "difference" in expr or "ratio" in expr:
            return gap(expr, chapter, table, table_id) if is_number(chapter) else []
        reads = expr["values"] if "values" in expr else [expr]
        if not all(is_read(r) for r in reads):
            return []
        cells = [cell for r in reads for cell in read_cells(r, table, table_id)]
        numbers = flat(chapter) if "values" in expr or not is_number(chapter) else [chapter] * len(cells)
        if len(numbers) != len(cells) or not all(is_number(n) for n in numbers):
            return []
        return [ChapterValue(column, row, float(n)) for (column, row), n in zip(cells, numbers)]
    except Missing:
        return []  # the ledger reports what is missing; the figure draws what is there


def is_read(expr) -> bool:
    return isinstance(expr, dict) and ("column" in expr or "columns" in expr) and "table" not in expr \
        and expr.get("reduce") in (None, "first", "last") and "last" not in expr


def read_cells(expr: dict, table: pd.DataFrame, table_id: str) -> list[tuple[str, int]]:
    """(column, row) of every cell a read covers, row by row."""
    rows = select(table, expr.get("where"), table_id)
    columns = expr["columns"] if "columns" in expr else [expr["column"]]
    if any(c not in table.columns for c in columns):
        raise Missing(f"{table_id}: no column among {columns}")
    if "reduce" in expr:  # first/last: the row that holds that number
        held = rows.index[pd.to_numeric(rows[columns[0]], errors="coerce").notna()]
        if not len(held):
            raise Missing(f"{table_id}: no number in {columns[0]}")
        rows = rows.loc[[held[0] if expr["reduce"] == "first" else held[-1]]]
    return [(column, int(row)) for row in rows.index for column in columns]


def gap(expr: dict, chapter: float, table: pd.DataFrame, table_id: str) -> list[ChapterValue]:
    """`difference: [a, b]` or `ratio: [a, b]` of one column in two single rows: a where the
    chapter's gap (or ratio) puts it, counted from our b."""
    op = "difference" if "difference" in expr else "ratio"
    a, b = expr[op]
    if not (is_read(a) and is_read(b) and "column" in a and a.get("column") == b.get("column")
            and "reduce" not in a and "reduce" not in b):
        return []
    cells_a, cells_b = read_cells(a, table, table_id), read_cells(b, table, table_id)
    if len(cells_a) != 1 or len(cells_b) != 1:
        return []
    (column, row_a), (_, row_b) = cells_a[0], cells_b[0]
    ours = float(table.at[row_b, column])
    name = ", ".join(f"{k} {v}" for k, v in b.get("where", {}).items())
    if op == "difference":
        return [ChapterValue(column, row_a, ours + chapter, f"= our {name} + {chapter:g}")]
    return [ChapterValue(column, row_a, ours * chapter, f"= {chapter:g} × our {name}")]


def flat(chapter) -> list:
    return [n for item in chapter for n in flat(item)] if isinstance(chapter, list) else [chapter]


def main(argv: list[str] | None = None) -> None:
    """A figure's command line (python -m attnlab.families figure ...: every family's builder registered)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("figure", choices=sorted(BUILDERS))
    parser.add_argument("--out", required=True, help="the PNG; the SVG is written beside it")
    parser.add_argument("--profile", required=True, help="the profile the inputs were built under")
    parser.add_argument("--published", help="a variant's figure: the published PNG, drawn beside it")
    parser.add_argument("--label", default="", help="a variant's figure: what the variant changed")
    parser.add_argument("inputs", nargs="*", help="name=path; table= and claims= are required")
    args = parser.parse_intermixed_args(argv)
    inputs = parse_named(args.inputs)
    missing = {"table", "claims"} - inputs.keys()
    if missing:
        parser.error(f"missing input {' and '.join(sorted(missing))}= "
                     "(claims=configs/claims.yaml: the chapter's values)")
    with tempfile.TemporaryDirectory() as scratch, plt.rc_context(style.RC):
        table = pd.read_csv(inputs["table"][0])
        if ABLATION_COLUMN in table.columns:  # a variant's table: the builder draws the variant's own rows
            inputs["table"] = [str(Path(scratch, "table.csv"))]
            own_rows(table).to_csv(inputs["table"][0], index=False)
        fig = BUILDERS[args.figure](inputs, context(args.figure, inputs, args.profile))
        if args.published:
            fig = style.beside_published(args.published, fig, args.label)
        style.save(fig, args.out)
        plt.close(fig)

