"""An unnamed file a forked child writes and its parent reads (replay's prefetch, the report's scan)."""

from __future__ import annotations

import os
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
