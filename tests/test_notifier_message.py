"""The alert's words and their escaping; the channel choice when no desktop is involved."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING, Any, cast

import pytest

from session_watcher import notifier
from session_watcher.core.numbers import calls
from session_watcher.notifier import busprobe, message

if TYPE_CHECKING:
    from session_watcher.core.shapes import NotifyConfig


def notify(**keys: Any) -> NotifyConfig:
    """A [notify] table with only these keys (dispatch takes the defaults for the others)."""
    return cast("NotifyConfig", keys)


GATE = {
    "kind": "gate",
    "call": 40,
    "sessionId": "s1",
    "lamp": "amber",
    "x": 3.41,
    "xSweet": 2.8,
    "br": 0.1436,
    "B": 48213,
    "bDefault": 45000,
    "L": 153000,
    "bills": 1,
    "backstopN": 4,
    "reminder": 0,
    "model": "claude-opus-4-6",
    "project": "/home/ann/work/shop",
}
# the optimal cycle: 10 calls, each reading L - B = 108,000 fewer tokens; less K = 467,700, 612,300 saved
GATE.update({"system": 18_000, "files": 27_000, "saving": 612_300.0, "savingUsd": 0.30615, "cycle": 10.2,
             "K": 467_700.0})
# a cold return's saving is the one restart saving priced cold: the re-write it spares included
GUARD = {**GATE, "kind": "guard", "call": 90, "gap": 5530.0, "rewrite": 180_000, "rewriteUsd": 1.13,
         "bDefault": 41_000, "files": 23_000, "freshUsd": 0.2614, "saving": 2_512_300.0, "savingUsd": 1.25615}
BACKSTOP = {**GATE, "saving": 1_100_000.0, "savingUsd": 0.55, "L": 200_000, "cycle": 43.0,
            "kind": "backstop", "call": 71, "lamp": "red", "x": 4.9, "br": 0.31, "bills": 5, "reminder": 1}


class TestNumbers:
    def test_pair_keeps_x_and_sweet_apart(self) -> None:
        """When one decimal would print x and xSweet equal, two decimals are used."""
        assert message.pair(3.41, 2.8) == ("3.4", "2.8")
        assert message.pair(2.84, 2.81) == ("2.84", "2.81")


class TestCompose:
    def test_gate_text(self) -> None:
        """Plain words first: what restarting saves over a horizon a person reads (the optimal cycle's
        calls at this session's pace, the tokens not read and the dollars after the restart's cost),
        and what a restart would carry; no x, bp, bill cycle or deep water, never a per-call surcharge."""
        title, body = message.compose(GATE)
        assert title == "This session now costs more than a fresh start (shop)"
        assert body.splitlines() == [
            "Restarting now saves $0.31 over the next ~10 calls (at this session's pace: 1.1M fewer tokens read, "
            "less the restart's own cost: 612k net at the cache-read price).",
            "A fresh session would carry 45k tokens (18k system + 27k in files).",
            "To restart with a handoff: `session-watcher handoff` in another terminal, then /clear here (in Claude "
            "Code, `! session-watcher handoff` also works but sends one request: the note goes through the model "
            "once).",
            "Model: claude-opus-4-6",
        ]
        for jargon in ("bp", "bill", "deep water", "sweet spot", "each call"):
            assert jargon not in (title + body)

    def test_backstop_text(self) -> None:
        """A reminder says which reminder it is, with the saving as it stands now."""
        title, body = message.compose(BACKSTOP)
        assert title == "Reminder 1: this session still costs more than a fresh start (shop)"
        assert body.splitlines()[0] == ("Restarting now saves $0.55 over the next ~45 calls (at this session's pace: "
                                        "6.7M fewer tokens read, less the restart's own cost: 1.1M net at the "
                                        "cache-read price).")

    def test_titles_count_what_the_user_was_shown(self) -> None:
        """Delivery marks each gate or reminder with how many of its episode the user saw before
        (`shown`): the first one seen is the gate's, whatever the engine counted (a first fold after a
        mid-session install fires reminder 18), then Reminder 1, 2."""
        late = {**BACKSTOP, "reminder": 18, "shown": 0}
        assert message.compose(late)[0] == "This session now costs more than a fresh start (shop)"
        assert message.compose({**late, "shown": 1})[0].startswith("Reminder 1: ")
        assert message.compose({**GATE, "shown": 2})[0].startswith("Reminder 2: ")

    def test_horizon_words(self) -> None:
        assert [calls(n) for n in (0.3, 7.4, 19.6, 22.4, 41.0, 98.0, 154.0)] == [
            "~1", "~7", "~20", "~20", "~40", "~100", "~150"]
        # without the cycle (an older alert): the saving alone, no horizon made up
        _, body = message.compose({k: v for k, v in GATE.items() if k != "cycle"})
        assert body.splitlines()[0] == "Restarting now saves about 612k tokens ($0.31) of cache reads."
        _, body = message.compose({**GATE, "saving": -5.0})
        assert body.splitlines()[0].startswith("A fresh session would carry")

    def test_guard_text(self) -> None:
        """A cold return: how long ago, what the next prompt re-writes, and the cheaper fresh start."""
        title, body = message.compose(GUARD)
        assert title == "Your cache expired: a fresh start is cheaper now (shop)"
        assert body.splitlines()[:3] == [
            "1 h 32 min since the last call: the next prompt re-writes 180k tokens ($1.13).",
            "A fresh session would carry 41k tokens (18k system + 23k in files), about $0.26 to start.",
            "Restarting now saves $1.26 over the next ~10 calls, the re-write included.",
        ]
        # the cache is cold: the handoff typed in the agent (a slash command or bash mode) would send
        # the cold conversation first, on either route
        for restart in (None, "/session-watcher:handoff, then /clear"):
            _, body = message.compose(GUARD, restart)
            assert body.splitlines()[3] == ("To restart with a handoff: `session-watcher handoff` in a terminal "
                                            "(nothing goes to the model), then /clear.")

    def test_a_cold_return_quotes_the_one_restart_saving(self) -> None:
        """The notification of a cold return says what restarting now saves (the alert's `savingUsd`,
        eoq.restart_saving priced cold: the status line's and the guard's figure); none when a restart
        saves nothing, and with no horizon left only the figure."""
        _, body = message.compose({**GUARD, "savingUsd": 0.4, "saving": 800_000.0})
        assert "Restarting now saves $0.40 over the next ~10 calls, the re-write included." in body.splitlines()
        _, body = message.compose({**GUARD, "saving": -1.0, "savingUsd": -0.01})
        assert "saves" not in body
        _, body = message.compose({**GUARD, "cycle": 0.0})
        assert "Restarting now saves $1.26, the re-write included." in body.splitlines()

    def test_the_horizon_says_when_the_compaction_ends_it(self) -> None:
        """Where the automatic compaction ends the horizon first (`untilCompaction`), the words say so,
        as the guard's and `status`'s do (`numbers.over_calls`); a whole cycle says nothing of it."""
        _, body = message.compose({**GATE, "untilCompaction": True})
        assert body.splitlines()[0] == ("Restarting now saves $0.31 over the next ~10 calls, until the automatic "
                                        "compaction (at this session's pace: 1.1M fewer tokens read, less the "
                                        "restart's own cost: 612k net at the cache-read price).")
        _, body = message.compose({**GUARD, "untilCompaction": True})
        assert ("Restarting now saves $1.26 over the next ~10 calls, until the automatic compaction, the re-write "
                "included.") in body.splitlines()
        assert "compaction" not in message.compose(GATE)[1]

    def test_unknown_prices_leave_dollars_out(self) -> None:
        _, body = message.compose({**GATE, "savingUsd": None, "model": "some-future-model"})
        assert "$" not in body
        assert "Restarting now saves about 612k tokens of cache reads over the next ~10 calls (at this session's " \
               "pace: 1.1M fewer tokens read, less the restart's own cost)." in body

    def test_pick_prefers_latest_call(self) -> None:
        """Of a batch, the latest call's alert is shown."""
        assert message.pick([GATE, BACKSTOP]) is BACKSTOP
        assert message.pick([BACKSTOP, GATE]) is BACKSTOP


