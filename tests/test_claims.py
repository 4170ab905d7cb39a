"""The claims ledger: every rule kind can fail, coverage of the spec, the CLI and the README splice."""

import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from attnlab import claims as C

SPEC = C.ROOT.parent / "shared" / "spec" / "TABLES.md"

LADDER = pd.DataFrame({"row": [1, 2, 3, 4], "params": [100, 100, 116, 116],
                       "held_out_ppl": [60.0, 240.0, 238.0, 61.0]})


def claim(rule, value, chapter=1.0, conclusion=None, table="t"):
    c = {"id": "x", "table": table, "statement": "s", "chapter": chapter, "value": value, "rule": rule}
    if conclusion:
        c["conclusion"] = conclusion
    C.validate_claim(c)
    return c


def verdict(c, tables=None):
    return C.judge(c, {"t": LADDER} if tables is None else tables)["verdict"]


def ppl(row):
    return {"column": "held_out_ppl", "where": {"row": row}}


# ---------------------------------------------------------------- each rule kind passes and fails

def test_exact_matches_and_a_one_off_count_is_contradicted():
    gap = {"difference": [{"column": "params", "where": {"row": 3}}, {"column": "params", "where": {"row": 2}}]}
    assert verdict(claim({"kind": "exact"}, gap, chapter=16)) == "MATCH"
    assert verdict(claim({"kind": "exact"}, gap, chapter=17)) == "CONTRADICTED"


def test_exact_matrix_to_printed_decimals():
    matrix = pd.DataFrame({"1": [1.0, 0.5, 1 / 3], "2": [0.0, 0.5, 1 / 3], "3": [0.0, 0.0, 1 / 3]})
    printed = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.333, 0.333, 0.333]]
    value = {"columns": ["1", "2", "3"]}
    assert verdict(claim({"kind": "exact", "decimals": 3}, value, printed), {"t": matrix}) == "MATCH"
    printed[2][2] = 0.334
    assert verdict(claim({"kind": "exact", "decimals": 3}, value, printed), {"t": matrix}) == "CONTRADICTED"
    assert verdict(claim({"kind": "exact", "decimals": 3}, value, [[1.0, 0.0]]), {"t": matrix}) == "CONTRADICTED"


def test_relative_tolerance_then_conclusion_then_contradiction():
    rule = {"kind": "relative", "tolerance": 0.01}
    loose = {"kind": "relative", "tolerance": 0.1}
    assert verdict(claim(rule, ppl(1), chapter=59.71, conclusion=loose)) == "MATCH"        # 0.5 % off
    assert verdict(claim(rule, ppl(1), chapter=57.0, conclusion=loose)) == "CONCLUSION HOLDS"  # 5 % off
    assert verdict(claim(rule, ppl(1), chapter=40.0, conclusion=loose)) == "CONTRADICTED"  # 50 % off
    assert verdict(claim(rule, ppl(1), chapter=40.0)) == "CONTRADICTED"


def test_absolute_tolerance_fails_outside():
    assert verdict(claim({"kind": "absolute", "tolerance": 0.5}, ppl(4), chapter=60.6)) == "MATCH"
    assert verdict(claim({"kind": "absolute", "tolerance": 0.5}, ppl(4), chapter=60.4)) == "CONTRADICTED"


def test_contradicted_ordering():
    rows = {"values": [ppl(1), ppl(2), ppl(3)]}
    assert verdict(claim({"kind": "increasing"}, rows, chapter="rises")) == "CONTRADICTED"  # 60, 240, 238
    assert verdict(claim({"kind": "increasing"}, {"values": [ppl(1), ppl(3)]}, chapter="rises")) == "MATCH"
    assert verdict(claim({"kind": "decreasing"}, {"values": [ppl(2), ppl(3), ppl(1)]}, chapter="falls")) == "MATCH"


def test_factor_above_below_between():
    ratio = {"ratio": [ppl(2), ppl(1)]}  # 4.0
    assert verdict(claim({"kind": "above", "than": 3}, ratio, chapter="> 3")) == "MATCH"
    assert verdict(claim({"kind": "above", "than": 1, "factor": 5}, ratio, chapter="> 5")) == "CONTRADICTED"
    assert verdict(claim({"kind": "below", "than": ppl(2)}, ppl(1), chapter="<")) == "MATCH"
    assert verdict(claim({"kind": "below", "than": ppl(1)}, ppl(2), chapter="<")) == "CONTRADICTED"
    assert verdict(claim({"kind": "between", "low": 3.5, "high": 4.5}, ratio, chapter="4")) == "MATCH"
    assert verdict(claim({"kind": "between", "low": 4.5, "high": 5}, ratio, chapter="4")) == "CONTRADICTED"


def test_number_off_with_a_false_conclusion_is_contradicted():
    c = claim({"kind": "relative", "tolerance": 0.02}, {"difference": [ppl(2), ppl(1)]}, chapter=188,
              conclusion={"kind": "between", "low": 3, "high": 3.5, "value": {"ratio": [ppl(2), ppl(1)]}})
    row = C.judge(c, {"t": LADDER})
    assert row["verdict"] == "CONTRADICTED" and row["reproduced"] == "180"
    assert "conclusion reads 4" in row["note"]


