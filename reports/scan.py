"""Reading transcript files into rows, on every core the process may use.

A cold report reads every byte of every transcript; the work is the search for marker lines and
the parse of those lines, which one Python process does on one core. `scan_all` splits the files
into one share per usable core (largest first, each to the least loaded share), forks a child for
every share but the first, does the first itself, and takes the children's rows back through a
pipe (marshal: plain tuples, no pickling). The parent keeps the database; children only read.
Small jobs (or a system without fork) run in the process itself.
"""

from __future__ import annotations

import marshal
import os
from typing import TYPE_CHECKING, NamedTuple

from session_watcher.reports.parse import Row, parse_chunk

if TYPE_CHECKING:
    from collections.abc import Callable

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

    rows: list[Row]
    blob: bytes
    offset: int
    seen: int  # file size as read (the offset of the end of the last byte read)
    head: str
    mtime_ns: int  # 0 when the file grew while it was read (the next run looks again)
    bytes_read: int


def head_hash(head: bytes) -> str:
    """Hash of a file's first line (at most HEAD_BYTES of it)."""
    import hashlib

    nl = head.find(b"\n")
    return hashlib.sha1(head[: nl + 1] if nl >= 0 else head, usedforsecurity=False).hexdigest()


def scan_file(job: Job, buf: bytearray | None = None) -> Scanned:
    """Rows of the complete lines of `job.path` from `job.start` on, read through `buf` (a new
    buffer when None; one buffer serves file after file). Raises OSError."""
    fd = os.open(job.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
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
            if kept == len(buf):  # one line longer than the buffer
                buf.extend(bytes(len(buf)))
            with memoryview(buf) as room:
                got_bytes = os.preadv(fd, [room[kept:]], seen)
            if not got_bytes:
                break
            seen += got_bytes
            filled = kept + got_bytes
            if head is None:
                head = head_hash(bytes(buf[: min(filled, HEAD_BYTES)]))
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


def rows_of(blob: bytes) -> list[Row]:
    """The rows `Scanned.blob` holds. Raises ValueError (EOFError, TypeError) on damaged data."""
    # marshal: our own rows, from our own 0600 cache or our own child process
    return [_new(Row, r) for r in marshal.loads(blob)]  # noqa: S302


def _scan_share(
    jobs: list[tuple[int, Job]], tick: Callable[[float], None] | None = None
) -> list[tuple[int, Scanned | None]]:
    out: list[tuple[int, Scanned | None]] = []
    total = sum(max(1, job.size - job.start) for _i, job in jobs)
    done = 0
    buf = bytearray(min(READ_BLOCK, max((job.size - job.start for _i, job in jobs), default=0) + 4096))
    for i, job in jobs:
        try:
            out.append((i, scan_file(job, buf)))
        except OSError:  # unreadable (permissions, vanished mid-read): left out this time
            out.append((i, None))
        if tick is not None:
            done += max(1, job.size - job.start)
            tick(done / total)
    return out


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def shares(jobs: list[Job], n: int) -> list[list[tuple[int, Job]]]:
    """`n` lists of (position, job), balanced by bytes: largest first, to the lightest share."""
    out: list[list[tuple[int, Job]]] = [[] for _ in range(n)]
    load = [0] * n
    for i in sorted(range(len(jobs)), key=lambda i: -(jobs[i].size - jobs[i].start)):
        k = load.index(min(load))
        out[k].append((i, jobs[i]))
        load[k] += max(1, jobs[i].size - jobs[i].start)
    for share in out:
        share.sort()
    return out


def scan_all(
    jobs: list[Job], workers: int | None = None, tick: Callable[[float], None] | None = None
) -> list[Scanned | None]:
    """Each job's result, in job order (None for a file that could not be read). `tick` hears the
    share of its bytes this process has read (the shares are even, so it stands for all of them)."""
    n = workers if workers is not None else cores()
    total = sum(max(0, j.size - j.start) for j in jobs)
    n = max(1, min(n, len(jobs), total // FORK_FROM + 1))
    if n == 1 or not hasattr(os, "fork"):
        return [r for _i, r in _scan_share(list(enumerate(jobs)), tick)]
    parts = shares(jobs, n)
    children: list[tuple[int, int]] = []
    for share in parts[1:]:
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: scan, send, leave without running any of the parent's cleanup
            code = 0
            try:
                os.close(rfd)
                data = marshal.dumps([(i, None if s is None else tuple(s[1:])) for i, s in _scan_share(share)])
                with os.fdopen(wfd, "wb") as f:
                    f.write(data)
            except BaseException:
                code = 1
            os._exit(code)
        os.close(wfd)
        children.append((pid, rfd))
    results: list[Scanned | None] = [None] * len(jobs)
    for i, s in _scan_share(parts[0], tick):
        results[i] = s
    for (pid, rfd), share in zip(children, parts[1:], strict=True):
        with os.fdopen(rfd, "rb") as f:
            data = f.read()
        _pid, status = os.waitpid(pid, 0)
        if status != 0 or not data:  # the child failed: its files are read here instead
            for i, s in _scan_share(share):
                results[i] = s
            continue
        for i, got in marshal.loads(data):  # noqa: S302 - written by the child forked just above
            if got is not None:
                results[i] = Scanned(rows_of(got[0]), *got)
    return results
