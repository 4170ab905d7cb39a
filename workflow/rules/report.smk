# The claims ledger (configs/claims.yaml judged against every table), its plot, the reader's report and
# the README's Results section. Included after tables.smk: every table and figure is registered, so
# these jobs' keys (which cover the keys of what they read) are known when their rules are read.
# The reader's report (results/<p>/report.html) opens on the ledger, then every table in TABLES.md's
# order with its caption, claims and figure. Snakemake's own report (rule graph, runtimes):
# snakemake --report results/<p>/snakemake_report.html --config profile=<p>.

CLAIMS_CODE = module_code("attnlab.claims.__main__", files=(CLAIMS_FILE,))
CLAIMS = [f"{RESULTS}/claims.csv", f"{RESULTS}/claims.md"]
TABLE_CSVS = [f"{RESULTS}/tables/{table_id}.csv" for table_id in sorted(TABLES)]
FIGURE_PNGS = [f"{FIGURES}/{t}.png" for t in sorted(TABLES) if TABLES[t]["figure"]]
CLAIMS_STEP = register(Step("claims", digest(CLAIMS_CODE, TABLE_CSVS), CLAIMS, {"tables": TABLE_CSVS}, writes_key=True))


rule claims:
    input: **CLAIMS_STEP.rule_inputs()
    output: csv=CLAIMS[0], md=CLAIMS[1], key=CLAIMS_STEP.key_file
    params: claims=CLAIMS_FILE, tables=" ".join(TABLE_CSVS), key=CLAIMS_STEP.key
    resources: mem_mb=1000, runtime=5
    log: f"{RESULTS}/logs/claims.log"
    conda: ENVIRONMENT
    shell:
        logged_with_key("{PYTHON} -m attnlab.claims check --claims {params.claims} --profile {PROFILE}"
                        " --csv {output.csv} --md {output.md} {params.tables}")


CLAIMS_PLOT_STEP = register(Step("claims_plot", module_code("attnlab.claims.plot"),
                                 [f"{FIGURES}/claims.png", f"{FIGURES}/claims.svg"], {"ledger": CLAIMS[:1]},
                                 writes_key=True))


rule claims_plot:
    input: **CLAIMS_PLOT_STEP.rule_inputs()
    output:
        png=report(f"{FIGURES}/claims.png", caption="../report/claims.rst", category="Claims ledger"),
        svg=f"{FIGURES}/claims.svg",
        key=CLAIMS_PLOT_STEP.key_file,
    params: key=CLAIMS_PLOT_STEP.key
    resources: mem_mb=1000, runtime=5
    log: f"{RESULTS}/logs/claims_plot.log"
    conda: ENVIRONMENT
    shell:
        logged_with_key("{PYTHON} -m attnlab.claims.plot --ledger {input.ledger} --out {output.png}")


_report_inputs = {"ledger": CLAIMS[:1], "claims_figure": [f"{FIGURES}/claims.png"], "table": TABLE_CSVS,
                  "figure": FIGURE_PNGS, "caption": [f"workflow/report/{t}.rst" for t in sorted(TABLES)]}
# the captions are files of the repository, not outputs: their text is part of the key
REPORT_STEP = register(Step("report", digest(module_code("attnlab.report"),
                                             [Path(p).read_text(encoding="utf-8") for p in _report_inputs["caption"]]),
                            [f"{RESULTS}/report.html"], _report_inputs, writes_key=True))


rule report:
    input: **REPORT_STEP.rule_inputs()
    output:
        html=report(f"{RESULTS}/report.html", caption="../report/claims.rst", category="Claims ledger"),
        key=REPORT_STEP.key_file,
    params:
        args=named_args({k: v for k, v in REPORT_STEP.inputs.items() if k != "ledger"}),
        key=REPORT_STEP.key,
    resources: mem_mb=1000, runtime=5
    log: f"{RESULTS}/logs/report.log"
    conda: ENVIRONMENT
    shell:
        logged_with_key("{PYTHON} -m attnlab.report --profile {PROFILE} --ledger {input.ledger} --out {output.html} "
                        "{params.args}")


SINK_STEPS = [CLAIMS_STEP, CLAIMS_PLOT_STEP, REPORT_STEP]

# The README's Results section is the full profile's: only that profile rewrites it.
if PROFILE == "full":
    # what the README section links to: every table's Markdown and figure, the report, the cost table
    _links = {"table": [f"{RESULTS}/tables/{t}.md" for t in sorted(TABLES)], "figure": FIGURE_PNGS,
              "report": [f"{RESULTS}/report.html"], "time": [f"{RESULTS}/tables/pipeline_time.csv"]}
    README_STEP = register(Step("readme_results", digest(CLAIMS_CODE, _links), [f"{RESULTS}/readme_results.md"],
                                {"ledger": CLAIMS[:1], **_links}, writes_key=True))
    SINK_STEPS.append(README_STEP)

    rule readme_results:
        input: **README_STEP.rule_inputs()
        output: md=f"{RESULTS}/readme_results.md", key=README_STEP.key_file
        params: links=named_args(_links), key=README_STEP.key
        resources: mem_mb=1000, runtime=5
        log: f"{RESULTS}/logs/readme_results.log"
        conda: ENVIRONMENT
        shell:
            logged_with_key("{PYTHON} -m attnlab.claims readme --ledger {input.ledger} --readme README.md "
                            "--out {output.md} {params.links}")


# The default target asks for every job's outputs and key file, so that a deleted output (Snakemake
# otherwise leaves a missing intermediate alone while what reads it exists) or a key that changed is
# rebuilt, with everything downstream. The token cache is the exception: not committed, it is rebuilt
# by the jobs that read it, when they run.
PUBLISHED = sorted({path for step in JOBS.values() for path in [*step.outputs, step.key_file]
                    if not path.startswith(f"{DATA}/")})
