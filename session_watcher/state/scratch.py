"""An unnamed file a forked child writes and its parent reads (replay's prefetch, the report's scan
and its session pages)."""

from __future__ import annotations

import os
import sys
from typing import IO


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


def threads_running() -> bool:
    """True when this process runs a thread besides the main one: then it must not fork (the child
    would hold whatever locks those threads held, for good). No import: a process that never
    imported `threading` started no thread from Python."""
    threading = sys.modules.get("threading")
    return threading is not None and threading.active_count() > 1


def fork_with_sink(name: str) -> tuple[int, IO[bytes], int] | None:
    """`os.fork()`, with a scratch file for what the child hands back, written whole at its end (a
    pipe made both sides wait on each other 64 kB at a time), and a pipe on which it then says so,
    before its exit frees its memory (which waitpid would wait for). (pid, sink, pipe end): in the
    child 0 and the end for `send_back`; in the parent the child's pid and the end for
    `handed_back`. None when no more processes are allowed, or other threads run."""
    if threads_running():
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


def send_back(sink: IO[bytes], told: int, data: bytes) -> None:
    """In the child: `data` into the sink, then the word that it is all there."""
    sink.write(data)
    sink.flush()
    os.write(told, b"1")


def handed_back(sink: IO[bytes], ready: int) -> bytes:
    """In the parent: what the child sent (it waits for the word), or b"" when the child failed."""
    ok = os.read(ready, 1) == b"1"
    os.close(ready)
    with sink:
        sink.seek(0)
        return sink.read() if ok else b""
