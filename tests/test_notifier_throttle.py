"""At most one notification per session per notify.remind_min: decided in the hook, with the clock
passed in (no test waits), kept in the state across hook processes."""

from __future__ import annotations

import json
import os
import time
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pytest

from bench.synth import T0 as T0_SYNTH
from bench.synth import Transcript
from session_watcher import notifier
from session_watcher.base import config
from session_watcher.core import engine
from session_watcher.core.usererrors import ConfigError
from session_watcher.notifier import throttle
from tests.oracle import hook, payload, statusline
from tests.statefile import load_state, state_file

if TYPE_CHECKING:
    from collections.abc import Iterator

    from session_watcher.core.shapes import Alert, NotifyConfig, State

T0 = 1_800_000_000.0
CFG: NotifyConfig = {"channels": ["desktop"], "fallback": "message", "remind_min": 10}


def alert(kind: str, call: int) -> Alert:
    """An alert with the keys the throttle reads (the fold's carry more)."""
    return cast("Alert", {"kind": kind, "call": call, "sessionId": "s", "reminder": 1 if kind == "backstop" else 0})


def fresh(segment: int = 0) -> State:
    state = engine.new_state("s")
    state["engine"]["segment"] = segment
    return state


class TestAdmit:
    def test_reminders_at_most_once_per_remind_min(self) -> None:
        state = fresh()
        assert throttle.admit(state, [alert("gate", 40)], CFG, T0) == [{**alert("gate", 40), "shown": 0}]
        assert state["notified"] == {"at": T0, "segment": 0, "episode": None, "shown": 1, "bills": 0}
        assert throttle.admit(state, [alert("backstop", 45)], CFG, T0 + 60) == []
        assert throttle.admit(state, [alert("backstop", 52)], CFG, T0 + 599.9) == []
        assert state["notified"]["at"] == T0  # held back: the clock does not restart
        assert throttle.admit(state, [alert("backstop", 60)], CFG, T0 + 600) == [{**alert("backstop", 60), "shown": 1}]
        assert state["notified"]["at"] == T0 + 600
        assert throttle.admit(state, [alert("backstop", 61)], CFG, T0 + 900) == []

    def test_a_gate_soon_after_in_the_same_segment_is_held_back(self) -> None:
        """Deep water that flickers (bp around bp_amber) would otherwise fire a gate every few calls."""
        state = fresh()
        throttle.admit(state, [alert("backstop", 70)], CFG, T0)
        assert throttle.admit(state, [alert("gate", 74)], CFG, T0 + 120) == []

    def test_cold_return_always_comes(self) -> None:
        state = fresh()
        throttle.admit(state, [alert("gate", 40)], CFG, T0)
        batch = [alert("backstop", 41), alert("guard", 42)]
        assert throttle.admit(state, batch, CFG, T0 + 60) == [alert("guard", 42)]
        assert state["notified"]["at"] == T0 + 60  # it was shown: the next reminder waits again
        assert throttle.admit(state, [alert("backstop", 43)], CFG, T0 + 300) == []

    def test_a_new_segment_starts_afresh(self) -> None:
        """After a compaction or /clear the first alert is about a new context."""
        state = fresh(segment=0)
        throttle.admit(state, [alert("gate", 40)], CFG, T0)
        state["engine"]["segment"] = 1
        assert throttle.admit(state, [alert("gate", 90)], CFG, T0 + 60) == [{**alert("gate", 90), "shown": 0}]
        assert state["notified"]["segment"] == 1

    def test_zero_disables_the_limit(self) -> None:
        state = fresh()
        cfg: NotifyConfig = {**CFG, "remind_min": 0}
        for i in range(5):
            assert throttle.admit(state, [alert("backstop", 50 + i)], cfg, T0 + i) == [
                {**alert("backstop", 50 + i), "shown": i}]

    def test_other_limits_and_defaults(self) -> None:
        state = fresh()
        only_min = cast("NotifyConfig", {"remind_min": 2.5})  # the other keys left out
        throttle.admit(state, [alert("gate", 1)], only_min, T0)
        assert throttle.admit(state, [alert("backstop", 2)], only_min, T0 + 149) == []
        assert throttle.admit(state, [alert("backstop", 3)], only_min, T0 + 150) != []
        assert throttle.remind_seconds(None) == throttle.remind_seconds(cast("NotifyConfig", {})) == 600
        # a bad value (the config rejects it)
        assert throttle.remind_seconds({"remind_min": "soon"}) == 600  # type: ignore[arg-type]
        assert config.DEFAULTS["notify"]["remind_min"] == throttle.REMIND_MIN

    def test_clock_set_back_does_not_silence(self) -> None:
        state = fresh()
        throttle.admit(state, [alert("gate", 40)], CFG, T0)
        assert throttle.admit(state, [alert("backstop", 41)], CFG, T0 - 3600) == [{**alert("backstop", 41), "shown": 1}]

    def test_what_was_shown_is_counted_per_deep_water_episode(self) -> None:
        """`shown` counts the episode's gate and reminders the user saw; a cold return in between is
        shown but not counted (nor does it reset the bills); a new episode counts from 0 again; and
        the status document's `notice` says the bills since the last one shown, not since the last
        one the engine fired."""
        from session_watcher.core.status import notice

        state = fresh()
        e = state["engine"]
        e.update({"calls": 40, "dwell": 3, "billsTotal": 7})  # in deep water since call 38
        gate = alert("gate", 40)
        assert throttle.admit(state, [gate], CFG, T0)[0]["shown"] == 0
        assert "shown" not in gate  # a delivered copy carries it; the state's alert stays the fold's
        assert state["notified"] == {"at": T0, "segment": 0, "episode": 38, "shown": 1, "bills": 7}
        e.update({"calls": 52, "dwell": 15, "billsTotal": 10})
        assert throttle.admit(state, [alert("backstop", 52)], CFG, T0 + 60) == []  # held back
        assert notice(state) == {"shown": 1, "bills": 3}  # not reset: 3 bills since the gate was shown
        e.update({"calls": 53, "dwell": 16})
        assert throttle.admit(state, [alert("guard", 53)], CFG, T0 + 120) == [alert("guard", 53)]
        assert (state["notified"]["shown"], state["notified"]["bills"]) == (1, 7)
        e.update({"calls": 70, "dwell": 33, "billsTotal": 14})
        got = throttle.admit(state, [alert("backstop", 69), alert("backstop", 70)], CFG, T0 + 900)
        assert [a["shown"] for a in got] == [1, 1]  # one notification shows them: "Reminder 1"
        assert notice(state) == {"shown": 2, "bills": 0}
        e.update({"calls": 90, "dwell": 2})  # left deep water and came back: a new episode
        assert notice(state) is None
        assert throttle.admit(state, [alert("gate", 90)], CFG, T0 + 2000)[0]["shown"] == 0
        e.update({"dwell": 0})
        assert notice(state) is None

    def test_a_reminder_held_back_comes_when_the_quiet_ends(self) -> None:
        """The latest gate or reminder held back is kept and delivered by the first hook run after
        remind_min, if the session is still in deep water in the same segment; one shown meanwhile
        supersedes it; one that no longer holds is dropped."""
        state = fresh()
        e = state["engine"]
        e.update({"calls": 40, "dwell": 3, "billsTotal": 7, "lamp": "amber"})

        def fired(kind: str, call: int) -> Alert:  # recorded by the fold (the state's alerts), then admitted
            state["alerts"].append(alert(kind, call))
            return alert(kind, call)

        throttle.admit(state, [fired("gate", 40)], CFG, T0)
        assert throttle.release(state, CFG, T0 + 700) == []  # nothing held
        assert throttle.admit(state, [fired("backstop", 45)], CFG, T0 + 60) == []
        assert throttle.admit(state, [fired("backstop", 52)], CFG, T0 + 120) == []
        assert state["notified"]["held"] == alert("backstop", 52)
        assert throttle.release(state, CFG, T0 + 599) == []  # still quiet: kept
        assert "held" in state["notified"]
        assert throttle.release(state, CFG, T0 + 600) == [{**alert("backstop", 52), "shown": 1}]
        assert "held" not in state["notified"]
        assert state["notified"]["at"] == T0 + 600
        throttle.admit(state, [fired("backstop", 60)], CFG, T0 + 660)  # held again ...
        e.update({"dwell": 0, "lamp": "green"})  # ... and the session left deep water
        assert throttle.release(state, CFG, T0 + 1300) == []
        assert "held" not in state["notified"]
        e.update({"dwell": 4, "lamp": "amber"})
        throttle.admit(state, [fired("backstop", 70)], CFG, T0 + 1300)  # shown: nothing was held
        throttle.admit(state, [fired("backstop", 71)], CFG, T0 + 1310)  # held ...
        throttle.admit(state, [fired("backstop", 80)], CFG, T0 + 1900)  # ... superseded by one shown
        assert "held" not in state["notified"]
        throttle.admit(state, [fired("backstop", 85)], CFG, T0 + 1960)  # held ...
        state["alerts"].pop()  # ... and its call rewound away (the state started again without it)
        assert throttle.release(state, CFG, T0 + 2600) == []
        assert "held" not in state["notified"]

    def test_a_held_reminder_pushed_out_of_the_alerts_list_still_comes(self) -> None:
        """The state keeps its last ALERTS_MAX alerts. Cold returns after a reminder held back (each
        delivered, as they always are) push it out of that list: it is still the session's latest
        reminder, not a call a rewind discarded, and comes once the quiet is over (it was dropped)."""
        state = fresh()
        state["engine"].update({"calls": 40, "dwell": 3, "billsTotal": 7, "lamp": "amber"})

        def fired(kind: str, call: int, at: float) -> Alert:  # the fold's record of it, with its call's time
            state["alerts"].append({**alert(kind, call), "ts": at})
            del state["alerts"][: -engine.ALERTS_MAX]
            return {**alert(kind, call), "ts": at}

        throttle.admit(state, [fired("gate", 40, T0)], CFG, T0)
        assert throttle.admit(state, [fired("backstop", 45, T0 + 60)], CFG, T0 + 60) == []
        held = state["notified"]["held"]
        for n in range(engine.ALERTS_MAX):  # a cold return every 6 minutes: each comes
            at = T0 + 420 + 360 * n
            assert throttle.admit(state, [fired("guard", 46 + n, at)], CFG, at) != []
        assert held not in state["alerts"]
        assert state["notified"]["held"] == held
        assert throttle.release(state, CFG, at + 600) == [{**held, "shown": 1}]

    def test_nothing_to_deliver_changes_nothing(self) -> None:
        state = fresh()
        assert throttle.admit(state, [], CFG, T0) == []
        assert "notified" not in state


