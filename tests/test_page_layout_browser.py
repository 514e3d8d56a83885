"""Both pages laid out in a real browser at 1400 px (a desk) and 390 px (a phone reading a shared page),
light and dark: no text clipped, no two texts overlapping, measured from the browser's own boxes.

Debian's chromium through Playwright, as in test_session_page_browser.py (skipped without it, failed
under CI=true). Screenshots of every combination go to test-output/.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.core.numbers import duration
from session_watcher.reports.session_page_data import load_model
from tests.builders import render_html
from tests.oracle import sw
from tests.test_session_page import FIXTURES
from tests.test_session_page_browser import OUT, browser, open_all

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["browser"]  # the fixture, shared with test_session_page_browser

WIDTHS = (1400, 390)
SCHEMES = ("light", "dark")
SESSIONS = ("258c7280-ae70-4798-800f-63464d01a85d", "ae4a77f8-aedd-4bc1-888f-c94edc91af04", "short")
CODEX = "019f1f6f-311c-7543-b0f9-f126da3c5434"  # a rollout of tests/fixtures/codex

# Every visible text box on the page: SVG <text> elements and the lines of every HTML text node (in a
# folded <details>, its summary's alone: the browser still gives the folded lines boxes). A
# box is clipped when it leaves the page (or its SVG) sideways; two boxes overlap when they share
# more than 1 px in both directions.
LAYOUT_JS = r"""() => {
  const W = document.documentElement.clientWidth;
  const boxes = [];
  for (const t of document.querySelectorAll('svg text')) {
    const r = t.getBoundingClientRect();
    if (r.width > 0 && getComputedStyle(t).visibility !== 'hidden')
      boxes.push({r: r, s: t.textContent, svg: t.ownerSVGElement.getBoundingClientRect(), el: t});
  }
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const n = walk.currentNode, el = n.parentElement;
    if (!n.textContent.trim() || el.closest('svg, script, style, #tip')) continue;
    const shut = el.closest('details:not([open])');  // folded: only its summary is drawn
    if (shut && !el.closest('summary')) continue;
    const st = getComputedStyle(el);
    if (st.visibility === 'hidden' || st.display === 'none') continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    for (const r of range.getClientRects()) if (r.width > 0) boxes.push({r: r, s: n.textContent.trim(), node: n});
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
  // the size text is drawn at: its font size times the scale its SVG is drawn at
  const small = [];
  for (const b of boxes) {
    const el = b.node ? b.node.parentElement : b.el;
    let px = parseFloat(getComputedStyle(el).fontSize);
    if (b.el) { const m = b.el.getScreenCTM(); px *= Math.sqrt(Math.abs(m.a * m.d - m.b * m.c)); }
    if (px < 8.995) small.push(say(b) + ' ' + px.toFixed(2) + 'px');
  }
  // a number and its unit on two lines (`100` / `%`)
  const broken = [];
  const unit = /\d[\d.,]*[ \u00a0](%|min\b|h\b|s\b)/g;
  const walk2 = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk2.nextNode()) {
    const n = walk2.currentNode, el = n.parentElement;
    if (el.closest('script, style, #tip') || getComputedStyle(el).display === 'none') continue;
    for (const m of n.textContent.matchAll(unit)) {
      const range = document.createRange();
      range.setStart(n, m.index); range.setEnd(n, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
      if (tops.size > 1) broken.push(JSON.stringify(m[0]) + ' in ' + JSON.stringify(n.textContent.slice(0, 60)));
    }
  }
  return {texts: boxes.length, clipped: clipped, overlaps: overlaps, small: [...new Set(small)], broken: broken,
    scrollWidth: document.documentElement.scrollWidth, width: W, background: bg,
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
    rollout = FIXTURES.parent / "codex" / f"rollout-{CODEX}.jsonl"  # a Codex thread's page: calls without tools
    path = root / f"session-{CODEX[:8]}.html"
    path.write_text(render_html(load_model(str(rollout))), encoding="utf-8")
    out[f"session-{CODEX[:8]}"] = path
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


@pytest.mark.parametrize("name", ["session-258c7280", "session-ae4a77f8", "session-short", "session-019f1f6f",
                                  "report"])
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
    assert got["small"] == [], "text drawn under 9 px"
    assert got["broken"] == [], "a number and its unit on two lines"
    # the scheme is followed, and the text reads on its background
    assert (got["background"] > 0.8) if scheme == "light" else (got["background"] < 0.05)
    if name == "report":  # and opened, the scatter's table of figures under it (`<details>`)
        assert page.evaluate("() => document.querySelectorAll('details.points-table').length") == 1
        page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
        opened = layout(page)
        assert opened["texts"] > got["texts"]
        assert (opened["clipped"], opened["overlaps"], opened["small"]) == ([], [], [])
        assert opened["scrollWidth"] <= opened["width"], "the page scrolls sideways"
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
    story = load_model(str(FIXTURES / f"{SESSIONS[0]}.jsonl"))["story"]
    assert alerts == sum(1 for r in story for a in r["alerts"] if a["kind"] in ("gate", "backstop")) >= 3
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
    others = sum(1 for r in model["story"][:100] + model["story"][108:] for a in r["alerts"] if a["kind"] == "backstop")
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
    assert page.locator(".backstop-mark").count() == others + 8
    labels = page.locator(".alert-label").all_text_contents()
    assert 2 <= len(labels) < 1 + others + 8


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
    assert names == ["report-page-dark.png", "report-page-phone.png", "report-page.png", "session-page-dark.png",
                     "session-page-phone.png", "session-page.png"]
    for name in names:
        head = (tmp_path / name).read_bytes()[:24]
        assert struct.unpack(">II", head[16:24]) == (390 if "phone" in name else 1400, 900)
    assert "(docs/img/session-page.png)" in (REPO / "README.md").read_text()  # the README's one picture
    pages = (REPO / "docs" / "pages.md").read_text()
    assert "(img/session-page.png)" in pages
    assert "(img/report-page.png)" in pages


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


# ----------------------------------------------------------------------------- the waterfall's labels, legend, turns

CUT = set(" \t/\\-_.:|,;()[]{}=\"'<>*")  # where a label may be cut (session_page.js BOUNDARY)


def cut_at_boundaries(shown: str, full: str) -> bool:
    """`shown` is `full`, or pieces of it in order with an ellipsis for each cut, every piece starting
    and ending at a boundary (a space, a path separator, punctuation) or at an end of `full`."""
    if "…" not in shown:
        return shown == full
    pieces = shown.split("…")

    def whole(at: int, piece: str) -> bool:
        end = at + len(piece)
        return (at == 0 or full[at - 1] in CUT or piece[0] in CUT) and \
            (end == len(full) or full[end] in CUT or piece[-1] in CUT)

    def place(k: int, pos: int) -> bool:  # pieces[k:] fit in full[pos:], in order
        if k == len(pieces):
            return True
        piece = pieces[k]
        if not piece:
            return place(k + 1, pos)
        if k == 0:
            return full.startswith(piece) and whole(0, piece) and place(1, len(piece))
        if k == len(pieces) - 1:
            at = len(full) - len(piece)
            return at >= pos and full.endswith(piece) and whole(at, piece)
        at = full.find(piece, pos)
        while at >= 0:
            if whole(at, piece) and place(k + 1, at + len(piece)):
                return True
            at = full.find(piece, at + 1)
        return False

    return place(0, 0)


def test_cut_at_boundaries_can_fail() -> None:
    assert cut_at_boundaries("Read …\\color\\gradient.go", "Read D:\\src\\color\\gradient.go")
    assert cut_at_boundaries("Bash find / -iname…", 'Bash find / -iname "*hcl" | head')
    assert not cut_at_boundaries("WebS…curity", "WebSearch TLS security")
    assert not cut_at_boundaries("Read D:\\oh-my-po…rc\\color\\gradient.go",
                                 "Read D:\\oh-my-posh\\src\\color\\gradient.go")
    assert not cut_at_boundaries("Bash ls", "Bash ls -la")
    assert cut_at_boundaries("Write …project…", "Write /home/u/projects/lib/project_review_live.ex")
    assert not cut_at_boundaries("Write …projec…", "Write /home/u/projects/lib/project_review_live.ex")


@pytest.fixture(scope="module")
def long_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Session pages of real sessions a user meets: the 326-call one with `D:\\` paths (an 8,137 px
    waterfall before it folded by turn), the one with `<synthetic>` records (its header said 290
    calls, the CLI 288), and the three long fixtures."""
    from tests.calibration import unpack

    root = tmp_path_factory.mktemp("long-pages")
    out: dict[str, Path] = {}
    for path in [unpack(LONG, root), unpack(SYNTHETIC, root), *(FIXTURES / f"{s}.jsonl" for s in SESSIONS[:2])]:
        html = root / f"session-{path.name[:8]}.html"
        html.write_text(render_html(load_model(str(path))), encoding="utf-8")
        out[path.name[:8]] = html
        out[path.name[:8] + ".jsonl"] = path
    return out


LONG = "6878eb98-fd0b-43e6-82a0-ab8b38b612dc"
SYNTHETIC = "08940314-9e93-46b1-a598-06bada65ed55"
LABELS_JS = """() => [...document.querySelectorAll('#waterfall .layer-bars > text.lbl')]
  .map(t => [t.textContent, (t.getAttribute('data-tip') || '').split('\\n')[0]])"""


def short_model(model: str | None) -> str:
    return re.sub(r"-\d{8}$", "", (model or "API call").removeprefix("claude-"))


def opened(browser: Any, page_file: Path, width: int) -> Any:
    ctx = browser.new_context(viewport={"width": width, "height": 900}, timezone_id="UTC")
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(page_file.as_uri())
    page.wait_for_load_state("load")
    page.errors = errors
    return page


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["6878eb98", "08940314", "258c7280"])
def test_waterfall_labels_are_cut_between_words(browser: Any, long_pages: dict[str, Path], name: str,
                                                width: int) -> None:
    """Every row's label, all turns open: whole where it fits, else cut at a space, a path separator
    or punctuation (a path keeps its file's name: `Read …\\color\\gradient.go`), and the page lays
    out with no clipped, overlapping or too small text."""
    page = opened(browser, long_pages[name], width)
    try:
        open_all(page)
        labels = page.evaluate(LABELS_JS)
        assert len(labels) == len(load_model(str(long_pages[name + ".jsonl"]), with_story=False)["rows"])
        bad = []
        for drawn, tip in labels:
            shown = drawn.strip()
            if tip.startswith("API call #"):
                number, _, model = tip.removeprefix("API call ").partition(" · ")
                full = f"{number} {short_model(model)}"
                ok = shown == number or cut_at_boundaries(shown, full)
            else:
                ok = cut_at_boundaries(shown, tip)
            if not ok:
                bad.append((shown, tip))
        assert bad == []
        assert any("…" in shown for shown, _ in labels)  # some were cut (and the rule checked)
        got = layout(page)
        assert (got["clipped"], got["overlaps"], got["small"], got["broken"]) == ([], [], [], [])
        assert got["scrollWidth"] <= got["width"]
        assert page.errors == []
    finally:
        page.context.close()


LEGEND_JS = """() => {
  const hex = c => '#' + c.match(/\\d+/g).slice(0, 3).map(v => Number(v).toString(16).padStart(2, '0')).join('');
  const legend = new Set([...document.querySelectorAll('#legend i')]
    .map(i => hex(getComputedStyle(i).backgroundColor)));
  const used = {};
  const add = (what, c) => { if (c && c !== 'transparent') (used[c.toLowerCase()] ||= new Set()).add(what); };
  document.querySelectorAll('#waterfall .bar').forEach(b => add(b.getAttribute('class'), b.getAttribute('fill')));
  document.querySelectorAll('.lamp-zone').forEach(b => add('lamp', b.getAttribute('fill')));
  document.querySelectorAll('.gate-mark, .backstop-mark, .cold-mark, .hold-mark, .restart-mark, .x-line, ' +
                            '.xsweet-line, .bp-line')
    .forEach(b => add(b.getAttribute('class'), b.getAttribute('stroke')));
  return {legend: [...legend], missing: Object.entries(used).filter(([c]) => !legend.has(c))
    .map(([c, w]) => c + ' ' + [...w].join(',')), kinds: Object.values(used).map(w => [...w]).flat()};
}"""


@pytest.mark.parametrize("name", ["6878eb98", "258c7280"])
def test_the_legend_has_every_colour_drawn(browser: Any, long_pages: dict[str, Path], name: str) -> None:
    """Each colour a bar, a lamp zone, a line or an alert mark is drawn in has its swatch in the
    legend (the sub-agent bars had none)."""
    page = opened(browser, long_pages[name], 1400)
    try:
        open_all(page)
        got = page.evaluate(LEGEND_JS)
        assert got["missing"] == []
        assert any("tool-Task" in k or "tool-Agent" in k for k in got["kinds"])  # a sub-agent was drawn
        assert page.locator("#legend").inner_text().count("sub-agent") == 1
    finally:
        page.context.close()


@pytest.mark.parametrize("name", ["6878eb98", "08940314", "258c7280", "ae4a77f8"])
def test_the_header_counts_what_the_cli_counts(browser: Any, long_pages: dict[str, Path], name: str) -> None:
    """calls, compactions and the context in the page's header are the ones `replay` gives (the
    client's `<synthetic>` records are no API call for either)."""
    doc = json.loads(sw("replay", "--json", str(long_pages[name + ".jsonl"])).stdout)
    page = opened(browser, long_pages[name], 1400)
    try:
        stats = dict(page.evaluate("() => [...document.querySelectorAll('#stats .stat')].map(s => "
                                   "[s.firstChild.textContent.trim(), s.querySelector('b').textContent])"))
        assert stats["calls"] == str(doc["calls"])
        assert stats["compactions"] == str(doc["compactions"])
        tip = page.locator("#stats b[data-tip*='tokens']").get_attribute("data-tip")
        cp = doc["contextPressure"]
        assert tip.startswith(f"{cp['pressureTokens']:,} of {cp['contextWindow']:,}\u00a0tokens")
    finally:
        page.context.close()
    if name == "08940314":
        assert doc["calls"] == 288


def test_the_health_breakdown_shows_the_values_behind_the_grades(browser: Any, long_pages: dict[str, Path]) -> None:
    h = load_model(str(long_pages["258c7280.jsonl"]), with_story=False)["health"]
    page = opened(browser, long_pages["258c7280"], 390)
    try:
        page.click("#grade-badge")
        page.locator("#breakdown").wait_for(state="visible")
        rows = page.evaluate("() => [...document.querySelectorAll('#breakdown .bd-row')].map(r => "
                             "[r.querySelector('.bd-name').textContent, r.querySelector('.bd-grade').textContent, "
                             "r.querySelector('.bd-value').textContent])")
        want = [f"{h['fillPercent']:.1f}\u00a0%", str(h["compactionCount"]), f"{h['rereadRatio']:.2f}",
                f"{h['errorAcceleration']:.2f}x", f"{h['toolEfficiency']:.2f}x"]
        assert [r[2] for r in rows] == want
        assert [r[1] for r in rows] == [s["grade"] for s in h["signals"]]
        assert rows[2] == ["Re-reads", "D", "0.26"]
        page.wait_for_function("() => getComputedStyle(document.getElementById('breakdown')).maxHeight === '220px'")
        got = layout(page)
        assert (got["clipped"], got["overlaps"], got["small"]) == ([], [], [])
    finally:
        page.context.close()


def test_the_health_breakdown_says_why_a_signal_has_no_number(browser: Any, tmp_path: Path) -> None:
    """A session of few tool calls: a signal without a number shows `-`, and its tip says why in
    `health`'s words (it said "no error rate to compare yet" for too few calls and no errors alike)."""
    from session_watcher.core import health

    sample = Path(health.__file__).parent.parent / "data" / "sample-session.jsonl"
    short = tmp_path / "short.jsonl"
    short.write_text("".join(sample.read_text().splitlines(keepends=True)[:6]))
    html = tmp_path / "s.html"
    html.write_text(render_html(load_model(str(short))), encoding="utf-8")
    page = opened(browser, html, 390)
    try:
        page.click("#grade-badge")
        page.locator("#breakdown").wait_for(state="visible")
        rows = page.evaluate("() => [...document.querySelectorAll('#breakdown .bd-value')].map(v => "
                             "[v.textContent, v.dataset.tip])")
        assert [shown for shown, _ in rows] == ["14.1\u00a0%", "0", "-", "-", "-"]
        assert rows[2][1].startswith("Re-reads: no file read yet (sub-score 100/100")
        assert rows[3][1].startswith("Error Rate: under 4 tool calls (sub-score 100/100")
        assert rows[4][1].startswith("Tool Efficiency: under 4 tool calls (")
        assert page.errors == []
    finally:
        page.context.close()


def test_bp_is_drawn_past_the_sweet_spot_only(browser: Any, long_pages: dict[str, Path]) -> None:
    """bp is a position on the right arm: before the sweet spot (a segment's start, where it ran to
    80-110 % while the lamp was green) nothing is drawn, and the strip says so."""
    model = load_model(str(long_pages["6878eb98.jsonl"]))
    right = [r for r in model["story"] if r["L"] and r["br"] is not None and r["x"] >= r["xSweet"]]
    left = [r for r in model["story"] if r["L"] and r["br"] is not None and r["x"] < r["xSweet"]]
    assert left
    assert right
    assert max(r["br"] for r in left[:5]) > 0.8  # the session's start: far above the red line, lamp green
    assert all(r["lamp"] == "green" for r in left)
    page = opened(browser, long_pages["6878eb98"], 1400)
    try:
        d = page.locator(".bp-line").get_attribute("d")
        assert len(re.findall(r"[ML]", d)) == len(right)
        first = re.match(r"M([\d.]+)", d)
        assert first is not None
        first_x = float(first.group(1))
        starts = page.evaluate("() => Object.fromEntries([...document.querySelectorAll('.story-hover')]"
                               ".map(r => [r.getAttribute('data-call'), Number(r.getAttribute('x'))]))")
        assert first_x == pytest.approx(starts[str(right[0]["call"])], abs=0.1)
        assert "past the sweet spot" in page.locator("#legend").inner_text()
    finally:
        page.context.close()


def test_a_long_session_folds_by_turn_and_jumps(browser: Any, long_pages: dict[str, Path]) -> None:
    """326 calls: the page opens with its turns folded (the last one open); a turn's header opens
    and folds it (click, Enter); the menu jumps to a turn; a call on the story jumps to its row."""
    model = load_model(str(long_pages["6878eb98.jsonl"]), with_story=False)
    turns = sorted({r["turn"] for r in model["rows"]})
    page = opened(browser, long_pages["6878eb98"], 1400)
    try:
        height = page.evaluate("() => document.documentElement.scrollHeight")
        assert height < 2000  # was 8,137 px
        heads = page.locator("#waterfall .turn")
        assert heads.count() == len(turns)
        assert page.locator("#waterfall .turn.open").count() == 1
        assert page.locator("#waterfall .turn").last.get_attribute("aria-expanded") == "true"
        page.click("#open-all")
        assert page.evaluate("() => document.documentElement.scrollHeight") > 7000
        assert page.locator("#waterfall .bar").count() == len(model["rows"])
        page.click("#fold-all")
        assert page.locator("#waterfall .bar").count() == 0
        # the header of turn 3: Enter opens it, Enter again folds it
        third = page.locator('#waterfall .turn[data-turn="3"]')
        third.focus()
        page.keyboard.press("Enter")
        in_turn = sum(1 for r in model["rows"] if r["turn"] == 3)
        assert page.locator("#waterfall .bar").count() == in_turn
        page.keyboard.press("Enter")
        assert page.locator("#waterfall .bar").count() == 0
        third.click()
        assert page.locator('#waterfall .turn[data-turn="3"]').get_attribute("aria-expanded") == "true"

        def in_view(selector: str) -> bool:
            return bool(page.evaluate(
                "s => { const r = document.querySelector(s).getBoundingClientRect();"
                " const top = document.getElementById('top').getBoundingClientRect().bottom;"
                " return r.top >= top - 1 && r.bottom <= window.innerHeight; }", selector))

        page.select_option("#jump", str(turns[-2]))
        assert in_view(f'#waterfall .turn[data-turn="{turns[-2]}"]')
        assert page.locator(f'#waterfall .turn[data-turn="{turns[-2]}"]').get_attribute("aria-expanded") == "true"
        # a call on the story strip: its turn opens and its row comes into view
        call = next(r for r in model["rows"] if r["kind"] == "call" and r["n"] == 150)
        page.evaluate("() => window.scrollTo(0, 0)")
        page.locator('#head-svg .story-hover[data-call="150"]').click(force=True)
        assert page.locator(f'#waterfall .turn[data-turn="{call["turn"]}"]').get_attribute("aria-expanded") == "true"
        assert in_view('#waterfall text[data-call="150"]')
        assert page.errors == []
    finally:
        page.context.close()


def test_rows_before_the_first_prompt_are_a_turn_of_their_own(browser: Any, tmp_path: Path) -> None:
    """A transcript that starts at a compaction (the 610-call session): its first rows answer no
    prompt of the transcript's, and fold under `start`, before turn 1."""
    from tests.calibration import unpack

    path = unpack("6b6f4218-0b12-4d55-b930-462903683bea", tmp_path)
    model = load_model(str(path), with_story=False)
    assert model["rows"][0]["turn"] == 0
    html = tmp_path / "s.html"
    html.write_text(render_html(model), encoding="utf-8")
    page = opened(browser, html, 1400)
    try:
        first = page.locator("#waterfall .turn").first
        assert first.get_attribute("data-turn") == "0"
        assert first.locator(".turn-label").text_content().startswith("▸ start ")
        assert first.get_attribute("data-tip").startswith("before the first prompt from ")
        assert page.locator("#jump option").nth(1).text_content().startswith("before the first prompt · ")
        assert page.evaluate("() => document.documentElement.scrollHeight") < 2000  # 1,201 rows, folded
        assert page.errors == []
    finally:
        page.context.close()


def test_report_equals_the_text_at_every_width(view: tuple[Any, int, str, list[str]], pages: dict[str, Path]) -> None:
    """The report's views are there and read at 1400 px (content using the width: not a 1000 px column)
    and at 390 px (sessions as cards, each value labelled; no sideways scroll)."""
    page, width, scheme, errors = view
    page.goto(pages["report"].as_uri())
    page.wait_for_load_state("load")
    assert errors == []
    for ident in ("sessions", "days", "weeks", "projects", "restarts", "cliff"):
        assert page.locator(f"#{ident}").is_visible(), ident
    main = page.locator("main").bounding_box()
    assert main["width"] >= 1300 if width == 1400 else main["width"] <= width
    first = page.locator("#sessions tbody tr").first
    box = first.bounding_box()
    assert box["x"] + box["width"] <= width
    ids = page.locator("#sessions td.sid").all_text_contents()
    assert ids[0] == "fa812bfe"  # the short id every command takes, one line
    assert page.locator("#sessions td.sid").first.bounding_box()["height"] < 30
    if width == 390:
        assert page.evaluate("() => getComputedStyle(document.querySelector('#sessions tr')).display") == "grid"
    page.screenshot(path=str(OUT / f"report-views-{width}-{scheme}.png"), full_page=True)


MARKS_JS = """() => {
  const labels = [...document.querySelectorAll('.alert-label')].map(t => t.textContent);
  const marks = {};
  for (const c of ['gate-mark', 'backstop-mark', 'cold-mark', 'hold-mark', 'restart-mark'])
    marks[c] = [...document.querySelectorAll('.' + c)].map(l => l.getAttribute('data-tip'));
  // each turn header: its span's bar below its words
  const turns = [...document.querySelectorAll('#waterfall .turn')].map(t => {
    const bar = t.querySelector('.turn-span').getBoundingClientRect();
    const words = [...t.querySelectorAll('text')].map(x => x.getBoundingClientRect().bottom);
    return bar.top - Math.max(...words);
  });
  return {labels: labels, marks: marks, turns: turns, ticks: [...document.querySelectorAll('.time-tick')].length};
}"""


@pytest.fixture(scope="module")
def marked_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """258c7280's page with every kind of mark: its gates and reminders (its trace), a cold return
    (a trace alert of kind guard, as the engine writes one: its reminder count 0), a held prompt and
    a restart taken, each where no other mark is near."""
    model = load_model(str(FIXTURES / f"{SESSIONS[0]}.jsonl"))
    story = model["story"]
    t0, span = model["t0"], model["t1"] - model["t0"]
    near = [r["ts"] for r in story if r["alerts"]]
    picks: list[dict[str, Any]] = []
    for r in story:  # the first three calls far from any alert, each other and the right edge
        if r["ts"] < t0 + span * 0.9 and all(abs(r["ts"] - t) > span * 0.09 for t in near + [p["ts"] for p in picks]):
            picks.append(r)
    cold, hold, restart = picks[:3]
    cold["alerts"] = [{"kind": "guard", "reminder": 0, "gap": 1260.0, "rewrite": 84000,
                       "gapText": duration(1260.0)}]  # as StoryTrace writes it
    model["holds"] = [{"ts": hold["ts"], "call": hold["call"], "asked": True}]
    model["restarts"] = [{"ts": restart["ts"], "kind": "out", "other": "0c5f2a91-child"}]
    assert t0 < cold["ts"]
    out = tmp_path_factory.mktemp("marked") / "marked.html"
    out.write_text(render_html(model), encoding="utf-8")
    return out


@pytest.mark.parametrize("width", WIDTHS)
def test_every_mark_is_labelled_and_in_the_legend(browser: Any, marked_page: Path, width: int) -> None:
    """The gate, each reminder (numbered from 1), the cold return, the guard's hold and the restart
    taken: each its own line, class, colour and words, labelled where there is room, in the legend,
    never a "reminder 0"; the turn headers' bars below their words."""
    page = opened(browser, marked_page, width)
    try:
        open_all(page)
        got = page.evaluate(MARKS_JS)
        assert page.errors == []
        assert len(got["marks"]["cold-mark"]) == len(got["marks"]["hold-mark"]) == 1
        assert len(got["marks"]["restart-mark"]) == 1
        assert got["marks"]["cold-mark"][0].startswith("cold return after 21 min: the cache had expired; "
                                                       "the call re-wrote 84,000\u00a0tokens at call #")
        assert got["marks"]["hold-mark"][0].startswith("the guard held the prompt back: nothing was sent")
        assert got["marks"]["restart-mark"][0].startswith("restart taken: session 0c5f2a91 started with this")
        assert all(not t.startswith("reminder 0") for t in got["marks"]["backstop-mark"])
        assert "reminder 0" not in got["labels"]
        assert "r0" not in got["labels"]
        if width == 1400:  # room for every label: each reminder the trace has, numbered from 1
            reminders = [f"reminder {n}" for n in range(1, len(got["marks"]["backstop-mark"]) + 1)]
            assert reminders, "the fixture's trace has a reminder"
            for label in ("gate", "cold return", "hold", "restart", *reminders):
                assert label in got["labels"], (label, " ".join(got["labels"]))
        else:  # a short label where it fits, the line and its tooltip always
            assert {"gate", "cold", "hold"} <= set(got["labels"])
            assert all(re.fullmatch(r"gate|cold|hold|rst|r[1-9]\d*", t) for t in got["labels"]), got["labels"]
        legend = page.locator("#legend").inner_text()
        for words in ("gate", "reminder", "cold return", "guard hold", "restart taken"):
            assert words in legend
        assert page.evaluate(LEGEND_JS)["missing"] == []
        assert got["turns"]
        assert min(got["turns"]) >= 0, "a turn's bar runs into its words"
        lay = layout(page)
        assert (lay["clipped"], lay["overlaps"]) == ([], [])
    finally:
        page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["tool_heavy", "subagent"])
def test_time_ticks_at_every_width(browser: Any, tmp_path: Path, name: str, width: int) -> None:
    """A session of 2 or 9 minutes has at least three time ticks at 390 px too (a 7-minute one had one)."""
    out = tmp_path / f"{name}.html"
    out.write_text(render_html(load_model(str(FIXTURES / f"{name}.jsonl"))), encoding="utf-8")
    page = opened(browser, out, width)
    try:
        ticks = page.locator(".time-tick").all_text_contents()
        assert len(ticks) >= 3, ticks
        assert all(re.fullmatch(r"\d\d:\d\d|:\d\d", t) for t in ticks), ticks
        assert page.errors == []
    finally:
        page.context.close()


SPREAD_JS = """() => {
  const box = s => { const e = document.querySelector(s); if (!e) return null;
    const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, width: r.width}; };
  const across = sel => { const rs = [...document.querySelectorAll(sel)].map(e => e.getBoundingClientRect())
    .filter(r => r.width > 0);
    return rs.length ? Math.max(...rs.map(r => r.right)) - Math.min(...rs.map(r => r.left)) : 0; };
  return {sessions: box('#sessions'), views: across('#days, #weeks, #projects'),
          cliff: across('#scatter, #scatter-narrow, .buckets'), scatter: box('#scatter'),
          scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth};
}"""


@pytest.mark.parametrize("width", WIDTHS)
def test_report_tables_use_the_width(browser: Any, pages: dict[str, Path], width: int) -> None:
    """At 1400 px the report's tables spread over the page (on main they took 937 of 1400 px): the
    sessions table, the day/week/project views side by side and the scatter with its gap buckets beside
    it each span at least 1200 px, the scatter drawn at 760 px or wider; at 390 px nothing scrolls
    sideways and each table stays within the screen."""
    ctx = browser.new_context(viewport={"width": width, "height": 900}, timezone_id="UTC")
    try:
        page = ctx.new_page()
        page.goto(pages["report"].as_uri())
        page.wait_for_load_state("load")
        got = page.evaluate(SPREAD_JS)
        OUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUT / f"report-spread-{width}.png"), full_page=True)
    finally:
        ctx.close()
    assert got["scroll"] <= got["client"] == width, "the page scrolls sideways"
    if width == 1400:
        assert got["sessions"]["width"] >= 1200
        assert got["views"] >= 1200
        assert got["cliff"] >= 1200
        assert got["scatter"]["width"] >= 760
    else:
        assert got["sessions"]["right"] <= width
        assert 0 < got["views"] <= width
        assert 0 < got["cliff"] <= width


