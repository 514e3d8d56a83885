"""The handoff of the install.sh route inside the real client (terminal UI). A new user who installed
with `./install.sh` follows the restart every alert of that route names (`base/route.py`):
`session-watcher handoff` in another terminal, then `/clear`, or in Claude Code's bash mode
`! session-watcher handoff`, said to send one request. The command runs (no "Unknown command"), and
the fresh session's first request carries the note as the SessionStart hook's additional context.
What reaches the model in between is counted against what the words say: bash mode hands the
command's output to the model as a turn of the old session (one request, the whole conversation);
from a terminal nothing is sent. (The plugin route's
`/session-watcher:handoff` is test_e2e_handoff.py.)"""

from __future__ import annotations

import json
import os
import re
import subprocess
from typing import TYPE_CHECKING

import pytest

from session_watcher.base import route
from session_watcher.core.handoff import MARKER

from . import plugin
from .conftest import FIGURES
from .harness import Tmux, make_world
from .mock_api import MockAPI, Usage, read, say

if TYPE_CHECKING:
    from pathlib import Path

    from .harness import World
    from .mock_api import LoggedRequest

pytestmark = pytest.mark.e2e


def _sid(q: LoggedRequest) -> str | None:
    return q.headers.get("X-Claude-Code-Session-Id") or q.headers.get("x-claude-code-session-id")


def _joined(screen: str) -> str:
    """The screen's text with the client's line wrapping undone."""
    return re.sub(r"\s*\n\s*", " ", screen)


@pytest.fixture(scope="module")
def install_sh(tmp_path_factory: pytest.TempPathFactory) -> World:
    """A new user's world, installed with ./install.sh (not the plugin route)."""
    world = make_world(tmp_path_factory.mktemp("install-sh"))
    plugin.write_config(world)
    proc = plugin.install(world)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (_bin_dir(world) / "session-watcher").exists()
    assert route.handoff_command("install") == "! session-watcher handoff"  # what the alerts name
    return world


def _bin_dir(world: World) -> Path:
    return world.home / ".local" / "bin"  # where install.sh links the command (a new user's PATH has it)


def _env(world: World, base_url: str) -> dict[str, str]:
    path = f"{_bin_dir(world)}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
    return world.env(base_url, TERM="xterm-256color", COLUMNS="200", PATH=path)


def _pending(world: World) -> list[Path]:
    return sorted((world.sw_home / "state" / "handoffs" / "pending").glob("*.json"))


def _restart(world: World, tmp_path: Path, claude_bin: Path, in_terminal: bool) -> tuple[list[LoggedRequest], str]:
    """One turn in the terminal UI, the handoff written the way named (bash mode, or the user's other
    terminal), then /clear and a prompt. (The requests after the first turn; the old session's id.)"""
    turns = [
        read(str(world.tracked), Usage(input_tokens=4, cache_read=15_000, cache_write_5m=20_000, output_tokens=30)),
        say("Read it.", Usage(input_tokens=5, cache_read=35_000, cache_write_5m=1_400, output_tokens=9)),
    ]
    fresh = say("Carrying on.", Usage(input_tokens=5, cache_read=15_000, cache_write_5m=21_500, output_tokens=8))
    tmux = Tmux(tmp_path)
    noted = say("Noted.", Usage(input_tokens=5, cache_read=36_400, cache_write_5m=1_500, output_tokens=4))
    with MockAPI(turns, fallback=lambda body: fresh if '"carry on' in json.dumps(body) else noted) as api:
        env = _env(world, api.base_url)
        try:
            tmux.start([str(claude_bin), "--dangerously-skip-permissions"], env, world.project)
            tmux.wait_for(lambda s: "❯" in s, 60, "the prompt")
            tmux.type("read the engine file")
            tmux.wait_for(lambda s: "Read it." in s, 120, "the first turn's reply")
            before = len(api.requests)
            old = _sid(api.requests[-1])
            if in_terminal:  # the user's other terminal: the same PATH, no Claude Code around it
                proc = subprocess.run(["session-watcher", "handoff"], cwd=world.project, env=env, capture_output=True,
                                      text=True, timeout=120, check=False)
                assert proc.returncode == 0, proc.stderr
                assert "handoff saved." in proc.stdout
            else:
                tmux.type(route.handoff_command("install"))
                screen = tmux.wait_for(lambda s: "handoff saved." in _joined(s), 120, "the handoff's output")
                assert "Unknown command" not in screen
                assert "command not found" not in screen
                # bash mode's output goes to the model as a turn: wait for its answer before /clear
                tmux.wait_for(lambda s: "Noted." in s, 120, "the answer to the bash-mode turn")
            assert len(_pending(world)) == 1
            tmux.type("/clear")
            tmux.wait_for(lambda s: "Read it." not in s, 60, "the cleared screen")
            tmux.type("carry on")
            tmux.wait_for(lambda s: "Carrying on." in s, 120, "the fresh session's first reply")
        finally:
            tmux.kill()
        assert old is not None
        return api.requests[before:], old


def _fresh_start(world: World, after: list[LoggedRequest], parent: str) -> list[LoggedRequest]:
    """The fresh session's first request carries the note of `parent`; the requests before it."""
    messages = [q for q in after if q.path.startswith("/v1/messages") and q.kind == "main"]
    k = next(i for i, q in enumerate(messages) if _sid(q) != parent)
    first = json.dumps(messages[k].body)
    assert f"SessionStart hook additional context: {MARKER}{parent}" in first
    assert "engine.py" in first  # the file the work had in context
    assert _pending(world) == []  # taken by the fresh session
    return messages[:k]


def test_install_sh_route_from_a_terminal_then_clear_sends_nothing(claude_bin: Path, install_sh: World,
                                                                   tmp_path: Path) -> None:
    """`session-watcher handoff` in a terminal, then /clear: the fresh session starts with the note,
    and no request reached the model between the first turn and the fresh session's prompt."""
    words = route.restart_path("install")
    assert words.startswith(f"`{route.TERMINAL_COMMAND}` in another terminal, then /clear")  # the form led with
    after, parent = _restart(install_sh, tmp_path, claude_bin, in_terminal=True)
    between = _fresh_start(install_sh, after, parent)
    assert between == []
    FIGURES["install.sh handoff, terminal"] = "0 requests between the handoff and the fresh session's first"


def test_install_sh_route_bash_mode_then_clear(claude_bin: Path, install_sh: World, tmp_path: Path) -> None:
    """`! session-watcher handoff` then /clear: the command runs in bash mode (no unknown command) and
    the fresh session starts with the note. Claude Code 2.1.332 sends bash mode's output to the model
    as a turn of the old session: exactly one request between, the old session's, its whole
    conversation with the note as <bash-stdout>."""
    words = route.restart_path("install")
    assert f"`{route.BASH_COMMAND}` also works but sends one request" in words  # the cost the alerts state
    after, parent = _restart(install_sh, tmp_path, claude_bin, in_terminal=False)
    between = _fresh_start(install_sh, after, parent)
    assert [_sid(q) for q in between] == [parent]  # one request, as said
    sent = json.dumps(between[0].body)
    assert "<bash-input> session-watcher handoff</bash-input>" in sent
    assert f"<bash-stdout>{MARKER}{parent}" in sent
    FIGURES["install.sh handoff, bash mode"] = (
        f"1 request between (the old session's, {len(sent) // 4:,} tokens of body: bash mode sends the note "
        "to the model as a turn)")
