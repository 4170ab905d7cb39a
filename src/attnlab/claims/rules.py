"""The claims file, configs/claims.yaml: its vocabulary and its validation (its header documents both),
and the verdicts a claim can get."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
CLAIMS_FILE = ROOT / "configs" / "claims.yaml"

CLAIM_KEYS = {"id", "table", "statement", "chapter", "value", "rule", "conclusion", "headline"}
REQUIRED_CLAIM_KEYS = CLAIM_KEYS - {"conclusion", "headline"}
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
VERDICTS = ("MATCH", "CONCLUSION HOLDS", "INCONCLUSIVE", "CONTRADICTED", "MISSING")


class ClaimsError(ValueError):
    """configs/claims.yaml (or a README) is malformed."""


def load_claims(path: str | Path = CLAIMS_FILE) -> list[dict]:
    doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
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
    allowed = {op, "reduce", "last"} | ({"table", "where", "x"} if op in READ_OPERATORS else set())
    allowed |= {"among"} if op == "lead" else {"matches"} if op == "column" else set()
    if node.keys() - allowed:
        raise ClaimsError(f"{where}: {op} takes {sorted(allowed)}, not {sorted(node.keys() - allowed)}")
    if node.get("reduce", "max") not in REDUCERS:
        raise ClaimsError(f"{where}: reduce {node['reduce']!r} unknown; allowed: {REDUCERS}")
    if (node.get("reduce") == "loglog_slope") != ("x" in node):
        raise ClaimsError(f"{where}: reduce loglog_slope needs `x:` (the column it is fitted against) and only it")
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
