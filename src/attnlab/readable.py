"""How large a figure's text is as the report shows it at a narrow window, read from the figure's SVG.

A figure is written twice (attnlab.style.save): a PNG at the figure's dpi, which the report embeds, and an
SVG of the same figure, which matplotlib writes in points. The smallest text a reader sees is the smallest
glyph of the SVG, in points, times the PNG's pixels per point, times the factor by which the report shrinks
the PNG to fit its page. In numbers:

* matplotlib's SVG is in points: ``width="936pt"`` with ``viewBox="0 0 936 …"``, so a user unit is a point
  and a glyph of s pt measures s units. Text is drawn as paths (this project leaves ``svg.fonttype`` at
  matplotlib's 'path'): each text is a group scaled by ``scale(k -k)`` from glyphs drawn FONT_SCALE (100)
  units tall, so its size is 100·k pt; a mathtext superscript's glyphs carry their own ``scale(0.7)``
  and are 0.7 times that (its smallest glyph is the one counted). Where text is written as text
  (``svg.fonttype = 'none'``), its ``font-size`` is read instead.
* The PNG is the same figure at its dpi: ``png_px = svg_pt · dpi / 72`` pixels wide (936 pt at dpi 120:
  1,560 px), so a glyph of s pt is ``s · png_px / svg_pt`` pixels of the image (s · 120 / 72 = 1.67 s).
* The report (attnlab.report.figure_html) embeds the PNG in an ``<img>`` with no width or height, and the
  PNG carries no resolution (no pHYs chunk): a browser lays it out at one CSS px per image pixel. Its style
  sheet (report.css) caps it at the text's width (``img { max-width: 100% }``, of the content box; the 1 px
  border lies outside it). At a window of ``window`` px the body's content box is
  ``min(max-width, window − 2 · horizontal padding)``: ``body { font: 15px …; max-width: 1180px;
  padding: 1em 1.5em }`` gives 800 − 2 · 1.5 · 15 = 755 CSS px at 800 (an overlay scrollbar, as the
  referee's 48 % for a 1,560 px figure assumes).
* So the displayed scale is ``min(1, content_px / png_px)`` and a glyph of s pt is shown at
  ``s · png_px / svg_pt · min(1, content_px / png_px) = s · min(png_px, content_px) / svg_pt`` CSS px.
  A figure no wider than the content (755 px: 6.29 in at dpi 120) is shown at its own size, 1.67 px a
  point; a wider one at 755 / svg_pt px a point: 936 pt wide, 6 pt text is 4.8 px.

A picture of a figure drawn into another (attnlab.style.beside_published: the published figure above a
variant's) holds its text as pixels: the picture's ``<image>`` carries the size of its smallest text in
its own pixels in its id (``RASTER_TEXT`` + "8.33px-0", set by attnlab.style.beside_published), and the pixels' size in the
SVG (the image's width against its pixel width) turns that into points like any other text.
"""

from __future__ import annotations

import base64
import math
import re
import struct
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

WINDOW_PX = 800    # the narrowest window the report is read at (issue 70: a referee at 800 px)
READABLE_PX = 8    # the smallest text the report may show at it, in CSS px
FONT_SCALE = 100   # matplotlib.textpath.TextToPath.FONT_SCALE: glyph paths are drawn this many units tall
RASTER_TEXT = "raster-text-"  # an <image>'s id: the smallest text inside the picture, in its pixels
# the report's style sheet, beside this module: the one declaration of it (the report reads it, its key covers it)
STYLE_SHEET = Path(__file__).with_name("report.css")

SVG = "{http://www.w3.org/2000/svg}"
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
SCALE = re.compile(r"scale\(\s*([-\d.e]+)(?:[\s,]+([-\d.e]+))?\s*\)")
MATRIX = re.compile(r"matrix\(\s*([-\d.e]+)[\s,]+([-\d.e]+)[\s,]+([-\d.e]+)[\s,]+([-\d.e]+)")
FONT_SIZE = re.compile(r"font-size:\s*([\d.]+)(px|pt)?|font:\s*(?:[^;]*?\s)?([\d.]+)(px|pt)")
RASTER_ID = re.compile(re.escape(RASTER_TEXT) + r"([\d.]+)px")  # then "-<n>": ids are unique


