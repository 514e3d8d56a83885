"""Sources -> index -> sessions -> the report document. The shell around the pure `warmth` module."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from typing import TYPE_CHECKING, Any

from reports.fmt import apply_now
from reports.index import DB_NAME, Index, IndexStats, Source, default_roots, discover

REPORT_VERSION = 1  # bump when the report's computation changes: cached documents are then rebuilt

if TYPE_CHECKING:
    from collections.abc import Callable

    from reports.parse import Row
    from reports.warmth import Session


def default_db_path() -> str:
    from session_watcher.paths import cache_dir

    return os.path.join(cache_dir(), DB_NAME)


def build_sessions(sources: list[Source], rows: dict[str, list[Row]]) -> list[Session]:
    """Group sources by (project, session) and fold each: main file first, then subagent files."""
    from reports.warmth import fold_session

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
    """Scan, refresh the index, and build the report document.

    The finished document is kept in the index under a fingerprint of every file it was built from;
    an unchanged corpus gets it back with only the clock-dependent fields (today, this week)
    recomputed.
    """
    roots = roots if roots else default_roots()
    roots = [os.path.abspath(os.path.expanduser(r)) for r in roots]
    sources = discover(roots)
    now = time.time() if now is None else now
    if utc_offset is None:
        utc_offset = float(time.localtime(now).tm_gmtoff)
    index = Index(db_path or default_db_path())
    try:
        try:
            doc, stats, cached = _build(index, sources, roots, now, since, utc_offset, progress)
        except sqlite3.DatabaseError:
            index.discard()
            doc, stats, cached = _build(index, sources, roots, now, since, utc_offset, progress)
    finally:
        index.close()
    doc["index"] = {
        "files": stats.files,
        "skipped": stats.skipped,
        "appended": stats.appended,
        "reread": stats.reread,
        "dropped": stats.dropped,
        "bytesRead": stats.bytes_read,
        "rebuilt": index.rebuilt,
        "cached": cached,
    }
    return doc, stats


def _build(
    index: Index,
    sources: list[Source],
    roots: list[str],
    now: float,
    since: float | None,
    utc_offset: float,
    progress: Callable[[int, int], None] | None,
) -> tuple[dict[str, Any], IndexStats, bool]:
    stats, live = index.refresh(sources, roots, progress)
    key = index.fingerprint(live, f"{REPORT_VERSION}\0{since!r}\0{utc_offset!r}")
    text = index.cached_report(key)
    if text is not None:
        return apply_now(json.loads(text), now, utc_offset), stats, True
    from reports.warmth import build_report

    sessions = build_sessions(sources, index.rows(live))
    doc = build_report(sessions, now, utc_offset, since)
    index.store_report(key, json.dumps(doc, separators=(",", ":")), time.time())
    return doc, stats, False
