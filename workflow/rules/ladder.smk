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

# The analytic demonstrations: no training, the same numbers in every profile; an edit to the
# measurement or to the model reruns them.
ANALYTIC_FIGURES = {"shuffle_test": False, "average_equivalence": False, "averaging_matrix": True,
                    "attention_equivalence": False, "param_breakdown": True, "gpt2_params": False}


def analytic_step(name: str) -> Step:
    return register(Step(f"measure_analytic/{name}", digest(ANALYTIC_CODE, name),
                         [f"{RESULTS}/measure/{name}/result.json"]))


ANALYTIC_CODE = module_code("attnlab.measure.analytic")


rule measure_analytic:
    input:
        unpack(lambda w: step_inputs(analytic_step(w.analytic)))
    output:
        result=f"{RESULTS}/measure/{{analytic}}/result.json",
        stamp=f"{STAMPS}/measure_analytic/{{analytic}}.key",
    params: key=lambda w: analytic_step(w.analytic).key
    wildcard_constraints:
        analytic="|".join(ANALYTIC_FIGURES),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    log: f"{RESULTS}/measure/{{analytic}}/measure.log"
    shell:
        write_stamp("{PYTHON} -m attnlab.measure.analytic {wildcards.analytic} --out {output.result}")


for _id, _figure in ANALYTIC_FIGURES.items():
    add_table(_id, inputs={"result": analytic_step(_id).outputs}, figure=_figure)
