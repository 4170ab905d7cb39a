"""python -m attnlab.claims check|readme ... (attnlab.claims.cli)."""

from attnlab.claims.cli import main

main()
