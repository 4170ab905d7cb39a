"""The reader's report as headless Chromium lays it out (Debian's chromium; CI installs it): a probe page loads
the report in a 1280 px and an 800 px frame and writes what the browser sees into its own DOM, which Chromium
dumps (the report has no script). Per frame: the sections (id, tables, images, height in px), the page's height,
broken images, the page's
width against the window's, `first_screen` (the window's height, and where the answer's summary sentence and its
link to the ledger end and the words' definitions begin), `split` (verdict words, cells of one number, and numbers
inside any cell that the browser laid out over more than one line), `hidden`: each ledger row's number and
point and each contradictions row's finding that a reader could not see without scrolling sideways (outside the
window, or cut off by a box that scrolls), and `item_boxes`: each item of a list cell laid out as a box of its own
or after a stray ": " label."""

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

PROBE = r"""<!doctype html><html><body>
<iframe id=wide src="REPORT" width=1280 height=900></iframe>
<iframe id=narrow src="REPORT" width=800 height=900></iframe><pre id=out></pre>
<script>
var NUMBER = /-?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?/g;
var ONE_NUMBER = /^-?\d[\d,]*(\.\d+)?(e[-+]?\d+)?( ± \d[\d,]*(\.\d+)?(e[-+]?\d+)?)?$/;
function lines(range) {
  return new Set(Array.from(range.getClientRects()).filter(function (r) { return r.width > 0; })
    .map(function (r) { return Math.round(r.top); })).size;
}
function split(d) {
  var out = [];
  d.querySelectorAll('.verdict, td').forEach(function (e) {
    var r = d.createRange(); r.selectNodeContents(e);
    if ((e.matches('.verdict') || ONE_NUMBER.test(e.textContent.trim())) && lines(r) > 1) out.push(e.textContent);
  });
  var walk = d.createTreeWalker(d.body, NodeFilter.SHOW_TEXT), node, m;
  while ((node = walk.nextNode())) {
    if (!node.parentElement.closest('td')) continue;
    for (NUMBER.lastIndex = 0; (m = NUMBER.exec(node.data));) {
      var r = d.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
      if (lines(r) > 1) out.push(m[0]);
    }
  }
  return out;
}
// seen without scrolling sideways: laid out, its text inside its own cell (not spilling over the next one),
// inside the window, and inside every box above it that clips
function visible(e, width) {
  var r = e.getBoundingClientRect(), range = e.ownerDocument.createRange();
  range.selectNodeContents(e);
  var content = range.getBoundingClientRect();
  if (r.width <= 0 || r.height <= 0 || r.left < 0 || r.right > width + 0.5) return false;
  if (content.width <= 0 || content.left < r.left - 0.5 || content.right > r.right + 0.5) return false;
  for (var a = e.parentElement; a; a = a.parentElement) {
    var style = getComputedStyle(a);
    if (style.overflowX != 'visible') {
      var box = a.getBoundingClientRect();
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5) return false;
    }
  }
  return true;
}
function hidden(d) {
  var width = d.documentElement.clientWidth, out = [], rows = 0;
  d.querySelectorAll('#ledger table.ledger > tbody > tr:not(.head)').forEach(function (tr) {
    rows++;
    ['number', 'point'].forEach(function (label) {
      // the word itself (its cell also folds why it reads it)
      var td = tr.querySelector('td[data-label="' + label + '"] .verdict');
      if (!td || !visible(td, width)) out.push('ledger ' + tr.textContent.slice(0, 40) + ': ' + label);
    });
  });
  // a claim's own line names no finding: its hypotheses' lines below it do
  d.querySelectorAll('#contradictions > div.scroll > table > tbody > tr:not(.head)').forEach(function (tr) {
    var td = tr.querySelector('td:last-child');
    if (td && !td.textContent.trim()) return;
    rows++;
    if (!td || !visible(td, width)) out.push('contradictions ' + tr.textContent.slice(0, 40) + ': finding');
  });
  return {rows: rows, hidden: out};
}
// a list cell's items laid out as cards of their own (a box, a grid) or each after a stray ": " label
function itemBoxes(d) {
  var out = [];
  d.querySelectorAll('table.items td').forEach(function (td) {
    var before = getComputedStyle(td, '::before').content, row = getComputedStyle(td.parentElement).display;
    if ((before != 'none' && before != 'normal') || row != 'table-row') out.push(td.textContent.slice(0, 30));
  });
  return out;
}
function firstScreen(d) {
  function at(selector, edge) { var e = d.querySelector(selector); return e ? e.getBoundingClientRect()[edge] : null; }
  return {height: d.documentElement.clientHeight, answer: at('#answer .answer', 'bottom'),
          ledger_link: at('#answer a[href="#ledger"]', 'bottom'), words: at('#words', 'top')};
}
var seen = {}, pending = 2;
function look(frame) {
  var d = frame.contentDocument, imgs = Array.from(d.images);
  seen[frame.id] = {
    sections: Array.from(d.querySelectorAll('section, nav')).map(function (s) {
      return {id: s.id, tables: s.querySelectorAll('table').length, images: s.querySelectorAll('img').length,
              height: s.getBoundingClientRect().height}; }),
    page_height: d.documentElement.scrollHeight,
    broken: imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); }).length,
    images: imgs.length, scroll_width: d.documentElement.scrollWidth, width: d.documentElement.clientWidth,
    first_screen: firstScreen(d), split: split(d), readable: hidden(d), item_boxes: itemBoxes(d)};
  if (--pending == 0) document.getElementById('out').textContent = JSON.stringify(seen);
}
document.querySelectorAll('iframe').forEach(function (f) { f.onload = function () { look(f); }; });
</script></body></html>"""


def browser() -> str:
    chromium = shutil.which("chromium")
    if chromium is None:
        if os.environ.get("ATTNLAB_REQUIRE_BROWSER"):  # CI installs it: there a missing browser is a failure
            pytest.fail("chromium is not installed")
        pytest.skip("needs Debian's chromium (CI installs it)")
    return chromium


def seen_in_browser(report: Path, work: Path) -> dict:
    """What Chromium lays out of `report` at 1280 px ('wide') and 800 px ('narrow')."""
    probe = work / "probe.html"
    probe.write_text(PROBE.replace("REPORT", report.resolve().as_uri()))
    dom = subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update", "--disable-sync",
                          f"--user-data-dir={work / 'profile'}", "--allow-file-access-from-files",
                          "--window-size=1300,1000", "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    return json.loads(html.unescape(re.search(r'<pre id="out">(.*?)</pre>', dom, re.S).group(1)))
