"""Captions carry no number typed by hand: every workflow/report/*.rst is a template whose numbers are fields
filled from the profile's tables, ledger and runs (attnlab.captions). Each renders from the committed quick and
full results; the rule finds a number written outside a field, a seed count spelled out, a field that prints a
constant, and every number a rendered caption printed, were it pasted back in place of its field."""

import re
from pathlib import Path

import pandas as pd
import pytest
from docutils.core import publish_parts

from attnlab import captions as C
from attnlab.tables import fmt

REPO = Path(__file__).resolve().parents[1]
TEMPLATES = sorted((REPO / "workflow/report").glob("*.rst"))
SNAKEMAKE_ONLY = {"workflow", "output"}  # Snakemake's report: its global caption and the one under each output


def sources(profile: str) -> C.Sources:
    results = REPO / "results" / profile
    return C.Sources(profile, {p.stem: p for p in (results / "tables").glob("*.csv")}, results / "claims.csv", results)


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: p.stem)
def test_no_caption_writes_a_number_by_hand(template):
    assert C.literal_numbers(template.read_text(encoding="utf-8")) == []


RENDERED = [(profile, t) for profile in ("quick", "full") for t in TEMPLATES if t.stem not in SNAKEMAKE_ONLY]


@pytest.mark.parametrize("profile, template", RENDERED, ids=[f"{p}-{t.stem}" for p, t in RENDERED])
def test_every_caption_renders_from_its_profiles_data_and_printed_no_number_it_did_not_read(profile, template):
    """Rendered, the caption is reStructuredText that docutils reads without a warning (as Snakemake's --report
    does); and pasting what it printed back over its fields is caught:
    every number a field printed is a literal number of the rendered text."""
    printed = []

    def recording(value):  # what the pipeline's field prints, an empty or '–' field refused as there
        printed.append(C.field(value))
        return printed[-1]

    text = template.read_text(encoding="utf-8")
    env = C.environment()
    env.finalize = recording
    rendered = C.render(text, sources(profile), template.stem, env)
    assert "{{" not in rendered and "{%" not in rendered
    publish_parts(rendered, writer="html", settings_overrides={"halt_level": 2, "report_level": 5})  # as --report
    found = C.literal_numbers(rendered)
    numbers = [m["number"] for value in printed for m in C.TOKEN.finditer(value) if m["number"]]
    missed = [n for n in numbers if n not in found]
    assert not missed, f"printed but not caught when written by hand: {missed}"


def test_a_field_replaced_by_the_number_it_printed_fails():
    """The rule the issue asks for, on one caption: depth_overfit's two-block held-out perplexity as a field passes,
    as the literal it printed last (full profile) it fails, and so does a constant field or a count in words."""
    text = (REPO / "workflow/report/depth_overfit.rst").read_text(encoding="utf-8")
    field = "{{ two.held_out_ppl }}"
    assert field in text and C.literal_numbers(text) == []
    printed = str(sources("full").table("depth_overfit").row(blocks=2).held_out_ppl)
    assert re.fullmatch(r"\d[\d.]* ± [\d.]+", printed)
    assert C.literal_numbers(text.replace(field, printed, 1)) == printed.split(" ± ")
    assert C.literal_numbers(text.replace(field, "{{ 39.2 }}", 1)) == ["{{ 39.2 }}"]
    assert C.literal_numbers(text.replace(field, "{{ '39.2' | upper }}", 1)) == ["{{ 39.2 }}"]
    assert C.literal_numbers(text.replace("({{ two.seeds | seeds }})", "(four seeds)", 1)) == ["four seeds"]
    assert C.literal_numbers(text + "{% set x = 4 %}") == ["{% set … = (a constant) %}"]


@pytest.mark.parametrize("value", ["–", "", C.Cell(" "), float("nan"), None, C.Cell(float("nan")), C.Cell(""), C.Blank()],
                         ids=["dash", "empty-cell-text", "blank", "nan", "none", "nan-cell", "empty-cell", "empty-ledger-cell"])
