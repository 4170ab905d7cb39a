# attnlab: every table and figure of the chapter, from corpus to report.
#   snakemake --cores 2                          # full profile (the chapter's settings)
#   snakemake --cores 2 --config profile=quick   # same DAG, short runs
# Every job and its key, and what each table reads: src/attnlab/jobs.py; the rules: workflow/rules/.

configfile: "configs/pipeline.yaml"
report: "workflow/report/workflow.rst"

include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/measure.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/targets.smk"

J.composed.keep()  # the configs composed while reading the workflow, for the next call
why_jobs_run(J.registry, PROFILE, J.variant_label)


# The default target asks for every job's outputs and key file, so that a deleted output (Snakemake otherwise
# leaves a missing intermediate alone while what reads it exists) or a key that changed is rebuilt, with
# everything downstream. With override= or seeds=, it asks for the variant's outputs instead: the published
# ones are what the variant reads.
rule all:
    default_target: True
    input: J.targets(J.variant_dir if J.variant else RESULTS)
