"""The claims file, configs/claims.yaml: its vocabulary and its validation (its header documents both);
the two verdicts a claim gets, four words each, defined once (NUMBER_WORDS, POINT_WORDS: the ledger, the
README and the report read them here); and the seed plans of configs/pipeline.yaml (how many looks each row's seeds had)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import yaml

from attnlab.claims import stats
from attnlab.claims.stats import ALPHA_TEXT, POWER_TEXT

ROOT = Path(__file__).resolve().parents[3]
CLAIMS_FILE = ROOT / "configs" / "claims.yaml"
PIPELINE_FILE = ROOT / "configs" / "pipeline.yaml"

OPTIONAL_CLAIM_KEYS = {"conclusion", "headline", "range", "timing", "rounding", "reason", "measurable",
                       "necessary", "modes"}
CLAIM_KEYS = {"id", "name", "table", "statement", "chapter", "value", "rule"} | OPTIONAL_CLAIM_KEYS
REQUIRED_CLAIM_KEYS = CLAIM_KEYS - OPTIONAL_CLAIM_KEYS
TARGET_CHECKS = ("exact", "relative", "absolute")  # compared with the chapter's number (or `to`)
CHECK_KEYS = {"exact": {"decimals", "to"}, "relative": {"tolerance", "to"}, "absolute": {"tolerance", "to"},
              "above": {"than", "factor"}, "below": {"than", "factor"}, "between": {"low", "high"},
              "increasing": {"by"}, "decreasing": {"by"}}
REQUIRED_CHECK_KEYS = {"relative": {"tolerance"}, "absolute": {"tolerance"}, "above": {"than"}, "below": {"than"},
                       "between": {"low", "high"}}
OPERAND_KEYS = ("to", "than", "low", "high")  # check keys that hold an expression
CONCLUSION_KEYS = {"value", "says"}
OPERATORS = ("column", "columns", "lead", "ratio", "difference", "values")
READ_OPERATORS = ("column", "columns", "lead")  # the operators that read a table
REDUCERS = ("max", "min", "mean", "first", "last", "range", "loglog_slope")
NAME_LENGTH = 60  # a claim's `name`: what the number is, in a few plain words (the README and the report show it)
NUMBER_IN_TEXT = re.compile(r"\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")
# The ledger's two verdicts, four words each, judged apart: the chapter's NUMBER and the chapter's POINT (its
# conclusion without the number). No third word combines them. Each word in one sentence: the only definition
# (the ledger, the README and the report print these, each only the words it uses).
NUMBER_WORDS = {
    "AGREES": "The chapter's number is a typical run of ours, and the test could have failed: a chapter value "
              f"{stats.CATCH_SD:g} one-run sd past the tolerance would have read DIFFERS at least {POWER_TEXT} of "
              "the time (for an analytic value: equal to the printed precision; for a bound or an ordering: our "
              "mean's interval clears it).",
    "DIFFERS": "The chapter's number, widened by its tolerance, lies wholly outside what our seeds give for one run "
               f"at {ALPHA_TEXT} (a prediction interval; by rank where the quantity is not normal); an analytic value "
               "outside its printed precision; a bound or an ordering our mean's interval misses.",
    "OPEN": "Not decided: the chapter's number is not ruled out, but our seeds cannot yet show that the test could "
            "have failed (the note says how many seeds per row would), or the outcome is a minority one of ours.",
    "NOT TESTED": "Nothing to judge it by: our seeds give it no spread (one seed, or seeds that all agree), the "
                  "device cannot measure it, or a table it reads is missing.",
}
NO_POINT = "–"
POINT_WORDS = {
    "HOLDS": "The chapter's point without its number holds on our mean's interval (or in most of our seeds).",
    "FAILS": "The chapter's point fails on our mean's interval (or in all but a rare few of our seeds).",
    "OPEN": "Not decided: our seeds leave the point on both sides, or too few seeds show it.",
    NO_POINT: "The chapter states no point beyond its number.",
}
# A check's status (attnlab.claims.evaluate) -> the word of each column.
NUMBER_WORD = {"pass": "AGREES", "fail": "DIFFERS", "open": "OPEN", "untested": "NOT TESTED"}
POINT_WORD = {"pass": "HOLDS", "fail": "FAILS", "open": "OPEN", "untested": "OPEN"}

# cross_device's verdict on a pair: one GPU seed and its CPU twin (same config, same seed)
TWIN_NOT_RUN = "not run yet"
TWIN_AGREES = "agree to float tolerance"
TWIN_WITHIN_SPREAD = "differ beyond float tolerance, held out within one seed sd"
TWIN_BEYOND_SPREAD = "differ beyond float tolerance, held out beyond one seed sd"


class ClaimsError(ValueError):
    """configs/claims.yaml (or a README) is malformed."""


class Printed(float):
    """A number of the claims file with the text it was written as: 0.70 says the chapter printed two decimals."""
    text: str


class ClaimsLoader(yaml.SafeLoader):
    """YAML's safe loader, keeping each float's text (Printed)."""


def _printed(loader: ClaimsLoader, node) -> Printed:
    number = Printed(loader.construct_yaml_float(node))
    number.text = node.value
    return number


ClaimsLoader.add_constructor("tag:yaml.org,2002:float", _printed)


def rounding(claim: dict) -> np.ndarray:
    """The step of the last digit the chapter printed (its `rounding`, where the number is in words or its
    digits are not the chapter's: 'identical', 'zero'); a printed run is known to ± half of it."""
    return np.asarray(claim["rounding"], dtype=float) if "rounding" in claim else printed_step(claim["chapter"])


def printed_step(chapter) -> np.ndarray:
    """The step of the last digit of a number as the claims file writes it, per number (0.70 → 0.01,
    5147 → 1, 2.98e-08 → 1e-10)."""
    if isinstance(chapter, list):
        return np.array([printed_step(v) for v in chapter])
    if isinstance(chapter, int):
        return np.asarray(1.0)
    text = getattr(chapter, "text", repr(float(chapter))).lower().replace("_", "")
    mantissa, _, exponent = text.partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return np.asarray(10.0 ** (int(exponent or 0) - decimals))


def load_plans(profile: str, path: str | Path = PIPELINE_FILE) -> dict[str, dict]:
    """The seed plans of a profile's rows (configs/pipeline.yaml, seeds_per_run.plan.<profile>), by run, each with
    its `trained` count (seeds_per_run.<profile>'s, or the profile's own: configs/profile/<profile>.yaml) as its
    last look and its `pilot` (its first look): the file writes neither twice."""
    path = Path(path)
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    seeds = doc.get("seeds_per_run") or {}
    plans = (seeds.get("plan") or {}).get(profile) or {}
    counts = seeds.get(profile) or {}
    own = yaml.safe_load((path.parent / "profile" / f"{profile}.yaml").read_text(encoding="utf-8"))
    out = {}
    for run, plan in plans.items():
        missing = {"planned", "looks", "for"} - set(plan)
        if missing:
            raise ClaimsError(f"{path}: the plan of {run} lacks {sorted(missing)}")
        trained = int(counts.get(run) or (own["measure"][run.split("/", 1)[1]]["seeds"] if run.startswith("measure/")
                                          else own["winograd_seeds"] if run.startswith("winograd/") else own["seeds"]))
        earlier = [int(n) for n in plan["looks"]]
        if earlier != sorted(earlier) or (earlier and earlier[-1] >= trained):
            raise ClaimsError(f"{path}: the looks of {run} ({earlier}) must rise and stay below its {trained} seeds")
        if plan.get("amended") and plan["amended"] not in (seeds.get("amendments") or {}):
            raise ClaimsError(f"{path}: the plan of {run} is amended by {plan['amended']!r}, which "
                              f"seeds_per_run.amendments does not define: {sorted(seeds.get('amendments') or {})}")
        out[run] = {**plan, "looks": [*earlier, trained], "pilot": (earlier or [trained])[0], "trained": trained}
    return out


def load_looks(claims: list[dict], plans: dict[str, dict]) -> dict[str, int]:
    """Per claim id, the most looks any row it reads had (a plan's `looks`: the counts at which the ledger was
    read and seeds then added, the trained count last); claims of rows without a plan had one look."""
    ids, looks = {c["id"] for c in claims}, {}
    for run, plan in plans.items():
        unknown = set(plan["for"]) - ids
        if unknown:
            raise ClaimsError(f"the plan of {run} is for claims that do not exist: {sorted(unknown)}")
        for claim_id in plan["for"]:
            looks[claim_id] = max(looks.get(claim_id, 1), len(plan["looks"]))
    return looks


def load_claims(path: str | Path = CLAIMS_FILE) -> list[dict]:
    doc = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=ClaimsLoader)
    claims = doc.get("claims") if isinstance(doc, dict) else None
    if not isinstance(claims, list) or not claims:
        raise ClaimsError(f"{path}: expected a top-level `claims:` list")
    seen, names = set(), {}
    for claim in claims:
        validate_claim(claim)
        if claim["id"] in seen:
            raise ClaimsError(f"claim id {claim['id']!r} appears twice")
        seen.add(claim["id"])
        name = claim["name"].strip().lower()
        if name in names:
            raise ClaimsError(f"claims {names[name]!r} and {claim['id']!r} share the name {claim['name']!r}; a name "
                              f"says which number it is, so each claim has its own")
        names[name] = claim["id"]
    return claims


