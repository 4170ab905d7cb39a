"""The command line: `check` writes the ledger, `plan` prints the seed plans, `reference` freezes a shortened
profile's regression reference, `readme` writes the README's Results section."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from attnlab.claims import reference
from attnlab.claims.evaluate import ledger
from attnlab.claims.seed_plans import seed_plans
from attnlab.claims.read import load_tables
from attnlab.claims.render import (beside_published, readme_answer, readme_section, splice_readme, summary_line,
                                   write_ledger)
from attnlab.claims.rules import CLAIMS_FILE, PIPELINE_FILE, ROOT, ClaimsError, load_claims, load_plans
from attnlab.data import atomic_path
from attnlab.layout import variant_label, variant_name


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m attnlab.claims",
                                     description="The claims ledger: the chapter's figures against our tables.")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="judge every claim against the table CSVs")
    check.add_argument("--claims", default=str(CLAIMS_FILE))
    check.add_argument("--plans", default=str(PIPELINE_FILE),
                       help="the seed plans (seeds_per_run.plan): how many looks each row's seeds had")
    check.add_argument("--profile", required=True)
    check.add_argument("--csv", required=True)
    check.add_argument("--md", required=True)
    check.add_argument("--published", help="a variant's ledger: the published claims.csv, whose words it names")
    check.add_argument("--label", default="", help="a variant's ledger: what the variant changed")
    check.add_argument("tables", nargs="*", help="table CSVs, <id>.csv")
    plan = sub.add_parser("plan", help="each planned row's 80 %%-power seed count at its design margin, from its pilot "
                                             "seeds' spread alone")
    plan.add_argument("--claims", default=str(CLAIMS_FILE))
    plan.add_argument("--plans", default=str(PIPELINE_FILE))
    plan.add_argument("--profile", default="full")
    plan.add_argument("tables", nargs="*", help="table CSVs, <id>.csv")
    frozen = sub.add_parser("reference", help="freeze a shortened profile's regression reference "
                                              "(results/reference/<profile>.json) from its multi-seed variant's tables")
    frozen.add_argument("--profile", required=True)
    frozen.add_argument("--claims", default=str(CLAIMS_FILE))
    frozen.add_argument("--plans", default=str(PIPELINE_FILE), help="the reference's planned seeds (seeds_per_run.reference)")
    frozen.add_argument("tables", nargs="*", help="table CSVs (default: the variant seeds=<planned>'s, the published "
                                                  "ones where it has none)")
    readme = sub.add_parser("readme", help="write the README's Results section from a ledger")
    readme.add_argument("--ledger", required=True, help="claims.csv (of the full profile)")
    readme.add_argument("--readme", default="README.md")
    readme.add_argument("--out", help="also write the section here (the pipeline's record of it)")
    readme.add_argument("links", nargs="*", help="table=<path.md>, figure=<path.png>, report=<report.html>, "
                                                 "time=<pipeline_time.csv>, devices=<cross_device.csv>")
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            df = ledger(load_claims(args.claims), load_tables(args.tables), args.profile,
                        load_plans(args.profile, args.plans))
            if args.published:
                df = beside_published(df, pd.read_csv(args.published, keep_default_na=False), args.label)
            write_ledger(df, args.csv, args.md)
        elif args.command == "plan":
            plans = load_plans(args.profile, args.plans)
            for run, found in seed_plans(load_claims(args.claims), load_tables(args.tables), plans).items():
                trained = plans[run]["trained"]
                print(f"{run}: pilot {plans[run]['pilot']}, planned {found['planned']}, beyond {found['beyond']}"
                      + (f" — the plan exceeds the {trained} trained" if found["planned"] > trained else ""))
            return
        elif args.command == "reference":
            seeds = reference.planned_seeds(args.profile, args.plans)
            tables = args.tables or variant_tables(args.profile, seeds)
            frozen = reference.freeze(load_claims(args.claims), load_tables(tables), args.profile, seeds)
            reference.write(frozen, ROOT / reference.reference_file(args.profile))
            print(f"{reference.reference_file(args.profile)}: {len(frozen['values'])} claims, {seeds} seeds per row")
            return
        else:
            df = write_readme_section(Path(args.ledger), Path(args.readme), args.links, args.out)
        print(summary_line(df))
    except ClaimsError as err:
        raise SystemExit(f"error: {err}")


def variant_tables(profile: str, seeds: int) -> list[Path]:
    """Every table of the variant `--config profile=<profile> seeds=<seeds>`, the published one where the variant
    has none (a table its seeds do not change)."""
    published = ROOT / "results" / profile / "tables"
    variant = ROOT / "results" / profile / "variants" / variant_name(variant_label([], seeds, None)) / "tables"
    if not variant.is_dir():
        raise ClaimsError(f"{variant.relative_to(ROOT)} does not exist: train the reference's seeds first with "
                          f"snakemake --cores all --config profile={profile} seeds={seeds}")
    return [variant / p.name if (variant / p.name).is_file() else p for p in sorted(published.glob("*.csv"))]


def write_readme_section(ledger_path: Path, readme_path: Path, link_args: list[str], out: str | None) -> pd.DataFrame:
    links = {"table": [], "figure": [], "report": [], "time": [], "devices": []}
    for item in link_args:
        kind, sep, path = item.partition("=")
        if not sep or kind not in links:
            raise ClaimsError(f"expected table=, figure=, report=, time= or devices=<path>, got {item!r}")
        links[kind].append(path)
    if not readme_path.exists():
        raise ClaimsError(f"{readme_path} does not exist")
    df = pd.read_csv(ledger_path, keep_default_na=False)
    answer = readme_answer(df, readme_path.parent, ledger_path, links)
    section = readme_section(df, readme_path.parent, links)
    splice_readme(readme_path, answer, section)
    if out:
        with atomic_path(Path(out)) as tmp:
            tmp.write_text(answer + "\n\n" + section + "\n", encoding="utf-8")
    return df
