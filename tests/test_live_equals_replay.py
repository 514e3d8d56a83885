"""Live equals replay: a session folded hook by hook, in the client's order, reaches replay's state.

The real hook and status-line processes run over the transcript as it grows (tests/live_driver.py);
every trace row the live folds made (one per main-chain API call) must equal `replay`'s row for that
call, alerts included, and every Stop must have folded its turn's last call.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from session_watcher.sessions.replay import replay
from tests.live_driver import Live, recorded_schedule, synthetic_schedule
from tests.oracle import FIXTURES, TRANSCRIPTS
from tests.statefile import load_state

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

CLIENT_332 = FIXTURES / "real-client-2.1.332"
# what a live fold legitimately knows differently: subagent files are folded when a hook sees them
# (replay folds them after the main file), the path map is loaded in shards, the window comes from
# the status line's payload
NOT_COMPARED = ("subagentUsage", "buckets", "badLines", "contextPressure", "health")
# how an alert was delivered, marked on it after the fold: `pending` (fired in a status-line fold,
# for the next hook), `shownBy` (a cold return the prompt hook already told the user about)
DELIVERY_MARKS = ("pending", "shownBy")


def comparable(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if k not in NOT_COMPARED}
    out["alerts"] = [{k: v for k, v in a.items() if k not in DELIVERY_MARKS} for a in row.get("alerts", [])]
    out.pop("alertsAll", None)
    return out


def check(live: Live, source: Path, cwd: Path) -> None:
    doc, trace = replay(str(live.transcript), cwd=str(cwd))
    rows = live.rows()
    assert [r["call"] for r in rows] == [r["call"] for r in trace]
    assert len(rows) == doc["calls"] > 0
    for got, want in zip(rows, trace, strict=True):
        g, w = comparable(got), comparable(want)
        g.pop("alerts_state", None)
        assert {k: g[k] for k in g if k != "alerts"} == {k: w[k] for k in w if k != "alerts"}, got["call"]
        assert g["alerts"] == w["alerts"], got["call"]
    state = load_state(live.session_id)
    assert state["engine"]["calls"] == doc["calls"]
    for low, folded, high in live.stop_folded:
        assert low <= folded <= high


@pytest.mark.parametrize("name", ["short", "tool_heavy", "subagent"])
def test_small_sessions_in_the_2_1_197_order(name: str, tmp_path: Path) -> None:
    source = TRANSCRIPTS / f"{name}.jsonl"
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    live = Live(tmp_path, source, name, cwd)
    live.run(synthetic_schedule(live.data, name))
    check(live, source, cwd)


BIG = ["258c7280-ae70-4798-800f-63464d01a85d", "fa812bfe-b295-4cca-9c2f-fdf01028cb46",
       "ae4a77f8-aedd-4bc1-888f-c94edc91af04"]


@pytest.mark.parametrize("sid", BIG)
def test_real_sessions_with_compaction_and_subagents_in_the_2_1_197_order(sid: str, tmp_path: Path) -> None:
    source = TRANSCRIPTS / f"{sid}.jsonl"
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    live = Live(tmp_path, source, sid, cwd)
    live.run(synthetic_schedule(live.data, sid))
    check(live, source, cwd)
    assert any(r["alerts"] for r in live.rows()) or sid != BIG[0]


def _session_332(phase: str, sid: str) -> Path:
    return CLIENT_332 / phase / "projects" / "-home-dev-proj" / f"{sid}.jsonl"


@pytest.mark.parametrize(("phase", "sid"), [("tui", "dd9059ad-412c-4f8e-9b7c-1d2a928f30ed"),
                                            ("order", "a7aff29a-b944-42d8-aa2a-17fdb64df979"),
                                            ("order", "d174578f-d7e1-4812-ab36-a3460202a2fb")])
def test_2_1_332_sessions_in_the_clients_recorded_order(phase: str, sid: str, tmp_path: Path) -> None:
    source = _session_332(phase, sid)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    live = Live(tmp_path, source, sid, cwd)
    status = CLIENT_332 / phase / "statusline.jsonl"
    steps = recorded_schedule(CLIENT_332 / phase / "hooks.jsonl", status, sid, live.data)
    assert sum(1 for s in steps if s[2] == "Stop") >= 1
    live.run(steps)
    check(live, source, cwd)


def test_a_cold_return_and_its_gate_in_the_2_1_197_order(tmp_path: Path) -> None:
    """A real session (not from the repository's first sources) with a 2.6-hour pause: the cold
    return's guard alert and the later gate at replay's calls, live."""
    sid = "03a1382e-ecd5-42c4-b3d4-5c659e165904"
    source = FIXTURES / "cold-return" / f"{sid}.jsonl"
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    live = Live(tmp_path, source, sid, cwd)
    live.run(synthetic_schedule(live.data, sid))
    check(live, source, cwd)
    kinds = [(r["call"], a["kind"]) for r in live.rows() for a in r["alerts"]]
    assert (77, "guard") in kinds  # after the pause
    assert any(k == "gate" and c < 77 for c, k in kinds)  # the gate before it, at the sweet spot
    assert any(k in ("gate", "backstop") and c > 77 for c, k in kinds), kinds



def _folded_and_replayed(tmp_path: Path, source: Path, sid: str) -> tuple[Live, dict[str, Any]]:
    """`source` folded hook by hook (the 2.1.197 order), checked equal to its replay, and that replay."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    live = Live(tmp_path, source, sid, cwd)
    live.run(synthetic_schedule(live.data, sid))
    check(live, source, cwd)
    doc, _ = replay(str(live.transcript), cwd=str(cwd))
    return live, doc


@pytest.mark.parametrize(("name", "copied"), [("tool_heavy", 20), ("subagent", 60)])
def test_a_forks_copies_and_own_calls_hook_by_hook(name: str, copied: int, tmp_path: Path) -> None:
    """A fork (its file opens with copies of its parent's calls, each naming the parent in
    `requestSessionId`) folded hook by hook, the copies arriving turn by turn, runs ending
    mid-copies: the live rows are replay's, alerts included, and so is its tally (copies left out)."""
    import json

    lines = []
    for n, line in enumerate((TRANSCRIPTS / f"{name}.jsonl").read_text().splitlines()):
        rec = json.loads(line)
        if n < copied and rec.get("type") == "assistant":
            rec["requestSessionId"] = "the-parent"
        lines.append(json.dumps(rec, separators=(",", ":")))  # the client's own spacing
    source = tmp_path / f"{name}.jsonl"
    source.write_text("\n".join(lines) + "\n")
    _, doc = _folded_and_replayed(tmp_path, source, name)
    tally = load_state(name)["engine"]["tally"]
    assert 0 < doc["inheritedCalls"] == tally["inherited"] < doc["calls"]
    assert doc["warmthTokens"] == {"read": tally["warmRead"], "write": tally["warmWrite"]}
    assert doc["firstTs"] == tally["firstTs"]


def test_the_real_clients_fork_hook_by_hook(tmp_path: Path) -> None:
    """The real client's fork (2.1.332, `--resume ID --fork-session`; no hook log was recorded for
    it: the 2.1.197 order): its file opens with copies of its parent's first 4 calls, then its own.
    Folded hook by hook, the live rows are replay's, alerts included; the live state says what
    replay says of the copies (how many, to which call, made by whom, their tokens); `status` of the
    live state and `replay` show the fork's own 1 call and the same line saying what they left out."""
    from session_watcher.core.status import tally_document
    from tests.oracle import sw

    sid, parent = "703fbb53-83ed-4907-ae6b-d4c8f3285559", "59f3783b-fd38-4563-9820-250620846abd"
    source = _session_332("fork", sid)
    live, doc = _folded_and_replayed(tmp_path, source, sid)
    state: Any = load_state(sid)  # as the state's file holds it
    assert {k: v for k, v in tally_document(state).items() if k.startswith(("inherited", "forked"))} == {
        "inheritedCalls": 4, "inheritedTo": 4, "forkedFrom": parent, "inheritedUsage": doc["inheritedUsage"]}
    wide = {**os.environ, "COLUMNS": "200"}  # a line each, unwrapped
    shutil.copy(_session_332("fork", parent), live.transcript.parent)  # its parent beside it, as the client left it
    said = sw("status", "--session", sid, env=wide)
    assert said.returncode == 0, said.stderr
    replayed = sw("replay", str(live.transcript), "--cwd", str(tmp_path / "cwd"), env=wide)
    assert replayed.returncode == 0, replayed.stderr

    def fork_line(text: bytes) -> str:
        lines = text.decode().splitlines()
        assert " calls 1" in lines[0]
        return next(line for line in lines if line.startswith("fork "))

    assert fork_line(said.stdout) == fork_line(replayed.stdout) == f"fork     forked from {parent}: 4 copied calls " \
        "not counted here (calls 1-4: counted there, context here)"


def test_a_session_whose_folder_is_gone_replays_with_the_users_config(tmp_path: Path) -> None:
    """The hooks read the user's config; once the session's folder is deleted, its replay reads the
    same (the user's file alone: the project's went with the folder), not the built-in defaults."""
    from session_watcher.base import paths

    user = Path(paths.user_config_file())
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('bp_red = 0.05\ngate_min_calls = 3\n\n[prices."claude-"]\ninput = 7.0\n')
    sid = BIG[0]
    source = TRANSCRIPTS / f"{sid}.jsonl"
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    live = Live(tmp_path, source, sid, cwd)
    live.run(synthetic_schedule(live.data, sid))
    cwd.rmdir()
    check(live, source, cwd)
    user.unlink()  # the defaults: other figures (the user's config changes some)
    _doc, trace = replay(str(live.transcript), cwd=str(cwd))
    assert [comparable(r) for r in trace] != [comparable(r) for r in live.rows()]


def test_a_forks_state_an_older_version_saved_gets_its_copies_tokens_on_load(tmp_path: Path) -> None:
    """The real fork folded hook by hook, its state then as a version before the copies' tokens were
    kept saved it (no `inheritedUsage`, its own call folded): `status` fills them from a replay of its
    transcript and saves them, so its JSON carries replay's `inheritedUsage` and its usage line the
    fork's own 1 call, as a state saved now does (it showed the conversation's 5 calls, 4 of them copies)."""
    from tests.oracle import sw
    from tests.statefile import state_file

    sid = "703fbb53-83ed-4907-ae6b-d4c8f3285559"
    _live, doc = _folded_and_replayed(tmp_path, _session_332("fork", sid), sid)
    main = state_file(sid)
    older = json.loads(main.read_bytes())
    assert older["engine"]["tally"].pop("inheritedUsage") == doc["inheritedUsage"]
    main.write_text(json.dumps(older))
    wide = {**os.environ, "COLUMNS": "200"}
    said = sw("status", "--session", sid, env=wide)
    assert said.returncode == 0, said.stderr
    assert "(1 call;" in said.stdout.decode(), said.stdout
    assert "of them copies" not in said.stdout.decode()
    assert load_state(sid)["engine"]["tally"]["inheritedUsage"] == doc["inheritedUsage"]  # saved
    got = json.loads(sw("status", "--json", "--session", sid).stdout)
    assert got["inheritedUsage"] == doc["inheritedUsage"]


def test_a_hook_folds_while_status_replays_an_older_forks_transcript(tmp_path: Path) -> None:
    """Real lock, real processes: `status` of a fork's state an older version saved (no copies'
    tokens) replays its transcript for them; a hook of that session run meanwhile (new lines
    written) takes the lock and folds them (the replay held the lock: the hook gave up, its lines
    left for a next run that a session's end may not have), and `status` then saves the copies' tokens
    onto the state as the hook left it, its fold kept."""
    import subprocess
    import sys
    import time

    from tests.oracle import hook, payload
    from tests.statefile import state_file

    name, copied = "tool_heavy", 20
    lines = []
    for n, line in enumerate((TRANSCRIPTS / f"{name}.jsonl").read_text().splitlines()):
        rec = json.loads(line)
        if n < copied and rec.get("type") == "assistant":
            rec["requestSessionId"] = "the-parent"
        lines.append(json.dumps(rec, separators=(",", ":")))
    held = len(lines) * 3 // 4  # the rest written while `status` replays
    source = tmp_path / f"{name}.jsonl"
    source.write_text("\n".join(lines[:held]) + "\n")
    live, _doc = _folded_and_replayed(tmp_path, source, name)
    main = state_file(name)
    older = json.loads(main.read_bytes())
    older["engine"]["tally"].pop("inheritedUsage")
    assert older["engine"]["calls"] > older["engine"]["tally"]["inheritedTo"]
    main.write_text(json.dumps(older))
    ready, go = tmp_path / "replaying", tmp_path / "go"
    code = f"""
import os, sys, time
from session_watcher.sessions import replay
real = replay.fold
def fold(*args, **kw):
    open({str(ready)!r}, "w").close()
    while not os.path.exists({str(go)!r}):
        time.sleep(0.01)
    return real(*args, **kw)
replay.fold = fold
sys.argv = ["session-watcher", "status", "--json", "--session", {name!r}]
from session_watcher.cli import run
run()
"""
    status = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert status.poll() is None, status.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.01)
        with live.transcript.open("a") as fh:
            fh.write("\n".join(lines[held:]) + "\n")
        before = load_state(name)["engine"]["calls"]
        ran = hook("PostToolUse", payload(name, live.transcript, "PostToolUse", cwd=str(tmp_path / "cwd")))
        assert ran.returncode == 0, ran.stderr
        folded = load_state(name)["engine"]["calls"]
        assert folded > before  # the hook took the lock while the replay ran
    finally:
        go.touch()
        out, err = status.communicate(timeout=120)
    assert status.returncode == 0, err
    doc, _ = replay(str(live.transcript), cwd=str(tmp_path / "cwd"))
    state = load_state(name)
    assert state["engine"]["calls"] >= folded  # the hook's fold kept
    assert state["engine"]["tally"]["inheritedUsage"] == doc["inheritedUsage"]  # saved
    assert json.loads(out)["inheritedUsage"] == doc["inheritedUsage"]


