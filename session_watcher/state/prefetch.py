"""Parse a finished transcript in two processes: `replay`'s fold reads one chunk while a forked
child has already parsed the next.

The fold is sequential, the parse of a chunk's lines is not (`core.bulkparse.parse_chunk`: the
hooks' parse, with msgspec for the fields an event needs and the markers found over the whole chunk;
pure). The child walks the
file with the very same reader (`state.reader.read_new`, so the same chunks, cut at the same line
ends, long lines skipped the same way), parses two chunks of every three and leaves their events in
an unnamed file (marshal); the parent parses the third itself (it also folds every chunk) and takes
the child's events for the others, checked by the chunk's byte range. Anything unexpected (no fork,
a child that died, a chunk that does not match) and the parent parses the chunk itself: the events
are the same either way, only the time differs. The child is the process pool's (`state.pool.fork`:
never from a process running threads, such as the live page's server; killed and reaped on every
way out). Not for hooks: they fold a few new lines.
"""

from __future__ import annotations

import marshal
import os
from typing import IO, TYPE_CHECKING, Any, Protocol

from session_watcher.agents.claude_code.bulkparse import parse_chunk
from session_watcher.state import pool
from session_watcher.state.reader import CHUNK, read_new

if TYPE_CHECKING:
    from session_watcher.core.shapes import Event

MIN_BYTES = 2 * CHUNK  # a smaller file has no second chunk to parse meanwhile


class ChunkParser(Protocol):
    """What `state.session.sync_file` asks of a whole fold's parser: the next chunk already parsed
    (`ahead`, or None), else a chunk read whole (`read`, as `read_new(..., whole=True)`) and parsed
    (`__call__`)."""

    def ahead(self, before: dict[str, Any] | None) -> tuple[list[Event], int, dict[str, Any], int] | None: ...

    def read(self, path: str, before: dict[str, Any] | None) -> tuple[list[bytes], dict[str, Any], int]: ...

    def __call__(self, lines: list[bytes], start: int) -> tuple[list[Event], int]: ...


class ForkedParser:
    """The main transcript's chunks for one fold from its beginning: `ahead(cursor)` gives the next
    chunk the child read and parsed, else the caller reads it and calls `parse(lines, start)`. Use
    it as a context manager (the child is stopped and waited for on exit)."""

    def __init__(self, path: str, min_bytes: int = MIN_BYTES) -> None:
        self.pid = 0
        self.index = 0
        self.pipe: IO[bytes] | None = None
        self.tmp: IO[bytes] | None = None
        self.taken = 0  # chunks whose events came from the child (for tests and benchmarks)
        self.next: tuple[int, int, int, int] | None = None  # the child's next chunk, announced
        try:
            big = os.path.getsize(path) >= min_bytes
        except OSError:
            big = False
        # parsed here (the same events) without a second core, or where the pool may not fork
        child = pool.fork("session-watcher-replay") if big and pool.cores() > 1 else None
        if child is None:
            return
        pid, self.tmp, end = child
        if pid == 0:  # the child: never returns
            code = 1
            try:
                _child(path, end, self.tmp.fileno())
                code = 0
            finally:
                os._exit(code)
        self.pid = pid
        self.pipe = os.fdopen(end, "rb")

    def __enter__(self) -> ForkedParser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.pid:
            pool.stop(self.pid)  # done or not: its events are no longer wanted
            self.pid = 0
        for f in (self.pipe, self.tmp):
            if f is not None:
                f.close()
        self.pipe = self.tmp = None

    def ahead(self, before: dict[str, Any] | None) -> tuple[list[Event], int, dict[str, Any], int] | None:
        """The next chunk after the cursor `before` as the child read and parsed it: (events, bad
        lines, the cursor after it, lines skipped as too long), or None: read and parse it here."""
        if before is not None and "skip" in before:
            return None  # in the middle of an over-long line: read here (the child's header is passed)
        start = int((before or {}).get("offset", 0))
        if start == 0:
            self.index = 0  # the fold (re)started from the beginning
        if not (_childs(self.index) and self.pipe is not None):
            return None
        got = self._take(self.index, start)
        if got is not None:
            self.index += 1
            self.taken += 1
        return got

    @staticmethod
    def read(path: str, before: dict[str, Any] | None) -> tuple[list[bytes], dict[str, Any], int]:
        """The chunk after `before`, read here whole (one item)."""
        return read_new(path, before, whole=True)

    def __call__(self, lines: list[bytes], start: int) -> tuple[list[Event], int]:
        """A chunk read here (`read_new(..., whole=True)`: one item), starting at byte `start`: its
        events and bad lines."""
        if start == 0:
            self.index = 0
        self.index += 1
        return parse_chunk(lines[0])

    def _take(self, index: int, start: int) -> tuple[list[Event], int, dict[str, Any], int] | None:
        assert self.pipe is not None
        assert self.tmp is not None
        while True:
            if self.next is None:
                head = self.pipe.readline().split()
                if len(head) != 4:  # the child ended (or died): parse here from now on
                    self.close()
                    return None
                self.next = (int(head[0]), int(head[1]), int(head[2]), int(head[3]))
            n, first, at, size = self.next
            if n < index:
                self.next = None
                continue  # a chunk read here meanwhile, or of an earlier pass (the fold started again)
            if n == index and first > start:
                return None  # reads without lines come first (an over-long line skipped): done here
            if (n, first) != (index, start):
                self.close()
                return None
            self.next = None
            blob = os.pread(self.tmp.fileno(), size, at)
            events, bad, cursor, skipped = marshal.loads(blob)  # noqa: S302 - our own child wrote it
            return events, bad, cursor, skipped


def _childs(index: int) -> bool:
    """Chunks the child parses: two of every three (the parent folds them all meanwhile)."""
    return index % 3 != 0


def _child(path: str, out: int, tmp: int) -> None:
    """Walk the transcript as `session.sync_file` does; parse the child's chunks into `tmp` (with
    the cursor after each), announce each on `out` as "index start offset size"."""
    cursor: dict[str, Any] | None = None
    index = pos = 0
    while True:
        before = cursor
        mine = _childs(index)
        lines, cursor, skipped = read_new(path, before, split=mine, whole=mine)  # the parent's: only the cursor
        if lines:
            if mine:
                events, bad = parse_chunk(lines[0])
                blob = marshal.dumps((events, bad, cursor, skipped))  # plain values: twice pickle's pace
                view = memoryview(blob)
                at = pos
                while view:
                    n = os.pwrite(tmp, view, at)
                    view, at = view[n:], at + n
                start = int((before or {}).get("offset", 0))
                os.write(out, b"%d %d %d %d\n" % (index, start, pos, len(blob)))
                pos += len(blob)
            index += 1
        if not lines and not skipped and (before or {}).get("skip") == cursor.get("skip"):
            return
