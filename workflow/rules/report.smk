# The claims ledger (configs/claims.yaml judged against every table) and the README's Results section.
# Family files are included before tables.smk, so the registry (TABLES) is read lazily, in input
# functions, once every family has registered its tables.
# Report: snakemake --config profile=<p> --report results/<p>/report.html (the ledger is listed first:
# the report sorts categories by name and "Claims ledger" comes before "Figures" and "Tables").

CLAIMS_CODE = module_code("attnlab.claims", files=("configs/claims.yaml",))


def table_csvs(_wildcards=None):
    return [f"{RESULTS}/tables/{table_id}.csv" for table_id in sorted(TABLES)]


def results_links(_wildcards=None):
    """table=<md> and figure=<png> of every registered table, for the README section."""
    links = {"table": [f"{RESULTS}/tables/{t}.md" for t in sorted(TABLES)],
             "figure": [f"{FIGURES}/{t}.png" for t in sorted(TABLES) if TABLES[t]["figure"]]}
    return links


rule claims:
    input:
        tables=table_csvs,
    output:
        csv=f"{RESULTS}/claims.csv",
        md=f"{RESULTS}/claims.md",
        html=report(f"{RESULTS}/claims.html", caption="../report/claims.rst", category="Claims ledger"),
    params: seeds=len(SEEDS), code=CLAIMS_CODE
    resources: mem_mb=1000, runtime=5
    log: f"{RESULTS}/logs/claims.log"
    shell:
        "{PYTHON} -m attnlab.claims check --claims configs/claims.yaml --profile {PROFILE} --seeds {params.seeds}"
        " --csv {output.csv} --md {output.md} --html {output.html} {input.tables} 2> {log}"


ALL_TARGETS += [f"{RESULTS}/claims.csv", f"{RESULTS}/claims.md", f"{RESULTS}/claims.html"]

# The README's Results section is the full profile's: only that profile rewrites it.
if PROFILE == "full":

    rule readme_results:
        input:
            ledger=f"{RESULTS}/claims.csv",
            links=lambda w: sum(results_links().values(), []),
        output: f"{RESULTS}/readme_results.md"
        params: links=lambda w: named_args(results_links())
        resources: mem_mb=1000, runtime=5
        shell: "{PYTHON} -m attnlab.claims readme --ledger {input.ledger} --readme README.md --out {output} {params.links}"

    ALL_TARGETS.append(f"{RESULTS}/readme_results.md")
