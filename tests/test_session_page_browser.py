"""The session page in a real headless browser: Debian's chromium driven by Playwright.

Nothing here downloads a browser: Playwright is pointed at /usr/bin/chromium (installed by
.ci/setup.d/40-browser.sh). Without it the tests skip, except under CI=true, where they fail.
Screenshots go to test-output/ at the repository root.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.reports.session_page_data import load_model
from tests.builders import render_html
from tests.test_session_page import BIG, FIXTURES, facts, hms_utc

if TYPE_CHECKING:
    from collections.abc import Iterator

REPO = Path(__file__).parent.parent
OUT = REPO / "test-output"
CHROMIUM = os.environ.get("SESSION_WATCHER_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
S258 = FIXTURES / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def _missing(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"browser tests cannot run under CI: {why}")
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed (pip install -e '.[dev]')")
    if not os.access(CHROMIUM, os.X_OK):
        _missing(f"{CHROMIUM} is missing (.ci/setup.d/40-browser.sh installs Debian's chromium)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(autouse=True)
def _private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay reads config: keep it away from the user's own files."""
    monkeypatch.setenv("SESSION_WATCHER_HOME", str(tmp_path / "home"))


class Page:
    """One open page and the errors it raised."""

    def __init__(self, browser: Any) -> None:
        self.ctx = browser.new_context(viewport={"width": 1400, "height": 900}, timezone_id="UTC")
        self.page = self.ctx.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)

    def count(self, selector: str) -> int:
        return int(self.page.locator(selector).count())

    def tip_after_hover(self, selector: str) -> str:
        self.page.locator(selector).first.hover(force=True)
        tip = self.page.locator("#tip")
        tip.wait_for(state="visible")
        return str(tip.inner_text())

    def close(self) -> None:
        self.ctx.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Page]:
    p = Page(browser)
    try:
        yield p
    finally:
        p.close()


def open_all(page: Any) -> None:
    """Open every turn (a long session's page opens with them folded, the last one open)."""
    if page.locator("#nav").is_visible():
        page.click("#open-all")
    page.wait_for_function("() => !document.querySelector('#waterfall .turn:not(.open)')")


def open_file(page: Page, transcript: Path, tmp_path: Path) -> dict[str, Any]:
    model = load_model(str(transcript))
    out = tmp_path / (transcript.stem + ".html")
    out.write_text(render_html(model), encoding="utf-8")
    page.page.goto(out.as_uri())
    page.page.locator("#waterfall .bar").first.wait_for()
    open_all(page.page)
    return model


STOPS = [(92.5, "a6e3a1"), (77.5, "94e2d5"), (62.5, "f9e2af"), (47.5, "fab387"), (30.0, "f38ba8")]


def score_colour(score: float) -> str:
    """The seed's five colours, green to red, interpolated linearly between grade-band midpoints."""
    rgb = [(s, [int(c[i : i + 2], 16) for i in (0, 2, 4)]) for s, c in STOPS]
    if score >= rgb[0][0]:
        mix = rgb[0][1]
    elif score <= rgb[-1][0]:
        mix = rgb[-1][1]
    else:
        (s0, c0), (s1, c1) = next((rgb[i - 1], rgb[i]) for i in range(1, len(rgb)) if score >= rgb[i][0])
        f = (s0 - score) / (s0 - s1)
        mix = [math.floor(a + (b - a) * f + 0.5) for a, b in zip(c0, c1, strict=True)]
    return "#" + "".join(f"{v:02x}" for v in mix)


def last_prompt(path: Path) -> int:
    last = 0
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        u = (rec.get("message") or {}).get("usage") if rec.get("type") == "assistant" else None
        if u and not rec.get("isSidechain"):
            last = u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
    return last


