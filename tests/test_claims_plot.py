"""The claims plot: every claim of one number as ours ÷ chapter with its interval and the rule's band, in the
colour and mark of its number's word (the report's); the rest counted as left out; the title counts the words of
both verdict columns apart; in a second figure, a panel for each claim whose number DIFFERS or point FAILS; no word
of the old combined verdict anywhere; the same PNG and SVG bytes from the same ledger."""

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection

from attnlab import readable, style
from attnlab.claims import plot
from attnlab.claims.render import describe_check
from attnlab.claims.rules import NUMBER_WORDS

REPO = Path(__file__).resolve().parents[1]
FULL_LEDGER = REPO / "results" / "full" / "claims.csv"

# id, chapter, reproduced, interval, rule, number, point: as `python -m attnlab.claims check` writes them
CLAIMS = [
    ("t.no_context", "59.71", "60.1 ± 0.4814", "[58.91, 61.3]", "within 1 %", "OPEN", "–"),
    ("t.dilution", "4", "4.146 ± 0.0153", "[4.108, 4.184]", "within ±0.5; conclusion: far worse", "AGREES", "HOLDS"),
    ("u.final_std", "5,147", "137.62 ± 5.961", "[122.81, 152.43]", "within 20 %; conclusion: runs away",
     "DIFFERS", "FAILS"),
    ("u.characters", "1,115,394", "1,115,394", "", "exact", "AGREES", "–"),
    ("u.split", "[0.9, 0.1]", "[0.9, 0.1]", "", "within ±1e-05", "AGREES", "–"),  # a list
    ("u.third", "nearly a third", "0.3102", "", "between 0.3 and 0.3333", "AGREES", "–"),  # words
    ("u.entropy", "0", "0.02628 ± 0.004758", "[0.01447, 0.0381]", "within ±0.05", "AGREES", "–"),  # no ratio
    ("u.absent", "3", "–", "", "within 1 %", "NOT TESTED", "–"),  # its table was not made
]
LEDGER = pd.DataFrame([{"id": i, "table": i.split(".")[0], "chapter": c, "reproduced": r, "interval": iv, "rule": rule,
                        "number": n, "point": p, "profile": "full"} for i, c, r, iv, rule, n, p in CLAIMS])
# the words of the combined verdict the two columns replaced: none may come back
OLD_WORDS = ("MATCH", "CONSISTENT", "UNRESOLVED", "CONCLUSION HOLDS", "INCONCLUSIVE", "NOT JUDGED", "SAME AS PUBLISHED",
             "MOVED", "NOT MEASURABLE", "CONTRADICTED", "MISSING")


def test_each_claim_of_one_number_is_drawn_as_a_ratio_and_the_rest_counted():
    drawn, left_out = plot.ratios(LEDGER)
    assert list(drawn["id"]) == ["t.no_context", "t.dilution", "u.final_std", "u.characters"]
    first = drawn.iloc[0]
    assert (first.ratio, first.low, first.high) == pytest.approx((60.1 / 59.71, 58.91 / 59.71, 61.3 / 59.71))
    assert drawn.iloc[3][["ratio", "low", "high"]].tolist() == [1, 1, 1]  # one seed: no interval
    assert drawn["band"].tolist()[:3] == pytest.approx([0.01, 0.5 / 4, 0.2]) and pd.isna(drawn["band"].iloc[3])
    assert left_out == {"not a single number (words or a list)": 2, "with the chapter's value 0 (no ratio)": 1,
                        "not measured": 1}


@pytest.mark.parametrize("check, chapter, band", [
    ({"kind": "relative", "tolerance": 0.1}, 18, 0.1),
    ({"kind": "relative", "tolerance": 0.015}, -3, 0.015),
    ({"kind": "absolute", "tolerance": 0.5}, 4, 0.125),
    ({"kind": "absolute", "tolerance": 1e-05}, -0.5, 2e-05),
    ({"kind": "absolute", "tolerance": 2000}, 1e6, 0.002),  # written 2,000
    # not a band about the chapter's number
    ({"kind": "relative", "tolerance": 0.05, "to": {"column": "ppl"}}, 3.91, None),
    ({"kind": "exact"}, 768, None),
    ({"kind": "between", "low": 0.3, "high": 0.3333}, 0.3, None),
])
def test_the_band_is_read_from_the_rule_as_the_ledger_writes_it(check, chapter, band):
    for rule in (describe_check(check), describe_check(check) + "; conclusion: within 1 % of the other"):
        assert plot.tolerance(rule, chapter) == (pytest.approx(band) if band else None)


def headline(fig) -> tuple[str, str]:
    title, subtitle = (t.get_text() for t in fig.texts + fig.artists if t.get_gid() == style.HEADLINE)
    return title, subtitle


