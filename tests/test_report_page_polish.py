"""The report page over the real fixtures: the scatter's points written once for its wide copy and the
phone's (each copy drew all of them: the points were 96 % of a 1.8 MB page), each point where the
log scales put it in the frame of the copy shown; the sessions table fits a 1000 px window (it scrolled
sideways below 1320 px); a longest gap under a second is no break ("your longest break (0 s) stayed
warm" on a session whose calls came within a second of each other).

Chromium through Playwright, as test_page_layout_browser.py; screenshots go to test-output/.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from session_watcher.cli import main as sw_main
from session_watcher.reports.fmt import gap_sentence
from session_watcher.reports.render_text import break_cell
from tests.oracle import sw
from tests.test_session_page_browser import OUT, browser

__all__ = ["browser"]  # the fixture, shared with test_session_page_browser

FIXTURES = Path(__file__).parent / "fixtures"
PROJECTS = [FIXTURES / name for name in ("transcripts", "codex", "real-client")]
TIP = re.compile(r"title=\"([^\"]*?gap, [^\"]*? tokens re-created \([^\"]*\))\"")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The report page and JSON over the fixtures' Claude Code sessions and Codex rollouts."""
    root = tmp_path_factory.mktemp("report")
    page = root / "report.html"
    args = ["report", "--projects", *map(str, PROJECTS), "--index", str(root / "i.db")]
    proc = sw(*args, "--html", str(page))
    assert proc.returncode == 0, proc.stderr
    proc = sw(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    return page, json.loads(proc.stdout)


@pytest.mark.slow
def test_each_point_is_written_once(report: tuple[Path, dict[str, Any]]) -> None:
    """One tooltip per gap in the page, and the page no larger than that needs (the two copies' points
    made it about twice as large)."""
    page, doc = report
    text = page.read_text(encoding="utf-8")
    tips = TIP.findall(text.replace("\u00a0", " "))
    assert len(doc["scatter"]) > 1000
    shared = [re.match(r"([\d,]+) returns: ", tip) for tip in tips]  # returns at one spot share its dot
    assert sum(int(m[1].replace(",", "")) if m else 1 for m in shared) == len(doc["scatter"])
    assert text.count("<i class=\"p-") == len(tips)
    assert "<circle" not in text
    per_point = len(text.encode()) / len(doc["scatter"])
    assert per_point < 200, per_point  # 330 bytes a point with two copies


POINTS_JS = """() => {
  const svg = [...document.querySelectorAll('#scatter, #scatter-narrow')]
    .find(s => s.getBoundingClientRect().width > 0);
  const f = svg.querySelector('.frame').getBoundingClientRect();
  const pts = [...document.querySelectorAll('.points i')].map(i => { const r = i.getBoundingClientRect();
    return {x: r.left + r.width / 2, y: r.top + r.height / 2, w: r.width, cold: i.classList.contains('cold'),
            fill: getComputedStyle(i).backgroundColor, stroke: getComputedStyle(i).borderTopColor}; });
  return {svg: svg.id, frame: {left: f.left, top: f.top, width: f.width, height: f.height}, points: pts};
}"""


def at(v: float, hi: float, size: float) -> float:
    """Where `v` falls on a log axis from 1 to `hi` (10 at least) `size` long."""
    return (math.log10(max(v, 1.0))) / math.log10(max(hi, 10.0)) * size


@pytest.mark.slow
@pytest.mark.parametrize("width", [1400, 1000, 390])
def test_the_points_sit_in_the_frame_shown(browser: Any, report: tuple[Path, dict[str, Any]], width: int) -> None:
    """At a desk, in a 1000 px window and on a phone each point's dot is where its gap and tokens fall on
    the frame of the copy shown (within a pixel), a fixed 7 px dot, filled where the call ran cold."""
    page_file, doc = report
    ctx = browser.new_context(viewport={"width": width, "height": 900}, timezone_id="UTC")
    try:
        page = ctx.new_page()
        page.goto(page_file.as_uri())
        page.wait_for_load_state("load")
        got = page.evaluate(POINTS_JS)
        OUT.mkdir(exist_ok=True)
        page.locator(".plot").first.screenshot(path=str(OUT / f"report-scatter-{width}.png"))
    finally:
        ctx.close()
    assert got["svg"] == ("scatter-narrow" if width == 390 else "scatter")
    frame, pts = got["frame"], got["points"]
    assert 0 < len(pts) <= len(doc["scatter"])  # one dot per spot (returns that fall on one share it)
    max_gap = max([p["gapSeconds"] for p in doc["scatter"]] + [7200.0])
    max_tok = max([p["tokensRecreated"] * 1.5 for p in doc["scatter"]] + [1e5])
    want = [(frame["left"] + at(p["gapSeconds"], max_gap, frame["width"]),
             frame["top"] + frame["height"] - at(p["tokensRecreated"], max_tok, frame["height"]), p["cold"])
            for p in doc["scatter"]]
    drawn = [(d["x"], d["y"], d["cold"]) for d in pts]

    def near(spots: list[tuple[float, float, bool]]) -> dict[tuple[int, int, bool], list[tuple[float, float]]]:
        grid: dict[tuple[int, int, bool], list[tuple[float, float]]] = {}
        for x, y, cold in spots:
            grid.setdefault((round(x), round(y), cold), []).append((x, y))
        return grid

    def found(grid: dict[tuple[int, int, bool], list[tuple[float, float]]], x: float, y: float, cold: bool) -> bool:
        return any(abs(x - gx) < 1 and abs(y - gy) < 1 for i in (-1, 0, 1) for j in (-1, 0, 1)
                   for gx, gy in grid.get((round(x) + i, round(y) + j, cold), ()))

    dots, points = near(drawn), near(want)
    assert all(found(dots, *w) for w in want), "a point with no dot where its gap and tokens fall"
    assert all(found(points, *d) for d in drawn), "a dot where no point falls"
    for dot in pts:
        assert dot["w"] == 7
        assert (dot["fill"] != "rgba(0, 0, 0, 0)") == dot["cold"], dot
    assert len({d["stroke"] for d in pts}) >= 2  # the classes' colours


SCROLL_JS = """() => ({scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth,
  sessions: document.querySelector('#sessions').getBoundingClientRect().right,
  main: document.querySelector('main').getBoundingClientRect().right,
  ids: [...document.querySelectorAll('#sessions td.sid > *')].map(t => t.getBoundingClientRect().height)})"""


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 1000, 960, 800])
def test_the_sessions_fit_a_window_of_any_width(browser: Any, report: tuple[Path, dict[str, Any]], width: int) -> None:
    """The sessions table within the page at 1280 and 1000 px (it needed 1307 px), as cards below 960 px:
    no sideways scroll; each short id on one line."""
    page_file, _doc = report
    ctx = browser.new_context(viewport={"width": width, "height": 900}, timezone_id="UTC")
    try:
        page = ctx.new_page()
        page.goto(page_file.as_uri())
        page.wait_for_load_state("load")
        got = page.evaluate(SCROLL_JS)
        OUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUT / f"report-sessions-{width}.png"))
    finally:
        ctx.close()
    assert got["client"] == width
    assert got["scroll"] <= got["client"], "the page scrolls sideways"
    assert got["sessions"] <= got["main"]
    assert max(got["ids"]) < 30


