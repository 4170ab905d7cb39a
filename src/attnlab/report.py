"""The reader's report: one offline HTML file per profile that reads like a reproduction paper.

    python -m attnlab.report --profile quick --ledger results/quick/claims.csv --out results/quick/report.html \
        --trained ladder,average_ladder,... claims_figure=figures/quick/claims.png claims_figure=figures/quick/claims_missed.png \
        table=results/quick/tables/ladder.csv figure=figures/quick/ladder.png caption=results/quick/captions/ladder.rst ...

The first screen answers "did it reproduce?": under the title the ledger's summary sentence (each word of
its two verdicts counted, the chapter's number and its point apart), each number that DIFFERS and each
point that FAILS with ours against the chapter's, and the way to the ledger. Then the front, in the shape of
a reproduction report (ML Reproducibility Challenge, ReScience): a summary that counts the analytic and the
trained claims apart, the contents, what comes back, what does not or is open (each claim with ours against
the chapter's, its seeds, why and what was tried), the choices the chapter does not state, what was easy and
what was hard, the claims plot and every claim; then one section per table in the chapter's order (each
table's declared place, attnlab.tables): its caption (rendered from the profile's data: attnlab.captions),
the claims it carries, the table in the chapter's shape with the chapter's number beside ours (attnlab.views),
folded under it where its numbers were made (commits and their dates, devices, seeds) and the columns not shown,
and its figure inline; last, what each word the ledger uses means. No JavaScript; figures are the pipeline's
PNGs, embedded, each linking to its SVG beside it. The page never scrolls sideways: the ledger's five
columns fit the window, other tables scroll in their own box, and no number or verdict's word is broken across
lines. (Snakemake's own
report, with the rule graph and runtimes, sits beside it as snakemake_report.html.)
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import os
import re
import subprocess
from pathlib import Path

import pandas as pd

from attnlab.claims.render import (HOW_JUDGED, LIST, LIST_ITEM, claim_name, counted, differing_lines,
                                   is_judged_loosely, loose_warning, seeds_text, shortened_lists, summary_line,
                                   variant_lines, word_definitions)
from attnlab.claims.rules import NO_POINT, NUMBER_WORDS, POINT_WORDS
from attnlab.claims.plot import MISSED
from attnlab.claims.stats import LEVEL
from attnlab.data import atomic_path
from attnlab.readable import STYLE_SHEET
from attnlab.families.throughput import NOT_ON_A_GPU
from attnlab.style import NUMBER_COLOURS, NUMBER_MARKS, POINT_COLOURS, POINT_MARKS
from attnlab.tables import PIPELINE_OWN, parse_named, tally
from attnlab.views import declared, provenance_view, reader_view

# each verdict column's words: their colours and marks, their meanings (in the columns' order)
LOOKS = {"number": (NUMBER_COLOURS, NUMBER_MARKS), "point": (POINT_COLOURS, POINT_MARKS)}
WORDS = {"number": NUMBER_WORDS, "point": POINT_WORDS}
KINDS = ("analytic", "trained")
PROVENANCE = ("commit", "device", "seed_ids", "run_dates", "torch")  # text: a commit of digits only is not a number
DEVICE_KINDS = ("cpu", "cuda", "mps")  # what a record says where it names no model
RECORD = "record_"  # record_<table>=<file>: the measurement records a measured table is built from
# the page's style sheet (attnlab.readable.STYLE_SHEET: part of the report's key, attnlab.jobs)
CSS = STYLE_SHEET.read_text(encoding="utf-8")


# a cell that holds one number (the tables' and the ledger's: 1,115,394 · 60.1 ± 0.4814 · 1.19e-07 · 10/10)
NUMBER = re.compile(r"[-−+]?\d[\d,]*(\.\d+)?(e[-+]?\d+)?( ± \d[\d,]*(\.\d+)?(e[-+]?\d+)?|/\d+)?")
# a number with a hyphen (-0.13, 4.35e-05), where a browser would break a line inside a list or a sentence
HYPHENATED = re.compile(r"-\d[\d,]*(\.\d+)?(e-?\d+)?|\d[\d,]*(\.\d+)?e-\d+")


def text(cell) -> str:
    """A cell as text: empty where the CSV has none."""
    return "" if pd.isna(cell) else str(cell)


def esc(cell) -> str:
    return html.escape(text(cell))


def list_items(cell: str) -> list[str]:
    """The items of a list cell worth a row each ('[a ± s, b ± s]', '[[lo, hi], …]', three numbers or
    more); none for anything else, or for a pair of plain numbers ('[36.42, 37.5]': an interval, short
    enough for one line). An item may be a list itself; 2,048's comma has no space after it."""
    if not LIST.fullmatch(cell):
        return []
    items = LIST_ITEM.split(cell[1:-1])
    return items if len(items) > 2 or not all(NUMBER.fullmatch(i) and "±" not in i for i in items) else []


def cell_html(cell, nested: bool = True, label: str = "") -> str:
    """A table cell; no number in it is broken across lines (its box scrolls sideways instead): a
    cell of one number stays on one line, a sentence wraps only between its numbers, and a list is a
    small table of its items, one a row (`nested`: whether a list inside a list is split too). `label`:
    the cell's data-label attribute."""
    items = list_items(text(cell)) if nested else []
    if items:
        # rows apart by a space: the cell's text reads as items, not as one long number
        rows = " ".join(f"<tr>{cell_html(item, nested=False)}</tr>" for item in items)
        return f'<td{label}><table class="items">{rows}</table></td>'
    if NUMBER.fullmatch(text(cell)):
        # the number itself never wraps
        return f'<td class="num"{label}><span class="num">{esc(cell)}</span></td>' if label else \
            f'<td class="num">{esc(cell)}</td>'
    return f"<td{label}>{sentence_html(cell)}</td>"