@dataclass(frozen=True)
class Text:
    """One text of an SVG: its smallest glyph in points (the SVG's user units) and what it says."""

    pt: float
    said: str


def content_px(window: float = WINDOW_PX, css: str | None = None) -> float:
    """The report's content width in CSS px at a window `window` px wide, from its style sheet's `body` rule:
    min(max-width, window − 2 · horizontal padding), `em` in the body's font size."""
    css = STYLE_SHEET.read_text(encoding="utf-8") if css is None else css
    body = re.search(r"(?:^|\})\s*body\s*\{([^}]*)\}", css).group(1)
    declared = dict(re.findall(r"([\w-]+)\s*:\s*([^;]+)", body))
    font = float(re.search(r"([\d.]+)px", declared.get("font", declared.get("font-size", "16px"))).group(1))

    def px(length: str) -> float:
        number, unit = re.fullmatch(r"([\d.]+)(px|em|rem)?", length.strip()).groups()
        return float(number) * (font if unit == "em" else 16 if unit == "rem" else 1)

    padding = declared.get("padding", "0").split()
    horizontal = px(padding[1] if len(padding) > 1 else padding[0])
    if len(padding) == 4:  # top right bottom left
        horizontal = (px(padding[1]) + px(padding[3])) / 2
    wide = window - 2 * horizontal
    return min(wide, px(declared["max-width"])) if "max-width" in declared else wide


def shown_scale(png_px: float, window: float = WINDOW_PX) -> float:
    """How much the report shrinks a PNG `png_px` pixels wide at a window `window` px wide: min(1, content / png)."""
    return min(1.0, content_px(window) / png_px)


def shown_px(pt: float, svg_pt: float, png_px: float, window: float = WINDOW_PX) -> float:
    """A glyph of `pt` points of a figure `svg_pt` points wide, written as a PNG `png_px` pixels wide, in the
    report's CSS px at a window `window` px wide: pt · png_px / svg_pt · shown_scale(png_px)."""
    return pt * png_px / svg_pt * shown_scale(png_px, window)


def _parse(svg: str | bytes | Path) -> ET.Element:
    if isinstance(svg, Path):
        svg = svg.read_bytes()
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    parser.feed(svg.encode() if isinstance(svg, str) else svg)
    return parser.close()


def _scale(transform: str | None) -> float:
    """The last uniform scale of a transform (1 where it has none)."""
    found = SCALE.findall(transform or "")
    return abs(float(found[-1][0])) if found else 1.0


def _png_width(href: str) -> int | None:
    """The pixel width of an inline PNG (data:image/png;base64,…) from its header."""
    if not href.startswith("data:image/png;base64,"):
        return None
    head = base64.b64decode("".join(href.split(",", 1)[1].split())[:32])
    return struct.unpack(">I", head[16:20])[0] if head[12:16] == b"IHDR" else None


def svg_width_pt(svg: str | bytes | Path) -> float:
    """The SVG's width in points (its user units: matplotlib writes width="720pt" and a viewBox of 720)."""
    root = _parse(svg)
    return float(root.get("width").removesuffix("pt"))


