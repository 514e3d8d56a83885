"""The session page reads the chunks of a long transcript into one buffer (a whole fold's read,
`reader.WHOLE_READ`): a new object a read cost a page fault for every 4 kB of it. The reader's
lines and cursors are the ones it gives without the buffer, and the page's model is the one it was."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from session_watcher.base import sysos
from session_watcher.reports import session_page_data as spd
from session_watcher.state import reader

FIXTURES = Path(__file__).parent / "fixtures"
S258 = FIXTURES / "transcripts" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
NOW = 1_800_000_000.0

if TYPE_CHECKING:
    import pytest


def _reads(path: str, chunk: int, buf: bytearray | None) -> list[tuple[list[bytes], dict[str, Any], int]]:
    """Every whole read of `path` to its end: (its lines as bytes, the cursor, lines skipped)."""
    out: list[tuple[list[bytes], dict[str, Any], int]] = []
    cursor: dict[str, Any] | None = None
    fd = os.open(path, os.O_RDONLY)
    try:
        for _ in range(1000):
            lines, after, skipped = reader.read_new(path, cursor, chunk, whole=True, fd=fd, buf=buf)
            assert buf is None or not lines or lines[0] is buf or len(lines[0]) < chunk or skipped
            out.append(([bytes(x) for x in lines], after, skipped))
            if not lines and not skipped and (cursor or {}).get("skip") == after.get("skip"):
                return out
            cursor = after
    finally:
        os.close(fd)
    raise AssertionError("the reads did not end")


def test_a_whole_read_through_a_buffer_is_the_read_without(tmp_path: Path) -> None:
    """Chunks of 4 kB through one buffer: the same lines, cursors and skips as new bytes each read,
    over lines of every length, one longer than a chunk (skipped) and a short last chunk."""
    path = tmp_path / "t.jsonl"
    lines = [json.dumps({"type": "user", "n": i, "pad": "x" * (i * 37 % 900)}) for i in range(120)]
    lines.insert(50, json.dumps({"type": "user", "long": "y" * 10_000}))
    path.write_text("\n".join(lines) + "\n" + '{"torn": ')
    buf = bytearray(4096)
    got = _reads(str(path), 4096, buf)
    want = _reads(str(path), 4096, None)
    assert got == want
    assert sum(s for _l, _c, s in want) == 1
    assert sum(1 for ls, _c, _s in want if ls and len(ls[0]) == 4096) > 10  # whole chunks: through the buffer


def test_the_pages_chunks_after_the_first_share_one_buffer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A transcript of many chunks (here 128 kB ones): each whole chunk after the first is read into
    the same buffer, and the model is the one read chunk by chunk into new bytes."""
    small = 128 << 10
    monkeypatch.setattr(reader, "WHOLE_READ", small)  # a whole fold's read, the buffer's size
    monkeypatch.setattr(spd, "PAGE_BACKTEST_MAX", 1 << 30)
    tr = tmp_path / "projects" / "p" / S258.name
    tr.parent.mkdir(parents=True)
    tr.write_bytes(b"".join(S258.read_bytes().splitlines(keepends=True)[:400]))
    assert tr.stat().st_size > 3 * small
    real = os.preadv
    monkeypatch.delattr(os, "preadv")  # no buffer: new bytes each read
    want = spd.load_model(str(tr), now=NOW)
    buffers: list[int] = []

    def preadv(fd: int, bufs: list[Any], at: int) -> int:
        buffers.extend(id(b) for b in bufs)
        return real(fd, bufs, at)

    monkeypatch.setattr(os, "preadv", preadv, raising=False)
    monkeypatch.setattr(sysos, "preadv", preadv)  # the reader's
    got = spd.load_model(str(tr), now=NOW)
    assert len(buffers) >= 2
    assert len(set(buffers)) == 1
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)


def test_only_a_claude_code_transcripts_later_chunks_take_the_buffer() -> None:
    """The first chunk (read before the fold) and a Codex rollout's (its decoder keeps state across
    reads) are new bytes each; a Claude Code transcript's later chunks share one buffer."""
    from session_watcher.agents.codex import AGENT as CODEX

    with spd.PageRead(str(S258)) as read:
        assert read._buffer(None) is None
        assert read._buffer({"offset": 0}) is None
        first = read._buffer({"offset": 4096})
        assert isinstance(first, bytearray)
        assert len(first) == reader.WHOLE_READ
        assert read._buffer({"offset": 8192}) is first
        assert read._buffer({"offset": 4096, CODEX.name: True}) is None
    assert read._buf is None  # given back with the read
