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

The transcript is polled (size and mtime, a few times a second); on a change only the bytes
appended since are read, into the page's builder and the watcher's own fold (one for all pages: a
rewritten file starts both again), and each changed row is encoded once; every connected page gets
only what differs from what it was last sent. The server never forks (replay's second parser is for
a process without threads).

The page shows commands, URLs and prompts, so it is the user's alone:

* a secret token, made when the server starts and printed once in its address (`/?token=...`, as
  Jupyter does), is asked of every request, the event stream's included (the page passes its own
  query on), and compared in constant time; without it the answer is 403 and nothing of the page;
* a request whose Host header is not 127.0.0.1:PORT, localhost:PORT or [::1]:PORT (a DNS-rebinding
  page) is refused (421);
* a request must have sent its request line and headers within HEADER_SECONDS of its start, however
  it trickles them (the socket's timeout is per read, which a byte every few seconds resets);
* until its header is in, a connection waits in the gate (`reports.gate`: one selector thread, at
  most 256 waiting, the oldest dropped past that), holding no slot: idle or half-sent connections
  cannot starve the owner, whose request (the token in its query) is also served first;
* at most MAX_CONNECTIONS requests are answered at once, and event streams, which last, are held in
  a budget of their own, MAX_STREAMS (a stream past it is answered 503): open streams can never take
  the slots a page load needs;
* a socket idle for SOCKET_TIMEOUT is closed; the server stops by itself after `idle_stop` seconds
  with no connection; a client that goes away is not an error.

The cyclic collector, which `report` commands keep off for their short lives, is on while the server
runs: it runs for hours and its threads, sockets and tracebacks make cycles.
"""

from __future__ import annotations

import gc
import hmac
import io
import os
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import parse_qs

from session_watcher.core.text import clean_data, utf8
from session_watcher.reports import jsontext
from session_watcher.reports.session_marks import Marks
from session_watcher.reports.session_page import page_parts
from session_watcher.reports.session_page_data import StoryTrace, TranscriptFeed

if TYPE_CHECKING:
    import socket
    from collections.abc import Callable

    from session_watcher.core.shapes import Config, State

POLL_SECONDS = 0.2
KEEPALIVE_SECONDS = 15.0
MAX_CONNECTIONS = 16
MAX_STREAMS = 6  # a browser opens at most six connections to one host: six pages of one session
SOCKET_TIMEOUT = 20.0  # a read must arrive, and a stream's write complete, within this
HEADER_SECONDS = 10.0  # a request's line and headers must all have arrived within this
BACKLOG = 64


class Limits(NamedTuple):
    """What one client can hold of the server: slots, streams and seconds."""

    connections: int = MAX_CONNECTIONS
    streams: int = MAX_STREAMS
    timeout: float = SOCKET_TIMEOUT
    header_seconds: float = HEADER_SECONDS


DEFAULT_LIMITS = Limits()
SESSION_KEYS = (
    "sessionId",
    "t0",
    "t1",
    "window",
    "windowText",
    "durationText",
    "models",
    "compactions",
    "turns",
    "healthBar",
    "story",
    "storyAvailable",
    "storyError",
    "lampAt",
    "restartNow",
    "holds",
    "restarts",
    "fork",
)


def _dumps(value: Any) -> str:
    """JSON of page data, every string cleaned (`core.text.clean_data`), a figure JSON cannot hold
    written null (`reports.jsontext`)."""
    return jsontext.dumps(clean_data(value))


class Snapshot:
    """One version of the page's model, with each row's JSON text (unchanged rows keep their text
    object from one version to the next)."""

    def __init__(self, version: int, model: dict[str, Any], texts: list[str]) -> None:
        self.version = version
        self.model = model
        self.texts = texts
        self.session = {key: model.get(key) for key in SESSION_KEYS}
        self.health = model.get("health")

    @classmethod
    def of(cls, model: dict[str, Any], version: int = 0) -> Snapshot:
        return cls(version, model, [_dumps(r) for r in model.get("rows", [])])


class _Story:
    """The watcher's own fold of the transcript, kept between changes: each change folds only what
    was appended (a rewritten transcript starts it again, as a hook's fold does)."""

    def __init__(self, transcript: str) -> None:
        self.path = os.path.abspath(transcript)
        self.session_id = os.path.basename(self.path).removesuffix(".jsonl")
        self.trace = StoryTrace()
        self.state: State | None = None
        self.cfg: Config | None = None
        self._backtest: tuple[int, dict[str, Any] | None] | None = None  # (calls, the page's backtest)
        self._cold: bool | None = None  # the cache cold when the restart saving was last priced
        self._parent: bool | None = None  # a fork's parent's file found (None: not looked for yet)

    def _cold_at(self, now: float) -> bool | None:
        from session_watcher.core.status import cold_now

        return None if self.state is None or self.cfg is None else cold_now(self.state, self.cfg, now)

    def turned(self, now: float) -> bool:
        """The cache went cold (or the clock stepped back to warm) since the saving was priced: the
        page's restart saving changes with no new line in the transcript."""
        return self._cold is not None and self._cold_at(now) != self._cold

    def backtest(self) -> dict[str, Any] | None:
        """The page's closed-loop backtest (session_page_data.page_backtest), again only when the
        session has a new API call."""
        from session_watcher.reports.session_page_data import page_backtest

        calls = len(self.trace.calls)
        if self._backtest is None or self._backtest[0] != calls:
            self._backtest = (calls, page_backtest(self.path))
        return self._backtest[1]

    def advance(self) -> tuple[dict[str, Any] | None, StoryTrace | None, str | None]:
        """(the final status document, the story, None) after folding what is new, or (None, None,
        the error) when the fold failed (the next change starts it again)."""
        from session_watcher.reports.session_page_data import now_document
        from session_watcher.sessions.replay import scratch_state
        from session_watcher.state import session

        try:
            if self.state is None or self.cfg is None:
                self.trace.clear()
                self.state, self.cfg = scratch_state(self.path)
            subs = session.subagent_files(self.path, self.session_id)
            self.state, _alerts, _done = session.sync(self.state, self.path, self.cfg, float("inf"), subs,
                                                      trace=self.trace)
            now = time.time()
            self._cold = self._cold_at(now)
            doc = now_document(self.state, self.cfg, now)
            if doc.get("inheritedCalls"):  # a fork: its parent's file looked for once (`naming.mark_parent`)
                if self._parent is None:
                    from session_watcher.sessions.naming import mark_parent

                    mark_parent(doc, self.path)
                    self._parent = doc.get("forkedFromFound") is not False
                elif not self._parent:
                    doc["forkedFromFound"] = False
            return doc, self.trace, None
        except Exception as exc:  # the page still shows the transcript's own story
            self.state = None
            return None, None, f"{type(exc).__name__}: {exc}"


class _Source:
    """The transcript's newest model, brought up to date when the file changes (once for all pages)."""

    def __init__(self, transcript: str) -> None:
        self.transcript = transcript
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._feed = TranscriptFeed(transcript)
        self._story = _Story(transcript)
        self._texts: dict[object, str] = {}  # PageBuilder.key(row) -> its JSON text, for the feed's builder's rows
        self._builder = self._feed.builder
        self._snap: Snapshot | None = None
        self._marks = Marks(transcript)  # the guard's holds and the handoffs, read when their files change
        self.version = 0

    def current(self) -> Snapshot:
        with self._lock:
            try:
                st = os.stat(self.transcript)
                stamp: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
            except OSError:
                stamp = None
            if stamp != self._stamp or self._snap is None or self._story.turned(time.time()):
                if stamp is not None:
                    self._snap = self._refresh()
                self._stamp = stamp
                self.version += 1
                if self._snap is not None:
                    self._snap.version = self.version
            if self._snap is None:
                self._snap = Snapshot.of({}, self.version)
            return self._snap

    def _refresh(self) -> Snapshot:
        feed = self._feed
        try:
            feed.read()
        except OSError:
            if self._snap is not None:
                return self._snap
            raise
        builder = feed.builder
        if builder is not self._builder:  # the file was rewritten: a new builder, new rows
            self._builder = builder
            self._texts.clear()
        final, trace, error = self._story.advance()
        model = builder.model(trace, final, self._story.backtest() if trace is not None else None)
        model["storyError"] = error
        self._marks.add(model)
        texts = self._texts
        for key, row in builder.touched.items():
            texts[key] = _dumps(builder.row_dict(row))
        builder.touched.clear()
        return Snapshot(self.version, model, [texts[builder.key(r)] for r in builder.ordered()])


def _diff(snap: Snapshot, sent: dict[str, Any]) -> list[str]:
    """The messages (JSON texts) that bring a page from what it was `sent` to `snap` (updates `sent`)."""
    out: list[str] = []
    rows = snap.texts
    old: list[str] = sent.get("rows", [])
    k = 0
    n = min(len(rows), len(old))
    while k < n and rows[k] == old[k]:
        k += 1
    if k < len(rows) or len(old) > len(rows):
        out.append(f'{{"type":"rows","from":{k},"rows":[{",".join(rows[k:])}]}}')
        sent["rows"] = rows
    if snap.session != sent.get("session"):
        out.append(_dumps({"type": "session", "session": snap.session}))
        sent["session"] = snap.session
    if snap.health != sent.get("health"):
        out.append(_dumps({"type": "health:update", "health": snap.health}))
        sent["health"] = snap.health
    return out


class _Deadline(io.RawIOBase):
    """A socket's reading side that gives up once `deadline` (monotonic) has passed, however the
    bytes trickle: the socket's own timeout restarts with every byte. It first gives back `prefix`,
    the bytes the gate read (the first request's header)."""

    def __init__(self, sock: socket.socket, idle: float, prefix: bytes = b"") -> None:
        super().__init__()
        self.sock = sock
        self.idle = idle
        self.deadline: float | None = None
        self.prefix = memoryview(prefix)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.prefix:
            n = min(len(buffer), len(self.prefix))
            buffer[:n] = self.prefix[:n]
            self.prefix = self.prefix[n:]
            return n
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the request's header took too long")
            self.sock.settimeout(min(left, self.idle))
        return self.sock.recv_into(buffer)


class _Server(ThreadingHTTPServer):
    """Connections wait in the gate (`reports.gate`: one thread, no slot) until their request header
    is in; then a thread per connection: at most `slots` connections being answered, the owner's
    (its token in the query) first, and at most `streams` event streams besides."""

    daemon_threads = True
    request_queue_size = BACKLOG

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], limits: Limits,
                 stopping: threading.Event, owner: Callable[[str], bool]) -> None:
        from session_watcher.reports.gate import Gate

        self.slots = threading.BoundedSemaphore(limits.connections)
        self.streams = threading.BoundedSemaphore(limits.streams)
        self.stopping = stopping
        self.active = 0
        self.last_active = time.monotonic()
        self._count = threading.Lock()
        self._slot_held: set[int] = set()  # id(request) of the connections holding a slot
        self._stream_held: set[int] = set()
        self.gate = Gate(limits.header_seconds, owner, stopping)
        self.prefetched: dict[int, bytes] = {}  # id(request) -> the header bytes the gate read
        super().__init__(address, handler)

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        self._gate = threading.Thread(target=self.gate.run, name="live-view-gate", daemon=True)
        self._gate.start()
        threading.Thread(target=self._dispatch, name="live-view-dispatch", daemon=True).start()
        super().serve_forever(poll_interval)

    def server_close(self) -> None:
        super().server_close()
        gate = getattr(self, "_gate", None)
        if gate is not None and self.stopping.is_set():
            gate.join(5)  # it closes the connections still waiting, and its own pipe

    def process_request(self, request: Any, client_address: Any) -> None:
        """The accept loop's hand-off: into the gate, never a wait."""
        self.last_active = time.monotonic()
        self.gate.add(request, client_address)

    def _dispatch(self) -> None:
        """Complete requests, the owner's first, each to a thread of its own once a slot is free."""
        import queue

        while not self.stopping.is_set():
            try:
                _, _, request, client_address, header = self.gate.ready.get(timeout=0.2)
            except queue.Empty:
                continue
            if self.stopping.is_set():
                self.shutdown_request(request)
                break
            while not self.slots.acquire(timeout=0.2):
                if self.stopping.is_set():
                    self.shutdown_request(request)
                    return
            with self._count:
                self.active += 1
                self._slot_held.add(id(request))
            self.prefetched[id(request)] = header
            try:
                super().process_request(request, client_address)
            except Exception:  # no thread to be had: this connection goes, the server stays
                self.prefetched.pop(id(request), None)
                self._done(request)
                self.shutdown_request(request)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._done(request)

    def to_stream(self, request: Any) -> bool:
        """Move a connection from the slots to the streams' budget: False when that is full."""
        if not self.streams.acquire(blocking=False):
            return False
        with self._count:
            self._stream_held.add(id(request))
            held = id(request) in self._slot_held
            self._slot_held.discard(id(request))
        if held:
            self.slots.release()
        return True

    def _done(self, request: Any) -> None:
        with self._count:
            self.active -= 1
            self.last_active = time.monotonic()
            slot = id(request) in self._slot_held
            stream = id(request) in self._stream_held
            self._slot_held.discard(id(request))
            self._stream_held.discard(id(request))
        if slot:
            self.slots.release()
        if stream:
            self.streams.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):  # the client left, or stalled past the timeout: not an error
            return
        from session_watcher.base.logs import log_exception

        if exc is not None:
            log_exception("serve", exc)


