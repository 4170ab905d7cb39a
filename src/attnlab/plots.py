"""Figures: one builder per figure id, one style for all; headless (Agg).

    python -m attnlab.plots <id> --out fig.png table=table.csv name=path [...]

Builders live beside the table builders in attnlab.families.<family> and register with
@figure("<id>"); they receive the same named inputs as the table plus `table`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from attnlab.data import atomic_path  # noqa: E402
from attnlab.tables import load_families, parse_named  # noqa: E402

BUILDERS = {}
STYLE = {"figure.dpi": 120, "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False,
         "axes.spines.right": False, "font.size": 9, "legend.frameon": False}


def figure(figure_id: str):
    def register(fn):
        BUILDERS[figure_id] = fn
        return fn
    return register


def curve_of(metrics_path: str | Path) -> pd.DataFrame:
    """The per-step loss curve that sits beside a run's metrics.json."""
    return pd.read_csv(Path(metrics_path).with_name("curve.csv"))


def evals_of(metrics_path: str | Path) -> pd.DataFrame:
    """The perplexities (and attention statistics) at every evaluation, beside a run's metrics.json."""
    return pd.read_csv(Path(metrics_path).with_name("evals.csv"))


def smooth(series: pd.Series, frac: float = 0.02) -> pd.Series:
    return series.rolling(max(1, int(len(series) * frac)), min_periods=1).mean()


def main(argv: list[str] | None = None) -> None:
    load_families()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("figure", choices=sorted(BUILDERS))
    parser.add_argument("--out", required=True)
    parser.add_argument("inputs", nargs="*", help="name=path")
    args = parser.parse_intermixed_args(argv)
    with plt.rc_context(STYLE):
        fig = BUILDERS[args.figure](parse_named(args.inputs))
        fig.tight_layout()
        with atomic_path(Path(args.out)) as tmp:
            fig.savefig(tmp, format="png")
        plt.close(fig)


if __name__ == "__main__":
    # builders register into the importable module, not into this __main__ copy
    from attnlab import plots

    plots.main(sys.argv[1:])
