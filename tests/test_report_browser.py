"""The published reports as a reader at 800 px sees them (headless Chromium, tests/browser.py; seconds): the first
screen answers "did it reproduce?" (the summary sentence and the link to the ledger in view, the words' definitions
below it); every ledger row's number and point and every contradictions row's finding in view without scrolling
sideways, no sideways scrolling at all, no verdict's word or number broken across lines; and the check fails on a
report whose ledger is wider than the window."""

from pathlib import Path

import pytest
from browser import seen_in_browser

REPO = Path(__file__).resolve().parents[1]
SCREEN = 1000  # px: the height of the window a referee reads at (800 x 1000)


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["full", "quick"])
def test_the_answer_and_every_verdict_and_finding_are_in_view_at_800_px(profile, tmp_path):
    seen = seen_in_browser(REPO / "results" / profile / "report.html", tmp_path)
    first = seen["narrow"]["first_screen"]
    assert first["answer"] is not None and first["ledger_link"] <= first["height"] < first["words"], first
    # a page a reader reads: under 60 screens of 800 x 1000 px, the contradictions under a tenth of it
    narrow = seen["narrow"]
    assert narrow["page_height"] < 60 * SCREEN, narrow["page_height"] / SCREEN
    tried = next(s for s in narrow["sections"] if s["id"] == "contradictions")
    assert tried["height"] < 0.1 * narrow["page_height"], tried["height"] / narrow["page_height"]
    for frame in ("wide", "narrow"):
        readable = seen[frame]["readable"]
        assert readable["rows"] > 0 and readable["hidden"] == [], (frame, readable["hidden"][:5])
        assert seen[frame]["scroll_width"] <= seen[frame]["width"], frame
        assert seen[frame]["split"] == [], frame


@pytest.mark.slow
def test_the_check_fails_on_a_ledger_that_scrolls_sideways_at_800_px(tmp_path):
    page = (REPO / "results/quick/report.html").read_text(encoding="utf-8")
    fits = "table.ledger { width: 100%; table-layout: fixed; }"
    assert fits in page
    (tmp_path / "report.html").write_text(page.replace(fits, "table.ledger { width: 1400px; }"))
    hidden = seen_in_browser(tmp_path / "report.html", tmp_path)["narrow"]["readable"]["hidden"]
    assert any(h.endswith(": number") for h in hidden)


@pytest.mark.slow
def test_a_list_cell_stays_a_list_at_800_px(tmp_path):
    """A list-valued cell (the ledger's, a table's) keeps its items as rows of a small table, at 800 px and wide: no
    item laid out as a box of its own. The control: the same page with its items' rows made blocks (as a
    stacked-card layout does) is caught."""
    page = (REPO / "results/full/report.html").read_text(encoding="utf-8")
    seen = seen_in_browser(REPO / "results/full/report.html", tmp_path)
    assert "table.items" in page and seen["narrow"]["item_boxes"] == [] and seen["wide"]["item_boxes"] == []
    stacked = page.replace("</style>", "table.items tr { display: block; }</style>", 1)
    (tmp_path / "stacked.html").write_text(stacked, encoding="utf-8")
    assert seen_in_browser(tmp_path / "stacked.html", tmp_path)["narrow"]["item_boxes"]
