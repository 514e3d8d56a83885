"""Where Claude Code's transcripts are: every main and subagent `.jsonl` under its projects folders."""

from __future__ import annotations

import os

from session_watcher.agents.source import Source

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator


def default_roots() -> list[str]:
    """`projects` folders under every Claude Code config folder."""
    from session_watcher.base.paths import claude_config_dirs

    return [os.path.join(d, "projects") for d in claude_config_dirs()]


def _jsonl_under(folder: str, dirs: list[str] | None) -> list[str]:
    """Every `.jsonl` under a `subagents/` folder, by `named_as_log`'s rule: a folder so named too
    (`os.walk` lists it among the folders, a link to nothing among the files)."""
    found: list[str] = []
    for dirpath, folders, files in os.walk(folder):
        if dirs is not None:
            dirs.append(dirpath)
        found.extend(os.path.join(dirpath, f) for f in (*files, *folders) if named_as_log(f))
    return sorted(found)


def named_as_log(name: str) -> bool:
    """Whether an entry of a project folder or of a `subagents/` tree is a transcript, by its name
    alone: a `.jsonl` that is no file is kept too (a folder so named, a link to nothing): whoever
    reads the sources names what it cannot read (`Agent.sources`' rule, Codex's rollouts alike)."""
    return name.endswith(".jsonl")


def project_sources(project_dir: str, dirs: list[str] | None = None) -> list[Source]:
    """The transcripts of one project folder: its `.jsonl` files and each session folder's
    `subagents/` tree. `dirs`, when given, gets every folder listed on the way (a file added to or
    removed from any of them changes that folder's mtime: `reports.walk` keeps the list)."""
    project = os.path.basename(project_dir.rstrip(os.sep))
    out: list[Source] = []
    try:
        entries = sorted(os.scandir(project_dir), key=lambda e: e.name)
    except OSError:
        return out
    if dirs is not None:
        dirs.append(project_dir)
    for e in entries:
        is_file = e.is_file()
        if named_as_log(e.name):
            out.append(Source(e.path, e.name[: -len(".jsonl")], project, False))
        if not is_file and e.is_dir():
            if dirs is not None:
                dirs.append(e.path)
            subs = os.path.join(e.path, "subagents")
            if os.path.isdir(subs):
                out.extend(Source(p, e.name, project, True) for p in _jsonl_under(subs, dirs))
    return out


def project_folders(real: str) -> list[str]:
    """The project folders of a root (a real path): the root itself when it holds `.jsonl` files
    directly, otherwise each of its sub-folders (the layout of `~/.claude/projects`)."""
    try:
        entries = sorted(os.scandir(real), key=lambda e: e.name)
    except OSError:
        return []
    if any(e.name.endswith(".jsonl") and e.is_file() for e in entries):
        return [real]
    return [e.path for e in entries if e.is_dir()]


def discover(roots: Iterable[str]) -> list[Source]:
    """Every main and subagent transcript under the given folders (`project_folders`' rule).
    Folders reached twice count once."""
    seen_roots: set[str] = set()
    seen_files: set[str] = set()
    out: list[Source] = []
    for root in roots:
        real = os.path.realpath(root)
        if real in seen_roots or not os.path.isdir(real):
            continue
        seen_roots.add(real)
        for p in project_folders(real):
            for s in project_sources(p):
                if s.path not in seen_files:
                    seen_files.add(s.path)
                    out.append(s)
    return out


def session_ids(roots: Iterable[str]) -> Iterator[str]:
    """The session of each main transcript under the given folders (`discover`'s rule), from its name
    as each project folder is listed: no file read, no session folder entered (a subagent's file is
    its session's), one project folder at a time (`doctor` counts them, up to its bound). A session
    under two roots comes twice: the caller counts distinct ones."""
    seen_roots: set[str] = set()
    for root in roots:
        real = os.path.realpath(root)
        if real in seen_roots:
            continue
        seen_roots.add(real)
        for project in project_folders(real):
            try:
                with os.scandir(project) as it:
                    for e in it:
                        if e.name.endswith(".jsonl") and e.is_file():
                            yield e.name[: -len(".jsonl")]
            except OSError:  # a folder gone or not readable since the root was listed
                continue
