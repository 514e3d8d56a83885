"""A `CLAUDE_CONFIG_DIR` the user set to a folder not made yet, on a machine where Codex's folder is
and no `claude` is on PATH (cli.agents_here): `./install.sh` writes Claude Code's settings there, and
the real client (2.1.332), run for the first time with that variable against the loopback mock,
reads them: its hooks fold the session. Such a machine read as Codex's alone: nothing was written,
and the user's first Claude Code session ran without session-watcher."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import TYPE_CHECKING

import pytest

from tests.statefile import load_state

from .harness import API_KEY, REPO, World, run_print
from .mock_api import MockAPI, Usage, say

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.e2e


def test_a_claude_config_dir_not_made_yet_gets_the_hooks_the_client_then_runs(claude_bin: Path,
                                                                              world: World) -> None:
    shutil.rmtree(world.config)  # the folder the user named, not made yet
    (world.home / ".codex").mkdir()  # Codex's folder: Codex is here too
    env = {**world.env("http://127.0.0.1:9"), "SESSION_WATCHER_CODEX": str(world.root / "no-codex"),
           "SESSION_WATCHER_CLAUDE": str(world.root / "no-claude"), "COLUMNS": "1000"}
    got = subprocess.run(["./install.sh", "--no-demo"], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=600, stdin=subprocess.DEVNULL, check=False)
    assert got.returncode == 0, got.stdout[-3000:] + got.stderr[-3000:]
    assert "not on this machine" not in got.stdout
    settings = json.loads((world.config / "settings.json").read_text())
    assert "session-watcher" in json.dumps(settings["hooks"]["Stop"])
    # the client's first run makes its own files beside the settings (here: the onboarding it would ask)
    (world.config / ".claude.json").write_text(json.dumps({
        "hasCompletedOnboarding": True, "bypassPermissionsModeAccepted": True,
        "projects": {str(world.project): {"hasTrustDialogAccepted": True}},
        "customApiKeyResponses": {"approved": [API_KEY]}}))
    with MockAPI([say("hello", Usage(input_tokens=4, cache_write_5m=18_000, output_tokens=9))]) as api:
        run = run_print(claude_bin, world, api.base_url, "say hello")
    assert run.returncode == 0, run.stderr[-2000:]
    state = load_state(run.session_id, world.sw_home)  # the hooks the install wrote there ran
    assert state["engine"]["calls"] == 1
