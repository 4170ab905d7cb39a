"""Every figure's text readable in the report at an 800 px window (issue 70): the smallest glyph of its SVG, in
points, times the PNG's pixels a point, times the report's shrinking of the PNG to its 755 px of text, is at
least 8 CSS px (attnlab.readable). style.save refuses a figure that is not; the published figures are measured
as they are committed; each builder's figure is measured as the pipeline draws it in tests/test_figures.py."""

import io
import re
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import pytest
from PIL import Image

from attnlab import readable, style

REPO = Path(__file__).resolve().parents[1]


def drawn(width_in: float, fontsize: float, mathtext: bool = False):
    fig, ax = plt.subplots(figsize=(width_in, 2), dpi=style.RC["figure.dpi"])
    ax.plot([1, 2], [1, 2])
    ax.set_xticks([1, 2], ["one", "two"], fontsize=9)
    ax.set_yticks([1, 2], ["1", "2"], fontsize=9)
    ax.text(1.5, 1.5, r"small $x^{2}$" if mathtext else "small", fontsize=fontsize)
    return fig


def svg_of(fig, **rc) -> bytes:
    buffer = io.BytesIO()
    with matplotlib.rc_context(rc):
        fig.savefig(buffer, format="svg")
    return buffer.getvalue()


def test_the_content_width_at_800_px_is_read_from_the_report_style_sheet():
    """body { font: 15px …; max-width: 1180px; padding: 1em 1.5em }: 800 − 2 × 1.5 × 15 = 755; a wide window
    stops at max-width; the img rule that lets the report shrink a figure is there."""
    css = readable.STYLE_SHEET.read_text()
    assert readable.content_px() == 755 and readable.content_px(1600) == 1180
    assert re.search(r"(?:^|\})\s*img\s*\{[^}]*max-width:\s*100%", css)
    assert readable.content_px(800, "body { font: 16px serif; padding: 0 2em 0 1em; }") == 800 - 48
    # what the referee measured: claims.png 1,560 px wide shown at 48 %, score_runaway's 1,680 px at 44 %
    assert readable.shown_scale(1560) == pytest.approx(0.484, abs=1e-3)
    assert readable.shown_scale(1680) == pytest.approx(0.449, abs=1e-3)
    assert readable.shown_scale(700) == 1  # narrower than the page: its own size
    # 6-point text of a 13 in figure at dpi 120 (936 pt, 1,560 px): 6 × 755 / 936 = 4.84 px
    assert readable.shown_px(6, 936, 1560) == pytest.approx(4.84, abs=0.01)
    assert readable.shown_px(6, 504, 840) == pytest.approx(6 * 755 / 504)  # 7 in: 8.99 px
    assert readable.shown_px(6, 432, 720) == pytest.approx(10)  # 6 in, unshrunk: 120 / 72 px a point


def test_the_text_sizes_of_an_svg_are_read_from_its_glyphs():
    """Text drawn as paths (matplotlib's default, this project's): each text's size from its group's scale, a
    mathtext superscript at 0.7 of it; text written as text: its font-size; every text found, each named."""
    fig = drawn(6, 7, mathtext=True)
    width, texts = readable.texts(svg_of(fig))
    assert width == 432
    sizes = {t.said: t.pt for t in texts}
    assert sizes["one"] == pytest.approx(9) and sizes["small $x^{2}$"] == pytest.approx(7 * 0.7)
    width, texts = readable.texts(svg_of(fig, **{"svg.fonttype": "none"}))
    sizes = {t.said: t.pt for t in texts}
    assert sizes["one"] == pytest.approx(9) and min(sizes.values()) < 7
    plt.close(fig)


def test_save_refuses_a_figure_whose_text_the_report_would_show_under_8_px(tmp_path):
    """13 in wide, 6-point text: shown at 48 %, 4.8 px — refused, nothing written. The same text on a figure no
    wider than the page (shown at its own size: 10 px) is saved."""
    with plt.rc_context(style.RC):
        wide = drawn(13, 6)
        with pytest.raises(style.Unreadable, match=r"smallest text 4\.8\d px .*'small'"):
            style.save(wide, tmp_path / "wide.png")
        assert not list(tmp_path.iterdir())
        narrow = drawn(6, 6)
        style.save(narrow, tmp_path / "narrow.png")
    shown = readable.reading(tmp_path / "narrow.svg")
    assert shown.readable and shown.px == pytest.approx(10) and shown.said == "small" and shown.scale == 1
    assert Image.open(tmp_path / "narrow.png").width == 720
    plt.close("all")


def test_the_text_inside_a_variants_picture_is_measured(tmp_path):
    """A variant's figure draws the published figure and its own as pictures: their text, in pixels, is named in
    each picture's id and read at the pictures' size in the SVG."""
    with plt.rc_context(style.RC):
        style.save(drawn(6, 7), tmp_path / "published.png")
        both = style.beside_published(tmp_path / "published.png", drawn(6, 6), "lr=1e-3")
        style.save(both, tmp_path / "variant.png")
    _, texts = readable.texts(tmp_path / "variant.svg")
    pictures = [t.pt for t in texts if t.said == "(text inside a picture)"]
    assert len(pictures) == 2
    # each picture's smallest text (7 and 6 pt), a little smaller as drawn inside the stacked figure
    assert 6.3 < pictures[0] <= 7 and 5.4 < pictures[1] <= 6
    assert readable.reading(tmp_path / "variant.svg").said == "(text inside a picture)"
    plt.close("all")


PUBLISHED = sorted(REPO.glob("figures/*/*.svg"))


@pytest.mark.parametrize("svg", PUBLISHED, ids=[f"{p.parent.name}/{p.stem}" for p in PUBLISHED])
def test_every_published_figure_is_readable_at_800_px(svg):
    """The committed figures as the report shows them: their smallest text at least 8 px at an 800 px window."""
    shown = readable.reading(svg)
    assert shown.readable, f"{svg.relative_to(REPO)}: {shown}"
