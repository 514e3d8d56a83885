"""A finished transcript parsed on two cores while it is folded (`replay`'s read of a large file).

The fold is sequential, the parse of a chunk is not (`Agent.read` of a whole chunk: pure, bytes in,
events out). Before anything is parsed, the file is cut in chunks of complete lines (`plan`: a whole
fold's read each, fewer and larger ones in a file too long for the queue; `state.reader.read_new`'s
cursors, by the cheap reading that looks only for each chunk's last newline), and a
forked child (`pool.fork`) parses them in order, taking each chunk's number from a queue pipe; the
fold takes each chunk's events from it. When the next chunk to fold is not ready, this process
takes the next number from the queue and parses that chunk itself meanwhile (or the very chunk it
waits for, when no one has taken it yet), so both processes stay busy whichever is slower. The
child hands its events over through a pipe, so it gets no further ahead than the pipe holds (a
chunk's events, about a tenth of its bytes): memory stays bounded however long the file. The
events are the same whoever parses a chunk; anything unexpected (a read that is not the next
planned one, a child that ended) and the chunk is read and parsed here, as without a child.

Only where it can pay: a large file (`sessions.replay.TWO_CORES_BYTES`) of the fallback agent
(Claude Code: its lines stand alone), with a second core idle (`worth_forking`: no other process
running now, little CPU pressure of late); never from a process running threads (`pool.fork`).
Not for hooks: they fold a few new lines.
"""

from __future__ import annotations

import marshal
import os

from session_watcher.state import pool
from session_watcher.state.reader import CHUNK, HEAD_BYTES, WHOLE_READ, read_new

TYPE_CHECKING = False  # typing is slow to import
if TYPE_CHECKING:
    from typing import Any

    from session_watcher.agents.seam import Agent
    from session_watcher.core.shapes import Event

    Load = tuple[float | None, float, int]  # (CPU pressure %, load average, processes running now)

PRESSURE_MAX = 20.0  # % of the last 10 s in which some process waited for a core: above it, none is idle
_TOKEN = 4  # bytes of one chunk number in the queue
_HEAD = 12  # a result's header in the pipe: its chunk number (4 bytes) and its length (8)
PIPE_BYTES = 1 << 20  # the pipe's size asked for: Linux's default most for a user


class Planned:
    """One chunk of the plan: the cursor it starts from, its first byte, the bytes of its lines, the
    cursor it leaves."""

    __slots__ = ("after", "before", "size", "start")

    def __init__(self, before: dict[str, Any] | None, start: int, size: int, after: dict[str, Any]) -> None:
        self.before, self.start, self.size, self.after = before, start, size, after


def worth_forking(load: Load | None = None, cores: int | None = None) -> bool:
    """A second core stands idle (`machine_load()`, or `load`): no other process runs at this
    instant, and over the last seconds few processes waited for a core (the CPU pressure, under
    PRESSURE_MAX %; where the system keeps none, the last minute's load average leaves half a core).
    A child without a core of its own only adds the copy of its events to the same work."""
    cores = pool.cores() if cores is None else cores
    if cores < 2:
        return False
    pressure, average, running = machine_load() if load is None else load
    if running > cores - 1:
        return False
    return pressure < PRESSURE_MAX if pressure is not None else average <= cores - 0.5


