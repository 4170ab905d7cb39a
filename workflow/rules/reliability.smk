# Reliability: a token cache that fails its checksum is never trained on. Before the DAG is
# built, a corrupt tokens.npy is removed, so the `tokens` rule rebuilds it and the runs that
# read it rerun. (train.py and data.load_tokens check the checksum again at every run.)
from snakemake.logging import logger

from attnlab.data import TOKENS, token_cache_problem

if workflow.is_main_process and Path(DATA, TOKENS).exists():
    _problem = token_cache_problem(DATA)
    if _problem and workflow.dryrun:
        logger.warning(f"{_problem}; a real run removes and rebuilds it")
    elif _problem:
        logger.warning(f"{_problem}; removing it so that the tokens rule rebuilds it")
        Path(DATA, TOKENS).unlink()
