"""The session page, live: served on 127.0.0.1, pushed new rows and health as the transcript grows.

The push is Server-Sent Events (`text/event-stream`) over the standard library's `http.server`: the
messages only flow from the server to the page, which is what SSE is for, the browser's own
`EventSource` reconnects by itself, and the framing is plain text lines, so the standard library
covers the whole protocol and no WebSocket library is needed. Messages (one JSON object each):

* `{"type": "rows", "from": k, "rows": [...]}` - timeline rows from index k on (new, or changed: a
  tool call whose result arrived);
* `{"type": "session", "session": {...}}` - the time span, compactions, health bar and the
  watcher's trace;
* `{"type": "health:update", "health": {...}}` - the context health block (the seed's message).

The transcript is polled (size and mtime, a few times a second); on a change the model is rebuilt
once and every connected page gets only what differs from what it was last sent.
"""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from reports.session_page import render_html
from reports.session_page_data import load_model

POLL_SECONDS = 0.2
KEEPALIVE_SECONDS = 15.0
SESSION_KEYS = (
    "sessionId",
    "t0",
    "t1",
    "window",
    "models",
    "compactions",
    "healthBar",
    "story",
    "storyAvailable",
    "storyError",
)


class _Source:
    """The transcript's newest model, rebuilt when the file changes (one rebuild for all pages)."""

    def __init__(self, transcript: str) -> None:
        self.transcript = transcript
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._model: dict[str, Any] = {}
        self.version = 0

    def current(self) -> tuple[int, dict[str, Any]]:
        with self._lock:
            try:
                st = os.stat(self.transcript)
                stamp = (st.st_size, st.st_mtime_ns)
            except OSError:
                stamp = None
            if stamp != self._stamp or not self._model:
                if stamp is not None:
                    self._model = load_model(self.transcript)
                self._stamp = stamp
                self.version += 1
            return self.version, self._model


def _diff(model: dict[str, Any], sent: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages that bring a page from what it was `sent` to `model` (updates `sent`)."""
    out: list[dict[str, Any]] = []
    rows = [json.dumps(r, sort_keys=True) for r in model.get("rows", [])]
    old = sent.get("rows", [])
    k = 0
    while k < min(len(rows), len(old)) and rows[k] == old[k]:
        k += 1
    if k < len(rows) or len(old) > len(rows):
        out.append({"type": "rows", "from": k, "rows": model["rows"][k:]})
        sent["rows"] = rows
    session = {key: model.get(key) for key in SESSION_KEYS}
    if session != sent.get("session"):
        out.append({"type": "session", "session": session})
        sent["session"] = session
    if model.get("health") != sent.get("health"):
        out.append({"type": "health:update", "health": model.get("health")})
        sent["health"] = model.get("health")
    return out


class LiveView:
    """An HTTP server on 127.0.0.1 for one session's live page."""

    def __init__(self, transcript: str, port: int = 0, poll: float = POLL_SECONDS) -> None:
        self.source = _Source(transcript)
        self.poll = poll
        self.stopping = threading.Event()
        self._started = False
        view = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path in ("/", "/index.html"):
                    _, model = view.source.current()
                    body = render_html(model, live=True).encode("utf-8")
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                    self.send_header("Cache-Control", "no-store")
                    self.end_headers()
                    self.wfile.write(body)
                elif path == "/events":
                    view.stream(self)
                else:
                    self.send_error(404)

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}/"

    def stream(self, handler: BaseHTTPRequestHandler) -> None:
        """One page's event stream: everything once, then what changes."""
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
        handler.send_header("Cache-Control", "no-store")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        sent: dict[str, Any] = {}
        seen = -1
        idle = 0.0
        try:
            handler.wfile.write(b"retry: 1000\n\n")
            while not self.stopping.is_set():
                version, model = self.source.current()
                if version != seen:
                    seen = version
                    for msg in _diff(model, sent):
                        data = json.dumps(msg, separators=(",", ":"), allow_nan=False)
                        handler.wfile.write(b"data: " + data.encode("utf-8") + b"\n\n")
                    handler.wfile.flush()
                    idle = 0.0
                elif idle >= KEEPALIVE_SECONDS:
                    handler.wfile.write(b": keepalive\n\n")
                    handler.wfile.flush()
                    idle = 0.0
                self.stopping.wait(self.poll)
                idle += self.poll
        except (BrokenPipeError, ConnectionResetError):
            return

    def serve_forever(self) -> None:
        self._started = True
        self.server.serve_forever(poll_interval=0.2)

    def start(self) -> threading.Thread:
        """Serve from a background thread (for tests and embedding)."""
        t = threading.Thread(target=self.serve_forever, name="live-view", daemon=True)
        t.start()
        return t

    def close(self) -> None:
        self.stopping.set()
        if self._started:  # shutdown() waits for serve_forever, which must have run
            self.server.shutdown()
        self.server.server_close()
