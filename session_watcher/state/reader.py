"""The incremental transcript reader: only bytes after the cursor, only complete lines.

The cursor is {path, dev, ino, offset, head, tail}: head is a CRC of the file's first line and tail
a CRC of the TAIL_BYTES just before the offset, so a file that was rewritten in place (same inode,
new content, even with its first line kept) is noticed, as is a shrunk, rotated or replaced one;
any of those means the fold must start again from the beginning (`Reset`).

A read hands on at most MAX_LINES lines (the caller looks at its deadline between reads, so a
chunk of millions of tiny lines is folded in bounded steps). A line longer than a whole chunk
(8 MiB) cannot be held: it is skipped and counted in the state's
`bad` (`status --json` shows the count). An API call's usage is kept though, as ccusage keeps it: the
line's first and last 64 KiB, with the message's `content` (what made it long) left out, are handed
on as the line. The skip reads at most one chunk per call and remembers how far it got (`skip`), so
a huge file without a newline costs each hook one bounded read, never a read to the end.
"""

from __future__ import annotations

import zlib

from session_watcher.agents.seam import MAX_LINE_BYTES, split_lines
from session_watcher.base import sysos
from session_watcher.core.errors import Reset

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


CHUNK = 8 << 20
# what a whole fold (`read_new(whole=True)`: replay, the session page, the backtest) reads at a time:
# a buffer the core's cache holds is still cached when the parse reads it (docs/benchmarks.md); a
# line longer than this is read again with up to `max_bytes`, so what is skipped stays the same
WHOLE_READ = 1 << 20
# lines one read hands on at most: the fold's deadline is looked at between reads, and 8 MiB of
# tiny lines (8M of them, seconds to parse) would otherwise be one step far past any budget
MAX_LINES = 1 << 17
HEAD_BYTES = 4096
TAIL_BYTES = 4096
SALVAGE_BYTES = 64 << 10


def _head(fd: int) -> int:
    first = sysos.pread(fd, HEAD_BYTES, 0)
    nl = first.find(b"\n")
    return zlib.crc32(first if nl < 0 else first[:nl])


def _tail(fd: int, offset: int) -> int:
    start = max(0, offset - TAIL_BYTES)
    return zlib.crc32(sysos.pread(fd, offset - start, start))


def _salvage(fd: int, start: int, end: int) -> bytes | None:
    """The over-long line [start, end) without its message's content, when that makes a whole
    assistant record (its usage, model and ids are at both ends of the line); else None."""
    head = sysos.pread(fd, SALVAGE_BYTES, start)
    tail_from = max(start, end - SALVAGE_BYTES)
    tail = sysos.pread(fd, end - tail_from, tail_from)
    message = head.find(b'"message":{')
    content = head.find(b'"content":', message) if message >= 0 else -1
    after = tail.rfind(b',"stop_reason":')
    if content < 0 or after < 0 or b'"type":"assistant"' not in head + tail:
        return None
    line = head[:content] + b'"content":[]' + tail[after:]
    from session_watcher.core import fastjson

    try:
        rec = fastjson.loads(line)
    except ValueError:
        return None
    return line if isinstance(rec, dict) and rec.get("type") == "assistant" else None


def read_new(  # noqa: PLR0913, PLR0917  # a read's options, each some caller's
    path: str, cursor: dict[str, Any] | None, max_bytes: int = CHUNK, split: bool = True, whole: bool = False,
    fd: int | None = None, buf: bytearray | None = None, end: int | None = None,
) -> tuple[list[bytes], dict[str, Any], int]:
    """(complete new lines, the advanced cursor, lines skipped as too long to keep).

    Raises FileNotFoundError/OSError when the file cannot be read, Reset when it changed under us.
    Reads at most about `max_bytes`; call again while lines keep coming or the cursor moves.
    `split=False`: only the cursor is wanted; the lines are one item (not all of their bytes, nor cut).
    `whole=True`: the lines are one item, the chunk read, not cut: its lines up to its last newline
    are the new lines (`core.bulkparse.parse_chunk` reads them so; no MAX_LINES: for a whole fold).
    `fd`: `path` already open (the caller's, left open): a whole file read through one open. `buf`
    (with `whole`, `max_bytes` long): a whole chunk is read into it and handed on as the one item,
    valid until the next read (the same memory read into again: a new chunk a read costs a page
    fault for every 4 kB of it). `end`: read as if the file ended there (a line end: `line_end`), the
    cursor checked against the file as it is.
    """
    own = fd is None
    # O_NONBLOCK: a FIFO in the transcript's place would otherwise block the open forever
    fd = sysos.open(path, sysos.O_RDONLY | getattr(sysos, "O_NONBLOCK", 0)) if fd is None else fd
    try:
        f = _Open(path, fd, cursor)
        if f.skip is None:
            got = f.lines(max_bytes, split and not whole, whole, buf, end)
            if got is not None:
                return got
        lines, moved, skipped = f.skip_long_line(max_bytes)
        return ([lines[0] + b"\n"] if whole and lines else lines), moved, skipped
    finally:
        if own:
            sysos.close(fd)


