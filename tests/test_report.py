"""The reader's report, without a browser: its first screen answers "did it reproduce?" (the ledger's summary
sentence and what does not come back, right under the title), then a front in the shape of a reproduction report
(summary with analytic and trained claims counted apart, contents above the ledger, what does not come back, the
claims plot linked to its SVG), headings in words, and last the words the ledger uses, each defined; the two verdict
columns in their colours and marks, no word of the old combined verdict; each section's provenance (commits with
their dates, devices, seeds) with nothing left unsaid; captions rendered with their titles, lists and formulas;
numbers kept whole. The browser's view: test_report_browser.py."""

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from attnlab import report, style
from attnlab.claims.render import summary_line
from attnlab.claims.rules import NUMBER_WORDS, POINT_WORDS
from attnlab.config import ROOT
from attnlab.families import load_families
from attnlab.tables import BUILDERS as TABLE_BUILDERS, DECLARED, chapter_order, for_people, provenance, seed_ids

LEDGER = pd.DataFrame([
    {"id": "ladder.block", "table": "ladder", "statement": "s", "chapter": "38.07", "reproduced": "38.09 ± 0.3529",
     "interval": "[37.76, 38.42]", "rule": "within 1 %", "number": "AGREES", "point": "–",
     "why": "38.07 ± 0.38 is a typical run of ours", "margin": "0.05 tol", "note": "", "seeds": 7, "chance": 0.05,
     "profile": "full"},
    {"id": "ladder.gain", "table": "ladder", "statement": "s", "chapter": "1.8", "reproduced": "1.88 ± 0.379",
     "interval": "[0.939, 2.822]", "rule": "within ±0.5; conclusion: above 1", "number": "OPEN", "point": "HOLDS",
     "why": "not ruled out, 12 seeds per row would decide it", "margin": "0.16 tol ± 1.9", "note": "point HOLDS: x",
     "seeds": 3, "chance": 0.05, "profile": "full"},
    {"id": "ladder.residual", "name": "Perplexity gain of the residual", "table": "ladder", "statement": "s",
     "chapter": "5.2", "reproduced": "2.1 ± 0.2",
     "interval": "[1.9, 2.3]", "rule": "within 5 %; conclusion: above 4", "number": "DIFFERS", "point": "FAILS",
     "why": "5.2 ± 0.26 lies outside one run of ours", "margin": "Δ 12 tol", "note": "point FAILS: y", "seeds": 7,
     "chance": 0.05, "profile": "full"},
])
# the words of the combined verdict the two columns replaced: none may come back
OLD_WORDS = re.compile(r"\b(MATCH|CONSISTENT|UNRESOLVED|CONCLUSION HOLDS|INCONCLUSIVE|NOT JUDGED|SAME AS PUBLISHED|MOVED|"
                       r"NOT MEASURABLE|CONTRADICTED|MISSING)\b")
TABLE = pd.DataFrame({"row": [1, 2], "held_out_ppl": [60.1, 38.09], "steps": [3000, 3000],
                      "commit": ["a5b45a3a77 ×3", "5387a7a1fc ×4, a5b45a3a77 ×3"],
                      "device": ["NVIDIA H200 ×3", "AMD EPYC ×4, NVIDIA H200 ×3"], "seed_ids": ["0–2", "0–6"],
                      "run_dates": ["2026-11-30 – 2026-11-30", "2026-11-30 – 2026-12-03"], "dates_recovered": [3, 0]})


