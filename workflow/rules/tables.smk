# One rule per registered table (CSV + Markdown) and per figure, named table_<id> / figure_<id>.

for _id, _spec in TABLES.items():

    rule:
        name: f"table_{_id}"
        input: **_spec["inputs"]
        output:
            csv=report(f"{RESULTS}/tables/{_id}.csv", caption=f"../report/{_id}.rst", category=_spec["category"]),
            md=f"{RESULTS}/tables/{_id}.md",
        params: args=named_args(_spec["inputs"]), table=_id, code=TABLE_CODE
        resources: mem_mb=2000, runtime=10
        shell: "{PYTHON} -m attnlab.tables {params.table} --csv {output.csv} --md {output.md} {params.args}"

    ALL_TARGETS += [f"{RESULTS}/tables/{_id}.csv", f"{RESULTS}/tables/{_id}.md"]

    if _spec["figure"]:
        _fig_inputs = {"table": f"{RESULTS}/tables/{_id}.csv", **_spec["inputs"], **_spec["figure_inputs"]}

        rule:
            name: f"figure_{_id}"
            input: **_fig_inputs
            output: report(f"{FIGURES}/{_id}.png", caption=f"../report/{_id}.rst", category="Figures")
            params:
                args=named_args({k: v if isinstance(v, list) else [v] for k, v in _fig_inputs.items()}),
                table=_id,
                code=TABLE_CODE,
            resources: mem_mb=2000, runtime=10
            shell: "{PYTHON} -m attnlab.plots {params.table} --out {output} {params.args}"

        ALL_TARGETS.append(f"{FIGURES}/{_id}.png")
