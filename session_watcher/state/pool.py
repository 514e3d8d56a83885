"""The one process pool: every process the package forks goes through here. `map_batches` runs
independent batches of work on every usable core, in forked children and in this process (the
report's scan, its files; `report --pages`, its pages; `backtest`, its sessions); `fork` is its one
child (replay's second parsing process uses it alone), `stop` kills and reaps one.

    results = map_batches(work, count)   # work(k) for k in range(count), each once, results in order

The batch numbers go into a pipe, heaviest first (`batches`), and every process takes the next
whenever it is free, so they finish within one batch of each other. A child writes its results,
encoded (marshal: plain values), into an unnamed file (memfd: a pipe made both sides wait on each
other 64 kB at a time) and says on a pipe when they are all there, before its exit frees its
memory. A batch a child did not finish (its work raised, it died) is done again here, where an error
surfaces as it would have without children; this process's own error, whatever it is, kills them,
and every child is waited for on every way out. No fork from a process running threads (a child
forked then holds whatever locks those threads held for good), or where there is no fork: the
batches are then all done here, with the same results. Measured against the same batches on
`concurrent.futures.ProcessPoolExecutor` by bench.tricks (docs/report.md).
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO, Any, TypeVar

    T = TypeVar("T")

_TOKEN = 4  # bytes of one batch number in the queue pipe
# 4 kB of tokens: one write of at most PIPE_BUF into an empty pipe, which holds at least that much
# (Linux gives a pipe a single page when the user has too many), so it never waits for a reader
QUEUE_BATCHES = 1024
_HEAD = 12  # a result's header in a child's file: its batch number (4 bytes) and its length (8)


def cores() -> int:
    """The cores this process may run on: those it may be scheduled on, no more than its control
    group's CPU quota allows (a container given 1.5 of 8 cores: 1)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    quota = quota_cores()
    return n if quota is None else max(1, min(n, quota))


def quota_cores(root: str = "/sys/fs/cgroup", own: str = "/proc/self/cgroup") -> int | None:
    """Whole cores of the smallest CPU quota set on this process's control group or one above it,
    in the hierarchy mounted at `root` (v2's `cpu.max`; v1's `cpu.cfs_quota_us` over its period, in
    `cpu/`, or `cpu,cpuacct/` where that is its name); None where none is set or none can be read.
    The group as `own` (/proc/self/cgroup) names it: a host's, nested in slices; a container that
    sees only its own group at `root` finds no folder by that name, and reads `root`'s."""
    v2, v1 = _own_groups(own)
    found = [_quota(os.path.join(d, "cpu.max")) for d in _up(root, v2)]
    for name in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):
        found += [_quota(os.path.join(d, "cpu.cfs_quota_us"), os.path.join(d, "cpu.cfs_period_us"))
                  for d in _up(os.path.join(root, name), v1)]
    quotas = [q for q in found if q is not None]
    return min(quotas) if quotas else None


def _own_groups(own: str) -> tuple[str, str]:
    """This process's control group in the v2 hierarchy and in v1's `cpu` one ("/": the root)."""
    v2 = v1 = "/"
    try:
        with open(own, "rb") as fh:
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return v2, v1
    for line in lines:  # "0::/path" (v2), "4:cpu,cpuacct:/path" (v1)
        _n, _sep, rest = line.partition(":")
        controllers, _sep, path = rest.partition(":")
        if line.startswith("0::"):
            v2 = path
        elif "cpu" in controllers.split(","):
            v1 = path
    return v2, v1


def _up(base: str, group: str) -> list[str]:
    """The folders of `group` under `base` and of every group above it, `base` last."""
    names = [p for p in group.split("/") if p not in ("", ".", "..")]
    return [os.path.join(base, *names[:k]) for k in range(len(names), -1, -1)]


