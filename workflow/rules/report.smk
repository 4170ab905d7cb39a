# The claims ledger (configs/claims.yaml judged against every table), its plot, the captions, the reader's
# report and the README's Results section. Included after tables.smk: every table and figure is registered, so
# these jobs' keys (which cover the keys of what they read) are known when their rules are read.
# The captions (workflow/report/<id>.rst) are templates: rule captions fills their fields from the profile's
# tables, ledger and runs into results/<p>/captions/<id>.rst, which both reports show. The reader's report
# (results/<p>/report.html) opens on the verdict, then every table in TABLES.md's order with its caption,
# claims and figure. Snakemake's own report (rule graph, runtimes), whose report(caption=) names the
# rendered captions: snakemake --report results/<p>/snakemake_report.html --config profile=<p>.
# --lint 'mixed rules and functions': the ledger's and report's Step functions stay beside their rules.

# the ledger reads the seed plans beside the counts (configs/pipeline.yaml: each row's looks) as well
CLAIMS_CODE = module_code("attnlab.claims.__main__", files=(CLAIMS_FILE, "configs/pipeline.yaml"))


@functools.cache
def sink_steps(variant: bool) -> list[Step]:
    """The ledger, its plot and the report, of the published results or of the variant (which reads
    its own tables and figures where it has them, the published ones elsewhere, and names itself)."""
    home = VARIANT_DIR if variant else RESULTS
    figures = f"{VARIANT_DIR}/figures" if variant else FIGURES
    tables = [table_csv(t, variant) for t in sorted(TABLES)]
    claims = [f"{home}/claims.csv", f"{home}/claims.md"]
    own_key = digest(CLAIMS_CODE, tables)
    inputs = {"tables": tables}
    if variant:  # the published ledger: which verdicts the variant changes
        own_key, inputs = digest(own_key, VARIANT_LABEL), {**inputs, "published": [f"{RESULTS}/claims.csv"]}
    ledger = register(Step("claims", own_key, claims, inputs, writes_key=True, home=home))
    plot = register(Step("claims_plot", module_code("attnlab.claims.plot"),
                         [f"{figures}/claims.png", f"{figures}/claims.svg"], {"ledger": claims[:1]},
                         writes_key=True, home=home))
    # the captions' templates are files of the repository, not outputs: their text is part of the key
    # and the report's own text: the choices the chapter does not state, what was easy and what was hard
    templates = [f"workflow/report/{t}.rst" for t in [*sorted(TABLES), "claims", "choices", "easy_hard"]]
    captions = register(Step("captions", digest(module_code("attnlab.captions"),
                                                [Path(p).read_text(encoding="utf-8") for p in templates]),
                             [f"{home}/captions/{Path(p).name}" for p in templates],
                             {"ledger": claims[:1], "table": tables}, writes_key=True, home=home))
    report_inputs = {"ledger": claims[:1], "claims_figure": plot.outputs[:1], "table": tables,
                     "figure": [figure_png(t, variant) for t in sorted(TABLES) if TABLES[t]["figure"]],
                     "caption": captions.outputs}
    page = register(Step("report", digest(module_code("attnlab.report"), trained_tables()), [f"{home}/report.html"],
                         report_inputs, writes_key=True, home=home))
    return [ledger, plot, captions, page]


def trained_tables() -> list[str]:
    """The tables that read training runs (their claims are the trained ones, where the ledger does not say)."""
    return sorted(t for t, spec in TABLES.items()  # --lint 'absolute path': a job name's separator, below
                  if any(STEPS[p].job.split("/")[0] in ("train", "winograd_train")
                         for paths in spec["inputs"].values() for p in paths if p in STEPS))



CLAIMS_STEP = sink_steps(False)[0]


