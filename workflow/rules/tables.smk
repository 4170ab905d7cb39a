# One rule per registered table (CSV + Markdown) and per figure, named table_<id> / figure_<id>.
# Their key is the builder's code (its family module and what it imports) and the keys of what it
# reads.

def runs_by_family() -> dict[str, list[str]]:
    """metrics.json of every run the families registered, by family (Winograd's as `winograd`)."""
    found = {}
    for step in JOBS.values():
        kind, _, name = step.job.partition("/")
        if kind in ("train", "winograd_train"):
            found.setdefault("winograd" if kind == "winograd_train" else name.split("/")[0], []).append(step.outputs[0])
    return {family: sorted(paths) for family, paths in sorted(found.items())}


# What the profile's training cost, from every run's own clock (src/attnlab/families/pipeline.py).
add_table("pipeline_time", inputs=runs_by_family())


def builder_code(builder, files=()) -> str:
    """The code a table or figure builder runs: its family module and what that imports."""
    return module_code("attnlab.tables", "attnlab.plots", builder.__module__, files=files)


def table_step(table_id: str) -> Step:
    inputs = TABLES[table_id]["inputs"]
    return register(Step(f"table_{table_id}", digest(builder_code(TABLE_BUILDERS[table_id]), table_id, inputs),
                         [f"{RESULTS}/tables/{table_id}.csv", f"{RESULTS}/tables/{table_id}.md"], inputs, writes_key=True))


def figure_step(table_id: str) -> Step:
    spec = TABLES[table_id]
    # the chapter's values are drawn too: the ledger is an input, its text part of the key
    inputs = {"table": [f"{RESULTS}/tables/{table_id}.csv"], "claims": [CLAIMS_FILE], **spec["inputs"],
              **spec["figure_inputs"]}
    code = builder_code(FIGURE_BUILDERS[table_id], files=(CLAIMS_FILE,))
    return register(Step(f"figure_{table_id}", digest(code, table_id, inputs),
                         [f"{FIGURES}/{table_id}.png", f"{FIGURES}/{table_id}.svg"], inputs,  # the SVG for print
                         writes_key=True))


for _id, _spec in TABLES.items():

    rule:
        name: f"table_{_id}"
        input:
            unpack(lambda w, _id=_id: table_step(_id).rule_inputs())
        output:
            csv=report(f"{RESULTS}/tables/{_id}.csv", caption=f"../report/{_id}.rst", category=_spec["category"]),
            md=f"{RESULTS}/tables/{_id}.md",
            key=table_step(_id).key_file,
        params: args=named_args(_spec["inputs"]), table=_id, key=table_step(_id).key
        resources: mem_mb=2000, runtime=10
        log: f"{RESULTS}/logs/table_{_id}.log"
        conda: ENVIRONMENT
        shell:
            logged_with_key("{PYTHON} -m attnlab.tables {params.table} --csv {output.csv} --md {output.md} {params.args}")


    if _spec["figure"]:

        rule:
            name: f"figure_{_id}"
            input:
                unpack(lambda w, _id=_id: figure_step(_id).rule_inputs())
            output:
                png=report(f"{FIGURES}/{_id}.png", caption=f"../report/{_id}.rst", category="Figures"),
                svg=f"{FIGURES}/{_id}.svg",
                key=figure_step(_id).key_file,
            params: args=named_args(figure_step(_id).inputs), table=_id, key=figure_step(_id).key
            resources: mem_mb=2000, runtime=10
            log: f"{RESULTS}/logs/figure_{_id}.log"
            conda: ENVIRONMENT
            shell:
                logged_with_key("{PYTHON} -m attnlab.plots {params.table} --profile {PROFILE} --out {output.png} "
                                "{params.args}")
