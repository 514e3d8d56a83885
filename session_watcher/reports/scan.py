"""Reading transcript files into rows, on every core the process may use.

A cold report reads every byte of every transcript; the work is the search for marker lines and
the parse of those lines, which one Python process does on one core. `scan_all` puts the files,
largest first, in a queue (a pipe of batch numbers), forks a child for every usable core but one,
and every process takes the next batch whenever it is free; the children's rows come back through
a pipe (marshal: plain tuples, no pickling). The parent keeps the database; children only read.
Small jobs (or a system without fork) run in the process itself.
"""

from __future__ import annotations

import marshal
import os
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from session_watcher.reports.parse import MAX_LINE_BYTES, Row, head_dir, parse_chunk
from session_watcher.state.scratch import fork_with_sink, handed_back, send_back

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

_new = tuple.__new__

HEAD_BYTES = 4096
READ_BLOCK = 8 << 20
FORK_FROM = 32 << 20  # bytes to read before a second process pays for itself (a fork is ~2 ms)


class Job(NamedTuple):
    """Read `path` from byte `start`; `head` is the known first-line hash when `start` > 0."""

    path: str
    start: int
    head: str | None
    size: int  # the size seen by stat, to balance the shares


class Scanned(NamedTuple):
    """What reading one file gave: rows (and as marshal data, for the index), the offset after the
    last complete line, bytes seen."""

    rows: list[Row] | None  # None: not decoded from `blob` yet (`rows_in`)
    blob: bytes
    offset: int
    seen: int  # file size as read (the offset of the end of the last byte read)
    head: str
    mtime_ns: int  # 0 when the file grew while it was read (the next run looks again)
    bytes_read: int


def sha1(data: bytes = b"") -> Any:
    """A SHA-1 hash object (for cache keys, not security). The interpreter's own module when it has
    one: hashlib loads OpenSSL first, 3 ms of a cold report's start-up, for a hash of a few kB."""
    try:
        from _sha1 import sha1 as built_in  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import sha1 as built_in
    return built_in(data, usedforsecurity=False)


def head_hash(head: bytes) -> str:
    """Hash of a file's first line (at most HEAD_BYTES of it)."""
    nl = head.find(b"\n")
    return str(sha1(head[: nl + 1] if nl >= 0 else head).hexdigest())


def scan_file(job: Job, buf: bytearray | None = None) -> Scanned:
    """Rows of the complete lines of `job.path` from `job.start` on, read through `buf` (a new
    buffer when None; one buffer serves file after file). Raises OSError."""
    from session_watcher.paths import open_file  # a regular file only: /dev/zero would never end

    fd = open_file(job.path)
    try:
        pos = seen = job.start
        head = job.head
        # one buffer, read into again and again: a new 8 MB object per read cost a page fault for
        # every 4 kB of it. `kept` bytes at its front are a line not complete yet.
        if buf is None:
            buf = bytearray(min(READ_BLOCK, max(job.size - job.start, 0) + 4096))
        kept = 0
        rows: list[Row] = []
        while True:
            if kept == len(buf) and kept > MAX_LINE_BYTES:  # a line the parser skips: none of it is kept
                after_line, kept, seen = _past_line(fd, buf, seen)
                if after_line < 0:  # the file ends inside it: it waits, as a torn line does
                    break
                pos = after_line
            elif kept == len(buf):  # one line longer than the buffer
                buf.extend(bytes(len(buf)))
            with memoryview(buf) as room:
                got_bytes = os.preadv(fd, [room[kept:]], seen)
            if not got_bytes:
                break
            seen += got_bytes
            filled = kept + got_bytes
            if head is None:
                head = head_hash(bytes(buf[: min(filled, HEAD_BYTES)]))
            if not job.start and seen == got_bytes:  # a file read from its first byte: its folder first
                folder = head_dir(buf, filled)
                if folder is not None:
                    rows.append(folder)
            got, used = parse_chunk(buf, pos, filled)
            rows += got
            pos += used
            kept = filled - used
            if kept:
                buf[:kept] = buf[used:filled]
        after = os.fstat(fd)
    finally:
        os.close(fd)
    if head is None:
        head = head_hash(b"")
    blob = marshal.dumps([tuple(r) for r in rows])
    return Scanned(rows, blob, pos, seen, head, after.st_mtime_ns if after.st_size == seen else 0, seen - job.start)