def test_a_field_that_prints_nothing_fails_the_build(value, tmp_path):
    """A field whose data has no value there ("– on this pipeline's machine") stops the caption, naming its line;
    the captions command exits with an error and writes nothing."""
    template = "The rate is {{ x }} on this pipeline's machine."
    if value == "":  # a text cell that is empty, not the template's own ''
        value = C.Cell("")
    with pytest.raises(C.CaptionError, match=r"a field prints .*line 1: The rate is \{\{ x \}\}"):
        C.render(template, C.Sources("x", {}), "t", names={"x": value})
    caption = tmp_path / "t.rst"
    caption.write_text("{{ claim('ladder.block').reason }} on this pipeline's machine.\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="a field prints ''"):
        C.main(["--profile", "full", "--ledger", str(REPO / "results/full/claims.csv"), "--out", str(tmp_path / "out"),
                f"caption={caption}"])
    assert not (tmp_path / "out" / "t.rst").exists()


def test_a_field_left_out_on_purpose_is_not_empty():
    """`{{ a if b }}` and a separator's `else ''` print nothing by the template's own choice."""
    names = {"xs": [1, 2]}
    text = "{% for x in xs %}{{ x }}{{ ', ' if not loop.last }}{{ '' if loop.last else '' }}{% endfor %}."
    assert C.render(text, C.Sources("x", {}), None, names=names) == "1, 2."


@pytest.mark.parametrize("template, word", [("The ratio is {{ x }} four.", "is is"),
                                            ("{{ y }} the table shows.", "the the")])
def test_a_word_written_twice_fails_the_build(template, word):
    """A field that prints the word its template already wrote ("is is") stops the caption; code and formulas are
    not read for it."""
    with pytest.raises(C.CaptionError, match=f"a word written twice in a row: '{word}'"):
        C.render(template, C.Sources("x", {}), "t", names={"x": "is near", "y": "In the"})
    assert C.render("``a a`` and :math:`b b` {{ x }}", C.Sources("x", {}), "t", names={"x": "c"}) == "``a a`` and :math:`b b` c"


# where a template writes an outcome word outside an {% if %}, reviewed: each defines a word or names a quantity,
# none states how an experiment came out
DEFINITIONS = {"contradictions": ("never a finding that the chapter comes back", "the settings under which it comes back"),
               "easy_hard": ("how far the undivided head runs away",),
               "position_extrapolation": ("A scheme that extrapolates stays flat or improves",)}


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: p.stem)
def test_no_caption_types_an_outcome_its_data_did_not_choose(template):
    """A sentence that says how an experiment came out ("the twelve-block norm runs came back", "the fused rows keep
    memory close to linear") sits inside an {% if %} on the ledger's words or a table's cells."""
    allowed = DEFINITIONS.get(template.stem, ())
    typed = [h for h in C.typed_outcomes(template.read_text(encoding="utf-8")) if not any(a in h for a in allowed)]
    assert typed == []


def test_the_outcome_rule_finds_a_typed_outcome_and_passes_a_chosen_one():
    assert C.typed_outcomes("The twelve-block norm runs came back after measuring.") != []
    assert C.typed_outcomes("{% if c.number == 'AGREES' %}The norm runs came back.{% endif %}") == []
    assert C.typed_outcomes("Title that runs away\n==========================\nText.") == []


def with_ledger(tmp_path, profile: str, changes: dict) -> C.Sources:
    """The profile's sources with some ledger cells changed ({claim id: {column: value}})."""
    src = sources(profile)
    df = pd.read_csv(src.ledger, keep_default_na=False)
    for claim_id, cells in changes.items():
        for column, value in cells.items():
            df.loc[df["id"] == claim_id, column] = value
    path = tmp_path / "claims.csv"
    df.to_csv(path, index=False)
    return C.Sources(profile, src.tables, path, src.results)


