# The claims ledger (configs/claims.yaml judged against every table) and the README's Results section.
# Family files are included before tables.smk, so the registry (TABLES) is read lazily, in input
# functions, once every family has registered its tables.
# Report: snakemake --config profile=<p> --report results/<p>/report.html (the ledger is listed first:
# the report sorts categories by name and "Claims ledger" comes before "Figures" and "Tables").

CLAIMS_CODE = module_code("attnlab.claims.__main__", files=("configs/claims.yaml",))
CLAIMS = [f"{RESULTS}/claims.csv", f"{RESULTS}/claims.md", f"{RESULTS}/claims.html"]


def table_csvs() -> list[str]:
    return [f"{RESULTS}/tables/{table_id}.csv" for table_id in sorted(TABLES)]


def results_links() -> dict:
    """table=<md> and figure=<png> of every registered table, for the README section."""
    return {"table": [f"{RESULTS}/tables/{t}.md" for t in sorted(TABLES)],
            "figure": [f"{FIGURES}/{t}.png" for t in sorted(TABLES) if TABLES[t]["figure"]]}


@functools.cache
def claims_step() -> Step:
    return register(Step("claims", digest(CLAIMS_CODE, len(SEEDS), table_csvs()), CLAIMS, {"tables": table_csvs()}))


@functools.cache
def readme_step() -> Step:
    inputs = {"ledger": CLAIMS[:1], **results_links()}
    return register(Step("readme_results", digest(CLAIMS_CODE, inputs), [f"{RESULTS}/readme_results.md"], inputs))


rule claims:
    input:
        unpack(lambda w: step_inputs(claims_step()))
    output:
        csv=CLAIMS[0],
        md=CLAIMS[1],
        html=report(CLAIMS[2], caption="../report/claims.rst", category="Claims ledger"),
        stamp=f"{STAMPS}/claims.key",
    params: seeds=len(SEEDS), key=lambda w: claims_step().key, tables=lambda w: " ".join(table_csvs())
    resources: mem_mb=1000, runtime=5
    log: f"{RESULTS}/logs/claims.log"
    shell:
        write_stamp("{PYTHON} -m attnlab.claims check --claims configs/claims.yaml --profile {PROFILE} --seeds {params.seeds}"
                    " --csv {output.csv} --md {output.md} --html {output.html} {params.tables}")


ALL_TARGETS += CLAIMS

# The README's Results section is the full profile's: only that profile rewrites it.
if PROFILE == "full":

    rule readme_results:
        input:
            unpack(lambda w: step_inputs(readme_step()))
        output: md=f"{RESULTS}/readme_results.md", stamp=f"{STAMPS}/readme_results.key"
        params: links=lambda w: named_args(results_links()), key=lambda w: readme_step().key
        resources: mem_mb=1000, runtime=5
        log: f"{RESULTS}/logs/readme_results.log"
        shell:
            write_stamp("{PYTHON} -m attnlab.claims readme --ledger " + CLAIMS[0] +
                        " --readme README.md --out {output.md} {params.links}")

    ALL_TARGETS.append(f"{RESULTS}/readme_results.md")
