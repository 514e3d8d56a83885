"""Both pages laid out in a real browser at 1400 px (a desk) and 390 px (a phone reading a shared page),
light and dark: no text clipped, no two texts overlapping, measured from the browser's own boxes.

Debian's chromium through Playwright, as in test_session_page_browser.py (skipped without it, failed
under CI=true). Screenshots of every combination go to test-output/.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.reports.session_page import render_html
from session_watcher.reports.session_page_data import load_model
from tests.oracle import sw
from tests.test_session_page import FIXTURES
from tests.test_session_page_browser import OUT, browser

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = ["browser"]  # the fixture, shared with test_session_page_browser

WIDTHS = (1400, 390)
SCHEMES = ("light", "dark")
SESSIONS = ("258c7280-ae70-4798-800f-63464d01a85d", "ae4a77f8-aedd-4bc1-888f-c94edc91af04", "short")

# Every visible text box on the page: SVG <text> elements and the lines of every HTML text node. A
# box is clipped when it leaves the page (or its SVG) sideways; two boxes overlap when they share
# more than 1 px in both directions.
LAYOUT_JS = """() => {
  const W = document.documentElement.clientWidth;
  const boxes = [];
  for (const t of document.querySelectorAll('svg text')) {
    const r = t.getBoundingClientRect();
    if (r.width > 0 && getComputedStyle(t).visibility !== 'hidden')
      boxes.push({r: r, s: t.textContent, svg: t.ownerSVGElement.getBoundingClientRect()});
  }
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const n = walk.currentNode, el = n.parentElement;
    if (!n.textContent.trim() || el.closest('svg, script, style, #tip')) continue;
    const st = getComputedStyle(el);
    if (st.visibility === 'hidden' || st.display === 'none') continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    for (const r of range.getClientRects()) if (r.width > 0) boxes.push({r: r, s: n.textContent.trim()});
  }
  const say = b => JSON.stringify(b.s.slice(0, 40)) + ' [' + [b.r.left, b.r.top, b.r.right, b.r.bottom]
    .map(v => Math.round(v)).join(',') + ']';
  const clipped = [], overlaps = [];
  for (const b of boxes) {
    const out = b.r.left < -0.5 || b.r.right > W + 0.5 ||
      (b.svg && (b.r.left < b.svg.left - 0.5 || b.r.right > b.svg.right + 0.5 ||
                 b.r.top < b.svg.top - 0.5 || b.r.bottom > b.svg.bottom + 0.5));
    if (out) clipped.push(say(b));
  }
  boxes.sort((a, b) => a.r.top - b.r.top);
  for (let i = 0; i < boxes.length; i++) {
    const a = boxes[i].r;
    for (let j = i + 1; j < boxes.length && boxes[j].r.top < a.bottom; j++) {
      const c = boxes[j].r;
      const ox = Math.min(a.right, c.right) - Math.max(a.left, c.left);
      const oy = Math.min(a.bottom, c.bottom) - Math.max(a.top, c.top);
      if (ox > 1 && oy > 1) overlaps.push(say(boxes[i]) + ' x ' + say(boxes[j]));
    }
  }
  const lum = c => {
    const v = c.match(/[0-9.]+/g).slice(0, 3).map(x => Number(x) / 255)
      .map(x => x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4));
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
  };
  const bs = getComputedStyle(document.body);
  const bg = lum(bs.backgroundColor), fg = lum(bs.color);
  return {texts: boxes.length, clipped: clipped, overlaps: overlaps, scrollWidth:
    document.documentElement.scrollWidth, width: W, background: bg,
    contrast: (Math.max(bg, fg) + 0.05) / (Math.min(bg, fg) + 0.05)};
}"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The session pages of three fixtures and the report page over all of them (with --pages)."""
    root = tmp_path_factory.mktemp("pages")
    out: dict[str, Path] = {}
    for name in SESSIONS:
        path = root / f"session-{name[:8]}.html"
        path.write_text(render_html(load_model(str(FIXTURES / f"{name}.jsonl"))), encoding="utf-8")
        out[f"session-{name[:8]}"] = path
    report = root / "report.html"
    proc = sw("report", "--projects", str(FIXTURES), "--html", str(report), "--pages", "--index", str(root / "i.db"))
    assert proc.returncode == 0, proc.stderr
    out["report"] = report
    return out


@pytest.fixture(params=[(w, s) for w in WIDTHS for s in SCHEMES], ids=lambda p: f"{p[0]}px-{p[1]}")
def view(request: pytest.FixtureRequest, browser: Any) -> Iterator[tuple[Any, int, str, list[str]]]:
    width, scheme = request.param
    ctx = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme, timezone_id="UTC")
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        yield page, width, scheme, errors
    finally:
        ctx.close()


def layout(page: Any) -> dict[str, Any]:
    return dict(page.evaluate(LAYOUT_JS))


@pytest.mark.parametrize("name", ["session-258c7280", "session-ae4a77f8", "session-short", "report"])
def test_no_text_clipped_or_overlapping(view: tuple[Any, int, str, list[str]], pages: dict[str, Path],
                                        name: str) -> None:
    page, width, scheme, errors = view
    page.goto(pages[name].as_uri())
    page.wait_for_load_state("load")
    got = layout(page)
    OUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUT / f"layout-{name}-{width}-{scheme}.png"), full_page=False)
    assert errors == []
    assert got["texts"] > 20
    assert got["width"] <= width
    assert got["scrollWidth"] <= got["width"], "the page scrolls sideways"
    assert got["clipped"] == []
    assert got["overlaps"] == []
    # the scheme is followed, and the text reads on its background
    assert (got["background"] > 0.8) if scheme == "light" else (got["background"] < 0.05)
    assert got["contrast"] >= 7