def test_the_runaway_sentence_is_chosen_by_the_ledgers_words(tmp_path):
    """score_runaway: whether the head runs away (the point) and whether to the chapter's number (the number) are
    the ledger's two words, each read; the published ledger reads DIFFERS; point HOLDS."""
    published = caption("score_runaway", sources("full"))
    assert "it runs away, as the chapter says (the point), but not to the chapter's 5,147" in published
    flipped = caption("score_runaway", with_ledger(tmp_path, "full", {
        "score_runaway.final_std": {"number": "AGREES", "point": "FAILS"}}))
    assert "it does not run away as the chapter says (the point), and to the chapter's 5,147" in flipped


def test_what_comes_back_easily_is_counted_from_the_ledger(tmp_path):
    """easy_hard's 'Easy': the analytic numbers that AGREE, counted, and each that does not, named."""
    published = caption("easy_hard", sources("full"))
    assert re.search(r"Of the 36 numbers the chapter computes rather than trains .*?, 33 AGREE; ``corpus.tokens`` "
                     r"reads DIFFERS", published)
    fixed = caption("easy_hard", with_ledger(tmp_path, "full", {c: {"number": "AGREES"} for c in (
        "corpus.tokens", "average_equivalence.three_ways", "attention_equivalence.output_magnitude")}))
    assert ", 36 AGREE." in fixed and "reads DIFFERS" not in fixed


def test_the_sweeps_closing_sentence_says_only_its_band():
    text = caption("sqrt_dk_sweep", sources("full"))
    band = sources("full").table("sqrt_dk_sweep").row(claim="all").band
    assert f"where they were measured with a spread (``band``: {band})" in text
    assert "do not point to one unstated rate" not in text


def test_words_with_digits_and_formulas_are_not_numbers():
    assert C.literal_numbers("``seed0`` and ``ppl_64``, GPT-2, W_o, :math:`12d^2 + 13d`, one seed per process") == []
    assert C.literal_numbers("batch 32, 1e-3, 38.07 and 1,115,394.") == ["32", "1e-3", "38.07", "1,115,394"]


def test_a_field_the_data_cannot_fill_says_which_and_why():
    src = sources("full")
    with pytest.raises(C.CaptionError, match=r"caption ladder: table ladder: 0 rows with row=99 \(one is needed\)"):
        C.render("{{ t.row(row=99).held_out_ppl }}", src, "ladder")
    with pytest.raises(C.CaptionError, match="table ladder has no column 'perplexity'; it has row, model"):
        C.render("{{ t.row(row=1).perplexity }}", src, "ladder")
    with pytest.raises(C.CaptionError, match="no claim 'ladder.nothing' in the ledger"):
        C.render("{{ claim('ladder.nothing').chapter }}", src, "ladder")
    with pytest.raises(C.CaptionError, match="'undefined_name' is undefined"):
        C.render("{{ undefined_name }}", src, "ladder")


def test_a_cell_prints_as_its_table_and_counts_its_own_seeds():
    table = C.Table("t", pd.DataFrame({"row": [1, 2], "ppl": [60.2265, 38.0123], "ppl_std": [0.486, 0.3199],
                                       "ppl_seeds": ["60.1;60.3", "37.8;38.0;38.2"], "seeds": [2, 3]}))
    row = table.row(row=2)
    assert str(row.ppl) == "38.01 ± 0.32" and row.ppl.n == 3 and row.seeds == 3 and table.row(row=1).seeds == 2
    assert C.render("{{ (a.ppl / b.ppl) | dp(2) }} {{ a.seeds | seeds }}",
                    C.Sources("x", {}), None, names={"a": table.row(row=1), "b": row}) == "1.58 2 seeds"


def with_table(tmp_path, profile: str, table_id: str, change) -> C.Sources:
    """The profile's sources with one table changed (change(df) -> df), written beside the others."""
    src = sources(profile)
    path = tmp_path / f"{table_id}.csv"
    change(pd.read_csv(src.tables[table_id])).to_csv(path, index=False)
    return C.Sources(profile, {**src.tables, table_id: path}, src.ledger, src.results)