def test_runs_record_every_commit_device_and_date_with_their_counts():
    runs = [{"seed": s, "device": d, "device_name": name, "commit": c, "dirty": False, "sources": [{}] * n,
             "started_at": f"2026-12-0{s + 1}T10:00:00+00:00", "finished_at": f"2026-12-0{s + 2}T01:00:00+00:00"}
            for s, d, name, c, n in ((0, "cuda", "NVIDIA H200", "0123456789abcdef", 2), (1, "cpu", None, "fedcba9876543210", 1),
                                     (2, "cuda", "NVIDIA H200", "0123456789abcdef", 1), (4, "cuda", "NVIDIA H200", "0123456789abcdef", 1))]
    runs[1]["recovered"] = {"finished_at": "not after: the date of abc, which added it"}
    assert provenance(runs) == {"commit": "0123456789 ×2, 0123456789+resumed ×1, fedcba9876 ×1",
                                "device": "NVIDIA H200 ×3, cpu ×1", "run_dates": "2026-12-01 – 2026-12-06",
                                "dates_recovered": 1, "seed_ids": "0–2,4", "torch": ""}
    assert provenance([{"commit": None}]) == {"commit": "", "device": "", "run_dates": "", "dates_recovered": 0,
                                              "seed_ids": "", "torch": ""}  # a record without them
    torches = [{"commit": "a" * 40, "torch": t} for t in ("2.13.0+cpu", "2.11.0+cu130", "2.13.0+cpu")]
    assert provenance(torches)["torch"] == "2.13.0+cpu ×2, 2.11.0+cu130 ×1"  # a GPU image's torch beside the pin
    assert seed_ids([1, 0]) == "0,1" and seed_ids(range(10)) == "0–9"
    _, shared = for_people(pd.DataFrame({"x": [1.0, 2.0], "seed_ids": ["0–2", "0–2"], "device": ["cuda ×3", "cuda ×3"]}))
    assert shared == ["seed_ids: 0–2", "device: cuda ×3"]  # said once under the table
    shown, _ = for_people(pd.DataFrame({"x": [1.0, 2.0], "commit": ["a ×3", "a ×2, b ×1"]}))
    assert list(shown["commit"]) == ["a ×3", "a ×2, b ×1"]  # rows that differ name their own commits


def test_a_dirty_run_is_published_only_when_it_says_what_differed():
    clean = {"commit": "c" * 40, "dirty": False, "sources": [{"commit": "c" * 40, "dirty": False}], "device": "cpu"}
    dirty = {**clean, "dirty": True, "sources": [{"commit": "c" * 40, "dirty": True}]}
    with pytest.raises(ValueError, match="dirty tree"):
        provenance([clean, dirty])
    recorded = {**dirty, "sources": [{"commit": "c" * 40, "dirty": True, "changed": ["src/attnlab/model.py"],
                                      "diff_sha256": "ab" * 32}]}
    checked = {**dirty, "key_at_commit": "equal"}
    unchecked = {**dirty, "key_at_commit": "undecidable"}  # recovered: says what it is, and the row says so too
    assert provenance([recorded, checked, unchecked])["commit"] == "cccccccccc+dirty ×2, cccccccccc+dirty+unverified ×1"
    with pytest.raises(ValueError):  # one process of a resumed run from a dirty tree that says nothing
        provenance([{**recorded, "sources": recorded["sources"] + [{"commit": "d" * 40, "dirty": True}]}])


def test_every_published_run_says_when_it_ran_where_and_what_a_dirty_tree_changed():
    """The records under results/: each is publishable and names its device and dates, recorded or recovered."""
    paths = sorted(ROOT.glob("results/*/runs/**/metrics.json")) + sorted(ROOT.glob("results/*/measure/winograd/**/metrics.json"))
    assert paths
    for path in paths:
        run = json.loads(path.read_text())
        provenance([run])  # refuses a dirty run that says nothing of what differed
        assert run.get("device_name") and run.get("started_at") <= run.get("finished_at"), path
        assert all(k in ("started_at", "finished_at", "device_name", "key_at_commit") for k in run.get("recovered", {})), path
        if run["device"] == "cuda":
            assert "not recorded" not in run["device_name"], path  # every GPU run names its GPU
        assert "+unverified" not in provenance([run])["commit"], path  # a dirty run is shown equal to a committed one


class FakeGit(report.Git):
    """A repository history of two dated commits; table.csv last changed in abc1234."""

    def dates(self, commits):
        return {c: d for c, d in {"a5b45a3a77": "2026-11-30", "5387a7a1fc": "2026-12-02"}.items()
                if c in [x.split("+")[0] for x in commits]}

    def last_change(self, path):
        return ("abc1234", "2026-11-20") if path and path.name == "table.csv" else None


