"""A loopback OTLP/HTTP receiver for the tests: what a collector's `otlp` receiver accepts, decoded
with the official `opentelemetry-proto` messages (no collector binary is packaged for this machine).

It listens on 127.0.0.1 only, accepts `POST /v1/metrics` and `POST /v1/logs` in both encodings
(`application/x-protobuf`, `application/json`, optionally gzip'd), decodes every body into an
`ExportMetricsServiceRequest` / `ExportLogsServiceRequest` (`google.protobuf.json_format` for the
JSON ones, so a body that is not valid OTLP/JSON fails to decode and the request is answered 400),
and keeps them. `points()` flattens what arrived into one row per data point, with the resource and
the point's attributes as plain dicts.
"""

from __future__ import annotations

import gzip
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from google.protobuf.message import Message
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

MAX_BODY = 8 << 20


def any_value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [any_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return attrs(v.kvlist_value.values)
    return getattr(v, kind) if kind else None


def attrs(kvs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in kvs:
        kv_: KeyValue = kv
        out[kv_.key] = any_value(kv_.value)
    return out


@dataclass
class Received:
    """One accepted request: its path, content type, raw size and decoded message."""

    path: str
    content_type: str
    size: int
    message: Message
    headers: dict[str, str]
    at: float


@dataclass
class Point:
    """One data point as it arrived."""

    name: str
    unit: str
    kind: str  # gauge | sum
    monotonic: bool | None
    temporality: int | None  # 1 delta, 2 cumulative
    value: float
    start: int  # start_time_unix_nano (0 for gauges)
    time: int
    attributes: dict[str, Any]
    resource: dict[str, Any]
    scope: str
    at: float  # when the receiver got it


@dataclass
class Receiver:
    """`with Receiver() as r:` ... `r.url` (http://127.0.0.1:PORT), `r.wait(pred)`, `r.points()`."""

    status: int = 200  # answer every request with this (503: a collector that is overloaded)
    port: int = 0  # 0: any free port
    requests: list[Received] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Receiver:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(min(length, MAX_BODY))
                ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
                try:
                    if (self.headers.get("Content-Encoding") or "").lower() == "gzip":
                        body = gzip.decompress(body)
                    msg, reply = owner._decode(self.path, ctype, body)
                except Exception as exc:  # a body a collector would refuse
                    with owner._lock:
                        owner.rejected.append((self.path, repr(exc)))
                    self.send_response(400)
                    self.end_headers()
                    return
                with owner._lock:
                    owner.requests.append(Received(self.path, ctype, length, msg,
                                                   {k.lower(): v for k, v in self.headers.items()}, time.time()))
                self.send_response(owner.status)
                if ctype == "application/json":
                    data = json_format.MessageToJson(reply).encode()
                else:
                    data = reply.SerializeToString()
                self.send_header("Content-Type", ctype or "application/x-protobuf")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        ThreadingHTTPServer.allow_reuse_address = True
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @staticmethod
    def _decode(path: str, ctype: str, body: bytes) -> tuple[Message, Message]:
        msg: Message
        reply: Message
        if path == "/v1/metrics":
            msg, reply = ExportMetricsServiceRequest(), ExportMetricsServiceResponse()
        elif path == "/v1/logs":
            msg, reply = ExportLogsServiceRequest(), ExportLogsServiceResponse()
        else:
            raise ValueError(f"no such OTLP path: {path}")
        if ctype == "application/json":
            json_format.Parse(body.decode("utf-8"), msg)
        elif ctype == "application/x-protobuf":
            msg.ParseFromString(body)
        else:
            raise ValueError(f"unsupported content type {ctype!r}")
        return msg, reply

    def wait(self, predicate: Callable[[Receiver], bool], timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self):
                return True
            time.sleep(0.05)
        return predicate(self)

    def metric_requests(self) -> list[Received]:
        with self._lock:
            return [r for r in self.requests if r.path == "/v1/metrics"]

    def log_requests(self) -> list[Received]:
        with self._lock:
            return [r for r in self.requests if r.path == "/v1/logs"]

    def points(self, prefix: str = "") -> list[Point]:
        out: list[Point] = []
        for req in self.metric_requests():
            msg: Any = req.message
            for rm in msg.resource_metrics:
                resource = attrs(rm.resource.attributes)
                for sm in rm.scope_metrics:
                    for m in sm.metrics:
                        if not m.name.startswith(prefix):
                            continue
                        kind = m.WhichOneof("data")
                        if kind not in ("gauge", "sum"):
                            continue
                        data = getattr(m, kind)
                        mono = data.is_monotonic if kind == "sum" else None
                        temp = data.aggregation_temporality if kind == "sum" else None
                        for dp in data.data_points:
                            value = dp.as_double if dp.WhichOneof("value") == "as_double" else float(dp.as_int)
                            out.append(Point(m.name, m.unit, kind, mono, temp, value, dp.start_time_unix_nano,
                                             dp.time_unix_nano, attrs(dp.attributes), resource, sm.scope.name,
                                             req.at))
        return out

    def log_records(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for req in self.log_requests():
            msg: Any = req.message
            for rl in msg.resource_logs:
                resource = attrs(rl.resource.attributes)
                for sl in rl.scope_logs:
                    for lr in sl.log_records:
                        out.append({"body": any_value(lr.body), "attributes": attrs(lr.attributes),
                                    "resource": resource, "time": lr.time_unix_nano, "scope": sl.scope.name,
                                    "eventName": getattr(lr, "event_name", "")})
        return out


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed): a collector that is down."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def exporters(home: str | None = None) -> list[int]:
    """The exporter processes of a test's home (SESSION_WATCHER_HOME, read from their /proc
    environment): the only processes a test may stop, its own."""
    import os
    from pathlib import Path

    mark = b"SESSION_WATCHER_HOME=" + (home or os.environ["SESSION_WATCHER_HOME"]).encode()
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"session_watcher.otlp.exporter" in cmd and mark in env:
            found.append(int(pid))
    return found


def stop_exporters(home: str | None = None) -> None:
    """SIGTERM this home's exporters, each by its pid, and wait (bounded) until they are gone."""
    import os
    import signal

    for pid in exporters(home):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 10
    while exporters(home) and time.monotonic() < deadline:
        time.sleep(0.05)
