"""The claims ledger: every figure the chapter prints, judged against the tables this pipeline wrote.

    python -m attnlab.claims check --profile P --seeds N --csv claims.csv --md claims.md \\
        results/P/tables/<id>.csv ...
    python -m attnlab.claims readme --ledger results/full/claims.csv --readme README.md \\
        --out section.md [table=results/full/tables/<id>.md ...] [figure=figures/full/<id>.png ...]

configs/claims.yaml holds the chapter's numbers (its header documents the vocabulary). A claim
reads a value out of a table CSV, checks it with its `rule` and, where given, its `conclusion`:
  MATCH             the rule holds, and the conclusion if there is one
  CONCLUSION HOLDS  the number misses, the chapter's point (the conclusion) holds
  INCONCLUSIVE      the seeds' spread is wider than the tolerance and reaches across its edge:
                    the data cannot tell a match from a miss
  CONTRADICTED      the conclusion fails, or the rule fails and there is no conclusion
  MISSING           the table, a selected row or a column was not produced
Each ledger row also gives the margin: how far the value is from the chapter in tolerances (and in
the seeds' spread), or by how much it clears or misses a bound.

rules     the claims file: vocabulary, validation, verdict names
evaluate  reading values (with their spread) out of tables, checks, verdicts
render    text, Markdown, HTML and the README section
cli       the command line (python -m attnlab.claims)
"""

from attnlab.claims.cli import main
from attnlab.claims.evaluate import Missing, evaluate, judge, ledger, load_tables, verdict
from attnlab.claims.render import README_END, README_START, summary_line
from attnlab.claims.rules import CLAIMS_FILE, ROOT, VERDICTS, ClaimsError, load_claims, validate_claim

__all__ = ["CLAIMS_FILE", "ROOT", "README_END", "README_START", "VERDICTS", "ClaimsError", "Missing", "evaluate",
           "judge", "ledger", "load_claims", "load_tables", "main", "summary_line", "validate_claim", "verdict"]
