"""The ledger for people: numbers and rules as text, the summary line, Markdown, and the README's
Results section (the HTML ledger is the reader's report's first section: attnlab.report)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from attnlab.claims.reference import reference_file
from attnlab.claims.rules import (CONCLUSION_VERDICTS, NO_CONCLUSION, OVERALL_RULE, REGRESSION_VERDICTS, VERDICTS,
                                  ClaimsError, is_number, is_number_or_list)
from attnlab.claims.stats import ALPHA_TEXT, LEVEL_TEXT, POWER_TEXT
from attnlab.data import atomic_path
from attnlab.numbers import show, show_number, show_spread  # noqa: F401 (the ledger's words read them here too)

README_START, README_END = "<!-- results:start -->", "<!-- results:end -->"
LEDGER_COLUMNS = ["id", "kind", "table", "statement", "chapter", "reproduced", "interval", "seeds", "looks",
                  "seed_share", "rule", "verdict", "number", "conclusion", "margin", "band", "would_decide", "reason", "note"]
# what each number verdict says, in the summary's words
NUMBER_WORDS = {"MATCH": "agree to their tolerance", "CONSISTENT": "agree as well as one run can show",
                "UNRESOLVED": "cannot be resolved", "CONTRADICTED": "fail", "INCONCLUSIVE": "need more seeds",
                "NOT JUDGED": "not judged", "NOT MEASURABLE": "not measurable here", "MISSING": "missing",
                "SAME AS PUBLISHED": "as the profile published them", "MOVED": "moved from the profile's reference"}
REGRESSION_ORDER = [v for v in REGRESSION_VERDICTS.values() if v != "NOT JUDGED"]  # a shortened profile's numbers
KINDS = ("trained", "analytic")
CONCLUSION_ORDER = [*dict.fromkeys(CONCLUSION_VERDICTS.values()), "NOT MEASURABLE", "MISSING", NO_CONCLUSION]
CONCLUSION_WORDS = ("HOLDS or FAILS on our mean's interval (or on most of our seeds), is INCONCLUSIVE where more seeds "
                    "could decide it, PLAUSIBLE where the outcome it names is a minority outcome of ours (a plausible "
                    "draw), or NOT JUDGED where our seeds give it no spread")  # read over seeds (trained runs, seeded measurements), or computed / measured once


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
    """The counts of each verdict, trained and analytic claims apart; for trained claims, the numbers' verdicts and
    the conclusions' apart too (a conclusion that holds never hides a number that fails)."""
    profile = df["profile"].iloc[0]
    label = f"profile {profile}, {seeds_text(df)}"
    if is_judged_loosely(profile):
        label += f"; {profile} numbers are not judged against the chapter" + (
            " but against its own reference" if df["number"].isin(REGRESSION_ORDER).any() else "")
    parts = []
    for kind in KINDS:
        these = df[df["kind"] == kind] if "kind" in df else df.iloc[:0]
        if len(these):
            parts.append(f"{len(these)} {kind} — " + counted(these["verdict"], VERDICTS))
            if kind == "trained" and "number" in these:
                parts[-1] += ("; their numbers: " + counted(these["number"], NUMBER_WORDS, NUMBER_WORDS)
                              + "; their conclusions: " + counted(these["conclusion"], CONCLUSION_ORDER))
    return f"claims ({label}): {len(df)}; " + "; ".join(parts)


def counted(column: pd.Series, order, words: dict | None = None) -> str:
    """'3 MATCH, 1 CONTRADICTED': each value's count, in `order`, with its words where given."""
    counts = column.value_counts()
    return ", ".join(f"{int(counts[v])} {v}" + (f" ({words[v]})" if words else "") for v in order
                     if counts.get(v, 0))


def verdict_definitions(bullet: str = "- ") -> list[str]:
    """Each verdict in one sentence (rules.VERDICTS), the conclusion's words and how a claim's verdict is derived
    (rules.OVERALL_RULE), as Markdown lines."""
    return [f"{bullet}**{verdict}**: {meaning}" for verdict, meaning in VERDICTS.items()] + [
        f"{bullet}A conclusion (the chapter's point without its number) {CONCLUSION_WORDS}, and the ledger reads "
        f"{NO_CONCLUSION} where the chapter states none. {OVERALL_RULE}"]


def seeds_text(df: pd.DataFrame) -> str:
    """'1–10 seeds per claim': the seeds the claims read (1 for an analytic table or a single seed)."""
    counts = sorted({int(n) for n in df["seeds"]} - {0})
    if not counts:
        return "no seeds"
    span = f"{counts[0]}–{counts[-1]}" if len(counts) > 1 else f"{counts[0]}"
    return f"{span} seed{'s' if counts[-1] > 1 else ''} per claim"