def test_the_figure_counts_both_columns_and_marks_each_number_as_the_report_does():
    with plt.rc_context(style.RC):
        fig = plot.claims_figure(LEDGER)
        style.layout(fig)
    title, subtitle = headline(fig)
    # the words in the ledger's order, numbers and points apart; no combined word
    assert title == "Of the chapter's 8 numbers, 5 AGREES, 1 DIFFERS, 1 OPEN, 1 NOT TESTED; of its 2 points, 1 HOLDS, 1 FAILS"
    assert "4 numeric claims drawn" in subtitle
    assert ("left out: 2 not a single number (words or a list), 1 with the chapter's value 0 (no ratio), "
            "1 not measured") in subtitle
    (ax,) = fig.axes  # the ratios; the panels of the claims that do not come back are the next figure
    marks = {line.get_label(): line for line in ax.lines if line.get_label() in NUMBER_WORDS}
    assert set(marks) == {"AGREES", "OPEN", "DIFFERS"}
    for word, line in marks.items():
        assert line.get_color() == style.NUMBER_COLOURS[word]
        assert line.get_marker() == f"${style.NUMBER_MARKS[word]}$"
    shown = [t.get_text() for t in fig.texts + fig.artists + [t for a in fig.axes for t in a.texts]]
    shown += [a.get_title(loc="left") for a in fig.axes] + [t.get_text() for t in fig.legends[0].get_texts()]
    assert not [w for w in OLD_WORDS for t in shown if w in t]
    assert len([c for c in ax.collections if isinstance(c, PolyCollection) and c.get_label() == plot.BAND]) == 3
    assert ax.get_xscale() == "log"  # 137.62 / 5,147 = 0.027 to 1.04: more than a factor of ten
    assert [t.get_text() for t in ax.get_yticklabels()] == ["t", "no_context", "dilution", "u", "final_std",
                                                            "characters"]
    plt.close(fig)


def test_the_axis_is_symmetric_log_where_an_interval_reaches_below_zero():
    ledger = pd.concat([LEDGER, pd.DataFrame([{"id": "u.cost", "table": "u", "chapter": "18", "reproduced": "13.26",
                                               "interval": "[-0.5651, 27.08]", "rule": "within 10 %",
                                               "number": "OPEN", "point": "–", "profile": "full"}])])
    with plt.rc_context(style.RC):
        fig = plot.claims_figure(ledger)
    assert fig.axes[0].get_xscale() == "symlog"
    plt.close(fig)


def test_the_published_ledger_title_states_its_counts():
    if not FULL_LEDGER.exists():
        pytest.skip("full results not published")
    ledger = pd.read_csv(FULL_LEDGER, keep_default_na=False)
    numbers, points = ledger["number"].value_counts(), ledger["point"].value_counts()
    drawn, left_out = plot.ratios(ledger)
    assert len(drawn) + sum(left_out.values()) == len(ledger) and len(drawn) > len(ledger) / 2
    title = plot.finding(ledger)
    assert title.startswith(f"Of the chapter's {len(ledger)} numbers, {numbers['AGREES']} AGREES")
    assert f"{numbers.get('DIFFERS', 0)} DIFFERS" in title and f"{points.get('HOLDS', 0)} HOLDS" in title


