"""attnlab: a reproducible pipeline for the chapter that derives self-attention from the plain average."""

import os
import sys

__version__ = "0.1.0"

# matplotlib's font cache (~/.cache/matplotlib) is shared by every environment of its version: one rebuilt by an
# environment whose matplotlib went missing while it ran (a clone's .venv deleted) lists only the system's fonts,
# and every figure drawn after it changes glyphs and bytes. In a virtual environment, keep matplotlib's cache and
# settings beside it (no user matplotlibrc either), so the figures depend on the environment alone.
if sys.prefix != sys.base_prefix:
    os.environ.setdefault("MPLCONFIGDIR", os.path.join(sys.prefix, "matplotlib"))
