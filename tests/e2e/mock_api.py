"""A scripted mock of the Anthropic Messages API for the real Claude Code CLI, on 127.0.0.1 only.

The test owns the script: a list of `Turn`s, each the exact content blocks (text, tool_use) and the
exact usage numbers of one main-conversation API reply. Requests the client makes on its own (a
session title, a compaction summary, `count_tokens`, `HEAD /`) are answered without consuming a
turn, and every request is logged (path, headers, parsed body) so the test can assert on it.

Stdlib only: `http.server` with a thread per connection, bounded by a request cap and a body cap.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

MAX_BODY = 32 * 1024 * 1024
MAX_REQUESTS = 2000


@dataclass(frozen=True)
class Usage:
    """The usage one reply reports. cache_creation is split into the 5-minute and 1-hour parts."""

    input_tokens: int = 3
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    output_tokens: int = 20

    @property
    def cache_write(self) -> int:
        return self.cache_write_5m + self.cache_write_1h

    def start_dict(self) -> dict[str, Any]:
        """message_start usage: everything but the output count (the real API reports 1 there)."""
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_write,
            "cache_read_input_tokens": self.cache_read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.cache_write_5m,
                "ephemeral_1h_input_tokens": self.cache_write_1h,
            },
            "output_tokens": 1,
            "service_tier": "standard",
        }

    def final_dict(self) -> dict[str, Any]:
        d = self.start_dict()
        d["output_tokens"] = self.output_tokens
        return d


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class ToolUse:
    name: str
    input: dict[str, Any]
    id: str = field(default_factory=lambda: "toolu_" + uuid.uuid4().hex[:24])


Block = Text | ToolUse


@dataclass(frozen=True)
class Turn:
    """One scripted main-conversation reply."""

    blocks: tuple[Block, ...]
    usage: Usage
    label: str = ""

    @property
    def stop_reason(self) -> str:
        return "tool_use" if any(isinstance(b, ToolUse) for b in self.blocks) else "end_turn"


def read(path: str, usage: Usage, label: str = "") -> Turn:
    return Turn((Text("Reading the file."), ToolUse("Read", {"file_path": path})), usage, label)


def bash(command: str, usage: Usage, label: str = "") -> Turn:
    return Turn((ToolUse("Bash", {"command": command, "description": "Run a command"}),), usage, label)


def say(text: str, usage: Usage, label: str = "") -> Turn:
    return Turn((Text(text),), usage, label)


@dataclass
class Served:
    """What the mock answered to one main request: the turn and the ids the client saw."""

    turn: Turn | None
    message_id: str
    request_id: str
    kind: str
    usage: Usage


@dataclass
class LoggedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    kind: str


COMPACT_MARKERS = (
    "create a detailed summary of the conversation",
    "summary of the conversation so far",
    "your task is to create a detailed summary",
)


def classify(body: Any) -> str:
    """Which kind of /v1/messages request this is: main, title or compact."""
    if not isinstance(body, dict):
        return "main"
    tools = body.get("tools") or []
    messages = body.get("messages") or []
    last_text = ""
    if messages:
        content = messages[-1].get("content") if isinstance(messages[-1], dict) else None
        if isinstance(content, str):
            last_text = content
        elif isinstance(content, list):
            last_text = " ".join(
                str(c.get("text", "")) for c in content if isinstance(c, dict) and c.get("type") == "text"
            )
    lowered = last_text.lower()
    if any(m in lowered for m in COMPACT_MARKERS):
        return "compact"
    if not tools and ("output_format" in body or "title" in json.dumps(body.get("system", "")).lower()):
        return "title"
    return "main"


class MockAPI:
    """The server. Use as a context manager; `base_url` goes into ANTHROPIC_BASE_URL."""

    def __init__(
        self,
        script: list[Turn] | None = None,
        *,
        compact_usage: Usage | None = None,
        compact_summary: str = "Summary: the user asked to read files and run commands; all done.",
        fallback: Callable[[Any], Turn] | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self.script: list[Turn] = list(script or [])
        self.compact_usage = compact_usage or Usage(input_tokens=5, cache_read=0, output_tokens=60)
        self.compact_summary = compact_summary
        self.fallback = fallback
        self.requests: list[LoggedRequest] = []
        self.served: list[Served] = []
        self.unscripted = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- script ---------------------------------------------------------------------------
    def extend(self, turns: list[Turn]) -> None:
        with self._lock:
            self.script.extend(turns)

    def remaining(self) -> int:
        with self._lock:
            return len(self.script)

    def main_served(self) -> list[Served]:
        with self._lock:
            return [s for s in self.served if s.kind == "main"]

    def _next(self, body: Any) -> tuple[str, Turn]:
        kind = classify(body)
        with self._lock:
            if kind == "main":
                if self.script:
                    return kind, self.script.pop(0)
                self.unscripted += 1
        if kind == "compact":
            return kind, Turn((Text(self.compact_summary),), self.compact_usage, "compact")
        if kind == "title":
            title = json.dumps({"title": "Scripted session"})
            return kind, Turn((Text(title),), Usage(input_tokens=50, output_tokens=10), "title")
        if self.fallback is not None:
            return kind, self.fallback(body)
        return kind, Turn((Text("Done."),), Usage(input_tokens=10, output_tokens=5), "unscripted")

    # -- server ---------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> MockAPI:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        handler = type("Handler", (_Handler,), {"mock": self})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="mock-api", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None


class _Handler(BaseHTTPRequestHandler):
    """One connection to the mock: its requests logged, /v1/messages answered from the script."""

    mock: MockAPI  # set on the subclass `MockAPI.start` makes
    protocol_version = "HTTP/1.1"
    timeout = 60

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _log(self, body: Any, kind: str) -> bool:
        with self.mock._lock:
            if len(self.mock.requests) >= MAX_REQUESTS:
                return False
            self.mock.requests.append(LoggedRequest(self.command, self.path, dict(self.headers.items()), body, kind))
        return True

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            raise ValueError("body too large")
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _send_json(self, status: int, obj: Any, extra: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_HEAD(self) -> None:
        self._log(None, "head")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._log(None, "other")
        self._send_json(200, {})

    def do_POST(self) -> None:
        try:
            body = self._read_body()
        except ValueError:
            self._send_json(413, {"type": "error", "error": {"type": "request_too_large"}})
            return
        path = self.path.split("?", 1)[0]
        if path == "/v1/messages/count_tokens":
            self._log(body, "count_tokens")
            n = len(json.dumps(body)) // 4 if body is not None else 0
            self._send_json(200, {"input_tokens": n})
        elif path != "/v1/messages":
            self._log(body, "other")
            self._send_json(200, {})
        else:
            self._messages(body)

    def _messages(self, body: Any) -> None:
        """A Messages request: the next scripted turn (or the answer to a side request), streamed
        when asked; 429 once MAX_REQUESTS are logged."""
        kind, turn = self.mock._next(body)
        if not self._log(body, kind):
            self._send_json(429, {"type": "error", "error": {"type": "rate_limit_error"}})
            return
        msg_id = "msg_" + uuid.uuid4().hex[:24]
        req_id = "req_" + uuid.uuid4().hex[:24]
        with self.mock._lock:
            self.mock.served.append(Served(turn, msg_id, req_id, kind, turn.usage))
        model = body.get("model", "claude-sonnet-4-5") if isinstance(body, dict) else "x"
        if isinstance(body, dict) and body.get("stream"):
            self._stream(turn, msg_id, req_id, model)
        else:
            self._send_json(200, message_json(turn, msg_id, model), {"request-id": req_id})

    do_PUT = do_POST
    do_DELETE = do_POST
    do_PATCH = do_POST

    def _stream(self, turn: Turn, msg_id: str, req_id: str, model: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("request-id", req_id)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for event, data in sse_events(turn, msg_id, model):
            self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()


def _block_json(b: Block) -> dict[str, Any]:
    if isinstance(b, Text):
        return {"type": "text", "text": b.text}
    return {"type": "tool_use", "id": b.id, "name": b.name, "input": b.input}


def message_json(turn: Turn, msg_id: str, model: str) -> dict[str, Any]:
    return {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [_block_json(b) for b in turn.blocks],
        "stop_reason": turn.stop_reason,
        "stop_sequence": None,
        "usage": turn.usage.final_dict(),
    }


def sse_events(turn: Turn, msg_id: str, model: str) -> list[tuple[str, dict[str, Any]]]:
    """The event sequence of a streamed reply, as the real API sends it."""
    ev: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": turn.usage.start_dict(),
                },
            },
        ),
        ("ping", {"type": "ping"}),
    ]
    for i, b in enumerate(turn.blocks):
        if isinstance(b, Text):
            ev.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            # two deltas, like a real stream
            half = len(b.text) // 2
            for piece in (b.text[:half], b.text[half:]):
                if piece:
                    ev.append(
                        (
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": i,
                                "delta": {"type": "text_delta", "text": piece},
                            },
                        )
                    )
        else:
            ev.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "tool_use", "id": b.id, "name": b.name, "input": {}},
                    },
                )
            )
            ev.append(
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {"type": "input_json_delta", "partial_json": json.dumps(b.input)},
                    },
                )
            )
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    ev.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": turn.stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": turn.usage.output_tokens},
            },
        )
    )
    ev.append(("message_stop", {"type": "message_stop"}))
    return ev
