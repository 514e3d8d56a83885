"""The detached deliverer: sends one desktop notification, then exits.

Started by `notifier.dispatch` (or `notify --test`) with a JSON object on stdin (or as the first
argument): `{"title", "body", "tag", "slot"}`. `tag` is the session id; `slot` is a small file of
that session, kept next to its state, holding the notification server's id of the session's last
notification. Every notification goes out with normal urgency (critical ones stay on screen until
dismissed on most servers), the app name "session-watcher" and our icon, and replaces the session's
previous one, so a session never has more than one of our notifications on screen.

* freedesktop (Linux, BSD): desktop-notifier 6.2 always sends `replaces_id` 0 (its
  backends/dbus.py) and does not return the server's id, so the child calls `Notify` itself through
  dbus-fast (the D-Bus client desktop-notifier uses): `replaces_id` is the id in the slot, kept only
  while the bus (`GetId`) and the server's connection (`GetNameOwner`) are the ones that issued it.
  A restarted server or a new login counts ids from 1 again, and an old id could then name another
  program's notification. The slot is locked (flock) while it is read, sent and rewritten, so two
  deliverers of one session replace each other in turn.
* macOS and Windows: desktop-notifier, with an identifier fixed per session (`session-watcher.<tag>`):
  a new request with the identifier of one on screen replaces it there (UNNotificationRequest
  identifier; a toast's tag). Not verified here: no such machine.

Exit codes: 0 delivered (the server accepted it), 1 not delivered (no bus, no server, refused), 2
bad input, 3 no usable backend or permission denied (macOS outside an app bundle, Windows
registration failure), 124 the server did not answer within SEND_TIMEOUT. A hard alarm ends the
process after DEADLINE seconds whatever it is waiting on.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from session_watcher.notifier import APP_NAME, icon_path

SEND_TIMEOUT = 3.0
DEADLINE = 5

DELIVERED, FAILED, BAD_INPUT, NO_BACKEND, TIMED_OUT = 0, 1, 2, 3, 124
RESULTS = {
    DELIVERED: "delivered",
    FAILED: "not delivered (no bus or no notification server)",
    BAD_INPUT: "bad input",
    NO_BACKEND: "no usable notification backend or permission denied",
    TIMED_OUT: f"the notification server did not answer within {SEND_TIMEOUT:g} s",
}

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
URGENCY_NORMAL = 1
SLOT_MAX = 4096
# servers that reject the a{sv} hints (an old spec's a{ss}) answer with one of these
SIGNATURE_ERRORS = ("org.freedesktop.DBus.Error.InvalidArgs", "org.freedesktop.DBus.Error.UnknownMethod")


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
    for key in ("tag", "slot"):
        if data.get(key) is not None and not isinstance(data[key], str):
            return None
    return data


def ensure_bus_address() -> None:
    """dbus-fast does not look for the systemd user bus: point it there when the variable is unset."""
    if os.environ.get("DBUS_SESSION_BUS_ADDRESS") or not hasattr(os, "getuid"):
        return
    from session_watcher.notifier.busprobe import runtime_bus_path

    path = runtime_bus_path(os.environ)
    if os.path.exists(path):
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={path}"


def silence_library_logs() -> None:
    """desktop-notifier logs failures as warnings with tracebacks; they must not reach stderr."""
    import logging

    for name in ("desktop_notifier", "dbus_fast"):
        log = logging.getLogger(name)
        log.addHandler(logging.NullHandler())
        log.propagate = False


def icon_uri() -> str:
    """Our icon as a file URI, or "" (the server's default) when the file is missing."""
    path = icon_path()
    if not os.path.isfile(path):
        return ""
    from pathlib import Path

    return Path(path).as_uri()


# --- the slot: the server's id of the session's last notification ----------------------------------


def open_slot(path: str | None) -> int | None:
    """The slot file, created 0600 and locked for this deliverer; None when there is none to use."""
    if not path:
        return None
    from session_watcher.base.paths import open_file

    try:  # a regular file only: a FIFO there would hold the deliverer to its deadline
        fd = open_file(path, os.O_RDWR | os.O_CREAT, 0o600, follow=False)
    except OSError:
        return None
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX)  # another deliverer of this session: wait for it (DEADLINE bounds it)
    except (ImportError, OSError):
        pass
    return fd


def read_slot(fd: int | None, server: list[str] | None) -> int:
    """The id to replace: the slot's, when the same server on the same bus issued it; else 0."""
    if fd is None or server is None:
        return 0
    try:
        doc = json.loads(os.pread(fd, SLOT_MAX, 0) or b"null")
    except (OSError, ValueError):
        return 0
    if not isinstance(doc, dict) or doc.get("server") != server:
        return 0
    nid = doc.get("id")
    return nid if isinstance(nid, int) and not isinstance(nid, bool) and 0 < nid < 1 << 32 else 0