def test_a_session_whose_payloads_and_transcript_name_no_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                ) -> None:
    """Hook and status-line payloads without `cwd`, a transcript naming no folder and its files by
    relative paths, the hooks run in one folder and `replay` in another (each holding files of
    those names, one of them a link): relative paths are resolved from nowhere, live and in the
    replay, so every live row is replay's (each had joined them to the folder its process ran in)."""
    text = (TRANSCRIPTS / "subagent.jsonl").read_bytes().replace(b'"cwd":"/home/marco/projects/spotter",', b"")
    text = text.replace(b"/home/marco/projects/spotter/", b"")
    assert b'"cwd"' not in text
    assert b'"file_path":"mix.exs"' in text
    source = tmp_path / "nocwd.jsonl"
    source.write_bytes(text)
    cwd = tmp_path / "cwd"  # CLAUDE_PROJECT_DIR, where the hooks run
    there = tmp_path / "there"  # where the replay runs
    for d in (cwd, there):
        d.mkdir()
        (d / "mix.exs").write_text("x\n")
    (there / "plan.md").symlink_to(there / "mix.exs")
    live = Live(tmp_path, source, "nocwd", cwd)
    live.payload_cwd, live.run_in = False, cwd
    live.run(synthetic_schedule(live.data, "nocwd"))
    monkeypatch.chdir(there)
    doc, trace = replay(str(live.transcript))
    rows = live.rows()
    assert len(rows) == doc["calls"] > 0
    assert [comparable(r) for r in rows] == [comparable(r) for r in trace]
    assert load_state("nocwd")["engine"]["calls"] == doc["calls"]


