"""A transcript that changes under the hooks' cursor (rewritten in place, shrunk, replaced) starts the
session's state again from it (`state.session.rebuild`). What the user already saw stays seen: an
alert delivered before is not delivered again when the fold from the start fires it again, the
cold-cache guard's marks (the cold return the prompt hook told of, the prompt held, the handoff it
prepared) stay, and an alert fired after the rewrite is still delivered. Real hook processes on real
files; the fold's figures are those of a fold of the rewritten file from scratch."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from bench.synth import Transcript
from session_watcher.base import config
from session_watcher.core import engine
from session_watcher.state import session, store
from tests.oracle import hook, payload
from tests.statefile import load_state, state_file
from tests.test_guard_hook import FIVE_MIN, append_cold_call, pending_handoffs, prompt, said
from tests.test_guard_hook import session as folded_session
from tests.test_notifier_throttle import overstaying

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Iterator

CFG = config.merge()


def _config(text: str) -> None:
    cfg = Path(os.environ["SESSION_WATCHER_HOME"]) / "config" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(text)


def _calls(lines: list[bytes], transcript: Path, first: int = 3) -> Iterator[int]:
    """Append the transcript call by call from its length now (its first `first` calls at once);
    yields the calls written."""
    written = len(transcript.read_bytes().splitlines()) if transcript.exists() else 0
    for calls in range(first, (len(lines) + 1) // 2 + 1):
        upto = 1 + 2 * (calls - 1)
        if upto <= written:
            continue
        with transcript.open("ab") as fh:
            fh.writelines(lines[written:upto])
        written = upto
        yield calls


def _fold(sid: str, transcript: Path) -> None:
    """Folding hooks until the state has read the whole transcript (a run folds for a bounded time)."""
    for _ in range(50):
        assert hook("PostToolUse", payload(sid, transcript, "PostToolUse")).returncode == 0
        if (load_state(sid).get("cursor") or {}).get("offset") == transcript.stat().st_size:
            return
    raise AssertionError(f"{sid}: not folded to its end after 50 runs")


def _rewrite_in_place(transcript: Path) -> None:
    """The same file (same inode), its last line written again with one more key: the cursor's hash
    of the bytes before its offset no longer fits, so the next hook folds the file from the start."""
    ino = transcript.stat().st_ino
    lines = transcript.read_bytes().splitlines(keepends=True)
    lines[-1] = lines[-1].rstrip(b"\n")[:-1] + b',"rewritten":true}\n'
    with transcript.open("r+b") as fh:
        fh.write(b"".join(lines))
        fh.truncate()
    assert transcript.stat().st_ino == ino


def _mark_unrebuilt(sid: str) -> None:
    """A mark a rebuild drops (the count of skipped lines, which the fold counts again): that the
    next hook started the state again, and did not only read on."""
    path = state_file(sid)
    doc = json.loads(path.read_bytes())
    doc["bad"] = 99
    path.write_text(json.dumps(doc))


def _shown(proc: subprocess.CompletedProcess[bytes]) -> list[str]:
    """What a prompt's hook showed the user: the `systemMessage`'s lines that start an alert."""
    assert (proc.returncode, proc.stderr) == (0, b"")
    if not proc.stdout:
        return []
    text = json.loads(proc.stdout).get("systemMessage") or ""
    return [line for line in text.splitlines() if line.startswith("session-watcher: ")]


def _user_prompt(sid: str, transcript: Path) -> subprocess.CompletedProcess[bytes]:
    return hook("UserPromptSubmit", payload(sid, transcript, "UserPromptSubmit", prompt="go on", prompt_id="p"))


def _fold_alone(tmp_path: Path, transcript: Path) -> dict[str, Any]:
    """The state a fold of `transcript` from scratch leaves, for a session id of its own."""
    alone = tmp_path / "alone.jsonl"
    alone.write_bytes(transcript.read_bytes())
    _fold("alone", alone)
    return load_state("alone")


def _figures(state: dict[str, Any]) -> dict[str, Any]:
    """The fold's figures: the meter, the engine and the alerts it recorded (but who they were for and
    whether a shell left them pending)."""
    alerts = [{k: v for k, v in a.items() if k not in ("sessionId", "pending", "shownBy")} for a in state["alerts"]]
    return {"meter": state["meter"], "engine": state["engine"], "alerts": alerts, "health": state["health"]}


@pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)
def test_an_alert_delivered_before_a_rewrite_is_not_delivered_again(tmp_path: Path) -> None:
    """The gate is shown; the transcript is rewritten in place; the fold from the start fires the gate
    again, and it is not shown again (before the fix: it was, the gate being among the last five
    calls'); the reminder that fires after the rewrite is shown."""
    _config('guard = "off"\n[notify]\nchannels = ["message"]\nfallback = "none"\nremind_min = 0\n')
    t = tmp_path / "seen.jsonl"
    lines = overstaying(tmp_path, "seen")
    for _ in _calls(lines, t):
        _fold("seen", t)
        if load_state("seen")["alerts"]:
            break
    [gate] = load_state("seen")["alerts"]
    assert gate["kind"] == "gate"
    told = f"session-watcher: This session now costs more than a fresh start ({tmp_path.name})"
    assert _shown(_user_prompt("seen", t)) == [told]
    assert _shown(_user_prompt("seen", t)) == []  # shown once

    _mark_unrebuilt("seen")
    _rewrite_in_place(t)
    _fold("seen", t)
    state = load_state("seen")
    assert state["bad"] == 0  # started again from the transcript
    assert [(a["kind"], a["call"]) for a in state["alerts"]] == [("gate", gate["call"])]  # fired again ...
    assert "outbox" not in state
    assert _shown(_user_prompt("seen", t)) == []  # ... and not shown again
    assert _figures(state) == _figures(_fold_alone(tmp_path, t))  # the fold's figures: as from scratch

    for _ in _calls(lines, t, first=gate["call"] + 1):
        _fold("seen", t)
        if len(load_state("seen")["alerts"]) > 1:
            break
    fired = load_state("seen")["alerts"][1]
    assert fired["kind"] == "backstop"
    shown = _shown(_user_prompt("seen", t))
    assert len(shown) == 1
    assert shown[0].startswith("session-watcher: Reminder 1: this session still costs more")


def _held_reminder(tmp_path: Path, sid: str) -> tuple[Path, list[bytes], dict[str, Any], dict[str, Any]]:
    """A session folded by hooks past its gate (shown) and its first reminder, which came within
    notify.remind_min (a day) and is held back: (transcript, its lines, the gate, the reminder)."""
    _config('guard = "off"\n[notify]\nchannels = ["message"]\nfallback = "none"\nremind_min = 1440\n')  # a day
    t = tmp_path / f"{sid}.jsonl"
    lines = overstaying(tmp_path, sid)
    for _ in _calls(lines, t):
        _fold(sid, t)
        if load_state(sid)["alerts"]:
            break
    told = f"session-watcher: This session now costs more than a fresh start ({tmp_path.name})"
    assert _shown(_user_prompt(sid, t)) == [told]
    for _ in _calls(lines, t):
        _fold(sid, t)
        if len(load_state(sid)["alerts"]) > 1:
            break
    gate, reminder = load_state(sid)["alerts"]
    assert reminder["kind"] == "backstop"
    assert load_state(sid)["notified"]["held"]["call"] == reminder["call"]
    assert _shown(_user_prompt(sid, t)) == []  # held back
    return t, lines, gate, reminder


@pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)
def test_a_reminder_held_back_by_the_quiet_period_comes_once_after_a_rewrite(tmp_path: Path) -> None:
    """The gate is shown; the reminder after it comes within notify.remind_min and is held back
    (`notified.held`); the transcript is rewritten in place and folded from the start: the reminder
    fired again is not shown, nor held again, and once the quiet period is over the next fold
    delivers the held one, once, titled as the first reminder the user sees."""
    t, _, gate, reminder = _held_reminder(tmp_path, "held")

    _mark_unrebuilt("held")
    _rewrite_in_place(t)
    _fold("held", t)
    state = load_state("held")
    assert state["bad"] == 0  # started again from the transcript
    assert [(a["kind"], a["call"]) for a in state["alerts"]] == [("gate", gate["call"]), ("backstop", reminder["call"])]
    assert state["notified"]["held"]["call"] == reminder["call"]
    assert "outbox" not in state
    assert _shown(_user_prompt("held", t)) == []

    doc = json.loads(state_file("held").read_bytes())
    doc["notified"]["at"] -= 2 * 86400  # the quiet period is over
    state_file("held").write_text(json.dumps(doc))
    _fold("held", t)  # a folding hook delivers what was held back (queued: it is async)
    shown = _shown(_user_prompt("held", t))
    assert len(shown) == 1
    assert shown[0].startswith("session-watcher: Reminder 1: this session still costs more")
    assert _shown(_user_prompt("held", t)) == []


@pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)
def test_a_reminder_held_back_is_not_released_once_a_rewind_discarded_its_call(tmp_path: Path) -> None:
    """As above, but the transcript shrinks to before the held reminder's call (a rewind: its lines
    are gone), the session still in deep water: the fold from the start no longer fires it, and once
    the quiet period is over it is not delivered (before the fix: it was, as "Reminder 1", quoting a
    call the transcript no longer has). The gate's mark and the rest of `notified` stay."""
    t, lines, gate, reminder = _held_reminder(tmp_path, "rew")
    assert gate["call"] < reminder["call"] - 1

    _mark_unrebuilt("rew")
    _write(t, lines, reminder["call"] - 1)  # shrunk under the cursor: the reminder's call is gone
    _fold("rew", t)
    state = load_state("rew")
    assert state["bad"] == 0  # started again from the transcript
    assert [(a["kind"], a["call"]) for a in state["alerts"]] == [("gate", gate["call"])]
    assert state["engine"]["dwell"] > 0  # still in deep water: only the lost call keeps it back
    assert state["engine"]["lamp"] in ("amber", "red")
    assert _shown(_user_prompt("rew", t)) == []

    doc = json.loads(state_file("rew").read_bytes())
    doc["notified"]["at"] -= 2 * 86400  # the quiet period is over
    state_file("rew").write_text(json.dumps(doc))
    _fold("rew", t)
    assert _shown(_user_prompt("rew", t)) == []
    assert "held" not in load_state("rew")["notified"]


@pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)
@pytest.mark.parametrize("rebuilt_by", ["hook", "status line"])
def test_a_gate_a_status_line_left_pending_comes_once_after_a_rewrite(tmp_path: Path, rebuilt_by: str) -> None:
    """The status line folds the gate and leaves it pending for the next hook; the transcript is
    rewritten in place before any hook ran, and the state is started again (by that hook, or by the
    status line again): the gate was never delivered, so the fold from the start hands it on, and the
    next prompt shows it, once."""
    from tests.oracle import statusline

    _config('guard = "off"\n[notify]\nchannels = ["message"]\nfallback = "none"\nremind_min = 0\n')
    lines = overstaying(tmp_path, "sl")
    gate_call = _gate_call(tmp_path, lines)
    t = tmp_path / "sl.jsonl"
    _write(t, lines, gate_call - 1)
    _fold("sl", t)
    _write(t, lines, gate_call)
    line = {"session_id": "sl", "transcript_path": str(t), "cwd": str(tmp_path)}
    assert statusline(line).returncode == 0
    state = load_state("sl")
    assert state["cursor"]["offset"] == t.stat().st_size
    assert [(a["kind"], a.get("pending")) for a in state["alerts"]] == [("gate", True)]

    _mark_unrebuilt("sl")
    _rewrite_in_place(t)
    if rebuilt_by == "status line":
        assert statusline(line).returncode == 0
        state = load_state("sl")
        assert state["bad"] == 0  # started again from the transcript
        assert [(a["kind"], a.get("pending")) for a in state["alerts"]] == [("gate", True)]
    _fold("sl", t)
    state = load_state("sl")
    assert state["bad"] == 0
    assert [(a["kind"], a.get("pending")) for a in state["alerts"]] == [("gate", None)]
    told = f"session-watcher: This session now costs more than a fresh start ({tmp_path.name})"
    assert _shown(_user_prompt("sl", t)) == [told]
    assert _shown(_user_prompt("sl", t)) == []


@pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)
def test_the_guards_marks_and_its_handoff_stay_across_a_rewrite(tmp_path: Path) -> None:
    """A prompt held for a cold cache (the gap marked shown, the prompt blocked, the handoff prepared
    and recorded); the transcript is rewritten in place and folded from the start: the marks stay, so
    the prompt sent again within the minute goes ahead (before the fix: held a second time), and the
    cold return the prompt hook told of is not notified again when its call is folded."""
    _config('[notify]\nchannels = ["message"]\n')
    t = folded_session(tmp_path, FIVE_MIN, 20)
    held = said(prompt("g1", t))
    assert held is not None
    assert held["decision"] == "block"
    marks = load_state("g1")["guard"]
    assert set(marks) == {"shown", "blocked", "carry"}
    assert len(pending_handoffs()) == 1

    _mark_unrebuilt("g1")
    _rewrite_in_place(t)
    assert hook("Stop", payload("g1", t)).returncode == 0
    state = load_state("g1")
    assert state["bad"] == 0  # started again from the transcript
    assert state["cursor"]["offset"] == t.stat().st_size
    assert state["guard"] == marks  # the gap told of, the prompt held, the handoff's record
    assert said(prompt("g1", t)) is None  # the user chose: it goes ahead, once held
    assert pending_handoffs() == []  # going on drops the handoff
    assert "carry" not in load_state("g1")["guard"]

    append_cold_call(t)  # the prompt's call, on the cold cache
    assert said(hook("Stop", payload("g1", t))) is None
    state = load_state("g1")
    guards = [a for a in state["alerts"] if a["kind"] == "guard"]
    assert [a["call"] for a in guards] == [state["engine"]["calls"]]
    assert guards[0].get("shownBy") == "prompt"  # told at the prompt: not queued again
    assert "outbox" not in state


@pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)
def test_codex_a_rewritten_rollout_does_not_bring_its_alert_back(tmp_path: Path) -> None:
    """Codex alike: the alert a folding hook fired reaches the next prompt; the rollout is rewritten
    in place and folded from the start (the decoder's state in the cursor starts again too); the
    alert is not shown again."""
    from tests.test_codex_hooks import THREAD, folded, shifted
    from tests.test_codex_hooks import prompt as codex_prompt

    _config("[notify]\nremind_min = 0\n")
    project = tmp_path / "proj"
    project.mkdir()
    rollout = folded(shifted(tmp_path, THREAD, 1), project)
    got = codex_prompt(rollout, project)
    assert got is not None
    assert "costs more than a fresh start" in got["systemMessage"]
    assert codex_prompt(rollout, project) is None  # shown once
    before = load_state(THREAD)

    _mark_unrebuilt(THREAD)
    _rewrite_in_place(rollout)
    folded(rollout, project)
    state = load_state(THREAD)
    assert state["bad"] == 0  # started again from the rollout
    assert [(a["kind"], a["call"]) for a in state["alerts"]] == [(a["kind"], a["call"]) for a in before["alerts"]]
    assert codex_prompt(rollout, project) is None  # not shown again


@pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)
def test_a_damaged_path_map_does_not_bring_an_alert_back(tmp_path: Path) -> None:
    """The other way a state starts again from its transcript: a path-map shard that cannot be read
    (state.shell). The gate shown before is not shown again; the fold reads on past it."""
    _config('guard = "off"\n[notify]\nchannels = ["message"]\nfallback = "none"\nremind_min = 0\n')
    t = Transcript(session_id="map", cwd=str(tmp_path))
    t.ts = time.time()  # its calls lie ahead: warm at the prompt (a queue is dropped past the cache's edge)
    tr = tmp_path / "map.jsonl"
    files = [str(tmp_path / f"m{i}.py") for i in range(6)]
    cr = 20_000
    for n in range(300):
        t.read(files[n % 6], "x = 1\n", cr=cr, cw=1000 if n else 0)
        cr += 1000
        t.save(tr)
        _fold("map", tr)
        if load_state("map")["alerts"]:
            break
    [gate] = load_state("map")["alerts"]
    told = f"session-watcher: This session now costs more than a fresh start ({tmp_path.name})"
    assert _shown(_user_prompt("map", tr)) == [told]

    shards = sorted(state_file("map").with_suffix(".paths").glob("*.json"))
    assert shards
    for f in shards:
        f.write_bytes(b"{garbage")
    t.read(files[0], "x = 1\n", cr=cr, cw=1000)  # a file read before: its shard is loaded
    t.save(tr)
    _fold("map", tr)
    state = load_state("map")
    assert (state["alerts"][0]["kind"], state["alerts"][0]["call"]) == ("gate", gate["call"])  # fired again ...
    assert [a["kind"] for a in state["alerts"]] == ["gate"]  # nothing new fired
    assert "outbox" not in state
    assert _shown(_user_prompt("map", tr)) == []  # ... and not shown again (as a reminder, either)
    log = "".join(p.read_text() for p in (Path(os.environ["SESSION_WATCHER_HOME"]) / "log").glob("*.log*"))
    assert "rebuilding the session from the transcript" in log


def _shard_files(sid: str) -> tuple[set[str], set[str]]:
    """(the files in the session's path-map folder, those its state names)."""
    state = json.loads(state_file(sid).read_bytes())
    named = {f"{int(n):02d}-{rev}.json" for n, rev in state["shards"].items()}
    return set(os.listdir(state_file(sid).with_suffix(".paths"))), named


@pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)
def test_a_state_started_again_sweeps_the_path_map_files_of_the_one_before(tmp_path: Path) -> None:
    """The transcript rewritten under the cursor: the hook starts the state again from it, and its save
    deletes the path-map shard files the state before named, as a fresh state's does (before: they
    stayed until the revision reached a multiple of 64)."""
    t = Transcript(session_id="sweep", cwd=str(tmp_path))
    tr = tmp_path / "sweep.jsonl"
    for n in range(8):
        t.read(str(tmp_path / f"m{n}.py"), "x = 1\n", cr=20_000 + 1000 * n, cw=1000)
    t.save(tr)
    _fold("sweep", tr)
    old, named = _shard_files("sweep")
    assert old == named
    assert old

    _mark_unrebuilt("sweep")
    _rewrite_in_place(tr)
    _fold("sweep", tr)
    assert load_state("sweep")["bad"] == 0  # started again from the transcript
    files, named = _shard_files("sweep")
    assert named
    assert files == named
    assert not files & old


# ----------------------------------------------------------------------------- the fold, in process

def _write(path: Path, lines: list[bytes], calls: int) -> None:
    """The transcript's first `calls` calls (`overstaying`'s lines: a call, then a user line)."""
    path.write_bytes(b"".join(lines[: 1 + 2 * (calls - 1)]))


