# The claims ledger (configs/claims.yaml judged against every table), its plot, the captions (rule captions
# fills the fields of the templates workflow/report/<id>.rst from the profile's tables, ledger and runs), the
# reader's report (results/<p>/report.html) and the README's Results section; with override= or seeds=, the
# variant's too, under its folder. The jobs: attnlab.jobs (sink_steps).
CAPTIONS = [Path(p).name for p in J.sink_steps(False)[2].outputs]


rule claims:
    input: unpack(writer_inputs("{home}/claims.csv"))
    output: csv="{home}/claims.csv", md="{home}/claims.md"
    wildcard_constraints: home=J.home_pattern
    params: variant=lambda w, output: J.variant_args(J.registry.writer(output.csv))
    resources: mem_mb=1000, runtime=5
    log: "{home}/logs/claims.log"
    conda: ENVIRONMENT
    shell:
        logged(f"{{PYTHON}} -m attnlab.claims check --claims {CLAIMS_FILE} --profile {{PROFILE}}"
               " --csv {output.csv} --md {output.md} {params.variant} {input.tables}")


rule claims_plot:
    input: unpack(writer_inputs(f"{FIGURES}/claims.png"))
    output:
        png=report(f"{FIGURES}/claims.png", caption=OUTPUT_CAPTION, category="Claims ledger"),
        svg=f"{FIGURES}/claims.svg",
        missed=report(f"{FIGURES}/claims_missed.png", caption=OUTPUT_CAPTION, category="Claims ledger"),
        missed_svg=f"{FIGURES}/claims_missed.svg",
    params: caption=caption_of
    resources: mem_mb=1000, runtime=5
    log: f"{RESULTS}/logs/claims_plot.log"
    conda: ENVIRONMENT
    shell: logged("{PYTHON} -m attnlab.claims.plot --ledger {input.ledger} --out {output.png}")  # and output.missed


# a variant's figures (of its tables and of its ledger) are in its folder, where its logs are
if J.variant:

    use rule figure as variant_figure with:
        input: unpack(writer_inputs(f"{J.variant_dir}/figures/{{table}}.png"))
        output:
            png=report(f"{J.variant_dir}/figures/{{table}}.png", caption=OUTPUT_CAPTION, category="Figures"),
            svg=f"{J.variant_dir}/figures/{{table}}.svg",
        log: f"{J.variant_dir}/logs/figure_{{table}}.log"

    use rule claims_plot as variant_claims_plot with:
        input: unpack(writer_inputs(f"{J.variant_dir}/figures/claims.png"))
        output:
            png=report(f"{J.variant_dir}/figures/claims.png", caption=OUTPUT_CAPTION, category="Claims ledger"),
            svg=f"{J.variant_dir}/figures/claims.svg",
            missed=report(f"{J.variant_dir}/figures/claims_missed.png", caption=OUTPUT_CAPTION,
                          category="Claims ledger"),
            missed_svg=f"{J.variant_dir}/figures/claims_missed.svg",
        log: f"{J.variant_dir}/logs/claims_plot.log"


rule captions:
    input: unpack(writer_inputs(f"{{home}}/captions/{CAPTIONS[0]}"))
    output: rst=[f"{{home}}/captions/{name}" for name in CAPTIONS]
    wildcard_constraints: home=J.home_pattern
    params:
        templates=" ".join(f"caption=workflow/report/{name}" for name in CAPTIONS),
        tables=lambda w, output: named_args({"table": J.registry.writer(output.rst[0]).inputs["table"]}),
    resources: mem_mb=1000, runtime=5
    log: "{home}/logs/captions.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.captions --profile {PROFILE} --ledger {input.ledger} "
               "--out $(dirname {output.rst[0]}) {params.templates} {params.tables}")


rule report:
    input: unpack(writer_inputs("{home}/report.html"))
    output: html=report("{home}/report.html", caption=OUTPUT_CAPTION, category="Claims ledger")
    wildcard_constraints: home=J.home_pattern
    params:
        args=lambda w, output: named_args({k: v for k, v in J.registry.writer(output.html).inputs.items() if k != "ledger"}),
        trained=",".join(J.trained_tables()),
        order=",".join(chapter_order()),
        caption=caption_of,
    resources: mem_mb=1000, runtime=5
    log: "{home}/logs/report.log"
    conda: ENVIRONMENT
    shell:
        logged("{PYTHON} -m attnlab.report --profile {PROFILE} --ledger {input.ledger} --out {output.html} "
               "--trained {params.trained} --order {params.order} {params.args}")


# The README's Results section is the full profile's: only that profile rewrites it.
if PROFILE == "full":

    rule readme_results:
        input: unpack(lambda w: J.readme_step.rule_inputs())
        output: md=J.readme_step.outputs[0]
        params: links=named_args(J.readme_links())
        resources: mem_mb=1000, runtime=5
        log: f"{RESULTS}/logs/readme_results.log"
        conda: ENVIRONMENT
        shell:
            logged("{PYTHON} -m attnlab.claims readme --ledger {input.ledger} --readme README.md "
                   "--out {output.md} {params.links}")
