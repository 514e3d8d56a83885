"""The status line's lock-free look (`_as_saved`) reads the state without the lock; when it finds
something to fold or record, the locked open takes the state as it is then. One a hook saved in
between (a new file put in place by a rename, as every save is) is the one the status line folds
from and saves over, never the one the look read."""

from __future__ import annotations

import json
import os
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


def test_a_state_saved_between_the_look_and_the_lock_is_read_again(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
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
    saved = state_file(SID).stat().st_mtime_ns  # the append in the save's clock tick: the look reads the state
    os.utime(transcript, ns=(saved, saved))
    statusline.run(json.dumps({"session_id": SID, "transcript_path": str(transcript),
                               "cwd": str(transcript.parent)}).encode(), {"NO_COLOR": "1"})
    state = load_state(SID)
    assert state["engine"]["calls"] == 12
    assert state["context"]["project"] == "/saved/in/between"  # the status line's save kept it