def test_a_section_names_where_its_numbers_were_made_and_when():
    assert report.provenance(TABLE, None, FakeGit()) == (
        '<p class="meta">Provenance: commits a5b45a3a77 ×6 (2026-11-30), 5387a7a1fc ×4 (2026-12-02) · runs dated '
        "2026-11-30 to 2026-12-03 (3 of these runs&#x27; dates recovered from git: not before their commit, not after "
        "their record landed) · devices NVIDIA H200 ×6, AMD EPYC ×4 · seeds 0–2, 0–6</p>")
    # a measurement that records no commit: the commit that last changed its table, the default device, its seed
    said = report.provenance(pd.DataFrame({"d": [4], "seed": [0]}), Path("table.csv"), FakeGit())
    assert "numbers last changed in commit abc1234 (2026-11-20) · device cpu (torch&#x27;s default" in said and "seed 0" in said
    assert "runs dated" not in said
    said = report.provenance(pd.DataFrame({"d": [4]}), Path("new.csv"), FakeGit())
    assert "numbers not yet committed" in said and "no seeds of its own: a computation or a summary" in said
    rows = pd.DataFrame({"commit": ["a5b45a3a77+dirty ×3"], "seeds": [3], "seed_ids": ["0–2"]})
    assert "commit a5b45a3a77+dirty ×3 (2026-11-30)" in report.provenance(rows, None, FakeGit())
    assert "not recorded" not in said


def test_runs_are_counted_once_however_many_rows_read_them():
    """winograd_adjectives: eight rows of the same 208 seeds are 208 runs, not 1,664; rows that are different runs
    (their config hashes differ) each count, however alike their provenance; a measurement's rows each count."""
    published = pd.read_csv(ROOT / "results/full/tables/winograd_adjectives.csv", dtype=str)
    said = report.provenance(published, None, FakeGit())
    assert len(published) == 8 and published["seeds"].astype(int).eq(208).all()
    assert "208 of these runs&#x27; dates recovered" in said and "1664" not in said and "×760" not in said
    assert "devices cpu (not recorded) ×163, NVIDIA H200 ×45" in said
    two_runs = pd.concat([TABLE.iloc[[0]]] * 2).assign(config_hash=["aaaa", "bbbb"])
    assert "commit a5b45a3a77 ×6 (2026-11-30)" in report.provenance(two_runs, None, FakeGit())
    timings = pd.DataFrame({"ms": [1.0, 2.0, 3.0], "device": ["AMD EPYC (2 cores)"] * 3})
    assert "device AMD EPYC (2 cores) ×3" in report.provenance(timings, None, FakeGit())


def test_the_torch_versions_show_where_a_tables_runs_mix_them():
    mixed = TABLE.assign(torch=["2.11.0+cu130 ×3", "2.13.0+cpu ×4, 2.11.0+cu130 ×3"])
    assert "torch 2.11.0+cu130 ×6, 2.13.0+cpu ×4 (its runs mix torch versions)" in report.provenance(mixed, None, FakeGit())
    assert "torch" not in report.provenance(TABLE.assign(torch=["2.13.0+cpu ×3", "2.13.0+cpu ×7"]), None, FakeGit())


class RecordsGit(FakeGit):
    """record.json and its table last changed in commits of their own; new.json is not committed."""

    def last_change(self, path):
        return {"old.json": ("def5678", "2026-12-06"), "table.csv": ("abc1234", "2026-11-20")}.get(Path(path).name)


