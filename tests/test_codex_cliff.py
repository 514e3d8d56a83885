"""A Codex thread's cache lifetime from the user's own returns: the report infers a cliff per
OpenAI cache class (codex-30m from gpt-5.6 on, codex-10m before) as it does for Claude Code's 5m
and 1h, writes it to cliff.json, and the guard, the engine's cold returns and the report's
cold-start causes use it; the class's floor (30 / 10 min) holds until there is such evidence."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from session_watcher.core import eoq, guard
from tests.codex_lines import FIXTURES, Thread, meta, turn, write_rollout
from tests.oracle import sw

THREAD = "019fa000-0000-7000-8000-0000000000cf"


def test_an_openai_model_s_cache_has_its_own_class_and_floor() -> None:
    assert eoq.cache_class("5m", "gpt-5.5") == "codex-10m"
    assert eoq.cache_class("5m", "gpt-5.6-sol") == "codex-30m"
    assert eoq.cache_class("5m", "claude-sonnet-5") == "5m"
    assert eoq.cache_class("codex-30m") == "codex-30m"
    assert eoq.cache_class("codex-5h") is None
    assert eoq.cache_lifetime("5m", None, "gpt-5.5") == 600
    assert eoq.cache_lifetime("5m", None, "gpt-5.6-sol") == 1800
    cliff = {"5m": 240.0, "1h": None, "codex-10m": 2400.0}
    assert eoq.cache_lifetime("5m", cliff, "gpt-5.5") == 2400  # its own cliff, never Claude's 240
    assert eoq.cache_lifetime("5m", cliff, "gpt-5.6-sol") == 1800  # no evidence for its class: the floor
    assert eoq.cache_lifetime("5m", cliff, "claude-sonnet-5") == 240
    assert eoq.cache_lifetime("codex-10m", cliff) == 2400


def test_the_guard_s_verdict_is_the_thread_s_own_class() -> None:
    """20 minutes idle on gpt-5.6-sol is warm (30 min floor), not past Claude's 5-minute edge."""
    assert guard.verdict(1200, "5m", None, "gpt-5.6-sol") == "warm"
    assert guard.verdict(1200, "5m", None) == "cold"
    assert guard.verdict(1200, "5m", {"5m": None, "1h": None, "codex-10m": 2400.0}, "gpt-5.5") == "warm"


def _home() -> Path:
    return Path(os.environ["HOME"])


def _report() -> dict[str, Any]:
    got = sw("report", "--json", env={**os.environ, "COLUMNS": "1000"})
    assert got.returncode == 0, got.stderr
    return dict(json.loads(got.stdout))


def _place(path: Path) -> Path:
    folder = _home() / ".codex" / "sessions" / "2026" / "11" / "20"
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(path, folder / path.name))


@pytest.fixture
def clean_home() -> Any:
    yield
    shutil.rmtree(_home() / ".codex", ignore_errors=True)
    cliff = Path(os.environ["SESSION_WATCHER_HOME"])
    for f in cliff.rglob("cliff.json"):
        f.unlink()
    for f in cliff.rglob("warmth-index.sqlite3*"):
        f.unlink()


def _returns_thread(tmp_path: Path) -> Path:
    """A gpt-5.5 thread whose returns say its cache lives about 40 minutes: 16 returns after 25 to
    38 minutes away warm, 12 after 50 to 90 minutes cold, and one cold return after 11.7 minutes
    (a cache evicted early: the floor would blame the break, the user's own cliff does not)."""
    t = Thread()
    lines = [meta(0, THREAD), turn(0, "gpt-5.5")]
    minute, context = 0.0, 60_000
    t.call(minute, context, 0, 500)
    away = [25 + (13 * i) / 15 for i in range(16)] + [50 + (40 * i) / 11 for i in range(12)] + [11.7]
    for gap in away:
        minute += gap
        cold = gap > 45 or gap < 12
        context += 2_000
        t.call(minute, context, 4_000 if cold else context - 2_000, 500)
        minute += 1
        context += 2_000
        t.call(minute, context, context - 2_000, 500)  # and one warm call a minute later
    lines = [x.replace('"cwd":"/proj"', json.dumps({"cwd": str(tmp_path)})[1:-1].replace(": ", ":"))
             for x in lines + t.lines]  # a folder that exists: status reads the config (and cliff) there
    return write_rollout(tmp_path / f"rollout-2026-11-20T10-00-00-{THREAD}.jsonl", lines)


