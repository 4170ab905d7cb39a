# throughput: training speed of the project's model against a reference from nn.TransformerEncoderLayer,
# float32 and bf16, and the machine's matmul peak (attnlab.measure.throughput). Sizes per profile:
# configs/profile/<profile>.yaml (measure.throughput). Its own target: snakemake table_throughput figure_throughput.
# --lint 'mixed rules and functions': this family's Step functions (its jobs' keys, inputs, outputs) stay beside its rules.
import os


THROUGHPUT = f"{RESULTS}/measure/throughput/throughput.json"
THROUGHPUT_SETTINGS = PROFILE_CONFIG.measure.throughput


@functools.cache
def throughput_step() -> Step:
    # an edit of the settings, of the measuring code or of a measured experiment (its shapes, its
    # batch) reruns the measurement
    experiments = [composed(f"throughput {e} {PROFILE}", lambda: config_hash(compose([f"experiment={e}", f"profile={PROFILE}"])))
                   for e in THROUGHPUT_SETTINGS.experiments]
    key = digest(module_code("attnlab.measure.throughput"), OmegaConf.to_container(THROUGHPUT_SETTINGS), experiments)
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