class LiveView:
    """An HTTP server on 127.0.0.1 for one session's live page."""

    def __init__(self, transcript: str, *, port: int = 0, poll: float = POLL_SECONDS, idle_stop: float = 0.0,
                 limits: Limits = DEFAULT_LIMITS) -> None:
        self.source = _Source(transcript)
        self.poll = poll
        self.idle_stop = idle_stop
        self.idle_stopped = False
        self.stopping = threading.Event()
        self._started = False
        self.token = secrets.token_urlsafe(32)
        self._token = self.token.encode("ascii")
        view = self
        sock_timeout, header_seconds = limits.timeout, limits.header_seconds

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = sock_timeout  # StreamRequestHandler applies it to the socket

            def setup(self) -> None:
                super().setup()
                self.rfile.close()  # the socket's own reader: replaced by one with a deadline
                prefix = view.server.prefetched.pop(id(self.request), b"")
                self.reading = _Deadline(self.connection, sock_timeout, prefix)
                self.rfile = io.BufferedReader(self.reading)

            def handle_one_request(self) -> None:
                self.reading.deadline = time.monotonic() + header_seconds
                super().handle_one_request()

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                self.reading.deadline = None  # the header is in: writes and keep-alive as usual
                self.connection.settimeout(sock_timeout)
                if self.headers.get("Host", "").lower() not in view.hosts:
                    self.send_error(421, "Misdirected Request: this server answers only for its own address")
                    return
                path, _, query = self.path.partition("?")
                if not view.allowed(query):
                    self.send_error(403, "Forbidden: open the address with its token, as the command printed it")
                    return
                if path in ("/", "/index.html"):
                    snap = view.source.current()
                    body = utf8("".join(page_parts(snap.model, live=True, rows_text=snap.texts)))
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                    self.send_header("Cache-Control", "no-store")
                    self.send_header("Referrer-Policy", "no-referrer")
                    self.end_headers()
                    self.wfile.write(body)
                elif path == "/events":
                    if not view.server.to_stream(self.request):
                        self.send_error(503, "Service Unavailable: too many pages of this session are open")
                        return
                    view.stream(self)
                else:
                    self.send_error(404)

        self.server = _Server(("127.0.0.1", port), Handler, limits, self.stopping, self.allowed)
        self.port = int(self.server.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}/?token={self.token}"
        self.hosts = {f"{h}:{self.port}" for h in ("127.0.0.1", "localhost", "[::1]")}

    def allowed(self, query: str) -> bool:
        """The request's query carries the server's token (compared in constant time)."""
        given = parse_qs(query).get("token", [""])[-1].encode("utf-8", "replace")
        return hmac.compare_digest(given, self._token)

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
                snap = self.source.current()
                if snap.version != seen:
                    seen = snap.version
                    for msg in _diff(snap, sent):
                        handler.wfile.write(b"data: " + msg.encode("utf-8") + b"\n\n")
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
        gc.enable()  # a long life with threads: cycles to collect (report commands turn it off)
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
