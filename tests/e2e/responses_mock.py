"""A loopback mock of OpenAI's Responses API for the real Codex CLI (../shared/reference/codex.md):
`POST /v1/responses` answers one assistant message as `text/event-stream` with the usage the test
chose (by default a cold first call, then warm ones: the prompt grows by `grow` tokens a call);
`GET /v1/models` an empty list; anything else 404 (a WebSocket upgrade too). Every request body is
kept (decompressed) for the test to read."""

from __future__ import annotations

import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Mock:
    def __init__(self, base: int = 12_000, grow: int = 800, text: str = "ok") -> None:
        self.bodies: list[dict[str, Any]] = []
        self.base, self.grow, self.text = base, grow, text
        self.lock = threading.Lock()
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, "application/json", b'{"object":"list","data":[],"models":[]}')
                else:
                    self._send(404, "text/plain", b"not here")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    raw = gzip.decompress(raw)
                elif self.headers.get("Content-Encoding") == "zstd":
                    import zstandard  # type: ignore[import-not-found]

                    raw = zstandard.ZstdDecompressor().decompress(raw, max_output_size=64 << 20)
                if not self.path.rstrip("/").endswith("/responses"):
                    self._send(404, "text/plain", b"not here")
                    return
                with mock.lock:
                    mock.bodies.append(json.loads(raw))
                    n = len(mock.bodies)
                self._send(200, "text/event-stream", mock.stream(n))

            def _send(self, code: int, kind: str, body: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def usage(self, n: int) -> dict[str, Any]:
        prompt = self.base + self.grow * (n - 1)
        cached = 0 if n == 1 else self.base + self.grow * (n - 2)
        write = prompt - cached
        details = {"cached_tokens": cached, "cache_write_tokens": write}
        return {"input_tokens": prompt, "input_tokens_details": details, "output_tokens": 40,
                "output_tokens_details": {"reasoning_tokens": 10}, "total_tokens": prompt + 40}

    def stream(self, n: int) -> bytes:
        rid, mid = f"resp_{n:04d}", f"msg_{n:04d}"
        item = {"type": "message", "id": mid, "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": self.text, "annotations": []}]}
        started = {**item, "status": "in_progress", "content": []}
        events: list[tuple[str, dict[str, Any]]] = [
            ("response.created", {"response": {"id": rid, "object": "response", "status": "in_progress",
                                               "output": []}}),
            ("response.output_item.added", {"output_index": 0, "item": started}),
            ("response.output_text.delta", {"output_index": 0, "item_id": mid, "content_index": 0,
                                            "delta": self.text}),
            ("response.output_item.done", {"output_index": 0, "item": item}),
            ("response.completed", {"response": {"id": rid, "object": "response", "status": "completed",
                                                 "output": [item], "usage": self.usage(n)}}),
        ]
        return b"".join(f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()
                        for name, data in events)

    def __enter__(self) -> Mock:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
