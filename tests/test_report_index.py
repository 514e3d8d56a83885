"""The SQLite index: unchanged files skipped, appended bytes only, rewrites and deletions, corruption."""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from session_watcher.agents.claude_code.discover import discover
from session_watcher.reports import scan
from session_watcher.reports.collect import Progress, run_report
from session_watcher.reports.index import Index
from session_watcher.reports.parse import ROW_FIELDS

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
AE = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    proj = tmp_path / "projects" / "proj"
    proj.mkdir(parents=True)
    shutil.copy2(FIXTURES / f"{AE}.jsonl", proj / f"{AE}.jsonl")
    shutil.copytree(FIXTURES / AE, proj / AE)
    shutil.copy2(FIXTURES / "tool_heavy.jsonl", proj / "tool_heavy.jsonl")
    return tmp_path


def run(corpus: Path) -> tuple[dict[str, Any], Any]:
    return run_report([str(corpus / "projects")], str(corpus / "cache" / "index.sqlite3"), now=1.8e9)


def totals(doc: dict[str, Any]) -> dict[str, dict[str, int]]:
    return {s["sessionId"]: s["tokens"] for s in doc["sessions"]}


def counts_as_a_cold_build(corpus: Path, doc: dict[str, Any], cache_read: int) -> None:
    """`doc` (a warm run's) and the next warm run's totals are a cold build's, whose tool_heavy
    session holds `cache_read` tokens; the next run reads nothing."""
    cold, _ = run_report([str(corpus / "projects")], str(corpus / "cold.sqlite3"), now=1.8e9)
    assert totals(cold)["tool_heavy"]["cacheRead"] == cache_read
    assert totals(doc) == totals(cold)
    again, st = run(corpus)
    assert (st.reread, st.skipped) == (0, st.files)
    assert totals(again) == totals(cold)


def call_line(mid: str, cr: int, cw: int, ts: str = "2026-02-12T16:00:00.000Z") -> bytes:
    rec = {
        "type": "assistant",
        "isSidechain": False,
        "timestamp": ts,
        "requestId": f"req_{mid}",
        "message": {
            "id": mid,
            "model": "claude-opus-4-6",
            "usage": {
                "input_tokens": 1,
                "output_tokens": 2,
                "cache_read_input_tokens": cr,
                "cache_creation_input_tokens": cw,
            },
        },
    }
    return (json.dumps(rec) + "\n").encode()


def test_discovery_finds_main_and_subagent_files(corpus: Path) -> None:
    found = discover([str(corpus / "projects")])
    assert sorted((Path(s.path).name, s.session, s.sub) for s in found) == [
        (f"{AE}.jsonl", AE, False),
        ("agent-aac57f5.jsonl", AE, True),
        ("agent-acompact-946d2b.jsonl", AE, True),
        ("tool_heavy.jsonl", "tool_heavy", False),
    ]


def test_second_run_reads_nothing(corpus: Path) -> None:
    """An unchanged corpus: every file skipped without reading a byte, the same report."""
    first, s1 = run(corpus)
    size = sum(p.stat().st_size for p in (corpus / "projects").rglob("*.jsonl"))
    assert s1.bytes_read == size
    assert s1.reread == 4
    second, s2 = run(corpus)
    assert (s2.bytes_read, s2.skipped, s2.appended, s2.reread) == (0, 4, 0, 0)
    assert first["index"]["cached"] is False
    assert second["index"]["cached"] is True
    first.pop("index")
    second.pop("index")
    assert first == second


def test_append_reads_only_the_new_bytes(corpus: Path) -> None:
    """Append two lines: the re-run reads exactly those bytes and counts the new call once."""
    first, _ = run(corpus)
    main = corpus / "projects" / "proj" / f"{AE}.jsonl"
    extra = call_line("msg_new", 50_000, 700) + call_line("msg_new", 50_000, 700)  # two blocks, one call
    with main.open("ab") as f:
        f.write(extra)
    second, st = run(corpus)
    assert second["index"]["cached"] is False
    assert st.bytes_read == len(extra)
    assert (st.appended, st.skipped) == (1, 3)
    before, after = totals(first)[AE], totals(second)[AE]
    assert after["cacheRead"] - before["cacheRead"] == 50_000
    assert after["cacheWrite"] - before["cacheWrite"] == 700
    s = {x["sessionId"]: x for x in second["sessions"]}[AE]
    assert s["calls"] == 218