class TestEscaping:
    def test_markup_escape(self) -> None:
        """&, < and > become entities, ampersand first so nothing is escaped twice."""
        assert message.markup_escape("a&b <i>c</i> &lt;") == "a&amp;b &lt;i&gt;c&lt;/i&gt; &amp;lt;"

    def test_terminal_sequence_cannot_be_broken_out_of(self) -> None:
        """Session text with ESC, BEL and C1 controls yields exactly one OSC sequence."""
        alert = {**GATE, "project": "/p/x\x1b]0;pwned\x07y;z", "model": "m\x9b31m\nnext"}
        out = notifier.dispatch([alert], notify(channels=["terminal"]), env={})
        assert out is not None
        assert set(out) == {"terminalSequence"}
        seq = out["terminalSequence"]
        assert seq.startswith("\x1b]777;notify;This session now costs more than a fresh start")
        assert seq.endswith("\x07")
        inner = seq[len("\x1b]777;notify;") : -1]
        assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in inner)
        title, body = inner.split(";", 1)  # the title holds no ';' of its own
        assert title.endswith("(x]0,pwnedy,z)")
        assert body.endswith("Model: m31m next")

    def test_osc9_for_iterm(self) -> None:
        """iTerm2 gets OSC 9, which it shows as a notification."""
        out = notifier.dispatch([GATE], notify(channels=["terminal"]), env={"TERM_PROGRAM": "iTerm.app"})
        assert out is not None
        assert out["terminalSequence"].startswith("\x1b]9;This session now costs more than a fresh start")

    def test_system_message_is_plain_text(self) -> None:
        """The systemMessage keeps its line breaks and drops escape sequences."""
        alert = {**GATE, "model": "\x1b[31mred\x1b[0m"}
        out = notifier.dispatch([alert], notify(channels=["message"]), env={})
        assert out == {
            "systemMessage": "session-watcher: This session now costs more than a fresh start (shop)\n"
            "Restarting now saves $0.31 over the next ~10 calls (at this session's pace: 1.1M fewer tokens read, "
            "less the restart's own cost: 612k net at the cache-read price).\n"
            "A fresh session would carry 45k tokens (18k system + 27k in files).\n"
            "To restart with a handoff: `session-watcher handoff` in another terminal, then /clear here (in Claude "
            "Code, `! session-watcher handoff` also works but sends one request: the note goes through the model "
            "once).\n"
            "Model: [31mred[0m"
        }