for _ledger, _plot, _captions, _report in [sink_steps(False)] + ([sink_steps(True)] if VARIANT else []):
    _prefix = "variant_" if _ledger.home != RESULTS else ""

    rule:
        name: f"{_prefix}claims"
        input: unpack(lambda w, step=_ledger: step.rule_inputs())
        output: csv=_ledger.outputs[0], md=_ledger.outputs[1], key=_ledger.key_file
        params:
            claims=CLAIMS_FILE,
            tables=" ".join(_ledger.inputs["tables"]),
            variant=f"--published {_ledger.inputs['published'][0]} --label {shlex.quote(VARIANT_LABEL)}"
                    if "published" in _ledger.inputs else "",
            key=_ledger.key,
        resources: mem_mb=1000, runtime=5
        log: f"{_ledger.home}/logs/claims.log"
        conda: ENVIRONMENT
        shell:
            logged_with_key("{PYTHON} -m attnlab.claims check --claims {params.claims} --profile {PROFILE}"
                            " --csv {output.csv} --md {output.md} {params.variant} {params.tables}")


    rule:
        name: f"{_prefix}claims_plot"
        input: unpack(lambda w, step=_plot: step.rule_inputs())
        output:
            png=report(_plot.outputs[0], caption=rendered_caption("claims", _plot.home), category="Claims ledger"),
            svg=_plot.outputs[1],
            key=_plot.key_file,
        params: key=_plot.key
        resources: mem_mb=1000, runtime=5
        log: f"{_plot.home}/logs/claims_plot.log"
        conda: ENVIRONMENT
        shell:
            logged_with_key("{PYTHON} -m attnlab.claims.plot --ledger {input.ledger} --out {output.png}")


    rule:
        name: f"{_prefix}captions"
        input: unpack(lambda w, step=_captions: step.rule_inputs())
        output: rst=_captions.outputs, key=_captions.key_file
        params:
            templates=" ".join(f"caption=workflow/report/{Path(p).name}" for p in _captions.outputs),
            tables=named_args({"table": _captions.inputs["table"]}),
            key=_captions.key,
        resources: mem_mb=1000, runtime=5
        log: f"{_captions.home}/logs/captions.log"
        conda: ENVIRONMENT
        shell:
            logged_with_key("{PYTHON} -m attnlab.captions --profile {PROFILE} --ledger {input.ledger} "
                            "--out $(dirname {output.rst[0]}) {params.templates} {params.tables}")


    rule:
        name: f"{_prefix}report"
        input: unpack(lambda w, step=_report: step.rule_inputs())
        output:
            html=report(_report.outputs[0], caption=rendered_caption("claims", _report.home), category="Claims ledger"),
            key=_report.key_file,
        params:
            args=named_args({k: v for k, v in _report.inputs.items() if k != "ledger"}),
            trained=",".join(trained_tables()),
            key=_report.key,
        resources: mem_mb=1000, runtime=5
        log: f"{_report.home}/logs/report.log"
        conda: ENVIRONMENT
        shell:
            logged_with_key("{PYTHON} -m attnlab.report --profile {PROFILE} --ledger {input.ledger} --out {output.html} "
                            "--trained {params.trained} {params.args}")


# The README's Results section is the full profile's: only that profile rewrites it.
if PROFILE == "full":
    # what the README section links to: every table's Markdown and figure, the report, the cost table
    _links = {"table": [f"{RESULTS}/tables/{t}.md" for t in sorted(TABLES)], "figure": [figure_png(t) for t in sorted(TABLES) if TABLES[t]["figure"]],
              "report": [f"{RESULTS}/report.html"], "time": [f"{RESULTS}/tables/pipeline_time.csv"]}
    README_STEP = register(Step("readme_results", digest(CLAIMS_CODE, _links), [f"{RESULTS}/readme_results.md"],
                                {"ledger": CLAIMS_STEP.outputs[:1], **_links}, writes_key=True))

    rule readme_results:
        input: unpack(lambda w, step=README_STEP: step.rule_inputs())
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
# by the jobs that read it, when they run. With override= or seeds=, it asks for the variant's
# outputs instead: the published ones are what the variant reads.
PUBLISHED = sorted({path for step in JOBS.values() if step.home == RESULTS for path in [*step.outputs, step.key_file]
                    if not path.startswith(f"{DATA}/")})
VARIANT_OUTPUTS = sorted({path for step in JOBS.values() if step.home == VARIANT_DIR
                          for path in [*step.outputs, step.key_file]})
