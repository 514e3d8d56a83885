"""The live page's front door: connections wait here, in one thread, until their request header is in.

A thread per connection is simple, but a connection that sends nothing (or half a header) would hold
its thread's slot until its deadline: 50 of them kept the page's owner waiting. Here a connection
costs only a socket until its request line and headers have arrived: one selector loop reads every
waiting connection without blocking; a header that is complete goes to `ready` (the page's owner
first: a request whose query carries the token is served before the others), one that takes longer
than `header_seconds`, grows past MAX_HEADER_BYTES or is closed by its client is dropped, and past
MAX_PENDING waiting connections the oldest is dropped. The slots (`live_view._Server`) are held only
by requests whose header is complete.
"""

from __future__ import annotations

import itertools
import queue
import selectors
import socket
import time
from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable

MAX_HEADER_BYTES = 64 << 10  # http.server's own limit is 65,536 per line and 100 lines
MAX_PENDING = 256  # connections waiting for their header; past it the oldest goes
READY_MAX = 64  # complete requests waiting for a slot; past it a new one is closed


class Waiting:
    """One connection whose header is not complete yet."""

    __slots__ = ("addr", "data", "deadline", "sock")

    def __init__(self, sock: socket.socket, addr: Any, deadline: float) -> None:
        self.sock, self.addr, self.deadline, self.data = sock, addr, deadline, bytearray()


def header_done(data: bytes | bytearray) -> bool:
    """The request line and headers are all in: an empty line (CRLF or LF) ends them."""
    return b"\r\n\r\n" in data or b"\n\n" in data or b"\n\r\n" in data


def query_of(data: bytes | bytearray) -> str:
    """The query of the request line's target (`GET /?token=... HTTP/1.1`)."""
    parts = bytes(data.split(b"\n", 1)[0]).split()
    return parts[1].decode("latin-1").partition("?")[2] if len(parts) >= 2 else ""


class Gate:
    """Reads waiting connections in one thread; `ready` yields (priority, n, sock, addr, header bytes)."""

    def __init__(self, header_seconds: float, owner: Callable[[str], bool], stopping: threading.Event) -> None:
        self.header_seconds, self.owner, self.stopping = header_seconds, owner, stopping
        self.ready: queue.PriorityQueue[tuple[int, int, socket.socket, Any, bytes]] = queue.PriorityQueue(READY_MAX)
        self._new: deque[tuple[socket.socket, Any]] = deque()
        self._wake: socket.socket | None = None  # the loop's wake-up pipe, while it runs
        self._waiting: dict[int, Waiting] = {}  # insertion order: the oldest first
        self._count = itertools.count()

    def add(self, sock: socket.socket, addr: Any) -> None:
        """A connection just accepted (from the accept loop's thread)."""
        self._new.append((sock, addr))
        wake = self._wake
        if wake is not None:
            try:
                wake.send(b"\0")
            except OSError:  # the wake-up pipe is full or closed: the loop wakes anyway
                pass

    def run(self) -> None:
        """The loop, until `stopping`; then every waiting connection is closed."""
        self._wake_r, wake = socket.socketpair()
        self._wake_r.setblocking(False)
        wake.setblocking(False)
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        self._wake = wake
        try:
            while not self.stopping.is_set():
                self._admit()
                for key, _ in self._sel.select(self._timeout()):
                    if key.data is None:
                        self._drain()
                    else:
                        self._read(key.data)
                self._expire()
        finally:
            self._wake = None
            for w in list(self._waiting.values()):
                self._drop(w)
            while self._new:
                _close(self._new.popleft()[0])
            self._sel.close()
            self._wake_r.close()
            wake.close()

    def _timeout(self) -> float:
        first = next(iter(self._waiting.values()), None)
        return 0.2 if first is None else max(0.0, min(0.2, first.deadline - time.monotonic()))

    def _drain(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except OSError:
            pass

    def _admit(self) -> None:
        while self._new:
            sock, addr = self._new.popleft()
            sock.setblocking(False)
            w = Waiting(sock, addr, time.monotonic() + self.header_seconds)
            self._waiting[sock.fileno()] = w
            self._sel.register(sock, selectors.EVENT_READ, w)
            while len(self._waiting) > MAX_PENDING:
                self._drop(next(iter(self._waiting.values())))

    def _read(self, w: Waiting) -> None:
        try:
            chunk = w.sock.recv(8192)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk or len(w.data) + len(chunk) > MAX_HEADER_BYTES:
            self._drop(w)
            return
        w.data += chunk
        if header_done(w.data):
            self._forget(w)
            w.sock.setblocking(True)
            data = bytes(w.data)
            try:
                self.ready.put_nowait((0 if self.owner(query_of(data)) else 1, next(self._count), w.sock, w.addr, data))
            except queue.Full:
                _close(w.sock)

    def _expire(self) -> None:
        now = time.monotonic()
        for w in [w for w in self._waiting.values() if w.deadline <= now]:
            self._drop(w)

    def _forget(self, w: Waiting) -> None:
        self._waiting.pop(w.sock.fileno(), None)
        try:
            self._sel.unregister(w.sock)
        except (KeyError, ValueError):
            pass

    def _drop(self, w: Waiting) -> None:
        self._forget(w)
        _close(w.sock)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