class TestChannels:
    def test_no_alerts_no_output(self) -> None:
        """Without alerts nothing is sent and the hook prints nothing."""
        assert notifier.dispatch([], notify(channels=["message"]), env={}) is None

    def test_defaults_fall_back_to_message(self, tmp_path: object) -> None:
        """Default config, no bus: the systemMessage carries the alert."""
        out = notifier.dispatch([GATE], notify(), env={"XDG_RUNTIME_DIR": str(tmp_path)})
        assert out is not None
        assert list(out) == ["systemMessage"]

    def test_fallback_terminal_and_none(self, tmp_path: object) -> None:
        """The fallback channel is the configured one; 'none' sends nothing."""
        env = {"XDG_RUNTIME_DIR": str(tmp_path)}
        out = notifier.dispatch([GATE], notify(channels=["desktop"], fallback="terminal"), env=env)
        assert out is not None
        assert list(out) == ["terminalSequence"]
        assert notifier.dispatch([GATE], notify(channels=["desktop"], fallback="none"), env=env) is None

    def test_ssh_without_bus_variable_ignores_user_bus(self, tmp_path: object) -> None:
        """Over SSH the user bus socket is not used: the desktop there is not the user's screen."""
        import socket

        sock_path = f"{tmp_path}/bus"
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(sock_path)
        try:
            assert busprobe.bus_address({"XDG_RUNTIME_DIR": str(tmp_path)}) == f"unix:path={sock_path}"
            assert busprobe.bus_address({"XDG_RUNTIME_DIR": str(tmp_path), "SSH_CONNECTION": "1 2 3 4"}) is None
        finally:
            srv.close()

    def test_socket_targets(self) -> None:
        """D-Bus addresses: several entries, escapes, abstract sockets, other transports skipped."""
        addr = "tcp:host=x,port=1;unix:abstract=/tmp/dbus-A%2cb,guid=1;unix:path=/run/user/1000/bus"
        assert busprobe.socket_targets(addr) == ["\0/tmp/dbus-A,b", "/run/user/1000/bus"]

    def test_method_call_bytes(self) -> None:
        """A NameHasOwner call marshals to exactly the bytes dbus-fast produces for it."""
        from dbus_fast import Message

        ref = Message(
            destination="org.freedesktop.DBus",
            path="/org/freedesktop/DBus",
            interface="org.freedesktop.DBus",
            member="NameHasOwner",
            signature="s",
            body=["org.freedesktop.Notifications"],
            serial=7,
        )._marshall(False)
        ours = busprobe.method_call(
            7,
            "org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
            "NameHasOwner",
            arg="org.freedesktop.Notifications",
        )
        assert ours == bytes(ref)


