"""The claims ledger: every figure the chapter prints, judged against the tables this pipeline wrote.

    python -m attnlab.claims check --profile P --csv claims.csv --md claims.md \\
        results/P/tables/<id>.csv ...
    python -m attnlab.claims readme --ledger results/full/claims.csv --readme README.md \\
        --out section.md [table=results/full/tables/<id>.md ...] [figure=figures/full/<id>.png ...]

configs/claims.yaml holds the chapter's numbers (its header documents the vocabulary). A claim
reads a value out of a table CSV, seed by seed, checks it with its `rule` and, where given, its
`conclusion`: a number the chapter printed as one run of its code (against the spread of one run of
ours), a conclusion, bound or ordering on our mean's interval, an outcome per seed on the share of
seeds, judged as a draw (stats). The number and the chapter's point get a word each, apart — AGREES,
DIFFERS, OPEN, NOT TESTED; HOLDS, FAILS, OPEN, or – where the chapter states none — and no word combines
them; the words are defined once, in rules.NUMBER_WORDS and rules.POINT_WORDS. Each ledger row also says
why its number reads its word, a one-run number's band (what its test can resolve), the mean's interval, the
seed sets read, the looks its rows had (configs/pipeline.yaml's seed plans: every level spent over them) and,
for an OPEN claim, the seeds that would decide it.

rules     the claims file: vocabulary, validation; the words' definitions; the seed plans
read      reading a claim's value per seed out of the tables (its expression)
evaluate  checks and words (judge: a Judgement, the ledger's row), the ledger
seed_plans the seeds per row each claim needs, from the pilot seeds (python -m attnlab.claims plan)
compare   a value under a changed setting against the published one (the contradictions table's statistics)
lr_sweep  whether one learning rate reproduces every sqrt(d_k) number (the sqrt_dk_sweep table's analysis)
stats     intervals, decisions, and the seeds that would decide
render    text, Markdown, HTML and the README section
cli       the command line (python -m attnlab.claims: check, plan, readme)
plot      the claims plot: every numeric claim as ours ÷ chapter (python -m attnlab.claims.plot)
"""

from attnlab.claims.cli import main
from attnlab.claims.evaluate import judge, ledger
from attnlab.claims.read import Missing, evaluate, load_tables
from attnlab.claims.render import ANSWER_END, ANSWER_START, README_END, README_START, summary_line
from attnlab.claims.rules import CLAIMS_FILE, NUMBER_WORDS, POINT_WORDS, ROOT, ClaimsError, load_claims, validate_claim

__all__ = ["CLAIMS_FILE", "NUMBER_WORDS", "POINT_WORDS", "ROOT", "ANSWER_END", "ANSWER_START", "README_END", "README_START", "ClaimsError", "Missing", "evaluate",
           "judge", "ledger", "load_claims", "load_tables", "main", "summary_line", "validate_claim"]
