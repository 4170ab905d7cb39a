# throughput: training speed of the project's model against a reference from nn.TransformerEncoderLayer,
# float32 and bf16, and the machine's matmul peak (attnlab.measure.throughput). Sizes per profile:
# configs/profile/<profile>.yaml (measure.throughput). Its own target: snakemake table_throughput figure_throughput.
# runs_per_hour (below): whole runs per hour, one seed per process against seeds batched, with and without
# torch.compile. Its own target: snakemake table_runs_per_hour.
# --lint 'mixed rules and functions': this family's Step functions (its jobs' keys, inputs, outputs) stay beside its rules.
import os


THROUGHPUT = f"{RESULTS}/measure/throughput/throughput.json"
THROUGHPUT_SETTINGS = PROFILE_CONFIG.measure.throughput


def measured_experiments(names) -> list[str]:
    """The config hashes of the experiments a speed measurement times: an edit of one (its shapes,
    its batch) reruns the measurement, as an edit of its settings or its code does."""
    return [composed(f"throughput {e} {PROFILE}", lambda: config_hash(compose([f"experiment={e}", f"profile={PROFILE}"])))
            for e in names]


@functools.cache
def throughput_step() -> Step:
    key = digest(measurement_code("attnlab.measure.throughput"), OmegaConf.to_container(THROUGHPUT_SETTINGS),
                 measured_experiments(THROUGHPUT_SETTINGS.experiments))
    return register(Step("measure_throughput", key, [THROUGHPUT]))


rule measure_throughput:
    input:
        unpack(lambda w: throughput_step().rule_inputs())
    output: result=THROUGHPUT
    # every core (Snakemake caps this at --cores), so no other job distorts the timing; the
    # measurement sets its own thread counts
    threads: os.cpu_count() or 1
    resources: mem_mb=4000, runtime=THROUGHPUT_SETTINGS.runtime_min
    log: f"{RESULTS}/measure/throughput/measure.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.measure.throughput --profile {PROFILE} --out {output.result}")


add_table("throughput", inputs={"throughput": throughput_step().outputs})


# runs_per_hour: one seed per process against K seeds as one batched model, with and without
# torch.compile, float32 and bf16 (attnlab.measure.runs_per_hour). Sizes: measure.runs_per_hour.
RUNS_PER_HOUR = f"{RESULTS}/measure/runs_per_hour/runs_per_hour.json"
RUNS_PER_HOUR_SETTINGS = PROFILE_CONFIG.measure.runs_per_hour


@functools.cache
def runs_per_hour_step() -> Step:
    key = digest(measurement_code("attnlab.measure.runs_per_hour"), OmegaConf.to_container(RUNS_PER_HOUR_SETTINGS),
                 measured_experiments(RUNS_PER_HOUR_SETTINGS.experiments))
    return register(Step("measure_runs_per_hour", key, [RUNS_PER_HOUR]))


rule measure_runs_per_hour:
    input:
        unpack(lambda w: runs_per_hour_step().rule_inputs())
    output: result=RUNS_PER_HOUR
    threads: os.cpu_count() or 1  # alone on the machine, as measure_throughput
    resources: mem_mb=12000, runtime=RUNS_PER_HOUR_SETTINGS.runtime_min
    log: f"{RESULTS}/measure/runs_per_hour/measure.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.measure.runs_per_hour --profile {PROFILE} --out {output.result}")


# the GPU's rows: measured by hand where there is one (attnlab.measure.runs_per_hour_gpu) and committed; until
# then the profile's GPU modes (measure.runs_per_hour_gpu), each row saying it was not measured
RUNS_PER_HOUR_GPU = f"{RESULTS}/measure/runs_per_hour/runs_per_hour_gpu.json"
GPU_ROWS = {"runs_per_hour_gpu": [RUNS_PER_HOUR_GPU]} if os.path.exists(RUNS_PER_HOUR_GPU) else \
    {"gpu_modes": [f"configs/profile/{PROFILE}.yaml"]} if "runs_per_hour_gpu" in PROFILE_CONFIG.measure else {}
add_table("runs_per_hour", inputs={"runs_per_hour": runs_per_hour_step().outputs, **GPU_ROWS})