def test_partial_last_line_waits(corpus: Path) -> None:
    """A line without its newline is not counted until it is complete; then only that line is read."""
    run(corpus)
    main = corpus / "projects" / "proj" / "tool_heavy.jsonl"
    line = call_line("msg_half", 10, 20_000)
    with main.open("ab") as f:
        f.write(line[:40])
    d1, st1 = run(corpus)
    assert st1.bytes_read == 40
    assert {x["sessionId"]: x for x in d1["sessions"]}["tool_heavy"]["calls"] == 4
    with main.open("ab") as f:
        f.write(line[40:])
    d2, st2 = run(corpus)
    assert st2.bytes_read == len(line)  # the unfinished 40 bytes again, with the rest
    assert {x["sessionId"]: x for x in d2["sessions"]}["tool_heavy"]["calls"] == 5


def test_rewritten_file_is_read_again(corpus: Path) -> None:
    """A file replaced by other content (even a longer one) is re-read, not appended to."""
    run(corpus)
    main = corpus / "projects" / "proj" / "tool_heavy.jsonl"
    old_size = main.stat().st_size
    new = b"".join(call_line(f"m{i}", 1000, 10) for i in range(400))
    assert len(new) > old_size
    tmp = main.with_suffix(".tmp")
    tmp.write_bytes(new)
    os.replace(tmp, main)
    doc, st = run(corpus)
    assert st.bytes_read == len(new)
    assert st.reread == 1
    t = totals(doc)["tool_heavy"]
    assert (t["cacheRead"], t["cacheWrite"]) == (400_000, 4_000)


def test_a_file_replaced_with_the_same_size_and_mtime_is_read_again(corpus: Path) -> None:
    """Size and mtime equal to the index's do not make a file unchanged when it is another file (its
    inode differs): the index reads it again, whole, and the report counts what it holds now (its
    facts unchanged, the session's part and the finished report kept by them were taken before),
    on that run and the next."""
    run(corpus)
    main = corpus / "projects" / "proj" / "tool_heavy.jsonl"
    old = main.stat()
    body = b"".join(call_line(f"r{i}", 1000, 10) for i in range(400))
    tmp = main.with_suffix(".tmp")
    tmp.write_bytes(body[:old.st_size - 1] + b"\n")
    os.utime(tmp, ns=(old.st_atime_ns, old.st_mtime_ns))
    os.replace(tmp, main)
    now = main.stat()
    assert (now.st_size, now.st_mtime_ns) == (old.st_size, old.st_mtime_ns)
    assert now.st_ino != old.st_ino
    doc, st = run(corpus)
    assert (st.reread, st.bytes_read, st.skipped) == (1, old.st_size, st.files - 1)
    counts_as_a_cold_build(corpus, doc, 1000 * body[:old.st_size].count(b"\n"))


def test_a_replaced_file_renumbered_by_a_report_run_beside_this_one(corpus: Path) -> None:
    """Two report runs read the same replaced file (same size and mtime, another inode): the one that
    stores second finds the row renumbered by the other since it loaded it. Its rows go to the file's
    row as it is now, not under an id no file has, which the next new file would be given with them
    (that file's session then counted the replaced file's calls, on any report that read its rows)."""
    roots, db = [str(corpus / "projects")], str(corpus / "cache" / "index.sqlite3")
    run(corpus)
    main = corpus / "projects" / "proj" / "tool_heavy.jsonl"
    old = main.stat()
    body = b"".join(call_line(f"r{i}", 1000, 10) for i in range(400))
    tmp = main.with_suffix(".tmp")
    tmp.write_bytes(body[:old.st_size - 1] + b"\n")
    os.utime(tmp, ns=(old.st_atime_ns, old.st_mtime_ns))
    os.replace(tmp, main)
    beside: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:  # called between this run's look at the index and its writes
        if done and not beside:
            beside.append((done, total))
            run(corpus)

    run_report(roots, db, now=1.8e9, progress=progress)
    assert beside
    assert beside[0][0] < beside[0][1]  # the other run went between this one's read and its store
    with contextlib.closing(sqlite3.connect(db)) as conn:
        orphans = "SELECT count(*) FROM chunks WHERE file_id NOT IN (SELECT id FROM files)"
        assert conn.execute(orphans).fetchone() == (0,)
    (corpus / "projects" / "proj" / "new.jsonl").write_bytes(b"".join(call_line(f"n{i}", 7, 1) for i in range(3)))
    run(corpus)
    warm, _ = run_report(roots, db, now=1.8e9, since=1.0)  # another report's sums: every session's rows read
    cold, _ = run_report(roots, str(corpus / "cold.sqlite3"), now=1.8e9, since=1.0)
    assert totals(cold)["new"]["cacheRead"] == 21
    assert totals(warm) == totals(cold)


