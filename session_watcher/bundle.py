"""Kept for the launchers an install wrote before the package by layers (2026-12-04): each began
`from session_watcher.bundle import install; install(PATH)`, PATH a file of that build's compiled
modules, before its entry point (`hooks.run`'s main, or `session_watcher.statusline`'s). While an
install replaces the package under such a launcher, until it writes the new one, the launcher runs on
to its entry point with this build's modules: without this module every hook and status line stopped
on an ImportError, exit 1 and a traceback. The modules are found by `hooks.finder` now; the old
file is removed when the launchers are written again (`hooks.launchers.write`).
"""

from __future__ import annotations


def install(path: str) -> None:
    """Nothing: the file at `path` holds the old build's modules, never to be run over this build's."""
    del path