def test_a_gap_under_a_second_is_no_break(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The real client's print-mode session (6 calls within a second): its longest gap, 0.3 s, is said
    to be no break, in the JSON's sentence, the table's cell and the page's tooltip."""
    monkeypatch.setenv("SESSION_WATCHER_HOME", str(tmp_path / "home"))
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "transcript_print.jsonl").write_bytes((FIXTURES / "real-client" / "transcript_print.jsonl").read_bytes())
    assert sw_main(["report", "--projects", str(folder), "--json", "--index", str(tmp_path / "i.db")]) == 0
    doc = json.loads(capsys.readouterr().out)
    (s,) = doc["sessions"]
    assert s["calls"] == 6
    assert s["largestGap"]["seconds"] < 1
    assert not s["largestGap"]["cold"]
    assert s["sentence"] == "no break: each call came within a second of the one before"
    assert break_cell(s) == "-"
    # a break of a second or more keeps its words; a cold gap under a second is not blamed on a break
    assert gap_sentence({**s["largestGap"], "seconds": 12.0}).startswith("your longest break (12 s) stayed warm")
    cold = gap_sentence({**s["largestGap"], "cold": True}, "compaction")
    assert cold.startswith("no break: each call came within a second of the one before; the call after the")
    assert cold.endswith("cold from a compaction")
    assert "(0 s)" not in cold
    # the table's cell, as the sentence: no break, warm or cold (it read "0s cold*", "0s $0.01")
    for cause in ("compaction", "idleGap", "unexplained"):
        assert break_cell({**s, "largestGap": {**s["largestGap"], "cold": True, "usd": 0.01},
                           "largestGapCause": cause}) == "-", cause
    assert break_cell({**s, "largestGap": {**s["largestGap"], "seconds": 1.0}}) == "1s warm"


@pytest.mark.slow
def test_the_points_print_filled_and_stay_one_image_to_assistive_technology(
        browser: Any, report: tuple[Path, dict[str, Any]]) -> None:
    """A cold point's fill is a CSS background, which print leaves out by default (Chromium's print
    colour adjustment `economy`): every point printed hollow, as if warm; it is kept (`exact`). The
    points' tooltips, thousands of `title`s outside the picture's SVG (one image, named), were each a
    node of the accessibility tree (2,546 over the fixtures): hidden from it, as the SVG's marks are."""
    page_file, doc = report
    ctx = browser.new_context(viewport={"width": 1400, "height": 900}, timezone_id="UTC")
    try:
        page = ctx.new_page()
        page.goto(page_file.as_uri())
        page.wait_for_load_state("load")
        tree = ctx.new_cdp_session(page).send("Accessibility.getFullAXTree")
        said = [n for n in tree["nodes"] if not n.get("ignored") and " tokens re-created (" in
                str(n.get("description", {}).get("value", "")) + str(n.get("name", {}).get("value", ""))]
        page.emulate_media(media="print")
        adjust = page.evaluate("() => [...document.querySelectorAll('.points i.cold')].map(i => "
                               "getComputedStyle(i).printColorAdjust)")
    finally:
        ctx.close()
    assert sum(p["cold"] for p in doc["scatter"]) == len(adjust) > 0
    assert set(adjust) == {"exact"}
    assert said == [], said[:2]
