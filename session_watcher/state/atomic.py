"""Atomic file replacement: readers see the old file or the new one, never half of either.

Every temp file is created exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW`): a link or file planted
under its name is never written through, and the rename replaces `path` itself (a link there is
replaced, not followed).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs ~3 ms to import; hooks write their state through here
if TYPE_CHECKING:
    from collections.abc import Iterable

EXCL = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def _create(tmp: str, mode: int) -> int:
    try:
        return os.open(tmp, EXCL, mode)
    except FileExistsError:
        pass
    # a temp file left by a writer killed mid-write (or anything planted under its name): the
    # caller holds the lock that makes the name its own, so the entry goes (unlink never follows)
    os.unlink(tmp)
    return os.open(tmp, EXCL, mode)


def write_atomic(path: str, data: bytes | Iterable[bytes], mode: int = 0o600, fsync: bool = True,
                 tmp: str | None = None) -> None:
    """Write `data` (bytes, or pieces of them in order) to a new temp file beside `path` (created
    `mode`), fsync, then rename over `path`.

    Without `tmp` the temp name is unique (pid and a random part; no `tempfile` import, about 9 ms,
    on the hook's hot path). Writers that hold a lock pass a fixed `tmp` instead, so the temp file
    of a writer killed mid-write is replaced by the next one, never accumulates.
    """
    fd = -1
    if tmp is not None:
        try:
            fd = _create(tmp, mode)
        except OSError:  # the entry could not be removed (a folder?): a unique name then
            fd = -1
    if fd < 0:
        tmp = f"{path}.{os.getpid()}-{os.urandom(4).hex()}.tmp"
        fd = os.open(tmp, EXCL, mode)
    assert tmp is not None
    try:
        for piece in (data,) if isinstance(data, bytes) else data:
            view = memoryview(piece)
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
