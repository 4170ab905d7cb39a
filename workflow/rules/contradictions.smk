# The contradictions table: for every CONTRADICTED claim, the settings tried that the chapter did not state
# (configs/hypotheses.yaml declares each hypothesis; src/attnlab/families/contradictions.py reads it). Its
# runs are ordinary runs of their families' rules (configs/experiment/..., configs/winograd/...);
# attention_scaling's hypotheses are measurements, ruled here. Read after the families: a hypothesis takes
# its family table's inputs and replaces the ones it changes.
# --lint 'mixed rules and functions': the hypotheses' Step functions stay beside their rule.
from attnlab.families.contradictions import TRAINED


@functools.cache
def scaling_threads_step(threads: int) -> Step:
    return register(Step(f"measure_attention_scaling_threads/{threads}", digest(SCALING_CODE, SCALING_SETTINGS, threads),
                         [f"{SCALING}/hypotheses/explicit_threads{threads}.json"]))


rule measure_attention_scaling_threads:
    input:
        unpack(lambda w: scaling_threads_step(int(w.threads)).rule_inputs())
    output: result=f"{SCALING}/hypotheses/explicit_threads{{threads}}.json"
    wildcard_constraints: threads=r"\d+"
    # every core, as the published measurement: no other job distorts the timing
    threads: os.cpu_count() or 1
    resources: mem_mb=scaling_memory_mb, runtime=SCALING_SETTINGS["runtime_min"]
    log: f"{SCALING}/logs/hypotheses/explicit_threads{{threads}}.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.measure.attention_scaling run --profile {PROFILE} --path explicit "
               "--threads {wildcards.threads} --out {output.result}")


def hypothesis_runs(h, run: str, published: list[str]) -> list[str]:
    """The files a hypothesis's run gives its table, one per seed it trains."""
    if run.startswith("measure/attention_scaling_threads"):
        return scaling_threads_step(int(run.removeprefix("measure/attention_scaling_threads"))).outputs
    if run.startswith("winograd/"):
        version, _, model = run.removeprefix("winograd/").partition("_")
        index = WINOGRAD_FILES.index(Path(published[0]).name)  # what the table reads: metrics or the probe
        return [winograd_step(version, model, seed).outputs[index]
                for seed in seeds_of(run, base=h.seeds_under(PROFILE_CONFIG.winograd_seeds))]
    return [train_step(run, seed).outputs[0] for seed in seeds_of(run, base=h.seeds_under(PROFILE_CONFIG.seeds))]


def contradiction_inputs(variant: bool) -> dict:
    """The claims, the profile and its seed plans, the published tables the claims are read on (the sqrt(d_k)
    sweep's too), and each trained hypothesis's family inputs with its own runs in place (a variant reads the
    same: the hypotheses are judged against the published runs). A hypothesis not run reads nothing."""
    found = {"claims": [CLAIMS_FILE], "profile": [f"configs/profile/{PROFILE}.yaml"], "pipeline": ["configs/pipeline.yaml"],
             "tables": sorted({f"{RESULTS}/tables/{t}.csv" for t in (*(h.table for h in TRAINED), "sqrt_dk_sweep")})}
    for h in TRAINED:
        if h.read:
            continue
        family = TABLES[h.table]["inputs"]
        for name, paths in family.items():
            found[f"{h.id}:{name}"] = hypothesis_runs(h, h.runs[name], paths) if name in h.runs else paths
    return found


# the claims file is read for its rules, the hypotheses file for the hypotheses, their configs for whether
# they only change training (paired with the published seeds): their text is part of the table's key
HYPOTHESIS_CONFIGS = sorted(str(p.relative_to(workflow.basedir)) for h in TRAINED for run in h.runs.values()
                            for p in [Path(workflow.basedir, "configs", f"{run}.yaml" if run.startswith("winograd/")
                                                          else f"experiment/{run}.yaml")] if p.is_file())
add_table("contradictions", inputs=contradiction_inputs,
          code_files=(CLAIMS_FILE, "configs/hypotheses.yaml", *HYPOTHESIS_CONFIGS))
