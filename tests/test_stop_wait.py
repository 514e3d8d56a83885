"""How long the Stop hook waits for the turn's last line: 1.2 s, or SESSION_WATCHER_STOP_WAIT (what
the suite's synthetic sessions set to 0: they end mid-turn, so the wait could only reach its bound)."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace
from typing import TYPE_CHECKING

import pytest

import session_watcher.state.tail
from session_watcher.hooks import run

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(("raw", "wait"), [
    (None, run.STOP_WAIT), ("", run.STOP_WAIT), ("0", 0.0), ("2.5", 2.5), ("5", 5.0),
    ("5.01", run.STOP_WAIT), ("-1", run.STOP_WAIT), ("nan", run.STOP_WAIT), ("inf", run.STOP_WAIT),
    ("1e400", run.STOP_WAIT), ("soon", run.STOP_WAIT),
])
def test_the_wait_is_read_within_its_bounds(raw: str | None, wait: float) -> None:
    assert run.stop_wait(raw) == wait


@pytest.mark.parametrize(("env", "bound"), [(None, 1.2), ("0", 0.0), ("3", 3.0)])
def test_the_stop_hook_waits_as_long_as_the_environment_says(
        env: str | None, bound: float, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SESSION_WATCHER_HOME", str(tmp_path / "home"))
    if env is None:
        monkeypatch.delenv("SESSION_WATCHER_STOP_WAIT", raising=False)
    else:
        monkeypatch.setenv("SESSION_WATCHER_STOP_WAIT", env)
    asked: list[float] = []

    def wait_turn_end(path: str, deadline: float) -> bool:
        asked.append(deadline - 100.0)
        return True

    monkeypatch.setattr(session_watcher.state.tail, "wait_turn_end", wait_turn_end)
    # the hook's clock stands still, so the deadline it asks for is exactly its start plus the wait
    monkeypatch.setattr(run, "time", SimpleNamespace(monotonic=lambda: 100.0, time=time.time, sleep=time.sleep))
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("")
    payload = {"session_id": "s", "transcript_path": str(transcript), "cwd": str(tmp_path),
               "hook_event_name": "Stop"}
    run.run("Stop", json.dumps(payload).encode())
    assert asked == [pytest.approx(bound)]