# ---------------------------------------------------------------- missing pieces

def test_missing_table_row_and_column():
    rule = {"kind": "relative", "tolerance": 0.01}
    assert verdict(claim(rule, ppl(1), table="absent")) == "MISSING"
    assert verdict(claim(rule, ppl(9))) == "MISSING"
    row = C.judge(claim(rule, {"column": "nope", "where": {"row": 1}}), {"t": LADDER})
    assert row["verdict"] == "MISSING" and "held_out_ppl" in row["note"]  # names the columns there are
    assert verdict(claim(rule, {"column": "held_out_ppl", "where": {"model": "x"}})) == "MISSING"


def test_missing_conclusion_operand_is_missing():
    c = claim({"kind": "relative", "tolerance": 0.01}, ppl(1), chapter=60,
              conclusion={"kind": "below", "than": {"column": "held_out_ppl", "where": {"row": 1}, "table": "gone"}})
    assert verdict(c) == "MISSING"


# ---------------------------------------------------------------- seeds and reductions

def test_a_difference_within_the_seed_spread_is_not_a_contradiction():
    seeds = LADDER.assign(held_out_ppl_std=[2.0, 2.0, 2.0, 2.0])
    rule = {"kind": "relative", "tolerance": 0.01}
    row = C.judge(claim(rule, ppl(1), chapter=61.5), {"t": seeds})
    assert row["verdict"] == "MATCH" and "spread" in row["note"] and row["reproduced"] == "60 ± 2"
    assert verdict(claim(rule, ppl(1), chapter=61.5)) == "CONTRADICTED"  # one seed: no spread
    # an ordering inside the spread holds (row 3 vs row 2: 238 < 240 within ±2.8); outside it does not
    assert verdict(claim({"kind": "increasing"}, {"values": [ppl(3), ppl(2)]}, "rises"), {"t": seeds}) == "MATCH"
    assert verdict(claim({"kind": "increasing"}, {"values": [ppl(2), ppl(3)]}, "rises"), {"t": seeds}) == "MATCH"
    assert verdict(claim({"kind": "increasing"}, {"values": [ppl(2), ppl(1)]}, "rises"), {"t": seeds}) == "CONTRADICTED"
    assert verdict(claim({"kind": "exact"}, ppl(1), chapter=61.0), {"t": seeds}) == "CONTRADICTED"  # exact: no spread


def test_loglog_slope_and_last_skip_out_of_memory_rows():
    scaling = pd.DataFrame({"tokens": [128, 256, 512, 1024, 2048, 4096],
                            "ms": [1.0, 3.0, 12.0, 48.0, 192.0, "out of memory"]})
    slope = {"column": "ms", "reduce": "loglog_slope", "x": "tokens", "last": 3}
    assert verdict(claim({"kind": "absolute", "tolerance": 1e-9}, slope, chapter=2.0), {"t": scaling}) == "MATCH"
    last = {"column": "ms", "reduce": "last"}
    assert C.judge(claim({"kind": "exact"}, last, chapter=192), {"t": scaling})["verdict"] == "MATCH"


# ---------------------------------------------------------------- the claims file

def test_claims_file_is_valid_and_ids_are_unique():
    claims = C.load_claims()
    assert len({c["id"] for c in claims}) == len(claims) > 50
    assert all(c["id"].split(".")[0] == c["table"] for c in claims)


@pytest.mark.parametrize("bad, message", [
    ({"kind": "roughly"}, "unknown"),
    ({"kind": "relative"}, "tolerance"),
    ({"kind": "above", "than": 1, "within": 2}, "not"),
])
def test_malformed_rules_are_refused(bad, message):
    with pytest.raises(C.ClaimsError, match=message):
        claim(bad, ppl(1))


def test_a_target_rule_needs_a_numeric_chapter_value():
    with pytest.raises(C.ClaimsError, match="numeric chapter"):
        claim({"kind": "relative", "tolerance": 0.1}, ppl(1), chapter="about four")


def spec_sections() -> dict[str, str]:
    """TABLES.md section heading ids -> the section's text."""
    sections = re.split(r"^## ", SPEC.read_text(encoding="utf-8"), flags=re.M)[1:]
    out = {}
    for section in sections:
        heading, dash, _ = section.splitlines()[0].partition(" — ")
        if not dash:  # "Shared settings": not a table
            continue
        for table_id in re.findall(r"[a-z][a-z0-9_]+", heading):
            if table_id not in ("and", "claims"):
                out[table_id] = section
    return out


@pytest.mark.skipif(not SPEC.exists(), reason="../shared/spec/TABLES.md not beside the clone")
def test_every_spec_table_with_chapter_figures_has_claims():
    tables = {c["table"] for c in C.load_claims()}
    expected = {t for t, text in spec_sections().items() if "Chapter:" in text}
    assert expected - tables == set()


