"""One session's page: a self-contained HTML file (inline CSS, JS and SVG, no network).

`reports.live_view` serves the same page live; the command line is `reports.session_cli`.
"""

from __future__ import annotations

import html
import json
from typing import Any

from session_watcher.reports.session_page_data import load_model
from session_watcher.reports.session_page_template import CSS, JS, PAGE, THEME


class SessionNotFound(Exception):
    """No transcript matches the session named."""


def find_transcript(target: str) -> str:
    """The transcript of the session `target` names (`sessions.find`: an id, a unique id prefix or a path)."""
    from session_watcher.errors import UserError
    from session_watcher.sessions import transcript_of

    try:
        path = transcript_of(target).transcript
    except UserError as exc:
        raise SessionNotFound(str(exc)) from None
    assert path is not None
    return path


def render_html(model: dict[str, Any], live: bool = False) -> str:
    """The page for one session's model."""
    sid = model.get("sessionId") or "session"
    data = json.dumps(model, separators=(",", ":"), allow_nan=False)
    # inside <script>: no "</script>", "<!--" or "<script" may change how the element is parsed
    data = data.replace("<", "\\u003c")
    page = PAGE
    for key, value in (
        ("__TITLE__", html.escape(f"Session {sid} · session-watcher")),
        ("__HEADING__", html.escape(f"Session {sid}")),
        ("__LIVE__", "1" if live else "0"),
        ("__LIVESTATUS__", "connecting…" if live else ""),
        ("__THEME__", THEME),
        ("__CSS__", CSS),
        ("__JS__", JS),
        ("__BACKTEST__", _backtest_html(model)),
    ):
        page = page.replace(key, value)
    return page.replace("__MODEL__", data)


def _backtest_html(model: dict[str, Any]) -> str:
    """The backtest's line (core.backtest.sentence), or nothing without the watcher's trace."""
    bt = model.get("backtest")
    if not isinstance(bt, dict) or not bt.get("sentence"):
        return ""
    return f'<p id="backtest">{html.escape(str(bt["sentence"]))}</p>'


def write_html(transcript: str, out: str) -> dict[str, Any]:
    model = load_model(transcript)
    from session_watcher.state.atomic import write_atomic

    # user-only (the page shows commands, URLs and prompts); a unique temp file, never a planted one
    write_atomic(out, render_html(model).encode("utf-8"), mode=0o600, fsync=False)
    return model
