"""Parse a finished transcript in two processes: `replay`'s fold reads one chunk while a forked
child has already parsed the next.

The fold is sequential, the parse of a chunk's lines is not (`core.transcript.parse_lines` is pure,
line by line). The child walks the file with the very same reader (`state.reader.read_new`, so the
same chunks, cut at the same line ends, long lines skipped the same way), parses two chunks of every
three and leaves their events in a temp file; the parent parses the third itself (it also folds
every chunk) and takes the child's events for the others, checked by the chunk's byte range.
Anything unexpected (no fork, a child that died, a chunk that does not match) and the parent parses
the chunk itself: the events are the same either way, only the time differs. Not for hooks: they
fold a few new lines.
"""

from __future__ import annotations

import os
import pickle
import signal
import tempfile
from typing import IO, TYPE_CHECKING, Any

from session_watcher.core.transcript import parse_lines
from session_watcher.state.reader import CHUNK, read_new

if TYPE_CHECKING:
    from session_watcher.core.shapes import Event

MIN_BYTES = 2 * CHUNK  # a smaller file has no second chunk to parse meanwhile


class ForkedParser:
    """`parse(lines, start, end)` for the main transcript of one fold from its beginning; use it as
    a context manager (the child is waited for, or stopped, on exit)."""

    def __init__(self, path: str, min_bytes: int = MIN_BYTES) -> None:
        self.pid = 0
        self.index = 0
        self.pipe: IO[bytes] | None = None
        self.tmp: IO[bytes] | None = None
        self.taken = 0  # chunks whose events came from the child (for tests and benchmarks)
        try:
            big = os.path.getsize(path) >= min_bytes
        except OSError:
            big = False
        if not big or (os.cpu_count() or 1) < 2 or not hasattr(os, "fork"):
            return
        self.tmp = tempfile.TemporaryFile()  # noqa: SIM115 - shared with the child, closed by close()
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(rfd)
            code = 1
            try:
                _child(path, wfd, self.tmp.fileno())
                code = 0
            finally:
                os._exit(code)
        os.close(wfd)
        self.pid = pid
        self.pipe = os.fdopen(rfd, "rb")

    def __enter__(self) -> ForkedParser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)  # done or not: its events are no longer wanted
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
            self.pid = 0
        for f in (self.pipe, self.tmp):
            if f is not None:
                f.close()
        self.pipe = self.tmp = None

    def __call__(self, lines: list[bytes], start: int, end: int) -> tuple[list[Event], int]:
        if start == 0:
            self.index = 0  # the fold (re)started from the beginning
        index = self.index
        self.index += 1
        if _childs(index) and self.pipe is not None:
            got = self._take(index, start, end)
            if got is not None:
                self.taken += 1
                return got
        return parse_lines(lines)

    def _take(self, index: int, start: int, end: int) -> tuple[list[Event], int] | None:
        assert self.pipe is not None
        assert self.tmp is not None
        while True:
            head = self.pipe.readline().split()
            if len(head) != 5:  # the child ended (or died): parse here from now on
                self.close()
                return None
            n, first, last, at, size = (int(v) for v in head)
            if n < index:
                continue  # a chunk of an earlier pass (the fold started again)
            if (n, first, last) != (index, start, end):
                self.close()
                return None
            blob = os.pread(self.tmp.fileno(), size, at)
            events, bad = pickle.loads(blob)  # noqa: S301 - written by our child to an unlinked file
            return events, bad


def _childs(index: int) -> bool:
    """Chunks the child parses: two of every three (the parent folds them all meanwhile)."""
    return index % 3 != 0


def _child(path: str, out: int, tmp: int) -> None:
    """Walk the transcript as `session.sync_file` does; parse the child's chunks into `tmp`,
    announce each on `out` as "index start end offset size"."""
    cursor: dict[str, Any] | None = None
    index = pos = 0
    while True:
        before = cursor
        lines, cursor, skipped = read_new(path, before)
        if lines:
            if _childs(index):
                blob = pickle.dumps(parse_lines(lines), protocol=pickle.HIGHEST_PROTOCOL)
                view = memoryview(blob)
                at = pos
                while view:
                    n = os.pwrite(tmp, view, at)
                    view, at = view[n:], at + n
                start = int((before or {}).get("offset", 0))
                os.write(out, b"%d %d %d %d %d\n" % (index, start, cursor["offset"], pos, len(blob)))
                pos += len(blob)
            index += 1
        if not lines and not skipped and (before or {}).get("skip") == cursor.get("skip"):
            return
