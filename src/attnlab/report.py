"""The reader's report: one offline HTML file per profile that opens on the verdict.

    python -m attnlab.report --profile quick --ledger results/quick/claims.csv --out results/quick/report.html \
        claims_figure=figures/quick/claims.png table=results/quick/tables/ladder.csv \
        figure=figures/quick/ladder.png caption=workflow/report/ladder.rst ...

First the ledger's summary, what did not reproduce, the claims plot (every numeric claim as ours ÷
chapter: attnlab.claims.plot) and every claim (linked to its table's section), then one section per
table in TABLES.md's order: its caption, the claims it carries (the chapter's value beside ours,
the verdict coloured), the table itself, where its numbers were made (commits, devices, seeds, as
the table records them) and its figure inline. No JavaScript; figures are the pipeline's PNGs,
embedded, each linking to its SVG beside it. The page never scrolls sideways: a table too wide for
the window scrolls in its own box, and no number or verdict is broken across lines. (Snakemake's
own report, with the rule graph and runtimes, sits beside it as snakemake_report.html.)
"""

from __future__ import annotations

import argparse
import base64
import html
import os
import re
from pathlib import Path

import pandas as pd

from attnlab.claims.render import seeds_text, summary_line, variant_lines
from attnlab.claims.rules import VERDICTS
from attnlab.data import atomic_path
from attnlab.style import VERDICT_COLOURS, VERDICT_MARKS
from attnlab.tables import chapter_place, for_people, parse_named

