"""A fork made by the real client (2.1.332, `claude -p --resume ID --fork-session`, against the
loopback mock): its file copies the parent's calls, and `session-watcher report` counts each call
once, in the session that made it (tests/test_report_fork.py holds the same on the fixture it made)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from tests.test_report_fork import each_call_once, report_json

from .harness import World, run_print
from .mock_api import MockAPI, Usage, bash, say

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.e2e


def test_a_real_fork_is_counted_once(claude_bin: Path, world: World, tmp_path: Path) -> None:
    turns = [
        bash("echo one", Usage(input_tokens=3, cache_write_5m=20_000, output_tokens=40)),
        say("done one", Usage(input_tokens=3, cache_read=20_000, cache_write_5m=300, output_tokens=25)),
        say("done two", Usage(input_tokens=3, cache_read=20_300, cache_write_5m=400, output_tokens=30)),
        say("fork one", Usage(input_tokens=3, cache_read=20_700, cache_write_5m=500, output_tokens=22)),
    ]
    with MockAPI(turns) as mock:
        first = run_print(claude_bin, world, mock.base_url, "first task")
        parent = first.session_id
        run_print(claude_bin, world, mock.base_url, "second task", "--resume", parent)
        fork = run_print(claude_bin, world, mock.base_url, "forked task", "--resume", parent, "--fork-session")
    child = fork.session_id
    assert child != parent
    copied = [json.loads(line) for line in world.transcript(child).read_text().splitlines()]
    copies = [r for r in copied if r.get("type") == "assistant" and r.get("requestSessionId") == parent]
    assert len(copies) == 3  # the parent's three calls, as the client copies them
    projects = world.config / "projects"
    doc = report_json(tmp_path / "sw-home", projects)
    rows = {s["sessionId"]: s for s in doc["sessions"]}
    assert (rows[parent]["apiCalls"], rows[child]["apiCalls"], rows[child]["inheritedCalls"]) == (3, 1, 3)
    oracle = each_call_once(projects)
    assert sum(r["apiCalls"] for r in rows.values()) == oracle["calls"] == 4
    for k in ("input", "output", "cacheRead", "cacheWrite"):
        assert sum(r["tokens"][k] for r in rows.values()) == oracle[k], k
