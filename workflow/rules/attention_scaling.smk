# attention_scaling: one attention layer's time and memory from 128 tokens up, explicit vs fused
# (TABLES.md). Sizes, repeats and the memory budget per profile: configs/measure/attention_scaling.yaml.
# --lint 'mixed rules and functions': this family's Step functions (its jobs' keys, inputs, outputs) stay beside its rules.
import importlib
import os

# The measurement's module imports torch: read here only when its settings are composed afresh or one
# of its jobs runs (a callable resource is asked of a job that runs), so planning imports no torch.
SCALING = f"{RESULTS}/measure/attention_scaling"
SCALING_MODULE = "attnlab.measure.attention_scaling"
SCALING_SETTINGS = composed(f"attention_scaling {PROFILE}",
                            lambda: importlib.import_module(SCALING_MODULE).load_settings(PROFILE))


def scaling_memory_mb(wildcards) -> int:
    """The budget the measurement keeps to (half the machine's memory by default), as Snakemake's mem_mb."""
    scaling = importlib.import_module(SCALING_MODULE)
    return int(scaling.memory_budget(SCALING_SETTINGS, "cpu")[0] / scaling.MB)


SCALING_CODE = measurement_code("attnlab.measure.attention_scaling")


def scaling_step(path: str) -> Step:
    # a settings edit reruns the measurement; the budget read from the machine does not
    return register(Step(f"measure_attention_scaling/{path}", digest(SCALING_CODE, SCALING_SETTINGS, path),
                         [f"{SCALING}/{path}.json"]))


rule measure_attention_scaling:
    input:
        unpack(lambda w: scaling_step(w.path).rule_inputs())
    output: result=f"{SCALING}/{{path}}.json"
    wildcard_constraints: path="explicit|fused"
    # every core (Snakemake caps this at --cores), so no other job distorts the timing
    threads: os.cpu_count() or 1
    resources: mem_mb=scaling_memory_mb, runtime=SCALING_SETTINGS["runtime_min"]
    log: f"{SCALING}/logs/{{path}}.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.measure.attention_scaling run --profile {PROFILE} --path {wildcards.path} "
                    "--threads {threads} --out {output.result}")


add_table("attention_scaling", inputs={path: scaling_step(path).outputs for path in ("explicit", "fused")})
