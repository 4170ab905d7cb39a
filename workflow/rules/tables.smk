# One rule per registered table (CSV + Markdown) and per figure, named table_<id> / figure_<id>.
# Their key is the builder's code (its family module and what it imports) and the keys of what it
# reads. In a variant, a table whose inputs the variant changes gets a second pair, variant_table_<id>
# / variant_figure_<id>, written under the variant's folder: the published rows beside the variant's.

def runs_by_family(variant: bool) -> dict[str, list[str]]:
    """metrics.json of every run the tables read, by family (Winograd's as `winograd`)."""
    found = {}
    for spec in TABLES.values():
        for path in (spec["variant_inputs"] if variant and spec["variant_inputs"] else spec["inputs"]).values():
            for p in path:
                step = STEPS.get(p)
                kind, _, name = step.job.partition("/") if step else ("", "", "")  # --lint 'absolute path': a job name's separator
                if kind in ("train", "winograd_train") and p == step.outputs[0]:
                    found.setdefault("winograd" if kind == "winograd_train" else name.split("/")[0], set()).add(p)
    return {family: sorted(paths) for family, paths in sorted(found.items())}


# What the profile's training cost, from every run's own clock (src/attnlab/families/pipeline.py).
add_table("pipeline_time", inputs=runs_by_family)


from attnlab.families.cross_device import PAIRS as CROSS_DEVICE_PAIRS, TWINS, folder_of as twin_folder


def cross_device_inputs(variant: bool) -> dict[str, list[str]]:
    """The published seeds of each row a cross-device pair is in, and the pairs' CPU twins trained so far
    (results/<profile>/twins/<folder>/, which no other table reads; src/attnlab/families/cross_device.py)."""
    rows = {pair.rsplit("/", 1)[0] for pair in CROSS_DEVICE_PAIRS}
    published = [p for paths in runs_by_family(False).values() for p in paths if twin_folder(p).rsplit("/", 1)[0] in rows]
    twins = [f"{RESULTS}/{TWINS}/{pair}/metrics.json" for pair in CROSS_DEVICE_PAIRS]
    return {"runs": published, "twins": [p for p in twins if Path(p).is_file()]}


# GPU seeds of the published rows against their CPU twins: the same run on both devices.
add_table("cross_device", inputs=cross_device_inputs)


def rendered_caption(table_id: str, home: str) -> str:
    """What Snakemake's --report shows under an output: the caption rendered from the profile's data
    (rule captions), relative to workflow/rules/ as report(caption=) reads it."""
    return f"../../{home}/captions/{table_id}.rst"


def builder_code(builder, files=()) -> str:
    """The code a table or figure builder runs: its family module and what that imports."""
    return module_code("attnlab.tables", "attnlab.plots", builder.__module__, files=files)


def table_csv(table_id: str, variant: bool = False) -> str:
    """The table a reader of this run reads: the variant's where the variant changes it."""
    return table_step(table_id, variant and bool(TABLES[table_id]["variant_inputs"])).outputs[0]


@functools.cache
def table_step(table_id: str, variant: bool = False) -> Step:
    code = builder_code(TABLE_BUILDERS[table_id], files=TABLES[table_id]["code_files"])
    if not variant:
        inputs = TABLES[table_id]["inputs"]
        return register(Step(f"table_{table_id}", digest(code, table_id, inputs),
                             [f"{RESULTS}/tables/{table_id}.csv", f"{RESULTS}/tables/{table_id}.md"], inputs,
                             writes_key=True))
    inputs = {**TABLES[table_id]["variant_inputs"], "published": [table_csv(table_id)]}
    return register(Step(f"table_{table_id}", digest(code, table_id, inputs, VARIANT_LABEL),
                         [f"{VARIANT_DIR}/tables/{table_id}.csv", f"{VARIANT_DIR}/tables/{table_id}.md"], inputs,
                         writes_key=True, home=VARIANT_DIR))


