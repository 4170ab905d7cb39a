"""Build one table or figure with its family's builder, every family loaded (the builders register into
attnlab.tables and attnlab.plots, which import no family; attnlab.views writes a table):

    python -m attnlab.families table <id> --csv out.csv --md out.md name=path [name=path ...]
    python -m attnlab.families figure <id> --profile <profile> --out out.png table=<csv> claims=<yaml> [name=path ...]
"""

import sys

from attnlab import plots, views
from attnlab.families import load_families

if __name__ == "__main__":
    load_families()
    commands = {"table": views.main, "figure": plots.main}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        raise SystemExit(f"error: usage: python -m attnlab.families {{{'|'.join(commands)}}} <id> ...")
    commands[sys.argv[1]](sys.argv[2:])