def test_a_measured_table_names_the_commit_and_date_its_records_name(tmp_path):
    """A measurement record names its commit and date (attnlab.data stamps it): the footer says them. A published
    record from before that: the commit that last changed the record, not the table's, so a table rebuilt and not
    yet committed still says where its numbers were made; a record neither names nor git knows: not committed."""
    table = pd.DataFrame({"ms": [1.0], "device": ["AMD EPYC"]})
    stamped = tmp_path / "measure" / "new.json"
    stamped.parent.mkdir()
    stamped.write_text(json.dumps({"rows": [], "commit": "a5b45a3a77" + "0" * 30, "dirty": False,
                                   "measured_at": "2026-12-07T06:00:00+00:00"}))
    said = report.provenance(table, Path("dirty.csv"), RecordsGit(), [stamped])
    assert "measured at commit a5b45a3a77 (2026-12-07)" in said and "not yet committed" not in said
    old = tmp_path / "measure" / "old.json"
    old.write_text(json.dumps({"rows": []}))
    said = report.provenance(table, Path("dirty.csv"), RecordsGit(), [old])
    assert "its record last changed in commit def5678 (2026-12-06)" in said and "not yet committed" not in said
    unknown = tmp_path / "measure" / "unknown.json"
    unknown.write_text(json.dumps({"rows": []}))
    assert "numbers not yet committed" in report.provenance(table, Path("dirty.csv"), RecordsGit(), [unknown])
    nowhere = tmp_path / "measure" / "copy.json"  # measured in a copy without git: its date, and no commit
    nowhere.write_text(json.dumps({"rows": [], "commit": None, "measured_at": "2026-12-07T06:00:00+00:00"}))
    said = report.provenance(table, Path("dirty.csv"), RecordsGit(), [nowhere])
    assert "measured 2026-12-07 in a tree without git (no commit recorded)" in said and "not yet committed" not in said
    # a CSV record names them in its columns (grad_norms.csv)
    csv = tmp_path / "measure" / "grad_norms.csv"
    pd.DataFrame({"grad_norm": [0.1], "commit": ["5387a7a1fc" + "1" * 30 + "+dirty"],
                  "measured_at": ["2026-12-02T01:00:00+00:00"]}).to_csv(csv, index=False)
    assert "measured at commit 5387a7a1fc+dirty (2026-12-02)" in report.provenance(table, None, RecordsGit(), [csv])


def test_every_measurement_record_written_names_its_commit_and_date(tmp_path):
    """attnlab.data.write_json stamps a measurement's record (a mapping with rows, under a measure/ folder) with the
    commit and the date, keeping a commit the record names itself; other JSON it leaves as given."""
    from attnlab.data import write_json
    folder = tmp_path / "results" / "quick" / "measure" / "throughput"
    folder.mkdir(parents=True)
    write_json(folder / "throughput.json", {"table": "throughput", "rows": [{"ms": 1.0}]})
    record = json.loads((folder / "throughput.json").read_text())
    assert record["commit"] and "dirty" in record and re.fullmatch(r"\d{4}-\d\d-\d\dT.*", record["measured_at"])
    write_json(folder / "meta.json", {"rows": 2000, "commit": "mine", "dirty": False})
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["commit"] == "mine" and "measured_at" in meta and "diff_sha256" not in meta
    write_json(folder / "split.json", {"language": "x"})  # no rows: not a measurement's record
    write_json(tmp_path / "plan.json", {"rows": [1]})  # not under measure/
    assert "commit" not in json.loads((folder / "split.json").read_text())
    assert "commit" not in json.loads((tmp_path / "plan.json").read_text())


def test_the_note_under_a_table_says_where_the_rest_is():
    """A table's Markdown and its report section say where what they leave out is (its provenance view, the CSV),
    and name no file content the table lacks ('config hashes: the CSV' where the CSV has none)."""
    from attnlab.views import to_markdown
    markdown = to_markdown("t", pd.DataFrame({"x": [1.0, 2.0], "device": ["cpu", "cpu"]}), "t")
    assert "[t.provenance.md](t.provenance.md)" in markdown and "config hashes" not in markdown
    html_table = report.data_table("t", pd.DataFrame({"x": [1.0, 2.0], "device": ["cpu", "cpu"]}))
    assert "config hashes" not in html_table and "commits per row" not in html_table and ">cpu<" not in html_table


