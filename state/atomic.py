"""Atomic file replacement: readers see the old file or the new one, never half of either."""

from __future__ import annotations

import os


def write_atomic(path: str, data: bytes, mode: int = 0o600, fsync: bool = True, tmp: str | None = None) -> None:
    """Write `data` to a temp file beside `path` (created `mode`), fsync, then rename over `path`.

    The temp name carries the pid, so writers that each hold the state lock never collide, and no
    `tempfile` import (about 9 ms) lands on the hook's hot path. Writers that hold a lock pass a fixed
    `tmp` instead, so the temp file of a writer killed mid-write is reused, never accumulates.
    """
    tmp = tmp or f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), mode)
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        if fsync:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink(tmp)
        raise
    os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
