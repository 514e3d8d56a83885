"""The width a command's text keeps within (core.text.columns over this process's terminal)."""

from __future__ import annotations

import os
import sys


def columns() -> int:
    """COLUMNS, else stdout's terminal, else 80."""
    from session_watcher.core.text import columns as width

    try:
        terminal: int | None = os.get_terminal_size(sys.stdout.fileno()).columns if sys.stdout.isatty() else None
    except (OSError, ValueError):
        terminal = None
    return width(os.environ.get("COLUMNS"), terminal)
