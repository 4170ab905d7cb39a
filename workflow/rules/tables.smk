# Each table's rule (CSV + Markdown) and figure's, named table_<id> / figure_<id>, and in a variant, where it
# changes a table's inputs, variant_table_<id> / variant_figure_<id> under the variant's folder. Their key (the
# builder's code and the keys of what it reads) is part of an output's path, so each table's outputs are
# written out here rather than matched by a wildcard. The jobs: attnlab.jobs (table_step, figure_step).


def rendered_caption(name: str, home: str) -> str:
    """What Snakemake's --report shows under an output: the caption rendered from the profile's data
    (rule captions), relative to workflow/rules/ as report(caption=) reads it."""
    return f"../../{home}/captions/{name}.rst"


def build_rule(name: str, step, command: str, category: str, table_id: str) -> None:
    rule:
        name: name
        input: unpack(lambda w: step.rule_inputs())
        output:
            first=report(step.outputs[0], caption=rendered_caption(table_id, step.home), category=category),
            second=step.outputs[1],
            key=step.key_file,
        params:
            args=named_args({k: v for k, v in step.inputs.items() if k != "published"}),
            variant=J.variant_args(step),
            key=step.key,
        resources: mem_mb=2000, runtime=10
        log: f"{step.home}/logs/{name.removeprefix('variant_')}.log"
        conda: ENVIRONMENT
        shell: logged_with_key(f"{{PYTHON}} -m {command} {{params.variant}} {{params.args}}")


for _id, _variant in J.builds():
    _prefix = "variant_" if _variant else ""
    build_rule(f"{_prefix}table_{_id}", J.table_step(_id, _variant),
               f"attnlab.families table {_id} --csv {{output.first}} --md {{output.second}}", TABLES[_id]["category"], _id)
    if TABLES[_id]["figure"]:
        build_rule(f"{_prefix}figure_{_id}", J.figure_step(_id, _variant),
                   f"attnlab.families figure {_id} --profile {{PROFILE}} --out {{output.first}}", "Figures", _id)
