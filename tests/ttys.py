"""A command run in process with its stderr a terminal (a pseudo-terminal), and what it drew there."""

from __future__ import annotations

import io
import os
import pty
import sys
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

    import pytest

T = TypeVar("T")


def on_a_terminal(run: Callable[[], T], monkeypatch: pytest.MonkeyPatch) -> tuple[T, bytes]:
    """What `run` returned, and all it wrote to stderr, a terminal while it ran (its progress bars
    drawn at once: `Progress.DELAY` 0)."""
    from session_watcher.reports.collect import Progress

    monkeypatch.setattr(Progress, "DELAY", 0.0)
    leader, follower = pty.openpty()
    term = io.TextIOWrapper(io.FileIO(follower, "w"), write_through=True)
    monkeypatch.setattr(sys, "stderr", term)
    try:
        got = run()
        os.set_blocking(leader, False)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        term.close()
        os.close(leader)
    return got, seen


def bar_counts(seen: bytes, label: str) -> tuple[list[str], list[int]]:
    """The frames of the progress bar named `label` in what a terminal was sent, and the count each drew."""
    frames = [f for f in seen.decode().split("\r") if f.startswith(label)]
    return frames, [int(f.rsplit(" ", 1)[1].split("/")[0]) for f in frames]
