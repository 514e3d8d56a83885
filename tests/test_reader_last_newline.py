"""state.reader's read for the cursor alone (`split=False`, state.ahead's plan): the chunk's last
newline is looked for from the chunk's end back a block (SALVAGE_BYTES) at a time; read after read,
the cursors are those of reads that cut every line, whatever the file: no newline in a chunk (a line
longer than it, skipped over several reads), a newline on a block's first or last byte, the
file's end inside a line or just past a newline."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from session_watcher.state import reader
from session_watcher.state.reader import read_new

if TYPE_CHECKING:
    from pathlib import Path

bodies = st.lists(st.sampled_from([b"a", b"bc", b"\n", b"defgh"]), max_size=40).map(b"".join)


def cursors(path: str, split: bool, most: int) -> list[tuple[dict[str, Any], int, bool]]:
    """Each read's (cursor, lines skipped, lines handed on or not) until the cursor stops moving."""
    out: list[tuple[dict[str, Any], int, bool]] = []
    before: dict[str, Any] | None = None
    for _ in range(200):
        lines, after, skipped = read_new(path, before, most, split=split)
        out.append((after, skipped, bool(lines)))
        if after == before:
            break
        before = after
    return out


@settings(max_examples=300)
@given(bodies, st.sampled_from([1, 2, 3, 4, 8]), st.sampled_from([1, 2, 3, 5, 8, 9, 16, 64]))
@example(b"abcd\nefgh", 4, 8)  # the newline on a block's last byte, the chunk's end a block's end
@example(b"abc\nefghijkl", 4, 8)  # on the byte before a block: found in the block before
@example(b"\nabcdefghijklmnop", 4, 16)  # on the chunk's first byte, four blocks back
@example(b"abcdefghijklmnopqrs\nt", 4, 8)  # none in two chunks: a line skipped over reads
def test_the_cursor_alone_moves_as_a_read_of_every_line(
        tmp_path_factory: pytest.TempPathFactory, body: bytes, block: int, most: int) -> None:
    path: Path = tmp_path_factory.mktemp("r") / "t.jsonl"
    path.write_bytes(body)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reader, "SALVAGE_BYTES", block)
        assert cursors(str(path), False, most) == cursors(str(path), True, most)