def easy_hard(src: C.Sources) -> str:
    return " ".join(C.render((REPO / "workflow/report/easy_hard.rst").read_text(encoding="utf-8"), src, "easy_hard").split())


def test_whether_folding_seeds_pays_is_read_from_the_runs_per_hour_rows(tmp_path):
    """Each device and precision its own sentence, read from its rows (folded against one seed per process at the
    same precision and setting): on this CPU float32 does not pay and bf16 does for one setting only; no GPU row
    measured: nothing is said of a GPU but that; a measured GPU row decides it, either way."""
    def on_gpu(folded):
        def change(df):
            waiting = df["device"] == "not measured on a GPU yet"
            df.loc[waiting, "device"] = "NVIDIA H100"
            df.loc[waiting, "vs_separate"] = [folded if k > 1 else 1.0 for k in df.loc[waiting, "seed_batch"]]
            return df
        return change

    published = easy_hard(sources("full"))
    assert "in float32 it does not pay (``ladder/block``, 0.9567× against 1.012×;" in published
    assert "in bf16 it pays for ``norm/pre_warmup``, 1.149× against 1.091×, not for ``ladder/block``" in published
    assert "On a GPU it is not measured yet." in published and "pays on a GPU" not in published
    assert "On NVIDIA H100 in float32 it pays (``ladder/block``, 3× against 1×" in easy_hard(
        with_table(tmp_path, "full", "runs_per_hour", on_gpu(3.0)))
    assert "On NVIDIA H100 in float32 it does not pay (``ladder/block``, 0.5× against 1×" in easy_hard(
        with_table(tmp_path, "full", "runs_per_hour", on_gpu(0.5)))

    def cpu_pays(df):
        df.loc[df["seed_batch"] > 1, "vs_separate"] = 2.0
        return df
    assert "in float32 it pays (``ladder/block``, 2× against 1.012×" in easy_hard(
        with_table(tmp_path, "full", "runs_per_hour", cpu_pays))


@pytest.mark.parametrize("finding, words", [
    ("only through runs that failed to train", "Winograd model wins it changes only through runs that failed to train"),
    ("moves toward the chapter", "Winograd model wins it moves toward the chapter's order"),
    ("ruled out", "Winograd model wins it does not change (*ruled out*)"),
])
def test_what_the_learning_rate_changes_is_read_from_the_contradictions_table(tmp_path, finding, words):
    def change(df):
        df.loc[(df["claim"] == "winograd_category.bag_of_words_wins") & (df["hypothesis_id"] == "category_lr3e3"),
               "finding"] = finding
        return df
    assert words in easy_hard(with_table(tmp_path, "full", "contradictions", change))


def caption(name: str, src: C.Sources) -> str:
    return " ".join(C.render((REPO / f"workflow/report/{name}.rst").read_text(encoding="utf-8"), src, name).split())


def test_which_gradients_are_flat_with_depth_is_read_from_the_ratios(tmp_path):
    def steep_all(df):
        df.loc[df["parameters"] == "all", "ratio_last_first"] = 3.0
        return df
    assert "``all`` is flatter with depth than the attention maps" in caption("norm_grad_init", sources("full"))
    flipped = caption("norm_grad_init", with_table(tmp_path, "full", "norm_grad_init", steep_all))
    assert "``all`` is not flatter with depth" in flipped and "MLP" not in flipped


