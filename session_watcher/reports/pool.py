"""Independent jobs on every usable core, the way the report's scan spreads files: job numbers in a
pipe (largest first), a forked child for every usable core but one, each process taking the next
whenever it is free. What a child did not finish (its job raised, it died) is done again in the
parent, where an error surfaces as it would have without the children. Given each job's peak
memory, no more run at once than the memory available holds. Used by `report --pages`.
"""

from __future__ import annotations

import contextlib
import os
import signal
from typing import IO, TYPE_CHECKING

from session_watcher.reports.scan import QUEUE_BATCHES, batches, cores
from session_watcher.state.scratch import fork_with_sink, handed_back, send_back

if TYPE_CHECKING:
    from collections.abc import Callable

_TOKEN = 4  # bytes of one batch number in the queue pipe


def run_all(do: Callable[[int], object], weights: list[int], workers: int | None = None,
            memory: Callable[[int], int] | None = None) -> None:
    """`do(i)` for every job i (`weights[i]`: its size, to start the large ones first), in forked
    children and in this process; a job is redone here when the child that took it failed, so `do`
    must be safe to run twice (a page written again by an atomic rename is). `memory(i)`: job i's
    peak memory (rising with its weight): no more processes run than half the memory available
    holds of the heaviest jobs at once (the queue hands them out heaviest first, so no later set of
    running jobs needs more)."""
    n = max(1, min(workers if workers is not None else cores(), len(weights)))
    if memory is not None and n > 1:
        heaviest = sorted(range(len(weights)), key=lambda i: -weights[i])[:n]
        n = memory_bound([memory(i) for i in heaviest], available_memory())
    parts = batches(weights, QUEUE_BATCHES)
    if n == 1 or not hasattr(os, "fork"):
        for part in parts:
            for i in part:
                do(i)
        return
    qr, qw = os.pipe()
    try:
        # at most QUEUE_BATCHES tokens (4 kB): one write into an empty pipe, which never waits
        os.write(qw, b"".join(k.to_bytes(_TOKEN, "little") for k in range(len(parts))))
    finally:
        os.close(qw)  # complete: an empty read means no batch is left
    children: list[tuple[int, IO[bytes], int]] = []
    finished: list[int] = []
    try:
        for _ in range(n - 1):
            forked = fork_with_sink("session-watcher-pool")
            if forked is None:  # no more processes allowed: the ones there take the whole queue
                break
            pid, sink, end = forked
            if pid == 0:  # the child: take batches, note each job done, leave without the parent's cleanup
                _child(qr, parts, do, sink, end)
            children.append((pid, sink, end))
        _take(qr, parts, do, finished)
    except BaseException:
        for pid, _sink, _ready in children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)  # this run is failing: a child's half-written page is a temp file
        raise
    finally:
        os.close(qr)
        for pid, sink, ready in children:
            data = handed_back(sink, ready)
            finished += (int.from_bytes(data[k : k + _TOKEN], "little") for k in range(0, len(data), _TOKEN))
            os.waitpid(pid, 0)
    done = set(finished)
    for part in parts:
        for i in part:
            if i not in done:
                do(i)


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


def _child(queue: int, parts: list[list[int]], do: Callable[[int], object], sink: IO[bytes], told_ready: int) -> None:
    """A child's whole life: the jobs it takes, then their numbers in `sink` and a byte on `told_ready`."""
    done: list[int] = []
    try:
        try:
            _take(queue, parts, do, done)
        except Exception:  # noqa: S110 - the parent redoes every job not noted as done
            pass
        send_back(sink, told_ready, b"".join(i.to_bytes(_TOKEN, "little") for i in done))
    finally:
        os._exit(0)


def _take(queue: int, parts: list[list[int]], do: Callable[[int], object], done: list[int]) -> None:
    """Batches from the queue pipe until it is empty, each job noted in `done` once it returned."""
    while True:
        token = os.read(queue, _TOKEN)
        if len(token) < _TOKEN:
            return
        for i in parts[int.from_bytes(token, "little")]:
            do(i)
            done.append(i)
