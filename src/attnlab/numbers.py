"""Numbers as text, one way everywhere: a table's mean ± its spread (attnlab.tables) and the ledger's words
(attnlab.claims)."""

from __future__ import annotations

import math

import numpy as np


def show_number(x: float) -> str:
    if not math.isfinite(x):
        return "nan" if math.isnan(x) else str(x)
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}"
    if abs(x) < 1e-3 or abs(x) >= 1e6:
        return f"{x:.3g}"
    return f"{x:.4g}" if abs(x) < 100 else f"{x:,.2f}"


def show_spread(x: float, spread: float) -> str:
    """The spread to the mean's last shown digit (60.1 ± 0.5, not 60.1 ± 0.4814), or one significant
    digit where that digit would change it by more than a quarter (45 ± 0.5, not 45 ± 1)."""
    shown = show_number(x)
    decimals = len(shown.split(".")[1]) if "." in shown and "e" not in shown else 0
    if "e" in shown or abs(round(spread, decimals) - spread) > spread / 4:
        return f"{spread:.1g}"
    return f"{spread:,.{decimals}f}"


def show(value, spread=0.0) -> str:
    value = np.asarray(value, dtype=float)
    spread = np.broadcast_to(np.asarray(spread, dtype=float), np.shape(value))
    if value.ndim == 0:
        return show_number(float(value)) + (f" ± {show_spread(float(value), float(spread))}" if spread > 0 else "")
    return "[" + ", ".join(show(v, s) for v, s in zip(value, spread)) + "]"