def write_slot(fd: int | None, server: list[str] | None, nid: int) -> None:
    if fd is None or server is None:
        return
    data = json.dumps({"server": server, "id": nid}).encode("ascii")
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
    except OSError:
        pass


# --- freedesktop ---------------------------------------------------------------------------------


async def _server(bus: Any) -> list[str] | None:
    """[bus id, the server's unique connection name], or None when no server owns the name yet."""
    from dbus_fast import Message, MessageType

    replies = []
    for member, sig, body in (("GetId", "", []), ("GetNameOwner", "s", [NAME])):
        reply = await bus.call(
            Message(
                destination="org.freedesktop.DBus",
                path="/org/freedesktop/DBus",
                interface="org.freedesktop.DBus",
                member=member,
                signature=sig,
                body=body,
            )
        )
        if reply.message_type != MessageType.METHOD_RETURN:
            return None
        replies.append(str(reply.body[0]))
    return replies


def notify_message(title: str, body: str, replaces: int, icon: str, plain_hints: bool = False) -> Any:
    """The freedesktop `Notify` call: no actions, normal urgency, the server's default timeout."""
    from dbus_fast import Message, Variant

    urgency = str(URGENCY_NORMAL) if plain_hints else Variant("y", URGENCY_NORMAL)
    return Message(
        destination=NAME,
        path=PATH,
        interface=NAME,
        member="Notify",
        signature="susssasa{ss}i" if plain_hints else "susssasa{sv}i",
        body=[APP_NAME, replaces, icon, title, body, [], {"urgency": urgency}, -1],
    )


async def notify_freedesktop(title: str, body: str, slot: str | None) -> int:
    from dbus_fast import MessageType
    from dbus_fast.aio import MessageBus

    from session_watcher.notifier.message import markup_escape

    body = markup_escape(body)  # the freedesktop body is markup; the summary is plain text
    icon = icon_uri()
    fd = open_slot(slot)
    try:
        bus = await MessageBus().connect()
        try:
            server = await _server(bus)
            replaces = read_slot(fd, server)
            reply = await bus.call(notify_message(title, body, replaces, icon))
            if reply.message_type == MessageType.ERROR and reply.error_name in SIGNATURE_ERRORS:
                reply = await bus.call(notify_message(title, body, replaces, icon, plain_hints=True))
            if reply.message_type != MessageType.METHOD_RETURN:
                return FAILED
            nid = reply.body[0]
            write_slot(fd, server or await _server(bus), int(nid))
            return DELIVERED
        finally:
            bus.disconnect()
    finally:
        if fd is not None:
            os.close(fd)


# --- macOS, Windows ------------------------------------------------------------------------------


async def notify_library(title: str, body: str, tag: str | None) -> int:
    import uuid
    from pathlib import Path

    from desktop_notifier import DesktopNotifier, Icon, Notification, Urgency

    icon = icon_path()
    try:
        notifier = DesktopNotifier(app_name=APP_NAME, app_icon=Icon(path=Path(icon)) if os.path.isfile(icon) else None)
    except Exception:  # the WinRT backend raises from its constructor
        return NO_BACKEND
    if type(notifier._backend).__name__ == "DummyNotificationCenter":
        return NO_BACKEND
    if not await notifier.request_authorisation():
        return NO_BACKEND
    delivered: list[bool] = []
    # the same identifier each time: the session's new notification replaces its last
    ident = f"{APP_NAME}.{tag}" if tag else uuid.uuid4().hex
    note = Notification(
        title, body, urgency=Urgency.Normal, on_dispatched=lambda: delivered.append(True), identifier=ident
    )
    await notifier.send_notification(note)
    return DELIVERED if delivered else FAILED


def freedesktop() -> bool:
    return sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd"))


def send(title: str, body: str, tag: str | None = None, slot: str | None = None) -> int:
    import asyncio

    if freedesktop():
        try:
            import dbus_fast  # noqa: F401 - installed with desktop-notifier on Linux only
        except ImportError:
            return NO_BACKEND
        go = notify_freedesktop(title, body, slot)
    else:
        go = notify_library(title, body, tag)

    async def bounded() -> int:
        try:
            return await asyncio.wait_for(go, SEND_TIMEOUT)
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
        return send(data["title"], data["body"], data.get("tag"), data.get("slot"))
    except Exception:
        return FAILED


if __name__ == "__main__":
    raise SystemExit(main())
