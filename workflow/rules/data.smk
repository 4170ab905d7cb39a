# corpus -> tokenizer -> token cache -> table `corpus`. Each stage composes the same Hydra config;
# their key is what the cache computes from (the verified corpus, its slice, the vocabulary). The
# cache is not committed (its stamps are): it is built only when a job that reads it has to run.

DATA = f"{RESULTS}/data"
DATA_HASH = data_hash(compose([f"profile={PROFILE}"]))
DATA_STAGES = {"corpus": ["corpus.txt"], "tokenizer": ["tokenizer.json"], "tokens": ["tokens.npy", "tokens.json"]}


def data_step(stage: str) -> Step:
    earlier = list(DATA_STAGES)[:list(DATA_STAGES).index(stage)]
    return register(Step(stage, DATA_HASH, [f"{DATA}/{name}" for name in DATA_STAGES[stage]],
                         {s: [f"{DATA}/{name}" for name in DATA_STAGES[s]] for s in earlier}))


for _stage in DATA_STAGES:

    rule:
        name: _stage
        input:
            unpack(lambda w, _stage=_stage: step_inputs(data_step(_stage)))
        output: *data_step(_stage).outputs, stamp=data_step(_stage).stamp
        params: key=data_step(_stage).key, stage=_stage
        resources: mem_mb=2000, runtime=10
        log: f"{DATA}/logs/{_stage}.log"
        shell:
            write_stamp("{PYTHON} -m attnlab.data {params.stage} profile={PROFILE}")


add_table("corpus", inputs={"meta": f"{DATA}/tokens.json"})
