"""The detached deliverer: sends one desktop notification with desktop-notifier, then exits.

Started by `notifier.dispatch` (or `notify --test`) with a JSON object `{"title", "body", "urgency"}`
on stdin (or as the first argument). Exit codes: 0 delivered (the server accepted it), 1 not
delivered (no bus, no server, refused), 2 bad input, 3 no usable backend or permission denied
(macOS outside an app bundle, Windows registration failure), 124 the server did not answer within
SEND_TIMEOUT. A hard alarm ends the process after DEADLINE seconds whatever it is waiting on.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

SEND_TIMEOUT = 3.0
DEADLINE = 5
APP_NAME = "session-watcher"

DELIVERED, FAILED, BAD_INPUT, NO_BACKEND, TIMED_OUT = 0, 1, 2, 3, 124
RESULTS = {
    DELIVERED: "delivered",
    FAILED: "not delivered (no bus or no notification server)",
    BAD_INPUT: "bad input",
    NO_BACKEND: "no usable notification backend or permission denied",
    TIMED_OUT: f"the notification server did not answer within {SEND_TIMEOUT:g} s",
}


def read_payload(argv: list[str]) -> dict[str, Any] | None:
    try:
        raw = argv[0] if argv else sys.stdin.read()
        data = json.loads(raw)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("title"), str):
        return None
    if not isinstance(data.get("body"), str):
        return None
    return data


def ensure_bus_address() -> None:
    """dbus-fast does not look for the systemd user bus: point it there when the variable is unset."""
    if os.environ.get("DBUS_SESSION_BUS_ADDRESS") or not hasattr(os, "getuid"):
        return
    from notifier.busprobe import runtime_bus_path

    path = runtime_bus_path(os.environ)
    if os.path.exists(path):
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={path}"


def silence_library_logs() -> None:
    """desktop-notifier logs failures as warnings with tracebacks; they must not reach stderr."""
    import logging

    log = logging.getLogger("desktop_notifier")
    log.addHandler(logging.NullHandler())
    log.propagate = False


def send(title: str, body: str, urgency: str) -> int:
    import asyncio

    from desktop_notifier import DesktopNotifier, Urgency

    from notifier.message import markup_escape

    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        body = markup_escape(body)  # the freedesktop body is markup; the summary is plain text
    try:
        notifier = DesktopNotifier(app_name=APP_NAME)
    except Exception:  # the WinRT backend raises from its constructor
        return NO_BACKEND
    if type(notifier._backend).__name__ == "DummyNotificationCenter":
        return NO_BACKEND
    delivered: list[bool] = []
    level = Urgency.Critical if urgency == "critical" else Urgency.Normal

    async def go() -> int:
        if not await notifier.request_authorisation():
            return NO_BACKEND
        await notifier.send(title, body, urgency=level, on_dispatched=lambda: delivered.append(True))
        return DELIVERED if delivered else FAILED

    async def bounded() -> int:
        try:
            return await asyncio.wait_for(go(), SEND_TIMEOUT)
        except TimeoutError:
            return TIMED_OUT

    return asyncio.run(bounded())


def main(argv: list[str] | None = None) -> int:
    if hasattr(os, "getuid"):
        import signal

        signal.alarm(DEADLINE)  # default action: the process ends, even if stuck in C code
    else:  # pragma: no cover - Windows
        import threading

        timer = threading.Timer(DEADLINE, os._exit, args=(TIMED_OUT,))
        timer.daemon = True
        timer.start()
    data = read_payload(sys.argv[1:] if argv is None else argv)
    if data is None:
        return BAD_INPUT
    silence_library_logs()
    ensure_bus_address()
    try:
        return send(data["title"], data["body"], str(data.get("urgency", "normal")))
    except Exception:
        return FAILED


if __name__ == "__main__":
    raise SystemExit(main())