@pytest.mark.slow
def test_dispatch_imports_nothing_heavy(tmp_path: object) -> None:
    """The hook path (import + dispatch, desktop channel, no bus) loads no heavy module."""
    code = (
        "import sys\nfrom session_watcher import notifier\n"
        "out = notifier.dispatch([{'kind': 'gate', 'call': 1, 'lamp': 'red', 'x': 3.0, 'xSweet': 2.0,"
        " 'br': 0.3, 'B': 1000}], {'channels': ['desktop']})\n"
        "heavy = {'asyncio', 'subprocess', 'typing', 'desktop_notifier', 'dbus_fast', 'logging', 'socket'}\n"
        "print(sorted(heavy & set(sys.modules)), sorted(out))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": str(tmp_path)}
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=str(__import__("pathlib").Path(__file__).resolve().parent.parent),
    )
    assert res.stdout.strip() == "[] ['systemMessage']"


@pytest.mark.parametrize("bad", [{"channels": "desktop"}, {"fallback": "pager"}, {"channels": ["fax"]}])
def test_odd_config_never_raises(bad: dict[str, object], tmp_path: object) -> None:
    """A malformed notify table falls back to defaults instead of failing the hook."""
    out = notifier.dispatch([GATE], bad, env={"XDG_RUNTIME_DIR": str(tmp_path)})  # type: ignore[arg-type]  # malformed, on purpose
    assert out is None or set(out) <= {"systemMessage", "terminalSequence"}
    if bad == {"fallback": "pager"}:
        assert out is not None
        assert "systemMessage" in out


def test_a_bus_too_slow_to_answer_lets_the_deliverer_try_and_uses_the_fallback(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session bus that takes the connection but does not answer within the hook's probe deadline
    (a loaded machine): busy, not absent. The deliverer is started (its own deadline is longer) and
    the fallback carries the alert too. Before: taken as no notification server, the deliverer never
    started, so with `fallback = "none"` the alert reached no one."""
    import socket
    import threading

    path = str(tmp_path / "bus")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(server.accept()[0]), daemon=True).start()  # never answers
    started: list[bytes] = []

    def spawn(data: bytes, _env: Any) -> int:
        started.append(data)
        return 4242

    monkeypatch.setattr(notifier, "spawn_detached", spawn)
    env = {"DBUS_SESSION_BUS_ADDRESS": f"unix:path={path}"}
    try:
        status = busprobe.probe(env, timeout=0.05)
        assert (status.reachable, status.owned, status.error) == (False, False, busprobe.TOO_SLOW)
        out = notifier.dispatch([GATE], notify(channels=["desktop"], fallback="message"), env)
        assert len(started) == 1
        assert out is not None
        assert "session-watcher" in out["systemMessage"]
        assert notifier.dispatch([GATE], notify(channels=["desktop"], fallback="none"), env) is None
        assert len(started) == 2  # the desktop channel tried, with no fallback to carry it
    finally:
        server.close()
        for conn in held:
            conn.close()