@pytest.mark.slow
def test_a_codex_cliff_inferred_and_used_by_the_guard_and_the_causes(tmp_path: Path, clean_home: None) -> None:
    rollout = _place(_returns_thread(tmp_path))
    before = json.loads(sw("status", "--json", str(rollout)).stdout)["coldCache"]
    assert (before["lifetimeSeconds"], before["source"]) == (600.0, "ttl")  # the floor, no evidence yet

    doc = _report()
    got = doc["ttl"]["codex-10m"]
    assert got is not None
    assert got["inferredSeconds"] == 2400
    assert (got["evidence"]["below"]["n"], got["evidence"]["below"]["cold"]) == (16, 0)
    assert (got["evidence"]["above"]["n"], got["evidence"]["above"]["cold"]) == (12, 12)
    assert doc["ttl"]["5m"] is None  # Claude's class has none of a Codex thread's returns
    assert "codex-30m" not in doc["ttl"]  # no thread of that class
    assert doc["idleGapRule"]["codex-10m"] == {"seconds": 2400, "from": "inferred"}
    mine = [c for c in doc["coldStartList"] if c["sessionId"] == THREAD]
    assert {c["ttl"] for c in mine} == {"codex-10m"}
    by_gap = {round(c["gapSeconds"] / 60, 1): c["cause"] for c in mine if c["gapSeconds"]}
    assert by_gap[11.7] == "unexplained"  # under the cliff: not the break (the floor, 10 min, said idleGap)
    assert {cause for gap, cause in by_gap.items() if gap >= 50} == {"idleGap"}

    cliff = json.loads(next(Path(os.environ["SESSION_WATCHER_HOME"]).rglob("cliff.json")).read_text())
    assert cliff["codex-10m"] == 2400
    assert cliff["evidence"]["codex-10m"] == [16, 0, 12, 12]
    after = json.loads(sw("status", "--json", str(rollout)).stdout)["coldCache"]
    assert (after["lifetimeSeconds"], after["source"]) == (2400.0, "cliff")
    assert after["evidence"] == [16, 0, 12, 12]


@pytest.mark.slow
def test_on_the_fixture_rollouts_each_class_keeps_its_floor(clean_home: None) -> None:
    """The ten real rollouts (gaps up to 17 h): their returns fall in codex-10m (gpt-5.4 / 5.5) and
    codex-30m (gpt-5.6-sol), never in Claude's 5m; too few returns near either floor for a claim
    (the README: the cliff lies somewhere from 30 to 60 minutes), so each floor holds, and a cold
    start after 5 to 10 minutes (codex-10m) or 5 to 30 (codex-30m) is no longer blamed on the break."""
    for path in sorted(FIXTURES.glob("rollout-*.jsonl")):
        _place(path)
    doc = _report()
    assert doc["ttl"] == {"5m": None, "1h": None, "codex-30m": None, "codex-10m": None}
    assert doc["idleGapRule"]["codex-30m"] == {"seconds": 1800.0, "from": "ttl"}
    assert doc["idleGapRule"]["codex-10m"] == {"seconds": 600.0, "from": "ttl"}
    assert sum(b["n"] for b in doc["gapBuckets"] if b["ttl"] in ("5m", "1h")) == 0
    assert max(b["fromSeconds"] for b in doc["gapBuckets"] if b["n"]) == 7200  # the 17 h gap's bucket
    colds = [c for c in doc["coldStartList"] if c["gapSeconds"] is not None]
    blamed = [c for c in colds if c["cause"] == "idleGap"]
    assert blamed
    assert all(c["gapSeconds"] >= {"codex-30m": 1800, "codex-10m": 600}[c["ttl"]] for c in blamed)
    assert (doc["causes"]["idleGap"], doc["causes"]["unexplained"]) == (14, 23)  # 17 / 20 by Claude's 5 min


@pytest.mark.slow
def test_a_codex_cliff_is_drawn_on_the_report_page_and_claude_s_classes_left_out(tmp_path: Path,
                                                                                  clean_home: None) -> None:
    """A Codex user's report, once their returns say where the cache expires: the page draws the
    inferred lifetime as a dashed line in the class's colour, its label inside the frame, and a
    legend naming the class (the page stopped on a KeyError, exit 3, and its legend named only
    Claude's two classes); the text and the page leave out Claude Code's classes, which no session
    here has ("5m writes: no calls")."""
    _place(_returns_thread(tmp_path))
    page = tmp_path / "report.html"
    got = sw("report", "--html", str(page))
    assert got.returncode == 0, got.stderr
    html = page.read_text()
    assert 'class="inferred-ttl"' in html
    assert 'stroke="var(--task)" stroke-dasharray' in html
    assert "inferred Codex 10-minute-write TTL" in html
    labels = [float(y) for y in re.findall(r'class="inferred-label" x="[^"]+" y="([^"]+)"', html)]
    assert labels
    assert min(labels) > 0
    assert '<i class="sw sw-codex-10m"></i>after Codex 10-minute writes' in html
    for claude in ("5-minute", "1-hour", "5m writes", "1h writes"):
        assert claude not in html
    text = sw("report", env={**os.environ, "COLUMNS": "80"})
    assert text.returncode == 0, text.stderr
    out = text.stdout.decode()
    # the class in words, as the page's legend says it; its id ("codex-10m") is the JSON's alone
    assert "Codex 10-minute writes: inferred from your sessions" in out
    assert "gap (Codex 10-minute writes)" in out
    assert "codex-" not in out
    assert "5m writes" not in out
    assert "1h writes" not in out
    assert "(40 min for Codex 10-minute writes: the same lifetime" in " ".join(out.split())
    assert "codex-" not in html.replace("sw-codex-", "").replace("p-codex-", "").replace('data-ttl="codex-', "")
    doc = json.loads(sw("report", "--json").stdout)
    assert doc["idleGapRule"]["codex-10m"] == {"seconds": 2400, "from": "inferred"}
    assert max(len(line) for line in out.splitlines()) <= 80


