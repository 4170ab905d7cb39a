# The ladder family: from the plain average to the full block (TABLES.md: average_ladder, ...).

AVERAGE_LADDER = {
    "no_context": "ladder/no_context",
    "average": "ladder/average",
    "positions": "ladder/average_positions",
    "residual": "ladder/average_residual",
}

add_table("average_ladder", runs=AVERAGE_LADDER)

LADDER = {
    "no_context": "ladder/no_context",
    "average": "ladder/average",
    "positions": "ladder/average_positions",
    "residual": "ladder/average_residual",
    "dot_raw": "ladder/dot_raw",
    "query_key": "ladder/query_key",
    "head_replace": "ladder/head_replace",
    "head_added": "ladder/head_added",
    "four_heads": "ladder/four_heads",
    "mlp": "ladder/mlp",
    "block": "ladder/block",
}

add_table("ladder", runs=LADDER)
add_table("depth_overfit", runs={"one_block": "ladder/block", "two_blocks": "depth/two_blocks"}, figure=False)

# The analytic demonstrations: no training, the same numbers in every profile. The code hash
# is a param so that an edit to the measurement or to the model reruns them.
ANALYTIC_FIGURES = {"shuffle_test": False, "average_equivalence": False, "averaging_matrix": True,
                    "attention_equivalence": False, "param_breakdown": True, "gpt2_params": False}


rule measure_analytic:
    output:
        f"{RESULTS}/measure/{{analytic}}/result.json",
    params:
        code=module_code("attnlab.measure.analytic"),
    wildcard_constraints:
        analytic="|".join(ANALYTIC_FIGURES),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    log: f"{RESULTS}/measure/{{analytic}}/measure.log"
    shell:
        "{PYTHON} -m attnlab.measure.analytic {wildcards.analytic} --out {output} > {log} 2>&1"


for _id, _figure in ANALYTIC_FIGURES.items():
    add_table(_id, inputs={"result": f"{RESULTS}/measure/{_id}/result.json"}, figure=_figure)
