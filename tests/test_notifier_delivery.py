"""Real delivery: a private D-Bus session bus, dunst under Xvfb, and the hook's own code path.

Each test starts its own dbus-daemon (a config with no service files, so nothing is activated behind
our back), and where needed Xvfb and dunst, and kills them by PID. `dispatch` is called in a separate
process, as the hook would, so the detached deliverer outlives its parent like it does for real.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from session_watcher import cli as sw_cli
from session_watcher import notifier
from session_watcher.cli import notify as cli
from session_watcher.notifier import busprobe, child_argv, deliver
from tests.statefile import sessions_dir

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

if TYPE_CHECKING:
    from collections.abc import Iterator

REPO = Path(__file__).resolve().parent.parent
BUS_CONF = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={path}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""
DUNSTRC = """[global]
    stack_duplicates = false
    notification_limit = 0
[urgency_low]
    timeout = 0
[urgency_normal]
    timeout = 0
[urgency_critical]
    timeout = 0
"""
ALERT_RED = {
    "kind": "gate",
    "call": 40,
    "sessionId": "s1",
    "lamp": "red",
    "x": 3.41,
    "xSweet": 2.8,
    "br": 0.2836,
    "B": 48213,
    "bDefault": 45000,
    "L": 153000,
    "bills": 1,
    "backstopN": 4,
    "reminder": 0,
    "model": "claude-<opus>&co",
    "project": "/home/ann/a&b<c>",
}
ALERT_AMBER = {
    **ALERT_RED,
    "kind": "backstop",
    "call": 77,
    "lamp": "amber",
    "br": 0.12,
    "bills": 4,
    "reminder": 1,
    "model": "m",
    "project": "shop",
}


def need(*tools: str) -> None:
    """Skip when a tool is missing on a developer machine; in CI a missing tool is a failure."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        msg = f"missing {', '.join(missing)} (installed by .ci/setup.d/20-notify.sh)"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)


