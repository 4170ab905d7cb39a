"""Do two result folders hold the same tables? Every CSV is compared cell by cell, as text
(so bit for bit), except timing columns, which measure the machine rather than the model.

    python -m attnlab.compare results/smoke/tables /other/results/smoke/tables

Timing columns are named as such: their name (less a `_std` suffix) ends in `_s`, `_ms`, `_hours`,
`_per_s` or `_per_hour`, or starts with `s_per_` (train_s, train_hours, tokens_per_s, s_per_step, forward_ms,
runs_per_hour, ...); the dates runs ran on (run_dates); and the timing measurements' other columns: the attention
layer's times, peaks and memory budget, the speed ratios (TIMING).
Exit status 1 and one line per difference when they differ.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd

# timing columns, the attention layer's measurements of the machine (times, peaks, budget) and
# ratios of times (model FLOP utilisation, speed against the reference or separate runs)
TIMING = re.compile(r"(_s|_ms|_hours|_per_s|_per_hour)$|^s_per_|^(ms_|time_|memory_|peak_mb|budget_|mfu$|vs_reference$|vs_separate$|run_dates$)")


def is_timing(column: str) -> bool:
    return bool(TIMING.search(column.removesuffix("_std")))


def read_table(path: Path) -> pd.DataFrame:
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    return df[[c for c in df.columns if not is_timing(c)]]


def differences(a: Path, b: Path) -> list[str]:
    """Why the CSV tables in folders a and b differ (empty when they are the same)."""
    names_a, names_b = {p.name for p in a.glob("*.csv")}, {p.name for p in b.glob("*.csv")}
    problems = [f"{name}: only in {where}" for name, where in
                sorted([(n, a) for n in names_a - names_b] + [(n, b) for n in names_b - names_a])]
    for name in sorted(names_a & names_b):
        ta, tb = read_table(a / name), read_table(b / name)
        if list(ta.columns) != list(tb.columns) or ta.shape != tb.shape:
            problems.append(f"{name}: columns/shape {list(ta.columns)} {ta.shape} vs {list(tb.columns)} {tb.shape}")
            continue
        for col in ta.columns:
            for row in (ta[col] != tb[col]).to_numpy().nonzero()[0]:
                problems.append(f"{name}: row {row} {col}: {ta[col].iloc[row]!r} vs {tb[col].iloc[row]!r}")
    return problems


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or not all(Path(p).is_dir() for p in argv):
        sys.exit(f"usage: python -m attnlab.compare TABLES_DIR_A TABLES_DIR_B (two folders); got {argv}")
    a, b = map(Path, argv)
    if not any(a.glob("*.csv")):
        sys.exit(f"error: no table CSV in {a}")
    problems = differences(a, b)
    for line in problems:
        print(line)
    if problems:
        sys.exit(f"error: {len(problems)} difference(s) between {a} and {b}")
    print(f"{len(list(a.glob('*.csv')))} tables identical (timing columns aside) in {a} and {b}")


if __name__ == "__main__":
    main()
