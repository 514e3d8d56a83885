"""`session-watcher report session (ID | PATH) --html OUT.html | --serve [--port N]`.

One session's page: a self-contained HTML file (inline CSS, JS and SVG, no network), or the same page
served live on 127.0.0.1 and pushed new rows and health as the transcript grows.
"""

from __future__ import annotations

import argparse
import glob
import html
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from reports.session_page_data import load_model
from reports.session_page_template import CSS, JS, PAGE

if TYPE_CHECKING:
    from collections.abc import Sequence


class SessionNotFound(Exception):
    """No transcript matches the session id or path given."""


def find_transcript(target: str) -> str:
    """A transcript path from a path or a session id (searched under every Claude config folder)."""
    if os.path.isfile(target):
        return os.path.abspath(target)
    from session_watcher.paths import claude_config_dirs

    sid = os.path.basename(target)
    if sid.endswith(".jsonl"):
        sid = sid[: -len(".jsonl")]
    if sid and not any(c in sid for c in "*?[]"):
        for base in claude_config_dirs():
            hits = sorted(glob.glob(os.path.join(glob.escape(base), "projects", "*", sid + ".jsonl")))
            if hits:
                return hits[0]
    raise SessionNotFound(f"no transcript for session {target!r} (searched the Claude projects folders)")


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
    text = render_html(model)
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, out)
    return model


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="session-watcher report session",
        description="One session's page: the waterfall, the health grade and the watcher's own story.",
    )
    parser.add_argument("session", help="a session id or a transcript path")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--html", metavar="OUT.html", help="write a self-contained HTML file")
    mode.add_argument("--serve", action="store_true", help="serve the page live on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="port for --serve (default: any free port)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        transcript = find_transcript(args.session)
    except SessionNotFound as exc:
        print(f"session-watcher: {exc}", file=sys.stderr)
        return 1
    if args.html:
        try:
            model = write_html(transcript, args.html)
        except OSError as exc:
            print(f"session-watcher: cannot write {args.html}: {exc}", file=sys.stderr)
            return 1
        h = model["health"]
        print(f"{args.html}: session {model['sessionId']}, health {h['grade']} ({h['score']}/100)")
        return 0
    from reports.live_view import LiveView

    try:
        view = LiveView(transcript, port=args.port)
    except OSError as exc:
        print(f"session-watcher: cannot listen on 127.0.0.1:{args.port}: {exc}", file=sys.stderr)
        return 1
    print(f"serving {view.url} (Ctrl-C to stop)", flush=True)
    try:
        view.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        view.close()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