def test_a_list_right_after_its_sentence_is_a_list():
    """A caption's sentence that leads into its bullet list with no blank line between (sqrt_dk_sweep's 'Against the
    chapter') renders as a paragraph and then a list, not one run-on paragraph; so does the published caption."""
    page = report.caption_html("Against the chapter: no.\n- The first, at 1e-3.\n- The second\n  goes on.\n\nLast.")
    assert page == ("<p>Against the chapter: no.</p>\n<ul><li>The first, at 1e-3.</li><li>The second goes on.</li></ul>"
                    "\n<p>Last.</p>")
    text = (ROOT / "workflow/report/sqrt_dk_sweep.rst").read_text(encoding="utf-8")
    from attnlab import captions as C
    src = C.Sources("full", {p.stem: p for p in (ROOT / "results/full/tables").glob("*.csv")},
                    ROOT / "results/full/claims.csv", ROOT / "results/full")
    shown = report.caption_html(C.render(text, src, "sqrt_dk_sweep"))
    assert re.search(r"<p>Against the chapter: [^<]*</p>\s*<ul>(<li>The [^<]*</li>){6}<li>Whether .*?</li></ul>", shown)


def test_a_power_shows_as_a_superscript_not_a_caret():
    """n^1.91 in a ledger cell or a caption's text, s^{1/2} in a formula: the reader sees a superscript."""
    assert report.sentence_html("Time grows as n^1.91 (the slope).") == "Time grows as n<sup>1.91</sup> (the slope)."
    assert "n<sup>a</sup>" in report.inline_html("time grows as n^a with a = 2")
    assert report.math_text("s^{1/2}") == "s<sup>1/2</sup>" and report.math_text("n^2") == "n²"
    assert "^" not in report.caption_html("x^y and ``code^kept``").replace("code^kept", "")


def test_numbers_are_never_split_across_lines():
    assert report.cell_html("60.1 ± 0.4814") == '<td class="num">60.1 ± 0.4814</td>'
    assert report.cell_html("60.1 ± 0.4814", label=" data-label=\"ours\"") == \
        '<td class="num" data-label="ours"><span class="num">60.1 ± 0.4814</span></td>'  # a card's label may wrap
    assert report.cell_html("1,115,394") == '<td class="num">1,115,394</td>'
    # a sentence wraps between its numbers, never at the hyphen inside one
    assert report.cell_html("fails on [4.35e-05 ± 0.002, -0.1318]: 1 of 10") == \
        '<td>fails on [<span class="num">4.35e-05</span> ± 0.002, <span class="num">-0.1318</span>]: 1 of 10</td>'
    assert report.cell_html("post-norm, warmup 200") == "<td>post-norm, warmup 200</td>"


def test_a_list_cell_is_a_small_table_of_its_items():
    assert report.cell_html("[-0.1428 ± 0.2508, -0.2071 ± 0.2477]") == (
        '<td><table class="items"><tr><td class="num">-0.1428 ± 0.2508</td></tr> '
        '<tr><td class="num">-0.2071 ± 0.2477</td></tr></table></td>')
    # a list of intervals: one interval a row, not split further; 2,048 is one number
    first = '[<span class="num">-0.6676</span>, <span class="num">-0.4056</span>]'
    assert report.cell_html("[[-0.6676, -0.4056], [2,048, 8,192]]") == \
        f'<td><table class="items"><tr><td>{first}</td></tr> <tr><td>[2,048, 8,192]</td></tr></table></td>'
    assert report.cell_html("[0.5, 2, 2,048]").count('<td class="num">') == 3
    # an interval (a pair of plain numbers) stays one line; text that is not one list stays text
    assert report.cell_html("[36.42, 37.5]") == "<td>[36.42, 37.5]</td>"
    assert report.cell_html("[a] or [b]") == "<td>[a] or [b]</td>"


