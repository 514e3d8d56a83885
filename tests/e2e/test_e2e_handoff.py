"""The handoff inside the real client (the plugin route, terminal UI): /session-watcher:handoff,
/clear, the child's first request carrying the note, its parentSession, and backtest pricing the
restart on both sessions."""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.core.handoff import MARKER, parent_of

from . import plugin
from .conftest import FIGURES
from .harness import PLUGIN, Tmux, make_world, run_print
from .mock_api import MockAPI, Usage, read, say

if TYPE_CHECKING:
    from pathlib import Path

    from .harness import World
    from .mock_api import LoggedRequest

pytestmark = pytest.mark.e2e


def _sid(q: LoggedRequest) -> str | None:
    return q.headers.get("X-Claude-Code-Session-Id") or q.headers.get("x-claude-code-session-id")


def _run(binary: Path, world: World, *args: str) -> dict[str, Any]:
    proc = subprocess.run([str(binary), *args, "--json"], env=world.env("http://127.0.0.1:9"),
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def test_handoff_then_clear_starts_the_child_with_the_note(claude_bin: Path, tmp_path: Path) -> None:
    world = make_world(tmp_path)
    plugin.write_config(world)
    with MockAPI([say("Hello.", Usage(input_tokens=4, cache_read=15_000, cache_write_5m=200))]) as api:
        first = run_print(claude_bin, world, api.base_url, "hello", "--plugin-dir", str(PLUGIN))
    assert first.returncode == 0, first.stderr[-2000:]
    binary = plugin.wait_for_plugin_venv(world)  # the first hook run bootstraps the plugin's venv

    turns = [
        read(str(world.tracked), Usage(input_tokens=4, cache_read=15_000, cache_write_5m=20_000, output_tokens=30)),
        say("Read it.", Usage(input_tokens=5, cache_read=35_000, cache_write_5m=1_400, output_tokens=9)),
        say("Handoff saved.", Usage(input_tokens=5, cache_read=36_400, cache_write_5m=3_000, output_tokens=12)),
        # the child's first call: the system prompt found cached, the note and the new prompt written
        say("Carrying on.", Usage(input_tokens=5, cache_read=15_000, cache_write_5m=21_500, output_tokens=8)),
    ]
    tmux = Tmux(world.root)
    with MockAPI(turns) as api:
        env = world.env(api.base_url, TERM="xterm-256color", COLUMNS="200")
        try:
            tmux.start([str(claude_bin), "--plugin-dir", str(PLUGIN), "--dangerously-skip-permissions"], env,
                       world.project)
            tmux.wait_for(lambda s: "❯" in s, 60, "the prompt")
            tmux.type("read the engine file")
            tmux.wait_for(lambda s: "Read it." in s, 90, "the first turn's reply")
            tmux.type("/session-watcher:handoff")
            tmux.wait_for(lambda s: "Handoff saved." in s, 90, "the reply after the handoff command")
            command_body = json.dumps(api.requests[-1].body)
            tmux.type("/clear")
            tmux.wait_for(lambda s: "Handoff saved." not in s, 30, "the cleared screen")
            # the user is told the fresh session took the note (the hook's systemMessage)
            tmux.wait_for(lambda s: "this session starts with the handoff of session" in s, 30, "the word it came")
            tmux.type("carry on")
            tmux.wait_for(lambda s: "Carrying on." in s, 90, "the child's first reply")
        finally:
            tmux.kill()
        mains = [q for q in api.requests if q.kind == "main"]
    sessions = list(dict.fromkeys(_sid(q) for q in mains))
    assert len(sessions) == 2, sessions
    parent, child = sessions
    assert parent is not None
    assert child is not None
    # the command ran the CLI for this session: its output (the note and how to use it) is in the prompt
    assert f"{MARKER}{parent}" in command_body
    assert ("handoff saved. /clear (or a new Claude Code session in this project within 3 h) starts with it"
            in command_body)
    # the child's first request carries the note, as the SessionStart hook's additional context
    child_first = json.dumps(next(q.body for q in mains if _sid(q) == child))
    assert f"SessionStart hook additional context: {MARKER}{parent}" in child_first
    assert "engine.py" in child_first  # the file the work had in context, with its lines
    assert "starts with the handoff of session" not in child_first  # the user's word, never the model's
    assert f"{MARKER}{parent}" not in json.dumps(next(q.body for q in mains if _sid(q) == parent))

    child_status = _run(binary, world, "status", "--session", child)
    assert child_status["parentSession"] == parent
    assert _run(binary, world, "status", "--session", parent)["parentSession"] is None

    doc = _run(binary, world, "backtest", str(world.transcript(parent)), str(world.transcript(child)))
    [taken] = doc["restartsTaken"]
    assert (taken["kind"], taken["parent"], taken["child"]) == ("handoff", parent, child)
    note_tokens = taken["pricedCarryTokens"]
    assert note_tokens is not None
    assert note_tokens > 15_000
    assert taken["carryTokens"] == 5 + 15_000 + 21_500  # written in fact: the child's first call
    assert taken["savingUsd"] is not None
    assert parent_of(child_first[child_first.index(MARKER):]) == parent
    FIGURES["handoff restart"] = (f"priced {note_tokens:,} tokens (${taken['pricedCarryUsd']}), written "
                                  f"{taken['carryTokens']:,} (${taken['carryUsd']}), saved ${taken['savingUsd']} "
                                  f"against continuing over {taken['calls']} call(s)")