class _Open:
    """The transcript open at the cursor: `offset`, the head CRC, and `skip`, how far the skip of an
    over-long line at `offset` got (None: not in one). Reset when the cursor does not describe the file."""

    __slots__ = ("fd", "head", "offset", "path", "skip", "st")

    def __init__(self, path: str, fd: int, cursor: dict[str, Any] | None) -> None:
        self.path, self.fd = path, fd
        self.st = st = sysos.fstat(fd)
        self.offset: int = 0
        self.head: Any = None
        self.skip: int | None = None
        if cursor is None:
            return
        offset = int(cursor.get("offset", 0))
        same = (cursor.get("path") == path and cursor.get("dev") == st.st_dev
                and cursor.get("ino") == st.st_ino and st.st_size >= offset)
        if not same or (offset > 0 and (cursor.get("head") != _head(fd) or (
                "tail" in cursor and cursor["tail"] != _tail(fd, offset)))):
            raise Reset(path)
        self.offset, self.head, self.skip = offset, cursor.get("head"), cursor.get("skip")

    def moved(self, offset: int, skip: int | None = None) -> dict[str, Any]:
        """The cursor at `offset` (with `skip` when a skip is under way)."""
        if self.head is None and offset > 0:
            self.head = _head(self.fd)
        st = self.st
        out = {"path": self.path, "dev": st.st_dev, "ino": st.st_ino, "offset": offset, "head": self.head,
               "tail": _tail(self.fd, offset)}
        if skip is not None:
            out["skip"] = skip
        return out

    def lines(self, max_bytes: int, split: bool, whole: bool = False, buf: bytearray | None = None,
              end: int | None = None) -> tuple[list[bytes], dict[str, Any], int] | None:
        """The complete lines after the offset (at most `max_bytes`; none past `end`); None when one
        line is longer than that (`skip` is then past the chunk read, where the skip goes on)."""
        fd, offset, size = self.fd, self.offset, self.st.st_size
        if end is not None:
            size = min(size, end)
        if size <= offset:
            return [], self.moved(offset), 0
        most = want = min(max_bytes, size - offset)
        if whole:
            want = min(want, WHOLE_READ)
        if not split and not whole:  # the last newline, looked for from the chunk's end back a block at a time
            got = self._last_newline(offset + want)
            if got is not None:
                return [got[0]], self.moved(got[1]), 0
        if whole and buf is not None and want == len(buf) and sysos.preadv(fd, [buf], offset) == want:
            # the buffer as the chunk: its readers (bulkparse.parse_chunk, the page's) take either
            chunk: bytes = buf  # type: ignore[assignment]
        else:
            chunk = sysos.pread(fd, want, offset)
        if want < most and b"\n" not in chunk:  # a line longer than a whole fold's read: up to a chunk
            chunk = sysos.pread(fd, most, offset)
        if split:
            lines, used = split_lines(chunk, MAX_LINES)
        else:
            used = chunk.rfind(b"\n") + 1
            lines = [chunk] if used else []
        if used or len(chunk) < max_bytes:
            return lines, self.moved(offset + used), 0
        self.skip = offset + len(chunk)
        return None

    def _last_newline(self, end: int) -> tuple[bytes, int] | None:
        """(the block holding the last newline before `end`, the offset just past that newline),
        reading back from `end` SALVAGE_BYTES at a time (a long line there is passed over without
        reading the chunk); None where there is none after the offset, or the file shrank meanwhile."""
        while end > self.offset:
            start = max(self.offset, end - SALVAGE_BYTES)
            block = sysos.pread(self.fd, end - start, start)
            nl = block.rfind(b"\n")
            if len(block) < end - start:
                return None
            if nl >= 0:
                return block, start + nl + 1
            end = start
        return None

    def skip_long_line(self, max_bytes: int) -> tuple[list[bytes], dict[str, Any], int]:
        """At most one chunk more of the over-long line at the offset, however long: at its end, what
        `_salvage` keeps of it, counted as skipped; else the cursor remembers how far the skip got."""
        skip = self.skip
        assert skip is not None
        end = skip + max_bytes
        while skip < end:
            block = sysos.pread(self.fd, min(1 << 20, end - skip), skip)
            if not block:
                break
            nl = block.find(b"\n")
            if nl >= 0:
                kept = _salvage(self.fd, self.offset, skip + nl)
                return [kept] if kept else [], self.moved(skip + nl + 1), 1
            skip += len(block)
        return [], self.moved(self.offset, skip), 0


