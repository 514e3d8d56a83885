"""The incremental transcript reader: only bytes after the cursor, only complete lines.

The cursor is {path, dev, ino, offset, head}: head is a CRC of the file's first line, so a file
that was rewritten in place (same inode, new content) is noticed, as is a shrunk, rotated or
replaced one; any of those means the fold must start again from the beginning (`Reset`).
"""

from __future__ import annotations

import os
import zlib

from core.transcript import split_lines

TYPE_CHECKING = False  # typing costs ~3 ms to import; this module is on the hot path
if TYPE_CHECKING:
    from typing import Any


CHUNK = 8 << 20
HEAD_BYTES = 4096


class Reset(Exception):
    """The file is not the one the cursor describes: fold it again from the start."""


def _head(fd: int) -> int:
    first = os.pread(fd, HEAD_BYTES, 0)
    nl = first.find(b"\n")
    return zlib.crc32(first if nl < 0 else first[:nl])


def read_new(
    path: str, cursor: dict[str, Any] | None, max_bytes: int = CHUNK,
) -> tuple[list[bytes], dict[str, Any], int]:
    """(complete new lines, the advanced cursor, lines skipped as too long to keep).

    Raises FileNotFoundError/OSError when the file cannot be read, Reset when it changed under us.
    Reads at most about `max_bytes`; call again while lines keep coming.
    """
    # O_NONBLOCK: a FIFO in the transcript's place would otherwise block the open forever
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if cursor is not None:
            same = (cursor.get("path") == path and cursor.get("dev") == st.st_dev
                    and cursor.get("ino") == st.st_ino and st.st_size >= cursor.get("offset", 0))
            if not same or (cursor.get("offset", 0) > 0 and cursor.get("head") != _head(fd)):
                raise Reset(path)
            offset = int(cursor["offset"])
            head = cursor.get("head")
        else:
            offset, head = 0, None
        if st.st_size <= offset:
            return [], {"path": path, "dev": st.st_dev, "ino": st.st_ino, "offset": offset, "head": head}, 0
        chunk = os.pread(fd, min(max_bytes, st.st_size - offset), offset)
        lines, used = split_lines(chunk)
        skipped = 0
        if used == 0 and len(chunk) >= max_bytes:
            # one line longer than a whole chunk: skip to its end without holding it in memory
            pos = offset + len(chunk)
            while True:
                block = os.pread(fd, 1 << 20, pos)
                if not block:
                    break
                nl = block.find(b"\n")
                if nl >= 0:
                    used = pos + nl + 1 - offset
                    skipped = 1
                    break
                pos += len(block)
        offset += used
        if head is None and offset > 0:
            head = _head(fd)
        return lines, {"path": path, "dev": st.st_dev, "ino": st.st_ino, "offset": offset, "head": head}, skipped
    finally:
        os.close(fd)
