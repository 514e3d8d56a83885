"""Where Claude Code's transcripts are: every main and subagent `.jsonl` under its projects folders."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from session_watcher.agents.source import Source

if TYPE_CHECKING:
    from collections.abc import Iterable


def default_roots() -> list[str]:
    """`projects` folders under every Claude Code config folder."""
    from session_watcher.base.paths import claude_config_dirs

    return [os.path.join(d, "projects") for d in claude_config_dirs()]


def _jsonl_under(folder: str) -> list[str]:
    found: list[str] = []
    for dirpath, _dirs, files in os.walk(folder):
        found.extend(os.path.join(dirpath, f) for f in files if f.endswith(".jsonl"))
    return sorted(found)


def _project_sources(project_dir: str) -> list[Source]:
    project = os.path.basename(project_dir.rstrip(os.sep))
    out: list[Source] = []
    try:
        entries = sorted(os.scandir(project_dir), key=lambda e: e.name)
    except OSError:
        return out
    for e in entries:
        if e.name.endswith(".jsonl") and e.is_file():
            out.append(Source(e.path, e.name[: -len(".jsonl")], project, False))
        elif e.is_dir():
            subs = os.path.join(e.path, "subagents")
            if os.path.isdir(subs):
                out.extend(Source(p, e.name, project, True) for p in _jsonl_under(subs))
    return out


def discover(roots: Iterable[str]) -> list[Source]:
    """Every main and subagent transcript under the given folders.

    A folder holding `.jsonl` files directly is one project folder; otherwise each of its
    sub-folders is (the layout of `~/.claude/projects`). Folders reached twice count once.
    """
    seen_roots: set[str] = set()
    seen_files: set[str] = set()
    out: list[Source] = []
    for root in roots:
        real = os.path.realpath(root)
        if real in seen_roots or not os.path.isdir(real):
            continue
        seen_roots.add(real)
        try:
            entries = sorted(os.scandir(real), key=lambda e: e.name)
        except OSError:
            continue
        if any(e.name.endswith(".jsonl") and e.is_file() for e in entries):
            projects = [real]
        else:
            projects = [e.path for e in entries if e.is_dir()]
        for p in projects:
            for s in _project_sources(p):
                if s.path not in seen_files:
                    seen_files.add(s.path)
                    out.append(s)
    return out