@pytest.mark.parametrize("profile", ["quick", "full"])
def test_every_number_a_caption_prints_for_a_column_is_that_columns_cell(profile):
    """One quantity, one value: a caption prints a column's value only through its cell (captions.Row), and a cell
    prints as the table prints it (tables.fmt of the CSV's value and its spread): never another summary of the same
    column (a mean over a timing's repeats beside the table's fit on the medians) under the column's name."""
    src = sources(profile)
    printed = []

    def recording(value):
        printed.append((value, C.field(value)))
        return printed[-1][1]

    env = C.environment()
    env.finalize = recording
    for template in TEMPLATES:
        if template.stem not in SNAKEMAKE_ONLY:
            C.render(template.read_text(encoding="utf-8"), src, template.stem, env)
    cells = [(value, text) for value, text in printed if isinstance(value, C.Cell)]
    assert len(cells) > 100
    frames = {}
    for cell, text in cells:
        assert cell.origin, f"a cell printed ({text}) that was not read from a table's column"
        table, column, row = cell.origin
        if table not in frames:  # a table, or a run's evaluations over training (evals())
            frames[table] = (C.table_of(src.tables[table])._df if table in src.tables
                             else pd.read_csv(src.results / "runs" / f"{table}.csv"))
        df = frames[table]
        raw = df.loc[row, column]
        sd = df.loc[row, f"{column}_std"] if f"{column}_std" in df else None
        expected = fmt(raw, sd) if sd is not None and not pd.isna(sd) else fmt(raw)
        assert text == expected, f"{table}.{column} row {row}: the caption prints {text}, the table {expected}"


def test_a_whole_mean_keeps_its_spread_as_in_its_table():
    """A mean that is a whole number (55 % of held-out sentences) prints with its spread, as its table does."""
    table = C.Table("t", pd.DataFrame({"k": [1], "acc": [55.0], "acc_std": [15.0]}))
    assert str(table.row(k=1).acc) == fmt(55.0, 15.0) == "55 ± 15"


def test_the_time_exponent_has_one_value_under_each_name():
    """attention_scaling: the table's time_exponent is fitted to the median times (the figure's line); the ledger
    judges the mean of each repeat's own fit, and its value says so and names the table's cell beside it. The
    caption prints the cell under the column's name and the ledger's value as the ledger's."""
    from attnlab.claims.evaluate import table_cell_note
    from attnlab.claims.read import load_tables
    from attnlab.claims.rules import load_claims

    src = sources("full")
    claims = {c["id"]: c for c in load_claims(REPO / "configs/claims.yaml")}
    tables = load_tables(sorted(src.tables.values()))
    last = src.table("attention_scaling").row(path="explicit", tokens=8192)
    note = table_cell_note(claims["attention_scaling.time_exponent"], tables)
    assert note == f" (over the repeats; the table's time_exponent, from their medians: {last.time_exponent})"
    # a trained claim reads cells that are the mean of their seeds: nothing to add
    assert [c for c in claims if table_cell_note(claims[c], tables)] == ["attention_scaling.time_exponent"]
    text = caption("attention_scaling", src)
    assert f"a = {last.time_exponent} fitted to the median times" in text
    assert f"by {last.time_ratio} (``time_ratio``)" in text and "over_seeds" not in C.__doc__


def finding_counts(text: str) -> tuple[int, list[int]]:
    """contradictions caption: (its hypothesis rows, the count before each finding's words)."""
    found = re.search(r"Against the chapter: (\d+) hypothesis rows on \d+ claims; (.*?); \d+ rows are written down", text)
    return int(found[1]), [int(n) for n in re.findall(r"(?:^|, )(\d+) ", found[2])]


@pytest.mark.parametrize("finding", [None, "fits at no rate tried", "a finding the caption has no words for"])
def test_the_contradictions_counts_sum_to_the_hypothesis_rows(tmp_path, finding):
    def change(df):
        if finding:
            df.loc[df.index[df["role"] == "hypothesis"][0], "finding"] = finding
        return df
    text = caption("contradictions", with_table(tmp_path, "full", "contradictions", change))
    rows, counts = finding_counts(text)
    assert sum(counts) == rows and len(counts) >= 5


