# attention_scaling: one attention layer's time and memory from 128 tokens up, explicit vs fused
# (TABLES.md). Sizes, repeats and the memory budget per profile: configs/measure/attention_scaling.yaml.
import json
import os

from attnlab.measure.attention_scaling import MB, load_settings, memory_budget

SCALING = f"{RESULTS}/measure/attention_scaling"
SCALING_SETTINGS = load_settings(PROFILE)


rule measure_attention_scaling:
    output: f"{SCALING}/{{path}}.json"
    wildcard_constraints: path="explicit|fused"
    # a settings edit reruns the measurement; the budget read from the machine does not
    params:
        settings=json.dumps(SCALING_SETTINGS, sort_keys=True),
        code=module_code("attnlab.measure.attention_scaling"),
    # every core (Snakemake caps this at --cores), so no other job distorts the timing
    threads: os.cpu_count() or 1
    resources: mem_mb=int(memory_budget(SCALING_SETTINGS, "cpu")[0] / MB), runtime=SCALING_SETTINGS["runtime_min"]
    log: f"{SCALING}/logs/{{path}}.log"
    shell: "{PYTHON} -m attnlab.measure.attention_scaling run --profile {PROFILE} --path {wildcards.path} "
           "--threads {threads} --out {output} 2> {log}"


add_table("attention_scaling", inputs={"explicit": f"{SCALING}/explicit.json", "fused": f"{SCALING}/fused.json"})