def machine_load() -> Load:
    """(the CPU pressure over the last 10 s, %: the share of the time some process waited for a core,
    None where the system keeps none; the last minute's load average; the processes running now,
    this one among them), from /proc; where there is no /proc/loadavg, a load that forks nothing."""
    try:
        with open("/proc/loadavg", "rb") as fh:
            fields = fh.read().split()
        average, running = float(fields[0]), int(fields[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return None, float("inf"), 1 << 30
    try:
        with open("/proc/pressure/cpu", "rb") as fh:
            some = fh.readline().split()  # some avg10=.. avg60=.. avg300=.. total=..
        return float(some[1].removeprefix(b"avg10=")), average, running
    except (OSError, ValueError, IndexError):
        return None, average, running


def plan(path: str, fd: int, most: int = pool.QUEUE_BATCHES) -> list[Planned] | None:
    """The file cut in chunks of complete lines from its start, read after read, with the cursors, up
    to the first read that is not a plain chunk of lines (an over-long line skipped, the end) or
    `most` of them; None for fewer than two (the fold reads on from there). A chunk is a whole fold's
    read (WHOLE_READ), or where the rest would not fit in the chunks left, its share of the rest (up
    to a hook's most: the plan covers a file of `most` of those); a line longer than that is read as
    the fold reads it (`read_new`'s most, which decides what is skipped)."""
    out: list[Planned] = []
    before: dict[str, Any] | None = None
    size = os.fstat(fd).st_size
    while len(out) < most:
        start = int((before or {}).get("offset", 0))
        unit = min(CHUNK, max(WHOLE_READ, -(-(size - start) // (most - len(out)))))
        lines, after, skipped = read_new(path, before, max_bytes=unit, split=False, fd=fd)
        if skipped or "skip" in after:  # a line longer than the unit: read as the fold reads it
            lines, after, skipped = read_new(path, before, split=False, fd=fd)
        if skipped or "skip" in after or not lines:
            break
        out.append(Planned(before, start, int(after["offset"]) - start, after))
        before = after
    return out if len(out) > 1 else None


class Ahead:
    """`state.session.ChunkReader` of one whole fold of `path` from its start: `read` hands on the
    next planned chunk (its first bytes stand for its lines: the events are `parsed`), else reads as
    `read_new` does (`parsed` None: the caller parses). `close` (or the context's exit) stops the child."""

    def __init__(self, path: str, agent: Agent, chunks: list[Planned], fd: int) -> None:
        self.path, self.agent, self.chunks, self.fd = path, agent, chunks, fd
        self.head = os.pread(fd, HEAD_BYTES, 0)  # the agent is named from a file's first line
        self.next = 0  # the next planned chunk to hand on
        self.parsed: tuple[list[Event], int] | None = None
        self.mine: dict[int, tuple[list[Event], int]] = {}  # parsed here ahead of their turn
        self.theirs: dict[int, bytes] = {}  # the child's, encoded, read ahead of their turn
        self.taken = 0  # chunks whose events came from the child (for tests and benchmarks)
        self.pid = 0
        self.pipe = -1
        qr, qw = os.pipe()
        try:
            os.write(qw, b"".join(k.to_bytes(_TOKEN, "little") for k in range(len(chunks))))
        finally:
            os.close(qw)  # the queue is complete: an empty read means every chunk is taken
        self.queue = qr
        child = pool.fork("session-watcher-parse")
        if child is None:  # no fork here: this process takes the whole queue
            return
        pid, sink, end = child
        sink.close()  # the results come through the pipe: the child gets no further ahead than it holds
        if pid == 0:  # the child: never returns
            self._child(end)
        self.pid, self.pipe = pid, end

    def __enter__(self) -> Ahead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the child (its work is no longer wanted, or all of it is in) and close the pipes."""
        if self.pid:
            pool.stop(self.pid)
            self.pid = 0
        for fd in (self.pipe, self.queue, self.fd):
            if fd >= 0:
                os.close(fd)
        self.pipe = self.queue = self.fd = -1
        self.chunks = []

    def read(self, path: str, before: dict[str, Any] | None) -> tuple[list[bytes], dict[str, Any], int]:
        k = self.next
        if k < len(self.chunks) and path == self.path and before == self.chunks[k].before:
            self.parsed = self._events(k)
            self.next += 1
            return [self.head], self.chunks[k].after, 0
        self.close()  # off the plan (the fold started again, or went past it): read as without a child
        self.parsed = None
        return read_new(path, before, whole=True)

    def took(self, events: list[Event]) -> None:
        self.parsed = None

    def _parse(self, k: int) -> tuple[list[Event], int]:
        c = self.chunks[k]
        return self.agent.read(None, {}, [os.pread(self.fd, c.size, c.start)], True)

    def _events(self, k: int) -> tuple[list[Event], int]:
        """Chunk k's events: the child's when it parsed them, else parsed here; while the child is
        still at it, the next chunk no one took is parsed here meanwhile."""
        while True:
            got = self.mine.pop(k, None)
            if got is not None:
                return got
            data = self.theirs.pop(k, None)
            if data is not None:
                self.taken += 1
                events, bad = marshal.loads(data)  # noqa: S302 - our own child wrote it
                return events, bad
            if self._heard(wait=False):
                continue
            token = os.read(self.queue, _TOKEN) if self.queue >= 0 else b""
            if len(token) == _TOKEN:
                j = int.from_bytes(token, "little")
                self.mine[j] = self._parse(j)
            elif not self._heard(wait=True):  # every chunk taken, k not in: the child ended
                return self._parse(k)

    def _heard(self, wait: bool) -> bool:
        """Read one result of the child's when one is there (`wait`: until one comes); False when
        none came (the child ended: what it did not hand over is done here)."""
        if self.pipe < 0:
            return False
        os.set_blocking(self.pipe, wait)
        try:
            head = os.read(self.pipe, _HEAD)
        except BlockingIOError:
            return False
        os.set_blocking(self.pipe, True)
        head += _read(self.pipe, _HEAD - len(head)) if head else b""
        size = int.from_bytes(head[4:], "little")
        data = _read(self.pipe, size) if len(head) == _HEAD else b""
        if len(head) < _HEAD or len(data) < size:  # the child ended, at most part of a result written
            os.close(self.pipe)
            self.pipe = -1
            return False
        self.theirs[int.from_bytes(head[:4], "little")] = data
        return True

    def _child(self, out: int) -> None:
        """The child's whole life: chunks from the queue until it is empty, each one's events written
        to `out` after its header; out without any of the parent's cleanup."""
        code = 1
        try:
            _widen(out)
            while True:
                token = os.read(self.queue, _TOKEN)
                if len(token) < _TOKEN:
                    break
                data = marshal.dumps(self._parse(int.from_bytes(token, "little")))
                view = memoryview(token + len(data).to_bytes(8, "little") + data)
                while view:
                    view = view[os.write(out, view):]
            code = 0
        finally:
            os._exit(code)


def _read(fd: int, size: int) -> bytes:
    """`size` bytes from the pipe `fd`, fewer only where its writer ended."""
    parts = []
    while size > 0:
        got = os.read(fd, min(size, 1 << 20))
        if not got:
            break
        parts.append(got)
        size -= len(got)
    return b"".join(parts)


def _widen(fd: int) -> None:
    """The pipe `fd` made to hold a whole chunk's events where the system allows (the child writes
    one while this process folds the last), else as it is."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass


def ahead(path: str, agent_of: Any) -> Ahead | None:
    """An `Ahead` for a whole fold of the transcript at `path` (a large one: the caller's to judge),
    or None where no second core is idle (`worth_forking`) or the file is not plain chunks of the
    fallback agent's (Claude Code's: lines that stand alone, cursors without an agent's mark).
    `agent_of(head)`: the agent whose log opens with these bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    keep = False
    try:
        if not worth_forking():
            return None
        agent = agent_of(os.pread(fd, HEAD_BYTES, 0))
        if not agent.fallback or agent.stateful or agent.open_end:  # the fallback's cursors carry no mark of
            return None  # its own (`state.session.read_events`): the plan's are the fold's
        chunks = plan(path, fd)
        if chunks is None:
            return None
        got = Ahead(path, agent, chunks, fd)
        keep = True
        return got
    finally:
        if not keep:
            os.close(fd)
