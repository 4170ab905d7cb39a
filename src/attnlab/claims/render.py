"""The ledger for people: numbers and rules as text, the summary line, Markdown, and the README's
Results section (the HTML ledger is the reader's report's first section: attnlab.report)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

from attnlab.claims.reference import reference_file
from attnlab.claims.rules import NO_POINT, NUMBER_WORDS, POINT_WORDS, ClaimsError, is_number, is_number_or_list
from attnlab.claims.stats import ALPHA_TEXT, LEVEL_TEXT, POWER_TEXT
from attnlab.data import atomic_path
from attnlab.numbers import show, show_number, show_spread  # noqa: F401 (the ledger's words read them here too)

README_START, README_END = "<!-- results:start -->", "<!-- results:end -->"
LEDGER_COLUMNS = ["id", "chapter", "reproduced", "number", "point", "why", "seeds", "interval", "looks", "plan",
                  "seed_share", "would_decide", "band", "rule", "statement", "note", "reason"]
KINDS = ("trained", "analytic")
# a cell that is one list ([…], its items lists at most one level deep), and the ", " between its items
LIST = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]")
LIST_ITEM = re.compile(r", (?![^\[]*\])")
# what a `reproduced` cell adds where the table prints another summary of the values it reads (evaluate.table_cell_note)
TABLE_CELL_NOTE = re.compile(r" \(over the \w+; the table's [^()]*\)$")


def without_table_note(cell: str) -> str:
    """A `reproduced` cell without its note on the table's own summary: the value the ledger judged."""
    return TABLE_CELL_NOTE.sub("", cell)


# ---------------------------------------------------------------- numbers and rules as text

def show_chapter(chapter) -> str:
    """The chapter's value as printed (every digit it gives)."""
    if is_number(chapter):
        return f"{chapter:,.10g}"
    if is_number_or_list(chapter):
        return "[" + ", ".join(show_chapter(v) for v in chapter) + "]"
    return str(chapter)


def describe_expr(node) -> str:
    if is_number(node):
        return show_number(float(node))
    if "ratio" in node or "difference" in node:
        op = "ratio" if "ratio" in node else "difference"
        a, b = (describe_expr(child) for child in node[op])
        text = f"{a} / {b}" if op == "ratio" else f"{a} − {b}"
    elif "values" in node:
        text = "[" + ", ".join(describe_expr(child) for child in node["values"]) + "]"
    else:
        where = ",".join(f"{k}={v}" for k, v in (node.get("where") or {}).items())
        if "lead" in node:
            cols = f"lead of {node['lead']} over its row"
        else:
            cols = node.get("column") or "|".join(node["columns"])
        text = (f"{node['table']}." if "table" in node else "") + cols + (f"[{where}]" if where else "")
    if "reduce" in node:
        last = f" of last {node['last']}" if "last" in node else ""
        text = f"{node['reduce']}{last}({text}" + (f" vs {node['x']})" if "x" in node else ")")
    return text


def describe_check(check: dict) -> str:
    kind = check["kind"]
    target = f" to {describe_expr(check['to'])}" if "to" in check else ""
    if kind == "exact":
        return "exact" + target + (f" ({check['decimals']} decimals)" if "decimals" in check else "")
    if kind == "relative":
        return f"within {check['tolerance'] * 100:g} %{target}"
    if kind == "absolute":
        return f"within ±{show_number(check['tolerance'])}{target}"
    if kind in ("above", "below"):
        factor = f"{check['factor']:g} × " if "factor" in check else ""
        return f"{'>' if kind == 'above' else '<'} {factor}{describe_expr(check['than'])}"
    if kind == "between":
        return f"between {describe_expr(check['low'])} and {describe_expr(check['high'])}"
    return kind + (f", each step by {check['by'] * 100:g} % or more" if "by" in check else "")


def describe_claim(claim: dict) -> str:
    text = describe_check(claim["rule"])
    conclusion = claim.get("conclusion")
    if conclusion:
        said = conclusion.get("says") or (
            (f"{describe_expr(conclusion['value'])} " if "value" in conclusion else "") + describe_check(conclusion))
        text += f"; conclusion: {said}"
    if claim.get("necessary"):
        text += "; conclusion: it holds in every model (the chapter argues it must)"
    return text


# ---------------------------------------------------------------- the ledger

def is_judged_loosely(profile: str) -> bool:
    return profile != "full"


