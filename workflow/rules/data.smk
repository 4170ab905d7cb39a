# corpus -> tokenizer -> token cache (attnlab.jobs: declare_data). The cache is not committed; its record is
# (results/<profile>/tokens.json), which the runs, measurements and tables read.


rule corpus:
    input: unpack(lambda w: J.data_steps["corpus"].rule_inputs())
    output: **J.data_stages["corpus"]
    resources: mem_mb=2000, runtime=10
    log: f"{J.data}/logs/corpus.log"
    conda: ENVIRONMENT
    shell: logged("{PYTHON} -m attnlab.data corpus profile={PROFILE}")


rule tokenizer:
    input: unpack(lambda w: J.data_steps["tokenizer"].rule_inputs())
    output: **J.data_stages["tokenizer"]
    resources: mem_mb=2000, runtime=10
    log: f"{J.data}/logs/tokenizer.log"
    conda: ENVIRONMENT
    shell: logged("{PYTHON} -m attnlab.data tokenizer profile={PROFILE}")


rule tokens:
    input: unpack(lambda w: J.data_steps["tokens"].rule_inputs())
    output: **J.data_stages["tokens"]
    resources: mem_mb=2000, runtime=10
    log: f"{J.data}/logs/tokens.log"
    conda: ENVIRONMENT
    # the record is kept beside the cache
    shell: logged("{PYTHON} -m attnlab.data tokens profile={PROFILE} && cp {output.meta} {output.record}")