def sentence_html(cell) -> str:
    """Text that wraps between its words and numbers, never at the hyphen inside a number (4.35e-05, -0.13); a power
    written with a caret (n^1.91) as a superscript."""
    return superscripts(HYPHENATED.sub(r'<span class="num">\g<0></span>', esc(cell)))


# a power written with a caret in plain text: n^1.91, n^a, s^(1/2)
CARET = re.compile(r"(?<=[\w)])\^(-?\d+(?:\.\d+)?|[A-Za-z]\b|\([^()<>]*\))")


def superscripts(text: str) -> str:
    """n^1.91 → n<sup>1.91</sup>: a reader sees the power, not a caret."""
    return CARET.sub(lambda m: f"<sup>{m[1][1:-1] if m[1].startswith('(') else m[1]}</sup>", text)


def breakable(name: str) -> str:
    """A claim id (`position_extrapolation.learned_wins_at_64`) that may wrap after its dots and
    underscores, never inside a word or number."""
    return re.sub(r"([._])", r"\1<wbr>", esc(name))


def verdict_mark(column: str, word: str) -> str:
    """A word of the ledger's `number` or `point` column in its colour, after its mark (NO_POINT is its own mark)."""
    colours, marks = LOOKS[column]
    mark = f"{marks[word]} " if marks[word] != word else ""
    return f'<span class="verdict" style="color:{colours[word]}">{mark}{esc(word)}</span>'


def ledger_line_html(line: str, tables: dict[str, str]) -> str:
    """A line of the ledger's Markdown (attnlab.claims.render) as HTML, its long lists cut: **words** strong, a
    `claim id` (beside the claim's name in words: a small reference) linked to its table's section (`tables`: claim
    id → table)."""
    def claim(found: re.Match) -> str:
        if found[1] not in tables:
            return f"<code>{breakable(found[1])}</code>"
        return f'<a href="#{esc(tables[found[1]])}"><code class="ref">{breakable(found[1])}</code></a>'
    return re.sub(r"`([^`]+)`", claim, emphasis_html(sentence_html(shortened_lists(line))))


def row_anchor(claim_id: str, hypothesis_id: str) -> str:
    """The id of a contradictions row: what the list of what did not reproduce links to."""
    return f"tried-{claim_id}-{hypothesis_id}"


# a caption's paragraphs on how its table was made, between these two comment lines of its template (each a
# paragraph of its own): folded in the report under the first's words, the finding left in view
FOLD, FOLD_END = ".. how it was made", ".. end of how it was made"


def caption_html(rst: str) -> str:
    """A caption's reStructuredText as HTML: its title left out (the section's heading), paragraphs, bullet
    lists ('- ' lines), ``code``, **strong**, *emphasis* and :math:`formulas`, nothing more; the paragraphs between
    FOLD and FOLD_END folded."""
    out = []
    for block in (b for b in re.split(r"\n\s*\n", caption_body(rst)) if b.strip()):
        if block.strip() in (FOLD, FOLD_END):
            out.append(f'<details class="how"><summary>{FOLD[3:]}</summary>' if block.strip() == FOLD else "</details>")
            continue
        lines = block.strip().splitlines()
        start = list_start(lines)
        if start is None:
            out.append(f"<p>{inline_html(block)}</p>")
            continue
        if start:  # a sentence that leads into its list, with no blank line between: a paragraph, then the list
            out.append(f"<p>{inline_html(chr(10).join(lines[:start]))}</p>")
        items = re.split(r"\n(?=- )", "\n".join(lines[start:]))
        out.append("<ul>" + "".join(f"<li>{inline_html(i[2:])}</li>" for i in items) + "</ul>")
    return "\n".join(out)


def list_start(lines: list[str]) -> int | None:
    """Where a block's bullet list begins: the first '- ' line from which every line is an item or an item's
    indented continuation; None where the block holds no such list."""
    for i, line in enumerate(lines):
        if line.startswith("- ") and all(re.match(r"-\s", rest) or rest.startswith("  ") for rest in lines[i:]):
            return i
    return None


TITLE = re.compile(r"\A\s*(?P<title>[^\n]+)\n(?P<rule>[=\-~^]{3,})\s*\n")


def caption_title(rst: str) -> str | None:
    """The title a caption opens with (a line underlined with =), or None."""
    found = TITLE.match(rst)
    return found["title"].strip() if found and len(found["rule"]) >= len(found["title"].strip()) else None


def caption_body(rst: str) -> str:
    return TITLE.sub("", rst, count=1) if caption_title(rst) else rst


def inline_html(text: str) -> str:
    """One paragraph's inline markup; odd pieces of a split are ``code`` or :math:`…`, taken as written (a
    star inside ``gap_*`` is not emphasis)."""
    pieces = re.split(r"(``.+?``|:math:`[^`]+`)", esc(" ".join(text.split())))
    return "".join(superscripts(emphasis_html(piece)) if i % 2 == 0 else f"<code>{piece[2:-2]}</code>" if piece.startswith("``")
                   else f'<span class="math">{math_text(piece[7:-1])}</span>' for i, piece in enumerate(pieces))