def test_a_long_list_is_cut_to_its_first_items_in_the_summary_line():
    """"What did not reproduce" is one line per claim; the ledger below lists every value."""
    assert report.shortened_lists("[2,048, 8,192, 16,384, 32,768, 65,536]") == "[2,048, 8,192, 16,384, … (5 values)]"
    assert report.shortened_lists("fails on [[1, 2], [3, 4], [5, 6], [7, 8], [9, 0]]: 1 of 10") == \
        "fails on [[1, 2], [3, 4], [5, 6], … (5 values)]: 1 of 10"
    assert report.shortened_lists("[36.42, 37.5] and [1, 2, 3, 4]") == "[36.42, 37.5] and [1, 2, 3, 4]"
    ledger = pd.DataFrame([{"id": "t.c", "table": "t", "number": "DIFFERS", "point": "–", "chapter": "0",
                            "reproduced": str([float(i) for i in range(15)]), "interval": "", "note": "", "margin": "m",
                            "why": "w"}])
    line = report.not_reproduced(ledger.assign(seeds=10), None, {})
    assert "[0.0, 1.0, 2.0, … (15 values)]" in line and "14.0" not in line


def test_a_caption_keeps_its_strong_and_its_emphasis():
    assert report.caption_html("Ours, in ``_base.yaml``: **batch 32**,\n*constant* after warmup.") == \
        "<p>Ours, in <code>_base.yaml</code>: <strong>batch 32</strong>, <em>constant</em> after warmup.</p>"
    # a star inside code is the code's: it neither opens nor closes an emphasis
    assert report.caption_html("``gap_*`` is a *distance*, ``a*b`` too") == \
        "<p><code>gap_*</code> is a <em>distance</em>, <code>a*b</code> too</p>"


def test_a_caption_has_its_title_as_the_heading_its_lists_and_its_formulas():
    rst = "Why post-norm needs warmup\n==========================\n\nIntro.\n\n- *Batch* first,\n  wrapped.\n- Clip.\n"
    assert report.caption_title(rst) == "Why post-norm needs warmup"
    assert report.caption_html(rst) == "<p>Intro.</p>\n<ul><li><em>Batch</em> first, wrapped.</li><li>Clip.</li></ul>"
    assert report.caption_html(r"total :math:`12d^2 + 13d`, :math:`\sqrt{d_k}`") == \
        '<p>total <span class="math">12d² + 13d</span>, <span class="math">√d_k</span></p>'
    assert report.caption_title("No title here.") is None


def built_report(tmp_path, ledger: pd.DataFrame) -> str:
    """The page report.main writes for `ledger` beside one table, its caption and the claims plot (its two PNGs, the
    ratios and the panels, each with its SVG)."""
    csv, table = tmp_path / "results/full/claims.csv", tmp_path / "results/full/tables/ladder.csv"
    table.parent.mkdir(parents=True)
    ledger.to_csv(csv, index=False)
    TABLE.to_csv(table, index=False)
    pngs = [tmp_path / "figures/full/claims.png", tmp_path / "figures/full/claims_missed.png"]
    pngs[0].parent.mkdir(parents=True)
    for png in pngs:
        Image.new("RGB", (4, 4), "white").save(png)
        png.with_suffix(".svg").write_text("<svg/>")
    caption = tmp_path / "results/full/captions/ladder.rst"
    caption.parent.mkdir(parents=True)
    caption.write_text("The whole ladder\n================\n\nEleven models.\n")
    out = tmp_path / "results/full/report.html"
    report.main(["--profile", "full", "--ledger", str(csv), "--out", str(out), "--trained", "ladder",
                 f"table={table}", f"caption={caption}", *(f"claims_figure={png}" for png in pngs)])
    return out.read_text()


def test_the_first_screen_answers_whether_it_reproduced(tmp_path):
    """Right under the title: the ledger's summary sentence, each number that DIFFERS and each point that FAILS
    with ours against the chapter's, and a link to the ledger; the words' definitions come last."""
    page = built_report(tmp_path, LEDGER)
    answer = page[page.index("</h1>") + len("</h1>"):page.index("</section>")]
    assert answer.startswith('<section id="answer">')
    assert report.esc(summary_line(LEDGER)) in answer
    assert "1 AGREES, 1 DIFFERS, 1 OPEN" in answer and "1 HOLDS, 1 FAILS" in answer  # both columns, apart
    # the claim in words, its id a small reference linked to its table, both numbers, its words last
    assert ("<li>Perplexity gain of the residual (<a href=\"#ladder\"><code class=\"ref\">ladder.<wbr>residual</code></a>): "
            "ours 2.1 ± 0.2 against the chapter&#x27;s 5.2 — number DIFFERS, point FAILS</li>") in answer
    assert "ladder.gain" not in answer and '<a href="#ledger">' in answer  # an OPEN number is not a difference
    at = [page.index(s) for s in ("</h1>", report.esc(summary_line(LEDGER)), '<section id="summary">',
                                  '<nav id="contents">', '<section id="ledger">', '<section id="words">')]
    assert at == sorted(at) and page.index('<section id="words">') > page.rindex('<section id="ladder">')