@pytest.mark.parametrize("path", BIG, ids=lambda p: p.name[:8])
def test_page_of_real_fixture(page: Page, path: Path, tmp_path: Path) -> None:
    """Every component is drawn, with counts that match the transcript; a screenshot is kept."""
    from session_watcher.sessions.replay import replay

    want = facts(path)
    model = open_file(page, path, tmp_path)
    assert page.errors == []
    assert page.count(".bar-call") == want["calls"]
    assert page.count(".bar-tool") == want["tools"]
    # compaction boundaries: dashed, 2 px, the theme's error red at 40 %, behind the bars, labelled in 9 px monospace
    assert page.count(".compaction-line") == want["compactions"] == 1
    line = page.page.locator(".compaction-line").first
    assert line.get_attribute("stroke-dasharray")
    red = page.page.evaluate("() => getComputedStyle(document.documentElement).getPropertyValue('--error').trim()")
    assert (line.get_attribute("stroke"), line.get_attribute("stroke-width")) == (red, "2")
    assert red == "#c8364d"  # the light scheme (the browser's default here)
    assert float(line.get_attribute("stroke-opacity")) == pytest.approx(0.4)
    behind = page.page.evaluate(
        "() => { const l = document.querySelector('.compaction-line'), b = document.querySelector('.bar');"
        " return !!(l.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING); }"
    )
    assert behind is True
    label = page.page.locator(".compaction-label").first
    assert label.text_content() == "compaction"
    assert label.evaluate("e => getComputedStyle(e).fontSize") == "9px"
    assert "mono" in label.evaluate("e => getComputedStyle(e).fontFamily").lower()
    # one re-read mark per re-read, on Read bars only
    assert page.count(".reread-mark") == len(want["rereads"])
    # the health bar: 4 px over the full waterfall column, a stop at each 5 %
    bar = page.page.locator("#health-bar")
    assert bar.get_attribute("height") == "4"
    stops = page.page.locator("#health-gradient stop")
    assert stops.count() == 21
    colours = [stops.nth(i).get_attribute("stop-color") for i in range(21)]
    assert colours == [score_colour(b["score"]) for b in model["healthBar"]]
    assert colours[0] == "#a6e3a1"  # every session starts healthy
    assert [stops.nth(i).get_attribute("offset") for i in (0, 1, 20)] == ["0%", "5%", "100%"]
    axis_w = page.page.evaluate("() => document.getElementById('waterfall').getAttribute('width')")
    assert float(bar.get_attribute("width")) == pytest.approx(float(axis_w) - 250 - 76)
    # the watcher's story on the same axis
    final, trace = replay(str(path))
    assert page.count(".lamp-zone") == len(trace)
    lamps = Counter(r["lamp"] for r in trace)
    for lamp, n in lamps.items():
        assert page.count(f".lamp-zone.lamp-{lamp}") == n
    for sel in (".x-line", ".xsweet-line", ".bp-line"):
        assert page.count(sel) == 1
    gates = sum(1 for r in trace for a in r["alerts"] if a["kind"] == "gate")
    assert page.count(".gate-mark") == gates
    # the badge: a 24x24 circle with the grade letter
    badge = page.page.locator("#grade-badge")
    box = badge.bounding_box()
    assert (box["width"], box["height"]) == (24, 24)
    assert badge.evaluate("e => getComputedStyle(e).borderRadius") == "50%"
    assert badge.inner_text() == final["health"]["grade"]
    OUT.mkdir(exist_ok=True)
    shot = OUT / f"session-page-{path.name[:8]}.png"
    page.page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000