def math_text(latex: str) -> str:
    """A formula's LaTeX as plain text a browser shows: \\sqrt{d} → √d, \\sqrt{1 + 1/n} → √(1 + 1/n), ^2 → ²,
    \\cdot → ·, \\bar x → x̄, \\pm → ±, \\ge → ≥, \\lVert → ‖, \\alpha → α. Every command the captions use has its sign
    here (tests/test_report.py)."""
    latex = re.sub(r"\\sqrt\{([^{}]*)\}", lambda m: f"√{m[1]}" if re.fullmatch(r"\w+", m[1]) else f"√({m[1]})", latex)
    latex = re.sub(r"\\bar\s*(\w)", "\\1\u0304", latex)
    for a, b in ((r"\lVert ", "‖"), (r" \rVert", "‖"), (r"\alpha", "α"), (r"\cdot", "·"), (r"\propto", "∝"), (r"\sum_i", "Σᵢ"), (r"\pm", "±"), (r"\ge", "≥"), (r"\, ", " "), (r"\,", " "),
                 ("^2", "²"), ("^{20}", "²⁰"), ("^{30}", "³⁰"), ("^{-8h/H}", "<sup>−8h/H</sup>"), ("_{head}", "_head")):
        latex = latex.replace(a, b)
    # any other power a superscript (s^{1/2}, n^a): a reader sees no caret
    latex = re.sub(r"\^\{([^{}]*)\}", r"<sup>\1</sup>", latex)
    latex = re.sub(r"\^(\w+)", r"<sup>\1</sup>", latex)
    for a, b in (("{", ""), ("}", ""), (" - ", " − ")):
        latex = latex.replace(a, b)
    return latex


def emphasis_html(text: str) -> str:
    text = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)  # before *emphasis*, which would take its stars
    return re.sub(r"\*(.+?)\*", r"<em>\1</em>", text)


# ---------------------------------------------------------------- the ledger and the tables

LEDGER_COLUMNS = {"id": "claim", "chapter": "chapter", "reproduced": "ours", "number": "number", "point": "point"}
WIDTHS = {"id": "31%", "chapter": "13%", "reproduced": "24%", "number": "17%", "point": "15%"}
# what a ledger row keeps folded under its claim: why the number reads its word, the claim in the chapter's words,
# how it was judged, the bookkeeping
FOLDED = {"why": "why", "reason": "why it does not come back", "statement": "the chapter says", "rule": "rule",
          "interval": f"our mean's {LEVEL * 100:g} % interval", "seeds": "seeds", "seed_sets": "seed sets",
          "margin": "margin", "band": "band", "would_decide": "would decide", "plan": "plan", "seed_share": "seed share",
          "note": "note"}


def claim_anchor(claim_id: str) -> str:
    return f"claim-{claim_id}"


def ledger_table(ledger: pd.DataFrame) -> str:
    """Claims, one a row, five columns that fit an 800 px window: the claim (linked to its table's section), the
    chapter's number, ours, and the two words (under the number's, folded: why it reads it, the reason it does not
    come back where the ledger gives one — shown open in what does not come back —, what the chapter says, the rule
    and the bookkeeping: FOLDED)."""
    head = "".join(f'<th style="width:{WIDTHS[c]}">{name}</th>' for c, name in LEDGER_COLUMNS.items())
    rows = []
    for _, claim in ledger.iterrows():
        cells = []
        for c, name in LEDGER_COLUMNS.items():
            label = f' data-label="{name}"'
            if c == "number":  # under the word, folded: why it reads it, and how the claim was judged
                folded = "".join(f'<span class="small">{what}: {sentence_html(shortened_lists(text(claim.get(k))))}</span>'
                                 for k, what in FOLDED.items() if text(claim.get(k)))
                cells.append(f'<td{label}>{verdict_mark(c, claim[c])}<details><summary>why</summary>{folded}</details></td>')
            elif c in LOOKS:
                cells.append(f'<td class="verdict"{label}>{verdict_mark(c, claim[c])}</td>')
            elif c == "id":
                cells.append(f'<td{label}><a href="#{esc(claim["table"])}">{breakable(claim[c])}</a></td>')
            else:  # a list wraps between its values, as a sentence does
                cells.append(cell_html(shortened_lists(text(claim.get(c))), nested=False, label=label))
        rows.append(f'<tr id="{esc(claim_anchor(claim["id"]))}">{"".join(cells)}</tr>')
    return f'<table class="ledger"><tr class="head">{head}</tr>{"".join(rows)}</table>'


def section_claims(claims: pd.DataFrame) -> str:
    """Under a table's caption, its claims one after another: each with its two words, linked to its row of the
    ledger."""
    items = " · ".join(f'<span class="claim"><a href="#{esc(claim_anchor(c.id))}"><code>{breakable(c.id)}</code></a> '
                       f"{verdict_mark('number', c.number)}"
                       + (f" {verdict_mark('point', c.point)}" if c.point != NO_POINT else "") + "</span>"
                       for c in claims.itertuples())
    return f'<p class="claims">Its claims: {items}</p>'


def data_table(table_id: str, table: pd.DataFrame, anchors: dict | None = None) -> str:
    """A table as a reader compares it with the chapter (attnlab.views: the chapter's shape, its number beside
    ours); what it leaves out follows, folded (provenance_block). `anchors`: the id of the line showing a CSV row."""
    shown, shared = reader_view(table_id, table)
    row_ids = [anchors.get(i, "") for i in shown.index] if anchors else None
    return html_table(shown, row_ids) + (f'<p class="shared">{esc(" · ".join(shared))}</p>' if shared else "")


def contradiction_anchors(table: pd.DataFrame) -> dict:
    """The id of each contradictions row's line (the list of what did not reproduce links to it)."""
    return {i: row_anchor(r.claim, r.hypothesis_id) for i, r in zip(table.index, table.itertuples())}


