# corpus -> tokenizer -> token cache -> table `corpus`. Each stage composes the same Hydra config;
# their key is what the cache computes from (the verified corpus, its slice, the vocabulary). The
# cache is not committed; its record is (results/<profile>/tokens.json: counts, checksum, the
# unigram loss), and the runs, the measurements and the tables declare the record as their input: a
# job that reads the cache and finds none rebuilds it (attnlab.data.prepare), so a clone rebuilds
# neither the cache nor, through it, everything downstream for jobs that need not run.

DATA = f"{RESULTS}/data"
DATA_HASH = composed(f"data {PROFILE}", lambda: data_hash(compose([f"profile={PROFILE}"])))
TOKENS_RECORD = f"{RESULTS}/tokens.json"
DATA_STAGES = {"corpus": {"text": f"{DATA}/corpus.txt"}, "tokenizer": {"tokenizer": f"{DATA}/tokenizer.json"},
               "tokens": {"ids": f"{DATA}/tokens.npy", "meta": f"{DATA}/tokens.json", "record": TOKENS_RECORD}}


def data_step(stage: str) -> Step:
    earlier = list(DATA_STAGES)[:list(DATA_STAGES).index(stage)]
    return register(Step(stage, DATA_HASH, list(DATA_STAGES[stage].values()),
                         {s: list(DATA_STAGES[s].values())[:1] for s in earlier}))


DATA_STEPS = {stage: data_step(stage) for stage in DATA_STAGES}  # registered now: tables read their keys

for _stage in DATA_STAGES:

    rule:
        name: _stage
        input: unpack(lambda w, _stage=_stage: DATA_STEPS[_stage].rule_inputs())
        output: **DATA_STAGES[_stage]
        params:
            stage=_stage,
            # the tokens stage keeps its record beside the cache (a params value: the shell is read when
            # the job runs, after this loop has moved on)
            keep_record=f" && cp {DATA_STAGES['tokens']['meta']} {TOKENS_RECORD}" if _stage == "tokens" else "",
        resources: mem_mb=2000, runtime=10
        log: f"{DATA}/logs/{_stage}.log"
        conda: ENVIRONMENT
        shell:
            logged("{PYTHON} -m attnlab.data {params.stage} profile={PROFILE}{params.keep_record}")


add_table("corpus", inputs={"meta": TOKENS_RECORD})
