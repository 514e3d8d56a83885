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

The page shows commands, URLs and prompts, so the server trusts nothing but its own address: a
request whose Host header is not 127.0.0.1:PORT, localhost:PORT or [::1]:PORT (a DNS-rebinding page)
is refused; at most MAX_CONNECTIONS connections are served at once (the others wait in the listen
backlog); a socket idle for SOCKET_TIMEOUT is closed; the server stops by itself after `idle_stop`
seconds with no connection; a client that goes away is not an error.
"""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from session_watcher.reports.session_page import render_html
from session_watcher.reports.session_page_data import load_model

POLL_SECONDS = 0.2
KEEPALIVE_SECONDS = 15.0
MAX_CONNECTIONS = 16
SOCKET_TIMEOUT = 20.0  # a request must arrive, and a stream's write complete, within this
BACKLOG = 64
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


class _Server(ThreadingHTTPServer):
    """A thread per connection, at most `slots` at once; the accept loop waits for a free slot."""

    daemon_threads = True
    request_queue_size = BACKLOG

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], slots: int,
                 stopping: threading.Event) -> None:
        self.slots = threading.BoundedSemaphore(slots)
        self.stopping = stopping
        self.active = 0
        self.last_active = time.monotonic()
        self._count = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        while not self.slots.acquire(timeout=0.2):
            if self.stopping.is_set():
                self.shutdown_request(request)
                return
        with self._count:
            self.active += 1
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._done()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._done()

    def _done(self) -> None:
        with self._count:
            self.active -= 1
            self.last_active = time.monotonic()
        self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):  # the client left, or stalled past the timeout: not an error
            return
        from session_watcher.logs import log_exception

        if exc is not None:
            log_exception("serve", exc)


class LiveView:
    """An HTTP server on 127.0.0.1 for one session's live page."""

    def __init__(self, transcript: str, *, port: int = 0, poll: float = POLL_SECONDS, idle_stop: float = 0.0,
                 timeout: float = SOCKET_TIMEOUT, max_connections: int = MAX_CONNECTIONS) -> None:
        self.source = _Source(transcript)
        self.poll = poll
        self.idle_stop = idle_stop
        self.idle_stopped = False
        self.stopping = threading.Event()
        self._started = False
        view = self
        sock_timeout = timeout

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = sock_timeout  # StreamRequestHandler applies it to the socket

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                if self.headers.get("Host", "").lower() not in view.hosts:
                    self.send_error(421, "Misdirected Request: this server answers only for its own address")
                    return
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

        self.server = _Server(("127.0.0.1", port), Handler, max_connections, self.stopping)
        self.port = int(self.server.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}/"
        self.hosts = {f"{h}:{self.port}" for h in ("127.0.0.1", "localhost", "[::1]")}

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
        except OSError:  # the page closed, or stopped reading (a timeout is one)
            return

    def serve_forever(self) -> None:
        self._started = True
        if self.idle_stop > 0:
            threading.Thread(target=self._watch_idle, name="live-view-idle", daemon=True).start()
        self.server.serve_forever(poll_interval=0.2)

    def _watch_idle(self) -> None:
        """Stop the server after `idle_stop` seconds without any connection."""
        while not self.stopping.wait(min(1.0, self.idle_stop / 4)):
            srv = self.server
            if srv.active == 0 and time.monotonic() - srv.last_active >= self.idle_stop:
                self.idle_stopped = True
                self.stopping.set()
                srv.shutdown()
                return

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