@pytest.mark.skipif(not SPEC.exists(), reason="../shared/spec/TABLES.md not beside the clone")
def test_every_number_of_every_chapter_line_is_in_the_ledger():
    ledger = C.CLAIMS_FILE.read_text(encoding="utf-8").replace(",", "")
    known = {float(n) for n in re.findall(r"\d+(?:\.\d+)?(?:e-?\d+)?", ledger)}
    known |= {round(100 * x, 1) for x in known}  # percentages are stored as fractions
    text = SPEC.read_text(encoding="utf-8")
    # a Chapter line runs to the end of its paragraph or bullet, or to the next Ours:/Figure:
    lines = re.findall(r"Chapter(?: \([^)]*\))?:(.*?)(?=\n\n|\n- |Ours|Figure:|\Z)", text, flags=re.S)
    assert len(lines) >= 20
    for paragraph in lines:
        for number in re.findall(r"\d[\d,]*(?:\.\d+)?(?:e-?\d+)?", paragraph):
            assert float(number.replace(",", "")) in known, f"{number} of {paragraph[:60]!r}… has no claim"


# ---------------------------------------------------------------- the CLI: ledger and README

def write_smoke_tables(folder: Path) -> list[Path]:
    corpus = pd.DataFrame({"quantity": ["characters", "tokens", "characters per token", "vocabulary",
                                        "train fraction"], "value": [100000, 37898, 2.6387, 1024, 0.9]})
    paths = [folder / "corpus.csv", folder / "average_ladder.csv"]
    corpus.to_csv(paths[0], index=False)
    LADDER.to_csv(paths[1], index=False)
    return paths


def test_check_cli_writes_a_labelled_ledger_of_every_claim(tmp_path, capsys):
    out = tmp_path / "out"
    C.main(["check", "--profile", "smoke", "--csv", str(out / "claims.csv"), "--md", str(out / "claims.md"),
            "--html", str(out / "claims.html"), *map(str, write_smoke_tables(tmp_path))])
    df = pd.read_csv(out / "claims.csv")
    ids = [c["id"] for c in yaml.safe_load(C.CLAIMS_FILE.read_text())["claims"]]
    assert df["id"].tolist() == ids and set(df["verdict"]) <= set(C.VERDICTS)
    assert (df.loc[df["table"] == "ladder", "verdict"] == "MISSING").all()
    assert df.set_index("id").loc["corpus.vocabulary", "verdict"] == "MATCH"
    assert df.set_index("id").loc["corpus.characters", "verdict"] == "CONTRADICTED"
    summary = capsys.readouterr().out.strip()
    assert "profile smoke" in summary and "not expected to match" in summary and f"{len(ids)} —" in summary
    assert summary in (out / "claims.md").read_text() and "<table>" in (out / "claims.html").read_text()


def test_readme_section_is_spliced_between_markers_and_refused_without_them(tmp_path):
    out = tmp_path / "results" / "full"
    out.mkdir(parents=True)
    C.main(["check", "--profile", "full", "--csv", str(out / "claims.csv"), "--md", str(out / "claims.md"),
            *map(str, write_smoke_tables(tmp_path))])
    readme = tmp_path / "README.md"
    readme.write_text("# attnlab\n\nintro\n")
    args = ["readme", "--ledger", str(out / "claims.csv"), "--readme", str(readme),
            f"table={out}/tables/corpus.md", f"figure={tmp_path}/figures/full/average_ladder.png"]
    with pytest.raises(SystemExit, match="results:start"):
        C.main(args)
    assert readme.read_text() == "# attnlab\n\nintro\n"  # nothing half-written
    readme.write_text(f"# attnlab\n\n## Results\n{C.README_START}\nold\n{C.README_END}\n\n## Tests\n")
    C.main(args + ["--out", str(out / "readme_results.md")])
    once = readme.read_text()
    assert "old" not in once and "## Tests" in once and "profile full" in once
    assert "(results/full/tables/corpus.md)" in once and "(figures/full/average_ladder.png)" in once
    assert "(results/full/claims.md)" in once
    C.main(args)
    assert readme.read_text() == once  # regenerating is idempotent


def snakemake(*args) -> str:
    import subprocess
    import sys
    cmd = [sys.executable, "-m", "snakemake", "--cores", "1", "--config", "profile=full", *args]
    return subprocess.run(cmd, cwd=C.ROOT, capture_output=True, text=True, check=True).stdout


def test_the_readme_and_the_ledger_wait_for_every_registered_table():
    """Dry run: the README section needs the ledger, and the ledger needs every table rule there is."""
    table_rules = {r for r in snakemake("--list-rules").split() if r.startswith("table_")}
    jobs = snakemake("-n", "-F", "--quiet", "rules", "--", "results/full/readme_results.md")
    scheduled = set(re.findall(r"^(\w+)\s+\d+$", jobs, flags=re.M))
    assert {"claims", "readme_results"} <= scheduled and table_rules and table_rules <= scheduled