NOT_REPRODUCED = ("CONTRADICTED", "INCONCLUSIVE")
PROVENANCE = ("commit", "device", "seed_ids")  # read as text: a commit of digits only is not a number
CSS = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 1180px; margin: 0 auto; padding: 1em 1.5em; color: #1f2328; }
h1 { font-size: 1.6em; margin-bottom: .2em; } h2 { margin-top: 2.2em; border-bottom: 1px solid #d0d7de; }
.meta, .shared { color: #57606a; font-size: .9em; }
.variant { background: #fff8c5; border-left: 4px solid #bf8700; padding: .4em .7em; margin: .3em 0; }
table { border-collapse: collapse; margin: .6em 0; font-size: .85em; }
th, td { border: 1px solid #d0d7de; padding: .25em .5em; vertical-align: top; text-align: left; }
th { background: #f6f8fa; }
table.ledger { width: 100%; }
ul.missed li { margin: .3em 0; }
.scroll { overflow-x: auto; max-width: 100%; }
.verdict { font-weight: 600; white-space: nowrap; }
.num { white-space: nowrap; }
td > table.items { margin: 0; font-size: 1em; }
table.items td { border: 0; padding: 0; } table.items tr + tr td { border-top: 1px solid #eaeef2; }
img { max-width: 100%; height: auto; border: 1px solid #eaeef2; }
nav ol { columns: 3; font-size: .9em; }
code { background: #f6f8fa; padding: 0 .2em; }
"""


# a cell that holds one number (the tables' and the ledger's: 1,115,394 · 60.1 ± 0.4814 · 1.19e-07 · 10/10)
NUMBER = re.compile(r"[-−+]?\d[\d,]*(\.\d+)?(e[-+]?\d+)?( ± \d[\d,]*(\.\d+)?(e[-+]?\d+)?|/\d+)?")
# a number with a hyphen (-0.13, 4.35e-05), where a browser would break a line inside a list or a sentence
HYPHENATED = re.compile(r"-\d[\d,]*(\.\d+)?(e-?\d+)?|\d[\d,]*(\.\d+)?e-\d+")
# a cell that is one list ([…], its items lists at most one level deep), and the ", " between its items
LIST = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]")
LIST_ITEM = re.compile(r", (?![^\[]*\])")


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


def cell_html(cell, nested: bool = True) -> str:
    """A table cell; no number in it is broken across lines (its box scrolls sideways instead): a
    cell of one number stays on one line, a sentence wraps only between its numbers, and a list is a
    small table of its items, one a row (`nested`: whether a list inside a list is split too)."""
    items = list_items(text(cell)) if nested else []
    if items:
        # rows apart by a space: the cell's text reads as items, not as one long number
        rows = " ".join(f"<tr>{cell_html(item, nested=False)}</tr>" for item in items)
        return f'<td><table class="items">{rows}</table></td>'
    if NUMBER.fullmatch(text(cell)):
        return f'<td class="num">{esc(cell)}</td>'
    return "<td>" + HYPHENATED.sub(r'<span class="num">\g<0></span>', esc(cell)) + "</td>"


def breakable(name: str) -> str:
    """A claim id (`position_extrapolation.learned_wins_at_64`) that may wrap after its dots and
    underscores, never inside a word or number."""
    return re.sub(r"([._])", r"\1<wbr>", esc(name))


def verdict_mark(verdict: str) -> str:
    return (f'<span class="verdict" style="color:{VERDICT_COLOURS.get(verdict, "#1f2328")}">'
            f'{VERDICT_MARKS.get(verdict, "")} {esc(verdict)}</span>')


def verdict_cell(verdict: str) -> str:
    return f'<td class="verdict">{verdict_mark(verdict)}</td>'


def row_anchor(claim_id: str, hypothesis_id: str) -> str:
    """The id of a contradictions row: what the list of what did not reproduce links to."""
    return f"tried-{claim_id}-{hypothesis_id}"


def tried(claim_id: str, hypotheses: pd.DataFrame | None) -> str:
    """', tried: <finding> (<setting>), ...' linking each row of the contradictions table on the claim."""
    if hypotheses is None:
        return ""
    rows = hypotheses[hypotheses["claim"] == claim_id]
    links = [f'<a href="#{esc(row_anchor(claim_id, r.hypothesis_id))}">{esc(r.finding)}</a> ({esc(r.setting)})'
             for r in rows.itertuples()]
    return "; tried: " + ", ".join(links) if links else ""


def shortened_lists(cell: str, keep: int = 3) -> str:
    """`cell` with every outermost [..] of more than keep + 1 elements cut to its first `keep`: a
    one-line summary stays one line (the ledger below lists every value)."""
    def cut(found: re.Match) -> str:
        items = LIST_ITEM.split(found[0][1:-1])
        return found[0] if len(items) <= keep + 1 else f"[{', '.join(items[:keep])}, … ({len(items)} values)]"
    return LIST.sub(cut, cell)


def not_reproduced(ledger: pd.DataFrame, hypotheses: pd.DataFrame | None = None) -> str:
    """One line per claim the runs contradict or leave undecided: ours against the chapter's, why, and the
    hypotheses tried on it (rows of the contradictions table)."""
    missed = ledger[ledger["verdict"].isin(NOT_REPRODUCED)]
    if missed.empty:
        return "<p>Every claim is reproduced (MATCH or CONCLUSION HOLDS).</p>"
    items = []
    for _, claim in missed.sort_values("verdict", key=lambda v: v.map(NOT_REPRODUCED.index), kind="stable").iterrows():
        interval = text(claim["interval"])
        interval = f" (95 % interval {esc(shortened_lists(interval))})" if interval else ""
        # the ledger's note ends with what was tried; here those are links to the rows
        why = shortened_lists(re.split(r"(?:^|; )tried: ", text(claim["note"]))[0] or text(claim["margin"]))
        items.append(f'<li><a href="#{esc(claim["table"])}">{esc(claim["id"])}</a> {verdict_mark(claim["verdict"])}: '
                     f'ours {esc(shortened_lists(text(claim["reproduced"])))}{interval} against the chapter\'s '
                     f'{esc(claim["chapter"])}; '
                     f'{esc(why)}{tried(claim["id"], hypotheses)}.</li>')
    return f'<h3>What did not reproduce</h3><ul class="missed">{"".join(items)}</ul>'


def caption_html(rst: str) -> str:
    """The caption's reStructuredText as plain paragraphs: ``code``, **strong** and *emphasis*, nothing more."""
    paragraphs = [" ".join(p.split()) for p in rst.split("\n\n") if p.strip()]
    out = []
    for p in paragraphs:
        # odd pieces are ``code``, taken as written: a star inside (``gap_*``) is not emphasis
        pieces = re.split(r"``(.+?)``", esc(p))
        out.append("<p>" + "".join(f"<code>{piece}</code>" if i % 2 else emphasis_html(piece)
                                   for i, piece in enumerate(pieces)) + "</p>")
    return "\n".join(out)


def emphasis_html(text: str) -> str:
    text = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)  # before *emphasis*, which would take its stars
    return re.sub(r"\*(.+?)\*", r"<em>\1</em>", text)


def ledger_table(ledger: pd.DataFrame, columns: tuple[str, ...], link: bool) -> str:
    widths = {"id": "12%", "statement": "20%", "chapter": "8%", "reproduced": "9%", "interval": "9%", "rule": "12%",
              "verdict": "10%", "margin": "7%", "note": "13%"}
    head = "".join(f'<th style="width:{widths.get(c, "auto")}">{c}</th>' for c in columns)
    rows = []
    for _, claim in ledger.iterrows():
        cells = []
        for c in columns:
            if c == "verdict":
                cells.append(verdict_cell(claim[c]))
            elif c == "id":
                name = breakable(claim[c])
                cells.append(f'<td><a href="#{esc(claim["table"])}">{name}</a></td>' if link else f"<td>{name}</td>")
            else:
                cells.append(cell_html(claim[c]))
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return f'<div class="scroll"><table class="ledger"><tr>{head}</tr>{"".join(rows)}</table></div>'


def data_table(table: pd.DataFrame, row_ids: list[str] | None = None) -> str:
    shown, shared = for_people(table)
    head = "".join(f"<th>{esc(c)}</th>" for c in shown.columns)
    ids = [f' id="{esc(i)}"' for i in row_ids] if row_ids else [""] * len(shown)
    rows = "".join(f"<tr{i}>{''.join(cell_html(c) for c in row)}</tr>"
                   for i, row in zip(ids, shown.itertuples(index=False)))
    note = f'<p class="shared">{esc(" · ".join(shared))} (config hashes and commits per row: the CSV)</p>' if shared else ""
    return f'<div class="scroll"><table><tr>{head}</tr>{rows}</table></div>{note}'


def provenance(table: pd.DataFrame) -> str:
    """Where a section's numbers were made, as its table records them (tables.provenance): the commits,
    devices and seeds of its runs; what the table does not record is named as not recorded, never
    guessed (no run records its date)."""
    def recorded(column: str, split: bool = False) -> list[str]:
        if column not in table:
            return []
        values = [text(v) for v in table[column]]
        parts = [p.strip() for v in values for p in (v.split(",") if split else [v])]
        return list(dict.fromkeys(p for p in parts if p))

    said, missing = [], []
    for name, values in (("commit", recorded("commit")), ("device", recorded("device", split=True)),
                         ("seed", recorded("seed_ids") or recorded("seed"))):
        if not values:
            missing.append(name)
            continue
        many = len(values) > 1 or name == "seed" and not values[0].isdigit()  # '0–2': several in one value
        said.append(f"{name}{'s' if many else ''} {', '.join(values)}")
    missing.append("date")
    return f'<p class="meta">Provenance: {esc(" · ".join([*said, "not recorded: " + ", ".join(missing)]))}</p>'


def figure_html(png: Path, alt: str, folder: Path) -> str:
    """The PNG, embedded; a click opens its SVG where one sits beside it (linked from the report's folder)."""
    data = base64.b64encode(png.read_bytes()).decode()
    image = f'<img src="data:image/png;base64,{data}" alt="{esc(alt)}">'
    svg = png.with_suffix(".svg")
    if not svg.exists():
        return image
    href = Path(os.path.relpath(svg.resolve(), folder.resolve())).as_posix()
    return f'<a href="{esc(href)}" title="the figure as SVG">{image}</a>'


def verdict_definitions() -> str:
    """Each verdict, marked as in the tables, with its one sentence (rules.VERDICTS)."""
    return ('<ul class="meta">' + "".join(f"<li>{verdict_mark(v)}: {esc(meaning)}</li>" for v, meaning in VERDICTS.items())
            + "</ul>")


def claims_plot(png: Path, folder: Path) -> str:
    return ("<h3>Every numeric claim, ours over the chapter's</h3><p class=\"meta\">One row per claim, grouped by table: "
            "our mean divided by the chapter's value, with its 95 % interval; the shaded band is the rule's "
            "tolerance. Claims that are not one number (words, lists) are left out; the subtitle counts them.</p>"
            + figure_html(png, "every numeric claim: ours over the chapter's", folder))


def build(profile: str, ledger: pd.DataFrame, tables: dict, figures: dict, captions: dict,
          claims_figure: Path | None = None, folder: Path = Path(".")) -> str:
    """The page; `folder`: where it is written, which its links to SVGs are relative to."""
    ids = sorted(tables, key=lambda t: (chapter_place(t), t))
    hypotheses = pd.read_csv(tables["contradictions"]) if "contradictions" in tables else None
    parts = [f"<!doctype html><html lang=en><head><meta charset=utf-8><title>attnlab: {profile} profile</title>"
             f"<style>{CSS}</style></head><body>",
             f"<h1>Does the chapter reproduce? attnlab, profile {esc(profile)}</h1>",
             f'<p class="meta">{len(ids)} tables, {esc(seeds_text(ledger))}. '
             "Every number comes from a run folder under <code>results/{p}/runs/</code> with its composed config, "
             "seed and commit. A number the chapter printed is one run of its code, judged against the spread of "
             "one run of ours; a conclusion, bound or ordering on our mean's interval; an outcome per seed (which "
             "weight is largest) on the share of seeds in which it holds.</p>".replace("{p}", esc(profile)),
             verdict_definitions(),
             "".join(f'<p class="variant">{esc(line).replace("**", "")}</p>' for line in variant_lines(ledger)),
             f'<section id="ledger"><h2>The verdict</h2><p><strong>{esc(summary_line(ledger))}</strong></p>',
             not_reproduced(ledger, hypotheses),
             claims_plot(claims_figure, folder) if claims_figure else "",
             "<h3>Every claim</h3><p class=\"meta\">reproduced: our mean ± sd over seeds; interval: the mean's 95 % "
             "interval; margin: the mean's distance from the chapter in tolerances (tol), ± its interval, or how far "
             "it clears or misses a bound; rule: the check that makes a MATCH, and the chapter's point without its "
             "number (conclusion).</p>",
             ledger_table(ledger, ("id", "statement", "chapter", "reproduced", "interval", "rule", "verdict", "margin",
                                   "note"), link=True),
             "</section>",
             "<nav><h2>Tables</h2><ol>" + "".join(f'<li><a href="#{t}">{t}</a></li>' for t in ids) + "</ol></nav>"]
    for t in ids:
        claims = ledger[ledger["table"] == t]
        parts.append(f'<section id="{t}"><h2>{t}</h2>')
        if t in captions:
            parts.append(caption_html(captions[t]))
        if len(claims):
            parts.append(ledger_table(claims, ("id", "statement", "chapter", "reproduced", "verdict"), link=False))
        table = pd.read_csv(tables[t], keep_default_na=False, na_values=[""], dtype=dict.fromkeys(PROVENANCE, str))
        parts.append(data_table(table, [row_anchor(r.claim, r.hypothesis_id) for r in table.itertuples()]
                                if t == "contradictions" else None))
        parts.append(provenance(table))
        csv = Path(os.path.relpath(tables[t], folder)).as_posix()
        parts.append(f'<p class="meta">Data: <a href="{esc(csv)}">{t}.csv</a> · <a href="{esc(csv[:-4])}.md">{t}.md</a>'
                     f" · rebuild it (and only what it needs): <code>.venv/bin/snakemake --cores 2 "
                     f"table_{t} --config profile={esc(profile)}</code></p>")
        if t in figures:
            parts.append(figure_html(figures[t], f"figure {t}", folder))
        parts.append("</section>")
    parts.append("</body></html>")
    # one line: line breaks mean nothing to HTML here (no <pre>), and a page of embedded figures is
    # for browsers; so no run of lines repeats between profiles' reports or within one
    return re.sub(r"\s*\n\s*", " ", "".join(parts)) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", required=True)
    parser.add_argument("--ledger", required=True, type=Path, help="claims.csv")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("inputs", nargs="*", help="table=<csv> figure=<png> caption=<rst>, named by their stem; "
                                                  "claims_figure=<png> (python -m attnlab.claims.plot)")
    args = parser.parse_intermixed_args(argv)
    named = parse_named(args.inputs)
    by_id = {kind: {Path(p).stem: Path(p) for p in named.get(kind, [])} for kind in ("table", "figure", "caption")}
    claims_figure = [Path(p) for p in named.get("claims_figure", [])]
    if len(claims_figure) > 1:
        parser.error("claims_figure= names one PNG")
    page = build(args.profile, pd.read_csv(args.ledger), by_id["table"], by_id["figure"],
                 {t: p.read_text(encoding="utf-8") for t, p in by_id["caption"].items()},
                 claims_figure[0] if claims_figure else None, args.out.parent)
    with atomic_path(args.out) as tmp:
        tmp.write_text(page, encoding="utf-8")


if __name__ == "__main__":
    main()
