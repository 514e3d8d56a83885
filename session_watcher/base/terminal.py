"""The width a command's text keeps within (core.text.columns over this process's terminal)."""

from __future__ import annotations

import os
import sys


def columns(fd: int | None = None) -> int:
    """COLUMNS, else stdout's terminal (file descriptor `fd`'s, where given), else 80."""
    from session_watcher.core.text import columns as width

    try:
        fd = sys.stdout.fileno() if fd is None else fd
        terminal: int | None = os.get_terminal_size(fd).columns if os.isatty(fd) else None
    except (OSError, ValueError):
        terminal = None
    return width(os.environ.get("COLUMNS"), terminal)
