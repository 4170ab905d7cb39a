# The claims ledger (configs/claims.yaml judged against every table) and the README's Results section.
# Family files are included before tables.smk, so the registry (TABLES) is read lazily, in input
# functions, once every family has registered its tables.
# The reader's report (results/<p>/report.html, rule report) opens on the ledger, then every table in
# TABLES.md's order with its caption, claims and figure. Snakemake's own report (rule graph, runtimes):
# snakemake --report results/<p>/snakemake_report.html --config profile=<p>.
# --lint 'mixed rules and functions': this family's Step functions (its jobs' keys, inputs, outputs) stay beside its rules.

CLAIMS_CODE = module_code("attnlab.claims.__main__", files=(CLAIMS_FILE,))
CLAIMS = [f"{RESULTS}/claims.csv", f"{RESULTS}/claims.md"]


def table_csvs() -> list[str]:
    return [f"{RESULTS}/tables/{table_id}.csv" for table_id in sorted(TABLES)]


def results_links() -> dict:
    """What the README section links to: every table's Markdown and figure, the report, the cost table."""
    return {"table": [f"{RESULTS}/tables/{t}.md" for t in sorted(TABLES)],
            "figure": [f"{FIGURES}/{t}.png" for t in sorted(TABLES) if TABLES[t]["figure"]],
            "report": [f"{RESULTS}/report.html"], "time": [f"{RESULTS}/tables/pipeline_time.csv"]}


@functools.cache
def claims_step() -> Step:
    return register(Step("claims", digest(CLAIMS_CODE, table_csvs()), CLAIMS, {"tables": table_csvs()}))


@functools.cache
def readme_step() -> Step:
    inputs = {"ledger": CLAIMS[:1], **results_links()}
    return register(Step("readme_results", digest(CLAIMS_CODE, inputs), [f"{RESULTS}/readme_results.md"], inputs))


def sink_steps() -> list:
    """The ledger, the report and the README section: registered once every table is."""
    return [claims_step(), claims_plot_step(), report_step(), *([readme_step()] if PROFILE == "full" else [])]


rule claims:
    input:
        unpack(lambda w: claims_step().rule_inputs())
    output:
        csv=CLAIMS[0],
        md=CLAIMS[1],
    params: claims=CLAIMS_FILE, tables=lambda w: " ".join(table_csvs())
    resources: mem_mb=1000, runtime=5
    log: f"{RESULTS}/logs/claims.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.claims check --claims {params.claims} --profile {PROFILE}"
               " --csv {output.csv} --md {output.md} {params.tables}")


ALL_TARGETS += CLAIMS


@functools.cache
def claims_plot_step() -> Step:
    return register(Step("claims_plot", module_code("attnlab.claims.plot"), [f"{FIGURES}/claims.png", f"{FIGURES}/claims.svg"],
                         {"ledger": CLAIMS[:1]}))


rule claims_plot:
    input:
        unpack(lambda w: claims_plot_step().rule_inputs())
    output:
        png=report(f"{FIGURES}/claims.png", caption="../report/claims.rst", category="Claims ledger"),
        svg=f"{FIGURES}/claims.svg",
    resources: mem_mb=1000, runtime=5
    log: f"{RESULTS}/logs/claims_plot.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.claims.plot --ledger {input.ledger} --out {output.png}")


ALL_TARGETS.extend([f"{FIGURES}/claims.png", f"{FIGURES}/claims.svg"])


@functools.cache
def report_step() -> Step:
    inputs = {"ledger": CLAIMS[:1], "claims_figure": [f"{FIGURES}/claims.png"], "table": table_csvs(),
              "figure": [f"{FIGURES}/{t}.png" for t in sorted(TABLES) if TABLES[t]["figure"]],
              "caption": [f"workflow/report/{t}.rst" for t in sorted(TABLES)]}
    # the captions are files of the repository, not outputs: their text is part of the key
    captions = [Path(p).read_text(encoding="utf-8") for p in inputs["caption"]]
    return register(Step("report", digest(module_code("attnlab.report"), captions), [f"{RESULTS}/report.html"],
                         inputs))


rule report:
    input:
        unpack(lambda w: report_step().rule_inputs())
    output:
        html=report(f"{RESULTS}/report.html", caption="../report/claims.rst", category="Claims ledger"),
    params:
        args=lambda w: named_args({k: v for k, v in report_step().inputs.items() if k != "ledger"}),
    resources: mem_mb=1000, runtime=5
    log: f"{RESULTS}/logs/report.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.report --profile {PROFILE} --ledger {input.ledger} --out {output.html} {params.args}")


ALL_TARGETS.append(f"{RESULTS}/report.html")

# The README's Results section is the full profile's: only that profile rewrites it.
if PROFILE == "full":

    rule readme_results:
        input:
            unpack(lambda w: readme_step().rule_inputs())
        output: md=f"{RESULTS}/readme_results.md"
        params: links=lambda w: named_args(results_links())
        resources: mem_mb=1000, runtime=5
        log: f"{RESULTS}/logs/readme_results.log"
        conda: ENVIRONMENT
        shell:
            logged("{PYTHON} -m attnlab.claims readme --ledger {input.ledger} --readme README.md --out {output.md} "
                   "{params.links}")

    ALL_TARGETS.append(f"{RESULTS}/readme_results.md")
