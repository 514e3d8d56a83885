"""Deliver alerts to the user: desktop notification, terminal escape, or Claude Code's `systemMessage`.

`dispatch` runs in the hook process, after the state is saved, only when there are alerts. It imports
nothing heavy (no asyncio, subprocess, typing or desktop-notifier) and never waits: a desktop
notification is handed to a detached child (`notifier.deliver`) in its own session, with stdio on
/dev/null and the message on a private pipe, which delivers it under a hard deadline and exits. The
child is told the session and its slot file, so the session's new notification replaces its last
(`notifier.deliver`). How often a session may alert is decided earlier, under the session lock
(`notifier.throttle`).

When the desktop cannot be reached the configured fallback channel carries the alert instead:

* Linux and other Unix: a session bus is needed (`DBUS_SESSION_BUS_ADDRESS`, or the user bus socket
  `$XDG_RUNTIME_DIR/bus` / `/run/user/<uid>/bus` when not under SSH), and on it a notification server
  that runs, or that can be started on a display. `busprobe` asks the bus within 0.25 s.
* macOS: only a framework build of Python can post notifications (others get desktop-notifier's
  no-op backend), and not over SSH; otherwise the fallback is used.
* Windows: the desktop is assumed reachable except over SSH.

Nothing here ever goes into the model's context: the output keys are `systemMessage` (shown to the
user) and `terminalSequence` (written to the user's terminal by Claude Code).
"""

from __future__ import annotations

import os
import sys

from session_watcher.core import fastjson  # `import json` would import re and enum on the alerting call

# `message` is imported where a message is made: a hook run that only weighs an alert imports
# `notifier.throttle`, and with it this package

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hot path)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from session_watcher.core.shapes import NotifyConfig

APP_NAME = "session-watcher"
CHANNELS = ("desktop", "terminal", "message")
DEFAULT_CHANNELS = ("desktop",)
DEFAULT_FALLBACK = "message"
PROBE_TIMEOUT = 0.25
PAYLOAD_MAX = 16384  # well under a pipe's buffer, so writing it never blocks

# The child's command line carries only the package root, never session text.
_BOOT = (
    "import sys;sys.path.insert(0,sys.argv[1]);from session_watcher.notifier.deliver import main;"
    "raise SystemExit(main(sys.argv[2:]))"
)


def package_root() -> str:
    """The folder holding the `session_watcher` package (this file is session_watcher/notifier/__init__.py)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def child_argv(*extra: str) -> list[str]:
    """The deliverer's command line (isolated mode; this package's own copy of the code)."""
    return [sys.executable, "-I", "-c", _BOOT, package_root(), *extra]


def icon_path() -> str:
    return os.path.join(package_root(), "session_watcher", "data", "icon.png")


def slot_file(session_id: object) -> str | None:
    """Where the deliverer keeps the server's id of the session's last notification (next to its state)."""
    from session_watcher.state.store import valid_session_id

    if not valid_session_id(session_id):
        return None
    from session_watcher.base import paths

    return os.path.join(paths.sessions_dir(), f"{session_id}.notify")


def _settings(notify_cfg: NotifyConfig | None) -> tuple[list[str], str]:
    raw: object = notify_cfg.get("channels", DEFAULT_CHANNELS) if notify_cfg else DEFAULT_CHANNELS
    channels = [c for c in raw if c in CHANNELS] if isinstance(raw, list | tuple) else list(DEFAULT_CHANNELS)
    fallback: object = notify_cfg.get("fallback", DEFAULT_FALLBACK) if notify_cfg else DEFAULT_FALLBACK
    if fallback not in (*CHANNELS, "none"):
        fallback = DEFAULT_FALLBACK
    return channels, str(fallback)


def desktop_reachable(env: Mapping[str, str]) -> tuple[bool, str | None]:
    """(can a desktop notification reach the user, the bus address to hand to the child)."""
    ok, address, _slow = _desktop(env)
    return ok, address


def _desktop(env: Mapping[str, str]) -> tuple[bool, str | None, bool]:
    """`desktop_reachable`, and whether the bus was too slow to tell within PROBE_TIMEOUT (a loaded
    machine): then the deliverer tries, with its own deadline, and the caller uses the fallback too."""
    if sys.platform == "darwin":
        return (not env.get("SSH_CONNECTION") and bool(getattr(sys, "_framework", ""))), None, False
    if sys.platform == "win32":
        return not env.get("SSH_CONNECTION"), None, False
    from session_watcher.notifier import busprobe

    try:
        status = busprobe.probe(env, timeout=PROBE_TIMEOUT)
    except Exception:  # whatever the bus or its address does, the alert takes the fallback
        return False, None, False
    slow = status.error == busprobe.TOO_SLOW
    return status.usable(env) or slow, status.address, slow


def payload(title: str, body: str, tag: str | None = None, slot: str | None = None) -> bytes:
    """The deliverer's input: the text, and the session (`tag`) and its slot file, so that the
    session's next notification replaces this one."""
    doc: dict[str, object] = {"title": title, "body": body, "tag": tag, "slot": slot}
    data = fastjson.dumps(doc).encode("ascii")
    if len(data) > PAYLOAD_MAX:
        data = fastjson.dumps({**doc, "title": title[:200], "body": body[:2000]}).encode("ascii")
    return data


