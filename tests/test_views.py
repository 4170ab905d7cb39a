"""A table as a reader compares it with the chapter (attnlab.views): at most eight columns, none of them
bookkeeping, the chapter's number beside ours wherever a claim reads one cell of ours; everything left out is in
the provenance view beside it."""

from pathlib import Path

import pandas as pd
import pytest

from attnlab import views
from attnlab.claims.rules import is_number, load_claims
from attnlab.tables import CHAPTER

REPO = Path(__file__).resolve().parents[1]
PUBLISHED = sorted((REPO / "results").glob("*/tables/*.csv"))
CLAIMS = load_claims()


def header(md: Path) -> list[str]:
    """The column names of the first Markdown table in a file (none where the profile's table has no rows)."""
    line = next((line for line in md.read_text(encoding="utf-8").splitlines() if line.startswith("|")), "")
    return [cell.strip() for cell in line.strip("|").split("|")] if line else []


def plainly_read(table_id: str) -> list[dict]:
    """The claims that read one column of this table at rows a `where` picks, with a number for a chapter value."""
    return [c for c in CLAIMS if isinstance(c["value"], dict) and set(c["value"]) <= {"column", "where", "per_seed"}
            and c["table"] == table_id and (is_number(c["chapter"]) or isinstance(c["chapter"], list))]


@pytest.mark.parametrize("csv", PUBLISHED, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_a_published_table_shows_the_chapters_shape_and_its_number_beside_ours(csv):
    md = csv.with_suffix(".md")
    columns = header(md)
    assert len(columns) <= views.MAX_COLUMNS, (md.name, columns)
    assert not set(columns) & set(views.BOOKKEEPING), (md.name, columns)
    if any(c["value"]["column"] in columns for c in plainly_read(csv.stem)):
        assert any(c.startswith(CHAPTER) for c in columns), (md.name, columns)
    # what the reader's view leaves out is one click away, and nothing is lost: the provenance view holds the rest
    provenance = csv.with_suffix(".provenance.md")
    assert f"({provenance.name})" in md.read_text(encoding="utf-8")
    shown = set(header(provenance)) | set(columns)
    df = pd.read_csv(csv)
    kept = {c for c in df.columns if not c.endswith(("_std", "_seeds")) and df[c].notna().any()}
    assert kept <= shown | {c for c in kept if df[c].astype(str).nunique() == 1}, (csv.name, kept - shown)


def test_the_chapters_number_lands_in_the_row_its_claim_reads():
    df = pd.DataFrame({"row": [1, 2, 3], "held_out_ppl": [61.0, 38.1, 40.2], "held_out_ppl_std": [0.5, 0.3, 0.4]})
    claims = [{"id": "t.block", "table": "t", "chapter": 38.07, "value": {"column": "held_out_ppl", "where": {"row": 2}}}]
    shown, _ = views.reader_view("t", df, claims)
    assert list(shown.columns) == ["row", "held_out_ppl", CHAPTER]
    assert shown[CHAPTER].tolist() == ["", "38.07", ""] and shown["held_out_ppl"].tolist()[1] == "38.1 ± 0.3"
    # a claim whose rows do not line up with its chapter's values (or reads no plain cell) puts nothing there
    assert views.chapter_cells("t", df, [{**claims[0], "chapter": [1.0, 2.0]}]) == {}
    assert views.chapter_cells("t", df, [{**claims[0], "value": {"ratio": [1, 2]}}]) == {}


def test_a_variants_table_puts_the_chapters_number_beside_its_own_row():
    """A variant's table shows the published row above its own (the ablation column, once): the chapter's number
    goes where the ledger reads it, the variant's row."""
    df = pd.DataFrame({"ablation": ["", "published", "lr=3e-3", ""], "row": [1, 2, 2, 3],
                       "held_out_ppl": [61.0, 38.1, 39.5, 40.2], "held_out_ppl_std": [0.5, 0.3, None, 0.4]})
    claims = [{"id": "t.block", "table": "t", "chapter": 38.07, "value": {"column": "held_out_ppl", "where": {"row": 2}}}]
    shown, _ = views.reader_view("t", df, claims)
    assert list(shown.columns) == ["ablation", "row", "held_out_ppl", CHAPTER]
    assert shown[CHAPTER].tolist() == ["", "", "38.07", ""] and shown["held_out_ppl"].tolist()[2] == "39.5"


def test_bookkeeping_moves_to_the_provenance_view():
    df = pd.DataFrame({"model": ["a", "b"], "accuracy": [90.0, 50.0], "commit": ["abc ×3", "def ×3"],
                       "device": ["cpu ×3", "cpu ×3"], "seed_ids": ["0–2", "0–2"]})
    shown, _ = views.reader_view("t", df, [])
    assert list(shown.columns) == ["model", "accuracy"]
    kept = views.provenance_view("t", df)
    assert list(kept.columns) == ["model", "commit", "device", "seed_ids"] and kept["device"].tolist() == ["cpu ×3"] * 2
