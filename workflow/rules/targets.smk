# A target no rule makes fails while the DAG is built, in one line that says what there is, instead of
# Snakemake's "No rule to produce": a misspelled table (by path or by rule name), or a file of another
# profile than --config profile= builds. These rules match only what no other rule makes.
# --lint 'mixed rules and functions': no_such_target serves these three rules only.
_TABLE_IDS = f"(?:{'|'.join(TABLES)})"
_OTHER_PROFILE = f"(?!{PROFILE}/)(?:{'|'.join(J.profiles)})"
_NO_TABLE = f"no table {{name!r}} ({RESULTS}/tables/{{name}}.{{ext}})"


def no_such_target(what: str):
    def fail(wildcards):
        refuse(f"{what.format(**wildcards)}; tables: {', '.join(sorted(TABLES))}")
    return fail


rule unknown_table:
    input: no_such_target(_NO_TABLE)
    output: f"{RESULTS}/tables/{{name}}.{{ext}}"
    wildcard_constraints: name=f"(?!{_TABLE_IDS}\\.)[^/.]+", ext="csv|md"  # the lookahead sees the whole path
    log: f"{RESULTS}/logs/unknown_table/{{name}}.{{ext}}.log"


rule unknown_rule:  # the rules of each table this workflow had before its rules took wildcards
    input: no_such_target(f"no rule {{target!r}}: a table is asked for by its path, {RESULTS}/tables/<id>.csv")
    output: "{target}"
    wildcard_constraints: target=r"(?:variant_)?(?:table|figure)_[a-z0-9_]+"
    log: f"{RESULTS}/logs/unknown_rule/{{target}}.log"


rule other_profile:
    input: no_such_target("{top}/{profile}/{path} belongs to profile {profile}; add --config profile={profile}")
    output: "{top}/{profile}/{path}"
    wildcard_constraints: top="results|figures", profile=_OTHER_PROFILE, path=".+"
    log: f"{RESULTS}/logs/other_profile/{{top}}/{{profile}}/{{path}}.log"