def test_a_session_whose_payloads_name_no_folder_its_transcript_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     ) -> None:
    """Hook and status-line payloads without `cwd`, the transcript naming the folder the session ran
    in (the hooks run there, as the client starts them) and its files by relative paths: the hooks
    resolve them from the transcript's folder as `replay` does (run from elsewhere), so every live
    row is replay's (the hooks left them as named: outside the project, where replay has them in it)."""
    cwd = tmp_path / "cwd"
    there = tmp_path / "there"
    text = (TRANSCRIPTS / "subagent.jsonl").read_bytes().replace(b"/home/marco/projects/spotter/", b"")
    text = text.replace(b'"cwd":"/home/marco/projects/spotter"', b'"cwd":' + json.dumps(str(cwd)).encode())
    assert b'"file_path":"mix.exs"' in text
    source = tmp_path / "named.jsonl"
    source.write_bytes(text)
    for d in (cwd, there):
        d.mkdir()
        (d / "mix.exs").write_text("x\n")
    live = Live(tmp_path, source, "named", cwd)
    live.payload_cwd, live.run_in = False, cwd
    live.run(synthetic_schedule(live.data, "named"))
    monkeypatch.chdir(there)
    doc, trace = replay(str(live.transcript))
    rows = live.rows()
    assert len(rows) == doc["calls"] > 0
    assert [comparable(r) for r in rows] == [comparable(r) for r in trace]
    state = load_state("named")
    assert state["context"]["cwd"] == str(cwd)
    assert state["reasons"].get(str(cwd / "mix.exs"), "none") is None  # in the project, not ignored
