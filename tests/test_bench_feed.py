"""bench.feed's bulk step gives a Read the path-map entry the hooks' own fold gives it, the config's
include and exclude globs applied (a bench session built with globs measures the hooks' state)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from bench.feed import _apply_read
from bench.synth import Transcript
from session_watcher.base import config
from session_watcher.core.fresh import new_state
from session_watcher.state import session

if TYPE_CHECKING:
    from pathlib import Path

    from session_watcher.core.shapes import State


def _state(project: Path) -> State:
    state = new_state("feed")
    state["context"]["cwd"] = state["context"]["project"] = str(project)
    return state


def test_a_fed_read_takes_the_configs_globs_as_the_fold_does(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    outside = tmp_path / "elsewhere" / "x.py"  # outside the project: no glob, not carried; git is not asked
    outside.parent.mkdir()
    content = "x = 1\n"
    outside.write_text(content)
    cfg = config.merge({"include": [str(outside.parent) + "/*"]})
    fed = _state(project)
    _apply_read(fed, cfg, {"tool_name": "Read", "tool_use_id": "toolu_1", "tool_input": {"file_path": str(outside)},
                           "tool_response": {"file": {"filePath": str(outside), "content": content, "startLine": 1}}})
    t = Transcript(cwd=str(project))
    t.call(20_000)
    t.read(str(outside), content, cr=20_050, cw=50)
    folded = _state(project)
    session.fold_events(folded, t.events(), cfg)
    path = os.path.realpath(outside)
    assert fed["paths"][path]["reason"] == folded["paths"][path]["reason"] == "outside-project"
    assert fed["paths"][path]["include"] is folded["paths"][path]["include"] is True