def summary_line(df: pd.DataFrame) -> str:
    """The answer in one sentence: how many of the chapter's numbers agree, differ, are open or not tested, and
    how many of its points hold, fail or are open (the two columns apart; no word combines them)."""
    profile = df["profile"].iloc[0]
    against = ("the chapter, the trained ones against the profile's own published seeds" if is_judged_loosely(profile)
               else "the chapter")
    points = df[df["point"] != NO_POINT]
    return (f"Of the chapter's {len(df)} numbers ({profile} profile, {seeds_text(df)}), judged against {against}: "
            + counted(df["number"], NUMBER_WORDS) + (f"; of its {len(points)} points: "
                                                     + counted(points["point"], POINT_WORDS) if len(points) else "")
            + ". " + chance_text(df)).strip()


def chance_text(df: pd.DataFrame) -> str:
    """The DIFFERS that chance alone would give (multiplicity, said once): each number's test has its own α."""
    tested = df[df["chance"].astype(float) > 0]
    if not len(tested) or is_judged_loosely(df["profile"].iloc[0]):  # a shortened profile judges no chapter number
        return ""
    return (f"Were every chapter number a run of ours, about {tested['chance'].astype(float).sum():.1f} of the "
            f"{len(tested)} judged against a spread would read DIFFERS by chance.")


def differing_lines(df: pd.DataFrame, bullet: str = "- ") -> list[str]:
    """Each number that DIFFERS and each point that FAILS, with the chapter's value beside ours. In a shortened
    profile a trained number differs from the profile's own published seeds, and its points, judged on short runs,
    say nothing of the chapter: they are not listed."""
    own = is_judged_loosely(df["profile"].iloc[0])
    out = []
    for row in df.itertuples():
        trained_here = own and row.kind == "trained"
        differs, fails = row.number == "DIFFERS", row.point == "FAILS" and not trained_here
        if not (differs or fails):
            continue
        said = ", ".join(w for w, on in (("number DIFFERS", differs), ("point FAILS", fails)) if on)
        against = ("moved from the profile's published seeds" if trained_here
                   else f"against the chapter's {row.chapter}")
        out.append(f"{bullet}`{row.id}` ({said}): ours {shortened_lists(str(row.reproduced))} {against}")
    return out


def shortened_lists(cell: str, keep: int = 3) -> str:
    """`cell` with every outermost [..] of more than keep + 1 elements cut to its first `keep`: a
    one-line summary stays one line (the ledger below lists every value)."""
    def cut(found: re.Match) -> str:
        items = LIST_ITEM.split(found[0][1:-1])
        return found[0] if len(items) <= keep + 1 else f"[{', '.join(items[:keep])}, … ({len(items)} values)]"
    return LIST.sub(cut, cell)


def counted(column: pd.Series, order, words: dict | None = None) -> str:
    """'3 AGREES, 1 DIFFERS': each value's count, in `order`, with its words where given."""
    counts = column.value_counts()
    return ", ".join(f"{int(counts[v])} {v}" + (f" ({words[v]})" if words else "") for v in order
                     if counts.get(v, 0))


def word_definitions(df: pd.DataFrame, bullet: str = "- ") -> list[str]:
    """The words this ledger uses, each in one sentence (rules.NUMBER_WORDS, rules.POINT_WORDS), as Markdown lines."""
    used = set(df["number"])
    points = set(df["point"])
    return ([f"{bullet}number **{word}**: {meaning}" for word, meaning in NUMBER_WORDS.items() if word in used]
            + [f"{bullet}point **{word}**: {meaning}" for word, meaning in POINT_WORDS.items() if word in points])


def seeds_text(df: pd.DataFrame) -> str:
    """'1–10 seeds per claim': the seeds the claims read (1 for an analytic table or a single seed)."""
    counts = sorted({int(n) for n in df["seeds"]} - {0})
    if not counts:
        return "no seeds"
    span = f"{counts[0]}–{counts[-1]}" if len(counts) > 1 else f"{counts[0]}"
    return f"{span} seed{'s' if counts[-1] > 1 else ''} per claim"


HOW_JUDGED = (f"Columns: reproduced is our mean ± the sd of one run over seeds; number and point the two verdicts, "
              f"why the number's reason in one sentence (the point's is the note's first part); interval the mean's "
              f"{LEVEL_TEXT} interval (at 1 − {ALPHA_TEXT}/K where a row's seeds were added after K readings of the "
              "ledger; inside its range for an accuracy or a share); seeds the smallest seed set read; plan "
              "'after its seeds' where a row's seed plan was written after its seeds were read (judged at the looks "
              f"actually seen, every seed counted); would_decide the seeds per row that would decide an OPEN claim; band, "
              f"for a number the chapter printed from one run, the chapter values its test accepts and the shift from "
              f"our mean it would catch {POWER_TEXT} of the time.")