def texts(svg: str | bytes | Path) -> tuple[float, list[Text]]:
    """The SVG's width in points and each of its texts, with its smallest glyph in points: text drawn as paths
    (a group scaled scale(k -k), its glyphs <use>d, a superscript's with its own scale), text written as text
    (its font-size), and the text inside a picture (an <image> whose id is RASTER_TEXT + its size in pixels)."""
    root = _parse(svg)
    width = float(root.get("width").removesuffix("pt"))
    found = []
    parents = {child: parent for parent in root.iter() for child in parent}
    for g in root.iter(SVG + "g"):
        transform = g.get("transform") or ""
        scales = SCALE.findall(transform)
        if not scales or not scales[-1][1] or not math.isclose(float(scales[-1][1]), -float(scales[-1][0])):
            continue  # a text drawn as paths is flipped: scale(k -k)
        glyphs = [use for use in g.iter(SVG + "use")]
        if not glyphs:
            continue
        k = abs(float(scales[-1][0])) * FONT_SCALE
        siblings = list(parents.get(g, []))
        before = siblings[siblings.index(g) - 1] if siblings and siblings.index(g) > 0 else None
        said = before.text.strip() if before is not None and before.tag is ET.Comment else ""
        found.append(Text(min(k * _scale(use.get("transform")) for use in glyphs), said))
    for text in root.iter(SVG + "text"):
        sizes = []
        for element in text.iter():
            for declared in (element.get("style") or "", f"font-size: {element.get('font-size')}"
                             if element.get("font-size") else ""):
                for size, unit, font, font_unit in FONT_SIZE.findall(declared):
                    sizes.append(float(size or font))
        if sizes:
            found.append(Text(min(sizes), "".join(text.itertext()).strip()))
    for image in root.iter(SVG + "image"):
        raster = RASTER_ID.match(image.get("id") or "")
        if not raster:
            continue
        matrix = MATRIX.search(image.get("transform") or "")
        if matrix:  # drawn unsampled: the matrix maps its pixels to user units
            a, b, c, d = (float(v) for v in matrix.groups())
            per_pixel = min(math.hypot(a, b), math.hypot(c, d))
        else:
            pixels = _png_width(image.get(XLINK_HREF) or image.get("href") or "")
            per_pixel = float(image.get("width")) / pixels if pixels else math.nan
        found.append(Text(float(raster.group(1)) * per_pixel, "(text inside a picture)"))
    return width, found


@dataclass(frozen=True)
class Reading:
    """A figure's text as the report shows it: its smallest glyph in CSS px at `window`, and which text it is."""

    px: float
    said: str
    scale: float      # the report's shrinking of the PNG at `window`
    svg_pt: float
    png_px: float
    window: float

    @property
    def readable(self) -> bool:
        return self.px >= READABLE_PX - 1e-9

    def __str__(self) -> str:
        return (f"smallest text {self.px:.2f} px at a {self.window:g} px window ({self.said!r}; the {self.png_px:g} px "
                f"wide PNG shown at {self.scale:.0%}, {self.svg_pt:g} pt wide)")


def reading(svg: str | bytes | Path, png_px: float | None = None, window: float = WINDOW_PX) -> Reading:
    """The smallest text of a figure's SVG as the report shows its PNG (`png_px` wide; by default the PNG beside
    an SVG file) at a window `window` px wide."""
    if png_px is None:
        from PIL import Image
        with Image.open(Path(svg).with_suffix(".png")) as image:
            png_px = image.width
    width, found = texts(svg)
    if not found:
        return Reading(math.inf, "", shown_scale(png_px, window), width, png_px, window)
    smallest = min(found, key=lambda t: t.pt)
    return Reading(shown_px(smallest.pt, width, png_px, window), smallest.said, shown_scale(png_px, window), width,
                   png_px, window)


def main(argv: list[str] | None = None) -> None:
    """python -m attnlab.readable figures/full/*.svg: each figure's smallest text at an 800 px window."""
    import argparse
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("svg", nargs="+", type=Path, help="a figure's SVG, its PNG beside it")
    parser.add_argument("--window", type=float, default=WINDOW_PX)
    args = parser.parse_args(argv)
    failed = 0
    for svg in args.svg:
        read = reading(svg, window=args.window)
        failed += not read.readable
        print(f"{'ok ' if read.readable else 'LOW'} {svg}: {read}")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