def test_session_page_story_reads(view: tuple[Any, int, str, list[str]], pages: dict[str, Path]) -> None:
    """The parts the issue named: a bp scale, bp kept inside its strip, a taller x strip, time ticks."""
    page, width, _scheme, errors = view
    page.goto(pages["session-258c7280"].as_uri())
    page.wait_for_load_state("load")
    assert errors == []
    ticks = page.locator(".bp-tick").all_text_contents()
    assert len(ticks) >= 2
    assert all(t.endswith("%") for t in ticks)
    assert page.locator(".bp-line").get_attribute("clip-path") == "url(#bp-clip)"
    strip = page.locator("#head-svg rect.plot").first.bounding_box()
    assert strip["height"] >= 140
    assert strip["x"] + strip["width"] <= width
    times = page.locator(".time-tick").all_text_contents()
    assert len(times) >= 3
    assert len(set(times)) == len(times)
    # every alert has its line; a label only where it fits (here: the gate's at least)
    alerts = page.locator(".gate-mark, .backstop-mark").count()
    labels = page.locator(".alert-label").all_text_contents()
    assert alerts == 3
    assert 1 <= len(labels) <= alerts
    assert labels[0] == "gate"
    # the health breakdown, opened, fits too
    page.click("#grade-badge")
    page.locator("#breakdown").wait_for(state="visible")
    page.wait_for_function("() => getComputedStyle(document.getElementById('breakdown')).maxHeight === '220px'")
    got = layout(page)
    assert got["clipped"] == []
    assert got["overlaps"] == []
    assert got["scrollWidth"] <= got["width"]


def test_report_rows_link_to_pages_that_open(view: tuple[Any, int, str, list[str]], pages: dict[str, Path]) -> None:
    page, _width, _scheme, errors = view
    page.goto(pages["report"].as_uri())
    link = page.locator("#sessions a").first
    link.click()
    page.wait_for_load_state("load")
    page.locator("#waterfall .bar").first.wait_for()
    assert page.url.endswith(".html")
    assert "/report-sessions/" in page.url
    assert errors == []


def test_crowded_reminders_keep_their_labels_apart(view: tuple[Any, int, str, list[str]], tmp_path: Path) -> None:
    """Reminders on eight consecutive calls (as "reminder 7" and "reminder 8" once overlapped): every
    alert keeps its line and tooltip; labels are drawn only where they do not collide."""
    page, _width, _scheme, errors = view
    model = load_model(str(FIXTURES / f"{SESSIONS[0]}.jsonl"))
    for k, row in enumerate(model["story"][100:108], start=3):
        row["alerts"] = [{"kind": "backstop", "reminder": k}]
    path = tmp_path / "crowded.html"
    path.write_text(render_html(model), encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    got = layout(page)
    assert errors == []
    assert got["overlaps"] == []
    assert got["clipped"] == []
    assert page.locator(".backstop-mark").count() == 2 + 8
    labels = page.locator(".alert-label").all_text_contents()
    assert 2 <= len(labels) < 1 + 2 + 8


def test_readme_screenshots_script_draws_both_pages(browser: Any, tmp_path: Path) -> None:
    """tools/screenshots.py (what made docs/img/) still runs, from the fixtures, and draws both pages."""
    import struct
    import subprocess
    import sys

    from tests.test_session_page_browser import REPO

    proc = subprocess.run([sys.executable, str(REPO / "tools" / "screenshots.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in tmp_path.glob("*.png"))
    assert names == ["report-page-dark.png", "report-page.png", "session-page-dark.png", "session-page.png"]
    for name in names:
        head = (tmp_path / name).read_bytes()[:24]
        assert struct.unpack(">II", head[16:24]) == (1400, 900)
    readme = (REPO / "README.md").read_text()
    assert "(docs/img/session-page.png)" in readme
    assert "(docs/img/report-page.png)" in readme


def test_no_x_point_before_a_cache_read(browser: Any, tmp_path: Path) -> None:
    """A cold first call (nothing read from the cache, L = 0) has no position: the x line starts at
    the first call that read the cache, and its tooltip says why."""
    model = load_model(str(FIXTURES / f"{SESSIONS[0]}.jsonl"))
    model["story"][0].update(L=0, x=0.0)
    path = tmp_path / "cold.html"
    path.write_text(render_html(model), encoding="utf-8")
    ctx = browser.new_context(viewport={"width": 1400, "height": 900}, timezone_id="UTC")
    try:
        page = ctx.new_page()
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        d = page.locator(".x-line").get_attribute("d")
        starts = page.evaluate("() => [...document.querySelectorAll('.story-hover')].slice(0, 2)"
                               ".map(r => Number(r.getAttribute('x')))")
        assert float(d.split()[0][1:]) == pytest.approx(starts[1], abs=0.1)
        tip = page.locator(".story-hover").first.get_attribute("data-tip")
        assert "\nx - (no cache read yet)" in tip
    finally:
        ctx.close()
