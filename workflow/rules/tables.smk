# Each table's job (CSV + Markdown) and figure's (PNG + SVG): the published ones and, where a variant (override=,
# seeds=) changes a table's inputs, the variant's under its folder. What each reads, its key: attnlab.jobs.
TABLE_IDS = "|".join(TABLES)
FIGURE_IDS = "|".join(t for t, spec in TABLES.items() if spec["figure"])


rule table:
    input: unpack(writer_inputs("{home}/tables/{table}.csv"))
    output:
        csv=report("{home}/tables/{table}.csv", caption=OUTPUT_CAPTION, category="Tables"),
        md="{home}/tables/{table}.md",
        provenance="{home}/tables/{table}.provenance.md",
    wildcard_constraints: home=J.home_pattern, table=TABLE_IDS
    params: args=lambda w, output: J.builder_args(output.csv), caption=caption_of
    resources: mem_mb=2000, runtime=10
    log: "{home}/logs/table_{table}.log"
    conda: ENVIRONMENT
    shell: logged("{PYTHON} -m attnlab.families table {wildcards.table} --csv {output.csv} --md {output.md} {params.args}")


rule figure:
    input: unpack(writer_inputs(f"{FIGURES}/{{table}}.png"))
    output:
        png=report(f"{FIGURES}/{{table}}.png", caption=OUTPUT_CAPTION, category="Figures"),
        svg=f"{FIGURES}/{{table}}.svg",  # for print
    wildcard_constraints: table=FIGURE_IDS
    params: args=lambda w, output: J.builder_args(output.png), caption=caption_of
    resources: mem_mb=2000, runtime=10
    log: f"{RESULTS}/logs/figure_{{table}}.log"
    conda: ENVIRONMENT
    shell: logged("{PYTHON} -m attnlab.families figure {wildcards.table} --profile {PROFILE} --out {output.png} {params.args}")

