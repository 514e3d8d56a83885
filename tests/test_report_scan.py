"""The cold scan on the process pool: every file read exactly once by whichever process is free, the
same rows as one process, a failed child's files read again by the parent, the progress it reports;
a parent that fails mid-scan leaves no child behind, and no child holds the index's database."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pytest

from session_watcher.agents.claude_code.discover import discover
from session_watcher.reports import scan
from session_watcher.reports.index import Index
from session_watcher.reports.scan import Job, Scan, Scanned, rows_in, scan_all
from tests.test_pool import assert_all_reaped, children_of_this_process

if TYPE_CHECKING:
    from session_watcher.agents.source import Source

pytestmark = pytest.mark.usefixtures("alone")  # no fork while another thread runs

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"


def jobs_for(tmp: Path, copies: int = 6) -> list[Job]:
    """Every fixture transcript, `copies` times over (distinct files), plus one that cannot be read."""
    paths = []
    for k in range(copies):
        for src in sorted(FIXTURES.rglob("*.jsonl")):
            dest = tmp / f"{k}-{src.name}"
            shutil.copy2(src, dest)
            paths.append(dest)
    gone = tmp / "vanished.jsonl"
    paths.insert(3, gone)
    return [Job(str(p), 0, None, p.stat().st_size if p.exists() else 10_000) for p in paths]


def key(scan: Scan) -> list[object]:
    return [None if r is None else (rows_in(r), r.offset, r.seen, r.head, r.bytes_read) for r in scan.results]


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "FORK_FROM", 1)  # fork even for the small fixture corpus


@pytest.mark.usefixtures("forking")
def test_several_processes_read_what_one_does(tmp_path: Path) -> None:
    jobs = jobs_for(tmp_path)
    one = scan_all(jobs, 1)
    assert one.results[3] is None
    assert sum(r is not None for r in one.results) == len(jobs) - 1
    assert sum(len(rows_in(r)) for r in one.results if r is not None) > 500
    for workers in (2, 3):
        assert key(scan_all(jobs, workers)) == key(one)


@pytest.mark.usefixtures("forking")
def test_a_failed_childs_files_are_read_by_the_parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    jobs = jobs_for(tmp_path)
    one = scan_all(jobs, 1)
    parent = os.getpid()
    real = scan.scan_file

    def dies_in_a_child(job: Job, buf: bytearray | None = None, plain: bool = False) -> Scanned:
        if os.getpid() != parent:
            (tmp_path / f"died-{os.getpid()}").touch()
            raise RuntimeError("a child that breaks after taking a batch")
        deadline = time.monotonic() + 30
        while not any(tmp_path.glob("died-*")) and time.monotonic() < deadline:
            time.sleep(0.01)  # the parent's first file waits until a child has taken a batch and broken
        return real(job, buf, plain)

    monkeypatch.setattr(scan, "scan_file", dies_in_a_child)
    assert key(scan_all(jobs, 3)) == key(one)
    assert list(tmp_path.glob("died-*"))


@pytest.mark.usefixtures("forking")
def test_progress_rises_to_the_whole(tmp_path: Path) -> None:
    jobs = jobs_for(tmp_path)
    heard: list[float] = []
    scan_all(jobs, 2, heard.append)
    assert heard
    assert heard == sorted(heard)
    assert heard[0] > 0
    assert heard[-1] <= 1.0
    one: list[float] = []
    scan_all(jobs, 1, one.append)
    assert one == sorted(one)
    assert one[-1] == 1.0
    assert len(one) == len(jobs)


@pytest.mark.usefixtures("forking")
def test_each_group_is_read_and_finished_by_one_process(tmp_path: Path) -> None:
    """Groups of files go whole to one process, which hands their results to `finish` there; the
    caller gets every group's value, and the same file results as without groups."""
    jobs = jobs_for(tmp_path)
    groups = [list(range(k, min(k + 4, len(jobs)))) for k in range(0, len(jobs), 4)]

    def finish(g: int, got: list[Scanned | None]) -> object:
        return (os.getpid(), [None if r is None else len(rows_in(r)) for r in got])

    for workers in (1, 3):
        scan = scan_all(jobs, workers, None, groups, finish)
        assert key(scan) == key(scan_all(jobs, 1))
        assert sorted(scan.finished) == list(range(len(groups)))
        finished = cast("dict[int, tuple[int, list[int | None]]]", scan.finished)  # what `finish` returned
        for g, (_pid, counts) in finished.items():
            assert counts == [None if (r := scan.results[i]) is None else len(rows_in(r)) for i in groups[g]]
        pids = {value[0] for value in finished.values()}
        if workers == 1:
            assert pids == {os.getpid()}