def spawn_detached(data: bytes, env: Mapping[str, str]) -> int | None:
    """Start the deliverer in its own session with `data` on its stdin; its pid, or None on failure."""
    if not sys.executable:
        return None
    child_env = dict(env)
    if sys.platform == "win32":  # pragma: no cover - not exercised on Linux
        import subprocess

        exe = os.path.join(os.path.dirname(sys.executable), "pythonw.exe")
        argv = child_argv()
        if os.path.exists(exe):
            argv[0] = exe
        flags = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=child_env,
                creationflags=flags,
                close_fds=True,
            )
            assert proc.stdin is not None
            proc.stdin.write(data)
            proc.stdin.close()
        except OSError:
            return None
        return proc.pid
    from session_watcher.state.spawn import detached

    return detached(child_argv(), child_env, data)


def terminal_sequence(title: str, body: str, env: Mapping[str, str]) -> str:
    """OSC 9 for terminals known to show it (iTerm2, kitty), OSC 777 for the others."""
    from session_watcher.notifier import message

    kitty = env.get("TERM") == "xterm-kitty" or bool(env.get("KITTY_WINDOW_ID"))
    if env.get("TERM_PROGRAM") == "iTerm.app" or kitty:
        return message.osc9(title, body)
    return message.osc777(title, body)


def system_message(title: str, body: str) -> str:
    from session_watcher.notifier import message

    return message.plain_clean(f"session-watcher: {title}\n{body}")


def dispatch(
    alerts: Sequence[Mapping[str, object]],
    notify_cfg: NotifyConfig | None,
    env: Mapping[str, str] | None = None,
    agent: str | None = None,
) -> dict[str, str] | None:
    """Deliver the alerts through the configured channels; the hook's stdout object, or None.
    `agent`: the name of the session's agent, whose way to a fresh session the restart line names.
    `send`, then `printed` of the one alert shown (`message.pick`)."""
    if not alerts:
        return None
    from session_watcher.notifier import message

    channels = send(alerts, notify_cfg, env, agent)
    return printed(message.pick(alerts), channels, env, agent)


def _words(alert: Mapping[str, object], env: Mapping[str, str], agent: str | None) -> tuple[str, str]:
    """(title, body) of `alert` in the words of the route and the agent where this process runs (a
    Codex hook under `codex exec` or in the TUI: `Agent.fresh_start`, `Agent.shell_escape`)."""
    from session_watcher.agents import agent_named
    from session_watcher.base import route
    from session_watcher.notifier import message

    known = agent_named(agent)
    then = known.fresh_start() if known is not None else None
    escape = known.shell_escape() if known is not None else None
    return message.compose(alert, route.restart_path(route.of_hook(env), then, escape),
                           route.cli_command(env, hook=True), then, escape)


def send(
    alerts: Sequence[Mapping[str, object]],
    notify_cfg: NotifyConfig | None,
    env: Mapping[str, str] | None = None,
    agent: str | None = None,
) -> list[str]:
    """Start the desktop notification of the alerts (the one `message.pick` chooses) where the
    channels name it; the channels left to print (`terminal`, `message`: a synchronous hook's output,
    made by `printed` when it is shown), the fallback among them where the desktop cannot be reached."""
    if not alerts:
        return []
    from session_watcher.notifier import message

    env = os.environ if env is None else env
    channels, fallback = _settings(notify_cfg)
    if "desktop" in channels:
        alert = message.pick(alerts)
        title, body = _words(alert, env, agent)
        ok, address, slow = _desktop(env)
        if ok:
            child_env = dict(env)
            if address and not child_env.get("DBUS_SESSION_BUS_ADDRESS"):
                child_env["DBUS_SESSION_BUS_ADDRESS"] = address
            session = alert.get("sessionId")
            tag = session if isinstance(session, str) else None
            ok = spawn_detached(payload(title, body, tag, slot_file(session)), child_env) is not None
        if (not ok or slow) and fallback not in ("none", "desktop") and fallback not in channels:
            channels.append(fallback)
    return [c for c in channels if c in ("terminal", "message")]


def printing(notify_cfg: NotifyConfig | None, env: Mapping[str, str] | None = None) -> list[str]:
    """The channels `send` would leave to print, sending nothing: `terminal`, `message`, and the
    fallback among them where the desktop cannot be reached (a cold return told at its prompt with
    the guard off: hooks.prompt.unguarded)."""
    env = os.environ if env is None else env
    channels, fallback = _settings(notify_cfg)
    if "desktop" in channels:
        ok, _address, slow = _desktop(env)
        if (not ok or slow) and fallback not in ("none", "desktop") and fallback not in channels:
            channels.append(fallback)
    return [c for c in channels if c in ("terminal", "message")]


def printed(
    alert: Mapping[str, object], channels: Sequence[str], env: Mapping[str, str] | None = None,
    agent: str | None = None,
) -> dict[str, str] | None:
    """What a synchronous hook prints of `alert` for these channels (`send`'s), in the words of
    where it runs now: `terminalSequence`, `systemMessage`; None for none."""
    if not any(c in ("terminal", "message") for c in channels):
        return None
    env = os.environ if env is None else env
    title, body = _words(alert, env, agent)
    out: dict[str, str] = {}
    if "terminal" in channels:
        out["terminalSequence"] = terminal_sequence(title, body, env)
    if "message" in channels:
        out["systemMessage"] = system_message(title, body)
    return out or None
