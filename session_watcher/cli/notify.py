"""`session-watcher notify [--test] [--channel C]` (`add_parser`) and the notifier's lines for `doctor`."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

from session_watcher.notifier import busprobe, child_argv, deliver, desktop_reachable, payload, system_message
from session_watcher.notifier import terminal_sequence as make_terminal_sequence
from session_watcher.notifier.message import compose

if TYPE_CHECKING:
    import argparse

SAMPLE_ALERT: dict[str, Any] = {
    "kind": "gate",
    "call": 42,
    "sessionId": "sample",
    "lamp": "amber",
    "x": 3.4,
    "xSweet": 2.8,
    "br": 0.14,
    "B": 48000,
    "bDefault": 45000,
    "L": 153000,
    "bills": 1,
    "backstopN": 4,
    "reminder": 0,
    "model": None,
    "project": None,
    "system": 18000,
    "files": 27000,
    "saving": 612000.0,
    "savingUsd": 0.31,
    "cycle": 6.0,  # the horizon a gate's saving is over: the test reads as a real alert does
}
CHILD_TIMEOUT = deliver.DEADLINE + 3
TEST_TAG = "notify-test"


def run_deliverer(
    title: str, body: str, env: dict[str, str] | None = None, tag: str | None = None, slot: str | None = None
) -> int:
    """Run the deliverer synchronously (the same child the hook detaches); its exit code."""
    try:
        proc = subprocess.run(
            child_argv(),
            input=payload(title, body, tag, slot),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=dict(os.environ if env is None else env),
            timeout=CHILD_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return deliver.TIMED_OUT
    return proc.returncode


def _result_text(rc: int) -> str:
    if rc < 0:
        return f"ended by signal {-rc} (hard deadline)"
    return deliver.RESULTS.get(rc, f"exit code {rc}")


def _test_slot() -> tuple[str, str | None]:
    """The sample's own session: a second `notify --test` replaces the first, like a reminder does."""
    from session_watcher.base import paths

    try:
        paths.ensure_private_dir(paths.state_dir())
    except OSError:
        return TEST_TAG, None
    return TEST_TAG, os.path.join(paths.state_dir(), f"{TEST_TAG}.notify")


def _latest_agent() -> str | None:
    """The agent of the session commands take by default (`sessions.find`'s), None for none: the
    sample alert is worded as that session's hooks word theirs (a Codex user's restart is Codex's)."""
    from session_watcher.agents import agent_for_head
    from session_watcher.core.errors import WatcherError
    from session_watcher.sessions.naming import find

    try:
        found = find(None)
        if found.transcript is None:
            return None
        with open(found.transcript, "rb") as fh:
            return agent_for_head(fh.read(4096)).name
    except (WatcherError, OSError):
        return None


def try_channel(channel: str, out: Any, env: dict[str, str]) -> bool:
    from session_watcher.agents import agent_named
    from session_watcher.base import route

    agent = agent_named(_latest_agent())
    then = agent.fresh_start() if agent is not None else None
    escape = agent.shell_escape() if agent is not None else None
    title, body = compose(SAMPLE_ALERT, route.restart_path(route.current(env), then, escape), then=then,
                          escape=escape)
    title = "Test: " + title
    if channel == "desktop":
        ok, address = desktop_reachable(env)
        if not ok:
            out.write(f"desktop: not reachable ({_desktop_reason(env)})\n")
            return False
        child_env = dict(env)
        if address and not child_env.get("DBUS_SESSION_BUS_ADDRESS"):
            child_env["DBUS_SESSION_BUS_ADDRESS"] = address
        rc = run_deliverer(title, body, child_env, *_test_slot())
        out.write(f"desktop: {_result_text(rc)}\n")
        return rc == deliver.DELIVERED
    if channel == "terminal":
        seq = make_terminal_sequence(title, body, env)
        try:
            fd = os.open("/dev/tty", os.O_WRONLY | os.O_NOCTTY)
        except OSError:
            out.write("terminal: no terminal to write to (run it from your terminal)\n")
            return False
        try:
            os.write(fd, seq.encode("utf-8"))
        finally:
            os.close(fd)
        out.write("terminal: escape sequence written; whether it shows depends on your terminal\n")
        return True
    # message: shown by Claude Code or Codex when a hook returns it; nothing to send from here
    text = system_message(title, body).replace("\n", "\n    ")
    out.write(f"message: ok, inside Claude Code or Codex the hook shows:\n    {text}\n")
    return True


