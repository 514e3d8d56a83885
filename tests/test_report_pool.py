"""`reports.pool.run_all` (the session pages' processes): every job done, by children and the
parent; what a child could not finish done again by the parent; the parent's error as it was; and
`report --pages` writes the same pages from one process and from several."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from session_watcher.reports import pool
from session_watcher.reports.cli import write_session_pages
from session_watcher.reports.collect import run_report

pytestmark = pytest.mark.usefixtures("alone")  # no fork while another thread runs

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
WAIT = 60.0  # seconds a parent's job waits for a child to have taken one (a deadlock guard, not a timing)


def wait_for_a_child(folder: Path) -> None:
    """Until some child has noted its pid in `folder` (the parent's jobs hold on for it)."""
    end = time.monotonic() + WAIT
    while not any(folder.glob("child-*")):
        if time.monotonic() > end:
            raise AssertionError("no child took a job")
        time.sleep(0.005)


def note_child(folder: Path) -> None:
    (folder / f"child-{os.getpid()}").touch()


def reaped(folder: Path) -> list[int]:
    """The pids of the children that noted themselves, each asserted waited for already."""
    pids = [int(p.name.split("-")[1]) for p in folder.glob("child-*")]
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
    return pids


def test_every_job_runs_once_in_several_processes(tmp_path: Path) -> None:
    parent = os.getpid()

    def do(i: int) -> None:
        if os.getpid() == parent:  # the parent holds on until a child has done a job
            wait_for_a_child(tmp_path)
        with (tmp_path / f"job-{i}").open("a") as fh:
            fh.write(str(os.getpid()))
        if os.getpid() != parent:
            note_child(tmp_path)

    pool.run_all(do, [10 + i % 7 for i in range(60)], workers=3)
    done = {p.name: p.read_text() for p in tmp_path.glob("job-*")}
    assert sorted(done) == sorted(f"job-{i}" for i in range(60))
    children = reaped(tmp_path)
    assert set(done.values()) <= {str(parent), *map(str, children)}  # each job once, by one process
    assert len(set(done.values()) - {str(parent)}) >= 1  # children did some of them


def test_jobs_a_child_could_not_finish_are_done_by_the_parent(tmp_path: Path) -> None:
    parent = os.getpid()

    def do(i: int) -> None:
        if os.getpid() != parent:
            note_child(tmp_path)
            raise OSError("a child cannot write")
        wait_for_a_child(tmp_path)
        with (tmp_path / f"job-{i}").open("a") as fh:
            fh.write(str(os.getpid()))

    pool.run_all(do, [1] * 40, workers=2)
    done = {p.name: p.read_text() for p in tmp_path.glob("job-*")}
    assert done == {f"job-{i}": str(parent) for i in range(40)}  # each once, all by the parent
    assert len(reaped(tmp_path)) == 1


def test_the_parents_error_propagates_and_no_child_is_left(tmp_path: Path) -> None:
    parent = os.getpid()

    def do(i: int) -> None:
        if os.getpid() == parent:
            wait_for_a_child(tmp_path)
            raise ValueError(f"job {i} failed")
        note_child(tmp_path)
        time.sleep(0.01)

    with pytest.raises(ValueError, match="failed"):
        pool.run_all(do, [1] * 3000, workers=3)
    assert len(reaped(tmp_path)) >= 1


def test_one_process_runs_the_jobs_in_order_of_size() -> None:
    order: list[int] = []
    pool.run_all(order.append, [5, 50, 1, 20], workers=1)
    assert order == [1, 3, 0, 2]


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
