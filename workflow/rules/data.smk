# corpus -> tokenizer -> token cache -> table `corpus`. Each stage composes the same Hydra config.

DATA = f"{RESULTS}/data"


DATA_HASH = data_hash(compose([f"profile={PROFILE}"]))  # reruns the stages when what they compute changes


rule corpus:
    output: f"{DATA}/corpus.txt"
    params: data_hash=DATA_HASH
    resources: mem_mb=1000, runtime=10
    log: f"{DATA}/logs/corpus.log"
    shell: "{PYTHON} -m attnlab.data corpus profile={PROFILE} 2> {log}"


rule tokenizer:
    input: f"{DATA}/corpus.txt"
    output: f"{DATA}/tokenizer.json"
    params: data_hash=DATA_HASH
    resources: mem_mb=2000, runtime=10
    log: f"{DATA}/logs/tokenizer.log"
    shell: "{PYTHON} -m attnlab.data tokenizer profile={PROFILE} 2> {log}"


rule tokens:
    input: f"{DATA}/corpus.txt", f"{DATA}/tokenizer.json"
    output: f"{DATA}/tokens.npy", f"{DATA}/tokens.json"
    params: data_hash=DATA_HASH
    resources: mem_mb=2000, runtime=10
    log: f"{DATA}/logs/tokens.log"
    shell: "{PYTHON} -m attnlab.data tokens profile={PROFILE} 2> {log}"


add_table("corpus", inputs={"meta": f"{DATA}/tokens.json"}, figure=False)