def validate_claim(claim: dict) -> None:
    if not isinstance(claim, dict):
        raise ClaimsError(f"claim {claim!r}: expected a mapping")
    where = f"claim {claim.get('id', claim)!r}"
    missing = REQUIRED_CLAIM_KEYS - claim.keys()
    if missing:
        raise ClaimsError(f"{where}: missing {sorted(missing)}")
    unknown = claim.keys() - CLAIM_KEYS
    if unknown:
        raise ClaimsError(f"{where}: unknown keys {sorted(unknown)}; allowed: {sorted(CLAIM_KEYS)}")
    validate_name(claim["name"], claim["chapter"], where)
    validate_expr(claim["value"], where)
    bounds = claim.get("range")
    if bounds is not None and not (isinstance(bounds, list) and len(bounds) == 2 and all(map(is_number, bounds))
                                   and bounds[0] < bounds[1]):
        raise ClaimsError(f"{where}: range is [low, high], the values a bounded quantity can take, not {bounds!r}")
    if "rounding" in claim and not (is_number(claim["rounding"]) and claim["rounding"] >= 0):
        raise ClaimsError(f"{where}: rounding is the step of the chapter's last printed digit (>= 0), "
                          f"not {claim['rounding']!r}")
    timing = claim.get("timing")
    if timing is not None and not (isinstance(timing, list) and timing and all(isinstance(c, str) for c in timing)):
        raise ClaimsError(f"{where}: timing lists the columns it reads that are timings, not {timing!r}")
    reason = claim.get("reason")
    # a reason is words: a number in it would go stale as seeds land (the ledger's note has the numbers)
    if reason is not None and not (isinstance(reason, str) and reason.strip() and not re.search(r"\d", reason)):
        raise ClaimsError(f"{where}: reason is one plain sentence without digits (the note gives the numbers), "
                          f"not {reason!r}")
    if "necessary" in claim and claim["necessary"] is not True:
        raise ClaimsError(f"{where}: necessary is true (the chapter argues the outcome holds in every model) or "
                          f"absent, not {claim['necessary']!r}")
    if claim.get("necessary") and "conclusion" in claim:
        raise ClaimsError(f"{where}: a necessary claim's conclusion is that it holds in every model; it takes no "
                          f"conclusion of its own")
    if "modes" in claim and claim["modes"] != 2:
        raise ClaimsError(f"{where}: modes is 2 (two outcomes among our seeds, the chapter's run judged against the "
                          f"nearest) or absent, not {claim['modes']!r}")
    measurable = claim.get("measurable")
    if measurable is not None and not (isinstance(measurable, dict) and set(measurable) == {"column", "matches", "says"}
                                       and all(isinstance(v, str) and v for v in measurable.values())):
        raise ClaimsError(f"{where}: measurable is {{column, matches, says}}: the column naming how the table's rows "
                          f"were measured, the text it holds where the chapter's quantity was, and what that is; "
                          f"not {measurable!r}")
    validate_check(claim["rule"], claim, f"{where} rule")
    if "conclusion" in claim:
        conclusion = claim["conclusion"]
        validate_check(conclusion, claim, f"{where} conclusion", extra=CONCLUSION_KEYS)
        if "value" in conclusion:
            validate_expr(conclusion["value"], where)