def test_every_inferred_lifetime_s_label_stays_on_the_scatter() -> None:
    """A machine with Claude Code sessions and Codex threads can have three or four classes with an
    inferred lifetime: each label keeps a row of its own above the frame, the whole of its text
    inside the picture (the third was cut at the top, the fourth drawn above it, out of sight), and
    the frame keeps its size."""
    from session_watcher.reports.render_html import scatter_svg

    ev = {"below": {"n": 5}, "above": {"n": 6}}
    for classes in (("5m", "1h"), ("5m", "1h", "codex-10m"), ("5m", "1h", "codex-10m", "codex-30m")):
        lives = {"5m": 300, "1h": 3600, "codex-10m": 600, "codex-30m": 1800}
        doc = {"scatter": [], "ttl": {c: {"inferredSeconds": lives[c], "evidence": ev} for c in classes}}
        for narrow, font in ((False, 11), (True, 12)):
            svg = scatter_svg(doc, narrow)
            ys = sorted(float(y) for y in re.findall(r'class="inferred-label" x="[^"]+" y="([^"]+)"', svg))
            assert len(ys) == len(classes)
            assert ys[0] >= font, (classes, narrow, ys)  # a baseline a line's height down: all of it shown
            assert all(b - a >= font for a, b in itertools.pairwise(ys))  # no two on one row
            frame = re.search(r'class="frame" x="[^"]+" y="([^"]+)" width="[^"]+" height="([^"]+)"', svg)
            assert frame is not None
            assert float(frame[2]) == (224 if narrow else 296)  # the plot's own height, whatever the labels
            assert max(ys) < float(frame[1])  # every label above the frame


def test_a_point_with_no_cache_class_is_neutral_with_a_legend_entry_of_its_own() -> None:
    """A return with no cache class (`eoq.cache_class` None) was drawn in the 5m class's colour, which
    a Codex-only report's legend does not name: it is neutral now, and named in the legend ("no cache
    class") where the scatter has one, and only then."""
    from session_watcher.reports.render_html import CLASS_COLOURS, cliff_legend, scatter_points
    from session_watcher.reports.session_page_template import asset

    point = {"gapSeconds": 900.0, "tokensRecreated": 50_000, "cold": True, "sessionId": "t"}
    for ttls in ((None, "codex-10m"), ("codex-10m",)):
        doc = {"sessions": [{"agent": "codex"}], "gapBuckets": [{"ttl": "codex-10m", "n": 1}],
               "ttl": {"5m": None, "1h": None, "codex-10m": None},
               "scatter": [{**point, "ttl": t} for t in ttls]}
        legend = cliff_legend(doc)
        assert "after 5-minute writes" not in legend
        assert ("no cache class" in legend) == (None in ttls), legend
        css = asset("report_page.css")
        for cls, colour in CLASS_COLOURS.items():  # each point's class in its colour, as the legend's swatch
            assert f".p-{cls} {{ color: {colour}; }}" in css
        assert ".p-other, .p-none { color: var(--dim); }" in css
        drawn = re.findall(r'<i class="p-([^" ]+)', scatter_points(doc))
        assert drawn[-1] == "codex-10m"
        assert "codex-10m" in CLASS_COLOURS
        if None in ttls:
            assert drawn[0] == "none", drawn
            assert '<i class="sw sw-none"></i>no cache class' in legend
            assert "(no cache class)\"></i>" in scatter_points(doc)


@pytest.mark.slow
def test_a_thread_asked_once_is_not_said_to_have_no_calls(tmp_path: Path, clean_home: None) -> None:
    """The report a new Codex user first sees (install.sh's closing screen, after the one `codex` run
    it asks for): one thread of one call. Its class is in the cliff because the thread has a call of
    it, and the text said "codex-30m writes: no calls" under a table counting that call: a first call
    has no gap before it, so the cliff has no point yet, and says that."""
    t = Thread()
    t.call(0, 12_000, 0, 40)
    _place(write_rollout(tmp_path / f"rollout-2026-11-20T10-00-00-{THREAD}.jsonl",
                         [meta(0, THREAD), turn(0, "gpt-5.6-sol"), *t.lines]))
    got = sw("report", env={**os.environ, "COLUMNS": "200"})
    assert got.returncode == 0, got.stderr
    out = got.stdout.decode()
    assert ("Codex 30-minute writes: no call yet after a Codex 30-minute write (a first call has no gap before "
            "it)") in out, out
    assert "no calls" not in out.split("the cache-TTL cliff")[1].split("cold starts")[0]
    narrow = sw("report", env={**os.environ, "COLUMNS": "40"}).stdout.decode()
    cliff = narrow.split("cold starts")[0].split("Codex 30-minute writes")[1]
    assert all(len(line) <= 40 for line in cliff.splitlines()), narrow