def _quota(path: str, period_path: str | None = None) -> int | None:
    """Whole cores of the quota in `path` (v2: "QUOTA PERIOD"; v1: QUOTA, its period in `period_path`)."""
    try:
        with open(path, "rb") as fh:
            fields = fh.read().split()
        if period_path is not None:
            with open(period_path, "rb") as fh:
                fields += fh.read().split()
        quota, period = int(fields[0]), int(fields[1])
    except (OSError, ValueError, IndexError):  # no such file, "max", not a number
        return None
    return int(quota // period) if quota > 0 and period > 0 else None


def batches(weights: list[int], most: int = QUEUE_BATCHES) -> list[list[int]]:
    """Group numbers in at most `most` batches, heaviest first: a big group is a batch of its own,
    small ones at the end share one, so the last batch any process takes is a short one."""
    order = sorted(range(len(weights)), key=lambda g: -weights[g])
    per = -(-len(order) // most) if order else 1
    if per == 1:
        return [[g] for g in order]
    return [order[k : k + per] for k in range(0, len(order), per)]


def threads_running() -> bool:
    """True when this process runs a thread besides the main one: then it must not fork. No import:
    a process that never imported `threading` started no thread from Python."""
    threading = sys.modules.get("threading")
    return threading is not None and threading.active_count() > 1


def memory_bound(peaks: list[int], available: int | None) -> int:
    """How many of these jobs (heaviest first) can run at once within half of `available` bytes
    (at least one; all of them when the available memory is not known)."""
    if available is None:
        return max(1, len(peaks))
    n = total = 0
    for peak in peaks:
        if n and total + peak > available // 2:
            break
        n += 1
        total += peak
    return max(1, n)


def available_memory() -> int | None:
    """MemAvailable from /proc/meminfo, in bytes (None where there is none)."""
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def scratch_file(name: str) -> IO[bytes]:
    """An unnamed read-write file: in memory where the system has memfd (no tempfile, whose import
    costs more than the file), else a temporary file on disk."""
    if hasattr(os, "memfd_create"):
        try:
            return open(os.memfd_create(name), "r+b", buffering=0)
        except OSError:
            pass
    import tempfile

    return tempfile.TemporaryFile()


def map_batches(work: Callable[[int], T], count: int, workers: int | None = None, *,
                encode: Callable[[T], bytes] | None = None, decode: Callable[[bytes], T] | None = None,
                name: str = "session-watcher") -> list[T]:
    """`work(k)` for every k in range(count), each in one process, on up to `workers` processes
    (default: one per usable core); the results in batch order. Number the batches heaviest first.
    A result made in a child comes back as `decode(encode(result))`; `work` must be safe to run
    twice for a batch (a child that failed midway: the batch is done again here). Default codec:
    marshal."""
    n = max(1, min(cores() if workers is None else workers, count))
    done: dict[int, T] = {}
    if n > 1:
        done = _forked(work, count, n, (encode or _dumps, decode or _loads), name)
    # alone, or what a child did not finish
    return [done[k] if k in done else work(k) for k in range(count)]


def _dumps(value: Any) -> bytes:
    return marshal.dumps(value)


def _loads(data: bytes) -> Any:
    return marshal.loads(data)  # noqa: S302 - written by our own child


def _forked(work: Callable[[int], T], count: int, n: int,
            codec: tuple[Callable[[T], bytes], Callable[[bytes], T]], name: str) -> dict[int, T]:
    """The queue and n - 1 children: every batch's result that a process finished, by batch number."""
    encode, decode = codec
    qr, qw = os.pipe()
    try:
        os.write(qw, b"".join(k.to_bytes(_TOKEN, "little") for k in range(count)))
    finally:
        os.close(qw)  # the queue is complete: an empty read means no batch is left
    children: list[tuple[int, IO[bytes], int]] = []
    done: dict[int, T] = {}
    ok = False
    try:
        for _ in range(n - 1):
            child = fork(name)
            if child is None:  # no fork here, or no more processes allowed: the ones there take the queue
                break
            if child[0] == 0:  # the child: never returns
                _child(work, qr, encode, child[1], child[2])
            children.append(child)
        for k in _take(qr):
            done[k] = work(k)
        for _pid, sink, ready in children:
            for k, data in _handed_back(sink, ready):
                if 0 <= k < count and k not in done:
                    done[k] = decode(data)
        ok = True
    finally:
        os.close(qr)
        for pid, sink, ready in children:
            sink.close()
            _close(ready)
            stop(pid, kill=not ok)  # this process failing: the children's work is not wanted
    return done


def fork(name: str) -> tuple[int, IO[bytes], int] | None:
    """`os.fork()` with an unnamed file for what the child hands back and a pipe from child to
    parent: (pid, file, the pipe's end: the child's to write, the parent's to read); in the child,
    pid 0. None when this process must not fork (no fork, other threads running) or cannot (no more
    processes allowed). The parent ends the child with `stop`, on every way out."""
    if not hasattr(os, "fork") or threads_running():
        return None
    sink = scratch_file(name)
    ready, told = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        sink.close()
        os.close(ready)
        os.close(told)
        return None
    os.close(ready if pid == 0 else told)
    return pid, sink, told if pid == 0 else ready


def stop(pid: int, kill: bool = True) -> None:
    """Wait for the child `pid`, killed first (`kill`) when its work is no longer wanted."""
    if kill:
        import signal  # here: a warm report's process forks no child and needs none of it

        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    os.waitpid(pid, 0)


def _take(queue: int) -> Any:
    """Batch numbers from the queue until it is empty. A read of one token is atomic among the
    readers, so each batch goes to exactly one process."""
    while True:
        token = os.read(queue, _TOKEN)
        if len(token) < _TOKEN:
            return
        yield int.from_bytes(token, "little")


def _child(work: Callable[[int], T], queue: int, encode: Callable[[T], bytes], sink: IO[bytes], told: int) -> None:
    """A child's whole life: batches until the queue is empty or one fails, their results into
    `sink`, a byte on `told`, and out without any of the parent's cleanup."""
    code = 0
    try:
        pieces: list[bytes] = []
        try:
            for k in _take(queue):
                data = encode(work(k))
                pieces += (k.to_bytes(4, "little") + len(data).to_bytes(8, "little"), data)
        except Exception:  # the parent does again every batch not handed back
            code = 1
        _write_all(sink.fileno(), b"".join(pieces))
        os.write(told, b"1")
    finally:
        os._exit(code)


def _handed_back(sink: IO[bytes], ready: int) -> list[tuple[int, bytes]]:
    """What a child handed back, once it says it is all there: (batch, encoded result); nothing
    when it failed before saying so; what is whole of a file cut short."""
    if os.read(ready, 1) != b"1":
        return []
    sink.seek(0)
    data = sink.read()
    out = []
    at = 0
    while at + _HEAD <= len(data):
        k = int.from_bytes(data[at : at + 4], "little")
        size = int.from_bytes(data[at + 4 : at + _HEAD], "little")
        if at + _HEAD + size > len(data):
            break
        out.append((k, data[at + _HEAD : at + _HEAD + size]))
        at += _HEAD + size
    return out


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