def _past_line(fd: int, buf: bytearray, seen: int) -> tuple[int, int, int]:
    """Read on from `seen` to the end of the line under way, through `buf`, keeping none of it:
    (the offset after its newline, or -1 when the file ends first; how many bytes after the newline
    are now at the front of `buf`; the new `seen`). Memory stays the buffer's, whatever the line."""
    while True:
        with memoryview(buf) as room:
            got = os.preadv(fd, [room], seen)
        if not got:
            return -1, 0, seen
        nl = buf.find(b"\n", 0, got)
        seen += got
        if nl >= 0:
            rest = got - nl - 1
            buf[:rest] = buf[nl + 1 : got]
            return seen - rest, rest, seen


NO_ROWS = marshal.dumps([])  # the blob of a file without rows


def rows_in(s: Scanned) -> list[Row]:
    """A scan's rows (those read in another process are decoded here, when first asked for)."""
    return s.rows if s.rows is not None else rows_of(s.blob)


def rows_of(blob: bytes) -> list[Row]:
    """The rows `Scanned.blob` holds. Raises ValueError (EOFError, TypeError) on damaged data."""
    # marshal: our own rows, from our own 0600 cache or our own child process
    return [_new(Row, r) for r in marshal.loads(blob)]  # noqa: S302


def _scan_jobs(
    jobs: list[tuple[int, Job]], tick: Callable[[int], None] | None = None
) -> list[tuple[int, Scanned | None]]:
    out: list[tuple[int, Scanned | None]] = []
    buf = bytearray(min(READ_BLOCK, max((job.size - job.start for _i, job in jobs), default=0) + 4096))
    for i, job in jobs:
        try:
            out.append((i, scan_file(job, buf)))
        except OSError:  # unreadable (permissions, vanished mid-read): left out this time
            out.append((i, None))
        if tick is not None:
            tick(max(1, job.size - job.start))
    return out


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def batches(weights: list[int], most: int) -> list[list[int]]:
    """Group numbers in at most `most` batches, heaviest first: a big group is a batch of its own,
    small ones at the end share one, so the last batch any process takes is a short one."""
    order = sorted(range(len(weights)), key=lambda g: -weights[g])
    per = -(-len(order) // most) if order else 1
    if per == 1:
        return [[g] for g in order]
    return [order[k : k + per] for k in range(0, len(order), per)]


_TOKEN = 4  # bytes of one batch number in the queue pipe
# 4 kB of tokens: one write of at most PIPE_BUF into an empty pipe, which holds at least that much
# (Linux gives a pipe a single page when the user has too many), so it never waits for a reader
QUEUE_BATCHES = 1024

class _Work:
    """Jobs in groups (the files one `finish` needs together), the groups in batches, and the queue."""

    def __init__(self, jobs: list[Job], groups: list[list[int]], finish: Callable[[int, list[Scanned | None]], object]
                 | None) -> None:
        self.jobs, self.groups, self.finish = jobs, groups, finish
        self.weights = [sum(max(1, jobs[i].size - jobs[i].start) for i in g) for g in groups]
        self.parts = batches(self.weights, QUEUE_BATCHES)

    def take(self, queue: int, tick: Callable[[int], None] | None = None, frames: list[bytes] | None = None
             ) -> tuple[list[tuple[int, Scanned | None]], list[tuple[int, object]]]:
        """Batches taken from the queue pipe one at a time until it is empty: each file's result,
        and each group's `finish`. A read of one token is atomic among the readers, so each batch
        goes to exactly one process; whoever is free takes the next, which keeps the processes'
        finishing times within one batch of each other (shares fixed in advance by bytes finished
        15 % apart: lines with usage cost more than lines without). `tick` hears each batch number.
        With `frames` (a child), each batch's results go there at once as marshal data (`_frame`),
        while the other processes still read, instead of being returned."""
        out: list[tuple[int, Scanned | None]] = []
        done: list[tuple[int, object]] = []
        buf = bytearray(0)
        while True:
            token = os.read(queue, _TOKEN)
            if len(token) < _TOKEN:
                return out, done
            number = int.from_bytes(token, "little")
            for g in self.parts[number]:
                got: list[Scanned | None] = []
                for i in self.groups[g]:
                    job = self.jobs[i]
                    need = min(READ_BLOCK, max(job.size - job.start, 0) + 4096)
                    if len(buf) < need:
                        buf = bytearray(need)
                    try:
                        got.append(scan_file(job, buf))
                    except OSError:  # unreadable (permissions, vanished mid-read): left out this time
                        got.append(None)
                if self.finish is not None:
                    value = self.finish(g, got)
                    done.append((g, value))
                    if value is not None:  # what the caller needed of the rows is in `value`: the
                        got = [None if r is None else r._replace(rows=None) for r in got]  # blob stays
                out += zip(self.groups[g], got, strict=True)
            if frames is not None:
                frames.append(_frame(out, done))
                out, done = [], []
            if tick is not None:
                tick(number)


def _frame(out: list[tuple[int, Scanned | None]], done: list[tuple[int, object]]) -> bytes:
    """One batch's results as a child sends them: their length, then marshal data (rows stay in the blob)."""
    data = marshal.dumps(([(i, None if s is None else tuple(s[1:])) for i, s in out], done))
    return len(data).to_bytes(8, "little") + data


def _unframe(data: bytes) -> Iterator[tuple[list[tuple[int, Any]], list[tuple[int, object]]]]:
    """The frames `_frame` made, in order. Raises ValueError (EOFError, TypeError) on damaged data."""
    at = 0
    while at < len(data):
        size = int.from_bytes(data[at : at + 8], "little")
        if size <= 0 or at + 8 + size > len(data):
            raise ValueError("a frame cut short")
        yield marshal.loads(data[at + 8 : at + 8 + size])  # noqa: S302 - written by our own child
        at += 8 + size


class Scan(NamedTuple):
    """Each job's result in job order (None: the file could not be read), and each group's
    `finish` by group number (a group left out: its reader failed and the parent read it again)."""

    results: list[Scanned | None]
    finished: dict[int, object]


def scan_all(
    jobs: list[Job],
    workers: int | None = None,
    tick: Callable[[float], None] | None = None,
    groups: list[list[int]] | None = None,
    finish: Callable[[int, list[Scanned | None]], object] | None = None,
) -> Scan:
    """Read every job, in `groups` of job positions (default: a group per job) that one process
    reads together. `finish`, when given, is called in that process with the group's number and its
    files' results (in group order) and returns plain (marshal) data for the caller; the results
    of a group whose `finish` gave anything but None keep their rows only as `blob` (`rows_in`).
    `tick` hears the share of all bytes whose files are taken."""
    n = workers if workers is not None else cores()
    total = sum(max(0, j.size - j.start) for j in jobs)
    n = max(1, min(n, len(jobs), total // FORK_FROM + 1))
    work = _Work(jobs, [[i] for i in range(len(jobs))] if groups is None else groups, finish)
    weight = max(1, sum(work.weights))
    taken = [0]  # bytes in the batches before each batch number, for the progress
    for part in work.parts:
        taken.append(taken[-1] + sum(work.weights[g] for g in part))
    qr, qw = os.pipe()
    try:
        os.write(qw, b"".join(k.to_bytes(_TOKEN, "little") for k in range(len(work.parts))))
    finally:
        os.close(qw)  # the queue is complete: an empty read means no batch is left
    children: list[tuple[int, IO[bytes], int]] = []
    try:
        if hasattr(os, "fork"):
            for _ in range(n - 1):
                # what the child read comes back in an unnamed file (memfd), written whole at its end
                forked = fork_with_sink("session-watcher-report")
                if forked is None:  # no more processes allowed: the ones there take the whole queue
                    break
                pid, sink, end = forked
                if pid == 0:  # the child: scan, send, leave without running any of the parent's cleanup
                    code = 0
                    try:
                        frames: list[bytes] = []
                        work.take(qr, None, frames)
                        send_back(sink, end, b"".join(frames))
                    except BaseException:
                        code = 1
                    os._exit(code)
                children.append((pid, sink, end))
        results: list[Scanned | None] = [None] * len(jobs)
        seen = [False] * len(jobs)
        told = None if tick is None else (lambda number: tick(taken[number + 1] / weight))
        out, done = work.take(qr, told)
        for i, s in out:
            results[i], seen[i] = s, True
        finished: dict[int, object] = dict(done)
    finally:
        os.close(qr)
    for _pid, sink, ready in children:
        data = handed_back(sink, ready)  # b"" when it failed: what it took is read here (below)
        try:
            for sent, their in _unframe(data):
                for i, got in sent:
                    seen[i] = True
                    if got is not None:
                        results[i] = Scanned(None, *got)
                finished.update(their)
        except (ValueError, EOFError, TypeError):  # damaged: its frames from there on are read here
            pass
        del data
    missed = [(i, jobs[i]) for i in range(len(jobs)) if not seen[i]]
    for i, s in _scan_jobs(missed):
        results[i] = s
    for pid, _sink, _ready in children:
        os.waitpid(pid, 0)
    return Scan(results, finished)