@pytest.mark.slow
def test_the_cli_writes_the_same_png_and_svg_every_time(tmp_path):
    ledger = tmp_path / "claims.csv"
    LEDGER.to_csv(ledger, index=False)
    for folder in ("a", "b"):
        plot.main(["--ledger", str(ledger), "--out", str(tmp_path / folder / "claims.png")])
    for name in ("claims.png", "claims.svg", "claims_missed.png", "claims_missed.svg"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert b"<svg" in (tmp_path / "a" / "claims.svg").read_bytes()[:1000]


def test_every_claim_that_does_not_come_back_has_a_panel_in_its_own_units():
    """Each claim whose number DIFFERS or whose point FAILS gets a panel (those whose number DIFFERS first), lists
    and chapter values of 0 or words included (left out of the ratios): our seeds' spread, our mean's interval,
    the chapter's number, both words and the seed count."""
    ledger = pd.concat([LEDGER, pd.DataFrame([
        {"id": "u.pair", "table": "u", "chapter": "0.7", "reproduced": "[0.1973 ± 0.2086, 0.1557 ± 0.1970]",
         "interval": "[[0.1688, 0.2258], [0.1288, 0.1827]]", "rule": "within ±0.1; conclusion: above 0.5",
         "number": "OPEN", "point": "FAILS", "seeds": 208, "profile": "full"},
        {"id": "u.words", "table": "u", "chapter": "weight on the adjective", "reproduced": "[-0.44 ± 0.39, -0.43 ± 0.39]",
         "interval": "[[-0.49, -0.38], [-0.49, -0.38]]", "rule": "> 0.1", "number": "DIFFERS", "point": "–",
         "seeds": 208, "profile": "full"}])]).assign(seeds=lambda d: d["seeds"].fillna(7).astype(int).astype(str))
    panels = {p["id"]: p for p in plot.missed(ledger)}
    assert list(panels) == ["u.final_std", "u.words", "u.pair"]  # an OPEN number with no failing point has none
    assert panels["u.pair"]["chapter"] == [0.7, 0.7] and panels["u.pair"]["intervals"][1] == (0.1288, 0.1827)
    assert panels["u.words"]["chapter"] is None and panels["u.final_std"]["values"] == [(137.62, 5.961)]
    with plt.rc_context(style.RC):
        fig = plot.missed_figure(ledger)
    titles = {ax.get_title(loc="left").split("\n")[0]: ax for ax in fig.axes}
    assert set(titles) == set(panels)
    pair = titles["u.pair"]
    assert "number OPEN · point FAILS · 208 seeds" in pair.get_title(loc="left")
    assert pair.get_title(loc="left").split("\n")[1] == "number OPEN · point FAILS · 208 seeds"
    assert titles["u.words"].get_title(loc="left").split("\n")[1] == "number DIFFERS · 208 seeds"  # no point stated
    (chapter,) = [line for line in pair.lines if line.get_marker() == "D"]  # the chapter's number, at each value
    assert list(chapter.get_xdata()) == [0.7, 0.7]
    assert len(pair.collections) == 2  # the seeds' spread and the mean's interval, a segment per value each
    assert "chapter: weight on the adjective" in titles["u.words"].get_title(loc="left")
    plt.close(fig)


def test_the_published_ledger_fits_one_screen_page_with_the_chapters_mark_on_every_panel():
    """Each figure at most 2,000 pixels tall and a page's width (attnlab.readable: its text readable at 800 px);
    every panel has the chapter's diamond: its number, the numbers its words print (a range's ends, a difference)
    or, for words alone, the mark in the corner beside the words in the title."""
    if not FULL_LEDGER.exists():
        pytest.skip("full results not published")
    ledger = pd.read_csv(FULL_LEDGER, keep_default_na=False)
    with plt.rc_context(style.RC):
        ratios, panels = plot.claims_figure(ledger), plot.missed_figure(ledger)
    for fig in (ratios, panels):
        assert fig.get_size_inches()[1] * fig.dpi <= 2000 and fig.get_size_inches()[0] == plot.WIDTH
    assert len(panels.axes) == len(plot.missed(ledger))
    assert all(any(line.get_marker() == "D" for line in ax.lines) for ax in panels.axes)
    plt.close(ratios)
    plt.close(panels)


@pytest.mark.parametrize("profile", ["quick", "full"])
def test_both_figures_of_a_published_ledger_are_readable_at_800_px(profile, tmp_path):
    """Written as the pipeline writes them (style.save refuses a figure that is not), each figure's smallest text
    as the report shows it at an 800 px window is at least 8 px (attnlab.readable)."""
    ledger = REPO / "results" / profile / "claims.csv"
    if not ledger.exists():
        pytest.skip(f"{profile} results not published")
    plot.main(["--ledger", str(ledger), "--out", str(tmp_path / "claims.png")])
    for name in ("claims", "claims_missed"):
        shown = readable.reading(tmp_path / f"{name}.svg")
        assert shown.readable, f"{name}: {shown}"


def test_a_ledger_whose_claims_all_come_back_still_writes_the_panels_figure(tmp_path):
    """The workflow declares both figures: with nothing to draw, the panels' figure says so."""
    ledger = tmp_path / "claims.csv"
    LEDGER[~LEDGER["number"].eq("DIFFERS") & ~LEDGER["point"].eq("FAILS")].to_csv(ledger, index=False)
    plot.main(["--ledger", str(ledger), "--out", str(tmp_path / "claims.png")])
    assert all((tmp_path / name).exists() for name in ("claims.png", "claims.svg", "claims_missed.png",
                                                        "claims_missed.svg"))
    assert "No measured claim" in (tmp_path / "claims_missed.svg").read_text()  # the title, as the SVG names it


@pytest.mark.parametrize("words, expected", [("undivided marginally ahead (−0.4 < difference < 0)", ("range", [-0.4, 0])),
                                             ("average above block (100.0 − 91.7)", ("difference", [100.0 - 91.7])),
                                             ("weight on the adjective", None)])
def test_the_numbers_the_chapters_words_print_are_read(words, expected):
    assert plot.chapter_in_words(words) == (expected and (expected[0], pytest.approx(expected[1])))