def line_end(path: str, mark: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """A cursor at the end of the file's last complete line as it is now, or `mark` (such a cursor)
    where it still describes the file (read on, not rewritten since); None when it cannot be read.
    A mark without a whole offset (a damaged state's) is no mark."""
    if mark is not None and not (type(mark.get("offset")) is int and mark["offset"] >= 0):
        mark = None
    try:
        fd = sysos.open(path, sysos.O_RDONLY | getattr(sysos, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if mark is not None:
            try:
                _Open(path, fd, mark)
                return mark
            except (Reset, TypeError, ValueError):  # rewritten, or a mark that is no cursor
                pass
        f = _Open(path, fd, None)
        got = f._last_newline(f.st.st_size)
        return f.moved(0 if got is None else got[1])
    except OSError:  # not a file that can be read back (a FIFO)
        return None
    finally:
        sysos.close(fd)


def lines_of(path: str, max_line: int = MAX_LINE_BYTES, chunk: int = 1 << 20) -> Iterator[bytes]:
    """Every complete line of the regular file at `path` (its newline cut), in order, as a reader
    that is not folding needs them (the handoff's digest, a child's note): memory bounded by
    `max_line` + `chunk`, a longer line skipped without being held, a last line without its newline
    left out. OSError as `paths.open_file` raises it (a FIFO or device there: NotAFile)."""
    from session_watcher.base.paths import open_file

    fd = open_file(path)
    try:
        buf = b""
        skipping = False
        while True:
            data = sysos.read(fd, chunk)
            if not data:
                return
            if skipping:  # inside an over-long line: drop bytes up to its end
                nl = data.find(b"\n")
                if nl < 0:
                    continue
                data, skipping = data[nl + 1:], False
            buf += data
            lines = buf.split(b"\n")
            buf = lines.pop()
            yield from (line for line in lines if len(line) <= max_line)
            if len(buf) > max_line:
                buf, skipping = b"", True
    finally:
        sysos.close(fd)


def last_whole_line(path: str, cursor: dict[str, Any]) -> tuple[list[bytes], dict[str, Any]] | None:
    """The file's last line when it has no newline but is a whole JSON record holding a `payload` (a
    finished Codex rollout copied without its last newline), with the cursor past it."""
    offset = int(cursor.get("offset", 0))
    try:
        fd = sysos.open(path, sysos.O_RDONLY | getattr(sysos, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        size = sysos.fstat(fd).st_size
        if not 0 < size - offset <= MAX_LINE_BYTES:
            return None
        tail = sysos.pread(fd, size - offset, offset)
        return ([tail], _Open(path, fd, cursor).moved(size)) if whole_record(tail) else None
    finally:
        sysos.close(fd)


def whole_record(tail: bytes) -> bool:
    """`tail`, a file's last bytes after its last newline, is a whole JSON record holding a `payload`
    (a finished Codex rollout's last line, copied without its newline): taken, where a torn line waits."""
    from session_watcher.core import fastjson

    if b"\n" in tail or not tail.rstrip().endswith(b"}"):
        return False
    try:
        rec = fastjson.loads(tail)
    except ValueError:
        return False
    return isinstance(rec, dict) and "payload" in rec