def loose_warning(df: pd.DataFrame) -> str:
    """What a shortened profile's ledger says first: its runs are not the chapter's, and its trained numbers are
    judged against its own published seeds (attnlab.claims.reference)."""
    profile = df["profile"].iloc[0]
    return (f"Profile **{profile}** is a pipeline check with short runs: its runs are not the chapter's, so its "
            f"trained numbers are judged against the profile's own published seeds ({reference_file(profile)}), "
            "never against the chapter, and the chapter's points are judged on these short runs: a point that "
            "FAILS here says nothing of the chapter.")


def beside_published(df: pd.DataFrame, published: pd.DataFrame, label: str) -> pd.DataFrame:
    """A variant's ledger: which variant it judges, and each claim's published words."""
    words = published.set_index("id")
    return df.assign(variant=label, published_number=df["id"].map(words["number"]).fillna(""),
                     published_point=df["id"].map(words["point"]).fillna(""))


def variant_lines(df: pd.DataFrame) -> list[str]:
    """What a variant's ledger says first: the variant, and the claims whose words it changes."""
    if "variant" not in df:
        return []
    changed = df[(df["published_number"] != df["number"]) | (df["published_point"] != df["point"])]
    moves = "; ".join(f"{r.id}: {r.published_number} / {r.published_point} → {r.number} / {r.point}"
                      for r in changed.itertuples())
    return [f"Variant **{df['variant'].iloc[0]}**: judged on the runs it changes and the published runs elsewhere.",
            f"Words that differ from the published ledger ({len(changed)}): {moves}." if len(changed)
            else "No word differs from the published ledger."]


def ledger_markdown(df: pd.DataFrame) -> str:
    profile = df["profile"].iloc[0]
    lines = [f"# Claims ledger — profile `{profile}`", ""]
    lines += [f"> {line}" for line in variant_lines(df)] + ([""] if "variant" in df else [])
    if is_judged_loosely(profile):
        lines += [f"> {loose_warning(df)}", ""]
    lines += [f"**{summary_line(df)}**", ""]
    differing = differing_lines(df)
    if differing:
        lines += ["What does not come back:", "", *differing, ""]
    cells = df[[c for c in LEDGER_COLUMNS if c in df]].astype(str).apply(lambda col: col.str.replace("|", "\\|", regex=False))
    lines += [cells.to_markdown(index=False, disable_numparse=True), "", "What each word means:", "",
              *word_definitions(df), "", HOW_JUDGED]
    return "\n".join(lines) + "\n"


def write_ledger(df: pd.DataFrame, csv_path, md_path) -> None:
    with atomic_path(Path(csv_path)) as tmp:
        df.to_csv(tmp, index=False)
    with atomic_path(Path(md_path)) as tmp:
        tmp.write_text(ledger_markdown(df), encoding="utf-8")


# ---------------------------------------------------------------- README results section

def readme_section(df: pd.DataFrame, readme_dir: Path, ledger_path: Path, links: dict[str, list[str]]) -> str:
    """The README's Results: the summary line, the chapter's headline numbers against ours, what the
    profile's training cost (the pipeline_time table's total), and links to everything else."""
    def link(path, text=None) -> str:
        target = Path(os.path.relpath(Path(path).resolve(), readme_dir.resolve())).as_posix()
        return f"[{text or Path(path).stem}]({target})"

    ledger_md = Path(ledger_path).with_suffix(".md")
    headline = df[df["headline"].astype(str) == "True"] if "headline" in df else df
    compact = headline[["id", "chapter", "reproduced", "number", "point"]].astype(str).apply(
        lambda col: col.str.replace("|", "\\|", regex=False))
    lines = [README_START,
             "<!-- generated by `python -m attnlab.claims readme` (rule readme_results); do not edit by hand -->",
             "", f"**{summary_line(df)}**", ""]
    differing = differing_lines(df)
    if differing:
        lines += ["What does not come back:", "", *differing, ""]
    lines.append(" · ".join([*(link(p, "the report: every table and figure") for p in links.get("report", [])),
                             link(ledger_md, "the whole ledger")]) + ".")
    lines += ["", "The chapter's headline numbers (ours: mean ± the sd of one run over seeds):", "",
              compact.to_markdown(index=False, disable_numparse=True), ""]
    for path in links.get("time", []):
        cost = pd.read_csv(path)
        per_device = cost[cost["family"] != "all"].groupby("device")[["runs", "train_hours"]].sum()
        lines += ["Training cost of this profile, from each run's own clock: " + "; ".join(
            f"{int(r.runs)} runs on {device}, {r.train_hours:.2f} h" for device, r in per_device.iterrows())
            + f" (per family: {link(path, 'pipeline_time')}). " + all_cpu_text(cost), ""]
    for path in links.get("devices", []):
        lines += [cross_device_text(pd.read_csv(path), link(Path(path).with_suffix(".md"), "cross_device")), ""]
    if links.get("table"):
        lines += ["Tables: " + " · ".join(link(p) for p in sorted(links["table"])), ""]
    if links.get("figure"):
        lines += ["Figures: " + " · ".join(link(p) for p in sorted(links["figure"])), ""]
    lines += ["What each word means:", "", *word_definitions(df), "", README_END]
    return "\n".join(lines)