@pytest.mark.parametrize("config", [{}, {"profile": "quick", "seeds": 3}])
def test_snakemakes_own_caption_renders_without_a_docutils_warning(config):
    """workflow.rst, as Snakemake's --report renders it (its own Jinja, snakemake.config as given): a plain call
    gives no profile or seeds, and an empty ``literal`` was a docutils warning."""
    import jinja2

    snakemake = type("Snakemake", (), {"config": config})
    text = jinja2.Environment(trim_blocks=True, lstrip_blocks=True).from_string(
        (REPO / "workflow/report/workflow.rst").read_text(encoding="utf-8")).render(snakemake=snakemake)
    assert "````" not in text
    publish_parts(text, writer="html", settings_overrides={"halt_level": 2, "report_level": 5})


def chapter_tables() -> dict:
    import yaml
    return yaml.safe_load((REPO / "configs/claims.yaml").read_text(encoding="utf-8"))["chapter_tables"]


def test_the_chapters_tables_are_declared_once_against_what_it_prints():
    """configs/claims.yaml's chapter_tables says, once, how the chapter gives each of its tables: printed (with the
    rows it prints: ours has at least those), lost (the prose reads a table whose text is gone) or prose. Every table
    a claim reads is declared and every declared table is ours and quoted by a claim; attention_scaling, which the
    chapter prints whole (eight rows), is not lost, and the five the referee found missing are."""
    from attnlab.claims.rules import load_claims
    from attnlab.families import load_families
    from attnlab.tables import BUILDERS

    load_families()
    declared = chapter_tables()
    assert set(declared) <= set(BUILDERS)
    assert {c["table"] for c in load_claims(REPO / "configs/claims.yaml")} == set(declared)
    for table_id, how in declared.items():
        assert how["printed"] in ("printed", "lost", "prose"), table_id
        if how["printed"] == "printed":
            assert set(how) == {"printed", "rows"}
            for profile in ("quick", "full"):
                assert len(sources(profile).table(table_id)) >= how["rows"], (profile, table_id)
        elif how["printed"] == "lost":
            assert set(how) == {"printed", "reads"} and how["reads"].strip()
        else:
            assert set(how) == {"printed"}
    assert declared["attention_scaling"] == {"printed": "printed", "rows": 8}
    lost = {t for t, how in declared.items() if how["printed"] == "lost"}
    assert {"ladder", "average_ladder", "effective_tokens", "softmax_saturation", "scale_training", "score_runaway",
            "winograd_adjectives"} <= lost


def test_the_lost_tables_the_report_lists_are_the_declared_ones():
    """choices.rst lists the lost tables from the declaration, in its order, and the printed ones apart."""
    declared = chapter_tables()
    text = caption("choices", sources("full"))
    bullet = re.search(r"\*\*The chapter's lost tables\.\*\*(.*?) A cell the prose", text)[1]
    listed = [t for t in re.findall(r"``([a-z0-9_]+)``", bullet) if t != "chapter_tables"]
    assert listed == [t for t, how in declared.items() if how["printed"] == "lost"]
    printed = re.search(r"The chapter prints (.*?) itself\.", text)[1]
    assert re.findall(r"``([a-z0-9_]+)``", printed) == [t for t, how in declared.items() if how["printed"] == "printed"]


def test_alibis_gain_and_what_the_ratio_shows_are_read_from_the_rows(tmp_path):
    def worse_at_256(df):
        alibi = df["scheme"] == "ALiBi (distance penalty)"
        df.loc[alibi, "ppl_256"] = df.loc[alibi, "ppl_64"] + 1
        return df

    def ratio_consistent(df):
        df.loc[df["hypothesis_id"] == "alibi_eight_heads", "number_before"] = "AGREES"
        return df
    published = caption("position_extrapolation", sources("full"))
    assert "ALiBi improves as the window grows" in published and ": the same direction, a smaller gain." in published
    flipped = caption("position_extrapolation", with_table(tmp_path, "full", "position_extrapolation", worse_at_256))
    assert "ALiBi does not improve as the window grows" in flipped and ": no gain." in flipped
    assert "the gap is systematic" in published
    assert "systematic" not in caption("position_extrapolation", with_table(tmp_path, "full", "contradictions",
                                                                          ratio_consistent))