def html_table(shown: pd.DataFrame, row_ids: list[str] | None = None) -> str:
    head = "".join(f"<th>{esc(c)}</th>" for c in shown.columns)
    ids = [f' id="{esc(i)}"' if i else "" for i in row_ids] if row_ids else [""] * len(shown)
    rows = "".join(f"<tr{i}>{''.join(cell_html(c) for c in row)}</tr>" for i, row in zip(ids, shown.itertuples(index=False)))
    return f'<div class="scroll"><table><tr class="head">{head}</tr>{rows}</table></div>'


def provenance_block(table_id: str, table: pd.DataFrame, csv: Path, git: "Git", records=(), links: str = "") -> str:
    """Where a table's numbers were made, the columns its reader's view leaves out, its files and how to rebuild
    it, folded: one click away."""
    return (f'<details class="provenance"><summary>How each row was made, the columns not shown, the data</summary>'
            f"{provenance(table, csv, git, records)}{html_table(provenance_view(table_id, table))}{links}</details>")


def data_links(table_id: str, csv: Path, folder: Path, profile: str) -> str:
    """A table's files, linked from the report's folder, and the command that rebuilds it alone."""
    href = Path(os.path.relpath(csv, folder)).as_posix()
    return (f'<p class="meta">Data: <a href="{esc(href)}">{table_id}.csv</a> · <a href="{esc(href[:-4])}.md">'
            f'{table_id}.md</a> · <a href="{esc(href[:-4])}.provenance.md">{table_id}.provenance.md</a> · rebuild it '
            f"(and only what it needs): <code>.venv/bin/snakemake --cores 2 -f {esc(csv)} --config "
            f"profile={esc(profile)}</code></p>")


# ---------------------------------------------------------------- where the numbers were made

