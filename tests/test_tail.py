"""The Stop hook's wait for the turn's last API call (state/tail.py), on 2.1.332's real transcript."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from session_watcher.state.tail import turn_ended, wait_turn_end
from tests.oracle import FIXTURES

if TYPE_CHECKING:
    from pathlib import Path

TUI = FIXTURES / "real-client-2.1.332" / "tui" / "projects" / "-home-dev-proj" / \
    "dd9059ad-412c-4f8e-9b7c-1d2a928f30ed.jsonl"


def _cuts(data: bytes) -> list[int]:
    return [i + 1 for i, b in enumerate(data) if b == 10]


def test_every_prefix_of_a_real_transcript(tmp_path: Path) -> None:
    """After a prompt or a tool result the turn is open; after an end_turn reply it has ended; a text
    line of a reply that asks for a tool (stop_reason tool_use) does not end it."""
    data = TUI.read_bytes()
    t = tmp_path / "t.jsonl"
    verdicts = []
    for cut in _cuts(data):
        t.write_bytes(data[:cut] + b'{"type":"assistant","message":{"stop_reason":"end_turn"')  # a half line
        verdicts.append(turn_ended(str(t)))
    lines = data.split(b"\n")
    kinds = [(b'"type":"user"' in ln, b'"stop_reason":"end_turn"' in ln, b'"stop_reason":"tool_use"' in ln)
             for ln in lines[:-1]]
    last = None
    for (user, end, tool), got in zip(kinds, verdicts, strict=True):
        if user:
            last = False
        elif end:
            last = True
        elif tool:
            last = False
        assert got == last
    assert verdicts.count(True) > 5
    assert verdicts.count(False) > 10


def test_wait_returns_once_the_last_line_is_written(tmp_path: Path) -> None:
    data = TUI.read_bytes()
    end = data.index(b'"stop_reason":"end_turn"')
    before = data.rfind(b"\n", 0, end) + 1
    after = data.index(b"\n", end) + 1
    t = tmp_path / "t.jsonl"
    t.write_bytes(data[:before])
    assert turn_ended(str(t)) is False

    def write_later() -> None:
        time.sleep(0.2)
        with t.open("ab") as fh:
            fh.write(data[before:after])

    th = threading.Thread(target=write_later)
    th.start()
    assert wait_turn_end(str(t), time.monotonic() + 60) is True
    th.join()
    assert turn_ended(str(t)) is True


def test_no_answer_means_no_wait(tmp_path: Path) -> None:
    assert turn_ended(str(tmp_path / "absent.jsonl")) is None
    assert turn_ended(str(tmp_path)) is None  # a folder in the transcript's place
    (tmp_path / "x.jsonl").write_bytes(b'{"type":"summary"}\n')
    assert wait_turn_end(str(tmp_path / "x.jsonl"), time.monotonic() + 60) is True
