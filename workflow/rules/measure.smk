# The measurements: no training of their own, each under its key (its code in src/attnlab/measure/, its
# settings; attnlab.jobs), written under results/<profile>/measure/<name>/ and read by their tables.
import os

from attnlab.jobs import HEAD_READINGS

ALL_CORES = os.cpu_count() or 1  # timings take every core (capped at --cores): no other job distorts them


# the analytic demonstrations: the same numbers in every profile
rule measure_analytic:
    input: unpack(lambda w: J.analytic_step(w.analytic).rule_inputs())
    output: result=f"{RESULTS}/measure/{{analytic}}/result.json"
    wildcard_constraints: analytic="|".join(J.analytic)
    resources: mem_mb=1000, runtime=5
    log: f"{RESULTS}/measure/{{analytic}}/measure.log"
    conda: ENVIRONMENT
    shell: logged("{PYTHON} -m attnlab.measure.analytic {wildcards.analytic} --out {output.result}")


# random rows of scores (configs/measure/scale.yaml): their variance, and the rows softmax makes of them
rule measure_score_variance:
    input: unpack(lambda w: J.random_rows_step("score_variance").rule_inputs())
    output: csv=J.random_rows_step("score_variance").outputs[0], meta=J.random_rows_step("score_variance").outputs[1]
    resources: mem_mb=1000, runtime=5
    log: f"{RESULTS}/measure/score_variance/measure.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.measure.random_rows score_variance --config configs/measure/scale.yaml"
               " --out {output.csv} --meta {output.meta}")


rule measure_random_rows:
    input: unpack(lambda w: J.random_rows_step("random_rows").rule_inputs())
    output: csv=J.random_rows_step("random_rows").outputs[0], meta=J.random_rows_step("random_rows").outputs[1]
    resources: mem_mb=1000, runtime=5
    log: f"{RESULTS}/measure/random_rows/measure.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.measure.random_rows rows --config configs/measure/scale.yaml"
               " --out {output.csv} --meta {output.meta}")


rule measure_norm_grad_init:
    input: unpack(lambda w: J.grad_norms_step.rule_inputs())
    output: csv=J.grad_norms_step.outputs[0]
    resources: mem_mb=3000, runtime=15
    log: f"{RESULTS}/measure/norm_grad_init/grad_norms.log"
    conda: ENVIRONMENT
    shell: logged("{PYTHON} -m attnlab.measure.grad_norms --profile {PROFILE} --threads {threads} --out {output.csv}")


# a measurement sized per profile in its settings file (configs/measure/<name>.yaml, sizes.<profile>), one job per
# path it times; the contradictions' hypotheses time a path on fewer threads
rule measure_sized:
    input: unpack(lambda w: J.sized_step(w.name, w.path).rule_inputs())
    output: result=f"{RESULTS}/measure/{{name}}/{{path}}.json"
    wildcard_constraints: name="|".join(J.sized), path=r"\w+"
    threads: ALL_CORES
    resources: mem_mb=J.sized_memory_mb, runtime=lambda w: J.sized[w.name]["runtime_min"]
    log: f"{RESULTS}/measure/{{name}}/logs/{{path}}.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.measure.{wildcards.name} run --profile {PROFILE} --path {wildcards.path} "
               "--threads {threads} --out {output.result}")


rule measure_sized_threads:
    input: unpack(lambda w: J.sized_step(w.name, w.path, int(w.threads)).rule_inputs())
    output: result=f"{RESULTS}/measure/{{name}}/hypotheses/{{path}}_threads{{threads}}.json"
    wildcard_constraints: name="|".join(J.sized), path=r"[a-z]+", threads=r"\d+"
    threads: ALL_CORES
    resources: mem_mb=J.sized_memory_mb, runtime=lambda w: J.sized[w.name]["runtime_min"]
    log: f"{RESULTS}/measure/{{name}}/logs/hypotheses/{{path}}_threads{{threads}}.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.measure.{wildcards.name} run --profile {PROFILE} --path {wildcards.path} "
               "--threads {wildcards.threads} --out {output.result}")


# training speed against a reference, and whole runs per hour (measure.throughput, measure.runs_per_hour of
# configs/profile/<profile>.yaml); each measurement sets its own thread counts
rule measure_throughput:
    input: unpack(lambda w: J.throughput_step.rule_inputs())
    output: result=J.throughput_step.outputs[0]
    threads: ALL_CORES
    resources: mem_mb=4000, runtime=J.profile_config.measure.throughput.runtime_min
    log: f"{RESULTS}/measure/throughput/measure.log"
    conda: ENVIRONMENT
    shell: logged("{PYTHON} -m attnlab.measure.throughput --profile {PROFILE} --out {output.result}")


rule measure_runs_per_hour:
    input: unpack(lambda w: J.runs_per_hour_step.rule_inputs())
    output: result=J.runs_per_hour_step.outputs[0]
    threads: ALL_CORES
    resources: mem_mb=12000, runtime=J.profile_config.measure.runs_per_hour.runtime_min
    log: f"{RESULTS}/measure/runs_per_hour/measure.log"
    conda: ENVIRONMENT
    shell: logged("{PYTHON} -m attnlab.measure.runs_per_hour --profile {PROFILE} --out {output.result}")


# the two-block Winograd model's circuit, by intervention on held-out pairs, one job per published seed
# (measure.winograd_interventions.seeds): it takes the seed's kept weights or retrains the seed on the CPU
rule measure_winograd_interventions:
    input: unpack(lambda w: J.interventions_step(int(w.seed)).rule_inputs())
    output: result=f"{J.interventions_folder('{seed}')}/interventions.json"
    wildcard_constraints: seed=r"\d+"
    params: split=J.split_step("role").outputs[0]
    resources: mem_mb=2000, runtime=30
    log: f"{J.interventions_folder('{seed}')}/interventions.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.measure.winograd_interventions --run $(dirname {output.result})"
               " --split {params.split} --out {output.result}")


# a head read on its run's weights (where it points, its scores read several ways), one job per run and seed the
# profile names (measure.head_readings): it takes the run's kept weights or retrains the run on the CPU
rule measure_head_readings:
    input: unpack(lambda w: J.head_readings_step(w.run, int(w.seed)).rule_inputs())
    output: result=f"{RESULTS}/runs/{{run}}/seed{{seed}}/{HEAD_READINGS}"
    wildcard_constraints: run=r"[a-z0-9_]+/[a-z0-9_]+", seed=r"\d+"
    resources: mem_mb=3000, runtime=30
    log: f"{RESULTS}/runs/{{run}}/seed{{seed}}/head_readings.log"
    conda: ENVIRONMENT
    shell: logged("{PYTHON} -m attnlab.measure.head_readings --run $(dirname {output.result}) --out {output.result}")