def _gate_call(tmp_path: Path, lines: list[bytes]) -> int:
    """The call the overstaying session's gate fires on, and the one its first reminder fires on."""
    probe = tmp_path / "probe.jsonl"
    _write(probe, lines, len(lines) // 2)
    _, alerts, _ = session.sync(engine.new_state("probe"), str(probe), CFG, float("inf"))
    assert [a["kind"] for a in alerts[:2]] == ["gate", "backstop"]
    return int(alerts[0]["call"])


def test_a_fold_started_again_returns_only_what_was_not_dealt_with(tmp_path: Path) -> None:
    """Rewritten in place with new calls after it: the fold from the start returns the reminder the
    new calls fire, not the gate the state had dealt with, and records both, as a fold from scratch
    does; the mark of the gate stays with the state (`seen`). A gate a status line left pending was
    not delivered: it is returned again."""
    lines = overstaying(tmp_path, "s")
    gate_call = _gate_call(tmp_path, lines)
    t = tmp_path / "s.jsonl"
    for pending in (False, True):
        _write(t, lines, gate_call)
        state, alerts, done = session.sync(engine.new_state("s"), str(t), CFG, float("inf"))
        assert ([a["kind"] for a in alerts], done) == (["gate"], True)
        if pending:
            alerts[0]["pending"] = True
        _rewrite_in_place(t)
        with t.open("ab") as fh:
            fh.writelines(lines[1 + 2 * (gate_call - 1):])
        state, alerts, done = session.sync(state, str(t), CFG, float("inf"))
        assert (state["cursor"] or {})["offset"] == t.stat().st_size
        alone, fresh_alerts, _ = session.sync(engine.new_state("s"), str(t), CFG, float("inf"))
        assert state["alerts"] == alone["alerts"]
        assert (state["meter"], state["engine"]) == (alone["meter"], alone["engine"])
        assert fresh_alerts[0]["kind"] == "gate"
        assert alerts == (fresh_alerts if pending else fresh_alerts[1:])
        assert state.get("seen", []) == ([] if pending else [["gate", gate_call, fresh_alerts[0]["ts"]]])


def test_an_alert_fired_in_the_run_that_found_the_change_is_still_returned(tmp_path: Path) -> None:
    """The run folds the main transcript's new lines (the gate fires), then finds a subagent's file
    shrunk: the state starts again, and the gate, fired but not yet delivered, is returned."""
    lines = overstaying(tmp_path, "r")
    gate_call = _gate_call(tmp_path, lines)
    t, sub = tmp_path / "r.jsonl", tmp_path / "agent-x.jsonl"
    side = Transcript(session_id="r", cwd=str(tmp_path))
    for i in range(4):
        side.call(5_000 + 100 * i, 100, sidechain=True)
    sub.write_bytes(b"".join(line + b"\n" for line in side.lines()))
    _write(t, lines, gate_call - 1)
    state, alerts, _ = session.sync(engine.new_state("r"), str(t), CFG, float("inf"), [str(sub)])
    assert alerts == []
    _write(t, lines, gate_call)
    sub.write_bytes(sub.read_bytes()[: len(sub.read_bytes()) // 2])  # shrunk under its cursor
    state, alerts, _ = session.sync(state, str(t), CFG, float("inf"), [str(sub)])
    assert [(a["kind"], a["call"]) for a in alerts] == [("gate", gate_call)]
    assert "seen" not in state


def test_what_a_rebuild_keeps(tmp_path: Path) -> None:
    """The guard's marks and its handoff's record, what the user was last notified and the queued
    output; the marks of the alerts dealt with (before this run, not pending), the newest SEEN_MAX,
    with those of an earlier rebuild; a mark of another time is another alert."""
    state: Any = engine.new_state("k")
    state["guard"] = {"shown": [1.0, 7], "blocked": [1.0, 7, 2.0], "carry": {"K": 1}}
    state["notified"] = {"at": 3.0, "segment": 0}
    state["outbox"] = [{"systemMessage": "x"}]
    old = [{"kind": "backstop", "call": n, "ts": float(n)} for n in range(60)]
    state["alerts"] = [*old[-20:], {"kind": "gate", "call": 99, "ts": 9.0, "pending": True}]
    state["seen"] = [["gate", 1, 1.0]]
    fresh = session.rebuild(state)
    assert (fresh["guard"], fresh["notified"], fresh["outbox"]) == (state["guard"], state["notified"], state["outbox"])
    assert fresh["seen"] == [["gate", 1, 1.0], *(["backstop", n, float(n)] for n in range(40, 60))]
    assert fresh["alerts"] == []
    assert fresh["cursor"] is None
    fresh = session.rebuild(state, before=[])  # all of them this run's
    assert fresh["seen"] == [["gate", 1, 1.0]]
    state["seen"] = [["x", n, None] for n in range(100)]
    assert len(session.rebuild(state)["seen"]) == session.SEEN_MAX
    again: Any = {"kind": "gate", "call": 1, "ts": 1.0}
    other: Any = {"kind": "gate", "call": 1, "ts": 5.0}  # the same call number, made again after a rewind
    fresh["seen"] = [["gate", 1, 1.0]]
    assert session.unseen(fresh, [again, other]) == [other]
    damaged: Any = {**fresh, "seen": "damaged"}  # a state file's key of the wrong type: nothing kept back
    assert session.unseen(damaged, [again]) == [again]


def test_an_upgrade_that_starts_again_keeps_the_alerts_dealt_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  ) -> None:
    """A schema-3 state starts again from its transcript (state.migrate), as a rebuild does: its
    guard's marks and the marks of its alerts dealt with are kept, so the fold from the start does
    not return its gate again."""
    monkeypatch.setenv("SESSION_WATCHER_HOME", str(tmp_path / "home"))
    lines = overstaying(tmp_path, "up")
    gate_call = _gate_call(tmp_path, lines)
    t = tmp_path / "up.jsonl"
    _write(t, lines, gate_call)
    state, alerts, _ = session.sync(engine.new_state("up"), str(t), CFG, float("inf"))
    assert [a["kind"] for a in alerts] == ["gate"]
    old = json.loads(json.dumps(state))
    old["schema"] = 3
    del old["engine"]["tally"]
    old["guard"] = {"shown": [1.0, 3]}
    path = store.session_file("up")
    Path(path).parent.mkdir(parents=True)
    Path(path).write_text(json.dumps(old))
    migrated = store.load(path, "up")
    assert migrated is not None
    assert migrated["cursor"] is None
    assert migrated["guard"] == {"shown": [1.0, 3]}
    assert migrated["seen"] == [session.alert_mark(alerts[0])]
    migrated, again, _ = session.sync(migrated, str(t), CFG, float("inf"))
    assert [a["kind"] for a in migrated["alerts"]] == ["gate"]
    assert again == []


def test_an_upgraded_state_sweeps_the_path_map_files_of_the_one_before(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A schema-3 state starts again from its transcript (state.migrate) naming no shard: its first
    save deletes the shard files the schema-3 state named (before: left until the revision reached a
    multiple of 64)."""
    from session_watcher.state import shell

    monkeypatch.setenv("SESSION_WATCHER_HOME", str(tmp_path / "home"))
    t = Transcript(session_id="upmap", cwd=str(tmp_path))
    for n in range(8):
        t.read(str(tmp_path / f"m{n}.py"), "x = 1\n", cr=20_000 + 1000 * n, cw=1000)
    tr = t.save(tmp_path / "upmap.jsonl")

    def fold() -> None:
        with shell.open_session("upmap", 1.0) as opened:
            opened.sync(str(tr), CFG, float("inf"))
            opened.save()

    fold()
    old, named = _shard_files("upmap")
    assert old == named
    assert old
    doc = json.loads(state_file("upmap").read_bytes())  # as an older version saved it
    doc["schema"] = 3
    del doc["engine"]["tally"]
    state_file("upmap").write_text(json.dumps(doc))
    fold()
    files, named = _shard_files("upmap")
    assert load_state("upmap")["cursor"]["offset"] == tr.stat().st_size
    assert named
    assert files == named
    assert not files & old


def test_an_alert_fired_before_a_damaged_shard_is_found_in_the_same_run_is_still_returned(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shell's rebuild (state.shell: a path-map shard that cannot be read) in a run that fired the
    gate before it came to the shard (a later chunk of the transcript reads the file again): the gate
    was not dealt with, and the fold from the start returns it."""
    from session_watcher.state import reader, shell

    monkeypatch.setenv("SESSION_WATCHER_HOME", str(tmp_path / "home"))
    t = Transcript(session_id="late", cwd=str(tmp_path))
    read = str(tmp_path / "a.py")
    t.read(read, "x = 1\n", cr=20_000, cw=1000)
    cr = 20_000
    for _ in range(1, 300):
        t.user()
        cr += 1000
        t.call(cr, 1000)
    lines = [line + b"\n" for line in t.lines()]
    probe = tmp_path / "probe.jsonl"
    probe.write_bytes(b"".join(lines))
    _, alerts, _ = session.sync(engine.new_state("probe"), str(probe), CFG, float("inf"))
    gate = alerts[0]
    assert gate["kind"] == "gate"
    tr = tmp_path / "late.jsonl"
    upto = 2 + 2 * (gate["call"] - 2)  # the read's call and result, then a user line and a call each
    tr.write_bytes(b"".join(lines[:upto]))

    def fold() -> list[Any]:
        with shell.open_session("late", 1.0) as opened:
            got, done = opened.sync(str(tr), CFG, float("inf"))
            assert done
            opened.save()
            return got

    assert fold() == []
    shards = sorted(state_file("late").with_suffix(".paths").glob("*.json"))
    assert shards
    for f in shards:
        f.write_bytes(b"{garbage")
    more = Transcript(session_id="late", cwd=str(tmp_path))
    for _ in range(reader.CHUNK // 1_000_000 + 1):  # past the chunk a read hands on
        more.user("x" * 1_000_000)
    more.read(read, "x = 1\n", cr=cr, cw=1000)
    with tr.open("ab") as fh:
        fh.writelines(lines[upto:upto + 2])  # the gate's call
        fh.writelines(line + b"\n" for line in more.lines())
    got = fold()
    assert [(a["kind"], a["call"]) for a in got] == [("gate", gate["call"])]
    log = "".join(p.read_text() for p in (tmp_path / "home" / "log").glob("*.log*"))
    assert "rebuilding the session from the transcript" in log


@pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)
def test_status_and_the_status_line_count_the_same_bill_cycles_since_the_alert_shown(tmp_path: Path) -> None:
    """A reminder held back by notify.remind_min: the status line's `bill n/N` goes on counting from
    the gate the user saw; `status` said "(n so far)" from the held reminder the user never saw, a
    count of its own (a new user's terminal showed "bill 9/10" beside "(4 so far)")."""
    import re

    from tests.oracle import statusline, sw

    t, lines, _, _ = _held_reminder(tmp_path, "count")
    for calls in _calls(lines, t):
        _fold("count", t)
        if calls % 3 == 0:
            break
    proc = statusline({"session_id": "count", "transcript_path": str(t), "cwd": str(tmp_path)},
                      env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"})
    line = re.search(r"\bbill (\d+)/(\d+)\b", proc.stdout.decode())
    assert line is not None, proc.stdout
    text = " ".join(sw("status", "count", env={**os.environ, "COLUMNS": "1000"}).stdout.decode().split())
    assert (f"the next reminder once staying has cost {line[2]} restarts' worth since the last alert "
            f"({line[1]} so far)") in text, (line[0], text)
    state = load_state("count")
    assert int(line[1]) == state["engine"]["billsTotal"] - state["notified"]["bills"] > 0