class Git:
    """Dates of commits, and the commit that last changed a file, from the repository the report is built in
    (None outside one): what dates a measurement that records no date of its own."""

    def __init__(self, folder: Path = Path(".")):
        self.folder = folder

    def run(self, *args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=self.folder, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    def dates(self, commits: list[str]) -> dict[str, str]:
        """commit → its date (YYYY-MM-DD), for those this repository's history holds."""
        found = {}
        for commit in dict.fromkeys(c.split("+")[0] for c in commits if c):
            date = self.run("show", "-s", "--format=%cs", commit, "--")
            if date:
                found[commit] = date
        return found

    def last_change(self, path: Path) -> tuple[str, str] | None:
        """(commit, date) of the last commit that changed a file, None where it is new or changed since."""
        if self.run("status", "--porcelain", "--", str(path)):
            return None
        found = self.run("log", "-1", "--format=%h %cs", "--", str(path))
        return tuple(found.split()) if found else None


def recorded(table: pd.DataFrame, column: str) -> dict[str, int]:
    """A provenance column's values with their run counts, summed over rows, most first (tables.tally)."""
    if column not in table:
        return {}
    # a row that waits for a GPU names no device it ran on
    return {v: n for v, n in tally(table[column]).most_common() if v != NOT_ON_A_GPU}


def run_dates(table: pd.DataFrame) -> list[str]:
    """The first and last date the table's runs ran on (the rows' run_dates), none for a table of no runs."""
    ends = [d.strip() for cell in table.get("run_dates", []) for d in text(cell).split(" – ") if d.strip()]
    return [min(ends), max(ends)] if ends else []


def dates_recovered(table: pd.DataFrame) -> int:
    return int(pd.to_numeric(table.get("dates_recovered", pd.Series(dtype=float)), errors="coerce").fillna(0).sum())


# the columns that say where a trained row's runs were made, and those that name its runs where a table has them:
# rows alike in all of them read the same runs (a Winograd table's positions or heads, a hypothesis's claims)
RUN_PROVENANCE = ("commit", "device", "torch", "run_dates", "dates_recovered", "seed_ids")
RUN_IDENTITY = ("config_hash", "experiment", "run")


def run_rows(table: pd.DataFrame) -> pd.DataFrame:
    """A table of runs, one row per set of runs: rows that read the same runs count them once. A measurement's
    table (no commit or seeds of runs) keeps every row: each is a measurement of its own."""
    if not any(c in table for c in ("commit", "seed_ids", "run_dates")):
        return table
    return table.drop_duplicates(subset=[c for c in (*RUN_PROVENANCE, *RUN_IDENTITY) if c in table])


def record_stamp(path: Path) -> tuple[str, str] | None:
    """(commit, date) a measurement record names itself: a JSON record's commit (+dirty) and measured_at (attnlab.data
    stamps every record it writes), a CSV's commit and measured_at columns; the date may be '' (an older record that
    named its commit only); None where it names no commit."""
    try:
        if path.suffix == ".json":
            doc = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(doc, dict) or not (doc.get("commit") or doc.get("measured_at")):
                return None
            return (str(doc.get("commit") or "")[:10] + ("+dirty" if doc.get("commit") and doc.get("dirty") else ""),
                    str(doc.get("measured_at") or "")[:10])
        if path.suffix == ".csv":
            first = pd.read_csv(path, nrows=1, dtype=str)
            if "commit" not in first or first["commit"].isna().all():
                return None
            commit = first["commit"].iloc[0]
            return (commit[:10] + ("+dirty" if commit.endswith("+dirty") else ""),
                    str(first["measured_at"].iloc[0])[:10] if "measured_at" in first else "")
    except (OSError, ValueError):
        return None
    return None


def made(records: list[Path], git: Git) -> list[str]:
    """Where a measured table's numbers were made, from its records: the commit and date its records name (a
    measurement's data files beside a record that names them are its own), else the commit that last changed them
    (git: the published records from before records named their commit); empty where they say neither (new, and
    not yet committed)."""
    said, undated = {}, set()
    for commit, date in filter(None, map(record_stamp, records)):
        if not commit:  # measured in a tree without git (a copy sent to another machine): its date only
            undated.add(date)
            continue
        said[commit] = date or git.dates([commit.split("+")[0]]).get(commit.split("+")[0], "date not in this clone")
    if said or undated:
        return ([f"measured at commit{'s' if len(said) > 1 else ''} " + ", ".join(f"{c} ({d})" for c, d in said.items())]
                if said else []) + ([f"measured {', '.join(sorted(undated))} in a tree without git (no commit recorded)"]
                                    if undated else [])
    landed = [git.last_change(path) for path in records]
    if not landed or not all(landed):
        return []
    commit, date = max(landed, key=lambda found: found[1])
    return [f"measured before records named their commit; its record{'s' if len(records) > 1 else ''} last changed "
            f"in commit {commit} ({date})"]


def provenance(table: pd.DataFrame, csv: Path | None = None, git: Git | None = None,
               records: list[Path] = ()) -> str:
    """Where a section's numbers were made: every commit its table records with its runs and its date; for a
    measured table, the commit and date each measurement record names (else the commit that last changed the record,
    else the table); the dates its runs ran on (and how many were recovered rather than recorded); its devices by
    name with their runs, else the CPU (a measurement that records no device ran on torch's default one); the torch
    versions where its runs mix them; its seeds, each row's count where rows differ. Runs are counted once however
    many rows read them (run_rows)."""
    git = git or Git()
    said = []
    runs = run_rows(table)
    commits = recorded(runs, "commit")
    if commits:
        dates = git.dates(list(commits))
        said.append(("commits " if len(commits) > 1 else "commit ") + ", ".join(
            f"{c} ×{n} ({dates[c.split('+')[0]]})" if c.split("+")[0] in dates else f"{c} ×{n} (not in this clone's history)"
            for c, n in commits.items()))
    elif records and (from_records := made(list(records), git)):
        said += from_records
    else:
        landed = git.last_change(csv) if csv else None
        said.append(f"numbers last changed in commit {landed[0]} ({landed[1]})" if landed
                    else "numbers not yet committed (built from this working tree)")
    ran, recovered = run_dates(runs), dates_recovered(runs)
    if ran:
        said.append(f"runs dated {span(ran)}" + (f" ({recovered} of these runs' dates recovered from git: not before "
                                                 "their commit, not after their record landed)" if recovered else ""))
    devices = recorded(runs, "device")
    said.append(f"device{'s' if len(devices) > 1 else ''} " + ", ".join(f"{d} ×{n}" for d, n in devices.items())
                if devices else "device cpu (torch's default: the measurement places nothing elsewhere)")
    versions = recorded(runs, "torch")
    if len(versions) > 1:
        said.append("torch " + ", ".join(f"{v} ×{n}" for v, n in versions.items()) + " (its runs mix torch versions)")
    seeds = list(recorded(runs, "seed_ids")) or list(recorded(runs, "seed"))
    counts = sorted({int(n) for n in pd.to_numeric(table.get("seeds", pd.Series(dtype=float)), errors="coerce").dropna()})
    if seeds:
        per_row = f" ({counts[0]}–{counts[-1]} a row: the table's seeds)" if len(counts) > 1 else ""
        many = len(seeds) > 1 or not seeds[0].isdigit()
        said.append(f"seed{'s' if many else ''} {', '.join(seeds)}{per_row}")
    elif counts:
        said.append(f"{counts[0]}–{counts[-1]} seeds a row" if len(counts) > 1 else f"{counts[0]} seeds")
    else:
        said.append("no seeds of its own: a computation or a summary, not a run")
    return f'<p class="meta">Provenance: {esc(" · ".join(said))}</p>'


def figure_html(png: Path, alt: str, folder: Path) -> str:
    """The PNG, embedded; a click opens its SVG where one sits beside it (linked from the report's folder)."""
    data = base64.b64encode(png.read_bytes()).decode()
    image = f'<img src="data:image/png;base64,{data}" alt="{esc(alt)}">'
    svg = png.with_suffix(".svg")
    if not svg.exists():
        return image
    href = Path(os.path.relpath(svg.resolve(), folder.resolve())).as_posix()
    return f'<a href="{esc(href)}" title="the figure as SVG">{image}</a>'


def claims_plot(pngs: list[Path], folder: Path) -> str:
    """The claims plot's figures (attnlab.claims.plot), each under what it shows: the ratios, then the panels of
    the claims that do not come back (its stem ends in plot.MISSED)."""
    parts = []
    for png in pngs:
        if png.stem.endswith(MISSED):
            parts.append('<details class="figure"><summary>Each claim whose number DIFFERS or whose point FAILS, in '
                         "its own units</summary><p class=\"meta\">The spread of our seeds (thin), our mean's interval "
                         "(thick), the chapter's number (a diamond), both words and the seed count.</p>"
                         + figure_html(png, "each claim whose number differs or whose point fails, in its own units",
                                       folder) + "</details>")
        else:
            parts.append('<p class="meta">One row per claim of one number, grouped by table: our mean divided by the '
                         "chapter's value, with its interval, in its number's word; the shaded band is the rule's "
                         "tolerance.</p>" + figure_html(png, "every numeric claim: ours over the chapter's", folder))
    return "".join(parts)


def kinds(ledger: pd.DataFrame, trained: set[str]) -> pd.Series:
    """Each claim's kind: the ledger's where it says (its `kind` column), else trained where its table reads
    training runs (`trained`: those tables, from the workflow) and analytic otherwise."""
    if "kind" in ledger:
        return ledger["kind"].astype(str)
    return ledger["table"].map(lambda t: "trained" if t in trained else "analytic")


def counts_table(ledger: pd.DataFrame, kind: pd.Series) -> str:
    """Each word of the two verdict columns by kind of claim, with the totals."""
    head = "".join(f"<th>{k}</th>" for k in (*KINDS, "all"))
    rows = []
    for column, words in WORDS.items():
        for word in words:
            said = ledger[column] == word
            if said.any():
                counts = [int((said & (kind == k)).sum()) for k in KINDS] + [int(said.sum())]
                rows.append(f"<tr><td>{column} {verdict_mark(column, word)}</td>"
                            + "".join(f'<td class="num">{n}</td>' for n in counts) + "</tr>")
    totals = [int((kind == k).sum()) for k in KINDS] + [len(ledger)]
    rows.append("<tr><th>claims</th>" + "".join(f'<td class="num"><strong>{n}</strong></td>' for n in totals) + "</tr>")
    return f'<table class="counts"><tr><th>word</th>{head}</tr>{"".join(rows)}</table>'


def answer(ledger: pd.DataFrame) -> str:
    """The first screen: did it reproduce? The ledger's summary sentence, a shortened profile's warning, each
    number that DIFFERS and each point that FAILS with ours against the chapter's, and the way to the ledger."""
    tables = dict(zip(ledger["id"], ledger["table"]))
    loose = f"<p>{ledger_line_html(loose_warning(ledger), tables)}</p>" if is_judged_loosely(
        ledger["profile"].iloc[0]) else ""
    lines = [ledger_line_html(line, tables) for line in differing_lines(ledger, bullet="")]
    differing = (f"<p>What does not come back ({len(lines)}):</p><ul>" + "".join(f"<li>{line}</li>" for line in lines)
                 + "</ul>") if lines else "<p>No number DIFFERS and no point FAILS.</p>"
    return (f'<section id="answer"><p class="answer"><strong>{esc(summary_line(ledger))}</strong></p>{loose}'
            f'{differing}<p><a href="#ledger">Every claim, with why its number reads its word: the ledger</a> · '
            '<a href="#words">what each word means</a></p></section>')


def summary(ledger: pd.DataFrame, kind: pd.Series) -> str:
    said = []
    for k in KINDS:
        these = ledger[kind == k]
        points = these[these["point"] != NO_POINT]
        if len(these):
            said.append(f"{k} ({len(these)}): numbers {counted(these['number'], NUMBER_WORDS)}"
                        + (f", points {counted(points['point'], POINT_WORDS)}" if len(points) else ""))
    return (f"<p>The chapter's {len(ledger)} claims by kind, {esc('; '.join(said))}. Analytic claims are computed or "
            "measured once (parameter counts, the averaging matrix, statistics of random rows); trained claims are read "
            "over seeds, of trained runs or of a measurement repeated (the timings), where one printed run of the "
            "chapter's meets our spread.</p>" + counts_table(ledger, kind))


def by_table(claims: pd.DataFrame, titles: dict, aside) -> str:
    """Claims as a list of their tables, each linked to its section, a claim's `aside(claim)` after its name."""
    return "<ul>" + "".join(f'<li><a href="#{esc(t)}">{esc(titles.get(t, t))}</a>: '
                            + ", ".join(f'{esc(c.id.removeprefix(t + "."))}{aside(c)}' for c in these.itertuples())
                            + "</li>" for t, these in claims.groupby("table", sort=False)) + "</ul>"


def reproduced(ledger: pd.DataFrame, kind: pd.Series, titles: dict) -> str:
    """The claims whose number AGREES, by kind and table (a point that does not hold named beside its claim); then,
    apart, the points that hold beside a number that does not agree."""
    loose = ("<p>Trained numbers are judged here against the profile's own published seeds: AGREES says the pipeline "
             "gives what the profile published, not what the chapter printed.</p>"
             if is_judged_loosely(ledger["profile"].iloc[0]) else "")
    out = []
    for k in KINDS:
        these = ledger[(kind == k) & (ledger["number"] == "AGREES")]
        if len(these):
            out.append(f"<p><strong>{k.capitalize()} numbers that agree</strong> ({len(these)}):</p>"
                       + by_table(these, titles, lambda c: f" (point {c.point})" if c.point in ("OPEN", "FAILS") else ""))
    held = ledger[(ledger["number"] != "AGREES") & (ledger["point"] == "HOLDS")]
    if len(held):
        out.append(f"<p><strong>Points that hold where the number does not agree</strong> ({len(held)}):</p>"
                   + by_table(held, titles, lambda c: f" (number {c.number})"))
    return loose + ("".join(out) or "<p>No number agrees and no point holds.</p>")


def rank(claim) -> int:
    """Where a claim comes in what does not come back: a number that DIFFERS or a point that FAILS first, then
    what is OPEN, then what was NOT TESTED."""
    if claim.number == "DIFFERS" or claim.point == "FAILS":
        return 0
    return 2 if claim.number == "NOT TESTED" and claim.point != "OPEN" else 1


def not_reproduced(ledger: pd.DataFrame, hypotheses: pd.DataFrame | None, titles: dict) -> str:
    """One item per claim whose number does not agree or whose point fails or is open (rank's order): ours
    against the chapter's with its seeds, why the number reads its word, the ledger's `reason` where it gives one,
    and the hypotheses tried on it."""
    missed = ledger[(ledger["number"] != "AGREES") | ledger["point"].isin(("FAILS", "OPEN"))]
    if missed.empty:
        return "<p>Every number agrees, and every point the chapter states holds.</p>"
    items = []
    for claim in sorted(missed.itertuples(), key=rank):
        interval = text(claim.interval)
        interval = f", interval {esc(shortened_lists(interval))}" if interval else ""
        seeds = f"{int(claim.seeds)} seed{'s' if int(claim.seeds) != 1 else ''}" if text(claim.seeds) else ""
        words = verdict_mark("number", claim.number) + (f" {verdict_mark('point', claim.point)}"
                                                       if claim.point != NO_POINT else "")
        # the reason sentence kept beside the claim in configs/claims.yaml: shown where the ledger carries it
        reason = text(getattr(claim, "reason", ""))
        reason = f' <span class="reason">{esc(reason)}</span>' if reason else ""
        # the claim by its name in words first, its id small beside its table's link, for whoever looks it up
        name, table = claim_name(claim), f'<a href="#{esc(claim.table)}">{esc(titles.get(claim.table, claim.table))}</a>'
        named = (f'{esc(name)} (<code class="ref">{breakable(claim.id)}</code>, {table})' if name
                 else f"{table}, <code>{breakable(claim.id)}</code>")
        items.append(f'<li>{named} {words}: ours '
                     f'{esc(shortened_lists(text(claim.reproduced)))} ({esc(seeds)}) against the chapter\'s '
                     f'{esc(claim.chapter)}.{reason}<details><summary>why, and what was tried</summary>'
                     f'<span class="small">{sentence_html(shortened_lists(text(claim.why)))}{interval}.'
                     f'{tried(claim.id, hypotheses)}</span></details></li>')
    return f'<ul class="missed">{"".join(items)}</ul>'


def tried(claim_id: str, hypotheses: pd.DataFrame | None) -> str:
    """' Tried: <finding> (<setting>), ...' linking each row of the contradictions table on the claim."""
    if hypotheses is None:
        return ""
    rows = hypotheses[hypotheses["claim"] == claim_id]
    links = [f'<a href="#{esc(row_anchor(claim_id, r.hypothesis_id))}">{esc(r.finding)}</a> ({esc(r.setting)})'
             for r in rows.itertuples()]
    return " Tried: " + "; ".join(links) + "." if links else ""


def words(ledger: pd.DataFrame) -> str:
    """The page's last section: each word the ledger uses in one sentence (claims.rules, through
    render.word_definitions), and what the ledger's columns hold."""
    tables = dict(zip(ledger["id"], ledger["table"]))
    defined = "".join(f"<li>{ledger_line_html(line, tables)}</li>" for line in word_definitions(ledger, bullet=""))
    return (f"<ul>{defined}</ul><p class=\"meta\">The ledger's file, claims.csv (here folded under each claim's why). "
            f"{esc(HOW_JUDGED)}</p>")


def span(values: list[str]) -> str:
    return values[0] if len(values) == 1 or values[0] == values[-1] else f"{values[0]} to {values[-1]}"


FRONT = (("summary", "Summary"), ("reproduced", "What comes back"),
         ("not-reproduced", "What does not come back, or is open"),
         ("choices", "Choices the chapter does not state"), ("easy-hard", "What was easy, and what was hard"),
         ("claims-plot", "Every claim at a glance"),
         ("ledger", "Every claim: the ledger"))
WORDS_TITLE = "What each word means"  # the page's last section (words), after the tables'


def machines(frames: dict[str, pd.DataFrame]) -> list[str]:
    """The machines the tables' numbers were made on, each once: a timing names its CPU with its cores ("AMD EPYC
    (2 cores)"), a run by its model alone; by name where the tables name them (a bare kind, pipeline_time's cost by
    device kind, names no machine)."""
    devices = sorted({re.sub(r" \(\d+ cores\)$", "", d) for df in frames.values() for d in recorded(df, "device")})
    return [d for d in devices if d not in DEVICE_KINDS] or devices


def build(profile: str, ledger: pd.DataFrame, tables: dict, figures: dict, captions: dict,
          claims_figure: list[Path] = (), folder: Path = Path("."), trained: set[str] = frozenset(),
          git: Git | None = None, order: list[str] = (), records: dict | None = None) -> str:
    """The page; `folder`: where it is written, which its links to SVGs are relative to; `trained`: the
    tables that read training runs (a claim's kind where the ledger does not say); `order`: the tables in the
    chapter's order (attnlab.tables.chapter_order, from the workflow; a table it does not name comes last);
    `records`: each measured table's measurement records (what its provenance dates and names the commit of)."""
    git = git or Git()
    place = {t: i for i, t in enumerate(order)}
    ids = sorted(tables, key=lambda t: (place.get(t, len(place)), t))
    frames = {t: pd.read_csv(tables[t], keep_default_na=False, na_values=[""], dtype=dict.fromkeys(PROVENANCE, str))
              for t in ids}
    titles = {t: caption_title(captions.get(t, "")) or t.replace("_", " ") for t in ids}
    hypotheses = frames.get("contradictions")
    kind = kinds(ledger, set(trained))
    ran = sorted(d for df in frames.values() for d in run_dates(df))
    recovered = sum(dates_recovered(df) for df in frames.values())
    devices = machines(frames)
    front = {
        "summary": summary(ledger, kind),
        "reproduced": reproduced(ledger, kind, titles),
        "not-reproduced": not_reproduced(ledger, hypotheses, titles),
        "choices": caption_html(captions["choices"]) if "choices" in captions else "",
        "easy-hard": caption_html(captions["easy_hard"]) if "easy_hard" in captions else "",
        "claims-plot": claims_plot(claims_figure, folder) if claims_figure else "",
        "ledger": '<p class="meta">ours: our mean ± the sd of one run over seeds; number and point: the two verdicts, the '
                  "chapter's number and its point without the number judged apart (<a href=\"#words\">what each word "
                  "means</a>). Folded under the number's word: why it reads it, why the claim does not come back where "
                  "it does not, what the chapter says, the rule, our mean's interval, the seeds and the ledger's "
                  "bookkeeping.</p>"
                  + ledger_table(ledger),
    }
    contents = "".join(f'<li><a href="#{i}">{name}</a></li>' for i, name in FRONT if front[i]) + (
        '<li>The tables<ol>' + "".join(f'<li><a href="#{t}">{esc(titles[t])}</a></li>' for t in ids) + "</ol></li>"
        f'<li><a href="#words">{WORDS_TITLE}</a></li>')
    variant = f", variant {esc(ledger['variant'].iloc[0])}" if "variant" in ledger else ""
    parts = [f"<!doctype html><html lang=en><head><meta charset=utf-8>"
             f'<meta name="viewport" content="width=device-width, initial-scale=1">'
             f"<title>attnlab: {profile} profile</title><style>{CSS}</style></head><body>",
             f"<h1>Self-attention from the plain average: does the chapter reproduce? (attnlab, profile {esc(profile)}"
             f"{variant})</h1>",
             answer(ledger),
             f'<p class="meta">{len(ids)} tables, {esc(seeds_text(ledger))}; '
             f"{esc('runs dated ' + span(ran) if ran else 'no run dated')}"
             f"{esc(' (a run that recorded no dates is dated from git: not before its commit, not after its record landed)') if recovered else ''}"
             f" on {esc(', '.join(devices) or 'cpu')}. "
             f"Every number comes from a run folder under <code>results/{esc(profile)}/runs/</code> (or a measurement's "
             "record) with its composed config, seed and commit; every number in the text is read from the tables, "
             "the ledger or the runs (<code>workflow/report/*.rst</code> are templates).</p>",
             "".join(f'<p class="variant">{ledger_line_html(line, {})}</p>' for line in variant_lines(ledger)),
             f'<section id="summary"><h2>Summary</h2>{front["summary"]}</section>',
             f'<nav id="contents"><h2>Contents</h2><ol>{contents}</ol></nav>']
    for i, name in FRONT[1:]:
        if front[i]:
            parts.append(f'<section id="{i}"><h2>{name}</h2>{front[i]}</section>')
    for t in ids:
        claims = ledger[ledger["table"] == t]
        parts.append(f'<section id="{t}"><h2>{esc(titles[t])} <span class="id">{t}</span></h2>')
        if t in captions:
            parts.append(caption_html(captions[t]))
        if len(claims):
            parts.append(section_claims(claims))
        table = frames[t]
        rows = data_table(t, table, contradiction_anchors(table) if t == "contradictions" else None)
        parts.append(f"<details><summary>the table ({len(table)} rows)</summary>{rows}</details>"
                     if declared(t).place >= PIPELINE_OWN else rows)
        parts.append(provenance_block(t, table, tables[t], git, (records or {}).get(t, ()),
                                      data_links(t, tables[t], folder, profile)))
        if t in figures:
            parts.append(figure_html(figures[t], f"figure {t}", folder))
        parts.append("</section>")
    parts.append(f'<section id="words"><h2>{WORDS_TITLE}</h2>{words(ledger)}</section></body></html>')
    # one line: line breaks mean nothing to HTML here (no <pre>), and a page of embedded figures is
    # for browsers; so no run of lines repeats between profiles' reports or within one
    return re.sub(r"\s*\n\s*", " ", "".join(parts)) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", required=True)
    parser.add_argument("--ledger", required=True, type=Path, help="claims.csv")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--trained", default="", help="the tables that read training runs, comma-separated (a "
                                                          "claim's kind where the ledger has no `kind` column)")
    parser.add_argument("--order", default="", help="the tables in the chapter's order, comma-separated")
    parser.add_argument("inputs", nargs="*", help="table=<csv> figure=<png> caption=<rst> (rendered: attnlab.captions), "
                                                  "named by their stem; claims_figure=<png> (python -m attnlab.claims.plot: the ratios, then "
                                                  "the panels, claims_missed.png); record_<table>=<file>: a measured "
                                                  "table's measurement records")
    args = parser.parse_intermixed_args(argv)
    named = parse_named(args.inputs)
    by_id = {kind: {Path(p).stem: Path(p) for p in named.get(kind, [])} for kind in ("table", "figure", "caption")}
    claims_figure = [Path(p) for p in named.get("claims_figure", [])]
    if len(claims_figure) > 2:
        parser.error("claims_figure= names at most two PNGs: the ratios and the panels")
    page = build(args.profile, pd.read_csv(args.ledger), by_id["table"], by_id["figure"],
                 {t: p.read_text(encoding="utf-8") for t, p in by_id["caption"].items()},
                 claims_figure, args.out.parent,
                 set(filter(None, args.trained.split(","))), order=args.order.split(","),
                 records={name.removeprefix(RECORD): [Path(p) for p in paths] for name, paths in named.items()
                          if name.startswith(RECORD)})
    with atomic_path(args.out) as tmp:
        tmp.write_text(page, encoding="utf-8")


if __name__ == "__main__":
    main()
