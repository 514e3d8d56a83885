"""The cold scan's read buffer: a cache-sized one (`scan.READ_BLOCK`) whatever the file's size, grown
only for a line longer than it, and the same rows, offsets and hashes whatever size it has: lines
longer than the buffer, lines cut at every read's end, a torn last line left for the next run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from session_watcher.reports import scan
from session_watcher.reports.parse import DIR_SEARCH_BYTES
from session_watcher.reports.scan import Job, Scanned, scan_file

FIXTURE = Path(__file__).parent / "fixtures" / "transcripts" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
LONG = 768 << 10  # a line longer than the buffer


def transcript(tmp: Path, torn: bool = True) -> Path:
    """A real transcript, then one call line and one tool result each longer than the buffer, then
    the transcript again, and (`torn`) half of a last line, its newline not written yet."""
    lines = FIXTURE.read_bytes().splitlines(keepends=True)
    call = next(json.loads(line) for line in lines if b'"usage"' in line and b'"assistant"' in line)
    call["message"]["id"] = "msg_long"
    call["message"]["content"] = [{"type": "text", "text": "a" * LONG}]
    result = {"type": "user", "message": {"role": "user", "content": "b" * (LONG // 2 + 17)}}
    body = b"".join(lines) + json.dumps(call).encode() + b"\n" + json.dumps(result).encode() + b"\n"
    body += b"".join(lines[:-1])
    if torn:
        body += lines[-1][: len(lines[-1]) // 2]
    path = tmp / "t.jsonl"
    path.write_bytes(body)
    return path


def facts(got: Scanned) -> tuple[object, ...]:
    return (got.rows, got.blob, got.offset, got.seen, got.head, got.bytes_read)


def test_a_large_transcript_is_read_through_a_cache_sized_buffer(tmp_path: Path) -> None:
    path = transcript(tmp_path, torn=False)
    size = path.stat().st_size
    assert size > 4 << 20
    lines = [line for line in path.read_bytes().splitlines() if line]
    longest = max(len(line) for line in lines)
    buf = [bytearray(0)]
    got = scan._scan_or_none(Job(str(path), 0, None, size), buf, False)
    assert got is not None
    # not the file's size: a buffer of READ_BLOCK, doubled only until the longest line fits
    room = len(buf[0])
    assert room < 2 * longest
    assert room < size // 4
    whole = scan_file(Job(str(path), 0, None, size), bytearray(size + 4096))
    assert facts(got) == facts(whole)
    assert any(r[3] is not None and r[3].startswith("msg_long") for r in got.rows or [])  # the key


def test_a_long_line_grows_the_buffer_for_its_own_file_only(tmp_path: Path) -> None:
    """The buffer a process keeps goes back to READ_BLOCK for the next file: a long line in one
    transcript does not leave every later read at its size."""
    long_one = transcript(tmp_path, torn=False)
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(FIXTURE.read_bytes() * 4)
    buf = [bytearray(0)]
    assert scan._scan_or_none(Job(str(long_one), 0, None, long_one.stat().st_size), buf, False) is not None
    assert len(buf[0]) > scan.READ_BLOCK
    got = scan._scan_or_none(Job(str(plain), 0, None, plain.stat().st_size), buf, False)
    assert len(buf[0]) == scan.READ_BLOCK
    alone = scan_file(Job(str(plain), 0, None, plain.stat().st_size))
    assert got is not None
    assert facts(got) == facts(alone)


@pytest.mark.parametrize("torn", [True, False])
def test_the_same_rows_whatever_the_buffer(tmp_path: Path, torn: bool) -> None:
    path = transcript(tmp_path, torn)
    size = path.stat().st_size
    job = Job(str(path), 0, None, size)
    whole = scan_file(job, bytearray(size + 4096))
    assert whole.offset == (size - len(path.read_bytes().rsplit(b"\n", 1)[1]) if torn else size)
    assert whole.seen == size
    # the working folder is looked for in the first read: a buffer never smaller than its search
    assert scan.READ_BLOCK >= DIR_SEARCH_BYTES
    for room in (DIR_SEARCH_BYTES, DIR_SEARCH_BYTES + 4099, scan.READ_BLOCK, 3 * scan.READ_BLOCK + 1):
        assert facts(scan_file(job, bytearray(room))) == facts(whole), room
    assert facts(scan_file(job)) == facts(whole)
    # read on from where the last run stopped: the rows after that offset, as a whole read gives them
    later = whole.rows and whole.rows[len(whole.rows) // 2]
    assert later
    start = later[0]  # its offset
    rest = scan_file(Job(str(path), start, whole.head, size))
    assert rest.rows == [r for r in whole.rows or [] if r[0] >= start]
    assert (rest.offset, rest.seen) == (whole.offset, whole.seen)


def _report(tmp: Path, name: str) -> dict[str, Any]:
    from session_watcher.reports.collect import run_report

    doc, _stats = run_report([str(tmp / "projects")], str(tmp / f"{name}.sqlite3"), now=2e9)
    return {k: v for k, v in doc.items() if k != "index"}  # the index's own figures: its bytes, its time


def test_a_report_over_a_line_longer_than_the_buffer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold report over a transcript with a call line of 768 kB (longer than READ_BLOCK, shorter
    than MAX_LINE_BYTES): the same document as one whose scan reads the whole file at once, and the
    long call counted as the same call with a short text is."""
    folder = tmp_path / "projects" / "-p"
    folder.mkdir(parents=True)
    session = folder / FIXTURE.name
    transcript(folder, torn=False).rename(session)
    assert session.stat().st_size > 4 * scan.READ_BLOCK
    small = _report(tmp_path, "small")
    monkeypatch.setattr(scan, "READ_BLOCK", 64 << 20)
    assert _report(tmp_path, "whole") == small
    monkeypatch.undo()
    session.write_bytes(session.read_bytes().replace(b"a" * LONG, b"a"))  # the long call, its text short
    short = _report(tmp_path, "short")
    (got,), (want,) = small["sessions"], short["sessions"]
    assert (got["apiCalls"], got["tokens"]) == (want["apiCalls"], want["tokens"])
    assert want["apiCalls"] > 100


@pytest.mark.parametrize("torn", [True, False])
def test_the_lines_after_one_the_scan_passes_over(tmp_path: Path, torn: bool) -> None:
    """A line longer than twice MAX_LINE_BYTES (`scan._past_line` reads past it, keeping none of
    it) with the rest of the file in the read that found its end: the rows after it are those of
    the file without it (a read that found the end after it parsed nothing of what it held: 9 rows
    of 301, the offset just past the long line, and the index then kept that as read)."""
    from session_watcher.reports.parse import MAX_LINE_BYTES

    lines = FIXTURE.read_bytes().splitlines(keepends=True)
    before, after = b"".join(lines[:40]), b"".join(lines[40:])
    if torn:
        after = after[:-5]
    long = b'{"type":"progress","data":"' + b"x" * (2 * MAX_LINE_BYTES + 7) + b'"}\n'
    path, plain = tmp_path / "long.jsonl", tmp_path / "plain.jsonl"
    path.write_bytes(before + long + after)
    plain.write_bytes(before + after)
    got = scan_file(Job(str(path), 0, None, path.stat().st_size))
    want = scan_file(Job(str(plain), 0, None, plain.stat().st_size))
    shifted = [(r[0] - len(long), *r[1:]) if r[0] > len(before) else r for r in got.rows or []]
    assert shifted == want.rows
    assert len(want.rows or []) > 100
    assert (got.offset - len(long), got.seen - len(long)) == (want.offset, want.seen)