class TestConfig:
    @pytest.mark.parametrize("value", [0, 10, 2.5])
    def test_accepted(self, value: float) -> None:
        assert config.validate("f.toml", {"notify": {"remind_min": value}}) == {"notify": {"remind_min": value}}

    @pytest.mark.parametrize("value", [-1, "10", True, float("nan")])
    def test_rejected(self, value: object) -> None:
        with pytest.raises(ConfigError,
                           match=r"key 'notify.remind_min': expected a number of minutes from 0 to 10080"):
            config.validate("f.toml", {"notify": {"remind_min": value}})

    def test_a_bad_value_set_from_the_cli_is_the_command_lines(self, tmp_path: Path) -> None:
        """`config set notify.remind_min abc`: the value given is named as the command line's, not
        the file's (the error named the config file, which holds no such value); nothing written."""
        from session_watcher.core.usererrors import UsageError

        file = tmp_path / "config.toml"
        file.write_text("# mine\n[notify]\nremind_min = 5\n")
        with pytest.raises(UsageError) as got:
            config.set_value(str(file), "notify.remind_min", "abc")
        assert str(got.value) == ("config set: key 'notify.remind_min': expected a number of minutes from 0 to "
                                  "10080 (0: no limit), got 'abc'")
        assert file.read_text() == "# mine\n[notify]\nremind_min = 5\n"

    def test_set_from_the_cli(self, tmp_path: Path) -> None:
        file = tmp_path / "config.toml"
        assert config.set_value(str(file), "notify.remind_min", "0") == (0, None)
        assert config.validate(str(file), tomllib.loads(file.read_text())) == {"notify": {"remind_min": 0}}
        assert "notify.remind_min" in config.known_keys()


