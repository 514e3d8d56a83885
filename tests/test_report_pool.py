"""`report --pages` on the process pool (state.pool): the same pages from one process and from
several, the largest transcripts first."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from session_watcher.cli.report import write_session_pages
from session_watcher.reports.collect import run_report
from session_watcher.state import pool

pytestmark = pytest.mark.usefixtures("alone")  # no fork while another thread runs

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"


def test_session_pages_are_the_same_from_one_process_and_several(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    monkeypatch.setenv("SESSION_WATCHER_HOME", str(tmp_path / "home"))
    projects = tmp_path / "projects" / "proj"
    projects.mkdir(parents=True)
    for src in sorted(FIXTURES.glob("*.jsonl"))[:6]:
        shutil.copy(src, projects / src.name)
    doc, _stats = run_report([str(projects.parent)], str(tmp_path / "i.sqlite3"), now=1.8e9, utc_offset=0.0)
    written = []
    for workers in (1, 3):
        monkeypatch.setattr(pool, "cores", lambda w=workers: w)
        out = tmp_path / f"out-{workers}" / "report.html"
        out.parent.mkdir()
        links = write_session_pages(doc, str(out), [str(projects.parent)])
        pages = {p.name: p.read_bytes() for p in (out.parent / "report-sessions").iterdir()}
        assert sorted(pages) == sorted(Path(a).name for a in links.values())
        written.append((links, pages))
    assert written[0] == written[1]
    assert len(written[0][1]) >= 5


def test_one_process_writes_the_largest_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool, "cores", lambda: 1)
    monkeypatch.setenv("SESSION_WATCHER_HOME", str(tmp_path / "home"))
    projects = tmp_path / "projects" / "proj"
    projects.mkdir(parents=True)
    for src in sorted(FIXTURES.glob("*.jsonl"))[:4]:
        shutil.copy(src, projects / src.name)
    doc, _stats = run_report([str(projects.parent)], str(tmp_path / "i.sqlite3"), now=1.8e9, utc_offset=0.0)
    import session_watcher.reports.session_page as page

    order: list[int] = []
    real = page.write_html

    def noted(transcript: str, out: str, now: float | None = None) -> object:
        order.append(Path(transcript).stat().st_size)
        assert now == 1.8e9  # priced at the report's time
        return real(transcript, out, now)

    monkeypatch.setattr(page, "write_html", noted)
    write_session_pages(doc, str(tmp_path / "r.html"), [str(projects.parent)])
    assert len(order) == 4
    assert order == sorted(order, reverse=True)
