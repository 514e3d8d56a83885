"""Reading transcript files into rows, on every core the process may use.

A cold report reads every byte of every transcript; the work is the search for marker lines and
the parse of those lines, which one Python process does on one core. `scan_all` hands the files,
largest first and in the groups one `finish` needs together, to the one process pool
(`state.pool.map_batches`: forked children and this process, each taking the next batch whenever
it is free); a child's results come back as marshal data (plain tuples, no pickling). The parent
keeps the database; children only read. Small jobs (or a system without fork) run in the process
itself.
"""

from __future__ import annotations

import marshal
import os

from session_watcher.state import pool

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NamedTuple

    from session_watcher.reports.parse import Row
    from session_watcher.reports.parse_events import Parser
else:
    from session_watcher.core.named import NamedTuple


HEAD_BYTES = 4096
# bytes a read asks for: a buffer this size stays in a core's own cache (L2), where the kernel's copy
# lands and the marker search reads it again; one of 8 MB went out to memory and back (docs/benchmarks.md).
# At least parse.DIR_SEARCH_BYTES: the working folder is looked for in a file's first read
READ_BLOCK = 256 << 10
FORK_FROM = 32 << 20  # bytes to read before a second process pays for its fork


class Job(NamedTuple):
    """Read `path` from byte `start`; `head` is the known first-line hash when `start` > 0."""

    path: str
    start: int
    head: str | None
    size: int  # the size seen by stat, to balance the shares
    whole: bool = False  # read from its start by its agent's own decoder (reports.parse_events)


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
    one: hashlib loads OpenSSL first, a share of a cold report's start-up, for a hash of a few kB."""
    try:
        from _sha1 import sha1 as built_in  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import sha1 as built_in
    return built_in(data, usedforsecurity=False)


def head_hash(head: bytes) -> str:
    """Hash of a file's first line (at most HEAD_BYTES of it)."""
    nl = head.find(b"\n")
    return str(sha1(head[: nl + 1] if nl >= 0 else head).hexdigest())


def scan_file(job: Job, buf: bytearray | None = None, plain: bool = False) -> Scanned:
    """Rows of the complete lines of `job.path` from `job.start` on, read through `buf` (a new
    buffer when None; one buffer serves file after file); `plain`: without the schema's decoder
    (`parse.parse_chunk`'s). Raises OSError."""
    from session_watcher.base.paths import open_file  # a regular file only: /dev/zero would never end
    from session_watcher.reports.parse import MAX_LINE_BYTES, head_dir, parse_chunk  # only when a file is read
    from session_watcher.reports.parse_events import events_parser

    fd = open_file(job.path)
    parse: Parser = parse_chunk
    try:
        pos = seen = job.start
        head = job.head
        # one buffer, read into again and again (a new large object per read cost a page fault for every
        # 4 kB of it), grown only for a line longer than it. `kept` bytes at its front are a line
        # not complete yet.
        if buf is None:
            buf = bytearray(min(READ_BLOCK, max(job.size - job.start, 0) + 4096))
        kept = 0
        rows: list[Row] = []
        fresh = False  # `kept` bytes after a passed-over line, not parsed yet
        while True:
            if kept == len(buf) and kept > MAX_LINE_BYTES:  # a line the parser skips: none of it is kept
                after_line, kept, seen = _past_line(fd, buf, seen)
                if after_line < 0:  # the file ends inside it: it waits, as a torn line does
                    break
                pos, fresh = after_line, kept > 0
            elif kept == len(buf):  # one line longer than the buffer
                buf.extend(bytes(len(buf)))
            with memoryview(buf) as room:
                got_bytes = os.preadv(fd, [room[kept:]], seen)
            if not got_bytes and not fresh:
                break
            fresh = False
            seen += got_bytes
            filled = kept + got_bytes
            if head is None:
                head = head_hash(bytes(buf[: min(filled, HEAD_BYTES)]))
            if not job.start and seen == got_bytes:  # a file read from its first byte: its folder first
                folder = head_dir(buf, filled)
                if folder is not None:
                    rows.append(folder)
                if job.whole:  # a log whose lines do not stand alone: its agent's decoder
                    parse = events_parser(buf[:filled]) or parse_chunk
            got, used = parse_chunk(buf, pos, filled, plain) if parse is parse_chunk else parse(buf, pos, filled)
            rows += got
            pos += used
            kept = filled - used
            if kept:
                buf[:kept] = buf[used:filled]
        if kept and parse is not parse_chunk:  # a rollout's last line without its newline: as the hooks read it
            from session_watcher.state.reader import whole_record

            tail = bytes(buf[:kept])
            if kept <= MAX_LINE_BYTES and whole_record(tail):
                rows += parse(tail + b"\n", pos, None)[0]
                pos += kept
        after = os.fstat(fd)
    finally:
        os.close(fd)
    if head is None:
        head = head_hash(b"")
    # the rows as they are (plain tuples: `parse.Row`); version 2 writes no back-references, which
    # would follow the values' reference counts (the stamp memo's last value): the same rows, the same bytes
    blob = marshal.dumps(rows, 2)
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


