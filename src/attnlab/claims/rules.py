"""The claims file, configs/claims.yaml: its vocabulary and its validation (its header documents both);
the verdicts a claim can get, each defined once (VERDICTS: the ledger, the README and the report read
them here); and the seed plans of configs/pipeline.yaml (how many looks each row's seeds had)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import yaml

from attnlab.claims.stats import ALPHA_TEXT, POWER_TEXT, RARE_TEXT

ROOT = Path(__file__).resolve().parents[3]
CLAIMS_FILE = ROOT / "configs" / "claims.yaml"
PIPELINE_FILE = ROOT / "configs" / "pipeline.yaml"

OPTIONAL_CLAIM_KEYS = {"conclusion", "headline", "range", "timing", "rounding", "reason", "measurable",
                       "necessary", "modes"}
CLAIM_KEYS = {"id", "table", "statement", "chapter", "value", "rule"} | OPTIONAL_CLAIM_KEYS
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
# The verdicts, in order, each in one sentence: the only definition (ledger, README and report print these). A
# claim's number and its conclusion are judged apart (the ledger's `number` and `conclusion` columns); its verdict
# is derived from both by OVERALL_RULE (overall_verdict).
VERDICTS = {
    "MATCH": "The chapter's number comes back: agreement within the tolerance is shown (for a number the chapter "
             f"printed from one run, by two one-sided tests at {ALPHA_TEXT} against the spread of one run of ours; for an "
             "analytic value, to the printed precision; for a bound or an ordering, by the mean's interval; for an "
             "outcome of one model, in most of our seeds), and the chapter's conclusion holds.",
    "CONSISTENT": "The chapter's single run agrees as well as one run can show: its number is a plausible draw of "
                  "ours, the tolerance is wide enough for one run to show agreement, but it sits near the "
                  "tolerance's edge, so no count of our seeds decides it; or the outcome its one model shows is a "
                  "plausible draw of ours, a minority outcome seen in k of our n seeds.",
    "UNRESOLVED": "The chapter's single run is not ruled out, but the tolerance is narrower than one run of ours can "
                  "show (below 1.645 seed sd): no count of our seeds could show agreement; the band column gives the "
                  f"chapter values the number test accepts and the shift it would catch {POWER_TEXT} of the time.",
    "CONCLUSION HOLDS": "The number is CONTRADICTED (its own column says so, and the counts of numbers count it) "
                        "or, in a shortened profile, not judged, but the chapter's point without its number (the "
                        "conclusion) holds.",
    "INCONCLUSIVE": "Not decided yet, and more of our seeds (or repeated timings) could decide it: the "
                    f"would_decide column gives the count at {POWER_TEXT} power.",
    "NOT JUDGED": "Our runs cannot judge the claim: our seeds give its number no spread (one seed, or seeds that "
                  "all agree) and it misses, or the profile trains a shortened budget, so its runs are not the "
                  "chapter's: its printed numbers are not compared with the chapter's (with its own reference where it "
                  "has one), and what fails at that budget is not held against the chapter.",
    "SAME AS PUBLISHED": "A shortened profile's number (its runs are not the chapter's) comes back as the profile "
                         "published it: within its reference seeds' spread (the profile's file in results/reference/), "
                         "t(n − 1)·s·√(1/n + 1/m) of their mean.",
    "MOVED": "A shortened profile's number lies beyond its reference seeds' spread: the pipeline no longer gives "
             "what the profile published (a regression, or another device's drift); it says nothing of the chapter.",
    "NOT MEASURABLE": "The chapter's quantity cannot be measured on the device that made the table; it is not judged "
                      "on a neighbouring quantity instead.",
    "CONTRADICTED": "The chapter's point is false on our runs: its number lies outside the tolerance beyond our "
                    "seeds' spread (and its conclusion does not hold), its conclusion fails, or the outcome its one "
                    f"model shows is seen in fewer than about {RARE_TEXT} of our seeds (Wilson's upper bound below {RARE_TEXT}).",
    "MISSING": "A table, row or column the claim reads was not produced.",
}
# A conclusion's verdict (the ledger's `conclusion` column), by the status of its check.
CONCLUSION_VERDICTS = {"pass": "HOLDS", "fail": "FAILS", "inconclusive": "INCONCLUSIVE", "consistent": "PLAUSIBLE",
                       "unresolved": "PLAUSIBLE", "unjudged": "NOT JUDGED"}
NO_CONCLUSION = "NO CONCLUSION"
# A number's verdict (the ledger's `number` column), by the status of its check.
NUMBER_VERDICTS = {"pass": "MATCH", "fail": "CONTRADICTED", "inconclusive": "INCONCLUSIVE", "consistent": "CONSISTENT",
                   "unresolved": "UNRESOLVED", "unjudged": "NOT JUDGED"}
# A shortened profile's printed number against its own reference (attnlab.claims.reference.regression).
REGRESSION_VERDICTS = {"same": "SAME AS PUBLISHED", "moved": "MOVED", "unjudged": "NOT JUDGED"}
OVERALL_RULE = ("A claim's verdict comes from its number's and its conclusion's, in this order: CONTRADICTED when the "
                "conclusion FAILS; when the number is CONTRADICTED, CONCLUSION HOLDS if the conclusion HOLDS, else "
                "CONTRADICTED; INCONCLUSIVE (NOT JUDGED) when the conclusion is; CONSISTENT at best when the conclusion is only "
                "PLAUSIBLE (a minority outcome); otherwise the number's verdict. A passing conclusion never changes "
                "the number's own column, and the counts give numbers and conclusions apart. In a shortened profile (quick, "
                "smoke) a trained claim's printed number is judged against the profile's own published seeds instead "
                "of the chapter's, and that verdict, SAME AS PUBLISHED or MOVED, is the claim's; whatever fails at "
                "that budget is NOT JUDGED, and a conclusion that holds there, on a claim without a reference, gives "
                "CONCLUSION HOLDS. A claim whose rows mix seeds trained on a GPU "
                "with seeds trained on a CPU stands on cross_device: it is INCONCLUSIVE where a published GPU seed "
                "retrained on a CPU (its twin) gives a held-out result more than one seed sd of its row away.")

# cross_device's verdict on a pair: one GPU seed and its CPU twin (same config, same seed)
TWIN_NOT_RUN = "not run yet"
TWIN_AGREES = "agree to float tolerance"
TWIN_WITHIN_SPREAD = "differ beyond float tolerance, held out within one seed sd"
TWIN_BEYOND_SPREAD = "differ beyond float tolerance, held out beyond one seed sd"


def overall_verdict(number: str, conclusion: str) -> str:
    """A claim's verdict from its number's verdict and its conclusion's (OVERALL_RULE)."""
    if conclusion == "FAILS":
        return "CONTRADICTED"
    if number == "CONTRADICTED":
        return "CONCLUSION HOLDS" if conclusion == "HOLDS" else "CONTRADICTED"
    if conclusion in ("INCONCLUSIVE", "NOT JUDGED"):
        return conclusion
    if conclusion == "PLAUSIBLE" and number == "MATCH":
        return "CONSISTENT"
    return number


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
    seen = set()
    for claim in claims:
        validate_claim(claim)
        if claim["id"] in seen:
            raise ClaimsError(f"claim id {claim['id']!r} appears twice")
        seen.add(claim["id"])
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