@functools.cache
def figure_step(table_id: str, variant: bool = False) -> Step:
    spec = TABLES[table_id]
    # the chapter's values are drawn too: the ledger is an input, its text part of the key
    inputs = {"table": [table_csv(table_id, variant)], "claims": [CLAIMS_FILE],
              **(spec["variant_inputs"] if variant else spec["inputs"]), **spec["figure_inputs"]}
    code = builder_code(FIGURE_BUILDERS[table_id], files=(CLAIMS_FILE,))
    if not variant:
        return register(Step(f"figure_{table_id}", digest(code, table_id, inputs),
                             [f"{FIGURES}/{table_id}.png", f"{FIGURES}/{table_id}.svg"], inputs,  # the SVG for print
                             writes_key=True))
    inputs["published"] = figure_step(table_id).outputs[:1]  # drawn beside the variant's
    return register(Step(f"figure_{table_id}", digest(code, table_id, inputs, VARIANT_LABEL),
                         [f"{VARIANT_DIR}/figures/{table_id}.png", f"{VARIANT_DIR}/figures/{table_id}.svg"], inputs,
                         writes_key=True, home=VARIANT_DIR))


def figure_png(table_id: str, variant: bool = False) -> str:
    return figure_step(table_id, variant and bool(TABLES[table_id]["variant_inputs"])).outputs[0]


def variant_args(step: Step) -> str:
    """A variant's table or figure also reads the published one, and names the variant."""
    return f"--published {step.inputs['published'][0]} --label {shlex.quote(VARIANT_LABEL)}" if "published" in step.inputs else ""


for _id, _spec in TABLES.items():
    for _variant in (False, True) if _spec["variant_inputs"] else (False,):
        _prefix = "variant_" if _variant else ""

        rule:
            name: f"{_prefix}table_{_id}"
            input:
                unpack(lambda w, _id=_id, _variant=_variant: table_step(_id, _variant).rule_inputs())
            output:
                csv=report(table_step(_id, _variant).outputs[0], caption=rendered_caption(_id, table_step(_id, _variant).home),
                           category=_spec["category"]),
                md=table_step(_id, _variant).outputs[1],
                key=table_step(_id, _variant).key_file,
            params:
                args=named_args({k: v for k, v in table_step(_id, _variant).inputs.items() if k != "published"}),
                variant=variant_args(table_step(_id, _variant)),
                table=_id,
                key=table_step(_id, _variant).key,
            resources: mem_mb=2000, runtime=10
            log: f"{table_step(_id, _variant).home}/logs/table_{_id}.log"
            conda: ENVIRONMENT
            shell:
                logged_with_key("{PYTHON} -m attnlab.tables {params.table} --csv {output.csv} --md {output.md} "
                                "{params.variant} {params.args}")


        if _spec["figure"]:

            rule:
                name: f"{_prefix}figure_{_id}"
                input:
                    unpack(lambda w, _id=_id, _variant=_variant: figure_step(_id, _variant).rule_inputs())
                output:
                    png=report(figure_step(_id, _variant).outputs[0], caption=rendered_caption(_id, figure_step(_id, _variant).home),
                               category="Figures"),
                    svg=figure_step(_id, _variant).outputs[1],
                    key=figure_step(_id, _variant).key_file,
                params:
                    args=named_args({k: v for k, v in figure_step(_id, _variant).inputs.items() if k != "published"}),
                    variant=variant_args(figure_step(_id, _variant)),
                    table=_id,
                    key=figure_step(_id, _variant).key,
                resources: mem_mb=2000, runtime=10
                log: f"{figure_step(_id, _variant).home}/logs/figure_{_id}.log"
                conda: ENVIRONMENT
                shell:
                    logged_with_key("{PYTHON} -m attnlab.plots {params.table} --profile {PROFILE} --out {output.png} "
                                    "{params.variant} {params.args}")