def test_both_agents_views_do_not_run_into_each_other(view: tuple[Any, int, str, list[str]], tmp_path: Path) -> None:
    """With Claude Code and Codex sessions the report has a fourth view, by agent: at 1400 px four grid
    columns of 300 px cut the project view narrower than its dates, and its "last active" ran under
    the agent view's names. Each view is as wide as its table needs; one that does not fit starts a row."""
    import os

    from tests.codex_lines import FIXTURES as ROLLOUTS
    from tests.test_codex_report import THREADS
    from tests.test_report_fixtures import copy_fixtures

    home = Path(os.environ["HOME"])
    folder = home / ".codex" / "sessions" / "2026" / "07" / "01"
    folder.mkdir(parents=True)
    for thread in THREADS:  # in projects named in one word each, as a user's often are
        text = (ROLLOUTS / f"rollout-{thread}.jsonl").read_text()
        text = text.replace("/Users/jdx/src/fnox", "/Users/jdx/src/entirecontextualizer").replace(
            "/7d59/mise", "/7d59/sessionwatcherlabs")
        (folder / f"rollout-2026-07-01T00-00-00-{thread}.jsonl").write_text(text)
    claude = copy_fixtures(tmp_path / "claude")
    out = tmp_path / "report.html"
    proc = sw("report", "--html", str(out), env={**os.environ, "CLAUDE_CONFIG_DIR": str(claude)})
    assert proc.returncode == 0, proc.stderr
    assert 'id="agents"' in out.read_text()
    page, width, scheme, errors = view
    page.goto(out.as_uri())
    page.wait_for_load_state("load")
    got = layout(page)
    page.screenshot(path=str(OUT / f"layout-two-agents-{width}-{scheme}.png"), full_page=True)
    assert errors == []
    assert got["scrollWidth"] <= got["width"], "the page scrolls sideways"
    assert got["clipped"] == []
    assert got["overlaps"] == []