# --------------------------------------------------------------------------- through the hook

def _message_config(remind_min: float | None = None) -> None:
    cfg = Path(os.environ["SESSION_WATCHER_HOME"]) / "config" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    extra = f"remind_min = {remind_min}\n" if remind_min is not None else ""
    cfg.write_text('[notify]\nchannels = ["message"]\nfallback = "none"\n' + extra)


def _rewind(session: str, seconds: float) -> None:
    """The injected clock: the last notification happened `seconds` earlier than recorded."""
    path = state_file(session)
    doc = json.loads(path.read_bytes())
    doc["notified"]["at"] -= seconds
    path.write_text(json.dumps(doc))


def overstaying(tmp_path: Path, session: str, calls: int = 300, start: float | None = None) -> list[bytes]:
    """A session whose context grows 1,000 tokens a call: it overstays, and keeps overstaying. Its
    first call at `start` (epoch seconds), by default now: the calls after it lie ahead, so a prompt
    during the test finds the cache warm (an alert queued for the next prompt is shown then; past a
    break beyond the cache's edge it is dropped: hooks.outbox)."""
    t = Transcript(session_id=session, cwd=str(tmp_path))
    t.ts = time.time() if start is None else start
    t.call(20_000, 0)
    cr = 20_000
    for _ in range(1, calls):
        t.user()
        cr += 1000
        t.call(cr, 1000)
    return [line + b"\n" for line in t.lines()]