def validate_name(name, chapter, where: str) -> None:
    """A claim's `name`: what the number is, in a few plain words a newcomer reads ("ALiBi's gain from 64 to 256
    tokens"): sentence case, at most NAME_LENGTH characters, no identifier (no underscore), no closing full stop, and
    none of the chapter's numbers (the ledger sets them beside ours; a name only says which number it is)."""
    if not (isinstance(name, str) and name.strip()):
        raise ClaimsError(f"{where}: name is what the number is in a few plain words (\"Tokens in the corpus\"), "
                          f"not {name!r}")
    why = ""
    if len(name) > NAME_LENGTH:
        why = f"is {len(name)} characters long, over {NAME_LENGTH}"
    elif name != name.strip() or "  " in name or "\n" in name:
        why = "has spaces to spare"
    elif "_" in name:
        why = "has an underscore: a name is words, not an identifier"
    elif name[0].islower():
        why = "starts in lower case: a name is in sentence case"
    elif name.endswith("."):
        why = "ends in a full stop"
    else:
        printed = {float(found.replace(",", "")) for found in NUMBER_IN_TEXT.findall(chapter_text(chapter))}
        shown = [found for found in NUMBER_IN_TEXT.findall(name) if float(found.replace(",", "")) in printed]
        if shown:
            why = f"gives the chapter's number {shown[0]}: the ledger sets it beside ours"
    if why:
        raise ClaimsError(f"{where}: name {name!r} {why}; a name is what the number is, in a few plain words, at "
                          f"most {NAME_LENGTH} characters, in sentence case, without a full stop")


