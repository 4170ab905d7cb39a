# Reliability: a token cache that fails its checksum is never trained on. Before the DAG is
# built (a dry run included: the file is useless either way), a corrupt tokens.npy is removed,
# so the `tokens` rule rebuilds it and the runs that read it rerun. train.py and
# data.load_tokens check the checksum again at every run.
from snakemake.logging import logger

from attnlab.data import TOKENS, token_cache_problem

if workflow.is_main_process and Path(DATA, TOKENS).exists():
    _problem = token_cache_problem(DATA)
    if _problem:
        logger.warning(f"{_problem}; removing it so that the tokens rule rebuilds it")
        Path(DATA, TOKENS).unlink()