NO_ROWS = marshal.dumps([], 2)  # the blob of a file without rows


def rows_in(s: Scanned) -> list[Row]:
    """A scan's rows (those read in another process are decoded here, when first asked for)."""
    return s.rows if s.rows is not None else rows_of(s.blob)


def rows_of(blob: bytes) -> list[Row]:
    """The rows `Scanned.blob` holds. Raises ValueError (EOFError, TypeError) on damaged data."""
    # marshal: our own rows, from our own 0600 cache or our own child process
    rows: list[Row] = marshal.loads(blob)  # noqa: S302
    # data that reads back but is no rows (len raises TypeError on an int): damaged too
    if rows.__class__ is not list or not set(map(len, rows)) <= _ROW_LEN:
        raise TypeError("not a list of rows")
    return rows


_ROW_LEN = {12}  # a row's fields (`parse.ROW_FIELDS`)


# at most this many batches (one batch number a pipe token: 4 kB, see state.pool)
QUEUE_BATCHES = pool.QUEUE_BATCHES


class Scan(NamedTuple):
    """Each job's result in job order (None: the file could not be read), and each group's
    `finish` by group number (a group left out: its reader failed and the parent read it again)."""

    results: list[Scanned | None]
    finished: dict[int, object]


# what one batch gives: each file's result by job position, and each group's `finish` by group number
Batch = tuple[list[tuple[int, "Scanned | None"]], list[tuple[int, object]]]


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
    `tick` hears the share of all bytes whose files are taken (by this process)."""
    total = sum(max(0, j.size - j.start) for j in jobs)
    plain = False
    if jobs:  # the parser once, here, before a child forks (a warm report, with nothing to read, never loads it)
        from session_watcher.reports.parse import PLAIN_BELOW, bind_schema

        plain = total < PLAIN_BELOW  # a few calls appended: read the JSON way, msgspec not imported
        if not plain:
            bind_schema()
    n = readers(jobs, workers)
    groups = [[i] for i in range(len(jobs))] if groups is None else groups
    weights = [sum(max(1, jobs[i].size - jobs[i].start) for i in g) for g in groups]
    parts = pool.batches(weights, QUEUE_BATCHES)
    weight = max(1, sum(weights))
    taken = [0]  # bytes in the batches before each batch number, for the progress
    for part in parts:
        taken.append(taken[-1] + sum(weights[g] for g in part))
    here = os.getpid()
    buf = [bytearray(0)]  # one read buffer a process, at most READ_BLOCK but for a file's long line

    def batch(number: int) -> Batch:
        out: list[tuple[int, Scanned | None]] = []
        done: list[tuple[int, object]] = []
        for g in parts[number]:
            got = [_scan_or_none(jobs[i], buf, plain) for i in groups[g]]
            if finish is not None:
                value = finish(g, got)
                done.append((g, value))
                if value is not None:  # what the caller needed of the rows is in `value`: the blob stays
                    got = [None if r is None else r._replace(rows=None) for r in got]
            out += zip(groups[g], got, strict=True)
        if tick is not None and os.getpid() == here:
            tick(taken[number + 1] / weight)
        return out, done

    results: list[Scanned | None] = [None] * len(jobs)
    finished: dict[int, object] = {}
    for out, done in pool.map_batches(batch, len(parts), n, encode=_encode, decode=_decode,
                                      name="session-watcher-report"):
        for i, s in out:
            results[i] = s
        finished.update(done)
    return Scan(results, finished)


def readers(jobs: list[Job], workers: int | None = None) -> int:
    """How many processes `scan_all` reads `jobs` with (`workers`, default one per usable core, but
    a second one only past FORK_FROM bytes): more than one forks."""
    n = workers if workers is not None else pool.cores()
    total = sum(max(0, j.size - j.start) for j in jobs)
    return max(1, min(n, len(jobs), total // FORK_FROM + 1))


def _scan_or_none(job: Job, buf: list[bytearray], plain: bool) -> Scanned | None:
    """`scan_file` through this process's buffer (grown when the file needs it), or None when the
    file cannot be read (permissions, vanished mid-read): left out this time."""
    need = min(READ_BLOCK, max(job.size - job.start, 0) + 4096)
    if not need <= len(buf[0]) <= READ_BLOCK:  # too small, or grown by the last file's long line
        buf[0] = bytearray(need)
    try:
        return scan_file(job, buf[0], plain)
    except OSError:
        return None


def _encode(got: Batch) -> bytes:
    """A batch's results as a child sends them: marshal data, the rows left in their blob."""
    out, done = got
    return marshal.dumps(([(i, None if s is None else tuple(s[1:])) for i, s in out], done))


def _decode(data: bytes) -> Batch:
    """What `_encode` made, as results whose rows are decoded when first asked for (`rows_in`)."""
    sent, done = marshal.loads(data)  # noqa: S302 - written by our own child
    return [(i, None if got is None else Scanned(None, *got)) for i, got in sent], done
