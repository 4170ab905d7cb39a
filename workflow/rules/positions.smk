# The positions family (TABLES.md: position_extrapolation): five schemes trained on 64-token
# windows by the generic train rule, each run evaluating its model at every window of
# train.eval_lengths (configs/experiment/position/_base.yaml).

POSITION_SCHEMES = ["learned", "sinusoidal", "rope", "alibi", "none"]

add_table("position_extrapolation", runs={scheme: f"position/{scheme}" for scheme in POSITION_SCHEMES})
