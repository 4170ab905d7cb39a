"""One module per table family: its table builders (@table), figure builders (@figure) and the
rows of its trained tables and what each table reads (@table), declared once here: the workflow (attnlab.jobs)
reads every declaration."""

import importlib
import pkgutil
from dataclasses import dataclass

from attnlab.runs import load_runs


def load_families() -> None:
    """Import every family module, so that its builders register (attnlab.tables, attnlab.plots)."""
    for module in pkgutil.iter_modules(__path__):
        if module.name != "__main__":
            importlib.import_module(f"{__name__}.{module.name}")


@dataclass(frozen=True)
class Row:
    """One row of a trained table: its name (the table builder's input name), the experiment
    (configs/experiment/<experiment>.yaml) that trains it, and how the table labels it."""

    name: str
    experiment: str
    label: str = ""


def runs_of(rows) -> dict[str, str]:
    """{row name: experiment}: the runs a table declares (@table(runs=...))."""
    return {row.name: row.experiment for row in rows}


def present(rows, inputs) -> list:
    """The declared rows that the inputs name, in the declaration's order."""
    return [row for row in rows if row.name in inputs]


def trained_rows(rows, inputs):
    """(row, its seeds' metrics.json paths, their metrics) for each declared row the inputs name."""
    for row in present(rows, inputs):
        yield row, inputs[row.name], load_runs(inputs[row.name])