def test_the_folded_sessions_open_from_the_keyboard(browser: Any, tmp_path: Path) -> None:
    """Past the newest 100 the sessions fold: their rows take no room until the summary is opened,
    from the keyboard too (Tab to it, Enter), and then read as the open ones do (cards on a phone)."""
    from bench.synth import T0, Transcript
    from session_watcher.reports import render_html as report_page
    from session_watcher.reports.collect import run_report

    proj = tmp_path / "projects" / "-proj"
    proj.mkdir(parents=True)
    for k in range(103):
        t = Transcript(session_id=f"s{k:03d}", cwd="/proj")
        t.user("go", at=T0 + 3600 * k)
        t.call(cr=20_000, cw=1_000)
        t.call(cr=21_000, cw=500)
        t.save(proj / f"s{k:03d}.jsonl")
    doc, _ = run_report([str(tmp_path / "projects")], str(tmp_path / "i.db"), now=T0 + 86400 * 30, utc_offset=0.0)
    path = tmp_path / "report.html"
    path.write_text(report_page.render(doc), encoding="utf-8")
    ctx = browser.new_context(viewport={"width": 390, "height": 900}, timezone_id="UTC")
    try:
        page = ctx.new_page()
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        assert page.locator("#sessions tbody tr").count() == 100
        rows = page.locator("#sessions-rest tbody tr")
        assert rows.count() == 3
        assert not rows.first.is_visible()
        summary = page.locator("#sessions-more > summary")
        assert summary.inner_text() == "the 3 sessions before these"
        for _ in range(200):  # Tab until the summary has the focus (any link before it comes first)
            page.keyboard.press("Tab")
            if page.evaluate("() => document.activeElement.matches('#sessions-more > summary')"):
                break
        else:
            pytest.fail("the summary never took the focus")
        page.keyboard.press("Enter")
        assert rows.first.is_visible()
        assert page.evaluate("() => getComputedStyle(document.querySelector('#sessions-rest tr')).display") == "grid"
    finally:
        ctx.close()
