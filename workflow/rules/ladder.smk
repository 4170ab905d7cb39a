# The ladder family: from the plain average to the full block (TABLES.md: average_ladder, ladder,
# depth_overfit: their rows and runs are declared in src/attnlab/families/ladder.py), and the analytic demonstrations.
# --lint 'mixed rules and functions': this family's Step functions (its jobs' keys, inputs, outputs) stay beside its rules.
import importlib

# their names, from the measuring module (it imports torch: read only when the sources change)
MEASUREMENTS = composed("analytic measurements", lambda: list(importlib.import_module("attnlab.measure.analytic").MEASUREMENTS))


# The analytic demonstrations: no training, the same numbers in every profile; an edit to the
# measurement reruns them (to the model: -R measure_analytic).


def analytic_step(name: str) -> Step:
    return register(Step(f"measure_analytic/{name}", digest(ANALYTIC_CODE, name),
                         [f"{RESULTS}/measure/{name}/result.json"]))


ANALYTIC_CODE = measurement_code("attnlab.measure.analytic")


rule measure_analytic:
    input:
        unpack(lambda w: analytic_step(w.analytic).rule_inputs())
    output:
        result=f"{RESULTS}/measure/{{analytic}}/result.json",
    wildcard_constraints:
        analytic="|".join(MEASUREMENTS),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    log: f"{RESULTS}/measure/{{analytic}}/measure.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.measure.analytic {wildcards.analytic} --out {output.result}")


for _id in MEASUREMENTS:
    add_table(_id, inputs={"result": analytic_step(_id).outputs})
