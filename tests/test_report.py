"""The reader's report, without a browser: the claims plot between what did not reproduce and the ledger,
linked to its SVG relative to the report; each section's provenance as its table records it (and what it
does not record, said so); numbers kept whole. The browser's view: test_pipeline.py."""

import re
from pathlib import Path

import pandas as pd
from PIL import Image

from attnlab import report
from attnlab.tables import BUILDERS as TABLE_BUILDERS, CHAPTER_ORDER, for_people, load_families, provenance, seed_ids

LEDGER = pd.DataFrame([
    {"id": "ladder.block", "table": "ladder", "statement": "s", "chapter": "38.07", "reproduced": "38.09 ± 0.3529",
     "interval": "[37.76, 38.42]", "rule": "within 1 %", "verdict": "MATCH", "margin": "0.05 tol", "note": "",
     "seeds": 7, "profile": "full"},
    {"id": "ladder.gain", "table": "ladder", "statement": "s", "chapter": "1.8", "reproduced": "1.88 ± 0.379",
     "interval": "[0.939, 2.822]", "rule": "within ±0.5", "verdict": "INCONCLUSIVE", "margin": "0.16 tol ± 1.9",
     "note": "", "seeds": 3, "profile": "full"},
])
TABLE = pd.DataFrame({"row": [1, 2], "held_out_ppl": [60.1, 38.09], "steps": [3000, 3000],
                      "commit": ["a5b45a3a77", "5387a7a1fc"], "device": ["cuda", "cpu,cuda"], "seed_ids": ["0–2", "0–6"]})


def test_runs_record_their_commit_devices_and_seeds():
    runs = [{"seed": s, "device": d, "commit": "0123456789abcdef", "dirty": False, "sources": [{}, {}]}
            for s, d in ((0, "cuda"), (1, "cpu"), (2, "cuda"), (4, "cuda"))]
    assert provenance(runs) == {"commit": "0123456789+resumed", "device": "cpu,cuda", "seed_ids": "0–2,4"}
    assert provenance([{"commit": None}]) == {"commit": "", "device": "", "seed_ids": ""}  # a record without them
    assert seed_ids([1, 0]) == "0,1" and seed_ids(range(10)) == "0–9"
    _, shared = for_people(pd.DataFrame({"x": [1.0, 2.0], "seed_ids": ["0–2", "0–2"], "device": ["cuda", "cuda"]}))
    assert shared == ["seed_ids: 0–2", "device: cuda"]  # said once under the table


def test_a_section_names_its_provenance_and_what_its_table_does_not_record():
    assert report.provenance(TABLE) == ('<p class="meta">Provenance: commits a5b45a3a77, 5387a7a1fc · '
                                        "devices cuda, cpu · seeds 0–2, 0–6 · not recorded: date</p>")
    assert "seed 0 · not recorded: commit, device, date" in report.provenance(pd.DataFrame({"d": [4], "seed": [0]}))
    assert "Provenance: not recorded: commit, device, seed, date" in report.provenance(pd.DataFrame({"d": [4]}))


def test_numbers_are_never_split_across_lines():
    assert report.cell_html("60.1 ± 0.4814") == '<td class="num">60.1 ± 0.4814</td>'
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
    ledger = pd.DataFrame([{"id": "t.c", "table": "t", "verdict": "CONTRADICTED", "chapter": "0",
                            "reproduced": str([float(i) for i in range(15)]), "interval": "", "note": "", "margin": "m"}])
    line = report.not_reproduced(ledger)
    assert "[0.0, 1.0, 2.0, … (15 values)]" in line and "14.0" not in line


def test_a_caption_keeps_its_strong_and_its_emphasis():
    assert report.caption_html("Ours, in ``_base.yaml``: **batch 32**,\n*constant* after warmup.") == \
        "<p>Ours, in <code>_base.yaml</code>: <strong>batch 32</strong>, <em>constant</em> after warmup.</p>"
    # a star inside code is the code's: it neither opens nor closes an emphasis
    assert report.caption_html("``gap_*`` is a *distance*, ``a*b`` too") == \
        "<p><code>gap_*</code> is a <em>distance</em>, <code>a*b</code> too</p>"


def test_the_claims_plot_sits_after_what_did_not_reproduce_and_links_its_svg(tmp_path):
    ledger, table = tmp_path / "results/full/claims.csv", tmp_path / "results/full/tables/ladder.csv"
    table.parent.mkdir(parents=True)
    LEDGER.to_csv(ledger, index=False)
    TABLE.to_csv(table, index=False)
    png = tmp_path / "figures/full/claims.png"
    png.parent.mkdir(parents=True)
    Image.new("RGB", (4, 4), "white").save(png)
    png.with_suffix(".svg").write_text("<svg/>")
    out = tmp_path / "results/full/report.html"
    report.main(["--profile", "full", "--ledger", str(ledger), "--out", str(out), f"table={table}",
                 f"claims_figure={png}"])
    page = out.read_text()
    missed, plot, ledger_at = (page.index(s) for s in ("What did not reproduce", 'alt="every numeric claim',
                                                        "<h3>Every claim"))
    assert missed < plot < ledger_at
    assert '<a href="../../figures/full/claims.svg"' in page
    assert "Provenance: commits a5b45a3a77, 5387a7a1fc" in page[page.index('<section id="ladder">'):]


def test_the_registry_is_the_one_list_of_tables():
    """The report's order names exactly the registered builders, and the README's table of tables
    describes each of them (and nothing else)."""
    load_families()
    assert sorted(CHAPTER_ORDER) == sorted(TABLE_BUILDERS)
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme[readme.index("## The tables"):readme.index("## Claims ledger and report")]
    described = {i for row in re.findall(r"^\| (`.*?) \|", section, re.M) for i in re.findall(r"`(\w+)`", row)}
    assert described - {"claims"} == set(TABLE_BUILDERS)
