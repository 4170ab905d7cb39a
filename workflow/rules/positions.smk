# The positions family (TABLES.md: position_extrapolation): five schemes trained on 64-token
# windows by the generic train rule, each run evaluating its model at every window of
# train.eval_lengths (configs/experiment/position/_base.yaml). Rows: src/attnlab/families/positions.py.
from attnlab.families.positions import SCHEMES

add_table("position_extrapolation", runs=runs_of(SCHEMES))
