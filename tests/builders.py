"""Builders the tests (and bench.hotpaths) use to make a report's or a page's document the plain way,
from the whole input at once: what the product's incremental paths must equal."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from session_watcher.reports.collect import fold_files
from session_watcher.reports.session_page import page_parts
from session_watcher.reports.session_page_data import PageBuilder, StoryTrace
from session_watcher.reports.warmth import _guard_call, guard_ids, report_of_parts, session_part, summarize_guard

if TYPE_CHECKING:
    from collections.abc import Iterable

    from session_watcher.agents.source import Source
    from session_watcher.reports.parse import Row
    from session_watcher.reports.warmth import Session


def build_sessions(sources: list[Source], rows: dict[str, list[Row]]) -> list[Session]:
    """Group sources by session id and fold each (`fold_files`). The plain path (tests hold
    `_Summarize`'s parts, made where the files are read, to it)."""
    groups: dict[str, list[tuple[Source, list[Row]]]] = {}
    for src in sources:
        got = rows.get(src.path)
        if got is not None:
            groups.setdefault(src.session, []).append((src, got))
    out = []
    for session, files in groups.items():
        s = fold_files(session, files)
        if s.api_calls:
            out.append(s)
    return out


def build_report(
    sessions: list[Session],
    now: float,
    utc_offset: float = 0.0,
    since: float | None = None,
    warnings: Iterable[dict[str, Any]] = (),
    *,
    scatter_text: bool = False,
) -> dict[str, Any]:
    """The whole report as the JSON document (docs/report-schema.json), from the sessions whole: the
    plain path, which `collect`'s parts made where the files are read must equal. `warnings`: the cold-cache
    guard's log lines. With `scatter_text`, the document's `scatter` and `sessions` are `JSONText`:
    those lists' compact JSON text (json.dumps of the same lists, written without building every dict
    of the scatter, and each session's entry written where its part was made)."""
    warnings = list(warnings)
    guarded = guard_ids(warnings)
    parts = [session_part(s, since, utc_offset, scatter_text, guarded) for s in sessions]
    return report_of_parts(parts, now, utc_offset, since, warnings, scatter_text=scatter_text)


def build_model(
    lines: Iterable[bytes | str],
    session_id: str | None = None,
    trace: list[dict[str, Any]] | None = None,
    final_status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The page's data from transcript lines (complete lines only) and the replay's trace rows."""
    builder = PageBuilder(session_id)
    builder.feed(lines)
    story = None
    if trace is not None:
        story = StoryTrace()
        for row in trace:
            story.append(row)
    return builder.model(story, final_status)


def guard_summary(warnings: Iterable[dict[str, Any]], sessions: list[Session],
                  since: float | None = None) -> dict[str, Any]:
    """The cold prompts the guard warned about (its log's lines) and what they cost.

    A warning `went ahead` when its session has a main-chain call after the warning, before any other
    call after the gap it warned about: that call's cache writes are what the cold prompt cost. Else
    the prompt was `not sent` in that session (a restart, /compact in a new session, or no return):
    its estimated re-write did not happen there.
    """
    return summarize_guard(warnings, {s.session_id: [_guard_call(c) for c in s.calls] for s in sessions}, since)


def render_html(model: dict[str, Any], live: bool = False) -> str:
    """The page for one session's model."""
    return "".join(page_parts(model, live))


def complete_lines(data: bytes) -> list[str]:
    """The complete (newline-terminated) lines of a transcript; a torn last line waits."""
    end = data.rfind(b"\n")
    if end < 0:
        return []
    return data[: end + 1].decode("utf-8", "replace").splitlines()