def test_badge_tooltip_and_breakdown(page: Page, tmp_path: Path) -> None:
    """Hover shows the seed's tooltip; a click opens five rows; Escape and a second click close."""
    open_file(page, S258, tmp_path)
    assert page.tip_after_hover("#grade-badge") == "Context Health: B (score: 80/100)"
    panel = page.page.locator("#breakdown")
    assert not panel.is_visible()
    page.page.click("#grade-badge")
    panel.wait_for(state="visible")
    rows = page.page.locator("#breakdown .bd-row")
    assert rows.count() == 5
    names = [rows.nth(i).locator(".bd-name").inner_text() for i in range(5)]
    assert names == ["Context Fill", "Compactions", "Re-reads", "Error Rate", "Tool Efficiency"]
    assert [rows.nth(i).locator(".bd-weight").inner_text() for i in range(5)] == ["40%", "25%", "15%", "10%", "10%"]
    assert [rows.nth(i).locator(".bd-grade").inner_text() for i in range(5)] == ["A", "B", "D", "C", "A"]
    widths = [rows.nth(i).locator(".bd-bar > div").evaluate("e => e.style.width") for i in range(5)]
    assert widths == ["100%", "75%", "40%", "55%", "100%"]
    OUT.mkdir(exist_ok=True)
    page.page.screenshot(path=str(OUT / "session-page-breakdown.png"))
    page.page.keyboard.press("Escape")
    panel.wait_for(state="hidden")
    page.page.click("#grade-badge")
    panel.wait_for(state="visible")
    page.page.click("#grade-badge")
    panel.wait_for(state="hidden")
    assert page.errors == []


def test_a_page_without_an_api_call_grades_nothing(page: Page, tmp_path: Path) -> None:
    """A session without an API call: the badge read A (100/100), every signal A at 100; it reads `-`
    and says why (core.health.graded, as `health` and `status --json`), each signal `-`."""
    from tests.test_health_nothing import _no_call

    model = load_model(str(_no_call(tmp_path)))
    assert model["health"]["grade"] is None
    out = tmp_path / "nocall.html"
    out.write_text(render_html(model), encoding="utf-8")
    page.page.goto(out.as_uri())
    page.page.wait_for_function("() => document.getElementById('grade-badge').textContent === '-'")
    assert page.tip_after_hover("#grade-badge") == "Context Health: - (no API call yet: nothing to grade)"
    page.page.click("#grade-badge")
    rows = page.page.locator("#breakdown .bd-row")
    rows.first.wait_for(state="visible")
    assert [rows.nth(i).locator(".bd-grade").inner_text() for i in range(5)] == ["-"] * 5
    assert [rows.nth(i).locator(".bd-value").inner_text() for i in range(5)] == ["-"] * 5
    assert page.errors == []


def test_reread_tooltips(page: Page, tmp_path: Path) -> None:
    """Each re-read mark says when its file was first read; hovering one shows it."""
    want = facts(S258)
    open_file(page, S258, tmp_path)
    marks = page.page.locator(".reread-mark")
    tips = Counter(marks.nth(i).get_attribute("data-tip") for i in range(marks.count()))
    expected = Counter(f"Re-read: file was already read at {hms_utc(r['firstReadAt'])}" for r in want["rereads"])
    assert tips == expected
    shown = page.tip_after_hover(".reread-mark")
    assert shown == marks.first.get_attribute("data-tip")
    assert shown.startswith("Re-read: file was already read at ")


def test_numbers_short_with_exact_on_hover(page: Page, tmp_path: Path) -> None:
    """340k-style numbers, the exact figure on hover, tabular numerals."""
    open_file(page, S258, tmp_path)
    prompt = last_prompt(S258)
    ctx = page.page.locator("#stats b[data-tip*='tokens']")
    assert ctx.inner_text() == f"{round(prompt / 1000)}k / 200k"
    assert ctx.get_attribute("data-tip") == f"{prompt:,} of 200,000\u00a0tokens ({prompt / 2000:.1f}\u00a0%)"
    assert page.tip_after_hover("#stats b[data-tip*='tokens']") == ctx.get_attribute("data-tip")
    assert page.page.evaluate("() => getComputedStyle(document.body).fontVariantNumeric") == "tabular-nums"


