"""Discovery for a warm report: a folder listed again only when its mtime moved.

`agents.claude_code.discover`'s rule (a root's project folders, each one's `.jsonl` files and its
session folders' `subagents/` trees), with what each listing found kept in the index (`folders`):
a root by its mtime, a project by the mtimes of every folder listed under it. Adding, removing or
renaming a file changes its folder's mtime, so an unchanged mtime means the same names; appending to
a file does not, which is why the index still `stat`s the files themselves. A folder whose mtime is
within `RACY_NS` of when it was listed is listed again next time (a change in the same tick of the
file system's clock would not move it).

A project's own folder is `stat`ed every run (a new session's file or folder moves its mtime); a
session's folders (its folder and its `subagents/` tree) only when one of them had changed within a
day when it was listed, or the index saw one of the session's files change within the day
(`Index.quiet_before`, `Index.live_dirs`), and on the full pass: the files' rule (`index.LIVE_NS`),
so a session quiet for a day and then resumed shows whole (its new sub-agent files with its grown
main file) on the full pass.
"""

from __future__ import annotations

import marshal
import os
import time

from session_watcher.agents import claimed
from session_watcher.agents.claude_code.discover import project_folders, project_sources
from session_watcher.agents.source import Source

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it

if TYPE_CHECKING:
    from collections.abc import Iterable

    from session_watcher.reports.index import Index
    from session_watcher.reports.kept import Sources

RACY_NS = 2_000_000_000
_new = tuple.__new__
_AGAIN = -1  # the mtime kept for a folder too new to trust: never equal, listed again


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return _AGAIN


def _trusted(dirs: list[str], start_ns: int) -> list[tuple[str, int]]:
    """Each listed folder's mtime now, or `_AGAIN` when it moved too close to the listing's start."""
    out = []
    for d in dirs:
        m = _mtime(d)
        out.append((d, m if m < start_ns - RACY_NS else _AGAIN))
    return out


_NOW = 1 << 62  # a session's newest mtime when one of its folders is to be listed again: never quiet


def _sessions(project: str, dirs: list[tuple[str, int]]) -> list[tuple[str, int, list[tuple[str, int]]]]:
    """The folders listed under `project` (not itself) by session: (the session's folder, the newest
    of their mtimes, `_NOW` when one is `_AGAIN`; the folders with their mtimes)."""
    by: dict[str, list[tuple[str, int]]] = {}
    cut = len(project.rstrip(os.sep)) + 1
    for d, m in dirs:
        by.setdefault(d[:cut] + d[cut:].split(os.sep, 1)[0], []).append((d, m))
    return [(k, _NOW if any(m == _AGAIN for _d, m in v) else max(m for _d, m in v), v) for k, v in by.items()]


def _same_dirs(dirs: list[tuple[str, int]]) -> bool:
    return all(m != _AGAIN and _mtime(d) == m for d, m in dirs)