def all_cpu_hours(cost: pd.DataFrame) -> tuple[float, int, list[str]]:
    """(hours, steps, families left out): every step the profile trained (each family's, on every device), at that
    family's mean ms per step on a CPU, the `pipeline_time` table's cpu row; a family with no CPU row is left out."""
    families = cost[cost["family"] != "all"]
    hours, steps, left_out = 0.0, 0, []
    for family, rows in families.groupby("family", sort=False):
        cpu = rows[rows["device"].astype(str) == "cpu"]
        if cpu.empty or pd.isna(cpu["ms_per_step"].iloc[0]):
            left_out.append(str(family))
            continue
        family_steps = int(rows["steps"].sum())
        hours += family_steps * float(cpu["ms_per_step"].iloc[0]) / 3.6e6
        steps += family_steps
    return hours, steps, left_out


def all_cpu_text(cost: pd.DataFrame) -> str:
    """What the profile's training costs on a CPU alone: the run clocks count runs on a GPU at their GPU speed, so
    their sum is not what a CPU rerun takes."""
    hours, steps, left_out = all_cpu_hours(cost)
    if not steps:
        return "No family has a CPU row, so what a CPU rerun takes is not estimated."
    said = (f"Trained again all on a CPU like ours, one run per process, its {steps:,} steps would take about "
            f"{hours:,.0f} h at each family's mean CPU ms per step (pipeline_time's cpu rows)")
    return said + (f", without {', '.join(left_out)} (no CPU row)" if left_out else "") + (
        ": the all-CPU hours, not the sum of the run clocks.")


def cross_device_text(twins: pd.DataFrame, table_link: str) -> str:
    """How runs published from a GPU compare with the same seed retrained on a CPU, as the cross_device table says:
    how many of its twins agree to float tolerance, and the others with how far apart they are."""
    from attnlab.claims.rules import TWIN_NOT_RUN
    ran = twins[twins["verdict"].astype(str) != TWIN_NOT_RUN]
    if twins.empty:
        return f"No published run of this profile was trained on a GPU ({table_link})."
    if ran.empty:
        return (f"Runs published from a GPU: none has a CPU twin trained yet ({table_link}), so whether a rerun on a "
                "CPU gives them back is not checked.")
    agree = ran[ran["verdict"].astype(str).str.startswith("agree")]
    tolerance = show_number(float(ran["float_tolerance"].max()))
    said = (f"Runs published from a GPU against the same seed retrained on a CPU ({table_link}): {len(agree)} of the "
            f"{len(ran)} twins trained agree to float tolerance (relative {tolerance} in every statistic the ledger "
            "reads)")
    apart = ran.drop(agree.index)
    if apart.empty:
        return said + "."
    each = "; ".join(f"{r.run} seed {r.seed}, by {show_number(float(r.largest_rel_diff))} in {r.largest_in}, its "
                     f"held-out result {show_number(float(r.in_row_sds))} seed sd of its row from the GPU run's"
                     for r in apart.itertuples())
    return said + f"; {len(apart)} differ beyond it ({each})."


def splice_readme(readme: Path, section: str) -> None:
    """Replace the text between the results markers; fails before writing anything if they are absent."""
    text = readme.read_text(encoding="utf-8")
    starts, ends = text.count(README_START), text.count(README_END)
    if starts != 1 or ends != 1 or text.index(README_START) > text.index(README_END):
        raise ClaimsError(f"{readme}: needs exactly one {README_START!r} followed by one {README_END!r} "
                          f"(found {starts} and {ends}); add them where the Results section goes")
    before, rest = text.split(README_START)
    after = rest.split(README_END, 1)[1]
    with atomic_path(readme) as tmp:
        tmp.write_text(before + section + after, encoding="utf-8")
