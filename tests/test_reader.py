"""state.reader: only bytes after the cursor, only complete lines, and a Reset when the file changed."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from session_watcher.core.errors import Reset
from session_watcher.state.reader import read_new

if TYPE_CHECKING:
    from pathlib import Path


def test_incremental_with_partial_lines(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_bytes(b'{"a":1}\n{"b":')
    lines, cur, skipped = read_new(str(p), None)
    assert lines == [b'{"a":1}']
    assert cur["offset"] == 8
    assert skipped == 0
    assert cur["head"] is not None
    # nothing new: same cursor, no lines
    again, cur2, _ = read_new(str(p), cur)
    assert again == []
    assert cur2["offset"] == 8
    with p.open("ab") as fh:
        fh.write(b'2}\n{"c":3}\n')
    lines, cur, _ = read_new(str(p), cur)
    assert lines == [b'{"b":2}', b'{"c":3}']
    assert cur["offset"] == p.stat().st_size


def test_empty_file_keeps_no_head(tmp_path: Path) -> None:
    p = tmp_path / "e.jsonl"
    p.write_bytes(b"")
    lines, cur, _ = read_new(str(p), None)
    assert lines == []
    assert cur["offset"] == 0
    assert cur["head"] is None
    p.write_bytes(b"x\n")
    lines, cur, _ = read_new(str(p), cur)
    assert lines == [b"x"]


def test_small_chunks_read_everything_once(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    want = [f'{{"n":{i},"pad":"{"x" * (i % 37)}"}}'.encode() for i in range(500)]
    p.write_bytes(b"".join(w + b"\n" for w in want))
    got: list[bytes] = []
    cur = None
    for _ in range(10_000):
        lines, cur, _ = read_new(str(p), cur, max_bytes=97)
        if not lines and cur["offset"] == p.stat().st_size:
            break
        got += lines
    assert got == want


def test_a_whole_fold_reads_less_than_a_hooks_most(tmp_path: Path) -> None:
    """A whole fold (`whole=True`) reads WHOLE_READ bytes at a time, a buffer the core's cache holds;
    a hook's read still takes up to CHUNK."""
    from session_watcher.state.reader import CHUNK, WHOLE_READ

    p = tmp_path / "w.jsonl"
    line = b'{"type":"user","pad":"' + b"x" * 70 + b'"}\n'
    p.write_bytes(line * (3 * WHOLE_READ // len(line)))
    size = p.stat().st_size
    assert WHOLE_READ < size < CHUNK
    chunk, cur, _ = read_new(str(p), None, whole=True)
    assert WHOLE_READ - len(line) < cur["offset"] <= WHOLE_READ
    assert chunk[0][:cur["offset"]] == line * (cur["offset"] // len(line))
    lines, cur, _ = read_new(str(p), None)
    assert (len(lines), cur["offset"]) == (size // len(line), size)


def test_a_whole_fold_keeps_a_line_longer_than_its_read(tmp_path: Path) -> None:
    """A line longer than a whole fold's read but within `max_bytes` is read whole, not skipped:
    what is skipped stays a line over `max_bytes`, whatever a whole fold reads at a time."""
    from session_watcher.state.reader import WHOLE_READ

    p = tmp_path / "k.jsonl"
    long = b'{"n":"' + b"x" * (2 * WHOLE_READ) + b'"}'
    p.write_bytes(b"a\n" + long + b"\nb\n")
    got: list[bytes] = []
    cur = None
    for _ in range(10):
        chunk, cur, skipped = read_new(str(p), cur, whole=True)
        assert skipped == 0
        if not chunk:
            break
        got += chunk[0][:chunk[0].rfind(b"\n")].split(b"\n")
    assert got == [b"a", long, b"b"]
    cur, skips = None, 0
    for _ in range(10):  # with a most of one whole read, the line is skipped
        chunk, cur, skipped = read_new(str(p), cur, max_bytes=WHOLE_READ, whole=True)
        skips += skipped
    assert skips == 1


def test_line_longer_than_a_chunk_is_skipped(tmp_path: Path) -> None:
    p = tmp_path / "l.jsonl"
    p.write_bytes(b"first\n" + b"y" * 5000 + b"\nlast\n")
    lines, cur, skipped = read_new(str(p), None, max_bytes=1000)
    assert lines == [b"first"]
    calls = 0
    skipped = 0
    while not skipped and calls < 100:  # at most one chunk per call: five calls for 5000 bytes
        lines, cur, skipped = read_new(str(p), cur, max_bytes=1000)
        calls += 1
        assert lines == []
    assert (calls, skipped) == (5, 1)
    assert "skip" not in cur
    lines, cur, skipped = read_new(str(p), cur, max_bytes=1000)
    assert (lines, skipped) == ([b"last"], 0)
    assert cur["offset"] == p.stat().st_size


@pytest.mark.parametrize("change", ["shrink", "replace", "rewrite-head", "rename"])
def test_changed_file_raises_reset(change: str, tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_bytes(b'{"first":1}\n{"second":2}\n')
    _, cur, _ = read_new(str(p), None)
    if change == "shrink":
        with p.open("r+b") as fh:
            fh.truncate(12)
    elif change == "replace":
        other = tmp_path / "o.jsonl"
        other.write_bytes(b'{"first":1}\n{"second":2}\n{"third":3}\n')  # same content, new inode
        os.replace(other, p)
    elif change == "rewrite-head":
        with p.open("r+b") as fh:
            fh.write(b'{"FIRST":1}\n{"second":2}\n{"more":1}\n')
    else:
        p.rename(tmp_path / "r.jsonl.1")
        p.write_bytes(b'{"first":1}\n{"second":2}\n{"x":1}\n')
    with pytest.raises(Reset):
        read_new(str(p), cur)
    # from scratch it reads the new file
    lines, _, _ = read_new(str(p), None)
    assert lines[0].lower() == b'{"first":1}'


def test_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_new(str(tmp_path / "none.jsonl"), None)


def test_lines_of_skips_an_over_long_line_without_holding_it(tmp_path: Path) -> None:
    """The line reader for readers that do not fold (the handoff's digest, a child's note): complete
    lines in order, one longer than the bound skipped across reads, the unfinished last one left
    out, a FIFO refused at once."""
    from session_watcher.core.errors import NotAFile
    from session_watcher.state.reader import lines_of

    p = tmp_path / "t.jsonl"
    p.write_bytes(b'{"a":1}\n' + b"x" * 3000 + b"\n" + b'{"b":2}\n\n{"c":3}')
    assert list(lines_of(str(p), max_line=1000, chunk=64)) == [b'{"a":1}', b'{"b":2}', b""]
    assert list(lines_of(str(p), max_line=5000, chunk=64))[1] == b"x" * 3000
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NotAFile):
        list(lines_of(str(fifo)))
