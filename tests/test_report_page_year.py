"""The report page after a year of sessions stays a page: the newest sessions open, the rest fold
under their count, and the scatter draws one dot per spot however many returns fall on it (its points
layer, written once for the wide copy and the phone's: `render_html.scatter_points`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bench.synth import T0, Transcript
from session_watcher.reports import render_html
from session_watcher.reports.collect import run_report

if TYPE_CHECKING:
    from pathlib import Path


def test_a_year_of_sessions_folds_and_its_returns_share_dots(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "-proj"
    proj.mkdir(parents=True)
    n = 120  # the page opens with the newest 100
    for k in range(n):
        t = Transcript(session_id=f"s{k:03d}", cwd="/proj")
        t.user("go", at=T0 + 3600 * k)
        for _ in range(3):  # the same step and the same growth: every return at one spot
            t.call(cr=20_000, cw=1_000)
        t.save(proj / f"s{k:03d}.jsonl")
    doc, _ = run_report([str(tmp_path / "projects")], str(tmp_path / "i.db"), now=T0 + 86400 * 30, utc_offset=0.0)
    assert len(doc["scatter"]) == 2 * n
    page = render_html.render(doc)
    assert "<circle" not in page
    points = page.split('<div class="points"')[1].split("</div>")[0]
    assert points.count("<i ") == 1, points.count("<i ")
    assert f"{2 * n:,} returns: 10\u00a0s gap" in points
    first = page.split('<table id="sessions" class="sessions">')[1].split("</table>")[0]
    assert first.count("<tr>") == 1 + 100  # the head and the newest
    folded = page.split('<details id="sessions-more">')[1].split("</details>")[0]
    assert "the 20 sessions before these" in folded
    assert folded.count("<tr>") == 1 + 20
    assert re.search(r'title="s000"', folded), "the oldest session is under the fold"


def _sessions(folder: Path, steps: list[float]) -> None:
    for k, step in enumerate(steps):
        t = Transcript(session_id=f"s{k:03d}", cwd="/proj", step=step)
        t.user("go", at=T0 + 3600 * k)
        for _ in range(2):
            t.call(cr=20_000, cw=1_000)
        t.save(folder / f"s{k:03d}.jsonl")


def test_the_fold_at_100_and_101_sessions(tmp_path: Path) -> None:
    """100 sessions: one table, no fold; 101: the one before them folded, and said in the singular."""
    proj = tmp_path / "projects" / "-proj"
    proj.mkdir(parents=True)
    _sessions(proj, [10.0] * 101)
    doc, _ = run_report([str(tmp_path / "projects")], str(tmp_path / "i.db"), now=T0 + 86400 * 30, utc_offset=0.0)
    page = render_html.render({**doc, "sessions": doc["sessions"][:100]})
    assert "<details id=\"sessions-more\"" not in page  # (the scatter's table folds too)
    assert page.count('class="sessions"') == 1
    page = render_html.render(doc)
    folded = page.split('<details id="sessions-more">')[1].split("</details>")[0]
    assert "<summary>the session before these</summary>" in folded, folded[:200]
    assert folded.count("<tr>") == 1 + 1
    assert 'title="s000"' in folded


def test_a_shared_dot_names_a_range_only_where_it_reads_as_one(tmp_path: Path) -> None:
    """Two returns 10.2 s and 10.201 s after their calls share a spot: both read "10 s", so the title
    says 10 s, not "10 s to 10 s"."""
    proj = tmp_path / "projects" / "-proj"
    proj.mkdir(parents=True)
    _sessions(proj, [10.2, 10.201])
    doc, _ = run_report([str(tmp_path / "projects")], str(tmp_path / "i.db"), now=T0 + 86400 * 30, utc_offset=0.0)
    points = render_html.render(doc).split('<div class="points"')[1].split("</div>")[0]
    assert points.count("<i ") == 1
    assert "2 returns: 10\u00a0s gap" in points, re.findall(r'title="[^"]*returns[^"]*"', points)


def test_the_scatters_figures_read_without_a_mouse(tmp_path: Path) -> None:
    """A dot's figures were its tooltip alone (hover): a keyboard or a screen reader had none of them.
    A table folded under the figure says each dot's gap, tokens re-created, cache class, warmth and
    returns, as its tooltip does, the longest gaps first; past POINTS_ROWS dots it keeps the longest
    and says how many it leaves to --json."""
    proj = tmp_path / "projects" / "-proj"
    proj.mkdir(parents=True)
    _sessions(proj, [10.0, 90.0, 400.0, 4000.0])
    doc, _ = run_report([str(tmp_path / "projects")], str(tmp_path / "i.db"), now=T0 + 86400 * 30, utc_offset=0.0)
    page = render_html.render(doc)
    tips = re.findall(r'<i class="p-[^"]*" style="[^"]*" title="([^"]*)"', page)
    assert len(tips) == len(doc["scatter"]) == 4
    table = page.split('<details class="points-table"><summary>')[1].split("</details>")[0]
    assert table.startswith("the figure&#x27;s 4 returns as a table</summary>")
    rows = re.findall(r"<tr><td class=\"n\">([^<]*)</td><td class=\"n\">([^<]*)</td><td>([^<]*)</td>"
                      r"<td>(warm|cold)</td><td class=\"n\">1</td></tr>", table)
    assert [r[0] for r in rows] == ["67\u00a0min", "6\u00a0min\u00a040\u00a0s", "1\u00a0min\u00a030\u00a0s",
                                    "10\u00a0s"], rows
    said = sorted(f"{gap} gap, {tok} tokens re-created ({writes})".replace("\u00a0", " ")
                  for gap, tok, writes, _ in rows)
    assert said == sorted(tip.replace("\u00a0", " ") for tip in tips)  # (a unit kept with its number: either space)
    assert [r[3] for r in rows] == ["cold" if p["cold"] else "warm"
                                    for p in sorted(doc["scatter"], key=lambda p: -p["gapSeconds"])]

    many = tmp_path / "many" / "-proj"
    many.mkdir(parents=True)
    _sessions(many, [10.0 * 1.012 ** k for k in range(render_html.POINTS_ROWS + 10)])  # a dot each
    doc, _ = run_report([str(tmp_path / "many")], str(tmp_path / "j.db"), now=T0 + 86400 * 30, utc_offset=0.0)
    table = render_html.render(doc).split('<details class="points-table">')[1].split("</details>")[0]
    dots = len(render_html._spots(doc["scatter"]))
    assert dots > render_html.POINTS_ROWS
    assert f": the {render_html.POINTS_ROWS} longest gaps of its {dots} dots (every point: `report --json`)" in table
    assert table.count("<tr>") == 1 + render_html.POINTS_ROWS


def test_the_scatters_table_escapes_what_it_says() -> None:
    """The table's cells come from the document (a cache class read from transcripts, or a report's
    JSON given back): markup in them is text, never a tag of the page."""
    doc = {"scatter": [{"gapSeconds": 5.0, "tokensRecreated": 10, "ttl": '<img src=x onerror="alert(1)">',
                        "cold": True}]}
    table = render_html.points_table(doc)
    assert "<img" not in table
    assert "<td>&lt;img src=x onerror=&quot;alert(1)&quot;&gt; writes</td><td>cold</td>" in table
    assert render_html.points_table({"scatter": []}) == ""
