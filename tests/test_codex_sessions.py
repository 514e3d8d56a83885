"""Codex threads as sessions: found under `$CODEX_HOME/sessions/YYYY/MM/DD/` and `archived_sessions/`
(agents.codex.discover), named by their thread id or a prefix of it like Claude Code's sessions, and
`status`, `replay` and `backtest` on a rollout path; a rollout a hook names before Codex wrote it is
not an error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

from session_watcher.agents.codex import discover
from session_watcher.sessions import naming as sessions
from session_watcher.state.shell import Session
from tests.codex_lines import FIXTURES, THREAD, Thread, meta, turn, write_rollout

if TYPE_CHECKING:
    from pathlib import Path

OTHER = "019fa0ff-0000-7000-8000-0000000000aa"
REAL = FIXTURES / "rollout-019f1f6f-311c-7543-b0f9-f126da3c5434.jsonl"


def _thread(model: str = "gpt-5.5") -> list[str]:
    t = Thread(records=False)
    t.call(1, 20_000, 0, 100)
    t.call(2, 21_000, 20_000, 100)
    return [meta(), turn(0, model), *t.lines]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "codex"
    monkeypatch.setenv("CODEX_HOME", str(home))
    write_rollout(home / "sessions" / "2026" / "11" / "20" / f"rollout-2026-11-20T10-00-00-{THREAD}.jsonl", _thread())
    write_rollout(home / "archived_sessions" / f"rollout-2026-10-01T09-00-00-{OTHER}.jsonl", _thread())
    (home / "sessions" / "2026" / "11" / "20" / "notes.jsonl").write_text("{}\n")
    return home


def test_rollouts_are_found_live_and_archived(home: Path) -> None:
    found = discover.rollouts()
    assert [sid for sid, _ in found] == [THREAD, OTHER]
    assert found[0][1].startswith(str(home / "sessions"))
    assert discover.rollouts(str(home / "nowhere")) == []


def test_a_thread_is_named_by_its_id_or_a_prefix(home: Path) -> None:
    got = sessions.find("019fa00")
    assert got.session_id == THREAD
    assert got.transcript is not None
    assert got.transcript.endswith(f"{THREAD}.jsonl")
    assert not got.recorded
    assert sessions.find(OTHER).transcript is not None
    with pytest.raises(Exception, match="start of 2 session ids"):
        sessions.find("019fa0")
    by_path = sessions.find(str(home / "archived_sessions" / f"rollout-2026-10-01T09-00-00-{OTHER}.jsonl"))
    assert by_path.session_id == OTHER


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "session_watcher", *args], capture_output=True, text=True,
                          timeout=120, check=False, env=env or dict(os.environ))


@pytest.mark.slow
def test_status_replay_and_backtest_take_a_rollout() -> None:
    status = json.loads(_cli("status", "--json", str(REAL)).stdout)
    assert status["sessionId"] == "019f1f6f-311c-7543-b0f9-f126da3c5434"
    replay = _cli("replay", "--json", str(REAL))
    assert replay.returncode == 0, replay.stderr
    back = _cli("backtest", "--json", str(REAL))
    assert back.returncode == 0, back.stderr
    doc = json.loads(back.stdout)
    [one] = doc["sessions"]
    assert one["calls"] == 101  # every call of the thread, the last line without a newline included
    assert one["priced"] is True  # gpt-5.5 is in the table
    assert one["segments"] == 2  # its compaction


def test_a_rollout_named_before_it_exists_is_not_an_error(tmp_path: Path) -> None:
    """Codex writes the rollout at the first turn; a hook may name its path before: nothing to fold
    yet, nothing said, and the next run folds it."""
    from session_watcher.base import config

    path = tmp_path / f"rollout-2026-11-20T10-00-00-{THREAD}.jsonl"
    said: list[str] = []
    cfg = config.merge()
    with Session(THREAD, 5.0, say=lambda key, msg: said.append(msg)) as s:
        assert s.sync(str(path), cfg, time.monotonic() + 30) == ([], True)
        s.save()
    write_rollout(path, _thread())
    with Session(THREAD, 5.0, say=lambda key, msg: said.append(msg)) as s:
        s.sync(str(path), cfg, time.monotonic() + 30)
        assert s.state["meter"]["main"]["calls"] == 2
    assert said == []


@pytest.mark.slow
def test_backtest_without_a_session_takes_the_codex_threads_too(home: Path) -> None:
    got = _cli("backtest", "--json")
    assert got.returncode == 0, got.stderr
    assert sorted(s["sessionId"] for s in json.loads(got.stdout)["sessions"]) == [THREAD, OTHER]


def test_a_rollouts_working_folder_is_its_session_meta_cwd(tmp_path: Path) -> None:
    """The project a thread ran in (its config, its handoff's folder): session_meta's `cwd`."""
    from session_watcher.sessions.replay import transcript_cwd

    path = write_rollout(tmp_path / f"rollout-{THREAD}.jsonl", _thread())
    assert transcript_cwd(str(path)) == "/proj"


@pytest.mark.slow
def test_handoff_run_by_codexs_bang_takes_the_thread_it_runs_in(home: Path) -> None:
    """`!session-watcher handoff` in Codex's TUI: Codex sets CODEX_THREAD_ID for the command, and the
    handoff is of that thread, not of the one taken by default (another thread of the project)."""
    env = {**os.environ, "CODEX_HOME": str(home)}
    default = _cli("handoff", "--json", env=env)
    assert default.returncode == 0, default.stderr
    other = THREAD if json.loads(default.stdout)["sessionId"] == OTHER else OTHER
    inside = _cli("handoff", "--json", env={**env, "CODEX_THREAD_ID": other})
    assert inside.returncode == 0, inside.stderr
    assert json.loads(inside.stdout)["sessionId"] == other
