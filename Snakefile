# attnlab: every table and figure of the chapter, from corpus to report.
#   snakemake --cores 2                          # full profile (the chapter's settings)
#   snakemake --cores 2 --config profile=quick   # same DAG, short runs
# Rules live in workflow/rules/; each table family registers its tables in common.smk's TABLES.

configfile: "configs/pipeline.yaml"

report: "workflow/report/workflow.rst"

include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"

for family in sorted(FAMILY_RULES):
    include: family
add_declared_tables()

include: "workflow/rules/contradictions.smk"  # after the families: it reads their tables' inputs
add_seed_groups()  # --config seed_batch=K: groups of the seeds the tables read
include: "workflow/rules/tables.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/targets.smk"

keep_composed()  # the configs composed while reading the workflow, for the next call
why_jobs_run()


rule all:
    default_target: True
    input:
        VARIANT_OUTPUTS if VARIANT else PUBLISHED,
