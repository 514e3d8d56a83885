"""Kept for the launchers an install wrote before the package by layers (2026-12-04): the status
line's imported its `main` from here (`session_watcher.bundle` says when such a launcher runs). It
is `hooks.statusline`'s."""

from __future__ import annotations


def main() -> int:
    from session_watcher.hooks.statusline import main as statusline

    return statusline()
