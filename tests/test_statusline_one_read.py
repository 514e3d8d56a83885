"""The status line reads the saved state once. Its lock-free look (`_as_saved`) reads the state when
the transcript is no newer than it; where the state's save and an append to the transcript land in
one clock tick (equal mtimes), that look finds lines to fold and the locked open read the same file
again. The state read by the look is used under the lock while it is still the file there."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING

import pytest

from session_watcher.hooks import statusline
from tests.oracle import payload
from tests.statefile import load_state, state_file
from tests.test_notifier_throttle import overstaying

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.quick

SID = "0ce4ead0-0000-4000-8000-00000000000a"
_opens: list[str] = []
_watch: list[str] = []


def _audit(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and _watch and args and args[0] == _watch[0]:
        _opens.append(event)


sys.addaudithook(_audit)


def _line(transcript: Path) -> str:
    return statusline.run(json.dumps({"session_id": SID, "transcript_path": str(transcript),
                                      "cwd": str(transcript.parent)}).encode(), {"NO_COLOR": "1"})


def _same_tick(transcript: Path) -> None:
    """The transcript's mtime set to the state's: written in the tick the state was saved in."""
    saved = state_file(SID).stat().st_mtime_ns
    os.utime(transcript, ns=(saved, saved))


def test_a_save_and_an_append_in_one_tick_read_the_state_once(tmp_path: Path) -> None:
    from session_watcher.hooks.run import run

    lines = overstaying(tmp_path, SID, calls=12)
    transcript = tmp_path / f"{SID}.jsonl"
    transcript.write_bytes(b"".join(lines[:11]))
    run("Stop", json.dumps(payload(SID, transcript)).encode())
    assert load_state(SID)["engine"]["calls"] == 6
    _watch[:] = [str(state_file(SID))]
    try:
        with transcript.open("ab") as fh:
            fh.writelines(lines[11:])
        _same_tick(transcript)
        _opens.clear()
        _line(transcript)
        assert len(_opens) == 1  # before: 2, the look's read and the locked open's
        assert load_state(SID)["engine"]["calls"] == 12  # folded by the status line itself
        _same_tick(transcript)  # nothing new now: the look's read alone
        _opens.clear()
        _line(transcript)
        assert len(_opens) == 1
    finally:
        _watch.clear()


def test_a_state_saved_between_the_look_and_the_lock_is_read_again(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The state the look read is taken under the lock only while it is still the file there: one a
    hook saved in between (a new file, put in place by a rename as every save is) is read again, and
    the status line folds from it, not over it."""
    from session_watcher.hooks.run import run
    from session_watcher.state import store

    lines = overstaying(tmp_path, SID, calls=12)
    transcript = tmp_path / f"{SID}.jsonl"
    transcript.write_bytes(b"".join(lines[:11]))
    run("Stop", json.dumps(payload(SID, transcript)).encode())
    refresh = statusline._refresh

    def a_hook_saves_first(*args: object) -> object:
        doc = store.load(str(state_file(SID)), SID)
        assert doc is not None
        doc["context"]["project"] = "/saved/in/between"
        store.save(str(state_file(SID)), doc)
        return refresh(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(statusline, "_refresh", a_hook_saves_first)
    with transcript.open("ab") as fh:
        fh.writelines(lines[11:])
    _same_tick(transcript)
    _line(transcript)
    state = load_state(SID)
    assert state["engine"]["calls"] == 12
    assert state["context"]["project"] == "/saved/in/between"  # the status line's save kept it