def wait_for(pred: object, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():  # type: ignore[operator]
            return
        time.sleep(0.02)
    raise AssertionError(f"gave up waiting for {what}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        try:
            os.kill(proc.pid, signal.SIGCONT)  # a stopped process would not act on SIGTERM
        except ProcessLookupError:
            pass
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    if proc.stdout is not None:
        proc.stdout.close()


def marked_pids(mark: str) -> list[int]:
    """Live processes (not zombies) whose environment carries `mark`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if mark.encode() not in fh.read():
                    continue
            with open(f"/proc/{entry}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state != b"Z":
            found.append(int(entry))
    return found


class Desktop:
    """A private session bus, optionally with a display and a notification server."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: list[subprocess.Popen[bytes]] = []
        self.fds: list[int] = []
        self.runtime = tmp / "runtime"
        self.runtime.mkdir(mode=0o700)
        self.mark = f"SW_NOTIFIER_TEST={uuid.uuid4().hex}"
        self.address: str | None = None
        self.display: str | None = None
        self.dunst_out = tmp / "dunst.out"

    def env(self, *, bus: bool = True, marked: bool = True) -> dict[str, str]:
        """The hook's environment; `marked` tags it so its (grand)children can be found in /proc."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.tmp),
            "XDG_RUNTIME_DIR": str(self.runtime),  # holds no bus socket: only the variable counts
        }
        if marked:
            env["SW_NOTIFIER_TEST"] = self.mark.split("=", 1)[1]
        if bus and self.address:
            env["DBUS_SESSION_BUS_ADDRESS"] = self.address
        return env

    def start_bus(self) -> None:
        sock = self.tmp / "bus"
        conf = self.tmp / "bus.conf"
        conf.write_text(BUS_CONF.format(path=sock))
        self.procs.append(
            subprocess.Popen(
                ["dbus-daemon", f"--config-file={conf}", "--nofork", "--nopidfile"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        self.address = f"unix:path={sock}"
        wait_for(lambda: busprobe.probe(self.env(), timeout=1).reachable, 10, "the private bus")

    def start_dunst(self) -> None:
        r, w = os.pipe()
        with open(self.tmp / "xvfb.err", "wb") as xerr:
            xvfb = subprocess.Popen(
                ["Xvfb", "-displayfd", str(w), "-nolisten", "tcp", "-screen", "0", "800x600x24"],
                pass_fds=(w,),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=xerr,
            )
        self.procs.append(xvfb)
        os.close(w)
        ready, _, _ = select.select([r], [], [], 15)
        number = os.read(r, 64).decode().strip() if ready else ""
        self.fds.append(r)  # Xvfb may write to it again: closing it early makes Xvfb abort
        assert number.isdigit(), "Xvfb did not report its display"
        self.display = f":{number}"
        rc = self.tmp / "config" / "dunst" / "dunstrc"
        rc.parent.mkdir(parents=True)
        rc.write_text(DUNSTRC)  # nothing expires or merges on its own: what is on screen is what we did
        env = {**self.env(marked=False), "DISPLAY": self.display, "XDG_CONFIG_HOME": str(self.tmp / "config")}
        with open(self.dunst_out, "wb") as out, open(self.tmp / "dunst.err", "wb") as err:
            self.procs.append(
                subprocess.Popen(
                    ["dunst", "-print"],
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                )
            )
        try:
            wait_for(lambda: busprobe.probe(self.env(), timeout=1).owned, 15, "dunst to own the name")
        except AssertionError:
            raise AssertionError(f"dunst did not start: {(self.tmp / 'dunst.err').read_text()!r}") from None

    def start_frozen_server(self) -> None:
        """A process that owns org.freedesktop.Notifications and then never answers (SIGSTOP)."""
        code = (
            "import asyncio\nfrom dbus_fast.aio import MessageBus\n"
            "async def main():\n"
            "    bus = await MessageBus().connect()\n"
            "    await bus.request_name('org.freedesktop.Notifications')\n"
            "    print('ready', flush=True)\n"
            "    await asyncio.Event().wait()\n"
            "asyncio.run(main())\n"
        )
        proc = self._serve(code)
        os.kill(proc.pid, signal.SIGSTOP)

    def start_old_server(self) -> Path:
        """A notification server of the old spec (hints as a{ss}) that logs each Notify, one JSON a line."""
        log = self.tmp / "old-server.jsonl"
        code = (
            "import asyncio, json, sys\n"
            "from dbus_fast.aio import MessageBus\n"
            "from dbus_fast.service import ServiceInterface, method\n"
            "class Old(ServiceInterface):\n"
            "    def __init__(self):\n"
            "        super().__init__('org.freedesktop.Notifications')\n"
            "        self.n = 0\n"
            "    @method(name='Notify')\n"
            "    def notify(self, app: 's', rid: 'u', icon: 's', summary: 's', body: 's', actions: 'as',\n"
            "               hints: 'a{ss}', timeout: 'i') -> 'u':\n"
            "        self.n += 1\n"
            "        with open(sys.argv[1], 'a') as fh:\n"
            "            fh.write(json.dumps([app, rid, summary, hints]) + '\\n')\n"
            "        return rid or 100 + self.n\n"
            "async def main():\n"
            "    bus = await MessageBus().connect()\n"
            "    bus.export('/org/freedesktop/Notifications', Old())\n"
            "    await bus.request_name('org.freedesktop.Notifications')\n"
            "    print('ready', flush=True)\n"
            "    await asyncio.Event().wait()\n"
            "asyncio.run(main())\n"
        )
        self._serve(code, str(log))
        return log

    def _serve(self, code: str, *args: str) -> subprocess.Popen[bytes]:
        """Run a stand-in D-Bus server on the private bus; return once it says it is ready."""
        proc = subprocess.Popen(
            [sys.executable, "-c", code, *args],
            env={**os.environ, **self.env(marked=False)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.procs.append(proc)
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        assert ready
        assert proc.stdout.readline().strip() == b"ready"
        return proc

    def start_monitor(self) -> None:
        """dbus-monitor on the private bus: every Notify call and every method return."""
        self.monitor_out = self.tmp / "monitor.out"
        with open(self.monitor_out, "wb") as out:
            self.procs.append(
                subprocess.Popen(
                    [
                        "dbus-monitor",
                        "type='method_call',interface='org.freedesktop.Notifications',member='Notify'",
                        "type='method_return'",
                    ],
                    env=self.env(marked=False),
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.DEVNULL,
                )
            )
        # it owns a name until it becomes a monitor, then loses it: from then on it sees everything
        wait_for(lambda: "member=NameLost" in self.monitor_out.read_text(errors="replace"), 10, "dbus-monitor")

    def notify_calls(self) -> list[dict[str, object]]:
        """The Notify calls seen on the bus, in order: app name, replaces_id, icon, and the id returned."""
        text = self.monitor_out.read_text(errors="replace")
        blocks = re.split(r"\n(?=\S)", text)
        returns: dict[tuple[str, str], int] = {}
        calls: list[dict[str, object]] = []
        keys: list[tuple[str, str]] = []
        for block in blocks:
            head, _, rest = block.partition("\n")
            if head.startswith("method return"):
                m = re.search(r"destination=(\S+) serial=\d+ reply_serial=(\d+)", head)
                value = re.match(r"\s*uint32 (\d+)", rest)
                if m and value:
                    returns[(m.group(1), m.group(2))] = int(value.group(1))
            elif head.startswith("method call") and "member=Notify" in head:
                m = re.search(r"sender=(\S+) -> destination=\S+ serial=(\d+)", head)
                args = re.match(r'\s*string "(.*)"\n\s*uint32 (\d+)\n\s*string "(.*)"\n', rest)
                assert m, block
                assert args, block
                calls.append({"app": args.group(1), "replaces": int(args.group(2)), "icon": args.group(3)})
                keys.append((m.group(1), m.group(2)))
        for call, key in zip(calls, keys, strict=True):
            call["id"] = returns.get(key)
        return calls

    def dunstctl(self, *args: str) -> str:
        res = subprocess.run(["dunstctl", *args], env=self.env(marked=False), capture_output=True, text=True,
                             timeout=10, check=True)
        return res.stdout.strip()

    def notifications(self) -> list[dict[str, str]]:
        text = self.dunst_out.read_text(errors="replace") if self.dunst_out.exists() else ""
        pat = re.compile(
            r"appname: '(?P<app>.*?)'\n\tsummary: '(?P<summary>.*?)'\n\tbody: '(?P<body>.*?)'\n\ticon: '(?P<icon>.*?)'"
            r".*?\n\turgency: (?P<urgency>\w+)\n.*?\n\tid: (?P<id>\d+)\n",
            re.S,
        )
        return [m.groupdict() for m in pat.finditer(text)]

    def close(self) -> None:
        for proc in reversed(self.procs):
            stop(proc)
        for fd in self.fds:
            os.close(fd)


@pytest.fixture
def desktop(tmp_path: Path) -> Iterator[Desktop]:
    need("dbus-daemon")
    d = Desktop(tmp_path)
    try:
        yield d
    finally:
        d.close()


def hook_dispatch(alerts: list[dict[str, object]], cfg: dict[str, object], env: dict[str, str]) -> object:
    """Call dispatch in a short-lived process, as the hook does; return its result."""
    code = (
        "import json, sys\nfrom session_watcher import notifier\n"
        "print(json.dumps(notifier.dispatch(json.loads(sys.argv[1]), json.loads(sys.argv[2]))))\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code, json.dumps(alerts), json.dumps(cfg)],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=20,
        check=True,
    )
    assert res.stderr == ""
    return json.loads(res.stdout)


class TestRealServer:
    def test_hook_path_delivers_title_body_urgency(self, desktop: Desktop) -> None:
        """dispatch() detaches the deliverer, dunst receives the alert as composed, escaped for markup."""
        need("dunst", "Xvfb")
        desktop.start_bus()
        desktop.start_dunst()
        out = hook_dispatch([ALERT_RED], {"channels": ["desktop"]}, desktop.env())
        assert out is None  # delivered on the desktop: nothing for Claude Code to show
        wait_for(lambda: len(desktop.notifications()) == 1, 15, "the notification at dunst")
        got = desktop.notifications()[0]
        assert got["app"] == "session-watcher"
        assert got["summary"] == "This session now costs more than a fresh start (a&b<c>)"
        assert got["body"] == (
            "A fresh session would carry 45k tokens.\n"
            "To restart with a handoff: `session-watcher handoff` in another terminal, then /clear here (in Claude "
            "Code, `! session-watcher handoff` also works but sends one request: the note goes through the model "
            "once).\n"
            "Model: claude-&lt;opus&gt;&amp;co"
        )
        assert got["urgency"] == "NORMAL"  # whatever the lamp: critical ones stay until dismissed

        out = hook_dispatch([ALERT_AMBER], {"channels": ["desktop", "message"]}, desktop.env())
        assert isinstance(out, dict)
        assert list(out) == ["systemMessage"]  # asked for both channels: both carry it
        wait_for(lambda: len(desktop.notifications()) == 2, 15, "the second notification")
        got = desktop.notifications()[1]
        assert got["summary"] == "Reminder 1: this session still costs more than a fresh start (shop)"
        assert got["body"].startswith("A fresh session would carry 45k tokens.\n")
        assert got["urgency"] == "NORMAL"
        wait_for(lambda: not marked_pids(desktop.mark), 10, "the deliverers to exit")

    def test_cli_notify_test_and_doctor(
        self, desktop: Desktop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`notify --test` delivers a sample synchronously and says so; doctor names the server."""
        need("dunst", "Xvfb")
        desktop.start_bus()
        desktop.start_dunst()
        for key in list(os.environ):
            if key.startswith(("DBUS_", "SSH_", "DISPLAY", "WAYLAND")):
                monkeypatch.delenv(key)
        for key, value in desktop.env().items():
            if key != "PATH":
                monkeypatch.setenv(key, value)
        monkeypatch.setenv("SESSION_WATCHER_HOME", str(tmp_path / "home"))
        monkeypatch.chdir(tmp_path)
        assert sw_cli.main(["notify", "--test", "--channel", "desktop"]) == 0
        assert capsys.readouterr().out == "desktop: delivered\n"
        assert desktop.notifications()[0]["summary"].startswith("Test: This session now costs more than a fresh start")
        assert sw_cli.main(["notify", "--test", "--channel", "desktop"]) == 0  # a second test replaces the first
        capsys.readouterr()
        wait_for(lambda: len(desktop.notifications()) == 2, 10, "the second sample at dunst")
        first, second = desktop.notifications()
        assert first["id"] == second["id"]
        if shutil.which("dunstctl"):
            assert desktop.dunstctl("count", "displayed") == "1"
        lines = cli.doctor_lines()
        assert lines[0] == "notify     channels desktop; fallback message"
        assert re.fullmatch(r"D-Bus      session bus unix:path=.*; notification server: dunst 1\.\d.*", lines[1])
        # the command it names to see one is `notify` alone, which sends the sample as `--test` does
        assert re.fullmatch(r"desktop    alerts show here \(see one: `.*session-watcher notify`\)", lines[2]), lines[2]
        assert sw_cli.main(["notify", "--channel", "desktop"]) == 0
        assert capsys.readouterr().out == "desktop: delivered\n"


def sw_env(desktop: Desktop) -> dict[str, str]:
    """The hook's environment with its state folder in place (the hook creates it before alerting)."""
    home = desktop.tmp / "sw-home"
    sessions_dir(home).mkdir(parents=True, exist_ok=True)
    return {**desktop.env(), "SESSION_WATCHER_HOME": str(home)}


def icon_uri() -> str:
    icon = Path(notifier.icon_path())
    return icon.as_uri() if icon.is_file() else ""


class TestOneNotificationPerSession:
    def test_reminder_replaces_the_sessions_last_notification(self, desktop: Desktop) -> None:
        """The reminder's Notify carries the gate's id as replaces_id: one of ours on screen per
        session, normal urgency even on a red lamp, our app name and icon; another session gets its own."""
        need("dunst", "Xvfb", "dbus-monitor", "dunstctl")
        desktop.start_bus()
        desktop.start_monitor()
        desktop.start_dunst()
        env = sw_env(desktop)
        assert hook_dispatch([ALERT_RED], {"channels": ["desktop"]}, env) is None
        wait_for(lambda: len(desktop.notifications()) == 1, 15, "the gate at dunst")
        wait_for(lambda: not marked_pids(desktop.mark), 10, "the first deliverer to exit")
        assert hook_dispatch([ALERT_AMBER], {"channels": ["desktop"]}, env) is None
        wait_for(lambda: len(desktop.notifications()) == 2, 15, "the reminder at dunst")
        wait_for(lambda: len(desktop.notify_calls()) == 2 and desktop.notify_calls()[1]["id"], 10, "the reply")

        gate, reminder = desktop.notify_calls()
        assert gate["replaces"] == 0
        assert isinstance(gate["id"], int)
        assert gate["id"] > 0
        assert reminder["replaces"] == gate["id"]
        assert reminder["id"] == gate["id"]
        shown = desktop.notifications()
        assert [n["id"] for n in shown] == [str(gate["id"])] * 2
        assert desktop.dunstctl("count", "displayed") == "1"  # the reminder took the gate's place
        for call, note in zip(desktop.notify_calls(), shown, strict=True):
            assert call["app"] == note["app"] == "session-watcher"
            assert call["icon"] == note["icon"] == icon_uri()
            assert note["urgency"] == "NORMAL"

        other = {**ALERT_RED, "sessionId": "s2"}
        assert hook_dispatch([other], {"channels": ["desktop"]}, env) is None
        wait_for(lambda: len(desktop.notify_calls()) == 3 and desktop.notify_calls()[2]["id"], 15, "session s2")
        third = desktop.notify_calls()[2]
        assert third["replaces"] == 0
        assert third["id"] != gate["id"]
        wait_for(lambda: desktop.dunstctl("count", "displayed") == "2", 10, "two sessions, two notifications")
        wait_for(lambda: not marked_pids(desktop.mark), 10, "the deliverers to exit")

    def test_an_id_from_another_server_is_not_replaced(self, desktop: Desktop) -> None:
        """A slot written under another bus or server (a restart counts ids from 1 again) is ignored:
        the notification another program has on screen under that id stays."""
        need("dunst", "Xvfb", "dbus-monitor", "dunstctl", "gdbus")
        desktop.start_bus()
        desktop.start_monitor()
        desktop.start_dunst()
        name = "org.freedesktop.Notifications"
        res = subprocess.run(
            ["gdbus", "call", "--session", "--dest", name, "--object-path", "/org/freedesktop/Notifications",
             "--method", f"{name}.Notify", "other-app", "0", "", "Other", "not ours", "[]", "{}", "--", "-1"],
            env=desktop.env(marked=False), capture_output=True, text=True, timeout=10, check=True,
        )
        theirs = int(re.fullmatch(r"\(uint32 (\d+),\)", res.stdout.strip()).group(1))  # type: ignore[union-attr]
        slot = desktop.tmp / "s9.notify"
        slot.write_text(json.dumps({"server": ["a-bus-that-is-gone", ":1.7"], "id": theirs}))
        assert cli.run_deliverer("T", "B", desktop.env(), "s9", str(slot)) == deliver.DELIVERED
        ours = desktop.notify_calls()[-1]
        assert ours["replaces"] == 0
        assert ours["id"] != theirs
        assert desktop.dunstctl("count", "displayed") == "2"
        kept = json.loads(slot.read_text())
        assert kept["id"] == ours["id"]
        assert kept["server"][1].startswith(":1.")  # dunst's connection on this bus
        assert kept["server"][0] != "a-bus-that-is-gone"

        assert cli.run_deliverer("T2", "B2", desktop.env(), "s9", str(slot)) == deliver.DELIVERED
        assert desktop.notify_calls()[-1]["replaces"] == ours["id"]  # our own id, from this server: replaced
        assert desktop.dunstctl("count", "displayed") == "2"


    def test_old_server_with_string_hints(self, desktop: Desktop) -> None:
        """A server that takes hints as a{ss} refuses the a{sv} call; the deliverer sends again with
        string hints, and still replaces the session's last notification."""
        desktop.start_bus()
        log = desktop.start_old_server()
        slot = desktop.tmp / "old.notify"
        assert cli.run_deliverer("One", "B", desktop.env(), "old", str(slot)) == deliver.DELIVERED
        assert cli.run_deliverer("Two", "B", desktop.env(), "old", str(slot)) == deliver.DELIVERED
        calls = [json.loads(line) for line in log.read_text().splitlines()]
        assert calls == [
            ["session-watcher", 0, "One", {"urgency": "1"}],
            ["session-watcher", 101, "Two", {"urgency": "1"}],
        ]


class TestFallback:
    def test_no_bus_at_all(self, desktop: Desktop) -> None:
        """No bus: the hook returns the fallback systemMessage and starts no process."""
        out = hook_dispatch([ALERT_RED], {"channels": ["desktop"]}, desktop.env(bus=False))
        assert isinstance(out, dict)
        assert list(out) == ["systemMessage"]
        assert out["systemMessage"].startswith("session-watcher: This session now costs more than a fresh start")
        assert marked_pids(desktop.mark) == []

    def test_bus_address_to_missing_socket(self, desktop: Desktop) -> None:
        """A stale bus address is no desktop either."""
        env = {**desktop.env(), "DBUS_SESSION_BUS_ADDRESS": f"unix:path={desktop.tmp}/gone"}
        out = hook_dispatch([ALERT_RED], {"channels": ["desktop"], "fallback": "terminal"}, env)
        assert isinstance(out, dict)
        assert list(out) == ["terminalSequence"]
        assert marked_pids(desktop.mark) == []

    def test_bus_without_server(self, desktop: Desktop) -> None:
        """A bus with no notification server: fallback at once, no child started."""
        desktop.start_bus()
        out = hook_dispatch([ALERT_RED], {"channels": ["desktop"]}, desktop.env())
        assert isinstance(out, dict)
        assert list(out) == ["systemMessage"]
        assert marked_pids(desktop.mark) == []

    def test_cli_reports_no_server(
        self, desktop: Desktop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`notify --test` with no server: desktop fails, the fallback delivers, so the test succeeds;
        the desktop alone fails (exit 1)."""
        desktop.start_bus()
        monkeypatch.delenv("SSH_CONNECTION", raising=False)
        monkeypatch.delenv("DISPLAY", raising=False)
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        for key, value in desktop.env().items():
            if key != "PATH":
                monkeypatch.setenv(key, value)
        monkeypatch.setenv("SESSION_WATCHER_HOME", str(tmp_path / "home"))
        monkeypatch.chdir(tmp_path)
        assert sw_cli.main(["notify", "--test"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0] == "desktop: not reachable (no notification server on the session bus)"
        assert out[1] == "message: ok, inside Claude Code or Codex the hook shows:"
        assert out[-1] == "alerts reach you through: message (the fallback)"
        assert sw_cli.main(["notify", "--test", "--channel", "desktop"]) == 1
        assert sw_cli.main(["notify", "--test", "--channel", "message"]) == 0
        assert cli.doctor_lines()[-1] == "desktop    unreachable; alerts go to the fallback channel: message"

    def test_frozen_server_child_ends_by_deadline(self, desktop: Desktop) -> None:
        """A server that owns the name but never answers: the hook still returns, the child is gone
        after its deadline, and the synchronous run reports the timeout."""
        desktop.start_bus()
        desktop.start_frozen_server()
        out = hook_dispatch([ALERT_RED], {"channels": ["desktop"]}, desktop.env())
        assert out is None  # the server looked alive: the desktop channel was used
        wait_for(lambda: len(marked_pids(desktop.mark)) == 1, 30, "the detached deliverer, waiting on the server")
        wait_for(lambda: not marked_pids(desktop.mark), deliver.DEADLINE + 5, "the deliverer to give up")
        rc = cli.run_deliverer("T", "B", desktop.env())
        assert rc == deliver.TIMED_OUT


def test_deliverer_rejects_bad_input() -> None:
    """The deliverer exits 2 on input that is not the expected JSON object."""
    res = subprocess.run(child_argv(), input=b"[1, 2]", capture_output=True, timeout=20, check=False)
    assert (res.returncode, res.stdout, res.stderr) == (deliver.BAD_INPUT, b"", b"")


def test_deliverer_starts_with_no_signal_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook spawns the deliverer while it holds back SIGTERM (hooks/run.py); the detached child
    must not inherit that, or nothing could stop it short of SIGKILL."""
    out = tmp_path / "mask"
    copy = f"import shutil; shutil.copy('/proc/self/status', {str(out)!r})"  # not sh: dash clears its mask
    monkeypatch.setattr(notifier, "child_argv", lambda: [sys.executable, "-I", "-c", copy])
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGHUP, signal.SIGINT})
    try:
        pid = notifier.spawn_detached(b"{}", dict(os.environ))
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    assert pid is not None
    os.waitpid(pid, 0)
    blocked = int(re.search(r"^SigBlk:\s*(\w+)", out.read_text(), re.M)[1], 16)  # type: ignore[index]
    assert not blocked & (1 << (signal.SIGTERM - 1) | 1 << (signal.SIGHUP - 1) | 1 << (signal.SIGINT - 1)), hex(blocked)