def test_a_file_put_back_after_a_run_without_it_takes_an_id_never_given(corpus: Path) -> None:
    """A file moved away for one run (its row dropped), then put back with other content of the size
    and mtime it had: a new file to the index, under an id no file had (SQLite gives the highest id
    dropped again), so the finished report kept by the file's id and facts does not stand for it."""
    run(corpus)
    main = corpus / "projects" / "proj" / "tool_heavy.jsonl"
    old = main.stat()
    os.replace(main, corpus / "away.jsonl")
    _, st = run(corpus)
    assert st.dropped == 1
    body = b"".join(call_line(f"r{i}", 1000, 10) for i in range(400))
    main.write_bytes(body[:old.st_size - 1] + b"\n")
    os.utime(main, ns=(old.st_atime_ns, old.st_mtime_ns))
    doc, st = run(corpus)
    assert (st.reread, st.dropped) == (1, 0)
    counts_as_a_cold_build(corpus, doc, 1000 * body[:old.st_size].count(b"\n"))


def test_an_index_without_last_id_is_built_again(corpus: Path) -> None:
    """An index of this schema made before its files' highest id was kept (`meta` without `lastId`):
    a file dropped by a run and put back with other content of its size and mtime took its old id
    again, and the finished report kept by that id and those facts stood for it (the old figures, on
    every run after). Such an index is built again at open, as one of another version is."""
    run(corpus)
    db = corpus / "cache" / "index.sqlite3"
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("DELETE FROM meta WHERE key = 'lastId'")  # the index as the code before lastId left it
    main = corpus / "projects" / "proj" / "tool_heavy.jsonl"
    old = main.stat()
    os.replace(main, corpus / "away.jsonl")
    _, st = run(corpus)
    assert st.reread == st.files  # built again: every file read
    body = b"".join(call_line(f"r{i}", 1000, 10) for i in range(400))
    main.write_bytes(body[:old.st_size - 1] + b"\n")
    os.utime(main, ns=(old.st_atime_ns, old.st_mtime_ns))
    doc, st = run(corpus)
    counts_as_a_cold_build(corpus, doc, 1000 * body[:old.st_size].count(b"\n"))
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'lastId'").fetchone() is not None


def test_shrunk_file_is_read_again(corpus: Path) -> None:
    run(corpus)
    main = corpus / "projects" / "proj" / "tool_heavy.jsonl"
    lines = main.read_bytes().splitlines(keepends=True)
    main.write_bytes(b"".join(lines[:20]))
    doc, st = run(corpus)
    assert st.reread == 1
    assert st.bytes_read == main.stat().st_size
    fresh, _ = run_report([str(corpus / "projects")], str(corpus / "other.sqlite3"), now=1.8e9)
    assert totals(doc) == totals(fresh)


def test_deleted_file_drops_out(corpus: Path) -> None:
    """Deleting a subagent file removes its tokens; deleting a session removes the session."""
    first, _ = run(corpus)
    sub = corpus / "projects" / "proj" / AE / "subagents" / "agent-aac57f5.jsonl"
    sub.unlink()
    (corpus / "projects" / "proj" / "tool_heavy.jsonl").unlink()
    second, st = run(corpus)
    assert st.dropped == 2
    assert "tool_heavy" not in totals(second)
    assert totals(second)[AE]["total"] < totals(first)[AE]["total"]
    with contextlib.closing(sqlite3.connect(corpus / "cache" / "index.sqlite3")) as conn:
        assert conn.execute("SELECT COUNT(*) FROM files").fetchone()[0] == 2


