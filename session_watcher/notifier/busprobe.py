"""Is there a notification server on the session bus? A tiny D-Bus client for the hook's hot path.

The hook must decide, without waiting and without importing asyncio or dbus-fast, whether a desktop
notification can reach the user. This module speaks just enough of the D-Bus wire protocol (SASL
EXTERNAL, `Hello`, three method calls on the bus daemon or the server) over a unix socket with a
hard deadline. Only `unix:path=` and `unix:abstract=` addresses are understood; anything else is
reported as "unknown" and the caller lets the deliverer try.
"""

from __future__ import annotations

import os
import sys

from session_watcher.core.errors import ProbeError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hot path)
if TYPE_CHECKING:
    from collections.abc import Mapping

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
_DBUS = ("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus")


def runtime_bus_path(env: Mapping[str, str]) -> str:
    """The systemd user bus socket: `$XDG_RUNTIME_DIR/bus`, else `/run/user/<uid>/bus`."""
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime):
        return os.path.join(runtime, "bus")
    getuid = getattr(os, "getuid", None)
    return f"/run/user/{getuid() if getuid else 0}/bus"


def bus_address(env: Mapping[str, str]) -> str | None:
    """The session bus address to use: the variable, else the user bus socket when it exists.

    Over SSH the user bus socket belongs to a desktop the user is not looking at, so it is used only
    when no `SSH_CONNECTION` is set.
    """
    address = env.get("DBUS_SESSION_BUS_ADDRESS", "")
    if address:
        return address
    if env.get("SSH_CONNECTION"):
        return None
    path = runtime_bus_path(env)
    try:
        import stat

        if stat.S_ISSOCK(os.stat(path).st_mode):
            return f"unix:path={path}"
    except OSError:
        pass
    return None


def _unescape(value: str) -> str:
    """A D-Bus address value with its `%XX` escapes undone; ProbeError for a malformed one (the
    caller then treats the bus as unreachable and the alert takes the fallback channel)."""
    out = bytearray()
    i = 0
    raw = value.encode("utf-8", "surrogateescape")
    while i < len(raw):
        if raw[i] == 0x25:  # '%'
            pair = raw[i + 1 : i + 3]
            if len(pair) != 2 or pair.strip(b"0123456789abcdefABCDEF"):
                raise ProbeError(f"malformed escape in the bus address: {value[:80]!r}")
            out.append(int(pair, 16))
            i += 3
        else:
            out.append(raw[i])
            i += 1
    return out.decode("utf-8", "replace")


def socket_targets(address: str) -> list[str]:
    """The unix socket paths in a D-Bus address (abstract ones start with a NUL byte)."""
    targets: list[str] = []
    for part in address.split(";"):
        transport, _, params = part.partition(":")
        if transport != "unix":
            continue
        kv = dict(p.split("=", 1) for p in params.split(",") if "=" in p)
        if "path" in kv:
            targets.append(_unescape(kv["path"]))
        elif "abstract" in kv:
            targets.append("\0" + _unescape(kv["abstract"]))
    return targets


# --- marshalling (little endian) ---------------------------------------------------------------


def _pad(buf: bytearray, align: int) -> None:
    buf.extend(b"\0" * (-len(buf) % align))


def _string(buf: bytearray, text: str) -> None:
    _pad(buf, 4)
    raw = text.encode("utf-8")
    buf.extend(len(raw).to_bytes(4, "little") + raw + b"\0")


def _signature(buf: bytearray, sig: str) -> None:
    raw = sig.encode("ascii")
    buf.extend(bytes([len(raw)]) + raw + b"\0")


def method_call(serial: int, dest: str, path: str, iface: str, member: str, *, arg: str | None = None) -> bytes:
    """One METHOD_CALL message, with an optional single string argument."""
    body = bytearray()
    if arg is not None:
        _string(body, arg)
    fields = bytearray()
    for code, sig, value in (
        (1, "o", path),
        (2, "s", iface),
        (3, "s", member),
        (6, "s", dest),
        *([(8, "g", "s")] if arg is not None else []),
    ):
        _pad(fields, 8)
        fields.append(code)
        _signature(fields, sig)
        if sig == "g":
            _signature(fields, value)
        else:
            _string(fields, value)
    head = bytearray(b"l\x01\x00\x01")
    head += len(body).to_bytes(4, "little") + serial.to_bytes(4, "little")
    head += len(fields).to_bytes(4, "little") + fields
    _pad(head, 8)
    return bytes(head + body)


def _u32(data: bytes, pos: int, little: bool) -> int:
    return int.from_bytes(data[pos : pos + 4], "little" if little else "big")


def read_strings(body: bytes, little: bool, count: int) -> list[str]:
    """`count` consecutive strings from the start of a body."""
    out: list[str] = []
    pos = 0
    for _ in range(count):
        pos += -pos % 4
        n = _u32(body, pos, little)
        out.append(body[pos + 4 : pos + 4 + n].decode("utf-8", "replace"))
        pos += 4 + n + 1
    return out


def read_string_array(body: bytes, little: bool) -> list[str]:
    size = _u32(body, 0, little)
    out: list[str] = []
    pos = 4
    while pos < 4 + size:
        pos += -pos % 4
        n = _u32(body, pos, little)
        out.append(body[pos + 4 : pos + 4 + n].decode("utf-8", "replace"))
        pos += 4 + n + 1
    return out


# the bus took the connection but did not answer within the probe's deadline: busy (a loaded machine),
# not absent (`BusStatus.error`; the hook then lets the deliverer try, and uses the fallback too)
TOO_SLOW = "the bus did not answer in time"


