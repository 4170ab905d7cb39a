"""One module per table family: its table builders (@table) and figure builders (@figure)."""