def chapter_text(chapter) -> str:
    """Every number the chapter's value holds, as text (a list's items, a text's numbers)."""
    if isinstance(chapter, list):
        return " ".join(chapter_text(item) for item in chapter)
    return f"{chapter:.10g}" if is_number(chapter) else str(chapter)


def validate_check(check, claim: dict, where: str, extra: set = frozenset()) -> None:
    if not isinstance(check, dict) or check.get("kind") not in CHECK_KEYS:
        kind = check.get("kind") if isinstance(check, dict) else check
        raise ClaimsError(f"{where}: kind {kind!r} unknown; allowed: {sorted(CHECK_KEYS)}")
    kind = check["kind"]
    unknown = check.keys() - CHECK_KEYS[kind] - set(extra) - {"kind"}
    if unknown:
        raise ClaimsError(f"{where}: {kind} takes {sorted(CHECK_KEYS[kind] | set(extra))}, not {sorted(unknown)}")
    needed = REQUIRED_CHECK_KEYS.get(kind, set()) - check.keys()
    if needed:
        raise ClaimsError(f"{where}: {kind} needs {sorted(needed)}")
    if kind in TARGET_CHECKS and "to" not in check and not is_number_or_list(claim["chapter"]):
        raise ClaimsError(f"{where}: {kind} compares with a number, but chapter is {claim['chapter']!r}; "
                          "give a numeric chapter value or `to:`")
    for key in OPERAND_KEYS:
        if key in check:
            validate_expr(check[key], where)


def validate_expr(node, where: str) -> None:
    if is_number(node):
        return
    if not isinstance(node, dict):
        raise ClaimsError(f"{where}: a value is a number or a mapping with one of {OPERATORS}, got {node!r}")
    ops = [op for op in OPERATORS if op in node]
    if len(ops) != 1:
        raise ClaimsError(f"{where}: a value needs exactly one of {OPERATORS}, got {sorted(node)}")
    op = ops[0]
    allowed = {op, "reduce", "last", "per_seed"} | ({"table", "where", "x"} if op in READ_OPERATORS else set())
    allowed |= {"among"} if op == "lead" else {"matches"} if op == "column" else set()
    if node.keys() - allowed:
        raise ClaimsError(f"{where}: {op} takes {sorted(allowed)}, not {sorted(node.keys() - allowed)}")
    if node.get("reduce", "max") not in REDUCERS:
        raise ClaimsError(f"{where}: reduce {node['reduce']!r} unknown; allowed: {REDUCERS}")
    if (node.get("reduce") == "loglog_slope") != ("x" in node):
        raise ClaimsError(f"{where}: reduce loglog_slope needs `x:` (the column it is fitted against) and only it")
    if "per_seed" in node and node["per_seed"] is not True:
        raise ClaimsError(f"{where}: per_seed is true (an outcome per seed, judged on its share of seeds) or absent, "
                          f"not {node['per_seed']!r}")
    if "matches" in node and not (isinstance(node["matches"], str) and node["matches"]):
        raise ClaimsError(f"{where}: matches takes the text a cell must contain, got {node['matches']!r}")
    if op == "lead" and not (isinstance(node.get("among"), list) and len(node["among"]) >= 2):
        raise ClaimsError(f"{where}: lead needs `among:`, the columns of the row it is compared with")
    if op in ("ratio", "difference") and not (isinstance(node[op], list) and len(node[op]) == 2):
        raise ClaimsError(f"{where}: {op} takes a list of two values")
    if op in ("ratio", "difference", "values"):
        for child in node[op]:
            validate_expr(child, where)


def is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def is_number_or_list(x) -> bool:
    return is_number(x) or (isinstance(x, list) and bool(x) and all(is_number_or_list(v) for v in x))