def _queued(session: str) -> int:
    """Messages the (async, silent) Stop hooks queued for the next synchronous hook to print."""
    return len(load_state(session).get("outbox") or []) if state_file(session).exists() else 0


def _steps(lines: list[bytes], transcript: Path, first: int = 20) -> Iterator[int]:
    """Append the transcript call by call (the first `first` calls at once); yields the calls written."""
    transcript.write_bytes(b"")
    written = 0
    for calls in range(first, (len(lines) + 1) // 2 + 1):
        upto = 1 + 2 * (calls - 1)
        with transcript.open("ab") as fh:
            fh.writelines(lines[written:upto])
        written = upto
        yield calls


def _statusline(session: str, transcript: Path, cwd: Path) -> str:
    proc = statusline({"session_id": session, "transcript_path": str(transcript), "cwd": str(cwd)},
                      env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode()


@pytest.mark.slow
def test_hook_holds_reminders_back_and_the_status_keeps_counting(tmp_path: Path) -> None:
    """Real hook and status-line processes on a session that overstays: the gate is shown; the
    reminders that follow within remind_min are recorded but not shown, and the status line's
    `bill n/N` keeps counting from the gate the user saw (N: the engine's interval to its next
    reminder, doubled by each reminder it gave); once the last notification is older than
    remind_min, the first hook run shows the reminder held back, though no new one fired: titled
    "Reminder 1", the first reminder the user saw, though the engine counts it as its second."""
    _message_config()
    transcript = tmp_path / "nag.jsonl"
    shown: list[tuple[int, list[str], str]] = []  # (calls folded, kinds fired by that hook run, title line)
    fired: list[tuple[int, list[str]]] = []
    held_lines: list[tuple[str, int, int]] = []  # (status line, bills since the gate was shown, interval)
    rewound_at = 0
    for calls in _steps(overstaying(tmp_path, "nag"), transcript, first=3):
        before = len(load_state("nag")["alerts"]) if state_file("nag").exists() else 0
        queued = _queued("nag")
        proc = hook("Stop", payload("nag", transcript))
        assert proc.returncode == 0
        assert proc.stdout == b""  # an async hook's output would go to the model
        state = load_state("nag")
        new = [a["kind"] for a in state["alerts"][before:]]
        if new:
            fired.append((calls, new))
        if _queued("nag") > queued:
            queued = state["outbox"][-1]  # the alert, worded when a prompt shows it (hooks.outbox)
            words = notifier.printed(queued["alert"], queued["channels"], env={})
            assert words is not None
            text = words["systemMessage"]
            assert text.startswith("session-watcher: ")
            shown.append((calls, new, text.splitlines()[0]))
        elif "backstop" in new:
            line = _statusline("nag", transcript, tmp_path)
            e = state["engine"]
            held_lines.append((line, e["billsTotal"] - state["notified"]["bills"],
                               state["alerts"][-1]["backstopN"] * 2 ** e["reminders"]))
        if rewound_at:
            break
        if len([f for f in fired if "backstop" in f[1]]) == 2:
            assert state["notified"]["held"]["kind"] == "backstop"
            _rewind("nag", 601)  # ten minutes between the last notification and the next hook run
            rewound_at = calls
    kinds = [k for _, ks in fired for k in ks]
    assert kinds == ["gate", "backstop", "backstop"], fired
    assert [ks for _, ks, _ in shown] == [["gate"], []], (shown, fired)  # the held one, with nothing new
    assert shown[1][0] == rewound_at + 1
    assert shown[0][2] == f"session-watcher: This session now costs more than a fresh start ({tmp_path.name})"
    assert shown[1][2].startswith("session-watcher: Reminder 1: this session still costs more")
    assert "held" not in load_state("nag")["notified"]
    assert load_state("nag")["engine"]["reminders"] == 2  # the engine kept counting
    assert len(held_lines) == 2
    for line, since_shown, interval in held_lines:
        assert f" bill {since_shown}/{interval} " in line + " ", line  # held back: the user's count did not restart


@pytest.mark.slow
def test_hook_with_no_limit_shows_every_reminder(tmp_path: Path) -> None:
    _message_config(remind_min=0)
    transcript = tmp_path / "free.jsonl"
    shown = fired = 0
    for _ in _steps(overstaying(tmp_path, "free"), transcript):
        before = len(load_state("free")["alerts"]) if state_file("free").exists() else 0
        queued = _queued("free")
        hook("Stop", payload("free", transcript))
        fired += len(load_state("free")["alerts"][before:]) > 0
        shown += _queued("free") > queued
        if fired == 3:
            break
    assert (fired, shown) == (3, 3)


@pytest.mark.slow
def test_a_first_fold_of_a_long_session_delivers_no_past_alerts(tmp_path: Path) -> None:
    """Installed late: the first hook run folds a session that overstayed (a gate and reminders),
    then compacted and went on. Its past alerts are recorded (status, the page), not delivered as
    news; an alert of the last few calls would be."""
    _message_config(remind_min=0)
    t = Transcript(session_id="late", cwd=str(tmp_path))
    t.call(20_000, 0)
    cr = 20_000
    for _ in range(1, 150):
        t.user()
        cr += 1000
        t.call(cr, 1000)
    t.compact()
    t.call(20_000, 0)
    for i in range(1, 10):
        t.user()
        t.call(20_000 + 500 * i, 500)
    transcript = t.save(tmp_path / "late.jsonl")
    hook("Stop", payload("late", transcript))
    state = load_state("late")
    assert state["cursor"]["offset"] == transcript.stat().st_size  # folded in one run
    kinds = [a["kind"] for a in state["alerts"]]
    assert kinds.count("backstop") >= 3
    assert max(a["call"] for a in state["alerts"]) <= 150  # all before the compaction
    assert _queued("late") == 0


def _held_then_away(tmp_path: Path, session: str) -> Path:
    """An overstaying session's transcript folded by Stop hooks up to its second reminder, held back
    by the quiet period, and the quiet over since; the transcript's calls are months old."""
    transcript = tmp_path / f"{session}.jsonl"
    backstops = 0
    for _ in _steps(overstaying(tmp_path, session, start=T0_SYNTH), transcript, first=3):
        before = len(load_state(session)["alerts"]) if state_file(session).exists() else 0
        assert hook("Stop", payload(session, transcript)).returncode == 0
        backstops += [a["kind"] for a in load_state(session)["alerts"][before:]].count("backstop")
        if backstops == 2:
            break
    assert load_state(session)["notified"]["held"]["kind"] == "backstop"
    _rewind(session, 601)  # the quiet is over
    return transcript


@pytest.mark.slow
@pytest.mark.parametrize("guard", ["ask", "off"])
def test_a_reminder_held_back_before_a_break_past_the_cache_is_not_sent_at_the_prompt(tmp_path: Path,
                                                                                         guard: str) -> None:
    """A reminder held back by the quiet period, and the user away since (the transcript's last call
    is months old: its cache has expired for sure): the quiet ends during the break, and the prompt
    after it does not send the reminder, priced on the warm cache of then, whatever `guard` says (the
    cold return's own alert comes with the prompt's call); it is dropped, not kept for a later hook.
    Without the break, the first hook after the quiet sends it (the test above)."""
    _message_config()
    if guard == "off":
        cfg = Path(os.environ["SESSION_WATCHER_HOME"]) / "config" / "config.toml"
        cfg.write_text('guard = "off"\n' + cfg.read_text())
    transcript = _held_then_away(tmp_path, "away")
    proc = hook("UserPromptSubmit", payload("away", transcript, "UserPromptSubmit", prompt="go on"))
    assert proc.returncode == 0
    assert b"Reminder" not in proc.stdout, proc.stdout
    assert "held" not in load_state("away")["notified"]
    assert b"cold cache" in proc.stdout if guard == "ask" else b"cold cache" not in proc.stdout
    assert hook("Stop", payload("away", transcript)).returncode == 0
    assert not any(q["alert"]["kind"] == "backstop" for q in load_state("away").get("outbox") or [])


@pytest.mark.slow
def test_a_prompt_past_a_break_with_alerts_and_a_held_reminder_asks_the_guard_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A prompt's run past a break beyond the cache with alerts to deliver (one a fold left pending)
    and a reminder held back: `_gone_cold` drops the alerts as news of then and the held reminder,
    and the run asks it once for both (hooks.run._asked_once); the same answer as the subprocess test
    above: no reminder, nothing held, nothing pending."""
    from session_watcher.hooks import run

    _message_config()
    transcript = _held_then_away(tmp_path, "twice")
    path = state_file("twice")
    doc = json.loads(path.read_bytes())
    doc["alerts"][-1]["pending"] = True  # fired by a fold that could not deliver it
    path.write_text(json.dumps(doc))
    asked: list[bool] = []

    def gone_cold(*args: object) -> bool:
        asked.append(real(*args))  # type: ignore[arg-type]
        return asked[-1]

    real = run._gone_cold
    monkeypatch.setattr(run, "_gone_cold", gone_cold)
    out = run.run("UserPromptSubmit", json.dumps(payload("twice", transcript, "UserPromptSubmit",
                                                         prompt="go on")).encode())
    assert asked == [True]
    assert "Reminder" not in json.dumps(out)
    state = load_state("twice")
    assert "held" not in state["notified"]
    assert not any(a.get("pending") for a in state["alerts"])