class Connection:
    """A blocking connection with one deadline for everything done on it."""

    def __init__(self, address: str, timeout: float) -> None:
        import _socket
        import time

        self._clock = time.monotonic
        self._deadline = self._clock() + timeout
        targets = socket_targets(address)
        if not targets:
            raise ProbeError(f"unsupported bus address {address!r}")
        last: OSError | None = None
        for target in targets:
            sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
            try:
                sock.settimeout(timeout)
                sock.connect(target)
            except OSError as exc:
                sock.close()
                last = exc
                continue
            self._sock = sock
            break
        else:
            raise ProbeError(f"cannot connect to the bus: {last}")
        self._buf = b""
        self._serial = 0
        try:
            uid = str(os.getuid()).encode().hex() if hasattr(os, "getuid") else ""
            self._send(b"\0AUTH EXTERNAL " + uid.encode() + b"\r\n")
            line = self._readline()
            if not line.startswith(b"OK "):
                raise ProbeError(f"bus refused authentication: {line!r}")
            self._send(b"BEGIN\r\n")
            self.call(*_DBUS[:2], _DBUS[2], "Hello")
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self._sock.close()

    def _left(self) -> float:
        left = self._deadline - self._clock()
        if left <= 0:
            raise ProbeError(TOO_SLOW)
        return left

    def _send(self, data: bytes) -> None:
        self._sock.settimeout(self._left())
        self._sock.sendall(data)

    def _fill(self) -> None:
        self._sock.settimeout(self._left())
        try:
            chunk = self._sock.recv(65536)
        except TimeoutError:
            raise ProbeError(TOO_SLOW) from None
        except OSError as exc:
            raise ProbeError(f"bus read failed: {exc}") from None
        if not chunk:
            raise ProbeError("the bus closed the connection")
        self._buf += chunk

    def _readline(self) -> bytes:
        while b"\r\n" not in self._buf:
            self._fill()
        line, _, self._buf = self._buf.partition(b"\r\n")
        return line

    def _message(self) -> tuple[int, int, str, bool, bytes]:
        """(type, reply_serial, error_name, little_endian, body) of the next message."""
        while len(self._buf) < 16:
            self._fill()
        little = self._buf[0:1] == b"l"
        body_len = _u32(self._buf, 4, little)
        fields_len = _u32(self._buf, 12, little)
        head_len = 16 + fields_len + (-(16 + fields_len) % 8)
        while len(self._buf) < head_len + body_len:
            self._fill()
        msg, self._buf = self._buf[: head_len + body_len], self._buf[head_len + body_len :]
        reply_serial, error = 0, ""
        pos = 16
        while pos < 16 + fields_len:
            pos += -pos % 8
            code = msg[pos]
            sig_len = msg[pos + 1]
            sig = msg[pos + 2 : pos + 2 + sig_len]
            pos += 3 + sig_len
            if sig == b"u":
                pos += -pos % 4
                if code == 5:
                    reply_serial = _u32(msg, pos, little)
                pos += 4
            elif sig in (b"s", b"o"):
                pos += -pos % 4
                n = _u32(msg, pos, little)
                if code == 4:
                    error = msg[pos + 4 : pos + 4 + n].decode("utf-8", "replace")
                pos += 4 + n + 1
            elif sig == b"g":
                pos += 1 + msg[pos] + 1
            else:
                raise ProbeError(f"unexpected header field type {sig!r}")
        return msg[1], reply_serial, error, little, msg[head_len:]

    def call(self, dest: str, path: str, iface: str, member: str, *, arg: str | None = None) -> tuple[bool, bytes]:
        """Call a method and wait for its reply; returns (little_endian, body)."""
        self._serial += 1
        serial = self._serial
        self._send(method_call(serial, dest, path, iface, member, arg=arg))
        while True:
            kind, reply_to, error, little, body = self._message()
            if reply_to != serial:
                continue  # signals such as NameAcquired
            if kind == 3:
                raise ProbeError(error or "error reply")
            return little, body


class BusStatus:
    """What the probe found."""

    def __init__(self) -> None:
        self.address: str | None = None
        self.reachable = False
        self.owned = False
        self.activatable = False
        self.server: list[str] | None = None
        self.error: str | None = None

    def usable(self, env: Mapping[str, str]) -> bool:
        """A notification can be delivered: the server runs, or can be started on a display."""
        if self.owned:
            return True
        return self.activatable and bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def probe(env: Mapping[str, str] | None = None, timeout: float = 0.25, server_info: bool = False) -> BusStatus:
    """Look for a notification server on the session bus, within `timeout` seconds overall."""
    env = os.environ if env is None else env
    status = BusStatus()
    status.address = bus_address(env)
    if status.address is None:
        status.error = "no session bus"
        return status
    try:
        conn = Connection(status.address, timeout)
    except (ProbeError, OSError, ValueError) as exc:  # ValueError: an address the socket refuses
        status.error = str(exc)
        return status
    try:
        status.reachable = True
        little, body = conn.call(*_DBUS, "NameHasOwner", arg=NAME)
        status.owned = _u32(body, 0, little) == 1
        if not status.owned:
            little, body = conn.call(*_DBUS, "ListActivatableNames")
            status.activatable = NAME in read_string_array(body, little)
        elif server_info:
            little, body = conn.call(NAME, PATH, NAME, "GetServerInformation")
            status.server = read_strings(body, little, 4)
    except (ProbeError, OSError, IndexError, ValueError) as exc:
        status.error = str(exc)
    finally:
        conn.close()
    return status


if __name__ == "__main__":  # pragma: no cover - a debugging aid
    s = probe(server_info=True)
    sys.stdout.write(f"{s.address} reachable={s.reachable} owned={s.owned} server={s.server} {s.error}\n")