class Walk:
    """The sources under some roots, and what to keep of the listings for the next run. A session's
    folders whose newest mtime is before `quiet` are not `stat`ed unless the session is in `live`
    (by its folder: the index saw one of its files change within the day)."""

    def __init__(self, kept: dict[str, bytes], quiet: int = -1, live: frozenset[str] = frozenset()) -> None:
        self.kept = kept
        self.quiet, self.live = quiet, live
        self.new: dict[str, tuple[bytes, bytes]] = {}  # listings made this run: folder -> its folders, its value
        self.visited: set[str] = set()
        self.listed = 0  # folders listed this run (not taken from the index)
        self.steady: list[str] = []  # the files of the listings taken from the index

    def _same(self, path: str) -> bool:
        """Whether the index kept a listing of `path` whose every folder that may have changed still
        has its mtime (the listing's own folder always, a session's as `Walk` says)."""
        self.visited.add(path)
        data = self.kept.get(path)
        if data is None:
            return False
        head, sessions = marshal.loads(data)  # noqa: S302 (our own 0600 cache's plain data)
        if not _same_dirs(head):
            return False
        quiet, live = self.quiet, self.live
        return all(_same_dirs(dirs) for folder, newest, dirs in sessions if newest >= quiet or folder in live)

    def projects(self, real: str, index: Index) -> list[str]:
        if self._same(real):
            got = index.folder_values([real]).get(real)
            if got is not None:
                return [str(p) for p in marshal.loads(got)]  # noqa: S302
        start = time.time_ns()
        self.listed += 1
        found = project_folders(real)
        if os.path.isdir(real):
            self.new[real] = (marshal.dumps((_trusted([real], start), [])), marshal.dumps(found))
        return found

    def sources(self, project: str) -> list[Source] | None:
        """The sources of `project` listed again, or None when its kept listing holds (`taken`)."""
        key = project + os.sep  # a project folder may also be its root: its own entry
        if self._same(key):
            return None
        start = time.time_ns()
        self.listed += 1
        dirs: list[str] = []
        found = [claimed(s) for s in project_sources(project, dirs)]  # a rollout among them: its agent's
        if dirs:  # listed (a folder that could not be is tried again next time); its own folder first
            trusted = _trusted(dirs, start)
            self.new[key] = (marshal.dumps((trusted[:1], _sessions(project, trusted[1:]))),
                             marshal.dumps([tuple(s) for s in found]))
        return found

    def taken(self, projects: list[str], index: Index) -> dict[str, list[Source]]:
        """The kept listings' sources of `projects` (whose folders did not move), by project."""
        values = index.folder_values([p + os.sep for p in projects])
        out: dict[str, list[Source]] = {}
        for p in projects:
            got = marshal.loads(values[p + os.sep])  # noqa: S302
            self.steady += [s[0] for s in got]
            out[p] = [_new(Source, s) for s in got]
        return out


def discover(roots: Iterable[str], index: Index) -> list[Source] | Sources:
    """`agents.claude_code.discover.discover(roots)`, each source `agents.claimed`, listing only the
    folders that changed since the index last saw them; keeps this run's listings (and forgets
    those of folders gone), and tells the index which files came from unchanged folders (`Index.steady`).
    When no folder was listed again (nor any kept listing forgotten) and the index keeps the last
    run's sources over these roots (`Index.kept_sources`), they are taken whole: the listings'
    sources are not decoded file by file."""
    quiet = index.quiet_before()
    walk = Walk(index.folders(), quiet, index.live_dirs(quiet) if quiet >= 0 else frozenset())
    seen_roots: dict[str, None] = {}
    for root in roots:
        real = os.path.realpath(root)
        if real not in seen_roots and os.path.isdir(real):
            seen_roots[real] = None
    listed: list[tuple[str, list[Source] | None]] = [
        (p, walk.sources(p)) for real in seen_roots for p in walk.projects(real, index)]
    prefixes = tuple(r.rstrip(os.sep) + os.sep for r in seen_roots)
    gone = [k for k in walk.kept if k not in walk.visited and (k + os.sep).startswith(prefixes)]
    index.store_folders(walk.new, gone)
    whole = None if walk.listed or gone else index.kept_sources(list(seen_roots))
    if whole is not None:
        index.steady, index.walk = frozenset(), (list(seen_roots), len(whole), True)
        return whole
    taken = walk.taken([p for p, found in listed if found is None], index)
    # a file is reached twice only through roots one inside another (each root's folders are its own)
    nested = any(a != b and (b + os.sep).startswith(a.rstrip(os.sep) + os.sep) for a in seen_roots for b in seen_roots)
    seen_files: set[str] = set()
    out: list[Source] = []
    for p, listing in listed:
        found = taken[p] if listing is None else listing
        if not nested:
            out += found
            continue
        if seen_files.isdisjoint([s[0] for s in found]):  # the usual case: each file under one folder
            seen_files.update([s[0] for s in found])
            out += found
            continue
        for s in found:
            if s.path not in seen_files:
                seen_files.add(s.path)
                out.append(s)
    index.steady = frozenset(walk.steady)
    index.walk = (list(seen_roots), len(out), False)
    return out
