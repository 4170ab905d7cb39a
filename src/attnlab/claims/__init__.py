"""The claims ledger: every figure the chapter prints, judged against the tables this pipeline wrote.

    python -m attnlab.claims check --profile P --csv claims.csv --md claims.md \\
        results/P/tables/<id>.csv ...
    python -m attnlab.claims readme --ledger results/full/claims.csv --readme README.md \\
        --out section.md [table=results/full/tables/<id>.md ...] [figure=figures/full/<id>.png ...]

configs/claims.yaml holds the chapter's numbers (its header documents the vocabulary). A claim
reads a value out of a table CSV, seed by seed, checks it with its `rule` and, where given, its
`conclusion` — on the mean's 95 % interval, or on the share of seeds for an outcome per seed (stats):
  MATCH             the rule holds, and the conclusion if there is one
  CONCLUSION HOLDS  the number misses, the chapter's point (the conclusion) holds
  INCONCLUSIVE      an interval straddles an edge: more seeds would decide (the note says how many)
  CONTRADICTED      the conclusion fails, or the rule fails and there is no conclusion
  MISSING           the table, a selected row or a column was not produced
Each ledger row also gives the margin: how far the mean is from the chapter in tolerances (± its
interval), or by how much it clears or misses a bound; the mean's interval, whether the chapter's
single run is a plausible draw of ours (inside our 95 % prediction interval), and the seed share.

rules     the claims file: vocabulary, validation, verdict names
evaluate  reading values per seed out of tables, checks, verdicts
stats     intervals, decisions, and the seeds that would decide
render    text, Markdown, HTML and the README section
cli       the command line (python -m attnlab.claims)
plot      the claims plot: every numeric claim as ours ÷ chapter (python -m attnlab.claims.plot)
"""

from attnlab.claims.cli import main
from attnlab.claims.evaluate import Missing, evaluate, judge, ledger, load_tables, verdict
from attnlab.claims.render import README_END, README_START, summary_line
from attnlab.claims.rules import CLAIMS_FILE, ROOT, VERDICTS, ClaimsError, load_claims, validate_claim

__all__ = ["CLAIMS_FILE", "ROOT", "README_END", "README_START", "VERDICTS", "ClaimsError", "Missing", "evaluate",
           "judge", "ledger", "load_claims", "load_tables", "main", "summary_line", "validate_claim", "verdict"]
