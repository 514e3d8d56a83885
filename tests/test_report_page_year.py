"""The report page after a year of sessions stays a page: the newest sessions open, the rest fold
under their count, and the scatter draws one circle per spot however many returns fall on it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bench.synth import T0, Transcript
from session_watcher.reports import render_html
from session_watcher.reports.collect import run_report

if TYPE_CHECKING:
    from pathlib import Path


def test_a_year_of_sessions_folds_and_its_returns_share_circles(tmp_path: Path) -> None:
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
    wide, narrow = page.split('<svg id="scatter-narrow"')
    assert wide.count("<circle") == narrow.count("<circle") == 1, wide.count("<circle")
    assert f"{2 * n:,} returns: 10\u00a0s gap" in wide
    first = page.split('<table id="sessions" class="sessions">')[1].split("</table>")[0]
    assert first.count("<tr>") == 1 + 100  # the head and the newest
    folded = page.split('<details id="sessions-more">')[1].split("</details>")[0]
    assert "the 20 sessions before these" in folded
    assert folded.count("<tr>") == 1 + 20
    assert re.search(r'title="s000"', folded), "the oldest session is under the fold"