@pytest.mark.usefixtures("forking")
def test_no_fork_allowed_and_few_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When no process can be forked the parent reads the whole queue; when there are more groups
    than batches, several go to a batch. The same results either way."""
    jobs = jobs_for(tmp_path)
    one = key(scan_all(jobs, 1))
    monkeypatch.setattr(scan, "QUEUE_BATCHES", 4)
    assert key(scan_all(jobs, 3)) == one

    def no_fork() -> int:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr("session_watcher.reports.scan.os.fork", no_fork)
    assert key(scan_all(jobs, 3)) == one


@pytest.mark.usefixtures("forking")
def test_a_parent_failing_mid_scan_leaves_no_child(tmp_path: Path) -> None:
    """The parent's progress callback raises once a child has taken a batch: the error comes out of
    the scan, and every child is gone and waited for (none running on, none a zombie)."""
    jobs = jobs_for(tmp_path)
    parent = os.getpid()
    before = children_of_this_process()

    def finish(g: int, got: list[Scanned | None]) -> object:
        if os.getpid() != parent:
            (tmp_path / f"child-{os.getpid()}").touch()
            time.sleep(0.02)  # still reading when the parent fails
        return None

    def tick(share: float) -> None:
        deadline = time.monotonic() + 30
        while not any(tmp_path.glob("child-*")) and time.monotonic() < deadline:
            time.sleep(0.01)
        raise KeyboardInterrupt  # the user's ^C, say: not an Exception

    with pytest.raises(KeyboardInterrupt):
        scan_all(jobs, 3, tick, None, finish)
    children = [int(p.name.split("-")[1]) for p in tmp_path.glob("child-*")]
    assert children
    assert_all_reaped(children, before)


@pytest.mark.usefixtures("forking")
def test_no_child_holds_the_index_database(tmp_path: Path) -> None:
    """The index's SQLite connection is closed before the scan forks: while the files are read (in
    `finish`, which runs where they were read), no file descriptor of any process refers to the
    database, and the index is written afterwards as before."""
    projects = tmp_path / "projects" / "p"
    projects.mkdir(parents=True)
    jobs_for(projects, copies=2)
    db = tmp_path / "index.sqlite3"
    index = Index(str(db))
    index.refresh([], [str(tmp_path / "projects")])  # the database exists (and was open) before the scan
    index.workers = 3

    def finish(items: list[tuple[Source, Job, Scanned | None]]) -> object:
        held = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                held.append(os.readlink(f"/proc/self/fd/{fd}"))
            except OSError:
                continue
        return (os.getpid(), [p for p in held if p.startswith(str(db))])

    sources = discover([str(tmp_path / "projects")])
    assert len(sources) > 10
    stats, live = index.refresh(sources, [str(tmp_path / "projects")], finish=finish)
    seen = list(cast("dict[str, tuple[int, list[str]]]", index.finished).values())  # what `finish` returned
    assert {pid for pid, _held in seen} - {os.getpid()}  # some sessions were read by a child
    assert all(held == [] for _pid, held in seen)
    assert stats.files == len(sources) == len(live)
    assert sum(len(rows) for rows in index.rows(live).values()) > 500
    index.close()
