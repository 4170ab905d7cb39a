# The claims ledger (configs/claims.yaml judged against every table), its plot, the captions, the reader's
# report and the README's Results section; with override= or seeds=, the variant's too (variant_<rule>). The
# captions (workflow/report/<id>.rst) are templates: rule captions fills their fields from the profile's
# tables, ledger and runs into results/<p>/captions/<id>.rst, which both reports show. The reader's report
# (results/<p>/report.html) opens on the verdict, then every table in the chapter's order with its caption,
# claims and figure. Snakemake's own report (rule graph, runtimes), whose report(caption=) names the
# rendered captions: snakemake --report results/<p>/snakemake_report.html --config profile=<p>.
# The jobs: attnlab.jobs (sink_steps); their key files are in their paths, so each call's are written out.
# --lint 'mixed rules and functions': sink_rules writes the published results' rules and the variant's.


def sink_rules(prefix: str, ledger, plot, captions, page) -> None:
    rule:
        name: f"{prefix}claims"
        input: unpack(lambda w: ledger.rule_inputs())
        output: csv=ledger.outputs[0], md=ledger.outputs[1], key=ledger.key_file
        params: tables=" ".join(ledger.inputs["tables"]), variant=J.variant_args(ledger), key=ledger.key
        resources: mem_mb=1000, runtime=5
        log: f"{ledger.home}/logs/claims.log"
        conda: ENVIRONMENT
        shell:
            logged_with_key(f"{{PYTHON}} -m attnlab.claims check --claims {CLAIMS_FILE} --profile {{PROFILE}}"
                            " --csv {output.csv} --md {output.md} {params.variant} {params.tables}")

    rule:
        name: f"{prefix}claims_plot"
        input: unpack(lambda w: plot.rule_inputs())
        output:
            png=report(plot.outputs[0], caption=rendered_caption("claims", plot.home), category="Claims ledger"),
            svg=plot.outputs[1],
            key=plot.key_file,
        params: key=plot.key
        resources: mem_mb=1000, runtime=5
        log: f"{plot.home}/logs/claims_plot.log"
        conda: ENVIRONMENT
        shell: logged_with_key("{PYTHON} -m attnlab.claims.plot --ledger {input.ledger} --out {output.png}")

    rule:
        name: f"{prefix}captions"
        input: unpack(lambda w: captions.rule_inputs())
        output: rst=captions.outputs, key=captions.key_file
        params:
            templates=" ".join(f"caption=workflow/report/{Path(p).name}" for p in captions.outputs),
            tables=named_args({"table": captions.inputs["table"]}),
            key=captions.key,
        resources: mem_mb=1000, runtime=5
        log: f"{captions.home}/logs/captions.log"
        conda: ENVIRONMENT
        shell:
            logged_with_key("{PYTHON} -m attnlab.captions --profile {PROFILE} --ledger {input.ledger} "
                            "--out $(dirname {output.rst[0]}) {params.templates} {params.tables}")

    rule:
        name: f"{prefix}report"
        input: unpack(lambda w: page.rule_inputs())
        output:
            html=report(page.outputs[0], caption=rendered_caption("claims", page.home), category="Claims ledger"),
            key=page.key_file,
        params:
            args=named_args({k: v for k, v in page.inputs.items() if k != "ledger"}),
            trained=",".join(J.trained_tables()),
            order=",".join(chapter_order()),
            key=page.key,
        resources: mem_mb=1000, runtime=5
        log: f"{page.home}/logs/report.log"
        conda: ENVIRONMENT
        shell:
            logged_with_key("{PYTHON} -m attnlab.report --profile {PROFILE} --ledger {input.ledger} --out {output.html} "
                            "--trained {params.trained} --order {params.order} {params.args}")


sink_rules("", *J.sink_steps(False))
if J.variant:
    sink_rules("variant_", *J.sink_steps(True))


# The README's Results section is the full profile's: only that profile rewrites it.
if PROFILE == "full":

    rule readme_results:
        input: unpack(lambda w: J.readme_step.rule_inputs())
        output: md=J.readme_step.outputs[0], key=J.readme_step.key_file
        params: links=named_args(J.readme_links()), key=J.readme_step.key
        resources: mem_mb=1000, runtime=5
        log: f"{RESULTS}/logs/readme_results.log"
        conda: ENVIRONMENT
        shell:
            logged_with_key("{PYTHON} -m attnlab.claims readme --ledger {input.ledger} --readme README.md "
                            "--out {output.md} {params.links}")
