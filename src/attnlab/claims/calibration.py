"""Can a verdict fail by itself? Leave one seed out: each held-out seed's value taken as the chapter's number and
judged by the ledger's own rule against the other seeds. A rule whose DIFFERS is a prediction interval at 5 % says
DIFFERS for at most about 5 % of them; one that makes a draw of ours rare by construction says it far more often.

    python -m attnlab.claims.calibration results/full/tables/*.csv
"""

from __future__ import annotations

import argparse

import numpy as np

from attnlab.claims.evaluate import judge
from attnlab.claims.read import Missing, estimate, table_reads
from attnlab.claims.reference import printed_number
from attnlab.claims.rules import load_claims, load_looks, load_plans
from attnlab.tables import SEEDS_SUFFIX, per_seed

MIN_SEEDS = 3  # fewer seeds leave too few to judge a held-out one by


def without_seed(tables: dict, seed: int, table_ids) -> dict:
    """The tables as if seed `seed` had not been trained: that seed cut from every `<col>_seeds` cell of the tables
    named (the others as they are) and each mean column recomputed."""
    out = dict(tables)
    for table_id in table_ids:
        df = tables[table_id].copy()
        for column in [c for c in df.columns if c.endswith(SEEDS_SUFFIX)]:
            cells = [per_seed(cell) for cell in df[column]]
            cut = [s[:seed] + s[seed + 1:] if len(s) > seed else s for s in cells]
            df[column] = [";".join(repr(v) for v in s) if len(s) > 1 else "" for s in cut]
            mean_column = column[: -len(SEEDS_SUFFIX)]
            if mean_column in df.columns:
                df[mean_column] = [float(np.mean(s)) if s else mean for s, mean in zip(cut, df[mean_column])]
        out[table_id] = df
    return out


def held_out(claim: dict, tables: dict, looks: int = 1, most: int | None = None) -> tuple[int, int] | None:
    """(DIFFERS, draws) of a claim whose rule compares a number the chapter printed once: each of its shared seeds
    (the first `most` of them where given) held out, its value as the chapter's, judged against the rest. None for a
    claim with fewer than MIN_SEEDS shared seeds, or no printed number."""
    if not printed_number(claim):
        return None
    try:
        value = estimate(claim["value"], tables, claim["table"])
    except Missing:
        return None
    if value.shared is None or value.shared.shape[-1] < MIN_SEEDS or not value.sets:
        return None
    read = {t for t, _ in table_reads([claim["value"], claim["rule"], claim.get("conclusion", {})], claim["table"])}
    seeds = range(min(value.shared.shape[-1], most or value.shared.shape[-1]))
    differs = 0
    for seed in seeds:
        chapter = value.shared[..., seed]
        as_printed = {**claim, "chapter": chapter.tolist() if chapter.ndim else float(chapter)}
        as_printed["rounding"] = 0.0
        judged = judge(as_printed, without_seed(tables, seed, read), looks)
        differs += judged.number == "DIFFERS"
    return differs, len(seeds)


def main(argv=None) -> None:
    from attnlab.claims.read import load_tables

    parser = argparse.ArgumentParser(prog="python -m attnlab.claims.calibration", description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="full")
    parser.add_argument("tables", nargs="+")
    args = parser.parse_args(argv)
    claims, tables = load_claims(), load_tables(args.tables)
    looks = load_looks(claims, load_plans(args.profile))
    for claim in claims:
        found = held_out(claim, tables, looks.get(claim["id"], 1))
        if found:
            print(f"{claim['id']}: DIFFERS in {found[0]} of {found[1]} held-out seeds ({100 * found[0] / found[1]:.1f} %)")


if __name__ == "__main__":
    main()
