"""Sources -> index -> sessions -> the report document. The shell around the pure `warmth` module."""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Any

from reports.index import DB_NAME, Index, IndexStats, Source, default_roots, discover
from reports.warmth import Session, build_report, fold_session

if TYPE_CHECKING:
    from collections.abc import Callable

    from reports.parse import Row


def default_db_path() -> str:
    from session_watcher.paths import cache_dir

    return os.path.join(cache_dir(), DB_NAME)


def build_sessions(sources: list[Source], rows: dict[str, list[Row]]) -> list[Session]:
    """Group sources by (project, session) and fold each: main file first, then subagent files."""
    groups: dict[tuple[str, str], tuple[list[Row], list[list[Row]]]] = {}
    for src in sources:
        got = rows.get(src.path)
        if got is None:
            continue
        main, subs = groups.setdefault((src.project, src.session), ([], []))
        if src.sub:
            subs.append(got)
        else:
            main.extend(got)
    out = []
    for (project, session), (main, subs) in groups.items():
        s = fold_session(session, project, main, subs)
        if s.api_calls:
            out.append(s)
    return out


class Progress:
    """A progress bar on stderr, shown only on a terminal and only once a scan has taken a moment."""

    DELAY = 0.5

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.monotonic()
        self.shown = False
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total == 0:
            return
        if not self.shown and time.monotonic() - self.start < self.DELAY:
            return
        self.shown = True
        width = 30
        fill = width * done // total
        self.stream.write(f"\rscanning transcripts [{'#' * fill}{'.' * (width - fill)}] {done}/{total}")
        if done >= total:
            self.stream.write("\r" + " " * (width + 40) + "\r")
        self.stream.flush()


def run_report(
    roots: list[str] | None = None,
    db_path: str | None = None,
    *,
    now: float | None = None,
    since: float | None = None,
    utc_offset: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, Any], IndexStats]:
    """Scan, refresh the index, and build the report document."""
    roots = roots if roots else default_roots()
    roots = [os.path.abspath(os.path.expanduser(r)) for r in roots]
    sources = discover(roots)
    index = Index(db_path or default_db_path())
    try:
        stats, rows = index.refresh(sources, roots, progress)
    finally:
        index.close()
    sessions = build_sessions(sources, rows)
    now = time.time() if now is None else now
    if utc_offset is None:
        utc_offset = float(time.localtime(now).tm_gmtoff)
    doc = build_report(sessions, now, utc_offset, since)
    doc["index"] = {
        "files": stats.files,
        "skipped": stats.skipped,
        "appended": stats.appended,
        "reread": stats.reread,
        "dropped": stats.dropped,
        "bytesRead": stats.bytes_read,
        "rebuilt": index.rebuilt,
    }
    return doc, stats