def test_the_words_defined_are_those_the_ledger_uses(tmp_path):
    page = built_report(tmp_path, LEDGER)
    words = page[page.index('<section id="words">'):]
    for used in ("number <strong>AGREES</strong>", "number <strong>DIFFERS</strong>", "number <strong>OPEN</strong>",
                 "point <strong>HOLDS</strong>", "point <strong>FAILS</strong>", "point <strong>–</strong>"):
        assert used in words
    assert "NOT TESTED" not in words and "point <strong>OPEN</strong>" not in words


def test_no_word_of_the_old_combined_verdict_is_left(tmp_path):
    page = built_report(tmp_path, LEDGER)
    assert not OLD_WORDS.findall(page)
    assert 'data-label="verdict"' not in page and 'data-label="number"' in page and 'data-label="point"' in page


def test_every_word_of_both_columns_has_its_own_colour_and_mark():
    """Okabe and Ito's hues (style.PALETTE), and within a column a mark each: no word is told by colour alone."""
    for column, words, colours, marks in (("number", NUMBER_WORDS, style.NUMBER_COLOURS, style.NUMBER_MARKS),
                                          ("point", POINT_WORDS, style.POINT_COLOURS, style.POINT_MARKS)):
        assert list(colours) == list(words) and list(marks) == list(words)
        assert set(colours.values()) <= set(style.PALETTE) and len(set(marks.values())) == len(marks)
        for word in words:
            shown = report.verdict_mark(column, word)
            assert f"color:{colours[word]}" in shown and marks[word] in shown and word in shown


def test_the_front_reads_like_a_reproduction_report(tmp_path):
    """Summary (analytic and trained claims apart), contents above the long parts, what does not come back (with
    why, and the ledger's reason where it gives one), the claims plot linked to its SVG, then the ledger; sections
    headed in words."""
    page = built_report(tmp_path, LEDGER.assign(reason=["", "Six seeds cannot tell 1.88 from 1.8 ± 0.5.", ""]))
    at = [page.index(s) for s in ('<section id="summary">', '<nav id="contents">', '<section id="not-reproduced">',
                                  'alt="every numeric claim', '<section id="ledger">', '<section id="ladder">')]
    assert at == sorted(at)
    assert "analytic (" not in page and "trained (3): numbers 1 AGREES, 1 DIFFERS, 1 OPEN, points 1 HOLDS, 1 FAILS" in page
    assert '<h2>The whole ladder <span class="id">ladder</span></h2>' in page and "<p>Eleven models.</p>" in page
    missed = page[page.index('<section id="not-reproduced">'):page.index('<section id="claims-plot">')]
    assert missed.index("ladder.<wbr>residual") < missed.index("ladder.<wbr>gain")  # what differs before what is open
    assert "ladder.<wbr>block</code>" not in missed and "not ruled out, 12 seeds per row would decide it" in missed
    # a claim by its name in words, its id beside it small; the id alone in a ledger that names none
    assert ('<li>Perplexity gain of the residual (<code class="ref">ladder.<wbr>residual</code>, <a href="#ladder">'
            'The whole ladder</a>) ') in missed
    assert '<li><a href="#ladder">The whole ladder</a>, <code>ladder.<wbr>gain</code> ' in missed
    assert '<span class="reason">Six seeds cannot tell 1.88 from 1.8 ± 0.5.</span>' in page
    assert '<a href="../../figures/full/claims.svg"' in page
    assert page.index('alt="every numeric claim') < page.index('<a href="../../figures/full/claims_missed.svg"') \
        < page.index('<section id="ledger">')  # the ratios, then the panels of the claims that do not come back
    assert re.search(r"Provenance: commits a5b45a3a77 ×6 \([^)]*\), 5387a7a1fc ×4", page)
    assert "runs dated 2026-11-30 to 2026-12-03" in page  # the front reads the runs' dates, as the sections do
    assert "not recorded" not in page


