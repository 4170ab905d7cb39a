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
def test_a_list_cell_stays_a_list_in_a_card_at_800_px(tmp_path):
    """Below 960 px the ledger's rows are cards; a list-valued cell in one (the contradictions table's cards too) keeps
    its items as a small table, with no box and no ": " before each item. The published page with this style sheet;
    with the old one (no rule for the items) the check finds the boxes."""
    import re

    from attnlab.report import CSS
    page = (REPO / "results/full/report.html").read_text(encoding="utf-8")
    styled = re.sub(r"<style>.*?</style>", lambda _: f"<style>{CSS}</style>", page, count=1, flags=re.S)
    (tmp_path / "report.html").write_text(styled, encoding="utf-8")
    seen = seen_in_browser(tmp_path / "report.html", tmp_path)
    assert "table.items" in page and seen["narrow"]["item_boxes"] == [] and seen["wide"]["item_boxes"] == []
    old = CSS.split("/* a list cell inside a card")[0]
    (tmp_path / "old.html").write_text(re.sub(r"<style>.*?</style>", lambda _: f"<style>{old}</style>", page, count=1,
                                              flags=re.S), encoding="utf-8")
    assert seen_in_browser(tmp_path / "old.html", tmp_path)["narrow"]["item_boxes"]
