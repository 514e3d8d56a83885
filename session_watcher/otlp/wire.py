"""OTLP/HTTP on the wire: a request document (`payload`) encoded as the collector expects, and one POST.

`http/json` is the document as it is (the OTLP/JSON mapping); `http/protobuf` makes the same
document into the official `opentelemetry-proto` message and serializes it (a metrics request
through the message classes' constructors, `protomsg`; anything else, and a document `protomsg` does
not know, through `google.protobuf.json_format`), so no protobuf encoding is written by hand and both
encodings carry the same figures. Imported only by the detached exporter and the `export` command, never by a hook.

`post` answers with what the caller needs to decide: sent, or failed and whether to retry (the
collector is down, slow or overloaded: 429, 502, 503, 504, or a Retry-After) or not (anything else:
a wrong URL or a refused payload, which sending again will not fix), and the text of the failure.
One deadline (the configured timeout) bounds the whole request, not each read.
"""

from __future__ import annotations

from urllib.parse import urlsplit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

RETRYABLE = (429, 502, 503, 504)
MAX_REPLY = 1 << 16
USER_AGENT = "session-watcher-otlp"


def encode(doc: Mapping[str, Any], protocol: str, signal: str) -> tuple[bytes, str]:
    """(body, content type) of a metrics or logs request document (OTLP/JSON: `json.dumps`' text, a
    figure JSON cannot hold written null, as every JSON the CLI writes and a saved state have it)."""
    if protocol == "http/json":
        from session_watcher.core import fastjson

        try:
            return fastjson.dumps(doc).encode(), "application/json"
        except ValueError:  # NaN, an infinity: `finite` copies only on this rare path
            return fastjson.dumps(fastjson.finite(doc)).encode(), "application/json"
    from google.protobuf import json_format

    if signal == "metrics":
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

        from session_watcher.otlp.protomsg import metrics_request

        try:  # the same message ParseDict makes, built by the classes' constructors (protomsg)
            return metrics_request(doc).SerializeToString(), "application/x-protobuf"
        except (KeyError, ValueError, TypeError):
            pass
        msg: Any = ExportMetricsServiceRequest()
    else:
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

        msg = ExportLogsServiceRequest()
    json_format.ParseDict(dict(doc), msg)
    return msg.SerializeToString(), "application/x-protobuf"


class Outcome:
    """What one POST came to: `ok`, else `retry` (try later) and `why`; `wait` is a Retry-After."""

    __slots__ = ("ok", "retry", "status", "wait", "why")

    def __init__(self, ok: bool, retry: bool, why: str = "", status: int | None = None,
                 wait: float | None = None) -> None:
        self.ok, self.retry, self.why, self.status, self.wait = ok, retry, why, status, wait


def post(url: str, body: bytes, content_type: str, headers: Mapping[str, str], timeout: float) -> Outcome:
    """One POST of an encoded request, all of it (connect, send, the reply's headers and body) within
    `timeout` seconds: a collector that answers a byte at a time cannot hold the exporter longer. A
    socket timeout bounds each step by what is left; a watchdog shuts the socket at the deadline,
    which ends a read that keeps receiving (the per-read timeout alone never would)."""
    import http.client
    import threading
    import time

    deadline = time.monotonic() + timeout
    parts = urlsplit(url)
    conn_type = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        conn = conn_type(parts.hostname or "localhost", parts.port, timeout=timeout)
    except ValueError as exc:  # a port that is no number (settings.resolve refuses it first)
        return Outcome(False, False, f"{type(exc).__name__}: {exc}")
    watchdog = threading.Timer(timeout, _shut, (conn,))
    watchdog.daemon = True
    watchdog.start()
    try:
        conn.connect()
        _left(conn, deadline)
        conn.request("POST", path, body, {**headers, "Content-Type": content_type, "User-Agent": USER_AGENT})
        _left(conn, deadline)
        reply = conn.getresponse()
        _left(conn, deadline)
        reply.read(MAX_REPLY)
        _left(conn, deadline)
    except (OSError, http.client.HTTPException, ValueError) as exc:  # refused, unreachable, timed out, reset
        late = time.monotonic() >= deadline
        return Outcome(False, True, f"no answer within the {timeout:g} s deadline" if late
                       else f"{type(exc).__name__}: {exc}")
    finally:
        watchdog.cancel()
        conn.close()
    if 200 <= reply.status < 300:
        return Outcome(True, False, status=reply.status)
    wait = _retry_after(reply.getheader("Retry-After"))
    retry = reply.status in RETRYABLE or wait is not None
    return Outcome(False, retry, f"HTTP {reply.status} {reply.reason}", reply.status, wait)


def _left(conn: Any, deadline: float) -> None:
    """The socket's timeout set to what is left of the deadline; TimeoutError when nothing is."""
    import time

    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("deadline passed")
    if conn.sock is not None:
        conn.sock.settimeout(left)


def _shut(conn: Any) -> None:
    """The watchdog's end of a request: the socket shut both ways (a blocked read returns at once)."""
    import socket

    sock = conn.sock
    if sock is not None:
        try:
            socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the plain socket's call, TLS or not
        except OSError:
            pass


def _retry_after(value: str | None) -> float | None:
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and 0 <= seconds <= 86400 else None