def test_a_claims_kind_is_the_ledgers_where_it_says_else_its_tables():
    assert list(report.kinds(LEDGER, {"ladder"})) == ["trained"] * 3
    assert list(report.kinds(LEDGER, set())) == ["analytic"] * 3
    assert list(report.kinds(LEDGER.assign(kind=["analytic", "trained", "trained"]), set())) == ["analytic", "trained",
                                                                                                 "trained"]


def test_the_registry_is_the_one_list_of_tables():
    """The report's order is every registered table's declared place, each its own (none left to the id's
    alphabet), and workflow/README.md's table of tables describes each of them (and nothing else)."""
    load_families()
    places = [DECLARED[t].place for t in chapter_order()]
    assert sorted(chapter_order()) == sorted(TABLE_BUILDERS) and places == sorted(set(places))
    assert chapter_order()[0] == "corpus" and max(places) < float("inf")
    readme = (Path(__file__).resolve().parents[1] / "workflow/README.md").read_text()
    section = readme[readme.index("## The tables"):readme.index("## Add a row")]
    described = {i for row in re.findall(r"^\| (`.*?) \|", section, re.M) for i in re.findall(r"`(\w+)`", row)}
    assert described - {"claims"} == set(TABLE_BUILDERS)


def test_every_formula_of_the_captions_renders_without_latex():
    """What the reader's report shows for each :math:`…` of workflow/report/: no backslash command or brace left."""
    formulas = {f for path in (Path(__file__).resolve().parents[1] / "workflow/report").glob("*.rst")
                for f in re.findall(r":math:`([^`]+)`", path.read_text(encoding="utf-8"))}
    assert len(formulas) >= 10
    shown = {f: report.math_text(f) for f in formulas}
    assert not [f"{f} -> {s}" for f, s in shown.items() if re.search(r"[\\{}]", s)]
    assert shown[r"\bar x \pm t\, s \sqrt{1 + 1/n}"] == "x̄ ± t s √(1 + 1/n)"


def test_the_front_names_each_machine_once():
    """A timing names its CPU with its cores, a run by its model: one machine, said once; a bare device kind is
    dropped where a table names a machine."""
    runs = pd.DataFrame({"device": ["AMD EPYC ×4, NVIDIA H200 ×3"]})
    timings = pd.DataFrame({"device": ["AMD EPYC (2 cores)", "AMD EPYC (2 cores)"]})
    cost = pd.DataFrame({"device": ["cpu ×2"]})
    assert report.machines({"ladder": runs, "throughput": timings, "pipeline_time": cost}) == ["AMD EPYC", "NVIDIA H200"]


def test_how_a_table_was_made_is_folded_and_its_finding_stays_in_view():
    rst = ("Title\n=====\n\n.. how it was made\n\nEleven models, trained so.\n\n.. end of how it was made\n\n"
           "The one block ends at 38.01.\n")
    html = report.caption_html(rst)
    assert html.index("<details") < html.index("Eleven models") < html.index("</details>") < html.index("The one block")
    assert ".. how" not in html


@pytest.mark.parametrize("profile", ["full", "quick"])
def test_the_published_report_says_where_every_number_was_committed(profile):
    """A report built before its tables were committed says "not yet committed"; the published one is rendered again
    after that commit, so a fresh clone's rebuild of it changes nothing."""
    page = ROOT / "results" / profile / "report.html"
    if not page.is_file():
        pytest.skip(f"no published {profile} report")
    assert "not yet committed" not in page.read_text(encoding="utf-8")