def _desktop_reason(env: dict[str, str]) -> str:
    if sys.platform == "darwin":
        return "over SSH" if env.get("SSH_CONNECTION") else "this Python is not a framework build"
    if sys.platform == "win32":
        return "over SSH"
    status = busprobe.probe(env, timeout=1.0)
    if status.address is None:
        return "no session bus" + (" (SSH session)" if env.get("SSH_CONNECTION") else "")
    if not status.reachable:
        return f"bus {status.address} unreachable: {status.error}"
    if status.activatable:
        return "a notification server is installed but there is no display to start it on"
    return "no notification server on the session bus"


def add_parser(sub: Any) -> None:
    """`notify` in the CLI's parser tree."""
    from session_watcher.cli.messages import LEFT_OUT_HELP

    s = sub.add_parser("notify", description="Send a sample alert through each notify channel (the config an "
                                             "alert is sent with: this folder's). " + LEFT_OUT_HELP)
    # the one thing `notify` does: the bare command sends the sample, as `--test` does
    s.add_argument("--test", action="store_true", help="send a sample alert (what `notify` alone does)")
    s.add_argument("--channel", choices=["desktop", "terminal", "message"], help="test only this one")
    s.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    """`notify` (or `notify --test`): 0 when any channel delivered (the fallback included), else 1 with the next step
    on stderr."""
    from session_watcher.base import config
    from session_watcher.state.shell import working_folder

    # the config an alert of a session here is sent with, a file that cannot be used left out as the
    # hooks leave it out, and said as every command says it (`messages.say_left_out`)
    here = working_folder()
    cfg, errors = config.load_layers(here)
    if errors:
        from session_watcher.cli.messages import say_left_out

        say_left_out(errors, config.config_files(here))
    notify = cfg["notify"]
    channels = [args.channel] if args.channel else list(notify["channels"])
    fallback = notify["fallback"]
    if not args.channel and fallback != "none" and fallback not in channels:
        channels.append(fallback)
    import io

    from session_watcher.base.terminal import columns
    from session_watcher.core.text import fit

    env = dict(os.environ)
    out = io.StringIO()
    delivered = [c for c in channels if try_channel(c, out, env)]
    if delivered and len(delivered) < len(channels):
        via = ", ".join(c + (" (the fallback)" if c == fallback and not args.channel else "") for c in delivered)
        out.write(f"alerts reach you through: {via}\n")
    sys.stdout.write(fit(out.getvalue(), columns()))
    if delivered:
        return 0
    from session_watcher.core.usererrors import UserError

    if args.channel:  # the one channel asked for; the alerts themselves still have the fallback
        raise UserError(f"the {args.channel} channel did not reach you (why: above); `session-watcher notify` "
                        "tries every channel an alert would use, the fallback included")
    raise UserError("no channel reached you, so an alert would not show (why: above); `session-watcher config "
                    "set notify.fallback message` shows alerts in Claude Code or Codex at your next prompt")


def doctor_lines(env: dict[str, str] | None = None) -> list[str]:
    """What `doctor` prints about notifications: the channels, the bus and server, where alerts go.

    One label per line, in doctor's column: `notify`, `D-Bus`, `desktop`."""
    env = dict(os.environ if env is None else env)
    lines: list[str] = []
    from session_watcher.base import config

    try:
        from session_watcher.state.shell import working_folder

        notify = config.load(working_folder())["notify"]
        unreadable = ""
    except Exception as exc:
        notify, unreadable = config.DEFAULTS["notify"], f" (config unreadable: {exc}; the defaults)"
    channels = list(notify["channels"])
    fallback = notify["fallback"]
    lines.append(f"notify     channels {', '.join(channels) or '(none)'}; fallback {fallback}{unreadable}")
    if "desktop" not in channels:
        return lines
    if sys.platform.startswith("linux") or sys.platform.startswith("freebsd"):
        status = busprobe.probe(env, timeout=1.0, server_info=True)
        if status.address is None:
            lines.append("D-Bus      no session bus" + (" (SSH session)" if env.get("SSH_CONNECTION") else ""))
        elif not status.reachable:
            lines.append(f"D-Bus      session bus {status.address} unreachable ({status.error})")
        elif status.owned:
            server = status.server or []
            name = " ".join(server[i] for i in (0, 2) if i < len(server)) or "unknown"
            lines.append(f"D-Bus      session bus {status.address}; notification server: {name}")
        elif status.usable(env):
            lines.append(f"D-Bus      session bus {status.address}; notification server starts on demand")
        else:
            lines.append(f"D-Bus      session bus {status.address}; no notification server running")
    ok, _ = desktop_reachable(env)
    if ok:
        from session_watcher.base.route import cli_command

        lines.append(f"desktop    alerts show here (see one: `{cli_command(env)} notify`)")
    else:
        lines.append(f"desktop    unreachable; alerts go to the fallback channel: {fallback}")
    return lines