HOW_JUDGED = (f"Columns: reproduced is our mean ± the sd of one run over seeds; interval the mean's {LEVEL_TEXT} interval "
              f"(at 1 − {ALPHA_TEXT}/looks where a row's seeds were added after reading the ledger: Bonferroni over its looks; "
              "inside its range for an accuracy or a share); seeds the smallest seed set read (rows of different "
              "sets compared on all seeds of both, Welch); margin Δ in tolerances ± its band (one run: the spread "
              "of one run of ours against our mean, s·√(1 + 1/n)) or how far a bound is cleared; would_decide the "
              f"seeds per row that would decide an INCONCLUSIVE claim with {POWER_TEXT} power; number and conclusion the verdicts of "
              "each apart (verdict is derived from both); band, for a number the chapter printed from one run, the "
              f"chapter values its test accepts and the shift from our mean it would catch {POWER_TEXT} of the time, in the "
              "claim's units and in seed sd.")

def loose_warning(df: pd.DataFrame) -> str:
    """What a shortened profile's ledger says first (after 'Profile <name>'): its runs are not the chapter's, and
    what its trained numbers are judged against instead (its reference, attnlab.claims.reference), with the counts."""
    regressed = df["number"].isin(REGRESSION_ORDER)
    said = ("is a pipeline check with short runs: its runs are not the chapter's, so no trained number is judged "
            "against the chapter's (the number and conclusion columns show what they found), and what fails at its "
            "budget is not held against the chapter. ")
    if not regressed.any():
        return said + ("It publishes no reference of its own: its verdicts show that every claim can be read and "
                       "judged, not whether its numbers come back.")
    return said + (f"Its {int(regressed.sum())} printed trained numbers are judged against the profile's own published "
                   f"seeds ({reference_file(df['profile'].iloc[0])}) instead: "
                   + counted(df.loc[regressed, "number"], REGRESSION_ORDER) + ".")


def beside_published(df: pd.DataFrame, published: pd.DataFrame, label: str) -> pd.DataFrame:
    """A variant's ledger: which variant it judges, and each claim's published verdict."""
    return df.assign(variant=label, published_verdict=df["id"].map(published.set_index("id")["verdict"]).fillna(""))


def variant_lines(df: pd.DataFrame) -> list[str]:
    """What a variant's ledger says first: the variant, and the claims whose verdict it changes."""
    if "variant" not in df:
        return []
    changed = df[df["published_verdict"] != df["verdict"]]
    moves = "; ".join(f"{r.id}: {r.published_verdict} → {r.verdict}" for r in changed.itertuples())
    return [f"Variant **{df['variant'].iloc[0]}**: judged on the runs it changes and the published runs elsewhere.",
            f"Verdicts that differ from the published ledger ({len(changed)}): {moves}." if len(changed)
            else "No verdict differs from the published ledger."]


def ledger_markdown(df: pd.DataFrame) -> str:
    profile = df["profile"].iloc[0]
    lines = [f"# Claims ledger — profile `{profile}`", ""]
    lines += [f"> {line}" for line in variant_lines(df)] + ([""] if "variant" in df else [])
    if is_judged_loosely(profile):
        lines += [f"> Profile **{profile}** {loose_warning(df)}", ""]
    lines += ["What each verdict means:", "", *verdict_definitions(), "", f"**{summary_line(df)}**", "", HOW_JUDGED, ""]
    cells = df[[c for c in LEDGER_COLUMNS if c in df]].astype(str).apply(lambda col: col.str.replace("|", "\\|", regex=False))
    lines.append(cells.to_markdown(index=False, disable_numparse=True))
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
    compact = headline[["id", "chapter", "reproduced", "interval", "verdict"]].astype(str).apply(
        lambda col: col.str.replace("|", "\\|", regex=False))
    lines = [README_START,
             "<!-- generated by `python -m attnlab.claims readme` (rule readme_results); do not edit by hand -->",
             "", "What each verdict means:", "", *verdict_definitions(), "", f"**{summary_line(df)}.**", ""]
    lines.append(" · ".join([*(link(p, "the report: verdict, every table and figure") for p in links.get("report", [])),
                             link(ledger_md, "the whole ledger")]) + ".")
    lines += ["", f"The chapter's headline numbers (ours: mean ± the sd of one run over seeds, and the mean's {LEVEL_TEXT} "
              f"interval, at 1 − {ALPHA_TEXT}/looks where a row's seeds were added after reading the ledger):", "",
              compact.to_markdown(index=False, disable_numparse=True), ""]
    for path in links.get("time", []):
        cost = pd.read_csv(path)
        per_device = cost[cost["family"] != "all"].groupby("device")[["runs", "train_hours"]].sum()
        lines += ["Training cost of this profile, from each run's own clock: " + "; ".join(
            f"{int(r.runs)} runs on {device}, {r.train_hours:.2f} h" for device, r in per_device.iterrows())
            + f" (per family: {link(path, 'pipeline_time')}).", ""]
    if links.get("table"):
        lines += ["Tables: " + " · ".join(link(p) for p in sorted(links["table"])), ""]
    if links.get("figure"):
        lines += ["Figures: " + " · ".join(link(p) for p in sorted(links["figure"])), ""]
    lines.append(README_END)
    return "\n".join(lines)


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