def test_corrupt_database_is_rebuilt(corpus: Path) -> None:
    """Garbage where the database was: thrown away and rebuilt, same answer as a fresh run."""
    first, _ = run(corpus)
    db = corpus / "cache" / "index.sqlite3"
    db.write_bytes(b"this is not a database" * 500)
    second, st = run(corpus)
    assert second["index"]["rebuilt"] is True
    assert st.reread == 4
    assert totals(second) == totals(first)
    third, st3 = run(corpus)
    assert st3.bytes_read == 0
    assert third["index"]["rebuilt"] is False


def test_index_from_an_older_schema_is_replaced(corpus: Path) -> None:
    db = corpus / "cache" / "index.sqlite3"
    db.parent.mkdir()
    with contextlib.closing(sqlite3.connect(db)) as conn:  # `with conn` alone commits, never closes
        conn.execute("CREATE TABLE files (path TEXT)")
        conn.execute("PRAGMA user_version=0")
        conn.commit()
    doc, st = run(corpus)
    assert st.reread == 4
    assert len(doc["sessions"]) == 2


def test_index_is_private(corpus: Path) -> None:
    run(corpus)
    assert (corpus / "cache" / "index.sqlite3").stat().st_mode & 0o077 == 0


class FakeTerminal:
    """A stderr stand-in that says it is a terminal and keeps what was written."""

    def __init__(self, tty: bool) -> None:
        self.tty = tty
        self.text = ""

    def isatty(self) -> bool:
        return self.tty

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass


def shown(progress: Progress) -> str:
    """What `progress` wrote to its FakeTerminal."""
    assert isinstance(progress.stream, FakeTerminal)
    return progress.stream.text


def test_progress_bar_only_on_a_terminal_after_a_moment(corpus: Path) -> None:
    quick = Progress(FakeTerminal(True))
    quick(1, 10)
    assert shown(quick) == ""  # not before the delay
    slow = Progress(FakeTerminal(True))
    slow.DELAY = 0.0
    slow(5, 10)
    assert "5/10" in shown(slow)
    pipe = Progress(FakeTerminal(False))
    pipe.DELAY = 0.0
    pipe(5, 10)
    assert shown(pipe) == ""
    idx = Index(str(corpus / "db.sqlite3"))
    seen: list[tuple[int, int]] = []
    idx.refresh(discover([str(corpus / "projects")]), [str(corpus / "projects")], lambda d, t: seen.append((d, t)))
    idx.close()
    assert seen[0] == (0, 4)
    assert seen[-1] == (4, 4)