def test_live_view_moves(page: Page, tmp_path: Path) -> None:
    """--serve: the open page grows as lines are appended to the transcript, compaction included."""
    src = S258.read_text().splitlines(keepends=True)
    cut = next(i for i, ln in enumerate(src) if "compact_boundary" in ln)
    tr = tmp_path / S258.name
    tr.write_text("".join(src[: cut // 2]))
    code = "import sys; from session_watcher.cli import main; sys.exit(main(['report', 'session', *sys.argv[1:]]))"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(tr), "--serve"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stderr is not None
        first = proc.stdout.readline()
        assert first.startswith("serving http://127.0.0.1:"), first + (proc.stderr.read() if proc.poll() else "")
        url = first.split()[1]
        page.page.goto(url)
        page.page.wait_for_function("() => Number(document.body.dataset.updates || 0) >= 1")
        open_all(page.page)  # and kept open as the session grows
        assert page.page.locator("#live").inner_text().startswith("live")
        n0 = page.count(".bar")
        assert n0 == len(load_model(str(tr), with_story=False)["rows"])
        assert page.count(".compaction-line") == 0
        steps = [(cut // 2, cut), (cut, len(src))]
        for lo, hi in steps:
            with tr.open("a") as fh:
                fh.write("".join(src[lo:hi]))
            n = len(load_model(str(tr), with_story=False)["rows"])
            page.page.wait_for_function(f"() => document.querySelectorAll('#waterfall .bar').length === {n}")
        page.page.wait_for_function("() => document.querySelectorAll('.compaction-line').length === 1")
        page.page.wait_for_function("() => document.getElementById('grade-badge').textContent === 'B'")
        assert page.tip_after_hover("#grade-badge") == "Context Health: B (score: 80/100)"
        assert page.count(".reread-mark") == len(facts(S258)["rereads"])
        OUT.mkdir(exist_ok=True)
        page.page.screenshot(path=str(OUT / "session-page-live.png"))
        assert page.errors == []
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


# core.numbers' table: the page shows what every other place prints (issue 38's last round: the
# page's script had its own rules, 9,950 as 9.9k, 1,234,567 as 1.23M, 299.6 s as 4 min 60 s)
TOKENS_TABLE = [(999, "999"), (1_000, "1k"), (1_234, "1.2k"), (9_950, "10k"), (999_600, "1M"), (1_000_000, "1M"),
                (1_234_567, "1.2M")]
DURATIONS_TABLE = [(0.4, "0 s"), (59.6, "1 min"), (299.6, "5 min"), (3599.7, "60 min"), (5400.0, "1 h 30 min"),
                   (7170.0, "2 h"), (45.0, "45 s")]


def numbers_transcript(path: Path) -> None:
    """A session of seven calls, each after its own prompt: call k sends TOKENS_TABLE[k]'s prompt and
    takes DURATIONS_TABLE[k]'s time."""
    from datetime import UTC, datetime

    def stamp(t: float) -> str:
        return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    sid, t, lines = "5e55a0e0-0000-4000-8000-000000000001", 1_790_000_000.0, []
    for k, ((prompt, _), (took, _)) in enumerate(zip(TOKENS_TABLE, DURATIONS_TABLE, strict=True)):
        lines.append({"type": "user", "timestamp": stamp(t), "sessionId": sid, "uuid": f"u{k}",
                      "message": {"role": "user", "content": f"step {k}"}})
        t += took
        lines.append({"type": "assistant", "timestamp": stamp(t), "sessionId": sid, "uuid": f"a{k}",
                      "requestId": f"req_{k}", "message": {
                          "id": f"msg_{k}", "role": "assistant", "model": "claude-sonnet-4-5",
                          "content": [{"type": "text", "text": "ok"}],
                          "usage": {"input_tokens": prompt, "output_tokens": 5}}})
        t += 10
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_the_page_writes_tokens_and_spans_as_core_numbers_does(page: Page, tmp_path: Path) -> None:
    """Each call's token label, its span in the tip, the context and the duration of the header read
    as core.numbers prints them, on the table of values the package's formatter is held to; the
    header's duration with no-break spaces ("4 h 37 min" could break between a number and its unit)."""
    from session_watcher.core.numbers import duration, tokens

    nb = "\u00a0"

    transcript = tmp_path / "5e55a0e0-0000-4000-8000-000000000001.jsonl"
    numbers_transcript(transcript)
    model = open_file(page, transcript, tmp_path)
    assert [tokens(n) for n, _ in TOKENS_TABLE] == [want for _, want in TOKENS_TABLE]
    assert [duration(s) for s, _ in DURATIONS_TABLE] == [want for _, want in DURATIONS_TABLE]
    labels = page.page.eval_on_selector_all("#waterfall text.small", "ts => ts.map(t => t.textContent)")
    assert labels == [want for _, want in TOKENS_TABLE]
    tips = page.page.eval_on_selector_all("#waterfall rect.bar-call", "rs => rs.map(r => r.dataset.tip)")
    spans = [tip.split("\n")[1].rsplit(" (", 1)[1].rstrip(")") for tip in tips]
    assert spans == [want for _, want in DURATIONS_TABLE]
    stats = page.page.inner_text("#stats")
    assert f"context {tokens(TOKENS_TABLE[-1][0])} / {tokens(model['window'])}" in stats
    # the duration one quantity, never cut across two lines: its spaces no-break ones
    assert f"duration {duration(model['t1'] - model['t0']).replace(' ', nb)}" in stats
    assert page.errors == []


def test_the_now_line_holds_its_numbers_with_their_units(page: Page, tmp_path: Path) -> None:
    """The line of what a restart saves now, which the page's script builds from the model's words:
    "297 days after its last call" could break between "297" and "days" (the rest of the page keeps
    a number with its unit, `core.text.keep_units`); the words come with their no-break spaces."""
    nb = "\u00a0"
    t1 = load_model(str(S258), with_story=False)["t1"]
    model = load_model(str(S258), now=t1 + 297 * 86_400)
    out = tmp_path / "later.html"
    out.write_text(render_html(model), encoding="utf-8")
    page.page.goto(out.as_uri())
    line = page.page.locator("#restart-now")
    line.wait_for()
    shown = line.text_content() or ""
    assert f", 297{nb}days after its last call): " in shown, shown
    assert " days" not in shown, shown
    assert page.errors == []


def test_tooltips_hold_a_token_count_with_its_word(page: Page, tmp_path: Path) -> None:
    """The page's tooltips ("prompt 12,345 tokens (input ...", "L 84,000 tokens", "the call re-wrote
    ...") wrap in their box: a count keeps its "tokens", and a share its "%", by a no-break space."""
    import re

    open_file(page, S258, tmp_path)
    tips = page.page.eval_on_selector_all("[data-tip]", "es => es.map(e => e.dataset.tip)")
    assert sum("\u00a0tokens" in tip for tip in tips) > 100, len(tips)
    assert [tip for tip in tips if re.search(r"\d (tokens|prompt tokens|%)", tip)] == []
    assert page.errors == []


def test_a_codex_threads_tools_coloured_by_what_they_do(page: Page, tmp_path: Path) -> None:
    """A Codex thread's tools are drawn in the legend's colours as Claude Code's are: its shell
    commands (exec_command, code-mode cells, write_stdin) as shell, a file it reads through the shell
    (ShellRead) as Read, a patch (Edit) as Write / Edit; the legend names no one agent's tools."""
    rollout = sorted((REPO / "tests" / "fixtures" / "codex").glob("rollout-*.jsonl"))[0]
    model = open_file(page, rollout, tmp_path)
    names = Counter(r["name"] for r in model["rows"] if r.get("kind") == "tool" and not r.get("isError"))
    assert names["exec_command"], names
    assert names["ShellRead"], names
    fills = page.page.eval_on_selector_all(
        ".bar-tool:not(.bar-error)", "es => es.map(e => [e.getAttribute('class'), e.getAttribute('fill')])")
    theme = page.page.evaluate(
        "() => { const cs = getComputedStyle(document.documentElement);"
        " return Object.fromEntries(['bash', 'read', 'write', 'other']"
        ".map(k => [k, cs.getPropertyValue('--' + k).trim()])); }")
    by_tool: dict[str, set[str]] = {}
    for cls, fill in fills:
        by_tool.setdefault(cls.split("tool-", 1)[1], set()).add(fill)
    want = {"exec_command": "bash", "exec": "bash", "write_stdin": "bash", "ShellRead": "read", "Edit": "write"}
    for name, kind in want.items():
        if name in by_tool:
            assert by_tool[name] == {theme[kind]}, (name, by_tool[name], theme)
    legend = page.page.locator("#legend").inner_text()
    assert "shell" in legend, legend
    assert "Task" not in legend, legend
    assert "Bash" not in legend, legend
    assert page.errors == []


def test_a_forks_page_counts_its_own_calls_and_says_so(page: Page, tmp_path: Path) -> None:
    """The real client's fork (2.1.332): its waterfall draws all 5 calls (the 4 copies are its
    context), its `calls` figure counts its own 1 and its `tool calls` its own 0 (the 2 there are
    the copies'), its tip and the line above the chart say what the page left out; the parent's
    page counts its 5 calls and 2 tool calls and says nothing of a fork."""
    fork = REPO / "tests" / "fixtures" / "real-client-2.1.332" / "fork" / "projects" / "-home-dev-proj"
    open_file(page, fork / "703fbb53-83ed-4907-ae6b-d4c8f3285559.jsonl", tmp_path)
    assert page.count("#waterfall rect.bar-call") == 5
    stats = page.page.inner_text("#stats")
    assert "calls 1" in stats
    assert "tool calls 0" in stats, stats
    assert page.tip_after_hover("#stats b[data-tip*='tool calls of the copied']").startswith("2 tool calls")
    said = "forked from 59f3783b-fd38-4563-9820-250620846abd: 4 copied calls not counted here"
    assert page.page.inner_text("#fork").startswith(said)
    assert page.tip_after_hover("#stats b[data-tip*='copied']").startswith(said)
    open_file(page, fork / "59f3783b-fd38-4563-9820-250620846abd.jsonl", tmp_path)
    assert "calls 5" in page.page.inner_text("#stats")
    assert "tool calls 2" in page.page.inner_text("#stats")
    assert page.count("#fork") == 0
    assert page.errors == []


def test_a_forks_page_counts_its_own_tool_calls_and_re_reads(page: Page, tmp_path: Path) -> None:
    """A real session made a fork whose first 40 calls are copies (as the client writes them): the
    page's `tool calls` and `re-reads` are those of the tool calls its own calls (41 on) asked for,
    the oracle the page's rows; a re-read of a file a copy read first is one (the copy is in its context)."""
    from tests.test_fork_counts import _fork_of

    sid = "258c7280-ae70-4798-800f-63464d01a85d"
    fork = tmp_path / "fork" / f"{sid}.jsonl"
    fork.parent.mkdir()
    _fork_of(FIXTURES / f"{sid}.jsonl", fork, 40)
    rows = [r for r in load_model(str(fork), now=0.0)["rows"] if r["kind"] == "tool"]
    mine = [r for r in rows if r["call"] is None or r["call"] > 40]
    assert 0 < len(mine) < len(rows)
    assert 0 < sum(r["reread"] for r in mine) < sum(r["reread"] for r in rows)
    open_file(page, fork, tmp_path)
    stats = page.page.inner_text("#stats")
    assert f"tool calls {len(mine)}" in stats, stats
    assert f"re-reads {sum(r['reread'] for r in mine)}" in stats, stats
    assert page.errors == []
