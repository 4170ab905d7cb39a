# A target no rule makes fails while the DAG is built, in one line that says what there is, instead of
# Snakemake's "No rule to produce": a misspelled table (by path or by rule name), or a file of another
# profile than --config profile= builds. These rules match only what no other rule makes.
_TABLE_IDS = "(?:" + "|".join(TABLES) + ")"
_OTHER_PROFILE = "(?!" + PROFILE + "/)(?:" + "|".join(PROFILES) + ")"


def no_such_target(what: str):
    def fail(wildcards):
        raise WorkflowError(what.format(**wildcards) + "; tables: " + ", ".join(sorted(TABLES)))
    return fail


rule unknown_table:
    input: no_such_target("no table {name!r} (results/" + PROFILE + "/tables/{name}.{ext})")
    output: RESULTS + "/tables/{name}.{ext}"
    wildcard_constraints: name="(?!" + _TABLE_IDS + "\\.)[^/.]+", ext="csv|md"  # the lookahead sees the whole path
    log: RESULTS + "/logs/unknown_table/{name}.{ext}.log"


rule unknown_rule:
    input: no_such_target("no rule {target!r}: a table's rules are table_<id> and figure_<id>")
    output: "{target}"
    wildcard_constraints: target="(?:variant_)?(?:table|figure)_(?!" + _TABLE_IDS + "$)[a-z0-9_]+"
    log: RESULTS + "/logs/unknown_rule/{target}.log"


rule other_profile:
    input: no_such_target("{top}/{profile}/{path} belongs to profile {profile}; add --config profile={profile}")
    output: "{top}/{profile}/{path}"
    wildcard_constraints: top="results|figures", profile=_OTHER_PROFILE, path=".+"
    log: RESULTS + "/logs/other_profile/{top}/{profile}/{path}.log"