def test_an_index_another_run_holds_is_left_to_it(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that finds the index held by another past the busy timeout (a long cold build, a run
    stopped with ^Z mid-write) reports from a copy in memory and leaves the file as it is: it was
    thrown away under the other run before (SQLite's BUSY taken for a damaged database)."""
    from session_watcher.reports import index as index_mod

    db = corpus / "cache" / "index.sqlite3"
    run(corpus)
    main = corpus / "projects" / "proj" / "tool_heavy.jsonl"
    with main.open("ab") as f:
        f.write(call_line("msg_held", 5_000, 100))
    monkeypatch.setattr(index_mod, "BUSY_TIMEOUT", 0.05)
    inode = db.stat().st_ino
    beside = sorted(os.listdir(corpus / "cache" / "index-reports"))  # the texts the file's rows name
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another run's write under way: readers may read, no one writes
    try:
        files_before = holder.execute("SELECT count(*) FROM files").fetchone()[0]
        doc, _st = run(corpus)
        assert db.stat().st_ino == inode  # the same file: not removed and made again
        assert sorted(os.listdir(corpus / "cache" / "index-reports")) == beside  # nor what it names
        assert holder.execute("SELECT count(*) FROM files").fetchone()[0] == files_before
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    fresh, _ = run_report([str(corpus / "projects")], str(corpus / "other.sqlite3"), now=1.8e9)
    assert totals(doc) == totals(fresh)
    again, st = run(corpus)  # the file again, as the last run that could write it left it
    assert totals(again) == totals(fresh)
    assert (st.appended, st.reread) == (1, 0)


def test_an_index_another_run_holds_exclusive_is_not_copied_past_the_wait(
    corpus: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run held off past the busy timeout by another's exclusive lock (a run stopped mid-commit)
    builds its report in an empty index in memory: the copy of the file waited for the lock to go
    before (sqlite3's backup tries a busy step again without end), a report that never came."""
    import threading

    from session_watcher.reports import index as index_mod

    db = corpus / "cache" / "index.sqlite3"
    run(corpus)
    monkeypatch.setattr(index_mod, "BUSY_TIMEOUT", 0.05)
    inode = db.stat().st_ino
    beside = sorted(os.listdir(corpus / "cache" / "index-reports"))
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")  # no other connection may read it now
    # only so that the code before could end at all: the lock let go long after any run here
    valve = threading.Timer(120, holder.execute, ("ROLLBACK",))
    valve.start()
    try:
        doc, st = run(corpus)
    finally:
        valve.cancel()
        with contextlib.suppress(sqlite3.Error):
            holder.execute("ROLLBACK")
        holder.close()
    assert (st.reread, st.skipped) == (4, 0)  # every file read into the index in memory
    assert db.stat().st_ino == inode
    assert sorted(os.listdir(corpus / "cache" / "index-reports")) == beside  # an empty index's rows name none
    fresh, _ = run_report([str(corpus / "projects")], str(corpus / "other.sqlite3"), now=1.8e9)
    assert totals(doc) == totals(fresh)
    again, st = run(corpus)  # the file as it was: nothing to read, its report as kept
    assert (st.reread, st.skipped) == (0, 4)
    assert again["index"]["cached"] is True


def _chunks_rewritten(corpus: Path, rewrite: Any) -> int:
    """Every stored chunk of rows replaced by `rewrite(its blob)`; how many there were."""
    with contextlib.closing(sqlite3.connect(corpus / "cache" / "index.sqlite3")) as conn:
        got = conn.execute("SELECT rowid, data FROM chunks").fetchall()
        for rowid, data in got:
            conn.execute("UPDATE chunks SET data = ? WHERE rowid = ?", (rewrite(data), rowid))
        conn.commit()
    return len(got)


@pytest.mark.parametrize("stored", [[1, 2], [(1, 2)], [("x",) * 12, 5]])
def test_stored_rows_that_are_no_rows_rebuild_the_index(corpus: Path, stored: list[object]) -> None:
    """A chunk whose marshal data reads back but holds no rows (ints, a short tuple): the index is
    taken as damaged and built again, the report a cold build's, not an internal error."""
    assert {len(ROW_FIELDS)} == scan._ROW_LEN  # what a row read back is checked against
    first, _ = run(corpus)
    assert _chunks_rewritten(corpus, lambda _data: marshal.dumps(stored, 2)) >= 4
    main = corpus / "projects" / "proj" / f"{AE}.jsonl"
    with main.open("ab") as f:  # the file's stored rows are asked for again
        f.write(call_line("msg_more", 50_000, 700))
    doc, _ = run(corpus)
    assert doc["index"]["rebuilt"] is True
    assert totals(doc)[AE]["cacheRead"] == totals(first)[AE]["cacheRead"] + 50_000
    counts_as_a_cold_build(corpus, doc, totals(first)["tool_heavy"]["cacheRead"])


def test_rows_stored_by_the_previous_version_are_read(corpus: Path) -> None:
    """An index whose rows were written the previous way (marshal's default version, with its
    back-references): read as they are (no rebuild), the report a cold build's."""
    first, _ = run(corpus)
    assert _chunks_rewritten(corpus, lambda data: marshal.dumps([tuple(r) for r in marshal.loads(data)])) >= 4
    main = corpus / "projects" / "proj" / f"{AE}.jsonl"
    with main.open("ab") as f:
        f.write(call_line("msg_more", 50_000, 700))
    doc, st = run(corpus)
    assert doc["index"]["rebuilt"] is False
    assert st.appended == 1
    assert totals(doc)[AE]["cacheRead"] == totals(first)[AE]["cacheRead"] + 50_000
    counts_as_a_cold_build(corpus, doc, totals(first)["tool_heavy"]["cacheRead"])
